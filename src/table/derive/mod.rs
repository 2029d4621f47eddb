//! What a trace says, derived from its spans: prompt, answer, termination, scenario key, tool steps,
//! usage, latency and cost (the GenAI conventions as faultgate 0.4.1 reads them).
//!
//! Everything here reads borrowed [`SpanRecord`]s and returns borrowed text where the span holds it
//! verbatim; nested JSON (messages) is parsed only when the text asked for can be in it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use serde_json::value::RawValue;

use super::lazy;
use super::record::{Actor, AttrValue, Attrs, SpanRecord, StepKind, attr, is_tool_span};
use crate::compat::value::json_text;
use crate::compat::value::{py_str, py_strip, py_truthy};

/// What shows that a trace used tools, for a trace from which no tool step was read (a release gate must
/// not pass what it did not read): a span typed or named like a tool, a finish reason asking for tools,
/// tool calls or tool results in a span's messages. `None` when nothing does. Only called for traces
/// without steps, so traces whose tools are read pay nothing.
pub(crate) fn tool_evidence(spans: &[SpanRecord<'_>]) -> Option<String> {
    const MESSAGE_SIGNS: [&str; 7] = [
        "\"tool_calls\"",
        "\"tool_call\"",
        "\"tool_call_response\"",
        "\"function_call\"",
        "\"tool_use\"",
        "\"tool_result\"",
        "\"role\": \"tool\"",
    ];
    for span in spans {
        let name = &span.name;
        if is_tool_span(span) {
            return Some(format!("span '{name}' is a tool execution"));
        }
        if let Some(kind) = span.attr(attr::OPENINFERENCE_KIND)
            && kind.py_str().eq_ignore_ascii_case("tool")
        {
            return Some(format!("span '{name}' is an OpenInference TOOL span"));
        }
        for key in [
            attr::TOOL_NAME,
            attr::LEGACY_TOOL_NAME,
            attr::TOOL_CALL_ARGUMENTS,
        ] {
            if span.attr(key).is_some_and(AttrValue::truthy) {
                return Some(format!("span '{name}' carries {key}"));
            }
        }
        // A run's span is named after its workflow or agent (`invoke_workflow support_tools`), and a
        // plan's after its agent, not a tool.
        let operation = span.attr_str(attr::OPERATION_NAME);
        if tool_like_name(name)
            && !crate::table::record::is_root_operation(operation)
            && operation != Some(attr::OP_PLAN)
        {
            return Some(format!("span '{name}' is named like a tool"));
        }
        let reasons = match span.attr(attr::FINISH_REASONS) {
            Some(reasons) => Some(reasons.to_json().to_string()),
            None => {
                let read = message_finish_reasons(span);
                (!read.is_empty()).then(|| serde_json::json!(read).to_string())
            }
        };
        if let Some(text) = reasons {
            // `tool-calls` is the Vercel AI SDK's spelling, `tool_call` the conventions' own.
            for reason in [
                "tool_calls",
                "tool-calls",
                "tool_use",
                "function_call",
                "tool_call",
            ] {
                if text.contains(reason) {
                    return Some(format!("span '{name}' finished with {reason}"));
                }
            }
        }
        // A later turn of a conversation re-sends the earlier turns, their tool calls and results
        // included, and those were the earlier turns' traces' steps, not this one's: only what follows
        // the last user message is this turn's. Instructions kept apart lead the input, so they are
        // searched (as the system message they would be) only when no user message cuts the history.
        let input = span.attr(attr::INPUT_MESSAGES).map(messages_text);
        let input = match input.as_deref().and_then(this_turn) {
            Some(turn) => Some(Cow::Owned(turn)),
            None => match (system_message(span).as_ref(), input) {
                (Some(system), Some(input)) => {
                    Some(Cow::Owned(format!("{}\n{input}", messages_text(system))))
                }
                (Some(system), None) => Some(Cow::Owned(messages_text(system).into_owned())),
                (None, input) => input,
            },
        };
        let output = span.attr(attr::OUTPUT_MESSAGES).map(messages_text);
        for text in [input, output].into_iter().flatten() {
            // Spacing differs between writers: `"role":"tool"` is read as `"role": "tool"`.
            let spaced;
            let text = if text.contains("\":\"") {
                spaced = text.replace("\":\"", "\": \"");
                spaced.as_str()
            } else {
                text.as_ref()
            };
            if let Some(sign) = MESSAGE_SIGNS.iter().find(|s| text.contains(*s)) {
                return Some(format!("the messages of span '{name}' hold {sign}"));
            }
        }
    }
    None
}

/// The messages after the last `user` message of a JSON message list, as JSON text; `None` when the
/// text is not such a list or has no user message.
fn this_turn(messages: &str) -> Option<String> {
    let Ok(Value::Array(list)) = serde_json::from_str::<Value>(messages) else {
        return None;
    };
    let last_user = list
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    Some(json_text(&Value::Array(list[last_user + 1..].to_vec())))
}

/// A messages attribute as the text its message signs are looked for in.
fn messages_text<'v>(value: &'v AttrValue<'_>) -> Cow<'v, str> {
    match value.as_str() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(crate::compat::value::json_text(&value.to_json())),
    }
}

