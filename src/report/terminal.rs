//! The terminal table and summary line of `check`.

use super::Report;
use crate::compat::fmt::push_fixed;

fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    let mut out = String::from(text);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(len)));
    out
}

fn head(id: &str, n: usize) -> &str {
    match id.char_indices().nth(n) {
        Some((cut, _)) => &id[..cut],
        None => id,
    }
}

/// Which rows of the verdict table are printed (`check --table`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum TableRows {
    /// Every trace, as 0.4.1 prints it.
    #[default]
    All,
    /// The header and the rows of failing traces only, each as the whole table prints it.
    Failing,
    /// No table: the summary and gate lines alone.
    None,
}

/// The verdict table: one column per active check, one row per distinct trace id (all of them, or
/// only the failing ones). The column widths are those of the whole table, so a row printed alone is
/// the line the whole table prints for it.
pub(crate) fn table(report: &Report, rows: TableRows) -> String {
    if rows == TableRows::None {
        return String::new();
    }
    let ids = report.trace_ids();
    let width = ids
        .iter()
        .map(|id| id.chars().count().min(12))
        .max()
        .unwrap_or(0)
        .max(5);
    let mut header = pad("trace", width);
    header.push_str("  ");
    header.push_str(
        &report
            .checks
            .iter()
            .map(|c| pad(&c.name, 16))
            .collect::<Vec<_>>()
            .join("  "),
    );
    let mut out = String::new();
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(header.chars().count()));
    out.push('\n');
    let failed: std::collections::HashSet<&str, foldhash::fast::RandomState> = match rows {
        TableRows::Failing => report.failed_traces().into_iter().collect(),
        _ => Default::default(),
    };
    let shown = |id: &str| rows == TableRows::All || failed.contains(id);
    let line = |out: &mut String, id: &str| {
        out.push_str(&pad(head(id, 12), width));
        out.push_str("  ");
    };
    if ids.len() == report.row_count() {
        // Every id has one row, in report order: rows are written as they come.
        for result in report.rows().filter(|r| shown(r.trace_id())) {
            line(&mut out, result.trace_id());
            let mut first = true;
            for v in result.verdicts() {
                push_cell(&mut out, &mut first, v.detected, v.confidence);
            }
            out.push('\n');
        }
        return out;
    }
    // Rows merge results of traces that share an id, in report order.
    let mut cells: std::collections::HashMap<&str, (String, bool)> = Default::default();
    for result in report.rows().filter(|r| shown(r.trace_id())) {
        let (row, started) = cells.entry(result.trace_id()).or_default();
        for v in result.verdicts() {
            let mut first = !*started;
            push_cell(row, &mut first, v.detected, v.confidence);
            *started = true;
        }
    }
    for id in ids {
        if !shown(id) {
            continue;
        }
        line(&mut out, id);
        out.push_str(&cells[id].0);
        out.push('\n');
    }
    out
}

/// Appends one verdict's cell, `FAIL`/`ok` and the confidence to two decimals in 16 columns, after two
/// spaces unless it is the row's `first`.
fn push_cell(out: &mut String, first: &mut bool, detected: bool, confidence: f64) {
    if !std::mem::take(first) {
        out.push_str("  ");
    }
    let start = out.len();
    out.push_str(if detected { "FAIL " } else { "ok   " });
    push_fixed(out, confidence, 2);
    // Every byte of the cell is ASCII, so bytes count its columns.
    let width = out.len() - start;
    out.extend(std::iter::repeat_n(' ', 16usize.saturating_sub(width)));
}

/// `<failed>/<total> traces failed · name=count, … · judge <judge>`, without the elapsed time.
pub(crate) fn summary(report: &Report) -> String {
    let fired = report
        .fired()
        .iter()
        .map(|(name, n)| format!("{name}={n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let skipped = &report.skipped_input;
    // Only a run that left input out says so, so the line is 0.4.1's otherwise.
    let skipped = if skipped.is_none() {
        String::new()
    } else {
        format!(
            " · skipped bad input: {} file(s), {} JSON line(s)",
            skipped.files, skipped.lines
        )
    };
    format!(
        "{}/{} traces failed · {fired} · judge {}{skipped}",
        report.failed_traces().len(),
        report.trace_ids().len(),
        report.judge
    )
}
