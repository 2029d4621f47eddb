//! Every trace format and archive shape, read end to end: the shipped 0.4.1 format examples, the shapes
//! 0.4.1 refuses or misreads (fixtures under `tests/fixtures/formats/`), compressed JSON lines, and the
//! command line's handling of broken files inside a directory.

use crate::common;
use crate::common::ScratchDir;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::Array;
use common::root;
use faultgate::ingest::{Format, read_path};
use faultgate::table::TraceBatch;
use faultgate::table::attr;
use faultgate::table::schema::*;

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/formats").join(name)
}

fn read(path: &Path) -> (Format, TraceBatch) {
    read_path(path, Format::Auto).unwrap_or_else(|e| panic!("{e}"))
}

/// A payload as JSON when it is JSON (so formats that keep the exporter's JSON text and formats that
/// re-serialise objects compare by content), else as text.
fn payload(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

/// What the tables say about one trace.
#[derive(Debug, PartialEq)]
struct Facts {
    trace_id: String,
    prompt: String,
    answer: String,
    scenario: String,
    tokens: (Option<i64>, Option<i64>),
    latency_ms: Option<f64>,
    /// Tool, arguments and result of each step.
    steps: Vec<(String, serde_json::Value, serde_json::Value)>,
}

fn facts(batch: &TraceBatch, t: usize) -> Facts {
    let int = |name: &str| {
        let col = batch.trace_i64(name);
        col.is_valid(t).then(|| col.value(t))
    };
    let latency = batch.trace_f64(TRACE_LATENCY_MS);
    let text = |name: &str| batch.trace_str(name).value(t).to_string();
    Facts {
        trace_id: text(TRACE_ID),
        prompt: text(TRACE_PROMPT),
        answer: text(TRACE_ANSWER),
        scenario: text(TRACE_SCENARIO),
        tokens: (int(TRACE_INPUT_TOKENS), int(TRACE_OUTPUT_TOKENS)),
        latency_ms: latency.is_valid(t).then(|| latency.value(t)),
        steps: batch
            .step_rows(t)
            .map(|row| {
                (
                    batch.step_str(STEP_TOOL).value(row).to_string(),
                    payload(batch.step_str(STEP_ARGUMENTS).value(row)),
                    payload(batch.step_str(STEP_RESULT).value(row)),
                )
            })
            .collect(),
    }
}

fn all_facts(batch: &TraceBatch) -> Vec<Facts> {
    (0..batch.len()).map(|t| facts(batch, t)).collect()
}

/// The root span's attribute `key`, as JSON.
fn root_attr(batch: &TraceBatch, t: usize, key: &str) -> Option<serde_json::Value> {
    let text = batch.trace_str(TRACE_ROOT_ATTRIBUTES).value(t);
    let attrs: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
    attrs.get(key).cloned()
}

fn temp_dir(tag: &str) -> ScratchDir {
    ScratchDir::named(&format!("formats-{tag}"))
}

#[test]
fn shipped_format_examples_normalise_to_the_same_run() {
    let mut seen = Vec::new();
    for (file, format, trace_id) in [
        (
            "openinference.json",
            Format::Openinference,
            "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f",
        ),
        ("langfuse.json", Format::Langfuse, "t-lf-1"),
        ("langsmith.json", Format::Langsmith, "t-ls-1"),
        ("braintrust.json", Format::Braintrust, "s-root"),
    ] {
        let (detected, batch) = read(&root().join("examples/formats").join(file));
        assert_eq!(detected, format, "{file}");
        assert_eq!(batch.len(), 1, "{file}");
        let facts = facts(&batch, 0);
        assert_eq!(facts.trace_id, trace_id);
        assert_eq!(
            facts.prompt, "Refund order o-7 for customer C-123",
            "{file}"
        );
        assert_eq!(facts.answer, "Refunded $120.00 to C-123.", "{file}");
        assert_eq!(facts.scenario, "refund-o7", "{file}");
        assert_eq!(facts.tokens, (Some(812), Some(40)), "{file}");
        assert_eq!(facts.latency_ms, Some(4500.0), "{file}");
        assert_eq!(
            root_attr(&batch, 0, attr::ENDUSER_ID),
            Some(serde_json::json!("C-123")),
            "{file}"
        );
        seen.push(facts.steps);
    }
    assert_eq!(seen[0].len(), 2);
    assert_eq!(seen[0][0].0, "lookup_order");
    assert_eq!(seen[0][1].0, "issue_refund");
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:#?}");
}

#[test]
fn braintrust_merge_rows_fold_into_their_span() {
    let (format, batch) = read(&fixture("braintrust_merge.json"));
    assert_eq!(format, Format::Braintrust);
    let span_ids = batch.span_str(SPAN_ID);
    let mut ids: Vec<&str> = batch.span_rows(0).map(|r| span_ids.value(r)).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        ["s-root", "s-t1", "s-t2"],
        "merge rows must not become spans of their own"
    );
    let facts = facts(&batch, 0);
    assert_eq!(facts.scenario, "refund-o7");
    assert_eq!(facts.answer, "Refunded $120.00 to C-123.");
    assert_eq!(facts.latency_ms, Some(4500.0));
    let example = read(&root().join("examples/formats/braintrust.json")).1;
    assert_eq!(facts.steps, self::facts(&example, 0).steps);
}

#[test]
fn lists_of_export_batches_read_like_one_export() {
    let (format, batches) = read(&fixture("otlp_batches.json"));
    assert_eq!(format, Format::Otlp);
    let single = read(&root().join("examples/traces.json")).1;
    assert_eq!(all_facts(&batches), all_facts(&single));
    let (format, traces) = read(&fixture("openinference_batches.json"));
    assert_eq!(format, Format::Openinference);
    let example = read(&root().join("examples/formats/openinference.json")).1;
    assert_eq!(facts(&traces, 0), facts(&example, 0));
}

