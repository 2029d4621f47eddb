//! Langfuse exports: trace objects carrying `observations`, or flat observation rows (API pages in
//! camelCase, blob exports in snake_case).
//!
//! TOOL observations become tool spans; GENERATION observations become chat spans with their usage,
//! cost and finish reason; a level-ERROR observation carries its status message as the span error.
//! Also owns the heuristic `precheck` uses to warn about tools recorded as SPAN observations, which no
//! check reads.

use super::common::RecordFormat;
use crate::ingest::Format;
use serde_json::{Map, Value};

use super::common::{
    MapError, error_status, first, group_in_order, ns, order_trace, required_str, root_attrs,
    set_finish_reason, set_tool_attrs, set_usage, str_or, wrap_messages,
};
use crate::pyfmt::{py_str, py_truthy};
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr};

const ROW_TYPES: [&str; 10] = [
    "SPAN",
    "GENERATION",
    "EVENT",
    "TOOL",
    "AGENT",
    "CHAIN",
    "RETRIEVER",
    "EVALUATOR",
    "EMBEDDING",
    "GUARDRAIL",
];

/// Returns true if and only if the record is a Langfuse observation row (trace id, a known type, and no
/// LangSmith `run_type`).
pub fn is_row(record: &Map<String, Value>) -> bool {
    let has_trace = first(record, &["traceId"]).is_some_and(py_truthy)
        || first(record, &["trace_id"]).is_some_and(py_truthy);
    let typed = record
        .get("type")
        .is_some_and(|t| ROW_TYPES.contains(&py_str(t).to_uppercase().as_str()));
    has_trace && typed && !record.contains_key("run_type")
}

/// Langfuse exports: traces with their observations, as one document or one row each.
pub static LANGFUSE: RecordFormat = RecordFormat {
    format: Format::Langfuse,
    accepts,
    map: |records, _| read(records),
};

/// Returns true if and only if the record has Langfuse's fields (a trace object or an observation row).
pub fn accepts(record: &Map<String, Value>) -> bool {
    record.contains_key("observations") || is_row(record)
}

/// Maps the records (trace objects or observation rows) onto traces.
pub fn read(records: &[&Map<String, Value>]) -> Result<Vec<TraceRecord<'static>>, MapError> {
    let empty = Map::new();
    let mut traces = Vec::new();
    if records
        .first()
        .is_some_and(|r| r.contains_key("observations"))
    {
        for record in records {
            let trace_id = required_str(record, "id")?;
            let observations: Vec<&Map<String, Value>> = match record.get("observations") {
                Some(Value::Array(items)) => items.iter().filter_map(Value::as_object).collect(),
                _ => Vec::new(),
            };
            traces.push(read_trace(trace_id, record, &observations)?);
        }
    } else {
        let rows = records.iter().map(|r| {
            let id = first(r, &["traceId", "trace_id"]).map_or_else(|| "None".to_string(), py_str);
            (id, *r)
        });
        for (trace_id, observations) in group_in_order(rows) {
            traces.push(read_trace(trace_id, &empty, &observations)?);
        }
    }
    Ok(traces)
}

fn start_of(obs: &Map<String, Value>) -> Result<i64, MapError> {
    ns(first(obs, &["startTime", "start_time"]).unwrap_or(&Value::Null))
}

fn end_of(obs: &Map<String, Value>) -> Result<i64, MapError> {
    ns(first(obs, &["endTime", "end_time"]).unwrap_or(&Value::Null))
}

fn kind(obs: &Map<String, Value>) -> String {
    obs.get("type")
        .map_or_else(|| "SPAN".to_string(), |t| py_str(t).to_uppercase())
}

