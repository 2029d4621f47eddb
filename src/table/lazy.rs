//! JSON decoded only as far as a reader looks: lists and objects whose members stay raw text until asked
//! for.
//!
//! Chat message attributes carry whole conversations (every earlier turn, tool result and argument) as
//! JSON text, and the derivations read a handful of keys from them. Parsing them into `Value` trees
//! allocates every string of the conversation; here a list is its items' raw text and an object its keys
//! with raw values, all borrowed from the attribute. The text is still fully validated, so what parses
//! and what fails is what a full parse would accept or reject.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON object's members, each value still raw text. A repeated key keeps its last value, as
/// Python's `json` does.
pub(crate) struct LazyObject<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> LazyObject<'a> {
    /// The raw value under `key`.
    pub(crate) fn raw(&self, key: &str) -> Option<&'a RawValue> {
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }

    /// The value under `key`, decoded.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        self.raw(key).map(decode)
    }

    /// The value under `key` when it is a JSON string (decoded, escapes resolved).
    pub(crate) fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        let raw = self.raw(key)?;
        if !raw.get().starts_with('"') {
            return None;
        }
        Cow::<'a, str>::deserialize(raw).ok()
    }

    /// The items of the list under `key`, when it is a list.
    pub(crate) fn list(&self, key: &str) -> Option<Vec<&'a RawValue>> {
        let raw = self.raw(key)?;
        list_items(raw.get())
    }
}

/// A raw value decoded (it was validated when its container was read).
pub(crate) fn decode(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The items of `text` when it is a JSON list; `None` when it is not JSON or not a list.
pub(crate) fn list_items(text: &str) -> Option<Vec<&RawValue>> {
    if !text.trim_start().starts_with('[') {
        return None;
    }
    serde_json::from_str::<Vec<&RawValue>>(text).ok()
}

/// The members of a raw value when it is an object.
pub(crate) fn object(raw: &RawValue) -> Option<LazyObject<'_>> {
    if !raw.get().starts_with('{') {
        return None;
    }
    serde_json::from_str::<LazyObject<'_>>(raw.get()).ok()
}

impl<'de: 'a, 'a> Deserialize<'de> for LazyObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = LazyObject<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    members.push((key, value));
                }
                Ok(LazyObject { members })
            }

            fn visit_seq<S: SeqAccess<'de>>(self, _: S) -> Result<Self::Value, S::Error> {
                Err(de::Error::invalid_type(de::Unexpected::Seq, &self))
            }
        }

        deserializer.deserialize_map(Members(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_stay_raw_and_the_last_repeat_wins() {
        let text =
            r#"[{"role": "user", "role": "tool", "parts": [{"type": "te\u0078t"}], "n": 1.5}, 3]"#;
        let items = list_items(text).unwrap();
        assert_eq!(items.len(), 2);
        let message = object(items[0]).unwrap();
        assert_eq!(message.str("role").as_deref(), Some("tool"));
        assert_eq!(message.get("n"), Some(serde_json::json!(1.5)));
        let parts = message.list("parts").unwrap();
        assert_eq!(
            object(parts[0]).unwrap().str("type").as_deref(),
            Some("text")
        );
        assert!(object(items[1]).is_none());
        assert!(message.str("n").is_none());
    }

    #[test]
    fn what_a_full_parse_rejects_is_no_list() {
        assert!(list_items(r#"[{"a": 1,}]"#).is_none());
        assert!(list_items(r#"{"a": []}"#).is_none());
        assert!(list_items("not json").is_none());
        assert_eq!(list_items(" [] ").map(|l| l.len()), Some(0));
    }
}
