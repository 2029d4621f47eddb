//! A structural pre-scan of OTLP/JSON exports: where each span object lies, which trace it belongs to and
//! when it starts, without parsing anything else.
//!
//! Parsing a large export as one document is slow (one thread, a tape several times the file) and holds
//! the whole archive in memory. The scan instead tracks only strings, brackets and the keys on the path
//! `resourceSpans[].scopeSpans[].spans[]`, and records each span's byte range with its `traceId` and
//! `startTimeUnixNano`, the consecutive spans of one trace in one record ([`SpanSlice`]). Spans are then
//! grouped into traces, and each trace's spans are parsed together when its batch is built, batches in
//! parallel.
//!
//! The scan accepts one export, a JSON list of exports, or several exports one after another (JSON lines).
//! It checks the bracket and string structure, not the full grammar: anything it does not understand makes
//! it give up (`None`), and the caller falls back to parsing the whole document, which reports errors with
//! their position. Bytes outside span objects (resource and scope attributes) are never parsed; the walk
//! only notes where each `resourceSpans` element's `resource` object lies ([`ResourceBytes`]), so that
//! a span's resource is found by its offset and read once, when a trace needs it.
//!
//! The rules are those of one serial state machine (`walk`), but the bytes are read in parallel blocks
//! of a megabyte, in two stages: first each block's start state (inside a string or not, bracket
//! depth) is found, then the blocks are read at once. Each block starts where its state is known
//! (`blocks`): after a newline in JSON lines, at a span object or a `spans` array in one large export,
//! and elsewhere where a first pass over every byte finds each block's string state and bracket depth.
//! Each block's worker then reads the runs of span objects that start in it (`runs`) with 64-byte bit
//! masks (`tokens`), and the walk reads only what lies between the runs, taking a run wherever it
//! meets its first span: in JSON lines each block's worker walks its own block right after reading its
//! runs, elsewhere one serial walk follows the workers. The workers stop at anything the walk would
//! read differently, so the result is the walk's alone; the tests hold it to the serial byte-by-byte
//! scan it replaced (`serial`).

mod blocks;
mod lex;
mod runs;
#[cfg(test)]
mod serial;
#[cfg(test)]
mod tests;
mod tokens;
mod walk;

use rayon::prelude::*;

use blocks::worker_blocks;
pub(crate) use lex::{decimal_i64, first_of};
use runs::{read_span, runs_in_block};
use tokens::Tokens;
use walk::{scan_lines, walk};

/// Consecutive span objects of one trace in one `spans` array (most often one span, or all of a small
/// trace's), in 24 bytes: the scan holds one for every such run of a file at once, so its size is most
/// of what indexing a file of many small traces costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSlice {
    /// Byte offset of the first span object's opening brace (low 48 bits) and the number of span
    /// objects (high 16 bits).
    start_and_count: u64,
    /// The least `startTimeUnixNano` of the spans, as an integer (0 when absent).
    pub start_ns: i64,
    /// Bytes from the first span's opening brace to the last one's closing brace: the spans, and only
    /// commas and whitespace between them.
    len: u32,
    /// Where the first span's `traceId` string's contents begin, counted from the start. They hold no
    /// backslash (the scan gives up on one), so they end at the next quote and their end need not be
    /// kept. Every span of the slice has the same `traceId` contents.
    trace_id_at: u32,
}

/// Offsets of the first span stay below 2^48 bytes, leaving 16 bits for the number of spans.
const START_BITS: u32 = 48;

/// Consecutive spans of one trace join one slice while it stays this small: a slice is parsed as one
/// document when its trace is read, so its size bounds that parse's tape.
const JOIN_BYTES: usize = 1 << 16;

impl SpanSlice {
    /// The span object at `start..end` whose `traceId` contents are `trace_id`; `None` for a span of
    /// 4 GiB or more or one starting past 2^48 bytes, which the scan leaves to the whole-document parser.
    fn new(start: usize, end: usize, trace_id: (usize, usize), start_ns: i64) -> Option<SpanSlice> {
        if (start as u64) >> START_BITS != 0 {
            return None;
        }
        Some(SpanSlice {
            start_and_count: start as u64 | 1 << START_BITS,
            start_ns,
            len: u32::try_from(end - start).ok()?,
            trace_id_at: u32::try_from(trace_id.0.checked_sub(start)?).ok()?,
        })
    }

