//! docs/formats.md must name every key these types write: each test serialises a value with every
//! optional part present and looks for each key, as `` `key` ``, in the file's section.

use serde_json::json;

use super::*;
use crate::gate::{Band, band::BandPassK};

const DOC: &str = include_str!("../../../docs/formats.md");

/// The text of the `## ` section whose heading starts with `heading`, up to the next one.
fn section(heading: &str) -> &'static str {
    let start = DOC
        .find(&format!("\n## {heading}"))
        .unwrap_or_else(|| panic!("docs/formats.md has no section \"## {heading}\""));
    let body = &DOC[start + 1..];
    body.find("\n## ").map_or(body, |end| &body[..end])
}

/// Every object key in `value`, depth first. Under a path in `data` the keys are data (trace ids,
/// check names), so only their values are searched; a path in `elsewhere` is documented in another
/// section and skipped. Paths join keys with `.`; list items keep their list's path.
fn keys(value: &Value, path: &str, data: &[&str], elsewhere: &[&str], out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let child = if data.contains(&path) {
                    path.to_string()
                } else {
                    out.push(k.clone());
                    if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    }
                };
                if !elsewhere.contains(&child.as_str()) {
                    keys(v, &child, data, elsewhere, out);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                keys(item, path, data, elsewhere, out);
            }
        }
        _ => {}
    }
}

/// The keys of `value` that the section under `heading` does not name.
fn undocumented<T: Serialize>(
    heading: &str,
    value: &T,
    data: &[&str],
    elsewhere: &[&str],
) -> Vec<String> {
    let value = serde_json::to_value(value).expect("serialisable");
    let text = section(heading);
    let mut found = Vec::new();
    keys(&value, "", data, elsewhere, &mut found);
    assert!(!found.is_empty(), "{heading}: no keys found");
    found
        .into_iter()
        .filter(|k| !text.contains(&format!("`{k}`")))
        .collect()
}

fn assert_documented<T: Serialize>(heading: &str, value: &T, data: &[&str], elsewhere: &[&str]) {
    let missing = undocumented(heading, value, data, elsewhere);
    assert!(
        missing.is_empty(),
        "docs/formats.md section \"{heading}\" does not name {missing:?}"
    );
}

/// An explanation whose candidate side is `candidate` and whose baseline answered.
fn explanation(
    candidate: super::super::explanation::Side,
) -> super::super::explanation::Explanation {
    use super::super::explanation::{Explanation, Kind, Side};
    Explanation {
        scenario: "s1".into(),
        trace_id: "t1".into(),
        baseline_run: "run1.json".into(),
        baseline_trace_id: "b1".into(),
        kind: Kind::ExtraCall,
        step: 4,
        baseline_step: 4,
        candidate,
        baseline: Side::Answer {
            answer: Some("42".into()),
        },
        check: "search_loop".into(),
        reason: "searched 4 times".into(),
        later_differences: 0,
        regressed: true,
        candidate_steps: Vec::new(),
        baseline_steps: Vec::new(),
        candidate_answer: None,
        baseline_answer: None,
    }
}

