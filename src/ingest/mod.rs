//! Reading trace files: from paths on the command line to parsed traces.
//!
//! Owns file discovery (directories are walked recursively in sorted order), framing (one export, a JSON
//! list of exports, or JSON lines with one export per line) and format dispatch. Knows nothing of checks.

pub mod formats;
pub mod json;
pub mod source;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::InputError;
use crate::model::RawTrace;
use formats::otlp::SpanCollector;
use json::{ParseFailure, with_tape};

/// The trace formats `--format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Auto,
    Otlp,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Otlp => "otlp",
        }
    }
}

/// The files behind the given paths: files as given, directories walked recursively (sorted, hidden
/// entries skipped). A path that does not exist is an error.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|_| InputError::NotFound(path.clone()))?;
        if meta.is_dir() {
            walk(path, &mut files)?;
        } else if meta.is_file() {
            files.push(path.clone());
        } else {
            return Err(InputError::NotFound(path.clone()));
        }
    }
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let read_err = |source| InputError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            walk(&entry, files)?;
        } else if entry.is_file() {
            files.push(entry);
        }
    }
    Ok(())
}

/// Reads every trace of one file.
pub fn read_file(path: &Path, format: Format) -> Result<Vec<RawTrace>, InputError> {
    let bytes = source::Source::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    read_bytes(path, &bytes, format)
}

/// Reads every trace of a file's contents.
pub fn read_bytes(path: &Path, bytes: &[u8], _format: Format) -> Result<Vec<RawTrace>, InputError> {
    let invalid = |message: String| InputError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let mut collector = SpanCollector::default();
    match with_tape(bytes, |doc| add_document(&mut collector, doc)) {
        Ok(result) => result.map_err(invalid)?,
        Err(failure) => match json_lines(bytes) {
            Some(lines) => {
                let parsed: Vec<Result<SpanCollector, InputError>> = lines
                    .par_iter()
                    .map(|&(offset, line)| {
                        let mut part = SpanCollector::default();
                        match with_tape(line, |doc| add_document(&mut part, doc)) {
                            Ok(Ok(())) => Ok(part),
                            Ok(Err(message)) => {
                                Err(invalid(format!("line at byte {offset}: {message}")))
                            }
                            Err(f) => Err(json_error(
                                path,
                                ParseFailure {
                                    offset: offset + f.offset,
                                    message: f.message,
                                },
                            )),
                        }
                    })
                    .collect();
                for part in parsed {
                    collector.append(part?);
                }
            }
            None => return Err(json_error(path, failure)),
        },
    }
    Ok(collector.into_traces())
}

fn json_error(path: &Path, failure: ParseFailure) -> InputError {
    InputError::Json {
        path: path.to_path_buf(),
        offset: failure.offset,
        message: failure.message,
    }
}

/// An export object, or a list of them (the Collector's file exporter writes lists).
fn add_document(
    collector: &mut SpanCollector,
    doc: simd_json::tape::Value<'_, '_>,
) -> Result<(), String> {
    if let Some(items) = doc.as_array() {
        for (i, item) in items.iter().enumerate() {
            if !SpanCollector::is_export(&item) {
                return Err(format!(
                    "element {i} of the list is not an OTLP export (no resourceSpans)"
                ));
            }
            collector
                .add_export(item)
                .map_err(|e| format!("element {i}: {e}"))?;
        }
        return Ok(());
    }
    if !SpanCollector::is_export(&doc) {
        return Err(
            "unrecognised trace format; expected OTLP/JSON (an object with resourceSpans)".into(),
        );
    }
    collector.add_export(doc)
}

/// The non-blank lines of a JSON-lines file with their byte offsets, when the file has more than one
/// line and the first one is a complete JSON document on its own.
fn json_lines(bytes: &[u8]) -> Option<Vec<(usize, &[u8])>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            lines.push((start, &bytes[start..i]));
            start = i + 1;
        }
    }
    lines.push((start, &bytes[start..]));
    lines.retain(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()));
    if lines.len() < 2 || with_tape(lines[0].1, |_| ()).is_err() {
        return None;
    }
    Some(lines)
}
