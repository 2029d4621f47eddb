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
//! (the stage-1 split of `PERF.md`). Each block starts where its state is known: after a newline in JSON
//! lines, at a span object or a `spans` array in one large export, and elsewhere where a first pass over
//! every byte finds each block's string state and bracket depth. Each block's worker then reads the runs
//! of span objects that start in it with 64-byte bit masks, and the walk reads only what lies between the
//! runs, taking a run wherever it meets its first span: in JSON lines each block's worker walks its own
//! block right after reading its runs, elsewhere one serial walk follows the workers. The workers stop at
//! anything the walk would read differently, so the result is the walk's alone.

use memchr::memchr2;
use rayon::prelude::*;
use wide::u8x16;

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

/// The workers' blocks, `from..to` with the state at `from`, covering the bytes in order.
///
/// In JSON lines every line is a whole document, so a block that starts just after a newline starts
/// outside any string at depth 0, and the stage-1 pass that finds each block's start state is not
/// needed: blocks are cut after the first newline past each `block` bytes. Whether the lines are whole
/// documents is judged from the first line alone; a wrong judgement only sends the workers astray (the
/// walk checks every run it takes), costing speed, not correctness.
/// The second answer is whether the blocks were cut between lines.
///
/// Other files are cut where span objects start ([`anchored_blocks`]); only where too few blocks hold one
/// does the stage-1 pass find every block's start state.
fn worker_blocks(
    bytes: &[u8],
    block: usize,
    span_depth: i64,
) -> (Vec<(usize, usize, BlockStart)>, bool) {
    let block = block.max(1);
    if lines_are_documents(bytes, block) {
        let mut blocks = Vec::with_capacity(bytes.len() / block + 1);
        let mut from = 0;
        while from < bytes.len() {
            let to = match memchr::memchr(b'\n', &bytes[(from + block).min(bytes.len())..]) {
                Some(i) => (from + block + i + 1).min(bytes.len()),
                None => bytes.len(),
            };
            let start = BlockStart {
                in_string: false,
                depth: 0,
            };
            blocks.push((from, to, start));
            from = to;
        }
        return (blocks, true);
    }
    if let Some(blocks) = anchored_blocks(bytes, block, span_depth) {
        return (blocks, false);
    }
    let blocks = block_starts(bytes, block)
        .into_iter()
        .enumerate()
        .map(|(b, start)| (b * block, ((b + 1) * block).min(bytes.len()), start))
        .collect();
    (blocks, false)
}

/// Blocks that each start where span objects do: at the first span object of each block of `block`
/// bytes, or just inside the first `spans` array ([`Anchors`]). There the state is known without the
/// stage-1 pass over every byte: outside any string, at the depth of span objects. Each block runs to the
/// next one's start; a block that holds neither (the file's tail, say) joins the block before it. `None`
/// when that would join more than [`MAX_JOINED`] blocks in one, where only the stage-1 pass can spread
/// the work over the threads.
///
/// Like every start state, these are guesses the walk checks: in a file that is no valid export an anchor
/// may lie inside a string or at another depth, and the worker then reads runs the walk never takes.
fn anchored_blocks(
    bytes: &[u8],
    block: usize,
    span_depth: i64,
) -> Option<Vec<(usize, usize, BlockStart)>> {
    let anchors = Anchors::new();
    let found: Vec<Option<usize>> = (1..bytes.len().div_ceil(block))
        .into_par_iter()
        .map(|b| {
            let from = b * block;
            anchors.in_block(bytes, from, (from + block).min(bytes.len()))
        })
        .collect();
    let mut without = 0;
    for anchor in &found {
        without = if anchor.is_some() { 0 } else { without + 1 };
        if without >= MAX_JOINED {
            return None;
        }
    }
    let mut starts = Vec::with_capacity(found.len() + 2);
    starts.push(0);
    starts.extend(found.into_iter().flatten());
    starts.push(bytes.len());
    // Anchors out of order could only come from a broken file.
    if starts.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let blocks = starts
        .windows(2)
        .enumerate()
        .map(|(b, w)| {
            let depth = if b == 0 { 0 } else { span_depth };
            let start = BlockStart {
                in_string: false,
                depth,
            };
            (w[0], w[1], start)
        })
        .collect();
    Some(blocks)
}

/// Places in a block where a worker can start at the depth of span objects, outside any string.
///
/// - A span object: a `{` after `[` or `,` whose first key is `"traceId"` (the first field of a span, so
///   first in protobuf's JSON) and that reads as a span with a start time other than zero. A link also
///   starts with `"traceId"` but has no start time, and sits two levels deeper.
/// - Just inside a `spans` array: past the `[` after a `"spans"` key. Exports of many resources or scopes
///   hold many; one long array holds one.
///
/// In valid JSON neither key's opening quote can close a string, since a bare word would follow it; an
/// escaped quote opens nothing.
struct Anchors {
    trace_id: memchr::memmem::Finder<'static>,
    spans: memchr::memmem::Finder<'static>,
}

impl Anchors {
    fn new() -> Anchors {
        Anchors {
            trace_id: memchr::memmem::Finder::new(TRACE_ID_KEY),
            spans: memchr::memmem::Finder::new(SPANS_KEY),
        }
    }

    /// The first span object whose key starts in `from..to`, else the first `spans` array.
    fn in_block(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        self.span_object(bytes, from, to)
            .or_else(|| self.spans_array(bytes, from, to))
    }

    fn span_object(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        // A candidate may be read to its end before it is refused, so a block where none is a span (all
        // links, or spans whose first key is another) is given up after a few, not read once per key.
        let mut candidates =
            keys_in(&self.trace_id, TRACE_ID_KEY, bytes, from, to).take(MAX_CANDIDATES);
        candidates.find_map(|(at, _)| {
            let open = at.checked_sub(1 + trailing_ws(&bytes[..at]))?;
            if bytes[open] != b'{' || open < from || !after_separator(bytes, open) {
                return None;
            }
            let mut tokens = Tokens::new(bytes, open);
            tokens.next();
            let span = read_span(&mut tokens, bytes, open)?;
            (span.start_ns != 0).then_some(open)
        })
    }

    fn spans_array(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        keys_in(&self.spans, SPANS_KEY, bytes, from, to)
            .find_map(|(_, value)| (bytes.get(value) == Some(&b'[')).then_some(value + 1))
    }
}

/// Each `key` (quotes included) starting in `from..to` whose opening quote is not escaped and that a colon
/// follows: where it starts, and where its value does.
fn keys_in<'a>(
    finder: &'a memchr::memmem::Finder,
    key: &'static [u8],
    bytes: &'a [u8],
    from: usize,
    to: usize,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    // A key may start before `to` and end past it.
    let reach = &bytes[from..(to + key.len() - 1).min(bytes.len())];
    finder.find_iter(reach).filter_map(move |i| {
        let at = from + i;
        if escaped_at(bytes, at) {
            return None;
        }
        let colon = skip_ws(bytes, at + key.len());
        (bytes.get(colon) == Some(&b':')).then(|| (at, skip_ws(bytes, colon + 1)))
    })
}

