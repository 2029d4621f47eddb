//! The verdicts of a batch of traces as one Arrow record batch: one row per trace, in input order.
//!
//! ## Columns
//!
//! `trace_id`, `scenario` (the written key, redacted when redaction is on), `raw_scenario` (the raw key,
//! null unless the run keeps it for matching labels; never written out), `agent` (masked; null when the
//! trace names none), `agent_version` (masked; null when the trace records none), `steps` (tool steps),
//! `user_steps` (of those, the steps no rule judged), `recorded_outcome` (the outcome the trace's own
//! evaluation recorded; null when none), `tokens`, `latency_ms`, `cost_usd`, `input_tokens`,
//! `output_tokens`, `model_calls` (null when not recorded), `root_span_id` (the id of the trace's root span as its export spells it, so an
//! evaluation event can be attached to that span; null when the trace has no root span or its format
//! records no span ids, as benchmark logs do), `verdict_spans` (for each active check in selection
//! order, the id of the span its reason names, through a step or directly, comma-separated and empty
//! where the reason names none; null when no reason of the row names one), `response_ids` (a JSON
//! list: the root span's `gen_ai.response.id`, then for each active check in selection order that of
//! the span its reason names, `null` where there is none; null when the row has none at all), then
//! for each active check
//! in selection order `<check>.detected`, `<check>.confidence` and `<check>.reason` (masked; null
//! where the run did not keep it, see [`crate::checks::Reasons`]). A check selected twice gets
//! `<check>#2.…` for its second columns.
//!
//! A run with `--by` has one more column after `response_ids`: `slice`, the trace's slice
//! ([`crate::gate::slices`]), before the checks' columns. Without `--by` the table is 0.4.1's.
//!
//! Every batch of a run has the same schema, and a run's result is its batches in order: concatenated
//! they are the run's verdict table. A batch copies the few texts it keeps (ids, keys, agents and
//! reasons), so it holds no reference into the traces' tables and memory follows the verdicts.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, LargeStringBuilder, UInt64Builder,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, LargeStringArray, RecordBatch, UInt64Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use rayon::prelude::*;

use super::Measures;
use crate::checks::VerdictColumn;

/// Columns before the first check's (one more with the `slice` column).
const TRACE_COLUMNS: usize = 17;

/// The name of the column of a run's slices (`--by`).
pub(crate) const SLICE: &str = "slice";

/// The schema of the verdict batches of a run with these active checks, in selection order.
#[cfg(test)]
pub(crate) fn schema(checks: &[&str]) -> SchemaRef {
    schema_sliced(checks, false)
}

/// The schema of [`schema`], with the `slice` column when `sliced` (`--by`).
pub(crate) fn schema_sliced(checks: &[&str], sliced: bool) -> SchemaRef {
    let text = |name: &str, nullable| Field::new(name, DataType::LargeUtf8, nullable);
    let float = |name: &str| Field::new(name, DataType::Float64, true);
    let mut fields = vec![
        text("trace_id", false),
        text("scenario", false),
        text("raw_scenario", true),
        text("agent", true),
        text("agent_version", true),
        Field::new("steps", DataType::UInt64, false),
        // Steps of others than the agent (a simulated user's tools), which the rule checks do not judge.
        Field::new("user_steps", DataType::UInt64, false),
        // The outcome the trace's own evaluation recorded (a benchmark's reward); null when none.
        Field::new("recorded_outcome", DataType::Boolean, true),
        float("tokens"),
        float("latency_ms"),
        float("cost_usd"),
        float("input_tokens"),
        float("output_tokens"),
        float("model_calls"),
        text("root_span_id", true),
        text("verdict_spans", true),
        text("response_ids", true),
    ];
    if sliced {
        fields.push(text(SLICE, false));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for name in checks {
        let n = seen.entry(name).or_default();
        *n += 1;
        let prefix = if *n == 1 {
            name.to_string()
        } else {
            format!("{name}#{n}")
        };
        fields.push(Field::new(
            format!("{prefix}.detected"),
            DataType::Boolean,
            false,
        ));
        fields.push(Field::new(
            format!("{prefix}.confidence"),
            DataType::Float64,
            false,
        ));
        fields.push(text(&format!("{prefix}.reason"), true));
    }
    Arc::new(Schema::new(fields))
}

/// What a reason points at: a step or a span of its trace, numbered from 1 as the reasons count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named {
    /// Step `n` of the trace, counting every step (`step 3: ...`, `failed at step 3 (...)`).
    Step(usize),
    /// Span `n` of the trace, in trace order (`span 4 (...)`, `at span 4 of 9`).
    Span(usize),
}

