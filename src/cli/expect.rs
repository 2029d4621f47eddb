//! `faultgate expect import` and `faultgate expect draft`: writing expectations files for `--expect`.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{CliError, ExitStatus};
use crate::error::display_path;
use crate::expect::draft::{DraftOptions, STRICT_MAJORITY, draft};
use crate::expect::import::import;
use crate::ingest::Format;

/// `faultgate expect`.
#[derive(Args, Debug, Clone)]
pub(crate) struct ExpectArgs {
    #[command(subcommand)]
    pub action: ExpectAction,
}

/// What `faultgate expect` writes.
#[derive(Subcommand, Debug, Clone)]
pub(crate) enum ExpectAction {
    /// Write the expected actions that benchmark exports carry (τ²-bench, τ-bench) as an
    /// expectations file.
    Import {
        /// Benchmark results files (τ²-bench `tasks[].evaluation_criteria.actions`, τ-bench
        /// `info.task.actions`).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Where to write the expectations.
        #[arg(long, value_name = "FILE", default_value = "expect.json")]
        out: PathBuf,
    },
    /// Draft expectations from the state-changing calls baseline runs agree on, with no labels.
    Draft {
        /// Baseline runs of the same scenarios: each a file or a folder.
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<PathBuf>,
        /// Where to write the expectations.
        #[arg(long, value_name = "FILE", default_value = "expect.json")]
        out: PathBuf,
        /// The share of the runs holding a scenario that must agree on a call: more than it, or every
        /// run at 1 (default: a strict majority).
        #[arg(long, value_name = "F", default_value_t = STRICT_MAJORITY, value_parser = share)]
        min_agree: f64,
        /// Trace format of the runs.
        #[arg(long, value_enum, default_value = "auto")]
        format: Format,
        /// A glob of tools that change nothing, besides the default reading verbs (repeatable);
        /// written into the file.
        #[arg(long = "read-only", value_name = "GLOB")]
        read_only: Vec<String>,
        /// A glob of tools that change state whatever their name says (repeatable); written into
        /// the file.
        #[arg(long = "state-changing", value_name = "GLOB")]
        state_changing: Vec<String>,
    },
}

/// `--min-agree`: a share from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f))
        .ok_or_else(|| format!("{text:?} is not a share from 0 to 1"))
}

/// Runs `faultgate expect`.
pub(crate) fn run(
    args: &ExpectArgs,
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    match &args.action {
        ExpectAction::Import { files, out } => {
            refuse_overwrite(out, files)?;
            for file in files {
                crate::ingest::remote::bind(file, sources.s3_endpoint.as_deref());
            }
            let (file, summary) = import(files)?;
            file.write(out)?;
            let mut line = format!(
                "expect import: {} scenario(s), {} expected call(s); {} scenario(s) expect no state-changing call",
                summary.tasks, summary.calls, summary.read_only_tasks
            );
            if !summary.conflicting.is_empty() {
                line.push_str(&format!(
                    "; {} key(s) left out, the exports expect different calls for them: {}",
                    summary.conflicting.len(),
                    shown_keys(&summary.conflicting)
                ));
            }
            writeln!(std::io::stdout(), "{line} -> {}", display_path(out))?;
        }
        ExpectAction::Draft {
            runs,
            out,
            min_agree,
            format,
            read_only,
            state_changing,
        } => {
            refuse_overwrite(out, runs)?;
            for (i, run) in runs.iter().enumerate() {
                if runs[..i].contains(run) {
                    return Err(CliError::Invalid(format!(
                        "{} is given twice: each run is counted once",
                        display_path(run)
                    )));
                }
            }
            let options = DraftOptions {
                min_agree: *min_agree,
                format: *format,
                read_only_tools: read_only.clone(),
                state_changing_tools: state_changing.clone(),
                sources: sources.clone(),
            };
            let mut drafted = draft(runs, &options)?;
            drafted.write(out)?;
            let summary = &drafted.summary;
            let mut line = format!(
                "expect draft: {} scenario(s) in {} run(s): {} drafted with {} expected call(s), {} without agreement",
                summary.scenarios,
                runs.len(),
                summary.drafted,
                summary.calls,
                summary.disagreed.len()
            );
            if !summary.disagreed.is_empty() {
                line.push_str(&format!(" ({})", shown_keys(&summary.disagreed)));
            }
            writeln!(std::io::stdout(), "{line} -> {}", display_path(out))?;
            if runs.len() == 1 {
                writeln!(
                    std::io::stderr(),
                    "note: drafted from one run: every state-changing call it made is expected; give several baseline runs"
                )?;
            }
        }
    }
    Ok(ExitStatus::Pass)
}

/// The first few keys of a list, for a summary line.
fn shown_keys(keys: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = keys
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > SHOWN {
        text.push_str(&format!(", … ({} more)", keys.len() - SHOWN));
    }
    text
}

/// Refuses `--out` when it is one of the inputs.
fn refuse_overwrite(out: &std::path::Path, inputs: &[PathBuf]) -> Result<(), CliError> {
    crate::output::refuse_inputs(&[("--out", out)], inputs).map_err(CliError::Invalid)
}
