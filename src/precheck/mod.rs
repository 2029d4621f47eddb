//! `precheck`: what an export will look like to the checks, before any check runs.
//!
//! A gate over traces it cannot read passes silently, so precheck reads a file the way `check` does and
//! lists what would make the checks blind or wrong: structural errors (duplicate span ids, missing or
//! backwards timestamps, tool calls without a name) and warnings about data the checks will not see
//! (no root, dangling parents, no prompt or answer, tool spans read by name only or not read at all).
//! Per-trace issues come from the span and step tables ([`TraceBatch`]), so they see exactly the steps,
//! roots and prompts the checks see. Rows and messages follow faultgate 0.4.1 (docs/compatibility.md §5),
//! plus one warning it lacks: an export from which no tool step is read at all.
//!
//! Reading problems are issues too, not failures: precheck exists to say what is wrong with a file.

pub(crate) mod json_error;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use arrow_array::Array;
use serde_json::Value;

use crate::compat::value::py_strip;
use crate::error::{InputError, display_path};
use crate::ingest::Format;
#[cfg(test)]
use crate::table::record::TraceRecord;
use crate::table::schema::*;
use crate::table::{TableBuilder, TableOptions, TraceBatch};

/// How bad an issue is: errors make precheck exit 2, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Error,
    Warning,
}

impl Level {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// One finding: about a trace (`trace` holds its full id) or about the whole file (`trace` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub level: Level,
    pub trace: Option<String>,
    pub message: String,
}

impl Issue {
    fn error(trace: Option<&str>, message: String) -> Issue {
        Issue {
            level: Level::Error,
            trace: trace.map(str::to_string),
            message,
        }
    }

    fn warning(trace: Option<&str>, message: String) -> Issue {
        Issue {
            level: Level::Warning,
            trace: trace.map(str::to_string),
            message,
        }
    }

    /// The output line: level padded to 8, the trace column (first 12 code points of the id, or `-`)
    /// padded to 12, two spaces, the message.
    pub(crate) fn line(&self) -> String {
        let trace: String = match &self.trace {
            Some(id) => id.chars().take(12).collect(),
            None => "-".to_string(),
        };
        format!("{:<8} {:<12}  {}", self.level.name(), trace, self.message)
    }
}

/// What precheck needs besides the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub format: Format,
    /// Traces to check, from the start of the file; 0 or less checks every trace.
    pub sample: i64,
    /// The policy reads tool results as JSON (`result` or `latest` requirements).
    pub needs_json_results: bool,
}

/// The outcome for one file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Precheck {
    /// The format name shown: the detected format, the `--format` argument when loading failed, or
    /// `unknown` when the file could not be read or parsed.
    pub format: String,
    pub total: usize,
    pub checked: usize,
    /// Tool steps read from the checked traces.
    pub steps: usize,
    pub issues: Vec<Issue>,
    /// Said once below the issues when, in a format that need not record times, some checked trace
    /// has none to measure its latency with.
    pub note: Option<String>,
}

/// Warned when a policy's `result` / `latest` requirements can never be met.
pub(crate) const NO_JSON_RESULTS: &str = "the policy's requires use result / latest, but no tool result in the checked traces is JSON: those prerequisites can never be met";

/// The end of the warning for exports whose spans yield no tool step.
pub(crate) const TOOLS_NOT_READ: &str =
    "this export's tools are not read; every structural check will pass";

impl Precheck {
    pub(crate) fn errors(&self) -> usize {
        self.issues
            .iter()
            .filter(|i| i.level == Level::Error)
            .count()
    }

    pub(crate) fn warnings(&self) -> usize {
        self.issues.len() - self.errors()
    }

    /// The issue lines and the summary line, each ending with a newline.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        for issue in &self.issues {
            out.push_str(&issue.line());
            out.push('\n');
        }
        if let Some(note) = &self.note {
            let _ = writeln!(out, "note: {note}");
        }
        let _ = writeln!(
            out,
            "precheck: {} · format {} · checked {} of {} traces · {} tool steps read · {} error(s), {} warning(s)",
            if self.errors() > 0 { "FAILED" } else { "OK" },
            self.format,
            self.checked,
            self.total,
            self.steps,
            self.errors(),
            self.warnings()
        );
        out
    }

    fn failed(format: String, message: String) -> Precheck {
        Precheck {
            format,
            total: 0,
            checked: 0,
            steps: 0,
            issues: vec![Issue::error(None, message)],
            note: None,
        }
    }
}

/// Prechecks one file. Never fails: a file that cannot be read, parsed or loaded is an error issue.
pub(crate) fn precheck_file(path: &Path, options: &Options) -> Precheck {
    match sample_file(path, options) {
        Ok((detected, total, batch)) => precheck_batch(&batch, total, detected, options),
        Err(error) => read_failure(path, options.format, &error),
    }
}

