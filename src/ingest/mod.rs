//! Reading trace files: from paths on the command line to batches of tables.
//!
//! Owns file discovery (`paths`: directories walked recursively in sorted order, glob patterns),
//! decompression (`archive`: gzip and zstd under a bomb guard), framing (one document, a JSON list of
//! exports, or JSON lines with one export or record per line), format detection (the [`DECODERS`] list,
//! walked in 0.4.1's order) and the one reader per format (`formats`), all behind [`Decoder`]. Large OTLP
//! exports skip whole-document parsing: the structural scan (`scan`) locates every span, and each trace is
//! parsed on its own when its batch is built. Knows nothing of checks.

pub mod archive;
pub(crate) mod decoder;
pub(crate) mod detect;
pub(crate) mod formats;
pub(crate) mod json;
pub(crate) mod paths;
pub mod scan;
pub(crate) mod source;

use std::path::Path;

use crate::error::InputError;
use crate::table::{TableOptions, TraceBatch};
use decoder::Document;
use formats::{
    any_agent, braintrust, langfuse, langsmith, langsmith_sdk, openinference, openinference_spans,
    otlp, otlp_proto, trajectory,
};
use formats::{multi_agent, swe_agent, tau};
use json::with_tape;

pub use decoder::{Decoder, ReadOptions, ReadProgress, Traces, for_each_batch};
pub use paths::{Inputs, expand_inputs, expand_paths};

/// The trace formats `--format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `auto`: detect each file's format from its contents, in 0.4.1's order (the default).
    Auto,
    /// `otlp`: an object with `resourceSpans` (OTLP/JSON, OpenTelemetry GenAI conventions).
    Otlp,
    /// `openinference`: OTLP whose spans carry `openinference.span.kind` (Arize Phoenix).
    Openinference,
    /// `langfuse`: trace objects with `observations`, or observation rows.
    Langfuse,
    /// `langsmith`: runs with `run_type`.
    Langsmith,
    /// `braintrust`: logged spans with `span_attributes` or `root_span_id`.
    Braintrust,
    /// `trajectory`: JSON lines of `seq`-numbered action, checkpoint, handoff and final events (one run per file).
    Trajectory,
    /// `tau-bench`: tau-bench or tau2-bench results (one trace per task trial).
    TauBench,
    /// `swe-agent`: a SWE-agent `.traj` or a mini-swe-agent run.
    SweAgent,
    /// `multi-agent`: logs with a `history` list of turns (Who&When: AG2 and Magentic-One runs).
    MultiAgent,
    /// `otlp-proto`: OTLP protobuf (the Collector file exporter's `format: proto`, or an OTLP/HTTP body).
    OtlpProto,
    /// `any-agent`: mozilla-ai any-agent traces.
    AnyAgent,
    /// `langsmith-sdk`: LangSmith runs as the SDK sends them (`post` and `patch` bodies).
    LangsmithSdk,
    /// `openinference-spans`: span objects outside an OTLP envelope (a list or JSON lines).
    OpeninferenceSpans,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 14] = [
        Format::Auto,
        Format::Otlp,
        Format::Openinference,
        Format::Langfuse,
        Format::Langsmith,
        Format::Braintrust,
        Format::Trajectory,
        Format::TauBench,
        Format::SweAgent,
        Format::MultiAgent,
        Format::OtlpProto,
        Format::AnyAgent,
        Format::LangsmithSdk,
        Format::OpeninferenceSpans,
    ];

    /// The name `--format` takes and reports print.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Otlp => "otlp",
            Format::Openinference => "openinference",
            Format::Langfuse => "langfuse",
            Format::Langsmith => "langsmith",
            Format::Braintrust => "braintrust",
            Format::Trajectory => "trajectory",
            Format::TauBench => "tau-bench",
            Format::SweAgent => "swe-agent",
            Format::MultiAgent => "multi-agent",
            Format::OtlpProto => "otlp-proto",
            Format::AnyAgent => "any-agent",
            Format::LangsmithSdk => "langsmith-sdk",
            Format::OpeninferenceSpans => "openinference-spans",
        }
    }
}