/// The step or span a reason names first, so an event about it can sit on that span. Only the word
/// `step` or `span` followed by a number counts: `12 steps (cap)` names no step.
pub(crate) fn named_in(reason: &str) -> Option<Named> {
    let bytes = reason.as_bytes();
    let mut at = 0;
    while let Some(found) = reason[at..].find(['s', 'S']).map(|i| at + i) {
        at = found + 1;
        let word = bytes.get(found..found + 5);
        let kind: fn(usize) -> Named = match word {
            Some(w) if w.eq_ignore_ascii_case(b"step ") => Named::Step,
            Some(w) if w.eq_ignore_ascii_case(b"span ") => Named::Span,
            _ => continue,
        };
        if found > 0 && bytes[found - 1].is_ascii_alphanumeric() {
            continue;
        }
        let digits = bytes[found + 5..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = found + 5 + digits;
        if digits == 0 || bytes.get(end).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        match reason[found + 5..end].parse() {
            Ok(n) if n > 0 => return Some(kind(n)),
            _ => continue,
        }
    }
    None
}

/// The per-trace fields of one row, already masked as they will be written.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TraceFields<'a> {
    pub trace_id: &'a str,
    /// The written scenario key.
    pub scenario: &'a str,
    pub raw_scenario: Option<&'a str>,
    /// The masked agent name; `None` or empty when the trace names none.
    pub agent: Option<&'a str>,
    /// The masked agent version (`gen_ai.agent.version`, else the OTLP resource's `service.version`);
    /// `None` or empty when the trace records none.
    pub agent_version: Option<&'a str>,
    pub steps: usize,
    /// Of `steps`, those not the agent's (a simulated user's or the system's): not judged.
    pub user_steps: usize,
    /// The outcome the trace's own evaluation recorded (true: passed); `None` when it records none.
    pub recorded_outcome: Option<bool>,
    pub measures: Measures,
    /// The root span's id; `None` or empty when the trace has none.
    pub root_span_id: Option<&'a str>,
    /// The trace's slice, in a run with `--by` (a batch whose schema has no `slice` column ignores it).
    pub slice: Option<&'a str>,
}

/// Builds one verdict batch: the trace fields row by row, then one [`VerdictColumn`] per check.
pub(crate) struct VerdictBatchBuilder {
    schema: SchemaRef,
    trace_id: LargeStringBuilder,
    scenario: LargeStringBuilder,
    raw_scenario: LargeStringBuilder,
    agent: LargeStringBuilder,
    agent_version: LargeStringBuilder,
    steps: UInt64Builder,
    user_steps: UInt64Builder,
    recorded_outcome: BooleanBuilder,
    tokens: Float64Builder,
    latency_ms: Float64Builder,
    cost_usd: Float64Builder,
    input_tokens: Float64Builder,
    output_tokens: Float64Builder,
    model_calls: Float64Builder,
    root_span_id: LargeStringBuilder,
    verdict_spans: LargeStringBuilder,
    response_ids: LargeStringBuilder,
    /// Present when the schema has the `slice` column.
    slice: Option<LargeStringBuilder>,
}

impl VerdictBatchBuilder {
    /// A builder for batches of `schema` ([`schema`]) with room for `capacity` traces.
    pub(crate) fn new(schema: SchemaRef, capacity: usize) -> Self {
        let text = || LargeStringBuilder::with_capacity(capacity, 0);
        VerdictBatchBuilder {
            trace_id: text(),
            scenario: text(),
            raw_scenario: text(),
            agent: text(),
            agent_version: text(),
            steps: UInt64Builder::with_capacity(capacity),
            user_steps: UInt64Builder::with_capacity(capacity),
            recorded_outcome: BooleanBuilder::with_capacity(capacity),
            tokens: Float64Builder::with_capacity(capacity),
            latency_ms: Float64Builder::with_capacity(capacity),
            cost_usd: Float64Builder::with_capacity(capacity),
            input_tokens: Float64Builder::with_capacity(capacity),
            output_tokens: Float64Builder::with_capacity(capacity),
            model_calls: Float64Builder::with_capacity(capacity),
            root_span_id: text(),
            verdict_spans: text(),
            response_ids: text(),
            slice: schema
                .fields()
                .get(TRACE_COLUMNS)
                .filter(|f| f.name() == SLICE)
                .map(|_| text()),
            schema,
        }
    }

