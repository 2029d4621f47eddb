//! The checks: one file per failure mode, one static registry, one runner.
//!
//! A check runs as a pass over a batch: it reads the typed [`Columns`] resolved once per batch, walks
//! the traces of the pass with their span and step row ranges, and pushes one verdict per trace into a
//! [`VerdictColumn`]. Checks never see the export format, and they compute on raw values; the column
//! masks each reason it keeps, so redaction holds for everything leaving the process.

pub(crate) mod abstention;
pub(crate) mod columns;
pub(crate) mod context_overflow;
pub(crate) mod outcome;
pub(crate) mod policy;
pub(crate) mod registry;
pub(crate) mod repeated_call;
pub(crate) mod search_loop;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod truncation;
pub(crate) mod unrecovered_tool_error;
pub(crate) mod verdict;
pub(crate) mod workflow;
pub(crate) mod wrong_answer;
pub(crate) mod wrong_direction;

pub use columns::Columns;
pub use registry::{ALL, Check, CheckKind, Gating, Input, Registered, checks, find};
pub use verdict::{Reason, Reasons, VerdictColumn};

use crate::golden::{Golden, Outcomes};

/// What one check concluded about one trace, as a value (a judge's verdict, a test's expectation).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether the check fired.
    pub detected: bool,
    /// How sure the check is, from 0 to 1.
    pub confidence: f64,
    /// Why the check fired or not; empty when it gives no reason.
    pub reason: String,
}

impl Verdict {
    /// A verdict with full confidence.
    pub fn sure(detected: bool, reason: impl Into<String>) -> Verdict {
        Verdict {
            detected,
            confidence: 1.0,
            reason: reason.into(),
        }
    }
}

/// The inputs a check may need besides the trace.
#[derive(Default)]
pub struct CheckContext {
    /// Expected answers per scenario (`--golden`); `None` when not given.
    pub golden: Option<Golden>,
    /// Task outcomes per trace (`--outcomes`); `None` when not given.
    pub outcomes: Option<Outcomes>,
    /// The tool-use policy (`--policy`); the built-in default when none is given.
    pub policy: crate::policy::Policy,
    /// The workflow spec of `--workflow`; the `workflow` check needs it.
    pub workflow: Option<crate::workflow::Workflow>,
    /// The run's judge, when a judged check runs.
    pub judge: Option<std::sync::Arc<crate::judge::Judge>>,
}

/// A golden check's verdict when there is nothing to grade: (detected, confidence, reason).
pub(crate) type Ungraded = (bool, f64, &'static str);

/// The expected answer and the trimmed final answer of trace `t` that a golden check grades, or the
/// verdict it gives when there is nothing to grade (no expectation: confidence 0; no answer: not
/// detected).
pub(crate) fn golden_and_answer<'a>(
    cols: &Columns<'a>,
    t: usize,
    cx: &'a CheckContext,
) -> Result<(&'a str, &'a str), Ungraded> {
    let expected = cx
        .golden
        .as_ref()
        .and_then(|g| g.expected(cols.scenario.value(t), cols.prompt.value(t)))
        .ok_or((false, 0.0, "no golden answer for this scenario"))?;
    let answer = crate::compat::value::py_strip(cols.answer.value(t));
    if answer.is_empty() {
        return Err((false, 1.0, "no answer to grade"));
    }
    Ok((expected, answer))
}
