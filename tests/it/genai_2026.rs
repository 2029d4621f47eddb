//! The GenAI conventions as instrumentation writes them in late 2026 (see docs/formats.md, "The GenAI
//! conventions read"): renamed attributes read under both names, provider-run tools, compaction,
//! content kept by reference, the agent version of a resource and span links.

use crate::common;

use common::{arg, faultgate, read_json, scratch, stderr};
use serde_json::{Value, json};

const TRACE: &str = "0123456789abcdef0123456789abcdef";
const ROOT: &str = "a000000000000001";

/// An OTLP attribute list from pairs: strings as `stringValue`, integers as `intValue`, any other
/// value as the OTLP `AnyValue` it already is.
fn attributes(attrs: &[(&str, Value)]) -> Vec<Value> {
    attrs
        .iter()
        .map(|(k, v)| match v {
            Value::String(text) => json!({"key": k, "value": {"stringValue": text}}),
            Value::Number(n) => json!({"key": k, "value": {"intValue": n.to_string()}}),
            other => json!({"key": k, "value": other}),
        })
        .collect()
}

/// A span of `trace`: its id, parent, name, start and attributes.
fn span_of(
    trace: &str,
    id: &str,
    parent: Option<&str>,
    name: &str,
    start: u64,
    attrs: &[(&str, Value)],
) -> Value {
    let mut span = json!({
        "traceId": trace,
        "spanId": id,
        "name": name,
        "startTimeUnixNano": start.to_string(),
        "endTimeUnixNano": (start + 5).to_string(),
        "attributes": attributes(attrs),
    });
    if let Some(parent) = parent {
        span["parentSpanId"] = json!(parent);
    }
    span
}

/// A span of trace [`TRACE`].
fn span(id: &str, parent: Option<&str>, name: &str, start: u64, attrs: &[(&str, Value)]) -> Value {
    span_of(TRACE, id, parent, name, start, attrs)
}

fn export(spans: &[Value]) -> String {
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

/// A messages attribute: one message of `role` with `parts`, plus `extra` fields on the message.
fn messages(key: &'static str, role: &str, parts: &Value, extra: &Value) -> (&'static str, Value) {
    let mut message = json!({"role": role, "parts": parts});
    if let (Some(m), Some(extra)) = (message.as_object_mut(), extra.as_object()) {
        m.extend(extra.clone());
    }
    (key, Value::String(json!([message]).to_string()))
}

fn text(s: &str) -> Value {
    Value::String(s.into())
}

/// `check --json` over one trace file with extra arguments: the exit code, the JSON report and stderr.
fn check(traces: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, traces).unwrap();
    let report = dir.path().join("r.json");
    let mut args = vec!["check", arg(&file), "--json", arg(&report)];
    args.extend(extra);
    let out = faultgate(&args);
    assert!(out.status.code() != Some(2), "{}", stderr(&out));
    (out.status.code(), read_json(&report), stderr(&out))
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

#[test]
fn token_counts_are_read_under_their_deprecated_names_and_the_current_ones_first() {
    let chat = |id: &str, start: u64, attrs: &[(&str, Value)]| {
        let mut all = vec![("gen_ai.operation.name", text("chat"))];
        all.extend_from_slice(attrs);
        span(id, Some(ROOT), "chat", start, &all)
    };
    let traces = export(&[
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[("gen_ai.operation.name", text("invoke_agent"))],
        ),
        // Written before the rename: only the old names.
        chat(
            "b000000000000001",
            11,
            &[
                ("gen_ai.usage.prompt_tokens", json!(3)),
                ("gen_ai.usage.completion_tokens", json!(4)),
            ],
        ),
        // Both names: the current one is read, the old one ignored.
        chat(
            "b000000000000002",
            12,
            &[
                ("gen_ai.usage.input_tokens", json!(10)),
                ("gen_ai.usage.prompt_tokens", json!(1000)),
                ("gen_ai.usage.output_tokens", json!(20)),
                ("gen_ai.usage.completion_tokens", json!(2000)),
            ],
        ),
    ]);
    let (_, report, _) = check(&traces, &["--check", "policy"]);
    assert_eq!(report["measures"][TRACE]["tokens"], json!(37.0), "{report}");
}

/// A chat span whose output message says why the model stopped in the deprecated per-message field,
/// with the span's own list when `span_reasons` is given.
fn stopped_on(message_reason: &str, span_reasons: Option<Value>) -> String {
    let mut attrs = vec![
        ("gen_ai.operation.name", text("chat")),
        messages(
            "gen_ai.output.messages",
            "assistant",
            &json!([{"type": "text", "content": "The capital of"}]),
            &json!({"finish_reason": message_reason}),
        ),
    ];
    if let Some(reasons) = span_reasons {
        attrs.push(("gen_ai.response.finish_reasons", reasons));
    }
    export(&[span(ROOT, None, "chat", 10, &attrs)])
}

