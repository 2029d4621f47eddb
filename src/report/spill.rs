//! The verdict spill: a run's finished verdict batches leave memory for a temporary Arrow IPC file,
//! and the outputs read them back from it, a batch at a time, in input order.
//!
//! The file is created in the temporary directory (`TMPDIR`, or the directory `--spill-dir` names)
//! and unlinked at once ([`tempfile::tempfile`]), so it has no name: it is read back through its own
//! handle, and the system frees it when the process ends, however it ends (success, exit 1 or 2, a failed write,
//! SIGINT, SIGTERM, even SIGKILL). Nothing is left to clean up and nothing in the directory can be
//! opened by another process.
//!
//! Files are read in parallel, so batches reach the spill in the order they finish, not in input
//! order; each file remembers the indices of its batches, and [`SpilledRun`] reads them back by index
//! in input order (the IPC file format's footer gives random access). The traces a file turns out to
//! share with another file are dropped as its batches are read back (the trace-identity rule finds
//! them only once every file is read), and their merged verdicts are spilled after every file.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{ArrowError, SchemaRef};

use super::counts::Counting;
use super::verdicts::VerdictBatch;

/// Why the spill could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum SpillError {
    /// The temporary file could not be created, written or read (a full disk, most often).
    #[error("verdict spill in the temporary directory (TMPDIR, or --spill-dir): {0}")]
    Io(#[from] std::io::Error),
    /// Arrow could not encode or decode a batch (a write error, most often, reported by Arrow).
    #[error("verdict spill in the temporary directory (TMPDIR, or --spill-dir): {0}")]
    Arrow(#[from] ArrowError),
    /// The directory asked for the spill cannot hold it: missing, not a directory, or not writable.
    #[error("--spill-dir {dir}: {reason}")]
    Dir {
        /// The directory, as the command line named it.
        dir: String,
        /// Why no file can be made there.
        reason: String,
    },
}

/// A spill that cannot be read back fails the output being written from it.
impl From<SpillError> for std::io::Error {
    fn from(e: SpillError) -> std::io::Error {
        // Kept whole, so the message still names the temporary directory.
        std::io::Error::other(e)
    }
}

/// Checks that `dir` can hold a spill, by making (and at once dropping) an unlinked file there, so a
/// run asked to spill where it cannot fails before it reads anything.
///
/// # Errors
///
/// No file can be made in `dir`: it is missing, not a directory, or not writable.
pub fn check_dir(dir: &Path) -> Result<(), SpillError> {
    tempfile::tempfile_in(dir)
        .map(drop)
        .map_err(|e| dir_error(dir, &e))
}

/// Why no spill can be made in `dir`, in a word when the system's reason is a common one.
fn dir_error(dir: &Path, e: &std::io::Error) -> SpillError {
    let reason = match e.kind() {
        std::io::ErrorKind::NotFound => "no such directory".to_string(),
        std::io::ErrorKind::NotADirectory => "not a directory".to_string(),
        std::io::ErrorKind::PermissionDenied => {
            "cannot write there (permission denied)".to_string()
        }
        _ => format!("cannot make a file there: {e}"),
    };
    SpillError::Dir {
        dir: crate::error::display_path(dir),
        reason,
    }
}

/// A spill being written: shared by the files a run reads in parallel.
pub struct VerdictSpill {
    file: File,
    /// The directory asked for (`TMPDIR` when `None`): what else the run sorts on disk goes there too.
    dir: Option<PathBuf>,
    writer: Mutex<Writing>,
    /// The rows are counted as they are written ([`VerdictSpill::counting_rows`]).
    count_rows: bool,
}

struct Writing {
    writer: Option<FileWriter<BufWriter<File>>>,
    batches: usize,
    /// The rows written so far, counted as they are written: when every batch is read back as it was
    /// written, the outputs need no pass of their own to count them.
    counting: Option<Counting>,
    /// The first write that failed: every later append is refused, and [`VerdictSpill::finish`]
    /// reports it.
    failed: Option<SpillError>,
}

impl VerdictSpill {
    /// An empty spill for batches of `schema`, in an unlinked file of `dir` (the temporary directory,
    /// `TMPDIR`, when `None`).
    ///
    /// # Errors
    ///
    /// The file cannot be created or its header written.
    pub fn new(schema: &SchemaRef, dir: Option<&Path>) -> Result<VerdictSpill, SpillError> {
        let file = match dir {
            Some(dir) => tempfile::tempfile_in(dir).map_err(|e| dir_error(dir, &e))?,
            None => tempfile::tempfile()?,
        };
        let writer = FileWriter::try_new(BufWriter::new(file.try_clone()?), schema)?;
        Ok(VerdictSpill {
            file,
            dir: dir.map(Path::to_path_buf),
            writer: Mutex::new(Writing {
                writer: Some(writer),
                batches: 0,
                counting: None,
                failed: None,
            }),
            count_rows: false,
        })
    }

    /// The same spill, counting the rows as they are written, for outputs that would otherwise read
    /// the spill once more to count them (see [`SpilledRun::take_written_counts`]).
    #[must_use]
    pub(crate) fn counting_rows(self) -> VerdictSpill {
        VerdictSpill {
            count_rows: true,
            ..self
        }
    }

    /// The directory the spill is in, when one was asked for (`TMPDIR` otherwise).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Appends a batch; returns its index, or `None` when the spill failed (then
    /// [`VerdictSpill::finish`] says why).
    pub fn append(&self, batch: &VerdictBatch) -> Option<usize> {
        let mut writing = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if writing.failed.is_some() {
            return None;
        }
        let written = match writing.writer.as_mut() {
            Some(writer) => writer.write(batch.record_batch()),
            None => Err(ArrowError::IoError(
                "spill already finished".into(),
                std::io::Error::other("spill already finished"),
            )),
        };
        match written {
            Ok(()) => {
                // Counted under the lock the write holds anyway, while the threads decode the next
                // batches: the rows are counted here, not after the read, when nothing else runs.
                if self.count_rows {
                    let dir = self.dir.as_deref();
                    writing
                        .counting
                        .get_or_insert_with(|| Counting::new(batch.checks(), dir))
                        .add(batch);
                }
                writing.batches += 1;
                Some(writing.batches - 1)
            }
            Err(e) => {
                writing.failed = Some(e.into());
                None
            }
        }
    }

    /// Ends the writing: the footer that indexes the batches is written and the file flushed.
    ///
    /// # Errors
    ///
    /// An append or the footer failed.
    pub fn finish(self) -> Result<SpilledVerdicts, SpillError> {
        let mut writing = self
            .writer
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(failed) = writing.failed.take() {
            return Err(failed);
        }
        if let Some(mut writer) = writing.writer.take() {
            writer.finish()?;
            writer
                .into_inner()?
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
        }
        Ok(SpilledVerdicts {
            file: self.file,
            dir: self.dir,
            batches: writing.batches,
            counted: writing.counting.take(),
        })
    }
}

/// A finished spill: its batches, read back by index.
#[derive(Debug)]
pub struct SpilledVerdicts {
    file: File,
    dir: Option<PathBuf>,
    batches: usize,
    /// Every batch's rows, counted as they were written (`None` when the spill did not count them, or
    /// nothing was written).
    counted: Option<Counting>,
}

impl SpilledVerdicts {
    /// The directory the spill is in, when one was asked for (`TMPDIR` otherwise).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Number of batches spilled.
    pub fn batches(&self) -> usize {
        self.batches
    }

    /// A reader over the spill from its start. Readers share the file's offset: one at a time.
    ///
    /// # Errors
    ///
    /// The file cannot be read or its footer decoded.
    pub fn reader(&self) -> Result<SpillReader, SpillError> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(SpillReader {
            reader: FileReader::try_new(BufReader::new(file), None)?,
        })
    }
}

