//! A run over files from its start to its end, as `check` makes it: produced and held to what a run
//! must satisfy ([`super::acceptance`]), then finished by [`crate::report::finish`] with its report,
//! its audit's inputs and, for `--explain`, the baseline runs read again. The command line resolves a
//! [`Plan`] and an [`Ending`], lists the files, makes one call, [`check_and_finish`], and turns what it
//! returns into an exit code; nothing on the way calls back into the command line.
//!
//! `run` does not re-export this file: it reads runs again through `explain`, which uses `run`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::RunError;
use super::acceptance::produce_accepted;
use super::plan::Plan;
use super::produce::{InputFile, SpillTo, Usage};
use crate::error::{InputError, display_path};
use crate::explain::{BaselineRun, Request};
use crate::ingest::Sources;
use crate::report::finish::{Ended, Explainer, Finish, FinishSettings, finish};
use crate::report::render::audit;
use crate::report::render::repro;
use crate::report::render::terminal::IdColumn;
use crate::report::run_gate::GateSettings;

/// How a run ends, resolved from the command line before the run starts.
pub(crate) struct Ending<'a> {
    /// The outputs asked for and the gate's flags.
    pub finish: FinishSettings<'a>,
    /// The band, the gate's test, the budgets and the checks `--trust` sets aside.
    pub gating: &'a GateSettings,
    /// Where the verdicts are spilled as they are made; `None` keeps them in memory.
    pub spill: Option<SpillTo<'a>>,
    /// The reproduce command.
    pub command: String,
    /// The inputs an audit lists, when one is written.
    pub audit: Option<AuditInputs<'a>>,
    /// `--explain`: the baseline runs to read again once the gate names its regressions.
    pub explain: Option<ExplainBaselines<'a>>,
    /// When the work began (before the input files were listed).
    pub started: Instant,
    /// `--outcomes recorded`: a run in which no trace recorded its outcome is refused.
    pub recorded_outcomes: bool,
}

/// Every input of a run as its audit lists them: the trace arguments (a directory lists each file it
/// holds), then the other inputs given.
pub(crate) struct AuditInputs<'a> {
    pub traces: &'a [PathBuf],
    pub sources: &'a Sources,
    /// The other inputs by role (band, policy, golden...), in the audit's order.
    pub others: Vec<(&'static str, PathBuf)>,
}

impl AuditInputs<'_> {
    /// The inputs in the audit's order. The trace arguments are listed again, after the run, as the
    /// audit records them.
    ///
    /// # Errors
    ///
    /// A trace argument that can no longer be listed.
    pub(crate) fn list(self) -> Result<Vec<audit::Input>, InputError> {
        let mut inputs: Vec<audit::Input> = crate::ingest::expand_paths(self.traces, self.sources)?
            .into_iter()
            .map(|path| audit::Input {
                role: "traces",
                path,
                recorded: None,
            })
            .collect();
        inputs.extend(self.others.into_iter().map(|(role, path)| audit::Input {
            role,
            path,
            recorded: None,
        }));
        Ok(inputs)
    }
}

/// The baseline runs `--explain` reads again, and whether it explains every scenario that fired.
pub(crate) struct ExplainBaselines<'a> {
    pub runs: &'a [PathBuf],
    pub sources: &'a Sources,
    /// `--explain-all`.
    pub all: bool,
}

impl<'a> ExplainBaselines<'a> {
    /// What explains the gate's regressions once it has named them: the baseline runs are listed
    /// then, since only a gate with regressions needs them.
    fn explainer(
        self,
        plan: &'a Plan,
        candidate: Vec<PathBuf>,
        baseline_version: Option<Arc<str>>,
    ) -> Explainer<'a> {
        Box::new(move |regressions: &[String]| {
            let baselines = self.baseline_runs()?;
            crate::explain::explain(&Request {
                settings: &plan.settings,
                candidate: &candidate,
                baselines: &baselines,
                baseline_version: baseline_version.clone(),
                regressions,
                all: self.all,
            })
        })
    }

    /// The baseline runs, each named as the outputs show paths, with its files.
    fn baseline_runs(&self) -> Result<Vec<BaselineRun>, InputError> {
        self.runs
            .iter()
            .map(|p| {
                Ok(BaselineRun {
                    shown: repro::display_path(p).unwrap_or_else(|| display_path(p)),
                    files: crate::ingest::expand_paths(std::slice::from_ref(p), self.sources)?,
                })
            })
            .collect()
    }
}

/// Runs the checks over `files` as `plan` says, then ends the run as `ending` says: the terminal table
/// and the gate's lines to `out` (warnings to stderr), every output file asked for, and how it ended.
///
/// # Errors
///
/// The run is refused (a file that cannot be read, every file skipped, `--strict-input`, a judge that
/// failed), its judged verdicts cannot be recorded, an audit's input can no longer be listed, or its
/// end fails ([`crate::report::finish::FinishError`]).
pub(crate) fn check_and_finish(
    plan: &Plan,
    files: Vec<InputFile>,
    ending: Ending<'_>,
    out: &mut (impl Write + Send),
) -> Result<Ended, RunError> {
    let Ending {
        finish: settings,
        gating,
        spill,
        command,
        audit,
        explain,
        started,
        recorded_outcomes,
    } = ending;
    let mut produced = produce_accepted(plan, files, spill)?;
    let spilled = produced.spilled.take();
    let audit_inputs = match audit {
        Some(audit) => audit.list()?,
        None => Vec::new(),
    };
    let judge_usage = produced.judge_usage.map(Usage::reported);
    let explain = explain.map(|baselines| {
        // Only `--explain` reads the run's files again: the paths are copied for it alone.
        let candidate = produced.files.iter().map(|f| f.path.clone()).collect();
        let baseline_version = gating
            .band
            .as_ref()
            .and_then(|band| band.agent_version.as_deref())
            .map(Arc::from);
        baselines.explainer(plan, candidate, baseline_version)
    });
    let ids = IdColumn::of_run(produced.named_ids);
    let run = Finish {
        report: produced.report(plan),
        spilled,
        judge_usage,
        command,
        audit_inputs,
        started,
        explain,
        agent_version: plan.masked_agent_version(),
        recorded_outcomes,
        ids,
    };
    Ok(finish(&settings, gating, run, out)?)
}
