//! The check driver: each file read a batch at a time with the checks run on each batch as ingest
//! hands it over (its tables dropped once its verdict batch is taken), and each batch cut into parts
//! checked in parallel, the run's judge asked about the whole batch first.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::{Array, Float64Array, Int64Array};
use arrow_schema::SchemaRef;
use rayon::prelude::*;

use super::{FileDetails, FileResults, RunSettings, UnreadTools, links_warning};
use crate::checks::{CheckContext, JudgedVerdicts, VerdictColumn};
use crate::error::InputError;
use crate::ingest::{self, ReadOptions};
use crate::report::Measures;
use crate::report::spill::{SpilledFile, VerdictSpill};
use crate::report::steps;
use crate::report::verdicts::{self, TraceFields, VerdictBatch, VerdictBatchBuilder};
use crate::table::TraceBatch;
use crate::table::columns::{Columns, opt};

/// Traces per check pass: a batch is cut into parts of this many traces, checked in parallel.
pub(super) const PART_TRACES: usize = 256;

/// Reads one file and checks each batch of its traces as ingest hands it over; with `ids`, the file
/// gives the hashes of its trace ids there, for the trace-identity rule.
pub(super) fn run_file(
    path: &Path,
    settings: &RunSettings,
    options: &ReadOptions,
    schema: &SchemaRef,
    ids: Option<&mut Vec<u64>>,
    spill: Option<&VerdictSpill>,
) -> Result<FileResults, InputError> {
    let mut batches = Vec::new();
    let mut spilled = spill.map(|_| SpilledFile::default());
    let mut without_content = 0;
    let mut unread_tools = UnreadTools::default();
    let mut failing_steps = Vec::new();
    let mut domains = BTreeSet::new();
    // The failing traces' steps kept so far, from the batches handed on, which come before any batch
    // still being checked: a batch looks for no more than the room they leave. Each trace's steps are
    // masked, and a large file fails more traces than the reports show by thousands.
    let kept_steps = AtomicUsize::new(0);
    // Each batch's tables live only while its checks run; what is kept is its verdict batch (and the
    // steps of failing traces, when an output shows them).
    let each = |batch: TraceBatch| {
        let cols = Columns::new(&batch);
        let verdicts = check_batch(&cols, settings, schema);
        let room = settings
            .failing_steps
            .saturating_sub(kept_steps.load(Ordering::Relaxed));
        let steps = steps::failing(&cols, &verdicts, settings.redaction, room);
        let domains: BTreeSet<String> = cols.domain.iter().flatten().map(str::to_string).collect();
        let linking = batch.trace_str(crate::table::schema::TRACE_LINKED_TRACES);
        (
            cols.has_content.false_count(),
            UnreadTools::of_batch(&batch),
            verdicts,
            steps,
            (domains, linking.len() - linking.null_count()),
        )
    };
    let mut linking = 0;
    let read = ingest::read_file(
        path,
        options,
        &each,
        &mut |(empty, unread, verdicts, steps, (named, links))| {
            domains.extend(named);
            linking += links;
            without_content += empty;
            unread_tools.add(unread);
            match (spill, &mut spilled) {
                (Some(spill), Some(spilled)) => {
                    // A failed append is reported when the spill is finished, after the read.
                    spilled.batches.extend(spill.append(&verdicts));
                }
                _ => batches.push(verdicts),
            }
            let room = settings.failing_steps.saturating_sub(failing_steps.len());
            failing_steps.extend(steps.into_iter().take(room));
            kept_steps.store(failing_steps.len(), Ordering::Relaxed);
            Ok(())
        },
        ids,
    )?;
    if read.traces == 0 {
        return Err(InputError::NoTraces(path.to_path_buf()));
    }
    let mut warnings = read.warnings;
    if linking > 0 {
        warnings.push(links_warning(linking, path));
    }
    // A shared trace is counted once merged: its content may come from another file (log records).
    let details = FileDetails {
        batches,
        unread_tools,
        failing_steps,
        shared_parts: read.held,
        skipped_lines: read.skipped_lines,
        warnings,
        domains: domains.into_iter().collect(),
    };
    Ok(FileResults {
        spilled,
        without_content,
        format: read.format,
        failing_steps_dropped: false,
        details: (!details.is_empty()).then(|| Box::new(details)),
    })
}

