//! The judge prompt and the reading of its reply (docs/compatibility.md §13).
//!
//! Two departures from 0.4.1, both listed in docs/differences.md: a `"confidence": null` reads as 0.0
//! (0.4.1 crashed), and the string `"false"` for `detected` reads as false (0.4.1 took any non-empty
//! string as true).

use serde_json::Value;

use crate::checks::Verdict;
use crate::compat::value::{py_float_str, py_str, py_strip, py_truthy};

/// The system message: 0.4.1's fixed template around the check's question.
pub(crate) fn system_prompt(question: &str) -> String {
    format!(
        "You are an expert AI reliability judge evaluating an agent trace.\n{question}\nRespond ONLY with valid JSON: {{\"detected\": bool, \"confidence\": float, \"reason\": str}}"
    )
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn unparseable(raw: &str) -> Verdict {
    Verdict {
        detected: false,
        confidence: 0.0,
        reason: format!("unparseable judge output: {}", first_chars(raw, 100)),
    }
}

/// Reads a judge reply: trimmed; the text between the first two ``` fences (less a leading `json` tag)
/// when it has one; then a JSON object `{detected, confidence, reason}` with defaults false, 0.0 and "".
/// Anything else is not detected, with the reply's head in the reason.
pub(crate) fn parse_reply(raw: &str) -> Verdict {
    let mut text = py_strip(raw);
    if text.contains("```") {
        // As Python's split("```")[1]: with one fence, everything after it.
        text = text.split("```").nth(1).unwrap_or_default();
        text = text.strip_prefix("json").unwrap_or(text);
        text = py_strip(text);
    }
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else {
        return unparseable(raw);
    };
    let detected = match object.get("detected") {
        None => false,
        Some(Value::String(s)) if py_strip(s).eq_ignore_ascii_case("false") => false,
        Some(v) => py_truthy(v),
    };
    let confidence = match object.get("confidence") {
        None | Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => match py_float_str(s) {
            Some(f) => f,
            None => return unparseable(raw),
        },
        // 0.4.1 raised TypeError on a list or object; no number can be read from them.
        Some(_) => return unparseable(raw),
    };
    // A non-finite confidence cannot be written to the JSON report.
    if !confidence.is_finite() {
        return unparseable(raw);
    }
    let reason = object.get("reason").map(py_str).unwrap_or_default();
    Verdict {
        detected,
        confidence,
        reason: first_chars(&reason, 200),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(detected: bool, confidence: f64, reason: &str) -> Verdict {
        Verdict {
            detected,
            confidence,
            reason: reason.into(),
        }
    }

    #[test]
    fn plain_json() {
        assert_eq!(
            parse_reply(r#"{"detected": true, "confidence": 0.9, "reason": "reversed"}"#),
            v(true, 0.9, "reversed")
        );
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        assert_eq!(
            parse_reply("\n  {\"detected\": false, \"confidence\": 0.2, \"reason\": \"ok\"}  \n"),
            v(false, 0.2, "ok")
        );
    }

    #[test]
    fn fenced_json_block() {
        let reply = "Here is my verdict:\n```json\n{\"detected\": true, \"confidence\": 0.75, \"reason\": \"r\"}\n```\nThanks";
        assert_eq!(parse_reply(reply), v(true, 0.75, "r"));
    }

    #[test]
    fn fence_without_tag_and_unclosed_fence() {
        assert_eq!(parse_reply("```\n{\"detected\": 1}\n```"), v(true, 0.0, ""));
        assert_eq!(
            parse_reply("```json {\"detected\": true, \"confidence\": 1}"),
            v(true, 1.0, "")
        );
    }

    #[test]
    fn free_text_is_not_detected() {
        let reply = "The agent looks fine to me.";
        assert_eq!(
            parse_reply(reply),
            v(
                false,
                0.0,
                "unparseable judge output: The agent looks fine to me."
            )
        );
    }

    #[test]
    fn unparseable_reason_keeps_the_first_100_code_points_of_the_raw_reply() {
        let reply = format!("  {}", "é".repeat(150));
        let got = parse_reply(&reply);
        assert_eq!(
            got.reason,
            format!("unparseable judge output:   {}", "é".repeat(98))
        );
    }

    #[test]
    fn non_object_json_is_unparseable() {
        assert_eq!(
            parse_reply("[true]").reason,
            "unparseable judge output: [true]"
        );
        assert_eq!(parse_reply("true").reason, "unparseable judge output: true");
    }

    #[test]
    fn defaults_when_keys_are_missing() {
        assert_eq!(parse_reply("{}"), v(false, 0.0, ""));
    }

    #[test]
    fn detected_is_read_by_truthiness() {
        assert!(parse_reply(r#"{"detected": "yes"}"#).detected);
        assert!(parse_reply(r#"{"detected": 2}"#).detected);
        assert!(!parse_reply(r#"{"detected": 0}"#).detected);
        assert!(!parse_reply(r#"{"detected": ""}"#).detected);
        assert!(!parse_reply(r#"{"detected": null}"#).detected);
        assert!(!parse_reply(r#"{"detected": []}"#).detected);
    }

    #[test]
    fn the_string_false_is_false() {
        assert!(!parse_reply(r#"{"detected": "false"}"#).detected);
        assert!(!parse_reply(r#"{"detected": "False"}"#).detected);
        assert!(parse_reply(r#"{"detected": "true"}"#).detected);
    }

    #[test]
    fn null_confidence_reads_as_zero() {
        assert_eq!(
            parse_reply(r#"{"detected": true, "confidence": null, "reason": "x"}"#),
            v(true, 0.0, "x")
        );
    }

    #[test]
    fn confidence_is_python_float() {
        assert_eq!(parse_reply(r#"{"confidence": " 0.5 "}"#).confidence, 0.5);
        assert_eq!(parse_reply(r#"{"confidence": true}"#).confidence, 1.0);
        assert_eq!(parse_reply(r#"{"confidence": 1}"#).confidence, 1.0);
        assert!(
            parse_reply(r#"{"confidence": "high"}"#)
                .reason
                .starts_with("unparseable judge output: ")
        );
        assert!(
            parse_reply(r#"{"confidence": [1]}"#)
                .reason
                .starts_with("unparseable judge output: ")
        );
    }

    #[test]
    fn reason_is_python_str_cut_to_200() {
        assert_eq!(parse_reply(r#"{"reason": 1.0}"#).reason, "1.0");
        assert_eq!(parse_reply(r#"{"reason": null}"#).reason, "None");
        assert_eq!(
            parse_reply(r#"{"reason": ["a", true]}"#).reason,
            "['a', True]"
        );
        let long = format!("{{\"reason\": \"{}\"}}", "x".repeat(250));
        assert_eq!(parse_reply(&long).reason, "x".repeat(200));
    }

    #[test]
    fn system_prompt_is_the_template() {
        assert_eq!(
            system_prompt("Q?"),
            "You are an expert AI reliability judge evaluating an agent trace.\nQ?\nRespond ONLY with valid JSON: {\"detected\": bool, \"confidence\": float, \"reason\": str}"
        );
    }
}
