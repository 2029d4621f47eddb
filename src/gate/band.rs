//! Baseline bands: building one from checked runs, writing band.json, and reading a band file back.
//!
//! [`BandBuilder`] takes one run at a time and keeps only a clean bitmap per run over the first run's
//! scenario keys (a key missing from the first run can never be shared), plus running usage sums (and,
//! for pass^k, each run's trial counts per key), so a band over a hundred runs of ten thousand
//! scenarios never holds more than one run's traces.
//! The file's keys are [`BandJson`]; [`BandFile`] is the lenient reader the gate evaluates against;
//! [`super::verdict`] consumes it.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize as _;
use serde_json::Value;

use super::passk::{Trials, pass_hat_k};
use super::{GateError, MEASURES, RunSummary, ScenarioTally};
use crate::compat::reason::fmt_fixed;
use crate::compat::value::py_truthy;
use crate::error::display_path;
use crate::report::format::{BandCleanRate, BandJson, BandPassKJson, Shaped};

/// The band's decision rule, written verbatim into band.json.
pub(crate) const RULE: &str = "PASS if clean_rate >= min - 1/n; FAIL if clean_rate < min - 3/n or the drop from \
the baseline mean is significant (one-sided, alpha 0.05); else INCONCLUSIVE with the n needed for power 0.8";

/// The band.json key of the per-scenario clean-run counts (in `scenarios` order), written by
/// `baseline --per-scenario` for the paired gate.
pub(crate) const SCENARIO_CLEAN_RUNS: &str = "scenario_clean_runs";

/// The band.json key of pass^k per run, written when a baseline run has several traces for a key:
/// `{"k": K, "per_run": [[pass^1, …, pass^K] per run]}`.
pub(crate) const PASS_K: &str = "pass_k";

/// Builds a band from baseline runs added one at a time.
#[derive(Debug, Default)]
pub struct BandBuilder {
    judge: String,
    checks: Vec<String>,
    mixed_runs: bool,
    runs: usize,
    /// Scenario keys of the first run, by id; later runs only look keys up.
    keys: Vec<String>,
    ids: HashMap<String, usize>,
    /// Ids present in every run so far.
    shared: Bitmap,
    /// Per run, ids whose every trace was clean.
    clean_per_run: Vec<Bitmap>,
    usage_total: [f64; 3],
    usage_count: [u64; 3],
    /// Keep `trials_per_run` (only for `baseline --pass-k`: 8 bytes per key and run, against 1 bit).
    track_trials: bool,
    /// Per run, (traces, clean traces) per id, for pass^k over trials.
    trials_per_run: Vec<Vec<Trials>>,
    /// Some key of some run had several traces.
    has_trials: bool,
}

/// What adding a run tells the caller, for the per-run baseline line and warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDigest {
    /// Distinct trace ids in the run.
    pub traces: usize,
    /// 0.4.1's per-run line rate: distinct keys whose last trace is clean, over the trace count.
    pub line_clean_rate: f64,
    /// Keys carried by more than one trace, in first-seen order.
    pub repeated_keys: Vec<String>,
}

