//! From command-line paths to input files: files as given, directories walked recursively in sorted
//! order (hidden entries skipped), and glob patterns (`*`, `?`, `[…]` per path component) expanded over
//! directory listings in sorted order.
//!
//! Directory walks follow symlinks (a linked run folder is common) with `walkdir`, which detects a link
//! back to an ancestor; such a loop is not descended again. A file reached twice during walks (a
//! self-symlink, a link to a sibling) is read once, compared by device and inode. A directory that holds
//! no visible file is an error: a gate that read nothing must not pass.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::names::{TRACE_SUFFIXES_TEXT, has_wildcard, is_trace_name, matches};
use super::partition::TimeWindow;
use crate::error::InputError;

/// A run's settings for reaching its inputs, resolved once from the command line and given to every
/// listing of them (and to every upload or download of a partial): the same paths expand alike in
/// every part of one run, and two runs in one process each keep their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// `--since`/`--until`: the time partitions read (every file when unbounded).
    pub window: TimeWindow,
    /// `--s3-endpoint`: where S3-compatible stores are reached; it overrides `AWS_ENDPOINT_URL`.
    pub s3_endpoint: Option<String>,
}

/// The files behind the given paths. A path that does not exist and is not a pattern matching something
/// is an error.
pub fn expand_paths(paths: &[PathBuf], sources: &Sources) -> Result<Vec<PathBuf>, InputError> {
    expand_inputs(paths, sources).map(|inputs| inputs.files)
}

/// The input files of a run, and what the directory walks left out.
#[derive(Debug, Default)]
pub struct Inputs {
    /// The files to read, in walk order (sorted within each directory).
    pub files: Vec<PathBuf>,
    /// For each file: found by walking a directory (not named, nor matched by a pattern).
    pub walked: Vec<bool>,
    /// Files inside walked directories whose names are not those of trace files.
    pub skipped: Vec<PathBuf>,
    /// Files left out because their time partition is outside `--since`/`--until`.
    pub outside_window: usize,
    /// Files read under `--since`/`--until` although their paths carry no time partition.
    pub untimed: usize,
}

impl Inputs {
    /// The one note naming the files the walks skipped, if any.
    pub fn skipped_note(&self) -> Option<String> {
        let window = (self.outside_window + self.untimed > 0).then(|| {
            format!(
                "note: --since/--until left out {} file(s) by their time partition (year=/month=/day=/hour=/minute=) and read {} whose path has none",
                self.outside_window, self.untimed
            )
        });
        if self.skipped.is_empty() {
            return window;
        }
        let names: Vec<String> = self
            .skipped
            .iter()
            .map(|p| crate::error::display_path(p))
            .collect();
        let note = format!(
            "note: skipped {} file(s) in the folders given that are not trace files ({}): {}",
            names.len(),
            TRACE_SUFFIXES_TEXT,
            names.join(", ")
        );
        Some(match window {
            Some(window) => format!("{note}\n{window}"),
            None => note,
        })
    }
}

/// The input files behind the given paths, with what the directory walks skipped.
pub fn expand_inputs(paths: &[PathBuf], sources: &Sources) -> Result<Inputs, InputError> {
    let mut files = Files::default();
    for path in paths {
        if super::remote::is_url(path) {
            let expansion = super::remote::expand(path, sources.s3_endpoint.as_deref())?;
            if expansion.objects.is_empty() {
                return Err(InputError::Usage(format!(
                    "no trace files in {} ({TRACE_SUFFIXES_TEXT}; hidden keys are skipped, and so were {} object(s) of other names)",
                    crate::error::display_path(path),
                    expansion.skipped.len()
                )));
            }
            for object in expansion.objects {
                files.list.push(object.url);
                files.from_walk.push(object.walked);
            }
            files.skipped.extend(expansion.skipped);
        } else if std::fs::metadata(path).is_err() && is_pattern(path) {
            let matches = glob(path)?;
            if matches.is_empty() {
                return Err(InputError::NotFound(path.clone()));
            }
            for m in matches {
                add_path(&m, &mut files)?;
            }
        } else {
            add_path(path, &mut files)?;
        }
    }
    let mut inputs = Inputs {
        files: files.list,
        walked: files.from_walk,
        skipped: files.skipped,
        ..Inputs::default()
    };
    if sources.window.is_bounded() {
        select_partitions(&mut inputs, sources.window)?;
    }
    Ok(inputs)
}

