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

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::hash::BuildHasher;
use std::io::BufReader;

use arrow_array::{Array, ArrayRef, LargeStringArray, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_schema::{ArrowError, SchemaRef};
use serde::{Deserialize, Serialize};

use crate::report::id_hashes::IdHashes;
use crate::report::spill::{SpillError, SpilledFile, SpilledRun, VerdictSpill};
use crate::report::steps::{MAX_TRACES, TraceSteps};
use crate::report::verdicts::{self, VerdictBatch};

/// The manifest's file name inside a partial directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
/// The verdict table's file name inside a partial directory.
pub(crate) const VERDICTS_FILE: &str = "verdicts.arrow";
/// The failing traces' steps file name inside a partial directory.
pub(crate) const STEPS_FILE: &str = "steps.json";
/// The setting of a partial written with `--by`: its keys, joined by `,`. Recorded only then, and
/// then its table has the `slice` column.
pub(crate) const SLICES_SETTING: &str = "by";

/// The manifest's `format`; a partial of another format is refused.
pub(crate) const FORMAT: &str = "faultgate-partial/8";

/// Column of the raw scenario key in the verdict schema.
const RAW_SCENARIO_COLUMN: usize = 2;

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

/// One setting of a run that decides its verdicts; partials merge only when all agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Setting {
    pub name: String,
    pub value: String,
}

/// One input file of a partial: its path and a few counters, so that a partial of a million files
/// costs little to write or merge. Its digest is kept as bytes, and what few files have to say
/// besides (warnings, a skip reason) is boxed and absent when empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredFileEntry", into = "StoredFileEntry")]
pub(crate) struct FileEntry {
    /// Place in the run's whole input list (every shard lists the same files).
    pub index: usize,
    /// The run it belongs to: the position of its argument for `baseline`, else 0.
    pub run: usize,
    /// The shard that read it (`K` of `--shard K/N`, 0 without one).
    pub shard: usize,
    /// Display path.
    pub path: Box<str>,
    pub bytes: u64,
    /// Its SHA-256, when it was taken.
    pub sha256: Option<[u8; 32]>,
    /// Its rows in the verdict table.
    pub rows: usize,
    /// Its warnings and skip reasons, when it has any.
    pub notes: Option<Box<FileEntryNotes>>,
}

/// What an input file of a partial has to say besides its rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileEntryNotes {
    /// Its input warnings (a shard's trace-identity warnings go with its last file).
    pub warnings: Vec<String>,
    /// Why it was skipped: a file in a walked folder that holds no traces.
    pub skipped: Option<String>,
    /// What `--skip-bad-input` left out of it.
    pub skipped_input: crate::report::SkippedInput,
}

impl FileEntryNotes {
    /// The notes, or none when there is nothing in them.
    pub(crate) fn boxed(self) -> Option<Box<FileEntryNotes>> {
        let empty =
            self.warnings.is_empty() && self.skipped.is_none() && self.skipped_input.is_none();
        (!empty).then(|| Box::new(self))
    }
}

impl FileEntry {
    /// Its SHA-256 as the manifest and the audit show it: lowercase hex, empty when not taken.
    pub(crate) fn sha256_hex(&self) -> String {
        self.sha256
            .map(|d| crate::digest::lower_hex(&d))
            .unwrap_or_default()
    }

    /// What `--skip-bad-input` left out of it.
    pub(crate) fn skipped_input(&self) -> crate::report::SkippedInput {
        self.notes
            .as_ref()
            .map(|n| n.skipped_input)
            .unwrap_or_default()
    }
}

/// A [`FileEntry`] as `manifest.json` holds it.
#[derive(Serialize, Deserialize)]
struct StoredFileEntry {
    index: usize,
    run: usize,
    shard: usize,
    path: String,
    bytes: u64,
    sha256: String,
    rows: usize,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    skipped: Option<String>,
    #[serde(default, skip_serializing_if = "crate::report::SkippedInput::is_none")]
    skipped_input: crate::report::SkippedInput,
}

impl From<FileEntry> for StoredFileEntry {
    fn from(entry: FileEntry) -> StoredFileEntry {
        let sha256 = entry.sha256_hex();
        let notes = entry.notes.map(|n| *n).unwrap_or_default();
        StoredFileEntry {
            index: entry.index,
            run: entry.run,
            shard: entry.shard,
            path: entry.path.into(),
            bytes: entry.bytes,
            sha256,
            rows: entry.rows,
            warnings: notes.warnings,
            skipped: notes.skipped,
            skipped_input: notes.skipped_input,
        }
    }
}

impl TryFrom<StoredFileEntry> for FileEntry {
    type Error = String;

    fn try_from(stored: StoredFileEntry) -> Result<FileEntry, String> {
        let sha256 = if stored.sha256.is_empty() {
            None
        } else {
            Some(parse_sha256(&stored.sha256).ok_or_else(|| {
                format!(
                    "file {}: sha256 '{}' is not 64 hex digits",
                    stored.path, stored.sha256
                )
            })?)
        };
        Ok(FileEntry {
            index: stored.index,
            run: stored.run,
            shard: stored.shard,
            path: stored.path.into_boxed_str(),
            bytes: stored.bytes,
            sha256,
            rows: stored.rows,
            notes: FileEntryNotes {
                warnings: stored.warnings,
                skipped: stored.skipped,
                skipped_input: stored.skipped_input,
            }
            .boxed(),
        })
    }
}

/// The bytes of a SHA-256 written as 64 lowercase hex digits.
pub(crate) fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (value(pair[0])? << 4) | value(pair[1])?;
    }
    Some(out)
}

/// One run of a partial: for `baseline` each trace argument, else the single run over all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunEntry {
    /// The argument as typed (the baseline's per-run line).
    pub arg: String,
    /// The argument as the outputs show it.
    pub shown: String,
}

/// An input besides the traces (policy, golden, ...) as the audit lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OtherInput {
    pub role: String,
    pub path: String,
    pub sha256: String,
}

/// Tokens a judge used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What names a partial and its rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub format: String,
    /// `check`, `baseline` or `calibrate`.
    pub command: String,
    /// The settings every partial of one run shares, in a fixed order.
    pub settings: Vec<Setting>,
    /// Checks in selection order (the verdict table's columns).
    pub checks: Vec<String>,
    pub judge: String,
    pub redaction: String,
    /// Number of input files of the whole run.
    pub inputs_total: usize,
    pub runs: Vec<RunEntry>,
    /// This partial's input files, in input order.
    pub files: Vec<FileEntry>,
    /// Policy, golden and other inputs, for the audit.
    pub other_inputs: Vec<OtherInput>,
    /// The command that reproduces the run, without the share and partial flags.
    pub repro: String,
    /// Tokens the judge used, when the run had a judge.
    pub judge_usage: Option<Usage>,
    /// Some file was read in a format whose trace ids are names (the outputs then show them wider,
    /// [`crate::report::shown::IdColumn`]); absent when none was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub named_ids: bool,
    /// `check --unit session`: the units checked after the files; absent for a partial of traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionUnits>,
}

/// What a partial of `check --unit session` holds besides its files' rows: the units a run over every
/// file checks after its files (the traces merged across files, then the conversations), those of
/// this partial's shard. Their rows follow the files' in the verdict table, in the order of their
/// places, which number every such unit of the whole run the same way in every shard: a merge puts
/// the rows of all shards back in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SessionUnits {
    /// The places below this one are traces without a conversation, the others conversations.
    pub alone: u64,
    /// Each row's place, rising.
    pub places: Vec<u64>,
    /// The rows whose tools were not read, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread_tools: Option<UnreadUnits>,
}

