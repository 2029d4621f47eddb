//! The `--json` report: builds a [`JsonReport`] from the run's [`Report`], and its optional blocks from
//! what the run computed besides: the outcome summary, pass^k, and the gate (also verdict.json's).
//!
//! The format itself (keys, order, when a key is absent) is [`crate::report::schema::JsonReport`]; the CLI
//! adds the optional `judge_usage`, `outcome`, `pass_k` and `gate` blocks and writes it with
//! [`crate::report::schema::to_pretty`].

use super::gate_lines;
use crate::compat::fmt::round_half_even;
use crate::gate::bootstrap::{CONFIDENCE, RESAMPLES, SEED};
use crate::gate::passk::{PassK, PassKTable};
use crate::gate::stats::{ALPHA, POWER};
use crate::gate::{Gate, PairedGate, Unmeasured};
use crate::report::pass::{Body, Sink, VerdictSource};
use crate::report::schema::{
    self, CheckResult, Entries, GateBlock, GateStatsBlock, IntervalsBlock, JsonReport,
    OutcomeBlock, PairedBlock, PassKBlock, PerTraceEntries, TraceMeasures,
};
use crate::report::{OutcomeSummary, Report, Row, VerdictBatch};

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
        skipped_input: (!report.skipped_input.is_none()).then_some(report.skipped_input),
        judge_usage: None,
        outcome: None,
        pass_k: None,
        gate: None,
        explanations: None,
        slices: None,
        units: None,
    }
}

/// The per-trace lists of a report written from the spill: a placeholder entry stands for each in
/// the report's text, and is replaced by the entries as they are read back.
const PLACEHOLDER: &str = "faultgate.spilled.placeholder";

/// The JSON report of a run whose trace ids are distinct, written as [`schema::to_pretty`] writes the
/// run held whole. Its two short per-trace lists (`failed_traces` and `measures`, about a tenth of its
/// bytes) are written as the pass hands the rows on, each to its own [`Body`]; `results`, which comes
/// after them in the file and holds the rest, is written straight into the report from a second
/// reading of the verdicts ([`JsonSink::finish`]): reading the spill again costs less than writing
/// the list to a temporary file and copying it.
pub(crate) struct JsonSink {
    layout: PerTraceEntries,
    checks: usize,
    failed: (ListWriter, Body),
    measures: (ListWriter, Body),
}

impl JsonSink {
    /// The sink of a report of these checks, its short lists in unlinked files of `dir` (`TMPDIR`
    /// when `None`).
    ///
    /// # Errors
    ///
    /// A list's file cannot be created.
    pub(crate) fn new(report: &Report, dir: Option<&std::path::Path>) -> std::io::Result<Self> {
        Ok(JsonSink {
            layout: PerTraceEntries::new(report.checks.iter().map(|c| c.name.as_str())),
            checks: report.checks.len(),
            failed: (ListWriter::new('['), Body::new(dir)?),
            measures: (ListWriter::new('{'), Body::new(dir)?),
        })
    }

