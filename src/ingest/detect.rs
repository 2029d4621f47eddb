//! Which format a document is (`--format auto`, docs/compatibility.md §8.1), and the record list vendor
//! formats read.
//!
//! The order formats are tried in comes from their declarations (`formats::detection_order`). OTLP
//! documents are recognised on the simd-json tape, without building values; the record list of a
//! vendor document is found on its `serde_json::Value`.

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

use super::json::{get, to_value};

/// The keys under which an object document may hold its record list, in the order they are tried.
const LIST_KEYS: [&str; 6] = ["data", "runs", "events", "traces", "spans", "observations"];

/// The format of a parsed document, or `None` when no reader recognises it (what `ingest::choose`
/// does for `--format auto`, kept for the detection tests).
#[cfg(test)]
fn detect(doc: TapeValue<'_, '_>) -> Option<super::Format> {
    super::formats::detection_order()
        .into_iter()
        .find(|(_, d)| d.detect(doc))
        .map(|(format, _)| format)
}

/// The first record of a vendor document, as JSON.
pub(crate) fn first_record_value(doc: TapeValue<'_, '_>) -> Option<Value> {
    first_record(doc).map(to_value)
}

/// Returns true if and only if some span of the export carries an attribute named `wanted`.
pub(crate) fn has_attribute_key(export: TapeValue<'_, '_>, wanted: &str) -> bool {
    let Some(export) = export.as_object() else {
        return false;
    };
    for resource in children(get(&export, "resourceSpans")) {
        let Some(resource) = resource.as_object() else {
            continue;
        };
        for scope in children(get(&resource, "scopeSpans")) {
            let Some(scope) = scope.as_object() else {
                continue;
            };
            for span in children(get(&scope, "spans")) {
                let Some(span) = span.as_object() else {
                    continue;
                };
                for kv in children(get(&span, "attributes")) {
                    let key = kv.as_object().and_then(|kv| get(&kv, "key"));
                    if key.is_some_and(|k| k.as_str() == Some(wanted)) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

fn children<'t, 'i>(v: Option<TapeValue<'t, 'i>>) -> Vec<TapeValue<'t, 'i>> {
    v.and_then(|v| v.as_array().map(|a| a.iter().collect()))
        .unwrap_or_default()
}

/// The first object record of a document (tape form).
fn first_record<'t, 'i>(doc: TapeValue<'t, 'i>) -> Option<TapeValue<'t, 'i>> {
    if let Some(items) = doc.as_array() {
        return items.iter().find(|v| v.as_object().is_some());
    }
    let obj = doc.as_object()?;
    for key in LIST_KEYS {
        if let Some(list) = get(&obj, key).and_then(|v| v.as_array()) {
            return list.iter().find(|v| v.as_object().is_some());
        }
    }
    Some(doc)
}

/// What a document holds, for refusals: `keys a, b, c` of an object (or of a list's first object).
pub(crate) fn found_keys(doc: &Value) -> String {
    let describe = |obj: &Map<String, Value>| -> String {
        if obj.is_empty() {
            return "an empty object".into();
        }
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
        if obj.len() > keys.len() {
            keys.push("…");
        }
        format!("keys {}", keys.join(", "))
    };
    match doc {
        Value::Object(obj) => match records(doc).first() {
            Some(first) if !std::ptr::eq(*first, obj) => {
                format!(
                    "records with {} (under keys {})",
                    describe(first),
                    describe(obj)
                )
            }
            _ => describe(obj),
        },
        Value::Array(items) => match items.iter().find_map(Value::as_object) {
            Some(first) => format!("a list whose first object has {}", describe(first)),
            None => format!("a list of {} item(s) with no object", items.len()),
        },
        Value::String(_) => "a string".into(),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Null => "null".into(),
    }
}

/// The object records of a document: a list, an object's first list under a known key, or the object
/// itself.
pub(crate) fn records(doc: &Value) -> Vec<&Map<String, Value>> {
    let list: &[Value] = match doc {
        Value::Array(items) => items,
        Value::Object(obj) => match LIST_KEYS
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_array))
        {
            Some(items) => items,
            None => std::slice::from_ref(doc),
        },
        _ => &[],
    };
    list.iter().filter_map(Value::as_object).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;
    use crate::ingest::json::with_tape;

    fn detect_text(text: &str) -> Option<Format> {
        with_tape(text.as_bytes(), detect).unwrap()
    }

    #[test]
    fn detection_order() {
        assert_eq!(detect_text(r#"{"resourceSpans": []}"#), Some(Format::Otlp));
        assert_eq!(
            detect_text(
                r#"[{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "openinference.span.kind"}]}]}]}]}]"#
            ),
            Some(Format::Openinference)
        );
        assert_eq!(
            detect_text(r#"{"data": [{"id": "t", "observations": []}]}"#),
            Some(Format::Langfuse)
        );
        assert_eq!(
            detect_text(r#"[{"traceId": "t", "type": "span"}]"#),
            Some(Format::Langfuse)
        );
        assert_eq!(
            detect_text(r#"[{"traceId": "t", "type": "span", "run_type": "tool"}]"#),
            Some(Format::Langsmith)
        );
        assert_eq!(
            detect_text(r#"{"runs": [1, {"run_type": "llm"}]}"#),
            Some(Format::Langsmith)
        );
        assert_eq!(
            detect_text(r#"[{"root_span_id": "r"}]"#),
            Some(Format::Braintrust)
        );
        assert_eq!(
            detect_text(r#"{"seq": 1, "event": "action"}"#),
            Some(Format::Trajectory)
        );
        assert_eq!(detect_text(r#"[{"foo": 1}]"#), None);
        assert_eq!(detect_text("5"), None);
    }
}
