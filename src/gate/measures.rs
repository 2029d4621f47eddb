//! The per-trace measures' distributions a band records per run (`baseline --measures`), and the
//! values a run holds to compute them.
//!
//! Up to [`EXACT_TRACES`] traces the statistics are exact: a run keeps every trace's value of every
//! measure (8 bytes a trace a measure, plus 4 for its scenario's position, which the budgets'
//! bootstrap resamples by), since a sketch's error would show up as a budget verdict flipping on
//! noise the band never had. Past that size memory stays bounded: the mean stays exact (a running
//! sum in trace order, the same sum the exact path takes), the percentiles come from a DDSketch of
//! every value with [`RELATIVE_ACCURACY`] relative error, and the values kept for the bootstrap are
//! those of a sample of whole scenarios, chosen by a hash of their position, that holds at most
//! [`EXACT_TRACES`] traces. A bootstrap over fewer scenarios than the run has spreads wider, so past
//! the exact size a budget's p-value errs on the side of INCONCLUSIVE.

use sketches_ddsketch::{Config, DDSketch};

use super::bootstrap::{SplitMix64, percentile};

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

/// The most traces a run keeps every value of: up to it percentiles are exact, past it they come
/// from a sketch (about 60 MB of values at this size).
pub const EXACT_TRACES: usize = 1 << 20;

/// The relative error of a percentile past [`EXACT_TRACES`]: the sketch's value is within 0.5% of
/// an order statistic next to the exact percentile.
pub const RELATIVE_ACCURACY: f64 = 0.005;

/// The sketch's bins: with 0.5% accuracy, 4096 bins span values over 17 orders of magnitude before
/// the lowest collapse.
const SKETCH_BINS: u32 = 4096;

/// The smallest value the sketch tells from zero.
const SKETCH_MIN_VALUE: f64 = 1e-9;

/// Which measures a run keeps the values of: those its budgets name (`check --budget`), or all of
/// them (`baseline --measures`). A measure left out reads as recorded by no trace, so a run keeps
/// only what its outputs show: each measure kept costs a push per trace, and past the exact size a
/// sketch update per trace, in the run and in every slice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MeasureSet([bool; MEASURE_COUNT]);

impl MeasureSet {
    /// Every measure of [`DISTRIBUTIONS`].
    pub const ALL: MeasureSet = MeasureSet([true; MEASURE_COUNT]);

    /// No measure.
    pub const NONE: MeasureSet = MeasureSet([false; MEASURE_COUNT]);

    /// The measures at these positions of [`DISTRIBUTIONS`].
    pub fn of(measures: impl IntoIterator<Item = usize>) -> MeasureSet {
        let mut set = MeasureSet::NONE;
        for m in measures {
            set.0[m] = true;
        }
        set
    }

    /// Returns true if and only if the set keeps no measure.
    pub fn is_empty(&self) -> bool {
        !self.0.contains(&true)
    }
}

/// One statistic of each measure: per measure of [`DISTRIBUTIONS`], its [`STATISTICS`], `None` when
/// no trace recorded the measure.
pub type RunStatistics = [Option<[f64; 5]>; MEASURE_COUNT];

/// Every trace's measures in one run, in report order, or past [`EXACT_TRACES`] a sketch of them and
/// the values of a sample of whole scenarios.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeasureValues {
    /// Per trace kept, the position of its scenario in the run's first-seen order.
    pub(crate) scenario: Vec<u32>,
    /// Per measure of [`DISTRIBUTIONS`], per trace kept: its value, NaN when the trace did not record
    /// it (a NaN costs nothing beside the values, where a validity list would cost a pass per read).
    pub(crate) values: [Vec<f64>; MEASURE_COUNT],
    /// Past the exact size: the statistics of every trace, and which scenarios are kept.
    beyond: Option<Box<Sketched>>,
    /// The exact size when not [`EXACT_TRACES`] (0): a slice keeps fewer, and tests pass it on a few
    /// traces.
    exact_traces: usize,
    /// The measures not kept (none by default): their columns stay empty.
    skipped: [bool; MEASURE_COUNT],
}

/// A run's measures past [`EXACT_TRACES`].
#[derive(Clone)]
struct Sketched {
    /// Per measure, every recorded value.
    sketches: [DDSketch; MEASURE_COUNT],
    /// Per measure, the recorded values' sum in trace order and their count.
    sums: [(f64, u64); MEASURE_COUNT],
    /// Scenarios whose hash is below `u64::MAX >> level` are kept.
    level: u32,
}

impl std::fmt::Debug for Sketched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sketched")
            .field("sums", &self.sums)
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Sketched {
    fn eq(&self, other: &Self) -> bool {
        let quantiles = |s: &Sketched| {
            s.sketches
                .iter()
                .map(|sketch| QUANTILES.map(|q| q.and_then(|q| sketch.quantile(q).ok().flatten())))
                .collect::<Vec<_>>()
        };
        self.sums == other.sums && self.level == other.level && quantiles(self) == quantiles(other)
    }
}