fn gate_block() -> GateBlock {
    GateBlock {
        verdict: "INCONCLUSIVE".into(),
        clean_rate: 0.8,
        usage: [(
            "tokens",
            UsageDelta {
                baseline: json!(100),
                candidate: 120.0,
                delta_pct: 20.0,
            },
        )]
        .into_iter()
        .collect(),
        band: [json!(0.9), json!(1)],
        pass_threshold: 0.8,
        fail_threshold: 0.6,
        stats: GateStatsBlock {
            baseline_mean: 0.95,
            drop: 0.15,
            p_value: 0.07,
            alpha: 0.05,
            power: 0.8,
            required_n: Some(40),
            additional_n: Some(30),
        },
        regressions: vec![json!("s1")],
        missing: vec![json!("s2")],
        policy_violations: vec!["t1".into()],
        workflow_violations: Some(vec!["t2".into()]),
        warnings: vec!["band built from 2 baseline runs".into()],
        metric: Some("pass^k".into()),
        decided_by: Some("both".into()),
        band_verdict: Some("PASS".into()),
        paired: Some(PairedBlock {
            verdict: "INCONCLUSIVE".into(),
            method: "sign test (exact)".into(),
            scenarios: 10,
            baseline_rate: 0.95,
            candidate_rate: 0.8,
            drop: 0.15,
            discordant: 2,
            regressed: vec![json!("s1")],
            improved: vec![json!("s3")],
            p_value: 0.25,
            alpha: 0.05,
            power: 0.8,
            required_n: Some(40),
            additional_n: Some(30),
        }),
        intervals: Some(IntervalsBlock {
            confidence: 0.95,
            method: "scenario bootstrap, percentile".into(),
            resamples: 2000,
            seed: 16,
            clean_rate: [0.6, 0.9],
            difference: [-0.3, 0.0],
        }),
        set_aside: vec!["repeated_call: κ 0.41 < 0.60, reported, not gated".into()],
        budgets: Some(vec![BudgetBlock {
            budget: "latency.p95 <= +20%".into(),
            verdict: "FAIL".into(),
            candidate: Some(1340.0),
            band: Some(1000.0),
            limit: Some(1200.0),
            p_value: Some(0.003),
            scenarios: 30,
            unmeasured: None,
            scenarios_to_tell: None,
            test: None,
            paired_scenarios: None,
        }]),
    }
}

#[test]
fn every_report_key_is_documented() {
    let report = JsonReport {
        judge: "none".into(),
        checks: vec!["policy".into(), "outcome".into()],
        redaction: "builtin".into(),
        traces: 1,
        failed_traces: vec!["t1".into()],
        fired: [("policy", 1), ("outcome", 0)].into_iter().collect(),
        measures: [(
            "t1",
            TraceMeasures {
                tokens: Some(10.0),
                latency_ms: Some(5.0),
                cost_usd: Some(0.01),
            },
        )]
        .into_iter()
        .collect(),
        results: vec![CheckResult {
            trace_id: "t1".into(),
            scenario: "s1".into(),
            check: "policy".into(),
            detected: true,
            confidence: 1.0,
            reason: "called a forbidden tool".into(),
        }],
        input_warnings: vec!["t.json: 1 span repeated".into()],
        skipped_input: Some(crate::report::SkippedInput { files: 1, lines: 2 }),
        judge_usage: Some(JudgeUsage {
            prompt_tokens: 3,
            completion_tokens: 4,
            total_tokens: 7,
        }),
        outcome: Some(OutcomeBlock {
            judged: 1,
            missing: 0,
            true_count: 1,
            outcome_rate: Some(1.0),
            structural_clean_rate: 0.0,
            clean_rate: 0.0,
        }),
        pass_k: Some(PassKBlock {
            scenarios: 1,
            max_trials: 2,
            scenarios_per_k: vec![1, 1],
            overall: vec![0.5, 0.0],
            by_check: [("policy", vec![0.5, 0.0])].into_iter().collect(),
        }),
        gate: Some(gate_block()),
        explanations: Some(vec![explanation(super::super::explanation::Side::Step {
            tool: "search".into(),
            arguments: "{}".into(),
            result: "[]".into(),
        })]),
        slices: None,
        units: Some(UnitsBlock {
            sessions: 1,
            traces_without_conversation: 2,
        }),
    };
    assert_documented(
        "report.json",
        &report,
        &["fired", "measures", "pass_k.by_check"],
        &["gate"],
    );
    assert_documented("The gate object", &gate_block(), &["usage"], &[]);
}

