//! Errors of the library, one enum for input problems the user can fix.
//!
//! Every variant's text is the message printed after `faultgate: ` (exit 2). Messages are lowercase,
//! name the file, and fit on one line.

use std::path::{Path, PathBuf};

/// An input the tool cannot use.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The named file or directory does not exist.
    #[error("no such file: {}", display_path(.0))]
    NotFound(PathBuf),
    /// The file exists but could not be read.
    #[error("cannot read {}: {source}", display_path(.path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// A trace file whose JSON breaks off or goes wrong after a valid start.
    #[error("cannot parse {}: {message} (byte {offset})", display_path(.path))]
    Json {
        /// The file.
        path: PathBuf,
        /// Byte offset of the error in the file's (decompressed) contents.
        offset: usize,
        /// The parser's message.
        message: String,
    },
    /// A file whose first byte already is not JSON (prose, a licence): no trace file at all.
    #[error("cannot parse {}: {message} (byte {offset})", display_path(.path))]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Byte offset of the error in the file's (decompressed) contents.
        offset: usize,
        /// The parser's message.
        message: String,
    },
    /// A trace file of a known format whose contents do not fit it.
    #[error("{}: {message}", display_path(.path))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A trace file with nothing in it but whitespace (an export that was cut off, or never written).
    #[error(
        "cannot parse {}: the file is empty (pass --skip-bad-input to skip files that cannot be read)",
        display_path(.0)
    )]
    Empty(PathBuf),
    /// A JSON document that no trace format recognises (or that a forced format does not fit).
    #[error("{}: {message}", display_path(.path))]
    Unrecognised {
        /// The file.
        path: PathBuf,
        /// Why no format fits.
        message: String,
    },
    /// The file or directory held no trace.
    #[error("no traces found in {}", display_path(.0))]
    NoTraces(PathBuf),
    /// The command line asks for something that cannot be done; the text says what.
    #[error("{0}")]
    Usage(String),
}

impl InputError {
    /// Returns true if and only if the file is not a trace file at all (no JSON from its first byte,
    /// JSON of no trace format, no traces), as opposed to a broken trace file (JSON that breaks off
    /// later), which a gate must not skip: a directory walk skips the former only.
    pub fn is_not_traces(&self) -> bool {
        matches!(
            self,
            InputError::NotJson { .. } | InputError::Unrecognised { .. } | InputError::NoTraces(_)
        )
    }
}

impl InputError {
    /// The file and, briefly, why it holds no traces (for the note on skipped files).
    pub fn short_reason(&self) -> String {
        match self {
            InputError::NotJson { path, .. } => format!("{} (not JSON)", display_path(path)),
            InputError::Unrecognised { path, .. } => {
                format!("{} (no trace format)", display_path(path))
            }
            InputError::NoTraces(path) => format!("{} (no traces)", display_path(path)),
            other => other.to_string(),
        }
    }
}

impl InputError {
    /// The input warning for a file `--skip-bad-input` leaves out because of this error: the file, the
    /// byte offset when the error has one, and the reason.
    pub fn skip_warning(&self) -> String {
        match self {
            InputError::Json {
                path,
                offset,
                message,
            }
            | InputError::NotJson {
                path,
                offset,
                message,
            } => format!("skipped {} at byte {offset}: {message}", display_path(path)),
            InputError::Invalid { path, message } | InputError::Unrecognised { path, message } => {
                format!("skipped {}: {message}", display_path(path))
            }
            InputError::Empty(path) => format!("skipped {}: the file is empty", display_path(path)),
            InputError::Read { path, source } => {
                format!("skipped {}: cannot read it: {source}", display_path(path))
            }
            InputError::NoTraces(path) => {
                format!("skipped {}: no traces found", display_path(path))
            }
            other => format!("skipped: {other}"),
        }
    }
}

/// A path the way Python's `pathlib` prints it: no leading `./`, no doubled or trailing slashes.
pub fn display_path(path: &Path) -> String {
    let raw = path.to_string_lossy();
    // An object-storage URL (`s3://bucket/key`) as given: its `//` is not a doubled slash.
    if raw.contains("://") {
        return raw.into_owned();
    }
    let absolute = raw.starts_with('/');
    let parts: Vec<&str> = raw
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_path_drops_dot_and_doubled_slashes() {
        assert_eq!(display_path(Path::new("./a//b.json")), "a/b.json");
        assert_eq!(display_path(Path::new("x.json")), "x.json");
        assert_eq!(display_path(Path::new("dir/")), "dir");
        assert_eq!(display_path(Path::new("/abs//x")), "/abs/x");
    }
}
