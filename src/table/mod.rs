//! The columnar tables the checks run over: traces, spans and tool steps of one batch of traces.
//!
//! `TraceBatch::build` turns parsed traces into Arrow record batches (schema in [`schema`]); checks and
//! the other readers of a batch see it through the typed view of [`columns`], walking a trace's rows
//! through its offsets.

pub mod columns;
pub(crate) mod derive;
pub(crate) mod flat;
pub(crate) mod lazy;
pub(crate) mod record;
pub mod schema;
pub mod slices;

/// Who made a tool step.
pub use record::Actor;
/// The attribute names the readers look for, as the trace formats spell them.
pub use record::attr;
pub(crate) mod signals;
#[cfg(test)]
pub(crate) mod testing;

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, Int64Builder, LargeStringBuilder, ListBuilder,
    PrimitiveBuilder, UInt32Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{ArrowPrimitiveType, Float64Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, LargeStringArray, RecordBatch,
};
use serde_json::Value;

use crate::compat::value::py_str;
use record::{AttrValue, Attrs, SpanRecord, TraceRecord, root_position};
use schema::*;

/// Traces, spans and steps of a batch, with per-trace row offsets into spans and steps.
pub struct TraceBatch {
    /// One row per trace, in input order ([`schema::TRACES`]).
    pub traces: RecordBatch,
    /// One row per span, a trace's spans contiguous ([`schema::SPANS`]).
    pub spans: RecordBatch,
    /// One row per tool step, a trace's steps contiguous ([`schema::STEPS`]).
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
    pub fn trace_f64(&self, name: &str) -> &Float64Array {
        column(&self.traces, name).as_primitive::<Float64Type>()
    }

    /// The integer column `name` of the trace table ([`TRACE_INPUT_TOKENS`], [`TRACE_OUTPUT_TOKENS`]).
    pub fn trace_i64(&self, name: &str) -> &Int64Array {
        column(&self.traces, name).as_primitive::<Int64Type>()
    }

    pub(crate) fn trace_bool(&self, name: &str) -> &BooleanArray {
        column(&self.traces, name).as_boolean()
    }
}

/// A handoff payload attribute as compact JSON: a string holding JSON is decoded first, since most
/// exporters can only record strings.
fn payload_json(value: &AttrValue<'_>) -> String {
    let decoded = value
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    match decoded {
        Some(v) => serde_json::to_string(&v).unwrap_or_default(),
        None => serde_json::to_string(value.to_json().as_ref()).unwrap_or_default(),
    }
}

/// What the tables keep beyond what every check reads, and which traces they keep.
#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    /// Keep the root span's attributes as JSON (only the policy's identity rule reads them).
    pub root_attributes: bool,
    /// `--agent-version`: keep only the traces of this agent version (`gen_ai.agent.version` on the
    /// root, else the last one seen, else the resource's `service.version`); the others, and traces that record none, become no rows, as if
    /// they were not in the input.
    pub agent_version: Option<Arc<str>>,
    /// Key scenarios `<domain>/<key>` where the root names a benchmark domain (`faultgate.domain`):
    /// set for a run whose traces come from several domains, whose task ids repeat.
    pub qualify_domains: bool,
    /// `--outcome-score`: the name of the score (Langfuse's `scores`) that is a trace's recorded outcome.
    pub outcome_score: Option<Arc<str>>,
    /// `--outcomes recorded`: a trajectory's `task_success` counts as its recorded outcome too.
    pub task_success_outcome: bool,
    /// `--by`: label each trace with its slice.
    pub slices: Option<Arc<crate::table::slices::SliceKeys>>,
    /// `--unit session`: every trace with a conversation id (`gen_ai.conversation.id` or a vendor's
    /// session) becomes no row: it goes to `turns`, to be checked with the other turns of its
    /// conversation, or nowhere when `turns` is `None` (a file read again, whose turns went there
    /// the first time). A trace the builder holds by its id is held all the same.
    pub sessions: bool,
    /// Where a session run's turns go (or, under `--follow-links`, the traces of a unit).
    pub(crate) turns: Option<Arc<dyn TurnSink>>,
    /// `--follow-links`: every trace of a unit of linked traces becomes no row: it goes to `turns`
    /// under its unit's id, to be joined with the unit's other traces (or nowhere, as for sessions).
    pub(crate) links: Option<Arc<dyn TraceUnits>>,
}

/// Where a session run's turns go as they are read (written to disk, grouped by conversation once
/// every file is read).
pub(crate) trait TurnSink: std::fmt::Debug + Send + Sync {
    /// Takes one turn of conversation `conversation`.
    fn put(&self, conversation: &str, trace: &TraceRecord<'_>);
}

/// The units of several traces a run checks (`--follow-links`): which unit a trace belongs to.
pub(crate) trait TraceUnits: std::fmt::Debug + Send + Sync {
    /// The id of the unit trace `trace_id` belongs to; `None` for a trace that is a unit of its own.
    fn unit_of(&self, trace_id: &str) -> Option<&str>;
}

/// Appends traces to Arrow builders and hands out a [`TraceBatch`] whenever asked; the builders are
/// reused from one batch to the next.
pub struct TableBuilder {
    options: TableOptions,
    columns: Builders,
    span_offsets: Vec<usize>,
    step_offsets: Vec<usize>,
    /// When set, traces with these ids are kept whole instead of becoming rows: how the parts of traces
    /// that span several files are gathered for merging.
    hold: Option<Hold>,
    /// Per span of the trace being appended, whether it backs a step (kept to reuse its buffer).
    backs: Vec<bool>,
    /// The slice label of the trace being appended (kept to reuse its buffer).
    slice_label: String,
    /// The weight of the batch being appended, when its reader said it ([`TableBuilder::start_batch`]).
    weight: Option<usize>,
    /// What the columns of the last batch with a known weight held, and that weight: the next batch
    /// starts with as much room, scaled to its own weight.
    last: Option<(Rooms, usize)>,
}

/// The traces a builder keeps whole, by id.
#[derive(Debug)]
struct Hold {
    ids: Arc<HashSet<String>>,
    records: Vec<TraceRecord<'static>>,
}

impl TableBuilder {
    /// An empty builder whose batches keep what `options` asks for.
    pub fn new(options: TableOptions) -> TableBuilder {
        TableBuilder {
            options,
            columns: Builders::default(),
            span_offsets: vec![0],
            step_offsets: vec![0],
            hold: None,
            backs: Vec::new(),
            slice_label: String::new(),
            weight: None,
            last: None,
        }
    }