/// Reads a file the way `check` does and builds the tables of its sampled traces: its format, its
/// number of traces and the sample's batch.
fn sample_file(path: &Path, options: &Options) -> Result<(Format, usize, TraceBatch), InputError> {
    crate::ingest::contents::with(path, |data| {
        let read = crate::ingest::ReadOptions::new(options.format, TableOptions::default());
        let opened = crate::ingest::open(path, &data, &read)?;
        let total = opened.traces.len();
        let mut builder = TableBuilder::new(read.table);
        for t in 0..sample_size(options, total) {
            opened.traces.append(path, t, &mut builder)?;
        }
        Ok((opened.format, total, builder.finish()))
    })
}

/// How many of `total` traces are checked.
fn sample_size(options: &Options, total: usize) -> usize {
    match usize::try_from(options.sample) {
        Ok(n) if n > 0 => n.min(total),
        _ => total,
    }
}

/// The single issue for a file that could not be read (0.4.1's wording: reading and parsing are
/// "cannot parse", everything after that is "cannot load as <format argument>").
fn read_failure(path: &Path, format: Format, error: &InputError) -> Precheck {
    let shown = display_path(path);
    match error {
        InputError::Read { source, .. } => Precheck::failed(
            "unknown".into(),
            format!("cannot parse {shown}: {}", os_error_text(source, &shown)),
        ),
        InputError::NotFound(_) => Precheck::failed(
            "unknown".into(),
            format!(
                "cannot parse {shown}: [Errno 2] No such file or directory: {}",
                crate::compat::reason::py_repr_str(&shown)
            ),
        ),
        InputError::Json { message, .. } | InputError::NotJson { message, .. } => {
            // Python's wording and position when the text is UTF-8 and Python rejects it too, or
            // Python's decoding error when it is not.
            let python = crate::ingest::stream::open(path).ok().and_then(|bytes| {
                match String::from_utf8(bytes.to_vec()) {
                    Ok(text) => json_error::python_json_error(&text),
                    Err(e) => json_error::python_utf8_error(e.as_bytes()),
                }
            });
            let message = python.as_deref().unwrap_or(message);
            Precheck::failed("unknown".into(), format!("cannot parse {shown}: {message}"))
        }
        // Python's wording and position for a document of whitespace, as 0.4.1's precheck prints it.
        InputError::Empty(_) => {
            let text = crate::ingest::stream::open(path)
                .ok()
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default();
            let message = json_error::python_json_error(&text)
                .unwrap_or_else(|| "Expecting value: line 1 column 1 (char 0)".to_string());
            Precheck::failed("unknown".into(), format!("cannot parse {shown}: {message}"))
        }
        InputError::Invalid { message, .. } | InputError::Unrecognised { message, .. } => {
            Precheck::failed(
                format.name().into(),
                format!("cannot load as {}: {message}", format.name()),
            )
        }
        other => Precheck::failed(
            format.name().into(),
            format!("cannot load as {}: {other}", format.name()),
        ),
    }
}

/// Python's text for an OS error: `[Errno 2] No such file or directory: 'p.json'`.
fn os_error_text(error: &std::io::Error, shown: &str) -> String {
    let full = error.to_string();
    let description = full
        .rfind(" (os error ")
        .map_or(full.as_str(), |at| &full[..at]);
    let quoted = crate::compat::reason::py_repr_str(shown);
    match error.raw_os_error() {
        Some(code) => format!("[Errno {code}] {description}: {quoted}"),
        None => format!("{description}: {quoted}"),
    }
}

/// The format name precheck reports for traces read with `format`: with `auto`, an OTLP export is
/// `openinference` when any span carries `openinference.span.kind`, else `otlp`.
pub(crate) fn format_name(format: Format, batch: &TraceBatch) -> &'static str {
    match format {
        Format::Auto => {
            let openinference = batch.span_bool(SPAN_OPENINFERENCE_KIND).true_count() > 0;
            if openinference {
                "openinference"
            } else {
                "otlp"
            }
        }
        other => other.name(),
    }
}

/// Returns true if and only if exports of `format` give their spans times, so that a span without
/// one is broken. Benchmark logs (tau-bench, SWE-agent `.traj`, Who&When) record messages, not spans:
/// some of their files carry timestamps, most carry none, and either is a valid file.
fn records_times(format: Format) -> bool {
    !matches!(
        format,
        Format::TauBench | Format::SweAgent | Format::MultiAgent
    )
}

