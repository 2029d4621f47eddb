//! The fast path of OTLP/JSON (and of OpenInference, its refinement): an export the structural scan
//! (`scan`) located every span of, read trace by trace.
//!
//! Each trace's spans are parsed together, on their own, when the trace's batch is built, so no more than
//! a batch of traces is parsed at a time and batches are parsed in parallel. They are read where they
//! lie in the file (`direct`), or by simd-json from a copy when that reader declines them. A
//! file the scan does not take is parsed whole by the decoder ([`super::Otlp`]).

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::path::Path;

use hashbrown::HashTable;
use rayon::prelude::*;
use simd_json::prelude::*;

use super::direct::{Declined, Reader};
use super::read_span;
use super::resources::ScannedResources;
use super::scan::{SpanList, SpanSlice, first_of, locate_spans};
use crate::error::InputError;
use crate::ingest::decoder::{Fast, Traces, check_span_count};
use crate::ingest::formats::spans::MapTrace;
use crate::ingest::json::{PADDING, repair, with_buffers, with_tape};
use crate::ingest::survey::{Survey, Text};
use crate::table::TableBuilder;
use crate::table::record::{ParsedFrom, SpanRecord, TraceRecord, order_otlp};

/// The scanned export's traces, mapped by `map` (all attributes kept when `all_attributes`), or
/// [`Fast::Whole`] when the scan does not take the file.
pub(crate) fn scan<'b>(file: &Survey<'b>, all_attributes: bool, map: Option<MapTrace>) -> Fast<'b> {
    match locate_spans(file.bytes()) {
        Some(spans) => {
            let mut traces = ScannedTraces::new(file.bytes(), spans, all_attributes, map);
            traces.text = file.text();
            Fast::Read(Ok(Box::new(traces)))
        }
        None => Fast::Whole,
    }
}

/// Consecutive spans of one trace in the file: from the first one's opening brace to the last one's
/// closing brace, with only commas and whitespace between them.
#[derive(Clone, Copy, Default)]
struct SpanBytes {
    start: usize,
    len: u32,
    /// How many spans: one is parsed as the object it is, more as the elements of one array.
    count: u32,
}

impl SpanBytes {
    fn end(&self) -> usize {
        self.start + self.len as usize
    }

    /// Bytes the slice takes once packed for parsing: brackets around several spans, and padding.
    fn packed(&self) -> usize {
        self.len as usize + if self.count > 1 { 2 } else { 0 }
    }
}

/// The traces of a scanned export: each trace's span byte ranges, traces by their first start.
///
/// This index is all that a file's read keeps for its whole length, so it holds no more than each span
/// needs to be read again: the scan's trace ids and start times are dropped once the traces are grouped
/// and ordered, leaving 16 bytes per run of a trace's consecutive spans (most often one per trace) and
/// 12 per trace.
struct ScannedTraces<'b> {
    bytes: &'b [u8],
    /// The bytes as text, where the survey found them to be (ranges it does not give are checked).
    text: Text<'b>,
    /// Every run of a trace's consecutive spans, the runs of each trace together in file order, traces
    /// by their first start.
    slices: Vec<SpanBytes>,
    /// Where each trace's runs begin in `slices`, then where the last one's end.
    begins: Vec<u32>,
    /// Per trace, where its first span's `traceId` contents begin (they end at the next quote).
    ids: Vec<usize>,
    all_attributes: bool,
    map: Option<MapTrace>,
    /// Traces of more bytes than this are read span by span into owned records.
    huge: usize,
    /// Whether the direct reader is tried first (the tests compare it with simd-json).
    direct: bool,
    /// The resources the spans were exported under.
    resources: ScannedResources,
}

