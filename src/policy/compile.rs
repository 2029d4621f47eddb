//! Validation of a policy document into a [`Policy`] (docs/compatibility.md §11.1), done once per file.
//!
//! Messages are 0.4.1's, prefixed `policy: ` by [`PolicyError::Invalid`]. Two things differ on purpose:
//! - Where 0.4.1 checks the keys of one object in Python's hash-randomised order, we check them in the
//!   order they are written in the file, so a file with several bad keys always names the same one.
//! - What 0.4.1 does not validate and crashes on later (a `null` or numeric `allow` or `deny_patterns`,
//!   a string `max_calls`, a regex that does not compile, a document that is a number, `null` or a list
//!   of key names) is rejected here, after 0.4.1's own checks, with a message naming the key path.

use std::collections::{BTreeSet, HashSet};

use regex_automata::meta::Regex;
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use serde_json::{Map, Value};

use super::{
    AllowedValues, ArgPath, Bound, CallCap, Confirmation, DenyPatterns, Identity, Limit, Policy,
    PolicyError, Predicate, PredicateOp, RequiredArgs, Requirement,
};
use crate::compat::re;
use crate::compat::reason::{py_repr, py_repr_str, py_str};

const TOP_LEVEL_KEYS: [&str; 13] = [
    "allow",
    "max_calls",
    "max_arg_chars",
    "deny_patterns",
    "limits",
    "identity",
    "requires",
    "max_calls_per_arg",
    "values",
    "required_args",
    "confirmation",
    "require_complete",
    "require_defined_tools",
];

/// The built-in denied patterns, used when the file has no `deny_patterns`.
const DEFAULT_DENY_PATTERNS: [&str; 5] = [
    r"\.\./",
    "file://",
    "/etc/(passwd|shadow)",
    r"~/\.ssh",
    "/proc/",
];

type Result<T> = std::result::Result<T, PolicyError>;

fn invalid(message: impl Into<String>) -> PolicyError {
    PolicyError::Invalid(message.into())
}

/// Validates a parsed policy document.
pub(crate) fn compile(document: &Value) -> Result<Policy> {
    let doc = top_level(document)?;

    let limits = list_of(doc, "limits", limit)?;
    let identity = doc.get("identity").map(identity).transpose()?;
    let mut requirement_keys = BTreeSet::new();
    let requires = list_of(doc, "requires", |where_, v| {
        let q = requirement(where_, v)?;
        if let Value::Object(map) = v {
            requirement_keys.extend(map.keys().cloned());
        }
        Ok(q)
    })?;
    let max_calls_per_arg = list_of(doc, "max_calls_per_arg", call_cap)?;
    let values = list_of(doc, "values", allowed_values)?;
    let required_args = list_of(doc, "required_args", required_args)?;
    let confirmation = doc.get("confirmation").map(confirmation).transpose()?;
    let require_complete = match doc.get("require_complete") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("require_complete must be true or false")),
    };
    let require_defined_tools = match doc.get("require_defined_tools") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("require_defined_tools must be true or false")),
    };

    let allow = doc.get("allow").map(allow).transpose()?;
    let max_calls = bound(doc, "max_calls")?;
    let max_arg_chars = bound(doc, "max_arg_chars")?;
    let deny_patterns = match doc.get("deny_patterns") {
        None => deny_set(
            DEFAULT_DENY_PATTERNS
                .iter()
                .map(ToString::to_string)
                .collect(),
        )?,
        Some(v) => deny_patterns(v)?,
    };

    Ok(Policy {
        keys: doc.keys().cloned().collect(),
        requirement_keys: requirement_keys.into_iter().collect(),
        allow,
        max_calls,
        max_arg_chars,
        deny_patterns,
        limits,
        identity,
        requires,
        max_calls_per_arg,
        values,
        required_args,
        confirmation,
        require_complete,
        require_defined_tools,
    })
}

