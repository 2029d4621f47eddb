//! Merging partials of one run: their settings checked to agree, their files put back in input
//! order, in memory ([`merge`]) or through a spill ([`merge_spilled`]), and the trace ids that more
//! than one shard read.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use super::batches::{Joiner, batch_offsets, slice_rows};
use super::manifest::{Manifest, SessionUnits, UnreadUnits, Usage, first_difference};
use super::read::{read_error, shape_message};
use super::write::PartialWriter;
use super::{Partial, PartialError, PartialHead, VERDICTS_FILE};
use crate::report::id_hashes::IdHashes;
use crate::report::spill::{SpillError, SpilledFile, SpilledRun, VerdictSpill};
use crate::report::steps::{MAX_TRACES, TraceSteps};
use crate::report::verdicts::VerdictBatch;

/// The result of a merge: the merged partial, and the trace ids read by more than one shard.
#[derive(Debug)]
pub(crate) struct Merged {
    pub partial: Partial,
    /// Trace ids whose rows come from more than one shard, in first-row order.
    pub split_ids: Vec<String>,
}

/// Merges partials of one run (given with the directories they came from, for messages).
///
/// # Errors
///
/// No partial; partials of different commands or settings ([`PartialError::Differs`] names the first
/// setting that differs); one input file in two partials.
pub(crate) fn merge(parts: &[(PathBuf, Partial)]) -> Result<Merged, PartialError> {
    let manifests: Vec<(&Path, &Manifest)> = parts
        .iter()
        .map(|(path, part)| (path.as_path(), &part.manifest))
        .collect();
    let Plan {
        files,
        manifest: mut base,
    } = plan(&manifests)?;
    base.files = files
        .iter()
        .map(|&(p, f, _)| parts[p].1.manifest.files[f].clone())
        .collect();
    let (first_path, first) = &parts[0];
    let first_path = first_path.clone();
    let offsets: Vec<Vec<usize>> = parts
        .iter()
        .map(|(_, p)| batch_offsets(&p.batches))
        .collect();
    let mut joiner = Joiner::new(first.schema());
    let mut steps = Vec::with_capacity(files.len());
    // Files that follow each other in one partial are sliced as one run of rows.
    let mut run: Option<(usize, usize, usize)> = None;
    for file in &files {
        let (p, f, row) = *file;
        let rows = parts[p].1.manifest.files[f].rows;
        steps.push(parts[p].1.steps[f].clone());
        run = match run {
            Some((rp, start, len)) if rp == p && start + len == row => {
                Some((rp, start, len + rows))
            }
            other => {
                if let Some((rp, start, len)) = other {
                    for slice in slice_rows(&parts[rp].1.batches, &offsets[rp], start, len) {
                        joiner
                            .push(slice)
                            .map_err(|e| merge_error(&parts[rp].0, &e))?;
                    }
                }
                Some((p, row, rows))
            }
        };
    }
    if let Some((rp, start, len)) = run {
        for slice in slice_rows(&parts[rp].1.batches, &offsets[rp], start, len) {
            joiner
                .push(slice)
                .map_err(|e| merge_error(&parts[rp].0, &e))?;
        }
    }
    let manifest = base;
    let batches = joiner.finish().map_err(|e| merge_error(&first_path, &e))?;
    let mut partial = Partial {
        manifest,
        batches,
        steps,
    };
    partial.bound_steps();
    let split_ids = split_trace_ids(&partial);
    Ok(Merged { partial, split_ids })
}

/// How partials merge: their files in input order, and the merged manifest.
struct Plan {
    /// Each file as (its partial, its place in the partial's manifest, its first row in the partial's
    /// table), in input order: a few counters per file.
    files: Vec<(usize, usize, usize)>,
    /// The first partial's manifest with the judge's usage summed, without files: the merge lists
    /// them in the order of [`Plan::files`].
    manifest: Manifest,
}