    /// Writes the report: `doc` holds all but its per-trace lists (which it ignores), the short lists
    /// are those the pass wrote, and `results` is written from `source`, the run's verdicts read
    /// again.
    ///
    /// # Errors
    ///
    /// A list cannot be read back, the spill cannot be, or `out` cannot be written.
    pub(crate) fn finish(
        self,
        out: &mut (dyn std::io::Write + Send),
        doc: JsonReport,
        source: VerdictSource<'_>,
    ) -> std::io::Result<()> {
        let placeholder_result = CheckResult {
            trace_id: PLACEHOLDER.to_string(),
            scenario: String::new(),
            check: String::new(),
            detected: false,
            confidence: 0.0,
            reason: String::new(),
        };
        let placeholder_measures = TraceMeasures {
            tokens: None,
            latency_ms: None,
            cost_usd: None,
        };
        let text = schema::to_pretty(&JsonReport {
            failed_traces: vec![PLACEHOLDER.to_string()],
            measures: [(PLACEHOLDER, placeholder_measures)].into_iter().collect(),
            results: vec![placeholder_result.clone()],
            ..doc
        });
        // Each list as the whole report writes it with the placeholder alone, cut out of the text.
        let placeholders = [
            list(&[schema::to_pretty(PLACEHOLDER)], '[', ']'),
            list(&[member(PLACEHOLDER, &placeholder_measures)], '{', '}'),
            list(&[schema::to_pretty(&placeholder_result)], '[', ']'),
        ];
        let mut rest = text.as_str();
        let mut cut = |out: &mut dyn std::io::Write, placeholder: &str| {
            let at = rest.find(placeholder).ok_or_else(|| {
                std::io::Error::other("the JSON report's lists are not where the pass writes them")
            })?;
            out.write_all(&rest.as_bytes()[..at])?;
            rest = &rest[at + placeholder.len()..];
            Ok::<(), std::io::Error>(())
        };
        for (placeholder, (writer, body)) in placeholders.iter().zip([self.failed, self.measures]) {
            cut(out, placeholder)?;
            body.copy_to(out)?;
            writer.end(out)?;
        }
        cut(out, &placeholders[2])?;
        let mut results = ListWriter::new('[');
        let (layout, checks) = (&self.layout, self.checks);
        let render = |row: Row<'_>, rendered: &mut Rendered| {
            PerTraceEntries::result_head(&mut rendered.head, row.trace_id(), row.scenario());
            for (check, v) in (0..checks).zip(row.verdicts()) {
                let (text, head) = rendered.entry_with_head();
                layout.push_result(
                    text,
                    head,
                    check,
                    v.detected,
                    round_half_even(v.confidence, 4),
                    v.reason.unwrap_or_default(),
                );
            }
        };
        // A batch's results are written while the next batch's are rendered: writing a gigabyte
        // takes about as long as rendering it.
        let mut rendered: Vec<Rendered> = Vec::new();
        source.for_each_batch(|batch| {
            let (next, written) = rayon::join(
                || render_batch(batch, render),
                || results.write(out, &rendered),
            );
            rendered = next;
            written
        })?;
        results.write(out, &rendered)?;
        results.end(out)?;
        out.write_all(rest.as_bytes())
    }
}

impl Sink for JsonSink {
    fn take(&mut self, batch: &VerdictBatch) -> std::io::Result<()> {
        let (failed, measures) = (&mut self.failed, &mut self.measures);
        // `failed_traces`: ids of traces where any check fired.
        failed.0.push_batch(&mut failed.1, batch, |row, rendered| {
            if row.failed() {
                PerTraceEntries::push_failed(rendered.entry(), row.trace_id());
            }
        })?;
        // `measures`: each trace id's measures.
        measures
            .0
            .push_batch(&mut measures.1, batch, |row, rendered| {
                let m = row.measures();
                let measures = TraceMeasures {
                    tokens: m.tokens,
                    latency_ms: m.latency_ms,
                    cost_usd: m.cost_usd,
                };
                PerTraceEntries::push_measures(rendered.entry(), row.trace_id(), &measures);
            })
    }
}

/// `"key": value` as an object member one level in writes it (before the list's indent).
fn member<T: serde::Serialize>(key: &str, value: &T) -> String {
    format!("{}: {}", schema::to_pretty(key), schema::to_pretty(value))
}

/// A list (or object) one level into the report, of these entries each written at depth 0.
fn list(entries: &[String], open: char, close: char) -> String {
    if entries.is_empty() {
        return format!("{open}{close}");
    }
    let inner: Vec<String> = entries.iter().map(|e| indented(e)).collect();
    format!("{open}\n{}\n {close}", inner.join(",\n"))
}

/// An entry written at depth 0, moved to depth 2 (one space a level).
fn indented(entry: &str) -> String {
    format!("  {}", entry.replace('\n', "\n  "))
}

