//! The run's slices (`--by`) in each output: a short table after the terminal summary, the JSON
//! report's `slices`, a Markdown and an HTML table, and the gate's line per regressed slice.
//!
//! Each output lists the whole run first (`all`), then each slice sorted by value, and `other` last
//! when the run had more values than [`MAX_SLICES`]: the clean rate, each check's count and, with
//! budgets, each budget's statistic over the slice's traces.

use serde_json::{Map, Value};

use crate::compat::fmt::fmt_fixed;
use crate::gate::slices::{MAX_SLICES, MIN_SLICE_TRACES, SliceRow, SliceTable, SliceVerdict};
use crate::gate::{Budget, BudgetOutcome, Verdict};

/// What the outputs show of a run's slices.
pub(crate) struct SlicesShown<'a> {
    /// The run's slices, named by their keys.
    pub table: &'a SliceTable,
    /// The active checks, in selection order (the order of each row's counts).
    pub checks: &'a [String],
    /// The budgets given, in order, with the whole run's outcome of each.
    pub budgets: &'a [BudgetOutcome],
    /// The gate's verdict on each slice the band records; `None` without a band sliced alike.
    pub verdicts: Option<&'a [SliceVerdict]>,
    /// `--gate-slices`: a slice FAIL fails the gate.
    pub gating: bool,
}

impl SlicesShown<'_> {
    /// The whole run, summed over the slices (each trace is in exactly one).
    fn whole(&self) -> SliceRow {
        let mut whole = SliceRow {
            value: "all".to_string(),
            traces: 0,
            clean: 0,
            fired: vec![0; self.checks.len()],
            statistics: None,
        };
        for row in self.table.all() {
            whole.traces += row.traces;
            whole.clean += row.clean;
            for (sum, n) in whole.fired.iter_mut().zip(&row.fired) {
                *sum += n;
            }
        }
        whole
    }

    /// A budget's statistic for a row: the slice's own, or the gate's value for the whole run.
    fn budget_value(&self, row: &SliceRow, k: usize) -> Option<f64> {
        let outcome = &self.budgets[k];
        if row.value == "all" && row.statistics.is_none() {
            return outcome.candidate;
        }
        let b: &Budget = &outcome.budget;
        row.statistics
            .as_ref()?
            .get(b.measure)
            .copied()
            .flatten()
            .map(|s| s[b.statistic])
    }

    fn header(&self) -> Vec<String> {
        let mut cells = vec![
            "slice".to_string(),
            "traces".to_string(),
            "clean rate".to_string(),
        ];
        cells.extend(self.checks.iter().cloned());
        cells.extend(self.budgets.iter().map(|b| b.budget.name()));
        cells
    }

    fn cells(&self, row: &SliceRow) -> Vec<String> {
        let mut cells = vec![
            row.value.clone(),
            row.traces.to_string(),
            fmt_fixed(row.clean_rate(), 2),
        ];
        cells.extend(row.fired.iter().map(u64::to_string));
        cells.extend((0..self.budgets.len()).map(|k| {
            self.budget_value(row, k)
                .map_or_else(|| "-".to_string(), super::gate_lines::short_number)
        }));
        cells
    }

    fn rows(&self) -> Vec<SliceRow> {
        std::iter::once(self.whole())
            .chain(self.table.all().cloned())
            .collect()
    }

    /// What the terminal prints after the summary: a heading, the table, and the note on `other`.
    pub(crate) fn terminal_lines(&self) -> Vec<String> {
        let mut grid = vec![self.header()];
        grid.extend(self.rows().iter().map(|r| self.cells(r)));
        let widths: Vec<usize> = (0..grid[0].len())
            .map(|c| grid.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut lines = vec![format!(
            "slices by {}: {} value(s)",
            self.table.by.join(", "),
            self.table.rows.len()
        )];
        for row in &grid {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            lines.push(format!("  {}", cells.join("  ").trim_end()));
        }
        if let Some(other) = &self.table.other {
            lines.push(other_note(other));
        }
        lines
    }

    /// The JSON report's `slices` object.
    pub(crate) fn json(&self) -> Value {
        let row_json = |row: &SliceRow| {
            let mut entry = Map::new();
            entry.insert("slice".into(), row.value.clone().into());
            entry.insert("traces".into(), row.traces.into());
            entry.insert("clean".into(), row.clean.into());
            entry.insert("clean_rate".into(), row.clean_rate().into());
            let fired: Map<String, Value> = self
                .checks
                .iter()
                .zip(&row.fired)
                .map(|(c, n)| (c.clone(), Value::from(*n)))
                .collect();
            entry.insert("fired".into(), Value::Object(fired));
            if !self.budgets.is_empty() {
                let budgets: Map<String, Value> = (0..self.budgets.len())
                    .map(|k| {
                        (
                            self.budgets[k].budget.name(),
                            self.budget_value(row, k).into(),
                        )
                    })
                    .collect();
                entry.insert("budgets".into(), Value::Object(budgets));
            }
            Value::Object(entry)
        };
        let mut out = Map::new();
        out.insert("by".into(), self.table.by.clone().into());
        out.insert("max_slices".into(), MAX_SLICES.into());
        out.insert("other".into(), self.table.other.is_some().into());
        out.insert("all".into(), row_json(&self.whole()));
        out.insert(
            "values".into(),
            self.table.all().map(row_json).collect::<Vec<_>>().into(),
        );
        if let Some(verdicts) = self.verdicts {
            let gate: Vec<Value> = verdicts
                .iter()
                .map(|v| {
                    let mut entry = Map::new();
                    entry.insert("slice".into(), v.value.clone().into());
                    entry.insert("verdict".into(), v.verdict.as_str().into());
                    entry.insert("clean_rate".into(), v.clean_rate.into());
                    entry.insert("band".into(), vec![v.band.0, v.band.1].into());
                    entry.insert("traces".into(), v.traces.into());
                    Value::Object(entry)
                })
                .collect();
            out.insert("gate".into(), gate.into());
            out.insert("gate_slices".into(), self.gating.into());
        }
        Value::Object(out)
    }

    /// The Markdown section: a heading, a table, and the note on `other`.
    pub(crate) fn markdown_lines(&self) -> Vec<String> {
        let header = self.header();
        let mut lines = vec![
            format!("### Slices by {}", self.table.by.join(", ")),
            String::new(),
            format!("| {} |", header.join(" | ")),
            format!("|{}", "---|".repeat(header.len())),
        ];
        for row in self.rows() {
            let mut cells = self.cells(&row);
            cells[0] = format!("`{}`", cells[0]);
            lines.push(format!("| {} |", cells.join(" | ")));
        }
        if let Some(other) = &self.table.other {
            lines.push(String::new());
            lines.push(other_note(other));
        }
        for line in self
            .verdicts
            .map(|v| gate_lines(v, self.gating))
            .unwrap_or_default()
        {
            lines.push(String::new());
            lines.push(format!("**Slice:** {}", &line["slice ".len()..]));
        }
        lines.push(String::new());
        lines
    }

    /// The HTML section: a small table, escaped.
    pub(crate) fn html(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let mut html = format!(
            "<section class=\"slices\"><h2>Slices by {}</h2><table><thead><tr>",
            esc(&self.table.by.join(", "))
        );
        for cell in self.header() {
            html.push_str(&format!("<th>{}</th>", esc(&cell)));
        }
        html.push_str("</tr></thead><tbody>");
        let failed: Vec<&str> = self
            .verdicts
            .unwrap_or_default()
            .iter()
            .filter(|v| v.verdict == Verdict::Fail)
            .map(|v| v.value.as_str())
            .collect();
        for row in self.rows() {
            let class = if failed.contains(&row.value.as_str()) {
                " class=\"hit\""
            } else {
                ""
            };
            html.push_str(&format!("<tr{class}>"));
            for cell in self.cells(&row) {
                html.push_str(&format!("<td>{}</td>", esc(&cell)));
            }
            html.push_str("</tr>");
        }
        html.push_str("</tbody></table>");
        if let Some(other) = &self.table.other {
            html.push_str(&format!("<p>{}</p>", esc(&other_note(other))));
        }
        for line in self
            .verdicts
            .map(|v| gate_lines(v, self.gating))
            .unwrap_or_default()
        {
            html.push_str(&format!("<p>{}</p>", esc(&line)));
        }
        html.push_str("</section>");
        html
    }
}