/// Reads spilled batches by index.
pub struct SpillReader {
    reader: FileReader<BufReader<File>>,
}

impl SpillReader {
    /// The batch appended as `index`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or holds no such batch.
    pub fn batch(&mut self, index: usize) -> Result<VerdictBatch, SpillError> {
        self.reader.set_index(index)?;
        let batch = self
            .reader
            .next()
            .ok_or_else(|| ArrowError::IpcError(format!("the spill holds no batch {index}")))??;
        Ok(VerdictBatch::try_new(batch)?)
    }
}

/// Batches of fewer rows are handed on before the next one is read, not while it is read on another
/// thread: starting that task costs about as much as reading a few hundred rows.
const READ_AHEAD_ROWS: usize = 256;

/// Where one file's verdicts are in the spill.
#[derive(Debug, Default, Clone)]
pub struct SpilledFile {
    /// The file's batches, in file order.
    pub batches: Vec<usize>,
    /// Trace ids left out on reading back: the traces another file holds too, checked once merged
    /// (boxed, as few files have any and a run may have a million files).
    pub dropped: Option<Box<HashSet<String>>>,
}

/// A run's spilled verdicts, file by file in input order: what a report reads its rows from.
#[derive(Debug)]
pub struct SpilledRun {
    /// The spill.
    pub verdicts: SpilledVerdicts,
    /// Each file's batches, in input order (an entry for every file, none for one that gave no
    /// rows), then the batch of the traces merged across files.
    pub files: Vec<SpilledFile>,
}

