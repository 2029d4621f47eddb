//! What the benchmark and agent-log formats (`tau`, `swe_agent`, `multi_agent`) share: a decoder over
//! whole JSON documents, and OpenAI-style chat messages read as tool steps.
//!
//! Those formats record a run as a message list rather than as spans. A tool call is an assistant
//! message's `tool_calls` entry (`{"id", "function": {"name", "arguments"}}`, or tau2's flat
//! `{"id", "name", "arguments"}`); its result is the `tool` message that names the call's id
//! (`tool_call_id`, or tau2's `id`). Each call becomes an `execute_tool` span, so the table sees it as a
//! tool step whichever exporter wrote it.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use rayon::prelude::*;
use serde_json::{Map, Value};
use simd_json::tape::Value as TapeValue;

use super::common::{ns, order_trace, payload, set_tool_attrs, wrap_messages};
use crate::compat::value::{py_str, py_truthy};
use crate::error::InputError;
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, OwnedTraces, Traces};
use crate::ingest::json::{to_value, with_tape};
use crate::table::record::{Actor, Attrs, SpanRecord, TraceRecord, attr};

/// A format read from whole documents (one per file, or one per JSON line).
pub(crate) struct DocumentFormat {
    /// The `--format` name.
    pub name: &'static str,
    /// Returns true if and only if a file's first document is of this format.
    pub detect: fn(TapeValue<'_, '_>) -> bool,
    /// The traces of a file's documents; an error says what the format expected (`expected ...`).
    pub map: fn(&[Value], &Path) -> Result<Vec<TraceRecord<'static>>, String>,
}

impl Decoder for DocumentFormat {
    fn name(&self) -> &'static str {
        self.name
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        (self.detect)(doc)
    }

    /// A run per document (benchmark results, agent logs) is named by its task, trial or file.
    fn named_ids(&self) -> bool {
        true
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        _: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        let values: Vec<Value> = docs
            .par_iter()
            .map(|doc| with_tape(doc.bytes, to_value).map_err(|f| doc.json_error(path, f)))
            .collect::<Result<_, _>>()?;
        let name = self.name;
        let invalid = |message: String| InputError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let traces = (self.map)(&values, path).map_err(|e| {
            // Worded as the record formats word it: what was expected, and what the file holds.
            let found = values
                .first()
                .map_or_else(|| "nothing".into(), crate::ingest::detect::found_keys);
            invalid(format!(
                "not a valid {name} export: the records do not have its fields ({e}; found {found})"
            ))
        })?;
        if traces.is_empty() {
            return Err(invalid(format!("no {name} traces found")));
        }
        Ok(Box::new(OwnedTraces(traces)))
    }
}

/// The object under `key` of a tape object.
pub(crate) fn tape_get<'t, 'i>(doc: TapeValue<'t, 'i>, key: &str) -> Option<TapeValue<'t, 'i>> {
    crate::ingest::json::get(&doc.as_object()?, key)
}

/// Returns true if and only if the tape value is an object holding every one of `keys`.
pub(crate) fn tape_has(doc: TapeValue<'_, '_>, keys: &[&str]) -> bool {
    doc.as_object().is_some_and(|obj| {
        keys.iter()
            .all(|k| crate::ingest::json::get(&obj, k).is_some())
    })
}

/// The first item of a tape array.
pub(crate) fn tape_first<'t, 'i>(doc: TapeValue<'t, 'i>) -> Option<TapeValue<'t, 'i>> {
    doc.as_array()?.iter().next()
}

/// The text of a message's `content`: a string, or the `text` parts of a content list. Reasoning parts
/// (`reasoning`, as the GenAI conventions and the Vercel AI SDK type them, and Anthropic's `thinking`)
/// are the model's working, not what it said: they are left out, so an answer is never read from them.
pub(crate) fn content_text(message: &Map<String, Value>) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) if is_reasoning(o) => None,
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Null) | None => String::new(),
        Some(other) => py_str(other),
    }
}

/// Returns true if and only if a content part is the model's reasoning.
fn is_reasoning(part: &Map<String, Value>) -> bool {
    matches!(
        part.get("type").and_then(Value::as_str),
        Some("reasoning" | "thinking" | "redacted_thinking")
    )
}

