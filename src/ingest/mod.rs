//! Reading trace files: from paths on the command line to parsed traces.
//!
//! Owns file discovery (`paths`: directories walked recursively in sorted order, glob patterns),
//! decompression (`archive`: gzip and zstd under a bomb guard), framing (one document, a JSON list of
//! exports, or JSON lines with one export or record per line, parsed in parallel), format detection
//! (`detect`) and dispatch to the format readers. Knows nothing of checks.

pub mod archive;
pub mod detect;
pub mod formats;
pub mod json;
pub mod paths;
pub mod scan;
pub mod source;
pub mod stream;

use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

use crate::error::InputError;
use crate::model::RawTrace;
use formats::common::MapError;
use formats::otlp::SpanCollector;
use formats::{braintrust, langfuse, langsmith, openinference, trajectory};
use json::{ParseFailure, to_value, with_tape};

pub use paths::expand_paths;

/// The trace formats `--format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Auto,
    Otlp,
    Openinference,
    Langfuse,
    Langsmith,
    Braintrust,
    Trajectory,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Otlp => "otlp",
            Format::Openinference => "openinference",
            Format::Langfuse => "langfuse",
            Format::Langsmith => "langsmith",
            Format::Braintrust => "braintrust",
            Format::Trajectory => "trajectory",
        }
    }

    fn reads_otlp(self) -> bool {
        matches!(self, Format::Otlp | Format::Openinference)
    }
}

const UNRECOGNISED: &str = "unrecognised trace format; expected OTLP/JSON, OpenInference, Langfuse, LangSmith or \
                            Braintrust (pass --format to force one)";

/// Reads every trace of one file (decompressing gzip and zstd files).
pub fn read_file(path: &Path, format: Format) -> Result<Vec<RawTrace>, InputError> {
    read_file_as(path, format).map(|(_, traces)| traces)
}

/// Reads every trace of one file and says which format it was read as.
pub fn read_file_as(path: &Path, format: Format) -> Result<(Format, Vec<RawTrace>), InputError> {
    let bytes = source::Source::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let data = archive::decompress(path, &bytes, archive::Limits::default())?;
    read_bytes_as(path, &data, format)
}

/// Reads every trace of a file's (uncompressed) contents.
pub fn read_bytes(path: &Path, bytes: &[u8], format: Format) -> Result<Vec<RawTrace>, InputError> {
    read_bytes_as(path, bytes, format).map(|(_, traces)| traces)
}

/// What one document or line held, in the form its reader continues from.
enum Loaded {
    Spans(SpanCollector),
    Document(Value),
}

/// Reads a file's contents and says which format they were read as.
pub fn read_bytes_as(
    path: &Path,
    bytes: &[u8],
    format: Format,
) -> Result<(Format, Vec<RawTrace>), InputError> {
    let invalid = |message: String| InputError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let whole = with_tape(bytes, |doc| {
        let chosen = resolve(format, doc)?;
        load(chosen, doc).map(|loaded| (chosen, vec![loaded]))
    });
    let (chosen, pieces) = match whole {
        Ok(result) => result.map_err(invalid)?,
        Err(failure) => {
            let Some(lines) = json_lines(bytes) else {
                return Err(json_error(path, failure));
            };
            let chosen = with_tape(lines[0].1, |doc| resolve(format, doc))
                .map_err(|f| json_error(path, f))?
                .map_err(invalid)?;
            let parsed: Vec<Result<Loaded, InputError>> = lines
                .par_iter()
                .map(
                    |&(offset, line)| match with_tape(line, |doc| load(chosen, doc)) {
                        Ok(Ok(loaded)) => Ok(loaded),
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
                    },
                )
                .collect();
            (chosen, parsed.into_iter().collect::<Result<Vec<_>, _>>()?)
        }
    };
    let traces = finish(path, chosen, pieces)?;
    Ok((chosen, traces))
}

/// The format to read a document as: the forced one, or the detected one in `auto` mode.
fn resolve(format: Format, doc: simd_json::tape::Value<'_, '_>) -> Result<Format, String> {
    match format {
        Format::Auto => detect::detect(doc).ok_or_else(|| UNRECOGNISED.to_string()),
        forced => Ok(forced),
    }
}

fn load(format: Format, doc: simd_json::tape::Value<'_, '_>) -> Result<Loaded, String> {
    if format.reads_otlp() {
        let mut collector = SpanCollector::default();
        add_otlp_document(&mut collector, doc)?;
        Ok(Loaded::Spans(collector))
    } else {
        Ok(Loaded::Document(to_value(doc)))
    }
}

fn finish(path: &Path, format: Format, pieces: Vec<Loaded>) -> Result<Vec<RawTrace>, InputError> {
    let invalid = |message: String| InputError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    if format.reads_otlp() {
        let mut collector = SpanCollector::default();
        for piece in pieces {
            if let Loaded::Spans(part) = piece {
                collector.append(part);
            }
        }
        let traces = collector.into_traces();
        return Ok(match format {
            Format::Openinference => traces.into_iter().map(openinference::map_trace).collect(),
            _ => traces,
        });
    }
    let docs: Vec<Value> = pieces
        .into_iter()
        .filter_map(|p| match p {
            Loaded::Document(v) => Some(v),
            Loaded::Spans(_) => None,
        })
        .collect();
    let records: Vec<&serde_json::Map<String, Value>> =
        docs.iter().flat_map(detect::records).collect();
    let name = format.name();
    let accepts = match format {
        Format::Langfuse => langfuse::accepts,
        Format::Langsmith => langsmith::accepts,
        Format::Braintrust => braintrust::accepts,
        _ => trajectory::accepts,
    };
    if !records.first().is_some_and(|r| accepts(r)) {
        return Err(invalid(format!(
            "not a valid {name} export: the records do not have its fields"
        )));
    }
    let mapped = match format {
        Format::Langfuse => langfuse::read(&records),
        Format::Langsmith => langsmith::read(&records),
        Format::Braintrust => braintrust::read(&records),
        _ => {
            let stem = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "trajectory".into());
            let stem = stem.split('.').next().unwrap_or("trajectory").to_string();
            Ok(trajectory::read(&records, &stem))
        }
    };
    let traces = mapped.map_err(|e| match e {
        MapError::MissingKey(_) => invalid(format!("not a valid {name} export: {e}")),
        MapError::BadTime(_) => invalid(e.to_string()),
    })?;
    if traces.is_empty() {
        return Err(invalid(format!("no {name} traces found")));
    }
    Ok(traces)
}

fn json_error(path: &Path, failure: ParseFailure) -> InputError {
    InputError::Json {
        path: path.to_path_buf(),
        offset: failure.offset,
        message: failure.message,
    }
}

/// An export object, or a list of them (the Collector's file exporter and batch dumps write lists).
fn add_otlp_document(
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
