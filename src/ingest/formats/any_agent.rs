//! mozilla-ai any-agent traces: an `AgentTrace` (`{"spans": [...], "final_output": ...}`) or a list of its
//! span dicts, each as the OpenTelemetry SDK describes a span (`context.trace_id` and `span_id` as
//! integers, `parent` as a context or null), or, in any-agent's older releases, a list of such span dicts
//! encoded as JSON strings.
//!
//! Current releases write GenAI attributes: the `invoke_agent` span is the root, `call_llm` spans are chat
//! spans (`gen_ai.input.messages` OpenAI-style; `gen_ai.output` is the answer text when
//! `gen_ai.output.type` is `text`, else the requested tool calls), and `execute_tool` spans are tool steps
//! (`gen_ai.tool.name`, arguments from `gen_ai.tool.args`, result from `gen_ai.output`; an error status
//! prefixes the result with `Error: `). The trace's `final_output` is the root's answer. Older releases
//! wrote OpenInference attributes, read with the OpenInference mapping.
//!
//! Ids become OTLP's hex. Left unread: costs (`gen_ai.usage.*_cost`), the request model, events, links
//! and resources.

use std::path::Path;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

use super::common::{set_tool_attrs, wrap_messages};
use super::openinference;
use super::openinference_spans::{invalid, is_span_dict, parse_documents, read_span_dict};
use super::spans::group_spans;
use crate::compat::value::json_text;
use crate::compat::value::{py_str, py_truthy};
use crate::error::InputError;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, OwnedTraces, Traces};
use crate::table::record::{Attrs, TraceRecord, attr, is_tool_span};

/// any-agent traces.
pub(crate) struct AnyAgent;

impl Decoder for AnyAgent {
    fn name(&self) -> &'static str {
        "any-agent"
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        if let Some(items) = doc.as_array()
            && let Some(first) = items.iter().next()
            && let Some(text) = first.as_str()
        {
            return serde_json::from_str::<Value>(text)
                .ok()
                .as_ref()
                .and_then(Value::as_object)
                .is_some_and(is_any_agent_span);
        }
        super::openinference_spans::first_span(doc)
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(is_any_agent_span)
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        _: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        let values = parse_documents(path, docs)?;
        let mut traces = Vec::new();
        for value in &values {
            traces.extend(read_trace(value).map_err(|m| invalid(path, m))?);
        }
        if traces.is_empty() {
            return Err(invalid(path, "no any-agent spans found".into()));
        }
        Ok(Box::new(OwnedTraces(traces)))
    }
}

/// A span dict as any-agent writes it: the OpenTelemetry SDK's fields with `parent` (a context or null)
/// rather than the console exporter's `parent_id`.
fn is_any_agent_span(record: &Map<String, Value>) -> bool {
    is_span_dict(record) && record.contains_key("parent") && !record.contains_key("parent_id")
}

/// The traces of one document: an `AgentTrace`, a list of span dicts, or a list of their JSON texts.
fn read_trace(doc: &Value) -> Result<Vec<TraceRecord<'static>>, String> {
    let (items, final_output) = match doc {
        Value::Object(obj) => (
            obj.get("spans")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice),
            obj.get("final_output"),
        ),
        Value::Array(items) => (items.as_slice(), None),
        _ => (&[][..], None),
    };
    let mut decoded = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            // The shared parser first: it keeps integer ids of any size exact.
            Value::String(text) => decoded.push(
                match crate::ingest::json::with_tape(text.as_bytes(), crate::ingest::json::to_value)
                {
                    Ok(v) => v,
                    Err(_) => serde_json::from_str::<Value>(text)
                        .map_err(|e| format!("span {i} is not a JSON span: {e}"))?,
                },
            ),
            Value::Object(_) => decoded.push(item.clone()),
            _ => return Err(format!("span {i} is not an object")),
        }
    }
    // A document that is a single span (a JSON line).
    if let (Value::Object(obj), true) = (doc, items.is_empty())
        && is_span_dict(obj)
    {
        decoded.push(doc.clone());
    }
    let mut spans = Vec::with_capacity(decoded.len());
    let mut skipped = 0;
    for (i, span) in decoded.iter().enumerate() {
        let Some(obj) = span.as_object() else {
            return Err(format!("span {i} is not an object"));
        };
        spans.push(read_span_dict(obj, true, &mut skipped).map_err(|e| format!("span {i}: {e}"))?);
    }
    let openinference = spans
        .iter()
        .any(|(_, s)| s.attrs.contains_key(attr::OPENINFERENCE_KIND));
    if openinference {
        return Ok(group_spans(spans, skipped, Some(openinference::map_trace)));
    }
    let mut traces = group_spans(spans, skipped, None);
    for trace in &mut traces {
        map_genai(trace, final_output);
    }
    Ok(traces)
}

