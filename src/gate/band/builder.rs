//! [`BandBuilder`]: a band from baseline runs added one at a time.
//!
//! The builder keeps only a clean bitmap per run over the first run's scenario keys (a key missing from
//! the first run can never be shared), plus running usage sums (and, for pass^k, each run's trial counts
//! per key), so a band over a hundred runs of ten thousand scenarios never holds more than one run's
//! traces.

use std::collections::HashMap;

use super::scenario_measures::{ScenarioMedians, median};
use super::{Band, BandPassK};
use crate::gate::measures::MEASURE_COUNT;
use crate::gate::passk::{Trials, pass_hat_k};
use crate::gate::{GateError, MeasureValues, RunStatistics, RunSummary};

/// Builds a band from baseline runs added one at a time.
#[derive(Debug, Default)]
pub struct BandBuilder {
    judge: String,
    checks: Vec<String>,
    set_aside: Vec<String>,
    mixed_runs: bool,
    runs: usize,
    /// Scenario keys of the first run, by id; later runs only look keys up.
    keys: Vec<String>,
    ids: HashMap<String, usize>,
    /// Ids present in every run so far.
    shared: Bitmap,
    /// Per run, ids whose every trace was clean.
    clean_per_run: Vec<Bitmap>,
    usage_total: [f64; 3],
    usage_count: [u64; 3],
    /// Keep `trials_per_run` (only for `baseline --pass-k`: 8 bytes per key and run, against 1 bit).
    track_trials: bool,
    /// Per run, (traces, clean traces) per id, for pass^k over trials.
    trials_per_run: Vec<Vec<Trials>>,
    /// Some key of some run had several traces.
    has_trials: bool,
    /// Per run, its measures' statistics: `None` once a run came without its values.
    measures: Option<Vec<RunStatistics>>,
    /// Keep `scenario_values` (only for `baseline --measures --per-scenario`: 8 bytes per key, run
    /// and measure).
    track_scenario_values: bool,
    /// Per run, per measure, per id: the mean of the scenario's values in that run (NaN without one).
    scenario_values: Vec<[Vec<f64>; MEASURE_COUNT]>,
}

/// What adding a run tells the caller, for the per-run baseline line and warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDigest {
    /// Distinct trace ids in the run.
    pub traces: usize,
    /// 0.4.1's per-run line rate: distinct keys whose last trace is clean, over the trace count.
    pub line_clean_rate: f64,
    /// Keys carried by more than one trace, in first-seen order.
    pub repeated_keys: Vec<String>,
}

