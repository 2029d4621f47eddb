//! One run of the checks over trace files, as `check`, `baseline` and `calibrate` make it.
//!
//! The steps they share are [`execute`]'s, in this order: resolve the run flags, refuse output flags
//! given with `--partial`, print the notes about checks that cannot run, read what must fail fast (the
//! band, the labels), refuse outputs that would overwrite an input, list the input files, then either
//! produce the run and write it as a partial, or let the command produce it and write its outputs. A
//! command configures the run through [`RunCommand`]: what it refuses, reads, writes and records, and
//! how it finishes.
//!
//! The parts: the input files and shards (`inputs`), a partial's manifest (`manifest`) and the checks
//! on outputs before any work (`safety`). Producing the verdicts, and what a produced run must satisfy,
//! are the library's ([`crate::run::produce_accepted`]).

mod inputs;
mod manifest;
mod safety;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::run::{InputFile, Produced, SpillTo};
pub(crate) use inputs::Inputs;
pub(crate) use manifest::{
    AGENT_VERSION_SETTING, EXPECTATIONS_SETTING, SLICES_SETTING, expectations_digest,
};
pub(crate) use safety::Outputs;

use super::args::RunArgs;
use super::selection::{Resolved, resolve};
use super::{CliError, ExitStatus};
use crate::partial::{MANIFEST_FILE, OtherInput, VERDICTS_FILE};

/// A command that runs the checks over trace files. [`execute`] runs it; the defaults fit a command
/// that reads nothing before the run and records nothing of its own in a partial.
pub(crate) trait RunCommand {
    /// The subcommand, as a partial records it.
    const NAME: &'static str;
    /// One run per trace argument (`baseline`) instead of one run over all of them.
    const RUN_PER_ARGUMENT: bool = false;
    /// Print the notes about checks that cannot run only after [`RunCommand::prepare`] and the output
    /// checks (as `calibrate` does), not before them.
    const NOTES_LATE: bool = false;
    /// What the command reads before any work (the band, the labels), so that a bad file fails fast.
    type Prepared;

    /// The trace arguments.
    fn traces(&self) -> &[PathBuf];
    /// The run flags.
    fn run_args(&self) -> &RunArgs;
    /// The `--by` keys, read before anything else so that a typo costs no run.
    fn slice_keys(&self) -> &[String] {
        &[]
    }
    /// The output flags, by name and whether they were given, that `--partial` refuses.
    fn outputs_given(&self) -> Vec<(&'static str, bool)>;
    /// Fits the resolved run to the outputs (which reasons to keep, raw keys, failing steps).
    fn configure(&self, _resolved: &mut Resolved) {}
    /// Reads what must fail before any work.
    fn prepare(&self) -> Result<Self::Prepared, CliError>;
    /// The outputs the command writes (`--partial`'s are added) and its other inputs.
    fn outputs(&self) -> Outputs<'_>;
    /// Settings of the command's own that a partial records after the shared ones.
    fn partial_settings(
        &self,
        _prepared: &Self::Prepared,
    ) -> Result<Vec<(&'static str, String)>, CliError> {
        Ok(Vec::new())
    }
    /// Inputs besides the traces that a partial records for the merged run's audit.
    fn other_inputs(&self) -> Result<Vec<OtherInput>, CliError> {
        Ok(Vec::new())
    }
    /// The reproduce command a partial records (none by default).
    fn repro(&self) -> String {
        String::new()
    }
    /// Produces the run and writes the outputs; returns the exit code.
    fn write_outputs(
        &self,
        prepared: Self::Prepared,
        run: &Run<'_>,
    ) -> Result<ExitStatus, CliError>;
}

/// A run whose input files are listed, for [`RunCommand::write_outputs`] to produce.
pub(crate) struct Run<'a> {
    pub resolved: &'a Resolved,
    /// The whole input list's runs, count and digest (its files are in [`Run::share`]).
    pub inputs: &'a Inputs,
    /// The files this shard reads, until [`Run::share`] takes them.
    share: std::sync::Mutex<Vec<InputFile>>,
    /// When the work began (before the input files were listed).
    pub started: Instant,
}

impl Run<'_> {
    /// The input files this shard reads (every file without `--shard`), taken once: a command reads
    /// them in one run, or splits them into its runs, so no second list of a million paths is made.
    pub(crate) fn share(&self) -> Vec<InputFile> {
        std::mem::take(
            &mut *self
                .share
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Produces the run over `files` and holds it to what a produced run must satisfy (file errors,
    /// skipped files, `--strict-input`, the judge's end).
    pub(crate) fn produce(&self, files: Vec<InputFile>) -> Result<Produced, CliError> {
        Ok(crate::run::produce_accepted(
            &self.resolved.plan,
            files,
            None,
        )?)
    }

    /// Where the verdicts are spilled as they are made ([`Produced::spilled`]): `to`, unless a judge
    /// runs (its record is written from the verdicts in memory) or `FAULTGATE_SPILL=off` keeps them in
    /// memory.
    pub(crate) fn spill_to<'s>(&self, to: SpillTo<'s>) -> Option<SpillTo<'s>> {
        let spill = self.resolved.plan.settings.judge.is_none() && spill_allowed();
        spill.then_some(to)
    }
}

