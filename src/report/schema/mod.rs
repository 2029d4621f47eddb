//! The JSON files faultgate writes, as types: the `--json` report, band.json, the audit folder's
//! verdict.json and failing_traces.json, and the `calibrate --json` report.
//!
//! Each struct's field order is the order its keys are written in, and the doc comments here are the
//! format's reference (`docs/formats.md` is written from them; a test keeps the two in step). Writers
//! build one of these values and print it with [`to_pretty`]; nothing outside this file decides a key's
//! name, place or presence. The one exception to building values is `PerTraceEntries`: the `--json`
//! report's millions of per-trace entries, written straight from the rows, with a test holding them to
//! their types' bytes. band.json, which the gate writes and reads back itself, has its types in the gate
//! (`src/gate/band/file.rs`); they are re-exported here with the rest.
//!
//! Conventions for every file: one-space indentation and ASCII escapes, as faultgate 0.4.1 writes JSON;
//! floats keep a decimal point (`1.0`); an undefined or non-finite float is `null`. Values that a band
//! file gave and the gate echoes ([`serde_json::Value`] fields) are written back exactly as read, so a
//! band's integer `1` stays `1`.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A typed file as faultgate writes it: `json.dumps(v, indent=1)` with ASCII escapes, no trailing
/// newline.
///
/// The one place the writers turn a typed value into text.
pub fn to_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    crate::compat::json::to_pretty(value)
}

/// Appends `value` as [`to_pretty`] writes it at the top level, for writers that lay out a file's
/// repeated entries themselves (see [`CheckResult`]).
pub(crate) fn push_pretty<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    crate::compat::json::push_pretty(out, value);
}

/// As [`push_pretty`] for a string, faster for the common one that needs no escape.
pub(crate) fn push_pretty_str(out: &mut Vec<u8>, value: &str) {
    crate::compat::json::push_pretty_str(out, value);
}

/// As [`to_pretty`], written to `out` as it is serialised.
///
/// # Errors
///
/// `out` fails, or `value`'s `Serialize` implementation reports an error.
pub fn to_pretty_writer<T: Serialize + ?Sized>(
    value: &T,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    crate::compat::json::to_pretty_writer(value, out)
}

/// An object whose keys are data (check names, trace ids, measures), in insertion order.
///
/// Built from pairs: a key given again replaces its value in the key's first place, as a JSON object
/// built by repeated assignment does.
#[derive(Debug, Clone, PartialEq)]
pub struct Entries<V>(Vec<(String, V)>);

impl<V> Default for Entries<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> Entries<V> {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<String>, V> FromIterator<(K, V)> for Entries<V> {
    /// A repeated key keeps its first place and takes the last value.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut entries: Vec<(String, V)> = Vec::new();
        let mut place: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (k, v) in iter {
            let k = k.into();
            match place.get(&k) {
                Some(&i) => entries[i].1 = v,
                None => {
                    place.insert(k.clone(), entries.len());
                    entries.push((k, v));
                }
            }
        }
        Self(entries)
    }
}

impl<V> IntoIterator for Entries<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<V: Serialize> Serialize for Entries<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Entries<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<V> {
            type Value = Entries<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, V>()? {
                    entries.push(entry);
                }
                Ok(entries.into_iter().collect())
            }
        }
        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

// ---------------------------------------------------------------------------------------------------
// The `--json` report
// ---------------------------------------------------------------------------------------------------

