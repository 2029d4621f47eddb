//! The paired significance test of a budget on a mean, for a band with per-scenario medians
//! (`baseline --measures --per-scenario`).
//!
//! Scenarios differ far more from one another than a release moves any one of them: a candidate
//! whose cost rose 12% on every scenario can still be INCONCLUSIVE against `cost.mean <= +10%` when
//! its scenarios are resampled alone, the spread between scenarios hiding the shift. Paired, each of
//! the candidate's scenarios is held to its own limit, the band's median of that scenario with the
//! limit applied, so the spread between scenarios cancels and only the change remains.
//!
//! The test: a bootstrap over the scenarios both sides have ([`RESAMPLES`] draws, the generator
//! seeded with the same constant as the unpaired test, so the same inputs give the same bytes at any
//! thread count). Each draw takes the mean of the drawn scenarios' traces (a scenario weighs as many
//! traces as it has, as in the run's mean) and holds it to the limit of the drawn scenarios' band
//! medians, weighted alike. The baseline's run-to-run spread still counts: each draw also picks one
//! baseline run at random and scales the medians by that run's mean over the band's mean, so a band
//! whose runs moved together (a slow day, a price change) widens the test as it does unpaired; what
//! pairing removes is the spread between scenarios, not the spread between runs.
//!
//! Scope: only a relative limit (`+10%`, `+0.002`) on the mean. A percentile is a property of the
//! pooled traces, not of each scenario's centre: a p95 can rise through the tail of a few scenarios
//! while every scenario's median stays put, and holding scenarios to their medians would test the
//! typical scenario rather than the tail the budget names. Percentiles keep the unpaired test.
//!
//! Scenarios the band lacks (or whose median it lacks) are left out of the paired test and counted;
//! when fewer than half of the candidate's scenarios are shared, the unpaired test runs instead and
//! the outcome says so.

use std::collections::HashMap;

use serde_json::Value;

use super::ScenarioTally;
use super::band::ScenarioMedians;
use super::bootstrap::{SEED, SplitMix64};
use super::budget_draw::{Drawn, RESAMPLES, spread};
use super::outcome::Limit;

/// The band's per-scenario medians, lined up with one run's scenarios.
#[derive(Debug)]
pub struct BandPairing<'a> {
    medians: &'a ScenarioMedians,
    /// Per scenario position of the run (first-seen order), its index in the band's `scenarios`.
    band_index: Vec<Option<u32>>,
}

impl<'a> BandPairing<'a> {
    /// Lines `medians` (in the order of `band_scenarios`) up with the scenarios of `run`.
    pub fn new(
        medians: &'a ScenarioMedians,
        band_scenarios: &[Value],
        run: &ScenarioTally,
    ) -> Self {
        let index: HashMap<&str, u32> = band_scenarios
            .iter()
            .enumerate()
            .filter_map(|(i, key)| Some((key.as_str()?, u32::try_from(i).ok()?)))
            .collect();
        let band_index = run.iter().map(|(key, _)| index.get(key).copied()).collect();
        BandPairing {
            medians,
            band_index,
        }
    }

    /// The band's median of `measure` for the run's scenario at `position`, when it has one.
    fn median(&self, measure: usize, position: u32) -> Option<f64> {
        let i = (*self.band_index.get(position as usize)?)?;
        self.medians[measure].as_ref()?[i as usize]
    }

    /// The shared scenarios of a measure's groups: each one's sum and count of values and the
    /// band's median. `groups` yields, per scenario of the run, its position and values.
    pub(crate) fn pair<'v>(
        &self,
        measure: usize,
        groups: impl Iterator<Item = (u32, &'v [f64])>,
    ) -> PairedScenarios {
        let mut paired = PairedScenarios::default();
        for (position, values) in groups {
            if let Some(median) = self.median(measure, position) {
                paired.sums.push(values.iter().fold(0.0, |acc, v| acc + v));
                paired.counts.push(values.len() as f64);
                paired.medians.push(median);
            }
        }
        paired
    }
}

/// The scenarios a run shares with the band, for one measure.
#[derive(Debug, Default)]
pub(crate) struct PairedScenarios {
    sums: Vec<f64>,
    counts: Vec<f64>,
    medians: Vec<f64>,
}

impl PairedScenarios {
    /// How many scenarios are shared.
    pub(crate) fn len(&self) -> usize {
        self.sums.len()
    }

    /// The observed excess over the paired limit: the shared traces' mean minus the limit of their
    /// medians, weighted by traces.
    pub(crate) fn excess(&self, limit: Limit) -> f64 {
        let traces: f64 = self.counts.iter().sum();
        let value = self.sums.iter().sum::<f64>() / traces;
        let centre = weighted(&self.counts, &self.medians) / traces;
        value - limit.of(centre)
    }

    /// Draws the shared scenarios again [`RESAMPLES`] times, each draw held to the limit of its
    /// scenarios' medians scaled by one of `scales` (a baseline run's mean over the band's) drawn
    /// at random. Not empty.
    pub(crate) fn draw(&self, limit: Limit, scales: &[f64]) -> Drawn {
        let n = self.len();
        let mut rng = SplitMix64::new(SEED);
        let mut excesses = Vec::with_capacity(RESAMPLES);
        let mut within = 0usize;
        for _ in 0..RESAMPLES {
            let (mut sum, mut traces, mut centre) = (0.0, 0.0, 0.0);
            for _ in 0..n {
                let s = rng.below(n as u64) as usize;
                sum += self.sums[s];
                traces += self.counts[s];
                centre += self.counts[s] * self.medians[s];
            }
            let scale = scales[rng.below(scales.len() as u64) as usize];
            let (value, centre) = (sum / traces, centre / traces);
            within += usize::from(value <= limit.of(centre * scale));
            excesses.push(value - limit.of(centre));
        }
        let traces: f64 = self.counts.iter().sum();
        let centre = weighted(&self.counts, &self.medians) / traces;
        let limits: Vec<f64> = scales.iter().map(|s| limit.of(centre * s)).collect();
        Drawn {
            p_value: (within + 1) as f64 / (RESAMPLES + 1) as f64,
            run_spread: spread(&excesses),
            band_spread: spread(&limits),
        }
    }
}

/// The sum of `weights[i] * values[i]`, left to right.
fn weighted(weights: &[f64], values: &[f64]) -> f64 {
    weights
        .iter()
        .zip(values)
        .fold(0.0, |acc, (w, v)| acc + w * v)
}
