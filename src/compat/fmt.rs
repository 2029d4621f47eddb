//! Python-compatible number and string formatting, as faultgate 0.4.1 prints values.
//!
//! 0.4.1 prints raw values the way Python 3.11's `str()` and `repr()` do and formats numbers with
//! Python's format mini-language. Reports, reasons and summaries depend on these bytes, so every
//! formatter that must match the reference tool lives here. Printability follows Python 3.11's Unicode
//! 14.0 data (`compat/unicode.rs`), not the newer tables in Rust's standard library.
//!
//! Only the output writers (`report/`, `cli/`) and the rest of `compat` use this module directly; the
//! domain code reaches the few helpers its reason texts need through [`super::reason`].

use std::fmt::Write as _;

use serde_json::Value;

use super::unicode;

/// Python `str(x)` of a JSON value: strings as is, `True`/`False`/`None`, floats in repr form,
/// containers in repr notation.
pub(crate) fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python `repr(x)` of a JSON value.
pub(crate) fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(v, &mut out);
    out
}

/// Appends Python `repr(x)` of a JSON value to `out`.
fn write_repr(v: &Value, out: &mut String) {
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

/// Appends the text of a JSON number as Python prints it: integers as digits, floats in repr form.
fn write_number_text(n: &serde_json::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        write_float_repr(n.as_f64().unwrap_or(f64::NAN), out);
    }
}

/// Python `repr(s)` of a string.
pub(crate) fn py_repr_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_repr_str(s, &mut out);
    out
}

