//! Agent trajectories: JSON lines of `seq`-numbered events (`action`, `checkpoint`, `handoff`, `final`)
//! emitted by the agents of one run, the shape workflow conformance replays.
//!
//! For `check`, a trajectory becomes one trace: actions and checkpoints are tool steps (a checkpoint
//! also carries `faultgate.checkpoint`), handoffs are `invoke_agent` spans named after the receiving
//! agent, and the final event's answer is the root's output. The final `task_success` is kept as the
//! root attribute `faultgate.task_success`: 0.4.1 read trajectories without it, so it is the recorded
//! outcome only under `--outcomes recorded`.

use std::path::Path;

use super::common::RecordFormat;
use serde_json::{Map, Value};

use super::common::{group_in_order, ns, order_trace, set_tool_attrs, wrap_messages};
use crate::compat::value::json_text;
use crate::compat::value::{py_str, py_truthy};
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr};

/// The root attribute the chat-based benchmark formats record their evaluation's outcome in.
pub(crate) const RECORDED_OUTCOME: &str = attr::RECORDED_OUTCOME;

/// Fields every event has; the rest of an event is its payload.
const ENVELOPE: [&str; 6] = ["seq", "ts", "agent", "event", "run_id", "trace_id"];

/// JSON-lines agent trajectories: one event per line, one run per file or per `run_id`.
pub(crate) static TRAJECTORY: RecordFormat = RecordFormat {
    name: "trajectory",
    title: "trajectory",
    expected: "events with `seq` and `event`",
    accepts,
    map: |records, path| Ok(read(records, &trajectory_id(path))),
};

/// Returns true if and only if the record is a trajectory event (`seq` and `event`).
pub(crate) fn accepts(record: &Map<String, Value>) -> bool {
    record.contains_key("seq") && record.contains_key("event")
}

/// Maps the events onto traces: one per `run_id` (or `trace_id`), else one named `default_id`.
pub(crate) fn read(records: &[&Map<String, Value>], default_id: &str) -> Vec<TraceRecord<'static>> {
    let keyed = records.iter().map(|r| {
        let id = ["run_id", "trace_id"]
            .iter()
            .find_map(|k| r.get(*k).filter(|v| py_truthy(v)))
            .map_or_else(|| default_id.to_string(), py_str);
        (id, *r)
    });
    group_in_order(keyed)
        .into_iter()
        .map(|(trace_id, events)| read_run(trace_id, &events))
        .collect()
}

fn time(event: &Map<String, Value>) -> i64 {
    // `ts` is informative in a trajectory; an unreadable one leaves the event untimed.
    event.get("ts").map_or(0, |v| ns(v).unwrap_or(0))
}

