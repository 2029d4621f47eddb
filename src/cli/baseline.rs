//! `faultgate baseline`: check several baseline runs and write the tolerance band they span.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::Fatal;
use super::args::BaselineArgs;
use super::run::{print_notes, run_paths};
use super::selection::resolve;
use crate::gate::{RunSummary, band, repeated_keys_warning};
use crate::report::{parquet, repro, write_atomic};

/// Runs `baseline`; returns 0 once the band is written.
pub fn run(args: &BaselineArgs) -> Result<i32, Fatal> {
    let resolved = resolve(&args.run)?;
    print_notes(&resolved)?;
    super::run::refuse_overwriting_inputs(
        &[("--out", Some(&args.out))],
        &[(
            "--parquet",
            args.parquet.as_ref(),
            &[parquet::MATRIX_FILE, parquet::RUNS_FILE],
        )],
        &args.traces,
        &args.run,
        &[],
    )?;
    let mut builder = if args.pass_k {
        band::BandBuilder::with_trials()
    } else {
        band::BandBuilder::new()
    };
    // Per-run clean flags are kept only when their tables are asked for.
    let mut tables = args
        .parquet
        .as_ref()
        .map(|_| parquet::BaselineTables::new());
    for run_path in &args.traces {
        let started = Instant::now();
        // A run may be a directory or archive of many files; it is reduced to its summary at once.
        let report = run_paths(std::slice::from_ref::<PathBuf>(run_path), &resolved)?;
        let summary = RunSummary::from_report(&report);
        drop(report);
        let digest = builder.add_run(&summary);
        if let Some(tables) = &mut tables {
            let shown = repro::display_path(run_path)
                .unwrap_or_else(|| crate::error::display_path(run_path));
            tables.add_run(shown, &summary);
        }
        drop(summary);
        let shown = run_path.to_string_lossy();
        writeln!(
            std::io::stdout(),
            "{}",
            band::run_line(&shown, &digest, started.elapsed().as_secs_f64())
        )?;
        if !digest.repeated_keys.is_empty() {
            writeln!(
                std::io::stderr(),
                "warning: {shown}: {}",
                repeated_keys_warning(&digest.repeated_keys)
            )?;
        }
    }
    let band = builder.finish()?;
    if let Some(note) = band::few_runs_note(band.runs) {
        writeln!(std::io::stderr(), "{note}")?;
    }
    let text = crate::pyjson::to_pretty(&band.to_json_with(args.per_scenario, args.pass_k));
    write_atomic(&args.out, text.as_bytes())
        .map_err(|e| Fatal(format!("cannot write output: {e}")))?;
    writeln!(
        std::io::stdout(),
        "{}",
        band.summary_line(&args.out.to_string_lossy())
    )?;
    if let (Some(dir), Some(tables)) = (&args.parquet, &tables) {
        tables
            .write(dir, &band)
            .map_err(|e| Fatal(format!("cannot write output: {e}")))?;
        writeln!(std::io::stdout(), "parquet written to {}", dir.display())?;
    }
    Ok(0)
}
