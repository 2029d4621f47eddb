//! The per-trace measures' distributions a band records per run (`baseline --measures`), and the
//! values a run holds to compute them.
//!
//! Percentiles are exact: a run keeps every trace's value of every measure (8 bytes a trace a
//! measure, plus 4 for its scenario's position, which the budgets' bootstrap resamples by) until its
//! distribution is computed, since a sketch's error would show up as a budget verdict flipping on
//! noise the band never had.

use super::bootstrap::percentile;

/// The measures, as band.json's `measures` object names them, in its order: the first four since
/// budgets came, the last three added after them (a band written before reads as lacking them).
pub const DISTRIBUTIONS: [&str; MEASURE_COUNT] = [
    "latency_ms",
    "tokens",
    "cost_usd",
    "steps",
    "input_tokens",
    "output_tokens",
    "model_calls",
];

/// The number of [`DISTRIBUTIONS`].
pub(crate) const MEASURE_COUNT: usize = 7;

/// The statistics recorded of each measure, in band.json's order.
pub const STATISTICS: [&str; 5] = ["mean", "p50", "p90", "p95", "p99"];

/// The quantile of each statistic of [`STATISTICS`]; `None` for the mean.
pub(crate) const QUANTILES: [Option<f64>; 5] = [None, Some(0.5), Some(0.9), Some(0.95), Some(0.99)];

/// One statistic of each measure: per measure of [`DISTRIBUTIONS`], its [`STATISTICS`], `None` when
/// no trace recorded the measure.
pub type RunStatistics = [Option<[f64; 5]>; MEASURE_COUNT];

/// Every trace's measures in one run, in report order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeasureValues {
    /// Per trace, the position of its scenario in the run's first-seen order.
    pub scenario: Vec<u32>,
    /// Per measure of [`DISTRIBUTIONS`], per trace: its value, NaN when the trace did not record it
    /// (a NaN costs nothing beside the values, where a validity list would cost a pass per read).
    pub values: [Vec<f64>; MEASURE_COUNT],
}

impl MeasureValues {
    /// Adds the next trace.
    pub fn add(&mut self, scenario: usize, values: [Option<f64>; MEASURE_COUNT]) {
        self.scenario
            .push(u32::try_from(scenario).unwrap_or(u32::MAX));
        for (column, value) in self.values.iter_mut().zip(values) {
            column.push(value.unwrap_or(f64::NAN));
        }
    }

    /// The recorded values of one measure, in trace order.
    pub(crate) fn recorded(&self, measure: usize) -> Vec<f64> {
        self.values[measure]
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .collect()
    }

    /// The run's statistics of every measure.
    pub fn statistics(&self) -> RunStatistics {
        std::array::from_fn(|m| {
            let mut values = self.recorded(m);
            (!values.is_empty()).then(|| statistics(&mut values))
        })
    }
}

/// One statistic of `values` (not empty): the mean (summed left to right) or a percentile
/// interpolated as NumPy's default does. Reorders `values`.
pub(crate) fn statistic(values: &mut [f64], stat: usize) -> f64 {
    match QUANTILES[stat] {
        None => values.iter().fold(0.0, |acc, v| acc + v) / values.len() as f64,
        Some(q) => percentile(values, q),
    }
}

/// Every statistic of [`STATISTICS`] of `values` (not empty). Reorders `values`.
pub(crate) fn statistics(values: &mut [f64]) -> [f64; 5] {
    let mean = statistic(values, 0);
    values.sort_by(f64::total_cmp);
    std::array::from_fn(|s| if s == 0 { mean } else { statistic(values, s) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_are_exact_and_skip_traces_without_the_measure() {
        let mut run = MeasureValues::default();
        for i in 0..101 {
            let latency = (i != 7).then_some(f64::from(100 - i));
            run.add(
                i as usize,
                [latency, None, Some(0.5), Some(3.0), None, None, Some(2.0)],
            );
        }
        let stats = run.statistics();
        // 100 recorded latencies, 100 down to 0 without 93, interpolated as NumPy's default does.
        let latency = stats[0].expect("latency");
        assert_eq!(latency[1], 49.5);
        assert_eq!(latency[2], 89.10000000000001);
        assert_eq!(latency[4], 99.01);
        assert_eq!(stats[1], None);
        assert_eq!(stats[2], Some([0.5; 5]));
        assert_eq!(stats[3], Some([3.0; 5]));
        assert_eq!(stats[4], None);
        assert_eq!(stats[6], Some([2.0; 5]));
    }
}
