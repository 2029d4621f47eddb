//! Partial results: what one share of a run leaves for `faultgate merge`, and the merge itself.
//!
//! A run's result is its verdict table (one row per trace, in input-file order; [`crate::report::verdicts`])
//! plus what names the run. A partial is exactly that, on disk:
//!
//! - `steps.json`: for each file, the tool steps of its first failing traces (redacted and cut, as the
//!   HTML report shows them; [`crate::report::steps`]), within the run's bound;
//! - `verdicts.arrow`: the verdict table as an Arrow IPC file, its rows in the files' order (the
//!   record batches need not follow file boundaries: each file's rows are the next `rows` of its
//!   manifest entry);
//! - `manifest.json` ([`Manifest`]): the command, the settings that decide verdicts (checks, judge,
//!   redaction, the SHA-256 of the policy, golden, outcomes, workflow and label files, the tool
//!   version), the digest of the whole input list, and for each input file its place in that list, its
//!   run (a `baseline` argument), the shard that read it, its size, SHA-256 and row count; last, the
//!   SHA-256 of `verdicts.arrow` and `steps.json`, which the merge checks before reading them.
//!
//! A partial directory is written whole or not at all ([`crate::output::StagedDir`]).
//!
//! Merging partials checks that their settings agree (else it names the first that differs), that no
//! input file was read twice, and puts the files back in input order. Every output is then rendered
//! from the merged table by the code a single run uses, so a merge over all shards writes the bytes a
//! single run over the union writes. Merging is associative: a merged partial holds the same rows and
//! manifest whatever the grouping, and its table is cut into batches of a fixed size
//! ([`PartialWriter`]), so its bytes do not depend on it either.
//!
//! Scenario keys written to a partial are the redacted ones. A `calibrate` partial also needs the raw
//! key to match labels, so it keeps only the key's SHA-256 ([`key_digest`]); the merge matches the
//! labels' keys by the same digest.

mod batches;
mod manifest;
mod merge;
mod read;
mod shards;
mod write;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

use arrow_schema::SchemaRef;

use crate::report::spill::SpillError;
use crate::report::steps::{MAX_TRACES, TraceSteps};
use crate::report::verdicts::VerdictBatch;
use batches::{batch_offsets, slice_rows};

pub(crate) use crate::run::raw_keys::key_digest;
pub(crate) use manifest::{
    FORMAT, FileEntry, FileEntryNotes, Manifest, OtherInput, RunEntry, SLICES_SETTING,
    SessionUnits, Setting, parse_sha256,
};
pub(crate) use merge::{merge, merge_spilled, split_ids_warning};
pub(crate) use read::PartialHead;
pub(crate) use shards::{parse_shard, shard_plan};
pub(crate) use write::PartialWriter;

/// The manifest's file name inside a partial directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
/// The verdict table's file name inside a partial directory.
pub(crate) const VERDICTS_FILE: &str = "verdicts.arrow";
/// The failing traces' steps file name inside a partial directory.
pub(crate) const STEPS_FILE: &str = "steps.json";

/// A partial that cannot be written, read or merged.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    #[error("cannot read partial {}: {message}", crate::error::display_path(.path))]
    Read { path: PathBuf, message: String },
    #[error("cannot write partial {}: {message}", crate::error::display_path(.path))]
    Write { path: PathBuf, message: String },
    #[error(
        "partials differ in {setting}: {} has {first}, {} has {second}",
        crate::error::display_path(.first_path),
        crate::error::display_path(.second_path)
    )]
    Differs {
        setting: String,
        first: String,
        second: String,
        first_path: PathBuf,
        second_path: PathBuf,
    },
    #[error("input file {file} is in two partials ({} and {})", crate::error::display_path(.first), crate::error::display_path(.second))]
    SameFile {
        file: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("the partials cover {covered} of the run's {total} input files; missing: {missing}")]
    Incomplete {
        covered: usize,
        total: usize,
        missing: String,
    },
    #[error("nothing to merge: give at least one partial directory")]
    Empty,
    /// The merged verdicts could not be spilled or read back.
    #[error(transparent)]
    Spill(#[from] SpillError),
}

/// A partial: its manifest, its verdict table and each file's failing steps.
///
/// The table's rows are in file order, in batches that need not follow file boundaries (each file's
/// rows are the next `rows` of its [`FileEntry`]): a partial of a million one-trace files holds a few
/// large batches, not a batch per file.
#[derive(Debug, Clone)]
pub(crate) struct Partial {
    pub manifest: Manifest,
    pub batches: Vec<VerdictBatch>,
    pub steps: Vec<Vec<TraceSteps>>,
}

impl Partial {
    /// The schema of the verdict table.
    pub(crate) fn schema(&self) -> SchemaRef {
        self.manifest.verdict_schema()
    }

    /// The rows of the files `keep` selects, in order, as zero-copy slices of the table (the rows of
    /// consecutive selected files in one slice).
    pub(crate) fn rows_of(&self, keep: impl Fn(&FileEntry) -> bool) -> Vec<VerdictBatch> {
        let offsets = batch_offsets(&self.batches);
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut row = 0;
        for file in &self.manifest.files {
            if keep(file) {
                match ranges.last_mut() {
                    Some((start, len)) if *start + *len == row => *len += file.rows,
                    _ => ranges.push((row, file.rows)),
                }
            }
            row += file.rows;
        }
        ranges
            .into_iter()
            .flat_map(|(start, len)| slice_rows(&self.batches, &offsets, start, len))
            .map(|b| VerdictBatch::try_new(b).expect("a slice of a verdict batch"))
            .collect()
    }

    /// The failing traces' steps a run over these files keeps: the first [`MAX_TRACES`], in order.
    pub(crate) fn failing_steps(&self) -> Vec<TraceSteps> {
        self.steps
            .iter()
            .flatten()
            .take(MAX_TRACES)
            .cloned()
            .collect()
    }

    /// Cuts each file's steps to what is left of the run's bound after the files before it, so a
    /// partial holds the same steps whatever partials it was merged from.
    fn bound_steps(&mut self) {
        let mut kept = 0;
        for steps in &mut self.steps {
            steps.truncate(MAX_TRACES.saturating_sub(kept));
            kept += steps.len();
        }
    }

    /// Writes the partial into `dir` (created if needed), whole or not at all
    /// ([`crate::output::StagedDir`]), as [`PartialWriter`] writes it.
    ///
    /// # Errors
    ///
    /// A file that cannot be written.
    #[cfg(test)]
    pub(crate) fn write(&self, dir: &std::path::Path) -> Result<(), PartialError> {
        let mut writer = PartialWriter::new(dir, self.schema())?;
        writer.verdicts(|sink| {
            for batch in &self.batches {
                sink.push(batch)?;
            }
            Ok::<(), PartialError>(())
        })?;
        writer.finish(&self.manifest, &self.steps)
    }

    /// Returns an error unless this partial covers every input file of its run.
    ///
    /// # Errors
    ///
    /// [`PartialError::Incomplete`], naming up to three missing files by index.
    pub(crate) fn require_complete(&self) -> Result<(), PartialError> {
        self.manifest.require_complete()
    }
}
