//! Producing a run: reading its files and running the checks, one verdict batch per file, with each
//! file's warnings, skip reasons and failing traces' steps, as a partial holds them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::RunError;
use super::plan::Plan;
use crate::error::display_path;
use crate::report::schema::JudgeUsage;
use crate::report::spill::{SpillError, SpilledFile, SpilledRun, VerdictSpill};
use crate::report::steps::TraceSteps;
use crate::report::{Report, SkippedInput, VerdictBatch};

/// One input file of a run: its place in the whole input list, its run (a `baseline` argument) and
/// its size.
#[derive(Debug, Clone)]
pub(crate) struct InputFile {
    pub index: usize,
    pub run: usize,
    pub path: PathBuf,
    pub bytes: u64,
    /// Found by walking a folder (not named, nor matched by a pattern): a file there that holds no
    /// traces is skipped with an input warning instead of failing the run.
    pub walked: bool,
}

/// Tokens a judge used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    /// The judge's token counts as the JSON report prints them.
    pub(crate) fn reported(self) -> JudgeUsage {
        JudgeUsage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            total_tokens: self.prompt_tokens + self.completion_tokens,
        }
    }
}

/// What running the checks over some input files produced: one verdict batch per file.
pub(crate) struct Produced {
    pub files: Vec<InputFile>,
    /// One verdict batch per file; none when the run spilled its verdicts.
    pub batches: Vec<VerdictBatch>,
    /// The run's verdicts, when they were spilled to a temporary file instead of kept in memory.
    pub spilled: Option<SpilledRun>,
    /// What each file has to say besides its verdicts, absent for a file with nothing to say (most
    /// files of a large run: a run may read a million files).
    pub notes: Vec<Option<Box<FileNotes>>>,
    /// Tokens the judge used, when the run has one.
    pub judge_usage: Option<Usage>,
    /// Some file was read in a format whose trace ids are names (`Format::named_ids`): the outputs
    /// show them wider ([`crate::report::render::shown::IdColumn`]).
    pub named_ids: bool,
    /// `--unit session`: the ids of the conversations checked as units.
    pub sessions: Option<std::sync::Arc<crate::sessions::SessionIds>>,
    /// A shard of a session run: the places of the units it checked after every file, whose rows
    /// follow the files' (a last batch, or a last spilled file, of their own).
    pub tail: Option<super::TailPlaces>,
}

impl Produced {
    /// Keeps the files `keep` selects, with their rows and notes, and the units checked after every
    /// file: a shard of a session run reads every file but reports only the files of its share.
    pub(crate) fn keep_files(&mut self, keep: impl Fn(&InputFile) -> bool) {
        let kept: Vec<bool> = self.files.iter().map(&keep).collect();
        // What follows the files (the units after them) is kept.
        fn retain<T>(items: &mut Vec<T>, kept: &[bool]) {
            let mut at = 0;
            items.retain(|_| {
                at += 1;
                kept.get(at - 1).copied().unwrap_or(true)
            });
        }
        retain(&mut self.batches, &kept);
        if let Some(spilled) = &mut self.spilled {
            retain(&mut spilled.files, &kept);
        }
        retain(&mut self.notes, &kept);
        retain(&mut self.files, &kept);
    }
}

/// What one file of a run has to say besides its verdicts.
#[derive(Default)]
pub(crate) struct FileNotes {
    /// The steps kept of the file's failing traces (for the HTML report).
    pub failing_steps: Vec<TraceSteps>,
    /// The file's input warnings (the run's trace-identity warnings go with its last file).
    pub warnings: Vec<String>,
    /// Why the file was skipped, for a walked file that holds no traces.
    pub skipped: Option<String>,
    /// What `--skip-bad-input` left out of the file.
    pub skipped_input: SkippedInput,
}

impl FileNotes {
    /// The notes, or none when there is nothing in them.
    fn boxed(self) -> Option<Box<FileNotes>> {
        let empty = self.failing_steps.is_empty()
            && self.warnings.is_empty()
            && self.skipped.is_none()
            && self.skipped_input.is_none();
        (!empty).then(|| Box::new(self))
    }
}

impl Produced {
    /// The notes of the files that have any, in input order.
    pub(crate) fn notes(&self) -> impl Iterator<Item = &FileNotes> + Clone {
        self.notes.iter().flatten().map(|n| &**n)
    }

    /// The run's input warnings ([`input_warnings`]).
    pub(crate) fn input_warnings(&self) -> Vec<String> {
        input_warnings(
            self.notes().map(|n| &n.warnings),
            self.notes().map(|n| &n.skipped),
        )
    }
}

/// What reading the files gave, before [`super::acceptance`] accepts it.
pub(crate) struct FilesRead {
    /// The verdicts and what goes with them; the judge's usage is filled in once its run ends.
    pub produced: Produced,
    /// Why each file that could not be read failed, in input order.
    pub errors: Vec<String>,
    /// Warnings for stderr alone about files that were read (traces without content for a judge).
    pub notices: Vec<String>,
}

