//! SWE-agent trajectories (`.traj`) and mini-swe-agent message lists: one software-engineering run per
//! file, each action a tool step and each observation its result, the submitted patch the answer.
//!
//! - **SWE-agent** `.traj`: `{"trajectory": [{"action", "observation", "thought", ...}], "history": [chat
//!   messages], "info": {"submission", "exit_status", "model_stats"}, "replay_config"}`. An action is a
//!   command line; its first word is the tool (`open`, `edit`, `find_file`, `submit`), the whole line the
//!   arguments.
//! - **mini-swe-agent**: `{"info": {...}, "messages": [...], "trajectory_format": "mini-swe-agent-1.x"}`,
//!   or (older versions) the bare message list. A step is an assistant message's `tool_calls` paired with
//!   their `tool` messages, else its `extra.actions` or fenced bash block paired with the next user
//!   message (the observation). The submission is `info.submission`, else the `exit` message's, else what
//!   followed the final `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.
//!
//! The trace id is the file's name without its extensions (SWE-agent names a trajectory after its
//! instance); the scenario key is the instance id (`replay_config`'s problem statement id, or
//! mini-swe-agent's `instance_id`), else that name. The exit status is the termination; `info.resolved`,
//! when an evaluation wrote it back, is the recorded outcome.

use std::path::Path;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

use super::chat::{
    DocumentFormat, ToolStep, calls, content_text, file_stem, message_times, objects, role,
    root_span, tape_first, tape_get, tape_has, tool_span, tool_spans, trace,
};
use super::common::set_usage;
use crate::compat::value::{py_str, py_truthy};
use crate::table::record::{SpanRecord, TraceRecord, attr};

/// SWE-agent and mini-swe-agent trajectories.
pub(crate) static SWE_AGENT: DocumentFormat = DocumentFormat {
    name: "swe-agent",
    detect,
    map: read,
};

/// The commands with which mini-swe-agent ends a run; the output that follows is the submission.
const SUBMIT_MARKERS: [&str; 2] = [
    "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    "MINI_SWE_AGENT_FINAL_OUTPUT",
];

/// Fence openers of the command block in a text-based mini-swe-agent reply.
const FENCES: [&str; 2] = ["```mswea_bash_command", "```bash"];

fn detect(doc: TapeValue<'_, '_>) -> bool {
    if let Some(steps) = tape_get(doc, "trajectory").filter(|t| t.as_array().is_some()) {
        return tape_has(doc, &["info"])
            && tape_first(steps).is_none_or(|s| tape_has(s, &["action", "observation"]));
    }
    if tape_get(doc, "trajectory_format")
        .is_some_and(|f| f.as_str().is_some_and(|f| f.starts_with("mini-swe-agent")))
    {
        return true;
    }
    // A bare message list is mini-swe-agent's when its opening messages name its submit command.
    let Some(items) = doc.as_array() else {
        return false;
    };
    items.iter().take(2).any(|m| {
        tape_has(m, &["role", "content"])
            && tape_get(m, "content").is_some_and(|c| {
                c.as_str()
                    .is_some_and(|c| SUBMIT_MARKERS.iter().any(|k| c.contains(k)))
            })
    })
}

fn read(docs: &[Value], path: &Path) -> Result<Vec<TraceRecord<'static>>, String> {
    let id = file_stem(path);
    let mut out = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let id = if docs.len() > 1 {
            format!("{id}-{}", i + 1)
        } else {
            id.clone()
        };
        let trace = match doc {
            Value::Object(obj) if obj.contains_key("trajectory") => swe_agent(obj, id),
            Value::Object(obj) if obj.contains_key("messages") => {
                mini(&objects(obj.get("messages")), Some(obj), id)
            }
            Value::Array(_) => mini(&objects(Some(doc)), None, id),
            _ => return Err(
                "expected a SWE-agent `.traj` object (`trajectory`, `info`), a mini-swe-agent run \
                     (`messages`) or a message list"
                    .into(),
            ),
        };
        out.push(trace);
    }
    Ok(out)
}

/// The first word of a command line: the SWE-agent tool it runs.
fn command_tool(action: &str) -> String {
    action
        .split_whitespace()
        .next()
        .unwrap_or("action")
        .to_string()
}

