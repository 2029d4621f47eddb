//! The one interface every trace format implements, and the driver that turns a file's traces into
//! batches of tables in parallel.
//!
//! A [`Decoder`] names its format, says where `--format auto` tries it ([`Detection`]), recognises a
//! document of its format and indexes a file's documents into [`Traces`]: a list of traces that can each
//! be decoded on their own, in any order, straight into a [`TableBuilder`]. A decoder may also have a
//! fast path ([`Decoder::fast`]) that indexes a file without parsing it as whole documents. The formats
//! themselves are declared in one list, `formats!` in `formats/mod.rs`.
//!
//! [`for_each_batch`] cuts a file's traces into batches bounded by traces and by bytes, decodes a window
//! of batches in parallel (one builder per worker, reused across batches) and hands each batch's tables
//! to the caller's function, whose results come back in trace order. Traces the options hold
//! ([`ReadOptions::hold`]: those other files of the run also hold) are kept whole instead of becoming
//! rows, for the run to merge.

use std::borrow::Cow;
use std::path::Path;

use simd_json::tape::Value as TapeValue;

use super::ReadOptions;
use super::json::ParseFailure;
use crate::error::InputError;
use crate::table::record::TraceRecord;
use crate::table::{TableBuilder, TraceBatch};

/// Told how far a read has got, for a progress display. Calls come from worker threads, in any order.
pub trait ReadProgress: Send + Sync {
    /// A batch of `traces` traces, standing for `bytes` bytes of the file as stored, was handled.
    fn advance(&self, traces: usize, bytes: u64);
    /// A file is finished (read whole or refused); `bytes` is the part of its size not yet reported.
    fn file_done(&self, bytes: u64);
}

/// One JSON document of a file: the whole file, or one of its JSON lines.
pub struct Document<'b> {
    pub bytes: &'b [u8],
    /// Where the document starts in the file.
    pub offset: usize,
    /// The document is one line of a JSON-lines file (errors then say which).
    pub is_line: bool,
}

impl Document<'_> {
    pub fn json_error(&self, path: &Path, failure: ParseFailure) -> InputError {
        InputError::Json {
            path: path.to_path_buf(),
            offset: self.offset + failure.offset,
            message: failure.message,
        }
    }

    pub fn invalid(&self, path: &Path, message: String) -> InputError {
        let message = if self.is_line {
            format!("line at byte {}: {message}", self.offset)
        } else {
            message
        };
        InputError::Invalid {
            path: path.to_path_buf(),
            message,
        }
    }
}

/// A trace format.
pub trait Decoder: Sync {
    /// The name `--format` takes and reports print.
    fn name(&self) -> &'static str;

    /// How the refusal of a file no format recognises names the format: 0.4.1's names for its own
    /// formats (`OTLP/JSON`, `Langfuse`), the `--format` name for the others.
    fn title(&self) -> &'static str {
        self.name()
    }

    /// Where `--format auto` tries the format.
    fn detection(&self) -> Detection {
        Detection::Document
    }

    /// Returns true if and only if the document (a file's first) is in this format.
    fn detect(&self, doc: TapeValue<'_, '_>) -> bool;

    /// Indexes a file's (uncompressed) bytes without parsing them as whole JSON documents, when the
    /// format has a faster way (a structural scan) or is not JSON; most formats have none. Asked when
    /// the format is forced and, with `--format auto`, in detection order (a [`Detection::Binary`]
    /// format's before the file must be UTF-8 text). With `auto` it must take only files of its format,
    /// and answer [`Fast::Whole`] for one it cannot take, so that no fast path tried later takes it.
    fn fast<'b>(&self, _: &Path, _: &'b [u8], _: &ReadOptions) -> Fast<'b> {
        Fast::Pass
    }

    /// Indexes the traces of a file's documents.
    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        options: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError>;
}

/// Where `--format auto` tries a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detection {
    /// On a file's parsed (first) document, in the order `--format` lists the formats.
    Document,
    /// On the parsed document, just before the format named here, whose documents it also matches:
    /// OpenInference refines OTLP (an OTLP export is OpenInference when a span carries
    /// `openinference.span.kind`).
    Refines(&'static str),
    /// A binary encoding: only its fast path recognises it, on the file's name or bytes, before any
    /// JSON is parsed; never on a document.
    Binary,
}

