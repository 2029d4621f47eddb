//! JSON parsing shared by every format reader: simd-json tapes over per-thread buffers, converted to
//! `serde_json::Value` only for the pieces a reader keeps.

use serde_json::{Map, Number, Value};
use simd_json::StaticNode;
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

/// Where and why a document failed to parse.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseFailure {
    pub offset: usize,
    pub message: String,
}

/// Bytes of padding simd-json needs after a document it parses in place.
pub(crate) const PADDING: usize = simd_json::INPUT_PADDING;

/// Parses `bytes` (copied once: simd-json rewrites its input) and hands the tape's root to `read`.
pub(crate) fn with_tape<T>(
    bytes: &[u8],
    read: impl FnOnce(TapeValue<'_, '_>) -> T,
) -> Result<T, ParseFailure> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    // Nothing but whitespace (a whitespace bomb) fails without being copied.
    if bytes
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        return Err(describe_failure(bytes));
    }
    SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        let mut read = Some(read);
        // The copy carries simd-json's padding, so simd-json does not copy the document again.
        let mut attempt = |scratch: &mut Vec<u8>, doc: &[u8]| {
            scratch.clear();
            scratch.reserve_exact(doc.len() + PADDING);
            scratch.extend_from_slice(doc);
            scratch.resize(doc.len() + PADDING, b' ');
            with_buffers(doc.len(), |buffers| {
                let mut tape = simd_json::Tape::null();
                simd_json::fill_tape_padded(scratch, doc.len(), buffers, &mut tape)
                    .ok()
                    .map(|()| (read.take().expect("read once"))(tape.as_value()))
            })
        };
        // simd-json refuses some JSON Python reads (see `repair`): retry this document alone,
        // rewritten, so the common case pays nothing.
        let outcome = match attempt(&mut scratch, bytes) {
            Some(value) => Some(value),
            None => repair(bytes).and_then(|fixed| attempt(&mut scratch, &fixed)),
        };
        // A one-off huge document does not keep its copy for the thread's lifetime.
        if scratch.capacity() > KEEP_SCRATCH {
            *scratch = Vec::new();
        }
        outcome.ok_or_else(|| describe_failure(bytes))
    })
}

/// Rewrites what Python's `json` reads but simd-json refuses, so the document parses with the values
/// 0.4.1 reads: a number that does not fit 64 bits (an integer of any size, `1e999`) and the literals
/// `NaN`, `Infinity` and `-Infinity` become strings of their literal text (ids then read as text, and
/// the readers of numbers parse the text: `1e999` is infinity as in Python), and a lone UTF-16
/// surrogate escape (`\ud800`) becomes U+FFFD (a Rust string cannot hold it). `None` when there is
/// nothing to rewrite (the document is invalid for another reason).
pub(crate) fn repair(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            let end = repair_string(bytes, i, &mut out, &mut changed)?;
            i = end;
        } else if b == b'-' || b.is_ascii_digit() || b == b'N' || b == b'I' {
            let start = i;
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'.' | b'+' | b'-'))
            {
                i += 1;
            }
            let token = &bytes[start..i];
            if number_fits(token) {
                out.extend_from_slice(token);
            } else if is_python_number(token) {
                out.push(b'"');
                out.extend_from_slice(token);
                out.push(b'"');
                changed = true;
            } else {
                return None;
            }
        } else {
            out.push(b);
            i += 1;
        }
    }
    changed.then_some(out)
}

