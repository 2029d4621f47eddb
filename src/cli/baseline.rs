//! `faultgate baseline`: check several baseline runs and write the tolerance band they span.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::args::BaselineArgs;
use super::run::{
    Inputs, manifest, print_notes, produce, refuse_outputs_with_partial, settings_of, write_partial,
};
use super::selection::resolve;
use super::{CliError, ExitStatus};
use crate::gate::BandBuilder;
use crate::partial::RunEntry;
use crate::report::gate_input::run_summary;
use crate::report::gate_lines::{band_line, few_runs_note, repeated_keys_warning, run_line};
use crate::report::{Report, parquet, write_atomic};

/// The output flags of `baseline`, which `merge` takes too.
#[derive(Debug, Clone)]
pub(crate) struct BaselineOutputs {
    pub out: PathBuf,
    pub per_scenario: bool,
    pub pass_k: bool,
    pub parquet: Option<PathBuf>,
}

/// The band being built, one run at a time: by a baseline over its runs, or by a merge over the runs
/// of its partials, with the same code.
pub(crate) struct BandRuns {
    builder: BandBuilder,
    /// Per-run clean flags, kept only when their tables are asked for.
    tables: Option<parquet::BaselineTables>,
}

impl BandRuns {
    pub(crate) fn new(outs: &BaselineOutputs) -> BandRuns {
        BandRuns {
            builder: if outs.pass_k {
                BandBuilder::with_trials()
            } else {
                BandBuilder::new()
            },
            tables: outs
                .parquet
                .as_ref()
                .map(|_| parquet::BaselineTables::new()),
        }
    }

    /// Adds one run's report, reduced to its summary at once, and prints its line.
    pub(crate) fn add_run(
        &mut self,
        run: &RunEntry,
        report: Report,
        started: Instant,
    ) -> Result<(), CliError> {
        let summary = run_summary(&report);
        drop(report);
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
        let band = self.builder.finish()?;
        if let Some(note) = few_runs_note(band.runs) {
            writeln!(std::io::stderr(), "{note}")?;
        }
        let text =
            crate::report::format::to_pretty(&band.to_wire_with(outs.per_scenario, outs.pass_k));
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
pub(crate) fn run(args: &BaselineArgs) -> Result<ExitStatus, CliError> {
    let resolved = resolve(&args.run)?;
    refuse_outputs_with_partial(
        args.run.partial.as_ref(),
        &[
            ("--parquet", args.parquet.is_some()),
            ("--per-scenario", args.per_scenario),
            ("--pass-k", args.pass_k),
            ("--judge-record", resolved.judge_record.is_some()),
        ],
    )?;
    print_notes(&resolved)?;
    let out = args.run.partial.is_none().then_some(&args.out);
    super::run::refuse_overwriting_inputs(
        &[("--out", out)],
        &[
            (
                "--parquet",
                args.parquet.as_ref(),
                &[parquet::MATRIX_FILE, parquet::RUNS_FILE],
            ),
            (
                "--partial",
                args.run.partial.as_ref(),
                &[crate::partial::MANIFEST_FILE, crate::partial::VERDICTS_FILE],
            ),
        ],
        &args.traces,
        &args.run,
        &[],
    )?;
    let inputs = Inputs::list(&args.traces, true)?;
    if let Some(dir) = &args.run.partial {
        let produced = produce(inputs.share(args.run.shard), &resolved)?;
        let settings = settings_of("baseline", &args.run, &resolved, &inputs, &[])?;
        let manifest = manifest(
            "baseline",
            settings,
            &resolved,
            &inputs,
            Vec::new(),
            String::new(),
        );
        return write_partial(dir, manifest, produced, args.run.shard.map_or(0, |s| s.0));
    }
    let outs = BaselineOutputs {
        out: args.out.clone(),
        per_scenario: args.per_scenario,
        pass_k: args.pass_k,
        parquet: args.parquet.clone(),
    };
    let mut runs = BandRuns::new(&outs);
    let share = inputs.share(args.run.shard);
    for (r, run) in inputs.runs.iter().enumerate() {
        let started = Instant::now();
        // A run may be a directory or archive of many files; it is read, then reduced, alone.
        let files = share.iter().filter(|f| f.run == r).cloned().collect();
        let produced = produce(files, &resolved)?;
        runs.add_run(run, produced.report(&resolved), started)?;
    }
    runs.finish(&outs)
}
