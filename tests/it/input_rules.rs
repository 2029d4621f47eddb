//! How inputs are read as a user's real exports come: no silent pass on tools that were not read, one
//! trace identity across files, JSON as the standard defines it, folders with stray files, refusals
//! that say what was expected.

use crate::common;

use std::fs::File;
use std::path::Path;
use std::process::Output;

use common::{faultgate_in, read_json, root, stderr, stdout};
use serde_json::{Value, json};

const TRACES: &str = "examples/traces.json";
const OPENINFERENCE: &str = "examples/formats/openinference.json";

/// A scratch directory holding copies of the given repository files under their base names.
fn scratch(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let name = Path::new(f).file_name().unwrap();
        std::fs::copy(root().join(f), dir.path().join(name)).unwrap();
    }
    dir
}

fn parquet_rows(path: &Path) -> i64 {
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        File::open(path).unwrap(),
    )
    .unwrap();
    reader.metadata().file_metadata().num_rows()
}

/// The summary line's `N/M traces failed` counts.
fn summary_counts(out: &Output) -> (usize, usize) {
    let text = stdout(out);
    let line = text
        .lines()
        .find(|l| l.contains(" traces failed"))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    let counts = line.split(' ').next().unwrap();
    let (failed, total) = counts.split_once('/').unwrap();
    (failed.parse().unwrap(), total.parse().unwrap())
}

/// Table rows: lines after the rule that start a trace row.
fn table_rows(out: &Output) -> usize {
    let text = stdout(out);
    let mut lines = text.lines().skip_while(|l| !l.starts_with("---"));
    lines.next();
    lines.take_while(|l| !l.trim().is_empty()).count()
}

/// Table, summary, JSON report and Parquet count the same traces, and the JSON's fired counts add up
/// to its results.
fn assert_counts_agree(dir: &Path, out: &Output, want: usize) {
    let (failed, total) = summary_counts(out);
    assert_eq!(total, want, "summary: {}", stdout(out));
    assert_eq!(table_rows(out), want, "table: {}", stdout(out));
    let report = read_json(&dir.join("r.json"));
    assert_eq!(report["traces"], json!(want));
    assert_eq!(report["failed_traces"].as_array().unwrap().len(), failed);
    let checks = report["checks"].as_array().unwrap().len();
    assert_eq!(report["results"].as_array().unwrap().len(), want * checks);
    assert_eq!(report["measures"].as_object().unwrap().len(), want);
    for (check, fired) in report["fired"].as_object().unwrap() {
        let detected = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["check"] == *check && r["detected"] == json!(true))
            .count();
        assert_eq!(fired, &json!(detected), "{check}");
    }
    assert_eq!(parquet_rows(&dir.join("pq/traces.parquet")), want as i64);
    assert_eq!(
        parquet_rows(&dir.join("pq/verdicts.parquet")),
        (want * checks) as i64
    );
}

fn check_with_outputs(dir: &Path, inputs: &[&str]) -> Output {
    let mut args = vec!["check"];
    args.extend(inputs);
    args.extend(["--json", "r.json", "--parquet", "pq", "--markdown", "r.md"]);
    faultgate_in(dir, &args)
}

// ---------------------------------------------------------------------------------------------------
// No silent pass
// ---------------------------------------------------------------------------------------------------

#[test]
fn tools_that_were_not_read_are_warned_about_in_every_output() {
    let dir = scratch(&[OPENINFERENCE]);
    // Forced as plain OTLP, the OpenInference TOOL spans yield no step.
    let out = faultgate_in(
        dir.path(),
        &[
            "check",
            "openinference.json",
            "--format",
            "otlp",
            "--json",
            "r.json",
            "--markdown",
            "r.md",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warning = "show tool activity but no tool step was read from them";
    assert!(stderr(&out).contains(warning), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("span 'lookup_order' is an OpenInference TOOL span"),
        "{}",
        stderr(&out)
    );
    let report = read_json(&dir.path().join("r.json"));
    let warnings = report["input_warnings"].as_array().expect("input_warnings");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].as_str().unwrap().contains(warning));
    let markdown = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(
        markdown.contains("**Input warnings:**") && markdown.contains(warning),
        "{markdown}"
    );
    // --strict-input refuses the run.
    let strict = faultgate_in(
        dir.path(),
        &[
            "check",
            "openinference.json",
            "--format",
            "otlp",
            "--strict-input",
        ],
    );
    assert_eq!(strict.status.code(), Some(2), "{}", stderr(&strict));
    assert!(
        stderr(&strict).contains("--strict-input"),
        "{}",
        stderr(&strict)
    );
    // Read as OpenInference, its tools are steps: nothing to warn about.
    let auto = faultgate_in(
        dir.path(),
        &[
            "check",
            "openinference.json",
            "--json",
            "r.json",
            "--strict-input",
        ],
    );
    assert_eq!(auto.status.code(), Some(0), "{}", stderr(&auto));
    assert!(!stderr(&auto).contains(warning));
    assert!(
        read_json(&dir.path().join("r.json"))
            .get("input_warnings")
            .is_none()
    );
}