    /// Appends the next trace's fields.
    pub(crate) fn push_trace(&mut self, trace: &TraceFields<'_>) {
        self.trace_id.append_value(trace.trace_id);
        self.scenario.append_value(trace.scenario);
        self.raw_scenario.append_option(trace.raw_scenario);
        self.agent
            .append_option(trace.agent.filter(|a| !a.is_empty()));
        self.agent_version
            .append_option(trace.agent_version.filter(|v| !v.is_empty()));
        self.steps
            .append_value(u64::try_from(trace.steps).unwrap_or(u64::MAX));
        self.user_steps
            .append_value(u64::try_from(trace.user_steps).unwrap_or(u64::MAX));
        self.recorded_outcome.append_option(trace.recorded_outcome);
        self.tokens.append_option(trace.measures.tokens);
        self.latency_ms.append_option(trace.measures.latency_ms);
        self.cost_usd.append_option(trace.measures.cost_usd);
        self.input_tokens.append_option(trace.measures.input_tokens);
        self.output_tokens
            .append_option(trace.measures.output_tokens);
        self.model_calls.append_option(trace.measures.model_calls);
        self.root_span_id
            .append_option(trace.root_span_id.filter(|id| !id.is_empty()));
        if let Some(slice) = &mut self.slice {
            slice.append_value(trace.slice.unwrap_or(crate::table::slices::NONE));
        }
    }

    /// Sets the next row's `verdict_spans` (see the module doc and [`named_in`]), in row order after its
    /// [`Self::push_trace`]; a row given none has none.
    pub(crate) fn push_verdict_spans(&mut self, spans: Option<&str>) {
        self.verdict_spans.append_option(spans);
    }

    /// Sets the next row's `response_ids` (see the module doc), in row order after its
    /// [`Self::push_trace`]: the root span's response id, then each active check's named span's. A
    /// row whose ids are all `None` has none.
    pub(crate) fn push_response_ids(&mut self, root: Option<&str>, checks: &[Option<&str>]) {
        if root.is_none() && checks.iter().all(Option::is_none) {
            self.response_ids.append_null();
            return;
        }
        let list: Vec<Option<&str>> = std::iter::once(root)
            .chain(checks.iter().copied())
            .collect();
        self.response_ids
            .append_value(serde_json::to_string(&list).unwrap_or_default());
    }

    /// The batch, with the checks' columns in selection order.
    ///
    /// # Errors
    ///
    /// Columns that do not match the schema: a check column of another length than the traces, or
    /// another number of checks than the schema names.
    pub(crate) fn finish(mut self, checks: Vec<VerdictColumn>) -> Result<VerdictBatch, ArrowError> {
        for _ in self.verdict_spans.len()..self.trace_id.len() {
            self.verdict_spans.append_null();
        }
        for _ in self.response_ids.len()..self.trace_id.len() {
            self.response_ids.append_null();
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.trace_id.finish()),
            Arc::new(self.scenario.finish()),
            Arc::new(self.raw_scenario.finish()),
            Arc::new(self.agent.finish()),
            Arc::new(self.agent_version.finish()),
            Arc::new(self.steps.finish()),
            Arc::new(self.user_steps.finish()),
            Arc::new(self.recorded_outcome.finish()),
            Arc::new(self.tokens.finish()),
            Arc::new(self.latency_ms.finish()),
            Arc::new(self.cost_usd.finish()),
            Arc::new(self.input_tokens.finish()),
            Arc::new(self.output_tokens.finish()),
            Arc::new(self.model_calls.finish()),
            Arc::new(self.root_span_id.finish()),
            Arc::new(self.verdict_spans.finish()),
            Arc::new(self.response_ids.finish()),
        ];
        if let Some(mut slice) = self.slice {
            columns.push(Arc::new(slice.finish()));
        }
        for check in checks {
            columns.extend(check.finish());
        }
        VerdictBatch::try_new(RecordBatch::try_new(self.schema, columns)?)
    }
}

