//! Clap definitions only: raw flags as the user typed them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::ingest::Format;

#[derive(Parser)]
#[command(
    name = "faultgate",
    version,
    about = "A release gate for AI agents over recorded traces",
    infer_long_args = true,
    // As argparse: a single-valued flag given twice keeps the last value (repeatable ones append).
    args_override_self = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// The S3-compatible store that s3:// inputs are read from (MinIO, Ceph, R2...), e.g.
    /// http://127.0.0.1:9000; overrides AWS_ENDPOINT_URL.
    #[arg(
        help_heading = "Inputs",
        long,
        global = true,
        display_order = 900,
        value_name = "URL"
    )]
    pub s3_endpoint: Option<String>,
    /// Read only the time partitions (year=/month=/day=/hour=/minute= in the path, as the
    /// Collector's S3 exporter writes them) that end after this UTC time, e.g. 2026-11-02T10:00.
    #[arg(
        help_heading = "Inputs",
        long,
        global = true,
        display_order = 900,
        value_name = "TIME"
    )]
    pub since: Option<String>,
    /// Read only the time partitions that start before this UTC time (exclusive), e.g. 2026-11-03.
    #[arg(
        help_heading = "Inputs",
        long,
        global = true,
        display_order = 900,
        value_name = "TIME"
    )]
    pub until: Option<String>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Check traces for known failure modes; with --band, gate them against a baseline.
    // The examples come right under the summary, before the long list of flags.
    #[command(
        before_help = "Examples:\n  \
            faultgate check traces/\n  \
            faultgate check candidate.json --band band.json --json report.json --html report.html",
        help_template = "{about-with-newline}\n{before-help}{usage-heading} {usage}\n\n{all-args}{after-help}"
    )]
    // Boxed: its flags outweigh every other command's, and the enum would be as large.
    Check(Box<CheckArgs>),
    /// Check baseline runs and write the tolerance band they span.
    Baseline(BaselineArgs),
    /// Check that trace files read the way the checks need, before a gate relies on them.
    Precheck(PrecheckArgs),
    /// Replay recorded trajectories against a workflow spec (checkpoints, handoffs, propagation).
    Conform(super::conform::ConformArgs),
    /// Write expectations files for --expect: imported from benchmark exports or drafted from
    /// baseline runs.
    Expect(super::expect::ExpectArgs),
    /// Measure each check against human labels: TPR, TNR, precision, Cohen's kappa.
    Calibrate(CalibrateArgs),
    /// Merge partial results (from --partial) and write the outputs of one run over all their inputs.
    Merge(MergeArgs),
    /// List the checks, or print one check's page.
    Checks {
        /// A check's name: print its page (what it detects, why it matters, an example, its known
        /// limits) instead of the list.
        name: Option<String>,
    },
    /// List the judge specs.
    Judges,
    /// Print a shell completion script (e.g. `faultgate completions bash > /etc/bash_completion.d/faultgate`).
    Completions {
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Print the man page (roff), e.g. `faultgate man > faultgate.1`.
    Man,
}

/// Shells `completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// `--redact` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RedactArg {
    Builtin,
    Presidio,
    Off,
}

/// `--unit`: what one row of the results is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum UnitArg {
    /// One trace.
    Trace,
    /// One conversation: the traces sharing a conversation id, checked as one sequence of steps.
    Session,
}

/// `--gate` tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateArg {
    Band,
    Paired,
    Both,
}

impl From<GateArg> for crate::gate::GateMode {
    fn from(arg: GateArg) -> Self {
        match arg {
            GateArg::Band => Self::Band,
            GateArg::Paired => Self::Paired,
            GateArg::Both => Self::Both,
        }
    }
}

/// `--otlp-protocol` encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OtlpProtocolArg {
    Protobuf,
    Json,
}

impl From<OtlpProtocolArg> for crate::report::render::otlp_events::send::Protocol {
    fn from(arg: OtlpProtocolArg) -> Self {
        match arg {
            OtlpProtocolArg::Protobuf => Self::Protobuf,
            OtlpProtocolArg::Json => Self::Json,
        }
    }
}

