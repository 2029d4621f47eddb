//! Compressed inputs: gzip and zstd files are decompressed as a stream, under one size and ratio guard
//! shared by both codecs, so a decompression bomb is refused early with a message instead of exhausting
//! memory.
//!
//! The guard compares the output produced so far with the compressed input consumed so far (not with
//! the whole file's size), so 10 GiB of zeros packed into 10 MB trips after the grace size, in a fraction
//! of a second. Output that passes the guard is kept in memory up to [`SPILL_AT`] and past it is written
//! to an unlinked temporary file that is then mapped, so the anonymous memory a large compressed input
//! takes is bounded by the spill size, as for an uncompressed file (which is mapped too).
//!
//! A gzip file of one member whose trailer states a size no guard could trip on is inflated in one call
//! by libdeflate instead (`gzip_whole`), into a buffer of that size: the stream would give the same
//! bytes, and any file the one call does not take whole goes to the stream, which decides its errors.
//! Its buffer is one a finished file handed back when there is one (`spare`): a fresh buffer must be
//! zeroed before inflating into it, which cost a few percent of reading a directory of gzip files.

use std::io::{Read, Write};
use std::ops::Deref;
use std::path::Path;

use crate::error::InputError;
use crate::ingest::source::Source;

/// How much a compressed file may expand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest decompressed size accepted per file.
    pub max_bytes: u64,
    /// Output below this size is never judged by its ratio (small files compress very well).
    pub ratio_grace: u64,
    /// Largest accepted ratio of decompressed size to compressed input consumed, past the grace size.
    pub max_ratio: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 4 << 30,
            ratio_grace: 64 << 20,
            max_ratio: 200,
        }
    }
}

/// Decompressed output past this size goes to a temporary file instead of the heap.
pub const SPILL_AT: usize = 64 << 20;

/// How much is decompressed at a time; the guard is checked after each piece.
const CHUNK: usize = 256 * 1024;

/// The compression of a file's contents, told by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Plain bytes.
    None,
    /// gzip (magic `1f 8b`).
    Gzip,
    /// Zstandard (magic `28 b5 2f fd`).
    Zstd,
}

impl Compression {
    /// The compression `bytes` start with; [`Compression::None`] when no known magic matches.
    pub(crate) fn of(bytes: &[u8]) -> Compression {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// A file's contents after decompression.
pub enum Decompressed<'a> {
    /// Not compressed: the file's own bytes.
    Borrowed(&'a [u8]),
    /// Decompressed output small enough to keep on the heap.
    Owned(Vec<u8>),
    /// Decompressed output spilled to an unlinked temporary file and mapped.
    Spilled(Source),
}

impl Drop for Decompressed<'_> {
    fn drop(&mut self) {
        if let Decompressed::Owned(bytes) = self {
            spare::give_back(std::mem::take(bytes));
        }
    }
}

impl std::fmt::Debug for Decompressed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Decompressed::Borrowed(_) => "Borrowed",
            Decompressed::Owned(_) => "Owned",
            Decompressed::Spilled(_) => "Spilled",
        };
        write!(f, "Decompressed::{kind}({} bytes)", self.len())
    }
}

impl Deref for Decompressed<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Decompressed::Borrowed(bytes) => bytes,
            Decompressed::Owned(bytes) => bytes,
            Decompressed::Spilled(source) => source,
        }
    }
}

/// A decoder over the compressed bytes that can tell how much of them it has consumed.
enum Stream<'a> {
    Gzip(Box<flate2::bufread::MultiGzDecoder<&'a [u8]>>),
    Zstd(zstd::stream::read::Decoder<'static, &'a [u8]>),
}

impl Stream<'_> {
    fn remaining(&self) -> usize {
        match self {
            Stream::Gzip(d) => d.get_ref().len(),
            Stream::Zstd(d) => d.get_ref().len(),
        }
    }
}

impl Read for Stream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Gzip(d) => d.read(buf),
            Stream::Zstd(d) => d.read(buf),
        }
    }
}

/// The file's contents, decompressed when they are gzip or zstd data.
pub fn decompress<'a>(
    path: &Path,
    bytes: &'a [u8],
    limits: Limits,
) -> Result<Decompressed<'a>, InputError> {
    decompress_with(path, bytes, limits, SPILL_AT)
}

