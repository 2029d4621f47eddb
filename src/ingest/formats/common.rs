//! Mapping helpers shared by the vendor formats: payload text, message wrappers, timestamps, the root and
//! tool attribute sets, and the ordering and root choice every non-OTLP format applies to its spans.
//!
//! These follow faultgate 0.4.1's shared helpers (docs/compatibility.md §8.3), so a vendor export yields
//! the same steps, prompt and answer as the OTLP export of the same run.

use std::path::Path;

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::compat::reason::py_repr_str;
use crate::compat::value::json_text;
use crate::compat::value::{py_str, py_truthy};
use crate::error::InputError;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, OwnedTraces, Traces};
use crate::ingest::json::{to_value, with_tape};
use crate::table::record::{SpanRecord, TraceRecord, attr};

/// A record that cannot be mapped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum MapError {
    /// A required key is absent; printed the way 0.4.1 prints Python's `KeyError`.
    #[error("KeyError({})", py_repr_str(.0))]
    MissingKey(String),
    /// A timestamp that is neither a number nor ISO-8601 text.
    #[error("Invalid isoformat string: {}", py_repr_str(.0))]
    BadTime(String),
}

/// The value under the first of `keys` that is present and not null.
pub(crate) fn first<'a>(obj: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .find_map(|k| obj.get(*k).filter(|v| !v.is_null()))
}

/// Sets a LangSmith root run's thread on its attributes: the metadata's `session_id`, `thread_id` or
/// `conversation_id`, the keys LangSmith groups a thread's traces by (the run's own `session_id`
/// names its project, not a conversation).
pub(crate) fn set_langsmith_thread(attrs: &mut Map<String, Value>, metadata: Option<&Value>) {
    let thread = metadata
        .and_then(Value::as_object)
        .and_then(|m| first(m, &["session_id", "thread_id", "conversation_id"]));
    if let Some(thread) = thread {
        attrs.insert(
            attr::LANGSMITH_THREAD_ID.into(),
            Value::String(py_str(thread)),
        );
    }
}

/// `str(obj.get(key, default))`: a present null prints `None`.
pub(crate) fn str_or(obj: &Map<String, Value>, key: &str, default: &str) -> String {
    obj.get(key).map_or_else(|| default.to_string(), py_str)
}

/// The required key as str-notation.
pub(crate) fn required_str(obj: &Map<String, Value>, key: &str) -> Result<String, MapError> {
    obj.get(key)
        .map(py_str)
        .ok_or_else(|| MapError::MissingKey(key.to_string()))
}

/// Prompt or answer text of a payload (t(v, role) of docs/compatibility.md §8.3).
pub(crate) fn text(v: &Value, role: &str) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(obj) => {
            const KEYS: [&str; 9] = [
                "input", "output", "query", "question", "prompt", "answer", "content", "text",
                "result",
            ];
            if let Some(s) = KEYS
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))
            {
                return s.to_string();
            }
            if let Some(messages) = obj.get("messages").filter(|m| m.is_array()) {
                return text(messages, role);
            }
            if obj.len() == 1
                && let Some((_, only)) = obj.iter().next()
            {
                return text(only, role);
            }
            json_text(v)
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            let roles: [&str; 2] = if role == "user" {
                ["user", "human"]
            } else {
                ["assistant", "ai"]
            };
            let content = |m: &Value| m.get("content").and_then(Value::as_str).map(str::to_string);
            let by_role = items.iter().rev().find_map(|m| {
                let r = m.get("role").and_then(Value::as_str)?;
                if roles.contains(&r) { content(m) } else { None }
            });
            by_role
                .or_else(|| items.iter().rev().find_map(content))
                .unwrap_or_default()
        }
        other => json_text(other),
    }
}

/// The messages attribute for a payload (m(role, v)): one message with the payload's text, or `None`
/// when the payload has no text.
pub(crate) fn wrap_messages(role: &str, v: &Value) -> Option<Value> {
    let content = text(v, role);
    if content.is_empty() {
        return None;
    }
    let mut message = Map::new();
    message.insert("role".into(), Value::String(role.into()));
    message.insert("content".into(), Value::String(content));
    Some(Value::String(json_text(&Value::Array(vec![
        Value::Object(message),
    ]))))
}