/// Flags shared by every command that runs checks.
#[derive(Args, Debug, Clone)]
pub(crate) struct RunArgs {
    /// Checks to run, comma-separated (repeatable); default: all default checks.
    #[arg(help_heading = "Checks", long = "check", value_name = "NAMES")]
    pub check: Vec<String>,
    /// Tool-use policy file.
    #[arg(help_heading = "Checks", long)]
    pub policy: Option<PathBuf>,
    /// Expected answers by scenario key or prompt.
    #[arg(help_heading = "Checks", long)]
    pub golden: Option<PathBuf>,
    /// Recorded outcomes (true / false) by scenario key or prompt; `recorded` takes the outcome each
    /// trace recorded (τ-bench reward, SWE-agent `resolved`, ...; a file of that name is `./recorded`).
    #[arg(help_heading = "Checks", long)]
    pub outcomes: Option<PathBuf>,
    /// The Langfuse score that is a trace's recorded outcome (1 or true passes).
    #[arg(help_heading = "Checks", long, value_name = "NAME")]
    pub outcome_score: Option<String>,
    /// Workflow spec (as for `conform`): runs the workflow check on every trace.
    #[arg(help_heading = "Checks", long, value_name = "SPEC")]
    pub workflow: Option<PathBuf>,
    /// Expected actions by scenario key (from `expect import`, `expect draft` or by hand): runs the
    /// expected_actions check on every trace.
    #[arg(help_heading = "Checks", long, value_name = "FILE")]
    pub expect: Option<PathBuf>,
    /// Trace format of the inputs.
    #[arg(help_heading = "Inputs", long, value_enum, default_value = "auto")]
    pub format: Format,
    /// The unit checked and gated: a trace, or a session (the traces sharing gen_ai.conversation.id,
    /// else Langfuse sessionId, else LangSmith thread metadata, else OpenInference session.id, in
    /// start order, checked as one conversation; traces without one stay units of their own). See
    /// docs/sessions.md.
    #[arg(help_heading = "Inputs", long, value_enum, default_value = "trace")]
    pub unit: UnitArg,
    /// Join the traces a trace's spans link to (OTLP span links: a run continued in another trace)
    /// into it, transitively, and check them as one unit under its id. Not with --unit session,
    /// --partial or --shard. See docs/formats.md.
    #[arg(help_heading = "Inputs", long)]
    pub follow_links: bool,
    /// Masking of PII and secrets in everything written out.
    #[arg(help_heading = "Outputs", long, value_enum, default_value = "builtin")]
    pub redact: RedactArg,
    /// Refuse the run (exit 2) when the input raises a warning: a trace that shows tool activity but
    /// yields no tool step, a span that repeats or clashes across files, a file in a folder that is not
    /// a trace file.
    #[arg(help_heading = "Inputs", long)]
    pub strict_input: bool,
    /// Leave out, each with an input warning naming the file, the byte and the reason, a file or a JSON
    /// line that cannot be read, and read on; the summary and the JSON report count what was left out.
    #[arg(help_heading = "Inputs", long, conflicts_with = "strict_input")]
    pub skip_bad_input: bool,
    /// No progress bar (it is shown on long runs only when stderr is a terminal) and no notes about
    /// checks skipped for want of a flag; the table (see `check --table`), summary, gate lines and
    /// warnings still print.
    #[arg(help_heading = "Outputs", long, short)]
    pub quiet: bool,
    /// Print every warning on stderr, not one line per kind with its count and first example (the
    /// JSON report's input_warnings lists every one either way).
    #[arg(help_heading = "Outputs", long, short)]
    pub verbose: bool,
    /// Check only the traces of this agent version (gen_ai.agent.version on the root, else the last one
    /// seen, else the OTLP resource's service.version); the others, and traces that record no version,
    /// are left out as if absent.
    #[arg(help_heading = "Inputs", long, value_name = "VERSION", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub agent_version: Option<String>,
    /// Judge for judged checks: litellm:<model>, openai:<model> (with --judge-url) or replay:FILE.
    #[arg(help_heading = "Judges", long)]
    pub judge: Option<String>,
    /// Server of a litellm: or openai: judge (an OpenAI-compatible base URL such as http://host:8000/v1).
    #[arg(help_heading = "Judges", long, value_name = "URL")]
    pub judge_url: Option<String>,
    /// Judge calls in flight at once.
    #[arg(help_heading = "Judges", long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub judge_concurrency: u64,
    /// Seconds one judge request may take before it is retried.
    #[arg(help_heading = "Judges", long, value_name = "SECS", default_value_t = 60.0, value_parser = positive_seconds)]
    pub judge_timeout: f64,
    /// Retries of a judge call after a rate limit, server error or network failure.
    #[arg(help_heading = "Judges", long, value_name = "N", default_value_t = 4)]
    pub judge_retries: u32,
    /// Most judge calls one run may make; judged verdicts past it are skipped (not detected).
    #[arg(help_heading = "Judges", long, value_name = "N")]
    pub judge_max_calls: Option<usize>,
    /// Folder of the judge reply cache (default: faultgate/judge under the user's cache directory).
    #[arg(help_heading = "Judges", long, value_name = "DIR")]
    pub judge_cache: Option<PathBuf>,
    /// Neither read nor write the judge reply cache.
    #[arg(help_heading = "Judges", long)]
    pub no_judge_cache: bool,
    /// Custom judged checks: a JSON list of {name, question, budget?}.
    #[arg(help_heading = "Judges", long, value_name = "FILE")]
    pub judge_checks: Option<PathBuf>,
    /// Write the run's judged verdicts here, one JSON line each, for --judge replay:FILE.
    #[arg(help_heading = "Judges", long, value_name = "FILE")]
    pub judge_record: Option<PathBuf>,
    /// Write this run's partial result into DIR, for `faultgate merge`, instead of its outputs.
    #[arg(help_heading = "Scale", long, value_name = "DIR")]
    pub partial: Option<PathBuf>,
    /// Read only shard K of N of the input files (a share balanced by bytes), e.g. 3/8.
    #[arg(help_heading = "Scale", long, value_name = "K/N", value_parser = shard_arg)]
    pub shard: Option<(usize, usize)>,
}

