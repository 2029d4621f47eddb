//! The `--junit FILE` report: JUnit XML, which GitLab, Jenkins, Buildkite and Azure Pipelines show as
//! test results without a plugin.
//!
//! ## Shape
//!
//! - `<testsuites name="faultgate">` holds one `<testsuite>` per active check, in selection order (a
//!   check selected twice gets a second suite named `<check>#2`, as in the verdict batches), then the
//!   suite `gate`.
//! - Each check suite has one `<testcase>` per trace row, in run order: `name` is the trace id,
//!   `classname` the (redacted) scenario key. A check that fired is a `<failure>` whose `type` is the
//!   check and whose `message` is the redacted reason; a quiet check is a passing case.
//! - The `gate` suite has one case, `verdict`: a `<failure>` when the run's verdict is FAIL, with the
//!   gate line (clean rate, band, threshold, p-value) or the failed-trace count as its message; a
//!   passing case with that line as `system-out` otherwise (INCONCLUSIVE passes, as its exit code does).
//!   When the gate left part of the run out (scenarios outside the band, checks `--trust` set aside),
//!   the case's `system-err` says so, one `warning: …` or `trust: …` line each.
//!
//! No timestamps, durations, host names or ids are written, so the bytes depend only on the verdicts.
//! Reasons come from the report, which holds them redacted.
//!
//! ## Bytes
//!
//! The document is written case by case, a verdict batch at a time, so a run read back from the
//! verdict spill never holds more than one batch (the counts each suite's tag carries are taken
//! before). Its bytes are those quick-junit 0.8 wrote when it built the document whole, which CI
//! pages and earlier runs have seen: four-space indents, attributes in quick-junit's order, a childless
//! element closed as `<x/>`, `<>&'"` escaped as entities, and the text first stripped of ANSI escape
//! sequences and of the control characters XML cannot carry (tab, carriage return and the C1 controls
//! included, as quick-junit strips them; line feeds stay).

use std::io::{self, Write};

use super::markdown::overall_verdict;
use crate::gate::Gate;
use crate::report::counts::SpilledCounts;
use crate::report::pass::{Body, Sink};
use crate::report::{Report, VerdictBatch};

/// Suite names of the active checks in selection order; a repeated check gets `#n` as in the verdict
/// batch columns.
fn suite_names(checks: &[String]) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    checks
        .iter()
        .map(|name| {
            let n = seen.entry(name).or_default();
            *n += 1;
            if *n == 1 {
                name.clone()
            } else {
                format!("{name}#{n}")
            }
        })
        .collect()
}

/// The one-line description of the run's verdict used by the `gate` case.
pub(crate) fn gate_line(report: &Report, gate: Option<&Gate>) -> String {
    match gate {
        // The gate's line names no count of the report's.
        Some(_) => super::gate_lines::summary_line(gate, 0, 0, ""),
        None => super::gate_lines::summary_line(
            None,
            report.failed_traces().len(),
            report.trace_ids().len(),
            overall_verdict(report, None),
        ),
    }
}

/// The counts the document carries before its cases: rows and fired verdicts per check for the suite
/// tags, distinct and failed traces for the gate line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JunitCounts {
    /// Rows of the run: one case per row in each check's suite.
    rows: usize,
    /// Fired verdicts per active check, in selection order: each suite's failures.
    fired: Vec<usize>,
    /// Distinct trace ids.
    traces: usize,
    /// Distinct trace ids where any check fired.
    failed_traces: usize,
}

impl JunitCounts {
    /// The counts of a run held whole.
    fn of_report(report: &Report) -> JunitCounts {
        let mut fired = vec![0; report.checks.len()];
        for row in report.rows() {
            for (n, verdict) in fired.iter_mut().zip(row.verdicts()) {
                *n += usize::from(verdict.detected);
            }
        }
        JunitCounts {
            rows: report.row_count(),
            fired,
            traces: report.trace_ids().len(),
            failed_traces: report.failed_traces().len(),
        }
    }

    /// The counts of a spilled run, whose rows are its distinct traces.
    fn of_spilled(counts: &SpilledCounts) -> JunitCounts {
        JunitCounts {
            rows: counts.traces,
            fired: counts.fired.clone(),
            traces: counts.traces,
            failed_traces: counts.failed,
        }
    }

