//! The typed view of one [`TraceBatch`]: its columns resolved once per batch, for everything that reads
//! a batch trace by trace (the check passes, the judge's render, workflow events, the failing steps).
//!
//! A reader walks the traces of `Columns::traces` and reads a trace's spans and steps through the
//! row ranges `Columns::span_rows` and `Columns::step_rows`: each cell read is an index into an
//! array already cast to its type, never a column lookup by name.

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type};
use arrow_array::{
    Array, BooleanArray, Float64Array, Int64Array, LargeStringArray, RecordBatch, UInt32Array,
};
use serde_json::{Map, Value};

use super::TraceBatch;
use super::schema::*;

/// Typed references to every column of a batch, plus the trace range a pass covers.
///
/// Trace-level fields are indexed by trace `t`, span fields by span row, step fields by step row. Rows
/// are absolute (batch-wide); a trace's span `p` (0-based position in the trace) is row
/// `span_rows(t).start + p`.
#[derive(Clone)]
pub struct Columns<'a> {
    traces: Range<usize>,
    span_offsets: &'a [usize],
    step_offsets: &'a [usize],

    pub(crate) trace_id: &'a LargeStringArray,
    pub(crate) agent: &'a LargeStringArray,
    /// The raw scenario key (before redaction).
    pub(crate) scenario: &'a LargeStringArray,
    pub(crate) prompt: &'a LargeStringArray,
    pub(crate) answer: &'a LargeStringArray,
    pub(crate) termination: &'a LargeStringArray,
    /// Position of the root within the trace's spans; null when the trace has none.
    pub(crate) root: &'a UInt32Array,
    pub(crate) root_attributes: &'a LargeStringArray,
    pub(crate) input_tokens: &'a Int64Array,
    pub(crate) output_tokens: &'a Int64Array,
    pub(crate) latency_ms: &'a Float64Array,
    pub(crate) cost_usd: &'a Float64Array,
    pub(crate) has_content: &'a BooleanArray,
    /// The tools the trace's spans were offered, as a JSON list of names; null when none recorded them.
    pub(crate) tool_definitions: &'a LargeStringArray,
    /// The agent's version (`gen_ai.agent.version`); null when no span records one.
    pub(crate) agent_version: &'a LargeStringArray,
    /// The tools the trace's definitions mark `readOnlyHint: true`, as a JSON list; null when none.
    pub(crate) read_only_tools: &'a LargeStringArray,
    /// The benchmark domain the root names; null when none.
    pub(crate) domain: &'a LargeStringArray,
    /// The outcome the trace's own evaluation recorded; null when none.
    pub(crate) recorded_outcome: &'a BooleanArray,
    /// The trace's slice (`--by`); null unless the run slices.
    pub(crate) slice: &'a LargeStringArray,

    pub(crate) span_id: &'a LargeStringArray,
    pub(crate) parent: &'a LargeStringArray,
    pub(crate) name: &'a LargeStringArray,
    pub(crate) start: &'a [i64],
    pub(crate) end: &'a [i64],
    pub(crate) status_code: &'a [i64],
    pub(crate) status_message: &'a LargeStringArray,
    pub(crate) error_type: &'a LargeStringArray,
    pub(crate) span_error: &'a LargeStringArray,
    finish_reason_offsets: &'a [i32],
    finish_reason_values: &'a LargeStringArray,
    pub(crate) is_tool: &'a BooleanArray,
    pub(crate) confirmed: &'a BooleanArray,
    pub(crate) backs_step: &'a BooleanArray,
    pub(crate) agent_name: &'a LargeStringArray,
    pub(crate) operation: &'a LargeStringArray,
    pub(crate) checkpoint: &'a LargeStringArray,
    pub(crate) confirmed_by: &'a LargeStringArray,
    pub(crate) handoff_from: &'a LargeStringArray,
    pub(crate) handoff_to: &'a LargeStringArray,
    pub(crate) handoff_payload: &'a LargeStringArray,
    pub(crate) compacted: &'a BooleanArray,
    /// The span's `gen_ai.response.id`; null when it records none.
    pub(crate) response_id: &'a LargeStringArray,

    pub(crate) tool: &'a LargeStringArray,
    pub(crate) arguments: &'a LargeStringArray,
    pub(crate) result: &'a LargeStringArray,
    /// Position (within the trace's spans) of the span behind the step; null when unknown.
    pub(crate) step_span: &'a UInt32Array,
    pub(crate) structural_error: &'a LargeStringArray,
    pub(crate) empty_result: &'a BooleanArray,
    /// Who made each step: `agent`, `user` or `system`.
    pub(crate) actor: &'a LargeStringArray,
}