/// The units of a [`SessionUnits`] that used tools but had none read: the warning a run over every
/// file gives about them counts all shards' and names the first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UnreadUnits {
    pub count: usize,
    /// The first one's place, id and what shows its tools (masked).
    pub place: u64,
    pub trace: String,
    pub evidence: String,
}

impl SessionUnits {
    /// The units of a shard, as its run numbered them.
    pub(crate) fn of(tail: crate::run::TailPlaces) -> SessionUnits {
        SessionUnits {
            alone: tail.alone,
            unread_tools: tail
                .first_unread
                .map(|(place, trace, evidence)| UnreadUnits {
                    count: tail.unread,
                    place,
                    trace,
                    evidence,
                }),
            places: tail.places,
        }
    }

    /// The input warning about the units whose tools were not read, as a run over every file gives
    /// it after its last file's.
    pub(crate) fn unread_warning(&self) -> Option<String> {
        self.unread_tools.as_ref().map(|u| {
            crate::run::unread_tools_warning(
                u.count,
                crate::run::MERGED_TRACES,
                &u.trace,
                &u.evidence,
            )
        })
    }
}

/// The SHA-256 of the files a manifest describes, stored after its other keys; a partial whose files
/// do not match them is refused, since a changed byte (inside a string, say) would still parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Digests {
    verdicts_sha256: String,
    steps_sha256: String,
}

/// `manifest.json` as written: the manifest, then the digests of the partial's other files.
#[derive(Serialize)]
struct StoredManifest<'a> {
    #[serde(flatten)]
    manifest: &'a Manifest,
    #[serde(flatten)]
    digests: Digests,
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

/// Rows per batch a partial read or merged is joined into: small files' batches are joined, so what
/// a partial keeps per file is its manifest entry.
const JOINED_ROWS: usize = 8192;

/// Small batches joined at a time while they wait: a run of one-trace files gives one-row batches,
/// each with its own buffers for every column (kilobytes), so thousands of them must not wait as they
/// are.
const JOIN_SMALL: usize = 64;

/// Batches waiting to be joined, in order: the small ones are joined [`JOIN_SMALL`] at a time as
/// they come, so what waits is about the bytes of its rows.
struct Waiting {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    /// Where the batches not yet joined begin.
    unjoined: usize,
    rows: usize,
}

impl Waiting {
    fn new(schema: SchemaRef) -> Waiting {
        Waiting {
            schema,
            batches: Vec::new(),
            unjoined: 0,
            rows: 0,
        }
    }

