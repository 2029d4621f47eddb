//! Reading a partial directory: its manifest and steps checked against the digests the manifest
//! records, then its verdict table, whole ([`PartialHead::into_partial`]) or batch by batch (the
//! spilled merge).

use std::io::BufReader;
use std::path::{Path, PathBuf};

use arrow_ipc::reader::FileReader;
use arrow_schema::SchemaRef;

use super::batches::Joiner;
use super::manifest::{Digests, FORMAT, Manifest};
use super::{MANIFEST_FILE, Partial, PartialError, STEPS_FILE, VERDICTS_FILE};
use crate::report::steps::TraceSteps;
use crate::report::verdicts::VerdictBatch;

/// A partial read as far as its verdict table: its manifest and failing steps, both files checked
/// against the SHA-256 the manifest records (the verdict table by a streaming hash), and the table's
/// reader, positioned before its first batch.
pub(crate) struct PartialHead {
    /// The directory, for messages.
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub steps: Vec<Vec<TraceSteps>>,
    pub(super) reader: FileReader<BufReader<std::fs::File>>,
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

    /// Reads the verdict batches, joined into batches of about
    /// [`JOINED_ROWS`](super::batches::JOINED_ROWS) rows.
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
pub(super) fn read_error(dir: &Path, message: String) -> PartialError {
    PartialError::Read {
        path: dir.to_path_buf(),
        message,
    }
}

/// Why a partial's table and manifest do not agree.
pub(super) fn shape_message() -> String {
    format!("{VERDICTS_FILE} does not hold the rows {MANIFEST_FILE} lists")
}