/// Tool arguments or result as text (q(v)).
pub(crate) fn payload(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(obj) if obj.len() == 1 => match obj.iter().next() {
            Some((k, inner)) if k == "input" || k == "output" => payload(inner),
            _ => json_text(v),
        },
        other => json_text(other),
    }
}

/// The root span's attributes (R of docs/compatibility.md §8.3).
pub(crate) fn root_attrs(
    name: &str,
    prompt: &Value,
    answer: &Value,
    metadata: Option<&Value>,
    extra_user: Option<&Value>,
) -> Map<String, Value> {
    let mut attrs = Map::new();
    attrs.insert(attr::OPERATION_NAME.into(), attr::OP_INVOKE_AGENT.into());
    attrs.insert(attr::AGENT_NAME.into(), name.into());
    if let Some(m) = wrap_messages("user", prompt) {
        attrs.insert(attr::INPUT_MESSAGES.into(), m);
    }
    if let Some(m) = wrap_messages("assistant", answer) {
        attrs.insert(attr::OUTPUT_MESSAGES.into(), m);
    }
    let metadata = metadata.and_then(Value::as_object);
    if let Some(scenario) = metadata
        .and_then(|m| m.get("scenario"))
        .filter(|v| py_truthy(v))
    {
        attrs.insert(attr::SCENARIO.into(), Value::String(py_str(scenario)));
    }
    let user = extra_user.filter(|v| py_truthy(v)).or_else(|| {
        let m = metadata?;
        ["enduser.id", "user.id", "user_id", "userId"]
            .iter()
            .find_map(|k| m.get(*k).filter(|v| py_truthy(v)))
    });
    if let Some(user) = user {
        attrs.insert(attr::ENDUSER_ID.into(), Value::String(py_str(user)));
    }
    attrs
}

/// Sets a tool call's attributes (A of docs/compatibility.md §8.3). An error prefixes the result with
/// `Error: `.
pub(crate) fn set_tool_attrs(
    attrs: &mut Map<String, Value>,
    name: &str,
    args: &Value,
    result: &Value,
    error: &Value,
) {
    attrs.insert(attr::OPERATION_NAME.into(), attr::OP_EXECUTE_TOOL.into());
    attrs.insert(attr::TOOL_NAME.into(), name.into());
    attrs.insert(
        attr::TOOL_CALL_ARGUMENTS.into(),
        Value::String(payload(args)),
    );
    let mut r = payload(result);
    if py_truthy(error) {
        let e = py_str(error);
        r = if r.is_empty() {
            format!("Error: {e}")
        } else {
            format!("Error: {e} {r}")
        };
    }
    attrs.insert(attr::TOOL_CALL_RESULT.into(), Value::String(r));
}

/// Sets token usage from numeric (non-boolean) values, overwriting what is there (U).
pub(crate) fn set_usage(
    attrs: &mut Map<String, Value>,
    input: Option<&Value>,
    output: Option<&Value>,
) {
    for (key, v) in [(attr::INPUT_TOKENS, input), (attr::OUTPUT_TOKENS, output)] {
        if let Some(Value::Number(n)) = v {
            let whole = n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.trunc() as i64)
            });
            if let Some(whole) = whole {
                attrs.insert(key.into(), Value::Number(whole.into()));
            }
        }
    }
}

/// Sets `gen_ai.response.finish_reasons` from a truthy finish reason.
pub(crate) fn set_finish_reason(attrs: &mut Map<String, Value>, reason: Option<&Value>) {
    if let Some(reason) = reason.filter(|v| py_truthy(v)) {
        attrs.insert(
            attr::FINISH_REASONS.into(),
            Value::Array(vec![Value::String(py_str(reason))]),
        );
    }
}

/// Span status for an error value: 2 and its text when the error is truthy.
pub(crate) fn error_status(error: &Value) -> (i64, String) {
    if py_truthy(error) {
        (2, py_str(error))
    } else {
        (0, String::new())
    }
}

fn has_messages(span: &SpanRecord<'_>) -> bool {
    [attr::INPUT_MESSAGES, attr::OUTPUT_MESSAGES]
        .iter()
        .any(|k| {
            span.attr(k)
                .is_some_and(crate::table::record::AttrValue::truthy)
        })
}

