//! # wrong_direction
//!
//! **What it detects.** A multi-hop task where the agent walked the dependency chain backwards. This
//! failure mode needs a judge model reading the trace (`--judge`, see `crate::judge`); without one the
//! check is skipped with 0.4.1's note.
//!
//! **Why it matters.** Reverse-direction search finds plausible but wrong entities on chained questions.
//!
//! **Example.** Asked for the auditor of the partner of X, the agent first searches for auditors.
//!
//! **Known limits.** Only as good as the judge: measure its κ on labelled traces with `calibrate`.

use super::{Check, CheckContext, CheckKind, Columns, VerdictColumn};

pub(crate) struct WrongDirection;

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

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext, out: &mut VerdictColumn) {
        crate::judge::judged_column(cols, cx, self.name(), out);
    }
}