impl BandBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder that also keeps each run's trials per scenario, for the band's pass^k.
    pub fn with_trials() -> Self {
        Self {
            track_trials: true,
            ..Self::default()
        }
    }

    /// The builder, also keeping each run's mean of each measure per scenario, for the band's
    /// per-scenario medians.
    pub fn with_scenario_measures(self) -> Self {
        Self {
            track_scenario_values: true,
            ..self
        }
    }

    /// Reduces one run to clean flags per scenario and usage sums, and forgets its traces.
    pub fn add_run(&mut self, run: &RunSummary) -> RunDigest {
        let tally = &run.scenarios;
        if self.runs == 0 {
            self.judge.clone_from(&run.judge);
            self.checks.clone_from(&run.checks);
            self.set_aside.clone_from(&run.set_aside);
            for (key, _) in tally.clean_flags() {
                self.ids.insert(key.to_string(), self.keys.len());
                self.keys.push(key.to_string());
            }
            self.shared = Bitmap::filled(self.keys.len());
        } else if run.judge != self.judge || run.checks != self.checks {
            self.mixed_runs = true;
        }
        let mut present = Bitmap::new(self.keys.len());
        let mut clean = Bitmap::new(self.keys.len());
        // Per position of the run's scenarios, its id in the band.
        let mut ids = Vec::new();
        for (key, is_clean) in tally.clean_flags() {
            let id = self.ids.get(key).copied();
            if self.track_scenario_values {
                ids.push(id);
            }
            if let Some(id) = id {
                present.set(id);
                if is_clean {
                    clean.set(id);
                }
            }
        }
        if self.track_trials {
            let mut trials = vec![
                Trials {
                    trials: 0,
                    passes: 0
                };
                self.keys.len()
            ];
            for (key, t) in tally.all_trials() {
                if let Some(&id) = self.ids.get(key) {
                    trials[id] = t;
                    self.has_trials |= t.trials > 1;
                }
            }
            self.trials_per_run.push(trials);
        }
        self.shared.and_assign(&present);
        self.clean_per_run.push(clean);
        if self.track_scenario_values {
            let means = run
                .measures
                .as_ref()
                .map(|values| scenario_means(values, &ids, self.keys.len()));
            self.scenario_values.push(
                means.unwrap_or_else(|| std::array::from_fn(|_| vec![f64::NAN; self.keys.len()])),
            );
        }
        // Only the run's statistics stay: its values go with the summary.
        self.measures = match (self.measures.take(), &run.measures) {
            (Some(mut per_run), Some(values)) => {
                per_run.push(values.statistics());
                Some(per_run)
            }
            (None, Some(values)) if self.runs == 0 => Some(vec![values.statistics()]),
            _ => None,
        };
        for ((total, count), sum) in self
            .usage_total
            .iter_mut()
            .zip(&mut self.usage_count)
            .zip(&run.usage)
        {
            // A run whose sums continue the band's totals (`usage_totals`) carries the band's sum of
            // every value so far, left to right, as 0.4.1 adds them. One that started elsewhere (its
            // own zero) can only be added as a whole, which rounds the same only for exact values.
            if sum.start.to_bits() == total.to_bits() {
                *total = sum.total;
            } else {
                *total += sum.total - sum.start;
            }
            *count += sum.count;
        }
        self.runs += 1;
        let line_clean_rate = if run.trace_count == 0 {
            0.0
        } else {
            tally.last_clean_count() as f64 / run.trace_count as f64
        };
        RunDigest {
            traces: run.trace_count,
            line_clean_rate,
            repeated_keys: tally.repeated_keys(),
        }
    }

    /// The usage totals over the runs added so far, per measure of [`crate::gate::MEASURES`]: where
    /// the next run's [`RunSummary::usage`] sums start, so that the band sums every value left to
    /// right.
    pub fn usage_totals(&self) -> [f64; 3] {
        self.usage_total
    }

    /// The band over the runs added so far.
    ///
    /// # Errors
    ///
    /// Fewer than two runs, runs with different judges or check lists, or no scenario shared by all.
    pub fn finish(self) -> Result<Band, GateError> {
        if self.runs < 2 {
            return Err(GateError::TooFewRuns(self.runs));
        }
        if self.mixed_runs {
            return Err(GateError::MixedRuns);
        }
        let mut shared: Vec<usize> = self.shared.ones().collect();
        if shared.is_empty() {
            return Err(GateError::NoSharedScenarios);
        }
        shared.sort_unstable_by(|a, b| self.keys[*a].cmp(&self.keys[*b]));
        let n = shared.len() as f64;
        let per_run: Vec<f64> = self
            .clean_per_run
            .iter()
            .map(|clean| shared.iter().filter(|&&id| clean.get(id)).count() as f64 / n)
            .collect();
        let clean_runs = shared
            .iter()
            .map(|&id| {
                self.clean_per_run
                    .iter()
                    .filter(|clean| clean.get(id))
                    .count() as u32
            })
            .collect();
        let clean_in_all_runs = shared
            .iter()
            .filter(|&&id| self.clean_per_run.iter().all(|clean| clean.get(id)))
            .map(|&id| self.keys[id].clone())
            .collect();
        let pass_k = self.has_trials.then(|| {
            // K: the fewest trials any shared scenario has in any run, so every run's pass^k covers
            // every shared scenario.
            let k = self
                .trials_per_run
                .iter()
                .flat_map(|run| shared.iter().map(|&id| run[id].trials))
                .min()
                .unwrap_or(1)
                .max(1);
            let per_run = self
                .trials_per_run
                .iter()
                .map(|run| {
                    let scenarios: Vec<Trials> = shared.iter().map(|&id| run[id]).collect();
                    pass_hat_k(&scenarios)
                        .into_iter()
                        .take(k as usize)
                        .map(|p| p.value)
                        .collect()
                })
                .collect();
            BandPassK { k, per_run }
        });
        let usage = std::array::from_fn(|m| {
            (self.usage_count[m] > 0).then(|| self.usage_total[m] / self.usage_count[m] as f64)
        });
        let scenario_measures = self
            .track_scenario_values
            .then(|| scenario_medians(&self.scenario_values, &shared));
        let mut keys = self.keys;
        let scenarios = shared
            .iter()
            .map(|&id| std::mem::take(&mut keys[id]))
            .collect();
        Ok(Band {
            judge: self.judge,
            checks: self.checks,
            runs: self.runs,
            scenarios,
            per_run,
            clean_runs,
            clean_in_all_runs,
            usage,
            pass_k,
            set_aside: self.set_aside,
            agent_version: None,
            expectations: None,
            measures: self.measures,
            scenario_measures,
            slices: None,
        })
    }
}

