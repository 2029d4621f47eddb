//! The columnar tables the checks run over: traces, spans and tool steps of one batch of traces.
//!
//! `TraceBatch::build` turns parsed traces into Arrow record batches (schema in [`schema`]); checks read
//! typed columns through the accessors here and walk a trace's rows through its offsets.

pub mod derive;
pub mod schema;
pub mod signals;

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, LargeStringBuilder, ListBuilder, UInt32Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, LargeStringArray, ListArray,
    RecordBatch, UInt32Array,
};
use rayon::prelude::*;
use serde_json::Value;

use crate::model::{RawTrace, attr};
use crate::pyfmt::{py_str, py_truthy};
use derive::{TraceFacts, derive, is_tool_span};
use schema::*;

/// Traces, spans and steps of a batch, with per-trace row offsets into spans and steps.
pub struct TraceBatch {
    pub traces: RecordBatch,
    pub spans: RecordBatch,
    pub steps: RecordBatch,
    span_offsets: Vec<usize>,
    step_offsets: Vec<usize>,
}

/// A column every batch has: names come from `table::schema`, so a miss is a bug, not bad input.
fn column<'a>(batch: &'a RecordBatch, name: &str) -> &'a ArrayRef {
    batch
        .column_by_name(name)
        .expect("column defined in table::schema")
}

impl TraceBatch {
    /// Builds the tables; facts are derived in parallel, rows are appended in input order.
    pub fn build(traces: &[RawTrace]) -> TraceBatch {
        let facts: Vec<TraceFacts> = traces.par_iter().map(derive).collect();
        let mut b = Builders::default();
        let mut span_offsets = vec![0];
        let mut step_offsets = vec![0];
        for (trace, facts) in traces.iter().zip(&facts) {
            b.append_trace(trace, facts);
            span_offsets.push(span_offsets.last().copied().unwrap_or(0) + trace.spans.len());
            step_offsets.push(step_offsets.last().copied().unwrap_or(0) + facts.steps.len());
        }
        b.finish(span_offsets, step_offsets)
    }

    /// Number of traces.
    pub fn len(&self) -> usize {
        self.traces.num_rows()
    }

    /// Returns true if and only if the batch holds no trace.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows of trace `t` in the span table.
    pub fn span_rows(&self, t: usize) -> Range<usize> {
        self.span_offsets[t]..self.span_offsets[t + 1]
    }

    /// Rows of trace `t` in the step table.
    pub fn step_rows(&self, t: usize) -> Range<usize> {
        self.step_offsets[t]..self.step_offsets[t + 1]
    }

    /// Span-table offsets: trace `t`'s spans are rows `span_offsets()[t]..span_offsets()[t + 1]`.
    pub fn span_offsets(&self) -> &[usize] {
        &self.span_offsets
    }

    /// Step-table offsets: trace `t`'s steps are rows `step_offsets()[t]..step_offsets()[t + 1]`.
    pub fn step_offsets(&self) -> &[usize] {
        &self.step_offsets
    }

    pub fn trace_str(&self, name: &str) -> &LargeStringArray {
        self.traces
            .column(trace_column_index(name))
            .as_string::<i64>()
    }

    pub fn span_str(&self, name: &str) -> &LargeStringArray {
        self.spans
            .column(span_column_index(name))
            .as_string::<i64>()
    }

    pub fn step_str(&self, name: &str) -> &LargeStringArray {
        self.steps
            .column(step_column_index(name))
            .as_string::<i64>()
    }

    pub fn step_bool(&self, name: &str) -> &BooleanArray {
        self.steps.column(step_column_index(name)).as_boolean()
    }

    pub fn span_bool(&self, name: &str) -> &BooleanArray {
        self.spans.column(span_column_index(name)).as_boolean()
    }

    pub fn span_i64(&self, name: &str) -> &Int64Array {
        self.spans
            .column(span_column_index(name))
            .as_primitive::<Int64Type>()
    }

    pub fn trace_f64(&self, name: &str) -> &Float64Array {
        column(&self.traces, name).as_primitive::<Float64Type>()
    }

    pub fn trace_i64(&self, name: &str) -> &Int64Array {
        column(&self.traces, name).as_primitive::<Int64Type>()
    }

    pub fn trace_bool(&self, name: &str) -> &BooleanArray {
        column(&self.traces, name).as_boolean()
    }

    pub fn root_positions(&self) -> &UInt32Array {
        column(&self.traces, TRACE_ROOT).as_primitive::<UInt32Type>()
    }

    pub fn step_span_positions(&self) -> &UInt32Array {
        column(&self.steps, STEP_SPAN).as_primitive::<UInt32Type>()
    }

    pub fn finish_reasons(&self) -> &ListArray {
        column(&self.spans, SPAN_FINISH_REASONS).as_list::<i32>()
    }

    /// Position (within its trace) of trace `t`'s root span.
    pub fn root(&self, t: usize) -> Option<usize> {
        let roots = self.root_positions();
        roots.is_valid(t).then(|| roots.value(t) as usize)
    }

