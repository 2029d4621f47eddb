//! OpenInference span dumps outside an OTLP envelope: a JSON list (or JSON lines) of span dicts, as the
//! OpenInference spec, Phoenix and the OpenTelemetry SDKs' console exporters write them, and the Vercel AI
//! SDK's spans as its OpenInference processor sees them.
//!
//! A span dict has its ids under `context` (`trace_id`, `span_id`; Python) or `spanContext` (`traceId`,
//! `spanId`; JavaScript), a `parent_id`/`parentSpanId`, times as ISO text, nanoseconds or JavaScript's
//! `[seconds, nanoseconds]`, and `attributes` as a map, flat (`llm.input_messages.0.message.role`) or
//! nested (`llm.input_messages: [{"message.role": ...}]`); nested maps are flattened to the dotted keys.
//! Vercel AI SDK attributes (`ai.toolCall.*`, `ai.prompt`, `ai.response.*`, `ai.usage.*`) are renamed to
//! their OpenInference equivalents the way openinference-vercel does. The spans are then grouped and
//! mapped exactly as an OTLP export carrying the same attributes (OpenInference's mapping when a span
//! carries `openinference.span.kind`), so both forms of one trace give the same verdicts.
//!
//! Left unread: events, links, resources and span kinds.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;
use serde_json::{Map, Value};
use simd_json::tape::Value as TapeValue;

use super::common::ns;
use super::openinference;
use super::spans::{MapTrace, group_spans, normalize_content};
use crate::compat::value::py_str;
use crate::error::InputError;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, OwnedTraces, Traces};
use crate::ingest::json::{to_value, with_tape};
use crate::table::record::{AttrValue, Attrs, SpanRecord, TraceRecord, attr, wanted};

/// OpenInference (and Vercel AI SDK) span dicts.
pub(crate) struct OpenInferenceSpans;

impl Decoder for OpenInferenceSpans {
    fn name(&self) -> &'static str {
        "openinference-spans"
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        first_span(doc)
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(is_span_dict)
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        options: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        let values = parse_documents(path, docs)?;
        let records: Vec<&Map<String, Value>> = values.iter().flat_map(span_records).collect();
        let traces = read_spans(&records, options.all_attributes())
            .map_err(|message| invalid(path, message))?;
        if traces.is_empty() {
            return Err(invalid(path, "no OpenInference spans found".into()));
        }
        Ok(Box::new(OwnedTraces(traces)))
    }
}

pub(crate) fn invalid(path: &Path, message: String) -> InputError {
    InputError::Invalid {
        path: path.to_path_buf(),
        message,
    }
}

/// Every document of a file as JSON.
pub(crate) fn parse_documents(
    path: &Path,
    docs: &[Document<'_>],
) -> Result<Vec<Value>, InputError> {
    docs.par_iter()
        .map(|doc| with_tape(doc.bytes, to_value).map_err(|f| doc.json_error(path, f)))
        .collect()
}

/// The first span dict of a document (a span, a list of spans, or an object listing them under `spans`
/// or `data`). A span's own lists (`events`, `links`) are not taken for a list of records.
pub(crate) fn first_span(doc: TapeValue<'_, '_>) -> Option<Value> {
    use crate::ingest::json::get;
    if let Some(items) = doc.as_array() {
        return items.iter().find(|v| v.as_object().is_some()).map(to_value);
    }
    let obj = doc.as_object()?;
    if get(&obj, "attributes").is_some()
        && (get(&obj, "context").is_some() || get(&obj, "spanContext").is_some())
    {
        return Some(to_value(doc));
    }
    ["spans", "data"].iter().find_map(|k| {
        let list = get(&obj, k)?;
        let items = list.as_array()?;
        items.iter().find(|v| v.as_object().is_some()).map(to_value)
    })
}

/// The span dicts of a document, as [`first_span`] finds them.
pub(crate) fn span_records(doc: &Value) -> Vec<&Map<String, Value>> {
    let list: &[Value] = match doc {
        Value::Array(items) => items,
        Value::Object(obj) if is_span_dict(obj) => std::slice::from_ref(doc),
        Value::Object(obj) => ["spans", "data"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_array))
            .map_or(&[][..], Vec::as_slice),
        _ => &[],
    };
    list.iter().filter_map(Value::as_object).collect()
}

