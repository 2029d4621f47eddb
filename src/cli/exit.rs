//! How a command ends: its [`ExitStatus`] when it ran, or the [`CliError`] that stopped it.
//!
//! The codes are 0.4.1's, so CI jobs that read them keep working. Every error prints as
//! `faultgate: <message>` and exits [`ExitStatus::Error`], except a closed stdout
//! ([`CliError::BrokenPipe`]), which ends the command quietly.

use std::io;

/// The process exit code of a command that ran to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// 0: no check fired, the gate passed or was inconclusive, precheck found no error, conform passed
    /// every run, or the command did what it was asked (`baseline`, `calibrate`, `checks`...).
    Pass = 0,
    /// 1: a check fired on a trace (without `--band`), the gate failed, or conform blocked a run.
    Fail = 1,
    /// 2: bad input or usage (also every [`CliError`]), precheck found an error-level issue, or conform
    /// could not read a run.
    Error = 2,
}

impl ExitStatus {
    /// The code the process exits with.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// [`ExitStatus::Fail`] when `failed`, else [`ExitStatus::Pass`].
    pub fn fail_if(failed: bool) -> ExitStatus {
        if failed {
            ExitStatus::Fail
        } else {
            ExitStatus::Pass
        }
    }
}

impl From<crate::gate::Verdict> for ExitStatus {
    fn from(verdict: crate::gate::Verdict) -> Self {
        use crate::gate::Verdict;
        match verdict {
            Verdict::Pass | Verdict::Inconclusive => ExitStatus::Pass,
            Verdict::Fail => ExitStatus::Fail,
        }
    }
}

impl From<crate::workflow::Verdict> for ExitStatus {
    fn from(verdict: crate::workflow::Verdict) -> Self {
        use crate::workflow::Verdict;
        match verdict {
            Verdict::Pass => ExitStatus::Pass,
            Verdict::Block => ExitStatus::Fail,
            Verdict::Error => ExitStatus::Error,
        }
    }
}

/// What stops a command before it reaches its verdict. The message is the one printed after
/// `faultgate: `; the library's errors print as they are.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A reader closed our stdout (`faultgate check … | head`): not an error of the run, so the command
    /// stops quietly with exit 0, as a pipeline expects.
    #[error("broken pipe")]
    BrokenPipe,
    /// Writing to the terminal failed for another reason.
    #[error(transparent)]
    Io(io::Error),
    /// The command line, or an input it names, cannot be used as given (an unknown check, flags that do
    /// not go together, an input that would be overwritten, a band that is not JSON, a run that read
    /// nothing); the message says why.
    #[error("{0}")]
    Invalid(String),
    /// A file the command needs could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file, as the command line named it.
        path: String,
        /// Why reading failed.
        source: io::Error,
    },
    /// An output file or directory could not be written.
    #[error("cannot write output: {0}")]
    Output(String),
    /// A trace file could not be read or decoded (the message names the file).
    #[error(transparent)]
    Input(#[from] crate::error::InputError),
    /// The policy file cannot be used.
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// The band cannot be built or read, or the gate cannot run.
    #[error(transparent)]
    Gate(#[from] crate::gate::GateError),
    /// The workflow spec or a trajectory cannot be used.
    #[error(transparent)]
    Workflow(#[from] crate::workflow::WorkflowError),
    /// The expectations file cannot be used, or expectations cannot be written.
    #[error(transparent)]
    Expect(#[from] crate::expect::ExpectError),
    /// The judge cannot be set up or called.
    #[error(transparent)]
    Judge(#[from] crate::judge::JudgeError),
    /// The judge failed for good during the run: its verdicts would be guesses.
    #[error("{0}")]
    JudgeFailed(String),
    /// A redaction pattern cannot be used.
    #[error(transparent)]
    Redaction(#[from] crate::redact::RedactionError),
    /// A partial-run file cannot be used.
    #[error(transparent)]
    Partial(#[from] crate::partial::PartialError),
    /// The calibration table cannot be written.
    #[error(transparent)]
    CalibrationTable(#[from] crate::calibrate::parquet::WriteError),
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Io(e)
        }
    }
}

/// A run's end that failed, as the command line words it.
impl From<crate::report::finish::FinishError> for CliError {
    fn from(e: crate::report::finish::FinishError) -> Self {
        use crate::report::finish::FinishError;
        match e {
            FinishError::Print(e) => CliError::from(e),
            FinishError::Refused(message) => CliError::Invalid(message),
            FinishError::Spill(e) => CliError::Invalid(e.to_string()),
            FinishError::Gate(e) => CliError::Gate(e),
            FinishError::Explain(e) => CliError::Input(e),
            FinishError::Output(message) => CliError::Output(message),
        }
    }
}

/// A run that gave no result, as the command line words it.
impl From<crate::run::RunError> for CliError {
    fn from(e: crate::run::RunError) -> Self {
        use crate::run::RunError;
        match e {
            RunError::Print(e) => CliError::from(e),
            RunError::Refused(message) => CliError::Invalid(message),
            RunError::JudgeFailed(message) => CliError::JudgeFailed(message),
            RunError::Record(message) => CliError::Output(message),
            RunError::Input(e) => CliError::Input(e),
            RunError::Finish(e) => CliError::from(e),
        }
    }
}

impl CliError {
    /// An output that could not be written, with the writer's reason.
    pub fn output(e: impl std::fmt::Display) -> Self {
        CliError::Output(e.to_string())
    }

    /// The exit status the error ends the command with.
    pub fn status(&self) -> ExitStatus {
        match self {
            CliError::BrokenPipe => ExitStatus::Pass,
            _ => ExitStatus::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_0_4_1s() {
        assert_eq!(ExitStatus::Pass.code(), 0);
        assert_eq!(ExitStatus::Fail.code(), 1);
        assert_eq!(ExitStatus::Error.code(), 2);
        assert_eq!(
            ExitStatus::from(crate::gate::Verdict::Inconclusive),
            ExitStatus::Pass
        );
        assert_eq!(
            ExitStatus::from(crate::workflow::Verdict::Block),
            ExitStatus::Fail
        );
    }

    #[test]
    fn a_closed_stdout_is_its_own_case() {
        let closed = CliError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(matches!(closed, CliError::BrokenPipe));
        assert_eq!(closed.status(), ExitStatus::Pass);
        let full = CliError::from(io::Error::other("disk full"));
        assert_eq!(full.to_string(), "disk full");
        assert_eq!(full.status(), ExitStatus::Error);
    }
}
