//! `--otlp-events FILE` and `--otlp-endpoint URL`: the verdicts as OpenTelemetry evaluation events,
//! scored 1 for a pass and 0 for a fail, attached to the span of the step a reason names or else to
//! each trace's root span, byte-stable across threads and shards, redacted, and posted to
//! an OTLP/HTTP receiver that this test runs on 127.0.0.1.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::Value;

const CANDIDATE: &str = "examples/gate/candidate_qwen.json";
const CHECKS: &str = "search_loop,abstention,policy,wrong_answer,truncation";

/// `check` on the gate example with its band, golden answers and policy, plus `extra`.
fn gate_args(candidate: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "check",
        candidate,
        "--band",
        "examples/gate/band.json",
        "--golden",
        "examples/gate/golden.json",
        "--policy",
        "examples/gate/policy.json",
        "--check",
        CHECKS,
        "--table",
        "none",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    args.extend(extra.iter().map(ToString::to_string));
    args
}

fn run(args: &[String]) -> std::process::Output {
    faultgate(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The log records of an OTLP/JSON logs export.
fn records(export: &Value) -> &Vec<Value> {
    export["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array()
        .expect("logRecords")
}

/// The value of attribute `key` of a record, as its JSON.
fn attribute<'a>(record: &'a Value, key: &str) -> Option<&'a Value> {
    record["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

fn text_attribute<'a>(record: &'a Value, key: &str) -> &'a str {
    attribute(record, key)
        .and_then(|v| v["stringValue"].as_str())
        .unwrap_or_else(|| panic!("no {key} in {record}"))
}

/// Each trace's root span (the span without a parent) in an OTLP/JSON traces export.
fn root_spans(path: &str) -> HashMap<String, String> {
    let export = read_json(&common::file(path));
    let mut roots = HashMap::new();
    for resource in export["resourceSpans"].as_array().unwrap() {
        for scope in resource["scopeSpans"].as_array().unwrap() {
            for span in scope["spans"].as_array().unwrap() {
                let parent = span["parentSpanId"].as_str().unwrap_or_default();
                if parent.is_empty() {
                    roots.insert(
                        span["traceId"].as_str().unwrap().to_string(),
                        span["spanId"].as_str().unwrap().to_string(),
                    );
                }
            }
        }
    }
    roots
}

#[test]
fn every_verdict_of_the_gate_example_is_an_event_on_its_root_span_alike_at_1_2_and_4_threads() {
    let dir = scratch();
    let mut seen: Vec<Vec<u8>> = Vec::new();
    for threads in ["1", "2", "4"] {
        let path = dir.path().join(format!("events-{threads}.json"));
        let args = gate_args(CANDIDATE, &["--otlp-events", arg(&path)]);
        let out = common::command(common::root())
            .args(&args)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stdout(&out).contains(&format!("otlp events written to {}", path.display())),
            "{}",
            stdout(&out)
        );
        seen.push(std::fs::read(&path).unwrap());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "same bytes");

    let export: Value = serde_json::from_slice(&seen[0]).expect("one JSON document");
    let resource = &export["resourceLogs"][0]["resource"];
    assert_eq!(text_attribute(resource, "service.name"), "faultgate");
    assert_eq!(
        text_attribute(resource, "service.version"),
        env!("CARGO_PKG_VERSION")
    );
    let records = records(&export);
    // 30 traces × 5 checks, then the gate.
    assert_eq!(records.len(), 30 * 5 + 1);
    let roots = root_spans(CANDIDATE);
    assert_eq!(roots.len(), 30);
    let mut fired: HashMap<String, usize> = HashMap::new();
    for record in &records[..150] {
        assert_eq!(record["eventName"], "gen_ai.evaluation.result");
        assert_eq!(record["timeUnixNano"], "0");
        let trace = record["traceId"].as_str().expect("traceId");
        assert_eq!(record["spanId"].as_str(), Some(roots[trace].as_str()));
        let label = text_attribute(record, "gen_ai.evaluation.score.label");
        assert!(label == "fail" || label == "pass", "{label}");
        let score = attribute(record, "gen_ai.evaluation.score.value").unwrap();
        let expected = if label == "fail" { 0.0 } else { 1.0 };
        assert_eq!(score["doubleValue"].as_f64(), Some(expected), "{record}");
        let confidence = attribute(record, "faultgate.confidence").unwrap();
        assert!(confidence["doubleValue"].as_f64().is_some(), "{record}");
        assert!(!text_attribute(record, "gen_ai.evaluation.explanation").is_empty());
        if label == "fail" {
            *fired
                .entry(text_attribute(record, "gen_ai.evaluation.name").to_string())
                .or_default() += 1;
        }
    }
    // The counts the summary line prints: policy=24, search_loop=9, wrong_answer=9, truncation=8.
    assert_eq!(fired.get("policy"), Some(&24));
    assert_eq!(fired.get("search_loop"), Some(&9));
    assert_eq!(fired.get("wrong_answer"), Some(&9));
    assert_eq!(fired.get("truncation"), Some(&8));
    assert_eq!(fired.get("abstention"), None);

    let gate = &records[150];
    assert!(gate.get("traceId").is_none() && gate.get("spanId").is_none());
    assert_eq!(
        text_attribute(gate, "gen_ai.evaluation.name"),
        "faultgate.gate"
    );
    assert_eq!(
        text_attribute(gate, "gen_ai.evaluation.score.label"),
        "fail"
    );
    assert!(
        text_attribute(gate, "gen_ai.evaluation.explanation")
            .starts_with("gate FAIL: clean rate 0.17 vs band [0.80, 0.87]")
    );
    let int = |key: &str| attribute(gate, key).unwrap()["intValue"].clone();
    assert_eq!(int("faultgate.gate.policy_violations"), "24");
    assert_eq!(int("faultgate.gate.regressions"), "16");
    assert_eq!(int("faultgate.traces"), "30");
    assert_eq!(int("faultgate.traces.failed"), "25");
}

