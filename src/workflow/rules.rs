//! The replay: every workflow rule over an abstract [`Event`] sequence, collecting all findings.
//!
//! Rules run in a fixed order (mandatory checkpoints, handoff contracts, propagation, precedence,
//! response) and each walks events in `seq` order, so findings come out deterministically and the first
//! blocking one is the headline. Nothing here reads the run's final outcome: the verdict comes from the
//! road alone.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::event::{Action, Checkpoint, Event, Handoff, same_value};
use super::spec::{CheckpointRuleConfig, HandoffContractConfig, Workflow};
use crate::compat::reason::{py_repr, py_repr_str};

/// How much a finding weighs in the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The run did not take the road: BLOCK.
    Block,
    /// The spec may be incomplete: PASS with a warning.
    Warn,
    /// Informational, e.g. a guarded action that never ran.
    Note,
}

/// The reason codes; their text is stable and appears in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonCode {
    /// A mandatory checkpoint never happened before its guarded action.
    CheckpointSkipped,
    /// The checkpoint happened, but only after the guarded action.
    CheckpointAfterAction,
    /// Extension `confirmed_by`: the checkpoint ran, but nobody the spec accepts confirmed it.
    CheckpointWrongConfirmer,
    /// Extension `every`: a later occurrence of the guarded action had no fresh checkpoint.
    CheckpointNotRenewed,
    /// A handoff payload lacks a field its contract requires.
    HandoffContractViolation,
    /// An agent acted on an unverified claim as if it were verified.
    UnverifiedClaimConsumedAsGroundTruth,
    /// An unverified claim was handed on through further agents.
    UnverifiedClaimPropagated {
        /// How many handoffs the claim travelled.
        hops: usize,
    },
    /// A handoff between agents that no contract covers.
    UncontractedHandoff,
    /// Extension `precedence`.
    PrecedenceViolated,
    /// Extension `response`.
    ResponseMissing,
    /// The spec guards no action the run took.
    NothingToGate,
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match self {
            ReasonCode::CheckpointSkipped => "checkpoint-skipped",
            ReasonCode::CheckpointAfterAction => "checkpoint-after-action",
            ReasonCode::CheckpointWrongConfirmer => "checkpoint-wrong-confirmer",
            ReasonCode::CheckpointNotRenewed => "checkpoint-not-renewed",
            ReasonCode::HandoffContractViolation => "handoff-contract-violation",
            ReasonCode::UnverifiedClaimConsumedAsGroundTruth => {
                "unverified-claim-consumed-as-ground-truth"
            }
            ReasonCode::UnverifiedClaimPropagated { hops } => {
                return write!(f, "unverified-claim-propagated-{hops}-hops");
            }
            ReasonCode::UncontractedHandoff => "uncontracted-handoff",
            ReasonCode::PrecedenceViolated => "precedence-violated",
            ReasonCode::ResponseMissing => "response-missing",
            ReasonCode::NothingToGate => "nothing-to-gate",
        };
        f.write_str(text)
    }
}

/// One thing the replay found.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Whether the finding blocks, warns or informs.
    pub severity: Severity,
    /// The stable reason code.
    pub code: ReasonCode,
    /// The `seq` of the event the finding is about, when there is one.
    pub seq: Option<i64>,
    /// The finding in words.
    pub message: String,
}

impl Finding {
    fn new(severity: Severity, code: ReasonCode, seq: Option<i64>, message: String) -> Finding {
        Finding {
            severity,
            code,
            seq,
            message,
        }
    }
}

impl Workflow {
    /// Replays `events` (in recorded order) against the spec and returns every finding, blocking ones
    /// first within each rule. An empty result, or one without [`Severity::Block`], is a conforming road.
    pub fn evaluate(&self, events: &[Event]) -> Vec<Finding> {
        let mut findings = Vec::new();
        for rule in &self.checkpoints {
            check_mandatory_checkpoint(rule, events, &mut findings);
        }
        check_handoff_contracts(&self.contracts, events, &mut findings);
        check_propagation(events, &mut findings);
        for rule in &self.precedence {
            check_ordered_pair(
                Template::Precedence,
                &rule.action,
                &rule.preceded_by,
                &rule.same_args,
                events,
                &mut findings,
            );
        }
        for rule in &self.response {
            check_ordered_pair(
                Template::Response,
                &rule.action,
                &rule.followed_by,
                &rule.same_args,
                events,
                &mut findings,
            );
        }
        findings
    }
}