/// A span's `gen_ai.system_instructions` as the message list of one `system` message whose parts they
/// are. The conventions record instructions given apart from the chat history there, and a trace must
/// not change with where its instructions live: wherever the input messages are read, these are read
/// too, as the system message they would otherwise be. (No prompt is read from a system message, so
/// neither the prompt nor the scenario key changes.) Instructions that are text, not a JSON list, are
/// one text part.
fn system_message<'a>(span: &SpanRecord<'_>) -> Option<AttrValue<'a>> {
    let value = span.attr(attr::SYSTEM_INSTRUCTIONS)?;
    let parts = match value {
        AttrValue::Json(v) if !v.is_string() => v.as_ref().clone(),
        other => {
            let text = other.as_str()?;
            match serde_json::from_str::<Value>(text) {
                Ok(list @ Value::Array(_)) => list,
                _ => serde_json::json!([{"type": "text", "content": text}]),
            }
        }
    };
    let parts = match parts {
        Value::Array(_) => parts,
        Value::Null => return None,
        part => Value::Array(vec![part]),
    };
    Some(AttrValue::json(
        serde_json::json!([{"role": "system", "parts": parts}]),
    ))
}

/// A span name that reads like a tool call (`search_tool`, `execute_tool …`, `call_weather`,
/// `function: lookup`), as agent frameworks name the spans of their tool executions.
pub(crate) fn tool_like_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    let calls_model = ["llm", "model", "chat", "agent"]
        .iter()
        .any(|w| lower.contains(w));
    lower.contains("tool")
        || lower.contains("function")
        || ((lower.starts_with("call_") || lower.starts_with("call ")) && !calls_model)
        || lower.starts_with("execute_")
}

/// One tool call, as the checks see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step<'s> {
    pub tool: Cow<'s, str>,
    pub arguments: Cow<'s, str>,
    pub result: Cow<'s, str>,
    /// Position (within the trace) of the span that ran the tool, or of the chat span that requested it.
    pub span: usize,
    /// Who made the call: the `faultgate.actor` of that span, else the agent.
    pub actor: Actor,
    /// What the step did: a tool call, a retrieval or a memory operation.
    pub kind: StepKind,
}

/// The actor a span names with `faultgate.actor`; the agent when it names none.
fn span_actor(span: &SpanRecord<'_>) -> Actor {
    span.attr(attr::ACTOR)
        .map_or(Actor::Agent, |v| Actor::read(&v.py_str()))
}

/// The scenario key: `faultgate.scenario`, else `gen_ai.agent.id`, else a hash of the prompt.
pub(crate) fn scenario_key(root: Option<&SpanRecord<'_>>, prompt: &str) -> String {
    if let Some(root) = root {
        for key in [attr::SCENARIO, attr::AGENT_ID] {
            if let Some(v) = root.attr(key).filter(|v| v.truthy()) {
                return v.py_str().into_owned();
            }
        }
    }
    crate::digest::prompt_key(prompt)
}

