//! The `--json` report: builds a [`JsonReport`] from the run's [`Report`].
//!
//! The format itself (keys, order, when a key is absent) is [`super::format::JsonReport`]; the CLI
//! adds the optional `judge_usage`, `outcome`, `pass_k` and `gate` blocks and writes it with
//! [`super::format::to_pretty`].

use super::format::{CheckResult, Entries, JsonReport, OutcomeBlock, TraceMeasures};
use super::{OutcomeSummary, Report};
use crate::compat::fmt::round_half_even;

/// The report without the optional `judge_usage`, `outcome`, `pass_k` and `gate` blocks.
pub(crate) fn report(report: &Report) -> JsonReport {
    // A repeated trace id keeps its first place and its last row's measures.
    let measures: Entries<TraceMeasures> = report
        .rows()
        .map(|r| {
            let m = r.measures();
            (
                r.trace_id(),
                TraceMeasures {
                    tokens: m.tokens,
                    latency_ms: m.latency_ms,
                    cost_usd: m.cost_usd,
                },
            )
        })
        .collect();
    let mut results = Vec::with_capacity(report.row_count() * report.checks.len());
    for r in report.rows() {
        for (check, v) in report.checks.iter().zip(r.verdicts()) {
            results.push(CheckResult {
                trace_id: r.trace_id().to_string(),
                scenario: r.scenario().to_string(),
                check: check.name.clone(),
                detected: v.detected,
                confidence: round_half_even(v.confidence, 4),
                // A run writing this report keeps every reason (`Reasons::All`).
                reason: v.reason.unwrap_or_default().to_string(),
            });
        }
    }
    JsonReport {
        judge: report.judge.clone(),
        checks: report.check_names(),
        redaction: report.redaction.clone(),
        traces: report.trace_ids().len(),
        failed_traces: report
            .failed_traces()
            .into_iter()
            .map(String::from)
            .collect(),
        fired: report.fired().into_iter().collect(),
        measures,
        results,
        // Absent when empty, so a clean run's report keeps 0.4.1's keys exactly.
        input_warnings: report.input_warnings.clone(),
        judge_usage: None,
        outcome: None,
        pass_k: None,
        gate: None,
    }
}

/// The `outcome` block of the report.
pub(crate) fn outcome(summary: &OutcomeSummary) -> OutcomeBlock {
    OutcomeBlock {
        judged: summary.judged,
        missing: summary.missing,
        true_count: summary.true_count,
        outcome_rate: summary.outcome_rate,
        structural_clean_rate: summary.structural_clean_rate,
        clean_rate: summary.clean_rate,
    }
}
