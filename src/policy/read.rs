//! How the policy reads JSON: the policy document, a step's arguments and result, dotted paths, numbers
//! and Python-style value comparison (docs/compatibility.md §11.3).
//!
//! 0.4.1 reads with Python's `json` module, which accepts `NaN`, `Infinity` and `-Infinity`; serde_json
//! does not, so a document that fails strict parsing is retried with those literals read as `null`.
//! For every use the policy makes of them, null behaves like the non-finite number (a bound that never
//! fires, a limit that is "not a finite number").

use serde_json::{Map, Value};

use crate::compat::value::{py_float_str, py_str, py_strip};

/// Parses JSON text the way Python's `json.loads` does, with non-finite literals read as null.
pub(crate) fn parse_lenient(text: &str) -> Result<Value, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(strict) => match replace_non_finite(text) {
            Some(relaxed) => serde_json::from_str(&relaxed).map_err(|_| strict),
            None => Err(strict),
        },
    }
}

/// Parses a policy document; the error is a one-line description of where parsing failed.
pub(crate) fn parse_document(text: &str) -> Result<Value, String> {
    parse_lenient(text).map_err(|e| e.to_string())
}

/// The text with `NaN`, `Infinity` and `-Infinity` outside strings replaced by `null`, or `None` when
/// it has none of them.
fn replace_non_finite(text: &str) -> Option<String> {
    replace_non_finite_with(text, |_| "null")
}

/// The text with each non-finite literal outside strings replaced by `with(literal)`, or `None` when it
/// has none.
fn replace_non_finite_with(text: &str, with: impl Fn(&str) -> &'static str) -> Option<String> {
    const LITERALS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut replaced = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(lit) = LITERALS.iter().find(|lit| rest.starts_with(**lit)) {
            out.push_str(with(lit));
            rest = &rest[lit.len()..];
            replaced = true;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    replaced.then_some(out)
}

/// Strings that stand for non-finite literals while arguments are re-read for a reason's text; the
/// NUL bytes keep them apart from any text an agent sends in practice.
const NON_FINITE_MARKS: [(&str, &str, &str); 3] = [
    ("-Infinity", "\"\\u0000-inf\\u0000\"", "-inf"),
    ("Infinity", "\"\\u0000inf\\u0000\"", "inf"),
    ("NaN", "\"\\u0000nan\\u0000\"", "nan"),
];

/// Python's repr of the non-finite number at `parts` in the raw arguments (`nan`, `inf`, `-inf`), or
/// `None` when the value there is not a non-finite literal. Arguments read such literals as null (see
/// [`parse_lenient`]); a reason that quotes the value needs what Python printed.
pub(crate) fn non_finite_arg(raw: &str, parts: &[String]) -> Option<&'static str> {
    let mark = |lit: &str| {
        NON_FINITE_MARKS
            .iter()
            .find(|(l, _, _)| *l == lit)
            .map_or("null", |(_, m, _)| m)
    };
    let decode = |text: &str| -> Option<Value> {
        match serde_json::from_str(text) {
            Ok(v) => Some(v),
            Err(_) => serde_json::from_str(&replace_non_finite_with(text, mark)?).ok(),
        }
    };
    let map = match decode(raw)? {
        Value::Object(map) => map,
        Value::String(inner) => match decode(&inner)? {
            Value::Object(map) => map,
            _ => return None,
        },
        _ => return None,
    };
    let Value::String(found) = arg_at(&map, parts)? else {
        return None;
    };
    NON_FINITE_MARKS
        .iter()
        .find(|(_, m, _)| serde_json::from_str::<String>(m).is_ok_and(|m| m == *found))
        .map(|(_, _, repr)| *repr)
}

/// A step's arguments as the policy reads them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Args {
    Object(Map<String, Value>),
    /// Not a JSON object (after one extra decode of a JSON string), or not JSON at all.
    Unreadable,
}

