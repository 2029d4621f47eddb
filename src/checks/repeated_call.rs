//! # repeated_call
//!
//! **What it detects.** The same tool called with the same arguments three times in a row of its own
//! calls, getting the same answer each time: the agent is stuck and not learning from the result.
//!
//! **Why it matters.** Identical retries cost tokens and latency and never change the outcome; they are
//! the signature of a planner that ignores tool output.
//!
//! **Example.** `search {"q": 0}` at steps 1, 2 and 3, each returning `[]`: `Tool 'search' with arguments
//! {"q":0} issued >= 3 times (steps 1, 2, 3) where all 3 responses are identical after whitespace
//! normalization.`
//!
//! **Known limits.** Arguments are compared after key sorting (JSON) or whitespace folding (text), so
//! `{"q": "a"}` and `{"q": "a "}` differ. Results must be equal after whitespace folding; a timestamp in
//! the result hides the loop.

use std::fmt::Write as _;

use foldhash::HashMap;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::compat::value::canonical_json;
use crate::compat::value::py_strip;
use crate::table::columns::Columns;
use crate::table::flat;

pub(crate) struct RepeatedCall;

const REPEATS: usize = 3;

/// Arguments in a canonical form: JSON re-serialised with sorted keys, other text with whitespace folded.
pub(crate) fn normalize_arguments(arguments: &str) -> String {
    let t = py_strip(arguments);
    flat_canonical(t).unwrap_or_else(|| normalize_full(t))
}

/// The canonical form through a parsed JSON value: the reference for [`flat_canonical`].
fn normalize_full(t: &str) -> String {
    let bracketed =
        (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'));
    if bracketed && let Ok(v) = serde_json::from_str::<serde_json::Value>(t) {
        return canonical_json(&v);
    }
    fold_whitespace(t)
}

/// The canonical form of a flat JSON object, written from its text without building a value, or
/// `None` for anything else. Most tool arguments are a handful of plain strings and small integers,
/// and parsing them into a map dominated the check. Only values whose text re-serialises unchanged are
/// taken (strings with only the escapes the serialiser writes, integers without sign quirks, `true`,
/// `false`, `null`), and duplicate keys are left to the full path, which keeps the last one as Python
/// does.
fn flat_canonical(t: &str) -> Option<String> {
    let mut entries: Vec<(&str, &str)> = Vec::new();
    flat::members(t, canonical_value_end, |key, value| {
        entries.push((key, value));
        Some(())
    })?;
    entries.sort_unstable_by(|a, c| a.0.cmp(c.0));
    if entries.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    let mut out = String::with_capacity(t.len());
    out.push('{');
    for (n, (key, value)) in entries.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out.push_str(value);
    }
    out.push('}');
    Some(out)
}

/// Where a value whose text re-serialises unchanged ends: a string (see [`string_end`]), a literal,
/// or an integer (see [`integer_end`]).
fn canonical_value_end(t: &str, at: usize) -> Option<usize> {
    let b = t.as_bytes();
    match b.get(at)? {
        b'"' => string_end(b, at),
        b'n' | b't' | b'f' => flat::literal_end(b, at),
        _ => integer_end(b, at),
    }
}

/// The end of a string starting at `at` that serialises back to its own text: its escapes are only
/// those the serialiser writes itself (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`); `\/` and `\u`
/// escapes, and raw control characters, are left to the full path.
fn string_end(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        let skip = b
            .get(i..)?
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        i += skip;
        match b[i] {
            b'"' => return Some(i + 1),
            b'\\'
                if matches!(
                    b.get(i + 1),
                    Some(b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f')
                ) =>
            {
                i += 2;
            }
            _ => return None,
        }
    }
}

/// The end of an integer starting at `i` that serialises back to its own text: no `-0`, no leading
/// zeros, at most 18 digits (so it fits an `i64`); fractions and exponents are left to the full path.
fn integer_end(b: &[u8], i: usize) -> Option<usize> {
    let digits = i + usize::from(b.get(i) == Some(&b'-'));
    let len = b[digits..]
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(b.len() - digits);
    let end = digits + len;
    let plain = match len {
        0 => false,
        1 => b[digits] != b'0' || digits == i,
        _ => b[digits] != b'0' && len <= 18,
    };
    (plain && !matches!(b.get(end), Some(b'.' | b'e' | b'E'))).then_some(end)
}

