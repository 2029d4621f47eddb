//! The serial walk over everything outside the workers' runs: the scan's one state machine, which
//! takes a run wherever it meets the run's first span, and the walk of JSON lines block by block.

use rayon::prelude::*;

use super::lex::{parse_int, parse_number, skip_ws, string_end};
use super::runs::runs_in_block;
use super::{
    BlockRuns, BlockStart, Capture, Frame, ResourceBytes, Role, Run, SpanList, SpanSlice,
    note_resource,
};

/// The serial walk over everything outside the runs: the exact state machine of the whole scan. Where a
/// span object starts at the start of a run, the run's spans are taken as they are and the walk resumes
/// at the run's end, in the state it had at the span's start (see `Run`).
pub(super) fn walk(bytes: &[u8], blocks: Vec<BlockRuns>) -> Option<SpanList> {
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
pub(super) fn walk_line_block(
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
pub(super) fn scan_lines(
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
pub(super) trait TakeSpans {
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
pub(super) struct Pieces(Vec<Piece>);

pub(super) enum Piece {
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
pub(super) struct WalkEnd {
    /// Where it stopped: its end, or past it when a string, value or run it met there ran on.
    pub(super) at: usize,
    pub(super) stack_empty: bool,
    pub(super) saw_export: bool,
    /// The resources of the spans it met (see [`ResourceBytes`]).
    pub(super) resources: Vec<ResourceBytes>,
}

/// The walk's state machine over `from..to`, starting at depth 0 (`runs`: the workers' runs that start
/// there, in file order); `None` when it rejects the structure.
pub(super) fn walk_part(
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
pub(super) fn element_role(role: Role) -> Role {
    match role {
        Role::ExportList => Role::Export,
        Role::ResourceSpans => Role::Resource,
        Role::ScopeSpans => Role::Scope,
        Role::Spans => Role::Span,
        _ => Role::Other,
    }
}

/// The role of the value under `key` in an object with `role`.
pub(super) fn child_role(role: Role, key: &[u8]) -> Role {
    match (role, key) {
        (Role::Export, b"resourceSpans") => Role::ResourceSpans,
        (Role::Resource, b"scopeSpans") => Role::ScopeSpans,
        (Role::Resource, b"resource") => Role::ResourceObject,
        (Role::Scope, b"spans") => Role::Spans,
        _ => Role::Other,
    }
}
