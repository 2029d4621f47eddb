//! The `--html FILE` report: one self-contained page to look at a run.
//!
//! It shows the verdict and the gate line; with a band, an inline SVG chart of the baseline runs'
//! clean rates, the band, the fail threshold and this run; the checks by fired count; and the failing
//! traces (scenario, trace id, tool steps, check and its redacted reason), which a row of radio buttons
//! filters by check with CSS alone, so the filter works without JavaScript. Below them, the steps of
//! each failing trace the run kept ([`crate::report::steps`]), in `<details>` blocks the rows link to, with
//! the steps a reason names marked. With `check --explain`, a section before them holds each
//! explanation ([`crate::report::explanation`]) with the candidate's and the baseline trace's steps side by
//! side and the divergent step of each marked.
//!
//! The page makes no request: styles are inline, the chart is inline SVG, there are no scripts, links
//! to other hosts, fonts or images, and a Content-Security-Policy of `default-src 'none'` forbids any
//! that a future edit might add. Every text comes from the report, whose reasons, scenario keys and
//! agents are already redacted, and is HTML-escaped. The viewport meta and a wrapping layout keep it
//! readable on a phone. The bytes depend only on the verdicts.

use std::fmt::Write as _;

use super::markdown::{overall_verdict, results_by_id};
use crate::compat::fmt::fmt_fixed;
use crate::gate::Gate;
use crate::gate::band::BandFile;
use crate::report::shown_rows::RunCounts;
use crate::report::{OutcomeSummary, Report};

/// Failing (trace, check) rows listed before the table is cut; a page stays small enough to open.
pub(crate) const MAX_ROWS: usize = 2000;

/// Everything the page shows.
pub(crate) struct Page<'a> {
    pub report: &'a Report,
    pub outcome: Option<&'a OutcomeSummary>,
    pub gate: Option<(&'a Gate, &'a BandFile)>,
    /// The reproduce command ([`super::repro::command`]).
    pub command: &'a str,
    /// `check --explain`'s explanations (none without it).
    pub explanations: &'a [crate::report::explanation::Explanation],
    /// The whole run's counts when `report` holds only the rows shown ([`crate::report::digest`]); `None`
    /// counts `report`.
    pub counts: Option<&'a RunCounts<'a>>,
}

/// Escapes text for HTML element content and double-quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline cannot appear in an HTML document.
            c if c.is_control() && c != '\t' && c != '\n' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

