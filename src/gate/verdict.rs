//! The gate: a candidate run judged against a band file.
//!
//! [`evaluate`] decides PASS / FAIL / INCONCLUSIVE with 0.4.1's thresholds, the statistics of
//! [`super::stats`], the policy hard block, regressions, missing scenarios, usage deltas and warnings.
//! [`Gate::to_wire`] is the `gate` object of the JSON report and verdict.json;
//! [`Gate::terminal_lines`] are the lines `check --band` prints. Writing them is the CLI's job.

use serde_json::Value;

use super::band::BandFile;
use super::decision::{GateMode, PairedGate};
use super::stats::{ALPHA, GateStats, POWER, test_drop};
use super::{MEASURES, RunSummary, ScenarioTally, pooled_mean, repeated_keys_warning};
use crate::compat::reason::{float_repr, fmt_fixed, py_repr, py_str};
use crate::compat::value::{py_truthy, round_half_even};
use crate::report::format::{self, GateBlock, GateStatsBlock};

/// Slack on the thresholds so that a rate equal to a threshold is not lost to rounding.
const EPSILON: f64 = 1e-9;

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
    pub warnings: Vec<String>,
    /// Which test decides `verdict` ([`GateMode::Band`] unless `--gate paired` or `both`).
    pub mode: GateMode,
    /// The band gate's own verdict; equals `verdict` in [`GateMode::Band`].
    pub band_verdict: Verdict,
    /// The paired gate and intervals, outside [`GateMode::Band`].
    pub paired: Option<PairedGate>,
    /// `pass^k` when `--metric pass^k` put pass^k in place of the clean rate.
    pub metric: Option<String>,
    /// Band `clean_rate.min` and `max` as numbers, for the terminal line.
    lo: f64,
    hi: f64,
}

/// Judges a candidate run against a band.
pub fn evaluate(band: &BandFile, candidate: &RunSummary) -> Gate {
    let tally = ScenarioTally::new(&candidate.scenario_clean);
    let is_clean = |key: &Value| key.as_str().is_some_and(|k| tally.is_clean(k));
    let clean = band.scenarios.iter().filter(|s| is_clean(s)).count();
    let rate = clean as f64 / band.scenarios.len() as f64;
    evaluate_rate(band, candidate, rate)
}