/// Runs the active checks over every trace of a batch, keeping trace order.
pub fn run_batch(batch: &TraceBatch, settings: &RunSettings) -> VerdictBatch {
    check_batch(&Columns::new(batch), settings, &settings.verdict_schema())
}

/// Asks the run's judge, if any, about the whole batch; then cuts the batch into parts, runs every
/// check as a pass over each part in parallel, and joins the parts' verdicts in order, so the result
/// does not depend on the number of threads.
pub(super) fn check_batch(
    cols: &Columns<'_>,
    settings: &RunSettings,
    schema: &SchemaRef,
) -> VerdictBatch {
    check_units(cols, settings, schema, None)
}

/// [`check_batch`] over a batch of conversations: `turns` gives, for each row, the turn of each of
/// its steps (empty for a trace of its own), and the reasons name the turn of each step they name.
pub(super) fn check_turns(
    cols: &Columns<'_>,
    settings: &RunSettings,
    schema: &SchemaRef,
    turns: &[Vec<usize>],
) -> VerdictBatch {
    check_units(cols, settings, schema, Some(turns))
}

fn check_units(
    cols: &Columns<'_>,
    settings: &RunSettings,
    schema: &SchemaRef,
    turns: Option<&[Vec<usize>]>,
) -> VerdictBatch {
    // The whole batch's judge calls overlap here, before any part is checked; the judged checks of
    // every part then push the verdicts.
    let judged = match &settings.judge {
        Some(judge) => judge.verdicts(cols, &settings.checks),
        None => JudgedVerdicts::default(),
    };
    let cx = CheckContext {
        inputs: &settings.inputs,
        judged: &judged,
    };
    let n = cols.len();
    let parts: Vec<VerdictBatch> = (0..n.div_ceil(PART_TRACES))
        .into_par_iter()
        .map(|i| {
            let range = i * PART_TRACES..((i + 1) * PART_TRACES).min(n);
            let turns = turns.map(|t| &t[range.clone()]);
            check_part(&cols.part(range), &cx, settings, schema, turns)
        })
        .collect();
    match parts.len() {
        0 => check_part(cols, &cx, settings, schema, turns),
        1 => parts.into_iter().next().expect("one part"),
        _ => {
            let joined = arrow_select::concat::concat_batches(
                schema,
                parts.iter().map(VerdictBatch::record_batch),
            )
            .and_then(VerdictBatch::try_new);
            joined.expect("parts of one verdict schema concatenate")
        }
    }
}

/// The operations of a call to a model, as `gen_ai.operation.name` names them.
const MODEL_OPERATIONS: [&str; 3] = ["chat", "text_completion", "generate_content"];

/// Trace `t`'s model calls; `None` when none of its spans names an operation, since its format then
/// does not tell a model call from any other span.
fn model_calls(cols: &Columns<'_>, t: usize) -> Option<f64> {
    let operations = cols.operation;
    let mut named = false;
    let mut calls = 0u32;
    for row in cols.span_rows(t) {
        if operations.is_valid(row) {
            named = true;
            calls += u32::from(MODEL_OPERATIONS.contains(&operations.value(row)));
        }
    }
    named.then_some(f64::from(calls))
}

