//! The terminal table and summary line of `check`.

use std::io::Write;

pub(crate) use super::shown::IdColumn;
use super::shown::cut_on_word;
use crate::compat::fmt::push_fixed;
use crate::report::counts::{Counting, SpilledCounts};
use crate::report::pass::{Sink, VerdictSource};
use crate::report::spill::SpillError;
use crate::report::{Report, VerdictBatch, VerdictRef};

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

/// Characters of the reason column of `--table failing`, the check's name included.
pub(crate) const REASON_CHARS: usize = 80;

/// The reason column's cell: the first check that fired, in selection order, and its reason, cut on a
/// word to [`REASON_CHARS`].
fn reason_cell<'a>(
    report: &Report,
    verdicts: impl IntoIterator<Item = VerdictRef<'a>>,
) -> Option<String> {
    let (check, v) = report
        .checks
        .iter()
        .zip(verdicts)
        .find(|(_, v)| v.detected)?;
    let text = match v.reason.filter(|r| !r.trim().is_empty()) {
        Some(reason) => format!("{}: {reason}", check.name),
        None => check.name.clone(),
    };
    Some(cut_on_word(&text, REASON_CHARS))
}

/// Appends the reason column to a row of the failing table: after the cells, padded to the header's
/// width (a check name longer than a cell widens the header), and the gap.
fn push_reason(out: &mut String, row_start: usize, header_chars: usize, reason: Option<&str>) {
    let Some(reason) = reason else {
        return;
    };
    // Every byte of a row before its reason is ASCII but the id's, so characters are counted.
    let row_chars = out[row_start..].chars().count();
    out.extend(std::iter::repeat_n(
        ' ',
        header_chars.saturating_sub(row_chars),
    ));
    out.push_str("  ");
    out.push_str(reason);
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
/// only the failing ones), ids shown as `ids` says. The column widths are those of the whole table,
/// so a row printed alone begins with the line the whole table prints for it; the failing rows
/// alone add the reason column.
pub(crate) fn table(report: &Report, rows: TableRows, ids: IdColumn) -> String {
    if rows == TableRows::None {
        return String::new();
    }
    let trace_ids = report.trace_ids();
    let width = ids.width(
        trace_ids
            .iter()
            .map(|id| id.chars().count())
            .max()
            .unwrap_or(0),
    );
    let mut out = header(report, width, rows);
    let header_chars = out.lines().next().map_or(0, |h| cells_end(h, rows));
    let failed: std::collections::HashSet<&str, foldhash::fast::RandomState> = match rows {
        TableRows::Failing => report.failed_traces().into_iter().collect(),
        _ => Default::default(),
    };
    let shown = |id: &str| rows == TableRows::All || failed.contains(id);
    let line = |out: &mut String, id: &str| {
        push_padded(out, &ids.shown(id), width);
        out.push_str("  ");
    };
    let reasons = rows == TableRows::Failing;
    let mut cells_of = Cells::default();
    if trace_ids.len() == report.row_count() {
        // Every id has one row, in report order: rows are written as they come.
        for result in report.rows().filter(|r| shown(r.trace_id())) {
            let start = out.len();
            line(&mut out, result.trace_id());
            let mut first = true;
            for v in result.verdicts() {
                cells_of.push(&mut out, &mut first, v.detected, v.confidence);
            }
            if reasons {
                let reason = reason_cell(report, result.verdicts());
                push_reason(&mut out, start, header_chars, reason.as_deref());
            }
            out.push('\n');
        }
        return out;
    }
    // Rows merge results of traces that share an id, in report order; the reason is the first
    // fired among them.
    let mut cells: std::collections::HashMap<&str, (String, bool, Option<String>)> =
        Default::default();
    for result in report.rows().filter(|r| shown(r.trace_id())) {
        let (row, started, reason) = cells.entry(result.trace_id()).or_default();
        for v in result.verdicts() {
            let mut first = !*started;
            cells_of.push(row, &mut first, v.detected, v.confidence);
            *started = true;
        }
        if reasons && reason.is_none() {
            *reason = reason_cell(report, result.verdicts());
        }
    }
    for id in trace_ids {
        if !shown(id) {
            continue;
        }
        let start = out.len();
        line(&mut out, id);
        let (row, _, reason) = &cells[id];
        out.push_str(row);
        push_reason(&mut out, start, header_chars, reason.as_deref());
        out.push('\n');
    }
    out
}

/// The header's characters before its reason column (all of them without one).
fn cells_end(header: &str, rows: TableRows) -> usize {
    let chars = header.chars().count();
    match rows {
        TableRows::Failing => chars - REASON_HEADER.len(),
        _ => chars,
    }
}

/// The reason column's header, with the gap before it.
const REASON_HEADER: &str = "  reason";

/// The header and rule lines of the table (with the reason column for the failing rows).
fn header(report: &Report, width: usize, rows: TableRows) -> String {
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
    if rows == TableRows::Failing {
        header.push_str(REASON_HEADER);
    }
    let mut out = String::new();
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(header.chars().count()));
    out.push('\n');
    out
}

