//! Reading trace files: from paths on the command line to batches of tables.
//!
//! Owns file discovery (`paths`: directories walked recursively in sorted order, glob patterns), pipes
//! (`stream`: `-`, FIFOs and devices, read once), decompression (`archive`: gzip and zstd under a bomb
//! guard), a file's contents as readers see them (`contents`: a byte-order mark read past, and the JSON
//! lines `--skip-bad-input` leaves out), framing (one document, a JSON list of
//! exports, or JSON lines with one export or record per line), format detection (`detect`) and the one
//! decoder per format (`formats`, where one list declares them; [`DECODERS`]), all behind [`Decoder`].
//! [`open`] indexes a file: it asks the formats' fast paths first (OTLP protobuf, known by its name or
//! bytes; large OTLP exports, whose spans the structural scan [`scan`] locates so that each trace is
//! parsed on its own when its batch is built), else parses the file as whole documents and detects their
//! format. Reading a file gives the hashes of its trace ids ([`id_hash`]), by which a run finds the
//! traces its files may share; [`read_whole`] decodes just those again, and [`trace_ids`] lists a file's
//! ids from its index. Traces are decoded one by one when batches are built (a format read whole, such
//! as a vendor export, is decoded by the opening itself). Knows nothing of checks.

pub mod archive;
pub(crate) mod contents;
pub(crate) mod decoder;
pub(crate) mod detect;
pub(crate) mod formats;
pub(crate) mod json;
pub(crate) mod names;
pub mod partition;
pub(crate) mod paths;
pub mod remote;
pub(crate) mod source;
pub(crate) mod stream;
pub(crate) mod survey;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use crate::error::InputError;
use crate::table::record::TraceRecord;
use crate::table::{TableOptions, TraceBatch};
use decoder::Document;
use json::with_tape;

pub use decoder::{Decoder, Detection, Fast, ReadProgress, Traces, for_each_batch};
/// The structural scan of OTLP/JSON exports, public for the benchmark of its throughput.
pub use formats::otlp::scan;
pub use formats::{DECODERS, Format};
pub use paths::{Inputs, Sources, expand_inputs, expand_paths};
pub use survey::Survey;

/// How a file is read.
#[derive(Clone)]
pub struct ReadOptions {
    /// The format to read the file as; [`Format::Auto`] detects it.
    pub format: Format,
    /// What the tables keep beyond what every check reads.
    pub table: TableOptions,
    /// Traces a batch holds at most.
    pub batch_traces: usize,
    /// Bytes of input a batch holds at most (a single larger trace makes a batch of its own).
    pub batch_bytes: usize,
    /// Build and check several batches at once. Off when the per-batch work must not overlap (a
    /// judge's calls for one batch already run in parallel, and its memo holds one batch).
    pub parallel_batches: bool,
    /// Where to report progress, if anywhere.
    pub progress: Option<Arc<dyn ReadProgress>>,
    /// Trace ids whose traces are kept whole instead of becoming rows (the traces other files of the run
    /// also hold, merged once every file is read; see `crate::identity`).
    pub hold: Option<Arc<HashSet<String>>>,
    /// `--skip-bad-input`: the JSON lines of a file that do not parse are left out, each with an input
    /// warning, instead of stopping the file.
    pub skip_bad_lines: bool,
    /// The file is opened only to list its trace ids ([`trace_ids`]): a trace that holds nothing but
    /// content for spans of other files (OTLP log records) is listed, so the run finds it shared.
    pub listing: bool,
}

impl ReadOptions {
    /// Options for `format` and `table`, with the defaults for everything else.
    pub fn new(format: Format, table: TableOptions) -> ReadOptions {
        ReadOptions {
            format,
            table,
            batch_traces: 1024,
            batch_bytes: 8 << 20,
            parallel_batches: true,
            progress: None,
            hold: None,
            skip_bad_lines: false,
            listing: false,
        }
    }

    /// Returns true if and only if decoders must keep every attribute, not just those checks read.
    pub fn all_attributes(&self) -> bool {
        self.table.root_attributes
            || self
                .table
                .slices
                .as_ref()
                .is_some_and(|keys| keys.reads_attributes())
    }
}

