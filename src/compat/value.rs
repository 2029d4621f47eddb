//! Python read semantics of JSON values, as faultgate 0.4.1 reads traces, policies and judge replies.
//!
//! 0.4.1 strips text with `str.strip()`, tests values with Python truthiness, reads numbers with
//! `int()` and `float()` and turns non-string values into text with `str()` or `json.dumps()`. The
//! verdicts depend on these rules, so the domain code reads values through this module. Decimal digits
//! follow Python 3.11's Unicode 14.0 data (`compat/unicode.rs`).

use serde_json::Value;

use super::unicode;

/// `str()` of a value, as 0.4.1 reads a non-string field as text.
pub use super::fmt::py_str;
/// Python's `round(x, k)`, for the values 0.4.1 stores rounded (the gate's usage deltas).
pub use super::fmt::round_half_even;

/// `json.dumps(v)` of a value, as 0.4.1 turns a non-string payload into text: separators `, ` and
/// `: `, keys in input order, non-ASCII kept.
pub fn json_text(v: &Value) -> String {
    super::json::dumps_spaced(v)
}

/// `json.dumps(v, sort_keys=True, separators=(",", ":"))` of a value: the canonical text 0.4.1 compares
/// tool-call arguments by.
pub fn canonical_json(v: &Value) -> String {
    super::json::dumps_sorted_compact(v)
}

/// Python `str.strip()`: trims Unicode whitespace, including U+001C..U+001F.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Returns true if and only if Python's `str.isspace` holds for the character (bidirectional class
/// WS, B or S, or category Zs).
pub fn is_py_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// The whitespace Python's `int()` and `float()` skip around a number: like `str.isspace`, except
/// U+001C..U+001F, which these parsers leave in place (and then reject).
fn is_number_space(c: char) -> bool {
    is_py_space(c) && !('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python truthiness of a JSON value.
pub fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i != 0
            } else if let Some(u) = n.as_u64() {
                u != 0
            } else {
                n.as_f64().is_none_or(|f| f != 0.0)
            }
        }
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python `float(s)` on a string; `None` where Python raises ValueError. Accepts surrounding whitespace,
/// a sign, `_` between digits, an exponent, `inf`/`infinity`/`nan` in any case, and any Unicode decimal
/// digits. Out-of-range magnitudes become infinities or zeros, as in Python.
pub fn py_float_str(s: &str) -> Option<f64> {
    let text = number_ascii(s)?;
    let bytes = text.as_bytes();
    let unsigned = match bytes.first() {
        Some(b'+' | b'-') => &bytes[1..],
        _ => bytes,
    };
    let negative = bytes.first() == Some(&b'-');
    for word in [&b"inf"[..], b"infinity"] {
        if unsigned.eq_ignore_ascii_case(word) {
            return Some(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
    }
    if unsigned.eq_ignore_ascii_case(b"nan") {
        return Some(if negative { -f64::NAN } else { f64::NAN });
    }
    let mut pos = 0;
    let integer_digits = digit_part(unsigned, &mut pos)?;
    let mut fraction_digits = 0;
    if unsigned.get(pos) == Some(&b'.') {
        pos += 1;
        fraction_digits = digit_part(unsigned, &mut pos)?;
    }
    if integer_digits == 0 && fraction_digits == 0 {
        return None;
    }
    if matches!(unsigned.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(unsigned.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        if digit_part(unsigned, &mut pos)? == 0 {
            return None;
        }
    }
    if pos != unsigned.len() {
        return None;
    }
    // The grammar is checked; what is left is plain ASCII Rust parses with correct rounding.
    if text.contains('_') {
        text.replace('_', "").parse().ok()
    } else {
        text.parse().ok()
    }
}

/// Python `int(v)` on a JSON value; `None` where Python raises. Integers as is, floats truncated toward
/// zero (non-finite: `None`), booleans as 0 and 1, strings with optional surrounding whitespace, a sign
/// and `_` between digits (any Unicode decimal digits). Values beyond the i64 range, which Python would
/// still convert, are `None` here.
pub fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Some(i);
            }
            let f = n.as_f64()?.trunc();
            // The range check is on the float itself: 2^63 is exact, and every float below it fits.
            if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
                Some(f as i64)
            } else {
                None
            }
        }
        Value::String(s) => py_int_str(s),
        _ => None,
    }
}

/// Python `int(s)` on a string (base 10); `None` where Python raises or the value leaves the i64 range.
fn py_int_str(s: &str) -> Option<i64> {
    let text = number_ascii(s)?;
    let bytes = text.as_bytes();
    let (negative, unsigned) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let mut pos = 0;
    if digit_part(unsigned, &mut pos)? == 0 || pos != unsigned.len() {
        return None;
    }
    // Accumulating toward the sign keeps i64::MIN representable.
    let mut value: i64 = 0;
    for &b in unsigned.iter().filter(|&&b| b != b'_') {
        let digit = i64::from(b - b'0');
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(digit)?
        } else {
            value.checked_add(digit)?
        };
    }
    Some(value)
}

