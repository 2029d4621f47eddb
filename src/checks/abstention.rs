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

/// The earliest phrase match in `answer`.
fn find(answer: &str) -> Option<std::ops::Range<usize>> {
    let phrases = if answer.is_ascii() {
        &PHRASES_ASCII
    } else {
        &PHRASES
    };
    phrases.find(answer).map(|m| m.range())
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
        find(answer).map(|r| &answer[r])
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
