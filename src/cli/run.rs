//! Running the resolved checks over a set of trace paths and collecting one report, shared by `check`,
//! `baseline` and `calibrate`.

use std::io::Write;
use std::path::PathBuf;

use super::args::RunArgs;
use super::selection::Resolved;
use super::{CliError, ExitStatus};
use crate::error::display_path;
use crate::partial::{FileEntry, Manifest, OtherInput, Partial, RunEntry, Setting, Usage};
use crate::report::steps::TraceSteps;
use crate::report::{Report, VerdictBatch, repro};

/// One input file of a run: its place in the whole input list, its run (a `baseline` argument) and
/// its size.
#[derive(Debug, Clone)]
pub(crate) struct InputFile {
    pub index: usize,
    pub run: usize,
    pub path: PathBuf,
    pub bytes: u64,
    /// Found by walking a folder (not named, nor matched by a pattern): a file there that holds no
    /// traces is skipped with an input warning instead of failing the run.
    pub walked: bool,
}

/// Every input file of a run, in input order, and the runs they belong to.
pub(crate) struct Inputs {
    pub files: Vec<InputFile>,
    pub runs: Vec<RunEntry>,
    /// SHA-256 of the list (runs, paths and sizes): every shard of one run computes the same.
    pub digest: String,
}

impl Inputs {
    /// Lists the files behind `paths`: one run over all of them, or (`per_arg`, for `baseline`) one
    /// run per argument.
    pub(crate) fn list(paths: &[PathBuf], per_arg: bool) -> Result<Inputs, CliError> {
        let groups: Vec<crate::ingest::paths::Inputs> = if per_arg {
            paths
                .iter()
                .map(|p| crate::ingest::expand_inputs(std::slice::from_ref(p)))
                .collect::<Result<_, _>>()?
        } else {
            vec![crate::ingest::expand_inputs(paths)?]
        };
        for group in &groups {
            if let Some(note) = group.skipped_note() {
                writeln!(std::io::stderr(), "{note}")?;
            }
        }
        let runs = if per_arg {
            paths
                .iter()
                .map(|p| RunEntry {
                    arg: p.to_string_lossy().into_owned(),
                    shown: repro::display_path(p).unwrap_or_else(|| display_path(p)),
                })
                .collect()
        } else {
            vec![RunEntry {
                arg: String::new(),
                shown: String::new(),
            }]
        };
        let mut files = Vec::new();
        let mut listing = String::new();
        for (run, group) in groups.into_iter().enumerate() {
            for (path, walked) in group.files.into_iter().zip(group.walked) {
                let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
                listing.push_str(&format!("{run}\t{bytes}\t{}\n", path.to_string_lossy()));
                files.push(InputFile {
                    index: files.len(),
                    run,
                    path,
                    bytes,
                    walked,
                });
            }
        }
        Ok(Inputs {
            files,
            runs,
            digest: crate::digest::sha256_hex(listing.as_bytes()),
        })
    }

    /// The files of shard `k` of `n` ([`crate::partial::shard_plan`]), or all of them.
    pub(crate) fn share(&self, shard: Option<(usize, usize)>) -> Vec<InputFile> {
        let Some((k, n)) = shard else {
            return self.files.clone();
        };
        let sizes: Vec<u64> = self.files.iter().map(|f| f.bytes).collect();
        let plan = crate::partial::shard_plan(&sizes, n);
        plan[k - 1].iter().map(|&i| self.files[i].clone()).collect()
    }
}

/// What running the checks over some input files produced: one verdict batch per file.
pub(crate) struct Produced {
    pub files: Vec<InputFile>,
    pub batches: Vec<VerdictBatch>,
    /// The steps kept of each file's failing traces (for the HTML report).
    pub failing_steps: Vec<Vec<TraceSteps>>,
    /// Each file's input warnings (the run's trace-identity warnings go with its last file).
    pub warnings: Vec<Vec<String>>,
    /// Why each file was skipped, for a walked file that holds no traces.
    pub skipped: Vec<Option<String>>,
    /// Tokens the judge used, when the run has one.
    pub judge_usage: Option<Usage>,
}

