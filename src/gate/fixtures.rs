//! Run summaries and bands for the gate's tests and the report's tests of its wording.
//!
//! The runs matching the shipped gate examples come from 0.4.1's JSON reports of `examples/gate/*.json`
//! with the default checks (which scenarios fail and the latency of each trace); the bands are the
//! hand-worked cases the tests compare with 0.4.1's output.

use std::path::Path;

use serde_json::json;

use super::{BandBuilder, BandFile, RunSummary, ScenarioTally, UsageSum};

pub(crate) const GLM_KEYS: [&str; 30] = [
    "r-0204", "r-0205", "r-0208", "r-0214", "r-0216", "r-0221", "r-0224", "r-0226", "r-0232",
    "r-0242", "r-0258", "r-0263", "r-0274", "r-0277", "r-0279", "r-0286", "r-0292", "r-0300",
    "r-0307", "r-0317", "r-0318", "r-0320", "r-0322", "r-0324", "r-0330", "r-0332", "r-0336",
    "r-0344", "r-0349", "r-0350",
];

pub(crate) fn default_checks() -> Vec<String> {
    [
        "search_loop",
        "abstention",
        "policy",
        "repeated_call",
        "unrecovered_tool_error",
        "context_overflow",
    ]
    .map(String::from)
    .to_vec()
}

fn summary(dirty: &[&str], latency_ms: &[f64]) -> RunSummary {
    RunSummary {
        judge: "none".into(),
        checks: default_checks(),
        trace_count: GLM_KEYS.len(),
        scenarios: ScenarioTally::of(GLM_KEYS.iter().map(|k| (*k, !dirty.contains(k)))),
        policy_violations: Vec::new(),
        workflow_violations: None,
        usage: [
            UsageSum::default(),
            UsageSum::of(0.0, latency_ms),
            UsageSum::default(),
        ],
        set_aside: Vec::new(),
        measures: None,
    }
}

pub(crate) fn glm_run1() -> RunSummary {
    summary(
        &["r-0336", "r-0300"],
        &[
            24100.0, 19100.0, 21100.0, 19100.0, 15100.0, 24100.0, 15100.0, 15100.0, 17100.0,
            12100.0, 19100.0, 15100.0, 20100.0, 15100.0, 12100.0, 16100.0, 21100.0, 14100.0,
            15100.0, 12100.0, 15100.0, 21100.0, 16100.0, 11100.0, 19100.0, 19100.0, 22100.0,
            12100.0, 14100.0, 16100.0,
        ],
    )
}

pub(crate) fn glm_run2() -> RunSummary {
    summary(
        &["r-0221", "r-0277"],
        &[
            13100.0, 24100.0, 12100.0, 15100.0, 17100.0, 17100.0, 14100.0, 15100.0, 15100.0,
            13100.0, 15100.0, 14100.0, 17100.0, 16100.0, 15100.0, 16100.0, 17100.0, 16100.0,
            16100.0, 17100.0, 17100.0, 17100.0, 16100.0, 17100.0, 12100.0, 12100.0, 17100.0,
            16100.0, 16100.0, 24100.0,
        ],
    )
}

pub(crate) fn candidate_gpt() -> RunSummary {
    summary(
        &[
            "r-0221", "r-0286", "r-0232", "r-0216", "r-0292", "r-0214", "r-0263", "r-0344",
            "r-0320", "r-0350", "r-0224", "r-0279", "r-0330", "r-0226", "r-0258", "r-0322",
            "r-0317", "r-0208",
        ],
        &[
            17100.0, 24100.0, 22100.0, 24100.0, 24100.0, 16100.0, 24100.0, 24100.0, 24100.0,
            24100.0, 21100.0, 24100.0, 24100.0, 23100.0, 21100.0, 24100.0, 24100.0, 5100.0,
            20100.0, 24100.0, 24100.0, 24100.0, 24100.0, 16100.0, 24100.0, 24100.0, 24100.0,
            24100.0, 22100.0, 15100.0,
        ],
    )
}

/// `examples/gate/band.json` as `check --band` reads it: older, built with `--golden` and another check
/// list.
pub(crate) fn shipped_band() -> BandFile {
    let text = std::fs::read_to_string("examples/gate/band.json").expect("shipped band");
    let value: serde_json::Value = serde_json::from_str(&text).expect("band json");
    BandFile::from_value(Path::new("examples/gate/band.json"), &value).expect("band file")
}

/// [`candidate_gpt`] checked with `--golden` as well: two more checks, and the traces 0.4.1 then
/// reported failing.
pub(crate) fn candidate_gpt_with_golden() -> RunSummary {
    let mut run = candidate_gpt();
    run.checks
        .extend(["wrong_answer".to_string(), "truncation".to_string()]);
    let failing = [
        "r-0336", "r-0221", "r-0286", "r-0232", "r-0216", "r-0292", "r-0214", "r-0263", "r-0344",
        "r-0320", "r-0350", "r-0224", "r-0332", "r-0279", "r-0330", "r-0226", "r-0258", "r-0324",
        "r-0322", "r-0317", "r-0208",
    ];
    set_clean(&mut run, |_, key, _| !failing.contains(&key));
    run
}

