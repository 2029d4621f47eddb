//! The gate and the band in words: the lines `check --band` and `baseline` print, and the wording of
//! the gate's warnings, which the JSON gate object lists too.
//!
//! The gate computes ([`crate::gate`]); these functions only format its values, 0.4.1's lines byte for
//! byte where 0.4.1 prints them. The CLI decides where each line goes.

use crate::compat::fmt::{float_repr, fmt_fixed, md_cell, py_repr, py_str};
use crate::gate::bootstrap::CONFIDENCE;
use crate::gate::passk::PassKTable;
use crate::gate::stats::{ALPHA, POWER};
use crate::gate::{
    Band, Budget, BudgetOutcome, Distrust, Gate, GateMode, GateWarning, Limit, PairedGate,
    RunDigest, SetAside, Ungated, Unmeasured, Verdict,
};

/// How the line naming the regressions starts (`check --explain` puts its lines under it).
pub(crate) const REGRESSIONS: &str = "regressions (clean in every baseline, not now): ";

/// A warning about the comparison, as the JSON gate object lists it and stderr prints it after
/// `warning: `.
pub(crate) fn warning(warning: &GateWarning) -> String {
    match warning {
        GateWarning::OtherRuns {
            band_judge,
            band_checks,
            judge,
            checks,
        } => format!(
            "band was built with judge={} checks={}; this run used judge={judge} checks={}",
            py_str(band_judge),
            py_repr(band_checks),
            py_repr(&serde_json::Value::from(checks.clone()))
        ),
        GateWarning::MissingScenarios(count) => {
            format!("{count} band scenario(s) absent from this run, counted as not clean")
        }
        GateWarning::FewSharedScenarios { shared, scenarios } => format!(
            "this run has only {shared} of the band's {scenarios} scenarios (fewer than half); \
the others count as not clean: is the band from another suite or domain?"
        ),
        GateWarning::UngatedScenarios(outside) => ungated_warning(outside),
        GateWarning::FewBaselineRuns(runs) => format!(
            "band built from {} baseline runs; use 3 or more for a stable noise estimate",
            py_str(runs)
        ),
        GateWarning::UnknownRunSpread => "band has no per-run clean rates (clean_rate.per_run); \
the run-to-run variance is unknown, so [min, max] stands in for the baseline runs"
            .to_string(),
        GateWarning::OtherTrust {
            band_set_aside,
            set_aside,
        } => format!(
            "band's rates leave out checks {} (baseline --trust); this run's leave out {} (check --trust), so the rates count different checks",
            py_repr(&serde_json::Value::from(band_set_aside.clone())),
            py_repr(&serde_json::Value::from(set_aside.clone()))
        ),
        GateWarning::RepeatedKeys(keys) => repeated_keys_warning(keys),
        GateWarning::BudgetUnmeasured {
            budget,
            measure,
            side,
        } => match side {
            Unmeasured::Run => format!(
                "budget {budget}: no trace of this run records {measure} (its format has none); the budget is not checked, INCONCLUSIVE"
            ),
            Unmeasured::Band => format!(
                "budget {budget}: no baseline run of the band records {measure}; the budget is not checked, INCONCLUSIVE"
            ),
        },
        GateWarning::FewTrials { scenarios, k } => format!(
            "{scenarios} band scenario(s) have fewer than {k} traces in this run, counted as pass^{k} 0"
        ),
    }
}

/// How stderr labels a gate warning: `note` for what leaves the verdict's inputs whole, else `warning`.
pub(crate) fn severity(warning: &GateWarning) -> &'static str {
    match warning {
        GateWarning::UnknownRunSpread => "note",
        _ => "warning",
    }
}

/// The warning that a run's slices were not gated: the band records none (`band_by` `None`), or
/// records them by other keys than the run's.
pub(crate) fn slices_not_gated_warning(band_by: Option<&[String]>, run_by: &[String]) -> String {
    match band_by {
        Some(band_by) => format!(
            "warning: the band records slices by {}, not by {}; slices are not gated (rebuild it with baseline --by)",
            band_by.join(", "),
            run_by.join(", ")
        ),
        None => format!(
            "warning: the band records no slices; slices by {} are not gated (rebuild it with baseline --by)",
            run_by.join(", ")
        ),
    }
}

/// The warning for scenarios of the run outside the band (not printed by 0.4.1), also the message
/// of `--strict-band`.
pub(crate) fn ungated_warning(outside: &Ungated) -> String {
    format!(
        "{} scenario(s) of this run are not in the band and were not gated ({} of their traces failed)",
        outside.scenarios, outside.failed_traces
    )
}

