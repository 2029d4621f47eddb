//! The one interface every trace format implements, and the driver that turns a file's traces into
//! batches of tables in parallel.
//!
//! A [`Decoder`] names its format, says where `--format auto` tries it ([`Detection`]), recognises a
//! document of its format and indexes a file's documents into [`Traces`]: a list of traces that can each
//! be decoded on their own, in any order, straight into a [`TableBuilder`]. A decoder may also have a
//! fast path ([`Decoder::fast`]) that indexes a file without parsing it as whole documents. The formats
//! themselves are declared in one list, `formats!` in `formats/mod.rs`.
//!
//! [`for_each_batch`] cuts a file's traces into batches bounded by traces and by bytes, decodes them in
//! parallel (one builder per worker, reused across batches), a few ahead of the caller's sink, and hands
//! each batch's tables to the caller's function, whose results come back in trace order. Traces the
//! options hold ([`ReadOptions::hold`]: those other files of the run also hold) are kept whole instead
//! of becoming rows, for the run to merge.

use std::borrow::Cow;
use std::path::Path;

use simd_json::tape::Value as TapeValue;

use super::ReadOptions;
use super::json::ParseFailure;
use super::survey::Survey;
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

    /// Returns true if and only if the format's trace ids are names its runs are given (a task and
    /// trial, an instance, a file), which share long prefixes: the table and the Markdown show them
    /// wider than 0.4.1's 12 characters. The ids of 0.4.1's formats, and of the other encodings of
    /// them (OTLP protobuf and logs, span objects, SDK payloads), are random trace ids or UUIDs,
    /// which 12 characters tell apart, so their runs keep 0.4.1's column.
    fn named_ids(&self) -> bool {
        false
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
    fn fast<'b>(&self, _: &Path, _: &Survey<'b>, _: &ReadOptions) -> Fast<'b> {
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
/// to `sink` in trace order. Batches are started as earlier ones are handed on, at most two per worker
/// ahead of the sink, so no more than that many batches' results (and a batch's tables per worker) are
/// alive at once. Returns the traces the options hold, whole, in trace order (they are in no batch).
pub fn for_each_batch<R: Send>(
    path: &Path,
    traces: &dyn Traces,
    options: &ReadOptions,
    each: &(dyn Fn(TraceBatch) -> R + Sync),
    sink: &mut dyn FnMut(R) -> Result<(), InputError>,
) -> Result<Vec<TraceRecord<'static>>, InputError> {
    let ranges = batch_ranges(traces, options);
    let decode = |i: usize| -> Result<(R, Vec<TraceRecord<'static>>), InputError> {
        let range = ranges[i].clone();
        let (batch, held) = BUILDER.with(|cell| {
            let mut slot = cell.borrow_mut();
            let builder = slot.get_or_insert_with(|| TableBuilder::new(options.table.clone()));
            builder.reset(options.table.clone(), options.hold.clone());
            builder.start_batch(range.clone().map(|t| traces.weight(t)).sum());
            for t in range {
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
    let mut failure = None;
    let mut take = |decoded: Result<(R, Vec<TraceRecord<'static>>), InputError>| match decoded
        .and_then(|(result, part)| {
            held.extend(part);
            sink(result)
        }) {
        Ok(()) => true,
        Err(e) => {
            failure = Some(e);
            false
        }
    };
    if options.parallel_batches && ranges.len() > 1 {
        let window = rayon::current_num_threads().max(1) * 2;
        in_order(ranges.len(), window, &decode, &mut take);
    } else {
        // One batch at a time, on this thread: a judge's calls for a batch start only once the batch
        // before it is handed on, and stop at the first failure; and a file of one batch (a run over
        // many small files) is not worth a task.
        for i in 0..ranges.len() {
            if !take(decode(i)) {
                break;
            }
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(held),
    }
}

/// Runs `task` on the pool for each of `0..count` and hands the results to `take`, on this thread, in
/// index order. A task starts once the one `window` places before it is handed on, so workers never
/// wait for the sink or for the slowest of a group of tasks, and at most `window` results are held.
/// Once `take` returns false no task starts; the running ones are waited for and their results
/// dropped. A panic in a task is raised again here.
fn in_order<T: Send>(
    count: usize,
    window: usize,
    task: &(dyn Fn(usize) -> T + Sync),
    take: &mut dyn FnMut(T) -> bool,
) {
    type Outcome<T> = (usize, std::thread::Result<T>);
    let (sender, receiver) = std::sync::mpsc::channel::<Outcome<T>>();
    rayon::in_place_scope(|scope| {
        let start = |i: usize| {
            let sender = sender.clone();
            scope.spawn(move |_| {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(i)));
                // The receiver is gone only once this thread stopped taking results.
                let _ = sender.send((i, outcome));
            });
        };
        let mut started = 0;
        while started < count.min(window) {
            start(started);
            started += 1;
        }
        // Results that came before their turn, at their index modulo the window: the tasks started and
        // not yet handed on are fewer than the window, so no two share a slot.
        let mut early: Vec<Option<T>> = (0..window).map(|_| None).collect();
        let mut next = 0;
        while next < started {
            let (i, outcome) = receive(&receiver);
            match outcome {
                Ok(value) => early[i % window] = Some(value),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            while let Some(value) = early[next % window].take() {
                next += 1;
                if !take(value) {
                    return;
                }
                if started < count {
                    start(started);
                    started += 1;
                }
            }
        }
    });
}

/// The next message, waiting in a way that cannot stall the pool: a worker thread runs other pool work
/// while it waits (the tasks it waits for may be queued on its own deque), a thread outside the pool
/// blocks.
fn receive<T>(receiver: &std::sync::mpsc::Receiver<T>) -> T {
    use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
    loop {
        match receiver.try_recv() {
            Ok(message) => return message,
            Err(TryRecvError::Disconnected) => unreachable!("the waiting thread holds a sender"),
            Err(TryRecvError::Empty) => {}
        }
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => {}
            // Nothing to run here: wait a little for a message, then look for work again.
            Some(rayon::Yield::Idle) => {
                match receiver.recv_timeout(std::time::Duration::from_micros(200)) {
                    Ok(message) => return message,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        unreachable!("the waiting thread holds a sender")
                    }
                }
            }
            None => return receiver.recv().expect("the waiting thread holds a sender"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;
    use crate::table::TableOptions;
    use crate::table::schema::{STEP_RESULT, TRACE_ID, TRACE_PROMPT};

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
    fn results_are_taken_in_order_however_the_tasks_finish() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            let started = AtomicUsize::new(0);
            // Later tasks finish first: each sleeps less than the one before it.
            let task = |i: usize| {
                started.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_micros(
                    ((40 - i % 40) * 50) as u64,
                ));
                i * 10
            };
            let mut taken = Vec::new();
            // From outside the pool, then from one of its workers, whose waiting must not stall it.
            in_order(100, 3, &task, &mut |v| {
                taken.push(v);
                true
            });
            assert_eq!(taken, (0..100).map(|i| i * 10).collect::<Vec<_>>());
            taken.clear();
            pool.install(|| {
                in_order(100, 3, &task, &mut |v| {
                    taken.push(v);
                    true
                });
            });
            assert_eq!(taken, (0..100).map(|i| i * 10).collect::<Vec<_>>());
            // Once `take` refuses, no task starts: those already running are the window's.
            started.store(0, Ordering::SeqCst);
            taken.clear();
            pool.install(|| {
                in_order(100, 3, &task, &mut |v| {
                    taken.push(v);
                    v < 50
                });
            });
            assert_eq!(taken, (0..=5).map(|i| i * 10).collect::<Vec<_>>());
            assert!(started.load(Ordering::SeqCst) <= 6 + 3, "{threads} threads");
        }
    }

    #[test]
    #[should_panic(expected = "task 7 failed")]
    fn a_panicking_task_panics_the_caller() {
        in_order(
            20,
            4,
            &|i: usize| {
                assert!(i != 7, "task {i} failed");
                i
            },
            &mut |_| true,
        );
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
}
