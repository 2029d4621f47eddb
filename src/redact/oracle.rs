//! The builtin masker against 0.4.1's own regular expressions (docs/compatibility.md §18.3).
//!
//! The patterns below are faultgate 0.4.1's (MIT), copied from its `redact.py`; Python's possessive
//! `{0,15}+` is written as the equivalent atomic group for `fancy-regex`, a backtracking engine with
//! Python's lookbehind and lookahead. `python_mask` applies them as 0.4.1 does (`re.sub` per pattern,
//! in order, with the card window rule and the phone digit count).
//!
//! Where this crate masks more than 0.4.1 on purpose (README, Redaction), the difference is stated as
//! an edit of the original patterns ([`patterns`] with `widened`): a JWT needs no left boundary; keys
//! other than `sk-`/`pk-`/`rk-` take `_` and letters on their left, and those three take `_`; SSNs,
//! cards and phone numbers only refuse a digit (and, as before, `.`, `+`, `-`) on their left; `AIza`
//! keys run 30 to 64 chars; and a last pass masks 10 to 15 unseparated digits. The property test
//! requires the scanners to equal those patterns exactly on generated text, and
//! `widenings_are_the_only_differences` shows that the original patterns leave each widened case
//! alone. The text is ASCII plus a few letters assigned long before Unicode 14, so the newer Unicode
//! tables of `regex-syntax` cannot make a difference, and it never names `aws_secret_access_key`
//! (that pass is not modelled).

use std::borrow::Cow;
use std::sync::LazyLock;

use fancy_regex::{Captures, Regex};
use proptest::prelude::*;

use super::mask_builtin;

/// How 0.4.1 post-processes a match: the tag itself, the card windows, or the phone digit count.
#[derive(Clone, Copy)]
enum Sub {
    Tag,
    Card,
    Phone,
}