/// Strips number whitespace and maps every non-ASCII decimal digit to its ASCII digit, as CPython does
/// before parsing; `None` when a non-ASCII character is anything else.
fn number_ascii(s: &str) -> Option<std::borrow::Cow<'_, str>> {
    let trimmed = s.trim_matches(is_number_space);
    if trimmed.is_ascii() {
        return Some(std::borrow::Cow::Borrowed(trimmed));
    }
    let mut mapped = String::with_capacity(trimmed.len());
    for c in trimmed.chars() {
        if c.is_ascii() {
            mapped.push(c);
        } else {
            let digit = decimal_value(c)?;
            mapped.push(char::from(b'0' + digit));
        }
    }
    Some(std::borrow::Cow::Owned(mapped))
}

/// Reads `digit (["_"] digit)*` from `bytes` at `pos` and returns how many digits it read (0 when none
/// start there), or `None` when an underscore is not between two digits.
fn digit_part(bytes: &[u8], pos: &mut usize) -> Option<usize> {
    let mut count = 0;
    while let Some(&b) = bytes.get(*pos) {
        if b.is_ascii_digit() {
            count += 1;
            *pos += 1;
        } else if b == b'_' {
            let next_is_digit = bytes.get(*pos + 1).is_some_and(u8::is_ascii_digit);
            if count == 0 || !next_is_digit {
                return None;
            }
            *pos += 1;
        } else {
            break;
        }
    }
    Some(count)
}

/// The value of a Unicode decimal digit (general category Nd), as Python's `int()` reads it.
fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    let code = c as u32;
    let run = unicode::DECIMAL_ZEROS.partition_point(|&zero| zero <= code);
    let zero = *unicode::DECIMAL_ZEROS.get(run.checked_sub(1)?)?;
    u8::try_from(code - zero).ok().filter(|d| *d < 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::fmt::float_repr;
    use serde_json::json;

    #[test]
    fn float_parsing_matches_python() {
        for &(s, expected) in FLOAT_PARSE_CASES {
            let got = py_float_str(s).map(float_repr);
            assert_eq!(got.as_deref(), expected, "float({s:?})");
        }
    }

    #[test]
    fn int_parsing_matches_python() {
        for &(s, expected) in INT_PARSE_CASES {
            assert_eq!(py_int_str(s), expected, "int({s:?})");
            assert_eq!(py_int(&json!(s)), expected, "int({s:?}) as a JSON value");
        }
    }

    #[test]
    fn int_of_json_values() {
        assert_eq!(py_int(&json!(7)), Some(7));
        assert_eq!(py_int(&json!(-7.9)), Some(-7));
        assert_eq!(py_int(&json!(7.9)), Some(7));
        assert_eq!(py_int(&json!(1e300)), None);
        assert_eq!(py_int(&json!(-(2f64.powi(63)))), Some(i64::MIN));
        assert_eq!(py_int(&json!(2f64.powi(63))), None);
        assert_eq!(py_int(&json!(u64::MAX)), None);
        assert_eq!(py_int(&json!(true)), Some(1));
        assert_eq!(py_int(&json!(false)), Some(0));
        assert_eq!(py_int(&json!(null)), None);
        assert_eq!(py_int(&json!([1])), None);
        assert_eq!(py_int(&json!({"a": 1})), None);
    }

    #[test]
    fn truthiness() {
        for falsy in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(-0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert!(!py_truthy(&falsy), "{falsy}");
        }
        for truthy in [
            json!(true),
            json!(-1),
            json!(u64::MAX),
            json!(1e-300),
            json!(" "),
            json!([0]),
            json!({"": 0}),
        ] {
            assert!(py_truthy(&truthy), "{truthy}");
        }
    }

    #[test]
    fn whitespace_is_pythons_isspace() {
        let python_spaces: Vec<u32> = vec![
            0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000,
            0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
            0x2029, 0x202f, 0x205f, 0x3000,
        ];
        let ours: Vec<u32> = (0..0x11_0000u32)
            .filter_map(char::from_u32)
            .filter(|&c| is_py_space(c))
            .map(|c| c as u32)
            .collect();
        assert_eq!(ours, python_spaces);
        assert_eq!(py_strip("\u{85}\u{1c} a b \u{3000}\t"), "a b");
        assert_eq!(py_strip("\u{200b}x\u{200b}"), "\u{200b}x\u{200b}");
        assert_eq!(py_strip(""), "");
        assert_eq!(py_strip(" \n "), "");
    }

    #[test]
    fn decimal_digits() {
        assert_eq!(decimal_value('7'), Some(7));
        assert_eq!(decimal_value('\u{663}'), Some(3));
        assert_eq!(decimal_value('\u{1D7D7}'), Some(9));
        assert_eq!(decimal_value('\u{FF10}'), Some(0));
        assert_eq!(decimal_value('½'), None);
        assert_eq!(decimal_value('²'), None);
        assert_eq!(decimal_value('a'), None);
    }

    include!("testdata/value_cases.rs");
}
