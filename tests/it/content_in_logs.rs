//! A trace does not change with where its GenAI content lives: in span attributes, in span events with
//! `gen_ai.*` names, or in OTLP log records that point at their spans, in a second file or in the same
//! file as the spans, in OTLP/JSON or in OTLP protobuf.

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

/// The OTLP messages the protobuf placements are written with, declared here apart from the crate's so
/// the test checks the reader against the proto's field numbers, not against its own declarations.
mod otlp {
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct LogsData {
        #[prost(message, repeated, tag = "1")]
        pub resource_logs: Vec<ResourceLogs>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ResourceLogs {
        #[prost(message, repeated, tag = "2")]
        pub scope_logs: Vec<ScopeLogs>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ScopeLogs {
        #[prost(message, repeated, tag = "2")]
        pub log_records: Vec<LogRecord>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct LogRecord {
        #[prost(fixed64, tag = "1")]
        pub time_unix_nano: u64,
        #[prost(message, optional, tag = "5")]
        pub body: Option<AnyValue>,
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
    pub(crate) struct TracesData {
        #[prost(message, repeated, tag = "1")]
        pub resource_spans: Vec<ResourceSpans>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ResourceSpans {
        #[prost(message, repeated, tag = "2")]
        pub scope_spans: Vec<ScopeSpans>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ScopeSpans {
        #[prost(message, repeated, tag = "2")]
        pub spans: Vec<Span>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Span {
        #[prost(bytes = "vec", tag = "1")]
        pub trace_id: Vec<u8>,
        #[prost(bytes = "vec", tag = "2")]
        pub span_id: Vec<u8>,
        #[prost(bytes = "vec", tag = "4")]
        pub parent_span_id: Vec<u8>,
        #[prost(string, tag = "5")]
        pub name: String,
        #[prost(int32, tag = "6")]
        pub kind: i32,
        #[prost(fixed64, tag = "7")]
        pub start_time_unix_nano: u64,
        #[prost(fixed64, tag = "8")]
        pub end_time_unix_nano: u64,
        #[prost(message, repeated, tag = "9")]
        pub attributes: Vec<KeyValue>,
        #[prost(message, optional, tag = "15")]
        pub status: Option<Status>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Status {
        #[prost(string, tag = "2")]
        pub message: String,
        #[prost(int32, tag = "3")]
        pub code: i32,
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
        #[prost(oneof = "Value", tags = "1, 3")]
        pub value: Option<Value>,
    }
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Value {
        #[prost(string, tag = "1")]
        String(String),
        #[prost(int64, tag = "3")]
        Int(i64),
    }
}

/// The bytes of an OTLP/JSON id (hex).
fn id_bytes(id: &Value) -> Vec<u8> {
    let hex = id.as_str().unwrap_or("");
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// An OTLP/JSON time (a decimal string).
fn nanos(time: &Value) -> u64 {
    time.as_str().map_or(0, |t| t.parse().unwrap())
}

/// The protobuf form of an OTLP/JSON attribute list (the example has strings and integers only).
fn pb_attributes(list: &Value) -> Vec<otlp::KeyValue> {
    let Some(list) = list.as_array() else {
        return Vec::new();
    };
    list.iter()
        .map(|kv| {
            let value = &kv["value"];
            let value = match (value.get("stringValue"), value.get("intValue")) {
                (Some(s), _) => otlp::Value::String(s.as_str().unwrap().to_string()),
                (None, Some(i)) => otlp::Value::Int(i.as_str().unwrap().parse().unwrap()),
                _ => panic!("unexpected attribute value {value}"),
            };
            otlp::KeyValue {
                key: kv["key"].as_str().unwrap().to_string(),
                value: Some(otlp::AnyValue { value: Some(value) }),
            }
        })
        .collect()
}

/// The protobuf form (`LogsData`) of an OTLP/JSON logs export.
fn pb_logs(logs: &Value) -> Vec<u8> {
    use prost::Message as _;
    let records = logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| otlp::LogRecord {
            time_unix_nano: nanos(&r["timeUnixNano"]),
            body: r["body"]["stringValue"].as_str().map(|s| otlp::AnyValue {
                value: Some(otlp::Value::String(s.to_string())),
            }),
            attributes: pb_attributes(&r["attributes"]),
            trace_id: id_bytes(&r["traceId"]),
            span_id: id_bytes(&r["spanId"]),
            event_name: r["eventName"].as_str().unwrap_or("").to_string(),
        })
        .collect();
    otlp::LogsData {
        resource_logs: vec![otlp::ResourceLogs {
            scope_logs: vec![otlp::ScopeLogs {
                log_records: records,
            }],
        }],
    }
    .encode_to_vec()
}

/// The protobuf form (`TracesData`) of an OTLP/JSON traces export.
fn pb_spans(doc: &mut Value) -> Vec<u8> {
    use prost::Message as _;
    let spans = spans(doc)
        .iter()
        .map(|s| otlp::Span {
            trace_id: id_bytes(&s["traceId"]),
            span_id: id_bytes(&s["spanId"]),
            parent_span_id: id_bytes(&s["parentSpanId"]),
            name: s["name"].as_str().unwrap().to_string(),
            kind: 1,
            start_time_unix_nano: nanos(&s["startTimeUnixNano"]),
            end_time_unix_nano: nanos(&s["endTimeUnixNano"]),
            attributes: pb_attributes(&s["attributes"]),
            status: s["status"]["code"].as_i64().map(|code| otlp::Status {
                message: s["status"]["message"].as_str().unwrap_or("").to_string(),
                code: i32::try_from(code).unwrap(),
            }),
        })
        .collect();
    otlp::TracesData {
        resource_spans: vec![otlp::ResourceSpans {
            scope_spans: vec![otlp::ScopeSpans { spans }],
        }],
    }
    .encode_to_vec()
}

/// Messages as the Collector's file exporter writes them with `format: proto`: each after its length
/// as a 4-byte big-endian integer.
fn framed(messages: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for message in messages {
        out.extend(u32::try_from(message.len()).unwrap().to_be_bytes());
        out.extend(*message);
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn the_same_run_gives_the_same_report_wherever_its_content_lives() {
    let dir = scratch();
    let at = |name: &str| dir.path().join(name);
    std::fs::copy(file("examples/traces.json"), at("attributes.json")).unwrap();
    std::fs::write(at("events.json"), in_events().to_string()).unwrap();
    let (mut spans, logs) = in_logs();
    std::fs::write(at("spans.json"), spans.to_string()).unwrap();
    std::fs::write(at("logs.json"), logs.to_string()).unwrap();
    // The same logs as an OTLP/HTTP protobuf body, gzipped, and the file exporter's protobuf file of
    // both signals, logs first.
    let logs_pb = pb_logs(&logs);
    std::fs::write(at("logs.binpb"), &logs_pb).unwrap();
    std::fs::write(at("logs.pb.gz"), gzip(&logs_pb)).unwrap();
    let spans_pb = pb_spans(&mut spans);
    std::fs::write(at("mixed.bin"), framed(&[&logs_pb, &spans_pb])).unwrap();
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
        &["spans.json", "logs.binpb"],
        &["logs.binpb", "spans.json"],
        &["spans.json", "logs.pb.gz"],
    ] {
        let (got, mut report) = run(inputs, "l.json");
        let logs = inputs.iter().find(|f| f.starts_with("logs")).unwrap();
        assert_eq!(
            report["input_warnings"],
            json!([unjoined(logs)]),
            "{inputs:?}"
        );
        report.as_object_mut().unwrap().remove("input_warnings");
        assert_eq!(
            report, want,
            "content in log records of a second file: {inputs:?}"
        );
        assert_eq!(table(&got), table(&plain));
        assert!(stderr(&got).contains(&format!("warning: {}", unjoined(logs))));
    }
    let (got, mut report) = run(&["mixed.jsonl"], "m.json");
    let warnings = report.as_object_mut().unwrap().remove("input_warnings");
    assert_eq!(warnings, Some(json!([unjoined("mixed.jsonl")])));
    assert_eq!(report, want, "content in log lines of the same file");
    assert_eq!(table(&got), table(&plain));
    // Found as protobuf by its bytes alone: the name says nothing.
    let (got, mut report) = run(&["mixed.bin"], "p.json");
    let warnings = report.as_object_mut().unwrap().remove("input_warnings");
    assert_eq!(warnings, Some(json!([unjoined("mixed.bin")])));
    assert_eq!(
        report, want,
        "content in protobuf log records of the same file"
    );
    assert_eq!(table(&got), table(&plain));

    // Without their log records the spans carry no content, and the run reads differently.
    let (_, bare) = run(&["spans.json"], "s.json");
    assert_ne!(bare["results"], want["results"]);
}

/// The instructions the system-instruction tests give every agent.
const INSTRUCTIONS: &str = "You are a research agent. Cite the source of each \"fact\" you state.";

/// Returns true if and only if the span is one of the example's agent roots.
fn is_root(span: &Value) -> bool {
    span.get("parentSpanId")
        .is_none_or(|p| p.is_null() || p == "")
}

/// The example with `INSTRUCTIONS` as a `system` message leading each root's input messages.
fn instructions_as_message() -> Value {
    let mut doc = example();
    for span in spans(&mut doc).iter_mut().filter(|s| is_root(s)) {
        for kv in span["attributes"].as_array_mut().unwrap() {
            if kv["key"] == "gen_ai.input.messages" {
                let text = kv["value"]["stringValue"].as_str().unwrap();
                let mut messages: Vec<Value> = serde_json::from_str(text).unwrap();
                messages.insert(
                    0,
                    json!({"role": "system", "parts": [{"type": "text", "content": INSTRUCTIONS}]}),
                );
                kv["value"] = json!({"stringValue": Value::from(messages).to_string()});
            }
        }
    }
    doc
}

/// `gen_ai.system_instructions` holding `INSTRUCTIONS` (as the conventions write it: a JSON list of
/// parts), as OTLP/JSON text, or as the structured `arrayValue` of `kvlistValue` parts some SDKs write.
fn instructions_attribute(structured: bool) -> Value {
    let value = if structured {
        json!({"arrayValue": {"values": [{"kvlistValue": {"values": [
            {"key": "type", "value": {"stringValue": "text"}},
            {"key": "content", "value": {"stringValue": INSTRUCTIONS}},
        ]}}]}})
    } else {
        json!({"stringValue": json!([{"type": "text", "content": INSTRUCTIONS}]).to_string()})
    };
    json!({"key": "gen_ai.system_instructions", "value": value})
}

/// A logs export of `records`, a record for each root of `doc` that adds nothing (its span has the
/// attribute itself), and a record that names no span of the run: it carries the same instructions, as
/// a system message (`as_message`) or as `gen_ai.system_instructions`, with no event name, so only its
/// attributes say it is GenAI content.
fn logs_with_unseen(doc: &mut Value, mut records: Vec<Value>, as_message: bool) -> Value {
    for span in spans(doc).iter().filter(|s| is_root(s)) {
        records.push(json!({"traceId": span["traceId"], "spanId": span["spanId"],
            "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": "not read"}}]}));
    }
    let content = if as_message {
        let message =
            json!([{"role": "system", "parts": [{"type": "text", "content": INSTRUCTIONS}]}]);
        json!({"key": "gen_ai.input.messages", "value": {"stringValue": message.to_string()}})
    } else {
        instructions_attribute(false)
    };
    records.push(
        json!({"traceId": "feedfeedfeedfeedfeedfeedfeedfeed", "spanId": "0123456789abcdef",
        "attributes": [content]}),
    );
    json!({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]})
}

#[test]
fn system_instructions_read_as_the_system_message_wherever_they_live() {
    let dir = scratch();
    // Each placement in a folder of its own, under the same file names, so that the warnings that name
    // the logs file read the same.
    let place = |case: &str, spans: &Value, logs: &Value, pb: bool| {
        let at = dir.path().join(case);
        std::fs::create_dir(&at).unwrap();
        std::fs::write(at.join("spans.json"), spans.to_string()).unwrap();
        if pb {
            std::fs::write(at.join("logs.binpb"), pb_logs(logs)).unwrap();
        } else {
            std::fs::write(at.join("logs.json"), logs.to_string()).unwrap();
        }
        case.to_string()
    };
    let mut cases = Vec::new();
    // The reference: the instructions as the system message of each root's input messages.
    let mut doc = instructions_as_message();
    let logs = logs_with_unseen(&mut doc, Vec::new(), true);
    let reference = place("message", &doc, &logs, false);
    // On each root, as an attribute (JSON text and structured).
    for structured in [false, true] {
        let mut doc = example();
        for span in spans(&mut doc).iter_mut().filter(|s| is_root(s)) {
            let attributes = span["attributes"].as_array_mut().unwrap();
            attributes.push(instructions_attribute(structured));
        }
        let logs = logs_with_unseen(&mut doc, Vec::new(), false);
        cases.push(place(
            &format!("attribute-{structured}"),
            &doc,
            &logs,
            false,
        ));
    }
    // In a `gen_ai.*` event of each root.
    let mut doc = example();
    for span in spans(&mut doc).iter_mut().filter(|s| is_root(s)) {
        span["events"] = json!([{"name": EVENT, "attributes": [instructions_attribute(true)]}]);
    }
    let logs = logs_with_unseen(&mut doc, Vec::new(), false);
    cases.push(place("event", &doc, &logs, false));
    // In log records of a second file, with the event name and without it, in OTLP/JSON and protobuf.
    for (named, pb) in [(true, false), (false, false), (false, true)] {
        let mut doc = example();
        let records: Vec<Value> = spans(&mut doc)
            .iter()
            .filter(|s| is_root(s))
            .map(|span| {
                let mut record = json!({"traceId": span["traceId"], "spanId": span["spanId"],
                    "attributes": [instructions_attribute(false)]});
                if named {
                    record["eventName"] = json!(EVENT);
                }
                record
            })
            .collect();
        let logs = logs_with_unseen(&mut doc, records, false);
        cases.push(place(&format!("logs-{named}-{pb}"), &doc, &logs, pb));
    }

    let run = |case: &str| {
        let at = dir.path().join(case);
        let logs = if at.join("logs.binpb").exists() {
            "logs.binpb"
        } else {
            "logs.json"
        };
        let got = faultgate_in(
            &at,
            &[
                "check",
                "spans.json",
                logs,
                "--json",
                "r.json",
                "--parquet",
                "pq",
            ],
        );
        assert_eq!(got.status.code(), Some(1), "{case}: {}", stderr(&got));
        let mut report = read_json(&at.join("r.json"));
        // The one warning names the logs file: the same sentence whichever encoding it has.
        let warnings = report["input_warnings"].to_string().replace(logs, "logs");
        report["input_warnings"] = json!(warnings);
        let table: Vec<String> = stdout(&got)
            .lines()
            .filter(|l| !l.contains("written"))
            .map(|l| l.rsplit_once(" · ").map_or(l, |(head, _)| head).to_string())
            .collect();
        let parquet = std::fs::read(at.join("pq/traces.parquet")).unwrap();
        (report, table, parquet)
    };
    let want = run(&reference);
    assert!(
        want.0["input_warnings"].as_str().unwrap().contains(
            "1 log record(s) in logs carry GenAI content for spans no input of the run holds"
        ),
        "{}",
        want.0
    );
    for case in &cases {
        let got = run(case);
        assert_eq!(got.0, want.0, "{case}: report");
        assert_eq!(got.1, want.1, "{case}: table");
        assert!(got.2 == want.2, "{case}: traces.parquet");
    }
}