/// Prechecks traces already read with `detected`.
#[cfg(test)]
pub(crate) fn precheck_traces(
    traces: &[TraceRecord<'_>],
    detected: Format,
    options: &Options,
) -> Precheck {
    let batch = TraceBatch::build(&traces[..sample_size(options, traces.len())]);
    precheck_batch(&batch, traces.len(), detected, options)
}

/// Prechecks the sampled traces' tables of a file holding `total` traces read as `detected`.
fn precheck_batch(
    batch: &TraceBatch,
    total: usize,
    detected: Format,
    options: &Options,
) -> Precheck {
    let format = format_name(detected, batch);
    if total == 0 {
        return Precheck::failed(format.into(), "no traces in file".into());
    }
    let checked = batch.len();
    let openinference = format == "openinference";
    let times = records_times(detected);
    let mut issues: Vec<Issue> = (0..checked)
        .flat_map(|t| trace_issues(batch, t, openinference, times))
        .collect();
    let steps = batch.steps.num_rows();
    if options.needs_json_results && !any_json_result(batch) {
        issues.push(Issue::warning(None, NO_JSON_RESULTS.into()));
    }
    // Only traces that show tool activity are warned about: a trace without tools passes its tool
    // checks rightly.
    let unread = crate::run::UnreadTools::of_batch(batch);
    if let Some((id, evidence)) = unread.first() {
        issues.push(Issue::warning(
            None,
            format!(
                "{} of the checked traces show tool activity but yield no tool step (trace {}: {evidence}): {TOOLS_NOT_READ}",
                unread.traces.len(),
                id.chars().take(12).collect::<String>()
            ),
        ));
    }
    let unmeasured = batch.trace_f64(TRACE_LATENCY_MS).null_count() > 0;
    let note = (!times && unmeasured)
        .then(|| format!("format {format} records no times: latency is not measured"));
    Precheck {
        format: format.into(),
        total,
        checked,
        steps,
        issues,
        note,
    }
}

/// Returns true if and only if some step result is a JSON object or list (after one extra decode of a
/// JSON string), which is what `result` and `latest` requirements read.
fn any_json_result(batch: &TraceBatch) -> bool {
    let results = batch.step_str(STEP_RESULT);
    (0..results.len()).any(|row| is_json_container(results.value(row)))
}

fn is_json_container(raw: &str) -> bool {
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(_) | Value::Array(_)) => true,
        Ok(Value::String(inner)) => matches!(
            serde_json::from_str::<Value>(&inner),
            Ok(Value::Object(_) | Value::Array(_))
        ),
        _ => false,
    }
}

