//! The tool steps of failing traces, kept for the outputs that show them (the HTML report).
//!
//! Verdicts keep only a step count; a reader looking at a failing trace wants the steps themselves:
//! which tool ran, with what arguments, and what came back. They are taken from a batch's columns
//! while the batch is alive, redacted and cut to a readable length, and only for traces on which a
//! check fired, up to [`MAX_TRACES`] per run, so a run over millions of traces keeps a bounded amount.

use super::verdicts::VerdictBatch;
use crate::redact::Redaction;
use crate::table::columns::{Columns, opt};

/// Failing traces whose steps a run keeps; the rest show their step count only.
pub(crate) const MAX_TRACES: usize = 200;
/// Steps kept per trace, from the first.
pub(crate) const MAX_STEPS: usize = 100;
/// Characters of arguments or result kept per step (after redaction).
pub(crate) const MAX_CHARS: usize = 400;

/// One tool step as shown: its tool, arguments and result, redacted and cut.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepView {
    pub tool: String,
    pub arguments: String,
    pub result: String,
    /// The step's span recorded an error.
    pub error: bool,
    /// Who made the call when it was not the agent (`user`, `system`): such a step was not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

/// The steps of one failing trace (a partial keeps them as JSON, for a merged HTML report).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceSteps {
    pub trace_id: String,
    pub steps: Vec<StepView>,
    /// Steps not kept past [`MAX_STEPS`].
    pub more: usize,
}

/// The steps of the traces of `cols` on which a check fired in `verdicts` (the same traces, in the
/// same order), at most `limit` traces, in trace order.
pub(crate) fn failing(
    cols: &Columns<'_>,
    verdicts: &VerdictBatch,
    redaction: Redaction,
    limit: usize,
) -> Vec<TraceSteps> {
    let mut out = Vec::new();
    for (t, row) in cols.traces().zip(verdicts.rows()) {
        if out.len() >= limit {
            break;
        }
        if !row.failed() {
            continue;
        }
        // A step names its span by position within the trace; the span columns are the batch's.
        let spans = cols.span_rows(t).start;
        let rows = cols.step_rows(t);
        let total = rows.len();
        let steps = rows
            .take(MAX_STEPS)
            .map(|s| StepView {
                tool: shown(opt(cols.tool, s).unwrap_or(""), redaction),
                arguments: shown(opt(cols.arguments, s).unwrap_or(""), redaction),
                result: shown(opt(cols.result, s).unwrap_or(""), redaction),
                error: cols.step_span(s).map(|p| spans + p).is_some_and(|span| {
                    cols.status_code[span] == 2 || opt(cols.span_error, span).is_some()
                }),
                actor: (!cols.agent_step(s)).then(|| cols.actor.value(s).to_string()),
            })
            .collect();
        out.push(TraceSteps {
            trace_id: row.trace_id().to_string(),
            steps,
            more: total.saturating_sub(MAX_STEPS),
        });
    }
    out
}

/// `text` masked, then cut to [`MAX_CHARS`] characters (masking first, so a cut never splits a
/// secret into an unmasked half).
fn shown(text: &str, redaction: Redaction) -> String {
    let masked = redaction.mask(text);
    match masked.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => format!("{}…", &masked[..end]),
        None => masked.into_owned(),
    }
}

/// The 1-based step numbers a reason points at (`step 3: …`, `failed at step 2`).
pub(crate) fn steps_named(reason: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = reason;
    while let Some(i) = rest.find("step ") {
        rest = &rest[i + 5..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Reasons, VerdictColumn};
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};
    use crate::table::TraceBatch;
    use crate::table::record::TraceRecord;
    use crate::table::testing::TraceSpec;

    /// The verdicts of a run of one check that fired on the traces `fired` marks.
    fn verdicts(ids: &[&str], fired: &[bool]) -> VerdictBatch {
        let mut builder = VerdictBatchBuilder::new(schema(&["search_loop"]), ids.len());
        let mut column = VerdictColumn::new(ids.len(), Reasons::None, Redaction::Off);
        for (id, &fired) in ids.iter().zip(fired) {
            builder.push_trace(&TraceFields {
                trace_id: id,
                scenario: id,
                ..TraceFields::default()
            });
            column.sure(fired, "");
        }
        builder.finish(vec![column]).expect("verdict batch")
    }

    #[test]
    fn reasons_name_their_steps() {
        assert_eq!(steps_named("step 3: tool 'x' not in allowlist"), [3]);
        assert_eq!(
            steps_named("Tool 'a' failed at step 12 (boom) and step 2"),
            [12, 2]
        );
        assert!(steps_named("no steps here; step cap").is_empty());
    }

    #[test]
    fn a_step_s_error_mark_reads_its_own_trace_s_span() {
        let named = |spec: TraceSpec, id: &str| TraceRecord {
            trace_id: id.to_string().into(),
            ..spec.build()
        };
        let traces = [
            named(
                TraceSpec::new().span_with("fetch", "{}", "boom", |s| s.status_code = 2),
                "first",
            ),
            named(
                TraceSpec::new()
                    .step("fetch", "{}", "ok")
                    .span_with("fetch", "{}", "boom", |s| s.status_code = 2),
                "second",
            ),
        ];
        let batch = TraceBatch::build(&traces);
        let cols = Columns::new(&batch);
        let kept = failing(
            &cols,
            &verdicts(&["first", "second"], &[false, true]),
            Redaction::Off,
            10,
        );
        let marks: Vec<bool> = kept[0].steps.iter().map(|s| s.error).collect();
        assert_eq!(marks, [false, true]);
    }

    #[test]
    fn only_failing_traces_keep_steps_redacted_and_cut() {
        let long = "x".repeat(MAX_CHARS + 50);
        let named = |spec: TraceSpec, id: &str| TraceRecord {
            trace_id: id.to_string().into(),
            ..spec.build()
        };
        let traces = [
            named(TraceSpec::new().answer("ok"), "clean"),
            named(
                (0..12).fold(TraceSpec::new(), |t, _| {
                    t.step("search", r#"{"q": "mail bob@example.com"}"#, &long)
                }),
                "looping",
            ),
        ];
        let batch = TraceBatch::build(&traces);
        let cols = Columns::new(&batch);
        let verdicts = verdicts(&["clean", "looping"], &[false, true]);
        let kept = failing(&cols, &verdicts, Redaction::Builtin, 10);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].trace_id, "looping");
        assert_eq!(kept[0].steps.len(), 12);
        let step = &kept[0].steps[0];
        assert_eq!(step.tool, "search");
        assert!(
            !step.arguments.contains("bob@example.com"),
            "{}",
            step.arguments
        );
        assert_eq!(step.result.chars().count(), MAX_CHARS + 1);
        assert!(failing(&cols, &verdicts, Redaction::Builtin, 0).is_empty());
    }
}
