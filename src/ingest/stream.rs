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
    // Hashed where it is mapped: an archive of gigabytes is not copied again to be read. A file that
    // cannot be opened this way is read, for the error reading gives.
    match super::source::Source::open(path) {
        Ok(source) => Ok(crate::digest::sha256_hex(&source)),
        Err(_) => crate::digest::sha256_file(path),
    }
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
/// (after an optional byte-order mark and whitespace: an object or a list, in UTF-8), or OTLP protobuf
/// (messages whose fields are well formed, or 4-byte length-prefixed such messages). The head is checked
/// as far as it goes, so that an endless stream of noise (`/dev/urandom`) is not read on because its first
/// byte happens to be `{` or a protobuf tag.
fn can_start_traces(head: &[u8]) -> bool {
    match Compression::of(head) {
        // RFC 1952: deflate is the only method, and the flags' top three bits are reserved.
        Compression::Gzip => {
            return head.get(2).is_none_or(|&m| m == 8)
                && head.get(3).is_none_or(|&f| f & 0xE0 == 0);
        }
        Compression::Zstd => return true,
        Compression::None => {}
    }
    match head.first() {
        Some(0x0A) => return protobuf_prefix(head, usize::MAX, true),
        Some(0x00) if head.get(4) == Some(&0x0A) => {
            let len = u32::from_be_bytes(head[..4].try_into().expect("4 bytes")) as usize;
            return protobuf_prefix(&head[4..head.len().min(4 + len)], len, true);
        }
        _ => {}
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let utf8 = match std::str::from_utf8(text) {
        Ok(_) => true,
        // A character cut by the end of the head is not an error.
        Err(e) => e.error_len().is_none(),
    };
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b) => matches!(b, b'{' | b'[') && utf8,
        // Whitespace only so far: the document may still come.
        None => true,
    }
}

/// Whether `bytes`, the first bytes of a message `declared` bytes long (the head may end first), can
/// begin an OTLP export in protobuf. At the `top` every field is field 1 (`resource_spans` or
/// `resource_logs`), shorter than protobuf's 2 GiB limit, and its own fields are checked too: they are
/// all length-delimited (messages and strings) and fit in it. Deeper fields are not read.
fn protobuf_prefix(mut bytes: &[u8], mut declared: usize, top: bool) -> bool {
    while !bytes.is_empty() {
        let Some((tag, n)) = varint(bytes) else {
            return cut_varint(bytes);
        };
        let wanted = if top {
            tag == 0x0A
        } else {
            tag >> 3 != 0 && tag & 7 == 2
        };
        if !wanted {
            return false;
        }
        bytes = &bytes[n..];
        let Some((len, n)) = varint(bytes) else {
            return cut_varint(bytes);
        };
        bytes = &bytes[n..];
        declared = declared.saturating_sub(prost::encoding::encoded_len_varint(tag) + n);
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > declared || (top && len >= 1 << 31) {
            return false;
        }
        if top && !protobuf_prefix(&bytes[..bytes.len().min(len)], len, false) {
            return false;
        }
        if len > bytes.len() {
            return true;
        }
        bytes = &bytes[len..];
        declared -= len;
    }
    true
}

/// A varint at the start of `bytes` and its length; `None` when it does not end within `bytes` or runs
/// past ten bytes.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut rest = bytes;
    let value = prost::encoding::decode_varint(&mut rest).ok()?;
    Some((value, bytes.len() - rest.len()))
}

/// Whether `bytes`, where no varint ends, is one cut short by the end of the head rather than too long.
fn cut_varint(bytes: &[u8]) -> bool {
    bytes.len() < 10
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
    fn noise_that_happens_to_start_like_a_trace_file_is_not_read_on() {
        // Heads of random bytes after each first byte a trace file may start with: from `/dev/urandom`
        // one read in a hundred began so, and the endless stream was read until the disk filled.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut noise = |start: &[u8]| {
            let mut head = start.to_vec();
            while head.len() < HEAD {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                head.extend_from_slice(&state.to_le_bytes());
            }
            head
        };
        // JSON must be UTF-8, and a 4-byte prefix must frame a message that fits it.
        for start in [
            &b"{"[..],
            b"[",
            b" \n{",
            b"\xEF\xBB\xBF[",
            b"\x00\x00\xff\x00\x0a",
        ] {
            for _ in 0..2_000 {
                let head = noise(start);
                assert!(!can_start_traces(&head), "{:?}", &head[..16]);
            }
        }
        // A protobuf field or a gzip member may run past the head, so a few heads of noise still pass
        // (their first field's length reaches past what the head shows): far fewer than one in a
        // hundred, after a first byte that itself comes once in 256.
        for start in [&b"\x0a"[..], b"\x1f\x8b"] {
            let passed = (0..2_000)
                .filter(|_| can_start_traces(&noise(start)))
                .count();
            assert!(passed <= 20, "{start:?}: {passed} of 2000");
        }
    }

    #[test]
    fn a_protobuf_export_longer_than_the_head_can_start_traces() {
        // The fixture holds 4-byte length-prefixed messages. Messages written one after another are
        // one message, as protobuf merges repeated fields, and so are frames one after another.
        let framed = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/otlp_proto/traces.pb"
        ))
        .unwrap();
        let len = u32::from_be_bytes(framed[..4].try_into().unwrap()) as usize;
        let message = &framed[4..4 + len];
        for unit in [&framed[..], message] {
            let mut whole = Vec::new();
            while whole.len() < 2 * HEAD {
                whole.extend_from_slice(unit);
            }
            for cut in [HEAD, HEAD - 1, HEAD - 7, 5_000] {
                assert!(can_start_traces(&whole[..cut]), "cut at {cut}");
            }
        }
        let text = "{\"name\": \"é✓\"}".repeat(HEAD / 8);
        assert!(can_start_traces(&text.as_bytes()[..HEAD]));
        // A character cut by the head's end.
        let cut = text.find('é').unwrap() + 1;
        assert!(can_start_traces(&text.as_bytes()[..cut]));
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
