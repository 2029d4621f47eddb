//! Masking of PII and secrets in text written out by the tool (docs/compatibility.md §18).
//!
//! This module owns the `--redact` modes and the builtin masker: nine patterns applied one after
//! another, each over the whole text left to right without overlaps, exactly as 0.4.1's Python
//! regular expressions would apply them (lookbehind, lookahead, backtracking and all). It also owns
//! the scenario-key transform of §18.4. Deciding *what* gets masked (reasons, keys, judge input) is
//! the caller's business.
//!
//! Most patterns are simple enough that a hand-written scanner reproduces the backtracking result
//! directly; the phone pattern, whose optional parts backtrack into each other, runs on
//! `regex-automata` (leftmost-first semantics equal a backtracking engine's choice) with the
//! boundary checks done by hand around each candidate. Every candidate start does bounded work
//! (each pattern has a maximum length), and each char is read by a bounded number of candidates,
//! so masking is linear in the text length even on hostile input.
//!
//! Word chars and digits follow the Unicode tables of `regex-syntax`, which are newer than those of
//! Python 3.11: code points unassigned in Unicode 14 may be classed differently than 0.4.1 does.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

use crate::compat::reason::py_repr_str;

const SECRET: &str = "<SECRET>";
const EMAIL: &str = "<EMAIL>";
const US_SSN: &str = "<US_SSN>";
const CREDIT_CARD: &str = "<CREDIT_CARD>";
const IP_ADDRESS: &str = "<IP_ADDRESS>";
const PHONE: &str = "<PHONE>";

/// A `--redact` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Redaction {
    /// The builtin pattern masker (the default).
    #[default]
    Builtin,
    /// No masking; scenario keys are written raw.
    Off,
}

/// A `--redact` value this build cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedactionError {
    /// 0.4.1 runs a third-party Python analyser for this mode; there is no equivalent here.
    #[error(
        "--redact presidio is not supported (0.4.1 needs the Python extra 'faultgate[pii]'); use builtin or off"
    )]
    PresidioUnsupported,
    /// Not a mode name at all.
    #[error("unknown redaction {}; use builtin, presidio, off", py_repr_str(.0))]
    Unknown(String),
}

impl Redaction {
    /// The mode's name as written in reports and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Redaction::Builtin => "builtin",
            Redaction::Off => "off",
        }
    }

    /// Masks `text` under this mode; `Off` and texts with nothing to mask come back borrowed.
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self {
            Redaction::Builtin => mask_builtin(text),
            Redaction::Off => Cow::Borrowed(text),
        }
    }

    /// The scenario key to write out (§18.4): the raw key when masking leaves it unchanged, else
    /// the masked key plus `#` and 8 hex digits of its SHA-256, so distinct raw keys stay distinct.
    /// A key of the form faultgate derives from a prompt hash (`p-` and 12 hex digits) is written as
    /// is: it holds no data of the trace, and about one in 300 of them has only decimal digits, which
    /// the unseparated phone number pass would take.
    pub fn scenario_key(&self, raw_key: &str) -> String {
        self.scenario_key_text(raw_key).into_owned()
    }

    /// [`Redaction::scenario_key`], borrowed from `raw_key` when it is written as is (every derived
    /// key, and every key with nothing to mask), so a run over many traces allocates nothing for them.
    pub fn scenario_key_text<'a>(&self, raw_key: &'a str) -> Cow<'a, str> {
        if crate::digest::is_prompt_key(raw_key) {
            return Cow::Borrowed(raw_key);
        }
        match self.mask(raw_key) {
            Cow::Borrowed(_) => Cow::Borrowed(raw_key),
            masked if masked == raw_key => Cow::Borrowed(raw_key),
            masked => {
                let digest = crate::digest::sha256(raw_key.as_bytes());
                Cow::Owned(format!(
                    "{masked}#{}",
                    crate::digest::lower_hex(&digest[..4])
                ))
            }
        }
    }
}

impl fmt::Display for Redaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Redaction {
    type Err = RedactionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "builtin" => Ok(Redaction::Builtin),
            "off" => Ok(Redaction::Off),
            "presidio" => Err(RedactionError::PresidioUnsupported),
            other => Err(RedactionError::Unknown(other.to_string())),
        }
    }
}

