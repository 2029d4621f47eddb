//! Why a run over files gave no result: its files, its judge, its stderr or its end failed. One type
//! for every step after the command line, so a command maps it to its own errors in one place.

use std::io;

use crate::error::InputError;
use crate::report::finish::FinishError;

/// Why a run could not be produced, accepted or finished.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// stderr could not be written (a closed pipe among them).
    #[error(transparent)]
    Print(#[from] io::Error),
    /// The run cannot be used as it is (a file that cannot be read, every file skipped, an input
    /// warning under `--strict-input`, a spill that failed), with the one-line reason.
    #[error("{0}")]
    Refused(String),
    /// The judge failed for good during the run: its verdicts would be guesses.
    #[error("{0}")]
    JudgeFailed(String),
    /// The judged verdicts could not be recorded (`--judge-record`), with the writer's reason.
    #[error("cannot write output: {0}")]
    Record(String),
    /// An input could not be listed again (for the audit).
    #[error(transparent)]
    Input(#[from] InputError),
    /// The run's end failed: its gate, its outputs or `--explain`.
    #[error(transparent)]
    Finish(#[from] FinishError),
}
