//! The `--markdown` summary: a PR comment with the verdict, the gate, the fired checks, the policy hard
//! block, the failing traces, usage against the baseline and the command to reproduce the run.
//!
//! ## Format
//!
//! Line for line as faultgate 0.4.1 writes it (docs/compatibility.md §16), with one addition: when a band is
//! given, a small Unicode chart of the baseline's per-run clean rates, the band and this run follows the
//! gate lines, fenced by `<!-- faultgate:chart -->` and `<!-- /faultgate:chart -->` so tools can strip
//! it. The chart's lines do not count toward the 200-line cap of the policy table, so the rest of the
//! document is 0.4.1's byte for byte.
//!
//! Reasons and scenario keys come from the [`Report`], already redacted; trace ids are cut to 12 code
//! points; no prompt, answer or tool payload is written except where a reason quotes one.
//!
//! A run that reads a format whose trace ids are names ([`IdColumn::Wide`]) shows ids as its
//! terminal table does, and cuts reasons and keys on a word. An id with a pipe is then written outside
//! a code span, its pipe as `&#124;`: in a table, a pipe inside a code span must still be escaped as
//! `\|`, which GitHub shows as `|` but other renderers show as written.

use std::collections::HashMap;

use serde_json::Value;

use super::repro::PIP_INSTALL;
use super::shown::{IdColumn, code_span, cut_on_word};
use crate::compat::fmt::{fmt_fixed, fmt_signed1, fmt_thousands0, md_cell};
use crate::gate::Gate;
use crate::gate::band::BandFile;
use crate::report::shown_rows::RunCounts;
use crate::report::{OutcomeSummary, Report, Row};

/// The policy table stops once the document has this many lines.
pub(crate) const MAX_LINES_FOR_POLICY_ROWS: usize = 200;
/// Failing traces and regressions listed before the rest is summarised.
pub(crate) const MAX_LISTED: usize = 20;
/// Cells of the chart's 0-to-1 scale (one cell = 0.05).
const CHART_CELLS: usize = 20;
/// Per-run marks in the sparkline before it is cut.
const MAX_SPARK_RUNS: usize = 60;

/// A gate and the band it was evaluated against.
pub(crate) struct GateContext<'a> {
    pub gate: &'a Gate,
    pub band: &'a BandFile,
}

/// Everything the summary shows.
pub(crate) struct Summary<'a> {
    pub report: &'a Report,
    pub outcome: Option<&'a OutcomeSummary>,
    pub gate: Option<GateContext<'a>>,
    /// The reproduce command ([`super::repro::command`]).
    pub command: &'a str,
    /// pass^k over trials, when some scenario has several traces.
    pub pass_k: Option<&'a crate::gate::passk::PassKTable>,
    /// `check --explain`'s explanations (none without it).
    pub explanations: &'a [crate::report::explanation::Explanation],
    /// The whole run's counts when `report` holds only the rows shown ([`crate::report::shown_rows`]); `None`
    /// counts `report`.
    pub counts: Option<&'a RunCounts<'a>>,
    /// How trace ids are shown, and whether reasons and keys keep 0.4.1's cut.
    pub ids: IdColumn,
}

/// The run's verdict: the gate's, or FAIL when any trace failed and PASS otherwise.
pub(crate) fn overall_verdict(report: &Report, gate: Option<&Gate>) -> &'static str {
    match gate {
        Some(g) => g.verdict.as_str(),
        None if report.failed_traces().is_empty() => "PASS",
        None => "FAIL",
    }
}

fn head(id: &str, n: usize) -> &str {
    match id.char_indices().nth(n) {
        Some((cut, _)) => &id[..cut],
        None => id,
    }
}

/// The most characters of a reason or key in a table cell (0.4.1 cuts its cells there too, though
/// mid-word).
const CELL_CHARS: usize = 160;

