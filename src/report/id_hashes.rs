//! The 64-bit hashes of a run's trace ids, to find the ids that come back: a repeated id merges rows
//! in the table, and an id two files (or two shards) hold is one trace split between them.
//!
//! A hash set of every id costs 16 to 24 bytes a trace at its peak (160 MB and more at 10,000,000
//! traces), so the hashes are sorted a run of 512 Ki at a time instead, each sorted run
//! written to an unlinked temporary file (as the verdict spill is), and the runs merged once every
//! hash is in: memory holds one run and a small buffer per written run, whatever the number of
//! traces. A run with fewer ids than one run never touches the disk. When no temporary file can be
//! written (a read-only `TMPDIR`), the hashes stay in memory, as the hash set kept them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;

/// Hashes sorted in memory before they go to a file: 512 Ki entries of 16 bytes, 8 MiB.
const RUN_ENTRIES: usize = 512 * 1024;

/// Bytes of one entry in a run file: the hash, then its tag, little-endian.
const ENTRY_BYTES: usize = 12;

/// Trace-id hashes, each with a tag (the file or shard it was read from), sorted on disk in runs.
pub struct IdHashes {
    /// The entries not yet written.
    run: Vec<(u64, u32)>,
    /// The sorted runs written so far.
    files: Vec<File>,
    /// Where run files are made (`TMPDIR` when `None`).
    dir: Option<PathBuf>,
    /// A run file could not be written: every later entry stays in memory.
    in_memory: bool,
}

impl IdHashes {
    /// No hashes yet; run files will go to `dir` (`TMPDIR` when `None`).
    pub fn new(dir: Option<&Path>) -> IdHashes {
        IdHashes {
            run: Vec::new(),
            files: Vec::new(),
            dir: dir.map(Path::to_path_buf),
            in_memory: false,
        }
    }

    /// Adds the hash of one id and its tag.
    pub fn push(&mut self, hash: u64, tag: u32) {
        self.run.push((hash, tag));
        if self.run.len() >= RUN_ENTRIES && !self.in_memory {
            match self.write_run() {
                Ok(file) => {
                    self.files.push(file);
                    self.run.clear();
                    self.run.shrink_to(RUN_ENTRIES);
                }
                // The entries stay in the run, which now grows as a whole list would.
                Err(_) => self.in_memory = true,
            }
        }
    }

    fn write_run(&mut self) -> std::io::Result<File> {
        // In parallel: the runs are sorted between reads or after them, when the threads are free.
        self.run.par_sort_unstable();
        let file = match &self.dir {
            Some(dir) => tempfile::tempfile_in(dir)?,
            None => tempfile::tempfile()?,
        };
        let mut out = BufWriter::new(file);
        for &(hash, tag) in &self.run {
            out.write_all(&hash.to_le_bytes())?;
            out.write_all(&tag.to_le_bytes())?;
        }
        let mut file = out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(file)
    }

    /// Calls `each` with every hash pushed more than once and the tags it came with (sorted, a tag
    /// once per push), in the order of the hashes, until `each` returns false.
    ///
    /// # Errors
    ///
    /// A run file cannot be read back.
    pub fn repeated(mut self, mut each: impl FnMut(u64, &[u32]) -> bool) -> std::io::Result<()> {
        self.run.par_sort_unstable();
        let mut sources: Vec<Source> = Vec::with_capacity(self.files.len() + 1);
        for file in self.files {
            sources.push(Source::File(BufReader::with_capacity(64 * 1024, file)));
        }
        sources.push(Source::Memory(std::mem::take(&mut self.run).into_iter()));
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (i, source) in sources.iter_mut().enumerate() {
            if let Some(entry) = source.next()? {
                heap.push(Reverse((entry, i)));
            }
        }
        let mut current: Option<u64> = None;
        let mut tags: Vec<u32> = Vec::new();
        while let Some(Reverse(((hash, tag), i))) = heap.pop() {
            if current != Some(hash) {
                if tags.len() > 1 && !each(current.unwrap_or_default(), &tags) {
                    return Ok(());
                }
                tags.clear();
                current = Some(hash);
            }
            tags.push(tag);
            if let Some(entry) = sources[i].next()? {
                heap.push(Reverse((entry, i)));
            }
        }
        if tags.len() > 1 {
            each(current.unwrap_or_default(), &tags);
        }
        Ok(())
    }
}

/// One sorted run being merged.
enum Source {
    File(BufReader<File>),
    Memory(std::vec::IntoIter<(u64, u32)>),
}

impl Source {
    fn next(&mut self) -> std::io::Result<Option<(u64, u32)>> {
        match self {
            Source::Memory(entries) => Ok(entries.next()),
            Source::File(reader) => {
                let mut entry = [0u8; ENTRY_BYTES];
                match reader.read_exact(&mut entry) {
                    Ok(()) => {
                        let (hash, tag) = entry.split_at(8);
                        Ok(Some((
                            u64::from_le_bytes(hash.try_into().expect("8 bytes")),
                            u32::from_le_bytes(tag.try_into().expect("4 bytes")),
                        )))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeated(hashes: IdHashes) -> Vec<(u64, Vec<u32>)> {
        let mut out = Vec::new();
        hashes
            .repeated(|hash, tags| {
                out.push((hash, tags.to_vec()));
                true
            })
            .unwrap();
        out
    }

    #[test]
    fn only_hashes_pushed_twice_come_back_with_their_tags() {
        let mut hashes = IdHashes::new(None);
        for (hash, tag) in [(7, 1), (3, 0), (7, 0), (9, 2), (3, 0), (1, 5)] {
            hashes.push(hash, tag);
        }
        assert_eq!(repeated(hashes), [(3, vec![0, 0]), (7, vec![0, 1])]);
    }

    #[test]
    fn hashes_past_one_run_are_merged_from_their_files() {
        let mut hashes = IdHashes::new(None);
        let n = RUN_ENTRIES as u64 * 2 + 10;
        // Every hash once, in a scattered order, and three of them again, one per run.
        for i in 0..n {
            hashes.push(i.wrapping_mul(0x9E37_79B9_7F4A_7C15), (i % 3) as u32);
        }
        for i in [5, RUN_ENTRIES as u64 + 1, n - 1] {
            hashes.push(i.wrapping_mul(0x9E37_79B9_7F4A_7C15), 9);
        }
        assert_eq!(hashes.files.len(), 2, "two full runs went to files");
        let found = repeated(hashes);
        let mut expected: Vec<(u64, Vec<u32>)> = [5, RUN_ENTRIES as u64 + 1, n - 1]
            .iter()
            .map(|&i| {
                (
                    i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    vec![(i % 3) as u32, 9],
                )
            })
            .collect();
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn the_caller_can_stop_at_the_first_repeat() {
        let mut hashes = IdHashes::new(None);
        for hash in [1, 1, 2, 2] {
            hashes.push(hash, 0);
        }
        let mut calls = 0;
        hashes
            .repeated(|_, _| {
                calls += 1;
                false
            })
            .unwrap();
        assert_eq!(calls, 1);
    }
}
