//! What the gate needs from a run's verdicts: its [`RunSummary`], its pass^k table and its outcome
//! block, counted in one pass over the verdict batches.
//!
//! The report owns the verdict rows; the gate sees only the counts and per-scenario aggregates these
//! functions hand it, so that `gate` never reads a report. The same [`GateTally`] counts a run held in
//! memory and a spilled one, batch by batch, so neither keeps anything per trace but the ids of the
//! traces that hit a hard block.

use std::collections::HashMap;

use super::{Measures, OutcomeSummary, Report, VerdictBatch};
use crate::checks::Gating;
use crate::gate::passk::{PassKTable, PassKTally};
use crate::gate::slices::{SliceTable, SliceTally};
use crate::gate::{MeasureSet, MeasureValues, RunSummary, ScenarioTally, UsageSum};

/// What a run's outputs ask of the tally besides the outcome block (counted whenever the check that
/// feeds it ran).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Wanted {
    /// The gate's [`RunSummary`] (`--band`, or a baseline run).
    pub summary: bool,
    /// The pass^k table (`--pass-k`, `--metric pass^k`).
    pub pass_k: bool,
    /// The measures whose every value the summary and the slices keep: all of them for `baseline
    /// --measures`, those the budgets name for `check --budget`, none otherwise.
    pub measures: MeasureSet,
    /// The rows counted by slice (`--by`).
    pub slices: bool,
}

/// What the gate and the report's blocks computed from a run.
#[derive(Debug, Default)]
pub(crate) struct GateInput {
    pub summary: Option<RunSummary>,
    pub pass_k: Option<PassKTable>,
    pub outcome: Option<OutcomeSummary>,
    /// The run's slices (`--by`); their `by` is left for the caller to name.
    pub slices: Option<SliceTable>,
}

/// Counts a run's rows, batch by batch in report order, into what the gate needs.
///
/// Each row counts as a distinct trace: a run whose rows repeat a trace id is counted by
/// [`whole_run_input`], which corrects the counts that go by distinct id.
#[derive(Debug)]
pub(crate) struct GateTally {
    /// Per active check: counted by the gate (not set aside by `--trust`).
    gated: Vec<bool>,
    /// Positions of the gated policy checks; `None` when no policy check ran.
    policy: Option<Vec<usize>>,
    /// Positions of the gated workflow checks; `None` when no workflow check ran.
    workflow: Option<Vec<usize>>,
    summary: Option<RunSummary>,
    /// The scenario tally pass^k counts by, when no summary is wanted.
    scenarios: Option<ScenarioTally>,
    pass_k: Option<PassKTally>,
    outcome: Option<OutcomeTally>,
    slices: Option<SliceTally>,
    /// Scratch: the fired flags of one row.
    fired: Vec<bool>,
}

impl GateTally {
    /// An empty tally for `report`'s checks, `set_aside` by `--trust`; the usage sums start at
    /// `usage_start` (see [`RunSummary::usage`]).
    pub(crate) fn new(
        report: &Report,
        set_aside: &[String],
        wanted: Wanted,
        usage_start: [f64; 3],
    ) -> Self {
        let gated: Vec<bool> = report
            .checks
            .iter()
            .map(|c| !set_aside.contains(&c.name))
            .collect();
        let blocking = |gating: Gating| {
            report
                .checks
                .iter()
                .any(|c| c.role.gating == gating)
                .then(|| {
                    (0..report.checks.len())
                        .filter(|&k| report.checks[k].role.gating == gating && gated[k])
                        .collect()
                })
        };
        let policy = blocking(Gating::PolicyBlock);
        let workflow = blocking(Gating::WorkflowBlock);
        let summary = wanted.summary.then(|| RunSummary {
            judge: report.judge.clone(),
            checks: report.check_names(),
            trace_count: 0,
            scenarios: ScenarioTally::new(),
            policy_violations: Vec::new(),
            workflow_violations: workflow.as_ref().map(|_| Vec::new()),
            usage: usage_start.map(UsageSum::starting_at),
            set_aside: set_aside.to_vec(),
            measures: (!wanted.measures.is_empty())
                .then(|| MeasureValues::default().keeping(wanted.measures)),
        });
        Self {
            gated,
            policy,
            workflow,
            scenarios: (wanted.pass_k && !wanted.summary).then(ScenarioTally::new),
            summary,
            pass_k: wanted
                .pass_k
                .then(|| PassKTally::new(&report.check_names())),
            outcome: OutcomeTally::new(report),
            slices: wanted
                .slices
                .then(|| SliceTally::new(report.checks.len(), wanted.measures)),
            fired: Vec::with_capacity(report.checks.len()),
        }
    }

