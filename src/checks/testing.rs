//! Small hand-built traces for the checks' unit tests.

use serde_json::{Map, Value, json};

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, Float64Array};

use super::{Check, CheckContext, Columns, Reasons, Verdict, VerdictColumn};
use crate::redact::Redaction;
use crate::table::TraceBatch;
use crate::table::record::{Attrs, SpanRecord, TraceRecord, attr};

type Span = SpanRecord<'static>;

/// A trace under construction: a root span plus tool spans, one per step.
pub(crate) struct TraceSpec {
    root: Span,
    children: Vec<Span>,
}

impl TraceSpec {
    pub(crate) fn new() -> TraceSpec {
        let mut attrs = Map::new();
        attrs.insert(attr::OPERATION_NAME.into(), json!("invoke_agent"));
        TraceSpec {
            root: Span {
                span_id: "root".into(),
                parent_id: None,
                name: "invoke_agent".into(),
                start_ns: 1_000,
                end_ns: 9_000_000,
                attrs: Attrs::from_map(attrs),
                ..Span::default()
            },
            children: Vec::new(),
        }
    }

    pub(crate) fn root_attr(mut self, key: &str, value: Value) -> Self {
        self.root.attrs.insert(key.to_string(), value);
        self
    }

    pub(crate) fn prompt(self, text: &str) -> Self {
        self.root_attr(attr::PROMPT, json!(text))
    }

    pub(crate) fn answer(self, text: &str) -> Self {
        self.root_attr(attr::COMPLETION, json!(text))
    }

    pub(crate) fn termination(self, text: &str) -> Self {
        self.root_attr(attr::TERMINATION, json!(text))
    }

    pub(crate) fn root_status(mut self, code: i64) -> Self {
        self.root.status_code = code;
        self
    }

    /// Adds a tool span running `tool` with these arguments and result.
    pub(crate) fn step(self, tool: &str, arguments: &str, result: &str) -> Self {
        self.span_with(tool, arguments, result, |_| {})
    }

    /// Adds a tool span and lets the caller adjust it (status, attributes).
    pub(crate) fn span_with(
        mut self,
        tool: &str,
        arguments: &str,
        result: &str,
        adjust: impl FnOnce(&mut Span),
    ) -> Self {
        let n = self.children.len() + 1;
        let mut attrs = Map::new();
        attrs.insert(attr::OPERATION_NAME.into(), json!("execute_tool"));
        attrs.insert(attr::TOOL_NAME.into(), json!(tool));
        attrs.insert(attr::TOOL_CALL_ARGUMENTS.into(), json!(arguments));
        attrs.insert(attr::TOOL_CALL_RESULT.into(), json!(result));
        let mut span = Span {
            span_id: format!("s{n}").into(),
            parent_id: Some("root".into()),
            name: format!("execute_tool {tool}").into(),
            start_ns: 1_000 + n as i64 * 10,
            end_ns: 1_005 + n as i64 * 10,
            attrs: Attrs::from_map(attrs),
            ..Span::default()
        };
        adjust(&mut span);
        self.children.push(span);
        self
    }

    /// Adds a non-tool span (a chat call, say).
    pub(crate) fn chat_span(mut self, adjust: impl FnOnce(&mut Span)) -> Self {
        let n = self.children.len() + 1;
        let mut span = Span {
            span_id: format!("c{n}").into(),
            parent_id: Some("root".into()),
            name: "chat".into(),
            start_ns: 1_000 + n as i64 * 10,
            end_ns: 1_005 + n as i64 * 10,
            ..Span::default()
        };
        span.attrs
            .insert(attr::OPERATION_NAME.into(), json!("chat"));
        adjust(&mut span);
        self.children.push(span);
        self
    }

    pub(crate) fn build(self) -> TraceRecord<'static> {
        let mut spans = vec![self.root];
        spans.extend(self.children);
        TraceRecord {
            trace_id: "t1".into(),
            agent: "agent".into(),
            spans,
            skipped_attributes: 0,
        }
    }

    /// Runs one check on this trace.
    pub(crate) fn run(self, check: &dyn Check) -> Verdict {
        self.run_with(check, &CheckContext::default())
    }

    pub(crate) fn run_with(self, check: &dyn Check, cx: &CheckContext) -> Verdict {
        run_all(vec![self], check, cx, Reasons::All)
            .pop()
            .expect("one verdict per trace")
    }
}

/// Runs one check as a pass over one batch of these traces and reads its column back, one verdict
/// per trace in order; a reason the column did not keep comes back empty.
pub(crate) fn run_all(
    specs: Vec<TraceSpec>,
    check: &dyn Check,
    cx: &CheckContext,
    reasons: Reasons,
) -> Vec<Verdict> {
    let traces: Vec<TraceRecord<'static>> = specs
        .into_iter()
        .enumerate()
        .map(|(i, spec)| TraceRecord {
            trace_id: format!("t{}", i + 1).into(),
            ..spec.build()
        })
        .collect();
    let batch = TraceBatch::build(&traces);
    let cols = Columns::new(&batch);
    let mut out = VerdictColumn::new(batch.len(), reasons, Redaction::Off);
    check.run(&cols, cx, &mut out);
    assert_eq!(out.len(), batch.len(), "one verdict per trace");
    let [detected, confidence, reason] = out.finish();
    let detected: &BooleanArray = detected.as_boolean();
    let confidence: &Float64Array = confidence.as_primitive::<arrow_array::types::Float64Type>();
    let reason = reason.as_string::<i64>();
    (0..batch.len())
        .map(|t| Verdict {
            detected: detected.value(t),
            confidence: confidence.value(t),
            reason: if reason.is_valid(t) {
                reason.value(t).to_string()
            } else {
                String::new()
            },
        })
        .collect()
}

impl Default for TraceSpec {
    fn default() -> Self {
        Self::new()
    }
}
