//! Reading a built batch: the row ranges of a trace's spans and steps, and its columns by name as
//! their Arrow types.

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, LargeStringArray, RecordBatch,
};

use super::TraceBatch;
#[cfg(test)]
use super::record::TraceRecord;
use super::schema::{span_column_index, step_column_index, trace_column_index};
#[cfg(test)]
use super::{TableBuilder, TableOptions};

/// A column every batch has: names come from `table::schema`, so a miss is a bug, not bad input.
fn column<'a>(batch: &'a RecordBatch, name: &str) -> &'a ArrayRef {
    batch
        .column_by_name(name)
        .expect("column defined in table::schema")
}

impl TraceBatch {
    /// Builds the tables of a few traces at once (tests and samples; readers stream through
    /// [`TableBuilder`]).
    #[cfg(test)]
    pub(crate) fn build(traces: &[TraceRecord<'_>]) -> TraceBatch {
        let mut builder = TableBuilder::new(TableOptions {
            root_attributes: true,
            ..TableOptions::default()
        });
        for trace in traces {
            builder.append(trace);
        }
        builder.finish()
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
    pub(crate) fn span_offsets(&self) -> &[usize] {
        &self.span_offsets
    }

    /// Step-table offsets: trace `t`'s steps are rows `step_offsets()[t]..step_offsets()[t + 1]`.
    pub(crate) fn step_offsets(&self) -> &[usize] {
        &self.step_offsets
    }

    /// The string column `name` (a `TRACE_*` constant) of the trace table.
    pub fn trace_str(&self, name: &str) -> &LargeStringArray {
        self.traces
            .column(trace_column_index(name))
            .as_string::<i64>()
    }

    /// The string column `name` (a `SPAN_*` constant) of the span table.
    pub fn span_str(&self, name: &str) -> &LargeStringArray {
        self.spans
            .column(span_column_index(name))
            .as_string::<i64>()
    }

    /// The string column `name` (a `STEP_*` constant) of the step table.
    pub fn step_str(&self, name: &str) -> &LargeStringArray {
        self.steps
            .column(step_column_index(name))
            .as_string::<i64>()
    }

    pub(crate) fn span_bool(&self, name: &str) -> &BooleanArray {
        self.spans.column(span_column_index(name)).as_boolean()
    }

    pub(crate) fn span_i64(&self, name: &str) -> &Int64Array {
        self.spans
            .column(span_column_index(name))
            .as_primitive::<Int64Type>()
    }

    /// The float column `name` of the trace table ([`TRACE_LATENCY_MS`], [`TRACE_COST_USD`]).
    ///
    /// [`TRACE_LATENCY_MS`]: super::schema::TRACE_LATENCY_MS
    /// [`TRACE_COST_USD`]: super::schema::TRACE_COST_USD
    pub fn trace_f64(&self, name: &str) -> &Float64Array {
        column(&self.traces, name).as_primitive::<Float64Type>()
    }

    /// The integer column `name` of the trace table ([`TRACE_INPUT_TOKENS`], [`TRACE_OUTPUT_TOKENS`]).
    ///
    /// [`TRACE_INPUT_TOKENS`]: super::schema::TRACE_INPUT_TOKENS
    /// [`TRACE_OUTPUT_TOKENS`]: super::schema::TRACE_OUTPUT_TOKENS
    pub fn trace_i64(&self, name: &str) -> &Int64Array {
        column(&self.traces, name).as_primitive::<Int64Type>()
    }

    pub(crate) fn trace_bool(&self, name: &str) -> &BooleanArray {
        column(&self.traces, name).as_boolean()
    }
}
