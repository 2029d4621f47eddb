//! Multi-agent conversation logs: a `history` (or AG2's `chat_history`) list of turns, each spoken by a
//! named agent, as Who&When records them for AG2 (CaptainAgent) and Magentic-One runs.
//!
//! A turn's agent is its `name` (AG2), else its `role` without a parenthesised remark (Magentic-One
//! writes `Orchestrator (-> WebSurfer)` and `Orchestrator (thought)`); `human` and `user` turns without a
//! name are the user's. Each agent turn is a span of that agent carrying its text; where the speaking
//! agent changes, a handoff span (`from_agent` / `to_agent`) records the transfer, so the workflow check
//! sees who handed over to whom. Tool activity becomes tool steps: OpenAI-style `tool_calls` paired with
//! their `tool` results, and AG2 code execution (a turn that starts `exitcode:`) as an `execute_code`
//! step whose arguments are the code block of the turn before it.
//!
//! The prompt is the record's `question`, else the first user turn; the answer is what follows
//! Magentic-One's `FINAL ANSWER:`, else the last agent turn's text (without AG2's closing `TERMINATE`;
//! orchestration remarks such as `(thought)` and `(-> WebSurfer)` are not answers). The first line of a
//! `(termination condition)` turn is the termination. The scenario key and the trace id are `question_ID`
//! (the trace id else the file's name); `is_correct` (the Hand-Crafted set spells it `is_corrected`) is
//! kept on the root as the recorded outcome.

use std::path::Path;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

use super::chat::{
    DocumentFormat, ToolStep, child_span, content_text, file_stem, objects, paired_calls,
    root_span, tape_first, tape_get, tape_has, tool_span, trace,
};
use super::common::wrap_messages;
use super::trajectory::RECORDED_OUTCOME;
use crate::compat::value::{py_str, py_truthy};
use crate::table::record::{SpanRecord, TraceRecord, attr};

/// Multi-agent conversation logs.
pub(crate) static MULTI_AGENT: DocumentFormat = DocumentFormat {
    name: "multi-agent",
    detect,
    map: read,
};

/// The keys a record's turn list is found under.
const TURN_KEYS: [&str; 2] = ["history", "chat_history"];

/// The code-execution tool of AG2 turns that report `exitcode: N`.
pub(crate) const EXECUTE_CODE: &str = "execute_code";

fn is_turn(v: TapeValue<'_, '_>) -> bool {
    tape_has(v, &["content"]) && (tape_has(v, &["role"]) || tape_has(v, &["name"]))
}

fn is_log(v: TapeValue<'_, '_>) -> bool {
    TURN_KEYS.iter().any(|k| {
        tape_get(v, k)
            .filter(|h| h.as_array().is_some())
            .and_then(tape_first)
            .is_some_and(is_turn)
    })
}

/// A log record, or a list of them.
fn detect(doc: TapeValue<'_, '_>) -> bool {
    match doc.as_array() {
        Some(_) => tape_first(doc).is_some_and(is_log),
        None => is_log(doc),
    }
}

fn read(docs: &[Value], path: &Path) -> Result<Vec<TraceRecord<'static>>, String> {
    let records: Vec<&Map<String, Value>> = docs
        .iter()
        .flat_map(|doc| match doc {
            Value::Array(_) => objects(Some(doc)),
            Value::Object(obj) => vec![obj],
            _ => Vec::new(),
        })
        .collect();
    let stem = file_stem(path);
    let mut seen = std::collections::HashSet::new();
    records
        .iter()
        .enumerate()
        .map(|(i, record)| {
            // Who&When names its files 1.json, 2.json... in each subset: the question id tells runs apart.
            let base = match record.get("question_ID").filter(|v| py_truthy(v)) {
                Some(question) => py_str(question),
                None if records.len() > 1 => format!("{stem}-{}", i + 1),
                None => stem.clone(),
            };
            let mut id = base.clone();
            let mut n = 1;
            while !seen.insert(id.clone()) {
                n += 1;
                id = format!("{base}-{n}");
            }
            let turns = TURN_KEYS
                .iter()
                .find_map(|k| record.get(*k).filter(|v| v.is_array()))
                .ok_or_else(|| {
                    "expected records with a `history` or `chat_history` list of turns".to_string()
                })?;
            Ok(read_log(record, &objects(Some(turns)), id))
        })
        .collect()
}

/// The agent who spoke a turn, or `None` for the user's turns.
pub(crate) fn speaker(turn: &Map<String, Value>) -> Option<String> {
    if let Some(name) = turn.get("name").filter(|v| py_truthy(v)) {
        return Some(py_str(name));
    }
    let role = turn.get("role").map(py_str).unwrap_or_default();
    let agent = split_role(&role).0.trim();
    (!agent.is_empty() && !matches!(agent, "human" | "user")).then(|| agent.to_string())
}

/// A Magentic-One role split into the agent and its remark: `Orchestrator (thought)` is
/// (`Orchestrator`, `thought`); a plain role has no remark.
fn split_role(role: &str) -> (&str, &str) {
    match role.find(" (") {
        Some(at) if role.ends_with(')') => (&role[..at], &role[at + 2..role.len() - 1]),
        _ => (role, ""),
    }
}

