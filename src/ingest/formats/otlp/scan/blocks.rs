//! Where the scan's parallel blocks start, and the state each starts in: after a newline in JSON
//! lines, at the key of a span object or a `spans` array in one large export (the anchors), and
//! elsewhere where a first pass over every byte finds each block's string state and bracket depth.

use rayon::prelude::*;

use super::BlockStart;
use super::lex::{escaped_at, skip_ws};
use super::runs::{after_separator, read_span};
use super::tokens::{Masks, Tokens, escapes, prefix_xor};

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
pub(super) fn worker_blocks(
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
pub(super) fn anchored_blocks(
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
pub(super) struct Anchors {
    pub(super) trace_id: memchr::memmem::Finder<'static>,
    pub(super) spans: memchr::memmem::Finder<'static>,
}

impl Anchors {
    pub(super) fn new() -> Anchors {
        Anchors {
            trace_id: memchr::memmem::Finder::new(TRACE_ID_KEY),
            spans: memchr::memmem::Finder::new(SPANS_KEY),
        }
    }

    /// The first span object whose key starts in `from..to`, else the first `spans` array.
    pub(super) fn in_block(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        self.span_object(bytes, from, to)
            .or_else(|| self.spans_array(bytes, from, to))
    }

    pub(super) fn span_object(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
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

    pub(super) fn spans_array(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        keys_in(&self.spans, SPANS_KEY, bytes, from, to)
            .find_map(|(_, value)| (bytes.get(value) == Some(&b'[')).then_some(value + 1))
    }
}

/// Each `key` (quotes included) starting in `from..to` whose opening quote is not escaped and that a colon
/// follows: where it starts, and where its value does.
pub(super) fn keys_in<'a>(
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
pub(super) fn trailing_ws(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rev()
        .take_while(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        .count()
}

/// The most `"traceId"` keys tried in one block.
pub(super) const MAX_CANDIDATES: usize = 32;

/// The most blocks one worker reads when blocks start at anchors.
pub(super) const MAX_JOINED: usize = 4;

/// The key of the arrays that hold span objects, quotes included.
pub(super) const SPANS_KEY: &[u8] = b"\"spans\"";

/// A span's first key, quotes included.
pub(super) const TRACE_ID_KEY: &[u8] = b"\"traceId\"";

/// The first line ends within the first block, is a balanced document outside any string, and
/// more follows it: the file looks like JSON lines, many to a block.
pub(super) fn lines_are_documents(bytes: &[u8], block: usize) -> bool {
    let Some(end) = memchr::memchr(b'\n', &bytes[..block.min(bytes.len())]) else {
        return false;
    };
    if end + 1 >= bytes.len() || bytes[..end].iter().all(u8::is_ascii_whitespace) {
        return false;
    }
    let first = summarize(bytes, 0, end);
    !first.odd_quotes && first.depth_if_outside == 0
}

/// Stage 1: every block in parallel counts its unescaped quotes and its net bracket depth under both
/// guesses for its first byte (outside or inside a string); a prefix pass then fixes each block's real
/// start state.
pub(super) fn block_starts(bytes: &[u8], block: usize) -> Vec<BlockStart> {
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

pub(super) struct BlockSummary {
    pub(super) odd_quotes: bool,
    pub(super) depth_if_outside: i64,
    pub(super) depth_if_inside: i64,
}

pub(super) fn summarize(bytes: &[u8], from: usize, to: usize) -> BlockSummary {
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