/// Masks PII and secrets with the nine builtin patterns of §18.3, in order, widened where 0.4.1
/// leaks (see "Beyond 0.4.1" below), plus two passes of our own: values of `aws_secret_access_key`
/// first, and phone numbers written without separators last. Text with nothing to mask (including the
/// empty string) comes back borrowed.
///
/// Beyond 0.4.1 (over-masking is the safe side):
/// - a value glued to an underscore or a letter on its left is masked: `jwt_eyJ…`, `key_sk-…`,
///   `xAIza…`, `card_5500…`, `ssn_123-45-6789`, `phone_415-555-0177` (the `sk-`/`pk-`/`rk-` keys take an
///   underscore only, so words like `risk-…` stay);
/// - a Google API key (`AIza`) body may be 30 to 64 chars, not exactly 35;
/// - 10 to 15 digits with no separator (`4155550123`, `+14155550123`) are a phone number when no
///   letter or digit touches them;
/// - the value of `aws_secret_access_key` / `secret_access_key` (`=` or `:`, quoted or not).
pub fn mask_builtin(text: &str) -> Cow<'_, str> {
    let mut current = Cow::Borrowed(text);
    for pass in &PASSES {
        if let Some(rewritten) = rewrite(&current, pass) {
            current = Cow::Owned(rewritten);
        }
    }
    current
}

/// One pattern's pass, with what the text must hold for the pattern to match anywhere, so that
/// most text is passed over at the speed of a byte scan: reasons, keys and tool results are masked
/// once per verdict and trace, and most of their bytes can start no match.
struct Pass {
    matcher: Matcher,
    /// Whether an ASCII byte can be the first of a match (the matcher answers `None` at every other
    /// ASCII byte); every non-ASCII char is tried.
    starts_at: fn(u8) -> bool,
    /// Whether the whole text holds what every match needs somewhere (`None`: nothing beyond a start).
    needs: Option<fn(&[u8]) -> bool>,
}

const PASSES: [Pass; 11] = [
    Pass {
        matcher: aws_secret_at,
        starts_at: |b| b == b's' || b == b'S',
        needs: None,
    },
    Pass {
        matcher: jwt_at,
        starts_at: |b| b == b'e',
        needs: None,
    },
    Pass {
        matcher: bearer_token_at,
        starts_at: |b| is_bearer_char(char::from(b)),
        needs: Some(holds_bearer_prefix),
    },
    Pass {
        matcher: api_key_at,
        starts_at: |b| b"sprAgxySh".contains(&b),
        needs: None,
    },
    Pass {
        matcher: email_at,
        starts_at: is_local_byte,
        needs: Some(|bytes| bytes.contains(&b'@')),
    },
    Pass {
        matcher: ssn_at,
        starts_at: |b| b.is_ascii_digit(),
        needs: None,
    },
    Pass {
        matcher: card_at,
        starts_at: |b| b.is_ascii_digit(),
        needs: None,
    },
    Pass {
        matcher: ipv4_at,
        starts_at: |b| b.is_ascii_digit(),
        needs: Some(|bytes| bytes.contains(&b'.')),
    },
    Pass {
        matcher: ipv6_at,
        starts_at: |b| b.is_ascii_hexdigit(),
        needs: Some(|bytes| bytes.contains(&b':')),
    },
    Pass {
        matcher: phone_at,
        starts_at: |b| b.is_ascii_digit() || b == b'+' || b == b'(',
        needs: None,
    },
    Pass {
        matcher: bare_phone_at,
        starts_at: |b| b.is_ascii_digit() || b == b'+',
        needs: None,
    },
];

/// Whether `bearer ` appears, in any ASCII case, as [`bearer_token_at`] wants it before a token.
fn holds_bearer_prefix(bytes: &[u8]) -> bool {
    bytes
        .windows(7)
        .any(|window| window.eq_ignore_ascii_case(b"bearer "))
}

/// One replacement inside a pass: the byte range `start..end` becomes `tag`.
struct Edit {
    start: usize,
    end: usize,
    tag: &'static str,
}