/// [`decompress`] with the spill size given (tests spill small outputs).
pub fn decompress_with<'a>(
    path: &Path,
    bytes: &'a [u8],
    limits: Limits,
    spill_at: usize,
) -> Result<Decompressed<'a>, InputError> {
    let invalid = |message: String| InputError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let stream = match Compression::of(bytes) {
        Compression::None => return Ok(Decompressed::Borrowed(bytes)),
        Compression::Gzip => match gzip_whole(bytes, limits, spill_at) {
            Some(inflated) => return Ok(Decompressed::Owned(inflated)),
            None => Stream::Gzip(Box::new(flate2::bufread::MultiGzDecoder::new(bytes))),
        },
        Compression::Zstd => Stream::Zstd(
            zstd::stream::read::Decoder::with_buffer(bytes)
                .map_err(|e| invalid(format!("cannot decompress: {e}")))?,
        ),
    };
    read_guarded(stream, bytes.len(), limits, spill_at).map_err(|e| match e {
        GuardError::Io(e) => invalid(format!("cannot decompress: {e}")),
        GuardError::Spill(e) => invalid(format!(
            "cannot write its decompressed contents to a temporary file: {e}"
        )),
        GuardError::TooLarge => invalid(format!(
            "decompresses to more than {} bytes; refusing to read it (possible decompression bomb)",
            limits.max_bytes
        )),
        GuardError::Ratio => invalid(format!(
            "decompresses to more than {} times its size; refusing to read it (possible decompression bomb)",
            limits.max_ratio
        )),
    })
}

/// The contents of a gzip file that is exactly one member, inflated in one call, when the size its
/// trailer states is one the stream would keep on the heap without any guard tripping; `None` leaves
/// the file to the stream (which reads every member, and names the error of a broken file).
///
/// libdeflate inflates faster than the stream, but reads only the first member and does not say where
/// it ends. It does check that member's own trailer: its CRC-32 and its size, which must be
/// the size stated at the end of the file. So when those four size bytes occur nowhere else in the
/// file, the first member's trailer is the file's last eight bytes, and the member is the whole file.
/// Headers with a CRC of their own (`FHCRC`) or reserved flags go to the stream, which judges them.
fn gzip_whole(bytes: &[u8], limits: Limits, spill_at: usize) -> Option<Vec<u8>> {
    const HEADER: usize = 10;
    const TRAILER: usize = 8;
    const FHCRC: u8 = 0x02;
    const RESERVED: u8 = 0xe0;
    const DEFLATE: u8 = 8;
    if bytes.len() < HEADER + TRAILER || bytes[2] != DEFLATE || bytes[3] & (FHCRC | RESERVED) != 0 {
        return None;
    }
    let size_bytes: [u8; 4] = bytes[bytes.len() - 4..].try_into().ok()?;
    let stated = u32::from_le_bytes(size_bytes);
    let fits = |bound: u64| u64::from(stated) <= bound;
    if !fits(limits.max_bytes) || !fits(limits.ratio_grace) || stated as usize > spill_at {
        return None;
    }
    let first_at = memchr::memmem::find(bytes, &size_bytes)?;
    if first_at != bytes.len() - 4 {
        return None;
    }
    let mut inflated = spare::take(stated as usize);
    let written = libdeflater::Decompressor::new()
        .gzip_decompress(bytes, &mut inflated)
        .ok()?;
    (written == inflated.len()).then_some(inflated)
}

enum GuardError {
    Io(std::io::Error),
    Spill(std::io::Error),
    TooLarge,
    Ratio,
}

/// The one bomb guard: judges `produced` bytes of output from `consumed` bytes of compressed input.
fn guard(limits: Limits, produced: u64, consumed: u64) -> Result<(), GuardError> {
    if produced > limits.max_bytes {
        return Err(GuardError::TooLarge);
    }
    if produced > limits.ratio_grace && produced > consumed.max(1).saturating_mul(limits.max_ratio)
    {
        return Err(GuardError::Ratio);
    }
    Ok(())
}

fn read_guarded(
    mut stream: Stream<'_>,
    compressed: usize,
    limits: Limits,
    spill_at: usize,
) -> Result<Decompressed<'static>, GuardError> {
    let mut heap: Vec<u8> = Vec::with_capacity(compressed.saturating_mul(8).min(spill_at));
    let mut spill: Option<std::fs::File> = None;
    let mut chunk = vec![0u8; CHUNK];
    let mut produced: u64 = 0;
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(GuardError::Io(e)),
        };
        produced += n as u64;
        guard(limits, produced, (compressed - stream.remaining()) as u64)?;
        match &mut spill {
            Some(file) => file.write_all(&chunk[..n]).map_err(GuardError::Spill)?,
            None if heap.len() + n > spill_at => {
                let mut file = tempfile::tempfile().map_err(GuardError::Spill)?;
                file.write_all(&heap).map_err(GuardError::Spill)?;
                file.write_all(&chunk[..n]).map_err(GuardError::Spill)?;
                heap = Vec::new();
                spill = Some(file);
            }
            None => heap.extend_from_slice(&chunk[..n]),
        }
    }
    match spill {
        None => Ok(Decompressed::Owned(heap)),
        Some(file) => Source::map_spilled(&file)
            .map(Decompressed::Spilled)
            .map_err(GuardError::Spill),
    }
}

