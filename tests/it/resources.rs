//! OTLP resource attributes reach the traces: the agent version from the resource's `service.version`
//! where no span carries `gen_ai.agent.version` (the GenAI conventions of 2026 dropped it from internal
//! agent spans), and `--by service` and `--by attr:NAME` from the resource where no span carries the
//! attribute. Read alike from pretty and compact OTLP/JSON large enough that the scan's workers start
//! mid-file, with a resource key after its spans, at any thread count, and from OTLP protobuf.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, read_json, scratch, stderr};
use prost::Message;
use serde_json::{Value, json};

/// One `resourceSpans` element of the generated export: its resource's attributes (none: no
/// `resource` key), whether the key follows `scopeSpans`, and how many traces it holds.
struct Element {
    resource: Option<[(&'static str, &'static str); 3]>,
    resource_last: bool,
    traces: usize,
}

/// The generated export: a shop service at 1.0 in prod, a desk service at 2.0 in staging whose
/// resource key comes after its spans, and spans without a resource.
const ELEMENTS: [Element; 3] = [
    Element {
        resource: Some([
            ("service.name", "shop"),
            ("service.version", "1.0"),
            ("deployment.environment", "prod"),
        ]),
        resource_last: false,
        traces: 600,
    },
    Element {
        resource: Some([
            ("service.name", "desk"),
            ("service.version", "2.0"),
            ("deployment.environment", "staging"),
        ]),
        resource_last: true,
        traces: 600,
    },
    Element {
        resource: None,
        resource_last: false,
        traces: 300,
    },
];

/// Every hundredth trace of the desk service names its own version and environment on its root span:
/// a span's attribute wins over the resource's.
fn names_its_own(trace: usize) -> bool {
    trace.is_multiple_of(100)
}

