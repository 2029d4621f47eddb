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
//! A folder of outputs ([`StagedDir`]) appears whole or not at all: when it does not exist yet, its
//! files are written into a temporary folder beside it (created exclusively, random name), which is
//! renamed into place once every file is written and synced. An existing folder (a rerun, or `.`)
//! cannot be swapped that way, so each file is staged as a temporary file beside its target and all
//! are renamed only once the last one is written: a write error (a full disk) leaves the folder as it
//! was, with no new file and no temporary one.
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
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// As [`write_atomic`], with the bytes written by `write` as it makes them (an output written from
/// the verdict spill, too large to hold whole): the temporary file is renamed into place only once
/// `write` succeeded.
///
/// # Errors
///
/// The target is not something that can be written safely, an I/O step failed, or `write` did.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<()> {
    write_beside(path, write)?.commit()
}

/// As [`write_atomic_with`], leaving the file written beside `path` until [`Unplaced::commit`] syncs
/// it and renames it into place: a large output is synced while the next one is written.
///
/// # Errors
///
/// The target is not something that can be written safely, an I/O step failed, or `write` did.
pub(crate) fn write_beside(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<Unplaced> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match fs::metadata(path) {
            Ok(target) if target.is_file() => stage(&fs::canonicalize(path)?, write),
            Ok(target) => write_special(path, &target, write).map(|()| Unplaced(None)),
            Err(_) => Err(io::Error::other(format!(
                "{} is a dangling symlink; refusing to write through it",
                path.display()
            ))),
        },
        Ok(meta) if meta.is_file() => stage(path, write),
        Ok(meta) => write_special(path, &meta, write).map(|()| Unplaced(None)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => stage(path, write),
        Err(e) => Err(e),
    }
}

/// Whether writing `path` with [`write_beside`], or as a [`StagedDir`], shows nothing before it is
/// put in place: its folder exists, and it is not a FIFO or device, which is written in place.
pub(crate) fn hidden_until_placed(path: &Path) -> bool {
    let folder_exists = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .is_none_or(Path::is_dir);
    let in_place = fs::metadata(path).is_ok_and(|meta| {
        let kind = meta.file_type();
        kind.is_fifo() || kind.is_char_device()
    });
    folder_exists && !in_place
}

/// A file written whole beside its target, not yet in place; dropped, it is removed. `None` for a
/// FIFO or device, written in place.
pub(crate) struct Unplaced(Option<(tempfile::NamedTempFile, PathBuf, PathBuf)>);

impl Unplaced {
    /// Syncs the file, renames it over its target, and syncs the directory so the rename is durable.
    ///
    /// # Errors
    ///
    /// An I/O step failed; the target is then as it was.
    pub(crate) fn commit(self) -> io::Result<()> {
        let Some((temp, path, dir)) = self.0 else {
            return Ok(());
        };
        temp.as_file().sync_all()?;
        temp.persist(&path).map_err(|e| e.error)?;
        File::open(&dir)?.sync_all()
    }
}

/// Writes a FIFO or character device in place; refuses every other non-regular target.
fn write_special(
    path: &Path,
    meta: &fs::Metadata,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_fifo() || kind.is_char_device() {
        let mut file = io::BufWriter::new(OpenOptions::new().write(true).open(path)?);
        write(&mut file)?;
        return file.flush();
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

/// Writes the regular file (or missing file) at `path` into an exclusive temp file beside it.
fn stage(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<Unplaced> {
    let dir = parent_of(path)?;
    let temp = temp_file_beside(path)?;
    let mut buffered = io::BufWriter::with_capacity(1 << 16, WritingAhead::new(temp.as_file()));
    write(&mut buffered)?;
    buffered.flush()?;
    drop(buffered);
    Ok(Unplaced(Some((temp, path.to_path_buf(), dir))))
}

/// A file whose pages are handed to the disk as they are written, a few megabytes at a time, rather
/// than all at its sync: the kernel starts writing back on its own only once a tenth of memory is
/// dirty, so a gigabyte output would otherwise wait for the disk in its sync, with nothing else left
/// to do. Starting the writeback never waits for it; the sync before the rename still does, and
/// reports its errors.
struct WritingAhead<'f> {
    file: &'f File,
    written: u64,
    handed: u64,
}

impl<'f> WritingAhead<'f> {
    /// Bytes written between two hand-overs.
    const STRIDE: u64 = 16 << 20;

    fn new(file: &'f File) -> Self {
        WritingAhead {
            file,
            written: 0,
            handed: 0,
        }
    }
}

impl Write for WritingAhead<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&mut self.file).write(buf)?;
        self.written += n as u64;
        if self.written - self.handed >= Self::STRIDE {
            start_writeback(self.file, self.handed, self.written - self.handed);
            self.handed = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&mut self.file).flush()
    }
}