/// The document's top-level object. 0.4.1 iterates a non-object document as if it were the key set,
/// so a string or a list reports its unknown "keys"; whatever would crash it instead is rejected.
fn top_level(document: &Value) -> Result<&Map<String, Value>> {
    let not_object = || invalid("the policy file must hold a JSON object");
    let items: Vec<Value> = match document {
        Value::Object(map) => {
            let mut unknown: Vec<&String> = map
                .keys()
                .filter(|k| !TOP_LEVEL_KEYS.contains(&k.as_str()))
                .collect();
            if unknown.is_empty() {
                return Ok(map);
            }
            unknown.sort();
            return Err(invalid(format!("unknown keys {}", repr_names(unknown))));
        }
        Value::String(s) => s.chars().map(|c| Value::String(c.to_string())).collect(),
        Value::Array(items) => items.clone(),
        _ => return Err(not_object()),
    };
    let mut unknown: Vec<Value> = Vec::new();
    for item in items {
        let known = item.as_str().is_some_and(|s| TOP_LEVEL_KEYS.contains(&s));
        if !known && !unknown.contains(&item) {
            unknown.push(item);
        }
    }
    if unknown.iter().all(Value::is_string) && !unknown.is_empty() {
        unknown.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    } else if unknown.iter().all(serde_json::Value::is_number) && !unknown.is_empty() {
        unknown.sort_by(|a, b| {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.total_cmp(&y)
        });
    } else {
        return Err(not_object());
    }
    Err(invalid(format!(
        "unknown keys {}",
        py_repr(&Value::Array(unknown))
    )))
}

fn repr_names<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|n| py_repr_str(n.as_ref())).collect();
    format!("[{}]", quoted.join(", "))
}

/// Each element of a list-valued key, validated with `item(where, value)`.
fn list_of<T>(
    doc: &Map<String, Value>,
    key: &str,
    mut item: impl FnMut(&str, &Value) -> Result<T>,
) -> Result<Vec<T>> {
    match doc.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| item(&format!("{key}[{i}]"), v))
            .collect(),
        Some(_) => Err(invalid(format!("{key} must be a list"))),
    }
}

/// How a key inside an object entry must look (docs/compatibility.md §11.1, the type table).
#[derive(Clone, Copy)]
enum Shape {
    /// `max` of `max_calls_per_arg`: an integer, not a boolean, at least 1.
    WholeAtLeastOne,
    /// `min` / `max` of limits: a finite number, not a boolean.
    FiniteNumber,
    /// `tools`: a list of strings, possibly empty.
    ToolList,
    /// `after`: a string, or a non-empty list of strings.
    ToolOrTools,
    /// `allowed`: a non-empty list of strings.
    Strings,
    /// `success`, `latest`.
    Boolean,
    /// `invalidated_by`, `args`: a non-empty list of non-empty strings.
    Names,
    /// `result`: a non-empty list of predicates.
    Predicates,
    /// Anything else: a string, possibly empty.
    Text,
}

/// The S(where, required, optional) check: an object with the required keys, no others, each of the
/// right shape. `keys` lists every allowed key with its shape and whether it is required.
fn shaped<'v>(
    where_: &str,
    value: &'v Value,
    keys: &[(&str, Shape, bool)],
) -> Result<&'v Map<String, Value>> {
    let Value::Object(map) = value else {
        return Err(invalid(format!("{where_} must be an object")));
    };
    let mut missing: Vec<&str> = keys
        .iter()
        .filter(|(k, _, required)| *required && !map.contains_key(*k))
        .map(|(k, _, _)| *k)
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        let quoted: Vec<String> = missing.iter().map(|k| format!("'{k}'")).collect();
        return Err(invalid(format!("{where_} needs {}", quoted.join(" and "))));
    }
    let mut unknown: Vec<&String> = map
        .keys()
        .filter(|k| !keys.iter().any(|(name, _, _)| name == k))
        .collect();
    if !unknown.is_empty() {
        unknown.sort();
        return Err(invalid(format!(
            "{where_} has unknown keys {}",
            repr_names(unknown)
        )));
    }
    for (key, v) in map {
        if let Some((_, shape, _)) = keys.iter().find(|(name, _, _)| name == key) {
            check_shape(where_, key, v, *shape)?;
        }
    }
    Ok(map)
}