#[test]
fn langfuse_span_observations_that_are_tool_executions_are_steps() {
    let (_, traces) = read(&fixture("langfuse_span_tools.json"));
    let tools: Vec<String> = facts(&traces, 0).steps.into_iter().map(|s| s.0).collect();
    assert_eq!(
        tools,
        ["lookup_order", "tool:issue_refund"],
        "the chat node `plan` is no tool"
    );
}

#[test]
fn langfuse_generation_tool_calls_pair_with_their_results() {
    let (format, traces) = read(&fixture("langfuse_generation_tool_calls.json"));
    assert_eq!(format, Format::Langfuse);
    let facts = facts(&traces, 0);
    let tools: Vec<&str> = facts.steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(tools, ["get_weather", "get_weather"]);
    assert_eq!(facts.steps[1].2, serde_json::json!("Rain, 11 C"));
}

#[test]
fn response_parts_and_structured_messages_are_read() {
    let (_, batch) = read(&fixture("otlp_response_parts.json"));
    let facts = facts(&batch, 0);
    assert_eq!(facts.prompt, "Refund order o-7 for customer C-123");
    assert_eq!(facts.answer, "Refunded $120.00 to C-123.");
    assert_eq!(facts.steps.len(), 1);
    assert_eq!(facts.steps[0].0, "lookup_order");
    assert_eq!(batch.step_str(STEP_RESULT).value(0), r#"{"total": 120}"#);
}

#[test]
fn trajectories_map_onto_steps_with_the_recorded_outcome_aside() {
    let (format, batch) = read(&fixture("trajectory.jsonl"));
    assert_eq!(format, Format::Trajectory);
    let facts = facts(&batch, 0);
    assert_eq!(facts.trace_id, "trajectory");
    let tools: Vec<&str> = facts.steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(tools, ["scan_rows", "confirm_with_user", "send_report"]);
    assert_eq!(facts.answer, "Report sent: 42 orders.");
    let recorded = root_attr(&batch, 0, "faultgate.task_success");
    assert_eq!(recorded, Some(serde_json::json!(true)));
    let operations = batch.span_str(SPAN_OPERATION);
    let agents = batch.span_str(SPAN_AGENT_NAME);
    let handoffs: Vec<&str> = batch
        .span_rows(0)
        .filter(|&r| operations.is_valid(r) && operations.value(r) == attr::OP_INVOKE_AGENT)
        .skip(1)
        .filter(|&r| agents.is_valid(r))
        .map(|r| agents.value(r))
        .collect();
    assert_eq!(handoffs, ["aggregator", "reporter"]);
}

#[test]
fn gzip_and_zstd_json_lines_read_like_the_plain_file() {
    let dir = temp_dir("archives");
    let plain = std::fs::read(fixture("otlp_batches.json")).unwrap();
    let docs: Vec<serde_json::Value> = serde_json::from_slice(&plain).unwrap();
    let lines: String = docs.iter().map(|d| d.to_string() + "\n").collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(lines.as_bytes()).unwrap();
    std::fs::write(dir.join("a.jsonl.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(
        dir.join("b.jsonl.zst"),
        zstd::encode_all(lines.as_bytes(), 3).unwrap(),
    )
    .unwrap();
    let want = all_facts(&read(&fixture("otlp_batches.json")).1);
    for name in ["a.jsonl.gz", "b.jsonl.zst"] {
        assert_eq!(all_facts(&read(&dir.join(name)).1), want, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn faultgate(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn broken_files_in_a_directory_are_all_named_and_the_run_exits_2() {
    let dir = temp_dir("broken");
    std::fs::copy(
        root().join("examples/formats/langfuse.json"),
        dir.join("a.json"),
    )
    .unwrap();
    std::fs::write(dir.join("b.json"), "{\"resourceSpans\": [}").unwrap();
    std::fs::copy(
        root().join("examples/formats/langsmith.json"),
        dir.join("c.json"),
    )
    .unwrap();
    std::fs::write(
        dir.join("d.jsonl"),
        "{\"seq\": 1, \"event\": \"action\"}\n{\"seq\": 2,,}\n",
    )
    .unwrap();
    let (code, stdout, stderr) = faultgate(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "no partial verdicts: {stdout}");
    assert!(
        stderr.contains("b.json: ") && stderr.contains("(byte 19)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("d.jsonl: ") && stderr.contains("(byte 40)"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gzip_bomb_exits_2_with_a_message() {
    let dir = temp_dir("bomb");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..80 {
        gz.write_all(&zeros).unwrap();
    }
    let bomb = dir.join("bomb.json.gz");
    std::fs::write(&bomb, gz.finish().unwrap()).unwrap();
    let (code, _, stderr) = faultgate(&["check", bomb.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bomb.json.gz: decompresses to more than 200 times its size"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn forcing_the_wrong_vendor_format_exits_2() {
    let file = root().join("examples/formats/langsmith.json");
    let (code, _, stderr) = faultgate(&["check", "--format", "langfuse", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("not a valid langfuse export: the records do not have its fields"),
        "{stderr}"
    );
    let (code, _, _) = faultgate(&[
        "check",
        "--format",
        "braintrust",
        root()
            .join("examples/formats/braintrust.json")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(code, 0);
}

#[test]
fn glob_patterns_select_files() {
    let pattern = root().join("examples/formats/lang*.json");
    let (code, stdout, stderr) = faultgate(&["check", pattern.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("t-lf-1") && stdout.contains("t-ls-1") && !stdout.contains("s-root"),
        "{stdout}"
    );
}
