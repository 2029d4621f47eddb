//! Translation of Python `re` patterns (what policy files are written in, docs/compatibility.md §11.2)
//! into the syntax of the Rust regex engine, so a denied pattern matches the same arguments as in
//! faultgate 0.4.1.
//!
//! The two dialects agree on most text but not all of it, and a silent disagreement changes a verdict:
//! - Python reads `{` as a literal unless it forms a quantifier (`{x`, `{}`), and `{,n}` as `{0,n}`;
//!   Rust rejects the first and the last.
//! - Python's `$` (without the `m` flag) also matches before a final newline; Rust's only at the end.
//! - Python's `\Z` is Rust's `\z`; `\0`, `\012`, `\x41`, `\u0041`, `\a`, `\v` are character escapes;
//!   inside a class `\b` is a backspace.
//! - Inside a class, Python takes `[`, `&&`, `--` and `~~` literally, where Rust nests classes or
//!   applies set operations (`[[:alpha:]]` is a POSIX class in Rust, a plain set plus a `]` in Python).
//! - Python refuses global flags after the start (`x(?i)`), which Rust accepts.
//!
//! Python features the Rust engine cannot run at all (backreferences, lookaround, conditionals, atomic
//! groups, possessive quantifiers) are reported as errors instead of being approximated. Only whether a
//! pattern matches is ever asked, so named groups become plain groups and `$` may consume the final
//! newline it stands before.

use std::fmt::Write as _;

