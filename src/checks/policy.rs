//! # policy
//!
//! **What it detects.** A tool call the team's tool-use policy forbids: an unlisted tool, a denied
//! argument pattern (by default path traversal, `file://`, `/etc/passwd`, `/etc/shadow`, `~/.ssh`,
//! `/proc/`), oversized arguments, call budgets, argument limits, identity mismatches, missing
//! prerequisites, per-value budgets, values not allowed, missing required arguments, missing
//! confirmation, an incomplete run, or a call to a tool the agent was not given (its spans'
//! `gen_ai.tool.definitions`).
//!
//! **Why it matters.** A policy violation is a hard block at the gate whatever the clean rate: one refund
//! to the wrong customer outweighs any number of correct answers.
//!
//! **Example.** `read_file {"path": "../../etc/passwd"}` under the default policy:
//! `step 1: read_file argument path matches denied pattern '\.\./'`.
//!
//! **Known limits.** The rules see what the trace recorded: arguments and results as text, and the root
//! span's attributes for identity. A tool whose calls are not recorded cannot be checked. The rule
//! language itself is described in `docs/policy.md`.

use arrow_array::Array;
use serde_json::Map;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::policy::{PolicyRoot, PolicyRun, PolicyStep};
use crate::table::columns::Columns;
use crate::table::columns::opt;

pub(crate) struct PolicyCheck;

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

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        let empty = Map::new();
        // One step list for the whole pass, refilled per trace.
        let mut steps: Vec<PolicyStep<'_>> = Vec::new();
        for t in cols.traces() {
            let spans = cols.span_rows(t).start;
            let rows = cols.step_rows(t);
            let first = rows.start;
            steps.clear();
            // The policy binds the agent: a simulated user's own tool calls are not held to it.
            steps.extend(rows.filter(|&s| cols.agent_step(s)).map(|s| {
                let span = cols.step_span(s).map(|p| spans + p);
                let structural_error = cols.structural_error.is_valid(s);
                PolicyStep {
                    index: s - first + 1,
                    tool: cols.tool.value(s),
                    arguments: cols.arguments.value(s),
                    result: cols.result.value(s),
                    structural_error,
                    succeeded: cols.step_succeeded(t, s),
                    confirmed: span.is_some_and(|row| cols.confirmed.value(row)),
                }
            }));
            // Only identity reads the root attributes, and decoding them is most of a trace's policy
            // cost.
            let attrs: Option<Map<String, serde_json::Value>> = if cx.inputs.policy.uses_identity()
            {
                cols.root(t).and_then(|_| cols.root_attributes(t))
            } else {
                None
            };
            let root = cols.root(t).map(|p| PolicyRoot {
                attrs: attrs.as_ref().unwrap_or(&empty),
                span_error: opt(cols.span_error, spans + p),
                end_ns: u64::try_from(cols.end[spans + p]).unwrap_or(0),
            });
            // Only `require_defined_tools` reads the definitions.
            let defined: Option<Vec<String>> = if cx.inputs.policy.uses_tool_definitions() {
                opt(cols.tool_definitions, t).and_then(|list| serde_json::from_str(list).ok())
            } else {
                None
            };
            let run = PolicyRun {
                steps: &steps,
                root,
                answer: cols.answer.value(t),
                termination: cols.termination.value(t),
                defined_tools: defined.as_deref(),
            };
            let (detected, reason) = cx.inputs.policy.evaluate(&run);
            out.sure(detected, reason);
        }
    }
}
