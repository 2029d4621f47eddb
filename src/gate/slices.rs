//! Slices (`--by KEY`): every rate of a run broken down by slice, the band's per-slice clean rates
//! and the gate's verdict on each slice.
//!
//! A [`SliceTally`] counts a run's verdict rows by their `slice` column into a [`SliceTable`] for the
//! outputs and the band. A slice keeps a fixed handful of counts whatever its number of traces (and
//! its traces' measures only when budgets ask for them), and a run keeps at most [`MAX_SLICES`]
//! slices: the traces of the values met after those are counted together as [`OTHER`]. Slices are
//! met in row order, which is input order whatever the thread count, so the table is the same at any
//! thread count and after a `merge`.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::MeasureValues;
use super::Verdict;
use super::measures::{MEASURE_COUNT, MeasureSet};

/// The most slices a run keeps apart; the traces of later values are counted as [`OTHER`].
pub const MAX_SLICES: usize = 32;

/// The slice that gathers the values past [`MAX_SLICES`].
pub const OTHER: &str = "other";

/// The fewest traces a slice needs, in the run and in every baseline run, for the gate to judge it.
pub const MIN_SLICE_TRACES: u64 = 10;

/// One slice's counts.
#[derive(Debug, Clone, Default, PartialEq)]
struct SliceCounts {
    traces: u64,
    clean: u64,
    fired: Vec<u64>,
    /// The measures of the slice's traces, kept only when budgets ask for them: exact up to
    /// [`SLICE_EXACT_TRACES`] traces, sketched past that, so that a slice's memory is bounded.
    values: Option<MeasureValues>,
}

/// The traces a slice keeps every measure of (about 2 MB): past it, its percentiles come from a
/// sketch, as a run's do past [`crate::gate::EXACT_TRACES`]. With at most [`MAX_SLICES`] slices and
/// `other`, the slices' measures stay under 70 MB whatever the run's size.
pub const SLICE_EXACT_TRACES: usize = 1 << 15;

impl SliceCounts {
    fn new(checks: usize, measures: MeasureSet) -> Self {
        SliceCounts {
            traces: 0,
            clean: 0,
            fired: vec![0; checks],
            values: (!measures.is_empty())
                .then(|| MeasureValues::with_exact_limit(SLICE_EXACT_TRACES).keeping(measures)),
        }
    }

    fn add(&mut self, clean: bool, fired: &[bool], measures: [Option<f64>; MEASURE_COUNT]) {
        self.traces += 1;
        self.clean += u64::from(clean);
        for (count, &f) in self.fired.iter_mut().zip(fired) {
            *count += u64::from(f);
        }
        if let Some(values) = &mut self.values {
            // The bootstrap never draws from a slice: each trace stands as its own scenario, so
            // that the sample past the exact size is of traces.
            values.add(usize::try_from(self.traces).unwrap_or(usize::MAX), measures);
        }
    }

    fn row(self, value: String) -> SliceRow {
        let statistics = self
            .values
            .as_ref()
            .map(|values| values.statistics().to_vec());
        SliceRow {
            value,
            traces: self.traces,
            clean: self.clean,
            fired: self.fired,
            statistics,
        }
    }
}

/// Counts a run's rows by slice, in row order.
#[derive(Debug, Clone)]
pub struct SliceTally {
    checks: usize,
    measures: MeasureSet,
    slices: IndexMap<Box<str>, SliceCounts>,
    other: Option<SliceCounts>,
}

impl SliceTally {
    /// An empty tally of a run with `checks` active checks; each slice keeps its traces' values of
    /// `measures` (those the budgets name).
    pub fn new(checks: usize, measures: MeasureSet) -> Self {
        SliceTally {
            checks,
            measures,
            slices: IndexMap::new(),
            other: None,
        }
    }

    /// Counts the next trace: its slice, whether it is clean for the gate, which checks fired on it
    /// and its measures (latency, tokens, cost, steps).
    pub fn add(
        &mut self,
        slice: &str,
        clean: bool,
        fired: &[bool],
        measures: [Option<f64>; MEASURE_COUNT],
    ) {
        let (checks, with_values) = (self.checks, self.measures);
        let full = self.slices.len() >= MAX_SLICES;
        let counts = if let Some(index) = self.slices.get_index_of(slice) {
            &mut self.slices[index]
        } else if !full {
            self.slices
                .entry(slice.into())
                .or_insert_with(|| SliceCounts::new(checks, with_values))
        } else {
            self.other
                .get_or_insert_with(|| SliceCounts::new(checks, with_values))
        };
        counts.add(clean, fired, measures);
    }