    /// The run's verdict without a gate, as [`overall_verdict`] gives it.
    fn verdict(&self, gate: Option<&Gate>) -> &'static str {
        match gate {
            Some(g) => g.verdict.as_str(),
            None if self.failed_traces == 0 => "PASS",
            None => "FAIL",
        }
    }
}

/// Renders the JUnit XML document of a run held whole.
pub(crate) fn render(report: &Report, gate: Option<&Gate>) -> String {
    let mut out = Vec::new();
    write_from(
        &mut out,
        report,
        gate,
        &JunitCounts::of_report(report),
        |k, out| {
            let mut text = String::new();
            for batch in &report.batches {
                push_cases(&mut text, batch, k, &report.checks[k].name);
            }
            out.write_all(text.as_bytes())
        },
    )
    .expect("writing into memory does not fail");
    String::from_utf8(out).expect("the document is built from UTF-8 text")
}

/// The JUnit XML document of a run whose trace ids are distinct: the bytes [`render`] gives for the
/// same run held whole. The suites repeat every row once per check, so the pass keeps each row once,
/// as the escaped text its cases share and the failures of its checks, in a [`Body`]; each suite is
/// written from it at the end.
pub(crate) struct JunitSink {
    /// Each check's name, escaped as a failure's `type`.
    checks: Vec<String>,
    /// A record per row: its escaped names, then each check's failure ([`RowRecord`]).
    rows: Body,
    text: String,
    record: Vec<u8>,
}

impl JunitSink {
    /// The sink of a document of `report`'s checks, its rows in an unlinked file of `dir` (`TMPDIR`
    /// when `None`).
    ///
    /// # Errors
    ///
    /// The file cannot be created.
    pub(crate) fn new(report: &Report, dir: Option<&std::path::Path>) -> io::Result<Self> {
        Ok(JunitSink {
            checks: report
                .check_names()
                .iter()
                .map(|check| {
                    let mut escaped = String::new();
                    push_escaped(&mut escaped, check);
                    escaped
                })
                .collect(),
            rows: Body::new(dir)?,
            text: String::new(),
            record: Vec::new(),
        })
    }

    /// Writes the document, each suite's cases from the rows the pass kept.
    ///
    /// # Errors
    ///
    /// The rows cannot be read back, or `out` cannot be written.
    pub(crate) fn finish(
        mut self,
        out: &mut dyn Write,
        report: &Report,
        gate: Option<&Gate>,
        counts: &SpilledCounts,
    ) -> io::Result<()> {
        let checks = self.checks;
        let rows = &mut self.rows;
        write_from(
            out,
            report,
            gate,
            &JunitCounts::of_spilled(counts),
            |k, out| {
                let mut records = rows.read_back()?;
                let mut text = Vec::with_capacity(1 << 16);
                let mut row = RowRecord::default();
                while row.read_next(&mut records, checks.len())? {
                    text.extend_from_slice(CASE_OPEN.as_bytes());
                    text.extend_from_slice(&row.names);
                    match row.failures[k].clone() {
                        Some(reason) => {
                            text.extend_from_slice(FAILURE_OPEN.as_bytes());
                            text.extend_from_slice(&row.reasons[reason]);
                            text.extend_from_slice(FAILURE_TYPE.as_bytes());
                            text.extend_from_slice(checks[k].as_bytes());
                            text.extend_from_slice(FAILURE_CLOSE.as_bytes());
                        }
                        None => text.extend_from_slice(PASSED_CLOSE.as_bytes()),
                    }
                    if text.len() >= 1 << 16 {
                        out.write_all(&text)?;
                        text.clear();
                    }
                }
                out.write_all(&text)
            },
        )
    }
}

impl Sink for JunitSink {
    fn take(&mut self, batch: &VerdictBatch) -> io::Result<()> {
        let record = &mut self.record;
        let text = &mut self.text;
        record.clear();
        for row in batch.rows() {
            text.clear();
            push_case_names(text, row.trace_id(), row.scenario());
            RowRecord::push_len(record, text.len());
            record.extend_from_slice(text.as_bytes());
            for verdict in row.verdicts() {
                if verdict.detected {
                    text.clear();
                    push_escaped(text, verdict.reason.unwrap_or_default());
                    RowRecord::push_len(record, text.len() + 1);
                    record.extend_from_slice(text.as_bytes());
                } else {
                    RowRecord::push_len(record, 0);
                }
            }
        }
        self.rows.write_all(record)
    }
}