/// Heap buffers of finished files, kept for the files that follow.
mod spare {
    use std::sync::Mutex;

    /// At most this many buffers wait: as many as files are read at once, so that every reader finds one
    /// and no more are ever allocated than are in use at the same time.
    fn kept() -> usize {
        rayon::current_num_threads()
    }

    /// Larger buffers are freed, so that what waits stays small beside the files being read.
    const LARGEST: usize = 16 << 20;

    static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

    /// A buffer of `len` bytes. A spare one is zeroed only past what it held before, as its bytes are
    /// already initialized; its old contents stay in it, so the caller must overwrite all of them.
    pub(super) fn take(len: usize) -> Vec<u8> {
        let spare = SPARE.lock().ok().and_then(|mut spares| spares.pop());
        match spare {
            Some(mut bytes) if bytes.capacity() >= len => {
                bytes.resize(len, 0);
                bytes
            }
            // Growing a spare would copy its old bytes; a fresh buffer with some room costs less, and
            // takes the next files of about this size without growing.
            _ => {
                let mut bytes = Vec::with_capacity(len.saturating_add(len / 8));
                bytes.resize(len, 0);
                bytes
            }
        }
    }

    pub(super) fn give_back(bytes: Vec<u8>) {
        if bytes.capacity() == 0 || bytes.capacity() > LARGEST {
            return;
        }
        if let Ok(mut spares) = SPARE.lock()
            && spares.len() < kept()
        {
            spares.push(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn gzip_and_zstd_round_trip() {
        let data = br#"{"resourceSpans": []}"#;
        let path = Path::new("x.json.gz");
        assert_eq!(
            &*decompress(path, &gzip(data), Limits::default()).unwrap(),
            data
        );
        let z = zstd::encode_all(&data[..], 3).unwrap();
        assert_eq!(&*decompress(path, &z, Limits::default()).unwrap(), data);
        assert!(matches!(
            decompress(path, data, Limits::default()).unwrap(),
            Decompressed::Borrowed(_)
        ));
    }

    #[test]
    fn inflated_files_of_any_order_of_sizes_keep_only_their_own_bytes() {
        // Buffers handed back are reused: a short file after a long one must not show the long one's
        // tail, and a long one after it must be whole.
        let path = Path::new("x.jsonl.gz");
        for len in [300_000, 1_000, 0, 300_001, 70_000, 299_999, 1] {
            let data: Vec<u8> = (0..len as u32)
                .map(|i| (i % 251) as u8 ^ (len % 7) as u8)
                .collect();
            let packed = gzip(&data);
            let out = decompress(path, &packed, Limits::default()).unwrap();
            assert!(matches!(out, Decompressed::Owned(_)));
            assert_eq!(&*out, &data[..], "{len} bytes");
        }
    }

    #[test]
    fn large_output_spills_to_a_mapped_file_with_the_same_bytes() {
        let data: Vec<u8> = (0..3_000_000u32).flat_map(u32::to_le_bytes).collect();
        for packed in [gzip(&data), zstd::encode_all(&data[..], 1).unwrap()] {
            let out =
                decompress_with(Path::new("x.gz"), &packed, Limits::default(), 1 << 20).unwrap();
            assert!(matches!(out, Decompressed::Spilled(_)));
            assert!(*out == data[..]);
        }
    }

    #[test]
    fn the_ratio_is_judged_on_the_input_consumed_so_far() {
        // 64 MiB of zeros after 200 KiB of noise: the whole file's ratio is under 200, but the zeros are
        // refused as soon as the output passes the grace size.
        let mut noise = 0x2545_f491_4f6c_dd1du64;
        let mut data: Vec<u8> = (0..200 * 1024)
            .map(|_| {
                noise ^= noise << 13;
                noise ^= noise >> 7;
                noise ^= noise << 17;
                noise as u8
            })
            .collect();
        data.resize(data.len() + (64 << 20), 0);
        let packed = gzip(&data);
        let limits = Limits {
            max_bytes: 1 << 30,
            ratio_grace: 8 << 20,
            max_ratio: 200,
        };
        assert!((data.len() as u64) < packed.len() as u64 * 400);
        let err = decompress(Path::new("z.gz"), &packed, limits)
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than 200 times its size"), "{err}");
    }

    #[test]
    fn bomb_is_refused_by_ratio() {
        let bomb = gzip(&vec![b' '; 4 << 20]);
        let limits = Limits {
            max_bytes: 1 << 30,
            ratio_grace: 1 << 20,
            max_ratio: 200,
        };
        let err = decompress(Path::new("bomb.gz"), &bomb, limits)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("bomb.gz: decompresses to more than 200 times its size"),
            "{err}"
        );
    }

    #[test]
    fn size_cap_is_enforced() {
        let data = gzip(&vec![b'x'; 2 << 20]);
        let limits = Limits {
            max_bytes: 1 << 20,
            ratio_grace: 1 << 30,
            max_ratio: 200,
        };
        let err = decompress(Path::new("big.zst"), &data, limits)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("decompresses to more than 1048576 bytes"),
            "{err}"
        );
    }

    /// The stream's reading of a gzip file: every member, or the error.
    fn streamed(bytes: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        flate2::bufread::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .ok()
            .map(|_| out)
    }

    #[test]
    fn one_member_is_inflated_whole_and_anything_else_is_left_to_the_stream() {
        let limits = Limits::default();
        let text = br#"{"resourceSpans": [{"scopeSpans": []}]}"#;
        let one = gzip(text);
        assert_eq!(
            gzip_whole(&one, limits, SPILL_AT).as_deref(),
            Some(&text[..])
        );
        // Two members of the same size, and even the same bytes: the first member's trailer matches the
        // size at the end of the file, but it is not the end of the file.
        let other = text.to_ascii_uppercase();
        for second in [gzip(&other), one.clone()] {
            let two = [one.clone(), second.clone()].concat();
            assert_eq!(gzip_whole(&two, limits, SPILL_AT), None);
            let whole = decompress(Path::new("two.gz"), &two, limits).unwrap();
            assert_eq!(Some(whole.to_vec()), streamed(&two));
            assert_eq!(whole.len(), 2 * text.len());
        }
        let mut trailing = one.clone();
        trailing.extend_from_slice(&one[one.len() - 8..]);
        assert_eq!(gzip_whole(&trailing, limits, SPILL_AT), None);
        // A header CRC, and sizes a guard or the spill would act on, are the stream's to judge.
        let mut with_header_crc = one.clone();
        with_header_crc[3] |= 0x02;
        assert_eq!(gzip_whole(&with_header_crc, limits, SPILL_AT), None);
        let small = Limits {
            ratio_grace: text.len() as u64 - 1,
            ..limits
        };
        assert_eq!(gzip_whole(&one, small, SPILL_AT), None);
        assert_eq!(gzip_whole(&one, limits, text.len() - 1), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// gzip files of one to four members (the first member repeated, at times), short texts over
        /// four letters so that members compress and sizes repeat.
        fn members() -> impl Strategy<Value = Vec<Vec<u8>>> {
            let member = prop::collection::vec((0u8..4).prop_map(|b| b + b'a'), 0..300);
            (prop::collection::vec(member, 1..4), any::<bool>()).prop_map(|(mut members, again)| {
                if again {
                    members.push(members[0].clone());
                }
                members
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2_000))]

            /// However the file's members are laid out, cut or altered, the one-call reading gives
            /// nothing or exactly what the stream gives; and an intact file reads the same either way.
            #[test]
            fn the_one_call_reading_agrees_with_the_stream(
                members in members(),
                alter in prop::option::of((any::<usize>(), 1u8..)),
                cut in prop::option::of(any::<usize>()),
            ) {
                let mut file: Vec<u8> = members.iter().flat_map(|m| gzip(m)).collect();
                if let Some((at, flip)) = alter {
                    let at = at % file.len();
                    file[at] ^= flip;
                }
                if let Some(cut) = cut {
                    file.truncate(cut % (file.len() + 1));
                }
                let whole = gzip_whole(&file, Limits::default(), SPILL_AT);
                if let Some(inflated) = &whole {
                    prop_assert_eq!(Some(inflated.clone()), streamed(&file));
                }
                if alter.is_none() && cut.is_none() {
                    let size_once = memchr::memmem::find_iter(&file, &file[file.len() - 4..]).count() == 1;
                    prop_assert_eq!(whole.is_some(), members.len() == 1 && size_once);
                    let read = decompress(Path::new("p.gz"), &file, Limits::default()).unwrap();
                    prop_assert_eq!(Some(read.to_vec()), streamed(&file));
                }
            }
        }
    }

    #[test]
    fn corrupt_stream_is_an_error() {
        let mut data = gzip(b"{\"a\": 1}");
        let len = data.len();
        data.truncate(len - 6);
        let err = decompress(Path::new("c.gz"), &data, Limits::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("c.gz: cannot decompress"), "{err}");
    }
}
