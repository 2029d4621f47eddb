//! A partial's manifest: the settings that decide the run's verdicts, what the partial covers, and
//! writing the partial with its input files' digests.

use std::io::Write;
use std::path::PathBuf;

use super::inputs::Inputs;
use crate::cli::args::RunArgs;
use crate::cli::selection::Resolved;
use crate::cli::{CliError, ExitStatus};
use crate::error::display_path;
use crate::partial::{FileEntry, FileEntryNotes, Manifest, OtherInput, PartialWriter, Setting};
use crate::report::render::repro;
use crate::report::steps::TraceSteps;
use crate::run::Produced;

/// The setting that records `--agent-version` (masked) in a partial.
pub(crate) const AGENT_VERSION_SETTING: &str = "agent version";
pub(crate) use crate::partial::SLICES_SETTING;

/// The setting that records the SHA-256 of `--expect`'s file in a partial.
pub(crate) const EXPECTATIONS_SETTING: &str = "expectations";

/// The SHA-256 of the run's `--expect` file; `None` without one.
pub(crate) fn expectations_digest(args: &RunArgs) -> Result<Option<String>, CliError> {
    args.expect
        .as_deref()
        .map(|p| {
            crate::digest::sha256_file(p).map_err(|source| CliError::Read {
                path: display_path(p),
                source,
            })
        })
        .transpose()
}

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
        ("checks", resolved.plan.check_names.join(",")),
        ("judge", resolved.plan.judge.clone()),
        ("redaction", resolved.plan.redaction_name.to_string()),
        ("format", format!("{:?}", args.format).to_lowercase()),
        ("policy", digest(&args.policy)?),
        ("golden", digest(&args.golden)?),
        (
            "outcomes",
            if args.recorded_outcomes() {
                crate::golden::RECORDED.to_string()
            } else {
                digest(&args.outcomes)?
            },
        ),
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
    if let Some(version) = resolved.plan.masked_agent_version() {
        settings.push((AGENT_VERSION_SETTING, version));
    }
    if let Some(name) = &args.outcome_score {
        settings.push(("outcome score", name.clone()));
    }
    // Recorded only with --by: the partial's table then has its `slice` column.
    if let Some(keys) = &resolved.plan.settings.slices {
        settings.push((SLICES_SETTING, keys.names().join(",")));
    }
    if let Some(digest) = expectations_digest(args)? {
        settings.push((EXPECTATIONS_SETTING, digest));
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

/// Writes what a run produced as a partial into `dir`, with the input files' digests. The verdict
/// table is streamed from the run's spill when it has one, a batch at a time; each file keeps its
/// path and a few counters ([`FileEntry`]) until the manifest is written.
pub(crate) fn write_partial(
    dir: &std::path::Path,
    manifest: Manifest,
    produced: Produced,
    shard: usize,
) -> Result<ExitStatus, CliError> {
    use rayon::prelude::*;
    let Produced {
        files,
        batches,
        spilled,
        notes,
        judge_usage,
        named_ids,
        sessions: _,
        tail,
    } = produced;
    // The first file that cannot be read fails the partial before anything is written.
    let digests: Vec<[u8; 32]> = files
        .par_iter()
        .map(|f| {
            let read = |source| CliError::Read {
                path: display_path(&f.path),
                source,
            };
            let hex = crate::ingest::stream::sha256(&f.path).map_err(read)?;
            crate::partial::parse_sha256(&hex)
                .ok_or_else(|| read(std::io::Error::other("not a SHA-256")))
        })
        .collect::<Result<_, CliError>>()?;
    // Each file's rows; the traces merged across files go with the last file, where a run over all
    // of them reports them, unless a shard of a session run keeps them apart (after every file).
    let mut rows = vec![0usize; files.len()];
    let last = if tail.is_some() {
        files.len()
    } else {
        files.len().saturating_sub(1)
    };
    let mut writer = PartialWriter::new(dir, manifest.verdict_schema())?;
    let total = writer.verdicts(|sink| match &spilled {
        Some(spilled) => spilled.for_each_file_batch(|file, batch| {
            if let Some(count) = rows.get_mut(file.min(last)) {
                *count += batch.len();
            }
            sink.push(batch)
        }),
        None => {
            // A batch past the files' holds a session shard's units.
            for (file, batch) in batches.iter().enumerate() {
                if let Some(count) = rows.get_mut(file) {
                    *count = batch.len();
                }
                sink.push(batch)?;
            }
            Ok::<(), crate::partial::PartialError>(())
        }
    })?;
    drop(batches);
    drop(spilled);
    let mut manifest = manifest;
    manifest.sessions = tail.map(crate::partial::SessionUnits::of);
    manifest.judge_usage = judge_usage;
    manifest.named_ids = named_ids;
    manifest.files.reserve_exact(files.len());
    let mut steps: Vec<Vec<TraceSteps>> = Vec::with_capacity(files.len());
    for (((file, rows), sha), notes) in files.into_iter().zip(rows).zip(digests).zip(notes) {
        let notes = notes.map(|n| *n).unwrap_or_default();
        steps.push(notes.failing_steps);
        manifest.files.push(FileEntry {
            index: file.index,
            run: file.run,
            shard,
            path: repro::display_path(&file.path)
                .unwrap_or_else(|| display_path(&file.path))
                .into_boxed_str(),
            bytes: file.bytes,
            sha256: Some(sha),
            rows,
            notes: FileEntryNotes {
                warnings: notes.warnings,
                skipped: notes.skipped,
                skipped_input: notes.skipped_input,
            }
            .boxed(),
        });
    }
    let files = manifest.files.len();
    let inputs_total = manifest.inputs_total;
    writer.finish(&manifest, &steps)?;
    writeln!(
        std::io::stdout(),
        "partial written to {}: {total} trace(s) from {files} of {inputs_total} input file(s)",
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
        checks: resolved.plan.check_names.clone(),
        judge: resolved.plan.judge.clone(),
        redaction: resolved.plan.redaction_name.to_string(),
        inputs_total: inputs.total,
        runs: inputs.runs.clone(),
        files: Vec::new(),
        other_inputs,
        repro,
        judge_usage: None,
        named_ids: false,
        sessions: None,
    }
}
