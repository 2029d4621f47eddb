//! Output safety, checked before any work: output flags that `--partial` replaces, and outputs that
//! would overwrite one of the run's inputs.

use std::path::PathBuf;

use crate::cli::CliError;
use crate::cli::args::RunArgs;

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

/// What a command writes, and reads besides its traces and side files, for
/// [`refuse_overwriting_inputs`].
pub(crate) struct Outputs<'a> {
    /// Output files, by flag.
    pub files: Vec<(&'static str, Option<&'a PathBuf>)>,
    /// Output directories, by flag, with the names of the files written into each.
    pub dirs: Vec<(&'static str, Option<&'a PathBuf>, &'static [&'static str])>,
    /// The command's other inputs (the band, the labels).
    pub inputs: Vec<Option<&'a PathBuf>>,
}

/// Refuses, before any work, an output that is one of the run's inputs (by device and inode, so a
/// symlink or a `./` spelling is caught). The run's side files (policy, golden, outcomes, workflow
/// spec, judged checks, the judge's replay file) are inputs, `--judge-record` is an output, and a
/// `--judge-cache` folder (written into) may not hold an input.
pub(crate) fn refuse_overwriting_inputs(
    written: &Outputs<'_>,
    traces: &[PathBuf],
    run: &RunArgs,
    sources: &crate::ingest::Sources,
) -> Result<(), CliError> {
    let mut outputs: Vec<(&str, PathBuf)> = written
        .files
        .iter()
        .filter_map(|(flag, path)| path.map(|p| (*flag, p.clone())))
        .collect();
    if let Some(record) = &run.judge_record {
        outputs.push(("--judge-record", record.clone()));
    }
    for (flag, dir, names) in &written.dirs {
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
    let mut inputs = crate::ingest::expand_paths(traces, sources)?;
    inputs.extend(run.side_inputs());
    inputs.extend(written.inputs.iter().flatten().map(|p| (*p).clone()));
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
