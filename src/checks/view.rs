//! A read-only window onto one trace's rows of a [`TraceBatch`].

use std::ops::Range;

use arrow_array::{Array, LargeStringArray};

use crate::table::TraceBatch;
use crate::table::schema::*;

/// One trace of a batch: its own columns' values, addressed by step and span number within the trace.
#[derive(Clone, Copy)]
pub struct TraceView<'a> {
    pub batch: &'a TraceBatch,
    pub index: usize,
}

impl<'a> TraceView<'a> {
    pub fn new(batch: &'a TraceBatch, index: usize) -> Self {
        TraceView { batch, index }
    }

    fn trace_text(&self, column: &str) -> &'a str {
        self.batch.trace_str(column).value(self.index)
    }

    pub fn trace_id(&self) -> &'a str {
        self.trace_text(TRACE_ID)
    }

    /// The raw scenario key (before redaction).
    pub fn scenario(&self) -> &'a str {
        self.trace_text(TRACE_SCENARIO)
    }

    pub fn prompt(&self) -> &'a str {
        self.trace_text(TRACE_PROMPT)
    }

    pub fn answer(&self) -> &'a str {
        self.trace_text(TRACE_ANSWER)
    }

    pub fn termination(&self) -> &'a str {
        self.trace_text(TRACE_TERMINATION)
    }

    pub fn root(&self) -> Option<usize> {
        self.batch.root(self.index)
    }

    /// Step rows of this trace; step `i` (0-based) is row `steps().start + i`.
    pub fn step_rows(&self) -> Range<usize> {
        self.batch.step_rows(self.index)
    }

    pub fn step_count(&self) -> usize {
        self.step_rows().len()
    }

    fn step_text(&self, column: &str, i: usize) -> &'a str {
        self.batch
            .step_str(column)
            .value(self.step_rows().start + i)
    }

    pub fn tool(&self, i: usize) -> &'a str {
        self.step_text(STEP_TOOL, i)
    }

    pub fn arguments(&self, i: usize) -> &'a str {
        self.step_text(STEP_ARGUMENTS, i)
    }

    pub fn result(&self, i: usize) -> &'a str {
        self.step_text(STEP_RESULT, i)
    }

    /// The structural-error description of step `i`'s result.
    pub fn structural_error(&self, i: usize) -> Option<&'a str> {
        let col = self.batch.step_str(STEP_STRUCTURAL_ERROR);
        TraceBatch::opt_str(col, self.step_rows().start + i)
    }

    /// Position (within this trace's spans) of the span behind step `i`.
    pub fn step_span(&self, i: usize) -> Option<usize> {
        let col = self.batch.step_span_positions();
        let row = self.step_rows().start + i;
        col.is_valid(row).then(|| col.value(row) as usize)
    }

    pub fn empty_result(&self, i: usize) -> bool {
        self.batch
            .step_bool(STEP_EMPTY_RESULT)
            .value(self.step_rows().start + i)
    }

    /// Span rows of this trace, in trace order.
    pub fn span_rows(&self) -> Range<usize> {
        self.batch.span_rows(self.index)
    }

    pub fn span_count(&self) -> usize {
        self.span_rows().len()
    }

    fn span_row(&self, p: usize) -> usize {
        self.span_rows().start + p
    }

    pub fn span_text(&self, column: &str, p: usize) -> &'a str {
        self.batch.span_str(column).value(self.span_row(p))
    }

    pub fn span_opt_text(&self, column: &str, p: usize) -> Option<&'a str> {
        TraceBatch::opt_str(self.batch.span_str(column), self.span_row(p))
    }

    pub fn span_flag(&self, column: &str, p: usize) -> bool {
        self.batch.span_bool(column).value(self.span_row(p))
    }

    pub fn span_int(&self, column: &str, p: usize) -> i64 {
        self.batch.span_i64(column).value(self.span_row(p))
    }

    /// The `gen_ai.response.finish_reasons` of span `p`, each as Python `str()`.
    pub fn finish_reasons(&self, p: usize) -> Vec<&'a str> {
        let list = self.batch.finish_reasons();
        let row = self.span_row(p);
        let offsets = list.value_offsets();
        let values: &LargeStringArray =
            arrow_array::cast::AsArray::as_string::<i64>(list.values().as_ref());
        (offsets[row] as usize..offsets[row + 1] as usize)
            .map(|i| values.value(i))
            .collect()
    }
}