impl Args {
    /// Reads raw arguments: blank text is the empty object, a JSON string is decoded once more.
    pub(crate) fn parse(raw: &str) -> Args {
        if py_strip(raw).is_empty() {
            return Args::Object(Map::new());
        }
        match parse_lenient(raw) {
            Ok(Value::Object(map)) => Args::Object(map),
            Ok(Value::String(inner)) => match parse_lenient(&inner) {
                Ok(Value::Object(map)) => Args::Object(map),
                _ => Args::Unreadable,
            },
            _ => Args::Unreadable,
        }
    }
}

/// The argument at a dotted path, descending through objects only; a present null is present.
pub(crate) fn arg_at<'v>(args: &'v Map<String, Value>, parts: &[String]) -> Option<&'v Value> {
    let (first, rest) = parts.split_first()?;
    let mut current = args.get(first)?;
    for part in rest {
        current = current.as_object()?.get(part)?;
    }
    Some(current)
}

/// The text two argument values are compared by: str-notation, trimmed.
pub(crate) fn value_text(v: &Value) -> String {
    py_strip(&py_str(v)).to_string()
}

/// A limit's number: a finite JSON number, or a string read as money (`"$1,200.50"`) with Python
/// `float()`. Booleans and non-finite values are not numbers.
pub(crate) fn read_number(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            let trimmed = py_strip(s);
            let unsigned = trimmed.strip_prefix('$').unwrap_or(trimmed);
            py_float_str(&unsigned.replace(',', ""))?
        }
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// A tool result as JSON for result predicates: an object or a list, after one extra decode of a JSON
/// string; anything else is not JSON.
pub(crate) fn parse_result(raw: &str) -> Option<Value> {
    let parsed = match parse_lenient(raw).ok()? {
        Value::String(inner) => parse_lenient(&inner).ok()?,
        other => other,
    };
    matches!(parsed, Value::Object(_) | Value::Array(_)).then_some(parsed)
}

/// The value at a dotted path into a result: object keys first, then all-digit list indexes.
pub(crate) fn result_at<'v>(root: &'v Value, parts: &[String]) -> Option<&'v Value> {
    let mut current = root;
    for part in parts {
        current = match current {
            Value::Object(map) => map.get(part)?,
            Value::Array(items) if !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()) => {
                items.get(part.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(current)
}

/// Typed equality of a result value and a policy value: booleans only equal booleans, numbers compare
/// numerically, anything else needs the same JSON type and Python equality.
pub(crate) fn typed_eq(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Bool(_), _) | (_, Value::Bool(_)) => false,
        (Value::Number(_), Value::Number(_)) => py_eq(got, want),
        (Value::Null, Value::Null) => true,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            py_eq(got, want)
        }
        _ => false,
    }
}

/// Python `==` on decoded JSON: `True == 1 == 1.0` and objects compare regardless of key order.
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (numeric(a), numeric(b)) {
            (Some(x), Some(y)) => numeric_eq(x, y),
            _ => false,
        },
    }
}

/// A boolean or number as Python compares it: integers exactly, anything else as a float.
enum Numeric {
    Int(i128),
    Float(f64),
}

fn numeric(v: &Value) -> Option<Numeric> {
    match v {
        Value::Bool(b) => Some(Numeric::Int(i128::from(*b))),
        Value::Number(n) => Some(
            n.as_i64()
                .map(|i| Numeric::Int(i128::from(i)))
                .or_else(|| n.as_u64().map(|u| Numeric::Int(i128::from(u))))
                .unwrap_or_else(|| Numeric::Float(n.as_f64().unwrap_or(f64::NAN))),
        ),
        _ => None,
    }
}

