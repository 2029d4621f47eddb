//! OTLP protobuf: OTLP/HTTP request bodies (`ExportTraceServiceRequest`, whose wire form is
//! `TracesData`'s) and the Collector file exporter's `format: proto` files, where each message is preceded
//! by its length as a 4-byte big-endian integer.
//!
//! Messages are decoded by prost from the OpenTelemetry definitions (`otlp_proto/pb.rs`) and mapped onto
//! the same span records the OTLP/JSON reader makes: ids as lowercase hex, attribute values as their
//! OTLP/JSON mapping decodes them, then the same grouping, ordering and (when a span carries
//! `openinference.span.kind`) the OpenInference mapping. The JSON and protobuf encodings of one export
//! therefore give the same traces and verdicts.
//!
//! A file is read as protobuf when `--format otlp-proto` is given, when its name ends in `.pb`, `.binpb`
//! or `.protobuf` (before any `.gz`/`.zst`), or, with `--format auto`, when its first byte can start
//! protobuf but not a JSON trace document and its bytes decode whole as OTLP messages holding at least one
//! span with a 16-byte trace id and an 8-byte span id (see [`sniff`]).

mod pb;

use std::borrow::Cow;
use std::path::Path;

use prost::Message;
use serde_json::{Map, Value};
use simd_json::tape::Value as TapeValue;

use super::openinference;
use super::spans::{MapTrace, group_spans, normalize_content};
use crate::digest::lower_hex;
use crate::error::InputError;
use crate::ingest::Format;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Detection, Document, Fast, OwnedTraces, Traces};
use crate::table::record::{AttrValue, Attrs, SpanRecord, attr, wanted};
use pb::common::v1::{AnyValue, KeyValue, any_value};
use pb::trace::v1::TracesData;

/// OTLP protobuf.
pub(crate) struct OtlpProto;

impl Decoder for OtlpProto {
    fn name(&self) -> &'static str {
        "otlp-proto"
    }

    fn detection(&self) -> Detection {
        Detection::Binary
    }

    /// A JSON document is never protobuf.
    fn detect(&self, _: TapeValue<'_, '_>) -> bool {
        false
    }

    /// Forced, or named as protobuf, the file is read as protobuf (or refused as such); otherwise it is
    /// when it looks like protobuf ([`sniff`]).
    fn fast<'b>(&self, path: &Path, bytes: &'b [u8], options: &ReadOptions) -> Fast<'b> {
        if options.format != Format::Auto || named(path) {
            let messages = decode(bytes).map_err(|message| InputError::Invalid {
                path: path.to_path_buf(),
                message,
            });
            return Fast::Read(messages.map(|m| traces(m, options)));
        }
        match sniff(bytes) {
            Some(messages) => Fast::Read(Ok(traces(messages, options))),
            None => Fast::Pass,
        }
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        options: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        let mut messages = Vec::new();
        for doc in docs {
            messages.extend(decode(doc.bytes).map_err(|e| doc.invalid(path, e))?);
        }
        Ok(traces(messages, options))
    }
}