/// Returns true if and only if the record is a span dict: an `attributes` map and span ids in a
/// context.
pub(crate) fn is_span_dict(record: &Map<String, Value>) -> bool {
    let context = |key: &str, id: &str| {
        record
            .get(key)
            .and_then(Value::as_object)
            .is_some_and(|c| c.contains_key(id))
    };
    record.get("attributes").is_some_and(Value::is_object)
        && record.contains_key("name")
        && (context("context", "span_id") || context("spanContext", "spanId"))
}

/// Reads span dicts into traces, grouped and ordered as OTLP spans are.
pub(crate) fn read_spans(
    records: &[&Map<String, Value>],
    all: bool,
) -> Result<Vec<TraceRecord<'static>>, String> {
    let vercel = records.iter().any(|r| attributes(r).is_some_and(is_vercel));
    let openinference = vercel
        || records
            .iter()
            .any(|r| attributes(r).is_some_and(|a| a.contains_key(attr::OPENINFERENCE_KIND)));
    let mut spans = Vec::with_capacity(records.len());
    let mut skipped = 0;
    for (i, record) in records.iter().enumerate() {
        let span = read_span_dict(record, all || openinference, &mut skipped)
            .map_err(|e| format!("span {i}: {e}"))?;
        spans.push(span);
    }
    let map: Option<MapTrace> = openinference.then_some(openinference::map_trace);
    Ok(group_spans(spans, skipped, map))
}

fn attributes(record: &Map<String, Value>) -> Option<&Map<String, Value>> {
    record.get("attributes").and_then(Value::as_object)
}

fn is_vercel(attrs: &Map<String, Value>) -> bool {
    attrs.contains_key("ai.operationId") && !attrs.contains_key(attr::OPENINFERENCE_KIND)
}

/// The value at a path of keys.
fn at<'v>(record: &'v Map<String, Value>, path: &[&str]) -> Option<&'v Value> {
    let (last, inner) = path.split_last()?;
    let mut obj = record;
    for key in inner {
        obj = obj.get(*key)?.as_object()?;
    }
    obj.get(*last).filter(|v| !v.is_null())
}

/// The first of several key paths that holds a value.
fn first_at<'v>(record: &'v Map<String, Value>, paths: &[&[&str]]) -> Option<&'v Value> {
    paths.iter().find_map(|p| at(record, p))
}

/// A span or trace id as the OTLP/JSON form writes it: lowercase hex without `0x`, integers as hex of
/// `width` digits; other text is kept as it is.
pub(crate) fn id_text(v: &Value, width: usize) -> String {
    match v {
        Value::String(s) => match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                hex.to_ascii_lowercase()
            }
            // An integer id kept as its digits (JSON numbers past 64 bits are read as text).
            _ if !s.is_empty() && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_digit()) => {
                num_bigint::BigUint::parse_bytes(s.as_bytes(), 10)
                    .map_or_else(|| s.clone(), |big| format!("{big:0width$x}"))
            }
            _ => s.clone(),
        },
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                return format!("{u:0width$x}");
            }
            // Integers past 64 bits (OTel trace ids): exact when the number kept its digits.
            let text = n.to_string();
            if let Some(big) = num_bigint::BigUint::parse_bytes(text.as_bytes(), 10) {
                return format!("{big:0width$x}");
            }
            match n.as_f64() {
                Some(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 => {
                    format!("{:0width$x}", f as u128)
                }
                _ => text,
            }
        }
        other => py_str(other),
    }
}

/// A time: ISO text, a number of seconds to nanoseconds (by magnitude), or `[seconds, nanoseconds]`.
fn time(v: Option<&Value>) -> Result<i64, String> {
    match v {
        None => Ok(0),
        Some(Value::Array(pair)) if pair.len() == 2 => {
            let part = |p: &Value| p.as_i64().ok_or_else(|| format!("invalid time {v:?}"));
            let seconds = part(&pair[0])?;
            let nanos = part(&pair[1])?;
            Ok(seconds.saturating_mul(1_000_000_000).saturating_add(nanos))
        }
        Some(v) => ns(v).map_err(|e| e.to_string()),
    }
}