/// A verdict record batch with its columns resolved to their types.
#[derive(Debug, Clone)]
pub struct VerdictBatch {
    batch: RecordBatch,
    trace_id: LargeStringArray,
    scenario: LargeStringArray,
    raw_scenario: LargeStringArray,
    agent: LargeStringArray,
    agent_version: LargeStringArray,
    steps: UInt64Array,
    user_steps: UInt64Array,
    recorded_outcome: BooleanArray,
    tokens: Float64Array,
    latency_ms: Float64Array,
    cost_usd: Float64Array,
    input_tokens: Float64Array,
    output_tokens: Float64Array,
    model_calls: Float64Array,
    root_span_id: LargeStringArray,
    verdict_spans: LargeStringArray,
    response_ids: LargeStringArray,
    slice: Option<LargeStringArray>,
    detected: Vec<BooleanArray>,
    confidence: Vec<Float64Array>,
    reason: Vec<LargeStringArray>,
}

fn typed<T: Array + Clone + 'static>(batch: &RecordBatch, i: usize) -> Result<T, ArrowError> {
    batch
        .column(i)
        .as_any()
        .downcast_ref::<T>()
        .cloned()
        .ok_or_else(|| {
            ArrowError::SchemaError(format!(
                "verdict column {} has type {}",
                batch.schema().field(i).name(),
                batch.column(i).data_type()
            ))
        })
}

impl VerdictBatch {
    /// Reads a record batch of the verdict schema (`schema`).
    ///
    /// # Errors
    ///
    /// A batch whose columns are not those of a verdict schema.
    pub fn try_new(batch: RecordBatch) -> Result<VerdictBatch, ArrowError> {
        let width = batch.num_columns();
        let sliced = batch
            .schema()
            .fields()
            .get(TRACE_COLUMNS)
            .is_some_and(|f| f.name() == SLICE);
        let first_check = TRACE_COLUMNS + usize::from(sliced);
        if width < first_check || !(width - first_check).is_multiple_of(3) {
            return Err(ArrowError::SchemaError(format!(
                "a verdict batch has {first_check} + 3 per check columns, not {width}"
            )));
        }
        let checks = (width - first_check) / 3;
        let mut detected = Vec::with_capacity(checks);
        let mut confidence = Vec::with_capacity(checks);
        let mut reason = Vec::with_capacity(checks);
        for k in 0..checks {
            let at = first_check + 3 * k;
            detected.push(typed::<BooleanArray>(&batch, at)?);
            confidence.push(typed::<Float64Array>(&batch, at + 1)?);
            reason.push(typed::<LargeStringArray>(&batch, at + 2)?);
        }
        Ok(VerdictBatch {
            trace_id: typed(&batch, 0)?,
            scenario: typed(&batch, 1)?,
            raw_scenario: typed(&batch, 2)?,
            agent: typed(&batch, 3)?,
            agent_version: typed(&batch, 4)?,
            steps: typed(&batch, 5)?,
            user_steps: typed(&batch, 6)?,
            recorded_outcome: typed(&batch, 7)?,
            tokens: typed(&batch, 8)?,
            latency_ms: typed(&batch, 9)?,
            cost_usd: typed(&batch, 10)?,
            input_tokens: typed(&batch, 11)?,
            output_tokens: typed(&batch, 12)?,
            model_calls: typed(&batch, 13)?,
            root_span_id: typed(&batch, 14)?,
            verdict_spans: typed(&batch, 15)?,
            response_ids: typed(&batch, 16)?,
            slice: sliced.then(|| typed(&batch, TRACE_COLUMNS)).transpose()?,
            detected,
            confidence,
            reason,
            batch,
        })
    }

    /// The record batch itself.
    pub fn record_batch(&self) -> &RecordBatch {
        &self.batch
    }

    /// Number of traces.
    pub fn len(&self) -> usize {
        self.batch.num_rows()
    }

