//! Custom judged checks from `--judge-checks FILE`: a team adds a judged failure mode without code.
//! This file reads their definitions; each runs as a `crate::checks::judged::CustomCheck`.
//!
//! ## File format
//!
//! A JSON list (or an object with a `checks` list) of `{"name": …, "question": …, "budget": …}`. The
//! name is the check's name on the command line and in reports (letters, digits, `_` and `-`, not a
//! built-in name); the question goes into the judge's system prompt exactly as `wrong_direction`'s does;
//! the optional budget (a positive integer) cuts the render as docs/compatibility.md §7.8 describes.

use std::path::Path;

use serde_json::Value;

use super::error::JudgeError;

/// A judged check: a name, the question the judge answers, and an optional render budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedSpec {
    pub name: String,
    pub question: String,
    pub budget: Option<usize>,
}

/// Reads a judged-checks file.
pub(crate) fn load(path: &Path) -> Result<Vec<JudgedSpec>, JudgeError> {
    let shown = crate::error::display_path(path);
    let err = |detail: String| JudgeError::ChecksFile {
        path: shown.clone(),
        detail,
    };
    let bytes = crate::sidefile::read(path).map_err(|e| err(e.to_string()))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| err(format!("not JSON: {e}")))?;
    parse(&value).map_err(err)
}

/// Validates a judged-checks document.
pub(crate) fn parse(value: &Value) -> Result<Vec<JudgedSpec>, String> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(o) => o
            .get("checks")
            .and_then(Value::as_array)
            .ok_or("expected a list of checks, or an object with a \"checks\" list")?,
        _ => return Err("expected a list of checks, or an object with a \"checks\" list".into()),
    };
    let mut specs: Vec<JudgedSpec> = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let at = |what: &str| format!("check {}: {what}", i + 1);
        let Value::Object(o) = item else {
            return Err(at("must be an object with name and question"));
        };
        let name = o.get("name").and_then(Value::as_str).unwrap_or_default();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(at(
                "name must be a non-empty string of letters, digits, _ and -",
            ));
        }
        if crate::checks::find(name).is_some() {
            return Err(at(&format!("'{name}' is a built-in check")));
        }
        if specs.iter().any(|s| s.name == name) {
            return Err(at(&format!("'{name}' is defined twice")));
        }
        let question = o
            .get("question")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if question.trim().is_empty() {
            return Err(at("question must be a non-empty string"));
        }
        let budget = match o.get("budget") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|b| *b > 0)
                    .ok_or_else(|| at("budget must be a positive integer"))?
                    as usize,
            ),
        };
        specs.push(JudgedSpec {
            name: name.into(),
            question: question.into(),
            budget,
        });
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_list_or_an_object() {
        let specs =
            parse(&json!([{"name": "tone", "question": "Was it rude?", "budget": 800}])).unwrap();
        assert_eq!(
            specs,
            vec![JudgedSpec {
                name: "tone".into(),
                question: "Was it rude?".into(),
                budget: Some(800)
            }]
        );
        let specs = parse(&json!({"checks": [{"name": "a", "question": "q"}]})).unwrap();
        assert_eq!(specs[0].budget, None);
    }

    #[test]
    fn rejects_bad_entries() {
        let cases = [
            (json!([{"question": "q"}]), "check 1: name must be"),
            (
                json!([{"name": "search_loop", "question": "q"}]),
                "'search_loop' is a built-in check",
            ),
            (
                json!([{"name": "a", "question": "q"}, {"name": "a", "question": "q"}]),
                "check 2: 'a' is defined twice",
            ),
            (json!([{"name": "a", "question": " "}]), "question must be"),
            (
                json!([{"name": "a", "question": "q", "budget": 0}]),
                "budget must be",
            ),
            (json!([{"name": "a b", "question": "q"}]), "name must be"),
            (json!(3), "expected a list"),
        ];
        for (doc, want) in cases {
            let err = parse(&doc).unwrap_err();
            assert!(err.contains(want), "{err} / {want}");
        }
    }
}
