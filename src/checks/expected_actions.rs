//! # expected_actions
//!
//! **What it detects.** A run that did not make the state-changing calls its scenario expects, or
//! made ones it should not: an expected call missing, a call the scenario does not expect (in the
//! `subset`, `unordered` and `strict` modes), expected calls out of order (`strict`), or a forbidden
//! call. The expectations come from `--expect FILE`, written by hand, imported from a benchmark's own
//! task definitions (`faultgate expect import`) or drafted from what baseline runs agree on
//! (`faultgate expect draft`).
//!
//! **Why it matters.** Most failed runs break no rule: the agent did the wrong thing, or did not do the
//! right one. A booking never made, a refund to the wrong order: only knowing what the task needed
//! shows it.
//!
//! **Example.** A scenario expecting `cancel_reservation {"reservation_id":"Z7GOZK"}` and a run that
//! only looked the reservation up: `expected call 1 of 1 not made: cancel_reservation
//! {"reservation_id":"Z7GOZK"} (the run made 2 call(s), none that changes state)`.
//!
//! **Known limits.** Only calls the trace records are seen, and a call counts as made only when it did
//! not fail (no structural error, no error on its span, as the format records it); a tool result that
//! reports a failure in the prose of a normal result still counts. Which tools change state is decided
//! by name (the file's globs and the default reading verbs) and by MCP `readOnlyHint` annotations the
//! trace carries; a reading tool with a writing name is compared. An expected call is met by
//! whoever made it (a task may need the user to act), while forbidden and unexpected calls are the
//! agent's only. A trace whose scenario has no
//! expectation passes with confidence 0.

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::expect::args::parse_arguments;
use crate::expect::file::{Expectations, Scenario};
use crate::expect::trajectory::{MadeCall, compare};
use crate::table::columns::{Columns, opt};

pub(crate) struct ExpectedActions;

impl Check for ExpectedActions {
    fn name(&self) -> &'static str {
        "expected_actions"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Expect
    }

    fn description(&self) -> &'static str {
        "The run missed a state-changing call its scenario expects, made one it does not expect or forbids, or made them out of order (needs --expect)."
    }

    fn default_enabled(&self) -> bool {
        false
    }

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        let Some(expectations) = &cx.inputs.expect else {
            for _ in cols.traces() {
                out.push(false, 0.0, "no expectations file");
            }
            return;
        };
        for t in cols.traces() {
            let key = opt(cols.scenario, t).unwrap_or("");
            let Some(compiled) = expectations.scenario(key) else {
                out.push(false, 0.0, |r: &mut String| {
                    r.push_str("no expectation for scenario ");
                    r.push_str(&serde_json::Value::from(key).to_string());
                });
                continue;
            };
            let scenario: &Scenario = &compiled;
            if scenario.expects_nothing() {
                // Nothing to miss and nothing forbidden: the run passes whatever it did, and its
                // calls are read only for a reason an output keeps.
                out.sure(false, |r: &mut String| {
                    let made = made_calls(cols, t, expectations, scenario);
                    compare(scenario, &made).reason(scenario, r);
                });
                continue;
            }
            let made = made_calls(cols, t, expectations, scenario);
            let comparison = compare(scenario, &made);
            out.sure(comparison.finding.is_some(), |r: &mut String| {
                comparison.reason(scenario, r);
            });
        }
    }
}

/// The tool calls of trace `t`, in step order. Arguments are parsed only where the comparison can read
/// them: calls of a tool the scenario names or forbids, and counted calls in a mode that shows
/// unexpected ones.
fn made_calls<'a>(
    cols: &Columns<'a>,
    t: usize,
    expectations: &Expectations,
    scenario: &Scenario,
) -> Vec<MadeCall<'a>> {
    let annotated = cols.read_only_tools(t);
    let rows = cols.step_rows(t);
    let first = rows.start;
    rows.map(|s| {
        let tool = cols.tool.value(s);
        let read_only = expectations
            .read_only
            .is_read_only(tool, annotated.iter().any(|a| a == tool));
        let compared = scenario.names(tool)
            || scenario.forbidden.iter().any(|f| f.tool == tool)
            || (!read_only && scenario.mode.needs_every_made_expected());
        MadeCall {
            step: s - first + 1,
            tool,
            arguments: if compared {
                parse_arguments(cols.arguments.value(s))
            } else {
                serde_json::Value::Null
            },
            succeeded: cols.step_succeeded(t, s),
            read_only,
            by_agent: cols.agent_step(s),
        }
    })
    .collect()
}
