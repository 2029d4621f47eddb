//! Reading the side files a run names next to its traces: policy, band, golden, outcomes, labels,
//! workflow spec, trajectories, judged checks, the judge's replay file and cache entries.
//!
//! Each is read whole, so only a regular file is accepted: a FIFO may never open or never end and
//! `/dev/zero` never ends, so they are refused with what they are (exit 2 at the CLI) before they are
//! opened. A regular file is read up to [`MAX_BYTES`] and refused past it, so a runaway file fails with a
//! message instead of exhausting memory.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The largest side file read.
pub(crate) const MAX_BYTES: u64 = 1 << 30;

/// What a non-regular file is, for messages: "a FIFO", "a character device", ...
pub(crate) fn special_kind(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

fn not_regular(meta: &Metadata) -> io::Error {
    io::Error::other(format!("not a regular file ({})", special_kind(meta)))
}

/// The bytes of a side file, refusing anything but a regular file of at most [`MAX_BYTES`].
///
/// # Errors
///
/// The open or read error (a missing file keeps [`io::ErrorKind::NotFound`]), "not a regular file (a
/// FIFO)" and the like, or "larger than N bytes".
pub(crate) fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_capped(path, MAX_BYTES)
}

/// [`read`] with the size cap given.
pub(crate) fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    // Checked before opening: opening a FIFO for reading blocks until a writer appears.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = File::open(path)?;
    // Checked again on the open file, in case the path was swapped in between.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let too_large = || io::Error::other(format!("larger than {cap} bytes; refusing to read it"));
    if meta.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read (or a /proc file that reports no size) stops at the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
///
/// # Errors
///
/// As [`read`], and [`io::ErrorKind::InvalidData`] for text that is not UTF-8.
pub(crate) fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_with_what_they_are() {
        for (path, kind) in [
            ("/dev/null", "a character device"),
            ("/dev/zero", "a character device"),
            ("/", "a directory"),
        ] {
            let err = read(Path::new(path)).unwrap_err().to_string();
            assert_eq!(err, format!("not a regular file ({kind})"), "{path}");
        }
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Would block forever if the FIFO were opened.
        assert_eq!(
            read(&fifo).unwrap_err().to_string(),
            "not a regular file (a FIFO)"
        );
    }

    #[test]
    fn a_regular_file_is_read_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        assert_eq!(read_capped(&path, 8).unwrap(), b"{\"a\": 1}");
        let err = read_capped(&path, 7).unwrap_err().to_string();
        assert_eq!(err, "larger than 7 bytes; refusing to read it");
        let missing = read(&dir.path().join("nope")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_to_string(&path).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