/// The refusal of a document no format recognises: every format by its title, JSON formats first, in
/// the order `--format` lists them (as 0.4.1 lists its own).
fn unrecognised() -> String {
    let (binary, text): (Vec<&dyn Decoder>, Vec<&dyn Decoder>) = DECODERS
        .iter()
        .copied()
        .partition(|d| d.detection() == Detection::Binary);
    let names: Vec<&str> = text.iter().chain(&binary).map(|d| d.title()).collect();
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
    #[cfg(test)]
    reads::opened(path);
    let protobuf = formats::otlp_proto::named(path);
    // Markers choose a reader only under `--format auto`, and never for a file named as protobuf.
    let survey = Survey::new(bytes, options.format == Format::Auto && !protobuf);
    let wanted = signal(options.format, protobuf, &survey);
    let tried = match wanted.decoder() {
        Some(decoder) => vec![(wanted, decoder)],
        None => Format::decoded()
            .filter(|(_, d)| d.detection() == Detection::Binary)
            .chain(formats::detection_order())
            .collect(),
    };
    let (binary, text): (Vec<_>, Vec<_>) = tried
        .into_iter()
        .partition(|(_, d)| d.detection() == Detection::Binary);
    // A binary encoding is recognised on the raw bytes, before text is required to be UTF-8.
    let (mut format, mut answer) = fast_path(&binary, path, &survey, options);
    if !matches!(answer, Fast::Read(_))
        && let Some(offset) = survey.first_invalid_utf8()
    {
        return Err(InputError::Json {
            path: path.to_path_buf(),
            offset,
            message: "invalid UTF-8".to_string(),
        });
    }
    if !matches!(answer, Fast::Read(_)) && bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError::Empty(path.to_path_buf()));
    }
    if matches!(answer, Fast::Pass) {
        (format, answer) = fast_path(&text, path, &survey, options);
    }
    if let Fast::Read(traces) = answer {
        let traces = traces?;
        // Protobuf logs are OTLP logs: the run joins their records across files as it does JSON's.
        if traces.holds_log_records() {
            format = Format::OtlpLogs;
        }
        return Ok(Opened { format, traces });
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
    let ((format, decoder), docs) = match with_tape(bytes, |doc| choose(wanted, doc)) {
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
            let chosen = with_tape(lines[0].bytes, |doc| choose(wanted, doc))
                .map_err(|f| lines[0].json_error(path, f))?
                .map_err(invalid)?;
            (chosen, lines)
        }
    };
    let traces = decoder.read(path, &docs, options)?;
    Ok(Opened { format, traces })
}

/// The format to read a file as: the one asked for, except that with `--format auto` a file that holds
/// OTLP logs (a `"resourceLogs"` key anywhere, so that a file mixing both signals is found whichever
/// comes first) is read by the logs decoder, which reads its spans too; and that `otlp-logs` forced on a
/// file named as protobuf is read by the protobuf reader, which reads logs as that decoder does. A file
/// named as protobuf is never taken for JSON logs: its strings may spell `"resourceLogs"` too.
fn signal(format: Format, protobuf: bool, survey: &Survey<'_>) -> Format {
    if format == Format::OtlpLogs && protobuf {
        Format::OtlpProto
    } else if format == Format::Auto && !protobuf && survey.mentions_resource_logs() {
        Format::OtlpLogs
    } else {
        format
    }
}

/// The first answer other than [`Fast::Pass`] of the fast paths of `formats`, in order, with its format.
fn fast_path<'b>(
    formats: &[(Format, &'static dyn Decoder)],
    path: &Path,
    survey: &Survey<'b>,
    options: &ReadOptions,
) -> (Format, Fast<'b>) {
    for &(format, decoder) in formats {
        match decoder.fast(path, survey, options) {
            Fast::Pass => {}
            answer => return (format, answer),
        }
    }
    (Format::Auto, Fast::Pass)
}

/// The decoder for a document: the forced format's, or the first that recognises it.
fn choose(
    format: Format,
    doc: simd_json::tape::Value<'_, '_>,
) -> Result<(Format, &'static dyn Decoder), String> {
    match format.decoder() {
        Some(decoder) => Ok((format, decoder)),
        None => formats::detection_order()
            .into_iter()
            .find(|(_, d)| d.detect(doc))
            .ok_or_else(unrecognised),
    }
}

/// Opens a file's contents ([`open`]); under [`ReadOptions::skip_bad_lines`], a JSON-lines file that
/// fails on lines that do not parse is opened again without them, and `f` is told which were left out.
fn with_opened<T>(
    path: &Path,
    options: &ReadOptions,
    f: impl FnOnce(Opened<'_>, contents::SkippedLines) -> Result<T, InputError>,
) -> Result<T, InputError> {
    contents::with(path, |data| {
        let error = match open(path, &data, options) {
            Ok(opened) => return f(opened, contents::SkippedLines::default()),
            Err(error) if options.skip_bad_lines => error,
            Err(error) => return Err(error),
        };
        let (data, skipped) = contents::read_past_bad_lines(path, data, error)?;
        f(open(path, &data, options)?, skipped)
    })
}

/// The ids of a file's traces, in trace order, from its index: no trace is decoded (a format read whole
/// when opened, such as a vendor export or protobuf, is decoded by the opening itself). A run with a
/// judge lists every file's ids first, to find the traces several files hold before any is judged.
pub fn trace_ids(path: &Path, options: &ReadOptions) -> Result<Vec<String>, InputError> {
    let options = &ReadOptions {
        listing: true,
        ..options.clone()
    };
    with_opened(path, options, |opened, _| {
        let traces = opened.traces.as_ref();
        Ok((0..traces.len())
            .map(|t| traces.trace_id(t).into_owned())
            .collect())
    })
}

/// A 64-bit hash of a trace id. A run gathers its files' id hashes as it reads them, to find the ids
/// several files may share without keeping every id; equal hashes are then confirmed on the ids.
pub fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x07ac_e1d5).hash_one(id)
}

