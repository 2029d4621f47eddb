//! Small hand-built traces for unit tests: of the checks, of the readers of a batch, of the pipeline.

use serde_json::{Map, Value, json};

use super::TraceBatch;
use super::record::{Attrs, SpanRecord, TraceRecord, attr};

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
            resource: Default::default(),
        }
    }
}

impl Default for TraceSpec {
    fn default() -> Self {
        Self::new()
    }
}

/// One batch of these traces, with trace ids `t1`, `t2`, ... in order.
pub(crate) fn batch(specs: Vec<TraceSpec>) -> TraceBatch {
    let traces: Vec<TraceRecord<'static>> = specs
        .into_iter()
        .enumerate()
        .map(|(i, spec)| TraceRecord {
            trace_id: format!("t{}", i + 1).into(),
            ..spec.build()
        })
        .collect();
    TraceBatch::build(&traces)
}

/// An OTLP JSON export of one `chat` span with these attributes (an OTLP attribute list).
pub(crate) fn one_span_export(attributes: &Value) -> Value {
    json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "name": "chat",
        "startTimeUnixNano": "1", "attributes": attributes}]}]}]})
}
