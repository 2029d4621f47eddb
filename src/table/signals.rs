//! Per-step and per-span facts that several checks share, computed once while the tables are built.
//!
//! A tool result is read with one JSON pass that keeps only what the rules look at (the top-level
//! keys they name, whether each value is a list and whether it is empty, and the `text` of list
//! items) instead of building a full `Value`: the results are the bulk of an archive. Everything the
//! pass skips is still decoded by the same deserializer, so what parses and what fails is exactly what
//! a full parse would accept or reject. Most results are flat objects (scalars and lists of scalars,
//! no escapes): a small scanner reads those first and leaves every other text to that pass, so it
//! only has to be right about the texts it takes, which a property test holds against the pass.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::flat;
use crate::compat::value::{py_int, py_str, py_strip, py_truthy};

/// Both result signals of one tool result, from a single parse: the structural-error description and
/// whether the result counts as "nothing found".
pub(crate) fn result_signals(result: &str) -> (Option<String>, bool) {
    let text = py_strip(result);
    let top = parse_top(text);
    (
        structural_error_of(text, top.as_ref()),
        is_empty_of(text, top.as_ref()),
    )
}

fn is_empty_of(r: &str, top: Option<&Top>) -> bool {
    if matches!(r, "" | "[]" | "{}" | "null" | "None") {
        return true;
    }
    match top {
        Some(Top::Array(items)) => items.is_empty(),
        Some(Top::Object(facts)) => {
            for key in COUNT_KEYS {
                if let Some(v) = facts.get(key) {
                    return equals_zero(v);
                }
            }
            facts.has_list && facts.all_lists_empty
        }
        None => false,
    }
}

/// Visitor methods that accept every JSON scalar and return `$out`: for visitors that read only
/// lists, objects or their members, to which a scalar adds nothing.
macro_rules! skip_scalars {
    ($out:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($out)
        }

        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($out)
        }

        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($out)
        }

        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($out)
        }

        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($out)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($out)
        }
    };
}
pub(crate) use skip_scalars;

/// Python `v == 0`: numbers and booleans compare numerically, everything else is unequal.
fn equals_zero(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

const COUNT_KEYS: [&str; 4] = ["n_candidates", "count", "n_results", "total"];
const EXIT_KEYS: [&str; 5] = [
    "exit_code",
    "return_code",
    "exitcode",
    "returncode",
    "exit_status",
];
const ERROR_PREFIXES: [&str; 4] = [
    "Error:",
    "ERROR:",
    "Traceback (most recent call last)",
    "An error occurred while parsing tool arguments",
];

fn structural_error_of(text: &str, top: Option<&Top>) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let nested: Vec<Facts>;
    let candidates: &[Facts] = match top {
        Some(Top::Object(facts)) => std::slice::from_ref(facts),
        Some(Top::Array(texts)) => {
            nested = texts
                .iter()
                .flatten()
                .map(|t| py_strip(t))
                .filter(|t| t.starts_with('{') && t.ends_with('}'))
                .filter_map(|t| match parse_top(t) {
                    Some(Top::Object(facts)) => Some(facts),
                    _ => None,
                })
                .collect();
            &nested
        }
        None => &[],
    };
    for candidate in candidates {
        if let Some(err) = candidate.get("error").filter(|e| py_truthy(e)) {
            let desc: String = py_str(err).chars().take(80).collect();
            return Some(format!("JSON top-level error: {desc}"));
        }
        for key in EXIT_KEYS {
            if let Some(v) = candidate.get(key)
                && let Some(code) = py_int(v)
                && code != 0
            {
                return Some(format!("Non-zero {key}: {}", py_str(v)));
            }
        }
    }
    if text.contains("<tool_use_error>") && text.contains("</tool_use_error>") {
        return Some("<tool_use_error> tag present".into());
    }
    ERROR_PREFIXES
        .iter()
        .find(|p| text.starts_with(*p))
        .map(|p| format!("Response starts with '{p}'"))
}

/// A bracketed result, read down to what the rules use.
#[derive(Debug, PartialEq)]
enum Top {
    /// A list: per item, the `text` string of an object item (`None` for any other item).
    Array(Vec<Option<String>>),
    Object(Facts),
}

