//! Trace identity across the files of one run: one rule, applied to every format.
//!
//! A trace is its trace id within one run. Spans of one trace id found in several files of the run are
//! one trace (the Collector's file exporter splits a trace across the files it rotates through). A span
//! found again with the same trace id, span id and content is the same span: it is dropped and counted.
//! The same span id with different content means the trace id was reused by a different trace: the
//! later file's trace is kept apart, under the id `<trace id>@<file>`, and a warning names both. The
//! file is named by the shortest end of its path that no other file of the run shares (its name,
//! else its folder and name, ...): never more of the path than the command line gave.
//! Within one file, traces are read as 0.4.1 reads them (each format groups its spans by trace id).
//!
//! The rule is applied once the files are read: each file is read once and gives the hashes of its
//! trace ids; the ids behind a hash two files list are confirmed ([`SharedIds`], over those files
//! alone), the shared traces' parts are decoded again whole and taken out of their files' results, and
//! [`merge`] joins the parts. (A run with a judge lists every file's ids first and keeps the parts whole
//! as it reads.) Memory holds 8 bytes per trace and the shared traces' parts, not the archive.
//!
//! Ingest takes part (it hashes or lists each file's trace ids as it reads), and so does the table
//! builder (it keeps whole, out of its batches, the traces `ReadOptions::hold` names); a run applies
//! and finishes the rule here: which ids several files hold ([`index_files`], [`hold_shared_traces`])
//! and, once every file is read, the shared traces merged and checked once
//! ([`merge_shared_traces`]), where the conversations of `--unit session` and the units of
//! `--follow-links` are joined and checked too. `crate::run::check` does both, so no caller can
//! leave the merge out; `check --explain`, which reads a run again, finds and merges its shared
//! traces here as well ([`shared_ids`], [`merged_batch`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use arrow_array::Array;
use arrow_schema::SchemaRef;
use rayon::prelude::*;

use super::drive::{check_batch, check_turns, run_file};
use super::{
    FileResults, RunSettings, UnreadTools, bound_failing_steps, links_warning, read_options,
    run_domains,
};
use crate::error::{InputError, display_path};
use crate::ingest::{self, ReadOptions};
use crate::report::id_hashes::IdHashes;
use crate::report::spill::VerdictSpill;
use crate::report::steps::{self, TraceSteps};
use crate::report::verdicts::VerdictBatch;
use crate::table::columns::Columns;
use crate::table::record::{SpanRecord, TraceRecord, is_content_record, join_content};
use crate::table::{TableOptions, TraceBatch};

/// The trace ids of a run's files, told file by file, and those found in more than one file.
#[derive(Debug, Default)]
struct SharedIds {
    first_file: HashMap<String, usize>,
    shared: HashSet<String>,
}

impl SharedIds {
    /// Adds the ids of file number `file` (repeats allowed).
    fn add(&mut self, file: usize, ids: Vec<String>) {
        for id in ids {
            match self.first_file.get(&id) {
                Some(&f) if f != file => {
                    self.shared.insert(id);
                }
                Some(_) => {}
                None => {
                    self.first_file.insert(id, file);
                }
            }
        }
    }

    /// The ids found in more than one file.
    fn shared(self) -> HashSet<String> {
        self.shared
    }
}

/// Traces merged across files, and what the merge found.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    /// One trace per identity, in order of first appearance (file order, then trace order).
    pub traces: Vec<TraceRecord<'static>>,
    /// Exact duplicate spans dropped, with the first one's trace id, span id and file.
    pub duplicates: usize,
    pub first_duplicate: Option<(String, String, PathBuf)>,
    /// Trace ids reused by different traces: the id, the clashing span id, the earlier file and the
    /// later one (whose trace was renamed), and the later trace's new id.
    pub clashes: Vec<(String, String, PathBuf, PathBuf, String)>,
    /// Content records (OTLP log records) whose span no file holds: the trace id and span id of each.
    pub unjoined: Vec<(String, String)>,
}

