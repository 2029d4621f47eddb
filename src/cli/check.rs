//! `faultgate check`: the flags of a run over trace files resolved into settings, the run made by the
//! library in one call, from its files to its outputs ([`crate::run::finished`]), and its end turned
//! into an exit code.

use std::io::Write;
use std::path::PathBuf;

use super::args::{CheckArgs, CheckOutputs, RunArgs, TrustArgs};
use super::run::{Outputs, Run, RunCommand, execute};
use super::selection::Resolved;
use super::{CliError, ExitStatus};
use crate::checks::Reasons;
use crate::gate::{BandFile, Budget, GateMode, Trust};
use crate::partial::OtherInput;
use crate::report::finish::{Finish, FinishSettings};
use crate::report::outputs;
use crate::report::render::{parquet, repro, terminal};
use crate::report::run_gate::GateFlags;
pub(crate) use crate::report::run_gate::GateSettings;
use crate::run::SpillTo;
use crate::run::finished::{AuditInputs, Ending, ExplainBaselines, check_and_finish};

impl CheckOutputs {
    /// The test that decides the gate (`--gate`; 0.4.1's band gate when not given).
    fn mode(&self) -> GateMode {
        self.gate.map(GateMode::from).unwrap_or_default()
    }

    /// `--metric pass^k`: the band gate compares pass^k instead of the clean rate.
    fn pass_k_metric(&self) -> bool {
        self.metric.as_deref() == Some("pass^k")
    }

    /// The reasons these outputs print. The JSON report, verdicts.parquet and the evaluation events
    /// print the reason of every verdict, fired or not; Markdown and the audit folder those of verdicts that fired (JUnit and
    /// HTML too); the terminal table and the gate none.
    fn reasons(&self) -> Reasons {
        if self.json.is_some()
            || self.parquet.is_some()
            || self.otlp.otlp_events.is_some()
            || self.otlp.otlp_endpoint.is_some()
        {
            Reasons::All
        } else if self.markdown.is_some()
            || self.audit.is_some()
            || self.junit.is_some()
            || self.html.is_some()
        {
            Reasons::Fired
        } else {
            Reasons::None
        }
    }

    /// How a run with these outputs ends, for [`crate::report::finish`].
    fn finish_settings(&self) -> Result<FinishSettings<'_>, CliError> {
        let slice_keys = crate::table::slices::SliceKeys::parse(&self.by)
            .map_err(|e| CliError::Invalid(e.to_string()))?;
        Ok(FinishSettings {
            files: outputs::Files {
                json: self.json.as_deref(),
                markdown: self.markdown.as_deref(),
                audit: self.audit.as_deref(),
                junit: self.junit.as_deref(),
                html: self.html.as_deref(),
                parquet: self.parquet.as_deref(),
                otlp_events: self.otlp.otlp_events.as_deref(),
                otlp_endpoint: self.otlp.otlp_endpoint.as_deref().map(|url| {
                    (
                        url,
                        self.otlp.otlp_protocol.map(Into::into).unwrap_or_default(),
                    )
                }),
            },
            gate: GateFlags {
                band_path: self.band.as_deref(),
                strict_band: self.strict_band,
                pass_k_metric: self.pass_k_metric(),
                gate_slices: self.gate_slices,
            },
            table: self.table.unwrap_or_default(),
            colour: crate::report::render::colour::enabled(self.color),
            spill_dir: self.spill_dir.as_deref().map(PathBuf::as_path),
            slice_keys,
            pass_k: self.pass_k || self.pass_k_metric(),
        })
    }

    /// The flags given, by name, for refusing them where they do not apply.
    fn given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--json", self.json.is_some()),
            ("--markdown", self.markdown.is_some()),
            ("--audit", self.audit.is_some()),
            ("--band", self.band.is_some()),
            ("--parquet", self.parquet.is_some()),
            ("--junit", self.junit.is_some()),
            ("--html", self.html.is_some()),
            ("--otlp-events", self.otlp.otlp_events.is_some()),
            ("--otlp-endpoint", self.otlp.otlp_endpoint.is_some()),
            ("--pass-k", self.pass_k),
            ("--strict-band", self.strict_band),
            ("--budget", !self.budget.is_empty()),
            ("--budgets", self.budgets.is_some()),
            ("--spill-dir", self.spill_dir.is_some()),
        ]
    }
}

/// Reads `--trust` (clap makes `--min-kappa` come with it).
pub(crate) fn read_trust(args: &TrustArgs) -> Result<Option<(Trust, f64)>, CliError> {
    match (&args.trust, args.min_kappa) {
        (Some(path), Some(min)) => Ok(Some((Trust::read(path)?, min))),
        _ => Ok(None),
    }
}