/// What a decoder's fast path made of a file.
pub enum Fast<'b> {
    /// Not a file this fast path takes: the next format's is asked.
    Pass,
    /// A file no fast path takes: it is parsed as whole documents.
    Whole,
    /// The file's traces, or why the file cannot be read.
    Read(Result<Box<dyn Traces + 'b>, InputError>),
}

/// The traces of one file, each decodable on its own.
pub trait Traces: Sync {
    /// Number of traces in the file.
    fn len(&self) -> usize;

    /// Returns true if and only if the file holds no trace.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// About how many bytes of input trace `trace` takes (what bounds a batch).
    fn weight(&self, trace: usize) -> usize;

    /// The id trace `trace` has once decoded, found without decoding it.
    fn trace_id(&self, trace: usize) -> Cow<'_, str>;

    /// Decodes trace `trace` and appends its rows.
    fn append(&self, path: &Path, trace: usize, out: &mut TableBuilder) -> Result<(), InputError>;

    /// Input warnings about what the file holds but no trace shows (log records whose spans no input
    /// holds); none for most formats.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Returns true if and only if the file was read as OTLP logs (whatever their encoding), whose
    /// records may join spans other files of the run hold.
    fn holds_log_records(&self) -> bool {
        false
    }
}

/// Traces a decoder has already mapped whole (vendor documents and exports the scan did not take).
pub(crate) struct OwnedTraces(pub Vec<TraceRecord<'static>>);

impl Traces for OwnedTraces {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn weight(&self, trace: usize) -> usize {
        self.0[trace]
            .spans
            .iter()
            .map(|s| 64 + s.name.len() + s.attrs.len() * 64)
            .sum()
    }

    fn trace_id(&self, trace: usize) -> Cow<'_, str> {
        Cow::Borrowed(&self.0[trace].trace_id)
    }

    fn append(&self, path: &Path, trace: usize, out: &mut TableBuilder) -> Result<(), InputError> {
        #[cfg(test)]
        super::reads::decoded(path);
        let record = &self.0[trace];
        check_span_count(path, record.spans.len(), || record.trace_id.to_string())?;
        out.append(record);
        Ok(())
    }
}

/// Span positions within a trace are stored as 32-bit numbers; a trace with more spans is refused rather
/// than misnumbered.
pub(crate) fn check_span_count(
    path: &Path,
    spans: usize,
    trace_id: impl FnOnce() -> String,
) -> Result<(), InputError> {
    if u32::try_from(spans).is_ok() {
        return Ok(());
    }
    Err(InputError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "trace {} has {spans} spans, more than one trace can hold",
            trace_id()
        ),
    })
}

/// Consecutive trace ranges, each within the options' bounds.
fn batch_ranges(traces: &dyn Traces, options: &ReadOptions) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for t in 0..traces.len() {
        let weight = traces.weight(t);
        if t > start && (t - start >= options.batch_traces || bytes + weight > options.batch_bytes)
        {
            ranges.push(start..t);
            start = t;
            bytes = 0;
        }
        bytes += weight;
    }
    if start < traces.len() {
        ranges.push(start..traces.len());
    }
    ranges
}

thread_local! {
    /// Each worker's builder, kept between batches so its buffers are reused.
    static BUILDER: std::cell::RefCell<Option<TableBuilder>> = const { std::cell::RefCell::new(None) };
}

