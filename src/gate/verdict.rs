//! The band gate: a candidate run judged against a band file, with 0.4.1's rule.
//!
//! [`evaluate`] decides PASS / FAIL / INCONCLUSIVE with 0.4.1's thresholds, the statistics of
//! [`super::stats`], the policy hard block, regressions, missing scenarios, usage deltas and warnings,
//! into a [`Gate`] ([`super::outcome`]). The report words it: the `gate` object of the JSON report
//! and verdict.json, the lines `check --band` prints.

use serde_json::Value;

use super::band::BandFile;
use super::outcome::{Gate, GateMode, GateWarning, Ungated, UsageDelta, Verdict};
use super::stats::{ALPHA, test_drop};
use super::{MEASURES, RunSummary};
use crate::compat::value::{py_truthy, round_half_even};

/// Slack on the thresholds so that a rate equal to a threshold is not lost to rounding.
const EPSILON: f64 = 1e-9;

/// Judges a candidate run against a band.
pub fn evaluate(band: &BandFile, candidate: &RunSummary) -> Gate {
    let tally = &candidate.scenarios;
    let is_clean = |key: &Value| key.as_str().is_some_and(|k| tally.is_clean(k));
    let clean = band.scenarios.iter().filter(|s| is_clean(s)).count();
    let rate = clean as f64 / band.scenarios.len() as f64;
    evaluate_rate(band, candidate, rate)
}

/// Judges a candidate whose rate on the band's metric is `rate` (the clean rate, or pass^k when the
/// band's rates have been swapped for pass^k by [`super::decision`]).
pub(crate) fn evaluate_rate(band: &BandFile, candidate: &RunSummary, rate: f64) -> Gate {
    let tally = &candidate.scenarios;
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
    if band.judge != candidate.judge.as_str()
        || band.checks != Value::from(candidate.checks.clone())
    {
        warnings.push(GateWarning::OtherRuns {
            band_judge: band.judge.clone(),
            band_checks: band.checks.clone(),
            judge: candidate.judge.clone(),
            checks: candidate.checks.clone(),
        });
    }
    if !missing.is_empty() {
        warnings.push(GateWarning::MissingScenarios(missing.len()));
    }
    let shared = n - missing.len();
    if shared * 2 < n {
        warnings.push(GateWarning::FewSharedScenarios {
            shared,
            scenarios: n,
        });
    }
    if let Some(outside) = ungated(band, candidate) {
        warnings.push(GateWarning::UngatedScenarios(outside));
    }
    if band.runs_number < 3.0 {
        warnings.push(GateWarning::FewBaselineRuns(band.runs.clone()));
    }
    if !band.per_run_known {
        warnings.push(GateWarning::UnknownRunSpread);
    }
    if band.set_aside != candidate.set_aside {
        warnings.push(GateWarning::OtherTrust {
            band_set_aside: band.set_aside.clone(),
            set_aside: candidate.set_aside.clone(),
        });
    }
    let repeated = tally.repeated_keys();
    if !repeated.is_empty() {
        warnings.push(GateWarning::RepeatedKeys(repeated));
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
        pass_k: None,
        set_aside: Vec::new(),
        budgets: None,
        lo: band.lo,
        hi: band.hi,
    }
}

/// How many of the band's scenarios the candidate run has. None means the band is of another suite,
/// domain or key scheme, and the gate would only report every band scenario as a regression.
pub fn shared_scenarios(band: &BandFile, candidate: &RunSummary) -> usize {
    band.scenarios
        .iter()
        .filter(|s| s.as_str().is_some_and(|k| candidate.scenarios.contains(k)))
        .count()
}

/// The candidate's scenarios that the band does not have, and how many of their traces failed;
/// `None` when the band has every scenario of the run.
///
/// The verdict cannot count them (the band says nothing about them), so the gate says they were left
/// out rather than pass in silence while they fail.
pub fn ungated(band: &BandFile, candidate: &RunSummary) -> Option<Ungated> {
    let known: std::collections::HashSet<&str> =
        band.scenarios.iter().filter_map(Value::as_str).collect();
    let mut scenarios = 0;
    let mut failed_traces = 0;
    for (key, stats) in candidate.scenarios.iter() {
        if !known.contains(key) {
            scenarios += 1;
            failed_traces +=
                usize::try_from(stats.traces - stats.clean_traces).unwrap_or(usize::MAX);
        }
    }
    (scenarios > 0).then_some(Ungated {
        scenarios,
        failed_traces,
    })
}