type Patterns = Vec<(&'static str, Regex, Sub)>;

/// A letter or number in Rust's sense (`char::is_alphanumeric`), which the widened boundaries use.
const ALNUM: &str = r"\p{Alphabetic}\p{N}";

/// 0.4.1's `PATTERNS`, in order, or with `widened` the same patterns with the documented widenings
/// (README, Redaction) written into them: the left boundaries that accept `_` and letters, `AIza`
/// keys of 30 to 64 chars, and the extra pass for unseparated phone numbers. (The AWS secret pass is
/// not modelled: the generated text never names that key.)
fn patterns(widened: bool) -> Patterns {
    let api_keys = if widened {
        format!(
            concat!(
                r"(?:(?<![{alnum}-])(?:sk|pk|rk)-(?:[a-z]{{1,12}}-){{0,2}}[A-Za-z0-9_-]{{16,256}}",
                r"|(?<!-)(?:",
                r"[sr]k_(?:live|test)_[0-9A-Za-z]{{16,256}}",
                r"|AKIA[0-9A-Z]{{16}}",
                r"|gh[pousr]_[A-Za-z0-9]{{30,255}}",
                r"|xox[abposre]-[A-Za-z0-9-]{{10,255}}|xapp-[A-Za-z0-9-]{{10,255}}",
                r"|AIza[0-9A-Za-z_-]{{30,64}}|ya29\.[0-9A-Za-z_-]{{20,2048}}",
                r"|SG\.[\w-]{{16,64}}\.[\w-]{{16,128}}",
                r"|hf_[A-Za-z0-9]{{30,64}}",
                r"))(?![\w-])"
            ),
            alnum = ALNUM
        )
    } else {
        concat!(
            r"(?<![\w-])(?:",
            r"(?:sk|pk|rk)-(?:[a-z]{1,12}-){0,2}[A-Za-z0-9_-]{16,256}",
            r"|[sr]k_(?:live|test)_[0-9A-Za-z]{16,256}",
            r"|AKIA[0-9A-Z]{16}",
            r"|gh[pousr]_[A-Za-z0-9]{30,255}",
            r"|xox[abposre]-[A-Za-z0-9-]{10,255}|xapp-[A-Za-z0-9-]{10,255}",
            r"|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,2048}",
            r"|SG\.[\w-]{16,64}\.[\w-]{16,128}",
            r"|hf_[A-Za-z0-9]{30,64}",
            r")(?![\w-])"
        )
        .to_string()
    };
    // Each pair: 0.4.1's left boundary, and ours where it is wider.
    let jwt_left = if widened { "" } else { r"(?<![\w.-])" };
    let ssn_left = if widened { r"(?<!\d)" } else { r"\b" };
    let card_left = if widened {
        r"(?<![\d.])"
    } else {
        r"(?<![\w.])"
    };
    let phone_left = if widened {
        r"(?<![\d.+-])"
    } else {
        r"(?<![\w.+-])"
    };
    let mut patterns: Vec<(&str, String, Sub)> = vec![
        (
            "SECRET",
            format!(r"{jwt_left}eyJ[A-Za-z0-9_-]{{8,4096}}\.[A-Za-z0-9_-]{{8,4096}}\.[A-Za-z0-9_-]{{8,4096}}"),
            Sub::Tag,
        ),
        (
            "SECRET",
            r"(?i)(?<=bearer )[A-Za-z0-9._~+/-]{16,4096}=*".into(),
            Sub::Tag,
        ),
        ("SECRET", api_keys, Sub::Tag),
        (
            "EMAIL",
            concat!(
                r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}",
                r"\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
            )
            .into(),
            Sub::Tag,
        ),
        (
            "US_SSN",
            format!(r"{ssn_left}(?!000|666|9\d\d)\d{{3}}-(?!00)\d{{2}}-(?!0000)\d{{4}}\b"),
            Sub::Tag,
        ),
        (
            "CREDIT_CARD",
            // 0.4.1: `\d{3,19}(?:[ -]\d{3,19}){0,15}+`; the atomic group is the same possessive repeat.
            format!(r"{card_left}\d{{3,19}}(?>(?:[ -]\d{{3,19}}){{0,15}})(?!\w)(?!\.\d)"),
            Sub::Card,
        ),
        (
            "IP_ADDRESS",
            r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.])".into(),
            Sub::Tag,
        ),
        (
            "IP_ADDRESS",
            r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![\w:])".into(),
            Sub::Tag,
        ),
        (
            "PHONE",
            format!(
                concat!(
                    r"{phone_left}(?<!\d[ .-])(?:\+\d{{1,3}}[ .-]?)?(?:\(\d{{2,4}}\)|\d{{2,4}})[ .-]\d{{3,4}}[ .-]?\d{{3,4}}",
                    r"(?![\w.-])(?![ .-]?\d)"
                ),
                phone_left = phone_left
            ),
            Sub::Phone,
        ),
    ];
    if widened {
        // Ours only: `+` and 10 to 15 digits that no letter or number touches.
        patterns.push((
            "PHONE",
            format!(r"(?:(?<![{ALNUM}+])\+|(?<![{ALNUM}]))\d{{10,15}}(?![{ALNUM}])"),
            Sub::Tag,
        ));
    }
    patterns
        .into_iter()
        .map(|(kind, source, sub)| {
            let rx = Regex::new(&source).unwrap_or_else(|e| panic!("{kind}: {e}"));
            (kind, rx, sub)
        })
        .collect()
}

static ORIGINAL: LazyLock<Patterns> = LazyLock::new(|| patterns(false));
static WIDENED: LazyLock<Patterns> = LazyLock::new(|| patterns(true));

/// 0.4.1's `_luhn` over ASCII digits.
fn luhn(digits: &str) -> bool {
    let total: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            match (i % 2 == 1, d > 4) {
                (true, true) => d * 2 - 9,
                (true, false) => d * 2,
                (false, _) => d,
            }
        })
        .sum();
    total.is_multiple_of(10)
}

