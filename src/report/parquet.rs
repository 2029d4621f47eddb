//! Parquet tables of a run (`check --parquet DIR`) and of a baseline (`baseline --parquet DIR`), for
//! analysis in DuckDB, pandas or Spark. faultgate 0.4.1 has no such output.
//!
//! ## Wire format
//!
//! Uncompressed Parquet written by the `parquet` crate's Arrow writer, `created_by` fixed to
//! `faultgate <version>`, no timestamps: the bytes depend only on the results.
//!
//! `check --parquet DIR`:
//! - `verdicts.parquet`, one row per trace and active check, in report order: `trace_id` (utf8),
//!   `scenario` (utf8, the written key), `check` (utf8), `detected` (bool), `confidence` (float64,
//!   rounded to 4 places as in the JSON report), `reason` (utf8, redacted).
//! - `traces.parquet`, one row per trace: `trace_id`, `scenario`, `agent` (utf8, null when the trace
//!   names none), `agent_version` (utf8, `gen_ai.agent.version`, null when the trace records none), `steps` (int64, tool steps), `tokens` (int64), `latency_ms` (float64), `cost_usd`
//!   (float64), each measure null when not recorded, and `clean` (bool, no check fired). With
//!   `--pass-k`, when some scenario key has several traces (trials), three more columns: `scenario_trials` (int64, traces
//!   with this trace's key), `scenario_passes` (int64, those clean) and `scenario_pass_k` (float64,
//!   C(passes, K) / C(trials, K) for K the run's largest trial count, null for fewer trials).
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

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

use super::{Report, write_atomic};
use crate::compat::fmt::round_half_even;
use crate::gate::{Band, RunSummary};

/// File names written into the `--parquet` directory.
pub(crate) const VERDICTS_FILE: &str = "verdicts.parquet";
pub(crate) const TRACES_FILE: &str = "traces.parquet";
pub(crate) const MATRIX_FILE: &str = "clean_matrix.parquet";
pub(crate) const RUNS_FILE: &str = "runs.parquet";

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

fn field(name: &str, ty: DataType, nullable: bool) -> Field {
    Field::new(name, ty, nullable)
}

fn properties() -> WriterProperties {
    WriterProperties::builder()
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

/// `verdicts.parquet` as a record batch.
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

/// `traces.parquet` as a record batch.
pub(crate) fn traces_batch(report: &Report) -> Result<RecordBatch, ArrowError> {
    let schema = Arc::new(Schema::new(vec![
        field("trace_id", DataType::Utf8, false),
        field("scenario", DataType::Utf8, false),
        field("agent", DataType::Utf8, true),
        field("agent_version", DataType::Utf8, true),
        field("steps", DataType::Int64, false),
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

/// Writes `verdicts.parquet` and `traces.parquet` into `dir`, creating it; with `trials` (`--pass-k`),
/// `traces.parquet` gets the trial columns when some scenario has several traces.
///
/// # Errors
///
/// A table that cannot be encoded or a file that cannot be written.
pub(crate) fn write_check(
    dir: &Path,
    report: &Report,
    trials: bool,
) -> Result<(), ParquetOutputError> {
    let verdicts = verdicts_batch(report)?;
    let mut traces = traces_batch(report)?;
    if trials {
        traces = with_trial_columns(traces, report)?;
    }
    let verdict_bytes = encode(verdicts.schema(), &[verdicts])?;
    let trace_bytes = encode(traces.schema(), &[traces])?;
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join(VERDICTS_FILE), &verdict_bytes)?;
    write_atomic(&dir.join(TRACES_FILE), &trace_bytes)?;
    Ok(())
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