/// Copies the string starting at `bytes[start]` (a quote), replacing lone surrogate escapes; returns
/// the index after its closing quote.
fn repair_string(
    bytes: &[u8],
    start: usize,
    out: &mut Vec<u8>,
    changed: &mut bool,
) -> Option<usize> {
    out.push(b'"');
    let mut i = start + 1;
    loop {
        let b = *bytes.get(i)?;
        match b {
            b'"' => {
                out.push(b'"');
                return Some(i + 1);
            }
            b'\\' => {
                let kind = *bytes.get(i + 1)?;
                if kind != b'u' {
                    out.extend_from_slice(&bytes[i..i + 2]);
                    i += 2;
                    continue;
                }
                let unit = hex4(bytes.get(i + 2..i + 6)?)?;
                let pair = (0xD800..0xDC00).contains(&unit)
                    && bytes.get(i + 6..i + 8) == Some(b"\\u")
                    && bytes
                        .get(i + 8..i + 12)
                        .and_then(hex4)
                        .is_some_and(|low| (0xDC00..0xE000).contains(&low));
                if pair {
                    out.extend_from_slice(&bytes[i..i + 12]);
                    i += 12;
                } else if (0xD800..0xE000).contains(&unit) {
                    out.extend_from_slice(b"\\ufffd");
                    *changed = true;
                    i += 6;
                } else {
                    out.extend_from_slice(&bytes[i..i + 6]);
                    i += 6;
                }
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// Returns true if and only if simd-json reads the number token as it is: an integer within 64 bits,
/// or a finite float.
fn number_fits(token: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(token) else {
        return false;
    };
    if token.iter().all(|b| b.is_ascii_digit() || *b == b'-') {
        return text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok();
    }
    text.parse::<f64>().is_ok_and(f64::is_finite) && !text.contains(['N', 'I', 'n', 'i'])
}

/// Returns true if and only if Python's `json` reads the token as a number: JSON's number grammar
/// (any size), or `NaN`, `Infinity`, `-Infinity`.
fn is_python_number(token: &[u8]) -> bool {
    if matches!(token, b"NaN" | b"Infinity" | b"-Infinity") {
        return true;
    }
    let digits = |s: &[u8]| -> usize { s.iter().take_while(|b| b.is_ascii_digit()).count() };
    let mut i = usize::from(token.first() == Some(&b'-'));
    let int = digits(&token[i..]);
    if int == 0 || (int > 1 && token[i] == b'0') {
        return false;
    }
    i += int;
    if token.get(i) == Some(&b'.') {
        let frac = digits(&token[i + 1..]);
        if frac == 0 {
            return false;
        }
        i += 1 + frac;
    }
    if matches!(token.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(token.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp = digits(&token[i..]);
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == token.len()
}

/// Scratch buffers larger than this are released after use.
const KEEP_SCRATCH: usize = 64 << 20;

/// Runs `f` with this thread's simd-json buffers (structural index, string buffer, stack) for parsing
/// documents of up to `len` bytes.
pub(crate) fn with_buffers<T>(len: usize, f: impl FnOnce(&mut simd_json::Buffers) -> T) -> T {
    thread_local! {
        static BUFFERS: std::cell::RefCell<simd_json::Buffers> =
            std::cell::RefCell::new(simd_json::Buffers::default());
    }
    BUFFERS.with(|cell| {
        let mut buffers = cell.borrow_mut();
        let out = f(&mut buffers);
        // Released after a huge document, as the scratch copy is.
        if len > KEEP_SCRATCH {
            *buffers = simd_json::Buffers::default();
        }
        out
    })
}

/// A readable message for a document simd-json rejected, from serde_json's error (line and column),
/// turned into a byte offset.
fn describe_failure(bytes: &[u8]) -> ParseFailure {
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Err(err) => {
            let offset = byte_offset(bytes, err.line(), err.column());
            ParseFailure {
                offset,
                message: err.to_string(),
            }
        }
        Ok(_) => ParseFailure {
            offset: 0,
            message: "invalid JSON".to_string(),
        },
    }
}

fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    if line == 0 {
        return 0;
    }
    let mut line_start = 0;
    for _ in 1..line {
        match memchr_newline(&bytes[line_start..]) {
            Some(pos) => line_start += pos + 1,
            None => break,
        }
    }
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Converts a tape value to an owned JSON value, keeping key order (a repeated key keeps its first position
/// and its last value, like Python's `json`).
pub(crate) fn to_value(v: TapeValue<'_, '_>) -> Value {
    if let Some(s) = v.as_str() {
        return Value::String(s.to_owned());
    }
    if let Some(arr) = v.as_array() {
        return Value::Array(arr.iter().map(to_value).collect());
    }
    if let Some(obj) = v.as_object() {
        let mut map = Map::with_capacity(obj.len());
        for (k, item) in &obj {
            map.insert(k.to_owned(), to_value(item));
        }
        return Value::Object(map);
    }
    if let Some(b) = v.as_bool() {
        return Value::Bool(b);
    }
    if v.is_i64() {
        return v.as_i64().map_or(Value::Null, |i| Value::Number(i.into()));
    }
    if v.is_u64() {
        return v.as_u64().map_or(Value::Null, |u| Value::Number(u.into()));
    }
    match v.as_f64() {
        Some(f) => static_to_value(StaticNode::F64(f)),
        None => Value::Null,
    }
}

/// A scalar tape node as a JSON value (floats stay floats, integers stay integers).
pub(crate) fn static_to_value(node: StaticNode) -> Value {
    match node {
        StaticNode::I64(i) => Value::Number(i.into()),
        StaticNode::U64(u) => Value::Number(u.into()),
        StaticNode::F64(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        StaticNode::Bool(b) => Value::Bool(b),
        StaticNode::Null => Value::Null,
    }
}

/// The last value stored under `key` in an object (Python keeps the last of repeated keys).
pub(crate) fn get<'t, 'i>(
    obj: &simd_json::tape::Object<'t, 'i>,
    key: &str,
) -> Option<TapeValue<'t, 'i>> {
    let mut found = None;
    for (k, v) in obj {
        if k == key {
            found = Some(v);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_ints_and_floats() {
        let v = with_tape(br#"{"b": 1, "a": 2.0, "c": [true, null, "x"]}"#, to_value).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"b":1,"a":2.0,"c":[true,null,"x"]}"#
        );
    }

    #[test]
    fn whitespace_only_fails_at_its_end_as_a_parse_would() {
        let err = with_tape(b"  \n \t\r\n  ", to_value).unwrap_err();
        assert_eq!(err.offset, 8);
        assert!(
            err.message.starts_with("EOF while parsing a value"),
            "{}",
            err.message
        );
        // Whitespace around a document is still read.
        assert_eq!(with_tape(b"  1  ", to_value).unwrap(), serde_json::json!(1));
    }

    #[test]
    fn failure_names_the_byte() {
        let err = with_tape(b"{\n \"a\": 1,\n \"b\" 2}", to_value).unwrap_err();
        assert_eq!(err.offset, 16);
        assert_eq!(err.message, "expected `:` at line 3 column 6");
    }

    /// Each is JSON Python's `json` reads and simd-json refuses; each must now read, with ids as text.
    #[test]
    fn reads_what_python_reads() {
        let cases = [
            (
                r#"{"a": 18446744073709551616}"#,
                r#"{"a":"18446744073709551616"}"#,
            ),
            (
                r#"{"id": -123456789012345678901234567890123456789012345678901234567890}"#,
                r#"{"id":"-123456789012345678901234567890123456789012345678901234567890"}"#,
            ),
            (r#"[1e999, -1E+999, 2.5]"#, r#"["1e999","-1E+999",2.5]"#),
            (
                r#"[NaN, Infinity, -Infinity]"#,
                r#"["NaN","Infinity","-Infinity"]"#,
            ),
            (
                r#"{"s": "a\ud800b", "k": "\udc00"}"#,
                r#"{"s":"a�b","k":"�"}"#,
            ),
            (
                r#"{"pair": "\ud83d\ude00", "x": 1e999}"#,
                r#"{"pair":"😀","x":"1e999"}"#,
            ),
            (
                r#"{"doubleValue": 0, "big": 9223372036854775808}"#,
                r#"{"doubleValue":0,"big":9223372036854775808}"#,
            ),
        ];
        for (text, want) in cases {
            let v =
                with_tape(text.as_bytes(), to_value).unwrap_or_else(|f| panic!("{text}: {f:?}"));
            assert_eq!(serde_json::to_string(&v).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn repair_leaves_invalid_json_invalid_and_strings_alone() {
        for text in [
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": -}"#,
            r#"{"a": nan}"#,
            r#"{"a": 1e}"#,
        ] {
            assert!(with_tape(text.as_bytes(), to_value).is_err(), "{text}");
        }
        // Numbers and escapes inside strings are text, never rewritten.
        assert_eq!(repair(br#"{"a": "1e999 \\ud800 NaN"}"#), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// JSON-ish text from tokens that stress the rewrite: numbers of every size, Python's
        /// literals, escapes (lone and paired surrogates), brackets and separators in any order.
        fn jsonish() -> impl Strategy<Value = String> {
            let token = prop::sample::select(vec![
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                " ",
                "\"k\"",
                "\"\\ud800\"",
                "\"\\ud83d\\ude00\"",
                "\"\\u00e9\"",
                "\"\\\"\"",
                "1",
                "-0",
                "1.5e3",
                "1e999",
                "-1E+999",
                "18446744073709551616",
                "123456789012345678901234567890",
                "NaN",
                "Infinity",
                "-Infinity",
                "true",
                "null",
                "01",
                "1.",
                "\"",
                "\\",
            ]);
            prop::collection::vec(token, 0..24).prop_map(|t| t.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(3000))]

            /// Whatever the text, reading it never panics, and the rewrite never turns text serde
            /// refuses for a reason other than those it rewrites into a document.
            #[test]
            fn reading_never_panics_and_accepts_what_serde_accepts(text in jsonish()) {
                let read = with_tape(text.as_bytes(), to_value);
                // serde_json accepts everything simd-json does bar big numbers (as floats):
                // what serde reads without them, we read too.
                let plain = !text.contains("e999") && !text.contains("E+999") && !text.contains("ud800");
                if plain && serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                    prop_assert!(read.is_ok(), "{text:?}: {read:?}");
                }
            }
        }
    }
}
