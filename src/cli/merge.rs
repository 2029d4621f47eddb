//! `faultgate merge PARTIAL...`: merge the partial results of shards of one run, and write the outputs
//! that run would have written (or, with `--partial`, the merged partial, to merge in levels).
//!
//! The outputs come from the merged verdict table through the code the commands themselves end with
//! ([`super::check::finish`], [`super::baseline::BandRuns`], [`super::calibrate::finish`]), so they are
//! byte-identical to a single run over all the shards' inputs, except for the elapsed time. The
//! verdicts of `check` partials are not held: each partial's table is read once into a spill, which
//! `check::finish` reads back as `check` reads its own.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::args::MergeArgs;
use super::baseline::{BandRuns, BaselineOutputs};
use super::calibrate::{CalibrateOutputs, labels_digest};
use super::{CliError, ExitStatus};
use crate::calibrate::{SplitFilter, read_labels};
use crate::partial::{self, Manifest, Partial, PartialHead};
use crate::redact::Redaction;
use crate::report::finish::Finish;
use crate::report::render::{audit, repro};
use crate::report::spill::{SpillError, SpilledRun};
use crate::report::{Report, VerdictBatch};

/// Runs `merge`; returns the exit code of the command the partials came from.
pub(crate) fn run(
    args: &MergeArgs,
    raw_args: &[String],
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    let started = Instant::now();
    // An unknown key is refused before any partial is read.
    crate::table::slices::SliceKeys::parse(&args.outputs.by)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    let mut heads = Vec::with_capacity(args.partials.len());
    // Partials in object storage are merged from local copies, kept until the merge is done.
    let mut copies = Vec::new();
    for dir in &args.partials {
        if crate::ingest::remote::is_url(dir) {
            let copy = crate::ingest::remote::download_dir(dir, sources.s3_endpoint.as_deref())?;
            heads.push(PartialHead::read(copy.path())?);
            copies.push(copy);
        } else {
            heads.push(PartialHead::read(dir)?);
        }
    }
    // A merged partial and the outputs of `check` partials are written from a spill of the
    // verdicts, read a batch at a time; a band and a calibration are made from the verdicts in memory.
    if let Some(dir) = &args.partial {
        let spill_dir = args.outputs.spill_dir.as_deref().map(PathBuf::as_path);
        let merged = partial::merge_spilled(heads, spill_dir)?;
        warn_split_ids(&merged.split_ids)?;
        refuse_flags(args, &merged.manifest.command)?;
        refuse_slices(args, &merged.manifest)?;
        let rows = merged.write(dir)?;
        writeln!(
            std::io::stdout(),
            "partial written to {}: {rows} trace(s) from {} of {} input file(s)",
            dir.display(),
            merged.manifest.files.len(),
            merged.manifest.inputs_total
        )?;
        return Ok(ExitStatus::Pass);
    }
    match heads.first().map(|h| h.manifest.command.as_str()) {
        Some("check") => return merge_check_spilled(args, raw_args, heads, started),
        Some("baseline") => return merge_baseline_spilled(args, heads),
        _ => {}
    }
    let mut parts = Vec::with_capacity(heads.len());
    for head in heads {
        parts.push((head.dir.clone(), head.into_partial()?));
    }
    let merged = partial::merge(&parts)?;
    warn_split_ids(&merged.split_ids)?;
    let partial = merged.partial;
    let command = partial.manifest.command.clone();
    refuse_flags(args, &command)?;
    refuse_slices(args, &partial.manifest)?;
    // Outputs describe the whole run: every input file must be there.
    partial.require_complete()?;
    match command.as_str() {
        "check" => {
            let report = Report {
                failing_steps: if args.outputs.html.is_some() {
                    partial.failing_steps()
                } else {
                    Vec::new()
                },
                ..report_of(&partial.manifest, partial.rows_of(|_| true), None)
            };
            merge_check(args, raw_args, &partial.manifest, report, None, started)
        }
        "calibrate" => merge_calibrate(args, &partial),
        other => Err(CliError::Invalid(format!(
            "partials of an unknown command '{other}'"
        ))),
    }
}