    /// A string column value that may be null.
    pub fn opt_str(array: &LargeStringArray, row: usize) -> Option<&str> {
        array.is_valid(row).then(|| array.value(row))
    }

    /// A float column value that may be null.
    pub fn opt_f64(array: &Float64Array, row: usize) -> Option<f64> {
        array.is_valid(row).then(|| array.value(row))
    }

    /// The decoded attributes of trace `t`'s root span.
    pub fn root_attributes(&self, t: usize) -> Option<serde_json::Map<String, Value>> {
        let text = Self::opt_str(self.trace_str(TRACE_ROOT_ATTRIBUTES), t)?;
        match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }
}

/// A handoff payload attribute as compact JSON: a string holding JSON is decoded first, since most
/// exporters can only record strings.
fn payload_json(value: &Value) -> String {
    let decoded = match value {
        Value::String(text) => serde_json::from_str::<Value>(text).ok(),
        _ => None,
    };
    serde_json::to_string(decoded.as_ref().unwrap_or(value)).unwrap_or_default()
}

#[derive(Default)]
struct Builders {
    trace_id: LargeStringBuilder,
    agent: LargeStringBuilder,
    scenario: LargeStringBuilder,
    prompt: LargeStringBuilder,
    answer: LargeStringBuilder,
    termination: LargeStringBuilder,
    root: UInt32Builder,
    root_attributes: LargeStringBuilder,
    input_tokens: Int64Builder,
    output_tokens: Int64Builder,
    latency_ms: Float64Builder,
    cost_usd: Float64Builder,
    has_content: BooleanBuilder,

    span_id: LargeStringBuilder,
    parent: LargeStringBuilder,
    name: LargeStringBuilder,
    start: Int64Builder,
    end: Int64Builder,
    status_code: Int64Builder,
    status_message: LargeStringBuilder,
    error_type: LargeStringBuilder,
    span_error: LargeStringBuilder,
    finish_reasons: ListBuilder<LargeStringBuilder>,
    is_tool: BooleanBuilder,
    has_operation: BooleanBuilder,
    confirmed: BooleanBuilder,
    backs_step: BooleanBuilder,
    tool_attributes: BooleanBuilder,
    openinference_kind: BooleanBuilder,
    agent_name: LargeStringBuilder,
    operation: LargeStringBuilder,
    checkpoint: LargeStringBuilder,
    confirmed_by: LargeStringBuilder,
    handoff_from: LargeStringBuilder,
    handoff_to: LargeStringBuilder,
    handoff_payload: LargeStringBuilder,

    tool: LargeStringBuilder,
    arguments: LargeStringBuilder,
    result: LargeStringBuilder,
    step_span_id: LargeStringBuilder,
    step_span: UInt32Builder,
    structural_error: LargeStringBuilder,
    empty_result: BooleanBuilder,
}

impl Builders {
    fn append_trace(&mut self, trace: &RawTrace, facts: &TraceFacts) {
        self.trace_id.append_value(&trace.trace_id);
        self.agent.append_value(&trace.agent);
        self.scenario.append_value(&facts.scenario);
        self.prompt.append_value(&facts.prompt);
        self.answer.append_value(&facts.answer);
        self.termination.append_value(&facts.termination);
        self.root.append_option(facts.root.map(|r| r as u32));
        self.root_attributes.append_option(
            facts
                .root
                .map(|r| serde_json::to_string(&trace.spans[r].attrs).unwrap_or_default()),
        );
        self.input_tokens.append_option(facts.input_tokens);
        self.output_tokens.append_option(facts.output_tokens);
        self.latency_ms.append_option(facts.latency_ms);
        self.cost_usd.append_option(facts.cost_usd);
        self.has_content.append_value(facts.has_content());

        // First span with each id: steps point at it, and it is the span a step "backs".
        let mut first_position: std::collections::HashMap<&str, usize> = Default::default();
        for (i, span) in trace.spans.iter().enumerate() {
            first_position.entry(span.span_id.as_str()).or_insert(i);
        }
        let mut backs = vec![false; trace.spans.len()];
        for step in &facts.steps {
            let position = first_position.get(step.span_id.as_str()).copied();
            if let Some(p) = position {
                backs[p] = true;
            }
            self.tool.append_value(&step.tool);
            self.arguments.append_value(&step.arguments);
            self.result.append_value(&step.result);
            self.step_span_id.append_value(&step.span_id);
            self.step_span.append_option(position.map(|p| p as u32));
            let (error, empty) = signals::result_signals(&step.result);
            self.structural_error.append_option(error);
            self.empty_result.append_value(empty);
        }
        // A span "backs" a step when any span with its id does (ids may repeat).
        for (i, span) in trace.spans.iter().enumerate() {
            let backs_step = backs[first_position[span.span_id.as_str()]];
            self.append_span(span, backs_step || backs[i]);
        }
    }

