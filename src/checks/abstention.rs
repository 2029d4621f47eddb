//! # abstention
//!
//! **What it detects.** A final answer that says the information could not be found ("I couldn't find
//! the auditor", "No matching records", "not found").
//!
//! **Why it matters.** An agent that gives up politely looks healthy on latency and error dashboards; only
//! the answer text shows that the user got nothing.
//!
//! **Example.** Answer `I could not really quite find it` fires with
//! `answer says 'could not really quite find'`.
//!
//! **Known limits.** Phrase shapes, not meaning: `the 404 not found error is fixed` fires, `I could not
//! verify the refund` and `nothing found` do not. Three or more words between the negation and the verb
//! do not fire.

use std::sync::LazyLock;

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::compat::reason::py_repr_str;
use crate::compat::value::py_strip;
use crate::table::columns::Columns;

/// The phrase shapes, tried together so the earliest match in the answer wins. [`PHRASES_ASCII`]
/// rewrites their `\b`, `\w` and `\s`, so they use no other backslash classes.
const SHAPES: &str = concat!(
    r"(?i)",
    r"\b(?:couldn.t|could not|cannot|can.t|unable to|not able to|wasn.t able to|was not able to|did not|didn.t|failed to)\s+(?:\w+\s+){0,2}?(?:find|locate|retrieve|identify|determine|lookup|look\s?up|discover)\b",
    r"|\bno (?:matching |relevant )?(?:document|information|record|result|source|data)s?\b",
    r"|\b(?:information|answer|record|result|document|data)s? (?:was |were |is |are )?not (?:found|available)\b",
    r"|\bnot found\b",
    r"|\b(?:don.t|do not) (?:know|have (?:that|this|any|enough|the) information)\b",
);

/// The shapes with Unicode word boundaries and classes, for any answer.
static PHRASES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(SHAPES).expect("abstention phrases compile"));

/// The shapes with ASCII word boundaries and classes. On ASCII text they match exactly what
/// [`PHRASES`] matches (Unicode `\w`, `\s` and `\b` agree with their ASCII forms on ASCII
/// characters), and unlike a Unicode `\b` an ASCII one runs in the lazy DFA instead of falling back
/// to a backtracking search.
static PHRASES_ASCII: LazyLock<Regex> = LazyLock::new(|| {
    let ascii = SHAPES
        .replace(r"\b", r"(?-u:\b)")
        .replace(r"\w", "[0-9A-Za-z_]")
        .replace(r"\s", r"[\t\n\x0B\x0C\r ]");
    Regex::new(&ascii).expect("abstention phrases compile")
});

/// The shapes without their word boundaries: a match of [`PHRASES`] is a match of these at the same
/// start, so no phrase starts before the first candidate. Without Unicode `\b` they run in the lazy
/// DFA on any text, where [`PHRASES`] falls back to a backtracking search of the whole answer.
static CANDIDATES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&SHAPES.replace(r"\b", "")).expect("abstention candidates compile")
});

