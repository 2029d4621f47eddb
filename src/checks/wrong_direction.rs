//! # wrong_direction
//!
//! **What it detects.** A multi-hop task where the agent walked the dependency chain backwards. This
//! failure mode needs a judge model reading the trace (`--judge`, see `crate::judge`), which answers
//! [`QUESTION`] before the batch's checks run; without one the check is skipped with 0.4.1's note.
//!
//! **Why it matters.** Reverse-direction search finds plausible but wrong entities on chained questions.
//!
//! **Example.** Asked for the auditor of the partner of X, the agent first searches for auditors.
//!
//! **Known limits.** Only as good as the judge: measure its κ on labelled traces with `calibrate`.

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use super::judged::judged_column;
use crate::table::columns::Columns;

pub(crate) struct WrongDirection;

/// The question the judge answers about each trace, 0.4.1's text verbatim.
pub(crate) const QUESTION: &str = "Determine whether the agent made a MULTI_HOP_DIRECTION_ERROR. Rule: Return detected=true IF the agent searched in the reverse dependency direction across multi-hop entity links.";

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

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        judged_column(cols, cx, self.name(), out);
    }
}
