//! JSON text the way faultgate 0.4.1 writes it (Python's `json.dumps`).
//!
//! Reports, bands and audit files are written with one-space indentation and ASCII escapes; tool
//! payloads are re-serialised with spaced separators and literal non-ASCII, and fingerprints with
//! sorted keys and compact separators. Every form must match the reference bytes, including Python's
//! float repr (`21450.0`, `1e-05`) and its `NaN`/`Infinity` literals.

use std::fmt::Write as _;

use serde_json::Value;

use super::fmt::write_float_repr;

/// A report file: `json.dumps(v, indent=1)` with ASCII escapes, no trailing newline.
pub fn to_pretty(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &PRETTY, 0, &mut out);
    out
}

/// Writes [`to_pretty`] of `v` to `writer`, for callers that stream a report to a file.
pub fn to_pretty_with<W: std::io::Write>(v: &Value, writer: &mut W) -> std::io::Result<()> {
    writer.write_all(to_pretty(v).as_bytes())
}

/// `json.dumps(v, ensure_ascii=False)`: separators `, ` and `: `, keys in input order.
pub fn dumps_spaced(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &SPACED, 0, &mut out);
    out
}

/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`: keys sorted by code point
/// at every level.
pub fn dumps_sorted_compact(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &SORTED_COMPACT, 0, &mut out);
    out
}

/// A float as Python's `json` writes it: repr digits for finite values (`1.0`, `1e+16`), and `NaN`,
/// `Infinity` or `-Infinity` otherwise (which `serde_json::Value` cannot hold).
pub fn float_json(f: f64) -> String {
    let mut out = String::with_capacity(24);
    write_float_json(f, &mut out);
    out
}

/// Appends [`float_json`] of `f` to `out`.
pub fn write_float_json(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        write_float_repr(f, out);
    }
}

/// Appends a JSON string literal the way Python's `json` encodes it. With `ascii`, every character
/// outside printable ASCII is escaped as `\uXXXX` (lowercase hex, astral characters as surrogate pairs);
/// without it only `"`, `\` and control characters are escaped.
pub fn write_json_string(s: &str, ascii: bool, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut clean_from = 0;
    for (i, c) in s.char_indices() {
        let needs_escape = match c {
            '"' | '\\' | '\0'..='\u{1f}' => true,
            '\u{7f}'.. => ascii,
            _ => false,
        };
        if !needs_escape {
            continue;
        }
        out.push_str(&s[clean_from..i]);
        clean_from = i + c.len_utf8();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push_str(&s[clean_from..]);
    out.push('"');
}

/// The knobs of `json.dumps` that faultgate uses.
struct Layout {
    /// Spaces per nesting level; `None` writes everything on one line.
    indent: Option<usize>,
    item_separator: &'static str,
    key_separator: &'static str,
    ascii: bool,
    sort_keys: bool,
}

const PRETTY: Layout = Layout {
    indent: Some(1),
    item_separator: ",",
    key_separator: ": ",
    ascii: true,
    sort_keys: false,
};

const SPACED: Layout = Layout {
    indent: None,
    item_separator: ", ",
    key_separator: ": ",
    ascii: false,
    sort_keys: false,
};

const SORTED_COMPACT: Layout = Layout {
    indent: None,
    item_separator: ",",
    key_separator: ":",
    ascii: false,
    sort_keys: true,
};

fn write_value(v: &Value, layout: &Layout, depth: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else {
                write_float_json(n.as_f64().unwrap_or(f64::NAN), out);
            }
        }
        Value::String(s) => write_json_string(s, layout.ascii, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                write_item_start(layout, i, depth + 1, out);
                write_value(item, layout, depth + 1, out);
            }
            write_newline(layout, depth, out);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            if layout.sort_keys {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                // Rust orders strings by UTF-8 bytes, which is code point order, as Python's sort is.
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                write_entries(entries.into_iter(), layout, depth, out);
            } else {
                write_entries(map.iter(), layout, depth, out);
            }
            write_newline(layout, depth, out);
            out.push('}');
        }
    }
}

fn write_entries<'a>(
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
    layout: &Layout,
    depth: usize,
    out: &mut String,
) {
    for (i, (key, item)) in entries.enumerate() {
        write_item_start(layout, i, depth + 1, out);
        write_json_string(key, layout.ascii, out);
        out.push_str(layout.key_separator);
        write_value(item, layout, depth + 1, out);
    }
}

/// The separator before the item at `index` of a container, then its line break and indentation.
fn write_item_start(layout: &Layout, index: usize, depth: usize, out: &mut String) {
    if index > 0 {
        out.push_str(layout.item_separator);
    }
    write_newline(layout, depth, out);
}

fn write_newline(layout: &Layout, depth: usize, out: &mut String) {
    if let Some(indent) = layout.indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', indent * depth));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_match_python() {
        for &(input, pretty, spaced, sorted) in DUMPS_CASES {
            let v: Value = serde_json::from_str(input).expect("test input is valid JSON");
            assert_eq!(to_pretty(&v), pretty, "indent=1 of {input}");
            assert_eq!(dumps_spaced(&v), spaced, "ensure_ascii=False of {input}");
            assert_eq!(
                dumps_sorted_compact(&v),
                sorted,
                "sorted compact of {input}"
            );
        }
    }

    #[test]
    fn floats_match_python_json() {
        for &(x, expected) in FLOAT_JSON_CASES {
            assert_eq!(float_json(x), expected, "json.dumps({x:e})");
        }
    }

    #[test]
    fn pretty_layout() {
        let v = json!({"a": [1, {"b": []}], "c": {}});
        assert_eq!(
            to_pretty(&v),
            "{\n \"a\": [\n  1,\n  {\n   \"b\": []\n  }\n ],\n \"c\": {}\n}"
        );
        let mut written = Vec::new();
        to_pretty_with(&v, &mut written).expect("writing to memory succeeds");
        assert_eq!(written, to_pretty(&v).into_bytes());
    }

    #[test]
    fn string_escapes() {
        let mut ascii = String::new();
        write_json_string("é\u{1F600}\u{7f}\u{2028}\0", true, &mut ascii);
        assert_eq!(ascii, "\"\\u00e9\\ud83d\\ude00\\u007f\\u2028\\u0000\"");
        let mut literal = String::new();
        write_json_string("é\u{1F600}\u{7f}\u{2028}\0", false, &mut literal);
        assert_eq!(literal, "\"é\u{1F600}\u{7f}\u{2028}\\u0000\"");
    }

    include!("testdata/json_cases.rs");
}