#[test]
fn a_per_message_finish_reason_is_read_when_the_span_has_no_finish_reasons() {
    let (code, report, _) = check(
        &stopped_on("length", None),
        &["--check", "context_overflow"],
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        result(&report, "context_overflow")["reason"],
        "span 1 (chat) stopped on finish reason 'length': output cut at the token limit"
    );
    // The span's own list wins over the deprecated field.
    let stop = json!({"arrayValue": {"values": [{"stringValue": "stop"}]}});
    let (code, report, _) = check(
        &stopped_on("length", Some(stop)),
        &["--check", "context_overflow"],
    );
    assert_eq!(code, Some(0), "{report}");
}

fn user(prompt: &str) -> (&'static str, Value) {
    messages(
        "gen_ai.input.messages",
        "user",
        &json!([{"type": "text", "content": prompt}]),
        &json!({}),
    )
}

fn answer(text: &str) -> (&'static str, Value) {
    messages(
        "gen_ai.output.messages",
        "assistant",
        &json!([{"type": "text", "content": text}]),
        &json!({}),
    )
}

/// A run whose chat spans' output and input messages hold `first` and `second` (the second request's
/// input repeats the first's output, as a conversation's history does).
fn chats(first_output: &Value, second_input: &Value) -> String {
    export(&[
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                user("weather in Paris"),
                answer("Sunny."),
            ],
        ),
        span(
            "b000000000000001",
            Some(ROOT),
            "chat",
            11,
            &[
                ("gen_ai.operation.name", text("chat")),
                messages(
                    "gen_ai.output.messages",
                    "assistant",
                    first_output,
                    &json!({}),
                ),
            ],
        ),
        span(
            "b000000000000002",
            Some(ROOT),
            "chat",
            12,
            &[
                ("gen_ai.operation.name", text("chat")),
                messages(
                    "gen_ai.input.messages",
                    "assistant",
                    second_input,
                    &json!({}),
                ),
                answer("Sunny."),
            ],
        ),
    ])
}

fn web_search(id: &str) -> Value {
    json!({"type": "server_tool_call", "id": id, "name": "web_search",
           "server_tool_call": {"type": "web_search", "query": "weather Paris"}})
}

fn web_search_failed(id: &str) -> Value {
    json!({"type": "server_tool_call_response", "id": id,
           "server_tool_call_response": {"type": "web_search", "status": "failed", "error": "rate limited"}})
}

#[test]
fn a_provider_run_tool_is_a_step_paired_with_its_response_by_id() {
    // Call and response in one output, beside a generic part of a kind no convention defines.
    let output = json!([
        web_search("ws_1"),
        web_search_failed("ws_1"),
        {"type": "generic", "generic_type": "citation", "url": "https://example.com/paris"},
        {"type": "text", "content": "Sunny."}
    ]);
    let traces = chats(&output, &json!([{"type": "text", "content": "Sunny."}]));
    let dir = scratch();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"allow": ["lookup"]}"#).unwrap();
    let (code, report, _) = check(
        &traces,
        &[
            "--check",
            "policy,unrecovered_tool_error,abstention",
            "--policy",
            arg(&policy),
        ],
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        result(&report, "policy")["reason"],
        "step 1: tool 'web_search' not in allowlist",
        "{report}"
    );
    assert_eq!(
        result(&report, "unrecovered_tool_error")["detected"],
        true,
        "{report}"
    );
    // The generic part is read without error and leaves the answer alone.
    assert_eq!(result(&report, "abstention")["detected"], false);
}

#[test]
fn a_provider_run_tool_takes_its_response_from_a_later_request_s_history() {
    // The response to ws_1 sits only in the next request's input.
    let output = json!([web_search("ws_1")]);
    let history = json!([web_search("ws_1"), web_search_failed("ws_1")]);
    let (code, report, _) = check(
        &chats(&output, &history),
        &["--check", "unrecovered_tool_error"],
    );
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        result(&report, "unrecovered_tool_error")["reason"],
        "Tool 'web_search' failed at step 1 (Response starts with 'Error:') and no subsequent call to \
         'web_search' succeeded.",
        "{report}"
    );
}

/// A run of two requests: the first's output holds `first_output`, the second stops on `length`.
fn cut_after(first_output: &Value) -> String {
    let length = json!({"arrayValue": {"values": [{"stringValue": "length"}]}});
    export(&[
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                user("summarise the thread"),
            ],
        ),
        span(
            "b000000000000001",
            Some(ROOT),
            "chat compact",
            11,
            &[
                ("gen_ai.operation.name", text("chat")),
                messages(
                    "gen_ai.output.messages",
                    "assistant",
                    first_output,
                    &json!({}),
                ),
            ],
        ),
        span(
            "b000000000000002",
            Some(ROOT),
            "chat",
            12,
            &[
                ("gen_ai.operation.name", text("chat")),
                ("gen_ai.response.finish_reasons", length),
            ],
        ),
    ])
}

