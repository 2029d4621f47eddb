//! JSON read straight from a file's bytes into simd-json's tape, for the spans the scan delimited.
//!
//! simd-json wants a padded, writable copy of its input and indexes every structural character of it
//! again, though the scan has just walked those bytes. Spans are small documents, mostly strings, so a
//! plain recursive reader over the mapped bytes writes the same tape for less: no copy, no second
//! index. Strings without escapes are borrowed from the file; the others are unescaped into a spare
//! area the caller lends.
//!
//! The reader takes only what it is sure simd-json reads the same way. Anything else (an error, a
//! number outside the common forms, a lone surrogate, deep nesting) it declines, and the caller hands
//! the bytes to simd-json, which decides: errors and their messages stay simd-json's. The tests check
//! that both give the same tape on every text the reader takes, and that simd-json takes every text
//! the reader takes.

use simd_json::StaticNode;
use simd_json::tape::Node;
use wide::u8x16;

/// The reader declined the text: simd-json must read it.
#[derive(Debug, PartialEq)]
pub(crate) struct Declined;

type Read<T> = Result<T, Declined>;

/// Nesting deeper than this is declined. Spans are shallow; simd-json's own limit is far higher.
const MAX_DEPTH: usize = 64;

/// A reader of one text, value after value.
pub(crate) struct Reader<'i> {
    text: &'i str,
    at: usize,
    /// Where unescaped strings go: what the strings read so far left of the caller's area.
    spare: &'i mut [u8],
}

