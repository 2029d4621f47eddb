//! OTLP/JSON exports with the OpenTelemetry GenAI conventions.
//!
//! Reads `resourceSpans[].scopeSpans[].spans[]` into [`Span`]s, decoding attribute values the way the
//! OTLP JSON mapping defines them. Resource and scope attributes, kinds, events and links carry nothing the
//! checks read, so they are skipped without being converted.

use std::collections::HashMap;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::{Object, Value as TapeValue};

use crate::ingest::json::{get, to_value};
use crate::model::{RawTrace, Span, attr};

/// Spans of one or more exports, in file order, before they are grouped into traces.
#[derive(Default)]
pub struct SpanCollector {
    spans: Vec<(String, Span)>,
}

impl SpanCollector {
    /// Returns true if and only if the value looks like an OTLP export (an object with `resourceSpans`).
    pub fn is_export(v: &TapeValue<'_, '_>) -> bool {
        v.as_object()
            .is_some_and(|o| get(&o, "resourceSpans").is_some())
    }

    /// Reads one export object. The error text says where in the export the problem is.
    pub fn add_export(&mut self, export: TapeValue<'_, '_>) -> Result<(), String> {
        let Some(export) = export.as_object() else {
            return Err("expected an OTLP export object with resourceSpans".into());
        };
        let Some(resource_spans) = get(&export, "resourceSpans") else {
            return Ok(());
        };
        if resource_spans.is_null() {
            return Ok(());
        }
        let Some(resource_spans) = resource_spans.as_array() else {
            return Err("resourceSpans is not a list".into());
        };
        for (r, resource) in resource_spans.iter().enumerate() {
            let Some(resource) = resource.as_object() else {
                return Err(format!("resourceSpans[{r}] is not an object"));
            };
            for (s, scope) in list(&resource, "scopeSpans", || format!("resourceSpans[{r}]"))?
                .into_iter()
                .enumerate()
            {
                let Some(scope) = scope.as_object() else {
                    return Err(format!(
                        "resourceSpans[{r}].scopeSpans[{s}] is not an object"
                    ));
                };
                let at = || format!("resourceSpans[{r}].scopeSpans[{s}]");
                for (i, span) in list(&scope, "spans", at)?.into_iter().enumerate() {
                    let where_ = || format!("resourceSpans[{r}].scopeSpans[{s}].spans[{i}]");
                    let Some(span) = span.as_object() else {
                        return Err(format!("{} is not an object", where_()));
                    };
                    let (trace_id, span) =
                        read_span(&span).map_err(|e| format!("{}: {e}", where_()))?;
                    self.spans.push((trace_id, span));
                }
            }
        }
        Ok(())
    }

    /// Appends the spans another collector read (the next piece of the same file).
    pub fn append(&mut self, other: SpanCollector) {
        self.spans.extend(other.spans);
    }

    /// Number of spans read so far.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Returns true if and only if no span was read.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Groups the spans into traces: spans by start time within a trace, traces by their first start
    /// (both stable, so ties keep file order).
    pub fn into_traces(self) -> Vec<RawTrace> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut traces: Vec<RawTrace> = Vec::new();
        let mut last_agent: Vec<Option<String>> = Vec::new();
        for (trace_id, span) in self.spans {
            let slot = *index.entry(trace_id.clone()).or_insert_with(|| {
                traces.push(RawTrace {
                    trace_id,
                    agent: String::new(),
                    spans: Vec::new(),
                });
                last_agent.push(None);
                traces.len() - 1
            });
            if let Some(name) = span.attr(attr::AGENT_NAME) {
                last_agent[slot] = Some(crate::pyfmt::py_str(name));
            }
            traces[slot].spans.push(span);
        }
        for (trace, fallback) in traces.iter_mut().zip(last_agent) {
            order_spans(trace, fallback);
        }
        traces.sort_by_key(|t| t.spans.first().map_or(0, |s| s.start_ns));
        traces
    }
}

