//! How a run reads its files: a group at a time, in parallel within a group (one at a time while a
//! judge runs, so that its calls keep a fixed order), each file on its own with the hashes of its
//! trace ids, or every file's ids listed first when the run has a judge or reads log records; a run
//! whose traces name several benchmark domains is read again with its scenario keys qualified, and
//! `--follow-links` reads every file once more, first, for its link graph. Each file's batches are
//! checked as they are read (`super::drive`); the traces other files hold too are found and held for
//! `super::identity`.

use std::path::PathBuf;

use arrow_array::Array;
use arrow_schema::SchemaRef;
use rayon::prelude::*;

use super::drive::run_file;
use super::identity::{hold_shared_traces, index_files};
use super::{FileResults, RunSettings, bound_failing_steps, read_options, run_domains};
use crate::error::InputError;
use crate::ingest::{self, Format, ReadOptions};
use crate::report::id_hashes::IdHashes;
use crate::report::spill::VerdictSpill;
use crate::table::TraceBatch;

/// Runs the checks over every trace of every file, in file order, except the traces several files
/// hold: each file keeps its parts of those whole, for `super::identity::merge_shared_traces`. With
/// `spill`, each finished verdict batch is appended to it instead of kept in memory: each file's
/// results say where its batches are ([`FileResults::spilled`]).
pub(super) fn read_files(
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
        return read_groups(files, settings, &options, &schema, 1, refused, spill, None);
    }
    let refused = files.iter().map(|_| None).collect();
    if files.len() < 2 {
        // One file shares no trace with another: its ids need no hashes.
        return read_groups(
            files, settings, &options, &schema, parallel, refused, spill, None,
        );
    }
    let mut hashes = IdHashes::new(spill.and_then(VerdictSpill::dir));
    let mut out = read_groups(
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
        return read_groups(
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
pub(super) fn read_groups(
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
