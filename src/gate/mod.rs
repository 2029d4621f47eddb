//! Baseline bands and the release gate.
//!
//! This module owns the numbers after the checks have run: reducing each baseline run to per-scenario
//! clean flags and usage, writing the band file and reading it back (`band`), the statistics of a
//! candidate against a band (`stats`), and the band gate's verdict (`verdict`), whose values are
//! `outcome`'s types. Beside 0.4.1's gate, and only when asked for: the paired per-scenario test
//! (`paired`), scenario bootstrap intervals (`bootstrap`), pass^k over trials (`passk`), and the layer
//! that wires them onto the verdict (`decision`). The statistics are pure functions of per-scenario
//! counts.
//!
//! It sees runs only as [`RunSummary`] values, which the report builds; it never reads traces. The
//! report words and renders what the gate computed (the JSON gate object, the terminal lines), and the
//! CLI decides where lines are printed and files written.
//!
//! Compatibility: faultgate 0.4.1 keeps only the last trace per scenario key, which can hide a failing
//! trace behind a clean one with the same key. Here a scenario is clean in a run only if every trace
//! with its key is clean, and a warning names the repeated keys.

pub(crate) mod band;
pub(crate) mod bootstrap;
pub(crate) mod budget;
pub(crate) mod budget_draw;
pub(crate) mod budget_pairing;
pub(crate) mod decision;
pub(crate) mod erf;
#[cfg(test)]
pub(crate) mod fixtures;
pub(crate) mod measures;
pub(crate) mod outcome;
pub(crate) mod paired;
pub(crate) mod passk;
pub mod slices;
pub(crate) mod stats;
pub(crate) mod trust;
pub(crate) mod verdict;

use indexmap::IndexMap;

pub use band::{Band, BandBuilder, BandFile, RunDigest, ScenarioMedians};
pub use budget::{add_budgets, evaluate_budgets};
pub use budget_pairing::BandPairing;
pub use decision::{evaluate_mode, evaluate_pass_k};
pub use measures::{
    DISTRIBUTIONS, EXACT_TRACES, MeasureSet, MeasureValues, RELATIVE_ACCURACY, RunStatistics,
    STATISTICS,
};
pub use outcome::{
    Budget, BudgetOutcome, BudgetPairing, Gate, GateMode, GateWarning, Limit, PairedGate, Ungated,
    Unmeasured, UsageDelta, Verdict,
};
pub use trust::{Distrust, SetAside, Trust};
pub use verdict::{evaluate, shared_scenarios, ungated};

/// Names of the usage measures, in the order of band.json's `usage` object.
pub const MEASURES: [&str; 3] = ["tokens", "latency_ms", "cost_usd"];

/// What the gate needs from one checked run (a baseline run or the candidate): counts and
/// per-scenario aggregates, built in one pass over the run's verdicts, and the ids of the traces that
/// hit a hard block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    /// Judge name of the run (`none` without a judge).
    pub judge: String,
    /// Active check names, in order, duplicates kept.
    pub checks: Vec<String>,
    /// Number of distinct trace ids.
    pub trace_count: usize,
    /// Every scenario key of the run with its trace counts, in first-seen order; repeated keys are
    /// counted, not kept apart.
    pub scenarios: ScenarioTally,
    /// Trace ids where a [`Gating::PolicyBlock`](crate::checks::Gating::PolicyBlock) check (`policy`)
    /// fired, in report order.
    pub policy_violations: Vec<String>,
    /// Trace ids where a [`Gating::WorkflowBlock`](crate::checks::Gating::WorkflowBlock) check
    /// (`workflow`) fired, in report order; `None` when no such check ran, so that runs without
    /// `--workflow` keep 0.4.1's gate object.
    pub workflow_violations: Option<Vec<String>>,
    /// Per measure of [`MEASURES`]: the values recorded, one per distinct trace id in the order of the
    /// report's `measures` map (traces without the measure skipped), summed as they come.
    ///
    /// A running sum in trace order, since 0.4.1 sums the values left to right (across all runs, for a
    /// band: a baseline run's sums start where the previous run's ended, see
    /// [`BandBuilder::usage_totals`]), and a sum of per-run sums rounds differently.
    pub usage: [UsageSum; 3],
    /// Checks set aside by `--trust` (reported, not gated), in run order: `scenarios` and the
    /// violations above already leave them out. Empty without `--trust`.
    pub set_aside: Vec<String>,
    /// Every trace's measures, kept only when asked for (`baseline --measures`, `check --budget`).
    pub measures: Option<MeasureValues>,
}

