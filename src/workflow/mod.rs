//! Workflow conformance: did the run take the road?
//!
//! A run can end with `task_success: true` and still be wrong on the way: a mandatory checkpoint never
//! ran, ran after the act it should gate, or one agent handed the next a value nobody had checked. This
//! module replays recorded runs against a declarative spec and blocks when the road was wrong; it never
//! reads the final outcome except to print it for contrast.
//!
//! The flow: `spec` (config -> compile -> [`Workflow`]), `trajectory` (JSON lines -> [`Event`]s),
//! `rules` ([`Workflow::evaluate`], pure, over any event sequence), `report` (per-file verdicts, text with
//! `report-sha256:`, JSON) and `draft` (a spec mined from known-good runs); the `faultgate conform`
//! command itself is `crate::cli::conform`.
//! The rules know no file format, so `check --workflow` can feed them events built from any trace.
//!
//! Verdicts and exit codes: PASS 0 (with or without warnings), BLOCK 1, ERROR (`bad-input`) 2. With
//! several files the process exit is the worst verdict, where BLOCK outranks ERROR outranks PASS: a
//! confirmed violation is the more important news than an unreadable neighbour.

pub(crate) mod draft;
pub(crate) mod event;
pub(crate) mod from_table;
pub(crate) mod report;
pub(crate) mod rules;
pub(crate) mod spec;
pub(crate) mod trajectory;

use std::path::PathBuf;

use crate::error::display_path;

pub use event::{Action, Checkpoint, Event, Handoff, PayloadField};
pub use rules::{Finding, ReasonCode, Severity};
pub use spec::{SpecConfig, Workflow};

/// A problem that stops `conform` as a whole (exit 2); per-file problems become ERROR verdicts instead.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// A spec or trajectory file could not be read.
    #[error("cannot read {}: {source}", display_path(.path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// The workflow spec is not JSON or not a valid spec.
    #[error("{}: {message}", display_path(.path))]
    Spec {
        /// The spec file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A trajectory file is not JSON or not a valid trajectory.
    #[error("{}: {message}", display_path(.path))]
    Trajectory {
        /// The trajectory file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The verdict or report could not be written.
    #[error("cannot write output: {0}")]
    Output(#[source] std::io::Error),
    /// The command line asks for something that cannot be done; the text says what.
    #[error("{0}")]
    Usage(String),
}

/// The verdict on one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The run took the road the spec demands: exit 0.
    Pass,
    /// A blocking finding: exit 1.
    Block,
    /// The inputs could not be used: exit 2.
    Error,
}

impl Verdict {
    /// The exit code this verdict alone would give.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => 0,
            Verdict::Block => 1,
            Verdict::Error => 2,
        }
    }

    fn severity_rank(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Error => 1,
            Verdict::Block => 2,
        }
    }

    /// The verdict as reports print it (`PASS`, `BLOCK`, `ERROR`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Block => "BLOCK",
            Verdict::Error => "ERROR",
        }
    }
}

/// The worst of several verdicts (BLOCK > ERROR > PASS); PASS when there are none.
pub fn worst_verdict(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    verdicts
        .into_iter()
        .max_by_key(|v| v.severity_rank())
        .unwrap_or(Verdict::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_outranks_error_outranks_pass() {
        use Verdict::*;
        assert_eq!(worst_verdict([Pass, Error, Block, Pass]).exit_code(), 1);
        assert_eq!(worst_verdict([Pass, Error]).exit_code(), 2);
        assert_eq!(worst_verdict([Pass, Pass]).exit_code(), 0);
        assert_eq!(worst_verdict([]), Pass);
    }
}