fn check_shape(where_: &str, key: &str, v: &Value, shape: Shape) -> Result<()> {
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    let (ok, wanted) = match shape {
        Shape::WholeAtLeastOne => (
            v.as_u64().is_some_and(|n| n >= 1),
            "must be a whole number >= 1",
        ),
        Shape::FiniteNumber => (
            v.as_f64().is_some_and(f64::is_finite),
            "must be a finite number",
        ),
        Shape::ToolList => (strings(v), "must be a list of tool names"),
        Shape::ToolOrTools => (
            v.is_string() || (strings(v) && v.as_array().is_some_and(|a| !a.is_empty())),
            "must be a tool name or a list of tool names",
        ),
        Shape::Strings => (
            strings(v) && v.as_array().is_some_and(|a| !a.is_empty()),
            "must be a list of strings",
        ),
        Shape::Boolean => (v.is_boolean(), "must be true or false"),
        Shape::Names => (
            v.as_array().is_some_and(|a| {
                !a.is_empty() && a.iter().all(|s| s.as_str().is_some_and(|s| !s.is_empty()))
            }),
            "must be a non-empty list of names",
        ),
        Shape::Predicates => {
            let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
                return Err(invalid(format!(
                    "{where_}.{key} must be a non-empty list of predicates"
                )));
            };
            for (j, item) in items.iter().enumerate() {
                predicate(&format!("{where_}.{key}[{j}]"), item)?;
            }
            (true, "")
        }
        Shape::Text => (v.is_string(), "must be a string"),
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(format!("{where_}.{key} {wanted}")))
    }
}