/// The `check --json` report: one object per run.
///
/// The keys up to `results` are 0.4.1's and always present; the later ones are written only when
/// they have something to say, so a plain run's report keeps 0.4.1's keys exactly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JsonReport {
    /// Judge name of the run (`none` when no judge ran).
    pub judge: String,
    /// Active check names in selection order; a check selected twice is listed twice.
    pub checks: Vec<String>,
    /// Redaction mode the run used (`builtin`, `off`, …).
    pub redaction: String,
    /// Number of distinct trace ids.
    pub traces: usize,
    /// Ids of traces where any check fired, distinct, in report order.
    pub failed_traces: Vec<String>,
    /// Check name → number of traces it fired on, each distinct check once, in selection order.
    pub fired: Entries<usize>,
    /// Trace id → the trace's usage measures, in first-result order.
    pub measures: Entries<TraceMeasures>,
    /// One entry per trace and active check: traces in run order, checks in selection order.
    pub results: Vec<CheckResult>,
    /// What the run could not read as it should (tools shown but not read, duplicate or clashing spans,
    /// skipped files), one sentence each; absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_warnings: Vec<String>,
    /// What `--skip-bad-input` left out: files that could not be read and JSON lines that did not
    /// parse (`{"files", "lines"}`); absent when nothing was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_input: Option<crate::report::SkippedInput>,
    /// Token counts of the judge model; present only when a judge answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_usage: Option<JudgeUsage>,
    /// Outcome summary; present only when the `outcome` check ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeBlock>,
    /// pass^k over repeated scenarios; present only with `--pass-k` or `--metric pass^k` and a run that
    /// has several traces for some scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_k: Option<PassKBlock>,
    /// The gate against the band; present only when `--band` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateBlock>,
    /// Where each regressed scenario's trace first left its baseline runs' steps; present only with
    /// `check --explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanations: Option<Vec<super::explanation::Explanation>>,
    /// Every rate by slice (`--by`): `by`, `max_slices`, `other` (whether values past the cap were
    /// counted together), `all` (the whole run), `values` (each slice: `slice`, `traces`, `clean`,
    /// `clean_rate`, `fired` per check, `budgets` per budget with `--budget`), and with a band
    /// sliced alike `gate` (each judged slice: `slice`, `verdict`, `clean_rate`, `band`, `traces`)
    /// and `gate_slices`; absent without `--by`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slices: Option<serde_json::Value>,
    /// With `--unit session`: how many of the `traces` units are conversations and how many are
    /// traces without a conversation id; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitsBlock>,
}

/// What the units of a `--unit session` run are (`units` in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UnitsBlock {
    /// Units that are conversations: the traces sharing a conversation id, checked as one.
    pub sessions: usize,
    /// Units that are traces without a conversation id, checked on their own.
    pub traces_without_conversation: usize,
}

/// One trace's usage measures (`measures` in the report); each is `null` when the trace did not
/// record it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TraceMeasures {
    /// Input plus output tokens (`gen_ai.usage.*_tokens`), summed over the trace's spans.
    pub tokens: Option<f64>,
    /// The root span's duration in milliseconds, else the span of all the trace's known times.
    pub latency_ms: Option<f64>,
    /// Cost in US dollars (`faultgate.cost_usd`), summed over the trace's spans.
    pub cost_usd: Option<f64>,
}

/// One check's verdict on one trace (`results` in the report).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// Trace id, in full.
    pub trace_id: String,
    /// Scenario key of the trace (redacted).
    pub scenario: String,
    /// Check name.
    pub check: String,
    /// Whether the check fired.
    pub detected: bool,
    /// The check's confidence from 0 to 1, rounded half-to-even to 4 places.
    pub confidence: f64,
    /// Why the check fired or not (redacted); empty when it gave no reason.
    pub reason: String,
}

/// The report's per-trace entries written straight from borrowed fields, where a report of millions of
/// traces places them (two levels in, one space a level): the bytes the whole report's
/// [`to_pretty`] gives for each [`CheckResult`], failed trace id and [`TraceMeasures`] member, without
/// building one. A test holds each equal to its type's.
pub(crate) struct PerTraceEntries {
    /// Per active check, its `check` value up to the `detected` value.
    checks: Vec<Vec<u8>>,
}