/// A trace id's table cell: 0.4.1's code span of its first 12 characters, or as a run of newer
/// formats shows it.
fn id_cell(id: &str, ids: IdColumn) -> String {
    match ids {
        IdColumn::Cut => format!("`{}`", md_cell(head(id, 12))),
        IdColumn::Wide => {
            let shown = ids.shown(id);
            if shown.contains(['|', '`']) {
                plain_cell(&shown)
            } else {
                code_span(&shown)
            }
        }
    }
}

/// A reason's or key's table cell: 0.4.1's, or cut on a word for a run of named ids.
fn text_cell(text: &str, ids: IdColumn) -> String {
    match ids {
        IdColumn::Cut => md_cell(text),
        IdColumn::Wide => cut_on_word(text, CELL_CHARS).replace('|', "\\|"),
    }
}

/// `text` as plain Markdown in a table cell: the characters Markdown would read as markup escaped, a
/// pipe as `&#124;` (which does not end the cell, and every renderer shows as `|`).
fn plain_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '|' => out.push_str("&#124;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// Results of each trace id, for traces whose results were split over several records.
pub(crate) fn results_by_id(report: &Report) -> HashMap<&str, Vec<Row<'_>>> {
    let mut map: HashMap<&str, Vec<Row<'_>>> = HashMap::new();
    for r in report.rows() {
        map.entry(r.trace_id()).or_default().push(r);
    }
    map
}