/// Keeps the files whose time partition meets `window`, and those whose path has no time.
fn select_partitions(inputs: &mut Inputs, window: TimeWindow) -> Result<(), InputError> {
    let mut kept = Vec::with_capacity(inputs.files.len());
    let mut walked = Vec::with_capacity(inputs.files.len());
    for (file, from_walk) in inputs.files.drain(..).zip(inputs.walked.drain(..)) {
        match super::partition::span(&file) {
            Some(span) if !window.meets(span) => {
                inputs.outside_window += 1;
                continue;
            }
            Some(_) => {}
            None => inputs.untimed += 1,
        }
        kept.push(file);
        walked.push(from_walk);
    }
    if kept.is_empty() {
        return Err(InputError::Usage(format!(
            "no trace files in the --since/--until window: {} file(s) had time partitions outside it",
            inputs.outside_window
        )));
    }
    inputs.files = kept;
    inputs.walked = walked;
    Ok(())
}

/// The files found so far, and the identities of those found by walking.
#[derive(Default)]
struct Files {
    list: Vec<PathBuf>,
    from_walk: Vec<bool>,
    skipped: Vec<PathBuf>,
    walked: HashSet<(u64, u64)>,
}

fn add_path(path: &Path, files: &mut Files) -> Result<(), InputError> {
    if super::stream::is_stdin(path) {
        files.list.push(path.to_path_buf());
        files.from_walk.push(false);
        return Ok(());
    }
    let meta = std::fs::metadata(path).map_err(|_| InputError::NotFound(path.to_path_buf()))?;
    if meta.is_dir() {
        let before = files.list.len();
        let skipped_before = files.skipped.len();
        walk(path, files)?;
        if files.list.len() == before {
            let skipped = files.skipped.len() - skipped_before;
            let others = if skipped > 0 {
                format!(", nor {skipped} file(s) of other names")
            } else {
                String::new()
            };
            return Err(InputError::Usage(format!(
                "no trace files in {} ({TRACE_SUFFIXES_TEXT}; hidden files and folders are skipped{others})",
                crate::error::display_path(path)
            )));
        }
        Ok(())
    } else if meta.is_file() || super::stream::is_stream_kind(&meta) {
        // Named on the command line: read as often as named, as 0.4.1 does, whatever its name. A FIFO
        // or device named so is read as a stream (`ingest::stream`); a walk reads regular files only.
        files.list.push(path.to_path_buf());
        files.from_walk.push(false);
        Ok(())
    } else {
        Err(not_regular(path, &meta))
    }
}

/// The error for an input that exists but is not a regular file or directory.
pub(crate) fn not_regular(path: &Path, meta: &std::fs::Metadata) -> InputError {
    let what = crate::sidefile::special_kind(meta);
    InputError::Invalid {
        path: path.to_path_buf(),
        message: format!("not a regular file ({what}); give a trace file or a directory"),
    }
}

fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| InputError::Read {
            path: dir.to_path_buf(),
            source,
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    Ok(entries)
}

fn walk(dir: &Path, files: &mut Files) -> Result<(), InputError> {
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !is_hidden(&e.file_name().to_string_lossy()));
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            // A link back to an ancestor: its files are walked already.
            Err(e) if e.loop_ancestor().is_some() => continue,
            // A dangling link inside a folder is skipped, as before.
            Err(e)
                if e.depth() > 0
                    && e.io_error()
                        .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) =>
            {
                continue;
            }
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_path_buf();
                return Err(InputError::Read {
                    path,
                    source: e.into(),
                });
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if !is_trace_name(&entry.file_name().to_string_lossy()) {
            files.skipped.push(entry.into_path());
            continue;
        }
        if files.walked.insert((meta.dev(), meta.ino())) {
            files.list.push(entry.into_path());
            files.from_walk.push(true);
        }
    }
    Ok(())
}

fn is_pattern(path: &Path) -> bool {
    has_wildcard(&path.to_string_lossy())
}

