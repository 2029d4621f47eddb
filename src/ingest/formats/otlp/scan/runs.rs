//! The workers' reading of one block: the runs of span objects that start in it, read token by token
//! (`tokens`). A worker stops at anything the serial walk would read differently, so the walk can take
//! its runs as they are.

use super::lex::{escaped_at, parse_int, parse_number, string_end};
use super::tokens::{Masks, Tokens, escapes, prefix_xor};
use super::{BlockRuns, BlockStart, Capture, Run, SpanSlice};

/// The worker of one block: the runs of span objects that start in `from..to`. After a run that ends
/// where its `spans` array does, it looks for the next span object; after a span it cannot read, it looks
/// on from inside that span.
pub(super) fn runs_in_block(
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
pub(super) const KEEP_GATHERED: usize = 1 << 16;

/// Why a run ended.
pub(super) enum Stop {
    /// The next span object starts past the block.
    BlockEnd,
    /// Something other than another span object follows the run's last span, which ends here.
    After(usize),
    /// The span object starting here could not be read.
    Inside(usize),
}

/// Reads span objects from the `{` at `first` for as long as they follow each other, start before `to`
/// and can be read, appending them to `spans`.
pub(super) fn read_run(
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
pub(super) fn first_span_start(
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
pub(super) fn after_separator(bytes: &[u8], at: usize) -> bool {
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
pub(super) fn read_span(tokens: &mut Tokens, bytes: &[u8], start: usize) -> Option<SpanSlice> {
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
