//! The report model: the verdict batches of one run, and the numbers every output derives from them.
//!
//! The renderers (`render`: terminal, JSON, and the others) read only this model. Reasons, agents and
//! scenario keys stored here are already redacted. The report knows each active check by its name and
//! the role the run's selection gave it ([`ReportCheck`]), so no output asks the check registry.
//!
//! The gate sits below the report: `gate_input` hands it a run's counts, and the renderers word what
//! it decided (`render::json` builds the gate object, `render::gate_lines` the lines `check` and
//! `baseline` print).

pub(crate) mod counts;
pub mod explanation;
pub(crate) mod finish;
pub(crate) mod gate_input;
pub mod id_hashes;
pub(crate) mod outputs;
pub(crate) mod pass;
pub(crate) mod render;
pub(crate) mod run_gate;
pub mod schema;
pub(crate) mod shown_rows;
pub mod spill;
pub(crate) mod steps;
pub(crate) mod verdicts;

use std::collections::HashMap;

pub use verdicts::{RecordedOutcomes, Row, VerdictBatch, VerdictRef};

use crate::checks::{Gating, Role};

/// The measures of one trace (`measures` in the JSON report).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measures {
    /// Input plus output tokens summed over the trace's spans; `None` when none recorded them.
    pub tokens: Option<f64>,
    /// The root span's duration in milliseconds; `None` when no time is known.
    pub latency_ms: Option<f64>,
    /// Cost in US dollars summed over the trace's spans; `None` when none recorded it.
    pub cost_usd: Option<f64>,
    /// Input tokens summed over the trace's spans; `None` when none recorded them.
    pub input_tokens: Option<f64>,
    /// Output tokens summed over the trace's spans; `None` when none recorded them.
    pub output_tokens: Option<f64>,
    /// Model calls: spans whose operation is `chat`, `text_completion` or `generate_content`; `None`
    /// when no span of the trace names an operation (its format does not tell calls apart).
    pub model_calls: Option<f64>,
}

/// All results of one run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Judge name of the run (`none` when no judge ran).
    pub judge: String,
    /// The active checks in selection order.
    pub checks: Vec<ReportCheck>,
    /// Redaction mode the run used (`builtin`, `off`, ...).
    pub redaction: String,
    /// The verdict batches, in run order: one row per trace, one verdict per active check in selection
    /// order.
    pub batches: Vec<VerdictBatch>,
    /// What the run could not read as it should (tools shown but not read, duplicate or clashing spans,
    /// skipped files): on stderr, in the JSON report's `input_warnings` and in the Markdown.
    pub input_warnings: Vec<String>,
    /// The steps of the first failing traces, kept only for outputs that show them (`--html`).
    pub failing_steps: Vec<steps::TraceSteps>,
    /// What `--skip-bad-input` left out (zero without the flag): the summary line and the JSON report
    /// count it.
    pub skipped_input: SkippedInput,
    /// `--unit session`: the ids of the conversations checked as units (the other units are traces
    /// without a conversation id); `None` for a run whose unit is the trace.
    pub sessions: Option<std::sync::Arc<crate::sessions::SessionIds>>,
}

/// What `--skip-bad-input` left out of a run, or of one file (`skipped_input` in the JSON report).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SkippedInput {
    /// Files that could not be read, left out whole.
    pub files: usize,
    /// JSON lines that did not parse, left out of files that were read.
    pub lines: usize,
}

impl SkippedInput {
    /// Returns true if and only if nothing was left out.
    pub fn is_none(&self) -> bool {
        self.files == 0 && self.lines == 0
    }

    /// Adds what another file or part left out.
    pub fn add(&mut self, other: SkippedInput) {
        self.files += other.files;
        self.lines += other.lines;
    }
}

/// An active check as the report knows it: its name, and the role its selection gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportCheck {
    /// The check's name, as the command line and the outputs spell it.
    pub name: String,
    /// What its verdicts mean to the gate and the report.
    pub role: Role,
}

#[cfg(test)]
impl ReportCheck {
    /// A rule check of this gating, for the reports tests build by hand.
    pub(crate) fn rule(name: &str, gating: Gating) -> ReportCheck {
        ReportCheck {
            name: name.to_string(),
            role: Role {
                gating,
                outcome_block: false,
                judged: false,
            },
        }
    }
}

impl Report {
    /// The active checks' names, in selection order.
    pub fn check_names(&self) -> Vec<String> {
        self.checks.iter().map(|c| c.name.clone()).collect()
    }

