//! OpenInference (Arize Phoenix): OTLP spans that carry `openinference.span.kind`.
//!
//! Runs after the OTLP reader: TOOL spans get the GenAI tool attributes from `tool.name`,
//! `tool.parameters` or `input.value` and `output.value`; the parentless span becomes the agent root
//! (its own GenAI attributes win); LLM spans get their flattened `llm.*_messages` rebuilt as GenAI
//! messages, token counts and finish reason. Then the vendor ordering applies.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use std::path::Path;

use simd_json::tape::Value as TapeValue;

use super::common::{order_trace, root_attrs, set_finish_reason, set_tool_attrs, set_usage};
use super::otlp::{is_export_document, read_documents, scanned};
use crate::compat::value::json_text;
use crate::compat::value::{py_str, py_truthy};
use crate::error::InputError;
use crate::ingest::Format;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Detection, Document, Fast, Traces};
use crate::ingest::survey::Survey;
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr, is_tool_span};

/// The attribute that marks an OpenInference span.
pub(crate) const SPAN_KIND: &str = attr::OPENINFERENCE_KIND;

/// OpenInference: OTLP exports whose spans carry `openinference.span.kind`.
pub(crate) struct OpenInference;

impl Decoder for OpenInference {
    fn name(&self) -> &'static str {
        "openinference"
    }

    fn title(&self) -> &'static str {
        "OpenInference"
    }

    fn detection(&self) -> Detection {
        Detection::Refines("otlp")
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        if !is_export_document(doc) {
            return false;
        }
        match doc.as_array() {
            Some(items) => items
                .iter()
                .any(|e| crate::ingest::detect::has_attribute_key(e, SPAN_KIND)),
            None => crate::ingest::detect::has_attribute_key(doc, SPAN_KIND),
        }
    }

    /// OTLP's structural scan. With `--format auto` it takes only a file that mentions the span kind
    /// (plain OTLP's fast path, asked next, takes the others), and no fast path takes such a file when
    /// the scan does not.
    fn fast<'b>(&self, _: &Path, file: &Survey<'b>, options: &ReadOptions) -> Fast<'b> {
        if options.format == Format::Auto && !file.mentions_openinference_kind() {
            return Fast::Pass;
        }
        // The mapping reads attributes no GenAI check names (`input.value`, `llm.*`), so all are kept.
        scanned::scan(file, true, Some(map_trace))
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        _: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        read_documents(path, docs, true, Some(map_trace))
    }
}

fn kind(span: &SpanRecord<'_>) -> String {
    span.attr(SPAN_KIND)
        .map_or_else(|| "None".to_string(), |v| v.py_str().into_owned())
        .to_uppercase()
}

/// Maps one trace read by the OTLP reader.
pub(crate) fn map_trace(trace: TraceRecord<'_>) -> TraceRecord<'_> {
    let has_tool_spans = trace
        .spans
        .iter()
        .any(|s| kind(s) == "TOOL" || is_tool_span(s));
    let spans = trace
        .spans
        .into_iter()
        .map(|span| map_span(span, has_tool_spans))
        .collect();
    let mut mapped = order_trace(trace.trace_id.into_owned(), spans);
    mapped.resource = trace.resource;
    mapped
}

fn map_span(mut span: SpanRecord<'_>, has_tool_spans: bool) -> SpanRecord<'_> {
    let kind = kind(&span);
    let mut attrs = std::mem::take(&mut span.attrs).to_map();
    let null = Value::Null;
    if span.parent_id.is_none() {
        let metadata = match attrs.get("metadata") {
            Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
            other => other.cloned(),
        };
        let mut root = root_attrs(
            &span.name,
            attrs.get("input.value").unwrap_or(&null),
            attrs.get("output.value").unwrap_or(&null),
            metadata.as_ref(),
            attrs.get("user.id"),
        );
        for (k, v) in std::mem::take(&mut attrs) {
            root.insert(k, v);
        }
        attrs = root;
    } else if kind == "TOOL" {
        let name = attrs
            .get("tool.name")
            .map_or_else(|| span.name.to_string(), py_str);
        let args = match attrs.get("tool.parameters") {
            Some(v) => v.clone(),
            None => attrs.get("input.value").cloned().unwrap_or(Value::Null),
        };
        let result = attrs.get("output.value").cloned().unwrap_or(Value::Null);
        let error = if span.status_message.is_empty() {
            Value::Null
        } else {
            Value::String(span.status_message.to_string())
        };
        set_tool_attrs(&mut attrs, &name, &args, &result, &error);
    } else if kind == "AGENT" || kind == "CHAIN" {
        attrs.insert(attr::OPERATION_NAME.into(), attr::OP_INVOKE_AGENT.into());
    } else if kind == "LLM" {
        attrs.insert(attr::OPERATION_NAME.into(), "chat".into());
    }
    if kind == "LLM" {
        for (direction, key) in [
            ("input", attr::INPUT_MESSAGES),
            ("output", attr::OUTPUT_MESSAGES),
        ] {
            let messages = flattened_messages(&attrs, direction, has_tool_spans);
            if !messages.is_empty() {
                attrs.insert(
                    key.into(),
                    Value::String(json_text(&Value::Array(messages))),
                );
            }
        }
    }
    let prompt_tokens = attrs.get("llm.token_count.prompt").cloned();
    let completion_tokens = attrs.get("llm.token_count.completion").cloned();
    set_usage(
        &mut attrs,
        prompt_tokens.as_ref(),
        completion_tokens.as_ref(),
    );
    let finish = attrs.get("llm.finish_reason").cloned();
    set_finish_reason(&mut attrs, finish.as_ref());
    span.attrs = Attrs::from_map(attrs);
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

    fn span(
        id: &'static str,
        parent: Option<&'static str>,
        start: i64,
        attrs: Value,
    ) -> SpanRecord<'static> {
        SpanRecord {
            span_id: id.into(),
            parent_id: parent.map(Into::into),
            name: id.into(),
            start_ns: start,
            attrs: Attrs::from_map(match attrs {
                Value::Object(map) => map,
                other => panic!("span attributes must be an object, got {other}"),
            }),
            ..SpanRecord::default()
        }
    }

    #[test]
    fn flattened_llm_messages_become_steps() {
        let trace = TraceRecord {
            trace_id: "t".into(),
            agent: "agent".into(),
            skipped_attributes: 0,
            resource: Default::default(),
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
        let root = crate::table::record::root_position(&mapped.spans);
        let steps = crate::table::derive::steps(&mapped.spans, true);
        assert_eq!(crate::table::derive::prompt(&mapped.spans, root), "find x");
        assert_eq!(crate::table::derive::answer(&mapped.spans, root), "found x");
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].tool, "search");
        assert_eq!(steps[0].arguments, json_text(&json!({"q": "x"})));
        assert_eq!(steps[0].result, json_text(&json!({"hits": 1})));
    }
}
