//! Python-compatible text conversions.
//!
//! faultgate 0.4.1 prints raw values the way Python 3.11's `str()` and `repr()` do, formats numbers with
//! Python's format mini-language, and reads numbers with Python's `int()` and `float()`. Reasons, keys and
//! summaries depend on these bytes, so every formatter that must match the reference tool goes through
//! this module. Unicode properties (printability, decimal digits, lowercase) follow Python 3.11's
//! Unicode 14.0 data, not the newer tables in Rust's standard library.

use std::fmt::Write as _;

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

/// Appends Python `repr(x)` of a JSON value to `out`.
pub fn write_repr(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => write_number_text(n, out),
        Value::String(s) => write_repr_str(s, out),
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
                write_repr_str(k, out);
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Text of a JSON number as Python prints it: integers as digits, floats in repr form.
pub fn number_text(n: &serde_json::Number) -> String {
    let mut out = String::new();
    write_number_text(n, &mut out);
    out
}

/// Appends [`number_text`] to `out`.
pub fn write_number_text(n: &serde_json::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        write_float_repr(n.as_f64().unwrap_or(f64::NAN), out);
    }
}

/// Python `repr(s)` of a string.
pub fn py_repr_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_repr_str(s, &mut out);
    out
}

/// Appends Python `repr(s)` of a string to `out`: single quotes unless the text holds `'` and no `"`,
/// backslash escapes for the quote, `\\`, `\n`, `\r`, `\t`, and `\xNN`/`\uNNNN`/`\UNNNNNNNN` for
/// characters Python does not consider printable.
pub fn write_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.reserve(s.len() + 2);
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
            ' '..='~' => out.push(c),
            c if is_py_printable(c) => out.push(c),
            c => {
                let code = c as u32;
                let _ = if code <= 0xff {
                    write!(out, "\\x{code:02x}")
                } else if code <= 0xffff {
                    write!(out, "\\u{code:04x}")
                } else {
                    write!(out, "\\U{code:08x}")
                };
            }
        }
    }
    out.push(quote);
}

/// Returns true if and only if Python 3.11's `str.isprintable` holds for the character: everything
/// except the categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs (but the ASCII space is printable).
pub fn is_py_printable(c: char) -> bool {
    let code = c as u32;
    if (0x20..0x7f).contains(&code) {
        return true;
    }
    let toggles = tables::NON_PRINTABLE_BOUNDS.partition_point(|&bound| bound <= code);
    toggles % 2 == 0
}

/// Python `repr(f)` of a float: shortest round-trip digits, `.0` when integral, exponent form
/// below 1e-4 and from 1e16 up (`1e-05`, `1e+16`), `nan`, `inf` and `-inf` for non-finite values.
pub fn float_repr(f: f64) -> String {
    let mut out = String::with_capacity(24);
    write_float_repr(f, &mut out);
    out
}

/// Appends [`float_repr`] to `out`.
pub fn write_float_repr(f: f64, out: &mut String) {
    if write_non_finite(f, "", out) {
        return;
    }
    let mut text = StackText::new();
    // `{:e}` without precision yields the shortest digits that round-trip, as Python's repr does.
    let _ = write!(text, "{f:e}");
    let sci = Scientific::parse(text.as_str());
    if sci.negative {
        out.push('-');
    }
    if sci.exponent < -4 || sci.exponent >= 16 {
        sci.write_exponent_form(out);
    } else {
        sci.write_positional(out, true);
    }
}

/// Python `format(x, '.Nf')`: fixed decimals, correctly rounded with ties to even on the exact binary
/// value (`0.125` → `0.12`, `2.675` → `2.67`).
pub fn fmt_fixed(x: f64, decimals: usize) -> String {
    let mut out = String::new();
    if !write_non_finite(x, "", &mut out) {
        // Rust rounds the exact binary value with ties to even, exactly like Python's `f` format.
        let _ = write!(out, "{x:.decimals$}");
    }
    out
}

/// Python `format(x, '.0%')`: `x * 100` (a float product, as Python computes it), no decimals, then `%`.
pub fn fmt_percent0(x: f64) -> String {
    let mut out = fmt_fixed(x * 100.0, 0);
    out.push('%');
    out
}

/// Python `format(x, 'g')`: six significant digits, exponent form when the exponent is below -4 or
/// at least 6, trailing zeros and a bare trailing point removed (`1.23457e+06`, `1e-05`, `100000`).
pub fn fmt_g(x: f64) -> String {
    const PRECISION: i32 = 6;
    let mut out = String::new();
    if write_non_finite(x, "", &mut out) {
        return out;
    }
    let mut text = StackText::new();
    let _ = write!(text, "{:.*e}", (PRECISION - 1) as usize, x);
    let mut sci = Scientific::parse(text.as_str());
    sci.trim_trailing_zeros();
    if sci.negative {
        out.push('-');
    }
    if sci.exponent < -4 || sci.exponent >= PRECISION {
        sci.write_exponent_form(&mut out);
    } else {
        sci.write_positional(&mut out, false);
    }
    out
}

/// Python `format(x, ',.0f')`: no decimals, `,` between groups of three integer digits.
pub fn fmt_thousands0(x: f64) -> String {
    let plain = fmt_fixed(x, 0);
    if !x.is_finite() {
        return plain;
    }
    let (sign, digits) = match plain.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", plain.as_str()),
    };
    let mut out = String::with_capacity(plain.len() + digits.len() / 3);
    out.push_str(sign);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Python `format(x, '+.1f')`: one decimal with an explicit sign (`+0.0`, `-5.0`, `+nan`).
pub fn fmt_signed1(x: f64) -> String {
    let mut out = String::new();
    if !write_non_finite(x, "+", &mut out) {
        let _ = write!(out, "{x:+.1}");
    }
    out
}

/// Python `round(x, k)` on a float: the float nearest to `x` correctly rounded at `k` decimals (ties to
/// even on the exact binary value; `k` may be negative). Non-finite values and zero come back unchanged.
/// Where Python raises OverflowError (a result beyond the float range) this returns an infinity.
pub fn round_half_even(x: f64, k: i32) -> f64 {
    // Python's own cut-offs: beyond these every float is already exact, or rounds to zero.
    const NDIGITS_MAX: i32 = 323;
    const NDIGITS_MIN: i32 = -308;
    if !x.is_finite() || x == 0.0 || k > NDIGITS_MAX {
        return x;
    }
    if k < NDIGITS_MIN {
        return 0.0 * x;
    }
    if let Ok(decimals) = usize::try_from(k) {
        let text = format!("{x:.decimals$}");
        return text.parse().unwrap_or(x);
    }
    round_to_tens(x, k.unsigned_abs() as usize)
}

/// Rounds `x` to a multiple of `10^places`, ties to even, working on its exact decimal digits so that
/// no intermediate float rounding can move a value across a tie.
fn round_to_tens(x: f64, places: usize) -> f64 {
    // A float's integer part prints exactly; its fraction only matters as "zero or not".
    let integer_digits = format!("{:.0}", x.abs().trunc());
    let has_fraction = x.fract() != 0.0;
    let digits = integer_digits.as_bytes();
    if digits.len() < places {
        return 0.0f64.copysign(x);
    }
    let (head, tail) = digits.split_at(digits.len() - places);
    let rest_is_zero = tail[1..].iter().all(|&d| d == b'0') && !has_fraction;
    let round_up = match tail[0].cmp(&b'5') {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal if !rest_is_zero => true,
        std::cmp::Ordering::Equal => head.last().is_some_and(|d| (d - b'0') % 2 == 1),
    };
    let mut kept: Vec<u8> = head.to_vec();
    if round_up {
        increment_decimal(&mut kept);
    }
    if kept.is_empty() {
        return 0.0f64.copysign(x);
    }
    let mut text = String::from_utf8(kept).unwrap_or_default();
    let _ = write!(text, "e{places}");
    text.parse::<f64>()
        .map_or(x, |magnitude| magnitude.copysign(x))
}

/// Adds one to a string of ASCII decimal digits in place (an empty string counts as zero).
fn increment_decimal(digits: &mut Vec<u8>) {
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return;
        }
    }
    digits.insert(0, b'1');
}

/// Writes Python's text for a non-finite float (`nan`, `inf`, `-inf`, with `plus` before the
/// non-negative ones) and returns true, or returns false for a finite value.
fn write_non_finite(x: f64, plus: &str, out: &mut String) -> bool {
    if x.is_nan() {
        // Python never prints a minus sign for NaN.
        out.push_str(plus);
        out.push_str("nan");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { plus } else { "-" });
        out.push_str("inf");
    } else {
        return false;
    }
    true
}

/// A float's decimal digits and exponent, read back from Rust's `{:e}` output (`-1.25e-3`).
struct Scientific {
    negative: bool,
    digits: StackText,
    exponent: i32,
}

impl Scientific {
    fn parse(text: &str) -> Self {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = unsigned.split_once('e').unwrap_or((unsigned, "0"));
        let mut digits = StackText::new();
        for part in mantissa.split('.') {
            let _ = digits.write_str(part);
        }
        Scientific {
            negative,
            digits,
            exponent: exponent.parse().unwrap_or(0),
        }
    }

    fn trim_trailing_zeros(&mut self) {
        while self.digits.len > 1 && self.digits.buf[self.digits.len - 1] == b'0' {
            self.digits.len -= 1;
        }
    }

    /// `d.ddde+XX`: Python always signs the exponent and gives it at least two digits.
    fn write_exponent_form(&self, out: &mut String) {
        let digits = self.digits.as_str();
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if self.exponent < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", self.exponent.unsigned_abs());
    }

    /// Positional notation; `point_zero` adds the `.0` Python's repr puts on integral values.
    fn write_positional(&self, out: &mut String, point_zero: bool) {
        let digits = self.digits.as_str();
        if self.exponent < 0 {
            out.push_str("0.");
            for _ in 0..(-self.exponent - 1) {
                out.push('0');
            }
            out.push_str(digits);
            return;
        }
        let integer_len = self.exponent as usize + 1;
        if digits.len() <= integer_len {
            out.push_str(digits);
            for _ in digits.len()..integer_len {
                out.push('0');
            }
            if point_zero {
                out.push_str(".0");
            }
        } else {
            out.push_str(&digits[..integer_len]);
            out.push('.');
            out.push_str(&digits[integer_len..]);
        }
    }
}

/// A small text buffer on the stack, big enough for any `{:e}` rendering of an f64 with up to 17
/// significant digits, so float formatting does not allocate twice.
struct StackText {
    buf: [u8; 40],
    len: usize,
}