/// Orders a vendor trace's spans and picks its root (Z of docs/compatibility.md §8.3): among parentless
/// spans the root prefers `invoke_agent`, then spans with messages, then the earliest start, then the
/// smallest id; the root comes first, the rest follow by start and id.
pub(crate) fn order_trace(trace_id: String, mut spans: Vec<SpanRecord<'_>>) -> TraceRecord<'_> {
    let root = spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.parent_id.is_none())
        .min_by(|(_, a), (_, b)| {
            let key = |s: &SpanRecord<'_>| {
                (
                    s.attr_str(attr::OPERATION_NAME) != Some(attr::OP_INVOKE_AGENT),
                    !has_messages(s),
                    s.start_ns,
                )
            };
            key(a).cmp(&key(b)).then_with(|| a.span_id.cmp(&b.span_id))
        })
        .map(|(i, _)| i);
    let root_span = root.map(|i| spans.remove(i));
    spans.sort_by(|a, b| {
        a.start_ns
            .cmp(&b.start_ns)
            .then_with(|| a.span_id.cmp(&b.span_id))
    });
    let agent = match &root_span {
        Some(r) => r
            .attr(attr::AGENT_NAME)
            .filter(|v| v.truthy())
            .map_or_else(|| r.name.to_string(), |v| v.py_str().into_owned()),
        None => "agent".to_string(),
    };
    if let Some(r) = root_span {
        spans.insert(0, r);
    }
    TraceRecord {
        trace_id: trace_id.into(),
        agent,
        spans,
        ..TraceRecord::default()
    }
}

/// A vendor format's reading of a record list into traces.
pub(crate) type MapRecords =
    fn(&[&Map<String, Value>], &Path) -> Result<Vec<TraceRecord<'static>>, MapError>;

/// A vendor format whose documents hold a list of records: recognised by its first record's fields and
/// read by mapping the records into traces.
pub(crate) struct RecordFormat {
    /// The `--format` name.
    pub name: &'static str,
    /// How the refusal of an unrecognised file names the format.
    pub title: &'static str,
    /// The fields its records are recognised by, for the refusal of a forced format.
    pub expected: &'static str,
    pub accepts: fn(&Map<String, Value>) -> bool,
    pub map: MapRecords,
}

impl Decoder for RecordFormat {
    fn name(&self) -> &'static str {
        self.name
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn detect(&self, doc: simd_json::tape::Value<'_, '_>) -> bool {
        first_record_accepted(doc, self.accepts)
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        _: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        read_records(path, docs, self)
    }
}

/// Reads a vendor format's documents: each one's record list, checked against the format's fields and
/// mapped into traces.
fn read_records(
    path: &Path,
    docs: &[Document<'_>],
    format: &RecordFormat,
) -> Result<Box<dyn Traces>, InputError> {
    let invalid = |message: String| InputError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let values: Vec<Value> = docs
        .par_iter()
        .map(|doc| with_tape(doc.bytes, to_value).map_err(|f| doc.json_error(path, f)))
        .collect::<Result<_, _>>()?;
    let records: Vec<&Map<String, Value>> = values
        .iter()
        .flat_map(crate::ingest::detect::records)
        .collect();
    let name = format.name;
    if !records.first().is_some_and(|r| (format.accepts)(r)) {
        let found = values
            .first()
            .map_or_else(|| "nothing".into(), crate::ingest::detect::found_keys);
        return Err(invalid(format!(
            "not a valid {name} export: the records do not have its fields (expected {}; found {found})",
            format.expected
        )));
    }
    let traces = (format.map)(&records, path).map_err(|e| match e {
        MapError::MissingKey(_) => invalid(format!("not a valid {name} export: {e}")),
        MapError::BadTime(_) => invalid(e.to_string()),
    })?;
    if traces.is_empty() {
        return Err(invalid(format!("no {name} traces found")));
    }
    Ok(Box::new(OwnedTraces(traces)))
}

/// Returns true if and only if the document's first record has the fields `accepts` looks for.
fn first_record_accepted(
    doc: simd_json::tape::Value<'_, '_>,
    accepts: fn(&Map<String, Value>) -> bool,
) -> bool {
    // A document without an object record is tried as an empty record, as 0.4.1 does.
    match crate::ingest::detect::first_record_value(doc) {
        Some(Value::Object(record)) => accepts(&record),
        _ => accepts(&Map::new()),
    }
}

/// Groups items by key, keeping first-appearance order of keys and item order within a key.
pub(crate) fn group_in_order<T>(
    items: impl IntoIterator<Item = (String, T)>,
) -> Vec<(String, Vec<T>)> {
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut groups: Vec<(String, Vec<T>)> = Vec::new();
    for (key, item) in items {
        match index.get(&key) {
            Some(&i) => groups[i].1.push(item),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![item]));
            }
        }
    }
    groups
}

