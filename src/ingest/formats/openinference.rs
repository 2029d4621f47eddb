//! OpenInference (Arize Phoenix): OTLP spans that carry `openinference.span.kind`.
//!
//! Runs after the OTLP reader: TOOL spans get the GenAI tool attributes from `tool.name`,
//! `tool.parameters` or `input.value` and `output.value`; the parentless span becomes the agent root
//! (its own GenAI attributes win); LLM spans get their flattened `llm.*_messages` rebuilt as GenAI
//! messages, token counts and finish reason. Then the vendor ordering applies.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::common::{order_trace, root_attrs, set_finish_reason, set_tool_attrs, set_usage};
use crate::model::{RawTrace, Span, attr};
use crate::pyfmt::{py_str, py_truthy};
use crate::pyjson::dumps_spaced;
use crate::table::derive::is_tool_span;

/// The attribute that marks an OpenInference span.
pub const SPAN_KIND: &str = "openinference.span.kind";

fn kind(span: &Span) -> String {
    span.attr(SPAN_KIND)
        .map_or_else(|| "None".to_string(), py_str)
        .to_uppercase()
}

/// Maps one trace read by the OTLP reader.
pub fn map_trace(trace: RawTrace) -> RawTrace {
    let has_tool_spans = trace
        .spans
        .iter()
        .any(|s| kind(s) == "TOOL" || is_tool_span(s));
    let spans = trace
        .spans
        .into_iter()
        .map(|span| map_span(span, has_tool_spans))
        .collect();
    order_trace(trace.trace_id, spans)
}

fn map_span(mut span: Span, has_tool_spans: bool) -> Span {
    let null = Value::Null;
    let kind = kind(&span);
    if span.parent_id.is_none() {
        let metadata = match span.attr("metadata") {
            Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
            other => other.cloned(),
        };
        let mut attrs = root_attrs(
            &span.name,
            span.attr("input.value").unwrap_or(&null),
            span.attr("output.value").unwrap_or(&null),
            metadata.as_ref(),
            span.attr("user.id"),
        );
        for (k, v) in std::mem::take(&mut span.attrs) {
            attrs.insert(k, v);
        }
        span.attrs = attrs;
    } else if kind == "TOOL" {
        let name = span
            .attr("tool.name")
            .map_or_else(|| span.name.clone(), py_str);
        let args = match span.attrs.get("tool.parameters") {
            Some(v) => v.clone(),
            None => span.attr("input.value").cloned().unwrap_or(Value::Null),
        };
        let result = span.attr("output.value").cloned().unwrap_or(Value::Null);
        let error = if span.status_message.is_empty() {
            Value::Null
        } else {
            Value::String(span.status_message.clone())
        };
        set_tool_attrs(&mut span.attrs, &name, &args, &result, &error);
    } else if kind == "AGENT" || kind == "CHAIN" {
        span.attrs
            .insert(attr::OPERATION_NAME.into(), attr::OP_INVOKE_AGENT.into());
    } else if kind == "LLM" {
        span.attrs
            .insert(attr::OPERATION_NAME.into(), "chat".into());
    }
    if kind == "LLM" {
        for (direction, key) in [
            ("input", attr::INPUT_MESSAGES),
            ("output", attr::OUTPUT_MESSAGES),
        ] {
            let messages = flattened_messages(&span.attrs, direction, has_tool_spans);
            if !messages.is_empty() {
                span.attrs.insert(
                    key.into(),
                    Value::String(dumps_spaced(&Value::Array(messages))),
                );
            }
        }
    }
    let prompt_tokens = span.attr("llm.token_count.prompt").cloned();
    let completion_tokens = span.attr("llm.token_count.completion").cloned();
    set_usage(
        &mut span.attrs,
        prompt_tokens.as_ref(),
        completion_tokens.as_ref(),
    );
    let finish = span.attr("llm.finish_reason").cloned();
    set_finish_reason(&mut span.attrs, finish.as_ref());
    span
}

#[derive(Default)]
struct FlatMessage {
    fields: Map<String, Value>,
    calls: BTreeMap<u64, Map<String, Value>>,
}