    /// Returns true if and only if the tally counts anything: without it, a run needs no pass.
    pub(crate) fn is_needed(&self) -> bool {
        self.summary.is_some()
            || self.pass_k.is_some()
            || self.outcome.is_some()
            || self.slices.is_some()
    }

    /// Counts the rows of the next batch.
    pub(crate) fn add_batch(&mut self, batch: &VerdictBatch) {
        if !self.is_needed() {
            return;
        }
        for row in batch.rows() {
            self.fired.clear();
            self.fired.extend(row.verdicts().map(|v| v.detected));
            let clean = !self.fired.iter().zip(&self.gated).any(|(&f, &g)| f && g);
            let fired_on =
                |positions: &[usize], fired: &[bool]| positions.iter().any(|&k| fired[k]);
            let scenario = match (&mut self.summary, &mut self.scenarios) {
                (Some(summary), _) => {
                    summary.trace_count += 1;
                    let m = row.measures();
                    for (sum, value) in
                        summary
                            .usage
                            .iter_mut()
                            .zip([m.tokens, m.latency_ms, m.cost_usd])
                    {
                        if let Some(v) = value {
                            sum.add(v);
                        }
                    }
                    if let Some(policy) = &self.policy
                        && fired_on(policy, &self.fired)
                    {
                        summary.policy_violations.push(row.trace_id().to_string());
                    }
                    if let (Some(workflow), Some(ids)) =
                        (&self.workflow, &mut summary.workflow_violations)
                        && fired_on(workflow, &self.fired)
                    {
                        ids.push(row.trace_id().to_string());
                    }
                    let scenario = summary.scenarios.add(row.scenario(), clean);
                    if let Some(values) = &mut summary.measures {
                        values.add(scenario, distribution_values(&row));
                    }
                    Some(scenario)
                }
                (None, Some(scenarios)) => Some(scenarios.add(row.scenario(), clean)),
                (None, None) => None,
            };
            if let (Some(pass_k), Some(scenario)) = (&mut self.pass_k, scenario) {
                pass_k.add(scenario, &self.fired);
            }
            if let Some(outcome) = &mut self.outcome {
                outcome.add(&self.fired, row.verdicts().map(|v| v.confidence));
            }
            if let Some(slices) = &mut self.slices {
                slices.add(
                    row.slice().unwrap_or(crate::table::slices::NONE),
                    clean,
                    &self.fired,
                    distribution_values(&row),
                );
            }
        }
    }

    /// What was counted, each row taken for a distinct trace.
    pub(crate) fn finish(self) -> GateInput {
        let scenarios = self
            .summary
            .as_ref()
            .map(|s| &s.scenarios)
            .or(self.scenarios.as_ref());
        let pass_k = self
            .pass_k
            .as_ref()
            .zip(scenarios)
            .and_then(|(pass_k, scenarios)| pass_k.finish(scenarios));
        GateInput {
            pass_k,
            outcome: self.outcome.map(OutcomeTally::finish),
            summary: self.summary,
            slices: self.slices.map(SliceTally::finish),
        }
    }
}

/// A row's values of the measures, in [`DISTRIBUTIONS`](crate::gate::measures::DISTRIBUTIONS)
/// order, as the run's and each slice's distributions take them.
fn distribution_values(
    row: &super::verdicts::Row<'_>,
) -> [Option<f64>; crate::gate::measures::MEASURE_COUNT] {
    let m = row.measures();
    [
        m.latency_ms,
        m.tokens,
        m.cost_usd,
        Some(row.steps() as f64),
        m.input_tokens,
        m.output_tokens,
        m.model_calls,
    ]
}