fn text(batch: &RecordBatch, index: usize) -> &LargeStringArray {
    batch.column(index).as_string::<i64>()
}

fn flag(batch: &RecordBatch, index: usize) -> &BooleanArray {
    batch.column(index).as_boolean()
}

fn ints(batch: &RecordBatch, index: usize) -> &[i64] {
    batch.column(index).as_primitive::<Int64Type>().values()
}

impl<'a> Columns<'a> {
    /// Resolves every column of `batch`; the pass covers all its traces.
    pub(crate) fn new(batch: &'a TraceBatch) -> Columns<'a> {
        let (t, sp, st) = (&batch.traces, &batch.spans, &batch.steps);
        let finish_reasons = sp
            .column(span_column_index(SPAN_FINISH_REASONS))
            .as_list::<i32>();
        Columns {
            traces: 0..batch.len(),
            span_offsets: batch.span_offsets(),
            step_offsets: batch.step_offsets(),

            trace_id: text(t, trace_column_index(TRACE_ID)),
            agent: text(t, trace_column_index(TRACE_AGENT)),
            scenario: text(t, trace_column_index(TRACE_SCENARIO)),
            prompt: text(t, trace_column_index(TRACE_PROMPT)),
            answer: text(t, trace_column_index(TRACE_ANSWER)),
            termination: text(t, trace_column_index(TRACE_TERMINATION)),
            root: t
                .column(trace_column_index(TRACE_ROOT))
                .as_primitive::<UInt32Type>(),
            root_attributes: text(t, trace_column_index(TRACE_ROOT_ATTRIBUTES)),
            input_tokens: t
                .column(trace_column_index(TRACE_INPUT_TOKENS))
                .as_primitive::<Int64Type>(),
            output_tokens: t
                .column(trace_column_index(TRACE_OUTPUT_TOKENS))
                .as_primitive::<Int64Type>(),
            latency_ms: t
                .column(trace_column_index(TRACE_LATENCY_MS))
                .as_primitive::<Float64Type>(),
            cost_usd: t
                .column(trace_column_index(TRACE_COST_USD))
                .as_primitive::<Float64Type>(),
            has_content: flag(t, trace_column_index(TRACE_HAS_CONTENT)),
            tool_definitions: text(t, trace_column_index(TRACE_TOOL_DEFINITIONS)),
            agent_version: text(t, trace_column_index(TRACE_AGENT_VERSION)),
            read_only_tools: text(t, trace_column_index(TRACE_READ_ONLY_TOOLS)),
            domain: text(t, trace_column_index(TRACE_DOMAIN)),
            recorded_outcome: flag(t, trace_column_index(TRACE_RECORDED_OUTCOME)),
            slice: text(t, trace_column_index(TRACE_SLICE)),

            span_id: text(sp, span_column_index(SPAN_ID)),
            parent: text(sp, span_column_index(SPAN_PARENT)),
            name: text(sp, span_column_index(SPAN_NAME)),
            start: ints(sp, span_column_index(SPAN_START)),
            end: ints(sp, span_column_index(SPAN_END)),
            status_code: ints(sp, span_column_index(SPAN_STATUS_CODE)),
            status_message: text(sp, span_column_index(SPAN_STATUS_MESSAGE)),
            error_type: text(sp, span_column_index(SPAN_ERROR_TYPE)),
            span_error: text(sp, span_column_index(SPAN_ERROR)),
            finish_reason_offsets: finish_reasons.value_offsets(),
            finish_reason_values: finish_reasons.values().as_string::<i64>(),
            is_tool: flag(sp, span_column_index(SPAN_IS_TOOL)),
            confirmed: flag(sp, span_column_index(SPAN_CONFIRMED)),
            backs_step: flag(sp, span_column_index(SPAN_BACKS_STEP)),
            agent_name: text(sp, span_column_index(SPAN_AGENT_NAME)),
            operation: text(sp, span_column_index(SPAN_OPERATION)),
            checkpoint: text(sp, span_column_index(SPAN_CHECKPOINT)),
            confirmed_by: text(sp, span_column_index(SPAN_CONFIRMED_BY)),
            handoff_from: text(sp, span_column_index(SPAN_HANDOFF_FROM)),
            handoff_to: text(sp, span_column_index(SPAN_HANDOFF_TO)),
            handoff_payload: text(sp, span_column_index(SPAN_HANDOFF_PAYLOAD)),
            compacted: flag(sp, span_column_index(SPAN_COMPACTED)),
            response_id: text(sp, span_column_index(SPAN_RESPONSE_ID)),

            tool: text(st, step_column_index(STEP_TOOL)),
            arguments: text(st, step_column_index(STEP_ARGUMENTS)),
            result: text(st, step_column_index(STEP_RESULT)),
            step_span: st
                .column(step_column_index(STEP_SPAN))
                .as_primitive::<UInt32Type>(),
            structural_error: text(st, step_column_index(STEP_STRUCTURAL_ERROR)),
            empty_result: flag(st, step_column_index(STEP_EMPTY_RESULT)),
            actor: text(st, step_column_index(STEP_ACTOR)),
        }
    }

    /// The same columns, with a pass covering only `traces` (a sub-range of this one's).
    pub(crate) fn part(&self, traces: Range<usize>) -> Columns<'a> {
        debug_assert!(traces.start >= self.traces.start && traces.end <= self.traces.end);
        Columns {
            traces,
            ..self.clone()
        }
    }

