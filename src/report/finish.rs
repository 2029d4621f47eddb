//! A run's end, as `check` and `merge` both end it: the checks `--trust` sets aside, the run's tallies,
//! the gate, the terminal table and the gate's lines, and every file asked for, the verdicts read once
//! for all of them ([`super::outputs`]). The CLI resolves its flags into [`FinishSettings`], calls
//! [`finish`] and turns what it returns into an exit code.

use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

use super::explanation::Explained;
use super::gate_input::Wanted;
use super::outputs::{self, CountedRun, Files};
use super::pass::VerdictSource;
use super::render::terminal::{IdColumn, TableRows};
use super::render::{audit, slices};
use super::run_gate::{Decided, GateFlags, GateRefused, GateSettings, decide};
use super::schema::JudgeUsage;
use super::spill::{SpillError, SpilledRun};
use super::{RecordedOutcomes, Report, VerdictBatch};
use crate::error::InputError;
use crate::gate::{GateError, SetAside, Verdict};
use crate::table::slices::SliceKeys;

/// How a run ends: the outputs asked for and the gate's flags, resolved from the command line.
pub(crate) struct FinishSettings<'a> {
    /// The files asked for.
    pub files: Files<'a>,
    /// The gate's flags that are not read ahead.
    pub gate: GateFlags<'a>,
    /// Which rows the terminal table shows (`--table`).
    pub table: TableRows,
    /// Whether stdout is coloured (`--color`, `NO_COLOR` and whether stdout is a terminal).
    pub colour: bool,
    /// Where the outputs' rows wait while the run is read once (`--spill-dir`).
    pub spill_dir: Option<&'a Path>,
    /// The slices the run is counted by (`--by`).
    pub slice_keys: Option<SliceKeys>,
    /// Whether pass^k is reported (`--pass-k`, or `--metric pass^k` which gates on it).
    pub pass_k: bool,
}

/// What finishing a run needs besides its settings: the run's report and what named it.
pub(crate) struct Finish<'a> {
    /// The run's report; its batches are empty when the verdicts were spilled.
    pub report: Report,
    /// The run's verdicts, when they were spilled: read back as the outputs need them.
    pub spilled: Option<SpilledRun>,
    /// The judge's token counts, when a judge answered.
    pub judge_usage: Option<JudgeUsage>,
    /// The reproduce command.
    pub command: String,
    /// The audit's inputs (computed only when an audit is written).
    pub audit_inputs: Vec<audit::Input>,
    pub started: Instant,
    /// `--explain`: explains the gate's regressions (given in band order).
    pub explain: Option<Explainer<'a>>,
    /// `--agent-version` (masked): a run that selected a version none of its traces has is refused.
    pub agent_version: Option<String>,
    /// `--outcomes recorded`: a run in which no trace recorded its outcome is refused.
    pub recorded_outcomes: bool,
    /// How the table and the Markdown show trace ids.
    pub ids: IdColumn,
}

/// What `--explain` runs once the gate has named its regressions: it reads the run and the baseline
/// runs again.
pub(crate) type Explainer<'a> = Box<dyn FnOnce(&[String]) -> Result<Explained, InputError> + 'a>;

/// How a finished run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    /// The gate failed, or without a band a check fired: the run is a regression (exit code 1).
    pub failed: bool,
}

