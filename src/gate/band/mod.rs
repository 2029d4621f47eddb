//! Baseline bands: what the runs of a baseline span, built one run at a time, written as band.json and
//! read back for the gate.
//!
//! - [`Band`]: the band as numbers, as [`BandBuilder`] (`builder.rs`) leaves it.
//! - band.json: the file's keys ([`BandJson`], `file.rs`), which `baseline` writes from a [`Band`].
//! - [`BandFile`] (`reader.rs`): a band file read back leniently, as 0.4.1 reads it, which the gate
//!   ([`super::verdict`], [`super::decision`]) evaluates against.
//!
//! The band file is the gate's own state between two commands, not a report: its format lives here, next
//! to the code that writes it and the reader whose range checks keep a hand-edited band from turning a
//! FAIL into a PASS. The report re-exports its types beside the other file formats.

mod builder;
mod file;
mod reader;
mod scenario_measures;

pub use builder::{BandBuilder, RunDigest};
pub use file::{BandCleanRate, BandJson, BandPassKJson, Shaped};
pub use reader::BandFile;
pub(crate) use reader::BandMeasures;
pub use scenario_measures::ScenarioMedians;

/// pass^1 … pass^k of each baseline run over the shared scenarios.
#[derive(Debug, Clone, PartialEq)]
pub struct BandPassK {
    /// The largest k every shared scenario has trials for in every run.
    pub k: u32,
    /// Per run, pass^1 … pass^k.
    pub per_run: Vec<Vec<f64>>,
}

/// A band built from baseline runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Judge name of the runs.
    pub judge: String,
    /// Active check list of the runs.
    pub checks: Vec<String>,
    /// Number of runs.
    pub runs: usize,
    /// Scenario keys present in every run, sorted by code point.
    pub scenarios: Vec<String>,
    /// Per run, the share of `scenarios` clean in that run.
    pub per_run: Vec<f64>,
    /// Per scenario of `scenarios`, the runs in which it was clean.
    pub clean_runs: Vec<u32>,
    /// Scenarios clean in every run, sorted.
    pub clean_in_all_runs: Vec<String>,
    /// Per measure of [`MEASURES`](crate::gate::MEASURES), the mean over all traces of all runs that
    /// recorded it.
    pub usage: [Option<f64>; 3],
    /// pass^k per run, when some run had several traces for a key.
    pub pass_k: Option<BandPassK>,
    /// Checks `--trust` set aside in the runs (reported, not counted in `per_run`), in run order.
    pub set_aside: Vec<String>,
    /// `baseline --agent-version`: the agent version (masked) whose traces alone the runs were read
    /// for; `None` when every trace was.
    pub agent_version: Option<String>,
    /// `baseline --expect`: the SHA-256 of the expectations file the runs were checked against;
    /// `None` when they were not.
    pub expectations: Option<String>,
    /// `baseline --measures`: per run, the statistics of each measure of
    /// [`DISTRIBUTIONS`](crate::gate::DISTRIBUTIONS); `None` without the flag.
    pub measures: Option<Vec<crate::gate::RunStatistics>>,
    /// `baseline --measures --per-scenario`: per measure, per scenario of `scenarios`, the median
    /// over the runs; `None` without both flags.
    pub scenario_measures: Option<ScenarioMedians>,
    /// `baseline --by`: per slice, each run's clean rate and traces; `None` without the flag.
    pub slices: Option<crate::gate::slices::BandSlices>,
}

impl Band {
    /// Lowest per-run clean rate.
    pub fn min(&self) -> f64 {
        self.per_run.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Highest per-run clean rate.
    pub fn max(&self) -> f64 {
        self.per_run
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Mean of the per-run clean rates, summed left to right as 0.4.1 does.
    pub fn mean(&self) -> f64 {
        self.per_run.iter().fold(0.0, |acc, r| acc + r) / self.runs as f64
    }
}