impl StackText {
    fn new() -> Self {
        StackText {
            buf: [0; 40],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
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
pub fn py_int_str(s: &str) -> Option<i64> {
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
pub fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    let code = c as u32;
    let run = tables::DECIMAL_ZEROS.partition_point(|&zero| zero <= code);
    let zero = *tables::DECIMAL_ZEROS.get(run.checked_sub(1)?)?;
    u8::try_from(code - zero).ok().filter(|d| *d < 10)
}

/// Python `shlex.quote(s)`: `''` for the empty string, the text itself when it holds only ASCII letters,
/// digits and `_@%+=:,./-`, otherwise single-quoted with each `'` written `'"'"'`.
pub fn shlex_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

/// Python `str.lower()`: full Unicode lowercasing (multi-character mappings and the final sigma rule).
pub fn py_lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    if !s.chars().any(cased_after_unicode_14) {
        return s.to_lowercase();
    }
    // Python 3.11 knows these characters as unassigned, so it keeps them, and being neither cased nor
    // case-ignorable they end any final-sigma context, just as a string boundary does.
    let mut out = String::with_capacity(s.len());
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if cased_after_unicode_14(c) {
            out.push_str(&s[start..i].to_lowercase());
            out.push(c);
            start = i + c.len_utf8();
        }
    }
    out.push_str(&s[start..].to_lowercase());
    out
}

/// Returns true if and only if the character gained a lowercase mapping after Unicode 14.0 (Python
/// 3.11's tables) in the Unicode version Rust's standard library uses.
fn cased_after_unicode_14(c: char) -> bool {
    matches!(
        c as u32,
        0x1c89
            | 0xa7cb
            | 0xa7cc
            | 0xa7ce
            | 0xa7d2
            | 0xa7d4
            | 0xa7da
            | 0xa7dc
            | 0x10d50..=0x10d65
            | 0x16ea0..=0x16eb8
    )
}

/// A Markdown table cell: `|` escaped as `\|`, then newlines as spaces, then the first 160 code points
/// of the result (an escape counts as two and may be cut in half, as in the reference).
pub fn md_cell(s: &str) -> String {
    const MAX_CODE_POINTS: usize = 160;
    let mut out = String::with_capacity(s.len().min(4 * MAX_CODE_POINTS));
    let escaped = s.chars().flat_map(|c| match c {
        '|' => ['\\', '|'].into_iter().take(2),
        '\n' => [' ', ' '].into_iter().take(1),
        _ => [c, c].into_iter().take(1),
    });
    out.extend(escaped.take(MAX_CODE_POINTS));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same_float(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn float_formats_match_python() {
        for &(x, repr, fixed2, percent, general, thousands, signed, fixed4) in FLOAT_CASES {
            assert_eq!(float_repr(x), repr, "repr({x:e})");
            assert_eq!(fmt_fixed(x, 2), fixed2, ".2f of {repr}");
            assert_eq!(fmt_fixed(x, 4), fixed4, ".4f of {repr}");
            assert_eq!(fmt_percent0(x), percent, ".0% of {repr}");
            assert_eq!(fmt_g(x), general, "g of {repr}");
            assert_eq!(fmt_thousands0(x), thousands, ",.0f of {repr}");
            assert_eq!(fmt_signed1(x), signed, "+.1f of {repr}");
        }
    }

    #[test]
    fn spec_number_examples() {
        assert_eq!(fmt_fixed(0.125, 2), "0.12");
        assert_eq!(fmt_fixed(0.375, 2), "0.38");
        assert_eq!(fmt_fixed(2.675, 2), "2.67");
        assert_eq!(fmt_percent0(0.5), "50%");
        assert_eq!(fmt_percent0(5.0 / 6.0), "83%");
        assert_eq!(fmt_percent0(0.125), "12%");
        assert_eq!(fmt_g(750.0), "750");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(1e-05), "1e-05");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(fmt_g(100000.0), "100000");
        assert_eq!(fmt_g(1e6), "1e+06");
        assert_eq!(fmt_thousands0(1234.5), "1,234");
        assert_eq!(fmt_signed1(32.94), "+32.9");
        assert_eq!(fmt_signed1(0.0), "+0.0");
        assert_eq!(fmt_signed1(-5.0), "-5.0");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1e-05), "1e-05");
        assert_eq!(float_repr(3.4285169936421056e-07), "3.4285169936421056e-07");
        assert_eq!(float_repr(21450.0), "21450.0");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(-0.0), "-0.0");
    }

    #[test]
    fn non_finite_floats_print_like_python() {
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
        assert_eq!(fmt_fixed(-f64::NAN, 2), "nan");
        assert_eq!(fmt_fixed(f64::INFINITY, 2), "inf");
        assert_eq!(fmt_percent0(f64::NAN), "nan%");
        assert_eq!(fmt_percent0(f64::NEG_INFINITY), "-inf%");
        assert_eq!(fmt_g(f64::INFINITY), "inf");
        assert_eq!(fmt_thousands0(f64::NEG_INFINITY), "-inf");
        assert_eq!(fmt_signed1(f64::NAN), "+nan");
        assert_eq!(fmt_signed1(f64::INFINITY), "+inf");
        assert_eq!(fmt_signed1(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn round_matches_python() {
        for &(x, k, expected) in ROUND_CASES {
            let got = round_half_even(x, k);
            assert!(
                same_float(got, expected),
                "round({x:e}, {k}) = {got:e}, Python {expected:e}"
            );
        }
        assert!(same_float(round_half_even(2.675, 2), 2.67));
        assert!(same_float(round_half_even(0.125, 2), 0.12));
        assert!(same_float(round_half_even(0.375, 2), 0.38));
        assert!(round_half_even(f64::NAN, 2).is_nan());
        assert_eq!(round_half_even(f64::INFINITY, -2), f64::INFINITY);
        // Python raises OverflowError here; the float range ends, so the result is an infinity.
        assert_eq!(round_half_even(1.7976931348623157e308, -308), f64::INFINITY);
    }

    #[test]
    fn repr_of_strings_matches_python() {
        for &(s, expected) in REPR_CASES {
            assert_eq!(py_repr_str(s), expected, "repr of {s:?}");
        }
        assert_eq!(py_repr_str("it's"), "\"it's\"");
        assert_eq!(py_repr_str("a\"b"), "'a\"b'");
        assert_eq!(py_repr_str("x\ny"), "'x\\ny'");
        assert_eq!(py_repr_str("é\u{200b}"), "'é\\u200b'");
        assert_eq!(py_repr_str("both'\""), "'both\\'\"'");
    }

    #[test]
    fn str_and_repr_of_values() {
        let v = json!({"a": [1, 2.5, -0.0, 1e16, null, true, false], "it's": {"k": "v\n"}, "n": 18446744073709551615u64});
        assert_eq!(
            py_repr(&v),
            "{'a': [1, 2.5, -0.0, 1e+16, None, True, False], \"it's\": {'k': 'v\\n'}, 'n': 18446744073709551615}"
        );
        assert_eq!(py_str(&json!("plain 'text'")), "plain 'text'");
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(3.0)), "3.0");
        assert_eq!(py_str(&json!(["x"])), "['x']");
        assert_eq!(py_repr(&json!({})), "{}");
        assert_eq!(py_repr(&json!([])), "[]");
    }

    #[test]
    fn printable_follows_python_311() {
        assert!(is_py_printable(' '));
        assert!(is_py_printable('é'));
        assert!(is_py_printable('\u{1F600}'));
        assert!(!is_py_printable('\u{a0}'));
        assert!(!is_py_printable('\u{ad}'));
        assert!(!is_py_printable('\u{e000}'));
        assert!(!is_py_printable('\u{10ffff}'));
        // Assigned in Unicode 15, unassigned (so not printable) in Python 3.11.
        assert!(!is_py_printable('\u{1FAF8}'));
    }

    #[test]
    fn whole_code_space_agrees_with_python_counts() {
        // Counts from Python 3.11.7 over every code point except the surrogates.
        let scalars = || (0..0x11_0000u32).filter_map(char::from_u32);
        assert_eq!(scalars().filter(|&c| !is_py_printable(c)).count(), 967_548);
        let lowered = scalars()
            .filter(|&c| {
                let mut buf = [0u8; 4];
                let one = c.encode_utf8(&mut buf);
                py_lower(one) != *one
            })
            .count();
        assert_eq!(lowered, 1433);
    }

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

    #[test]
    fn lowercase_matches_python() {
        for &(s, expected) in LOWER_CASES {
            assert_eq!(py_lower(s), expected, "{s:?}.lower()");
        }
    }

    #[test]
    fn shell_quoting_matches_python() {
        for &(s, expected) in SHLEX_CASES {
            assert_eq!(shlex_quote(s), expected, "shlex.quote({s:?})");
        }
    }

    #[test]
    fn markdown_cells() {
        assert_eq!(md_cell("a|b\nc\rd"), "a\\|b c\rd");
        let long = "x".repeat(200);
        assert_eq!(md_cell(&long), "x".repeat(160));
        // The escape is counted after it is written, so it may be cut in half.
        let pipes = format!("{}|", "é".repeat(159));
        assert_eq!(md_cell(&pipes), format!("{}\\", "é".repeat(159)));
    }

    // Generated by Python 3.11.7: (x, repr, .2f, .0%, g, ,.0f, +.1f, .4f)
    type FloatCase = (
        f64,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );
    const FLOAT_CASES: &[FloatCase] = &[
        (0.0, "0.0", "0.00", "0%", "0", "0", "+0.0", "0.0000"),
        (-0.0, "-0.0", "-0.00", "-0%", "-0", "-0", "-0.0", "-0.0000"),
        (1.0, "1.0", "1.00", "100%", "1", "1", "+1.0", "1.0000"),
        (
            -1.0, "-1.0", "-1.00", "-100%", "-1", "-1", "-1.0", "-1.0000",
        ),
        (0.5, "0.5", "0.50", "50%", "0.5", "0", "+0.5", "0.5000"),
        (
            0.125, "0.125", "0.12", "12%", "0.125", "0", "+0.1", "0.1250",
        ),
        (
            0.375, "0.375", "0.38", "38%", "0.375", "0", "+0.4", "0.3750",
        ),
        (
            2.675, "2.675", "2.67", "268%", "2.675", "3", "+2.7", "2.6750",
        ),
        (1.5, "1.5", "1.50", "150%", "1.5", "2", "+1.5", "1.5000"),
        (2.5, "2.5", "2.50", "250%", "2.5", "2", "+2.5", "2.5000"),
        (
            -2.5, "-2.5", "-2.50", "-250%", "-2.5", "-2", "-2.5", "-2.5000",
        ),
        (
            0.8333333333333334,
            "0.8333333333333334",
            "0.83",
            "83%",
            "0.833333",
            "1",
            "+0.8",
            "0.8333",
        ),
        (
            0.3333333333333333,
            "0.3333333333333333",
            "0.33",
            "33%",
            "0.333333",
            "0",
            "+0.3",
            "0.3333",
        ),
        (
            0.6666666666666666,
            "0.6666666666666666",
            "0.67",
            "67%",
            "0.666667",
            "1",
            "+0.7",
            "0.6667",
        ),
        (0.1, "0.1", "0.10", "10%", "0.1", "0", "+0.1", "0.1000"),
        (0.2, "0.2", "0.20", "20%", "0.2", "0", "+0.2", "0.2000"),
        (0.3, "0.3", "0.30", "30%", "0.3", "0", "+0.3", "0.3000"),
        (0.7, "0.7", "0.70", "70%", "0.7", "1", "+0.7", "0.7000"),
        (
            750.0, "750.0", "750.00", "75000%", "750", "750", "+750.0", "750.0000",
        ),
        (
            1234567.0,
            "1234567.0",
            "1234567.00",
            "123456700%",
            "1.23457e+06",
            "1,234,567",
            "+1234567.0",
            "1234567.0000",
        ),
        (1e-05, "1e-05", "0.00", "0%", "1e-05", "0", "+0.0", "0.0000"),
        (
            0.0001, "0.0001", "0.00", "0%", "0.0001", "0", "+0.0", "0.0001",
        ),
        (
            100000.0,
            "100000.0",
            "100000.00",
            "10000000%",
            "100000",
            "100,000",
            "+100000.0",
            "100000.0000",
        ),
        (
            1000000.0,
            "1000000.0",
            "1000000.00",
            "100000000%",
            "1e+06",
            "1,000,000",
            "+1000000.0",
            "1000000.0000",
        ),
        (
            999999.5,
            "999999.5",
            "999999.50",
            "99999950%",
            "1e+06",
            "1,000,000",
            "+999999.5",
            "999999.5000",
        ),
        (
            9999995.0,
            "9999995.0",
            "9999995.00",
            "999999500%",
            "1e+07",
            "9,999,995",
            "+9999995.0",
            "9999995.0000",
        ),
        (
            1.234565e-05,
            "1.234565e-05",
            "0.00",
            "0%",
            "1.23456e-05",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            1234.5,
            "1234.5",
            "1234.50",
            "123450%",
            "1234.5",
            "1,234",
            "+1234.5",
            "1234.5000",
        ),
        (
            -1234.5,
            "-1234.5",
            "-1234.50",
            "-123450%",
            "-1234.5",
            "-1,234",
            "-1234.5",
            "-1234.5000",
        ),
        (
            21450.0,
            "21450.0",
            "21450.00",
            "2145000%",
            "21450",
            "21,450",
            "+21450.0",
            "21450.0000",
        ),
        (
            1e+16,
            "1e+16",
            "10000000000000000.00",
            "1000000000000000000%",
            "1e+16",
            "10,000,000,000,000,000",
            "+10000000000000000.0",
            "10000000000000000.0000",
        ),
        (
            1000000000000000.0,
            "1000000000000000.0",
            "1000000000000000.00",
            "100000000000000000%",
            "1e+15",
            "1,000,000,000,000,000",
            "+1000000000000000.0",
            "1000000000000000.0000",
        ),
        (
            9999999999999998.0,
            "9999999999999998.0",
            "9999999999999998.00",
            "999999999999999744%",
            "1e+16",
            "9,999,999,999,999,998",
            "+9999999999999998.0",
            "9999999999999998.0000",
        ),
        (
            3.4285169936421056e-07,
            "3.4285169936421056e-07",
            "0.00",
            "0%",
            "3.42852e-07",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            1e+22,
            "1e+22",
            "10000000000000000000000.00",
            "999999999999999983222784%",
            "1e+22",
            "10,000,000,000,000,000,000,000",
            "+10000000000000000000000.0",
            "10000000000000000000000.0000",
        ),
        (1e-07, "1e-07", "0.00", "0%", "1e-07", "0", "+0.0", "0.0000"),
        (
            123456789.123,
            "123456789.123",
            "123456789.12",
            "12345678912%",
            "1.23457e+08",
            "123,456,789",
            "+123456789.1",
            "123456789.1230",
        ),
        (
            5e-324,
            "5e-324",
            "0.00",
            "0%",
            "4.94066e-324",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            1.7976931348623157e+308,
            "1.7976931348623157e+308",
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.00",
            "inf%",
            "1.79769e+308",
            "179,769,313,486,231,570,814,527,423,731,704,356,798,070,567,525,844,996,598,917,476,803,157,260,780,028,538,760,589,558,632,766,878,171,540,458,953,514,382,464,234,321,326,889,464,182,768,467,546,703,537,516,986,049,910,576,551,282,076,245,490,090,389,328,944,075,868,508,455,133,942,304,583,236,903,222,948,165,808,559,332,123,348,274,797,826,204,144,723,168,738,177,180,919,299,881,250,404,026,184,124,858,368",
            "+179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.0",
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.0000",
        ),
        (
            2.2250738585072014e-308,
            "2.2250738585072014e-308",
            "0.00",
            "0%",
            "2.22507e-308",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            32.94, "32.94", "32.94", "3294%", "32.94", "33", "+32.9", "32.9400",
        ),
        (
            -5.0, "-5.0", "-5.00", "-500%", "-5", "-5", "-5.0", "-5.0000",
        ),
        (0.05, "0.05", "0.05", "5%", "0.05", "0", "+0.1", "0.0500"),
        (0.15, "0.15", "0.15", "15%", "0.15", "0", "+0.1", "0.1500"),
        (0.25, "0.25", "0.25", "25%", "0.25", "0", "+0.2", "0.2500"),
        (0.35, "0.35", "0.35", "35%", "0.35", "0", "+0.3", "0.3500"),
        (0.45, "0.45", "0.45", "45%", "0.45", "0", "+0.5", "0.4500"),
        (
            -0.05, "-0.05", "-0.05", "-5%", "-0.05", "-0", "-0.1", "-0.0500",
        ),
        (
            12.5, "12.5", "12.50", "1250%", "12.5", "12", "+12.5", "12.5000",
        ),
        (
            13.5, "13.5", "13.50", "1350%", "13.5", "14", "+13.5", "13.5000",
        ),
        (
            -0.0001, "-0.0001", "-0.00", "-0%", "-0.0001", "-0", "-0.0", "-0.0001",
        ),
        (
            99.99, "99.99", "99.99", "9999%", "99.99", "100", "+100.0", "99.9900",
        ),
        (
            99.95, "99.95", "99.95", "9995%", "99.95", "100", "+100.0", "99.9500",
        ),
        (
            0.995, "0.995", "0.99", "100%", "0.995", "1", "+1.0", "0.9950",
        ),
        (
            0.9949999,
            "0.9949999",
            "0.99",
            "99%",
            "0.995",
            "1",
            "+1.0",
            "0.9950",
        ),
        (
            1e+100,
            "1e+100",
            "10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.00",
            "999999999999999977049513265245336628446842719924150006129995974731993452180789911303261294481511546880%",
            "1e+100",
            "10,000,000,000,000,000,159,028,911,097,599,180,468,360,808,563,945,281,389,781,327,557,747,838,772,170,381,060,813,469,985,856,815,104",
            "+10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.0",
            "10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.0000",
        ),
        (
            1.23e-18, "1.23e-18", "0.00", "0%", "1.23e-18", "0", "+0.0", "0.0000",
        ),
        (4.35, "4.35", "4.35", "435%", "4.35", "4", "+4.3", "4.3500"),
        (0.045, "0.045", "0.04", "4%", "0.045", "0", "+0.0", "0.0450"),
        (
            1.005, "1.005", "1.00", "100%", "1.005", "1", "+1.0", "1.0050",
        ),
        (
            8.325, "8.325", "8.32", "832%", "8.325", "8", "+8.3", "8.3250",
        ),
        (
            0.0001, "0.0001", "0.00", "0%", "0.0001", "0", "+0.0", "0.0001",
        ),
        (
            9.999e-05,
            "9.999e-05",
            "0.00",
            "0%",
            "9.999e-05",
            "0",
            "+0.0",
            "0.0001",
        ),
        (
            314159.26535,
            "314159.26535",
            "314159.27",
            "31415927%",
            "314159",
            "314,159",
            "+314159.3",
            "314159.2654",
        ),
        (5e-05, "5e-05", "0.00", "0%", "5e-05", "0", "+0.0", "0.0001"),
        (
            6.0221409e+23,
            "6.0221409e+23",
            "602214090000000006225920.00",
            "60221409000000002770075648%",
            "6.02214e+23",
            "602,214,090,000,000,006,225,920",
            "+602214090000000006225920.0",
            "602214090000000006225920.0000",
        ),
        (
            100.0, "100.0", "100.00", "10000%", "100", "100", "+100.0", "100.0000",
        ),
        (
            1000.0,
            "1000.0",
            "1000.00",
            "100000%",
            "1000",
            "1,000",
            "+1000.0",
            "1000.0000",
        ),
        (
            10000.0,
            "10000.0",
            "10000.00",
            "1000000%",
            "10000",
            "10,000",
            "+10000.0",
            "10000.0000",
        ),
        (
            65536.0,
            "65536.0",
            "65536.00",
            "6553600%",
            "65536",
            "65,536",
            "+65536.0",
            "65536.0000",
        ),
        (
            12345678.0,
            "12345678.0",
            "12345678.00",
            "1234567800%",
            "1.23457e+07",
            "12,345,678",
            "+12345678.0",
            "12345678.0000",
        ),
        (
            999.5, "999.5", "999.50", "99950%", "999.5", "1,000", "+999.5", "999.5000",
        ),
        (
            5.1e-06, "5.1e-06", "0.00", "0%", "5.1e-06", "0", "+0.0", "0.0000",
        ),
        (
            0.14285714285714285,
            "0.14285714285714285",
            "0.14",
            "14%",
            "0.142857",
            "0",
            "+0.1",
            "0.1429",
        ),
        (
            3.142857142857143,
            "3.142857142857143",
            "3.14",
            "314%",
            "3.14286",
            "3",
            "+3.1",
            "3.1429",
        ),
        (
            -0.14285714285714285,
            "-0.14285714285714285",
            "-0.14",
            "-14%",
            "-0.142857",
            "-0",
            "-0.1",
            "-0.1429",
        ),
        (
            -1.989032661366619e+244,
            "-1.989032661366619e+244",
            "-19890326613666189832645556125680163145047549678376990426751681859736581178435781695176400978497486579457979783896874977606037560505863750716671367035647866777173228595684445332982092384468550003653606192434821453279324101034702448915133683990528.00",
            "-1989032661366619080296936381362324761315972996744108746230544255767196314034330546145824640748304053625698530180092369666086924621278450457390889460740686142985277549642265733576645239749974097256940971218384946906869859710749541822316296762556416%",
            "-1.98903e+244",
            "-19,890,326,613,666,189,832,645,556,125,680,163,145,047,549,678,376,990,426,751,681,859,736,581,178,435,781,695,176,400,978,497,486,579,457,979,783,896,874,977,606,037,560,505,863,750,716,671,367,035,647,866,777,173,228,595,684,445,332,982,092,384,468,550,003,653,606,192,434,821,453,279,324,101,034,702,448,915,133,683,990,528",
            "-19890326613666189832645556125680163145047549678376990426751681859736581178435781695176400978497486579457979783896874977606037560505863750716671367035647866777173228595684445332982092384468550003653606192434821453279324101034702448915133683990528.0",
            "-19890326613666189832645556125680163145047549678376990426751681859736581178435781695176400978497486579457979783896874977606037560505863750716671367035647866777173228595684445332982092384468550003653606192434821453279324101034702448915133683990528.0000",
        ),
        (
            7.761117632285041e+178,
            "7.761117632285041e+178",
            "77611176322850410205396077726384600498844428523271495964109781678695897797503704585752225419164419007468426363564698524404428180208049865571506479979574200570825826167097816776704.00",
            "7761117632285041078125704342791373749859335750707717389943101282134122683440041788006743574511486640830563418486272823959430474129872444134216453508284456076391576931783879023394816%",
            "7.76112e+178",
            "77,611,176,322,850,410,205,396,077,726,384,600,498,844,428,523,271,495,964,109,781,678,695,897,797,503,704,585,752,225,419,164,419,007,468,426,363,564,698,524,404,428,180,208,049,865,571,506,479,979,574,200,570,825,826,167,097,816,776,704",
            "+77611176322850410205396077726384600498844428523271495964109781678695897797503704585752225419164419007468426363564698524404428180208049865571506479979574200570825826167097816776704.0",
            "77611176322850410205396077726384600498844428523271495964109781678695897797503704585752225419164419007468426363564698524404428180208049865571506479979574200570825826167097816776704.0000",
        ),
        (
            3.980498358697587e-249,
            "3.980498358697587e-249",
            "0.00",
            "0%",
            "3.9805e-249",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -1.5432835417340557e+88,
            "-1.5432835417340557e+88",
            "-15432835417340557405158500330682502071656501781791298759666279418262109828379128417484800.00",
            "-1543283541734055775852791328635936798831600193037500192516305879338590145270036867600875520%",
            "-1.54328e+88",
            "-15,432,835,417,340,557,405,158,500,330,682,502,071,656,501,781,791,298,759,666,279,418,262,109,828,379,128,417,484,800",
            "-15432835417340557405158500330682502071656501781791298759666279418262109828379128417484800.0",
            "-15432835417340557405158500330682502071656501781791298759666279418262109828379128417484800.0000",
        ),
        (
            1.3647584518757569e-192,
            "1.3647584518757569e-192",
            "0.00",
            "0%",
            "1.36476e-192",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -1.3701135617873088e-206,
            "-1.3701135617873088e-206",
            "-0.00",
            "-0%",
            "-1.37011e-206",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -1.7160537630466207e+197,
            "-1.7160537630466207e+197",
            "-171605376304662069026650158589513291894844543958629280276025510914707430447847877066872574453112507838661110095788185295688385367849778400241927492969645097165094230778152152119682461104277540569088.00",
            "-17160537630466207301018510471526653206675609310214398524797389386744685444367891356989927340950432838237987708500782781235835651469853601534127252536494939273649407152755729169841699236972668330704896%",
            "-1.71605e+197",
            "-171,605,376,304,662,069,026,650,158,589,513,291,894,844,543,958,629,280,276,025,510,914,707,430,447,847,877,066,872,574,453,112,507,838,661,110,095,788,185,295,688,385,367,849,778,400,241,927,492,969,645,097,165,094,230,778,152,152,119,682,461,104,277,540,569,088",
            "-171605376304662069026650158589513291894844543958629280276025510914707430447847877066872574453112507838661110095788185295688385367849778400241927492969645097165094230778152152119682461104277540569088.0",
            "-171605376304662069026650158589513291894844543958629280276025510914707430447847877066872574453112507838661110095788185295688385367849778400241927492969645097165094230778152152119682461104277540569088.0000",
        ),
        (
            6.294675241195386e-44,
            "6.294675241195386e-44",
            "0.00",
            "0%",
            "6.29468e-44",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            1.0613447212142254e-202,
            "1.0613447212142254e-202",
            "0.00",
            "0%",
            "1.06134e-202",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            4.708325160387546e+207,
            "4.708325160387546e+207",
            "4708325160387546214681584652571399365911452534366096920014963008780630648344680296474804994488156011309669538228878742037829617682138279506674351691507770661035556003666065688693766716335562310843758920335360.00",
            "470832516038754598655955377146163843385287224935153067535353764635263411938505440151104663405428668601402897236030875310571413900241791397223911562273587074840249001755535627609403299832231480670004930800517120%",
            "4.70833e+207",
            "4,708,325,160,387,546,214,681,584,652,571,399,365,911,452,534,366,096,920,014,963,008,780,630,648,344,680,296,474,804,994,488,156,011,309,669,538,228,878,742,037,829,617,682,138,279,506,674,351,691,507,770,661,035,556,003,666,065,688,693,766,716,335,562,310,843,758,920,335,360",
            "+4708325160387546214681584652571399365911452534366096920014963008780630648344680296474804994488156011309669538228878742037829617682138279506674351691507770661035556003666065688693766716335562310843758920335360.0",
            "4708325160387546214681584652571399365911452534366096920014963008780630648344680296474804994488156011309669538228878742037829617682138279506674351691507770661035556003666065688693766716335562310843758920335360.0000",
        ),
        (
            6.387016158513563e-12,
            "6.387016158513563e-12",
            "0.00",
            "0%",
            "6.38702e-12",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -9.973130378568733e-246,
            "-9.973130378568733e-246",
            "-0.00",
            "-0%",
            "-9.97313e-246",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            8.779753225680271e-236,
            "8.779753225680271e-236",
            "0.00",
            "0%",
            "8.77975e-236",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -5.795503248498993e-228,
            "-5.795503248498993e-228",
            "-0.00",
            "-0%",
            "-5.7955e-228",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -5.988180159386011e+243,
            "-5.988180159386011e+243",
            "-5988180159386011080906898467788466980147419801993575650244024038212642659248834623969890428033319719771209224279613310401820874692303376168424821041350677791623318392633575734592145243088957794607048588943064864865492795362030345869397640347648.00",
            "-598818015938601074735808957505803169423385782762779229427241879829735510984312332931050606181953554712155107750009656322672248273054936702999942093855852337976472414550481535863502148860948589904224112902933648443789531233700776266976257409810432%",
            "-5.98818e+243",
            "-5,988,180,159,386,011,080,906,898,467,788,466,980,147,419,801,993,575,650,244,024,038,212,642,659,248,834,623,969,890,428,033,319,719,771,209,224,279,613,310,401,820,874,692,303,376,168,424,821,041,350,677,791,623,318,392,633,575,734,592,145,243,088,957,794,607,048,588,943,064,864,865,492,795,362,030,345,869,397,640,347,648",
            "-5988180159386011080906898467788466980147419801993575650244024038212642659248834623969890428033319719771209224279613310401820874692303376168424821041350677791623318392633575734592145243088957794607048588943064864865492795362030345869397640347648.0",
            "-5988180159386011080906898467788466980147419801993575650244024038212642659248834623969890428033319719771209224279613310401820874692303376168424821041350677791623318392633575734592145243088957794607048588943064864865492795362030345869397640347648.0000",
        ),
        (
            -1.306052388527796e-147,
            "-1.306052388527796e-147",
            "-0.00",
            "-0%",
            "-1.30605e-147",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -2.436117699484841e-206,
            "-2.436117699484841e-206",
            "-0.00",
            "-0%",
            "-2.43612e-206",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            2.233386999150174e-232,
            "2.233386999150174e-232",
            "0.00",
            "0%",
            "2.23339e-232",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -3.51527970626667e-203,
            "-3.51527970626667e-203",
            "-0.00",
            "-0%",
            "-3.51528e-203",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            1.5987381841032883e-247,
            "1.5987381841032883e-247",
            "0.00",
            "0%",
            "1.59874e-247",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            4.6678633181812096e-36,
            "4.6678633181812096e-36",
            "0.00",
            "0%",
            "4.66786e-36",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -8.441872792105456e-239,
            "-8.441872792105456e-239",
            "-0.00",
            "-0%",
            "-8.44187e-239",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            1.9015657400796622e-144,
            "1.9015657400796622e-144",
            "0.00",
            "0%",
            "1.90157e-144",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            7.370437700706684e+208,
            "7.370437700706684e+208",
            "73704377007066840095891085428396783241009939167628614811804087228309959967743840553383096015285284464781774707151266126204185124898223829559886268581296438530307884212220229111789078516235397670571927937220608.00",
            "7370437700706683790591958896974307829324756843148877886305440374900119328973143196173101575512013894194362527481299423245587652957290832042930800232108619936903045074555741875083163482330822163079231565885079552%",
            "7.37044e+208",
            "73,704,377,007,066,840,095,891,085,428,396,783,241,009,939,167,628,614,811,804,087,228,309,959,967,743,840,553,383,096,015,285,284,464,781,774,707,151,266,126,204,185,124,898,223,829,559,886,268,581,296,438,530,307,884,212,220,229,111,789,078,516,235,397,670,571,927,937,220,608",
            "+73704377007066840095891085428396783241009939167628614811804087228309959967743840553383096015285284464781774707151266126204185124898223829559886268581296438530307884212220229111789078516235397670571927937220608.0",
            "73704377007066840095891085428396783241009939167628614811804087228309959967743840553383096015285284464781774707151266126204185124898223829559886268581296438530307884212220229111789078516235397670571927937220608.0000",
        ),
        (
            -1.7163996725272777e-258,
            "-1.7163996725272777e-258",
            "-0.00",
            "-0%",
            "-1.7164e-258",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -3.2367190832119987e-221,
            "-3.2367190832119987e-221",
            "-0.00",
            "-0%",
            "-3.23672e-221",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -2.2818334634712625e-234,
            "-2.2818334634712625e-234",
            "-0.00",
            "-0%",
            "-2.28183e-234",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -3.0536383926309363e-84,
            "-3.0536383926309363e-84",
            "-0.00",
            "-0%",
            "-3.05364e-84",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            1.3449551894627777e-181,
            "1.3449551894627777e-181",
            "0.00",
            "0%",
            "1.34496e-181",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -7.317495976062606e-221,
            "-7.317495976062606e-221",
            "-0.00",
            "-0%",
            "-7.3175e-221",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            5.249822308814304e-77,
            "5.249822308814304e-77",
            "0.00",
            "0%",
            "5.24982e-77",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            1.5450754142984396e-188,
            "1.5450754142984396e-188",
            "0.00",
            "0%",
            "1.54508e-188",
            "0",
            "+0.0",
            "0.0000",
        ),
        (
            -3.953625698224792e-47,
            "-3.953625698224792e-47",
            "-0.00",
            "-0%",
            "-3.95363e-47",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -2.72491267476498e-229,
            "-2.72491267476498e-229",
            "-0.00",
            "-0%",
            "-2.72491e-229",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -6.505141861548772e-162,
            "-6.505141861548772e-162",
            "-0.00",
            "-0%",
            "-6.50514e-162",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            1.441484839555994e+304,
            "1.441484839555994e+304",
            "14414848395559940699136965876541528424769904043480500610151245544699330174988871082151303386265587887828015057068799432328004005488708417095969394398825415295425257736099945012780620255640207633254643902663305066068746851206961753006652576009394639052923306857614771599443051581348616518215457212488220672.00",
            "1441484839555994001696498507854159280003313689221731884881536551304880329423541907724489503261576071523496044532808128655665986929010164425382750383460883203496614699421420564559118125868709554229936801835954968137277530766167523184866072123175339285067785377478717870150133536404918822248745591305423290368%",
            "1.44148e+304",
            "14,414,848,395,559,940,699,136,965,876,541,528,424,769,904,043,480,500,610,151,245,544,699,330,174,988,871,082,151,303,386,265,587,887,828,015,057,068,799,432,328,004,005,488,708,417,095,969,394,398,825,415,295,425,257,736,099,945,012,780,620,255,640,207,633,254,643,902,663,305,066,068,746,851,206,961,753,006,652,576,009,394,639,052,923,306,857,614,771,599,443,051,581,348,616,518,215,457,212,488,220,672",
            "+14414848395559940699136965876541528424769904043480500610151245544699330174988871082151303386265587887828015057068799432328004005488708417095969394398825415295425257736099945012780620255640207633254643902663305066068746851206961753006652576009394639052923306857614771599443051581348616518215457212488220672.0",
            "14414848395559940699136965876541528424769904043480500610151245544699330174988871082151303386265587887828015057068799432328004005488708417095969394398825415295425257736099945012780620255640207633254643902663305066068746851206961753006652576009394639052923306857614771599443051581348616518215457212488220672.0000",
        ),
        (
            -1.4583679262758548e-269,
            "-1.4583679262758548e-269",
            "-0.00",
            "-0%",
            "-1.45837e-269",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -7.939416668807721e+33,
            "-7.939416668807721e+33",
            "-7939416668807720765072559902294016.00",
            "-793941666880772011943651732245970944%",
            "-7.93942e+33",
            "-7,939,416,668,807,720,765,072,559,902,294,016",
            "-7939416668807720765072559902294016.0",
            "-7939416668807720765072559902294016.0000",
        ),
        (
            1.4255183989699612e+266,
            "1.4255183989699612e+266",
            "142551839896996120647303091764942912907882226522742913727190442931334161699156939219830895910174380315834198399863548709872677540540071490072965447255336632831323931419645388629361391675416920425291623319296117367211787375628157387986968701297701853560990776485216256.00",
            "14255183989699611262840999459195377567062272509378813632510347472355145345555102257273297441136121569915460396896760358965201495922014986924184443527479115670671663978156309488575658544123753179058727010518206001860058507073948809472641369141117844126053038667241357312%",
            "1.42552e+266",
            "142,551,839,896,996,120,647,303,091,764,942,912,907,882,226,522,742,913,727,190,442,931,334,161,699,156,939,219,830,895,910,174,380,315,834,198,399,863,548,709,872,677,540,540,071,490,072,965,447,255,336,632,831,323,931,419,645,388,629,361,391,675,416,920,425,291,623,319,296,117,367,211,787,375,628,157,387,986,968,701,297,701,853,560,990,776,485,216,256",
            "+142551839896996120647303091764942912907882226522742913727190442931334161699156939219830895910174380315834198399863548709872677540540071490072965447255336632831323931419645388629361391675416920425291623319296117367211787375628157387986968701297701853560990776485216256.0",
            "142551839896996120647303091764942912907882226522742913727190442931334161699156939219830895910174380315834198399863548709872677540540071490072965447255336632831323931419645388629361391675416920425291623319296117367211787375628157387986968701297701853560990776485216256.0000",
        ),
        (
            -1.525315701232403e+214,
            "-1.525315701232403e+214",
            "-15253157012324029441518442740545233014018097561210623676962351037741705679908561159903642050218758572200559843350513253244703843366541354661914384035094035170364927280664009693195538346922190615937477565243142963200.00",
            "-1525315701232402858038661078905925776927876918982866194453879549874182968184723390312857765863766071029223407616418733227256893074710209142362492048931920576832406000263672605430129616776413816227949754359167877906432%",
            "-1.52532e+214",
            "-15,253,157,012,324,029,441,518,442,740,545,233,014,018,097,561,210,623,676,962,351,037,741,705,679,908,561,159,903,642,050,218,758,572,200,559,843,350,513,253,244,703,843,366,541,354,661,914,384,035,094,035,170,364,927,280,664,009,693,195,538,346,922,190,615,937,477,565,243,142,963,200",
            "-15253157012324029441518442740545233014018097561210623676962351037741705679908561159903642050218758572200559843350513253244703843366541354661914384035094035170364927280664009693195538346922190615937477565243142963200.0",
            "-15253157012324029441518442740545233014018097561210623676962351037741705679908561159903642050218758572200559843350513253244703843366541354661914384035094035170364927280664009693195538346922190615937477565243142963200.0000",
        ),
        (
            -936.3124725844934,
            "-936.3124725844934",
            "-936.31",
            "-93631%",
            "-936.312",
            "-936",
            "-936.3",
            "-936.3125",
        ),
        (
            -0.5031468302849013,
            "-0.5031468302849013",
            "-0.50",
            "-50%",
            "-0.503147",
            "-1",
            "-0.5",
            "-0.5031",
        ),
        (
            39.79888674591426,
            "39.79888674591426",
            "39.80",
            "3980%",
            "39.7989",
            "40",
            "+39.8",
            "39.7989",
        ),
        (
            -8362.899784084604,
            "-8362.899784084604",
            "-8362.90",
            "-836290%",
            "-8362.9",
            "-8,363",
            "-8362.9",
            "-8362.8998",
        ),
        (
            5039.300762290284,
            "5039.300762290284",
            "5039.30",
            "503930%",
            "5039.3",
            "5,039",
            "+5039.3",
            "5039.3008",
        ),
        (
            4588.905788784351,
            "4588.905788784351",
            "4588.91",
            "458891%",
            "4588.91",
            "4,589",
            "+4588.9",
            "4588.9058",
        ),
        (
            0.00021791803807280716,
            "0.00021791803807280716",
            "0.00",
            "0%",
            "0.000217918",
            "0",
            "+0.0",
            "0.0002",
        ),
        (
            -76386844.34900758,
            "-76386844.34900758",
            "-76386844.35",
            "-7638684435%",
            "-7.63868e+07",
            "-76,386,844",
            "-76386844.3",
            "-76386844.3490",
        ),
        (
            -67007.57927128536,
            "-67007.57927128536",
            "-67007.58",
            "-6700758%",
            "-67007.6",
            "-67,008",
            "-67007.6",
            "-67007.5793",
        ),
        (
            -6960309306.789905,
            "-6960309306.789905",
            "-6960309306.79",
            "-696030930679%",
            "-6.96031e+09",
            "-6,960,309,307",
            "-6960309306.8",
            "-6960309306.7899",
        ),
        (
            -0.00015660329104651139,
            "-0.00015660329104651139",
            "-0.00",
            "-0%",
            "-0.000156603",
            "-0",
            "-0.0",
            "-0.0002",
        ),
        (
            52914.17324256262,
            "52914.17324256262",
            "52914.17",
            "5291417%",
            "52914.2",
            "52,914",
            "+52914.2",
            "52914.1732",
        ),
        (
            -319755.27561760903,
            "-319755.27561760903",
            "-319755.28",
            "-31975528%",
            "-319755",
            "-319,755",
            "-319755.3",
            "-319755.2756",
        ),
        (
            188739754.2100368,
            "188739754.2100368",
            "188739754.21",
            "18873975421%",
            "1.8874e+08",
            "188,739,754",
            "+188739754.2",
            "188739754.2100",
        ),
        (
            -0.0008624741011862789,
            "-0.0008624741011862789",
            "-0.00",
            "-0%",
            "-0.000862474",
            "-0",
            "-0.0",
            "-0.0009",
        ),
        (
            8893621902.158749,
            "8893621902.158749",
            "8893621902.16",
            "889362190216%",
            "8.89362e+09",
            "8,893,621,902",
            "+8893621902.2",
            "8893621902.1587",
        ),
        (
            0.0003940841356538564,
            "0.0003940841356538564",
            "0.00",
            "0%",
            "0.000394084",
            "0",
            "+0.0",
            "0.0004",
        ),
        (
            -8786.611448055606,
            "-8786.611448055606",
            "-8786.61",
            "-878661%",
            "-8786.61",
            "-8,787",
            "-8786.6",
            "-8786.6114",
        ),
        (
            294257709.0553375,
            "294257709.0553375",
            "294257709.06",
            "29425770906%",
            "2.94258e+08",
            "294,257,709",
            "+294257709.1",
            "294257709.0553",
        ),
        (
            -4308089.358117015,
            "-4308089.358117015",
            "-4308089.36",
            "-430808936%",
            "-4.30809e+06",
            "-4,308,089",
            "-4308089.4",
            "-4308089.3581",
        ),
        (
            774080.5844761838,
            "774080.5844761838",
            "774080.58",
            "77408058%",
            "774081",
            "774,081",
            "+774080.6",
            "774080.5845",
        ),
        (
            -954874143.8888229,
            "-954874143.8888229",
            "-954874143.89",
            "-95487414389%",
            "-9.54874e+08",
            "-954,874,144",
            "-954874143.9",
            "-954874143.8888",
        ),
        (
            -0.0028907178091930794,
            "-0.0028907178091930794",
            "-0.00",
            "-0%",
            "-0.00289072",
            "-0",
            "-0.0",
            "-0.0029",
        ),
        (
            -0.12614010886037164,
            "-0.12614010886037164",
            "-0.13",
            "-13%",
            "-0.12614",
            "-0",
            "-0.1",
            "-0.1261",
        ),
        (
            0.05364659769450415,
            "0.05364659769450415",
            "0.05",
            "5%",
            "0.0536466",
            "0",
            "+0.1",
            "0.0536",
        ),
        (
            4767267.591895882,
            "4767267.591895882",
            "4767267.59",
            "476726759%",
            "4.76727e+06",
            "4,767,268",
            "+4767267.6",
            "4767267.5919",
        ),
        (
            -2181005937.3354588,
            "-2181005937.3354588",
            "-2181005937.34",
            "-218100593734%",
            "-2.18101e+09",
            "-2,181,005,937",
            "-2181005937.3",
            "-2181005937.3355",
        ),
        (
            -838837397.5997227,
            "-838837397.5997227",
            "-838837397.60",
            "-83883739760%",
            "-8.38837e+08",
            "-838,837,398",
            "-838837397.6",
            "-838837397.5997",
        ),
        (
            -196.7114873313918,
            "-196.7114873313918",
            "-196.71",
            "-19671%",
            "-196.711",
            "-197",
            "-196.7",
            "-196.7115",
        ),
        (
            76676765.28830248,
            "76676765.28830248",
            "76676765.29",
            "7667676529%",
            "7.66768e+07",
            "76,676,765",
            "+76676765.3",
            "76676765.2883",
        ),
        (
            727.9689393970303,
            "727.9689393970303",
            "727.97",
            "72797%",
            "727.969",
            "728",
            "+728.0",
            "727.9689",
        ),
        (
            412793.4189930039,
            "412793.4189930039",
            "412793.42",
            "41279342%",
            "412793",
            "412,793",
            "+412793.4",
            "412793.4190",
        ),
        (
            3654461.187749032,
            "3654461.187749032",
            "3654461.19",
            "365446119%",
            "3.65446e+06",
            "3,654,461",
            "+3654461.2",
            "3654461.1877",
        ),
        (
            0.09154624079279826,
            "0.09154624079279826",
            "0.09",
            "9%",
            "0.0915462",
            "0",
            "+0.1",
            "0.0915",
        ),
        (
            -0.08340306106773358,
            "-0.08340306106773358",
            "-0.08",
            "-8%",
            "-0.0834031",
            "-0",
            "-0.1",
            "-0.0834",
        ),
        (
            -53.60862663609285,
            "-53.60862663609285",
            "-53.61",
            "-5361%",
            "-53.6086",
            "-54",
            "-53.6",
            "-53.6086",
        ),
        (
            -0.9758738803124023,
            "-0.9758738803124023",
            "-0.98",
            "-98%",
            "-0.975874",
            "-1",
            "-1.0",
            "-0.9759",
        ),
        (
            -4.745067614029241e-06,
            "-4.745067614029241e-06",
            "-0.00",
            "-0%",
            "-4.74507e-06",
            "-0",
            "-0.0",
            "-0.0000",
        ),
        (
            -708647.2150840389,
            "-708647.2150840389",
            "-708647.22",
            "-70864722%",
            "-708647",
            "-708,647",
            "-708647.2",
            "-708647.2151",
        ),
        (
            21962.48705139939,
            "21962.48705139939",
            "21962.49",
            "2196249%",
            "21962.5",
            "21,962",
            "+21962.5",
            "21962.4871",
        ),
        (
            -1.5, "-1.5", "-1.50", "-150%", "-1.5", "-2", "-1.5", "-1.5000",
        ),
        (
            -1500.0,
            "-1500.0",
            "-1500.00",
            "-150000%",
            "-1500",
            "-1,500",
            "-1500.0",
            "-1500.0000",
        ),
        (
            -1.375, "-1.375", "-1.38", "-138%", "-1.375", "-1", "-1.4", "-1.3750",
        ),
        (
            -1375.0,
            "-1375.0",
            "-1375.00",
            "-137500%",
            "-1375",
            "-1,375",
            "-1375.0",
            "-1375.0000",
        ),
        (
            -1.25, "-1.25", "-1.25", "-125%", "-1.25", "-1", "-1.2", "-1.2500",
        ),
        (
            -1250.0,
            "-1250.0",
            "-1250.00",
            "-125000%",
            "-1250",
            "-1,250",
            "-1250.0",
            "-1250.0000",
        ),
        (
            -1.125, "-1.125", "-1.12", "-112%", "-1.125", "-1", "-1.1", "-1.1250",
        ),
        (
            -1125.0,
            "-1125.0",
            "-1125.00",
            "-112500%",
            "-1125",
            "-1,125",
            "-1125.0",
            "-1125.0000",
        ),
        (
            -1.0, "-1.0", "-1.00", "-100%", "-1", "-1", "-1.0", "-1.0000",
        ),
        (
            -1000.0,
            "-1000.0",
            "-1000.00",
            "-100000%",
            "-1000",
            "-1,000",
            "-1000.0",
            "-1000.0000",
        ),
        (
            -0.875, "-0.875", "-0.88", "-88%", "-0.875", "-1", "-0.9", "-0.8750",
        ),
        (
            -875.0,
            "-875.0",
            "-875.00",
            "-87500%",
            "-875",
            "-875",
            "-875.0",
            "-875.0000",
        ),
        (
            -0.75, "-0.75", "-0.75", "-75%", "-0.75", "-1", "-0.8", "-0.7500",
        ),
        (
            -750.0,
            "-750.0",
            "-750.00",
            "-75000%",
            "-750",
            "-750",
            "-750.0",
            "-750.0000",
        ),
        (
            -0.625, "-0.625", "-0.62", "-62%", "-0.625", "-1", "-0.6", "-0.6250",
        ),
        (
            -625.0,
            "-625.0",
            "-625.00",
            "-62500%",
            "-625",
            "-625",
            "-625.0",
            "-625.0000",
        ),
        (
            -0.5, "-0.5", "-0.50", "-50%", "-0.5", "-0", "-0.5", "-0.5000",
        ),
        (
            -500.0,
            "-500.0",
            "-500.00",
            "-50000%",
            "-500",
            "-500",
            "-500.0",
            "-500.0000",
        ),
        (
            -0.375, "-0.375", "-0.38", "-38%", "-0.375", "-0", "-0.4", "-0.3750",
        ),
        (
            -375.0,
            "-375.0",
            "-375.00",
            "-37500%",
            "-375",
            "-375",
            "-375.0",
            "-375.0000",
        ),
        (
            -0.25, "-0.25", "-0.25", "-25%", "-0.25", "-0", "-0.2", "-0.2500",
        ),
        (
            -250.0,
            "-250.0",
            "-250.00",
            "-25000%",
            "-250",
            "-250",
            "-250.0",
            "-250.0000",
        ),
        (
            -0.125, "-0.125", "-0.12", "-12%", "-0.125", "-0", "-0.1", "-0.1250",
        ),
        (
            -125.0,
            "-125.0",
            "-125.00",
            "-12500%",
            "-125",
            "-125",
            "-125.0",
            "-125.0000",
        ),
        (0.0, "0.0", "0.00", "0%", "0", "0", "+0.0", "0.0000"),
        (0.0, "0.0", "0.00", "0%", "0", "0", "+0.0", "0.0000"),
        (
            0.125, "0.125", "0.12", "12%", "0.125", "0", "+0.1", "0.1250",
        ),
        (
            125.0, "125.0", "125.00", "12500%", "125", "125", "+125.0", "125.0000",
        ),
        (0.25, "0.25", "0.25", "25%", "0.25", "0", "+0.2", "0.2500"),
        (
            250.0, "250.0", "250.00", "25000%", "250", "250", "+250.0", "250.0000",
        ),
        (
            0.375, "0.375", "0.38", "38%", "0.375", "0", "+0.4", "0.3750",
        ),
        (
            375.0, "375.0", "375.00", "37500%", "375", "375", "+375.0", "375.0000",
        ),
        (0.5, "0.5", "0.50", "50%", "0.5", "0", "+0.5", "0.5000"),
        (
            500.0, "500.0", "500.00", "50000%", "500", "500", "+500.0", "500.0000",
        ),
        (
            0.625, "0.625", "0.62", "62%", "0.625", "1", "+0.6", "0.6250",
        ),
        (
            625.0, "625.0", "625.00", "62500%", "625", "625", "+625.0", "625.0000",
        ),
        (0.75, "0.75", "0.75", "75%", "0.75", "1", "+0.8", "0.7500"),
        (
            750.0, "750.0", "750.00", "75000%", "750", "750", "+750.0", "750.0000",
        ),
        (
            0.875, "0.875", "0.88", "88%", "0.875", "1", "+0.9", "0.8750",
        ),
        (
            875.0, "875.0", "875.00", "87500%", "875", "875", "+875.0", "875.0000",
        ),
        (1.0, "1.0", "1.00", "100%", "1", "1", "+1.0", "1.0000"),
        (
            1000.0,
            "1000.0",
            "1000.00",
            "100000%",
            "1000",
            "1,000",
            "+1000.0",
            "1000.0000",
        ),
        (
            1.125, "1.125", "1.12", "112%", "1.125", "1", "+1.1", "1.1250",
        ),
        (
            1125.0,
            "1125.0",
            "1125.00",
            "112500%",
            "1125",
            "1,125",
            "+1125.0",
            "1125.0000",
        ),
        (1.25, "1.25", "1.25", "125%", "1.25", "1", "+1.2", "1.2500"),
        (
            1250.0,
            "1250.0",
            "1250.00",
            "125000%",
            "1250",
            "1,250",
            "+1250.0",
            "1250.0000",
        ),
        (
            1.375, "1.375", "1.38", "138%", "1.375", "1", "+1.4", "1.3750",
        ),
        (
            1375.0,
            "1375.0",
            "1375.00",
            "137500%",
            "1375",
            "1,375",
            "+1375.0",
            "1375.0000",
        ),
        (1.5, "1.5", "1.50", "150%", "1.5", "2", "+1.5", "1.5000"),
        (
            1500.0,
            "1500.0",
            "1500.00",
            "150000%",
            "1500",
            "1,500",
            "+1500.0",
            "1500.0000",
        ),
    ];
    // Generated by Python 3.11.7: (x, k, round(x, k))
    // Values like 3.14 are rounding results, not stand-ins for constants.
    #[allow(clippy::approx_constant)]
    const ROUND_CASES: &[(f64, i32, f64)] = &[
        (0.0, -3, 0.0),
        (0.0, -1, 0.0),
        (0.0, 0, 0.0),
        (0.0, 1, 0.0),
        (0.0, 2, 0.0),
        (0.0, 3, 0.0),
        (0.0, 5, 0.0),
        (-0.0, -3, -0.0),
        (-0.0, -1, -0.0),
        (-0.0, 0, -0.0),
        (-0.0, 1, -0.0),
        (-0.0, 2, -0.0),
        (-0.0, 3, -0.0),
        (-0.0, 5, -0.0),
        (1.0, -3, 0.0),
        (1.0, -1, 0.0),
        (1.0, 0, 1.0),
        (1.0, 1, 1.0),
        (1.0, 2, 1.0),
        (1.0, 3, 1.0),
        (1.0, 5, 1.0),
        (-1.0, -3, -0.0),
        (-1.0, -1, -0.0),
        (-1.0, 0, -1.0),
        (-1.0, 1, -1.0),
        (-1.0, 2, -1.0),
        (-1.0, 3, -1.0),
        (-1.0, 5, -1.0),
        (0.5, -3, 0.0),
        (0.5, -1, 0.0),
        (0.5, 0, 0.0),
        (0.5, 1, 0.5),
        (0.5, 2, 0.5),
        (0.5, 3, 0.5),
        (0.5, 5, 0.5),
        (0.125, -3, 0.0),
        (0.125, -1, 0.0),
        (0.125, 0, 0.0),
        (0.125, 1, 0.1),
        (0.125, 2, 0.12),
        (0.125, 3, 0.125),
        (0.125, 5, 0.125),
        (0.375, -3, 0.0),
        (0.375, -1, 0.0),
        (0.375, 0, 0.0),
        (0.375, 1, 0.4),
        (0.375, 2, 0.38),
        (0.375, 3, 0.375),
        (0.375, 5, 0.375),
        (2.675, -3, 0.0),
        (2.675, -1, 0.0),
        (2.675, 0, 3.0),
        (2.675, 1, 2.7),
        (2.675, 2, 2.67),
        (2.675, 3, 2.675),
        (2.675, 5, 2.675),
        (1.5, -3, 0.0),
        (1.5, -1, 0.0),
        (1.5, 0, 2.0),
        (1.5, 1, 1.5),
        (1.5, 2, 1.5),
        (1.5, 3, 1.5),
        (1.5, 5, 1.5),
        (2.5, -3, 0.0),
        (2.5, -1, 0.0),
        (2.5, 0, 2.0),
        (2.5, 1, 2.5),
        (2.5, 2, 2.5),
        (2.5, 3, 2.5),
        (2.5, 5, 2.5),
        (-2.5, -3, -0.0),
        (-2.5, -1, -0.0),
        (-2.5, 0, -2.0),
        (-2.5, 1, -2.5),
        (-2.5, 2, -2.5),
        (-2.5, 3, -2.5),
        (-2.5, 5, -2.5),
        (0.8333333333333334, -3, 0.0),
        (0.8333333333333334, -1, 0.0),
        (0.8333333333333334, 0, 1.0),
        (0.8333333333333334, 1, 0.8),
        (0.8333333333333334, 2, 0.83),
        (0.8333333333333334, 3, 0.833),
        (0.8333333333333334, 5, 0.83333),
        (0.3333333333333333, -3, 0.0),
        (0.3333333333333333, -1, 0.0),
        (0.3333333333333333, 0, 0.0),
        (0.3333333333333333, 1, 0.3),
        (0.3333333333333333, 2, 0.33),
        (0.3333333333333333, 3, 0.333),
        (0.3333333333333333, 5, 0.33333),
        (0.6666666666666666, -3, 0.0),
        (0.6666666666666666, -1, 0.0),
        (0.6666666666666666, 0, 1.0),
        (0.6666666666666666, 1, 0.7),
        (0.6666666666666666, 2, 0.67),
        (0.6666666666666666, 3, 0.667),
        (0.6666666666666666, 5, 0.66667),
        (0.1, -3, 0.0),
        (0.1, -1, 0.0),
        (0.1, 0, 0.0),
        (0.1, 1, 0.1),
        (0.1, 2, 0.1),
        (0.1, 3, 0.1),
        (0.1, 5, 0.1),
        (0.2, -3, 0.0),
        (0.2, -1, 0.0),
        (0.2, 0, 0.0),
        (0.2, 1, 0.2),
        (0.2, 2, 0.2),
        (0.2, 3, 0.2),
        (0.2, 5, 0.2),
        (0.3, -3, 0.0),
        (0.3, -1, 0.0),
        (0.3, 0, 0.0),
        (0.3, 1, 0.3),
        (0.3, 2, 0.3),
        (0.3, 3, 0.3),
        (0.3, 5, 0.3),
        (0.7, -3, 0.0),
        (0.7, -1, 0.0),
        (0.7, 0, 1.0),
        (0.7, 1, 0.7),
        (0.7, 2, 0.7),
        (0.7, 3, 0.7),
        (0.7, 5, 0.7),
        (750.0, -3, 1000.0),
        (750.0, -1, 750.0),
        (750.0, 0, 750.0),
        (750.0, 1, 750.0),
        (750.0, 2, 750.0),
        (750.0, 3, 750.0),
        (750.0, 5, 750.0),
        (1234567.0, -3, 1235000.0),
        (1234567.0, -1, 1234570.0),
        (1234567.0, 0, 1234567.0),
        (1234567.0, 1, 1234567.0),
        (1234567.0, 2, 1234567.0),
        (1234567.0, 3, 1234567.0),
        (1234567.0, 5, 1234567.0),
        (1e-05, -3, 0.0),
        (1e-05, -1, 0.0),
        (1e-05, 0, 0.0),
        (1e-05, 1, 0.0),
        (1e-05, 2, 0.0),
        (1e-05, 3, 0.0),
        (1e-05, 5, 1e-05),
        (0.0001, -3, 0.0),
        (0.0001, -1, 0.0),
        (0.0001, 0, 0.0),
        (0.0001, 1, 0.0),
        (0.0001, 2, 0.0),
        (0.0001, 3, 0.0),
        (0.0001, 5, 0.0001),
        (100000.0, -3, 100000.0),
        (100000.0, -1, 100000.0),
        (100000.0, 0, 100000.0),
        (100000.0, 1, 100000.0),
        (100000.0, 2, 100000.0),
        (100000.0, 3, 100000.0),
        (100000.0, 5, 100000.0),
        (1000000.0, -3, 1000000.0),
        (1000000.0, -1, 1000000.0),
        (1000000.0, 0, 1000000.0),
        (1000000.0, 1, 1000000.0),
        (1000000.0, 2, 1000000.0),
        (1000000.0, 3, 1000000.0),
        (1000000.0, 5, 1000000.0),
        (999999.5, -3, 1000000.0),
        (999999.5, -1, 1000000.0),
        (999999.5, 0, 1000000.0),
        (999999.5, 1, 999999.5),
        (999999.5, 2, 999999.5),
        (999999.5, 3, 999999.5),
        (999999.5, 5, 999999.5),
        (9999995.0, -3, 10000000.0),
        (9999995.0, -1, 10000000.0),
        (9999995.0, 0, 9999995.0),
        (9999995.0, 1, 9999995.0),
        (9999995.0, 2, 9999995.0),
        (9999995.0, 3, 9999995.0),
        (9999995.0, 5, 9999995.0),
        (1.234565e-05, -3, 0.0),
        (1.234565e-05, -1, 0.0),
        (1.234565e-05, 0, 0.0),
        (1.234565e-05, 1, 0.0),
        (1.234565e-05, 2, 0.0),
        (1.234565e-05, 3, 0.0),
        (1.234565e-05, 5, 1e-05),
        (1234.5, -3, 1000.0),
        (1234.5, -1, 1230.0),
        (1234.5, 0, 1234.0),
        (1234.5, 1, 1234.5),
        (1234.5, 2, 1234.5),
        (1234.5, 3, 1234.5),
        (1234.5, 5, 1234.5),
        (-1234.5, -3, -1000.0),
        (-1234.5, -1, -1230.0),
        (-1234.5, 0, -1234.0),
        (-1234.5, 1, -1234.5),
        (-1234.5, 2, -1234.5),
        (-1234.5, 3, -1234.5),
        (-1234.5, 5, -1234.5),
        (21450.0, -3, 21000.0),
        (21450.0, -1, 21450.0),
        (21450.0, 0, 21450.0),
        (21450.0, 1, 21450.0),
        (21450.0, 2, 21450.0),
        (21450.0, 3, 21450.0),
        (21450.0, 5, 21450.0),
        (1e+16, -3, 1e+16),
        (1e+16, -1, 1e+16),
        (1e+16, 0, 1e+16),
        (1e+16, 1, 1e+16),
        (1e+16, 2, 1e+16),
        (1e+16, 3, 1e+16),
        (1e+16, 5, 1e+16),
        (1000000000000000.0, -3, 1000000000000000.0),
        (1000000000000000.0, -1, 1000000000000000.0),
        (1000000000000000.0, 0, 1000000000000000.0),
        (1000000000000000.0, 1, 1000000000000000.0),
        (1000000000000000.0, 2, 1000000000000000.0),
        (1000000000000000.0, 3, 1000000000000000.0),
        (1000000000000000.0, 5, 1000000000000000.0),
        (9999999999999998.0, -3, 1e+16),
        (9999999999999998.0, -1, 1e+16),
        (9999999999999998.0, 0, 9999999999999998.0),
        (9999999999999998.0, 1, 9999999999999998.0),
        (9999999999999998.0, 2, 9999999999999998.0),
        (9999999999999998.0, 3, 9999999999999998.0),
        (9999999999999998.0, 5, 9999999999999998.0),
        (3.4285169936421056e-07, -3, 0.0),
        (3.4285169936421056e-07, -1, 0.0),
        (3.4285169936421056e-07, 0, 0.0),
        (3.4285169936421056e-07, 1, 0.0),
        (3.4285169936421056e-07, 2, 0.0),
        (3.4285169936421056e-07, 3, 0.0),
        (3.4285169936421056e-07, 5, 0.0),
        (1e+22, -3, 1e+22),
        (1e+22, -1, 1e+22),
        (1e+22, 0, 1e+22),
        (1e+22, 1, 1e+22),
        (1e+22, 2, 1e+22),
        (1e+22, 3, 1e+22),
        (1e+22, 5, 1e+22),
        (1e-07, -3, 0.0),
        (1e-07, -1, 0.0),
        (1e-07, 0, 0.0),
        (1e-07, 1, 0.0),
        (1e-07, 2, 0.0),
        (1e-07, 3, 0.0),
        (1e-07, 5, 0.0),
        (123456789.123, -3, 123457000.0),
        (123456789.123, -1, 123456790.0),
        (123456789.123, 0, 123456789.0),
        (123456789.123, 1, 123456789.1),
        (123456789.123, 2, 123456789.12),
        (123456789.123, 3, 123456789.123),
        (123456789.123, 5, 123456789.123),
        (5e-324, -3, 0.0),
        (5e-324, -1, 0.0),
        (5e-324, 0, 0.0),
        (5e-324, 1, 0.0),
        (5e-324, 2, 0.0),
        (5e-324, 3, 0.0),
        (5e-324, 5, 0.0),
        (1.7976931348623157e+308, -3, 1.7976931348623157e+308),
        (1.7976931348623157e+308, -1, 1.7976931348623157e+308),
        (1.7976931348623157e+308, 0, 1.7976931348623157e+308),
        (1.7976931348623157e+308, 1, 1.7976931348623157e+308),
        (1.7976931348623157e+308, 2, 1.7976931348623157e+308),
        (1.7976931348623157e+308, 3, 1.7976931348623157e+308),
        (1.7976931348623157e+308, 5, 1.7976931348623157e+308),
        (2.2250738585072014e-308, -3, 0.0),
        (2.2250738585072014e-308, -1, 0.0),
        (2.2250738585072014e-308, 0, 0.0),
        (2.2250738585072014e-308, 1, 0.0),
        (2.2250738585072014e-308, 2, 0.0),
        (2.2250738585072014e-308, 3, 0.0),
        (2.2250738585072014e-308, 5, 0.0),
        (32.94, -3, 0.0),
        (32.94, -1, 30.0),
        (32.94, 0, 33.0),
        (32.94, 1, 32.9),
        (32.94, 2, 32.94),
        (32.94, 3, 32.94),
        (32.94, 5, 32.94),
        (-5.0, -3, -0.0),
        (-5.0, -1, -0.0),
        (-5.0, 0, -5.0),
        (-5.0, 1, -5.0),
        (-5.0, 2, -5.0),
        (-5.0, 3, -5.0),
        (-5.0, 5, -5.0),
        (0.05, -3, 0.0),
        (0.05, -1, 0.0),
        (0.05, 0, 0.0),
        (0.05, 1, 0.1),
        (0.05, 2, 0.05),
        (0.05, 3, 0.05),
        (0.05, 5, 0.05),
        (0.15, -3, 0.0),
        (0.15, -1, 0.0),
        (0.15, 0, 0.0),
        (0.15, 1, 0.1),
        (0.15, 2, 0.15),
        (0.15, 3, 0.15),
        (0.15, 5, 0.15),
        (0.25, -3, 0.0),
        (0.25, -1, 0.0),
        (0.25, 0, 0.0),
        (0.25, 1, 0.2),
        (0.25, 2, 0.25),
        (0.25, 3, 0.25),
        (0.25, 5, 0.25),
        (0.35, -3, 0.0),
        (0.35, -1, 0.0),
        (0.35, 0, 0.0),
        (0.35, 1, 0.3),
        (0.35, 2, 0.35),
        (0.35, 3, 0.35),
        (0.35, 5, 0.35),
        (0.45, -3, 0.0),
        (0.45, -1, 0.0),
        (0.45, 0, 0.0),
        (0.45, 1, 0.5),
        (0.45, 2, 0.45),
        (0.45, 3, 0.45),
        (0.45, 5, 0.45),
        (-0.05, -3, -0.0),
        (-0.05, -1, -0.0),
        (-0.05, 0, -0.0),
        (-0.05, 1, -0.1),
        (-0.05, 2, -0.05),
        (-0.05, 3, -0.05),
        (-0.05, 5, -0.05),
        (12.5, -3, 0.0),
        (12.5, -1, 10.0),
        (12.5, 0, 12.0),
        (12.5, 1, 12.5),
        (12.5, 2, 12.5),
        (12.5, 3, 12.5),
        (12.5, 5, 12.5),
        (13.5, -3, 0.0),
        (13.5, -1, 10.0),
        (13.5, 0, 14.0),
        (13.5, 1, 13.5),
        (13.5, 2, 13.5),
        (13.5, 3, 13.5),
        (13.5, 5, 13.5),
        (-0.0001, -3, -0.0),
        (-0.0001, -1, -0.0),
        (-0.0001, 0, -0.0),
        (-0.0001, 1, -0.0),
        (-0.0001, 2, -0.0),
        (-0.0001, 3, -0.0),
        (-0.0001, 5, -0.0001),
        (99.99, -3, 0.0),
        (99.99, -1, 100.0),
        (99.99, 0, 100.0),
        (99.99, 1, 100.0),
        (99.99, 2, 99.99),
        (99.99, 3, 99.99),
        (99.99, 5, 99.99),
        (99.95, -3, 0.0),
        (99.95, -1, 100.0),
        (99.95, 0, 100.0),
        (99.95, 1, 100.0),
        (99.95, 2, 99.95),
        (99.95, 3, 99.95),
        (99.95, 5, 99.95),
        (0.995, -3, 0.0),
        (0.995, -1, 0.0),
        (0.995, 0, 1.0),
        (0.995, 1, 1.0),
        (0.995, 2, 0.99),
        (0.995, 3, 0.995),
        (0.995, 5, 0.995),
        (0.9949999, -3, 0.0),
        (0.9949999, -1, 0.0),
        (0.9949999, 0, 1.0),
        (0.9949999, 1, 1.0),
        (0.9949999, 2, 0.99),
        (0.9949999, 3, 0.995),
        (0.9949999, 5, 0.995),
        (1e+100, -3, 1e+100),
        (1e+100, -1, 1e+100),
        (1e+100, 0, 1e+100),
        (1e+100, 1, 1e+100),
        (1e+100, 2, 1e+100),
        (1e+100, 3, 1e+100),
        (1e+100, 5, 1e+100),
        (1.23e-18, -3, 0.0),
        (1.23e-18, -1, 0.0),
        (1.23e-18, 0, 0.0),
        (1.23e-18, 1, 0.0),
        (1.23e-18, 2, 0.0),
        (1.23e-18, 3, 0.0),
        (1.23e-18, 5, 0.0),
        (4.35, -3, 0.0),
        (4.35, -1, 0.0),
        (4.35, 0, 4.0),
        (4.35, 1, 4.3),
        (4.35, 2, 4.35),
        (4.35, 3, 4.35),
        (4.35, 5, 4.35),
        (0.045, -3, 0.0),
        (0.045, -1, 0.0),
        (0.045, 0, 0.0),
        (0.045, 1, 0.0),
        (0.045, 2, 0.04),
        (0.045, 3, 0.045),
        (0.045, 5, 0.045),
        (1.005, -3, 0.0),
        (1.005, -1, 0.0),
        (1.005, 0, 1.0),
        (1.005, 1, 1.0),
        (1.005, 2, 1.0),
        (1.005, 3, 1.005),
        (1.005, 5, 1.005),
        (8.325, -3, 0.0),
        (8.325, -1, 10.0),
        (8.325, 0, 8.0),
        (8.325, 1, 8.3),
        (8.325, 2, 8.32),
        (8.325, 3, 8.325),
        (8.325, 5, 8.325),
        (0.0001, -3, 0.0),
        (0.0001, -1, 0.0),
        (0.0001, 0, 0.0),
        (0.0001, 1, 0.0),
        (0.0001, 2, 0.0),
        (0.0001, 3, 0.0),
        (0.0001, 5, 0.0001),
        (9.999e-05, -3, 0.0),
        (9.999e-05, -1, 0.0),
        (9.999e-05, 0, 0.0),
        (9.999e-05, 1, 0.0),
        (9.999e-05, 2, 0.0),
        (9.999e-05, 3, 0.0),
        (9.999e-05, 5, 0.0001),
        (314159.26535, -3, 314000.0),
        (314159.26535, -1, 314160.0),
        (314159.26535, 0, 314159.0),
        (314159.26535, 1, 314159.3),
        (314159.26535, 2, 314159.27),
        (314159.26535, 3, 314159.265),
        (314159.26535, 5, 314159.26535),
        (5e-05, -3, 0.0),
        (5e-05, -1, 0.0),
        (5e-05, 0, 0.0),
        (5e-05, 1, 0.0),
        (5e-05, 2, 0.0),
        (5e-05, 3, 0.0),
        (5e-05, 5, 5e-05),
        (6.0221409e+23, -3, 6.0221409e+23),
        (6.0221409e+23, -1, 6.0221409e+23),
        (6.0221409e+23, 0, 6.0221409e+23),
        (6.0221409e+23, 1, 6.0221409e+23),
        (6.0221409e+23, 2, 6.0221409e+23),
        (6.0221409e+23, 3, 6.0221409e+23),
        (6.0221409e+23, 5, 6.0221409e+23),
        (100.0, -3, 0.0),
        (100.0, -1, 100.0),
        (100.0, 0, 100.0),
        (100.0, 1, 100.0),
        (100.0, 2, 100.0),
        (100.0, 3, 100.0),
        (100.0, 5, 100.0),
        (1000.0, -3, 1000.0),
        (1000.0, -1, 1000.0),
        (1000.0, 0, 1000.0),
        (1000.0, 1, 1000.0),
        (1000.0, 2, 1000.0),
        (1000.0, 3, 1000.0),
        (1000.0, 5, 1000.0),
        (10000.0, -3, 10000.0),
        (10000.0, -1, 10000.0),
        (10000.0, 0, 10000.0),
        (10000.0, 1, 10000.0),
        (10000.0, 2, 10000.0),
        (10000.0, 3, 10000.0),
        (10000.0, 5, 10000.0),
        (65536.0, -3, 66000.0),
        (65536.0, -1, 65540.0),
        (65536.0, 0, 65536.0),
        (65536.0, 1, 65536.0),
        (65536.0, 2, 65536.0),
        (65536.0, 3, 65536.0),
        (65536.0, 5, 65536.0),
        (12345678.0, -3, 12346000.0),
        (12345678.0, -1, 12345680.0),
        (12345678.0, 0, 12345678.0),
        (12345678.0, 1, 12345678.0),
        (12345678.0, 2, 12345678.0),
        (12345678.0, 3, 12345678.0),
        (12345678.0, 5, 12345678.0),
        (999.5, -3, 1000.0),
        (999.5, -1, 1000.0),
        (999.5, 0, 1000.0),
        (999.5, 1, 999.5),
        (999.5, 2, 999.5),
        (999.5, 3, 999.5),
        (999.5, 5, 999.5),
        (5.1e-06, -3, 0.0),
        (5.1e-06, -1, 0.0),
        (5.1e-06, 0, 0.0),
        (5.1e-06, 1, 0.0),
        (5.1e-06, 2, 0.0),
        (5.1e-06, 3, 0.0),
        (5.1e-06, 5, 1e-05),
        (0.14285714285714285, -3, 0.0),
        (0.14285714285714285, -1, 0.0),
        (0.14285714285714285, 0, 0.0),
        (0.14285714285714285, 1, 0.1),
        (0.14285714285714285, 2, 0.14),
        (0.14285714285714285, 3, 0.143),
        (0.14285714285714285, 5, 0.14286),
        (3.142857142857143, -3, 0.0),
        (3.142857142857143, -1, 0.0),
        (3.142857142857143, 0, 3.0),
        (3.142857142857143, 1, 3.1),
        (3.142857142857143, 2, 3.14),
        (3.142857142857143, 3, 3.143),
        (3.142857142857143, 5, 3.14286),
        (-0.14285714285714285, -3, -0.0),
        (-0.14285714285714285, -1, -0.0),
        (-0.14285714285714285, 0, -0.0),
        (-0.14285714285714285, 1, -0.1),
        (-0.14285714285714285, 2, -0.14),
        (-0.14285714285714285, 3, -0.143),
        (-0.14285714285714285, 5, -0.14286),
        (-1.989032661366619e+244, -3, -1.989032661366619e+244),
        (-1.989032661366619e+244, -1, -1.989032661366619e+244),
        (-1.989032661366619e+244, 0, -1.989032661366619e+244),
        (-1.989032661366619e+244, 1, -1.989032661366619e+244),
        (-1.989032661366619e+244, 2, -1.989032661366619e+244),
        (-1.989032661366619e+244, 3, -1.989032661366619e+244),
        (-1.989032661366619e+244, 5, -1.989032661366619e+244),
        (7.761117632285041e+178, -3, 7.761117632285041e+178),
        (7.761117632285041e+178, -1, 7.761117632285041e+178),
        (7.761117632285041e+178, 0, 7.761117632285041e+178),
        (7.761117632285041e+178, 1, 7.761117632285041e+178),
        (7.761117632285041e+178, 2, 7.761117632285041e+178),
        (7.761117632285041e+178, 3, 7.761117632285041e+178),
        (7.761117632285041e+178, 5, 7.761117632285041e+178),
        (3.980498358697587e-249, -3, 0.0),
        (3.980498358697587e-249, -1, 0.0),
        (3.980498358697587e-249, 0, 0.0),
        (3.980498358697587e-249, 1, 0.0),
        (3.980498358697587e-249, 2, 0.0),
        (3.980498358697587e-249, 3, 0.0),
        (3.980498358697587e-249, 5, 0.0),
        (-1.5432835417340557e+88, -3, -1.5432835417340557e+88),
        (-1.5432835417340557e+88, -1, -1.5432835417340557e+88),
        (-1.5432835417340557e+88, 0, -1.5432835417340557e+88),
        (-1.5432835417340557e+88, 1, -1.5432835417340557e+88),
        (-1.5432835417340557e+88, 2, -1.5432835417340557e+88),
        (-1.5432835417340557e+88, 3, -1.5432835417340557e+88),
        (-1.5432835417340557e+88, 5, -1.5432835417340557e+88),
        (1250.4, -3, 1000.0),
        (1250.4, -1, 1250.0),
        (1250.4, 0, 1250.0),
        (1250.4, 1, 1250.4),
        (1250.4, 2, 1250.4),
        (1250.4, 3, 1250.4),
        (1250.4, 5, 1250.4),
        (1249.6, -3, 1000.0),
        (1249.6, -1, 1250.0),
        (1249.6, 0, 1250.0),
        (1249.6, 1, 1249.6),
        (1249.6, 2, 1249.6),
        (1249.6, 3, 1249.6),
        (1249.6, 5, 1249.6),
        (1250.0, -3, 1000.0),
        (1250.0, -1, 1250.0),
        (1250.0, 0, 1250.0),
        (1250.0, 1, 1250.0),
        (1250.0, 2, 1250.0),
        (1250.0, 3, 1250.0),
        (1250.0, 5, 1250.0),
        (1350.0, -3, 1000.0),
        (1350.0, -1, 1350.0),
        (1350.0, 0, 1350.0),
        (1350.0, 1, 1350.0),
        (1350.0, 2, 1350.0),
        (1350.0, 3, 1350.0),
        (1350.0, 5, 1350.0),
        (15.0, -3, 0.0),
        (15.0, -1, 20.0),
        (15.0, 0, 15.0),
        (15.0, 1, 15.0),
        (15.0, 2, 15.0),
        (15.0, 3, 15.0),
        (15.0, 5, 15.0),
        (25.0, -3, 0.0),
        (25.0, -1, 20.0),
        (25.0, 0, 25.0),
        (25.0, 1, 25.0),
        (25.0, 2, 25.0),
        (25.0, 3, 25.0),
        (25.0, 5, 25.0),
        (-25.0, -3, -0.0),
        (-25.0, -1, -20.0),
        (-25.0, 0, -25.0),
        (-25.0, 1, -25.0),
        (-25.0, 2, -25.0),
        (-25.0, 3, -25.0),
        (-25.0, 5, -25.0),
        (4.0, -3, 0.0),
        (4.0, -1, 0.0),
        (4.0, 0, 4.0),
        (4.0, 1, 4.0),
        (4.0, 2, 4.0),
        (4.0, 3, 4.0),
        (4.0, 5, 4.0),
        (-4.0, -3, -0.0),
        (-4.0, -1, -0.0),
        (-4.0, 0, -4.0),
        (-4.0, 1, -4.0),
        (-4.0, 2, -4.0),
        (-4.0, 3, -4.0),
        (-4.0, 5, -4.0),
        (0.5, -3, 0.0),
        (0.5, -1, 0.0),
        (0.5, 0, 0.0),
        (0.5, 1, 0.5),
        (0.5, 2, 0.5),
        (0.5, 3, 0.5),
        (0.5, 5, 0.5),
        (1.5, -3, 0.0),
        (1.5, -1, 0.0),
        (1.5, 0, 2.0),
        (1.5, 1, 1.5),
        (1.5, 2, 1.5),
        (1.5, 3, 1.5),
        (1.5, 5, 1.5),
        (123.456, -3, 0.0),
        (123.456, -1, 120.0),
        (123.456, 0, 123.0),
        (123.456, 1, 123.5),
        (123.456, 2, 123.46),
        (123.456, 3, 123.456),
        (123.456, 5, 123.456),
        (1e+300, -3, 1e+300),
        (1e+300, -1, 1e+300),
        (1e+300, 0, 1e+300),
        (1e+300, 1, 1e+300),
        (1e+300, 2, 1e+300),
        (1e+300, 3, 1e+300),
        (1e+300, 5, 1e+300),
        (2.5e-300, -3, 0.0),
        (2.5e-300, -1, 0.0),
        (2.5e-300, 0, 0.0),
        (2.5e-300, 1, 0.0),
        (2.5e-300, 2, 0.0),
        (2.5e-300, 3, 0.0),
        (2.5e-300, 5, 0.0),
        (123.456, 400, 123.456),
        (123.456, -400, 0.0),
        (-123.456, -400, -0.0),
        (1.7976931348623157e+308, -300, 1.79769313e+308),
        (0.1, 323, 0.1),
        (1e-320, 322, 1e-320),
        (1e-320, 321, 1e-320),
    ];
    // Generated by Python 3.11.7: (s, repr(s))
    const REPR_CASES: &[(&str, &str)] = &[
        ("", "''"),
        ("it's", "\"it's\""),
        ("a\"b", "'a\"b'"),
        ("x\u{a}y", "'x\\ny'"),
        ("\u{e9}\u{200b}", "'\u{e9}\\u200b'"),
        ("both'\"", "'both\\'\"'"),
        ("tab\u{9}here", "'tab\\there'"),
        ("cr\u{d}", "'cr\\r'"),
        ("back\\slash", "'back\\\\slash'"),
        ("\u{0}\u{1}\u{1f}\u{7f}", "'\\x00\\x01\\x1f\\x7f'"),
        (
            "\u{80}\u{85}\u{a0}\u{ad}\u{ff}",
            "'\\x80\\x85\\xa0\\xad\u{ff}'",
        ),
        ("\u{2028}\u{2029}\u{3000}", "'\\u2028\\u2029\\u3000'"),
        ("\u{feff}\u{fffe}\u{ffff}", "'\\ufeff\\ufffe\\uffff'"),
        ("\u{1f600} emoji", "'\u{1f600} emoji'"),
        ("\u{e0001}", "'\\U000e0001'"),
        ("\u{10ffff}\u{f0000}", "'\\U0010ffff\\U000f0000'"),
        ("\u{65e5}\u{672c}\u{8a9e}", "'\u{65e5}\u{672c}\u{8a9e}'"),
        (
            "\u{3a9}\u{2248}\u{e7}\u{221a}",
            "'\u{3a9}\u{2248}\u{e7}\u{221a}'",
        ),
        ("\u{378}", "'\\u0378'"),
        ("'", "\"'\""),
        ("\"", "'\"'"),
        ("'\"'", "'\\'\"\\''"),
        ("\u{1680} \u{2000}", "'\\u1680 \\u2000'"),
        ("\u{61c}\u{200e}", "'\\u061c\\u200e'"),
        ("combining e\u{301}", "'combining e\u{301}'"),
        ("\u{1d400}", "'\u{1d400}'"),
        ("\u{16fe4}", "'\u{16fe4}'"),
        ("\u{890}", "'\\u0890'"),
        ("\u{1faf8}", "'\\U0001faf8'"),
    ];
    // Generated by Python 3.11.7: (s, repr(float(s)) or None)
    const FLOAT_PARSE_CASES: &[(&str, Option<&str>)] = &[
        ("1.", Some("1.0")),
        (".5", Some("0.5")),
        ("1.e5", Some("100000.0")),
        ("+.5", Some("0.5")),
        ("-nan", Some("nan")),
        ("inF", Some("inf")),
        ("iNfInItY", Some("inf")),
        ("-Infinity", Some("-inf")),
        ("1e", None),
        ("e5", None),
        (".", None),
        ("-.e1", None),
        ("1E+05", Some("100000.0")),
        ("1e1_0", Some("10000000000.0")),
        ("1_.5", None),
        ("1._5", None),
        ("1_000.000_1", Some("1000.0001")),
        ("\u{661}.\u{665}", Some("1.5")),
        ("\u{1c}2.5\u{1f}", None),
        (" in f", None),
        ("infinit", None),
        ("1e400", Some("inf")),
        ("-1e400", Some("-inf")),
        ("1e-400", Some("0.0")),
        ("-0", Some("-0.0")),
        ("nan ", Some("nan")),
        ("1.5e-1_", None),
        ("2__0", None),
        (" 12.5 ", Some("12.5")),
        ("\u{85}1\u{85}", Some("1.0")),
        ("\u{2028}1", Some("1.0")),
        ("\u{b}1\u{c}", Some("1.0")),
        ("1\u{0}", None),
        ("", None),
        (" ", None),
        ("+", None),
        ("-", None),
        ("0x10", None),
        ("1,5", None),
        ("\u{661}\u{662}\u{663}", Some("123.0")),
        ("\u{1d7cf}\u{1d7d0}", Some("12.0")),
        ("1e+", None),
        ("1e-5", Some("1e-05")),
        ("00012", Some("12.0")),
        ("--1", None),
        ("+-1", None),
        ("1 2", None),
        ("\u{ff13}.\u{ff11}\u{ff14}", Some("3.14")),
        ("0.1", Some("0.1")),
        ("3.4285169936421056e-07", Some("3.4285169936421056e-07")),
        (
            "123456789012345678901234567890",
            Some("1.2345678901234568e+29"),
        ),
        ("_1", None),
        ("1_", None),
        ("1e_5", None),
        ("1.5_e5", None),
        ("inf_", None),
        ("na n", None),
        ("infinity ", Some("inf")),
        ("Nan", Some("nan")),
        ("\u{bd}", None),
    ];
    // Generated by Python 3.11.7: (s, int(s) or None; values beyond i64 marked None)
    const INT_PARSE_CASES: &[(&str, Option<i64>)] = &[
        ("- 1", None),
        (" -1 ", Some(-1)),
        ("1_000", Some(1000)),
        ("+5", Some(5)),
        ("_1", None),
        ("1_", None),
        ("010", Some(10)),
        ("\u{661}\u{662}", Some(12)),
        ("1__0", None),
        ("\u{2000}1\u{3000}", Some(1)),
        ("0x10", None),
        ("-0", Some(0)),
        ("+_1", None),
        ("\u{1c}1", None),
        ("\u{85}1\u{85}", Some(1)),
        ("1.0", None),
        ("", None),
        (" ", None),
        ("9223372036854775807", Some(9223372036854775807)),
        ("-9223372036854775808", Some(i64::MIN)),
        ("9223372036854775808", None),
        ("-9223372036854775809", None),
        ("\u{ff11}\u{ff12}", Some(12)),
        ("\u{1d7d7}", Some(9)),
        ("1 2", None),
        ("12a", None),
        ("+", None),
        ("-", None),
        ("0_0", Some(0)),
        ("000", Some(0)),
        ("1e3", None),
        ("\u{663}_\u{663}", Some(33)),
    ];
    // Generated by Python 3.11.7: (s, s.lower())
    const LOWER_CASES: &[(&str, &str)] = &[
        ("ABC", "abc"),
        ("\u{130}stanbul", "i\u{307}stanbul"),
        ("\u{391}\u{3a3}", "\u{3b1}\u{3c2}"),
        ("\u{391}\u{3a3} \u{392}", "\u{3b1}\u{3c2} \u{3b2}"),
        ("\u{3a3}", "\u{3c3}"),
        ("\u{391}\u{3a3}\u{391}", "\u{3b1}\u{3c3}\u{3b1}"),
        ("\u{391}.\u{3a3}", "\u{3b1}.\u{3c2}"),
        ("\u{391}\u{3a3}.", "\u{3b1}\u{3c2}."),
        ("\u{3a3}'\u{3a3}", "\u{3c3}'\u{3c2}"),
        ("\u{1e9e}", "\u{df}"),
        ("\u{1c5}", "\u{1c6}"),
        (
            "\u{c0}\u{c9}\u{ce}\u{d5}\u{dc}",
            "\u{e0}\u{e9}\u{ee}\u{f5}\u{fc}",
        ),
        (
            "\u{38c}\u{3a3}\u{39f}\u{3a3}",
            "\u{3cc}\u{3c3}\u{3bf}\u{3c2}",
        ),
        ("\u{216b}", "\u{217b}"),
        ("\u{24b6}", "\u{24d0}"),
        ("\u{10400}", "\u{10428}"),
        ("\u{1c89}x", "\u{1c89}x"),
        ("A\u{a7cb}B", "a\u{a7cb}b"),
        (
            "\u{391}\u{a7cb}\u{3a3}\u{a7cb}",
            "\u{3b1}\u{a7cb}\u{3c3}\u{a7cb}",
        ),
        ("\u{10d50}", "\u{10d50}"),
        ("\u{16ea0}", "\u{16ea0}"),
        ("Stra\u{df}e", "stra\u{df}e"),
        ("\u{ab70}", "\u{ab70}"),
        ("\u{13f8}", "\u{13f8}"),
        ("MiXeD cAsE 123", "mixed case 123"),
        ("K", "k"),
        ("\u{c5}", "\u{e5}"),
        ("\u{3a9}", "\u{3c9}"),
    ];
    // Generated by Python 3.11.7: (s, shlex.quote(s))
    const SHLEX_CASES: &[(&str, &str)] = &[
        ("", "''"),
        ("abc", "abc"),
        ("a b", "'a b'"),
        ("it's", "'it'\"'\"'s'"),
        ("a@b%c+d=e:f,g.h/i-j_k", "a@b%c+d=e:f,g.h/i-j_k"),
        ("\u{e9}", "'\u{e9}'"),
        ("$HOME", "'$HOME'"),
        ("*", "'*'"),
        ("a\u{a}b", "'a\u{a}b'"),
        ("''", "''\"'\"''\"'\"''"),
        ("--golden=/abs/path", "--golden=/abs/path"),
        ("x;y", "'x;y'"),
        ("\u{65e5}\u{672c}", "'\u{65e5}\u{672c}'"),
    ];
}