    /// The traces this pass covers, in batch order; a check pushes one verdict for each.
    pub(crate) fn traces(&self) -> Range<usize> {
        self.traces.clone()
    }

    /// Number of traces this pass covers.
    pub(crate) fn len(&self) -> usize {
        self.traces.len()
    }

    /// Span rows of trace `t`, in trace order.
    pub(crate) fn span_rows(&self, t: usize) -> Range<usize> {
        self.span_offsets[t]..self.span_offsets[t + 1]
    }

    /// Step rows of trace `t`; step `i` (0-based) of the trace is row `step_rows(t).start + i`.
    pub(crate) fn step_rows(&self, t: usize) -> Range<usize> {
        self.step_offsets[t]..self.step_offsets[t + 1]
    }

    /// Position (within its trace's spans) of trace `t`'s root span.
    pub(crate) fn root(&self, t: usize) -> Option<usize> {
        self.root.is_valid(t).then(|| self.root.value(t) as usize)
    }

    /// Position (within its trace's spans) of the span behind step row `s`.
    pub(crate) fn step_span(&self, s: usize) -> Option<usize> {
        self.step_span
            .is_valid(s)
            .then(|| self.step_span.value(s) as usize)
    }

    /// Returns true if and only if step row `s` of trace `t` did not fail: no structural error, and no
    /// error on the tool span behind it.
    pub(crate) fn step_succeeded(&self, t: usize, s: usize) -> bool {
        let failed_tool_span = self
            .step_span(s)
            .map(|p| self.span_rows(t).start + p)
            .is_some_and(|row| self.is_tool.value(row) && self.span_error.is_valid(row));
        !self.structural_error.is_valid(s) && !failed_tool_span
    }

    /// The outcome trace `t`'s own evaluation recorded (true: passed); `None` when it records none.
    pub(crate) fn recorded_outcome(&self, t: usize) -> Option<bool> {
        let column = self.recorded_outcome;
        column.is_valid(t).then(|| column.value(t))
    }

    /// Returns true if and only if step row `s` is the agent's own: the rule checks judge only these.
    pub(crate) fn agent_step(&self, s: usize) -> bool {
        self.actor.value(s) == "agent"
    }

    /// Number of trace `t`'s steps that are not the agent's (a simulated user's, the system's).
    pub(crate) fn unjudged_steps(&self, t: usize) -> usize {
        self.step_rows(t).filter(|&s| !self.agent_step(s)).count()
    }

    /// The tools trace `t`'s definitions mark `readOnlyHint: true`; empty when none is.
    pub(crate) fn read_only_tools(&self, t: usize) -> Vec<String> {
        opt(self.read_only_tools, t)
            .and_then(|list| serde_json::from_str(list).ok())
            .unwrap_or_default()
    }

    /// The `gen_ai.response.finish_reasons` of span row `row`, each as Python `str()`.
    pub(crate) fn finish_reasons(&self, row: usize) -> impl Iterator<Item = &'a str> + use<'a> {
        let values = self.finish_reason_values;
        let range =
            self.finish_reason_offsets[row] as usize..self.finish_reason_offsets[row + 1] as usize;
        range.map(move |i| values.value(i))
    }

    /// The decoded attributes of trace `t`'s root span.
    pub(crate) fn root_attributes(&self, t: usize) -> Option<Map<String, Value>> {
        match serde_json::from_str(opt(self.root_attributes, t)?) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }
}

/// A string cell that may be null.
pub(crate) fn opt(array: &LargeStringArray, row: usize) -> Option<&str> {
    array.is_valid(row).then(|| array.value(row))
}