/// 0.4.1's `_card`: every Luhn-valid window of 13 to 19 digits made of whole digit groups, longest
/// first from each group.
fn card(text: &str, tag: &str) -> String {
    let mut groups = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                groups.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    let (mut out, mut done, mut i) = (String::new(), 0, 0);
    while i < groups.len() {
        let found = (i + 1..=groups.len()).rev().find(|&j| {
            let digits: String = groups[i..j].iter().map(|&(a, b)| &text[a..b]).collect();
            (13..=19).contains(&digits.len()) && luhn(&digits)
        });
        match found {
            Some(j) => {
                out.push_str(&text[done..groups[i].0]);
                out.push_str(tag);
                done = groups[j - 1].1;
                i = j;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[done..]);
    out
}

/// 0.4.1's `_builtin` over `patterns`.
fn python_mask(patterns: &Patterns, text: &str) -> String {
    let mut text = text.to_string();
    for (kind, rx, sub) in patterns {
        let tag = format!("<{kind}>");
        let replaced = rx.replace_all(&text, |caps: &Captures<str>| {
            let m = caps.get(0).expect("whole match").as_str();
            match sub {
                Sub::Tag => tag.clone(),
                Sub::Card => card(m, &tag),
                Sub::Phone => {
                    let digits = m.chars().filter(char::is_ascii_digit).count();
                    if (9..=15).contains(&digits) {
                        tag.clone()
                    } else {
                        m.to_string()
                    }
                }
            }
        });
        if let Cow::Owned(next) = replaced {
            text = next;
        }
    }
    text
}

/// `body` followed by the digit that makes it pass Luhn, or by a wrong one when `valid` is false.
fn with_check_digit(body: &[u8], valid: bool) -> String {
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 0 {
                if d > 4 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    let check = (10 - sum % 10) % 10;
    let check = if valid { check } else { (check + 1) % 10 };
    body.iter()
        .map(|&d| u32::from(d))
        .chain(std::iter::once(check))
        .map(|d| char::from_digit(d, 10).expect("a digit"))
        .collect()
}

/// A card-like number: 15 or 16 digits, Luhn-valid or not, unbroken or in groups split by a space or
/// `-`.
fn card_number() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(0u8..10, 14..=15),
        any::<bool>(),
        prop::sample::select(vec!["", " ", "-"]),
        prop::sample::select(vec![3usize, 4, 5, 6]),
    )
        .prop_map(|(body, valid, sep, width)| {
            let digits = with_check_digit(&body, valid);
            if sep.is_empty() {
                return digits;
            }
            let chunks: Vec<&str> = digits
                .as_bytes()
                .chunks(width)
                .map(|c| std::str::from_utf8(c).expect("ascii"))
                .collect();
            chunks.join(sep)
        })
}

/// One piece of text: something a pattern may match, a near miss, or filler.
fn piece() -> impl Strategy<Value = String> {
    let s = |re: &'static str| re.prop_map(String::from).boxed();
    prop_oneof![
        s("[a-zA-Z]{1,8}"),
        s("[a-zé中ßΩ]{1,5}"),
        s("[0-9]{1,9}"),
        s("[0-9]{1,4}\\.[0-9]{1,3}"),
        card_number().boxed(),
        s("[0-9]{3}-[0-9]{2}-[0-9]{4}"),
        s("[0-9]{3,4}-[0-9]{2}-[0-9]{3,4}"),
        s(r"(\+[0-9]{1,3}[ .-]?)?(\([0-9]{2,4}\)|[0-9]{2,4})[ .-][0-9]{3,4}[ .-]?[0-9]{3,4}"),
        s("[0-9]{3}[ .-][0-9]{4}"),
        s("[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}(\\.[0-9]{1,2})?"),
        s("([0-9a-fA-F]{1,4}:){6,7}[0-9a-fA-F]{1,4}"),
        s("[0-9a-f]{1,4}::[0-9a-f]{1,4}"),
        s("[a-z0-9._%+-]{1,10}@[a-z0-9-]{1,10}(\\.[a-z0-9-]{1,8}){0,2}\\.[a-z0-9]{1,5}"),
        s("(sk|pk|rk)-([a-z]{1,5}-){0,2}[A-Za-z0-9_-]{14,20}"),
        s("[sr]k_(live|test)_[0-9A-Za-z]{14,20}"),
        s("AKIA[0-9A-Z]{15,17}"),
        s("gh[pousr]_[A-Za-z0-9]{28,34}"),
        s("(xox[abposre]|xapp)-[A-Za-z0-9-]{8,14}"),
        s("AIza[0-9A-Za-z_-]{28,66}"),
        s("\\+?[0-9]{9,17}"),
        s("ya29\\.[0-9A-Za-z_-]{18,24}"),
        s("SG\\.[A-Za-z0-9_-]{14,20}\\.[A-Za-z0-9_-]{14,20}"),
        s("hf_[A-Za-z0-9]{28,34}"),
        s("eyJ[A-Za-z0-9_-]{6,12}\\.[A-Za-z0-9_-]{6,12}\\.[A-Za-z0-9_-]{6,12}"),
        s("[Bb](earer|EARER) [A-Za-z0-9._~+/-]{14,20}=?"),
    ]
}

/// What joins two pieces, including nothing, `_` and a letter, which glue a value to its left.
fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        " ", ", ", ". ", "; ", "\n", " (", ") ", ": ", "=", "\"", "'", "/", " - ", "-", "\t", ".",
        "+", ":", "_", "", "x",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The scanners mask exactly what 0.4.1's patterns mask, widened where documented.
    #[test]
    fn scanners_equal_the_original_patterns(
        parts in proptest::collection::vec((piece(), separator()), 1..10),
    ) {
        let text: String = parts.iter().flat_map(|(p, s)| [p.as_str(), *s]).collect();
        prop_assert_eq!(mask_builtin(&text).into_owned(), python_mask(&WIDENED, &text), "text: {:?}", text);
    }
}

