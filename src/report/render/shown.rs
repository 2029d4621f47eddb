//! How the terminal table and the Markdown summary show trace ids and cut texts: 0.4.1's 12
//! characters, or as wide as tells named traces apart; reasons cut on a word.

use std::borrow::Cow;

/// The first `n` characters of `text`.
fn head(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// The last `n` characters of `text`.
fn tail(text: &str, n: usize) -> &str {
    let count = text.chars().count();
    match text.char_indices().nth(count.saturating_sub(n)) {
        Some((start, _)) if count > n => &text[start..],
        _ => text,
    }
}

/// The widest a trace id is shown in a run of named ids ([`IdColumn::Wide`]).
pub(crate) const WIDE_ID_CHARS: usize = 48;

/// How trace ids are shown in the terminal table and the Markdown summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum IdColumn {
    /// Cut to 12 characters, as 0.4.1 shows them: random trace ids and UUIDs are told apart by
    /// them, and a run over 0.4.1's formats keeps its bytes.
    #[default]
    Cut,
    /// Whole up to [`WIDE_ID_CHARS`] characters; a longer id is its head and its end around `…`. For
    /// a run that reads a format whose ids are names (`crate::ingest::Format::named_ids`): benchmark
    /// ids (SWE-bench instances, τ² task names with their trial and file) share far more than their
    /// first 12 characters, and their ends tell trials and files apart.
    Wide,
}

impl IdColumn {
    /// The column of a run, which read some file of a format whose ids are names when `named_ids`.
    pub(crate) fn of_run(named_ids: bool) -> IdColumn {
        if named_ids {
            IdColumn::Wide
        } else {
            IdColumn::Cut
        }
    }

    /// The most characters an id is shown with.
    fn limit(self) -> usize {
        match self {
            IdColumn::Cut => 12,
            IdColumn::Wide => WIDE_ID_CHARS,
        }
    }

    /// `id` as shown.
    pub(crate) fn shown(self, id: &str) -> Cow<'_, str> {
        match self {
            IdColumn::Cut => Cow::Borrowed(head(id, 12)),
            IdColumn::Wide if id.chars().count() <= WIDE_ID_CHARS => Cow::Borrowed(id),
            IdColumn::Wide => {
                let end = WIDE_ID_CHARS / 2;
                let start = WIDE_ID_CHARS - end - 1;
                Cow::Owned(format!("{}…{}", head(id, start), tail(id, end)))
            }
        }
    }

    /// Width of the column for ids of at most `longest` characters (at least `trace`'s).
    pub(crate) fn width(self, longest: usize) -> usize {
        longest.min(self.limit()).max(5)
    }
}

/// `text` on one line (control characters as spaces), cut to `max` characters with `…`: at the last
/// space that fits, so that no word is cut in two, unless that would keep less than half (a long
/// path or id is cut where it must be).
pub(crate) fn cut_on_word(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let room = max.saturating_sub(1);
    let end = flat.char_indices().nth(room).map_or(flat.len(), |(i, _)| i);
    let kept = &flat[..end];
    let kept = if flat[end..].starts_with(' ') {
        kept
    } else {
        match kept.rfind(' ') {
            Some(space) if kept[..space].chars().count() >= room / 2 => &kept[..space],
            _ => kept,
        }
    };
    format!("{}…", kept.trim_end())
}

/// `text` as a code span outside a table, whole: a fence longer than any run of backticks in it, and
/// no escapes (a code span shows them as written).
pub(crate) fn code_span(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let (mut longest, mut run) = (0, 0);
    for c in flat.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A space inside each fence keeps a backtick at either end from joining the fence.
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_ids_are_whole_up_to_the_limit_and_longer_ones_keep_their_head_and_end() {
        let swe = "marshmallow-code__marshmallow-1359";
        assert_eq!(IdColumn::Cut.shown(swe), "marshmallow-");
        assert_eq!(IdColumn::Wide.shown(swe), swe);
        let tau2 = "task-[mms_issue]airplane_mode_on|bad_network_preference|break_app_sms_permission[PERSONA:None]#0@gpt41-telecom";
        let shown = IdColumn::Wide.shown(tau2);
        assert_eq!(shown, "task-[mms_issue]airplan…NA:None]#0@gpt41-telecom");
        assert_eq!(shown.chars().count(), WIDE_ID_CHARS);
        assert_eq!(IdColumn::Cut.width(30), 12);
        assert_eq!(IdColumn::Wide.width(30), 30);
        assert_eq!(IdColumn::Wide.width(300), WIDE_ID_CHARS);
        assert_eq!(IdColumn::Wide.width(2), 5);
    }

    #[test]
    fn reasons_are_cut_on_a_word_with_an_ellipsis() {
        let reason = "tool 'search' called 4 times in a row with the same arguments";
        assert_eq!(cut_on_word(reason, 80), reason);
        assert_eq!(cut_on_word(reason, 30), "tool 'search' called 4 times…");
        assert!(cut_on_word(reason, 30).chars().count() <= 30);
        // A cut that would keep less than half falls inside the word instead.
        assert_eq!(
            cut_on_word("see /a/very/long/path/to/a/file/that/never/ends", 20),
            "see /a/very/long/pa…"
        );
        assert_eq!(cut_on_word("two\nlines", 80), "two lines");
    }
}
