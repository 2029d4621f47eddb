//! The `trajectory` JSON-lines reader: one event per line, turned into [`Event`]s plus the final outcome.
//!
//! Line shape (`ts` is informative and not read):
//!
//! ```text
//! {"seq": 1, "ts": "...", "agent": "scanner", "event": "action", "action_type": "scan", "rows": 10}
//! {"seq": 2, "ts": "...", "agent": "reporter", "event": "checkpoint", "checkpoint_id": "confirm", "confirmed_by": "owner"}
//! {"seq": 3, "ts": "...", "agent": "scanner", "event": "handoff", "from_agent": "scanner", "to_agent": "aggregator",
//!  "payload": {"row_count": {"value": 10, "verified": true}, "source": "db"}}
//! {"seq": 4, "ts": "...", "agent": "reporter", "event": "final", "task_success": true}
//! ```
//!
//! An action's arguments are its free fields (everything but `seq`, `ts`, `agent`, `event`,
//! `action_type`). Whitespace-only lines are skipped. Anything else that does not fit fails the whole
//! file closed, with the line number: the gate never passes a run it could not read.

use std::path::Path;

use serde_json::{Map, Value};

use super::event::{Action, Checkpoint, Event, Handoff, PayloadField};

/// A trajectory read whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// Actions, checkpoints and handoffs; the final event is kept apart.
    pub events: Vec<Event>,
    /// Agents in order of first mention (emitting agent, then handoff endpoints).
    pub agents: Vec<String>,
    pub final_outcome: FinalOutcome,
}

impl Trajectory {
    /// Events recorded in the file, the final one included.
    pub fn event_count(&self) -> usize {
        self.events.len() + 1
    }
}

/// The run's own verdict on itself: printed for contrast, never read by the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalOutcome {
    pub seq: i64,
    pub task_success: bool,
}

/// Why a trajectory is bad input; `line` is 1-based when the problem sits on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrajectoryError {
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for TrajectoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

fn at_line(line: usize, message: impl Into<String>) -> TrajectoryError {
    TrajectoryError {
        line: Some(line),
        message: message.into(),
    }
}

const ENVELOPE_KEYS: [&str; 5] = ["seq", "ts", "agent", "event", "action_type"];

/// Reads a trajectory file.
pub(crate) fn read_trajectory(path: &Path) -> Result<Trajectory, TrajectoryError> {
    let bytes = crate::sidefile::read(path).map_err(|e| TrajectoryError {
        line: None,
        message: if e.kind() == std::io::ErrorKind::NotFound {
            "no such file".to_string()
        } else {
            format!("cannot read: {e}")
        },
    })?;
    parse_trajectory(&bytes)
}

/// Parses trajectory JSON lines.
pub(crate) fn parse_trajectory(bytes: &[u8]) -> Result<Trajectory, TrajectoryError> {
    let mut events = Vec::new();
    let mut agents: Vec<String> = Vec::new();
    let mut final_outcome: Option<(usize, FinalOutcome)> = None;
    let mut previous_seq: Option<i64> = None;
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = std::str::from_utf8(raw).map_err(|e| {
            at_line(
                line,
                format!(
                    "unparseable JSONL: invalid UTF-8 (byte {})",
                    e.valid_up_to() + 1
                ),
            )
        })?;
        // `FromStr` reuses serde_json's own instantiation of the parser, already optimised even in
        // debug builds; a `from_slice::<Value>` here would be compiled afresh at the caller's opt-level.
        let value: Value = text.parse().map_err(|e| at_line(line, unparseable(&e)))?;
        let Value::Object(record) = value else {
            return Err(at_line(line, "event is not a JSON object"));
        };
        if let Some((final_line, _)) = &final_outcome {
            return Err(at_line(
                line,
                format!("event after final (final at line {final_line})"),
            ));
        }
        let seq = match record.get("seq") {
            None => return Err(at_line(line, "missing 'seq'")),
            Some(v) => v
                .as_i64()
                .ok_or_else(|| at_line(line, "'seq' must be an integer"))?,
        };
        if let Some(previous) = previous_seq
            && seq <= previous
        {
            return Err(at_line(
                line,
                format!("seq {seq} is not greater than the previous seq {previous}"),
            ));
        }
        previous_seq = Some(seq);
        let agent = text_field(&record, "agent", line)?;
        note_agent(&mut agents, agent);
        let kind = text_field(&record, "event", line)?;
        match kind {
            "action" => events.push(Event::Action(Action {
                seq,
                agent: agent.to_string(),
                action_type: text_field(&record, "action_type", line)?.to_string(),
                args: free_fields(&record),
            })),
            "checkpoint" => {
                let confirmed_by = match record.get("confirmed_by") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(at_line(line, "'confirmed_by' must be a string")),
                };
                events.push(Event::Checkpoint(Checkpoint {
                    seq,
                    agent: agent.to_string(),
                    checkpoint_id: text_field(&record, "checkpoint_id", line)?.to_string(),
                    confirmed_by,
                }));
            }
            "handoff" => {
                let from_agent = text_field(&record, "from_agent", line)?;
                let to_agent = text_field(&record, "to_agent", line)?;
                let Some(Value::Object(payload)) = record.get("payload") else {
                    return Err(at_line(line, "handoff 'payload' must be a JSON object"));
                };
                note_agent(&mut agents, from_agent);
                note_agent(&mut agents, to_agent);
                events.push(Event::Handoff(Handoff {
                    seq,
                    from_agent: from_agent.to_string(),
                    to_agent: to_agent.to_string(),
                    payload: payload
                        .iter()
                        .map(|(name, entry)| PayloadField::from_entry(name, entry))
                        .collect(),
                }));
            }
            "final" => {
                let Some(Value::Bool(task_success)) = record.get("task_success") else {
                    return Err(at_line(line, "final event needs a boolean 'task_success'"));
                };
                final_outcome = Some((
                    line,
                    FinalOutcome {
                        seq,
                        task_success: *task_success,
                    },
                ));
            }
            other => {
                return Err(at_line(
                    line,
                    format!(
                        "unknown event '{other}' (expected action, checkpoint, handoff or final)"
                    ),
                ));
            }
        }
    }
    let Some((_, final_outcome)) = final_outcome else {
        let message = if events.is_empty() {
            "empty trajectory: no events"
        } else {
            "missing final event"
        };
        return Err(TrajectoryError {
            line: None,
            message: message.to_string(),
        });
    };
    Ok(Trajectory {
        events,
        agents,
        final_outcome,
    })
}

