//! OTLP/JSON exports with the OpenTelemetry GenAI conventions.
//!
//! Reads `resourceSpans[].scopeSpans[].spans[]` into [`SpanRecord`]s that borrow their strings from the
//! parser's buffer, decoding attribute values the way the OTLP JSON mapping defines them. Only attributes a
//! check reads are kept (all of them when asked, for the policy's identity rule); resource and scope
//! attributes, kinds, events and links carry nothing the checks read, so they are never converted.
//!
//! Large exports take the fast path: the structural scan (`ingest::scan`) finds every span's bytes, and
//! each trace's spans are parsed together, on their own, when the trace's turn comes. Documents the scan
//! does not understand are parsed whole.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::{Object, Value as TapeValue};

use crate::error::InputError;
use crate::ingest::Format;
use crate::ingest::decoder::{
    Decoder, Document, OwnedTraces, ReadOptions, Traces, check_span_count,
};
use crate::ingest::json::{PADDING, get, repair, to_value, with_buffers, with_tape};
use crate::ingest::scan::SpanSlice;
use crate::table::TableBuilder;
use crate::table::record::{
    AttrValue, Attrs, ParsedFrom, SpanRecord, TraceRecord, attr, order_otlp, wanted,
};

/// Plain OTLP/JSON.
pub(crate) struct Otlp;