/// The attributes of the root span of trace `n` (numbered over the whole export) of element `e`.
fn root_attributes(e: usize, n: usize) -> Vec<(String, String)> {
    let mut attrs = vec![
        ("gen_ai.operation.name", "invoke_agent".to_string()),
        ("gen_ai.agent.name", "support".to_string()),
        ("faultgate.scenario", format!("s{:02}", n % 20)),
        ("gen_ai.prompt", format!("Where is order {n}?")),
        ("gen_ai.completion", format!("Order {n} ships on Monday.")),
        // Enough bytes that the export spans several of the scan's 1 MiB blocks.
        ("pad", "x".repeat(1_200)),
    ];
    if e == 1 && names_its_own(n) {
        attrs.push(("gen_ai.agent.version", "9.9".to_string()));
        attrs.push(("deployment.environment", "canary".to_string()));
    }
    attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Each element's traces, numbered over the whole export.
fn numbered() -> Vec<(usize, std::ops::Range<usize>)> {
    let mut at = 0;
    ELEMENTS
        .iter()
        .enumerate()
        .map(|(e, element)| {
            let traces = at..at + element.traces;
            at += element.traces;
            (e, traces)
        })
        .collect()
}

const START: u64 = 1_758_000_000_000_000_000;

fn kv(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// The export as OTLP/JSON, pretty or compact.
fn json_export(pretty: bool) -> String {
    let elements: Vec<Value> = numbered()
        .into_iter()
        .map(|(e, traces)| {
            let spans: Vec<Value> = traces
                .flat_map(|n| {
                    let trace = format!("{:032x}", n + 1);
                    let attrs: Vec<Value> = root_attributes(e, n)
                        .iter()
                        .map(|(k, v)| kv(k, v))
                        .collect();
                    let at = START + n as u64 * 1_000_000;
                    [
                        json!({"traceId": trace, "spanId": format!("{:016x}", 2 * n + 1),
                            "name": "invoke_agent support", "startTimeUnixNano": at.to_string(),
                            "endTimeUnixNano": (at + 900_000).to_string(), "attributes": attrs}),
                        json!({"traceId": trace, "spanId": format!("{:016x}", 2 * n + 2),
                            "parentSpanId": format!("{:016x}", 2 * n + 1), "name": "chat",
                            "startTimeUnixNano": (at + 100_000).to_string(),
                            "endTimeUnixNano": (at + 800_000).to_string(),
                            "attributes": [kv("gen_ai.operation.name", "chat")]}),
                    ]
                })
                .collect();
            let scope_spans = json!([{"scope": {"name": "agent"}, "spans": spans}]);
            let resource = ELEMENTS[e]
                .resource
                .map(|attrs| json!({"attributes": attrs.map(|(k, v)| kv(k, v))}));
            match (resource, ELEMENTS[e].resource_last) {
                (None, _) => json!({"scopeSpans": scope_spans}),
                (Some(r), true) => json!({"scopeSpans": scope_spans, "resource": r}),
                (Some(r), false) => json!({"resource": r, "scopeSpans": scope_spans}),
            }
        })
        .collect();
    let export = json!({"resourceSpans": elements});
    if pretty {
        serde_json::to_string_pretty(&export).unwrap()
    } else {
        export.to_string()
    }
}

/// The same export as one OTLP protobuf message.
fn protobuf_export() -> Vec<u8> {
    use otlp::*;
    let kv = |key: &str, value: &str| KeyValue {
        key: key.to_string(),
        value: Some(AnyValue {
            value: Some(any::Value::String(value.to_string())),
        }),
    };
    let id = |n: usize, len: usize| {
        let mut bytes = vec![0u8; len];
        bytes[len - 8..].copy_from_slice(&(n as u64).to_be_bytes());
        bytes
    };
    let resource_spans = numbered()
        .into_iter()
        .map(|(e, traces)| {
            let spans = traces
                .flat_map(|n| {
                    let at = START + n as u64 * 1_000_000;
                    let attributes = root_attributes(e, n)
                        .iter()
                        .map(|(k, v)| kv(k, v))
                        .collect();
                    [
                        Span {
                            trace_id: id(n + 1, 16),
                            span_id: id(2 * n + 1, 8),
                            parent_span_id: Vec::new(),
                            name: "invoke_agent support".into(),
                            start_time_unix_nano: at,
                            end_time_unix_nano: at + 900_000,
                            attributes,
                        },
                        Span {
                            trace_id: id(n + 1, 16),
                            span_id: id(2 * n + 2, 8),
                            parent_span_id: id(2 * n + 1, 8),
                            name: "chat".into(),
                            start_time_unix_nano: at + 100_000,
                            end_time_unix_nano: at + 800_000,
                            attributes: vec![kv("gen_ai.operation.name", "chat")],
                        },
                    ]
                })
                .collect();
            ResourceSpans {
                resource: ELEMENTS[e].resource.map(|attrs| Resource {
                    attributes: attrs.iter().map(|(k, v)| kv(k, v)).collect(),
                }),
                scope_spans: vec![ScopeSpans { spans }],
            }
        })
        .collect();
    TracesData { resource_spans }.encode_to_vec()
}

/// The slices a run sliced by version, service and environment should count, by label.
fn expected_slices() -> Vec<(String, u64)> {
    let desk_own = (600..1200).filter(|&n| names_its_own(n)).count() as u64;
    let mut want = vec![
        (
            "agent_version=(none),service=(none),attr:deployment.environment=(none)".to_string(),
            300,
        ),
        (
            "agent_version=1.0,service=shop,attr:deployment.environment=prod".to_string(),
            600,
        ),
        (
            "agent_version=2.0,service=desk,attr:deployment.environment=staging".to_string(),
            600 - desk_own,
        ),
        (
            "agent_version=9.9,service=desk,attr:deployment.environment=canary".to_string(),
            desk_own,
        ),
    ];
    want.sort();
    want
}

const BY: [&str; 6] = [
    "--by",
    "agent_version",
    "--by",
    "service",
    "--by",
    "attr:deployment.environment",
];

/// Runs `check` on `input` with `args` and `threads` threads, writing the JSON report to `report`.
fn check(dir: &Path, input: &Path, args: &[&str], threads: &str, report: &Path) -> Value {
    let out = common::command(dir)
        .env("RAYON_NUM_THREADS", threads)
        .args([
            "check",
            arg(input),
            "--json",
            arg(report),
            "--table",
            "none",
        ])
        .args(["-q"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    read_json(report)
}

/// The slice labels of a report with their trace counts, sorted.
fn slices(report: &Value) -> Vec<(String, u64)> {
    let mut got: Vec<(String, u64)> = report["slices"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("slices in {report}"))
        .iter()
        .map(|v| {
            (
                v["slice"].as_str().unwrap().to_string(),
                v["traces"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    got
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn slices_and_the_agent_version_read_the_resource_in_pretty_and_compact_json() {
    let dir = scratch();
    for (name, pretty) in [("pretty.json", true), ("compact.json", false)] {
        let text = json_export(pretty);
        assert!(text.len() > 2 << 20, "{name} spans several scan blocks");
        let input = write(dir.path(), name, text.as_bytes());
        let report = dir.path().join(format!("{name}.report.json"));
        let sliced = check(dir.path(), &input, &BY, "4", &report);
        assert_eq!(slices(&sliced), expected_slices(), "{name}");
        // The version a span names wins over its resource's: the desk's own-version traces are not 2.0.
        for (version, traces) in [("1.0", 600), ("2.0", 594), ("9.9", 6)] {
            let selected = check(
                dir.path(),
                &input,
                &["--agent-version", version],
                "4",
                &report,
            );
            assert_eq!(
                selected["traces"], traces,
                "{name} --agent-version {version}"
            );
        }
    }
}

#[test]
fn resource_reads_give_the_same_bytes_at_one_two_and_four_threads() {
    let dir = scratch();
    let input = write(dir.path(), "t.json", json_export(true).as_bytes());
    let outputs = |threads: &str| {
        let report = dir.path().join(format!("r{threads}.json"));
        let parquet = dir.path().join(format!("pq{threads}"));
        let mut args = BY.to_vec();
        args.extend(["--parquet", arg(&parquet)]);
        check(dir.path(), &input, &args, threads, &report);
        [
            std::fs::read(&report).unwrap(),
            std::fs::read(parquet.join("traces.parquet")).unwrap(),
            std::fs::read(parquet.join("verdicts.parquet")).unwrap(),
        ]
    };
    let one = outputs("1");
    for threads in ["2", "4"] {
        assert!(one == outputs(threads), "{threads} threads differ from one");
    }
}

#[test]
fn protobuf_reads_the_resource_as_json_does() {
    let dir = scratch();
    let json_input = write(dir.path(), "t.json", json_export(false).as_bytes());
    let proto_input = write(dir.path(), "t.pb", &protobuf_export());
    let report = |name: &str, input: &Path, args: &[&str]| {
        let mut report = check(dir.path(), input, args, "2", &dir.path().join(name));
        // The reports differ only in where they read from.
        report.as_object_mut().unwrap().remove("inputs");
        report
    };
    let from_json = report("j.json", &json_input, &BY);
    assert_eq!(slices(&from_json), expected_slices());
    assert_eq!(report("p.json", &proto_input, &BY), from_json);
    let selected = ["--agent-version", "2.0"];
    assert_eq!(
        report("p2.json", &proto_input, &selected),
        report("j2.json", &json_input, &selected)
    );
}

/// The OTLP trace messages, declared here apart from the crate's so the test writes the wire form
/// from the proto's field numbers.
mod otlp {
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct TracesData {
        #[prost(message, repeated, tag = "1")]
        pub resource_spans: Vec<ResourceSpans>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ResourceSpans {
        #[prost(message, optional, tag = "1")]
        pub resource: Option<Resource>,
        #[prost(message, repeated, tag = "2")]
        pub scope_spans: Vec<ScopeSpans>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Resource {
        #[prost(message, repeated, tag = "1")]
        pub attributes: Vec<KeyValue>,
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
        #[prost(fixed64, tag = "7")]
        pub start_time_unix_nano: u64,
        #[prost(fixed64, tag = "8")]
        pub end_time_unix_nano: u64,
        #[prost(message, repeated, tag = "9")]
        pub attributes: Vec<KeyValue>,
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
        #[prost(oneof = "any::Value", tags = "1")]
        pub value: Option<any::Value>,
    }
    pub(crate) mod any {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub(crate) enum Value {
            #[prost(string, tag = "1")]
            String(String),
        }
    }
}