/// Warns about trace ids read by more than one shard, when there are any.
fn warn_split_ids(ids: &[String]) -> Result<(), CliError> {
    if !ids.is_empty() {
        writeln!(std::io::stderr(), "{}", partial::split_ids_warning(ids))?;
    }
    Ok(())
}

/// Refuses `--by` keys other than those the partials were written with: only a partial written with
/// them holds its traces' slices.
fn refuse_slices(args: &MergeArgs, manifest: &Manifest) -> Result<(), CliError> {
    if args.outputs.by.is_empty() {
        return Ok(());
    }
    let wanted = crate::table::slices::SliceKeys::parse(&args.outputs.by)
        .map_err(|e| CliError::Invalid(e.to_string()))?
        .map(|keys| keys.names().join(","))
        .unwrap_or_default();
    let recorded = manifest
        .settings
        .iter()
        .find(|s| s.name == crate::cli::run::SLICES_SETTING)
        .map(|s| s.value.as_str());
    if recorded == Some(wanted.as_str()) {
        return Ok(());
    }
    let written = recorded.map_or_else(
        || "without --by".to_string(),
        |keys| format!("with --by {}", keys.replace(',', " --by ")),
    );
    Err(CliError::Invalid(format!(
        "--by {}: the partials were written {written}; write them with the same --by to merge by it",
        wanted.replace(',', " --by ")
    )))
}

/// Refuses flags that the partials' command does not take.
fn refuse_flags(args: &MergeArgs, command: &str) -> Result<(), CliError> {
    let outs = &args.outputs;
    let flags: [(&str, bool, &[&str]); 17] = [
        ("--json", outs.json.is_some(), &["check", "calibrate"]),
        ("--markdown", outs.markdown.is_some(), &["check"]),
        ("--audit", outs.audit.is_some(), &["check"]),
        ("--band", outs.band.is_some(), &["check"]),
        ("--gate", outs.gate.is_some(), &["check"]),
        ("--metric", outs.metric.is_some(), &["check"]),
        ("--pass-k", outs.pass_k, &["check", "baseline"]),
        (
            "--parquet",
            outs.parquet.is_some(),
            &["check", "baseline", "calibrate"],
        ),
        ("--junit", outs.junit.is_some(), &["check"]),
        ("--html", outs.html.is_some(), &["check"]),
        ("--otlp-events", outs.otlp.otlp_events.is_some(), &["check"]),
        (
            "--otlp-endpoint",
            outs.otlp.otlp_endpoint.is_some(),
            &["check"],
        ),
        ("--table", outs.table.is_some(), &["check"]),
        ("--spill-dir", outs.spill_dir.is_some(), &["check"]),
        ("--out", args.out.is_some(), &["baseline"]),
        ("--per-scenario", args.per_scenario, &["baseline"]),
        ("--labels", args.labels.is_some(), &["calibrate"]),
    ];
    // A merged partial is made through a spill too, so it takes --spill-dir, whatever the command.
    let spill_dir_flag = |flag: &str| args.partial.is_some() && flag == "--spill-dir";
    if args.partial.is_some()
        && let Some((flag, _, _)) = flags
            .iter()
            .find(|(flag, given, _)| *given && !spill_dir_flag(flag))
    {
        return Err(CliError::Invalid(format!(
            "{flag} cannot be used with --partial: a merged partial is written instead of the outputs"
        )));
    }
    for (flag, given, commands) in flags {
        if given && !commands.contains(&command) && !spill_dir_flag(flag) {
            return Err(CliError::Invalid(format!(
                "{flag} does not apply to {command} partials"
            )));
        }
    }
    Ok(())
}