fn payload_of(event: &Map<String, Value>, skip: &[&str]) -> Value {
    let rest: Map<String, Value> = event
        .iter()
        .filter(|(k, _)| !ENVELOPE.contains(&k.as_str()) && !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(rest)
}

fn read_run(trace_id: String, events: &[&Map<String, Value>]) -> TraceRecord<'static> {
    let null = Value::Null;
    let root_id = format!("{trace_id}:root");
    let first_agent = events
        .iter()
        .find_map(|e| e.get("agent").filter(|v| py_truthy(v)))
        .map_or_else(|| "agent".to_string(), py_str);
    let times: Vec<i64> = events.iter().map(|e| time(e)).collect();
    let mut root_attrs = Map::new();
    root_attrs.insert(attr::OPERATION_NAME.into(), attr::OP_INVOKE_AGENT.into());
    root_attrs.insert(attr::AGENT_NAME.into(), Value::String(first_agent.clone()));
    let prompt = events
        .iter()
        .find_map(|e| ["task", "prompt", "input"].iter().find_map(|k| e.get(*k)))
        .unwrap_or(&null);
    if let Some(m) = wrap_messages("user", prompt) {
        root_attrs.insert(attr::INPUT_MESSAGES.into(), m);
    }
    if let Some(scenario) = events
        .iter()
        .find_map(|e| e.get("scenario").filter(|v| py_truthy(v)))
    {
        root_attrs.insert(attr::SCENARIO.into(), Value::String(py_str(scenario)));
    }
    let mut spans = Vec::with_capacity(events.len() + 1);
    for (event, &at) in events.iter().zip(&times) {
        let seq = event.get("seq").map(py_str).unwrap_or_default();
        // Zero-padded so that untimed events still order by sequence number.
        let seq_key = if seq.bytes().all(|b| b.is_ascii_digit()) {
            format!("{seq:0>12}")
        } else {
            seq
        };
        let agent = event.get("agent").cloned().unwrap_or(Value::Null);
        let mut attrs = Map::new();
        let name = match event.get("event").and_then(Value::as_str) {
            Some("action") => {
                let tool = event
                    .get("action_type")
                    .map_or_else(|| "action".to_string(), py_str);
                let args = event.get("args").or_else(|| event.get("payload")).cloned();
                let args =
                    args.unwrap_or_else(|| payload_of(event, &["action_type", "result", "error"]));
                let result = event.get("result").unwrap_or(&null);
                set_tool_attrs(
                    &mut attrs,
                    &tool,
                    &args,
                    result,
                    event.get("error").unwrap_or(&null),
                );
                format!("execute_tool {tool}")
            }
            Some("checkpoint") => {
                let id = event
                    .get("checkpoint_id")
                    .map_or_else(|| "checkpoint".to_string(), py_str);
                let args = payload_of(event, &["checkpoint_id"]);
                set_tool_attrs(&mut attrs, &id, &args, &null, &null);
                attrs.insert(attr::CHECKPOINT.into(), Value::String(id.clone()));
                format!("execute_tool {id}")
            }
            Some("handoff") => {
                let to = event
                    .get("to_agent")
                    .map_or_else(|| "agent".to_string(), py_str);
                attrs.insert(attr::OPERATION_NAME.into(), attr::OP_INVOKE_AGENT.into());
                attrs.insert(attr::AGENT_NAME.into(), Value::String(to.clone()));
                // Both ends, as a handoff span records them: without them the receiving agent would
                // seem invoked by the run's first agent, whoever handed off.
                if let Some(from) = event.get("from_agent") {
                    attrs.insert(attr::HANDOFF_FROM.into(), Value::String(py_str(from)));
                    attrs.insert(attr::HANDOFF_TO.into(), Value::String(to.clone()));
                }
                if let Some(payload) = event.get("payload") {
                    attrs.insert(
                        attr::HANDOFF_PAYLOAD.into(),
                        Value::String(json_text(payload)),
                    );
                }
                format!("invoke_agent {to}")
            }
            Some("final") => {
                let answer = ["answer", "output", "result", "summary"]
                    .iter()
                    .find_map(|k| event.get(*k))
                    .unwrap_or(&null);
                if let Some(m) = wrap_messages("assistant", answer) {
                    root_attrs.insert(attr::OUTPUT_MESSAGES.into(), m);
                }
                if let Some(outcome) = event.get("task_success") {
                    root_attrs.insert(attr::TASK_SUCCESS.into(), outcome.clone());
                }
                continue;
            }
            _ => continue,
        };
        if !agent.is_null() && !attrs.contains_key(attr::AGENT_NAME) {
            attrs.insert(attr::AGENT_NAME.into(), Value::String(py_str(&agent)));
        }
        spans.push(SpanRecord {
            span_id: format!("{trace_id}:{seq_key}").into(),
            parent_id: Some(root_id.clone().into()),
            name: name.into(),
            start_ns: at,
            end_ns: at,
            attrs: Attrs::from_map(attrs),
            ..SpanRecord::default()
        });
    }
    spans.push(SpanRecord {
        span_id: root_id.into(),
        parent_id: None,
        name: first_agent.into(),
        start_ns: times.iter().copied().filter(|&t| t != 0).min().unwrap_or(0),
        end_ns: times.iter().copied().max().unwrap_or(0),
        attrs: Attrs::from_map(root_attrs),
        ..SpanRecord::default()
    });
    order_trace(trace_id, spans)
}

/// The trace id of a single-run trajectory file: its name without its extensions.
fn trajectory_id(path: &Path) -> String {
    super::chat::name_without_extensions(path).unwrap_or_else(|| "trajectory".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn actions_checkpoints_and_final_map_onto_steps() {
        let doc = json!([
            {"seq": 1, "ts": "2026-10-01T10:00:00Z", "agent": "scanner", "event": "action", "action_type": "scan", "table": "t"},
            {"seq": 2, "ts": "2026-10-01T10:00:01Z", "agent": "scanner", "event": "handoff", "from_agent": "scanner",
             "to_agent": "reporter", "payload": {"row_count": {"value": 3, "verified": true}}},
            {"seq": 3, "ts": "2026-10-01T10:00:02Z", "agent": "reporter", "event": "checkpoint",
             "checkpoint_id": "confirm_with_user", "confirmed_by": "u"},
            {"seq": 4, "ts": "2026-10-01T10:00:03Z", "agent": "reporter", "event": "action", "action_type": "send_report"},
            {"seq": 5, "ts": "2026-10-01T10:00:04Z", "agent": "reporter", "event": "final", "task_success": true,
             "answer": "sent"}]);
        let records: Vec<&Map<String, Value>> = doc
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_object)
            .collect();
        let traces = read(&records, "run");
        assert_eq!(traces.len(), 1);
        let trace = &traces[0];
        assert_eq!(trace.trace_id, "run");
        assert_eq!(trace.agent, "scanner");
        assert_eq!(
            trace.spans[0]
                .attr(attr::TASK_SUCCESS)
                .map(|v| v.to_json().into_owned()),
            Some(json!(true))
        );
        let root = crate::table::record::root_position(&trace.spans);
        assert_eq!(crate::table::derive::answer(&trace.spans, root), "sent");
        let steps = crate::table::derive::steps(&trace.spans, true);
        let tools: Vec<&str> = steps.iter().map(|s| s.tool.as_ref()).collect();
        assert_eq!(tools, ["scan", "confirm_with_user", "send_report"]);
        assert_eq!(steps[0].arguments, json_text(&json!({"table": "t"})));
        let checkpoint = trace
            .spans
            .iter()
            .find(|s| s.attr(attr::CHECKPOINT).is_some())
            .unwrap();
        assert_eq!(
            checkpoint.attr_str(attr::CHECKPOINT),
            Some("confirm_with_user")
        );
        assert_eq!(
            trace.spans[2].attr_str(attr::OPERATION_NAME),
            Some("invoke_agent")
        );
    }
}