/// A run's input warnings, from each file's warnings and skip reasons in input order: what the JSON
/// report's `input_warnings` lists.
pub(crate) fn input_warnings<'a>(
    warnings: impl IntoIterator<Item = &'a Vec<String>>,
    skipped: impl IntoIterator<Item = &'a Option<String>>,
) -> Vec<String> {
    let mut out: Vec<String> = warnings.into_iter().flatten().cloned().collect();
    let skipped: Vec<&str> = skipped.into_iter().flatten().map(String::as_str).collect();
    if !skipped.is_empty() {
        out.push(format!(
            "skipped {} file(s) in the folders given that hold no traces: {}",
            skipped.len(),
            skipped.join("; ")
        ));
    }
    out
}

/// Reads every file and runs the checks. Per-file no-content warnings go to stderr; if any file cannot
/// be read, every file error is printed and the last one is returned (exit 2), after all files were
/// tried. A run that keeps raw scenario keys keeps their digests instead ([`crate::partial`]).
pub(crate) fn produce(files: Vec<InputFile>, resolved: &Resolved) -> Result<Produced, CliError> {
    let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    if let Some(bar) = &resolved.progress {
        bar.start(&paths);
    }
    let mut outcomes = crate::pipeline::run_files(&paths, &resolved.settings);
    // One trace id is one trace across the run's files (see `identity`).
    let shared = crate::pipeline::merge_shared_traces(&paths, &mut outcomes, &resolved.settings)
        .map_err(CliError::from);
    if let Some(bar) = &resolved.progress {
        bar.clear();
    }
    let mut shared = shared?;
    let redaction = resolved.settings.redaction;
    let settings = &resolved.settings;
    let mut batches = Vec::with_capacity(files.len());
    // The steps of the run's first failing traces, per file: a file keeps what is left of the run's
    // room, so a share keeps every step a run over all of it could show.
    let mut failing_steps: Vec<Vec<TraceSteps>> = Vec::with_capacity(files.len());
    let mut file_warnings: Vec<Vec<String>> = Vec::with_capacity(files.len());
    let mut skipped: Vec<Option<String>> = Vec::with_capacity(files.len());
    let mut kept = 0;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let empty = || {
        VerdictBatch::try_new(arrow_array::RecordBatch::new_empty(
            settings.verdict_schema(),
        ))
        .expect("an empty verdict batch")
    };
    for (outcome, input) in outcomes.into_iter().zip(&files) {
        match outcome {
            Ok(file) => {
                if file.without_content > 0 {
                    warnings.push(format!(
                        "warning: {} trace(s) in {} carry no content attributes; the judge sees structure only",
                        file.without_content,
                        display_path(&file.path)
                    ));
                }
                let shown = display_path(&file.path);
                file_warnings.push(
                    file.unread_tools
                        .warning(&shown, redaction)
                        .into_iter()
                        .collect(),
                );
                skipped.push(None);
                batches.push(one_batch(settings, file.batches));
                let room = settings.failing_steps.saturating_sub(kept);
                let steps: Vec<TraceSteps> = file.failing_steps.into_iter().take(room).collect();
                kept += steps.len();
                failing_steps.push(steps);
            }
            Err(e) if input.walked && e.is_not_traces() => {
                file_warnings.push(Vec::new());
                skipped.push(Some(e.short_reason()));
                batches.push(empty());
                failing_steps.push(Vec::new());
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    // Traces merged across files are checked once, after every file; their rows, steps and warnings
    // go with the last file, where a run over all the files reports them.
    if let Some(last) = batches.len().checked_sub(1) {
        let extra = file_warnings.last_mut().expect("one per file");
        extra.append(&mut shared.warnings);
        extra.extend(
            shared
                .unread_tools
                .warning("the traces merged across files", redaction),
        );
        if let Some(merged) = shared.verdicts.take() {
            let both = vec![batches.pop().expect("a last batch"), merged];
            batches.push(one_batch(settings, both));
        }
        let room = settings.failing_steps.saturating_sub(kept);
        failing_steps[last].extend(shared.failing_steps.drain(..).take(room));
    }
    if settings.keep_raw_scenario {
        for batch in &mut batches {
            *batch = crate::partial::digest_raw_keys(batch)
                .map_err(|e| CliError::Invalid(format!("verdict table: {e}")))?;
        }
    }
    let mut stderr = std::io::stderr().lock();
    if let Some((last, rest)) = errors.split_last() {
        for e in rest {
            writeln!(stderr, "faultgate: {e}")?;
        }
        return Err(CliError::Invalid(last.clone()));
    }
    for w in &warnings {
        writeln!(stderr, "{w}")?;
    }
    let run_warnings = input_warnings(&file_warnings, &skipped);
    for w in &run_warnings {
        writeln!(stderr, "warning: {w}")?;
    }
    if batches.iter().all(VerdictBatch::is_empty) && skipped.iter().any(Option::is_some) {
        // Every file found was skipped: a gate that read nothing must not pass.
        return Err(CliError::Invalid(format!(
            "no traces found in {}",
            paths
                .iter()
                .map(|p| display_path(p))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if resolved.strict_input && !run_warnings.is_empty() {
        return Err(CliError::Invalid(format!(
            "--strict-input: {} input warning(s); the run is refused",
            run_warnings.len()
        )));
    }
    let mut judge_usage = None;
    if let Some(judge) = &resolved.settings.judge {
        // A judge that failed for good ends the run: its verdicts would be guesses.
        let stats = judge.finish_run().map_err(CliError::JudgeFailed)?;
        for line in judge.stats_lines(&stats) {
            writeln!(stderr, "{line}")?;
        }
        if let Some(record) = &resolved.judge_record {
            let checks = super::selection::report_checks(&resolved.check_names);
            record
                .add_run(&batches, &checks, &judge.take_verdict_usage(), judge.name())
                .map_err(CliError::output)?;
        }
        let usage = judge.usage_json();
        let count = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
        judge_usage = Some(Usage {
            prompt_tokens: count("prompt_tokens").unwrap_or(0),
            completion_tokens: count("completion_tokens").unwrap_or(0),
        });
    }
    Ok(Produced {
        files,
        batches,
        failing_steps,
        warnings: file_warnings,
        skipped,
        judge_usage,
    })
}

impl Produced {
    /// The report of what was produced.
    pub(crate) fn report(self, resolved: &Resolved) -> Report {
        let warnings = input_warnings(&self.warnings, &self.skipped);
        resolved.report(
            self.batches,
            self.failing_steps.into_iter().flatten().collect(),
            warnings,
        )
    }
}

/// A file's verdict batches as one batch (a partial holds one per file).
fn one_batch(
    settings: &crate::pipeline::RunSettings,
    mut batches: Vec<VerdictBatch>,
) -> VerdictBatch {
    if batches.len() == 1 {
        return batches.pop().expect("one batch");
    }
    arrow_select::concat::concat_batches(
        &settings.verdict_schema(),
        batches.iter().map(VerdictBatch::record_batch),
    )
    .and_then(VerdictBatch::try_new)
    .expect("batches of one verdict schema concatenate")
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
    let replay = args
        .judge
        .as_deref()
        .and_then(|j| j.strip_prefix("replay:"))
        .filter(|f| !f.is_empty())
        .map(PathBuf::from);
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
        ("judge replay", digest(&replay)?),
        (
            "judge max calls",
            args.judge_max_calls
                .map_or_else(|| "none".to_string(), |n| n.to_string()),
        ),
    ];
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
            crate::digest::sha256_file(&f.path).map_err(|source| CliError::Read {
                path: display_path(&f.path),
                source,
            })
        })
        .collect();
    let mut manifest = manifest;
    manifest.judge_usage = produced.judge_usage;
    for ((((file, batch), sha), warnings), skipped) in produced
        .files
        .iter()
        .zip(&produced.batches)
        .zip(digests)
        .zip(&produced.warnings)
        .zip(&produced.skipped)
    {
        manifest.files.push(FileEntry {
            warnings: warnings.clone(),
            skipped: skipped.clone(),
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
        steps: produced.failing_steps,
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
        inputs_total: inputs.files.len(),
        runs: inputs.runs.clone(),
        files: Vec::new(),
        other_inputs,
        repro,
        judge_usage: None,
    }
}

/// Refuses, with a usage error, output flags given together with `--partial` (a partial is written
/// instead of the outputs; `faultgate merge` writes them).
pub(crate) fn refuse_outputs_with_partial(
    partial: Option<&PathBuf>,
    outputs: &[(&str, bool)],
) -> Result<(), CliError> {
    if partial.is_none() {
        return Ok(());
    }
    match outputs.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(CliError::Invalid(format!(
            "{flag} cannot be used with --partial: a partial is written instead of the outputs; give {flag} to faultgate merge"
        ))),
        None => Ok(()),
    }
}

/// Prints the notes of a resolved run to stderr.
pub(crate) fn print_notes(resolved: &Resolved) -> Result<(), CliError> {
    let mut stderr = std::io::stderr().lock();
    for note in &resolved.notes {
        writeln!(stderr, "{note}")?;
    }
    Ok(())
}

/// Refuses, before any work, an output that is one of the run's inputs (by device and inode, so a
/// symlink or a `./` spelling is caught). `outputs` are files; `dirs` are output directories with the
/// file names written into them. The run's side files (policy, golden, outcomes, workflow spec, judged
/// checks, the judge's replay file) are inputs, `--judge-record` is an output, and a `--judge-cache`
/// folder (written into) may not hold an input; `extra` are the command's other inputs (band, labels).
pub(crate) fn refuse_overwriting_inputs(
    files: &[(&str, Option<&PathBuf>)],
    dirs: &[(&str, Option<&PathBuf>, &[&str])],
    traces: &[PathBuf],
    run: &RunArgs,
    extra: &[Option<&PathBuf>],
) -> Result<(), CliError> {
    let mut outputs: Vec<(&str, PathBuf)> = files
        .iter()
        .filter_map(|(flag, path)| path.map(|p| (*flag, p.clone())))
        .collect();
    if let Some(record) = &run.judge_record {
        outputs.push(("--judge-record", record.clone()));
    }
    for (flag, dir, names) in dirs {
        if let Some(dir) = dir {
            outputs.extend(names.iter().map(|name| (*flag, dir.join(name))));
        }
    }
    let cache = run
        .judge_cache
        .as_ref()
        .filter(|_| !run.no_judge_cache)
        .and_then(|dir| Some((dir, std::fs::canonicalize(dir).ok()?)));
    if cache.is_none() && outputs.iter().all(|(_, p)| std::fs::metadata(p).is_err()) {
        return Ok(());
    }
    let mut inputs = crate::ingest::expand_paths(traces)?;
    inputs.extend(run.side_inputs());
    inputs.extend(extra.iter().flatten().map(|p| (*p).clone()));
    if let Some((dir, canonical)) = cache
        && let Some(input) = inputs.iter().find(|input| {
            std::fs::canonicalize(input).is_ok_and(|real| real.starts_with(&canonical))
        })
    {
        return Err(CliError::Invalid(format!(
            "--judge-cache {} holds the input {}; refusing to write into it",
            crate::error::display_path(dir),
            crate::error::display_path(input)
        )));
    }
    let outputs: Vec<(&str, &std::path::Path)> =
        outputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    crate::output::refuse_inputs(&outputs, &inputs).map_err(CliError::Invalid)
}
