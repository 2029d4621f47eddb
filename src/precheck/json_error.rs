//! The message Python's `json.loads` gives for text that is not JSON, e.g.
//! `Expecting value: line 2 column 1 (char 20)`.
//!
//! precheck prints the parser's message in its `cannot parse` issue, and 0.4.1 shows Python's; our reader
//! (simd-json) words and places errors differently. This re-runs the CPython decoder's grammar (the C
//! scanner, which CPython uses by default) over text that already failed to parse, only to find the
//! first error and word it the same way. Positions count code points, as Python does.

/// Python's error message for `text`, or `None` when Python would accept it (for instance `NaN`, which
/// Python reads and our reader does not).
/// Python's `UnicodeDecodeError` text for bytes that are not UTF-8, as 0.4.1 prints it when it reads a
/// trace file as text: `'utf-8' codec can't decode byte 0xff in position 64: invalid start byte`.
pub(crate) fn python_utf8_error(bytes: &[u8]) -> Option<String> {
    let err = std::str::from_utf8(bytes).err()?;
    let at = err.valid_up_to();
    let byte = bytes[at];
    Some(match err.error_len() {
        None if bytes.len() - at > 1 => format!(
            "'utf-8' codec can't decode bytes in position {at}-{}: unexpected end of data",
            bytes.len() - 1
        ),
        None => format!(
            "'utf-8' codec can't decode byte {byte:#04x} in position {at}: unexpected end of data"
        ),
        // A lead byte no character starts with, or a continuation byte without a lead.
        Some(1) if !(0xc2..=0xf4).contains(&byte) => format!(
            "'utf-8' codec can't decode byte {byte:#04x} in position {at}: invalid start byte"
        ),
        Some(_) => format!(
            "'utf-8' codec can't decode byte {byte:#04x} in position {at}: invalid continuation byte"
        ),
    })
}

pub(crate) fn python_json_error(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.first() == Some(&'\u{feff}') {
        return Some(located(
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            &chars,
            0,
        ));
    }
    let scanner = Scanner { s: &chars };
    let start = scanner.skip_ws(0);
    let result = scanner.value(start).and_then(|end| {
        let end = scanner.skip_ws(end);
        if end == chars.len() {
            Ok(end)
        } else {
            Err(("Extra data", end))
        }
    });
    match result {
        Ok(_) => None,
        Err((message, at)) => Some(located(message, &chars, at)),
    }
}

/// `<message>: line L column C (char P)`, as `json.JSONDecodeError` formats it.
fn located(message: &str, chars: &[char], at: usize) -> String {
    let before = &chars[..at.min(chars.len())];
    let line = before.iter().filter(|&&c| c == '\n').count() + 1;
    let column = match before.iter().rposition(|&c| c == '\n') {
        Some(newline) => at - newline,
        None => at + 1,
    };
    format!("{message}: line {line} column {column} (char {at})")
}

