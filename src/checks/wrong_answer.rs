//! # wrong_answer
//!
//! **What it detects.** An answered run whose final answer does not contain the expected answer from the
//! golden file (case-insensitive substring).
//!
//! **Why it matters.** Structure can look perfect while the answer is wrong; a golden set is the cheapest
//! ground truth a team can keep for its regression scenarios.
//!
//! **Example.** Expected `Alto-5275`, answer `The auditor is Alto.`: `expected 'Alto-5275' not found in
//! answer`.
//!
//! **Known limits.** Substring matching: `12` is found in `120`, and paraphrases are not found. Runs
//! without an answer are left to search_loop and abstention.

use std::fmt::Write;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use super::graded::golden_and_answer;
use crate::compat::reason::py_repr_str;
use crate::table::columns::Columns;

pub(crate) struct WrongAnswer;

impl Check for WrongAnswer {
    fn name(&self) -> &'static str {
        "wrong_answer"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Golden
    }

    fn description(&self) -> &'static str {
        "Answered, but the expected answer is not in the final answer (needs --golden)."
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
            let found = answer.to_lowercase().contains(&expected.to_lowercase());
            out.sure(!found, |r: &mut String| {
                let _ = write!(
                    r,
                    "expected {} {} in answer",
                    py_repr_str(expected),
                    if found { "found" } else { "not found" }
                );
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::contract::SideInputs;
    use crate::checks::testing::{RunCheck, TraceSpec};
    use crate::golden::Golden;
    use serde_json::json;

    fn cx(golden: serde_json::Value) -> SideInputs {
        SideInputs {
            golden: Some(Golden::from_value(golden).unwrap()),
            ..SideInputs::default()
        }
    }

    #[test]
    fn grades_by_case_insensitive_substring() {
        let g = cx(json!({"sc": "Alto-5275"}));
        let t = || TraceSpec::new().root_attr("faultgate.scenario", json!("sc"));
        let v = t()
            .answer("The auditor is alto-5275.")
            .run_with(&WrongAnswer, &g);
        assert!(!v.detected);
        assert_eq!(v.reason, "expected 'Alto-5275' found in answer");
        let v = t()
            .answer("The auditor is Alto.")
            .run_with(&WrongAnswer, &g);
        assert!(v.detected);
        assert_eq!(v.reason, "expected 'Alto-5275' not found in answer");
        assert_eq!(t().run_with(&WrongAnswer, &g).reason, "no answer to grade");
    }

    #[test]
    fn no_expectation_has_zero_confidence() {
        let v = TraceSpec::new()
            .answer("x")
            .run_with(&WrongAnswer, &cx(json!({"other": "y"})));
        assert_eq!((v.detected, v.confidence), (false, 0.0));
        assert_eq!(v.reason, "no golden answer for this scenario");
        // The exact prompt text is a key too.
        let v = TraceSpec::new()
            .prompt("q?")
            .answer("x")
            .run_with(&WrongAnswer, &cx(json!({"q?": "y"})));
        assert!(v.detected);
    }
}