/// Runs `command`: the shared steps in their order, and the command's own where it has them.
pub(crate) fn execute<C: RunCommand>(
    command: &C,
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    let args = command.run_args();
    let slices = crate::table::slices::SliceKeys::parse(command.slice_keys())
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    let mut resolved = resolve(args)?;
    resolved.plan.settings.slices = slices.map(std::sync::Arc::new);
    let mut given = command.outputs_given();
    given.push(("--judge-record", resolved.plan.judge_record.is_some()));
    safety::refuse_outputs_with_partial(args.partial.as_ref(), &given)?;
    command.configure(&mut resolved);
    let session_shard = session_shard::<C>(args, &mut resolved)?;
    // `-q` is asked for by scripts that read stderr for warnings: the notes (checks skipped for want of
    // a flag) repeat on every run and say nothing about the traces.
    let notes = !args.quiet;
    if notes && !C::NOTES_LATE {
        print_notes(&resolved)?;
    }
    let prepared = command.prepare()?;
    let mut outputs = command.outputs();
    outputs.dirs.push((
        "--partial",
        args.partial.as_ref(),
        &[MANIFEST_FILE, VERDICTS_FILE],
    ));
    safety::refuse_overwriting_inputs(&outputs, command.traces(), args, sources)?;
    if notes && C::NOTES_LATE {
        print_notes(&resolved)?;
    }
    let started = Instant::now();
    let mut inputs = Inputs::list(command.traces(), C::RUN_PER_ARGUMENT, sources)?;
    // A shard of a session run reads every file (a conversation's turns may sit in any of them), and
    // its partial holds the rows of the files of its share, as a shard of traces reads them.
    let owned: Option<std::collections::HashSet<usize>> = session_shard.map(|(k, n)| {
        let sizes: Vec<u64> = inputs.files.iter().map(|f| f.bytes).collect();
        crate::partial::shard_plan(&sizes, n)
            .swap_remove(k - 1)
            .into_iter()
            .map(|i| inputs.files[i].index)
            .collect()
    });
    let share = inputs.take_share(args.shard.filter(|_| session_shard.is_none()));
    let run = Run {
        resolved: &resolved,
        inputs: &inputs,
        share: std::sync::Mutex::new(share),
        started,
    };
    let Some(dir) = &args.partial else {
        return command.write_outputs(prepared, &run);
    };
    // The verdicts are spilled and the partial's table written from the spill, a batch at a time.
    // A partial is written from the spill as it is: its rows need no counting.
    let spill = run.spill_to(SpillTo {
        dir: None,
        count_rows: false,
    });
    let mut produced = crate::run::produce_accepted(&resolved.plan, run.share(), spill)?;
    if let Some(owned) = &owned {
        produced.keep_files(|f| owned.contains(&f.index));
    }
    let own = command.partial_settings(&prepared)?;
    let settings = manifest::settings_of(C::NAME, args, &resolved, &inputs, &own)?;
    let others = command.other_inputs()?;
    let manifest = manifest::manifest(
        C::NAME,
        settings,
        &resolved,
        &inputs,
        others,
        command.repro(),
    );
    let shard = args.shard.map_or(0, |s| s.0);
    if !crate::ingest::remote::is_url(dir) {
        return manifest::write_partial(dir, manifest, produced, shard);
    }
    // To object storage: written whole in a local folder first, then uploaded, the manifest last.
    let staging = tempfile::Builder::new()
        .prefix("faultgate-partial-")
        .tempdir()?;
    let local = staging.path().join("partial");
    let status = manifest::write_partial(&local, manifest, produced, shard)?;
    crate::ingest::remote::upload_dir(&local, dir, MANIFEST_FILE, sources.s3_endpoint.as_deref())?;
    writeln!(std::io::stderr(), "partial uploaded to {}", dir.display())?;
    Ok(status)
}

/// For `check --unit session --partial`: makes the run one shard of a session run (the whole run
/// without `--shard`) and returns its `(K, N)`; `None` for any other run. Refuses what a session
/// shard cannot be.
fn session_shard<C: RunCommand>(
    args: &RunArgs,
    resolved: &mut Resolved,
) -> Result<Option<(usize, usize)>, CliError> {
    let Some(spill) = &resolved.plan.settings.sessions else {
        return Ok(None);
    };
    if args.partial.is_none() && args.shard.is_none() {
        return Ok(None);
    }
    let refuse = |why: &str| Err(CliError::Invalid(format!("--unit session: {why}")));
    if C::NAME != "check" {
        return refuse(&format!(
            "{} cannot be written as partials or shards yet; run it over every file at once",
            C::NAME
        ));
    }
    if args.partial.is_none() {
        return refuse(
            "--shard K/N needs --partial DIR: a shard's conversations are put together with the other shards' by faultgate merge",
        );
    }
    if resolved.plan.settings.judge.is_some() {
        return refuse(
            "--partial cannot be used with a judge yet: every shard reads every file, and the judge would be asked about the traces of every shard's files",
        );
    }
    let (k, n) = args.shard.unwrap_or((1, 1));
    resolved.plan.settings.sessions = Some(std::sync::Arc::new(spill.for_shard(k, n)));
    Ok(Some((k, n)))
}

/// Prints the notes of a resolved run to stderr.
fn print_notes(resolved: &Resolved) -> Result<(), CliError> {
    let mut stderr = std::io::stderr().lock();
    for note in &resolved.notes {
        writeln!(stderr, "{note}")?;
    }
    Ok(())
}

/// `FAULTGATE_SPILL=off` keeps a run's verdicts in memory instead of spilling them: every output is
/// the same bytes either way, so this is the other side of the comparison the tests make, and a way
/// out for a system whose temporary directory cannot be written.
fn spill_allowed() -> bool {
    std::env::var_os("FAULTGATE_SPILL").is_none_or(|v| v != "off")
}
