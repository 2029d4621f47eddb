//! Parquet tables of a run (`check --parquet DIR`) and of a baseline (`baseline --parquet DIR`), for
//! analysis in DuckDB, pandas or Spark. faultgate 0.4.1 has no such output.
//!
//! ## Wire format
//!
//! Uncompressed Parquet as the `parquet` crate's Arrow writer writes it (the tables of `check` with
//! their columns encoded side by side, [`columns`]), `created_by` fixed to `faultgate <version>`, no
//! timestamps: the bytes depend only on the results. Row groups hold [`ROW_GROUP_ROWS`] rows; the
//! tables of `check` are written a row group at a time (from the verdict spill when the run
//! spilled), with the bytes of each table written from one batch.
//!
//! `check --parquet DIR`:
//! - `verdicts.parquet`, one row per trace and active check, in report order: `trace_id` (utf8),
//!   `scenario` (utf8, the written key), `check` (utf8), `detected` (bool), `confidence` (float64,
//!   rounded to 4 places as in the JSON report), `reason` (utf8, redacted).
//! - `traces.parquet`, one row per trace: `trace_id`, `scenario`, `agent` (utf8, null when the trace
//!   names none), `agent_version` (utf8, `gen_ai.agent.version`, else the OTLP resource's `service.version`, null when the trace records none), `steps` (int64, tool steps), `user_steps` (int64, of those the steps of others than the agent, such as a simulated user's tools, which no rule judged), `recorded_outcome` (bool, the outcome the trace's own evaluation recorded, such as a benchmark's reward; null when none), `tokens` (int64), `latency_ms` (float64), `cost_usd`
//!   (float64), each measure null when not recorded, and `clean` (bool, no check fired). With
//!   `--pass-k`, when some scenario key has several traces (trials), three more columns: `scenario_trials` (int64, traces
//!   with this trace's key), `scenario_passes` (int64, those clean) and `scenario_pass_k` (float64,
//!   C(passes, K) / C(trials, K) for K the run's largest trial count, null for fewer trials).
//!   With `--by`, a column `slice` (utf8, the trace's slice, `model=gpt-5.4-mini`), so a query
//!   can group by it.
//!   With `--unit session`, one more column, last (after `slice` with `--by`): `session_id` (utf8, the conversation id of a row
//!   that is a conversation, null for a trace without one).
//!
//! - `budgets.parquet`, with `--band` and budgets, one row per budget in the order given: `budget`
//!   (utf8, `latency.p95 <= +20%`), `measure`, `statistic` (utf8, as band.json names them),
//!   `verdict` (utf8), `candidate`, `band`, `limit`, `p_value` (float64, null as in the JSON
//!   report's `gate.budgets`), `scenarios` and `scenarios_to_tell` (int64).
//!
//! `baseline --parquet DIR`:
//! - `clean_matrix.parquet`, long format, one row per run and distinct scenario key of that run, in
//!   run order then first-seen order: `run` (int64, 1-based argument position), `scenario` (utf8),
//!   `clean` (bool: every trace with that key is clean), `in_band` (bool: the key is one of the band's
//!   shared scenarios).
//! - `runs.parquet`, one row per run: `run`, `path` (display path: relative to the working directory
//!   or `$GITHUB_WORKSPACE`, else the file name), `traces` (int64, distinct ids), `scenarios` (int64,
//!   distinct keys), `clean_rate` (float64, the band's per-run rate over the shared scenarios).
//!
//! Reasons, scenario keys and agent names are the report's, already redacted.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

use crate::compat::fmt::round_half_even;
use crate::gate::passk::{Trials, all_pass_probability};
use crate::gate::{Band, RunSummary};
use crate::output::StagedDir;
use crate::report::pass::{Body, Sink};
use crate::report::{Report, Row, VerdictBatch, write_atomic};

mod columns;

use columns::ColumnsWriter;

/// File names written into the `--parquet` directory.
pub(crate) const VERDICTS_FILE: &str = "verdicts.parquet";
pub(crate) const TRACES_FILE: &str = "traces.parquet";
pub(crate) const MATRIX_FILE: &str = "clean_matrix.parquet";
pub(crate) const RUNS_FILE: &str = "runs.parquet";
pub(crate) const BUDGETS_FILE: &str = "budgets.parquet";

/// A Parquet output that could not be built or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ParquetOutputError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Parquet(#[from] ParquetError),
    #[error("{0}")]
    Arrow(#[from] ArrowError),
}

/// An error of the tables as the pass and the staged folder carry it: an I/O error as it was, any
/// other wrapped.
impl From<ParquetOutputError> for std::io::Error {
    fn from(e: ParquetOutputError) -> Self {
        match e {
            ParquetOutputError::Io(e) => e,
            e => std::io::Error::other(e),
        }
    }
}

fn field(name: &str, ty: DataType, nullable: bool) -> Field {
    Field::new(name, ty, nullable)
}

/// Rows per row group. The writer holds a row group until it is complete, and `traces.parquet`'s rows
/// wait in builders beside it: at the writer's default of 1,048,576 rows that was the largest part of
/// the memory of `check` with every output (about 110 MB at 400,000 traces). 131,072 rows (128 Ki,
/// about the row group DuckDB writes) keeps a few tens of MB.
pub(crate) const ROW_GROUP_ROWS: usize = 1 << 17;

fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_compression(Compression::UNCOMPRESSED)
        .set_created_by(format!("faultgate {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Encodes record batches (one row group each) as one Parquet file in memory.
fn encode(schema: SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, ParquetOutputError> {
    let mut buffer = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buffer, schema, Some(properties()))?;
    for batch in batches {
        writer.write(batch)?;
        writer.flush()?;
    }
    writer.close()?;
    Ok(buffer)
}

/// How the tables of `check --parquet` are cut: the writer's properties, and the rows handed to it
/// at a time.
struct Layout {
    properties: WriterProperties,
    /// The writer's row-group size: each table is cut every this many rows, as when it was written
    /// from one batch.
    row_group_rows: usize,
    /// Rows of `verdicts.parquet` handed to the writer at a time. The writer cuts what it is given
    /// into mini-batches (1024 rows) from the start of each call and decides page and dictionary
    /// limits after each; a piece that is a multiple of the mini-batch and divides the row-group size
    /// puts every cut where one call with the whole row group puts it, so the bytes are the same. The
    /// table's columns have no nulls, so nothing else depends on how the rows are handed over.
    verdict_piece_rows: usize,
}

impl Layout {
    fn new(properties: WriterProperties, verdict_piece_rows: usize) -> Layout {
        let row_group_rows = properties.max_row_group_row_count().unwrap_or(usize::MAX);
        debug_assert!(verdict_piece_rows.is_multiple_of(properties.write_batch_size()));
        debug_assert!(row_group_rows.is_multiple_of(verdict_piece_rows));
        Layout {
            properties,
            row_group_rows,
            verdict_piece_rows,
        }
    }

    /// The layout the tables are written with.
    fn check() -> Layout {
        Layout::new(properties(), 1 << 16)
    }
}

/// The schema of `verdicts.parquet`.
fn verdicts_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        field("trace_id", DataType::Utf8, false),
        field("scenario", DataType::Utf8, false),
        field("check", DataType::Utf8, false),
        field("detected", DataType::Boolean, false),
        field("confidence", DataType::Float64, false),
        field("reason", DataType::Utf8, false),
    ]))
}

/// The schema of `traces.parquet`, with the trial columns or without, then the `slice` column with
/// `--by` and the `session_id` column last under `--unit session`.
fn traces_schema(trials: bool, sliced: bool, sessions: bool) -> SchemaRef {
    let mut fields = vec![
        field("trace_id", DataType::Utf8, false),
        field("scenario", DataType::Utf8, false),
        field("agent", DataType::Utf8, true),
        field("agent_version", DataType::Utf8, true),
        field("steps", DataType::Int64, false),
        field("user_steps", DataType::Int64, false),
        field("recorded_outcome", DataType::Boolean, true),
        field("tokens", DataType::Int64, true),
        field("latency_ms", DataType::Float64, true),
        field("cost_usd", DataType::Float64, true),
        field("clean", DataType::Boolean, false),
    ];
    if trials {
        fields.push(field("scenario_trials", DataType::Int64, false));
        fields.push(field("scenario_passes", DataType::Int64, false));
        fields.push(field("scenario_pass_k", DataType::Float64, true));
    }
    if sliced {
        fields.push(field("slice", DataType::Utf8, false));
    }
    if sessions {
        fields.push(field("session_id", DataType::Utf8, true));
    }
    Arc::new(Schema::new(fields))
}

/// The rows of `verdicts.parquet` gathered for the next write.
struct VerdictRows {
    schema: SchemaRef,
    ids: StringBuilder,
    scenarios: StringBuilder,
    checks: StringBuilder,
    detected: BooleanBuilder,
    confidence: Float64Builder,
    reasons: StringBuilder,
    len: usize,
}

impl VerdictRows {
    fn new() -> VerdictRows {
        VerdictRows {
            schema: verdicts_schema(),
            ids: StringBuilder::new(),
            scenarios: StringBuilder::new(),
            checks: StringBuilder::new(),
            detected: BooleanBuilder::new(),
            confidence: Float64Builder::new(),
            reasons: StringBuilder::new(),
            len: 0,
        }
    }

    /// Appends one row per check of `row`, writing each full piece.
    fn push<W: std::io::Write + Send>(
        &mut self,
        piece_rows: usize,
        report: &Report,
        row: &Row<'_>,
        writer: &mut ColumnsWriter<W>,
    ) -> Result<(), ParquetOutputError> {
        for (check, v) in report.checks.iter().zip(row.verdicts()) {
            self.ids.append_value(row.trace_id());
            self.scenarios.append_value(row.scenario());
            self.checks.append_value(&check.name);
            self.detected.append_value(v.detected);
            self.confidence
                .append_value(round_half_even(v.confidence, 4));
            // A run writing this table keeps every reason (`Reasons::All`).
            self.reasons.append_value(v.reason.unwrap_or_default());
            self.len += 1;
            if self.len == piece_rows {
                self.write(writer)?;
            }
        }
        Ok(())
    }

    /// Hands the gathered rows to the writer.
    fn write<W: std::io::Write + Send>(
        &mut self,
        writer: &mut ColumnsWriter<W>,
    ) -> Result<(), ParquetOutputError> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.ids.finish()),
            Arc::new(self.scenarios.finish()),
            Arc::new(self.checks.finish()),
            Arc::new(self.detected.finish()),
            Arc::new(self.confidence.finish()),
            Arc::new(self.reasons.finish()),
        ];
        self.len = 0;
        writer.write(&RecordBatch::try_new(self.schema.clone(), columns)?)?;
        Ok(())
    }
}

