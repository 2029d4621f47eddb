//! Bytes of an input file: memory-mapped when possible, read otherwise.
//!
//! This is the crate's `unsafe` code (the input mapping and the mapping of spilled decompressed input), besides the call of the C library's `erf` in `gate/erf.rs`. Parsers never receive the mapping itself (simd-json mutates its
//! input); they copy the piece they parse into a per-thread buffer.

#![allow(unsafe_code)]

use std::fs::File;
use std::ops::Deref;
use std::path::Path;

use memmap2::Mmap;

/// The contents of one input file.
pub enum Source {
    Mapped(Mapping),
    Read(Vec<u8>),
}

/// A file's read-only mapping. A large one is unmapped on a thread of its own: unmapping visits every
/// page of the mapping in the kernel, serial work that would otherwise stand between the last batch of
/// a file and the run's outputs (or the next file).
pub struct Mapping(Option<Mmap>);

/// Mappings at least this large are unmapped aside.
const UNMAP_ASIDE: usize = 64 << 20;

impl Drop for Mapping {
    fn drop(&mut self) {
        if let Some(map) = self.0.take()
            && map.len() >= UNMAP_ASIDE
        {
            // When no thread can be started, the closure, and the mapping with it, is dropped here.
            let _ = std::thread::Builder::new()
                .name("unmap".into())
                .spawn(move || drop(map));
        }
    }
}

/// Files smaller than this are read: a mapping costs more than a copy for them.
const MMAP_THRESHOLD: u64 = 64 * 1024;

impl Source {
    /// Opens `path`, mapping it when it is large enough.
    pub fn open(path: &Path) -> std::io::Result<Source> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        // A FIFO or device has no length to read to: /dev/zero never ends and a FIFO may never open.
        // Trace inputs of those kinds are read as streams (`ingest::stream`) and never come here.
        if !meta.is_file() {
            return Err(std::io::Error::other(
                "not a regular file (a FIFO, device or socket)",
            ));
        }
        let len = meta.len();
        if len >= MMAP_THRESHOLD {
            // SAFETY: the mapping is read-only and private to this process. If another process truncates
            // the file while we read it, the kernel raises SIGBUS; trace archives are inputs that are not
            // written while a gate runs, which is the same contract ripgrep relies on. On any mapping
            // failure we fall back to reading the file.
            if let Ok(map) = unsafe { Mmap::map(&file) } {
                return Ok(Source::Mapped(Mapping(Some(map))));
            }
        }
        let mut bytes = Vec::with_capacity(len as usize);
        std::io::Read::read_to_end(&mut &file, &mut bytes)?;
        Ok(Source::Read(bytes))
    }

    /// Maps a temporary file this process created, unlinked and wrote: decompressed input that spilled
    /// out of memory.
    pub fn map_spilled(file: &File) -> std::io::Result<Source> {
        // SAFETY: the file is unlinked and only this process holds it, so nobody truncates it under the
        // read-only mapping.
        let map = unsafe { Mmap::map(file) }?;
        Ok(Source::Mapped(Mapping(Some(map))))
    }
}

impl Deref for Source {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Source::Mapped(Mapping(map)) => map.as_deref().unwrap_or_default(),
            Source::Read(bytes) => bytes,
        }
    }
}