// The failing table's layout is fixed, with widths for all but the reason column, and every cell may
// break anywhere: a key with no break opportunity (tau2's telecom task keys run past 100 characters)
// would otherwise set its column's minimum width and squeeze the reason out of the page.
const STYLE: &str = "\
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;padding:1rem;max-width:72rem;color:#1b1b1b;background:#fff}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
.v{padding:.05rem .5rem;border-radius:.3rem;color:#fff}.v-PASS{background:#1a7f37}.v-FAIL{background:#cf222e}.v-INCONCLUSIVE{background:#9a6700}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #ddd;vertical-align:top;overflow-wrap:anywhere}
#failing{table-layout:fixed}#failing th:nth-child(1){width:24%}#failing th:nth-child(2){width:22%}#failing th:nth-child(3){width:3.5rem}#failing th:nth-child(4){width:11rem}
summary,h3{overflow-wrap:anywhere}
td.n{text-align:right;font-variant-numeric:tabular-nums}code{font-size:.9em;word-break:break-all}
.reason{background:#fff1e5;border-left:3px solid #cf222e;padding:.15rem .4rem;overflow-wrap:anywhere}
.scroll{overflow-x:auto}svg{max-width:100%;height:auto}
.filter{display:flex;flex-wrap:wrap;gap:.3rem;margin:.4rem 0}input[name=filter]{position:absolute;opacity:0}
.filter label{border:1px solid #888;border-radius:1rem;padding:.1rem .6rem;cursor:pointer}
.muted{color:#666}details.trace{border:1px solid #ddd;border-radius:.3rem;padding:.3rem .6rem;margin:.4rem 0}details.trace summary{cursor:pointer}tr.hit td{background:#fff1e5}tr.hit td:first-child{border-left:3px solid #cf222e}tr.err td:nth-child(4){color:#cf222e}tr.others td{color:#666;font-style:italic}.actor{font-size:.75em;font-style:normal;border:1px solid #999;border-radius:.6em;padding:0 .4em;margin-left:.3em}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.6rem}
@media (max-width:40rem){#failing thead{display:none}#failing tr{display:block;border-bottom:1px solid #ccc;padding:.3rem 0}#failing td{display:block;border:0;padding:.1rem .3rem}#failing td.n{text-align:left}#failing td.n::after{content:' tool steps';color:#666}}
";

/// The styles of the explanations' step lists, side by side (one above the other on a phone).
const EXPLAIN_STYLE: &str = "\
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.8rem}.pair h3{font-size:1rem;margin:.4rem 0}tr.div td{background:#fff1e5}tr.div td:first-child{border-left:3px solid #cf222e}
@media (max-width:40rem){.pair{grid-template-columns:1fr}}
";

/// Where each regression left the baseline: per explanation, a `<details>` block (the first open)
/// with the candidate's and the baseline trace's steps side by side and the divergent step of each
/// marked (the answer row, when the divergence is past a side's last step).
fn explanations(explanations: &[crate::report::explanation::Explanation]) -> String {
    let mut h = String::from(
        "<section id=\"explanations\">\n<h2>Where the regressions left the baseline</h2>\n",
    );
    for (i, e) in explanations.iter().enumerate() {
        let _ = writeln!(
            h,
            "<details class=\"trace\" id=\"e{i}\"{}><summary>{}</summary>\n<p><span class=\"reason\">{}: {}</span></p>\n<div class=\"pair\">",
            if i == 0 { " open" } else { "" },
            escape(&e.line()),
            escape(&e.check),
            escape(&e.reason)
        );
        let sides = [
            (
                "this run",
                &e.trace_id,
                &e.candidate_steps,
                e.step,
                &e.candidate_answer,
            ),
            (
                e.baseline_run.as_str(),
                &e.baseline_trace_id,
                &e.baseline_steps,
                e.baseline_step,
                &e.baseline_answer,
            ),
        ];
        for (title, trace_id, steps, marked, answer) in sides {
            let _ = writeln!(
                h,
                "<div class=\"scroll\"><h3>{} \u{b7} <code>{}</code></h3>\n<table class=\"steps\">\n<thead><tr><th>#</th><th>tool</th><th>arguments</th><th>result</th></tr></thead>\n<tbody>",
                escape(title),
                escape(trace_id)
            );
            // The first steps, and the marked one wherever it is.
            let shown = steps.len().min(crate::report::steps::MAX_STEPS.max(marked));
            for (k, step) in steps.iter().take(shown).enumerate() {
                let mut classes = Vec::new();
                if k + 1 == marked {
                    classes.push("div");
                }
                if step.error {
                    classes.push("err");
                }
                step_row(&mut h, k + 1, step, classes);
            }
            if steps.len() > shown {
                let _ = writeln!(
                    h,
                    "<tr><td></td><td colspan=\"3\" class=\"muted\">{} more steps not shown</td></tr>",
                    steps.len() - shown
                );
            }
            let answer_class = if marked > steps.len() {
                " class=\"div\""
            } else {
                ""
            };
            let _ = writeln!(
                h,
                "<tr{answer_class}><td></td><td>answer</td><td colspan=\"2\">{}</td></tr>\n</tbody>\n</table></div>",
                answer
                    .as_deref()
                    .map_or_else(|| "<span class=\"muted\">none</span>".to_string(), escape)
            );
        }
        h.push_str("</div>\n</details>\n");
    }
    h.push_str("</section>\n");
    h
}

/// The label of a step that is not the agent's (a simulated user's tool), with its row's class: no
/// One step's row of a steps table: its number, tool and actor, arguments and result.
fn step_row(
    h: &mut String,
    number: usize,
    step: &crate::report::steps::StepView,
    mut classes: Vec<&str>,
) {
    let actor = actor_label(step, &mut classes);
    let _ = writeln!(
        h,
        "<tr class=\"{}\"><td class=\"n\">{number}</td><td>{}{actor}</td><td><code>{}</code></td><td><code>{}</code></td></tr>",
        classes.join(" "),
        escape(&step.tool),
        escape(&step.arguments),
        escape(&step.result)
    );
}

/// rule judged it, so a reader must not take it for the agent's. Empty for the agent's steps.
fn actor_label(step: &crate::report::steps::StepView, classes: &mut Vec<&str>) -> String {
    match &step.actor {
        Some(actor) => {
            classes.push("others");
            format!(
                " <span class=\"actor\" title=\"not the agent's step: not judged\">{}</span>",
                escape(actor)
            )
        }
        None => String::new(),
    }
}

/// The steps of each failing trace that kept them, as a `<details>` block (open and close without
/// JavaScript), with the steps a reason names marked.
fn trace_steps(report: &Report) -> String {
    let mut h = String::from("<section>\n<h2>Steps of failing traces</h2>\n");
    let by_id = results_by_id(report);
    let mut seen = std::collections::HashSet::new();
    for (i, trace) in report.failing_steps.iter().enumerate() {
        if !seen.insert(trace.trace_id.as_str()) {
            continue;
        }
        let mut named = std::collections::HashSet::new();
        let mut fired = Vec::new();
        for r in by_id.get(trace.trace_id.as_str()).into_iter().flatten() {
            for (check, v) in report.checks.iter().zip(r.verdicts()) {
                if v.detected {
                    fired.push(check.name.as_str());
                    named.extend(crate::report::steps::steps_named(
                        v.reason.unwrap_or_default(),
                    ));
                }
            }
        }
        let _ = writeln!(
            h,
            "<details class=\"trace\" id=\"t{i}\"><summary><code>{}</code> \u{b7} {} \u{b7} {} steps</summary>",
            escape(&trace.trace_id),
            escape(&fired.join(", ")),
            trace.steps.len() + trace.more
        );
        if trace.steps.is_empty() {
            h.push_str("<p class=\"muted\">No tool step.</p>\n");
        } else {
            h.push_str("<div class=\"scroll\"><table class=\"steps\">\n<thead><tr><th>#</th><th>tool</th><th>arguments</th><th>result</th></tr></thead>\n<tbody>\n");
            for (k, step) in trace.steps.iter().enumerate() {
                let mut classes = Vec::new();
                if named.contains(&(k + 1)) {
                    classes.push("hit");
                }
                if step.error {
                    classes.push("err");
                }
                step_row(&mut h, k + 1, step, classes);
            }
            h.push_str("</tbody>\n</table></div>\n");
            if trace.more > 0 {
                let _ = writeln!(
                    h,
                    "<p class=\"muted\">{} more steps not shown.</p>",
                    trace.more
                );
            }
        }
        h.push_str("</details>\n");
    }
    h.push_str("</section>\n");
    h
}

/// Renders the page; the text ends with a newline.
pub(crate) fn render(page: &Page<'_>) -> String {
    let report = page.report;
    let gate = page.gate.map(|(g, _)| g);
    let verdict = overall_verdict(report, gate);
    let whole;
    let counts = match page.counts {
        Some(counts) => counts,
        None => {
            whole = RunCounts::of_report(report);
            &whole
        }
    };
    let mut h = String::new();
    let fired = {
        let mut fired = counts.fired.clone();
        // By fired count, most first; ties keep selection order (the sort is stable).
        fired.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        fired
    };
    let filters: Vec<&str> = fired
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, _)| *name)
        .collect();

    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(h, "<title>faultgate: {verdict}</title>");
    h.push_str("<style>\n");
    h.push_str(STYLE);
    if !page.explanations.is_empty() {
        h.push_str(EXPLAIN_STYLE);
    }
    for (i, _) in filters.iter().enumerate() {
        // Checking filter i hides the failing rows of every other check, and marks its own label.
        let _ = writeln!(
            h,
            "#f{i}:checked~.scroll tr.row:not(.c{i}){{display:none}}#f{i}:checked~.filter label[for=f{i}]{{background:#1b1b1b;color:#fff}}"
        );
    }
    h.push_str(
        "#fall:checked~.filter label[for=fall]{background:#1b1b1b;color:#fff}\n</style>\n</head>\n<body>\n",
    );

    let _ = writeln!(
        h,
        "<header>\n<h1>faultgate: <span class=\"v v-{verdict}\" id=\"verdict\">{verdict}</span></h1>"
    );
    if let Some(g) = gate {
        let _ = writeln!(
            h,
            "<p id=\"gate\">{}</p>",
            escape(&super::junit::gate_line(report, Some(g)))
        );
        for w in super::gate_lines::shown_warnings(g) {
            let _ = writeln!(h, "<p class=\"gate-warning\">warning: {}</p>", escape(&w));
        }
        for line in super::gate_lines::set_aside_lines(g) {
            let _ = writeln!(h, "<p class=\"gate-set-aside\">{}</p>", escape(&line));
        }
    }
    // As the terminal summary says it: only a run with steps of others than the agent shows it.
    let unjudged = if counts.user_steps == 0 {
        String::new()
    } else {
        format!(" \u{b7} {} user step(s) not judged", counts.user_steps)
    };
    let _ = writeln!(
        h,
        "<p>{}/{} traces failed{unjudged}{} \u{b7} judge {} \u{b7} redaction {}</p>",
        counts.failed,
        counts.traces,
        escape(&counts.recorded_outcomes.phrase()),
        escape(&report.judge),
        escape(&report.redaction)
    );
    if let Some(o) = page.outcome {
        let _ = writeln!(
            h,
            "<p>Outcome: {}/{} true \u{b7} {} without an outcome \u{b7} structural clean rate {}</p>",
            o.true_count,
            o.judged,
            o.missing,
            fmt_fixed(o.structural_clean_rate, 2)
        );
    }
    h.push_str("</header>\n");

    if let Some((g, band)) = page.gate {
        h.push_str("<section>\n<h2>Band</h2>\n");
        h.push_str(&chart(g, band));
        h.push_str("</section>\n");
        if let Some(budgets) = g.budgets.as_ref().filter(|b| !b.is_empty()) {
            h.push_str("<section>\n<h2>Budgets</h2>\n");
            for budget in budgets {
                let _ = writeln!(
                    h,
                    "<p class=\"budget\">{}</p>",
                    escape(&super::gate_lines::budget_line(budget))
                );
                h.push_str(&budget_chart(budget));
            }
            h.push_str("</section>\n");
        }
    }

    h.push_str("<section>\n<h2>Checks</h2>\n<table id=\"checks\">\n<thead><tr><th>check</th><th>fired</th></tr></thead>\n<tbody>\n");
    for (name, n) in &fired {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"n\">{n}</td></tr>",
            escape(name)
        );
    }
    h.push_str("</tbody>\n</table>\n</section>\n");

    h.push_str("<section>\n<h2>Failing traces</h2>\n");
    // A digest holds the run's first failing traces: those listed.
    let failed = report.failed_traces();
    if failed.is_empty() {
        h.push_str("<p>No check fired.</p>\n");
    } else {
        h.push_str("<input type=\"radio\" name=\"filter\" id=\"fall\" checked>\n");
        for (i, _) in filters.iter().enumerate() {
            let _ = writeln!(h, "<input type=\"radio\" name=\"filter\" id=\"f{i}\">");
        }
        h.push_str("<div class=\"filter\">Filter: <label for=\"fall\">all</label>");
        for (i, name) in filters.iter().enumerate() {
            let _ = write!(h, " <label for=\"f{i}\">{}</label>", escape(name));
        }
        h.push_str("</div>\n<div class=\"scroll\">\n<table id=\"failing\">\n<thead><tr><th>scenario</th><th>trace</th><th>steps</th><th>check</th><th>reason</th></tr></thead>\n<tbody>\n");
        let by_id = results_by_id(report);
        // Each trace whose steps were kept gets an anchor (the first one of an id shown twice).
        let mut anchors: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        for (i, t) in report.failing_steps.iter().enumerate() {
            anchors
                .entry(t.trace_id.as_str())
                .or_insert_with(|| format!("t{i}"));
        }
        let mut rows = 0;
        // Every fired verdict is one of a failing trace's rows.
        let total = counts.fired_verdicts;
        'rows: for id in &failed {
            for r in &by_id[id] {
                for (check, v) in report.checks.iter().zip(r.verdicts()) {
                    let name = check.name.as_str();
                    if !v.detected {
                        continue;
                    }
                    if rows >= MAX_ROWS {
                        break 'rows;
                    }
                    rows += 1;
                    let class = filters
                        .iter()
                        .position(|f| *f == name)
                        .map_or_else(String::new, |i| format!(" c{i}"));
                    let trace = match anchors.get(id) {
                        Some(anchor) => {
                            format!("<a href=\"#{anchor}\"><code>{}</code></a>", escape(id))
                        }
                        None => format!("<code>{}</code>", escape(id)),
                    };
                    let _ = writeln!(
                        h,
                        "<tr class=\"row{class}\"><td>{}</td><td>{trace}</td><td class=\"n\">{}</td><td>{}</td><td><div class=\"reason\">{}</div></td></tr>",
                        escape(r.scenario()),
                        r.steps(),
                        escape(name),
                        escape(v.reason.unwrap_or_default())
                    );
                }
            }
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
        if total > rows {
            let _ = writeln!(
                h,
                "<p class=\"muted\">First {rows} of {total} failing rows.</p>"
            );
        }
    }
    h.push_str("</section>\n");
    if !page.explanations.is_empty() {
        h.push_str(&explanations(page.explanations));
    }
    if !report.failing_steps.is_empty() {
        h.push_str(&trace_steps(report));
    }

    if !page.command.is_empty() {
        let _ = writeln!(
            h,
            "<section>\n<h2>Reproduce locally</h2>\n<pre>{}\n{}</pre>\n</section>",
            escape(super::repro::PIP_INSTALL),
            escape(page.command)
        );
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The band chart: one dot per baseline run, the band as a bar with the fail threshold, and this run,
/// on a 0..1 clean-rate axis.
fn chart(gate: &Gate, band: &BandFile) -> String {
    const LEFT: f64 = 110.0;
    const WIDTH: f64 = 300.0;
    let x = |rate: f64| {
        let r = if rate.is_nan() {
            0.0
        } else {
            rate.clamp(0.0, 1.0)
        };
        LEFT + r * WIDTH
    };
    let f = |v: f64| fmt_fixed(v, 1);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg id=\"band-chart\" viewBox=\"0 0 430 120\" width=\"430\" height=\"120\" role=\"img\" aria-label=\"clean rate {} against band [{}, {}]\">",
        fmt_fixed(gate.clean_rate, 2),
        fmt_fixed(band.lo, 2),
        fmt_fixed(band.hi, 2)
    );
    s.push_str("<g font-size=\"12\" fill=\"#1b1b1b\"><text x=\"0\" y=\"24\">baseline runs</text><text x=\"0\" y=\"54\">band</text><text x=\"0\" y=\"84\">this run</text></g>\n");
    let _ = writeln!(
        s,
        "<line x1=\"{}\" y1=\"100\" x2=\"{}\" y2=\"100\" stroke=\"#888\"/>",
        f(x(0.0)),
        f(x(1.0))
    );
    for (rate, label) in [(0.0, "0"), (0.5, "0.5"), (1.0, "1")] {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"114\" font-size=\"11\" text-anchor=\"middle\" fill=\"#666\">{label}</text>",
            f(x(rate))
        );
    }
    for rate in &band.per_run {
        let _ = writeln!(
            s,
            "<circle class=\"run\" cx=\"{}\" cy=\"20\" r=\"4\" fill=\"#57606a\"><title>{}</title></circle>",
            f(x(*rate)),
            fmt_fixed(*rate, 2)
        );
    }
    let _ = writeln!(
        s,
        "<rect class=\"band\" x=\"{}\" y=\"42\" width=\"{}\" height=\"16\" fill=\"#54aeff\"/>",
        f(x(band.lo)),
        f((x(band.hi) - x(band.lo)).max(1.0))
    );
    if gate.fail_threshold >= 0.0 {
        let _ = writeln!(
            s,
            "<line class=\"threshold\" x1=\"{0}\" y1=\"36\" x2=\"{0}\" y2=\"64\" stroke=\"#cf222e\" stroke-width=\"2\"><title>fail below {1}</title></line>",
            f(x(gate.fail_threshold)),
            fmt_fixed(gate.fail_threshold, 2)
        );
    }
    let colour = match gate.verdict.as_str() {
        "PASS" => "#1a7f37",
        "FAIL" => "#cf222e",
        _ => "#9a6700",
    };
    let _ = writeln!(
        s,
        "<rect class=\"candidate\" x=\"{}\" y=\"74\" width=\"{}\" height=\"14\" fill=\"{colour}\"/>",
        f(x(0.0)),
        f(x(gate.clean_rate) - x(0.0))
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"85\" font-size=\"11\" fill=\"#1b1b1b\">{} {}</text>",
        f((x(gate.clean_rate) + 4.0).min(x(1.0) - 60.0)),
        fmt_fixed(gate.clean_rate, 2),
        gate.verdict.as_str()
    );
    s.push_str("</svg>\n");
    s
}

/// A budget's chart: one dot per baseline run's value, the limit as a line and this run's value as a
/// bar coloured by the budget's verdict, on an axis from zero to a little past the largest of them.
fn budget_chart(outcome: &crate::gate::BudgetOutcome) -> String {
    const LEFT: f64 = 110.0;
    const WIDTH: f64 = 300.0;
    let name = outcome.budget.name();
    let Some(candidate) = outcome.candidate else {
        return String::new();
    };
    let largest = outcome
        .band_runs
        .iter()
        .copied()
        .chain([candidate, outcome.limit.unwrap_or(0.0)])
        .fold(0.0, f64::max);
    let top = if largest > 0.0 { largest * 1.1 } else { 1.0 };
    let x = |v: f64| LEFT + (v / top).clamp(0.0, 1.0) * WIDTH;
    let f = |v: f64| fmt_fixed(v, 1);
    let short = |v: f64| super::gate_lines::short_number(v);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg class=\"budget-chart\" viewBox=\"0 0 430 90\" width=\"430\" height=\"90\" role=\"img\" aria-label=\"{} {} against limit {}\">",
        escape(&name),
        short(candidate),
        outcome.limit.map_or_else(|| "none".to_string(), short)
    );
    s.push_str("<g font-size=\"12\" fill=\"#1b1b1b\"><text x=\"0\" y=\"24\">baseline runs</text><text x=\"0\" y=\"54\">this run</text></g>\n");
    let _ = writeln!(
        s,
        "<line x1=\"{}\" y1=\"72\" x2=\"{}\" y2=\"72\" stroke=\"#888\"/>",
        f(x(0.0)),
        f(x(top))
    );
    for (value, anchor) in [(0.0, "start"), (top, "end")] {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"86\" font-size=\"11\" text-anchor=\"{anchor}\" fill=\"#666\">{}</text>",
            f(x(value)),
            short(value)
        );
    }
    for value in &outcome.band_runs {
        let _ = writeln!(
            s,
            "<circle class=\"run\" cx=\"{}\" cy=\"20\" r=\"4\" fill=\"#57606a\"><title>{}</title></circle>",
            f(x(*value)),
            short(*value)
        );
    }
    if let Some(limit) = outcome.limit {
        let _ = writeln!(
            s,
            "<line class=\"limit\" x1=\"{0}\" y1=\"8\" x2=\"{0}\" y2=\"66\" stroke=\"#cf222e\" stroke-width=\"2\"><title>limit {1}</title></line>",
            f(x(limit)),
            short(limit)
        );
    }
    let colour = match outcome.verdict.as_str() {
        "PASS" => "#1a7f37",
        "FAIL" => "#cf222e",
        _ => "#9a6700",
    };
    let _ = writeln!(
        s,
        "<rect class=\"candidate\" x=\"{}\" y=\"44\" width=\"{}\" height=\"14\" fill=\"{colour}\"><title>{}</title></rect>",
        f(x(0.0)),
        f(x(candidate) - x(0.0)),
        short(candidate)
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_quotes_and_controls() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>\u{7}"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\u{fffd}"
        );
    }

    #[test]
    fn an_empty_report_renders_a_page_without_failing_rows() {
        let report = Report::default();
        let page = render(&Page {
            report: &report,
            outcome: None,
            gate: None,
            command: "",
            explanations: &[],
            counts: None,
        });
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<span class=\"v v-PASS\" id=\"verdict\">PASS</span>"));
        assert!(page.contains("No check fired."));
        assert!(!page.contains("<tr class=\"row"));
    }
}