/// Where the trial columns of `traces.parquet` (`--pass-k`) come from.
enum TrialColumns {
    /// No scenario key has several traces, or pass^k was not asked for: no trial columns.
    None,
    /// A run held whole: each row's cells, in run order.
    PerRow(Vec<(Trials, Option<f64>)>),
    /// A run written in a pass: the trials of each scenario key, counted in the pass that counts it.
    PerScenario(TrialTable),
}

impl TrialColumns {
    /// The cells of the `index`th row, `row`.
    fn of(&self, row: &Row<'_>, index: usize) -> Option<(Trials, Option<f64>)> {
        match self {
            TrialColumns::None => None,
            TrialColumns::PerRow(cells) => cells.get(index).copied(),
            TrialColumns::PerScenario(table) => Some(table.of(row.scenario())),
        }
    }
}

/// Each scenario key's trials (`--pass-k`), counted over the whole run, and the run's largest trial
/// count, as [`crate::gate::passk::trials_per_trace`] counts them: one entry a scenario.
struct TrialTable {
    trials: HashMap<String, Trials>,
    max_trials: u32,
}

/// Each scenario key's trials (`--pass-k`), counted a batch at a time in the pass that counts the
/// run, for the trial columns of `traces.parquet`.
#[derive(Default)]
pub(crate) struct TrialCounting {
    trials: HashMap<String, Trials>,
}

impl TrialCounting {
    /// Counts the trials of `batch`'s rows.
    pub(crate) fn add(&mut self, batch: &VerdictBatch) {
        for row in batch.rows() {
            let cell = match self.trials.get_mut(row.scenario()) {
                Some(cell) => cell,
                None => self
                    .trials
                    .entry(row.scenario().to_string())
                    .or_insert(Trials {
                        trials: 0,
                        passes: 0,
                    }),
            };
            cell.trials += 1;
            cell.passes += u32::from(!row.failed());
        }
    }

    /// The trial columns of the rows counted: none when no scenario key has several traces.
    pub(crate) fn finish(self) -> TraceTrials {
        let max_trials = self.trials.values().map(|t| t.trials).max().unwrap_or(0);
        TraceTrials(if max_trials >= 2 {
            TrialColumns::PerScenario(TrialTable {
                trials: self.trials,
                max_trials,
            })
        } else {
            TrialColumns::None
        })
    }
}

/// The trial columns of `traces.parquet` (`--pass-k`), or none.
pub(crate) struct TraceTrials(TrialColumns);

impl TraceTrials {
    /// No trial columns: pass^k was not asked for.
    pub(crate) fn none() -> TraceTrials {
        TraceTrials(TrialColumns::None)
    }
}

impl TrialTable {
    /// A trace's key's trials, and its pass^K when the key has the run's largest trial count.
    fn of(&self, key: &str) -> (Trials, Option<f64>) {
        let t = self.trials[key];
        let pass_k = (t.trials >= self.max_trials)
            .then(|| all_pass_probability(t.trials, t.passes, self.max_trials));
        (t, pass_k)
    }
}

/// The rows of `traces.parquet` gathered for the next row group. A row group is handed to the writer
/// whole: nullable columns are written in pieces whose size depends on where the nulls are, so only
/// the row group's rows in one call give the bytes the table written from one batch has.
struct TraceRows<'t> {
    schema: SchemaRef,
    trials: &'t TrialColumns,
    /// Rows pushed so far, over every row group.
    index: usize,
    ids: StringBuilder,
    scenarios: StringBuilder,
    agents: StringBuilder,
    agent_versions: StringBuilder,
    steps: Int64Builder,
    user_steps: Int64Builder,
    recorded_outcome: BooleanBuilder,
    tokens: Int64Builder,
    latency: Float64Builder,
    cost: Float64Builder,
    clean: BooleanBuilder,
    scenario_trials: Int64Builder,
    scenario_passes: Int64Builder,
    scenario_pass_k: Float64Builder,
    /// The traces' slices, with `--by`.
    slices: Option<StringBuilder>,
    /// `--unit session`: the conversations' ids, and the column naming each row's (null for a
    /// trace without one).
    sessions: Option<&'t crate::sessions::SessionIds>,
    session_ids: StringBuilder,
    len: usize,
}

