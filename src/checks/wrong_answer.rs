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

use super::{Check, CheckContext, CheckKind, TraceView, Verdict};
use crate::pyfmt::{py_repr_str, py_strip};

pub struct WrongAnswer;

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

    fn run(&self, trace: &TraceView<'_>, cx: &CheckContext) -> Verdict {
        let Some(expected) = cx.golden.as_ref().and_then(|g| g.expected(trace.scenario(), trace.prompt())) else {
            return Verdict {
                detected: false,
                confidence: 0.0,
                reason: "no golden answer for this scenario".into(),
            };
        };
        let answer = py_strip(trace.answer());
        if answer.is_empty() {
            return Verdict::sure(false, "no answer to grade");
        }
        let found = answer.to_lowercase().contains(&expected.to_lowercase());
        Verdict::sure(
            !found,
            format!(
                "expected {} {} in answer",
                py_repr_str(expected),
                if found { "found" } else { "not found" }
            ),
        )
    }
}
