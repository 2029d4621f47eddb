//! What a trace says, derived from its spans: prompt, answer, termination, scenario key, tool steps,
//! usage, latency and cost (the GenAI conventions as faultgate 0.4.1 reads them).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::model::{RawTrace, Span, attr};
use crate::pyfmt::{py_str, py_strip, py_truthy};
use crate::pyjson::dumps_spaced;

/// One tool call, as the checks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub tool: String,
    pub arguments: String,
    pub result: String,
    /// The span that ran the tool, or the chat span that requested it.
    pub span_id: String,
}

/// Everything the tables keep about one trace besides its spans.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFacts {
    pub root: Option<usize>,
    pub prompt: String,
    pub answer: String,
    pub termination: String,
    pub scenario: String,
    pub steps: Vec<Step>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub latency_ms: Option<f64>,
    pub cost_usd: Option<f64>,
}

impl TraceFacts {
    /// The `tokens` measure: the sum of all usage values, or `None` when no span recorded usage.
    pub fn tokens(&self) -> Option<f64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) as f64 + b.unwrap_or(0) as f64),
        }
    }

    /// Returns true if and only if the trace carries any content a rule can read.
    pub fn has_content(&self) -> bool {
        !self.prompt.is_empty()
            || !self.answer.is_empty()
            || self
                .steps
                .iter()
                .any(|s| !s.arguments.is_empty() || !s.result.is_empty())
    }
}

/// Derives the facts of one trace.
pub fn derive(trace: &RawTrace) -> TraceFacts {
    let spans = &trace.spans;
    let root = crate::ingest::formats::otlp::root_position(spans);
    let prompt = find_text(
        spans,
        root,
        attr::INPUT_MESSAGES,
        "user",
        attr::PROMPT,
        false,
    );
    let answer = find_text(
        spans,
        root,
        attr::OUTPUT_MESSAGES,
        "assistant",
        attr::COMPLETION,
        true,
    );
    let termination = root
        .and_then(|r| spans[r].attr(attr::TERMINATION))
        .map(py_str)
        .unwrap_or_default();
    let scenario = scenario_key(root.map(|r| &spans[r]), &prompt);
    let steps = steps(spans);
    let (input_tokens, output_tokens) = usage(spans);
    TraceFacts {
        root,
        prompt,
        answer,
        termination,
        scenario,
        steps,
        input_tokens,
        output_tokens,
        latency_ms: latency_ms(spans, root),
        cost_usd: cost(spans),
    }
}

/// The scenario key: `faultgate.scenario`, else `gen_ai.agent.id`, else a hash of the prompt.
pub fn scenario_key(root: Option<&Span>, prompt: &str) -> String {
    if let Some(root) = root {
        for key in [attr::SCENARIO, attr::AGENT_ID] {
            if let Some(v) = root.attr(key).filter(|v| py_truthy(v)) {
                return py_str(v);
            }
        }
    }
    let digest = Sha256::digest(prompt.as_bytes());
    let mut key = String::with_capacity(14);
    key.push_str("p-");
    for byte in &digest[..6] {
        key.push_str(&format!("{byte:02x}"));
    }
    key
}

fn find_text(
    spans: &[Span],
    root: Option<usize>,
    messages_key: &str,
    role: &str,
    legacy_key: &str,
    reverse: bool,
) -> String {
    let read = |span: &Span| -> String {
        let text = span
            .attr(messages_key)
            .map(|v| message_text(v, role))
            .unwrap_or_default();
        if text.is_empty() {
            span.attr(legacy_key).map(py_str).unwrap_or_default()
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
    let mut order: Box<dyn Iterator<Item = &Span>> = if reverse {
        Box::new(spans.iter().rev())
    } else {
        Box::new(spans.iter())
    };
    order
        .find_map(|span| {
            let text = read(span);
            (!py_strip(&text).is_empty()).then_some(text)
        })
        .unwrap_or_default()
}

/// The text of the messages with `role` in a messages attribute (a JSON string or a list).
pub fn message_text(value: &Value, role: &str) -> String {
    let parsed;
    let list = match value {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => {
                parsed = v;
                match &parsed {
                    Value::Array(items) => items,
                    _ => return String::new(),
                }
            }
            Err(_) => return s.clone(),
        },
        Value::Array(items) => items,
        _ => return String::new(),
    };
    let mut pieces: Vec<String> = Vec::new();
    for message in list.iter().filter_map(Value::as_object) {
        if message.get("role").and_then(Value::as_str) != Some(role) {
            continue;
        }
        let parts = message.get("parts").and_then(Value::as_array);
        for part in parts.into_iter().flatten().filter_map(Value::as_object) {
            if part.get("type").and_then(Value::as_str) == Some("text") {
                let text = part.get("content").or_else(|| part.get("text"));
                pieces.push(text.map(py_str).unwrap_or_default());
            }
        }
        if let Some(content) = message.get("content")
            && parts.is_none_or(Vec::is_empty)
        {
            pieces.push(py_str(content));
        }
    }
    pieces.join("\n")
}

/// The list of messages in a messages attribute, when it holds one and it may hold a part of type
/// `part_type`. A JSON string is only parsed when that type can occur in it: written literally, or
/// through a `\\u` escape (the only JSON escape that can spell a letter).
fn message_list<'v>(value: Option<&'v Value>, part_type: &str) -> Cow<'v, [Value]> {
    match value {
        Some(Value::String(s)) if s.contains(part_type) || s.contains("\\u") => {
            match serde_json::from_str::<Value>(s) {
                Ok(Value::Array(items)) => Cow::Owned(items),
                _ => Cow::Borrowed(&[]),
            }
        }
        Some(Value::Array(items)) => Cow::Borrowed(items),
        _ => Cow::Borrowed(&[]),
    }
}

