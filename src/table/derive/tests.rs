//! Unit tests of what is derived from span records: recorded outcomes, raw strings, tool activity
//! in each of its forms, system instructions, reused call ids, and message text read in one pass.

use super::*;

#[test]
fn a_recorded_outcome_passes_at_1_and_a_score_counts_only_when_named() {
    let root = |attrs: &[(&str, Value)]| {
        let mut span = SpanRecord::default();
        for (k, v) in attrs {
            span.attrs.insert((*k).to_string(), v.clone());
        }
        span
    };
    let reward = |r: f64| root(&[(attr::RECORDED_OUTCOME, serde_json::json!(r))]);
    assert_eq!(recorded_outcome(&reward(1.0), None, false), Some(true));
    assert_eq!(
        recorded_outcome(&reward(0.999_999_5), None, false),
        Some(true)
    );
    assert_eq!(recorded_outcome(&reward(0.5), None, false), Some(false));
    let scored = root(&[(
        attr::SCORES,
        serde_json::json!({"correct": "False", "style": 1, "note": "meh"}),
    )]);
    assert_eq!(recorded_outcome(&scored, None, false), None);
    assert_eq!(
        recorded_outcome(&scored, Some("correct"), false),
        Some(false)
    );
    assert_eq!(recorded_outcome(&scored, Some("style"), false), Some(true));
    assert_eq!(recorded_outcome(&scored, Some("note"), false), None);
    assert_eq!(recorded_outcome(&scored, Some("absent"), false), None);
    let trajectory = root(&[(attr::TASK_SUCCESS, Value::Bool(false))]);
    assert_eq!(recorded_outcome(&trajectory, None, false), None);
    assert_eq!(recorded_outcome(&trajectory, None, true), Some(false));
}

