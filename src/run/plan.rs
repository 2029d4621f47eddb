//! What a run over files is asked to do, resolved from a command's flags before it starts: the
//! settings that decide its verdicts, the names its report carries, how strictly it reads its inputs,
//! and what it shows and records on the way. A command fills in a [`Plan`] before the run; producing,
//! accepting and finishing the run read only this, so the library never asks the command line again.

use std::sync::Arc;

use super::RunSettings;
use super::progress::Bar;
use crate::report::render::replay::JudgeRecord;
use crate::report::steps::TraceSteps;
use crate::report::{Report, ReportCheck, SkippedInput, VerdictBatch};

/// A resolved run.
pub(crate) struct Plan {
    pub settings: RunSettings,
    /// The active checks, in selection order (the verdict table's columns).
    pub check_names: Vec<String>,
    /// The judge's name as the report shows it (`none` without one).
    pub judge: String,
    pub redaction_name: &'static str,
    /// `--judge-record`: where to write the judged verdicts.
    pub judge_record: Option<JudgeRecord>,
    /// `--strict-input`: an input warning ends the run (exit 2).
    pub strict_input: bool,
    /// `--verbose`: every warning on stderr, not one line per kind.
    pub verbose: bool,
    /// `--skip-bad-input`: a file or JSON line that cannot be read is left out with an input warning.
    pub skip_bad_input: bool,
    /// The progress bar, when one may be shown (also `settings.progress`).
    pub progress: Option<Arc<Bar>>,
}

impl Plan {
    /// `--agent-version` as it may leave the process: masked as the verdicts' agent versions are.
    pub(crate) fn masked_agent_version(&self) -> Option<String> {
        self.settings
            .agent_version
            .as_deref()
            .map(|v| self.settings.redaction.mask(v).into_owned())
    }

    /// The report of these verdict batches, named by this run's judge, checks and redaction.
    pub(crate) fn report(
        &self,
        batches: Vec<VerdictBatch>,
        failing_steps: Vec<TraceSteps>,
        input_warnings: Vec<String>,
        skipped_input: SkippedInput,
    ) -> Report {
        Report {
            judge: self.judge.clone(),
            checks: report_checks(&self.check_names),
            redaction: self.redaction_name.to_string(),
            batches,
            input_warnings,
            failing_steps,
            skipped_input,
            sessions: None,
        }
    }
}

/// The named checks as a report knows them, each with the role the registry gives it.
pub(crate) fn report_checks(names: &[String]) -> Vec<ReportCheck> {
    names
        .iter()
        .map(|name| ReportCheck {
            name: name.clone(),
            role: crate::checks::registry::role(name),
        })
        .collect()
}