/// The traces of a file whose id hash is one of `hashes`, decoded and kept whole, in trace order (the
/// parts of the traces a run finds in several files once every file was read: only they are decoded
/// again).
pub fn read_whole(
    path: &Path,
    options: &ReadOptions,
    hashes: &HashSet<u64>,
) -> Result<Vec<TraceRecord<'static>>, InputError> {
    with_opened(path, options, |opened, _| {
        let traces = opened.traces.as_ref();
        let picked: Vec<usize> = (0..traces.len())
            .filter(|&t| hashes.contains(&id_hash(&traces.trace_id(t))))
            .collect();
        let ids: HashSet<String> = picked
            .iter()
            .map(|&t| traces.trace_id(t).into_owned())
            .collect();
        let mut builder = crate::table::TableBuilder::new(options.table.clone());
        builder.reset(options.table.clone(), Some(Arc::new(ids)));
        for t in picked {
            traces.append(path, t, &mut builder)?;
        }
        Ok(builder.take_held())
    })
}

/// What reading a file gave besides its batches.
pub struct FileRead {
    /// The format the file was read as.
    pub format: Format,
    /// The file's number of traces, held ones included.
    pub traces: usize,
    /// The traces the options hold ([`ReadOptions::hold`]), whole, in trace order.
    pub held: Vec<TraceRecord<'static>>,
    /// The JSON lines left out ([`ReadOptions::skip_bad_lines`]), one input warning each.
    pub skipped_lines: Vec<String>,
    /// The decoder's input warnings about the file ([`Traces::warnings`]).
    pub warnings: Vec<String>,
}

/// Reads `path` (decompressing gzip and zstd files), runs `each` on every batch of its traces in
/// parallel and hands the results to `sink` in trace order. When `ids` is given, the hashes of the
/// file's trace ids ([`id_hash`]) are added to it, in trace order, as soon as the file is indexed (so
/// even when a trace fails to decode later).
pub fn read_file<R: Send>(
    path: &Path,
    options: &ReadOptions,
    each: &(dyn Fn(TraceBatch) -> R + Sync),
    sink: &mut dyn FnMut(R) -> Result<(), InputError>,
    ids: Option<&mut Vec<u64>>,
) -> Result<FileRead, InputError> {
    let Some(progress) = options.progress.as_deref() else {
        return read_file_with(path, options, each, sink, None, ids);
    };
    let stored = stream::len(path);
    let reported = std::sync::atomic::AtomicU64::new(0);
    let result = read_file_with(
        path,
        options,
        each,
        sink,
        Some((progress, stored, &reported)),
        ids,
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
    ids: Option<&mut Vec<u64>>,
) -> Result<FileRead, InputError> {
    with_opened(path, options, |opened, skipped| {
        let total = opened.traces.len();
        if let Some(ids) = ids {
            let traces = opened.traces.as_ref();
            ids.extend((0..total).map(|t| id_hash(&traces.trace_id(t))));
        }
        let warnings = opened.traces.warnings();
        let held = match progress {
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
                for_each_batch(path, opened.traces.as_ref(), options, &counted, sink)?
            }
        };
        Ok(FileRead {
            format: opened.format,
            traces: total,
            held,
            skipped_lines: skipped.0,
            warnings,
        })
    })
}

/// Reads every trace of a file (decompressing gzip and zstd files) into one batch (tests and small
/// samples).
pub fn read_path(path: &Path, format: Format) -> Result<(Format, TraceBatch), InputError> {
    contents::with(path, |data| read_bytes(path, &data, format))
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
            ..TableOptions::default()
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

/// How often each file was opened and how many times one of its traces was decoded (`Traces::append`),
/// in test builds: what the tests of the trace-identity rule count to show that no trace is decoded
/// twice. Files are told apart by
/// path (each test writes its own), since tests run in parallel and reads run on worker threads.
#[cfg(test)]
pub(crate) mod reads {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    /// A file's opens and decoded traces.
    #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
    pub(crate) struct Reads {
        pub opened: usize,
        pub decoded: usize,
    }

    static READS: Mutex<Option<HashMap<PathBuf, Reads>>> = Mutex::new(None);

    fn count(path: &Path, f: impl FnOnce(&mut Reads)) {
        let mut reads = READS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(reads
            .get_or_insert_with(HashMap::new)
            .entry(path.to_path_buf())
            .or_default());
    }

    pub(crate) fn opened(path: &Path) {
        count(path, |r| r.opened += 1);
    }

    pub(crate) fn decoded(path: &Path) {
        count(path, |r| r.decoded += 1);
    }

    /// What was counted for `path` so far.
    pub(crate) fn of(path: &Path) -> Reads {
        let reads = READS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        reads
            .as_ref()
            .and_then(|r| r.get(path))
            .copied()
            .unwrap_or_default()
    }
}
