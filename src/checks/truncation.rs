//! # truncation
//!
//! **What it detects.** An answer that has the head of the expected token but not the whole of it:
//! `Alto` where `Alto-5275` was expected.
//!
//! **Why it matters.** Compound identifiers (codes, SKUs, versions) cut at a separator look right to a
//! reader and are wrong to every system downstream.
//!
//! **Example.** Expected `Alto-5275`, answer `The auditor is Alto.`: `answer has 'Alto' but not
//! 'Alto-5275'`.
//!
//! **Known limits.** Only the head before the first `-`, `_`, `/` or space is tried, and only when it has
//! at least 3 characters.

use regex_automata::meta::Regex;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use super::graded::golden_and_answer;
use crate::compat::reason::py_repr_str;
use crate::table::columns::Columns;

pub(crate) struct Truncation;

/// A regex matching `literal` as a whole word, case-insensitively.
fn whole_word(literal: &str) -> Option<Regex> {
    let mut pattern = String::from(r"(?i)\b");
    for c in literal.chars() {
        if c.is_alphanumeric() || c == '_' || c.is_whitespace() {
            pattern.push(c);
        } else {
            pattern.push_str(&format!(r"\x{{{:x}}}", c as u32));
        }
    }
    pattern.push_str(r"\b");
    Regex::new(&pattern).ok()
}

impl Check for Truncation {
    fn name(&self) -> &'static str {
        "truncation"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Golden
    }

    fn description(&self) -> &'static str {
        "Answer has the head of the expected token but not the whole token (needs --golden)."
    }

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        for t in cols.traces() {
            let (expected, answer) = match golden_and_answer(cols, t, cx) {
                Ok(pair) => pair,
                Err((detected, confidence, reason)) => {
                    out.push(detected, confidence, reason);
                    continue;
                }
            };
            if answer.to_lowercase().contains(&expected.to_lowercase()) {
                out.sure(false, "expected answer present in full");
                continue;
            }
            let head = expected
                .split(['-', '_', '/', ' '])
                .next()
                .unwrap_or(expected);
            if head.chars().count() >= 3
                && head != expected
                && whole_word(head).is_some_and(|re| re.is_match(answer))
            {
                out.sure(
                    true,
                    format_args!(
                        "answer has {} but not {}",
                        py_repr_str(head),
                        py_repr_str(expected)
                    ),
                );
            } else {
                out.sure(false, "no truncated form of the expected answer");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Verdict;
    use crate::checks::contract::SideInputs;
    use crate::checks::testing::{RunCheck, TraceSpec};
    use crate::golden::Golden;
    use serde_json::json;

    fn run(expected: &str, answer: &str) -> Verdict {
        let cx = SideInputs {
            golden: Some(Golden::from_value(json!({"sc": expected})).unwrap()),
            ..SideInputs::default()
        };
        TraceSpec::new()
            .root_attr("faultgate.scenario", json!("sc"))
            .answer(answer)
            .run_with(&Truncation, &cx)
    }

    #[test]
    fn the_head_as_a_whole_word_fires() {
        let v = run("Alto-5275", "The auditor is Alto.");
        assert!(v.detected);
        assert_eq!(v.reason, "answer has 'Alto' but not 'Alto-5275'");
        assert!(run("Alto-5275", "the auditor is ALTO").detected);
    }

    #[test]
    fn look_alikes_do_not_fire() {
        assert_eq!(
            run("Alto-5275", "Altona it is").reason,
            "no truncated form of the expected answer"
        );
        assert_eq!(
            run("Alto-5275", "alto-5275").reason,
            "expected answer present in full"
        );
        // Heads shorter than 3 characters and unsplittable answers never fire.
        assert!(!run("Al-5275", "Al").detected);
        assert!(!run("Alto", "Alt").detected);
    }
}