    /// The slices, sorted by value, [`OTHER`] last.
    pub fn finish(self) -> SliceTable {
        let mut rows: Vec<SliceRow> = self
            .slices
            .into_iter()
            .map(|(value, counts)| counts.row(value.into()))
            .collect();
        rows.sort_by(|a, b| a.value.cmp(&b.value));
        let other = self.other.map(|counts| counts.row(OTHER.to_string()));
        SliceTable {
            by: Vec::new(),
            rows,
            other,
        }
    }
}

/// One slice of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceRow {
    /// The slice, `model=gpt-5.4-mini` (or [`OTHER`]).
    pub value: String,
    /// Its traces.
    pub traces: u64,
    /// Those no gated check fired on.
    pub clean: u64,
    /// Per active check, in selection order, the traces it fired on.
    pub fired: Vec<u64>,
    /// Per measure of [`crate::gate::DISTRIBUTIONS`], its statistics (mean, p50, p90, p95, p99) over
    /// the slice's traces; `None` without budgets, and per measure when no trace recorded it.
    pub statistics: Option<Vec<Option<[f64; 5]>>>,
}

impl SliceRow {
    /// The share of the slice's traces that are clean.
    pub fn clean_rate(&self) -> f64 {
        if self.traces == 0 {
            0.0
        } else {
            self.clean as f64 / self.traces as f64
        }
    }
}

/// A run's slices.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceTable {
    /// The `--by` keys (empty until the caller names them).
    pub by: Vec<String>,
    /// The slices kept apart, sorted by value.
    pub rows: Vec<SliceRow>,
    /// The traces of the values past [`MAX_SLICES`], when there were any.
    pub other: Option<SliceRow>,
}

impl SliceTable {
    /// Every slice, [`OTHER`] last.
    pub fn all(&self) -> impl Iterator<Item = &SliceRow> {
        self.rows.iter().chain(&self.other)
    }
}

/// One baseline run's clean rate and traces in a slice; `None` for a run without traces in it.
pub type BandSliceRun = Option<(f64, u64)>;

/// A band's slices (band.json's `slices`): per slice, each baseline run's clean rate and traces.
#[derive(Debug, Clone, PartialEq)]
pub struct BandSlices {
    /// The `--by` keys the band was built with.
    pub by: Vec<String>,
    /// Per slice, sorted by value: per baseline run, its clean rate and its traces (`None` for a run
    /// without traces in the slice).
    pub slices: Vec<(String, Vec<BandSliceRun>)>,
}

impl BandSlices {
    /// The band's slices from each baseline run's table, in run order.
    pub fn of(by: Vec<String>, runs: &[SliceTable]) -> BandSlices {
        let mut values: Vec<&str> = runs
            .iter()
            .flat_map(|t| t.all().map(|r| r.value.as_str()))
            .collect();
        values.sort_unstable();
        values.dedup();
        let slices = values
            .into_iter()
            .map(|value| {
                let per_run = runs
                    .iter()
                    .map(|t| {
                        t.all()
                            .find(|r| r.value == value)
                            .map(|r| (r.clean_rate(), r.traces))
                    })
                    .collect();
                (value.to_string(), per_run)
            })
            .collect();
        BandSlices { by, slices }
    }

    /// band.json's `slices` object.
    pub fn to_json(&self) -> Value {
        let mut slices = Map::new();
        for (value, runs) in &self.slices {
            let mut entry = Map::new();
            entry.insert(
                "clean_rate".into(),
                runs.iter().map(|r| r.map(|(rate, _)| rate)).collect(),
            );
            entry.insert(
                "traces".into(),
                runs.iter().map(|r| r.map_or(0, |(_, n)| n)).collect(),
            );
            slices.insert(value.clone(), Value::Object(entry));
        }
        let mut out = Map::new();
        out.insert("by".into(), self.by.clone().into());
        out.insert("values".into(), Value::Object(slices));
        Value::Object(out)
    }

    /// Reads band.json's `slices` object; `None` when it is not one [`Self::to_json`] writes.
    pub fn from_json(value: &Value) -> Option<BandSlices> {
        let by = value
            .get("by")?
            .as_array()?
            .iter()
            .map(|k| k.as_str().map(String::from))
            .collect::<Option<Vec<String>>>()?;
        let mut slices = Vec::new();
        for (name, entry) in value.get("values")?.as_object()? {
            let rates = entry.get("clean_rate")?.as_array()?;
            let traces = entry.get("traces")?.as_array()?;
            if rates.len() != traces.len() {
                return None;
            }
            let runs = rates
                .iter()
                .zip(traces)
                .map(|(rate, n)| Some(rate.as_f64().zip(n.as_u64())))
                .collect::<Option<Vec<_>>>()?;
            slices.push((name.clone(), runs));
        }
        slices.sort_by(|a, b| a.0.cmp(&b.0));
        Some(BandSlices { by, slices })
    }
}