    /// Byte offset of the first span object's opening brace.
    pub fn start(&self) -> usize {
        (self.start_and_count & ((1 << START_BITS) - 1)) as usize
    }

    /// How many span objects the slice holds.
    pub fn count(&self) -> usize {
        (self.start_and_count >> START_BITS) as usize
    }

    /// Byte offset just past the last span object's closing brace.
    pub fn end(&self) -> usize {
        self.start() + self.len as usize
    }

    /// Byte offset where the `traceId` string's contents begin (they end at the next quote).
    pub fn trace_id_start(&self) -> usize {
        self.start() + self.trace_id_at as usize
    }

    /// Byte range of the `traceId` string's contents in `bytes`, the file the span was found in.
    pub fn trace_id(&self, bytes: &[u8]) -> (usize, usize) {
        let from = self.trace_id_start();
        let to = first_of(bytes, from, self.end(), false).unwrap_or(self.end());
        (from, to)
    }

    /// Takes `next`, the span that follows this slice's last one in the same run, into this slice when
    /// it belongs to the same trace and the slice stays small; otherwise hands it back.
    fn join(&mut self, next: SpanSlice, bytes: &[u8]) -> Option<SpanSlice> {
        let len = next.end() - self.start();
        let (mine, theirs) = (self.trace_id(bytes), next.trace_id(bytes));
        if len > JOIN_BYTES
            || self.count() >= (1 << (64 - START_BITS)) - 1
            || bytes[mine.0..mine.1] != bytes[theirs.0..theirs.1]
        {
            return Some(next);
        }
        self.start_and_count += 1 << START_BITS;
        self.len = len as u32;
        self.start_ns = self.start_ns.min(next.start_ns);
        None
    }

    /// The slice's span objects, one slice each, read again from `bytes`.
    pub fn spans(&self, bytes: &[u8]) -> Vec<SpanSlice> {
        if self.count() == 1 {
            return vec![self.clone()];
        }
        spans_at(bytes, self.start(), self.count())
    }
}

/// The `count` span objects of a slice the scan joined, from the first one's brace at `start`, one slice
/// each: read again as the scan's worker read them, which is the only reader that joins spans.
pub fn spans_at(bytes: &[u8], start: usize, count: usize) -> Vec<SpanSlice> {
    let mut spans = Vec::with_capacity(count);
    let mut tokens = Tokens::new(bytes, start);
    tokens.next();
    let mut at = start;
    while let Some(span) = read_span(&mut tokens, bytes, at) {
        spans.push(span);
        if spans.len() == count {
            break;
        }
        match (tokens.next(), tokens.next()) {
            (Some(comma), Some(next)) if bytes[comma] == b',' && bytes[next] == b'{' => at = next,
            _ => break,
        }
    }
    debug_assert_eq!(spans.len(), count, "the spans of a slice the scan read");
    spans
}

/// Where the spans of one or more consecutive `resourceSpans` elements find their resource: from the
/// first element's opening brace on (until the next entry), spans were exported under the `resource`
/// object at `resource` (an empty range when the elements have none).
///
/// Consecutive elements with the same resource bytes make one entry, so JSON lines of one service
/// hold one entry, not one per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceBytes {
    /// Byte offset of the first element's opening brace.
    pub element: usize,
    /// Byte range of the `resource` object, braces included.
    pub resource: (usize, usize),
}

/// Appends `entry` to `list`, unless the last entry has the same resource bytes or, with
/// `file_start`, `list` is the file's and empty and the entry has no resource (spans before any
/// entry have none). A walk of part of the file keeps an entry without resource at its start: the
/// part before may end with one.
fn note_resource(
    list: &mut Vec<ResourceBytes>,
    bytes: &[u8],
    entry: ResourceBytes,
    file_start: bool,
) {
    let (from, to) = entry.resource;
    let same = match list.last() {
        Some(last) => bytes[last.resource.0..last.resource.1] == bytes[from..to],
        None => file_start && from == to,
    };
    if !same {
        list.push(entry);
    }
}

