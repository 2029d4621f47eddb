//! LangSmith runs as the SDK sends them: batch-ingest bodies `{"post": [runs], "patch": [run updates]}`
//! (one per document, or one per JSON line), each update merged into the run of the same `id` (later
//! fields win; an update without its run is a run of its own).
//!
//! The JS SDK's updates carry no `id` (it travels in the PATCH URL): they are merged by `dotted_order`,
//! then `trace_id` (see `merge_runs`).
//!
//! Runs are grouped into traces by `trace_id` (else their own id) and mapped as the LangSmith export
//! format maps them, with what the SDK's OpenAI wrapper records: an llm run's prompt is the last user
//! message of `inputs.messages` and its answer `outputs.choices[0].message.content`; tokens come from
//! `outputs.usage_metadata` (or `extra.metadata.usage_metadata`, `outputs.usage`, or the run's
//! `prompt_tokens`/`completion_tokens`); the finish reason from `outputs.choices[0].finish_reason`. The
//! parentless run is the agent root (an llm run too, when the trace is a single call). `tool` runs are
//! tool steps; without them, the `tool_calls` of llm runs' output messages are the steps, with results
//! from `tool` role messages of later inputs.
//!
//! Left unread: `events` (streaming tokens), `serialized`, `tags`, `attachments`, `child_runs`,
//! `session_name`, `extra.runtime`, and feedback; `dotted_order` only pairs an update with its run.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

use super::common::{
    error_status, group_in_order, ns, order_trace, payload, root_attrs, set_finish_reason,
    set_tool_attrs, set_usage, str_or, text,
};
use super::openinference_spans::{invalid, parse_documents};
use crate::compat::value::json_text;
use crate::compat::value::{py_str, py_truthy};
use crate::error::InputError;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, OwnedTraces, Traces};
use crate::ingest::json::get;
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr};

/// LangSmith SDK batch-ingest bodies.
pub(crate) struct LangsmithSdk;

impl Decoder for LangsmithSdk {
    fn name(&self) -> &'static str {
        "langsmith-sdk"
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        let Some(obj) = doc.as_object() else {
            return false;
        };
        let runs = |key: &str| get(&obj, key).and_then(|v| v.as_array().map(|a| a.iter().next()));
        let ((Some(Some(first)), _) | (None | Some(None), Some(Some(first)))) =
            (runs("post"), runs("patch"))
        else {
            return false;
        };
        first.as_object().is_some_and(|run| {
            get(&run, "id").is_some()
                && ["run_type", "trace_id", "dotted_order"]
                    .iter()
                    .any(|k| get(&run, k).is_some())
        })
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        _: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        let values = parse_documents(path, docs)?;
        let runs = merge_runs(&values).map_err(|m| invalid(path, m))?;
        let traces = read_runs(&runs).map_err(|m| invalid(path, m))?;
        if traces.is_empty() {
            return Err(invalid(path, "no LangSmith runs found".into()));
        }
        Ok(Box::new(OwnedTraces(traces)))
    }
}

