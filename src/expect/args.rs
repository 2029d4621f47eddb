//! Comparing a call's arguments with an expectation: values as canonical JSON, and the per-argument
//! matchers of an expectations file.
//!
//! Canonical JSON makes two values equal when they say the same thing: object key order, `1` against
//! `1.0` and string escapes do not matter. The matchers cover what equality cannot: a value the
//! scenario does not care about, a name typed in another case, an id of a known shape, an amount
//! computed with rounding, an object of which only some keys matter.

use std::fmt::Write as _;

use regex_automata::meta::Regex;
use serde_json::{Map, Value};

/// How one argument of an expected call is compared with the same argument of a made call.
#[derive(Debug, Clone)]
pub(crate) enum ArgRule {
    /// Equal as canonical JSON.
    Equal(Value),
    /// Equal strings, ignoring case (other values: canonical JSON).
    CaseInsensitive(Value),
    /// The made value (a string as it is, any other value as canonical JSON) contains a match.
    Regex(Box<Regex>),
    /// A number within `tolerance` of `value` (a string holding a number counts as that number).
    Tolerance {
        /// The expected number.
        value: f64,
        /// The largest absolute difference accepted.
        tolerance: f64,
    },
    /// An object holding at least these keys, each equal as canonical JSON.
    Subset(Map<String, Value>),
}

impl ArgRule {
    /// The expected value the rule holds, for showing; `None` for a pattern.
    pub(crate) fn expected(&self) -> Option<Value> {
        match self {
            ArgRule::Equal(v) | ArgRule::CaseInsensitive(v) => Some(v.clone()),
            ArgRule::Regex(_) => None,
            ArgRule::Tolerance { value, .. } => {
                serde_json::Number::from_f64(*value).map(Value::Number)
            }
            ArgRule::Subset(keys) => Some(Value::Object(keys.clone())),
        }
    }

    /// Returns true if and only if the made value satisfies the rule.
    pub(crate) fn accepts(&self, made: &Value) -> bool {
        match self {
            ArgRule::Equal(expected) => canonical_eq(expected, made),
            ArgRule::CaseInsensitive(expected) => match (expected, made) {
                (Value::String(a), Value::String(b)) => {
                    a == b || a.to_lowercase() == b.to_lowercase()
                }
                _ => canonical_eq(expected, made),
            },
            ArgRule::Regex(regex) => match made {
                Value::String(text) => regex.is_match(text.as_str()),
                other => regex.is_match(canonical(other).as_str()),
            },
            ArgRule::Tolerance { value, tolerance } => {
                number(made).is_some_and(|n| (n - value).abs() <= *tolerance)
            }
            ArgRule::Subset(keys) => made.as_object().is_some_and(|made| {
                keys.iter()
                    .all(|(k, v)| made.get(k).is_some_and(|m| canonical_eq(v, m)))
            }),
        }
    }

    /// Builds the rule of one argument from its matcher in the file (`None`: plain equality) and the
    /// expected value (`None` when the call's `arguments` do not give one). `Ok(None)` is `ignore`.
    pub(crate) fn from_matcher(
        matcher: Option<&Value>,
        expected: Option<Value>,
    ) -> Result<Option<ArgRule>, String> {
        // Called once, on whichever path the matcher takes: the value is moved, not copied.
        let need_value = move |what: &str| {
            expected.ok_or_else(|| {
                format!("matcher {what} needs the argument's value in \"arguments\"")
            })
        };
        let Some(matcher) = matcher else {
            return Ok(Some(ArgRule::Equal(need_value("equality")?)));
        };
        match matcher {
            Value::String(name) => match name.as_str() {
                "ignore" => Ok(None),
                "equal" => Ok(Some(ArgRule::Equal(need_value("\"equal\"")?))),
                "case_insensitive" => Ok(Some(ArgRule::CaseInsensitive(need_value(
                    "\"case_insensitive\"",
                )?))),
                "subset" => match need_value("\"subset\"")? {
                    Value::Object(keys) => Ok(Some(ArgRule::Subset(keys))),
                    _ => Err("matcher \"subset\" needs an object value in \"arguments\"".into()),
                },
                other => Err(format!(
                    "unknown matcher {other:?} (ignore, equal, case_insensitive, subset, {{\"regex\": …}}, {{\"tolerance\": …}})"
                )),
            },
            Value::Object(spec) if spec.len() == 1 && spec.contains_key("regex") => {
                let pattern = spec["regex"]
                    .as_str()
                    .ok_or("matcher \"regex\" needs a string pattern")?;
                Regex::new(pattern)
                    .map(|r| Some(ArgRule::Regex(Box::new(r))))
                    .map_err(|e| format!("bad regular expression {pattern:?}: {e}"))
            }
            Value::Object(spec) if spec.len() == 1 && spec.contains_key("tolerance") => {
                let tolerance = spec["tolerance"]
                    .as_f64()
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .ok_or("matcher \"tolerance\" needs a number at least 0")?;
                let value = need_value("\"tolerance\"")?;
                let value = number(&value)
                    .ok_or("matcher \"tolerance\" needs a number in \"arguments\"")?;
                Ok(Some(ArgRule::Tolerance { value, tolerance }))
            }
            other => Err(format!(
                "bad matcher {}: use \"ignore\", \"equal\", \"case_insensitive\", \"subset\", {{\"regex\": PATTERN}} or {{\"tolerance\": NUMBER}}",
                canonical(other)
            )),
        }
    }
}