impl<'t> TraceRows<'t> {
    fn new(
        trials: &'t TrialColumns,
        sliced: bool,
        sessions: Option<&'t crate::sessions::SessionIds>,
    ) -> TraceRows<'t> {
        TraceRows {
            schema: traces_schema(
                !matches!(trials, TrialColumns::None),
                sliced,
                sessions.is_some(),
            ),
            slices: sliced.then(StringBuilder::new),
            trials,
            sessions,
            session_ids: StringBuilder::new(),
            index: 0,
            ids: StringBuilder::new(),
            scenarios: StringBuilder::new(),
            agents: StringBuilder::new(),
            agent_versions: StringBuilder::new(),
            steps: Int64Builder::new(),
            user_steps: Int64Builder::new(),
            recorded_outcome: BooleanBuilder::new(),
            tokens: Int64Builder::new(),
            latency: Float64Builder::new(),
            cost: Float64Builder::new(),
            clean: BooleanBuilder::new(),
            scenario_trials: Int64Builder::new(),
            scenario_passes: Int64Builder::new(),
            scenario_pass_k: Float64Builder::new(),
            len: 0,
        }
    }

    /// Appends the row of one trace, writing each full row group.
    fn push<W: std::io::Write + Send>(
        &mut self,
        row_group_rows: usize,
        row: &Row<'_>,
        writer: &mut ColumnsWriter<W>,
    ) -> Result<(), ParquetOutputError> {
        let measures = row.measures();
        self.ids.append_value(row.trace_id());
        self.scenarios.append_value(row.scenario());
        self.agents.append_option(row.agent());
        self.agent_versions.append_option(row.agent_version());
        self.steps
            .append_value(i64::try_from(row.steps()).unwrap_or(i64::MAX));
        self.user_steps
            .append_value(i64::try_from(row.user_steps()).unwrap_or(i64::MAX));
        self.recorded_outcome.append_option(row.recorded_outcome());
        self.tokens.append_option(measures.tokens.map(|t| t as i64));
        self.latency.append_option(measures.latency_ms);
        self.cost.append_option(measures.cost_usd);
        self.clean.append_value(!row.failed());
        if let Some((t, pass_k)) = self.trials.of(row, self.index) {
            self.scenario_trials.append_value(i64::from(t.trials));
            self.scenario_passes.append_value(i64::from(t.passes));
            self.scenario_pass_k.append_option(pass_k);
        }
        if let Some(slices) = &mut self.slices {
            slices.append_value(row.slice().unwrap_or(crate::table::slices::NONE));
        }
        if let Some(sessions) = self.sessions {
            let id = row.trace_id();
            self.session_ids
                .append_option(sessions.contains(id).then_some(id));
        }
        self.index += 1;
        self.len += 1;
        if self.len == row_group_rows {
            self.write(writer)?;
        }
        Ok(())
    }

    /// Hands the gathered rows to the writer.
    fn write<W: std::io::Write + Send>(
        &mut self,
        writer: &mut ColumnsWriter<W>,
    ) -> Result<(), ParquetOutputError> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.ids.finish()),
            Arc::new(self.scenarios.finish()),
            Arc::new(self.agents.finish()),
            Arc::new(self.agent_versions.finish()),
            Arc::new(self.steps.finish()),
            Arc::new(self.user_steps.finish()),
            Arc::new(self.recorded_outcome.finish()),
            Arc::new(self.tokens.finish()),
            Arc::new(self.latency.finish()),
            Arc::new(self.cost.finish()),
            Arc::new(self.clean.finish()),
        ];
        if !matches!(self.trials, TrialColumns::None) {
            columns.push(Arc::new(self.scenario_trials.finish()));
            columns.push(Arc::new(self.scenario_passes.finish()));
            columns.push(Arc::new(self.scenario_pass_k.finish()));
        }
        if let Some(slices) = &mut self.slices {
            columns.push(Arc::new(slices.finish()));
        }
        if self.sessions.is_some() {
            columns.push(Arc::new(self.session_ids.finish()));
        }
        self.len = 0;
        writer.write(&RecordBatch::try_new(self.schema.clone(), columns)?)?;
        Ok(())
    }
}

/// Writes `verdicts.parquet` and `traces.parquet` of a run held whole into the folder `staged`; with
/// `trials` (`--pass-k`), `traces.parquet` gets the trial columns when some scenario has several
/// traces.
///
/// # Errors
///
/// A table that cannot be encoded or a file that cannot be written.
pub(crate) fn write_check(
    staged: &mut StagedDir,
    report: &Report,
    trials: bool,
    sliced: bool,
) -> Result<(), ParquetOutputError> {
    let keys: Vec<(&str, bool)> = report.rows().map(|r| (r.scenario(), !r.failed())).collect();
    let trials = match trials.then(|| crate::gate::passk::trials_per_trace(keys.iter().copied())) {
        Some(Some(cells)) => TrialColumns::PerRow(cells),
        _ => TrialColumns::None,
    };
    write_check_from(staged, report, &trials, sliced, &Layout::check(), |each| {
        report.batches.iter().try_for_each(each)
    })
}

/// `verdicts.parquet` and `traces.parquet` of a run whose trace ids are distinct, their rows handed
/// to the writers as the pass hands them on, each table into its own [`Body`] until it is copied into
/// place: the bytes [`write_check`] writes for the run held whole, with one row group of each table in
/// memory at most.
pub(crate) struct ParquetSink<'a> {
    report: &'a Report,
    layout: Layout,
    verdicts: ColumnsWriter<Body>,
    verdict_rows: VerdictRows,
    traces: ColumnsWriter<Body>,
    trace_rows: TraceRows<'a>,
}

impl<'a> ParquetSink<'a> {
    /// The sink of `report`'s tables, with `trials`' columns, and the slice column when `sliced`; the
    /// tables wait in unlinked files of `dir` (`TMPDIR` when `None`).
    ///
    /// # Errors
    ///
    /// A table's file cannot be created, or its writer started.
    pub(crate) fn new(
        report: &'a Report,
        trials: &'a TraceTrials,
        sliced: bool,
        dir: Option<&Path>,
    ) -> Result<Self, ParquetOutputError> {
        let layout = Layout::check();
        let trials = &trials.0;
        let verdicts = ColumnsWriter::try_new(
            Body::new(dir)?,
            verdicts_schema(),
            layout.properties.clone(),
        )?;
        let traces = ColumnsWriter::try_new(
            Body::new(dir)?,
            traces_schema(
                !matches!(trials, TrialColumns::None),
                sliced,
                report.sessions.is_some(),
            ),
            layout.properties.clone(),
        )?;
        Ok(ParquetSink {
            report,
            layout,
            verdicts,
            verdict_rows: VerdictRows::new(),
            traces,
            trace_rows: TraceRows::new(trials, sliced, report.sessions.as_deref()),
        })
    }

