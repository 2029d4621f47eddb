//! The walk's tokens found 64 bytes at a time: bit masks of quotes, backslashes, brackets and the
//! other structural bytes, with the escapes and string state carried from one 64-byte word to the
//! next. The workers read their runs through them, and the first pass over a block counts with them.

use wide::u8x16;

/// The walk's tokens from a position where it starts a token, outside any string: structural bytes,
/// opening quotes and the first byte of each bare value, found 64 bytes at a time with bit masks.
///
/// The masks agree with the walk's byte-by-byte reading as long as bare values are ordinary: the walk
/// runs a bare value on to the next `,` `}` `]` or whitespace, so a quote, `{`, `[` or `:` right after
/// one (or a backslash outside strings) would be swallowed by it. The tokens end before the first such
/// byte.
pub(super) struct Tokens<'a> {
    pub(super) bytes: &'a [u8],
    /// Position of bit 0 of `pending`.
    pub(super) base: usize,
    pub(super) pending: u64,
    pub(super) next_base: usize,
    pub(super) in_string: u64,
    pub(super) escape: bool,
    /// The byte before `next_base` belongs to a bare value.
    pub(super) in_bare: bool,
    pub(super) stopped: bool,
}

impl<'a> Tokens<'a> {
    pub(super) fn new(bytes: &'a [u8], at: usize) -> Self {
        Tokens {
            bytes,
            base: at,
            pending: 0,
            next_base: at,
            in_string: 0,
            escape: false,
            in_bare: false,
            stopped: false,
        }
    }

    // Called once per token by the span reader's loop: inlined there, it costs a few instructions where
    // a call cost as much as the rest of the token's handling; the load of the next 64 bytes stays out
    // of line.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Option<usize> {
        while self.pending == 0 {
            if self.stopped || self.next_base >= self.bytes.len() {
                return None;
            }
            self.load();
        }
        let i = self.pending.trailing_zeros() as usize;
        self.pending &= self.pending - 1;
        Some(self.base + i)
    }

    #[inline(never)]
    pub(super) fn load(&mut self) {
        let at = self.next_base;
        let m = TokenMasks::load(self.bytes, at, self.bytes.len());
        let quotes = m.quote & !escapes(m.backslash, &mut self.escape);
        let inside = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((inside as i64) >> 63) as u64;
        let bare = !inside & !(m.space | m.structural | m.quote | m.backslash);
        let after_bare = (bare << 1) | u64::from(self.in_bare);
        self.in_bare = bare >> 63 == 1;
        let odd = (m.backslash & !inside) | (after_bare & (m.quote | m.open_or_colon));
        let mut tokens = (m.structural & !inside) | (quotes & inside) | (bare & !after_bare);
        if odd != 0 {
            tokens &= (1u64 << odd.trailing_zeros()) - 1;
            self.stopped = true;
        }
        self.pending = tokens;
        self.base = at;
        self.next_base = at + 64;
    }
}

/// The four 16-byte lanes of the 64 bytes from `at`, those at or past `to` read as spaces.
#[inline(always)]
pub(super) fn lanes(bytes: &[u8], at: usize, to: usize) -> [Lane; 4] {
    let mut padded = [b' '; 64];
    let chunk: &[u8; 64] = match bytes.get(at..at + 64) {
        Some(chunk) if at + 64 <= to => chunk.try_into().expect("64 bytes"),
        _ => {
            let n = to - at;
            padded[..n].copy_from_slice(&bytes[at..to]);
            &padded
        }
    };
    std::array::from_fn(|k| {
        let v = u8x16::new(chunk[16 * k..16 * k + 16].try_into().expect("16 bytes"));
        Lane {
            v,
            folded: v | u8x16::splat(0x20),
            shift: 16 * k as u32,
        }
    })
}

/// Sixteen of 64 bytes, with the comparisons both mask loaders make of them.
pub(super) struct Lane {
    pub(super) v: u8x16,
    /// The bytes with bit 5 set: `{` and `[` (and `}` and `]`) differ only there.
    pub(super) folded: u8x16,
    /// Where the lane's bits go in a 64-bit mask.
    pub(super) shift: u32,
}