    fn push(&mut self, batch: RecordBatch) -> Result<(), ArrowError> {
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
    fn take(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
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
struct Joiner {
    pending: Waiting,
    out: Vec<VerdictBatch>,
}

impl Joiner {
    fn new(schema: SchemaRef) -> Joiner {
        Joiner {
            pending: Waiting::new(schema),
            out: Vec::new(),
        }
    }

    fn push(&mut self, batch: RecordBatch) -> Result<(), ArrowError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.pending.push(batch)?;
        if self.pending.rows >= JOINED_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ArrowError> {
        if let Some(joined) = self.pending.take()? {
            self.out.push(VerdictBatch::try_new(joined)?);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<VerdictBatch>, ArrowError> {
        self.flush()?;
        Ok(self.out)
    }
}

/// The rows `start..start + len` of a table held as `batches` (whose first rows are at `offsets`),
/// as zero-copy slices.
fn slice_rows<'a>(
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
fn batch_offsets(batches: &[VerdictBatch]) -> Vec<usize> {
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

/// The digest a partial keeps instead of a raw scenario key.
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
    pub(crate) fn write(&self, dir: &Path) -> Result<(), PartialError> {
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

/// Writes a partial directory, whole or not at all ([`crate::output::StagedDir`]): its verdict
/// table from batches fed one at a time ([`PartialWriter::verdicts`]), then its steps and manifest
/// ([`PartialWriter::finish`]). Nothing holds the table: each batch goes to the file as it comes,
/// hashed on its way, and the manifest records the SHA-256 of the table and of the steps file, so a
/// merge notices a byte changed in either.
pub(crate) struct PartialWriter {
    dir: PathBuf,
    staged: crate::output::StagedDir,
    schema: SchemaRef,
    verdicts_sha256: Option<String>,
}

/// Rows per batch of a verdict table as a partial writes it: every batch but the last holds exactly
/// this many, so the file's bytes depend on its rows alone, not on how they were read, produced or
/// grouped (a partial merged in levels is the bytes of one merged flat). Small, as a batch waits
/// whole before it is written: with every reason kept a row is about a kilobyte.
const WRITTEN_ROWS: usize = 1024;

/// Where [`PartialWriter::verdicts`] sends the batches: cut into batches of [`WRITTEN_ROWS`] rows.
pub(crate) struct VerdictSink<'w> {
    /// The partial's directory, for messages.
    dir: PathBuf,
    writer: arrow_ipc::writer::FileWriter<HashingWriter<'w>>,
    pending: Waiting,
    rows: usize,
}

impl VerdictSink<'_> {
    /// Appends the rows of `batch` to the table.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub(crate) fn push(&mut self, batch: &VerdictBatch) -> Result<(), PartialError> {
        self.append(batch)
            .map_err(|e| write_error(&self.dir, format!("{VERDICTS_FILE}: {e}")))
    }

    fn append(&mut self, batch: &VerdictBatch) -> Result<(), ArrowError> {
        let batch = batch.record_batch();
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows();
        self.pending.push(batch.clone())?;
        while self.pending.rows >= WRITTEN_ROWS {
            let joined = self.pending.take()?.expect("rows waiting");
            self.writer.write(&joined.slice(0, WRITTEN_ROWS))?;
            let rest = joined.num_rows() - WRITTEN_ROWS;
            if rest > 0 {
                self.pending.push(joined.slice(WRITTEN_ROWS, rest))?;
            }
        }
        Ok(())
    }
}

/// A writer that takes the SHA-256 of the bytes it passes on.
struct HashingWriter<'w> {
    inner: &'w mut dyn std::io::Write,
    hasher: crate::digest::Hasher,
}

impl std::io::Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl PartialWriter {
    /// Starts the partial `dir`, for a verdict table of `schema`.
    ///
    /// # Errors
    ///
    /// The directory cannot be staged.
    pub(crate) fn new(dir: &Path, schema: SchemaRef) -> Result<PartialWriter, PartialError> {
        let staged =
            crate::output::StagedDir::new(dir).map_err(|e| write_error(dir, e.to_string()))?;
        Ok(PartialWriter {
            dir: dir.to_path_buf(),
            staged,
            schema,
            verdicts_sha256: None,
        })
    }

    /// Writes the verdict table from the batches `feed` pushes, in order; returns its rows.
    ///
    /// # Errors
    ///
    /// The error `feed` returned, or the file cannot be written.
    pub(crate) fn verdicts<E: Into<PartialError>>(
        &mut self,
        feed: impl FnOnce(&mut VerdictSink<'_>) -> Result<(), E>,
    ) -> Result<usize, PartialError> {
        let schema = self.schema.clone();
        let mut failed: Option<PartialError> = None;
        let mut done: Option<(usize, String)> = None;
        let written = self.staged.write_with(VERDICTS_FILE, |out| {
            let hashing = HashingWriter {
                inner: out,
                hasher: crate::digest::Hasher::new(),
            };
            let writer = arrow_ipc::writer::FileWriter::try_new(hashing, &schema)
                .map_err(std::io::Error::other)?;
            let mut sink = VerdictSink {
                dir: self.dir.clone(),
                writer,
                pending: Waiting::new(schema.clone()),
                rows: 0,
            };
            if let Err(e) = feed(&mut sink) {
                let e = e.into();
                let message = e.to_string();
                failed = Some(e);
                return Err(std::io::Error::other(message));
            }
            let VerdictSink {
                mut writer,
                mut pending,
                rows,
                ..
            } = sink;
            if let Some(last) = pending.take().map_err(std::io::Error::other)? {
                writer.write(&last).map_err(std::io::Error::other)?;
            }
            writer.finish().map_err(std::io::Error::other)?;
            let hashing = writer.into_inner().map_err(std::io::Error::other)?;
            done = Some((rows, hashing.hasher.finish_hex()));
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        written.map_err(|e| write_error(&self.dir, format!("{VERDICTS_FILE}: {e}")))?;
        let (rows, digest) = done.expect("a table written");
        self.verdicts_sha256 = Some(digest);
        Ok(rows)
    }

    /// Writes the steps file (`steps`, one list per file of `manifest`) and the manifest, and moves
    /// the directory into place.
    ///
    /// # Errors
    ///
    /// A file that cannot be written.
    pub(crate) fn finish(
        mut self,
        manifest: &Manifest,
        steps: &[Vec<TraceSteps>],
    ) -> Result<(), PartialError> {
        let dir = self.dir.clone();
        let fail = |message: String| write_error(&dir, message);
        let verdicts_sha256 = self
            .verdicts_sha256
            .take()
            .ok_or_else(|| fail(format!("{VERDICTS_FILE}: not written")))?;
        let mut steps_sha256 = None;
        self.staged
            .write_with(STEPS_FILE, |out| {
                let mut hashing = HashingWriter {
                    inner: out,
                    hasher: crate::digest::Hasher::new(),
                };
                serde_json::to_writer(&mut hashing, steps)?;
                steps_sha256 = Some(hashing.hasher.finish_hex());
                Ok(())
            })
            .map_err(|e| fail(format!("{STEPS_FILE}: {e}")))?;
        let stored = StoredManifest {
            manifest,
            digests: Digests {
                verdicts_sha256,
                steps_sha256: steps_sha256.expect("steps written"),
            },
        };
        self.staged
            .write_with(MANIFEST_FILE, |out| {
                serde_json::to_writer_pretty(&mut *out, &stored)?;
                out.write_all(b"\n")
            })
            .map_err(|e| fail(format!("{MANIFEST_FILE}: {e}")))?;
        self.staged.commit().map_err(|e| fail(e.to_string()))
    }
}

/// A partial that cannot be written.
fn write_error(dir: &Path, message: String) -> PartialError {
    PartialError::Write {
        path: dir.to_path_buf(),
        message,
    }
}

impl Manifest {
    /// The rows of the verdict table: its files', then its session units'.
    pub(crate) fn listed_rows(&self) -> usize {
        self.files.iter().map(|f| f.rows).sum::<usize>()
            + self.sessions.as_ref().map_or(0, |s| s.places.len())
    }

    /// The schema of the partial's verdict table: its checks' columns, after the `slice` column
    /// when the partial was written with `--by`.
    pub(crate) fn verdict_schema(&self) -> SchemaRef {
        let names: Vec<&str> = self.checks.iter().map(String::as_str).collect();
        let sliced = self.settings.iter().any(|s| s.name == SLICES_SETTING);
        verdicts::schema_sliced(&names, sliced)
    }

    /// Returns an error unless these files are every input file of the run.
    ///
    /// # Errors
    ///
    /// [`PartialError::Incomplete`], naming up to three missing files by index.
    pub(crate) fn require_complete(&self) -> Result<(), PartialError> {
        let total = self.inputs_total;
        let covered = self.files.len();
        if covered == total {
            return Ok(());
        }
        let have: HashSet<usize> = self.files.iter().map(|f| f.index).collect();
        let missing: Vec<String> = (0..total)
            .filter(|i| !have.contains(i))
            .take(3)
            .map(|i| format!("#{}", i + 1))
            .collect();
        let more = total - covered;
        let missing = if more > missing.len() {
            format!(
                "input files {} and {} more",
                missing.join(", "),
                more - missing.len()
            )
        } else {
            format!("input files {}", missing.join(", "))
        };
        Err(PartialError::Incomplete {
            covered,
            total,
            missing,
        })
    }
}

/// A partial read as far as its verdict table: its manifest and failing steps, both files checked
/// against the SHA-256 the manifest records (the verdict table by a streaming hash), and the table's
/// reader, positioned before its first batch.
pub(crate) struct PartialHead {
    /// The directory, for messages.
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub steps: Vec<Vec<TraceSteps>>,
    reader: FileReader<BufReader<std::fs::File>>,
}

impl PartialHead {
    /// Reads the partial in `dir` but its verdict batches.
    ///
    /// # Errors
    ///
    /// A missing or unreadable file, a manifest of another format, a verdict table or steps file whose
    /// SHA-256 is not the one the manifest records, a table whose columns are not the manifest's
    /// checks, or a manifest whose files are out of order or do not match its steps.
    pub(crate) fn read(dir: &Path) -> Result<PartialHead, PartialError> {
        let fail = |message: String| read_error(dir, message);
        let text = std::fs::read(dir.join(MANIFEST_FILE))
            .map_err(|e| fail(format!("{MANIFEST_FILE}: {e}")))?;
        let manifest: Manifest =
            serde_json::from_slice(&text).map_err(|e| fail(format!("{MANIFEST_FILE}: {e}")))?;
        if manifest.format != FORMAT {
            return Err(fail(format!(
                "format {} (this tool reads {FORMAT}); write the partial again with this version of faultgate",
                manifest.format
            )));
        }
        let digests: Digests =
            serde_json::from_slice(&text).map_err(|e| fail(format!("{MANIFEST_FILE}: {e}")))?;
        let verdicts_path = dir.join(VERDICTS_FILE);
        let digest = crate::digest::sha256_file(&verdicts_path)
            .map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
        if digest != digests.verdicts_sha256 {
            return Err(fail(format!(
                "{VERDICTS_FILE} is not the file {MANIFEST_FILE} records (its SHA-256 differs): it was changed or damaged after it was written"
            )));
        }
        let file = std::fs::File::open(&verdicts_path)
            .map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
        let reader = FileReader::try_new(BufReader::new(file), None)
            .map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
        let steps =
            std::fs::read(dir.join(STEPS_FILE)).map_err(|e| fail(format!("{STEPS_FILE}: {e}")))?;
        if crate::digest::sha256_hex(&steps) != digests.steps_sha256 {
            return Err(fail(format!(
                "{STEPS_FILE} is not the file {MANIFEST_FILE} records (its SHA-256 differs): it was changed or damaged after it was written"
            )));
        }
        let steps: Vec<Vec<TraceSteps>> =
            serde_json::from_slice(&steps).map_err(|e| fail(format!("{STEPS_FILE}: {e}")))?;
        let head = PartialHead {
            dir: dir.to_path_buf(),
            manifest,
            steps,
            reader,
        };
        if head.reader.schema() != head.schema() {
            return Err(fail(format!(
                "{VERDICTS_FILE}: its columns are not those of the manifest's checks"
            )));
        }
        let files = &head.manifest.files;
        let listed_ok = head.steps.len() == files.len()
            && files.windows(2).all(|w| w[0].index < w[1].index)
            && files.iter().all(|f| f.index < head.manifest.inputs_total);
        if !listed_ok {
            return Err(fail(shape_message()));
        }
        Ok(head)
    }

    /// The schema of the verdict table.
    fn schema(&self) -> SchemaRef {
        self.manifest.verdict_schema()
    }

    /// Rows the manifest lists.
    fn listed_rows(&self) -> usize {
        self.manifest.listed_rows()
    }

    /// Reads the verdict batches, joined into batches of about [`JOINED_ROWS`] rows.
    ///
    /// # Errors
    ///
    /// A batch that cannot be decoded, or a table that does not hold the rows the manifest lists.
    pub(crate) fn into_partial(self) -> Result<Partial, PartialError> {
        let fail = |message: String| read_error(&self.dir, message);
        let listed = self.listed_rows();
        let mut joiner = Joiner::new(self.schema());
        for batch in self.reader {
            batch
                .and_then(|b| joiner.push(b))
                .map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
        }
        let batches = joiner
            .finish()
            .map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
        if batches.iter().map(VerdictBatch::len).sum::<usize>() != listed {
            return Err(fail(shape_message()));
        }
        Ok(Partial {
            manifest: self.manifest,
            batches,
            steps: self.steps,
        })
    }
}

/// A partial that cannot be read.
fn read_error(dir: &Path, message: String) -> PartialError {
    PartialError::Read {
        path: dir.to_path_buf(),
        message,
    }
}

/// Why a partial's table and manifest do not agree.
fn shape_message() -> String {
    format!("{VERDICTS_FILE} does not hold the rows {MANIFEST_FILE} lists")
}

/// The result of a merge: the merged partial, and the trace ids read by more than one shard.
#[derive(Debug)]
pub(crate) struct Merged {
    pub partial: Partial,
    /// Trace ids whose rows come from more than one shard, in first-row order.
    pub split_ids: Vec<String>,
}

/// Merges partials of one run (given with the directories they came from, for messages).
///
/// # Errors
///
/// No partial; partials of different commands or settings ([`PartialError::Differs`] names the first
/// setting that differs); one input file in two partials.
pub(crate) fn merge(parts: &[(PathBuf, Partial)]) -> Result<Merged, PartialError> {
    let manifests: Vec<(&Path, &Manifest)> = parts
        .iter()
        .map(|(path, part)| (path.as_path(), &part.manifest))
        .collect();
    let Plan {
        files,
        manifest: mut base,
    } = plan(&manifests)?;
    base.files = files
        .iter()
        .map(|&(p, f, _)| parts[p].1.manifest.files[f].clone())
        .collect();
    let (first_path, first) = &parts[0];
    let first_path = first_path.clone();
    let offsets: Vec<Vec<usize>> = parts
        .iter()
        .map(|(_, p)| batch_offsets(&p.batches))
        .collect();
    let mut joiner = Joiner::new(first.schema());
    let mut steps = Vec::with_capacity(files.len());
    // Files that follow each other in one partial are sliced as one run of rows.
    let mut run: Option<(usize, usize, usize)> = None;
    for file in &files {
        let (p, f, row) = *file;
        let rows = parts[p].1.manifest.files[f].rows;
        steps.push(parts[p].1.steps[f].clone());
        run = match run {
            Some((rp, start, len)) if rp == p && start + len == row => {
                Some((rp, start, len + rows))
            }
            other => {
                if let Some((rp, start, len)) = other {
                    for slice in slice_rows(&parts[rp].1.batches, &offsets[rp], start, len) {
                        joiner
                            .push(slice)
                            .map_err(|e| merge_error(&parts[rp].0, &e))?;
                    }
                }
                Some((p, row, rows))
            }
        };
    }
    if let Some((rp, start, len)) = run {
        for slice in slice_rows(&parts[rp].1.batches, &offsets[rp], start, len) {
            joiner
                .push(slice)
                .map_err(|e| merge_error(&parts[rp].0, &e))?;
        }
    }
    let manifest = base;
    let batches = joiner.finish().map_err(|e| merge_error(&first_path, &e))?;
    let mut partial = Partial {
        manifest,
        batches,
        steps,
    };
    partial.bound_steps();
    let split_ids = split_trace_ids(&partial);
    Ok(Merged { partial, split_ids })
}

/// How partials merge: their files in input order, and the merged manifest.
struct Plan {
    /// Each file as (its partial, its place in the partial's manifest, its first row in the partial's
    /// table), in input order: a few counters per file.
    files: Vec<(usize, usize, usize)>,
    /// The first partial's manifest with the judge's usage summed, without files: the merge lists
    /// them in the order of [`Plan::files`].
    manifest: Manifest,
}

/// Checks that partials (given with the directories they came from) belong to one run and puts their
/// files in input order.
///
/// # Errors
///
/// No partial; partials of different commands or settings; one input file in two partials.
fn plan(parts: &[(&Path, &Manifest)]) -> Result<Plan, PartialError> {
    let Some(&(first_path, first)) = parts.first() else {
        return Err(PartialError::Empty);
    };
    for &(path, manifest) in &parts[1..] {
        if let Some((setting, a, b)) = first_difference(first, manifest) {
            return Err(PartialError::Differs {
                setting,
                first: a,
                second: b,
                first_path: first_path.to_path_buf(),
                second_path: path.to_path_buf(),
            });
        }
    }
    let mut files: Vec<(usize, usize, usize)> = Vec::new();
    let mut usage: Option<Usage> = None;
    let mut named_ids = false;
    for (p, (_, manifest)) in parts.iter().enumerate() {
        named_ids |= manifest.named_ids;
        if let Some(u) = manifest.judge_usage {
            let total = usage.get_or_insert_with(Usage::default);
            total.prompt_tokens += u.prompt_tokens;
            total.completion_tokens += u.completion_tokens;
        }
        let mut row = 0;
        for (f, file) in manifest.files.iter().enumerate() {
            files.push((p, f, row));
            row += file.rows;
        }
    }
    let entry = |&(p, f, _): &(usize, usize, usize)| &parts[p].1.files[f];
    files.sort_by_key(|file| entry(file).index);
    for pair in files.windows(2) {
        if entry(&pair[0]).index == entry(&pair[1]).index {
            return Err(PartialError::SameFile {
                file: entry(&pair[0]).path.to_string(),
                first: parts[pair[0].0].0.to_path_buf(),
                second: parts[pair[1].0].0.to_path_buf(),
            });
        }
    }
    let mut manifest = Manifest {
        files: Vec::new(),
        ..first.clone()
    };
    manifest.judge_usage = usage;
    manifest.named_ids = named_ids;
    Ok(Plan { files, manifest })
}

/// A merge of `check` partials whose verdicts went to a spill rather than into memory.
#[derive(Debug)]
pub(crate) struct SpilledMerge {
    /// The merged manifest: every partial's files, in input order.
    pub manifest: Manifest,
    /// Each file's failing traces' steps, cut to the run's bound.
    pub steps: Vec<Vec<TraceSteps>>,
    /// The verdicts, in input order.
    pub spilled: SpilledRun,
    /// Trace ids whose rows come from more than one shard, in first-row order.
    pub split_ids: Vec<String>,
    /// Partials of `check --unit session`: the ids of the conversations checked as units.
    pub sessions: Option<crate::sessions::SessionIds>,
}

/// Merges partials of one run as [`merge`] does, appending their verdict batches to a spill in
/// `spill_dir` (`TMPDIR` when `None`) a batch at a time instead of holding them: each partial's table
/// is read once, front to back, and the spill gives the rows back in input order.
///
/// # Errors
///
/// As [`merge`]; a batch that cannot be decoded or a table that does not hold the rows its manifest
/// lists; the spill cannot be written.
pub(crate) fn merge_spilled(
    parts: Vec<PartialHead>,
    spill_dir: Option<&Path>,
) -> Result<SpilledMerge, PartialError> {
    let manifests: Vec<(&Path, &Manifest)> = parts
        .iter()
        .map(|part| (part.dir.as_path(), &part.manifest))
        .collect();
    let Plan {
        files,
        mut manifest,
    } = plan(&manifests)?;
    // Runs of rows that follow each other in one partial, in input order: (partial, first row, rows).
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for &(p, f, row) in &files {
        let rows = parts[p].manifest.files[f].rows;
        match runs.last_mut() {
            Some((rp, start, len)) if *rp == p && *start + *len == row => *len += rows,
            _ => runs.push((p, row, rows)),
        }
    }
    let schema = manifest.verdict_schema();
    let spill = VerdictSpill::new(&schema, spill_dir)?;
    let mut run_batches: Vec<Vec<usize>> = vec![Vec::new(); runs.len()];
    // Session partials' units: each partial's places and the batches of its rows in `unit_spill`.
    let unit_spill = VerdictSpill::new(&schema, spill_dir)?;
    let mut unit_parts: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
    // Each id's 64-bit hash with the shard of its row, sorted on disk a run at a time: an id seen
    // from two shards is a suspect, confirmed by its text once the spill is read back (hashes can
    // meet).
    let hasher = foldhash::fast::FixedState::with_seed(0x5eed);
    let mut id_hashes = IdHashes::new(spill_dir);
    // Each partial's manifest and steps stay until the merged ones take its entries (moved, not
    // copied: a partial may list a million files).
    let mut listed: Vec<(Manifest, Vec<Vec<TraceSteps>>)> = Vec::with_capacity(parts.len());
    for (p, part) in parts.into_iter().enumerate() {
        let PartialHead {
            dir,
            manifest: part_manifest,
            steps: part_steps,
            reader,
        } = part;
        let fail = |message: String| read_error(&dir, message);
        let listed_rows = part_manifest.listed_rows();
        // The rows past the files' are the partial's session units, set apart to be put in order.
        let file_rows: usize = part_manifest.files.iter().map(|f| f.rows).sum();
        let mut unit_batches = Vec::new();
        // This partial's runs, in row order (its files keep their order in the merged list).
        let mine: Vec<usize> = (0..runs.len()).filter(|&r| runs[r].0 == p).collect();
        let mut shards = part_manifest
            .files
            .iter()
            .flat_map(|f| std::iter::repeat_n(f.shard, f.rows));
        let mut pending = Pending::new(schema.clone());
        let mut at = 0;
        let mut next = 0;
        for batch in reader {
            let batch = batch.map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
            let rows = batch.num_rows();
            if at + rows > listed_rows {
                return Err(fail(shape_message()));
            }
            let checked =
                VerdictBatch::try_new(batch).map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
            let in_files = rows.min(file_rows.saturating_sub(at));
            for row in checked.rows().take(in_files) {
                let shard = shards.next().unwrap_or_default();
                id_hashes.push(
                    hasher.hash_one(row.trace_id()),
                    u32::try_from(shard).unwrap_or(u32::MAX),
                );
            }
            let batch = checked.record_batch();
            if in_files < rows {
                let units = VerdictBatch::try_new(batch.slice(in_files, rows - in_files))
                    .map_err(SpillError::from)?;
                unit_batches.extend(unit_spill.append(&units));
            }
            let mut from = 0;
            while from < in_files {
                let r = mine[next];
                let (_, start, len) = runs[r];
                let end = (start + len).min(at + rows);
                let take = end - (at + from);
                pending.push(r, batch.slice(from, take), &spill, &mut run_batches)?;
                from += take;
                if at + from == start + len {
                    pending.flush(&spill, &mut run_batches)?;
                    next += 1;
                }
            }
            at += rows;
        }
        pending.flush(&spill, &mut run_batches)?;
        if at != listed_rows {
            return Err(fail(shape_message()));
        }
        drop(shards);
        if let Some(units) = &part_manifest.sessions {
            unit_parts.push((units.places.clone(), unit_batches));
        }
        listed.push((part_manifest, part_steps));
    }
    // The session units after every file's rows, in the order of their places.
    let sessions = match &manifest.sessions {
        None => None,
        Some(first) => {
            let units = unit_spill.finish()?;
            let (merged, ids) = merge_units(first.alone, &unit_parts, &units, &spill, &schema)?;
            let places = merged.places.clone();
            let unread = listed
                .iter()
                .filter_map(|(m, _)| m.sessions.as_ref()?.unread_tools.clone())
                .reduce(|a, b| UnreadUnits {
                    count: a.count + b.count,
                    ..if b.place < a.place { b } else { a }
                });
            manifest.sessions = Some(SessionUnits {
                alone: first.alone,
                places,
                unread_tools: unread,
            });
            run_batches.push(merged.batches);
            Some(ids)
        }
    };
    let mut steps: Vec<Vec<TraceSteps>> = Vec::with_capacity(files.len());
    manifest.files.reserve_exact(files.len());
    let mut kept = 0;
    for &(p, f, _) in &files {
        let (part_manifest, part_steps) = &mut listed[p];
        manifest
            .files
            .push(std::mem::take(&mut part_manifest.files[f]));
        let mut file_steps = std::mem::take(&mut part_steps[f]);
        file_steps.truncate(MAX_TRACES.saturating_sub(kept));
        kept += file_steps.len();
        steps.push(file_steps);
    }
    drop(listed);
    drop(files);
    let mut suspects: HashSet<u64> = HashSet::new();
    id_hashes
        .repeated(|hash, shards| {
            if shards.first() != shards.last() {
                suspects.insert(hash);
            }
            true
        })
        .map_err(SpillError::from)?;
    let spilled = SpilledRun {
        verdicts: spill.finish()?,
        files: run_batches
            .into_iter()
            .map(|batches| SpilledFile {
                batches,
                dropped: None,
            })
            .collect(),
    };
    let split_ids = if suspects.is_empty() {
        Vec::new()
    } else {
        let mut shards = manifest
            .files
            .iter()
            .flat_map(|f| std::iter::repeat_n(f.shard, f.rows));
        let mut first_shard: HashMap<String, usize> = HashMap::new();
        let mut split: Vec<String> = Vec::new();
        let mut seen_split: HashSet<String> = HashSet::new();
        spilled.for_each_batch(|batch| {
            for row in batch.rows() {
                let shard = shards.next().unwrap_or_default();
                let id = row.trace_id();
                if !suspects.contains(&hasher.hash_one(id)) {
                    continue;
                }
                match first_shard.get(id) {
                    None => {
                        first_shard.insert(id.to_string(), shard);
                    }
                    Some(&s) if s != shard && seen_split.insert(id.to_string()) => {
                        split.push(id.to_string());
                    }
                    Some(_) => {}
                }
            }
            Ok::<(), SpillError>(())
        })?;
        split
    };
    Ok(SpilledMerge {
        manifest,
        steps,
        spilled,
        split_ids,
        sessions,
    })
}

/// Session units merged: their places, rising, and their batches in the merged spill.
struct MergedUnits {
    places: Vec<u64>,
    batches: Vec<usize>,
}

/// Puts the session units of every partial (`parts`: each one's places, rising, and its rows'
/// batches in `units`) in the order of their places, appending them to `spill`; returns them with
/// the ids of those that are conversations (places from `alone` on). Holds one batch per partial.
fn merge_units(
    alone: u64,
    parts: &[(Vec<u64>, Vec<usize>)],
    units: &crate::report::spill::SpilledVerdicts,
    spill: &VerdictSpill,
    schema: &SchemaRef,
) -> Result<(MergedUnits, crate::sessions::SessionIds), PartialError> {
    let mut reader = units.reader()?;
    // Each partial's cursor: its next row, the batch of it (its index among the partial's), and
    // where in that batch it is.
    struct Cursor {
        row: usize,
        batch: usize,
        at: usize,
        current: Option<VerdictBatch>,
    }
    let mut cursors: Vec<Cursor> = parts
        .iter()
        .map(|_| Cursor {
            row: 0,
            batch: 0,
            at: 0,
            current: None,
        })
        .collect();
    let mut merged = MergedUnits {
        places: Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum()),
        batches: Vec::new(),
    };
    let mut ids = crate::sessions::SessionIds::default();
    let mut joiner = Joiner::new(schema.clone());
    let flush = |joiner: &mut Joiner, merged: &mut MergedUnits, all: bool| {
        if all {
            joiner.flush().map_err(SpillError::from)?;
        }
        for batch in joiner.out.drain(..) {
            merged.batches.extend(spill.append(&batch));
        }
        Ok::<(), PartialError>(())
    };
    loop {
        let next = (0..parts.len())
            .filter_map(|p| parts[p].0.get(cursors[p].row).map(|&place| (place, p)))
            .min();
        let Some((place, p)) = next else {
            break;
        };
        let cursor = &mut cursors[p];
        while cursor.current.as_ref().is_none_or(|b| cursor.at >= b.len()) {
            let index = *parts[p].1.get(cursor.batch).ok_or_else(|| {
                PartialError::Spill(SpillError::from(ArrowError::IpcError(
                    "a session partial holds fewer rows than its places".into(),
                )))
            })?;
            cursor.current = Some(reader.batch(index)?);
            cursor.batch += 1;
            cursor.at = 0;
        }
        let batch = cursor.current.as_ref().expect("a batch read");
        let row = batch.record_batch().slice(cursor.at, 1);
        if place >= alone
            && let Some(unit) = VerdictBatch::try_new(row.clone())
                .map_err(SpillError::from)?
                .rows()
                .next()
        {
            ids.insert(unit.trace_id());
        }
        joiner.push(row).map_err(SpillError::from)?;
        flush(&mut joiner, &mut merged, false)?;
        merged.places.push(place);
        cursor.at += 1;
        cursor.row += 1;
    }
    flush(&mut joiner, &mut merged, true)?;
    Ok((merged, ids))
}

impl SpilledMerge {
    /// The failing traces' steps a run over all the files keeps.
    pub(crate) fn failing_steps(&self) -> Vec<TraceSteps> {
        self.steps.iter().flatten().cloned().collect()
    }

    /// Writes the merged partial into `dir`, its verdict table streamed from the spill; returns its
    /// rows.
    ///
    /// # Errors
    ///
    /// The spill cannot be read back, or a file cannot be written.
    pub(crate) fn write(&self, dir: &Path) -> Result<usize, PartialError> {
        let schema = self.manifest.verdict_schema();
        let mut writer = PartialWriter::new(dir, schema)?;
        let rows = writer.verdicts(|sink| self.spilled.for_each_batch(|batch| sink.push(batch)))?;
        writer.finish(&self.manifest, &self.steps)?;
        Ok(rows)
    }
}

/// Consecutive slices of one run of rows, appended to the spill as one batch of about
/// [`JOINED_ROWS`] rows.
struct Pending {
    joiner: Joiner,
    run: Option<usize>,
}

impl Pending {
    fn new(schema: SchemaRef) -> Pending {
        Pending {
            joiner: Joiner::new(schema),
            run: None,
        }
    }

    fn push(
        &mut self,
        run: usize,
        slice: RecordBatch,
        spill: &VerdictSpill,
        run_batches: &mut [Vec<usize>],
    ) -> Result<(), PartialError> {
        if self.run != Some(run) {
            self.flush(spill, run_batches)?;
            self.run = Some(run);
        }
        self.joiner.push(slice).map_err(SpillError::from)?;
        self.drain(spill, run_batches);
        Ok(())
    }

    fn flush(
        &mut self,
        spill: &VerdictSpill,
        run_batches: &mut [Vec<usize>],
    ) -> Result<(), PartialError> {
        self.joiner.flush().map_err(SpillError::from)?;
        self.drain(spill, run_batches);
        Ok(())
    }

    /// Appends the joined batches to the spill, under the current run.
    fn drain(&mut self, spill: &VerdictSpill, run_batches: &mut [Vec<usize>]) {
        let Some(run) = self.run else {
            return;
        };
        for batch in self.joiner.out.drain(..) {
            // A failed append is reported by `VerdictSpill::finish`.
            if let Some(index) = spill.append(&batch) {
                run_batches[run].push(index);
            }
        }
    }
}

/// A verdict table that could not be joined: a bug, since every partial's schema was checked.
fn merge_error(path: &Path, e: &ArrowError) -> PartialError {
    PartialError::Read {
        path: path.to_path_buf(),
        message: format!("{VERDICTS_FILE}: {e}"),
    }
}

/// The first field in which two manifests of one run could differ, with both values.
fn first_difference(a: &Manifest, b: &Manifest) -> Option<(String, String, String)> {
    let pair = |name: &str, x: &str, y: &str| {
        (x != y).then(|| (name.to_string(), x.to_string(), y.to_string()))
    };
    if let Some(d) = pair("command", &a.command, &b.command) {
        return Some(d);
    }
    let unit = |m: &Manifest| {
        if m.sessions.is_some() {
            "session"
        } else {
            "trace"
        }
    };
    if let Some((setting, x, y)) = pair("unit", unit(a), unit(b)) {
        return Some((
            format!("{setting} (--unit session partials merge only with each other)"),
            x,
            y,
        ));
    }
    let value_of = |m: &Manifest, name: &str| {
        m.settings
            .iter()
            .find(|s| s.name == name)
            .map_or_else(|| "nothing".to_string(), |s| s.value.clone())
    };
    let mut names: Vec<&str> = a.settings.iter().map(|s| s.name.as_str()).collect();
    for s in &b.settings {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    for name in names {
        if let Some(d) = pair(name, &value_of(a, name), &value_of(b, name)) {
            return Some(d);
        }
    }
    let runs = |m: &Manifest| {
        m.runs
            .iter()
            .map(|r| r.shown.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    pair("runs", &runs(a), &runs(b))
        .or_else(|| pair("reproduce command", &a.repro, &b.repro))
        .or_else(|| {
            let others = |m: &Manifest| serde_json::to_string(&m.other_inputs).unwrap_or_default();
            pair("inputs besides the traces", &others(a), &others(b))
        })
}

/// Trace ids whose rows come from more than one shard: their spans were split across shards, and a
/// single run would have read them as one trace.
pub(crate) fn split_trace_ids(partial: &Partial) -> Vec<String> {
    let mut shard_of: HashMap<&str, usize> = HashMap::new();
    let mut split: Vec<&str> = Vec::new();
    let mut seen_split: HashSet<&str> = HashSet::new();
    // Each file's rows are the next `rows` of the table.
    let mut shards = partial
        .manifest
        .files
        .iter()
        .flat_map(|f| std::iter::repeat_n(f.shard, f.rows));
    for row in partial.batches.iter().flat_map(VerdictBatch::rows) {
        let shard = shards.next().unwrap_or_default();
        let id = row.trace_id();
        match shard_of.get(id) {
            None => {
                shard_of.insert(id, shard);
            }
            Some(&s) if s != shard && seen_split.insert(id) => split.push(id),
            Some(_) => {}
        }
    }
    split.into_iter().map(String::from).collect()
}

/// The one-line warning about trace ids read by more than one shard.
pub(crate) fn split_ids_warning(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    let more = if ids.len() > shown.len() {
        format!(", and {} more", ids.len() - shown.len())
    } else {
        String::new()
    };
    format!(
        "warning: {} trace id(s) found in more than one partial ({}{more}); each partial's spans were checked as a separate trace and each counts once per partial",
        ids.len(),
        shown.join(", ")
    )
}

/// The shard `k` (1-based) of `n` of the input files, balanced by bytes: files are dealt largest first
/// to the shard with the fewest bytes so far (ties to the lower shard, equal sizes in input order), so
/// every shard computes the same plan from the same list without a coordinator. Returns the input
/// indices of shard `k`, in input order.
pub(crate) fn shard_plan(sizes: &[u64], n: usize) -> Vec<Vec<usize>> {
    let n = n.max(1);
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let mut loads = vec![0u64; n];
    let mut shards = vec![Vec::new(); n];
    for i in order {
        let (k, _) = loads
            .iter()
            .enumerate()
            .min_by(|(i, a), (j, b)| a.cmp(b).then(i.cmp(j)))
            .expect("at least one shard");
        loads[k] += sizes[i];
        shards[k].push(i);
    }
    for shard in &mut shards {
        shard.sort_unstable();
    }
    shards
}

/// Reads `K/N` (1 <= K <= N).
///
/// # Errors
///
/// Anything else, as a one-line message.
pub(crate) fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text.split_once('/').and_then(|(k, n)| {
        Some((
            k.trim().parse::<usize>().ok()?,
            n.trim().parse::<usize>().ok()?,
        ))
    });
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!("expected K/N with 1 <= K <= N, got '{text}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Reasons, VerdictColumn};
    use crate::redact::Redaction;
    use crate::report::steps::StepView;
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder};

    /// A one-check batch of the given trace ids; every other one fails.
    fn batch(ids: &[&str]) -> VerdictBatch {
        let mut builder = VerdictBatchBuilder::new(verdicts::schema(&["policy"]), ids.len());
        let mut column = VerdictColumn::new(ids.len(), Reasons::All, Redaction::Off);
        for (i, id) in ids.iter().enumerate() {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: id,
                ..TraceFields::default()
            });
            column.sure(i % 2 == 0, "denied");
        }
        builder.finish(vec![column]).expect("verdict batch")
    }

    fn steps(id: &str, n: usize) -> Vec<TraceSteps> {
        let view = StepView {
            tool: "t".into(),
            arguments: String::new(),
            result: String::new(),
            error: false,
            actor: None,
        };
        (0..n)
            .map(|i| TraceSteps {
                trace_id: format!("{id}{i}"),
                steps: vec![view.clone()],
                more: 0,
            })
            .collect()
    }

    /// A partial of shard `shard` holding the files `(index, ids, failing steps)` of a 4-file run.
    fn partial(shard: usize, files: &[(usize, &[&str], usize)]) -> (PathBuf, Partial) {
        let manifest = Manifest {
            format: FORMAT.into(),
            command: "check".into(),
            settings: vec![Setting {
                name: "policy".into(),
                value: "none".into(),
            }],
            checks: vec!["policy".into()],
            judge: "none".into(),
            redaction: "off".into(),
            inputs_total: 4,
            runs: Vec::new(),
            files: files
                .iter()
                .map(|(index, ids, _)| FileEntry {
                    index: *index,
                    run: 0,
                    shard,
                    path: format!("f{index}.json").into(),
                    bytes: 1,
                    sha256: None,
                    rows: ids.len(),
                    notes: None,
                })
                .collect(),
            other_inputs: Vec::new(),
            repro: "faultgate check in".into(),
            judge_usage: Some(Usage {
                prompt_tokens: 1,
                completion_tokens: 2,
            }),
            named_ids: false,
            sessions: None,
        };
        let part = Partial {
            manifest,
            batches: files.iter().map(|(_, ids, _)| batch(ids)).collect(),
            steps: files
                .iter()
                .map(|(index, _, n)| steps(&format!("f{index}-"), *n))
                .collect(),
        };
        (PathBuf::from(format!("p{shard}")), part)
    }

    fn ids(p: &Partial) -> Vec<String> {
        p.batches
            .iter()
            .flat_map(|b| {
                b.rows()
                    .map(|r| r.trace_id().to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn merging_puts_files_in_input_order_whatever_the_grouping() {
        let a = || partial(1, &[(0, &["a", "b"], 150), (3, &["g"], 150)]);
        let b = || partial(2, &[(1, &["c", "d"], 30), (2, &["e", "f"], 10)]);
        let flat = merge(&[b(), a()]).unwrap();
        assert_eq!(ids(&flat.partial), ["a", "b", "c", "d", "e", "f", "g"]);
        assert!(flat.split_ids.is_empty());
        flat.partial.require_complete().unwrap();
        assert_eq!(
            flat.partial.manifest.judge_usage,
            Some(Usage {
                prompt_tokens: 2,
                completion_tokens: 4
            })
        );
        // The run keeps the first MAX_TRACES failing traces' steps, in input order.
        let kept: Vec<usize> = flat.partial.steps.iter().map(Vec::len).collect();
        assert_eq!(kept, [150, 30, 10, 10]);
        assert_eq!(flat.partial.failing_steps().len(), MAX_TRACES);
        // One partial alone is merged too, and a merge of it with the other gives the same partial.
        let once = merge(&[a()]).unwrap().partial;
        let twice = merge(&[(PathBuf::from("m"), once), b()]).unwrap().partial;
        assert_eq!(twice.manifest, flat.partial.manifest);
        assert_eq!(twice.steps, flat.partial.steps);
        assert_eq!(ids(&twice), ids(&flat.partial));
    }

    /// Trace ids of a spilled merge, in the order its spill gives them back.
    fn spilled_ids(merged: &SpilledMerge) -> Vec<String> {
        let mut out = Vec::new();
        merged
            .spilled
            .for_each_batch(|b| {
                out.extend(b.rows().map(|r| r.trace_id().to_string()));
                Ok::<(), SpillError>(())
            })
            .unwrap();
        out
    }

    #[test]
    fn a_spilled_merge_streams_the_rows_of_the_merge_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        // Files dealt across shards, one of them empty, one trace id read by both shards.
        let a = partial(
            1,
            &[
                (0, &["a", "b"], 150),
                (2, &[], 0),
                (3, &["split", "g"], 150),
            ],
        );
        let b = partial(2, &[(1, &["c", "split"], 30)]);
        let mut heads = Vec::new();
        for (path, part) in [&b, &a] {
            let at = dir.path().join(path);
            part.write(&at).unwrap();
            heads.push(PartialHead::read(&at).unwrap());
        }
        let spilled = merge_spilled(heads, Some(dir.path())).unwrap();
        let whole = merge(&[b.clone(), a.clone()]).unwrap();
        assert_eq!(spilled_ids(&spilled), ids(&whole.partial));
        assert_eq!(
            spilled_ids(&spilled),
            ["a", "b", "c", "split", "split", "g"]
        );
        assert_eq!(spilled.split_ids, whole.split_ids);
        assert_eq!(spilled.split_ids, ["split"]);
        assert_eq!(spilled.manifest, whole.partial.manifest);
        assert_eq!(spilled.failing_steps(), whole.partial.failing_steps());
        // Each run of files from one partial is one batch of the spill: a, c, g's file.
        assert_eq!(spilled.spilled.verdicts.batches(), 3);

        // A table that does not hold the rows its manifest lists is refused as before.
        let at = dir.path().join("short");
        a.1.write(&at).unwrap();
        let manifest = std::fs::read_to_string(at.join(MANIFEST_FILE)).unwrap();
        let edited = manifest.replacen("\"rows\": 2", "\"rows\": 3", 1);
        assert_ne!(edited, manifest);
        std::fs::write(at.join(MANIFEST_FILE), edited).unwrap();
        let heads = vec![
            PartialHead::read(&at).unwrap(),
            PartialHead::read(&dir.path().join(&b.0)).unwrap(),
        ];
        let err = merge_spilled(heads, None).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "cannot read partial {}: verdicts.arrow does not hold the rows manifest.json lists",
                crate::error::display_path(&at)
            )
        );
    }

    #[test]
    fn a_partial_of_many_small_files_holds_a_few_batches_not_one_per_file() {
        // Two shards of a 2,000-file run, one trace per file, dealt alternately.
        let all: Vec<String> = (0..2000).map(|i| format!("t{i}")).collect();
        let shard = |k: usize| {
            let files: Vec<(usize, &[&str], usize)> = Vec::new();
            let (path, mut part) = partial(k, &files);
            part.manifest.inputs_total = all.len();
            for i in (k - 1..all.len()).step_by(2) {
                part.manifest.files.push(FileEntry {
                    index: i,
                    run: i / 1000,
                    shard: k,
                    path: format!("f{i}.json").into(),
                    bytes: 1,
                    sha256: None,
                    rows: 1,
                    notes: None,
                });
                part.batches.push(batch(&[all[i].as_str()]));
                part.steps.push(Vec::new());
            }
            (path, part)
        };
        let dir = tempfile::tempdir().unwrap();
        let mut read = Vec::new();
        for k in [1, 2] {
            let (path, part) = shard(k);
            assert_eq!(part.batches.len(), 1000);
            let at = dir.path().join(&path);
            part.write(&at).unwrap();
            let back = PartialHead::read(&at)
                .and_then(PartialHead::into_partial)
                .unwrap();
            assert_eq!(back.batches.len(), 1, "one joined batch, not one per file");
            assert_eq!(ids(&back), ids(&part));
            read.push((path, back));
        }
        let merged = merge(&read).unwrap().partial;
        assert_eq!(ids(&merged), all);
        assert_eq!(merged.batches.len(), 1);
        assert!(
            merged
                .manifest
                .files
                .windows(2)
                .all(|w| w[0].index + 1 == w[1].index)
        );
        // A run's rows are the rows of its files.
        let run_ids = |run: usize| -> Vec<String> {
            merged
                .rows_of(|f| f.run == run)
                .iter()
                .flat_map(|b| {
                    b.rows()
                        .map(|r| r.trace_id().to_string())
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        assert_eq!(run_ids(1), all[1000..]);
        assert_eq!(run_ids(0).len(), 1000);
        // Merging in levels gives the same partial.
        let again = merge(&[(PathBuf::from("m"), merged.clone())])
            .unwrap()
            .partial;
        assert_eq!(again.manifest, merged.manifest);
        assert_eq!(ids(&again), all);
    }

    /// A batch of the traces `t{from}..t{to}`; every third one fails, whatever the batch.
    fn numbered(from: usize, to: usize) -> VerdictBatch {
        let ids: Vec<String> = (from..to).map(|i| format!("t{i}")).collect();
        let mut builder = VerdictBatchBuilder::new(verdicts::schema(&["policy"]), ids.len());
        let mut column = VerdictColumn::new(ids.len(), Reasons::All, Redaction::Off);
        for (i, id) in (from..to).zip(&ids) {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: id,
                ..TraceFields::default()
            });
            column.sure(i % 3 == 0, "denied");
        }
        builder.finish(vec![column]).expect("verdict batch")
    }

    #[test]
    fn a_written_table_is_the_same_bytes_however_its_rows_were_batched() {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<String> = (0..3000).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let written = |name: &str, sizes: &[usize]| {
            let (_, mut part) = partial(1, &[(0, &refs, 0)]);
            let mut at = 0;
            part.batches = sizes
                .iter()
                .map(|&n| {
                    at += n;
                    numbered(at - n, at)
                })
                .collect();
            assert_eq!(at, 3000);
            let to = dir.path().join(name);
            part.write(&to).unwrap();
            let back = PartialHead::read(&to)
                .and_then(PartialHead::into_partial)
                .unwrap();
            assert_eq!(ids(&back), all);
            std::fs::read(to.join(VERDICTS_FILE)).unwrap()
        };
        let whole = written("whole", &[3000]);
        // Pieces that cut the table's batches at offsets that are not a multiple of 8, and a
        // hundred one-row batches (joined as they wait).
        let mut sizes = vec![1, 700, 1023, 1, 3, 172];
        sizes.extend([1; 100]);
        sizes.push(1000);
        assert_eq!(written("pieces", &sizes), whole);
        let reader = FileReader::try_new(std::io::Cursor::new(whole), None).unwrap();
        let rows: Vec<usize> = reader.map(|b| b.unwrap().num_rows()).collect();
        assert_eq!(rows, [WRITTEN_ROWS, WRITTEN_ROWS, 3000 - 2 * WRITTEN_ROWS]);
    }

    #[test]
    fn partials_that_do_not_belong_together_are_refused() {
        let (path, mut other) = partial(2, &[(1, &["c"], 0)]);
        other.manifest.settings[0].value = "abc".into();
        let err = merge(&[partial(1, &[(0, &["a"], 0)]), (path, other)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "partials differ in policy: p1 has none, p2 has abc"
        );
        let err =
            merge(&[partial(1, &[(0, &["a"], 0)]), partial(2, &[(0, &["a"], 0)])]).unwrap_err();
        assert!(matches!(err, PartialError::SameFile { .. }), "{err}");
        let part = merge(&[partial(1, &[(0, &["a"], 0), (2, &["b"], 0)])])
            .unwrap()
            .partial;
        assert_eq!(
            part.require_complete().unwrap_err().to_string(),
            "the partials cover 2 of the run's 4 input files; missing: input files #2, #4"
        );
        assert!(matches!(merge(&[]), Err(PartialError::Empty)));
    }

    #[test]
    fn trace_ids_read_by_two_shards_are_counted_once_each() {
        let merged = merge(&[
            partial(1, &[(0, &["a", "b", "a"], 0)]),
            partial(2, &[(1, &["b", "c"], 0), (2, &["a"], 0)]),
            partial(3, &[(3, &["c", "d"], 0)]),
        ])
        .unwrap();
        assert_eq!(merged.split_ids, ["b", "a", "c"], "in first-split order");
    }

    #[test]
    fn shards_cover_every_file_once_balanced_by_bytes() {
        let sizes = [100, 1, 1, 50, 50, 3, 97, 2];
        let plan = shard_plan(&sizes, 3);
        let mut all: Vec<usize> = plan.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..sizes.len()).collect::<Vec<_>>());
        let loads: Vec<u64> = plan
            .iter()
            .map(|s| s.iter().map(|&i| sizes[i]).sum())
            .collect();
        assert_eq!(loads, [102, 101, 101]);
        assert_eq!(
            plan,
            shard_plan(&sizes, 3),
            "the same list gives the same plan"
        );
        assert!(plan.iter().all(|s| s.windows(2).all(|w| w[0] < w[1])));
        let many = shard_plan(&[5, 5], 4);
        assert_eq!(many, [vec![0], vec![1], vec![], vec![]]);
    }

    #[test]
    fn shard_flags_are_checked() {
        assert_eq!(parse_shard("3/8"), Ok((3, 8)));
        assert_eq!(parse_shard("1/1"), Ok((1, 1)));
        for bad in ["0/8", "9/8", "3", "a/b", "3/0", ""] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_ids_warning_counts_and_names_a_few() {
        let ids: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
        let line = split_ids_warning(&ids);
        assert!(line.starts_with("warning: 5 trace id(s)"), "{line}");
        assert!(line.contains("t0, t1, t2, and 2 more"), "{line}");
    }
}