/// The prompt: the root's user messages (or `gen_ai.prompt`), else the first span's that has one.
pub(crate) fn prompt<'s>(spans: &'s [SpanRecord<'_>], root: Option<usize>) -> Cow<'s, str> {
    find_text(
        spans,
        root,
        attr::INPUT_MESSAGES,
        "user",
        attr::PROMPT,
        false,
    )
}

/// The final answer: the root's assistant messages (or `gen_ai.completion`), else the last span's.
pub(crate) fn answer<'s>(spans: &'s [SpanRecord<'_>], root: Option<usize>) -> Cow<'s, str> {
    find_text(
        spans,
        root,
        attr::OUTPUT_MESSAGES,
        "assistant",
        attr::COMPLETION,
        true,
    )
}

/// What the trace's tool definitions (`gen_ai.tool.definitions` on any span, each a list of
/// definitions or its JSON text) say, read in one pass:
///
/// - the names of the tools offered, sorted and unique, as a compact JSON list; `None` when no span
///   carries definitions. A definition names its tool by `name`, or by `function.name` as OpenAI
///   requests do; one without a name is skipped.
/// - the names of those the MCP annotation `readOnlyHint: true` marks as changing nothing (in
///   `annotations`, or in `function.annotations`), in the same form; `None` when none is so marked.
pub(crate) fn tool_definitions(spans: &[SpanRecord<'_>]) -> (Option<String>, Option<String>) {
    let mut names = std::collections::BTreeSet::new();
    let mut read_only = std::collections::BTreeSet::new();
    let seen = for_each_definition(spans, |name, definition| {
        names.insert(name.to_string());
        let hint = |d: &Value| {
            d.get("annotations")
                .and_then(|a| a.get("readOnlyHint"))
                .and_then(Value::as_bool)
        };
        if hint(definition)
            .or_else(|| definition.get("function").and_then(hint))
            .unwrap_or(false)
        {
            read_only.insert(name.to_string());
        }
    });
    let list =
        |set: &std::collections::BTreeSet<String>| serde_json::to_string(set).unwrap_or_default();
    (
        seen.then(|| list(&names)),
        (!read_only.is_empty()).then(|| list(&read_only)),
    )
}

/// Calls `f` with each named tool definition of the trace's spans, with its name; returns true if and
/// only if some span carries definitions.
fn for_each_definition(spans: &[SpanRecord<'_>], mut f: impl FnMut(&str, &Value)) -> bool {
    let mut seen = false;
    for value in spans.iter().filter_map(|s| s.attr(attr::TOOL_DEFINITIONS)) {
        seen = true;
        let parsed;
        let list = match value {
            AttrValue::Json(v) if !v.is_string() => v.as_ref(),
            other => {
                parsed = other
                    .as_str()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok());
                match &parsed {
                    Some(v) => v,
                    None => continue,
                }
            }
        };
        for definition in list.as_array().into_iter().flatten() {
            let name = definition
                .get("name")
                .or_else(|| definition.get("function").and_then(|f| f.get("name")))
                .and_then(Value::as_str);
            if let Some(name) = name {
                f(name, definition);
            }
        }
    }
    seen
}

/// `str()` of the root's `gen_ai.agent.version`, else of the last one in trace order (as the agent's
/// name falls back to the last one seen), else of the resource's `service.version`; `None` when none
/// is non-empty.
///
/// The resource comes last because the GenAI conventions (semantic-conventions-genai, 2026) dropped
/// `gen_ai.agent.version` from internal agent spans: an in-process agent is versioned by the service
/// it runs in, while a span that names its agent's version names it more precisely.
pub(crate) fn agent_version<'s>(
    spans: &'s [SpanRecord<'_>],
    root: Option<usize>,
    resource: &'s Attrs<'_>,
) -> Option<Cow<'s, str>> {
    let version = |span: &'s SpanRecord<'_>| {
        span.attr(attr::AGENT_VERSION)
            .map(AttrValue::py_str)
            .filter(|v| !v.is_empty())
    };
    root.and_then(|r| version(&spans[r]))
        .or_else(|| spans.iter().rev().find_map(version))
        .or_else(|| {
            resource
                .get(attr::SERVICE_VERSION)
                .map(AttrValue::py_str)
                .filter(|v| !v.is_empty())
        })
}

/// `str()` of the root's `faultgate.termination`.
pub(crate) fn termination<'s>(spans: &'s [SpanRecord<'_>], root: Option<usize>) -> Cow<'s, str> {
    root.and_then(|r| spans[r].attr(attr::TERMINATION))
        .map(AttrValue::py_str)
        .unwrap_or_default()
}

/// The outcome the root records: `faultgate.recorded_outcome`, else the score `score` names, else (when
/// asked) a trajectory's `task_success`.
pub(crate) fn recorded_outcome(
    root: &SpanRecord<'_>,
    score: Option<&str>,
    task_success: bool,
) -> Option<bool> {
    if let Some(v) = root.attr(attr::RECORDED_OUTCOME) {
        return outcome_value(&v.to_json());
    }
    if let Some(name) = score {
        let scores = root.attr(attr::SCORES)?.to_json();
        return scores.get(name).and_then(outcome_value);
    }
    if task_success {
        return root
            .attr(attr::TASK_SUCCESS)
            .and_then(|v| outcome_value(&v.to_json()));
    }
    None
}

/// A recorded outcome as pass or fail: a boolean as it is, a number passes when it is 1 (as τ-bench's
/// pass^k counts a reward), the texts `true` and `false`; anything else records no outcome.
pub(crate) fn outcome_value(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|r| r >= 1.0 - 1e-6),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

fn find_text<'s>(
    spans: &'s [SpanRecord<'_>],
    root: Option<usize>,
    messages_key: &str,
    role: &str,
    legacy_key: &str,
    reverse: bool,
) -> Cow<'s, str> {
    let read = |span: &'s SpanRecord<'_>| -> Cow<'s, str> {
        let text = span
            .attr(messages_key)
            .map(|v| message_text(v, role))
            .unwrap_or_default();
        if text.is_empty() {
            span.attr(legacy_key)
                .map(AttrValue::py_str)
                .unwrap_or_default()
        } else {
            text
        }
    };
    if let Some(r) = root {
        let text = read(&spans[r]);
        if !py_strip(&text).is_empty() {
            return text;
        }
    }
    let found = |span: &'s SpanRecord<'_>| {
        let text = read(span);
        (!py_strip(&text).is_empty()).then_some(text)
    };
    let text = if reverse {
        spans.iter().rev().find_map(found)
    } else {
        spans.iter().find_map(found)
    };
    text.unwrap_or_default()
}

