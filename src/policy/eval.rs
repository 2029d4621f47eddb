//! Evaluation of a compiled [`Policy`] over one run (docs/compatibility.md §11.4 and §11.5): pure and
//! infallible.
//!
//! One pass over the steps, in order. Each step's arguments and its result JSON are parsed at most
//! once, and only when a rule reads them: most policies read few tools' arguments. Requirements that
//! depend on earlier steps keep their state per `same_arg` value (what was seen, what was voided,
//! whether a candidate already met the requirement) instead of rescanning earlier steps, so a run
//! costs time linear in its steps where 0.4.1 is quadratic.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex_automata::meta::Regex;
use regex_automata::util::syntax;
use serde_json::Value;

use super::read::{Args, arg_at, parse_result, read_number, result_at, typed_eq, value_text};
use super::{ArgPath, Policy, PolicyRun, PolicyStep, Predicate, PredicateOp, Requirement};
use crate::compat::reason::{fmt_g, py_repr, py_repr_str};
use crate::compat::value::py_strip;

/// Terminations that mean the run stopped on an error (require_complete).
static ERROR_TERMINATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::builder()
        .syntax(syntax::Config::new().case_insensitive(true))
        .build(
            r"error|exception|abort|fail|time ?out|timed out|crash|too many|max[_ ]?steps|step cap|step limit|max iterations|iteration limit",
        )
        .ok()
});