    /// Starts a batch of traces whose reader weights (`Traces::weight`) add up to `weight`. Its columns
    /// start with the room the last batch's took, scaled to this weight: growing them from nothing
    /// would copy every buffer at each doubling and leave it up to twice the size it needs, with fresh
    /// pages to zero each time.
    pub(crate) fn start_batch(&mut self, weight: usize) {
        if !self.is_empty() {
            self.finish();
        }
        if let Some((rooms, last_weight)) = &self.last {
            self.columns = Builders::with_rooms(&rooms.scaled(weight, *last_weight));
        }
        self.weight = Some(weight);
    }

    /// Empties the builder and sets what the next batches keep: rows as `options` asks, and the traces
    /// with the ids of `hold` whole (every decoder hands its traces to [`TableBuilder::append`], so this
    /// works for every format).
    pub(crate) fn reset(&mut self, options: TableOptions, hold: Option<Arc<HashSet<String>>>) {
        if !self.is_empty() {
            self.finish();
        }
        self.options = options;
        self.hold = hold.map(|ids| Hold {
            ids,
            records: Vec::new(),
        });
    }

    /// The traces kept whole since the last reset, in the order they were appended.
    pub(crate) fn take_held(&mut self) -> Vec<TraceRecord<'static>> {
        self.hold
            .as_mut()
            .map(|h| std::mem::take(&mut h.records))
            .unwrap_or_default()
    }

    /// Traces appended since the last batch.
    pub fn len(&self) -> usize {
        self.span_offsets.len() - 1
    }

    /// Returns true if and only if no trace was appended since the last batch.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Derives one trace's facts and appends its rows (or keeps it whole, when held).
    pub fn append(&mut self, trace: &TraceRecord<'_>) {
        if (self.options.sessions || self.options.links.is_some())
            && !self
                .hold
                .as_ref()
                .is_some_and(|h| h.ids.contains(trace.trace_id.as_ref()))
            && let Some(unit) = match &self.options.links {
                Some(links) => links.unit_of(&trace.trace_id).map(str::to_string),
                None => record::conversation_id(&trace.spans),
            }
        {
            if let Some(turns) = &self.options.turns {
                turns.put(&unit, trace);
            }
            return;
        }
        if let Some(hold) = &mut self.hold
            && hold.ids.contains(trace.trace_id.as_ref())
        {
            hold.records.push(TraceRecord {
                trace_id: trace.trace_id.to_string().into(),
                agent: trace.agent.clone(),
                spans: trace
                    .spans
                    .iter()
                    .cloned()
                    .map(SpanRecord::into_owned)
                    .collect(),
                skipped_attributes: trace.skipped_attributes,
                resource: trace.resource.clone().into_owned(),
            });
            return;
        }
        self.append_row(trace, None);
    }

