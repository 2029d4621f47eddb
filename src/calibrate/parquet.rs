//! Calibration tables as Parquet, for drill-down in DuckDB or pandas.
//!
//! Reads only a [`CalibrationReport`]. Two files go into the directory given (created if needed):
//!
//! ## Wire format
//!
//! `calibration_checks.parquet`, one row per check and scored set:
//! `check` utf8, `subset` utf8 (`all`, or the held-out split's name), `n`, `positives`, `negatives`,
//! `tp`, `fp`, `tn`, `fn`, `unlabelled` uint64, `tpr`, `tpr_low`, `tpr_high`, `tnr`, `tnr_low`,
//! `tnr_high`, `precision`, `kappa` float64 (null when undefined), `kappa_undefined` utf8 (null, or why).
//!
//! `calibration_verdicts.parquet`, one row per (trace, check) verdict in input order:
//! `trace_id`, `scenario`, `check` utf8, `detected` bool, `label` bool (null when unlabelled),
//! `label_key` utf8 (the trace id or scenario key the label was found under), `split` utf8 (nullable).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;

use super::{CalibrationReport, CheckMetrics};
use crate::error::display_path;

/// File name of the per-check table.
pub(crate) const CHECKS_FILE: &str = "calibration_checks.parquet";
/// File name of the per-verdict table.
pub(crate) const VERDICTS_FILE: &str = "calibration_verdicts.parquet";
/// `subset` value of the rows over every verdict.
pub(crate) const SUBSET_ALL: &str = "all";

/// A Parquet table that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write output: {}: {message}", display_path(.path))]
pub struct WriteError {
    pub path: PathBuf,
    pub message: String,
}

/// Writes both tables into `dir` and returns their paths (checks, verdicts).
///
/// # Errors
/// The directory or a file cannot be created or written.
pub(crate) fn write_parquet(
    report: &CalibrationReport,
    dir: &Path,
) -> Result<[PathBuf; 2], WriteError> {
    std::fs::create_dir_all(dir).map_err(|e| WriteError {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let checks = dir.join(CHECKS_FILE);
    let verdicts = dir.join(VERDICTS_FILE);
    write_batch(&checks, checks_batch(report))?;
    write_batch(&verdicts, verdicts_batch(report))?;
    Ok([checks, verdicts])
}

fn write_batch(path: &Path, batch: Result<RecordBatch, String>) -> Result<(), WriteError> {
    let fail = |message: String| WriteError {
        path: path.to_path_buf(),
        message,
    };
    let batch = batch.map_err(fail)?;
    let file = File::create(path).map_err(|e| fail(e.to_string()))?;
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), None).map_err(|e| fail(e.to_string()))?;
    writer.write(&batch).map_err(|e| fail(e.to_string()))?;
    writer.close().map_err(|e| fail(e.to_string()))?;
    Ok(())
}

/// (check, subset, metrics) of one row of the per-check table.
type ScoredSet<'r> = (&'r str, &'r str, &'r CheckMetrics);

