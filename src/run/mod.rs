//! One run over a set of trace files: read, build tables, run the checks, collect results.
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
//! are taken out of the files' results; once every part is in, they are merged and checked once
//! ([`merge_shared_traces`]). A run that shares nothing pays for the hashes alone. A run with a judge
//! lists every file's ids first instead (`ingest::trace_ids`) and keeps the shared parts whole as it
//! reads them, so that no trace is judged and then taken back; so does a run that reads OTLP log
//! records, once its first read shows it (a trace of log records alone is dropped, unhashed, by a
//! file read on its own).

pub(crate) mod identity;

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use arrow_array::{Array, Float64Array, Int64Array};
use arrow_schema::SchemaRef;
use rayon::prelude::*;

use crate::checks::{Check, CheckContext, JudgedVerdicts, Reasons, SideInputs, VerdictColumn};
use crate::error::InputError;
use crate::ingest::{self, Format, ReadOptions};
use crate::judge::Judge;
use crate::redact::Redaction;
use crate::report::Measures;
use crate::report::id_hashes::IdHashes;
use crate::report::spill::{SpilledFile, VerdictSpill};
use crate::report::steps::{self, TraceSteps};
use crate::report::verdicts::{self, TraceFields, VerdictBatch, VerdictBatchBuilder};
use crate::table::columns::{Columns, opt};
use crate::table::record::TraceRecord;
use crate::table::{TableOptions, TraceBatch};