impl Decoder for Otlp {
    fn format(&self) -> Format {
        Format::Otlp
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        is_export_document(doc)
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

/// What a trace's records go through before they become rows (the OpenInference mapping).
pub(crate) type MapTrace = fn(TraceRecord<'_>) -> TraceRecord<'_>;

/// Reads whole documents: every span, grouped by trace, owned.
pub(crate) fn read_documents(
    path: &Path,
    docs: &[Document<'_>],
    all_attributes: bool,
    map: Option<MapTrace>,
) -> Result<Box<dyn Traces>, InputError> {
    let mut spans: Vec<(String, SpanRecord<'static>)> = Vec::new();
    let mut skipped = 0;
    for doc in docs {
        let read = with_tape(doc.bytes, |value| {
            let mut add = |trace_id: &str, span: SpanRecord<'_>| {
                spans.push((trace_id.to_string(), span.into_owned()));
            };
            walk_document(value, all_attributes, &mut skipped, &mut add)
        })
        .map_err(|f| doc.json_error(path, f))?;
        read.map_err(|message| doc.invalid(path, message))?;
    }
    Ok(Box::new(OwnedTraces(group_spans(spans, skipped, map))))
}

/// Groups spans (each with its trace id, in file order) into traces the way OTLP exports are grouped:
/// traces in order of their first start, each trace's spans by start. Other span-based formats use it so
/// the same spans give the same traces whatever their encoding.
pub(crate) fn group_spans(
    spans: Vec<(String, SpanRecord<'static>)>,
    skipped: usize,
    map: Option<MapTrace>,
) -> Vec<TraceRecord<'static>> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut traces: Vec<TraceRecord<'static>> = Vec::new();
    for (trace_id, span) in spans {
        let slot = *index.entry(trace_id.clone()).or_insert_with(|| {
            traces.push(TraceRecord {
                trace_id: Cow::Owned(trace_id),
                ..TraceRecord::default()
            });
            traces.len() - 1
        });
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

/// An export object or a list of them (the Collector's file exporter and batch dumps write lists).
fn walk_document<'i>(
    doc: TapeValue<'_, 'i>,
    all_attributes: bool,
    skipped: &mut usize,
    add: &mut dyn FnMut(&str, SpanRecord<'i>),
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
    add: &mut dyn FnMut(&str, SpanRecord<'i>),
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
                add(trace_id, span);
            }
        }
    }
    Ok(())
}

/// The traces of a scanned export: each trace's span slices, traces by their first start.
pub(crate) struct ScannedTraces<'b> {
    bytes: &'b [u8],
    slices: Vec<SpanSlice>,
    /// Per trace, the range of `members` holding its spans' slice numbers in file order.
    traces: Vec<(usize, usize)>,
    members: Vec<u32>,
    all_attributes: bool,
    map: Option<MapTrace>,
    /// Traces of more bytes than this are read span by span into owned records.
    huge: usize,
}

impl<'b> ScannedTraces<'b> {
    pub(crate) fn new(
        bytes: &'b [u8],
        slices: Vec<SpanSlice>,
        all_attributes: bool,
        map: Option<MapTrace>,
    ) -> ScannedTraces<'b> {
        // Group by trace id in order of first appearance, then order traces by their first start (stable).
        let mut index: HashMap<&[u8], u32, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(slices.len() / 8 + 1, Default::default());
        let mut trace_of: Vec<u32> = Vec::with_capacity(slices.len());
        let mut first_start: Vec<i64> = Vec::new();
        let mut counts: Vec<usize> = Vec::new();
        for slice in &slices {
            let id = &bytes[slice.trace_id.0..slice.trace_id.1];
            let t = *index.entry(id).or_insert_with(|| {
                first_start.push(i64::MAX);
                counts.push(0);
                (first_start.len() - 1) as u32
            }) as usize;
            trace_of.push(t as u32);
            first_start[t] = first_start[t].min(slice.start_ns);
            counts[t] += 1;
        }
        drop(index);
        let mut order: Vec<u32> = (0..first_start.len() as u32).collect();
        order.sort_by_key(|&t| first_start[t as usize]);
        // Lay each trace's members out contiguously, in sorted trace order.
        let mut begin = vec![0usize; first_start.len()];
        let mut traces = Vec::with_capacity(order.len());
        let mut at = 0;
        for &t in &order {
            begin[t as usize] = at;
            traces.push((at, at + counts[t as usize]));
            at += counts[t as usize];
        }
        let mut members = vec![0u32; slices.len()];
        for (i, &t) in trace_of.iter().enumerate() {
            members[begin[t as usize]] = i as u32;
            begin[t as usize] += 1;
        }
        ScannedTraces {
            bytes,
            slices,
            traces,
            members,
            all_attributes,
            map,
            huge: KEEP_TEXT,
        }
    }
}

impl Traces for ScannedTraces<'_> {
    fn len(&self) -> usize {
        self.traces.len()
    }

    fn weight(&self, trace: usize) -> usize {
        let (a, b) = self.traces[trace];
        self.members[a..b]
            .iter()
            .map(|&m| {
                let s = &self.slices[m as usize];
                s.end - s.start
            })
            .sum()
    }

    fn append(&self, path: &Path, trace: usize, out: &mut TableBuilder) -> Result<(), InputError> {
        let (a, b) = self.traces[trace];
        let members = &self.members[a..b];
        check_span_count(path, members.len(), || {
            let id = self.slices[members[0] as usize].trace_id;
            String::from_utf8_lossy(&self.bytes[id.0..id.1]).into_owned()
        })?;
        // Each span is parsed on its own, in place in one buffer that holds the trace's spans back to
        // back, each followed by simd-json's padding: the records borrow their strings from the buffer,
        // and only one span's tape and structural index are alive at a time (a trace parsed as one list
        // kept a tape node per JSON value of the whole trace, about twice the trace's size again).
        thread_local! {
            static TEXT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let size: usize = members
            .iter()
            .map(|&m| self.slices[m as usize].end - self.slices[m as usize].start + PADDING)
            .sum();
        TEXT.with(|cell| {
            let mut text = cell.borrow_mut();
            text.clear();
            let outcome = if size > self.huge {
                // A huge trace is not copied whole: each span is parsed in a buffer of its own and its
                // record keeps copies of the few strings the tables read, a fraction of the span's bytes.
                self.read_spans_owned(members, out)
            } else {
                text.reserve_exact(size);
                for &m in members {
                    let s = &self.slices[m as usize];
                    text.extend_from_slice(&self.bytes[s.start..s.end]);
                    let padded = text.len() + PADDING;
                    text.resize(padded, b' ');
                }
                match self.read_spans(&mut text, members, out) {
                    // A span simd-json refuses may be JSON Python reads (see `repair`): the spans are
                    // read again, each on its own so that one can be rewritten.
                    Err(SpanFailure::Json(_)) => self.read_spans_owned(members, out),
                    other => other,
                }
            };
            outcome.map_err(|failure| match failure {
                // The whole document is JSON-parsed before spans are read (as 0.4.1 loads the file
                // first), so a later span's JSON error comes before this span's content error.
                SpanFailure::Invalid(start, message) => match self.span_json_error(path, members) {
                    json @ InputError::Json { .. } => json,
                    _ => InputError::Invalid {
                        path: path.to_path_buf(),
                        message: format!("span at byte {start}: {message}"),
                    },
                },
                // Only a span's own bytes can fail: find where, in the file.
                SpanFailure::Json(m) => self.span_json_error(path, &[m]),
            })
        })
    }
}

/// Traces larger than this are read span by span into owned records instead of from one copy.
const KEEP_TEXT: usize = 64 << 20;

/// Why a trace's spans could not be read.
enum SpanFailure {
    /// A span at this byte of the file is not a valid OTLP span.
    Invalid(usize, String),
    /// This slice's bytes are not JSON.
    Json(u32),
}

impl<'b> ScannedTraces<'b> {
    /// Parses the spans packed in `text` (each followed by [`PADDING`] bytes) one at a time and appends
    /// their trace to `out`.
    fn read_spans(
        &self,
        text: &mut [u8],
        members: &[u32],
        out: &mut TableBuilder,
    ) -> Result<(), SpanFailure> {
        let mut record = TraceRecord::default();
        record.spans.reserve_exact(members.len());
        let largest = members
            .iter()
            .map(|&m| self.slices[m as usize].end - self.slices[m as usize].start)
            .max()
            .unwrap_or(0);
        with_buffers(largest, |buffers| {
            let mut tape = simd_json::Tape::null();
            let mut rest = text;
            for &m in members {
                let slice = &self.slices[m as usize];
                let len = slice.end - slice.start;
                let (here, tail) = std::mem::take(&mut rest).split_at_mut(len + PADDING);
                rest = tail;
                simd_json::fill_tape_padded(here, len, buffers, &mut tape)
                    .map_err(|_| SpanFailure::Json(m))?;
                let Some(obj) = tape.as_value().as_object() else {
                    return Err(SpanFailure::Invalid(
                        slice.start,
                        "a span is not an object".to_string(),
                    ));
                };
                let (trace_id, span) =
                    read_span(&obj, self.all_attributes, &mut record.skipped_attributes)
                        .map_err(|message| SpanFailure::Invalid(slice.start, message))?;
                record.trace_id = Cow::Borrowed(trace_id);
                record.spans.push(span);
            }
            Ok(())
        })?;
        order_otlp(&mut record);
        match self.map {
            Some(map) => out.append(&map(record)),
            None => out.append(&record),
        }
        Ok(())
    }

    /// Parses each span of a huge trace in a buffer of its own, and appends the trace to `out`. The
    /// records borrow their strings from the file's bytes (copying only those that had escapes), so the
    /// heap holds the records themselves, not their text.
    fn read_spans_owned(&self, members: &[u32], out: &mut TableBuilder) -> Result<(), SpanFailure> {
        let mut record: TraceRecord<'b> = TraceRecord::default();
        record.spans.reserve_exact(members.len());
        let mut text: Vec<u8> = Vec::new();
        // One tape allocation for every span, handed from span to span (each parse has its own lifetime).
        let mut tape: Option<simd_json::Tape<'static>> = None;
        for &m in members {
            let slice = &self.slices[m as usize];
            let len = slice.end - slice.start;
            text.clear();
            text.extend_from_slice(&self.bytes[slice.start..slice.end]);
            text.resize(len + PADDING, b' ');
            let from = ParsedFrom::new(text.as_ptr(), &self.bytes[slice.start..slice.end]);
            let span = with_buffers(len, |buffers| {
                let mut scratch = tape.take().unwrap_or_else(simd_json::Tape::null).reset();
                let read = simd_json::fill_tape_padded(&mut text, len, buffers, &mut scratch)
                    .map_err(|_| SpanFailure::Json(m))
                    .and_then(|()| self.tape_span(&scratch, slice.start, &mut record));
                tape = Some(scratch.reset());
                read
            });
            let span = match span {
                // Rebased once the parser's buffers are released (a huge span's are), so that a
                // string that must be copied is not copied while they live.
                Ok(span) => span.rebase(&from),
                Err(SpanFailure::Json(_)) => self.repaired_span(m, &mut record)?,
                Err(other) => return Err(other),
            };
            record.spans.push(span);
        }
        drop(text);
        order_otlp(&mut record);
        match self.map {
            Some(map) => out.append(&map(record)),
            None => out.append(&record),
        }
        Ok(())
    }

    /// A span simd-json refused, read again after [`repair`] rewrote what Python's `json` reads and
    /// simd-json does not (big integers, `1e999`, `NaN`, lone surrogates).
    fn repaired_span(
        &self,
        m: u32,
        record: &mut TraceRecord<'_>,
    ) -> Result<SpanRecord<'static>, SpanFailure> {
        let slice = &self.slices[m as usize];
        let mut fixed = repair(&self.bytes[slice.start..slice.end]).ok_or(SpanFailure::Json(m))?;
        let len = fixed.len();
        fixed.resize(len + PADDING, b' ');
        with_buffers(len, |buffers| {
            let mut tape = simd_json::Tape::null();
            simd_json::fill_tape_padded(&mut fixed, len, buffers, &mut tape)
                .map_err(|_| SpanFailure::Json(m))?;
            self.tape_span(&tape, slice.start, record)
                .map(SpanRecord::into_owned)
        })
    }

    /// The span a one-span tape holds (its trace id names the record when the record has none yet);
    /// `start` is the span's byte offset, for errors.
    fn tape_span<'i>(
        &self,
        tape: &simd_json::Tape<'i>,
        start: usize,
        record: &mut TraceRecord<'_>,
    ) -> Result<SpanRecord<'i>, SpanFailure> {
        let Some(obj) = tape.as_value().as_object() else {
            return Err(SpanFailure::Invalid(
                start,
                "a span is not an object".to_string(),
            ));
        };
        let (trace_id, span) = read_span(&obj, self.all_attributes, &mut record.skipped_attributes)
            .map_err(|message| SpanFailure::Invalid(start, message))?;
        if record.trace_id.is_empty() {
            record.trace_id = Cow::Owned(trace_id.to_string());
        }
        Ok(span)
    }

    /// The JSON error of the first span of `members` that does not parse, at its byte in the file.
    fn span_json_error(&self, path: &Path, members: &[u32]) -> InputError {
        for &m in members {
            let s = &self.slices[m as usize];
            if let Err(f) = with_tape(&self.bytes[s.start..s.end], |_| ()) {
                return InputError::Json {
                    path: path.to_path_buf(),
                    offset: s.start + f.offset,
                    message: f.message,
                };
            }
        }
        InputError::Invalid {
            path: path.to_path_buf(),
            message: "spans that do not parse together".into(),
        }
    }
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
    normalize_content(&mut attrs);
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
        if s.bytes().all(|b| b.is_ascii_digit())
            && let Ok(n) = s.parse::<i64>()
        {
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

/// Content attributes written as structured values rather than JSON strings, read as their JSON:
/// a `kvlistValue` message list or argument object becomes plain JSON (0.4.1 keeps the raw OTLP
/// wrapper and reads nothing from it), and a `tool_call_response` part that names its payload
/// `response` (the semantic-convention schema's name) is read as its `result`.
pub(crate) fn normalize_content(attrs: &mut Attrs<'_>) {
    for key in [attr::INPUT_MESSAGES, attr::OUTPUT_MESSAGES] {
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
    use super::*;
    use crate::table::TraceBatch;
    use crate::table::schema::{STEP_ARGUMENTS, STEP_RESULT, TRACE_PROMPT};
    use serde_json::json;

    fn read(doc: &Value) -> TraceBatch {
        let text = doc.to_string();
        crate::ingest::read_bytes(Path::new("t.json"), text.as_bytes(), Format::Otlp)
            .unwrap()
            .1
    }

    fn export(attributes: &Value) -> Value {
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "name": "chat",
            "startTimeUnixNano": "1", "attributes": attributes}]}]}]})
    }

    #[test]
    fn huge_trace_records_read_as_the_borrowed_ones() {
        let bytes = std::fs::read("examples/traces.json").unwrap();
        let batch = |huge: usize| {
            let slices = crate::ingest::scan::locate_spans(&bytes).unwrap();
            let mut traces = ScannedTraces::new(&bytes, slices, true, None);
            traces.huge = huge;
            let mut builder = TableBuilder::new(crate::table::TableOptions {
                root_attributes: true,
            });
            for t in 0..traces.len() {
                traces.append(Path::new("t.json"), t, &mut builder).unwrap();
            }
            builder.finish()
        };
        let (borrowed, owned) = (batch(KEEP_TEXT), batch(0));
        assert!(borrowed.spans.num_rows() > 30);
        assert_eq!(borrowed.traces, owned.traces);
        assert_eq!(borrowed.spans, owned.spans);
        assert_eq!(borrowed.steps, owned.steps);
    }

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
    fn response_parts_are_read_as_results() {
        let input = json!([{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"hits": 0}}]}]);
        let output = json!([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search",
            "arguments": {"q": "x"}}]}]);
        let batch = read(&export(&json!([
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
        let batch = read(&export(&json!([
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [message]}}},
            {"key": "gen_ai.tool.call.arguments", "value": kv(json!([{"key": "q", "value": {"intValue": "3"}}]))}])));
        assert_eq!(batch.trace_str(TRACE_PROMPT).value(0), "find x");
        assert_eq!(
            batch.step_str(STEP_ARGUMENTS).value(0),
            crate::compat::value::json_text(&json!({"q": 3}))
        );
    }

    #[test]
    fn unread_attributes_are_counted_not_kept() {
        let text = export(&json!([
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "http.url", "value": {"stringValue": "https://example.com"}},
            {"key": "llm.vendor", "value": {"stringValue": "x"}}]))
        .to_string();
        let mut skipped = 0;
        let kept = with_tape(text.as_bytes(), |doc| {
            let mut kept = Vec::new();
            walk_document(doc, false, &mut skipped, &mut |_, span| {
                kept.push(span.attrs.len());
            })
            .map(|()| kept)
        })
        .unwrap()
        .unwrap();
        assert_eq!(kept, [1]);
        assert_eq!(skipped, 2);
    }
}
