//! `faultgate calibrate`: score every check against human labels.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use super::args::{CalibrateArgs, RunArgs};
use super::run::{Outputs, Run, RunCommand, execute};
use super::selection::Resolved;
use super::{CliError, ExitStatus};
use crate::calibrate::{
    Calibration, Label, LabelSet, Location, SplitFilter, parquet, read_labels, render,
};
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
pub(crate) fn run(
    args: &CalibrateArgs,
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    execute(args, sources)
}

impl RunCommand for CalibrateArgs {
    const NAME: &'static str = "calibrate";
    const NOTES_LATE: bool = true;
    /// The labels (`None` for `--labels recorded`, made from the run) and the split to score.
    type Prepared = (Option<LabelSet>, Option<SplitFilter>);

    fn traces(&self) -> &[PathBuf] {
        &self.traces
    }

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    fn outputs_given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--json", self.json.is_some()),
            ("--parquet", self.parquet.is_some()),
        ]
    }

    fn configure(&self, resolved: &mut Resolved) {
        resolved.plan.settings.keep_raw_scenario = true;
    }

    fn prepare(&self) -> Result<Self::Prepared, CliError> {
        let labels = if self.recorded_labels() {
            None
        } else {
            Some(read_labels(&self.labels).map_err(crate::error::InputError::from)?)
        };
        let split = self.split.as_deref().map(SplitFilter::parse).transpose()?;
        Ok((labels, split))
    }

    fn outputs(&self) -> Outputs<'_> {
        Outputs {
            files: vec![("--json", self.json.as_ref())],
            dirs: vec![(
                "--parquet",
                self.parquet.as_ref(),
                &[parquet::CHECKS_FILE, parquet::VERDICTS_FILE],
            )],
            inputs: vec![(!self.recorded_labels()).then_some(&self.labels)],
        }
    }

    fn partial_settings(
        &self,
        (_, split): &Self::Prepared,
    ) -> Result<Vec<(&'static str, String)>, CliError> {
        Ok(vec![
            (
                "labels",
                if self.recorded_labels() {
                    crate::golden::RECORDED.to_string()
                } else {
                    labels_digest(&self.labels)?
                },
            ),
            (
                "split",
                split
                    .as_ref()
                    .map_or_else(|| "none".into(), |s| s.name.clone()),
            ),
        ])
    }

    fn write_outputs(
        &self,
        (labels, split): Self::Prepared,
        run: &Run<'_>,
    ) -> Result<ExitStatus, CliError> {
        let produced = run.produce(run.share())?;
        if let Some(version) = run.resolved.plan.masked_agent_version()
            && produced
                .batches
                .iter()
                .all(crate::report::VerdictBatch::is_empty)
        {
            let why = crate::report::finish::no_trace_of_version(&version);
            return Err(CliError::Invalid(why));
        }
        let outs = CalibrateOutputs {
            json: self.json.clone(),
            parquet: self.parquet.clone(),
        };
        finish(
            &produced.report(&run.resolved.plan),
            labels,
            split,
            run.resolved.plan.settings.redaction,
            &outs,
        )
    }
}

impl CalibrateArgs {
    /// `--labels recorded`: every check is scored against each trace's own recorded outcome.
    fn recorded_labels(&self) -> bool {
        self.labels.as_os_str() == crate::golden::RECORDED
    }
}

/// The labels `--labels recorded` gives: for each trace that recorded an outcome, every check of the run
/// should fire when the trace failed its own evaluation, keyed by trace id (the first row of an id
/// decides it).
pub(crate) fn recorded_labels(report: &Report) -> Result<LabelSet, CliError> {
    let mut set = LabelSet::default();
    let mut seen = std::collections::HashSet::new();
    for (n, row) in report.rows().enumerate() {
        let Some(passed) = row.recorded_outcome() else {
            continue;
        };
        if !seen.insert(row.trace_id()) {
            continue;
        }
        for check in &report.checks {
            set.labels.push(Label {
                key: row.trace_id().to_string(),
                check: check.name.clone(),
                value: !passed,
                location: Location::Entry(n + 1),
            });
        }
    }
    if seen.is_empty() {
        return Err(CliError::Invalid(
            crate::report::finish::NO_RECORDED_OUTCOME.replace("--outcomes", "--labels"),
        ));
    }
    Ok(set)
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
    labels: Option<LabelSet>,
    split: Option<SplitFilter>,
    redaction: Redaction,
    outs: &CalibrateOutputs,
) -> Result<ExitStatus, CliError> {
    let labels = match labels {
        Some(labels) => labels,
        None => recorded_labels(report)?,
    };
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
        let text = crate::report::schema::to_pretty(&render::to_wire(&scored));
        write_atomic(path, text.as_bytes()).map_err(CliError::output)?;
        writeln!(out, "report written to {}", path.display())?;
    }
    if let Some(dir) = &outs.parquet {
        parquet::write_parquet(&scored, dir)?;
        writeln!(out, "parquet written to {}", dir.display())?;
    }
    Ok(ExitStatus::Pass)
}