/// A row as [`JunitSink`] keeps it: the length and bytes of its escaped names, then for each check
/// `0` when it passed, or one more than the length of its escaped reason and the reason. Lengths are
/// four bytes, little-endian. Read back into the same buffers, row after row.
#[derive(Default)]
struct RowRecord {
    names: Vec<u8>,
    /// The escaped reasons of the checks that fired, one after the other.
    reasons: Vec<u8>,
    /// Each check's reason in `reasons`, `None` when it passed.
    failures: Vec<Option<std::ops::Range<usize>>>,
}

impl RowRecord {
    fn push_len(record: &mut Vec<u8>, len: usize) {
        let len = u32::try_from(len).expect("a trace's text is under 4 GiB");
        record.extend_from_slice(&len.to_le_bytes());
    }

    /// Reads the next row of `records`, of `checks` checks; `false` at their end.
    fn read_next(&mut self, records: &mut impl io::Read, checks: usize) -> io::Result<bool> {
        fn len(records: &mut impl io::Read) -> io::Result<usize> {
            let mut len = [0; 4];
            records.read_exact(&mut len)?;
            Ok(u32::from_le_bytes(len) as usize)
        }
        fn append(records: &mut impl io::Read, to: &mut Vec<u8>, n: usize) -> io::Result<()> {
            let at = to.len();
            to.resize(at + n, 0);
            records.read_exact(&mut to[at..])
        }
        let names = match len(records) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(e),
        };
        self.names.clear();
        append(records, &mut self.names, names)?;
        self.reasons.clear();
        self.failures.clear();
        for _ in 0..checks {
            let failure = match len(records)? {
                0 => None,
                n => {
                    let at = self.reasons.len();
                    append(records, &mut self.reasons, n - 1)?;
                    Some(at..self.reasons.len())
                }
            };
            self.failures.push(failure);
        }
        Ok(true)
    }
}

/// The text of a test case, around its escaped names and failure.
const CASE_OPEN: &str = "\n        <testcase name=\"";
const FAILURE_OPEN: &str = "\">\n            <failure message=\"";
const FAILURE_TYPE: &str = "\" type=\"";
const FAILURE_CLOSE: &str = "\"/>\n        </testcase>";
const PASSED_CLOSE: &str = "\"/>";

/// Appends a case's escaped trace id and scenario, as its `name` and `classname` carry them.
fn push_case_names(text: &mut String, trace_id: &str, scenario: &str) {
    push_escaped(text, trace_id);
    text.push_str("\" classname=\"");
    push_escaped(text, scenario);
}

/// Appends the test cases of `batch`'s rows in the suite of the `k`-th check, named `check`.
fn push_cases(text: &mut String, batch: &VerdictBatch, k: usize, check: &str) {
    for row in batch.rows() {
        text.push_str(CASE_OPEN);
        push_case_names(text, row.trace_id(), row.scenario());
        let verdict = row.verdict(k);
        if verdict.detected {
            text.push_str(FAILURE_OPEN);
            push_escaped(text, verdict.reason.unwrap_or_default());
            text.push_str(FAILURE_TYPE);
            push_escaped(text, check);
            text.push_str(FAILURE_CLOSE);
        } else {
            text.push_str(PASSED_CLOSE);
        }
    }
}

