//! What a gate decides, as plain values: the verdict, the band gate's numbers, the paired gate beside
//! it, the budgets (`--budget`, judged in `budget`) and the warnings about the comparison.
//!
//! The band gate ([`super::verdict`]) fills a [`Gate`]; the paired layer ([`super::decision`]) adds its
//! [`PairedGate`] and may change the verdict. Both only compute: the report words and renders these
//! values (the `gate` object of the JSON report, the lines `check --band` prints).

use serde_json::Value;

use super::bootstrap::Intervals;
use super::paired::PairedStats;
use super::stats::GateStats;

/// The gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The candidate is within the band: exit 0.
    Pass,
    /// The candidate regressed (or a hard block fired): exit 1.
    Fail,
    /// Too few traces to tell a regression from noise.
    Inconclusive,
}

impl Verdict {
    /// The verdict as printed and written: `PASS`, `FAIL` or `INCONCLUSIVE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    }

    /// The process exit code the verdict implies: 1 only on FAIL.
    pub fn exit_code(self) -> i32 {
        i32::from(self == Verdict::Fail)
    }
}

/// Which test decides the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GateMode {
    /// 0.4.1's band gate alone, byte for byte.
    #[default]
    Band,
    /// The paired per-scenario test decides; the band gate is reported beside it.
    Paired,
    /// Both are reported; the gate fails when either fails.
    Both,
}

impl GateMode {
    /// The mode as `--gate` spells it (`band`, `paired`, `both`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GateMode::Band => "band",
            GateMode::Paired => "paired",
            GateMode::Both => "both",
        }
    }
}

/// A usage measure of the candidate next to the band's.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageDelta {
    /// Measure name as the band file spells it.
    pub measure: String,
    /// The band's value, as read.
    pub baseline: Value,
    /// The candidate's mean over traces that recorded the measure.
    pub candidate: f64,
    /// Change in percent, rounded to one decimal.
    pub delta_pct: f64,
}

/// Something about the comparison the reader should know; it does not change the verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum GateWarning {
    /// The band was built with another judge or check list than this run's.
    OtherRuns {
        /// The band's `judge`, as read.
        band_judge: Value,
        /// The band's `checks`, as read.
        band_checks: Value,
        /// This run's judge.
        judge: String,
        /// This run's active checks.
        checks: Vec<String>,
    },
    /// Band scenarios absent from this run (their number), counted as not clean.
    MissingScenarios(usize),
    /// The run has fewer than half of the band's scenarios (but some): a band of another suite or
    /// domain would fail the run on the scenarios it lacks, so the gate says how few it shares.
    FewSharedScenarios {
        /// How many band scenarios the run has.
        shared: usize,
        /// How many scenarios the band has.
        scenarios: usize,
    },
    /// Scenarios of this run that the band does not have: the gate cannot judge them, so their traces
    /// were not gated, failing or not.
    UngatedScenarios(Ungated),
    /// The band was built from fewer than 3 runs: its `runs`, as read.
    FewBaselineRuns(Value),
    /// The band has no per-run clean rates (`clean_rate.per_run` absent or empty), so `[min, max]`
    /// stands in for its runs and the run-to-run variance is unknown. A note rather than a warning:
    /// the verdict's thresholds need only `min`.
    UnknownRunSpread,
    /// The band's rates leave out other checks (`baseline --trust`) than this run's gate does
    /// (`check --trust`), so the two rates count different checks.
    OtherTrust {
        /// The band's `set_aside`, as read (empty when the band has none).
        band_set_aside: Vec<String>,
        /// The checks this run set aside.
        set_aside: Vec<String>,
    },
    /// Scenario keys carried by more than one trace of this run, in first-seen order.
    RepeatedKeys(Vec<String>),
    /// A relative budget whose measure the run or the band did not record: judged INCONCLUSIVE.
    BudgetUnmeasured {
        /// The budget's name (`latency.p95`).
        budget: String,
        /// The measure as the band names it.
        measure: &'static str,
        /// Which side recorded none.
        side: Unmeasured,
    },
    /// With pass^k: band scenarios that have fewer than `k` traces in this run, counted as pass^k 0.
    FewTrials {
        /// How many such scenarios.
        scenarios: usize,
        /// The band's k.
        k: u32,
    },
}

/// The scenarios of a run outside its band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ungated {
    /// Distinct scenario keys of the run that the band does not have.
    pub scenarios: usize,
    /// Traces with those keys that failed.
    pub failed_traces: usize,
}

