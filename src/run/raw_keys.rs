//! Raw scenario keys never leave the process: a run that keeps them (to match `calibrate`'s labels)
//! holds their SHA-256 instead once its files are read, and a partial records only that digest. Here,
//! below both the run and the partials, so that each can use it without importing the other.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, LargeStringArray, RecordBatch};
use arrow_schema::ArrowError;

use crate::report::verdicts::VerdictBatch;

/// Column of the raw scenario key in the verdict schema.
const RAW_SCENARIO_COLUMN: usize = 2;

/// The digest a run keeps instead of a raw scenario key.
pub(crate) fn key_digest(raw: &str) -> String {
    crate::digest::sha256_hex(raw.as_bytes())
}

/// Replaces the raw scenario keys of a batch by their digests, so no raw key leaves the process.
pub(crate) fn digest_raw_keys(batch: &VerdictBatch) -> Result<VerdictBatch, ArrowError> {
    let rb = batch.record_batch();
    let raw = rb
        .column(RAW_SCENARIO_COLUMN)
        .as_any()
        .downcast_ref::<LargeStringArray>()
        .ok_or_else(|| ArrowError::SchemaError("raw_scenario is not a string column".into()))?;
    let digested: LargeStringArray = raw.iter().map(|k| k.map(key_digest)).collect();
    let mut columns: Vec<ArrayRef> = rb.columns().to_vec();
    columns[RAW_SCENARIO_COLUMN] = Arc::new(digested);
    VerdictBatch::try_new(RecordBatch::try_new(rb.schema(), columns)?)
}
