//! Langfuse exports: trace objects carrying `observations`, or flat observation rows (API pages in
//! camelCase, blob exports in snake_case).
//!
//! TOOL observations become tool spans; GENERATION observations become chat spans with their usage,
//! cost and finish reason; a level-ERROR observation carries its status message as the span error.
//!
//! Several agent frameworks (agno, beeai, koog, LangGraph through the callback handler) record their
//! tool executions as SPAN observations, which 0.4.1 reads as nothing. A SPAN observation that reads
//! like a tool execution (a tool-like name, or an argument object in and an output out, and no chat
//! payload) is read as a tool span. A trace with no tool observation at all is read from its
//! generations instead: each OpenAI-style `tool_calls` entry of a generation's output becomes a tool
//! span, with the result of the `tool` message that answers its id in a later generation's input.

use super::common::RecordFormat;
use serde_json::{Map, Value};

use super::common::{
    MapError, error_status, first, group_in_order, ns, order_trace, required_str, root_attrs,
    set_finish_reason, set_tool_attrs, set_usage, str_or, wrap_messages,
};
use crate::compat::value::{py_str, py_truthy};
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
pub(crate) fn is_row(record: &Map<String, Value>) -> bool {
    let has_trace = first(record, &["traceId"]).is_some_and(py_truthy)
        || first(record, &["trace_id"]).is_some_and(py_truthy);
    let typed = record
        .get("type")
        .is_some_and(|t| ROW_TYPES.contains(&py_str(t).to_uppercase().as_str()));
    has_trace && typed && !record.contains_key("run_type")
}

/// Langfuse exports: traces with their observations, as one document or one row each.
pub(crate) static LANGFUSE: RecordFormat = RecordFormat {
    name: "langfuse",
    title: "Langfuse",
    expected: "trace objects with `observations`, or observation rows with `traceId` and a `type` such as SPAN, GENERATION or TOOL",
    accepts,
    map: |records, _| read(records),
};

/// Returns true if and only if the record has Langfuse's fields (a trace object or an observation row).
pub(crate) fn accepts(record: &Map<String, Value>) -> bool {
    record.contains_key("observations") || is_row(record)
}

/// Maps the records (trace objects or observation rows) onto traces.
pub(crate) fn read(records: &[&Map<String, Value>]) -> Result<Vec<TraceRecord<'static>>, MapError> {
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
    let mut attrs = root_attrs(&name, prompt, answer, trace.get("metadata"), user);
    if let Some(scores) = scores(trace) {
        attrs.insert(attr::SCORES.into(), scores);
    }
    if let Some(session) = first(trace, &["sessionId", "session_id"]) {
        attrs.insert(
            attr::LANGFUSE_SESSION_ID.into(),
            Value::String(py_str(session)),
        );
    }
    let mut spans = Vec::with_capacity(observations.len() + 1);
    spans.push(SpanRecord {
        span_id: root_id.clone().into(),
        parent_id: None,
        attrs: Attrs::from_map(attrs),
        name: name.into(),
        start_ns: t0,
        end_ns: end,
        ..SpanRecord::default()
    });
    for ((obs, start), end) in observations.iter().zip(starts).zip(ends) {
        spans.push(read_observation(obs, &root_id, start, end)?);
    }
    if !spans.iter().any(crate::table::record::is_tool_span) {
        spans.extend(generation_tool_calls(&generations)?);
    }
    Ok(order_trace(trace_id, spans))
}