/// The runs of every batch, in order of first appearance, with their updates merged in. An update
/// names its run by `id`. The JS SDK's updates carry none (the id travels in the PATCH URL), so an
/// update without one is the run of the same `dotted_order` (which is unique to a run), else the one
/// run of its `trace_id`, else, in a batch that posts one run and updates one, that run.
fn merge_runs(batches: &[Value]) -> Result<Vec<Map<String, Value>>, String> {
    let mut runs = Runs::default();
    for (b, batch) in batches.iter().enumerate() {
        let Some(batch) = batch.as_object() else {
            return Err(format!("batch {b} is not an object"));
        };
        let list = |key: &str| match batch.get(key) {
            None => Ok(&[][..]),
            Some(Value::Array(items)) => Ok(items.as_slice()),
            Some(_) => Err(format!("batch {b}: {key} is not a list")),
        };
        let (posts, patches) = (list("post")?, list("patch")?);
        // Where each run this batch posts went, for an update that names none.
        let mut posted = Vec::with_capacity(posts.len());
        for (key, items) in [("post", posts), ("patch", patches)] {
            for (i, run) in items.iter().enumerate() {
                let Some(run) = run.as_object() else {
                    return Err(format!("batch {b}: {key}[{i}] is not an object"));
                };
                let at = match run.get("id").filter(|v| py_truthy(v)).map(py_str) {
                    Some(id) => runs.by_id.get(&id).copied(),
                    None if key == "patch" => {
                        let only_run = match (posted.as_slice(), patches.len()) {
                            (&[at], 1) => Some(at),
                            _ => None,
                        };
                        let at = runs.update_target(run).or(only_run).ok_or_else(|| {
                            format!(
                                "batch {b}: patch[{i}] has no id and matches no single run by dotted_order or trace_id"
                            )
                        })?;
                        Some(at)
                    }
                    None => return Err(format!("batch {b}: {key}[{i}] has no id")),
                };
                let at = match at {
                    Some(at) => {
                        runs.update(at, run);
                        at
                    }
                    None => runs.add(run),
                };
                if key == "post" {
                    posted.push(at);
                }
            }
        }
    }
    Ok(runs.list)
}

/// The runs read so far, found by id, by `dotted_order` and by `trace_id`.
#[derive(Default)]
struct Runs {
    list: Vec<Map<String, Value>>,
    by_id: HashMap<String, usize>,
    by_order: HashMap<String, usize>,
    /// A trace id and its run, or `None` when several runs share it.
    by_trace: HashMap<String, Option<usize>>,
}

impl Runs {
    /// Adds a run; returns its index.
    fn add(&mut self, run: &Map<String, Value>) -> usize {
        let at = self.list.len();
        if let Some(id) = run.get("id").filter(|v| py_truthy(v)) {
            self.by_id.insert(py_str(id), at);
        }
        if let Some(order) = run.get("dotted_order").filter(|v| py_truthy(v)) {
            self.by_order.insert(py_str(order), at);
        }
        if let Some(trace) = run.get("trace_id").filter(|v| py_truthy(v)) {
            self.by_trace
                .entry(py_str(trace))
                .and_modify(|one| *one = None)
                .or_insert(Some(at));
        }
        self.list.push(run.clone());
        at
    }

    fn update(&mut self, at: usize, update: &Map<String, Value>) {
        let run = &mut self.list[at];
        for (k, v) in update {
            // An update's empty fields do not erase what the run was created with.
            if !v.is_null() || !run.contains_key(k) {
                run.insert(k.clone(), v.clone());
            }
        }
    }

    /// The run an update without an id belongs to, by `dotted_order`, else by a `trace_id` that
    /// names one run only.
    fn update_target(&self, update: &Map<String, Value>) -> Option<usize> {
        let key = |k: &str| update.get(k).filter(|v| py_truthy(v)).map(py_str);
        key("dotted_order")
            .and_then(|order| self.by_order.get(&order).copied())
            .or_else(|| key("trace_id").and_then(|trace| self.by_trace.get(&trace).copied()?))
    }
}

fn read_runs(runs: &[Map<String, Value>]) -> Result<Vec<TraceRecord<'static>>, String> {
    let mut spans = Vec::with_capacity(runs.len());
    for run in runs {
        let trace_id = run
            .get("trace_id")
            .filter(|v| py_truthy(v))
            .or_else(|| run.get("id"))
            .map(py_str)
            .unwrap_or_default();
        spans.push((trace_id, run));
    }
    let mut traces = Vec::new();
    for (trace_id, runs) in group_in_order(spans) {
        let has_tool_runs = runs
            .iter()
            .any(|r| r.get("run_type").and_then(Value::as_str) == Some("tool"));
        let mut spans = Vec::with_capacity(runs.len());
        for run in runs {
            spans.push(read_run(run, has_tool_runs).map_err(|e| e.to_string())?);
        }
        traces.push(order_trace(trace_id, spans));
    }
    Ok(traces)
}

