//! # unrecovered_tool_error
//!
//! **What it detects.** A tool call that failed (an error object, a non-zero exit code, an `Error:`
//! prefix, a `<tool_use_error>` tag, or an error status on the span) with no later successful call of the
//! same tool.
//!
//! **Why it matters.** A failure the agent recovers from is noise; one it never recovers from means the
//! answer was built without the data the tool should have given.
//!
//! **Example.** `fetch` returns `{"exit_code": 1}` at step 3 and is never called again:
//! `Tool 'fetch' failed at step 3 (Non-zero exit_code: 1) and no subsequent call to 'fetch' succeeded.`
//!
//! **Known limits.** Recovery is by tool name, not by arguments: a later successful call for another
//! record counts as recovery. A span error is recovered by any later clean span that backs a step, so a
//! failed root that starts first never fires.

use std::collections::HashSet;

use arrow_array::Array;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::table::columns::Columns;
use crate::table::columns::opt;

pub(crate) struct UnrecoveredToolError;

impl Check for UnrecoveredToolError {
    fn name(&self) -> &'static str {
        "unrecovered_tool_error"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "A tool call produced a structural error and the tool was never used successfully afterwards."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        // Buffers reused across the pass.
        let mut succeeds_later: HashSet<&str> = HashSet::new();
        let mut clean_backer: Vec<bool> = Vec::new();
        let mut dirty: Vec<bool> = Vec::new();
        let mut others: Vec<bool> = Vec::new();
        for t in cols.traces() {
            let steps = cols.step_rows(t);
            let first_step = steps.start;
            // A step is recovered when a later call of the same tool succeeds; walking backwards keeps
            // the set of tools that succeed later, so the pass is linear.
            succeeds_later.clear();
            let mut unrecovered = None;
            // Only the agent's calls are judged, and only they recover: a simulated user's failing
            // tool is the user's problem to report, not the agent's error.
            for s in steps.clone().rev().filter(|&s| cols.agent_step(s)) {
                let tool = cols.tool.value(s);
                match opt(cols.structural_error, s) {
                    Some(desc) if !succeeds_later.contains(tool) => {
                        unrecovered = Some((s - first_step, tool, desc));
                    }
                    Some(_) => {}
                    None => {
                        succeeds_later.insert(tool);
                    }
                }
            }
            if let Some((i, tool, desc)) = unrecovered {
                out.sure(
                    true,
                    format_args!(
                        "Tool '{tool}' failed at step {} ({desc}) and no subsequent call to '{tool}' succeeded.",
                        i + 1
                    ),
                );
                continue;
            }
            let span_rows = cols.span_rows(t);
            let first_span = span_rows.start;
            let spans = span_rows.len();
            // Spans whose steps are all clean: a span error before one of them is recovered.
            dirty.clear();
            dirty.resize(spans, false);
            // Spans behind only steps of others (a simulated user's tools): neither their errors nor
            // their successes are the agent's.
            others.clear();
            others.resize(spans, false);
            for s in steps.clone().filter(|&s| !cols.agent_step(s)) {
                if let Some(p) = cols.step_span(s) {
                    others[p] = true;
                }
            }
            for s in steps.clone().filter(|&s| cols.agent_step(s)) {
                if let Some(p) = cols.step_span(s) {
                    others[p] = false;
                }
            }
            for s in steps {
                if let Some(p) = cols.step_span(s)
                    && cols.structural_error.is_valid(s)
                {
                    dirty[p] = true;
                }
            }
            clean_backer.clear();
            clean_backer.extend(span_rows.map(|row| {
                cols.span_error.is_null(row)
                    && cols.backs_step.value(row)
                    && !dirty[row - first_span]
                    && !others[row - first_span]
            }));
            let mut recovered_after = false;
            let mut first_unrecovered = None;
            for p in (0..spans).rev() {
                if let Some(err) = opt(cols.span_error, first_span + p)
                    && !recovered_after
                    && !others[p]
                {
                    first_unrecovered = Some((p, err));
                }
                recovered_after |= clean_backer[p];
            }
            match first_unrecovered {
                Some((p, err)) => out.sure(
                    true,
                    format_args!("Unrecovered span error at span {} of {spans}: {err}", p + 1),
                ),
                None => out.sure(false, "no unrecovered tool errors"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{RunCheck, TraceSpec};

    #[test]
    fn an_error_never_followed_by_success_fires() {
        let v = TraceSpec::new()
            .step("fetch", "{}", "ok")
            .step("fetch", "{}", r#"{"exit_code": 1}"#)
            .step("other", "{}", "fine")
            .run(&UnrecoveredToolError);
        assert!(v.detected);
        assert_eq!(
            v.reason,
            "Tool 'fetch' failed at step 2 (Non-zero exit_code: 1) and no subsequent call to 'fetch' succeeded."
        );
    }

    #[test]
    fn a_later_success_recovers() {
        let v = TraceSpec::new()
            .step("fetch", "{}", "Error: timeout")
            .step("fetch", "{}", "ok")
            .run(&UnrecoveredToolError);
        assert!(!v.detected);
        assert_eq!(v.reason, "no unrecovered tool errors");
    }

    #[test]
    fn span_errors_need_a_later_clean_step_span() {
        let v = TraceSpec::new()
            .step("a", "{}", "ok")
            .span_with("b", "{}", "fine", |s| s.status_code = 2)
            .run(&UnrecoveredToolError);
        assert!(v.detected);
        assert_eq!(
            v.reason,
            "Unrecovered span error at span 3 of 3: Span status error: Code 2"
        );
        // A failed root that starts first is recovered by any later clean tool span.
        let v = TraceSpec::new()
            .root_status(2)
            .step("a", "{}", "ok")
            .run(&UnrecoveredToolError);
        assert!(!v.detected);
        let v = TraceSpec::new()
            .span_with("a", "{}", "ok", |s| {
                s.attrs
                    .insert("error.type".into(), serde_json::json!("Timeout"));
            })
            .run(&UnrecoveredToolError);
        assert_eq!(
            v.reason,
            "Unrecovered span error at span 2 of 2: Span error: Timeout"
        );
    }
}