/// Traces per check pass: a batch is cut into parts of this many traces, checked in parallel.
const PART_TRACES: usize = 256;

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
    /// ([`merge_shared_traces`] joins them), instead of a trace; the turns wait in this spill until
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
    /// Where the file's verdict batches are, when the run spills them ([`run_files_spilled`]).
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
    /// verdicts come from [`merge_shared_traces`]).
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

    /// Takes the traces of `ids` out of the results, as if they had been kept whole when read (their
    /// parts count where they were read, so the count of traces without content stays). False, with
    /// the results left part-taken, when the file kept the steps of `limit` failing traces and some of
    /// them were taken out: the next failing traces' steps were not kept, and the file must be read
    /// again.
    fn take_out(&mut self, ids: &HashSet<String>, limit: usize) -> bool {
        if let Some(spilled) = &mut self.spilled {
            // Spilled rows are left out as they are read back.
            spilled
                .dropped
                .get_or_insert_with(Default::default)
                .extend(ids.iter().cloned());
        }
        let Some(details) = &mut self.details else {
            return true;
        };
        for batch in &mut details.batches {
            if !batch.rows().any(|r| ids.contains(r.trace_id())) {
                continue;
            }
            let keep: arrow_array::BooleanArray = batch
                .rows()
                .map(|r| Some(!ids.contains(r.trace_id())))
                .collect();
            let kept = arrow_select::filter::filter_record_batch(batch.record_batch(), &keep)
                .and_then(VerdictBatch::try_new);
            *batch = kept.expect("a verdict batch filtered by its own rows");
        }
        details
            .unread_tools
            .traces
            .retain(|(id, _)| !ids.contains(id.as_str()));
        let kept = details.failing_steps.len();
        details
            .failing_steps
            .retain(|steps| !ids.contains(steps.trace_id.as_str()));
        kept < limit || details.failing_steps.len() == kept
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

/// Runs the checks over every trace of every file, in file order, except the traces several files
/// hold: each file keeps its parts of those whole, for [`merge_shared_traces`]. Errors are returned per
/// file so a caller can report all of them.
pub fn run_files(
    files: &[PathBuf],
    settings: &RunSettings,
) -> Vec<Result<FileResults, InputError>> {
    run_files_spilled(files, settings, None)
}

/// As [`run_files`], with each finished verdict batch appended to `spill` instead of kept in memory:
/// each file's results say where its batches are ([`FileResults::spilled`]).
pub fn run_files_spilled(
    files: &[PathBuf],
    settings: &RunSettings,
    spill: Option<&VerdictSpill>,
) -> Vec<Result<FileResults, InputError>> {
    if let Some(links) = &settings.links {
        links.units_or(|| find_links(files, settings));
    }
    let out = read_run(files, settings, spill, false);
    if run_domains(&out) < 2 {
        return out;
    }
    // Task ids repeat across a benchmark's domains, and which domains a run holds is known only once
    // its files are read: a run of several is read again with its scenario keys qualified. (A spilled
    // first read's batches stay in the spill unread, as a file read again's do.)
    read_run(files, settings, spill, true)
}

/// The link graph of a run's files (`--follow-links`): every file is read once, in parallel, for its
/// linking traces alone; a file that cannot be read adds none (the run reports it when it reads it).
fn find_links(files: &[PathBuf], settings: &RunSettings) -> crate::sessions::links::LinkUnits {
    let mut options = read_options(settings);
    options.progress = None;
    options.table.sessions = false;
    options.table.turns = None;
    options.table.links = None;
    let each = |batch: TraceBatch| {
        let ids = batch.trace_str(crate::table::schema::TRACE_ID);
        let linked = batch.trace_str(crate::table::schema::TRACE_LINKED_TRACES);
        (0..linked.len())
            .filter(|&t| linked.is_valid(t))
            .map(|t| {
                let targets: Vec<String> =
                    serde_json::from_str(linked.value(t)).unwrap_or_default();
                (ids.value(t).to_string(), targets)
            })
            .collect::<Vec<_>>()
    };
    let per_file: Vec<Vec<(String, usize, Vec<String>)>> = files
        .par_iter()
        .enumerate()
        .map(|(file, path)| {
            let mut linking = Vec::new();
            let read = ingest::read_file(
                path,
                &options,
                &each,
                &mut |found| {
                    linking.extend(found.into_iter().map(|(id, to)| (id, file, to)));
                    Ok(())
                },
                None,
            );
            if read.is_err() {
                linking.clear();
            }
            linking
        })
        .collect();
    crate::sessions::links::LinkUnits::new(per_file.into_iter().flatten().collect())
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

/// Reads and checks a run's files, its scenario keys qualified by domain when `qualify_domains`.
fn read_run(
    files: &[PathBuf],
    settings: &RunSettings,
    spill: Option<&VerdictSpill>,
    qualify_domains: bool,
) -> Vec<Result<FileResults, InputError>> {
    ingest::remote::prefetch_order(files);
    if let Some(spill) = &settings.sessions {
        // A run read again (domains found) spills its turns again.
        spill.reset();
    }
    if let Some(links) = &settings.links {
        links.spill.reset();
    }
    let schema = settings.verdict_schema();
    let parallel = rayon::current_num_threads().max(1) * 2;
    let mut options = read_options(settings);
    options.table.qualify_domains = qualify_domains;
    if settings.judge.is_some() {
        // With a judge, files go one at a time: its calls already run in parallel, and a fixed order
        // keeps `--judge-max-calls` deterministic. The shared traces are found before any file is read,
        // since a trace checked and then taken back would have asked the judge for nothing.
        let (refused, shared) = index_files(files, settings, parallel);
        let options = ReadOptions {
            hold: (!shared.is_empty()).then(|| std::sync::Arc::new(shared)),
            ..options
        };
        return read_files(files, settings, &options, &schema, 1, refused, spill, None);
    }
    let refused = files.iter().map(|_| None).collect();
    if files.len() < 2 {
        // One file shares no trace with another: its ids need no hashes.
        return read_files(
            files, settings, &options, &schema, parallel, refused, spill, None,
        );
    }
    let mut hashes = IdHashes::new(spill.and_then(VerdictSpill::dir));
    let mut out = read_files(
        files,
        settings,
        &options,
        &schema,
        parallel,
        refused,
        spill,
        Some(&mut hashes),
    );
    let reads_logs = out.iter().any(|r| match r {
        Ok(f) => f.format == Format::OtlpLogs,
        // A file of log records alone holds no trace of its own until it is joined.
        Err(InputError::NoTraces(_)) => true,
        Err(_) => false,
    });
    if reads_logs {
        // Log records join their spans by trace id across files, and a file read on its own drops
        // (and warns about) a trace of log records alone before its id is hashed: a run that reads
        // log records finds its shared traces first, as a judged run does, and reads its files again.
        let (refused, shared) = index_files(files, settings, parallel);
        let options = ReadOptions {
            hold: (!shared.is_empty()).then(|| std::sync::Arc::new(shared)),
            progress: None,
            ..options
        };
        if let Some(spill) = &settings.sessions {
            // Read again, the files spill their turns again.
            spill.reset();
        }
        if let Some(links) = &settings.links {
            links.spill.reset();
        }
        return read_files(
            files, settings, &options, &schema, parallel, refused, spill, None,
        );
    }
    hold_shared_traces(files, settings, &schema, &mut out, hashes, spill);
    out
}

/// Reads `files`, `group` at a time (in parallel within a group), except those already `refused`;
/// the hashes of the trace ids each file's index lists go to `hashes`, tagged with the file's place,
/// when it is given.
#[expect(
    clippy::too_many_arguments,
    reason = "the run's parts, each passed on to every file's read"
)]
fn read_files(
    files: &[PathBuf],
    settings: &RunSettings,
    options: &ReadOptions,
    schema: &SchemaRef,
    group: usize,
    mut refused: Vec<Option<InputError>>,
    spill: Option<&VerdictSpill>,
    mut hashes: Option<&mut IdHashes>,
) -> Vec<Result<FileResults, InputError>> {
    let mut out = Vec::with_capacity(files.len());
    let listing = hashes.is_some();
    // The failing steps the files read so far keep: a run shows only its first ones, so once the
    // files before a file hold that many, its own steps are not kept (a run over many failing files
    // would otherwise keep some for each file until the end).
    let mut steps_before = 0;
    for (c, chunk) in files.chunks(group).enumerate() {
        let refused = &mut refused[c * group..c * group + chunk.len()];
        let part: Vec<(Result<FileResults, InputError>, Vec<u64>)> = chunk
            .par_iter()
            .zip(refused.par_iter_mut())
            .map(|(path, refusal)| match refusal.take() {
                // Its index already failed: it is not read again.
                Some(error) => {
                    if let Some(progress) = &options.progress {
                        progress.file_done(ingest::stream::len(path));
                    }
                    (Err(error), Vec::new())
                }
                None => {
                    let mut ids = Vec::new();
                    let list = listing.then_some(&mut ids);
                    let result = run_file(path, settings, options, schema, list, spill);
                    (result, ids)
                }
            })
            .collect();
        for (i, (mut result, ids)) in part.into_iter().enumerate() {
            steps_before += bound_failing_steps(&mut result, steps_before, settings.failing_steps);
            out.push(result);
            if let Some(hashes) = hashes.as_deref_mut() {
                let file = u32::try_from(c * group + i).unwrap_or(u32::MAX);
                for hash in ids {
                    hashes.push(hash, file);
                }
            }
        }
    }
    out
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

/// Applies the trace-identity rule to files read on their own: the traces whose id another file also
/// holds are taken out of each file's results and decoded again, whole, as the file's shared parts.
/// Nothing is read again unless two files list the same id hash; a file is read whole again (keeping
/// its shared traces whole, as when they are known in advance) only when taking them out leaves fewer
/// failing traces' steps than it keeps while more failing traces are in the file, or when its steps
/// were dropped for the files before it and taking the shared traces out leaves those fewer than the
/// run's bound.
fn hold_shared_traces(
    files: &[PathBuf],
    settings: &RunSettings,
    schema: &SchemaRef,
    out: &mut [Result<FileResults, InputError>],
    hashes: IdHashes,
    spill: Option<&VerdictSpill>,
) {
    // A hash two files list (a file may list one twice) marks a trace they may share.
    let mut candidates: HashSet<u64> = HashSet::new();
    let mut holders: Vec<usize> = Vec::new();
    let listed = hashes.repeated(|hash, files| {
        if files.first() != files.last() {
            candidates.insert(hash);
            holders.extend(files.iter().map(|&file| file as usize));
        }
        true
    });
    if let Err(source) = listed {
        // The sorted hashes went to a temporary file that can no longer be read: the run cannot
        // apply the rule, and says where.
        if let Some(last) = out.last_mut() {
            let dir = spill.and_then(VerdictSpill::dir);
            *last = Err(InputError::Read {
                path: dir.map_or_else(std::env::temp_dir, Path::to_path_buf),
                source,
            });
        }
        return;
    }
    if candidates.is_empty() {
        return;
    }
    holders.sort_unstable();
    holders.dedup();
    let options = ReadOptions {
        progress: None,
        ..read_options(settings)
    };
    // The traces of each holding file whose hash another file lists: the parts of a file that failed
    // count for the rule (as its index listed them) but are not kept.
    let parts: Vec<Result<Vec<TraceRecord<'static>>, InputError>> = holders
        .par_iter()
        .map(|&file| {
            let path = &files[file];
            match &out[file] {
                Ok(_) => ingest::read_whole(path, &options, &candidates),
                Err(_) => Ok(ingest::trace_ids(path, &options)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|id| candidates.contains(&ingest::id_hash(id)))
                    .map(|id| TraceRecord {
                        trace_id: id.into(),
                        ..TraceRecord::default()
                    })
                    .collect()),
            }
        })
        .collect();
    let mut ids = crate::run::identity::SharedIds::default();
    for (&file, listed) in holders.iter().zip(&parts) {
        if let Ok(listed) = listed {
            ids.add(
                file,
                listed.iter().map(|p| p.trace_id.to_string()).collect(),
            );
        }
    }
    let shared = ids.shared();
    if shared.is_empty() {
        return;
    }
    let mut again = Vec::new();
    for (&file, listed) in holders.iter().zip(parts) {
        let Ok(results) = &mut out[file] else {
            continue;
        };
        let mut listed = match listed {
            Ok(listed) => listed,
            Err(error) => {
                out[file] = Err(error);
                continue;
            }
        };
        listed.retain(|p| shared.contains(p.trace_id.as_ref()));
        if listed.is_empty() {
            continue;
        }
        if results.take_out(&shared, settings.failing_steps) {
            results
                .details
                .get_or_insert_with(Box::default)
                .shared_parts = listed;
        } else {
            again.push(file);
        }
    }
    if let Some(spill) = &settings.sessions {
        // Their turns' first reads were spilled: the merged traces take their place.
        spill.exclude(&shared);
    }
    if let Some(links) = &settings.links {
        links.spill.exclude(&shared);
    }
    let mut options = ReadOptions {
        hold: Some(std::sync::Arc::new(shared)),
        ..options
    };
    // A file read again spilled its turns the first time.
    options.table.turns = None;
    let read_again = |out: &mut [Result<FileResults, InputError>], again: Vec<usize>| {
        let reread: Vec<Result<FileResults, InputError>> = again
            .par_iter()
            .map(|&file| run_file(&files[file], settings, &options, schema, None, spill))
            .collect();
        for (file, result) in again.into_iter().zip(reread) {
            out[file] = result;
        }
    };
    read_again(out, again);
    // Taking shared traces out may leave the files before a file whose steps were dropped with fewer
    // than the run's bound: such a file is read again for its steps. The other dropped files count as
    // none here, so this reads again every file that may need it, and the pass below drops the steps
    // that are then past the bound.
    let mut before = 0;
    let mut again = Vec::new();
    for (file, result) in out.iter().enumerate() {
        let Ok(results) = result else {
            continue;
        };
        if results.failing_steps_dropped && before < settings.failing_steps {
            again.push(file);
        }
        before += results
            .details
            .as_ref()
            .map_or(0, |d| d.failing_steps.len());
    }
    read_again(out, again);
    let mut before = 0;
    for result in out.iter_mut() {
        before += bound_failing_steps(result, before, settings.failing_steps);
    }
}