/// The trace's scores (`scores`: objects with `name` and `value`, or `stringValue` for a categorical
/// score) as an object of name to value, the first of a name winning; `None` when it has none (the
/// list endpoint gives score ids only).
fn scores(trace: &Map<String, Value>) -> Option<Value> {
    let mut named = Map::new();
    for score in trace
        .get("scores")?
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
    {
        let Some(name) = score.get("name").and_then(Value::as_str) else {
            continue;
        };
        let value = score
            .get("value")
            .filter(|v| v.is_number() || v.is_boolean())
            .or_else(|| score.get("stringValue").filter(|v| v.is_string()));
        if let Some(value) = value
            && !named.contains_key(name)
        {
            named.insert(name.to_string(), value.clone());
        }
    }
    (!named.is_empty()).then_some(Value::Object(named))
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
    if kind == "TOOL" || (kind == "SPAN" && is_tool_execution(obs)) {
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

/// Tool spans for the tool calls of a trace's generations: OpenAI-style `tool_calls` of an output
/// message (as the OpenAI and LangChain integrations record them) or Anthropic `tool_use` content
/// blocks, each with the result that answers its id in any generation's input (a `tool` message, or a
/// `tool_result` block).
fn generation_tool_calls(
    generations: &[(i64, &Map<String, Value>)],
) -> Result<Vec<SpanRecord<'static>>, MapError> {
    let null = Value::Null;
    // Each generation's input repeats the conversation so far, so the results of an id are read from
    // the input that records the most of them (the latest on a tie), and the k-th call of an id takes
    // the k-th: a reused call id then pairs each call with its own result.
    let mut results: std::collections::HashMap<String, Vec<(&Value, bool)>> = Default::default();
    for (_, generation) in generations {
        let mut seen: std::collections::HashMap<String, Vec<(&Value, bool)>> = Default::default();
        for message in messages_of(generation.get("input")) {
            let is_tool = message.get("role").is_some_and(|r| py_str(r) == "tool");
            if let (true, Some(id)) = (is_tool, message.get("tool_call_id")) {
                seen.entry(py_str(id))
                    .or_default()
                    .push((message.get("content").unwrap_or(&null), false));
            }
            for block in content_blocks(message, "tool_result") {
                if let Some(id) = block.get("tool_use_id") {
                    let failed = block.get("is_error") == Some(&Value::Bool(true));
                    seen.entry(py_str(id))
                        .or_default()
                        .push((block.get("content").unwrap_or(&null), failed));
                }
            }
        }
        for (id, list) in seen {
            let kept = results.entry(id).or_default();
            if list.len() >= kept.len() {
                *kept = list;
            }
        }
    }
    let mut answered: std::collections::HashMap<String, usize> = Default::default();
    let mut spans = Vec::new();
    for (start, generation) in generations {
        let gen_id = required_str(generation, "id")?;
        let end = end_of(generation)?;
        for message in messages_of(generation.get("output")) {
            for (name, args, id) in calls_of(message) {
                let nth = answered.entry(id.clone()).or_default();
                let (result, failed) = results
                    .get(&id)
                    .and_then(|list| list.get(*nth))
                    .copied()
                    .unwrap_or((&null, false));
                *nth += 1;
                let error = if failed { result.clone() } else { Value::Null };
                let result = if failed { &null } else { result };
                let mut attrs = Map::new();
                set_tool_attrs(&mut attrs, &name, args, result, &error);
                if !id.is_empty() {
                    attrs.insert(attr::TOOL_CALL_ID.into(), Value::String(id.clone()));
                }
                // The call runs after the generation that asked for it ends.
                let at = if end != 0 { end } else { *start };
                spans.push(SpanRecord {
                    span_id: format!("{gen_id}:call:{}", spans.len()).into(),
                    parent_id: Some(gen_id.clone().into()),
                    name: name.into(),
                    start_ns: at,
                    end_ns: at,
                    attrs: Attrs::from_map(attrs),
                    ..SpanRecord::default()
                });
            }
        }
    }
    Ok(spans)
}

/// The tool calls of an output message: name, arguments and call id of each `tool_calls` entry or
/// `tool_use` block.
fn calls_of(message: &Map<String, Value>) -> Vec<(String, &Value, String)> {
    const NULL: &Value = &Value::Null;
    let mut calls = Vec::new();
    if let Some(Value::Array(items)) = message.get("tool_calls") {
        for call in items.iter().filter_map(Value::as_object) {
            let function = call.get("function").and_then(Value::as_object);
            let name = function
                .and_then(|f| f.get("name"))
                .or_else(|| call.get("name"))
                .filter(|n| py_truthy(n))
                .map_or_else(|| "unknown".to_string(), py_str);
            let args = function
                .and_then(|f| f.get("arguments"))
                .or_else(|| call.get("args"))
                .or_else(|| call.get("arguments"))
                .unwrap_or(NULL);
            calls.push((name, args, call.get("id").map(py_str).unwrap_or_default()));
        }
    }
    for block in content_blocks(message, "tool_use") {
        let name = block
            .get("name")
            .filter(|n| py_truthy(n))
            .map_or_else(|| "unknown".to_string(), py_str);
        let args = block.get("input").unwrap_or(NULL);
        calls.push((name, args, block.get("id").map(py_str).unwrap_or_default()));
    }
    calls
}

/// The content blocks of a message with the given `type`.
fn content_blocks<'m>(message: &'m Map<String, Value>, kind: &str) -> Vec<&'m Map<String, Value>> {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(Value::as_object)
            .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
            .collect(),
        _ => Vec::new(),
    }
}