/// Every span an export holds, in file order, left in the lists the scan found them in: copying the
/// workers' spans into one list would hold every span twice at the scan's end.
#[derive(Debug, Default)]
pub struct SpanList {
    /// The workers' lists, one per block, then those of the spans the walk found itself.
    lists: Vec<Vec<SpanSlice>>,
    /// The spans in file order: a list's number and a range in it. Consecutive runs of one block make
    /// one piece.
    pieces: Vec<(u32, std::ops::Range<u32>)>,
    /// The resources of the spans, in file order (empty when no element has one).
    resources: Vec<ResourceBytes>,
}

impl SpanList {
    /// Where the spans find their resource, in file order (see [`ResourceBytes`]).
    pub fn resources(&self) -> &[ResourceBytes] {
        &self.resources
    }

    /// Takes the spans `range` of list `list` as the next in file order.
    fn take(&mut self, list: u32, range: std::ops::Range<u32>) {
        match self.pieces.last_mut() {
            Some((last, taken)) if *last == list && taken.end == range.start => {
                taken.end = range.end;
            }
            _ => self.pieces.push((list, range)),
        }
    }

    /// Takes the spans the walk found itself, if any, as the next in file order.
    fn take_own(&mut self, spans: &mut Vec<SpanSlice>) {
        if !spans.is_empty() {
            let list = self.lists.len() as u32;
            self.take(list, 0..spans.len() as u32);
            self.lists.push(std::mem::take(spans));
        }
    }

    fn piece(&self, (list, range): &(u32, std::ops::Range<u32>)) -> &[SpanSlice] {
        &self.lists[*list as usize][range.start as usize..range.end as usize]
    }

    /// How many spans the list holds.
    pub fn len(&self) -> usize {
        self.iter().map(SpanSlice::count).sum()
    }

    /// How many slices the list holds (each one or more consecutive spans of a trace).
    pub fn slices(&self) -> usize {
        self.pieces.iter().map(|(_, range)| range.len()).sum()
    }

    /// Whether the list holds no span.
    pub fn is_empty(&self) -> bool {
        self.pieces.iter().all(|(_, range)| range.is_empty())
    }

    /// The slices in file order, in the pieces they are held in.
    pub fn pieces(&self) -> impl Iterator<Item = &[SpanSlice]> {
        self.pieces.iter().map(|piece| self.piece(piece))
    }

    /// The slices in file order.
    pub fn iter(&self) -> impl Iterator<Item = &SpanSlice> {
        self.pieces.iter().flat_map(|piece| self.piece(piece))
    }

    /// Calls `each` on the slices in file order, freeing each list once its last span has been seen.
    pub fn drain(mut self, mut each: impl FnMut(&SpanSlice)) {
        let mut last_use = vec![0usize; self.lists.len()];
        for (p, (list, _)) in self.pieces.iter().enumerate() {
            last_use[*list as usize] = p;
        }
        for (p, piece) in self.pieces.iter().enumerate() {
            self.piece(piece).iter().for_each(&mut each);
            if last_use[piece.0 as usize] == p {
                self.lists[piece.0 as usize] = Vec::new();
            }
        }
    }

    /// The spans as one list, a slice each (`bytes`: the file scanned).
    #[cfg(test)]
    pub(crate) fn flat(self, bytes: &[u8]) -> Vec<SpanSlice> {
        self.iter().flat_map(|slice| slice.spans(bytes)).collect()
    }