/// Tries one pattern with its match starting at byte `at`. On a match it returns the match end
/// (the search resumes there) and pushes the replacements, if any; a match may replace nothing
/// (a phone number with the wrong digit count) or only parts of itself (card windows).
type Matcher = fn(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize>;

/// One `re.sub` pass: tries every start left to right, skipping over each match taken. Starts the
/// pass says cannot match are stepped over without trying them, which gives the same edits: the
/// matcher would have answered `None` there and the search moved on by one char.
fn rewrite(text: &str, pass: &Pass) -> Option<String> {
    let bytes = text.as_bytes();
    if pass.needs.is_some_and(|needs| !needs(bytes)) {
        return None;
    }
    let mut edits = Vec::new();
    let mut at = 0;
    // Only ASCII bytes are stepped over, so `at` stays on a char boundary.
    while let Some(skip) = bytes[at..]
        .iter()
        .position(|&b| !b.is_ascii() || (pass.starts_at)(b))
    {
        at += skip;
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        at = match (pass.matcher)(text, at, &mut edits) {
            Some(end) if end > at => end,
            _ => at + c.len_utf8(),
        };
    }
    (!edits.is_empty()).then(|| apply(text, &edits))
}

/// `text` with each edit's range replaced by its tag (edits in order, not overlapping).
fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for edit in edits {
        out.push_str(&text[copied..edit.start]);
        out.push_str(edit.tag);
        copied = edit.end;
    }
    out.push_str(&text[copied..]);
    out
}

// ---------------------------------------------------------------------------------------------
// Character classes with Python 3 `re` semantics on `str` patterns.

/// Sorted code point ranges of a Unicode class.
type Ranges = Vec<(u32, u32)>;

fn unicode_class(pattern: &str) -> Ranges {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::Parser::new()
        .parse(pattern)
        .expect("the class patterns are constant and valid");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        _ => panic!("{pattern} is not a Unicode class"),
    }
}

/// Python's `\w`: letters, anything numeric, and `_` (combining marks are not word chars).
static WORD_RANGES: LazyLock<Ranges> = LazyLock::new(|| unicode_class(r"[\p{L}\p{N}_]"));
/// Python's `\d`: decimal digits (Nd), which Unicode lays out in runs of ten from 0 to 9.
static DIGIT_RANGES: LazyLock<Ranges> = LazyLock::new(|| unicode_class(r"\p{Nd}"));

fn find_range(ranges: &[(u32, u32)], c: char) -> Option<(u32, u32)> {
    let code = u32::from(c);
    let idx = ranges.partition_point(|&(_, end)| end < code);
    ranges.get(idx).copied().filter(|&(start, _)| start <= code)
}

fn is_word(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        find_range(&WORD_RANGES, c).is_some()
    }
}

/// The value of a Python `\d` char, which is what `int()` gives for it.
fn digit_value(c: char) -> Option<u8> {
    if c.is_ascii() {
        return c.to_digit(10).map(|d| d as u8);
    }
    find_range(&DIGIT_RANGES, c).map(|(start, _)| ((u32::from(c) - start) % 10) as u8)
}

fn is_digit(c: char) -> bool {
    digit_value(c).is_some()
}

fn char_at(text: &str, at: usize) -> Option<char> {
    text.get(at..)?.chars().next()
}

fn char_before(text: &str, at: usize) -> Option<char> {
    text.get(..at)?.chars().next_back()
}

/// Returns true if and only if the char before `at` exists and satisfies `class` (a Python
/// lookbehind `(?<=[...])`; its negation is `(?<![...])`, which holds at the start of text).
fn preceded_by(text: &str, at: usize, class: impl Fn(char) -> bool) -> bool {
    char_before(text, at).is_some_and(class)
}

/// Returns true if and only if the char at `at` exists and satisfies `class`.
fn followed_by(text: &str, at: usize, class: impl Fn(char) -> bool) -> bool {
    char_at(text, at).is_some_and(class)
}

fn is_word_or(extra: &'static [char]) -> impl Fn(char) -> bool {
    move |c| is_word(c) || extra.contains(&c)
}

/// A maximal run of chars of one class, counted up to a cap.
struct Run {
    /// Chars in the run, or `cap + 1` when the run is longer than `cap`.
    len: usize,
    /// Byte offset just after the counted chars.
    end: usize,
}

fn run(text: &str, from: usize, cap: usize, class: impl Fn(char) -> bool) -> Run {
    let mut len = 0;
    let mut end = from;
    for c in text[from..].chars() {
        if len > cap || !class(c) {
            break;
        }
        len += 1;
        end += c.len_utf8();
    }
    Run { len, end }
}