fn text(map: &Map<String, Value>, key: &str) -> String {
    map.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn texts(map: &Map<String, Value>, key: &str) -> Vec<String> {
    match map.get(key) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn limit(where_: &str, value: &Value) -> Result<Limit> {
    use Shape::*;
    let map = shaped(
        where_,
        value,
        &[
            ("tool", Text, true),
            ("arg", Text, true),
            ("min", FiniteNumber, false),
            ("max", FiniteNumber, false),
        ],
    )?;
    let (min, max) = (map.get("min"), map.get("max"));
    if min.is_none() && max.is_none() {
        return Err(invalid(format!("{where_} needs 'min' or 'max'")));
    }
    if let (Some(lo), Some(hi)) = (min, max)
        && lo.as_f64() > hi.as_f64()
    {
        return Err(invalid(format!(
            "{where_} min {} > max {}",
            py_str(lo),
            py_str(hi)
        )));
    }
    Ok(Limit {
        tool: text(map, "tool"),
        arg: ArgPath::new(&text(map, "arg")),
        min: min.and_then(Value::as_f64),
        max: max.and_then(Value::as_f64),
    })
}

fn identity(value: &Value) -> Result<Identity> {
    use Shape::*;
    let map = shaped(
        "identity",
        value,
        &[
            ("arg", Text, true),
            ("session_attr", Text, false),
            ("tools", ToolList, false),
        ],
    )?;
    Ok(Identity {
        arg: ArgPath::new(&text(map, "arg")),
        session_attr: map
            .get("session_attr")
            .and_then(Value::as_str)
            .unwrap_or("enduser.id")
            .to_string(),
        tools: map.get("tools").map(|_| texts(map, "tools")),
    })
}

fn requirement(where_: &str, value: &Value) -> Result<Requirement> {
    use Shape::*;
    let map = shaped(
        where_,
        value,
        &[
            ("tool", Text, true),
            ("after", ToolOrTools, true),
            ("result_contains", Text, false),
            ("same_arg", Text, false),
            ("success", Boolean, false),
            ("result", Predicates, false),
            ("latest", Boolean, false),
            ("invalidated_by", Names, false),
        ],
    )?;
    let result = match map.get("result") {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(j, item)| predicate(&format!("{where_}.result[{j}]"), item))
            .collect::<Result<_>>()?,
        _ => Vec::new(),
    };
    Ok(Requirement {
        tool: text(map, "tool"),
        after: texts(map, "after"),
        result_contains: map
            .get("result_contains")
            .and_then(Value::as_str)
            .map(str::to_string),
        same_arg: map
            .get("same_arg")
            .and_then(Value::as_str)
            .map(ArgPath::new),
        success: map.get("success") == Some(&Value::Bool(true)),
        result,
        latest: map.get("latest") == Some(&Value::Bool(true)),
        invalidated_by: texts(map, "invalidated_by"),
    })
}

fn predicate(where_: &str, value: &Value) -> Result<Predicate> {
    const OPERATORS: [&str; 4] = ["equals", "in", "not_in", "exists"];
    let Value::Object(map) = value else {
        return Err(invalid(format!("{where_} must be an object")));
    };
    let Some(path) = map
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    else {
        return Err(invalid(format!(
            "{where_} needs a 'path' (a dotted path into the JSON result)"
        )));
    };
    let mut unknown: Vec<&String> = map
        .keys()
        .filter(|k| *k != "path" && !OPERATORS.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        unknown.sort();
        return Err(invalid(format!(
            "{where_} has unknown keys {}",
            repr_names(unknown)
        )));
    }
    let present: Vec<&str> = OPERATORS
        .iter()
        .copied()
        .filter(|op| map.contains_key(*op))
        .collect();
    let [op] = present[..] else {
        return Err(invalid(format!(
            "{where_} needs exactly one of equals, in, not_in, exists"
        )));
    };
    let operand = map.get(op).cloned().unwrap_or(Value::Null);
    let op = match (op, operand) {
        ("equals", v) => PredicateOp::Equals(v),
        ("in", Value::Array(items)) => PredicateOp::In(items),
        ("not_in", Value::Array(items)) => PredicateOp::NotIn(items),
        ("exists", Value::Bool(b)) => PredicateOp::Exists(b),
        ("exists", _) => return Err(invalid(format!("{where_}.exists must be true or false"))),
        (op, _) => return Err(invalid(format!("{where_}.{op} must be a list"))),
    };
    Ok(Predicate {
        path: ArgPath::new(path),
        op,
    })
}

fn call_cap(where_: &str, value: &Value) -> Result<CallCap> {
    use Shape::*;
    let map = shaped(
        where_,
        value,
        &[
            ("tools", ToolList, true),
            ("arg", Text, true),
            ("max", WholeAtLeastOne, true),
        ],
    )?;
    let mut tools = texts(map, "tools");
    tools.sort();
    tools.dedup();
    Ok(CallCap {
        tools,
        arg: ArgPath::new(&text(map, "arg")),
        max: map.get("max").and_then(Value::as_u64).unwrap_or(1),
    })
}

fn allowed_values(where_: &str, value: &Value) -> Result<AllowedValues> {
    use Shape::*;
    let map = shaped(
        where_,
        value,
        &[
            ("tool", Text, true),
            ("arg", Text, true),
            ("allowed", Strings, true),
        ],
    )?;
    Ok(AllowedValues {
        tool: text(map, "tool"),
        arg: ArgPath::new(&text(map, "arg")),
        allowed: texts(map, "allowed"),
    })
}

fn required_args(where_: &str, value: &Value) -> Result<RequiredArgs> {
    use Shape::*;
    let map = shaped(
        where_,
        value,
        &[("tool", Text, true), ("args", Names, true)],
    )?;
    Ok(RequiredArgs {
        tool: text(map, "tool"),
        args: texts(map, "args").iter().map(|a| ArgPath::new(a)).collect(),
    })
}

fn confirmation(value: &Value) -> Result<Confirmation> {
    use Shape::*;
    let map = shaped(
        "confirmation",
        value,
        &[
            ("tools", ToolList, true),
            ("by", Text, true),
            ("same_arg", Text, false),
        ],
    )?;
    Ok(Confirmation {
        tools: texts(map, "tools"),
        by: text(map, "by"),
        same_arg: map
            .get("same_arg")
            .and_then(Value::as_str)
            .map(ArgPath::new),
    })
}

/// `allow`: a list of tool names. 0.4.1 also takes a string (its characters) or an object (its keys),
/// which flags every call; here those are refused as the type errors they are.
fn allow(value: &Value) -> Result<HashSet<String>> {
    match value {
        Value::Array(items) if items.iter().all(Value::is_string) => Ok(items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()),
        _ => Err(invalid("allow must be a list of tool names")),
    }
}

/// `max_calls` / `max_arg_chars`: a number compared as is; `null` (or `NaN`, read as null) is off.
/// 0.4.1 also compares a boolean (`true` as 1); here that is a type error.
fn bound(doc: &Map<String, Value>, key: &str) -> Result<Option<Bound>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Number(n)) => Ok(Some(Bound {
            value: n.as_f64().unwrap_or(f64::NAN),
            text: py_str(v),
        })),
        Some(_) => Err(invalid(format!("{key} must be a number"))),
    }
}

