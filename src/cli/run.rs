//! Running the resolved checks over a set of trace paths and collecting one report, shared by `check`,
//! `baseline` and `calibrate`.

use std::io::Write;
use std::path::PathBuf;

use super::Fatal;
use super::args::RunArgs;
use super::selection::Resolved;
use crate::error::display_path;
use crate::report::Report;

/// Reads every file behind `paths` and runs the checks. Per-file no-content warnings go to stderr; if any
/// file cannot be read, every file error is printed and the last one is returned (exit 2), after all
/// files were tried.
pub fn run_paths(paths: &[PathBuf], resolved: &Resolved) -> Result<Report, Fatal> {
    let files = crate::ingest::expand_paths(paths)?;
    if let Some(bar) = &resolved.progress {
        bar.start(&files);
    }
    let outcomes = crate::pipeline::run_files(&files, &resolved.settings);
    if let Some(bar) = &resolved.progress {
        bar.clear();
    }
    let mut report = Report {
        judge: resolved.judge.clone(),
        checks: resolved.check_names.clone(),
        redaction: resolved.redaction_name.to_string(),
        batches: Vec::new(),
        failing_steps: Vec::new(),
    };
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(file) => {
                if file.without_content > 0 {
                    warnings.push(format!(
                        "warning: {} trace(s) in {} carry no content attributes; the judge sees structure only",
                        file.without_content,
                        display_path(&file.path)
                    ));
                }
                report.batches.extend(file.batches);
                let room = resolved
                    .settings
                    .failing_steps
                    .saturating_sub(report.failing_steps.len());
                report
                    .failing_steps
                    .extend(file.failing_steps.into_iter().take(room));
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut stderr = std::io::stderr().lock();
    if let Some((last, rest)) = errors.split_last() {
        for e in rest {
            writeln!(stderr, "faultgate: {e}")?;
        }
        return Err(Fatal(last.clone()));
    }
    for w in &warnings {
        writeln!(stderr, "{w}")?;
    }
    if let Some(judge) = &resolved.settings.context.judge {
        // A judge that failed for good ends the run: its verdicts would be guesses.
        let stats = judge.finish_run().map_err(Fatal)?;
        for line in judge.stats_lines(&stats) {
            writeln!(stderr, "{line}")?;
        }
        if let Some(path) = &resolved.judge_record {
            crate::report::write_atomic(path, judge.record_lines(&report).as_bytes())
                .map_err(|e| Fatal(format!("cannot write output: {e}")))?;
        }
    }
    Ok(report)
}

/// Prints the notes of a resolved run to stderr.
pub fn print_notes(resolved: &Resolved) -> Result<(), Fatal> {
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
pub fn refuse_overwriting_inputs(
    files: &[(&str, Option<&PathBuf>)],
    dirs: &[(&str, Option<&PathBuf>, &[&str])],
    traces: &[PathBuf],
    run: &RunArgs,
    extra: &[Option<&PathBuf>],
) -> Result<(), Fatal> {
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
        return Err(Fatal(format!(
            "--judge-cache {} holds the input {}; refusing to write into it",
            crate::error::display_path(dir),
            crate::error::display_path(input)
        )));
    }
    let outputs: Vec<(&str, &std::path::Path)> =
        outputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    crate::output::refuse_inputs(&outputs, &inputs).map_err(Fatal)
}