    /// The bytes the list holds.
    #[cfg(test)]
    pub(crate) fn bytes_held(&self) -> usize {
        self.lists
            .iter()
            .map(|list| list.capacity() * std::mem::size_of::<SpanSlice>())
            .sum::<usize>()
            + self.lists.capacity() * std::mem::size_of::<Vec<SpanSlice>>()
            + self.pieces.capacity() * std::mem::size_of::<(u32, std::ops::Range<u32>)>()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// A top-level list of exports.
    ExportList,
    Export,
    ResourceSpans,
    /// An element of `resourceSpans`.
    Resource,
    /// The `resource` object of an element of `resourceSpans`: where its attributes are.
    ResourceObject,
    ScopeSpans,
    Scope,
    Spans,
    Span,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    role: Role,
    is_object: bool,
    /// In an object: the next string is a key.
    expect_key: bool,
    /// The role of the value that follows the current key (objects) or of each element (arrays).
    child: Role,
    /// Where this container starts (spans only).
    start: usize,
    /// An export object has shown its `resourceSpans` key.
    has_resource_spans: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Capture {
    None,
    TraceId,
    StartTime,
}

/// Consecutive span objects, `start..end`, read by one block's worker. A run starts at a span object's
/// `{` and ends right after a span object's `}`; between its spans there are only whitespace and commas.
///
/// The worker assumes that its first `{` opens an element of a `spans` array. The serial walk uses a run
/// only when it meets a span object at exactly `start`, which confirms that assumption. From there the
/// worker follows the same rules as the walk, so the walk would have recorded the same spans and, after
/// the last one, be in the same state as at `start`: inside the same `spans` array, nothing to capture.
/// Where the worker meets anything the walk would treat otherwise (or reject), the run ends before that
/// span and the walk reads on by itself, so a run never changes the result, only how fast it is found.
#[derive(Debug, Clone)]
struct Run {
    start: usize,
    end: usize,
    /// Where the run's spans lie in its block's list.
    spans: std::ops::Range<u32>,
}

/// What one block's worker read: its runs' spans back to back in one list, and where each run lies.
/// One list per block, not per run: with one small trace per line a run is a few spans, and a list of
/// its own cost more than the spans in it.
#[derive(Debug, Default)]
struct BlockRuns {
    spans: Vec<SpanSlice>,
    runs: Vec<Run>,
}

/// The string state and bracket depth at a block's first byte, as the bitmask passes see them. They
/// only steer where the workers start; a wrong guess costs speed, not correctness.
#[derive(Clone, Copy, Debug)]
struct BlockStart {
    in_string: bool,
    depth: i64,
}

/// The bracket depth just before a span object's `{`: 6 in one export
/// (`{ resourceSpans [ { scopeSpans [ { spans [`), 7 in a list of exports.
fn span_depth(bytes: &[u8]) -> i64 {
    match bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
    {
        Some(b'[') => 7,
        _ => 6,
    }
}

/// Locates every span of an OTLP export (or list or sequence of exports). `None` when the bytes are not
/// such an export or their structure is broken; the caller then parses the document whole.
pub fn locate_spans(bytes: &[u8]) -> Option<SpanList> {
    locate_spans_in_blocks(bytes, BLOCK)
}

/// Bytes per block of the parallel passes: large enough that a block's work dwarfs its scheduling and its
/// boundary handling, small enough to spread a file over the threads and to stay in cache.
const BLOCK: usize = 1 << 20;

/// The scan with blocks of `block` bytes (tests use tiny blocks so that boundaries fall everywhere).
fn locate_spans_in_blocks(bytes: &[u8], block: usize) -> Option<SpanList> {
    let span_depth = span_depth(bytes);
    let (ranges, lines) = worker_blocks(bytes, block, span_depth);
    if !lines || ranges.len() < 2 {
        let blocks: Vec<BlockRuns> = ranges
            .par_iter()
            .map(|&(from, to, start)| runs_in_block(bytes, from, to, start, span_depth))
            .collect();
        return walk(bytes, blocks);
    }
    match scan_lines(bytes, &ranges, span_depth) {
        Ok(list) => list,
        Err(blocks) => walk(bytes, blocks),
    }
}

/// `traces` small traces of `spans_per_trace` spans each, one OTLP/JSON export a line, in time order:
/// the input the tests of the scan's and the index's bytes per span read.
#[cfg(test)]
pub(crate) fn small_traces_as_lines(traces: usize, spans_per_trace: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    for t in 0..traces {
        let spans: Vec<String> = (0..spans_per_trace)
            .map(|s| {
                format!(
                    r#"{{"traceId":"{t:032x}","spanId":"{s:016x}","name":"s","startTimeUnixNano":"{}"}}"#,
                    1_000 + t * 10 + s
                )
            })
            .collect();
        bytes.extend_from_slice(
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
                spans.join(",")
            )
            .as_bytes(),
        );
        bytes.push(b'\n');
    }
    bytes
}
