//! One run over a set of trace files: read, build tables, run the checks, collect results.
//!
//! Files are processed a group at a time (in parallel within the group), and each file is read a batch
//! of traces at a time (`ingest::read_file`, batches built and checked in parallel); a batch's tables
//! are dropped as soon as its verdict batch is taken, so memory holds the verdicts, not the archive.
//! Within a batch the checks run as column passes over parts of the batch, in parallel; a judge, when
//! the run has one, is asked about the whole batch first (`crate::judge::Judge::verdicts`), and its
//! verdicts go to the judged checks of every part as data.
//!
//! A trace is its trace id within the run (`crate::identity`). Before any file is read, each file's
//! trace ids are listed from its index (`ingest::trace_ids`), so the traces several files hold are
//! known in advance: when their files are read, their parts are kept whole instead of being checked,
//! and once every file is read they are merged and checked once ([`merge_shared_traces`]).

use std::collections::HashSet;
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
}

impl RunSettings {
    /// The schema of this run's verdict batches.
    pub fn verdict_schema(&self) -> SchemaRef {
        let names: Vec<&str> = self.checks.iter().map(|c| c.name()).collect();
        verdicts::schema(&names)
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
    /// The file the results come from.
    pub path: PathBuf,
    /// One verdict batch per chunk of the file, in order.
    pub batches: Vec<VerdictBatch>,
    /// Traces with no prompt, answer, arguments or results.
    pub without_content: usize,
    /// Traces that show tool activity but yield no tool step.
    pub unread_tools: UnreadTools,
    /// The steps of the file's first failing traces, up to `settings.failing_steps`.
    pub failing_steps: Vec<TraceSteps>,
    /// The file's parts of the traces other files hold too, whole and unchecked, in file order (their
    /// verdicts come from [`merge_shared_traces`]).
    pub(crate) shared_parts: Vec<TraceRecord<'static>>,
    /// The JSON lines left out under `--skip-bad-input`, one input warning each.
    pub skipped_lines: Vec<String>,
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
        Some(format!(
            "{} trace(s) in {file} show tool activity but no tool step was read from them (trace {id}: {}); no check saw their tools",
            self.traces.len(),
            redaction.mask(evidence)
        ))
    }
}

/// Runs the checks over every trace of every file, in file order, except the traces several files
/// hold: each file keeps its parts of those whole, for [`merge_shared_traces`]. Errors are returned per
/// file so a caller can report all of them.
pub fn run_files(
    files: &[PathBuf],
    settings: &RunSettings,
) -> Vec<Result<FileResults, InputError>> {
    let schema = settings.verdict_schema();
    let parallel = rayon::current_num_threads().max(1) * 2;
    // Groups bound how many files' tables are alive at once. With a judge, files go one at a time: its
    // calls already run in parallel, and a fixed order keeps `--judge-max-calls` deterministic.
    let group = if settings.judge.is_some() {
        1
    } else {
        parallel
    };
    let (mut refused, shared) = index_files(files, settings, parallel);
    let options = ReadOptions {
        hold: (!shared.is_empty()).then(|| std::sync::Arc::new(shared)),
        ..read_options(settings)
    };
    let mut out = Vec::with_capacity(files.len());
    for (c, chunk) in files.chunks(group).enumerate() {
        let refused = &mut refused[c * group..c * group + chunk.len()];
        let part: Vec<Result<FileResults, InputError>> = chunk
            .par_iter()
            .zip(refused.par_iter_mut())
            .map(|(path, refusal)| match refusal.take() {
                // Its index already failed: it is not read again.
                Some(error) => {
                    if let Some(progress) = &options.progress {
                        progress.file_done(ingest::stream::len(path));
                    }
                    Err(error)
                }
                None => run_file(path, settings, &options, &schema),
            })
            .collect();
        out.extend(part);
    }
    out
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
    let mut ids = crate::identity::SharedIds::default();
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
            TableOptions {
                root_attributes: settings.needs_root_attributes(),
            },
        )
    }
}

