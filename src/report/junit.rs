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
//!   When the gate left part of the run out (scenarios outside the band), the case's `system-err` says
//!   so, one `warning: …` line each.
//!
//! No timestamps, durations, host names or ids are written, so the bytes depend only on the verdicts.
//! Reasons come from the report, which holds them redacted; quick-junit escapes them for XML and drops
//! characters XML cannot carry.

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use super::Report;
use super::markdown::overall_verdict;
use crate::compat::fmt::fmt_fixed;
use crate::gate::Gate;

/// Errors of rendering the XML.
#[derive(Debug, thiserror::Error)]
#[error("cannot render JUnit XML: {0}")]
pub(crate) struct JunitError(#[from] quick_junit::SerializeError);

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
        None => format!(
            "{}: {}/{} traces failed (no band given)",
            overall_verdict(report, None),
            report.failed_traces().len(),
            report.trace_ids().len()
        ),
    }
}

/// Renders the JUnit XML document.
///
/// # Errors
///
/// Only if the XML writer fails, which writing into memory does not.
pub(crate) fn render(report: &Report, gate: Option<&Gate>) -> Result<String, JunitError> {
    let mut junit = JunitReport::new("faultgate");
    for (k, suite_name) in suite_names(&report.check_names()).into_iter().enumerate() {
        let mut suite = TestSuite::new(suite_name.as_str());
        for row in report.rows() {
            let verdict = row.verdict(k);
            let status = if verdict.detected {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_type(report.checks[k].name.as_str())
                    .set_message(verdict.reason.unwrap_or_default());
                status
            } else {
                TestCaseStatus::success()
            };
            let mut case = TestCase::new(row.trace_id(), status);
            case.set_classname(row.scenario());
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }

    let line = gate_line(report, gate);
    let failed = overall_verdict(report, gate) == "FAIL";
    let mut case = if failed {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_type("gate").set_message(line.as_str());
        TestCase::new("verdict", status)
    } else {
        let mut case = TestCase::new("verdict", TestCaseStatus::success());
        case.set_system_out(line.as_str());
        case
    };
    // What the gate left out (scenarios outside the band) goes beside the verdict, so a CI page shows
    // it; absent otherwise, so the document is unchanged.
    if let Some(g) = gate {
        let shown: Vec<String> = super::gate_lines::shown_warnings(g)
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect();
        if !shown.is_empty() {
            case.set_system_err(shown.join("\n"));
        }
    }
    case.set_classname("gate");
    let mut suite = TestSuite::new("gate");
    suite.add_test_case(case);
    junit.add_test_suite(suite);
    let mut xml = junit.to_string()?;
    xml.push('\n');
    Ok(xml)
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
        let xml = render(&report, None).unwrap();
        assert!(
            xml.contains(
                r#"<testsuite name="gate" tests="1" skipped="0" errors="0" failures="0">"#
            )
        );
        assert!(xml.contains("PASS: 0/0 traces failed (no band given)"));
        assert!(!xml.contains("<failure"));
    }
}
