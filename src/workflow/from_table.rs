//! The workflow events of any recorded trace, read from the span and step tables (`check --workflow`).
//!
//! The rules in `rules` run over abstract [`Event`]s; this module maps one trace of a [`TraceBatch`]
//! onto them, so teams need not re-log their runs in the trajectory shape:
//!
//! - **actions**: tool steps; `action_type` is the tool name, `args` the step's arguments when they are a
//!   JSON object (anything else gives no arguments).
//! - **checkpoints**: a tool step whose tool is a checkpoint id the spec names, or a span carrying
//!   `faultgate.checkpoint = <id>`; `confirmed_by` comes from the span's `faultgate.confirmed_by`, else
//!   from a step's `confirmed_by` argument.
//! - **handoffs**: an `invoke_agent` span whose `gen_ai.agent.name` differs from the agent of its nearest
//!   ancestor that names one; a span with `from_agent` and `to_agent` attributes (the OpenAI Agents SDK's
//!   handoff span); or a `transfer_to_<agent>` tool call. The payload is the call's arguments, or the
//!   span's `faultgate.handoff.payload`; each field is read as `{"value": v, "verified": b}` or as a
//!   bare, unverified value.
//!
//! The agent of a step or span is the nearest agent name on the way up its parent chain. Events are
//! ordered by span start; ties keep trace order, a span's own events before the steps it backs. One
//! transfer often shows up twice or three times (the `transfer_to_` call, the handoff span, the receiving
//! `invoke_agent` span): a span-derived handoff directly after a handoff with the same two agents, from
//! a different source, is the same transfer and is merged into it, keeping the first non-empty payload.
//! Sequence numbers are the events' positions, from 1.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::event::{Action, Checkpoint, Event, Handoff, PayloadField};
use super::spec::Workflow;
use arrow_array::LargeStringArray;

use crate::table::columns::{Columns, opt};
use crate::table::record::attr::OP_INVOKE_AGENT;

/// The tool-name prefix of a handoff made as a tool call (`transfer_to_refunds`).
pub(crate) const TRANSFER_PREFIX: &str = "transfer_to_";

/// Where a handoff was read from; one transfer seen from two sources is merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Call,
    HandoffSpan,
    InvokeAgent,
}

/// An event before numbering, with its sort key (span start, span position, span events first, step).
struct Pending {
    key: (i64, usize, u8, usize),
    event: Event,
    source: Option<Source>,
}

/// Trace `t` of a check pass, addressed by span and step position within the trace.
struct Trace<'c, 'a> {
    cols: &'c Columns<'a>,
    first_span: usize,
    span_count: usize,
    first_step: usize,
    step_count: usize,
}

impl<'c, 'a> Trace<'c, 'a> {
    fn new(cols: &'c Columns<'a>, t: usize) -> Self {
        let (spans, steps) = (cols.span_rows(t), cols.step_rows(t));
        Trace {
            cols,
            first_span: spans.start,
            span_count: spans.len(),
            first_step: steps.start,
            step_count: steps.len(),
        }
    }

    fn span_opt(&self, column: &'a LargeStringArray, p: usize) -> Option<&'a str> {
        opt(column, self.first_span + p)
    }

    fn start(&self, p: usize) -> i64 {
        self.cols.start[self.first_span + p]
    }

    fn step_span(&self, i: usize) -> Option<usize> {
        self.cols.step_span(self.first_step + i)
    }

    fn tool(&self, i: usize) -> &'a str {
        self.cols.tool.value(self.first_step + i)
    }

    fn arguments(&self, i: usize) -> &'a str {
        self.cols.arguments.value(self.first_step + i)
    }
}