#[test]
fn every_expectations_key_is_documented() {
    let call = crate::expect::CallFile {
        tool: "pay".into(),
        arguments: serde_json::from_value(json!({"amount": 1})).unwrap(),
        compare: Some(vec!["amount".into()]),
        matchers: serde_json::from_value(json!({"amount": {"tolerance": 0.5}})).unwrap(),
    };
    let file = crate::expect::ExpectFile {
        version: 1,
        source: Some(json!({})),
        read_only_tools: vec!["lookup_*".into()],
        state_changing_tools: vec!["get_and_delete".into()],
        // Written only when false.
        default_read_only: false,
        scenarios: [(
            "task-1".to_string(),
            crate::expect::ScenarioFile {
                mode: Some("strict".into()),
                calls: vec![call.clone()],
                forbidden: vec![call],
            },
        )]
        .into(),
    };
    assert_documented(
        "expect.json",
        &file,
        &[
            "scenarios",
            "scenarios.calls.arguments",
            "scenarios.forbidden.arguments",
            "scenarios.calls.match",
            "scenarios.forbidden.match",
        ],
        &[],
    );
}

#[test]
fn every_band_key_is_documented() {
    let band = Band {
        judge: "none".into(),
        checks: vec!["policy".into()],
        runs: 2,
        scenarios: vec!["s1".into(), "s2".into()],
        per_run: vec![1.0, 0.5],
        clean_runs: vec![2, 1],
        clean_in_all_runs: vec!["s1".into()],
        usage: [Some(10.0), None, Some(0.5)],
        pass_k: Some(BandPassK {
            k: 2,
            per_run: vec![vec![1.0, 1.0], vec![0.5, 0.25]],
        }),
        set_aside: vec!["repeated_call".into()],
        agent_version: Some("2.1.0".into()),
        expectations: Some("ab12".into()),
        measures: Some(vec![
            [
                Some([1.0, 1.0, 2.0, 2.0, 2.0]),
                None,
                None,
                None,
                None,
                None,
                None
            ];
            2
        ]),
        scenario_measures: None,
        slices: None,
    };
    // The writer itself, with every optional key asked for.
    assert_documented("band.json", &band.to_wire_with(true, true), &[], &[]);
}

#[test]
fn every_audit_key_is_documented() {
    let verdict = VerdictJson {
        faultgate_version: "1.0.0".into(),
        created_utc: "2026-01-01T00:00:00Z".into(),
        verdict: "FAIL".into(),
        exit_code: 1,
        command: "faultgate check t.json --audit out".into(),
        install: "pip install faultgate-rs".into(),
        inputs: vec![InputDigest {
            role: "traces".into(),
            path: "t.json".into(),
            sha256: "00".repeat(32),
        }],
        judge: "none".into(),
        checks: vec!["policy".into()],
        redaction: "builtin".into(),
        traces: 1,
        failed_traces: 1,
        fired: [("policy", 1)].into_iter().collect(),
        gate: Some(gate_block()),
    };
    assert_documented("verdict.json", &verdict, &["fired"], &["gate"]);
    let failing = vec![FailingTrace {
        trace_id: "t1".into(),
        scenario: "s1".into(),
        checks: vec![FiredCheck {
            check: "policy".into(),
            reason: "called a forbidden tool".into(),
        }],
    }];
    assert_documented("failing_traces.json", &failing, &[], &[]);
}

#[test]
fn every_calibration_key_is_documented() {
    let metrics = CalibrationMetrics {
        n: 4,
        positives: 2,
        negatives: 2,
        tp: 1,
        fp: 1,
        tn: 1,
        fn_: 1,
        unlabelled: 1,
        tpr: Some(0.5),
        tpr_ci: Some([0.1, 0.9]),
        tnr: Some(0.5),
        tnr_ci: Some([0.1, 0.9]),
        precision: Some(0.5),
        kappa: None,
        kappa_undefined: Some("0 positives".into()),
    };
    let report = CalibrationJson {
        split: Some("test".into()),
        labels: LabelsBlock {
            total: 6,
            used: 4,
            duplicates: 1,
            checks_not_run: [("judge", 1)].into_iter().collect(),
            keys_not_in_input: KeysNotInInput {
                keys: 1,
                labels: 1,
                first: vec!["ghost".into()],
            },
            shadowed: 1,
        },
        checks: vec![CheckCalibration {
            check: "policy".into(),
            all: metrics.clone(),
            split: Some(metrics),
        }],
    };
    assert_documented(
        "The calibration report",
        &report,
        &["labels.checks_not_run"],
        &[],
    );
}