    fn append_span(&mut self, span: &crate::model::Span, backs_step: bool) {
        self.span_id.append_value(&span.span_id);
        self.parent.append_option(span.parent_id.as_deref());
        self.name.append_value(&span.name);
        self.start.append_value(span.start_ns);
        self.end.append_value(span.end_ns);
        self.status_code.append_value(span.status_code);
        self.status_message.append_value(&span.status_message);
        let error_type = span
            .attr(attr::ERROR_TYPE)
            .filter(|v| py_truthy(v))
            .map(py_str);
        self.span_error
            .append_option(signals::span_error(span.status_code, error_type.as_deref()));
        self.error_type.append_option(error_type);
        match span.attr(attr::FINISH_REASONS) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    self.finish_reasons.values().append_value(py_str(item));
                }
            }
            Some(other) => self.finish_reasons.values().append_value(py_str(other)),
        }
        self.finish_reasons.append(true);
        self.is_tool.append_value(is_tool_span(span));
        self.has_operation
            .append_value(span.attr(attr::OPERATION_NAME).is_some());
        self.confirmed.append_value(
            matches!(span.attr(attr::CONFIRMED), Some(Value::Bool(true)))
                || matches!(span.attr_str(attr::CONFIRMED), Some("true" | "True")),
        );
        self.backs_step.append_value(backs_step);
        self.tool_attributes.append_value(
            [
                attr::TOOL_NAME,
                attr::TOOL_CALL_ARGUMENTS,
                attr::TOOL_CALL_RESULT,
                "tool.name",
            ]
            .iter()
            .any(|k| span.attrs.contains_key(*k)),
        );
        self.openinference_kind
            .append_value(span.attrs.contains_key("openinference.span.kind"));
        self.agent_name
            .append_option(span.attr(attr::AGENT_NAME).map(py_str));
        self.operation
            .append_option(span.attr(attr::OPERATION_NAME).map(py_str));
        self.checkpoint
            .append_option(span.attr(attr::CHECKPOINT).map(py_str));
        self.confirmed_by
            .append_option(span.attr(attr::CONFIRMED_BY).map(py_str));
        let handoff = match (span.attr(attr::HANDOFF_FROM), span.attr(attr::HANDOFF_TO)) {
            (Some(from), Some(to)) => Some((py_str(from), py_str(to))),
            _ => None,
        };
        self.handoff_from
            .append_option(handoff.as_ref().map(|(from, _)| from.as_str()));
        self.handoff_to
            .append_option(handoff.as_ref().map(|(_, to)| to.as_str()));
        self.handoff_payload
            .append_option(span.attr(attr::HANDOFF_PAYLOAD).map(payload_json));
    }

    fn finish(mut self, span_offsets: Vec<usize>, step_offsets: Vec<usize>) -> TraceBatch {
        fn arc<A: Array + 'static>(a: A) -> ArrayRef {
            Arc::new(a)
        }
        let traces = RecordBatch::try_new(
            TRACES.clone(),
            vec![
                arc(self.trace_id.finish()),
                arc(self.agent.finish()),
                arc(self.scenario.finish()),
                arc(self.prompt.finish()),
                arc(self.answer.finish()),
                arc(self.termination.finish()),
                arc(self.root.finish()),
                arc(self.root_attributes.finish()),
                arc(self.input_tokens.finish()),
                arc(self.output_tokens.finish()),
                arc(self.latency_ms.finish()),
                arc(self.cost_usd.finish()),
                arc(self.has_content.finish()),
            ],
        )
        .expect("trace columns match table::schema::TRACES");
        let spans = RecordBatch::try_new(
            SPANS.clone(),
            vec![
                arc(self.span_id.finish()),
                arc(self.parent.finish()),
                arc(self.name.finish()),
                arc(self.start.finish()),
                arc(self.end.finish()),
                arc(self.status_code.finish()),
                arc(self.status_message.finish()),
                arc(self.error_type.finish()),
                arc(self.span_error.finish()),
                arc(self.finish_reasons.finish()),
                arc(self.is_tool.finish()),
                arc(self.has_operation.finish()),
                arc(self.confirmed.finish()),
                arc(self.backs_step.finish()),
                arc(self.tool_attributes.finish()),
                arc(self.openinference_kind.finish()),
                arc(self.agent_name.finish()),
                arc(self.operation.finish()),
                arc(self.checkpoint.finish()),
                arc(self.confirmed_by.finish()),
                arc(self.handoff_from.finish()),
                arc(self.handoff_to.finish()),
                arc(self.handoff_payload.finish()),
            ],
        )
        .expect("span columns match table::schema::SPANS");
        let steps = RecordBatch::try_new(
            STEPS.clone(),
            vec![
                arc(self.tool.finish()),
                arc(self.arguments.finish()),
                arc(self.result.finish()),
                arc(self.step_span_id.finish()),
                arc(self.step_span.finish()),
                arc(self.structural_error.finish()),
                arc(self.empty_result.finish()),
            ],
        )
        .expect("step columns match table::schema::STEPS");
        TraceBatch {
            traces,
            spans,
            steps,
            span_offsets,
            step_offsets,
        }
    }
}