/// Starts writing `len` bytes of `file` from `offset` back to the disk, without waiting. Best effort:
/// the sync that follows writes whatever this did not.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: the descriptor is open for the whole call (`file` is borrowed), and
    // `sync_file_range` only reads its integer arguments.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

/// A folder of output files that appears whole or not at all (see the module doc). Files are added
/// with [`StagedDir::write`] or [`StagedDir::write_with`], and nothing is visible at the destination
/// until [`StagedDir::commit`]; dropping it uncommitted removes everything it staged.
pub(crate) struct StagedDir {
    dest: PathBuf,
    staging: Staging,
}

enum Staging {
    /// The destination does not exist: a temporary folder beside it, renamed into place.
    Fresh(tempfile::TempDir),
    /// The destination is an existing folder: each staged file and the path it replaces.
    InPlace(Vec<(tempfile::TempPath, PathBuf)>),
}

impl StagedDir {
    /// Starts the folder `dest`, creating its parent folders.
    ///
    /// # Errors
    ///
    /// `dest` exists and is not a folder (or is a dangling symlink), or the temporary folder cannot be
    /// created.
    pub(crate) fn new(dest: &Path) -> io::Result<StagedDir> {
        match fs::metadata(dest) {
            Ok(meta) if meta.is_dir() => {
                return Ok(StagedDir {
                    dest: dest.to_path_buf(),
                    staging: Staging::InPlace(Vec::new()),
                });
            }
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} exists and is not a directory",
                    dest.display()
                )));
            }
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            Err(_) if fs::symlink_metadata(dest).is_ok() => {
                return Err(io::Error::other(format!(
                    "{} is a dangling symlink; refusing to write through it",
                    dest.display()
                )));
            }
            Err(_) => {}
        }
        let parent = parent_of(dest)?;
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a folder path"))?;
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        // 0o777 before the umask, as a plain create gives.
        let temp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .permissions(fs::Permissions::from_mode(0o777))
            .tempdir_in(&parent)?;
        Ok(StagedDir {
            dest: dest.to_path_buf(),
            staging: Staging::Fresh(temp),
        })
    }

    /// Stages the file `name` of the folder with `bytes`.
    ///
    /// # Errors
    ///
    /// As [`StagedDir::write_with`].
    pub(crate) fn write(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.write_with(name, |w| w.write_all(bytes))
    }

    /// Stages the file `name` of the folder with what `fill` writes (buffered), then syncs it.
    ///
    /// # Errors
    ///
    /// The target in an existing folder is not something that can be replaced safely (a directory, a
    /// dangling symlink, a device), `fill` failed, or an I/O step failed.
    pub(crate) fn write_with(
        &mut self,
        name: &str,
        fill: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
    ) -> io::Result<()> {
        let (file, staged) = match &mut self.staging {
            Staging::Fresh(temp) => (File::create_new(temp.path().join(name))?, None),
            Staging::InPlace(staged) => {
                let target = replaceable(&self.dest.join(name))?;
                let temp = temp_file_beside(&target)?;
                let (file, path) = temp.into_parts();
                (file, Some((staged, path, target)))
            }
        };
        let mut writer = io::BufWriter::new(WritingAhead::new(&file));
        fill(&mut writer)?;
        writer.flush()?;
        drop(writer);
        file.sync_all()?;
        if let Some((staged, path, target)) = staged {
            staged.push((path, target));
        }
        Ok(())
    }

    /// Moves every staged file into place at once (a fresh folder) or one rename each (an existing
    /// folder), and makes the renames durable.
    ///
    /// # Errors
    ///
    /// A rename or sync failed.
    pub(crate) fn commit(self) -> io::Result<()> {
        match self.staging {
            Staging::Fresh(temp) => {
                File::open(temp.path())?.sync_all()?;
                let path = temp.keep();
                if let Err(e) = fs::rename(&path, &self.dest) {
                    let _ = fs::remove_dir_all(&path);
                    return Err(e);
                }
                File::open(parent_of(&self.dest)?)?.sync_all()
            }
            Staging::InPlace(staged) => {
                let mut dirs: Vec<PathBuf> = Vec::new();
                for (temp, target) in staged {
                    temp.persist(&target).map_err(|e| e.error)?;
                    let dir = parent_of(&target)?;
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
                for dir in dirs {
                    File::open(dir)?.sync_all()?;
                }
                Ok(())
            }
        }
    }
}