/// What the gate needs of a run held in memory: the batches counted by a [`GateTally`], then the
/// counts that go by distinct trace id corrected when some rows repeat an id.
pub(crate) fn whole_run_input(
    report: &Report,
    set_aside: &[String],
    wanted: Wanted,
    usage_start: [f64; 3],
) -> GateInput {
    let mut tally = GateTally::new(report, set_aside, wanted, usage_start);
    if !tally.is_needed() {
        return GateInput::default();
    }
    for batch in &report.batches {
        tally.add_batch(batch);
    }
    let mut input = tally.finish();
    let distinct = report.trace_ids().len();
    if distinct != report.row_count() {
        if let Some(summary) = &mut input.summary {
            summary.trace_count = distinct;
            summary.usage = usage_by_distinct_id(report, usage_start);
        }
        input.outcome = report.outcome_summary();
    }
    input
}

/// What the gate needs from one run's report.
#[cfg(test)]
pub(crate) fn run_summary(report: &Report) -> RunSummary {
    gated_run_summary(report, &[], [0.0; 3], false)
}

/// What the gate needs from one run's report when `--trust` set the checks `set_aside` aside: a trace
/// is clean for the gate when no other check fired on it, and a set-aside check does not block. The
/// usage sums start at `usage_start`; with `measures`, the summary keeps every trace's measures.
pub(crate) fn gated_run_summary(
    report: &Report,
    set_aside: &[String],
    usage_start: [f64; 3],
    measures: bool,
) -> RunSummary {
    let wanted = Wanted {
        summary: true,
        pass_k: false,
        measures: if measures {
            MeasureSet::ALL
        } else {
            MeasureSet::NONE
        },
        slices: false,
    };
    whole_run_input(report, set_aside, wanted, usage_start)
        .summary
        .unwrap_or_default()
}

/// Usage sums over each distinct trace id's last measures, in first-position order, as 0.4.1's
/// `measures` map holds them.
fn usage_by_distinct_id(report: &Report, usage_start: [f64; 3]) -> [UsageSum; 3] {
    let mut measures = OrderedLast::default();
    for r in report.rows() {
        measures.insert(r.trace_id(), r.measures());
    }
    let mut usage = usage_start.map(UsageSum::starting_at);
    for m in measures.values() {
        for (sum, value) in usage.iter_mut().zip([m.tokens, m.latency_ms, m.cost_usd]) {
            if let Some(v) = value {
                sum.add(v);
            }
        }
    }
    usage
}

/// The outcome block's counts, row by row (each row a distinct trace).
#[derive(Debug)]
struct OutcomeTally {
    /// Per active check: it feeds the outcome block.
    feeds: Vec<bool>,
    judged: usize,
    total: usize,
    true_count: usize,
    traces: usize,
    /// Traces where a check other than the outcome's fired.
    structural_failed: usize,
    /// Traces where any check fired.
    failed: usize,
}

impl OutcomeTally {
    /// `None` when no check feeds the outcome block.
    fn new(report: &Report) -> Option<Self> {
        let feeds: Vec<bool> = report.checks.iter().map(|c| c.role.outcome_block).collect();
        feeds.contains(&true).then_some(Self {
            feeds,
            judged: 0,
            total: 0,
            true_count: 0,
            traces: 0,
            structural_failed: 0,
            failed: 0,
        })
    }

    fn add(&mut self, fired: &[bool], confidences: impl Iterator<Item = f64>) {
        let mut structural = false;
        for ((&feeds, &fired), confidence) in self.feeds.iter().zip(fired).zip(confidences) {
            if feeds {
                self.total += 1;
                if confidence > 0.0 {
                    self.judged += 1;
                    self.true_count += usize::from(!fired);
                }
            } else {
                structural |= fired;
            }
        }
        self.traces += 1;
        self.structural_failed += usize::from(structural);
        self.failed += usize::from(fired.contains(&true));
    }