#[test]
fn a_run_whose_traces_show_no_tool_activity_keeps_the_report_keys_of_0_4_1() {
    let dir = scratch(&[TRACES]);
    let out = faultgate_in(dir.path(), &["check", "traces.json", "--json", "r.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let report = read_json(&dir.path().join("r.json"));
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "judge",
            "checks",
            "redaction",
            "traces",
            "failed_traces",
            "fired",
            "measures",
            "results"
        ]
    );
}

#[test]
fn a_generation_that_asked_for_tools_with_none_recorded_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let export = json!({"data": [{"id": "t-1", "name": "agent", "input": "weather?", "output": "sunny",
        "observations": [
            {"id": "g", "type": "GENERATION", "name": "chat", "input": "weather?", "output": "",
             "metadata": {"finish_reason": "tool_calls"}, "startTime": "2026-01-01T00:00:00Z"},
            {"id": "s", "type": "SPAN", "name": "plan", "startTime": "2026-01-01T00:00:01Z"}]},
        {"id": "t-2", "name": "agent", "input": "hi", "output": "hello",
         "observations": [{"id": "g2", "type": "GENERATION", "name": "chat", "input": "hi",
             "output": "hello", "startTime": "2026-01-01T00:00:00Z"}]}]});
    std::fs::write(dir.path().join("lf.json"), export.to_string()).unwrap();
    let out = faultgate_in(dir.path(), &["check", "lf.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "1 trace(s) in lf.json show tool activity but no tool step was read from them (trace t-1: span 'chat' finished with tool_calls)"
        ),
        "{}",
        stderr(&out)
    );
    let pre = faultgate_in(dir.path(), &["precheck", "lf.json"]);
    assert!(
        stdout(&pre).contains("1 of the checked traces show tool activity"),
        "{}",
        stdout(&pre)
    );
}

// ---------------------------------------------------------------------------------------------------
// Trace identity
// ---------------------------------------------------------------------------------------------------

#[test]
fn the_same_file_twice_counts_each_trace_once_everywhere() {
    let dir = scratch(&[TRACES]);
    let out = check_with_outputs(dir.path(), &["traces.json", "traces.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_counts_agree(dir.path(), &out, 5);
    assert!(
        stderr(&out).contains("duplicate span(s) dropped"),
        "{}",
        stderr(&out)
    );
    let once = faultgate_in(dir.path(), &["check", "traces.json", "--json", "once.json"]);
    assert_eq!(once.status.code(), Some(1));
    let (twice, once) = (
        read_json(&dir.path().join("r.json")),
        read_json(&dir.path().join("once.json")),
    );
    assert_eq!(twice["fired"], once["fired"]);
    assert_eq!(twice["failed_traces"], once["failed_traces"]);
}

/// Splits an export's spans between two exports, as the Collector's file exporter does across files.
fn split_export(export: &Value) -> (Value, Value) {
    let (mut a, mut b) = (export.clone(), export.clone());
    for (r, resource) in export["resourceSpans"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        for (s, scope) in resource["scopeSpans"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let spans = scope["spans"].as_array().unwrap();
            let (first, second): (Vec<_>, Vec<_>) =
                spans.iter().enumerate().partition(|(i, _)| i % 2 == 0);
            a["resourceSpans"][r]["scopeSpans"][s]["spans"] =
                Value::Array(first.into_iter().map(|(_, v)| v.clone()).collect());
            b["resourceSpans"][r]["scopeSpans"][s]["spans"] =
                Value::Array(second.into_iter().map(|(_, v)| v.clone()).collect());
        }
    }
    (a, b)
}

/// Results keyed by (trace, check), to compare runs whose row order differs.
fn results_by_key(report: &Value) -> std::collections::BTreeMap<(String, String), Value> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (
                    r["trace_id"].as_str().unwrap().to_string(),
                    r["check"].as_str().unwrap().to_string(),
                ),
                r.clone(),
            )
        })
        .collect()
}