/// Puts a trace's spans in trace order (by start, ties in file order) and names its agent. `fallback` is
/// the last `gen_ai.agent.name` seen in file order.
pub fn order_spans(trace: &mut RawTrace, fallback: Option<String>) {
    trace.spans.sort_by_key(|s| s.start_ns);
    // The agent is the root's; a trace whose root names no agent falls back to the last span that does,
    // so exports that put the name on a child still show it.
    let root_agent = root_position(&trace.spans)
        .and_then(|i| trace.spans[i].attr(attr::AGENT_NAME))
        .map(crate::pyfmt::py_str);
    trace.agent = root_agent.or(fallback).unwrap_or_else(|| "agent".into());
}

/// The root of a trace in trace order: the first `invoke_agent` span or span without a parent.
pub fn root_position(spans: &[Span]) -> Option<usize> {
    spans.iter().position(|s| {
        s.parent_id.is_none() || s.attr_str(attr::OPERATION_NAME) == Some(attr::OP_INVOKE_AGENT)
    })
}

fn list<'t, 'i>(
    obj: &Object<'t, 'i>,
    key: &str,
    at: impl Fn() -> String,
) -> Result<Vec<TapeValue<'t, 'i>>, String> {
    match get(obj, key) {
        None => Ok(Vec::new()),
        Some(v) if v.is_null() => Ok(Vec::new()),
        Some(v) => match v.as_array() {
            Some(a) => Ok(a.iter().collect()),
            None => Err(format!("{}.{key} is not a list", at())),
        },
    }
}

pub(crate) fn read_span(obj: &Object<'_, '_>) -> Result<(String, Span), String> {
    let trace_id = required_id(obj, "traceId")?;
    let span_id = required_id(obj, "spanId")?;
    let parent_id = match get(obj, "parentSpanId") {
        None => None,
        Some(v) if v.is_null() => None,
        Some(v) => match v.as_str() {
            Some("") => None,
            Some(s) => Some(s.to_owned()),
            None => Some(crate::pyfmt::py_str(&to_value(v))),
        },
    };
    let name = match get(obj, "name") {
        None => String::new(),
        Some(v) => match v.as_str() {
            Some(s) => s.to_owned(),
            None => crate::pyfmt::py_str(&to_value(v)),
        },
    };
    let start_ns = timestamp(obj, "startTimeUnixNano")?;
    let end_ns = timestamp(obj, "endTimeUnixNano")?;
    let (status_code, status_message) = status(obj);
    let mut attrs = Map::new();
    if let Some(list) = get(obj, "attributes").and_then(|v| v.as_array()) {
        for (i, kv) in list.iter().enumerate() {
            let Some(kv) = kv.as_object() else {
                return Err(format!("attributes[{i}] is not an object"));
            };
            let key = match get(&kv, "key") {
                Some(k) => match k.as_str() {
                    Some(s) => s.to_owned(),
                    None => crate::pyfmt::py_str(&to_value(k)),
                },
                None => return Err(format!("attributes[{i}] has no key")),
            };
            let Some(value) = get(&kv, "value") else {
                return Err(format!("attribute {key:?} has no value"));
            };
            let decoded = any_value(value).map_err(|e| format!("attribute {key:?}: {e}"))?;
            attrs.insert(key, decoded);
        }
    }
    normalize_content(&mut attrs);
    Ok((
        trace_id,
        Span {
            span_id,
            parent_id,
            name,
            start_ns,
            end_ns,
            attrs,
            status_code,
            status_message,
        },
    ))
}

fn required_id(obj: &Object<'_, '_>, key: &str) -> Result<String, String> {
    match get(obj, key) {
        None => Err(format!("span has no {key}")),
        Some(v) => match v.as_str() {
            Some(s) => Ok(s.to_owned()),
            None => Err(format!("{key} must be a string")),
        },
    }
}

/// An integer the way Python's `int()` reads a JSON string or number: surrounding whitespace and a sign
/// allowed, fractions of JSON numbers truncated.
fn timestamp(obj: &Object<'_, '_>, key: &str) -> Result<i64, String> {
    match get(obj, key) {
        None => Ok(0),
        Some(v) => int_literal(v).map_err(|text| format!("{key}: invalid integer {text}")),
    }
}

