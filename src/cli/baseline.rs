//! `faultgate baseline`: check several baseline runs and write the tolerance band they span.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::args::{BaselineArgs, RunArgs};
use super::run::{Outputs, Run, RunCommand, execute};
use super::{CliError, ExitStatus};
use crate::gate::BandBuilder;
use crate::partial::RunEntry;
use crate::report::gate_input::gated_run_summary;
use crate::report::render::gate_lines::{
    band_line, few_runs_note, repeated_keys_warning, run_line,
};
use crate::report::render::parquet;
use crate::report::{Report, write_atomic};
use crate::run::InputFile;

/// The output flags of `baseline`, which `merge` takes too.
#[derive(Debug, Clone)]
pub(crate) struct BaselineOutputs {
    pub out: PathBuf,
    pub per_scenario: bool,
    pub pass_k: bool,
    /// `--measures`: the band records each run's measures' distributions.
    pub measures: bool,
    /// `--by`: the band records each run's clean rate per slice of these keys.
    pub slices: Option<crate::table::slices::SliceKeys>,
    pub parquet: Option<PathBuf>,
    /// `--trust` read, with `--min-kappa`: the checks it sets aside do not count in the band's rates.
    pub trust: Option<(crate::gate::Trust, f64)>,
    /// `--agent-version`, masked: the version whose traces alone the runs were read for.
    pub agent_version: Option<String>,
    /// The SHA-256 of `--expect`'s file: the band records it, and `check` refuses another.
    pub expectations: Option<String>,
}

/// The band being built, one run at a time: by a baseline over its runs, or by a merge over the runs
/// of its partials, with the same code.
pub(crate) struct BandRuns {
    builder: BandBuilder,
    /// Per-run clean flags, kept only when their tables are asked for.
    tables: Option<parquet::BaselineTables>,
    trust: Option<(crate::gate::Trust, f64)>,
    /// `--agent-version` (masked): a run with no trace of it is refused.
    agent_version: Option<String>,
    measures: bool,
    /// `--by`: the keys, and each run's slices so far.
    slices: Option<(Vec<String>, Vec<crate::gate::slices::SliceTable>)>,
}

impl BandRuns {
    pub(crate) fn new(outs: &BaselineOutputs) -> BandRuns {
        BandRuns {
            builder: {
                let builder = if outs.pass_k {
                    BandBuilder::with_trials()
                } else {
                    BandBuilder::new()
                };
                if outs.per_scenario && outs.measures {
                    builder.with_scenario_measures()
                } else {
                    builder
                }
            },
            tables: outs
                .parquet
                .as_ref()
                .map(|_| parquet::BaselineTables::new()),
            trust: outs.trust.clone(),
            agent_version: outs.agent_version.clone(),
            measures: outs.measures,
            slices: outs.slices.as_ref().map(|keys| (keys.names(), Vec::new())),
        }
    }

    /// Adds one run's report, reduced to its summary at once, and prints its line.
    pub(crate) fn add_run(
        &mut self,
        run: &RunEntry,
        report: Report,
        started: Instant,
    ) -> Result<(), CliError> {
        let set_aside: Vec<String> = self
            .trust
            .as_ref()
            .map(|(trust, min)| trust.set_aside(&report.check_names(), *min))
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.check)
            .collect();
        let (summary, slices) = match &self.slices {
            None => (
                gated_run_summary(
                    &report,
                    &set_aside,
                    self.builder.usage_totals(),
                    self.measures,
                ),
                None,
            ),
            Some(_) => {
                let wanted = crate::report::gate_input::Wanted {
                    summary: true,
                    pass_k: false,
                    measures: if self.measures {
                        crate::gate::MeasureSet::ALL
                    } else {
                        crate::gate::MeasureSet::NONE
                    },
                    slices: true,
                };
                let input = crate::report::gate_input::whole_run_input(
                    &report,
                    &set_aside,
                    wanted,
                    self.builder.usage_totals(),
                );
                (input.summary.unwrap_or_default(), input.slices)
            }
        };
        drop(report);
        if let (Some((_, runs)), Some(table)) = (&mut self.slices, slices) {
            runs.push(table);
        }
        if let Some(version) = self
            .agent_version
            .as_ref()
            .filter(|_| summary.trace_count == 0)
        {
            let why = crate::report::finish::no_trace_of_version(version);
            return Err(CliError::Invalid(format!("{}: {why}", run.arg)));
        }
        let digest = self.builder.add_run(&summary);
        if let Some(tables) = &mut self.tables {
            tables.add_run(run.shown.clone(), &summary);
        }
        drop(summary);
        writeln!(
            std::io::stdout(),
            "{}",
            run_line(&run.arg, &digest, started.elapsed().as_secs_f64())
        )?;
        if !digest.repeated_keys.is_empty() {
            writeln!(
                std::io::stderr(),
                "warning: {}: {}",
                run.arg,
                repeated_keys_warning(&digest.repeated_keys)
            )?;
        }
        Ok(())
    }

    /// Writes the band (and the tables); returns 0.
    pub(crate) fn finish(self, outs: &BaselineOutputs) -> Result<ExitStatus, CliError> {
        let mut band = self.builder.finish()?;
        band.slices = self
            .slices
            .as_ref()
            .map(|(by, runs)| crate::gate::slices::BandSlices::of(by.clone(), runs));
        band.agent_version.clone_from(&outs.agent_version);
        band.expectations.clone_from(&outs.expectations);
        if let Some(note) = few_runs_note(band.runs) {
            writeln!(std::io::stderr(), "{note}")?;
        }
        let text =
            crate::report::schema::to_pretty(&band.to_wire_with(outs.per_scenario, outs.pass_k));
        write_atomic(&outs.out, text.as_bytes()).map_err(CliError::output)?;
        writeln!(
            std::io::stdout(),
            "{}",
            band_line(&band, &outs.out.to_string_lossy())
        )?;
        if let (Some(dir), Some(tables)) = (&outs.parquet, &self.tables) {
            tables.write(dir, &band).map_err(CliError::output)?;
            writeln!(std::io::stdout(), "parquet written to {}", dir.display())?;
        }
        Ok(ExitStatus::Pass)
    }
}