/// Root attributes from `info`: termination, usage, cost and the evaluation's `resolved` (which a run
/// annotated with its SWE-bench result carries); plus the scenario key.
fn info_attrs(info: Option<&Map<String, Value>>, scenario: String) -> Map<String, Value> {
    let mut attrs = Map::new();
    attrs.insert(attr::SCENARIO.into(), scenario.into());
    let Some(info) = info else {
        return attrs;
    };
    if let Some(resolved) = info.get("resolved").filter(|v| v.is_boolean()) {
        attrs.insert(attr::RECORDED_OUTCOME.into(), resolved.clone());
    }
    if let Some(status) = info.get("exit_status").filter(|v| py_truthy(v)) {
        attrs.insert(attr::TERMINATION.into(), py_str(status).into());
    }
    if let Some(stats) = info.get("model_stats").and_then(Value::as_object) {
        set_usage(
            &mut attrs,
            stats.get("tokens_sent"),
            stats.get("tokens_received"),
        );
        if let Some(cost) = stats.get("instance_cost").filter(|v| v.is_number()) {
            attrs.insert(attr::COST_USD.into(), cost.clone());
        }
    }
    attrs
}

/// The problem statement id in SWE-agent's `replay_config` (a JSON text or an object).
fn instance_id(traj: &Map<String, Value>) -> Option<String> {
    let config = match traj.get("replay_config")? {
        Value::String(text) => serde_json::from_str(text).ok()?,
        other => other.clone(),
    };
    let id = config.get("problem_statement")?.get("id")?;
    py_truthy(id).then(|| py_str(id))
}

fn swe_agent(traj: &Map<String, Value>, id: String) -> TraceRecord<'static> {
    let info = traj.get("info").and_then(Value::as_object);
    let history = objects(traj.get("history"));
    let prompt = history
        .iter()
        .find(|m| role(m) == "user")
        .map(|m| content_text(m))
        .unwrap_or_default();
    let answer = info
        .and_then(|i| i.get("submission"))
        .filter(|v| py_truthy(v))
        .map(py_str)
        .unwrap_or_default();
    let scenario = instance_id(traj).unwrap_or_else(|| id.clone());
    let root = root_span(
        &id,
        "swe-agent",
        &prompt,
        &answer,
        info_attrs(info, scenario),
    );
    let null = Value::Null;
    let spans: Vec<SpanRecord<'static>> = objects(traj.get("trajectory"))
        .into_iter()
        .enumerate()
        .filter_map(|(i, step)| {
            let action = step.get("action").map(py_str).unwrap_or_default();
            let action = action.trim();
            if action.is_empty() {
                return None;
            }
            let result = step.get("observation").unwrap_or(&null);
            let tool = command_tool(action);
            Some(tool_span(
                &id,
                i,
                "",
                ToolStep {
                    agent: None,
                    name: &tool,
                    arguments: &Value::String(action.to_string()),
                    result,
                    error: &null,
                    call_id: "",
                },
            ))
        })
        .collect();
    trace(id, root, spans)
}

/// The command of a text-based reply: `extra.actions`, else its fenced bash block.
fn text_commands(message: &Map<String, Value>) -> Vec<String> {
    let actions: Vec<String> = objects(message.get("extra").and_then(|e| e.get("actions")))
        .into_iter()
        .filter(|a| !a.contains_key("tool_call_id"))
        .filter_map(|a| a.get("command").map(py_str))
        .collect();
    if !actions.is_empty()
        || message
            .get("extra")
            .is_some_and(|e| e.get("actions").is_some())
    {
        return actions;
    }
    let text = content_text(message);
    FENCES
        .iter()
        .find_map(|fence| {
            let start = text.find(fence)? + fence.len();
            let body = &text[start..];
            let body = body.strip_prefix('\n').unwrap_or(body);
            let end = body.find("```")?;
            Some(body[..end].trim_end().to_string())
        })
        .into_iter()
        .collect()
}

