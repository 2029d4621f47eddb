//! Property: the same generated traces give the same verdicts whatever shape they are written in: one
//! OTLP/JSON export, JSON lines (one export per span), a gzipped export, a folder of files holding
//! whole traces, or a folder whose files each hold some spans of every trace.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use serde_json::{Value, json};

/// One generated tool call: tool, arguments, result, whether its span has an error status.
#[derive(Debug, Clone)]
struct Call {
    tool: &'static str,
    query: u8,
    result: &'static str,
    error: bool,
}

/// One generated trace: its prompt, answer, termination and tool calls, and its first start.
#[derive(Debug, Clone)]
struct Trace {
    prompt: &'static str,
    answer: &'static str,
    termination: Option<&'static str>,
    tokens: Option<(u32, u32)>,
    calls: Vec<Call>,
}

const TOOLS: [&str; 3] = ["search", "fetch_page", "pay"];
const RESULTS: [&str; 6] = [
    "[]",
    "{}",
    "found the page about solar panels",
    "Error: upstream timed out",
    "",
    "{\"results\": [], \"count\": 0}",
];
const PROMPTS: [&str; 3] = [
    "What is the capital of France?",
    "Find the cheapest flight to Oslo",
    "Summarise the refund policy",
];
const ANSWERS: [&str; 4] = [
    "",
    "Paris.",
    "I don't know.",
    "The cheapest flight is 120 EUR on Tuesday.",
];

fn call() -> impl Strategy<Value = Call> {
    (
        0..TOOLS.len(),
        0u8..3,
        0..RESULTS.len(),
        proptest::bool::weighted(0.15),
    )
        .prop_map(|(t, query, r, error)| Call {
            tool: TOOLS[t],
            query,
            result: RESULTS[r],
            error,
        })
}

fn trace() -> impl Strategy<Value = Trace> {
    (
        0..PROMPTS.len(),
        0..ANSWERS.len(),
        proptest::option::of(prop_oneof![Just("max_steps"), Just("completed")]),
        proptest::option::of((1u32..5000, 1u32..2000)),
        proptest::collection::vec(call(), 0..14),
    )
        .prop_map(|(p, a, termination, tokens, calls)| Trace {
            prompt: PROMPTS[p],
            answer: ANSWERS[a],
            termination,
            tokens,
            calls,
        })
}