/// The verdict batch of one part: trace fields (scenario key and agent masked), then one column per
/// check.
fn check_part(
    cols: &Columns<'_>,
    cx: &CheckContext<'_>,
    settings: &RunSettings,
    schema: &SchemaRef,
    turns: Option<&[Vec<usize>]>,
) -> VerdictBatch {
    let redaction = settings.redaction;
    let mut builder = VerdictBatchBuilder::new(schema.clone(), cols.len());
    let mut scenarios = Memo::default();
    let mut agents = Memo::default();
    for t in cols.traces() {
        let raw_scenario = cols.scenario.value(t);
        let count = |a: &Int64Array| a.is_valid(t).then(|| a.value(t) as f64);
        let (input_tokens, output_tokens) = (count(cols.input_tokens), count(cols.output_tokens));
        let tokens = match (input_tokens, output_tokens) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        let measure = |a: &Float64Array| a.is_valid(t).then(|| a.value(t));
        let agent = opt(cols.agent, t).map(|a| agents.get(a, |a| redaction.mask(a)));
        let agent_version = opt(cols.agent_version, t).map(|v| redaction.mask(v));
        let slice = opt(cols.slice, t).map(|s| redaction.mask(s));
        builder.push_trace(&TraceFields {
            trace_id: cols.trace_id.value(t),
            scenario: scenarios.get(raw_scenario, |key| redaction.scenario_key_text(key)),
            raw_scenario: settings.keep_raw_scenario.then_some(raw_scenario),
            agent,
            agent_version: agent_version.as_deref(),
            steps: cols.step_rows(t).len(),
            user_steps: cols.unjudged_steps(t),
            recorded_outcome: cols.recorded_outcome(t),
            measures: Measures {
                tokens,
                latency_ms: measure(cols.latency_ms),
                cost_usd: measure(cols.cost_usd),
                input_tokens,
                output_tokens,
                model_calls: model_calls(cols, t),
            },
            root_span_id: cols
                .root(t)
                .and_then(|root| opt(cols.span_id, cols.span_rows(t).start + root)),
            slice: slice.as_deref(),
        });
    }
    let columns: Vec<VerdictColumn> = settings
        .checks
        .iter()
        .map(|check| {
            let mut column = VerdictColumn::new(cols.len(), settings.reasons, redaction);
            check.run(cols, cx, &mut column);
            column
        })
        .collect();
    let mut spans = String::new();
    let mut responses: Vec<Option<&str>> = Vec::with_capacity(columns.len());
    for (i, t) in cols.traces().enumerate() {
        spans.clear();
        responses.clear();
        let mut named_any = false;
        for (k, column) in columns.iter().enumerate() {
            if k > 0 {
                spans.push(',');
            }
            let named = column
                .reason(i)
                .and_then(verdicts::named_in)
                .and_then(|named| named_span(cols, t, named));
            if let Some((_, id)) = named {
                spans.push_str(id);
                named_any = true;
            }
            responses.push(named.and_then(|(row, _)| opt(cols.response_id, row)));
        }
        builder.push_verdict_spans(named_any.then_some(spans.as_str()));
        let root = cols
            .root(t)
            .and_then(|root| opt(cols.response_id, cols.span_rows(t).start + root));
        builder.push_response_ids(root, &responses);
    }
    // The spans are found by the step numbers as the checks wrote them; only then is each step's
    // turn named.
    let columns = match turns {
        Some(turns) => columns
            .into_iter()
            .map(|column| {
                column.rewrite_reasons(|i, reason| crate::sessions::name_turns(reason, &turns[i]))
            })
            .collect(),
        None => columns,
    };
    // A check that pushes other than one verdict per trace is a bug, not bad input.
    builder
        .finish(columns)
        .expect("each check pushes one verdict per trace")
}

/// The span a reason of trace `t` names (a step's own span, or a span by its place): its row and
/// its id. A comma would break the row's list of ids, and no OTel id holds one.
fn named_span<'c>(
    cols: &Columns<'c>,
    t: usize,
    named: verdicts::Named,
) -> Option<(usize, &'c str)> {
    let position = match named {
        verdicts::Named::Step(n) => {
            let steps = cols.step_rows(t);
            (n <= steps.len()).then(|| cols.step_span(steps.start + n - 1))??
        }
        verdicts::Named::Span(n) => n - 1,
    };
    let spans = cols.span_rows(t);
    let row = spans.start + position;
    (position < spans.len())
        .then(|| opt(cols.span_id, row))?
        .filter(|id| !id.is_empty() && !id.contains(','))
        .map(|id| (row, id))
}

/// The last text a part masked and what masking gave: a part's traces mostly repeat their agent, and
/// runs of them their scenario key, so each run of one value is masked once. The masked text goes into
/// one buffer the part reuses, so a part whose keys all differ (one derived key per prompt) does not
/// allocate per trace.
#[derive(Default)]
pub(super) struct Memo<'a> {
    raw: Option<&'a str>,
    masked: String,
}

impl<'a> Memo<'a> {
    pub(super) fn get<'m>(
        &'m mut self,
        raw: &'a str,
        mask: impl FnOnce(&'a str) -> Cow<'a, str>,
    ) -> &'m str {
        if self.raw != Some(raw) {
            let masked = mask(raw);
            self.masked.clear();
            self.masked.push_str(&masked);
            self.raw = Some(raw);
        }
        &self.masked
    }
}
