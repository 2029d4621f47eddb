//! # wrong_direction
//!
//! **What it detects.** A multi-hop task where the agent walked the dependency chain backwards. This
//! failure mode needs a judge model reading the trace; faultgate runs offline and ships no judge, so the
//! check is listed for compatibility and is skipped unless a judge is configured.
//!
//! **Why it matters.** Reverse-direction search finds plausible but wrong entities on chained questions.
//!
//! **Example.** Asked for the auditor of the partner of X, the agent first searches for auditors.
//!
//! **Known limits.** No judge backend is bundled: `--judge` is refused with a message.

use super::{Check, CheckContext, CheckKind, Columns, VerdictColumn};

pub struct WrongDirection;

impl Check for WrongDirection {
    fn name(&self) -> &'static str {
        "wrong_direction"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Judge
    }

    fn description(&self) -> &'static str {
        "Agent searched the dependency chain backwards on a multi-hop task."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext, out: &mut VerdictColumn) {
        for _ in cols.traces() {
            out.push(false, 0.0, "no judge configured");
        }
    }
}