impl<'i> Reader<'i> {
    /// A reader of `text` from its start, unescaping strings into `spare`. A spare area as long as
    /// the text always suffices: unescaping never lengthens a string.
    pub(crate) fn new(text: &'i str, spare: &'i mut [u8]) -> Reader<'i> {
        Reader { text, at: 0, spare }
    }

    /// Appends the next value's nodes to `tape`.
    pub(crate) fn value(&mut self, tape: &mut Vec<Node<'i>>) -> Read<()> {
        self.skip_space();
        self.value_at(tape, 0)
    }

    /// Reads past `byte` (after any whitespace).
    pub(crate) fn expect(&mut self, byte: u8) -> Read<()> {
        self.skip_space();
        self.eat(byte)
    }

    /// Checks that only whitespace is left, and hands back the unused spare area.
    pub(crate) fn finish(mut self) -> Read<&'i mut [u8]> {
        self.skip_space();
        if self.at == self.text.len() {
            Ok(self.spare)
        } else {
            Err(Declined)
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> Read<()> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Declined)
        }
    }

    fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.at) {
            if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                return;
            }
            self.at += 1;
            // Pretty-printed exports indent each line: the spaces are skipped sixteen at a time.
            if byte == b'\n' {
                while let Some(chunk) = bytes.get(self.at..self.at + 16) {
                    let lane = u8x16::new(chunk.try_into().expect("16 bytes"));
                    let other = !lane.simd_eq(u8x16::splat(b' ')).to_bitmask() & 0xffff;
                    if other != 0 {
                        self.at += other.trailing_zeros() as usize;
                        break;
                    }
                    self.at += 16;
                }
            }
        }
    }

    fn value_at(&mut self, tape: &mut Vec<Node<'i>>, depth: usize) -> Read<()> {
        match self.peek() {
            Some(b'"') => {
                self.at += 1;
                let text = self.string()?;
                tape.push(Node::String(text));
            }
            Some(b'{') => self.container(tape, depth, true)?,
            Some(b'[') => self.container(tape, depth, false)?,
            Some(b't') => tape.push(Node::Static(self.literal("true", StaticNode::Bool(true))?)),
            Some(b'f') => tape.push(Node::Static(
                self.literal("false", StaticNode::Bool(false))?,
            )),
            Some(b'n') => tape.push(Node::Static(self.literal("null", StaticNode::Null)?)),
            Some(b'-' | b'0'..=b'9') => tape.push(Node::Static(self.number()?)),
            _ => return Err(Declined),
        }
        Ok(())
    }

    /// The object (`object`) or array whose opening bracket is at the reader's position, headed on
    /// the tape by its node.
    fn container(&mut self, tape: &mut Vec<Node<'i>>, depth: usize, object: bool) -> Read<()> {
        if depth >= MAX_DEPTH {
            return Err(Declined);
        }
        let close = if object { b'}' } else { b']' };
        self.at += 1;
        let head = tape.len();
        tape.push(Node::Static(StaticNode::Null));
        let mut len = 0;
        self.skip_space();
        if self.peek() == Some(close) {
            self.at += 1;
        } else {
            loop {
                if object {
                    self.eat(b'"')?;
                    let key = self.string()?;
                    tape.push(Node::String(key));
                    self.expect(b':')?;
                    self.skip_space();
                }
                self.value_at(tape, depth + 1)?;
                len += 1;
                self.skip_space();
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        self.skip_space();
                    }
                    Some(byte) if byte == close => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(Declined),
                }
            }
        }
        let count = tape.len() - head - 1;
        tape[head] = if object {
            Node::Object { len, count }
        } else {
            Node::Array { len, count }
        };
        Ok(())
    }

    /// `word`, which must end where a value may end.
    fn literal(&mut self, word: &str, node: StaticNode) -> Read<StaticNode> {
        let end = self.at + word.len();
        if self.text.as_bytes().get(self.at..end) != Some(word.as_bytes())
            || !ends_value(self.text, end)
        {
            return Err(Declined);
        }
        self.at = end;
        Ok(node)
    }

    /// A number as simd-json reads it: an integer as `U64` (or `I64` when negative), anything with a
    /// fraction or an exponent as `F64`. Integers beyond 64 bits and floats beyond `f64` are declined.
    fn number(&mut self) -> Read<StaticNode> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let negative = bytes[start] == b'-';
        let first_digit = start + usize::from(negative);
        let mut at = first_digit;
        // `None` once past 64 bits, which matters only if the number is an integer.
        let mut magnitude = Some(0u64);
        while let Some(&digit @ b'0'..=b'9') = bytes.get(at) {
            magnitude = magnitude
                .and_then(|m| m.checked_mul(10))
                .and_then(|m| m.checked_add(u64::from(digit - b'0')));
            at += 1;
        }
        let digits = at - first_digit;
        if digits == 0 || (digits > 1 && bytes[first_digit] == b'0') {
            return Err(Declined);
        }
        let mut float = false;
        if bytes.get(at) == Some(&b'.') {
            float = true;
            at = digits_from(bytes, at + 1)?;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            float = true;
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            at = digits_from(bytes, at)?;
        }
        if !ends_value(self.text, at) {
            return Err(Declined);
        }
        let node = if float {
            // Both parsers round correctly, so they agree on every finite value.
            let value: f64 = self.text[start..at].parse().map_err(|_| Declined)?;
            if !value.is_finite() {
                return Err(Declined);
            }
            StaticNode::F64(value)
        } else if negative {
            let magnitude = magnitude.filter(|&m| m <= 1 << 63).ok_or(Declined)?;
            // `1 << 63` wraps to `i64::MIN`, which is its negation.
            StaticNode::I64((magnitude as i64).wrapping_neg())
        } else {
            StaticNode::U64(magnitude.ok_or(Declined)?)
        };
        self.at = at;
        Ok(node)
    }

    /// The string whose contents start at the reader's position, which ends past its closing quote.
    fn string(&mut self) -> Read<&'i str> {
        let start = self.at;
        let stop = special_from(self.text.as_bytes(), start);
        match self.text.as_bytes().get(stop) {
            Some(b'"') => {
                self.at = stop + 1;
                self.text.get(start..stop).ok_or(Declined)
            }
            Some(b'\\') => self.unescape(start, stop),
            _ => Err(Declined),
        }
    }

    /// The string from `start`, whose first escape is at `stop`, unescaped into the spare area.
    fn unescape(&mut self, start: usize, stop: usize) -> Read<&'i str> {
        let bytes = self.text.as_bytes();
        let spare = std::mem::take(&mut self.spare);
        let mut written = stop - start;
        spare
            .get_mut(..written)
            .ok_or(Declined)?
            .copy_from_slice(&bytes[start..stop]);
        let mut at = stop;
        loop {
            match bytes.get(at) {
                Some(b'"') => break,
                Some(b'\\') => {}
                _ => return Err(Declined),
            }
            let (decoded, read) = escape(bytes, at + 1)?;
            let len = decoded.len_utf8();
            decoded.encode_utf8(spare.get_mut(written..written + len).ok_or(Declined)?);
            written += len;
            at += 1 + read;
            // The plain bytes up to the next escape or the closing quote, sixteen at a time: each
            // block is copied whole, then the bytes past its first special one are written over.
            loop {
                let block = bytes
                    .get(at..at + 16)
                    .zip(spare.get_mut(written..written + 16));
                let Some((from, to)) = block else {
                    let stop = special_from(bytes, at);
                    let plain = &bytes[at..stop];
                    spare
                        .get_mut(written..written + plain.len())
                        .ok_or(Declined)?
                        .copy_from_slice(plain);
                    written += plain.len();
                    at = stop;
                    break;
                };
                let from: &[u8; 16] = from.try_into().expect("16 bytes");
                <&mut [u8; 16]>::try_from(to)
                    .expect("16 bytes")
                    .copy_from_slice(from);
                let special = special_mask(from);
                if special != 0 {
                    let plain = special.trailing_zeros() as usize;
                    at += plain;
                    written += plain;
                    break;
                }
                at += 16;
                written += 16;
            }
        }
        self.at = at + 1;
        let (text, rest) = spare.split_at_mut(written);
        self.spare = rest;
        std::str::from_utf8(text).map_err(|_| Declined)
    }
}