#[test]
fn a_section_that_lacks_a_key_is_caught() {
    // The check itself must be able to fail: a key another format has is not in this section.
    let value = json!({"judge": "none", "scenario_clean_runs": [1], "nested": {"kappa": 0.5}});
    assert_eq!(
        undocumented("report.json", &value, &[], &[]),
        ["scenario_clean_runs", "nested", "kappa"]
    );
    // Keys under a data path are not fields; a path documented elsewhere is skipped whole.
    assert_eq!(
        undocumented("report.json", &value, &["nested"], &[]),
        ["scenario_clean_runs", "nested"]
    );
    assert!(undocumented("band.json", &value, &[], &["nested"]).contains(&"nested".to_string()));
}

#[test]
fn entries_keep_the_first_place_and_the_last_value() {
    let entries: Entries<u32> = [("b", 1), ("a", 2), ("b", 3)].into_iter().collect();
    assert_eq!(serde_json::to_string(&entries).unwrap(), r#"{"b":3,"a":2}"#);
    let read: Entries<u32> = serde_json::from_str(r#"{"x": 1, "y": 2}"#).unwrap();
    assert_eq!(
        read.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["x", "y"]
    );
}

#[test]
fn to_pretty_writes_python_layout() {
    let block = JudgeUsage {
        prompt_tokens: 1,
        completion_tokens: 2,
        total_tokens: 3,
    };
    assert_eq!(
        to_pretty(&block),
        "{\n \"prompt_tokens\": 1,\n \"completion_tokens\": 2,\n \"total_tokens\": 3\n}"
    );
}

/// The entries the spilled report writes straight from its rows are the bytes of the types the
/// whole report serialises, two levels in, for text that needs escapes and numbers of each form.
#[test]
fn per_trace_entries_are_the_bytes_of_their_types() {
    let two_in = |entry: String| format!("  {}", entry.replace('\n', "\n  "));
    let texts = [
        "",
        "t-0af3",
        "quote \" back \\ slash",
        "line\nbreak\ttab\u{1}\u{7f}",
        "caf\u{e9} \u{1f600} \u{2028}",
    ];
    let numbers = [
        0.0,
        -0.0,
        1.0,
        0.1235,
        1e-5,
        1e16,
        123_456_789.5,
        -2.5,
        f64::NAN,
        f64::INFINITY,
    ];
    let layout = PerTraceEntries::new(texts);
    let mut head = Vec::new();
    for (i, &trace_id) in texts.iter().enumerate() {
        let scenario = texts[(i + 2) % texts.len()];
        PerTraceEntries::result_head(&mut head, trace_id, scenario);
        for (check, &name) in texts.iter().enumerate() {
            for (j, &confidence) in numbers.iter().enumerate() {
                let reason = texts[(i + j) % texts.len()];
                let detected = j % 2 == 0;
                let mut ours = Vec::new();
                layout.push_result(&mut ours, &head, check, detected, confidence, reason);
                let result = CheckResult {
                    trace_id: trace_id.into(),
                    scenario: scenario.into(),
                    check: name.into(),
                    detected,
                    confidence,
                    reason: reason.into(),
                };
                assert_eq!(String::from_utf8(ours).unwrap(), two_in(to_pretty(&result)));
            }
        }
        let mut ours = Vec::new();
        PerTraceEntries::push_failed(&mut ours, trace_id);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            two_in(to_pretty(trace_id))
        );
        for (j, &number) in numbers.iter().enumerate() {
            let measures = TraceMeasures {
                tokens: (j % 3 != 0).then_some(number),
                latency_ms: Some(number),
                cost_usd: (j % 2 == 0).then_some(-number),
            };
            let mut ours = Vec::new();
            PerTraceEntries::push_measures(&mut ours, trace_id, &measures);
            let member = format!("{}: {}", to_pretty(trace_id), to_pretty(&measures));
            assert_eq!(String::from_utf8(ours).unwrap(), two_in(member));
        }
    }
}