/// The error for a band that shares no scenario with the run (a band of another suite, domain or key
/// scheme): names the band and shows a few of the run's keys next to a few of the band's, since the
/// gate would only fail the run on every band scenario.
pub(crate) fn disjoint_band_error(
    band_path: &str,
    run_keys: &[&str],
    band_keys: &[&str],
) -> String {
    format!(
        "{band_path}: the band shares no scenario with this run; this run's keys are {}, the band's are {} (pass the band built from this suite's baseline runs)",
        some_keys(run_keys),
        some_keys(band_keys)
    )
}

/// The first three keys of a list, then how many more there are.
fn some_keys(keys: &[&str]) -> String {
    const SHOWN: usize = 3;
    let mut text: Vec<String> = keys
        .iter()
        .take(SHOWN)
        .map(|k| py_repr(&(*k).into()))
        .collect();
    if keys.len() > SHOWN {
        text.push(format!("and {} more", keys.len() - SHOWN));
    }
    text.join(", ")
}

/// The warning for keys carried by several traces of one run (not printed by 0.4.1).
pub(crate) fn repeated_keys_warning(keys: &[String]) -> String {
    format!(
        "{} scenario key(s) carried by more than one trace, each clean only if all its traces are: {}",
        keys.len(),
        keys.join(", ")
    )
}

/// The gate's warnings that every output showing the gate repeats (the Markdown, the HTML), not only
/// stderr and the JSON gate object: those that say part of the run was not gated. Each is worded as
/// [`warning`] words it. Empty for every run 0.4.1 could gate in full, so those outputs keep its bytes.
pub(crate) fn shown_warnings(gate: &Gate) -> Vec<String> {
    gate.warnings
        .iter()
        .filter(|w| matches!(w, GateWarning::UngatedScenarios(_)))
        .map(warning)
        .collect()
}

/// The lines that say which checks `--trust` set aside and why, e.g.
/// `trust: repeated_call: κ 0.41 < 0.60, reported, not gated`; every output that shows the gate shows
/// them. Empty without `--trust`.
pub(crate) fn set_aside_lines(gate: &Gate) -> Vec<String> {
    gate.set_aside
        .iter()
        .map(|s| format!("trust: {}", set_aside(s)))
        .collect()
}

/// A check `--trust` set aside, as every output words it, e.g.
/// `repeated_call: κ 0.41 < 0.60, reported, not gated`.
pub(crate) fn set_aside(s: &SetAside) -> String {
    let why = match &s.why {
        Distrust::Below { kappa, min } => {
            format!("\u{3ba} {} < {}", fmt_fixed(*kappa, 2), fmt_fixed(*min, 2))
        }
        Distrust::Undefined(reason) => format!("\u{3ba} undefined ({reason})"),
        Distrust::NotCalibrated => "not calibrated".to_string(),
    };
    format!("{}: {why}, reported, not gated", s.check)
}

/// What the band gate compared, when `--metric pass^k` put pass^k in place of the clean rate.
pub(crate) fn metric(gate: &Gate) -> Option<String> {
    gate.pass_k.map(|k| format!("pass^{k}"))
}

