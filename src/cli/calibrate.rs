//! `faultgate calibrate`: score every check against human labels.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use super::args::CalibrateArgs;
use super::run::{
    Inputs, manifest, print_notes, produce, refuse_outputs_with_partial, settings_of, write_partial,
};
use super::selection::resolve;
use super::{CliError, ExitStatus};
use crate::calibrate::{Calibration, LabelSet, SplitFilter, parquet, read_labels, render};
use crate::partial::key_digest;
use crate::redact::Redaction;
use crate::report::{Report, write_atomic};

/// The output flags of `calibrate`, which `merge` takes too.
#[derive(Debug, Clone)]
pub(crate) struct CalibrateOutputs {
    pub json: Option<PathBuf>,
    pub parquet: Option<PathBuf>,
}

/// Runs `calibrate`; exit 0 once the metrics are printed (calibration measures, it does not gate).
pub(crate) fn run(args: &CalibrateArgs) -> Result<ExitStatus, CliError> {
    let mut resolved = resolve(&args.run)?;
    resolved.settings.keep_raw_scenario = true;
    refuse_outputs_with_partial(
        args.run.partial.as_ref(),
        &[
            ("--json", args.json.is_some()),
            ("--parquet", args.parquet.is_some()),
            ("--judge-record", resolved.judge_record.is_some()),
        ],
    )?;
    let labels = read_labels(&args.labels).map_err(crate::error::InputError::from)?;
    let split = args.split.as_deref().map(SplitFilter::parse).transpose()?;
    super::run::refuse_overwriting_inputs(
        &[("--json", args.json.as_ref())],
        &[
            (
                "--parquet",
                args.parquet.as_ref(),
                &[parquet::CHECKS_FILE, parquet::VERDICTS_FILE],
            ),
            (
                "--partial",
                args.run.partial.as_ref(),
                &[crate::partial::MANIFEST_FILE, crate::partial::VERDICTS_FILE],
            ),
        ],
        &args.traces,
        &args.run,
        &[Some(&args.labels)],
    )?;
    print_notes(&resolved)?;
    let inputs = Inputs::list(&args.traces, false)?;
    let produced = produce(inputs.share(args.run.shard), &resolved)?;
    if let Some(dir) = &args.run.partial {
        let extra = [
            ("labels", labels_digest(&args.labels)?),
            (
                "split",
                split
                    .as_ref()
                    .map_or_else(|| "none".into(), |s| s.name.clone()),
            ),
        ];
        let settings = settings_of("calibrate", &args.run, &resolved, &inputs, &extra)?;
        let manifest = manifest(
            "calibrate",
            settings,
            &resolved,
            &inputs,
            Vec::new(),
            String::new(),
        );
        return write_partial(dir, manifest, produced, args.run.shard.map_or(0, |s| s.0));
    }
    let outs = CalibrateOutputs {
        json: args.json.clone(),
        parquet: args.parquet.clone(),
    };
    finish(
        &produced.report(&resolved),
        labels,
        split,
        resolved.settings.redaction,
        &outs,
    )
}

/// The SHA-256 of a label file, which every partial of one calibration shares.
pub(crate) fn labels_digest(path: &std::path::Path) -> Result<String, CliError> {
    crate::digest::sha256_file(path).map_err(|source| CliError::Read {
        path: crate::error::display_path(path),
        source,
    })
}

/// Scores the report's verdicts against the labels and writes the outputs; returns 0.
///
/// The report keeps each trace's raw scenario key as its digest ([`crate::partial::key_digest`]): a
/// verdict is matched by the label key of that digest, and shows the written (redacted) key.
pub(crate) fn finish(
    report: &Report,
    labels: LabelSet,
    split: Option<SplitFilter>,
    redaction: Redaction,
    outs: &CalibrateOutputs,
) -> Result<ExitStatus, CliError> {
    let mut by_digest: HashMap<String, String> = HashMap::new();
    for key in labels
        .labels
        .iter()
        .map(|l| &l.key)
        .chain(labels.splits.keys())
    {
        by_digest
            .entry(key_digest(key))
            .or_insert_with(|| key.clone());
    }
    let mut calibration = Calibration::new(labels);
    calibration.split(split);
    let mut written: Vec<&str> = Vec::with_capacity(report.row_count());
    for result in report.rows() {
        // Labels name raw keys, as golden and outcomes files do; a key no label names matches none
        // (a NUL never starts a label key).
        let raw = match result.raw_scenario() {
            Some(digest) => by_digest
                .get(digest)
                .cloned()
                .unwrap_or_else(|| format!("\0{digest}")),
            None => result.scenario().to_string(),
        };
        for (check, verdict) in report.checks.iter().zip(result.verdicts()) {
            calibration.add_verdict(result.trace_id(), &raw, &check.name, verdict.detected);
        }
        written.push(result.scenario());
    }
    let mut scored = calibration.finish();
    // Scenario keys leave the process masked, like everywhere else; trace ids are not masked.
    let per_row = report.checks.len().max(1);
    for (i, row) in scored.rows.iter_mut().enumerate() {
        let shown = written[i / per_row];
        if row.label_key.as_deref() == Some(row.scenario.as_str()) {
            row.label_key = Some(shown.to_string());
        }
        row.scenario = shown.to_string();
    }
    for key in &mut scored.missing_keys.first {
        *key = redaction.scenario_key(key);
    }

    let mut out = std::io::stdout().lock();
    write!(out, "{}", render::render_table(&scored))?;
    for note in render::notes(&scored) {
        writeln!(out, "{note}")?;
    }
    if let Some(path) = &outs.json {
        let text = crate::report::format::to_pretty(&render::to_wire(&scored));
        write_atomic(path, text.as_bytes()).map_err(CliError::output)?;
        writeln!(out, "report written to {}", path.display())?;
    }
    if let Some(dir) = &outs.parquet {
        parquet::write_parquet(&scored, dir)?;
        writeln!(out, "parquet written to {}", dir.display())?;
    }
    Ok(ExitStatus::Pass)
}
