//! OTLP/JSON exports with the OpenTelemetry GenAI conventions: the format's decoder, which reads whole
//! documents, and the span reader its fast path (`scanned`) shares.
//!
//! Reads `resourceSpans[].scopeSpans[].spans[]` into [`SpanRecord`]s that borrow their strings from the
//! parser's buffer, decoding attribute values the way the OTLP JSON mapping defines them. Only attributes a
//! check reads are kept (all of them when asked, for the policy's identity rule); of a resource only
//! `service.version` is read (every attribute when all are kept, for `--by`: [`read_resource`]); scope
//! attributes and kinds carry nothing the checks read, so they are never converted; links are read
//! for the traces they point to, events only for their GenAI content (`content`).
//! What becomes of a span once read (content normalisation, grouping into traces) is shared with the
//! other span formats, in `spans`.
//!
//! Large exports take the fast path: the structural scan (`scan`) finds every span's bytes, and
//! each trace's spans are parsed together, on their own, when the trace's turn comes. Documents the scan
//! does not understand are parsed whole.

pub(crate) mod content;
pub(crate) mod direct;
pub(crate) mod resources;
pub mod scan;
pub(crate) mod scanned;

use std::borrow::Cow;
use std::path::Path;

use serde_json::Value;
use simd_json::prelude::*;
use simd_json::tape::{Object, Value as TapeValue};

use super::spans::{MapTrace, SpanResources, group_spans_under, normalize_content};
use crate::error::InputError;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, Fast, OwnedTraces, Traces};
use crate::ingest::json::{get, to_value, with_tape};
use crate::ingest::survey::Survey;
use crate::table::record::{AttrValue, Attrs, SpanRecord, attr, wanted};

/// Plain OTLP/JSON.
pub(crate) struct Otlp;

impl Decoder for Otlp {
    fn name(&self) -> &'static str {
        "otlp"
    }

    fn title(&self) -> &'static str {
        "OTLP/JSON"
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        is_export_document(doc)
    }

    /// The structural scan. With `--format auto` OpenInference's fast path was asked first, so a file
    /// this one is asked about does not mention OpenInference's span kind.
    fn fast<'b>(&self, _: &Path, file: &Survey<'b>, options: &ReadOptions) -> Fast<'b> {
        scanned::scan(file, options.all_attributes(), None)
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        options: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        read_documents(path, docs, options.all_attributes(), None)
    }
}

/// An export object, or a non-empty list of export objects.
pub(crate) fn is_export_document(doc: TapeValue<'_, '_>) -> bool {
    match doc.as_array() {
        Some(items) => !items.is_empty() && items.iter().all(|i| is_export(&i)),
        None => is_export(&doc),
    }
}

/// Returns true if and only if the value looks like an OTLP export (an object with `resourceSpans`).
pub(crate) fn is_export(v: &TapeValue<'_, '_>) -> bool {
    v.as_object()
        .is_some_and(|o| get(&o, "resourceSpans").is_some())
}

