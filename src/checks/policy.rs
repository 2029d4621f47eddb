//! # policy
//!
//! **What it detects.** A tool call the team's tool-use policy forbids: an unlisted tool, a denied
//! argument pattern (by default path traversal, `file://`, `/etc/passwd`, `/etc/shadow`, `~/.ssh`,
//! `/proc/`), oversized arguments, call budgets, argument limits, identity mismatches, missing
//! prerequisites, per-value budgets, values not allowed, missing required arguments, missing
//! confirmation, or an incomplete run.
//!
//! **Why it matters.** A policy violation is a hard block at the gate whatever the clean rate: one refund
//! to the wrong customer outweighs any number of correct answers.
//!
//! **Example.** `read_file {"path": "../../etc/passwd"}` under the default policy:
//! `step 1: argument matches denied pattern '\\.\\./'`.
//!
//! **Known limits.** The rules see what the trace recorded: arguments and results as text, and the root
//! span's attributes for identity. A tool whose calls are not recorded cannot be checked. The rule
//! language itself is described in `crate::policy`.

use serde_json::Map;

use super::{Check, CheckContext, CheckKind, TraceView, Verdict};
use crate::policy::{PolicyRoot, PolicyRun, PolicyStep};
use crate::table::schema::{SPAN_CONFIRMED, SPAN_END, SPAN_ERROR, SPAN_IS_TOOL};

pub struct PolicyCheck;

impl Check for PolicyCheck {
    fn name(&self) -> &'static str {
        "policy"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "A tool call broke the policy: unlisted tool, denied argument pattern, oversized argument, call budget, argument limit, identity mismatch, missing prerequisite, per-value budget, value not allowed, missing required argument, missing confirmation, or (with require_complete) an incomplete run."
    }

    fn run(&self, trace: &TraceView<'_>, cx: &CheckContext) -> Verdict {
        let steps: Vec<PolicyStep<'_>> = (0..trace.step_count())
            .map(|i| {
                let span = trace.step_span(i);
                let structural_error = trace.structural_error(i).is_some();
                let failed_tool_span = span.is_some_and(|p| {
                    trace.span_flag(SPAN_IS_TOOL, p) && trace.span_opt_text(SPAN_ERROR, p).is_some()
                });
                PolicyStep {
                    index: i + 1,
                    tool: trace.tool(i),
                    arguments: trace.arguments(i),
                    result: trace.result(i),
                    structural_error,
                    succeeded: !structural_error && !failed_tool_span,
                    confirmed: span.is_some_and(|p| trace.span_flag(SPAN_CONFIRMED, p)),
                }
            })
            .collect();
        // Only identity reads the root attributes, and decoding them is most of a trace's policy cost.
        let attrs: Option<Map<String, serde_json::Value>> = if cx.policy.uses_identity() {
            trace
                .root()
                .and_then(|_| trace.batch.root_attributes(trace.index))
        } else {
            None
        };
        let empty = Map::new();
        let root = trace.root().map(|p| PolicyRoot {
            attrs: attrs.as_ref().unwrap_or(&empty),
            span_error: trace.span_opt_text(SPAN_ERROR, p),
            end_ns: u64::try_from(trace.span_int(SPAN_END, p)).unwrap_or(0),
        });
        let run = PolicyRun {
            steps: &steps,
            root,
            answer: trace.answer(),
            termination: trace.termination(),
        };
        let (detected, reason) = cx.policy.evaluate(&run);
        Verdict::sure(detected, reason)
    }
}