/// Every format, in the order `--format auto` tries them: 0.4.1's first, in 0.4.1's order (an OTLP
/// export is OpenInference when a span carries `openinference.span.kind`), then formats 0.4.1 refused,
/// whose detection never matches a document 0.4.1 reads. OTLP protobuf is binary: it is never detected on
/// a JSON document, only by its file name or when the bytes are not JSON (see [`open`]).
pub static DECODERS: &[&dyn Decoder] = &[
    &openinference::OpenInference,
    &otlp::Otlp,
    &langfuse::LANGFUSE,
    &langsmith::LANGSMITH,
    &braintrust::BRAINTRUST,
    &trajectory::TRAJECTORY,
    // Formats 0.4.1 did not read come after its own, so its inputs keep their formats.
    &tau::TAU,
    &swe_agent::SWE_AGENT,
    &multi_agent::MULTI_AGENT,
    &any_agent::AnyAgent,
    &langsmith_sdk::LangsmithSdk,
    &openinference_spans::OpenInferenceSpans,
    &otlp_proto::OtlpProto,
];

/// The decoder of a format other than `auto`.
pub fn decoder(format: Format) -> Option<&'static dyn Decoder> {
    DECODERS.iter().copied().find(|d| d.format() == format)
}

/// The refusal of a document no format recognises: every format `--format` accepts, by its name there.
fn unrecognised() -> String {
    // 0.4.1's names for its formats; a format added since is named as `--format` names it.
    let names: Vec<&str> = DECODERS
        .iter()
        .map(|d| match d.format() {
            Format::Otlp => "OTLP/JSON",
            Format::Openinference => "OpenInference",
            Format::Langfuse => "Langfuse",
            Format::Langsmith => "LangSmith",
            Format::Braintrust => "Braintrust",
            other => other.name(),
        })
        .collect();
    let mut names: Vec<&str> = names.into_iter().fold(Vec::new(), |mut seen, n| {
        if !seen.contains(&n) {
            seen.push(n);
        }
        seen
    });
    // 0.4.1 lists OTLP/JSON first, though OpenInference is tried first.
    if let Some(i) = names.iter().position(|n| *n == "OTLP/JSON") {
        let otlp = names.remove(i);
        names.insert(0, otlp);
    }
    let (last, rest) = names.split_last().expect("formats exist");
    format!(
        "unrecognised trace format; expected {} or {last} (pass --format to force one)",
        rest.join(", ")
    )
}

/// A file's contents, framed and indexed by its format's decoder.
pub struct Opened<'b> {
    /// The format the file was read as (detected when asked for `auto`).
    pub format: Format,
    /// The file's traces, each decoded on demand.
    pub traces: Box<dyn Traces + 'b>,
}

/// Frames a file's (uncompressed) contents and indexes its traces.
pub fn open<'b>(
    path: &Path,
    bytes: &'b [u8],
    options: &ReadOptions,
) -> Result<Opened<'b>, InputError> {
    // Protobuf is binary: it is taken before text is required to be UTF-8.
    let format = options.format;
    if format == Format::OtlpProto || (format == Format::Auto && otlp_proto::named(path)) {
        return otlp_proto::open(path, bytes, options);
    }
    if format == Format::Auto
        && let Some(opened) = otlp_proto::sniff(bytes, options)
    {
        return Ok(opened);
    }
    if let Some(offset) = json::first_invalid_utf8(bytes) {
        return Err(InputError::Json {
            path: path.to_path_buf(),
            offset,
            message: "invalid UTF-8".to_string(),
        });
    }
    if matches!(format, Format::Auto | Format::Otlp | Format::Openinference)
        && let Some(slices) = scan::locate_spans(bytes)
    {
        let openinference = match format {
            Format::Auto => memchr::memmem::find(bytes, b"\"openinference.span.kind\"").is_some(),
            other => other == Format::Openinference,
        };
        let (format, traces) = if openinference {
            let traces =
                otlp::ScannedTraces::new(bytes, slices, true, Some(openinference::map_trace));
            (Format::Openinference, traces)
        } else {
            let traces = otlp::ScannedTraces::new(bytes, slices, options.all_attributes(), None);
            (Format::Otlp, traces)
        };
        return Ok(Opened {
            format,
            traces: Box::new(traces),
        });
    }
    let invalid = |message: String| InputError::Unrecognised {
        path: path.to_path_buf(),
        message,
    };
    let whole = Document {
        bytes,
        offset: 0,
        is_line: false,
    };
    let (decoder, docs) = match with_tape(bytes, |doc| choose(format, doc)) {
        Ok(chosen) => (chosen.map_err(invalid)?, vec![whole]),
        Err(failure) => {
            let Some(lines) = json_lines(bytes) else {
                let first = bytes.iter().position(|b| !b.is_ascii_whitespace());
                if first.is_some_and(|i| i == failure.offset && !matches!(bytes[i], b'{' | b'[')) {
                    return Err(InputError::NotJson {
                        path: path.to_path_buf(),
                        offset: failure.offset,
                        message: failure.message,
                    });
                }
                return Err(whole.json_error(path, failure));
            };
            let chosen = with_tape(lines[0].bytes, |doc| choose(format, doc))
                .map_err(|f| lines[0].json_error(path, f))?
                .map_err(invalid)?;
            (chosen, lines)
        }
    };
    let traces = decoder.read(path, &docs, options)?;
    Ok(Opened {
        format: decoder.format(),
        traces,
    })
}

