//! One run over a set of trace files: read, build tables, run the checks, collect results.
//!
//! Files are processed a group at a time (in parallel within the group), and each file is read a batch
//! of traces at a time (`ingest::read_file`, batches built and checked in parallel); a batch's tables
//! are dropped as soon as its verdicts are taken, so memory holds the results, not the archive.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::checks::{Check, CheckContext, TraceView};
use crate::error::InputError;
use crate::ingest::{self, Format, ReadOptions};
use crate::redact::Redaction;
use crate::report::{Measures, TraceResult};
use crate::table::schema::{
    TRACE_AGENT, TRACE_COST_USD, TRACE_HAS_CONTENT, TRACE_INPUT_TOKENS, TRACE_LATENCY_MS,
    TRACE_OUTPUT_TOKENS,
};
use crate::table::{TableOptions, TraceBatch};

/// What a run needs besides its files.
pub struct RunSettings {
    pub checks: Vec<&'static dyn Check>,
    pub context: CheckContext,
    pub redaction: Redaction,
    pub format: Format,
    /// Keep each trace's raw scenario key in its result (for matching labels after the run).
    pub keep_raw_scenario: bool,
}

impl RunSettings {
    /// Returns true if and only if a selected check reads the root span's attributes (the policy's
    /// identity rule), so decoders must keep every attribute.
    pub fn needs_root_attributes(&self) -> bool {
        self.context.policy.uses_identity() && self.checks.iter().any(|c| c.name() == "policy")
    }
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
    // Groups bound how many files' tables are alive at once.
    let group = rayon::current_num_threads().max(1) * 2;
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
    let options = ReadOptions::new(
        settings.format,
        TableOptions {
            root_attributes: settings.needs_root_attributes(),
        },
    );
    let mut results = Vec::new();
    let mut without_content = 0;
    // Each batch's tables live only while its checks run; what is kept is its verdicts.
    let each = |batch: TraceBatch| {
        let empty = batch
            .trace_bool(TRACE_HAS_CONTENT)
            .iter()
            .filter(|v| *v == Some(false))
            .count();
        (empty, run_batch(&batch, settings))
    };
    let (_, total) = ingest::read_file(path, &options, &each, &mut |(empty, verdicts)| {
        without_content += empty;
        results.extend(verdicts);
        Ok(())
    })?;
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