/// Checks that partials (given with the directories they came from) belong to one run and puts their
/// files in input order.
///
/// # Errors
///
/// No partial; partials of different commands or settings; one input file in two partials.
fn plan(parts: &[(&Path, &Manifest)]) -> Result<Plan, PartialError> {
    let Some(&(first_path, first)) = parts.first() else {
        return Err(PartialError::Empty);
    };
    for &(path, manifest) in &parts[1..] {
        if let Some((setting, a, b)) = first_difference(first, manifest) {
            return Err(PartialError::Differs {
                setting,
                first: a,
                second: b,
                first_path: first_path.to_path_buf(),
                second_path: path.to_path_buf(),
            });
        }
    }
    let mut files: Vec<(usize, usize, usize)> = Vec::new();
    let mut usage: Option<Usage> = None;
    let mut named_ids = false;
    for (p, (_, manifest)) in parts.iter().enumerate() {
        named_ids |= manifest.named_ids;
        if let Some(u) = manifest.judge_usage {
            let total = usage.get_or_insert_with(Usage::default);
            total.prompt_tokens += u.prompt_tokens;
            total.completion_tokens += u.completion_tokens;
        }
        let mut row = 0;
        for (f, file) in manifest.files.iter().enumerate() {
            files.push((p, f, row));
            row += file.rows;
        }
    }
    let entry = |&(p, f, _): &(usize, usize, usize)| &parts[p].1.files[f];
    files.sort_by_key(|file| entry(file).index);
    for pair in files.windows(2) {
        if entry(&pair[0]).index == entry(&pair[1]).index {
            return Err(PartialError::SameFile {
                file: entry(&pair[0]).path.to_string(),
                first: parts[pair[0].0].0.to_path_buf(),
                second: parts[pair[1].0].0.to_path_buf(),
            });
        }
    }
    let mut manifest = Manifest {
        files: Vec::new(),
        ..first.clone()
    };
    manifest.judge_usage = usage;
    manifest.named_ids = named_ids;
    Ok(Plan { files, manifest })
}

/// A merge of `check` partials whose verdicts went to a spill rather than into memory.
#[derive(Debug)]
pub(crate) struct SpilledMerge {
    /// The merged manifest: every partial's files, in input order.
    pub manifest: Manifest,
    /// Each file's failing traces' steps, cut to the run's bound.
    pub steps: Vec<Vec<TraceSteps>>,
    /// The verdicts, in input order.
    pub spilled: SpilledRun,
    /// Trace ids whose rows come from more than one shard, in first-row order.
    pub split_ids: Vec<String>,
    /// Partials of `check --unit session`: the ids of the conversations checked as units.
    pub sessions: Option<crate::sessions::SessionIds>,
}

