//! # wrong_direction
//!
//! **What it detects.** A multi-hop task where the agent walked the dependency chain backwards:
//! asked for the auditor of a company's partner, it searched for auditors before it found the
//! partner. A judge model you run reads each trace (`--judge`, see `docs/judges.md`) and answers
//! 0.4.1's question, "Return detected=true IF the agent searched in the reverse
//! dependency direction across multi-hop entity links." Without a judge the check is skipped with
//! 0.4.1's note.
//!
//! **Why it matters.** Reverse-direction search finds plausible but wrong entities on chained
//! questions, and the structural checks see nothing wrong with such a run.
//!
//! **Example.** On its fixture, with the judge's answers replayed from a file
//! (`--judge replay:judge_replay.jsonl`): detected with confidence 0.9 and the judge's reason
//! `searched for auditors before finding the partner`.
//!
//! **Known limits.** Only as good as the judge: measure its κ on labelled traces with `calibrate`
//! before it gates anything. The verdict, its confidence and its reason are the judge's, taken as
//! given.

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
