//! `faultgate precheck`: print what an export will look like to the checks, before a gate relies on it.
//!
//! A bad `--policy` is fatal (exit 2 before any file is read), as in `check`. Problems with the trace
//! files themselves are not: they are issues in the output, and any error-level issue makes the exit
//! code 2. Directories are walked like `check` does; with more than one file, each file's block is
//! headed by its path.

use std::io::Write;
use std::path::PathBuf;

use super::args::PrecheckArgs;
use super::{CliError, ExitStatus};
use crate::error::display_path;
use crate::precheck::{Options, precheck_file};

pub(crate) fn run(
    args: &PrecheckArgs,
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    let mut out = std::io::stdout().lock();
    let mut needs_json_results = false;
    if let Some(path) = &args.policy {
        let policy = crate::policy::Policy::from_path(path)?;
        writeln!(out, "policy keys: {}", policy.key_summary())?;
        needs_json_results = policy.needs_json_results();
    }
    let options = Options {
        format: args.format,
        sample: args.sample,
        needs_json_results,
    };
    let files = files(&args.traces, sources)?;
    let mut status = ExitStatus::Pass;
    for file in &files {
        if files.len() > 1 {
            writeln!(out, "file {}", display_path(file))?;
        }
        let result = precheck_file(file, &options);
        out.write_all(result.render().as_bytes())?;
        if result.errors() > 0 {
            status = ExitStatus::Error;
        }
    }
    out.flush()?;
    Ok(status)
}

/// The files to check: directories expanded (sorted, recursively); anything else is kept as given so
/// that a missing or unreadable file is reported as that file's issue.
fn files(paths: &[PathBuf], sources: &crate::ingest::Sources) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let inputs = crate::ingest::expand_inputs(std::slice::from_ref(path), sources)?;
            if let Some(note) = inputs.skipped_note() {
                writeln!(std::io::stderr(), "{note}")?;
            }
            files.extend(inputs.files);
        } else {
            crate::ingest::remote::bind(path, sources.s3_endpoint.as_deref());
            files.push(path.clone());
        }
    }
    Ok(files)
}