impl PerTraceEntries {
    /// The entries of a report of these checks, in selection order.
    pub(crate) fn new<'a>(checks: impl IntoIterator<Item = &'a str>) -> Self {
        let checks = checks
            .into_iter()
            .map(|name| {
                let mut text = Vec::new();
                push_pretty(&mut text, name);
                text.extend_from_slice(b",\n   \"detected\": ");
                text
            })
            .collect();
        Self { checks }
    }

    /// A `failed_traces` entry.
    pub(crate) fn push_failed(out: &mut Vec<u8>, trace_id: &str) {
        out.extend_from_slice(b"  ");
        push_pretty_str(out, trace_id);
    }

    /// A `measures` member.
    pub(crate) fn push_measures(out: &mut Vec<u8>, trace_id: &str, measures: &TraceMeasures) {
        out.extend_from_slice(b"  ");
        push_pretty_str(out, trace_id);
        out.extend_from_slice(b": {\n   \"tokens\": ");
        push_pretty(out, &measures.tokens);
        out.extend_from_slice(b",\n   \"latency_ms\": ");
        push_pretty(out, &measures.latency_ms);
        out.extend_from_slice(b",\n   \"cost_usd\": ");
        push_pretty(out, &measures.cost_usd);
        out.extend_from_slice(b"\n  }");
    }

    /// What a trace's `results` entries start with: written once into `head`, which
    /// [`Self::push_result`] then takes for each of the trace's checks.
    pub(crate) fn result_head(head: &mut Vec<u8>, trace_id: &str, scenario: &str) {
        head.clear();
        head.extend_from_slice(b"  {\n   \"trace_id\": ");
        push_pretty_str(head, trace_id);
        head.extend_from_slice(b",\n   \"scenario\": ");
        push_pretty_str(head, scenario);
        head.extend_from_slice(b",\n   \"check\": ");
    }

    /// A `results` entry of the `check`-th active check, after the trace's [`Self::result_head`];
    /// `confidence` as the report writes it (rounded).
    pub(crate) fn push_result(
        &self,
        out: &mut Vec<u8>,
        head: &[u8],
        check: usize,
        detected: bool,
        confidence: f64,
        reason: &str,
    ) {
        out.extend_from_slice(head);
        out.extend_from_slice(&self.checks[check]);
        out.extend_from_slice(if detected { b"true" } else { b"false" });
        out.extend_from_slice(b",\n   \"confidence\": ");
        push_pretty(out, &confidence);
        out.extend_from_slice(b",\n   \"reason\": ");
        push_pretty_str(out, reason);
        out.extend_from_slice(b"\n  }");
    }
}

/// The judge model's token counts over the run (`judge_usage` in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JudgeUsage {
    /// Prompt tokens the judge was sent.
    pub prompt_tokens: u64,
    /// Completion tokens the judge answered with.
    pub completion_tokens: u64,
    /// `prompt_tokens + completion_tokens`.
    pub total_tokens: u64,
}

/// The outcome block (`outcome` in the report): how many traces the outcomes file judged, and the
/// clean rates with and without it. Rates are rounded half-to-even to 4 places.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OutcomeBlock {
    /// `outcome` results the outcomes file judged.
    pub judged: usize,
    /// `outcome` results without an outcome, not judged.
    pub missing: usize,
    /// Judged results whose outcome was true (the task succeeded).
    #[serde(rename = "true")]
    pub true_count: usize,
    /// `true` over `judged`; `null` when nothing was judged.
    pub outcome_rate: Option<f64>,
    /// Share of distinct traces where no check other than `outcome` fired.
    pub structural_clean_rate: f64,
    /// Share of distinct traces where no check fired.
    pub clean_rate: f64,
}

/// pass^k over scenarios with repeated traces (`pass_k` in the report): the chance that k traces drawn
/// without replacement from a scenario's traces are all clean, averaged over scenarios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassKBlock {
    /// Distinct scenario keys in the run.
    pub scenarios: usize,
    /// The most traces any scenario has.
    pub max_trials: u32,
    /// For k = 1, 2, …: the scenarios with at least k traces, which that k averages over.
    pub scenarios_per_k: Vec<usize>,
    /// pass^1, pass^2, … over all checks (a trace passes when no check fired).
    pub overall: Vec<f64>,
    /// Check name → pass^1, pass^2, … for that check alone, in selection order.
    pub by_check: Entries<Vec<f64>>,
}

// ---------------------------------------------------------------------------------------------------
// The gate block (the report's `gate`, verdict.json's `gate`)
// ---------------------------------------------------------------------------------------------------