#[test]
fn context_overflow_says_when_the_context_was_compacted_before_the_cut() {
    let compaction = json!([{"type": "compaction", "id": "cmp_1", "content": "The user asked..."}]);
    let (code, report, _) = check(&cut_after(&compaction), &["--check", "context_overflow"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        result(&report, "context_overflow")["reason"],
        "span 3 (chat) stopped on finish reason 'length': output cut at the token limit; the \
         context was compacted at span 2 (chat compact) before the cut",
        "{report}"
    );
    // Without a compaction part the reason is as before.
    let plain = json!([{"type": "text", "content": "The user asked..."}]);
    let (_, report, _) = check(&cut_after(&plain), &["--check", "context_overflow"]);
    assert_eq!(
        result(&report, "context_overflow")["reason"],
        "span 3 (chat) stopped on finish reason 'length': output cut at the token limit"
    );
}

#[test]
fn content_kept_by_reference_is_counted_and_a_run_of_references_alone_sees_structure_only() {
    let input = json!([{"role": "user", "parts": [
        {"type": "uri", "modality": "image", "uri": "gs://bucket/photo.png"},
        {"type": "file", "modality": "document", "file_id": "file-abc"}
    ]}]);
    let traces = export(&[
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                (
                    "gen_ai.input.messages_ref",
                    text("gs://bucket/t/inputs.json"),
                ),
                (
                    "gen_ai.output.messages_ref",
                    text("gs://bucket/t/outputs.json"),
                ),
            ],
        ),
        span(
            "b000000000000001",
            Some(ROOT),
            "chat",
            11,
            &[
                ("gen_ai.operation.name", text("chat")),
                ("gen_ai.input.messages", Value::String(input.to_string())),
            ],
        ),
    ]);
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, traces).unwrap();
    let out = faultgate(&["precheck", arg(&file)]);
    let printed = common::stdout(&out);
    assert!(
        printed.contains("no content attributes (prompt, answer, tool arguments or results): rules see structure only"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "4 piece(s) of content sit in external storage behind a reference (gen_ai.*_ref \
             attributes, uri or file parts): faultgate does not fetch them, so the checks do not \
             read them"
        ),
        "{printed}"
    );
}

const LINKED: &str = "11111111111111111111111111111111";

/// Two traces: [`TRACE`], and a later [`LINKED`] whose root links back to [`TRACE`]'s root (the next
/// turn of the conversation, continued in a trace of its own) and to one of its own spans.
fn continued_elsewhere() -> String {
    let mut next = span_of(
        LINKED,
        "c000000000000001",
        None,
        "invoke_agent",
        30,
        &[
            ("gen_ai.operation.name", text("invoke_agent")),
            user("and refund order A2"),
        ],
    );
    next["links"] = json!([
        {"traceId": TRACE, "spanId": ROOT},
        {"traceId": LINKED, "spanId": "c000000000000002"}
    ]);
    export(&[
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", text("invoke_agent")),
                user("refund order A1"),
            ],
        ),
        next,
    ])
}

#[test]
fn a_trace_linked_from_another_is_not_joined_silently() {
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, continued_elsewhere()).unwrap();
    let out = faultgate(&["precheck", arg(&file)]);
    let printed = common::stdout(&out);
    assert!(
        printed.contains(&format!(
            "warning  111111111111  span links point to 1 other trace(s) (first: {TRACE}): a run \
             continued in another trace is checked as a run of its own, not joined to it"
        )),
        "{printed}"
    );
    // A link within the trace itself is no continuation.
    assert!(
        !printed.contains("warning  0123456789ab  span links"),
        "{printed}"
    );
}

#[test]
fn check_warns_of_traces_that_link_to_other_traces() {
    let (_, report, printed) = check(&continued_elsewhere(), &["--check", "policy"]);
    let warning = printed
        .lines()
        .find(|l| l.contains(" link to other traces"))
        .unwrap_or_else(|| panic!("no link warning in {printed}"));
    // The file is named as the run was given it.
    assert!(
        warning.starts_with("warning: 1 trace(s) in ")
            && warning.ends_with(
                "t.json link to other traces (span links: a run continued in another trace); \
                 each is checked as a run of its own"
            ),
        "{warning}"
    );
    // Both traces are still runs of their own.
    assert_eq!(report["traces"], 2, "{report}");
}