/// GenAI messages rebuilt from `llm.<direction>_messages.<N>.message.*` attributes.
fn flattened_messages(
    attrs: &Map<String, Value>,
    direction: &str,
    has_tool_spans: bool,
) -> Vec<Value> {
    let prefix = format!("llm.{direction}_messages.");
    let mut messages: BTreeMap<u64, FlatMessage> = BTreeMap::new();
    for (key, value) in attrs {
        let Some(rest) = key.strip_prefix(&prefix) else {
            continue;
        };
        let Some((n, rest)) = rest.split_once('.') else {
            continue;
        };
        let (Ok(n), Some(rest)) = (n.parse::<u64>(), rest.strip_prefix("message.")) else {
            continue;
        };
        let message = messages.entry(n).or_default();
        if let Some(call) = rest.strip_prefix("tool_calls.") {
            let Some((m, field)) = call.split_once('.') else {
                continue;
            };
            let (Ok(m), Some(field)) = (m.parse::<u64>(), field.strip_prefix("tool_call.")) else {
                continue;
            };
            message
                .calls
                .entry(m)
                .or_default()
                .insert(field.to_string(), value.clone());
        } else {
            message.fields.insert(rest.to_string(), value.clone());
        }
    }
    messages
        .into_values()
        .map(|message| {
            let role = message.fields.get("role").map_or_else(|| "assistant".to_string(), py_str);
            let content = message.fields.get("content");
            let mut parts: Vec<Value> = Vec::new();
            let call_id = message.fields.get("tool_call_id").filter(|v| py_truthy(v));
            if let (true, Some(id)) = (role == "tool", call_id) {
                parts.push(serde_json::json!({
                    "type": "tool_call_response",
                    "id": py_str(id),
                    "result": content.cloned().unwrap_or_else(|| Value::String(String::new())),
                }));
            } else if let Some(content) = content.filter(|v| py_truthy(v)) {
                parts.push(serde_json::json!({"type": "text", "content": py_str(content)}));
            }
            for call in message.calls.values() {
                parts.push(serde_json::json!({
                    "type": "tool_call",
                    "id": call.get("id").map_or_else(String::new, py_str),
                    "name": call.get("function.name").map_or_else(|| "unknown".to_string(), py_str),
                    "arguments": call.get("function.arguments").cloned().unwrap_or_else(|| Value::String(String::new())),
                }));
            }
            if has_tool_spans {
                parts.retain(|p| p.get("type").and_then(Value::as_str) == Some("text"));
            }
            serde_json::json!({"role": role, "parts": parts})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn span(id: &str, parent: Option<&str>, start: i64, attrs: Value) -> Span {
        Span {
            span_id: id.into(),
            parent_id: parent.map(Into::into),
            name: id.into(),
            start_ns: start,
            attrs: attrs.as_object().unwrap().clone(),
            ..Span::default()
        }
    }

    #[test]
    fn flattened_llm_messages_become_steps() {
        let trace = RawTrace {
            trace_id: "t".into(),
            agent: "agent".into(),
            spans: vec![
                span("root", None, 1, json!({SPAN_KIND: "CHAIN"})),
                span(
                    "llm1",
                    Some("root"),
                    2,
                    json!({SPAN_KIND: "LLM",
                    "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "be nice",
                    "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": "find x",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "search",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{\"q\": \"x\"}"}),
                ),
                span(
                    "llm2",
                    Some("root"),
                    3,
                    json!({SPAN_KIND: "LLM",
                    "llm.input_messages.0.message.role": "tool", "llm.input_messages.0.message.tool_call_id": "c1",
                    "llm.input_messages.0.message.content": "{\"hits\": 1}",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": "found x"}),
                ),
            ],
        };
        let mapped = map_trace(trace);
        let facts = crate::table::derive::derive(&mapped);
        assert_eq!(facts.prompt, "find x");
        assert_eq!(facts.answer, "found x");
        assert_eq!(facts.steps.len(), 1);
        assert_eq!(facts.steps[0].tool, "search");
        assert_eq!(facts.steps[0].arguments, dumps_spaced(&json!({"q": "x"})));
        assert_eq!(facts.steps[0].result, dumps_spaced(&json!({"hits": 1})));
    }
}