/// Renders the summary; the text ends with a single newline.
pub(crate) fn render(summary: &Summary<'_>) -> String {
    let report = summary.report;
    let gate = summary.gate.as_ref().map(|g| g.gate);
    let whole;
    let counts = match summary.counts {
        Some(counts) => counts,
        None => {
            whole = RunCounts::of_report(report);
            &whole
        }
    };
    let mut lines: Vec<String> = vec![
        "<!-- faultgate -->".into(),
        format!("## faultgate: {}", overall_verdict(report, gate)),
        String::new(),
    ];
    let mut chart_lines = 0;
    if let Some(GateContext { gate, band }) = &summary.gate {
        lines.extend(super::gate_lines::markdown_lines(gate, &band.runs_text()));
        lines.push(String::new());
        let chart = chart(gate, band);
        chart_lines = chart.len();
        lines.extend(chart);
    }
    lines.push(format!(
        "{}/{} traces failed{} \u{b7} judge {} \u{b7} redaction {}",
        counts.failed,
        counts.traces,
        counts.recorded_outcomes.phrase(),
        report.judge,
        report.redaction
    ));
    if let Some(table) = summary.pass_k {
        lines.extend(super::gate_lines::pass_k_markdown(table));
    }
    if let Some(o) = summary.outcome {
        let rate = if o.judged > 0 {
            format!(
                "{}/{} true ({})",
                o.true_count,
                o.judged,
                fmt_fixed(o.outcome_rate.unwrap_or(0.0), 2)
            )
        } else {
            "no scenario has an outcome".to_string()
        };
        lines.push(String::new());
        lines.push(format!(
            "**Outcome:** {rate} \u{b7} {} without an outcome \u{b7} structural clean rate {}",
            o.missing,
            fmt_fixed(o.structural_clean_rate, 2)
        ));
    }
    if !report.input_warnings.is_empty() {
        lines.push(String::new());
        lines.push("**Input warnings:**".into());
        lines.push(String::new());
        // One line per kind: a PR comment of 45 clash warnings of 600 characters each hid the table.
        for w in super::warnings::summary(
            report.input_warnings.iter().map(String::as_str),
            "the JSON report lists each",
        ) {
            lines.push(format!("- {}", md_cell(&w)));
        }
    }
    lines.push(String::new());
    lines.push("| check | fired |".into());
    lines.push("|---|---|".into());
    for &(name, count) in &counts.fired {
        lines.push(format!("| {} | {count} |", md_cell(name)));
    }

    let violations = match gate {
        Some(g) => g.policy_violations.len(),
        None => counts.policy_blocked,
    };
    if violations > 0 {
        lines.extend([
            String::new(),
            "### Policy: hard block".into(),
            String::new(),
            format!(
                "Policy violated in {violations} trace(s); the gate fails whatever the clean rate."
            ),
            String::new(),
            "| trace | reason |".into(),
            "|---|---|".into(),
        ]);
        'rows: for r in report.rows() {
            for (check, v) in report.checks.iter().zip(r.verdicts()) {
                if !v.detected || check.role.gating != crate::checks::Gating::PolicyBlock {
                    continue;
                }
                if lines.len() - chart_lines >= MAX_LINES_FOR_POLICY_ROWS {
                    break 'rows;
                }
                lines.push(format!(
                    "| {} | {} |",
                    id_cell(r.trace_id(), summary.ids),
                    text_cell(v.reason.unwrap_or_default(), summary.ids)
                ));
            }
        }
    }

    // A digest holds the run's first failing traces: those listed.
    let failed = report.failed_traces();
    if !failed.is_empty() {
        let mut title = "### Failing traces".to_string();
        if counts.failed > MAX_LISTED {
            title.push_str(&format!(" (first {MAX_LISTED} of {})", counts.failed));
        }
        lines.extend([
            String::new(),
            title,
            String::new(),
            "| scenario | trace | check | reason |".into(),
            "|---|---|---|---|".into(),
        ]);
        let by_id = results_by_id(report);
        for id in failed.iter().take(MAX_LISTED) {
            let records = &by_id[id];
            let scenario = text_cell(records[0].scenario(), summary.ids);
            for r in records {
                for (check, v) in report.checks.iter().zip(r.verdicts()) {
                    if v.detected {
                        lines.push(format!(
                            "| {scenario} | {} | {} | {} |",
                            id_cell(id, summary.ids),
                            md_cell(&check.name),
                            text_cell(v.reason.unwrap_or_default(), summary.ids)
                        ));
                    }
                }
            }
        }
    }

    lines.extend(crate::report::explanation::markdown_lines(
        summary.explanations,
        summary.ids,
    ));

    if let Some(g) = gate.filter(|g| !g.usage.is_empty()) {
        lines.extend([
            String::new(),
            "### Latency and cost vs baseline".into(),
            String::new(),
            "| | baseline | this run | \u{394} |".into(),
            "|---|---|---|---|".into(),
        ]);
        for delta in &g.usage {
            let measure = delta.measure.as_str();
            let label = match measure {
                "tokens" => "tokens / run",
                "latency_ms" => "latency / run",
                "cost_usd" => "cost / run",
                other => other,
            };
            let fmt = |v: f64| match measure {
                "latency_ms" => format!("{} s", fmt_fixed(v / 1000.0, 1)),
                "cost_usd" => format!("${}", fmt_fixed(v, 4)),
                _ => fmt_thousands0(v),
            };
            lines.push(format!(
                "| {label} | {} | {} | {}% |",
                fmt(number(&delta.baseline)),
                fmt(delta.candidate),
                fmt_signed1(delta.delta_pct)
            ));
        }
    }

    lines.extend([
        String::new(),
        "### Reproduce locally".into(),
        String::new(),
        "```sh".into(),
        PIP_INSTALL.into(),
        summary.command.to_string(),
        "```".into(),
        String::new(),
    ]);
    lines.join("\n")
}

/// Cell index of a rate on the chart's scale; out-of-range and NaN rates are clamped.
fn cell_of(rate: f64) -> usize {
    let x = if rate.is_nan() {
        0.0
    } else {
        rate.clamp(0.0, 1.0)
    };
    ((x * CHART_CELLS as f64).floor() as usize).min(CHART_CELLS - 1)
}

