//! One run over a set of trace files, as a library: what the run needs besides its files
//! ([`RunSettings`]), its one entry ([`check`]) and what it gives back ([`RunResults`]).
//!
//! The run does three jobs, one file each, and [`check`] does all three in order so that no caller can
//! leave one out: how the files are read (`read`), which trace each span belongs to across the files
//! (`identity`), and the checks over each batch read (`drive`).
//!
//! Around that entry, the steps a command's run takes, one file each: what the run is asked to do
//! (`plan`), producing it and gathering each file's results (`produce`), what a produced run must
//! satisfy and the judge's end (`acceptance`), and `check`'s whole run, from its files to its end
//! (`finished`); with the progress bar (`progress`), raw scenario keys kept as digests (`raw_keys`)
//! and why a run gave no result (`error`).
//!
//! Files are processed a group at a time (in parallel within the group), and each file is read a batch
//! of traces at a time (`ingest::read_file`, batches built and checked in parallel); a batch's tables
//! are dropped as soon as its verdict batch is taken, so memory holds the verdicts, not the archive.
//! Within a batch the checks run as column passes over parts of the batch, in parallel; a judge, when
//! the run has one, is asked about the whole batch first (`crate::judge::Judge::verdicts`), and its
//! verdicts go to the judged checks of every part as data.
//!
//! A trace is its trace id within the run (`identity`). Each file is read once, on its own, and
//! gives the 64-bit hashes of its trace ids (`ingest::id_hash`) with its results. Once every file is
//! read, a hash two files list marks a trace they may share: only the files holding such a hash are
//! opened again, their ids confirmed, and only the shared traces decoded again, whole, while their rows
//! are taken out of the files' results; once every part is in, they are merged and checked once. A run
//! that shares nothing pays for the hashes alone. A run with a judge lists every file's ids first
//! instead (`ingest::trace_ids`) and keeps the shared parts whole as it reads them, so that no trace is
//! judged and then taken back; so does a run that reads OTLP log records, once its first read shows it
//! (a trace of log records alone is dropped, unhashed, by a file read on its own).

pub(crate) mod acceptance;
mod drive;
mod error;
pub(crate) mod finished;
pub(crate) mod identity;
mod plan;
pub(crate) mod produce;
pub(crate) mod progress;
pub(crate) mod raw_keys;
mod read;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use arrow_array::Array;
use arrow_schema::SchemaRef;

use crate::checks::{Check, Reasons, SideInputs};
use crate::error::InputError;
use crate::ingest::{self, Format, ReadOptions};
use crate::judge::Judge;
use crate::redact::Redaction;
use crate::report::spill::{SpilledFile, VerdictSpill};
use crate::report::steps::TraceSteps;
use crate::report::verdicts::{self, VerdictBatch};
use crate::table::record::TraceRecord;
use crate::table::{TableOptions, TraceBatch};

pub(crate) use acceptance::produce_accepted;
pub use drive::run_batch;
pub(crate) use error::RunError;
pub use identity::{SharedTraces, TailPlaces};
pub(crate) use plan::{Plan, report_checks};
pub(crate) use produce::{InputFile, Produced, SpillTo, Usage};

/// What a run over some files gives: each file's results, in file order, and the traces several of
/// them hold, merged and checked once.
pub struct RunResults {
    /// Each file's results, or why it could not be read, in file order; the traces other files hold
    /// too are in [`RunResults::shared`] instead.
    pub files: Vec<Result<FileResults, InputError>>,
    /// The traces whose id more than one file holds (and, under `--unit session` or
    /// `--follow-links`, the conversations and linked traces), checked once every file was read.
    pub shared: SharedTraces,
}

/// Runs the checks over every trace of every file and applies the trace-identity rule: a trace
/// several files hold is merged and checked once, after every file. With `spill`, each finished
/// verdict batch is appended to it instead of kept in memory, and each file's results say where its
/// batches are ([`FileResults::spilled`]). Errors are returned per file so a caller can report all of
/// them.
pub fn check(
    settings: &RunSettings,
    files: &[PathBuf],
    spill: Option<&VerdictSpill>,
) -> RunResults {
    let mut results = read::read_files(files, settings, spill);
    let shared = identity::merge_shared_traces(files, &mut results, settings, spill);
    RunResults {
        files: results,
        shared,
    }
}

