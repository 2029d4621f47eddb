//! Writing a partial directory: its verdict table streamed batch by batch and hashed on its way,
//! then its steps and manifest, the whole staged so that a partial is written whole or not at all.

use std::path::{Path, PathBuf};

use arrow_schema::{ArrowError, SchemaRef};

use super::batches::Waiting;
use super::manifest::{Digests, Manifest, StoredManifest};
use super::{MANIFEST_FILE, PartialError, STEPS_FILE, VERDICTS_FILE};
use crate::report::steps::TraceSteps;
use crate::report::verdicts::VerdictBatch;

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
pub(super) const WRITTEN_ROWS: usize = 1024;

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