fn int_literal(v: TapeValue<'_, '_>) -> Result<i64, String> {
    if let Some(i) = v.as_i64() {
        return Ok(i);
    }
    if let Some(u) = v.as_u64() {
        return i64::try_from(u).map_err(|_| u.to_string());
    }
    if let Some(f) = v.as_f64() {
        if f.is_finite() {
            return Ok(f.trunc() as i64);
        }
        return Err(f.to_string());
    }
    if let Some(s) = v.as_str() {
        let digits: String = crate::pyfmt::py_strip(s)
            .chars()
            .filter(|c| *c != '_')
            .collect();
        return digits
            .parse::<i64>()
            .map_err(|_| crate::pyfmt::py_repr_str(s));
    }
    if v.is_null() {
        return Ok(0);
    }
    Err(crate::pyfmt::py_repr(&to_value(v)))
}

fn status(obj: &Object<'_, '_>) -> (i64, String) {
    let Some(status) = get(obj, "status").and_then(|v| v.as_object()) else {
        return (0, String::new());
    };
    let code = match get(&status, "code") {
        None => 0,
        Some(v) => {
            if let Some(i) = v.as_i64() {
                i
            } else if let Some(s) = v.as_str() {
                match s {
                    "STATUS_CODE_ERROR" => 2,
                    "STATUS_CODE_OK" => 1,
                    _ if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                        s.parse().unwrap_or(0)
                    }
                    _ => 0,
                }
            } else {
                0
            }
        }
    };
    let message = match get(&status, "message") {
        None => String::new(),
        Some(v) => match v.as_str() {
            Some(s) => s.to_owned(),
            None => crate::pyfmt::py_str(&to_value(v)),
        },
    };
    (code, message)
}

/// Decodes an OTLP `AnyValue`: the first present kind wins; unknown kinds stay raw objects.
fn any_value(v: TapeValue<'_, '_>) -> Result<Value, String> {
    let Some(obj) = v.as_object() else {
        return Ok(to_value(v));
    };
    if let Some(s) = get(&obj, "stringValue") {
        return Ok(to_value(s));
    }
    if let Some(i) = get(&obj, "intValue") {
        return int_literal(i)
            .map(|n| Value::Number(n.into()))
            .map_err(|text| format!("invalid intValue {text}"));
    }
    if let Some(d) = get(&obj, "doubleValue") {
        let f = d
            .as_f64()
            .or_else(|| d.as_str().and_then(crate::pyfmt::py_float_str))
            .ok_or_else(|| "invalid doubleValue".to_string())?;
        return Ok(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number));
    }
    if let Some(b) = get(&obj, "boolValue") {
        return Ok(Value::Bool(bool_value(b)));
    }
    if let Some(arr) = get(&obj, "arrayValue") {
        let mut items = Vec::new();
        if let Some(values) = arr
            .as_object()
            .and_then(|a| get(&a, "values"))
            .and_then(|v| v.as_array())
        {
            for item in values.iter() {
                items.push(any_value(item)?);
            }
        }
        return Ok(Value::Array(items));
    }
    Ok(to_value(v))
}

/// `boolValue` as a boolean. Exporters that write it as a string mean the word: `"false"` is false.
fn bool_value(v: TapeValue<'_, '_>) -> bool {
    if let Some(b) = v.as_bool() {
        return b;
    }
    if let Some(s) = v.as_str() {
        return !matches!(
            crate::pyfmt::py_strip(s).to_ascii_lowercase().as_str(),
            "" | "false" | "0"
        );
    }
    crate::pyfmt::py_truthy(&to_value(v))
}

/// Content attributes written as structured values rather than JSON strings, read as their JSON:
/// a `kvlistValue` message list or argument object becomes plain JSON (0.4.1 keeps the raw OTLP
/// wrapper and reads nothing from it), and a `tool_call_response` part that names its payload
/// `response` (the semantic-convention schema's name) is read as its `result`.
fn normalize_content(attrs: &mut Map<String, Value>) {
    for key in [attr::INPUT_MESSAGES, attr::OUTPUT_MESSAGES] {
        let Some(value) = attrs.get_mut(key) else {
            continue;
        };
        if contains_kvlist(value) {
            *value = plain(value);
        }
        let mentions_response = match &*value {
            Value::String(s) => s.contains("\"response\""),
            Value::Array(_) => true,
            _ => false,
        };
        if !mentions_response {
            continue;
        }
        let mut list = match &*value {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(list @ Value::Array(_)) => list,
                _ => continue,
            },
            other => other.clone(),
        };
        if rename_responses(&mut list) {
            *value = list;
        }
    }
    for key in [attr::TOOL_CALL_ARGUMENTS, attr::TOOL_CALL_RESULT] {
        if let Some(value) = attrs.get_mut(key)
            && value.is_object()
            && contains_kvlist(value)
        {
            *value = Value::String(crate::pyjson::dumps_spaced(&plain(value)));
        }
    }
}

