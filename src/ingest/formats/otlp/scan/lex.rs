//! The lexical pieces the scan shares: where a string ends, the next quote or backslash, whitespace,
//! and the integers and decimals of `startTimeUnixNano`.

use memchr::memchr2;
use wide::u8x16;

/// Index of the closing quote of a string whose contents start at `from`.
pub(super) fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let hit = first_of(bytes, from, bytes.len(), true)?;
        if bytes[hit] == b'"' {
            return Some(hit);
        }
        from = hit + 2;
        if from > bytes.len() {
            return None;
        }
    }
}

/// Where the first quote (or, with `backslash`, backslash) in `from..end` is.
///
/// Keys and trace ids are short, and memchr's setup for each one cost more than the search itself:
/// their first 48 bytes are searched sixteen at a time, and only a longer string is left to memchr.
#[inline]
pub(crate) fn first_of(bytes: &[u8], from: usize, end: usize, backslash: bool) -> Option<usize> {
    let end = end.min(bytes.len());
    let mut at = from.min(end);
    for _ in 0..3 {
        let Some(chunk) = bytes[..end].get(at..at + 16) else {
            break;
        };
        let lane = u8x16::new(chunk.try_into().expect("16 bytes"));
        let mut hits = lane.simd_eq(u8x16::splat(b'"'));
        if backslash {
            hits |= lane.simd_eq(u8x16::splat(b'\\'));
        }
        let hits = hits.to_bitmask();
        if hits != 0 {
            return Some(at + hits.trailing_zeros() as usize);
        }
        at += 16;
    }
    let rest = &bytes[at..end];
    let found = if backslash {
        memchr2(b'"', b'\\', rest)
    } else {
        memchr::memchr(b'"', rest)
    };
    found.map(|i| at + i)
}

pub(super) fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// A decimal integer string as OTLP writes nanosecond times. Anything else: give up, so the full parser
/// reports it.
pub(super) fn parse_int(text: &[u8]) -> Option<i64> {
    decimal_i64(text)
}

/// 1 to 19 ASCII digits (every nanosecond time OTLP writes) as an `i64`; `None` for anything else and
/// for values past `i64::MAX`, which `str::parse` would refuse too. Eight digits are read at a time:
/// a nanosecond time is 19 digits, and every span has two of them, read by the scan and again by the
/// decoder.
pub(crate) fn decimal_i64(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 19 {
        return None;
    }
    // Nineteen digits stay below `u64::MAX`, so the sum cannot overflow.
    let mut n: u64 = 0;
    let mut chunks = text.chunks_exact(8);
    for chunk in &mut chunks {
        let eight = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        n = n * 100_000_000 + eight_digits(eight)?;
    }
    for &b in chunks.remainder() {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n * 10 + u64::from(digit);
    }
    i64::try_from(n).ok()
}

/// The value of eight ASCII digits loaded little-endian (the first digit in the low byte), or `None`
/// when a byte is not a digit.
pub(super) fn eight_digits(eight: u64) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // A digit's high nibble is 3, and adding 6 to its low nibble does not carry into the high one.
    let high = eight & (0xF0 * ONES);
    let past_nine = eight.wrapping_add(0x06 * ONES) & (0xF0 * ONES);
    if high != 0x30 * ONES || past_nine != 0x30 * ONES {
        return None;
    }
    // Pairs, then fours, then all eight: each step multiplies neighbours together in one product.
    let digits = eight & (0x0F * ONES);
    let pairs = (digits.wrapping_mul(10 << 8 | 1)) >> 8 & 0x00FF_00FF_00FF_00FF;
    let fours = (pairs.wrapping_mul(100 << 16 | 1)) >> 16 & 0x0000_FFFF_0000_FFFF;
    Some((fours.wrapping_mul(10_000 << 32 | 1)) >> 32)
}

/// A JSON number; fractions truncate, as the span reader does.
pub(super) fn parse_number(text: &[u8]) -> Option<i64> {
    if let Some(i) = parse_int(text) {
        return Some(i);
    }
    let f: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    f.is_finite().then_some(f.trunc() as i64)
}

/// Whether the byte at `at` is escaped: an odd run of backslashes ends just before it.
pub(super) fn escaped_at(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
}
