//! One pass over a run's verdicts that feeds every output at once.
//!
//! A run's verdicts are read from one [`VerdictSource`], in input order, whether they stayed in memory
//! or were spilled. Each streamed output is a [`Sink`]: it takes every batch as the pass hands it on,
//! and writes what comes after its rows once the pass is over. Reading the spill back and decoding it
//! costs about as much as writing one output, so the outputs share one reading instead of each making
//! its own. An output whose file has its rows in the middle (the JSON report's short lists, the Parquet
//! tables) writes them to a [`Body`] as they come, and copies it into place at its end; JUnit, whose
//! suites repeat every row, keeps each row once in a [`Body`] and writes each suite from it. The one
//! exception is the JSON report's `results`: most of its bytes, after the lists the pass writes, so it
//! is written from a second reading straight into its file, which costs less than the copy.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use super::VerdictBatch;
use super::spill::{SpillError, SpilledRun};

/// A run's verdict batches in input order: held in memory, or in the spill.
#[derive(Debug, Clone, Copy)]
pub(crate) enum VerdictSource<'a> {
    /// The batches of a run held whole.
    Memory(&'a [VerdictBatch]),
    /// A spilled run, read back a batch at a time.
    Spilled(&'a SpilledRun),
}

impl VerdictSource<'_> {
    /// Calls `each` with every batch, in input order.
    ///
    /// # Errors
    ///
    /// The spill cannot be read back, or `each` failed.
    pub(crate) fn for_each_batch<E: From<SpillError>>(
        &self,
        each: impl FnMut(&VerdictBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            VerdictSource::Memory(batches) => batches.iter().try_for_each(each),
            VerdictSource::Spilled(run) => run.for_each_batch(each),
        }
    }

    /// The directory the run's temporary files go to (`TMPDIR` when `None`).
    pub(crate) fn dir(&self) -> Option<&Path> {
        match self {
            VerdictSource::Memory(_) => None,
            VerdictSource::Spilled(run) => run.verdicts.dir(),
        }
    }
}

/// An output written from the rows as the pass hands them on.
pub(crate) trait Sink: Send {
    /// Takes the next batch, in input order.
    ///
    /// # Errors
    ///
    /// The output cannot be written.
    fn take(&mut self, batch: &VerdictBatch) -> io::Result<()>;
}

/// Hands every batch of `source` to every sink, reading it once; the sinks take each batch at the
/// same time, on the threads. Returns each sink's first error, in the sinks' order: a sink that
/// failed takes no more batches, and the others go on, so each output's error is reported in its
/// own turn.
///
/// # Errors
///
/// The spill cannot be read back.
pub(crate) fn feed(
    source: VerdictSource<'_>,
    sinks: &mut [&mut dyn Sink],
) -> Result<Vec<Option<io::Error>>, SpillError> {
    let mut failed: Vec<Option<io::Error>> = sinks.iter().map(|_| None).collect();
    source.for_each_batch(|batch| {
        let mut open: Vec<(&mut &mut dyn Sink, &mut Option<io::Error>)> = sinks
            .iter_mut()
            .zip(failed.iter_mut())
            .filter(|(_, failed)| failed.is_none())
            .collect();
        match open.as_mut_slice() {
            [] => {}
            [(sink, failed)] => **failed = sink.take(batch).err(),
            many => rayon::scope(|scope| {
                for (sink, failed) in many.iter_mut() {
                    scope.spawn(move |_| **failed = sink.take(batch).err());
                }
            }),
        }
        Ok::<(), SpillError>(())
    })?;
    Ok(failed)
}

/// Part of an output written before the parts that precede it in the file: an unlinked temporary
/// file (as the spill is, so nothing is left behind), copied into place once they are written.
pub(crate) struct Body {
    file: BufWriter<File>,
}

impl Body {
    /// An empty body in `dir` (the temporary directory, `TMPDIR`, when `None`).
    ///
    /// # Errors
    ///
    /// The file cannot be created.
    pub(crate) fn new(dir: Option<&Path>) -> io::Result<Body> {
        let file = match dir {
            Some(dir) => tempfile::tempfile_in(dir)?,
            None => tempfile::tempfile()?,
        };
        Ok(Body {
            file: BufWriter::with_capacity(1 << 16, file),
        })
    }

    /// What was written, read from its start: for once everything is written, as a write after it
    /// would land where the reading stopped.
    ///
    /// # Errors
    ///
    /// The body cannot be flushed or rewound.
    pub(crate) fn read_back(&mut self) -> io::Result<io::BufReader<&File>> {
        self.file.flush()?;
        let mut file = self.file.get_ref();
        file.seek(SeekFrom::Start(0))?;
        Ok(io::BufReader::with_capacity(1 << 16, file))
    }

    /// Copies what was written to `out`.
    ///
    /// # Errors
    ///
    /// The body cannot be read back, or `out` cannot be written.
    pub(crate) fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        let mut file = self
            .file
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        // Through a buffer of 128 KiB, which `io::copy` writes whole: bodies run to hundreds of
        // megabytes, and without one it reads 8 KiB a call.
        io::copy(&mut io::BufReader::with_capacity(1 << 17, file), out)?;
        Ok(())
    }
}

impl Write for Body {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Writes `source` through `sink` alone: how the outputs' tests hold a run they write in a pass.
#[cfg(test)]
pub(crate) fn through<S: Sink>(source: VerdictSource<'_>, mut sink: S) -> S {
    let failed = feed(source, &mut [&mut sink]).expect("read back");
    if let Some(Some(e)) = failed.into_iter().next() {
        panic!("{e}");
    }
    sink
}