/// `--shard K/N`.
fn shard_arg(text: &str) -> Result<(usize, usize), String> {
    crate::partial::parse_shard(text)
}

#[derive(Args, Debug, Clone)]
#[command(mut_args(merge_wording))]
pub(crate) struct MergeArgs {
    /// Partial result directories (written by check, baseline or calibrate with --partial).
    #[arg(required = true, value_name = "PARTIAL")]
    pub partials: Vec<PathBuf>,
    /// Write the merged partial into DIR instead of the outputs (to merge in levels).
    #[arg(long, value_name = "DIR")]
    pub partial: Option<PathBuf>,
    #[command(flatten)]
    pub outputs: CheckOutputs,
    /// baseline: where to write the band (default band.json).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// baseline: also write each scenario's count of clean runs into the band.
    #[arg(long)]
    pub per_scenario: bool,
    /// calibrate: the label file the partials were made with.
    #[arg(long)]
    pub labels: Option<PathBuf>,
}

/// `merge`'s wording of the flags it shares with `check` ([`CheckOutputs`]): each says which partials
/// it applies to, and `--gate`, `--metric` and `--table` have no default, so that one given to
/// partials of another command is caught.
fn merge_wording(arg: clap::Arg) -> clap::Arg {
    let help = match arg.get_id().as_str() {
        "json" => "check, calibrate: write the JSON report here",
        "markdown" => "check: write a Markdown summary here",
        "audit" => "check: write an audit folder here",
        "band" => "check: gate against this band",
        "gate" => "check: which test decides the gate (band, paired or both)",
        "metric" => "check: what the band gate compares (clean or pass^k)",
        "pass_k" => {
            "check: report pass^1 … pass^k; baseline: write each run's pass^k into the band"
        }
        "parquet" => "check, baseline, calibrate: write the Parquet tables into this directory",
        "junit" => "check: write JUnit XML here",
        "html" => "check: write a self-contained HTML report here",
        "color" => "check: colour the table (auto, always or never)",
        "table" => "check: which rows of the table to print (all, failing or none)",
        "spill_dir" => {
            "check: where the verdicts spill while the outputs are written (default TMPDIR)"
        }
        "otlp_events" => "check: write the verdicts as OTLP/JSON evaluation events here",
        "otlp_endpoint" => "check: post the evaluation events to this OTLP/HTTP receiver",
        "otlp_protocol" => "check: how --otlp-endpoint encodes the events (protobuf or json)",
        "strict_band" => {
            "check: refuse the run (exit 2) when some of its scenarios are not in the band"
        }
        "budget" => "check: a budget on a measure (needs a band from baseline --measures)",
        "budgets" => "check: budgets from a JSON file, after any --budget",
        "by" => "check, baseline: break every rate down by this key (the partials' --by)",
        "gate_slices" => "check: a slice that regressed fails the whole gate",
        "trust" => "check, baseline: gate only on the checks this calibration report trusts",
        "min_kappa" => "check, baseline: the κ a check needs in the --trust report to gate",
        _ => return arg,
    };
    let arg = arg.help(help);
    match arg.get_id().as_str() {
        "gate" | "metric" | "table" => arg.default_value(None),
        _ => arg,
    }
}