/// Runs `baseline`; returns 0 once the band (or the partial) is written.
pub(crate) fn run(
    args: &BaselineArgs,
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    execute(args, sources)
}

impl RunCommand for BaselineArgs {
    const NAME: &'static str = "baseline";
    const RUN_PER_ARGUMENT: bool = true;
    type Prepared = ();

    fn traces(&self) -> &[PathBuf] {
        &self.traces
    }

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    fn slice_keys(&self) -> &[String] {
        &self.by
    }

    fn outputs_given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--parquet", self.parquet.is_some()),
            ("--per-scenario", self.per_scenario),
            ("--pass-k", self.pass_k),
            ("--measures", self.measures),
        ]
    }

    fn prepare(&self) -> Result<(), CliError> {
        Ok(())
    }

    fn outputs(&self) -> Outputs<'_> {
        Outputs {
            // A partial is written instead of the band.
            files: vec![("--out", self.run.partial.is_none().then_some(&self.out))],
            dirs: vec![(
                "--parquet",
                self.parquet.as_ref(),
                &[parquet::MATRIX_FILE, parquet::RUNS_FILE],
            )],
            inputs: Vec::new(),
        }
    }

    fn write_outputs(&self, (): (), run: &Run<'_>) -> Result<ExitStatus, CliError> {
        let outs = BaselineOutputs {
            out: self.out.clone(),
            per_scenario: self.per_scenario,
            pass_k: self.pass_k,
            measures: self.measures,
            slices: crate::table::slices::SliceKeys::parse(&self.by)
                .map_err(|e| CliError::Invalid(e.to_string()))?,
            parquet: self.parquet.clone(),
            trust: super::check::read_trust(&self.trust)?,
            agent_version: run.resolved.plan.masked_agent_version(),
            expectations: super::run::expectations_digest(&self.run)?,
        };
        let mut runs = BandRuns::new(&outs);
        let share = run.share();
        for warning in repeated_runs(&run.inputs.runs, &share) {
            writeln!(std::io::stderr(), "warning: {warning}")?;
        }
        for (r, entry) in run.inputs.runs.iter().enumerate() {
            let started = Instant::now();
            // A run may be a directory or archive of many files; it is read, then reduced, alone.
            let files = share.iter().filter(|f| f.run == r).cloned().collect();
            let produced = run.produce(files)?;
            runs.add_run(entry, produced.report(&run.resolved.plan), started)?;
        }
        runs.finish(&outs)
    }
}

/// A warning for each run that reads the same files as an earlier run (the same file given twice, under
/// one name or two): the band would count one run twice and read its noise as none.
fn repeated_runs(entries: &[RunEntry], files: &[InputFile]) -> Vec<String> {
    let mut seen: Vec<(usize, Vec<PathBuf>)> = Vec::new();
    let mut warnings = Vec::new();
    for (r, entry) in entries.iter().enumerate() {
        let mut paths: Vec<PathBuf> = files
            .iter()
            .filter(|f| f.run == r)
            .map(|f| std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone()))
            .collect();
        paths.sort();
        if paths.is_empty() {
            continue;
        }
        match seen.iter().find(|(_, p)| *p == paths) {
            Some((first, _)) => warnings.push(format!(
                "baseline runs {} and {} read the same file(s) ({} and {}): one run counted twice makes the band's run-to-run noise look smaller than it is",
                first + 1,
                r + 1,
                entries[*first].shown,
                entry.shown
            )),
            None => seen.push((r, paths)),
        }
    }
    warnings
}