/// The text of the messages with `role` in a messages attribute (a JSON string or a list). A string that
/// is not JSON is the text itself.
pub(crate) fn message_text<'v>(value: &'v AttrValue<'_>, role: &str) -> Cow<'v, str> {
    let text = match value {
        AttrValue::Json(list) if list.is_array() => {
            let text = serde_json::to_string(list).unwrap_or_default();
            return Cow::Owned(list_role_text(&text, role).unwrap_or_default().into_owned());
        }
        other => match other.as_str() {
            Some(text) => text,
            None => return Cow::Borrowed(""),
        },
    };
    match list_role_text(text, role) {
        Some(joined) => joined,
        None if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => Cow::Borrowed(""),
        None => Cow::Borrowed(text),
    }
}

/// The text of the messages with `role` when `text` is a JSON list: read in one pass, or item by item
/// where the one pass cannot follow it.
fn list_role_text<'r>(text: &'r str, role: &str) -> Option<Cow<'r, str>> {
    match lazy::messages(text, role) {
        Some(pieces) => Some(join_pieces(pieces)),
        None => lazy::list_items(text).map(|items| role_text(&items, role)),
    }
}

/// The pieces of [`lazy::messages`] as text, joined by newlines as [`role_text`] joins them.
fn join_pieces(pieces: Vec<lazy::Piece<'_>>) -> Cow<'_, str> {
    let mut texts: Vec<Cow<'_, str>> = pieces
        .into_iter()
        .map(|piece| match piece {
            lazy::Piece::TextPart(text) => text.map(text_of).unwrap_or_default(),
            lazy::Piece::Content(content) => Cow::Owned(py_str(&lazy::decode(content))),
        })
        .collect();
    if texts.len() == 1 {
        return texts.pop().unwrap_or_default();
    }
    Cow::Owned(texts.join("\n"))
}

/// The text parts (or plain contents) of the messages with `role`, joined by newlines. A single piece
/// that is a JSON string without escapes is borrowed from the attribute: a huge answer is not copied.
fn role_text<'r>(messages: &[&'r RawValue], role: &str) -> Cow<'r, str> {
    let mut pieces: Vec<Cow<'r, str>> = Vec::new();
    for message in messages.iter().filter_map(|m| lazy::object(m)) {
        if message.str("role").as_deref() != Some(role) {
            continue;
        }
        let parts = message.list("parts");
        for part in parts.iter().flatten().filter_map(|p| lazy::object(p)) {
            if part.str("type").as_deref() == Some("text") {
                let text = part.raw("content").or_else(|| part.raw("text"));
                pieces.push(text.map(text_of).unwrap_or_default());
            }
        }
        if let Some(content) = message.get("content")
            && parts.is_none_or(|p| p.is_empty())
        {
            pieces.push(Cow::Owned(py_str(&content)));
        }
    }
    if pieces.len() == 1 {
        return pieces.pop().unwrap_or_default();
    }
    Cow::Owned(pieces.join("\n"))
}

/// Python `str()` of a raw JSON value: a string as itself (borrowed when it has no escapes).
fn text_of(raw: &RawValue) -> Cow<'_, str> {
    if let Some(inner) = raw
        .get()
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
    {
        // Valid JSON spells every control character and quote with a backslash, so a string without
        // one is its own text. (Asking serde for a `&str` instead built, and dropped, an error message
        // for each string with escapes.)
        if !inner.contains('\\') {
            return Cow::Borrowed(inner);
        }
        if let Ok(text) = <String as serde::Deserialize>::deserialize(raw) {
            return Cow::Owned(text);
        }
    }
    Cow::Owned(py_str(&lazy::decode(raw)))
}

/// The messages of a messages attribute (each still raw), when it holds a list that may hold a part of
/// type `part_type`. A JSON string is only parsed when that type can occur in it: written literally, or
/// through a `\\u` escape (the only JSON escape that can spell a letter).
fn message_list<'v>(
    value: Option<&'v AttrValue<'_>>,
    part_type: &str,
    owned: &'v mut String,
) -> Vec<&'v RawValue> {
    let text = match value {
        Some(AttrValue::Json(list)) if list.is_array() => {
            *owned = serde_json::to_string(list).unwrap_or_default();
            owned.as_str()
        }
        Some(other) => match other.as_str() {
            Some(text) if may_hold(text, part_type) => text,
            _ => return Vec::new(),
        },
        None => return Vec::new(),
    };
    lazy::list_items(text).unwrap_or_default()
}

/// Returns true if and only if JSON text may spell `word`: literally, or through a `\\u` escape (the
/// only JSON escape that can spell a letter).
fn may_hold(text: &str, word: &str) -> bool {
    text.contains(word) || text.contains("\\u")
}

/// A tool the model provider ran itself (web search, code execution): no `execute_tool` span records
/// it, only this part of the output messages.
const SERVER_CALL: &str = "server_tool_call";
/// The response to a [`SERVER_CALL`] part, naming its id; its payload sits under the same key.
const SERVER_RESPONSE: &str = "server_tool_call_response";
/// The parts the calls of a span's output are read from.
const CALL_PARTS: [&str; 3] = ["tool_call", SERVER_CALL, SERVER_RESPONSE];

