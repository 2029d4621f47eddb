//! Compressed inputs: gzip and zstd files are decompressed as a stream, under a size and ratio guard so
//! a decompression bomb is refused with a message instead of exhausting memory.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use crate::error::InputError;

/// How much a compressed file may expand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest decompressed size accepted per file.
    pub max_bytes: u64,
    /// Output below this size is never judged by its ratio (small files compress very well).
    pub ratio_grace: u64,
    /// Largest accepted ratio of decompressed to compressed size past the grace size.
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

/// The compression of a file's contents, told by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub fn of(bytes: &[u8]) -> Compression {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// The file's contents, decompressed when they are gzip or zstd data.
pub fn decompress<'a>(
    path: &Path,
    bytes: &'a [u8],
    limits: Limits,
) -> Result<Cow<'a, [u8]>, InputError> {
    let invalid = |message: String| InputError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let reader: Box<dyn Read + '_> = match Compression::of(bytes) {
        Compression::None => return Ok(Cow::Borrowed(bytes)),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(bytes)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(bytes)
                .map_err(|e| invalid(format!("cannot decompress: {e}")))?,
        ),
    };
    read_guarded(reader, bytes.len() as u64, limits).map(Cow::Owned).map_err(|e| match e {
        GuardError::Io(e) => invalid(format!("cannot decompress: {e}")),
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

enum GuardError {
    Io(std::io::Error),
    TooLarge,
    Ratio,
}

fn read_guarded(
    mut reader: impl Read,
    compressed: u64,
    limits: Limits,
) -> Result<Vec<u8>, GuardError> {
    let mut out: Vec<u8> =
        Vec::with_capacity((compressed.saturating_mul(8)).min(limits.ratio_grace) as usize);
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(GuardError::Io(e)),
        };
        out.extend_from_slice(&chunk[..n]);
        let total = out.len() as u64;
        if total > limits.max_bytes {
            return Err(GuardError::TooLarge);
        }
        if total > limits.ratio_grace && total > compressed.saturating_mul(limits.max_ratio) {
            return Err(GuardError::Ratio);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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
            Cow::Borrowed(_)
        ));
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