#[cfg(test)]
thread_local! {
    /// How many times evaluation read a step's arguments or result JSON, or judged a prerequisite
    /// step. Tests read it to tell a linear pass from one that rescans earlier steps per call, as
    /// 0.4.1 does; per thread, because tests run in parallel and an evaluation stays on its thread.
    pub(super) static STEP_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one step read in test builds; compiles to nothing otherwise.
fn count_step_read() {
    #[cfg(test)]
    STEP_READS.with(|n| n.set(n.get() + 1));
}

/// A step whose arguments and result JSON are parsed on first use.
struct ReadStep<'r, 'a> {
    step: &'r PolicyStep<'a>,
    args: OnceCell<Args>,
    result_json: OnceCell<Option<Value>>,
}

impl ReadStep<'_, '_> {
    fn args(&self) -> &Args {
        self.args.get_or_init(|| Args::parse(self.step.arguments))
    }

    /// The argument at `path`: `Err(())` when the arguments are unreadable, `Ok(None)` when absent.
    fn arg(&self, path: &ArgPath) -> Result<Option<&Value>, ()> {
        count_step_read();
        match self.args() {
            Args::Object(map) => Ok(arg_at(map, &path.parts)),
            Args::Unreadable => Err(()),
        }
    }

    /// The value text of the argument at `path`, `None` when absent or unreadable.
    fn arg_text(&self, path: &ArgPath) -> Option<String> {
        self.arg(path).ok().flatten().map(value_text)
    }

    fn result_json(&self) -> Option<&Value> {
        count_step_read();
        self.result_json
            .get_or_init(|| parse_result(self.step.result))
            .as_ref()
    }
}

/// What a stateful requirement remembers about earlier steps that carry one `same_arg` value.
#[derive(Default)]
struct StatefulState {
    /// The last prerequisite seen at all: (index, tool).
    last_candidate: Option<(usize, String)>,
    /// The last successful invalidating step: (index, tool).
    last_invalidation: Option<(usize, String)>,
    /// The last prerequisite before that invalidation, which it voided.
    voided: Option<(usize, String)>,
    /// Some prerequisite after the last invalidation meets the requirement.
    met_since_invalidation: bool,
    /// The last prerequisite after the last invalidation, with why it does not meet the requirement.
    last_since_invalidation: Option<(usize, String, Option<String>)>,
}

/// Per-requirement memory, keyed by the `same_arg` value text (the empty key without `same_arg`).
enum RequirementState {
    /// Non-stateful: the values for which some earlier prerequisite qualified.
    Plain(HashSet<String>),
    Stateful(HashMap<String, StatefulState>),
}

pub(crate) fn evaluate(policy: &Policy, run: &PolicyRun) -> (bool, String) {
    let mut messages: Vec<String> = Vec::new();
    let steps: Vec<ReadStep> = run
        .steps
        .iter()
        .map(|step| ReadStep {
            step,
            args: OnceCell::new(),
            result_json: OnceCell::new(),
        })
        .collect();

    let mut states: Vec<RequirementState> = policy
        .requires
        .iter()
        .map(|q| {
            if q.is_stateful() {
                RequirementState::Stateful(HashMap::new())
            } else {
                RequirementState::Plain(HashSet::new())
            }
        })
        .collect();
    let mut confirmed_values: HashSet<String> = HashSet::new();

    for s in &steps {
        check_step(policy, run, s, &states, &confirmed_values, &mut messages);
        remember_step(policy, s, &mut states, &mut confirmed_values);
    }

    check_call_caps(policy, &steps, &mut messages);
    if policy.require_complete {
        check_complete(run, &mut messages);
    }
    if let Some(max) = &policy.max_calls
        && (steps.len() as f64) > max.value
    {
        messages.push(format!("{} tool calls > max {}", steps.len(), max.text));
    }

    if messages.is_empty() {
        (false, format!("{} calls within policy", steps.len()))
    } else {
        (true, messages.join("; "))
    }
}

fn not_object(i: usize, tool: &str, arg: &str) -> String {
    format!("step {i}: {tool} arguments are not a JSON object, cannot check {arg}")
}

/// The reason of a denied pattern: the tool, the argument whose value the pattern matches (the
/// first in the call's order; none when the match spans several, or the arguments are not an
/// object), and the pattern as the policy file writes it, so a reader can find it there.
fn denial(policy: &Policy, s: &ReadStep, source: &str) -> String {
    let step = s.step;
    let arg = match s.args() {
        Args::Object(map) => map.iter().find_map(|(name, value)| {
            let text = match value {
                Value::String(text) => std::borrow::Cow::Borrowed(text.as_str()),
                other => std::borrow::Cow::Owned(other.to_string()),
            };
            (policy.deny_patterns.first_match(&text) == Some(source)).then_some(name)
        }),
        Args::Unreadable => None,
    };
    match arg {
        Some(arg) => format!(
            "step {}: {} argument {arg} matches denied pattern '{source}'",
            step.index, step.tool
        ),
        None => format!(
            "step {}: {} arguments match denied pattern '{source}'",
            step.index, step.tool
        ),
    }
}

fn check_step(
    policy: &Policy,
    run: &PolicyRun,
    s: &ReadStep,
    states: &[RequirementState],
    confirmed_values: &HashSet<String>,
    out: &mut Vec<String>,
) {
    let step = s.step;
    let (i, tool) = (step.index, step.tool);

    if let Some(allow) = &policy.allow
        && !allow.contains(tool)
    {
        out.push(format!(
            "step {i}: tool {} not in allowlist",
            py_repr_str(tool)
        ));
    }
    if policy.require_defined_tools
        && let Some(defined) = run.defined_tools
        && !defined.iter().any(|d| d == tool)
    {
        out.push(format!(
            "step {i}: tool {} was not given to the agent (gen_ai.tool.definitions)",
            py_repr_str(tool)
        ));
    }
    if let Some(source) = policy.deny_patterns.first_match(step.arguments) {
        out.push(denial(policy, s, source));
    }
    if let Some(max) = &policy.max_arg_chars {
        let len = step.arguments.chars().count();
        if (len as f64) > max.value {
            out.push(format!("step {i}: arguments {len} chars > {}", max.text));
        }
    }

    for limit in policy.limits.iter().filter(|l| l.tool == tool) {
        let arg = &limit.arg.text;
        match s.arg(&limit.arg) {
            Err(()) => out.push(not_object(i, tool, arg)),
            Ok(None) => {}
            Ok(Some(raw)) => match read_number(raw) {
                None => out.push(format!(
                    "step {i}: {tool}.{arg} {} is not a number",
                    // A non-finite literal reads as null; Python quotes it as the float it is.
                    match raw {
                        Value::Null => {
                            crate::policy::read::non_finite_arg(step.arguments, &limit.arg.parts)
                                .map_or_else(|| py_repr(raw), str::to_string)
                        }
                        _ => py_repr(raw),
                    }
                )),
                Some(n) => {
                    if let Some(max) = limit.max.filter(|max| n > *max) {
                        out.push(format!(
                            "step {i}: {tool}.{arg} {} > max {}",
                            fmt_g(n),
                            fmt_g(max)
                        ));
                    } else if let Some(min) = limit.min.filter(|min| n < *min) {
                        out.push(format!(
                            "step {i}: {tool}.{arg} {} < min {}",
                            fmt_g(n),
                            fmt_g(min)
                        ));
                    }
                }
            },
        }
    }

    if let Some(identity) = &policy.identity
        && identity
            .tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == tool))
    {
        let arg = &identity.arg.text;
        let value = match s.arg(&identity.arg) {
            Ok(v) => v,
            Err(()) => {
                // 0.4.1 only speaks up for a tool-less identity when the argument's name shows in
                // the raw text, a substring test (docs/compatibility.md §20.1 item 15).
                if identity.tools.is_some() || step.arguments.contains(identity.arg.last_part()) {
                    out.push(not_object(i, tool, arg));
                }
                None
            }
        };
        if let Some(value) = value {
            let session = run
                .root
                .and_then(|root| root.attrs.get(&identity.session_attr))
                .filter(|v| !v.is_null());
            match session {
                None => out.push(format!(
                    "step {i}: cannot verify {arg}, root span has no {}",
                    identity.session_attr
                )),
                Some(session) => {
                    let (mine, theirs) = (value_text(value), value_text(session));
                    if mine != theirs {
                        out.push(format!(
                            "step {i}: {tool}.{arg} {} != session {} {}",
                            py_repr_str(&mine),
                            identity.session_attr,
                            py_repr_str(&theirs)
                        ));
                    }
                }
            }
        }
    }

    for rule in policy.values.iter().filter(|v| v.tool == tool) {
        let arg = &rule.arg.text;
        match s.arg(&rule.arg) {
            Err(()) => out.push(not_object(i, tool, arg)),
            Ok(None) => {}
            Ok(Some(v)) => {
                let text = value_text(v);
                if !rule.allowed.contains(&text) {
                    out.push(format!(
                        "step {i}: {tool}.{arg} {} not in allowed values",
                        py_repr_str(&text)
                    ));
                }
            }
        }
    }

    for (q, state) in policy
        .requires
        .iter()
        .zip(states)
        .filter(|(q, _)| q.tool == tool)
    {
        if let Some(message) = check_requirement(q, state, s) {
            out.push(message);
        }
    }

    for rule in policy.required_args.iter().filter(|r| r.tool == tool) {
        let Args::Object(map) = s.args() else {
            let first = rule.args.first().map_or("", |a| a.text.as_str());
            out.push(format!(
                "step {i}: {tool} arguments are not a JSON object, cannot check required {first}"
            ));
            continue;
        };
        for arg in &rule.args {
            if arg_at(map, &arg.parts).is_none_or(is_empty_argument) {
                out.push(format!(
                    "step {i}: {tool} missing required argument {}",
                    arg.text
                ));
            }
        }
    }

    if let Some(c) = &policy.confirmation
        && c.tools.iter().any(|t| t == tool)
        && !step.confirmed
    {
        let (key, scope) = match &c.same_arg {
            None => (String::new(), String::new()),
            Some(same) => match s.arg_text(same) {
                None => {
                    out.push(format!(
                        "step {i}: {tool} has no readable {}, cannot match it to a {}",
                        same.text, c.by
                    ));
                    return;
                }
                Some(text) => {
                    let scope = format!(" for the same {} {}", same.text, py_repr_str(&text));
                    (text, scope)
                }
            },
        };
        if !confirmed_values.contains(&key) {
            out.push(format!(
                "step {i}: {tool} without an earlier successful {}{scope} (or faultgate.confirmed = true on its span)",
                c.by
            ));
        }
    }
}

