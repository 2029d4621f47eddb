//! The output files of `check` and `baseline` end to end through the binary, on the shipped gate
//! examples: the Markdown summary, the audit folder, the Parquet tables (read back with the parquet
//! crate's Arrow reader), the reproduce command, and exit 2 when an output cannot be written.

use crate::common;
use crate::common::ScratchDir;

use common::{command, root};
use std::fs::File;
use std::path::Path;
use std::process::Output;

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;
use sha2::{Digest, Sha256};

const CANDIDATE: &str = "examples/gate/candidate_gpt.json";
const BAND: &str = "examples/gate/band.json";
const GOLDEN: &str = "examples/gate/golden.json";
const RUN1: &str = "examples/gate/baseline_glm_run1.json";
const RUN2: &str = "examples/gate/baseline_glm_run2.json";

/// A fresh, empty directory for one test's outputs.
fn out_dir(name: &str) -> ScratchDir {
    ScratchDir::named(&format!("outputs-{name}"))
}

/// Runs the binary from the repository root, so inputs display as `examples/...`.
fn faultgate(args: &[&str]) -> Output {
    command(root())
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1790848800")
        .output()
        .expect("run faultgate")
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&text(path)).unwrap()
}

fn read_parquet(path: &Path) -> RecordBatch {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    arrow_select_concat(&batches)
}

/// Concatenates batches of one schema (the tables are small; no arrow-select dependency needed).
fn arrow_select_concat(batches: &[RecordBatch]) -> RecordBatch {
    assert!(!batches.is_empty());
    if batches.len() == 1 {
        return batches[0].clone();
    }
    let schema = batches[0].schema();
    let columns = (0..schema.fields().len())
        .map(|c| {
            let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            concat(&parts)
        })
        .collect();
    RecordBatch::try_new(schema, columns).unwrap()
}

fn concat(parts: &[&dyn Array]) -> arrow_array::ArrayRef {
    use std::sync::Arc;
    let any = parts[0].as_any();
    if any.is::<StringArray>() {
        Arc::new(StringArray::from_iter(parts.iter().flat_map(|p| {
            p.as_any().downcast_ref::<StringArray>().unwrap().iter()
        })))
    } else if any.is::<Int64Array>() {
        Arc::new(Int64Array::from_iter(parts.iter().flat_map(|p| {
            p.as_any().downcast_ref::<Int64Array>().unwrap().iter()
        })))
    } else if any.is::<BooleanArray>() {
        Arc::new(BooleanArray::from_iter(parts.iter().flat_map(|p| {
            p.as_any().downcast_ref::<BooleanArray>().unwrap().iter()
        })))
    } else {
        Arc::new(Float64Array::from_iter(parts.iter().flat_map(|p| {
            p.as_any().downcast_ref::<Float64Array>().unwrap().iter()
        })))
    }
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> &'a T {
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("column {name} has another type"))
}

fn sha256_hex(path: &str) -> String {
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    common::lower_hex(&Sha256::digest(&bytes))
}

/// `check` on the shipped candidate against the shipped band, with every output, as docs/outputs.md shows.
fn gate_run(dir: &Path) -> Output {
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    let golden_abs = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        BAND,
        &format!("--golden={}", golden_abs.display()),
        "--jso",
        &s("report.json"),
        "--markdown",
        &s("summary.md"),
        &format!("--aud={}", s("audit")),
        "--parquet",
        &s("pq"),
    ])
}

const REPRO: &str = "faultgate check examples/gate/candidate_gpt.json --band examples/gate/band.json \
                     --golden=examples/gate/golden.json";

#[test]
fn check_writes_every_output_in_order_and_fails_the_gate() {
    let dir = out_dir("gate");
    let out = gate_run(&dir);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let tail: Vec<&str> = stdout.lines().rev().take(4).collect();
    assert!(tail[3].starts_with("report written to "));
    assert!(tail[2].starts_with("markdown written to "));
    assert!(tail[1].starts_with("audit written to "));
    assert!(tail[0].starts_with("parquet written to "));
    assert!(stdout.contains(
        "gate: FAIL \u{b7} clean rate 0.30 vs band [0.80, 0.87] from 2 baseline runs \u{b7} fail below 0.70 \u{b7} p=0.000"
    ));
}

