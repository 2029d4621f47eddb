//! What a golden check (`wrong_answer`, `truncation`) grades: the trace's final answer against the
//! golden file's expected answer for its scenario.

use super::contract::CheckContext;
use crate::table::columns::Columns;

/// A golden check's verdict when there is nothing to grade: (detected, confidence, reason).
pub(crate) type Ungraded = (bool, f64, &'static str);

/// The expected answer and the trimmed final answer of trace `t` that a golden check grades, or the
/// verdict it gives when there is nothing to grade (no expectation: confidence 0; no answer: not
/// detected).
pub(crate) fn golden_and_answer<'a>(
    cols: &Columns<'a>,
    t: usize,
    cx: &CheckContext<'a>,
) -> Result<(&'a str, &'a str), Ungraded> {
    let expected = cx
        .inputs
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