/// The issues of trace `t`, in §5.2 order. Without `times` (a format that records none), a span
/// without a start time is no error; one whose times are backwards still is.
pub(crate) fn trace_issues(
    batch: &TraceBatch,
    t: usize,
    openinference: bool,
    times: bool,
) -> Vec<Issue> {
    let id = batch.trace_str(TRACE_ID).value(t);
    let trace = Some(id);
    let rows = batch.span_rows(t);
    let span_ids = batch.span_str(SPAN_ID);
    let parents = batch.span_str(SPAN_PARENT);
    let names = batch.span_str(SPAN_NAME);
    let starts = batch.span_i64(SPAN_START);
    let ends = batch.span_i64(SPAN_END);
    let is_tool = batch.span_bool(SPAN_IS_TOOL);
    let has_operation = batch.span_bool(SPAN_HAS_OPERATION);
    let backs_step = batch.span_bool(SPAN_BACKS_STEP);
    let tool_attributes = batch.span_bool(SPAN_TOOL_ATTRIBUTES);
    let openinference_kind = batch.span_bool(SPAN_OPENINFERENCE_KIND);
    let mut issues = Vec::new();

    // 1. Duplicate span ids, sorted, one issue each.
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(rows.len());
    for row in rows.clone() {
        *seen.entry(span_ids.value(row)).or_default() += 1;
    }
    let duplicates: BTreeSet<&str> = seen
        .iter()
        .filter(|&(_, &n)| n > 1)
        .map(|(&id, _)| id)
        .collect();
    for dup in duplicates {
        issues.push(Issue::error(trace, format!("duplicate span id {dup}")));
    }

    // 2. Roots: spans without a parent (an empty parent id was read as none).
    let roots: Vec<usize> = rows.clone().filter(|&r| parents.is_null(r)).collect();
    match roots.len() {
        0 => issues.push(Issue::warning(
            trace,
            "no root span in the export: prompt and answer are read from child spans".into(),
        )),
        1 => {}
        k => issues.push(Issue::warning(
            trace,
            format!("{k} root spans; the first is used as the run"),
        )),
    }

    // 3. Parents that are not in the export.
    let mut dangling = 0;
    let mut missing: BTreeSet<&str> = BTreeSet::new();
    for row in rows.clone().filter(|&r| parents.is_valid(r)) {
        let parent = parents.value(row);
        if !seen.contains_key(parent) {
            dangling += 1;
            missing.insert(parent);
        }
    }
    if dangling > 0 {
        let first: Vec<&str> = missing.iter().take(3).copied().collect();
        issues.push(Issue::warning(
            trace,
            format!(
                "{dangling} span(s) point at {} parent(s) not in the export ({})",
                missing.len(),
                first.join(", ")
            ),
        ));
    }

    // 4. Timestamps, per span in trace order.
    for row in rows.clone() {
        let (start, end) = (starts.value(row), ends.value(row));
        let what = if start <= 0 {
            if !times {
                continue;
            }
            "missing start time"
        } else if end != 0 && end < start {
            "ends before it starts"
        } else {
            continue;
        };
        issues.push(Issue::error(
            trace,
            format!(
                "span {} ({}): {what}",
                span_ids.value(row),
                names.value(row)
            ),
        ));
    }

    // 5. Spans that start before the (first) root.
    if let Some(&root) = roots.first() {
        let root_start = starts.value(root);
        if root_start > 0 {
            let early = rows
                .clone()
                .filter(|&r| (1..root_start).contains(&starts.value(r)))
                .count();
            if early > 0 {
                issues.push(Issue::warning(
                    trace,
                    format!("{early} span(s) start before the root span"),
                ));
            }
        }
    }

    // 6. Tool calls without a name.
    let tools = batch.step_str(STEP_TOOL);
    for (index, row) in batch.step_rows(t).enumerate() {
        let tool = tools.value(row);
        if tool.is_empty() || tool == "unknown" {
            issues.push(Issue::error(
                trace,
                format!("step {}: tool call without a name", index + 1),
            ));
        }
    }

    // 7. Tool spans recognised by their name only.
    let name_only = rows
        .clone()
        .filter(|&r| is_tool.value(r) && !has_operation.value(r))
        .count();
    if name_only > 0 {
        issues.push(Issue::warning(
            trace,
            format!(
                "{name_only} tool span(s) recognised by span name only; set gen_ai.operation.name = execute_tool"
            ),
        ));
    }

    // 8. Spans with tool attributes that no step is read from.
    let unread: Vec<usize> = rows
        .clone()
        .filter(|&r| !backs_step.value(r) && parents.is_valid(r) && tool_attributes.value(r))
        .collect();
    if !unread.is_empty() {
        let distinct: BTreeSet<&str> = unread.iter().map(|&r| names.value(r)).collect();
        let first: Vec<&str> = distinct.into_iter().take(3).collect();
        issues.push(Issue::warning(
            trace,
            format!(
                "{} span(s) carry tool attributes but are not read as tool steps ({}); set gen_ai.operation.name = execute_tool",
                unread.len(),
                first.join(", ")
            ),
        ));
    }

    // 9. Native tool spans inside an OpenInference export.
    if openinference
        && rows
            .clone()
            .any(|r| is_tool.value(r) && !openinference_kind.value(r))
    {
        issues.push(Issue::warning(
            trace,
            "mixed export: native execute_tool spans next to OpenInference spans; steps are read from the tool spans, not from LLM messages (--format otlp reads the same steps)".into(),
        ));
    }

    // 10-12. Content the checks read.
    if !batch.trace_bool(TRACE_HAS_CONTENT).value(t) {
        issues.push(Issue::warning(
            trace,
            "no content attributes (prompt, answer, tool arguments or results): rules see structure only".into(),
        ));
    }
    let linked = batch.trace_str(TRACE_LINKED_TRACES);
    if linked.is_valid(t) {
        let ids: Vec<String> = serde_json::from_str(linked.value(t)).unwrap_or_default();
        issues.push(Issue::warning(
            trace,
            format!(
                "span links point to {} other trace(s) (first: {}): a run continued in another trace is checked as a run of its own, not joined to it",
                ids.len(),
                ids.first().map_or("", String::as_str)
            ),
        ));
    }
    let refs = batch.trace_i64(TRACE_CONTENT_REFS).value(t);
    if refs > 0 {
        issues.push(Issue::warning(
            trace,
            format!(
                "{refs} piece(s) of content sit in external storage behind a reference (gen_ai.*_ref attributes, uri or file parts): faultgate does not fetch them, so the checks do not read them"
            ),
        ));
    }
    if py_strip(batch.trace_str(TRACE_PROMPT).value(t)).is_empty() {
        issues.push(Issue::warning(
            trace,
            "no prompt: scenario keys fall back to a hash of the empty string unless faultgate.scenario is set".into(),
        ));
    }
    if py_strip(batch.trace_str(TRACE_ANSWER).value(t)).is_empty()
        && batch.trace_str(TRACE_TERMINATION).value(t).is_empty()
    {
        issues.push(Issue::warning(
            trace,
            "no final answer and no faultgate.termination".into(),
        ));
    }
    issues
}

#[cfg(test)]
mod tests;