/// Returns true if and only if the file's name says it holds protobuf.
fn named(path: &Path) -> bool {
    let mut name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    for suffix in [".gz", ".zst", ".zstd"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    [".pb", ".binpb", ".protobuf"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// The messages of a file that starts as OTLP protobuf does (a length prefix's zero byte, or the tag of
/// `resource_spans`, which JSON text can only have as leading whitespace), when its bytes decode whole
/// and some span has ids of OTLP's sizes; `None` otherwise, and the file is read as JSON.
fn sniff(bytes: &[u8]) -> Option<Vec<TracesData>> {
    if !matches!(bytes.first(), Some(0x00 | 0x0A)) {
        return None;
    }
    let messages = decode(bytes).ok()?;
    let plausible = messages.iter().any(|m| {
        m.resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
            .any(|s| s.trace_id.len() == 16 && s.span_id.len() == 8)
    });
    plausible.then_some(messages)
}

/// The traces of a file's decoded messages.
fn traces(messages: Vec<TracesData>, options: &ReadOptions) -> Box<dyn Traces> {
    Box::new(OwnedTraces(map_messages(
        messages,
        options.all_attributes(),
    )))
}

/// The messages of a file: length-prefixed messages when the prefixes frame the whole file exactly, else
/// one message (an OTLP/HTTP body). An empty file holds no message.
fn decode(bytes: &[u8]) -> Result<Vec<TracesData>, String> {
    if let Some(frames) = frames(bytes)
        && let Ok(messages) = frames
            .iter()
            .map(|f| TracesData::decode(*f))
            .collect::<Result<Vec<_>, _>>()
    {
        return Ok(messages);
    }
    TracesData::decode(bytes)
        .map(|m| vec![m])
        .map_err(|e| format!("not an OTLP protobuf message: {e}"))
}

/// The messages of a length-prefixed file, when its 4-byte big-endian prefixes cover it exactly.
fn frames(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut frames = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (prefix, tail) = rest.split_first_chunk::<4>()?;
        let len = usize::try_from(u32::from_be_bytes(*prefix)).ok()?;
        if len > tail.len() {
            return None;
        }
        let (frame, tail) = tail.split_at(len);
        frames.push(frame);
        rest = tail;
    }
    (!frames.is_empty()).then_some(frames)
}

/// Maps decoded messages onto traces, as the OTLP/JSON reader maps the same export.
fn map_messages(
    messages: Vec<TracesData>,
    all: bool,
) -> Vec<crate::table::record::TraceRecord<'static>> {
    let openinference = messages.iter().any(|m| {
        m.resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
            .any(|s| {
                s.attributes
                    .iter()
                    .any(|kv| kv.key == attr::OPENINFERENCE_KIND)
            })
    });
    // OpenInference's mapping reads attributes no check names, so all are kept for it.
    let all = all || openinference;
    let mut spans = Vec::new();
    let mut skipped = 0;
    for message in messages {
        for resource in message.resource_spans {
            for scope in resource.scope_spans {
                for span in scope.spans {
                    spans.push(map_span(span, all, &mut skipped));
                }
            }
        }
    }
    let map = openinference.then_some(openinference::map_trace as MapTrace);
    group_spans(spans, skipped, map)
}

fn map_span(
    span: pb::trace::v1::Span,
    all: bool,
    skipped: &mut usize,
) -> (String, SpanRecord<'static>) {
    let mut attrs = Attrs::default();
    for KeyValue { key, value, .. } in span.attributes {
        if !all && !wanted(&key) {
            *skipped += 1;
            continue;
        }
        attrs.push(key, attr_value(value));
    }
    normalize_content(&mut attrs);
    let (status_code, status_message) = span
        .status
        .map_or((0, String::new()), |s| (i64::from(s.code), s.message));
    let parent_id =
        (!span.parent_span_id.is_empty()).then(|| Cow::Owned(lower_hex(&span.parent_span_id)));
    let record = SpanRecord {
        span_id: Cow::Owned(lower_hex(&span.span_id)),
        parent_id,
        name: Cow::Owned(span.name),
        start_ns: i64::try_from(span.start_time_unix_nano).unwrap_or(i64::MAX),
        end_ns: i64::try_from(span.end_time_unix_nano).unwrap_or(i64::MAX),
        attrs,
        status_code,
        status_message: Cow::Owned(status_message),
    };
    (lower_hex(&span.trace_id), record)
}

/// An attribute value as the OTLP/JSON reader decodes the JSON form of the same value: scalars and arrays
/// as values, key-value lists kept in their OTLP/JSON wrapping.
fn attr_value(value: Option<AnyValue>) -> AttrValue<'static> {
    match value.and_then(|v| v.value) {
        Some(any_value::Value::StringValue(s)) => AttrValue::Str(Cow::Owned(s)),
        other => AttrValue::json(decoded(other)),
    }
}

fn decoded(value: Option<any_value::Value>) -> Value {
    use any_value::Value as V;
    match value {
        Some(V::StringValue(s)) => Value::String(s),
        Some(V::BoolValue(b)) => Value::Bool(b),
        Some(V::IntValue(i)) => Value::Number(i.into()),
        Some(V::DoubleValue(f)) => {
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        Some(V::ArrayValue(a)) => {
            Value::Array(a.values.into_iter().map(|v| decoded(v.value)).collect())
        }
        Some(other) => wrapped(Some(other)),
        None => Value::Object(Map::new()),
    }
}

/// The OTLP/JSON form of a value (`{"stringValue": ...}`), as a key-value list holds it.
fn wrapped(value: Option<any_value::Value>) -> Value {
    use any_value::Value as V;
    let (kind, inner) = match value {
        None => return Value::Object(Map::new()),
        Some(V::StringValue(s)) => ("stringValue", Value::String(s)),
        Some(V::BoolValue(b)) => ("boolValue", Value::Bool(b)),
        // The JSON mapping writes 64-bit integers as strings.
        Some(V::IntValue(i)) => ("intValue", Value::String(i.to_string())),
        Some(V::DoubleValue(f)) => (
            "doubleValue",
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ),
        Some(V::ArrayValue(a)) => {
            let values = a.values.into_iter().map(|v| wrapped(v.value)).collect();
            (
                "arrayValue",
                serde_json::json!({ "values": Value::Array(values) }),
            )
        }
        Some(V::KvlistValue(kv)) => {
            let values = kv
                .values
                .into_iter()
                .map(|kv| serde_json::json!({"key": kv.key, "value": wrapped(kv.value.and_then(|v| v.value))}))
                .collect();
            (
                "kvlistValue",
                serde_json::json!({ "values": Value::Array(values) }),
            )
        }
        // No check reads bytes; they are kept as hex rather than the JSON mapping's base64.
        Some(V::BytesValue(b)) => ("bytesValue", Value::String(lower_hex(&b))),
        Some(V::StringValueStrindex(i)) => ("stringValueStrindex", Value::Number(i.into())),
    };
    let mut map = Map::new();
    map.insert(kind.into(), inner);
    Value::Object(map)
}