/// A tool response part's payload (under `payload`) as the step's result, `Error: `-prefixed when the
/// part, or a provider's response object inside it, says the tool failed.
fn response_text(part: &lazy::LazyObject<'_>, payload: &str) -> String {
    let failed = |get: &dyn Fn(&str) -> Option<Value>| {
        get("is_error") == Some(Value::Bool(true))
            || get("error").is_some_and(|e| py_truthy(&e))
            || matches!(
                py_str(&get("status").unwrap_or(Value::Null))
                    .to_lowercase()
                    .as_str(),
                "error" | "failed"
            )
    };
    let body = part.get(payload).unwrap_or(Value::Null);
    let mut result = payload_text(&body);
    let is_error = failed(&|key| part.get(key))
        || (payload != "result" && failed(&|key| body.get(key).cloned()));
    if is_error && !result.starts_with("Error: ") {
        result.insert_str(0, "Error: ");
    }
    result
}

/// The parts whose type is one of `types` in a list of messages, in order.
fn parts_of_types<'v>(messages: &[&'v RawValue], types: &[&str]) -> Vec<lazy::LazyObject<'v>> {
    let mut out = Vec::new();
    for message in messages.iter().filter_map(|m| lazy::object(m)) {
        let Some(parts) = message.list("parts") else {
            continue;
        };
        out.extend(parts.into_iter().filter_map(lazy::object).filter(|part| {
            part.str("type")
                .is_some_and(|t| types.contains(&t.as_ref()))
        }));
    }
    out
}

/// The parts of type `part_type` in a list of messages.
fn parts_of<'v>(messages: &[&'v RawValue], part_type: &str) -> Vec<lazy::LazyObject<'v>> {
    let mut out = Vec::new();
    for message in messages.iter().filter_map(|m| lazy::object(m)) {
        let Some(parts) = message.list("parts") else {
            continue;
        };
        out.extend(
            parts
                .into_iter()
                .filter_map(lazy::object)
                .filter(|part| part.str("type").as_deref() == Some(part_type)),
        );
    }
    out
}

/// The per-message `finish_reason`s of a span's output messages, in order, for a span without
/// `gen_ai.response.finish_reasons`: the conventions deprecated the per-message field in favour of the
/// span's list, and instrumentation written before that records only the former.
pub(crate) fn message_finish_reasons(span: &SpanRecord<'_>) -> Vec<String> {
    let mut owned = String::new();
    let messages = message_list(
        span.attr(attr::OUTPUT_MESSAGES),
        "finish_reason",
        &mut owned,
    );
    messages
        .iter()
        .filter_map(|m| lazy::object(m))
        .filter_map(|m| m.get("finish_reason"))
        .filter(|r| !r.is_null())
        .map(|r| py_str(&r))
        .collect()
}

/// Returns true if and only if the context was compacted at this span: a finish reason is `compaction`,
/// or its input or output messages hold a `compaction` part (the conversation summarised, sent to or
/// received from the model). `finish_reasons` is the span's own list, when it has one.
pub(crate) fn compacted(span: &SpanRecord<'_>, finish_reasons: Option<&AttrValue<'_>>) -> bool {
    const WORD: &str = "compaction";
    let said = |value: &AttrValue<'_>| match value.as_json() {
        Some(Value::Array(items)) => items.iter().any(|r| r.as_str() == Some(WORD)),
        _ => value.py_str().contains(WORD),
    };
    if finish_reasons.is_some_and(said) {
        return true;
    }
    let mut owned = String::new();
    [attr::INPUT_MESSAGES, attr::OUTPUT_MESSAGES]
        .into_iter()
        .any(|key| !parts_of(&message_list(span.attr(key), WORD, &mut owned), WORD).is_empty())
}

/// How much of a span's content sits in external storage behind a reference: its `gen_ai.*_ref`
/// attributes, and the `uri` and `file` parts of its messages (`uri` or `file_id` in place of the
/// content). Messages are parsed only when their text names one of those keys.
pub(crate) fn content_refs(span: &SpanRecord<'_>) -> usize {
    let attributes = attr::CONTENT_REFS
        .iter()
        .filter(|key| span.attr(key).is_some_and(AttrValue::truthy))
        .count();
    // Each messages attribute is parsed at most once, and only when its text may name a reference.
    let may_refer = |value: &AttrValue<'_>| {
        value.as_str().is_none_or(|text| {
            ["\"uri\"", "\"file_id\"", "\\u"]
                .iter()
                .any(|word| text.contains(word))
        })
    };
    let system = span
        .attr(attr::SYSTEM_INSTRUCTIONS)
        .filter(|v| may_refer(v))
        .and_then(|_| system_message(span));
    let mut owned = String::new();
    let mut parts = 0;
    for value in [
        span.attr(attr::INPUT_MESSAGES),
        span.attr(attr::OUTPUT_MESSAGES),
        system.as_ref(),
    ]
    .into_iter()
    .flatten()
    .filter(|v| may_refer(v))
    {
        // An empty word: the text was looked at above.
        let messages = message_list(Some(value), "", &mut owned);
        parts += parts_of_types(&messages, &["uri", "file"]).len();
    }
    attributes + parts
}