    /// Appends one conversation as one trace: the turns' spans in turn order, under `id`. The
    /// prompt, scenario key, agent and version are the first turn's; the answer, termination and
    /// recorded outcome the last turn's; the steps are each turn's in turn order; tokens, cost and
    /// latency add up over the turns. Returns, for each step of the conversation, its turn (from 0);
    /// nothing when the conversation is left out (`--agent-version`).
    pub(crate) fn append_turns(
        &mut self,
        id: &str,
        turns: &[TraceRecord<'_>],
    ) -> Option<Vec<usize>> {
        let mut spans = Vec::with_capacity(turns.iter().map(|t| t.spans.len()).sum());
        let mut resource = Attrs::default();
        for turn in turns {
            spans.extend(turn.spans.iter().cloned());
            resource.add_missing(&turn.resource);
        }
        let whole = TraceRecord {
            trace_id: id.into(),
            agent: turns.first().map(|t| t.agent.clone()).unwrap_or_default(),
            spans,
            skipped_attributes: 0,
            resource,
        };
        self.append_row(&whole, Some(turns))
    }

    /// Appends the rows of `trace`; when it is a conversation, `turns` are its turns (see
    /// [`TableBuilder::append_turns`], whose result this returns).
    fn append_row<'s>(
        &mut self,
        trace: &'s TraceRecord<'_>,
        turns: Option<&'s [TraceRecord<'_>]>,
    ) -> Option<Vec<usize>> {
        let spans = &trace.spans;
        let root = root_position(spans);
        let agent_version = derive::agent_version(spans, root, &trace.resource);
        if let Some(selected) = &self.options.agent_version
            && agent_version.as_deref() != Some(selected.as_ref())
        {
            return None;
        }
        // A conversation ends where its last turn ends.
        let (end_spans, end_root) = match turns.and_then(<[_]>::last) {
            Some(last) => (last.spans.as_slice(), root_position(&last.spans)),
            None => (spans.as_slice(), root),
        };
        let prompt = derive::prompt(spans, root);
        let answer = derive::answer(end_spans, end_root);
        let termination = derive::termination(end_spans, end_root);
        let mut scenario = derive::scenario_key(root.map(|r| &spans[r]), &prompt);
        let domain = root
            .and_then(|r| spans[r].attr(attr::DOMAIN))
            .map(|v| v.py_str());
        if self.options.qualify_domains
            && let Some(domain) = &domain
        {
            scenario = format!("{domain}/{scenario}");
        }
        let first_position = FirstPositions::of(spans);
        let mut of_steps = None;
        let steps =
            match turns {
                None => derive::steps(spans, first_position.ids_unique()),
                // Each turn's calls are paired with their results within the turn: call ids repeat
                // from one turn to the next.
                Some(turns) => {
                    let mut steps = Vec::new();
                    let mut of = Vec::new();
                    let mut offset = 0;
                    for (i, turn) in turns.iter().enumerate() {
                        let unique = FirstPositions::of(&turn.spans).ids_unique();
                        let before = steps.len();
                        steps.extend(derive::steps(&turn.spans, unique).into_iter().map(
                            |mut step| {
                                step.span += offset;
                                step
                            },
                        ));
                        of.extend(std::iter::repeat_n(i, steps.len() - before));
                        offset += turn.spans.len();
                    }
                    of_steps = Some(of);
                    steps
                }
            };
        let (input_tokens, output_tokens) = derive::usage(spans);
        if spans.len() >= RESERVE_SPANS && self.is_empty() {
            self.columns.reserve(spans, &steps);
        }
        let has_content = content_read(&prompt, &answer, &steps);

        let b = &mut self.columns;
        b.trace_id.append_value(&trace.trace_id);
        b.agent.append_value(&trace.agent);
        b.scenario.append_value(&scenario);
        b.prompt.append_value(&prompt);
        b.answer.append_value(&answer);
        b.termination.append_value(&termination);
        b.root.append_option(root.map(|r| r as u32));
        b.root_attributes.append_option(
            root.filter(|_| self.options.root_attributes)
                .map(|r| serde_json::to_string(&spans[r].attrs.to_map()).unwrap_or_default()),
        );
        b.input_tokens.append_option(input_tokens);
        b.output_tokens.append_option(output_tokens);
        let latency_ms = match turns {
            None => derive::latency_ms(spans, root),
            Some(turns) => turns
                .iter()
                .filter_map(|t| derive::latency_ms(&t.spans, root_position(&t.spans)))
                .reduce(|a, b| a + b),
        };
        b.latency_ms.append_option(latency_ms);
        b.cost_usd.append_option(derive::cost(spans));
        b.has_content.append_value(has_content);
        b.content_refs
            .append_value(spans.iter().map(derive::content_refs).sum::<usize>() as i64);
        b.linked_traces.append_option(derive::linked_traces(spans));
        // Evidence is looked for only where no step was read, so the common trace pays nothing.
        let evidence = steps
            .is_empty()
            .then(|| derive::tool_evidence(spans))
            .flatten();
        b.tool_evidence.append_option(evidence);
        let (offered, read_only) = derive::tool_definitions(spans);
        b.tool_definitions.append_option(offered);
        let label = self.options.slices.as_ref().map(|keys| {
            keys.label_into(&mut self.slice_label, trace, root, agent_version.as_deref());
            self.slice_label.as_str()
        });
        b.slice.append_option(label);
        b.agent_version.append_option(agent_version);
        b.read_only_tools.append_option(read_only);
        b.domain.append_option(domain);
        b.recorded_outcome.append_option(end_root.and_then(|r| {
            derive::recorded_outcome(
                &end_spans[r],
                self.options.outcome_score.as_deref(),
                self.options.task_success_outcome,
            )
        }));

        // Steps point at the first span with their span's id, and a span "backs" a step when any span
        // with its id does (ids may repeat).
        let backs = &mut self.backs;
        backs.clear();
        backs.resize(spans.len(), false);
        for step in &steps {
            let position = first_position.get(step.span);
            backs[position] = true;
            b.tool.append_value(&step.tool);
            b.arguments.append_value(&step.arguments);
            b.result.append_value(&step.result);
            b.step_span_id.append_value(&spans[step.span].span_id);
            b.step_span.append_value(position as u32);
            let (error, empty) = signals::result_signals(&step.result);
            b.structural_error.append_option(error);
            b.empty_result.append_value(empty);
            b.actor.append_value(step.actor.as_str());
            b.kind.append_value(step.kind.as_str());
        }
        for (i, span) in spans.iter().enumerate() {
            let backs_step = backs[first_position.get(i)] || backs[i];
            b.append_span(span, backs_step);
        }
        let last_span = self.span_offsets.last().copied().unwrap_or(0);
        self.span_offsets.push(last_span + spans.len());
        let last_step = self.step_offsets.last().copied().unwrap_or(0);
        self.step_offsets.push(last_step + steps.len());
        of_steps
    }

    /// The tables of every trace appended since the last batch; the builder is then empty again.
    pub fn finish(&mut self) -> TraceBatch {
        let span_offsets = std::mem::replace(&mut self.span_offsets, vec![0]);
        let step_offsets = std::mem::replace(&mut self.step_offsets, vec![0]);
        if let Some(weight) = self.weight.take().filter(|&w| w > 0) {
            self.last = Some((self.columns.held(), weight));
        }
        self.columns.finish(span_offsets, step_offsets)
    }
}

/// Returns true if and only if a prompt, an answer, or some step's arguments or result was read: what
/// a trace's `has_content` column holds.
fn content_read(prompt: &str, answer: &str, steps: &[derive::Step<'_>]) -> bool {
    !prompt.is_empty()
        || !answer.is_empty()
        || steps
            .iter()
            .any(|s| !s.arguments.is_empty() || !s.result.is_empty())
}

/// A trace of at least this many spans that starts a batch gets column buffers of the exact size its
/// rows take: growing them by doubling would hold up to twice that, and a copy of it at each step.
const RESERVE_SPANS: usize = 1 << 16;

/// Maps a span position to the position of the first span with the same id. Ids are unique in almost
/// every trace, so the map is kept only when they are not.
struct FirstPositions<'s> {
    spans: &'s [SpanRecord<'s>],
    repeated: Option<derive::FastMap<&'s str, usize>>,
}