/// The keys the rules name in a JSON object (there values kept whole), and the list values.
#[derive(Debug, PartialEq)]
struct Facts {
    /// Values of `error`, the exit keys and the count keys present, by position in [`SPECIAL_KEYS`]
    /// (a repeated key keeps its last value). Usually empty, so it costs nothing.
    special: Vec<(usize, Value)>,
    /// Some value (the last one of each key, as a JSON object keeps it) is a list.
    has_list: bool,
    /// No list value has items.
    all_lists_empty: bool,
}

const SPECIAL_KEYS: [&str; 10] = [
    "error",
    "exit_code",
    "return_code",
    "exitcode",
    "returncode",
    "exit_status",
    "n_candidates",
    "count",
    "n_results",
    "total",
];

impl Facts {
    fn get(&self, key: &str) -> Option<&Value> {
        let slot = SPECIAL_KEYS.iter().position(|k| *k == key)?;
        self.special
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, value)| value)
    }
}

/// Parses bracketed text (`{...}` or `[...]`); anything else, or invalid JSON, gives `None`. Other
/// text can never be a JSON list or object once stripped, so it is not parsed at all.
fn parse_top(text: &str) -> Option<Top> {
    let bracketed = (text.starts_with('{') && text.ends_with('}'))
        || (text.starts_with('[') && text.ends_with(']'));
    if !bracketed {
        return None;
    }
    if let Some(facts) = flat_object(text) {
        return Some(Top::Object(facts));
    }
    parse_fully(text)
}

fn parse_fully(text: &str) -> Option<Top> {
    serde_json::from_str::<TopDe>(text).ok().map(|t| t.0)
}

struct TopDe(Top);

impl<'de> de::Deserialize<'de> for TopDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TopVisitor).map(TopDe)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON list or object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ItemSeed)? {
            items.push(item);
        }
        Ok(Top::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Top, A::Error> {
        facts(map).map(Top::Object)
    }
}

