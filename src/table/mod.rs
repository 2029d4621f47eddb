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

mod build;
mod capacity;
mod read;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use arrow_array::RecordBatch;

use record::TraceRecord;

pub use build::TableBuilder;

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