/// Translates a Python pattern; `Err` is a one-line reason (Python's own error, or a feature we lack).
pub(crate) fn translate(source: &str) -> Result<String, String> {
    let mut t = Translator {
        chars: source.chars().collect(),
        pos: 0,
        out: String::with_capacity(source.len() + 8),
        multiline: vec![false],
        ascii: vec![false],
        verbose: vec![false],
    };
    t.leading_flags()?;
    t.sequence()?;
    Ok(t.out)
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// The `m` flag per open group (innermost last): decides what `$` means.
    multiline: Vec<bool>,
    /// The `a` flag per open group: `\d`, `\w`, `\s` and `\b` are ASCII-only.
    ascii: Vec<bool>,
    /// The `x` flag per open group. Handled here rather than passed on, because Rust's verbose mode
    /// also drops whitespace inside classes, and Python's does not.
    verbose: Vec<bool>,
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn multiline(&self) -> bool {
        *self.multiline.last().unwrap_or(&false)
    }

    fn ascii(&self) -> bool {
        *self.ascii.last().unwrap_or(&false)
    }

    fn verbose(&self) -> bool {
        *self.verbose.last().unwrap_or(&false)
    }

    /// Global flags, allowed only at the very start in Python 3.11 (`(?i)`, `(?ms)`, ...).
    fn leading_flags(&mut self) -> Result<(), String> {
        while self.starts_with("(?") {
            let mut i = 2;
            let mut flags = String::new();
            while let Some(c) = self.peek_at(i) {
                if c.is_ascii_alphabetic() {
                    flags.push(c);
                    i += 1;
                } else {
                    break;
                }
            }
            if flags.is_empty() || self.peek_at(i) != Some(')') {
                return Ok(());
            }
            for f in flags.chars() {
                match f {
                    'i' | 's' => self.out.push_str(&format!("(?{f})")),
                    'x' => self.verbose[0] = true,
                    'm' => {
                        self.multiline[0] = true;
                        self.out.push_str("(?m)");
                    }
                    'a' => self.ascii[0] = true,
                    'u' => {}
                    'L' => return Err("cannot use LOCALE flag with a str pattern".into()),
                    _ => return Err(format!("unknown flag at position {}", self.pos + 2)),
                }
            }
            self.pos += i + 1;
        }
        Ok(())
    }

    /// Translates up to the end of the pattern or an unmatched `)` (left for the caller).
    fn sequence(&mut self) -> Result<(), String> {
        // Whether the last emitted item can take a quantifier.
        let mut repeatable = false;
        while let Some(c) = self.peek() {
            if self.verbose() && (c.is_whitespace() || c == '#') {
                self.skip_verbose();
                continue;
            }
            match c {
                ')' => {
                    if self.multiline.len() == 1 {
                        return Err(format!("unbalanced parenthesis at position {}", self.pos));
                    }
                    return Ok(());
                }
                '(' => {
                    self.group()?;
                    repeatable = true;
                }
                '[' => {
                    self.class()?;
                    repeatable = true;
                }
                '\\' => {
                    repeatable = self.escape()?;
                }
                '*' | '+' | '?' => {
                    self.quantifier(repeatable, c.encode_utf8(&mut [0; 4]), 1)?;
                    repeatable = false;
                }
                '{' => match self.counted() {
                    Some((text, len)) => {
                        self.quantifier(repeatable, &text, len)?;
                        repeatable = false;
                    }
                    None => {
                        self.pos += 1;
                        self.literal('{');
                        repeatable = true;
                    }
                },
                '$' => {
                    self.pos += 1;
                    self.out.push_str(if self.multiline() {
                        "(?m:$)"
                    } else {
                        r"(?:\n?\z)"
                    });
                    repeatable = false;
                }
                '^' => {
                    self.pos += 1;
                    self.out
                        .push_str(if self.multiline() { "(?m:^)" } else { r"\A" });
                    repeatable = false;
                }
                '|' => {
                    self.pos += 1;
                    self.out.push('|');
                    repeatable = false;
                }
                '.' => {
                    self.pos += 1;
                    self.out.push('.');
                    repeatable = true;
                }
                _ => {
                    self.pos += 1;
                    self.literal(c);
                    repeatable = true;
                }
            }
        }
        Ok(())
    }

    /// Verbose mode: whitespace and `#` comments up to the end of the line are not part of the pattern.
    fn skip_verbose(&mut self) {
        if self.peek() == Some('#') {
            while self.peek().is_some_and(|c| c != '\n') {
                self.pos += 1;
            }
        }
        self.pos += 1;
    }

    /// A `{m,n}` quantifier in Python's reading: `(rust text, chars consumed)`, or `None` when the
    /// brace is a literal.
    fn counted(&self) -> Option<(String, usize)> {
        let mut i = 1;
        let mut lo = String::new();
        while let Some(c) = self.peek_at(i).filter(char::is_ascii_digit) {
            lo.push(c);
            i += 1;
        }
        if self.peek_at(1) == Some('}') {
            return None;
        }
        let hi = if self.peek_at(i) == Some(',') {
            i += 1;
            let mut hi = String::new();
            while let Some(c) = self.peek_at(i).filter(char::is_ascii_digit) {
                hi.push(c);
                i += 1;
            }
            Some(hi)
        } else {
            None
        };
        if self.peek_at(i) != Some('}') {
            return None;
        }
        let lo = if lo.is_empty() { "0".to_string() } else { lo };
        let text = match hi {
            None => format!("{{{lo}}}"),
            Some(h) if h.is_empty() => format!("{{{lo},}}"),
            Some(h) => format!("{{{lo},{h}}}"),
        };
        Some((text, i + 1))
    }

    fn quantifier(&mut self, repeatable: bool, text: &str, len: usize) -> Result<(), String> {
        if !repeatable {
            return Err(format!("nothing to repeat at position {}", self.pos));
        }
        self.pos += len;
        self.out.push_str(text);
        match self.peek() {
            Some('?') => {
                self.pos += 1;
                self.out.push('?');
            }
            Some('+') => return Err("possessive quantifiers are not supported".into()),
            _ => {}
        }
        if matches!(self.peek(), Some('*' | '+' | '?'))
            || (self.peek() == Some('{') && self.counted().is_some())
        {
            return Err(format!("multiple repeat at position {}", self.pos));
        }
        Ok(())
    }

    fn group(&mut self) -> Result<(), String> {
        let open = self.pos;
        self.pos += 1;
        let (multiline, ascii, verbose) = (self.multiline(), self.ascii(), self.verbose());
        if self.peek() != Some('?') {
            self.out.push('(');
            return self.group_body(open, multiline, ascii, verbose);
        }
        self.pos += 1;
        match self.peek() {
            Some(':') => {
                self.pos += 1;
                self.out.push_str("(?:");
                self.group_body(open, multiline, ascii, verbose)
            }
            Some('P') if self.peek_at(1) == Some('<') => {
                // Names only matter to callers reading groups; a match test needs none.
                let close = (self.pos + 2..self.chars.len()).find(|&i| self.chars[i] == '>');
                let Some(close) = close.filter(|&c| c > self.pos + 2) else {
                    return Err(format!("bad group name at position {}", self.pos + 2));
                };
                self.pos = close + 1;
                self.out.push_str("(?:");
                self.group_body(open, multiline, ascii, verbose)
            }
            Some('#') => {
                match (self.pos..self.chars.len()).find(|&i| self.chars[i] == ')') {
                    Some(end) => self.pos = end + 1,
                    None => return Err("missing ), unterminated comment".into()),
                }
                Ok(())
            }
            Some('P') => Err("backreferences to named groups are not supported".into()),
            Some('=' | '!') => Err("lookahead assertions are not supported".into()),
            Some('<') if matches!(self.peek_at(1), Some('=' | '!')) => {
                Err("lookbehind assertions are not supported".into())
            }
            Some('(') => Err("conditional groups are not supported".into()),
            Some('>') => Err("atomic groups are not supported".into()),
            _ => self.scoped_flags(open, multiline, ascii, verbose),
        }
    }

    /// `(?i:...)`, `(?-i:...)`, `(?i-s:...)`; a bare `(?i)` here is Python's "global flags not at the
    /// start" error.
    fn scoped_flags(
        &mut self,
        open: usize,
        mut multiline: bool,
        mut ascii: bool,
        mut verbose: bool,
    ) -> Result<(), String> {
        let mut on = true;
        let mut rust = String::new();
        loop {
            match self.peek() {
                Some('-') if on => {
                    on = false;
                    rust.push('-');
                }
                Some(f @ ('i' | 's')) => rust.push(f),
                Some('x') => verbose = on,
                Some('m') => {
                    multiline = on;
                    rust.push('m');
                }
                Some('a') if on => ascii = true,
                Some('u') if on => ascii = false,
                Some(')') => {
                    return Err(format!(
                        "global flags not at the start of the expression at position {open}"
                    ));
                }
                Some(':') => break,
                _ => {
                    return Err(format!(
                        "unknown extension ?{} at position {}",
                        self.peek().unwrap_or(' '),
                        open + 1
                    ));
                }
            }
            self.pos += 1;
        }
        self.pos += 1;
        let rust = rust.trim_end_matches('-');
        self.out.push_str("(?");
        self.out.push_str(rust);
        self.out.push(':');
        self.group_body(open, multiline, ascii, verbose)
    }

    fn group_body(
        &mut self,
        open: usize,
        multiline: bool,
        ascii: bool,
        verbose: bool,
    ) -> Result<(), String> {
        self.multiline.push(multiline);
        self.ascii.push(ascii);
        self.verbose.push(verbose);
        self.sequence()?;
        self.multiline.pop();
        self.ascii.pop();
        self.verbose.pop();
        if self.peek() != Some(')') {
            return Err(format!(
                "missing ), unterminated subpattern at position {open}"
            ));
        }
        self.pos += 1;
        self.out.push(')');
        Ok(())
    }

    /// An escape outside a class; returns whether it can take a quantifier.
    fn escape(&mut self) -> Result<bool, String> {
        let at = self.pos;
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err("bad escape (end of pattern)".into());
        };
        self.pos += 1;
        let ascii = self.ascii();
        match c {
            'A' => self.out.push_str(r"\A"),
            'Z' => self.out.push_str(r"\z"),
            'b' => self.out.push_str(if ascii { r"(?-u:\b)" } else { r"\b" }),
            'B' => self.out.push_str(if ascii { r"(?-u:\B)" } else { r"\B" }),
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.out.push_str(&class_escape(c, ascii));
                return Ok(true);
            }
            '1'..='9' => {
                let value = self.octal_or_backref(c)?;
                self.push_code(value, at)?;
                return Ok(true);
            }
            _ => {
                let value = self.char_escape(c, at)?;
                self.push_code(value, at)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `\1`..`\99` are backreferences unless three octal digits follow the backslash.
    fn octal_or_backref(&mut self, first: char) -> Result<u32, String> {
        let second = self.peek().filter(char::is_ascii_digit);
        let third = self.peek_at(1).filter(|c| ('0'..='7').contains(c));
        if let (Some(s), Some(t)) = (second, third)
            && ('0'..='7').contains(&first)
            && ('0'..='7').contains(&s)
        {
            self.pos += 2;
            let v = [first, s, t]
                .iter()
                .fold(0, |acc, d| acc * 8 + d.to_digit(8).unwrap_or(0));
            if v > 0o377 {
                return Err(format!(
                    "octal escape value \\{first}{s}{t} outside of range 0-0o377"
                ));
            }
            return Ok(v);
        }
        Err("backreferences are not supported".into())
    }

    /// Escapes that stand for one character, shared by classes (`in_class` decides `\b`).
    fn char_escape(&mut self, c: char, at: usize) -> Result<u32, String> {
        Ok(match c {
            'a' => 7,
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            '0' => {
                let mut v = 0;
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                v
            }
            'x' => self.hex(2, at)?,
            'u' => self.hex(4, at)?,
            'U' => self.hex(8, at)?,
            c if c.is_ascii_alphanumeric() => {
                return Err(format!("bad escape \\{c} at position {at}"));
            }
            c => c as u32,
        })
    }

    fn hex(&mut self, digits: usize, at: usize) -> Result<u32, String> {
        let text: String = (0..digits).filter_map(|i| self.peek_at(i)).collect();
        if text.chars().count() != digits || !text.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("incomplete escape at position {at}"));
        }
        self.pos += digits;
        u32::from_str_radix(&text, 16).map_err(|_| format!("bad escape at position {at}"))
    }

    fn push_code(&mut self, value: u32, at: usize) -> Result<(), String> {
        let c = char::from_u32(value).ok_or_else(|| format!("bad escape at position {at}"))?;
        self.literal(c);
        Ok(())
    }

    /// A literal character, written so that neither Rust's meta characters nor verbose mode change it.
    fn literal(&mut self, c: char) {
        if c.is_alphanumeric() || c == '_' || (!c.is_ascii() && !c.is_whitespace()) {
            self.out.push(c);
        } else {
            let _ = write!(self.out, "\\x{{{:X}}}", c as u32);
        }
    }

    /// A character class in Python's reading: `]` first is literal, `[` and `&&`/`--`/`~~` are plain
    /// characters, `\b` is a backspace.
    fn class(&mut self) -> Result<(), String> {
        let open = self.pos;
        self.pos += 1;
        self.out.push('[');
        if self.peek() == Some('^') {
            self.pos += 1;
            self.out.push('^');
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(format!("unterminated character set at position {open}"));
            };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            let start = self.class_item()?;
            let is_range = self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']');
            match start {
                ClassItem::Set(text) => {
                    if is_range {
                        return Err(format!("bad character range at position {}", self.pos));
                    }
                    self.out.push_str(&text);
                }
                ClassItem::Char(lo) if is_range => {
                    self.pos += 1;
                    let ClassItem::Char(hi) = self.class_item()? else {
                        return Err(format!("bad character range at position {}", self.pos));
                    };
                    if hi < lo {
                        return Err(format!("bad character range at position {}", self.pos));
                    }
                    self.class_char(lo);
                    self.out.push('-');
                    self.class_char(hi);
                }
                ClassItem::Char(c) => self.class_char(c),
            }
        }
        self.out.push(']');
        Ok(())
    }

    fn class_item(&mut self) -> Result<ClassItem, String> {
        let Some(c) = self.peek() else {
            return Err("unterminated character set".into());
        };
        self.pos += 1;
        if c != '\\' {
            return Ok(ClassItem::Char(c));
        }
        let at = self.pos - 1;
        let Some(e) = self.peek() else {
            return Err("bad escape (end of pattern)".into());
        };
        self.pos += 1;
        match e {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => Ok(ClassItem::Set(class_escape(e, self.ascii()))),
            'b' => Ok(ClassItem::Char('\u{8}')),
            '1'..='7' if self.peek().is_some_and(|d| d.is_digit(8)) => {
                // Octal in a class: up to three digits.
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                char::from_u32(v)
                    .map(ClassItem::Char)
                    .ok_or_else(|| format!("bad escape at position {at}"))
            }
            '1'..='9' => Err(format!("bad escape \\{e} at position {at}")),
            _ => {
                let v = self.char_escape(e, at)?;
                char::from_u32(v)
                    .map(ClassItem::Char)
                    .ok_or_else(|| format!("bad escape at position {at}"))
            }
        }
    }

    fn class_char(&mut self, c: char) {
        if c.is_alphanumeric() || (!c.is_ascii() && !c.is_whitespace()) {
            self.out.push(c);
        } else {
            let _ = write!(self.out, "\\x{{{:X}}}", c as u32);
        }
    }
}

