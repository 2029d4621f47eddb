//! How a run's warnings reach stderr and the Markdown summary: one line per kind of warning, with its
//! count and its first example, unless `--verbose` asks stderr for every one. A run over many files can raise the same warning
//! once per file or per trace id (Who&When's two folders clash on 45 ids, each warning some 600
//! characters long), and a wall of them hides the table and the gate line. Every warning is still in
//! the JSON report's `input_warnings`, in full. 0.4.1 raises none of these (docs/compatibility.md §2.1).

/// The kind of a warning, for the warnings a run raises once per file or per trace: the words that
/// follow its count on the summary line. A warning of no listed kind is its own kind.
fn kind(warning: &str) -> Option<&'static str> {
    // The texts are written in `identity`, `pipeline`, `ingest`, `error` and `run::produce`; the
    // tests below build each of them there, so a change of wording shows here.
    if warning.starts_with("trace id ") && warning.contains(" is used by different traces in ") {
        Some("trace ids used by different traces in two files, kept apart")
    } else if warning.contains(" show tool activity but no tool step was read from them") {
        Some("files with traces whose tools were not read")
    } else if warning.starts_with("skipped a JSON line of ") {
        Some("JSON lines skipped")
    } else if warning.contains(" log record(s) carry GenAI content for spans no input") {
        Some("files with log records for spans no input holds")
    } else if warning.contains(" carry no content attributes; the judge sees structure only") {
        Some("files whose traces carry no content for the judge")
    } else if warning.contains(" link to other traces (span links: ") {
        Some("files with traces that link to other traces")
    } else if warning.starts_with("skipped ") && !warning.contains(" in the folders given ") {
        Some("files skipped")
    } else {
        None
    }
}

/// The lines (without `warning: `) that stand for `warnings`: a kind seen once prints its warning as it
/// is, a kind seen more often its count, `where_each` (where to read every one) and its first warning. Kinds are in the order of
/// their first warning, and the first is the first in `warnings`' order (input order, never the order
/// in which threads finished), so the lines are the same whatever the thread count.
pub(crate) fn summary<'a>(
    warnings: impl IntoIterator<Item = &'a str>,
    where_each: &str,
) -> Vec<String> {
    // (kind, first warning, count); a warning of no kind is keyed by its own text.
    let mut groups: Vec<(Option<&'static str>, &str, usize)> = Vec::new();
    for w in warnings {
        let k = kind(w);
        let same = |(gk, first, _): &&mut (Option<&'static str>, &str, usize)| match k {
            Some(_) => *gk == k,
            None => gk.is_none() && *first == w,
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(group) => group.2 += 1,
            None => groups.push((k, w, 1)),
        }
    }
    groups
        .into_iter()
        .map(|(k, first, n)| match (k, n) {
            (_, 1) => first.to_string(),
            (Some(label), n) => format!("{n} {label} ({where_each}); first: {first}"),
            (None, n) => format!("{first} ({n} times)"),
        })
        .collect()
}

/// The lines, each with its `warning: ` prefix, that stderr prints for `warnings`: every one with
/// `verbose`, else their [`summary`].
pub(crate) fn lines<'a>(warnings: impl IntoIterator<Item = &'a str>, verbose: bool) -> Vec<String> {
    let shown = if verbose {
        warnings.into_iter().map(str::to_string).collect()
    } else {
        summary(warnings, "--verbose lists each")
    };
    shown.into_iter().map(|w| format!("warning: {w}")).collect()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::error::InputError;

    fn clash(id: &str, later: &str) -> String {
        format!(
            "trace id {id} is used by different traces in a/{later} and b/{later} (span {id}:root differs): they are kept apart, the second as {id}@b/{later}"
        )
    }

    #[test]
    fn a_kind_seen_once_prints_as_it_is_and_others_are_counted_with_their_first() {
        let warnings = [
            clash("t1", "1.json"),
            "2 trace(s) in x.json show tool activity but no tool step was read from them (trace t: finish_reason tool_calls); no check saw their tools".to_string(),
            clash("t2", "2.json"),
            clash("t3", "3.json"),
        ];
        let lines = lines(warnings.iter().map(String::as_str), false);
        assert_eq!(
            lines,
            [
                format!(
                    "warning: 3 trace ids used by different traces in two files, kept apart (--verbose lists each); first: {}",
                    clash("t1", "1.json")
                ),
                format!("warning: {}", warnings[1]),
            ]
        );
    }

    #[test]
    fn verbose_prints_every_warning_in_order() {
        let warnings = [clash("t1", "1.json"), clash("t2", "2.json")];
        assert_eq!(
            lines(warnings.iter().map(String::as_str), true),
            [
                format!("warning: {}", warnings[0]),
                format!("warning: {}", warnings[1])
            ]
        );
    }

    #[test]
    fn warnings_of_no_kind_are_grouped_only_when_their_text_is_the_same() {
        let lines = summary(["odd one", "odd two", "odd one"], "-");
        assert_eq!(lines, ["odd one (2 times)", "odd two"]);
    }

    #[test]
    fn each_producer_s_warning_has_its_kind() {
        let path = Path::new("d/f.jsonl");
        let skipped_file = InputError::Empty(PathBuf::from("d/e.json")).skip_warning();
        let json = InputError::Json {
            path: path.to_path_buf(),
            offset: 3,
            message: "x".into(),
        };
        let (_, lines) = crate::ingest::contents::read_past_bad_lines(
            path,
            crate::ingest::archive::Decompressed::Borrowed(
                b"{\"a\": 1}\n{\"b\": tru\n{\"c\": 2}\n",
            ),
            json,
        )
        .unwrap();
        let folders =
            crate::run::produce::input_warnings([], [&Some("a.md: not a trace file".into())]);
        let merged = crate::run::identity::Merged {
            clashes: vec![(
                "t".into(),
                "s".into(),
                "a/x.json".into(),
                "b/x.json".into(),
                "t@b/x.json".into(),
            )],
            unjoined: vec![("t".into(), "s".into())],
            ..Default::default()
        };
        let merge_warnings = merged.warnings();
        let unread = crate::run::UnreadTools {
            traces: vec![("t".into(), "finish_reason tool_calls".into())],
        }
        .warning("x.json", crate::redact::Redaction::Off)
        .unwrap();
        let no_content = crate::run::produce::no_content_warning(2, "x.json");
        let links = crate::run::links_warning(3, Path::new("x.json"));
        let cases = [
            (
                links.as_str(),
                Some("files with traces that link to other traces"),
            ),
            (skipped_file.as_str(), Some("files skipped")),
            (lines.0[0].as_str(), Some("JSON lines skipped")),
            (folders[0].as_str(), None),
            (
                merge_warnings[0].as_str(),
                Some("trace ids used by different traces in two files, kept apart"),
            ),
            (
                merge_warnings[1].as_str(),
                Some("files with log records for spans no input holds"),
            ),
            (
                unread.as_str(),
                Some("files with traces whose tools were not read"),
            ),
            (
                no_content.as_str(),
                Some("files whose traces carry no content for the judge"),
            ),
        ];
        for (warning, want) in cases {
            assert_eq!(kind(warning), want, "{warning}");
        }
    }
}
