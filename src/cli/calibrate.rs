//! `faultgate calibrate`: score every check against human labels.

use std::io::Write;

use super::Fatal;
use super::args::CalibrateArgs;
use super::run::{print_notes, run_paths};
use super::selection::resolve;
use crate::calibrate::{Calibration, CalibrationReport, SplitFilter, parquet, read_labels, render};
use crate::redact::Redaction;
use crate::report::write_atomic;

/// Runs `calibrate`; exit 0 once the metrics are printed (calibration measures, it does not gate).
pub fn run(args: &CalibrateArgs) -> Result<i32, Fatal> {
    let mut resolved = resolve(&args.run)?;
    resolved.settings.keep_raw_scenario = true;
    let labels = read_labels(&args.labels).map_err(crate::error::InputError::from)?;
    let split = args.split.as_deref().map(SplitFilter::parse).transpose()?;
    super::run::refuse_overwriting_inputs(
        &[("--json", args.json.as_ref())],
        &[(
            "--parquet",
            args.parquet.as_ref(),
            &[parquet::CHECKS_FILE, parquet::VERDICTS_FILE],
        )],
        &args.traces,
        &args.run,
        &[Some(&args.labels)],
    )?;
    print_notes(&resolved)?;
    let report = run_paths(&args.traces, &resolved)?;
    let mut calibration = Calibration::new(labels);
    calibration.split(split);
    for result in report.rows() {
        // Labels name raw keys, as golden and outcomes files do; only written keys are masked.
        let raw = result.raw_scenario().unwrap_or(result.scenario());
        for (check, verdict) in report.checks.iter().zip(result.verdicts()) {
            calibration.add_verdict(result.trace_id(), raw, check, verdict.detected);
        }
    }
    let mut scored = calibration.finish();
    mask_keys(&mut scored, resolved.settings.redaction);

    let mut out = std::io::stdout().lock();
    write!(out, "{}", render::render_table(&scored))?;
    for note in render::notes(&scored) {
        writeln!(out, "{note}")?;
    }
    if let Some(path) = &args.json {
        let text = crate::pyjson::to_pretty(&render::to_json(&scored));
        write_atomic(path, text.as_bytes())
            .map_err(|e| Fatal(format!("cannot write output: {e}")))?;
        writeln!(out, "report written to {}", path.display())?;
    }
    if let Some(dir) = &args.parquet {
        parquet::write_parquet(&scored, dir)?;
        writeln!(out, "parquet written to {}", dir.display())?;
    }
    Ok(0)
}

/// Scenario keys leave the process masked, like everywhere else; trace ids are not masked.
fn mask_keys(report: &mut CalibrationReport, redaction: Redaction) {
    for row in &mut report.rows {
        if row.label_key.as_deref() == Some(row.scenario.as_str()) {
            row.label_key = Some(redaction.scenario_key(&row.scenario));
        }
        row.scenario = redaction.scenario_key(&row.scenario);
    }
    for key in &mut report.missing_keys.first {
        *key = redaction.scenario_key(key);
    }
}