    /// Writes both tables into the folder `staged`.
    ///
    /// # Errors
    ///
    /// A table cannot be encoded or read back, or a file cannot be written.
    pub(crate) fn finish(self, staged: &mut StagedDir) -> Result<(), ParquetOutputError> {
        let ParquetSink {
            mut verdicts,
            mut verdict_rows,
            mut traces,
            mut trace_rows,
            ..
        } = self;
        if verdict_rows.len > 0 {
            verdict_rows.write(&mut verdicts)?;
        }
        let verdicts = verdicts.into_inner()?;
        staged.write_with(VERDICTS_FILE, |out| verdicts.copy_to(out))?;
        if trace_rows.len > 0 {
            trace_rows.write(&mut traces)?;
        }
        let traces = traces.into_inner()?;
        staged.write_with(TRACES_FILE, |out| traces.copy_to(out))?;
        Ok(())
    }
}

impl Sink for ParquetSink<'_> {
    fn take(&mut self, batch: &VerdictBatch) -> std::io::Result<()> {
        let ParquetSink {
            report,
            layout,
            verdicts,
            verdict_rows,
            traces,
            trace_rows,
        } = self;
        // The two tables are encoded side by side, as they are the pass's longest share of a batch.
        let (verdicts, traces) = rayon::join(
            || {
                batch.rows().try_for_each(|row| {
                    verdict_rows.push(layout.verdict_piece_rows, report, &row, verdicts)
                })
            },
            || {
                batch
                    .rows()
                    .try_for_each(|row| trace_rows.push(layout.row_group_rows, &row, traces))
            },
        );
        verdicts?;
        Ok(traces?)
    }
}

/// Writes both tables; `batches` calls its argument with every verdict batch in run order.
fn write_check_from(
    staged: &mut StagedDir,
    report: &Report,
    trials: &TrialColumns,
    sliced: bool,
    layout: &Layout,
    batches: impl Fn(&mut dyn FnMut(&VerdictBatch) -> std::io::Result<()>) -> std::io::Result<()>,
) -> Result<(), ParquetOutputError> {
    // The writers' errors travel through the batch callback as I/O errors and are unwrapped after.
    let into_io = std::io::Error::from;
    staged.write_with(VERDICTS_FILE, |out| {
        let mut writer = ColumnsWriter::try_new(out, verdicts_schema(), layout.properties.clone())
            .map_err(|e| into_io(e.into()))?;
        let mut rows = VerdictRows::new();
        batches(&mut |batch| {
            for row in batch.rows() {
                rows.push(layout.verdict_piece_rows, report, &row, &mut writer)
                    .map_err(into_io)?;
            }
            Ok(())
        })?;
        let left = rows.len;
        finish(writer, |w| rows.write(w), left).map_err(into_io)
    })?;
    staged.write_with(TRACES_FILE, |out| {
        let mut writer = ColumnsWriter::try_new(
            out,
            traces_schema(
                !matches!(trials, TrialColumns::None),
                sliced,
                report.sessions.is_some(),
            ),
            layout.properties.clone(),
        )
        .map_err(|e| into_io(e.into()))?;
        let mut rows = TraceRows::new(trials, sliced, report.sessions.as_deref());
        batches(&mut |batch| {
            for row in batch.rows() {
                rows.push(layout.row_group_rows, &row, &mut writer)
                    .map_err(into_io)?;
            }
            Ok(())
        })?;
        let left = rows.len;
        finish(writer, |w| rows.write(w), left).map_err(into_io)
    })?;
    Ok(())
}

/// Writes the rows left (`left` of them, through `write`) and closes the file.
fn finish<W: std::io::Write + Send>(
    mut writer: ColumnsWriter<W>,
    write: impl FnOnce(&mut ColumnsWriter<W>) -> Result<(), ParquetOutputError>,
    left: usize,
) -> Result<(), ParquetOutputError> {
    if left > 0 {
        write(&mut writer)?;
    }
    writer.flush()?;
    writer.close()?;
    Ok(())
}

/// `verdicts.parquet` as one record batch, as the table was built before it was written a row group
/// at a time: what the tests hold the streamed table to.
#[cfg(test)]
pub(crate) fn verdicts_batch(report: &Report) -> Result<RecordBatch, ArrowError> {
    let schema = Arc::new(Schema::new(vec![
        field("trace_id", DataType::Utf8, false),
        field("scenario", DataType::Utf8, false),
        field("check", DataType::Utf8, false),
        field("detected", DataType::Boolean, false),
        field("confidence", DataType::Float64, false),
        field("reason", DataType::Utf8, false),
    ]));
    let rows = report.rows().flat_map(|r| {
        report
            .checks
            .iter()
            .zip(r.verdicts())
            .map(move |(check, v)| (r, check, v))
    });
    let (mut ids, mut scenarios, mut checks, mut detected, mut confidence, mut reasons) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (r, check, v) in rows {
        ids.push(r.trace_id());
        scenarios.push(r.scenario());
        checks.push(check.name.as_str());
        detected.push(v.detected);
        confidence.push(round_half_even(v.confidence, 4));
        // A run writing this table keeps every reason (`Reasons::All`).
        reasons.push(v.reason.unwrap_or_default());
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(ids)),
        Arc::new(StringArray::from(scenarios)),
        Arc::new(StringArray::from(checks)),
        Arc::new(BooleanArray::from(detected)),
        Arc::new(Float64Array::from(confidence)),
        Arc::new(StringArray::from(reasons)),
    ];
    RecordBatch::try_new(schema, columns)
}

