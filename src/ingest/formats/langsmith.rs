//! LangSmith exports: a list of runs, grouped into traces by `trace_id`.
//!
//! A parentless non-llm run is the agent root; `tool` runs are tool spans (their `error` prefixes the
//! result); llm runs are chat spans with their finish reason; token counts and `total_cost` carry over.

use super::common::RecordFormat;
use serde_json::{Map, Value};

use super::common::{
    MapError, error_status, group_in_order, ns, order_trace, required_str, root_attrs,
    set_finish_reason, set_tool_attrs, set_usage, str_or,
};
use crate::compat::value::{py_str, py_truthy};
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr};

/// LangSmith run payloads.
pub(crate) static LANGSMITH: RecordFormat = RecordFormat {
    name: "langsmith",
    title: "LangSmith",
    expected: "runs with `run_type`",
    accepts,
    map: |records, _| read(records),
};

/// Returns true if and only if the record has LangSmith's fields.
pub(crate) fn accepts(record: &Map<String, Value>) -> bool {
    record.contains_key("run_type")
}

/// Maps the runs onto traces, in first-appearance order of their trace ids.
pub(crate) fn read(records: &[&Map<String, Value>]) -> Result<Vec<TraceRecord<'static>>, MapError> {
    let mut spans = Vec::with_capacity(records.len());
    for run in records {
        spans.push(read_run(run)?);
    }
    Ok(group_in_order(spans)
        .into_iter()
        .map(|(trace_id, spans)| order_trace(trace_id, spans))
        .collect())
}

fn read_run(run: &Map<String, Value>) -> Result<(String, SpanRecord<'static>), MapError> {
    let null = Value::Null;
    let get = |k: &str| run.get(k).unwrap_or(&null);
    let run_id = required_str(run, "id")?;
    let trace_id = run
        .get("trace_id")
        .filter(|v| py_truthy(v))
        .map_or_else(|| run_id.clone(), py_str);
    let run_type = str_or(run, "run_type", "chain");
    let error = get("error");
    let parent_id = run
        .get("parent_run_id")
        .filter(|v| py_truthy(v))
        .map(py_str);
    let mut attrs = Map::new();
    if parent_id.is_none() && run_type != "llm" {
        let metadata = run
            .get("extra")
            .and_then(Value::as_object)
            .and_then(|e| e.get("metadata"));
        attrs = root_attrs(
            &str_or(run, "name", "agent"),
            get("inputs"),
            get("outputs"),
            metadata,
            None,
        );
        super::common::set_langsmith_thread(&mut attrs, metadata);
    } else if run_type == "tool" {
        set_tool_attrs(
            &mut attrs,
            &str_or(run, "name", "tool"),
            get("inputs"),
            get("outputs"),
            error,
        );
    } else {
        let op = if run_type == "llm" {
            "chat"
        } else {
            run_type.as_str()
        };
        attrs.insert(attr::OPERATION_NAME.into(), Value::String(op.into()));
        set_finish_reason(&mut attrs, finish_reason(get("outputs")));
    }
    set_usage(
        &mut attrs,
        run.get("prompt_tokens"),
        run.get("completion_tokens"),
    );
    if let Some(Value::Number(cost)) = run.get("total_cost")
        && let Some(cost) = cost.as_f64()
    {
        attrs.insert(
            attr::COST_USD.into(),
            serde_json::Number::from_f64(cost).map_or(Value::Null, Value::Number),
        );
    }
    let (status_code, status_message) = error_status(error);
    let span = SpanRecord {
        span_id: run_id.into(),
        parent_id: parent_id.map(Into::into),
        name: str_or(run, "name", &run_type).into(),
        start_ns: ns(get("start_time"))?,
        end_ns: ns(get("end_time"))?,
        attrs: Attrs::from_map(attrs),
        status_code,
        status_message: status_message.into(),
    };
    Ok((trace_id, span))
}

/// The finish reason of `outputs.generations[0][0]`.
fn finish_reason(outputs: &Value) -> Option<&Value> {
    let generation = outputs.get("generations")?.get(0)?.get(0)?;
    fn truthy(v: Option<&Value>) -> Option<&Value> {
        v.filter(|v| py_truthy(v))
    }
    let metadata = generation
        .get("message")
        .and_then(|m| m.get("kwargs"))
        .and_then(|k| k.get("response_metadata"));
    truthy(
        generation
            .get("generation_info")
            .and_then(|g| g.get("finish_reason")),
    )
    .or_else(|| truthy(metadata.and_then(|m| m.get("finish_reason"))))
    .or_else(|| truthy(metadata.and_then(|m| m.get("stop_reason"))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_error_and_llm_finish_reason() {
        let doc = json!([
            {"id": "r", "run_type": "chain", "name": "agent", "inputs": {"input": "q"}, "outputs": {"output": "a"}},
            {"id": "t", "trace_id": "r", "parent_run_id": "r", "run_type": "tool", "name": "search",
             "inputs": {"q": 1}, "error": "boom", "start_time": 1790848801},
            {"id": "l", "trace_id": "r", "parent_run_id": "r", "run_type": "llm", "name": null,
             "outputs": {"generations": [[{"generation_info": {"finish_reason": "length"}}]]}}]);
        let records: Vec<&Map<String, Value>> = doc
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_object)
            .collect();
        let traces = read(&records).unwrap();
        assert_eq!(traces.len(), 1);
        let spans = &traces[0].spans;
        assert_eq!(spans[0].span_id, "r");
        let llm = spans.iter().find(|s| s.span_id == "l").unwrap();
        assert_eq!(llm.name, "None");
        assert_eq!(
            llm.attr(attr::FINISH_REASONS)
                .map(|v| v.to_json().into_owned()),
            Some(json!(["length"]))
        );
        let tool = spans.iter().find(|s| s.span_id == "t").unwrap();
        assert_eq!(
            (tool.status_code, tool.status_message.as_ref()),
            (2, "boom")
        );
        assert_eq!(tool.attr_str(attr::TOOL_CALL_RESULT), Some("Error: boom"));
    }
}