fn facts<'de, A: MapAccess<'de>>(mut map: A) -> Result<Facts, A::Error> {
    let mut special: Vec<(usize, Value)> = Vec::new();
    // Every key with whether its value is a list (and empty); a repeated key keeps its last value.
    let mut kinds: Vec<(Cow<'de, str>, Option<bool>)> = Vec::new();
    while let Some(key) = map.next_key_seed(KeySeed)? {
        let kind = match SPECIAL_KEYS.iter().position(|k| *k == key) {
            Some(slot) => keep_special(&mut special, slot, map.next_value()?),
            None => map.next_value_seed(ListProbe)?,
        };
        kinds.push((key, kind));
    }
    Ok(finish_facts(special, &kinds))
}

/// Adds a special key's value to `special`, where a repeated key keeps its last value; gives whether
/// the value is a list, and if so whether it is empty.
fn keep_special(special: &mut Vec<(usize, Value)>, slot: usize, value: Value) -> Option<bool> {
    let kind = value.as_array().map(Vec::is_empty);
    match special.iter_mut().find(|(s, _)| *s == slot) {
        Some(entry) => entry.1 = value,
        None => special.push((slot, value)),
    }
    kind
}

/// The facts of an object from its special values and every key with its value's kind, in order.
fn finish_facts(special: Vec<(usize, Value)>, kinds: &[(Cow<'_, str>, Option<bool>)]) -> Facts {
    let last = last_values(kinds);
    let mut lists = last.filter_map(|(_, kind)| *kind).peekable();
    let has_list = lists.peek().is_some();
    let all_lists_empty = lists.all(|empty| empty);
    Facts {
        special,
        has_list,
        all_lists_empty,
    }
}

/// The facts of a flat object, read without a parser: every value a scalar or a list of scalars, no
/// string with an escape or a control char, and numbers without an exponent. Most tool results are
/// such objects, and reading them this way costs a fraction of a parse. `None` for any other text,
/// valid JSON or not, which the full parse then reads; the special keys' values are still decoded by
/// it, so they are the values a full parse gives.
fn flat_object(text: &str) -> Option<Facts> {
    let mut special: Vec<(usize, Value)> = Vec::new();
    let mut kinds: Vec<(Cow<'_, str>, Option<bool>)> = Vec::new();
    flat::members(text, flat_value_end, |key, value| {
        let kind = match SPECIAL_KEYS.iter().position(|k| *k == key) {
            Some(slot) => keep_special(&mut special, slot, scalar_value(value)?),
            None => list_kind(value),
        };
        kinds.push((Cow::Borrowed(key), kind));
        Some(())
    })?;
    Some(finish_facts(special, &kinds))
}

/// The value of a special key's text as the full parse decodes it. The values results most often hold
/// (`null`, `true`, `false`, a small non-negative integer) are built without a parser; the rest is
/// parsed.
fn scalar_value(text: &str) -> Option<Value> {
    match text {
        "null" => Some(Value::Null),
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        // Up to 18 digits always fits a u64; a sign, a fraction, a leading zero (not JSON) or more
        // digits go to the parser.
        _ if (1..=18).contains(&text.len())
            && text.bytes().all(|b| b.is_ascii_digit())
            && (text.len() == 1 || !text.starts_with('0')) =>
        {
            text.parse::<u64>().ok().map(Value::from)
        }
        _ => serde_json::from_str(text).ok(),
    }
}

/// Whether the text of a value the flat reader took is a list, and if so whether it is empty.
fn list_kind(value: &str) -> Option<bool> {
    let bytes = value.as_bytes();
    (bytes.first() == Some(&b'[')).then(|| bytes.get(flat::skip_space(bytes, 1)) == Some(&b']'))
}

/// Where the scalar, or list of scalars, at `at` ends. What follows it is the caller's to check.
fn flat_value_end(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'[') {
        return flat_scalar(text, at);
    }
    let mut at = flat::skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b']') {
        return Some(at + 1);
    }
    loop {
        at = flat::skip_space(bytes, flat_scalar(text, at)?);
        match bytes.get(at) {
            Some(b',') => at = flat::skip_space(bytes, at + 1),
            Some(b']') => return Some(at + 1),
            _ => return None,
        }
    }
}

/// Where the scalar at `at` ends: a plain string, a literal, or a number without an exponent of at
/// most 24 chars (far inside the range a parse accepts).
fn flat_scalar(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    match *bytes.get(at)? {
        b'"' => flat::plain_string(text, at).map(|(_, end)| end),
        b'n' | b't' | b'f' => flat::literal_end(bytes, at),
        b'-' | b'0'..=b'9' => {
            let digits = |from: usize| {
                from + bytes[from..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count()
            };
            let mut end = at + usize::from(bytes[at] == b'-');
            let whole = digits(end);
            // One digit, or no leading zero.
            if whole == end || (bytes[end] == b'0' && whole > end + 1) {
                return None;
            }
            end = whole;
            if bytes.get(end) == Some(&b'.') {
                let fraction = digits(end + 1);
                if fraction == end + 1 {
                    return None;
                }
                end = fraction;
            }
            (end - at <= 24).then_some(end)
        }
        _ => None,
    }
}

/// The entries of `kinds` that no later entry with the same key replaces.
fn last_values<'k, 'de>(
    kinds: &'k [(Cow<'de, str>, Option<bool>)],
) -> Box<dyn Iterator<Item = &'k (Cow<'de, str>, Option<bool>)> + 'k> {
    if kinds.len() <= 16 {
        return Box::new(
            kinds
                .iter()
                .enumerate()
                .filter(|(i, (key, _))| !kinds[i + 1..].iter().any(|(k, _)| k == key))
                .map(|(_, entry)| entry),
        );
    }
    let mut seen = std::collections::HashSet::with_capacity(kinds.len());
    let mut last: Vec<_> = kinds
        .iter()
        .rev()
        .filter(|(key, _)| seen.insert(key.as_ref()))
        .collect();
    last.reverse();
    Box::new(last.into_iter())
}

/// A list item: the `text` string of an object, `None` for anything else.
struct ItemSeed;

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
        let mut text = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == "text" {
                text = map.next_value_seed(TextSeed)?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(text)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<String>, A::Error> {
        Skip.visit_seq(seq).map(|_| None)
    }

    skip_scalars!(None);
}