#[test]
fn a_trace_split_across_files_is_read_as_the_whole_trace() {
    let dir = scratch(&[TRACES]);
    let export = read_json(&dir.path().join("traces.json"));
    let (a, b) = split_export(&export);
    std::fs::write(dir.path().join("part-a.json"), a.to_string()).unwrap();
    std::fs::write(dir.path().join("part-b.json"), b.to_string()).unwrap();
    let out = check_with_outputs(dir.path(), &["part-a.json", "part-b.json"]);
    assert_counts_agree(dir.path(), &out, 5);
    assert!(!stderr(&out).contains("duplicate"), "{}", stderr(&out));
    let split = read_json(&dir.path().join("r.json"));
    let whole = faultgate_in(
        dir.path(),
        &["check", "traces.json", "--json", "whole.json"],
    );
    assert_eq!(out.status.code(), whole.status.code());
    let whole = read_json(&dir.path().join("whole.json"));
    assert_eq!(results_by_key(&split), results_by_key(&whole));
    assert_eq!(split["fired"], whole["fired"]);
}

#[test]
fn a_trace_id_reused_by_a_different_trace_stays_apart_and_is_warned_about() {
    let dir = scratch(&[TRACES]);
    let mut other = read_json(&dir.path().join("traces.json"));
    // Same trace and span ids, other content: another run that reused the ids.
    for resource in other["resourceSpans"].as_array_mut().unwrap() {
        for scope in resource["scopeSpans"].as_array_mut().unwrap() {
            for span in scope["spans"].as_array_mut().unwrap() {
                let name = format!("{}-other", span["name"].as_str().unwrap());
                span["name"] = json!(name);
            }
        }
    }
    std::fs::write(dir.path().join("other.json"), other.to_string()).unwrap();
    let out = check_with_outputs(dir.path(), &["traces.json", "other.json"]);
    assert_counts_agree(dir.path(), &out, 10);
    assert!(
        stderr(&out).contains("is used by different traces in traces.json and other.json"),
        "{}",
        stderr(&out)
    );
    let report = read_json(&dir.path().join("r.json"));
    assert!(
        report["measures"]
            .as_object()
            .unwrap()
            .contains_key("fc2cdab304bd903931b3e698c585e8fb@other.json")
    );
    assert_eq!(report["input_warnings"].as_array().unwrap().len(), 5);
    let strict = faultgate_in(
        dir.path(),
        &["check", "traces.json", "other.json", "--strict-input"],
    );
    assert_eq!(strict.status.code(), Some(2));
}

// ---------------------------------------------------------------------------------------------------
// JSON as the standard defines it
// ---------------------------------------------------------------------------------------------------

#[test]
fn valid_json_python_reads_is_read() {
    let dir = scratch(&[TRACES, "examples/formats/langfuse.json"]);
    let text = std::fs::read_to_string(dir.path().join("traces.json")).unwrap();
    let clean = faultgate_in(
        dir.path(),
        &["check", "traces.json", "--json", "clean.json"],
    );
    let variants = [
        (
            "big.json",
            text.replacen("\"kind\": 1", "\"kind\": 18446744073709551616", 1),
        ),
        (
            "big60.json",
            text.replacen("\"kind\": 1", &format!("\"kind\": {}", "7".repeat(60)), 1),
        ),
        (
            "inf.json",
            text.replacen("\"kind\": 1", "\"kind\": 1e999", 1),
        ),
        (
            "double.json",
            text.replacen(
                "{\n          \"stringValue\": \"openrouter\"\n         }",
                "{\"doubleValue\": 0}",
                1,
            ),
        ),
        (
            "surrogate.json",
            text.replacen(
                "\"stringValue\": \"invoke_agent\"",
                "\"stringValue\": \"invoke\\ud800_agent\"",
                1,
            ),
        ),
    ];
    for (name, variant) in &variants {
        assert_ne!(variant, &text, "{name} changes the file");
        std::fs::write(dir.path().join(name), variant).unwrap();
        let out = faultgate_in(dir.path(), &["check", name, "--json", "v.json"]);
        assert_eq!(
            out.status.code(),
            clean.status.code(),
            "{name}: {}",
            stderr(&out)
        );
        let (v, c) = (
            read_json(&dir.path().join("v.json")),
            read_json(&dir.path().join("clean.json")),
        );
        assert_eq!(v["traces"], c["traces"], "{name}");
    }
    // Integer ids of any size read as text, in a whole-document format too.
    let langfuse = read_json(&dir.path().join("langfuse.json"));
    let text = langfuse.to_string();
    let id = langfuse["data"][0]["id"].as_str().unwrap().to_string();
    let big = "123456789012345678901234567890123456789";
    let text = text.replace(&format!("\"{id}\""), big);
    std::fs::write(dir.path().join("lf-big.json"), &text).unwrap();
    let out = faultgate_in(dir.path(), &["check", "lf-big.json", "--json", "v.json"]);
    assert!(out.status.code() != Some(2), "{}", stderr(&out));
    let report = read_json(&dir.path().join("v.json"));
    assert!(
        report["measures"].as_object().unwrap().contains_key(big),
        "{report}"
    );
}

