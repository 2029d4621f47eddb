//! What the span formats share once a span is decoded, whatever its encoding (OTLP/JSON, OTLP protobuf,
//! OpenInference span dicts, any-agent): content attributes written as structured values normalised to
//! the JSON the checks read, and spans grouped into traces the way OTLP exports are grouped. The same
//! spans therefore give the same traces and verdicts in every encoding.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::table::record::{AttrValue, Attrs, SpanRecord, TraceRecord, attr, order_otlp};

/// What a trace's records go through before they become rows (the OpenInference mapping).
pub(crate) type MapTrace = fn(TraceRecord<'_>) -> TraceRecord<'_>;

/// The OTLP resources spans were read under, in file order: each resource's attributes with the
/// number of the first span read after it, so that [`group_spans_under`] gives each trace its
/// resource ([`TraceRecord::resource`]) at a comparison per span.
#[derive(Debug, Default)]
pub(crate) struct SpanResources {
    starts: Vec<(usize, Attrs<'static>)>,
}

impl SpanResources {
    /// The spans from number `first_span` on were exported under a resource of `attributes` (until
    /// the next resource begins).
    pub(crate) fn begin(&mut self, first_span: usize, attributes: Attrs<'static>) {
        // Spans before the first resource with attributes have none: nothing to record.
        if !attributes.is_empty() || !self.starts.is_empty() {
            self.starts.push((first_span, attributes));
        }
    }
}

/// Groups spans (each with its trace id, in file order) into traces the way OTLP exports are grouped:
/// traces in order of their first start, each trace's spans by start. Other span-based formats use it so
/// the same spans give the same traces whatever their encoding.
pub(crate) fn group_spans(
    spans: Vec<(String, SpanRecord<'static>)>,
    skipped: usize,
    map: Option<MapTrace>,
) -> Vec<TraceRecord<'static>> {
    group_spans_under(spans, &SpanResources::default(), skipped, map)
}

/// [`group_spans`] of spans read under `resources`: each trace's resource holds the attributes of the
/// resources its spans were read under, the first one's value of each key (in file order).
pub(crate) fn group_spans_under(
    spans: Vec<(String, SpanRecord<'static>)>,
    resources: &SpanResources,
    skipped: usize,
    map: Option<MapTrace>,
) -> Vec<TraceRecord<'static>> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut traces: Vec<TraceRecord<'static>> = Vec::new();
    // Per trace, the resource last added to it: a trace's spans most often share one.
    let mut added: Vec<usize> = Vec::new();
    let mut resource = None;
    let mut next = resources.starts.iter().enumerate().peekable();
    for (n, (trace_id, span)) in spans.into_iter().enumerate() {
        while let Some((r, _)) = next.next_if(|(_, (first, _))| *first <= n) {
            resource = Some(r);
        }
        let slot = *index.entry(trace_id.clone()).or_insert_with(|| {
            traces.push(TraceRecord {
                trace_id: Cow::Owned(trace_id),
                ..TraceRecord::default()
            });
            added.push(usize::MAX);
            traces.len() - 1
        });
        if let Some(r) = resource
            && added[slot] != r
        {
            added[slot] = r;
            traces[slot].resource.add_missing(&resources.starts[r].1);
        }
        traces[slot].spans.push(span);
    }
    for trace in &mut traces {
        order_otlp(trace);
    }
    traces.sort_by_key(|t| t.spans.first().map_or(0, |s| s.start_ns));
    if let Some(map) = map {
        traces = traces.into_iter().map(map).collect();
    }
    if let Some(first) = traces.first_mut() {
        first.skipped_attributes = skipped;
    }
    traces
}

/// Content attributes written as structured values rather than JSON strings, read as their JSON:
/// a `kvlistValue` message list or argument object becomes plain JSON (0.4.1 keeps the raw OTLP
/// wrapper and reads nothing from it), and a `tool_call_response` part that names its payload
/// `response` (the semantic-convention schema's name) is read as its `result`.
pub(crate) fn normalize_content(attrs: &mut Attrs<'_>) {
    for key in [
        attr::INPUT_MESSAGES,
        attr::OUTPUT_MESSAGES,
        attr::SYSTEM_INSTRUCTIONS,
    ] {
        let Some(value) = attrs.get(key) else {
            continue;
        };
        let mut replacement = match value {
            AttrValue::Json(v) if contains_kvlist(v) => Some(plain(v)),
            _ => None,
        };
        let mentions_response = match replacement.as_ref() {
            Some(Value::String(s)) => s.contains("\"response\""),
            Some(Value::Array(_)) => true,
            Some(_) => false,
            None => match value {
                AttrValue::Json(v) if v.is_array() => true,
                other => other.as_str().is_some_and(|s| s.contains("\"response\"")),
            },
        };
        if mentions_response {
            let current = replacement
                .clone()
                .unwrap_or_else(|| value.to_json().into_owned());
            let list = match current {
                Value::String(s) => match serde_json::from_str::<Value>(&s) {
                    Ok(list @ Value::Array(_)) => Some(list),
                    _ => None,
                },
                other => Some(other),
            };
            if let Some(mut list) = list
                && rename_responses(&mut list)
            {
                replacement = Some(list);
            }
        }
        if let Some(new) = replacement {
            attrs.insert(key.to_string(), AttrValue::json(new));
        }
    }
    for key in [attr::TOOL_CALL_ARGUMENTS, attr::TOOL_CALL_RESULT] {
        if let Some(AttrValue::Json(value)) = attrs.get(key)
            && value.is_object()
            && contains_kvlist(value)
        {
            let text = crate::compat::value::json_text(&plain(value));
            attrs.insert(key.to_string(), AttrValue::Str(Cow::Owned(text)));
        }
    }
}

/// Records on a span the other traces its links point to (`faultgate.linked_traces`, a JSON list in
/// link order without repeats), when any does: a link to the span's own trace ties two of its spans
/// and says nothing about where the run continued.
pub(crate) fn add_links<'a>(
    attrs: &mut Attrs<'_>,
    own: &str,
    linked: impl Iterator<Item = &'a str>,
) {
    let mut others: Vec<Value> = Vec::new();
    for id in linked {
        if !id.is_empty() && id != own && !others.iter().any(|o| o.as_str() == Some(id)) {
            others.push(Value::String(id.to_string()));
        }
    }
    if !others.is_empty() {
        attrs.insert(
            attr::LINKED_TRACES.to_string(),
            AttrValue::json(Value::Array(others)),
        );
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
                        out.insert(crate::compat::value::py_str(key), value);
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
    use std::path::Path;

    use super::*;
    use crate::ingest::Format;
    use crate::table::TraceBatch;
    use crate::table::schema::{STEP_ARGUMENTS, STEP_RESULT, TRACE_PROMPT};
    use crate::table::testing::one_span_export;
    use serde_json::json;

    fn read(doc: &Value) -> TraceBatch {
        let text = doc.to_string();
        crate::ingest::read_bytes(Path::new("t.json"), text.as_bytes(), Format::Otlp)
            .unwrap()
            .1
    }

    #[test]
    fn response_parts_are_read_as_results() {
        let input = json!([{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"hits": 0}}]}]);
        let output = json!([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search",
            "arguments": {"q": "x"}}]}]);
        let batch = read(&one_span_export(&json!([
            {"key": "gen_ai.input.messages", "value": {"stringValue": input.to_string()}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": output.to_string()}}])));
        assert_eq!(batch.steps.num_rows(), 1);
        assert_eq!(
            batch.step_str(STEP_RESULT).value(0),
            crate::compat::value::json_text(&json!({"hits": 0}))
        );
    }

    #[test]
    fn structured_messages_and_arguments_are_read() {
        let kv = |pairs: Value| json!({"kvlistValue": {"values": pairs}});
        let message = kv(json!([
            {"key": "role", "value": {"stringValue": "user"}},
            {"key": "content", "value": {"stringValue": "find x"}}]));
        let batch = read(&one_span_export(&json!([
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [message]}}},
            {"key": "gen_ai.tool.call.arguments", "value": kv(json!([{"key": "q", "value": {"intValue": "3"}}]))}])));
        assert_eq!(batch.trace_str(TRACE_PROMPT).value(0), "find x");
        assert_eq!(
            batch.step_str(STEP_ARGUMENTS).value(0),
            crate::compat::value::json_text(&json!({"q": 3}))
        );
    }
}