/// The remark of a turn's role (`""` for AG2's named turns and plain roles).
fn remark(turn: &Map<String, Value>) -> String {
    if turn.get("name").is_some_and(py_truthy) {
        return String::new();
    }
    let role = turn.get("role").map(py_str).unwrap_or_default();
    split_role(&role).1.to_string()
}

/// Magentic-One's orchestrator states the result as `FINAL ANSWER: ...`.
const FINAL_ANSWER: &str = "FINAL ANSWER:";

/// The last fenced code block of a text (the code an AG2 executor ran).
fn last_code_block(text: &str) -> Option<String> {
    let start = text.rfind("```")?;
    let before = &text[..start];
    let open = before.rfind("```")?;
    let body = &before[open + 3..];
    // Drop the language tag on the opening fence's line.
    let body = body.split_once('\n').map_or("", |(_, rest)| rest);
    Some(body.trim_end().to_string())
}

/// The text of an agent turn as an answer: AG2 ends a chat with a bare or trailing `TERMINATE`.
fn answer_text(text: &str) -> &str {
    let t = text.trim();
    t.strip_suffix("TERMINATE").unwrap_or(t).trim()
}

fn read_log(
    record: &Map<String, Value>,
    turns: &[&Map<String, Value>],
    id: String,
) -> TraceRecord<'static> {
    let mut paired = paired_calls(turns);
    let null = Value::Null;
    let mut spans: Vec<SpanRecord<'static>> = Vec::new();
    let mut previous: Option<String> = None;
    let mut first_agent: Option<String> = None;
    let mut answer = String::new();
    let mut final_answer: Option<String> = None;
    let mut termination: Option<String> = None;
    let mut last_text = String::new();
    for (i, turn) in turns.iter().enumerate() {
        let text = content_text(turn);
        let Some(agent) = speaker(turn) else {
            last_text = text;
            continue;
        };
        if turn.get("role").and_then(Value::as_str) == Some("tool") {
            // A tool result belongs to the call it answers, not to a speaker.
            continue;
        }
        first_agent.get_or_insert_with(|| agent.clone());
        if let Some(from) = previous.as_ref().filter(|from| **from != agent) {
            let mut attrs = Map::new();
            attrs.insert(attr::HANDOFF_FROM.into(), from.clone().into());
            attrs.insert(attr::HANDOFF_TO.into(), agent.clone().into());
            spans.push(child_span(
                &id,
                i,
                ".a",
                format!("handoff {from} -> {agent}"),
                attrs,
            ));
        }
        let mut attrs = Map::new();
        attrs.insert(attr::AGENT_NAME.into(), agent.clone().into());
        if let Some(m) = wrap_messages("assistant", &Value::String(text.clone())) {
            attrs.insert(attr::OUTPUT_MESSAGES.into(), m);
        }
        spans.push(child_span(&id, i, ".b", format!("turn {agent}"), attrs));
        for (j, (call, response)) in std::mem::take(&mut paired[i]).into_iter().enumerate() {
            let response = response.as_ref();
            spans.push(tool_span(
                &id,
                i,
                &format!(".c{j:03}"),
                ToolStep {
                    agent: Some(&agent),
                    name: &call.name,
                    arguments: &call.arguments,
                    result: response.map_or(&null, |r| &r.content),
                    error: response.map_or(&null, |r| &r.error),
                    call_id: &call.id,
                },
            ));
        }
        let remark = remark(turn);
        if let Some(status) = text.strip_prefix("exitcode:") {
            let code = last_code_block(&last_text).map_or(Value::Null, Value::String);
            let failed = !status.trim_start().starts_with('0');
            // A failed run's output is the error's text: `Error: exitcode: 1 (execution failed) ...`.
            let output = Value::String(if failed {
                format!("Error: {text}")
            } else {
                text.clone()
            });
            let mut span = tool_span(
                &id,
                i,
                ".c999",
                ToolStep {
                    agent: Some(&agent),
                    name: EXECUTE_CODE,
                    arguments: &code,
                    result: &output,
                    error: &null,
                    call_id: "",
                },
            );
            if failed {
                span.status_code = 2;
                span.status_message = text.lines().next().unwrap_or("").trim().to_string().into();
            }
            spans.push(span);
        } else if remark == "termination condition" || text.contains(FINAL_ANSWER) {
            if remark == "termination condition" {
                termination = text.lines().next().map(|l| l.trim().to_string());
            }
            if let Some(at) = text.find(FINAL_ANSWER) {
                let rest = text[at + FINAL_ANSWER.len()..].trim();
                final_answer = Some(rest.lines().next().unwrap_or("").trim().to_string());
            }
        } else if remark.is_empty() && !answer_text(&text).is_empty() {
            // Orchestration remarks (`thought`, `-> WebSurfer`) are not answers.
            answer = answer_text(&text).to_string();
        }
        previous = Some(agent);
        last_text = text;
    }
    let prompt = record
        .get("question")
        .filter(|v| py_truthy(v))
        .map(py_str)
        .or_else(|| {
            turns
                .iter()
                .find(|t| {
                    speaker(t).is_none() && t.get("role").and_then(Value::as_str) != Some("tool")
                })
                .map(|t| content_text(t))
        })
        .unwrap_or_default();
    let mut attrs = Map::new();
    if let Some(scenario) = ["question_ID", "question_id", "task_id"]
        .iter()
        .find_map(|k| record.get(*k).filter(|v| py_truthy(v)))
    {
        attrs.insert(attr::SCENARIO.into(), py_str(scenario).into());
    }
    if let Some(outcome) = ["is_correct", "is_corrected"]
        .iter()
        .find_map(|k| record.get(*k).filter(|v| v.is_boolean()))
    {
        attrs.insert(RECORDED_OUTCOME.into(), outcome.clone());
    }
    if let Some(reason) = termination.filter(|t| !t.is_empty()) {
        attrs.insert(attr::TERMINATION.into(), reason.into());
    }
    let answer = final_answer.unwrap_or(answer);
    let agent = first_agent.unwrap_or_else(|| "agent".to_string());
    let root = root_span(&id, &agent, &prompt, &answer, attrs);
    trace(id, root, spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::json::with_tape;
    use serde_json::json;

    #[test]
    fn speakers_come_from_names_then_roles() {
        let speaker_of = |v: Value| speaker(v.as_object().unwrap());
        assert_eq!(
            speaker_of(json!({"role": "user", "name": "Computer_terminal"})).as_deref(),
            Some("Computer_terminal")
        );
        assert_eq!(
            speaker_of(json!({"role": "Orchestrator (-> WebSurfer)"})).as_deref(),
            Some("Orchestrator")
        );
        assert_eq!(
            speaker_of(json!({"role": "WebSurfer"})).as_deref(),
            Some("WebSurfer")
        );
        assert_eq!(speaker_of(json!({"role": "human"})), None);
    }

    #[test]
    fn detection_needs_a_turn_list() {
        let detects = |text: &str| with_tape(text.as_bytes(), detect).unwrap();
        assert!(detects(
            r#"{"history": [{"content": "hi", "role": "human"}], "question": "q"}"#
        ));
        assert!(detects(
            r#"[{"chat_history": [{"content": "hi", "name": "a", "role": "user"}]}]"#
        ));
        assert!(!detects(r#"{"history": [{"seq": 1}]}"#));
        assert!(!detects(r#"{"history": "text"}"#));
    }

    #[test]
    fn failed_code_runs_and_function_calls_are_tool_steps_and_speaker_changes_handoffs() {
        let record = json!({"chat_history": [
            {"content": "Plot it:\n```python\nimport missing\n```", "name": "Coder", "role": "assistant"},
            {"content": "exitcode: 1 (execution failed)\nCode output: ModuleNotFoundError", "name": "Executor", "role": "user"},
            {"content": null, "name": "Coder", "role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"x\"}"}}]},
            {"content": "3 hits", "role": "tool", "tool_responses": [{"tool_call_id": "c1", "role": "tool", "content": "3 hits"}]},
            {"content": "Done: 3 hits.\nTERMINATE", "name": "Coder", "role": "assistant"}
        ]});
        let trace = read_log(
            record.as_object().unwrap(),
            &objects(record.get("chat_history")),
            "t".into(),
        );
        let steps = crate::table::derive::steps(&trace.spans, true);
        let read: Vec<(&str, &str, &str)> = steps
            .iter()
            .map(|s| (s.tool.as_ref(), s.arguments.as_ref(), s.result.as_ref()))
            .collect();
        assert_eq!(
            read,
            [
                (
                    EXECUTE_CODE,
                    "import missing",
                    "Error: exitcode: 1 (execution failed)\nCode output: ModuleNotFoundError"
                ),
                ("search", "{\"q\": \"x\"}", "3 hits"),
            ]
        );
        let handoffs: Vec<(Option<&str>, Option<&str>)> = trace
            .spans
            .iter()
            .filter(|s| s.attr(attr::HANDOFF_TO).is_some())
            .map(|s| (s.attr_str(attr::HANDOFF_FROM), s.attr_str(attr::HANDOFF_TO)))
            .collect();
        assert_eq!(
            handoffs,
            [
                (Some("Coder"), Some("Executor")),
                (Some("Executor"), Some("Coder"))
            ]
        );
        let root = crate::table::record::root_position(&trace.spans);
        assert_eq!(
            crate::table::derive::answer(&trace.spans, root),
            "Done: 3 hits."
        );
        assert_eq!(trace.agent, "Coder");
    }

    #[test]
    fn code_blocks_and_terminate() {
        assert_eq!(
            last_code_block("run:\n```python\nprint(1)\n```\n").as_deref(),
            Some("print(1)")
        );
        assert_eq!(
            answer_text("The answer is 8.\nTERMINATE"),
            "The answer is 8."
        );
    }
}
