//! Building the tables: [`TableBuilder`] turns each trace's span records into rows of the traces,
//! spans and steps tables (deriving prompts, answers, scenario keys and steps on the way), holds
//! back the traces a run gathers whole, and hands out a [`TraceBatch`] when asked.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use serde_json::Value;

use super::capacity::{Builders, RESERVE_SPANS, Rooms};
use super::record::{self, AttrValue, Attrs, SpanRecord, TraceRecord, root_position};
use super::schema::*;
use super::{TableOptions, TraceBatch, attr, derive, signals};
use crate::compat::value::py_str;

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

/// The attributes a span's row reads, found in one pass over the span's attributes: a lookup per key
/// compared every key of the span a dozen times over. A repeated key gives its last value, as
/// [`record::Attrs::get`] does.
#[derive(Default)]
pub(super) struct ReadAttrs<'s, 'a> {
    pub(super) operation: Option<&'s AttrValue<'a>>,
    pub(super) error_type: Option<&'s AttrValue<'a>>,
    pub(super) finish_reasons: Option<&'s AttrValue<'a>>,
    pub(super) confirmed: Option<&'s AttrValue<'a>>,
    pub(super) agent_name: Option<&'s AttrValue<'a>>,
    pub(super) checkpoint: Option<&'s AttrValue<'a>>,
    pub(super) confirmed_by: Option<&'s AttrValue<'a>>,
    pub(super) handoff_from: Option<&'s AttrValue<'a>>,
    pub(super) handoff_to: Option<&'s AttrValue<'a>>,
    pub(super) handoff_payload: Option<&'s AttrValue<'a>>,
    pub(super) response_id: Option<&'s AttrValue<'a>>,
    /// Any attribute that names a tool call (its name, arguments or result).
    pub(super) tool_attributes: bool,
    pub(super) openinference_kind: bool,
}

impl<'s, 'a> ReadAttrs<'s, 'a> {
    pub(super) fn of(span: &'s SpanRecord<'a>) -> Self {
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

impl Builders {
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
