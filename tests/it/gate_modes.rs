//! `check --gate paired|both`, `--metric pass^k`, `--pass-k` and `baseline --per-scenario|--pass-k`
//! end to end through the binary, on the shipped gate examples. The default flags must leave every
//! output as it was.

use crate::common;
use crate::common::ScratchDir;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Output;

use arrow_array::{Array, Float64Array, Int64Array, StringArray};
use common::faultgate;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

const CANDIDATE: &str = "examples/gate/candidate_gpt.json";
const SHIPPED_BAND: &str = "examples/gate/band.json";
const RUN1: &str = "examples/gate/baseline_glm_run1.json";
const RUN2: &str = "examples/gate/baseline_glm_run2.json";

fn out_dir(name: &str) -> ScratchDir {
    ScratchDir::named(&format!("modes-{name}"))
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// stdout without the elapsed seconds of the summary line.
fn stable_stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| match l.rfind(" · ") {
            Some(i) if l.ends_with('s') && l[i..].contains('.') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A band of the two GLM runs, with the given extra baseline flags.
fn band(dir: &Path, name: &str, runs: &[&str], extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args = vec!["baseline"];
    args.extend(runs);
    args.extend(["--out", s(&path)]);
    args.extend(extra);
    let out = faultgate(&args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    path
}

#[test]
fn per_scenario_band_adds_one_last_key_and_default_check_output_is_unchanged() {
    let dir = out_dir("default");
    let plain = band(&dir, "plain.json", &[RUN1, RUN2], &[]);
    let extended = band(&dir, "extended.json", &[RUN1, RUN2], &["--per-scenario"]);
    let (p, e) = (json(&plain), json(&extended));
    let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "scenario_clean_runs");
    let mut trimmed = e.clone();
    let counts = trimmed
        .as_object_mut()
        .unwrap()
        .remove("scenario_clean_runs")
        .unwrap();
    assert_eq!(trimmed, p, "every other key as without the flag");
    // Clean-run counts agree with clean_in_all_runs: 2 of 2 exactly for those scenarios.
    let scenarios = p["scenarios"].as_array().unwrap();
    let all = p["clean_in_all_runs"].as_array().unwrap();
    for (key, count) in scenarios.iter().zip(counts.as_array().unwrap()) {
        assert_eq!(count.as_u64() == Some(2), all.contains(key), "{key}");
    }

    // Default gate, explicit --gate band, and the extended band: the same stdout and report bytes.
    let mut outputs = Vec::new();
    for (band, flags) in [
        (&plain, vec![]),
        (&extended, vec![]),
        (&extended, vec!["--gate", "band"]),
    ] {
        let report = dir.join(format!("r{}.json", outputs.len()));
        let mut args = vec!["check", CANDIDATE, "--band", s(band), "--json", s(&report)];
        args.extend(flags);
        let out = faultgate(&args);
        assert_eq!(out.status.code(), Some(1));
        let text = stable_stdout(&out).replace(s(&report), "REPORT");
        outputs.push((text, std::fs::read(&report).unwrap(), out.stderr));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
    let report: Value = serde_json::from_slice(&outputs[0].1).unwrap();
    assert!(report["gate"].get("paired").is_none());
    assert!(report.get("pass_k").is_none());
}

#[test]
fn gate_both_reports_the_paired_test_and_intervals() {
    let dir = out_dir("both");
    let band = band(&dir, "band.json", &[RUN1, RUN2], &["--per-scenario"]);
    let report = dir.join("report.json");
    let md = dir.join("summary.md");
    let out = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        s(&band),
        "--gate",
        "both",
        "--json",
        s(&report),
        "--markdown",
        s(&md),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\nband gate: FAIL · clean rate 0.40"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\npaired gate: FAIL · 17 regressed, 0 improved"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\ngate: FAIL (decided by band and paired)\n"),
        "{stdout}"
    );
    let gate = &json(&report)["gate"];
    assert_eq!(gate["verdict"], "FAIL");
    assert_eq!(gate["decided_by"], "both");
    assert_eq!(gate["band_verdict"], "FAIL");
    // The regressed scenarios are exactly the band gate's regressions (clean in both runs, failing now).
    assert_eq!(gate["paired"]["regressed"], gate["regressions"]);
    assert_eq!(gate["paired"]["scenarios"], 30);
    let p = gate["paired"]["p_value"].as_f64().unwrap();
    assert!(p > 0.0 && p < 1e-3, "{p}");
    let interval = gate["intervals"]["clean_rate"].as_array().unwrap();
    let (lo, hi) = (interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
    assert!(lo < 0.4 && 0.4 < hi, "{lo} {hi}");
    assert_eq!(gate["intervals"]["resamples"], 2000);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("**Paired gate:** FAIL · 17 regressed"),
        "{text}"
    );
    assert!(
        text.contains("**95% interval** (scenario bootstrap)"),
        "{text}"
    );

    // Same inputs, same bytes.
    let again = dir.join("again.json");
    faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        s(&band),
        "--gate",
        "both",
        "--json",
        s(&again),
    ]);
    assert_eq!(
        std::fs::read(&report).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn paired_gate_needs_per_scenario_data() {
    let out = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        SHIPPED_BAND,
        "--gate",
        "paired",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap();
    assert_eq!(
        last,
        "faultgate: examples/gate/band.json: the band has no per-scenario data, which --gate paired \
and both need; rebuild it with `faultgate baseline --per-scenario`"
    );
    let out = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        SHIPPED_BAND,
        "--metric",
        "pass^k",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the band has no pass^k"));
}

/// A run directory holding `files`: every scenario key then has one trace per file (trials).
fn trial_run(dir: &Path, name: &str, files: &[&str]) -> PathBuf {
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    for (i, f) in files.iter().enumerate() {
        std::fs::copy(f, run.join(format!("trial{i}.json"))).unwrap();
    }
    run
}

#[test]
fn pass_k_over_three_trials_matches_a_direct_count() {
    let dir = out_dir("passk");
    let run = trial_run(&dir, "run", &[RUN1, RUN2, CANDIDATE]);
    let report = dir.join("report.json");
    let pq = dir.join("pq");
    let out = faultgate(&[
        "check",
        s(&run),
        "--pass-k",
        "--json",
        s(&report),
        "--parquet",
        s(&pq),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let value = json(&report);
    // Direct count from the report's rows: per scenario, which traces passed (no check fired).
    let mut traces: BTreeMap<String, BTreeMap<String, bool>> = BTreeMap::new();
    for row in value["results"].as_array().unwrap() {
        let passed = traces
            .entry(row["scenario"].as_str().unwrap().into())
            .or_default()
            .entry(row["trace_id"].as_str().unwrap().into())
            .or_insert(true);
        *passed &= !row["detected"].as_bool().unwrap();
    }
    assert_eq!(traces.len(), 30);
    let table = &value["pass_k"];
    assert_eq!(table["max_trials"], 3);
    assert_eq!(table["scenarios"], 30);
    for k in 1..=3u64 {
        // Share of k-subsets of each scenario's 3 trials that all passed, by enumeration.
        let mut total = 0.0;
        for trials in traces.values() {
            let flags: Vec<bool> = trials.values().copied().collect();
            assert_eq!(flags.len(), 3);
            let subsets: Vec<u32> = (0u32..8)
                .filter(|m| u64::from(m.count_ones()) == k)
                .collect();
            let good = subsets
                .iter()
                .filter(|m| (0..3).all(|t| (*m >> t) & 1 == 0 || flags[t]))
                .count();
            total += good as f64 / subsets.len() as f64;
        }
        let got = table["overall"][(k - 1) as usize].as_f64().unwrap();
        assert!((got - total / 30.0).abs() < 1e-12, "pass^{k}: {got}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("trials: 30 scenarios, up to 3 traces each · pass^1 "),
        "{stdout}"
    );

    // traces.parquet carries the trial counts of each trace's scenario.
    let file = File::open(pq.join("traces.parquet")).unwrap();
    let batches: Vec<_> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut rows = 0;
    for batch in &batches {
        let scenario = batch.column_by_name("scenario").unwrap();
        let scenario = scenario.as_any().downcast_ref::<StringArray>().unwrap();
        let trials = batch.column_by_name("scenario_trials").unwrap();
        let trials = trials.as_any().downcast_ref::<Int64Array>().unwrap();
        let passes = batch.column_by_name("scenario_passes").unwrap();
        let passes = passes.as_any().downcast_ref::<Int64Array>().unwrap();
        let pass_k = batch.column_by_name("scenario_pass_k").unwrap();
        let pass_k = pass_k.as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..batch.num_rows() {
            let flags = &traces[scenario.value(i)];
            let clean = flags.values().filter(|&&f| f).count() as i64;
            assert_eq!(trials.value(i), 3);
            assert_eq!(passes.value(i), clean);
            assert_eq!(pass_k.value(i), if clean == 3 { 1.0 } else { 0.0 });
        }
        rows += batch.num_rows();
    }
    assert_eq!(rows, 90);

    // Without --pass-k nothing is added: the trial columns and the pass_k key stay out.
    let plain = dir.join("plain.json");
    faultgate(&["check", s(&run), "--json", s(&plain)]);
    assert!(json(&plain).get("pass_k").is_none());
}

#[test]
fn metric_pass_k_gates_on_the_bands_pass_k() {
    let dir = out_dir("metric");
    let base1 = trial_run(&dir, "base1", &[RUN1, RUN2]);
    let base2 = trial_run(&dir, "base2", &[RUN2, RUN1]);
    let band = band(&dir, "band.json", &[s(&base1), s(&base2)], &["--pass-k"]);
    let value = json(&band);
    assert_eq!(value["pass_k"]["k"], 2);
    assert_eq!(value["pass_k"]["per_run"].as_array().unwrap().len(), 2);
    // The candidate: the same two runs as trials, so its pass^2 equals the band's.
    let candidate = trial_run(&dir, "candidate", &[RUN1, RUN2]);
    let report = dir.join("report.json");
    let out = faultgate(&[
        "check",
        s(&candidate),
        "--band",
        s(&band),
        "--metric",
        "pass^k",
        "--json",
        s(&report),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let gate = &json(&report)["gate"];
    assert_eq!(gate["metric"], "pass^2");
    assert_eq!(gate["verdict"], "PASS");
    assert_eq!(
        gate["clean_rate"].as_f64(),
        value["pass_k"]["per_run"][0][1].as_f64()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\ngate: PASS · pass^2 "), "{stdout}");
}