/// The other traces the spans link to, in the order first linked and without repeats, as a compact
/// JSON list; `None` when no span links out of the trace.
pub(crate) fn linked_traces(spans: &[SpanRecord<'_>]) -> Option<String> {
    let mut ids: Vec<&str> = Vec::new();
    for span in spans {
        let Some(Value::Array(linked)) =
            span.attr(attr::LINKED_TRACES).and_then(AttrValue::as_json)
        else {
            continue;
        };
        for id in linked.iter().filter_map(Value::as_str) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    (!ids.is_empty()).then(|| serde_json::to_string(&ids).unwrap_or_default())
}

/// The tool a tool span ran. Spans named `execute_tool <tool>` without `gen_ai.tool.name` name the tool
/// after the prefix, as the GenAI conventions intend.
fn tool_span_name<'s>(span: &'s SpanRecord<'_>) -> Cow<'s, str> {
    if let Some(name) = span.attr(attr::TOOL_NAME) {
        return name.py_str();
    }
    match span.name.strip_prefix("execute_tool ") {
        Some(tool) if !tool.trim().is_empty() => Cow::Borrowed(tool),
        _ => Cow::Borrowed(&span.name),
    }
}

/// A tool payload as text: JSON containers re-serialised, text parts unwrapped.
pub(crate) fn payload_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => {
            let t = py_strip(s);
            let bracketed = (t.starts_with('[') && t.ends_with(']'))
                || (t.starts_with('{') && t.ends_with('}'));
            if bracketed && let Ok(parsed) = serde_json::from_str::<Value>(t) {
                return payload_text(&parsed);
            }
            s.clone()
        }
        Value::Array(items)
            if !items.is_empty()
                && items
                    .iter()
                    .all(|i| i.as_object().is_some_and(|o| o.contains_key("text"))) =>
        {
            items
                .iter()
                .map(|i| py_str(&i["text"]))
                .collect::<Vec<_>>()
                .join(" ")
        }
        Value::Object(map)
            if map.get("type").and_then(Value::as_str) == Some("text")
                && map.contains_key("text") =>
        {
            py_str(&map["text"])
        }
        Value::Array(_) | Value::Object(_) => json_text(v),
        other => py_str(other),
    }
}

