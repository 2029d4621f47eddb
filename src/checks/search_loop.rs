//! # search_loop
//!
//! **What it detects.** A run that stopped at its step budget without answering while most of its tool
//! calls came back empty: the agent kept searching and found nothing.
//!
//! **Why it matters.** A loop burns the whole budget (time, tokens, money) and still fails the user; it is
//! the most common way a retrieval agent regresses when its prompts or tools change.
//!
//! **Example.** No final answer, `faultgate.termination = "max_steps"`, 12 `search` calls of which 10
//! returned `[]`: `no answer, 12 steps (cap), 83% empty results`.
//!
//! **Known limits.** "Empty" is read from the result text (`[]`, `{}`, `null`, a zero count field, or an
//! object whose lists are all empty); a tool that reports "nothing found" in prose is not empty. A run
//! without a termination reason counts as capped only from 12 steps on.

use std::fmt::Write;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::compat::reason::fmt_percent0;
use crate::compat::value::py_strip;
use crate::table::columns::Columns;

/// Step count from which a run counts as capped even without a termination reason.
const STEP_CAP: usize = 12;
const CAP_WORDS: [&str; 6] = [
    "step cap",
    "step limit",
    "max steps",
    "max_steps",
    "max iterations",
    "iteration limit",
];

pub(crate) struct SearchLoop;

impl Check for SearchLoop {
    fn name(&self) -> &'static str {
        "search_loop"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "Run ended with no answer at the step budget and most tool calls returned nothing."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        for t in cols.traces() {
            if !py_strip(cols.answer.value(t)).is_empty() {
                out.sure(false, "answered");
                continue;
            }
            let rows = cols.step_rows(t);
            // The agent's own calls: a simulated user's tools are not the agent's search.
            let steps = rows.len() - cols.unjudged_steps(t);
            if steps == 0 {
                out.sure(false, "no tool calls");
                continue;
            }
            let termination = cols.termination.value(t).to_lowercase();
            let capped = steps >= STEP_CAP || CAP_WORDS.iter().any(|w| termination.contains(w));
            let empty = rows
                .filter(|&s| cols.agent_step(s) && cols.empty_result.value(s))
                .count() as f64
                / steps as f64;
            out.sure(capped && empty >= 0.5, |r: &mut String| {
                let cap = if capped { " (cap)" } else { "" };
                let _ = write!(
                    r,
                    "no answer, {steps} steps{cap}, {} empty results",
                    fmt_percent0(empty)
                );
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{RunCheck, TraceSpec};

    fn steps(n: usize, empty: usize) -> TraceSpec {
        (0..n).fold(TraceSpec::new(), |t, i| {
            t.step(
                "search",
                &format!("{{\"q\": {i}}}"),
                if i < empty { "[]" } else { "[1]" },
            )
        })
    }

    #[test]
    fn fires_at_the_step_cap_with_mostly_empty_results() {
        let v = steps(12, 10).run(&SearchLoop);
        assert!(v.detected);
        assert_eq!(v.reason, "no answer, 12 steps (cap), 83% empty results");
    }

    #[test]
    fn eleven_steps_without_a_cap_word_do_not_fire() {
        let v = steps(11, 11).run(&SearchLoop);
        assert!(!v.detected);
        assert_eq!(v.reason, "no answer, 11 steps, 100% empty results");
    }

    #[test]
    fn a_cap_word_caps_a_short_run() {
        let v = steps(2, 1).termination("hit MAX_STEPS").run(&SearchLoop);
        assert!(v.detected, "{}", v.reason);
        assert_eq!(v.reason, "no answer, 2 steps (cap), 50% empty results");
    }

    #[test]
    fn below_half_empty_does_not_fire() {
        let v = steps(8, 1).termination("step limit").run(&SearchLoop);
        assert!(!v.detected);
        assert_eq!(v.reason, "no answer, 8 steps (cap), 12% empty results");
    }

    #[test]
    fn answered_and_toolless_runs_do_not_fire() {
        assert_eq!(
            steps(12, 12).answer("42").run(&SearchLoop).reason,
            "answered"
        );
        assert_eq!(TraceSpec::new().run(&SearchLoop).reason, "no tool calls");
        // A blank answer is no answer.
        assert!(steps(12, 12).answer("  ").run(&SearchLoop).detected);
    }
}