/// A timestamp in nanoseconds since the epoch (ns(v) of docs/compatibility.md §8.3): numbers by magnitude
/// (ns, µs, ms or seconds), numeric strings likewise, other text as ISO-8601; null and `""` are 0
/// (unknown).
pub(crate) fn ns(v: &Value) -> Result<i64, MapError> {
    match v {
        Value::Null => Ok(0),
        Value::String(s) if s.is_empty() => Ok(0),
        Value::String(s) => match numeric_text(s) {
            Some(n) => Ok(number_ns(&n)),
            None => iso_ns(s).ok_or_else(|| MapError::BadTime(s.clone())),
        },
        Value::Number(n) => Ok(number_ns(n)),
        other => Err(MapError::BadTime(py_str(other))),
    }
}

/// Text of the form `  123` or `123.45 ` as a JSON number (a float when it has a fraction).
fn numeric_text(s: &str) -> Option<serde_json::Number> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let (whole, frac) = match t.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (t, None),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match frac {
        None => whole.parse::<i64>().ok().map(Into::into).or_else(|| {
            whole
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
        }),
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            t.parse::<f64>().ok().and_then(serde_json::Number::from_f64)
        }
        Some(_) => None,
    }
}

fn number_ns(n: &serde_json::Number) -> i64 {
    let seconds = |x: f64| (x * 1e9).round_ties_even() as i64;
    if let Some(i) = n.as_i64() {
        let x = i as f64;
        let scaled = if x > 1e17 {
            i128::from(i)
        } else if x > 1e14 {
            i128::from(i) * 1_000
        } else if x > 1e11 {
            i128::from(i) * 1_000_000
        } else {
            return seconds(x);
        };
        return i64::try_from(scaled).unwrap_or(i64::MAX);
    }
    let x = n.as_f64().unwrap_or(0.0);
    if x > 1e17 {
        x.trunc() as i64
    } else if x > 1e14 {
        (x * 1e3).trunc() as i64
    } else if x > 1e11 {
        (x * 1e6).trunc() as i64
    } else {
        seconds(x)
    }
}

/// ISO-8601 text as Python 3.11's `datetime.fromisoformat` reads it (a naive time is UTC), in
/// nanoseconds computed through float seconds as 0.4.1 does.
pub(crate) fn iso_ns(s: &str) -> Option<i64> {
    let micros = iso_micros(s)?;
    let seconds = micros as f64 / 1e6;
    Some((seconds * 1e9).round_ties_even() as i64)
}

fn digits(s: &[u8], n: usize) -> Option<i64> {
    if s.len() < n || !s[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s[..n]
            .iter()
            .fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0')),
    )
}

fn iso_micros(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (year, month, day, rest) = if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        (
            digits(b, 4)?,
            digits(&b[5..], 2)?,
            digits(&b[8..], 2)?,
            &b[10..],
        )
    } else if b.len() >= 8 && b[..8].iter().all(u8::is_ascii_digit) {
        (
            digits(b, 4)?,
            digits(&b[4..], 2)?,
            digits(&b[6..], 2)?,
            &b[8..],
        )
    } else {
        return None;
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) || year < 1 {
        return None;
    }
    let mut micros = days_from_civil(year, month, day) * 86_400_000_000;
    if rest.is_empty() {
        return Some(micros);
    }
    // Python 3.11 accepts any single character between date and time.
    let time = std::str::from_utf8(rest).ok()?;
    let mut chars = time.chars();
    chars.next()?;
    let time = chars.as_str().as_bytes();
    let tz_at = time
        .iter()
        .position(|c| matches!(c, b'Z' | b'+' | b'-'))
        .unwrap_or(time.len());
    let (clock, tz) = time.split_at(tz_at);
    micros += clock_micros(clock)?;
    micros -= offset_micros(tz)?;
    Some(micros)
}

