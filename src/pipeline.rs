//! One run over a set of trace files: read, build tables, run the checks, collect results.
//!
//! Files are processed a group at a time (in parallel within the group), and each file is read a chunk
//! of traces at a time (`ingest::stream`); a chunk's tables are dropped as soon as its verdicts are
//! taken, so memory holds the results, not the archive.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::checks::{Check, CheckContext, TraceView};
use crate::error::InputError;
use crate::ingest::{self, Format};
use crate::redact::Redaction;
use crate::report::{Measures, TraceResult};
use crate::table::TraceBatch;
use crate::table::schema::{
    TRACE_AGENT, TRACE_COST_USD, TRACE_HAS_CONTENT, TRACE_INPUT_TOKENS, TRACE_LATENCY_MS,
    TRACE_OUTPUT_TOKENS,
};

/// What a run needs besides its files.
pub struct RunSettings {
    pub checks: Vec<&'static dyn Check>,
    pub context: CheckContext,
    pub redaction: Redaction,
    pub format: Format,
    /// Keep each trace's raw scenario key in its result (for matching labels after the run).
    pub keep_raw_scenario: bool,
}

/// The results of one file.
pub struct FileResults {
    pub path: PathBuf,
    pub results: Vec<TraceResult>,
    /// Traces with no prompt, answer, arguments or results.
    pub without_content: usize,
}

/// Runs the checks over every trace of every file, in file order. Each file is read and checked
/// independently; errors are returned per file so a caller can report all of them.
pub fn run_files(
    files: &[PathBuf],
    settings: &RunSettings,
) -> Vec<Result<FileResults, InputError>> {
    // Groups bound how many files' tables are alive at once. With a judge, files go one at a time: its
    // calls already run in parallel, and a fixed order keeps `--judge-max-calls` deterministic.
    let group = if settings.context.judge.is_some() {
        1
    } else {
        rayon::current_num_threads().max(1) * 2
    };
    let mut out = Vec::with_capacity(files.len());
    for chunk in files.chunks(group) {
        let part: Vec<Result<FileResults, InputError>> = chunk
            .par_iter()
            .map(|path| run_file(path, settings))
            .collect();
        out.extend(part);
    }
    out
}

fn run_file(path: &Path, settings: &RunSettings) -> Result<FileResults, InputError> {
    let mut results = Vec::new();
    let mut without_content = 0;
    let (_, total) = ingest::stream::read_file_chunked(
        path,
        settings.format,
        ingest::stream::CHUNK_TRACES,
        &mut |traces| {
            // Each chunk's tables live only while its checks run.
            let batch = TraceBatch::build(&traces);
            drop(traces);
            without_content += batch
                .trace_bool(TRACE_HAS_CONTENT)
                .iter()
                .filter(|v| *v == Some(false))
                .count();
            results.extend(run_batch(&batch, settings));
            Ok(())
        },
    )?;
    if total == 0 {
        return Err(InputError::NoTraces(path.to_path_buf()));
    }
    Ok(FileResults {
        path: path.to_path_buf(),
        results,
        without_content,
    })
}

/// Runs the active checks over every trace of a batch, in parallel, keeping trace order.
pub fn run_batch(batch: &TraceBatch, settings: &RunSettings) -> Vec<TraceResult> {
    if let Some(judge) = &settings.context.judge {
        // The batch's judge calls overlap here; the judged checks below read their answers.
        judge.prefetch(batch, &settings.checks);
    }
    let tokens_in = batch.trace_i64(TRACE_INPUT_TOKENS);
    let tokens_out = batch.trace_i64(TRACE_OUTPUT_TOKENS);
    let latency = batch.trace_f64(TRACE_LATENCY_MS);
    let cost = batch.trace_f64(TRACE_COST_USD);
    let agents = batch.trace_str(TRACE_AGENT);
    (0..batch.len())
        .into_par_iter()
        .map(|t| {
            let view = TraceView::new(batch, t);
            let verdicts = settings
                .checks
                .iter()
                .map(|check| {
                    let mut v = check.run(&view, &settings.context);
                    if let std::borrow::Cow::Owned(masked) = settings.redaction.mask(&v.reason) {
                        v.reason = masked;
                    }
                    v
                })
                .collect();
            use arrow_array::Array;
            let tokens = match (tokens_in.is_valid(t), tokens_out.is_valid(t)) {
                (false, false) => None,
                (a, b) => Some(
                    if a { tokens_in.value(t) as f64 } else { 0.0 }
                        + if b { tokens_out.value(t) as f64 } else { 0.0 },
                ),
            };
            TraceResult {
                trace_id: view.trace_id().to_string(),
                scenario: settings.redaction.scenario_key(view.scenario()),
                raw_scenario: settings
                    .keep_raw_scenario
                    .then(|| view.scenario().to_string()),
                verdicts,
                measures: Measures {
                    tokens,
                    latency_ms: TraceBatch::opt_f64(latency, t),
                    cost_usd: TraceBatch::opt_f64(cost, t),
                },
                agent: TraceBatch::opt_str(agents, t)
                    .map(|a| settings.redaction.mask(a).into_owned())
                    .unwrap_or_default(),
                steps: view.step_count(),
            }
        })
        .collect()
}