/// Lists every file's trace ids from its index (`parallel` files at a time) when the run has several
/// files: each file's refusal, if its index could not be made, and the ids more than one file holds.
fn index_files(
    files: &[PathBuf],
    settings: &RunSettings,
    parallel: usize,
) -> (Vec<Option<InputError>>, HashSet<String>) {
    let mut refused: Vec<Option<InputError>> = files.iter().map(|_| None).collect();
    if files.len() < 2 {
        return (refused, HashSet::new());
    }
    let options = ReadOptions {
        progress: None,
        ..read_options(settings)
    };
    let mut ids = crate::run::identity::SharedIds::default();
    for (c, chunk) in files.chunks(parallel).enumerate() {
        let listed: Vec<Result<Vec<String>, InputError>> = chunk
            .par_iter()
            .map(|path| match ingest::trace_ids(path, &options) {
                Ok(listed) if listed.is_empty() => Err(InputError::NoTraces(path.clone())),
                other => other,
            })
            .collect();
        for (i, listed) in listed.into_iter().enumerate() {
            let file = c * parallel + i;
            match listed {
                Ok(listed) => ids.add(file, listed),
                Err(error) => refused[file] = Some(error),
            }
        }
    }
    (refused, ids.shared())
}

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

/// Traces whose id more than one file of the run holds, merged by the rule of `identity`.
#[derive(Default)]
pub struct SharedTraces {
    /// The merged traces' verdicts, a batch at a time (none when no id is shared and no trace names
    /// a conversation under `--unit session`), when the run does not spill them.
    pub verdicts: Vec<VerdictBatch>,
    /// When the run spills: the merged traces' verdict batches, by their index in the spill, written
    /// as each was checked so that a session run holds no more than one bucket's verdicts.
    pub spilled: Vec<usize>,
    /// Merged traces that used tools but had none read.
    pub unread_tools: UnreadTools,
    /// The steps of the merged traces that failed, when an output shows them.
    pub failing_steps: Vec<TraceSteps>,
    /// Duplicate spans dropped, trace ids reused by different traces.
    pub warnings: Vec<String>,
    /// Merged traces with no prompt, answer, arguments or results.
    pub without_content: usize,
    /// The ids of the conversations checked as units (`--unit session`).
    pub sessions: crate::sessions::SessionIds,
    /// The spill of a session run's turns could not be written or read back.
    pub error: Option<std::io::Error>,
    /// A shard of a session run ([`crate::sessions::SessionSpill::shard`]): the units it checked
    /// after its files, each row's place among those a run over every file checks there.
    pub tail: Option<TailPlaces>,
}