mod tables {
    /// Code points where printability toggles, from Python 3.11 (Unicode 14.0.0) `str.isprintable`:
    /// a character is non-printable when an odd number of bounds are at or below it.
    pub(super) const NON_PRINTABLE_BOUNDS: [u32; 1401] = [
        0x0, 0x20, 0x7f, 0xa1, 0xad, 0xae, 0x378, 0x37a, 0x380, 0x384, 0x38b, 0x38c, 0x38d, 0x38e,
        0x3a2, 0x3a3, 0x530, 0x531, 0x557, 0x559, 0x58b, 0x58d, 0x590, 0x591, 0x5c8, 0x5d0, 0x5eb,
        0x5ef, 0x5f5, 0x606, 0x61c, 0x61d, 0x6dd, 0x6de, 0x70e, 0x710, 0x74b, 0x74d, 0x7b2, 0x7c0,
        0x7fb, 0x7fd, 0x82e, 0x830, 0x83f, 0x840, 0x85c, 0x85e, 0x85f, 0x860, 0x86b, 0x870, 0x88f,
        0x898, 0x8e2, 0x8e3, 0x984, 0x985, 0x98d, 0x98f, 0x991, 0x993, 0x9a9, 0x9aa, 0x9b1, 0x9b2,
        0x9b3, 0x9b6, 0x9ba, 0x9bc, 0x9c5, 0x9c7, 0x9c9, 0x9cb, 0x9cf, 0x9d7, 0x9d8, 0x9dc, 0x9de,
        0x9df, 0x9e4, 0x9e6, 0x9ff, 0xa01, 0xa04, 0xa05, 0xa0b, 0xa0f, 0xa11, 0xa13, 0xa29, 0xa2a,
        0xa31, 0xa32, 0xa34, 0xa35, 0xa37, 0xa38, 0xa3a, 0xa3c, 0xa3d, 0xa3e, 0xa43, 0xa47, 0xa49,
        0xa4b, 0xa4e, 0xa51, 0xa52, 0xa59, 0xa5d, 0xa5e, 0xa5f, 0xa66, 0xa77, 0xa81, 0xa84, 0xa85,
        0xa8e, 0xa8f, 0xa92, 0xa93, 0xaa9, 0xaaa, 0xab1, 0xab2, 0xab4, 0xab5, 0xaba, 0xabc, 0xac6,
        0xac7, 0xaca, 0xacb, 0xace, 0xad0, 0xad1, 0xae0, 0xae4, 0xae6, 0xaf2, 0xaf9, 0xb00, 0xb01,
        0xb04, 0xb05, 0xb0d, 0xb0f, 0xb11, 0xb13, 0xb29, 0xb2a, 0xb31, 0xb32, 0xb34, 0xb35, 0xb3a,
        0xb3c, 0xb45, 0xb47, 0xb49, 0xb4b, 0xb4e, 0xb55, 0xb58, 0xb5c, 0xb5e, 0xb5f, 0xb64, 0xb66,
        0xb78, 0xb82, 0xb84, 0xb85, 0xb8b, 0xb8e, 0xb91, 0xb92, 0xb96, 0xb99, 0xb9b, 0xb9c, 0xb9d,
        0xb9e, 0xba0, 0xba3, 0xba5, 0xba8, 0xbab, 0xbae, 0xbba, 0xbbe, 0xbc3, 0xbc6, 0xbc9, 0xbca,
        0xbce, 0xbd0, 0xbd1, 0xbd7, 0xbd8, 0xbe6, 0xbfb, 0xc00, 0xc0d, 0xc0e, 0xc11, 0xc12, 0xc29,
        0xc2a, 0xc3a, 0xc3c, 0xc45, 0xc46, 0xc49, 0xc4a, 0xc4e, 0xc55, 0xc57, 0xc58, 0xc5b, 0xc5d,
        0xc5e, 0xc60, 0xc64, 0xc66, 0xc70, 0xc77, 0xc8d, 0xc8e, 0xc91, 0xc92, 0xca9, 0xcaa, 0xcb4,
        0xcb5, 0xcba, 0xcbc, 0xcc5, 0xcc6, 0xcc9, 0xcca, 0xcce, 0xcd5, 0xcd7, 0xcdd, 0xcdf, 0xce0,
        0xce4, 0xce6, 0xcf0, 0xcf1, 0xcf3, 0xd00, 0xd0d, 0xd0e, 0xd11, 0xd12, 0xd45, 0xd46, 0xd49,
        0xd4a, 0xd50, 0xd54, 0xd64, 0xd66, 0xd80, 0xd81, 0xd84, 0xd85, 0xd97, 0xd9a, 0xdb2, 0xdb3,
        0xdbc, 0xdbd, 0xdbe, 0xdc0, 0xdc7, 0xdca, 0xdcb, 0xdcf, 0xdd5, 0xdd6, 0xdd7, 0xdd8, 0xde0,
        0xde6, 0xdf0, 0xdf2, 0xdf5, 0xe01, 0xe3b, 0xe3f, 0xe5c, 0xe81, 0xe83, 0xe84, 0xe85, 0xe86,
        0xe8b, 0xe8c, 0xea4, 0xea5, 0xea6, 0xea7, 0xebe, 0xec0, 0xec5, 0xec6, 0xec7, 0xec8, 0xece,
        0xed0, 0xeda, 0xedc, 0xee0, 0xf00, 0xf48, 0xf49, 0xf6d, 0xf71, 0xf98, 0xf99, 0xfbd, 0xfbe,
        0xfcd, 0xfce, 0xfdb, 0x1000, 0x10c6, 0x10c7, 0x10c8, 0x10cd, 0x10ce, 0x10d0, 0x1249,
        0x124a, 0x124e, 0x1250, 0x1257, 0x1258, 0x1259, 0x125a, 0x125e, 0x1260, 0x1289, 0x128a,
        0x128e, 0x1290, 0x12b1, 0x12b2, 0x12b6, 0x12b8, 0x12bf, 0x12c0, 0x12c1, 0x12c2, 0x12c6,
        0x12c8, 0x12d7, 0x12d8, 0x1311, 0x1312, 0x1316, 0x1318, 0x135b, 0x135d, 0x137d, 0x1380,
        0x139a, 0x13a0, 0x13f6, 0x13f8, 0x13fe, 0x1400, 0x1680, 0x1681, 0x169d, 0x16a0, 0x16f9,
        0x1700, 0x1716, 0x171f, 0x1737, 0x1740, 0x1754, 0x1760, 0x176d, 0x176e, 0x1771, 0x1772,
        0x1774, 0x1780, 0x17de, 0x17e0, 0x17ea, 0x17f0, 0x17fa, 0x1800, 0x180e, 0x180f, 0x181a,
        0x1820, 0x1879, 0x1880, 0x18ab, 0x18b0, 0x18f6, 0x1900, 0x191f, 0x1920, 0x192c, 0x1930,
        0x193c, 0x1940, 0x1941, 0x1944, 0x196e, 0x1970, 0x1975, 0x1980, 0x19ac, 0x19b0, 0x19ca,
        0x19d0, 0x19db, 0x19de, 0x1a1c, 0x1a1e, 0x1a5f, 0x1a60, 0x1a7d, 0x1a7f, 0x1a8a, 0x1a90,
        0x1a9a, 0x1aa0, 0x1aae, 0x1ab0, 0x1acf, 0x1b00, 0x1b4d, 0x1b50, 0x1b7f, 0x1b80, 0x1bf4,
        0x1bfc, 0x1c38, 0x1c3b, 0x1c4a, 0x1c4d, 0x1c89, 0x1c90, 0x1cbb, 0x1cbd, 0x1cc8, 0x1cd0,
        0x1cfb, 0x1d00, 0x1f16, 0x1f18, 0x1f1e, 0x1f20, 0x1f46, 0x1f48, 0x1f4e, 0x1f50, 0x1f58,
        0x1f59, 0x1f5a, 0x1f5b, 0x1f5c, 0x1f5d, 0x1f5e, 0x1f5f, 0x1f7e, 0x1f80, 0x1fb5, 0x1fb6,
        0x1fc5, 0x1fc6, 0x1fd4, 0x1fd6, 0x1fdc, 0x1fdd, 0x1ff0, 0x1ff2, 0x1ff5, 0x1ff6, 0x1fff,
        0x2010, 0x2028, 0x2030, 0x205f, 0x2070, 0x2072, 0x2074, 0x208f, 0x2090, 0x209d, 0x20a0,
        0x20c1, 0x20d0, 0x20f1, 0x2100, 0x218c, 0x2190, 0x2427, 0x2440, 0x244b, 0x2460, 0x2b74,
        0x2b76, 0x2b96, 0x2b97, 0x2cf4, 0x2cf9, 0x2d26, 0x2d27, 0x2d28, 0x2d2d, 0x2d2e, 0x2d30,
        0x2d68, 0x2d6f, 0x2d71, 0x2d7f, 0x2d97, 0x2da0, 0x2da7, 0x2da8, 0x2daf, 0x2db0, 0x2db7,
        0x2db8, 0x2dbf, 0x2dc0, 0x2dc7, 0x2dc8, 0x2dcf, 0x2dd0, 0x2dd7, 0x2dd8, 0x2ddf, 0x2de0,
        0x2e5e, 0x2e80, 0x2e9a, 0x2e9b, 0x2ef4, 0x2f00, 0x2fd6, 0x2ff0, 0x2ffc, 0x3001, 0x3040,
        0x3041, 0x3097, 0x3099, 0x3100, 0x3105, 0x3130, 0x3131, 0x318f, 0x3190, 0x31e4, 0x31f0,
        0x321f, 0x3220, 0xa48d, 0xa490, 0xa4c7, 0xa4d0, 0xa62c, 0xa640, 0xa6f8, 0xa700, 0xa7cb,
        0xa7d0, 0xa7d2, 0xa7d3, 0xa7d4, 0xa7d5, 0xa7da, 0xa7f2, 0xa82d, 0xa830, 0xa83a, 0xa840,
        0xa878, 0xa880, 0xa8c6, 0xa8ce, 0xa8da, 0xa8e0, 0xa954, 0xa95f, 0xa97d, 0xa980, 0xa9ce,
        0xa9cf, 0xa9da, 0xa9de, 0xa9ff, 0xaa00, 0xaa37, 0xaa40, 0xaa4e, 0xaa50, 0xaa5a, 0xaa5c,
        0xaac3, 0xaadb, 0xaaf7, 0xab01, 0xab07, 0xab09, 0xab0f, 0xab11, 0xab17, 0xab20, 0xab27,
        0xab28, 0xab2f, 0xab30, 0xab6c, 0xab70, 0xabee, 0xabf0, 0xabfa, 0xac00, 0xd7a4, 0xd7b0,
        0xd7c7, 0xd7cb, 0xd7fc, 0xf900, 0xfa6e, 0xfa70, 0xfada, 0xfb00, 0xfb07, 0xfb13, 0xfb18,
        0xfb1d, 0xfb37, 0xfb38, 0xfb3d, 0xfb3e, 0xfb3f, 0xfb40, 0xfb42, 0xfb43, 0xfb45, 0xfb46,
        0xfbc3, 0xfbd3, 0xfd90, 0xfd92, 0xfdc8, 0xfdcf, 0xfdd0, 0xfdf0, 0xfe1a, 0xfe20, 0xfe53,
        0xfe54, 0xfe67, 0xfe68, 0xfe6c, 0xfe70, 0xfe75, 0xfe76, 0xfefd, 0xff01, 0xffbf, 0xffc2,
        0xffc8, 0xffca, 0xffd0, 0xffd2, 0xffd8, 0xffda, 0xffdd, 0xffe0, 0xffe7, 0xffe8, 0xffef,
        0xfffc, 0xfffe, 0x10000, 0x1000c, 0x1000d, 0x10027, 0x10028, 0x1003b, 0x1003c, 0x1003e,
        0x1003f, 0x1004e, 0x10050, 0x1005e, 0x10080, 0x100fb, 0x10100, 0x10103, 0x10107, 0x10134,
        0x10137, 0x1018f, 0x10190, 0x1019d, 0x101a0, 0x101a1, 0x101d0, 0x101fe, 0x10280, 0x1029d,
        0x102a0, 0x102d1, 0x102e0, 0x102fc, 0x10300, 0x10324, 0x1032d, 0x1034b, 0x10350, 0x1037b,
        0x10380, 0x1039e, 0x1039f, 0x103c4, 0x103c8, 0x103d6, 0x10400, 0x1049e, 0x104a0, 0x104aa,
        0x104b0, 0x104d4, 0x104d8, 0x104fc, 0x10500, 0x10528, 0x10530, 0x10564, 0x1056f, 0x1057b,
        0x1057c, 0x1058b, 0x1058c, 0x10593, 0x10594, 0x10596, 0x10597, 0x105a2, 0x105a3, 0x105b2,
        0x105b3, 0x105ba, 0x105bb, 0x105bd, 0x10600, 0x10737, 0x10740, 0x10756, 0x10760, 0x10768,
        0x10780, 0x10786, 0x10787, 0x107b1, 0x107b2, 0x107bb, 0x10800, 0x10806, 0x10808, 0x10809,
        0x1080a, 0x10836, 0x10837, 0x10839, 0x1083c, 0x1083d, 0x1083f, 0x10856, 0x10857, 0x1089f,
        0x108a7, 0x108b0, 0x108e0, 0x108f3, 0x108f4, 0x108f6, 0x108fb, 0x1091c, 0x1091f, 0x1093a,
        0x1093f, 0x10940, 0x10980, 0x109b8, 0x109bc, 0x109d0, 0x109d2, 0x10a04, 0x10a05, 0x10a07,
        0x10a0c, 0x10a14, 0x10a15, 0x10a18, 0x10a19, 0x10a36, 0x10a38, 0x10a3b, 0x10a3f, 0x10a49,
        0x10a50, 0x10a59, 0x10a60, 0x10aa0, 0x10ac0, 0x10ae7, 0x10aeb, 0x10af7, 0x10b00, 0x10b36,
        0x10b39, 0x10b56, 0x10b58, 0x10b73, 0x10b78, 0x10b92, 0x10b99, 0x10b9d, 0x10ba9, 0x10bb0,
        0x10c00, 0x10c49, 0x10c80, 0x10cb3, 0x10cc0, 0x10cf3, 0x10cfa, 0x10d28, 0x10d30, 0x10d3a,
        0x10e60, 0x10e7f, 0x10e80, 0x10eaa, 0x10eab, 0x10eae, 0x10eb0, 0x10eb2, 0x10f00, 0x10f28,
        0x10f30, 0x10f5a, 0x10f70, 0x10f8a, 0x10fb0, 0x10fcc, 0x10fe0, 0x10ff7, 0x11000, 0x1104e,
        0x11052, 0x11076, 0x1107f, 0x110bd, 0x110be, 0x110c3, 0x110d0, 0x110e9, 0x110f0, 0x110fa,
        0x11100, 0x11135, 0x11136, 0x11148, 0x11150, 0x11177, 0x11180, 0x111e0, 0x111e1, 0x111f5,
        0x11200, 0x11212, 0x11213, 0x1123f, 0x11280, 0x11287, 0x11288, 0x11289, 0x1128a, 0x1128e,
        0x1128f, 0x1129e, 0x1129f, 0x112aa, 0x112b0, 0x112eb, 0x112f0, 0x112fa, 0x11300, 0x11304,
        0x11305, 0x1130d, 0x1130f, 0x11311, 0x11313, 0x11329, 0x1132a, 0x11331, 0x11332, 0x11334,
        0x11335, 0x1133a, 0x1133b, 0x11345, 0x11347, 0x11349, 0x1134b, 0x1134e, 0x11350, 0x11351,
        0x11357, 0x11358, 0x1135d, 0x11364, 0x11366, 0x1136d, 0x11370, 0x11375, 0x11400, 0x1145c,
        0x1145d, 0x11462, 0x11480, 0x114c8, 0x114d0, 0x114da, 0x11580, 0x115b6, 0x115b8, 0x115de,
        0x11600, 0x11645, 0x11650, 0x1165a, 0x11660, 0x1166d, 0x11680, 0x116ba, 0x116c0, 0x116ca,
        0x11700, 0x1171b, 0x1171d, 0x1172c, 0x11730, 0x11747, 0x11800, 0x1183c, 0x118a0, 0x118f3,
        0x118ff, 0x11907, 0x11909, 0x1190a, 0x1190c, 0x11914, 0x11915, 0x11917, 0x11918, 0x11936,
        0x11937, 0x11939, 0x1193b, 0x11947, 0x11950, 0x1195a, 0x119a0, 0x119a8, 0x119aa, 0x119d8,
        0x119da, 0x119e5, 0x11a00, 0x11a48, 0x11a50, 0x11aa3, 0x11ab0, 0x11af9, 0x11c00, 0x11c09,
        0x11c0a, 0x11c37, 0x11c38, 0x11c46, 0x11c50, 0x11c6d, 0x11c70, 0x11c90, 0x11c92, 0x11ca8,
        0x11ca9, 0x11cb7, 0x11d00, 0x11d07, 0x11d08, 0x11d0a, 0x11d0b, 0x11d37, 0x11d3a, 0x11d3b,
        0x11d3c, 0x11d3e, 0x11d3f, 0x11d48, 0x11d50, 0x11d5a, 0x11d60, 0x11d66, 0x11d67, 0x11d69,
        0x11d6a, 0x11d8f, 0x11d90, 0x11d92, 0x11d93, 0x11d99, 0x11da0, 0x11daa, 0x11ee0, 0x11ef9,
        0x11fb0, 0x11fb1, 0x11fc0, 0x11ff2, 0x11fff, 0x1239a, 0x12400, 0x1246f, 0x12470, 0x12475,
        0x12480, 0x12544, 0x12f90, 0x12ff3, 0x13000, 0x1342f, 0x14400, 0x14647, 0x16800, 0x16a39,
        0x16a40, 0x16a5f, 0x16a60, 0x16a6a, 0x16a6e, 0x16abf, 0x16ac0, 0x16aca, 0x16ad0, 0x16aee,
        0x16af0, 0x16af6, 0x16b00, 0x16b46, 0x16b50, 0x16b5a, 0x16b5b, 0x16b62, 0x16b63, 0x16b78,
        0x16b7d, 0x16b90, 0x16e40, 0x16e9b, 0x16f00, 0x16f4b, 0x16f4f, 0x16f88, 0x16f8f, 0x16fa0,
        0x16fe0, 0x16fe5, 0x16ff0, 0x16ff2, 0x17000, 0x187f8, 0x18800, 0x18cd6, 0x18d00, 0x18d09,
        0x1aff0, 0x1aff4, 0x1aff5, 0x1affc, 0x1affd, 0x1afff, 0x1b000, 0x1b123, 0x1b150, 0x1b153,
        0x1b164, 0x1b168, 0x1b170, 0x1b2fc, 0x1bc00, 0x1bc6b, 0x1bc70, 0x1bc7d, 0x1bc80, 0x1bc89,
        0x1bc90, 0x1bc9a, 0x1bc9c, 0x1bca0, 0x1cf00, 0x1cf2e, 0x1cf30, 0x1cf47, 0x1cf50, 0x1cfc4,
        0x1d000, 0x1d0f6, 0x1d100, 0x1d127, 0x1d129, 0x1d173, 0x1d17b, 0x1d1eb, 0x1d200, 0x1d246,
        0x1d2e0, 0x1d2f4, 0x1d300, 0x1d357, 0x1d360, 0x1d379, 0x1d400, 0x1d455, 0x1d456, 0x1d49d,
        0x1d49e, 0x1d4a0, 0x1d4a2, 0x1d4a3, 0x1d4a5, 0x1d4a7, 0x1d4a9, 0x1d4ad, 0x1d4ae, 0x1d4ba,
        0x1d4bb, 0x1d4bc, 0x1d4bd, 0x1d4c4, 0x1d4c5, 0x1d506, 0x1d507, 0x1d50b, 0x1d50d, 0x1d515,
        0x1d516, 0x1d51d, 0x1d51e, 0x1d53a, 0x1d53b, 0x1d53f, 0x1d540, 0x1d545, 0x1d546, 0x1d547,
        0x1d54a, 0x1d551, 0x1d552, 0x1d6a6, 0x1d6a8, 0x1d7cc, 0x1d7ce, 0x1da8c, 0x1da9b, 0x1daa0,
        0x1daa1, 0x1dab0, 0x1df00, 0x1df1f, 0x1e000, 0x1e007, 0x1e008, 0x1e019, 0x1e01b, 0x1e022,
        0x1e023, 0x1e025, 0x1e026, 0x1e02b, 0x1e100, 0x1e12d, 0x1e130, 0x1e13e, 0x1e140, 0x1e14a,
        0x1e14e, 0x1e150, 0x1e290, 0x1e2af, 0x1e2c0, 0x1e2fa, 0x1e2ff, 0x1e300, 0x1e7e0, 0x1e7e7,
        0x1e7e8, 0x1e7ec, 0x1e7ed, 0x1e7ef, 0x1e7f0, 0x1e7ff, 0x1e800, 0x1e8c5, 0x1e8c7, 0x1e8d7,
        0x1e900, 0x1e94c, 0x1e950, 0x1e95a, 0x1e95e, 0x1e960, 0x1ec71, 0x1ecb5, 0x1ed01, 0x1ed3e,
        0x1ee00, 0x1ee04, 0x1ee05, 0x1ee20, 0x1ee21, 0x1ee23, 0x1ee24, 0x1ee25, 0x1ee27, 0x1ee28,
        0x1ee29, 0x1ee33, 0x1ee34, 0x1ee38, 0x1ee39, 0x1ee3a, 0x1ee3b, 0x1ee3c, 0x1ee42, 0x1ee43,
        0x1ee47, 0x1ee48, 0x1ee49, 0x1ee4a, 0x1ee4b, 0x1ee4c, 0x1ee4d, 0x1ee50, 0x1ee51, 0x1ee53,
        0x1ee54, 0x1ee55, 0x1ee57, 0x1ee58, 0x1ee59, 0x1ee5a, 0x1ee5b, 0x1ee5c, 0x1ee5d, 0x1ee5e,
        0x1ee5f, 0x1ee60, 0x1ee61, 0x1ee63, 0x1ee64, 0x1ee65, 0x1ee67, 0x1ee6b, 0x1ee6c, 0x1ee73,
        0x1ee74, 0x1ee78, 0x1ee79, 0x1ee7d, 0x1ee7e, 0x1ee7f, 0x1ee80, 0x1ee8a, 0x1ee8b, 0x1ee9c,
        0x1eea1, 0x1eea4, 0x1eea5, 0x1eeaa, 0x1eeab, 0x1eebc, 0x1eef0, 0x1eef2, 0x1f000, 0x1f02c,
        0x1f030, 0x1f094, 0x1f0a0, 0x1f0af, 0x1f0b1, 0x1f0c0, 0x1f0c1, 0x1f0d0, 0x1f0d1, 0x1f0f6,
        0x1f100, 0x1f1ae, 0x1f1e6, 0x1f203, 0x1f210, 0x1f23c, 0x1f240, 0x1f249, 0x1f250, 0x1f252,
        0x1f260, 0x1f266, 0x1f300, 0x1f6d8, 0x1f6dd, 0x1f6ed, 0x1f6f0, 0x1f6fd, 0x1f700, 0x1f774,
        0x1f780, 0x1f7d9, 0x1f7e0, 0x1f7ec, 0x1f7f0, 0x1f7f1, 0x1f800, 0x1f80c, 0x1f810, 0x1f848,
        0x1f850, 0x1f85a, 0x1f860, 0x1f888, 0x1f890, 0x1f8ae, 0x1f8b0, 0x1f8b2, 0x1f900, 0x1fa54,
        0x1fa60, 0x1fa6e, 0x1fa70, 0x1fa75, 0x1fa78, 0x1fa7d, 0x1fa80, 0x1fa87, 0x1fa90, 0x1faad,
        0x1fab0, 0x1fabb, 0x1fac0, 0x1fac6, 0x1fad0, 0x1fada, 0x1fae0, 0x1fae8, 0x1faf0, 0x1faf7,
        0x1fb00, 0x1fb93, 0x1fb94, 0x1fbcb, 0x1fbf0, 0x1fbfa, 0x20000, 0x2a6e0, 0x2a700, 0x2b739,
        0x2b740, 0x2b81e, 0x2b820, 0x2cea2, 0x2ceb0, 0x2ebe1, 0x2f800, 0x2fa1e, 0x30000, 0x3134b,
        0xe0100, 0xe01f0,
    ];
    /// First code point (digit zero) of each non-ASCII run of ten Unicode decimal digits (Nd), Python 3.11.
    pub(super) const DECIMAL_ZEROS: [u32; 65] = [
        0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6,
        0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
        0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0,
        0xff10, 0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0,
        0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0,
        0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
    ];
}
