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
pub const PADDING: usize = simd_json::INPUT_PADDING;

/// Parses `bytes` (copied once: simd-json rewrites its input) and hands the tape's root to `read`.
pub fn with_tape<T>(
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
        scratch.clear();
        // The copy carries simd-json's padding, so simd-json does not copy the document again.
        scratch.reserve_exact(bytes.len() + PADDING);
        scratch.extend_from_slice(bytes);
        scratch.resize(bytes.len() + PADDING, b' ');
        let outcome = with_buffers(bytes.len(), |buffers| {
            let mut tape = simd_json::Tape::null();
            simd_json::fill_tape_padded(&mut scratch, bytes.len(), buffers, &mut tape)
                .ok()
                .map(|()| read(tape.as_value()))
        });
        // A one-off huge document does not keep its copy for the thread's lifetime.
        if scratch.capacity() > KEEP_SCRATCH {
            *scratch = Vec::new();
        }
        outcome.ok_or_else(|| describe_failure(bytes))
    })
}

/// Scratch buffers larger than this are released after use.
const KEEP_SCRATCH: usize = 64 << 20;

/// Runs `f` with this thread's simd-json buffers (structural index, string buffer, stack) for parsing
/// documents of up to `len` bytes.
pub fn with_buffers<T>(len: usize, f: impl FnOnce(&mut simd_json::Buffers) -> T) -> T {
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
pub fn to_value(v: TapeValue<'_, '_>) -> Value {
    if let Some(s) = v.as_str() {
        return Value::String(s.to_owned());
    }
    if let Some(arr) = v.as_array() {
        return Value::Array(arr.iter().map(to_value).collect());
    }
    if let Some(obj) = v.as_object() {
        let mut map = Map::with_capacity(obj.len());
        for (k, item) in obj.iter() {
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
pub fn static_to_value(node: StaticNode) -> Value {
    match node {
        StaticNode::I64(i) => Value::Number(i.into()),
        StaticNode::U64(u) => Value::Number(u.into()),
        StaticNode::F64(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        StaticNode::Bool(b) => Value::Bool(b),
        StaticNode::Null => Value::Null,
    }
}

/// The last value stored under `key` in an object (Python keeps the last of repeated keys).
pub fn get<'t, 'i>(obj: &simd_json::tape::Object<'t, 'i>, key: &str) -> Option<TapeValue<'t, 'i>> {
    let mut found = None;
    for (k, v) in obj.iter() {
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
}