/// `traces.parquet` as one record batch, as the table was built before it was written a row group at
/// a time.
#[cfg(test)]
pub(crate) fn traces_batch(report: &Report) -> Result<RecordBatch, ArrowError> {
    let schema = Arc::new(Schema::new(vec![
        field("trace_id", DataType::Utf8, false),
        field("scenario", DataType::Utf8, false),
        field("agent", DataType::Utf8, true),
        field("agent_version", DataType::Utf8, true),
        field("steps", DataType::Int64, false),
        field("user_steps", DataType::Int64, false),
        field("recorded_outcome", DataType::Boolean, true),
        field("tokens", DataType::Int64, true),
        field("latency_ms", DataType::Float64, true),
        field("cost_usd", DataType::Float64, true),
        field("clean", DataType::Boolean, false),
    ]));
    let rows = || report.rows();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows().map(|r| r.trace_id()))),
        Arc::new(StringArray::from_iter_values(rows().map(|r| r.scenario()))),
        Arc::new(StringArray::from_iter(rows().map(|r| r.agent()))),
        Arc::new(StringArray::from_iter(rows().map(|r| r.agent_version()))),
        Arc::new(Int64Array::from_iter_values(
            rows().map(|r| i64::try_from(r.steps()).unwrap_or(i64::MAX)),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows().map(|r| i64::try_from(r.user_steps()).unwrap_or(i64::MAX)),
        )),
        Arc::new(BooleanArray::from_iter(
            rows().map(|r| r.recorded_outcome()),
        )),
        Arc::new(Int64Array::from_iter(
            rows().map(|r| r.measures().tokens.map(|t| t as i64)),
        )),
        Arc::new(Float64Array::from_iter(
            rows().map(|r| r.measures().latency_ms),
        )),
        Arc::new(Float64Array::from_iter(
            rows().map(|r| r.measures().cost_usd),
        )),
        Arc::new(BooleanArray::from_iter(rows().map(|r| Some(!r.failed())))),
    ];
    RecordBatch::try_new(schema, columns)
}

/// `traces` with the trial columns appended, when some scenario key has several traces.
#[cfg(test)]
fn with_trial_columns(traces: RecordBatch, report: &Report) -> Result<RecordBatch, ArrowError> {
    let keys: Vec<(&str, bool)> = report.rows().map(|r| (r.scenario(), !r.failed())).collect();
    let Some(trials) = crate::gate::passk::trials_per_trace(keys.iter().copied()) else {
        return Ok(traces);
    };
    let schema = traces.schema();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(field("scenario_trials", DataType::Int64, false));
    fields.push(field("scenario_passes", DataType::Int64, false));
    fields.push(field("scenario_pass_k", DataType::Float64, true));
    let mut columns: Vec<ArrayRef> = traces.columns().to_vec();
    columns.push(Arc::new(Int64Array::from_iter_values(
        trials.iter().map(|(t, _)| i64::from(t.trials)),
    )));
    columns.push(Arc::new(Int64Array::from_iter_values(
        trials.iter().map(|(t, _)| i64::from(t.passes)),
    )));
    columns.push(Arc::new(Float64Array::from_iter(
        trials.iter().map(|(_, p)| *p),
    )));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// One baseline run as the tables record it.
#[derive(Debug, Clone)]
struct RunRow {
    path: String,
    traces: usize,
    /// (key id, clean) per distinct key, in first-seen order.
    cells: Vec<(u32, bool)>,
}

/// Collects the per-run, per-scenario clean flags of a baseline, one run at a time.
///
/// Keys are interned, so a hundred runs of ten thousand scenarios hold ten thousand strings and a
/// million (id, flag) pairs, not a million strings.
#[derive(Debug, Default)]
pub(crate) struct BaselineTables {
    keys: Vec<String>,
    ids: HashMap<String, u32>,
    runs: Vec<RunRow>,
}

impl BaselineTables {
    /// An empty collector.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records one run; `path` is the run as the tables show it.
    pub(crate) fn add_run(&mut self, path: String, run: &RunSummary) {
        let tally = &run.scenarios;
        let mut cells = Vec::new();
        for (key, clean) in tally.clean_flags() {
            let id = match self.ids.get(key) {
                Some(&id) => id,
                None => {
                    let id = u32::try_from(self.keys.len()).unwrap_or(u32::MAX);
                    self.ids.insert(key.to_string(), id);
                    self.keys.push(key.to_string());
                    id
                }
            };
            cells.push((id, clean));
        }
        self.runs.push(RunRow {
            path,
            traces: run.trace_count,
            cells,
        });
    }

    /// `clean_matrix.parquet` as one record batch per run.
    pub(crate) fn matrix_batches(&self, band: &Band) -> Result<Vec<RecordBatch>, ArrowError> {
        let schema = Arc::new(Schema::new(vec![
            field("run", DataType::Int64, false),
            field("scenario", DataType::Utf8, false),
            field("clean", DataType::Boolean, false),
            field("in_band", DataType::Boolean, false),
        ]));
        let shared: HashSet<&str> = band.scenarios.iter().map(String::as_str).collect();
        let in_band: Vec<bool> = self
            .keys
            .iter()
            .map(|k| shared.contains(k.as_str()))
            .collect();
        self.runs
            .iter()
            .enumerate()
            .map(|(i, run)| {
                let n = run.cells.len();
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int64Array::from(vec![i as i64 + 1; n])),
                    Arc::new(StringArray::from_iter_values(
                        run.cells
                            .iter()
                            .map(|(id, _)| self.keys[*id as usize].as_str()),
                    )),
                    Arc::new(BooleanArray::from_iter(
                        run.cells.iter().map(|(_, clean)| Some(*clean)),
                    )),
                    Arc::new(BooleanArray::from_iter(
                        run.cells.iter().map(|(id, _)| Some(in_band[*id as usize])),
                    )),
                ];
                RecordBatch::try_new(schema.clone(), columns)
            })
            .collect()
    }

    /// `runs.parquet` as a record batch.
    pub(crate) fn runs_batch(&self, band: &Band) -> Result<RecordBatch, ArrowError> {
        let schema = Arc::new(Schema::new(vec![
            field("run", DataType::Int64, false),
            field("path", DataType::Utf8, false),
            field("traces", DataType::Int64, false),
            field("scenarios", DataType::Int64, false),
            field("clean_rate", DataType::Float64, true),
        ]));
        let runs = &self.runs;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(1..=runs.len() as i64)),
            Arc::new(StringArray::from_iter_values(
                runs.iter().map(|r| r.path.as_str()),
            )),
            Arc::new(Int64Array::from_iter_values(
                runs.iter().map(|r| r.traces as i64),
            )),
            Arc::new(Int64Array::from_iter_values(
                runs.iter().map(|r| r.cells.len() as i64),
            )),
            Arc::new(Float64Array::from_iter(
                (0..runs.len()).map(|i| band.per_run.get(i).copied()),
            )),
        ];
        RecordBatch::try_new(schema, columns)
    }

    /// Writes `clean_matrix.parquet` and `runs.parquet` into `dir`, creating it.
    ///
    /// # Errors
    ///
    /// A table that cannot be encoded or a file that cannot be written.
    pub(crate) fn write(&self, dir: &Path, band: &Band) -> Result<(), ParquetOutputError> {
        let matrix = self.matrix_batches(band)?;
        let runs = self.runs_batch(band)?;
        let matrix_bytes = match matrix.first() {
            Some(first) => encode(first.schema(), &matrix)?,
            None => return Err(ArrowError::InvalidArgumentError("no runs".into()).into()),
        };
        let runs_bytes = encode(runs.schema(), &[runs])?;
        std::fs::create_dir_all(dir)?;
        write_atomic(&dir.join(MATRIX_FILE), &matrix_bytes)?;
        write_atomic(&dir.join(RUNS_FILE), &runs_bytes)?;
        Ok(())
    }
}