impl BandBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder that also keeps each run's trials per scenario, for the band's pass^k.
    pub fn with_trials() -> Self {
        Self {
            track_trials: true,
            ..Self::default()
        }
    }

    /// Reduces one run to clean flags per scenario and usage sums, and forgets its traces.
    pub fn add_run(&mut self, run: &RunSummary) -> RunDigest {
        let tally = ScenarioTally::new(&run.scenario_clean);
        if self.runs == 0 {
            self.judge.clone_from(&run.judge);
            self.checks.clone_from(&run.checks);
            for (key, _) in tally.clean_flags() {
                self.ids.insert(key.to_string(), self.keys.len());
                self.keys.push(key.to_string());
            }
            self.shared = Bitmap::filled(self.keys.len());
        } else if run.judge != self.judge || run.checks != self.checks {
            self.mixed_runs = true;
        }
        let mut present = Bitmap::new(self.keys.len());
        let mut clean = Bitmap::new(self.keys.len());
        for (key, is_clean) in tally.clean_flags() {
            if let Some(&id) = self.ids.get(key) {
                present.set(id);
                if is_clean {
                    clean.set(id);
                }
            }
        }
        if self.track_trials {
            let mut trials = vec![
                Trials {
                    trials: 0,
                    passes: 0
                };
                self.keys.len()
            ];
            for (key, t) in tally.all_trials() {
                if let Some(&id) = self.ids.get(key) {
                    trials[id] = t;
                    self.has_trials |= t.trials > 1;
                }
            }
            self.trials_per_run.push(trials);
        }
        self.shared.and_assign(&present);
        self.clean_per_run.push(clean);
        for (measure, values) in run.usage.iter().enumerate() {
            for value in values {
                self.usage_total[measure] += value;
            }
            self.usage_count[measure] += values.len() as u64;
        }
        self.runs += 1;
        let line_clean_rate = if run.trace_count == 0 {
            0.0
        } else {
            tally.last_clean_count() as f64 / run.trace_count as f64
        };
        RunDigest {
            traces: run.trace_count,
            line_clean_rate,
            repeated_keys: tally.repeated_keys(),
        }
    }

    /// The band over the runs added so far.
    ///
    /// # Errors
    ///
    /// Fewer than two runs, runs with different judges or check lists, or no scenario shared by all.
    pub fn finish(self) -> Result<Band, GateError> {
        if self.runs < 2 {
            return Err(GateError::TooFewRuns(self.runs));
        }
        if self.mixed_runs {
            return Err(GateError::MixedRuns);
        }
        let mut shared: Vec<usize> = self.shared.ones().collect();
        if shared.is_empty() {
            return Err(GateError::NoSharedScenarios);
        }
        shared.sort_unstable_by(|a, b| self.keys[*a].cmp(&self.keys[*b]));
        let n = shared.len() as f64;
        let per_run: Vec<f64> = self
            .clean_per_run
            .iter()
            .map(|clean| shared.iter().filter(|&&id| clean.get(id)).count() as f64 / n)
            .collect();
        let clean_runs = shared
            .iter()
            .map(|&id| {
                self.clean_per_run
                    .iter()
                    .filter(|clean| clean.get(id))
                    .count() as u32
            })
            .collect();
        let clean_in_all_runs = shared
            .iter()
            .filter(|&&id| self.clean_per_run.iter().all(|clean| clean.get(id)))
            .map(|&id| self.keys[id].clone())
            .collect();
        let pass_k = self.has_trials.then(|| {
            // K: the fewest trials any shared scenario has in any run, so every run's pass^k covers
            // every shared scenario.
            let k = self
                .trials_per_run
                .iter()
                .flat_map(|run| shared.iter().map(|&id| run[id].trials))
                .min()
                .unwrap_or(1)
                .max(1);
            let per_run = self
                .trials_per_run
                .iter()
                .map(|run| {
                    let scenarios: Vec<Trials> = shared.iter().map(|&id| run[id]).collect();
                    pass_hat_k(&scenarios)
                        .into_iter()
                        .take(k as usize)
                        .map(|p| p.value)
                        .collect()
                })
                .collect();
            BandPassK { k, per_run }
        });
        let usage = std::array::from_fn(|m| {
            (self.usage_count[m] > 0).then(|| self.usage_total[m] / self.usage_count[m] as f64)
        });
        let mut keys = self.keys;
        let scenarios = shared
            .iter()
            .map(|&id| std::mem::take(&mut keys[id]))
            .collect();
        Ok(Band {
            judge: self.judge,
            checks: self.checks,
            runs: self.runs,
            scenarios,
            per_run,
            clean_runs,
            clean_in_all_runs,
            usage,
            pass_k,
        })
    }
}

/// pass^1 … pass^k of each baseline run over the shared scenarios.
#[derive(Debug, Clone, PartialEq)]
pub struct BandPassK {
    /// The largest k every shared scenario has trials for in every run.
    pub k: u32,
    /// Per run, pass^1 … pass^k.
    pub per_run: Vec<Vec<f64>>,
}

/// A band built from baseline runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Judge name of the runs.
    pub judge: String,
    /// Active check list of the runs.
    pub checks: Vec<String>,
    /// Number of runs.
    pub runs: usize,
    /// Scenario keys present in every run, sorted by code point.
    pub scenarios: Vec<String>,
    /// Per run, the share of `scenarios` clean in that run.
    pub per_run: Vec<f64>,
    /// Per scenario of `scenarios`, the runs in which it was clean.
    pub clean_runs: Vec<u32>,
    /// Scenarios clean in every run, sorted.
    pub clean_in_all_runs: Vec<String>,
    /// Per measure of [`MEASURES`], the mean over all traces of all runs that recorded it.
    pub usage: [Option<f64>; 3],
    /// pass^k per run, when some run had several traces for a key.
    pub pass_k: Option<BandPassK>,
}