/// The gate: a candidate run judged against a band file.
///
/// The keys up to `warnings` are 0.4.1's; `workflow_violations` appears when the `workflow` check ran,
/// `metric` with `--metric pass^k`, and `decided_by` to `intervals` with `--gate paired` or `both`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateBlock {
    /// `PASS`, `FAIL` or `INCONCLUSIVE`: the verdict that sets the exit code.
    pub verdict: String,
    /// Share of the band's scenarios clean in this run (absent ones count as not clean); pass^k in its
    /// place with `--metric pass^k`.
    pub clean_rate: f64,
    /// Measure → this run against the band, for each band measure with a non-zero baseline that this
    /// run recorded, in the band's order.
    pub usage: Entries<UsageDelta>,
    /// The band's `clean_rate.min` and `clean_rate.max`, as the band file wrote them.
    pub band: [Value; 2],
    /// `min - 1/n`: a rate at or above it passes.
    pub pass_threshold: f64,
    /// `min - 3/n`: a rate below it fails.
    pub fail_threshold: f64,
    /// The test of the drop from the baseline mean.
    pub stats: GateStatsBlock,
    /// Band `clean_in_all_runs` scenarios not clean in this run, in band order.
    pub regressions: Vec<Value>,
    /// Band scenarios this run does not have, in band order.
    pub missing: Vec<Value>,
    /// Trace ids where `policy` fired; any one fails the gate.
    pub policy_violations: Vec<String>,
    /// Trace ids where `workflow` fired; any one fails the gate. Absent when the workflow check did not
    /// run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_violations: Option<Vec<String>>,
    /// Warnings about the comparison (another judge or check list, missing scenarios, few baseline
    /// runs, repeated scenario keys), as printed on stderr without the `warning: ` prefix.
    pub warnings: Vec<String>,
    /// `pass^k` when `--metric pass^k` put pass^k in place of the clean rate; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `paired` or `both`: which test decided `verdict`; absent with the default band gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The band gate's own verdict; absent with the default band gate (where it is `verdict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band_verdict: Option<String>,
    /// The paired per-scenario test; absent with the default band gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedBlock>,
    /// Bootstrap intervals of the clean rate; absent with the default band gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervals: Option<IntervalsBlock>,
    /// The checks `--trust` set aside (they ran and are reported, but do not gate), each as
    /// `check: why, reported, not gated`; absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<String>,
    /// Each `--budget`'s outcome, in the order given; absent without `--budget`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Vec<BudgetBlock>>,
}

/// One budget's outcome (an entry of the gate's `budgets`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetBlock {
    /// The budget, `MEASURE.STATISTIC <= LIMIT` (`latency.p95 <= +20%`).
    pub budget: String,
    /// `PASS`, `FAIL` (past the limit, significantly) or `INCONCLUSIVE` (past it, not
    /// significantly, or not measured).
    pub verdict: String,
    /// This run's statistic; `null` when no trace recorded the measure.
    pub candidate: Option<f64>,
    /// The band's statistic (the mean over its runs); `null` for an absolute budget, or when no
    /// baseline run recorded the measure.
    pub band: Option<f64>,
    /// The value `candidate` is held to; `null` when not measured.
    pub limit: Option<f64>,
    /// One-sided p-value of the excess over `limit`; `null` when within it or not measured.
    pub p_value: Option<f64>,
    /// Scenarios of this run that recorded the measure, which the bootstrap resampled.
    pub scenarios: usize,
    /// `run` or `band`: which side recorded no value of the measure; `null` when both did.
    pub unmeasured: Option<String>,
    /// For an `INCONCLUSIVE` excess: about how many scenarios of this run would make it
    /// significant; `null` otherwise, or when the band's run-to-run spread alone hides it.
    pub scenarios_to_tell: Option<usize>,
    /// `paired` (each scenario held to the band's median of it) or `unpaired` (the run's
    /// scenarios resampled against the band's runs): the significance test the budget takes.
    /// Present only for a band with per-scenario medians (`baseline --measures --per-scenario`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// Scenarios of this run the band has a median of: those the paired test compares. Present
    /// only with `test`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_scenarios: Option<usize>,
}

/// One usage measure of the run next to the band's (an entry of the gate's `usage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageDelta {
    /// The band's mean, as the band file wrote it.
    pub baseline: Value,
    /// This run's mean over the traces that recorded the measure.
    pub candidate: f64,
    /// Change from the baseline in percent, rounded half-to-even to one decimal.
    pub delta_pct: f64,
}

