//! Braintrust exports: a list of logged spans, grouped into traces by `root_span_id`.
//!
//! The span whose id is its root id (or that has no parents) is the agent root; `span_attributes.type`
//! `tool` spans are tool spans and `llm` spans chat spans. Partial-update rows (`_is_merge`) are merged
//! into the span they update, the way Braintrust itself folds them, instead of becoming extra spans.

use super::common::RecordFormat;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::common::{
    MapError, error_status, group_in_order, ns, order_trace, required_str, root_attrs,
    set_finish_reason, set_tool_attrs, set_usage,
};
use crate::compat::value::{py_str, py_truthy};
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr};

/// Braintrust log rows.
pub(crate) static BRAINTRUST: RecordFormat = RecordFormat {
    name: "braintrust",
    title: "Braintrust",
    expected: "rows with `span_attributes` or `root_span_id`",
    accepts,
    map: |records, _| read(records),
};

/// Returns true if and only if the record has Braintrust's fields.
pub(crate) fn accepts(record: &Map<String, Value>) -> bool {
    record.contains_key("span_attributes") || record.contains_key("root_span_id")
}

fn record_key(record: &Map<String, Value>) -> Option<String> {
    record
        .get("span_id")
        .filter(|v| !v.is_null())
        .or_else(|| record.get("id"))
        .map(py_str)
}

/// Folds `_is_merge` rows into the earlier row of the same span: objects merge key by key (recursively),
/// other values are replaced. A merge row with no earlier row stays a row of its own.
pub(crate) fn fold_merges(records: &[&Map<String, Value>]) -> Vec<Map<String, Value>> {
    let mut out: Vec<Map<String, Value>> = Vec::with_capacity(records.len());
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for record in records {
        let is_merge = record.get("_is_merge").is_some_and(py_truthy);
        let key = record_key(record);
        if is_merge && let Some(&i) = key.as_ref().and_then(|k| by_key.get(k)) {
            for (k, v) in record.iter().filter(|(k, _)| k.as_str() != "_is_merge") {
                merge_value(out[i].entry(k.clone()).or_insert(Value::Null), v);
            }
            continue;
        }
        if let Some(k) = key {
            by_key.entry(k).or_insert(out.len());
        }
        out.push((*record).clone());
    }
    out
}