/// Returns true if and only if some `tool_call_response` part carried `response` and now has `result`.
fn rename_responses(list: &mut Value) -> bool {
    let mut changed = false;
    let Value::Array(messages) = list else {
        return false;
    };
    for message in messages.iter_mut() {
        let Some(parts) = message.get_mut("parts").and_then(Value::as_array_mut) else {
            continue;
        };
        for part in parts.iter_mut().filter_map(Value::as_object_mut) {
            if part.get("type").and_then(Value::as_str) == Some("tool_call_response")
                && !part.contains_key("result")
                && let Some(response) = part.get("response").cloned()
            {
                part.insert("result".into(), response);
                changed = true;
            }
        }
    }
    changed
}

fn contains_kvlist(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.contains_key("kvlistValue") || o.values().any(contains_kvlist),
        Value::Array(items) => items.iter().any(contains_kvlist),
        _ => false,
    }
}

/// An OTLP `AnyValue` tree (as kept raw) as plain JSON: kvlists become objects, arrays lists.
fn plain(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(plain).collect()),
        Value::Object(o) => {
            if let Some(kv) = o.get("kvlistValue") {
                let mut out = Map::new();
                for entry in kv
                    .get("values")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(key) = entry.get("key") {
                        let value = entry.get("value").map_or(Value::Null, plain);
                        out.insert(crate::pyfmt::py_str(key), value);
                    }
                }
                return Value::Object(out);
            }
            if let Some(arr) = o.get("arrayValue") {
                let items = arr
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(plain).collect());
                return Value::Array(items.unwrap_or_default());
            }
            for scalar in ["stringValue", "boolValue", "doubleValue"] {
                if let Some(x) = o.get(scalar) {
                    return x.clone();
                }
            }
            if let Some(i) = o.get("intValue") {
                return match i {
                    Value::String(s) => s
                        .trim()
                        .parse::<i64>()
                        .map_or_else(|_| i.clone(), |n| Value::Number(n.into())),
                    other => other.clone(),
                };
            }
            Value::Object(o.iter().map(|(k, v)| (k.clone(), plain(v))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::json::with_tape;
    use serde_json::json;

    fn read(doc: &Value) -> Vec<RawTrace> {
        let text = doc.to_string();
        let mut collector = SpanCollector::default();
        with_tape(text.as_bytes(), |d| collector.add_export(d))
            .unwrap()
            .unwrap();
        collector.into_traces()
    }

    fn export(attributes: Value) -> Value {
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "name": "chat",
            "startTimeUnixNano": "1", "attributes": attributes}]}]}]})
    }

    #[test]
    fn response_parts_are_read_as_results() {
        let input = json!([{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"hits": 0}}]}]);
        let output = json!([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search",
            "arguments": {"q": "x"}}]}]);
        let traces = read(&export(json!([
            {"key": "gen_ai.input.messages", "value": {"stringValue": input.to_string()}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": output.to_string()}}])));
        let facts = crate::table::derive::derive(&traces[0]);
        assert_eq!(facts.steps.len(), 1);
        assert_eq!(
            facts.steps[0].result,
            crate::pyjson::dumps_spaced(&json!({"hits": 0}))
        );
    }

    #[test]
    fn structured_messages_and_arguments_are_read() {
        let kv = |pairs: Value| json!({"kvlistValue": {"values": pairs}});
        let message = kv(json!([
            {"key": "role", "value": {"stringValue": "user"}},
            {"key": "content", "value": {"stringValue": "find x"}}]));
        let traces = read(&export(json!([
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [message]}}},
            {"key": "gen_ai.tool.call.arguments", "value": kv(json!([{"key": "q", "value": {"intValue": "3"}}]))}])));
        let facts = crate::table::derive::derive(&traces[0]);
        assert_eq!(facts.prompt, "find x");
        assert_eq!(
            facts.steps[0].arguments,
            crate::pyjson::dumps_spaced(&json!({"q": 3}))
        );
    }
}