/// Reads whole documents: every span, grouped by trace, owned.
pub(crate) fn read_documents(
    path: &Path,
    docs: &[Document<'_>],
    all_attributes: bool,
    map: Option<MapTrace>,
) -> Result<Box<dyn Traces>, InputError> {
    let mut spans: Vec<(String, SpanRecord<'static>)> = Vec::new();
    let mut resources = SpanResources::default();
    let mut skipped = 0;
    for doc in docs {
        let read = with_tape(doc.bytes, |value| {
            let mut add = |read: Read<'_>| match read {
                Read::Resource(attributes) => resources.begin(spans.len(), attributes.into_owned()),
                Read::Span(trace_id, span) => {
                    spans.push((trace_id.to_string(), span.into_owned()));
                }
            };
            walk_document(value, all_attributes, &mut skipped, &mut add)
        })
        .map_err(|f| doc.json_error(path, f))?;
        read.map_err(|message| doc.invalid(path, message))?;
    }
    Ok(Box::new(OwnedTraces(group_spans_under(
        spans, &resources, skipped, map,
    ))))
}

/// What the walk of a document reads, in file order.
enum Read<'i> {
    /// The attributes of the resource the spans that follow were exported under (until the next).
    Resource(Attrs<'i>),
    /// A span, with its trace id.
    Span(&'i str, SpanRecord<'i>),
}

/// An export object or a list of them (the Collector's file exporter and batch dumps write lists).
fn walk_document<'i>(
    doc: TapeValue<'_, 'i>,
    all_attributes: bool,
    skipped: &mut usize,
    add: &mut dyn FnMut(Read<'i>),
) -> Result<(), String> {
    if let Some(items) = doc.as_array() {
        for (i, item) in items.iter().enumerate() {
            if !is_export(&item) {
                return Err(format!(
                    "element {i} of the list is not an OTLP export (no resourceSpans)"
                ));
            }
            walk_export(item, all_attributes, skipped, add)
                .map_err(|e| format!("element {i}: {e}"))?;
        }
        return Ok(());
    }
    if !is_export(&doc) {
        return Err(format!(
            "unrecognised trace format; expected OTLP/JSON (an object with resourceSpans; found {})",
            crate::ingest::detect::found_keys(&to_value(doc))
        ));
    }
    walk_export(doc, all_attributes, skipped, add)
}

/// Reads one export object. The error text says where in the export the problem is.
fn walk_export<'i>(
    export: TapeValue<'_, 'i>,
    all_attributes: bool,
    skipped: &mut usize,
    add: &mut dyn FnMut(Read<'i>),
) -> Result<(), String> {
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
        // The element's keys come in any order: its resource may follow its spans.
        let attributes = get(&resource, "resource")
            .map(|r| read_resource(r, all_attributes))
            .unwrap_or_default();
        add(Read::Resource(attributes));
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
                let (trace_id, span) = read_span(&span, all_attributes, skipped)
                    .map_err(|e| format!("{}: {e}", where_()))?;
                add(Read::Span(trace_id, span));
            }
        }
    }
    Ok(())
}