fn attr(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// The OTLP spans of trace number `n`, root first.
fn spans(n: usize, trace: &Trace) -> Vec<Value> {
    let trace_id = format!("{:032x}", 0xabc0_0000 + n);
    let start = 1_758_000_000_000_000_000u64 + n as u64 * 1_000_000_000_000;
    let root_id = format!("{:016x}", (n << 8) + 1);
    let mut root_attrs = vec![
        attr("gen_ai.operation.name", "invoke_agent"),
        attr("gen_ai.agent.name", "agent"),
        attr(
            "gen_ai.input.messages",
            &json!([{"role": "user", "parts": [{"type": "text", "content": trace.prompt}]}])
                .to_string(),
        ),
        attr(
            "gen_ai.output.messages",
            &json!([{"role": "assistant", "parts": [{"type": "text", "content": trace.answer}]}])
                .to_string(),
        ),
    ];
    if let Some(t) = trace.termination {
        root_attrs.push(attr("faultgate.termination", t));
    }
    if let Some((input, output)) = trace.tokens {
        root_attrs.push(
            json!({"key": "gen_ai.usage.input_tokens", "value": {"intValue": input.to_string()}}),
        );
        root_attrs
            .push(json!({"key": "gen_ai.usage.output_tokens", "value": {"intValue": output}}));
    }
    let end = start + (trace.calls.len() as u64 + 1) * 1_000_000_000;
    let mut out = vec![json!({
        "traceId": trace_id, "spanId": root_id, "name": "invoke_agent", "kind": 1,
        "startTimeUnixNano": start.to_string(), "endTimeUnixNano": end.to_string(),
        "attributes": root_attrs,
    })];
    for (i, c) in trace.calls.iter().enumerate() {
        let at = start + (i as u64 + 1) * 1_000_000_000;
        let mut span = json!({
            "traceId": trace_id, "spanId": format!("{:016x}", (n << 8) + i + 2), "parentSpanId": root_id,
            "name": format!("execute_tool {}", c.tool), "kind": 1,
            "startTimeUnixNano": at.to_string(), "endTimeUnixNano": (at + 500_000_000).to_string(),
            "attributes": [
                attr("gen_ai.operation.name", "execute_tool"),
                attr("gen_ai.tool.name", c.tool),
                attr("gen_ai.tool.call.arguments", &json!({"q": format!("query {}", c.query)}).to_string()),
                attr("gen_ai.tool.call.result", c.result),
            ],
        });
        if c.error {
            span["status"] = json!({"code": 2, "message": "tool failed"});
        }
        out.push(span);
    }
    out
}

fn export(spans: &[Value]) -> Value {
    json!({"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", "gen")]},
        "scopeSpans": [{"scope": {"name": "gen"}, "spans": spans}],
    }]})
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// The verdicts of `check` on `input`: every result row and the fired counts, in a stable order.
fn verdicts(dir: &Path, input: &str) -> Value {
    let report = dir.join(format!("{}.report.json", input.replace('/', "_")));
    let out = Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .args(["check", input, "--json"])
        .arg(&report)
        .current_dir(dir)
        .output()
        .expect("run faultgate");
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{input}: exit {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let mut rows = report["results"].as_array().cloned().unwrap_or_default();
    rows.sort_by_key(|r| (r["trace_id"].to_string(), r["check"].to_string()));
    json!({
        "exit": code,
        "traces": report["traces"].take(),
        "fired": report["fired"].take(),
        "measures": report["measures"].take(),
        "results": rows,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_shape_gives_the_same_verdicts(
        traces in proptest::collection::vec(trace(), 1..4),
        parts in 2usize..5,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<Vec<Value>> = traces.iter().enumerate().map(|(n, t)| spans(n, t)).collect();
        let flat: Vec<Value> = all.iter().flatten().cloned().collect();

        let whole = serde_json::to_vec_pretty(&export(&flat)).unwrap();
        std::fs::write(dir.path().join("whole.json"), &whole).unwrap();
        std::fs::write(dir.path().join("whole.json.gz"), gzip(&whole)).unwrap();
        let lines: String = flat
            .iter()
            .map(|span| export(std::slice::from_ref(span)).to_string() + "\n")
            .collect();
        std::fs::write(dir.path().join("lines.jsonl"), &lines).unwrap();
        // A folder of files, one per trace.
        std::fs::create_dir(dir.path().join("split")).unwrap();
        for (n, spans) in all.iter().enumerate() {
            let file = dir.path().join(format!("split/part-{n}.json"));
            std::fs::write(file, export(spans).to_string()).unwrap();
        }
        // A folder whose files each hold every `parts`-th span, so each trace's spans (its root
        // included) are spread over several files and come together by trace id.
        std::fs::create_dir(dir.path().join("spread")).unwrap();
        for part in 0..parts {
            let share: Vec<Value> = flat.iter().skip(part).step_by(parts).cloned().collect();
            if !share.is_empty() {
                let file = dir.path().join(format!("spread/part-{part}.json"));
                std::fs::write(file, export(&share).to_string()).unwrap();
            }
        }

        let expected = verdicts(dir.path(), "whole.json");
        prop_assert_eq!(expected["traces"].as_u64(), Some(traces.len() as u64));
        for shape in ["whole.json.gz", "lines.jsonl", "split", "spread"] {
            let got = verdicts(dir.path(), shape);
            prop_assert_eq!(&got, &expected, "{} differs from whole.json", shape);
        }
    }
}