fn ascii_run(text: &str, from: usize, cap: usize, class: fn(u8) -> bool) -> Run {
    let len = text.as_bytes()[from..]
        .iter()
        .take(cap + 1)
        .take_while(|&&b| class(b))
        .count();
    Run {
        len,
        end: from + len,
    }
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_alnum_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

// ---------------------------------------------------------------------------------------------
// 1. JSON Web Tokens.

fn jwt_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    // No left boundary: `jwt_eyJ…` or `tokeneyJ…` is still a token (0.4.1 needs a non-word char).
    if !text[at..].starts_with("eyJ") {
        return None;
    }
    // The first two segments must be whole runs ending in `.`; the last has no right boundary,
    // so a longer run simply yields its first 4096 chars.
    let mut from = at + 3;
    for _ in 0..2 {
        let segment = ascii_run(text, from, 4096, is_token_byte);
        if !(8..=4096).contains(&segment.len) || text.as_bytes().get(segment.end) != Some(&b'.') {
            return None;
        }
        from = segment.end + 1;
    }
    let last = ascii_run(text, from, 4096, is_token_byte);
    if last.len < 8 {
        return None;
    }
    let end = from + last.len.min(4096);
    edits.push(Edit {
        start: at,
        end,
        tag: SECRET,
    });
    Some(end)
}

// ---------------------------------------------------------------------------------------------
// 2. Bearer tokens.

/// The token class `[A-Za-z0-9._~+/-]` under Python's IGNORECASE, which adds the four non-ASCII
/// letters whose simple case mapping lands on an ASCII letter.
fn is_bearer_char(c: char) -> bool {
    matches!(c, 'A'..='Z' | 'a'..='z' | '0'..='9' | '.' | '_' | '~' | '+' | '/' | '-')
        || matches!(c, '\u{130}' | '\u{131}' | '\u{17f}' | '\u{212a}')
}

fn bearer_token_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    const PREFIX: &[u8] = b"bearer ";
    let before = at.checked_sub(PREFIX.len())?;
    if !text.as_bytes()[before..at].eq_ignore_ascii_case(PREFIX) {
        return None;
    }
    let token = run(text, at, 4096, is_bearer_char);
    if token.len < 16 {
        return None;
    }
    let end = if token.len > 4096 {
        // The run goes on past the 4096 taken chars, so no `=` can follow them.
        text[at..]
            .char_indices()
            .nth(4096)
            .map_or(token.end, |(offset, _)| at + offset)
    } else {
        token.end
            + text.as_bytes()[token.end..]
                .iter()
                .take_while(|&&b| b == b'=')
                .count()
    };
    edits.push(Edit {
        start: at,
        end,
        tag: SECRET,
    });
    Some(end)
}

// ---------------------------------------------------------------------------------------------
// 3. Vendor API keys.

fn api_key_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    let first = *text.as_bytes().get(at)?;
    if !b"sprAgxySh".contains(&first) {
        return None;
    }
    // 0.4.1 wants no word char or `-` before a key; a key glued to `key_` or a letter leaked. Only the
    // `sk-` family keeps a boundary against letters, so prose like `risk-assessment-…` stays.
    let bytes = text.as_bytes();
    let dash_family =
        bytes.len() >= at + 3 && b"spr".contains(&first) && &bytes[at + 1..at + 3] == b"k-";
    let boundary_ok = if dash_family {
        !preceded_by(text, at, |c| c.is_alphanumeric() || c == '-')
    } else {
        !preceded_by(text, at, |c| c == '-')
    };
    if !boundary_ok {
        return None;
    }
    let end = api_key_end(text, at)?;
    // Every key body is made of word chars and `-`, so the lookahead `(?![\w-])` can only hold
    // where the body's run ends: no shorter body could satisfy it.
    if followed_by(text, end, is_word_or(&['-'])) {
        return None;
    }
    edits.push(Edit {
        start: at,
        end,
        tag: SECRET,
    });
    Some(end)
}