/// Per measure, per band id, the mean of the run's values of that scenario (NaN without one);
/// `ids` gives each of the run's scenario positions its band id.
fn scenario_means(
    values: &MeasureValues,
    ids: &[Option<usize>],
    keys: usize,
) -> [Vec<f64>; MEASURE_COUNT] {
    std::array::from_fn(|m| {
        let mut sums = vec![(0.0, 0u32); keys];
        for (&position, &value) in values.scenario.iter().zip(&values.values[m]) {
            if let (false, Some(Some(id))) = (value.is_nan(), ids.get(position as usize)) {
                let (sum, count) = &mut sums[*id];
                *sum += value;
                *count += 1;
            }
        }
        sums.into_iter()
            .map(|(sum, count)| {
                if count == 0 {
                    f64::NAN
                } else {
                    sum / f64::from(count)
                }
            })
            .collect()
    })
}

/// Per measure, per shared id (in band order), the median over the runs; a measure no shared
/// scenario recorded is `None` as a whole.
fn scenario_medians(per_run: &[[Vec<f64>; MEASURE_COUNT]], shared: &[usize]) -> ScenarioMedians {
    std::array::from_fn(|m| {
        let mut across = Vec::with_capacity(per_run.len());
        let medians: Vec<Option<f64>> = shared
            .iter()
            .map(|&id| {
                across.clear();
                across.extend(per_run.iter().map(|run| run[m][id]));
                median(&mut across)
            })
            .collect();
        medians.iter().any(Option::is_some).then_some(medians)
    })
}