/// Decodes `traces` batch by batch, runs `each` on every batch's tables in parallel, and hands the results
/// to `sink` in trace order. At most a window of batches (two per worker) is alive at once. Returns the
/// traces the options hold, whole, in trace order (they are in no batch).
pub fn for_each_batch<R: Send>(
    path: &Path,
    traces: &dyn Traces,
    options: &ReadOptions,
    each: &(dyn Fn(TraceBatch) -> R + Sync),
    sink: &mut dyn FnMut(R) -> Result<(), InputError>,
) -> Result<Vec<TraceRecord<'static>>, InputError> {
    let ranges = batch_ranges(traces, options);
    let build = |range: &std::ops::Range<usize>| -> Batch<R> {
        let (batch, held) = BUILDER.with(|cell| {
            let mut slot = cell.borrow_mut();
            let builder = slot.get_or_insert_with(|| TableBuilder::new(options.table.clone()));
            builder.reset(options.table.clone(), options.hold.clone());
            for t in range.clone() {
                if let Err(e) = traces.append(path, t, builder) {
                    builder.finish();
                    return Err(e);
                }
            }
            Ok((builder.finish(), builder.take_held()))
        })?;
        Ok((each(batch), held))
    };
    let mut held = Vec::new();
    if !options.parallel_batches {
        for range in &ranges {
            let (result, part) = build(range)?;
            sink(result)?;
            held.extend(part);
        }
        return Ok(held);
    }
    let window = rayon::current_num_threads().max(1) * 2;
    let window = Window::new(ranges.len(), window);
    // The calling thread may be one of the pool's workers (a file read inside a parallel loop over
    // files): the helpers take the other workers, and the caller builds batches too whenever the next
    // one to sink is not ready, so no thread waits while there is a batch to build. A caller outside
    // the pool builds none: `each` may hand work to the pool and wait for it, which a pool whose
    // workers all wait for this caller to sink would never do.
    let in_pool = rayon::current_thread_index().is_some();
    let helpers = rayon::current_num_threads().saturating_sub(usize::from(in_pool));
    rayon::in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| {
                let _stop = StopOnPanic(&window);
                while let Some(b) = window.next_to_build() {
                    window.built(b, build(&ranges[b]));
                }
            });
        }
        let build_here = |b: usize| build(&ranges[b]);
        let build_here = in_pool.then_some(&build_here);
        let _stop = StopOnPanic(&window);
        let outcome: Result<(), InputError> = (|| {
            while let Some(ready) = window.next_to_sink(build_here) {
                let (result, part) = ready?;
                sink(result)?;
                held.extend(part);
                window.sunk();
            }
            Ok(())
        })();
        // On an error the helpers stop at their next batch; the scope waits for them.
        window.stop();
        outcome
    })?;
    Ok(held)
}

/// Stops the window when the thread unwinds from a panic, so that no other thread waits for a batch
/// that will never come and the scope can raise the panic.
struct StopOnPanic<'w, R>(&'w Window<R>);

