//! A partial's manifest: the settings that decide the run's verdicts, what the partial covers, and
//! writing the partial with its input files' digests.

use std::io::Write;
use std::path::PathBuf;

use super::inputs::Inputs;
use super::produce::{FileNotes, Produced};
use crate::cli::args::RunArgs;
use crate::cli::selection::Resolved;
use crate::cli::{CliError, ExitStatus};
use crate::error::display_path;
use crate::partial::{FileEntry, Manifest, OtherInput, Partial, Setting};
use crate::report::{VerdictBatch, repro};

/// The setting that records `--agent-version` (masked) in a partial.
pub(crate) const AGENT_VERSION_SETTING: &str = "agent version";

/// The settings that decide a run's verdicts, as a partial records them.
pub(crate) fn settings_of(
    command: &str,
    args: &RunArgs,
    resolved: &Resolved,
    inputs: &Inputs,
    extra: &[(&str, String)],
) -> Result<Vec<Setting>, CliError> {
    let digest = |path: &Option<PathBuf>| -> Result<String, CliError> {
        match path {
            Some(p) => crate::digest::sha256_file(p).map_err(|source| CliError::Read {
                path: display_path(p),
                source,
            }),
            None => Ok("none".to_string()),
        }
    };
    let mut settings = vec![
        ("tool version", env!("CARGO_PKG_VERSION").to_string()),
        ("command", command.to_string()),
        ("input list", inputs.digest.clone()),
        ("checks", resolved.check_names.join(",")),
        ("judge", resolved.judge.clone()),
        ("redaction", resolved.redaction_name.to_string()),
        ("format", format!("{:?}", args.format).to_lowercase()),
        ("policy", digest(&args.policy)?),
        ("golden", digest(&args.golden)?),
        ("outcomes", digest(&args.outcomes)?),
        ("workflow", digest(&args.workflow)?),
        ("judge checks", digest(&args.judge_checks)?),
        ("judge replay", digest(&args.judge_replay())?),
        (
            "judge max calls",
            args.judge_max_calls
                .map_or_else(|| "none".to_string(), |n| n.to_string()),
        ),
    ];
    // Recorded only when given, so that the partials of a run over every version read as before.
    if let Some(version) = resolved.masked_agent_version() {
        settings.push((AGENT_VERSION_SETTING, version));
    }
    settings.extend(extra.iter().map(|(n, v)| (*n, v.clone())));
    Ok(settings
        .into_iter()
        .map(|(name, value)| Setting {
            name: name.to_string(),
            value,
        })
        .collect())
}

/// Writes what a run produced as a partial into `dir`, with the input files' digests.
pub(crate) fn write_partial(
    dir: &std::path::Path,
    manifest: Manifest,
    produced: Produced,
    shard: usize,
) -> Result<ExitStatus, CliError> {
    use rayon::prelude::*;
    let digests: Vec<Result<String, CliError>> = produced
        .files
        .par_iter()
        .map(|f| {
            crate::ingest::stream::sha256(&f.path).map_err(|source| CliError::Read {
                path: display_path(&f.path),
                source,
            })
        })
        .collect();
    let mut manifest = manifest;
    manifest.judge_usage = produced.judge_usage;
    let none = FileNotes::default();
    for (((file, batch), sha), notes) in produced
        .files
        .iter()
        .zip(&produced.batches)
        .zip(digests)
        .zip(&produced.notes)
    {
        let notes = notes.as_deref().unwrap_or(&none);
        manifest.files.push(FileEntry {
            warnings: notes.warnings.clone(),
            skipped: notes.skipped.clone(),
            skipped_input: notes.skipped_input,
            index: file.index,
            run: file.run,
            shard,
            path: repro::display_path(&file.path).unwrap_or_else(|| display_path(&file.path)),
            bytes: file.bytes,
            sha256: sha?,
            rows: batch.len(),
        });
    }
    let rows: usize = produced.batches.iter().map(VerdictBatch::len).sum();
    let files = manifest.files.len();
    let total = manifest.inputs_total;
    let partial = Partial {
        manifest,
        batches: produced.batches,
        steps: produced
            .notes
            .into_iter()
            .map(|n| n.map(|n| n.failing_steps).unwrap_or_default())
            .collect(),
    };
    partial.write(dir)?;
    writeln!(
        std::io::stdout(),
        "partial written to {}: {rows} trace(s) from {files} of {total} input file(s)",
        dir.display()
    )?;
    Ok(ExitStatus::Pass)
}

/// A manifest with no file yet.
pub(crate) fn manifest(
    command: &str,
    settings: Vec<Setting>,
    resolved: &Resolved,
    inputs: &Inputs,
    other_inputs: Vec<OtherInput>,
    repro: String,
) -> Manifest {
    Manifest {
        format: crate::partial::FORMAT.to_string(),
        command: command.to_string(),
        settings,
        checks: resolved.check_names.clone(),
        judge: resolved.judge.clone(),
        redaction: resolved.redaction_name.to_string(),
        inputs_total: inputs.total,
        runs: inputs.runs.clone(),
        files: Vec::new(),
        other_inputs,
        repro,
        judge_usage: None,
    }
}