/// The warning, for a judged run, about a file whose traces give the judge no content to read.
pub(crate) fn no_content_warning(traces: usize, file: &str) -> String {
    format!(
        "{traces} trace(s) in {file} carry no content attributes; the judge sees structure only"
    )
}

/// A run's input warnings, from each file's warnings and skip reasons in input order: what the JSON
/// report's `input_warnings` lists.
pub(crate) fn input_warnings<'a>(
    warnings: impl IntoIterator<Item = &'a Vec<String>>,
    skipped: impl IntoIterator<Item = &'a Option<String>>,
) -> Vec<String> {
    let mut out: Vec<String> = warnings.into_iter().flatten().cloned().collect();
    let skipped: Vec<&str> = skipped.into_iter().flatten().map(String::as_str).collect();
    if !skipped.is_empty() {
        out.push(format!(
            "skipped {} file(s) in the folders given that hold no traces: {}",
            skipped.len(),
            skipped.join("; ")
        ));
    }
    out
}

/// Where a run's verdicts are spilled, and whether its rows are counted as they are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpillTo<'a> {
    /// The temporary directory (`TMPDIR` when `None`).
    pub dir: Option<&'a Path>,
    /// The outputs written from the spill count its rows (see [`SpilledRun::take_written_counts`]);
    /// a partial, written from it as it is, does not.
    pub count_rows: bool,
}