/// A hash map with a fast, seeded hasher: keys come from the input, so they stay hard to collide.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Tool steps: tool spans first, plus tool calls found only in chat messages, in time order.
/// `unique_ids` says no two spans share an id.
///
/// `gen_ai.tool.call.id` pairs a tool span with the call and the response the chat messages record
/// under that id: the call is not counted twice, and a tool span that does not record its arguments or
/// its result itself (content capture is opt-in per span) takes them from the messages.
///
/// Some recordings reuse a call id within a conversation, so an id may have several responses. Each
/// span's input repeats the conversation so far: an id's responses are read from the span whose input
/// records the most of them (the latest on a tie, which for a unique id is 0.4.1's last-wins), and the
/// k-th call of an id (and the k-th tool span) takes the k-th response, so each call gets its own. A
/// call past the responses of its id takes the last one, as 0.4.1 reads every call of an id: some
/// exporters repeat a call in the output of several spans, and those copies are one call.
pub(crate) fn steps<'s>(spans: &'s [SpanRecord<'_>], unique_ids: bool) -> Vec<Step<'s>> {
    let mut responses: FastMap<String, Vec<String>> = FastMap::default();
    let mut in_span: FastMap<String, Vec<String>> = FastMap::default();
    let mut server_responses: FastMap<String, String> = FastMap::default();
    let mut owned = String::new();
    for span in spans {
        let mut messages = message_list(
            span.attr(attr::INPUT_MESSAGES),
            "tool_call_response",
            &mut owned,
        );
        // The system message of instructions kept apart, only when it may hold such a part.
        let system = span
            .attr(attr::SYSTEM_INSTRUCTIONS)
            .filter(|v| v.as_str().is_none_or(|t| may_hold(t, "tool_call_response")))
            .and_then(|_| system_message(span));
        let mut owned_system = String::new();
        messages.splice(
            0..0,
            message_list(system.as_ref(), "tool_call_response", &mut owned_system),
        );
        for part in parts_of(&messages, "tool_call_response") {
            let Some(id) = part.get("id").filter(py_truthy) else {
                continue;
            };
            in_span
                .entry(py_str(&id))
                .or_default()
                .push(response_text(&part, "result"));
        }
        // A provider-run tool's response repeats in the history of every later request: the first
        // read of an id is its response.
        let history = message_list(span.attr(attr::INPUT_MESSAGES), SERVER_RESPONSE, &mut owned);
        for part in parts_of(&history, SERVER_RESPONSE) {
            if let Some(id) = part.get("id").filter(py_truthy) {
                server_responses
                    .entry(py_str(&id))
                    .or_insert_with(|| response_text(&part, SERVER_RESPONSE));
            }
        }
        for (id, list) in in_span.drain() {
            match responses.get_mut(&id) {
                Some(kept) if kept.len() > list.len() => {}
                Some(kept) => *kept = list,
                None => {
                    responses.insert(id, list);
                }
            }
        }
    }
    // The n-th response of an id (the last past the end), for the n-th call or tool span of that id.
    let nth_response = |id: &str, n: usize| -> Option<&String> {
        let list = responses.get(id)?;
        list.get(n).or_else(|| list.last())
    };
    let take = |taken: &mut FastMap<String, usize>, id: &str| -> Option<String> {
        let n = taken.entry(id.to_string()).or_default();
        *n += 1;
        nth_response(id, *n - 1).cloned()
    };
    let mut calls_taken: FastMap<String, usize> = FastMap::default();
    let mut calls: Vec<(String, Step<'s>)> = Vec::new();
    // Calls of provider-run tools, by their place in `calls`: their responses are joined once every
    // span has been read, since the response may sit in the same output or in a later span's input.
    let mut server_calls: Vec<usize> = Vec::new();
    for (position, span) in spans.iter().enumerate() {
        // "tool_call" is also in the text of every server tool call and response part.
        let messages = message_list(span.attr(attr::OUTPUT_MESSAGES), "tool_call", &mut owned);
        for part in parts_of_types(&messages, &CALL_PARTS) {
            let call_id = part.get("id").map(|id| py_str(&id)).unwrap_or_default();
            let server = match part.str("type").as_deref() {
                Some("tool_call") => false,
                Some(SERVER_CALL) => true,
                _ => {
                    if part.get("id").is_some_and(|id| py_truthy(&id)) {
                        server_responses
                            .entry(call_id)
                            .or_insert_with(|| response_text(&part, SERVER_RESPONSE));
                    }
                    continue;
                }
            };
            let arguments = if server { SERVER_CALL } else { "arguments" };
            let result = if server {
                String::new()
            } else {
                take(&mut calls_taken, &call_id).unwrap_or_default()
            };
            let step = Step {
                tool: Cow::Owned(
                    part.get("name")
                        .map_or_else(|| "unknown".to_string(), |n| py_str(&n)),
                ),
                arguments: Cow::Owned(payload_text(&part.get(arguments).unwrap_or(Value::Null))),
                result: Cow::Owned(result),
                span: position,
                actor: span_actor(span),
                kind: StepKind::Tool,
            };
            if server {
                server_calls.push(calls.len());
            }
            calls.push((call_id, step));
        }
    }
    for i in server_calls {
        let (id, step) = &mut calls[i];
        if let Some(response) = server_responses.get(id.as_str()) {
            step.result = Cow::Owned(response.clone());
        }
    }
    let tool_spans: Vec<usize> = (0..spans.len())
        .filter(|&p| is_tool_span(&spans[p]))
        .collect();
    let other_spans: Vec<(usize, StepKind)> = (0..spans.len())
        .filter_map(|p| {
            StepKind::of_operation(spans[p].attr_str(attr::OPERATION_NAME)).map(|kind| (p, kind))
        })
        .collect();
    if tool_spans.is_empty() && other_spans.is_empty() {
        return calls.into_iter().map(|(_, step)| step).collect();
    }
    let text_attr = |span: &'s SpanRecord<'_>, key: &str| -> Cow<'s, str> {
        span.attr(key).map(AttrValue::py_str).unwrap_or_default()
    };
    let call_id = |span: &'s SpanRecord<'_>| {
        span.attr(attr::TOOL_CALL_ID)
            .filter(|v| v.truthy())
            .map(AttrValue::py_str)
    };
    let mut spans_seen: FastMap<String, usize> = FastMap::default();
    let mut out: Vec<Step<'s>> = tool_spans
        .iter()
        .map(|&p| {
            let span = &spans[p];
            let id = call_id(span);
            // The n-th tool span of an id takes the n-th call's arguments and the n-th response.
            let nth = id.as_ref().map_or(0, |id| {
                let n = spans_seen.entry(id.to_string()).or_default();
                *n += 1;
                *n - 1
            });
            let arguments = match (span.attr(attr::TOOL_CALL_ARGUMENTS), &id) {
                (None, Some(id)) => calls
                    .iter()
                    .filter(|(c, _)| c == id)
                    .nth(nth)
                    .map(|(_, call)| call.arguments.clone())
                    .unwrap_or_default(),
                _ => text_attr(span, attr::TOOL_CALL_ARGUMENTS),
            };
            let result = match (span.attr(attr::TOOL_CALL_RESULT), &id) {
                (None, Some(id)) => nth_response(id, nth)
                    .map(|r| Cow::Owned(r.clone()))
                    .unwrap_or_default(),
                _ => text_attr(span, attr::TOOL_CALL_RESULT),
            };
            Step {
                tool: tool_span_name(span),
                arguments,
                result,
                span: p,
                actor: span_actor(span),
                kind: StepKind::Tool,
            }
        })
        .collect();
    out.extend(
        other_spans
            .into_iter()
            .map(|(p, kind)| operation_step(&spans[p], p, kind)),
    );
    if !calls.is_empty() {
        let executed: HashSet<Cow<'_, str>, foldhash::fast::RandomState> = tool_spans
            .iter()
            .filter_map(|&p| call_id(&spans[p]))
            .collect();
        out.extend(
            calls
                .into_iter()
                .filter(|(id, _)| !executed.contains(id.as_str()))
                .map(|(_, step)| step),
        );
    }
    // Steps follow the start of the last span with their span's id (0.4.1 indexes starts by id), which
    // is the step's own span's start unless ids repeat.
    if unique_ids {
        let start_of = |step: &Step<'_>| spans[step.span].start_ns;
        if !out.is_sorted_by_key(start_of) {
            out.sort_by_key(start_of);
        }
    } else {
        let mut start_by_id: FastMap<&str, i64> = FastMap::default();
        for span in spans {
            start_by_id.insert(&span.span_id, span.start_ns);
        }
        out.sort_by_key(|step| start_by_id[spans[step.span].span_id.as_ref()]);
    }
    out
}

/// The step a retrieval or memory span is: named after its operation (`retrieval`, `search_memory`),
/// its arguments the query and the source, store or record it names (a JSON object of those present),
/// its result the documents or records it returned (opt-in content, so often empty).
fn operation_step<'s>(span: &'s SpanRecord<'_>, position: usize, kind: StepKind) -> Step<'s> {
    let mut arguments = serde_json::Map::new();
    for (name, key) in [
        ("query", attr::RETRIEVAL_QUERY),
        ("query", attr::MEMORY_QUERY),
        ("data_source_id", attr::DATA_SOURCE_ID),
        ("store_id", attr::MEMORY_STORE_ID),
        ("record_id", attr::MEMORY_RECORD_ID),
    ] {
        if let Some(value) = span.attr(key).filter(|v| v.truthy()) {
            arguments
                .entry(name)
                .or_insert_with(|| Value::String(value.py_str().into_owned()));
        }
    }
    let result = [attr::RETRIEVAL_DOCUMENTS, attr::MEMORY_RECORDS]
        .into_iter()
        .find_map(|key| span.attr(key))
        .map(|v| match v.as_json() {
            Some(json) => Cow::Owned(payload_text(json)),
            None => v.py_str(),
        })
        .unwrap_or_default();
    Step {
        tool: Cow::Borrowed(span.attr_str(attr::OPERATION_NAME).unwrap_or_default()),
        arguments: if arguments.is_empty() {
            Cow::Borrowed("")
        } else {
            Cow::Owned(Value::Object(arguments).to_string())
        },
        result,
        span: position,
        actor: span_actor(span),
        kind,
    }
}

/// Summed `gen_ai.usage.*_tokens`, each `None` when no span recorded it. A span that lacks the current
/// name is read under the deprecated one (`prompt_tokens`, `completion_tokens`), so a trace written
/// before the rename counts the same.
pub(crate) fn usage(spans: &[SpanRecord<'_>]) -> (Option<i64>, Option<i64>) {
    let sum = |(key, legacy): (&str, &str)| -> Option<i64> {
        spans
            .iter()
            .filter_map(|s| s.attr(key).or_else(|| s.attr(legacy)))
            .filter_map(|v| match v.as_json() {
                Some(Value::Number(n)) => {
                    n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64))
                }
                _ => None,
            })
            .fold(None, |acc: Option<i64>, n| {
                Some(acc.unwrap_or(0).saturating_add(n))
            })
    };
    (
        sum((attr::INPUT_TOKENS, attr::LEGACY_INPUT_TOKENS)),
        sum((attr::OUTPUT_TOKENS, attr::LEGACY_OUTPUT_TOKENS)),
    )
}