/// A running sum of one usage measure's values, in the order they were recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageSum {
    /// The total the sum started from (0 for a candidate; the band's total so far for a baseline run).
    pub start: f64,
    /// `start` plus every value, added left to right.
    pub total: f64,
    /// How many values were added.
    pub count: u64,
}

impl UsageSum {
    /// An empty sum that continues from `start`.
    pub fn starting_at(start: f64) -> UsageSum {
        UsageSum {
            start,
            total: start,
            count: 0,
        }
    }

    /// Adds the next value.
    pub fn add(&mut self, value: f64) {
        self.total += value;
        self.count += 1;
    }

    /// The mean of the values, as 0.4.1 computes usage means (their left-to-right sum over their
    /// count); `None` when there are none. Meaningful for a sum that started at 0.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total / self.count as f64)
    }

    /// The sum of `values` from `start`, left to right.
    #[cfg(test)]
    pub(crate) fn of(start: f64, values: &[f64]) -> UsageSum {
        let mut sum = UsageSum::starting_at(start);
        values.iter().for_each(|&v| sum.add(v));
        sum
    }
}

/// A band that cannot be built, or a band file the gate cannot use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    /// Fewer than two baseline runs were given (the count).
    #[error("a band needs at least 2 baseline runs, got {0}")]
    TooFewRuns(usize),
    /// The baseline runs used different judges or check lists.
    #[error("all baseline runs must use the same judge and checks")]
    MixedRuns,
    /// No scenario key occurs in every baseline run.
    #[error(
        "baseline runs share no scenarios (keys come from faultgate.scenario, gen_ai.agent.id or the prompt)"
    )]
    NoSharedScenarios,
    /// The band file could not be read.
    #[error("cannot read band {path}: {message}")]
    ReadBand {
        /// The band file.
        path: String,
        /// The operating system's reason.
        message: String,
    },
    /// The band file is not JSON.
    #[error("band {path} is not JSON: {message}")]
    BandNotJson {
        /// The band file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The band file is empty.
    #[error("{path}: the band is empty")]
    EmptyBand {
        /// The band file.
        path: String,
    },
    /// The band's JSON is not an object.
    #[error("{path}: the band is not a JSON object")]
    NotAnObject {
        /// The band file.
        path: String,
    },
    /// A key every band has is missing.
    #[error("{path}: the band has no \"{key}\"")]
    MissingKey {
        /// The band file.
        path: String,
        /// The missing key.
        key: &'static str,
    },
    /// A key every band has holds nothing.
    #[error("{path}: the band's \"{key}\" is empty")]
    EmptyKey {
        /// The band file.
        path: String,
        /// The empty key.
        key: &'static str,
    },
    /// `--gate paired` or `both` needs a band built with `--per-scenario`.
    #[error(
        "{path}: the band has no per-scenario data, which --gate paired and both need; rebuild it with `faultgate baseline --per-scenario`"
    )]
    NoPerScenario {
        /// The band file.
        path: String,
    },
    /// `--metric pass^k` needs a band built with `--pass-k`.
    #[error(
        "{path}: the band has no pass^k, which --metric pass^k needs; rebuild it with `faultgate baseline --pass-k` from runs with several traces per scenario"
    )]
    NoPassK {
        /// The band file.
        path: String,
    },
    /// The calibration report of `--trust` could not be read, or is not JSON.
    #[error("cannot read calibration report {path}: {message}")]
    ReadTrust {
        /// The report file.
        path: String,
        /// Why.
        message: String,
    },
    /// The file of `--trust` is not a `calibrate --json` report.
    #[error("{path}: not a calibration report (faultgate calibrate --json): expected {expected}")]
    BadTrust {
        /// The report file.
        path: String,
        /// What the file lacks.
        expected: &'static str,
    },
    /// A `--budget` expression that does not parse, or names an unknown measure or statistic.
    #[error("--budget '{expression}': {why}")]
    BadBudget {
        /// The expression as given.
        expression: String,
        /// What is wrong with it.
        why: String,
    },
    /// `--budget` needs a band built with `--measures`.
    #[error(
        "{path}: the band records no measures, which --budget needs; rebuild it with `faultgate baseline --measures`"
    )]
    NoMeasures {
        /// The band file.
        path: String,
    },
    /// A budget on a measure the band was written before recording.
    #[error(
        "{path}: the band records no {measure}, which --budget {budget} needs; rebuild it with `faultgate baseline --measures`"
    )]
    MeasureNotInBand {
        /// The band file.
        path: String,
        /// The budget, as `measure.statistic`.
        budget: String,
        /// The measure as band.json names it.
        measure: &'static str,
    },
    /// An absolute budget on a measure no trace of the run recorded.
    #[error(
        "budget {budget}: no trace of this run records {measure} (its format has none), so the budget cannot be checked"
    )]
    BudgetNotMeasured {
        /// The budget's name (`cost.p95`).
        budget: String,
        /// The measure as the band names it.
        measure: &'static str,
    },
    /// A band key holds a value of the wrong type or range.
    #[error("{path}: the band's \"{key}\" must be {expected}")]
    BadValue {
        /// The band file.
        path: String,
        /// The key at fault.
        key: &'static str,
        /// What the key must hold.
        expected: &'static str,
    },
}