/// The lines `check --band` prints: (stderr warnings, stdout gate lines).
///
/// `band_runs_text` is the band's `runs` in str-notation ([`crate::gate::BandFile::runs_text`]).
pub(crate) fn gate_lines(gate: &Gate, band_runs_text: &str) -> (Vec<String>, Vec<String>) {
    let stderr = gate
        .warnings
        .iter()
        .map(|w| format!("{}: {}", severity(w), warning(w)))
        .collect();
    // Outside the default mode the band line names its own verdict and a last line the decision.
    let prefix = if gate.paired.is_some() {
        "band gate"
    } else {
        "gate"
    };
    let mut stdout = vec![format!(
        "{prefix}: {} \u{b7} {} {}",
        gate.band_verdict.as_str(),
        metric(gate).as_deref().unwrap_or("clean rate"),
        band_comparison(gate, [gate.lo, gate.hi], band_runs_text)
    )];
    if gate.band_verdict == Verdict::Inconclusive {
        stdout.push(not_enough_evidence(
            Test::Band,
            &band_shortfall(gate),
            Style::Plain,
        ));
    }
    for outcome in gate.budgets.iter().flatten() {
        stdout.push(budget_line(outcome));
    }
    // A budget that turned the gate is named on a gate line of its own, since the line above gives the
    // clean rate's own verdict: every failing budget, and a budget past its limit but not
    // significantly when it alone made a passing gate INCONCLUSIVE.
    let turned_inconclusive =
        gate.verdict == Verdict::Inconclusive && gate.band_verdict == Verdict::Pass;
    for outcome in gate.budgets.iter().flatten().filter(|o| {
        o.verdict == Verdict::Fail || (turned_inconclusive && o.verdict == Verdict::Inconclusive)
    }) {
        stdout.push(format!(
            "gate: {} \u{b7} budget {} {}",
            outcome.verdict.as_str(),
            outcome.budget.name(),
            budget_excess(outcome)
        ));
    }
    if !gate.policy_violations.is_empty() {
        stdout.push(format!(
            "gate: FAIL \u{b7} policy violation in {} trace(s) (hard block)",
            gate.policy_violations.len()
        ));
    }
    if let Some(violations) = gate.workflow_violations.as_ref().filter(|v| !v.is_empty()) {
        stdout.push(format!(
            "gate: FAIL \u{b7} workflow violation in {} trace(s) (hard block)",
            violations.len()
        ));
    }
    if !gate.regressions.is_empty() {
        stdout.push(format!(
            "{REGRESSIONS}{}",
            key_list(&gate.regressions, Style::Plain)
        ));
    }
    stdout.extend(set_aside_lines(gate));
    if let Some(paired) = &gate.paired {
        stdout.extend(paired_lines(gate, paired, Style::Plain));
        let by = match gate.mode {
            GateMode::Both => "band and paired",
            _ => "paired",
        };
        stdout.push(format!("gate: {} (decided by {by})", gate.verdict.as_str()));
    }
    (stderr, stdout)
}

/// A budget as written, normalised: `latency.p95 <= +20%`.
pub(crate) fn budget_expression(budget: &Budget) -> String {
    format!("{} <= {}", budget.name(), budget.limit_text)
}