/// The existing paths a pattern matches, in sorted order per component.
fn glob(pattern: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut current: Vec<PathBuf> = vec![PathBuf::new()];
    for component in pattern.components() {
        let part = match component {
            Component::Normal(p) => p.to_string_lossy().into_owned(),
            other => {
                let piece = other.as_os_str();
                current = current.into_iter().map(|p| p.join(piece)).collect();
                continue;
            }
        };
        let mut next = Vec::new();
        for base in current {
            if !has_wildcard(&part) {
                next.push(base.join(&part));
                continue;
            }
            let dir = if base.as_os_str().is_empty() {
                Path::new(".")
            } else {
                base.as_path()
            };
            if !dir.is_dir() {
                continue;
            }
            for entry in sorted_entries(dir)? {
                let Some(name) = entry.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                    continue;
                };
                if is_hidden(&name) && !part.starts_with('.') {
                    continue;
                }
                if matches(&part, &name) {
                    next.push(base.join(&name));
                }
            }
        }
        current = next;
    }
    Ok(current.into_iter().filter(|p| p.exists()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_file_names() {
        for name in [
            "a.json",
            "a.JSONL",
            "a.ndjson",
            "run.traj",
            "a.json.gz",
            "a.jsonl.zst",
        ] {
            assert!(is_trace_name(name), "{name}");
        }
        for name in [
            "README.md",
            "LICENSE",
            "SOURCE.txt",
            "a.gz",
            ".json",
            "a.json.bak",
            "a.py",
        ] {
            assert!(!is_trace_name(name), "{name}");
        }
    }

    #[test]
    fn each_listing_selects_partitions_by_its_own_window() {
        let dir = tempfile::tempdir().unwrap();
        for day in ["01", "02", "03"] {
            let folder = dir.path().join(format!("year=2026/month=11/day={day}"));
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("traces.json"), "{}").unwrap();
        }
        std::fs::write(dir.path().join("untimed.json"), "{}").unwrap();
        let window = |since: &str, until: &str| Sources {
            window: TimeWindow {
                since: super::super::partition::parse_time(since).ok(),
                until: super::super::partition::parse_time(until).ok(),
            },
            s3_endpoint: None,
        };
        let days = |sources: &Sources| {
            let inputs = expand_inputs(&[dir.path().to_path_buf()], sources).unwrap();
            let files: Vec<String> = inputs
                .files
                .iter()
                .map(|p| {
                    p.strip_prefix(dir.path())
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            (files, inputs.outside_window, inputs.untimed)
        };
        let first = days(&window("2026-11-01", "2026-11-02"));
        assert_eq!(
            first,
            (
                vec![
                    "untimed.json".to_string(),
                    "year=2026/month=11/day=01/traces.json".to_string()
                ],
                2,
                1
            )
        );
        // A second listing in the same process with another window gets that window's files.
        let second = days(&window("2026-11-03", "2026-11-04"));
        assert_eq!(second.0[1], "year=2026/month=11/day=03/traces.json");
        assert_eq!((second.1, second.2), (2, 1));
        let unbounded = days(&Sources::default());
        assert_eq!((unbounded.0.len(), unbounded.1, unbounded.2), (4, 0, 0));
    }

    #[test]
    fn shell_patterns() {
        assert!(matches("*.json", "a.json"));
        assert!(matches("*.json*", "a.json.gz"));
        assert!(!matches("*.json", "a.json.gz"));
        assert!(matches("run-?.jsonl", "run-1.jsonl"));
        assert!(!matches("run-?.jsonl", "run-10.jsonl"));
        assert!(matches("run-[0-9]*", "run-42"));
        assert!(!matches("run-[!0-9]*", "run-42"));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(matches("[x", "[x"));
    }

    #[test]
    fn globs_expand_in_sorted_order_and_walk_directories() {
        let dir = std::env::temp_dir().join(format!("faultgate-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("b/sub")).unwrap();
        for f in [
            "b.json",
            "a.json",
            "c.txt",
            "b/sub/x.json",
            "b/.hidden.json",
        ] {
            std::fs::write(dir.join(f), "{}").unwrap();
        }
        let got =
            expand_paths(&[dir.join("*.json"), dir.join("[b]")], &Sources::default()).unwrap();
        let rel: Vec<String> = got
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(rel, ["a.json", "b.json", "b/sub/x.json"]);
        // A walk reads trace files only; a file named or matched is read whatever its name.
        std::fs::write(dir.join("b/README.md"), "# notes").unwrap();
        std::fs::write(dir.join("b/sub/run.jsonl.ZST"), "").unwrap();
        let inputs =
            expand_inputs(&[dir.join("b"), dir.join("c.txt")], &Sources::default()).unwrap();
        let rel: Vec<String> = inputs
            .files
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(rel, ["b/sub/run.jsonl.ZST", "b/sub/x.json", "c.txt"]);
        assert_eq!(inputs.walked, [true, true, false]);
        assert_eq!(inputs.skipped, [dir.join("b/README.md")]);
        assert!(inputs.skipped_note().unwrap().contains("README.md"));
        assert!(matches!(
            expand_paths(&[dir.join("*.nope")], &Sources::default()),
            Err(InputError::NotFound(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