/// An error message and the code point index it points at.
type Failure = (&'static str, usize);

struct Scanner<'a> {
    s: &'a [char],
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(' ' | '\t' | '\n' | '\r')) {
            i += 1;
        }
        i
    }

    fn starts_with(&self, i: usize, word: &str) -> bool {
        word.chars()
            .enumerate()
            .all(|(k, c)| self.at(i + k) == Some(c))
    }

    /// One JSON value starting exactly at `i`; returns the index after it. A missing value is
    /// `Expecting value` at `i` (Python's StopIteration).
    fn value(&self, i: usize) -> Result<usize, Failure> {
        match self.at(i) {
            None => Err(("Expecting value", i)),
            Some('"') => self.string(i + 1),
            Some('{') => self.object(i + 1),
            Some('[') => self.array(i + 1),
            Some(_) => {
                for word in ["null", "true", "false", "NaN", "Infinity", "-Infinity"] {
                    if self.starts_with(i, word) {
                        return Ok(i + word.chars().count());
                    }
                }
                self.number(i)
            }
        }
    }

    fn number(&self, start: usize) -> Result<usize, Failure> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('1'..='9') => {
                i += 1;
                while digit(i) {
                    i += 1;
                }
            }
            Some('0') => i += 1,
            _ => return Err(("Expecting value", start)),
        }
        if self.at(i) == Some('.') && digit(i + 1) {
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(self.at(j), Some('-' | '+')) {
                j += 1;
            }
            let digits_from = j;
            while digit(j) {
                j += 1;
            }
            if j > digits_from {
                i = j;
            }
        }
        Ok(i)
    }

    /// A string whose opening quote is at `begin - 1`.
    fn string(&self, begin: usize) -> Result<usize, Failure> {
        let quote = begin - 1;
        let mut i = begin;
        loop {
            match self.at(i) {
                None => return Err(("Unterminated string starting at", quote)),
                Some('"') => return Ok(i + 1),
                Some('\\') => {
                    i += 1;
                    match self.at(i) {
                        None => return Err(("Unterminated string starting at", quote)),
                        Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => i += 1,
                        Some('u') => {
                            let hex = |k: usize| self.at(k).is_some_and(|c| c.is_ascii_hexdigit());
                            // The four digits and a closing quote must fit before the end.
                            if i + 5 >= self.s.len() || !(1..=4).all(|k| hex(i + k)) {
                                return Err(("Invalid \\uXXXX escape", i));
                            }
                            let high = (1..=4).fold(0u32, |acc, k| {
                                acc * 16 + self.at(i + k).and_then(|c| c.to_digit(16)).unwrap_or(0)
                            });
                            i += 5;
                            // A high surrogate followed by `\u` must be followed by valid hex digits.
                            if (0xd800..0xdc00).contains(&high)
                                && i + 6 < self.s.len()
                                && self.at(i) == Some('\\')
                                && self.at(i + 1) == Some('u')
                            {
                                if !(2..=5).all(|k| hex(i + k)) {
                                    return Err(("Invalid \\uXXXX escape", i + 1));
                                }
                                i += 6;
                            }
                        }
                        Some(_) => return Err(("Invalid \\escape", i - 1)),
                    }
                }
                Some(c) if (c as u32) <= 0x1f => return Err(("Invalid control character at", i)),
                Some(_) => i += 1,
            }
        }
    }

    /// An object whose `{` is at `i - 1`.
    fn object(&self, i: usize) -> Result<usize, Failure> {
        let mut i = self.skip_ws(i);
        if self.at(i) == Some('}') {
            return Ok(i + 1);
        }
        loop {
            if self.at(i) != Some('"') {
                return Err(("Expecting property name enclosed in double quotes", i));
            }
            i = self.skip_ws(self.string(i + 1)?);
            if self.at(i) != Some(':') {
                return Err(("Expecting ':' delimiter", i));
            }
            i = self.skip_ws(self.value(self.skip_ws(i + 1))?);
            match self.at(i) {
                Some('}') => return Ok(i + 1),
                Some(',') => i = self.skip_ws(i + 1),
                _ => return Err(("Expecting ',' delimiter", i)),
            }
        }
    }

    /// An array whose `[` is at `i - 1`.
    fn array(&self, i: usize) -> Result<usize, Failure> {
        let mut i = self.skip_ws(i);
        if self.at(i) == Some(']') {
            return Ok(i + 1);
        }
        loop {
            i = self.skip_ws(self.value(i)?);
            match self.at(i) {
                Some(']') => return Ok(i + 1),
                Some(',') => i = self.skip_ws(i + 1),
                _ => return Err(("Expecting ',' delimiter", i)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{python_json_error, python_utf8_error};

    /// Each observed with Python 3.11's `bytes.decode("utf-8")` (0.4.1's `read_text`).
    #[test]
    fn utf8_errors_match_python() {
        let cases: [(&[u8], &str); 5] = [
            (
                b"{\"a\xff\": 1}",
                "can't decode byte 0xff in position 3: invalid start byte",
            ),
            (
                b"{\"a\x80\": 1}",
                "can't decode byte 0x80 in position 3: invalid start byte",
            ),
            (
                b"{\"a\xe2\x28\": 1}",
                "can't decode byte 0xe2 in position 3: invalid continuation byte",
            ),
            (
                b"{\"a\xed\xa0\x80\": 1}",
                "can't decode byte 0xed in position 3: invalid continuation byte",
            ),
            (
                b"{}\xe2\x82",
                "can't decode bytes in position 2-3: unexpected end of data",
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                python_utf8_error(bytes),
                Some(format!("'utf-8' codec {want}"))
            );
        }
        assert_eq!(python_utf8_error(b"{}"), None);
    }

    /// Each observed with Python 3.11's `json.loads`.
    #[test]
    fn messages_and_positions_match_python() {
        let cases = [
            (
                r#"{"a": "\q"}"#,
                r"Invalid \escape: line 1 column 8 (char 7)",
            ),
            (
                r#"{"a": "\u12"}"#,
                r"Invalid \uXXXX escape: line 1 column 9 (char 8)",
            ),
            (
                r#"{"a": "\u12zz"}"#,
                r"Invalid \uXXXX escape: line 1 column 9 (char 8)",
            ),
            (
                r#"{"a": "x"#,
                "Unterminated string starting at: line 1 column 7 (char 6)",
            ),
            (
                r#"{"a":1,}"#,
                "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
            ),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (
                r#"{"a" 1}"#,
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
            ("-", "Expecting value: line 1 column 1 (char 0)"),
            ("1.", "Extra data: line 1 column 2 (char 1)"),
            ("[01]", "Expecting ',' delimiter: line 1 column 3 (char 2)"),
            (
                "\"a\tb\"",
                "Invalid control character at: line 1 column 3 (char 2)",
            ),
            ("", "Expecting value: line 1 column 1 (char 0)"),
            ("  ", "Expecting value: line 1 column 3 (char 2)"),
            ("nul", "Expecting value: line 1 column 1 (char 0)"),
            (r#"{"a": tru}"#, "Expecting value: line 1 column 7 (char 6)"),
            (
                "{\"resourceSpans\": [\n",
                "Expecting value: line 2 column 1 (char 20)",
            ),
            (
                "{\"é\": 1,\n \"b\" 2}",
                "Expecting ':' delimiter: line 2 column 6 (char 14)",
            ),
            ("{\n}\n{}", "Extra data: line 3 column 1 (char 4)"),
            (
                r#""\ud83d\uzzzz""#,
                r"Invalid \uXXXX escape: line 1 column 9 (char 8)",
            ),
            (
                r#""\ud83d\u""#,
                r"Invalid \uXXXX escape: line 1 column 9 (char 8)",
            ),
            ("1e", "Extra data: line 1 column 2 (char 1)"),
            (
                "[1e5x]",
                "Expecting ',' delimiter: line 1 column 5 (char 4)",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(python_json_error(text).as_deref(), Some(want), "{text:?}");
        }
    }

    #[test]
    fn what_python_accepts_is_no_error() {
        for text in [
            "{}",
            " [1, -0.5e3, NaN, -Infinity, \"\\ud83d\\ude00\"] ",
            "null",
            "\"\\u00e9\"",
        ] {
            assert_eq!(python_json_error(text), None, "{text:?}");
        }
    }
}
