//! GenAI content that OTLP carries outside a span's attributes: span events with `gen_ai.*` names, and
//! log records that point at their span by trace id and span id (OTEP 4430 moves events to logs; the
//! GenAI conventions send `gen_ai.client.inference.operation.details` with `gen_ai.input.messages`,
//! `gen_ai.output.messages` and `gen_ai.system_instructions` that way).
//!
//! Either way the `gen_ai.*` attributes count as the span's own: an event's are added to its span as
//! the span is read, and a log record becomes a content record ([`CONTENT_RECORD`]) that is joined to
//! its span wherever the span was read (the same file, another line, another file of the run).

use std::borrow::Cow;

use simd_json::prelude::*;
use simd_json::tape::{Object, Value as TapeValue};

use super::any_value;
use crate::compat::value::py_str;
use crate::ingest::json::{get, to_value};
use crate::table::record::{Attrs, CONTENT_RECORD, SpanRecord, wanted};

/// Returns true if and only if an event or log record of this name carries GenAI content.
pub(crate) fn is_gen_ai(name: &str) -> bool {
    name.starts_with("gen_ai.")
}

/// Reads an OTLP attribute list (`[{"key", "value"}]`) into `attrs`, keeping the keys a check reads
/// (every key when `all`) and counting the others in `skipped`.
pub(crate) fn read_attributes<'i>(
    list: TapeValue<'_, 'i>,
    all: bool,
    skipped: &mut usize,
    attrs: &mut Attrs<'i>,
) -> Result<(), String> {
    let Some(list) = list.as_array() else {
        return Ok(());
    };
    for (i, kv) in list.iter().enumerate() {
        let Some(kv) = kv.as_object() else {
            return Err(format!("attributes[{i}] is not an object"));
        };
        let key: Cow<'i, str> = match get(&kv, "key") {
            Some(k) => match k.into_string() {
                Some(s) => Cow::Borrowed(s),
                None => Cow::Owned(py_str(&to_value(k))),
            },
            None => return Err(format!("attributes[{i}] has no key")),
        };
        let Some(value) = get(&kv, "value") else {
            return Err(format!("attribute {key:?} has no value"));
        };
        if !all && !wanted(&key) {
            *skipped += 1;
            continue;
        }
        let decoded = any_value(value).map_err(|e| format!("attribute {key:?}: {e}"))?;
        attrs.push(key, decoded);
    }
    Ok(())
}

/// Adds the `gen_ai.*` attributes of a span's `gen_ai.*`-named events to the span's attributes, each
/// key the span does not have itself, events in order.
pub(crate) fn add_events<'i>(
    events: TapeValue<'_, 'i>,
    all: bool,
    skipped: &mut usize,
    attrs: &mut Attrs<'i>,
) -> Result<(), String> {
    let Some(events) = events.as_array() else {
        return Ok(());
    };
    for (e, event) in events.iter().enumerate() {
        let Some(event) = event.as_object() else {
            continue;
        };
        if !get(&event, "name")
            .and_then(ValueIntoString::into_string)
            .is_some_and(is_gen_ai)
        {
            continue;
        }
        let mut own = Attrs::default();
        if let Some(list) = get(&event, "attributes") {
            read_attributes(list, all, skipped, &mut own)
                .map_err(|m| format!("events[{e}]: {m}"))?;
        }
        add_new(attrs, own);
    }
    Ok(())
}

/// Adds to `attrs` the entries of `more` whose keys it does not hold.
pub(crate) fn add_new<'i>(attrs: &mut Attrs<'i>, more: Attrs<'i>) {
    for (key, value) in more.into_entries() {
        if !attrs.contains_key(&key) {
            attrs.push(key, value);
        }
    }
}

/// A log record with GenAI content as a content record for its span, with the record's trace id: its
/// `gen_ai.*` attributes, and a body that holds them (a `kvlistValue` of `gen_ai.*` keys, as some SDKs
/// write event payloads). `None` for a record without GenAI content (an application log line).
/// A record without a trace id or span id keeps them empty: it can be joined to no span, and is counted
/// as such.
pub(crate) fn read_log_record<'i>(
    record: &Object<'_, 'i>,
    all: bool,
    skipped: &mut usize,
) -> Result<Option<(Cow<'i, str>, SpanRecord<'i>)>, String> {
    let event_name = get(record, "eventName")
        .and_then(ValueIntoString::into_string)
        .unwrap_or("");
    let mut attrs = Attrs::default();
    let mut named = is_gen_ai(event_name);
    if let Some(list) = get(record, "attributes") {
        let mut own = Attrs::default();
        let mut ignored = 0;
        read_attributes(list, true, &mut ignored, &mut own)?;
        for (key, value) in own.into_entries() {
            if key == "event.name" {
                named |= value.as_str().is_some_and(is_gen_ai);
            }
            if all || wanted(&key) {
                attrs.push(key, value);
            } else {
                *skipped += 1;
            }
        }
    }
    if let Some(body) = get(record, "body").and_then(|b| b.as_object())
        && let Some(kvlist) = get(&body, "kvlistValue")
    {
        let values = kvlist
            .as_object()
            .and_then(|k| get(&k, "values"))
            .unwrap_or(kvlist);
        let mut own = Attrs::default();
        read_attributes(values, all, skipped, &mut own).map_err(|m| format!("body: {m}"))?;
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
        return Ok(None);
    }
    let id = |key: &str| -> Cow<'i, str> {
        match get(record, key) {
            Some(v) => match v.into_string() {
                Some(s) => Cow::Borrowed(s),
                None if v.is_null() => Cow::Borrowed(""),
                None => Cow::Owned(py_str(&to_value(v))),
            },
            None => Cow::Borrowed(""),
        }
    };
    let time = ["timeUnixNano", "observedTimeUnixNano"]
        .iter()
        .find_map(|k| get(record, k).and_then(time_ns))
        .unwrap_or(0);
    super::super::spans::normalize_content(&mut attrs);
    Ok(Some((
        id("traceId"),
        SpanRecord {
            span_id: id("spanId"),
            parent_id: None,
            name: Cow::Borrowed(CONTENT_RECORD),
            start_ns: time,
            end_ns: 0,
            attrs,
            status_code: 0,
            status_message: Cow::Borrowed(""),
        },
    )))
}

/// A time in nanoseconds, as a number or the decimal string OTLP/JSON writes.
fn time_ns(v: TapeValue<'_, '_>) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_u64().and_then(|n| i64::try_from(n).ok()))
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}