/// `merge` of `check` partials: the verdicts go to a spill, partial by partial, and the outputs are
/// written from it as `check` writes them from its own.
fn merge_check_spilled(
    args: &MergeArgs,
    raw_args: &[String],
    heads: Vec<PartialHead>,
    started: Instant,
) -> Result<ExitStatus, CliError> {
    let spill_dir = args.outputs.spill_dir.as_deref().map(PathBuf::as_path);
    let merged = partial::merge_spilled(heads, spill_dir)?;
    warn_split_ids(&merged.split_ids)?;
    refuse_flags(args, &merged.manifest.command)?;
    refuse_slices(args, &merged.manifest)?;
    merged.manifest.require_complete()?;
    if merged.sessions.is_some() && args.outputs.html.is_some() {
        return Err(CliError::Invalid(
            "--html: partials of check --unit session hold no failing steps of their conversations; write the HTML report with check --unit session over every file".into(),
        ));
    }
    let failing_steps = if args.outputs.html.is_some() {
        merged.failing_steps()
    } else {
        Vec::new()
    };
    let report = Report {
        failing_steps,
        sessions: merged.sessions.map(std::sync::Arc::new),
        ..report_of(&merged.manifest, Vec::new(), None)
    };
    merge_check(
        args,
        raw_args,
        &merged.manifest,
        report,
        Some(merged.spilled),
        started,
    )
}

/// The report of the files of `run` (every file when `None`) with their rows `batches`, as a run
/// over them reports it.
fn report_of(manifest: &Manifest, batches: Vec<VerdictBatch>, run: Option<usize>) -> Report {
    let files: Vec<usize> = (0..manifest.files.len())
        .filter(|&i| run.is_none_or(|r| manifest.files[i].run == r))
        .collect();
    let entries = files.iter().map(|&i| &manifest.files[i]);
    // A run over every file warns about the session units whose tools were not read after its
    // last file's own warnings.
    let units_warning: Vec<String> = manifest
        .sessions
        .as_ref()
        .and_then(crate::partial::SessionUnits::unread_warning)
        .filter(|_| !files.is_empty())
        .into_iter()
        .collect();
    Report {
        judge: manifest.judge.clone(),
        checks: crate::run::report_checks(&manifest.checks),
        redaction: manifest.redaction.clone(),
        batches,
        input_warnings: crate::run::produce::input_warnings(
            entries
                .clone()
                .filter_map(|f| f.notes.as_deref())
                .map(|n| &n.warnings)
                .chain(std::iter::once(&units_warning)),
            entries
                .clone()
                .filter_map(|f| f.notes.as_deref())
                .map(|n| &n.skipped),
        ),
        // The conversations' ids are the merged partials' (`SpilledMerge::sessions`).
        sessions: None,
        failing_steps: Vec::new(),
        skipped_input: entries.fold(Default::default(), |mut all, f| {
            all.add(f.skipped_input());
            all
        }),
    }
}

