//! Trace inputs that are streams: `-` (standard input), FIFOs and process substitution (`<(zcat x.gz)`,
//! a `/dev/fd/N` pipe), and character devices.
//!
//! A stream can be read only once and has no length, while a run reads each input more than once (its
//! size for the shard plan, its trace ids, its traces, its digest for a partial or the audit). So a
//! stream is read once, on first use, through a fixed buffer, and its bytes are kept for the process:
//! in memory up to [`archive::SPILL_AT`], past it in an unlinked temporary file (in `$TMPDIR`) that the
//! readers then map, since they need random access. The stream itself is never mapped. Compression is
//! told from the first bytes afterwards, as for a file.
//!
//! The first bytes also decide whether to read on: a stream that starts as no trace file can (not JSON,
//! not gzip or zstd, not OTLP protobuf) is read no further, so `/dev/zero` or `/dev/urandom` given as
//! traces is refused at once, as a file of those bytes is, instead of being read forever.

use std::collections::HashMap;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::archive::{self, Compression};
use super::source::Source;

/// The path that names standard input.
pub(crate) const STDIN: &str = "-";

/// How much of a stream is read before deciding whether it can be a trace file.
const HEAD: usize = 64 * 1024;

/// Streams read so far, by the path that named them.
static READ: Mutex<Option<HashMap<PathBuf, Arc<Source>>>> = Mutex::new(None);

/// Returns true if and only if `path` names standard input.
pub(crate) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// Returns true if and only if a trace input of this kind is read as a stream: a FIFO or a character
/// device (a regular file is mapped; a directory is walked; a block device or socket is refused).
pub(crate) fn is_stream_kind(meta: &std::fs::Metadata) -> bool {
    let kind = meta.file_type();
    kind.is_fifo() || kind.is_char_device()
}

/// Returns true if and only if `path` is read as a stream.
pub(crate) fn is_stream(path: &Path) -> bool {
    is_stdin(path) || std::fs::metadata(path).is_ok_and(|m| is_stream_kind(&m))
}

/// The contents of a trace input as stored: a stream's bytes (read on first use), else the file's.
pub(crate) fn open(path: &Path) -> std::io::Result<Arc<Source>> {
    if super::remote::is_url(path) {
        return super::remote::open(path);
    }
    if !is_stream(path) {
        return Source::open(path).map(Arc::new);
    }
    let mut read = READ
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let streams = read.get_or_insert_with(HashMap::new);
    if let Some(source) = streams.get(path) {
        return Ok(source.clone());
    }
    let source = Arc::new(read_stream(path)?);
    streams.insert(path.to_path_buf(), source.clone());
    Ok(source)
}

/// The stored size of a trace input (a stream's, once read); 0 when it cannot be read.
pub(crate) fn len(path: &Path) -> u64 {
    if super::remote::is_url(path) {
        return super::remote::len(path);
    }
    if is_stream(path) {
        return open(path).map_or(0, |s| s.len() as u64);
    }
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Lowercase hex SHA-256 of a trace input's stored bytes.
pub(crate) fn sha256(path: &Path) -> std::io::Result<String> {
    if is_stream(path) || super::remote::is_url(path) {
        return open(path).map(|s| crate::digest::sha256_hex(&s));
    }
    crate::digest::sha256_file(path)
}

fn read_stream(path: &Path) -> std::io::Result<Source> {
    if is_stdin(path) {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(terminal());
        }
        return read_all(stdin.lock());
    }
    let file = std::fs::File::open(path)?;
    if file.is_terminal() {
        return Err(terminal());
    }
    read_all(file)
}

fn terminal() -> std::io::Error {
    std::io::Error::other("a terminal; pipe the traces in, or name their files")
}

/// Reads a stream's head and, when it can start a trace file, the rest, spilling past
/// [`archive::SPILL_AT`].
fn read_all(mut stream: impl Read) -> std::io::Result<Source> {
    let mut heap = Vec::with_capacity(HEAD);
    (&mut stream).take(HEAD as u64).read_to_end(&mut heap)?;
    if heap.len() < HEAD || !can_start_traces(&heap) {
        return Ok(Source::Read(heap));
    }
    let mut chunk = vec![0u8; 256 * 1024];
    let mut spill: Option<std::fs::File> = None;
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        match &mut spill {
            Some(file) => file.write_all(&chunk[..n])?,
            None if heap.len() + n > archive::SPILL_AT => {
                let mut file = tempfile::tempfile()?;
                file.write_all(&heap)?;
                file.write_all(&chunk[..n])?;
                heap = Vec::new();
                spill = Some(file);
            }
            None => heap.extend_from_slice(&chunk[..n]),
        }
    }
    match spill {
        None => Ok(Source::Read(heap)),
        Some(file) => Source::map_spilled(&file),
    }
}

/// Returns true if and only if a stream starting with `head` may be a trace file: gzip or zstd, JSON
/// (after an optional byte-order mark and whitespace: an object or a list), or OTLP protobuf (the tag
/// of its first field, or a 4-byte length prefix followed by that tag).
fn can_start_traces(head: &[u8]) -> bool {
    if Compression::of(head) != Compression::None {
        return true;
    }
    if head.first() == Some(&0x0A) || (head.first() == Some(&0x00) && head.get(4) == Some(&0x0A)) {
        return true;
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b) => matches!(b, b'{' | b'['),
        // Whitespace only so far: the document may still come.
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_that_cannot_start_a_trace_file_is_read_no_further() {
        // An endless stream of zeros: its head is all that is read.
        let zeros = std::io::repeat(0).take(1 << 40);
        assert_eq!(read_all(zeros).unwrap().len(), HEAD);
        let noise = std::io::repeat(b'x').take(1 << 40);
        assert_eq!(read_all(noise).unwrap().len(), HEAD);
        for head in [
            &b"  \n {\"resourceSpans\""[..],
            b"\xEF\xBB\xBF[",
            b"\x1f\x8b\x08",
            b"\x28\xb5\x2f\xfd",
            b"\x0a\x12",
            b"\x00\x00\x01\x00\x0a",
            b"    ",
        ] {
            assert!(can_start_traces(head), "{head:?}");
        }
        for head in [&b"\x00\x00\x00\x00\x00"[..], b"hello", b"\xff\xfe{"] {
            assert!(!can_start_traces(head), "{head:?}");
        }
    }

    #[test]
    fn a_long_stream_is_read_whole_and_spills_past_the_heap_size() {
        let mut text = b"{\"resourceSpans\": [], \"pad\": \"".to_vec();
        text.resize(archive::SPILL_AT + HEAD, b'x');
        text.extend_from_slice(b"\"}");
        let source = read_all(&text[..]).unwrap();
        assert!(matches!(source, Source::Mapped(_)));
        assert!(source[..] == text[..]);
        let short = read_all(&b"{\"a\": 1}"[..]).unwrap();
        assert_eq!(&short[..], b"{\"a\": 1}");
    }
}
