//! `conform --draft`: mine a draft spec from known-good runs, for a human to edit.
//!
//! Specs go stale as fast as prompts, so drafting one from runs known to be good is the aid users ask
//! for. What is mined, always from every good run at once:
//! - a mandatory checkpoint for a checkpoint id that occurs in every run, guarding each action type that
//!   directly follows its first occurrence in some run and comes after it in every run; `confirmed_by`
//!   lists the confirmers seen when every occurrence names one, and `every` is set when the action repeats
//!   and each repetition had a fresh checkpoint;
//! - a handoff contract for each border seen, requiring the fields present in every handoff across it,
//!   with `require_verified` when all of them always arrived verified.
//!
//! The draft is a starting point: it can only say what the good runs have in common.

use super::event::{Action, Checkpoint, Event, Handoff};
use super::spec::{CheckpointRuleConfig, HandoffContractConfig, SpecConfig};

fn first_seq_of_action(run: &[Event], action_type: &str) -> Option<i64> {
    run.iter().find_map(|e| match e {
        Event::Action(a) if a.action_type == action_type => Some(a.seq),
        _ => None,
    })
}

fn checkpoints_named<'a>(run: &'a [Event], id: &'a str) -> impl Iterator<Item = &'a Checkpoint> {
    run.iter().filter_map(move |e| match e {
        Event::Checkpoint(c) if c.checkpoint_id == id => Some(c),
        _ => None,
    })
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_string());
    }
}

/// Drafts a spec from known-good runs (each a recorded event sequence).
pub(crate) fn draft_spec(runs: &[&[Event]]) -> SpecConfig {
    SpecConfig {
        mandatory_checkpoints: draft_checkpoints(runs),
        handoff_contracts: draft_contracts(runs),
        precedence: Vec::new(),
        response: Vec::new(),
    }
}

fn draft_checkpoints(runs: &[&[Event]]) -> Vec<CheckpointRuleConfig> {
    let mut ids: Vec<String> = Vec::new();
    for run in runs {
        for event in *run {
            if let Event::Checkpoint(c) = event {
                push_unique(&mut ids, &c.checkpoint_id);
            }
        }
    }
    let mut rules = Vec::new();
    for id in &ids {
        let mut firsts = Vec::with_capacity(runs.len());
        for run in runs {
            match checkpoints_named(run, id).next() {
                Some(c) => firsts.push(c.seq),
                None => break,
            }
        }
        if firsts.len() != runs.len() {
            continue;
        }
        let mut candidates: Vec<String> = Vec::new();
        for (run, &first) in runs.iter().zip(&firsts) {
            let next = run.iter().find_map(|e| match e {
                Event::Action(a) if a.seq > first => Some(a),
                _ => None,
            });
            if let Some(action) = next {
                push_unique(&mut candidates, &action.action_type);
            }
        }
        for action_type in candidates {
            let always_after = runs.iter().zip(&firsts).all(|(run, &first)| {
                first_seq_of_action(run, &action_type).is_some_and(|seq| seq > first)
            });
            if !always_after {
                continue;
            }
            rules.push(CheckpointRuleConfig {
                checkpoint_id: id.clone(),
                every: renewed_before_each_repeat(runs, id, &action_type),
                confirmed_by: confirmers(runs, id),
                must_precede: action_type,
            });
        }
    }
    rules
}

fn confirmers(runs: &[&[Event]], id: &str) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for run in runs {
        for checkpoint in checkpoints_named(run, id) {
            push_unique(&mut names, checkpoint.confirmed_by.as_deref()?);
        }
    }
    names.sort();
    Some(names)
}

/// Returns true if and only if the action repeats in some run and every repetition in every run had a
/// fresh checkpoint since the previous occurrence.
fn renewed_before_each_repeat(runs: &[&[Event]], id: &str, action_type: &str) -> bool {
    let mut repeats = false;
    for run in runs {
        let acts: Vec<&Action> = run
            .iter()
            .filter_map(|e| match e {
                Event::Action(a) if a.action_type == action_type => Some(a),
                _ => None,
            })
            .collect();
        for pair in acts.windows(2) {
            repeats = true;
            let fresh =
                checkpoints_named(run, id).any(|c| c.seq > pair[0].seq && c.seq < pair[1].seq);
            if !fresh {
                return false;
            }
        }
    }
    repeats
}

