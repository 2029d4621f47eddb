//! `--gate paired` and `--gate both`: the paired test and bootstrap intervals wired onto the band gate.
//!
//! The band gate of [`super::verdict`] always runs and keeps its numbers; this layer adds the paired
//! verdict (see [`super::paired`]) and the intervals (see [`super::bootstrap`]), and decides which
//! verdict the run takes. With the default `--gate band` nothing here runs, so the output stays 0.4.1's.

use serde_json::Value;

use super::bootstrap::{RESAMPLES, SEED, scenario_bootstrap};
use super::outcome::{Gate, GateMode, GateWarning, PairedGate, Verdict};
use super::paired::{Pair, PairedStats, paired_test};
use super::stats::ALPHA;
use super::verdict::{evaluate, evaluate_rate};
use super::{RunSummary, band::BandFile};

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
    swapped.per_run_known = true;
    swapped.lo = lo;
    swapped.hi = hi;
    swapped.min = Value::from(lo);
    swapped.max = Value::from(hi);
    let tally = &candidate.scenarios;
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
    let mut gate = evaluate_rate(&swapped, candidate, rate);
    gate.pass_k = Some(k);
    if short > 0 {
        gate.warnings.push(GateWarning::FewTrials {
            scenarios: short,
            k,
        });
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
    let tally = &candidate.scenarios;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::fixtures::{set_clean, worked_band, worked_candidate};

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
        assert_eq!(gate.stats.required_n, Some(514));
        assert_eq!(gate.regressions.len(), 7);
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
        assert_eq!(paired.additional_n, Some(18));
        assert_eq!(paired.stats.candidate_rate, 0.68);
    }

    #[test]
    fn band_mode_adds_nothing() {
        let band = worked_band();
        let clean_runs = band.clean_runs.clone();
        let plain = evaluate(&band, &worked_candidate());
        let moded = evaluate_mode(
            &band,
            &worked_candidate(),
            GateMode::Band,
            clean_runs.as_deref(),
            None,
        );
        assert_eq!(plain, moded);
        assert_eq!(moded.mode, GateMode::Band);
        assert!(moded.paired.is_none());
    }

    #[test]
    fn paired_mode_takes_the_paired_verdict_and_both_the_worse() {
        let band = worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        // Only one always-clean scenario fails: the band gate passes, the paired test sees one
        // scenario's worth of loss and passes too.
        let mut run = worked_candidate();
        set_clean(&mut run, |i, _, clean| clean || (1..7).contains(&i));
        let gate = evaluate_mode(&band, &run, GateMode::Paired, Some(&clean_runs), None);
        assert_eq!(gate.band_verdict, Verdict::Pass);
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.mode, GateMode::Paired);
        assert_eq!(gate.paired.as_ref().map(|p| p.verdict), Some(Verdict::Pass));
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
        set_clean(&mut run, |_, _, _| true);
        run.policy_violations = vec!["t1".into()];
        let gate = evaluate_mode(&band, &run, GateMode::Paired, Some(&clean_runs), None);
        assert_eq!(gate.paired.as_ref().map(|p| p.verdict), Some(Verdict::Fail));
        assert_eq!(gate.verdict, Verdict::Fail);
    }
}