/// Whitespace runs folded to one space, ends trimmed.
fn fold_whitespace(text: &str) -> String {
    text.split(crate::compat::value::is_py_space)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Check for RepeatedCall {
    fn name(&self) -> &'static str {
        "repeated_call"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "Same tool and arguments called >=3 times with identical results."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        // Maps and lists reused across the pass, so a trace costs no fresh table.
        let mut scratch = Scratch::default();
        for t in cols.traces() {
            match scratch.repeated(cols, t) {
                Some((tool, args, window)) => out.sure(true, |r: &mut String| {
                    let shown: String = args.chars().take(60).collect();
                    let _ = write!(
                        r,
                        "Tool '{tool}' with arguments {shown} issued >= 3 times (steps {}, {}, {}) where all 3 responses are identical after whitespace normalization.",
                        window[0] + 1,
                        window[1] + 1,
                        window[2] + 1
                    );
                }),
                None if cols.step_rows(t).len() - cols.unjudged_steps(t) < REPEATS => {
                    out.sure(false, "fewer than 3 tool calls");
                }
                None => out.sure(false, "no repeated calls without progress"),
            }
        }
    }
}

/// What finding a trace's repeated calls needs, kept from one trace to the next.
#[derive(Default)]
struct Scratch<'a> {
    /// Calls of each tool.
    calls: HashMap<&'a str, usize>,
    /// Each (tool, normalised arguments) group's place in `groups`.
    index: HashMap<(&'a str, String), usize>,
    /// The step positions of each group, in order of first occurrence; the first `used` are this
    /// trace's, the rest are emptied lists kept for their allocations.
    groups: Vec<Vec<usize>>,
    used: usize,
}

impl<'a> Scratch<'a> {
    /// The first window of three calls of one tool with the same normalised arguments and the same
    /// folded result in trace `t`, with the tool, its normalised arguments and the window's step
    /// positions.
    fn repeated(
        &mut self,
        cols: &Columns<'a>,
        t: usize,
    ) -> Option<(&'a str, String, [usize; REPEATS])> {
        let rows = cols.step_rows(t);
        let first = rows.start;
        if rows.len() < REPEATS {
            return None;
        }
        self.calls.clear();
        // A group needs three calls of one tool, so only the arguments of tools called that often
        // are normalised (the costly part); leaving the others out changes no qualifying group or
        // order.
        // Only the agent's calls count: a simulated user rerunning a test on their own device is not
        // the agent being stuck.
        for s in rows.clone().filter(|&s| cols.agent_step(s)) {
            *self.calls.entry(cols.tool.value(s)).or_default() += 1;
        }
        if self.calls.values().all(|&c| c < REPEATS) {
            return None;
        }
        self.index.clear();
        for group in &mut self.groups[..self.used] {
            group.clear();
        }
        self.used = 0;
        for s in rows.filter(|&s| cols.agent_step(s)) {
            let tool = cols.tool.value(s);
            if self.calls[tool] < REPEATS {
                continue;
            }
            let key = (tool, normalize_arguments(cols.arguments.value(s)));
            let slot = *self.index.entry(key).or_insert(self.used);
            if slot == self.used {
                if self.groups.len() == self.used {
                    self.groups.push(Vec::new());
                }
                self.used += 1;
            }
            self.groups[slot].push(s - first);
        }
        let result = |i: usize| cols.result.value(first + i);
        for members in self.groups[..self.used]
            .iter()
            .filter(|m| m.len() >= REPEATS)
        {
            for window in members.windows(REPEATS) {
                let head = result(window[0]);
                if window[1..]
                    .iter()
                    .all(|&i| same_after_folding(result(i), head))
                {
                    let at = first + window[0];
                    let args = normalize_arguments(cols.arguments.value(at));
                    return Some((cols.tool.value(at), args, [window[0], window[1], window[2]]));
                }
            }
        }
        None
    }
}

