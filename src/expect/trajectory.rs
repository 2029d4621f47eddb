//! Holding the calls a run made against a scenario's expectations, in the scenario's mode.

use std::fmt::Write as _;

use serde_json::Value;

use super::args::canonical;
use super::file::{Mode, Scenario};

/// One tool call the run made, in step order.
#[derive(Debug, Clone)]
pub(crate) struct MadeCall<'a> {
    /// 1-based step number within the trace.
    pub(crate) step: usize,
    pub(crate) tool: &'a str,
    pub(crate) arguments: Value,
    /// The call did not fail (no structural error, no error on its span): only such a call can have
    /// done what an expected call asks.
    pub(crate) succeeded: bool,
    /// Its tool changes nothing, by the file's rules and the trace's annotations.
    pub(crate) read_only: bool,
    /// The agent made it, not a (simulated) user or the system.
    pub(crate) by_agent: bool,
}

/// What the comparison found first: why the check fires.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Finding {
    /// A forbidden call was made (whether it succeeded or not).
    Forbidden { step: usize, call: String },
    /// An expected call was not made (0-based index in the scenario's calls).
    Missing {
        index: usize,
        of: usize,
        call: String,
    },
    /// A counted call that no expected call matches.
    Unexpected { step: usize, call: String },
}

/// The result of one trace's comparison.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
    /// Why the check fires; `None` when the run meets the expectations.
    pub(crate) finding: Option<Finding>,
    /// How many calls were compared (state-changing, or of a tool the scenario names).
    pub(crate) compared: usize,
    /// How many calls the run made in all.
    pub(crate) made: usize,
    /// The step of a failed call of the tool of the missing expected call, if the run made one.
    pub(crate) failed_attempt: Option<usize>,
    /// How many calls that would have been compared failed.
    pub(crate) failed: usize,
}

/// The longest argument text a reason shows.
const SHOWN_CHARS: usize = 160;

/// A made call as reasons show it.
fn shown(call: &MadeCall<'_>) -> String {
    let mut text = call.tool.to_string();
    let args = canonical(&call.arguments);
    if args != "{}" {
        text.push(' ');
        if args.chars().count() > SHOWN_CHARS {
            text.extend(args.chars().take(SHOWN_CHARS));
            text.push('…');
        } else {
            text.push_str(&args);
        }
    }
    text
}