/// The statistics of the band gate (the gate's `stats`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateStatsBlock {
    /// Mean of the band's per-run clean rates.
    pub baseline_mean: f64,
    /// `baseline_mean` minus this run's rate.
    pub drop: f64,
    /// One-sided p-value of the drop.
    pub p_value: f64,
    /// Significance level of the test (0.05).
    pub alpha: f64,
    /// Power the sample-size estimate aims for (0.8).
    pub power: f64,
    /// Scenarios needed to detect the drop; `null` unless the verdict is INCONCLUSIVE.
    pub required_n: Option<u64>,
    /// `required_n` minus the band's scenarios, at least 0; `null` unless the verdict is INCONCLUSIVE.
    pub additional_n: Option<u64>,
}

/// The paired per-scenario test (the gate's `paired`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedBlock {
    /// The paired test's verdict: `PASS`, `FAIL` or `INCONCLUSIVE`.
    pub verdict: String,
    /// The test used: `sign test (exact)`, `paired permutation (exact)` or
    /// `paired permutation (normal approximation)`.
    pub method: String,
    /// Band scenarios compared.
    pub scenarios: usize,
    /// Mean over scenarios of the share of baseline runs the scenario was clean in.
    pub baseline_rate: f64,
    /// Share of the scenarios clean in this run.
    pub candidate_rate: f64,
    /// `baseline_rate - candidate_rate`.
    pub drop: f64,
    /// Scenarios whose clean state differs from their baseline's.
    pub discordant: usize,
    /// Scenarios clean in every baseline run and not clean now, in band order.
    pub regressed: Vec<Value>,
    /// Scenarios clean in no baseline run and clean now, in band order.
    pub improved: Vec<Value>,
    /// One-sided p-value of the drop.
    pub p_value: f64,
    /// Significance level (0.05).
    pub alpha: f64,
    /// Power the sample-size estimate aims for (0.8).
    pub power: f64,
    /// Scenarios needed to detect the drop; `null` when the rate did not drop.
    pub required_n: Option<u64>,
    /// `required_n` minus the band's scenarios, at least 0; `null` when the rate did not drop.
    pub additional_n: Option<u64>,
}

/// Bootstrap intervals (the gate's `intervals`): resampling scenarios, percentile method.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntervalsBlock {
    /// Confidence level (0.95).
    pub confidence: f64,
    /// `scenario bootstrap, percentile`.
    pub method: String,
    /// Bootstrap resamples drawn.
    pub resamples: usize,
    /// Seed of the resampling, so the intervals repeat exactly.
    pub seed: u64,
    /// `[low, high]` of this run's clean rate.
    pub clean_rate: [f64; 2],
    /// `[low, high]` of this run's clean rate minus the baseline's.
    pub difference: [f64; 2],
}

// ---------------------------------------------------------------------------------------------------
// band.json
// ---------------------------------------------------------------------------------------------------

// band.json is the gate's own file: it writes and reads it back, so its types live in the gate.
pub use crate::gate::band::{BandCleanRate, BandJson, BandPassKJson, Shaped};

// ---------------------------------------------------------------------------------------------------
// The audit folder
// ---------------------------------------------------------------------------------------------------

/// verdict.json in the `--audit` folder: what a reviewer needs to trust the verdict later.
///
/// `I` is the list of inputs: the audit writes it as it digests each file, so a run over a million
/// files holds no list of their digests ([`InputDigest`] is one entry).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictJson<I = Vec<InputDigest>> {
    /// Version of this tool (not 0.4.1's).
    pub faultgate_version: String,
    /// When the run finished, `YYYY-MM-DDTHH:MM:SSZ` in UTC; `SOURCE_DATE_EPOCH` pins it.
    pub created_utc: String,
    /// `PASS`, `FAIL` or `INCONCLUSIVE` with a band; without one `FAIL` when any check fired, else
    /// `PASS`.
    pub verdict: String,
    /// The run's exit code, 0 or 1.
    pub exit_code: i32,
    /// The command that reproduces the run.
    pub command: String,
    /// The pip line that installs this version.
    pub install: String,
    /// Every input file: the trace files (a directory lists each file it holds), then band, policy,
    /// golden, outcomes, judge_checks and judge_replay when given.
    pub inputs: I,
    /// Judge name of the run.
    pub judge: String,
    /// Active check names in selection order.
    pub checks: Vec<String>,
    /// Redaction mode of the run.
    pub redaction: String,
    /// Number of distinct trace ids.
    pub traces: usize,
    /// Number of distinct traces where any check fired.
    pub failed_traces: usize,
    /// Check name → number of traces it fired on, as in the report.
    pub fired: Entries<usize>,
    /// The gate object of the report, or `null` without `--band`.
    pub gate: Option<GateBlock>,
}