/// A 64-bit id hash as the 32 bits the grouping keeps per slice.
fn folded(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// The table's hash of a slice's 32-bit one: hashbrown takes its buckets from the low bits and its tags
/// from the top seven, so every bit of the 32 must reach both.
fn spread(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The contents of a `traceId` string the scan took, which hold no backslash, from where they begin.
fn trace_id_at(bytes: &[u8], at: usize) -> &[u8] {
    &bytes[at..first_of(bytes, at, bytes.len(), false).unwrap_or(bytes.len())]
}

impl<'b> ScannedTraces<'b> {
    fn new(
        bytes: &'b [u8],
        found: SpanList,
        all_attributes: bool,
        map: Option<MapTrace>,
    ) -> ScannedTraces<'b> {
        let total = found.slices();
        let resources = ScannedResources::new(bytes, found.resources(), all_attributes);
        // Group by trace id in order of first appearance, then order traces by their first start
        // (stable). The table holds trace numbers alone, keyed by the id their first span holds in the
        // file: a map of id slices took 24 bytes a bucket, twice over while it grew.
        //
        // Reading each id from the file is most of the grouping's time (the file is far larger than the
        // caches), so the ids are hashed first, by the threads a piece each, into the list that then
        // takes each slice's trace number; the serial pass reads ids again only for a trace the table
        // offers as a candidate: the slice's own, or by chance (hashbrown's 7-bit tags) for at most
        // about one slice in ten.
        let hasher = foldhash::fast::FixedState::with_seed(0x7ace);
        let slice_hash = |id: &[u8]| folded(hasher.hash_one(id));
        let pieces: Vec<&[SpanSlice]> = found.pieces().collect();
        let mut trace_of: Vec<u32> = vec![0; total];
        {
            let mut rest = trace_of.as_mut_slice();
            let mut jobs = Vec::with_capacity(pieces.len());
            for &piece in &pieces {
                let (here, after) = rest.split_at_mut(piece.len());
                jobs.push((piece, here));
                rest = after;
            }
            jobs.into_par_iter().for_each(|(piece, hashes)| {
                for (slice, hash) in piece.iter().zip(hashes) {
                    let (from, to) = slice.trace_id(bytes);
                    *hash = slice_hash(&bytes[from..to]);
                }
            });
        }
        // Each trace's first slice, by its number in file order, found again through where each of
        // the scan's pieces starts: half the bytes of its id's offset, at the grouping's peak.
        let piece_starts: Vec<usize> = pieces
            .iter()
            .scan(0, |at, piece| {
                let start = *at;
                *at += piece.len();
                Some(start)
            })
            .collect();
        let slice_at = |n: u32| -> &SpanSlice {
            let n = n as usize;
            let piece = piece_starts.partition_point(|&start| start <= n) - 1;
            &pieces[piece][n - piece_starts[piece]]
        };
        let first_id =
            |first_slice: u32| trace_id_at(bytes, slice_at(first_slice).trace_id_start());
        let mut index: HashTable<u32> = HashTable::with_capacity(total);
        // Sized for a trace per slice, the most there can be, so that no list is copied as it grows.
        let mut first_start: Vec<i64> = Vec::with_capacity(total);
        let mut slice_counts: Vec<u32> = Vec::with_capacity(total);
        let mut first_slices: Vec<u32> = Vec::with_capacity(total);
        for (n, (slice, trace)) in found.iter().zip(trace_of.iter_mut()).enumerate() {
            let hash = spread(*trace);
            let known = index
                .find(hash, |&t| {
                    let (from, to) = slice.trace_id(bytes);
                    first_id(first_slices[t as usize]) == &bytes[from..to]
                })
                .copied();
            let t = match known {
                Some(t) => t as usize,
                None => {
                    first_start.push(i64::MAX);
                    slice_counts.push(0);
                    first_slices.push(n as u32);
                    let t = first_slices.len() - 1;
                    index.insert_unique(hash, t as u32, |&t| {
                        spread(slice_hash(first_id(first_slices[t as usize])))
                    });
                    t
                }
            };
            *trace = t as u32;
            first_start[t] = first_start[t].min(slice.start_ns);
            slice_counts[t] += 1;
        }
        drop(index);
        let mut order: Vec<u32> = (0..first_start.len() as u32).collect();
        // Exports in time order, the common case, need no sort (and its scratch list).
        if !first_start.is_sorted() {
            order.sort_by_key(|&t| first_start[t as usize]);
        }
        drop(first_start);
        // Lay each trace's spans out contiguously, in sorted trace order.
        let mut begin = vec![0u32; order.len()];
        let mut begins = Vec::with_capacity(order.len() + 1);
        let mut ids = Vec::with_capacity(order.len());
        let mut at = 0u32;
        for &t in &order {
            begin[t as usize] = at;
            begins.push(at);
            ids.push(slice_at(first_slices[t as usize]).trace_id_start());
            at += slice_counts[t as usize];
        }
        begins.push(at);
        drop((order, slice_counts, first_slices, pieces, piece_starts));
        let mut spans = vec![SpanBytes::default(); total];
        let mut trace_of = trace_of.into_iter();
        // Each of the scan's lists is freed as soon as its spans are placed, so the scan's slices and
        // the index that replaces them are not both held whole.
        found.drain(|slice| {
            let t = trace_of.next().expect("one trace per slice");
            let at = &mut begin[t as usize];
            spans[*at as usize] = SpanBytes {
                start: slice.start(),
                len: (slice.end() - slice.start()) as u32,
                count: slice.count() as u32,
            };
            *at += 1;
        });
        drop(begin);
        ScannedTraces {
            bytes,
            text: Text::default(),
            slices: spans,
            begins,
            ids,
            all_attributes,
            map,
            huge: KEEP_TEXT,
            direct: true,
            resources,
        }
    }

    /// The error a trace of `members` failed with.
    fn failure_error(
        &self,
        path: &Path,
        members: std::ops::Range<u32>,
        failure: SpanFailure,
    ) -> InputError {
        match failure {
            // The whole document is JSON-parsed before spans are read (as 0.4.1 loads the file
            // first), so a later span's JSON error comes before this span's content error.
            SpanFailure::Invalid(start, message) => {
                match self.span_json_error(path, &self.span_ranges(members)) {
                    json @ InputError::Json { .. } => json,
                    _ => InputError::Invalid {
                        path: path.to_path_buf(),
                        message: format!("span at byte {start}: {message}"),
                    },
                }
            }
            // Only a span's own bytes can fail: find where, in the file.
            SpanFailure::Json(span) => self.span_json_error(path, &[span]),
        }
    }

    /// The numbers of `trace`'s runs of spans in `slices`.
    fn members(&self, trace: usize) -> std::ops::Range<u32> {
        self.begins[trace]..self.begins[trace + 1]
    }

    /// The byte ranges of the spans of `members`, one by one, in file order.
    fn span_ranges(&self, members: std::ops::Range<u32>) -> Vec<(usize, usize)> {
        let mut ranges = Vec::new();
        for m in members {
            let s = &self.slices[m as usize];
            if s.count == 1 {
                ranges.push((s.start, s.end()));
            } else {
                ranges.extend(
                    self.slice_spans(s)
                        .iter()
                        .map(|span| (span.start(), span.end())),
                );
            }
        }
        ranges
    }

    /// The spans of a run of several, read again from the file.
    fn slice_spans(&self, s: &SpanBytes) -> Vec<SpanSlice> {
        super::scan::spans_at(self.bytes, s.start, s.count as usize)
    }

    /// The bytes the index keeps for the whole of the file's read.
    #[cfg(test)]
    fn bytes_kept(&self) -> usize {
        self.slices.capacity() * std::mem::size_of::<SpanBytes>()
            + self.begins.capacity() * std::mem::size_of::<u32>()
            + self.ids.capacity() * std::mem::size_of::<usize>()
    }
}

impl Traces for ScannedTraces<'_> {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn weight(&self, trace: usize) -> usize {
        self.members(trace)
            .map(|m| self.slices[m as usize].len as usize)
            .sum()
    }

    fn trace_id(&self, trace: usize) -> Cow<'_, str> {
        let raw = trace_id_at(self.bytes, self.ids[trace]);
        if !raw.contains(&b'\\') {
            return String::from_utf8_lossy(raw);
        }
        // An id with escapes is what the parser makes of the string, as when its spans are read.
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        match with_tape(&quoted, |v| v.as_str().map(str::to_string)) {
            Ok(Some(id)) => Cow::Owned(id),
            // A span whose id does not parse fails to read, whatever its id is taken to be.
            _ => String::from_utf8_lossy(raw),
        }
    }

    fn append(&self, path: &Path, trace: usize, out: &mut TableBuilder) -> Result<(), InputError> {
        #[cfg(test)]
        crate::ingest::reads::decoded(path);
        let members = self.members(trace);
        let spans: usize = members
            .clone()
            .map(|m| self.slices[m as usize].count as usize)
            .sum();
        check_span_count(path, spans, || {
            String::from_utf8_lossy(trace_id_at(self.bytes, self.ids[trace])).into_owned()
        })?;
        // The direct reader reads the runs where they lie in the file. What it declines is parsed by
        // simd-json, each run of consecutive spans on its own (one span as the object it is, several as
        // one array), in place in one buffer that holds the trace's runs back to back, each followed by
        // simd-json's padding: the records borrow their strings from the buffer, and only one run's
        // tape and structural index are alive at a time. Runs are at most `JOIN_BYTES` long unless they
        // are one span, so a large trace is not parsed as one list (which kept a tape node per JSON
        // value of the whole trace, about twice the trace's size again).
        thread_local! {
            static TEXT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let size: usize = members
            .clone()
            .map(|m| self.slices[m as usize].packed() + PADDING)
            .sum();
        TEXT.with(|cell| {
            let mut text = cell.borrow_mut();
            text.clear();
            let outcome = if size > self.huge {
                // A huge trace is not copied whole: each span is parsed in a buffer of its own and its
                // record keeps copies of the few strings the tables read, a fraction of the span's bytes.
                self.read_spans_owned(members.clone(), out)
            } else {
                if let Some(read) = self
                    .direct
                    .then(|| self.read_direct(members.clone(), spans, out))
                    .flatten()
                {
                    return read
                        .map_err(|failure| self.failure_error(path, members.clone(), failure));
                }
                text.reserve_exact(size);
                for m in members.clone() {
                    let s = &self.slices[m as usize];
                    if s.count > 1 {
                        text.push(b'[');
                    }
                    text.extend_from_slice(&self.bytes[s.start..s.end()]);
                    if s.count > 1 {
                        text.push(b']');
                    }
                    let padded = text.len() + PADDING;
                    text.resize(padded, b' ');
                }
                match self.read_spans(&mut text, members.clone(), spans, out) {
                    // A span simd-json refuses may be JSON Python reads (see `repair`): the spans are
                    // read again, each on its own so that one can be rewritten.
                    Err(SpanFailure::Json(_)) => self.read_spans_owned(members.clone(), out),
                    other => other,
                }
            };
            outcome.map_err(|failure| self.failure_error(path, members.clone(), failure))
        })
    }
}