#[test]
fn invalid_utf8_is_bad_input_naming_its_byte() {
    let dir = scratch(&[TRACES]);
    let mut bytes = std::fs::read(dir.path().join("traces.json")).unwrap();
    let at = bytes
        .windows(14)
        .position(|w| w == b"\"service.name\"")
        .unwrap()
        + 8;
    bytes[at] = 0xff;
    std::fs::write(dir.path().join("bad.json"), &bytes).unwrap();
    let out = faultgate_in(dir.path(), &["check", "bad.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("cannot parse bad.json: invalid UTF-8 (byte {at})")),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------------------
// Folders
// ---------------------------------------------------------------------------------------------------

#[test]
fn a_folder_with_a_readme_checks_its_traces() {
    let dir = scratch(&[TRACES]);
    std::fs::write(dir.path().join("README.md"), "# run of 2026-01-01\n").unwrap();
    std::fs::write(dir.path().join("LICENSE"), "MIT\n").unwrap();
    std::fs::write(dir.path().join("SOURCE.txt"), "exported by hand\n").unwrap();
    std::fs::write(dir.path().join("notes.json"), "see README\n").unwrap();
    let out = faultgate_in(dir.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(summary_counts(&out), (2, 5));
    let err = stderr(&out);
    assert!(
        err.contains("note: skipped 3 file(s) in the folders given that are not trace files")
            && err.contains("LICENSE, README.md, SOURCE.txt"),
        "{err}"
    );
    assert!(err.contains("notes.json (not JSON)"), "{err}");
    // A file named on the command line is read whatever its name.
    std::fs::copy(
        dir.path().join("traces.json"),
        dir.path().join("traces.txt"),
    )
    .unwrap();
    let named = faultgate_in(dir.path(), &["check", "traces.txt"]);
    assert_eq!(named.status.code(), Some(1), "{}", stderr(&named));
    // The repository's own examples folder is checked, its policies and bands skipped.
    let examples = faultgate_in(root(), &["check", "examples/gate"]);
    assert_eq!(examples.status.code(), Some(1), "{}", stderr(&examples));
    assert!(stderr(&examples).contains("examples/gate/policy.json (no trace format)"));
}

// ---------------------------------------------------------------------------------------------------
// Refusals
// ---------------------------------------------------------------------------------------------------

#[test]
fn refusals_list_every_format_and_name_expected_and_found_fields() {
    let dir = scratch(&[TRACES]);
    std::fs::write(dir.path().join("odd.json"), r#"{"hello": 1}"#).unwrap();
    let out = faultgate_in(dir.path(), &["check", "odd.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "unrecognised trace format; expected OTLP/JSON, OpenInference, Langfuse, LangSmith, Braintrust, trajectory, \
             tau-bench, swe-agent, multi-agent, any-agent, langsmith-sdk, openinference-spans, otlp-logs or otlp-proto"
        ),
        "{}",
        stderr(&out)
    );
    let forced = faultgate_in(
        dir.path(),
        &["check", "traces.json", "--format", "langsmith"],
    );
    assert_eq!(forced.status.code(), Some(2));
    assert!(
        stderr(&forced).contains("(expected runs with `run_type`; found keys resourceSpans)"),
        "{}",
        stderr(&forced)
    );
    let otlp = faultgate_in(dir.path(), &["check", "odd.json", "--format", "otlp"]);
    assert_eq!(otlp.status.code(), Some(2));
    assert!(
        stderr(&otlp).contains("found keys hello"),
        "{}",
        stderr(&otlp)
    );
}