    /// Every trace's row, in run order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.batches.iter().flat_map(VerdictBatch::rows)
    }

    /// Number of rows (traces, repeated ids counted each time).
    pub fn row_count(&self) -> usize {
        self.batches.iter().map(VerdictBatch::len).sum()
    }

    /// Distinct trace ids, in first-result order.
    pub fn trace_ids(&self) -> Vec<&str> {
        let mut seen: std::collections::HashSet<&str, foldhash::fast::RandomState> =
            std::collections::HashSet::with_capacity_and_hasher(
                self.row_count(),
                Default::default(),
            );
        self.rows()
            .map(|r| r.trace_id())
            .filter(|id| seen.insert(*id))
            .collect()
    }

    /// Distinct ids of traces where any check fired, in report order.
    pub fn failed_traces(&self) -> Vec<&str> {
        let failed: std::collections::HashSet<&str, foldhash::fast::RandomState> = self
            .rows()
            .filter(verdicts::Row::failed)
            .map(|r| r.trace_id())
            .collect();
        self.trace_ids()
            .into_iter()
            .filter(|id| failed.contains(id))
            .collect()
    }

    /// Fired counts per distinct check name, in selection order (a duplicated check counts twice).
    pub fn fired(&self) -> Vec<(&str, usize)> {
        let mut names: Vec<&str> = Vec::new();
        for check in &self.checks {
            if !names.contains(&check.name.as_str()) {
                names.push(&check.name);
            }
        }
        let mut counts: HashMap<&str, usize> = names.iter().map(|n| (*n, 0)).collect();
        for row in self.rows() {
            for (check, verdict) in self.checks.iter().zip(row.verdicts()) {
                if verdict.detected {
                    *counts.entry(check.name.as_str()).or_default() += 1;
                }
            }
        }
        names.into_iter().map(|n| (n, counts[n])).collect()
    }

    /// Ids of traces where the named check fired, in report order.
    pub fn fired_on(&self, check: &str) -> Vec<&str> {
        self.fired_where(|c| c.name == check)
    }

    /// Ids of traces where a check of this gate effect fired, in report order; `None` when no such
    /// check ran (see [`crate::checks::Gating`]).
    pub fn blocked_on(&self, gating: Gating) -> Option<Vec<&str>> {
        let of_gating = |c: &ReportCheck| c.role.gating == gating;
        self.checks
            .iter()
            .any(of_gating)
            .then(|| self.fired_where(of_gating))
    }

    /// As [`Report::blocked_on`], counting only the checks not in `set_aside` (`--trust`): `Some` when a
    /// check of that gating ran, even one set aside, so the gate object keeps its keys.
    pub fn blocked_on_gated(&self, gating: Gating, set_aside: &[String]) -> Option<Vec<&str>> {
        let of_gating = |c: &ReportCheck| c.role.gating == gating;
        self.checks
            .iter()
            .any(of_gating)
            .then(|| self.fired_where(|c| of_gating(c) && !set_aside.iter().any(|s| s == &c.name)))
    }

    /// Ids of traces where a check that passes `selected` fired, in report order.
    fn fired_where(&self, selected: impl Fn(&ReportCheck) -> bool) -> Vec<&str> {
        let positions: Vec<usize> = (0..self.checks.len())
            .filter(|&k| selected(&self.checks[k]))
            .collect();
        self.rows()
            .filter(|row| positions.iter().any(|&k| row.verdict(k).detected))
            .map(|row| row.trace_id())
            .collect()
    }
}

/// The outcome block: how many traces the outcomes file judged, and the clean rates with and without it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutcomeSummary {
    /// `outcome` results the outcomes file judged.
    pub judged: usize,
    /// `outcome` results without an outcome, not judged.
    pub missing: usize,
    /// Judged results whose outcome was true (the task succeeded).
    pub true_count: usize,
    /// `true_count` over `judged`; `None` when nothing was judged.
    pub outcome_rate: Option<f64>,
    /// Share of distinct traces where no check other than `outcome` fired.
    pub structural_clean_rate: f64,
    /// Share of distinct traces where no check fired.
    pub clean_rate: f64,
}

impl Report {
    /// The outcome block, when the check that feeds it (see [`crate::checks::Registered`]) ran.
    pub fn outcome_summary(&self) -> Option<OutcomeSummary> {
        let feeds: Vec<bool> = self.checks.iter().map(|c| c.role.outcome_block).collect();
        if !feeds.contains(&true) {
            return None;
        }
        let (mut judged, mut total, mut true_count) = (0, 0, 0);
        let mut structural_failed: std::collections::HashSet<&str> = Default::default();
        for r in self.rows() {
            for (&feeds, v) in feeds.iter().zip(r.verdicts()) {
                if feeds {
                    total += 1;
                    if v.confidence > 0.0 {
                        judged += 1;
                        if !v.detected {
                            true_count += 1;
                        }
                    }
                } else if v.detected {
                    structural_failed.insert(r.trace_id());
                }
            }
        }
        Some(OutcomeSummary::of(
            judged,
            total,
            true_count,
            self.trace_ids().len(),
            structural_failed.len(),
            self.failed_traces().len(),
        ))
    }
}

impl OutcomeSummary {
    /// The block from its counts: `outcome` results judged and in all, those true, distinct traces,
    /// and the distinct traces where a check other than `outcome` fired and where any check fired.
    pub(crate) fn of(
        judged: usize,
        total: usize,
        true_count: usize,
        traces: usize,
        structural_failed: usize,
        failed: usize,
    ) -> OutcomeSummary {
        let n = traces as f64;
        let round4 = |x: f64| crate::compat::fmt::round_half_even(x, 4);
        OutcomeSummary {
            judged,
            missing: total - judged,
            true_count,
            outcome_rate: (judged > 0).then(|| round4(true_count as f64 / judged as f64)),
            structural_clean_rate: round4((n - structural_failed as f64) / n),
            clean_rate: round4((n - failed as f64) / n),
        }
    }
}

pub use crate::output::write_atomic;