/// Writes the document; `suite` writes the test cases of the `k`-th check's suite.
fn write_from(
    out: &mut dyn Write,
    report: &Report,
    gate: Option<&Gate>,
    counts: &JunitCounts,
    mut suite: impl FnMut(usize, &mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let line = super::gate_lines::summary_line(
        gate,
        counts.failed_traces,
        counts.traces,
        counts.verdict(gate),
    );
    let gate_failed = counts.verdict(gate) == "FAIL";
    // One case per budget in the gate's suite, only with --budget, so other documents keep their bytes.
    let budgets = gate.and_then(|g| g.budgets.as_deref()).unwrap_or_default();
    let budgets_failed = budgets
        .iter()
        .filter(|b| b.verdict == crate::gate::Verdict::Fail)
        .count();
    let checks = report.checks.len();
    let tests = counts.rows * checks + 1 + budgets.len();
    let failures = counts.fired.iter().sum::<usize>() + usize::from(gate_failed) + budgets_failed;
    let mut text = String::with_capacity(1 << 16);
    text.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    text.push_str("\n<testsuites name=\"faultgate\"");
    push_counts(&mut text, &[("tests", tests), ("skipped", 0)]);
    push_counts(&mut text, &[("failures", failures), ("errors", 0)]);
    text.push('>');
    for (k, suite_name) in suite_names(&report.check_names()).iter().enumerate() {
        suite_tag(&mut text, suite_name, counts.rows, counts.fired[k]);
        if counts.rows == 0 {
            text.push_str("/>");
            continue;
        }
        text.push('>');
        out.write_all(text.as_bytes())?;
        text.clear();
        suite(k, out)?;
        text.push_str("\n    </testsuite>");
    }

    suite_tag(
        &mut text,
        "gate",
        1 + budgets.len(),
        usize::from(gate_failed) + budgets_failed,
    );
    text.push_str(">\n        <testcase name=\"verdict\" classname=\"gate\">");
    if gate_failed {
        text.push_str("\n            <failure message=\"");
        push_escaped(&mut text, &line);
        text.push_str("\" type=\"gate\"/>");
    } else {
        text.push_str("\n            <system-out>");
        push_escaped(&mut text, &line);
        text.push_str("</system-out>");
    }
    // What the gate left out (scenarios outside the band) goes beside the verdict, so a CI page shows
    // it; absent otherwise, so the document is unchanged.
    if let Some(g) = gate {
        let shown: Vec<String> = super::gate_lines::shown_warnings(g)
            .iter()
            .map(|w| format!("warning: {w}"))
            .chain(super::gate_lines::set_aside_lines(g))
            .collect();
        if !shown.is_empty() {
            text.push_str("\n            <system-err>");
            push_escaped(&mut text, &shown.join("\n"));
            text.push_str("</system-err>");
        }
    }
    text.push_str("\n        </testcase>");
    for budget in budgets {
        text.push_str("\n        <testcase name=\"budget ");
        push_escaped(
            &mut text,
            &super::gate_lines::budget_expression(&budget.budget),
        );
        text.push_str("\" classname=\"gate\">");
        let line = super::gate_lines::budget_line(budget);
        if budget.verdict == crate::gate::Verdict::Fail {
            text.push_str("\n            <failure message=\"");
            push_escaped(&mut text, &line);
            text.push_str("\" type=\"budget\"/>");
        } else {
            text.push_str("\n            <system-out>");
            push_escaped(&mut text, &line);
            text.push_str("</system-out>");
        }
        text.push_str("\n        </testcase>");
    }
    text.push_str("\n    </testsuite>\n</testsuites>\n\n");
    out.write_all(text.as_bytes())
}

/// `\n    <testsuite name=".." tests=".." skipped="0" errors="0" failures=".."`, left open.
fn suite_tag(text: &mut String, name: &str, tests: usize, failures: usize) {
    text.push_str("\n    <testsuite name=\"");
    push_escaped(text, name);
    text.push('"');
    push_counts(text, &[("tests", tests), ("skipped", 0), ("errors", 0)]);
    push_counts(text, &[("failures", failures)]);
}

fn push_counts(text: &mut String, counts: &[(&str, usize)]) {
    use std::fmt::Write as _;
    for (name, n) in counts {
        let _ = write!(text, " {name}=\"{n}\"");
    }
}

/// The bytes [`push_escaped`] may change: control bytes, the lead byte of a C1 control, and the five
/// characters XML escapes.
const NOTABLE: [bool; 256] = {
    let mut notable = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        notable[b] = true;
        b += 1;
    }
    let mut k = 0;
    let others = [0xC2, b'<', b'>', b'&', b'\'', b'"'];
    while k < others.len() {
        notable[others[k] as usize] = true;
        k += 1;
    }
    notable
};