impl Sketched {
    fn new() -> Self {
        let config = Config::new(RELATIVE_ACCURACY, SKETCH_BINS, SKETCH_MIN_VALUE);
        Sketched {
            sketches: std::array::from_fn(|_| DDSketch::new(config)),
            sums: [(0.0, 0); MEASURE_COUNT],
            level: 0,
        }
    }

    fn add(&mut self, values: impl Iterator<Item = (usize, f64)>) {
        // Only the kept measures reach here: the caller filters them.
        for (m, value) in values {
            self.sketches[m].add(value);
            let (sum, count) = &mut self.sums[m];
            *sum += value;
            *count += 1;
        }
    }

    /// Returns true if and only if the sample keeps scenario `position`: a hash of it, so the choice
    /// depends on neither the thread count nor the order traces of other scenarios arrive in.
    fn keeps(&self, position: u32) -> bool {
        let hash = SplitMix64::new(u64::from(position)).next_u64();
        hash <= u64::MAX >> self.level
    }
}

impl MeasureValues {
    /// Adds the next trace.
    pub fn add(&mut self, scenario: usize, values: [Option<f64>; MEASURE_COUNT]) {
        let position = u32::try_from(scenario).unwrap_or(u32::MAX);
        let skipped = self.skipped;
        if let Some(beyond) = &mut self.beyond {
            beyond.add(
                values
                    .iter()
                    .enumerate()
                    .filter(|&(m, _)| !skipped[m])
                    .filter_map(|(m, v)| Some((m, (*v)?))),
            );
            if !beyond.keeps(position) {
                return;
            }
        }
        self.scenario.push(position);
        for ((column, value), skip) in self.values.iter_mut().zip(values).zip(skipped) {
            if !skip {
                column.push(value.unwrap_or(f64::NAN));
            }
        }
        if self.scenario.len() > self.exact_limit() {
            self.thin();
        }
    }

    /// Values whose exact size is `traces` rather than [`EXACT_TRACES`] (a slice's, or a test's).
    pub(crate) fn with_exact_limit(traces: usize) -> Self {
        MeasureValues {
            exact_traces: traces,
            ..MeasureValues::default()
        }
    }

    /// Values that keep only the measures of `kept`.
    pub(crate) fn keeping(self, kept: MeasureSet) -> Self {
        MeasureValues {
            skipped: kept.0.map(|k| !k),
            ..self
        }
    }

    fn exact_limit(&self) -> usize {
        if self.exact_traces == 0 {
            EXACT_TRACES
        } else {
            self.exact_traces
        }
    }

    /// Moves past the exact size: sketches every value kept so far (on the first call), then halves
    /// the share of scenarios kept until the sample fits again.
    fn thin(&mut self) {
        let limit = self.exact_limit();
        let beyond = self.beyond.get_or_insert_with(|| {
            let mut sketched = Sketched::new();
            for m in 0..MEASURE_COUNT {
                let recorded = self.values[m].iter().filter(|v| !v.is_nan());
                sketched.add(recorded.map(|&v| (m, v)));
            }
            Box::new(sketched)
        });
        while self.scenario.len() > limit {
            beyond.level += 1;
            let keep: Vec<bool> = self.scenario.iter().map(|&s| beyond.keeps(s)).collect();
            let mut kept = keep.iter();
            self.scenario.retain(|_| *kept.next().unwrap_or(&false));
            for column in &mut self.values {
                let mut kept = keep.iter();
                column.retain(|_| *kept.next().unwrap_or(&false));
            }
        }
    }

    /// Returns true if and only if the run is past [`EXACT_TRACES`], its percentiles sketched.
    pub fn is_sketched(&self) -> bool {
        self.beyond.is_some()
    }

    /// The values kept of one measure, in trace order: all of them up to [`EXACT_TRACES`] traces.
    pub(crate) fn recorded(&self, measure: usize) -> Vec<f64> {
        self.values[measure]
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .collect()
    }

    /// The number of traces that recorded `measure`.
    #[cfg(test)]
    fn recorded_count(&self, measure: usize) -> u64 {
        match &self.beyond {
            Some(beyond) => beyond.sums[measure].1,
            None => self.values[measure].iter().filter(|v| !v.is_nan()).count() as u64,
        }
    }

    /// One statistic of one measure over every trace that recorded it; `None` when none did.
    pub(crate) fn statistic(&self, measure: usize, stat: usize) -> Option<f64> {
        match &self.beyond {
            Some(beyond) => {
                let (sum, count) = beyond.sums[measure];
                if count == 0 {
                    return None;
                }
                match QUANTILES[stat] {
                    None => Some(sum / count as f64),
                    Some(q) => beyond.sketches[measure].quantile(q).ok().flatten(),
                }
            }
            None => {
                let mut values = self.recorded(measure);
                (!values.is_empty()).then(|| statistic(&mut values, stat))
            }
        }
    }