/// The status code (0 unset, 1 ok, 2 error) of a status word or number.
fn status_code(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => match s.to_ascii_uppercase().as_str() {
            "ERROR" | "STATUS_CODE_ERROR" | "STATUSCODE.ERROR" | "2" => 2,
            "OK" | "STATUS_CODE_OK" | "STATUSCODE.OK" | "1" => 1,
            _ => 0,
        },
        _ => 0,
    }
}

/// Reads one span dict; its attributes are flattened to dotted keys and, unless `all`, only those a check
/// reads are kept (the rest are counted in `skipped`).
pub(crate) fn read_span_dict(
    record: &Map<String, Value>,
    all: bool,
    skipped: &mut usize,
) -> Result<(String, SpanRecord<'static>), String> {
    let trace_id = first_at(
        record,
        &[
            &["context", "trace_id"],
            &["spanContext", "traceId"],
            &["trace_id"],
            &["traceId"],
        ],
    )
    .ok_or("span has no trace id")?;
    let span_id = first_at(
        record,
        &[
            &["context", "span_id"],
            &["spanContext", "spanId"],
            &["span_id"],
            &["spanId"],
        ],
    )
    .ok_or("span has no span id")?;
    let parent = first_at(
        record,
        &[
            &["parent_id"],
            &["parentSpanId"],
            &["parentId"],
            &["parentSpanContext", "spanId"],
            &["parent", "span_id"],
        ],
    );
    let status = record.get("status").and_then(Value::as_object);
    let code = status
        .and_then(|s| s.get("status_code").or_else(|| s.get("code")))
        .or_else(|| record.get("status_code"));
    let message = status
        .and_then(|s| first_at(s, &[&["description"], &["message"]]))
        .or_else(|| at(record, &["status_message"]))
        .map(py_str)
        .unwrap_or_default();
    let mut flat = Map::new();
    if let Some(attrs) = attributes(record) {
        for (k, v) in attrs {
            flatten(k.clone(), v, &mut flat);
        }
    }
    if is_vercel(&flat) {
        vercel_to_openinference(record, &mut flat);
    }
    let mut attrs = Attrs::default();
    for (k, v) in flat {
        if !all && !wanted(&k) {
            *skipped += 1;
            continue;
        }
        attrs.push(k, AttrValue::from(v));
    }
    normalize_content(&mut attrs);
    let span = SpanRecord {
        span_id: Cow::Owned(id_text(span_id, 16)),
        parent_id: parent
            .map(|p| id_text(p, 16))
            .filter(|p| !p.is_empty())
            .map(Cow::Owned),
        name: Cow::Owned(record.get("name").map(py_str).unwrap_or_default()),
        start_ns: time(first_at(record, &[&["start_time"], &["startTime"]]))?,
        end_ns: time(first_at(record, &[&["end_time"], &["endTime"]]))?,
        attrs,
        status_code: status_code(code),
        status_message: Cow::Owned(message),
    };
    Ok((id_text(trace_id, 32), span))
}

