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

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;
use serde_json::value::RawValue;

use super::signals::skip_scalars;

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

/// What a message with the wanted role adds to its text, in message order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece<'a> {
    /// A part of type `text`: its `content`, else its `text`; `None` when it has neither.
    TextPart(Option<&'a RawValue>),
    /// The `content` of a message whose `parts` are missing, not a list, or an empty list.
    Content(&'a RawValue),
}

/// The pieces of the messages with `role` in `text`, a JSON list of messages, read in one pass over
/// the text: the messages, their parts and the parts' members are found as the text is validated,
/// not parsed into a list of raw items and then each item parsed again.
///
/// `None` when the text is not a JSON list, or when it holds what only the item-by-item reading
/// settles the way it always has: an item or member whose key does not decode (a lone surrogate), or
/// a number too large for a float where a message is expected. The caller then reads it that way.
pub(crate) fn messages<'a>(text: &'a str, role: &str) -> Option<Vec<Piece<'a>>> {
    if !text.trim_start().starts_with('[') {
        return None;
    }
    let mut pieces = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    MessageList {
        role,
        pieces: &mut pieces,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(pieces)
}

/// The decoded text of a raw value when it is a JSON string, as [`LazyObject::str`] reads it.
fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    if !raw.get().starts_with('"') {
        return None;
    }
    Cow::<str>::deserialize(raw).ok()
}

struct MessageList<'r, 'a> {
    role: &'r str,
    pieces: &'r mut Vec<Piece<'a>>,
}

impl<'de> DeserializeSeed<'de> for MessageList<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MessageList<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON list of messages")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq
            .next_element_seed(Message {
                role: self.role,
                pieces: &mut *self.pieces,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// One item of the message list; an item that is not an object adds nothing.
struct Message<'r, 'a> {
    role: &'r str,
    pieces: &'r mut Vec<Piece<'a>>,
}

impl<'de> DeserializeSeed<'de> for Message<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Message<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        // Text parts are pushed as they are met and dropped again when a later `parts` replaces them
        // or the role turns out to be another: a repeated key keeps its last value, as Python's does.
        let start = self.pieces.len();
        let mut role = None;
        let mut parts = None;
        let mut content = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "role" => role = string(map.next_value::<&'de RawValue>()?),
                "parts" => {
                    self.pieces.truncate(start);
                    parts = map.next_value_seed(Parts {
                        pieces: &mut *self.pieces,
                    })?;
                }
                "content" => content = Some(map.next_value::<&'de RawValue>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if role.as_deref() != Some(self.role) {
            self.pieces.truncate(start);
            return Ok(());
        }
        if let Some(content) = content
            && parts.is_none_or(|items| items == 0)
        {
            self.pieces.push(Piece::Content(content));
        }
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<(), S::Error> {
        skip_seq(seq)
    }

    skip_scalars!(());
}

/// A message's `parts` value: the number of items when it is a list (text parts pushed), else `None`.
struct Parts<'r, 'a> {
    pieces: &'r mut Vec<Piece<'a>>,
}

impl<'de> DeserializeSeed<'de> for Parts<'_, 'de> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Parts<'_, 'de> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message's parts")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Option<usize>, S::Error> {
        let mut items = 0;
        while seq
            .next_element_seed(Part {
                pieces: &mut *self.pieces,
            })?
            .is_some()
        {
            items += 1;
        }
        Ok(Some(items))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Option<usize>, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    skip_scalars!(None);
}

/// One item of a `parts` list; a text part pushes its text, anything else adds nothing.
struct Part<'r, 'a> {
    pieces: &'r mut Vec<Piece<'a>>,
}

impl<'de> DeserializeSeed<'de> for Part<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Part<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message part")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        let mut kind = None;
        let mut content = None;
        let mut text = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => kind = string(map.next_value::<&'de RawValue>()?),
                "content" => content = Some(map.next_value::<&'de RawValue>()?),
                "text" => text = Some(map.next_value::<&'de RawValue>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if kind.as_deref() == Some("text") {
            self.pieces.push(Piece::TextPart(content.or(text)));
        }
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<(), S::Error> {
        skip_seq(seq)
    }

    skip_scalars!(());
}

fn skip_seq<'de, S: SeqAccess<'de>>(mut seq: S) -> Result<(), S::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
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