/// The band built from [`glm_run1`] and [`glm_run2`], as `baseline` writes it and `check` reads it.
pub(crate) fn glm_band() -> BandFile {
    let mut builder = BandBuilder::new();
    builder.add_run(&glm_run1());
    builder.add_run(&glm_run2());
    let band = builder.finish().expect("band");
    BandFile::from_value(
        Path::new("band.json"),
        &serde_json::to_value(band.to_wire()).unwrap(),
    )
    .expect("band file")
}

/// A candidate with the default checks: one trace per (scenario key, clean) item.
pub(crate) fn candidate(items: &[(&str, bool)]) -> RunSummary {
    RunSummary {
        judge: "none".into(),
        checks: default_checks(),
        trace_count: items.len(),
        scenarios: ScenarioTally::of(items.iter().copied()),
        policy_violations: Vec::new(),
        workflow_violations: None,
        usage: Default::default(),
        set_aside: Vec::new(),
        measures: None,
    }
}

/// An all-clean two-run band over `s00`..`s29`, as in docs/compatibility.md §15.3.
pub(crate) fn all_clean_band() -> BandFile {
    let keys: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
    let value = json!({
        "judge": "none", "checks": default_checks(), "runs": 2, "n": 30,
        "scenarios": keys, "clean_rate": {"min": 1, "max": 1, "mean": 1, "per_run": [1, 1]},
        "clean_in_all_runs": keys, "usage": {"tokens": null, "latency_ms": null, "cost_usd": null},
    });
    BandFile::from_value(Path::new("band.json"), &value).expect("band file")
}

/// A candidate over `s00`..`s29` of [`all_clean_band`] whose first `failures` scenarios fail.
pub(crate) fn with_failures(failures: usize) -> RunSummary {
    let keys: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
    let items: Vec<(&str, bool)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i >= failures))
        .collect();
    candidate(&items)
}

/// Reference: a hand-written 3-run band with spread, a scenario the candidate lacks, a regression key
/// outside `scenarios`, and usage entries that are zero, null or unknown.
pub(crate) fn spread_band() -> BandFile {
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

/// A candidate for [`spread_band`]: `s00`..`s19` with the `failing` ones failed, an extra failing
/// scenario, and a cost per trace.
pub(crate) fn spread_candidate(failing: &[usize]) -> RunSummary {
    let keys: Vec<String> = (0..20).map(|i| format!("s{i:02}")).collect();
    let mut items: Vec<(&str, bool)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), !failing.contains(&i)))
        .collect();
    items.push(("extra", false));
    let mut run = candidate(&items);
    let cost: Vec<f64> = (0..20).map(|i| 0.1 * f64::from(i)).chain([0.5]).collect();
    run.usage[2] = UsageSum::of(0.0, &cost);
    run
}

/// The worked example of docs/gate.md: 100 scenarios, 3 baseline runs. 70 scenarios were clean in
/// every run, 20 failed in every run, 5 were clean in runs 1 and 2 and 5 in run 1 only (run 3 hit a
/// bad patch), so the runs' clean rates are 0.80, 0.75 and 0.70.
pub(crate) fn worked_band() -> BandFile {
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

/// The candidate of [`worked_band`]: 7 of the always-clean scenarios (s00–s06) now fail; the flaky
/// ones come out as usual (3 of the 5 twice-clean and 2 of the 5 once-clean are clean).
pub(crate) fn worked_candidate() -> RunSummary {
    let clean = |i: usize| match i {
        0..7 => false,
        7..70 => true,
        70..90 => false,
        90..93 => true,
        93..95 => false,
        95..97 => true,
        _ => false,
    };
    let keys: Vec<String> = (0..100).map(|i| format!("s{i:02}")).collect();
    RunSummary {
        judge: "none".into(),
        checks: default_checks(),
        trace_count: 100,
        scenarios: ScenarioTally::of(keys.iter().enumerate().map(|(i, k)| (k.as_str(), clean(i)))),
        policy_violations: Vec::new(),
        workflow_violations: None,
        usage: Default::default(),
        set_aside: Vec::new(),
        measures: None,
    }
}

/// Sets the clean flag of each scenario of a run with one trace per key: `clean(position, key, was)`.
pub(crate) fn set_clean(run: &mut RunSummary, mut clean: impl FnMut(usize, &str, bool) -> bool) {
    let traces: Vec<(String, bool)> = run
        .scenarios
        .clean_flags()
        .enumerate()
        .map(|(i, (key, was))| (key.to_string(), clean(i, key, was)))
        .collect();
    run.scenarios = ScenarioTally::of(traces.iter().map(|(k, c)| (k.as_str(), *c)));
}
