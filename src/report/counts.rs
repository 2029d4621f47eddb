//! What the summary line and the table of a spilled run need from its rows, counted a batch at a time:
//! as the batches are written to the spill, or, when what is read back differs from what was written,
//! in a pass of its own over the spill.

use std::hash::BuildHasher;
use std::path::Path;

use super::id_hashes::IdHashes;
use super::{Report, VerdictBatch};

/// What the table and the summary line need from a spilled run: a run whose trace ids are all
/// distinct (each trace is one row, as the trace-identity rule makes it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpilledCounts {
    /// Rows, which are the distinct traces.
    pub traces: usize,
    /// Traces where any check fired.
    pub failed: usize,
    /// Fired counts per active check, in selection order.
    pub fired: Vec<usize>,
    /// Characters of the longest trace id, at most [`WIDE_ID_CHARS`]: the table's id column is as
    /// wide as its [`super::render::shown::IdColumn`] shows that id.
    pub(crate) longest_id: usize,
    /// Steps of others than the agent over every row, which no rule judged.
    pub user_steps: u64,
    /// The traces' own recorded outcomes over every row.
    pub recorded_outcomes: super::RecordedOutcomes,
}

impl SpilledCounts {
    /// Fired counts per distinct check name, in selection order (a duplicated check counts twice), as
    /// [`Report::fired`] gives them.
    pub(crate) fn fired_by_name<'a>(&self, report: &'a Report) -> Vec<(&'a str, usize)> {
        let mut out: Vec<(&str, usize)> = Vec::new();
        for (check, &n) in report.checks.iter().zip(&self.fired) {
            match out.iter_mut().find(|(name, _)| *name == check.name) {
                Some((_, count)) => *count += n,
                None => out.push((&check.name, n)),
            }
        }
        out
    }
}

use super::render::shown::WIDE_ID_CHARS;

/// Counts of rows taken so far, with the hashes of their trace ids to tell a repeated id at the end.
pub(crate) struct Counting {
    counts: SpilledCounts,
    /// Only the ids' hashes are kept, sorted on disk a run at a time.
    seen: IdHashes,
    hasher: foldhash::fast::FixedState,
}

impl std::fmt::Debug for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counting")
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl Counting {
    /// Nothing counted yet, for rows of `checks` checks; sorted runs of id hashes go to `dir`
    /// (`TMPDIR` when `None`).
    pub(crate) fn new(checks: usize, dir: Option<&Path>) -> Counting {
        Counting {
            counts: SpilledCounts {
                traces: 0,
                failed: 0,
                fired: vec![0; checks],
                longest_id: 0,
                user_steps: 0,
                recorded_outcomes: super::RecordedOutcomes::default(),
            },
            seen: IdHashes::new(dir),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
        }
    }

    /// Counts the rows of `batch`.
    pub(crate) fn add(&mut self, batch: &VerdictBatch) {
        for id in batch.trace_ids() {
            self.seen.push(self.hasher.hash_one(id), 0);
            // Counting stops where no column shows more: a long id is not counted to its end.
            let chars = id.chars().take(WIDE_ID_CHARS).count();
            self.counts.longest_id = self.counts.longest_id.max(chars);
        }
        self.counts.traces += batch.len();
        for (fired, n) in self.counts.fired.iter_mut().zip(batch.fired_counts()) {
            *fired += n;
        }
        self.counts.failed += batch.failed_count();
        self.counts.user_steps += batch.user_step_count();
        self.counts
            .recorded_outcomes
            .add(batch.recorded_outcome_counts());
    }

    /// The counts; `None` when two rows share a trace id (or their ids' 64-bit hashes meet), since
    /// such rows merge in the table: the caller then reads the run whole.
    ///
    /// # Errors
    ///
    /// The sorted runs of hashes cannot be read back.
    pub(crate) fn finish(self) -> std::io::Result<Option<SpilledCounts>> {
        let mut distinct = true;
        self.seen.repeated(|_, _| {
            distinct = false;
            false
        })?;
        Ok(distinct.then_some(self.counts))
    }
}
