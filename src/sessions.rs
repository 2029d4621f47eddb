//! Sessions (`--unit session`): a conversation of several traces checked as one unit.
//!
//! A trace is a turn of the conversation its conversation id names
//! ([`crate::table::record::conversation_id`]). The run holds every such trace whole as it reads
//! it, as it holds the parts of a trace split across files (`crate::pipeline`), so a conversation's
//! turns may sit in any files of the run; once every file is read, the held traces are merged by
//! trace id first (`crate::identity`), then grouped here by conversation, their turns put in start
//! order, and each conversation becomes one row ([`crate::table::TableBuilder::append_turns`]).
//!
//! A reason keeps counting steps over the whole conversation, so that every reader of a reason
//! (the span it names, the steps a report shows) finds the same step; the turn of each step it
//! names is written before it ([`name_turns`]).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::table::record::{TraceRecord, conversation_id, root_position};

/// One unit of a session run: a conversation, or a trace that names none.
#[derive(Debug)]
pub(crate) enum Unit {
    /// A conversation's id and its turns, in turn order.
    Session(String, Vec<TraceRecord<'static>>),
    /// A trace without a conversation id: a unit of its own.
    Alone(TraceRecord<'static>),
}

/// Groups traces into units, in order of each unit's first trace in `traces`; a conversation's
/// turns are put in start order, ties broken by trace id, so the order of the files or of the
/// threads that read them changes nothing.
pub(crate) fn group(traces: Vec<TraceRecord<'static>>) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for trace in traces {
        match conversation_id(&trace.spans) {
            Some(id) => match at.get(&id) {
                Some(&i) => {
                    if let Unit::Session(_, turns) = &mut units[i] {
                        turns.push(trace);
                    }
                }
                None => {
                    at.insert(id.clone(), units.len());
                    units.push(Unit::Session(id, vec![trace]));
                }
            },
            None => units.push(Unit::Alone(trace)),
        }
    }
    for unit in &mut units {
        if let Unit::Session(_, turns) = unit {
            turns.sort_by(|a, b| {
                (start(a), a.trace_id.as_ref()).cmp(&(start(b), b.trace_id.as_ref()))
            });
        }
    }
    units
}

/// When a turn started: its root's start, else its earliest known start (0 when it records none,
/// so such turns come first, in trace id order).
fn start(trace: &TraceRecord<'_>) -> i64 {
    root_position(&trace.spans)
        .map(|r| trace.spans[r].start_ns)
        .filter(|&s| s != 0)
        .or_else(|| {
            trace
                .spans
                .iter()
                .map(|s| s.start_ns)
                .filter(|&s| s != 0)
                .min()
        })
        .unwrap_or(0)
}

/// Writes, before each step a reason names (`step N`, counted over the conversation), the turn it
/// was taken in: `turn 2, step 5`. A list (`steps 2, 5, 7`) is followed by its turns
/// (`(turns 1, 2, 2)`). `turn_of` gives each step's turn, from 0; a number past it is left alone.
pub(crate) fn name_turns<'r>(reason: &'r str, turn_of: &[usize]) -> Cow<'r, str> {
    let turn = |n: usize| n.checked_sub(1).and_then(|i| turn_of.get(i)).map(|t| t + 1);
    let bytes = reason.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = reason[at..].find("step").map(|i| at + i) {
        at = found + 4;
        if found > 0 && bytes[found - 1].is_ascii_alphanumeric() {
            continue;
        }
        let plural = bytes.get(found + 4) == Some(&b's');
        let mut p = found + 4 + usize::from(plural);
        if bytes.get(p) != Some(&b' ') {
            continue;
        }
        p += 1;
        // The numbers that follow: one, or a list separated by `, ` when plural.
        let mut numbers = Vec::new();
        let mut end = p;
        loop {
            let digits = bytes[end..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0
                || bytes
                    .get(end + digits)
                    .is_some_and(u8::is_ascii_alphanumeric)
            {
                break;
            }
            numbers.push(
                reason[end..end + digits]
                    .parse::<usize>()
                    .ok()
                    .and_then(turn),
            );
            end += digits;
            if !plural || !reason[end..].starts_with(", ") {
                break;
            }
            let next = end + 2;
            if !bytes.get(next).is_some_and(u8::is_ascii_digit) {
                break;
            }
            end = next;
        }
        let Some(turns) = numbers.iter().copied().collect::<Option<Vec<usize>>>() else {
            continue;
        };
        if turns.is_empty() {
            continue;
        }
        if plural {
            out.push_str(&reason[copied..end]);
            let list: Vec<String> = turns.iter().map(usize::to_string).collect();
            out.push_str(&format!(" (turns {})", list.join(", ")));
        } else {
            out.push_str(&reason[copied..found]);
            out.push_str(&format!("turn {}, ", turns[0]));
            out.push_str(&reason[found..end]);
        }
        copied = end;
        at = end;
    }
    if copied == 0 {
        return Cow::Borrowed(reason);
    }
    out.push_str(&reason[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::record::{SpanRecord, attr};

    fn turn(trace_id: &str, conversation: Option<&str>, start: i64) -> TraceRecord<'static> {
        let mut root = SpanRecord {
            span_id: format!("{trace_id}-root").into(),
            name: "invoke_agent".into(),
            start_ns: start,
            end_ns: start + 10,
            ..SpanRecord::default()
        };
        if let Some(id) = conversation {
            root.attrs.push(
                attr::CONVERSATION_ID,
                crate::table::record::AttrValue::from(serde_json::Value::String(id.into())),
            );
        }
        TraceRecord {
            trace_id: trace_id.to_string().into(),
            agent: "agent".into(),
            spans: vec![root],
            skipped_attributes: 0,
        }
    }

    fn ids(unit: &Unit) -> Vec<String> {
        match unit {
            Unit::Session(id, turns) => std::iter::once(format!("session {id}"))
                .chain(turns.iter().map(|t| t.trace_id.to_string()))
                .collect(),
            Unit::Alone(trace) => vec![trace.trace_id.to_string()],
        }
    }

    #[test]
    fn turns_are_grouped_by_conversation_in_start_order_ties_by_trace_id() {
        let traces = vec![
            turn("t3", Some("c1"), 300),
            turn("lone", None, 50),
            turn("t1", Some("c1"), 100),
            turn("u1", Some("c2"), 100),
            turn("t2b", Some("c1"), 200),
            turn("t2a", Some("c1"), 200),
        ];
        let units: Vec<Vec<String>> = group(traces).iter().map(ids).collect();
        assert_eq!(
            units,
            vec![
                vec!["session c1", "t1", "t2a", "t2b", "t3"],
                vec!["lone"],
                vec!["session c2", "u1"],
            ]
        );
    }

    #[test]
    fn a_reason_names_the_turn_of_each_step_it_names() {
        let turn_of = [0, 0, 1, 1, 1, 2];
        assert_eq!(
            name_turns(
                "Tool 'x' failed at step 4 (boom) and no call succeeded.",
                &turn_of
            ),
            "Tool 'x' failed at turn 2, step 4 (boom) and no call succeeded."
        );
        assert_eq!(
            name_turns("issued >= 3 times (steps 2, 4, 6) where", &turn_of),
            "issued >= 3 times (steps 2, 4, 6 (turns 1, 2, 3)) where"
        );
        // Counts and numbers past the conversation's steps name no step.
        assert_eq!(name_turns("12 steps (cap)", &turn_of), "12 steps (cap)");
        assert_eq!(name_turns("step 9 of", &turn_of), "step 9 of");
        assert_eq!(name_turns("footstep 2", &turn_of), "footstep 2");
    }
}
