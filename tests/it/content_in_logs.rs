//! A trace does not change with where its GenAI content lives: in span attributes, in span events with
//! `gen_ai.*` names, or in OTLP log records that point at their spans, in a second file or in the same
//! file as the spans.

use crate::common;

use common::{faultgate_in, file, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

/// The content attributes of the example traces, which the placements move off the spans.
const CONTENT: [&str; 4] = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
];

const EVENT: &str = "gen_ai.client.inference.operation.details";

fn example() -> Value {
    serde_json::from_slice(&std::fs::read(file("examples/traces.json")).unwrap()).unwrap()
}

/// Every span of an export, mutably.
fn spans(doc: &mut Value) -> &mut Vec<Value> {
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .unwrap()
}

/// Takes a span's content attributes off it.
fn take_content(span: &mut Value) -> Vec<Value> {
    let attributes = span["attributes"].as_array_mut().unwrap();
    let (content, rest): (Vec<Value>, Vec<Value>) = attributes
        .drain(..)
        .partition(|kv| CONTENT.contains(&kv["key"].as_str().unwrap()));
    *attributes = rest;
    content
}

/// The example with each span's content in a `gen_ai.*` event instead of its attributes.
fn in_events() -> Value {
    let mut doc = example();
    for span in spans(&mut doc) {
        let content = take_content(span);
        span["events"] = json!([
            {"name": "exception", "attributes": [{"key": "exception.message", "value": {"stringValue": "not content"}}]},
            {"name": EVENT, "timeUnixNano": span["startTimeUnixNano"], "attributes": content},
        ]);
    }
    doc
}

/// The example's spans without content, and a logs export carrying it, one record per span.
fn in_logs() -> (Value, Value) {
    let mut doc = example();
    let mut records = Vec::new();
    for span in spans(&mut doc) {
        let content = take_content(span);
        if content.is_empty() {
            continue;
        }
        records.push(json!({
            "timeUnixNano": span["endTimeUnixNano"],
            "eventName": EVENT,
            "traceId": span["traceId"],
            "spanId": span["spanId"],
            "attributes": content,
        }));
    }
    // An application log line and a record of a span no file holds, which is counted.
    records
        .push(json!({"traceId": "ab", "spanId": "cd", "body": {"stringValue": "GET /search 200"}}));
    records.push(json!({"traceId": "feedfeedfeedfeedfeedfeedfeedfeed", "spanId": "0123456789abcdef",
        "eventName": EVENT, "attributes": [{"key": "gen_ai.input.messages", "value": {"stringValue": "[]"}}]}));
    let logs = json!({"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {"name": "genai"}, "logRecords": records}]}]});
    (doc, logs)
}

#[test]
fn the_same_run_gives_the_same_report_wherever_its_content_lives() {
    let dir = scratch();
    let at = |name: &str| dir.path().join(name);
    std::fs::copy(file("examples/traces.json"), at("attributes.json")).unwrap();
    std::fs::write(at("events.json"), in_events().to_string()).unwrap();
    let (spans, logs) = in_logs();
    std::fs::write(at("spans.json"), spans.to_string()).unwrap();
    std::fs::write(at("logs.json"), logs.to_string()).unwrap();
    // The Collector's file exporter writing both signals to one file, logs line first.
    std::fs::write(at("mixed.jsonl"), format!("{logs}\n{spans}\n")).unwrap();

    let run = |inputs: &[&str], report: &str| {
        let mut args = vec!["check"];
        args.extend(inputs);
        args.extend(["--json", report]);
        let got = faultgate_in(dir.path(), &args);
        assert_eq!(got.status.code(), Some(1), "{inputs:?}: {}", stderr(&got));
        (got, read_json(&at(report)))
    };
    let (plain, want) = run(&["attributes.json"], "a.json");
    assert_eq!(want["traces"], 5);
    assert!(want.get("input_warnings").is_none());
    let table = |out: &std::process::Output| -> Vec<String> {
        let text = stdout(out);
        text.lines()
            .filter(|l| !l.contains("report written"))
            .map(|l| l.rsplit_once(" · ").map_or(l, |(head, _)| head).to_string())
            .collect()
    };
    let (events, report) = run(&["events.json"], "e.json");
    assert_eq!(report, want, "content in span events");
    assert_eq!(table(&events), table(&plain));

    let unjoined = |file: &str| {
        format!(
            "1 log record(s) in {file} carry GenAI content for spans no input of the run holds; their content was not read (first: trace feedfeedfeedfeedfeedfeedfeedfeed span 0123456789abcdef)"
        )
    };
    for inputs in [
        &["spans.json", "logs.json"][..],
        &["logs.json", "spans.json"],
    ] {
        let (got, mut report) = run(inputs, "l.json");
        assert_eq!(
            report["input_warnings"],
            json!([unjoined("logs.json")]),
            "{inputs:?}"
        );
        report.as_object_mut().unwrap().remove("input_warnings");
        assert_eq!(
            report, want,
            "content in log records of a second file: {inputs:?}"
        );
        assert_eq!(table(&got), table(&plain));
        assert!(stderr(&got).contains(&format!("warning: {}", unjoined("logs.json"))));
    }
    let (got, mut report) = run(&["mixed.jsonl"], "m.json");
    let warnings = report.as_object_mut().unwrap().remove("input_warnings");
    assert_eq!(warnings, Some(json!([unjoined("mixed.jsonl")])));
    assert_eq!(report, want, "content in log lines of the same file");
    assert_eq!(table(&got), table(&plain));

    // Without their log records the spans carry no content, and the run reads differently.
    let (_, bare) = run(&["spans.json"], "s.json");
    assert_ne!(bare["results"], want["results"]);
}