impl<'s> FirstPositions<'s> {
    fn of(spans: &'s [SpanRecord<'s>]) -> FirstPositions<'s> {
        // A small trace is checked pair by pair, with no map to allocate.
        if spans.len() <= 16
            && (1..spans.len()).all(|i| spans[..i].iter().all(|s| s.span_id != spans[i].span_id))
        {
            return FirstPositions {
                spans,
                repeated: None,
            };
        }
        let mut first: derive::FastMap<&str, usize> = derive::FastMap::default();
        first.reserve(spans.len());
        let mut repeats = false;
        for (i, span) in spans.iter().enumerate() {
            match first.entry(&span.span_id) {
                std::collections::hash_map::Entry::Occupied(_) => repeats = true,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
        FirstPositions {
            spans,
            repeated: repeats.then_some(first),
        }
    }

    fn ids_unique(&self) -> bool {
        self.repeated.is_none()
    }

    fn get(&self, position: usize) -> usize {
        match &self.repeated {
            Some(first) => first[self.spans[position].span_id.as_ref()],
            None => position,
        }
    }
}

/// How much a column's builder holds: its values, and for text the bytes of text too.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Room {
    items: usize,
    bytes: usize,
}

/// Most a column starts a batch with, whatever the last batch held: a single huge trace makes a batch
/// of its own, and the next, ordinary batches must not keep its size.
const CARRIED_ITEMS_MAX: usize = 1 << 18;
const CARRIED_BYTES_MAX: usize = 16 << 20;

impl Room {
    /// This room for a batch `weight / last_weight` times as heavy, an eighth more so that a batch a
    /// little heavier than its weight says does not double the buffer, and capped.
    fn scaled(self, weight: usize, last_weight: usize) -> Room {
        let scale = |n: usize| {
            let n = (n as u128 * weight as u128 / last_weight.max(1) as u128) as usize;
            n.saturating_add(n / 8)
        };
        Room {
            items: scale(self.items).min(CARRIED_ITEMS_MAX),
            bytes: scale(self.bytes).min(CARRIED_BYTES_MAX),
        }
    }
}

/// An Arrow builder that says how much it holds and starts with room for as much.
trait ColumnBuilder {
    fn held(&self) -> Room;
    fn with_room(room: Room) -> Self;
}

impl ColumnBuilder for LargeStringBuilder {
    fn held(&self) -> Room {
        Room {
            items: self.len(),
            bytes: self.values_slice().len(),
        }
    }

    fn with_room(room: Room) -> Self {
        LargeStringBuilder::with_capacity(room.items, room.bytes)
    }
}

impl<T: ArrowPrimitiveType> ColumnBuilder for PrimitiveBuilder<T> {
    fn held(&self) -> Room {
        Room {
            items: self.len(),
            bytes: 0,
        }
    }

    fn with_room(room: Room) -> Self {
        PrimitiveBuilder::with_capacity(room.items)
    }
}

impl ColumnBuilder for BooleanBuilder {
    fn held(&self) -> Room {
        Room {
            items: self.len(),
            bytes: 0,
        }
    }

    fn with_room(room: Room) -> Self {
        BooleanBuilder::with_capacity(room.items)
    }
}

/// The attributes a span's row reads, found in one pass over the span's attributes: a lookup per key
/// compared every key of the span a dozen times over. A repeated key gives its last value, as
/// [`record::Attrs::get`] does.
#[derive(Default)]
struct ReadAttrs<'s, 'a> {
    operation: Option<&'s AttrValue<'a>>,
    error_type: Option<&'s AttrValue<'a>>,
    finish_reasons: Option<&'s AttrValue<'a>>,
    confirmed: Option<&'s AttrValue<'a>>,
    agent_name: Option<&'s AttrValue<'a>>,
    checkpoint: Option<&'s AttrValue<'a>>,
    confirmed_by: Option<&'s AttrValue<'a>>,
    handoff_from: Option<&'s AttrValue<'a>>,
    handoff_to: Option<&'s AttrValue<'a>>,
    handoff_payload: Option<&'s AttrValue<'a>>,
    response_id: Option<&'s AttrValue<'a>>,
    /// Any attribute that names a tool call (its name, arguments or result).
    tool_attributes: bool,
    openinference_kind: bool,
}

impl<'s, 'a> ReadAttrs<'s, 'a> {
    fn of(span: &'s SpanRecord<'a>) -> Self {
        let mut read = ReadAttrs::default();
        for (key, value) in span.attrs.iter() {
            let slot = match key {
                attr::OPERATION_NAME => &mut read.operation,
                attr::ERROR_TYPE => &mut read.error_type,
                attr::FINISH_REASONS => &mut read.finish_reasons,
                attr::CONFIRMED => &mut read.confirmed,
                attr::AGENT_NAME => &mut read.agent_name,
                attr::CHECKPOINT => &mut read.checkpoint,
                attr::CONFIRMED_BY => &mut read.confirmed_by,
                attr::HANDOFF_FROM => &mut read.handoff_from,
                attr::HANDOFF_TO => &mut read.handoff_to,
                attr::HANDOFF_PAYLOAD => &mut read.handoff_payload,
                attr::RESPONSE_ID => &mut read.response_id,
                attr::TOOL_NAME
                | attr::TOOL_CALL_ARGUMENTS
                | attr::TOOL_CALL_RESULT
                | attr::LEGACY_TOOL_NAME => {
                    read.tool_attributes = true;
                    continue;
                }
                attr::OPENINFERENCE_KIND => {
                    read.openinference_kind = true;
                    continue;
                }
                _ => continue,
            };
            *slot = Some(value);
        }
        read
    }
}