#[test]
fn without_a_band_there_is_no_gate_record_and_benchmark_logs_keep_their_ids_as_attributes() {
    let dir = scratch();
    let path = dir.path().join("tau.json");
    let out = faultgate(&[
        "check",
        "tests/fixtures/formats/tau/tau_bench_airline.json",
        "--otlp-events",
        arg(&path),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let export = read_json(&path);
    let records = records(&export);
    assert!(!records.is_empty());
    for record in records {
        // tau-bench logs have no span ids, and their trace ids are not OTel ids.
        assert!(record.get("traceId").is_none() && record.get("spanId").is_none());
        assert!(text_attribute(record, "faultgate.trace.id").contains("@tau_bench_airline"));
        assert_ne!(
            text_attribute(record, "gen_ai.evaluation.name"),
            "faultgate.gate"
        );
    }
}

#[test]
fn explanations_are_redacted() {
    let dir = scratch();
    let path = dir.path().join("events.json");
    let args = |redact: &[&'static str]| {
        let mut a = vec![
            "check",
            "tests/fixtures/compat/pii.json",
            "--golden",
            "tests/fixtures/compat/golden/pii.json",
            "--otlp-events",
            arg(&path),
        ];
        a.extend(redact);
        a
    };
    let secrets = [
        "4111 1111 1111 1111",
        "ops@example.com",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "123-45-6789",
    ];
    assert_eq!(
        faultgate(&args(&["--redact", "off"])).status.code(),
        Some(1)
    );
    let raw = std::fs::read_to_string(&path).unwrap();
    for secret in secrets {
        assert!(
            raw.contains(secret),
            "{secret} not in the unredacted events"
        );
    }
    assert_eq!(faultgate(&args(&[])).status.code(), Some(1));
    let masked = std::fs::read_to_string(&path).unwrap();
    for secret in secrets {
        assert!(!masked.contains(secret), "{secret} in the events");
    }
    assert!(masked.contains("<CREDIT_CARD>"), "{masked}");
}

#[test]
fn merge_of_shards_writes_the_bytes_of_a_single_check() {
    let dir = scratch();
    let inputs = [
        "examples/gate/candidate_qwen.json",
        "examples/gate/candidate_gpt.json",
        "examples/gate/baseline_glm_run1.json",
    ];
    let single = dir.path().join("single.json");
    let mut args = gate_args(inputs[0], &["--otlp-events", arg(&single)]);
    args.insert(2, inputs[1].to_string());
    args.insert(3, inputs[2].to_string());
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let parts: Vec<PathBuf> = (1..=3)
        .map(|k| {
            let part = dir.path().join(format!("p{k}"));
            let out = faultgate(&[
                "check",
                inputs[0],
                inputs[1],
                inputs[2],
                "--golden",
                "examples/gate/golden.json",
                "--policy",
                "examples/gate/policy.json",
                "--check",
                CHECKS,
                "--shard",
                &format!("{k}/3"),
                "--partial",
                arg(&part),
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            part
        })
        .collect();
    let merged = dir.path().join("merged.json");
    let mut args = vec![
        "merge".to_string(),
        "--band".into(),
        "examples/gate/band.json".into(),
        "--otlp-events".into(),
        arg(&merged).into(),
    ];
    args.extend(parts.iter().map(|p| arg(p).to_string()));
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (single, merged) = (
        std::fs::read(&single).unwrap(),
        std::fs::read(&merged).unwrap(),
    );
    assert_eq!(single, merged, "merge writes the single run's bytes");
    let export: Value = serde_json::from_slice(&merged).unwrap();
    let with_span = records(&export)
        .iter()
        .filter(|r| r.get("spanId").is_some())
        .count();
    assert_eq!(
        with_span,
        90 * 5,
        "the root span ids came through the partials"
    );
}

#[test]
fn merge_of_shards_keeps_the_spans_that_reasons_name() {
    let dir = scratch();
    let inputs = [
        "tests/fixtures/compat/policy_basic.json",
        "tests/fixtures/compat/policy_regex.json",
    ];
    let common = [
        "--policy",
        "tests/fixtures/compat/policy/basic.json",
        "--check",
        "policy",
    ];
    let single = dir.path().join("single.json");
    let mut args = vec!["check", inputs[0], inputs[1], "--otlp-events", arg(&single)];
    args.extend(common);
    assert_eq!(faultgate(&args).status.code(), Some(1));
    let parts: Vec<PathBuf> = (1..=2)
        .map(|k| {
            let part = dir.path().join(format!("p{k}"));
            let shard = format!("{k}/2");
            let mut args = vec![
                "check",
                inputs[0],
                inputs[1],
                "--shard",
                &shard,
                "--partial",
                arg(&part),
            ];
            args.extend(common);
            let out = faultgate(&args);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            part
        })
        .collect();
    let merged = dir.path().join("merged.json");
    let out = faultgate(&[
        "merge",
        arg(&parts[0]),
        arg(&parts[1]),
        "--otlp-events",
        arg(&merged),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let single = std::fs::read(&single).unwrap();
    assert_eq!(single, std::fs::read(&merged).unwrap());
    let text = String::from_utf8(single).unwrap();
    assert!(
        text.contains(r#""spanId":"748865ef84fd643d""#),
        "step 1's span of a failing trace: {text}"
    );
}

#[test]
fn a_partial_of_the_previous_format_is_refused() {
    let dir = scratch();
    let part = dir.path().join("p");
    let out = faultgate(&["check", "examples/traces.json", "--partial", arg(&part)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let manifest = part.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("\"faultgate-partial/8\""), "{text}");
    std::fs::write(
        &manifest,
        text.replace("faultgate-partial/8", "faultgate-partial/7"),
    )
    .unwrap();
    let events = dir.path().join("events.json");
    let out = faultgate(&["merge", arg(&part), "--otlp-events", arg(&events)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "format faultgate-partial/7 (this tool reads faultgate-partial/8); write the partial again with this version of faultgate"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!events.exists());
}

#[test]
fn the_flags_are_refused_where_they_do_not_apply() {
    let dir = scratch();
    let part = dir.path().join("p");
    let out = faultgate(&[
        "check",
        "examples/traces.json",
        "--partial",
        arg(&part),
        "--otlp-events",
        "e.json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--otlp-events cannot be used with --partial"));
    let out = faultgate(&["check", "examples/traces.json", "--otlp-protocol", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--otlp-endpoint"), "{}", stderr(&out));
}

// ---- the OTLP/HTTP receiver ----

/// One request as the receiver read it.
struct Request {
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// Reads one HTTP/1.1 request: the request line, headers, and a body of Content-Length bytes or
/// chunked.
fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    let mut body = Vec::new();
    if let Some(len) = headers.get("content-length") {
        body.resize(len.parse().ok()?, 0);
        reader.read_exact(&mut body).ok()?;
    } else if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Some(Request {
        path,
        headers,
        body,
    })
}

/// A receiver on 127.0.0.1 answering the statuses of `answers` in turn (the last one again once they
/// run out), for at most `limit` requests; each request is handed over on the channel.
fn receiver(answers: Vec<u16>, limit: usize) -> (String, mpsc::Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sent, received) = mpsc::channel();
    thread::spawn(move || {
        for (n, stream) in listener.incoming().take(limit).enumerate() {
            let Ok(mut stream) = stream else { break };
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .unwrap();
            let Some(request) = read_request(&mut stream) else {
                continue;
            };
            let status = answers[n.min(answers.len() - 1)];
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.flush();
            if sent.send(request).is_err() {
                break;
            }
        }
    });
    (url, received)
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

/// The OTLP logs messages, declared here apart from the crate's so the test checks the wire form
/// against the proto's field numbers, not against the encoder's own declarations.
mod otlp {
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ExportLogsServiceRequest {
        #[prost(message, repeated, tag = "1")]
        pub resource_logs: Vec<ResourceLogs>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ResourceLogs {
        #[prost(message, optional, tag = "1")]
        pub resource: Option<Resource>,
        #[prost(message, repeated, tag = "2")]
        pub scope_logs: Vec<ScopeLogs>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Resource {
        #[prost(message, repeated, tag = "1")]
        pub attributes: Vec<KeyValue>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ScopeLogs {
        #[prost(message, optional, tag = "1")]
        pub scope: Option<Scope>,
        #[prost(message, repeated, tag = "2")]
        pub log_records: Vec<LogRecord>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Scope {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub version: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct LogRecord {
        #[prost(fixed64, tag = "1")]
        pub time_unix_nano: u64,
        #[prost(message, repeated, tag = "6")]
        pub attributes: Vec<KeyValue>,
        #[prost(bytes = "vec", tag = "9")]
        pub trace_id: Vec<u8>,
        #[prost(bytes = "vec", tag = "10")]
        pub span_id: Vec<u8>,
        #[prost(string, tag = "12")]
        pub event_name: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct KeyValue {
        #[prost(string, tag = "1")]
        pub key: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<AnyValue>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct AnyValue {
        #[prost(oneof = "Value", tags = "1, 3, 4")]
        pub value: Option<Value>,
    }
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Value {
        #[prost(string, tag = "1")]
        String(String),
        #[prost(int64, tag = "3")]
        Int(i64),
        #[prost(double, tag = "4")]
        Double(f64),
    }
}

fn lower_hex(bytes: &[u8]) -> String {
    common::lower_hex(bytes)
}

/// Writes the events file and posts to `url`; returns the command's output and the file's export.
fn post(url: &str, dir: &Path, extra: &[&str]) -> (std::process::Output, PathBuf) {
    let file = dir.join("events.json");
    let mut args = gate_args(
        CANDIDATE,
        &["--otlp-events", arg(&file), "--otlp-endpoint", url],
    );
    args.extend(extra.iter().map(ToString::to_string));
    (run(&args), file)
}

#[test]
fn the_receiver_gets_the_export_as_gzip_protobuf_at_v1_logs() {
    use prost::Message as _;
    let (url, requests) = receiver(vec![200], 1);
    let dir = scratch();
    let (out, file) = post(&url, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("otlp events sent to {url}/v1/logs")),
        "{}",
        stdout(&out)
    );
    let request = requests.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(request.path, "/v1/logs");
    assert_eq!(request.headers["content-type"], "application/x-protobuf");
    assert_eq!(request.headers["content-encoding"], "gzip");
    let body = gunzip(&request.body);
    let export = otlp::ExportLogsServiceRequest::decode(body.as_slice()).expect("decodes");
    let scope_logs = &export.resource_logs[0].scope_logs[0];
    assert_eq!(
        scope_logs.scope.as_ref().map(|s| s.name.as_str()),
        Some("faultgate")
    );
    // The same records as the file, in the same order.
    let from_file = read_json(&file);
    let file_records = records(&from_file);
    assert_eq!(scope_logs.log_records.len(), file_records.len());
    for (record, from_file) in scope_logs.log_records.iter().zip(file_records) {
        assert_eq!(record.event_name, "gen_ai.evaluation.result");
        assert_eq!(
            lower_hex(&record.trace_id),
            from_file["traceId"].as_str().unwrap_or_default()
        );
        assert_eq!(
            lower_hex(&record.span_id),
            from_file["spanId"].as_str().unwrap_or_default()
        );
        let name = record.attributes[0].value.as_ref().unwrap().value.clone();
        assert_eq!(
            name,
            Some(otlp::Value::String(
                text_attribute(from_file, "gen_ai.evaluation.name").to_string()
            ))
        );
    }
}

/// The string or double of attribute `key` of a received record.
fn received<'a>(record: &'a otlp::LogRecord, key: &str) -> Option<&'a otlp::Value> {
    record
        .attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref()?.value.as_ref())
}

#[test]
fn a_verdict_naming_a_step_is_received_on_that_steps_span_scored_0_with_its_confidence_apart() {
    use prost::Message as _;
    let (url, requests) = receiver(vec![200], 1);
    let dir = scratch();
    let file = dir.path().join("events.json");
    let out = faultgate(&[
        "check",
        "tests/fixtures/compat/policy_basic.json",
        "--policy",
        "tests/fixtures/compat/policy/basic.json",
        "--check",
        "policy,unrecovered_tool_error",
        "--table",
        "none",
        "--otlp-events",
        arg(&file),
        "--otlp-endpoint",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let request = requests.recv_timeout(Duration::from_secs(30)).unwrap();
    let body = gunzip(&request.body);
    let export = otlp::ExportLogsServiceRequest::decode(body.as_slice()).expect("decodes");
    let sent = &export.resource_logs[0].scope_logs[0].log_records;
    assert_eq!(sent.len(), 5 * 2);
    let on = |trace: &str, check: &str| {
        sent.iter()
            .find(|r| {
                lower_hex(&r.trace_id) == trace
                    && received(r, "gen_ai.evaluation.name")
                        == Some(&otlp::Value::String(check.into()))
            })
            .unwrap_or_else(|| panic!("no {check} record on {trace}"))
    };
    // (trace, the span the policy verdict sits on, its root span, whether policy fired): the
    // reasons of the failing ones begin with `step 1: ...`, so they sit on step 1's tool span.
    let cases = [
        (
            "10de7fb7361931961f44559cf31c6e3c",
            "748865ef84fd643d",
            "00e6612f40fd0ef9",
            true,
        ),
        (
            "5386e3c3bc53d6b2439e15988a376d41",
            "f1b950abdaa36498",
            "1a9beaa0a672a878",
            true,
        ),
        (
            "0bcc1527379c104ea0b310296a5ec273",
            "059d5dc5dd5bdc18",
            "059d5dc5dd5bdc18",
            false,
        ),
    ];
    for (trace, span, root, fired) in cases {
        let policy = on(trace, "policy");
        assert_eq!(lower_hex(&policy.span_id), span, "policy on {trace}");
        assert_eq!(
            received(policy, "gen_ai.evaluation.score.value"),
            Some(&otlp::Value::Double(if fired { 0.0 } else { 1.0 }))
        );
        assert_eq!(
            received(policy, "gen_ai.evaluation.score.label"),
            Some(&otlp::Value::String(
                if fired { "fail" } else { "pass" }.into()
            ))
        );
        assert_eq!(
            received(policy, "faultgate.confidence"),
            Some(&otlp::Value::Double(1.0))
        );
        // A reason that names no step leaves the verdict on the root.
        let clean = on(trace, "unrecovered_tool_error");
        assert_eq!(lower_hex(&clean.span_id), root);
        assert_eq!(
            received(clean, "gen_ai.evaluation.score.value"),
            Some(&otlp::Value::Double(1.0))
        );
    }
    // The file says the same.
    let from_file = read_json(&file);
    let parents: Vec<&str> = records(&from_file)
        .iter()
        .map(|r| r["spanId"].as_str().unwrap())
        .collect();
    let sent: Vec<String> = sent.iter().map(|r| lower_hex(&r.span_id)).collect();
    assert_eq!(parents, sent);
}

#[test]
fn json_is_sent_with_the_bytes_of_the_events_file() {
    let (url, requests) = receiver(vec![200], 1);
    let dir = scratch();
    let (out, file) = post(
        &format!("{url}/custom/logs"),
        dir.path(),
        &["--otlp-protocol", "json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let request = requests.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(request.path, "/custom/logs");
    assert_eq!(request.headers["content-type"], "application/json");
    assert_eq!(gunzip(&request.body), std::fs::read(&file).unwrap());
}

#[test]
fn a_receiver_that_is_busy_a_few_times_is_tried_again() {
    let (url, requests) = receiver(vec![503, 503, 429, 200], 4);
    let dir = scratch();
    let (out, _) = post(&url, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let bodies: Vec<Vec<u8>> = (0..4)
        .map(|_| requests.recv_timeout(Duration::from_secs(30)).unwrap().body)
        .collect();
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "the same body each time"
    );
    assert!(stdout(&out).contains("otlp events sent to"));
}

#[test]
fn a_receiver_that_keeps_failing_stops_the_run_naming_the_url() {
    let (url, requests) = receiver(vec![500], 5);
    let dir = scratch();
    let (out, _) = post(&url, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "cannot send the evaluation events to {url}/v1/logs: HTTP 500 (after 5 attempts)"
        )),
        "{err}"
    );
    assert_eq!(requests.iter().count(), 5);
    // Nothing half-written is left beside the outputs.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");

    // A receiver that refuses the export (4xx) is not asked again.
    let (url, requests) = receiver(vec![400], 5);
    let (out, _) = post(&url, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("{url}/v1/logs: HTTP 400")));
    drop(out);
    assert_eq!(
        requests.recv_timeout(Duration::from_secs(5)).iter().count(),
        1
    );
    assert!(requests.recv_timeout(Duration::from_millis(300)).is_err());
}

#[test]
fn the_reproduce_command_leaves_the_event_flags_out() {
    let (url, requests) = receiver(vec![200], 1);
    let dir = scratch();
    let (md, events) = (dir.path().join("s.md"), dir.path().join("e.json"));
    let out = faultgate(&[
        "check",
        "examples/traces.json",
        "--markdown",
        arg(&md),
        "--otlp-events",
        arg(&events),
        "--otlp-endpoint",
        &format!("{url}/v1/logs?token=secret"),
        "--otlp-protocol",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(requests.recv_timeout(Duration::from_secs(30)).is_ok());
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("\nfaultgate check examples/traces.json\n"),
        "{text}"
    );
    assert!(!text.contains("otlp") && !text.contains("secret"), "{text}");
}

#[test]
fn events_written_from_the_spill_are_the_bytes_of_the_run_read_whole_at_any_thread_count() {
    let dir = scratch();
    let mut exports = Vec::new();
    for threads in ["1", "2", "4"] {
        // Without a band the run streams its events from the verdict spill; the Markdown report
        // needs the whole run, so with it the same events are written from the run read back whole.
        let run = |whole: bool| {
            let (url, requests) = receiver(vec![200], 1);
            let file = dir
                .path()
                .join(if whole { "whole.json" } else { "streamed.json" });
            let md = dir.path().join("report.md");
            let mut args: Vec<&str> = vec![
                "check",
                CANDIDATE,
                "--golden",
                "examples/gate/golden.json",
                "--policy",
                "examples/gate/policy.json",
                "--check",
                CHECKS,
                "--table",
                "none",
                "--otlp-events",
                arg(&file),
                "--otlp-endpoint",
                &url,
            ];
            if whole {
                args.extend(["--markdown", arg(&md)]);
            }
            let out = common::command(Path::new(env!("CARGO_MANIFEST_DIR")))
                .args(&args)
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let request = requests.recv_timeout(Duration::from_secs(30)).unwrap();
            (std::fs::read(&file).unwrap(), gunzip(&request.body))
        };
        let streamed = run(false);
        let whole = run(true);
        assert_eq!(
            String::from_utf8(streamed.0.clone()).unwrap(),
            String::from_utf8(whole.0).unwrap(),
            "{threads} thread(s)"
        );
        assert!(streamed.1 == whole.1, "protobuf, {threads} thread(s)");
        exports.push(streamed);
    }
    assert!(exports.windows(2).all(|w| w[0] == w[1]));
    assert!(!records(&serde_json::from_slice(&exports[0].0).unwrap()).is_empty());
}

/// `tests/fixtures/compat/policy_basic.json` with a `gen_ai.response.id` on the tool span of step 1
/// of trace `10de7fb7…` (`resp-tool-1`) and on that trace's root (`resp-root-1`), written to `dir`.
fn with_response_ids(dir: &Path) -> PathBuf {
    let mut export: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/compat/policy_basic.json").unwrap(),
    )
    .unwrap();
    for resource in export["resourceSpans"].as_array_mut().unwrap() {
        for scope in resource["scopeSpans"].as_array_mut().unwrap() {
            for span in scope["spans"].as_array_mut().unwrap() {
                let id = match span["spanId"].as_str().unwrap() {
                    "748865ef84fd643d" => "resp-tool-1",
                    "00e6612f40fd0ef9" => "resp-root-1",
                    _ => continue,
                };
                span["attributes"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!(
                        {"key": "gen_ai.response.id", "value": {"stringValue": id}}
                    ));
            }
        }
    }
    let path = dir.join("with_response_ids.json");
    std::fs::write(&path, export.to_string()).unwrap();
    path
}

/// `check --check policy,unrecovered_tool_error` over `input`, its events written to `events`.
fn policy_events(input: &Path, events: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "check",
        arg(input),
        "--policy",
        "tests/fixtures/compat/policy/basic.json",
        "--check",
        "policy,unrecovered_tool_error",
        "--table",
        "none",
        "--otlp-events",
        arg(events),
    ];
    args.extend(extra);
    faultgate(&args)
}

#[test]
fn an_event_carries_the_response_id_of_the_span_it_sits_on_sent_and_written() {
    use prost::Message as _;
    let (url, requests) = receiver(vec![200], 1);
    let dir = scratch();
    let input = with_response_ids(dir.path());
    let file = dir.path().join("events.json");
    let out = policy_events(&input, &file, &["--otlp-endpoint", &url]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let request = requests.recv_timeout(Duration::from_secs(30)).unwrap();
    let body = gunzip(&request.body);
    let export = otlp::ExportLogsServiceRequest::decode(body.as_slice()).expect("decodes");
    let sent = &export.resource_logs[0].scope_logs[0].log_records;
    let response = |trace: &str, check: &str| {
        let record = sent
            .iter()
            .find(|r| {
                lower_hex(&r.trace_id) == trace
                    && received(r, "gen_ai.evaluation.name")
                        == Some(&otlp::Value::String(check.into()))
            })
            .unwrap_or_else(|| panic!("no {check} record on {trace}"));
        received(record, "gen_ai.response.id").cloned()
    };
    let text = |id: &str| Some(otlp::Value::String(id.into()));
    // The policy verdict sits on step 1's tool span, the clean one on the root: each its span's id.
    let failing = "10de7fb7361931961f44559cf31c6e3c";
    assert_eq!(response(failing, "policy"), text("resp-tool-1"));
    assert_eq!(
        response(failing, "unrecovered_tool_error"),
        text("resp-root-1")
    );
    // A trace whose spans record no response id gets none.
    let other = "5386e3c3bc53d6b2439e15988a376d41";
    assert_eq!(response(other, "policy"), None);
    assert_eq!(response(other, "unrecovered_tool_error"), None);
    // The file says the same, after the attributes it had before.
    let from_file = read_json(&file);
    let policy = records(&from_file)
        .iter()
        .find(|r| {
            r["traceId"] == failing && text_attribute(r, "gen_ai.evaluation.name") == "policy"
        })
        .unwrap();
    let attributes = policy["attributes"].as_array().unwrap();
    assert_eq!(attributes.last().unwrap()["key"], "gen_ai.response.id");
    assert_eq!(text_attribute(policy, "gen_ai.response.id"), "resp-tool-1");
    assert_eq!(
        std::fs::read_to_string(&file)
            .unwrap()
            .matches("gen_ai.response.id")
            .count(),
        2
    );
}

#[test]
fn events_of_spans_without_response_ids_are_unchanged_and_merge_carries_them() {
    let dir = scratch();
    // Without response ids the events hold none: their bytes are those they were.
    let plain = dir.path().join("plain.json");
    let out = policy_events(
        Path::new("tests/fixtures/compat/policy_basic.json"),
        &plain,
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        !std::fs::read_to_string(&plain)
            .unwrap()
            .contains("gen_ai.response.id")
    );

    let input = with_response_ids(dir.path());
    let inputs = [arg(&input), "tests/fixtures/compat/policy_regex.json"];
    let common = [
        "--policy",
        "tests/fixtures/compat/policy/basic.json",
        "--check",
        "policy,unrecovered_tool_error",
    ];
    let single = dir.path().join("single.json");
    let mut args = vec!["check", inputs[0], inputs[1], "--otlp-events", arg(&single)];
    args.extend(common);
    assert_eq!(faultgate(&args).status.code(), Some(1));
    let parts: Vec<PathBuf> = (1..=2)
        .map(|k| {
            let part = dir.path().join(format!("p{k}"));
            let shard = format!("{k}/2");
            let mut args = vec![
                "check",
                inputs[0],
                inputs[1],
                "--shard",
                &shard,
                "--partial",
                arg(&part),
            ];
            args.extend(common);
            let out = faultgate(&args);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            part
        })
        .collect();
    let merged = dir.path().join("merged.json");
    let out = faultgate(&[
        "merge",
        arg(&parts[0]),
        arg(&parts[1]),
        "--otlp-events",
        arg(&merged),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let single = std::fs::read_to_string(&single).unwrap();
    assert_eq!(single, std::fs::read_to_string(&merged).unwrap());
    assert!(
        single.contains(r#"{"key":"gen_ai.response.id","value":{"stringValue":"resp-tool-1"}}"#),
        "{single}"
    );
}