impl Lane {
    #[inline(always)]
    pub(super) fn is(&self, c: u8) -> u8x16 {
        self.v.simd_eq(u8x16::splat(c))
    }

    /// `{` or `[`.
    #[inline(always)]
    pub(super) fn open(&self) -> u8x16 {
        self.folded.simd_eq(u8x16::splat(b'{'))
    }

    /// `}` or `]`.
    #[inline(always)]
    pub(super) fn close(&self) -> u8x16 {
        self.folded.simd_eq(u8x16::splat(b'}'))
    }

    /// Space, tab, newline, carriage return.
    #[inline(always)]
    pub(super) fn space(&self) -> u8x16 {
        self.is(b' ') | self.is(b'\n') | self.is(b'\r') | self.is(b'\t')
    }

    /// The lane's matches as bits of a 64-bit mask.
    #[inline(always)]
    pub(super) fn bits(&self, matches: u8x16) -> u64 {
        u64::from(matches.to_bitmask()) << self.shift
    }
}

/// Bit masks of 64 bytes (bit i: byte `at + i`); bytes at or past `to` read as spaces.
#[derive(Default)]
pub(super) struct Masks {
    pub(super) quote: u64,
    pub(super) backslash: u64,
    /// `{` or `[`.
    pub(super) open: u64,
    /// `}` or `]`.
    pub(super) close: u64,
    pub(super) comma: u64,
    pub(super) colon: u64,
    /// Space, tab, newline, carriage return.
    pub(super) space: u64,
}

impl Masks {
    #[inline(always)]
    pub(super) fn load(bytes: &[u8], at: usize, to: usize) -> Masks {
        let mut m = Masks::default();
        for lane in lanes(bytes, at, to) {
            m.quote |= lane.bits(lane.is(b'"'));
            m.backslash |= lane.bits(lane.is(b'\\'));
            m.open |= lane.bits(lane.open());
            m.close |= lane.bits(lane.close());
            m.comma |= lane.bits(lane.is(b','));
            m.colon |= lane.bits(lane.is(b':'));
            m.space |= lane.bits(lane.space());
        }
        m
    }
}

/// The masks [`Tokens`] reads, with the bytes it treats alike combined before they become bits: five
/// masks instead of [`Masks`]' seven, for the pass that reads every byte of every span.
#[derive(Default)]
pub(super) struct TokenMasks {
    pub(super) quote: u64,
    pub(super) backslash: u64,
    /// `{`, `[`, `}`, `]`, `,` or `:`.
    pub(super) structural: u64,
    /// `{`, `[` or `:`, which may not follow a bare word.
    pub(super) open_or_colon: u64,
    /// Space, tab, newline, carriage return.
    pub(super) space: u64,
}

impl TokenMasks {
    #[inline(always)]
    pub(super) fn load(bytes: &[u8], at: usize, to: usize) -> TokenMasks {
        let mut m = TokenMasks::default();
        for lane in lanes(bytes, at, to) {
            let (open, colon) = (lane.open(), lane.is(b':'));
            m.quote |= lane.bits(lane.is(b'"'));
            m.backslash |= lane.bits(lane.is(b'\\'));
            m.structural |= lane.bits(open | lane.close() | colon | lane.is(b','));
            m.open_or_colon |= lane.bits(open | colon);
            m.space |= lane.bits(lane.space());
        }
        m
    }
}

/// The bytes escaped by a backslash (the byte after an unescaped backslash). `carry`: the first byte is
/// escaped; on return, the next chunk's first byte is. Backslashes are rare, so a loop over them is
/// cheap.
pub(super) fn escapes(backslashes: u64, carry: &mut bool) -> u64 {
    let mut escaped = u64::from(*carry);
    *carry = false;
    let mut rest = backslashes;
    while rest != 0 {
        let i = rest.trailing_zeros();
        rest &= rest - 1;
        if escaped >> i & 1 == 0 {
            if i == 63 {
                *carry = true;
            } else {
                escaped |= 1 << (i + 1);
            }
        }
    }
    escaped
}

/// Bit i set when an odd number of bits at or below i are set: with quote bits, the bytes from an
/// opening quote up to (not including) its closing quote.
pub(super) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}