/// A number as short as it reads: at most four decimals, no trailing zeros.
pub(crate) fn short_number(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// The run's value set against the limit in the budget's own terms, e.g. `+34% > +20% (p=0.003)`:
/// a change in percent or a difference from the band for a relative budget, the value for an absolute
/// one.
fn budget_excess(outcome: &BudgetOutcome) -> String {
    let (Some(candidate), Some(limit)) = (outcome.candidate, outcome.limit) else {
        return "not measured".to_string();
    };
    let band = outcome.band.unwrap_or(0.0);
    let observed = match outcome.budget.limit {
        // One decimal, so that a value just past its limit does not read as the limit itself.
        Limit::Percent(_) if band != 0.0 => {
            let change = format!("{:+.1}", (candidate / band - 1.0) * 100.0);
            format!("{}%", change.trim_end_matches(".0"))
        }
        Limit::Percent(_) => short_number(candidate),
        Limit::Delta(_) => {
            let delta = short_number(candidate - band);
            if delta.starts_with('-') {
                delta
            } else {
                format!("+{delta}")
            }
        }
        Limit::Absolute(_) => short_number(candidate),
    };
    let op = if candidate > limit { ">" } else { "<=" };
    let p = outcome
        .p_value
        .map(|p| format!(" (p={})", fmt_fixed(p, 3)))
        .unwrap_or_default();
    format!("{observed} {op} {}{p}", outcome.budget.limit_text)
}

/// The stdout line of one budget, e.g.
/// `budget latency.p95: FAIL · +34% > +20% (p=0.003) · 1234 vs band 921 over 30 scenarios`.
pub(crate) fn budget_line(outcome: &BudgetOutcome) -> String {
    let values = match (outcome.candidate, outcome.band) {
        (Some(c), Some(b)) => format!(" \u{b7} {} vs band {}", short_number(c), short_number(b)),
        (Some(c), None) => format!(" \u{b7} {}", short_number(c)),
        _ => String::new(),
    };
    let why = match (outcome.verdict, outcome.unmeasured) {
        (_, Some(Unmeasured::Run)) => " (this run does not record it)",
        (_, Some(Unmeasured::Band)) => " (the band does not record it)",
        (Verdict::Inconclusive, None) => ", not significant against the band's run-to-run spread",
        _ => "",
    };
    let mut over = if outcome.candidate.is_some() {
        format!(" over {} scenarios", outcome.scenarios)
    } else {
        String::new()
    };
    match outcome.pairing {
        Some(p) if p.paired && outcome.p_value.is_some() => {
            over.push_str(&format!(", {} paired with the band's medians", p.shared));
        }
        Some(p) if p.eligible && outcome.p_value.is_some() => {
            over.push_str(&format!(", only {} in the band: tested unpaired", p.shared));
        }
        _ => {}
    }
    if outcome.verdict == Verdict::Inconclusive && outcome.p_value.is_some() {
        match outcome.scenarios_to_tell {
            Some(n) => over.push_str(&format!(" \u{b7} about {n} scenarios would tell")),
            None => over.push_str(" \u{b7} more baseline runs would tell, not more scenarios"),
        }
    }
    format!(
        "budget {}: {} \u{b7} {}{why}{values}{over}",
        outcome.budget.name(),
        outcome.verdict.as_str(),
        budget_excess(outcome),
    )
}

/// The paired gate's lines and its intervals: on stdout (plain) and in the Markdown summary.
fn paired_lines(gate: &Gate, paired: &PairedGate, style: Style) -> Vec<String> {
    let s = &paired.stats;
    let test = format!(
        "{} \u{b7} {} regressed, {} improved, {} discordant of {} scenarios \u{b7} {} p={} ({} {})",
        paired.verdict.as_str(),
        paired.regressed.len(),
        paired.improved.len(),
        s.discordant,
        s.n,
        s.method.as_str(),
        fmt_fixed(s.p_value, 3),
        style.alpha(),
        float_repr(ALPHA)
    );
    let mut lines = vec![match style {
        Style::Plain => format!("paired gate: {test}"),
        Style::Markdown => format!(
            "**Paired gate:** {test} \u{b7} decided by {}: **{}**",
            gate.mode.as_str(),
            gate.verdict.as_str()
        ),
    }];
    if paired.verdict == Verdict::Inconclusive {
        let shortfall = Shortfall {
            drop: s.drop,
            required: s.required_n,
            additional: paired.additional_n,
        };
        lines.push(not_enough_evidence(Test::Paired, &shortfall, style));
    }
    let [c_lo, c_hi] = paired.intervals.candidate;
    let [d_lo, d_hi] = paired.intervals.difference;
    let intervals = format!(
        "clean rate {} [{}, {}] \u{b7} change from baseline {} [{}, {}]",
        fmt_fixed(s.candidate_rate, 2),
        fmt_fixed(c_lo, 2),
        fmt_fixed(c_hi, 2),
        fmt_fixed(-s.drop, 2),
        fmt_fixed(d_lo, 2),
        fmt_fixed(d_hi, 2)
    );
    let confidence = fmt_fixed(CONFIDENCE * 100.0, 0);
    lines.push(match style {
        Style::Plain => format!("interval ({confidence}%, scenario bootstrap): {intervals}"),
        Style::Markdown => format!("**{confidence}% interval** (scenario bootstrap): {intervals}"),
    });
    if !paired.improved.is_empty() {
        lines.push(format!(
            "{} (clean in no baseline run, clean now): {}",
            style.label("improved", "Improved"),
            key_list(&paired.improved, style)
        ));
    }
    lines
}

/// The gate's lines at the head of the Markdown summary, before its chart: the band comparison, what
/// an INCONCLUSIVE gate lacks, the regressions, the paired gate, the warnings that part of the run was
/// not gated, the checks set aside and the budgets. `band_runs_text` is as for [`gate_lines`].
pub(crate) fn markdown_lines(gate: &Gate, band_runs_text: &str) -> Vec<String> {
    let number = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    let mut lines = vec![format!(
        "**Gate:** clean rate {}",
        band_comparison(
            gate,
            [number(&gate.band[0]), number(&gate.band[1])],
            band_runs_text
        )
    )];
    if gate.band_verdict == Verdict::Inconclusive {
        lines.push(not_enough_evidence(
            Test::Band,
            &band_shortfall(gate),
            Style::Markdown,
        ));
    }
    if !gate.regressions.is_empty() {
        lines.push(format!(
            "**Regressions** (clean in every baseline run, not now): {}",
            key_list(&gate.regressions, Style::Markdown)
        ));
    }
    if let Some(paired) = &gate.paired {
        lines.extend(paired_lines(gate, paired, Style::Markdown));
    }
    lines.extend(
        shown_warnings(gate)
            .into_iter()
            .map(|w| format!("**Warning:** {w}")),
    );
    lines.extend(
        gate.set_aside
            .iter()
            .map(|s| format!("**Not gated:** {}", set_aside(s))),
    );
    lines.extend(
        gate.budgets
            .iter()
            .flatten()
            .map(|outcome| format!("**Budget:** {}", &budget_line(outcome)["budget ".len()..])),
    );
    lines
}

/// The gate in one line, as the JUnit document, the HTML report and the OpenTelemetry events carry
/// it; without a gate, `verdict` and `failed` of `traces` traces.
pub(crate) fn summary_line(
    gate: Option<&Gate>,
    failed: usize,
    traces: usize,
    verdict: &str,
) -> String {
    let number = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    match gate {
        Some(g) => format!(
            "gate {}: clean rate {} vs band [{}, {}], fail below {}, p={}, {} policy violation(s), {} regression(s)",
            g.verdict.as_str(),
            fmt_fixed(g.clean_rate, 2),
            fmt_fixed(number(&g.band[0]), 2),
            fmt_fixed(number(&g.band[1]), 2),
            fmt_fixed(g.fail_threshold, 2),
            fmt_fixed(g.stats.p_value, 3),
            g.policy_violations.len(),
            g.regressions.len()
        ),
        None => format!("{verdict}: {failed}/{traces} traces failed (no band given)"),
    }
}

/// How a gate sentence is dressed: plain on the terminal, Markdown in the pull-request summary. Where
/// the two say the same, one sentence serves both; where they word it apart, both stand here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Markdown,
}