/// A string column whose rows are mostly null (error types, handoffs, checkpoints, ...). A run of nulls
/// is counted and appended in one call when a value or the batch's end comes: a call per null row cost
/// more than everything else these columns do.
#[derive(Default)]
struct SparseText {
    values: LargeStringBuilder,
    pending_nulls: usize,
}

impl SparseText {
    fn with_capacity(items: usize) -> SparseText {
        SparseText {
            values: LargeStringBuilder::with_capacity(items, 0),
            pending_nulls: 0,
        }
    }

    #[inline]
    fn append_option(&mut self, value: Option<impl AsRef<str>>) {
        match value {
            None => self.pending_nulls += 1,
            Some(value) => {
                self.append_pending_nulls();
                self.values.append_value(value);
            }
        }
    }

    fn append_pending_nulls(&mut self) {
        if self.pending_nulls > 0 {
            self.values.append_nulls(self.pending_nulls);
            self.pending_nulls = 0;
        }
    }

    fn finish(&mut self) -> LargeStringArray {
        self.append_pending_nulls();
        self.values.finish()
    }
}

impl ColumnBuilder for SparseText {
    fn held(&self) -> Room {
        Room {
            items: self.values.len() + self.pending_nulls,
            bytes: self.values.values_slice().len(),
        }
    }

    fn with_room(room: Room) -> Self {
        SparseText {
            values: LargeStringBuilder::with_room(room),
            pending_nulls: 0,
        }
    }
}

/// A list of strings per row (finish reasons): rows counted as items; the strings, rarely more than
/// one a row, start with as many slots as rows and grow their text as needed.
impl ColumnBuilder for ListBuilder<LargeStringBuilder> {
    fn held(&self) -> Room {
        Room {
            items: self.len(),
            bytes: self.values_ref().values_slice().len(),
        }
    }

    fn with_room(room: Room) -> Self {
        ListBuilder::with_capacity(
            LargeStringBuilder::with_capacity(room.items, room.bytes),
            room.items,
        )
    }
}

/// Declares the column builders of a batch once, with what every column does alike: say what it
/// holds, and start with room for a given amount.
macro_rules! builders {
    ($($column:ident: $builder:ty,)*) => {
        #[derive(Default)]
        struct Builders {
            $($column: $builder,)*
        }

        /// What each column of a batch held.
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        struct Rooms {
            $($column: Room,)*
        }

        impl Builders {
            fn held(&self) -> Rooms {
                Rooms {
                    $($column: self.$column.held(),)*
                }
            }

            fn with_rooms(rooms: &Rooms) -> Builders {
                Builders {
                    $($column: <$builder as ColumnBuilder>::with_room(rooms.$column),)*
                }
            }
        }

        impl Rooms {
            fn scaled(&self, weight: usize, last_weight: usize) -> Rooms {
                Rooms {
                    $($column: self.$column.scaled(weight, last_weight),)*
                }
            }
        }
    };
}

builders! {
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
    tool_evidence: SparseText,
    tool_definitions: SparseText,
    agent_version: SparseText,
    read_only_tools: SparseText,
    domain: SparseText,
    recorded_outcome: BooleanBuilder,
    slice: SparseText,
    content_refs: Int64Builder,
    linked_traces: LargeStringBuilder,

    span_id: LargeStringBuilder,
    parent: LargeStringBuilder,
    name: LargeStringBuilder,
    start: Int64Builder,
    end: Int64Builder,
    status_code: Int64Builder,
    status_message: LargeStringBuilder,
    error_type: SparseText,
    span_error: SparseText,
    finish_reasons: ListBuilder<LargeStringBuilder>,
    is_tool: BooleanBuilder,
    has_operation: BooleanBuilder,
    confirmed: BooleanBuilder,
    backs_step: BooleanBuilder,
    tool_attributes: BooleanBuilder,
    openinference_kind: BooleanBuilder,
    agent_name: LargeStringBuilder,
    operation: LargeStringBuilder,
    checkpoint: SparseText,
    confirmed_by: SparseText,
    handoff_from: SparseText,
    handoff_to: SparseText,
    handoff_payload: SparseText,
    compacted: BooleanBuilder,
    response_id: SparseText,

    tool: LargeStringBuilder,
    arguments: LargeStringBuilder,
    result: LargeStringBuilder,
    step_span_id: LargeStringBuilder,
    step_span: UInt32Builder,
    structural_error: SparseText,
    empty_result: BooleanBuilder,
    actor: LargeStringBuilder,
    kind: LargeStringBuilder,
}

/// A string column's builder with room for `items` values of `bytes` bytes in all.
fn text_builder(items: usize, bytes: usize) -> LargeStringBuilder {
    LargeStringBuilder::with_capacity(items, bytes)
}