/// The folder a path's file sits in (`.` for a bare name), created if missing.
fn parent_of(path: &Path) -> io::Result<PathBuf> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => {
            fs::create_dir_all(parent)?;
            Ok(parent.to_path_buf())
        }
        None => Ok(PathBuf::from(".")),
    }
}

/// The regular file a staged file will replace: `path` itself when it is missing or a regular file,
/// the file a symlink points to (the link stays, as [`write_atomic`] keeps it).
fn replaceable(path: &Path) -> io::Result<PathBuf> {
    let refuse = |what: &str| {
        Err(io::Error::other(format!(
            "{} is {what}; refusing to write it",
            path.display()
        )))
    };
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(path.to_path_buf()),
        Err(e) => Err(e),
        Ok(meta) if meta.is_file() => Ok(path.to_path_buf()),
        Ok(meta) if meta.file_type().is_symlink() => match fs::metadata(path) {
            Ok(target) if target.is_file() => fs::canonicalize(path),
            Ok(_) => refuse("a symlink to something other than a regular file"),
            Err(_) => refuse("a dangling symlink"),
        },
        Ok(meta) if meta.is_dir() => refuse("a directory"),
        Ok(_) => refuse("not a regular file"),
    }
}

/// An exclusive temporary file in the folder of `target`: a random name, and 0o666 before the umask,
/// as a plain create gives (reports are not secrets of their own).
fn temp_file_beside(target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = parent_of(target)?;
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(&dir)
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
    fn a_file_handed_to_the_disk_as_it_is_written_has_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        // Past two hand-overs, in uneven writes.
        let bytes: Vec<u8> = (0..(2 * WritingAhead::STRIDE + 12_345))
            .map(|i| (i % 251) as u8)
            .collect();
        write_atomic_with(&path, |out| {
            bytes
                .chunks(1_000_003)
                .try_for_each(|chunk| out.write_all(chunk))
        })
        .unwrap();
        assert!(fs::read(&path).unwrap() == bytes);
    }

    #[test]
    fn only_a_file_in_an_existing_folder_is_hidden_until_placed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(hidden_until_placed(&dir.path().join("new.json")));
        fs::write(dir.path().join("old.json"), "{}").unwrap();
        assert!(hidden_until_placed(&dir.path().join("old.json")));
        // Writing it would create the folder, and a device is written in place.
        assert!(!hidden_until_placed(&dir.path().join("sub/new.json")));
        assert!(!hidden_until_placed(Path::new("/dev/null")));
        assert!(hidden_until_placed(Path::new("relative.json")));
    }

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
    fn a_streamed_write_that_fails_leaves_the_target_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("events.json");
        fs::write(&target, "old").unwrap();
        let err = write_atomic_with(&target, |w| failing_write(w)).unwrap_err();
        assert!(err.to_string().contains("No space"), "{err}");
        assert_eq!(names(dir.path()), ["events.json"]);
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        write_atomic_with(&target, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        write_atomic_with(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
        let err = write_atomic_with(dir.path(), |w| w.write_all(b"x")).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
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

    /// The names in a folder, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn failing_write(w: &mut (dyn Write + Send)) -> io::Result<()> {
        w.write_all(b"half")?;
        Err(io::Error::other("No space left on device"))
    }

    #[test]
    fn a_new_folder_appears_whole_or_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("nested").join("audit");
        let mut staged = StagedDir::new(&dest).unwrap();
        staged.write("a.json", b"1").unwrap();
        assert!(!dest.exists(), "nothing shows before the commit");
        let err = staged.write_with("b.json", failing_write).unwrap_err();
        assert!(err.to_string().contains("No space"), "{err}");
        drop(staged);
        assert!(!dest.exists());
        assert!(
            names(&root.path().join("nested")).is_empty(),
            "no temp folder is left"
        );

        let mut staged = StagedDir::new(&dest).unwrap();
        staged.write("a.json", b"1").unwrap();
        staged.write_with("b.json", |w| w.write_all(b"2")).unwrap();
        staged.commit().unwrap();
        assert_eq!(names(&dest), ["a.json", "b.json"]);
        assert_eq!(fs::read_to_string(dest.join("b.json")).unwrap(), "2");
        assert_eq!(names(root.path().join("nested").as_path()), ["audit"]);
        // The mode a plain create gives, not a temporary folder's private one.
        let plain = root.path().join("plain");
        fs::create_dir(&plain).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&dest), mode(&plain));
    }

    #[test]
    fn an_existing_folder_keeps_its_files_until_every_new_one_is_written() {
        let dest = tempfile::tempdir().unwrap();
        fs::write(dest.path().join("a.json"), "old a").unwrap();
        fs::write(dest.path().join("b.json"), "old b").unwrap();
        fs::write(dest.path().join("notes.txt"), "mine").unwrap();
        let mut staged = StagedDir::new(dest.path()).unwrap();
        staged.write("a.json", b"new a").unwrap();
        assert!(staged.write_with("b.json", failing_write).is_err());
        drop(staged);
        assert_eq!(names(dest.path()), ["a.json", "b.json", "notes.txt"]);
        assert_eq!(
            fs::read_to_string(dest.path().join("a.json")).unwrap(),
            "old a"
        );

        // A target that cannot be replaced stops the folder before any file is renamed.
        fs::create_dir(dest.path().join("c.json")).unwrap();
        let mut staged = StagedDir::new(dest.path()).unwrap();
        staged.write("a.json", b"new a").unwrap();
        let err = staged.write("c.json", b"c").unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        drop(staged);
        assert_eq!(
            names(dest.path()),
            ["a.json", "b.json", "c.json", "notes.txt"]
        );
        assert_eq!(
            fs::read_to_string(dest.path().join("a.json")).unwrap(),
            "old a"
        );

        let mut staged = StagedDir::new(dest.path()).unwrap();
        staged.write("a.json", b"new a").unwrap();
        staged.write("b.json", b"new b").unwrap();
        staged.commit().unwrap();
        assert_eq!(
            names(dest.path()),
            ["a.json", "b.json", "c.json", "notes.txt"]
        );
        assert_eq!(
            fs::read_to_string(dest.path().join("b.json")).unwrap(),
            "new b"
        );
        assert_eq!(
            fs::read_to_string(dest.path().join("notes.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_folder_path_that_is_a_file_or_a_dangling_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        let err = StagedDir::new(&file).err().unwrap();
        assert!(err.to_string().contains("is not a directory"), "{err}");
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let err = StagedDir::new(&link).err().unwrap();
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
