//! `faultgate conform`: arguments and the command body.
//!
//! `conform SPEC TRAJECTORY...` prints the text report (see `report`) and returns the worst verdict's
//! exit code: 0 PASS, 1 BLOCK, 2 ERROR, where any BLOCK wins over an ERROR. `--json PATH` also writes the
//! JSON report (to a temporary file beside PATH, then renamed, so a reader never sees half a report).
//! `conform --draft GOOD...` prints a draft spec mined from known-good runs instead. Problems with the
//! command as a whole (unusable spec, unwritable output, unreadable draft input) are [`WorkflowError`]s,
//! which the binary reports as `faultgate: <message>` with exit 2; a bad trajectory is only that file's
//! ERROR verdict.

use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::ExitStatus;
use crate::error::display_path;
use crate::workflow::WorkflowError;
use crate::workflow::draft::draft_spec;
use crate::workflow::event::Event;
use crate::workflow::report::{ConformReport, FileOutcome, FileReport};
use crate::workflow::spec::Workflow;
use crate::workflow::trajectory::read_trajectory;

/// Arguments of `faultgate conform`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConformArgs {
    /// Workflow spec (JSON): mandatory checkpoints, handoff contracts, optional templates.
    #[arg(value_name = "SPEC", required_unless_present = "draft")]
    pub spec: Option<PathBuf>,
    /// Recorded trajectories (JSON Lines), one verdict each.
    #[arg(value_name = "TRAJECTORY", required_unless_present = "draft")]
    pub trajectories: Vec<PathBuf>,
    /// Also write the report as JSON to PATH.
    #[arg(long, value_name = "PATH", conflicts_with = "draft")]
    pub json: Option<PathBuf>,
    /// Print a draft spec mined from known-good trajectories instead of checking.
    #[arg(
        long,
        value_name = "GOOD_TRAJECTORY",
        num_args = 1..,
        conflicts_with_all = ["spec", "trajectories"]
    )]
    pub draft: Vec<PathBuf>,
}

/// Runs `conform`, writing the report (or the draft spec) to `stdout`; returns the worst verdict's exit
/// status.
pub fn run(args: &ConformArgs, stdout: &mut dyn Write) -> Result<ExitStatus, WorkflowError> {
    let ConformArgs {
        spec,
        trajectories,
        json,
        draft,
    } = args;
    if !draft.is_empty() {
        return run_draft(draft, stdout);
    }
    let Some(spec_path) = spec else {
        return Err(WorkflowError::Usage(
            "conform needs a SPEC and at least one TRAJECTORY (or --draft GOOD_TRAJECTORY...)"
                .into(),
        ));
    };
    if trajectories.is_empty() {
        return Err(WorkflowError::Usage(
            "conform needs at least one TRAJECTORY after the SPEC".into(),
        ));
    }
    if let Some(path) = json {
        check_output_path(path)?;
        let inputs: Vec<PathBuf> = std::iter::once(spec_path.clone())
            .chain(trajectories.iter().cloned())
            .collect();
        crate::output::refuse_inputs(&[("--json", path)], &inputs).map_err(WorkflowError::Usage)?;
    }
    let workflow = Workflow::load(spec_path)?;
    let files: Vec<FileReport> = trajectories
        .par_iter()
        .map(|path| conform_file(&workflow, path))
        .collect();
    let report = ConformReport::new(display_path(spec_path), &workflow, files);
    let (text, digest) = report.render_text();
    if let Some(path) = json {
        let body = crate::compat::json::to_pretty(&report.to_json(&digest)) + "\n";
        write_atomically(path, body.as_bytes())?;
    }
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(WorkflowError::Output)?;
    Ok(report.overall().into())
}

/// Reads and replays one trajectory; an unreadable or malformed file is that file's ERROR verdict.
pub fn conform_file(workflow: &Workflow, path: &Path) -> FileReport {
    let shown = display_path(path);
    match read_trajectory(path) {
        Ok(trajectory) => FileReport::replay(shown, workflow, &trajectory),
        Err(e) => FileReport {
            path: shown,
            outcome: FileOutcome::BadInput {
                detail: e.to_string(),
            },
        },
    }
}

fn run_draft(paths: &[PathBuf], stdout: &mut dyn Write) -> Result<ExitStatus, WorkflowError> {
    let runs: Vec<Vec<Event>> = paths
        .iter()
        .map(|path| {
            read_trajectory(path)
                .map(|t| t.events)
                .map_err(|e| WorkflowError::Trajectory {
                    path: path.clone(),
                    message: e.to_string(),
                })
        })
        .collect::<Result<_, _>>()?;
    let slices: Vec<&[Event]> = runs.iter().map(Vec::as_slice).collect();
    let spec = draft_spec(&slices);
    if spec.mandatory_checkpoints.is_empty() && spec.handoff_contracts.is_empty() {
        return Err(WorkflowError::Usage(
            "nothing to draft: no checkpoint precedes an action in every run and no handoff was recorded"
                .into(),
        ));
    }
    let value =
        serde_json::to_value(&spec).map_err(|e| WorkflowError::Output(std::io::Error::other(e)))?;
    let text = crate::compat::json::to_pretty(&value) + "\n";
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(WorkflowError::Output)?;
    Ok(ExitStatus::Pass)
}

fn check_output_path(path: &Path) -> Result<(), WorkflowError> {
    let raw = path.to_string_lossy();
    if raw.ends_with('/') || path.is_dir() {
        return Err(WorkflowError::Output(std::io::Error::other(format!(
            "--json {} is a directory, not a file",
            display_path(path)
        ))));
    }
    Ok(())
}

/// Writes through [`crate::output::write_atomic`]: never over a non-regular file, never via a guessable
/// temp name.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WorkflowError> {
    crate::output::write_atomic(path, bytes).map_err(WorkflowError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, Parser)]
    struct Conform {
        #[command(flatten)]
        args: ConformArgs,
    }

    fn parse(argv: &[&str]) -> Result<ConformArgs, clap::Error> {
        Conform::try_parse_from(std::iter::once("conform").chain(argv.iter().copied()))
            .map(|c| c.args)
    }

    #[test]
    fn arguments_are_well_formed() {
        Conform::command().debug_assert();
    }

    #[test]
    fn spec_then_trajectories_or_draft_alone() {
        let args = parse(&["spec.json", "a.jsonl", "b.jsonl", "--json", "out.json"]).unwrap();
        assert_eq!(args.spec, Some(PathBuf::from("spec.json")));
        assert_eq!(args.trajectories.len(), 2);
        assert_eq!(args.json, Some(PathBuf::from("out.json")));
        let args = parse(&["--draft", "good1.jsonl", "good2.jsonl"]).unwrap();
        assert_eq!(args.draft.len(), 2);
        assert!(args.spec.is_none());
        assert!(parse(&["spec.json"]).is_err(), "a spec needs trajectories");
        assert!(parse(&[]).is_err());
        assert!(parse(&["spec.json", "a.jsonl", "--draft", "g.jsonl"]).is_err());
    }
}