/// How many whitespace bytes end `bytes`.
fn trailing_ws(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rev()
        .take_while(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        .count()
}

/// The most `"traceId"` keys tried in one block.
const MAX_CANDIDATES: usize = 32;

/// The most blocks one worker reads when blocks start at anchors.
const MAX_JOINED: usize = 4;

/// The key of the arrays that hold span objects, quotes included.
const SPANS_KEY: &[u8] = b"\"spans\"";

/// A span's first key, quotes included.
const TRACE_ID_KEY: &[u8] = b"\"traceId\"";

/// The first line ends within the first block, is a balanced document outside any string, and
/// more follows it: the file looks like JSON lines, many to a block.
fn lines_are_documents(bytes: &[u8], block: usize) -> bool {
    let Some(end) = memchr::memchr(b'\n', &bytes[..block.min(bytes.len())]) else {
        return false;
    };
    if end + 1 >= bytes.len() || bytes[..end].iter().all(u8::is_ascii_whitespace) {
        return false;
    }
    let first = summarize(bytes, 0, end);
    !first.odd_quotes && first.depth_if_outside == 0
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

/// Stage 1: every block in parallel counts its unescaped quotes and its net bracket depth under both
/// guesses for its first byte (outside or inside a string); a prefix pass then fixes each block's real
/// start state.
fn block_starts(bytes: &[u8], block: usize) -> Vec<BlockStart> {
    let summaries: Vec<BlockSummary> = (0..bytes.len().div_ceil(block))
        .into_par_iter()
        .map(|b| {
            let from = b * block;
            summarize(bytes, from, (from + block).min(bytes.len()))
        })
        .collect();
    let mut state = BlockStart {
        in_string: false,
        depth: 0,
    };
    summaries
        .iter()
        .map(|s| {
            let here = state;
            state.depth += if state.in_string {
                s.depth_if_inside
            } else {
                s.depth_if_outside
            };
            state.in_string ^= s.odd_quotes;
            here
        })
        .collect()
}

struct BlockSummary {
    odd_quotes: bool,
    depth_if_outside: i64,
    depth_if_inside: i64,
}

fn summarize(bytes: &[u8], from: usize, to: usize) -> BlockSummary {
    let mut escape = escaped_at(bytes, from);
    let mut in_string = 0u64;
    let (mut opens_out, mut closes_out, mut opens, mut closes) = (0i64, 0i64, 0i64, 0i64);
    let mut at = from;
    while at < to {
        let m = Masks::load(bytes, at, to);
        let quotes = m.quote & !escapes(m.backslash, &mut escape);
        let inside = prefix_xor(quotes) ^ in_string;
        in_string = ((inside as i64) >> 63) as u64;
        opens += i64::from(m.open.count_ones());
        closes += i64::from(m.close.count_ones());
        opens_out += i64::from((m.open & !inside).count_ones());
        closes_out += i64::from((m.close & !inside).count_ones());
        at += 64;
    }
    BlockSummary {
        // Every string opened in the block flips the last bit of the in-string mask.
        odd_quotes: in_string != 0,
        depth_if_outside: opens_out - closes_out,
        // Starting inside a string inverts the mask for every byte that is not a quote.
        depth_if_inside: (opens - opens_out) - (closes - closes_out),
    }
}

/// Whether the byte at `at` is escaped: an odd run of backslashes ends just before it.
fn escaped_at(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
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

/// The worker of one block: the runs of span objects that start in `from..to`. After a run that ends
/// where its `spans` array does, it looks for the next span object; after a span it cannot read, it looks
/// on from inside that span.
fn runs_in_block(
    bytes: &[u8],
    from: usize,
    to: usize,
    start: BlockStart,
    span_depth: i64,
) -> BlockRuns {
    // The block's spans and runs are gathered in lists the worker reuses, then copied into lists of
    // their exact size: lists grown by doubling held up to twice their items, and the allocator kept
    // what each doubling left behind.
    thread_local! {
        static GATHERED: std::cell::RefCell<BlockRuns> = std::cell::RefCell::default();
    }
    GATHERED.with(|cell| {
        let mut gathered = cell.borrow_mut();
        let BlockRuns { spans, runs } = &mut *gathered;
        spans.clear();
        runs.clear();
        let (mut at, mut state) = (from, start);
        while let Some(first) = first_span_start(bytes, at, to, state, span_depth) {
            let (run, stop) = read_run(bytes, first, to, spans);
            runs.extend(run);
            (at, state) = match stop {
                Stop::BlockEnd => break,
                Stop::After(end) => (
                    end,
                    BlockStart {
                        in_string: false,
                        depth: span_depth,
                    },
                ),
                Stop::Inside(span) => (
                    span + 1,
                    BlockStart {
                        in_string: false,
                        depth: span_depth + 1,
                    },
                ),
            };
        }
        let exact = BlockRuns {
            spans: spans.as_slice().to_vec(),
            runs: runs.as_slice().to_vec(),
        };
        if spans.capacity() > KEEP_GATHERED {
            *spans = Vec::new();
        }
        if runs.capacity() > KEEP_GATHERED {
            *runs = Vec::new();
        }
        exact
    })
}

/// A worker's reused list of spans that grew past this many is not kept for its next block.
const KEEP_GATHERED: usize = 1 << 16;

/// Why a run ended.
enum Stop {
    /// The next span object starts past the block.
    BlockEnd,
    /// Something other than another span object follows the run's last span, which ends here.
    After(usize),
    /// The span object starting here could not be read.
    Inside(usize),
}

/// Reads span objects from the `{` at `first` for as long as they follow each other, start before `to`
/// and can be read, appending them to `spans`.
fn read_run(
    bytes: &[u8],
    first: usize,
    to: usize,
    spans: &mut Vec<SpanSlice>,
) -> (Option<Run>, Stop) {
    let mut tokens = Tokens::new(bytes, first);
    // The first token is the `{` at `first`.
    tokens.next();
    let before = spans.len();
    let mut at = first;
    let stop = loop {
        let Some(span) = read_span(&mut tokens, bytes, at) else {
            break Stop::Inside(at);
        };
        let end = span.end();
        let in_run = spans.len() > before;
        let joined = match spans.last_mut() {
            Some(last) if in_run => last.join(span, bytes),
            _ => Some(span),
        };
        spans.extend(joined);
        match tokens.next() {
            Some(t) if bytes[t] == b',' => {}
            _ => break Stop::After(end),
        }
        match tokens.next() {
            Some(t) if bytes[t] == b'{' => {
                if t >= to {
                    break Stop::BlockEnd;
                }
                at = t;
            }
            _ => break Stop::After(end),
        }
    };
    let run = (spans.len() > before).then(|| Run {
        start: first,
        end: spans[spans.len() - 1].end(),
        spans: before as u32..spans.len() as u32,
    });
    (run, stop)
}

/// The first `{` in `from..to` that, by the block's start state, opens an element of an array at the
/// depth of `spans` arrays. In OTLP only `spans` arrays sit at that depth; the walk confirms it anyway.
fn first_span_start(
    bytes: &[u8],
    from: usize,
    to: usize,
    start: BlockStart,
    span_depth: i64,
) -> Option<usize> {
    let mut escape = escaped_at(bytes, from);
    let mut in_string = if start.in_string { !0 } else { 0 };
    let mut depth = start.depth;
    let mut at = from;
    while at < to {
        let m = Masks::load(bytes, at, to);
        let quotes = m.quote & !escapes(m.backslash, &mut escape);
        let inside = prefix_xor(quotes) ^ in_string;
        in_string = ((inside as i64) >> 63) as u64;
        let mut brackets = (m.open | m.close) & !inside;
        while brackets != 0 {
            let i = at + brackets.trailing_zeros() as usize;
            brackets &= brackets - 1;
            if bytes[i] == b'{' || bytes[i] == b'[' {
                if depth == span_depth && bytes[i] == b'{' && after_separator(bytes, i) {
                    return Some(i);
                }
                depth += 1;
            } else {
                depth -= 1;
            }
        }
        at += 64;
    }
    None
}

/// Whether the last byte before `at` that is not whitespace is `[` or `,`: the `{` is an array element,
/// not an object's value.
fn after_separator(bytes: &[u8], at: usize) -> bool {
    matches!(
        bytes[..at]
            .iter()
            .rev()
            .find(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t')),
        Some(b'[' | b',')
    )
}

/// Reads one span object whose `{` at `start` was the last token taken, with the walk's rules for the
/// inside of a span (every container in it has the role `Other`). `None` wherever the walk would do
/// something else or give up, and for nesting deeper than 64.
fn read_span(tokens: &mut Tokens, bytes: &[u8], start: usize) -> Option<SpanSlice> {
    // Bit d set: the container at depth d (the span itself at 0) is an object.
    let mut objects: u64 = 1;
    let mut depth = 0u32;
    let mut expect_key = true;
    let mut after_key = false;
    let mut capture = Capture::None;
    let mut trace_id: Option<(usize, usize)> = None;
    let mut start_ns: i64 = 0;
    loop {
        let t = tokens.next()?;
        let b = bytes[t];
        if after_key {
            // The walk reads the colon with the key; nothing but whitespace may come between.
            if b != b':' {
                return None;
            }
            after_key = false;
            continue;
        }
        let in_object = objects >> depth & 1 == 1;
        match b {
            b'"' => {
                if in_object && expect_key {
                    expect_key = false;
                    after_key = true;
                    // A key without backslashes ends at the first quote after its text.
                    let rest = &bytes[t + 1..];
                    capture = if depth > 0 {
                        Capture::None
                    } else if rest.starts_with(b"traceId\"") {
                        Capture::TraceId
                    } else if rest.starts_with(b"startTimeUnixNano\"") {
                        Capture::StartTime
                    } else {
                        Capture::None
                    };
                } else {
                    match capture {
                        Capture::TraceId => {
                            let end = string_end(bytes, t + 1)?;
                            if bytes[t + 1..end].contains(&b'\\') {
                                return None;
                            }
                            trace_id = Some((t + 1, end));
                        }
                        Capture::StartTime => {
                            start_ns = parse_int(&bytes[t + 1..string_end(bytes, t + 1)?])?;
                        }
                        Capture::None => {}
                    }
                    capture = Capture::None;
                }
            }
            b'{' | b'[' => {
                if (in_object && expect_key) || depth == 63 {
                    return None;
                }
                depth += 1;
                let is_object = b == b'{';
                objects = (objects & !(1 << depth)) | (u64::from(is_object) << depth);
                expect_key = is_object;
                capture = Capture::None;
            }
            b'}' | b']' => {
                if in_object != (b == b'}') {
                    return None;
                }
                if depth == 0 {
                    // Something still to capture would carry over into the walk's state.
                    if capture != Capture::None {
                        return None;
                    }
                    return SpanSlice::new(start, t + 1, trace_id?, start_ns);
                }
                depth -= 1;
                // A container opens only where no key is expected, and nothing changes that until it
                // closes.
                expect_key = false;
            }
            b',' => {
                if in_object {
                    expect_key = true;
                }
                capture = Capture::None;
            }
            b':' => return None,
            _ => {
                if capture == Capture::StartTime {
                    let end = t + bytes[t..]
                        .iter()
                        .position(|b| {
                            matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                        })
                        .unwrap_or(bytes.len() - t);
                    start_ns = parse_number(&bytes[t..end])?;
                }
                capture = Capture::None;
            }
        }
    }
}

/// The walk's tokens from a position where it starts a token, outside any string: structural bytes,
/// opening quotes and the first byte of each bare value, found 64 bytes at a time with bit masks.
///
/// The masks agree with the walk's byte-by-byte reading as long as bare values are ordinary: the walk
/// runs a bare value on to the next `,` `}` `]` or whitespace, so a quote, `{`, `[` or `:` right after
/// one (or a backslash outside strings) would be swallowed by it. The tokens end before the first such
/// byte.
struct Tokens<'a> {
    bytes: &'a [u8],
    /// Position of bit 0 of `pending`.
    base: usize,
    pending: u64,
    next_base: usize,
    in_string: u64,
    escape: bool,
    /// The byte before `next_base` belongs to a bare value.
    in_bare: bool,
    stopped: bool,
}

impl<'a> Tokens<'a> {
    fn new(bytes: &'a [u8], at: usize) -> Self {
        Tokens {
            bytes,
            base: at,
            pending: 0,
            next_base: at,
            in_string: 0,
            escape: false,
            in_bare: false,
            stopped: false,
        }
    }

    // Called once per token by the span reader's loop: inlined there, it costs a few instructions where
    // a call cost as much as the rest of the token's handling; the load of the next 64 bytes stays out
    // of line.
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.pending == 0 {
            if self.stopped || self.next_base >= self.bytes.len() {
                return None;
            }
            self.load();
        }
        let i = self.pending.trailing_zeros() as usize;
        self.pending &= self.pending - 1;
        Some(self.base + i)
    }

    #[inline(never)]
    fn load(&mut self) {
        let at = self.next_base;
        let m = TokenMasks::load(self.bytes, at, self.bytes.len());
        let quotes = m.quote & !escapes(m.backslash, &mut self.escape);
        let inside = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((inside as i64) >> 63) as u64;
        let bare = !inside & !(m.space | m.structural | m.quote | m.backslash);
        let after_bare = (bare << 1) | u64::from(self.in_bare);
        self.in_bare = bare >> 63 == 1;
        let odd = (m.backslash & !inside) | (after_bare & (m.quote | m.open_or_colon));
        let mut tokens = (m.structural & !inside) | (quotes & inside) | (bare & !after_bare);
        if odd != 0 {
            tokens &= (1u64 << odd.trailing_zeros()) - 1;
            self.stopped = true;
        }
        self.pending = tokens;
        self.base = at;
        self.next_base = at + 64;
    }
}

/// The four 16-byte lanes of the 64 bytes from `at`, those at or past `to` read as spaces.
#[inline(always)]
fn lanes(bytes: &[u8], at: usize, to: usize) -> [Lane; 4] {
    let mut padded = [b' '; 64];
    let chunk: &[u8; 64] = match bytes.get(at..at + 64) {
        Some(chunk) if at + 64 <= to => chunk.try_into().expect("64 bytes"),
        _ => {
            let n = to - at;
            padded[..n].copy_from_slice(&bytes[at..to]);
            &padded
        }
    };
    std::array::from_fn(|k| {
        let v = u8x16::new(chunk[16 * k..16 * k + 16].try_into().expect("16 bytes"));
        Lane {
            v,
            folded: v | u8x16::splat(0x20),
            shift: 16 * k as u32,
        }
    })
}

/// Sixteen of 64 bytes, with the comparisons both mask loaders make of them.
struct Lane {
    v: u8x16,
    /// The bytes with bit 5 set: `{` and `[` (and `}` and `]`) differ only there.
    folded: u8x16,
    /// Where the lane's bits go in a 64-bit mask.
    shift: u32,
}

impl Lane {
    #[inline(always)]
    fn is(&self, c: u8) -> u8x16 {
        self.v.simd_eq(u8x16::splat(c))
    }

    /// `{` or `[`.
    #[inline(always)]
    fn open(&self) -> u8x16 {
        self.folded.simd_eq(u8x16::splat(b'{'))
    }

    /// `}` or `]`.
    #[inline(always)]
    fn close(&self) -> u8x16 {
        self.folded.simd_eq(u8x16::splat(b'}'))
    }

    /// Space, tab, newline, carriage return.
    #[inline(always)]
    fn space(&self) -> u8x16 {
        self.is(b' ') | self.is(b'\n') | self.is(b'\r') | self.is(b'\t')
    }

    /// The lane's matches as bits of a 64-bit mask.
    #[inline(always)]
    fn bits(&self, matches: u8x16) -> u64 {
        u64::from(matches.to_bitmask()) << self.shift
    }
}

/// Bit masks of 64 bytes (bit i: byte `at + i`); bytes at or past `to` read as spaces.
#[derive(Default)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// `{` or `[`.
    open: u64,
    /// `}` or `]`.
    close: u64,
    comma: u64,
    colon: u64,
    /// Space, tab, newline, carriage return.
    space: u64,
}

impl Masks {
    #[inline(always)]
    fn load(bytes: &[u8], at: usize, to: usize) -> Masks {
        let mut m = Masks::default();
        for lane in lanes(bytes, at, to) {
            m.quote |= lane.bits(lane.is(b'"'));
            m.backslash |= lane.bits(lane.is(b'\\'));
            m.open |= lane.bits(lane.open());
            m.close |= lane.bits(lane.close());
            m.comma |= lane.bits(lane.is(b','));
            m.colon |= lane.bits(lane.is(b':'));
            m.space |= lane.bits(lane.space());
        }
        m
    }
}

/// The masks [`Tokens`] reads, with the bytes it treats alike combined before they become bits: five
/// masks instead of [`Masks`]' seven, for the pass that reads every byte of every span.
#[derive(Default)]
struct TokenMasks {
    quote: u64,
    backslash: u64,
    /// `{`, `[`, `}`, `]`, `,` or `:`.
    structural: u64,
    /// `{`, `[` or `:`, which may not follow a bare word.
    open_or_colon: u64,
    /// Space, tab, newline, carriage return.
    space: u64,
}

impl TokenMasks {
    #[inline(always)]
    fn load(bytes: &[u8], at: usize, to: usize) -> TokenMasks {
        let mut m = TokenMasks::default();
        for lane in lanes(bytes, at, to) {
            let (open, colon) = (lane.open(), lane.is(b':'));
            m.quote |= lane.bits(lane.is(b'"'));
            m.backslash |= lane.bits(lane.is(b'\\'));
            m.structural |= lane.bits(open | lane.close() | colon | lane.is(b','));
            m.open_or_colon |= lane.bits(open | colon);
            m.space |= lane.bits(lane.space());
        }
        m
    }
}

/// The bytes escaped by a backslash (the byte after an unescaped backslash). `carry`: the first byte is
/// escaped; on return, the next chunk's first byte is. Backslashes are rare, so a loop over them is
/// cheap.
fn escapes(backslashes: u64, carry: &mut bool) -> u64 {
    let mut escaped = u64::from(*carry);
    *carry = false;
    let mut rest = backslashes;
    while rest != 0 {
        let i = rest.trailing_zeros();
        rest &= rest - 1;
        if escaped >> i & 1 == 0 {
            if i == 63 {
                *carry = true;
            } else {
                escaped |= 1 << (i + 1);
            }
        }
    }
    escaped
}

/// Bit i set when an odd number of bits at or below i are set: with quote bits, the bytes from an
/// opening quote up to (not including) its closing quote.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The serial walk over everything outside the runs: the exact state machine of the whole scan. Where a
/// span object starts at the start of a run, the run's spans are taken as they are and the walk resumes
/// at the run's end, in the state it had at the span's start (see `Run`).
fn walk(bytes: &[u8], blocks: Vec<BlockRuns>) -> Option<SpanList> {
    let mut list = SpanList::default();
    let mut runs = Vec::with_capacity(blocks.len());
    list.lists.reserve_exact(blocks.len());
    for block in blocks {
        runs.push(block.runs);
        list.lists.push(block.spans);
    }
    // Runs start in the blocks they were read in, so block by block they come in file order.
    let runs = runs
        .into_iter()
        .enumerate()
        .flat_map(|(b, runs)| runs.into_iter().map(move |run| (b as u32, run)));
    let end = walk_part(bytes, 0, bytes.len(), runs, &mut list)?;
    for resource in end.resources {
        note_resource(&mut list.resources, bytes, resource, true);
    }
    (end.stack_empty && end.saw_export).then_some(list)
}

/// The walk of block `b` of JSON lines, `from..to`, whose runs the worker read. Blocks cut between
/// lines start where the serial walk, if every line is a whole document, is at depth 0 with nothing to
/// capture (at depth 0 the walk accepts nothing but the next document, which resets the capture); so
/// each block is walked from there by the same rules, and its spans come after the previous block's.
/// `None` when the walk fails or does not end at depth 0 exactly at the block's end (a line was not
/// one document): the serial walk then decides.
fn walk_line_block(
    bytes: &[u8],
    b: usize,
    from: usize,
    to: usize,
    block: &BlockRuns,
) -> Option<(Pieces, WalkEnd)> {
    let runs = block.runs.iter().map(|run| (b as u32, run.clone()));
    let mut pieces = Pieces::default();
    let end = walk_part(bytes, from, to, runs, &mut pieces)?;
    (end.stack_empty && end.at == to).then_some((pieces, end))
}

/// The scan of JSON lines cut into `blocks` between lines: each block's worker reads its runs, then
/// walks the block right away, while its bytes are still in cache (walked in a later pass, every
/// line's envelope was a fresh read from memory). Gives the blocks' runs back when a block's walk
/// fails: the serial walk then decides.
fn scan_lines(
    bytes: &[u8],
    blocks: &[(usize, usize, BlockStart)],
    span_depth: i64,
) -> Result<Option<SpanList>, Vec<BlockRuns>> {
    let (blocks, walks): (Vec<BlockRuns>, Vec<Option<(Pieces, WalkEnd)>>) = blocks
        .par_iter()
        .enumerate()
        .map(|(b, &(from, to, start))| {
            let runs = runs_in_block(bytes, from, to, start, span_depth);
            let walked = walk_line_block(bytes, b, from, to, &runs);
            (runs, walked)
        })
        .unzip();
    if walks.iter().any(Option::is_none) {
        return Err(blocks);
    }
    let mut list = SpanList::default();
    list.lists.reserve_exact(blocks.len());
    list.lists
        .extend(blocks.into_iter().map(|block| block.spans));
    let mut saw_export = false;
    for (pieces, end) in walks.into_iter().flatten() {
        saw_export |= end.saw_export;
        for resource in end.resources {
            note_resource(&mut list.resources, bytes, resource, true);
        }
        for piece in pieces.0 {
            match piece {
                Piece::Run(b, range) => list.take(b, range),
                Piece::Own(mut spans) => list.take_own(&mut spans),
            }
        }
    }
    Ok(saw_export.then_some(list))
}

/// Where spans found by a walk go, in file order: a range of a worker's list, or spans the walk read
/// itself.
trait TakeSpans {
    fn take(&mut self, list: u32, range: std::ops::Range<u32>);
    fn take_own(&mut self, spans: &mut Vec<SpanSlice>);
}

impl TakeSpans for SpanList {
    fn take(&mut self, list: u32, range: std::ops::Range<u32>) {
        SpanList::take(self, list, range);
    }

    fn take_own(&mut self, spans: &mut Vec<SpanSlice>) {
        SpanList::take_own(self, spans);
    }
}

/// What the walk of one block took, in order, to be put in the file's list once every block is walked.
#[derive(Default)]
struct Pieces(Vec<Piece>);

enum Piece {
    Run(u32, std::ops::Range<u32>),
    Own(Vec<SpanSlice>),
}

impl TakeSpans for Pieces {
    fn take(&mut self, list: u32, range: std::ops::Range<u32>) {
        // Consecutive runs of a block make one piece, as in the list itself.
        match self.0.last_mut() {
            Some(Piece::Run(last, taken)) if *last == list && taken.end == range.start => {
                taken.end = range.end;
            }
            _ => self.0.push(Piece::Run(list, range)),
        }
    }

    fn take_own(&mut self, spans: &mut Vec<SpanSlice>) {
        if !spans.is_empty() {
            self.0.push(Piece::Own(std::mem::take(spans)));
        }
    }
}

/// The state a walk ended in.
struct WalkEnd {
    /// Where it stopped: its end, or past it when a string, value or run it met there ran on.
    at: usize,
    stack_empty: bool,
    saw_export: bool,
    /// The resources of the spans it met (see [`ResourceBytes`]).
    resources: Vec<ResourceBytes>,
}

/// The walk's state machine over `from..to`, starting at depth 0 (`runs`: the workers' runs that start
/// there, in file order); `None` when it rejects the structure.
fn walk_part(
    bytes: &[u8],
    from: usize,
    to: usize,
    runs: impl Iterator<Item = (u32, Run)>,
    list: &mut impl TakeSpans,
) -> Option<WalkEnd> {
    let mut runs = runs.peekable();
    // The spans the walk finds itself, between the runs it takes.
    let mut spans = Vec::new();
    let mut stack: Vec<Frame> = Vec::with_capacity(32);
    let mut capture = Capture::None;
    let mut trace_id: Option<(usize, usize)> = None;
    let mut start_ns: i64 = 0;
    let mut saw_export = false;
    let mut resources = Vec::new();
    // The `resource` object of the `resourceSpans` element being walked: its key may follow the spans.
    let mut resource = (0, 0);
    let mut i = from;
    let n = bytes.len();
    while i < to {
        let b = bytes[i];
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {
                i += 1;
            }
            b'"' => {
                let content_start = i + 1;
                let end = string_end(bytes, content_start)?;
                i = end + 1;
                let frame = stack.last_mut()?;
                if frame.is_object && frame.expect_key {
                    frame.expect_key = false;
                    let key = &bytes[content_start..end];
                    frame.child = child_role(frame.role, key);
                    frame.has_resource_spans |= frame.child == Role::ResourceSpans;
                    capture = if frame.role == Role::Span {
                        match key {
                            b"traceId" => Capture::TraceId,
                            b"startTimeUnixNano" => Capture::StartTime,
                            _ => Capture::None,
                        }
                    } else {
                        Capture::None
                    };
                    // The key must be followed by a colon.
                    i = skip_ws(bytes, i);
                    if bytes.get(i) != Some(&b':') {
                        return None;
                    }
                    i += 1;
                } else {
                    match capture {
                        Capture::TraceId => {
                            if bytes[content_start..end].contains(&b'\\') {
                                return None;
                            }
                            trace_id = Some((content_start, end));
                        }
                        Capture::StartTime => start_ns = parse_int(&bytes[content_start..end])?,
                        Capture::None => {}
                    }
                    capture = Capture::None;
                }
            }
            b'{' | b'[' => {
                let role = match stack.last() {
                    None => {
                        if b == b'[' {
                            Role::ExportList
                        } else {
                            Role::Export
                        }
                    }
                    Some(parent) => parent.child,
                };
                // A value where a key was expected is broken structure.
                if let Some(parent) = stack.last()
                    && parent.is_object
                    && parent.expect_key
                {
                    return None;
                }
                let is_object = b == b'{';
                let role = match (role, is_object) {
                    (
                        Role::ResourceSpans | Role::ScopeSpans | Role::Spans | Role::ExportList,
                        true,
                    ) => {
                        return None;
                    }
                    (Role::Export | Role::Resource | Role::Scope | Role::Span, false) => {
                        return None;
                    }
                    (r, _) => r,
                };
                if role == Role::Export {
                    saw_export = true;
                }
                if role == Role::Resource {
                    resource = (0, 0);
                }
                if role == Role::Span {
                    while runs.next_if(|(_, run)| run.start < i).is_some() {}
                    if let Some((b, run)) = runs.next_if(|(_, run)| run.start == i) {
                        list.take_own(&mut spans);
                        list.take(b, run.spans);
                        i = run.end;
                        capture = Capture::None;
                        continue;
                    }
                    trace_id = None;
                    start_ns = 0;
                }
                stack.push(Frame {
                    role,
                    is_object,
                    expect_key: is_object,
                    child: element_role(role),
                    start: i,
                    has_resource_spans: false,
                });
                capture = Capture::None;
                i += 1;
            }
            b'}' | b']' => {
                let frame = stack.pop()?;
                if frame.is_object != (b == b'}')
                    || (frame.role == Role::Export && !frame.has_resource_spans)
                {
                    return None;
                }
                match frame.role {
                    Role::Span => {
                        spans.push(SpanSlice::new(frame.start, i + 1, trace_id?, start_ns)?);
                    }
                    Role::ResourceObject if frame.is_object => resource = (frame.start, i + 1),
                    Role::Resource => {
                        let entry = ResourceBytes {
                            element: frame.start,
                            resource,
                        };
                        note_resource(&mut resources, bytes, entry, false);
                    }
                    _ => {}
                }
                i += 1;
            }
            b',' => {
                if let Some(frame) = stack.last_mut()
                    && frame.is_object
                {
                    frame.expect_key = true;
                }
                capture = Capture::None;
                i += 1;
            }
            b':' => return None,
            _ => {
                // A number, true, false or null: up to the next delimiter.
                let begin = i;
                while i < n
                    && !matches!(bytes[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                {
                    i += 1;
                }
                if stack.is_empty() {
                    return None;
                }
                if capture == Capture::StartTime {
                    start_ns = parse_number(&bytes[begin..i])?;
                }
                capture = Capture::None;
            }
        }
    }
    list.take_own(&mut spans);
    Some(WalkEnd {
        at: i,
        stack_empty: stack.is_empty(),
        saw_export,
        resources,
    })
}

/// The role of elements of an array with `role` (objects: the role before any key is read).
fn element_role(role: Role) -> Role {
    match role {
        Role::ExportList => Role::Export,
        Role::ResourceSpans => Role::Resource,
        Role::ScopeSpans => Role::Scope,
        Role::Spans => Role::Span,
        _ => Role::Other,
    }
}

/// The role of the value under `key` in an object with `role`.
fn child_role(role: Role, key: &[u8]) -> Role {
    match (role, key) {
        (Role::Export, b"resourceSpans") => Role::ResourceSpans,
        (Role::Resource, b"scopeSpans") => Role::ScopeSpans,
        (Role::Resource, b"resource") => Role::ResourceObject,
        (Role::Scope, b"spans") => Role::Spans,
        _ => Role::Other,
    }
}

/// Index of the closing quote of a string whose contents start at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let hit = first_of(bytes, from, bytes.len(), true)?;
        if bytes[hit] == b'"' {
            return Some(hit);
        }
        from = hit + 2;
        if from > bytes.len() {
            return None;
        }
    }
}

