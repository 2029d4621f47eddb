//! Reading a run again for what an explanation needs: the steps, answer and fired checks of the traces
//! of some scenarios, checked as the run itself checks them.
//!
//! Files are read a batch at a time and each batch is checked with the run's settings; only the traces
//! a caller keeps are handed on, so memory holds those and one batch. A trace several files of the run
//! hold is merged and checked once every file is read, as `crate::run` does it, so a trace is
//! clean here exactly when it is clean in the run.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::align::{ResultClass, Step};
use crate::error::InputError;
use crate::ingest::{self, ReadOptions};
use crate::redact::Redaction;
use crate::report::VerdictBatch;
use crate::report::steps::{MAX_CHARS, StepView};
use crate::run::{RunSettings, run_batch};
use crate::table::columns::{Columns, opt};
use crate::table::{TableOptions, TraceBatch};

/// One trace as an explanation sees it.
#[derive(Debug, Clone)]
pub(crate) struct TraceView {
    /// The scenario key, redacted as in the outputs.
    pub scenario: String,
    pub trace_id: String,
    /// The checks that fired on it, in selection order, each with its (redacted) reason.
    pub fired: Vec<(String, String)>,
    /// Its steps as compared.
    pub steps: Vec<Step>,
    /// Its steps as shown: redacted, each field cut at [`MAX_CHARS`] characters.
    pub shown: Vec<StepView>,
    /// Its final answer, normalised for comparison; `None` when it gave none.
    pub answer: Option<String>,
    /// Its final answer as shown (redacted, cut); `None` when it gave none.
    pub answer_shown: Option<String>,
}

impl TraceView {
    /// Returns true if and only if no check fired on it.
    pub(crate) fn clean(&self) -> bool {
        self.fired.is_empty()
    }
}

/// Which traces to keep: by redacted scenario key and whether a check fired on the trace.
pub(crate) type Keep<'a> = dyn Fn(&str, bool) -> bool + Sync + 'a;

/// Reads `files` as one run checked with `settings`, handing each trace `keep` accepts to `sink`, in
/// run order (the traces merged across files last); with `agent_version`, only the traces of that
/// version. Scenario keys are those the run's outputs show: qualified by domain (`airline/task-18`)
/// when the run's traces name several benchmark domains, as `crate::run` keys them, so a
/// regression the gate names is found under its own key.
pub(crate) fn read_run(
    files: &[PathBuf],
    settings: &RunSettings,
    agent_version: Option<Arc<str>>,
    keep: &Keep<'_>,
    sink: &mut dyn FnMut(TraceView),
) -> Result<(), InputError> {
    // Which domains a run holds is known only once its files are read: the views of a first read are
    // held back, and a run of several domains is read again with its keys qualified.
    let mut first = Vec::new();
    let domains = read_keyed(
        files,
        settings,
        agent_version.clone(),
        false,
        keep,
        &mut |view| first.push(view),
    )?;
    if domains.len() < 2 {
        first.into_iter().for_each(sink);
        return Ok(());
    }
    drop(first);
    read_keyed(files, settings, agent_version, true, keep, sink)?;
    Ok(())
}

/// [`read_run`] with the scenario keys qualified by domain or not; returns the domains the traces of
/// the files name (the traces merged across files aside, as `crate::run` counts them).
fn read_keyed(
    files: &[PathBuf],
    settings: &RunSettings,
    agent_version: Option<Arc<str>>,
    qualify_domains: bool,
    keep: &Keep<'_>,
    sink: &mut dyn FnMut(TraceView),
) -> Result<BTreeSet<String>, InputError> {
    let mut options = ReadOptions::new(
        settings.format,
        TableOptions {
            qualify_domains,
            ..settings.table_options(agent_version)
        },
    );
    let shared = crate::run::identity::shared_ids(files, &options)?;
    if !shared.is_empty() {
        options.hold = Some(Arc::new(shared));
    }
    let checked = |batch: TraceBatch| {
        let verdicts = run_batch(&batch, settings);
        views(&batch, &verdicts, settings, keep)
    };
    let with_domains = |batch: TraceBatch| {
        let domains: BTreeSet<String> = Columns::new(&batch)
            .domain
            .iter()
            .flatten()
            .map(str::to_string)
            .collect();
        (checked(batch), domains)
    };
    let mut domains = BTreeSet::new();
    let mut held = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let read = ingest::read_file(
            path,
            &options,
            &with_domains,
            &mut |(views, named)| {
                domains.extend(named);
                views.into_iter().for_each(&mut *sink);
                Ok(())
            },
            None,
        )?;
        if read.traces == 0 {
            return Err(InputError::NoTraces(path.clone()));
        }
        held.extend(read.held.into_iter().map(|part| (i, part)));
    }
    if !held.is_empty() {
        let merged = crate::run::identity::merged_batch(held, files, options.table);
        checked(merged).into_iter().for_each(sink);
    }
    Ok(domains)
}

/// The views of the traces of `batch` that `keep` accepts.
fn views(
    batch: &TraceBatch,
    verdicts: &VerdictBatch,
    settings: &RunSettings,
    keep: &Keep<'_>,
) -> Vec<TraceView> {
    let cols = Columns::new(batch);
    let redaction = settings.redaction;
    let names: Vec<&str> = settings.checks.iter().map(|c| c.name()).collect();
    let mut out = Vec::new();
    for (t, row) in cols.traces().zip(verdicts.rows()) {
        if !keep(row.scenario(), row.failed()) {
            continue;
        }
        let fired = names
            .iter()
            .zip(row.verdicts())
            .filter(|(_, v)| v.detected)
            .map(|(name, v)| (name.to_string(), v.reason.unwrap_or_default().to_string()))
            .collect();
        let spans = cols.span_rows(t).start;
        let mut steps = Vec::new();
        let mut shown = Vec::new();
        for s in cols.step_rows(t) {
            let tool = opt(cols.tool, s).unwrap_or("");
            let arguments = opt(cols.arguments, s).unwrap_or("");
            let result = opt(cols.result, s).unwrap_or("");
            let span_failed = cols.step_span(s).is_some_and(|p| {
                cols.status_code[spans + p] == 2 || opt(cols.span_error, spans + p).is_some()
            });
            let class = if span_failed || opt(cols.structural_error, s).is_some() {
                ResultClass::Error
            } else if cols.empty_result.value(s) {
                ResultClass::Empty
            } else {
                ResultClass::Ok
            };
            steps.push(Step::new(tool, arguments, class));
            shown.push(StepView {
                tool: cut(tool, redaction, MAX_CHARS),
                arguments: cut(arguments, redaction, MAX_CHARS),
                result: cut(result, redaction, MAX_CHARS),
                error: class == ResultClass::Error,
                actor: (!cols.agent_step(s)).then(|| cols.actor.value(s).to_string()),
            });
        }
        let answer = opt(cols.answer, t).filter(|a| !a.trim().is_empty());
        out.push(TraceView {
            scenario: row.scenario().to_string(),
            trace_id: row.trace_id().to_string(),
            fired,
            steps,
            shown,
            answer: answer.map(super::align::normalise_text),
            answer_shown: answer.map(|a| cut(a, redaction, MAX_CHARS)),
        });
    }
    out
}

/// `text` masked, then cut to `max` characters with `…` (masking first, so a cut never leaves half a
/// secret unmasked).
pub(crate) fn cut(text: &str, redaction: Redaction, max: usize) -> String {
    let masked = redaction.mask(text);
    match masked.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &masked[..end]),
        None => masked.into_owned(),
    }
}