/// The compared masker is 0.4.1's: its own documented results (docs/compatibility.md §18.3).
#[test]
fn the_oracle_reproduces_the_observed_results() {
    let cases = [
        ("4111 1111 1111 1111 123-45-6789", "<CREDIT_CARD> <US_SSN>"),
        (
            "4111-1111-1111-1111-5555-4444-3333-1111",
            "<CREDIT_CARD>-<CREDIT_CARD>",
        ),
        ("1234 4111 1111 1111 1111", "1234 <CREDIT_CARD>"),
        ("4111111111111111.5", "4111111111111111.5"),
        ("+1 (415) 555-0132", "<PHONE>"),
        ("id 123456789", "id 123456789"),
        ("2001:db8::1", "2001:db8::1"),
        ("Bearer abc.def-ghi_jkl~mno+pqr/stu==", "Bearer <SECRET>"),
        ("sk-abcdefghijklmno", "sk-abcdefghijklmno"),
        ("user@localhost", "user@localhost"),
    ];
    for (text, want) in cases {
        assert_eq!(python_mask(&ORIGINAL, text), want, "{text:?}");
        assert_eq!(python_mask(&WIDENED, text), want, "{text:?}");
        assert_eq!(mask_builtin(text), want, "{text:?}");
    }
}

/// Each documented widening is a difference from the original, and masks more, never less.
#[test]
fn widenings_are_the_only_differences() {
    let aiza = format!("AIza{}", "a1".repeat(15));
    let cases = [
        ("key_sk-abcdefghijklmnop1234", "key_<SECRET>"),
        ("card_4111111111111111", "card_<CREDIT_CARD>"),
        ("ssn_123-45-6789", "ssn_<US_SSN>"),
        ("phone_415-555-0177", "phone_<PHONE>"),
        ("call 4155550123 now", "call <PHONE> now"),
        (aiza.as_str(), "<SECRET>"),
        (
            "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key=<SECRET>",
        ),
    ];
    for (text, ours) in cases {
        assert_eq!(python_mask(&ORIGINAL, text), text, "0.4.1 leaves {text:?}");
        assert_eq!(mask_builtin(text), ours, "{text:?}");
    }
}