/// A horizontal bar of `rate` over [`CHART_CELLS`] cells, in eighths of a cell.
fn bar(rate: f64) -> String {
    const PARTIAL: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let x = if rate.is_nan() {
        0.0
    } else {
        rate.clamp(0.0, 1.0)
    };
    let eighths = (x * (CHART_CELLS * 8) as f64).round() as usize;
    let (full, part) = (eighths / 8, eighths % 8);
    let mut out: String = "█".repeat(full);
    let mut used = full;
    if part > 0 {
        out.push(PARTIAL[part]);
        used += 1;
    }
    out.extend(std::iter::repeat_n('·', CHART_CELLS - used));
    out
}

/// A sparkline of rates on a 0-to-1 scale, one mark per run.
fn sparkline(rates: &[f64]) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let mut out: String = rates
        .iter()
        .take(MAX_SPARK_RUNS)
        .map(|r| {
            let x = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
            LEVELS[((x * 7.0).round() as usize).min(7)]
        })
        .collect();
    if rates.len() > MAX_SPARK_RUNS {
        out.push('…');
    }
    out
}

/// The chart block: baseline per-run rates, the band with the fail threshold, and this run.
fn chart(gate: &Gate, band: &BandFile) -> Vec<String> {
    let (lo, hi) = (band.lo, band.hi);
    let band_row: String = (0..CHART_CELLS)
        .map(|i| {
            if (cell_of(lo)..=cell_of(hi)).contains(&i) {
                '█'
            } else if i == cell_of(gate.fail_threshold) && gate.fail_threshold >= 0.0 {
                '|'
            } else {
                '·'
            }
        })
        .collect();
    let per_run = &band.per_run;
    let (min, max) = per_run
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| {
            (a.min(*r), b.max(*r))
        });
    vec![
        "<!-- faultgate:chart -->".into(),
        "```text".into(),
        format!(
            "baseline runs  {}  {} run(s), clean rate {} to {}",
            sparkline(per_run),
            per_run.len(),
            fmt_fixed(min, 2),
            fmt_fixed(max, 2)
        ),
        format!(
            "band           {band_row}  [{}, {}], fail below {} (|)",
            fmt_fixed(lo, 2),
            fmt_fixed(hi, 2),
            fmt_fixed(gate.fail_threshold, 2)
        ),
        format!(
            "this run       {}  {} {}",
            bar(gate.clean_rate),
            fmt_fixed(gate.clean_rate, 2),
            gate.verdict.as_str()
        ),
        "               0        0.5        1".into(),
        "```".into(),
        "<!-- /faultgate:chart -->".into(),
        String::new(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Gating, Reasons, VerdictColumn};
    use crate::gate::{Verdict, evaluate};
    use crate::redact::Redaction;
    use crate::report::ReportCheck;
    use crate::report::gate_input::run_summary;
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};
    use serde_json::json;

    /// A run over `s00`..`s29` where `search_loop` fires on the first `failing` traces and `policy` on
    /// the first `violations`.
    fn report(failing: usize, violations: usize) -> Report {
        let checks = ["search_loop", "policy"];
        let mut builder = VerdictBatchBuilder::new(schema(&checks), 30);
        let column = || VerdictColumn::new(30, Reasons::All, Redaction::Off);
        let (mut search_loop, mut policy) = (column(), column());
        for i in 0..30 {
            builder.push_trace(&TraceFields {
                trace_id: &format!("trace{i:02}-0123456789abcdef"),
                scenario: &format!("s{i:02}"),
                agent: Some("agent"),
                steps: 3,
                ..TraceFields::default()
            });
            let fails = i < failing;
            search_loop.sure(
                fails,
                if fails {
                    "no answer, 12 steps (cap)"
                } else {
                    ""
                },
            );
            let violates = i < violations;
            policy.sure(
                violates,
                if violates {
                    "tool 'rm' is not allowed | x"
                } else {
                    ""
                },
            );
        }
        Report {
            judge: "none".into(),
            checks: vec![
                ReportCheck::rule("search_loop", Gating::CleanRate),
                ReportCheck::rule("policy", Gating::PolicyBlock),
            ],
            redaction: "builtin".into(),
            batches: vec![
                builder
                    .finish(vec![search_loop, policy])
                    .expect("verdict batch"),
            ],
            input_warnings: Vec::new(),
            failing_steps: Vec::new(),
            skipped_input: Default::default(),
            sessions: None,
        }
    }

    /// An all-clean two-run band over `s00`..`s29` (the worked numbers of docs/compatibility.md §15.3).
    fn band() -> BandFile {
        let keys: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
        let value = json!({
            "judge": "none", "checks": ["search_loop", "policy"], "runs": 2, "n": 30,
            "scenarios": keys, "clean_rate": {"min": 1, "max": 1, "mean": 1, "per_run": [1, 1]},
            "clean_in_all_runs": keys, "usage": {"tokens": null, "latency_ms": null, "cost_usd": null},
        });
        BandFile::from_value(std::path::Path::new("band.json"), &value).expect("band")
    }

    fn render_against_band(report: &Report) -> (Gate, String) {
        let band = band();
        let gate = evaluate(&band, &run_summary(report));
        let text = render(&Summary {
            report,
            outcome: None,
            gate: Some(GateContext {
                gate: &gate,
                band: &band,
            }),
            command: "faultgate check run.json --band band.json",
            pass_k: None,
            explanations: &[],
            counts: None,
            ids: IdColumn::Cut,
        });
        (gate, text)
    }

    #[test]
    fn input_warnings_are_summed_up_by_kind() {
        let clash = |n: usize| {
            format!(
                "trace id t{n} is used by different traces in a/{n}.json and b/{n}.json (span t{n}:root differs): they are kept apart, the second as t{n}@b/{n}.json"
            )
        };
        let mut run = report(0, 0);
        run.input_warnings = vec![clash(1), clash(2), clash(3), "skipped a.json".into()];
        let (_, text) = render_against_band(&run);
        let listed: Vec<&str> = text.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(listed.len(), 2, "{text}");
        // Cut as every Markdown cell is.
        assert!(
            listed[0].starts_with(
                "- 3 trace ids used by different traces in two files, kept apart (the JSON report lists each); first: trace id t1 is used"
            ),
            "{text}"
        );
        assert_eq!(listed[1], "- skipped a.json");
    }

    #[test]
    fn a_run_of_named_ids_keeps_pipes_out_of_code_spans_and_cuts_on_a_word() {
        // Cut: 0.4.1's cells, an escaped pipe inside the code span included.
        assert_eq!(
            id_cell("a|bcdefghijklmnop", IdColumn::Cut),
            "`a\\|bcdefghijk`"
        );
        // Wide: an id with a pipe is plain text, its pipe an entity; one without stays a code span.
        assert_eq!(
            id_cell("task-[x]a_b|c#0@run", IdColumn::Wide),
            "task-\\[x\\]a\\_b&#124;c#0@run"
        );
        assert_eq!(
            id_cell("marshmallow-code__marshmallow-1359", IdColumn::Wide),
            "`marshmallow-code__marshmallow-1359`"
        );
        let long = format!("{} the end", "word ".repeat(40));
        assert_eq!(md_cell(&long).chars().last(), Some(' '));
        let cut = text_cell(&long, IdColumn::Wide);
        assert!(
            cut.ends_with("word…") && cut.chars().count() <= CELL_CHARS,
            "{cut}"
        );
        assert_eq!(text_cell("a | b", IdColumn::Wide), "a \\| b");
        assert_eq!(code_span("a|b"), "`a|b`");
        assert_eq!(code_span("`x` y"), "`` `x` y ``");
    }

    #[test]
    fn inconclusive_says_how_many_scenarios_are_missing() {
        let (gate, text) = render_against_band(&report(2, 0));
        assert_eq!(gate.verdict, Verdict::Inconclusive);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "## faultgate: INCONCLUSIVE");
        assert_eq!(
            lines[3],
            "**Gate:** clean rate 0.93 vs band [1.00, 1.00] from 2 baseline runs \u{b7} fail below 0.90 \u{b7} p=0.072"
        );
        assert_eq!(
            lines[4],
            "Not enough evidence: a drop of 0.07 needs 89 scenarios (\u{3b1} 0.05, power 0.80); run 59 more."
        );
        assert_eq!(
            lines[5],
            "**Regressions** (clean in every baseline run, not now): `s00`, `s01`"
        );
        assert!(
            text.contains("this run       ██████████████████▋·  0.93 INCONCLUSIVE"),
            "{text}"
        );
        assert!(!text.contains("### Policy"));
        assert!(text.ends_with("faultgate check run.json --band band.json\n```\n"));
    }

    #[test]
    fn a_significant_drop_fails_without_the_inconclusive_line() {
        let (gate, text) = render_against_band(&report(3, 0));
        assert_eq!(gate.verdict, Verdict::Fail);
        assert!(
            text.starts_with("<!-- faultgate -->\n## faultgate: FAIL\n\n**Gate:** clean rate 0.90")
        );
        assert!(text.contains("p=0.034\n"));
        assert!(!text.contains("Not enough evidence"));
        assert!(text.contains("3/30 traces failed \u{b7} judge none \u{b7} redaction builtin"));
    }

    #[test]
    fn a_policy_violation_is_a_hard_block_listing_each_broken_rule() {
        let (gate, text) = render_against_band(&report(0, 1));
        assert_eq!(gate.verdict, Verdict::Fail);
        let block = "\n### Policy: hard block\n\nPolicy violated in 1 trace(s); the gate fails whatever the clean rate.\n\n\
                     | trace | reason |\n|---|---|\n| `trace00-0123` | tool 'rm' is not allowed \\| x |\n";
        assert!(text.contains(block), "{text}");
        assert!(
            text.contains("| s00 | `trace00-0123` | policy | tool 'rm' is not allowed \\| x |")
        );
        // Without a band the block comes from the fired policy check.
        let plain = render(&Summary {
            report: &report(0, 1),
            outcome: None,
            gate: None,
            command: "faultgate check run.json",
            pass_k: None,
            explanations: &[],
            counts: None,
            ids: IdColumn::Cut,
        });
        assert!(plain.contains(block));
        assert!(!plain.contains("faultgate:chart"));
    }

    #[test]
    fn failing_traces_stop_at_twenty() {
        let text = render(&Summary {
            report: &report(25, 0),
            outcome: None,
            gate: None,
            command: "faultgate check run.json",
            pass_k: None,
            explanations: &[],
            counts: None,
            ids: IdColumn::Cut,
        });
        assert!(text.contains("### Failing traces (first 20 of 25)"));
        assert_eq!(text.matches("| search_loop | no answer").count(), 20);
    }

    #[test]
    fn bar_fills_eighths_and_pads_to_the_scale() {
        assert_eq!(bar(0.0), "·".repeat(20));
        assert_eq!(bar(1.0), "█".repeat(20));
        assert_eq!(bar(0.3), format!("{}{}", "█".repeat(6), "·".repeat(14)));
        assert_eq!(bar(0.325).chars().nth(6), Some('▌'));
        assert_eq!(bar(f64::NAN).chars().count(), 20);
        assert_eq!(bar(7.0), "█".repeat(20));
    }

    #[test]
    fn sparkline_maps_rates_to_levels_and_cuts_long_runs() {
        assert_eq!(sparkline(&[0.0, 0.5, 1.0]), "▁▅█");
        let long = sparkline(&vec![1.0; 100]);
        assert_eq!(long.chars().count(), MAX_SPARK_RUNS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn cells_clamp_to_the_scale() {
        assert_eq!(cell_of(0.0), 0);
        assert_eq!(cell_of(1.0), 19);
        assert_eq!(cell_of(0.93), 18);
        assert_eq!(cell_of(-2.0), 0);
    }
}