/// The end of the key body starting at `at`, if one of the alternatives matches up to its run end.
fn api_key_end(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    let bytes = rest.as_bytes();
    let body = |prefix_len: usize, min: usize, max: usize, class: fn(u8) -> bool| {
        let run = ascii_run(text, at + prefix_len, max, class);
        (min..=max).contains(&run.len).then_some(run.end)
    };
    let alnum_dash = |b: u8| b.is_ascii_alphanumeric() || b == b'-';

    if bytes.len() >= 3 && b"spr".contains(&bytes[0]) && &bytes[1..3] == b"k-" {
        return prefixed_key_end(text, at + 3);
    }
    for prefix in ["sk_live_", "sk_test_", "rk_live_", "rk_test_"] {
        if rest.starts_with(prefix) {
            return body(prefix.len(), 16, 256, is_alnum_byte);
        }
    }
    if rest.starts_with("AKIA") {
        return body(4, 16, 16, |b| b.is_ascii_digit() || b.is_ascii_uppercase());
    }
    if bytes.len() >= 4
        && bytes.starts_with(b"gh")
        && b"pousr".contains(&bytes[2])
        && bytes[3] == b'_'
    {
        return body(4, 30, 255, is_alnum_byte);
    }
    if bytes.len() >= 4 && bytes.starts_with(b"xox") && b"abposre".contains(&bytes[3]) {
        return (bytes.get(4) == Some(&b'-')).then(|| body(5, 10, 255, alnum_dash))?;
    }
    if rest.starts_with("xapp-") {
        return body(5, 10, 255, alnum_dash);
    }
    if rest.starts_with("AIza") {
        // 0.4.1 takes exactly 35; keys cut or padded by a tool still leak nothing here.
        return body(4, 30, 64, is_token_byte);
    }
    if rest.starts_with("ya29.") {
        return body(5, 20, 2048, is_token_byte);
    }
    if rest.starts_with("SG.") {
        let word_dash = is_word_or(&['-']);
        let first = run(text, at + 3, 64, &word_dash);
        if !(16..=64).contains(&first.len) || text.as_bytes().get(first.end) != Some(&b'.') {
            return None;
        }
        let second = run(text, first.end + 1, 128, &word_dash);
        return (16..=128).contains(&second.len).then_some(second.end);
    }
    if rest.starts_with("hf_") {
        return body(3, 30, 64, is_alnum_byte);
    }
    None
}

/// `(?:[a-z]{1,12}-){0,2}[A-Za-z0-9_-]{16,256}` after `sk-`, `pk-` or `rk-`. The tail's class
/// contains the groups' chars, so the body always ends where the token run ends; it matches when
/// some number of leading groups leaves a tail of 16–256 chars.
fn prefixed_key_end(text: &str, from: usize) -> Option<usize> {
    const MAX_GROUPS_LEN: usize = 2 * 13;
    let token = ascii_run(text, from, 256 + MAX_GROUPS_LEN, is_token_byte);
    let mut group_lens = vec![0];
    let mut group_end = from;
    for _ in 0..2 {
        let letters = ascii_run(text, group_end, 12, |b| b.is_ascii_lowercase());
        if !(1..=12).contains(&letters.len) || text.as_bytes().get(letters.end) != Some(&b'-') {
            break;
        }
        group_end = letters.end + 1;
        group_lens.push(group_end - from);
    }
    group_lens
        .iter()
        .any(|&groups| token.len >= groups && (16..=256).contains(&(token.len - groups)))
        .then_some(token.end)
}

// ---------------------------------------------------------------------------------------------
// 4. Email addresses.

fn is_local_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._%+-".contains(&b)
}

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn email_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    let bytes = text.as_bytes();
    if !is_local_byte(bytes[at]) || (at > 0 && is_local_byte(bytes[at - 1])) {
        return None;
    }
    let local = ascii_run(text, at, 64, is_local_byte);
    if local.len > 64 || bytes.get(local.end) != Some(&b'@') {
        return None;
    }
    let end = domain_end(bytes, local.end + 1)?;
    edits.push(Edit {
        start: at,
        end,
        tag: EMAIL,
    });
    Some(end)
}