/// Returns true if and only if a required argument counts as missing: null, a blank string, `[]` or
/// `{}` (0 and false are values).
fn is_empty_argument(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => py_strip(s).is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// The key a step is bound by under a requirement: its `same_arg` value text, the empty key without
/// `same_arg`, `None` when the value is absent or unreadable.
fn binding_key(same_arg: Option<&ArgPath>, s: &ReadStep) -> Option<String> {
    match same_arg {
        None => Some(String::new()),
        Some(path) => s.arg_text(path),
    }
}

fn check_requirement(q: &Requirement, state: &RequirementState, s: &ReadStep) -> Option<String> {
    let (i, tool) = (s.step.index, s.step.tool);
    let after = q.after.join(" or ");
    let Some(key) = binding_key(q.same_arg.as_ref(), s) else {
        let same = q.same_arg.as_ref().map_or("", |p| p.text.as_str());
        return Some(format!(
            "step {i}: {tool} has no readable {same}, cannot match it to {after}"
        ));
    };
    let same_scope = match &q.same_arg {
        Some(path) => format!(" for the same {} {}", path.text, py_repr_str(&key)),
        None => String::new(),
    };
    let returned = match &q.result_contains {
        Some(needle) => format!(" returned {}", py_repr_str(needle)),
        None => String::new(),
    };
    match state {
        RequirementState::Plain(met) => (!met.contains(&key))
            .then(|| format!("step {i}: {tool} before {after}{returned}{same_scope}")),
        RequirementState::Stateful(by_key) => {
            let entry = by_key.get(&key);
            let met = entry.is_some_and(|e| match (&e.last_since_invalidation, q.latest) {
                (Some((_, _, unmet)), true) => unmet.is_none(),
                (_, true) => false,
                (_, false) => e.met_since_invalidation,
            });
            if met {
                return None;
            }
            let successful = if q.success { "a successful " } else { "" };
            let with = if q.result.is_empty() {
                String::new()
            } else {
                let described: Vec<String> = q.result.iter().map(describe_predicate).collect();
                format!(" with {}", described.join(" and "))
            };
            let why = match entry {
                Some(StatefulState {
                    last_since_invalidation: Some((k, cand_tool, unmet)),
                    ..
                }) => {
                    let unmet = unmet.as_deref().unwrap_or_default();
                    if q.latest {
                        format!(" (latest {cand_tool} at step {k}: {unmet})")
                    } else {
                        format!(" (step {k} {cand_tool}: {unmet})")
                    }
                }
                Some(StatefulState {
                    voided: Some((k, stale_tool)),
                    last_invalidation: Some((m, inv_tool)),
                    ..
                }) => format!(" ({stale_tool} at step {k} voided by {inv_tool} at step {m})"),
                _ => String::new(),
            };
            Some(format!(
                "step {i}: {tool} before {successful}{after}{returned}{with}{same_scope}{why}"
            ))
        }
    }
}

fn describe_predicate(p: &Predicate) -> String {
    let path = &p.path.text;
    match &p.op {
        PredicateOp::Equals(v) => format!("{path} == {}", py_repr(v)),
        PredicateOp::Exists(true) => format!("{path} present"),
        PredicateOp::Exists(false) => format!("no {path}"),
        PredicateOp::In(items) => format!("{path} in {}", py_repr(&Value::Array(items.clone()))),
        PredicateOp::NotIn(items) => {
            format!("{path} not in {}", py_repr(&Value::Array(items.clone())))
        }
    }
}

/// Why a prerequisite step does not meet a stateful requirement, `None` when it does.
fn unmet(q: &Requirement, e: &ReadStep) -> Option<String> {
    count_step_read();
    if q.success && !e.step.succeeded {
        return Some("failed".to_string());
    }
    if let Some(needle) = &q.result_contains
        && !e.step.result.contains(needle.as_str())
    {
        return Some(format!("result does not contain {}", py_repr_str(needle)));
    }
    if q.result.is_empty() {
        return None;
    }
    let Some(json) = e.result_json() else {
        return Some("result is not JSON".to_string());
    };
    q.result.iter().find_map(|p| predicate_unmet(p, json))
}

fn predicate_unmet(p: &Predicate, json: &Value) -> Option<String> {
    let path = &p.path.text;
    let got = result_at(json, &p.path.parts);
    let Some(got) = got else {
        return match p.op {
            PredicateOp::Exists(false) => None,
            _ => Some(format!("result has no {path}")),
        };
    };
    match &p.op {
        PredicateOp::Exists(true) => None,
        PredicateOp::Exists(false) => Some(format!("result has {path}")),
        PredicateOp::Equals(want) => (!typed_eq(got, want))
            .then(|| format!("{path} is {}, not {}", py_repr(got), py_repr(want))),
        PredicateOp::In(items) => (!items.iter().any(|w| typed_eq(got, w))).then(|| {
            format!(
                "{path} is {}, not in {}",
                py_repr(got),
                py_repr(&Value::Array(items.clone()))
            )
        }),
        PredicateOp::NotIn(items) => items
            .iter()
            .any(|w| typed_eq(got, w))
            .then(|| format!("{path} is {}", py_repr(got))),
    }
}

/// Records what step `s` means for later steps: as a prerequisite, an invalidation or a confirmation.
fn remember_step(
    policy: &Policy,
    s: &ReadStep,
    states: &mut [RequirementState],
    confirmed_values: &mut HashSet<String>,
) {
    let (i, tool) = (s.step.index, s.step.tool);
    for (q, state) in policy.requires.iter().zip(states.iter_mut()) {
        let is_candidate = q.after.iter().any(|a| a == tool);
        let invalidates = s.step.succeeded && q.invalidated_by.iter().any(|t| t == tool);
        if !is_candidate && !invalidates {
            continue;
        }
        let Some(key) = binding_key(q.same_arg.as_ref(), s) else {
            continue;
        };
        match state {
            RequirementState::Plain(met) => {
                let contains = q
                    .result_contains
                    .as_ref()
                    .is_none_or(|needle| s.step.result.contains(needle.as_str()));
                if is_candidate && contains {
                    met.insert(key);
                }
            }
            RequirementState::Stateful(by_key) => {
                let entry = by_key.entry(key).or_default();
                if invalidates {
                    // Prerequisites before the invalidation are stale; the invalidating step itself
                    // is neither stale nor fresh.
                    entry.voided = entry.last_candidate.clone();
                    entry.last_invalidation = Some((i, tool.to_string()));
                    entry.met_since_invalidation = false;
                    entry.last_since_invalidation = None;
                }
                if is_candidate {
                    entry.last_candidate = Some((i, tool.to_string()));
                    if !invalidates {
                        let why = unmet(q, s);
                        entry.met_since_invalidation |= why.is_none();
                        entry.last_since_invalidation = Some((i, tool.to_string(), why));
                    }
                }
            }
        }
    }
    if let Some(c) = &policy.confirmation
        && c.by == tool
        && s.step.succeeded
        && let Some(key) = binding_key(c.same_arg.as_ref(), s)
    {
        confirmed_values.insert(key);
    }
}

/// max_calls_per_arg: successful calls per argument value, reported once per value at the call that
/// goes over the budget.
fn check_call_caps(policy: &Policy, steps: &[ReadStep], out: &mut Vec<String>) {
    for cap in &policy.max_calls_per_arg {
        let arg = &cap.arg.text;
        let mut calls: HashMap<String, Vec<usize>> = HashMap::new();
        for s in steps {
            let (i, tool) = (s.step.index, s.step.tool);
            if !cap.tools.iter().any(|t| t == tool) || s.step.structural_error {
                continue;
            }
            let Some(key) = s.arg_text(&cap.arg) else {
                out.push(format!(
                    "step {i}: {tool} has no readable {arg}, cannot count it against max {} per {arg}",
                    cap.max
                ));
                continue;
            };
            let indices = calls.entry(key.clone()).or_default();
            indices.push(i);
            if indices.len() as u64 == cap.max + 1 {
                let listed: Vec<String> = indices.iter().map(usize::to_string).collect();
                out.push(format!(
                    "step {i}: {} successful {} calls for {arg} {} > max {} (steps {})",
                    indices.len(),
                    cap.tools.join("/"),
                    py_repr_str(&key),
                    cap.max,
                    listed.join(", ")
                ));
            }
        }
    }
}

fn check_complete(run: &PolicyRun, out: &mut Vec<String>) {
    let Some(root) = &run.root else {
        out.push("run incomplete: no root span".to_string());
        return;
    };
    if py_strip(run.answer).is_empty() {
        out.push("run incomplete: no final answer".to_string());
    }
    if let Some(re) = ERROR_TERMINATION.as_ref()
        && re.is_match(run.termination)
    {
        out.push(format!(
            "run incomplete: terminated {}",
            py_repr_str(run.termination)
        ));
    }
    if let Some(error) = root.span_error {
        out.push(format!("run incomplete: root span error ({error})"));
    }
    if root.end_ns == 0 {
        out.push("run incomplete: root span has no end time".to_string());
    }
}