/// A number, or a string that holds one.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|n| n.is_finite()),
        _ => None,
    }
}

/// Returns true if and only if the two values are equal as canonical JSON: objects by key whatever
/// their order, numbers by value (`1` equals `1.0`).
pub(crate) fn canonical_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| canonical_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| canonical_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The canonical JSON text of a value: keys sorted, no spaces, a number with an integral value written
/// as an integer. Equal texts for [`canonical_eq`] values, so it can be hashed and compared.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                let _ = write!(out, "{n}");
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // Integral floats within f64's exact integers are written as the integer they equal.
                if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
                    #[allow(clippy::cast_possible_truncation)]
                    let _ = write!(out, "{}", f as i64);
                } else {
                    let _ = write!(out, "{n}");
                }
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The arguments of a made call as a JSON value: the recorded text parsed (a JSON string that holds
/// an encoded object is decoded once more, as some exporters encode arguments twice); text that is not
/// JSON stays a string.
pub(crate) fn parse_arguments(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(object @ Value::Object(_)) => object,
            _ => Value::String(inner),
        },
        Ok(value) => value,
        Err(_) => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_json_ignores_key_order_number_form_and_escapes() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": "x\u0079"}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a": "xy", "b": 1.0}"#).unwrap();
        assert!(canonical_eq(&a, &b));
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"a":"xy","b":1}"#);
        assert!(!canonical_eq(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!canonical_eq(&json!([1, 2]), &json!([2, 1])));
        assert!(!canonical_eq(&json!(1.5), &json!(1)));
    }

    #[allow(clippy::needless_pass_by_value)] // called with `json!` literals
    fn rule(matcher: Value, expected: Value) -> ArgRule {
        ArgRule::from_matcher(Some(&matcher), Some(expected))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn each_matcher_accepts_what_it_should_and_nothing_else() {
        assert!(
            ArgRule::from_matcher(Some(&json!("ignore")), None)
                .unwrap()
                .is_none()
        );
        let ci = rule(json!("case_insensitive"), json!("Mia Li"));
        assert!(ci.accepts(&json!("mia li")) && !ci.accepts(&json!("mia lee")));
        let re = rule(json!({"regex": "^[A-Z0-9]{6}$"}), Value::Null);
        assert!(re.accepts(&json!("4OG6T3")) && !re.accepts(&json!("4og6t3")));
        let tol = rule(json!({"tolerance": 0.5}), json!(100));
        assert!(tol.accepts(&json!(100.4)) && tol.accepts(&json!("99.6")));
        assert!(!tol.accepts(&json!(101)) && !tol.accepts(&json!("a lot")));
        let sub = rule(json!("subset"), json!({"id": 3}));
        assert!(sub.accepts(&json!({"id": 3.0, "note": "x"})) && !sub.accepts(&json!({"id": 4})));
        let eq = ArgRule::from_matcher(None, Some(json!({"x": [1]})))
            .unwrap()
            .unwrap();
        assert!(eq.accepts(&json!({"x": [1.0]})) && !eq.accepts(&json!({"x": [1, 2]})));
    }

    #[test]
    fn bad_matchers_say_what_is_wrong() {
        let err = |m: Value, v: Option<Value>| ArgRule::from_matcher(Some(&m), v).unwrap_err();
        assert!(err(json!("fuzzy"), Some(json!(1))).contains("unknown matcher \"fuzzy\""));
        assert!(err(json!({"regex": "("}), None).contains("bad regular expression"));
        assert!(err(json!({"tolerance": -1}), Some(json!(1))).contains("at least 0"));
        assert!(err(json!({"tolerance": 1}), None).contains("needs the argument's value"));
        assert!(err(json!("subset"), Some(json!(1))).contains("object value"));
        assert!(err(json!(3), None).contains("bad matcher 3"));
    }

    #[test]
    fn arguments_encoded_twice_are_decoded() {
        assert_eq!(parse_arguments(r#""{\"a\": 1}""#), json!({"a": 1}));
        assert_eq!(parse_arguments(r#"{"a": 1}"#), json!({"a": 1}));
        assert_eq!(parse_arguments("not json"), json!("not json"));
    }
}