impl Merged {
    /// The input warnings the merge raises.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((trace, span, file)) = &self.first_duplicate {
            out.push(format!(
                "{} duplicate span(s) dropped: the same span (trace id, span id and content) was read from more than one file (first: trace {trace} span {span} in {})",
                self.duplicates,
                display_path(file)
            ));
        }
        for (trace, span, earlier, later, renamed) in &self.clashes {
            out.push(format!(
                "trace id {trace} is used by different traces in {} and {} (span {span} differs): they are kept apart, the second as {renamed}",
                display_path(earlier),
                display_path(later),
            ));
        }
        if let Some((trace, span)) = self.unjoined.first() {
            out.push(format!(
                "{} log record(s) carry GenAI content for spans no input of the run holds; their content was not read (first: trace {trace} span {span})",
                self.unjoined.len()
            ));
        }
        out
    }
}

/// The key a span is held under in a group: its id, or for a content record (which is no span, and
/// never clashes with its span) its id marked as a content record's.
fn key(span: &SpanRecord<'_>) -> String {
    if is_content_record(span) {
        format!("{}{}", span.name, span.span_id)
    } else {
        span.span_id.to_string()
    }
}

/// A trace being merged: its spans, and the spans' ids (with the position of each) for lookups.
struct Group {
    trace: TraceRecord<'static>,
    by_id: HashMap<String, Vec<usize>>,
    first_file: usize,
}

impl Group {
    fn new(trace: TraceRecord<'static>, file: usize) -> Group {
        let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, s) in trace.spans.iter().enumerate() {
            by_id.entry(key(s)).or_default().push(i);
        }
        Group {
            trace,
            by_id,
            first_file: file,
        }
    }

    /// The first span of `part` whose id the group holds with other content, if any.
    fn clash<'p>(&self, part: &'p TraceRecord<'static>) -> Option<&'p SpanRecord<'static>> {
        part.spans
            .iter()
            .filter(|s| !is_content_record(s))
            .find(|s| {
                self.by_id
                    .get(s.span_id.as_ref())
                    .is_some_and(|held| held.iter().all(|&i| !same_span(&self.trace.spans[i], s)))
            })
    }

    /// Adds the spans of `part` the group does not hold yet; returns the first duplicate's id and how
    /// many were dropped.
    fn absorb(&mut self, part: TraceRecord<'static>) -> (usize, Option<String>) {
        let mut dropped = 0;
        let mut first = None;
        for span in part.spans {
            let held = self
                .by_id
                .get(&key(&span))
                .is_some_and(|held| held.iter().any(|&i| same_span(&self.trace.spans[i], &span)));
            if held {
                dropped += 1;
                first.get_or_insert_with(|| span.span_id.to_string());
                continue;
            }
            self.by_id
                .entry(key(&span))
                .or_default()
                .push(self.trace.spans.len());
            self.trace.spans.push(span);
        }
        self.trace.skipped_attributes += part.skipped_attributes;
        // The first file's resource keeps its values, as the first resource of one file's does.
        self.trace.resource.add_missing(&part.resource);
        (dropped, first)
    }
}

/// The shortest end of `files[file]`'s path (whole components) that is the end of no other file's
/// path; the whole path as given when every end is shared (the same file given twice).
fn short_name(files: &[PathBuf], file: usize) -> String {
    let shown = display_path(&files[file]);
    let parts: Vec<&str> = shown.split('/').filter(|p| !p.is_empty()).collect();
    let others: Vec<String> = files
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != file)
        .map(|(_, f)| format!("/{}", display_path(f).trim_start_matches('/')))
        .collect();
    (1..parts.len())
        .map(|k| parts[parts.len() - k..].join("/"))
        .find(|end| {
            let tail = format!("/{end}");
            !others.iter().any(|o| o.ends_with(&tail))
        })
        .unwrap_or(shown)
}

fn same_span(a: &SpanRecord<'_>, b: &SpanRecord<'_>) -> bool {
    a == b
}