impl RunArgs {
    /// The file of `--judge replay:FILE`.
    pub(crate) fn judge_replay(&self) -> Option<PathBuf> {
        self.judge
            .as_deref()
            .and_then(|spec| spec.strip_prefix("replay:"))
            .filter(|file| !file.is_empty())
            .map(PathBuf::from)
    }

    /// `--outcomes recorded`: the outcome check reads each trace's own recorded outcome.
    pub(crate) fn recorded_outcomes(&self) -> bool {
        self.outcomes
            .as_deref()
            .is_some_and(|p| p.as_os_str() == crate::golden::RECORDED)
    }

    /// The outcomes file, unless `--outcomes recorded` names none.
    pub(crate) fn outcomes_file(&self) -> Option<&std::path::Path> {
        self.outcomes
            .as_deref()
            .filter(|_| !self.recorded_outcomes())
    }

    /// The side files a run reads besides its traces: policy, golden, outcomes, workflow spec,
    /// expectations, judged checks and the judge's replay file.
    pub(crate) fn side_inputs(&self) -> Vec<PathBuf> {
        [
            self.policy.clone(),
            self.golden.clone(),
            self.outcomes_file().map(std::path::Path::to_path_buf),
            self.workflow.clone(),
            self.expect.clone(),
            self.judge_checks.clone(),
            self.judge_replay(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

#[derive(Args, Debug, Clone)]
pub(crate) struct CheckArgs {
    /// Trace files or directories.
    #[arg(help_heading = "Inputs", required = true, display_order = 0)]
    pub traces: Vec<PathBuf>,
    #[command(flatten)]
    pub outputs: CheckOutputs,
    #[command(flatten)]
    pub run: RunArgs,
    /// With --band: say where each regressed scenario's trace first left the steps of these baseline
    /// runs (the runs the band was built from; give them after the traces).
    #[arg(help_heading = "Gate", long, value_name = "BASELINE_RUN", num_args = 1..)]
    pub explain: Vec<PathBuf>,
    /// With --explain: also explain every scenario on which a check fired that no baseline run of it
    /// fired.
    #[arg(help_heading = "Gate", long)]
    pub explain_all: bool,
}

// The output flags of `check`, which `merge` takes too (worded there by `merge_wording`). No doc
// comment: on a flattened struct it would become the command's about text.
#[derive(Args, Debug, Clone)]
pub(crate) struct CheckOutputs {
    /// Gate against this band (from `faultgate baseline`).
    #[arg(help_heading = "Gate", long)]
    pub band: Option<PathBuf>,
    /// Which test decides the gate: band (0.4.1's), paired (per-scenario, needs a band from
    /// `baseline --per-scenario`) or both (fails when either fails).
    #[arg(
        help_heading = "Gate",
        long,
        value_enum,
        default_value = "band",
        value_name = "TEST"
    )]
    pub gate: Option<GateArg>,
    /// What the band gate compares: clean (the clean rate) or pass^k (needs a band built from runs with
    /// several traces per scenario).
    #[arg(help_heading = "Gate", long, value_parser = ["clean", "pass^k"], default_value = "clean", value_name = "METRIC")]
    pub metric: Option<String>,
    /// Report pass^1 … pass^k when a scenario has several traces (trials), in every output.
    #[arg(help_heading = "Gate", long)]
    pub pass_k: bool,
    /// Refuse the run (exit 2) when some of its scenarios are not in the band, so were not gated.
    #[arg(help_heading = "Gate", long, requires = "band")]
    pub strict_band: bool,
    /// A budget on a measure, repeatable: `latency.p95 <= +20%`, `steps.p90 <= +2`, `cost.p95 <= 0.05`
    /// (needs a band from `baseline --measures`).
    #[arg(help_heading = "Gate", long, value_name = "EXPR", requires = "band")]
    pub budget: Vec<String>,
    /// Budgets from a JSON file, `{"budgets": ["latency.p95 <= +20%", …]}`, after any --budget.
    #[arg(help_heading = "Gate", long, value_name = "FILE", requires = "band")]
    pub budgets: Option<PathBuf>,
    /// Break every rate down by this key, repeatable: `model`, `agent`, `agent_version`, `service`
    /// or `attr:NAME` (read from the root span, else the first span that has it, else the OTLP
    /// resource). At most 32 slices;
    /// the rest are counted as `other`. With a band built with the same keys, the gate judges each
    /// slice.
    #[arg(help_heading = "Gate", long, value_name = "KEY")]
    pub by: Vec<String>,
    /// A slice that regressed against the band fails the whole gate (by default it is reported).
    #[arg(help_heading = "Gate", long, requires = "by")]
    pub gate_slices: bool,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// Write the JSON report here.
    #[arg(help_heading = "Outputs", long)]
    pub json: Option<PathBuf>,
    /// Write a Markdown summary here.
    #[arg(help_heading = "Outputs", long)]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report here.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write JUnit XML here: a test suite per check, a test case per trace, and the gate.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write verdicts.parquet and traces.parquet into this directory.
    #[arg(help_heading = "Outputs", long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Write an audit folder here.
    #[arg(help_heading = "Outputs", long)]
    pub audit: Option<PathBuf>,
    // Boxed: seldom given, and `check`'s flags are the largest variant of the commands.
    #[command(flatten)]
    pub otlp: Box<OtlpOutputs>,
    /// Colour the table: auto (a terminal and NO_COLOR unset), always or never.
    #[arg(
        help_heading = "Outputs",
        long,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: crate::report::render::colour::ColorChoice,
    /// Which rows of the table to print: all (one per trace, as 0.4.1), failing (the failing traces'
    /// rows under the header) or none; the summary and gate lines are always printed.
    #[arg(
        help_heading = "Outputs",
        long,
        value_enum,
        default_value = "all",
        value_name = "ROWS"
    )]
    pub table: Option<crate::report::render::terminal::TableRows>,
    /// Where the run's verdicts spill while the outputs are written: an unlinked temporary file in DIR
    /// (default: the temporary directory, TMPDIR).
    // Boxed: `check`'s flags are the largest variant of the commands.
    #[arg(help_heading = "Outputs", long, value_name = "DIR", value_parser = clap::builder::TypedValueParser::map(clap::builder::PathBufValueParser::new(), Box::new))]
    pub spill_dir: Option<Box<PathBuf>>,
}