impl Style {
    /// The name of the significance level.
    fn alpha(self) -> &'static str {
        match self {
            Style::Plain => "alpha",
            Style::Markdown => "\u{3b1}",
        }
    }

    /// A line's label: as is on the terminal, bold and capitalised in Markdown.
    fn label(self, plain: &str, markdown: &str) -> String {
        match self {
            Style::Plain => plain.to_string(),
            Style::Markdown => format!("**{markdown}**"),
        }
    }
}

/// How many scenario keys a Markdown line names before `and N more`: a pull-request comment with a
/// thousand keys is not read.
const MARKDOWN_KEYS: usize = 20;

/// Scenario keys as a line lists them: every key on the terminal; the first [`MARKDOWN_KEYS`] as code
/// in Markdown.
fn key_list(keys: &[serde_json::Value], style: Style) -> String {
    match style {
        Style::Plain => keys.iter().map(py_str).collect::<Vec<_>>().join(", "),
        Style::Markdown => {
            let shown: Vec<String> = keys
                .iter()
                .take(MARKDOWN_KEYS)
                .map(|k| format!("`{}`", md_cell(&py_str(k))))
                .collect();
            let more = keys.len().saturating_sub(MARKDOWN_KEYS);
            if more > 0 {
                format!("{} and {more} more", shown.join(", "))
            } else {
                shown.join(", ")
            }
        }
    }
}

/// The clean rate against the band, e.g.
/// `0.80 vs band [0.86, 0.90] from 5 baseline runs · fail below 0.83 · p=0.004`.
fn band_comparison(gate: &Gate, [lo, hi]: [f64; 2], band_runs_text: &str) -> String {
    format!(
        "{} vs band [{}, {}] from {} baseline runs \u{b7} fail below {} \u{b7} p={}",
        fmt_fixed(gate.clean_rate, 2),
        fmt_fixed(lo, 2),
        fmt_fixed(hi, 2),
        band_runs_text,
        fmt_fixed(gate.fail_threshold, 2),
        fmt_fixed(gate.stats.p_value, 3)
    )
}

/// Which test an INCONCLUSIVE line speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Band,
    Paired,
}

/// What an INCONCLUSIVE test lacks: the drop it looked for, the scenarios that would tell it from
/// noise, and how many more than the run had.
struct Shortfall {
    drop: f64,
    required: Option<u64>,
    additional: Option<u64>,
}

fn band_shortfall(gate: &Gate) -> Shortfall {
    Shortfall {
        drop: gate.stats.drop,
        required: gate.stats.required_n,
        additional: gate.stats.additional_n,
    }
}

/// The line under an INCONCLUSIVE test, e.g. `inconclusive: a drop of 0.05 needs 320 scenarios to
/// tell from noise (alpha 0.05, power 0.80) · run 120 more`.
fn not_enough_evidence(test: Test, shortfall: &Shortfall, style: Style) -> String {
    let drop = fmt_fixed(shortfall.drop, 2);
    let required = shortfall.required.unwrap_or(0);
    let more = shortfall.additional.unwrap_or(0);
    let terms = format!(
        "({} {}, power {})",
        style.alpha(),
        float_repr(ALPHA),
        fmt_fixed(POWER, 2)
    );
    match (style, test) {
        (Style::Plain, Test::Band) => format!(
            "inconclusive: a drop of {drop} needs {required} scenarios to tell from noise {terms} \u{b7} run {more} more"
        ),
        (Style::Plain, Test::Paired) => format!(
            "inconclusive: the paired test needs {required} scenarios to detect a drop of {drop} {terms} \u{b7} run {more} more"
        ),
        (Style::Markdown, test) => {
            let which = match test {
                Test::Band => "",
                Test::Paired => " for the paired test",
            };
            format!(
                "Not enough evidence{which}: a drop of {drop} needs {required} scenarios {terms}; run {more} more."
            )
        }
    }
}