/// The outcome of a candidate against a band.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The decision that sets the exit code.
    pub verdict: Verdict,
    /// Share of band scenarios clean in the candidate (absent ones count as not clean).
    pub clean_rate: f64,
    /// Each band measure with a non-zero baseline that the candidate recorded, in the band's order.
    pub usage: Vec<UsageDelta>,
    /// The band's `clean_rate.min` and `clean_rate.max`, as read.
    pub band: [Value; 2],
    /// `min - 1/n`: a clean rate at or above it passes.
    pub pass_threshold: f64,
    /// `min - 3/n`: a clean rate below it fails.
    pub fail_threshold: f64,
    /// `required_n` and `additional_n` are set only for INCONCLUSIVE.
    pub stats: GateStats,
    /// Band `clean_in_all_runs` entries not clean now, in band order.
    pub regressions: Vec<Value>,
    /// Band scenarios the candidate does not have, in band order.
    pub missing: Vec<Value>,
    /// Candidate trace ids where `policy` fired: each one fails the gate.
    pub policy_violations: Vec<String>,
    /// Candidate trace ids where `workflow` fired: each one fails the gate. `None` when the workflow
    /// check did not run; then the gate object has no `workflow_violations` key, as in 0.4.1.
    pub workflow_violations: Option<Vec<String>>,
    /// Warnings about the comparison (another judge or check list, missing scenarios, few runs).
    pub warnings: Vec<GateWarning>,
    /// Which test decides `verdict` ([`GateMode::Band`] unless `--gate paired` or `both`).
    pub mode: GateMode,
    /// The band gate's own verdict; equals `verdict` in [`GateMode::Band`].
    pub band_verdict: Verdict,
    /// The paired gate and intervals, outside [`GateMode::Band`].
    pub paired: Option<PairedGate>,
    /// k, when `--metric pass^k` put pass^k in place of the clean rate.
    pub pass_k: Option<u32>,
    /// Checks `--trust` set aside: they ran and are reported, but neither the clean rate nor a hard
    /// block counts them. Empty without `--trust`.
    pub set_aside: Vec<super::SetAside>,
    /// Each `--budget`'s outcome, in the order given; `None` without `--budget`.
    pub budgets: Option<Vec<BudgetOutcome>>,
    /// Band `clean_rate.min` and `max` as numbers, for the terminal line.
    pub(crate) lo: f64,
    pub(crate) hi: f64,
}

/// The paired gate's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedGate {
    /// The paired test's verdict: what decides with `--gate paired`, and half of `--gate both`.
    pub verdict: Verdict,
    /// The paired test over the band's scenarios.
    pub stats: PairedStats,
    /// Keys of the scenarios in `stats.regressed`, in band order.
    pub regressed: Vec<Value>,
    /// Keys of the scenarios in `stats.improved`, in band order.
    pub improved: Vec<Value>,
    /// `required_n` minus the band's scenarios, at least 0.
    pub additional_n: Option<u64>,
    /// Bootstrap intervals of the candidate clean rate and of candidate minus baseline.
    pub intervals: Intervals,
}

/// What a budget allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// At most the band's value changed by this many percent (`+20%`).
    Percent(f64),
    /// At most the band's value plus this (`+2`).
    Delta(f64),
    /// At most this value, whatever the band's (`0.05`).
    Absolute(f64),
}

/// One `--budget` expression, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The measure's name as the expression wrote it.
    pub measure_name: String,
    /// Position of the measure in [`super::measures::DISTRIBUTIONS`].
    pub measure: usize,
    /// Position of the statistic in [`super::measures::STATISTICS`].
    pub statistic: usize,
    /// The limit.
    pub limit: Limit,
    /// The limit as written (`+20%`, `+2`, `0.05`).
    pub limit_text: String,
}

/// Why a budget could not be judged; the gate warns, it does not pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmeasured {
    /// No trace of the run recorded the measure.
    Run,
    /// No baseline run recorded the measure.
    Band,
}

/// A budget's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetOutcome {
    /// The budget.
    pub budget: Budget,
    /// PASS, FAIL (past the limit, significantly) or INCONCLUSIVE (past it, not significantly, or
    /// not measured).
    pub verdict: Verdict,
    /// The run's statistic; `None` when not measured.
    pub candidate: Option<f64>,
    /// The band's statistic, the mean over its runs; `None` for an absolute budget or when the band
    /// did not measure it.
    pub band: Option<f64>,
    /// The limit the run's statistic is held to (from the band's value, for a relative budget).
    pub limit: Option<f64>,
    /// One-sided p-value of the excess; `None` when within the limit or not measured.
    pub p_value: Option<f64>,
    /// What did not record the measure, when something did not.
    pub unmeasured: Option<Unmeasured>,
    /// Scenarios of the run with the measure, which the bootstrap resampled.
    pub scenarios: usize,
    /// Each baseline run's value of the statistic, in run order (runs that did not record the
    /// measure left out).
    pub band_runs: Vec<f64>,
    /// For an INCONCLUSIVE excess: about how many scenarios of the run would make it significant;
    /// `None` otherwise, or when the band's run-to-run spread alone hides it.
    pub scenarios_to_tell: Option<usize>,
    /// For a band with per-scenario medians: which test the budget's significance takes; `None`
    /// for a band without them.
    pub pairing: Option<BudgetPairing>,
}

/// The significance test of a budget against a band with per-scenario medians (see
/// `budget_pairing.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetPairing {
    /// The test pairs the run's scenarios with the band's: a relative budget on a mean, with at
    /// least half of the run's scenarios in the band.
    pub paired: bool,
    /// A relative budget on a mean, which pairing applies to (percentiles are never paired).
    pub eligible: bool,
    /// Scenarios of the run the band has a median of.
    pub shared: usize,
}