/// The attributes of an OTLP `Resource` object that are read: `service.version` (an agent's version
/// when no span names it), or every one when `all`. The checks never read a resource, so one they
/// cannot decode (not an object, an attribute without a key or value) is read as far as it can be
/// and never fails the file, as it did not before resources were read.
pub(crate) fn read_resource<'i>(resource: TapeValue<'_, 'i>, all: bool) -> Attrs<'i> {
    let mut attrs = Attrs::default();
    let Some(resource) = resource.as_object() else {
        return attrs;
    };
    let Some(list) = get(&resource, "attributes").and_then(|a| a.as_array()) else {
        return attrs;
    };
    for kv in &list {
        let Some(kv) = kv.as_object() else {
            continue;
        };
        let Some(key) = get(&kv, "key").and_then(ValueIntoString::into_string) else {
            continue;
        };
        if !all && key != attr::SERVICE_VERSION {
            continue;
        }
        if let Some(Ok(value)) = get(&kv, "value").map(any_value) {
            attrs.push(key, value);
        }
    }
    attrs
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

/// Reads one span object in a single pass over its keys (a repeated key keeps its last value, as
/// Python's `json` does). Attributes no check reads are counted in `skipped`, not kept, unless `all`.
pub(crate) fn read_span<'i>(
    obj: &Object<'_, 'i>,
    all: bool,
    skipped: &mut usize,
) -> Result<(&'i str, SpanRecord<'i>), String> {
    let mut trace_id = None;
    let mut span_id = None;
    let mut parent = None;
    let mut name = None;
    let mut start = None;
    let mut end = None;
    let mut status = None;
    let mut attributes = None;
    let mut events = None;
    let mut links = None;
    for (key, value) in obj {
        match key {
            "traceId" => trace_id = Some(value),
            "spanId" => span_id = Some(value),
            "parentSpanId" => parent = Some(value),
            "name" => name = Some(value),
            "startTimeUnixNano" => start = Some(value),
            "endTimeUnixNano" => end = Some(value),
            "status" => status = Some(value),
            "attributes" => attributes = Some(value),
            "events" => events = Some(value),
            "links" => links = Some(value),
            _ => {}
        }
    }
    let Some(trace_id) = trace_id.and_then(ValueIntoString::into_string) else {
        return Err(required_id(trace_id, "traceId").err().unwrap_or_default());
    };
    let span_id = required_id(span_id, "spanId")?;
    let parent_id = match parent {
        None => None,
        Some(v) if v.is_null() => None,
        Some(v) => match v.into_string() {
            Some("") => None,
            Some(s) => Some(Cow::Borrowed(s)),
            None => Some(Cow::Owned(crate::compat::value::py_str(&to_value(v)))),
        },
    };
    let name = match name {
        None => Cow::Borrowed(""),
        Some(v) => match v.into_string() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(crate::compat::value::py_str(&to_value(v))),
        },
    };
    let start_ns = timestamp(start, "startTimeUnixNano")?;
    let end_ns = timestamp(end, "endTimeUnixNano")?;
    let (status_code, status_message) = read_status(status);
    let mut attrs = Attrs::default();
    if let Some(list) = attributes.and_then(|v| v.as_array()) {
        attrs.reserve(list.len().min(16));
        for (i, kv) in list.iter().enumerate() {
            let Some(kv) = kv.as_object() else {
                return Err(format!("attributes[{i}] is not an object"));
            };
            let mut key = None;
            let mut value = None;
            for (k, v) in &kv {
                match k {
                    "key" => key = Some(v),
                    "value" => value = Some(v),
                    _ => {}
                }
            }
            let key: Cow<'i, str> = match key {
                Some(k) => match k.into_string() {
                    Some(s) => Cow::Borrowed(s),
                    None => Cow::Owned(crate::compat::value::py_str(&to_value(k))),
                },
                None => return Err(format!("attributes[{i}] has no key")),
            };
            let Some(value) = value else {
                return Err(format!("attribute {key:?} has no value"));
            };
            if !all && !wanted(&key) {
                *skipped += 1;
                continue;
            }
            let decoded = any_value(value).map_err(|e| format!("attribute {key:?}: {e}"))?;
            attrs.push(key, decoded);
        }
    }
    if let Some(events) = events {
        content::add_events(events, all, skipped, &mut attrs)?;
    }
    normalize_content(&mut attrs);
    if let Some(links) = links.and_then(|l| l.as_array()) {
        let linked = links.iter().filter_map(|link| {
            let link = link.as_object()?;
            get(&link, "traceId").and_then(ValueIntoString::into_string)
        });
        super::spans::add_links(&mut attrs, trace_id, linked);
    }
    Ok((
        trace_id,
        SpanRecord {
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

fn required_id<'i>(value: Option<TapeValue<'_, 'i>>, key: &str) -> Result<Cow<'i, str>, String> {
    match value {
        None => Err(format!("span has no {key}")),
        Some(v) => match v.into_string() {
            Some(s) => Ok(Cow::Borrowed(s)),
            None => Err(format!("{key} must be a string")),
        },
    }
}

/// An integer the way Python's `int()` reads a JSON string or number: surrounding whitespace and a sign
/// allowed, fractions of JSON numbers truncated.
fn timestamp(value: Option<TapeValue<'_, '_>>, key: &str) -> Result<i64, String> {
    match value {
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
        if let Some(n) = scan::decimal_i64(s.as_bytes()) {
            return Ok(n);
        }
        let digits: String = crate::compat::value::py_strip(s)
            .chars()
            .filter(|c| *c != '_')
            .collect();
        return digits
            .parse::<i64>()
            .map_err(|_| crate::compat::reason::py_repr_str(s));
    }
    if v.is_null() {
        return Ok(0);
    }
    Err(crate::compat::reason::py_repr(&to_value(v)))
}

fn read_status<'i>(status: Option<TapeValue<'_, 'i>>) -> (i64, Cow<'i, str>) {
    let Some(status) = status.and_then(|v| v.as_object()) else {
        return (0, Cow::Borrowed(""));
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
        None => Cow::Borrowed(""),
        Some(v) => match v.into_string() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(crate::compat::value::py_str(&to_value(v))),
        },
    };
    (code, message)
}

/// Decodes an OTLP `AnyValue`, borrowing a string value from the parser's buffer.
fn any_value<'i>(v: TapeValue<'_, 'i>) -> Result<AttrValue<'i>, String> {
    if let Some(obj) = v.as_object()
        && let Some(s) = get(&obj, "stringValue").and_then(ValueIntoString::into_string)
    {
        return Ok(AttrValue::Str(Cow::Borrowed(s)));
    }
    any_json(v).map(AttrValue::json)
}

/// Decodes an OTLP `AnyValue`: the first present kind wins; unknown kinds stay raw objects.
fn any_json(v: TapeValue<'_, '_>) -> Result<Value, String> {
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
            .or_else(|| d.as_str().and_then(crate::compat::value::py_float_str))
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
            for item in &values {
                items.push(any_json(item)?);
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
            crate::compat::value::py_strip(s)
                .to_ascii_lowercase()
                .as_str(),
            "" | "false" | "0"
        );
    }
    crate::compat::value::py_truthy(&to_value(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::json::{PADDING, with_buffers};
    use crate::table::record::{ParsedFrom, attr};
    use crate::table::testing::one_span_export;
    use serde_json::json;

    #[test]
    fn a_rebased_span_borrows_its_plain_strings_from_the_original_bytes() {
        let original = br#"{"traceId":"t1","spanId":"s1","parentSpanId":"p1","name":"chat","startTimeUnixNano":"5",
            "attributes":[{"key":"gen_ai.tool.call.result","value":{"stringValue":"say \"hi\""}},
            {"key":"custom.key","value":{"stringValue":"plain"}}],"status":{"message":"tab\there"}}"#;
        let mut text = original.to_vec();
        text.resize(original.len() + PADDING, b' ');
        let from = ParsedFrom::new(text.as_ptr(), original);
        let mut tape = simd_json::Tape::null();
        let span = with_buffers(original.len(), |buffers| {
            simd_json::fill_tape_padded(&mut text, original.len(), buffers, &mut tape).unwrap();
            let obj = tape.as_value().as_object().unwrap();
            read_span(&obj, true, &mut 0).unwrap().1
        });
        let owned = span.clone().into_owned();
        let rebased = span.rebase(&from);
        assert_eq!(rebased, owned);
        let in_original = |s: &Cow<'_, str>| {
            let at = s.as_ptr() as usize;
            matches!(s, Cow::Borrowed(_))
                && at >= original.as_ptr() as usize
                && at + s.len() <= original.as_ptr() as usize + original.len()
        };
        assert!(in_original(&rebased.span_id));
        assert!(in_original(rebased.parent_id.as_ref().unwrap()));
        assert!(in_original(&rebased.name));
        let Some(AttrValue::Str(plain)) = rebased.attr("custom.key") else {
            panic!("a string attribute");
        };
        assert!(in_original(plain));
        // Strings that had escapes differ from their bytes in the file, so they are copies.
        let Some(AttrValue::Str(result)) = rebased.attr(attr::TOOL_CALL_RESULT) else {
            panic!("a string attribute");
        };
        assert_eq!(result, "say \"hi\"");
        assert!(matches!(result, Cow::Owned(_)));
        assert_eq!(rebased.status_message, "tab\there");
        assert!(matches!(rebased.status_message, Cow::Owned(_)));
    }

    #[test]
    fn unread_attributes_are_counted_not_kept() {
        let text = one_span_export(&json!([
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "http.url", "value": {"stringValue": "https://example.com"}},
            {"key": "llm.vendor", "value": {"stringValue": "x"}}]))
        .to_string();
        let mut skipped = 0;
        let kept = with_tape(text.as_bytes(), |doc| {
            let mut kept = Vec::new();
            walk_document(doc, false, &mut skipped, &mut |read| {
                if let Read::Span(_, span) = read {
                    kept.push(span.attrs.len());
                }
            })
            .map(|()| kept)
        })
        .unwrap()
        .unwrap();
        assert_eq!(kept, [1]);
        assert_eq!(skipped, 2);
    }
}