fn read_run(
    run: &Map<String, Value>,
    has_tool_runs: bool,
) -> Result<SpanRecord<'static>, super::common::MapError> {
    let null = Value::Null;
    let get = |k: &str| run.get(k).unwrap_or(&null);
    let run_id = py_str(get("id"));
    let run_type = str_or(run, "run_type", "chain");
    let error = get("error");
    let parent_id = run
        .get("parent_run_id")
        .filter(|v| py_truthy(v))
        .map(py_str);
    let inputs = get("inputs");
    let outputs = get("outputs");
    let metadata = run
        .get("extra")
        .and_then(Value::as_object)
        .and_then(|e| e.get("metadata"));
    let choice = outputs
        .get("choices")
        .and_then(|c| c.get(0))
        .filter(|c| c.is_object());
    let mut attrs = Map::new();
    if parent_id.is_none() {
        let answer = choice
            .and_then(|c| c.get("message"))
            .and_then(|m| m.get("content"))
            .filter(|c| c.is_string())
            .unwrap_or(outputs);
        attrs = root_attrs(
            &str_or(run, "name", "agent"),
            inputs,
            answer,
            metadata,
            None,
        );
        super::common::set_langsmith_thread(&mut attrs, metadata);
    } else if run_type == "tool" {
        set_tool_attrs(
            &mut attrs,
            &str_or(run, "name", "tool"),
            inputs,
            outputs,
            error,
        );
    } else {
        let op = if run_type == "llm" {
            "chat"
        } else {
            run_type.as_str()
        };
        attrs.insert(attr::OPERATION_NAME.into(), Value::String(op.into()));
    }
    if run_type == "llm" {
        let input = messages(inputs.get("messages"), has_tool_runs);
        if !input.is_empty() && parent_id.is_some() {
            attrs.insert(
                attr::INPUT_MESSAGES.into(),
                Value::String(json_text(&Value::Array(input))),
            );
        }
        let output: Vec<Value> = outputs
            .get("choices")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .filter_map(|c| c.get("message").cloned())
                    .collect()
            })
            .unwrap_or_default();
        let output = messages(Some(&Value::Array(output)), has_tool_runs);
        // A parentless llm run's answer text is the same either way; its tool calls are only here.
        if !output.is_empty() {
            attrs.insert(
                attr::OUTPUT_MESSAGES.into(),
                Value::String(json_text(&Value::Array(output))),
            );
        }
        set_finish_reason(&mut attrs, choice.and_then(|c| c.get("finish_reason")));
    }
    let usage = outputs
        .get("usage_metadata")
        .or_else(|| metadata.and_then(|m| m.get("usage_metadata")))
        .filter(|u| u.is_object());
    let openai_usage = outputs.get("usage").filter(|u| u.is_object());
    let tokens = |keys: [&str; 3]| {
        usage
            .and_then(|u| u.get(keys[0]))
            .or_else(|| openai_usage.and_then(|u| u.get(keys[1])))
            .or_else(|| run.get(keys[2]))
    };
    set_usage(
        &mut attrs,
        tokens(["input_tokens", "prompt_tokens", "prompt_tokens"]),
        tokens(["output_tokens", "completion_tokens", "completion_tokens"]),
    );
    let (status_code, status_message) = error_status(error);
    Ok(SpanRecord {
        span_id: run_id.into(),
        parent_id: parent_id.map(Into::into),
        name: str_or(run, "name", &run_type).into(),
        start_ns: ns(get("start_time"))?,
        end_ns: ns(get("end_time"))?,
        attrs: Attrs::from_map(attrs),
        status_code,
        status_message: status_message.into(),
    })
}