/// The decoder for a document: the forced format's, or the first that recognises it.
fn choose(
    format: Format,
    doc: simd_json::tape::Value<'_, '_>,
) -> Result<&'static dyn Decoder, String> {
    match format {
        Format::Auto => DECODERS
            .iter()
            .copied()
            .find(|d| d.detect(doc))
            .ok_or_else(unrecognised),
        forced => decoder(forced).ok_or_else(unrecognised),
    }
}

/// Reads `path` (decompressing gzip and zstd files), runs `each` on every batch of its traces in
/// parallel and hands the results to `sink` in trace order. Returns the format the file was read as and
/// its number of traces.
pub fn read_file<R: Send>(
    path: &Path,
    options: &ReadOptions,
    each: &(dyn Fn(TraceBatch) -> R + Sync),
    sink: &mut dyn FnMut(R) -> Result<(), InputError>,
) -> Result<(Format, usize), InputError> {
    let Some(progress) = options.progress.as_deref() else {
        return read_file_with(path, options, each, sink, None);
    };
    let stored = std::fs::metadata(path).map_or(0, |m| m.len());
    let reported = std::sync::atomic::AtomicU64::new(0);
    let result = read_file_with(
        path,
        options,
        each,
        sink,
        Some((progress, stored, &reported)),
    );
    progress.file_done(stored.saturating_sub(reported.into_inner()));
    result
}

/// [`read_file`], telling `progress` (with the file's stored size and the bytes reported so far) of
/// each batch: a batch stands for its share of the file's traces.
fn read_file_with<R: Send>(
    path: &Path,
    options: &ReadOptions,
    each: &(dyn Fn(TraceBatch) -> R + Sync),
    sink: &mut dyn FnMut(R) -> Result<(), InputError>,
    progress: Option<(&dyn ReadProgress, u64, &std::sync::atomic::AtomicU64)>,
) -> Result<(Format, usize), InputError> {
    let bytes = source::Source::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let data = archive::decompress(path, &bytes, archive::Limits::default())?;
    let opened = open(path, &data, options)?;
    let total = opened.traces.len();
    match progress {
        None => for_each_batch(path, opened.traces.as_ref(), options, each, sink)?,
        Some((progress, stored, reported)) => {
            let counted = |batch: TraceBatch| {
                let traces = batch.len();
                let result = each(batch);
                let share = (u128::from(stored) * traces as u128 / total.max(1) as u128) as u64;
                reported.fetch_add(share, std::sync::atomic::Ordering::Relaxed);
                progress.advance(traces, share);
                result
            };
            for_each_batch(path, opened.traces.as_ref(), options, &counted, sink)?;
        }
    }
    Ok((opened.format, total))
}

/// Reads every trace of a file (decompressing gzip and zstd files) into one batch (tests and small
/// samples).
pub fn read_path(path: &Path, format: Format) -> Result<(Format, TraceBatch), InputError> {
    let bytes = source::Source::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let data = archive::decompress(path, &bytes, archive::Limits::default())?;
    read_bytes(path, &data, format)
}

/// Reads every trace of a file's contents into one batch (tests and small samples).
pub fn read_bytes(
    path: &Path,
    bytes: &[u8],
    format: Format,
) -> Result<(Format, TraceBatch), InputError> {
    let options = ReadOptions::new(
        format,
        TableOptions {
            root_attributes: true,
        },
    );
    let opened = open(path, bytes, &options)?;
    let mut builder = crate::table::TableBuilder::new(options.table);
    for t in 0..opened.traces.len() {
        opened.traces.append(path, t, &mut builder)?;
    }
    Ok((opened.format, builder.finish()))
}

/// The non-blank lines of a JSON-lines file with their byte offsets, when the file has more than one
/// line and the first one is a complete JSON document on its own.
fn json_lines(bytes: &[u8]) -> Option<Vec<Document<'_>>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        let line = &bytes[start..end];
        if line.iter().any(|b| !b.is_ascii_whitespace()) {
            lines.push(Document {
                bytes: line,
                offset: start,
                is_line: true,
            });
        }
        start = end + 1;
    }
    if lines.len() < 2 || with_tape(lines[0].bytes, |_| ()).is_err() {
        return None;
    }
    Some(lines)
}