/// Writes `budgets.parquet` into the folder `staged`: one row per budget, as the JSON report's
/// `gate.budgets` gives them.
///
/// # Errors
///
/// The table cannot be encoded or the file cannot be written.
pub(crate) fn write_budgets(
    staged: &mut StagedDir,
    budgets: &[crate::gate::BudgetOutcome],
) -> Result<(), ParquetOutputError> {
    let batch = budgets_batch(budgets)?;
    let bytes = encode(batch.schema(), &[batch])?;
    staged.write(BUDGETS_FILE, &bytes)?;
    Ok(())
}

fn budgets_batch(budgets: &[crate::gate::BudgetOutcome]) -> Result<RecordBatch, ArrowError> {
    let text = |name: &str| Field::new(name, DataType::Utf8, false);
    let float = |name: &str| Field::new(name, DataType::Float64, true);
    let schema = Arc::new(Schema::new(vec![
        text("budget"),
        text("measure"),
        text("statistic"),
        text("verdict"),
        float("candidate"),
        float("band"),
        float("limit"),
        float("p_value"),
        Field::new("scenarios", DataType::Int64, false),
        Field::new("scenarios_to_tell", DataType::Int64, true),
    ]));
    let strings = |f: &dyn Fn(&crate::gate::BudgetOutcome) -> String| -> ArrayRef {
        Arc::new(budgets.iter().map(|b| Some(f(b))).collect::<StringArray>())
    };
    let floats = |f: &dyn Fn(&crate::gate::BudgetOutcome) -> Option<f64>| -> ArrayRef {
        Arc::new(budgets.iter().map(f).collect::<Float64Array>())
    };
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let columns: Vec<ArrayRef> = vec![
        strings(&|b| super::gate_lines::budget_expression(&b.budget)),
        strings(&|b| crate::gate::DISTRIBUTIONS[b.budget.measure].to_string()),
        strings(&|b| crate::gate::STATISTICS[b.budget.statistic].to_string()),
        strings(&|b| b.verdict.as_str().to_string()),
        floats(&|b| b.candidate),
        floats(&|b| b.band),
        floats(&|b| b.limit),
        floats(&|b| b.p_value),
        Arc::new(
            budgets
                .iter()
                .map(|b| Some(count(b.scenarios)))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            budgets
                .iter()
                .map(|b| b.scenarios_to_tell.map(count))
                .collect::<Int64Array>(),
        ),
    ];
    RecordBatch::try_new(schema, columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Gating, Reasons, VerdictColumn};
    use crate::redact::Redaction;
    use crate::report::ReportCheck;
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};

    const CHECKS: [&str; 3] = ["abstention", "policy", "abstention"];

    /// Traces `from..to`: agents and measures sometimes absent, ten traces (trials) per scenario key
    /// but the last keys', reasons of many distinct values so dictionaries fill and fall back.
    fn batch(from: usize, to: usize) -> VerdictBatch {
        let mut builder = VerdictBatchBuilder::new(schema(&CHECKS), to - from);
        let mut columns: Vec<VerdictColumn> = CHECKS
            .iter()
            .map(|_| VerdictColumn::new(to - from, Reasons::All, Redaction::Off))
            .collect();
        for i in from..to {
            let id = format!("{i:032x}");
            let scenario = format!("s{}", i / 10 + i / 9000);
            builder.push_trace(&TraceFields {
                trace_id: &id,
                scenario: &scenario,
                agent: (i % 3 != 0).then_some("support"),
                agent_version: (i % 4 == 1).then_some("2.1.0"),
                steps: i % 5,
                measures: crate::report::Measures {
                    tokens: (i % 4 != 0).then_some(i as f64),
                    latency_ms: (i % 7 != 0).then_some(i as f64 / 3.0),
                    cost_usd: (i % 2 == 0).then_some(0.001),
                    ..Default::default()
                },
                ..TraceFields::default()
            });
            for (k, column) in columns.iter_mut().enumerate() {
                let reason = format!("reason {} of check {k}", i % 997);
                column.push((i + k) % 3 == 0, (i % 100) as f64 / 99.0, reason.as_str());
            }
        }
        builder.finish(columns).expect("verdict batch")
    }

    /// A run of `n` traces cut into batches of the sizes in `cuts` (then one with the rest).
    fn report(n: usize, cuts: &[usize]) -> Report {
        let mut batches = Vec::new();
        let mut at = 0;
        for &cut in cuts.iter().chain([&n]) {
            let end = (at + cut).min(n);
            if end > at {
                batches.push(batch(at, end));
            }
            at = end;
        }
        Report {
            checks: CHECKS
                .iter()
                .map(|c| ReportCheck::rule(c, Gating::CleanRate))
                .collect(),
            batches,
            ..Report::default()
        }
    }

    /// Both tables as they were written before: each from one batch, through one `write` call.
    fn whole_tables(report: &Report, trials: bool, properties: &WriterProperties) -> [Vec<u8>; 2] {
        let encode = |batch: RecordBatch| {
            let mut buffer = Vec::new();
            let mut writer =
                ArrowWriter::try_new(&mut buffer, batch.schema(), Some(properties.clone()))
                    .unwrap();
            writer.write(&batch).unwrap();
            writer.flush().unwrap();
            writer.close().unwrap();
            buffer
        };
        let mut traces = traces_batch(report).unwrap();
        if trials {
            traces = with_trial_columns(traces, report).unwrap();
        }
        [encode(verdicts_batch(report).unwrap()), encode(traces)]
    }

    /// Both tables as [`write_check_from`] writes them, a piece and a row group at a time, with the
    /// trial columns counted per scenario (as for a spilled run) or per row.
    fn streamed_tables(
        report: &Report,
        trials: bool,
        per_scenario: bool,
        layout: &Layout,
    ) -> [Vec<u8>; 2] {
        let batches = |each: &mut dyn FnMut(&VerdictBatch) -> std::io::Result<()>| {
            report.batches.iter().try_for_each(each)
        };
        let keys: Vec<(&str, bool)> = report.rows().map(|r| (r.scenario(), !r.failed())).collect();
        let columns = match (trials, per_scenario) {
            (false, _) => TrialColumns::None,
            (true, true) => {
                let mut counting = TrialCounting::default();
                report.batches.iter().for_each(|b| counting.add(b));
                counting.finish().0
            }
            (true, false) => crate::gate::passk::trials_per_trace(keys.iter().copied())
                .map_or(TrialColumns::None, TrialColumns::PerRow),
        };
        let dir = tempfile::tempdir().unwrap();
        let tables = dir.path().join("tables");
        let mut staged = StagedDir::new(&tables).unwrap();
        write_check_from(&mut staged, report, &columns, false, layout, batches).unwrap();
        staged.commit().unwrap();
        [VERDICTS_FILE, TRACES_FILE].map(|name| std::fs::read(tables.join(name)).unwrap())
    }

    #[test]
    fn tables_written_a_row_group_at_a_time_are_the_bytes_of_one_batch_whatever_the_batches() {
        // Small row groups, pages and dictionaries, so that a few thousand rows cross every limit
        // the writer cuts at.
        let properties = properties()
            .into_builder()
            .set_max_row_group_row_count(Some(4096))
            .set_data_page_size_limit(4096)
            .set_dictionary_page_size_limit(2048)
            .build();
        let layout = Layout::new(properties.clone(), 1024);
        for (n, cuts) in [
            (0, vec![]),
            (1, vec![]),
            (3000, vec![1, 7, 1000, 1999]),
            (9001, vec![4096, 1, 333, 2048, 5]),
        ] {
            let split = report(n, &cuts);
            let whole = report(n, &[]);
            for trials in [false, true] {
                let expected = whole_tables(&whole, trials, &properties);
                for per_scenario in [false, true] {
                    let got = streamed_tables(&split, trials, per_scenario, &layout);
                    assert!(
                        got == expected,
                        "{n} rows cut at {cuts:?}, trials {trials}, per scenario {per_scenario}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_tables_of_check_cross_a_verdict_piece_as_one_batch_writes_them() {
        // 70,000 verdict rows: more than one piece of the layout `check` writes with.
        let n = 23_334;
        let layout = Layout::check();
        assert!(n * CHECKS.len() > layout.verdict_piece_rows);
        let expected = whole_tables(&report(n, &[]), false, &properties());
        let got = streamed_tables(&report(n, &[10_000, 3]), false, true, &layout);
        assert!(got == expected);
    }
}