/// Where the first quote (or, with `backslash`, backslash) in `from..end` is.
///
/// Keys and trace ids are short, and memchr's setup for each one cost more than the search itself:
/// their first 48 bytes are searched sixteen at a time, and only a longer string is left to memchr.
#[inline]
pub(crate) fn first_of(bytes: &[u8], from: usize, end: usize, backslash: bool) -> Option<usize> {
    let end = end.min(bytes.len());
    let mut at = from.min(end);
    for _ in 0..3 {
        let Some(chunk) = bytes[..end].get(at..at + 16) else {
            break;
        };
        let lane = u8x16::new(chunk.try_into().expect("16 bytes"));
        let mut hits = lane.simd_eq(u8x16::splat(b'"'));
        if backslash {
            hits |= lane.simd_eq(u8x16::splat(b'\\'));
        }
        let hits = hits.to_bitmask();
        if hits != 0 {
            return Some(at + hits.trailing_zeros() as usize);
        }
        at += 16;
    }
    let rest = &bytes[at..end];
    let found = if backslash {
        memchr2(b'"', b'\\', rest)
    } else {
        memchr::memchr(b'"', rest)
    };
    found.map(|i| at + i)
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// A decimal integer string as OTLP writes nanosecond times. Anything else: give up, so the full parser
/// reports it.
fn parse_int(text: &[u8]) -> Option<i64> {
    decimal_i64(text)
}

/// 1 to 19 ASCII digits (every nanosecond time OTLP writes) as an `i64`; `None` for anything else and
/// for values past `i64::MAX`, which `str::parse` would refuse too. Eight digits are read at a time:
/// a nanosecond time is 19 digits, and every span has two of them, read by the scan and again by the
/// decoder.
pub(crate) fn decimal_i64(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 19 {
        return None;
    }
    // Nineteen digits stay below `u64::MAX`, so the sum cannot overflow.
    let mut n: u64 = 0;
    let mut chunks = text.chunks_exact(8);
    for chunk in &mut chunks {
        let eight = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        n = n * 100_000_000 + eight_digits(eight)?;
    }
    for &b in chunks.remainder() {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n * 10 + u64::from(digit);
    }
    i64::try_from(n).ok()
}

/// The value of eight ASCII digits loaded little-endian (the first digit in the low byte), or `None`
/// when a byte is not a digit.
fn eight_digits(eight: u64) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // A digit's high nibble is 3, and adding 6 to its low nibble does not carry into the high one.
    let high = eight & (0xF0 * ONES);
    let past_nine = eight.wrapping_add(0x06 * ONES) & (0xF0 * ONES);
    if high != 0x30 * ONES || past_nine != 0x30 * ONES {
        return None;
    }
    // Pairs, then fours, then all eight: each step multiplies neighbours together in one product.
    let digits = eight & (0x0F * ONES);
    let pairs = (digits.wrapping_mul(10 << 8 | 1)) >> 8 & 0x00FF_00FF_00FF_00FF;
    let fours = (pairs.wrapping_mul(100 << 16 | 1)) >> 16 & 0x0000_FFFF_0000_FFFF;
    Some((fours.wrapping_mul(10_000 << 32 | 1)) >> 32)
}

