//! Capacity planning for the column builders: how much each column holds, the room a batch starts
//! with (the last batch's, scaled to its weight and capped), and buffers of the exact size a huge
//! trace's rows take. The column builders of a batch are declared here once, with that room.

use arrow_array::LargeStringArray;
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, Int64Builder, LargeStringBuilder, ListBuilder,
    PrimitiveBuilder, UInt32Builder,
};
use arrow_array::types::ArrowPrimitiveType;

use super::record::SpanRecord;
use super::{attr, derive};

/// A trace of at least this many spans that starts a batch gets column buffers of the exact size its
/// rows take: growing them by doubling would hold up to twice that, and a copy of it at each step.
pub(super) const RESERVE_SPANS: usize = 1 << 16;

/// How much a column's builder holds: its values, and for text the bytes of text too.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Room {
    pub(super) items: usize,
    pub(super) bytes: usize,
}

/// Most a column starts a batch with, whatever the last batch held: a single huge trace makes a batch
/// of its own, and the next, ordinary batches must not keep its size.
const CARRIED_ITEMS_MAX: usize = 1 << 18;
pub(super) const CARRIED_BYTES_MAX: usize = 16 << 20;

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
pub(super) trait ColumnBuilder {
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

/// A string column whose rows are mostly null (error types, handoffs, checkpoints, ...). A run of nulls
/// is counted and appended in one call when a value or the batch's end comes: a call per null row cost
/// more than everything else these columns do.
#[derive(Default)]
pub(super) struct SparseText {
    values: LargeStringBuilder,
    pending_nulls: usize,
}

impl SparseText {
    pub(super) fn with_capacity(items: usize) -> SparseText {
        SparseText {
            values: LargeStringBuilder::with_capacity(items, 0),
            pending_nulls: 0,
        }
    }

    #[inline]
    pub(super) fn append_option(&mut self, value: Option<impl AsRef<str>>) {
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

    pub(super) fn finish(&mut self) -> LargeStringArray {
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
        pub(super) struct Builders {
            $(pub(super) $column: $builder,)*
        }

        /// What each column of a batch held.
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub(super) struct Rooms {
            $($column: Room,)*
        }

        impl Builders {
            pub(super) fn held(&self) -> Rooms {
                Rooms {
                    $($column: self.$column.held(),)*
                }
            }

            pub(super) fn with_rooms(rooms: &Rooms) -> Builders {
                Builders {
                    $($column: <$builder as ColumnBuilder>::with_room(rooms.$column),)*
                }
            }
        }

        impl Rooms {
            pub(super) fn scaled(&self, weight: usize, last_weight: usize) -> Rooms {
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
    pub(super) fn reserve(&mut self, spans: &[SpanRecord<'_>], steps: &[derive::Step<'_>]) {
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
}