// `--otlp-events`, `--otlp-endpoint` and `--otlp-protocol`, for `check` and `merge`. No doc comment:
// on a flattened struct it would become the command's about text.
#[derive(Args, Debug, Clone)]
pub(crate) struct OtlpOutputs {
    /// Write the verdicts as OpenTelemetry evaluation events (gen_ai.evaluation.result), one OTLP/JSON
    /// logs export, here.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub otlp_events: Option<PathBuf>,
    /// Post the evaluation events to this OTLP/HTTP receiver (/v1/logs is added to a URL without a
    /// path), gzip-compressed, retried on 408, 429, 5xx and failed connections.
    #[arg(help_heading = "Outputs", long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// How --otlp-endpoint encodes the events: protobuf (OTLP/HTTP's default) or json.
    #[arg(
        help_heading = "Outputs",
        long,
        value_enum,
        value_name = "PROTOCOL",
        requires = "otlp_endpoint"
    )]
    pub otlp_protocol: Option<OtlpProtocolArg>,
}

// `--trust` and `--min-kappa`, for `check` (with a band) and `baseline`. No doc comment: on a
// flattened struct it would become the command's about text.
#[derive(Args, Debug, Clone)]
pub(crate) struct TrustArgs {
    /// A calibration report (`faultgate calibrate --json` on your labels): checks whose κ is below
    /// --min-kappa, or that it does not score, still run and are reported but do not gate.
    #[arg(
        help_heading = "Gate",
        long,
        value_name = "FILE",
        requires = "min_kappa"
    )]
    pub trust: Option<PathBuf>,
    /// The κ a check needs in the --trust report to count toward the clean rate and to block.
    #[arg(help_heading = "Gate", long, value_name = "K", requires = "trust", value_parser = kappa_arg)]
    pub min_kappa: Option<f64>,
}