/// `label(\.label){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])` from `from`. Labels and the TLD can only
/// be whole dot-separated runs; the greedy repeat takes as many labels as it can and backs off
/// one at a time until the run after them is a valid TLD.
fn domain_end(bytes: &[u8], from: usize) -> Option<usize> {
    struct Part {
        len: usize,
        end: usize,
        letters_only: bool,
    }
    let part_at = |start: usize| {
        let len = bytes[start..]
            .iter()
            .take(64)
            .take_while(|&&b| is_label_byte(b))
            .count();
        Part {
            len,
            end: start + len,
            letters_only: bytes[start..start + len]
                .iter()
                .all(u8::is_ascii_alphabetic),
        }
    };
    let is_label = |p: &Part| (1..=63).contains(&p.len) && bytes.get(p.end) == Some(&b'.');
    let is_tld = |p: &Part| {
        (2..=24).contains(&p.len)
            && p.letters_only
            && !bytes.get(p.end).is_some_and(|&b| is_label_byte(b))
    };

    // parts[0] is the first label; parts[k + 1] is the TLD candidate after k more labels.
    let mut parts = vec![part_at(from)];
    while parts.len() < 10 {
        let last = &parts[parts.len() - 1];
        if !is_label(last) {
            break;
        }
        let next = part_at(last.end + 1);
        parts.push(next);
    }
    (1..parts.len())
        .rev()
        .find(|&tld| is_tld(&parts[tld]) && parts[..tld].iter().all(is_label))
        .map(|tld| parts[tld].end)
}

// ---------------------------------------------------------------------------------------------
// 5. US social security numbers.

fn ssn_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    // Only a digit may not touch the number's left (0.4.1: no word char), so `ssn_123-45-6789` masks.
    if !followed_by(text, at, is_digit) || preceded_by(text, at, is_digit) {
        return None;
    }
    let mut fields: [Vec<char>; 3] = Default::default();
    let mut pos = at;
    for (index, (field, width)) in fields.iter_mut().zip([3, 2, 4]).enumerate() {
        if index > 0 {
            if text.as_bytes().get(pos) != Some(&b'-') {
                return None;
            }
            pos += 1;
        }
        for _ in 0..width {
            let c = char_at(text, pos).filter(|&c| is_digit(c))?;
            field.push(c);
            pos += c.len_utf8();
        }
    }
    // The exclusions are literal ASCII digits in the pattern, so other scripts' zeros pass.
    let [area, group, serial] = &fields;
    let excluded = area.as_slice() == ['0', '0', '0']
        || area.as_slice() == ['6', '6', '6']
        || area[0] == '9'
        || group.as_slice() == ['0', '0']
        || serial.as_slice() == ['0', '0', '0', '0'];
    if excluded || followed_by(text, pos, is_word) {
        return None;
    }
    edits.push(Edit {
        start: at,
        end: pos,
        tag: US_SSN,
    });
    Some(pos)
}

// ---------------------------------------------------------------------------------------------
// 6. Payment cards.

/// A digit group inside a card match.
struct DigitGroup {
    start: usize,
    end: usize,
    digits: Vec<u8>,
}

fn digit_group(text: &str, from: usize) -> DigitGroup {
    let mut digits = Vec::new();
    let mut end = from;
    for c in text[from..].chars() {
        let Some(d) = digit_value(c) else { break };
        // One digit past the maximum is enough to tell that the run is too long.
        if digits.len() == 20 {
            break;
        }
        digits.push(d);
        end += c.len_utf8();
    }
    DigitGroup {
        start: from,
        end,
        digits,
    }
}

fn card_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    // A digit or `.` may not touch the left (0.4.1: no word char), so `card_5500…` masks.
    if !followed_by(text, at, is_digit) || preceded_by(text, at, |c| is_digit(c) || c == '.') {
        return None;
    }
    let first = digit_group(text, at);
    if !(3..=19).contains(&first.digits.len()) {
        return None;
    }
    let mut groups = vec![first];
    // The extra groups are possessive: a group of more than 19 digits is taken in part, and the
    // lookahead then fails with no way to give the group back.
    while groups.len() < 16 {
        let end = groups[groups.len() - 1].end;
        if !matches!(text.as_bytes().get(end), Some(b' ' | b'-')) {
            break;
        }
        let group = digit_group(text, end + 1);
        if group.digits.len() < 3 {
            break;
        }
        groups.push(group);
    }
    let end = groups[groups.len() - 1].end;
    let decimal_follows =
        text.as_bytes().get(end) == Some(&b'.') && followed_by(text, end + 1, is_digit);
    if groups.iter().any(|g| g.digits.len() > 19)
        || followed_by(text, end, is_word)
        || decimal_follows
    {
        return None;
    }
    mask_card_windows(&groups, edits);
    Some(end)
}