fn mini(
    messages: &[&Map<String, Value>],
    saved: Option<&Map<String, Value>>,
    id: String,
) -> TraceRecord<'static> {
    let info = saved.and_then(|s| s.get("info")).and_then(Value::as_object);
    let exit = messages.iter().rev().find(|m| role(m) == "exit");
    let exit_extra = exit.and_then(|m| m.get("extra")).and_then(Value::as_object);
    let prompt = messages
        .iter()
        .find(|m| role(m) == "user")
        .map(|m| content_text(m))
        .unwrap_or_default();
    let mut spans = tool_spans(&id, messages, |_| None);
    let times = message_times(messages);
    let null = Value::Null;
    let mut submitted: Option<String> = None;
    for (i, message) in messages.iter().enumerate() {
        if role(message) != "assistant" || !calls(message).is_empty() {
            continue;
        }
        let observation = messages
            .get(i + 1)
            .filter(|m| role(m) == "user" || role(m) == "exit")
            .map(|m| content_text(m));
        for (j, command) in text_commands(message).into_iter().enumerate() {
            if SUBMIT_MARKERS.iter().any(|k| command.contains(k)) {
                submitted.clone_from(&observation);
            }
            let result = observation.clone().map_or(Value::Null, Value::String);
            let mut span = tool_span(
                &id,
                i,
                &format!(".{j:03}"),
                ToolStep {
                    agent: None,
                    name: "bash",
                    arguments: &serde_json::json!({ "command": command }),
                    result: &result,
                    error: &null,
                    call_id: "",
                },
            );
            span.start_ns = times[i];
            span.end_ns = times.get(i + 1).copied().unwrap_or(0).max(times[i]);
            spans.push(span);
        }
    }
    let answer = [info, exit_extra]
        .iter()
        .flatten()
        .find_map(|m| m.get("submission").filter(|v| py_truthy(v)).map(py_str))
        .or_else(|| exit.map(|m| content_text(m)).filter(|t| !t.is_empty()))
        .or(submitted)
        .unwrap_or_default();
    let scenario = saved
        .and_then(|s| s.get("instance_id"))
        .filter(|v| py_truthy(v))
        .map_or_else(|| id.clone(), py_str);
    let mut attrs = info_attrs(info.or(exit_extra), scenario);
    if !attrs.contains_key(attr::TERMINATION)
        && let Some(status) = exit_extra
            .and_then(|e| e.get("exit_status"))
            .filter(|v| py_truthy(v))
    {
        attrs.insert(attr::TERMINATION.into(), py_str(status).into());
    }
    let mut root = root_span(&id, "mini-swe-agent", &prompt, &answer, attrs);
    root.start_ns = times.iter().copied().find(|&t| t != 0).unwrap_or(0);
    root.end_ns = times.iter().copied().max().unwrap_or(0);
    trace(id, root, spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::json::with_tape;
    use serde_json::json;

    fn detects(text: &str) -> bool {
        with_tape(text.as_bytes(), detect).unwrap()
    }

    #[test]
    fn info_resolved_is_the_recorded_outcome() {
        let attrs = |info: Value| {
            info_attrs(info.as_object(), "i".into())
                .get(attr::RECORDED_OUTCOME)
                .cloned()
        };
        assert_eq!(attrs(json!({"resolved": false})), Some(json!(false)));
        assert_eq!(attrs(json!({"resolved": true})), Some(json!(true)));
        assert_eq!(attrs(json!({"resolved": "yes"})), None);
        assert_eq!(attrs(json!({"exit_status": "Submitted"})), None);
    }

    #[test]
    fn detection() {
        assert!(detects(
            r#"{"trajectory": [{"action": "ls", "observation": ""}], "info": {}}"#
        ));
        assert!(detects(
            r#"{"messages": [], "trajectory_format": "mini-swe-agent-1.1"}"#
        ));
        assert!(detects(
            r#"[{"role": "system", "content": "To finish, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`"}]"#
        ));
        assert!(!detects(
            r#"[{"role": "system", "content": "You are helpful"}]"#
        ));
        assert!(!detects(r#"{"trajectory": [{"seq": 1}], "info": {}}"#));
    }

    #[test]
    fn a_fenced_command_is_a_bash_step_and_its_next_message_the_result() {
        let m = json!({"role": "assistant", "content": "THOUGHT: look\n\n```mswea_bash_command\nls -la\n```"});
        assert_eq!(text_commands(m.as_object().unwrap()), ["ls -la"]);
        let m = json!({"role": "assistant", "content": "x", "extra": {"actions": [{"command": "pwd"}]}});
        assert_eq!(text_commands(m.as_object().unwrap()), ["pwd"]);
        assert_eq!(command_tool("edit 'a' 'b' False\nmore"), "edit");
    }
}