    /// Returns true if and only if the batch holds no trace.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns true if and only if the batch has the `slice` column (`--by`).
    pub fn is_sliced(&self) -> bool {
        self.slice.is_some()
    }

    /// Number of checks.
    pub fn checks(&self) -> usize {
        self.detected.len()
    }

    /// Row `row` of the batch.
    pub fn row(&self, row: usize) -> Row<'_> {
        Row { batch: self, row }
    }

    /// Every row, in order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        (0..self.len()).map(|row| self.row(row))
    }

    /// `make` of each run of `rows` consecutive rows (the last one shorter), made on the threads and
    /// given back in row order, so what is built from them is the same whatever the thread count.
    pub(crate) fn in_row_tasks<T: Send>(
        &self,
        rows: usize,
        make: impl Fn(std::ops::Range<usize>) -> T + Sync,
    ) -> Vec<T> {
        let starts: Vec<usize> = (0..self.len()).step_by(rows.max(1)).collect();
        starts
            .into_par_iter()
            .map(|start| make(start..(start + rows).min(self.len())))
            .collect()
    }

    /// Every trace id, in row order.
    pub fn trace_ids(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|row| self.trace_id.value(row))
    }

    /// How many traces each check fired on, in selection order: counted on the columns' bits, not row
    /// by row, as the summary of a run of millions of traces is.
    pub fn fired_counts(&self) -> impl Iterator<Item = usize> {
        self.detected.iter().map(|d| d.values().count_set_bits())
    }

    /// Steps of others than the agent (a simulated user's tools) over every trace, which no rule judged.
    pub fn user_step_count(&self) -> u64 {
        self.user_steps.values().iter().sum()
    }

    /// How many traces recorded an outcome of their own evaluation, and how many of those failed it.
    pub fn recorded_outcome_counts(&self) -> RecordedOutcomes {
        let column = &self.recorded_outcome;
        let recorded = (column.len() - column.null_count()) as u64;
        let passed = column.true_count() as u64;
        RecordedOutcomes {
            recorded,
            failed: recorded - passed,
        }
    }

    /// How many traces any check fired on.
    pub fn failed_count(&self) -> usize {
        let mut columns = self.detected.iter().map(BooleanArray::values);
        let Some(first) = columns.next() else {
            return 0;
        };
        columns
            .fold(first.clone(), |any, column| &any | column)
            .count_set_bits()
    }
}

/// How many traces of a run recorded the outcome of their own evaluation (a benchmark's reward), and
/// how many of those failed it: the summary says so beside the checks' count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordedOutcomes {
    /// Traces that recorded an outcome.
    pub recorded: u64,
    /// Of those, the traces whose own evaluation failed.
    pub failed: u64,
}

impl RecordedOutcomes {
    /// The counts over a run's batches.
    pub fn of(batches: &[VerdictBatch]) -> RecordedOutcomes {
        let mut all = RecordedOutcomes::default();
        for batch in batches {
            all.add(batch.recorded_outcome_counts());
        }
        all
    }

    /// ` · F/N failed their own evaluation`, for a summary line; empty when no trace recorded an
    /// outcome, so the line of a format that records none is 0.4.1's.
    pub fn phrase(&self) -> String {
        if self.recorded == 0 {
            return String::new();
        }
        format!(
            " \u{b7} {}/{} failed their own evaluation",
            self.failed, self.recorded
        )
    }

    /// Adds another batch's counts.
    pub fn add(&mut self, other: RecordedOutcomes) {
        self.recorded += other.recorded;
        self.failed += other.failed;
    }
}

/// One check's verdict on one trace, read from a verdict batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerdictRef<'a> {
    /// Whether the check fired.
    pub detected: bool,
    /// How sure the check is, from 0 to 1.
    pub confidence: f64,
    /// `None` where the run did not keep the reason (a verdict that did not fire, when no output
    /// prints those).
    pub reason: Option<&'a str>,
}

/// One trace's row of a verdict batch.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    batch: &'a VerdictBatch,
    row: usize,
}

fn opt_f64(array: &Float64Array, row: usize) -> Option<f64> {
    array.is_valid(row).then(|| array.value(row))
}