/// A κ bar: a number from -1 to 1.
fn kappa_arg(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(k) if (-1.0..=1.0).contains(&k) => Ok(k),
        _ => Err(format!("expected a kappa from -1 to 1, got '{text}'")),
    }
}

#[derive(Args, Debug, Clone)]
pub(crate) struct BaselineArgs {
    /// Baseline runs: each a trace file, a directory or an archive.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Where to write the band.
    #[arg(long, default_value = "band.json")]
    pub out: PathBuf,
    /// Also write each scenario's count of clean runs into the band, for `check --gate paired`, and
    /// with --measures each scenario's median of each measure, for budgets paired by scenario.
    #[arg(long)]
    pub per_scenario: bool,
    /// Also write each run's pass^1 … pass^k into the band when a scenario has several traces, for
    /// `check --metric pass^k`.
    #[arg(long)]
    pub pass_k: bool,
    /// Also record each run's latency, tokens, cost and tool steps (mean, p50, p90, p95, p99) in the
    /// band, for `check --budget`.
    #[arg(long)]
    pub measures: bool,
    /// Also record each run's clean rate per slice of this key, repeatable (`model`, `agent`,
    /// `agent_version`, `service`, `attr:NAME`), for `check --by` with the same keys.
    #[arg(long, value_name = "KEY")]
    pub by: Vec<String>,
    /// Write clean_matrix.parquet and runs.parquet (per-run, per-scenario clean flags) into this directory.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    #[command(flatten)]
    pub trust: TrustArgs,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct CalibrateArgs {
    /// Trace files or directories.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Human labels: JSON object, JSON lines or CSV (key, check, label[, split]); `recorded` labels
    /// each trace by its own recorded outcome (a file of that name is `./recorded`).
    #[arg(long)]
    pub labels: PathBuf,
    /// Also score the labels of this split (`test` or `split=test`).
    #[arg(long)]
    pub split: Option<String>,
    /// Write the calibration report here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write calibration_checks.parquet and calibration_verdicts.parquet into this directory.
    #[arg(long)]
    pub parquet: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct PrecheckArgs {
    /// Trace files or directories.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Trace format of the inputs.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: Format,
    /// Traces to check per file, from the start; 0 or less checks every trace.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true)]
    pub sample: i64,
    /// Policy file whose keys to list and whose result / latest rules to check against the traces.
    #[arg(long)]
    pub policy: Option<PathBuf>,
}

/// A positive, finite number of seconds.
fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(s),
        _ => Err(format!(
            "expected a positive number of seconds, got '{text}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args as _, CommandFactory as _};

    use super::*;

    /// `merge` takes `check`'s output flags: each is worded there for partials, and only `--gate`,
    /// `--metric` and `--table` lose their default (a merge must tell whether they were given).
    #[test]
    fn merge_words_every_output_flag_of_check_for_partials() {
        let cli = Cli::command();
        let sub = |name: &str| cli.find_subcommand(name).expect("subcommand").clone();
        let (check, merge) = (sub("check"), sub("merge"));
        let outputs = CheckOutputs::augment_args(clap::Command::new("outputs"));
        let ids: Vec<&str> = outputs
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .collect();
        assert_eq!(ids.len(), 23, "{ids:?}");
        for id in ids {
            let arg = |command: &clap::Command| {
                command
                    .get_arguments()
                    .find(|a| a.get_id() == id)
                    .cloned()
                    .unwrap_or_else(|| panic!("{} has no {id}", command.get_name()))
            };
            let (in_check, in_merge) = (arg(&check), arg(&merge));
            let help = in_merge
                .get_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                ["check", "baseline", "calibrate"]
                    .iter()
                    .any(|c| help.starts_with(c)),
                "merge --{id}: {help}"
            );
            assert_ne!(
                in_check.get_help().map(ToString::to_string),
                Some(help),
                "{id}"
            );
            let defaults = |a: &clap::Arg| a.get_default_values().to_vec();
            match id {
                "gate" | "metric" | "table" => {
                    assert!(!defaults(&in_check).is_empty(), "{id}");
                    assert!(defaults(&in_merge).is_empty(), "{id}");
                }
                _ => assert_eq!(defaults(&in_check), defaults(&in_merge), "{id}"),
            }
        }
    }
}