#[test]
fn markdown_has_the_gate_chart_usage_and_a_path_free_repro() {
    let dir = out_dir("markdown");
    gate_run(&dir);
    let md = text(&dir.join("summary.md"));
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "<!-- faultgate -->");
    assert_eq!(lines[1], "## faultgate: FAIL");
    assert!(
        lines[3].starts_with("**Gate:** clean rate 0.30 vs band [0.80, 0.87] from 2 baseline runs")
    );
    assert!(md.contains(
        "<!-- faultgate:chart -->\n```text\nbaseline runs  ▇▇  2 run(s), clean rate 0.80 to 0.87\n"
    ));
    assert!(md.contains("\n21/30 traces failed \u{b7} judge none \u{b7} redaction builtin\n"));
    assert!(md.contains("### Failing traces (first 20 of 21)"));
    assert!(md.contains(
        "| r-0336 | `4dc5e933abe8` | wrong_answer | expected 'Alto-5275' not found in answer |"
    ));
    assert!(md.contains("| latency / run | 16.5 s | 21.9 s | +32.9% |"));
    assert!(md.ends_with(&format!(
        "### Reproduce locally\n\n```sh\npip install 'faultgate-rs=={}'\n{REPRO}\n```\n",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(!md.contains(env!("CARGO_MANIFEST_DIR")));
    assert!(!md.contains(&*std::env::temp_dir().to_string_lossy()));
}

#[test]
fn audit_records_inputs_with_digests_and_the_verdict() {
    let dir = out_dir("audit");
    gate_run(&dir);
    let audit = dir.join("audit");
    let verdict = json(&audit.join("verdict.json"));
    assert_eq!(verdict["faultgate_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(verdict["created_utc"], "2026-10-01T10:00:00Z");
    assert_eq!(verdict["verdict"], "FAIL");
    assert_eq!(verdict["exit_code"], 1);
    assert_eq!(verdict["command"], REPRO);
    assert_eq!(
        verdict["install"],
        format!("pip install 'faultgate-rs=={}'", env!("CARGO_PKG_VERSION"))
    );
    let inputs = verdict["inputs"].as_array().unwrap();
    let roles: Vec<(&str, &str)> = inputs
        .iter()
        .map(|i| (i["role"].as_str().unwrap(), i["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [("traces", CANDIDATE), ("band", BAND), ("golden", GOLDEN)]
    );
    for input in inputs {
        assert_eq!(input["sha256"], sha256_hex(input["path"].as_str().unwrap()));
    }
    assert_eq!(verdict["traces"], 30);
    assert_eq!(verdict["failed_traces"], 21);
    assert_eq!(verdict["fired"]["search_loop"], 18);
    assert_eq!(verdict["gate"]["verdict"], "FAIL");
    assert_eq!(verdict["gate"]["clean_rate"], 0.3);

    let failing = json(&audit.join("failing_traces.json"));
    let failing = failing.as_array().unwrap();
    assert_eq!(failing.len(), 21);
    assert_eq!(failing[0]["trace_id"], "4dc5e933abe820a352c63601a0319ce9");
    assert_eq!(failing[0]["scenario"], "r-0336");
    assert_eq!(failing[0]["checks"].as_array().unwrap().len(), 2);
    assert_eq!(failing[0]["checks"][1]["check"], "truncation");

    let script = text(&audit.join("repro.sh"));
    assert_eq!(
        script,
        format!(
            "#!/bin/sh\n# faultgate-rs {v} \u{b7} verdict FAIL \u{b7} exit 1\npip install 'faultgate-rs=={v}'\n{REPRO}\n",
            v = env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn check_parquet_round_trips_the_report() {
    let dir = out_dir("check-parquet");
    gate_run(&dir);
    let report = json(&dir.join("report.json"));
    let verdicts = read_parquet(&dir.join("pq/verdicts.parquet"));
    let results = report["results"].as_array().unwrap();
    assert_eq!(verdicts.num_rows(), results.len());
    assert_eq!(verdicts.num_rows(), 30 * 8);
    let ids = column::<StringArray>(&verdicts, "trace_id");
    let checks = column::<StringArray>(&verdicts, "check");
    let detected = column::<BooleanArray>(&verdicts, "detected");
    let confidence = column::<Float64Array>(&verdicts, "confidence");
    let reasons = column::<StringArray>(&verdicts, "reason");
    let scenarios = column::<StringArray>(&verdicts, "scenario");
    for (i, r) in results.iter().enumerate() {
        assert_eq!(ids.value(i), r["trace_id"]);
        assert_eq!(scenarios.value(i), r["scenario"]);
        assert_eq!(checks.value(i), r["check"]);
        assert_eq!(detected.value(i), r["detected"]);
        assert_eq!(confidence.value(i), r["confidence"].as_f64().unwrap());
        assert_eq!(reasons.value(i), r["reason"]);
    }

    let traces = read_parquet(&dir.join("pq/traces.parquet"));
    assert_eq!(traces.num_rows(), 30);
    let clean = column::<BooleanArray>(&traces, "clean");
    assert_eq!((0..30).filter(|&i| clean.value(i)).count(), 9);
    let latency = column::<Float64Array>(&traces, "latency_ms");
    let ids = column::<StringArray>(&traces, "trace_id");
    for i in 0..30 {
        let measured = &report["measures"][ids.value(i)];
        assert_eq!(latency.is_null(i), measured["latency_ms"].is_null());
        if !latency.is_null(i) {
            assert_eq!(latency.value(i), measured["latency_ms"].as_f64().unwrap());
        }
    }
    let steps = column::<Int64Array>(&traces, "steps");
    assert!((0..30).all(|i| steps.value(i) >= 0));
    // A search loop that hit the cap took 24 steps.
    let first_loop = (0..30)
        .find(|&i| ids.value(i).starts_with("51c15300072b"))
        .unwrap();
    assert_eq!(steps.value(first_loop), 24);
}

#[test]
fn parquet_bytes_are_stable_across_runs() {
    let a = out_dir("stable-a");
    let b = out_dir("stable-b");
    for dir in [&a, &b] {
        let pq = dir.join("pq");
        let out = faultgate(&["check", CANDIDATE, "--parquet", pq.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
    }
    for name in ["verdicts.parquet", "traces.parquet"] {
        assert_eq!(
            std::fs::read(a.join("pq").join(name)).unwrap(),
            std::fs::read(b.join("pq").join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn baseline_parquet_holds_the_clean_matrix_and_per_run_rates() {
    let dir = out_dir("baseline-parquet");
    let band_path = dir.join("band.json");
    let pq = dir.join("pq");
    let out = faultgate(&[
        "baseline",
        RUN1,
        RUN2,
        "--out",
        band_path.to_str().unwrap(),
        "--parquet",
        pq.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let band = json(&band_path);
    let matrix = read_parquet(&pq.join("clean_matrix.parquet"));
    assert_eq!(matrix.num_rows(), 60);
    let run = column::<Int64Array>(&matrix, "run");
    let scenario = column::<StringArray>(&matrix, "scenario");
    let clean = column::<BooleanArray>(&matrix, "clean");
    let in_band = column::<BooleanArray>(&matrix, "in_band");
    assert!((0..60).all(|i| in_band.value(i)));
    let per_run = band["clean_rate"]["per_run"].as_array().unwrap();
    for (r, rate) in per_run.iter().enumerate() {
        let rows: Vec<usize> = (0..60).filter(|&i| run.value(i) == r as i64 + 1).collect();
        assert_eq!(rows.len(), 30);
        let clean_count = rows.iter().filter(|&&i| clean.value(i)).count();
        assert_eq!(clean_count as f64 / 30.0, rate.as_f64().unwrap());
    }
    // Scenarios clean in every run, from the matrix, are the band's.
    let mut all_clean: Vec<&str> = (0..30)
        .filter(|&i| {
            clean.value(i)
                && (30..60).any(|j| scenario.value(j) == scenario.value(i) && clean.value(j))
        })
        .map(|i| scenario.value(i))
        .collect();
    all_clean.sort_unstable();
    let expected: Vec<&str> = band["clean_in_all_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(all_clean, expected);

    let runs = read_parquet(&pq.join("runs.parquet"));
    assert_eq!(runs.num_rows(), 2);
    let paths = column::<StringArray>(&runs, "path");
    assert_eq!(paths.value(0), RUN1);
    assert_eq!(paths.value(1), RUN2);
    let rates = column::<Float64Array>(&runs, "clean_rate");
    assert_eq!(rates.value(0), per_run[0].as_f64().unwrap());
    assert_eq!(column::<Int64Array>(&runs, "traces").value(1), 30);
}

#[test]
fn an_output_that_cannot_be_written_exits_2() {
    let dir = out_dir("unwritable");
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, b"a file, not a directory").unwrap();
    for flag in ["--markdown", "--audit", "--parquet"] {
        let target = blocker.join("x");
        let out = faultgate(&["check", CANDIDATE, flag, target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let last = stderr.lines().last().unwrap();
        assert!(
            last.starts_with("faultgate: cannot write output: "),
            "{flag}: {last}"
        );
    }
    let out = faultgate(&[
        "baseline",
        RUN1,
        RUN2,
        "--out",
        dir.join("band.json").to_str().unwrap(),
        "--parquet",
        blocker.join("pq").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    // Nothing half-written is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn an_audit_folder_that_cannot_be_written_whole_is_not_written_at_all() {
    let dir = out_dir("audit-whole");
    let audit = dir.join("audit");
    // failing_traces.json cannot be replaced: writing it fails after verdict.json could be written.
    std::fs::create_dir_all(audit.join("failing_traces.json")).unwrap();
    let out = faultgate(&["check", CANDIDATE, "--audit", audit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("faultgate: cannot write output: "),
        "{stderr}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&audit)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["failing_traces.json"],
        "no verdict.json without its traces"
    );

    // A new folder appears whole, and no temporary folder is left beside it.
    let fresh = dir.join("fresh");
    let out = faultgate(&["check", CANDIDATE, "--audit", fresh.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let mut names: Vec<String> = std::fs::read_dir(&fresh)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["failing_traces.json", "repro.sh", "verdict.json"]);
    let mut beside: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    beside.sort();
    assert_eq!(beside, ["audit", "fresh"]);
}

/// One OTLP trace whose root asks `prompt` and carries `attributes` besides.
fn one_trace(trace_id: &str, prompt: &str, attributes: &[(&str, &str)]) -> Value {
    let mut attrs = vec![
        serde_json::json!({"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}),
        serde_json::json!({"key": "gen_ai.input.messages", "value": {"stringValue":
            serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]).to_string()}}),
        serde_json::json!({"key": "gen_ai.output.messages", "value": {"stringValue":
            serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]).to_string()}}),
    ];
    attrs.extend(
        attributes
            .iter()
            .map(|(k, v)| serde_json::json!({"key": k, "value": {"stringValue": v}})),
    );
    serde_json::json!({"scopeSpans": [{"spans": [{
        "traceId": trace_id, "spanId": "r1", "name": "invoke_agent",
        "startTimeUnixNano": "1790000000000000000", "endTimeUnixNano": "1790000001000000000",
        "attributes": attrs,
    }]}]})
}

#[test]
fn ids_that_look_like_phone_numbers_are_written_unmasked() {
    // "prompt 171" hashes to the key p-203279939695, twelve decimal digits; the second trace's key
    // ends in a millisecond timestamp. Neither is personal data, and 0.4.1 masks neither.
    let dir = out_dir("unmasked-keys");
    let export = serde_json::json!({"resourceSpans": [
        one_trace("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "prompt 171", &[]),
        one_trace("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "other", &[("faultgate.scenario", "run-1717171717171")]),
    ]});
    let traces = dir.join("t.json");
    std::fs::write(&traces, export.to_string()).unwrap();
    let report = dir.join("r.json");
    let audit = dir.join("audit");
    let band = dir.join("band.json");
    let (traces, report, audit, band) = (
        traces.to_str().unwrap(),
        report.to_str().unwrap(),
        audit.to_str().unwrap(),
        band.to_str().unwrap(),
    );
    let run = faultgate(&["check", traces, "--json", report, "--audit", audit]);
    assert!(matches!(run.status.code(), Some(0 | 1)), "{run:?}");
    let run = faultgate(&["baseline", traces, traces, "--out", band]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let (report, audit, band) = (Path::new(report), Path::new(audit), Path::new(band));
    let scenarios: Vec<String> = json(report)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scenario"].as_str().unwrap().to_string())
        .collect();
    assert!(
        scenarios.iter().any(|s| s == "p-203279939695"),
        "{scenarios:?}"
    );
    assert!(
        scenarios.iter().any(|s| s == "run-1717171717171"),
        "{scenarios:?}"
    );
    assert!(
        scenarios.iter().all(|s| !s.contains("<PHONE>")),
        "{scenarios:?}"
    );
    assert_eq!(
        json(band)["scenarios"],
        serde_json::json!(["p-203279939695", "run-1717171717171"])
    );
    for file in ["verdict.json", "failing_traces.json"] {
        assert!(!text(&audit.join(file)).contains("<PHONE>"), "{file}");
    }
}