/// The gate's verdict on one slice.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceVerdict {
    /// The slice.
    pub value: String,
    /// Its clean rate in this run.
    pub clean_rate: f64,
    /// Its traces in this run.
    pub traces: u64,
    /// The lowest and highest clean rate of the slice over the baseline runs.
    pub band: (f64, f64),
    /// `PASS`, `FAIL` or `INCONCLUSIVE`, by the band gate's rule with the slice's traces as n.
    pub verdict: Verdict,
}

/// Judges each slice of the run that has at least [`MIN_SLICE_TRACES`] traces here and in every
/// baseline run, by the band gate's rule: PASS at or above `min - 1/n`, FAIL below `min - 3/n`,
/// INCONCLUSIVE between; `n` is the slice's traces in this run. `None` when the band was built with
/// other keys (or none).
pub fn judge_slices(band: &BandSlices, run: &SliceTable) -> Option<Vec<SliceVerdict>> {
    if band.by != run.by {
        return None;
    }
    let mut verdicts = Vec::new();
    for row in run.all().filter(|r| r.traces >= MIN_SLICE_TRACES) {
        let Some((_, runs)) = band.slices.iter().find(|(v, _)| *v == row.value) else {
            continue;
        };
        let rates: Option<Vec<f64>> = runs
            .iter()
            .map(|r| {
                r.filter(|&(_, n)| n >= MIN_SLICE_TRACES)
                    .map(|(rate, _)| rate)
            })
            .collect();
        let Some(rates) = rates.filter(|r| !r.is_empty()) else {
            continue;
        };
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let n = row.traces as f64;
        let rate = row.clean_rate();
        let verdict = if rate >= lo - 1.0 / n - 1e-12 {
            Verdict::Pass
        } else if rate < lo - 3.0 / n - 1e-12 {
            Verdict::Fail
        } else {
            Verdict::Inconclusive
        };
        verdicts.push(SliceVerdict {
            value: row.value.clone(),
            clean_rate: rate,
            traces: row.traces,
            band: (lo, hi),
            verdict,
        });
    }
    Some(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_past_the_cap_are_counted_as_other() {
        let mut tally = SliceTally::new(1, MeasureSet::NONE);
        for i in 0..40 {
            tally.add(
                &format!("model=m{i:02}"),
                i % 2 == 0,
                &[i % 2 == 1],
                [None; MEASURE_COUNT],
            );
        }
        tally.add("model=m00", false, &[true], [None; MEASURE_COUNT]);
        let table = tally.finish();
        assert_eq!(table.rows.len(), MAX_SLICES);
        assert_eq!(table.rows[0].value, "model=m00");
        assert_eq!((table.rows[0].traces, table.rows[0].clean), (2, 1));
        let other = table.other.expect("other");
        assert_eq!(
            (other.value.as_str(), other.traces, other.clean),
            ("other", 8, 4)
        );
        assert_eq!(other.fired, [4]);
    }

    #[test]
    fn a_slice_below_the_band_by_more_than_three_traces_fails() {
        let band = BandSlices {
            by: vec!["model".into()],
            slices: vec![
                ("model=a".into(), vec![Some((0.9, 20)), Some((0.85, 20))]),
                ("model=b".into(), vec![Some((0.9, 20)), Some((0.9, 20))]),
            ],
        };
        let row = |value: &str, clean| SliceRow {
            value: value.into(),
            traces: 20,
            clean,
            fired: vec![],
            statistics: None,
        };
        let run = SliceTable {
            by: vec!["model".into()],
            rows: vec![row("model=a", 12), row("model=b", 17), row("model=c", 1)],
            other: None,
        };
        let verdicts = judge_slices(&band, &run).expect("same keys");
        let shown: Vec<(&str, &str)> = verdicts
            .iter()
            .map(|v| (v.value.as_str(), v.verdict.as_str()))
            .collect();
        // a: 0.60 < 0.85 - 0.15; b: 0.85 >= 0.90 - 0.05; c is not in the band.
        assert_eq!(shown, [("model=a", "FAIL"), ("model=b", "PASS")]);
        let other_keys = SliceTable {
            by: vec!["agent".into()],
            ..run
        };
        assert_eq!(judge_slices(&band, &other_keys), None);
        let json = band.to_json();
        assert_eq!(BandSlices::from_json(&json), Some(band));
    }
}