fn actions(events: &[Event]) -> impl Iterator<Item = &Action> {
    events.iter().filter_map(|e| match e {
        Event::Action(a) => Some(a),
        _ => None,
    })
}

fn handoffs(events: &[Event]) -> impl Iterator<Item = &Handoff> {
    events.iter().filter_map(|e| match e {
        Event::Handoff(h) => Some(h),
        _ => None,
    })
}

fn repr_list(items: &[&str]) -> String {
    let parts: Vec<String> = items.iter().map(|s| py_repr_str(s)).collect();
    format!("[{}]", parts.join(", "))
}

fn check_mandatory_checkpoint(
    rule: &CheckpointRuleConfig,
    events: &[Event],
    findings: &mut Vec<Finding>,
) {
    let cid = py_repr_str(&rule.checkpoint_id);
    let must = py_repr_str(&rule.must_precede);
    let act_seqs: Vec<i64> = actions(events)
        .filter(|a| a.action_type == rule.must_precede)
        .map(|a| a.seq)
        .collect();
    let Some(&first_act) = act_seqs.first() else {
        findings.push(Finding::new(
            Severity::Note,
            ReasonCode::NothingToGate,
            None,
            format!("checkpoint {cid}: guarded action {must} never occurred; nothing to gate"),
        ));
        return;
    };
    let named: Vec<&Checkpoint> = events
        .iter()
        .filter_map(|e| match e {
            Event::Checkpoint(c) if c.checkpoint_id == rule.checkpoint_id => Some(c),
            _ => None,
        })
        .collect();
    let accepted = |c: &Checkpoint| match &rule.confirmed_by {
        None => true,
        Some(confirmers) => c
            .confirmed_by
            .as_ref()
            .is_some_and(|who| confirmers.contains(who)),
    };
    let qualifying: Vec<i64> = named
        .iter()
        .filter(|c| accepted(c))
        .map(|c| c.seq)
        .collect();
    match (qualifying.first(), named.first(), &rule.confirmed_by) {
        (Some(&first_cp), _, _) if first_cp > first_act => findings.push(Finding::new(
            Severity::Block,
            ReasonCode::CheckpointAfterAction,
            Some(first_cp),
            format!(
                "confirmation happened after the act it was supposed to gate: checkpoint {cid} at seq {first_cp}, action {must} at seq {first_act}"
            ),
        )),
        (Some(_), _, _) => {}
        (None, Some(unaccepted), Some(confirmers)) => {
            let who = match &unaccepted.confirmed_by {
                Some(name) => format!("confirmed by {}", py_repr_str(name)),
                None => "names no confirmer".to_string(),
            };
            let allowed: Vec<&str> = confirmers.iter().map(String::as_str).collect();
            findings.push(Finding::new(
                Severity::Block,
                ReasonCode::CheckpointWrongConfirmer,
                Some(unaccepted.seq),
                format!(
                    "checkpoint {cid} at seq {} {who}, but the spec accepts only {}; guarded action {must} executed at seq {first_act}",
                    unaccepted.seq,
                    repr_list(&allowed)
                ),
            ));
        }
        (None, _, _) => findings.push(Finding::new(
            Severity::Block,
            ReasonCode::CheckpointSkipped,
            Some(first_act),
            format!(
                "mandatory confirmation never happened: checkpoint {cid} absent from trajectory, guarded action {must} executed at seq {first_act}"
            ),
        )),
    }
    if rule.every && !qualifying.is_empty() {
        let stale: Vec<(i64, i64)> = act_seqs
            .windows(2)
            .filter(|pair| !qualifying.iter().any(|&cp| cp > pair[0] && cp < pair[1]))
            .map(|pair| (pair[0], pair[1]))
            .collect();
        if let Some(&(previous, act)) = stale.first() {
            let more = match stale.len() - 1 {
                0 => String::new(),
                n => format!(" ({n} more occurrence{} likewise)", plural(n)),
            };
            findings.push(Finding::new(
                Severity::Block,
                ReasonCode::CheckpointNotRenewed,
                Some(act),
                format!(
                    "every occurrence needs a fresh confirmation: no checkpoint {cid} between action {must} at seq {previous} and the next at seq {act}{more}"
                ),
            ));
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn check_handoff_contracts(
    contracts: &[HandoffContractConfig],
    events: &[Event],
    findings: &mut Vec<Finding>,
) {
    for handoff in handoffs(events) {
        let border = handoff.border();
        let seq = handoff.seq;
        let mut covered = false;
        for contract in contracts
            .iter()
            .filter(|c| c.from_agent == handoff.from_agent && c.to_agent == handoff.to_agent)
        {
            covered = true;
            let missing: Vec<&str> = contract
                .required_fields
                .iter()
                .filter(|name| handoff.field(name).is_none())
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                findings.push(Finding::new(
                    Severity::Block,
                    ReasonCode::HandoffContractViolation,
                    Some(seq),
                    format!(
                        "required fields never delivered at a contracted border: {border} (seq {seq}) missing {}",
                        repr_list(&missing)
                    ),
                ));
            }
            if contract.require_verified {
                let unverified: Vec<&str> = contract
                    .required_fields
                    .iter()
                    .filter(|name| handoff.field(name).is_some_and(|f| !f.verified))
                    .map(String::as_str)
                    .collect();
                if !unverified.is_empty() {
                    findings.push(Finding::new(
                        Severity::Block,
                        ReasonCode::UnverifiedClaimConsumedAsGroundTruth,
                        Some(seq),
                        format!(
                            "{border} (seq {seq}): required fields {} arrived without verified=true at a border whose contract demands verification",
                            repr_list(&unverified)
                        ),
                    ));
                }
            }
        }
        if !covered {
            findings.push(Finding::new(
                Severity::Warn,
                ReasonCode::UncontractedHandoff,
                Some(seq),
                format!(
                    "{border} (seq {seq}) is covered by no contract; the spec may be incomplete, flagging instead of blocking"
                ),
            ));
        }
    }
}

/// An unverified field value that arrived at an agent, and the chain it arrived through.
struct Arrival<'a> {
    name: &'a str,
    value: &'a Value,
    hops: usize,
    first: &'a Handoff,
    passed_on: bool,
}

/// Follows each unverified value along connected handoffs (receiver of one hop = sender of the next)
/// and reports every maximal chain of 2 or more hops.
fn check_propagation(events: &[Event], findings: &mut Vec<Finding>) {
    // Keyed by (receiving agent, field name): the arrivals a later handoff from that agent may continue.
    let mut arrivals: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    let mut chains: Vec<Arrival> = Vec::new();
    let mut ends: Vec<(usize, &Handoff)> = Vec::new();
    for handoff in handoffs(events) {
        for field in handoff.payload.iter().filter(|f| !f.verified) {
            let mut best: Option<(usize, &Handoff)> = None;
            if let Some(previous) =
                arrivals.get(&(handoff.from_agent.as_str(), field.name.as_str()))
            {
                for &index in previous {
                    let arrival = &mut chains[index];
                    if !same_value(arrival.value, &field.value) {
                        continue;
                    }
                    arrival.passed_on = true;
                    if best.is_none_or(|(hops, _)| arrival.hops > hops) {
                        best = Some((arrival.hops, arrival.first));
                    }
                }
            }
            let (hops, first) = best.map_or((1, handoff), |(hops, first)| (hops + 1, first));
            chains.push(Arrival {
                name: &field.name,
                value: &field.value,
                hops,
                first,
                passed_on: false,
            });
            let index = chains.len() - 1;
            ends.push((index, handoff));
            arrivals
                .entry((handoff.to_agent.as_str(), field.name.as_str()))
                .or_default()
                .push(index);
        }
    }
    for (index, last) in ends {
        let chain = &chains[index];
        if chain.passed_on || chain.hops < 2 {
            continue;
        }
        findings.push(Finding::new(
            Severity::Block,
            ReasonCode::UnverifiedClaimPropagated { hops: chain.hops },
            Some(last.seq),
            format!(
                "field {}={} entered unverified at {} (seq {}) and was passed on unverified through {} handoffs, last at {} (seq {}); no agent verified it at any hop",
                py_repr_str(chain.name),
                py_repr(chain.value),
                chain.first.border(),
                chain.first.seq,
                chain.hops,
                last.border(),
                last.seq
            ),
        ));
    }
}

#[derive(Clone, Copy)]
enum Template {
    Precedence,
    Response,
}

/// The `same_args` values of an action, or the first argument it lacks.
fn key_values<'a>(
    args: &'a Map<String, Value>,
    names: &'a [String],
) -> Result<Vec<&'a Value>, &'a str> {
    names
        .iter()
        .map(|name| args.get(name).ok_or(name.as_str()))
        .collect()
}

