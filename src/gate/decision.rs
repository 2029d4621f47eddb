//! `--gate paired` and `--gate both`: the paired test and bootstrap intervals wired onto the band gate.
//!
//! The band gate of [`super::verdict`] always runs and keeps its numbers; this layer adds the paired
//! verdict (see [`super::paired`]) and the intervals (see [`super::bootstrap`]), and decides which
//! verdict the run takes. With the default `--gate band` nothing here runs, so the output stays 0.4.1's.

use serde_json::Value;

use super::bootstrap::{CONFIDENCE, Intervals, RESAMPLES, SEED, scenario_bootstrap};
use super::paired::{Pair, PairedStats, paired_test};
use super::stats::{ALPHA, POWER};
use super::verdict::{Gate, Verdict, evaluate};
use super::{RunSummary, ScenarioTally, band::BandFile};
use crate::compat::reason::{float_repr, fmt_fixed, py_str};
use crate::report::format::{IntervalsBlock, PairedBlock};

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

/// The paired gate's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedGate {
    pub verdict: Verdict,
    pub stats: PairedStats,
    /// Keys of [`PairedStats::regressed`], in band order.
    pub regressed: Vec<Value>,
    /// Keys of [`PairedStats::improved`], in band order.
    pub improved: Vec<Value>,
    /// `required_n` minus the band's scenarios, at least 0.
    pub additional_n: Option<u64>,
    /// Bootstrap intervals of the candidate clean rate and of candidate minus baseline.
    pub intervals: Intervals,
}

/// The paired verdict: FAIL on a hard block or a significant drop; PASS when the drop is at most one
/// scenario's worth (the band gate's pass margin); else INCONCLUSIVE.
pub(crate) fn paired_verdict(stats: &PairedStats, hard_block: bool) -> Verdict {
    if hard_block || stats.p_value < ALPHA {
        Verdict::Fail
    } else if stats.drop * stats.n as f64 <= 1.0 + 1e-9 {
        Verdict::Pass
    } else {
        Verdict::Inconclusive
    }
}