/// Whether two texts are equal once their whitespace is folded ([`fold_whitespace`]), without
/// building either: the folded text joins the words with a space, which no word holds, so two
/// folded texts are equal exactly when their words are.
fn same_after_folding(a: &str, b: &str) -> bool {
    let words =
        |text| str::split(text, crate::compat::value::is_py_space).filter(|w: &&str| !w.is_empty());
    a == b || words(a).eq(words(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{RunCheck, TraceSpec};

    #[test]
    fn three_identical_calls_with_identical_results_fire() {
        let v = TraceSpec::new()
            .step("search", r#"{"q": 0}"#, "[]")
            .step("search", r#"{ "q":0 }"#, " [] ")
            .step("search", r#"{"q": 0}"#, "[]")
            .run(&RepeatedCall);
        assert!(v.detected);
        assert_eq!(
            v.reason,
            r#"Tool 'search' with arguments {"q":0} issued >= 3 times (steps 1, 2, 3) where all 3 responses are identical after whitespace normalization."#
        );
    }

    #[test]
    fn progress_or_two_calls_do_not_fire() {
        let v = TraceSpec::new()
            .step("search", "a  b", "x")
            .step("search", "a b", "y")
            .step("search", "a b", "x")
            .run(&RepeatedCall);
        assert!(!v.detected);
        assert_eq!(v.reason, "no repeated calls without progress");
        let v = TraceSpec::new()
            .step("s", "a", "x")
            .step("s", "a", "x")
            .run(&RepeatedCall);
        assert_eq!(v.reason, "fewer than 3 tool calls");
    }

    #[test]
    fn the_window_slides_over_the_group() {
        let v = TraceSpec::new()
            .step("s", "a", "1")
            .step("other", "a", "1")
            .step("s", "a", "2")
            .step("s", "a", "2")
            .step("s", "a", "2")
            .run(&RepeatedCall);
        assert!(v.reason.contains("(steps 3, 4, 5)"), "{}", v.reason);
    }

    #[test]
    fn tools_called_less_often_do_not_disturb_the_groups() {
        let v = TraceSpec::new()
            .step("a", "x", "1")
            .step("b", "{\"q\": 1}", "r")
            .step("a", "x", "1")
            .step("b", "{ \"q\":1}", "r ")
            .step("c", "y", "1")
            .step("b", "{\"q\": 1}", " r")
            .run(&RepeatedCall);
        assert!(v.reason.contains("'b'"), "{}", v.reason);
        assert!(v.reason.contains("(steps 2, 4, 6)"), "{}", v.reason);
        let v = TraceSpec::new()
            .step("a", "x", "1")
            .step("b", "x", "1")
            .step("a", "x", "1")
            .step("b", "x", "1")
            .run(&RepeatedCall);
        assert_eq!(v.reason, "no repeated calls without progress");
    }

    #[test]
    fn results_compare_as_their_folded_texts() {
        const PARTS: &[&str] = &[
            "a", "b", "ab", " ", "  ", "\n", "\t", "\u{a0}", "\u{1c}", "\u{2028}", "é", "",
        ];
        let mut next = crate::checks::testing::draws(0x5851_f42d_4c95_7f2d);
        let mut text = || -> String { (0..next(6)).map(|_| PARTS[next(PARTS.len())]).collect() };
        let (mut equal, mut differ) = (0, 0);
        for _ in 0..20_000 {
            let (a, b) = (text(), text());
            let folded_equal = fold_whitespace(&a) == fold_whitespace(&b);
            assert_eq!(same_after_folding(&a, &b), folded_equal, "{a:?} {b:?}");
            if folded_equal {
                equal += 1;
            } else {
                differ += 1;
            }
        }
        assert!(
            equal > 500 && differ > 500,
            "{equal} equal, {differ} differ"
        );
    }

    #[test]
    fn normalizes_json_and_text() {
        assert_eq!(
            normalize_arguments(r#" {"b": 1, "a": [2, "é"]} "#),
            r#"{"a":[2,"é"],"b":1}"#
        );
        assert_eq!(normalize_arguments(" a \n\t b "), "a b");
        assert_eq!(normalize_arguments("{not json}"), "{not json}");
    }

    /// Argument texts around the flat-object fast path: flat objects with every kind of value and
    /// spacing, and the near misses it must hand to the full path (escapes, nesting, floats, `-0`,
    /// leading zeros, huge integers, duplicate keys, bad JSON, control characters, trailing text).
    fn generated_arguments(count: usize) -> Vec<String> {
        const KEYS: &[&str] = &[
            "\"q\"",
            "\"a\"",
            "\"b\"",
            "\"path\"",
            "\"é\"",
            "\"\"",
            "\"A\"",
            "\"a b\"",
            "\"\\u0061\"",
            "\"q\\n\"",
            "\"\u{7f}\"",
            "\"\u{2028}\"",
            "q",
            "\"q",
        ];
        const VALUES: &[&str] = &[
            "0",
            "1",
            "-1",
            "-0",
            "007",
            "12345678901234567",
            "123456789012345678",
            "1234567890123456789",
            "99999999999999999999",
            "1.5",
            "1e3",
            "1E3",
            "-",
            "2a",
            "true",
            "false",
            "null",
            "tru",
            "nulls",
            "\"x\"",
            "\"\"",
            "\" a  b \"",
            "\"café\"",
            "\"\\n\"",
            "\"\\\"\"",
            "\"\\u00e9\"",
            "\"\t\"",
            "\"\u{7f}\"",
            "\"/etc/passwd\"",
            "[1, 2]",
            "{\"x\": 1}",
            "[]",
            "{}",
            "\"\u{1f600}\"",
            "\"\u{2028}\"",
            "\"\\\\\"",
            "\"a\\\"b\\\\\"",
            "\"\\r\\t\\b\\f\"",
            "\"\\/\"",
            "\"\\u0001\"",
            "\"\\x\"",
            "\"\\",
            "\"\\\"",
        ];
        const SPACES: &[&str] = &["", "", " ", "  ", "\n", "\t", "\r\n", "\u{a0}", "\u{1c}"];
        let mut next = crate::checks::testing::draws(0x9e37_79b9_7f4a_7c15);
        (0..count)
            .map(|_| {
                let mut text = String::from(SPACES[next(SPACES.len())]);
                text.push('{');
                let members = next(5);
                for m in 0..members {
                    if m > 0 {
                        text.push_str(if next(40) == 0 { ";" } else { "," });
                    }
                    text.push_str(SPACES[next(SPACES.len())]);
                    text.push_str(KEYS[next(KEYS.len())]);
                    text.push_str(SPACES[next(SPACES.len())]);
                    text.push_str(if next(40) == 0 { "=" } else { ":" });
                    text.push_str(SPACES[next(SPACES.len())]);
                    text.push_str(VALUES[next(VALUES.len())]);
                    text.push_str(SPACES[next(SPACES.len())]);
                }
                if next(30) == 0 {
                    text.push(',');
                }
                text.push_str(["}", "}", "}", "} x", "}}", "]"][next(6)]);
                text.push_str(SPACES[next(SPACES.len())]);
                text
            })
            .collect()
    }

    #[test]
    fn flat_objects_canonicalise_as_the_full_path_does() {
        let (mut fast, mut json) = (0, 0);
        for text in generated_arguments(40_000) {
            let full = normalize_full(py_strip(&text));
            assert_eq!(normalize_arguments(&text), full, "{text:?}");
            fast += usize::from(flat_canonical(py_strip(&text)).is_some());
            json += usize::from(serde_json::from_str::<serde_json::Value>(py_strip(&text)).is_ok());
        }
        // Both paths must be taken often for the comparison to mean anything.
        assert!(
            fast > 2_000 && fast < 35_000,
            "{fast} of 40,000 took the fast path"
        );
        assert!(
            json > fast,
            "{json} of 40,000 are JSON, {fast} took the fast path"
        );
    }
}