fn describe_args(names: &[String], values: &[&Value]) -> String {
    let parts: Vec<String> = names
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n}={}", py_repr(v)))
        .collect();
    parts.join(", ")
}

/// Precedence: every `action` has an earlier `partner` with equal `same_args`. Response: every `action`
/// has a later one.
fn check_ordered_pair(
    template: Template,
    action: &str,
    partner: &str,
    same_args: &[String],
    events: &[Event],
    findings: &mut Vec<Finding>,
) {
    let all: Vec<&Action> = actions(events).collect();
    for (position, guarded) in all
        .iter()
        .enumerate()
        .filter(|(_, a)| a.action_type == action)
    {
        let (code, candidates, relation, with_article): (_, &[&Action], _, _) = match template {
            Template::Precedence => (
                ReasonCode::PrecedenceViolated,
                &all[..position],
                "earlier",
                "an earlier",
            ),
            Template::Response => (
                ReasonCode::ResponseMissing,
                &all[position + 1..],
                "later",
                "a later",
            ),
        };
        let what = format!("action {} at seq {}", py_repr_str(action), guarded.seq);
        let message = match key_values(&guarded.args, same_args) {
            Err(missing) => format!(
                "{what} carries no {} to match {with_article} {}",
                py_repr_str(missing),
                py_repr_str(partner)
            ),
            Ok(wanted) => {
                let satisfied = candidates.iter().any(|c| {
                    c.action_type == partner
                        && key_values(&c.args, same_args).is_ok_and(|found| {
                            found.iter().zip(&wanted).all(|(x, y)| same_value(x, y))
                        })
                });
                if satisfied {
                    continue;
                }
                let with = if same_args.is_empty() {
                    String::new()
                } else {
                    format!(" with the same {}", describe_args(same_args, &wanted))
                };
                format!("{what} has no {relation} {}{with}", py_repr_str(partner))
            }
        };
        findings.push(Finding::new(
            Severity::Block,
            code,
            Some(guarded.seq),
            message,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::event::PayloadField;
    use crate::workflow::spec::SpecConfig;
    use serde_json::json;

    fn workflow(spec: Value) -> Workflow {
        let config: SpecConfig = serde_json::from_value(spec).unwrap();
        Workflow::compile(config).unwrap()
    }

    fn action(seq: i64, action_type: &str, args: Value) -> Event {
        Event::Action(Action {
            seq,
            agent: "a".into(),
            action_type: action_type.into(),
            args: match args {
                Value::Object(map) => map,
                _ => Map::new(),
            },
        })
    }

    fn checkpoint(seq: i64, id: &str, by: Option<&str>) -> Event {
        Event::Checkpoint(Checkpoint {
            seq,
            agent: "a".into(),
            checkpoint_id: id.into(),
            confirmed_by: by.map(str::to_string),
        })
    }

    fn handoff(seq: i64, from: &str, to: &str, fields: &[(&str, Value, bool)]) -> Event {
        Event::Handoff(Handoff {
            seq,
            from_agent: from.into(),
            to_agent: to.into(),
            payload: fields
                .iter()
                .map(|(n, v, verified)| PayloadField {
                    name: n.to_string(),
                    value: v.clone(),
                    verified: *verified,
                })
                .collect(),
        })
    }

    fn codes(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| f.code.to_string()).collect()
    }

    fn gate() -> Workflow {
        workflow(json!({"mandatory_checkpoints": [
            {"checkpoint_id": "confirm", "must_precede": "send"}]}))
    }

    #[test]
    fn checkpoint_before_action_conforms_and_absence_blocks() {
        let with = [checkpoint(1, "confirm", None), action(2, "send", json!({}))];
        assert!(gate().evaluate(&with).is_empty());
        let without = [action(2, "send", json!({}))];
        let found = gate().evaluate(&without);
        assert_eq!(codes(&found), ["checkpoint-skipped"]);
        assert_eq!(found[0].seq, Some(2));
    }

    #[test]
    fn checkpoint_after_action_blocks() {
        let events = [action(5, "send", json!({})), checkpoint(6, "confirm", None)];
        let found = gate().evaluate(&events);
        assert_eq!(codes(&found), ["checkpoint-after-action"]);
        assert!(
            found[0]
                .message
                .ends_with("checkpoint 'confirm' at seq 6, action 'send' at seq 5")
        );
    }

    #[test]
    fn absent_guarded_action_is_a_note() {
        let found = gate().evaluate(&[checkpoint(1, "confirm", None)]);
        assert_eq!(found[0].severity, Severity::Note);
        assert_eq!(
            found[0].message,
            "checkpoint 'confirm': guarded action 'send' never occurred; nothing to gate"
        );
    }

    #[test]
    fn only_the_first_occurrence_is_gated_unless_every() {
        let events = [
            checkpoint(1, "confirm", None),
            action(2, "send", json!({})),
            action(3, "send", json!({})),
            checkpoint(4, "confirm", None),
            action(5, "send", json!({})),
            action(6, "send", json!({})),
        ];
        assert!(gate().evaluate(&events).is_empty());
        let every = workflow(json!({"mandatory_checkpoints": [
            {"checkpoint_id": "confirm", "must_precede": "send", "every": true}]}));
        let found = every.evaluate(&events);
        assert_eq!(codes(&found), ["checkpoint-not-renewed"]);
        assert_eq!(found[0].seq, Some(3));
        assert!(
            found[0]
                .message
                .ends_with("at seq 2 and the next at seq 3 (1 more occurrence likewise)")
        );
    }

    #[test]
    fn confirmed_by_demands_an_accepted_confirmer() {
        let spec = workflow(json!({"mandatory_checkpoints": [
            {"checkpoint_id": "confirm", "must_precede": "send", "confirmed_by": ["owner"]}]}));
        let bot = [
            checkpoint(1, "confirm", Some("bot")),
            action(2, "send", json!({})),
        ];
        let found = spec.evaluate(&bot);
        assert_eq!(codes(&found), ["checkpoint-wrong-confirmer"]);
        assert_eq!(
            found[0].message,
            "checkpoint 'confirm' at seq 1 confirmed by 'bot', but the spec accepts only ['owner']; guarded action 'send' executed at seq 2"
        );
        let owner = [
            checkpoint(1, "confirm", Some("owner")),
            action(2, "send", json!({})),
        ];
        assert!(spec.evaluate(&owner).is_empty());
        let late_owner = [
            checkpoint(1, "confirm", None),
            action(2, "send", json!({})),
            checkpoint(3, "confirm", Some("owner")),
        ];
        assert_eq!(
            codes(&spec.evaluate(&late_owner)),
            ["checkpoint-after-action"]
        );
    }

    fn contracts() -> Workflow {
        workflow(json!({"handoff_contracts": [
            {"from_agent": "scanner", "to_agent": "aggregator", "required_fields": ["row_count", "source"]},
            {"from_agent": "aggregator", "to_agent": "reporter", "required_fields": ["row_count", "summary"],
             "require_verified": true}]}))
    }

    #[test]
    fn contract_collects_missing_and_unverified_fields() {
        let events = [handoff(
            4,
            "aggregator",
            "reporter",
            &[("row_count", json!(9), false)],
        )];
        let found = contracts().evaluate(&events);
        assert_eq!(
            codes(&found),
            [
                "handoff-contract-violation",
                "unverified-claim-consumed-as-ground-truth"
            ]
        );
        assert_eq!(
            found[0].message,
            "required fields never delivered at a contracted border: aggregator->reporter (seq 4) missing ['summary']"
        );
    }

    #[test]
    fn uncontracted_handoff_warns() {
        let found = contracts().evaluate(&[handoff(7, "reporter", "auditor", &[])]);
        assert_eq!(found[0].severity, Severity::Warn);
        assert_eq!(codes(&found), ["uncontracted-handoff"]);
    }

    #[test]
    fn unverified_value_through_two_hops_blocks_once() {
        let events = [
            handoff(
                2,
                "scanner",
                "aggregator",
                &[
                    ("row_count", json!(5), true),
                    ("anomaly_count", json!(3), false),
                    ("source", json!("db"), false),
                ],
            ),
            handoff(
                4,
                "aggregator",
                "reporter",
                &[
                    ("row_count", json!(5), true),
                    ("summary", json!("ok"), true),
                    ("anomaly_count", json!(3.0), false),
                ],
            ),
        ];
        let found = contracts().evaluate(&events);
        assert_eq!(codes(&found), ["unverified-claim-propagated-2-hops"]);
        assert_eq!(
            found[0].message,
            "field 'anomaly_count'=3.0 entered unverified at scanner->aggregator (seq 2) and was passed on unverified through 2 handoffs, last at aggregator->reporter (seq 4); no agent verified it at any hop"
        );
    }

    #[test]
    fn verified_hop_or_changed_value_or_broken_chain_stops_propagation() {
        let verified_first = [
            handoff(2, "a", "b", &[("n", json!(3), true)]),
            handoff(4, "b", "c", &[("n", json!(3), false)]),
        ];
        let changed = [
            handoff(2, "a", "b", &[("n", json!(3), false)]),
            handoff(4, "b", "c", &[("n", json!(4), false)]),
        ];
        let disconnected = [
            handoff(2, "a", "b", &[("n", json!(3), false)]),
            handoff(4, "x", "c", &[("n", json!(3), false)]),
        ];
        for events in [&verified_first[..], &changed, &disconnected] {
            let found: Vec<_> = contracts()
                .evaluate(events)
                .into_iter()
                .filter(|f| f.severity == Severity::Block)
                .collect();
            assert!(found.is_empty(), "{found:?}");
        }
    }

    #[test]
    fn three_hop_chain_reports_only_the_maximal_chain() {
        let events = [
            handoff(1, "a", "b", &[("n", json!("x"), false)]),
            handoff(2, "b", "c", &[("n", json!("x"), false)]),
            handoff(3, "c", "d", &[("n", json!("x"), false)]),
        ];
        let found: Vec<_> = contracts()
            .evaluate(&events)
            .into_iter()
            .filter(|f| f.severity == Severity::Block)
            .collect();
        assert_eq!(codes(&found), ["unverified-claim-propagated-3-hops"]);
        assert_eq!(found[0].seq, Some(3));
    }

    #[test]
    fn precedence_over_arguments() {
        let spec = workflow(json!({"precedence": [
            {"action": "refund", "preceded_by": "lookup_order", "same_args": ["order_id"]}]}));
        let good = [
            action(1, "lookup_order", json!({"order_id": "A1"})),
            action(2, "refund", json!({"order_id": "A1", "amount": 5})),
        ];
        assert!(spec.evaluate(&good).is_empty());
        let other_order = [
            action(1, "lookup_order", json!({"order_id": "A1"})),
            action(2, "refund", json!({"order_id": "B2"})),
        ];
        let found = spec.evaluate(&other_order);
        assert_eq!(codes(&found), ["precedence-violated"]);
        assert_eq!(
            found[0].message,
            "action 'refund' at seq 2 has no earlier 'lookup_order' with the same order_id='B2'"
        );
        let late = [
            action(1, "refund", json!({"order_id": "A1"})),
            action(2, "lookup_order", json!({"order_id": "A1"})),
        ];
        assert_eq!(codes(&spec.evaluate(&late)), ["precedence-violated"]);
        let no_arg = [
            action(1, "lookup_order", json!({"order_id": "A1"})),
            action(2, "refund", json!({})),
        ];
        assert_eq!(
            spec.evaluate(&no_arg)[0].message,
            "action 'refund' at seq 2 carries no 'order_id' to match an earlier 'lookup_order'"
        );
    }

    #[test]
    fn response_over_arguments() {
        let spec = workflow(json!({"response": [
            {"action": "open_ticket", "followed_by": "close_ticket", "same_args": ["ticket_id"]}]}));
        let events = [
            action(1, "open_ticket", json!({"ticket_id": 1})),
            action(2, "open_ticket", json!({"ticket_id": 2})),
            action(3, "close_ticket", json!({"ticket_id": 1})),
        ];
        let found = spec.evaluate(&events);
        assert_eq!(codes(&found), ["response-missing"]);
        assert_eq!(found[0].seq, Some(2));
        assert_eq!(
            found[0].message,
            "action 'open_ticket' at seq 2 has no later 'close_ticket' with the same ticket_id=2"
        );
    }
}