/// What a run needs besides its files.
pub struct RunSettings {
    /// The checks to run, in selection order.
    pub checks: Vec<&'static dyn Check>,
    /// The side inputs the checks read (golden, outcomes, policy, workflow).
    pub inputs: SideInputs,
    /// The run's judge, when a judged check runs.
    pub judge: Option<std::sync::Arc<Judge>>,
    /// What is redacted from everything the run writes.
    pub redaction: Redaction,
    /// The format to read the files as ([`Format::Auto`] detects each).
    pub format: Format,
    /// Keep each trace's raw scenario key in its result (for matching labels after the run).
    pub keep_raw_scenario: bool,
    /// Which reasons to keep: those the run's outputs print.
    pub reasons: Reasons,
    /// Keep the steps of up to this many failing traces (for the HTML report); 0 keeps none.
    pub failing_steps: usize,
    /// Where reading reports its progress (a progress bar), if anywhere. It never changes a result.
    pub progress: Option<std::sync::Arc<dyn ingest::ReadProgress>>,
    /// `--skip-bad-input`: JSON lines that do not parse are left out of their files (files that cannot
    /// be read are left out by the caller, from the errors).
    pub skip_bad_input: bool,
    /// `--agent-version`: only the traces of this agent version are checked; the others are left out
    /// as if absent.
    pub agent_version: Option<std::sync::Arc<str>>,
    /// `--outcome-score`: the Langfuse score that is each trace's recorded outcome.
    pub outcome_score: Option<std::sync::Arc<str>>,
    /// `--by`: each trace's slice goes into the verdict table's `slice` column.
    pub slices: Option<std::sync::Arc<crate::table::slices::SliceKeys>>,
    /// `--unit session`: the unit checked is a conversation, the traces sharing a conversation id
    /// ([`check`] joins them), instead of a trace; the turns wait in this spill until
    /// every file is read.
    pub sessions: Option<std::sync::Arc<crate::sessions::SessionSpill>>,
    /// `--follow-links`: the unit checked is a trace and the traces its spans link to
    /// (`crate::sessions::links`); their traces wait in its spill until every file is read.
    pub links: Option<std::sync::Arc<crate::sessions::links::LinkRun>>,
}

impl RunSettings {
    /// What the tables of this run keep, for traces of this agent version.
    pub(crate) fn table_options(&self, agent_version: Option<std::sync::Arc<str>>) -> TableOptions {
        TableOptions {
            root_attributes: self.needs_root_attributes(),
            agent_version,
            qualify_domains: false,
            outcome_score: self.outcome_score.clone(),
            task_success_outcome: self.inputs.recorded_outcomes(),
            slices: self.slices.clone(),
            sessions: self.sessions.is_some(),
            turns: self
                .sessions
                .clone()
                .or_else(|| self.links.as_ref().map(|l| l.spill.clone()))
                .map(|s| s as std::sync::Arc<dyn crate::table::TurnSink>),
            links: self
                .links
                .as_ref()
                .and_then(|l| l.units())
                .map(|u| u as std::sync::Arc<dyn crate::table::TraceUnits>),
        }
    }

    /// The schema of this run's verdict batches.
    pub fn verdict_schema(&self) -> SchemaRef {
        let names: Vec<&str> = self.checks.iter().map(|c| c.name()).collect();
        verdicts::schema_sliced(&names, self.slices.is_some())
    }

    /// Returns true if and only if a selected check reads the root span's attributes (the policy's
    /// identity rule), so decoders must keep every attribute.
    pub fn needs_root_attributes(&self) -> bool {
        self.inputs.policy.uses_identity()
            && self
                .checks
                .iter()
                .any(|c| crate::checks::registry::reads(c.name(), crate::checks::Input::Policy))
    }
}

/// The results of one file.
pub struct FileResults {
    /// Where the file's verdict batches are, when the run spills them.
    pub spilled: Option<SpilledFile>,
    /// Traces with no prompt, answer, arguments or results.
    pub without_content: usize,
    /// The format the file was read as.
    pub format: Format,
    /// The file's failing traces' steps were dropped while reading, since the files before it
    /// already held as many as the run shows; if those lose some to another file, it is read again.
    pub(crate) failing_steps_dropped: bool,
    /// The rest, absent when all of it is empty, as it is for most files of a large run: a run may
    /// read a million files, and what each one holds stays until every file is read.
    pub details: Option<Box<FileDetails>>,
}

/// What a file's results hold besides where its verdicts are ([`FileResults::details`]).
#[derive(Default)]
pub struct FileDetails {
    /// One verdict batch per chunk of the file, in order (none when the run spills them).
    pub batches: Vec<VerdictBatch>,
    /// Traces that show tool activity but yield no tool step.
    pub unread_tools: UnreadTools,
    /// The steps of the file's first failing traces, up to `settings.failing_steps`.
    pub failing_steps: Vec<TraceSteps>,
    /// The file's parts of the traces other files hold too, whole and unchecked, in file order (their
    /// verdicts come from `identity::merge_shared_traces`).
    pub(crate) shared_parts: Vec<TraceRecord<'static>>,
    /// The JSON lines left out under `--skip-bad-input`, one input warning each.
    pub skipped_lines: Vec<String>,
    /// The decoder's input warnings about the file (log records whose spans no input holds).
    pub warnings: Vec<String>,
    /// The benchmark domains the file's traces name (`faultgate.domain`), sorted and unique.
    pub domains: Vec<String>,
}

