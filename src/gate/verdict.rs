//! The gate: a candidate run judged against a band file.
//!
//! [`evaluate`] decides PASS / FAIL / INCONCLUSIVE with 0.4.1's thresholds, the statistics of
//! [`super::stats`], the policy hard block, regressions, missing scenarios, usage deltas and warnings.
//! [`Gate::to_json`] is the `gate` object of the JSON report and verdict.json;
//! [`Gate::terminal_lines`] are the lines `check --band` prints. Writing them is the CLI's job.

use serde_json::{Map, Value};

use super::band::BandFile;
use super::stats::{ALPHA, GateStats, POWER, test_drop};
use super::{MEASURES, RunSummary, ScenarioTally, pooled_mean, repeated_keys_warning};
use crate::pyfmt::{float_repr, fmt_fixed, py_repr, py_str, py_truthy, round_half_even};

/// Slack on the thresholds so that a rate equal to a threshold is not lost to rounding.
const EPSILON: f64 = 1e-9;

/// The gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
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

/// The outcome of a candidate against a band.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub verdict: Verdict,
    /// Share of band scenarios clean in the candidate (absent ones count as not clean).
    pub clean_rate: f64,
    pub usage: Vec<UsageDelta>,
    /// The band's `clean_rate.min` and `clean_rate.max`, as read.
    pub band: [Value; 2],
    pub pass_threshold: f64,
    pub fail_threshold: f64,
    /// `required_n` and `additional_n` are set only for INCONCLUSIVE.
    pub stats: GateStats,
    /// Band `clean_in_all_runs` entries not clean now, in band order.
    pub regressions: Vec<Value>,
    /// Band scenarios the candidate does not have, in band order.
    pub missing: Vec<Value>,
    /// Candidate trace ids where `policy` fired: each one fails the gate.
    pub policy_violations: Vec<String>,
    pub warnings: Vec<String>,
    /// Band `clean_rate.min` and `max` as numbers, for the terminal line.
    lo: f64,
    hi: f64,
}

/// Judges a candidate run against a band.
pub fn evaluate(band: &BandFile, candidate: &RunSummary) -> Gate {
    let tally = ScenarioTally::new(&candidate.scenario_clean);
    let is_clean = |key: &Value| key.as_str().is_some_and(|k| tally.is_clean(k));
    let n = band.scenarios.len();
    let clean = band.scenarios.iter().filter(|s| is_clean(s)).count();
    let rate = clean as f64 / n as f64;
    let missing: Vec<Value> = band
        .scenarios
        .iter()
        .filter(|s| !s.as_str().is_some_and(|k| tally.contains(k)))
        .cloned()
        .collect();
    let regressions: Vec<Value> = band
        .clean_in_all_runs
        .iter()
        .filter(|s| !is_clean(s))
        .cloned()
        .collect();

    let n_f = n as f64;
    let pass_threshold = band.lo - 1.0 / n_f;
    let fail_threshold = band.lo - 3.0 / n_f;
    let mut stats = test_drop(&band.per_run, rate, n);
    let verdict = if !candidate.policy_violations.is_empty() || rate < fail_threshold - EPSILON {
        Verdict::Fail
    } else if rate >= pass_threshold - EPSILON {
        Verdict::Pass
    } else if stats.p_value < ALPHA {
        Verdict::Fail
    } else {
        Verdict::Inconclusive
    };
    if verdict != Verdict::Inconclusive {
        stats.required_n = None;
        stats.additional_n = None;
    }

    let mut warnings = Vec::new();
    let candidate_checks = Value::from(candidate.checks.clone());
    if band.judge != candidate.judge.as_str() || band.checks != candidate_checks {
        warnings.push(format!(
            "band was built with judge={} checks={}; this run used judge={} checks={}",
            py_str(&band.judge),
            py_repr(&band.checks),
            candidate.judge,
            py_repr(&candidate_checks)
        ));
    }
    if !missing.is_empty() {
        warnings.push(format!(
            "{} band scenario(s) absent from this run, counted as not clean",
            missing.len()
        ));
    }
    if band.runs_number < 3.0 {
        warnings.push(format!(
            "band built from {} baseline runs; use 3 or more for a stable noise estimate",
            band.runs_text()
        ));
    }
    let repeated = tally.repeated_keys();
    if !repeated.is_empty() {
        warnings.push(repeated_keys_warning(&repeated));
    }

    Gate {
        verdict,
        clean_rate: rate,
        usage: usage_deltas(band, candidate),
        band: [band.min.clone(), band.max.clone()],
        pass_threshold,
        fail_threshold,
        stats,
        regressions,
        missing,
        policy_violations: candidate.policy_violations.clone(),
        warnings,
        lo: band.lo,
        hi: band.hi,
    }
}

