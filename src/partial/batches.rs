//! Verdict batches joined and sliced: what reading, writing and merging a partial share so that a
//! partial of a million small files holds a few large batches, and a file's rows are a zero-copy
//! slice of them.

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use crate::report::verdicts::VerdictBatch;

/// Rows per batch a partial read or merged is joined into: small files' batches are joined, so what
/// a partial keeps per file is its manifest entry.
pub(super) const JOINED_ROWS: usize = 8192;

/// Small batches joined at a time while they wait: a run of one-trace files gives one-row batches,
/// each with its own buffers for every column (kilobytes), so thousands of them must not wait as they
/// are.
const JOIN_SMALL: usize = 64;

/// Batches waiting to be joined, in order: the small ones are joined [`JOIN_SMALL`] at a time as
/// they come, so what waits is about the bytes of its rows.
pub(super) struct Waiting {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    /// Where the batches not yet joined begin.
    unjoined: usize,
    pub(super) rows: usize,
}

impl Waiting {
    pub(super) fn new(schema: SchemaRef) -> Waiting {
        Waiting {
            schema,
            batches: Vec::new(),
            unjoined: 0,
            rows: 0,
        }
    }

    pub(super) fn push(&mut self, batch: RecordBatch) -> Result<(), ArrowError> {
        self.rows += batch.num_rows();
        self.batches.push(batch);
        if self.batches.len() - self.unjoined >= JOIN_SMALL {
            let joined =
                arrow_select::concat::concat_batches(&self.schema, &self.batches[self.unjoined..])?;
            self.batches.truncate(self.unjoined);
            self.batches.push(joined);
            self.unjoined = self.batches.len();
        }
        Ok(())
    }

    /// Every waiting row as one batch (none when nothing waits).
    pub(super) fn take(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        let joined = match self.batches.len() {
            0 => None,
            1 => self.batches.pop(),
            _ => Some(arrow_select::concat::concat_batches(
                &self.schema,
                &self.batches,
            )?),
        };
        self.batches.clear();
        self.unjoined = 0;
        self.rows = 0;
        Ok(joined)
    }
}

/// Joins consecutive batches into batches of about [`JOINED_ROWS`] rows, in order.
pub(super) struct Joiner {
    pending: Waiting,
    pub(super) out: Vec<VerdictBatch>,
}

impl Joiner {
    pub(super) fn new(schema: SchemaRef) -> Joiner {
        Joiner {
            pending: Waiting::new(schema),
            out: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, batch: RecordBatch) -> Result<(), ArrowError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.pending.push(batch)?;
        if self.pending.rows >= JOINED_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> Result<(), ArrowError> {
        if let Some(joined) = self.pending.take()? {
            self.out.push(VerdictBatch::try_new(joined)?);
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<Vec<VerdictBatch>, ArrowError> {
        self.flush()?;
        Ok(self.out)
    }
}

/// The rows `start..start + len` of a table held as `batches` (whose first rows are at `offsets`),
/// as zero-copy slices.
pub(super) fn slice_rows<'a>(
    batches: &'a [VerdictBatch],
    offsets: &'a [usize],
    start: usize,
    len: usize,
) -> impl Iterator<Item = RecordBatch> + 'a {
    let first = offsets.partition_point(|&o| o <= start).saturating_sub(1);
    let end = start + len;
    batches[first.min(batches.len())..]
        .iter()
        .zip(&offsets[first.min(offsets.len())..])
        .take_while(move |(_, o)| **o < end)
        .filter_map(move |(b, &o)| {
            let from = start.max(o) - o;
            let to = end.min(o + b.len()) - o;
            (to > from).then(|| b.record_batch().slice(from, to - from))
        })
}

/// Where each batch's first row is in the whole table.
pub(super) fn batch_offsets(batches: &[VerdictBatch]) -> Vec<usize> {
    let mut at = 0;
    batches
        .iter()
        .map(|b| {
            let o = at;
            at += b.len();
            o
        })
        .collect()
}