impl Band {
    /// Lowest per-run clean rate.
    pub fn min(&self) -> f64 {
        self.per_run.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Highest per-run clean rate.
    pub fn max(&self) -> f64 {
        self.per_run
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Mean of the per-run clean rates, summed left to right as 0.4.1 does.
    pub fn mean(&self) -> f64 {
        self.per_run.iter().fold(0.0, |acc, r| acc + r) / self.runs as f64
    }

    /// band.json, keys in 0.4.1's order ([`BandJson`] gives them).
    pub fn to_wire(&self) -> BandJson {
        self.to_wire_with(false, false)
    }

    /// band.json with optional keys after 0.4.1's (which 0.4.1 ignores): with `per_scenario`,
    /// `SCENARIO_CLEAN_RUNS`, each scenario's count of clean runs, which the paired gate needs; with
    /// `pass_k` and runs that had trials, `PASS_K`, which `--metric pass^k` needs.
    pub fn to_wire_with(&self, per_scenario: bool, pass_k: bool) -> BandJson {
        BandJson {
            judge: Some(Value::from(self.judge.clone())),
            checks: Some(Value::from(self.checks.clone())),
            runs: Some(Value::from(self.runs)),
            n: self.scenarios.len(),
            scenarios: Some(Value::from(self.scenarios.clone())),
            clean_rate: Some(Shaped::Object(BandCleanRate {
                min: Some(Value::from(self.min())),
                max: Some(Value::from(self.max())),
                mean: self.mean(),
                per_run: Some(Value::from(self.per_run.clone())),
            })),
            clean_in_all_runs: Some(Value::from(self.clean_in_all_runs.clone())),
            usage: Some(Shaped::Object(
                MEASURES
                    .iter()
                    .zip(self.usage)
                    .map(|(name, mean)| (*name, Value::from(mean)))
                    .collect(),
            )),
            rule: RULE.to_string(),
            pass_k: self.pass_k.as_ref().filter(|_| pass_k).map(|table| {
                Shaped::Object(BandPassKJson {
                    k: table.k,
                    per_run: table.per_run.clone(),
                })
            }),
            scenario_clean_runs: per_scenario.then(|| Value::from(self.clean_runs.clone())),
        }
    }

    /// The closing stdout line of `baseline`; `out` is the `--out` argument as typed.
    pub fn summary_line(&self, out: &str) -> String {
        format!(
            "band [{}, {}] over {} scenarios \u{d7} {} runs \u{b7} {} clean in every run \u{b7} written to {}",
            fmt_fixed(self.min(), 2),
            fmt_fixed(self.max(), 2),
            self.scenarios.len(),
            self.runs,
            self.clean_in_all_runs.len(),
            out
        )
    }
}

/// The stdout line `baseline` prints after checking one run; `path` is the argument as typed.
pub(crate) fn run_line(path: &str, digest: &RunDigest, elapsed_secs: f64) -> String {
    format!(
        "{path}: {} traces \u{b7} clean rate {} \u{b7} {}s",
        digest.traces,
        fmt_fixed(digest.line_clean_rate, 2),
        fmt_fixed(elapsed_secs, 1)
    )
}

/// The stderr note `baseline` prints for fewer than three runs.
pub(crate) fn few_runs_note(runs: usize) -> Option<String> {
    (runs < 3).then(|| format!("note: {runs} baseline runs measure noise poorly; use 3 or more"))
}

/// A band file as the gate reads it: a [`BandJson`] checked, values kept as read where the gate echoes
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct BandFile {
    pub(crate) judge: Value,
    pub(crate) checks: Value,
    pub(crate) runs: Value,
    pub(crate) runs_number: f64,
    pub(crate) scenarios: Vec<Value>,
    pub(crate) min: Value,
    pub(crate) max: Value,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// `clean_rate.per_run`, or `[min, max]` when it is absent or empty.
    pub(crate) per_run: Vec<f64>,
    pub(crate) clean_in_all_runs: Vec<Value>,
    pub(crate) usage: Vec<(String, Value)>,
    /// [`SCENARIO_CLEAN_RUNS`] when the band has it.
    pub(crate) clean_runs: Option<Vec<u32>>,
    /// [`PASS_K`] when the band has it.
    pub(crate) pass_k: Option<BandPassK>,
}

impl BandFile {
    /// Reads a band file from disk (as `faultgate baseline` writes it).
    ///
    /// # Errors
    ///
    /// An unreadable file, a file that is not JSON, or a document [`BandFile::from_value`] refuses.
    pub fn read(path: &std::path::Path) -> Result<BandFile, GateError> {
        let shown = || crate::error::display_path(path);
        let bytes = crate::sidefile::read(path).map_err(|e| GateError::ReadBand {
            path: shown(),
            message: e.to_string(),
        })?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| GateError::BandNotJson {
                path: shown(),
                message: e.to_string(),
            })?;
        BandFile::from_value(path, &value)
    }

    /// Reads a parsed band file; `path` names it in error messages.
    ///
    /// # Errors
    ///
    /// A falsy document (0.4.1 silently skips the gate), a non-object, or a band without `judge`,
    /// `checks`, `runs`, a non-empty `scenarios` list, numeric `clean_rate.min` and `clean_rate.max`,
    /// or a `clean_in_all_runs` list.
    pub fn from_value(path: &Path, value: &Value) -> Result<Self, GateError> {
        let path = display_path(path);
        if !py_truthy(value) {
            return Err(GateError::EmptyBand { path });
        }
        if !value.is_object() {
            return Err(GateError::NotAnObject { path });
        }
        // An object always reads: every key the reader checks is kept as written, and checked below.
        let band = BandJson::deserialize(value)
            .map_err(|_| GateError::NotAnObject { path: path.clone() })?;
        let missing = |key| GateError::MissingKey {
            path: path.clone(),
            key,
        };
        let bad = |key, expected| GateError::BadValue {
            path: path.clone(),
            key,
            expected,
        };
        let judge = band.judge.ok_or_else(|| missing("judge"))?;
        let checks = band.checks.ok_or_else(|| missing("checks"))?;
        let runs = band.runs.ok_or_else(|| missing("runs"))?;
        let runs_number = number(&runs).ok_or_else(|| bad("runs", "a number"))?;
        let scenarios = match band.scenarios.ok_or_else(|| missing("scenarios"))? {
            Value::Array(items) if items.is_empty() => {
                return Err(GateError::EmptyKey {
                    path: path.clone(),
                    key: "scenarios",
                });
            }
            Value::Array(items) => items,
            _ => return Err(bad("scenarios", "a list")),
        };
        let clean_rate = match band.clean_rate.ok_or_else(|| missing("clean_rate.min"))? {
            Shaped::Object(rate) => rate,
            Shaped::Other(_) => return Err(bad("clean_rate", "an object")),
        };
        let min = clean_rate.min.ok_or_else(|| missing("clean_rate.min"))?;
        let lo = number(&min).ok_or_else(|| bad("clean_rate.min", "a number"))?;
        let max = clean_rate.max.ok_or_else(|| missing("clean_rate.max"))?;
        let hi = number(&max).ok_or_else(|| bad("clean_rate.max", "a number"))?;
        // Ranges and consistency: a band outside them (a hand edit, a corrupted file) would turn a FAIL
        // into a PASS, so it is refused rather than read as written.
        if !(runs_number.is_finite() && runs_number >= 1.0 && runs_number.fract() == 0.0) {
            return Err(bad("runs", "a whole number of runs, 1 or more"));
        }
        if !(0.0..=1.0).contains(&lo) {
            return Err(bad("clean_rate.min", "a rate from 0 to 1"));
        }
        if !(0.0..=1.0).contains(&hi) {
            return Err(bad("clean_rate.max", "a rate from 0 to 1"));
        }
        if lo > hi {
            return Err(bad("clean_rate.min", "at most clean_rate.max"));
        }
        let per_run = match clean_rate.per_run {
            // Bands written before per-run rates existed.
            None | Some(Value::Null) => vec![lo, hi],
            Some(Value::Array(items)) => {
                let rates = items
                    .iter()
                    .map(number)
                    .collect::<Option<Vec<f64>>>()
                    .ok_or_else(|| bad("clean_rate.per_run", "a list of numbers"))?;
                if rates.len() as f64 != runs_number {
                    return Err(bad(
                        "clean_rate.per_run",
                        "one rate per run (as many as \"runs\")",
                    ));
                }
                if rates.iter().any(|r| !(0.0..=1.0).contains(r)) {
                    return Err(bad("clean_rate.per_run", "a list of rates from 0 to 1"));
                }
                rates
            }
            Some(_) => return Err(bad("clean_rate.per_run", "a list of numbers")),
        };
        let Value::Array(clean_in_all_runs) = band
            .clean_in_all_runs
            .ok_or_else(|| missing("clean_in_all_runs"))?
        else {
            return Err(bad("clean_in_all_runs", "a list"));
        };
        let usage = match band.usage {
            None | Some(Shaped::Other(Value::Null)) => Vec::new(),
            Some(Shaped::Object(measures)) => measures.into_iter().collect(),
            Some(Shaped::Other(_)) => return Err(bad("usage", "an object")),
        };
        let clean_runs = match band.scenario_clean_runs {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let counts = items
                    .iter()
                    .map(|v| v.as_u64().and_then(|c| u32::try_from(c).ok()))
                    .collect::<Option<Vec<u32>>>()
                    .filter(|c| c.len() == scenarios.len())
                    .filter(|c| c.iter().all(|&k| f64::from(k) <= runs_number))
                    .ok_or_else(|| {
                        bad(
                            SCENARIO_CLEAN_RUNS,
                            "a list of clean-run counts, one per scenario, none above runs",
                        )
                    })?;
                Some(counts)
            }
            Some(_) => {
                return Err(bad(
                    SCENARIO_CLEAN_RUNS,
                    "a list of clean-run counts, one per scenario, none above runs",
                ));
            }
        };
        let pass_k = match band.pass_k {
            None | Some(Shaped::Other(Value::Null)) => None,
            Some(Shaped::Object(table)) => Some(
                read_pass_k(table)
                    .ok_or_else(|| bad(PASS_K, "{\"k\": k, \"per_run\": [k values per run]}"))?,
            ),
            Some(Shaped::Other(_)) => {
                return Err(bad(PASS_K, "{\"k\": k, \"per_run\": [k values per run]}"));
            }
        };
        Ok(Self {
            judge,
            checks,
            runs,
            runs_number,
            scenarios,
            min,
            max,
            lo,
            hi,
            per_run,
            clean_in_all_runs,
            usage,
            clean_runs,
            pass_k,
        })
    }