/// `deny_patterns` replaces the built-in list: a list of strings. (0.4.1 also iterates a string's
/// characters or an object's keys; those are refused as type errors.)
fn deny_patterns(value: &Value) -> Result<DenyPatterns> {
    let Value::Array(items) = value else {
        return Err(invalid(
            "deny_patterns must be a list of regular expressions",
        ));
    };
    let sources = items
        .iter()
        .enumerate()
        .map(|(i, source)| match source {
            Value::String(s) => Ok(s.clone()),
            _ => Err(invalid(format!("deny_patterns[{i}] must be a string"))),
        })
        .collect::<Result<Vec<String>>>()?;
    deny_set(sources)
}

/// The size limit of the denied patterns' automaton (its NFA, and each lazy DFA's cache). Python
/// compiles each pattern on its own; a list large enough to pass this is refused, not compiled for
/// minutes in gigabytes.
pub(crate) const DENY_AUTOMATON_LIMIT: usize = 32 << 20;

/// Compiles the denied patterns, written in Python `re` syntax (translated by [`re`]) and searched
/// case-insensitively with Unicode classes like Python's `re`, as one automaton.
fn deny_set(sources: Vec<String>) -> Result<DenyPatterns> {
    let mut translated = Vec::with_capacity(sources.len());
    for (index, source) in sources.iter().enumerate() {
        let rust = re::translate(source).map_err(|e| {
            if e.ends_with("not supported") {
                // Valid Python, but beyond what the Rust engine runs: say so rather than call it invalid.
                invalid(format!(
                    "deny_patterns[{index}] {} cannot be run: {e}",
                    py_repr_str(source)
                ))
            } else {
                bad_pattern(index, source, &e)
            }
        })?;
        translated.push(rust);
    }
    if translated.is_empty() {
        return Ok(DenyPatterns {
            sources,
            regex: None,
        });
    }
    let too_large = |detail: &dyn std::fmt::Display| PolicyError::TooLarge {
        path: "policy".into(),
        detail: format!(
            "the {} deny_patterns compile past the {} MiB automaton limit ({detail}); use fewer or simpler patterns",
            sources.len(),
            DENY_AUTOMATON_LIMIT >> 20
        ),
    };
    if let Some(size) = size_past_limit(&translated) {
        return Err(too_large(&format_args!(
            "at least {} MiB",
            size.div_ceil(1 << 20)
        )));
    }
    let regex = Regex::builder()
        .syntax(syntax::Config::new().case_insensitive(true))
        .configure(
            Regex::config()
                .match_kind(regex_automata::MatchKind::All)
                // A literal prefilter lets the search skip most of every argument, where the automaton
                // reads each byte; but literal extraction over thousands of case-folded patterns is
                // quadratic, so a long list runs on the automaton alone.
                .auto_prefilter(translated.len() <= PREFILTER_MAX_PATTERNS)
                .nfa_size_limit(Some(DENY_AUTOMATON_LIMIT))
                .onepass_size_limit(Some(DENY_AUTOMATON_LIMIT))
                .dfa_size_limit(Some(DENY_AUTOMATON_LIMIT))
                .hybrid_cache_capacity(DENY_AUTOMATON_LIMIT),
        )
        .build_many(&translated)
        .map_err(|e| {
            if let Some(pattern) = e.pattern() {
                let index = pattern.as_usize();
                // The build error's own text is only "error parsing pattern N"; the reason is its source.
                let detail = std::error::Error::source(&e)
                    .map_or_else(|| e.to_string(), ToString::to_string);
                bad_pattern(
                    index,
                    &sources[index],
                    detail.lines().last().unwrap_or_default(),
                )
            } else {
                too_large(&e)
            }
        })?;
    Ok(DenyPatterns {
        sources,
        regex: Some(regex),
    })
}

