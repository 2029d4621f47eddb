//! Per-step and per-span facts that several checks share, computed once while the tables are built.

use serde_json::Value;

use crate::pyfmt::{py_int, py_str, py_strip, py_truthy};

/// Returns true if and only if a tool result counts as "nothing found" for search_loop.
pub fn is_empty_result(result: &str) -> bool {
    let r = py_strip(result);
    if matches!(r, "" | "[]" | "{}" | "null" | "None") {
        return true;
    }
    let Ok(parsed) = serde_json::from_str::<Value>(r) else {
        return false;
    };
    match parsed {
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => {
            for key in ["n_candidates", "count", "n_results", "total"] {
                if let Some(v) = map.get(key) {
                    return equals_zero(v);
                }
            }
            let mut lists = map.values().filter_map(Value::as_array).peekable();
            lists.peek().is_some() && lists.all(Vec::is_empty)
        }
        _ => false,
    }
}

/// Python `v == 0`: numbers and booleans compare numerically, everything else is unequal.
fn equals_zero(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

const EXIT_KEYS: [&str; 5] = [
    "exit_code",
    "return_code",
    "exitcode",
    "returncode",
    "exit_status",
];
const ERROR_PREFIXES: [&str; 4] = [
    "Error:",
    "ERROR:",
    "Traceback (most recent call last)",
    "An error occurred while parsing tool arguments",
];

/// The structural-error description of a tool result, or `None` when the result is not an error.
pub fn structural_error(result: &str) -> Option<String> {
    let text = py_strip(result);
    if text.is_empty() {
        return None;
    }
    for candidate in candidate_objects(text) {
        if let Some(err) = candidate.get("error").filter(|e| py_truthy(e)) {
            let desc: String = py_str(err).chars().take(80).collect();
            return Some(format!("JSON top-level error: {desc}"));
        }
        for key in EXIT_KEYS {
            if let Some(v) = candidate.get(key)
                && let Some(code) = py_int(v)
                && code != 0
            {
                return Some(format!("Non-zero {key}: {}", py_str(v)));
            }
        }
    }
    if text.contains("<tool_use_error>") && text.contains("</tool_use_error>") {
        return Some("<tool_use_error> tag present".into());
    }
    ERROR_PREFIXES
        .iter()
        .find(|p| text.starts_with(*p))
        .map(|p| format!("Response starts with '{p}'"))
}

fn candidate_objects(text: &str) -> Vec<serde_json::Map<String, Value>> {
    if text.starts_with('{') && text.ends_with('}') {
        if let Ok(Value::Object(map)) = serde_json::from_str(text) {
            return vec![map];
        }
        return Vec::new();
    }
    if text.starts_with('[')
        && text.ends_with(']')
        && let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text)
    {
        return items
            .iter()
            .filter_map(|item| item.get("text").and_then(Value::as_str))
            .map(py_strip)
            .filter(|t| t.starts_with('{') && t.ends_with('}'))
            .filter_map(|t| match serde_json::from_str(t) {
                Ok(Value::Object(map)) => Some(map),
                _ => None,
            })
            .collect();
    }
    Vec::new()
}

/// The span-error description of unrecovered_tool_error: a status code 2, else a truthy `error.type`.
pub fn span_error(status_code: i64, error_type: Option<&str>) -> Option<String> {
    if status_code == 2 {
        Some("Span status error: Code 2".into())
    } else {
        error_type.map(|t| format!("Span error: {t}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_results() {
        for r in [
            "",
            " [] ",
            "{}",
            "null",
            "None",
            r#"{"count": 0}"#,
            r#"{"count": false}"#,
            r#"{"hits": [], "x": 1}"#,
        ] {
            assert!(is_empty_result(r), "{r}");
        }
        for r in ["x", "[1]", r#"{"n_results": null}"#, r#"{"a": 1}"#, "0"] {
            assert!(!is_empty_result(r), "{r}");
        }
        // The first key of the fixed list that is present decides, wherever it stands in the object.
        assert!(is_empty_result(r#"{"total": 3, "count": 0}"#));
        assert!(!is_empty_result(r#"{"n_candidates": 2, "count": 0}"#));
    }

    #[test]
    fn structural_errors() {
        assert_eq!(
            structural_error(r#"{"error": "boom"}"#).unwrap(),
            "JSON top-level error: boom"
        );
        assert_eq!(
            structural_error(r#"{"exit_code": " 3 "}"#).unwrap(),
            "Non-zero exit_code:  3 "
        );
        assert_eq!(
            structural_error(r#"{"exit_code": 0, "returncode": 1.5}"#).unwrap(),
            "Non-zero returncode: 1.5"
        );
        assert_eq!(
            structural_error(r#"{"exit_code": true}"#).unwrap(),
            "Non-zero exit_code: True"
        );
        assert!(structural_error(r#"{"exit_code": "x"}"#).is_none());
        assert_eq!(
            structural_error(r#"[{"text": "{\"error\": 1}"}]"#).unwrap(),
            "JSON top-level error: 1"
        );
        assert_eq!(
            structural_error("  Error: nope").unwrap(),
            "Response starts with 'Error:'"
        );
        assert!(structural_error("Errors: nope").is_none());
        assert_eq!(
            structural_error("a <tool_use_error>x</tool_use_error>").unwrap(),
            "<tool_use_error> tag present"
        );
        assert!(structural_error(r#"{"status": "ok"}"#).is_none());
    }
}