/// The role of a message (`""` when it has none).
pub(crate) fn role(message: &Map<String, Value>) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// A tool call of an assistant message: id, tool name, arguments.
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    /// Who the call says made it (tau2's `requestor`); `None` when it does not say.
    pub requestor: Option<Actor>,
}

/// The `tool_calls` of a message, in both the OpenAI (`function.name`) and tau2 (`name`) shapes.
pub(crate) fn calls(message: &Map<String, Value>) -> Vec<Call> {
    let Some(Value::Array(items)) = message.get("tool_calls") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_object)
        .map(|call| {
            let function = call.get("function").and_then(Value::as_object);
            let field = |key: &str| {
                function
                    .and_then(|f| f.get(key))
                    .or_else(|| call.get(key))
                    .filter(|v| !v.is_null())
            };
            Call {
                id: call
                    .get("id")
                    .filter(|v| py_truthy(v))
                    .map(py_str)
                    .unwrap_or_default(),
                name: field("name").map_or_else(|| "unknown".to_string(), py_str),
                arguments: field("arguments").cloned().unwrap_or(Value::Null),
                requestor: call
                    .get("requestor")
                    .and_then(Value::as_str)
                    .map(Actor::read),
            }
        })
        .collect()
}

/// A tool message's result: content and whether the tool reported an error.
pub(crate) struct Response {
    pub content: Value,
    pub error: Value,
    /// When the result was recorded (0 when unknown).
    pub at: i64,
}

/// The results of a `tool` message, each with the call id it answers, in the order recorded. AG2 nests
/// several results in one message's `tool_responses`.
fn message_responses(message: &Map<String, Value>) -> Vec<(String, Response)> {
    let at = message_time(message);
    let nested: Vec<&Map<String, Value>> = match message.get("tool_responses") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_object).collect(),
        _ => vec![message],
    };
    let mut out = Vec::new();
    for item in nested {
        let Some(id) = ["tool_call_id", "id"]
            .iter()
            .find_map(|k| item.get(*k).filter(|v| py_truthy(v)))
        else {
            continue;
        };
        let content = item.get("content").cloned().unwrap_or(Value::Null);
        // tau2 marks a failed call with `"error": true`; then the content is the error's text.
        let (content, error) = match item.get("error") {
            Some(Value::Bool(true)) => {
                let text = payload(&content);
                let text = text.strip_prefix("Error: ").unwrap_or(&text).to_string();
                let text = if text.is_empty() {
                    "tool error".to_string()
                } else {
                    text
                };
                (Value::Null, Value::String(text))
            }
            Some(Value::Bool(false)) | None => (content, Value::Null),
            Some(other) => (content, other.clone()),
        };
        out.push((py_str(id), Response { content, error, at }));
    }
    out
}

/// The tool calls of every message of a list, each with its result: `out[i]` holds the calls of
/// `messages[i]`, in order.
///
/// Call ids are not unique in every recording (tau-bench reuses them within a conversation), so a
/// result answers the earliest call of its id that is still unanswered, in message order. A result
/// recorded before any call of its id waits for the next such call, and a call no result answers has
/// none.
pub(crate) fn paired_calls(messages: &[&Map<String, Value>]) -> Vec<Vec<(Call, Option<Response>)>> {
    let mut out: Vec<Vec<(Call, Option<Response>)>> = Vec::with_capacity(messages.len());
    let mut unanswered: HashMap<String, VecDeque<(usize, usize)>> = HashMap::new();
    let mut early: HashMap<String, VecDeque<Response>> = HashMap::new();
    for (i, message) in messages.iter().enumerate() {
        let mut paired = Vec::new();
        for (j, call) in calls(message).into_iter().enumerate() {
            let mut response = None;
            if !call.id.is_empty() {
                response = early.get_mut(&call.id).and_then(VecDeque::pop_front);
                if response.is_none() {
                    unanswered
                        .entry(call.id.clone())
                        .or_default()
                        .push_back((i, j));
                }
            }
            paired.push((call, response));
        }
        out.push(paired);
        if role(message) != "tool" {
            continue;
        }
        for (id, response) in message_responses(message) {
            match unanswered.get_mut(&id).and_then(VecDeque::pop_front) {
                Some((ci, cj)) => out[ci][cj].1 = Some(response),
                None => early.entry(id).or_default().push_back(response),
            }
        }
    }
    out
}