impl<R> Drop for StopOnPanic<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// A batch's result and the traces it held whole.
type Batch<R> = Result<(R, Vec<TraceRecord<'static>>), InputError>;

/// The batches of [`for_each_batch`] between building and sinking: batch `b` is built only once
/// every batch before `b - size` has been sunk, so at most `size` batches' results are alive at once,
/// and they are sunk in order by the calling thread as soon as each is ready. Threads take batches in
/// order, so the next batch to sink is always built or being built, and none waits for a barrier.
struct Window<R> {
    state: std::sync::Mutex<WindowState<R>>,
    changed: std::sync::Condvar,
    size: usize,
    total: usize,
}

struct WindowState<R> {
    /// The next batch to hand to a builder.
    next: usize,
    /// The next batch to hand to the sink; results of `handed..next` wait here, `None` while being
    /// built.
    handed: usize,
    /// Batches the sink is done with: the window's room is counted from here, so a result being sunk
    /// still takes its place.
    sunk: usize,
    waiting: std::collections::VecDeque<Option<Batch<R>>>,
    stopped: bool,
}

impl<R> Window<R> {
    fn new(total: usize, size: usize) -> Window<R> {
        Window {
            state: std::sync::Mutex::new(WindowState {
                next: 0,
                handed: 0,
                sunk: 0,
                waiting: std::collections::VecDeque::with_capacity(size),
                stopped: false,
            }),
            changed: std::sync::Condvar::new(),
            size: size.max(1),
            total,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WindowState<R>> {
        // A builder that panicked leaves nothing half-changed here: every change is one assignment.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the next batch to build when the window has room for it; waits while it has none.
    /// `None` once every batch is taken or the read stopped.
    fn next_to_build(&self) -> Option<usize> {
        let mut state = self.lock();
        loop {
            if state.stopped || state.next >= self.total {
                return None;
            }
            if state.next < state.sunk + self.size {
                return Some(Self::take(&mut state));
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn take(state: &mut WindowState<R>) -> usize {
        let b = state.next;
        state.next += 1;
        state.waiting.push_back(None);
        b
    }

    fn built(&self, b: usize, result: Batch<R>) {
        let mut state = self.lock();
        let at = b - state.handed;
        state.waiting[at] = Some(result);
        drop(state);
        self.changed.notify_all();
    }

    /// The next batch's result in order, building batches with `build` (when given) while it is not
    /// ready and there is one to build; `None` once every batch is sunk.
    fn next_to_sink(&self, build: Option<&impl Fn(usize) -> Batch<R>>) -> Option<Batch<R>> {
        let mut state = self.lock();
        loop {
            // Stopped here only by a helper's panic, which the scope then raises again.
            if state.handed >= self.total || state.stopped {
                return None;
            }
            if let Some(Some(_)) = state.waiting.front() {
                state.handed += 1;
                return state.waiting.pop_front().flatten();
            }
            if let Some(build) = build
                && state.next < self.total
                && state.next < state.sunk + self.size
            {
                let b = Self::take(&mut state);
                drop(state);
                let result = build(b);
                self.built(b, result);
                state = self.lock();
                continue;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// The sink is done with the batch [`Window::next_to_sink`] gave last: its room is free again.
    fn sunk(&self) {
        self.lock().sunk += 1;
        self.changed.notify_all();
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;
    use crate::table::TableOptions;
    use crate::table::schema::{STEP_RESULT, TRACE_ID, TRACE_PROMPT};
    use rayon::prelude::*;

    /// Trace ids, prompts and step results of every batch, in the order the sink received them.
    fn read_in_batches(bytes: &[u8], options: &ReadOptions, threads: usize) -> Vec<String> {
        let path = Path::new("candidate.json");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        pool.install(|| {
            let opened = crate::ingest::open(path, bytes, options).expect("the example opens");
            let mut rows = Vec::new();
            let each = |batch: TraceBatch| {
                let mut rows = Vec::new();
                for t in 0..batch.len() {
                    rows.push(batch.trace_str(TRACE_ID).value(t).to_string());
                    rows.push(batch.trace_str(TRACE_PROMPT).value(t).to_string());
                    for s in batch.step_rows(t) {
                        rows.push(batch.step_str(STEP_RESULT).value(s).to_string());
                    }
                }
                rows
            };
            for_each_batch(path, opened.traces.as_ref(), options, &each, &mut |part| {
                rows.extend(part);
                Ok(())
            })
            .expect("the example decodes");
            rows
        })
    }

    #[test]
    fn batches_come_back_in_trace_order_whatever_their_size_and_the_thread_count() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/gate/candidate_gpt.json");
        let bytes = std::fs::read(file).expect("the example reads");
        let whole = ReadOptions::new(Format::Auto, TableOptions::default());
        let want = read_in_batches(&bytes, &whole, 1);
        assert!(want.len() > 60, "30 traces with their steps");
        for (traces, bytes_bound) in [(1, usize::MAX), (7, usize::MAX), (1024, 20_000)] {
            for threads in [1, 2, 4] {
                let options = ReadOptions {
                    batch_traces: traces,
                    batch_bytes: bytes_bound,
                    ..whole.clone()
                };
                assert_eq!(
                    read_in_batches(&bytes, &options, threads),
                    want,
                    "batches of {traces} traces / {bytes_bound} bytes on {threads} threads"
                );
            }
        }
    }

    #[test]
    fn batch_ranges_respect_both_bounds_and_keep_a_large_trace_whole() {
        struct Sized(Vec<usize>);
        impl Traces for Sized {
            fn len(&self) -> usize {
                self.0.len()
            }
            fn weight(&self, trace: usize) -> usize {
                self.0[trace]
            }
            fn trace_id(&self, _: usize) -> Cow<'_, str> {
                Cow::Borrowed("t")
            }
            fn append(&self, _: &Path, _: usize, _: &mut TableBuilder) -> Result<(), InputError> {
                Ok(())
            }
        }
        let options = ReadOptions {
            batch_traces: 3,
            batch_bytes: 100,
            ..ReadOptions::new(Format::Auto, TableOptions::default())
        };
        let traces = Sized(vec![10, 10, 10, 10, 500, 60, 50, 1]);
        assert_eq!(
            batch_ranges(&traces, &options),
            [0..3, 3..4, 4..5, 5..6, 6..8]
        );
    }

    thread_local! {
        /// The last trace a thread appended: what a batch built on that thread ends with.
        static LAST_APPENDED: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    }

    /// `0` traces of one byte each, the one numbered `1` failing to decode.
    struct Numbered(usize, Option<usize>);

    impl Traces for Numbered {
        fn len(&self) -> usize {
            self.0
        }
        fn weight(&self, _: usize) -> usize {
            1
        }
        fn trace_id(&self, _: usize) -> Cow<'_, str> {
            Cow::Borrowed("t")
        }
        fn append(
            &self,
            path: &Path,
            trace: usize,
            _: &mut TableBuilder,
        ) -> Result<(), InputError> {
            if self.1 == Some(trace) {
                return Err(InputError::Invalid {
                    path: path.to_path_buf(),
                    message: format!("trace {trace} is broken"),
                });
            }
            LAST_APPENDED.with(|last| last.set(trace));
            // Uneven work, so that batches finish out of order.
            std::thread::sleep(std::time::Duration::from_micros(
                (trace * 37 % 5) as u64 * 50,
            ));
            Ok(())
        }
    }

    /// The last trace of each batch the sink got, in order, the most results alive at once, and
    /// the read's outcome.
    fn sunk(traces: &Numbered, batch: usize) -> (Vec<usize>, usize, Result<(), InputError>) {
        let options = ReadOptions {
            batch_traces: batch,
            ..ReadOptions::new(Format::Auto, TableOptions::default())
        };
        let alive = std::sync::atomic::AtomicUsize::new(0);
        let most = std::sync::atomic::AtomicUsize::new(0);
        let each = |_: TraceBatch| {
            // As the checks do: work handed to the pool, waited for. A caller outside the pool that
            // did this while every worker waited for it to sink would wait forever.
            let handed: usize = (0..64).into_par_iter().map(|i| i % 2).sum();
            assert_eq!(handed, 32);
            let now = alive.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
            LAST_APPENDED.with(std::cell::Cell::get)
        };
        let mut got = Vec::new();
        let outcome = for_each_batch(Path::new("t.json"), traces, &options, &each, &mut |last| {
            alive.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            got.push(last);
            Ok(())
        })
        .map(|held| assert!(held.is_empty()));
        (got, most.into_inner(), outcome)
    }

    #[test]
    fn batches_are_sunk_in_order_with_at_most_two_per_thread_alive_from_inside_a_pool_or_not() {
        let traces = Numbered(203, None);
        let want: Vec<usize> = (0..203).skip(4).step_by(5).chain([202]).collect();
        for threads in [1, 2, 3, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            let (inside, most, outcome) = pool.install(|| sunk(&traces, 5));
            assert!(outcome.is_ok());
            assert_eq!(inside, want, "{threads} threads, called by a worker");
            assert!(most <= 2 * threads, "{most} alive on {threads} threads");
        }
        // Called by a thread of no pool, the caller builds batches beside the global pool's workers.
        let (outside, most, outcome) = sunk(&traces, 5);
        assert!(outcome.is_ok());
        assert_eq!(outside, want, "called from outside a pool");
        let threads = rayon::current_num_threads();
        assert!(most <= 2 * threads, "{most} alive on {threads} threads");
    }

    #[test]
    fn a_batch_that_fails_stops_the_read_after_the_batches_before_it() {
        let traces = Numbered(400, Some(203));
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            let (got, _, outcome) = pool.install(|| sunk(&traces, 10));
            assert_eq!(
                got,
                (9..200).step_by(10).collect::<Vec<_>>(),
                "{threads} threads"
            );
            let error = outcome.expect_err("trace 203 fails").to_string();
            assert!(error.contains("trace 203 is broken"), "{error}");
        }
    }
}