/// One run's scenarios: distinct keys in first-seen order, each with its [`ScenarioStats`].
///
/// This is what a run keeps per scenario, whatever the number of traces: an entry of 48 bytes (the
/// key's hash, the key's pointer and a [`ScenarioStats`] of 24 bytes), about 9 bytes of index, and
/// the key's own bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioTally {
    entries: IndexMap<Box<str>, ScenarioStats>,
}

/// One scenario's traces in a run: all the band gate, the paired test, pass^k and the ungated warning
/// read of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScenarioStats {
    /// Traces carrying the key.
    pub traces: u64,
    /// Those of them that are clean.
    pub clean_traces: u64,
    /// The last of them is clean (0.4.1 keeps the last trace per key in its per-run line).
    pub last_clean: bool,
}

impl ScenarioStats {
    /// Every trace with the key is clean.
    pub fn all_clean(&self) -> bool {
        self.clean_traces == self.traces
    }

    /// The scenario's trials for pass^k.
    pub(crate) fn trials(&self) -> passk::Trials {
        passk::Trials {
            trials: u32::try_from(self.traces).unwrap_or(u32::MAX),
            passes: u32::try_from(self.clean_traces).unwrap_or(u32::MAX),
        }
    }
}

impl ScenarioTally {
    /// An empty tally.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tally of (scenario key, trace is clean) items, in trace order.
    pub fn of<'k>(traces: impl IntoIterator<Item = (&'k str, bool)>) -> Self {
        let mut tally = Self::new();
        for (key, clean) in traces {
            tally.add(key, clean);
        }
        tally
    }

    /// Counts the next trace; returns its scenario's position in first-seen order.
    pub fn add(&mut self, key: &str, clean: bool) -> usize {
        let (index, stats) = match self.entries.get_full_mut(key) {
            Some((index, _, stats)) => (index, stats),
            None => {
                let (index, _) = self
                    .entries
                    .insert_full(key.into(), ScenarioStats::default());
                (index, &mut self.entries[index])
            }
        };
        stats.traces += 1;
        stats.clean_traces += u64::from(clean);
        stats.last_clean = clean;
        index
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Returns true if and only if no trace was counted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Distinct keys with their stats, in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ScenarioStats)> + '_ {
        self.entries.iter().map(|(k, s)| (&**k, s))
    }

    /// Returns true if and only if the key is present and every trace with it is clean.
    pub(crate) fn is_clean(&self, key: &str) -> bool {
        self.entries.get(key).is_some_and(ScenarioStats::all_clean)
    }

    /// Returns true if and only if some trace has this key.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Distinct keys with their clean flag (every trace clean), in first-seen order.
    pub(crate) fn clean_flags(&self) -> impl Iterator<Item = (&str, bool)> + '_ {
        self.iter().map(|(k, s)| (k, s.all_clean()))
    }

    /// Traces and clean traces of a key (zero trials when absent): the scenario's trials for pass^k.
    pub(crate) fn trials(&self, key: &str) -> passk::Trials {
        self.entries.get(key).map_or(
            passk::Trials {
                trials: 0,
                passes: 0,
            },
            ScenarioStats::trials,
        )
    }

    /// Distinct keys with their trials, in first-seen order.
    pub(crate) fn all_trials(&self) -> impl Iterator<Item = (&str, passk::Trials)> + '_ {
        self.iter().map(|(k, s)| (k, s.trials()))
    }

    /// Keys carried by more than one trace, in first-seen order.
    pub(crate) fn repeated_keys(&self) -> Vec<String> {
        self.iter()
            .filter(|(_, s)| s.traces > 1)
            .map(|(k, _)| k.to_string())
            .collect()
    }

    /// Distinct keys whose last trace is clean: the numerator of 0.4.1's per-run baseline line.
    pub(crate) fn last_clean_count(&self) -> usize {
        self.iter().filter(|(_, s)| s.last_clean).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_key_is_clean_only_if_every_trace_is() {
        let tally = ScenarioTally::of([("a", false), ("b", true), ("a", true), ("c", true)]);
        assert!(!tally.is_clean("a"));
        assert!(tally.is_clean("b"));
        assert!(!tally.is_clean("missing"));
        assert_eq!(tally.repeated_keys(), vec!["a".to_string()]);
        // 0.4.1's line counts the last trace per key: a, b and c all end clean.
        assert_eq!(tally.last_clean_count(), 3);
        assert_eq!(
            tally.trials("a"),
            passk::Trials {
                trials: 2,
                passes: 1
            }
        );
    }

    /// The one thing a run keeps per scenario besides its key (docs/scale.md, "What grows with the
    /// input").
    #[test]
    fn per_scenario_state_fits_in_64_bytes() {
        assert!(std::mem::size_of::<ScenarioStats>() <= 64);
        // The index map's entry: the key's hash, the key's box and the stats.
        assert!(std::mem::size_of::<(u64, Box<str>, ScenarioStats)>() <= 64);
    }

    #[test]
    fn usage_sums_left_to_right_as_the_values_come() {
        let values = [0.1, 0.2, 0.7, 0.3, 0.1, 0.11];
        let sum = UsageSum::of(0.0, &values);
        assert_eq!(sum.mean(), Some(0.2516666666666667));
        let folded: f64 = values.iter().fold(0.0, |acc, v| acc + v);
        assert_eq!(sum.total.to_bits(), folded.to_bits());
        // Continuing from the first half's total is the same sum; adding the halves' sums is not.
        let first = UsageSum::of(0.0, &values[..3]);
        let second = UsageSum::of(first.total, &values[3..]);
        assert_eq!(second.total.to_bits(), folded.to_bits());
        let apart = first.total + UsageSum::of(0.0, &values[3..]).total;
        assert_ne!(apart.to_bits(), folded.to_bits());
        assert_eq!(UsageSum::default().mean(), None);
    }
}