/// The root's duration, else the span of all known times, in milliseconds.
pub(crate) fn latency_ms(spans: &[SpanRecord<'_>], root: Option<usize>) -> Option<f64> {
    if let Some(root) = root.map(|r| &spans[r])
        && root.start_ns != 0
        && root.end_ns != 0
        && root.end_ns >= root.start_ns
    {
        // In i128: hostile times (a negative start, an end near i64::MAX) overflow an i64 difference.
        return Some((i128::from(root.end_ns) - i128::from(root.start_ns)) as f64 / 1e6);
    }
    let end = spans.iter().map(|s| s.end_ns).filter(|&e| e != 0).max()?;
    let start = spans.iter().map(|s| s.start_ns).filter(|&s| s != 0).min()?;
    (end >= start).then(|| (i128::from(end) - i128::from(start)) as f64 / 1e6)
}

/// Summed `faultgate.cost_usd` (numbers and booleans), `None` when no span recorded it.
pub(crate) fn cost(spans: &[SpanRecord<'_>]) -> Option<f64> {
    let mut total: Option<f64> = None;
    for v in spans.iter().filter_map(|s| s.attr(attr::COST_USD)) {
        let amount = match v.as_json() {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
            _ => None,
        };
        if let Some(a) = amount {
            total = Some(total.unwrap_or(0.0) + a);
        }
    }
    total
}

#[cfg(test)]
mod tests;