enum ClassItem {
    Char(char),
    /// A class escape (`\d`, `\w`, ...), already in Rust syntax; it cannot bound a range.
    Set(String),
}

/// `\d \D \w \W \s \S`, ASCII-only under Python's `a` flag. Usable inside and outside a class.
fn class_escape(c: char, ascii: bool) -> String {
    if !ascii {
        return format!("\\{c}");
    }
    let class = match c.to_ascii_lowercase() {
        'd' => "0-9",
        'w' => "0-9A-Za-z_",
        _ => r"\x{20}\t\n\r\x{0B}\x{0C}",
    };
    if c.is_ascii_uppercase() {
        format!("[^{class}]")
    } else {
        format!("[{class}]")
    }
}

#[cfg(test)]
mod tests {
    use super::translate;
    use regex_automata::meta::Regex;
    use regex_automata::util::syntax;

    fn matches(pattern: &str, haystack: &str) -> bool {
        let rust = translate(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        Regex::builder()
            .syntax(syntax::Config::new().case_insensitive(true))
            .build(&rust)
            .unwrap_or_else(|e| panic!("{pattern} -> {rust}: {e}"))
            .is_match(haystack)
    }

    // Each expectation below was observed with faultgate 0.4.1 (Python 3.11 `re`, IGNORECASE).

    #[test]
    fn braces_that_are_not_quantifiers_are_literal() {
        assert!(matches("{x", r#"{"p": "{x"}"#));
        assert!(matches("a{,3}c", "aac"));
        assert!(matches("a{,3}c", "c"));
        assert!(!matches("ba{,1}c", "baac"));
        assert!(matches("a{1,}b", "aab"));
        assert!(matches("x{}", "x{}"));
        assert!(translate("{1}").is_err());
    }

    #[test]
    fn dollar_also_matches_before_a_final_newline() {
        assert!(matches(r#"rm"}$"#, "{\"cmd\": \"rm\"}\n"));
        assert!(matches(r#"rm"}$"#, "{\"cmd\": \"rm\"}"));
        assert!(!matches(r#"rm"}$"#, "{\"cmd\": \"rm\"}\n\n"));
        assert!(!matches(r#"rm"}\Z"#, "{\"cmd\": \"rm\"}\n"));
        assert!(matches(r#"rm"}\Z"#, "{\"cmd\": \"rm\"}"));
        assert!(matches("(?m)^b$", "a\nb\nc"));
        assert!(!matches("^b$", "a\nb\nc"));
    }

    #[test]
    fn classes_read_brackets_and_operators_literally() {
        assert!(!matches("[[:alpha:]]", "abc"));
        assert!(matches("[[:alpha:]]", "a]"));
        assert!(matches("[a&&b]", "&"));
        assert!(matches("[--a]", "."));
        assert!(!matches("[--a]", ","));
        assert!(translate("[a--b]").is_err());
        assert!(matches("[]a]", "]"));
        assert!(matches(r"[\b]", "\u{8}"));
        assert!(matches("[a-c]", "B"));
        assert!(matches(r"[\d.]+", "1.5"));
    }

    #[test]
    fn character_escapes_are_python_s() {
        assert!(matches(r"\170", "x"));
        assert!(matches(r"\x41", "a"));
        assert!(matches(r"\u00e9", "É"));
        assert!(matches(r"\0", "\0"));
        assert!(matches(r"a\-b\#c", "a-b#c"));
        assert!(matches("(?x) a b # comment\n c", "abc"));
        assert!(matches("(?x)[ ]", " "));
        assert!(matches(r"(?P<n>ab)+", "abab"));
        assert!(matches(r"a(?#note)b", "ab"));
    }

    #[test]
    fn ascii_flag_narrows_classes() {
        assert!(matches(r"\d", "٣"));
        assert!(!matches(r"(?a)\d", "٣"));
        assert!(matches(r"(?a)\w+", "abc"));
    }

    #[test]
    fn what_python_rejects_or_we_cannot_run_is_an_error() {
        for p in [
            "x(?i)",
            r"(a)\1",
            "a(?=b)",
            "(?<!a)b",
            "(?P=n)",
            "a++",
            "(?>a)",
            r"\q",
            "(a",
            "a)",
            "*a",
            "[a",
            "a**",
            "(?(1)a|b)",
            r"\400",
        ] {
            assert!(translate(p).is_err(), "{p} should be rejected");
        }
        assert!(
            translate("x(?i)")
                .unwrap_err()
                .contains("global flags not at the start")
        );
        assert!(translate(r"(a)\1").unwrap_err().contains("backreferences"));
    }
}
