//! What the gate needs from a run's report: its [`RunSummary`] and its pass^k table.
//!
//! The report owns the verdict rows; the gate sees only the counts these functions hand it, so that
//! `gate` never reads a report.

use std::collections::HashMap;

use super::{Measures, Report};
use crate::checks::Gating;
use crate::gate::RunSummary;
use crate::gate::passk::{self, PassKTable};

/// What the gate needs from one run's report.
#[cfg(test)]
pub(crate) fn run_summary(report: &Report) -> RunSummary {
    gated_run_summary(report, &[])
}

/// What the gate needs from one run's report when `--trust` set the checks `set_aside` aside: a trace
/// is clean for the gate when no other check fired on it, and a set-aside check does not block.
pub(crate) fn gated_run_summary(report: &Report, set_aside: &[String]) -> RunSummary {
    let names = report.check_names();
    let gated: Vec<bool> = names.iter().map(|name| !set_aside.contains(name)).collect();
    let mut measures = OrderedLast::default();
    for r in report.rows() {
        measures.insert(r.trace_id(), r.measures());
    }
    let mut usage: [Vec<f64>; 3] = Default::default();
    for m in measures.values() {
        for (slot, value) in usage.iter_mut().zip([m.tokens, m.latency_ms, m.cost_usd]) {
            if let Some(v) = value {
                slot.push(v);
            }
        }
    }
    RunSummary {
        judge: report.judge.clone(),
        checks: report.check_names(),
        trace_count: report.trace_ids().len(),
        scenario_clean: report
            .rows()
            .map(|r| {
                let clean = if set_aside.is_empty() {
                    !r.failed()
                } else {
                    !r.verdicts().zip(&gated).any(|(v, &g)| g && v.detected)
                };
                (r.scenario().to_string(), clean)
            })
            .collect(),
        policy_violations: report
            .blocked_on_gated(Gating::PolicyBlock, set_aside)
            .unwrap_or_default()
            .into_iter()
            .map(String::from)
            .collect(),
        workflow_violations: report
            .blocked_on_gated(Gating::WorkflowBlock, set_aside)
            .map(|ids| ids.into_iter().map(String::from).collect()),
        usage,
        set_aside: set_aside.to_vec(),
    }
}

/// The pass^k table of a run's report, when some scenario key has several traces (trials).
///
/// The one place that reads per-trace verdicts for pass^k; everything else is in [`passk`].
pub(crate) fn pass_k_table(report: &Report) -> Option<PassKTable> {
    let fired: Vec<Vec<bool>> = report
        .rows()
        .map(|r| r.verdicts().map(|v| v.detected).collect())
        .collect();
    passk::pass_k_table(
        &report.check_names(),
        report
            .rows()
            .zip(&fired)
            .map(|(r, f)| (r.scenario(), f.as_slice())),
    )
}

/// A map that keeps each key's first position and its last value, like a Python dict.
#[derive(Default)]
struct OrderedLast<'a> {
    index: HashMap<&'a str, usize>,
    values: Vec<Measures>,
}

impl<'a> OrderedLast<'a> {
    fn insert(&mut self, key: &'a str, value: Measures) {
        match self.index.get(key) {
            Some(&i) => self.values[i] = value,
            None => {
                self.index.insert(key, self.values.len());
                self.values.push(value);
            }
        }
    }

    fn values(&self) -> &[Measures] {
        &self.values
    }
}