impl Builders {
    /// Replaces the (empty) span and step builders with ones of the size the rows of `spans` and `steps`
    /// take: exact for the columns every span fills (ids, names, times, operations), none for those
    /// only a few spans fill.
    fn reserve(&mut self, spans: &[SpanRecord<'_>], steps: &[derive::Step<'_>]) {
        let n = spans.len();
        let sum = |f: &dyn Fn(&SpanRecord<'_>) -> usize| spans.iter().map(f).sum::<usize>();
        let attr_len =
            |span: &SpanRecord<'_>, key: &str| span.attr(key).map_or(0, |v| v.py_str().len());
        self.span_id = text_builder(n, sum(&|s| s.span_id.len()));
        self.parent = text_builder(n, sum(&|s| s.parent_id.as_ref().map_or(0, |p| p.len())));
        self.name = text_builder(n, sum(&|s| s.name.len()));
        self.start = Int64Builder::with_capacity(n);
        self.end = Int64Builder::with_capacity(n);
        self.status_code = Int64Builder::with_capacity(n);
        self.status_message = text_builder(n, sum(&|s| s.status_message.len()));
        self.error_type = SparseText::with_capacity(n);
        self.span_error = SparseText::with_capacity(n);
        self.finish_reasons = ListBuilder::with_capacity(LargeStringBuilder::new(), n);
        for flag in [
            &mut self.is_tool,
            &mut self.has_operation,
            &mut self.confirmed,
            &mut self.backs_step,
            &mut self.tool_attributes,
            &mut self.openinference_kind,
            &mut self.compacted,
        ] {
            *flag = BooleanBuilder::with_capacity(n);
        }
        self.agent_name = text_builder(n, sum(&|s| attr_len(s, attr::AGENT_NAME)));
        self.operation = text_builder(n, sum(&|s| attr_len(s, attr::OPERATION_NAME)));
        for column in [
            &mut self.checkpoint,
            &mut self.confirmed_by,
            &mut self.handoff_from,
            &mut self.handoff_to,
            &mut self.handoff_payload,
            &mut self.response_id,
        ] {
            *column = SparseText::with_capacity(n);
        }
        let m = steps.len();
        let step_sum = |f: &dyn Fn(&derive::Step<'_>) -> usize| steps.iter().map(f).sum::<usize>();
        self.tool = text_builder(m, step_sum(&|s| s.tool.len()));
        self.arguments = text_builder(m, step_sum(&|s| s.arguments.len()));
        self.result = text_builder(m, step_sum(&|s| s.result.len()));
        self.step_span_id = text_builder(m, step_sum(&|s| spans[s.span].span_id.len()));
        self.step_span = UInt32Builder::with_capacity(m);
        self.structural_error = SparseText::with_capacity(m);
        self.empty_result = BooleanBuilder::with_capacity(m);
        self.actor = text_builder(m, step_sum(&|s| s.actor.as_str().len()));
        self.kind = text_builder(m, step_sum(&|s| s.kind.as_str().len()));
    }

    fn append_span(&mut self, span: &SpanRecord<'_>, backs_step: bool) {
        let read = ReadAttrs::of(span);
        self.span_id.append_value(&span.span_id);
        self.parent.append_option(span.parent_id.as_deref());
        self.name.append_value(&span.name);
        self.start.append_value(span.start_ns);
        self.end.append_value(span.end_ns);
        self.status_code.append_value(span.status_code);
        self.status_message.append_value(&span.status_message);
        let error_type = read
            .error_type
            .filter(|v| v.truthy())
            .map(AttrValue::py_str);
        self.span_error
            .append_option(signals::span_error(span.status_code, error_type.as_deref()));
        self.error_type.append_option(error_type);
        match read.finish_reasons {
            None => {
                if span.attrs.contains_key(attr::OUTPUT_MESSAGES) {
                    for reason in derive::message_finish_reasons(span) {
                        self.finish_reasons.values().append_value(reason);
                    }
                }
            }
            Some(v) => match v.as_json() {
                Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for item in items {
                        self.finish_reasons.values().append_value(py_str(item));
                    }
                }
                _ => self.finish_reasons.values().append_value(v.py_str()),
            },
        }
        self.finish_reasons.append(true);
        self.is_tool
            .append_value(record::runs_a_tool(&span.name, read.operation));
        self.has_operation.append_value(read.operation.is_some());
        self.confirmed.append_value(match read.confirmed {
            Some(v) => match v.as_json() {
                Some(Value::Bool(b)) => *b,
                _ => matches!(v.as_str(), Some("true" | "True")),
            },
            None => false,
        });
        self.backs_step.append_value(backs_step);
        self.tool_attributes.append_value(read.tool_attributes);
        self.openinference_kind
            .append_value(read.openinference_kind);
        self.agent_name
            .append_option(read.agent_name.map(AttrValue::py_str));
        self.operation
            .append_option(read.operation.map(AttrValue::py_str));
        self.checkpoint
            .append_option(read.checkpoint.map(AttrValue::py_str));
        self.confirmed_by
            .append_option(read.confirmed_by.map(AttrValue::py_str));
        let handoff = read
            .handoff_from
            .map(AttrValue::py_str)
            .zip(read.handoff_to.map(AttrValue::py_str));
        self.handoff_from
            .append_option(handoff.as_ref().map(|(from, _)| from.as_ref()));
        self.handoff_to
            .append_option(handoff.as_ref().map(|(_, to)| to.as_ref()));
        self.handoff_payload
            .append_option(read.handoff_payload.map(payload_json));
        self.compacted
            .append_value(derive::compacted(span, read.finish_reasons));
        self.response_id
            .append_option(read.response_id.map(AttrValue::py_str));
    }

    fn finish(&mut self, span_offsets: Vec<usize>, step_offsets: Vec<usize>) -> TraceBatch {
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
                arc(self.tool_evidence.finish()),
                arc(self.tool_definitions.finish()),
                arc(self.agent_version.finish()),
                arc(self.read_only_tools.finish()),
                arc(self.domain.finish()),
                arc(self.recorded_outcome.finish()),
                arc(self.slice.finish()),
                arc(self.content_refs.finish()),
                arc(self.linked_traces.finish()),
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
                arc(self.compacted.finish()),
                arc(self.response_id.finish()),
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
                arc(self.actor.finish()),
                arc(self.kind.finish()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use record::Attrs;

    fn answering<'a>(trace_id: &'static str, answer: &'a str) -> TraceRecord<'a> {
        let mut attrs = Attrs::default();
        attrs.push(attr::COMPLETION, AttrValue::from(answer));
        TraceRecord {
            trace_id: trace_id.into(),
            agent: "agent".into(),
            spans: vec![SpanRecord {
                span_id: "root".into(),
                attrs,
                ..SpanRecord::default()
            }],
            skipped_attributes: 0,
            resource: Default::default(),
        }
    }

    #[test]
    fn retrievals_and_memory_operations_are_steps_of_their_own_kind_and_a_plan_is_none() {
        let span = |id: &'static str, start: i64, name: &'static str, pairs: &[(&str, &str)]| {
            let mut attrs = Attrs::default();
            for (k, v) in pairs {
                attrs.push(k.to_string(), AttrValue::Str(v.to_string().into()));
            }
            SpanRecord {
                span_id: id.into(),
                parent_id: (id != "r").then(|| "r".into()),
                name: name.into(),
                start_ns: start,
                attrs,
                ..SpanRecord::default()
            }
        };
        let trace = TraceRecord {
            trace_id: "t".into(),
            agent: "agent".into(),
            spans: vec![
                span(
                    "r",
                    0,
                    "invoke_agent",
                    &[(attr::OPERATION_NAME, "invoke_agent")],
                ),
                span(
                    "p",
                    1,
                    "plan tool_router",
                    &[(attr::OPERATION_NAME, "plan")],
                ),
                span(
                    "k",
                    2,
                    "retrieval kb",
                    &[
                        (attr::OPERATION_NAME, "retrieval"),
                        (attr::DATA_SOURCE_ID, "kb"),
                        (attr::RETRIEVAL_QUERY, "refund rules"),
                        (attr::RETRIEVAL_DOCUMENTS, r#"[{"id":"d1"}]"#),
                    ],
                ),
                span(
                    "m",
                    3,
                    "search_memory",
                    &[
                        (attr::OPERATION_NAME, "search_memory"),
                        (attr::MEMORY_STORE_ID, "prefs"),
                    ],
                ),
                span(
                    "x",
                    4,
                    "execute_tool refund",
                    &[(attr::OPERATION_NAME, "execute_tool")],
                ),
            ],
            skipped_attributes: 0,
            resource: Default::default(),
        };
        let batch = TraceBatch::build(&[trace]);
        let column = |name| -> Vec<String> {
            let array = batch.step_str(name);
            (0..array.len())
                .map(|i| array.value(i).to_string())
                .collect()
        };
        assert_eq!(column(STEP_TOOL), ["retrieval", "search_memory", "refund"]);
        assert_eq!(column(STEP_KIND), ["retrieval", "memory", "tool"]);
        assert_eq!(column(STEP_SPAN_ID), ["k", "m", "x"]);
        assert_eq!(
            column(STEP_ARGUMENTS),
            [
                r#"{"query":"refund rules","data_source_id":"kb"}"#,
                r#"{"store_id":"prefs"}"#,
                ""
            ]
        );
        assert_eq!(column(STEP_RESULT), [r#"[{"id":"d1"}]"#, "", ""]);
    }

    #[test]
    fn a_sparse_column_holds_its_nulls_where_they_were_appended() {
        let mut column = SparseText::with_capacity(2);
        column.append_option(None::<&str>);
        column.append_option(None::<&str>);
        column.append_option(Some("a"));
        column.append_option(None::<&str>);
        assert_eq!(column.held().items, 4);
        let array = column.finish();
        let cells: Vec<Option<&str>> = array.iter().collect();
        assert_eq!(cells, [None, None, Some("a"), None]);
        assert!(column.finish().is_empty());
    }

    #[test]
    fn one_pass_over_the_attributes_reads_what_each_lookup_reads() {
        // Every key a row reads, some twice with different values, among keys no row reads.
        let keys = [
            attr::OPERATION_NAME,
            attr::ERROR_TYPE,
            attr::FINISH_REASONS,
            attr::CONFIRMED,
            attr::AGENT_NAME,
            attr::CHECKPOINT,
            attr::CONFIRMED_BY,
            attr::HANDOFF_FROM,
            attr::HANDOFF_TO,
            attr::HANDOFF_PAYLOAD,
            attr::RESPONSE_ID,
        ];
        let lookups = |span: &SpanRecord<'_>| -> Vec<Option<String>> {
            keys.iter()
                .map(|k| span.attr(k).map(|v| v.py_str().into_owned()))
                .collect()
        };
        let one_pass = |span: &SpanRecord<'_>| -> Vec<Option<String>> {
            let read = ReadAttrs::of(span);
            [
                read.operation,
                read.error_type,
                read.finish_reasons,
                read.confirmed,
                read.agent_name,
                read.checkpoint,
                read.confirmed_by,
                read.handoff_from,
                read.handoff_to,
                read.handoff_payload,
                read.response_id,
            ]
            .iter()
            .map(|v| v.map(|v| v.py_str().into_owned()))
            .collect()
        };
        let mut attrs = Attrs::default();
        attrs.push("gen_ai.request.model", AttrValue::from("m"));
        for (i, key) in keys.iter().enumerate() {
            attrs.push(*key, AttrValue::Str(format!("first {i}").into()));
            if i % 3 == 0 {
                attrs.push("unread", AttrValue::from("x"));
                attrs.push(*key, AttrValue::Str(format!("last {i}").into()));
            }
        }
        let full = SpanRecord {
            name: "execute_tool lookup".into(),
            attrs,
            ..SpanRecord::default()
        };
        assert_eq!(one_pass(&full), lookups(&full));
        assert_eq!(one_pass(&full)[0].as_deref(), Some("last 0"));
        let read = ReadAttrs::of(&full);
        assert!(!read.tool_attributes && !read.openinference_kind);
        assert!(!record::runs_a_tool(&full.name, read.operation));

        let mut attrs = Attrs::default();
        attrs.push(attr::LEGACY_TOOL_NAME, AttrValue::from("search"));
        attrs.push(attr::OPENINFERENCE_KIND, AttrValue::from("TOOL"));
        let bare = SpanRecord {
            name: "execute_tool lookup".into(),
            attrs,
            ..SpanRecord::default()
        };
        assert_eq!(one_pass(&bare), lookups(&bare));
        let read = ReadAttrs::of(&bare);
        assert!(read.tool_attributes && read.openinference_kind);
        assert_eq!(
            record::runs_a_tool(&bare.name, read.operation),
            record::is_tool_span(&bare)
        );
        assert!(record::is_tool_span(&bare));
    }

    #[test]
    fn a_column_holding_more_than_2_gib_of_text_is_built() {
        // Two answers of 1.05 GiB each: past what 32-bit offsets can address.
        let text = "a".repeat(1_100 << 20);
        let mut builder = TableBuilder::new(TableOptions::default());
        builder.append(&answering("t1", &text));
        builder.append(&answering("t2", &text));
        let batch = builder.finish();
        let answers = batch.trace_str(TRACE_ANSWER);
        assert_eq!(answers.value(0).len(), text.len());
        assert_eq!(answers.value(1).len(), text.len());
        assert!(answers.value(1).ends_with("aaaa"));
        assert!(*answers.value_offsets().last().unwrap() > i64::from(i32::MAX));
        assert_eq!(batch.trace_str(TRACE_ID).value(1), "t2");
    }

    #[test]
    fn a_trace_of_many_spans_is_built_in_buffers_of_its_exact_size_with_the_same_rows() {
        let n = RESERVE_SPANS + 3;
        let spans: Vec<SpanRecord<'static>> = (0..n)
            .map(|i| {
                let mut attrs = Attrs::default();
                let tool = i % 4 == 3;
                let op = if i == 0 {
                    "invoke_agent"
                } else if tool {
                    "execute_tool"
                } else {
                    "chat"
                };
                attrs.push(attr::OPERATION_NAME, AttrValue::from(op));
                if tool {
                    attrs.push(attr::TOOL_NAME, AttrValue::from("count"));
                    attrs.push(
                        attr::TOOL_CALL_ARGUMENTS,
                        Value::from(format!("{{\"n\": {i}}}")).into(),
                    );
                    attrs.push(attr::TOOL_CALL_RESULT, Value::from(i.to_string()).into());
                }
                SpanRecord {
                    span_id: format!("{i:016x}").into(),
                    parent_id: (i > 0).then(|| format!("{:016x}", 0).into()),
                    name: op.into(),
                    start_ns: i as i64,
                    attrs,
                    ..SpanRecord::default()
                }
            })
            .collect();
        let big = TraceRecord {
            trace_id: "big".into(),
            agent: "agent".into(),
            spans,
            skipped_attributes: 0,
            resource: Default::default(),
        };
        // First in its batch, the trace gets exact buffers; after another trace, the growing ones.
        let alone = TraceBatch::build(std::slice::from_ref(&big));
        let after = TraceBatch::build(&[answering("small", "yes"), big]);
        assert_eq!(alone.spans, after.spans.slice(1, n));
        assert_eq!(alone.steps, after.steps);
        assert_eq!(alone.traces, after.traces.slice(1, 1));
        assert_eq!(alone.steps.num_rows(), n / 4);
        let ids = alone.span_str(SPAN_ID);
        assert_eq!(ids.values().len(), 16 * n);
        assert_eq!(ids.values().capacity(), ids.values().len());
        let arguments = alone.step_str(STEP_ARGUMENTS);
        assert_eq!(arguments.values().capacity(), arguments.values().len());
        assert!(after.span_str(SPAN_ID).values().capacity() > 16 * (n + 1));
    }

    #[test]
    fn a_batch_starts_with_the_room_the_last_one_took_scaled_to_its_weight_and_capped() {
        let answer = "an answer of forty bytes, give or take..";
        let mut builder = TableBuilder::new(TableOptions::default());
        builder.start_batch(1_000);
        for _ in 0..10 {
            builder.append(&answering("t", answer));
        }
        builder.finish();
        // Twice the weight: twice the room, an eighth more, so twenty answers fit without growing.
        builder.start_batch(2_000);
        for _ in 0..20 {
            builder.append(&answering("t", answer));
        }
        let batch = builder.finish();
        let answers = batch.trace_str(TRACE_ANSWER).values();
        assert_eq!(answers.len(), 20 * answer.len());
        let room = 2 * 10 * answer.len();
        // Arrow may round the request up to 64 bytes; growing would have doubled it.
        let carried = room + room / 8;
        assert!(
            (carried..=carried.next_multiple_of(64)).contains(&answers.capacity()),
            "{} bytes of room for {room}",
            answers.capacity()
        );
        let ids = batch.span_str(SPAN_ID);
        assert_eq!(ids.len(), 20);
        assert!(ids.values().capacity() >= "root".len() * 20);

        // One huge answer does not make the batches after it start as large.
        let huge = "a".repeat(CARRIED_BYTES_MAX * 2);
        builder.start_batch(2_000);
        builder.append(&answering("huge", &huge));
        builder.finish();
        builder.start_batch(2_000);
        builder.append(&answering("t", answer));
        let batch = builder.finish();
        assert_eq!(
            batch.trace_str(TRACE_ANSWER).values().capacity(),
            CARRIED_BYTES_MAX
        );

        // A batch whose weight nobody gave carries nothing to the next.
        let mut builder = TableBuilder::new(TableOptions::default());
        builder.append(&answering("t", answer));
        builder.finish();
        builder.start_batch(2_000);
        builder.append(&answering("t", answer));
        let batch = builder.finish();
        let capacity = batch.trace_str(TRACE_ANSWER).values().capacity();
        assert!(
            capacity <= answer.len().next_multiple_of(64),
            "{capacity} bytes of room for one answer"
        );
    }

    #[test]
    fn the_builder_starts_empty_after_each_batch() {
        let mut builder = TableBuilder::new(TableOptions::default());
        builder.append(&answering("t1", "yes"));
        assert_eq!(builder.finish().len(), 1);
        assert!(builder.is_empty());
        builder.append(&answering("t2", "no"));
        let batch = builder.finish();
        assert_eq!(batch.len(), 1);
        assert_eq!(batch.trace_str(TRACE_ANSWER).value(0), "no");
        assert_eq!(batch.span_rows(0), 0..1);
    }
}