/// Returns true if and only if the span ran a tool (`execute_tool`, by operation or by span name).
pub fn is_tool_span(span: &Span) -> bool {
    match span.attr(attr::OPERATION_NAME) {
        Some(op) => op.as_str() == Some(attr::OP_EXECUTE_TOOL),
        None => span.name == attr::OP_EXECUTE_TOOL || span.name.starts_with("execute_tool "),
    }
}

/// The tool a tool span ran. Spans named `execute_tool <tool>` without `gen_ai.tool.name` name the tool
/// after the prefix, as the GenAI conventions intend.
fn tool_span_name(span: &Span) -> String {
    if let Some(name) = span.attr(attr::TOOL_NAME) {
        return py_str(name);
    }
    match span.name.strip_prefix("execute_tool ") {
        Some(tool) if !tool.trim().is_empty() => tool.to_string(),
        _ => span.name.clone(),
    }
}

/// A tool payload as text: JSON containers re-serialised, text parts unwrapped.
pub fn payload_text(v: &Value) -> String {
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
        Value::Array(_) | Value::Object(_) => dumps_spaced(v),
        other => py_str(other),
    }
}

/// Tool steps: tool spans first, plus tool calls found only in chat messages, in time order.
pub fn steps(spans: &[Span]) -> Vec<Step> {
    let mut responses: HashMap<String, String> = HashMap::new();
    for span in spans {
        for message in message_list(span.attr(attr::INPUT_MESSAGES), "tool_call_response").iter() {
            let Some(parts) = message.get("parts").and_then(Value::as_array) else {
                continue;
            };
            for part in parts.iter().filter_map(Value::as_object) {
                if part.get("type").and_then(Value::as_str) != Some("tool_call_response") {
                    continue;
                }
                let Some(id) = part.get("id").filter(|id| py_truthy(id)) else {
                    continue;
                };
                let mut result = payload_text(part.get("result").unwrap_or(&Value::Null));
                let is_error = part.get("is_error") == Some(&Value::Bool(true))
                    || part.get("error").is_some_and(py_truthy)
                    || matches!(
                        py_str(part.get("status").unwrap_or(&Value::Null))
                            .to_lowercase()
                            .as_str(),
                        "error" | "failed"
                    );
                if is_error && !result.starts_with("Error: ") {
                    result.insert_str(0, "Error: ");
                }
                responses.insert(py_str(id), result);
            }
        }
    }
    let mut calls: Vec<(String, Step)> = Vec::new();
    for span in spans {
        for message in message_list(span.attr(attr::OUTPUT_MESSAGES), "tool_call").iter() {
            let Some(parts) = message.get("parts").and_then(Value::as_array) else {
                continue;
            };
            for part in parts.iter().filter_map(Value::as_object) {
                if part.get("type").and_then(Value::as_str) != Some("tool_call") {
                    continue;
                }
                let call_id = part.get("id").map(py_str).unwrap_or_default();
                let step = Step {
                    tool: part
                        .get("name")
                        .map_or_else(|| "unknown".to_string(), py_str),
                    arguments: payload_text(part.get("arguments").unwrap_or(&Value::Null)),
                    result: responses.get(&call_id).cloned().unwrap_or_default(),
                    span_id: span.span_id.clone(),
                };
                calls.push((call_id, step));
            }
        }
    }
    let tool_spans: Vec<&Span> = spans.iter().filter(|s| is_tool_span(s)).collect();
    if tool_spans.is_empty() {
        return calls.into_iter().map(|(_, step)| step).collect();
    }
    let text_attr = |span: &Span, key: &str| span.attr(key).map(py_str).unwrap_or_default();
    let mut out: Vec<Step> = tool_spans
        .iter()
        .map(|span| Step {
            tool: tool_span_name(span),
            arguments: text_attr(span, attr::TOOL_CALL_ARGUMENTS),
            result: text_attr(span, attr::TOOL_CALL_RESULT),
            span_id: span.span_id.clone(),
        })
        .collect();
    let executed: HashSet<String> = tool_spans
        .iter()
        .filter_map(|s| {
            s.attr(attr::TOOL_CALL_ID)
                .filter(|v| py_truthy(v))
                .map(py_str)
        })
        .collect();
    out.extend(
        calls
            .into_iter()
            .filter(|(id, _)| !executed.contains(id))
            .map(|(_, step)| step),
    );
    let starts: HashMap<&str, i64> = spans
        .iter()
        .map(|s| (s.span_id.as_str(), s.start_ns))
        .collect();
    out.sort_by_key(|step| starts.get(step.span_id.as_str()).copied().unwrap_or(0));
    out
}