/// The verdict of `--gate both`: FAIL if either fails, else INCONCLUSIVE if either is, else PASS.
pub(crate) fn combine(a: Verdict, b: Verdict) -> Verdict {
    if a == Verdict::Fail || b == Verdict::Fail {
        Verdict::Fail
    } else if a == Verdict::Inconclusive || b == Verdict::Inconclusive {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}

/// The band gate on pass^k: the band's per-run pass^k in place of its clean rates, and the candidate's
/// pass^k over the band's scenarios (a scenario with fewer than k traces, or missing, counts as 0).
///
/// # Errors
///
/// The band has no pass^k (its runs had one trace per scenario).
pub fn evaluate_pass_k(
    band: &BandFile,
    candidate: &RunSummary,
    path: &std::path::Path,
) -> Result<Gate, super::GateError> {
    let pass_k = band
        .pass_k
        .as_ref()
        .ok_or_else(|| super::GateError::NoPassK {
            path: crate::error::display_path(path),
        })?;
    let k = pass_k.k;
    let per_run: Vec<f64> = pass_k
        .per_run
        .iter()
        .map(|run| run[k as usize - 1])
        .collect();
    let lo = per_run.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per_run.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut swapped = band.clone();
    swapped.per_run = per_run;
    swapped.lo = lo;
    swapped.hi = hi;
    swapped.min = Value::from(lo);
    swapped.max = Value::from(hi);
    let tally = ScenarioTally::new(&candidate.scenario_clean);
    let total = band.scenarios.iter().fold(0.0, |acc, key| {
        let t = key.as_str().map(|k| tally.trials(k));
        acc + t.map_or(0.0, |t| {
            if t.trials >= k {
                super::passk::all_pass_probability(t.trials, t.passes, k)
            } else {
                0.0
            }
        })
    });
    let rate = total / band.scenarios.len() as f64;
    let short = band
        .scenarios
        .iter()
        .filter(|key| {
            key.as_str()
                .is_some_and(|name| tally.contains(name) && tally.trials(name).trials < k)
        })
        .count();
    let mut gate = super::verdict::evaluate_rate(&swapped, candidate, rate);
    gate.metric = Some(format!("pass^{k}"));
    if short > 0 {
        gate.warnings.push(format!(
            "{short} band scenario(s) have fewer than {k} traces in this run, counted as pass^{k} 0"
        ));
    }
    Ok(gate)
}

/// Judges a candidate against a band in `mode`; `clean_runs` are the band's per-scenario clean-run
/// counts ([`BandFile::require_clean_runs`]), needed unless the mode is [`GateMode::Band`].
/// `band_gate` is the band gate's outcome ([`evaluate`] or [`evaluate_pass_k`]).
pub fn evaluate_mode(
    band: &BandFile,
    candidate: &RunSummary,
    mode: GateMode,
    clean_runs: Option<&[u32]>,
    band_gate: Option<Gate>,
) -> Gate {
    let mut gate = band_gate.unwrap_or_else(|| evaluate(band, candidate));
    let (GateMode::Paired | GateMode::Both, Some(clean_runs)) = (mode, clean_runs) else {
        return gate;
    };
    let tally = ScenarioTally::new(&candidate.scenario_clean);
    let runs = clean_runs
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(band.runs_number.max(1.0) as u32);
    let pairs: Vec<Pair> = band
        .scenarios
        .iter()
        .zip(clean_runs)
        .map(|(key, &baseline_clean)| Pair {
            baseline_clean,
            candidate_clean: key.as_str().is_some_and(|k| tally.is_clean(k)),
        })
        .collect();
    let stats = paired_test(&pairs, runs);
    let hard_block = !gate.policy_violations.is_empty()
        || gate
            .workflow_violations
            .as_ref()
            .is_some_and(|v| !v.is_empty());
    let verdict = paired_verdict(&stats, hard_block);
    let candidate_values: Vec<f64> = pairs
        .iter()
        .map(|p| f64::from(u8::from(p.candidate_clean)))
        .collect();
    let baseline_values: Vec<f64> = pairs
        .iter()
        .map(|p| f64::from(p.baseline_clean) / f64::from(runs))
        .collect();
    let intervals = scenario_bootstrap(&candidate_values, &baseline_values, RESAMPLES, SEED);
    let keys = |indices: &[usize]| -> Vec<Value> {
        indices.iter().map(|&i| band.scenarios[i].clone()).collect()
    };
    let paired = PairedGate {
        verdict,
        regressed: keys(&stats.regressed),
        improved: keys(&stats.improved),
        additional_n: stats.required_n.map(|r| r.saturating_sub(stats.n as u64)),
        intervals,
        stats,
    };
    gate.band_verdict = gate.verdict;
    gate.verdict = match mode {
        GateMode::Paired => paired.verdict,
        _ => combine(gate.band_verdict, paired.verdict),
    };
    gate.mode = mode;
    gate.paired = Some(paired);
    gate
}

impl PairedGate {
    /// The `paired` object of the gate JSON.
    pub fn to_wire(&self) -> PairedBlock {
        let s = &self.stats;
        PairedBlock {
            verdict: self.verdict.as_str().to_string(),
            method: s.method.as_str().to_string(),
            scenarios: s.n,
            baseline_rate: s.baseline_rate,
            candidate_rate: s.candidate_rate,
            drop: s.drop,
            discordant: s.discordant,
            regressed: self.regressed.clone(),
            improved: self.improved.clone(),
            p_value: s.p_value,
            alpha: ALPHA,
            power: POWER,
            required_n: s.required_n,
            additional_n: self.additional_n,
        }
    }

    /// The `intervals` object of the gate JSON.
    pub fn intervals_wire(&self) -> IntervalsBlock {
        IntervalsBlock {
            confidence: CONFIDENCE,
            method: "scenario bootstrap, percentile".to_string(),
            resamples: RESAMPLES,
            seed: SEED,
            clean_rate: self.intervals.candidate,
            difference: self.intervals.difference,
        }
    }

    /// The stdout lines of the paired gate and the intervals.
    pub fn lines(&self) -> Vec<String> {
        let s = &self.stats;
        let mut lines = vec![format!(
            "paired gate: {} \u{b7} {} regressed, {} improved, {} discordant of {} scenarios \u{b7} {} p={} (alpha {})",
            self.verdict.as_str(),
            self.regressed.len(),
            self.improved.len(),
            s.discordant,
            s.n,
            s.method.as_str(),
            fmt_fixed(s.p_value, 3),
            float_repr(ALPHA)
        )];
        if self.verdict == Verdict::Inconclusive {
            lines.push(format!(
                "inconclusive: the paired test needs {} scenarios to detect a drop of {} (alpha {}, power {}) \u{b7} run {} more",
                s.required_n.unwrap_or(0),
                fmt_fixed(s.drop, 2),
                float_repr(ALPHA),
                fmt_fixed(POWER, 2),
                self.additional_n.unwrap_or(0)
            ));
        }
        let [c_lo, c_hi] = self.intervals.candidate;
        let [d_lo, d_hi] = self.intervals.difference;
        lines.push(format!(
            "interval ({}%, scenario bootstrap): clean rate {} [{}, {}] \u{b7} change from baseline {} [{}, {}]",
            fmt_fixed(CONFIDENCE * 100.0, 0),
            fmt_fixed(s.candidate_rate, 2),
            fmt_fixed(c_lo, 2),
            fmt_fixed(c_hi, 2),
            fmt_fixed(-s.drop, 2),
            fmt_fixed(d_lo, 2),
            fmt_fixed(d_hi, 2)
        ));
        if !self.improved.is_empty() {
            let keys: Vec<String> = self.improved.iter().map(py_str).collect();
            lines.push(format!(
                "improved (clean in no baseline run, clean now): {}",
                keys.join(", ")
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::gate::fixtures::default_checks;

    /// The README's worked example: 100 scenarios, 3 baseline runs. 70 scenarios were clean in every
    /// run, 20 failed in every run, 5 were clean in runs 1 and 2 and 5 in run 1 only (run 3 hit a bad
    /// patch), so the runs' clean rates are 0.80, 0.75 and 0.70.
    fn worked_band() -> BandFile {
        let keys: Vec<String> = (0..100).map(|i| format!("s{i:02}")).collect();
        let clean_runs: Vec<u32> = (0..100)
            .map(|i| match i {
                0..70 => 3,
                70..90 => 0,
                90..95 => 2,
                _ => 1,
            })
            .collect();
        let value = json!({
            "judge": "none", "checks": default_checks(), "runs": 3, "n": 100, "scenarios": keys,
            "clean_rate": {"min": 0.7, "max": 0.8, "mean": 0.75, "per_run": [0.8, 0.75, 0.7]},
            "clean_in_all_runs": keys[..70], "usage": {"tokens": null, "latency_ms": null, "cost_usd": null},
            "scenario_clean_runs": clean_runs,
        });
        BandFile::from_value(Path::new("band.json"), &value).expect("band file")
    }

    /// The candidate: 7 of the always-clean scenarios (s00–s06) now fail; the flaky ones come out as
    /// usual (3 of the 5 twice-clean and 2 of the 5 once-clean are clean).
    fn worked_candidate() -> RunSummary {
        let clean = |i: usize| match i {
            0..7 => false,
            7..70 => true,
            70..90 => false,
            90..93 => true,
            93..95 => false,
            95..97 => true,
            _ => false,
        };
        RunSummary {
            judge: "none".into(),
            checks: default_checks(),
            trace_count: 100,
            scenario_clean: (0..100).map(|i| (format!("s{i:02}"), clean(i))).collect(),
            policy_violations: Vec::new(),
            workflow_violations: None,
            usage: Default::default(),
        }
    }

    #[test]
    fn band_inconclusive_paired_finds_the_regression() {
        let band = worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        let gate = evaluate_mode(
            &band,
            &worked_candidate(),
            GateMode::Both,
            Some(&clean_runs),
            None,
        );
        assert_eq!(gate.band_verdict, Verdict::Inconclusive);
        assert_eq!(gate.clean_rate, 0.68);
        let paired = gate.paired.as_ref().expect("paired");
        assert_eq!(paired.verdict, Verdict::Fail);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(
            paired.regressed,
            ["s00", "s01", "s02", "s03", "s04", "s05", "s06"].map(Value::from)
        );
        assert!(paired.improved.is_empty());
        assert_eq!(
            paired.stats.method,
            super::super::paired::Method::ExactPermutation
        );
        assert_eq!(paired.stats.discordant, 17);
        // scipy.stats.permutation_test over the 17 discordant pairs, and Connor's size with scipy's
        // quantiles (scripts/stats_reference).
        assert_eq!(paired.stats.p_value, 0.01373291015625);
        assert_eq!(paired.stats.required_n, Some(118));
        let (_, stdout) = gate.terminal_lines(&band.runs_text());
        assert_eq!(
            stdout,
            [
                "band gate: INCONCLUSIVE · clean rate 0.68 vs band [0.70, 0.80] from 3 baseline runs · fail below 0.67 · p=0.168",
                "inconclusive: a drop of 0.07 needs 514 scenarios to tell from noise (alpha 0.05, power 0.80) · run 414 more",
                "regressions (clean in every baseline, not now): s00, s01, s02, s03, s04, s05, s06",
                "paired gate: FAIL · 7 regressed, 0 improved, 17 discordant of 100 scenarios · paired permutation (exact) p=0.014 (alpha 0.05)",
                "interval (95%, scenario bootstrap): clean rate 0.68 [0.58, 0.77] · change from baseline -0.07 [-0.13, -0.01]",
                "gate: FAIL (decided by band and paired)",
            ]
        );
    }

    #[test]
    fn band_mode_adds_nothing() {
        let band = worked_band();
        let clean_runs = band.clean_runs.clone();
        let plain = super::super::evaluate(&band, &worked_candidate());
        let moded = evaluate_mode(
            &band,
            &worked_candidate(),
            GateMode::Band,
            clean_runs.as_deref(),
            None,
        );
        assert_eq!(plain, moded);
        assert_eq!(
            serde_json::to_value(plain.to_wire()).unwrap(),
            serde_json::to_value(moded.to_wire()).unwrap()
        );
        assert!(
            serde_json::to_value(plain.to_wire())
                .unwrap()
                .get("paired")
                .is_none()
        );
    }

    #[test]
    fn paired_mode_takes_the_paired_verdict_and_both_the_worse() {
        let band = worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        // Only one always-clean scenario fails: the band gate passes, the paired test sees one
        // scenario's worth of loss and passes too.
        let mut run = worked_candidate();
        for (i, (_, clean)) in run.scenario_clean.iter_mut().enumerate() {
            if (1..7).contains(&i) {
                *clean = true;
            }
        }
        let gate = evaluate_mode(&band, &run, GateMode::Paired, Some(&clean_runs), None);
        assert_eq!(gate.band_verdict, Verdict::Pass);
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(
            serde_json::to_value(gate.to_wire()).unwrap()["decided_by"],
            "paired"
        );
        assert_eq!(
            serde_json::to_value(gate.to_wire()).unwrap()["paired"]["verdict"],
            "PASS"
        );
        assert_eq!(
            combine(Verdict::Pass, Verdict::Inconclusive),
            Verdict::Inconclusive
        );
        assert_eq!(combine(Verdict::Fail, Verdict::Pass), Verdict::Fail);
        assert_eq!(combine(Verdict::Pass, Verdict::Pass), Verdict::Pass);
    }

    #[test]
    fn hard_block_fails_the_paired_gate() {
        let band = worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        let mut run = worked_candidate();
        run.scenario_clean.iter_mut().for_each(|(_, c)| *c = true);
        run.policy_violations = vec!["t1".into()];
        let gate = evaluate_mode(&band, &run, GateMode::Paired, Some(&clean_runs), None);
        assert_eq!(gate.paired.as_ref().map(|p| p.verdict), Some(Verdict::Fail));
        assert_eq!(gate.verdict, Verdict::Fail);
    }
}