/// Compares the calls a run made with a scenario's expectations.
///
/// An expected call is met by whoever made it: a benchmark's task may need the user to act (τ²-bench
/// telecom expects the customer to toggle airplane mode), and a run that gives the agent the user's
/// tools has the agent make those calls. Forbidden and unexpected calls are looked for among the
/// agent's calls only, since what a simulated user does is not the agent's doing.
pub(crate) fn compare(scenario: &Scenario, made: &[MadeCall<'_>]) -> Comparison {
    let counted: Vec<&MadeCall<'_>> = made
        .iter()
        .filter(|c| c.succeeded && (!c.read_only || scenario.names(c.tool)))
        .collect();
    let failed = made
        .iter()
        .filter(|c| !c.succeeded && (!c.read_only || scenario.names(c.tool)))
        .count();
    let result = |finding: Option<Finding>| {
        let failed_attempt = match &finding {
            Some(Finding::Missing { index, .. }) => made
                .iter()
                .find(|c| !c.succeeded && c.tool == scenario.calls[*index].tool)
                .map(|c| c.step),
            _ => None,
        };
        Comparison {
            finding,
            compared: counted.len(),
            made: made.len(),
            failed_attempt,
            failed,
        }
    };
    if let Some(call) = made.iter().find(|c| {
        c.by_agent
            && scenario
                .forbidden
                .iter()
                .any(|f| f.matches(c.tool, &c.arguments))
    }) {
        return result(Some(Finding::Forbidden {
            step: call.step,
            call: shown(call),
        }));
    }
    if scenario.mode.needs_every_expected() {
        let unmatched = if scenario.mode == Mode::Strict {
            in_order(scenario, &counted)
        } else {
            matched(scenario, &counted)
        };
        if let Some(index) = unmatched {
            return result(Some(Finding::Missing {
                index,
                of: scenario.calls.len(),
                call: scenario.calls[index].shown(),
            }));
        }
    }
    if scenario.mode.needs_every_made_expected()
        && let Some(call) = counted.iter().find(|c| {
            c.by_agent
                && !scenario
                    .calls
                    .iter()
                    .any(|e| e.matches(c.tool, &c.arguments))
        })
    {
        return result(Some(Finding::Unexpected {
            step: call.step,
            call: shown(call),
        }));
    }
    result(None)
}

/// The first expected call that cannot be given a made call of its own (each made call serves one
/// expected call: a maximum bipartite matching, so that overlapping expectations are not starved by
/// the order they are listed in); `None` when every one can.
fn matched(scenario: &Scenario, counted: &[&MadeCall<'_>]) -> Option<usize> {
    let fits: Vec<Vec<usize>> = scenario
        .calls
        .iter()
        .map(|e| {
            counted
                .iter()
                .enumerate()
                .filter(|(_, c)| e.matches(c.tool, &c.arguments))
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; counted.len()];
    let mut first_unmatched = None;
    for e in 0..fits.len() {
        let mut seen = vec![false; counted.len()];
        if !augment(e, &fits, &mut owner, &mut seen) && first_unmatched.is_none() {
            first_unmatched = Some(e);
        }
    }
    first_unmatched
}

/// Kuhn's augmenting path from expected call `e`.
fn augment(e: usize, fits: &[Vec<usize>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for &c in &fits[e] {
        if seen[c] {
            continue;
        }
        seen[c] = true;
        if owner[c].is_none_or(|other| augment(other, fits, owner, seen)) {
            owner[c] = Some(e);
            return true;
        }
    }
    false
}

/// Strict mode: the first expected call not made after the one before it (the earliest match each
/// time, which finds the order whenever one exists).
fn in_order(scenario: &Scenario, counted: &[&MadeCall<'_>]) -> Option<usize> {
    let mut from = 0;
    for (index, expected) in scenario.calls.iter().enumerate() {
        match counted[from..]
            .iter()
            .position(|c| expected.matches(c.tool, &c.arguments))
        {
            Some(at) => from += at + 1,
            None => return Some(index),
        }
    }
    None
}

impl Comparison {
    /// The reason the check gives.
    pub(crate) fn reason(&self, scenario: &Scenario, out: &mut String) {
        match &self.finding {
            Some(Finding::Forbidden { step, call }) => {
                let _ = write!(out, "step {step}: forbidden call {call}");
            }
            Some(Finding::Missing { index, of, call }) => {
                let order = if scenario.mode == Mode::Strict {
                    " in order"
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    "expected call {} of {of} not made{order}: {call}",
                    index + 1
                );
                if let Some(step) = self.failed_attempt {
                    let _ = write!(out, " (its call at step {step} failed)");
                } else if self.compared == 0 {
                    if self.made == 0 {
                        out.push_str(" (the run made no tool call)");
                    } else if self.failed > 0 {
                        let _ = write!(
                            out,
                            " (the run's {} state-changing call(s) failed)",
                            self.failed
                        );
                    } else {
                        let _ = write!(
                            out,
                            " (the run made {} call(s), none that changes state)",
                            self.made
                        );
                    }
                }
            }
            Some(Finding::Unexpected { step, call }) => {
                let _ = write!(out, "step {step}: unexpected call {call}");
            }
            None if scenario.calls.is_empty() && self.compared == 0 && self.made > 0 => {
                let _ = write!(
                    out,
                    "no state-changing call expected; the run's {} call(s) are all read-only",
                    self.made
                );
            }
            None => {
                let _ = write!(
                    out,
                    "{} expected call(s) made; {} call(s) compared",
                    scenario.calls.len(),
                    self.compared
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::expect::file::Expectations;

    #[allow(clippy::needless_pass_by_value)] // called with `json!` literals
    fn scenario(mode: &str, calls: Value, forbidden: Value) -> Scenario {
        let file = json!({
            "scenarios": {"s": {"mode": mode, "calls": calls, "forbidden": forbidden}}
        });
        Expectations::from_text(&file.to_string())
            .unwrap()
            .scenario("s")
            .unwrap()
            .into_owned()
    }

    fn call(step: usize, tool: &'static str, args: Value) -> MadeCall<'static> {
        MadeCall {
            step,
            tool,
            arguments: args,
            succeeded: true,
            read_only: crate::expect::read_only::has_reading_verb(tool),
            by_agent: true,
        }
    }

    fn by_user(mut call: MadeCall<'static>) -> MadeCall<'static> {
        call.by_agent = false;
        call
    }

    fn book_and_pay(mode: &str) -> Scenario {
        scenario(
            mode,
            json!([
                {"tool": "book", "arguments": {"flight": "HAT030"}},
                {"tool": "pay", "arguments": {"amount": 100}}
            ]),
            json!([]),
        )
    }

    fn finding(s: &Scenario, made: &[MadeCall<'_>]) -> Option<Finding> {
        compare(s, made).finding
    }

    #[test]
    fn superset_needs_every_expected_call_and_allows_extras() {
        let s = book_and_pay("superset");
        let made = [
            call(1, "get_flight", json!({})),
            call(2, "pay", json!({"amount": 100.0})),
            call(3, "book", json!({"flight": "HAT030"})),
            call(4, "send_mail", json!({})),
        ];
        assert_eq!(finding(&s, &made), None);
        assert_eq!(
            finding(&s, &made[..2]),
            Some(Finding::Missing {
                index: 0,
                of: 2,
                call: r#"book {"flight":"HAT030"}"#.into()
            })
        );
    }

    #[test]
    fn subset_needs_every_state_changing_call_expected_and_allows_missing() {
        let s = book_and_pay("subset");
        let made = [
            call(1, "get_flight", json!({})),
            call(2, "pay", json!({"amount": 100})),
        ];
        assert_eq!(finding(&s, &made), None);
        let extra = [made[0].clone(), call(2, "cancel", json!({"id": 1}))];
        assert_eq!(
            finding(&s, &extra),
            Some(Finding::Unexpected {
                step: 2,
                call: r#"cancel {"id":1}"#.into()
            })
        );
    }

    #[test]
    fn unordered_needs_both_and_ignores_order() {
        let s = book_and_pay("unordered");
        let made = [
            call(1, "pay", json!({"amount": 100})),
            call(2, "book", json!({"flight": "HAT030"})),
        ];
        assert_eq!(finding(&s, &made), None);
        let more = [
            made[0].clone(),
            made[1].clone(),
            call(3, "cancel", json!({})),
        ];
        assert!(matches!(
            finding(&s, &more),
            Some(Finding::Unexpected { step: 3, .. })
        ));
        assert!(matches!(
            finding(&s, &made[..1]),
            Some(Finding::Missing { index: 0, .. })
        ));
    }

    #[test]
    fn strict_needs_the_expected_order() {
        let s = book_and_pay("strict");
        let in_order = [
            call(1, "book", json!({"flight": "HAT030"})),
            call(2, "pay", json!({"amount": 100})),
        ];
        assert_eq!(finding(&s, &in_order), None);
        let reversed = [in_order[1].clone(), in_order[0].clone()];
        assert!(matches!(
            finding(&s, &reversed),
            Some(Finding::Missing { index: 1, .. })
        ));
    }

    #[test]
    fn a_failed_call_does_not_meet_an_expectation_and_the_reason_says_so() {
        let s = book_and_pay("superset");
        let mut failed = call(1, "book", json!({"flight": "HAT030"}));
        failed.succeeded = false;
        let made = [failed, call(2, "pay", json!({"amount": 100}))];
        let c = compare(&s, &made);
        assert!(matches!(c.finding, Some(Finding::Missing { index: 0, .. })));
        let mut reason = String::new();
        c.reason(&s, &mut reason);
        assert_eq!(
            reason,
            r#"expected call 1 of 2 not made: book {"flight":"HAT030"} (its call at step 1 failed)"#
        );
    }

    #[test]
    fn forbidden_calls_fire_first_with_their_step() {
        let s = scenario(
            "superset",
            json!([{"tool": "book"}]),
            json!([{"tool": "cancel_reservation"}]),
        );
        let made = [
            call(1, "get_user", json!({})),
            call(2, "cancel_reservation", json!({"id": "X"})),
        ];
        assert_eq!(
            finding(&s, &made),
            Some(Finding::Forbidden {
                step: 2,
                call: r#"cancel_reservation {"id":"X"}"#.into()
            })
        );
    }

    #[test]
    fn a_named_read_only_call_is_compared_and_an_all_read_only_run_says_so() {
        let s = scenario(
            "superset",
            json!([{"tool": "get_user", "arguments": {"id": 1}}]),
            json!([]),
        );
        assert_eq!(finding(&s, &[call(1, "get_user", json!({"id": 1}))]), None);
        let pay = book_and_pay("superset");
        let reads = [
            call(1, "get_user", json!({})),
            call(2, "list_flights", json!({})),
        ];
        let c = compare(&pay, &reads);
        let mut reason = String::new();
        c.reason(&pay, &mut reason);
        assert!(
            reason.ends_with("(the run made 2 call(s), none that changes state)"),
            "{reason}"
        );
        let empty = scenario("superset", json!([]), json!([]));
        let c = compare(&empty, &reads);
        assert_eq!(c.finding, None);
        let mut reason = String::new();
        c.reason(&empty, &mut reason);
        assert_eq!(
            reason,
            "no state-changing call expected; the run's 2 call(s) are all read-only"
        );
    }

    #[test]
    fn overlapping_expectations_are_matched_as_a_whole() {
        // The first expectation accepts either call; listed first, a greedy match would take the only
        // call the second one accepts.
        let s = scenario(
            "superset",
            json!([
                {"tool": "pay", "arguments": {"amount": 0}, "match": {"amount": "ignore"}},
                {"tool": "pay", "arguments": {"amount": 5}}
            ]),
            json!([]),
        );
        let made = [
            call(1, "pay", json!({"amount": 5})),
            call(2, "pay", json!({"amount": 9})),
        ];
        assert_eq!(finding(&s, &made), None);
    }

    #[test]
    fn a_user_call_meets_an_expectation_but_is_never_unexpected_nor_forbidden() {
        // τ²-bench telecom: the task needs the customer to toggle airplane mode, and the customer also
        // reboots the phone on their own; neither is the agent's doing to blame.
        let s = scenario(
            "unordered",
            json!([{"tool": "toggle_airplane_mode"}, {"tool": "enable_roaming"}]),
            json!([{"tool": "reboot_device"}]),
        );
        let made = [
            by_user(call(1, "toggle_airplane_mode", json!({}))),
            by_user(call(2, "reboot_device", json!({}))),
            call(3, "enable_roaming", json!({})),
        ];
        assert_eq!(finding(&s, &made), None);
        // The same reboot made by the agent is both forbidden and, were it not, unexpected.
        let agent_reboot = [
            made[0].clone(),
            call(2, "reboot_device", json!({})),
            made[2].clone(),
        ];
        assert_eq!(
            finding(&s, &agent_reboot),
            Some(Finding::Forbidden {
                step: 2,
                call: "reboot_device".into()
            })
        );
        let allowed = scenario(
            "unordered",
            json!([{"tool": "toggle_airplane_mode"}, {"tool": "enable_roaming"}]),
            json!([]),
        );
        assert_eq!(
            finding(&allowed, &agent_reboot),
            Some(Finding::Unexpected {
                step: 2,
                call: "reboot_device".into()
            })
        );
    }
}
