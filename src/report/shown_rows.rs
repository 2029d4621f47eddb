//! The rows the Markdown and HTML reports show of a run too large to hold, kept in the pass over its
//! verdicts, and the run's counts beside them. Both lists are bounded (the first failing traces,
//! the first policy blocks, the traces whose steps were kept), so the rows kept are too, whatever the
//! size of the run; the reports are then rendered from them as from the run held whole.

use std::collections::HashSet;

use arrow_array::BooleanArray;

use super::counts::SpilledCounts;
use super::pass::Sink;
use super::{Report, VerdictBatch};
use crate::checks::Gating;

/// The counts of the whole run a report shows beside the rows of its [`ShownRows`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunCounts<'a> {
    /// Distinct traces.
    pub traces: usize,
    /// Distinct traces where any check fired.
    pub failed: usize,
    /// Fired counts per distinct check name, in selection order, as [`Report::fired`] gives them.
    pub fired: Vec<(&'a str, usize)>,
    /// Fired verdicts over every trace and check.
    pub fired_verdicts: usize,
    /// Traces a policy-block check fired on.
    pub policy_blocked: usize,
    /// Steps of others than the agent over every trace, which no rule judged.
    pub user_steps: u64,
    /// The traces' own recorded outcomes over every trace.
    pub recorded_outcomes: super::RecordedOutcomes,
}

impl RunCounts<'_> {
    /// The counts of a run held whole.
    pub(crate) fn of_report(report: &Report) -> RunCounts<'_> {
        let fired = report.fired();
        RunCounts {
            traces: report.trace_ids().len(),
            failed: report.failed_traces().len(),
            fired_verdicts: fired.iter().map(|(_, n)| n).sum(),
            fired,
            policy_blocked: report
                .blocked_on(Gating::PolicyBlock)
                .unwrap_or_default()
                .len(),
            user_steps: report
                .batches
                .iter()
                .map(VerdictBatch::user_step_count)
                .sum(),
            recorded_outcomes: super::RecordedOutcomes::of(&report.batches),
        }
    }
}

/// How many rows of each kind the reports can show.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shown {
    /// The first failing rows: the reports list no more failing traces than this.
    pub failed_rows: usize,
    /// The first rows a policy-block check fired on: the Markdown's policy table shows no more.
    pub policy_rows: usize,
}

/// A spilled run's rows the reports show, with the run's counts.
#[derive(Debug)]
pub(crate) struct ShownRows<'a> {
    /// The run's report holding only the rows kept, in run order: the first failing rows, the first
    /// policy-blocked rows, and the rows of the traces whose steps were kept.
    pub report: Report,
    /// The whole run's counts.
    pub counts: RunCounts<'a>,
}

/// Keeps the rows `shown` says the reports need as the pass hands them on. Each trace id is one row of
/// the run (see [`SpilledCounts`]), whose counts are the run's.
pub(crate) struct ShownRowsSink<'a> {
    policy: Vec<usize>,
    with_steps: HashSet<&'a str>,
    shown: Shown,
    failed_kept: usize,
    policy_kept: usize,
    policy_blocked: usize,
    kept: Vec<VerdictBatch>,
}

impl<'a> ShownRowsSink<'a> {
    /// The sink of `report`'s rows.
    pub(crate) fn new(report: &'a Report, shown: Shown) -> Self {
        ShownRowsSink {
            policy: (0..report.checks.len())
                .filter(|&k| report.checks[k].role.gating == Gating::PolicyBlock)
                .collect(),
            with_steps: report
                .failing_steps
                .iter()
                .map(|t| t.trace_id.as_str())
                .collect(),
            shown,
            failed_kept: 0,
            policy_kept: 0,
            policy_blocked: 0,
            kept: Vec::new(),
        }
    }

    /// The rows kept, with the run's counts.
    pub(crate) fn finish<'r>(self, report: &'r Report, counts: &SpilledCounts) -> ShownRows<'r> {
        let fired = counts.fired_by_name(report);
        ShownRows {
            report: Report {
                batches: self.kept,
                ..report.clone()
            },
            counts: RunCounts {
                traces: counts.traces,
                failed: counts.failed,
                fired_verdicts: counts.fired.iter().sum(),
                fired,
                policy_blocked: self.policy_blocked,
                user_steps: counts.user_steps,
                recorded_outcomes: counts.recorded_outcomes,
            },
        }
    }
}

impl Sink for ShownRowsSink<'_> {
    fn take(&mut self, batch: &VerdictBatch) -> std::io::Result<()> {
        let keep: BooleanArray = batch
            .rows()
            .map(|row| {
                let blocked = self.policy.iter().any(|&k| row.verdict(k).detected);
                self.policy_blocked += usize::from(blocked);
                let mut keep = self.with_steps.contains(row.trace_id());
                if row.failed() && self.failed_kept < self.shown.failed_rows {
                    self.failed_kept += 1;
                    keep = true;
                }
                if blocked && self.policy_kept < self.shown.policy_rows {
                    self.policy_kept += 1;
                    keep = true;
                }
                Some(keep)
            })
            .collect();
        if keep.true_count() > 0 {
            let rows = arrow_select::filter::filter_record_batch(batch.record_batch(), &keep)
                .map_err(std::io::Error::other)?;
            self.kept
                .push(VerdictBatch::try_new(rows).map_err(std::io::Error::other)?);
        }
        Ok(())
    }
}