/// Reads every file and runs the checks; a file that cannot be read is noted and the others are still
/// tried. A run that keeps raw scenario keys keeps their digests instead ([`super::raw_keys`]). With
/// `spill`, the verdicts go to a temporary file as they are made ([`crate::report::spill`]) and
/// [`Produced::spilled`] says where each file's are.
pub(crate) fn produce(
    mut files: Vec<InputFile>,
    plan: &Plan,
    spill: Option<SpillTo<'_>>,
) -> Result<FilesRead, RunError> {
    // The paths are lent to the run and given back after it: each is held once.
    let paths: Vec<PathBuf> = files
        .iter_mut()
        .map(|f| std::mem::take(&mut f.path))
        .collect();
    let spill_error = |e: SpillError| RunError::Refused(e.to_string());
    // Raw scenario keys are digested after the run, batch by batch in memory: such a run keeps them.
    let spill = spill
        .filter(|_| !plan.settings.keep_raw_scenario)
        .map(|to| {
            let spill = VerdictSpill::new(&plan.settings.verdict_schema(), to.dir)?;
            Ok(if to.count_rows {
                spill.counting_rows()
            } else {
                spill
            })
        })
        .transpose()
        .map_err(spill_error)?;
    if let Some(bar) = &plan.progress {
        bar.start(&paths);
    }
    // One trace id is one trace across the run's files (see `super::identity`).
    let super::RunResults {
        files: outcomes,
        mut shared,
    } = super::check(&plan.settings, &paths, spill.as_ref());
    if let Some(bar) = &plan.progress {
        bar.clear();
    }
    let redaction = plan.settings.redaction;
    let settings = &plan.settings;
    // Traces without content only matter to a judge: the rules read the structure either way.
    let judged = settings.judge.is_some();
    // A verdict batch is about 1.2 kB: a spilled run, which keeps none, reserves no room for them.
    let mut batches = Vec::with_capacity(if spill.is_some() { 0 } else { files.len() });
    // The steps of the run's first failing traces, per file: a file keeps what is left of the run's
    // room, so a share keeps every step a run over all of it could show.
    let mut notes: Vec<Option<Box<FileNotes>>> = Vec::with_capacity(files.len());
    let mut spilled_files: Vec<SpilledFile> = Vec::new();
    let mut kept = 0;
    let mut named_ids = false;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let empty = || {
        VerdictBatch::try_new(arrow_array::RecordBatch::new_empty(
            settings.verdict_schema(),
        ))
        .expect("an empty verdict batch")
    };
    for ((outcome, input), path) in outcomes.into_iter().zip(&mut files).zip(paths) {
        input.path = path;
        match outcome {
            Ok(mut file) => {
                named_ids |= file.format.named_ids();
                if judged && file.without_content > 0 {
                    warnings.push(no_content_warning(
                        file.without_content,
                        &display_path(&input.path),
                    ));
                }
                let shown = display_path(&input.path);
                let spilled = file.spilled.take();
                let details = file.into_details();
                let skipped_input = SkippedInput {
                    files: 0,
                    lines: details.skipped_lines.len(),
                };
                let mut own = details.skipped_lines;
                own.extend(details.warnings);
                own.extend(details.unread_tools.warning(&shown, redaction));
                match spilled {
                    Some(spilled) => spilled_files.push(spilled),
                    None => batches.push(one_batch(settings, details.batches)),
                }
                let room = settings.failing_steps.saturating_sub(kept);
                let steps: Vec<TraceSteps> = details.failing_steps.into_iter().take(room).collect();
                kept += steps.len();
                notes.push(
                    FileNotes {
                        failing_steps: steps,
                        warnings: own,
                        skipped: None,
                        skipped_input,
                    }
                    .boxed(),
                );
            }
            Err(e) if (input.walked && e.is_not_traces()) || plan.skip_bad_input => {
                // A skipped file keeps its place, with no rows.
                let skipped = if input.walked && e.is_not_traces() {
                    FileNotes {
                        skipped: Some(e.short_reason()),
                        ..FileNotes::default()
                    }
                } else {
                    FileNotes {
                        warnings: vec![e.skip_warning()],
                        skipped_input: SkippedInput { files: 1, lines: 0 },
                        ..FileNotes::default()
                    }
                };
                notes.push(skipped.boxed());
                if spill.is_some() {
                    spilled_files.push(SpilledFile::default());
                } else {
                    batches.push(empty());
                }
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    if let Some(error) = shared.error.take() {
        errors.push(format!(
            "cannot keep the conversations' turns in {}: {error}",
            display_path(&std::env::temp_dir())
        ));
    }
    if judged && shared.without_content > 0 {
        warnings.push(format!(
            "{} of the traces merged across files carry no content attributes; the judge sees structure only",
            shared.without_content
        ));
    }
    // A shard of a session run keeps the units it checked after every file apart, with their places,
    // for `merge` to put back among the other shards' (their steps are not kept).
    let mut tail = shared.tail.take();
    if let Some((_, _, evidence)) = tail.as_mut().and_then(|t| t.first_unread.as_mut()) {
        *evidence = redaction.mask(evidence).into_owned();
    }
    if tail.is_some() {
        if let Some(last) = notes.last_mut() {
            let mut extra = last.take().map(|n| *n).unwrap_or_default();
            extra.warnings.append(&mut shared.warnings);
            *last = extra.boxed();
        }
        if spill.is_some() {
            if !shared.spilled.is_empty() {
                spilled_files.push(SpilledFile {
                    batches: std::mem::take(&mut shared.spilled),
                    dropped: None,
                });
            }
        } else if !shared.verdicts.is_empty() {
            batches.push(one_batch(settings, std::mem::take(&mut shared.verdicts)));
        }
    }
    // Traces merged across files are checked once, after every file; their rows, steps and warnings
    // go with the last file, where a run over all the files reports them.
    if let Some(last) = notes.last_mut().filter(|_| tail.is_none()) {
        let mut extra = last.take().map(|n| *n).unwrap_or_default();
        extra.warnings.append(&mut shared.warnings);
        extra
            .warnings
            .extend(shared.unread_tools.warning(super::MERGED_TRACES, redaction));
        if spill.is_some() {
            if !shared.spilled.is_empty() {
                // On their own, after every file: the files' read-back leaves these traces out.
                spilled_files.push(SpilledFile {
                    batches: std::mem::take(&mut shared.spilled),
                    dropped: None,
                });
            }
        } else if !shared.verdicts.is_empty() {
            let mut all = vec![batches.pop().expect("a last batch")];
            all.append(&mut shared.verdicts);
            batches.push(one_batch(settings, all));
        }
        let room = settings.failing_steps.saturating_sub(kept);
        extra
            .failing_steps
            .extend(shared.failing_steps.drain(..).take(room));
        *last = extra.boxed();
    }
    if settings.keep_raw_scenario {
        for batch in &mut batches {
            *batch = super::raw_keys::digest_raw_keys(batch)
                .map_err(|e| RunError::Refused(format!("verdict table: {e}")))?;
        }
    }
    let spilled = spill
        .map(|spill| {
            spill.finish().map(|verdicts| SpilledRun {
                verdicts,
                files: spilled_files,
            })
        })
        .transpose()
        .map_err(spill_error)?;
    Ok(FilesRead {
        produced: Produced {
            files,
            batches,
            spilled,
            notes,
            judge_usage: None,
            named_ids,
            sessions: settings
                .sessions
                .is_some()
                .then(|| std::sync::Arc::new(std::mem::take(&mut shared.sessions))),
            tail,
        },
        errors,
        notices: warnings,
    })
}

impl Produced {
    /// The report of what was produced.
    pub(crate) fn report(self, plan: &Plan) -> Report {
        let warnings = self.input_warnings();
        let mut skipped = SkippedInput::default();
        for file in self.notes() {
            skipped.add(file.skipped_input);
        }
        let mut report = plan.report(
            self.batches,
            self.notes
                .into_iter()
                .flatten()
                .flat_map(|n| n.failing_steps)
                .collect(),
            warnings,
            skipped,
        );
        report.sessions = self.sessions;
        report
    }
}

/// A file's verdict batches as one batch (a partial holds one per file).
fn one_batch(settings: &super::RunSettings, mut batches: Vec<VerdictBatch>) -> VerdictBatch {
    if batches.len() == 1 {
        return batches.pop().expect("one batch");
    }
    arrow_select::concat::concat_batches(
        &settings.verdict_schema(),
        batches.iter().map(VerdictBatch::record_batch),
    )
    .and_then(VerdictBatch::try_new)
    .expect("batches of one verdict schema concatenate")
}