/// A JSON number; fractions truncate, as the span reader does.
fn parse_number(text: &[u8]) -> Option<i64> {
    if let Some(i) = parse_int(text) {
        return Some(i);
    }
    let f: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    f.is_finite().then_some(f.trunc() as i64)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn ids(bytes: &[u8]) -> Vec<(String, i64, String)> {
        locate_spans(bytes)
            .unwrap()
            .flat(bytes)
            .into_iter()
            .map(|s| {
                let id = s.trace_id(bytes);
                (
                    String::from_utf8(bytes[id.0..id.1].to_vec()).unwrap(),
                    s.start_ns,
                    String::from_utf8(bytes[s.start()..s.end()].to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn finds_spans_in_one_export_a_list_and_lines() {
        let one = br#"{"resource": {"attributes": [{"key": "spans", "value": {"stringValue": "{\"spans\": ["}}]},
          "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
            {"traceId": "t1", "spanId": "a", "startTimeUnixNano": "5", "attributes": [{"key": "k", "value": {"arrayValue": {"values": []}}}]},
            {"spanId": "b", "traceId": "t2", "startTimeUnixNano": 7}
          ]}]}]}"#;
        let found = ids(one);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].0.as_str(), found[0].1), ("t1", 5));
        assert!(found[0].2.starts_with('{') && found[0].2.ends_with('}'));
        assert_eq!((found[1].0.as_str(), found[1].1), ("t2", 7));

        let list = br#"[{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "a"}]}]}]}, {"resourceSpans": []}]"#;
        assert_eq!(ids(list).len(), 1);
        let lines = b"{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [{\"traceId\": \"a\"}]}]}]}\n{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [{\"traceId\": \"b\"}]}]}]}\n";
        assert_eq!(ids(lines).len(), 2);
    }

    #[test]
    fn gives_up_on_what_it_does_not_understand() {
        for bad in [
            &br#"{"resourceSpans": [}"#[..],
            br#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "no trace id"}]}]}]}"#,
            br#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "startTimeUnixNano": "abc"}]}]}]}"#,
            br#"{"data": []}"#,
            br#"{"resourceSpans" []}"#,
            br#"{"resourceSpans": "x"#,
            br#"[1, 2]"#,
        ] {
            assert!(locate_spans(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// The serial byte-by-byte scan the parallel one replaced, kept word for word as the reference.
    fn serial_reference(bytes: &[u8]) -> Option<Vec<SpanSlice>> {
        let mut spans = Vec::new();
        let mut stack: Vec<Frame> = Vec::with_capacity(32);
        let mut capture = Capture::None;
        let mut trace_id: Option<(usize, usize)> = None;
        let mut start_ns: i64 = 0;
        let mut saw_export = false;
        let mut i = 0;
        let n = bytes.len();
        while i < n {
            let b = bytes[i];
            match b {
                b' ' | b'\n' | b'\r' | b'\t' => {
                    i += 1;
                }
                b'"' => {
                    let content_start = i + 1;
                    let end = string_end(bytes, content_start)?;
                    i = end + 1;
                    let frame = stack.last_mut()?;
                    if frame.is_object && frame.expect_key {
                        frame.expect_key = false;
                        let key = &bytes[content_start..end];
                        frame.child = child_role(frame.role, key);
                        frame.has_resource_spans |= frame.child == Role::ResourceSpans;
                        capture = if frame.role == Role::Span {
                            match key {
                                b"traceId" => Capture::TraceId,
                                b"startTimeUnixNano" => Capture::StartTime,
                                _ => Capture::None,
                            }
                        } else {
                            Capture::None
                        };
                        // The key must be followed by a colon.
                        i = skip_ws(bytes, i);
                        if bytes.get(i) != Some(&b':') {
                            return None;
                        }
                        i += 1;
                    } else {
                        match capture {
                            Capture::TraceId => {
                                if bytes[content_start..end].contains(&b'\\') {
                                    return None;
                                }
                                trace_id = Some((content_start, end));
                            }
                            Capture::StartTime => start_ns = parse_int(&bytes[content_start..end])?,
                            Capture::None => {}
                        }
                        capture = Capture::None;
                    }
                }
                b'{' | b'[' => {
                    let role = match stack.last() {
                        None => {
                            if b == b'[' {
                                Role::ExportList
                            } else {
                                Role::Export
                            }
                        }
                        Some(parent) => parent.child,
                    };
                    // A value where a key was expected is broken structure.
                    if let Some(parent) = stack.last()
                        && parent.is_object
                        && parent.expect_key
                    {
                        return None;
                    }
                    let is_object = b == b'{';
                    let role = match (role, is_object) {
                        (
                            Role::ResourceSpans | Role::ScopeSpans | Role::Spans | Role::ExportList,
                            true,
                        ) => {
                            return None;
                        }
                        (Role::Export | Role::Resource | Role::Scope | Role::Span, false) => {
                            return None;
                        }
                        (r, _) => r,
                    };
                    if role == Role::Export {
                        saw_export = true;
                    }
                    if role == Role::Span {
                        trace_id = None;
                        start_ns = 0;
                    }
                    stack.push(Frame {
                        role,
                        is_object,
                        expect_key: is_object,
                        child: element_role(role),
                        start: i,
                        has_resource_spans: false,
                    });
                    capture = Capture::None;
                    i += 1;
                }
                b'}' | b']' => {
                    let frame = stack.pop()?;
                    if frame.is_object != (b == b'}')
                        || (frame.role == Role::Export && !frame.has_resource_spans)
                    {
                        return None;
                    }
                    if frame.role == Role::Span {
                        spans.push(SpanSlice::new(frame.start, i + 1, trace_id?, start_ns)?);
                    }
                    i += 1;
                }
                b',' => {
                    if let Some(frame) = stack.last_mut()
                        && frame.is_object
                    {
                        frame.expect_key = true;
                    }
                    capture = Capture::None;
                    i += 1;
                }
                b':' => return None,
                _ => {
                    // A number, true, false or null: up to the next delimiter.
                    let begin = i;
                    while i < n
                        && !matches!(bytes[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                    {
                        i += 1;
                    }
                    if stack.is_empty() {
                        return None;
                    }
                    if capture == Capture::StartTime {
                        start_ns = parse_number(&bytes[begin..i])?;
                    }
                    capture = Capture::None;
                }
            }
        }
        (stack.is_empty() && saw_export).then_some(spans)
    }
    /// A small deterministic generator (xorshift), so the documents are the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len() as u64) as usize]
        }
    }

    /// String contents (already JSON-escaped) that look like structure to a careless scanner.
    const TRICKY: &[&str] = &[
        "plain",
        r#"\"}]}]}"#,
        r#",{\"traceId\":\"fake\","#,
        r#"\\\\\\\""#,
        r#"\\"#,
        r#"ends with a backslash \\"#,
        r#"\"spans\": [{"#,
        "é€😀 multi-byte",
        r#"\u00e9\ud83d\ude00"#,
        "{[",
        "]}",
        r#"a:b,c"#,
        "",
    ];

    /// Whitespace and layout of a generated document.
    struct Layout {
        pretty: bool,
        depth: usize,
    }

    impl Layout {
        fn nl(&self, out: &mut String) {
            if self.pretty {
                out.push('\n');
                for _ in 0..self.depth {
                    out.push(' ');
                }
            }
        }
        fn sep(&self) -> &'static str {
            if self.pretty { ": " } else { ":" }
        }
    }

    fn string(rng: &mut Rng) -> String {
        let mut s = String::from("\"");
        for _ in 0..rng.below(3) {
            s.push_str(rng.pick(TRICKY));
        }
        s.push('"');
        s
    }

    /// An attribute value: strings, numbers, booleans, nested arrays and key-value lists.
    fn any_value(rng: &mut Rng, l: &mut Layout, out: &mut String, nest: u32) {
        let sep = l.sep();
        match rng.below(if nest > 2 { 4 } else { 6 }) {
            0 => out.push_str(&format!("{{\"stringValue\"{sep}{}}}", string(rng))),
            1 => out.push_str(&format!("{{\"intValue\"{sep}\"{}\"}}", rng.below(1000))),
            2 => out.push_str(&format!("{{\"doubleValue\"{sep}{}.5e-3}}", rng.below(100))),
            3 => out.push_str(&format!("{{\"boolValue\"{sep}{}}}", rng.chance(50))),
            4 => {
                out.push_str(&format!("{{\"arrayValue\"{sep}{{\"values\"{sep}["));
                for k in 0..rng.below(3) {
                    if k > 0 {
                        out.push(',');
                    }
                    any_value(rng, l, out, nest + 1);
                }
                out.push_str("]}}");
            }
            _ => {
                out.push_str(&format!("{{\"kvlistValue\"{sep}{{\"values\"{sep}"));
                attributes(rng, l, out, nest + 1);
                out.push_str("}}");
            }
        }
    }

    fn attributes(rng: &mut Rng, l: &mut Layout, out: &mut String, nest: u32) {
        let sep = l.sep();
        out.push('[');
        l.depth += 1;
        for k in 0..rng.below(4) {
            if k > 0 {
                out.push(',');
            }
            l.nl(out);
            out.push_str(&format!("{{\"key\"{sep}{},", string(rng)));
            l.nl(out);
            out.push_str(&format!("\"value\"{sep}"));
            any_value(rng, l, out, nest);
            out.push('}');
        }
        l.depth -= 1;
        l.nl(out);
        out.push(']');
    }

    fn span(rng: &mut Rng, l: &mut Layout, out: &mut String) {
        let sep = l.sep();
        let mut fields: Vec<String> = vec![
            format!("\"traceId\"{sep}\"{:032x}\"", rng.below(5)),
            format!("\"spanId\"{sep}\"{:016x}\"", rng.next()),
            format!("\"name\"{sep}{}", string(rng)),
            format!("\"kind\"{sep}{}", rng.below(5)),
            format!("\"endTimeUnixNano\"{sep}\"{}\"", rng.below(1 << 40)),
        ];
        match rng.below(4) {
            0 => fields.push(format!(
                "\"startTimeUnixNano\"{sep}\"{}\"",
                rng.below(1 << 60)
            )),
            1 => fields.push(format!("\"startTimeUnixNano\"{sep}{}", rng.below(1 << 50))),
            2 => fields.push(format!(
                "\"startTimeUnixNano\"{sep}{}.75",
                rng.below(1 << 30)
            )),
            _ => {}
        }
        let mut attrs = String::new();
        attributes(rng, l, &mut attrs, 0);
        fields.push(format!("\"attributes\"{sep}{attrs}"));
        if rng.chance(40) {
            let mut links = String::from("[");
            for k in 0..rng.below(3) {
                if k > 0 {
                    links.push(',');
                }
                links.push_str(&format!(
                    "{{\"traceId\"{sep}\"{:032x}\",\"spanId\"{sep}\"{:016x}\",\"attributes\"{sep}[]}}",
                    rng.next(),
                    rng.next()
                ));
            }
            links.push(']');
            fields.push(format!("\"links\"{sep}{links}"));
        }
        fields.push(format!(
            "\"status\"{sep}{{\"code\"{sep}{}, \"message\"{sep}{}}}",
            rng.below(3),
            string(rng)
        ));
        if rng.chance(20) {
            // The same keys one level down belong to another object, not to the span.
            fields.push(format!(
                "\"parent\"{sep}{{\"traceId\"{sep}\"p{}\",\"startTimeUnixNano\"{sep}\"{}\"}}",
                rng.below(9),
                rng.below(9)
            ));
        }
        // Shuffle the field order.
        for k in (1..fields.len()).rev() {
            fields.swap(k, rng.below(k as u64 + 1) as usize);
        }
        out.push('{');
        l.depth += 1;
        for (k, f) in fields.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            l.nl(out);
            out.push_str(f);
        }
        l.depth -= 1;
        l.nl(out);
        out.push('}');
    }

    /// `open` + items + `]`, each item written by `item`.
    fn list(
        rng: &mut Rng,
        l: &mut Layout,
        out: &mut String,
        count: u64,
        item: fn(&mut Rng, &mut Layout, &mut String),
    ) {
        out.push('[');
        l.depth += 1;
        for k in 0..count {
            if k > 0 {
                out.push(',');
            }
            l.nl(out);
            item(rng, l, out);
        }
        l.depth -= 1;
        l.nl(out);
        out.push(']');
    }

    fn scope_spans(rng: &mut Rng, l: &mut Layout, out: &mut String) {
        let sep = l.sep();
        out.push_str(&format!(
            "{{\"scope\"{sep}{{\"name\"{sep}{}}},",
            string(rng)
        ));
        l.nl(out);
        out.push_str(&format!("\"spans\"{sep}"));
        let n = [0, 1, 2, 5][rng.below(4) as usize];
        list(rng, l, out, n, span);
        out.push('}');
    }

    /// An element of `resourceSpans`: its resource before its spans, after them, or none.
    fn resource_spans(rng: &mut Rng, l: &mut Layout, out: &mut String) {
        let sep = l.sep();
        let placement = rng.below(4);
        let mut resource = format!("\"resource\"{sep}{{\"attributes\"{sep}");
        attributes(rng, l, &mut resource, 0);
        resource.push('}');
        out.push('{');
        if placement < 2 {
            out.push_str(&resource);
            out.push(',');
            l.nl(out);
        }
        out.push_str(&format!("\"scopeSpans\"{sep}"));
        let n = rng.below(4);
        list(rng, l, out, n, scope_spans);
        if placement == 2 {
            out.push(',');
            l.nl(out);
            out.push_str(&resource);
        }
        out.push('}');
    }

    /// Each span's resource as the scan finds it (the resource of the last element that begins
    /// before the span), in file order.
    fn scanned_resources(bytes: &[u8], block: usize) -> Vec<Option<Value>> {
        let list = locate_spans_in_blocks(bytes, block).expect("a generated export scans");
        let resources = list.resources().to_vec();
        list.flat(bytes)
            .iter()
            .map(|span| {
                let entry = resources.partition_point(|r| r.element <= span.start());
                let (from, to) = resources[entry.checked_sub(1)?].resource;
                (from != to).then(|| serde_json::from_slice(&bytes[from..to]).unwrap())
            })
            .collect()
    }

    /// Each span's resource as a JSON parser reads the document, in file order.
    fn parsed_resources(bytes: &[u8]) -> Vec<Option<Value>> {
        let mut out = Vec::new();
        for doc in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
            let doc = doc.unwrap();
            let exports = match doc {
                Value::Array(exports) => exports,
                export => vec![export],
            };
            for export in &exports {
                for element in export["resourceSpans"].as_array().into_iter().flatten() {
                    for scope in element["scopeSpans"].as_array().into_iter().flatten() {
                        for _ in scope["spans"].as_array().into_iter().flatten() {
                            out.push(element.get("resource").cloned());
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_span_finds_its_resource_at_any_block_size() {
        let mut rng = Rng(0x005e_ed0f_7e50_u64);
        let mut with_resource = 0;
        for _ in 0..200 {
            let doc = document(&mut rng);
            let expected = parsed_resources(doc.as_bytes());
            with_resource += expected.iter().flatten().count();
            for block in [7, 13, 64, 100, 4096] {
                assert_eq!(
                    scanned_resources(doc.as_bytes(), block),
                    expected,
                    "block {block}:\n{doc}"
                );
            }
        }
        assert!(with_resource > 500, "{with_resource} spans with a resource");
    }

    fn export(rng: &mut Rng, l: &mut Layout, out: &mut String) {
        let sep = l.sep();
        out.push('{');
        l.depth += 1;
        l.nl(out);
        out.push_str(&format!("\"resourceSpans\"{sep}"));
        let n = rng.below(4);
        list(rng, l, out, n, resource_spans);
        l.depth -= 1;
        l.nl(out);
        out.push('}');
    }

    /// One export, a list of exports, or exports one per line; pretty or compact.
    fn document(rng: &mut Rng) -> String {
        let mut l = Layout {
            pretty: rng.chance(50),
            depth: 0,
        };
        let mut out = String::new();
        match rng.below(3) {
            0 => export(rng, &mut l, &mut out),
            1 => {
                let n = 1 + rng.below(3);
                list(rng, &mut l, &mut out, n, export);
            }
            _ => {
                l.pretty = false;
                for _ in 0..=rng.below(3) {
                    export(rng, &mut l, &mut out);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// A document with one random edit: a byte dropped, a structural byte inserted, or the end cut off.
    fn broken(rng: &mut Rng, doc: &str) -> Vec<u8> {
        let mut bytes = doc.as_bytes().to_vec();
        let at = rng.below(bytes.len() as u64) as usize;
        match rng.below(6) {
            // Balanced pieces keep the brackets matched, so only the finer rules can catch them.
            4 | 5 => {
                let piece = [
                    "{}",
                    "[]",
                    "\"x\"",
                    "1",
                    "\"k\":",
                    ",",
                    ":",
                    "x\"",
                    "1{}",
                    "\\\"",
                    "\"k\" 1",
                    "{\"a\"}",
                    "[\"a\":1]",
                    "\"traceId\":",
                    ",\"traceId\":\"t\\\"\"",
                    "tru\"e\"",
                ];
                let piece = piece[rng.below(piece.len() as u64) as usize].as_bytes();
                bytes.splice(at..at, piece.iter().copied());
            }
            0 => {
                bytes.remove(at);
            }
            1 => bytes.insert(at, b"\"{}[],:\\ 1x"[rng.below(11) as usize]),
            2 => bytes.truncate(at),
            _ => bytes[at] = b"\"{}[],:\\ 1x"[rng.below(11) as usize],
        }
        bytes
    }

    /// The parallel scan of `bytes` in blocks of `block` gives `expected`, the serial scan's result.
    fn assert_scans_as_serial(bytes: &[u8], block: usize, expected: Option<&Vec<SpanSlice>>) {
        assert_eq!(
            locate_spans_in_blocks(bytes, block)
                .map(|list| list.flat(bytes))
                .as_ref(),
            expected,
            "block {block}:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }

    /// The parallel scan, and how many of its spans came from the workers' runs.
    fn parallel(bytes: &[u8], block: usize) -> (Option<Vec<SpanSlice>>, usize) {
        let depth = span_depth(bytes);
        let from_runs = worker_blocks(bytes, block, depth)
            .0
            .into_iter()
            .map(|(from, to, s)| {
                let runs = runs_in_block(bytes, from, to, s, depth);
                runs.spans.iter().map(SpanSlice::count).sum::<usize>()
            })
            .sum();
        (
            locate_spans_in_blocks(bytes, block).map(|list| list.flat(bytes)),
            from_runs,
        )
    }

    /// The scan's result holds each trace's consecutive spans in one record of 24 bytes, plus a few bytes
    /// per block: small traces one to a line made a list per run of three spans, and the walk copied
    /// every span into one more list of 40 bytes a span, so a file's scan held several times this at its
    /// end; a record per span held 24 bytes per span.
    #[test]
    fn the_scan_holds_twenty_four_bytes_per_trace_of_consecutive_spans() {
        assert_eq!(std::mem::size_of::<SpanSlice>(), 24);
        let (traces, spans_per_trace) = (3_000, 3);
        let bytes = small_traces_as_lines(traces, spans_per_trace);
        let block = 1 << 14;
        let found = locate_spans_in_blocks(&bytes, block).unwrap();
        let spans = traces * spans_per_trace;
        assert_eq!(found.len(), spans);
        assert_eq!(found.slices(), traces);
        let blocks = bytes.len().div_ceil(block);
        let held = found.bytes_held();
        assert!(
            held <= traces * 24 + blocks * 64,
            "{held} bytes held for {traces} traces in {blocks} blocks"
        );
        let first = found.iter().next().unwrap();
        let id = first.trace_id(&bytes);
        assert_eq!(&bytes[id.0..id.1], format!("{:032x}", 0).as_bytes());
        assert_eq!((first.count(), first.start_ns), (3, 1_000));
        assert_eq!(first.spans(&bytes).len(), 3);
    }

    #[test]
    fn spans_of_one_trace_join_while_they_follow_each_other_and_stay_small() {
        let wrap = |spans: &str| {
            format!(r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{spans}]}}]}}]}}"#)
        };
        let big = "x".repeat(JOIN_BYTES / 2);
        let doc = wrap(
            &[
                r#"{"traceId":"a","startTimeUnixNano":"5"}"#.to_string(),
                r#" {"traceId":"a","startTimeUnixNano":"3"}"#.to_string(),
                r#"{"traceId":"b"}"#.to_string(),
                r#"{"traceId":"a"}"#.to_string(),
                format!(r#"{{"traceId":"c","name":"{big}"}}"#),
                format!(r#"{{"traceId":"c","name":"{big}"}}"#),
            ]
            .join(","),
        );
        let found = locate_spans(doc.as_bytes()).unwrap();
        let slices: Vec<(usize, i64)> = found.iter().map(|s| (s.count(), s.start_ns)).collect();
        assert_eq!(slices, [(2, 3), (1, 0), (1, 0), (1, 0), (1, 0)]);
        assert_eq!(found.len(), 6);
        assert_eq!(
            found.flat(doc.as_bytes()),
            serial_reference(doc.as_bytes()).unwrap()
        );
    }

    #[test]
    fn parallel_scan_matches_the_serial_scan_on_generated_exports() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut spans = 0;
        for n in 0..300 {
            let doc = document(&mut rng);
            let expected = serial_reference(doc.as_bytes());
            let expected = expected.expect("a generated export scans");
            spans += expected.len();
            // Blocks of one byte put a boundary everywhere, but are slow; a few documents suffice.
            let tiny: &[usize] = if n % 20 == 0 { &[1, 2] } else { &[] };
            for &block in tiny.iter().chain(&[7, 13, 64, 100, 4096]) {
                let (found, from_runs) = parallel(doc.as_bytes(), block);
                assert_eq!(found.as_ref(), Some(&expected), "block {block}:\n{doc}");
                // The workers, not the serial walk, found the spans.
                assert_eq!(from_runs, expected.len(), "block {block}:\n{doc}");
            }
        }
        assert!(spans > 1000, "{spans} spans");
    }

    /// One export of `resources` resource records, pretty or compact: many `spans` arrays, so that
    /// blocks of a few kilobytes each hold the key of one.
    fn many_resources(rng: &mut Rng, pretty: bool, resources: u64) -> String {
        let mut l = Layout { pretty, depth: 0 };
        let mut out = String::from("{\"resourceSpans\": ");
        list(rng, &mut l, &mut out, resources, resource_spans);
        out.push('}');
        out
    }

    #[test]
    fn blocks_start_at_span_objects_without_the_stage_one_pass() {
        let mut rng = Rng(0x1656_67b1_9e37_79f9);
        for pretty in [false, true] {
            let doc = many_resources(&mut rng, pretty, 400);
            let bytes = doc.as_bytes();
            let expected = serial_reference(bytes).expect("a generated export scans");
            assert!(expected.len() > 300, "{} spans", expected.len());
            for block in [2 << 10, 16 << 10] {
                let blocks = anchored_blocks(bytes, block, span_depth(bytes))
                    .expect("blocks hold span objects");
                assert!(blocks.len() > 4, "{} blocks", blocks.len());
                for (from, _, start) in &blocks[1..] {
                    let at_span = expected.iter().any(|span| span.start() == *from);
                    let in_array = bytes[..*from].ends_with(b"[");
                    assert!(at_span || in_array, "block at {from}");
                    assert_eq!((start.in_string, start.depth), (false, 6));
                }
                let (found, from_runs) = parallel(bytes, block);
                assert_eq!(found.as_ref(), Some(&expected), "block {block}");
                assert_eq!(from_runs, expected.len(), "block {block}");
            }
        }
        // In a list of exports span objects lie one level deeper.
        let exports: Vec<String> = (0..3)
            .map(|_| many_resources(&mut rng, false, 100))
            .collect();
        let list = format!("[{}]", exports.join(",\n"));
        let bytes = list.as_bytes();
        assert_eq!(span_depth(bytes), 7);
        let expected = serial_reference(bytes).expect("a list of exports scans");
        let blocks = anchored_blocks(bytes, 4 << 10, 7).expect("blocks hold span objects");
        assert!(blocks[1..].iter().all(|&(_, _, start)| start.depth == 7));
        let (found, from_runs) = parallel(bytes, 4 << 10);
        assert_eq!(found.as_ref(), Some(&expected));
        assert_eq!(from_runs, expected.len());
    }

    /// One long `spans` array whose spans each carry links: blocks start at spans, never at links.
    #[test]
    fn blocks_in_one_long_spans_array_start_at_spans_not_links() {
        let spans: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    r#"{{"traceId": "t{}", "spanId": "s{i}", "links": [{{"traceId": "l", "spanId": "a"}}, {{"traceId": "m", "spanId": "b"}}], "startTimeUnixNano": "{}", "name": "x"}}"#,
                    i % 3,
                    i + 1
                )
            })
            .collect();
        let doc = format!(
            r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{}]}}]}}]}}"#,
            spans.join(", ")
        );
        let bytes = doc.as_bytes();
        let expected = serial_reference(bytes).expect("the export scans");
        assert_eq!(expected.len(), 200);
        for block in [100, 256, 1000] {
            let blocks = anchored_blocks(bytes, block, 6).expect("blocks hold spans");
            assert!(blocks.len() > 10, "{} blocks", blocks.len());
            for (from, _, _) in &blocks[1..] {
                assert!(
                    bytes[*from..].starts_with(br#"{"traceId": "t"#),
                    "block at {from}"
                );
            }
            let (found, from_runs) = parallel(bytes, block);
            assert_eq!(found.as_ref(), Some(&expected), "block {block}");
            assert_eq!(from_runs, 200, "block {block}");
        }
        // Without start times no span can be told from a link: the stage-1 pass places the blocks.
        let timeless = doc.replace("startTimeUnixNano", "endTimeUnixNano");
        assert!(anchored_blocks(timeless.as_bytes(), 256, 6).is_none());
        let (found, from_runs) = parallel(timeless.as_bytes(), 256);
        assert_eq!(found.map(|spans| spans.len()), Some(200));
        assert_eq!(from_runs, 200);
    }

    #[test]
    fn anchors_are_unescaped_keys_of_spans_and_spans_arrays() {
        let anchors = Anchors::new();
        let arrays: [(&[u8], Option<usize>); 6] = [
            (br#"{"spans": ["#, Some(11)),
            (b"{\"spans\"\n :\t[ {", Some(13)),
            // An escaped quote: this ends a key `x"spans`.
            (br#"{"x\"spans": [{"a": 1}]"#, None),
            // An escaped backslash leaves the quote after it unescaped.
            (br#"{"x\\"spans": ["#, Some(15)),
            (br#"{"spans": {"#, None),
            (br#"{"spans" "x": ["#, None),
        ];
        for (text, expected) in arrays {
            let found = anchors.spans_array(text, 0, text.len());
            assert_eq!(found, expected, "{}", String::from_utf8_lossy(text));
        }
        // The key must start in the block: one that starts past it belongs to the next.
        assert_eq!(anchors.spans_array(br#"{"spans": ["#, 0, 2), Some(11));
        assert_eq!(anchors.spans_array(br#" {"spans": ["#, 0, 2), None);
        let spans: [(&[u8], Option<usize>); 7] = [
            (br#"[{"traceId": "a", "startTimeUnixNano": "5"}]"#, Some(1)),
            (
                b"[1,\n  {\n \"traceId\" : \"a\", \"startTimeUnixNano\": 5}]",
                Some(6),
            ),
            // A link: no start time.
            (br#"[{"traceId": "a", "spanId": "b"}]"#, None),
            // An object's value, not an array's element.
            (
                br#"{"parent": {"traceId": "a", "startTimeUnixNano": "5"}}"#,
                None,
            ),
            (
                br#"[{"name": "x", "traceId": "a", "startTimeUnixNano": "5"}]"#,
                None,
            ),
            (br#"[{"traceId": "a", "startTimeUnixNano": "5""#, None),
            (br#"[{\"traceId": "a", "startTimeUnixNano": "5"}]"#, None),
        ];
        for (text, expected) in spans {
            let found = anchors.span_object(text, 0, text.len());
            assert_eq!(found, expected, "{}", String::from_utf8_lossy(text));
            assert_eq!(anchors.in_block(text, 0, text.len()), expected);
        }
        // Only the first keys of a block are tried: a span after too many links is not looked for.
        let links = |n: usize| vec![r#"{"traceId": "l"}"#; n].join(",");
        let span = r#"{"traceId": "a", "startTimeUnixNano": "5"}"#;
        let near = format!("[{},{span}]", links(MAX_CANDIDATES - 1));
        let far = format!("[{},{span}]", links(MAX_CANDIDATES));
        assert!(
            anchors
                .span_object(near.as_bytes(), 0, near.len())
                .is_some()
        );
        assert_eq!(anchors.span_object(far.as_bytes(), 0, far.len()), None);
    }

    /// Edits that put an anchor inside a string, or shift the brackets around one, make the anchors'
    /// guess wrong; the walk must still give the serial result.
    #[test]
    fn anchored_blocks_match_the_serial_scan_on_broken_exports() {
        let mut rng = Rng(0x27d4_eb2f_1656_67c5);
        let (mut anchored, mut rejected) = (0, 0);
        for n in 0..400 {
            let doc = many_resources(&mut rng, n % 2 == 0, 24);
            let bad = broken(&mut rng, &doc);
            let expected = serial_reference(&bad);
            rejected += usize::from(expected.is_none());
            for block in [2 << 10, 8 << 10] {
                anchored += usize::from(anchored_blocks(&bad, block, span_depth(&bad)).is_some());
                assert_scans_as_serial(&bad, block, expected.as_ref());
            }
        }
        assert!(
            anchored > 200 && rejected > 100,
            "{anchored} anchored, {rejected} rejected"
        );
    }

    #[test]
    fn quotes_and_backslashes_are_found_where_a_plain_search_finds_them() {
        let mut rng = Rng(0x51de);
        for _ in 0..3000 {
            let len = rng.below(120) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| match rng.below(40) {
                    0 => b'"',
                    1 => b'\\',
                    _ => b'a' + rng.below(26) as u8,
                })
                .collect();
            let from = rng.below(len as u64 + 1) as usize;
            let end = from + rng.below((len - from) as u64 + 1) as usize;
            for backslash in [false, true] {
                let plain = bytes[from..end]
                    .iter()
                    .position(|&b| b == b'"' || (backslash && b == b'\\'))
                    .map(|i| from + i);
                assert_eq!(
                    first_of(&bytes, from, end, backslash),
                    plain,
                    "{from} {end}"
                );
            }
        }
    }

    #[test]
    fn decimals_read_as_str_parse_reads_them() {
        let mut rng = Rng(0x85eb_ca6b_c2b2_ae35);
        let mut cases: Vec<String> = [
            "",
            "0",
            "00",
            "7",
            "1758000000000000000",
            "9223372036854775807",
            "9223372036854775808",
            "9999999999999999999",
            "10000000000000000000",
            "01234567890123456789",
            "12a",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1_0",
            "١",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        for _ in 0..20_000 {
            let len = 1 + rng.below(20) as usize;
            let mut case: Vec<u8> = (0..len).map(|_| b'0' + rng.below(10) as u8).collect();
            // Now and then one byte that is not a digit, anywhere in an eight-byte chunk: the bytes
            // either side of the digits and ones that differ from a digit in one nibble.
            if rng.below(4) == 0 {
                let odd = [b'/', b':', b' ', b'.', b'-', b'@', b'p', 0x10, 0x3f, 0x7f];
                case[rng.below(len as u64) as usize] = odd[rng.below(odd.len() as u64) as usize];
            }
            cases.push(String::from_utf8(case).unwrap());
        }
        for case in &cases {
            let expected = if case.bytes().all(|b| b.is_ascii_digit()) && case.len() <= 19 {
                case.parse::<i64>().ok()
            } else {
                None
            };
            assert_eq!(decimal_i64(case.as_bytes()), expected, "{case:?}");
        }
    }

    #[test]
    fn json_lines_are_cut_at_newlines_and_read_by_the_workers() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut l = Layout {
            pretty: false,
            depth: 0,
        };
        let mut lines = String::new();
        for _ in 0..400 {
            export(&mut rng, &mut l, &mut lines);
            lines.push('\n');
        }
        let bytes = lines.as_bytes();
        let expected = serial_reference(bytes).expect("generated lines scan");
        assert!(expected.len() > 200, "{} spans", expected.len());
        let first_line = bytes.iter().position(|&b| b == b'\n').unwrap();
        for block in [first_line + 1, first_line + 500, 3 * first_line, 1 << 20] {
            assert!(lines_are_documents(bytes, block), "block {block}");
            let (blocks, cut_between_lines) = worker_blocks(bytes, block, span_depth(bytes));
            assert!(cut_between_lines);
            // Blocks end just after a newline and cover the file in order.
            assert_eq!(blocks[0].0, 0);
            assert_eq!(blocks.last().unwrap().1, bytes.len());
            for pair in blocks.windows(2) {
                assert_eq!(pair[0].1, pair[1].0);
                assert_eq!(bytes[pair[0].1 - 1], b'\n');
            }
            let (found, from_runs) = parallel(bytes, block);
            assert_eq!(found.as_ref(), Some(&expected), "block {block}");
            assert_eq!(from_runs, expected.len(), "block {block}");
            // The blocks were walked on their own, not by the serial walk after a refusal.
            let walked = scan_lines(bytes, &blocks, span_depth(bytes)).ok().flatten();
            assert_eq!(
                walked.map(|list| list.flat(bytes)).as_ref(),
                Some(&expected),
                "block {block}"
            );
        }
        // A pretty export's first line is no whole document: its blocks come from the stage-1 pass.
        let pretty = b"{\n \"resourceSpans\": []\n}\n";
        assert!(!lines_are_documents(pretty, 1 << 20));
        // A first line that opens a string or a bracket it does not close is no document either.
        assert!(!lines_are_documents(b"{\"a\": \"b\n\"}\n{}\n", 1 << 20));
        assert!(!lines_are_documents(b"[{}\n]\n", 1 << 20));
    }

    #[test]
    fn parallel_scan_matches_the_serial_scan_on_edge_cases() {
        let wrap = |spans: &str| {
            format!(r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{spans}]}}]}}]}}"#)
        };
        let cases = [
            // A key left without a value at the end of a span still captures what follows the array.
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","startTimeUnixNano":}] "x"}]}]}"#.to_string(),
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","name":}] "x"}]}]}"#.to_string(),
            wrap(r#"{"traceId":"a"},{"traceId":"b"}"#),
            wrap(r#"{"traceId":"a"}{"traceId":"b"}"#),
            wrap(r#"{"traceId":"a"},,{"traceId":"b"}"#),
            wrap(r#"{"traceId":"a",}"#),
            wrap(r#"{"traceId":"a" "startTimeUnixNano":"1"}"#),
            wrap(r#"{"traceId":"a", 1 "startTimeUnixNano":"2"}"#),
            wrap(r#"{"traceId":"a", 1 {}}"#),
            wrap(r#"{"traceId":"a","x":1"y"}"#),
            wrap(r#"{"traceId":"a","x":tru{e}"#),
            wrap(r#"{"traceId":"a","x":\"}"#),
            wrap(r#"{"traceId":"a","startTimeUnixNano":1e3}"#),
            wrap(r#"{"traceId":"a","startTimeUnixNano":-1.5}"#),
            wrap(r#"{"traceId":"a","startTimeUnixNano":null}"#),
            wrap(r#"{"traceId":"a\u0041"}"#),
            wrap(r#"{"traceId":5,"traceId":"b"}"#),
            wrap(r#"{"traceId":"a","traceId":"b"}"#),
            wrap(r#"{"traceId":"a","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#),
            wrap(r#"{"traceId":"a","x":{"traceId":"b","startTimeUnixNano":"9"}}"#),
            wrap(r#"{"traceId":"a","x":[1:2]}"#),
            wrap(r#"{"traceId":"a","x":[}"#),
            wrap(r#"{"traceId":"a"}]}, {"spans": [{"traceId":"b"}"#),
            "[".to_string() + &wrap(r#"{"traceId":"a"}"#) + "," + &wrap(r#"{"traceId":"b"}"#) + "]",
            wrap(r#"{"traceId":"a"}"#) + "\n[" + &wrap(r#"{"traceId":"b"}"#) + "]\n",
            wrap(r#"{"traceId":"a"}"#) + " 1",
            wrap(r#"{"traceId":"a", "x": "unterminated}"#),
        ];
        for case in &cases {
            let expected = serial_reference(case.as_bytes());
            for block in [1, 2, 3, 5, 8, 64, 4096] {
                assert_eq!(
                    locate_spans_in_blocks(case.as_bytes(), block)
                        .map(|list| list.flat(case.as_bytes())),
                    expected,
                    "block {block}: {case}"
                );
            }
        }
    }

    #[test]
    fn parallel_scan_matches_the_serial_scan_on_broken_exports() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut rejected = 0;
        for _ in 0..3000 {
            let doc = document(&mut rng);
            let bad = broken(&mut rng, &doc);
            let expected = serial_reference(&bad);
            rejected += usize::from(expected.is_none());
            for block in [7, 64, 4096] {
                assert_scans_as_serial(&bad, block, expected.as_ref());
            }
        }
        assert!(rejected > 1500, "{rejected} rejected");
    }

    /// Many lines with one edit: the blocks after the edit are walked on their own, those around it
    /// may not end between documents, and the result must be the serial walk's all the same.
    #[test]
    fn parallel_walk_of_lines_matches_the_serial_scan_on_broken_lines() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut l = Layout {
            pretty: false,
            depth: 0,
        };
        let (mut rejected, mut taken) = (0, 0);
        for _ in 0..150 {
            let mut lines = String::new();
            for _ in 0..12 {
                export(&mut rng, &mut l, &mut lines);
                lines.push('\n');
            }
            let bad = broken(&mut rng, &lines);
            let expected = serial_reference(&bad);
            rejected += usize::from(expected.is_none());
            taken += usize::from(expected.is_some());
            let first_line = bad.iter().position(|&b| b == b'\n').unwrap_or(bad.len());
            for block in [1, first_line / 2 + 1, 3 * first_line + 1] {
                assert_scans_as_serial(&bad, block, expected.as_ref());
            }
        }
        assert!(
            rejected > 20 && taken > 20,
            "{rejected} rejected, {taken} taken"
        );
    }
}