/// One input file of the run (an entry of verdict.json's `inputs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputDigest {
    /// `traces`, `band`, `policy`, `golden`, `outcomes`, `judge_checks`, `trust` or `judge_replay`.
    pub role: String,
    /// The path as given, relative when it can be, else the file name.
    pub path: String,
    /// Lowercase hex SHA-256 of the file's bytes.
    pub sha256: String,
}

/// One failing trace in failing_traces.json (a list of these, in report order). No payloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailingTrace {
    /// Trace id, in full.
    pub trace_id: String,
    /// Scenario key of the trace's first result (redacted).
    pub scenario: String,
    /// Each result that fired, in result order.
    pub checks: Vec<FiredCheck>,
}

/// One check that fired on a failing trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FiredCheck {
    /// Check name.
    pub check: String,
    /// Why it fired (redacted).
    pub reason: String,
}

// ---------------------------------------------------------------------------------------------------
// The calibration report
// ---------------------------------------------------------------------------------------------------

/// The `calibrate --json` report: how each check's verdicts agree with human labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationJson {
    /// The held-out split scored besides the full set (`--split NAME`), or `null`.
    pub split: Option<String>,
    /// What happened to the labels.
    pub labels: LabelsBlock,
    /// One entry per check, in the order the checks first gave a verdict.
    pub checks: Vec<CheckCalibration>,
}

/// The label counts of a calibration (its `labels`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelsBlock {
    /// Distinct labels in the file.
    pub total: usize,
    /// Labels that scored at least one verdict.
    pub used: usize,
    /// Labels given twice with the same value, counted once.
    pub duplicates: usize,
    /// Check name → labels for that check, for checks that gave no verdict, in file order.
    pub checks_not_run: Entries<usize>,
    /// Labels whose key is neither a trace id nor a scenario key of the input.
    pub keys_not_in_input: KeysNotInInput,
    /// Labels under a scenario key that a trace-id label for the same check overrode on every trace.
    pub shadowed: usize,
}

/// Label keys that matched nothing in the input (`labels.keys_not_in_input`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeysNotInInput {
    /// Distinct keys.
    pub keys: usize,
    /// Labels under those keys (for checks that ran).
    pub labels: usize,
    /// The first 5 keys, in file order.
    pub first: Vec<String>,
}

/// One check's agreement with the labels (an entry of `checks`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckCalibration {
    /// Check name.
    pub check: String,
    /// Metrics over every verdict of the check.
    pub all: CalibrationMetrics,
    /// Metrics over the held-out split; `null` without `--split`.
    pub split: Option<CalibrationMetrics>,
}

/// A confusion matrix and the rates derived from it. A label of `true` means the failure is there
/// (the check should fire). Counts are integers; rates are floats from 0 to 1; an undefined rate,
/// interval or kappa is `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationMetrics {
    /// Labelled verdicts.
    pub n: u64,
    /// Labelled verdicts whose label is true.
    pub positives: u64,
    /// Labelled verdicts whose label is false.
    pub negatives: u64,
    /// Fired, label true.
    pub tp: u64,
    /// Fired, label false.
    pub fp: u64,
    /// Did not fire, label false.
    pub tn: u64,
    /// Did not fire, label true.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Verdicts without a label, not counted above.
    pub unlabelled: u64,
    /// True positive rate, `tp / positives`.
    pub tpr: Option<f64>,
    /// 95% Wilson score interval of `tpr`, `[low, high]`.
    pub tpr_ci: Option<[f64; 2]>,
    /// True negative rate, `tn / negatives`.
    pub tnr: Option<f64>,
    /// 95% Wilson score interval of `tnr`, `[low, high]`.
    pub tnr_ci: Option<[f64; 2]>,
    /// `tp / (tp + fp)`.
    pub precision: Option<f64>,
    /// Cohen's kappa between verdicts and labels.
    pub kappa: Option<f64>,
    /// Why `kappa` is `null`: `no labels`, `0 positives` or `0 negatives`; `null` when it is defined.
    pub kappa_undefined: Option<String>,
}

#[cfg(test)]
mod tests;