/// The longest list of denied patterns searched with a literal prefilter (the built-in list has 5).
const PREFILTER_MAX_PATTERNS: usize = 64;

/// Patterns compiled per step of [`size_past_limit`]: enough to amortise the compiler's start, few
/// enough that one step's syntax trees stay small.
const SIZE_CHECK_CHUNK: usize = 1024;

/// The size the automaton of `patterns` is known to pass [`DENY_AUTOMATON_LIMIT`] with, if it does.
///
/// Compiling the whole list at once parses every pattern before the size limit can stop it, and the
/// syntax trees of a million patterns take gigabytes. The automaton of several patterns holds each
/// pattern's states side by side, so its size is the sum of its parts: compiled a chunk at a time,
/// the sum passes the limit after compiling just past it, in the memory of one chunk. What a chunk
/// costs whatever its patterns (the start states, the byte classes) is not counted, so a list this
/// refuses is one the whole build would refuse too. A pattern that does not parse is left for the whole
/// build to name.
fn size_past_limit(patterns: &[String]) -> Option<usize> {
    let compile = |chunk: &[String]| {
        thompson::Compiler::new()
            .syntax(syntax::Config::new().case_insensitive(true))
            .configure(
                // No capture states: the count stays below what the whole build compiles.
                thompson::Config::new()
                    .nfa_size_limit(Some(DENY_AUTOMATON_LIMIT))
                    .which_captures(thompson::WhichCaptures::None)
                    .shrink(false),
            )
            .build_many(chunk)
            // Only the size limit matters here: `None` for any other error.
            .map_err(|e| e.size_limit())
    };
    if patterns.len() <= SIZE_CHECK_CHUNK {
        return None;
    }
    let fixed = compile(&[String::new()]).ok()?.memory_usage();
    let mut total = 0usize;
    for chunk in patterns.chunks(SIZE_CHECK_CHUNK) {
        match compile(chunk) {
            Ok(nfa) => total += nfa.memory_usage().saturating_sub(fixed),
            // This chunk alone passes the limit.
            Err(limit) => return limit.map(|limit| total + limit + 1),
        }
        if total > DENY_AUTOMATON_LIMIT {
            return Some(total);
        }
    }
    None
}

fn bad_pattern(index: usize, source: &str, detail: &str) -> PolicyError {
    let detail = detail.split_whitespace().collect::<Vec<_>>().join(" ");
    invalid(format!(
        "deny_patterns[{index}] {} is not a valid regular expression: {detail}",
        py_repr_str(source)
    ))
}
