//! Writing output files without destroying anything on the way.
//!
//! - A regular file (or a missing one) is replaced atomically: the bytes go to a temporary file created
//!   exclusively (`O_EXCL`, random name) in the target's directory, which is synced, renamed over the
//!   target, and the directory synced after the rename. A planted symlink at a guessable temp name can
//!   therefore never redirect the write.
//! - A symlink to a regular file replaces the file it points to; the link itself stays.
//! - A FIFO or character device (`/dev/null`, `/dev/stdout`) is written in place: renaming over it would
//!   replace the node with a regular file.
//! - Anything else (a directory, a block device, a socket, a dangling symlink) is refused.
//!
//! [`refuse_inputs`] keeps an output from naming one of the run's inputs, compared by device and inode so
//! that symlinks and `./` spellings are caught too.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` as the module doc describes. Parent directories are created.
///
/// # Errors
///
/// The target is not something that can be written safely, or an I/O step failed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match fs::metadata(path) {
            Ok(target) if target.is_file() => replace(&fs::canonicalize(path)?, bytes),
            Ok(target) => write_special(path, &target, bytes),
            Err(_) => Err(io::Error::other(format!(
                "{} is a dangling symlink; refusing to write through it",
                path.display()
            ))),
        },
        Ok(meta) if meta.is_file() => replace(path, bytes),
        Ok(meta) => write_special(path, &meta, bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => replace(path, bytes),
        Err(e) => Err(e),
    }
}

/// Writes a FIFO or character device in place; refuses every other non-regular target.
fn write_special(path: &Path, meta: &fs::Metadata, bytes: &[u8]) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_fifo() || kind.is_char_device() {
        let mut file = OpenOptions::new().write(true).open(path)?;
        return file.write_all(bytes);
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(io::Error::other(format!(
        "{} is {what}; refusing to write it",
        path.display()
    )))
}

/// Replaces the regular file (or missing file) at `path` through an exclusive temp file.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => {
            fs::create_dir_all(parent)?;
            parent.to_path_buf()
        }
        None => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    // 0o666 before the umask, as a plain create gives: reports are not secrets of their own.
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(&dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    // The rename is durable only once the directory entry is.
    File::open(&dir)?.sync_all()
}

/// Device and inode of an existing file, following symlinks.
fn identity(path: &Path) -> Option<(u64, u64)> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Refuses an output that is the same file as an input. `outputs` are the paths about to be written
/// (with the flag that named each); `inputs` every file the run reads. Outputs that do not exist yet
/// cannot be an input.
///
/// # Errors
///
/// A one-line message naming the output and the input it would overwrite.
pub(crate) fn refuse_inputs(outputs: &[(&str, &Path)], inputs: &[PathBuf]) -> Result<(), String> {
    let wanted: Vec<(&str, &Path, (u64, u64))> = outputs
        .iter()
        .filter_map(|(flag, path)| identity(path).map(|id| (*flag, *path, id)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    for input in inputs {
        let Some(id) = identity(input) else { continue };
        if let Some((flag, path, _)) = wanted.iter().find(|(_, _, out)| *out == id) {
            return Err(format!(
                "{flag} {} is the input {}; refusing to overwrite an input",
                crate::error::display_path(path),
                crate::error::display_path(input)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_a_regular_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        fs::write(&target, "old").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the target is left");
    }

    #[test]
    fn a_planted_symlink_at_the_old_temp_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let target = dir.path().join("out.json");
        // The name the old writer used: predictable from the process id.
        let planted = dir
            .path()
            .join(format!(".out.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let planted2 = dir
            .path()
            .join(format!("out.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted2).unwrap();
        write_atomic(&target, b"report").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(fs::read_to_string(&target).unwrap(), "report");
    }

    #[test]
    fn a_symlink_to_a_file_writes_the_file_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn dev_null_stays_a_device() {
        write_atomic(Path::new("/dev/null"), b"x").unwrap();
        let meta = fs::metadata("/dev/null").unwrap();
        assert!(meta.file_type().is_char_device());
    }

    #[test]
    fn directories_and_dangling_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let err = write_atomic(&link, b"x").unwrap_err();
        assert!(err.to_string().contains("dangling"), "{err}");
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_in_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        fs::write(&input, "{}").unwrap();
        let link = dir.path().join("alias.json");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let dotted = dir.path().join(".").join("in.json");
        for out in [&input, &link, &dotted] {
            let err = refuse_inputs(&[("--json", out)], std::slice::from_ref(&input)).unwrap_err();
            assert!(err.contains("refusing to overwrite an input"), "{err}");
        }
        let other = dir.path().join("out.json");
        fs::write(&other, "{}").unwrap();
        assert!(refuse_inputs(&[("--json", &other)], std::slice::from_ref(&input)).is_ok());
        let missing = dir.path().join("missing.json");
        assert!(refuse_inputs(&[("--json", &missing)], &[input]).is_ok());
    }
}