fn read_trace(
    trace_id: String,
    trace: &Map<String, Value>,
    observations: &[&Map<String, Value>],
) -> Result<TraceRecord<'static>, MapError> {
    let root_id = format!("{trace_id}:root");
    let mut starts = Vec::with_capacity(observations.len());
    let mut ends = Vec::with_capacity(observations.len());
    for obs in observations {
        starts.push(start_of(obs)?);
        ends.push(end_of(obs)?);
    }
    let mut t0 = ns(trace.get("timestamp").unwrap_or(&Value::Null))?;
    if t0 == 0 {
        t0 = starts
            .iter()
            .copied()
            .filter(|&s| s != 0)
            .min()
            .unwrap_or(0);
    }
    let end = match trace.get("latency") {
        Some(Value::Number(n)) => {
            t0.saturating_add((n.as_f64().unwrap_or(0.0) * 1e9).trunc() as i64)
        }
        _ => ends.iter().copied().filter(|&e| e != 0).max().unwrap_or(0),
    };
    let mut generations: Vec<(i64, &Map<String, Value>)> = observations
        .iter()
        .zip(&starts)
        .filter(|(o, _)| kind(o) == "GENERATION")
        .map(|(o, s)| (*s, *o))
        .collect();
    generations.sort_by_key(|(s, _)| *s);
    let null = Value::Null;
    let prompt = trace
        .get("input")
        .filter(|v| !v.is_null())
        .or_else(|| generations.first().and_then(|(_, g)| g.get("input")))
        .unwrap_or(&null);
    let answer = trace
        .get("output")
        .filter(|v| !v.is_null())
        .or_else(|| generations.last().and_then(|(_, g)| g.get("output")))
        .unwrap_or(&null);
    let name = trace
        .get("name")
        .filter(|v| py_truthy(v))
        .map_or_else(|| "agent".to_string(), py_str);
    let user = first(trace, &["userId", "user_id"]);
    let mut spans = Vec::with_capacity(observations.len() + 1);
    spans.push(SpanRecord {
        span_id: root_id.clone().into(),
        parent_id: None,
        attrs: Attrs::from_map(root_attrs(
            &name,
            prompt,
            answer,
            trace.get("metadata"),
            user,
        )),
        name: name.into(),
        start_ns: t0,
        end_ns: end,
        ..SpanRecord::default()
    });
    for ((obs, start), end) in observations.iter().zip(starts).zip(ends) {
        spans.push(read_observation(obs, &root_id, start, end)?);
    }
    Ok(order_trace(trace_id, spans))
}

fn read_observation(
    obs: &Map<String, Value>,
    root_id: &str,
    start: i64,
    end: i64,
) -> Result<SpanRecord<'static>, MapError> {
    let null = Value::Null;
    let kind = kind(obs);
    let level = obs
        .get("level")
        .map(py_str)
        .unwrap_or_default()
        .to_uppercase();
    let error = if level == "ERROR" {
        ["statusMessage", "status_message"]
            .iter()
            .find_map(|k| obs.get(*k).filter(|v| py_truthy(v)))
            .cloned()
            .unwrap_or_else(|| Value::String("error".into()))
    } else {
        Value::Null
    };
    let mut attrs = Map::new();
    if kind == "TOOL" {
        let name = str_or(obs, "name", "tool");
        let input = obs.get("input").unwrap_or(&null);
        let output = obs.get("output").unwrap_or(&null);
        set_tool_attrs(&mut attrs, &name, input, output, &error);
    } else {
        let op = if kind == "GENERATION" {
            "chat".to_string()
        } else {
            kind.to_lowercase()
        };
        attrs.insert(attr::OPERATION_NAME.into(), Value::String(op));
        if kind == "GENERATION" {
            if let Some(m) = wrap_messages("user", obs.get("input").unwrap_or(&null)) {
                attrs.insert(attr::INPUT_MESSAGES.into(), m);
            }
            if let Some(m) = wrap_messages("assistant", obs.get("output").unwrap_or(&null)) {
                attrs.insert(attr::OUTPUT_MESSAGES.into(), m);
            }
        }
    }
    if let Some(usage) =
        first(obs, &["usageDetails", "usage_details", "usage"]).and_then(Value::as_object)
    {
        set_usage(
            &mut attrs,
            first(usage, &["input", "promptTokens", "input_tokens"]),
            first(usage, &["output", "completionTokens", "output_tokens"]),
        );
    }
    set_finish_reason(
        &mut attrs,
        obs.get("metadata")
            .and_then(Value::as_object)
            .and_then(|m| m.get("finish_reason")),
    );
    if let Some(Value::Number(total)) = first(obs, &["costDetails", "cost_details"])
        .and_then(Value::as_object)
        .and_then(|c| c.get("total"))
        && let Some(total) = total.as_f64()
    {
        attrs.insert(
            attr::COST_USD.into(),
            serde_json::Number::from_f64(total).map_or(Value::Null, Value::Number),
        );
    }
    let span_id = required_str(obs, "id")?;
    let parent = first(obs, &["parentObservationId", "parent_observation_id"])
        .map_or_else(|| root_id.to_string(), py_str);
    let (status_code, status_message) = error_status(&error);
    Ok(SpanRecord {
        span_id: span_id.into(),
        parent_id: Some(parent.into()),
        name: str_or(obs, "name", &kind.to_lowercase()).into(),
        start_ns: start,
        end_ns: end,
        attrs: Attrs::from_map(attrs),
        status_code,
        status_message: status_message.into(),
    })
}