/// When a message was recorded: its `timestamp` (tau2's ISO text) or `extra.timestamp` (mini-swe-agent's
/// epoch seconds); 0 when it has none or it cannot be read.
pub(crate) fn message_time(message: &Map<String, Value>) -> i64 {
    message
        .get("timestamp")
        .or_else(|| message.get("extra").and_then(|e| e.get("timestamp")))
        .map_or(0, |v| ns(v).unwrap_or(0))
}

/// Each message's time, an untimed message taking the time of the last timed one before it, so that
/// spans keep their recorded order when sorted by start.
pub(crate) fn message_times(messages: &[&Map<String, Value>]) -> Vec<i64> {
    let mut last = 0;
    messages
        .iter()
        .map(|m| {
            let at = message_time(m);
            if at != 0 {
                last = at;
            }
            last
        })
        .collect()
}

/// A span of a synthesised trace: untimed spans keep their recorded order through `key`, a position
/// zero-padded so that ids sort as positions do.
pub(crate) fn child_span(
    trace_id: &str,
    key: usize,
    suffix: &str,
    name: String,
    attrs: Map<String, Value>,
) -> SpanRecord<'static> {
    SpanRecord {
        span_id: format!("{trace_id}:{key:06}{suffix}").into(),
        parent_id: Some(format!("{trace_id}:root").into()),
        name: name.into(),
        attrs: Attrs::from_map(attrs),
        ..SpanRecord::default()
    }
}

/// One tool call and its result, as a format recorded them.
#[derive(Clone, Copy)]
pub(crate) struct ToolStep<'v> {
    /// The agent that made the call (`None`: the root's).
    pub agent: Option<&'v str>,
    pub name: &'v str,
    pub arguments: &'v Value,
    pub result: &'v Value,
    /// Truthy when the tool failed (the result then reads `Error: <error> <result>`).
    pub error: &'v Value,
    /// `""` when the format gives the call no id.
    pub call_id: &'v str,
}

/// The `execute_tool` span of a call and its result.
pub(crate) fn tool_span(
    trace_id: &str,
    key: usize,
    suffix: &str,
    step: ToolStep<'_>,
) -> SpanRecord<'static> {
    let ToolStep {
        agent,
        name,
        arguments,
        result,
        error,
        call_id,
    } = step;
    let mut attrs = Map::new();
    set_tool_attrs(&mut attrs, name, arguments, result, error);
    if !call_id.is_empty() {
        attrs.insert(attr::TOOL_CALL_ID.into(), call_id.into());
    }
    if let Some(agent) = agent.filter(|a| !a.is_empty()) {
        attrs.insert(attr::AGENT_NAME.into(), agent.into());
    }
    let mut span = child_span(trace_id, key, suffix, format!("execute_tool {name}"), attrs);
    if py_truthy(error) {
        span.status_code = 2;
        span.status_message = py_str(error).into();
    }
    span
}

/// Who made a call: the call's own `requestor` (tau2), else the role of the message holding it (a tool
/// call in a `user` message is the simulated user's own).
fn call_actor(call: &Call, message: &Map<String, Value>) -> Actor {
    call.requestor.unwrap_or_else(|| match role(message) {
        "" | "assistant" | "tool" => Actor::Agent,
        other => Actor::read(other),
    })
}

