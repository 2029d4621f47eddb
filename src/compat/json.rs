//! JSON text the way faultgate 0.4.1 writes it (Python's `json.dumps`), as a `serde_json` formatter.
//!
//! Reports, bands and audit files are written with one-space indentation and ASCII escapes; tool
//! payloads are re-serialised with spaced separators and literal non-ASCII, and fingerprints with
//! sorted keys and compact separators. Every form must match the reference bytes, including Python's
//! float repr (`21450.0`, `1e-05`).
//!
//! [`PyFormatter`] only decides the bytes, so anything that implements `Serialize` (a
//! `serde_json::Value` or a typed report struct) streams straight into these layouts.

use std::io;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::ser::Formatter;

use super::fmt::write_float_repr;

/// A report file: `json.dumps(v, indent=1)` with ASCII escapes, no trailing newline.
///
/// # Panics
///
/// Only if `value`'s `Serialize` implementation fails (a map with keys that are not strings or
/// numbers), which no type in faultgate does.
pub(crate) fn to_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    to_string(value, PyFormatter::PRETTY)
}

/// As [`to_pretty`], written to `out` as it is serialised.
///
/// # Errors
///
/// `out` fails, or `value`'s `Serialize` implementation does (an error it reports as a custom one).
pub(crate) fn to_pretty_writer<T: Serialize + ?Sized>(
    value: &T,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, PyFormatter::PRETTY);
    value.serialize(&mut serializer).map_err(io::Error::from)?;
    io::Write::flush(&mut out)
}

/// Appends `value` as [`to_pretty`] writes it at the top level: for writers that lay out a
/// document's many repeated entries themselves, around scalars written exactly as the rest of the
/// document writes them.
///
/// # Panics
///
/// As [`to_pretty`].
pub(crate) fn push_pretty<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let mut serializer = serde_json::Serializer::with_formatter(out, PyFormatter::PRETTY);
    value
        .serialize(&mut serializer)
        .expect("faultgate's values serialise to JSON");
}

/// As [`push_pretty`] for a string. Most ids and reasons are printable ASCII without a quote or a
/// backslash, which need no escape at all: they skip the serialiser.
pub(crate) fn push_pretty_str(out: &mut Vec<u8>, value: &str) {
    if value
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    } else {
        push_pretty(out, value);
    }
}

/// `json.dumps(v, ensure_ascii=False)`: separators `, ` and `: `, keys in input order.
pub(crate) fn dumps_spaced<T: Serialize + ?Sized>(value: &T) -> String {
    to_string(value, PyFormatter::SPACED)
}

/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`: keys sorted by code point
/// at every level.
pub(crate) fn dumps_sorted_compact(value: &Value) -> String {
    to_string(&Sorted(value), PyFormatter::SORTED_COMPACT)
}

fn to_string<T: Serialize + ?Sized>(value: &T, formatter: PyFormatter) -> String {
    let mut out = Vec::with_capacity(128);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut serializer)
        .expect("faultgate's values serialise to JSON");
    String::from_utf8(out).expect("the formatter writes UTF-8 only")
}

/// A JSON value serialised with the keys of every object sorted (Python's `sort_keys=True`); needed
/// because `serde_json`'s maps keep insertion order in this crate.
struct Sorted<'a>(&'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Sorted(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                // Rust orders strings by UTF-8 bytes, which is code point order, as Python's sort is.
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &Sorted(value))?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

/// The bytes of Python's `json.dumps` for the knobs faultgate uses: indentation, separators and ASCII
/// escaping. Floats are written in Python's repr form.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyFormatter {
    /// Spaces per nesting level; `None` writes everything on one line.
    indent: Option<usize>,
    item_separator: &'static str,
    key_separator: &'static str,
    /// Escapes every character outside printable ASCII as `\uXXXX` (lowercase hex, astral characters
    /// as surrogate pairs); otherwise only `"`, `\` and control characters are escaped.
    ascii: bool,
    depth: usize,
    /// Whether the container being written holds anything (an empty one closes on the same line).
    has_value: bool,
}

impl PyFormatter {
    /// `indent=1` (separators `,` and `: `), ASCII escapes: reports, bands, audit files.
    pub(crate) const PRETTY: Self = Self::new(Some(1), ",", ": ", true);
    /// The default separators `, ` and `: ` on one line, non-ASCII kept: tool payloads as text.
    pub(crate) const SPACED: Self = Self::new(None, ", ", ": ", false);
    /// Separators `,` and `:` on one line, non-ASCII kept (fingerprints, with sorted keys).
    pub(crate) const SORTED_COMPACT: Self = Self::new(None, ",", ":", false);

