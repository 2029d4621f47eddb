//! Python-compatible text conversions.
//!
//! faultgate 0.4.1 prints raw values the way Python's `str()` and `repr()` do, and formats numbers with
//! Python's format mini-language. Reasons, keys and summaries depend on these bytes, so every formatter
//! that must match the reference tool goes through this module.

use serde_json::Value;

/// Python `str(x)` of a JSON value: strings as is, `True`/`False`/`None`, floats in repr form,
/// containers in repr notation.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python `repr(x)` of a JSON value.
pub fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(v, &mut out);
    out
}

fn write_repr(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => out.push_str(&py_repr_str(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_repr_str(k));
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Text of a JSON number as Python prints it: integers as digits, floats in repr form.
pub fn number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Python `repr(s)` of a string.
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python `repr(f)` of a float: shortest round-trip digits, `.0` when integral, exponent form
/// below 1e-4 and from 1e16 up.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{f:?}");
    if s.contains('e') || s.contains('E') {
        return s;
    }
    s
}

/// Python `format(x, '.Nf')`.
pub fn fmt_fixed(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

/// Python `str.strip()`: trims Unicode whitespace, including U+001C..U+001F.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Returns true if and only if Python's `str.isspace` holds for the character.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python truthiness of a JSON value.
pub fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python `float(s)` on a string; `None` where Python raises.
pub fn py_float_str(s: &str) -> Option<f64> {
    let t: String = py_strip(s).chars().filter(|c| *c != '_').collect();
    t.parse::<f64>().ok()
}

/// Python `int(v)` on a JSON value; `None` where Python raises.
pub fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
        }),
        Value::String(s) => py_strip(s).parse().ok(),
        _ => None,
    }
}

/// Python `format(x, '.0%')`.
pub fn fmt_percent0(x: f64) -> String {
    format!("{}%", fmt_fixed(x * 100.0, 0))
}

/// Python `format(x, 'g')`.
pub fn fmt_g(x: f64) -> String {
    format!("{x}")
}

/// Python `format(x, ',.0f')`.
pub fn fmt_thousands0(x: f64) -> String {
    fmt_fixed(x, 0)
}

/// Python `format(x, '+.1f')`.
pub fn fmt_signed1(x: f64) -> String {
    format!("{x:+.1}")
}

/// Python `round(x, k)`.
pub fn round_half_even(x: f64, k: i32) -> f64 {
    let p = 10f64.powi(k);
    (x * p).round_ties_even() / p
}

/// Python `shlex.quote(s)`.
pub fn shlex_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

/// Python `str.lower()`.
pub fn py_lower(s: &str) -> String {
    s.to_lowercase()
}