/// Merges partials of one run as [`merge`] does, appending their verdict batches to a spill in
/// `spill_dir` (`TMPDIR` when `None`) a batch at a time instead of holding them: each partial's table
/// is read once, front to back, and the spill gives the rows back in input order.
///
/// # Errors
///
/// As [`merge`]; a batch that cannot be decoded or a table that does not hold the rows its manifest
/// lists; the spill cannot be written.
pub(crate) fn merge_spilled(
    parts: Vec<PartialHead>,
    spill_dir: Option<&Path>,
) -> Result<SpilledMerge, PartialError> {
    let manifests: Vec<(&Path, &Manifest)> = parts
        .iter()
        .map(|part| (part.dir.as_path(), &part.manifest))
        .collect();
    let Plan {
        files,
        mut manifest,
    } = plan(&manifests)?;
    // Runs of rows that follow each other in one partial, in input order: (partial, first row, rows).
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for &(p, f, row) in &files {
        let rows = parts[p].manifest.files[f].rows;
        match runs.last_mut() {
            Some((rp, start, len)) if *rp == p && *start + *len == row => *len += rows,
            _ => runs.push((p, row, rows)),
        }
    }
    let schema = manifest.verdict_schema();
    let spill = VerdictSpill::new(&schema, spill_dir)?;
    let mut run_batches: Vec<Vec<usize>> = vec![Vec::new(); runs.len()];
    // Session partials' units: each partial's places and the batches of its rows in `unit_spill`.
    let unit_spill = VerdictSpill::new(&schema, spill_dir)?;
    let mut unit_parts: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
    // Each id's 64-bit hash with the shard of its row, sorted on disk a run at a time: an id seen
    // from two shards is a suspect, confirmed by its text once the spill is read back (hashes can
    // meet).
    let hasher = foldhash::fast::FixedState::with_seed(0x5eed);
    let mut id_hashes = IdHashes::new(spill_dir);
    // Each partial's manifest and steps stay until the merged ones take its entries (moved, not
    // copied: a partial may list a million files).
    let mut listed: Vec<(Manifest, Vec<Vec<TraceSteps>>)> = Vec::with_capacity(parts.len());
    for (p, part) in parts.into_iter().enumerate() {
        let PartialHead {
            dir,
            manifest: part_manifest,
            steps: part_steps,
            reader,
        } = part;
        let fail = |message: String| read_error(&dir, message);
        let listed_rows = part_manifest.listed_rows();
        // The rows past the files' are the partial's session units, set apart to be put in order.
        let file_rows: usize = part_manifest.files.iter().map(|f| f.rows).sum();
        let mut unit_batches = Vec::new();
        // This partial's runs, in row order (its files keep their order in the merged list).
        let mine: Vec<usize> = (0..runs.len()).filter(|&r| runs[r].0 == p).collect();
        let mut shards = part_manifest
            .files
            .iter()
            .flat_map(|f| std::iter::repeat_n(f.shard, f.rows));
        let mut pending = Pending::new(schema.clone());
        let mut at = 0;
        let mut next = 0;
        for batch in reader {
            let batch = batch.map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
            let rows = batch.num_rows();
            if at + rows > listed_rows {
                return Err(fail(shape_message()));
            }
            let checked =
                VerdictBatch::try_new(batch).map_err(|e| fail(format!("{VERDICTS_FILE}: {e}")))?;
            let in_files = rows.min(file_rows.saturating_sub(at));
            for row in checked.rows().take(in_files) {
                let shard = shards.next().unwrap_or_default();
                id_hashes.push(
                    hasher.hash_one(row.trace_id()),
                    u32::try_from(shard).unwrap_or(u32::MAX),
                );
            }
            let batch = checked.record_batch();
            if in_files < rows {
                let units = VerdictBatch::try_new(batch.slice(in_files, rows - in_files))
                    .map_err(SpillError::from)?;
                unit_batches.extend(unit_spill.append(&units));
            }
            let mut from = 0;
            while from < in_files {
                let r = mine[next];
                let (_, start, len) = runs[r];
                let end = (start + len).min(at + rows);
                let take = end - (at + from);
                pending.push(r, batch.slice(from, take), &spill, &mut run_batches)?;
                from += take;
                if at + from == start + len {
                    pending.flush(&spill, &mut run_batches)?;
                    next += 1;
                }
            }
            at += rows;
        }
        pending.flush(&spill, &mut run_batches)?;
        if at != listed_rows {
            return Err(fail(shape_message()));
        }
        drop(shards);
        if let Some(units) = &part_manifest.sessions {
            unit_parts.push((units.places.clone(), unit_batches));
        }
        listed.push((part_manifest, part_steps));
    }
    // The session units after every file's rows, in the order of their places.
    let sessions = match &manifest.sessions {
        None => None,
        Some(first) => {
            let units = unit_spill.finish()?;
            let (merged, ids) = merge_units(first.alone, &unit_parts, &units, &spill, &schema)?;
            let places = merged.places.clone();
            let unread = listed
                .iter()
                .filter_map(|(m, _)| m.sessions.as_ref()?.unread_tools.clone())
                .reduce(|a, b| UnreadUnits {
                    count: a.count + b.count,
                    ..if b.place < a.place { b } else { a }
                });
            manifest.sessions = Some(SessionUnits {
                alone: first.alone,
                places,
                unread_tools: unread,
            });
            run_batches.push(merged.batches);
            Some(ids)
        }
    };
    let mut steps: Vec<Vec<TraceSteps>> = Vec::with_capacity(files.len());
    manifest.files.reserve_exact(files.len());
    let mut kept = 0;
    for &(p, f, _) in &files {
        let (part_manifest, part_steps) = &mut listed[p];
        manifest
            .files
            .push(std::mem::take(&mut part_manifest.files[f]));
        let mut file_steps = std::mem::take(&mut part_steps[f]);
        file_steps.truncate(MAX_TRACES.saturating_sub(kept));
        kept += file_steps.len();
        steps.push(file_steps);
    }
    drop(listed);
    drop(files);
    let mut suspects: HashSet<u64> = HashSet::new();
    id_hashes
        .repeated(|hash, shards| {
            if shards.first() != shards.last() {
                suspects.insert(hash);
            }
            true
        })
        .map_err(SpillError::from)?;
    let spilled = SpilledRun {
        verdicts: spill.finish()?,
        files: run_batches
            .into_iter()
            .map(|batches| SpilledFile {
                batches,
                dropped: None,
            })
            .collect(),
    };
    let split_ids = if suspects.is_empty() {
        Vec::new()
    } else {
        let mut shards = manifest
            .files
            .iter()
            .flat_map(|f| std::iter::repeat_n(f.shard, f.rows));
        let mut first_shard: HashMap<String, usize> = HashMap::new();
        let mut split: Vec<String> = Vec::new();
        let mut seen_split: HashSet<String> = HashSet::new();
        spilled.for_each_batch(|batch| {
            for row in batch.rows() {
                let shard = shards.next().unwrap_or_default();
                let id = row.trace_id();
                if !suspects.contains(&hasher.hash_one(id)) {
                    continue;
                }
                match first_shard.get(id) {
                    None => {
                        first_shard.insert(id.to_string(), shard);
                    }
                    Some(&s) if s != shard && seen_split.insert(id.to_string()) => {
                        split.push(id.to_string());
                    }
                    Some(_) => {}
                }
            }
            Ok::<(), SpillError>(())
        })?;
        split
    };
    Ok(SpilledMerge {
        manifest,
        steps,
        spilled,
        split_ids,
        sessions,
    })
}