/// A fixed-size set of small integers.
#[derive(Debug, Clone, Default, PartialEq)]
struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl Bitmap {
    fn new(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    fn filled(len: usize) -> Self {
        let mut bitmap = Self::new(len);
        for id in 0..len {
            bitmap.set(id);
        }
        bitmap
    }

    fn set(&mut self, id: usize) {
        self.words[id / 64] |= 1 << (id % 64);
    }

    fn get(&self, id: usize) -> bool {
        self.words[id / 64] & (1 << (id % 64)) != 0
    }

    fn and_assign(&mut self, other: &Bitmap) {
        for (word, other) in self.words.iter_mut().zip(&other.words) {
            *word &= other;
        }
    }

    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&id| self.get(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{ScenarioTally, UsageSum, fixtures};

    fn run(items: &[(&str, bool)]) -> RunSummary {
        RunSummary {
            judge: "none".into(),
            checks: vec!["search_loop".into(), "abstention".into()],
            trace_count: items.len(),
            scenarios: ScenarioTally::of(items.iter().copied()),
            policy_violations: Vec::new(),
            workflow_violations: None,
            usage: Default::default(),
            set_aside: Vec::new(),
            measures: None,
        }
    }

    #[test]
    fn a_glm_run_is_digested_as_0_4_1_counts_it() {
        let digest = BandBuilder::new().add_run(&fixtures::glm_run1());
        assert_eq!(digest.traces, 30);
        assert_eq!(digest.line_clean_rate, 28.0 / 30.0);
        assert!(digest.repeated_keys.is_empty());
    }

    #[test]
    fn usage_means_pool_all_traces_left_to_right() {
        let mut run1 = run(&[("a", true), ("b", true), ("c", true)]);
        let mut run2 = run(&[("a", true), ("b", true), ("c", false)]);
        let mut builder = BandBuilder::new();
        run1.usage[2] = UsageSum::of(builder.usage_totals()[2], &[0.1, 0.2, 0.7]);
        builder.add_run(&run1);
        run2.usage[2] = UsageSum::of(builder.usage_totals()[2], &[0.3, 0.1, 0.11]);
        builder.add_run(&run2);
        let band = builder.finish().expect("band");
        // Reference: 0.4.1 wrote 0.2516666666666667; a sum of per-run sums gives ...65.
        assert_eq!(band.usage, [None, None, Some(0.2516666666666667)]);
        assert_eq!(band.per_run, vec![1.0, 0.6666666666666666]);
        assert_eq!(band.mean(), 0.8333333333333333);
    }

    #[test]
    fn shared_scenarios_are_the_intersection_sorted() {
        let mut builder = BandBuilder::new();
        builder.add_run(&run(&[("z", true), ("b", true), ("only1", true)]));
        builder.add_run(&run(&[("b", false), ("only2", true), ("z", true)]));
        builder.add_run(&run(&[("z", true), ("b", true)]));
        let band = builder.finish().expect("band");
        assert_eq!(band.scenarios, vec!["b", "z"]);
        assert_eq!(band.clean_in_all_runs, vec!["z"]);
        assert_eq!(band.per_run, vec![1.0, 0.5, 1.0]);
    }

    #[test]
    fn repeated_key_with_a_failing_trace_is_not_clean() {
        // 0.4.1 kept the last (clean) trace and built band [1.00, 1.00]; the failure was hidden.
        let dup = run(&[("p", false), ("p", true), ("p", true), ("p", true)]);
        let mut builder = BandBuilder::new();
        let digest = builder.add_run(&dup);
        assert_eq!(digest.repeated_keys, vec!["p"]);
        // The per-run line keeps 0.4.1's arithmetic: one clean key over four traces.
        assert_eq!(digest.line_clean_rate, 0.25);
        builder.add_run(&dup);
        let band = builder.finish().expect("band");
        assert_eq!(band.per_run, vec![0.0, 0.0]);
        assert!(band.clean_in_all_runs.is_empty());
    }

    #[test]
    fn build_errors() {
        let mut one = BandBuilder::new();
        one.add_run(&run(&[("a", true)]));
        assert_eq!(one.finish(), Err(GateError::TooFewRuns(1)));
        assert_eq!(
            GateError::TooFewRuns(1).to_string(),
            "a band needs at least 2 baseline runs, got 1"
        );

        let mut mixed = BandBuilder::new();
        mixed.add_run(&run(&[("a", true)]));
        let mut other = run(&[("a", true)]);
        other.checks = vec!["search_loop".into()];
        mixed.add_run(&other);
        assert_eq!(mixed.finish(), Err(GateError::MixedRuns));

        let mut disjoint = BandBuilder::new();
        disjoint.add_run(&run(&[("a", true)]));
        disjoint.add_run(&run(&[("b", true)]));
        assert_eq!(disjoint.finish(), Err(GateError::NoSharedScenarios));
    }

    /// 100 runs × 1,000 scenarios added one run at a time, as `baseline` streams them: per-run rates,
    /// the scenarios clean in every run and pooled usage come out of the running state alone. (The
    /// million-trace scale of `baseline` is measured by `scripts/bench`, not here.)
    #[test]
    fn hundred_runs_build_one_run_at_a_time() {
        const SCENARIOS: usize = 1_000;
        // 211 is prime and above the run count, so about half the scenarios are dirty in some run
        // and the rest are clean in all of them.
        let dirty = |scenario: usize, run: usize| (scenario * 7 + run * 13).is_multiple_of(211);
        let mut builder = BandBuilder::new();
        for r in 0..100 {
            let mut summary = run(&[]);
            summary.trace_count = SCENARIOS;
            let keys: Vec<String> = (0..SCENARIOS).map(|i| format!("scenario-{i:05}")).collect();
            summary.scenarios = ScenarioTally::of(
                keys.iter()
                    .enumerate()
                    .map(|(i, k)| (k.as_str(), !dirty(i, r))),
            );
            let values: Vec<f64> = (0..1_000).map(|i| f64::from(i % 500)).collect();
            summary.usage[1] = UsageSum::of(builder.usage_totals()[1], &values);
            builder.add_run(&summary);
        }
        let band = builder.finish().expect("band");
        assert_eq!(band.scenarios.len(), SCENARIOS);
        for (r, rate) in band.per_run.iter().enumerate() {
            let clean = (0..SCENARIOS).filter(|&i| !dirty(i, r)).count();
            assert_eq!(*rate, clean as f64 / SCENARIOS as f64);
        }
        let clean_in_all = (0..SCENARIOS)
            .filter(|&i| (0..100).all(|r| !dirty(i, r)))
            .count();
        assert!((SCENARIOS / 4..SCENARIOS * 3 / 4).contains(&clean_in_all));
        assert_eq!(band.clean_in_all_runs.len(), clean_in_all);
        assert_eq!(band.usage[1], Some(249.5));
    }
}