/// Appends `raw` as XML attribute or element text: stripped of what XML cannot carry, then escaped.
fn push_escaped(text: &mut String, raw: &str) {
    // Most ids and reasons hold none of the bytes below: one look at each byte then suffices.
    if !raw.bytes().any(|b| NOTABLE[usize::from(b)]) {
        text.push_str(raw);
        return;
    }
    // Only a control character (C0, or C1, which UTF-8 writes after 0xC2) can start an ANSI escape or
    // be stripped: other text is kept as it is, without the stripper's allocations.
    let stripped;
    let kept = if raw.bytes().any(|b| b < 0x20 || b == 0xC2) {
        stripped = strip_ansi_escapes::strip_str(raw).replace(
            |c| matches!(c, '\x00'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f'),
            "",
        );
        stripped.as_str()
    } else {
        raw
    };
    let mut rest = kept;
    while let Some(at) = rest.find(['<', '>', '&', '\'', '"']) {
        text.push_str(&rest[..at]);
        text.push_str(match rest.as_bytes()[at] {
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'&' => "&amp;",
            b'\'' => "&apos;",
            _ => "&quot;",
        });
        rest = &rest[at + 1..];
    }
    text.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_checks_get_numbered_suites() {
        let names = suite_names(&["a".into(), "b".into(), "a".into(), "a".into()]);
        assert_eq!(names, ["a", "b", "a#2", "a#3"]);
    }

    #[test]
    fn an_empty_report_has_only_the_gate_suite_and_passes() {
        let report = Report::default();
        let xml = render(&report, None);
        assert!(
            xml.contains(
                r#"<testsuite name="gate" tests="1" skipped="0" errors="0" failures="0">"#
            )
        );
        assert!(xml.contains("PASS: 0/0 traces failed (no band given)"));
        assert!(!xml.contains("<failure"));
    }

    /// A report of two rows over a check selected twice and another, with ids, scenarios and reasons
    /// that need escaping or stripping.
    fn awkward_report() -> Report {
        use crate::checks::{Reasons, VerdictColumn};
        use crate::redact::Redaction;
        use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};
        let names = ["abstention", "loop", "abstention"];
        let mut builder = VerdictBatchBuilder::new(schema(&names), 2);
        let mut columns: Vec<VerdictColumn> = (0..3)
            .map(|_| VerdictColumn::new(2, Reasons::All, Redaction::Off))
            .collect();
        let rows = [
            (
                "t<1>&'\"",
                "s\tcope\r",
                "red \x1b[31malert\x1b[0m \u{85}C1 \u{7f}del",
            ),
            (
                "t\u{1b}]0;title\u{7}2",
                "é\x0bx",
                "line\nbreak\x00 & <tag> \u{1F600}",
            ),
        ];
        for (i, (id, scenario, reason)) in rows.iter().enumerate() {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario,
                ..TraceFields::default()
            });
            for (k, column) in columns.iter_mut().enumerate() {
                column.push((i + k) % 2 == 0, 0.5, *reason);
            }
        }
        Report {
            checks: names
                .iter()
                .map(|n| crate::report::ReportCheck::rule(n, crate::checks::Gating::CleanRate))
                .collect(),
            batches: vec![builder.finish(columns).expect("verdict batch")],
            ..Report::default()
        }
    }

    #[test]
    fn the_document_has_the_bytes_quick_junit_wrote() {
        // The document quick-junit 0.8 wrote for this report, kept as CI pages have seen it: ANSI
        // sequences, tabs, carriage returns, C0 and C1 controls stripped, line feeds and DEL kept.
        let expected = concat!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
            "<testsuites name=\"faultgate\" tests=\"7\" skipped=\"0\" failures=\"4\" errors=\"0\">\n",
            "    <testsuite name=\"abstention\" tests=\"2\" skipped=\"0\" errors=\"0\" failures=\"1\">\n",
            "        <testcase name=\"t&lt;1&gt;&amp;&apos;&quot;\" classname=\"scope\">\n",
            "            <failure message=\"red alert C1 \u{7f}del\" type=\"abstention\"/>\n",
            "        </testcase>\n",
            "        <testcase name=\"t2\" classname=\"\u{e9}x\"/>\n",
            "    </testsuite>\n",
            "    <testsuite name=\"loop\" tests=\"2\" skipped=\"0\" errors=\"0\" failures=\"1\">\n",
            "        <testcase name=\"t&lt;1&gt;&amp;&apos;&quot;\" classname=\"scope\"/>\n",
            "        <testcase name=\"t2\" classname=\"\u{e9}x\">\n",
            "            <failure message=\"line\nbreak &amp; &lt;tag&gt; \u{1F600}\" type=\"loop\"/>\n",
            "        </testcase>\n",
            "    </testsuite>\n",
            "    <testsuite name=\"abstention#2\" tests=\"2\" skipped=\"0\" errors=\"0\" failures=\"1\">\n",
            "        <testcase name=\"t&lt;1&gt;&amp;&apos;&quot;\" classname=\"scope\">\n",
            "            <failure message=\"red alert C1 \u{7f}del\" type=\"abstention\"/>\n",
            "        </testcase>\n",
            "        <testcase name=\"t2\" classname=\"\u{e9}x\"/>\n",
            "    </testsuite>\n",
            "    <testsuite name=\"gate\" tests=\"1\" skipped=\"0\" errors=\"0\" failures=\"1\">\n",
            "        <testcase name=\"verdict\" classname=\"gate\">\n",
            "            <failure message=\"FAIL: 2/2 traces failed (no band given)\" type=\"gate\"/>\n",
            "        </testcase>\n",
            "    </testsuite>\n",
            "</testsuites>\n\n",
        );
        assert_eq!(render(&awkward_report(), None), expected);
    }

    #[test]
    fn a_document_written_in_a_pass_has_the_bytes_of_the_run_held_whole() {
        use crate::checks::{Reasons, VerdictColumn};
        use crate::redact::Redaction;
        use crate::report::pass::{VerdictSource, through};
        use crate::report::spill::SpilledRuleRun;
        use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};
        let names = ["abstention", "loop", "abstention"];
        // A check that fires with no reason, one whose reason needs escaping, and one that is quiet.
        let batch = |from: usize, to: usize| {
            let mut builder = VerdictBatchBuilder::new(schema(&names), to - from);
            let mut columns: Vec<VerdictColumn> = (0..3)
                .map(|_| VerdictColumn::new(to - from, Reasons::All, Redaction::Off))
                .collect();
            for i in from..to {
                builder.push_trace(&TraceFields {
                    trace_id: &format!("t<{i}>"),
                    scenario: &format!("s\"{}", i % 2),
                    ..TraceFields::default()
                });
                columns[0].push(i % 2 == 0, 1.0, "");
                columns[1].push(i % 3 == 0, 0.5, "a & \x1b[31mb\x1b[0m");
                columns[2].push(false, 0.0, "");
            }
            builder.finish(columns).expect("verdict batch")
        };
        let run = SpilledRuleRun::new(&names, vec![batch(0, 4), batch(4, 5), batch(5, 9)]);
        let whole = JunitCounts::of_report(&run.whole);
        let counts = SpilledCounts {
            traces: whole.traces,
            failed: whole.failed_traces,
            fired: whole.fired,
            longest_id: 0,
            user_steps: 0,
            recorded_outcomes: Default::default(),
        };
        let sink = through(
            VerdictSource::Spilled(&run.spilled),
            JunitSink::new(&run.without_batches, None).unwrap(),
        );
        let mut out = Vec::new();
        sink.finish(&mut out, &run.without_batches, None, &counts)
            .unwrap();
        let expected = render(&run.whole, None);
        assert!(expected.contains("message=\"\" type=\"abstention\""));
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn a_check_without_rows_is_an_empty_suite_element() {
        let report = Report {
            checks: vec![crate::report::ReportCheck::rule(
                "loop",
                crate::checks::Gating::CleanRate,
            )],
            ..Report::default()
        };
        assert!(render(&report, None).contains(
            "\n    <testsuite name=\"loop\" tests=\"0\" skipped=\"0\" errors=\"0\" failures=\"0\"/>\n    <testsuite name=\"gate\""
        ));
    }
}