/// The message objects of a generation's input or output: a message, a list of them, a `messages`
/// list, or OpenAI `choices` holding a `message` each.
fn messages_of(v: Option<&Value>) -> Vec<&Map<String, Value>> {
    let items: &[Value] = match v {
        Some(Value::Array(items)) => items,
        Some(whole @ Value::Object(obj)) => ["messages", "choices"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_array))
            .map_or(std::slice::from_ref(whole), Vec::as_slice),
        _ => &[],
    };
    items
        .iter()
        .filter_map(Value::as_object)
        .map(|obj| obj.get("message").and_then(Value::as_object).unwrap_or(obj))
        .collect()
}

/// Returns true if and only if a SPAN observation reads like a tool execution: a tool-like name or an
/// argument object in with an output out, and no chat payload (a framework's agent or graph node
/// span carries messages; a tool node such as LangGraph's `tools` does too, and its tools are its
/// children).
fn is_tool_execution(obs: &Map<String, Value>) -> bool {
    let name = str_or(obs, "name", "");
    (tool_like_name(&name) || argument_shaped(obs)) && !chat_payload(obs.get("input"))
}

/// An input that is a chat payload: messages, or an object with a chat key.
fn chat_payload(input: Option<&Value>) -> bool {
    const CHAT_KEYS: [&str; 3] = ["messages", "role", "prompt"];
    match input {
        Some(Value::Object(obj)) => obj.keys().any(|k| CHAT_KEYS.contains(&k.as_str())),
        Some(Value::Array(items)) => items
            .iter()
            .any(|i| i.as_object().is_some_and(|o| o.contains_key("role"))),
        _ => false,
    }
}

fn tool_like_name(name: &str) -> bool {
    crate::table::derive::tool_like_name(name)
}