/// The window rule of §18.3.1: from each group, the longest run of whole groups holding 13–19
/// digits that pass Luhn is one card.
fn mask_card_windows(groups: &[DigitGroup], edits: &mut Vec<Edit>) {
    let mut first = 0;
    while first < groups.len() {
        let window = (first..groups.len()).rev().find(|&last| {
            let window = &groups[first..=last];
            let count: usize = window.iter().map(|g| g.digits.len()).sum();
            (13..=19).contains(&count) && passes_luhn(window.iter().flat_map(|g| &g.digits))
        });
        match window {
            Some(last) => {
                edits.push(Edit {
                    start: groups[first].start,
                    end: groups[last].end,
                    tag: CREDIT_CARD,
                });
                first = last + 1;
            }
            None => first += 1,
        }
    }
}

fn passes_luhn<'a>(digits: impl DoubleEndedIterator<Item = &'a u8>) -> bool {
    let sum: u32 = digits
        .rev()
        .enumerate()
        .map(|(index, &d)| {
            let d = u32::from(d);
            match index % 2 {
                0 => d,
                _ if d * 2 > 9 => d * 2 - 9,
                _ => d * 2,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

// ---------------------------------------------------------------------------------------------
// 7. IPv4 addresses.

/// `25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d` over a whole digit run (the literal digits are ASCII, `\d` is
/// any decimal digit).
fn is_octet(digits: &[char]) -> bool {
    match *digits {
        [a] => is_digit(a),
        [a, b] => ('1'..='9').contains(&a) && is_digit(b),
        ['2', '5', c] => ('0'..='5').contains(&c),
        ['2', b, c] => ('0'..='4').contains(&b) && is_digit(c),
        ['1', b, c] => is_digit(b) && is_digit(c),
        _ => false,
    }
}

fn ipv4_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    let not_address_edge = is_word_or(&['.']);
    if !followed_by(text, at, is_digit) || preceded_by(text, at, &not_address_edge) {
        return None;
    }
    let mut pos = at;
    for index in 0..4 {
        if index > 0 {
            if text.as_bytes().get(pos) != Some(&b'.') {
                return None;
            }
            pos += 1;
        }
        let digits: Vec<char> = text[pos..]
            .chars()
            .take(4)
            .take_while(|&c| is_digit(c))
            .collect();
        if !is_octet(&digits) {
            return None;
        }
        pos += digits.iter().map(|c| c.len_utf8()).sum::<usize>();
    }
    if followed_by(text, pos, &not_address_edge) {
        return None;
    }
    edits.push(Edit {
        start: at,
        end: pos,
        tag: IP_ADDRESS,
    });
    Some(pos)
}

// ---------------------------------------------------------------------------------------------
// 8. IPv6 addresses (full form only).

fn ipv6_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    let not_address_edge = is_word_or(&[':']);
    let bytes = text.as_bytes();
    if !bytes[at].is_ascii_hexdigit() || preceded_by(text, at, &not_address_edge) {
        return None;
    }
    let mut pos = at;
    for index in 0..8 {
        if index > 0 {
            if bytes.get(pos) != Some(&b':') {
                return None;
            }
            pos += 1;
        }
        let group = ascii_run(text, pos, 4, |b| b.is_ascii_hexdigit());
        if !(1..=4).contains(&group.len) {
            return None;
        }
        pos = group.end;
    }
    if followed_by(text, pos, &not_address_edge) {
        return None;
    }
    edits.push(Edit {
        start: at,
        end: pos,
        tag: IP_ADDRESS,
    });
    Some(pos)
}

// ---------------------------------------------------------------------------------------------
// 9. Phone numbers.

/// The phone body (group 1) followed by its lookaheads `(?![\w.-])(?![ .-]?\d)` written as a
/// consumed suffix, so that the leftmost-first search picks the same body a backtracking engine
/// would. `[\p{L}\p{N}_]` is Python's `\w`.
static PHONE_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"((?:\+\d{1,3}[ .\-]?)?(?:\(\d{2,4}\)|\d{2,4})[ .\-]\d{3,4}[ .\-]?\d{3,4})(?:\z|[^\p{L}\p{N}_.\- ]|[ ](?:\z|\D))",
    )
    .expect("the phone pattern is constant and valid")
});