/// The tool spans of a message list: every call of every message, paired with its result by id
/// ([`paired_calls`]), each marked with its actor (`faultgate.actor`) when that is not the agent.
/// `agent` names the agent a message's calls belong to (`None` leaves them the root's).
pub(crate) fn tool_spans(
    trace_id: &str,
    messages: &[&Map<String, Value>],
    agent: impl Fn(&Map<String, Value>) -> Option<String>,
) -> Vec<SpanRecord<'static>> {
    let paired = paired_calls(messages);
    let times = message_times(messages);
    let null = Value::Null;
    let mut spans = Vec::new();
    for (i, (message, calls)) in messages.iter().zip(paired).enumerate() {
        let who = agent(message);
        for (j, (call, response)) in calls.into_iter().enumerate() {
            let response = response.as_ref();
            let mut span = tool_span(
                trace_id,
                i,
                &format!(".{j:03}"),
                ToolStep {
                    agent: who.as_deref(),
                    name: &call.name,
                    arguments: &call.arguments,
                    result: response.map_or(&null, |r| &r.content),
                    error: response.map_or(&null, |r| &r.error),
                    call_id: &call.id,
                },
            );
            let actor = call_actor(&call, message);
            if actor != Actor::Agent {
                span.attrs.insert(attr::ACTOR.into(), actor.as_str());
            }
            span.start_ns = times[i];
            span.end_ns = response.map_or(0, |r| r.at).max(times[i]);
            spans.push(span);
        }
    }
    spans
}

/// The root span of a synthesised trace: `invoke_agent` of `agent`, with the prompt and answer as
/// messages and `extra` attributes (scenario, termination, outcome...).
pub(crate) fn root_span(
    trace_id: &str,
    agent: &str,
    prompt: &str,
    answer: &str,
    extra: Map<String, Value>,
) -> SpanRecord<'static> {
    let mut attrs = Map::new();
    attrs.insert(attr::OPERATION_NAME.into(), attr::OP_INVOKE_AGENT.into());
    attrs.insert(attr::AGENT_NAME.into(), agent.into());
    if let Some(m) = wrap_messages("user", &Value::String(prompt.into())) {
        attrs.insert(attr::INPUT_MESSAGES.into(), m);
    }
    if let Some(m) = wrap_messages("assistant", &Value::String(answer.into())) {
        attrs.insert(attr::OUTPUT_MESSAGES.into(), m);
    }
    attrs.extend(extra);
    SpanRecord {
        span_id: format!("{trace_id}:root").into(),
        parent_id: None,
        name: agent.to_string().into(),
        attrs: Attrs::from_map(attrs),
        ..SpanRecord::default()
    }
}

/// One trace from its root and other spans, ordered the way every vendor format orders its spans.
pub(crate) fn trace(
    trace_id: String,
    root: SpanRecord<'static>,
    mut spans: Vec<SpanRecord<'static>>,
) -> TraceRecord<'static> {
    spans.push(root);
    order_trace(trace_id, spans)
}

/// The extensions a trace file's name may end in, stripped from it to make a trace id. Only these go:
/// a dot inside the name (`gpt-4.1_airline`, `run.2026-10-01`) belongs to the name.
const TRACE_FILE_EXTENSIONS: [&str; 14] = [
    "json", "jsonl", "ndjson", "traj", "txt", "log", "pb", "gz", "gzip", "zst", "zstd", "bz2",
    "xz", "lz4",
];

/// The file's name without its known extensions (`.traj.json.zst`, `.jsonl.gz`); `None` when nothing
/// is left of it.
pub(crate) fn name_without_extensions(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let mut stem = name.as_str();
    while let Some((head, ext)) = stem.rsplit_once('.') {
        let known = TRACE_FILE_EXTENSIONS
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext));
        if !known || head.is_empty() {
            break;
        }
        stem = head;
    }
    (!stem.is_empty()).then(|| stem.to_string())
}

/// The file's name without its extensions: the id of a file that holds one run.
pub(crate) fn file_stem(path: &Path) -> String {
    name_without_extensions(path).unwrap_or_else(|| "run".to_string())
}