/// Whether a value may end before byte `at` of `text`.
fn ends_value(text: &str, at: usize) -> bool {
    matches!(
        text.as_bytes().get(at),
        None | Some(b' ' | b'\n' | b'\r' | b'\t' | b',' | b'}' | b']')
    )
}

/// Past one or more digits from `at`.
fn digits_from(bytes: &[u8], at: usize) -> Read<usize> {
    let end = at
        + bytes[at.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
    if end == at { Err(Declined) } else { Ok(end) }
}

/// Where the first quote, backslash or control character at or after `at` is (the length when none
/// is).
fn special_from(bytes: &[u8], mut at: usize) -> usize {
    while let Some(block) = bytes.get(at..at + 16) {
        let special = special_mask(block.try_into().expect("16 bytes"));
        if special != 0 {
            return at + special.trailing_zeros() as usize;
        }
        at += 16;
    }
    bytes[at.min(bytes.len())..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map_or(bytes.len(), |p| at + p)
}

/// The quotes, backslashes and control characters of `block`, as bits.
#[inline(always)]
fn special_mask(block: &[u8; 16]) -> u32 {
    let lane = u8x16::new(*block);
    let special = lane.simd_eq(u8x16::splat(b'"'))
        | lane.simd_eq(u8x16::splat(b'\\'))
        | lane.min(u8x16::splat(0x1f)).simd_eq(lane);
    special.to_bitmask()
}

/// The character the escape whose letter is at `at` stands for, and how many bytes follow the
/// backslash.
fn escape(bytes: &[u8], at: usize) -> Read<(char, usize)> {
    let simple = match bytes.get(at) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let unit = hex4(bytes, at + 1)?;
            if !(0xd800..0xe000).contains(&unit) {
                return Ok((char::from_u32(unit).ok_or(Declined)?, 5));
            }
            // Only a high surrogate followed by an escaped low one makes a character.
            if unit >= 0xdc00 || bytes.get(at + 5..at + 7) != Some(b"\\u") {
                return Err(Declined);
            }
            let low = hex4(bytes, at + 7)?;
            if !(0xdc00..0xe000).contains(&low) {
                return Err(Declined);
            }
            let code = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
            return Ok((char::from_u32(code).ok_or(Declined)?, 11));
        }
        _ => return Err(Declined),
    };
    Ok((simple, 1))
}

