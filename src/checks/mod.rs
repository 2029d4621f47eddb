//! The checks: one file per failure mode, the contract they share, and the one registry of them.
//!
//! - [`contract`]: what a check declares and receives ([`Check`], [`CheckKind`], [`Input`],
//!   [`Gating`], [`SideInputs`], [`CheckContext`]) and the [`VerdictColumn`] it fills. A check file
//!   imports the contract, the table's typed columns ([`crate::table::columns`]) and its own inputs,
//!   and nothing of the other checks.
//! - [`registry`]: every check in [`ALL`], with the inputs it reads and its gating; the only file that
//!   names every check.
//! - `judged`: the pass of a judged check (`wrong_direction`, the custom checks of
//!   `--judge-checks`), which pushes the verdicts the judge gave on the batch before the checks ran.
//!
//! A check runs as a pass over a batch: it walks the traces of the pass with their span and step row
//! ranges, and pushes one verdict per trace. Checks never see the export format, and they compute on
//! raw values; the column masks each reason it keeps, so redaction holds for everything leaving the
//! process.

pub(crate) mod abstention;
pub(crate) mod context_overflow;
pub mod contract;
pub(crate) mod expected_actions;
pub(crate) mod graded;
pub(crate) mod judged;
pub(crate) mod outcome;
pub(crate) mod policy;
pub mod registry;
pub(crate) mod repeated_call;
pub(crate) mod search_loop;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod truncation;
pub(crate) mod unrecovered_tool_error;
pub(crate) mod workflow;
pub(crate) mod wrong_answer;
pub(crate) mod wrong_direction;

pub use contract::{
    Check, CheckContext, CheckKind, Gating, Input, JudgedVerdicts, Reason, Reasons, SideInputs,
    Verdict, VerdictColumn,
};
pub use registry::{ALL, Registered, Role, checks, find};