/// The outputs of merged `check` partials (`manifest`), from `report` or, when given, `spilled`.
fn merge_check(
    args: &MergeArgs,
    raw_args: &[String],
    manifest: &Manifest,
    report: Report,
    spilled: Option<SpilledRun>,
    started: Instant,
) -> Result<ExitStatus, CliError> {
    let outs = &args.outputs;
    let gating = super::check::prepare(outs)?;
    super::check::refuse_other_expectations(
        &gating,
        outs.band.as_deref(),
        expectations_setting(manifest).as_deref(),
    )?;
    let mut audit_inputs: Vec<audit::Input> = manifest
        .files
        .iter()
        .map(|f| audit::Input {
            role: "traces",
            path: PathBuf::from(&*f.path),
            recorded: Some((f.path.to_string(), f.sha256_hex())),
        })
        .collect();
    if let Some(band) = &outs.band {
        audit_inputs.push(audit::Input {
            role: "band",
            path: band.clone(),
            recorded: None,
        });
    }
    for other in &manifest.other_inputs {
        audit_inputs.push(audit::Input {
            role: match other.role.as_str() {
                "policy" => "policy",
                "golden" => "golden",
                "outcomes" => "outcomes",
                "judge_checks" => "judge_checks",
                _ => "judge_replay",
            },
            path: PathBuf::from(&other.path),
            recorded: Some((other.path.clone(), other.sha256.clone())),
        });
    }
    let command = format!("{}{}", manifest.repro, gate_flags(args, raw_args));
    super::check::finish(
        outs,
        &gating,
        Finish {
            report,
            spilled,
            judge_usage: manifest.judge_usage.map(crate::run::Usage::reported),
            command,
            audit_inputs,
            started,
            explain: None,
            ids: crate::report::render::terminal::IdColumn::of_run(manifest.named_ids),
            agent_version: manifest
                .settings
                .iter()
                .find(|s| s.name == crate::cli::run::AGENT_VERSION_SETTING)
                .map(|s| s.value.clone()),
            recorded_outcomes: manifest
                .settings
                .iter()
                .any(|s| s.name == "outcomes" && s.value == crate::golden::RECORDED),
        },
    )
}

/// The merge's own flags that a single run's reproduce command carries after the run's flags (the
/// band and how to gate), shell-quoted with display paths, each after a space.
fn gate_flags(args: &MergeArgs, raw_args: &[String]) -> String {
    use clap::CommandFactory;
    let cli = super::args::Cli::command();
    let flags: Vec<String> = cli
        .find_subcommand("merge")
        .map(|sub| {
            sub.get_arguments()
                .filter_map(|a| a.get_long().map(String::from))
                .chain(["help".to_string()])
                .collect()
        })
        .unwrap_or_default();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let partials: Vec<String> = args
        .partials
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    // The subcommand and the partial directories name no input of the run.
    let rest: Vec<String> = raw_args
        .iter()
        .skip(1)
        .filter(|a| !partials.contains(a))
        .cloned()
        .collect();
    repro::command(&rest, &flags)
        .strip_prefix("faultgate")
        .unwrap_or_default()
        .to_string()
}

/// `baseline`'s outputs as the flags of `merge` give them, for partials of `manifest`.
fn baseline_outputs(args: &MergeArgs, manifest: &Manifest) -> Result<BaselineOutputs, CliError> {
    Ok(BaselineOutputs {
        out: args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("band.json")),
        per_scenario: args.per_scenario,
        pass_k: args.outputs.pass_k,
        // A partial holds no trace's measures, so a merged band cannot record them.
        measures: false,
        slices: crate::table::slices::SliceKeys::parse(&args.outputs.by)
            .map_err(|e| CliError::Invalid(e.to_string()))?,
        parquet: args.outputs.parquet.clone(),
        trust: super::check::read_trust(&args.outputs.trust)?,
        agent_version: manifest
            .settings
            .iter()
            .find(|s| s.name == crate::cli::run::AGENT_VERSION_SETTING)
            .map(|s| s.value.clone()),
        expectations: expectations_setting(manifest),
    })
}

/// The SHA-256 of the expectations file the partials were checked against, as their manifest records
/// it; `None` when they ran without `--expect`.
fn expectations_setting(manifest: &Manifest) -> Option<String> {
    manifest
        .settings
        .iter()
        .find(|s| s.name == crate::cli::run::EXPECTATIONS_SETTING)
        .map(|s| s.value.clone())
}

/// A spill that cannot be read back while a band is built from it.
impl From<SpillError> for CliError {
    fn from(e: SpillError) -> CliError {
        CliError::Partial(partial::PartialError::Spill(e))
    }
}