fn usage(spans: &[Span]) -> (Option<i64>, Option<i64>) {
    let sum = |key: &str| -> Option<i64> {
        spans
            .iter()
            .filter_map(|s| s.attr(key))
            .filter_map(|v| match v {
                Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64)),
                _ => None,
            })
            .fold(None, |acc: Option<i64>, n| {
                Some(acc.unwrap_or(0).saturating_add(n))
            })
    };
    (sum(attr::INPUT_TOKENS), sum(attr::OUTPUT_TOKENS))
}

fn latency_ms(spans: &[Span], root: Option<usize>) -> Option<f64> {
    if let Some(root) = root.map(|r| &spans[r])
        && root.start_ns != 0
        && root.end_ns != 0
        && root.end_ns >= root.start_ns
    {
        return Some((root.end_ns - root.start_ns) as f64 / 1e6);
    }
    let end = spans.iter().map(|s| s.end_ns).filter(|&e| e != 0).max()?;
    let start = spans.iter().map(|s| s.start_ns).filter(|&s| s != 0).min()?;
    (end >= start).then(|| (end - start) as f64 / 1e6)
}

fn cost(spans: &[Span]) -> Option<f64> {
    let mut total: Option<f64> = None;
    for v in spans.iter().filter_map(|s| s.attr(attr::COST_USD)) {
        let amount = match v {
            Value::Number(n) => n.as_f64(),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        };
        if let Some(a) = amount {
            total = Some(total.unwrap_or(0.0) + a);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat_span(id: &str, start: i64, input: &str, output: &str) -> Span {
        let mut attrs = serde_json::Map::new();
        attrs.insert(attr::INPUT_MESSAGES.into(), Value::String(input.into()));
        attrs.insert(attr::OUTPUT_MESSAGES.into(), Value::String(output.into()));
        Span {
            span_id: id.into(),
            parent_id: None,
            name: "chat".into(),
            start_ns: start,
            end_ns: start + 1,
            attrs,
            status_code: 0,
            status_message: String::new(),
        }
    }

    #[test]
    fn tool_calls_spelled_with_escapes_are_still_read() {
        // `\u0074ool_call` spells `tool_call`; the substring shortcut must not hide it.
        let output = r#"[{"role": "assistant", "parts": [{"type": "\u0074ool_call", "id": "c1", "name": "search", "arguments": {"q": 1}}]}]"#;
        let input = r#"[{"role": "tool", "parts": [{"type": "tool_call_respons\u0065", "id": "c1", "result": "[]"}]}]"#;
        let spans = [
            chat_span("a", 1, "[]", output),
            chat_span("b", 2, input, "[]"),
        ];
        let steps = steps(&spans);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].tool, "search");
        assert_eq!(steps[0].arguments, r#"{"q": 1}"#);
        assert_eq!(steps[0].result, "[]");
    }

    #[test]
    fn messages_without_tool_parts_give_no_steps() {
        let spans = [chat_span(
            "a",
            1,
            r#"[{"role": "user", "content": "hi"}]"#,
            r#"[{"role": "assistant", "parts": [{"type": "text", "content": "tool_call"}]}]"#,
        )];
        assert!(steps(&spans).is_empty());
    }
}