/// Names of SPAN-type observations that look like tool calls no check will read: the name reads like a
/// tool (`tool`, `function`, `call_…`, `…_tool`), or the input is an argument object and an output was
/// recorded. Several agent frameworks record their tools this way; 0.4.1 reads none of them.
pub fn suspected_tool_observations(records: &[&Map<String, Value>]) -> Vec<String> {
    let mut observations: Vec<&Map<String, Value>> = Vec::new();
    for record in records {
        match record.get("observations") {
            Some(Value::Array(items)) => {
                observations.extend(items.iter().filter_map(Value::as_object))
            }
            _ if is_row(record) => observations.push(record),
            _ => {}
        }
    }
    let mut names = Vec::new();
    for obs in observations {
        if kind(obs) != "SPAN" {
            continue;
        }
        let name = str_or(obs, "name", "");
        if tool_like_name(&name) || argument_shaped(obs) {
            names.push(name);
        }
    }
    names
}

fn tool_like_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    lower.contains("tool")
        || lower.contains("function")
        || lower.starts_with("call_")
        || lower.starts_with("call ")
        || lower.starts_with("execute_")
}

/// An input object of named arguments (not a chat payload) with a recorded output.
fn argument_shaped(obs: &Map<String, Value>) -> bool {
    const CHAT_KEYS: [&str; 6] = ["messages", "input", "prompt", "query", "question", "role"];
    let Some(input) = obs.get("input").and_then(Value::as_object) else {
        return false;
    };
    let output_recorded = obs.get("output").is_some_and(|o| !o.is_null());
    !input.is_empty()
        && output_recorded
        && !input.keys().any(|k| CHAT_KEYS.contains(&k.as_str()))
        && input
            .values()
            .all(|v| !v.is_object() || v.as_object().is_some_and(|o| !o.contains_key("role")))
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
    fn error_tool_observation_carries_status_and_prefix() {
        let doc = json!([{"id": "o1", "traceId": "t1", "type": "TOOL", "name": "ship", "level": "ERROR",
            "statusMessage": "timeout", "output": {"status": "shipped"}, "startTime": 1790848800}]);
        let traces = read(&records(&doc)).unwrap();
        let tool = traces[0].spans.iter().find(|s| s.span_id == "o1").unwrap();
        assert_eq!(tool.status_code, 2);
        assert_eq!(tool.status_message, "timeout");
        let want = format!(
            "Error: timeout {}",
            crate::pyjson::dumps_spaced(&json!({"status": "shipped"}))
        );
        assert_eq!(tool.attr_str(attr::TOOL_CALL_RESULT), Some(want.as_str()));
        assert_eq!(traces[0].spans[0].span_id, "t1:root");
    }

    #[test]
    fn snake_case_rows_read_usage() {
        let doc = json!([{"id": "g", "trace_id": "t", "type": "generation", "input": "q", "output": "a",
            "usage_details": {"input_tokens": 3, "output_tokens": 4}, "start_time": "2026-10-01T10:00:00Z"}]);
        let traces = read(&records(&doc)).unwrap();
        let gen_span = &traces[0].spans[1];
        assert_eq!(
            gen_span
                .attr(attr::INPUT_TOKENS)
                .map(|v| v.to_json().into_owned()),
            Some(json!(3))
        );
        assert_eq!(gen_span.attr_str(attr::OPERATION_NAME), Some("chat"));
        assert!(
            traces[0].spans[0]
                .attr_str(attr::INPUT_MESSAGES)
                .unwrap()
                .contains("\"q\"")
        );
    }

    #[test]
    fn span_observations_that_look_like_tools_are_named() {
        let doc = json!([{"id": "t", "observations": [
            {"id": "a", "type": "SPAN", "name": "search_tool", "input": "x"},
            {"id": "b", "type": "SPAN", "name": "lookup_order", "input": {"order_id": "o-7"}, "output": {"total": 1}},
            {"id": "c", "type": "SPAN", "name": "agent_step", "input": {"messages": []}, "output": "hi"},
            {"id": "d", "type": "TOOL", "name": "real_tool"}]}]);
        assert_eq!(
            suspected_tool_observations(&records(&doc)),
            ["search_tool", "lookup_order"]
        );
    }
}