/// Counts a run in a pass of its own over its verdicts, handing each batch to `also` in the same
/// pass; `None` when two rows share a trace id (see [`Counting::finish`]).
///
/// # Errors
///
/// The spill cannot be read back.
pub(crate) fn count(
    report: &Report,
    source: VerdictSource<'_>,
    mut also: impl FnMut(&VerdictBatch),
) -> Result<Option<SpilledCounts>, SpillError> {
    let mut counting = Counting::new(report.checks.len(), source.dir());
    source.for_each_batch(|batch| {
        also(batch);
        counting.add(batch);
        Ok::<(), SpillError>(())
    })?;
    Ok(counting.finish()?)
}

/// The table of a run whose trace ids are distinct, written row by row as the pass hands the rows on:
/// the text [`table`] makes for the same rows in memory (coloured as
/// [`super::colour::colour_table`] colours it, with `colour`).
pub(crate) struct TableSink<'a, W> {
    out: W,
    report: &'a Report,
    rows: TableRows,
    ids: IdColumn,
    width: usize,
    header_chars: usize,
    colour: Option<super::colour::RowColour>,
}

impl<'a, W: Write + Send> TableSink<'a, W> {
    /// The table's sink, its header written to `out` (nothing at all for [`TableRows::None`]).
    ///
    /// # Errors
    ///
    /// `out` cannot be written.
    pub(crate) fn new(
        mut out: W,
        report: &'a Report,
        counts: &SpilledCounts,
        rows: TableRows,
        ids: IdColumn,
        colour: bool,
    ) -> std::io::Result<Self> {
        let width = ids.width(counts.longest_id);
        let mut header_chars = 0;
        let mut row_colour = None;
        if rows != TableRows::None {
            let header = header(report, width, rows);
            let first_line = header.lines().next().unwrap_or_default();
            header_chars = cells_end(first_line, rows);
            // The header and rule lines are never coloured.
            out.write_all(header.as_bytes())?;
            row_colour = colour
                .then(|| super::colour::RowColour::of_header(first_line, report.checks.len()));
        }
        Ok(TableSink {
            out,
            report,
            rows,
            ids,
            width,
            header_chars,
            colour: row_colour,
        })
    }

