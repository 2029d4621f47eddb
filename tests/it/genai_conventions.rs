//! The GenAI conventions as instrumentation writes them since they moved to
//! `open-telemetry/semantic-conventions-genai` (see docs/formats.md, "The GenAI conventions read"):
//! the spans that start a run and nested invocations.

use crate::common;

use common::{arg, faultgate, read_json, scratch, stderr};
use serde_json::{Value, json};

const TRACE: &str = "0123456789abcdef0123456789abcdef";
/// The span of a request handler that was not exported: the run's top span has it for parent, so no
/// exported span is parentless and the root is found by its operation.
const OUTSIDE: &str = "f000000000000001";

/// A span of trace [`TRACE`]: its id, parent, name, start and attributes (strings, or a JSON
/// OTLP value such as `{"boolValue": true}`).
fn span(id: &str, parent: Option<&str>, name: &str, start: u64, attrs: &[(&str, Value)]) -> Value {
    let attributes: Vec<Value> = attrs
        .iter()
        .map(|(k, v)| match v {
            Value::String(text) => json!({"key": k, "value": {"stringValue": text}}),
            other => json!({"key": k, "value": other}),
        })
        .collect();
    let mut span = json!({
        "traceId": TRACE,
        "spanId": id,
        "name": name,
        "startTimeUnixNano": start.to_string(),
        "endTimeUnixNano": (start + 5).to_string(),
        "attributes": attributes,
    });
    if let Some(parent) = parent {
        span["parentSpanId"] = json!(parent);
    }
    span
}

fn export(spans: &[Value]) -> String {
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

fn text(s: &str) -> Value {
    Value::String(s.into())
}

fn user(prompt: &str) -> (&'static str, Value) {
    (
        "gen_ai.input.messages",
        text(
            &json!([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]).to_string(),
        ),
    )
}

fn assistant(answer: &str) -> (&'static str, Value) {
    (
        "gen_ai.output.messages",
        text(
            &json!([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])
                .to_string(),
        ),
    )
}

/// `check --json` over one trace file with extra arguments: the exit code and the JSON report.
fn check(traces: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, traces).unwrap();
    let report = dir.path().join("r.json");
    let mut args = vec!["check", arg(&file), "--json", arg(&report)];
    args.extend(extra);
    let out = faultgate(&args);
    assert!(out.status.code() != Some(2), "{}", stderr(&out));
    (out.status.code(), read_json(&report))
}

/// The result of `check` in a report.
fn result<'r>(report: &'r Value, check: &str) -> &'r Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} result in {report}"))
}

/// `wrong_answer` against the golden answer of `prompt`: whether the answer read for the run, the
/// root's, is `answer`.
fn answers(traces: &str, prompt: &str, answer: &str) -> bool {
    let dir = scratch();
    let golden = dir.path().join("golden.json");
    std::fs::write(&golden, json!({ prompt: answer }).to_string()).unwrap();
    let (_, report) = check(
        traces,
        &["--check", "wrong_answer", "--golden", arg(&golden)],
    );
    let verdict = result(&report, "wrong_answer");
    // A prompt without a golden answer is not graded, so the reason must say the answer was.
    verdict["detected"] == false
        && verdict["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("expected "))
}

/// A run whose top span has operation `operation` over two agents; the top span holds the run's
/// input and final output, the first agent only a routing line.
fn run_under(operation: &str, name: &str) -> String {
    export(&[
        span(
            "a000000000000009",
            Some(OUTSIDE),
            name,
            10,
            &[
                ("gen_ai.operation.name", text(operation)),
                user("refund order A1"),
                assistant("Refund issued for order A1."),
            ],
        ),
        span(
            "b000000000000001",
            Some("a000000000000009"),
            "invoke_agent triage",
            11,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                ("gen_ai.agent.name", text("triage")),
                assistant("Routing to refunds."),
            ],
        ),
        span(
            "b000000000000002",
            Some("a000000000000009"),
            "invoke_agent refunds",
            12,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                ("gen_ai.agent.name", text("refunds")),
            ],
        ),
    ])
}

#[test]
fn a_conversation_turn_and_an_internal_invocation_are_roots_whose_output_is_the_answer() {
    for (operation, name) in [
        (
            "handle_conversation_turn",
            "handle_conversation_turn support_tools",
        ),
        ("gen_ai.invocation.internal", "invoke support_tools"),
    ] {
        let traces = run_under(operation, name);
        assert!(
            answers(&traces, "refund order A1", "Refund issued for order A1."),
            "{operation}: the root is the top span"
        );
        // Named after its tools, the span is still not taken for a tool call.
        let dir = scratch();
        let file = dir.path().join("t.json");
        std::fs::write(&file, &traces).unwrap();
        let out = faultgate(&["precheck", arg(&file)]);
        assert!(
            !common::stdout(&out).contains("named like a tool"),
            "{operation}: {}",
            common::stdout(&out)
        );
    }
}