/// The note that the values past the cap are counted together.
fn other_note(other: &SliceRow) -> String {
    format!(
        "other: {} trace(s) of the values past the first {MAX_SLICES}, counted together",
        other.traces
    )
}

/// The gate's line per slice that did not pass, e.g.
/// `slice model=gpt-5.4-mini: clean rate 0.71 vs band [0.86, 0.90] · FAIL`; a slice FAIL reads
/// `(reported, not gated)` unless `--gate-slices` makes it fail the gate.
pub(crate) fn gate_lines(verdicts: &[SliceVerdict], gating: bool) -> Vec<String> {
    verdicts
        .iter()
        .filter(|v| v.verdict != Verdict::Pass)
        .map(|v| {
            let note = if v.verdict == Verdict::Fail && !gating {
                " (reported, not gated; --gate-slices fails the gate on it)"
            } else {
                ""
            };
            format!(
                "slice {}: clean rate {} vs band [{}, {}] over {} traces \u{b7} {}{note}",
                v.value,
                fmt_fixed(v.clean_rate, 2),
                fmt_fixed(v.band.0, 2),
                fmt_fixed(v.band.1, 2),
                v.traces,
                v.verdict.as_str()
            )
        })
        .collect()
}

/// The gate's closing line per slice FAIL under `--gate-slices`, e.g.
/// `gate: FAIL · slice model=gpt-5.4-mini clean rate 0.71 < 0.76 (--gate-slices)`, the floor being the
/// band rule's `min - 3/n`.
pub(crate) fn failing_lines(verdicts: &[SliceVerdict], gating: bool) -> Vec<String> {
    if !gating {
        return Vec::new();
    }
    verdicts
        .iter()
        .filter(|v| v.verdict == Verdict::Fail)
        .map(|v| {
            format!(
                "gate: FAIL \u{b7} slice {} clean rate {} < {} (--gate-slices)",
                v.value,
                fmt_fixed(v.clean_rate, 2),
                fmt_fixed(v.band.0 - 3.0 / v.traces as f64, 2)
            )
        })
        .collect()
}

/// The gate line when slices were judged but none could be (too few traces everywhere).
pub(crate) fn none_judged_line() -> String {
    format!(
        "slices: none judged (a slice needs {MIN_SLICE_TRACES} traces here and in every baseline run)"
    )
}