/// A value that is kept only when it is a string.
struct TextSeed;

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<String>, E> {
        Ok(Some(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Option<String>, E> {
        Ok(Some(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        Skip.visit_map(map).map(|_| None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<String>, A::Error> {
        Skip.visit_seq(seq).map(|_| None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
}

/// Whether a value is a list, and if so whether it is empty.
struct ListProbe;

impl<'de> DeserializeSeed<'de> for ListProbe {
    type Value = Option<bool>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<bool>, D::Error> {
        d.deserialize_any(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<bool>, A::Error> {
        let empty = seq.next_element::<Skip>()?.is_none();
        Skip.visit_seq(seq)?;
        Ok(Some(empty))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<bool>, A::Error> {
        Skip.visit_map(map).map(|_| None)
    }

    skip_scalars!(None);
}

/// An object key, borrowed from the text when it holds no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

/// Any value, decoded by the same deserializer calls as a full `Value` (so it fails exactly where a
/// full parse fails: bad escapes, lone surrogates, numbers out of range, nesting too deep) but kept
/// nowhere.
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Skip)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }

    skip_scalars!(Skip);
}

/// The span-error description of unrecovered_tool_error: a status code 2, else a truthy `error.type`.
pub(crate) fn span_error(status_code: i64, error_type: Option<&str>) -> Option<String> {
    if status_code == 2 {
        Some("Span status error: Code 2".into())
    } else {
        error_type.map(|t| format!("Span error: {t}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values_are_the_values_a_parse_gives() {
        for text in [
            "null",
            "true",
            "false",
            "0",
            "7",
            "00",
            "012",
            "123456789012345678",
            "1234567890123456789",
            "99999999999999999999",
            "-0",
            "-1",
            "1.5",
            "-2.25",
            "\"x\"",
            "[]",
            "[1, \"a\"]",
            "nul",
            "",
        ] {
            assert_eq!(
                scalar_value(text),
                serde_json::from_str(text).ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn flat_objects_are_read_without_a_parse() {
        for text in [
            r#"{"ok": true, "error": null, "n_candidates": 0, "candidates": []}"#,
            r#"{"ok":true,"n_candidates":5,"candidates":["doc-0285","link-3d66"]}"#,
            r#"{ "exit_code" : -1.5 , "out": [1, 2.25, null, "x"] }"#,
            "{}",
        ] {
            assert!(flat_object(text).is_some(), "{text}");
            assert_eq!(parse_top(text), parse_fully(text), "{text}");
        }
        // Left to the parse: nesting, escapes, exponents, and what is not JSON at all.
        for text in [
            r#"{"a": {"b": 1}}"#,
            r#"{"a": [[]]}"#,
            r#"{"a": "\n"}"#,
            r#"{"a": 1e5}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": -}"#,
            r#"{"a": 1,}"#,
            r#"{"a": nul}"#,
            "{\"a\":\u{c}1}",
            r#"{"a" 1}"#,
            r#"{"a": 1} x"#,
        ] {
            assert!(flat_object(text).is_none(), "{text}");
        }
    }

    mod property {
        use super::super::{Top, flat_object, parse_fully};
        use proptest::prelude::*;

        /// Object-like text: keys the rules name and others, repeated; scalars of every form, valid
        /// or not; lists; nesting; JSON's and other whitespace; and now and then a char cut or added.
        fn objecty() -> impl Strategy<Value = String> {
            let space = prop::sample::select(vec!["", " ", "\n ", "\t", "\r\n", "\u{c}"]);
            let key = prop::sample::select(vec![
                "\"error\"",
                "\"count\"",
                "\"total\"",
                "\"exit_code\"",
                "\"n_results\"",
                "\"hits\"",
                "\"a\"",
                "\"caf\u{e9}\"",
                "\"k\\\"q\"",
                "\"tab\there\"",
                "error",
            ]);
            let scalar = prop::sample::select(vec![
                "0",
                "-0",
                "1",
                "-1.5",
                "0.000",
                "01",
                "1.",
                "-",
                "1e5",
                "2E-3",
                "123456789012345678901234567890",
                "9007199254740993",
                "null",
                "true",
                "false",
                "nul",
                "\"\"",
                "\"x\"",
                "\"\\u00e9\"",
                "\"\\q\"",
                "\"a\u{1}b\"",
                "\"ok\"",
            ]);
            let value = prop_oneof![
                3 => scalar.clone().prop_map(String::from),
                2 => (proptest::collection::vec((scalar, space.clone()), 0..4), space.clone()).prop_map(
                    |(items, s)| {
                        let items: Vec<String> =
                            items.into_iter().map(|(v, s)| format!("{s}{v}")).collect();
                        format!("[{}{s}]", items.join(","))
                    }
                ),
                1 => Just("{\"x\": [1]}".to_string()),
                1 => Just("[[], {}]".to_string()),
            ];
            let member = (space.clone(), key, space.clone(), value, space.clone())
                .prop_map(|(a, k, b, v, c)| format!("{a}{k}{b}:{c}{v}"));
            (
                proptest::collection::vec(member, 0..6),
                space,
                prop::sample::select(vec!["", "", "", ",", "}", "x", " ]"]),
                any::<prop::sample::Index>(),
                any::<bool>(),
            )
                .prop_map(|(members, s, extra, at, cut)| {
                    let mut text = format!("{{{}{s}}}", members.join(","));
                    let at = at.index(text.len());
                    if text.is_char_boundary(at) && at > 0 {
                        if cut && text.is_char_boundary(at + 1) {
                            text.remove(at);
                        } else {
                            text.insert_str(at, extra);
                        }
                    }
                    text
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(6000))]

            /// What the flat reader takes, the parse reads to the same facts.
            #[test]
            fn the_flat_reader_agrees_with_the_parse(text in objecty()) {
                if let Some(facts) = flat_object(&text) {
                    prop_assert_eq!(Some(Top::Object(facts)), parse_fully(&text), "{:?}", text);
                }
            }
        }
    }

    fn is_empty_result(result: &str) -> bool {
        result_signals(result).1
    }

    fn structural_error(result: &str) -> Option<String> {
        result_signals(result).0
    }

    #[test]
    fn empty_results() {
        for r in [
            "",
            " [] ",
            "{}",
            "null",
            "None",
            r#"{"count": 0}"#,
            r#"{"count": false}"#,
            r#"{"hits": [], "x": 1}"#,
        ] {
            assert!(is_empty_result(r), "{r}");
        }
        for r in ["x", "[1]", r#"{"n_results": null}"#, r#"{"a": 1}"#, "0"] {
            assert!(!is_empty_result(r), "{r}");
        }
        // The first key of the fixed list that is present decides, wherever it stands in the object.
        assert!(is_empty_result(r#"{"total": 3, "count": 0}"#));
        assert!(!is_empty_result(r#"{"n_candidates": 2, "count": 0}"#));
    }

    #[test]
    fn structural_errors() {
        assert_eq!(
            structural_error(r#"{"error": "boom"}"#).unwrap(),
            "JSON top-level error: boom"
        );
        assert_eq!(
            structural_error(r#"{"exit_code": " 3 "}"#).unwrap(),
            "Non-zero exit_code:  3 "
        );
        assert_eq!(
            structural_error(r#"{"exit_code": 0, "returncode": 1.5}"#).unwrap(),
            "Non-zero returncode: 1.5"
        );
        assert_eq!(
            structural_error(r#"{"exit_code": true}"#).unwrap(),
            "Non-zero exit_code: True"
        );
        assert!(structural_error(r#"{"exit_code": "x"}"#).is_none());
        assert_eq!(
            structural_error(r#"[{"text": "{\"error\": 1}"}]"#).unwrap(),
            "JSON top-level error: 1"
        );
        assert_eq!(
            structural_error("  Error: nope").unwrap(),
            "Response starts with 'Error:'"
        );
        assert!(structural_error("Errors: nope").is_none());
        assert_eq!(
            structural_error("a <tool_use_error>x</tool_use_error>").unwrap(),
            "<tool_use_error> tag present"
        );
        assert!(structural_error(r#"{"status": "ok"}"#).is_none());
    }

    /// The rules as first written, on a full `Value` parse: the one-pass reading must agree with them.
    mod reference {
        use super::super::{COUNT_KEYS, ERROR_PREFIXES, EXIT_KEYS, equals_zero};
        use crate::compat::value::{py_int, py_str, py_strip, py_truthy};
        use serde_json::Value;

        pub(super) fn is_empty_result(result: &str) -> bool {
            let r = py_strip(result);
            if matches!(r, "" | "[]" | "{}" | "null" | "None") {
                return true;
            }
            match serde_json::from_str::<Value>(r) {
                Ok(Value::Array(items)) => items.is_empty(),
                Ok(Value::Object(map)) => {
                    for key in COUNT_KEYS {
                        if let Some(v) = map.get(key) {
                            return equals_zero(v);
                        }
                    }
                    let mut lists = map.values().filter_map(Value::as_array).peekable();
                    lists.peek().is_some() && lists.all(Vec::is_empty)
                }
                _ => false,
            }
        }

        pub(super) fn structural_error(result: &str) -> Option<String> {
            let text = py_strip(result);
            if text.is_empty() {
                return None;
            }
            let object = |t: &str| match serde_json::from_str(t) {
                Ok(Value::Object(map)) => Some(map),
                _ => None,
            };
            let candidates: Vec<serde_json::Map<String, Value>> =
                if text.starts_with('{') && text.ends_with('}') {
                    object(text).into_iter().collect()
                } else if text.starts_with('[') && text.ends_with(']') {
                    match serde_json::from_str::<Value>(text) {
                        Ok(Value::Array(items)) => items
                            .iter()
                            .filter_map(|i| i.get("text").and_then(Value::as_str))
                            .map(py_strip)
                            .filter(|t| t.starts_with('{') && t.ends_with('}'))
                            .filter_map(object)
                            .collect(),
                        _ => Vec::new(),
                    }
                } else {
                    Vec::new()
                };
            for c in &candidates {
                if let Some(err) = c.get("error").filter(|e| py_truthy(e)) {
                    let desc: String = py_str(err).chars().take(80).collect();
                    return Some(format!("JSON top-level error: {desc}"));
                }
                for key in EXIT_KEYS {
                    if let Some(v) = c.get(key)
                        && let Some(code) = py_int(v)
                        && code != 0
                    {
                        return Some(format!("Non-zero {key}: {}", py_str(v)));
                    }
                }
            }
            if text.contains("<tool_use_error>") && text.contains("</tool_use_error>") {
                return Some("<tool_use_error> tag present".into());
            }
            ERROR_PREFIXES
                .iter()
                .find(|p| text.starts_with(*p))
                .map(|p| format!("Response starts with '{p}'"))
        }
    }

    #[test]
    fn one_pass_agrees_with_a_full_parse() {
        let cases = [
            r#"{"hits": [], "hits": [1]}"#,
            r#"{"hits": [1], "hits": []}"#,
            r#"{"a": [], "b": {"c": [1]}, "d": "x"}"#,
            r#"{"count": [], "x": []}"#,
            r#"{"error": {"code": 3, "msg": [1, 2.5, null]}}"#,
            r#"{"error": "", "exit_code": 0, "exit_code": 2}"#,
            r#"{"error": "x", "error": false}"#,
            r#"{"total": 0.0}"#,
            r#"{"total": -0}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": [1, 2,]}"#,
            r#"{"a\u0062": [], "ab": [3]}"#,
            r#"[{"text": " {\"error\": \"boom\"} "}, {"text": 3}, [1], "x"]"#,
            r#"[{"text": "{\"x\": 1}", "text": "{\"exit_status\": 7}"}]"#,
            r#"[{"text": "{\"error\": 1}", "text": 5}]"#,
            r#"[{"text": "{\"a\": \"\\ud800\"}"}]"#,
            r#"[{"type": "text", "text": "Error: no"}]"#,
            r#"[]"#,
            r#"[[]]"#,
            r#"{"a": [[]], "b": []}"#,
            "{\"k\": [] }\u{a0}",
            r#"{"n_results": null, "hits": []}"#,
            r#"{}x"#,
            r#"{"a": 1} {"b": 2}"#,
            "Error: x",
            "plain text",
        ];
        let mut deep = "[".repeat(200);
        deep.push_str(&"]".repeat(200));
        let many: String = format!(
            "{{{}, \"k0\": []}}",
            (0..40)
                .map(|i| format!("\"k{i}\": [{i}]"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for case in cases.iter().copied().chain([deep.as_str(), many.as_str()]) {
            let (error, empty) = (
                reference::structural_error(case),
                reference::is_empty_result(case),
            );
            assert_eq!(is_empty_result(case), empty, "empty: {case}");
            assert_eq!(structural_error(case), error, "error: {case}");
            assert_eq!(result_signals(case), (error, empty), "both: {case}");
        }
    }
}