/// serde's message without its "at line 1 column N" (each record is one line; the file line is ours).
fn unparseable(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    format!("unparseable JSONL: {message} (column {})", e.column())
}

fn text_field<'a>(
    record: &'a Map<String, Value>,
    key: &str,
    line: usize,
) -> Result<&'a str, TrajectoryError> {
    match record.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(at_line(line, format!("'{key}' must be a string"))),
        None => Err(at_line(line, format!("missing '{key}'"))),
    }
}

fn free_fields(record: &Map<String, Value>) -> Map<String, Value> {
    record
        .iter()
        .filter(|(k, _)| !ENVELOPE_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn note_agent(agents: &mut Vec<String>, agent: &str) {
    if !agents.iter().any(|a| a == agent) {
        agents.push(agent.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Trajectory, String> {
        parse_trajectory(text.as_bytes()).map_err(|e| e.to_string())
    }

    const GOOD: &str = r#"{"seq": 1, "agent": "a", "event": "action", "action_type": "scan", "rows": 3}
{"seq": 2, "agent": "a", "event": "handoff", "from_agent": "a", "to_agent": "b", "payload": {"n": {"value": 3, "verified": true}, "s": "db"}}

{"seq": 5, "agent": "b", "event": "checkpoint", "checkpoint_id": "confirm", "confirmed_by": "owner"}
{"seq": 6, "agent": "b", "event": "final", "task_success": true}
"#;

    #[test]
    fn reads_every_event_kind() {
        let t = parse(GOOD).unwrap();
        assert_eq!(t.event_count(), 4);
        assert_eq!(t.agents, ["a", "b"]);
        assert!(t.final_outcome.task_success);
        let Event::Action(action) = &t.events[0] else {
            panic!()
        };
        assert_eq!(action.action_type, "scan");
        assert_eq!(action.args.get("rows"), Some(&serde_json::json!(3)));
        assert_eq!(action.args.len(), 1);
        let Event::Handoff(h) = &t.events[1] else {
            panic!()
        };
        assert!(h.field("n").unwrap().verified);
        assert!(!h.field("s").unwrap().verified);
        let Event::Checkpoint(c) = &t.events[2] else {
            panic!()
        };
        assert_eq!(c.confirmed_by.as_deref(), Some("owner"));
    }

    #[test]
    fn truncated_line_names_its_number() {
        let text = "{\"seq\": 1, \"agent\": \"a\", \"event\": \"action\", \"action_type\": \"x\"}\n{\"seq\": 2, \"ag";
        let err = parse(text).unwrap_err();
        assert!(
            err.starts_with("line 2: unparseable JSONL: EOF while parsing"),
            "{err}"
        );
    }

    #[test]
    fn structural_problems_fail_closed() {
        assert_eq!(parse("").unwrap_err(), "empty trajectory: no events");
        assert_eq!(parse("\n  \n").unwrap_err(), "empty trajectory: no events");
        assert_eq!(
            parse(r#"{"seq": 1, "agent": "a", "event": "action", "action_type": "x"}"#)
                .unwrap_err(),
            "missing final event"
        );
        let after = "{\"seq\": 1, \"agent\": \"a\", \"event\": \"final\", \"task_success\": true}\n{\"seq\": 2, \"agent\": \"a\", \"event\": \"action\", \"action_type\": \"x\"}";
        assert_eq!(
            parse(after).unwrap_err(),
            "line 2: event after final (final at line 1)"
        );
        let order = "{\"seq\": 2, \"agent\": \"a\", \"event\": \"action\", \"action_type\": \"x\"}\n{\"seq\": 2, \"agent\": \"a\", \"event\": \"final\", \"task_success\": true}";
        assert_eq!(
            parse(order).unwrap_err(),
            "line 2: seq 2 is not greater than the previous seq 2"
        );
        assert_eq!(
            parse(r#"{"seq": 1, "agent": "a", "event": "final", "task_success": "yes"}"#)
                .unwrap_err(),
            "line 1: final event needs a boolean 'task_success'"
        );
        assert_eq!(
            parse(r#"{"seq": 1.5, "agent": "a", "event": "final", "task_success": true}"#)
                .unwrap_err(),
            "line 1: 'seq' must be an integer"
        );
        assert_eq!(
            parse(r#"{"seq": 1, "agent": "a", "event": "note"}"#).unwrap_err(),
            "line 1: unknown event 'note' (expected action, checkpoint, handoff or final)"
        );
        assert_eq!(
            parse("[1]").unwrap_err(),
            "line 1: event is not a JSON object"
        );
    }
}