/// OpenAI chat messages as GenAI messages: text content as text parts, `tool_calls` as tool-call parts,
/// `tool` messages as tool-call responses. When the trace has tool runs, only text is kept (the runs are
/// the steps).
fn messages(list: Option<&Value>, text_only: bool) -> Vec<Value> {
    let Some(items) = list.and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in items.iter().filter_map(Value::as_object) {
        let role = m
            .get("role")
            .map_or_else(|| "assistant".to_string(), py_str);
        let content = m.get("content").unwrap_or(&Value::Null);
        let mut parts = Vec::new();
        let call_id = m.get("tool_call_id").filter(|v| py_truthy(v));
        match (role.as_str(), call_id) {
            ("tool", Some(id)) if !text_only => parts.push(serde_json::json!({
                "type": "tool_call_response", "id": py_str(id), "result": payload(content),
            })),
            _ => {
                let body = text(content, &role);
                if !body.is_empty() {
                    parts.push(serde_json::json!({"type": "text", "content": body}));
                }
            }
        }
        if !text_only {
            for call in m
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let function = call.get("function");
                parts.push(serde_json::json!({
                    "type": "tool_call",
                    "id": call.get("id").map(py_str).unwrap_or_default(),
                    "name": function.and_then(|f| f.get("name")).map_or_else(|| "unknown".into(), py_str),
                    "arguments": function.and_then(|f| f.get("arguments")).cloned().unwrap_or(Value::Null),
                }));
            }
        }
        out.push(serde_json::json!({"role": role, "parts": parts}));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merged(batches: &[Value]) -> Result<Vec<Value>, String> {
        merge_runs(batches).map(|runs| runs.into_iter().map(Value::Object).collect())
    }

    #[test]
    fn an_update_without_an_id_joins_the_run_of_its_dotted_order() {
        // Two runs of one trace, completed out of order, as the JS SDK patches them.
        let batch = json!({
            "post": [
                {"id": "r", "trace_id": "r", "dotted_order": "1Zr", "run_type": "chain"},
                {"id": "c", "trace_id": "r", "dotted_order": "1Zr.2Zc", "run_type": "tool"},
            ],
            "patch": [
                {"trace_id": "r", "dotted_order": "1Zr.2Zc", "outputs": {"n": 2}},
                {"trace_id": "r", "dotted_order": "1Zr", "outputs": {"n": 1}},
            ],
        });
        let runs = merged(&[batch]).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(
            (&runs[0]["id"], &runs[0]["outputs"]),
            (&json!("r"), &json!({"n": 1}))
        );
        assert_eq!(
            (&runs[1]["id"], &runs[1]["outputs"]),
            (&json!("c"), &json!({"n": 2}))
        );
    }

    #[test]
    fn without_a_dotted_order_the_trace_id_then_the_only_run_of_the_batch_decide() {
        let post = json!({"post": [{"id": "a", "trace_id": "t", "run_type": "llm"}]});
        let by_trace = json!({"patch": [{"trace_id": "t", "outputs": {"x": 1}}]});
        let runs = merged(&[post, by_trace]).unwrap();
        assert_eq!((runs.len(), &runs[0]["outputs"]), (1, &json!({"x": 1})));

        let alone = json!({
            "post": [{"id": "a", "run_type": "llm"}],
            "patch": [{"outputs": {"x": 2}}],
        });
        let runs = merged(&[alone]).unwrap();
        assert_eq!((runs.len(), &runs[0]["outputs"]), (1, &json!({"x": 2})));
    }

    #[test]
    fn an_update_naming_no_single_run_is_refused() {
        // Two runs share the trace id, and the batch posts two runs: nothing says which one is meant.
        let batch = json!({
            "post": [
                {"id": "a", "trace_id": "t", "run_type": "chain"},
                {"id": "b", "trace_id": "t", "run_type": "llm"},
            ],
            "patch": [{"trace_id": "t", "outputs": {}}],
        });
        assert_eq!(
            merged(&[batch]).unwrap_err(),
            "batch 0: patch[0] has no id and matches no single run by dotted_order or trace_id"
        );
        // A run posted without an id is still refused.
        let batch = json!({"post": [{"run_type": "llm"}]});
        assert_eq!(merged(&[batch]).unwrap_err(), "batch 0: post[0] has no id");
    }
}
