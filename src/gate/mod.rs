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
pub(crate) mod decision;
pub(crate) mod erf;
#[cfg(test)]
pub(crate) mod fixtures;
pub(crate) mod outcome;
pub(crate) mod paired;
pub(crate) mod passk;
pub(crate) mod stats;
pub(crate) mod verdict;

use std::collections::HashMap;

pub use band::{Band, BandBuilder, BandFile, RunDigest};
pub use decision::{evaluate_mode, evaluate_pass_k};
pub use outcome::{Gate, GateMode, GateWarning, PairedGate, Ungated, UsageDelta, Verdict};
pub use verdict::{evaluate, ungated};

/// Names of the usage measures, in the order of band.json's `usage` object.
pub const MEASURES: [&str; 3] = ["tokens", "latency_ms", "cost_usd"];

/// What the gate needs from one checked run (a baseline run or the candidate).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    /// Judge name of the run (`none` without a judge).
    pub judge: String,
    /// Active check names, in order, duplicates kept.
    pub checks: Vec<String>,
    /// Number of distinct trace ids.
    pub trace_count: usize,
    /// (written scenario key, trace is clean) for every trace, in report order; repeated keys are kept.
    pub scenario_clean: Vec<(String, bool)>,
    /// Trace ids where a [`Gating::PolicyBlock`](crate::checks::Gating::PolicyBlock) check (`policy`)
    /// fired, in report order.
    pub policy_violations: Vec<String>,
    /// Trace ids where a [`Gating::WorkflowBlock`](crate::checks::Gating::WorkflowBlock) check
    /// (`workflow`) fired, in report order; `None` when no such check ran, so that runs without
    /// `--workflow` keep 0.4.1's gate object.
    pub workflow_violations: Option<Vec<String>>,
    /// Per measure of [`MEASURES`]: the values recorded, one per distinct trace id in the order of the
    /// report's `measures` map, traces without the measure skipped.
    ///
    /// Values rather than sums because 0.4.1 sums them left to right across all runs, and a sum of
    /// per-run sums rounds differently.
    pub usage: [Vec<f64>; 3],
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

/// One run's scenarios: distinct keys in first-seen order with their clean flags.
#[derive(Debug)]
pub(crate) struct ScenarioTally<'a> {
    entries: Vec<TallyEntry<'a>>,
    index: HashMap<&'a str, usize>,
}

#[derive(Debug)]
struct TallyEntry<'a> {
    key: &'a str,
    all_clean: bool,
    last_clean: bool,
    traces: usize,
    clean_traces: usize,
}

impl<'a> ScenarioTally<'a> {
    pub(crate) fn new(scenario_clean: &'a [(String, bool)]) -> Self {
        let mut entries: Vec<TallyEntry<'a>> = Vec::new();
        let mut index: HashMap<&'a str, usize> = HashMap::with_capacity(scenario_clean.len());
        for (key, clean) in scenario_clean {
            match index.get(key.as_str()) {
                Some(&i) => {
                    let entry = &mut entries[i];
                    entry.all_clean &= *clean;
                    entry.last_clean = *clean;
                    entry.traces += 1;
                    entry.clean_traces += usize::from(*clean);
                }
                None => {
                    index.insert(key.as_str(), entries.len());
                    entries.push(TallyEntry {
                        key,
                        all_clean: *clean,
                        last_clean: *clean,
                        traces: 1,
                        clean_traces: usize::from(*clean),
                    });
                }
            }
        }
        Self { entries, index }
    }

    /// Returns true if and only if the key is present and every trace with it is clean.
    pub(crate) fn is_clean(&self, key: &str) -> bool {
        self.index
            .get(key)
            .is_some_and(|&i| self.entries[i].all_clean)
    }

    /// Returns true if and only if some trace has this key.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// Distinct keys with their clean flag (every trace clean), in first-seen order.
    pub(crate) fn clean_flags(&self) -> impl Iterator<Item = (&'a str, bool)> + '_ {
        self.entries.iter().map(|e| (e.key, e.all_clean))
    }

    /// Traces and clean traces of a key (zero trials when absent): the scenario's trials for pass^k.
    pub(crate) fn trials(&self, key: &str) -> passk::Trials {
        self.index.get(key).map_or(
            passk::Trials {
                trials: 0,
                passes: 0,
            },
            |&i| passk::Trials {
                trials: self.entries[i].traces as u32,
                passes: self.entries[i].clean_traces as u32,
            },
        )
    }

    /// Distinct keys with their trials, in first-seen order.
    pub(crate) fn all_trials(&self) -> impl Iterator<Item = (&'a str, passk::Trials)> + '_ {
        self.entries.iter().map(|e| {
            (
                e.key,
                passk::Trials {
                    trials: e.traces as u32,
                    passes: e.clean_traces as u32,
                },
            )
        })
    }

    /// Keys carried by more than one trace, in first-seen order.
    pub(crate) fn repeated_keys(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.traces > 1)
            .map(|e| e.key.to_string())
            .collect()
    }

    /// Distinct keys whose last trace is clean: the numerator of 0.4.1's per-run baseline line.
    pub(crate) fn last_clean_count(&self) -> usize {
        self.entries.iter().filter(|e| e.last_clean).count()
    }
}

/// Mean of the values summed left to right, as 0.4.1 computes usage means; `None` when empty.
pub(crate) fn pooled_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let total: f64 = values.iter().fold(0.0, |acc, v| acc + v);
    Some(total / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, bool)]) -> Vec<(String, bool)> {
        items.iter().map(|(k, c)| (k.to_string(), *c)).collect()
    }

    #[test]
    fn repeated_key_is_clean_only_if_every_trace_is() {
        let run = pairs(&[("a", false), ("b", true), ("a", true), ("c", true)]);
        let tally = ScenarioTally::new(&run);
        assert!(!tally.is_clean("a"));
        assert!(tally.is_clean("b"));
        assert!(!tally.is_clean("missing"));
        assert_eq!(tally.repeated_keys(), vec!["a".to_string()]);
        // 0.4.1's line counts the last trace per key: a, b and c all end clean.
        assert_eq!(tally.last_clean_count(), 3);
    }

    #[test]
    fn pooled_mean_sums_left_to_right() {
        let values = [0.1, 0.2, 0.7, 0.3, 0.1, 0.11];
        assert_eq!(pooled_mean(&values), Some(0.2516666666666667));
        assert_eq!(pooled_mean(&[]), None);
    }
}