/// Judges a candidate whose rate on the band's metric is `rate` (the clean rate, or pass^k when the
/// band's rates have been swapped for pass^k by [`super::decision`]).
pub(crate) fn evaluate_rate(band: &BandFile, candidate: &RunSummary, rate: f64) -> Gate {
    let tally = ScenarioTally::new(&candidate.scenario_clean);
    let is_clean = |key: &Value| key.as_str().is_some_and(|k| tally.is_clean(k));
    let n = band.scenarios.len();
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
    let hard_block = !candidate.policy_violations.is_empty()
        || candidate
            .workflow_violations
            .as_ref()
            .is_some_and(|v| !v.is_empty());
    let verdict = if hard_block || rate < fail_threshold - EPSILON {
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
        workflow_violations: candidate.workflow_violations.clone(),
        warnings,
        mode: GateMode::Band,
        band_verdict: verdict,
        paired: None,
        metric: None,
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
    /// The `gate` object of the JSON report and verdict.json ([`GateBlock`] gives its keys).
    pub fn to_wire(&self) -> GateBlock {
        let paired = self.paired.as_ref();
        GateBlock {
            verdict: self.verdict.as_str().to_string(),
            clean_rate: self.clean_rate,
            usage: self
                .usage
                .iter()
                .map(|delta| {
                    (
                        delta.measure.clone(),
                        format::UsageDelta {
                            baseline: delta.baseline.clone(),
                            candidate: delta.candidate,
                            delta_pct: delta.delta_pct,
                        },
                    )
                })
                .collect(),
            band: self.band.clone(),
            pass_threshold: self.pass_threshold,
            fail_threshold: self.fail_threshold,
            stats: GateStatsBlock {
                baseline_mean: self.stats.baseline_mean,
                drop: self.stats.drop,
                p_value: self.stats.p_value,
                alpha: ALPHA,
                power: POWER,
                required_n: self.stats.required_n,
                additional_n: self.stats.additional_n,
            },
            regressions: self.regressions.clone(),
            missing: self.missing.clone(),
            policy_violations: self.policy_violations.clone(),
            workflow_violations: self.workflow_violations.clone(),
            warnings: self.warnings.clone(),
            // Added after 0.4.1's keys, and only with --metric pass^k.
            metric: self.metric.clone(),
            // Added after 0.4.1's keys, and only outside the default mode.
            decided_by: paired.map(|_| self.mode.as_str().to_string()),
            band_verdict: paired.map(|_| self.band_verdict.as_str().to_string()),
            paired: paired.map(PairedGate::to_wire),
            intervals: paired.map(PairedGate::intervals_wire),
        }
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
        // Outside the default mode the band line names its own verdict and a last line the decision.
        let prefix = if self.paired.is_some() {
            "band gate"
        } else {
            "gate"
        };
        let mut stdout = vec![format!(
            "{prefix}: {} \u{b7} {} {} vs band [{}, {}] from {} baseline runs \u{b7} fail below {} \u{b7} p={}",
            self.band_verdict.as_str(),
            self.metric.as_deref().unwrap_or("clean rate"),
            fmt_fixed(self.clean_rate, 2),
            fmt_fixed(self.lo, 2),
            fmt_fixed(self.hi, 2),
            band_runs_text,
            fmt_fixed(self.fail_threshold, 2),
            fmt_fixed(self.stats.p_value, 3)
        )];
        if self.band_verdict == Verdict::Inconclusive {
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
        if let Some(violations) = self.workflow_violations.as_ref().filter(|v| !v.is_empty()) {
            stdout.push(format!(
                "gate: FAIL \u{b7} workflow violation in {} trace(s) (hard block)",
                violations.len()
            ));
        }
        if !self.regressions.is_empty() {
            let keys: Vec<String> = self.regressions.iter().map(py_str).collect();
            stdout.push(format!(
                "regressions (clean in every baseline, not now): {}",
                keys.join(", ")
            ));
        }
        if let Some(paired) = &self.paired {
            stdout.extend(paired.lines());
            let by = match self.mode {
                GateMode::Both => "band and paired",
                _ => "paired",
            };
            stdout.push(format!("gate: {} (decided by {by})", self.verdict.as_str()));
        }
        (stderr, stdout)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::gate::BandBuilder;
    use crate::gate::fixtures::{self, default_checks};

    fn glm_band() -> BandFile {
        let mut builder = BandBuilder::new();
        builder.add_run(&fixtures::glm_run1());
        builder.add_run(&fixtures::glm_run2());
        let band = builder.finish().expect("band");
        BandFile::from_value(
            Path::new("band.json"),
            &serde_json::to_value(band.to_wire()).unwrap(),
        )
        .expect("band file")
    }

    fn candidate(items: &[(&str, bool)]) -> RunSummary {
        RunSummary {
            judge: "none".into(),
            checks: default_checks(),
            trace_count: items.len(),
            scenario_clean: items.iter().map(|(k, c)| (k.to_string(), *c)).collect(),
            policy_violations: Vec::new(),
            workflow_violations: None,
            usage: Default::default(),
        }
    }

    /// An all-clean two-run band over `s00`..`s29`, as in docs/compatibility.md §15.3.
    fn all_clean_band() -> BandFile {
        let keys: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
        let value = json!({
            "judge": "none", "checks": default_checks(), "runs": 2, "n": 30,
            "scenarios": keys, "clean_rate": {"min": 1, "max": 1, "mean": 1, "per_run": [1, 1]},
            "clean_in_all_runs": keys, "usage": {"tokens": null, "latency_ms": null, "cost_usd": null},
        });
        BandFile::from_value(Path::new("band.json"), &value).expect("band file")
    }

    fn with_failures(failures: usize) -> RunSummary {
        let keys: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
        let items: Vec<(&str, bool)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i >= failures))
            .collect();
        candidate(&items)
    }

    /// Reference: `faultgate check examples/gate/candidate_gpt.json --band <glm band> --json r.json`.
    #[test]
    fn gpt_candidate_against_the_glm_band_matches_the_reference() {
        let band = glm_band();
        let gate = evaluate(&band, &fixtures::candidate_gpt());
        let expected = json!({
            "verdict": "FAIL",
            "clean_rate": 0.4,
            "usage": {"latency_ms": {"baseline": 16483.333333333332, "candidate": 21900.0, "delta_pct": 32.9}},
            "band": [0.9333333333333333, 0.9333333333333333],
            "pass_threshold": 0.9,
            "fail_threshold": 0.8333333333333334,
            "stats": {
                "baseline_mean": 0.9333333333333333, "drop": 0.5333333333333333,
                "p_value": 1.0099101221960893e-08, "alpha": 0.05, "power": 0.8,
                "required_n": null, "additional_n": null
            },
            "regressions": ["r-0208", "r-0214", "r-0216", "r-0224", "r-0226", "r-0232", "r-0258", "r-0263",
                "r-0279", "r-0286", "r-0292", "r-0317", "r-0320", "r-0322", "r-0330", "r-0344", "r-0350"],
            "missing": [],
            "policy_violations": [],
            "warnings": ["band built from 2 baseline runs; use 3 or more for a stable noise estimate"]
        });
        assert_eq!(serde_json::to_value(gate.to_wire()).unwrap(), expected);
        assert_eq!(
            serde_json::to_string(&serde_json::to_value(gate.to_wire()).unwrap()).expect("json"),
            serde_json::to_string(&expected).expect("json"),
            "key order"
        );
        let (stderr, stdout) = gate.terminal_lines(&band.runs_text());
        assert_eq!(
            stderr,
            ["warning: band built from 2 baseline runs; use 3 or more for a stable noise estimate"]
        );
        assert_eq!(
            stdout,
            [
                "gate: FAIL · clean rate 0.40 vs band [0.93, 0.93] from 2 baseline runs · fail below 0.83 · p=0.000",
                "regressions (clean in every baseline, not now): r-0208, r-0214, r-0216, r-0224, r-0226, r-0232, \
r-0258, r-0263, r-0279, r-0286, r-0292, r-0317, r-0320, r-0322, r-0330, r-0344, r-0350",
            ]
        );
        assert_eq!(gate.verdict.exit_code(), 1);
    }

    /// Reference: the same candidate with `--golden` against the shipped, older examples/gate/band.json.
    #[test]
    fn shipped_band_warns_about_its_check_list() {
        let text = std::fs::read_to_string("examples/gate/band.json").expect("shipped band");
        let value: Value = serde_json::from_str(&text).expect("band json");
        let band =
            BandFile::from_value(Path::new("examples/gate/band.json"), &value).expect("band file");
        let mut run = fixtures::candidate_gpt();
        run.checks
            .extend(["wrong_answer".to_string(), "truncation".to_string()]);
        let failing = [
            "r-0336", "r-0221", "r-0286", "r-0232", "r-0216", "r-0292", "r-0214", "r-0263",
            "r-0344", "r-0320", "r-0350", "r-0224", "r-0332", "r-0279", "r-0330", "r-0226",
            "r-0258", "r-0324", "r-0322", "r-0317", "r-0208",
        ];
        for (key, clean) in &mut run.scenario_clean {
            *clean = !failing.contains(&key.as_str());
        }
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.clean_rate, 0.3);
        assert_eq!(gate.pass_threshold, 0.7666666666666667);
        assert_eq!(gate.fail_threshold, 0.7000000000000001);
        assert_eq!(gate.stats.baseline_mean, 0.8333333333333334);
        assert_eq!(gate.stats.drop, 0.5333333333333334);
        assert_eq!(gate.stats.p_value, 3.4285169936421056e-07);
        assert_eq!(gate.regressions.len(), 15);
        assert_eq!(gate.usage[0].delta_pct, 32.9);
        assert_eq!(
            gate.warnings,
            [
                "band was built with judge=none checks=['search_loop', 'abstention', 'policy', 'wrong_answer', \
'truncation']; this run used judge=none checks=['search_loop', 'abstention', 'policy', 'repeated_call', \
'unrecovered_tool_error', 'context_overflow', 'wrong_answer', 'truncation']",
                "band built from 2 baseline runs; use 3 or more for a stable noise estimate",
            ]
        );
        let (_, stdout) = gate.terminal_lines(&band.runs_text());
        assert_eq!(
            stdout[0],
            "gate: FAIL · clean rate 0.30 vs band [0.80, 0.87] from 2 baseline runs · fail below 0.70 · p=0.000"
        );
    }

    #[test]
    fn worked_numbers_give_pass_inconclusive_fail_fail() {
        let band = all_clean_band();
        let expected = [
            (1, Verdict::Pass, 0.1545540585735654),
            (2, Verdict::Inconclusive, 0.07161745376233486),
            (3, Verdict::Fail, 0.03394457743091461),
            (4, Verdict::Fail, 0.015843194269896888),
        ];
        for (failures, verdict, p_value) in expected {
            let gate = evaluate(&band, &with_failures(failures));
            assert_eq!(gate.verdict, verdict, "{failures} failures");
            assert_eq!(gate.stats.p_value, p_value);
            assert_eq!(gate.regressions.len(), failures);
            let inconclusive = verdict == Verdict::Inconclusive;
            assert_eq!(gate.stats.required_n.is_some(), inconclusive);
            assert_eq!(gate.stats.additional_n.is_some(), inconclusive);
        }
    }

    #[test]
    fn inconclusive_lines_match_the_reference() {
        let band = all_clean_band();
        let gate = evaluate(&band, &with_failures(2));
        assert_eq!(gate.verdict.exit_code(), 0);
        assert_eq!(gate.band, [json!(1), json!(1)]);
        let (_, stdout) = gate.terminal_lines(&band.runs_text());
        assert_eq!(
            stdout,
            [
                "gate: INCONCLUSIVE · clean rate 0.93 vs band [1.00, 1.00] from 2 baseline runs · fail below 0.90 · p=0.072",
                "inconclusive: a drop of 0.07 needs 89 scenarios to tell from noise (alpha 0.05, power 0.80) · run 59 more",
                "regressions (clean in every baseline, not now): s00, s01",
            ]
        );
    }

    /// Reference: a hand-written 3-run band with spread, a scenario the candidate lacks, a regression key
    /// outside `scenarios`, and usage entries that are zero, null or unknown.
    fn spread_band() -> BandFile {
        let mut scenarios: Vec<String> = (0..20).map(|i| format!("s{i:02}")).collect();
        scenarios.push("zz".into());
        let value = json!({
            "judge": "none", "checks": default_checks(), "runs": 3, "n": 99, "scenarios": scenarios,
            "clean_rate": {"min": 0.95, "max": 1, "per_run": [0.95, 1, 0.9761904761904762]},
            "clean_in_all_runs": ["s00", "s01", "s05", "q"],
            "usage": {"cost_usd": 0.2, "latency_ms": 0, "bogus": 5, "tokens": null},
        });
        BandFile::from_value(Path::new("hb.json"), &value).expect("band file")
    }

    fn spread_candidate(failing: &[usize]) -> RunSummary {
        let keys: Vec<String> = (0..20).map(|i| format!("s{i:02}")).collect();
        let mut items: Vec<(&str, bool)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), !failing.contains(&i)))
            .collect();
        items.push(("extra", false));
        let mut run = candidate(&items);
        run.usage[2] = (0..20).map(|i| 0.1 * f64::from(i)).chain([0.5]).collect();
        run
    }

    #[test]
    fn fail_by_significance_with_run_spread() {
        let band = spread_band();
        let gate = evaluate(&band, &spread_candidate(&[1, 2, 3]));
        let expected = json!({
            "verdict": "FAIL", "clean_rate": 0.8095238095238095,
            "usage": {"cost_usd": {"baseline": 0.2, "candidate": 0.9285714285714286, "delta_pct": 364.3}},
            "band": [0.95, 1], "pass_threshold": 0.9023809523809523, "fail_threshold": 0.8071428571428572,
            "stats": {"baseline_mean": 0.9753968253968254, "drop": 0.16587301587301584,
                "p_value": 0.034735753288469784, "alpha": 0.05, "power": 0.8,
                "required_n": null, "additional_n": null},
            "regressions": ["s01", "q"], "missing": ["zz"], "policy_violations": [],
            "warnings": ["1 band scenario(s) absent from this run, counted as not clean"]
        });
        assert_eq!(serde_json::to_value(gate.to_wire()).unwrap(), expected);
        let (stderr, stdout) = gate.terminal_lines(&band.runs_text());
        assert_eq!(
            stderr,
            ["warning: 1 band scenario(s) absent from this run, counted as not clean"]
        );
        assert_eq!(
            stdout[0],
            "gate: FAIL · clean rate 0.81 vs band [0.95, 1.00] from 3 baseline runs · fail below 0.81 · p=0.035"
        );
    }

    #[test]
    fn inconclusive_with_run_spread() {
        let band = spread_band();
        let gate = evaluate(&band, &spread_candidate(&[1, 2]));
        assert_eq!(gate.verdict, Verdict::Inconclusive);
        assert_eq!(gate.clean_rate, 0.8571428571428571);
        assert_eq!(gate.stats.drop, 0.11825396825396828);
        assert_eq!(gate.stats.p_value, 0.07634077216035351);
        assert_eq!(gate.stats.required_n, Some(67));
        assert_eq!(gate.stats.additional_n, Some(46));
        let (_, stdout) = gate.terminal_lines(&band.runs_text());
        assert_eq!(
            stdout[1],
            "inconclusive: a drop of 0.12 needs 67 scenarios to tell from noise (alpha 0.05, power 0.80) · run 46 more"
        );
    }

    #[test]
    fn policy_violation_blocks_an_otherwise_passing_candidate() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        run.policy_violations = vec!["trace-outside-the-band".into()];
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.policy_violations, ["trace-outside-the-band"]);
        assert_eq!(gate.stats.required_n, None);
        let (_, stdout) = gate.terminal_lines("2");
        assert_eq!(
            stdout[1],
            "gate: FAIL · policy violation in 1 trace(s) (hard block)"
        );
    }

    #[test]
    fn workflow_violation_blocks_an_otherwise_passing_candidate() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        run.workflow_violations = Some(vec!["t-skipped".into()]);
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.stats.required_n, None);
        let (_, stdout) = gate.terminal_lines("2");
        assert_eq!(
            stdout[1..],
            ["gate: FAIL · workflow violation in 1 trace(s) (hard block)"]
        );
        let value = serde_json::to_value(gate.to_wire()).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys[keys.len() - 3..],
            ["policy_violations", "workflow_violations", "warnings"]
        );
        assert_eq!(value["workflow_violations"], json!(["t-skipped"]));
    }

    #[test]
    fn workflow_check_without_violations_passes_and_is_listed() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        run.workflow_violations = Some(Vec::new());
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.terminal_lines("2").1.len(), 1);
        assert_eq!(
            serde_json::to_value(gate.to_wire()).unwrap()["workflow_violations"],
            json!([])
        );
        // Without the workflow check the gate object keeps 0.4.1's keys.
        let plain = serde_json::to_value(evaluate(&band, &with_failures(0)).to_wire()).unwrap();
        assert!(plain.get("workflow_violations").is_none());
    }

    #[test]
    fn repeated_key_with_a_failing_trace_is_a_regression() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        // 0.4.1 kept this last, clean trace and passed; here s05 stays failed.
        run.scenario_clean.insert(5, ("s05".into(), false));
        run.trace_count += 1;
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.regressions, [json!("s05")]);
        assert_eq!(
            gate.warnings.last().map(String::as_str),
            Some(
                "1 scenario key(s) carried by more than one trace, each clean only if all its traces are: s05"
            )
        );
    }

    #[test]
    fn candidate_identical_to_a_baseline_run_passes() {
        let band = glm_band();
        let gate = evaluate(&band, &fixtures::glm_run2());
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.stats.p_value, 0.5);
        assert!(gate.missing.is_empty());
        assert!(gate.regressions.is_empty());
    }

    #[test]
    fn all_failing_candidate_regresses_everything() {
        let band = glm_band();
        let mut run = fixtures::glm_run1();
        for (_, clean) in &mut run.scenario_clean {
            *clean = false;
        }
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.clean_rate, 0.0);
        assert_eq!(gate.regressions.len(), 26);
    }

    #[test]
    fn band_without_per_run_uses_min_and_max() {
        let value = json!({
            "judge": "none", "checks": default_checks(), "runs": 2, "scenarios": ["a", "b", "c"],
            "clean_rate": {"min": 0.8, "max": 0.9}, "clean_in_all_runs": [],
        });
        let band = BandFile::from_value(Path::new("b.json"), &value).expect("band file");
        let gate = evaluate(&band, &candidate(&[("a", true), ("b", true), ("c", true)]));
        // (0.8 + 0.9) / 2 in doubles, as 0.4.1 computes it.
        assert_eq!(gate.stats.baseline_mean, 0.8500000000000001);
        assert!(gate.warnings.iter().any(|w| w.contains("use 3 or more")));
    }
}
