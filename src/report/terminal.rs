//! The terminal table and summary line of `check`.

use std::io::Write;

use super::counts::{Counting, SpilledCounts};
use super::spill::{SpillError, SpilledRun};
use super::{Report, VerdictBatch};
use crate::compat::fmt::push_fixed;

fn pad(text: &str, width: usize) -> String {
    let mut out = String::new();
    push_padded(&mut out, text, width);
    out
}

/// Appends `text` and the spaces that fill it to `width` characters.
fn push_padded(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text.chars().count()),
    ));
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
    let width = id_width(ids.iter().copied());
    let mut out = header(report, width);
    let failed: std::collections::HashSet<&str, foldhash::fast::RandomState> = match rows {
        TableRows::Failing => report.failed_traces().into_iter().collect(),
        _ => Default::default(),
    };
    let shown = |id: &str| rows == TableRows::All || failed.contains(id);
    let line = |out: &mut String, id: &str| {
        push_padded(out, head(id, 12), width);
        out.push_str("  ");
    };
    let mut cells_of = Cells::default();
    if ids.len() == report.row_count() {
        // Every id has one row, in report order: rows are written as they come.
        for result in report.rows().filter(|r| shown(r.trace_id())) {
            line(&mut out, result.trace_id());
            let mut first = true;
            for v in result.verdicts() {
                cells_of.push(&mut out, &mut first, v.detected, v.confidence);
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
            cells_of.push(row, &mut first, v.detected, v.confidence);
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

/// Width of the trace-id column: the longest id, cut to 12 characters, and at least `trace`'s.
fn id_width<'a>(ids: impl IntoIterator<Item = &'a str>) -> usize {
    ids.into_iter()
        .map(|id| id.chars().count().min(12))
        .max()
        .unwrap_or(0)
        .max(5)
}

/// The header and rule lines of the table.
fn header(report: &Report, width: usize) -> String {
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
    out
}

/// Counts a spilled run in a pass of its own over the spill, handing each batch to `also` in the same
/// pass; `None` when two rows share a trace id (see [`Counting::finish`]).
///
/// # Errors
///
/// The spill cannot be read back.
pub(crate) fn count_spilled(
    report: &Report,
    spilled: &SpilledRun,
    mut also: impl FnMut(&VerdictBatch),
) -> Result<Option<SpilledCounts>, SpillError> {
    let mut counting = Counting::new(report.checks.len(), spilled.verdicts.dir());
    spilled.for_each_batch(|batch| {
        also(batch);
        counting.add(batch);
        Ok::<(), SpillError>(())
    })?;
    Ok(counting.finish()?)
}

/// Writes the table of a spilled run row by row, as [`table`] makes it for the same rows in memory
/// (coloured as [`super::colour::colour_table`] colours it, with `colour`).
///
/// # Errors
///
/// The spill cannot be read back, or `out` cannot be written.
pub(crate) fn write_spilled_table(
    out: &mut impl Write,
    report: &Report,
    spilled: &SpilledRun,
    counts: &SpilledCounts,
    rows: TableRows,
    colour: bool,
) -> std::io::Result<()> {
    if rows == TableRows::None {
        return Ok(());
    }
    let width = counts.width;
    let header = header(report, width);
    // The header and rule lines are never coloured.
    out.write_all(header.as_bytes())?;
    let colour = colour
        .then(|| super::colour::RowColour::of_header(header.lines().next().unwrap_or_default()));
    spilled.for_each_batch(|batch| {
        // Each row's line depends on that row alone: the lines are made on the threads,
        // `TABLE_ROWS` rows to a task, and written in row order.
        let parts = batch.in_row_tasks(TABLE_ROWS, |task| {
            let mut text = String::new();
            let mut cells = Cells::default();
            for row in task
                .map(|r| batch.row(r))
                .filter(|r| rows == TableRows::All || r.failed())
            {
                push_padded(&mut text, head(row.trace_id(), 12), width);
                text.push_str("  ");
                let mut first = true;
                for v in row.verdicts() {
                    cells.push(&mut text, &mut first, v.detected, v.confidence);
                }
                text.push('\n');
            }
            match colour {
                Some(colour) => {
                    let mut coloured = String::with_capacity(text.len() + text.len() / 4);
                    colour.push_rows(&mut coloured, &text);
                    coloured
                }
                None => text,
            }
        });
        for part in &parts {
            out.write_all(part.as_bytes())?;
        }
        Ok(())
    })
}

/// Rows of a batch one task makes the table's lines of.
const TABLE_ROWS: usize = 1024;

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

/// The cells a table has written so far, by verdict and confidence bits, copied instead of formatted
/// again: the checks give few distinct confidences, and exact formatting of each cost more than the
/// rest of a row.
#[derive(Default)]
struct Cells {
    known: Vec<(bool, u64, String)>,
}

impl Cells {
    /// Beyond this many distinct cells, new ones are formatted each time (a lookup in a longer list
    /// would cost about as much).
    const KEPT: usize = 32;

    /// [`push_cell`], from the cell written before for the same verdict and confidence when there is
    /// one.
    fn push(&mut self, out: &mut String, first: &mut bool, detected: bool, confidence: f64) {
        if !std::mem::take(first) {
            out.push_str("  ");
        }
        let bits = confidence.to_bits();
        if let Some((_, _, cell)) = self
            .known
            .iter()
            .find(|(d, b, _)| *d == detected && *b == bits)
        {
            out.push_str(cell);
            return;
        }
        let mut cell = String::with_capacity(16);
        push_cell(&mut cell, &mut true, detected, confidence);
        out.push_str(&cell);
        if self.known.len() < Self::KEPT {
            self.known.push((detected, bits, cell));
        }
    }
}

/// `<failed>/<total> traces failed · name=count, … · judge <judge>`, without the elapsed time.
pub(crate) fn summary(report: &Report) -> String {
    summary_of(
        report,
        report.failed_traces().len(),
        report.trace_ids().len(),
        &report.fired(),
        report
            .batches
            .iter()
            .map(VerdictBatch::user_step_count)
            .sum(),
        crate::report::RecordedOutcomes::of(&report.batches),
    )
}

/// [`summary`] from the counts of a run: failed and distinct traces, fired counts per check name, and
/// the steps no rule judged because they were not the agent's, and the traces' own recorded outcomes.
pub(crate) fn summary_of(
    report: &Report,
    failed: usize,
    traces: usize,
    fired: &[(&str, usize)],
    user_steps: u64,
    recorded: crate::report::RecordedOutcomes,
) -> String {
    let fired = fired
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
    // Only a run with steps of others than the agent says so, so the line is 0.4.1's otherwise.
    let unjudged = if user_steps == 0 {
        String::new()
    } else {
        format!(" · {user_steps} user step(s) not judged")
    };
    format!(
        "{failed}/{traces} traces failed · {fired}{unjudged}{} · judge {}{skipped}",
        recorded.phrase(),
        report.judge
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of more rows than three tasks take, one task's rows without a failing trace, written
    /// from the spill: the table built in memory, with every row and with the failing ones, plain and
    /// coloured.
    #[test]
    fn a_table_written_from_the_spill_is_the_table_in_memory() {
        use crate::checks::{Reasons, VerdictColumn};
        use crate::redact::Redaction;
        use crate::report::spill::SpilledRuleRun;
        use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};
        let names = ["abstention", "policy"];
        let batch = |from: usize, to: usize| -> VerdictBatch {
            let mut builder = VerdictBatchBuilder::new(schema(&names), to - from);
            let column = || VerdictColumn::new(to - from, Reasons::Fired, Redaction::Off);
            let mut columns = vec![column(), column()];
            for i in from..to {
                let id = if i % 5 == 0 {
                    format!("trace-with-a-long-id-{i}")
                } else {
                    format!("t{i}")
                };
                builder.push_trace(&TraceFields {
                    trace_id: &id,
                    scenario: "s",
                    ..TraceFields::default()
                });
                let quiet = (3 + TABLE_ROWS..3 + 2 * TABLE_ROWS).contains(&i);
                columns[0].push(i % 7 == 0 && !quiet, (i % 4) as f64 / 3.0, "abstains");
                columns[1].push(i % 11 == 0 && !quiet, 1.0, "blocked");
            }
            builder.finish(columns).expect("verdict batch")
        };
        let SpilledRuleRun {
            whole,
            spilled,
            without_batches: empty,
        } = SpilledRuleRun::new(&names, vec![batch(0, 3), batch(3, 3 + 3 * TABLE_ROWS + 9)]);
        let counts = count_spilled(&empty, &spilled, |_| {})
            .unwrap()
            .expect("distinct ids");
        for rows in [TableRows::All, TableRows::Failing] {
            for colour in [false, true] {
                let mut out = Vec::new();
                write_spilled_table(&mut out, &empty, &spilled, &counts, rows, colour).unwrap();
                let in_memory = table(&whole, rows);
                let expected = if colour {
                    super::super::colour::colour_table(&in_memory)
                } else {
                    in_memory
                };
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    expected,
                    "{rows:?}, colour {colour}"
                );
            }
        }
    }

    #[test]
    fn cells_copied_from_earlier_ones_are_the_cells_formatted_afresh() {
        // Repeats of a few values, then more distinct ones than are kept, then repeats of those.
        let mut values: Vec<(bool, f64)> = Vec::new();
        for round in 0..3 {
            for &c in &[
                1.0,
                0.5,
                0.125,
                0.005,
                0.015,
                2.0 / 3.0,
                -0.0,
                0.0,
                f64::NAN,
                1e9,
            ] {
                values.push((round % 2 == 0, c));
            }
        }
        values.extend((0..100).map(|i| (i % 3 == 0, f64::from(i) / 7.0)));
        values.extend((0..100).map(|i| (i % 3 == 0, f64::from(i) / 7.0)));
        let (mut fresh, mut copied) = (String::new(), String::new());
        let mut cells = Cells::default();
        for (i, &(detected, confidence)) in values.iter().enumerate() {
            let first = i % 6 == 0;
            push_cell(&mut fresh, &mut { first }, detected, confidence);
            cells.push(&mut copied, &mut { first }, detected, confidence);
        }
        assert_eq!(copied, fresh);
        assert_eq!(cells.known.len(), Cells::KEPT);
        assert!(
            fresh.contains("FAIL 0.12") && fresh.contains("ok   nan"),
            "{fresh}"
        );
    }
}