fn numeric_eq(a: Numeric, b: Numeric) -> bool {
    match (a, b) {
        (Numeric::Int(x), Numeric::Int(y)) => x == y,
        (Numeric::Int(x), Numeric::Float(y)) | (Numeric::Float(y), Numeric::Int(x)) => {
            y.fract() == 0.0 && y.is_finite() && (x as f64) == y && (y as i128) == x
        }
        (Numeric::Float(x), Numeric::Float(y)) => x == y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parts(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    #[test]
    fn arguments_blank_object_string_and_unreadable() {
        assert_eq!(Args::parse("  "), Args::Object(Map::new()));
        assert!(matches!(Args::parse(r#"{"a":1}"#), Args::Object(m) if m["a"] == json!(1)));
        assert!(matches!(Args::parse(r#""{\"a\":9}""#), Args::Object(m) if m["a"] == json!(9)));
        assert_eq!(Args::parse("amount=900"), Args::Unreadable);
        assert_eq!(Args::parse("[1]"), Args::Unreadable);
        assert_eq!(Args::parse(r#""plain""#), Args::Unreadable);
    }

    #[test]
    fn non_finite_literals_read_as_null_outside_strings() {
        assert_eq!(
            parse_lenient(r#"{"a": NaN, "b": "NaN", "c": -Infinity}"#).ok(),
            Some(json!({"a": null, "b": "NaN", "c": null}))
        );
        assert!(parse_lenient("{bad").is_err());
    }

    #[test]
    fn non_finite_arguments_keep_their_python_repr_for_reasons() {
        let raw = r#"{"amount": NaN, "up": Infinity, "down": -Infinity, "s": "NaN", "n": null}"#;
        assert_eq!(non_finite_arg(raw, &parts("amount")), Some("nan"));
        assert_eq!(non_finite_arg(raw, &parts("up")), Some("inf"));
        assert_eq!(non_finite_arg(raw, &parts("down")), Some("-inf"));
        assert_eq!(non_finite_arg(raw, &parts("s")), None);
        assert_eq!(non_finite_arg(raw, &parts("n")), None);
        assert_eq!(
            non_finite_arg(r#""{\"a\": {\"b\": NaN}}""#, &parts("a.b")),
            Some("nan")
        );
    }

    #[test]
    fn dotted_argument_paths_descend_objects_only() {
        let args = json!({"refund": {"amount": 5}, "n": null, "l": [1]});
        let map = args.as_object().unwrap();
        assert_eq!(arg_at(map, &parts("refund.amount")), Some(&json!(5)));
        assert_eq!(arg_at(map, &parts("n")), Some(&Value::Null));
        assert_eq!(arg_at(map, &parts("l.0")), None);
        assert_eq!(arg_at(map, &parts("refund.x")), None);
    }

    #[test]
    fn numbers_read_like_python_float_of_money() {
        assert_eq!(read_number(&json!("$1,200.50")), Some(1200.5));
        assert_eq!(read_number(&json!(" 499.99 ")), Some(499.99));
        assert_eq!(read_number(&json!("$-5")), Some(-5.0));
        assert_eq!(read_number(&json!("-$5")), None);
        assert_eq!(read_number(&json!("1_000")), Some(1000.0));
        assert_eq!(read_number(&json!("NaN")), None);
        assert_eq!(read_number(&json!("abc")), None);
        assert_eq!(read_number(&json!(true)), None);
        assert_eq!(read_number(&json!(750)), Some(750.0));
    }

    #[test]
    fn results_decode_once_more_and_index_lists() {
        let r = parse_result(r#""{\"items\": [{\"ok\": true}]}""#).unwrap();
        assert_eq!(result_at(&r, &parts("items.0.ok")), Some(&json!(true)));
        assert_eq!(result_at(&r, &parts("items.1.ok")), None);
        assert_eq!(parse_result("42"), None);
        assert_eq!(parse_result("Error: x"), None);
    }

    #[test]
    fn typed_equality_keeps_json_types_apart() {
        assert!(typed_eq(&json!(true), &json!(true)));
        assert!(!typed_eq(&json!(1), &json!(true)));
        assert!(typed_eq(&json!(1), &json!(1.0)));
        assert!(!typed_eq(&json!("1"), &json!(1)));
        assert!(typed_eq(&json!([true]), &json!([1])));
        assert!(typed_eq(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1.0})
        ));
        assert!(!typed_eq(&json!([1]), &json!({"a": 1})));
    }
}