/// Reads the band file. A file that is no band but reads as traces (a run given to `--band` instead of
/// the band `baseline` made from runs) is named as such, since "the band has no judge" would not
/// say what went wrong.
fn read_band(path: &std::path::Path) -> Result<BandFile, CliError> {
    BandFile::read(path).map_err(|e| match e {
        crate::gate::GateError::MissingKey { path: ref shown, .. }
        | crate::gate::GateError::NotAnObject { path: ref shown } => {
            match crate::ingest::read_path(path, crate::ingest::Format::Auto) {
                Ok((format, batch)) if !batch.is_empty() => CliError::Invalid(format!(
                    "{shown}: this looks like a trace export ({} format, {} trace(s)), not a band; \
                     build a band from baseline runs with `faultgate baseline RUN1 RUN2 --out band.json`",
                    format.name(),
                    batch.len()
                )),
                _ => CliError::from(e),
            }
        }
        other => CliError::from(other),
    })
}

/// The expressions of a `--budgets` file: its `budgets` list of strings.
fn read_budgets(path: &std::path::Path) -> Result<Vec<String>, CliError> {
    let shown = crate::error::display_path(path);
    let bytes = crate::sidefile::read(path).map_err(|e| CliError::Read {
        path: shown.clone(),
        source: e,
    })?;
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|doc| {
            doc.get("budgets")?
                .as_array()?
                .iter()
                .map(|b| b.as_str().map(String::from))
                .collect::<Option<Vec<String>>>()
        })
        .ok_or_else(|| {
            CliError::Invalid(format!(
                "{shown}: expected a JSON object with a \"budgets\" list of expressions, e.g. {{\"budgets\": [\"latency.p95 <= +20%\"]}}"
            ))
        })
}

/// Reads the band and checks the output flags that can be checked before the run.
pub(crate) fn prepare(outs: &CheckOutputs) -> Result<GateSettings, CliError> {
    if let Some(dir) = &outs.spill_dir {
        crate::report::spill::check_dir(dir).map_err(|e| CliError::Invalid(e.to_string()))?;
    }
    // Parsed before the band or a trace is read: a typo in a budget costs no run.
    let mut expressions = outs.budget.clone();
    if let Some(path) = &outs.budgets {
        expressions.extend(read_budgets(path)?);
    }
    let budgets = expressions
        .iter()
        .map(|expression| Budget::parse(expression))
        .collect::<Result<Vec<Budget>, _>>()?;
    let band = outs.band.as_deref().map(read_band).transpose()?;
    if let (Some(band), Some(path)) = (&band, &outs.band)
        && !budgets.is_empty()
    {
        band.require_measures_of(path, &budgets)?;
    }
    let mode = outs.mode();
    let clean_runs = match (&band, &outs.band) {
        (Some(band), Some(path)) if mode != GateMode::Band => {
            Some(band.require_clean_runs(path)?.to_vec())
        }
        _ => None,
    };
    if let Some(json_path) = &outs.json
        && json_path.as_os_str().to_string_lossy().ends_with('/')
    {
        return Err(CliError::Invalid(format!(
            "--json {} names a directory; give a file path",
            json_path.display()
        )));
    }
    Ok(GateSettings {
        band,
        mode,
        clean_runs,
        trust: read_trust(&outs.trust)?,
        budgets,
    })
}

/// Refuses a band built with other expectations than the run's (or with some when the run has none,
/// or the other way round): the band's clean rates would count another check than the run's.
pub(crate) fn refuse_other_expectations(
    gating: &GateSettings,
    band_path: Option<&std::path::Path>,
    run: Option<&str>,
) -> Result<(), CliError> {
    let (Some(band), Some(path)) = (&gating.band, band_path) else {
        return Ok(());
    };
    let shown = crate::error::display_path(path);
    match (band.expectations.as_deref(), run) {
        (None, None) => Ok(()),
        (Some(a), Some(b)) if a == b => Ok(()),
        (Some(_), None) => Err(CliError::Invalid(format!(
            "the band {shown} was built with expectations (baseline --expect); give the same file with --expect"
        ))),
        (None, Some(_)) => Err(CliError::Invalid(format!(
            "the band {shown} was built without expectations; rebuild it with baseline --expect, or run without --expect"
        ))),
        (Some(_), Some(_)) => Err(CliError::Invalid(format!(
            "the band {shown} was built with another expectations file than --expect gives (their SHA-256 differ); rebuild the band with this file"
        ))),
    }
}

/// Runs `check`; returns the exit code (0 clean or gate PASS/INCONCLUSIVE, 1 a check fired or gate
/// FAIL). The run produces its verdict table in memory, as a partial would hold it, and [`finish`]
/// writes the outputs from it, the same code `faultgate merge` ends with.
pub(crate) fn run(
    args: &CheckArgs,
    raw_args: &[String],
    sources: &crate::ingest::Sources,
) -> Result<ExitStatus, CliError> {
    refuse_explain_misuse(args)?;
    execute(
        &Check {
            args,
            raw_args,
            sources,
        },
        sources,
    )
}