/// `HH[:MM[:SS[.ffffff]]]` or `HH[MM[SS[.ffffff]]]` in microseconds.
fn clock_micros(t: &[u8]) -> Option<i64> {
    let hour = digits(t, 2)?;
    let mut rest = &t[2..];
    let extended = rest.first() == Some(&b':');
    let mut minute = 0;
    let mut second = 0;
    let mut frac = 0;
    let mut field = 0;
    while !rest.is_empty() && field < 2 {
        if extended {
            if rest[0] != b':' {
                return None;
            }
            rest = &rest[1..];
        }
        let v = digits(rest, 2)?;
        rest = &rest[2..];
        if field == 0 {
            minute = v;
        } else {
            second = v;
        }
        field += 1;
    }
    if !rest.is_empty() {
        if field < 2 || !matches!(rest[0], b'.' | b',') {
            return None;
        }
        let f = &rest[1..];
        if f.is_empty() || !f.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut value = 0i64;
        for i in 0..6 {
            value = value * 10 + f.get(i).map_or(0, |d| i64::from(d - b'0'));
        }
        frac = value;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(((hour * 60 + minute) * 60 + second) * 1_000_000 + frac)
}

fn offset_micros(tz: &[u8]) -> Option<i64> {
    match tz {
        [] => Some(0),
        [b'Z'] => Some(0),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let m = clock_micros(rest)?;
            Some(if *sign == b'-' { -m } else { m })
        }
        _ => None,
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timestamps_agree_across_units() {
        let want = 1_790_848_800_000_000_000;
        for v in [
            json!(1790848800),
            json!(1790848800.0),
            json!("1790848800"),
            json!("1790848800000"),
            json!("1790848800000000"),
            json!("1790848800000000000"),
            json!("2026-10-01T10:00:00"),
            json!("2026-10-01T10:00:00Z"),
            json!("2026-10-01 12:00:00+02:00"),
        ] {
            assert_eq!(ns(&v).unwrap(), want, "{v}");
        }
        assert_eq!(
            ns(&json!(1790848800123.5)).unwrap(),
            1_790_848_800_123_500_032
        );
        assert_eq!(ns(&json!("2026-10-01")).unwrap(), 1_790_812_800_000_000_000);
        assert_eq!(ns(&json!(null)).unwrap(), 0);
        assert_eq!(
            ns(&json!("garbage")).unwrap_err().to_string(),
            "Invalid isoformat string: 'garbage'"
        );
    }

    #[test]
    fn text_prefers_known_keys_then_last_role_message() {
        assert_eq!(text(&json!({"input": "hi", "x": 1}), "user"), "hi");
        let msgs = json!({"messages": [{"role": "user", "content": "a"}, {"role": "ai", "content": "b"},
            {"role": "human", "content": "c"}]});
        assert_eq!(text(&msgs, "user"), "c");
        assert_eq!(text(&msgs, "assistant"), "b");
        assert_eq!(text(&json!(true), "user"), "true");
        assert_eq!(
            text(&json!({"a": 1, "b": 2}), "user"),
            json_text(&json!({"a": 1, "b": 2}))
        );
    }

    #[test]
    fn payload_unwraps_single_input_or_output() {
        assert_eq!(
            payload(&json!({"input": {"order_id": "o-7"}})),
            json_text(&json!({"order_id": "o-7"}))
        );
        assert_eq!(payload(&json!({"output": "ok"})), "ok");
        assert_eq!(payload(&json!(null)), "");
    }

    #[test]
    fn tool_error_prefixes_result() {
        let mut attrs = Map::new();
        set_tool_attrs(
            &mut attrs,
            "t",
            &json!(null),
            &json!({"a": 1}),
            &json!({"msg": "x"}),
        );
        let want = format!("Error: {{'msg': 'x'}} {}", json_text(&json!({"a": 1})));
        assert_eq!(attrs[attr::TOOL_CALL_RESULT], json!(want));
    }

    #[test]
    fn untimed_parentless_span_wins_root_choice() {
        let span = |id: &'static str, start| SpanRecord {
            span_id: id.into(),
            start_ns: start,
            name: id.into(),
            ..SpanRecord::default()
        };
        let trace = order_trace("t".into(), vec![span("b", 5), span("a", 0), span("c", 1)]);
        let ids: Vec<&str> = trace.spans.iter().map(|s| s.span_id.as_ref()).collect();
        assert_eq!(ids, ["a", "c", "b"]);
        assert_eq!(trace.agent, "a");
    }
}