impl SpilledRun {
    /// Calls `each` with every batch, in input order, the dropped traces left out.
    ///
    /// # Errors
    ///
    /// The spill cannot be read back, or `each` failed.
    pub fn for_each_batch<E: From<SpillError>>(
        &self,
        mut each: impl FnMut(&VerdictBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_file_batch(|_, batch| each(batch))
    }

    /// Calls `each` with every batch and the place of its entry in [`SpilledRun::files`], in input
    /// order, the dropped traces left out.
    ///
    /// # Errors
    ///
    /// The spill cannot be read back, or `each` failed.
    pub fn for_each_file_batch<E: From<SpillError>>(
        &self,
        mut each: impl FnMut(usize, &VerdictBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut order = self
            .files
            .iter()
            .enumerate()
            .flat_map(|(place, file)| file.batches.iter().map(move |&index| (place, index)))
            .peekable();
        let mut reader = self.verdicts.reader()?;
        let mut next = order.peek().map(|&(_, index)| reader.batch(index));
        while let Some((place, _)) = order.next() {
            let batch = next.take().expect("each batch is read before its turn")?;
            let following = order.peek().map(|&(_, index)| index);
            if batch.len() < READ_AHEAD_ROWS {
                // A small batch (a run over many small files) is not worth a task.
                self.hand_on(place, &batch, &mut each)?;
                next = following.map(|index| reader.batch(index));
                continue;
            }
            // The next batch is read and decoded on another thread while `each` takes this one: the
            // two take about as long for the terminal table, the JSON report and the counts.
            let mut handled = Ok(());
            rayon::in_place_scope(|scope| {
                if let Some(index) = following {
                    let (reader, next) = (&mut reader, &mut next);
                    scope.spawn(move |_| *next = Some(reader.batch(index)));
                }
                handled = self.hand_on(place, &batch, &mut each);
            });
            handled?;
        }
        Ok(())
    }

    /// Calls `each` with `batch`, read for the file at `place`, the traces that file drops left out.
    fn hand_on<E: From<SpillError>>(
        &self,
        place: usize,
        batch: &VerdictBatch,
        each: &mut impl FnMut(usize, &VerdictBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        let dropped = match &self.files[place].dropped {
            Some(dropped) if batch.rows().any(|r| dropped.contains(r.trace_id())) => dropped,
            _ => return each(place, batch),
        };
        let keep: arrow_array::BooleanArray = batch
            .rows()
            .map(|r| Some(!dropped.contains(r.trace_id())))
            .collect();
        let kept = arrow_select::filter::filter_record_batch(batch.record_batch(), &keep)
            .map_err(SpillError::from)?;
        each(
            place,
            &VerdictBatch::try_new(kept).map_err(SpillError::from)?,
        )
    }

    /// The counts of the rows as they were written, when they are those of the rows read back: every
    /// batch written is read back once and no trace is left out. `None` otherwise (a file read again,
    /// traces merged across files), and after the first call.
    pub(crate) fn take_written_counts(&mut self) -> Option<Counting> {
        let counted = self.verdicts.counted.take()?;
        let mut read_back = vec![false; self.verdicts.batches];
        for file in &self.files {
            if file.dropped.is_some() {
                return None;
            }
            for &index in &file.batches {
                match read_back.get_mut(index) {
                    Some(seen) if !*seen => *seen = true,
                    _ => return None,
                }
            }
        }
        read_back.iter().all(|&seen| seen).then_some(counted)
    }

    /// Every batch, read back into memory, for the outputs that need the whole run at once.
    ///
    /// # Errors
    ///
    /// The spill cannot be read back.
    pub fn load(&self) -> Result<Vec<VerdictBatch>, SpillError> {
        let mut out = Vec::new();
        self.for_each_batch(|batch| {
            out.push(batch.clone());
            Ok::<(), SpillError>(())
        })?;
        Ok(out)
    }
}

#[cfg(test)]
impl SpilledRun {
    /// `batches`, of `schema`, spilled as the one file of a run, none dropped: how the outputs' tests
    /// hold a run they write from the spill.
    pub(crate) fn of_one_file(schema: &SchemaRef, batches: &[VerdictBatch]) -> SpilledRun {
        let spill = VerdictSpill::new(schema, None).expect("spill");
        let indices = batches
            .iter()
            .map(|b| spill.append(b).expect("appended"))
            .collect();
        SpilledRun {
            verdicts: spill.finish().expect("spill finished"),
            files: vec![SpilledFile {
                batches: indices,
                dropped: None,
            }],
        }
    }
}

/// A run of rule checks as the outputs' tests hold it three ways: whole in memory, spilled as one
/// file, and without its batches (the rest of the run, which a writer from the spill takes).
#[cfg(test)]
pub(crate) struct SpilledRuleRun {
    pub(crate) whole: super::Report,
    pub(crate) spilled: SpilledRun,
    pub(crate) without_batches: super::Report,
}

#[cfg(test)]
impl SpilledRuleRun {
    /// The run of `batches` whose checks are the rules `names`, in selection order.
    pub(crate) fn new(names: &[&str], batches: Vec<VerdictBatch>) -> Self {
        let checks = names
            .iter()
            .map(|n| super::ReportCheck::rule(n, crate::checks::Gating::CleanRate))
            .collect();
        let spilled = SpilledRun::of_one_file(&super::verdicts::schema(names), &batches);
        let without_batches = super::Report {
            checks,
            ..super::Report::default()
        };
        let whole = super::Report {
            batches,
            ..without_batches.clone()
        };
        SpilledRuleRun {
            whole,
            spilled,
            without_batches,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Reasons, VerdictColumn};
    use crate::redact::Redaction;
    use crate::report::counts::SpilledCounts;
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};

    fn batch(ids: &[&str]) -> VerdictBatch {
        let mut builder = VerdictBatchBuilder::new(schema(&["abstention"]), ids.len());
        let mut column = VerdictColumn::new(ids.len(), Reasons::All, Redaction::Off);
        for (i, id) in ids.iter().enumerate() {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: "s",
                ..TraceFields::default()
            });
            column.push(i % 2 == 0, 0.5, "why");
        }
        builder.finish(vec![column]).expect("verdict batch")
    }

    fn ids(run: &SpilledRun) -> Vec<String> {
        let mut out = Vec::new();
        run.for_each_batch(|b| {
            out.extend(b.rows().map(|r| r.trace_id().to_string()));
            Ok::<(), SpillError>(())
        })
        .unwrap();
        out
    }

    #[test]
    fn batches_come_back_in_input_order_whatever_order_they_were_spilled_in() {
        let spill = VerdictSpill::new(&schema(&["abstention"]), None).expect("spill");
        // The second file finished first.
        let b = spill.append(&batch(&["b1", "b2"])).unwrap();
        let a1 = spill.append(&batch(&["a1"])).unwrap();
        let a2 = spill.append(&batch(&["a2", "shared", "a3"])).unwrap();
        let merged = spill.append(&batch(&["shared"])).unwrap();
        let run = SpilledRun {
            verdicts: spill.finish().unwrap(),
            files: vec![
                SpilledFile {
                    batches: vec![a1, a2],
                    dropped: Some(Box::new(["shared".to_string()].into())),
                },
                SpilledFile {
                    batches: vec![b, merged],
                    dropped: None,
                },
            ],
        };
        assert_eq!(run.verdicts.batches(), 4);
        assert_eq!(ids(&run), ["a1", "a2", "a3", "b1", "b2", "shared"]);
        // Every pass reads the same rows, and so does loading them whole.
        assert_eq!(ids(&run), ["a1", "a2", "a3", "b1", "b2", "shared"]);
        let loaded = run.load().unwrap();
        assert_eq!(loaded.iter().map(VerdictBatch::len).sum::<usize>(), 6);
        assert_eq!(loaded[1].row(1).verdict(0).reason, Some("why"));
    }

    /// The counts of a pass over what is read back.
    fn counted_back(run: &SpilledRun) -> Option<SpilledCounts> {
        let mut counting = Counting::new(1, None);
        run.for_each_batch(|b| {
            counting.add(b);
            Ok::<(), SpillError>(())
        })
        .unwrap();
        counting.finish().unwrap()
    }

    /// A run of three batches, `files` saying where each file's are, none dropped; its rows counted
    /// as they are written when `count_rows`.
    fn spilled_run(files: &[&[usize]], count_rows: bool) -> SpilledRun {
        let mut spill = VerdictSpill::new(&schema(&["abstention"]), None).expect("spill");
        if count_rows {
            spill = spill.counting_rows();
        }
        for ids in [
            &["b1", "b2"][..],
            &["a-longer-than-twelve"],
            &["a2", "a3", "a4"],
        ] {
            spill.append(&batch(ids)).unwrap();
        }
        SpilledRun {
            verdicts: spill.finish().unwrap(),
            files: files
                .iter()
                .map(|batches| SpilledFile {
                    batches: batches.to_vec(),
                    dropped: None,
                })
                .collect(),
        }
    }

    fn run_of(files: &[&[usize]]) -> SpilledRun {
        spilled_run(files, true)
    }

    #[test]
    fn rows_counted_as_written_are_taken_only_when_they_are_the_rows_read_back() {
        let mut run = run_of(&[&[1, 2], &[0]]);
        let written = run.take_written_counts().expect("read back as written");
        let counts = written.finish().unwrap().expect("distinct ids");
        assert_eq!(Some(counts.clone()), counted_back(&run));
        // Two abstain in a batch of two or three (every other row), one in the batch of one.
        assert_eq!(
            (counts.traces, counts.failed, counts.fired),
            (6, 4, vec![4])
        );
        assert_eq!(counts.longest_id, "a-longer-than-twelve".len());
        assert!(run.take_written_counts().is_none(), "taken once");
        assert!(
            spilled_run(&[&[1, 2], &[0]], false)
                .take_written_counts()
                .is_none(),
            "a spill that does not count its rows"
        );

        // A batch written but not read back (a file read again), or read back twice.
        assert!(run_of(&[&[1, 2]]).take_written_counts().is_none());
        assert!(run_of(&[&[1, 2], &[0, 1]]).take_written_counts().is_none());
        assert!(run_of(&[&[1, 2, 3], &[0]]).take_written_counts().is_none());
        // A file whose traces another file holds too leaves them out on reading back.
        let mut dropping = run_of(&[&[1, 2], &[0]]);
        dropping.files[1].dropped = Some(Box::new(["b1".to_string()].into()));
        assert!(dropping.take_written_counts().is_none());
        assert_eq!(counted_back(&dropping).expect("distinct").traces, 5);
    }
}