/// `check` as a [`RunCommand`]: the command line as typed names the run in its reproduce command.
struct Check<'a> {
    args: &'a CheckArgs,
    raw_args: &'a [String],
    sources: &'a crate::ingest::Sources,
}

impl RunCommand for Check<'_> {
    const NAME: &'static str = "check";
    type Prepared = GateSettings;

    fn traces(&self) -> &[PathBuf] {
        &self.args.traces
    }

    fn run_args(&self) -> &RunArgs {
        &self.args.run
    }

    fn slice_keys(&self) -> &[String] {
        &self.args.outputs.by
    }

    fn outputs_given(&self) -> Vec<(&'static str, bool)> {
        let mut given = self.args.outputs.given();
        given.push(("--explain", !self.args.explain.is_empty()));
        given
    }

    fn configure(&self, resolved: &mut Resolved) {
        // A session run's turns wait on disk where its verdicts spill.
        if let (Some(_), Some(dir)) = (
            &resolved.plan.settings.sessions,
            &self.args.outputs.spill_dir,
        ) {
            resolved.plan.settings.sessions = Some(std::sync::Arc::new(
                crate::sessions::SessionSpill::new(Some(dir.to_path_buf())),
            ));
        }
        if let (Some(_), Some(dir)) = (&resolved.plan.settings.links, &self.args.outputs.spill_dir)
        {
            resolved.plan.settings.links = Some(std::sync::Arc::new(
                crate::sessions::links::LinkRun::new(Some(dir.to_path_buf())),
            ));
        }
        let partial = self.args.run.partial.is_some();
        // A partial keeps every reason, so the merge can write any output. A replay file
        // (`--judge-record`) keeps every judged verdict's reason.
        resolved.plan.settings.reasons = if partial || resolved.plan.judge_record.is_some() {
            Reasons::All
        } else {
            self.args.outputs.reasons()
        };
        // An explanation names the reason of the check that fired, and so does the table of failing
        // rows; no output without one prints a reason, so keeping fired reasons changes nothing else.
        let table_reasons = self.args.outputs.table == Some(terminal::TableRows::Failing);
        if (!self.args.explain.is_empty() || table_reasons)
            && resolved.plan.settings.reasons == Reasons::None
        {
            resolved.plan.settings.reasons = Reasons::Fired;
        }
        // A partial keeps the failing traces' steps too, so the merge can write the HTML report.
        if self.args.outputs.html.is_some() || partial {
            resolved.plan.settings.failing_steps = crate::report::steps::MAX_TRACES;
        }
    }

    fn prepare(&self) -> Result<GateSettings, CliError> {
        let gating = prepare(&self.args.outputs)?;
        // The file is hashed only when a band is there to compare it with.
        if gating.band.is_some() {
            refuse_other_expectations(
                &gating,
                self.args.outputs.band.as_deref(),
                super::run::expectations_digest(&self.args.run)?.as_deref(),
            )?;
        }
        Ok(gating)
    }

    fn outputs(&self) -> Outputs<'_> {
        let outs = &self.args.outputs;
        Outputs {
            files: vec![
                ("--json", outs.json.as_ref()),
                ("--markdown", outs.markdown.as_ref()),
                ("--otlp-events", outs.otlp.otlp_events.as_ref()),
            ],
            dirs: vec![
                (
                    "--audit",
                    outs.audit.as_ref(),
                    &["verdict.json", "failing_traces.json", "repro.sh"],
                ),
                (
                    "--parquet",
                    outs.parquet.as_ref(),
                    &[
                        parquet::VERDICTS_FILE,
                        parquet::TRACES_FILE,
                        parquet::BUDGETS_FILE,
                    ],
                ),
            ],
            inputs: std::iter::once(outs.band.as_ref())
                .chain(self.args.explain.iter().map(Some))
                .collect(),
        }
    }

    fn other_inputs(&self) -> Result<Vec<OtherInput>, CliError> {
        other_inputs(self.args, self.sources)
    }

    fn repro(&self) -> String {
        let flags = check_long_flags();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        repro::command(self.raw_args, &flags)
    }

    fn write_outputs(&self, gating: GateSettings, run: &Run<'_>) -> Result<ExitStatus, CliError> {
        if let Some(version) = gating.band.as_ref().and_then(|b| b.agent_version.as_ref())
            && run.resolved.plan.settings.agent_version.is_none()
        {
            // Not refused: a candidate folder may hold one version only. The user is told, though,
            // since a folder of several versions is then gated whole against one version's band.
            writeln!(
                std::io::stderr(),
                "note: the band holds agent version {version}'s traces alone (baseline --agent-version); this run checks every trace, of any version (select one with --agent-version)"
            )?;
        }
        let outs = &self.args.outputs;
        let ending = Ending {
            finish: outs.finish_settings()?,
            gating: &gating,
            spill: run.spill_to(SpillTo {
                dir: outs.spill_dir.as_deref().map(PathBuf::as_path),
                count_rows: true,
            }),
            command: self.repro(),
            audit: outs
                .audit
                .is_some()
                .then(|| audit_inputs(self.args, self.sources)),
            explain: (!self.args.explain.is_empty()).then_some(ExplainBaselines {
                runs: &self.args.explain,
                sources: self.sources,
                all: self.args.explain_all,
            }),
            started: run.started,
            recorded_outcomes: self.args.run.recorded_outcomes(),
        };
        let ended = check_and_finish(
            &run.resolved.plan,
            run.share(),
            ending,
            &mut std::io::stdout(),
        )?;
        Ok(ExitStatus::fail_if(ended.failed))
    }
}