fn usage_deltas(band: &BandFile, candidate: &RunSummary) -> Vec<UsageDelta> {
    band.usage
        .iter()
        .filter_map(|(measure, baseline)| {
            let base = baseline.as_f64().filter(|_| py_truthy(baseline))?;
            let index = MEASURES.iter().position(|m| m == measure)?;
            let mean = candidate.usage[index].mean()?;
            Some(UsageDelta {
                measure: measure.clone(),
                baseline: baseline.clone(),
                candidate: mean,
                delta_pct: round_half_even(100.0 * (mean - base) / base, 1),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gate::fixtures::{self, all_clean_band, glm_band, spread_band, with_failures};

    /// Reference: `faultgate check examples/gate/candidate_gpt.json --band <glm band> --json r.json`
    /// (the report's tests hold the gate object and lines it prints).
    #[test]
    fn gpt_candidate_against_the_glm_band_matches_the_reference() {
        let gate = evaluate(&glm_band(), &fixtures::candidate_gpt());
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.clean_rate, 0.4);
        assert_eq!(
            gate.usage,
            [UsageDelta {
                measure: "latency_ms".into(),
                baseline: json!(16483.333333333332),
                candidate: 21900.0,
                delta_pct: 32.9,
            }]
        );
        assert_eq!(
            gate.band,
            [json!(0.9333333333333333), json!(0.9333333333333333)]
        );
        assert_eq!(gate.pass_threshold, 0.9);
        assert_eq!(gate.fail_threshold, 0.8333333333333334);
        assert_eq!(gate.stats.baseline_mean, 0.9333333333333333);
        assert_eq!(gate.stats.drop, 0.5333333333333333);
        assert_eq!(gate.stats.p_value, 1.0099101221960893e-08);
        assert_eq!(
            (gate.stats.required_n, gate.stats.additional_n),
            (None, None)
        );
        assert_eq!(gate.regressions.len(), 17);
        assert!(gate.missing.is_empty() && gate.policy_violations.is_empty());
        assert_eq!(gate.warnings, [GateWarning::FewBaselineRuns(json!(2))]);
        assert_eq!(gate.verdict.exit_code(), 1);
    }

    /// Reference: the same candidate with `--golden` against the shipped, older examples/gate/band.json.
    #[test]
    fn shipped_band_warns_about_its_check_list() {
        let band = fixtures::shipped_band();
        let run = fixtures::candidate_gpt_with_golden();
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
        assert_eq!((gate.lo, gate.hi), (0.8, 0.8666666666666667));
        assert_eq!(
            gate.warnings,
            [
                GateWarning::OtherRuns {
                    band_judge: json!("none"),
                    band_checks: json!([
                        "search_loop",
                        "abstention",
                        "policy",
                        "wrong_answer",
                        "truncation"
                    ]),
                    judge: "none".into(),
                    checks: run.checks.clone(),
                },
                GateWarning::FewBaselineRuns(json!(2)),
            ]
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
    fn inconclusive_numbers_match_the_reference() {
        let gate = evaluate(&all_clean_band(), &with_failures(2));
        assert_eq!(gate.verdict.exit_code(), 0);
        assert_eq!(gate.band, [json!(1), json!(1)]);
        assert_eq!(gate.clean_rate, 28.0 / 30.0);
        assert_eq!(gate.stats.required_n, Some(89));
        assert_eq!(gate.stats.additional_n, Some(59));
        assert_eq!(gate.regressions, [json!("s00"), json!("s01")]);
    }

    #[test]
    fn fail_by_significance_with_run_spread() {
        let gate = evaluate(&spread_band(), &fixtures::spread_candidate(&[1, 2, 3]));
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.clean_rate, 0.8095238095238095);
        assert_eq!(
            gate.usage,
            [UsageDelta {
                measure: "cost_usd".into(),
                baseline: json!(0.2),
                candidate: 0.9285714285714286,
                delta_pct: 364.3,
            }]
        );
        assert_eq!(gate.band, [json!(0.95), json!(1)]);
        assert_eq!(gate.pass_threshold, 0.9023809523809523);
        assert_eq!(gate.fail_threshold, 0.8071428571428572);
        assert_eq!(gate.stats.baseline_mean, 0.9753968253968254);
        assert_eq!(gate.stats.drop, 0.16587301587301584);
        assert_eq!(gate.stats.p_value, 0.034735753288469784);
        assert_eq!(
            (gate.stats.required_n, gate.stats.additional_n),
            (None, None)
        );
        assert_eq!(gate.regressions, [json!("s01"), json!("q")]);
        assert_eq!(gate.missing, [json!("zz")]);
        // The candidate's one scenario outside the band fails, and is not gated.
        assert_eq!(
            gate.warnings,
            [
                GateWarning::MissingScenarios(1),
                GateWarning::UngatedScenarios(Ungated {
                    scenarios: 1,
                    failed_traces: 1
                })
            ]
        );
    }

    #[test]
    fn inconclusive_with_run_spread() {
        let gate = evaluate(&spread_band(), &fixtures::spread_candidate(&[1, 2]));
        assert_eq!(gate.verdict, Verdict::Inconclusive);
        assert_eq!(gate.clean_rate, 0.8571428571428571);
        assert_eq!(gate.stats.drop, 0.11825396825396828);
        assert_eq!(gate.stats.p_value, 0.07634077216035351);
        assert_eq!(gate.stats.required_n, Some(67));
        assert_eq!(gate.stats.additional_n, Some(46));
    }

    #[test]
    fn policy_violation_blocks_an_otherwise_passing_candidate() {
        let mut run = with_failures(0);
        run.policy_violations = vec!["trace-outside-the-band".into()];
        let gate = evaluate(&all_clean_band(), &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.policy_violations, ["trace-outside-the-band"]);
        assert_eq!(gate.stats.required_n, None);
    }

    #[test]
    fn workflow_violation_blocks_an_otherwise_passing_candidate() {
        let mut run = with_failures(0);
        run.workflow_violations = Some(vec!["t-skipped".into()]);
        let gate = evaluate(&all_clean_band(), &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.stats.required_n, None);
        assert_eq!(
            gate.workflow_violations,
            Some(vec!["t-skipped".to_string()])
        );
    }

    #[test]
    fn workflow_check_without_violations_passes_and_is_listed() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        run.workflow_violations = Some(Vec::new());
        let gate = evaluate(&band, &run);
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.workflow_violations, Some(Vec::new()));
        // Without the workflow check the gate keeps 0.4.1's object.
        assert_eq!(evaluate(&band, &with_failures(0)).workflow_violations, None);
    }

    #[test]
    fn repeated_key_with_a_failing_trace_is_a_regression() {
        let mut run = with_failures(0);
        // 0.4.1 kept this last, clean trace and passed; here s05 stays failed.
        run.scenarios.add("s05", false);
        run.trace_count += 1;
        let gate = evaluate(&all_clean_band(), &run);
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.regressions, [json!("s05")]);
        assert_eq!(
            gate.warnings.last(),
            Some(&GateWarning::RepeatedKeys(vec!["s05".into()]))
        );
    }

    #[test]
    fn candidate_identical_to_a_baseline_run_passes() {
        let gate = evaluate(&glm_band(), &fixtures::glm_run2());
        assert_eq!(gate.verdict, Verdict::Pass);
        assert_eq!(gate.stats.p_value, 0.5);
        assert!(gate.missing.is_empty());
        assert!(gate.regressions.is_empty());
    }

    #[test]
    fn all_failing_candidate_regresses_everything() {
        let mut run = fixtures::glm_run1();
        fixtures::set_clean(&mut run, |_, _, _| false);
        let gate = evaluate(&glm_band(), &run);
        assert_eq!(gate.verdict, Verdict::Fail);
        assert_eq!(gate.clean_rate, 0.0);
        assert_eq!(gate.regressions.len(), 26);
    }

    #[test]
    fn scenarios_outside_the_band_are_counted_with_their_failed_traces_and_keep_the_verdict() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        let inside = evaluate(&band, &run);
        assert_eq!(ungated(&band, &run), None);
        // Two unknown keys, one of them on two traces of which one fails, and a third failing one.
        for (key, clean) in [
            ("new-a", true),
            ("new-b", false),
            ("new-b", true),
            ("new-c", false),
        ] {
            run.scenarios.add(key, clean);
        }
        let outside = evaluate(&band, &run);
        let counted = Ungated {
            scenarios: 3,
            failed_traces: 2,
        };
        assert_eq!(ungated(&band, &run), Some(counted));
        assert_eq!(outside.verdict, inside.verdict);
        assert_eq!(outside.clean_rate, inside.clean_rate);
        assert!(
            outside
                .warnings
                .contains(&GateWarning::UngatedScenarios(counted))
        );
    }

    #[test]
    fn band_without_per_run_uses_min_and_max() {
        let value = json!({
            "judge": "none", "checks": fixtures::default_checks(), "runs": 2,
            "scenarios": ["a", "b", "c"],
            "clean_rate": {"min": 0.8, "max": 0.9}, "clean_in_all_runs": [],
        });
        let band = BandFile::from_value(std::path::Path::new("b.json"), &value).expect("band file");
        let gate = evaluate(
            &band,
            &fixtures::candidate(&[("a", true), ("b", true), ("c", true)]),
        );
        // (0.8 + 0.9) / 2 in doubles, as 0.4.1 computes it.
        assert_eq!(gate.stats.baseline_mean, 0.8500000000000001);
        assert_eq!(
            gate.warnings,
            [
                GateWarning::FewBaselineRuns(json!(2)),
                GateWarning::UnknownRunSpread
            ]
        );
        // With per-run rates the variance is known and nothing is noted.
        assert!(
            !evaluate(&glm_band(), &fixtures::glm_run2())
                .warnings
                .contains(&GateWarning::UnknownRunSpread)
        );
    }
}