#[test]
fn a_raw_string_is_its_own_text_unless_it_holds_escapes() {
    let raw = |json: &str| serde_json::from_str::<Box<RawValue>>(json).unwrap();
    let plain = raw(r#""plain é text""#);
    assert!(matches!(text_of(&plain), Cow::Borrowed("plain é text")));
    let escaped = raw(r#""say \"hi\"\n\u00e9""#);
    assert_eq!(text_of(&escaped), "say \"hi\"\né");
    assert_eq!(text_of(&raw(r#""""#)), "");
    assert_eq!(text_of(&raw("12")), "12");
}

fn chat_span(id: &'static str, start: i64, input: &str, output: &str) -> SpanRecord<'static> {
    let mut span = SpanRecord {
        span_id: id.into(),
        name: "chat".into(),
        start_ns: start,
        end_ns: start + 1,
        ..SpanRecord::default()
    };
    span.attrs
        .insert(attr::INPUT_MESSAGES.into(), Value::String(input.into()));
    span.attrs
        .insert(attr::OUTPUT_MESSAGES.into(), Value::String(output.into()));
    span
}

fn named(name: &'static str, attrs: &[(&str, Value)]) -> SpanRecord<'static> {
    let mut span = SpanRecord {
        span_id: "s".into(),
        name: name.into(),
        ..SpanRecord::default()
    };
    for (k, v) in attrs {
        span.attrs.insert((*k).into(), v.clone());
    }
    span
}

#[test]
fn tool_activity_is_seen_in_each_of_its_forms() {
    let cases: Vec<(SpanRecord<'static>, &str)> = vec![
        (
            named("x", &[(attr::OPERATION_NAME, "execute_tool".into())]),
            "span 'x' is a tool execution",
        ),
        (
            named("lookup", &[(attr::OPENINFERENCE_KIND, "TOOL".into())]),
            "span 'lookup' is an OpenInference TOOL span",
        ),
        (
            named("x", &[(attr::LEGACY_TOOL_NAME, "search".into())]),
            "span 'x' carries tool.name",
        ),
        (
            named("search_tool", &[]),
            "span 'search_tool' is named like a tool",
        ),
        (
            named("call_weather", &[]),
            "span 'call_weather' is named like a tool",
        ),
        (
            named(
                "chat",
                &[(attr::FINISH_REASONS, serde_json::json!(["tool_calls"]))],
            ),
            "span 'chat' finished with tool_calls",
        ),
        (
            chat_span(
                "c",
                1,
                "[]",
                r#"[{"role":"assistant","tool_calls":[{"id":"1"}]}]"#,
            ),
            "the messages of span 'chat' hold \"tool_calls\"",
        ),
        (
            chat_span("c", 1, r#"[{"role":"tool","content":"42"}]"#, "[]"),
            "the messages of span 'chat' hold \"role\": \"tool\"",
        ),
    ];
    for (span, want) in cases {
        assert_eq!(tool_evidence(&[span]).as_deref(), Some(want));
    }
    // The tool calls and results of earlier turns, re-sent before this turn's user message, are
    // the earlier turns' (their own traces' steps), not this trace's.
    let history = r#"[{"role":"user","parts":[{"type":"text","content":"status?"}]},
        {"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"lookup","arguments":{}}]},
        {"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"shipped"}]},
        {"role":"assistant","parts":[{"type":"text","content":"Shipped."}]},
        {"role":"user","parts":[{"type":"text","content":"How is it delivered?"}]}]"#;
    let answer = r#"[{"role":"assistant","parts":[{"type":"text","content":"By courier."}]}]"#;
    assert_eq!(tool_evidence(&[chat_span("c", 1, history, answer)]), None);
    // A tool result of this turn, after its user message, still shows.
    let this_turn = format!(
        "{},{}]",
        history.trim_end_matches(']'),
        r#"{"role":"tool","parts":[{"type":"tool_call_response","id":"c2","response":"x"}]}"#
    );
    assert_eq!(
        tool_evidence(&[chat_span("c", 1, &this_turn, answer)]).as_deref(),
        Some("the messages of span 'chat' hold \"tool_call_response\"")
    );
    // No tool activity at all: nothing to warn about.
    for span in [
        named("plan", &[]),
        named("call_llm", &[]),
        named(
            "chat",
            &[(attr::FINISH_REASONS, serde_json::json!(["stop"]))],
        ),
        chat_span(
            "c",
            1,
            r#"[{"role":"user","content":"hi"}]"#,
            r#"[{"role":"assistant","content":"hello"}]"#,
        ),
    ] {
        assert_eq!(tool_evidence(&[span]), None);
    }
}

#[test]
fn tool_calls_spelled_with_escapes_are_still_read() {
    // `\u0074ool_call` spells `tool_call`; the substring shortcut must not hide it.
    let output = r#"[{"role": "assistant", "parts": [{"type": "\u0074ool_call", "id": "c1", "name": "search", "arguments": {"q": 1}}]}]"#;
    let input = r#"[{"role": "tool", "parts": [{"type": "tool_call_respons\u0065", "id": "c1", "result": "[]"}]}]"#;
    let spans = [
        chat_span("a", 1, "[]", output),
        chat_span("b", 2, input, "[]"),
    ];
    let steps = steps(&spans, true);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].tool, "search");
    assert_eq!(steps[0].arguments, r#"{"q": 1}"#);
    assert_eq!(steps[0].result, "[]");
}

#[test]
fn system_instructions_read_as_the_system_message_that_leads_the_input() {
    let user = r#"{"role": "user", "parts": [{"type": "text", "content": "find x"}]}"#;
    let call = r#"[{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search", "arguments": {"q": "x"}}]}]"#;
    for (instructions, parts) in [
        // The conventions' list of parts.
        (
            r#"[{"type": "text", "content": "Be brief."}]"#,
            r#"[{"type": "text", "content": "Be brief."}]"#,
        ),
        // Plain text: one text part, whose quotes are no message sign.
        (
            r#"Never answer with "tool_call" blocks."#,
            r#"[{"type": "text", "content": "Never answer with \"tool_call\" blocks."}]"#,
        ),
        // Parts that are message signs, and a response that pairs with the call.
        (
            r#"[{"type": "tool_call_response", "id": "c1", "result": "42"}]"#,
            r#"[{"type": "tool_call_response", "id": "c1", "result": "42"}]"#,
        ),
    ] {
        let message = format!(r#"[{{"role": "system", "parts": {parts}}}, {user}]"#);
        let in_messages = [chat_span("a", 1, &message, call)];
        let mut apart = [chat_span("a", 1, &format!("[{user}]"), call)];
        apart[0].attrs.insert(
            attr::SYSTEM_INSTRUCTIONS.into(),
            Value::String(instructions.into()),
        );
        assert_eq!(
            steps(&apart, true),
            steps(&in_messages, true),
            "{instructions}"
        );
        assert_eq!(prompt(&apart, Some(0)), "find x");
        let without_steps = |spans: &[SpanRecord<'static>]| {
            let mut spans = spans.to_vec();
            spans[0].attrs.remove(attr::OUTPUT_MESSAGES);
            tool_evidence(&spans)
        };
        assert_eq!(
            without_steps(&apart),
            without_steps(&in_messages),
            "{instructions}"
        );
    }
    // The response in the instructions is the call's result.
    let mut apart = [chat_span("a", 1, "[]", call)];
    apart[0].attrs.insert(
        attr::SYSTEM_INSTRUCTIONS.into(),
        serde_json::json!([{"type": "tool_call_response", "id": "c1", "result": "42"}]),
    );
    assert_eq!(steps(&apart, true)[0].result, "42");
}

#[test]
fn a_reused_call_id_pairs_each_call_with_its_own_response() {
    // Each chat span's input repeats the conversation so far; the two calls share the id c1.
    let call = |name: &str| {
        format!(
            r#"{{"role": "assistant", "parts": [{{"type": "tool_call", "id": "c1", "name": "{name}", "arguments": {{}}}}]}}"#
        )
    };
    let response = |result: &str| {
        format!(
            r#"{{"role": "tool", "parts": [{{"type": "tool_call_response", "id": "c1", "result": "{result}"}}]}}"#
        )
    };
    let (search, update) = (call("search"), call("update"));
    let (found, failed) = (
        response("HAT030 found"),
        response("Error: HAT030 not available"),
    );
    let spans = [
        chat_span("a", 1, "[]", &format!("[{search}]")),
        chat_span(
            "b",
            2,
            &format!("[{search}, {found}]"),
            &format!("[{update}]"),
        ),
        chat_span(
            "c",
            3,
            &format!("[{search}, {found}, {update}, {failed}]"),
            "[]",
        ),
        // The update's call repeated in a later span's output: a copy takes the last response.
        chat_span("d", 4, "[]", &format!("[{update}]")),
    ];
    let read: Vec<(String, String)> = steps(&spans, true)
        .iter()
        .map(|s| (s.tool.to_string(), s.result.to_string()))
        .collect();
    assert_eq!(
        read,
        [
            ("search".into(), "HAT030 found".into()),
            ("update".into(), "Error: HAT030 not available".into()),
            ("update".into(), "Error: HAT030 not available".into()),
        ]
    );
}

#[test]
fn messages_without_tool_parts_give_no_steps() {
    let spans = [chat_span(
        "a",
        1,
        r#"[{"role": "user", "content": "hi"}]"#,
        r#"[{"role": "assistant", "parts": [{"type": "text", "content": "tool_call"}]}]"#,
    )];
    assert!(steps(&spans, true).is_empty());
}

/// `message_text` of a JSON string as it read lists before the one pass: item by item.
fn message_text_item_by_item<'v>(text: &'v str, role: &str) -> Cow<'v, str> {
    match lazy::list_items(text) {
        Some(items) => role_text(&items, role),
        None if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => Cow::Borrowed(""),
        None => Cow::Borrowed(text),
    }
}

/// The one-pass reading of a message list against the item-by-item one it stands in for.
fn both_readings(text: &str, role: &str) -> (Option<String>, Option<String>) {
    let one_pass = lazy::messages(text, role).map(|pieces| join_pieces(pieces).into_owned());
    let item_by_item = lazy::list_items(text).map(|items| role_text(&items, role).into_owned());
    (one_pass, item_by_item)
}

#[test]
fn messages_read_in_one_pass_give_the_text_of_the_item_by_item_reading() {
    let cases = [
        r#"[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]"#,
        r#"[{"role": "user", "content": "plain"}, {"role": "assistant", "content": "reply"}]"#,
        r#"[{"role": "user", "parts": [{"type": "text", "content": "a"}, {"type": "image"}, {"type": "text", "text": "b"}, {"type": "text"}]}]"#,
        r#"[{"role": "user", "parts": [], "content": "falls back to content"}]"#,
        r#"[{"role": "user", "parts": [1, "x", null], "content": "not used"}]"#,
        r#"[{"role": "user", "parts": {"type": "text"}, "content": ["nested", {"a": 1}]}]"#,
        r#"[{"role": "user", "parts": "text", "content": 3.5}]"#,
        r#"[{"role": "user", "content": null}, {"role": "user", "content": true}]"#,
        r#"[{"parts": [{"type": "text", "content": "a"}], "role": "user"}]"#,
        r#"[{"role": "user", "parts": [{"type": "text", "content": "first"}], "parts": []}]"#,
        r#"[{"role": "user", "role": "assistant", "content": "last role wins"}]"#,
        r#"[{"role": "us\u0065r", "parts": [{"ty\u0070e": "te\u0078t", "content": "esc\"aped \n \\ \u00e9"}]}]"#,
        r#"[{"role": "user", "parts": [{"type": "text", "content": "emoji \ud83d\ude00 pair"}]}]"#,
        r#"[{"role": "user", "parts": [{"type": "text", "content": "lone \ud800 surrogate"}]}]"#,
        r#"[{"role": "user", "content": "lone \udc00 low"}]"#,
        r#"[{"role": "\ud800", "content": "lone surrogate role"}]"#,
        r#"[{"ro\ud800le": "user", "content": "lone surrogate key"}, {"role": "user", "content": "kept"}]"#,
        r#"[{"role": "user", "parts": [{"t\udfffype": "text", "content": "x"}, {"type": "text", "content": "y"}]}]"#,
        r#"["lone \ud800 item", {"role": "user", "content": "after"}]"#,
        r#"[1e400, {"role": "user", "content": "after a huge number"}]"#,
        r#"[{"role": "user", "content": 1e400}]"#,
        r#"[{"role": "user", "parts": [{"type": "text", "content": {"deep": [1, [2, {"x": "y"}]]}}]}]"#,
        r#"[[{"role": "user", "content": "inside a nested list"}], {"role": "user", "content": "top"}]"#,
        r#"[{"role": "user", "parts": [{"type": "text", "content": "ünïcödé ✓ 中文"}]}, {"role": "user", "content": "two"}]"#,
        r#"[]"#,
        " [ ] ",
        r#"[{}]"#,
        r#"[{"role": "user", "content": "trailing comma"},]"#,
        r#"[{"role": "user", "content": "unclosed"}"#,
        r#"{"role": "user", "content": "an object, not a list"}"#,
        r#"[{"role": "user", "content": "x"}] trailing"#,
        "not json",
        r#""a string""#,
    ];
    for text in cases {
        for role in ["user", "assistant", "system", "tool"] {
            let (one_pass, item_by_item) = both_readings(text, role);
            // Where the one pass gives up, the caller reads item by item: what it gives is all
            // that has to agree.
            if let Some(one_pass) = one_pass {
                assert_eq!(Some(one_pass), item_by_item, "{role} of {text}");
            }
            assert_eq!(
                message_text(&AttrValue::from(text), role),
                message_text_item_by_item(text, role),
                "{role} of {text}"
            );
        }
    }
    // The ordinary lists are read in one pass, not left to the fallback.
    for text in &cases[..12] {
        assert!(lazy::messages(text, "user").is_some(), "{text}");
    }
    assert!(lazy::messages(cases[13], "user").is_some());
    assert!(lazy::messages(cases[16], "user").is_none());
}