    /// The run's statistics of every measure.
    pub fn statistics(&self) -> RunStatistics {
        std::array::from_fn(|m| {
            if self.beyond.is_some() {
                let stats: [Option<f64>; 5] = std::array::from_fn(|s| self.statistic(m, s));
                return stats[0].map(|mean| std::array::from_fn(|s| stats[s].unwrap_or(mean)));
            }
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
        assert!(!run.is_sketched());
    }

    #[test]
    fn a_run_keeps_only_the_measures_asked_for_exact_or_sketched() {
        let cost_only = MeasureSet::of([2]);
        let mut exact = MeasureValues::default().keeping(cost_only);
        let mut sketched = MeasureValues::with_exact_limit(100).keeping(cost_only);
        for i in 0..1_000 {
            let values = [
                Some(10.0),
                Some(5.0),
                Some(0.5),
                Some(3.0),
                None,
                None,
                None,
            ];
            exact.add(i, values);
            sketched.add(i, values);
        }
        assert!(sketched.is_sketched());
        for run in [&exact, &sketched] {
            let stats = run.statistics();
            assert_eq!(stats[2].map(|s| s[0]), Some(0.5));
            assert!(stats.iter().enumerate().all(|(m, s)| m == 2 || s.is_none()));
        }
        // The columns of the measures left out stay empty.
        assert!(exact.values[0].is_empty() && exact.values[2].len() == 1_000);
        assert!(MeasureSet::NONE.is_empty() && !MeasureSet::ALL.is_empty());
    }

    /// Trace `i`'s latency: 1 to 1000 ms over each thousand traces, so every percentile is known.
    fn latency(i: usize) -> f64 {
        (i % 1000 + 1) as f64
    }

    #[test]
    fn past_the_exact_size_percentiles_are_within_the_stated_error_and_memory_is_bounded() {
        const LIMIT: usize = 20_000;
        let traces = LIMIT * 3 + 1_000;
        let mut run = MeasureValues::with_exact_limit(LIMIT);
        let mut exact = MeasureValues::default();
        for i in 0..traces {
            let values = [Some(latency(i)), None, None, None, None, None, None];
            run.add(i / 4, values);
            if i < 4000 {
                exact.add(i / 4, values);
            }
        }
        assert!(run.is_sketched());
        assert!(run.scenario.len() <= LIMIT, "{}", run.scenario.len());
        assert!(run.scenario.len() > LIMIT / 4, "{}", run.scenario.len());
        // Whole scenarios are kept: four traces each.
        assert_eq!(run.scenario.len() % 4, 0);
        assert_eq!(run.recorded_count(0), traces as u64);
        let sketched = run.statistics()[0].expect("latency");
        let reference = exact.statistics()[0].expect("latency");
        // The mean stays exact, summed as the exact path sums it.
        let mean = (0..traces).map(latency).sum::<f64>() / traces as f64;
        assert_eq!(sketched[0], mean);
        for s in 1..5 {
            let error = (sketched[s] - reference[s]).abs() / reference[s];
            // The sketch's error, plus one order statistic's step of the 1..1000 grid.
            assert!(
                error <= RELATIVE_ACCURACY + 1.0 / reference[s],
                "{}: {} against {}",
                STATISTICS[s],
                sketched[s],
                reference[s]
            );
        }
    }

    #[test]
    fn the_sample_is_the_same_whatever_order_scenarios_interleave_in() {
        const LIMIT: usize = 20_000;
        let mut forward = MeasureValues::with_exact_limit(LIMIT);
        for i in 0..LIMIT + 5_000 {
            forward.add(
                i % 9_000,
                [Some(latency(i)), None, None, None, None, None, None],
            );
        }
        let mut kept: Vec<u32> = forward.scenario.clone();
        kept.sort_unstable();
        kept.dedup();
        let level = forward.beyond.as_ref().map(|b| b.level);
        assert!(level.is_some());
        let beyond = forward.beyond.as_ref().expect("sketched");
        assert!(kept.iter().all(|&s| beyond.keeps(s)));
        let expected = (0..9_000u32).filter(|&s| beyond.keeps(s)).count();
        assert_eq!(kept.len(), expected);
        // Each kept scenario with every one of its traces.
        for &s in &kept {
            let traces = forward.scenario.iter().filter(|&&t| t == s).count();
            let all = (0..LIMIT + 5_000)
                .filter(|i| i % 9_000 == s as usize)
                .count();
            assert_eq!(traces, all, "scenario {s}");
        }
    }
}