/// Session units merged: their places, rising, and their batches in the merged spill.
struct MergedUnits {
    places: Vec<u64>,
    batches: Vec<usize>,
}

/// Puts the session units of every partial (`parts`: each one's places, rising, and its rows'
/// batches in `units`) in the order of their places, appending them to `spill`; returns them with
/// the ids of those that are conversations (places from `alone` on). Holds one batch per partial.
fn merge_units(
    alone: u64,
    parts: &[(Vec<u64>, Vec<usize>)],
    units: &crate::report::spill::SpilledVerdicts,
    spill: &VerdictSpill,
    schema: &SchemaRef,
) -> Result<(MergedUnits, crate::sessions::SessionIds), PartialError> {
    let mut reader = units.reader()?;
    // Each partial's cursor: its next row, the batch of it (its index among the partial's), and
    // where in that batch it is.
    struct Cursor {
        row: usize,
        batch: usize,
        at: usize,
        current: Option<VerdictBatch>,
    }
    let mut cursors: Vec<Cursor> = parts
        .iter()
        .map(|_| Cursor {
            row: 0,
            batch: 0,
            at: 0,
            current: None,
        })
        .collect();
    let mut merged = MergedUnits {
        places: Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum()),
        batches: Vec::new(),
    };
    let mut ids = crate::sessions::SessionIds::default();
    let mut joiner = Joiner::new(schema.clone());
    let flush = |joiner: &mut Joiner, merged: &mut MergedUnits, all: bool| {
        if all {
            joiner.flush().map_err(SpillError::from)?;
        }
        for batch in joiner.out.drain(..) {
            merged.batches.extend(spill.append(&batch));
        }
        Ok::<(), PartialError>(())
    };
    loop {
        let next = (0..parts.len())
            .filter_map(|p| parts[p].0.get(cursors[p].row).map(|&place| (place, p)))
            .min();
        let Some((place, p)) = next else {
            break;
        };
        let cursor = &mut cursors[p];
        while cursor.current.as_ref().is_none_or(|b| cursor.at >= b.len()) {
            let index = *parts[p].1.get(cursor.batch).ok_or_else(|| {
                PartialError::Spill(SpillError::from(ArrowError::IpcError(
                    "a session partial holds fewer rows than its places".into(),
                )))
            })?;
            cursor.current = Some(reader.batch(index)?);
            cursor.batch += 1;
            cursor.at = 0;
        }
        let batch = cursor.current.as_ref().expect("a batch read");
        let row = batch.record_batch().slice(cursor.at, 1);
        if place >= alone
            && let Some(unit) = VerdictBatch::try_new(row.clone())
                .map_err(SpillError::from)?
                .rows()
                .next()
        {
            ids.insert(unit.trace_id());
        }
        joiner.push(row).map_err(SpillError::from)?;
        flush(&mut joiner, &mut merged, false)?;
        merged.places.push(place);
        cursor.at += 1;
        cursor.row += 1;
    }
    flush(&mut joiner, &mut merged, true)?;
    Ok((merged, ids))
}