/// Why a run could not be finished.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FinishError {
    /// stdout or stderr could not be written (a closed pipe among them).
    #[error(transparent)]
    Print(#[from] io::Error),
    /// The run cannot be gated or reported as it is, with the one-line reason.
    #[error("{0}")]
    Refused(String),
    /// The spilled verdicts could not be read back.
    #[error(transparent)]
    Spill(#[from] SpillError),
    /// The gate could not be computed (a budget or a metric the band cannot check).
    #[error(transparent)]
    Gate(#[from] GateError),
    /// `--explain` could not read a run again.
    #[error(transparent)]
    Explain(#[from] InputError),
    /// An output file could not be written, with its writer's reason.
    #[error("{0}")]
    Output(String),
}

/// Why a run that `--agent-version` left without traces is refused.
pub(crate) fn no_trace_of_version(version: &str) -> String {
    format!(
        "--agent-version {version}: no trace of the input records this gen_ai.agent.version; nothing was checked"
    )
}

/// Why `--outcomes recorded` (and `calibrate --labels recorded`) refuses a run none of whose traces
/// recorded an outcome.
pub(crate) const NO_RECORDED_OUTCOME: &str = "--outcomes recorded: no trace of the input records its own outcome (τ-bench reward, SWE-agent info.resolved, Who&When is_correct, a Langfuse score named by --outcome-score); give an outcomes file instead";

/// Prints the table and the gate to `out` (warnings to stderr), and writes every output asked for.
///
/// # Errors
///
/// The run is refused (no trace of the version asked for, no recorded outcome, a band the run cannot
/// be gated against), its spill cannot be read back, `--explain` cannot read a run, or an output
/// cannot be written.
pub(crate) fn finish(
    settings: &FinishSettings<'_>,
    gating: &GateSettings,
    run: Finish,
    out: &mut (impl Write + Send),
) -> Result<Ended, FinishError> {
    let Finish {
        mut report,
        spilled,
        judge_usage,
        command,
        audit_inputs,
        started,
        explain,
        agent_version,
        recorded_outcomes,
        ids,
    } = run;
    let band = &gating.band;
    // The checks --trust sets aside: they stay in every table and count, not in the gate.
    let set_aside: Vec<SetAside> = gating
        .trust
        .as_ref()
        .map(|(trust, min)| trust.set_aside(&report.check_names(), *min))
        .unwrap_or_default();
    let set_aside_names: Vec<String> = set_aside.iter().map(|s| s.check.clone()).collect();
    // pass^k is reported only when asked for, so runs with repeated keys keep 0.4.1's output by default.
    let wanted = Wanted {
        summary: band.is_some(),
        pass_k: settings.pass_k,
        // Only the measures the budgets name: the others would cost a push (and past the exact size a
        // sketch update) per trace, in the run and in every slice, for nothing shown.
        measures: crate::gate::MeasureSet::of(gating.budgets.iter().map(|b| b.measure)),
        slices: settings.slice_keys.is_some(),
    };
    let CountedRun {
        spilled,
        streamed,
        counted,
        trials,
    } = outputs::count_run(
        &mut report,
        spilled,
        explain.is_some(),
        &set_aside_names,
        wanted,
        settings.files.parquet.is_some(),
    )?;
    let traces = match &streamed {
        Some(counts) => counts.traces,
        None => report.batches.iter().map(VerdictBatch::len).sum(),
    };
    if let Some(version) = agent_version.filter(|_| traces == 0) {
        // Checked nothing: a gate must not pass on it (a version mistyped reads no trace at all).
        return Err(FinishError::Refused(no_trace_of_version(&version)));
    }
    let recorded = match &streamed {
        Some(counts) => counts.recorded_outcomes,
        None => RecordedOutcomes::of(&report.batches),
    };
    if recorded_outcomes && traces > 0 && recorded.recorded == 0 {
        // An outcome check that judged no trace would pass every release.
        return Err(FinishError::Refused(NO_RECORDED_OUTCOME.to_string()));
    }
    let slice_table = counted
        .slices
        .zip(settings.slice_keys.as_ref())
        .map(|(mut table, keys)| {
            table.by = keys.names();
            table
        });
    let Decided {
        gate,
        slice_verdicts,
        slice_warning,
    } = decide(
        gating,
        settings.gate,
        counted.summary.as_ref(),
        &set_aside,
        slice_table.as_ref(),
    )
    .map_err(|e| match e {
        GateRefused::Refused(message) => FinishError::Refused(message),
        GateRefused::Gate(e) => FinishError::Gate(e),
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let gate_slices = settings.gate.gate_slices;
    let pass_k = counted.pass_k;
    let outcome = counted.outcome;
    let no_budgets = Vec::new();
    let check_names = report.check_names();
    let shown_slices = slice_table.as_ref().map(|table| slices::SlicesShown {
        table,
        checks: &check_names,
        budgets: gate
            .as_ref()
            .and_then(|(g, _)| g.budgets.as_ref())
            .unwrap_or(&no_budgets),
        verdicts: slice_verdicts.as_deref(),
        gating: gate_slices,
    });
    let source = match &spilled {
        Some(spilled) => VerdictSource::Spilled(spilled),
        None => VerdictSource::Memory(&report.batches),
    };
    let files = &settings.files;
    let asked = outputs::Asked {
        json: files.json.is_some(),
        shown: files.markdown.is_some() || files.html.is_some(),
        audit: files.audit.is_some(),
        junit: files.junit.is_some(),
        parquet: files.parquet.is_some(),
        table: settings.table,
        ids,
        colour: settings.colour,
        sliced: slice_table.is_some(),
        dir: settings.spill_dir,
    };
    // The audit's inputs are read for their digests on a thread of their own while the verdicts are
    // written: a large archive takes as long to digest as the outputs take to write.
    let audit_inputs = &audit_inputs;
    std::thread::scope(|scope| {
        let digesting = files
            .audit
            .map(|_| scope.spawn(|| audit::InputDigests::read(audit_inputs)));
        let digests = move || match digesting {
            Some(digesting) => digesting
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => audit::InputDigests::read(audit_inputs),
        };
        let streamed = outputs::print_results(
            out,
            &outputs::Results {
                report: &report,
                source,
                trials: &trials,
                elapsed,
                outcome: outcome.as_ref(),
                pass_k: pass_k.as_ref(),
                slices: shown_slices.as_ref(),
            },
            &asked,
            streamed,
        )
        .map_err(|e| match e {
            outputs::PassError::Table(e) => FinishError::Print(e),
            outputs::PassError::Spill(e) => FinishError::Spill(e),
        })?;
        let failed_traces = match &streamed {
            Some((_, counts)) => counts.failed,
            None => report.failed_traces().len(),
        };
        let mut failed = failed_traces > 0;
        let explained = match (explain, &gate) {
            (Some(explain), Some((gate, _))) => {
                let regressions: Vec<String> = gate
                    .regressions
                    .iter()
                    .filter_map(|k| k.as_str().map(String::from))
                    .collect();
                Some(explain(&regressions)?)
            }
            _ => None,
        };
        let explanations = explained.as_ref().map(|e| e.explanations.as_slice());
        if let Some((gate, runs_text)) = &gate {
            outputs::print_gate(
                out,
                &outputs::GateShown {
                    gate,
                    band_runs: runs_text,
                    explanations: explanations.unwrap_or_default(),
                    notes: explained.as_ref().map_or(&[], |e| e.notes.as_slice()),
                    slice_verdicts: slice_verdicts.as_deref(),
                    slice_warning: slice_warning.as_deref(),
                    gate_slices,
                    colour: settings.colour,
                },
            )?;
            // INCONCLUSIVE passes: too little evidence is not a regression.
            failed = gate.verdict == Verdict::Fail;
        }
        outputs::write_files(
            out,
            files,
            &outputs::RunFiles {
                report: &report,
                source,
                judge_usage,
                outcome: outcome.as_ref(),
                pass_k: pass_k.as_ref(),
                gate: gate.as_ref(),
                band: band.as_ref(),
                explanations,
                slices: shown_slices.as_ref(),
                command: &command,
                exit_code: i32::from(failed),
                ids,
            },
            streamed,
            digests,
        )
        .map_err(|e| match e {
            outputs::WriteError::Print(e) => FinishError::Print(e),
            outputs::WriteError::Output(message) => FinishError::Output(message),
            outputs::WriteError::Invalid(message) => FinishError::Refused(message),
        })?;
        Ok(Ended { failed })
    })
}