fn merge_value(into: &mut Value, update: &Value) {
    match (into, update) {
        (Value::Object(base), Value::Object(patch)) => {
            for (k, v) in patch {
                merge_value(base.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// Maps the logged spans onto traces (trace id = root span id), after folding partial updates.
pub(crate) fn read(records: &[&Map<String, Value>]) -> Result<Vec<TraceRecord<'static>>, MapError> {
    let folded = fold_merges(records);
    let mut spans = Vec::with_capacity(folded.len());
    for record in &folded {
        spans.push(read_record(record)?);
    }
    Ok(group_in_order(spans)
        .into_iter()
        .map(|(trace_id, spans)| order_trace(trace_id, spans))
        .collect())
}

fn read_record(record: &Map<String, Value>) -> Result<(String, SpanRecord<'static>), MapError> {
    let null = Value::Null;
    let get = |k: &str| record.get(k).unwrap_or(&null);
    let sid = match record.get("span_id").filter(|v| py_truthy(v)) {
        Some(v) => py_str(v),
        None => required_str(record, "id")?,
    };
    let rid = record
        .get("root_span_id")
        .filter(|v| py_truthy(v))
        .map_or_else(|| sid.clone(), py_str);
    let span_attrs = record.get("span_attributes").and_then(Value::as_object);
    let kind = span_attrs
        .and_then(|a| a.get("type"))
        .filter(|v| py_truthy(v))
        .map(|v| py_str(v).to_lowercase())
        .unwrap_or_default();
    let name = span_attrs
        .and_then(|a| a.get("name"))
        .filter(|v| py_truthy(v))
        .map_or_else(
            || {
                if kind.is_empty() {
                    "span".to_string()
                } else {
                    kind.clone()
                }
            },
            py_str,
        );
    let parents: &[Value] = record
        .get("span_parents")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let empty = Map::new();
    let metrics = record
        .get("metrics")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let metadata = record.get("metadata").filter(|m| m.is_object());
    let error = get("error");
    let mut attrs = Map::new();
    if sid == rid || parents.is_empty() {
        attrs = root_attrs(&name, get("input"), get("output"), metadata, None);
    } else if kind == "tool" {
        set_tool_attrs(&mut attrs, &name, get("input"), get("output"), error);
    } else {
        let op = match kind.as_str() {
            "llm" => "chat",
            "" => "span",
            other => other,
        };
        attrs.insert(attr::OPERATION_NAME.into(), Value::String(op.into()));
        set_finish_reason(&mut attrs, metadata.and_then(|m| m.get("finish_reason")));
    }
    set_usage(
        &mut attrs,
        metrics.get("prompt_tokens"),
        metrics.get("completion_tokens"),
    );
    let parent_id = match parents.first() {
        Some(p) if sid != rid => Some(py_str(p)),
        _ => None,
    };
    let (status_code, status_message) = error_status(error);
    let span = SpanRecord {
        span_id: sid.into(),
        parent_id: parent_id.map(Into::into),
        name: name.into(),
        start_ns: ns(metrics.get("start").unwrap_or(&null))?,
        end_ns: ns(metrics.get("end").unwrap_or(&null))?,
        attrs: Attrs::from_map(attrs),
        status_code,
        status_message: status_message.into(),
    };
    Ok((rid, span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn records(v: &Value) -> Vec<&Map<String, Value>> {
        v.as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_object)
            .collect()
    }

    #[test]
    fn merge_rows_update_their_span() {
        let doc = json!([
            {"span_id": "r", "root_span_id": "r", "span_parents": [], "span_attributes": {"name": "a", "type": "task"},
             "input": "q", "metrics": {"start": 1790848800}},
            {"span_id": "t", "root_span_id": "r", "span_parents": ["r"], "span_attributes": {"name": "s", "type": "tool"},
             "input": {"q": 1}, "metrics": {"start": 1790848801}},
            {"span_id": "t", "root_span_id": "r", "_is_merge": true, "output": {"hits": 2},
             "metrics": {"end": 1790848802}},
            {"span_id": "r", "root_span_id": "r", "_is_merge": true, "output": "done", "metrics": {"end": 1790848803}}]);
        let traces = read(&records(&doc)).unwrap();
        let spans = &traces[0].spans;
        assert_eq!(spans.len(), 2);
        let want = crate::compat::value::json_text(&json!({"hits": 2}));
        assert_eq!(
            spans[1].attr_str(attr::TOOL_CALL_RESULT),
            Some(want.as_str())
        );
        assert_eq!(spans[1].start_ns, 1_790_848_801_000_000_000);
        assert_eq!(spans[1].end_ns, 1_790_848_802_000_000_000);
        assert!(
            spans[0]
                .attr_str(attr::OUTPUT_MESSAGES)
                .unwrap()
                .contains("done")
        );
    }

    #[test]
    fn tool_error_sets_status() {
        let doc = json!([
            {"span_id": "r", "root_span_id": "r", "span_attributes": {"type": "task"}},
            {"span_id": "t", "root_span_id": "r", "span_parents": ["r"], "span_attributes": {"type": "tool"},
             "error": "boom"}]);
        let traces = read(&records(&doc)).unwrap();
        let tool = &traces[0].spans[1];
        assert_eq!(
            (tool.status_code, tool.status_message.as_ref()),
            (2, "boom")
        );
        assert_eq!(tool.attr_str(attr::TOOL_CALL_RESULT), Some("Error: boom"));
        assert_eq!(tool.name, "tool");
    }
}