/// Refuses `--explain` where it cannot work: with `--partial` (no outputs), without a band (the band
/// names the regressions), with a judge (reading the baseline runs again would ask it again), and
/// `--explain-all` without it.
fn refuse_explain_misuse(args: &CheckArgs) -> Result<(), CliError> {
    if args.explain.is_empty() {
        if args.explain_all {
            return Err(CliError::Invalid(
                "--explain-all needs --explain BASELINE_RUN...".into(),
            ));
        }
        return Ok(());
    }
    if args.run.partial.is_some() {
        return Err(CliError::Invalid(
            "--explain cannot be used with --partial: a partial is written instead of the outputs"
                .into(),
        ));
    }
    if args.outputs.band.is_none() {
        return Err(CliError::Invalid(
            "--explain needs --band: the band names the regressions to explain".into(),
        ));
    }
    if args.run.judge.is_some() {
        return Err(CliError::Invalid(
            "--explain cannot be used with --judge: reading the baseline runs again would ask the judge again".into(),
        ));
    }
    Ok(())
}

/// Finishes a run as `merge` ends it, the outputs and the gate written by the library
/// ([`crate::report::finish`]); returns the exit code.
pub(crate) fn finish(
    outs: &CheckOutputs,
    gating: &GateSettings,
    run: Finish<'_>,
) -> Result<ExitStatus, CliError> {
    let settings = outs.finish_settings()?;
    let ended = crate::report::finish::finish(&settings, gating, run, &mut std::io::stdout())?;
    Ok(ExitStatus::fail_if(ended.failed))
}

/// The long flags of `check`, to resolve abbreviations in the reproduce command as clap did.
pub(crate) fn check_long_flags() -> Vec<String> {
    use clap::CommandFactory;
    let cli = super::args::Cli::command();
    cli.find_subcommand("check")
        .map(|sub| {
            sub.get_arguments()
                .filter_map(|a| a.get_long().map(String::from))
                .chain(["help".to_string()])
                .collect()
        })
        .unwrap_or_default()
}

/// Every input of the run in the audit's order: trace files (a directory lists each file it holds),
/// then band, policy, golden and outcomes when given.
fn audit_inputs<'a>(args: &'a CheckArgs, sources: &'a crate::ingest::Sources) -> AuditInputs<'a> {
    let mut others = Vec::new();
    for (role, path) in [
        ("band", &args.outputs.band),
        ("policy", &args.run.policy),
        ("golden", &args.run.golden),
        (
            "outcomes",
            &args.run.outcomes_file().map(std::path::Path::to_path_buf),
        ),
        ("expect", &args.run.expect),
        ("judge_checks", &args.run.judge_checks),
        ("trust", &args.outputs.trust.trust),
    ] {
        if let Some(path) = path {
            others.push((role, path.clone()));
        }
    }
    // Saved verdicts decide judged results, so the audit fingerprints them like any other input.
    if let Some(path) = args.run.judge_replay() {
        others.push(("judge_replay", path));
    }
    AuditInputs {
        traces: &args.traces,
        sources,
        others,
    }
}

/// The inputs besides the traces, recorded in a partial for the merged run's audit: policy, golden,
/// outcomes, judge_checks and judge_replay when given (the band is the merge's own).
fn other_inputs(
    args: &CheckArgs,
    sources: &crate::ingest::Sources,
) -> Result<Vec<OtherInput>, CliError> {
    let mut others = Vec::new();
    for input in audit_inputs(args, sources).list()? {
        if input.role == "traces" || input.role == "band" {
            continue;
        }
        let sha256 = crate::digest::sha256_file(&input.path).map_err(|source| CliError::Read {
            path: crate::error::display_path(&input.path),
            source,
        })?;
        others.push(OtherInput {
            role: input.role.to_string(),
            path: repro::display_path(&input.path)
                .unwrap_or_else(|| crate::error::display_path(&input.path)),
            sha256,
        });
    }
    Ok(others)
}