/// Maps any-agent's GenAI attributes onto the ones checks read.
fn map_genai(trace: &mut TraceRecord<'static>, final_output: Option<&Value>) {
    let has_tool_spans = trace.spans.iter().any(|s| {
        s.attr_str(attr::OPERATION_NAME) == Some(attr::OP_EXECUTE_TOOL) || is_tool_span(s)
    });
    for span in &mut trace.spans {
        let op = span
            .attr_str(attr::OPERATION_NAME)
            .unwrap_or("")
            .to_string();
        let mut attrs = std::mem::take(&mut span.attrs).to_map();
        let output = attrs.get("gen_ai.output").cloned().unwrap_or(Value::Null);
        match op.as_str() {
            attr::OP_EXECUTE_TOOL => {
                let name = attrs
                    .get(attr::TOOL_NAME)
                    .map_or_else(|| tool_name(&span.name), py_str);
                let args = attrs
                    .get("gen_ai.tool.args")
                    .cloned()
                    .unwrap_or(Value::Null);
                let error = if span.status_code == 2 {
                    Value::String(span.status_message.to_string())
                } else {
                    Value::Null
                };
                set_tool_attrs(&mut attrs, &name, &args, &output, &error);
            }
            "call_llm" => {
                attrs.insert(attr::OPERATION_NAME.into(), "chat".into());
                let kind = attrs.get("gen_ai.output.type").map(py_str);
                if let Some(messages) = llm_output(&output, kind.as_deref(), has_tool_spans) {
                    attrs.insert(attr::OUTPUT_MESSAGES.into(), messages);
                }
            }
            _ => {}
        }
        if span.parent_id.is_none()
            && !attrs.contains_key(attr::OUTPUT_MESSAGES)
            && let Some(m) = final_output.filter(|v| py_truthy(v)).and_then(|v| {
                // A structured output without a text field is the answer as JSON.
                wrap_messages("assistant", v)
                    .or_else(|| wrap_messages("assistant", &Value::String(json_text(v))))
            })
        {
            attrs.insert(attr::OUTPUT_MESSAGES.into(), m);
        }
        span.attrs = Attrs::from_map(attrs);
    }
}

fn tool_name(span_name: &str) -> String {
    span_name
        .strip_prefix("execute_tool ")
        .unwrap_or(span_name)
        .to_string()
}

/// A `call_llm` span's output as GenAI output messages: its text, or (when the trace has no tool spans to
/// read them from) the tool calls it requested.
fn llm_output(output: &Value, kind: Option<&str>, has_tool_spans: bool) -> Option<Value> {
    let text = output.as_str()?;
    if kind != Some("json") {
        return (!text.is_empty()).then(|| {
            Value::String(json_text(&serde_json::json!([
                {"role": "assistant", "parts": [{"type": "text", "content": text}]}
            ])))
        });
    }
    if has_tool_spans {
        return None;
    }
    let calls: Vec<Value> = serde_json::from_str::<Value>(text)
        .ok()?
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|call| {
            let name = call.get("tool.name")?;
            Some(serde_json::json!({
                "type": "tool_call",
                "name": py_str(name),
                "arguments": call.get("tool.args").cloned().unwrap_or(Value::Null),
            }))
        })
        .collect();
    (!calls.is_empty()).then(|| {
        Value::String(json_text(
            &serde_json::json!([{"role": "assistant", "parts": calls}]),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::record::root_position;

    #[test]
    fn genai_spans_become_steps_prompt_and_answer() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/any_agent/tinyagent.json"
        );
        // Parsed here with serde_json, which reads the 128-bit trace ids (as floats: the ids group alike).
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let traces = read_trace(&doc).unwrap();
        assert_eq!(traces.len(), 1);
        let spans = &traces[0].spans;
        let root = root_position(spans);
        assert_eq!(
            root.map(|r| spans[r].name.as_ref()),
            Some("invoke_agent [any_agent]")
        );
        let steps = crate::table::derive::steps(spans, true);
        let tools: Vec<&str> = steps.iter().map(|s| s.tool.as_ref()).collect();
        assert_eq!(tools, ["get_current_time", "write_file", "final_answer"]);
        assert_eq!(steps[0].arguments, r#"{"timezone": "America/New_York"}"#);
        assert!(steps[0].result.contains("2025-09-16T08:43:21-04:00"));
        let prompt = crate::table::derive::prompt(spans, root);
        assert!(prompt.starts_with("Find what year it is"), "{prompt}");
        // The trace's final_output (structured) is the root's answer.
        let answer = crate::table::derive::answer(spans, root);
        assert!(answer.contains("Write the year to a file."), "{answer}");
    }

    #[test]
    fn requested_tool_calls_are_steps_when_no_tool_span_ran() {
        let output =
            Value::String(r#"[{"tool.name": "search", "tool.args": "{\"q\": \"x\"}"}]"#.into());
        let messages = llm_output(&output, Some("json"), false).unwrap();
        assert!(
            messages
                .as_str()
                .unwrap()
                .contains(r#""type": "tool_call""#)
        );
        assert_eq!(llm_output(&output, Some("json"), true), None);
    }
}