    /// What the table was written to.
    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write + Send> Sink for TableSink<'_, W> {
    fn take(&mut self, batch: &VerdictBatch) -> std::io::Result<()> {
        let TableSink {
            report,
            rows,
            ids,
            width,
            header_chars,
            colour,
            ..
        } = *self;
        if rows == TableRows::None {
            return Ok(());
        }
        // Each row's line depends on that row alone: the lines are made on the threads,
        // `TABLE_ROWS` rows to a task, and written in row order.
        let parts = batch.in_row_tasks(TABLE_ROWS, |task| {
            let mut text = String::new();
            let mut cells = Cells::default();
            for row in task
                .map(|r| batch.row(r))
                .filter(|r| rows == TableRows::All || r.failed())
            {
                let start = text.len();
                push_padded(&mut text, &ids.shown(row.trace_id()), width);
                text.push_str("  ");
                let mut first = true;
                for v in row.verdicts() {
                    cells.push(&mut text, &mut first, v.detected, v.confidence);
                }
                if rows == TableRows::Failing {
                    let reason = reason_cell(report, row.verdicts());
                    push_reason(&mut text, start, header_chars, reason.as_deref());
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
            self.out.write_all(part.as_bytes())?;
        }
        Ok(())
    }
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
    // A session run's units are conversations and the traces that name none; it says how many
    // of each, so a trace left on its own (no conversation id) is not mistaken for a conversation.
    let units = match report.sessions.as_deref() {
        None => "traces".to_string(),
        Some(sessions) => format!(
            "units ({} session(s), {} trace(s) without a conversation id)",
            sessions.len(),
            traces.saturating_sub(sessions.len())
        ),
    };
    format!(
        "{failed}/{traces} {units} failed · {fired}{unjudged}{} · judge {}{skipped}",
        recorded.phrase(),
        report.judge
    )
}

/// The line under the summary of a run whose outcomes were judged (the `outcome` block).
pub(crate) fn outcome_line(o: &crate::report::OutcomeSummary) -> String {
    let rate = if o.judged > 0 {
        format!(
            "{}/{} true ({})",
            o.true_count,
            o.judged,
            crate::compat::fmt::fmt_fixed(o.outcome_rate.unwrap_or(0.0), 2)
        )
    } else {
        "no scenario has an outcome".to_string()
    };
    format!(
        "outcome: {rate} \u{b7} {} scenario(s) without an outcome, not judged \u{b7} structural clean rate {}",
        o.missing,
        crate::compat::fmt::fmt_fixed(o.structural_clean_rate, 2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of more rows than three tasks take, one task's rows without a failing trace, written
    /// from the spill: the table built in memory, with every row and with the failing ones, plain and
    /// coloured, ids cut or wide.
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
                let id = if i % 13 == 0 {
                    format!("task-[mms_issue]airplane_mode_on|bad_network_preference#{i}@run")
                } else if i % 5 == 0 {
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
        let source = crate::report::pass::VerdictSource::Spilled(&spilled);
        let counts = count(&empty, source, |_| {})
            .unwrap()
            .expect("distinct ids");
        for (rows, ids, colour) in [TableRows::All, TableRows::Failing]
            .into_iter()
            .flat_map(|r| [IdColumn::Cut, IdColumn::Wide].map(|i| (r, i)))
            .flat_map(|(r, i)| [false, true].map(|c| (r, i, c)))
        {
            let sink = TableSink::new(Vec::new(), &empty, &counts, rows, ids, colour).unwrap();
            let out = crate::report::pass::through(source, sink).into_inner();
            let in_memory = table(&whole, rows, ids);
            let expected = if colour {
                crate::report::render::colour::colour_table(&in_memory, names.len())
            } else {
                in_memory
            };
            assert_eq!(
                String::from_utf8(out).unwrap(),
                expected,
                "{rows:?}, {ids:?}, colour {colour}"
            );
        }
    }

    #[test]
    fn the_failing_table_ends_each_row_with_the_first_reason_under_its_header() {
        use crate::checks::{Gating, Reasons, VerdictColumn};
        use crate::redact::Redaction;
        use crate::report::ReportCheck;
        use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};
        let names = ["unrecovered_tool_error", "policy"];
        let mut builder = VerdictBatchBuilder::new(schema(&names), 3);
        let column = || VerdictColumn::new(3, Reasons::Fired, Redaction::Off);
        let mut columns = vec![column(), column()];
        for (id, first, second) in [
            ("clean", false, false),
            ("both", true, true),
            ("second", false, true),
        ] {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: "s",
                ..TraceFields::default()
            });
            columns[0].push(first, 1.0, "step 2 lookup failed and the agent went on");
            columns[1].push(second, 1.0, "tool 'rm' is not allowed");
        }
        let report = Report {
            checks: names
                .iter()
                .map(|n| ReportCheck::rule(n, Gating::CleanRate))
                .collect(),
            batches: vec![builder.finish(columns).unwrap()],
            ..Report::default()
        };
        let text = table(&report, TableRows::Failing, IdColumn::Cut);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "trace   unrecovered_tool_error  policy            reason",
                "--------------------------------------------------------",
                "both    FAIL 1.00         FAIL 1.00               unrecovered_tool_error: step 2 lookup failed and the agent went on",
                "second  ok   1.00         FAIL 1.00               policy: tool 'rm' is not allowed",
            ]
        );
        // Each row begins with the line the whole table prints for it.
        let all = table(&report, TableRows::All, IdColumn::Cut);
        for row in &lines[2..] {
            assert!(all.lines().any(|l| row.starts_with(l)), "{row}");
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