/// The events of trace `t`, in recorded order, numbered from 1.
pub(crate) fn trace_events(cols: &Columns<'_>, t: usize, workflow: &Workflow) -> Vec<Event> {
    let trace = &Trace::new(cols, t);
    let spans = trace.span_count;
    let (parents, agents) = owning_agents(trace);
    let start = |p: usize| trace.start(p);
    let mut pending: Vec<Pending> = Vec::new();
    // (span position, checkpoint id) of checkpoint steps, so the same span's attribute is not counted
    // again.
    let mut step_checkpoints: Vec<(usize, &str)> = Vec::new();

    for i in 0..trace.step_count {
        // Conformance is the agent's: a simulated user's own tool calls are no events of its workflow.
        if !cols.agent_step(trace.first_step + i) {
            continue;
        }
        let span = trace.step_span(i);
        let key = (span.map_or(0, start), span.unwrap_or(usize::MAX), 1, i);
        let agent = span.and_then(|p| agents[p]).unwrap_or_default().to_string();
        let tool = trace.tool(i);
        let args = object_arguments(trace.arguments(i));
        if names_checkpoint(workflow, tool) {
            let confirmed_by = span
                .and_then(|p| trace.span_opt(trace.cols.confirmed_by, p))
                .map(str::to_string)
                .or_else(|| {
                    args.get("confirmed_by")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
            if let Some(p) = span {
                step_checkpoints.push((p, tool));
            }
            pending.push(Pending {
                key,
                event: Event::Checkpoint(Checkpoint {
                    seq: 0,
                    agent,
                    checkpoint_id: tool.to_string(),
                    confirmed_by,
                }),
                source: None,
            });
        } else if let Some(to) = tool
            .strip_prefix(TRANSFER_PREFIX)
            .filter(|to| !to.is_empty())
        {
            pending.push(Pending {
                key,
                event: Event::Handoff(Handoff {
                    seq: 0,
                    from_agent: agent,
                    to_agent: to.to_string(),
                    payload: payload_fields(&args),
                }),
                source: Some(Source::Call),
            });
        } else {
            pending.push(Pending {
                key,
                event: Event::Action(Action {
                    seq: 0,
                    agent,
                    action_type: tool.to_string(),
                    args,
                }),
                source: None,
            });
        }
    }

    for p in 0..spans {
        let key = (start(p), p, 0, 0);
        let agent = || agents[p].unwrap_or_default().to_string();
        if let Some(id) = trace.span_opt(trace.cols.checkpoint, p)
            && !step_checkpoints.contains(&(p, id))
        {
            pending.push(Pending {
                key,
                event: Event::Checkpoint(Checkpoint {
                    seq: 0,
                    agent: agent(),
                    checkpoint_id: id.to_string(),
                    confirmed_by: trace
                        .span_opt(trace.cols.confirmed_by, p)
                        .map(str::to_string),
                }),
                source: None,
            });
        }
        let payload = || {
            trace
                .span_opt(trace.cols.handoff_payload, p)
                .map(object_arguments)
                .map(|args| payload_fields(&args))
                .unwrap_or_default()
        };
        let handoff = match (
            trace.span_opt(trace.cols.handoff_from, p),
            trace.span_opt(trace.cols.handoff_to, p),
        ) {
            (Some(from), Some(to)) => Some((from, to, Source::HandoffSpan)),
            _ => invoked_agent(trace, &parents, &agents, p)
                .map(|(from, to)| (from, to, Source::InvokeAgent)),
        };
        if let Some((from, to, source)) = handoff {
            pending.push(Pending {
                key,
                event: Event::Handoff(Handoff {
                    seq: 0,
                    from_agent: from.to_string(),
                    to_agent: to.to_string(),
                    payload: payload(),
                }),
                source: Some(source),
            });
        }
    }

    pending.sort_by_key(|e| e.key);
    let mut out: Vec<Event> = Vec::with_capacity(pending.len());
    let mut last_sources: Vec<Source> = Vec::new();
    for Pending { event, source, .. } in pending {
        if let (Event::Handoff(next), Some(source)) = (&event, source)
            && source != Source::Call
            && let Some(Event::Handoff(previous)) = out.last_mut()
            && previous.from_agent == next.from_agent
            && previous.to_agent == next.to_agent
            && !last_sources.contains(&source)
        {
            if previous.payload.is_empty() {
                previous.payload.clone_from(&next.payload);
            }
            last_sources.push(source);
            continue;
        }
        last_sources = source.into_iter().collect();
        out.push(event);
    }
    for (i, event) in out.iter_mut().enumerate() {
        let seq = i as i64 + 1;
        match event {
            Event::Action(a) => a.seq = seq,
            Event::Checkpoint(c) => c.seq = seq,
            Event::Handoff(h) => h.seq = seq,
        }
    }
    out
}

fn names_checkpoint(workflow: &Workflow, tool: &str) -> bool {
    workflow.checkpoints.iter().any(|c| c.checkpoint_id == tool)
}

/// Each span's parent position, and the agent it belongs to: its own `gen_ai.agent.name`, else its
/// nearest ancestor's.
#[allow(clippy::type_complexity)]
fn owning_agents<'a>(trace: &Trace<'_, 'a>) -> (Vec<Option<usize>>, Vec<Option<&'a str>>) {
    let n = trace.span_count;
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(n);
    for p in 0..n {
        position
            .entry(trace.cols.span_id.value(trace.first_span + p))
            .or_insert(p);
    }
    let parent: Vec<Option<usize>> = (0..n)
        .map(|p| {
            trace
                .span_opt(trace.cols.parent, p)
                .and_then(|id| position.get(id).copied())
                .filter(|&q| q != p)
        })
        .collect();
    // Resolved walking up with memoisation; a parent cycle (bad input) ends the walk with no agent.
    let mut owner: Vec<Option<Option<&'a str>>> = vec![None; n];
    let mut path: Vec<usize> = Vec::new();
    for p in 0..n {
        let mut at = Some(p);
        let resolved = loop {
            let Some(q) = at else { break None };
            if let Some(known) = owner[q] {
                break known;
            }
            if let Some(name) = trace
                .span_opt(trace.cols.agent_name, q)
                .filter(|name| !name.is_empty())
            {
                owner[q] = Some(Some(name));
                break Some(name);
            }
            if path.len() > n {
                break None;
            }
            path.push(q);
            at = parent[q];
        };
        for q in path.drain(..) {
            owner[q] = Some(resolved);
        }
    }
    (parent, owner.into_iter().map(Option::flatten).collect())
}

/// (parent agent, invoked agent) when span `p` is an `invoke_agent` span of another agent than the one
/// above it.
fn invoked_agent<'a>(
    trace: &Trace<'_, 'a>,
    parents: &[Option<usize>],
    agents: &[Option<&'a str>],
    p: usize,
) -> Option<(&'a str, &'a str)> {
    if trace.span_opt(trace.cols.operation, p) != Some(OP_INVOKE_AGENT) {
        return None;
    }
    let to = trace
        .span_opt(trace.cols.agent_name, p)
        .filter(|n| !n.is_empty())?;
    let from = agents[parents[p]?]?;
    (from != to).then_some((from, to))
}

/// A step's arguments (or a payload attribute) as a JSON object; anything else is no arguments.
fn object_arguments(text: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn payload_fields(args: &Map<String, Value>) -> Vec<PayloadField> {
    args.iter()
        .map(|(name, entry)| PayloadField::from_entry(name, entry))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::table::record::{SpanRecord, attr};
    use crate::table::testing::TraceSpec;

    type Span = SpanRecord<'static>;
    use crate::table::TraceBatch;
    use crate::workflow::SpecConfig;

    fn workflow() -> Workflow {
        let config: SpecConfig = serde_json::from_value(json!({
            "mandatory_checkpoints": [{"checkpoint_id": "confirm", "must_precede": "send"}]
        }))
        .expect("spec");
        Workflow::compile(config).expect("valid spec")
    }

    fn events_of(spec: TraceSpec) -> Vec<Event> {
        let batch = TraceBatch::build(&[spec.build()]);
        trace_events(&Columns::new(&batch), 0, &workflow())
    }

    fn agent_span(id: &str, parent: &str, name: &str, start: i64) -> impl FnOnce(&mut Span) {
        let (id, parent, name) = (id.to_string(), parent.to_string(), name.to_string());
        move |span: &mut Span| {
            span.span_id = id.into();
            span.parent_id = Some(parent.into());
            span.start_ns = start;
            span.attrs
                .insert(attr::OPERATION_NAME.into(), json!("invoke_agent"));
            span.attrs.insert(attr::AGENT_NAME.into(), json!(name));
        }
    }

    fn handoff(event: &Event) -> &Handoff {
        match event {
            Event::Handoff(h) => h,
            other => panic!("expected a handoff, got {other:?}"),
        }
    }

    #[test]
    fn one_transfer_recorded_three_ways_is_one_handoff_with_the_call_payload() {
        let spec = TraceSpec::new()
            .root_attr(attr::AGENT_NAME, json!("triage"))
            .step(
                "transfer_to_billing",
                r#"{"order_id": {"value": "o7", "verified": true}, "note": "late"}"#,
                "ok",
            )
            .chat_span(|s| {
                s.name = "handoff".into();
                s.attrs.insert("from_agent".into(), json!("triage"));
                s.attrs.insert("to_agent".into(), json!("billing"));
            })
            .chat_span(agent_span("billing", "root", "billing", 1_030))
            .span_with("refund", r#"{"order_id": "o7"}"#, "ok", |s| {
                s.parent_id = Some("billing".into());
                s.start_ns = 1_040;
            });
        let events = events_of(spec);
        assert_eq!(events.len(), 2, "{events:?}");
        let h = handoff(&events[0]);
        assert_eq!((h.seq, h.border().as_str()), (1, "triage->billing"));
        assert_eq!(h.payload.len(), 2);
        assert!(h.field("order_id").is_some_and(|f| f.verified));
        assert!(h.field("note").is_some_and(|f| !f.verified));
        match &events[1] {
            Event::Action(a) => {
                assert_eq!((a.seq, a.agent.as_str()), (2, "billing"));
                assert_eq!(a.args.get("order_id"), Some(&json!("o7")));
            }
            other => panic!("expected the refund action, got {other:?}"),
        }
    }

    #[test]
    fn invoke_agent_hands_off_only_to_a_different_agent_and_carries_its_payload() {
        let spec = TraceSpec::new()
            .root_attr(attr::AGENT_NAME, json!("lead"))
            .chat_span(agent_span("again", "root", "lead", 1_010))
            .chat_span(|s| {
                agent_span("sub", "again", "worker", 1_020)(s);
                s.attrs.insert(
                    attr::HANDOFF_PAYLOAD.into(),
                    json!(r#"{"rows": {"value": 3, "verified": false}}"#),
                );
            });
        let events = events_of(spec);
        assert_eq!(events.len(), 1, "{events:?}");
        let h = handoff(&events[0]);
        assert_eq!(h.border(), "lead->worker");
        assert_eq!(
            h.field("rows").map(|f| (&f.value, f.verified)),
            Some((&json!(3), false))
        );
    }

    #[test]
    fn checkpoints_come_from_named_steps_and_span_attributes_once_each() {
        let spec = TraceSpec::new()
            .span_with("confirm", r#"{"confirmed_by": "owner"}"#, "yes", |s| {
                // The same checkpoint also marked on its own span: still one checkpoint.
                s.attrs.insert(attr::CHECKPOINT.into(), json!("confirm"));
            })
            .chat_span(|s| {
                s.attrs.insert(attr::CHECKPOINT.into(), json!("review"));
                s.attrs.insert(attr::CONFIRMED_BY.into(), json!("lead"));
            })
            .step("send", "not json", "sent");
        let events = events_of(spec);
        let seen: Vec<(i64, String, Option<String>)> = events
            .iter()
            .map(|e| match e {
                Event::Checkpoint(c) => (c.seq, c.checkpoint_id.clone(), c.confirmed_by.clone()),
                Event::Action(a) => {
                    assert!(a.args.is_empty(), "non-object arguments give no args");
                    (a.seq, a.action_type.clone(), None)
                }
                Event::Handoff(h) => (h.seq, h.border(), None),
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1, "confirm".to_string(), Some("owner".to_string())),
                (2, "review".to_string(), Some("lead".to_string())),
                (3, "send".to_string(), None),
            ]
        );
    }

    #[test]
    fn a_parent_cycle_ends_the_agent_walk() {
        let spec = TraceSpec::new()
            .chat_span(|s| {
                s.span_id = "a".into();
                s.parent_id = Some("b".into());
            })
            .chat_span(|s| {
                s.span_id = "b".into();
                s.parent_id = Some("a".into());
            })
            .span_with("send", "{}", "ok", |s| s.parent_id = Some("a".into()));
        let events = events_of(spec);
        assert_eq!(events.len(), 1);
        assert!(matches!(&events[0], Event::Action(a) if a.agent.is_empty()));
    }
}