/// The earliest phrase match in `answer`.
fn find(answer: &str) -> Option<std::ops::Range<usize>> {
    if answer.is_ascii() {
        return PHRASES_ASCII.find(answer).map(|m| m.range());
    }
    // Each candidate start is the earliest place a phrase could start from `from` on; the exact
    // shapes, anchored there, pick the same match an unanchored search would (leftmost-first), and
    // they still see the text before the start for their `\b`.
    let mut from = 0;
    while from <= answer.len() {
        let start = CANDIDATES
            .search(&Input::new(answer).span(from..answer.len()))?
            .start();
        let exact = Input::new(answer)
            .span(start..answer.len())
            .anchored(Anchored::Yes);
        if let Some(m) = PHRASES.search(&exact) {
            return Some(m.range());
        }
        from = start + answer[start..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

pub(crate) struct Abstention;

impl Check for Abstention {
    fn name(&self) -> &'static str {
        "abstention"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "Final answer explicitly says the information could not be found."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        for t in cols.traces() {
            let answer = py_strip(cols.answer.value(t));
            if answer.is_empty() {
                out.sure(false, "no answer");
                continue;
            }
            match find(answer) {
                Some(range) => out.sure(
                    true,
                    format_args!("answer says {}", py_repr_str(&answer[range])),
                ),
                None => out.sure(false, "answer does not abstain"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(answer: &str) -> Option<&str> {
        let unicode = PHRASES.find(answer).map(|m| &answer[m.range()]);
        if answer.is_ascii() {
            let ascii = PHRASES_ASCII.find(answer).map(|m| &answer[m.range()]);
            assert_eq!(
                ascii, unicode,
                "ASCII and Unicode shapes differ on {answer:?}"
            );
        }
        let fast = find(answer).map(|r| &answer[r]);
        assert_eq!(
            fast, unicode,
            "fast path and Unicode shapes differ on {answer:?}"
        );
        fast
    }

    /// Answers built from phrase pieces, look-alikes, word characters and separators of both
    /// alphabets (the ASCII forms, their case variants, the Kelvin sign and long s that fold onto
    /// `k` and `s`, letters that are word characters only in Unicode, spaces only Unicode knows),
    /// glued with or without separators so that pieces land at word edges and inside words.
    fn generated_answers(count: usize) -> Vec<String> {
        const PIECES: &[&str] = &[
            "could not",
            "couldn't",
            "couldn’t",
            "cannot",
            "can't",
            "unable to",
            "not able to",
            "wasn't able to",
            "was not able to",
            "did not",
            "didn't",
            "failed to",
            "find",
            "locate",
            "retrieve",
            "identify",
            "determine",
            "lookup",
            "look up",
            "lookup",
            "discover",
            "no",
            "no matching",
            "no relevant",
            "document",
            "information",
            "records",
            "result",
            "sources",
            "data",
            "was",
            "were",
            "is",
            "are",
            "not",
            "found",
            "available",
            "not found",
            "don't",
            "do not",
            "know",
            "have",
            "that",
            "enough",
            "the",
            "really",
            "quite",
            "easily",
            "it",
            "café",
            "naïve",
            "été",
            "данные",
            "找不到",
            "x",
            "9",
            "_",
            "ok",
            "tokens",
            "ſ",
            "K",
            "ǅ",
            "ß",
            "finder",
            "unknown",
            "nothing",
        ];
        const GLUE: &[&str] = &[
            " ", " ", " ", "", "\u{a0}", "\u{2003}", "\t", "\n", "\u{1c}", "_", "-", ".", ", ",
            "é", "1", "’", "\u{301}",
        ];
        let mut next = crate::checks::testing::draws(0x2545_f491_4f6c_dd1d);
        (0..count)
            .map(|_| {
                let mut answer = String::new();
                for _ in 0..=next(7) {
                    let piece = PIECES[next(PIECES.len())];
                    for c in piece.chars() {
                        match (next(8), c) {
                            (0, 'k') => answer.push('\u{212a}'),
                            (0, 's') => answer.push('\u{17f}'),
                            (1 | 2, c) => answer.extend(c.to_uppercase()),
                            (_, c) => answer.push(c),
                        }
                    }
                    answer.push_str(GLUE[next(GLUE.len())]);
                }
                answer
            })
            .collect()
    }

    #[test]
    fn fast_path_equals_the_unicode_shapes_on_generated_answers() {
        let answers = generated_answers(40_000);
        let (mut hits, mut unicode) = (0, 0);
        for answer in &answers {
            hits += usize::from(matched(answer).is_some());
            unicode += usize::from(!answer.is_ascii());
        }
        // The answers must exercise both outcomes and both paths for the comparison to mean anything.
        assert!(hits > 1_000 && hits < 30_000, "{hits} of 40,000 match");
        assert!(
            unicode > 10_000 && unicode < 36_000,
            "{unicode} of 40,000 are not ASCII"
        );
    }

    #[test]
    fn phrase_shapes() {
        assert_eq!(
            matched("I could not really quite find it"),
            Some("could not really quite find")
        );
        assert_eq!(matched("I cannot lookup that"), Some("cannot lookup"));
        assert_eq!(matched("No data."), Some("No data"));
        assert_eq!(
            matched("The records were not available"),
            Some("records were not available")
        );
        assert_eq!(matched("Not found"), Some("Not found"));
        assert_eq!(matched("unable to\nfind"), Some("unable to\nfind"));
        assert_eq!(
            matched("I wasn’t able to locate it"),
            Some("wasn’t able to locate")
        );
        assert_eq!(
            matched("I don't have enough information"),
            Some("don't have enough information")
        );
    }

    #[test]
    fn look_alikes_do_not_match() {
        assert_eq!(matched("I could not verify the refund"), None);
        assert_eq!(matched("I could not really quite easily find it"), None);
        assert_eq!(matched("nothing found"), None);
        assert_eq!(matched("unknown"), None);
    }

    #[test]
    fn ascii_shapes_agree_at_the_edges() {
        for answer in [
            "I_could not find",
            "could not_find it",
            "NOT FOUND.",
            "x\x0bnot found",
            "unable to\x0cfind",
            "unable to\x1cfind",
            "didnXt look\tup the 9 data_ things",
            "no results2",
            "no results, no data",
            "I don't know",
            "do not   know",
            "could not a b c find",
        ] {
            let _ = matched(answer);
        }
        assert_eq!(matched("café not found"), Some("not found"));
        assert_eq!(matched("éno data"), None);
    }
}

#[cfg(test)]
mod check_tests {
    use super::*;
    use crate::checks::testing::{RunCheck, TraceSpec};

    #[test]
    fn reason_quotes_the_match() {
        let v = TraceSpec::new()
            .answer("Sorry, I couldn't find it.")
            .run(&Abstention);
        assert!(v.detected);
        assert_eq!(v.reason, r#"answer says "couldn't find""#);
        let v = TraceSpec::new()
            .answer("I was unable to\nfind it")
            .run(&Abstention);
        assert_eq!(v.reason, r"answer says 'unable to\nfind'");
    }

    #[test]
    fn plain_answers_and_no_answer() {
        let v = TraceSpec::new()
            .answer("The auditor is Alto-5275.")
            .run(&Abstention);
        assert!(!v.detected);
        assert_eq!(v.reason, "answer does not abstain");
        assert_eq!(TraceSpec::new().run(&Abstention).reason, "no answer");
    }
}