fn phone_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    let first = char_at(text, at)?;
    if !(first == '+' || first == '(' || is_digit(first)) {
        return None;
    }
    let prev = char_before(text, at);
    // A letter or `_` may touch the left (0.4.1: no word char), so `phone_415-555-0177` masks.
    if prev.is_some_and(|c| is_digit(c) || matches!(c, '.' | '+' | '-')) {
        return None;
    }
    let digit_then_separator =
        matches!(prev, Some(' ' | '.' | '-')) && char_before(text, at - 1).is_some_and(is_digit);
    if digit_then_separator {
        return None;
    }
    let input = Input::new(text)
        .span(at..text.len())
        .anchored(Anchored::Yes);
    // Slots 2 and 3 hold the bounds of group 1, the body without the lookahead suffix.
    let mut slots = [None; 4];
    PHONE_RE.search_slots(&input, &mut slots)?;
    let (start, end) = (slots[2]?.get(), slots[3]?.get());
    let digits = text[start..end].chars().filter(|&c| is_digit(c)).count();
    if (9..=15).contains(&digits) {
        edits.push(Edit {
            start,
            end,
            tag: PHONE,
        });
    }
    Some(end)
}

// ---------------------------------------------------------------------------------------------
// 10. Phone numbers without separators (not in 0.4.1).

/// `\+?` and 10–15 digits, with no letter or digit on either side (an underscore may touch them).
/// Hex ids (`0123456789abcdef`) are glued to letters and stay, and so does a millisecond timestamp
/// of this century (13 ASCII digits starting with `1`, without a `+`): no phone number has that
/// form, since the only country code starting with 1 is the North American one, whose numbers have
/// 11 digits. Longer runs (microsecond and nanosecond timestamps) are not phone numbers either.
fn bare_phone_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    let plus = text.as_bytes().get(at) == Some(&b'+');
    let from = at + usize::from(plus);
    if !followed_by(text, from, is_digit)
        || preceded_by(text, at, |c| c.is_alphanumeric() || (plus && c == '+'))
    {
        return None;
    }
    let digits = run(text, from, 15, is_digit);
    if !(10..=15).contains(&digits.len) {
        // Skip the whole run: no later start inside it can match either.
        return Some(digits.end);
    }
    if followed_by(text, digits.end, char::is_alphanumeric) {
        return Some(digits.end);
    }
    let millisecond_timestamp =
        !plus && digits.end - from == 13 && digits.len == 13 && text.as_bytes()[from] == b'1';
    if millisecond_timestamp {
        return Some(digits.end);
    }
    edits.push(Edit {
        start: at,
        end: digits.end,
        tag: PHONE,
    });
    Some(digits.end)
}

// ---------------------------------------------------------------------------------------------
// 0. AWS secret access keys by name (not in 0.4.1).

/// The value after `secret_access_key` (any case, `aws_` prefix or not), `=` or `:`, optional quotes
/// and spaces: 16–256 chars of `[A-Za-z0-9/+=]`. The key name stays; only the value is masked.
fn aws_secret_at(text: &str, at: usize, edits: &mut Vec<Edit>) -> Option<usize> {
    const NAME: &[u8] = b"secret_access_key";
    let bytes = text.as_bytes();
    if !bytes
        .get(at..at + NAME.len())
        .is_some_and(|b| b.eq_ignore_ascii_case(NAME))
    {
        return None;
    }
    let mut pos = at + NAME.len();
    let skip = |pos: &mut usize, what: &[u8], most: usize| {
        let mut n = 0;
        while n < most && bytes.get(*pos).is_some_and(|b| what.contains(b)) {
            *pos += 1;
            n += 1;
        }
        n
    };
    skip(&mut pos, b"\"'", 1);
    skip(&mut pos, b" \t", 8);
    if skip(&mut pos, b":=", 1) == 0 {
        return None;
    }
    skip(&mut pos, b" \t", 8);
    skip(&mut pos, b"\"'", 1);
    let value = ascii_run(text, pos, 256, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'=')
    });
    if !(16..=256).contains(&value.len) {
        return None;
    }
    edits.push(Edit {
        start: pos,
        end: value.end,
        tag: SECRET,
    });
    Some(value.end)
}

/// The scanners against 0.4.1's own regular expressions.
#[cfg(test)]
mod oracle;

#[cfg(test)]
mod tests;