/// Nested maps and lists of maps become dotted keys (`a.0.b`); lists of scalars stay lists.
fn flatten(key: String, value: &Value, out: &mut Map<String, Value>) {
    if key.starts_with("gen_ai.") {
        // GenAI message and argument attributes may be structured values; the OTLP reader reads them whole.
        out.insert(key, value.clone());
        return;
    }
    match value {
        Value::Object(obj) if !obj.is_empty() => {
            for (k, v) in obj {
                flatten(format!("{key}.{k}"), v, out);
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            for (i, v) in items.iter().enumerate() {
                flatten(format!("{key}.{i}"), v, out);
            }
        }
        other => {
            out.insert(key, other.clone());
        }
    }
}

/// The JSON a text attribute holds, or the text.
fn parsed(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// Messages whose content is a list of parts (`[{"type": "text", "text": ...}]`) get their text as
/// content, so the prompt reads as the text of the last user message.
fn text_contents(mut v: Value) -> Value {
    let messages = match &mut v {
        Value::Array(items) => Some(items),
        Value::Object(obj) => obj.get_mut("messages").and_then(Value::as_array_mut),
        _ => None,
    };
    for m in messages
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if let Some(Value::Array(parts)) = m.get("content") {
            let text: Vec<String> = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").map(py_str))
                .collect();
            m.insert("content".into(), Value::String(text.join("\n")));
        }
    }
    v
}

/// Renames a Vercel AI SDK span's attributes to OpenInference's, as openinference-vercel does: tool
/// calls are TOOL spans, provider calls (`.doGenerate`, `.doStream`) LLM spans, the rest CHAIN spans
/// whose input is the prompt and output the response.
fn vercel_to_openinference(record: &Map<String, Value>, attrs: &mut Map<String, Value>) {
    let operation = attrs.get("ai.operationId").map(py_str).unwrap_or_default();
    let get = |attrs: &Map<String, Value>, keys: &[&str]| {
        keys.iter().find_map(|k| attrs.get(*k).cloned())
    };
    let kind = if operation == "ai.toolCall" {
        "TOOL"
    } else if operation.ends_with(".doGenerate") || operation.ends_with(".doStream") {
        "LLM"
    } else if operation.starts_with("ai.embed") {
        "EMBEDDING"
    } else {
        "CHAIN"
    };
    let mut renamed = Map::new();
    renamed.insert(attr::OPENINFERENCE_KIND.into(), kind.into());
    if kind == "TOOL" {
        let name = get(attrs, &["ai.toolCall.name"])
            .unwrap_or_else(|| record.get("name").cloned().unwrap_or(Value::Null));
        renamed.insert("tool.name".into(), name);
        if let Some(args) = get(attrs, &["ai.toolCall.args", "ai.toolCall.input"]) {
            renamed.insert("input.value".into(), args);
        }
        if let Some(result) = get(attrs, &["ai.toolCall.result", "ai.toolCall.output"]) {
            renamed.insert("output.value".into(), result);
        }
    } else {
        if let Some(prompt) = get(attrs, &["ai.prompt.messages", "ai.prompt"]) {
            renamed.insert("input.value".into(), text_contents(parsed(&prompt)));
        }
        if let Some(text) = get(
            attrs,
            &["ai.response.text", "ai.response.object", "ai.result.text"],
        ) {
            renamed.insert("output.value".into(), text);
        }
        if kind == "LLM" {
            for (from, to) in [
                (
                    &["ai.usage.promptTokens", "ai.usage.inputTokens"],
                    "llm.token_count.prompt",
                ),
                (
                    &["ai.usage.completionTokens", "ai.usage.outputTokens"],
                    "llm.token_count.completion",
                ),
            ] {
                if let Some(v) = get(attrs, from) {
                    renamed.insert(to.into(), v);
                }
            }
            if let Some(reason) = get(attrs, &["ai.response.finishReason", "ai.finishReason"]) {
                renamed.insert("llm.finish_reason".into(), reason);
            }
        }
    }
    if let Some(user) = get(
        attrs,
        &[
            "ai.telemetry.metadata.userId",
            "ai.telemetry.metadata.user_id",
        ],
    ) {
        renamed.insert("user.id".into(), user);
    }
    for (k, v) in renamed {
        attrs.insert(k, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_read_as_otlp_hex() {
        assert_eq!(id_text(&json!("0xA1b2"), 16), "a1b2");
        assert_eq!(id_text(&json!(255), 16), "00000000000000ff");
        assert_eq!(id_text(&json!("ed7b336d-e71a"), 16), "ed7b336d-e71a");
        assert_eq!(
            id_text(&json!("200754113673326459792359196831899614724"), 32),
            "9707d5fd6d4a546d47757044c6127e04"
        );
        assert_eq!(
            id_text(
                &json!(200754113673326459792359196831899614724u128 as f64),
                32
            )
            .len(),
            32
        );
    }

    #[test]
    fn nested_attributes_flatten_to_dotted_keys() {
        let mut out = Map::new();
        flatten(
            "llm.input_messages".into(),
            &json!([{"message.role": "user", "message.tool_calls": [{"tool_call.id": "c"}]}]),
            &mut out,
        );
        assert_eq!(
            out.keys().collect::<Vec<_>>(),
            [
                "llm.input_messages.0.message.role",
                "llm.input_messages.0.message.tool_calls.0.tool_call.id"
            ]
        );
    }

    #[test]
    fn javascript_times_and_status_words() {
        assert_eq!(
            time(Some(&json!([1770131992, 241000000]))).unwrap(),
            1_770_131_992_241_000_000
        );
        assert_eq!(status_code(Some(&json!("ERROR"))), 2);
        assert_eq!(status_code(Some(&json!("StatusCode.OK"))), 1);
    }
}