/// Where the rows a shard of a session run checks after its files sit among those of a run over
/// every file: that run's traces merged across files without a conversation come first, in merge
/// order, then its conversations, bucket by bucket. Every shard reads every file, so each numbers
/// every unit the same way and checks its own; `faultgate merge` puts the rows back in this order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TailPlaces {
    /// Each row's place, rising.
    pub places: Vec<u64>,
    /// The places before this one are traces without a conversation, the others conversations.
    pub alone: u64,
    /// The rows whose tools were not read.
    pub unread: usize,
    /// The place of the first row whose tools were not read, with its id and what shows its tools.
    pub first_unread: Option<(u64, String, String)>,
}

/// Applies the trace-identity rule to a run's results: the parts of the traces several files hold,
/// which [`run_files`] kept whole when it read their files, are merged and checked once. Returns
/// nothing when no id is shared.
pub fn merge_shared_traces(
    files: &[PathBuf],
    results: &mut [Result<FileResults, InputError>],
    settings: &RunSettings,
    spill: Option<&VerdictSpill>,
) -> SharedTraces {
    let parts: Vec<(usize, TraceRecord<'static>)> = results
        .iter_mut()
        .enumerate()
        .filter_map(|(i, r)| r.as_mut().ok().map(|file| (i, file)))
        .flat_map(|(i, file)| {
            file.details
                .as_mut()
                .map(|d| std::mem::take(&mut d.shared_parts))
                .unwrap_or_default()
                .into_iter()
                .map(move |part| (i, part))
        })
        .collect();
    if parts.is_empty() && settings.sessions.is_none() && settings.links.is_none() {
        return SharedTraces::default();
    }
    let qualify_domains = run_domains(results) > 1;
    let mut merged = crate::run::identity::merge(parts, files);
    let mut options = read_options(settings);
    options.table.qualify_domains = qualify_domains;
    // The conversations become rows here: the builder holds and spills nothing more.
    options.table.sessions = false;
    options.table.turns = None;
    options.table.links = None;
    let mut out = SharedTraces {
        warnings: merged.warnings(),
        ..SharedTraces::default()
    };
    if let Some(links) = &settings.links {
        join_linked_traces(
            files,
            merged.traces,
            links,
            &options.table,
            settings,
            spill,
            &mut out,
        );
        return out;
    }
    let Some(sessions) = &settings.sessions else {
        let mut builder = crate::table::TableBuilder::new(options.table);
        for trace in &merged.traces {
            builder.append(trace);
        }
        out.add(&builder.finish(), None, settings, spill);
        return out;
    };
    // The merged traces that name a conversation join its spilled turns, bucket by bucket.
    let mut lone: Vec<TraceRecord<'static>> = Vec::new();
    let mut held: Vec<Vec<TraceRecord<'static>>> = Vec::new();
    for trace in std::mem::take(&mut merged.traces) {
        match crate::table::record::conversation_id(&trace.spans) {
            Some(id) => {
                let b = crate::sessions::SessionSpill::bucket(&id);
                if held.len() <= b {
                    held.resize_with(b + 1, Vec::new);
                }
                held[b].push(trace);
            }
            None => lone.push(trace),
        }
    }
    let mut tail = sessions.shard().map(|_| TailPlaces::default());
    let mut alone = crate::table::TableBuilder::new(options.table.clone());
    let mut alone_places = Vec::new();
    for (place, trace) in (0u64..).zip(&lone) {
        if !sessions.owns(&trace.trace_id) {
            continue;
        }
        let before = alone.len();
        alone.append(trace);
        if alone.len() > before {
            alone_places.push(place);
        }
    }
    let mut place = lone.len() as u64;
    drop(lone);
    if let Some(tail) = &mut tail {
        tail.alone = place;
    }
    let batch = alone.finish();
    if !batch.is_empty() {
        let turns = vec![Vec::new(); batch.len()];
        out.add(&batch, Some(&turns), settings, spill);
        SharedTraces::place(tail.as_mut(), &batch, alone_places);
    }
    let drained = sessions.drain(&mut |b, mut turns| {
        if let Some(more) = held.get_mut(b) {
            turns.append(more);
        }
        if turns.is_empty() {
            return;
        }
        let mut builder = crate::table::TableBuilder::new(options.table.clone());
        let mut of_steps: Vec<Vec<usize>> = Vec::new();
        let mut places = Vec::new();
        for unit in crate::sessions::group_in_order(turns) {
            place += 1;
            if let crate::sessions::Unit::Session(id, parts) = unit
                && sessions.owns(&id)
                && let Some(steps) = builder.append_turns(&id, &parts)
            {
                of_steps.push(steps);
                places.push(place - 1);
                out.sessions.insert(&id);
            }
        }
        let batch = builder.finish();
        if !batch.is_empty() {
            out.add(&batch, Some(&of_steps), settings, spill);
            SharedTraces::place(tail.as_mut(), &batch, places);
        }
    });
    out.tail = tail;
    if let Err(error) = drained {
        out.error = Some(error);
    }
    out
}

/// `--follow-links`: the merged traces that belong to a unit of linked traces join its spilled
/// traces, bucket by bucket, and each unit is checked as one trace; the others are checked as they
/// are. The linking traces whose links did not all join their unit are warned about by file, as a run
/// without the flag warns about every linking trace.
fn join_linked_traces(
    files: &[PathBuf],
    merged: Vec<TraceRecord<'static>>,
    links: &crate::sessions::links::LinkRun,
    table: &TableOptions,
    settings: &RunSettings,
    spill: Option<&VerdictSpill>,
    out: &mut SharedTraces,
) {
    let units = links.units().unwrap_or_default();
    let mut alone = crate::table::TableBuilder::new(table.clone());
    let mut held: Vec<Vec<TraceRecord<'static>>> = Vec::new();
    for trace in merged {
        match units.unit_of(&trace.trace_id) {
            Some(unit) => {
                let b = crate::sessions::SessionSpill::bucket(unit);
                if held.len() <= b {
                    held.resize_with(b + 1, Vec::new);
                }
                held[b].push(trace);
            }
            None => alone.append(&trace),
        }
    }
    let batch = alone.finish();
    if !batch.is_empty() {
        out.add(&batch, None, settings, spill);
    }
    let mut unjoined = vec![0usize; files.len()];
    let drained = links.spill.drain(&mut |b, mut traces| {
        if let Some(more) = held.get_mut(b) {
            traces.append(more);
        }
        if traces.is_empty() {
            return;
        }
        let mut builder = crate::table::TableBuilder::new(table.clone());
        for unit in crate::sessions::links::join(traces, &units) {
            for file in unit.unjoined_in {
                if let Some(count) = unjoined.get_mut(file) {
                    *count += 1;
                }
            }
            builder.append(&unit.trace);
        }
        let batch = builder.finish();
        if !batch.is_empty() {
            out.add(&batch, None, settings, spill);
        }
    });
    if let Err(error) = drained {
        out.error = Some(error);
    }
    for (path, &count) in files.iter().zip(&unjoined) {
        if count > 0 {
            out.warnings.push(links_warning(count, path));
        }
    }
}

impl SharedTraces {
    /// Records, for a shard of a session run, the places of the rows of `batch` just checked.
    fn place(tail: Option<&mut TailPlaces>, batch: &TraceBatch, places: Vec<u64>) {
        let Some(tail) = tail else {
            return;
        };
        let evidence = batch.trace_str(crate::table::schema::TRACE_TOOL_EVIDENCE);
        let ids = batch.trace_str(crate::table::schema::TRACE_ID);
        let unread: Vec<usize> = (0..evidence.len())
            .filter(|&t| evidence.is_valid(t))
            .collect();
        if tail.first_unread.is_none()
            && let Some(&t) = unread.first()
        {
            tail.first_unread = Some((
                places[t],
                ids.value(t).to_string(),
                evidence.value(t).to_string(),
            ));
        }
        tail.unread += unread.len();
        tail.places.extend(places);
    }

    /// Checks a batch of merged traces (of conversations, each row's steps' turns in `turns`) and
    /// adds what it gives.
    fn add(
        &mut self,
        batch: &TraceBatch,
        turns: Option<&[Vec<usize>]>,
        settings: &RunSettings,
        spill: Option<&VerdictSpill>,
    ) {
        let schema = settings.verdict_schema();
        let cols = Columns::new(batch);
        self.without_content += cols.has_content.false_count();
        let verdicts = match turns {
            Some(turns) => check_turns(&cols, settings, &schema, turns),
            None => check_batch(&cols, settings, &schema),
        };
        let room = settings
            .failing_steps
            .saturating_sub(self.failing_steps.len());
        self.failing_steps
            .extend(steps::failing(&cols, &verdicts, settings.redaction, room));
        self.unread_tools.add(UnreadTools::of_batch(batch));
        match spill {
            // A batch the spill could not take leaves its error in the spill, which the run reports.
            Some(spill) => self.spilled.extend(spill.append(&verdicts)),
            None => self.verdicts.push(verdicts),
        }
    }
}

fn run_file(
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
    // Each batch's tables live only while its checks run; what is kept is its verdict batch (and the
    // steps of failing traces, when an output shows them).
    let each = |batch: TraceBatch| {
        let cols = Columns::new(&batch);
        let verdicts = check_batch(&cols, settings, schema);
        let steps = steps::failing(&cols, &verdicts, settings.redaction, settings.failing_steps);
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

/// The warning about a file whose traces link to other traces (OTLP span links): a run continued in
/// another trace is not joined to it.
pub(crate) fn links_warning(traces: usize, path: &Path) -> String {
    format!(
        "{traces} trace(s) in {} link to other traces (span links: a run continued in another trace); each is checked as a run of its own",
        crate::error::display_path(path)
    )
}

/// Runs the active checks over every trace of a batch, keeping trace order.
pub fn run_batch(batch: &TraceBatch, settings: &RunSettings) -> VerdictBatch {
    check_batch(&Columns::new(batch), settings, &settings.verdict_schema())
}

/// Asks the run's judge, if any, about the whole batch; then cuts the batch into parts, runs every
/// check as a pass over each part in parallel, and joins the parts' verdicts in order, so the result
/// does not depend on the number of threads.
fn check_batch(cols: &Columns<'_>, settings: &RunSettings, schema: &SchemaRef) -> VerdictBatch {
    check_units(cols, settings, schema, None)
}

/// [`check_batch`] over a batch of conversations: `turns` gives, for each row, the turn of each of
/// its steps (empty for a trace of its own), and the reasons name the turn of each step they name.
fn check_turns(
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
struct Memo<'a> {
    raw: Option<&'a str>,
    masked: String,
}

impl<'a> Memo<'a> {
    fn get<'m>(&'m mut self, raw: &'a str, mask: impl FnOnce(&'a str) -> Cow<'a, str>) -> &'m str {
        if self.raw != Some(raw) {
            let masked = mask(raw);
            self.masked.clear();
            self.masked.push_str(&masked);
            self.raw = Some(raw);
        }
        &self.masked
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::checks::checks;
    use crate::table::record::TraceRecord;
    use crate::table::testing::TraceSpec;

    fn settings(reasons: Reasons) -> RunSettings {
        RunSettings {
            checks: checks().filter(|c| c.default_enabled()).collect(),
            inputs: SideInputs::default(),
            judge: None,
            redaction: Redaction::Builtin,
            format: Format::Auto,
            keep_raw_scenario: true,
            reasons,
            failing_steps: 0,
            progress: None,
            skip_bad_input: false,
            agent_version: None,
            outcome_score: None,
            slices: None,
            sessions: None,
            links: None,
        }
    }

    /// Trace `i`: a few shapes in turn, some firing, one with a key and agent that need masking.
    fn trace(i: usize) -> TraceRecord<'static> {
        let spec = match i % 4 {
            0 => TraceSpec::new().answer("ok"),
            1 => (0..12).fold(TraceSpec::new(), |t, _| t.step("search", "{}", "[]")),
            2 => TraceSpec::new()
                .root_attr("faultgate.scenario", json!("mail ada@example.com"))
                .step("fetch", "{}", "Error: down"),
            _ => TraceSpec::new()
                .root_attr("gen_ai.usage.input_tokens", json!(7))
                .answer("not found"),
        };
        TraceRecord {
            trace_id: format!("t{i}").into(),
            agent: if i % 4 == 2 {
                "ops bob@example.com".into()
            } else {
                String::new()
            },
            ..spec.build()
        }
    }

    #[test]
    fn a_batch_cut_into_parts_gives_each_trace_the_row_it_gets_alone() {
        let n = 2 * PART_TRACES + 7;
        let traces: Vec<TraceRecord<'static>> = (0..n).map(trace).collect();
        let settings = settings(Reasons::All);
        let whole = run_batch(&TraceBatch::build(&traces), &settings);
        assert_eq!(whole.len(), n);
        for (i, row) in whole.rows().enumerate() {
            let alone = run_batch(&TraceBatch::build(&[trace(i)]), &settings);
            let single = alone.row(0);
            assert_eq!(row.trace_id(), format!("t{i}"));
            assert_eq!(row.trace_id(), single.trace_id());
            assert_eq!(row.scenario(), single.scenario());
            assert_eq!(row.raw_scenario(), single.raw_scenario());
            assert_eq!(row.agent(), single.agent());
            assert_eq!(row.steps(), single.steps());
            assert_eq!(row.measures(), single.measures());
            assert_eq!(
                row.verdicts().collect::<Vec<_>>(),
                single.verdicts().collect::<Vec<_>>()
            );
        }
    }

    /// What a run keeps of each file, as text: verdict rows, traces without content, unread tools,
    /// failing steps and shared parts.
    fn kept(results: &[Result<FileResults, InputError>]) -> Vec<String> {
        results
            .iter()
            .map(|r| match r {
                Err(e) => format!("error {e}"),
                Ok(f) => {
                    let empty = FileDetails::default();
                    let d = f.details.as_deref().unwrap_or(&empty);
                    format!(
                        "rows {:?} empty {} unread {:?} steps {:?} parts {:?}",
                        d.batches
                            .iter()
                            .flat_map(|b| b
                                .rows()
                                .map(|r| format!(
                                    "{}:{:?}",
                                    r.trace_id(),
                                    r.verdicts().collect::<Vec<_>>()
                                ))
                                .collect::<Vec<_>>())
                            .collect::<Vec<_>>(),
                        f.without_content,
                        d.unread_tools.traces,
                        d.failing_steps
                            .iter()
                            .map(|s| s.trace_id.as_str())
                            .collect::<Vec<_>>(),
                        d.shared_parts
                            .iter()
                            .map(|p| (p.trace_id.to_string(), p.spans.len()))
                            .collect::<Vec<_>>(),
                    )
                }
            })
            .collect()
    }

    #[test]
    fn taking_shared_traces_out_after_the_read_keeps_what_holding_them_while_reading_keeps() {
        let dir = tempfile::tempdir().unwrap();
        // Traces u0..u7 over three files; u1, u4 and u6 are split, and every trace's tool fails, so
        // every trace has failing steps (which a file keeps only so many of).
        let span = |t: usize, k: usize| {
            let trace = format!("u{t}");
            let root = format!("r{t}");
            let id = format!("s{t}-{k}");
            (trace, id, root, k)
        };
        let layout: [&[(usize, usize)]; 3] = [
            &[(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (6, 2)],
            &[(1, 2), (3, 0), (3, 1), (4, 0), (4, 1)],
            &[(4, 2), (5, 0), (5, 1), (6, 0), (6, 1), (7, 0), (7, 1)],
        ];
        let files: Vec<PathBuf> = layout
            .iter()
            .enumerate()
            .map(|(n, spans)| {
                let spans: Vec<(String, String, String, usize)> =
                    spans.iter().map(|&(t, k)| span(t, k)).collect();
                let spans: Vec<Span<'_>> = spans
                    .iter()
                    .map(|(trace, id, root, k)| {
                        if *k == 0 {
                            (
                                trace.as_str(),
                                root.as_str(),
                                None,
                                "agent",
                                10 * *k as i64,
                                None,
                            )
                        } else {
                            let result = if *k == 1 { "Error: down" } else { "[]" };
                            (
                                trace.as_str(),
                                id.as_str(),
                                Some(root.as_str()),
                                "search",
                                10 * *k as i64,
                                Some(result),
                            )
                        }
                    })
                    .collect();
                let path = dir.path().join(format!("part{n}.json"));
                std::fs::write(&path, export(&spans)).unwrap();
                path
            })
            .collect();
        for limit in [0, 1, 2, 10] {
            let settings = RunSettings {
                failing_steps: limit,
                ..settings(Reasons::All)
            };
            let (refused, shared) = index_files(&files, &settings, 2);
            assert_eq!(shared.len(), 3);
            let options = ReadOptions {
                hold: Some(std::sync::Arc::new(shared)),
                ..read_options(&settings)
            };
            let schema = settings.verdict_schema();
            let want = read_files(&files, &settings, &options, &schema, 2, refused, None, None);
            let got = run_files(&files, &settings);
            assert_eq!(kept(&got), kept(&want), "steps of {limit} failing traces");
            if limit > 0 {
                assert!(
                    kept(&want)[0].contains("steps [\"u0\""),
                    "{:?}",
                    kept(&want)
                );
            }
        }
    }

    #[test]
    fn a_run_over_many_failing_files_keeps_the_steps_of_its_first_failing_traces_only() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..40)
            .map(|n| {
                let (trace, root, tool) = (format!("f{n}"), format!("r{n}"), format!("s{n}"));
                let spans: [Span<'_>; 2] = [
                    (&trace, &root, None, "agent", 0, None),
                    (
                        &trace,
                        &tool,
                        Some(&root),
                        "search",
                        10,
                        Some("Error: down"),
                    ),
                ];
                let path = dir.path().join(format!("f{n:02}.json"));
                std::fs::write(&path, export(&spans)).unwrap();
                path
            })
            .collect();
        for limit in [0, 1, 3, 8] {
            let settings = RunSettings {
                failing_steps: limit,
                ..settings(Reasons::All)
            };
            let kept: Vec<String> = run_files(&files, &settings)
                .iter()
                .filter_map(|r| r.as_ref().ok()?.details.as_deref())
                .flat_map(|d| d.failing_steps.iter().map(|s| s.trace_id.clone()))
                .collect();
            // Each file used to keep its own failing trace's steps until every file was read: all
            // 40, whatever the run shows.
            let firsts: Vec<String> = (0..limit).map(|n| format!("f{n}")).collect();
            assert_eq!(kept, firsts);
        }
    }

    #[test]
    fn the_key_memo_gives_each_key_its_own_masked_text_through_one_buffer() {
        let keys = [
            "p-203279939695",
            "p-203279939695",
            "mail ada@example.com",
            "refund",
            "",
            "refund",
        ];
        let mut memo = Memo::default();
        for key in keys {
            let got = memo
                .get(key, |k| Redaction::Builtin.scenario_key_text(k))
                .to_string();
            assert_eq!(got, Redaction::Builtin.scenario_key(key), "{key:?}");
        }
        assert_ne!(
            memo.get("ada@example.com", |k| Redaction::Builtin
                .scenario_key_text(k)),
            "ada@example.com"
        );
    }

    #[test]
    fn keys_agents_and_reasons_leave_masked_and_reasons_follow_the_setting() {
        let traces: Vec<TraceRecord<'static>> = (0..4).map(trace).collect();
        let batch = TraceBatch::build(&traces);
        let all = run_batch(&batch, &settings(Reasons::All));
        let masked = all.row(2);
        assert_eq!(
            masked.scenario(),
            Redaction::Builtin.scenario_key("mail ada@example.com")
        );
        assert_ne!(masked.scenario(), "mail ada@example.com");
        assert_eq!(masked.raw_scenario(), Some("mail ada@example.com"));
        assert_eq!(
            masked.agent(),
            Some(Redaction::Builtin.mask("ops bob@example.com").as_ref())
        );
        assert_eq!(all.row(0).agent(), None);
        for row in all.rows() {
            assert!(row.verdicts().all(|v| v.reason.is_some()));
        }
        // Only fired reasons are kept by default, and nothing else changes.
        let fired = run_batch(&batch, &settings(Reasons::Fired));
        assert!(fired.rows().any(|r| r.failed()));
        for (f, a) in fired.rows().zip(all.rows()) {
            for (fv, av) in f.verdicts().zip(a.verdicts()) {
                assert_eq!((fv.detected, fv.confidence), (av.detected, av.confidence));
                assert_eq!(fv.reason, if av.detected { av.reason } else { None });
            }
        }
        let none = run_batch(&batch, &settings(Reasons::None));
        assert!(
            none.rows()
                .all(|r| r.verdicts().all(|v| v.reason.is_none()))
        );
        assert_eq!(
            none.rows().map(|r| r.failed()).collect::<Vec<_>>(),
            all.rows().map(|r| r.failed()).collect::<Vec<_>>()
        );
        assert_eq!(all.row(1).measures().tokens, None, "no tokens recorded");
        assert_eq!(all.row(3).measures().tokens, Some(7.0));
    }

    /// A span: trace id, span id, parent, name, start, and the result of a tool span.
    type Span<'a> = (
        &'a str,
        &'a str,
        Option<&'a str>,
        &'a str,
        i64,
        Option<&'a str>,
    );

    /// An OTLP/JSON export of `spans`.
    fn export(spans: &[Span<'_>]) -> String {
        let spans: Vec<serde_json::Value> = spans
            .iter()
            .map(|&(trace, span, parent, name, start, result)| {
                let mut attributes = vec![json!({"key": "gen_ai.operation.name",
                    "value": {"stringValue": if result.is_some() { "execute_tool" } else { "invoke_agent" }}})];
                if let Some(result) = result {
                    attributes.push(json!({"key": "gen_ai.tool.name", "value": {"stringValue": "search"}}));
                    attributes.push(json!({"key": "gen_ai.tool.call.result", "value": {"stringValue": result}}));
                }
                json!({"traceId": trace, "spanId": span, "parentSpanId": parent, "name": name,
                    "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 1).to_string(),
                    "attributes": attributes})
            })
            .collect();
        json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
    }

    fn ids(batches: &[VerdictBatch]) -> Vec<String> {
        batches
            .iter()
            .flat_map(|b| {
                b.rows()
                    .map(|r| r.trace_id().to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn traces_split_across_files_are_merged_after_one_read_of_each_file_and_only_they_decoded_again()
     {
        use crate::ingest::reads::{self, Reads};
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        let c = dir.path().join("c.json");
        let d = dir.path().join("d.json");
        // t2 starts in a.json and ends in b.json, whose copy of its id is escaped (`t\u0032`).
        std::fs::write(
            &a,
            export(&[
                ("t1", "r1", None, "agent", 1, None),
                ("t1", "s1", Some("r1"), "search", 2, Some("[]")),
                ("t2", "r2", None, "agent", 3, None),
            ]),
        )
        .unwrap();
        let b_text = export(&[
            ("t2", "s2", Some("r2"), "search", 4, Some("found")),
            ("t3", "r3", None, "agent", 5, None),
        ])
        .replace(r#""traceId":"t2""#, r#""traceId":"t\u0032""#);
        assert!(b_text.contains(r"t\u0032"));
        std::fs::write(&b, b_text).unwrap();
        // A vendor export read twice: every span of its trace is a duplicate the second time.
        let langfuse = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/formats/langfuse.json");
        std::fs::copy(&langfuse, &c).unwrap();
        std::fs::copy(&langfuse, &d).unwrap();
        let files = vec![a.clone(), b.clone(), c.clone(), d.clone()];
        let settings = settings(Reasons::All);
        let mut results = run_files(&files, &settings);
        let shared = merge_shared_traces(&files, &mut results, &settings, None);

        let kept: Vec<Vec<String>> = results
            .iter()
            .map(|r| ids(&r.as_ref().unwrap().details.as_ref().unwrap().batches))
            .collect();
        assert_eq!(kept, [vec!["t1"], vec!["t3"], vec![], vec![]]);
        assert_eq!(shared.verdicts.len(), 1, "traces are shared");
        let merged = &shared.verdicts[0];
        assert_eq!(ids(std::slice::from_ref(merged)), ["t2", "t-lf-1"]);
        assert_eq!(merged.row(0).steps(), 1, "t2's tool span came from b.json");
        assert_eq!(merged.row(1).steps(), 2, "the vendor trace counted once");
        assert_eq!(shared.warnings.len(), 1);
        assert!(
            shared.warnings[0].starts_with("4 duplicate span(s) dropped"),
            "{}",
            shared.warnings[0]
        );
        // Each file is read once; a file holding a shared trace is opened again, and only its shared
        // traces decoded again (a format read whole when opened, the vendor export, is decoded by each
        // opening).
        for (file, decoded) in [(&a, 2 + 1), (&b, 2 + 1), (&c, 1 + 1), (&d, 1 + 1)] {
            assert_eq!(
                reads::of(file),
                Reads { opened: 2, decoded },
                "{}",
                file.display()
            );
        }
        // Files that share no trace are opened once and each trace decoded once.
        let e = dir.path().join("e.json");
        let f = dir.path().join("f.json");
        std::fs::write(&e, export(&[("t5", "r5", None, "agent", 1, None)])).unwrap();
        std::fs::write(&f, export(&[("t6", "r6", None, "agent", 1, None)])).unwrap();
        let mut results = run_files(&[e.clone(), f.clone()], &settings);
        assert!(
            merge_shared_traces(&[e.clone(), f.clone()], &mut results, &settings, None)
                .verdicts
                .is_empty()
        );
        for file in [&e, &f] {
            assert_eq!(
                reads::of(file),
                Reads {
                    opened: 1,
                    decoded: 1
                }
            );
        }
        // One file: nothing to share, so no index is read first.
        let alone = dir.path().join("alone.json");
        std::fs::copy(&a, &alone).unwrap();
        let results = run_files(std::slice::from_ref(&alone), &settings);
        assert_eq!(
            ids(&results[0]
                .as_ref()
                .unwrap()
                .details
                .as_ref()
                .unwrap()
                .batches),
            ["t1", "t2"]
        );
        assert_eq!(
            reads::of(&alone),
            Reads {
                opened: 1,
                decoded: 2
            }
        );
    }
}