/// The number of scenarios and the trials each has, e.g. `40 scenarios, up to 5 traces each`.
fn trials(table: &PassKTable) -> String {
    format!(
        "{} scenarios, up to {} traces each",
        table.scenarios, table.max_trials
    )
}

/// The one-line pass^k summary printed after the run's summary line.
pub(crate) fn pass_k_line(table: &PassKTable) -> String {
    let values: Vec<String> = table
        .overall
        .iter()
        .map(|p| format!("pass^{} {}", p.k, fmt_fixed(p.value, 2)))
        .collect();
    format!(
        "trials: {} \u{b7} {}",
        trials(table),
        values.join(" \u{b7} ")
    )
}

/// pass^k in the Markdown summary: a line and a table, overall and per check.
pub(crate) fn pass_k_markdown(table: &PassKTable) -> Vec<String> {
    let ks: Vec<String> = table
        .overall
        .iter()
        .map(|p| format!("pass^{}", p.k))
        .collect();
    let row = |name: &str, values: &[crate::gate::passk::PassK]| {
        let cells: Vec<String> = values.iter().map(|p| fmt_fixed(p.value, 2)).collect();
        format!("| {} | {} |", md_cell(name), cells.join(" | "))
    };
    let mut lines = vec![
        String::new(),
        format!(
            "**Trials:** {}; pass^k is the chance that k traces of a scenario all pass.",
            trials(table)
        ),
        String::new(),
        format!("| check | {} |", ks.join(" | ")),
        format!("|---|{}", "---|".repeat(ks.len())),
        row("all checks", &table.overall),
    ];
    lines.extend(
        table
            .by_check
            .iter()
            .map(|(name, values)| row(name, values)),
    );
    lines
}

/// The stdout line `baseline` prints after checking one run; `path` is the argument as typed.
pub(crate) fn run_line(path: &str, digest: &RunDigest, elapsed_secs: f64) -> String {
    format!(
        "{path}: {} traces \u{b7} clean rate {} \u{b7} {}s",
        digest.traces,
        fmt_fixed(digest.line_clean_rate, 2),
        fmt_fixed(elapsed_secs, 1)
    )
}

/// The stderr note `baseline` prints for fewer than three runs.
pub(crate) fn few_runs_note(runs: usize) -> Option<String> {
    (runs < 3).then(|| format!("note: {runs} baseline runs measure noise poorly; use 3 or more"))
}