/// `merge` of `baseline` partials: the verdicts go to a spill, partial by partial, and each run's
/// rows are read back from it in turn (a run's files follow each other in input order), so one run's
/// verdicts are held at a time, not every run's.
fn merge_baseline_spilled(
    args: &MergeArgs,
    heads: Vec<PartialHead>,
) -> Result<ExitStatus, CliError> {
    let merged = partial::merge_spilled(heads, None)?;
    warn_split_ids(&merged.split_ids)?;
    let manifest = &merged.manifest;
    refuse_flags(args, &manifest.command)?;
    refuse_slices(args, manifest)?;
    manifest.require_complete()?;
    if manifest.files.windows(2).any(|w| w[0].run > w[1].run)
        || manifest.files.iter().any(|f| f.run >= manifest.runs.len())
    {
        return Err(CliError::Invalid(
            "baseline partials whose files do not follow their runs' order".into(),
        ));
    }
    let outs = baseline_outputs(args, manifest)?;
    let mut runs = BandRuns::new(&outs);
    let mut files = manifest.files.iter();
    let mut file_left = 0;
    let mut run = 0;
    let mut rows: Vec<VerdictBatch> = Vec::new();
    let mut started = Instant::now();
    // Adds the run `run` with the rows gathered, and starts the next.
    let mut next_run = |run: &mut usize, rows: &mut Vec<VerdictBatch>, started: &mut Instant| {
        let batches = std::mem::take(rows);
        runs.add_run(
            &manifest.runs[*run],
            report_of(manifest, batches, Some(*run)),
            *started,
        )?;
        *run += 1;
        *started = Instant::now();
        Ok::<(), CliError>(())
    };
    merged.spilled.for_each_batch(|batch| {
        let mut at = 0;
        while at < batch.len() {
            while file_left == 0 {
                let file = files.next().ok_or_else(|| {
                    CliError::Invalid("the partials hold more rows than they list".into())
                })?;
                while run < file.run {
                    next_run(&mut run, &mut rows, &mut started)?;
                }
                file_left = file.rows;
            }
            let take = file_left.min(batch.len() - at);
            let slice = batch.record_batch().slice(at, take);
            rows.push(VerdictBatch::try_new(slice).map_err(SpillError::from)?);
            at += take;
            file_left -= take;
        }
        Ok::<(), CliError>(())
    })?;
    while run < manifest.runs.len() {
        next_run(&mut run, &mut rows, &mut started)?;
    }
    runs.finish(&outs)
}

fn merge_calibrate(args: &MergeArgs, partial: &Partial) -> Result<ExitStatus, CliError> {
    let setting = |name: &str| {
        partial
            .manifest
            .settings
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.value.clone())
    };
    // Partials of `calibrate --labels recorded` carry their labels: each trace's recorded outcome.
    let recorded = setting("labels").as_deref() == Some(crate::golden::RECORDED);
    let labels = match &args.labels {
        None if recorded => None,
        None => {
            return Err(CliError::Invalid(
                "calibrate partials need --labels: the label file they were made with".into(),
            ));
        }
        Some(path) if recorded && path.as_os_str() == crate::golden::RECORDED => None,
        Some(labels_path) => {
            let digest = labels_digest(labels_path)?;
            if setting("labels").as_deref() != Some(digest.as_str()) {
                return Err(CliError::Invalid(format!(
                    "--labels {} is not the label file the partials were made with",
                    crate::error::display_path(labels_path)
                )));
            }
            Some(read_labels(labels_path).map_err(crate::error::InputError::from)?)
        }
    };
    let split = match setting("split").as_deref() {
        None | Some("none") => None,
        Some(name) => Some(SplitFilter::parse(name)?),
    };
    let redaction = match partial.manifest.redaction.as_str() {
        "off" => Redaction::Off,
        _ => Redaction::Builtin,
    };
    let outs = CalibrateOutputs {
        json: args.outputs.json.clone(),
        parquet: args.outputs.parquet.clone(),
    };
    let report = report_of(&partial.manifest, partial.rows_of(|_| true), None);
    super::calibrate::finish(&report, labels, split, redaction, &outs)
}