fn usage_deltas(band: &BandFile, candidate: &RunSummary) -> Vec<UsageDelta> {
    band.usage
        .iter()
        .filter_map(|(measure, baseline)| {
            let base = baseline.as_f64().filter(|_| py_truthy(baseline))?;
            let index = MEASURES.iter().position(|m| m == measure)?;
            let mean = pooled_mean(&candidate.usage[index])?;
            Some(UsageDelta {
                measure: measure.clone(),
                baseline: baseline.clone(),
                candidate: mean,
                delta_pct: round_half_even(100.0 * (mean - base) / base, 1),
            })
        })
        .collect()
}

impl Gate {
    /// The `gate` object of the JSON report and verdict.json, keys in 0.4.1's order.
    pub fn to_json(&self) -> Value {
        let mut usage = Map::new();
        for delta in &self.usage {
            let mut entry = Map::new();
            entry.insert("baseline".into(), delta.baseline.clone());
            entry.insert("candidate".into(), Value::from(delta.candidate));
            entry.insert("delta_pct".into(), Value::from(delta.delta_pct));
            usage.insert(delta.measure.clone(), Value::Object(entry));
        }
        let mut stats = Map::new();
        stats.insert(
            "baseline_mean".into(),
            Value::from(self.stats.baseline_mean),
        );
        stats.insert("drop".into(), Value::from(self.stats.drop));
        stats.insert("p_value".into(), Value::from(self.stats.p_value));
        stats.insert("alpha".into(), Value::from(ALPHA));
        stats.insert("power".into(), Value::from(POWER));
        stats.insert("required_n".into(), Value::from(self.stats.required_n));
        stats.insert("additional_n".into(), Value::from(self.stats.additional_n));
        let mut gate = Map::new();
        gate.insert("verdict".into(), Value::from(self.verdict.as_str()));
        gate.insert("clean_rate".into(), Value::from(self.clean_rate));
        gate.insert("usage".into(), Value::Object(usage));
        gate.insert("band".into(), Value::from(self.band.to_vec()));
        gate.insert("pass_threshold".into(), Value::from(self.pass_threshold));
        gate.insert("fail_threshold".into(), Value::from(self.fail_threshold));
        gate.insert("stats".into(), Value::Object(stats));
        gate.insert("regressions".into(), Value::from(self.regressions.clone()));
        gate.insert("missing".into(), Value::from(self.missing.clone()));
        gate.insert(
            "policy_violations".into(),
            Value::from(self.policy_violations.clone()),
        );
        gate.insert("warnings".into(), Value::from(self.warnings.clone()));
        Value::Object(gate)
    }

    /// The lines `check --band` prints: (stderr warnings, stdout gate lines).
    ///
    /// `band_runs_text` is the band's `runs` in str-notation ([`BandFile::runs_text`]).
    pub fn terminal_lines(&self, band_runs_text: &str) -> (Vec<String>, Vec<String>) {
        let stderr = self
            .warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect();
        let mut stdout = vec![format!(
            "gate: {} \u{b7} clean rate {} vs band [{}, {}] from {} baseline runs \u{b7} fail below {} \u{b7} p={}",
            self.verdict.as_str(),
            fmt_fixed(self.clean_rate, 2),
            fmt_fixed(self.lo, 2),
            fmt_fixed(self.hi, 2),
            band_runs_text,
            fmt_fixed(self.fail_threshold, 2),
            fmt_fixed(self.stats.p_value, 3)
        )];
        if self.verdict == Verdict::Inconclusive {
            stdout.push(format!(
                "inconclusive: a drop of {} needs {} scenarios to tell from noise (alpha {}, power {}) \u{b7} run {} more",
                fmt_fixed(self.stats.drop, 2),
                self.stats.required_n.unwrap_or(0),
                float_repr(ALPHA),
                fmt_fixed(POWER, 2),
                self.stats.additional_n.unwrap_or(0)
            ));
        }
        if !self.policy_violations.is_empty() {
            stdout.push(format!(
                "gate: FAIL \u{b7} policy violation in {} trace(s) (hard block)",
                self.policy_violations.len()
            ));
        }
        if !self.regressions.is_empty() {
            let keys: Vec<String> = self.regressions.iter().map(py_str).collect();
            stdout.push(format!(
                "regressions (clean in every baseline, not now): {}",
                keys.join(", ")
            ));
        }
        (stderr, stdout)
    }
}
