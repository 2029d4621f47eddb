//! OTLP protobuf: OTLP/HTTP request bodies (`ExportTraceServiceRequest` and `ExportLogsServiceRequest`,
//! whose wire forms are `TracesData`'s and `LogsData`'s) and the Collector file exporter's `format: proto`
//! files, where each message is preceded by its length as a 4-byte big-endian integer. A file may mix
//! both signals, one message each.
//!
//! Messages are decoded by prost from the OpenTelemetry definitions (`crate::otlp_pb`) and mapped onto
//! the same span records the OTLP/JSON reader makes: ids as lowercase hex, attribute values as their
//! OTLP/JSON mapping decodes them, then the same grouping, ordering and (when a span carries
//! `openinference.span.kind`) the OpenInference mapping. The JSON and protobuf encodings of one export
//! therefore give the same traces and verdicts. Span events with `gen_ai.*` names and log records with
//! GenAI content are read as the OTLP/JSON readers read them (`otlp::content`): a file holding log
//! records is read as OTLP logs ([`super::otlp_logs::log_traces`]), joining each record to its span.
//!
//! The two signals' messages share no tag layout that both decode: a span's trace id (field 1, bytes)
//! is not a log record's time (field 1, fixed64), and a log record's attributes (field 6, messages)
//! are not a span's kind (field 6, varint). Each message is therefore decoded as traces, and as logs
//! when it is not traces.
//!
//! A file is read as protobuf when `--format otlp-proto` is given, when its name ends in `.pb`, `.binpb`
//! or `.protobuf` (before any `.gz`/`.zst`), or, with `--format auto`, when its first byte can start
//! protobuf but not a JSON trace document and its bytes decode whole as OTLP messages holding at least one
//! span or log record with a 16-byte trace id and an 8-byte span id (see [`sniff`]).

use std::borrow::Cow;
use std::path::Path;

use prost::Message;
use serde_json::{Map, Value};
use simd_json::tape::Value as TapeValue;

use super::openinference;
use super::otlp::content::{add_new, is_gen_ai};
use super::otlp_logs::log_traces;
use super::spans::{MapTrace, SpanResources, group_spans_under, normalize_content};
use crate::digest::lower_hex;
use crate::error::InputError;
use crate::ingest::Format;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Detection, Document, Fast, OwnedTraces, Traces};
use crate::ingest::survey::Survey;
use crate::otlp_pb as pb;
use crate::table::record::{AttrValue, Attrs, CONTENT_RECORD, SpanRecord, attr, wanted};
use pb::common::v1::{AnyValue, KeyValue, any_value};
use pb::logs::v1::{LogRecord, LogsData};
use pb::trace::v1::TracesData;

/// One message of a file: traces or logs.
enum Signal {
    Traces(TracesData),
    Logs(LogsData),
}

impl Signal {
    /// A message's traces, or else its logs.
    fn decode(bytes: &[u8]) -> Result<Signal, prost::DecodeError> {
        match TracesData::decode(bytes) {
            Ok(traces) => Ok(Signal::Traces(traces)),
            Err(error) => LogsData::decode(bytes).map(Signal::Logs).map_err(|_| error),
        }
    }

    fn spans(&self) -> impl Iterator<Item = &pb::trace::v1::Span> {
        let resources = match self {
            Signal::Traces(t) => t.resource_spans.as_slice(),
            Signal::Logs(_) => &[],
        };
        resources
            .iter()
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
    }

    fn log_records(&self) -> impl Iterator<Item = &LogRecord> {
        let resources = match self {
            Signal::Logs(l) => l.resource_logs.as_slice(),
            Signal::Traces(_) => &[],
        };
        resources
            .iter()
            .flat_map(|r| &r.scope_logs)
            .flat_map(|s| &s.log_records)
    }
}

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
    fn fast<'b>(&self, path: &Path, file: &Survey<'b>, options: &ReadOptions) -> Fast<'b> {
        let bytes = file.bytes();
        if options.format != Format::Auto || named(path) {
            let messages = decode(bytes).map_err(|message| InputError::Invalid {
                path: path.to_path_buf(),
                message,
            });
            return Fast::Read(messages.map(|m| traces(path, m, options)));
        }
        match sniff(bytes) {
            Some(messages) => Fast::Read(Ok(traces(path, messages, options))),
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
        Ok(traces(path, messages, options))
    }
}

