//! Flat JSON objects read member by member from their text, without a parser.
//!
//! Tool arguments and tool results are mostly small objects of plain values, read for a few facts
//! (the repeated-call check's canonical form, the signals of a result). Building a JSON value for each
//! cost more than the rest of the reading, so both read such objects from their text here and leave
//! anything else to a full parse: each reader says which values it takes, and only has to be right
//! about those.

/// Walks `text` when it is one object and nothing else (no whitespace after it), calling `member` with
/// each key and its value's text, in order. `value_end` gives where a value starting at a byte ends,
/// or `None` for a value its reader leaves to a parse. Keys are strings without escapes or control
/// chars. `None` when the text is anything else, when `value_end` refuses a value, or when `member`
/// gives `None`.
pub(crate) fn members<'t>(
    text: &'t str,
    value_end: impl Fn(&str, usize) -> Option<usize>,
    mut member: impl FnMut(&'t str, &'t str) -> Option<()>,
) -> Option<()> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut at = skip_space(bytes, 1);
    if bytes.get(at) == Some(&b'}') {
        return (at + 1 == bytes.len()).then_some(());
    }
    loop {
        let (key, after_key) = plain_string(text, at)?;
        at = skip_space(bytes, after_key);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, at + 1);
        let end = value_end(text, start)?;
        member(key, &text[start..end])?;
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') if at + 1 == bytes.len() => return Some(()),
            _ => return None,
        }
    }
}

/// Past JSON's whitespace from `at`.
pub(crate) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// A string at `at` with no escape and no control char: its contents, and where it ends.
pub(crate) fn plain_string(text: &str, at: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let len = bytes[at + 1..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    let end = at + 1 + len;
    (bytes[end] == b'"').then(|| (&text[at + 1..end], end + 1))
}

/// Where `null`, `true` or `false` at `at` ends.
pub(crate) fn literal_end(bytes: &[u8], at: usize) -> Option<usize> {
    ["null", "true", "false"]
        .iter()
        .find(|literal| bytes[at..].starts_with(literal.as_bytes()))
        .map(|literal| at + literal.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Vec<(&str, &str)>> {
        let mut found = Vec::new();
        members(
            text,
            |t, at| plain_string(t, at).map(|(_, end)| end),
            |key, value| {
                found.push((key, value));
                Some(())
            },
        )?;
        Some(found)
    }

    #[test]
    fn members_come_in_order_with_their_texts() {
        assert_eq!(
            read(r#"{ "a" : "x" ,"b":"", "a":"y"}"#),
            Some(vec![("a", r#""x""#), ("b", r#""""#), ("a", r#""y""#)])
        );
        assert_eq!(read("{ }"), Some(vec![]));
        for text in [
            r#"{"a": 1}"#,
            r#"{"a": "x"} "#,
            r#"{"a": "x",}"#,
            r#"{"a\"": "x"}"#,
            r#"{"a" "x"}"#,
            r#"["x"]"#,
            "{",
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }
}
