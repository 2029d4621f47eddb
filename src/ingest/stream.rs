//! Reading a file a chunk of traces at a time, so memory holds one chunk, not the archive.
//!
//! OTLP exports go through the structural scan (`scan`): spans are located and grouped by trace first,
//! then each chunk's spans are parsed in parallel, span by span. Other formats, and exports the scan does
//! not understand, are read whole and handed out in chunks.

use std::collections::HashMap;
use std::path::Path;

use rayon::prelude::*;

use super::formats::{openinference, otlp};
use super::json::with_tape;
use super::scan::{SpanSlice, locate_spans};
use super::{Format, archive, read_bytes_as, source};
use crate::error::InputError;
use crate::model::{RawTrace, attr};

/// How many traces a chunk holds at most.
pub const CHUNK_TRACES: usize = 4096;

/// Reads `path` and calls `sink` with its traces, in trace order, at most `chunk` at a time. Returns the
/// format the file was read as and the number of traces read.
pub fn read_file_chunked(
    path: &Path,
    format: Format,
    chunk: usize,
    sink: &mut dyn FnMut(Vec<RawTrace>) -> Result<(), InputError>,
) -> Result<(Format, usize), InputError> {
    let bytes = source::Source::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let data = archive::decompress(path, &bytes, archive::Limits::default())?;
    let otlp_like = matches!(format, Format::Auto | Format::Otlp | Format::Openinference);
    if otlp_like && let Some(slices) = locate_spans(&data) {
        let read_as = match format {
            Format::Auto
                if memchr::memmem::find(&data, b"\"openinference.span.kind\"").is_some() =>
            {
                Format::Openinference
            }
            Format::Auto => Format::Otlp,
            other => other,
        };
        let total = read_scanned(path, &data, &slices, read_as, chunk, sink)?;
        return Ok((read_as, total));
    }
    let (read_as, traces) = read_bytes_as(path, &data, format)?;
    let total = traces.len();
    let mut traces = traces.into_iter().peekable();
    while traces.peek().is_some() {
        sink(traces.by_ref().take(chunk.max(1)).collect())?;
    }
    Ok((read_as, total))
}

/// One trace of a scanned export: its spans' slices in file order and its first start.
struct TraceSlices {
    spans: Vec<usize>,
    first_start: i64,
}

fn read_scanned(
    path: &Path,
    data: &[u8],
    slices: &[SpanSlice],
    format: Format,
    chunk: usize,
    sink: &mut dyn FnMut(Vec<RawTrace>) -> Result<(), InputError>,
) -> Result<usize, InputError> {
    let mut index: HashMap<&[u8], usize> = HashMap::new();
    let mut traces: Vec<TraceSlices> = Vec::new();
    for (i, slice) in slices.iter().enumerate() {
        let id = &data[slice.trace_id.0..slice.trace_id.1];
        let slot = *index.entry(id).or_insert_with(|| {
            traces.push(TraceSlices {
                spans: Vec::new(),
                first_start: i64::MAX,
            });
            traces.len() - 1
        });
        traces[slot].spans.push(i);
        traces[slot].first_start = traces[slot].first_start.min(slice.start_ns);
    }
    drop(index);
    // Traces by the start of their first span; ties keep the order of first appearance.
    traces.sort_by_key(|t| t.first_start);
    for group in traces.chunks(chunk.max(1)) {
        let parsed: Vec<Result<RawTrace, InputError>> = group
            .par_iter()
            .map(|t| parse_trace(path, data, slices, &t.spans, format))
            .collect();
        sink(parsed.into_iter().collect::<Result<_, _>>()?)?;
    }
    Ok(traces.len())
}

fn parse_trace(
    path: &Path,
    data: &[u8],
    slices: &[SpanSlice],
    members: &[usize],
    format: Format,
) -> Result<RawTrace, InputError> {
    let mut trace = RawTrace::default();
    let mut last_agent = None;
    for &i in members {
        let slice = &slices[i];
        let (trace_id, span) =
            with_tape(&data[slice.start..slice.end], |doc| match doc.as_object() {
                Some(obj) => otlp::read_span(&obj),
                None => Err("a span is not an object".to_string()),
            })
            .map_err(|f| InputError::Json {
                path: path.to_path_buf(),
                offset: slice.start + f.offset,
                message: f.message,
            })?
            .map_err(|message| InputError::Invalid {
                path: path.to_path_buf(),
                message: format!("span at byte {}: {message}", slice.start),
            })?;
        if let Some(name) = span.attr(attr::AGENT_NAME) {
            last_agent = Some(crate::pyfmt::py_str(name));
        }
        trace.trace_id = trace_id;
        trace.spans.push(span);
    }
    otlp::order_spans(&mut trace, last_agent);
    Ok(match format {
        Format::Openinference => openinference::map_trace(trace),
        _ => trace,
    })
}
