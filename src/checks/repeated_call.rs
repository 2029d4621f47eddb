//! # repeated_call
//!
//! **What it detects.** The same tool called with the same arguments three times in a row of its own
//! calls, getting the same answer each time: the agent is stuck and not learning from the result.
//!
//! **Why it matters.** Identical retries cost tokens and latency and never change the outcome; they are
//! the signature of a planner that ignores tool output.
//!
//! **Example.** `search {"q": 0}` at steps 1, 2 and 3, each returning `[]`: `Tool 'search' with arguments
//! {"q":0} issued >= 3 times (steps 1, 2, 3) where all 3 responses are identical after whitespace
//! normalization.`
//!
//! **Known limits.** Arguments are compared after key sorting (JSON) or whitespace folding (text), so
//! `{"q": "a"}` and `{"q": "a "}` differ. Results must be equal after whitespace folding; a timestamp in
//! the result hides the loop.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::compat::value::canonical_json;
use crate::compat::value::py_strip;
use crate::table::columns::Columns;

pub(crate) struct RepeatedCall;

const REPEATS: usize = 3;

/// Arguments in a canonical form: JSON re-serialised with sorted keys, other text with whitespace folded.
pub(crate) fn normalize_arguments(arguments: &str) -> String {
    let t = py_strip(arguments);
    let bracketed =
        (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'));
    if bracketed && let Ok(v) = serde_json::from_str::<serde_json::Value>(t) {
        return canonical_json(&v);
    }
    fold_whitespace(t)
}

/// Whitespace runs folded to one space, ends trimmed.
fn fold_whitespace(text: &str) -> String {
    text.split(crate::compat::value::is_py_space)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Check for RepeatedCall {
    fn name(&self) -> &'static str {
        "repeated_call"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "Same tool and arguments called >=3 times with identical results."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        // Maps reused across the pass, so a trace costs no fresh table.
        let mut calls: HashMap<&str, usize> = HashMap::new();
        let mut index: HashMap<(&str, String), usize> = HashMap::new();
        for t in cols.traces() {
            calls.clear();
            index.clear();
            match repeated(cols, t, &mut calls, &mut index) {
                Some((tool, args, window)) => out.sure(true, |r: &mut String| {
                    let shown: String = args.chars().take(60).collect();
                    let _ = write!(
                        r,
                        "Tool '{tool}' with arguments {shown} issued >= 3 times (steps {}, {}, {}) where all 3 responses are identical after whitespace normalization.",
                        window[0] + 1,
                        window[1] + 1,
                        window[2] + 1
                    );
                }),
                None if cols.step_rows(t).len() < REPEATS => {
                    out.sure(false, "fewer than 3 tool calls");
                }
                None => out.sure(false, "no repeated calls without progress"),
            }
        }
    }
}

/// The first window of three calls of one tool with the same normalised arguments and the same
/// folded result, with the tool, its normalised arguments and the window's step positions.
fn repeated<'a>(
    cols: &Columns<'a>,
    t: usize,
    calls: &mut HashMap<&'a str, usize>,
    index: &mut HashMap<(&'a str, String), usize>,
) -> Option<(&'a str, String, [usize; REPEATS])> {
    let rows = cols.step_rows(t);
    let first = rows.start;
    if rows.len() < REPEATS {
        return None;
    }
    // A group needs three calls of one tool, so only the arguments of tools called that often are
    // normalised (the costly part); leaving the others out changes no qualifying group or order.
    for s in rows.clone() {
        *calls.entry(cols.tool.value(s)).or_default() += 1;
    }
    if calls.values().all(|&c| c < REPEATS) {
        return None;
    }
    // Groups in order of first occurrence, each with its members' step positions.
    let mut groups: Vec<((&str, String), Vec<usize>)> = Vec::new();
    for s in rows {
        let tool = cols.tool.value(s);
        if calls[tool] < REPEATS {
            continue;
        }
        let key = (tool, normalize_arguments(cols.arguments.value(s)));
        let slot = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[slot].1.push(s - first);
    }
    for ((tool, args), members) in groups.into_iter().filter(|(_, m)| m.len() >= REPEATS) {
        // Each member's result is folded once, not once per window it falls in.
        let folded: Vec<String> = members
            .iter()
            .map(|&i| fold_whitespace(cols.result.value(first + i)))
            .collect();
        for (w, window) in members.windows(REPEATS).enumerate() {
            if folded[w + 1..w + REPEATS].iter().all(|r| *r == folded[w]) {
                return Some((tool, args, [window[0], window[1], window[2]]));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{RunCheck, TraceSpec};

    #[test]
    fn three_identical_calls_with_identical_results_fire() {
        let v = TraceSpec::new()
            .step("search", r#"{"q": 0}"#, "[]")
            .step("search", r#"{ "q":0 }"#, " [] ")
            .step("search", r#"{"q": 0}"#, "[]")
            .run(&RepeatedCall);
        assert!(v.detected);
        assert_eq!(
            v.reason,
            r#"Tool 'search' with arguments {"q":0} issued >= 3 times (steps 1, 2, 3) where all 3 responses are identical after whitespace normalization."#
        );
    }

    #[test]
    fn progress_or_two_calls_do_not_fire() {
        let v = TraceSpec::new()
            .step("search", "a  b", "x")
            .step("search", "a b", "y")
            .step("search", "a b", "x")
            .run(&RepeatedCall);
        assert!(!v.detected);
        assert_eq!(v.reason, "no repeated calls without progress");
        let v = TraceSpec::new()
            .step("s", "a", "x")
            .step("s", "a", "x")
            .run(&RepeatedCall);
        assert_eq!(v.reason, "fewer than 3 tool calls");
    }

    #[test]
    fn the_window_slides_over_the_group() {
        let v = TraceSpec::new()
            .step("s", "a", "1")
            .step("other", "a", "1")
            .step("s", "a", "2")
            .step("s", "a", "2")
            .step("s", "a", "2")
            .run(&RepeatedCall);
        assert!(v.reason.contains("(steps 3, 4, 5)"), "{}", v.reason);
    }

    #[test]
    fn tools_called_less_often_do_not_disturb_the_groups() {
        let v = TraceSpec::new()
            .step("a", "x", "1")
            .step("b", "{\"q\": 1}", "r")
            .step("a", "x", "1")
            .step("b", "{ \"q\":1}", "r ")
            .step("c", "y", "1")
            .step("b", "{\"q\": 1}", " r")
            .run(&RepeatedCall);
        assert!(v.reason.contains("'b'"), "{}", v.reason);
        assert!(v.reason.contains("(steps 2, 4, 6)"), "{}", v.reason);
        let v = TraceSpec::new()
            .step("a", "x", "1")
            .step("b", "x", "1")
            .step("a", "x", "1")
            .step("b", "x", "1")
            .run(&RepeatedCall);
        assert_eq!(v.reason, "no repeated calls without progress");
    }

    #[test]
    fn normalizes_json_and_text() {
        assert_eq!(
            normalize_arguments(r#" {"b": 1, "a": [2, "é"]} "#),
            r#"{"a":[2,"é"],"b":1}"#
        );
        assert_eq!(normalize_arguments(" a \n\t b "), "a b");
        assert_eq!(normalize_arguments("{not json}"), "{not json}");
    }
}