impl FileDetails {
    fn is_empty(&self) -> bool {
        self.batches.is_empty()
            && self.unread_tools.traces.is_empty()
            && self.failing_steps.is_empty()
            && self.shared_parts.is_empty()
            && self.skipped_lines.is_empty()
            && self.warnings.is_empty()
            && self.domains.is_empty()
    }
}

impl FileResults {
    /// The file's details, empty ones when it has none.
    pub fn into_details(self) -> FileDetails {
        self.details.map(|d| *d).unwrap_or_default()
    }
}

/// Traces that show tool activity but from which no tool step was read: each one's id and what shows
/// it (few in practice: only traces without steps are looked at).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct UnreadTools {
    /// (trace id, what shows the tools) for each trace that used tools but had none read.
    pub traces: Vec<(String, String)>,
}

impl UnreadTools {
    /// The batch's traces whose evidence column is set.
    pub fn of_batch(batch: &TraceBatch) -> UnreadTools {
        let evidence = batch.trace_str(crate::table::schema::TRACE_TOOL_EVIDENCE);
        let ids = batch.trace_str(crate::table::schema::TRACE_ID);
        let traces = (0..evidence.len())
            .filter(|&t| evidence.is_valid(t))
            .map(|t| (ids.value(t).to_string(), evidence.value(t).to_string()))
            .collect();
        UnreadTools { traces }
    }

    /// Appends another part's traces, keeping input order.
    pub(crate) fn add(&mut self, other: UnreadTools) {
        self.traces.extend(other.traces);
    }

    /// The first trace and what shows its tools.
    pub fn first(&self) -> Option<&(String, String)> {
        self.traces.first()
    }

    /// The warning for a file; the evidence (span names) is masked as everything that leaves the
    /// process.
    pub fn warning(&self, file: &str, redaction: Redaction) -> Option<String> {
        let (id, evidence) = self.first()?;
        Some(unread_tools_warning(
            self.traces.len(),
            file,
            id,
            &redaction.mask(evidence),
        ))
    }
}

/// The warning about `count` traces of `file` that used tools but had none read, the first being
/// `id`, whose tools `evidence` (masked) shows.
pub(crate) fn unread_tools_warning(count: usize, file: &str, id: &str, evidence: &str) -> String {
    format!(
        "{count} trace(s) in {file} show tool activity but no tool step was read from them (trace {id}: {evidence}); no check saw their tools"
    )
}

/// What the traces merged across files are called in a warning about them.
pub(crate) const MERGED_TRACES: &str = "the traces merged across files";

/// The warning about a file whose traces link to other traces (OTLP span links): a run continued in
/// another trace is not joined to it.
pub(crate) fn links_warning(traces: usize, path: &Path) -> String {
    format!(
        "{traces} trace(s) in {} link to other traces (span links: a run continued in another trace); each is checked as a run of its own",
        crate::error::display_path(path)
    )
}

// `read` and `identity` both read files and bound the failing steps kept across them, and neither
// may import the other: what they share is here, above both.

/// How a run reads its files.
fn read_options(settings: &RunSettings) -> ReadOptions {
    ReadOptions {
        // A judge clears its answers at each batch's prefetch, so batches take turns.
        parallel_batches: settings.judge.is_none(),
        progress: settings.progress.clone(),
        skip_bad_lines: settings.skip_bad_input,
        ..ReadOptions::new(
            settings.format,
            settings.table_options(settings.agent_version.clone()),
        )
    }
}

/// How many benchmark domains the traces of a run's results name.
fn run_domains(results: &[Result<FileResults, InputError>]) -> usize {
    results
        .iter()
        .filter_map(|r| r.as_ref().ok()?.details.as_ref())
        .flat_map(|d| d.domains.iter())
        .collect::<BTreeSet<_>>()
        .len()
}

/// Drops the failing steps of a file read after files that hold `before` of them, once `before`
/// reaches the run's `bound`; returns how many steps the file keeps.
fn bound_failing_steps(
    result: &mut Result<FileResults, InputError>,
    before: usize,
    bound: usize,
) -> usize {
    let Ok(results) = result else {
        return 0;
    };
    let Some(details) = &mut results.details else {
        return 0;
    };
    if before < bound || details.failing_steps.is_empty() {
        return details.failing_steps.len();
    }
    details.failing_steps = Vec::new();
    results.failing_steps_dropped = true;
    if details.is_empty() {
        results.details = None;
    }
    0
}