/// Four hex digits from `at`.
fn hex4(bytes: &[u8], at: usize) -> Read<u32> {
    let digits = bytes.get(at..at + 4).ok_or(Declined)?;
    digits.iter().try_fold(0u32, |code, &digit| {
        let value = (digit as char).to_digit(16).ok_or(Declined)?;
        Ok(code << 4 | value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reader's tape of `text` (one value, then only whitespace).
    fn direct(text: &str) -> Read<Vec<Node<'_>>> {
        // Leaked so that the tape may borrow the area: test inputs are small.
        let spare: &mut [u8] = Box::leak(vec![0; text.len()].into_boxed_slice());
        let mut reader = Reader::new(text, spare);
        let mut tape = Vec::new();
        reader.value(&mut tape)?;
        reader.finish()?;
        Ok(tape)
    }

    /// simd-json's tape of `text`, owned: strings leaked to outlive the parse.
    fn simd(text: &str) -> Option<Vec<Node<'static>>> {
        let mut bytes = text.as_bytes().to_vec();
        let tape = simd_json::to_tape(&mut bytes).ok()?;
        Some(
            tape.0
                .into_iter()
                .map(|node| match node {
                    Node::String(s) => Node::String(Box::leak(s.to_string().into_boxed_str())),
                    Node::Object { len, count } => Node::Object { len, count },
                    Node::Array { len, count } => Node::Array { len, count },
                    Node::Static(s) => Node::Static(s),
                })
                .collect(),
        )
    }

    /// The reader agrees with simd-json on `text`, or declines it; returns whether it took it.
    fn agrees(text: &str) -> bool {
        match direct(text) {
            Ok(tape) => {
                let theirs = simd(text);
                assert_eq!(
                    Some(tape.as_slice()),
                    theirs.as_deref(),
                    "tapes differ on {text:?}"
                );
                true
            }
            Err(Declined) => false,
        }
    }

    /// The spans of the examples at `paths`, each with its file.
    fn example_spans(paths: &[&'static str]) -> Vec<(&'static str, String)> {
        let mut spans = Vec::new();
        for &path in paths {
            let bytes = std::fs::read(path).unwrap();
            for span in crate::ingest::formats::otlp::scan::locate_spans(&bytes)
                .unwrap()
                .iter()
            {
                for one in
                    crate::ingest::formats::otlp::scan::spans_at(&bytes, span.start(), span.count())
                {
                    let text = String::from_utf8(bytes[one.start()..one.end()].to_vec()).unwrap();
                    spans.push((path, text));
                }
            }
        }
        spans
    }

    #[test]
    fn every_span_of_the_examples_reads_as_simd_json_reads_it() {
        let spans = example_spans(&[
            "examples/traces.json",
            "examples/gate/candidate_gpt.json",
            "examples/gate/baseline_glm_run1.json",
            "examples/gate/candidate_qwen.json",
        ]);
        for (path, span) in &spans {
            assert!(agrees(span), "declined a span of {path}");
        }
        assert!(spans.len() > 100, "only {} spans", spans.len());
    }

    #[test]
    fn values_of_every_kind_read_as_simd_json_reads_them() {
        let taken = [
            r#"{}"#,
            r#"[]"#,
            r#"{"a":[1,-2,3.5,-0,0,-0.0,1e5,1E-5,2.5e+3,true,false,null,"x"],"b":{"c":{}}}"#,
            " \n\t{ \"a\" :\r\n [ 1 , { } , [ ] ] } \n ",
            r#""plain""#,
            r#""esc \" \\ \/ \b \f \n \r \t end""#,
            r#""\u0041\u00e9\u20ac\ud83d\ude00\u0000""#,
            r#""é ünïcødé 😀 straight""#,
            "18446744073709551615",
            "-9223372036854775808",
            "9223372036854775808",
            "123456789012345678",
            "0.1",
            "1.7976931348623157e308",
            "5e-324",
            "1e-400",
            "12345678901234567890123e-10",
            r#"{"a":1,"a":2}"#,
            "\"a string of more than sixteen bytes, with an escape \\n past them\"",
        ];
        for text in taken {
            assert!(agrees(text), "declined {text:?}");
        }
        let declined = [
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "-01",
            "18446744073709551616",
            "-9223372036854775809",
            "1e999",
            "tru",
            "truex",
            "nul",
            "[1,]",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            "[1 2]",
            "\"unterminated",
            "\"tab\there\"",
            r#""\x""#,
            r#""\u12""#,
            r#""\ud800""#,
            r#""\udc00\ud800""#,
            r#""\ud800\u0041""#,
            "1 2",
            "",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        ];
        for text in declined {
            assert_eq!(direct(text).err(), Some(Declined), "took {text:?}");
        }
    }

    /// JSON texts built from arbitrary values, with varied whitespace and escapes.
    fn json_text() -> impl Strategy<Value = String> {
        let string =
            proptest::string::string_regex(r#"([a-z é😀"\\/\n\t]|\\u[0-9a-fA-F]{4}){0,40}"#)
                .unwrap()
                .prop_map(|s| serde_json::to_string(&s).unwrap());
        let raw_escape = prop_oneof![
            Just(r#""\u00e9\n\"""#.to_string()),
            Just(r#""\ud83d\ude00""#.to_string()),
            Just(r#""\/\b\f""#.to_string()),
        ];
        let number = prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f:?}")),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f:e}")),
        ];
        let leaf = prop_oneof![
            string,
            raw_escape,
            number,
            Just("true".to_string()),
            Just("false".to_string()),
            Just("null".to_string()),
        ];
        let space = prop_oneof![Just(""), Just(" "), Just("\n    "), Just("\t\r\n")];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            let space = space.clone();
            prop_oneof![
                proptest::collection::vec((inner.clone(), space.clone()), 0..6).prop_map(|items| {
                    let body: Vec<String> = items
                        .into_iter()
                        .map(|(v, s)| format!("{s}{v}{s}"))
                        .collect();
                    format!("[{}]", body.join(","))
                }),
                proptest::collection::vec(("[a-z\"]{0,5}", inner, space), 0..6).prop_map(|items| {
                    let body: Vec<String> = items
                        .into_iter()
                        .map(|(k, v, s)| {
                            format!("{s}{}{s}:{s}{v}{s}", serde_json::to_string(&k).unwrap())
                        })
                        .collect();
                    format!("{{{}}}", body.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Real spans with bytes changed, removed or repeated: declined, or read as simd-json reads them.
        #[test]
        fn changed_spans_of_the_examples_are_declined_or_read_as_simd_json_reads_them(
            pick in any::<prop::sample::Index>(),
            changes in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..4),
        ) {
            thread_local! {
                static SPANS: Vec<(&'static str, String)> =
                    example_spans(&["examples/traces.json", "examples/gate/candidate_gpt.json"]);
            }
            let mut bytes = SPANS.with(|spans| spans[pick.index(spans.len())].1.clone().into_bytes());
            for (at, byte, how) in changes {
                let at = at.index(bytes.len());
                match how {
                    0 => bytes[at] = byte,
                    1 => { bytes.remove(at); }
                    _ => bytes.insert(at, bytes[at]),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            if let Ok(text) = String::from_utf8(bytes) {
                agrees(&text);
            }
        }

        #[test]
        fn generated_json_reads_as_simd_json_reads_it(text in json_text()) {
            prop_assert!(agrees(&text), "declined {:?}", text);
        }

        /// Whatever a byte's change makes of a valid text, the reader either declines it or reads it
        /// as simd-json does.
        #[test]
        fn changed_json_is_declined_or_read_as_simd_json_reads_it(
            text in json_text(),
            at in any::<prop::sample::Index>(),
            byte in prop_oneof![Just(b'"'), Just(b'\\'), Just(b','), Just(b'}'), Just(b']'), Just(b'0'), Just(b'e'), Just(b'.'), Just(b'-'), Just(b' '), Just(0x01), Just(b'u')],
            remove in any::<bool>(),
        ) {
            let mut bytes = text.into_bytes();
            if !bytes.is_empty() {
                let at = at.index(bytes.len());
                if remove { bytes.remove(at); } else { bytes[at] = byte; }
            }
            if let Ok(text) = String::from_utf8(bytes) {
                agrees(&text);
            }
        }
    }
}