/// An input object of named arguments (not a chat payload) with a recorded output.
fn argument_shaped(obs: &Map<String, Value>) -> bool {
    const CHAT_KEYS: [&str; 6] = ["messages", "input", "prompt", "query", "question", "role"];
    // OpenTelemetry-fed exports hold the arguments as JSON text (`input.value`).
    let parsed;
    let input = match obs.get("input") {
        Some(Value::Object(input)) => input,
        Some(Value::String(text)) if text.trim_start().starts_with('{') => {
            parsed = serde_json::from_str::<Map<String, Value>>(text).ok();
            match &parsed {
                Some(input) => input,
                None => return false,
            }
        }
        _ => return false,
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
    fn a_trace_s_scores_are_kept_by_name_on_the_root() {
        let doc = json!([{"id": "t1", "observations": [], "scores": [
            {"name": "task_success", "value": 0, "dataType": "BOOLEAN", "stringValue": "False"},
            {"name": "label", "value": null, "dataType": "CATEGORICAL", "stringValue": "pass"},
            {"name": "task_success", "value": 1},
            {"value": 1}, "s-id"]}, {"id": "t2", "observations": [], "scores": ["s-1", "s-2"]}]);
        let traces = read(&records(&doc)).unwrap();
        let root = crate::table::record::root_position(&traces[0].spans).unwrap();
        assert_eq!(
            traces[0].spans[root]
                .attr(attr::SCORES)
                .map(|v| v.to_json().into_owned()),
            Some(json!({"task_success": 0, "label": "pass"}))
        );
        // The list endpoint names score ids only: nothing to read.
        assert!(
            traces[1]
                .spans
                .iter()
                .all(|s| s.attr(attr::SCORES).is_none())
        );
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
            crate::compat::value::json_text(&json!({"status": "shipped"}))
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
    fn span_observations_that_are_tool_executions_are_read_as_tools() {
        let doc = json!([{"id": "t", "observations": [
            {"id": "a", "type": "SPAN", "name": "search_tool", "input": "x"},
            {"id": "b", "type": "SPAN", "name": "lookup_order", "input": {"order_id": "o-7"}, "output": {"total": 1}},
            {"id": "c", "type": "SPAN", "name": "agent_step", "input": {"messages": []}, "output": "hi"},
            {"id": "d", "type": "SPAN", "name": "tools", "input": {"messages": [{"role": "user"}]}, "output": "x"},
            {"id": "e", "type": "TOOL", "name": "real_tool"},
            {"id": "f", "type": "SPAN", "name": "get_stock_price", "input": "{\"symbol\": \"TSLA\"}", "output": "250.1"},
            {"id": "g", "type": "SPAN", "name": "summarise", "input": "{not json", "output": "x"}]}]);
        let traces = read(&records(&doc)).unwrap();
        let mut tools: Vec<&str> = traces[0]
            .spans
            .iter()
            .filter(|s| crate::table::record::is_tool_span(s))
            .map(|s| s.span_id.as_ref())
            .collect();
        tools.sort_unstable();
        assert_eq!(tools, ["a", "b", "e", "f"]);
    }

    #[test]
    fn a_reused_generation_call_id_pairs_each_call_with_its_own_result() {
        // Each generation's input repeats the conversation; both calls carry the id call_1.
        let call = |name: &str| {
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": name, "arguments": "{}"}}]})
        };
        let result =
            |text: &str| json!({"role": "tool", "tool_call_id": "call_1", "content": text});
        let doc = json!([{"id": "t", "observations": [
            {"id": "g1", "type": "GENERATION", "startTime": 1, "endTime": 2,
             "input": [{"role": "user", "content": "move my flight"}], "output": call("search")},
            {"id": "g2", "type": "GENERATION", "startTime": 3, "endTime": 4,
             "input": [call("search"), result("HAT030 found")], "output": call("update")},
            {"id": "g3", "type": "GENERATION", "startTime": 5, "endTime": 6,
             "input": [call("search"), result("HAT030 found"), call("update"),
                result("Error: HAT030 not available")],
             "output": {"role": "assistant", "content": "Sorry."}}]}]);
        let traces = read(&records(&doc)).unwrap();
        let read: Vec<(Option<&str>, Option<&str>)> = traces[0]
            .spans
            .iter()
            .filter(|s| crate::table::record::is_tool_span(s))
            .map(|s| {
                (
                    s.attr_str(attr::TOOL_NAME),
                    s.attr_str(attr::TOOL_CALL_RESULT),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                (Some("search"), Some("HAT030 found")),
                (Some("update"), Some("Error: HAT030 not available")),
            ]
        );
    }

    #[test]
    fn generation_tool_calls_become_tool_spans_only_without_tool_observations() {
        let call = json!({"id": "call_1", "type": "function",
            "function": {"name": "lookup_order", "arguments": "{\"order_id\": \"o-7\"}"}});
        let doc = json!([{"id": "t", "observations": [
            {"id": "g1", "type": "GENERATION", "startTime": 1, "endTime": 2,
             "input": [{"role": "user", "content": "refund o-7"}],
             "output": {"role": "assistant", "content": "", "tool_calls": [call]}},
            {"id": "g2", "type": "GENERATION", "startTime": 3, "endTime": 4,
             "input": [{"role": "tool", "tool_call_id": "call_1", "content": "{\"total\": 120}"}],
             "output": {"role": "assistant", "content": "Refunded."}}]}]);
        let traces = read(&records(&doc)).unwrap();
        let calls: Vec<&SpanRecord<'_>> = traces[0]
            .spans
            .iter()
            .filter(|s| crate::table::record::is_tool_span(s))
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].attr_str(attr::TOOL_NAME), Some("lookup_order"));
        assert_eq!(
            calls[0].attr_str(attr::TOOL_CALL_ARGUMENTS),
            Some("{\"order_id\": \"o-7\"}")
        );
        assert_eq!(
            calls[0].attr_str(attr::TOOL_CALL_RESULT),
            Some("{\"total\": 120}")
        );
        // Anthropic content blocks, a failed result read as an error.
        let doc_blocks = json!([{"id": "t", "observations": [
            {"id": "g1", "type": "GENERATION", "startTime": 1, "endTime": 2, "input": "refund o-7",
             "output": {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "tu_1", "name": "lookup_order", "input": {"order_id": "o-7"}}]}},
            {"id": "g2", "type": "GENERATION", "startTime": 3, "endTime": 4,
             "input": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1",
                "content": "not found", "is_error": true}]}],
             "output": "Sorry."}]}]);
        let traces = read(&records(&doc_blocks)).unwrap();
        let call = traces[0]
            .spans
            .iter()
            .find(|s| crate::table::record::is_tool_span(s))
            .unwrap();
        assert_eq!(call.attr_str(attr::TOOL_NAME), Some("lookup_order"));
        assert_eq!(
            call.attr_str(attr::TOOL_CALL_ARGUMENTS),
            Some("{\"order_id\": \"o-7\"}")
        );
        assert_eq!(
            call.attr_str(attr::TOOL_CALL_RESULT),
            Some("Error: not found")
        );
        // A trace that records its tools as observations is read from them alone.
        let mut with_tool = doc.clone();
        with_tool[0]["observations"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "x", "type": "TOOL", "name": "lookup_order", "startTime": 2}));
        let traces = read(&records(&with_tool)).unwrap();
        let tools = traces[0]
            .spans
            .iter()
            .filter(|s| crate::table::record::is_tool_span(s))
            .count();
        assert_eq!(tools, 1);
    }
}