/// The object items of an array value.
pub(crate) fn objects(v: Option<&Value>) -> Vec<&Map<String, Value>> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn maps(v: &Value) -> Vec<&Map<String, Value>> {
        objects(Some(v))
    }

    #[test]
    fn a_file_stem_drops_only_known_extensions() {
        let stem = |name: &str| file_stem(Path::new(name));
        assert_eq!(
            stem("runs/gpt-4.1_airline_default.json"),
            "gpt-4.1_airline_default"
        );
        assert_eq!(
            stem("astropy__astropy-12907.traj.json.zst"),
            "astropy__astropy-12907"
        );
        assert_eq!(stem("calls.JSONL.gz"), "calls");
        assert_eq!(stem("run.2026-10-01"), "run.2026-10-01");
        assert_eq!(stem(".json"), ".json");
        assert_eq!(stem(""), "run");
    }

    #[test]
    fn openai_and_tau2_calls_pair_with_their_results_by_id() {
        let messages = json!([
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_user", "arguments": "{\"id\": \"u\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "get_user", "content": "{\"name\": \"Mia\"}"},
            {"role": "assistant", "tool_calls": [{"id": "c2", "name": "cancel", "arguments": {"r": "X1"}, "requestor": "assistant"}]},
            {"role": "tool", "id": "c2", "content": "Error: not found", "error": true},
            {"role": "assistant", "tool_calls": [{"id": "c3", "name": "orphan", "arguments": {}}]}
        ]);
        let spans = tool_spans("t", &maps(&messages), |_| None);
        type Read<'s> = (Option<&'s str>, Option<&'s str>, Option<&'s str>, i64);
        let read: Vec<Read<'_>> = spans
            .iter()
            .map(|s| {
                (
                    s.attr_str(attr::TOOL_NAME),
                    s.attr_str(attr::TOOL_CALL_ARGUMENTS),
                    s.attr_str(attr::TOOL_CALL_RESULT),
                    s.status_code,
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                (
                    Some("get_user"),
                    Some("{\"id\": \"u\"}"),
                    Some("{\"name\": \"Mia\"}"),
                    0
                ),
                (
                    Some("cancel"),
                    Some("{\"r\": \"X1\"}"),
                    Some("Error: not found"),
                    2
                ),
                (Some("orphan"), Some("{}"), Some(""), 0),
            ]
        );
        assert!(spans[0].span_id < spans[1].span_id && spans[1].span_id < spans[2].span_id);
    }

    #[test]
    fn a_reused_call_id_pairs_each_result_with_the_earliest_unanswered_call() {
        // tau-bench reuses call ids within a conversation: each call's own result must be its result.
        let messages = json!([
            {"role": "assistant", "tool_calls": [
                {"id": "call_1", "function": {"name": "search_direct_flight", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "[{\"flight_number\": \"HAT030\"}]"},
            {"role": "assistant", "tool_calls": [
                {"id": "call_1", "function": {"name": "update_reservation_flights", "arguments": "{}"}},
                {"id": "call_2", "function": {"name": "think", "arguments": "{}"}},
                {"id": "call_2", "function": {"name": "book_reservation", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Error: flight HAT030 not available"},
            {"role": "tool", "tool_call_id": "call_2", "content": "noted"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: payment declined"},
            {"role": "assistant", "tool_calls": [
                {"id": "call_1", "function": {"name": "orphan", "arguments": "{}"}}]}
        ]);
        let spans = tool_spans("t", &maps(&messages), |_| None);
        let read: Vec<(Option<&str>, Option<&str>)> = spans
            .iter()
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
                (
                    Some("search_direct_flight"),
                    Some("[{\"flight_number\": \"HAT030\"}]")
                ),
                (
                    Some("update_reservation_flights"),
                    Some("Error: flight HAT030 not available")
                ),
                (Some("think"), Some("noted")),
                (Some("book_reservation"), Some("Error: payment declined")),
                (Some("orphan"), Some("")),
            ]
        );
    }

    #[test]
    fn content_lists_read_as_their_text_parts() {
        let m = json!({"role": "user", "content": [{"type": "text", "text": "a"}, "b", {"type": "image"}]});
        assert_eq!(content_text(m.as_object().unwrap()), "a\nb");
    }

    #[test]
    fn reasoning_parts_are_not_read_as_text() {
        let m = json!({"role": "assistant", "content": [
            {"type": "reasoning", "text": "I don't know the capital, maybe Lyon?"},
            {"type": "thinking", "thinking": "hmm", "text": "I cannot tell"},
            {"type": "text", "text": "Paris."}
        ]});
        assert_eq!(content_text(m.as_object().unwrap()), "Paris.");
    }
}