impl<'a> Row<'a> {
    /// The trace's slice, in a run with `--by`.
    pub fn slice(&self) -> Option<&'a str> {
        self.batch.slice.as_ref().map(|s| s.value(self.row))
    }

    /// The trace's id, in full.
    pub fn trace_id(&self) -> &'a str {
        self.batch.trace_id.value(self.row)
    }

    /// The scenario key as written out (redacted when redaction is on).
    pub fn scenario(&self) -> &'a str {
        self.batch.scenario.value(self.row)
    }

    /// The raw scenario key, kept only for runs that match it against user files after the run
    /// (calibration labels); never written out.
    pub fn raw_scenario(&self) -> Option<&'a str> {
        let column = &self.batch.raw_scenario;
        column.is_valid(self.row).then(|| column.value(self.row))
    }

    /// The masked agent name; `None` when the trace names none.
    pub fn agent(&self) -> Option<&'a str> {
        let column = &self.batch.agent;
        column.is_valid(self.row).then(|| column.value(self.row))
    }

    /// The masked agent version; `None` when the trace records none.
    pub fn agent_version(&self) -> Option<&'a str> {
        let column = &self.batch.agent_version;
        column.is_valid(self.row).then(|| column.value(self.row))
    }

    /// Number of tool steps the trace took.
    pub fn steps(&self) -> u64 {
        self.batch.steps.value(self.row)
    }

    /// Of [`Self::steps`], those not the agent's (a simulated user's tools), which no rule judged.
    pub fn user_steps(&self) -> u64 {
        self.batch.user_steps.value(self.row)
    }

    /// The outcome the trace's own evaluation recorded (true: passed); `None` when it records none.
    pub fn recorded_outcome(&self) -> Option<bool> {
        let column = &self.batch.recorded_outcome;
        column.is_valid(self.row).then(|| column.value(self.row))
    }

    /// The id of the trace's root span; `None` when it has none (or its format records no span ids).
    pub fn root_span_id(&self) -> Option<&'a str> {
        let column = &self.batch.root_span_id;
        column.is_valid(self.row).then(|| column.value(self.row))
    }

    /// The id of the span the `k`-th active check's reason names (through a step or directly);
    /// `None` when it names none, or names one without an id.
    pub fn verdict_span(&self, k: usize) -> Option<&'a str> {
        let column = &self.batch.verdict_spans;
        if !column.is_valid(self.row) {
            return None;
        }
        column
            .value(self.row)
            .split(',')
            .nth(k)
            .filter(|id| !id.is_empty())
    }

    /// The `gen_ai.response.id` of the root span (`k` `None`) or of the span the `k`-th active
    /// check's reason names; `None` when that span records none.
    pub fn response_id(&self, k: Option<usize>) -> Option<String> {
        let column = &self.batch.response_ids;
        if !column.is_valid(self.row) {
            return None;
        }
        let list: Vec<Option<String>> =
            serde_json::from_str(column.value(self.row)).unwrap_or_default();
        list.into_iter().nth(k.map_or(0, |k| k + 1)).flatten()
    }

    pub(crate) fn measures(&self) -> Measures {
        Measures {
            tokens: opt_f64(&self.batch.tokens, self.row),
            latency_ms: opt_f64(&self.batch.latency_ms, self.row),
            cost_usd: opt_f64(&self.batch.cost_usd, self.row),
            input_tokens: opt_f64(&self.batch.input_tokens, self.row),
            output_tokens: opt_f64(&self.batch.output_tokens, self.row),
            model_calls: opt_f64(&self.batch.model_calls, self.row),
        }
    }

    /// The verdict of the `k`-th active check.
    pub fn verdict(&self, k: usize) -> VerdictRef<'a> {
        let b = self.batch;
        let reason = &b.reason[k];
        VerdictRef {
            detected: b.detected[k].value(self.row),
            confidence: b.confidence[k].value(self.row),
            reason: reason.is_valid(self.row).then(|| reason.value(self.row)),
        }
    }

    /// The verdicts of the active checks, in selection order.
    pub fn verdicts(&self) -> impl Iterator<Item = VerdictRef<'a>> + use<'a> {
        let row = *self;
        (0..self.batch.checks()).map(move |k| row.verdict(k))
    }

    /// Returns true if and only if any check fired on this trace.
    pub fn failed(&self) -> bool {
        self.batch.detected.iter().any(|d| d.value(self.row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Gating, Reasons, VerdictColumn};
    use crate::redact::Redaction;
    use crate::report::{Report, ReportCheck};

    const CHECKS: [&str; 3] = ["abstention", "policy", "abstention"];

    /// A batch of traces `from..to`: policy fires on even ones, the first abstention on every third.
    fn batch(from: usize, to: usize) -> VerdictBatch {
        let mut builder = VerdictBatchBuilder::new(schema(&CHECKS), to - from);
        let column = || VerdictColumn::new(to - from, Reasons::Fired, Redaction::Off);
        let mut columns = [column(), column(), column()];
        for i in from..to {
            builder.push_trace(&TraceFields {
                trace_id: &format!("t{i}"),
                scenario: &format!("s{}", i % 3),
                agent: Some(if i % 2 == 0 { "a" } else { "" }),
                steps: i,
                measures: Measures {
                    tokens: Some(i as f64),
                    ..Measures::default()
                },
                root_span_id: (i % 2 == 0).then_some("00f067aa0ba902b7"),
                ..TraceFields::default()
            });
            columns[0].sure(i % 3 == 0, format_args!("abstains {i}"));
            columns[1].push(i % 2 == 0, 0.5, "denied");
            columns[2].push(false, 0.0, "never");
        }
        builder.finish(columns.into()).expect("verdict batch")
    }

    fn report(batches: Vec<VerdictBatch>) -> Report {
        Report {
            judge: "none".into(),
            checks: CHECKS
                .iter()
                .map(|&name| {
                    let gating = if name == "policy" {
                        Gating::PolicyBlock
                    } else {
                        Gating::CleanRate
                    };
                    ReportCheck::rule(name, gating)
                })
                .collect(),
            redaction: "off".into(),
            batches,
            input_warnings: Vec::new(),
            failing_steps: Vec::new(),
            skipped_input: Default::default(),
            sessions: None,
        }
    }

    /// The counts read off the columns' bits are the rows' own, also for a batch cut out of a larger
    /// one, whose bits do not start at a byte.
    #[test]
    fn counts_from_the_columns_match_the_rows() {
        let whole = batch(0, 23);
        let cut = VerdictBatch::try_new(whole.record_batch().slice(5, 13)).expect("verdict batch");
        for b in [&whole, &cut] {
            let by_rows: Vec<usize> = (0..b.checks())
                .map(|k| b.rows().filter(|r| r.verdict(k).detected).count())
                .collect();
            assert_eq!(b.fired_counts().collect::<Vec<_>>(), by_rows);
            assert_eq!(b.failed_count(), b.rows().filter(Row::failed).count());
            assert_eq!(
                b.trace_ids().collect::<Vec<_>>(),
                b.rows().map(|r| r.trace_id()).collect::<Vec<_>>()
            );
        }
        // Traces 5..18: policy fires on 6, 8, ..., 16; abstention on 6, 9, 12, 15.
        assert_eq!(cut.fired_counts().collect::<Vec<_>>(), [4, 6, 0]);
        assert_eq!(cut.failed_count(), 8);
    }

    #[test]
    fn a_repeated_check_gets_its_own_columns() {
        let names: Vec<String> = schema(&CHECKS)
            .fields()
            .iter()
            .skip(TRACE_COLUMNS)
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(
            names,
            [
                "abstention.detected",
                "abstention.confidence",
                "abstention.reason",
                "policy.detected",
                "policy.confidence",
                "policy.reason",
                "abstention#2.detected",
                "abstention#2.confidence",
                "abstention#2.reason"
            ]
        );
    }

    #[test]
    fn rows_read_back_what_was_pushed() {
        let b = batch(0, 4);
        assert_eq!((b.len(), b.checks()), (4, 3));
        let row = b.row(2);
        assert_eq!((row.trace_id(), row.scenario()), ("t2", "s2"));
        assert_eq!(
            (row.agent(), row.raw_scenario(), row.steps()),
            (Some("a"), None, 2)
        );
        assert_eq!(b.row(1).agent(), None, "an empty agent is null");
        assert_eq!(row.root_span_id(), Some("00f067aa0ba902b7"));
        assert_eq!(b.row(1).root_span_id(), None);
        assert_eq!(row.measures().tokens, Some(2.0));
        assert_eq!(
            row.verdicts().collect::<Vec<_>>(),
            [
                VerdictRef {
                    detected: false,
                    confidence: 1.0,
                    reason: None
                },
                VerdictRef {
                    detected: true,
                    confidence: 0.5,
                    reason: Some("denied")
                },
                VerdictRef {
                    detected: false,
                    confidence: 0.0,
                    reason: None
                },
            ]
        );
        assert!(row.failed());
        assert!(!b.row(1).failed());
        assert_eq!(b.row(3).verdict(0).reason, Some("abstains 3"));
    }

    #[test]
    fn batches_in_order_are_their_concatenation() {
        let parts = vec![batch(0, 3), batch(3, 5), batch(5, 9)];
        let joined = arrow_select::concat::concat_batches(
            &schema(&CHECKS),
            parts.iter().map(VerdictBatch::record_batch),
        )
        .and_then(VerdictBatch::try_new)
        .expect("same schema");
        let (split, whole) = (report(parts), report(vec![joined]));
        assert_eq!(split.row_count(), 9);
        assert_eq!(
            crate::report::render::json::report(&split),
            crate::report::render::json::report(&whole)
        );
        assert_eq!(split.fired(), vec![("abstention", 3), ("policy", 5)]);
        assert_eq!(split.fired_on("policy"), ["t0", "t2", "t4", "t6", "t8"]);
        assert_eq!(
            crate::report::render::parquet::traces_batch(&split).unwrap(),
            crate::report::render::parquet::traces_batch(&whole).unwrap()
        );
    }

    #[test]
    fn a_batch_of_another_shape_is_refused() {
        let b = batch(0, 2);
        let narrow = b
            .record_batch()
            .project(&(0..TRACE_COLUMNS + 2).collect::<Vec<_>>())
            .unwrap();
        assert!(VerdictBatch::try_new(narrow).is_err());
        let swapped = b
            .record_batch()
            .project(&[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 16, 18,
            ])
            .unwrap();
        assert!(VerdictBatch::try_new(swapped).is_err());
    }

    #[test]
    fn reasons_name_the_step_or_span_they_are_about_and_counts_name_none() {
        let cases = [
            (
                "step 3: read_file argument path matches denied pattern",
                Some(Named::Step(3)),
            ),
            (
                "step 12 (read) result: 'prompt is too long'",
                Some(Named::Step(12)),
            ),
            (
                "Tool 'fetch' failed at step 2 (Non-zero exit_code: 1) and no subsequent call",
                Some(Named::Step(2)),
            ),
            (
                "span 4 (chat) finish reason: 'length'",
                Some(Named::Span(4)),
            ),
            (
                "Unrecovered span error at span 5 of 9: boom",
                Some(Named::Span(5)),
            ),
            ("no answer, 12 steps (cap), 33% empty results", None),
            ("24 tool calls > max 10", None),
            ("missing step 0", None),
            ("laststep 3 upstep 4: x", None),
            ("step 3rd", None),
            ("step", None),
            ("étape: step 7", Some(Named::Step(7))),
        ];
        for (reason, named) in cases {
            assert_eq!(named_in(reason), named, "{reason}");
        }
    }

    #[test]
    fn a_row_gives_each_check_the_span_its_reason_named_and_rows_without_one_none() {
        let mut builder = VerdictBatchBuilder::new(schema(&CHECKS), 2);
        for id in ["a", "b"] {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: "s",
                ..TraceFields::default()
            });
        }
        builder.push_verdict_spans(Some(",00f067aa0ba902b7,"));
        let columns = (0..3)
            .map(|_| {
                let mut column = VerdictColumn::new(2, Reasons::Fired, Redaction::Off);
                column.sure(false, "");
                column.sure(false, "");
                column
            })
            .collect();
        let batch = builder.finish(columns).expect("verdict batch");
        let spans = |row: usize| -> Vec<Option<&str>> {
            (0..3).map(|k| batch.row(row).verdict_span(k)).collect()
        };
        assert_eq!(spans(0), [None, Some("00f067aa0ba902b7"), None]);
        assert_eq!(spans(1), [None, None, None], "a row given none has none");
    }
}