/// Traces larger than this are read span by span into owned records instead of from one copy.
const KEEP_TEXT: usize = 64 << 20;

/// A worker's tape and span list, kept from one trace to the next.
#[derive(Default)]
struct Scratch {
    tape: Option<simd_json::Tape<'static>>,
    spans: Vec<SpanRecord<'static>>,
}

/// A span that large (and so its tape) or a trace of that many spans is not kept for the next trace.
const KEEP_SCRATCH: usize = 1 << 20;
const KEEP_SCRATCH_SPANS: usize = 1 << 16;

impl Scratch {
    /// This thread's scratch, taken for one trace.
    fn take() -> Scratch {
        SCRATCH.with(std::cell::RefCell::take)
    }

    /// An empty record with room for `spans` spans, and an empty tape, in the allocations of the
    /// thread's previous trace.
    fn start<'i>(&mut self, spans: usize) -> (TraceRecord<'i>, simd_json::Tape<'i>) {
        let mut record = TraceRecord {
            spans: relabel(std::mem::take(&mut self.spans)),
            ..TraceRecord::default()
        };
        record.spans.reserve(spans);
        let tape = self
            .tape
            .take()
            .unwrap_or_else(simd_json::Tape::null)
            .reset();
        (record, tape)
    }

    /// Gives the scratch, with `tape`'s allocation, back to the thread, unless `bytes` of trace (or
    /// span) grew it past what is kept: what a large trace grew is released with it.
    fn keep(mut self, tape: simd_json::Tape<'_>, bytes: usize) {
        self.tape = Some(tape.reset());
        if bytes <= KEEP_SCRATCH && self.spans.capacity() <= KEEP_SCRATCH_SPANS {
            SCRATCH.with(|cell| cell.replace(self));
        }
    }
}