/// Traces whose id more than one file of the run holds, merged by the rule of `crate::identity`.
#[derive(Default)]
pub struct SharedTraces {
    /// The merged traces' verdicts (none when no id is shared).
    pub verdicts: Option<VerdictBatch>,
    /// Merged traces that used tools but had none read.
    pub unread_tools: UnreadTools,
    /// The steps of the merged traces that failed, when an output shows them.
    pub failing_steps: Vec<TraceSteps>,
    /// Duplicate spans dropped, trace ids reused by different traces.
    pub warnings: Vec<String>,
}

/// Applies the trace-identity rule to a run's results: the parts of the traces several files hold,
/// which [`run_files`] kept whole when it read their files, are merged and checked once. Returns
/// nothing when no id is shared.
pub fn merge_shared_traces(
    files: &[PathBuf],
    results: &mut [Result<FileResults, InputError>],
    settings: &RunSettings,
) -> SharedTraces {
    let parts: Vec<(usize, TraceRecord<'static>)> = results
        .iter_mut()
        .enumerate()
        .filter_map(|(i, r)| r.as_mut().ok().map(|file| (i, file)))
        .flat_map(|(i, file)| {
            std::mem::take(&mut file.shared_parts)
                .into_iter()
                .map(move |part| (i, part))
        })
        .collect();
    if parts.is_empty() {
        return SharedTraces::default();
    }
    let merged = crate::identity::merge(parts, files);
    let options = read_options(settings);
    let mut builder = crate::table::TableBuilder::new(options.table);
    for trace in &merged.traces {
        builder.append(trace);
    }
    let batch = builder.finish();
    let schema = settings.verdict_schema();
    let cols = Columns::new(&batch);
    let verdicts = check_batch(&cols, settings, &schema);
    let failing_steps =
        steps::failing(&cols, &verdicts, settings.redaction, settings.failing_steps);
    SharedTraces {
        verdicts: Some(verdicts),
        unread_tools: UnreadTools::of_batch(&batch),
        failing_steps,
        warnings: merged.warnings(),
    }
}

fn run_file(
    path: &Path,
    settings: &RunSettings,
    options: &ReadOptions,
    schema: &SchemaRef,
) -> Result<FileResults, InputError> {
    let mut batches = Vec::new();
    let mut without_content = 0;
    let mut unread_tools = UnreadTools::default();
    let mut failing_steps = Vec::new();
    // Each batch's tables live only while its checks run; what is kept is its verdict batch (and the
    // steps of failing traces, when an output shows them).
    let each = |batch: TraceBatch| {
        let cols = Columns::new(&batch);
        let verdicts = check_batch(&cols, settings, schema);
        let steps = steps::failing(&cols, &verdicts, settings.redaction, settings.failing_steps);
        (
            cols.has_content.false_count(),
            UnreadTools::of_batch(&batch),
            verdicts,
            steps,
        )
    };
    let read = ingest::read_file(path, options, &each, &mut |(
        empty,
        unread,
        verdicts,
        steps,
    )| {
        without_content += empty;
        unread_tools.add(unread);
        batches.push(verdicts);
        let room = settings.failing_steps.saturating_sub(failing_steps.len());
        failing_steps.extend(steps.into_iter().take(room));
        Ok(())
    })?;
    if read.traces == 0 {
        return Err(InputError::NoTraces(path.to_path_buf()));
    }
    // A part of a shared trace counts where it was read, as a trace of its file.
    without_content += read
        .held
        .iter()
        .filter(|part| !crate::table::has_content(part))
        .count();
    Ok(FileResults {
        path: path.to_path_buf(),
        batches,
        without_content,
        unread_tools,
        failing_steps,
        shared_parts: read.held,
        skipped_lines: read.skipped_lines,
    })
}

/// Runs the active checks over every trace of a batch, keeping trace order.
pub fn run_batch(batch: &TraceBatch, settings: &RunSettings) -> VerdictBatch {
    check_batch(&Columns::new(batch), settings, &settings.verdict_schema())
}

/// Asks the run's judge, if any, about the whole batch; then cuts the batch into parts, runs every
/// check as a pass over each part in parallel, and joins the parts' verdicts in order, so the result
/// does not depend on the number of threads.
fn check_batch(cols: &Columns<'_>, settings: &RunSettings, schema: &SchemaRef) -> VerdictBatch {
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
            check_part(&cols.part(range), &cx, settings, schema)
        })
        .collect();
    match parts.len() {
        0 => check_part(cols, &cx, settings, schema),
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

/// The verdict batch of one part: trace fields (scenario key and agent masked), then one column per
/// check.
fn check_part(
    cols: &Columns<'_>,
    cx: &CheckContext<'_>,
    settings: &RunSettings,
    schema: &SchemaRef,
) -> VerdictBatch {
    let redaction = settings.redaction;
    let mut builder = VerdictBatchBuilder::new(schema.clone(), cols.len());
    for t in cols.traces() {
        let raw_scenario = cols.scenario.value(t);
        let count = |a: &Int64Array| a.is_valid(t).then(|| a.value(t) as f64);
        let tokens = match (count(cols.input_tokens), count(cols.output_tokens)) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        let measure = |a: &Float64Array| a.is_valid(t).then(|| a.value(t));
        let agent = opt(cols.agent, t).map(|a| redaction.mask(a));
        builder.push_trace(&TraceFields {
            trace_id: cols.trace_id.value(t),
            scenario: &redaction.scenario_key(raw_scenario),
            raw_scenario: settings.keep_raw_scenario.then_some(raw_scenario),
            agent: agent.as_deref(),
            steps: cols.step_rows(t).len(),
            measures: Measures {
                tokens,
                latency_ms: measure(cols.latency_ms),
                cost_usd: measure(cols.cost_usd),
            },
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
    // A check that pushes other than one verdict per trace is a bug, not bad input.
    builder
        .finish(columns)
        .expect("each check pushes one verdict per trace")
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
    fn traces_split_across_files_are_merged_as_the_files_are_read_each_trace_decoded_once() {
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
        let shared = merge_shared_traces(&files, &mut results, &settings);

        let kept: Vec<Vec<String>> = results
            .iter()
            .map(|r| ids(&r.as_ref().unwrap().batches))
            .collect();
        assert_eq!(kept, [vec!["t1"], vec!["t3"], vec![], vec![]]);
        let merged = shared.verdicts.expect("traces are shared");
        assert_eq!(ids(std::slice::from_ref(&merged)), ["t2", "t-lf-1"]);
        assert_eq!(merged.row(0).steps(), 1, "t2's tool span came from b.json");
        assert_eq!(merged.row(1).steps(), 2, "the vendor trace counted once");
        assert_eq!(shared.warnings.len(), 1);
        assert!(
            shared.warnings[0].starts_with("4 duplicate span(s) dropped"),
            "{}",
            shared.warnings[0]
        );
        // Each file is opened twice (its trace index, then its read) and each trace decoded once; a
        // format read whole when opened (the vendor export) is decoded by each opening.
        for (file, traces) in [(&a, 2), (&b, 2), (&c, 1), (&d, 1)] {
            assert_eq!(
                reads::of(file),
                Reads {
                    opened: 2,
                    decoded: traces
                },
                "{}",
                file.display()
            );
        }
        // One file: nothing to share, so no index is read first.
        let alone = dir.path().join("alone.json");
        std::fs::copy(&a, &alone).unwrap();
        let results = run_files(std::slice::from_ref(&alone), &settings);
        assert_eq!(ids(&results[0].as_ref().unwrap().batches), ["t1", "t2"]);
        assert_eq!(
            reads::of(&alone),
            Reads {
                opened: 1,
                decoded: 2
            }
        );
    }
}