/// Returns true if and only if the file's name says it holds protobuf.
pub(crate) fn named(path: &Path) -> bool {
    let mut name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    for suffix in [".gz", ".zst", ".zstd"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    [".pb", ".binpb", ".protobuf"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// The messages of a file that starts as OTLP protobuf does (a length prefix's zero byte, or the tag of
/// `resource_spans` and `resource_logs`, which JSON text can only have as leading whitespace), when its
/// bytes decode whole and some span or log record has ids of OTLP's sizes; `None` otherwise, and the
/// file is read as JSON.
fn sniff(bytes: &[u8]) -> Option<Vec<Signal>> {
    if !matches!(bytes.first(), Some(0x00 | 0x0A)) {
        return None;
    }
    let messages = decode(bytes).ok()?;
    let plausible = messages.iter().any(|m| {
        m.spans()
            .any(|s| s.trace_id.len() == 16 && s.span_id.len() == 8)
            || m.log_records()
                .any(|r| r.trace_id.len() == 16 && r.span_id.len() == 8)
    });
    plausible.then_some(messages)
}

/// The traces of a file's decoded messages: read as OTLP logs when they hold a log record.
fn traces(path: &Path, messages: Vec<Signal>, options: &ReadOptions) -> Box<dyn Traces> {
    let all = options.all_attributes();
    if messages.iter().all(|m| matches!(m, Signal::Traces(_))) {
        return Box::new(OwnedTraces(map_messages(messages, all)));
    }
    let mut records = Vec::new();
    let mut resources = SpanResources::default();
    let mut skipped = 0;
    for message in messages {
        match message {
            Signal::Traces(traces) => {
                for resource in traces.resource_spans {
                    resources.begin(records.len(), resource_attributes(resource.resource, all));
                    for scope in resource.scope_spans {
                        for span in scope.spans {
                            records.push(map_span(span, all, &mut skipped));
                        }
                    }
                }
            }
            Signal::Logs(logs) => {
                for resource in logs.resource_logs {
                    resources.begin(records.len(), resource_attributes(resource.resource, all));
                    for scope in resource.scope_logs {
                        for record in scope.log_records {
                            records.extend(map_log_record(record, all, &mut skipped));
                        }
                    }
                }
            }
        }
    }
    log_traces(path, records, &resources, skipped, options)
}

/// The messages of a file: length-prefixed messages when the prefixes frame the whole file exactly, else
/// one message (an OTLP/HTTP body). An empty file holds no message.
fn decode(bytes: &[u8]) -> Result<Vec<Signal>, String> {
    if let Some(frames) = frames(bytes)
        && let Ok(messages) = frames
            .iter()
            .map(|f| Signal::decode(f))
            .collect::<Result<Vec<_>, _>>()
    {
        return Ok(messages);
    }
    Signal::decode(bytes)
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
    messages: Vec<Signal>,
    all: bool,
) -> Vec<crate::table::record::TraceRecord<'static>> {
    let openinference = messages.iter().any(|m| {
        m.spans().any(|s| {
            s.attributes
                .iter()
                .any(|kv| kv.key == attr::OPENINFERENCE_KIND)
        })
    });
    // OpenInference's mapping reads attributes no check names, so all are kept for it.
    let all = all || openinference;
    let mut spans = Vec::new();
    let mut resources = SpanResources::default();
    let mut skipped = 0;
    for message in messages {
        let Signal::Traces(message) = message else {
            continue;
        };
        for resource in message.resource_spans {
            resources.begin(spans.len(), resource_attributes(resource.resource, all));
            for scope in resource.scope_spans {
                for span in scope.spans {
                    spans.push(map_span(span, all, &mut skipped));
                }
            }
        }
    }
    let map = openinference.then_some(openinference::map_trace as MapTrace);
    group_spans_under(spans, &resources, skipped, map)
}

/// The attributes of a resource that are read, as the OTLP/JSON reader reads them
/// (`otlp::read_resource`): `service.version`, or every one when `all`.
fn resource_attributes(resource: Option<pb::resource::v1::Resource>, all: bool) -> Attrs<'static> {
    let mut attrs = Attrs::default();
    for KeyValue { key, value, .. } in resource.map(|r| r.attributes).unwrap_or_default() {
        if all || key == attr::SERVICE_VERSION {
            attrs.push(key, attr_value(value));
        }
    }
    attrs
}

fn map_span(
    span: pb::trace::v1::Span,
    all: bool,
    skipped: &mut usize,
) -> (String, SpanRecord<'static>) {
    let mut attrs = Attrs::default();
    read_attributes(span.attributes, all, skipped, &mut attrs);
    for event in span.events {
        if is_gen_ai(&event.name) {
            let mut own = Attrs::default();
            read_attributes(event.attributes, all, skipped, &mut own);
            add_new(&mut attrs, own);
        }
    }
    normalize_content(&mut attrs);
    let trace_id = lower_hex(&span.trace_id);
    let linked: Vec<String> = span.links.iter().map(|l| lower_hex(&l.trace_id)).collect();
    super::spans::add_links(&mut attrs, &trace_id, linked.iter().map(String::as_str));
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
    (trace_id, record)
}

/// Adds an attribute list to `attrs`, keeping the keys a check reads (every key when `all`) and counting
/// the others in `skipped`.
fn read_attributes(
    list: Vec<KeyValue>,
    all: bool,
    skipped: &mut usize,
    attrs: &mut Attrs<'static>,
) {
    for KeyValue { key, value, .. } in list {
        if !all && !wanted(&key) {
            *skipped += 1;
            continue;
        }
        attrs.push(key, attr_value(value));
    }
}

/// A log record with GenAI content as a content record for its span, with its trace id, as the
/// OTLP/JSON logs reader makes it (`otlp::content::read_log_record`): its attributes, and the `gen_ai.*`
/// keys of a key-value list body. `None` for a record without GenAI content.
fn map_log_record(
    record: LogRecord,
    all: bool,
    skipped: &mut usize,
) -> Option<(String, SpanRecord<'static>)> {
    let mut named = is_gen_ai(&record.event_name);
    let mut attrs = Attrs::default();
    for KeyValue { key, value, .. } in record.attributes {
        let value = attr_value(value);
        if key == "event.name" {
            named |= value.as_str().is_some_and(is_gen_ai);
        }
        if all || wanted(&key) {
            attrs.push(key, value);
        } else {
            *skipped += 1;
        }
    }
    if let Some(any_value::Value::KvlistValue(body)) = record.body.and_then(|b| b.value) {
        let mut own = Attrs::default();
        read_attributes(body.values, all, skipped, &mut own);
        let own = own.into_entries().filter(|(k, _)| is_gen_ai(k)).fold(
            Attrs::default(),
            |mut a, (k, v)| {
                a.push(k, v);
                a
            },
        );
        add_new(&mut attrs, own);
    }
    if !named && !attrs.keys().any(is_gen_ai) {
        return None;
    }
    normalize_content(&mut attrs);
    let time = [record.time_unix_nano, record.observed_time_unix_nano]
        .into_iter()
        .find(|&t| t != 0)
        .map_or(0, |t| i64::try_from(t).unwrap_or(i64::MAX));
    Some((
        lower_hex(&record.trace_id),
        SpanRecord {
            span_id: Cow::Owned(lower_hex(&record.span_id)),
            parent_id: None,
            name: Cow::Borrowed(CONTENT_RECORD),
            start_ns: time,
            end_ns: 0,
            attrs,
            status_code: 0,
            status_message: Cow::Borrowed(""),
        },
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::schema::TRACE_ANSWER;
    use pb::logs::v1::{ResourceLogs, ScopeLogs};
    use pb::trace::v1::{ResourceSpans, ScopeSpans, Span, span::Event};

    const OUTPUT: &str =
        r#"[{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]"#;

    fn string(key: &str, value: &str) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue {
                value: Some(any_value::Value::StringValue(value.into())),
            }),
            key_strindex: 0,
        }
    }

    fn span(events: Vec<Event>) -> Vec<u8> {
        TracesData {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![Span {
                        trace_id: vec![1; 16],
                        span_id: vec![2; 8],
                        name: "invoke_agent".into(),
                        start_time_unix_nano: 5,
                        attributes: vec![string(attr::OPERATION_NAME, "invoke_agent")],
                        events,
                        ..Span::default()
                    }],
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        }
        .encode_to_vec()
    }

    fn logs(records: Vec<LogRecord>) -> Vec<u8> {
        LogsData {
            resource_logs: vec![ResourceLogs {
                scope_logs: vec![ScopeLogs {
                    log_records: records,
                    ..ScopeLogs::default()
                }],
                ..ResourceLogs::default()
            }],
        }
        .encode_to_vec()
    }

    fn framed(messages: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for m in messages {
            out.extend(u32::try_from(m.len()).unwrap().to_be_bytes());
            out.extend(*m);
        }
        out
    }

    fn read(name: &str, bytes: &[u8], format: Format) -> (Format, String) {
        let (format, batch) = crate::ingest::read_bytes(Path::new(name), bytes, format).unwrap();
        (format, batch.trace_str(TRACE_ANSWER).value(0).to_string())
    }

    #[test]
    fn a_protobuf_file_whose_strings_spell_resource_logs_is_still_protobuf() {
        let event = Event {
            name: "gen_ai.client.inference.operation.details".into(),
            attributes: vec![
                string(attr::OUTPUT_MESSAGES, OUTPUT),
                string("app.request", r#"{"resourceLogs": []}"#),
            ],
            ..Event::default()
        };
        let bytes = span(vec![event]);
        assert_eq!(
            read("t.binpb", &bytes, Format::Auto),
            (Format::OtlpProto, "done".into())
        );
    }

    #[test]
    fn a_span_event_with_a_gen_ai_name_counts_as_the_span_s_own() {
        let events = vec![
            Event {
                name: "exception".into(),
                attributes: vec![string(attr::OUTPUT_MESSAGES, "not content")],
                ..Event::default()
            },
            Event {
                name: "gen_ai.client.inference.operation.details".into(),
                attributes: vec![string(attr::OUTPUT_MESSAGES, OUTPUT)],
                ..Event::default()
            },
        ];
        let bytes = span(events);
        assert_eq!(
            read("e.bin", &bytes, Format::Auto),
            (Format::OtlpProto, "done".into())
        );
    }

    #[test]
    fn protobuf_log_records_join_their_spans_in_a_file_of_both_signals() {
        let record = LogRecord {
            time_unix_nano: 7,
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            event_name: "gen_ai.client.inference.operation.details".into(),
            attributes: vec![string(attr::OUTPUT_MESSAGES, OUTPUT)],
            ..LogRecord::default()
        };
        let application = LogRecord {
            time_unix_nano: 8,
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            body: Some(AnyValue {
                value: Some(any_value::Value::StringValue("GET / 200".into())),
            }),
            ..LogRecord::default()
        };
        let logs = logs(vec![record, application]);
        let file = framed(&[&logs, &span(Vec::new())]);
        // Found by its bytes, and read as OTLP logs so that the run joins records across files.
        assert_eq!(
            read("m.bin", &file, Format::Auto),
            (Format::OtlpLogs, "done".into())
        );
        assert_eq!(
            read("m.binpb", &file, Format::OtlpLogs),
            (Format::OtlpLogs, "done".into())
        );
        // A logs message alone holds no trace of its own: its record's span is in no input.
        let options = ReadOptions::new(Format::Auto, crate::table::TableOptions::default());
        let alone = crate::ingest::open(Path::new("l.binpb"), &logs, &options).unwrap();
        assert_eq!(alone.format, Format::OtlpLogs);
        assert!(alone.traces.is_empty());
        assert_eq!(
            alone.traces.warnings(),
            [format!(
                "1 log record(s) in l.binpb carry GenAI content for spans no input of the run holds; their content was not read (first: trace {} span {})",
                "01".repeat(16),
                "02".repeat(8)
            )]
        );
    }
}