#[test]
fn a_client_invoke_agent_span_is_a_root_as_an_internal_one_is() {
    let mut traces: Value =
        serde_json::from_str(&run_under("invoke_agent", "invoke_agent")).unwrap();
    // SPAN_KIND_CLIENT: a remote agent invoked over its service.
    traces["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["kind"] = json!(3);
    assert!(answers(
        &traces.to_string(),
        "refund order A1",
        "Refund issued for order A1."
    ));
}

#[test]
fn a_nested_invocation_that_starts_with_its_outer_one_does_not_take_its_place() {
    // Both start at 10 and the nested one comes first in the file: without the flag it would be
    // the first root candidate in trace order.
    let nested = |flag: Value| {
        export(&[
            span(
                "b000000000000001",
                Some("a000000000000009"),
                "invoke_agent lookup",
                10,
                &[
                    ("gen_ai.operation.name", text("invoke_agent")),
                    ("gen_ai.agent.name", text("lookup")),
                    ("gen_ai.invocation.is_nested", flag),
                    user("find order A1"),
                    assistant("Order A1: paid."),
                ],
            ),
            span(
                "a000000000000009",
                Some(OUTSIDE),
                "invoke_agent refunds",
                10,
                &[
                    ("gen_ai.operation.name", text("invoke_agent")),
                    ("gen_ai.agent.name", text("refunds")),
                    user("refund order A1"),
                    assistant("Refund issued for order A1."),
                ],
            ),
        ])
    };
    for flag in [json!({"boolValue": true}), text("true")] {
        let traces = nested(flag.clone());
        assert!(
            answers(&traces, "refund order A1", "Refund issued for order A1."),
            "is_nested {flag}"
        );
    }
    // A span that says it is not nested is a root candidate as before.
    let traces = nested(json!({"boolValue": false}));
    assert!(answers(&traces, "find order A1", "Order A1: paid."));
}

/// A run that retrieves, searches its memory and calls one tool.
fn retrieving_run() -> String {
    let root = "a000000000000001";
    export(&[
        span(
            root,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                user("refund order A1"),
                assistant("Refund issued."),
            ],
        ),
        span(
            "b000000000000001",
            Some(root),
            "retrieval kb",
            11,
            &[
                ("gen_ai.operation.name", text("retrieval")),
                ("gen_ai.data_source.id", text("kb")),
                ("gen_ai.retrieval.query.text", text("refund rules")),
            ],
        ),
        span(
            "b000000000000002",
            Some(root),
            "search_memory",
            12,
            &[
                ("gen_ai.operation.name", text("search_memory")),
                ("gen_ai.memory.query.text", text("order A1")),
            ],
        ),
        span(
            "b000000000000003",
            Some(root),
            "plan refunds",
            13,
            &[("gen_ai.operation.name", text("plan"))],
        ),
        span(
            "b000000000000004",
            Some(root),
            "execute_tool refund",
            14,
            &[
                ("gen_ai.operation.name", text("execute_tool")),
                ("gen_ai.tool.name", text("refund")),
                ("gen_ai.tool.call.arguments", text(r#"{"order": "A1"}"#)),
            ],
        ),
    ])
}

#[test]
fn retrievals_and_memory_operations_are_steps_the_policy_counts_and_a_plan_is_not() {
    let dir = scratch();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"max_calls": 2, "allow": ["refund"]}"#).unwrap();
    let (code, report) = check(
        &retrieving_run(),
        &["--check", "policy", "--policy", arg(&policy)],
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        result(&report, "policy")["reason"],
        "step 1: tool 'retrieval' not in allowlist; step 2: tool 'search_memory' not in allowlist; \
         3 tool calls > max 2",
        "{report}"
    );
}

#[test]
fn a_plan_named_like_a_tool_is_no_sign_of_an_unread_tool_call() {
    let traces = export(&[
        span(
            "a000000000000001",
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                user("refund order A1"),
                assistant("Refund issued."),
            ],
        ),
        span(
            "b000000000000001",
            Some("a000000000000001"),
            "plan tool_router",
            11,
            &[("gen_ai.operation.name", text("plan"))],
        ),
    ]);
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, &traces).unwrap();
    let out = faultgate(&["precheck", arg(&file)]);
    assert!(
        !common::stdout(&out).contains("named like a tool"),
        "{}",
        common::stdout(&out)
    );
}
