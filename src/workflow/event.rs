//! The abstract event sequence the workflow rules run over.
//!
//! Every input that can show actions, checkpoints and agent-to-agent handoffs maps onto these events: the
//! `trajectory` JSON-lines reader here, and later the step table of every trace format (`check --workflow`).
//! The rules in `rules` see nothing else, so they know no file format.

use serde_json::{Map, Value};

/// One thing that happened on the road, in recorded order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A tool step.
    Action(Action),
    /// A checkpoint span.
    Checkpoint(Checkpoint),
    /// An agent-to-agent transfer.
    Handoff(Handoff),
}

impl Event {
    /// The event's position in the run; strictly increasing through a run.
    pub fn seq(&self) -> i64 {
        match self {
            Event::Action(a) => a.seq,
            Event::Checkpoint(c) => c.seq,
            Event::Handoff(h) => h.seq,
        }
    }
}

/// An agent did something (a tool step); `args` are the action's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// Position of the event in the run, as recorded.
    pub seq: i64,
    /// The agent that acted.
    pub agent: String,
    /// The action (tool) name the spec's rules match.
    pub action_type: String,
    /// The action's arguments as a JSON object.
    pub args: Map<String, Value>,
}

/// A mandatory step was walked, optionally naming who confirmed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Position of the event in the run, as recorded.
    pub seq: i64,
    /// The agent that walked the checkpoint.
    pub agent: String,
    /// The checkpoint's id, as the spec's `checkpoint_id` names it.
    pub checkpoint_id: String,
    /// Who confirmed it (`faultgate.confirmed_by`); `None` when not recorded.
    pub confirmed_by: Option<String>,
}

/// One agent passed data to the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Handoff {
    /// Position of the event in the run, as recorded.
    pub seq: i64,
    /// The agent handing off.
    pub from_agent: String,
    /// The agent receiving.
    pub to_agent: String,
    /// Payload fields in recorded order.
    pub payload: Vec<PayloadField>,
}

impl Handoff {
    /// The payload field of that name, if delivered.
    pub fn field(&self, name: &str) -> Option<&PayloadField> {
        self.payload.iter().find(|f| f.name == name)
    }

    /// `from->to`, the way reasons name a border.
    pub fn border(&self) -> String {
        format!("{}->{}", self.from_agent, self.to_agent)
    }
}

/// One field of a handoff payload.
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadField {
    /// The field's name in the payload object.
    pub name: String,
    /// The field's value.
    pub value: Value,
    /// True only when the sender asserted `verified: true`; silence is not verification.
    pub verified: bool,
}

impl PayloadField {
    /// Reads a payload entry: `{"value": v, "verified": b}` is the wrapped form, anything else is a bare,
    /// unverified value.
    pub fn from_entry(name: &str, entry: &Value) -> PayloadField {
        if let Value::Object(wrapper) = entry
            && let Some(value) = wrapper.get("value")
        {
            return PayloadField {
                name: name.to_string(),
                value: value.clone(),
                verified: wrapper.get("verified") == Some(&Value::Bool(true)),
            };
        }
        PayloadField {
            name: name.to_string(),
            value: entry.clone(),
            verified: false,
        }
    }
}

/// Returns true if and only if two recorded values are the same value, comparing numbers by value so that
/// `3` and `3.0` match (a value re-serialised at a border must not escape the propagation check).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| same_value(x, y)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrapped_payload_entry_is_verified_only_when_true() {
        let f = PayloadField::from_entry("n", &json!({"value": 3, "verified": true}));
        assert!(f.verified);
        assert_eq!(f.value, json!(3));
        let f = PayloadField::from_entry("n", &json!({"value": 3, "verified": "yes"}));
        assert!(!f.verified);
        let f = PayloadField::from_entry("n", &json!({"value": 3}));
        assert!(!f.verified);
    }

    #[test]
    fn bare_payload_entry_is_unverified() {
        let f = PayloadField::from_entry("n", &json!({"verified": true}));
        assert!(!f.verified);
        assert_eq!(f.value, json!({"verified": true}));
        assert!(!PayloadField::from_entry("n", &json!(7)).verified);
    }

    #[test]
    fn same_value_compares_numbers_by_value() {
        assert!(same_value(&json!(3), &json!(3.0)));
        assert!(!same_value(&json!(3), &json!("3")));
        assert!(same_value(&json!([1, {"a": 2}]), &json!([1.0, {"a": 2}])));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }
}