/// The per-check table as one batch.
///
/// # Errors
/// Only if the columns disagree with the schema, which would be a bug here.
pub(crate) fn checks_batch(report: &CalibrationReport) -> Result<RecordBatch, String> {
    let mut sets: Vec<ScoredSet> = Vec::new();
    for row in &report.checks {
        sets.push((&row.check, SUBSET_ALL, &row.all));
    }
    if let Some(split) = &report.split {
        for row in &report.checks {
            if let Some(held_out) = &row.held_out {
                sets.push((&row.check, split, held_out));
            }
        }
    }
    let text = |f: &dyn Fn(&ScoredSet) -> Option<String>| -> ArrayRef {
        Arc::new(StringArray::from(sets.iter().map(f).collect::<Vec<_>>()))
    };
    let count = |f: &dyn Fn(&CheckMetrics) -> u64| -> ArrayRef {
        Arc::new(UInt64Array::from(
            sets.iter().map(|s| f(s.2)).collect::<Vec<_>>(),
        ))
    };
    let float = |f: &dyn Fn(&CheckMetrics) -> Option<f64>| -> ArrayRef {
        Arc::new(Float64Array::from(
            sets.iter().map(|s| f(s.2)).collect::<Vec<_>>(),
        ))
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("check", text(&|s| Some(s.0.to_string()))),
        ("subset", text(&|s| Some(s.1.to_string()))),
        ("n", count(&|m| m.confusion.total())),
        ("positives", count(&|m| m.confusion.positives())),
        ("negatives", count(&|m| m.confusion.negatives())),
        ("tp", count(&|m| m.confusion.tp)),
        ("fp", count(&|m| m.confusion.fp)),
        ("tn", count(&|m| m.confusion.tn)),
        ("fn", count(&|m| m.confusion.fn_)),
        ("unlabelled", count(&|m| m.unlabelled)),
        ("tpr", float(&|m| m.confusion.tpr().map(|e| e.value))),
        ("tpr_low", float(&|m| m.confusion.tpr().map(|e| e.low))),
        ("tpr_high", float(&|m| m.confusion.tpr().map(|e| e.high))),
        ("tnr", float(&|m| m.confusion.tnr().map(|e| e.value))),
        ("tnr_low", float(&|m| m.confusion.tnr().map(|e| e.low))),
        ("tnr_high", float(&|m| m.confusion.tnr().map(|e| e.high))),
        ("precision", float(&|m| m.confusion.precision())),
        ("kappa", float(&|m| m.confusion.kappa().ok())),
        (
            "kappa_undefined",
            text(&|s| s.2.confusion.kappa().err().map(|w| w.to_string())),
        ),
    ];
    batch(columns)
}

/// The per-verdict table as one batch.
///
/// # Errors
/// Only if the columns disagree with the schema, which would be a bug here.
pub(crate) fn verdicts_batch(report: &CalibrationReport) -> Result<RecordBatch, String> {
    let rows = &report.rows;
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "trace_id",
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| &r.trace_id),
            )),
        ),
        (
            "scenario",
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| &r.scenario),
            )),
        ),
        (
            "check",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.check))),
        ),
        (
            "detected",
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.detected).collect::<Vec<_>>(),
            )),
        ),
        (
            "label",
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.label).collect::<Vec<_>>(),
            )),
        ),
        (
            "label_key",
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r.label_key.as_deref()),
            )),
        ),
        (
            "split",
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r.split.as_deref()),
            )),
        ),
    ];
    batch(columns)
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> Result<RecordBatch, String> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, array)| {
            let nullable = array.null_count() > 0 || !is_count(array.data_type());
            Field::new(*name, array.data_type().clone(), nullable)
        })
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|e| e.to_string())
}

/// Counts are never null; every other column may be, so one schema fits every report.
fn is_count(data_type: &DataType) -> bool {
    matches!(data_type, DataType::UInt64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{Calibration, SplitFilter, labels::parse_labels};
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn report() -> CalibrationReport {
        let labels = "key,check,label,split\nt1,loop,1,test\nt2,loop,0,\n";
        let mut c = Calibration::new(parse_labels(Path::new("l.csv"), labels).unwrap());
        c.split(Some(SplitFilter::parse("test").unwrap()));
        c.add_verdict("t1", "s1", "loop", true);
        c.add_verdict("t2", "s2", "loop", true);
        c.add_verdict("t3", "s3", "loop", false);
        c.finish()
    }

    #[test]
    fn checks_table_has_a_row_per_check_and_subset() {
        let batch = checks_batch(&report()).unwrap();
        assert_eq!(batch.num_rows(), 2);
        let subset = batch.column_by_name("subset").unwrap();
        let subset = subset.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((subset.value(0), subset.value(1)), ("all", "test"));
        let kappa = batch.column_by_name("kappa").unwrap();
        // all: one class each side -> κ 0 (check always fires); test: one positive only -> null.
        assert!(kappa.is_valid(0) && kappa.is_null(1));
    }

    #[test]
    fn parquet_files_round_trip() {
        let dir = std::env::temp_dir().join(format!("faultgate-calibrate-{}", std::process::id()));
        let [checks, verdicts] = write_parquet(&report(), &dir).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&verdicts).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 3);
        let label = batches[0].column_by_name("label").unwrap();
        assert!(label.is_valid(0) && label.is_null(2));
        assert!(checks.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