    fn finish(self) -> OutcomeSummary {
        OutcomeSummary::of(
            self.judged,
            self.total,
            self.true_count,
            self.traces,
            self.structural_failed,
            self.failed,
        )
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Reasons, Role, VerdictColumn};
    use crate::gate::passk;
    use crate::redact::Redaction;
    use crate::report::ReportCheck;
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};

    const CHECKS: [&str; 3] = ["abstention", "policy", "outcome"];

    /// Traces `ids` (several per scenario key): policy fires on every fourth, abstention on every
    /// third, the outcome check judges all but every fifth and finds every other one false; fractional
    /// costs that round differently in another order.
    fn batch(ids: &[&str]) -> VerdictBatch {
        let mut builder = VerdictBatchBuilder::new(schema(&CHECKS), ids.len());
        let column = || VerdictColumn::new(ids.len(), Reasons::None, Redaction::Off);
        let mut columns = [column(), column(), column()];
        for id in ids {
            let i: usize = id[1..].parse().expect("numbered id");
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: &format!("s{}", i % 7),
                measures: Measures {
                    cost_usd: Some(0.1 * (i % 10) as f64 + 0.01),
                    latency_ms: i.is_multiple_of(2).then_some(i as f64 / 3.0),
                    ..Measures::default()
                },
                ..TraceFields::default()
            });
            columns[0].push(i.is_multiple_of(3), 1.0, "");
            columns[1].push(i.is_multiple_of(4), 1.0, "");
            let judged = !i.is_multiple_of(5);
            columns[2].push(
                judged && i.is_multiple_of(2),
                if judged { 0.9 } else { 0.0 },
                "",
            );
        }
        builder.finish(columns.into()).expect("verdict batch")
    }

    fn report(batches: Vec<VerdictBatch>) -> Report {
        let role = |name: &str| Role {
            gating: if name == "policy" {
                Gating::PolicyBlock
            } else {
                Gating::CleanRate
            },
            outcome_block: name == "outcome",
            judged: false,
        };
        Report {
            judge: "none".into(),
            checks: CHECKS
                .iter()
                .map(|&name| ReportCheck {
                    name: name.into(),
                    role: role(name),
                })
                .collect(),
            batches,
            ..Report::default()
        }
    }

    /// A run of one batch per (first, end) part: traces `t<first>`.. up to `t<end>`, excluded.
    fn run(parts: &[(usize, usize)]) -> Report {
        report(
            parts
                .iter()
                .map(|&(first, end)| {
                    let ids: Vec<String> = (first..end).map(|i| format!("t{i}")).collect();
                    batch(&ids.iter().map(String::as_str).collect::<Vec<_>>())
                })
                .collect(),
        )
    }

    const ALL: Wanted = Wanted {
        summary: true,
        pass_k: true,
        measures: MeasureSet::NONE,
        slices: false,
    };

    #[test]
    fn a_run_counted_batch_by_batch_gives_what_its_per_trace_lists_gave() {
        let report = run(&[(0, 40), (40, 41), (41, 100)]);
        let input = whole_run_input(&report, &[], ALL, [0.0; 3]);
        let summary = input.summary.as_ref().expect("summary");
        assert_eq!(summary.trace_count, 100);
        // The per-trace lists 0.4.1's arithmetic was written against.
        let rows: Vec<_> = report.rows().collect();
        let costs: Vec<f64> = rows.iter().filter_map(|r| r.measures().cost_usd).collect();
        let folded = costs.iter().fold(0.0, |acc, v| acc + v);
        assert_eq!(summary.usage[2].total.to_bits(), folded.to_bits());
        assert_eq!(summary.usage[2].count, 100);
        assert_eq!(summary.usage[1].count, 50);
        assert_eq!(summary.usage[0].mean(), None);
        let clean: Vec<(&str, bool)> = rows.iter().map(|r| (r.scenario(), !r.failed())).collect();
        assert_eq!(summary.scenarios, ScenarioTally::of(clean.iter().copied()));
        assert_eq!(
            summary.policy_violations,
            report
                .blocked_on(Gating::PolicyBlock)
                .expect("policy ran")
                .iter()
                .map(std::string::ToString::to_string)
                .collect::<Vec<_>>()
        );
        assert_eq!(summary.workflow_violations, None);
        let fired: Vec<Vec<bool>> = rows
            .iter()
            .map(|r| r.verdicts().map(|v| v.detected).collect())
            .collect();
        let table = passk::pass_k_table(
            &report.check_names(),
            rows.iter()
                .zip(&fired)
                .map(|(r, f)| (r.scenario(), f.as_slice())),
        );
        assert!(table.is_some());
        assert_eq!(input.pass_k, table);
        assert_eq!(input.outcome, report.outcome_summary());
        assert!(input.outcome.is_some());

        // A spilled run hands the tally the same batches one at a time.
        let mut tally = GateTally::new(&report, &[], ALL, [0.0; 3]);
        for batch in &report.batches {
            tally.add_batch(batch);
        }
        let streamed = tally.finish();
        assert_eq!(streamed.summary, input.summary);
        assert_eq!(streamed.pass_k, input.pass_k);
        assert_eq!(streamed.outcome, input.outcome);
    }

    #[test]
    fn a_set_aside_check_neither_blocks_nor_dirties_but_pass_k_still_counts_it() {
        let report = run(&[(0, 30)]);
        let set_aside = ["policy".to_string()];
        let input = whole_run_input(&report, &set_aside, ALL, [0.0; 3]);
        let summary = input.summary.expect("summary");
        assert!(summary.policy_violations.is_empty());
        let gated: Vec<(&str, bool)> = report
            .rows()
            .map(|r| {
                (
                    r.scenario(),
                    !(r.verdict(0).detected || r.verdict(2).detected),
                )
            })
            .collect();
        assert_eq!(summary.scenarios, ScenarioTally::of(gated));
        assert_eq!(summary.set_aside, set_aside);
        let plain = whole_run_input(&report, &[], ALL, [0.0; 3]);
        assert_eq!(input.pass_k, plain.pass_k);
    }

    #[test]
    fn repeated_trace_ids_count_once_with_their_last_measures() {
        let report = report(vec![batch(&["t1", "t2", "t1"]), batch(&["t3", "t2"])]);
        let summary = gated_run_summary(&report, &[], [0.0; 3], false);
        assert_eq!(summary.trace_count, 3);
        // t1, t2, t3 in first-seen order, each with its last row's cost.
        assert_eq!(summary.usage[2].count, 3);
        let cost = |i: usize| 0.1 * i as f64 + 0.01;
        let folded: f64 = [cost(1), cost(2), cost(3)]
            .iter()
            .fold(0.0, |acc, v| acc + v);
        assert_eq!(summary.usage[2].total.to_bits(), folded.to_bits());
        assert_eq!(
            whole_run_input(&report, &[], ALL, [0.0; 3]).outcome,
            report.outcome_summary()
        );
    }

    #[test]
    fn a_baseline_run_sums_on_from_the_band_totals() {
        let report = run(&[(0, 10)]);
        let summary = gated_run_summary(&report, &[], [0.0, 0.0, 0.7], false);
        let costs: Vec<f64> = report
            .rows()
            .filter_map(|r| r.measures().cost_usd)
            .collect();
        let folded = costs.iter().fold(0.7, |acc, v| acc + v);
        assert_eq!(summary.usage[2].start, 0.7);
        assert_eq!(summary.usage[2].total.to_bits(), folded.to_bits());
    }

    #[test]
    fn nothing_wanted_counts_nothing() {
        let mut report = run(&[(0, 5)]);
        report.checks.truncate(2);
        let wanted = Wanted::default();
        assert!(!GateTally::new(&report, &[], wanted, [0.0; 3]).is_needed());
        let input = whole_run_input(&report, &[], wanted, [0.0; 3]);
        assert!(input.summary.is_none() && input.pass_k.is_none() && input.outcome.is_none());
    }
}
