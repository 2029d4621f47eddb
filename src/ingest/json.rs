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

/// Parses `bytes` (copied: simd-json rewrites its input) and hands the tape's root to `read`.
pub fn with_tape<T>(
    bytes: &[u8],
    read: impl FnOnce(TapeValue<'_, '_>) -> T,
) -> Result<T, ParseFailure> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<(Vec<u8>, simd_json::Buffers)> =
            std::cell::RefCell::new((Vec::new(), simd_json::Buffers::default()));
    }
    SCRATCH.with(|cell| {
        let mut guard = cell.borrow_mut();
        let (scratch, buffers) = &mut *guard;
        scratch.clear();
        scratch.extend_from_slice(bytes);
        match simd_json::to_tape_with_buffers(scratch, buffers) {
            Ok(tape) => Ok(read(tape.as_value())),
            Err(_) => Err(describe_failure(bytes)),
        }
    })
}

/// Parses `buffer` in place (simd-json rewrites it: the bytes are garbage afterwards) and hands the
/// tape's root to `read`; `None` when the bytes are not JSON.
pub fn with_tape_in_place<T>(
    buffer: &mut [u8],
    read: impl FnOnce(TapeValue<'_, '_>) -> T,
) -> Option<T> {
    thread_local! {
        static BUFFERS: std::cell::RefCell<simd_json::Buffers> =
            std::cell::RefCell::new(simd_json::Buffers::default());
    }
    BUFFERS.with(|cell| {
        let mut buffers = cell.borrow_mut();
        simd_json::to_tape_with_buffers(buffer, &mut buffers)
            .ok()
            .map(|tape| read(tape.as_value()))
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
    fn failure_names_the_byte() {
        let err = with_tape(b"{\n \"a\": 1,\n \"b\" 2}", to_value).unwrap_err();
        assert_eq!(err.offset, 16);
        assert_eq!(err.message, "expected `:` at line 3 column 6");
    }
}