/// Appends Python `repr(s)` of a string to `out`: single quotes unless the text holds `'` and no `"`,
/// backslash escapes for the quote, `\\`, `\n`, `\r`, `\t`, and `\xNN`/`\uNNNN`/`\UNNNNNNNN` for
/// characters Python does not consider printable.
fn write_repr_str(s: &str, out: &mut String) {
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
fn is_py_printable(c: char) -> bool {
    let code = c as u32;
    if (0x20..0x7f).contains(&code) {
        return true;
    }
    let toggles = unicode::NON_PRINTABLE_BOUNDS.partition_point(|&bound| bound <= code);
    toggles % 2 == 0
}

/// Python `repr(f)` of a float: shortest round-trip digits, `.0` when integral, exponent form
/// below 1e-4 and from 1e16 up (`1e-05`, `1e+16`), `nan`, `inf` and `-inf` for non-finite values.
pub(crate) fn float_repr(f: f64) -> String {
    let mut out = String::with_capacity(24);
    write_float_repr(f, &mut out);
    out
}

/// Appends [`float_repr`] to `out`.
pub(super) fn write_float_repr(f: f64, out: &mut String) {
    if write_non_finite(f, "", out) {
        return;
    }
    // Integral values below 2^53 (a confidence of 1.0, counts) are their own shortest digits, as
    // neighbouring floats there are at most 1 apart: no shortest-digit search needed.
    if f.trunc() == f && f.abs() < 9_007_199_254_740_992.0 {
        // The confidences of most verdicts.
        if f == 0.0 && f.is_sign_positive() {
            out.push_str("0.0");
            return;
        }
        if f == 1.0 {
            out.push_str("1.0");
            return;
        }
        if f.is_sign_negative() {
            out.push('-');
        }
        let _ = write!(out, "{}.0", f.abs() as u64);
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
pub(crate) fn fmt_fixed(x: f64, decimals: usize) -> String {
    let mut out = String::new();
    push_fixed(&mut out, x, decimals);
    out
}

/// Appends [`fmt_fixed`] of `x` to `out`.
pub(crate) fn push_fixed(out: &mut String, x: f64, decimals: usize) {
    if write_non_finite(x, "", out) || write_fixed_exact(x, decimals, out) {
        return;
    }
    // Rust rounds the exact binary value with ties to even, exactly like Python's `f` format.
    let _ = write!(out, "{x:.decimals$}");
}

/// [`fmt_fixed`] by integer arithmetic on the float's exact binary value, for the few decimals and
/// the magnitudes reports print; false (nothing written) outside them. The standard formatter falls
/// back to big-number arithmetic whenever its fast estimate cannot decide, which values with a short
/// exact form (`1.00`, `0.50`: most confidences) always hit.
fn write_fixed_exact(x: f64, decimals: usize, out: &mut String) -> bool {
    let Some((rounded, scale)) = scaled_half_even(x, decimals) else {
        return false;
    };
    if x.is_sign_negative() {
        out.push('-');
    }
    let _ = write!(out, "{}", rounded / scale);
    if decimals > 0 {
        let _ = write!(out, ".{:0decimals$}", rounded % scale);
    }
    true
}

/// `|x| * 10^decimals` rounded to an integer with ties to even on the exact binary value, with
/// `10^decimals`; `None` for a non-finite `x`, more than 6 decimals, or `|x|` of 2^93 or more.
fn scaled_half_even(x: f64, decimals: usize) -> Option<(u128, u128)> {
    const POW10: [u128; 7] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];
    let &scale = POW10.get(decimals)?;
    if !x.is_finite() {
        return None;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = u128::from(bits & ((1 << 52) - 1));
    // |x| = mantissa * 2^exponent exactly.
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    // |x| * 10^decimals < 2^53 * 2^20, exact in 128 bits.
    let scaled = mantissa * scale;
    let rounded = if exponent >= 0 {
        if exponent > 40 {
            return None;
        }
        scaled << exponent
    } else {
        let shift = exponent.unsigned_abs();
        if shift >= 128 {
            // Below 2^-75 of a unit of the last decimal: rounds to zero.
            0
        } else {
            let whole = scaled >> shift;
            let rest = scaled & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            // Ties to even, as Python rounds.
            if rest > half || (rest == half && whole & 1 == 1) {
                whole + 1
            } else {
                whole
            }
        }
    };
    Some((rounded, scale))
}

/// Python `format(x, '.0%')`: `x * 100` (a float product, as Python computes it), no decimals, then `%`.
pub(crate) fn fmt_percent0(x: f64) -> String {
    let mut out = fmt_fixed(x * 100.0, 0);
    out.push('%');
    out
}

/// Python `format(x, 'g')`: six significant digits, exponent form when the exponent is below -4 or
/// at least 6, trailing zeros and a bare trailing point removed (`1.23457e+06`, `1e-05`, `100000`).
pub(crate) fn fmt_g(x: f64) -> String {
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
pub(crate) fn fmt_thousands0(x: f64) -> String {
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
pub(crate) fn fmt_signed1(x: f64) -> String {
    let mut out = String::new();
    if !write_non_finite(x, "+", &mut out) {
        let _ = write!(out, "{x:+.1}");
    }
    out
}

/// Python `round(x, k)` on a float: the float nearest to `x` correctly rounded at `k` decimals (ties to
/// even on the exact binary value; `k` may be negative). Non-finite values and zero come back unchanged.
/// Where Python raises OverflowError (a result beyond the float range) this returns an infinity.
pub(crate) fn round_half_even(x: f64, k: i32) -> f64 {
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
        // Confidences and rates are rounded once per verdict: the exact integer path avoids the
        // big-number fallback of the standard formatter and the text round trip. Below 2^53 both the
        // rounded integer and the power of ten are exact floats, so one division is the correctly
        // rounded value of the decimal text, which is what parsing that text gives.
        if let Some((rounded, scale)) = scaled_half_even(x, decimals)
            && let (Ok(rounded), Ok(scale)) = (u64::try_from(rounded), u64::try_from(scale))
            && rounded < 1 << 53
        {
            // Through u64: converting a u128 to a float is a library call, twice per verdict.
            return (rounded as f64 / scale as f64).copysign(x);
        }
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

/// Python `shlex.quote(s)`: `''` for the empty string, the text itself when it holds only ASCII letters,
/// digits and `_@%+=:,./-`, otherwise single-quoted with each `'` written `'"'"'`.
pub(crate) fn shlex_quote(s: &str) -> String {
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

/// A Markdown table cell: `|` escaped as `\|`, then newlines as spaces, then the first 160 code points
/// of the result (an escape counts as two and may be cut in half, as in the reference).
pub(crate) fn md_cell(s: &str) -> String {
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
    fn fixed_decimals_by_integer_arithmetic_give_the_standard_formatter_bytes() {
        // Confidences and shares, ties at every decimal, both signs, subnormals and large values.
        let mut values = vec![
            0.0, -0.0, 1.0, 0.5, 0.125, 2.675, 0.005, 0.015, 1e-300, 5e-324, 1e12,
        ];
        values.extend((0..=1000).map(|k| f64::from(k) / 1000.0));
        values.extend((0..=64).map(|k| f64::from(k) / 64.0));
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
            values.push(f64::from_bits(state) % 1e7);
        }
        let mut fast = 0;
        for x in values.iter().flat_map(|&x| [x, -x]) {
            for decimals in 0..=6 {
                let mut out = String::new();
                if write_fixed_exact(x, decimals, &mut out) {
                    fast += 1;
                    assert_eq!(
                        out,
                        format!("{x:.decimals$}"),
                        "{x:e} to {decimals} decimals"
                    );
                }
            }
        }
        assert!(fast > 200_000, "the integer path took {fast} values");
        let mut out = String::new();
        assert!(write_fixed_exact(1.0, 2, &mut out) && out == "1.00");
    }

    /// `round_half_even` as it was before its integer path: the text of the standard formatter,
    /// parsed back.
    fn round_by_text(x: f64, decimals: usize) -> f64 {
        format!("{x:.decimals$}").parse().unwrap_or(x)
    }

    fn edge_floats() -> Vec<f64> {
        let mut values = vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            5e-324,
            f64::MAX,
            1e21,
            1e22,
            2.5e21,
            9_007_199_254_740_993e3,
            2f64.powi(53),
            2f64.powi(93),
            2f64.powi(93) - 2f64.powi(41),
            0.00005,
            0.00015,
            0.99995,
            0.999_949_999_999_999_9,
            1.0,
            0.95,
        ];
        // Every half and quarter of a last decimal, at every supported precision.
        for decimals in 0..=6 {
            let unit = 10f64.powi(-decimals);
            values.extend((0..200).map(|k| (f64::from(k) + 0.5) * unit));
            values.extend((0..200).map(|k| (f64::from(k) + 0.25) * unit));
        }
        values
    }

    #[test]
    fn rounding_by_integer_arithmetic_gives_the_text_round_trip_on_edges() {
        for x in edge_floats().into_iter().flat_map(|x| [x, -x]) {
            for decimals in 0..=6 {
                let (fast, slow) = (
                    round_half_even(x, decimals as i32),
                    round_by_text(x, decimals),
                );
                assert!(
                    same_float(fast, slow),
                    "round({x:e}, {decimals}): {fast:e} vs {slow:e}"
                );
                if x.is_finite() {
                    assert_eq!(fmt_fixed(x, decimals), format!("{x:.decimals$}"));
                }
            }
        }
        assert_eq!(round_half_even(0.125, 2).to_bits(), 0.12f64.to_bits());
        assert_eq!(round_half_even(2.675, 2).to_bits(), 2.67f64.to_bits());
        assert_eq!(round_half_even(0.99996, 4).to_bits(), 1f64.to_bits());
        assert_eq!(round_half_even(-0.00001, 4).to_bits(), (-0.0f64).to_bits());
    }

    /// `float_repr` as it was before its integral path: from the shortest `{:e}` digits.
    fn repr_by_digits(f: f64) -> String {
        let mut text = StackText::new();
        let _ = write!(text, "{f:e}");
        let sci = Scientific::parse(text.as_str());
        let mut out = String::new();
        if sci.negative {
            out.push('-');
        }
        if sci.exponent < -4 || sci.exponent >= 16 {
            sci.write_exponent_form(&mut out);
        } else {
            sci.write_positional(&mut out, true);
        }
        out
    }

    #[test]
    fn integral_reprs_match_the_shortest_digits() {
        let mut values = vec![
            0.0,
            1.0,
            10.0,
            1e15,
            9_007_199_254_740_991.0,
            2f64.powi(52) + 1.0,
        ];
        values.extend((0..2000).map(f64::from));
        values.extend((0..53).map(|k| 2f64.powi(k) - 1.0));
        for x in values.into_iter().flat_map(|x| [x, -x]) {
            assert_eq!(float_repr(x), repr_by_digits(x), "{x:e}");
        }
        assert_eq!(float_repr(1.0), "1.0");
        assert_eq!(float_repr(-0.0), "-0.0");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(2f64.powi(53)), "9007199254740992.0");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Any float, and any short decimal fraction with its neighbours, rounds and prints exactly as
        /// the standard formatter's text does.
        #[test]
        fn rounding_and_fixed_text_match_the_standard_formatter(
            bits in proptest::prelude::any::<u64>(),
            numerator in 0u64..10_000_000,
            decimals in 0usize..=6,
            nudge in -2i64..=2,
        ) {
            let short = f64::from_bits(
                (numerator as f64 / 10f64.powi(decimals as i32)).to_bits().wrapping_add_signed(nudge),
            );
            let integral = (bits >> 11) as f64;
            proptest::prop_assert_eq!(float_repr(integral), repr_by_digits(integral));
            proptest::prop_assert_eq!(float_repr(-integral.trunc()), repr_by_digits(-integral.trunc()));
            for x in [f64::from_bits(bits), short, -short] {
                if !x.is_nan() && !x.is_infinite() {
                    proptest::prop_assert_eq!(float_repr(x), repr_by_digits(x));
                }
                let (fast, slow) = (round_half_even(x, decimals as i32), round_by_text(x, decimals));
                proptest::prop_assert!(same_float(fast, slow), "round({:e}, {}): {:e} vs {:e}", x, decimals, fast, slow);
                if x.is_finite() {
                    proptest::prop_assert_eq!(fmt_fixed(x, decimals), format!("{x:.decimals$}"));
                }
            }
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

    include!("testdata/fmt_cases.rs");
}