/// An emptied span list whose allocation can hold records of another lifetime (collecting from a
/// list's own iterator into elements of the same size reuses its allocation).
fn relabel<'b>(mut spans: Vec<SpanRecord<'_>>) -> Vec<SpanRecord<'b>> {
    spans.clear();
    spans.into_iter().map(|_| unreachable!("emptied")).collect()
}

/// Why a trace's spans could not be read.
enum SpanFailure {
    /// A span at this byte of the file is not a valid OTLP span.
    Invalid(usize, String),
    /// The span at these bytes of the file is not JSON (or, from a run of several spans parsed
    /// together, the run's bytes: the caller reads its spans one by one to find which).
    Json((usize, usize)),
}

thread_local! {
    /// This thread's tape and span list, reused from trace to trace: with small traces their
    /// allocations were a fixed cost of every trace.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    /// Where the direct reader unescapes strings: as long as the longest trace it read (up to
    /// [`KEEP_SCRATCH`]), and zeroed only where it grows.
    static SPARE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<'b> ScannedTraces<'b> {
    /// Reads the trace of `members` (`spans` spans) straight from the file's bytes with the direct
    /// reader and appends it to `out`; `None`, with nothing appended, when the reader declines a
    /// run, which simd-json must then read.
    fn read_direct(
        &self,
        members: std::ops::Range<u32>,
        spans: usize,
        out: &mut TableBuilder,
    ) -> Option<Result<(), SpanFailure>> {
        let trace = members.clone();
        let size: usize = members
            .clone()
            .map(|m| self.slices[m as usize].len as usize)
            .sum();
        SPARE.with(|cell| {
            let mut spare_area = cell.borrow_mut();
            if spare_area.len() < size {
                spare_area.resize(size, 0);
            }
            let mut scratch = Scratch::take();
            let (mut record, mut tape) = scratch.start(spans);
            let mut spare: &mut [u8] = &mut spare_area[..size];
            let read = || -> Result<Result<(), SpanFailure>, Declined> {
                for m in members {
                    let slice = &self.slices[m as usize];
                    let text = match self.text.get(slice.start, slice.end()) {
                        Some(text) => text,
                        None => simdutf8::basic::from_utf8(&self.bytes[slice.start..slice.end()])
                            .map_err(|_| Declined)?,
                    };
                    let mut reader = Reader::new(text, std::mem::take(&mut spare));
                    for k in 0..slice.count as usize {
                        if k > 0 {
                            reader.expect(b',')?;
                        }
                        tape.0.clear();
                        reader.value(&mut tape.0)?;
                        if let Err(failure) = self.take_span(tape.as_value(), slice, k, &mut record)
                        {
                            return Ok(Err(failure));
                        }
                    }
                    spare = reader.finish()?;
                }
                Ok(Ok(()))
            };
            let read = read();
            if let Ok(Ok(())) = read {
                self.append_record(record, trace, &mut scratch, out);
            }
            scratch.keep(tape, size);
            if size > KEEP_SCRATCH {
                *spare_area = Vec::new();
            }
            read.ok()
        })
    }

    /// Parses the runs of spans packed in `text` (each followed by [`PADDING`] bytes) one at a time and
    /// appends their trace, of `spans` spans, to `out`.
    fn read_spans(
        &self,
        text: &mut [u8],
        members: std::ops::Range<u32>,
        spans: usize,
        out: &mut TableBuilder,
    ) -> Result<(), SpanFailure> {
        let trace = members.clone();
        let mut scratch = Scratch::take();
        let (mut record, mut tape) = scratch.start(spans);
        let largest = members
            .clone()
            .map(|m| self.slices[m as usize].packed())
            .max()
            .unwrap_or(0);
        let read = with_buffers(largest, |buffers| {
            let mut rest = text;
            for m in members {
                let slice = &self.slices[m as usize];
                let len = slice.packed();
                let (here, tail) = std::mem::take(&mut rest).split_at_mut(len + PADDING);
                rest = tail;
                simd_json::fill_tape_padded(here, len, buffers, &mut tape)
                    .map_err(|_| SpanFailure::Json((slice.start, slice.end())))?;
                let value = tape.as_value();
                if slice.count == 1 {
                    self.take_span(value, slice, 0, &mut record)?;
                } else {
                    let array = value
                        .as_array()
                        .expect("the brackets around a run of spans");
                    for (k, span) in array.iter().enumerate() {
                        self.take_span(span, slice, k, &mut record)?;
                    }
                }
            }
            Ok(())
        });
        if read.is_ok() {
            self.append_record(record, trace, &mut scratch, out);
        }
        // As the parser's buffers are, what a large span grew is released with it.
        scratch.keep(tape, largest);
        read
    }

    /// Orders `record`'s spans, gives it the resources of its runs `members` and appends its trace,
    /// mapped, to `out`; the span list goes back to `scratch` when no map took it.
    fn append_record(
        &self,
        mut record: TraceRecord<'_>,
        members: std::ops::Range<u32>,
        scratch: &mut Scratch,
        out: &mut TableBuilder,
    ) {
        self.add_resources(&mut record, members);
        order_otlp(&mut record);
        match self.map {
            Some(map) => out.append(&map(record)),
            None => {
                out.append(&record);
                scratch.spans = relabel(record.spans);
            }
        }
    }

    /// Gives `record` the resources of the trace's runs `members` (the first one's value of each key).
    fn add_resources(&self, record: &mut TraceRecord<'_>, members: std::ops::Range<u32>) {
        let starts = members.map(|m| self.slices[m as usize].start);
        self.resources
            .add_to(self.bytes, &mut record.resource, starts);
    }

    /// Reads span `k` of `slice`, parsed as `span`, into `record`.
    fn take_span<'i>(
        &self,
        span: simd_json::tape::Value<'_, 'i>,
        slice: &SpanBytes,
        k: usize,
        record: &mut TraceRecord<'i>,
    ) -> Result<(), SpanFailure> {
        // A failing span's byte is found again only when there is an error to report.
        let at = || {
            if slice.count == 1 {
                slice.start
            } else {
                self.slice_spans(slice)[k].start()
            }
        };
        let Some(obj) = span.as_object() else {
            return Err(SpanFailure::Invalid(
                at(),
                "a span is not an object".to_string(),
            ));
        };
        let (trace_id, span) = read_span(&obj, self.all_attributes, &mut record.skipped_attributes)
            .map_err(|message| SpanFailure::Invalid(at(), message))?;
        record.trace_id = Cow::Borrowed(trace_id);
        record.spans.push(span);
        Ok(())
    }

    /// Parses each span of a huge trace in a buffer of its own, and appends the trace to `out`. The
    /// records borrow their strings from the file's bytes (copying only those that had escapes), so the
    /// heap holds the records themselves, not their text.
    fn read_spans_owned(
        &self,
        members: std::ops::Range<u32>,
        out: &mut TableBuilder,
    ) -> Result<(), SpanFailure> {
        let mut record: TraceRecord<'b> = TraceRecord::default();
        record.spans.reserve_exact(
            members
                .clone()
                .map(|m| self.slices[m as usize].count as usize)
                .sum(),
        );
        let mut text: Vec<u8> = Vec::new();
        // One tape allocation for every span, handed from span to span (each parse has its own lifetime).
        let mut tape: Option<simd_json::Tape<'static>> = None;
        let mut alone = Vec::new();
        self.add_resources(&mut record, members.clone());
        for m in members {
            let slice = &self.slices[m as usize];
            alone.clear();
            if slice.count == 1 {
                alone.push((slice.start, slice.end()));
            } else if !self.read_run_owned(slice, &mut text, &mut tape, &mut record)? {
                // A run that does not parse as one array is read span by span, so that a span
                // Python's `json` reads can be repaired.
                alone.extend(self.span_ranges(m..m + 1));
            }
            self.read_alone_owned(&alone, &mut text, &mut tape, &mut record)?;
        }
        drop(text);
        order_otlp(&mut record);
        match self.map {
            Some(map) => out.append(&map(record)),
            None => out.append(&record),
        }
        Ok(())
    }

    /// Parses a run of several spans as one array in `text` and appends its spans, owned, to `record`;
    /// false when the run's bytes do not parse.
    fn read_run_owned(
        &self,
        slice: &SpanBytes,
        text: &mut Vec<u8>,
        tape: &mut Option<simd_json::Tape<'static>>,
        record: &mut TraceRecord<'b>,
    ) -> Result<bool, SpanFailure> {
        let len = slice.packed();
        text.clear();
        text.push(b'[');
        text.extend_from_slice(&self.bytes[slice.start..slice.end()]);
        text.push(b']');
        text.resize(len + PADDING, b' ');
        // The spans' bytes start after the opening bracket.
        let from = ParsedFrom::new(text[1..].as_ptr(), &self.bytes[slice.start..slice.end()]);
        let mut spans = Vec::with_capacity(slice.count as usize);
        let parsed = with_buffers(len, |buffers| {
            let mut scratch = tape.take().unwrap_or_else(simd_json::Tape::null).reset();
            let read = match simd_json::fill_tape_padded(text, len, buffers, &mut scratch) {
                Err(_) => Ok(false),
                Ok(()) => {
                    let array = scratch
                        .as_value()
                        .as_array()
                        .expect("the brackets around a run of spans");
                    array
                        .iter()
                        .enumerate()
                        .try_for_each(|(k, value)| {
                            let at = || self.slice_spans(slice)[k].start();
                            spans.push(self.value_span(value, at, record)?);
                            Ok(())
                        })
                        .map(|()| true)
                }
            };
            *tape = Some(scratch.reset());
            read
        });
        // Rebased once the parser's buffers are released, as a span read alone is.
        record
            .spans
            .extend(spans.into_iter().map(|span| span.rebase(&from)));
        parsed
    }

    /// Parses each of `spans` (byte ranges) in `text` on its own and appends it, owned, to `record`.
    fn read_alone_owned(
        &self,
        spans: &[(usize, usize)],
        text: &mut Vec<u8>,
        tape: &mut Option<simd_json::Tape<'static>>,
        record: &mut TraceRecord<'b>,
    ) -> Result<(), SpanFailure> {
        for &(start, end) in spans {
            let len = end - start;
            text.clear();
            text.extend_from_slice(&self.bytes[start..end]);
            text.resize(len + PADDING, b' ');
            let from = ParsedFrom::new(text.as_ptr(), &self.bytes[start..end]);
            let span = with_buffers(len, |buffers| {
                let mut scratch = tape.take().unwrap_or_else(simd_json::Tape::null).reset();
                let read = simd_json::fill_tape_padded(text, len, buffers, &mut scratch)
                    .map_err(|_| SpanFailure::Json((start, end)))
                    .and_then(|()| self.tape_span(&scratch, start, record));
                *tape = Some(scratch.reset());
                read
            });
            let span = match span {
                // Rebased once the parser's buffers are released (a huge span's are), so that a
                // string that must be copied is not copied while they live.
                Ok(span) => span.rebase(&from),
                Err(SpanFailure::Json(_)) => self.repaired_span((start, end), record)?,
                Err(other) => return Err(other),
            };
            record.spans.push(span);
        }
        Ok(())
    }

    /// A span simd-json refused, read again after [`repair`] rewrote what Python's `json` reads and
    /// simd-json does not (big integers, `1e999`, `NaN`, lone surrogates).
    fn repaired_span(
        &self,
        (start, end): (usize, usize),
        record: &mut TraceRecord<'_>,
    ) -> Result<SpanRecord<'static>, SpanFailure> {
        let json = || SpanFailure::Json((start, end));
        let mut fixed = repair(&self.bytes[start..end]).ok_or_else(json)?;
        let len = fixed.len();
        fixed.resize(len + PADDING, b' ');
        with_buffers(len, |buffers| {
            let mut tape = simd_json::Tape::null();
            simd_json::fill_tape_padded(&mut fixed, len, buffers, &mut tape).map_err(|_| json())?;
            self.tape_span(&tape, start, record)
                .map(SpanRecord::into_owned)
        })
    }

    /// The span a one-span tape holds (its trace id names the record when the record has none yet);
    /// `start` is the span's byte offset, for errors.
    fn tape_span<'i>(
        &self,
        tape: &simd_json::Tape<'i>,
        start: usize,
        record: &mut TraceRecord<'_>,
    ) -> Result<SpanRecord<'i>, SpanFailure> {
        self.value_span(tape.as_value(), || start, record)
    }

    /// The span `value` holds (its trace id names the record when the record has none yet); `start`
    /// finds the span's byte offset, for errors.
    fn value_span<'i>(
        &self,
        value: simd_json::tape::Value<'_, 'i>,
        start: impl Fn() -> usize,
        record: &mut TraceRecord<'_>,
    ) -> Result<SpanRecord<'i>, SpanFailure> {
        let Some(obj) = value.as_object() else {
            return Err(SpanFailure::Invalid(
                start(),
                "a span is not an object".to_string(),
            ));
        };
        let (trace_id, span) = read_span(&obj, self.all_attributes, &mut record.skipped_attributes)
            .map_err(|message| SpanFailure::Invalid(start(), message))?;
        if record.trace_id.is_empty() {
            record.trace_id = Cow::Owned(trace_id.to_string());
        }
        Ok(span)
    }

    /// The JSON error of the first of `spans` (byte ranges) that does not parse, at its byte in the
    /// file.
    fn span_json_error(&self, path: &Path, spans: &[(usize, usize)]) -> InputError {
        for &(start, end) in spans {
            if let Err(f) = with_tape(&self.bytes[start..end], |_| ()) {
                return InputError::Json {
                    path: path.to_path_buf(),
                    offset: start + f.offset,
                    message: f.message,
                };
            }
        }
        InputError::Invalid {
            path: path.to_path_buf(),
            message: "spans that do not parse together".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_trace_records_read_as_the_borrowed_ones() {
        let bytes = std::fs::read("examples/traces.json").unwrap();
        let batch = |huge: usize| {
            let spans = crate::ingest::formats::otlp::scan::locate_spans(&bytes).unwrap();
            let mut traces = ScannedTraces::new(&bytes, spans, true, None);
            traces.huge = huge;
            let mut builder = TableBuilder::new(crate::table::TableOptions {
                root_attributes: true,
                ..Default::default()
            });
            for t in 0..traces.len() {
                traces.append(Path::new("t.json"), t, &mut builder).unwrap();
            }
            builder.finish()
        };
        let (borrowed, owned) = (batch(KEEP_TEXT), batch(0));
        assert!(borrowed.spans.num_rows() > 30);
        assert_eq!(borrowed.traces, owned.traces);
        assert_eq!(borrowed.spans, owned.spans);
        assert_eq!(borrowed.steps, owned.steps);
    }

    /// The direct reader gives the records simd-json gives, with the survey's text or without.
    #[test]
    fn direct_reads_give_the_records_simd_json_gives() {
        for path in [
            "examples/traces.json",
            "examples/gate/candidate_gpt.json",
            "examples/gate/candidate_qwen.json",
            "examples/gate/baseline_glm_run1.json",
        ] {
            let bytes = std::fs::read(path).unwrap();
            let batch = |direct: bool, surveyed: bool| {
                let spans = crate::ingest::formats::otlp::scan::locate_spans(&bytes).unwrap();
                let mut traces = ScannedTraces::new(&bytes, spans, true, None);
                traces.direct = direct;
                if surveyed {
                    traces.text = Survey::new(&bytes, false).text();
                }
                let mut builder = TableBuilder::new(crate::table::TableOptions {
                    root_attributes: true,
                    ..Default::default()
                });
                for t in 0..traces.len() {
                    traces.append(Path::new(path), t, &mut builder).unwrap();
                }
                builder.finish()
            };
            let parsed = batch(false, false);
            assert!(parsed.spans.num_rows() > 30, "{path}");
            for read in [batch(true, false), batch(true, true)] {
                assert_eq!(read.traces, parsed.traces, "{path}");
                assert_eq!(read.spans, parsed.spans, "{path}");
                assert_eq!(read.steps, parsed.steps, "{path}");
            }
        }
    }

    /// A trace's spans read as one array are still told apart: an error names the byte of the span
    /// that has it, and a span only Python's `json` reads is read span by span, as alone; from one copy
    /// of the trace or, huge, run by run.
    #[test]
    fn spans_read_together_report_and_repair_each_span() {
        let span = |id: &str, extra: &str| {
            format!(
                r#"{{"traceId":"t","spanId":"{id}","name":"n","startTimeUnixNano":"1"{extra}}}"#
            )
        };
        let export = |spans: [String; 3]| {
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
                spans.join(", ")
            )
        };
        let read = |text: &str, huge: usize| {
            let bytes = text.as_bytes();
            let spans = crate::ingest::formats::otlp::scan::locate_spans(bytes).unwrap();
            assert_eq!((spans.slices(), spans.len()), (1, 3));
            let mut traces = ScannedTraces::new(bytes, spans, false, None);
            traces.huge = huge;
            let mut builder = TableBuilder::new(crate::table::TableOptions::default());
            traces
                .append(Path::new("t.json"), 0, &mut builder)
                .map(|()| builder.finish().spans.num_rows())
        };
        let bad = span("b", r#","attributes":[5]"#);
        let text = export([span("a", ""), bad.clone(), span("c", "")]);
        let at = text.find(&bad).unwrap();
        let nan = span(
            "b",
            r#","attributes":[{"key":"k","value":{"doubleValue":NaN}}]"#,
        );
        let repaired = export([span("a", ""), nan, span("c", "")]);
        for huge in [KEEP_TEXT, 0] {
            match read(&text, huge) {
                Err(InputError::Invalid { message, .. }) => {
                    assert_eq!(
                        message,
                        format!("span at byte {at}: attributes[0] is not an object")
                    );
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(read(&repaired, huge).unwrap(), 3);
        }
    }

    /// Spans of a trace spread over many lines and over the scan's blocks, in no time order, are
    /// grouped into their traces, traces in order of their first start (then of first appearance).
    #[test]
    fn spans_spread_over_the_blocks_are_grouped_into_their_traces() {
        let (lines, traces) = (6_000, 997);
        let mut bytes = Vec::new();
        // Line k holds a span of trace k * 7 % traces, starting at a time that is not in line order.
        let filler = "x".repeat(400);
        for k in 0..lines {
            let trace = k * 7 % traces;
            let start = 1_000_000 + (trace * 31 % 101) * 1_000 + k;
            bytes.extend_from_slice(
                format!(
                    concat!(
                        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{:032x}","#,
                        r#""spanId":"{:016x}","name":"s{}","startTimeUnixNano":"{}","#,
                        r#""endTimeUnixNano":"{}","attributes":[{{"key":"pad","#,
                        r#""value":{{"stringValue":"{}"}}}}]}}]}}]}}]}}"#,
                        "\n"
                    ),
                    trace,
                    k + 1,
                    k,
                    start,
                    start + 5,
                    filler
                )
                .as_bytes(),
            );
        }
        assert!(bytes.len() > 2 << 20, "the lines fill more than two blocks");
        let spans = crate::ingest::formats::otlp::scan::locate_spans(&bytes).unwrap();
        assert_eq!(spans.len(), lines);
        let index = ScannedTraces::new(&bytes, spans, false, None);
        // Expected: each trace's first start, its first line and its number of spans.
        let mut first: std::collections::HashMap<usize, (usize, usize, usize)> = Default::default();
        for k in 0..lines {
            let trace = k * 7 % traces;
            let start = 1_000_000 + (trace * 31 % 101) * 1_000 + k;
            let entry = first.entry(trace).or_insert((start, k, 0));
            entry.0 = entry.0.min(start);
            entry.2 += 1;
        }
        let mut want: Vec<(usize, usize, usize, usize)> = first
            .iter()
            .map(|(&trace, &(start, line, count))| (start, line, trace, count))
            .collect();
        want.sort_unstable();
        assert_eq!(index.len(), traces);
        for (t, &(_, _, trace, count)) in want.iter().enumerate() {
            assert_eq!(index.trace_id(t), format!("{trace:032x}"), "trace {t}");
            let spans: usize = index
                .members(t)
                .map(|m| index.slices[m as usize].count as usize)
                .sum();
            assert_eq!(spans, count, "spans of trace {trace}");
        }
    }

    /// The index kept for a file's whole read grows by 16 bytes per run of a trace's consecutive spans
    /// and 12 per trace, no more: at a million small traces of three spans, each trace's spans together,
    /// that is 28 MB, where 16 bytes per span and 20 per trace took 68 MB, and the scan's own slices
    /// (40 bytes per span) and a member list (4 more) with trace ranges (16 per trace) took 148 MB.
    #[test]
    fn index_keeps_twenty_eight_bytes_per_trace_whose_spans_lie_together() {
        let (traces, spans_per_trace) = (2_000, 3);
        let bytes =
            crate::ingest::formats::otlp::scan::small_traces_as_lines(traces, spans_per_trace);
        let spans = crate::ingest::formats::otlp::scan::locate_spans(&bytes).unwrap();
        assert_eq!(spans.len(), traces * spans_per_trace);
        let index = ScannedTraces::new(&bytes, spans, false, None);
        assert_eq!(index.len(), traces);
        assert_eq!(index.trace_id(7), format!("{:032x}", 7));
        let kept = index.bytes_kept();
        assert!(
            kept <= traces * 16 + (traces + 1) * 12,
            "{kept} bytes kept for {traces} traces"
        );
    }
}