/// The closing stdout line of `baseline`; `out` is the `--out` argument as typed.
pub(crate) fn band_line(band: &Band, out: &str) -> String {
    let version = band
        .agent_version
        .as_ref()
        .map(|v| format!(" of agent version {v}"))
        .unwrap_or_default();
    format!(
        "band [{}, {}] over {} scenarios \u{d7} {} runs{version} \u{b7} {} clean in every run \u{b7} written to {}",
        fmt_fixed(band.min(), 2),
        fmt_fixed(band.max(), 2),
        band.scenarios.len(),
        band.runs,
        band.clean_in_all_runs.len(),
        out
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::fixtures::{self, all_clean_band, glm_band, spread_band, with_failures};
    use crate::gate::{BandBuilder, evaluate, evaluate_mode};

    /// Reference: `faultgate check examples/gate/candidate_gpt.json --band <glm band>`.
    #[test]
    fn gpt_candidate_against_the_glm_band_prints_the_reference_lines() {
        let band = glm_band();
        let gate = evaluate(&band, &fixtures::candidate_gpt());
        let (stderr, stdout) = gate_lines(&gate, &band.runs_text());
        assert_eq!(
            stderr,
            ["warning: band built from 2 baseline runs; use 3 or more for a stable noise estimate"]
        );
        assert_eq!(
            stdout,
            [
                "gate: FAIL · clean rate 0.40 vs band [0.93, 0.93] from 2 baseline runs · fail below 0.83 · p=0.000",
                "regressions (clean in every baseline, not now): r-0208, r-0214, r-0216, r-0224, r-0226, r-0232, \
r-0258, r-0263, r-0279, r-0286, r-0292, r-0317, r-0320, r-0322, r-0330, r-0344, r-0350",
            ]
        );
    }

    /// Reference: the same candidate with `--golden` against the shipped, older examples/gate/band.json.
    #[test]
    fn shipped_band_warns_about_its_check_list() {
        let band = fixtures::shipped_band();
        let run = fixtures::candidate_gpt_with_golden();
        let gate = evaluate(&band, &run);
        let words: Vec<String> = gate.warnings.iter().map(warning).collect();
        assert_eq!(
            words,
            [
                "band was built with judge=none checks=['search_loop', 'abstention', 'policy', 'wrong_answer', \
'truncation']; this run used judge=none checks=['search_loop', 'abstention', 'policy', 'repeated_call', \
'unrecovered_tool_error', 'context_overflow', 'wrong_answer', 'truncation']",
                "band built from 2 baseline runs; use 3 or more for a stable noise estimate",
            ]
        );
        let (_, stdout) = gate_lines(&gate, &band.runs_text());
        assert_eq!(
            stdout[0],
            "gate: FAIL · clean rate 0.30 vs band [0.80, 0.87] from 2 baseline runs · fail below 0.70 · p=0.000"
        );
    }

    #[test]
    fn inconclusive_lines_match_the_reference() {
        let band = all_clean_band();
        let gate = evaluate(&band, &with_failures(2));
        let (_, stdout) = gate_lines(&gate, &band.runs_text());
        assert_eq!(
            stdout,
            [
                "gate: INCONCLUSIVE · clean rate 0.93 vs band [1.00, 1.00] from 2 baseline runs · fail below 0.90 · p=0.072",
                "inconclusive: a drop of 0.07 needs 89 scenarios to tell from noise (alpha 0.05, power 0.80) · run 59 more",
                "regressions (clean in every baseline, not now): s00, s01",
            ]
        );
    }

    #[test]
    fn set_aside_checks_are_worded_with_their_reason() {
        let line = |check: &str, why: Distrust| {
            set_aside(&SetAside {
                check: check.into(),
                why,
            })
        };
        assert_eq!(
            line(
                "repeated_call",
                Distrust::Below {
                    kappa: 0.41,
                    min: 0.6
                }
            ),
            "repeated_call: κ 0.41 < 0.60, reported, not gated"
        );
        assert_eq!(
            line("abstention", Distrust::Undefined("0 positives".into())),
            "abstention: κ undefined (0 positives), reported, not gated"
        );
        assert_eq!(
            line("policy", Distrust::NotCalibrated),
            "policy: not calibrated, reported, not gated"
        );
    }

    #[test]
    fn lines_of_a_band_with_run_spread() {
        let band = spread_band();
        let gate = evaluate(&band, &fixtures::spread_candidate(&[1, 2, 3]));
        let (stderr, stdout) = gate_lines(&gate, &band.runs_text());
        // 0.4.1 prints the first line only; the second names the candidate's scenario outside the band.
        assert_eq!(
            stderr,
            [
                "warning: 1 band scenario(s) absent from this run, counted as not clean",
                "warning: 1 scenario(s) of this run are not in the band and were not gated (1 of their traces failed)"
            ]
        );
        assert_eq!(
            stdout[0],
            "gate: FAIL · clean rate 0.81 vs band [0.95, 1.00] from 3 baseline runs · fail below 0.81 · p=0.035"
        );
        let gate = evaluate(&band, &fixtures::spread_candidate(&[1, 2]));
        let (_, stdout) = gate_lines(&gate, &band.runs_text());
        assert_eq!(
            stdout[1],
            "inconclusive: a drop of 0.12 needs 67 scenarios to tell from noise (alpha 0.05, power 0.80) · run 46 more"
        );
    }

    #[test]
    fn hard_blocks_print_their_own_line() {
        let band = all_clean_band();
        let mut run = with_failures(0);
        run.policy_violations = vec!["trace-outside-the-band".into()];
        let (_, stdout) = gate_lines(&evaluate(&band, &run), "2");
        assert_eq!(
            stdout[1],
            "gate: FAIL · policy violation in 1 trace(s) (hard block)"
        );
        let mut run = with_failures(0);
        run.workflow_violations = Some(vec!["t-skipped".into()]);
        let (_, stdout) = gate_lines(&evaluate(&band, &run), "2");
        assert_eq!(
            stdout[1..],
            ["gate: FAIL · workflow violation in 1 trace(s) (hard block)"]
        );
        run.workflow_violations = Some(Vec::new());
        assert_eq!(gate_lines(&evaluate(&band, &run), "2").1.len(), 1);
    }

    #[test]
    fn repeated_keys_and_short_trials_are_worded() {
        let mut run = with_failures(0);
        run.scenarios.add("s05", false);
        let gate = evaluate(&all_clean_band(), &run);
        assert_eq!(
            gate.warnings.last().map(warning).as_deref(),
            Some(
                "1 scenario key(s) carried by more than one trace, each clean only if all its traces are: s05"
            )
        );
        assert_eq!(
            warning(&GateWarning::FewTrials { scenarios: 3, k: 2 }),
            "3 band scenario(s) have fewer than 2 traces in this run, counted as pass^2 0"
        );
    }

    #[test]
    fn paired_and_both_modes_print_each_gate_and_the_decision() {
        let band = fixtures::worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        let gate = evaluate_mode(
            &band,
            &fixtures::worked_candidate(),
            GateMode::Both,
            Some(&clean_runs),
            None,
        );
        let (_, stdout) = gate_lines(&gate, &band.runs_text());
        assert_eq!(
            stdout,
            [
                "band gate: INCONCLUSIVE · clean rate 0.68 vs band [0.70, 0.80] from 3 baseline runs · fail below 0.67 · p=0.168",
                "inconclusive: a drop of 0.07 needs 514 scenarios to tell from noise (alpha 0.05, power 0.80) · run 414 more",
                "regressions (clean in every baseline, not now): s00, s01, s02, s03, s04, s05, s06",
                "paired gate: FAIL · 7 regressed, 0 improved, 17 discordant of 100 scenarios · paired permutation (exact) p=0.014 (alpha 0.05)",
                "interval (95%, scenario bootstrap): clean rate 0.68 [0.58, 0.77] · change from baseline -0.07 [-0.13, -0.01]",
                "gate: FAIL (decided by band and paired)",
            ]
        );
    }

    #[test]
    fn the_markdown_summary_words_the_same_gate_in_its_own_style() {
        let band = fixtures::worked_band();
        let clean_runs = band.clean_runs.clone().expect("per-scenario data");
        let mut gate = evaluate_mode(
            &band,
            &fixtures::worked_candidate(),
            GateMode::Both,
            Some(&clean_runs),
            None,
        );
        // A paired test short of evidence, to word both INCONCLUSIVE lines.
        let paired = gate.paired.as_mut().expect("a paired gate");
        paired.verdict = Verdict::Inconclusive;
        paired.stats.required_n = Some(300);
        paired.additional_n = Some(200);
        assert_eq!(
            markdown_lines(&gate, &band.runs_text()),
            [
                "**Gate:** clean rate 0.68 vs band [0.70, 0.80] from 3 baseline runs · fail below 0.67 · p=0.168",
                "Not enough evidence: a drop of 0.07 needs 514 scenarios (α 0.05, power 0.80); run 414 more.",
                "**Regressions** (clean in every baseline run, not now): `s00`, `s01`, `s02`, `s03`, `s04`, `s05`, `s06`",
                "**Paired gate:** INCONCLUSIVE · 7 regressed, 0 improved, 17 discordant of 100 scenarios · paired permutation (exact) p=0.014 (α 0.05) · decided by both: **FAIL**",
                "Not enough evidence for the paired test: a drop of 0.07 needs 300 scenarios (α 0.05, power 0.80); run 200 more.",
                "**95% interval** (scenario bootstrap): clean rate 0.68 [0.58, 0.77] · change from baseline -0.07 [-0.13, -0.01]",
            ]
        );
        let (_, stdout) = gate_lines(&gate, &band.runs_text());
        assert_eq!(
            stdout[4],
            "inconclusive: the paired test needs 300 scenarios to detect a drop of 0.07 (alpha 0.05, power 0.80) · run 200 more"
        );
    }

    #[test]
    fn baseline_lines_match_the_reference() {
        let mut builder = BandBuilder::new();
        let digest = builder.add_run(&fixtures::glm_run1());
        builder.add_run(&fixtures::glm_run2());
        let band = builder.finish().expect("band");
        assert_eq!(
            band_line(&band, "out/band.json"),
            "band [0.93, 0.93] over 30 scenarios × 2 runs · 26 clean in every run · written to out/band.json"
        );
        assert_eq!(
            run_line("examples/gate/baseline_glm_run1.json", &digest, 0.1),
            "examples/gate/baseline_glm_run1.json: 30 traces · clean rate 0.93 · 0.1s"
        );
        assert_eq!(
            few_runs_note(2).as_deref(),
            Some("note: 2 baseline runs measure noise poorly; use 3 or more")
        );
        assert_eq!(few_runs_note(3), None);
    }
}
