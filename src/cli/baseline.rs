//! `faultgate baseline`: check several baseline runs and write the tolerance band they span.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::Fatal;
use super::args::BaselineArgs;
use super::run::{print_notes, run_paths};
use super::selection::resolve;
use crate::gate::{RunSummary, band, repeated_keys_warning};
use crate::report::write_atomic;

/// Runs `baseline`; returns 0 once the band is written.
pub fn run(args: &BaselineArgs) -> Result<i32, Fatal> {
    let resolved = resolve(&args.run)?;
    print_notes(&resolved)?;
    let mut builder = band::BandBuilder::new();
    for run_path in &args.traces {
        let started = Instant::now();
        // A run may be a directory or archive of many files; it is reduced to its summary at once.
        let report = run_paths(std::slice::from_ref::<PathBuf>(run_path), &resolved)?;
        let digest = builder.add_run(&RunSummary::from_report(&report));
        drop(report);
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
    let text = crate::pyjson::to_pretty(&band.to_json());
    write_atomic(&args.out, text.as_bytes())
        .map_err(|e| Fatal(format!("cannot write output: {e}")))?;
    writeln!(
        std::io::stdout(),
        "{}",
        band.summary_line(&args.out.to_string_lossy())
    )?;
    Ok(0)
}