    const fn new(
        indent: Option<usize>,
        item_separator: &'static str,
        key_separator: &'static str,
        ascii: bool,
    ) -> Self {
        Self {
            indent,
            item_separator,
            key_separator,
            ascii,
            depth: 0,
            has_value: false,
        }
    }

    fn open<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(writer)?;
        }
        writer.write_all(bracket)
    }

    /// The separator before an item (unless it is the first), then its line break and indentation.
    fn item_start<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if !first {
            writer.write_all(self.item_separator.as_bytes())?;
        }
        self.newline(writer)
    }

    fn newline<W: ?Sized + io::Write>(&self, writer: &mut W) -> io::Result<()> {
        const SPACES: [u8; 64] = [b' '; 64];
        if let Some(indent) = self.indent {
            writer.write_all(b"\n")?;
            let mut left = indent * self.depth;
            while left > 0 {
                let n = left.min(SPACES.len());
                writer.write_all(&SPACES[..n])?;
                left -= n;
            }
        }
        Ok(())
    }
}

impl Formatter for PyFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        let mut text = String::with_capacity(24);
        write_float_repr(value, &mut text);
        writer.write_all(text.as_bytes())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if !self.ascii {
            return writer.write_all(fragment.as_bytes());
        }
        // serde_json has already escaped `"`, `\` and the control characters; what is left to escape
        // is DEL and everything beyond ASCII.
        let mut clean_from = 0;
        for (i, c) in fragment.char_indices() {
            if c < '\u{7f}' {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[clean_from..i])?;
            clean_from = i + c.len_utf8();
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
        }
        writer.write_all(&fragment.as_bytes()[clean_from..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item_start(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item_start(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(self.key_separator.as_bytes())
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_that_skip_the_serialiser_have_its_bytes() {
        let strings = [
            "",
            "trace-0001",
            "plain words, with / and ~",
            "quote \" inside",
            "back\\slash",
            "tab\tand\nnewline",
            "del \u{7f}",
            "caf\u{e9}",
            "emoji \u{1F600}",
            "\u{1}",
        ];
        for text in strings {
            let (mut fast, mut serialised) = (Vec::new(), Vec::new());
            push_pretty_str(&mut fast, text);
            push_pretty(&mut serialised, text);
            assert_eq!(fast, serialised, "{text:?}");
        }
    }

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
            assert_eq!(to_pretty(&x), expected, "json.dumps({x:e})");
            assert_eq!(dumps_spaced(&[x]), format!("[{expected}]"));
        }
    }

    #[test]
    fn pretty_layout() {
        let v = json!({"a": [1, {"b": []}], "c": {}});
        assert_eq!(
            to_pretty(&v),
            "{\n \"a\": [\n  1,\n  {\n   \"b\": []\n  }\n ],\n \"c\": {}\n}"
        );
        // Deeper than one write of indentation.
        let levels = 70;
        let mut nested = json!(1);
        let mut expected = format!("\n{}1", " ".repeat(levels));
        for depth in (0..levels).rev() {
            nested = json!([nested]);
            let open = if depth == 0 {
                String::from("[")
            } else {
                format!("\n{}[", " ".repeat(depth))
            };
            expected = format!("{open}{expected}\n{}]", " ".repeat(depth));
        }
        assert_eq!(to_pretty(&nested), expected);
    }

    #[test]
    fn string_escapes() {
        let text = "é\u{1F600}\u{7f}\u{2028}\0\"\\\u{8}\u{c}\n\r\t\u{1f}";
        assert_eq!(
            to_pretty(text),
            "\"\\u00e9\\ud83d\\ude00\\u007f\\u2028\\u0000\\\"\\\\\\b\\f\\n\\r\\t\\u001f\""
        );
        assert_eq!(
            dumps_spaced(text),
            "\"é\u{1F600}\u{7f}\u{2028}\\u0000\\\"\\\\\\b\\f\\n\\r\\t\\u001f\""
        );
        // Keys are escaped the same way.
        assert_eq!(to_pretty(&json!({"é": 1})), "{\n \"\\u00e9\": 1\n}");
    }

    #[test]
    fn sorted_keys_at_every_level() {
        let v = json!({"b": [{"z": 1, "a": 2}], "a": {"é": null, "e": true}});
        assert_eq!(
            dumps_sorted_compact(&v),
            "{\"a\":{\"e\":true,\"é\":null},\"b\":[{\"a\":2,\"z\":1}]}"
        );
    }

    include!("testdata/json_cases.rs");
}