/// Rows of a batch rendered by one task.
const RENDER_ROWS: usize = 256;

/// Consecutive entries of a list, each as [`list`] places it, joined as it joins them.
#[derive(Default)]
struct Rendered {
    text: Vec<u8>,
    entries: usize,
    /// What the row being rendered starts each of its entries with (one buffer for every row).
    head: Vec<u8>,
}

impl Rendered {
    /// The text to append the next entry to, as [`list`] places it (two levels in).
    fn entry(&mut self) -> &mut Vec<u8> {
        if self.entries > 0 {
            self.text.extend_from_slice(b",\n");
        }
        self.entries += 1;
        &mut self.text
    }

    /// As [`Self::entry`], with what the row's entries start with.
    fn entry_with_head(&mut self) -> (&mut Vec<u8>, &[u8]) {
        self.entry();
        (&mut self.text, &self.head)
    }
}

/// A list being written a batch of entries at a time, as [`list`] writes it whole: its opening is
/// written with its first entry, so an empty list can still be written as `[]` at its end.
struct ListWriter {
    open: char,
    written: usize,
}

impl ListWriter {
    fn new(open: char) -> ListWriter {
        ListWriter { open, written: 0 }
    }

    /// Writes the entries `render` makes of each row of `batch`, in row order.
    fn push_batch(
        &mut self,
        out: &mut dyn std::io::Write,
        batch: &VerdictBatch,
        render: impl Fn(Row<'_>, &mut Rendered) + Sync,
    ) -> std::io::Result<()> {
        self.write(out, &render_batch(batch, render))
    }

    /// Writes entries rendered by [`render_batch`], after those written before.
    fn write(&mut self, out: &mut dyn std::io::Write, parts: &[Rendered]) -> std::io::Result<()> {
        for part in parts.iter().filter(|part| part.entries > 0) {
            if self.written == 0 {
                writeln!(out, "{}", self.open)?;
            } else {
                out.write_all(b",\n")?;
            }
            out.write_all(&part.text)?;
            self.written += part.entries;
        }
        Ok(())
    }

    /// Closes the list, written to `out` after what [`Self::push_batch`] wrote.
    fn end(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let close = if self.open == '[' { ']' } else { '}' };
        if self.written == 0 {
            write!(out, "{}{close}", self.open)
        } else {
            write!(out, "\n {close}")
        }
    }
}

/// The entries `render` makes of each row of `batch`, in row order. The rows are rendered on the
/// threads, [`RENDER_ROWS`] to a task, each task's entries into one text: a million traces make six
/// million results, which one thread took longer to write than to read and check.
fn render_batch(
    batch: &VerdictBatch,
    render: impl Fn(Row<'_>, &mut Rendered) + Sync,
) -> Vec<Rendered> {
    batch.in_row_tasks(RENDER_ROWS, |rows| {
        let mut rendered = Rendered::default();
        for row in rows {
            render(batch.row(row), &mut rendered);
        }
        rendered
    })
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

/// The `pass_k` block of the report.
pub(crate) fn pass_k(table: &PassKTable) -> PassKBlock {
    let values = |ks: &[PassK]| ks.iter().map(|p| p.value).collect::<Vec<f64>>();
    PassKBlock {
        scenarios: table.scenarios,
        max_trials: table.max_trials,
        scenarios_per_k: table.overall.iter().map(|p| p.scenarios).collect(),
        overall: values(&table.overall),
        by_check: table
            .by_check
            .iter()
            .map(|(name, ks)| (name.clone(), values(ks)))
            .collect(),
    }
}

/// The `gate` object of the report and of verdict.json ([`GateBlock`] gives its keys).
pub(crate) fn gate(gate: &Gate) -> GateBlock {
    let paired = gate.paired.as_ref();
    GateBlock {
        verdict: gate.verdict.as_str().to_string(),
        clean_rate: gate.clean_rate,
        usage: gate
            .usage
            .iter()
            .map(|delta| {
                (
                    delta.measure.clone(),
                    schema::UsageDelta {
                        baseline: delta.baseline.clone(),
                        candidate: delta.candidate,
                        delta_pct: delta.delta_pct,
                    },
                )
            })
            .collect(),
        band: gate.band.clone(),
        pass_threshold: gate.pass_threshold,
        fail_threshold: gate.fail_threshold,
        stats: GateStatsBlock {
            baseline_mean: gate.stats.baseline_mean,
            drop: gate.stats.drop,
            p_value: gate.stats.p_value,
            alpha: ALPHA,
            power: POWER,
            required_n: gate.stats.required_n,
            additional_n: gate.stats.additional_n,
        },
        regressions: gate.regressions.clone(),
        missing: gate.missing.clone(),
        policy_violations: gate.policy_violations.clone(),
        workflow_violations: gate.workflow_violations.clone(),
        warnings: gate.warnings.iter().map(gate_lines::warning).collect(),
        // Added after 0.4.1's keys, and only with --metric pass^k.
        metric: gate_lines::metric(gate),
        // Added after 0.4.1's keys, and only outside the default mode.
        decided_by: paired.map(|_| gate.mode.as_str().to_string()),
        band_verdict: paired.map(|_| gate.band_verdict.as_str().to_string()),
        paired: paired.map(paired_block),
        intervals: paired.map(intervals_block),
        // Added after 0.4.1's keys, and only when --trust set a check aside.
        set_aside: gate.set_aside.iter().map(gate_lines::set_aside).collect(),
        // Added after 0.4.1's keys, and only with --budget.
        budgets: gate.budgets.as_ref().map(|budgets| {
            budgets
                .iter()
                .map(|b| schema::BudgetBlock {
                    budget: gate_lines::budget_expression(&b.budget),
                    verdict: b.verdict.as_str().to_string(),
                    candidate: b.candidate,
                    band: b.band,
                    limit: b.limit,
                    p_value: b.p_value,
                    scenarios: b.scenarios,
                    unmeasured: b.unmeasured.map(|u| {
                        match u {
                            Unmeasured::Run => "run",
                            Unmeasured::Band => "band",
                        }
                        .to_string()
                    }),
                    scenarios_to_tell: b.scenarios_to_tell,
                    test: b
                        .pairing
                        .map(|p| if p.paired { "paired" } else { "unpaired" }.to_string()),
                    paired_scenarios: b.pairing.map(|p| p.shared),
                })
                .collect()
        }),
    }
}

/// The `paired` object of the gate.
fn paired_block(paired: &PairedGate) -> PairedBlock {
    let s = &paired.stats;
    PairedBlock {
        verdict: paired.verdict.as_str().to_string(),
        method: s.method.as_str().to_string(),
        scenarios: s.n,
        baseline_rate: s.baseline_rate,
        candidate_rate: s.candidate_rate,
        drop: s.drop,
        discordant: s.discordant,
        regressed: paired.regressed.clone(),
        improved: paired.improved.clone(),
        p_value: s.p_value,
        alpha: ALPHA,
        power: POWER,
        required_n: s.required_n,
        additional_n: paired.additional_n,
    }
}

/// The `intervals` object of the gate.
fn intervals_block(paired: &PairedGate) -> IntervalsBlock {
    IntervalsBlock {
        confidence: CONFIDENCE,
        method: "scenario bootstrap, percentile".to_string(),
        resamples: RESAMPLES,
        seed: SEED,
        clean_rate: paired.intervals.candidate,
        difference: paired.intervals.difference,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::gate::fixtures::{self, all_clean_band, glm_band, with_failures};
    use crate::gate::{GateMode, evaluate, evaluate_mode};

    /// Batches of up to three tasks' rows, one task's rows without a failed trace among them: the
    /// rendered pieces join as the whole report's lists do.
    #[test]
    fn a_report_written_from_the_spill_is_the_bytes_of_the_report_in_memory() {
        use crate::checks::{Gating, Reasons, VerdictColumn};
        use crate::redact::Redaction;
        use crate::report::spill::SpilledRun;
        use crate::report::verdicts::{TraceFields, VerdictBatch, VerdictBatchBuilder, schema};
        use crate::report::{Measures, ReportCheck};
        let names = ["abstention", "policy", "abstention"];
        let batch = |from: usize, to: usize, fire: bool| -> VerdictBatch {
            let mut builder = VerdictBatchBuilder::new(schema(&names), to - from);
            let column = || VerdictColumn::new(to - from, Reasons::All, Redaction::Off);
            let mut columns = vec![column(), column(), column()];
            for i in from..to {
                builder.push_trace(&TraceFields {
                    trace_id: &format!("t\u{e9}{i}"),
                    scenario: &format!("s \"{}\"", i % 2),
                    steps: i,
                    measures: Measures {
                        tokens: (i % 2 == 0).then_some(i as f64 * 1.5),
                        latency_ms: Some(0.1 * i as f64),
                        cost_usd: None,
                        ..Default::default()
                    },
                    ..TraceFields::default()
                });
                // Rows 7 + RENDER_ROWS .. 7 + 2 * RENDER_ROWS, the third batch's second task, fail none.
                let quiet = (7 + RENDER_ROWS..7 + 2 * RENDER_ROWS).contains(&i);
                columns[0].push(
                    fire && i % 3 == 0 && !quiet,
                    0.123_456,
                    "abstains \"here\"\n",
                );
                columns[1].push(fire && i == 5, 1.0 / 3.0, "");
                columns[2].push(false, 0.0, "never");
            }
            builder.finish(columns).expect("verdict batch")
        };
        for fire in [true, false] {
            let traces = 7 + 2 * RENDER_ROWS + 5;
            let batches = vec![batch(0, 3, fire), batch(3, 7, fire), batch(7, traces, fire)];
            let whole = Report {
                judge: "none".into(),
                checks: names
                    .iter()
                    .map(|n| ReportCheck::rule(n, Gating::CleanRate))
                    .collect(),
                redaction: "off".into(),
                batches: batches.clone(),
                input_warnings: vec!["a warning".into()],
                failing_steps: Vec::new(),
                skipped_input: Default::default(),
                sessions: None,
            };
            let spilled = SpilledRun::of_one_file(&schema(&names), &batches);
            let empty = Report {
                batches: Vec::new(),
                ..whole.clone()
            };
            let doc = JsonReport {
                traces,
                fired: whole.fired().into_iter().collect(),
                ..report(&empty)
            };
            let source = crate::report::pass::VerdictSource::Spilled(&spilled);
            let sink = crate::report::pass::through(source, JsonSink::new(&empty, None).unwrap());
            let mut out = Vec::new();
            sink.finish(&mut out, doc, source).unwrap();
            let expected = schema::to_pretty(&report(&whole));
            assert_eq!(String::from_utf8(out).unwrap(), expected, "fired: {fire}");
            assert_eq!(expected.contains("\"failed_traces\": []"), !fire);
        }
    }

    fn value(gate: &Gate) -> Value {
        serde_json::to_value(super::gate(gate)).unwrap()
    }

    /// Reference: `faultgate check examples/gate/candidate_gpt.json --band <glm band> --json r.json`.
    #[test]
    fn gpt_candidate_against_the_glm_band_matches_the_reference() {
        let gate = evaluate(&glm_band(), &fixtures::candidate_gpt());
        let expected = json!({
            "verdict": "FAIL",
            "clean_rate": 0.4,
            "usage": {"latency_ms": {"baseline": 16483.333333333332, "candidate": 21900.0, "delta_pct": 32.9}},
            "band": [0.9333333333333333, 0.9333333333333333],
            "pass_threshold": 0.9,
            "fail_threshold": 0.8333333333333334,
            "stats": {
                "baseline_mean": 0.9333333333333333, "drop": 0.5333333333333333,
                "p_value": 1.0099101221960893e-08, "alpha": 0.05, "power": 0.8,
                "required_n": null, "additional_n": null
            },
            "regressions": ["r-0208", "r-0214", "r-0216", "r-0224", "r-0226", "r-0232", "r-0258", "r-0263",
                "r-0279", "r-0286", "r-0292", "r-0317", "r-0320", "r-0322", "r-0330", "r-0344", "r-0350"],
            "missing": [],
            "policy_violations": [],
            "warnings": ["band built from 2 baseline runs; use 3 or more for a stable noise estimate"]
        });
        assert_eq!(value(&gate), expected);
        assert_eq!(
            serde_json::to_string(&value(&gate)).expect("json"),
            serde_json::to_string(&expected).expect("json"),
            "key order"
        );
    }

    #[test]
    fn fail_by_significance_with_run_spread() {
        let gate = evaluate(
            &fixtures::spread_band(),
            &fixtures::spread_candidate(&[1, 2, 3]),
        );
        let expected = json!({
            "verdict": "FAIL", "clean_rate": 0.8095238095238095,
            "usage": {"cost_usd": {"baseline": 0.2, "candidate": 0.9285714285714286, "delta_pct": 364.3}},
            "band": [0.95, 1], "pass_threshold": 0.9023809523809523, "fail_threshold": 0.8071428571428572,
            "stats": {"baseline_mean": 0.9753968253968254, "drop": 0.16587301587301584,
                "p_value": 0.034735753288469784, "alpha": 0.05, "power": 0.8,
                "required_n": null, "additional_n": null},
            "regressions": ["s01", "q"], "missing": ["zz"], "policy_violations": [],
            // 0.4.1 lists the first warning only.
            "warnings": ["1 band scenario(s) absent from this run, counted as not clean",
                "1 scenario(s) of this run are not in the band and were not gated (1 of their traces failed)"]
        });
        assert_eq!(value(&gate), expected);
    }

    #[test]
    fn workflow_violations_appear_only_when_the_workflow_check_ran() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        run.workflow_violations = Some(vec!["t-skipped".into()]);
        let blocked = value(&evaluate(&band, &run));
        let keys: Vec<&str> = blocked
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys[keys.len() - 3..],
            ["policy_violations", "workflow_violations", "warnings"]
        );
        assert_eq!(blocked["workflow_violations"], json!(["t-skipped"]));
        run.workflow_violations = Some(Vec::new());
        assert_eq!(
            value(&evaluate(&band, &run))["workflow_violations"],
            json!([])
        );
        // Without the workflow check the gate object keeps 0.4.1's keys.
        assert!(
            value(&evaluate(&band, &with_failures(0)))
                .get("workflow_violations")
                .is_none()
        );
    }

    #[test]
    fn paired_keys_appear_only_outside_the_band_mode() {
        let band = fixtures::worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        let plain = evaluate_mode(
            &band,
            &fixtures::worked_candidate(),
            GateMode::Band,
            Some(&clean_runs),
            None,
        );
        assert!(value(&plain).get("paired").is_none());
        assert!(value(&plain).get("decided_by").is_none());
        let mut run = fixtures::worked_candidate();
        fixtures::set_clean(&mut run, |i, _, clean| clean || (1..7).contains(&i));
        let paired = value(&evaluate_mode(
            &band,
            &run,
            GateMode::Paired,
            Some(&clean_runs),
            None,
        ));
        assert_eq!(paired["decided_by"], "paired");
        assert_eq!(paired["band_verdict"], "PASS");
        assert_eq!(paired["paired"]["verdict"], "PASS");
        assert_eq!(paired["intervals"]["seed"], 16);
        let keys: Vec<&str> = paired
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys[keys.len() - 5..],
            [
                "warnings",
                "decided_by",
                "band_verdict",
                "paired",
                "intervals"
            ]
        );
    }
}