    /// The band's per-scenario clean-run counts, which the paired gate needs.
    ///
    /// # Errors
    ///
    /// The band was written without them (by 0.4.1, or without `baseline --per-scenario`).
    pub fn require_clean_runs(&self, path: &Path) -> Result<&[u32], GateError> {
        self.clean_runs
            .as_deref()
            .ok_or_else(|| GateError::NoPerScenario {
                path: display_path(path),
            })
    }

    /// The band's `runs` in Python str-notation, as the gate line prints it.
    pub fn runs_text(&self) -> String {
        crate::compat::reason::py_str(&self.runs)
    }
}

/// A band's `pass_k` object: k ≥ 1 and a non-empty list of runs with k numbers each.
fn read_pass_k(table: BandPassKJson) -> Option<BandPassK> {
    let BandPassKJson { k, per_run } = table;
    let well_formed =
        k >= 1 && !per_run.is_empty() && per_run.iter().all(|values| values.len() == k as usize);
    well_formed.then_some(BandPassK { k, per_run })
}

/// A JSON number as a double; booleans and everything else are not numbers here.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// A fixed-size set of small integers.
#[derive(Debug, Clone, Default, PartialEq)]
struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl Bitmap {
    fn new(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    fn filled(len: usize) -> Self {
        let mut bitmap = Self::new(len);
        for id in 0..len {
            bitmap.set(id);
        }
        bitmap
    }

    fn set(&mut self, id: usize) {
        self.words[id / 64] |= 1 << (id % 64);
    }

    fn get(&self, id: usize) -> bool {
        self.words[id / 64] & (1 << (id % 64)) != 0
    }

    fn and_assign(&mut self, other: &Bitmap) {
        for (word, other) in self.words.iter_mut().zip(&other.words) {
            *word &= other;
        }
    }

    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&id| self.get(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::fixtures;
    use serde_json::json;

    fn run(items: &[(&str, bool)]) -> RunSummary {
        RunSummary {
            judge: "none".into(),
            checks: vec!["search_loop".into(), "abstention".into()],
            trace_count: items.len(),
            scenario_clean: items.iter().map(|(k, c)| (k.to_string(), *c)).collect(),
            policy_violations: Vec::new(),
            workflow_violations: None,
            usage: Default::default(),
        }
    }

    #[test]
    fn band_over_glm_runs_matches_the_reference() {
        let (run1, run2) = (fixtures::glm_run1(), fixtures::glm_run2());
        let mut builder = BandBuilder::new();
        let digest = builder.add_run(&run1);
        assert_eq!(digest.line_clean_rate, 28.0 / 30.0);
        builder.add_run(&run2);
        let band = builder.finish().expect("band");
        let json = serde_json::to_value(band.to_wire()).unwrap();
        assert_eq!(json["n"], json!(30));
        assert_eq!(json["clean_rate"]["min"], json!(0.9333333333333333));
        assert_eq!(
            json["clean_rate"]["per_run"],
            json!([0.9333333333333333, 0.9333333333333333])
        );
        assert_eq!(json["clean_in_all_runs"].as_array().map(Vec::len), Some(26));
        assert_eq!(
            json["usage"],
            json!({"tokens": null, "latency_ms": 16483.333333333332, "cost_usd": null})
        );
        let keys: Vec<&str> = json
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "judge",
                "checks",
                "runs",
                "n",
                "scenarios",
                "clean_rate",
                "clean_in_all_runs",
                "usage",
                "rule"
            ]
        );
        assert_eq!(
            band.summary_line("out/band.json"),
            "band [0.93, 0.93] over 30 scenarios × 2 runs · 26 clean in every run · written to out/band.json"
        );
        assert_eq!(
            run_line("examples/gate/baseline_glm_run1.json", &digest, 0.1),
            "examples/gate/baseline_glm_run1.json: 30 traces · clean rate 0.93 · 0.1s"
        );
    }

    #[test]
    fn usage_means_pool_all_traces_left_to_right() {
        let mut run1 = run(&[("a", true), ("b", true), ("c", true)]);
        let mut run2 = run(&[("a", true), ("b", true), ("c", false)]);
        run1.usage[2] = vec![0.1, 0.2, 0.7];
        run2.usage[2] = vec![0.3, 0.1, 0.11];
        let mut builder = BandBuilder::new();
        builder.add_run(&run1);
        builder.add_run(&run2);
        let band = builder.finish().expect("band");
        // Reference: 0.4.1 wrote 0.2516666666666667; a sum of per-run sums gives ...65.
        assert_eq!(band.usage, [None, None, Some(0.2516666666666667)]);
        assert_eq!(band.per_run, vec![1.0, 0.6666666666666666]);
        assert_eq!(band.mean(), 0.8333333333333333);
    }

    #[test]
    fn shared_scenarios_are_the_intersection_sorted() {
        let mut builder = BandBuilder::new();
        builder.add_run(&run(&[("z", true), ("b", true), ("only1", true)]));
        builder.add_run(&run(&[("b", false), ("only2", true), ("z", true)]));
        builder.add_run(&run(&[("z", true), ("b", true)]));
        let band = builder.finish().expect("band");
        assert_eq!(band.scenarios, vec!["b", "z"]);
        assert_eq!(band.clean_in_all_runs, vec!["z"]);
        assert_eq!(band.per_run, vec![1.0, 0.5, 1.0]);
    }

    #[test]
    fn repeated_key_with_a_failing_trace_is_not_clean() {
        // 0.4.1 kept the last (clean) trace and built band [1.00, 1.00]; the failure was hidden.
        let dup = run(&[("p", false), ("p", true), ("p", true), ("p", true)]);
        let mut builder = BandBuilder::new();
        let digest = builder.add_run(&dup);
        assert_eq!(digest.repeated_keys, vec!["p"]);
        // The per-run line keeps 0.4.1's arithmetic: one clean key over four traces.
        assert_eq!(digest.line_clean_rate, 0.25);
        builder.add_run(&dup);
        let band = builder.finish().expect("band");
        assert_eq!(band.per_run, vec![0.0, 0.0]);
        assert!(band.clean_in_all_runs.is_empty());
    }

    #[test]
    fn build_errors() {
        let mut one = BandBuilder::new();
        one.add_run(&run(&[("a", true)]));
        assert_eq!(one.finish(), Err(GateError::TooFewRuns(1)));
        assert_eq!(
            GateError::TooFewRuns(1).to_string(),
            "a band needs at least 2 baseline runs, got 1"
        );

        let mut mixed = BandBuilder::new();
        mixed.add_run(&run(&[("a", true)]));
        let mut other = run(&[("a", true)]);
        other.checks = vec!["search_loop".into()];
        mixed.add_run(&other);
        assert_eq!(mixed.finish(), Err(GateError::MixedRuns));

        let mut disjoint = BandBuilder::new();
        disjoint.add_run(&run(&[("a", true)]));
        disjoint.add_run(&run(&[("b", true)]));
        assert_eq!(disjoint.finish(), Err(GateError::NoSharedScenarios));
    }

    /// 100 runs × 1,000 scenarios added one run at a time, as `baseline` streams them: per-run rates,
    /// the scenarios clean in every run and pooled usage come out of the running state alone. (The
    /// million-trace scale of `baseline` is measured by `scripts/bench`, not here.)
    #[test]
    fn hundred_runs_build_one_run_at_a_time() {
        const SCENARIOS: usize = 1_000;
        // 211 is prime and above the run count, so about half the scenarios are dirty in some run
        // and the rest are clean in all of them.
        let dirty = |scenario: usize, run: usize| (scenario * 7 + run * 13).is_multiple_of(211);
        let mut builder = BandBuilder::new();
        for r in 0..100 {
            let mut summary = run(&[]);
            summary.trace_count = SCENARIOS;
            summary.scenario_clean = (0..SCENARIOS)
                .map(|i| (format!("scenario-{i:05}"), !dirty(i, r)))
                .collect();
            summary.usage[1] = (0..1_000).map(|i| f64::from(i % 500)).collect();
            builder.add_run(&summary);
        }
        let band = builder.finish().expect("band");
        assert_eq!(band.scenarios.len(), SCENARIOS);
        for (r, rate) in band.per_run.iter().enumerate() {
            let clean = (0..SCENARIOS).filter(|&i| !dirty(i, r)).count();
            assert_eq!(*rate, clean as f64 / SCENARIOS as f64);
        }
        let clean_in_all = (0..SCENARIOS)
            .filter(|&i| (0..100).all(|r| !dirty(i, r)))
            .count();
        assert!((SCENARIOS / 4..SCENARIOS * 3 / 4).contains(&clean_in_all));
        assert_eq!(band.clean_in_all_runs.len(), clean_in_all);
        assert_eq!(band.usage[1], Some(249.5));
    }

    #[test]
    fn few_runs_note_below_three() {
        assert_eq!(
            few_runs_note(2).as_deref(),
            Some("note: 2 baseline runs measure noise poorly; use 3 or more")
        );
        assert_eq!(few_runs_note(3), None);
    }

    fn minimal_band() -> Value {
        json!({
            "judge": "none", "checks": ["search_loop"], "runs": 2,
            "scenarios": ["a", "b"],
            "clean_rate": {"min": 1, "max": 1},
            "clean_in_all_runs": ["a", "b"]
        })
    }

    #[test]
    fn band_file_keeps_values_as_read() {
        let band = BandFile::from_value(Path::new("./b.json"), &minimal_band()).expect("band");
        assert_eq!(band.min, json!(1));
        assert_eq!(band.per_run, vec![1.0, 1.0]);
        assert_eq!(band.runs_text(), "2");
        assert!(band.usage.is_empty());
    }

    #[test]
    fn unusable_band_files_name_the_file_and_the_key() {
        let path = Path::new("./gate//band.json");
        let err = |v: Value| {
            BandFile::from_value(path, &v)
                .expect_err("must fail")
                .to_string()
        };
        assert_eq!(err(json!({})), "gate/band.json: the band is empty");
        assert_eq!(err(json!(null)), "gate/band.json: the band is empty");
        assert_eq!(
            err(json!([1])),
            "gate/band.json: the band is not a JSON object"
        );
        for key in ["judge", "checks", "runs", "scenarios", "clean_in_all_runs"] {
            let mut band = minimal_band();
            band.as_object_mut().expect("object").remove(key);
            assert_eq!(
                err(band),
                format!("gate/band.json: the band has no \"{key}\"")
            );
        }
        let mut band = minimal_band();
        band["scenarios"] = json!([]);
        assert_eq!(
            err(band),
            "gate/band.json: the band's \"scenarios\" is empty"
        );
        let mut band = minimal_band();
        band["clean_rate"]
            .as_object_mut()
            .expect("object")
            .remove("max");
        assert_eq!(
            err(band),
            "gate/band.json: the band has no \"clean_rate.max\""
        );
        let mut band = minimal_band();
        band["clean_rate"]["min"] = json!("high");
        assert_eq!(
            err(band),
            "gate/band.json: the band's \"clean_rate.min\" must be a number"
        );
    }

    #[test]
    fn band_fields_out_of_range_or_inconsistent_name_the_field() {
        let path = Path::new("band.json");
        let cases: [(&str, Value, &str); 10] = [
            ("/clean_rate/min", json!(-1), "clean_rate.min"),
            ("/clean_rate/min", json!(1.5), "clean_rate.min"),
            ("/clean_rate/max", json!(2), "clean_rate.max"),
            ("/clean_rate/max", json!(f64::NAN), "clean_rate.max"),
            ("/runs", json!(0), "runs"),
            ("/runs", json!(-1), "runs"),
            ("/runs", json!(2.5), "runs"),
            ("/clean_rate/per_run", json!([]), "clean_rate.per_run"),
            (
                "/clean_rate/per_run",
                json!([1, 1, 1]),
                "clean_rate.per_run",
            ),
            (
                "/clean_rate/per_run",
                json!([1, -0.5]),
                "clean_rate.per_run",
            ),
        ];
        for (pointer, value, key) in cases {
            let mut band = minimal_band();
            let (parent, key_name) = pointer.rsplit_once('/').expect("pointer");
            band.pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("parent")
                .insert(key_name.to_string(), value.clone());
            let err = BandFile::from_value(path, &band)
                .expect_err(&format!("{pointer} = {value} must be refused"))
                .to_string();
            assert!(
                err.starts_with(&format!("band.json: the band's \"{key}\" must be")),
                "{err}"
            );
        }
        let mut band = minimal_band();
        band["clean_rate"] = json!({"min": 0.9, "max": 0.5});
        let err = BandFile::from_value(path, &band)
            .expect_err("min > max")
            .to_string();
        assert!(
            err.contains("\"clean_rate.min\" must be at most clean_rate.max"),
            "{err}"
        );
        let mut band = minimal_band();
        band["clean_rate"] = json!({"min": 0.5, "max": 1, "per_run": [0.5, 1]});
        assert!(BandFile::from_value(path, &band).is_ok());
    }

    #[test]
    fn keys_of_the_wrong_shape_name_the_key_and_null_optional_keys_are_absent() {
        let path = Path::new("band.json");
        let err = |pointer: &str, value: Value| {
            let mut band = minimal_band();
            let (parent, key) = pointer.rsplit_once('/').expect("pointer");
            band.pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("parent")
                .insert(key.to_string(), value);
            BandFile::from_value(path, &band)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        // A list is not an object, even with the right number of members.
        let shape = |key: &str| Err(format!("band.json: the band's \"{key}\" must be "));
        let starts = |got: Result<(), String>, want: Result<(), String>| match (&got, &want) {
            (Err(g), Err(w)) => assert!(g.starts_with(w.as_str()), "{g}"),
            _ => assert_eq!(got, want),
        };
        starts(
            err("/clean_rate", json!([0.5, 1, 0.7, [0.5, 1]])),
            shape("clean_rate"),
        );
        starts(err("/usage", json!([1])), shape("usage"));
        starts(err("/pass_k", json!([2, [[1, 1]]])), shape("pass_k"));
        starts(
            err("/pass_k", json!({"k": 2.0, "per_run": [[1, 1]]})),
            shape("pass_k"),
        );
        starts(
            err("/pass_k", json!({"k": 0, "per_run": [[]]})),
            shape("pass_k"),
        );
        starts(
            err("/pass_k", json!({"k": 2, "per_run": [[1]]})),
            shape("pass_k"),
        );
        starts(
            err("/pass_k", json!({"k": 1, "per_run": []})),
            shape("pass_k"),
        );
        starts(
            err("/scenario_clean_runs", json!([3, 0])),
            shape("scenario_clean_runs"),
        );
        // `null` stands for absent where a key is optional, and is kept as written where it is not.
        for key in ["usage", "pass_k", "scenario_clean_runs"] {
            assert_eq!(err(&format!("/{key}"), Value::Null), Ok(()), "{key}");
        }
        assert_eq!(err("/clean_rate/per_run", Value::Null), Ok(()));
        assert_eq!(err("/judge", Value::Null), Ok(()));
        starts(err("/runs", Value::Null), shape("runs"));
        let mut band = minimal_band();
        band["pass_k"] = json!({"k": 2, "per_run": [[1, 0.5], [1, 1]]});
        band["usage"] = json!({"tokens": 10, "cost_usd": null});
        band["scenario_clean_runs"] = json!([2, 1]);
        let read = BandFile::from_value(path, &band).expect("band");
        assert_eq!(read.pass_k.map(|p| (p.k, p.per_run.len())), Some((2, 2)));
        assert_eq!(
            read.usage,
            [
                ("tokens".to_string(), json!(10)),
                ("cost_usd".to_string(), Value::Null)
            ]
        );
        assert_eq!(read.clean_runs, Some(vec![2, 1]));
    }
}