fn draft_contracts(runs: &[&[Event]]) -> Vec<HandoffContractConfig> {
    let mut borders: Vec<(&str, &str)> = Vec::new();
    let all_handoffs = || {
        runs.iter().flat_map(|run| {
            run.iter().filter_map(|e| match e {
                Event::Handoff(h) => Some(h),
                _ => None,
            })
        })
    };
    for handoff in all_handoffs() {
        let border = (handoff.from_agent.as_str(), handoff.to_agent.as_str());
        if !borders.contains(&border) {
            borders.push(border);
        }
    }
    borders
        .into_iter()
        .map(|(from, to)| {
            let crossing: Vec<&Handoff> = all_handoffs()
                .filter(|h| h.from_agent == from && h.to_agent == to)
                .collect();
            let required_fields: Vec<String> = crossing
                .first()
                .map(|first| {
                    first
                        .payload
                        .iter()
                        .map(|f| f.name.clone())
                        .filter(|name| crossing.iter().all(|h| h.field(name).is_some()))
                        .collect()
                })
                .unwrap_or_default();
            let require_verified = !required_fields.is_empty()
                && crossing.iter().all(|h| {
                    required_fields
                        .iter()
                        .all(|name| h.field(name).is_some_and(|f| f.verified))
                });
            HandoffContractConfig {
                from_agent: from.to_string(),
                to_agent: to.to_string(),
                required_fields,
                require_verified,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::trajectory::parse_trajectory;

    fn events(text: &str) -> Vec<Event> {
        parse_trajectory(text.as_bytes()).unwrap().events
    }

    const RUN_A: &str = r#"{"seq": 1, "agent": "s", "event": "action", "action_type": "scan"}
{"seq": 2, "agent": "s", "event": "handoff", "from_agent": "s", "to_agent": "r", "payload": {"n": {"value": 3, "verified": true}, "extra": 1}}
{"seq": 3, "agent": "r", "event": "checkpoint", "checkpoint_id": "confirm", "confirmed_by": "owner"}
{"seq": 4, "agent": "r", "event": "action", "action_type": "send"}
{"seq": 5, "agent": "r", "event": "final", "task_success": true}"#;

    const RUN_B: &str = r#"{"seq": 1, "agent": "s", "event": "handoff", "from_agent": "s", "to_agent": "r", "payload": {"n": {"value": 4, "verified": true}}}
{"seq": 2, "agent": "r", "event": "checkpoint", "checkpoint_id": "confirm", "confirmed_by": "admin"}
{"seq": 3, "agent": "r", "event": "action", "action_type": "send"}
{"seq": 4, "agent": "r", "event": "checkpoint", "checkpoint_id": "confirm", "confirmed_by": "owner"}
{"seq": 5, "agent": "r", "event": "action", "action_type": "send"}
{"seq": 6, "agent": "r", "event": "final", "task_success": true}"#;

    #[test]
    fn drafts_checkpoints_and_contracts_common_to_every_run() {
        let a = events(RUN_A);
        let b = events(RUN_B);
        let spec = draft_spec(&[&a, &b]);
        assert_eq!(
            spec.mandatory_checkpoints,
            [CheckpointRuleConfig {
                checkpoint_id: "confirm".into(),
                must_precede: "send".into(),
                every: true,
                confirmed_by: Some(vec!["admin".into(), "owner".into()]),
            }]
        );
        assert_eq!(
            spec.handoff_contracts,
            [HandoffContractConfig {
                from_agent: "s".into(),
                to_agent: "r".into(),
                required_fields: vec!["n".into()],
                require_verified: true,
            }]
        );
    }

    #[test]
    fn checkpoint_missing_from_one_run_is_not_drafted() {
        let a = events(RUN_A);
        let plain = events(
            r#"{"seq": 1, "agent": "r", "event": "action", "action_type": "send"}
{"seq": 2, "agent": "r", "event": "final", "task_success": true}"#,
        );
        assert!(draft_spec(&[&a, &plain]).mandatory_checkpoints.is_empty());
    }
}