impl SpilledMerge {
    /// The failing traces' steps a run over all the files keeps.
    pub(crate) fn failing_steps(&self) -> Vec<TraceSteps> {
        self.steps.iter().flatten().cloned().collect()
    }

    /// Writes the merged partial into `dir`, its verdict table streamed from the spill; returns its
    /// rows.
    ///
    /// # Errors
    ///
    /// The spill cannot be read back, or a file cannot be written.
    pub(crate) fn write(&self, dir: &Path) -> Result<usize, PartialError> {
        let schema = self.manifest.verdict_schema();
        let mut writer = PartialWriter::new(dir, schema)?;
        let rows = writer.verdicts(|sink| self.spilled.for_each_batch(|batch| sink.push(batch)))?;
        writer.finish(&self.manifest, &self.steps)?;
        Ok(rows)
    }
}

/// Consecutive slices of one run of rows, appended to the spill as one batch of about
/// [`JOINED_ROWS`](super::batches::JOINED_ROWS) rows.
struct Pending {
    joiner: Joiner,
    run: Option<usize>,
}

impl Pending {
    fn new(schema: SchemaRef) -> Pending {
        Pending {
            joiner: Joiner::new(schema),
            run: None,
        }
    }

    fn push(
        &mut self,
        run: usize,
        slice: RecordBatch,
        spill: &VerdictSpill,
        run_batches: &mut [Vec<usize>],
    ) -> Result<(), PartialError> {
        if self.run != Some(run) {
            self.flush(spill, run_batches)?;
            self.run = Some(run);
        }
        self.joiner.push(slice).map_err(SpillError::from)?;
        self.drain(spill, run_batches);
        Ok(())
    }

    fn flush(
        &mut self,
        spill: &VerdictSpill,
        run_batches: &mut [Vec<usize>],
    ) -> Result<(), PartialError> {
        self.joiner.flush().map_err(SpillError::from)?;
        self.drain(spill, run_batches);
        Ok(())
    }

    /// Appends the joined batches to the spill, under the current run.
    fn drain(&mut self, spill: &VerdictSpill, run_batches: &mut [Vec<usize>]) {
        let Some(run) = self.run else {
            return;
        };
        for batch in self.joiner.out.drain(..) {
            // A failed append is reported by `VerdictSpill::finish`.
            if let Some(index) = spill.append(&batch) {
                run_batches[run].push(index);
            }
        }
    }
}

/// A verdict table that could not be joined: a bug, since every partial's schema was checked.
fn merge_error(path: &Path, e: &ArrowError) -> PartialError {
    PartialError::Read {
        path: path.to_path_buf(),
        message: format!("{VERDICTS_FILE}: {e}"),
    }
}

/// Trace ids whose rows come from more than one shard: their spans were split across shards, and a
/// single run would have read them as one trace.
pub(crate) fn split_trace_ids(partial: &Partial) -> Vec<String> {
    let mut shard_of: HashMap<&str, usize> = HashMap::new();
    let mut split: Vec<&str> = Vec::new();
    let mut seen_split: HashSet<&str> = HashSet::new();
    // Each file's rows are the next `rows` of the table.
    let mut shards = partial
        .manifest
        .files
        .iter()
        .flat_map(|f| std::iter::repeat_n(f.shard, f.rows));
    for row in partial.batches.iter().flat_map(VerdictBatch::rows) {
        let shard = shards.next().unwrap_or_default();
        let id = row.trace_id();
        match shard_of.get(id) {
            None => {
                shard_of.insert(id, shard);
            }
            Some(&s) if s != shard && seen_split.insert(id) => split.push(id),
            Some(_) => {}
        }
    }
    split.into_iter().map(String::from).collect()
}

/// The one-line warning about trace ids read by more than one shard.
pub(crate) fn split_ids_warning(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    let more = if ids.len() > shown.len() {
        format!(", and {} more", ids.len() - shown.len())
    } else {
        String::new()
    };
    format!(
        "warning: {} trace id(s) found in more than one partial ({}{more}); each partial's spans were checked as a separate trace and each counts once per partial",
        ids.len(),
        shown.join(", ")
    )
}