/// Merges the parts of shared traces (each a trace as one file holds it, with the file's position),
/// given in file order, by the rule of this module. Merged spans are ordered by start (stably, so
/// ties keep file order); the agent is the first part's.
fn merge(parts: Vec<(usize, TraceRecord<'static>)>, files: &[PathBuf]) -> Merged {
    let mut merged = Merged::default();
    // Groups of one trace id, in order of first appearance; a clash opens a new group.
    let mut groups: Vec<Group> = Vec::new();
    let mut by_trace: HashMap<String, Vec<usize>> = HashMap::new();
    for (file, part) in parts {
        let id = part.trace_id.to_string();
        let candidates = by_trace.entry(id.clone()).or_default();
        let fits = candidates
            .iter()
            .copied()
            .find(|&g| groups[g].clash(&part).is_none());
        match fits {
            Some(g) => {
                let (dropped, first) = groups[g].absorb(part);
                merged.duplicates += dropped;
                if merged.first_duplicate.is_none()
                    && let Some(span) = first
                {
                    merged.first_duplicate = Some((id, span, files[file].clone()));
                }
            }
            None => {
                let renamed = format!("{id}@{}", short_name(files, file));
                if let Some(&g) = candidates.first() {
                    let span = groups[g]
                        .clash(&part)
                        .map(|s| s.span_id.to_string())
                        .unwrap_or_default();
                    merged.clashes.push((
                        id.clone(),
                        span,
                        files[groups[g].first_file].clone(),
                        files[file].clone(),
                        renamed.clone(),
                    ));
                }
                let mut part = part;
                // The later file's trace keeps a name the warning can point at.
                if !candidates.is_empty() {
                    part.trace_id = renamed.into();
                }
                candidates.push(groups.len());
                groups.push(Group::new(part, file));
            }
        }
    }
    // Log records join their spans once every part is in; a trace of log records alone is no trace.
    let mut unjoined = Vec::new();
    merged.traces = groups
        .into_iter()
        .filter_map(|mut g| {
            let id = g.trace.trace_id.to_string();
            unjoined.extend(
                join_content(&mut g.trace)
                    .into_iter()
                    .map(|s| (id.clone(), s)),
            );
            g.trace.spans.sort_by_key(|s| s.start_ns);
            (!g.trace.spans.is_empty()).then_some(g.trace)
        })
        .collect();
    merged.unjoined = unjoined;
    merged
}

/// The trace ids more than one of `files` holds, from each file's index; the first file whose index
/// cannot be made fails it. For a reader that holds the shared traces from the start and stops at
/// the first bad file (`check --explain`).
pub(crate) fn shared_ids(
    files: &[PathBuf],
    options: &ReadOptions,
) -> Result<HashSet<String>, InputError> {
    if files.len() < 2 {
        return Ok(HashSet::new());
    }
    let mut ids = SharedIds::default();
    for (i, path) in files.iter().enumerate() {
        ids.add(i, ingest::trace_ids(path, options)?);
    }
    Ok(ids.shared())
}

/// The parts of the shared traces a read held (each with its file's place, in file order) merged by
/// the rule and built into one batch, for a reader that checks them as the run does; the merge's
/// warnings are the run's to give, not such a reader's.
pub(crate) fn merged_batch(
    held: Vec<(usize, TraceRecord<'static>)>,
    files: &[PathBuf],
    table: TableOptions,
) -> TraceBatch {
    let merged = merge(held, files);
    let mut builder = crate::table::TableBuilder::new(table);
    for trace in &merged.traces {
        builder.append(trace);
    }
    builder.finish()
}

/// Lists every file's trace ids from its index (`parallel` files at a time) when the run has several
/// files: each file's refusal, if its index could not be made, and the ids more than one file holds.
pub(super) fn index_files(
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
    let mut ids = SharedIds::default();
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

/// Applies the trace-identity rule to files read on their own: the traces whose id another file also
/// holds are taken out of each file's results and decoded again, whole, as the file's shared parts.
/// Nothing is read again unless two files list the same id hash; a file is read whole again (keeping
/// its shared traces whole, as when they are known in advance) only when taking them out leaves fewer
/// failing traces' steps than it keeps while more failing traces are in the file, or when its steps
/// were dropped for the files before it and taking the shared traces out leaves those fewer than the
/// run's bound.
pub(super) fn hold_shared_traces(
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
    let mut ids = SharedIds::default();
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

impl FileResults {
    /// Takes the traces of `ids` out of the results, as if they had been kept whole when read (their
    /// parts count where they were read, so the count of traces without content stays). False, with
    /// the results left part-taken, when the file kept the steps of `limit` failing traces and some of
    /// them were taken out: the next failing traces' steps were not kept, and the file must be read
    /// again.
    pub(super) fn take_out(&mut self, ids: &HashSet<String>, limit: usize) -> bool {
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

/// Traces whose id more than one file of the run holds, merged by this module's rule.
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
/// which `super::read` kept whole when it read their files, are merged and checked once. Returns
/// nothing when no id is shared.
pub(super) fn merge_shared_traces(
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
    let mut merged = merge(parts, files);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: &str, start: i64, name: &str) -> SpanRecord<'static> {
        SpanRecord {
            span_id: id.to_string().into(),
            name: name.to_string().into(),
            start_ns: start,
            ..SpanRecord::default()
        }
    }

    fn trace(id: &str, spans: Vec<SpanRecord<'static>>) -> TraceRecord<'static> {
        TraceRecord {
            trace_id: id.to_string().into(),
            agent: "a".into(),
            spans,
            skipped_attributes: 0,
            resource: Default::default(),
        }
    }

    fn files() -> Vec<PathBuf> {
        vec!["a.json".into(), "b.json".into(), "c.json".into()]
    }

    #[test]
    fn ids_shared_between_files_only() {
        let mut ids = SharedIds::default();
        let owned = |ids: &[&str]| ids.iter().map(ToString::to_string).collect();
        ids.add(0, owned(&["t1", "t2", "t2"]));
        ids.add(1, owned(&["t3", "t1"]));
        ids.add(2, owned(&["t4"]));
        assert_eq!(
            ids.shared(),
            HashSet::from(["t1".to_string()]),
            "t2 repeats within one file only"
        );
    }

    #[test]
    fn split_traces_merge_and_exact_duplicates_are_dropped() {
        let parts = vec![
            (
                0,
                trace("t", vec![span("root", 1, "agent"), span("llm", 2, "chat")]),
            ),
            (
                1,
                trace("t", vec![span("tool", 3, "search"), span("llm", 2, "chat")]),
            ),
        ];
        let merged = merge(parts, &files());
        assert_eq!(merged.traces.len(), 1);
        let names: Vec<&str> = merged.traces[0]
            .spans
            .iter()
            .map(|s| s.name.as_ref())
            .collect();
        assert_eq!(names, ["agent", "chat", "search"]);
        assert_eq!(merged.duplicates, 1);
        assert!(merged.clashes.is_empty());
        assert_eq!(merged.warnings().len(), 1);
        assert!(merged.warnings()[0].contains("trace t span llm in b.json"));
    }

    #[test]
    fn a_reused_id_with_other_content_stays_a_different_trace() {
        let parts = vec![
            (0, trace("t", vec![span("root", 1, "agent")])),
            (1, trace("t", vec![span("root", 5, "other agent")])),
            (2, trace("t", vec![span("extra", 9, "late")])),
        ];
        let merged = merge(parts, &files());
        let ids: Vec<&str> = merged.traces.iter().map(|t| t.trace_id.as_ref()).collect();
        assert_eq!(ids, ["t", "t@b.json"]);
        assert_eq!(
            merged.traces[0].spans.len(),
            2,
            "c.json's span joins the first trace"
        );
        assert_eq!(merged.clashes.len(), 1);
        assert!(merged.warnings()[0].contains("kept apart, the second as t@b.json"));
    }

    #[test]
    fn a_renamed_id_names_its_file_by_the_shortest_end_of_its_path() {
        let files: Vec<PathBuf> = vec![
            "/home/u/runs/airline/x.json".into(),
            "/home/u/runs/retail/x.json".into(),
            "/home/u/runs/retail/y.json".into(),
        ];
        let parts = vec![
            (0, trace("t", vec![span("root", 1, "agent")])),
            (1, trace("t", vec![span("root", 5, "other agent")])),
            (2, trace("t", vec![span("root", 7, "third agent")])),
        ];
        let merged = merge(parts, &files);
        let ids: Vec<&str> = merged.traces.iter().map(|t| t.trace_id.as_ref()).collect();
        assert_eq!(ids, ["t", "t@retail/x.json", "t@y.json"]);
        assert!(merged.warnings()[1].ends_with("the second as t@y.json"));
        // The same path twice has no shorter end of its own: it is named whole.
        assert_eq!(
            short_name(&["a/x.json".into(), "a/x.json".into()], 1),
            "a/x.json"
        );
    }
}
