//! The checks: one file per failure mode, one static registry, one runner.
//!
//! A check reads one trace at a time through [`TraceView`], a window onto the batch's columns, and returns
//! a [`Verdict`]. Checks never see the export format, and they compute on raw values; redaction happens
//! when results leave the process.

pub mod abstention;
pub mod context_overflow;
pub mod outcome;
pub mod policy;
pub mod registry;
pub mod repeated_call;
pub mod search_loop;
#[cfg(test)]
pub mod testing;
pub mod truncation;
pub mod unrecovered_tool_error;
pub mod view;
pub mod workflow;
pub mod wrong_answer;
pub mod wrong_direction;

pub use registry::{ALL, Check, CheckKind, find};
pub use view::TraceView;

use crate::golden::{Golden, Outcomes};

/// What one check concluded about one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub detected: bool,
    pub confidence: f64,
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
    pub golden: Option<Golden>,
    pub outcomes: Option<Outcomes>,
    pub policy: crate::policy::Policy,
    /// The workflow spec of `--workflow`; the `workflow` check needs it.
    pub workflow: Option<crate::workflow::Workflow>,
    /// The run's judge, when a judged check runs.
    pub judge: Option<std::sync::Arc<crate::judge::Judge>>,
}

/// The expected answer and the trimmed final answer a golden check grades, or the verdict it gives when
/// there is nothing to grade (no expectation: confidence 0; no answer: not detected).
pub(crate) fn golden_and_answer<'a>(
    trace: &TraceView<'a>,
    cx: &'a CheckContext,
) -> Result<(&'a str, &'a str), Verdict> {
    let expected = cx
        .golden
        .as_ref()
        .and_then(|g| g.expected(trace.scenario(), trace.prompt()))
        .ok_or_else(|| Verdict {
            detected: false,
            confidence: 0.0,
            reason: "no golden answer for this scenario".into(),
        })?;
    let answer = crate::pyfmt::py_strip(trace.answer());
    if answer.is_empty() {
        return Err(Verdict::sure(false, "no answer to grade"));
    }
    Ok((expected, answer))
}
