//! The tool-use policy check: what was the agent allowed to do?
//!
//! A policy file goes through three stages. `compile` parses and validates the JSON document once
//! (unknown keys, wrong types, non-finite numbers and regexes Rust cannot compile are rejected with a
//! message naming the key path); `eval` then runs the compiled [`Policy`] over one run at a time and is
//! pure and infallible; `read` holds the argument and result reading rules both share. This module owns
//! the borrowed run view ([`PolicyRun`]) that the step table hands in; it knows nothing of trace formats
//! or of how a step's success and structural error were derived.

mod compile;
mod eval;
mod read;

use std::collections::HashSet;
use std::path::Path;

use regex_automata::meta::Regex;
use serde_json::Value;

/// One tool call of a run, as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct PolicyStep<'a> {
    /// 1-based step number.
    pub index: usize,
    /// The tool the step called.
    pub tool: &'a str,
    /// Raw arguments text.
    pub arguments: &'a str,
    /// Raw result text.
    pub result: &'a str,
    /// The result is a structural error.
    pub structural_error: bool,
    /// The result is not a structural error and the step's tool span carries no span error.
    pub succeeded: bool,
    /// The step's span has `faultgate.confirmed` equal to true, `"true"` or `"True"`.
    pub confirmed: bool,
}

/// One run (trace) to evaluate.
#[derive(Debug, Clone, Copy)]
pub struct PolicyRun<'a> {
    /// The run's tool calls, in step order.
    pub steps: &'a [PolicyStep<'a>],
    /// `None` when the trace has no root span.
    pub root: Option<PolicyRoot<'a>>,
    /// Untrimmed final answer.
    pub answer: &'a str,
    /// `str()` of the root's `faultgate.termination`; empty when absent.
    pub termination: &'a str,
    /// The tools the agent was given (`gen_ai.tool.definitions` on its spans); `None` when the trace
    /// records no definitions, or the policy does not read them.
    pub defined_tools: Option<&'a [String]>,
}

/// The root span of a run.
#[derive(Debug, Clone, Copy)]
pub struct PolicyRoot<'a> {
    /// Decoded root span attributes.
    pub attrs: &'a serde_json::Map<String, Value>,
    /// `Span status error: Code 2` or `Span error: X`, `None` when the root is clean.
    pub span_error: Option<&'a str>,
    /// End time of the root span in nanoseconds since the Unix epoch.
    pub end_ns: u64,
}

/// A policy file that cannot be used. The text is the message printed after `faultgate: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The file cannot be read; Python's OS error text, e.g.
    /// `[Errno 2] No such file or directory: 'p.json'`.
    #[error("{0}")]
    Io(String),
    /// The file is not JSON.
    #[error("cannot parse {path}: {message}")]
    Parse {
        /// The policy file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The document is JSON but not a valid policy; the text names the key path.
    #[error("policy: {0}")]
    Invalid(String),
    /// The denied patterns together exceed the automaton's size limit.
    #[error("policy {path}: {detail}")]
    TooLarge {
        /// The policy file.
        path: String,
        /// The automaton builder's message.
        detail: String,
    },
}

fn shown_for_error(path: &Path) -> String {
    crate::error::display_path(path)
}

/// A dotted argument path (`refund.amount`), kept with its source text for messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArgPath {
    pub(crate) text: String,
    pub(crate) parts: Vec<String>,
}

impl ArgPath {
    pub(crate) fn new(text: &str) -> ArgPath {
        ArgPath {
            text: text.to_string(),
            parts: text.split('.').map(str::to_string).collect(),
        }
    }

    /// The last dotted segment, which identity's unreadable-argument rule looks for in the raw text.
    pub(crate) fn last_part(&self) -> &str {
        self.parts.last().map_or("", String::as_str)
    }
}

/// A numeric bound (`max_calls`, `max_arg_chars`) with the text Python prints for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bound {
    pub(crate) value: f64,
    pub(crate) text: String,
}

/// The denied patterns, compiled together as one multi-pattern automaton: 100k patterns cost one
/// automaton under a size limit, not 100k regexes.
#[derive(Debug, Clone)]
pub(crate) struct DenyPatterns {
    /// Each pattern as written, in file order (pattern id = index).
    pub(crate) sources: Vec<String>,
    /// `None` when the list is empty.
    pub(crate) regex: Option<Regex>,
}

impl DenyPatterns {
    /// The source of the first pattern, in file order, that matches anywhere in `text`.
    pub(crate) fn first_match(&self, text: &str) -> Option<&str> {
        let regex = self.regex.as_ref()?;
        let input = regex_automata::Input::new(text);
        // The common case, no match, stops at the first pass; only a hit pays for the overlapping scan.
        if !regex.is_match(input.clone()) {
            return None;
        }
        let mut hits = regex_automata::PatternSet::new(regex.pattern_len());
        regex.which_overlapping_matches(&input, &mut hits);
        let first = hits.iter().next()?;
        self.sources.get(first.as_usize()).map(String::as_str)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limit {
    pub(crate) tool: String,
    pub(crate) arg: ArgPath,
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Identity {
    pub(crate) arg: ArgPath,
    pub(crate) session_attr: String,
    /// `None` checks every tool; an empty list checks none.
    pub(crate) tools: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PredicateOp {
    Equals(Value),
    In(Vec<Value>),
    NotIn(Vec<Value>),
    Exists(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Predicate {
    pub(crate) path: ArgPath,
    pub(crate) op: PredicateOp,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Requirement {
    pub(crate) tool: String,
    pub(crate) after: Vec<String>,
    pub(crate) result_contains: Option<String>,
    pub(crate) same_arg: Option<ArgPath>,
    pub(crate) success: bool,
    pub(crate) result: Vec<Predicate>,
    pub(crate) latest: bool,
    pub(crate) invalidated_by: Vec<String>,
}

impl Requirement {
    /// Returns true if and only if the requirement looks at the prerequisite's outcome or recency,
    /// which 0.4.1 evaluates with the stateful rules (docs/compatibility.md §11.5).
    pub(crate) fn is_stateful(&self) -> bool {
        self.success || !self.result.is_empty() || self.latest || !self.invalidated_by.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallCap {
    pub(crate) tools: Vec<String>,
    pub(crate) arg: ArgPath,
    pub(crate) max: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AllowedValues {
    pub(crate) tool: String,
    pub(crate) arg: ArgPath,
    pub(crate) allowed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequiredArgs {
    pub(crate) tool: String,
    pub(crate) args: Vec<ArgPath>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Confirmation {
    pub(crate) tools: Vec<String>,
    pub(crate) by: String,
    pub(crate) same_arg: Option<ArgPath>,
}

/// A validated policy, ready to evaluate runs.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Top-level keys present in the file, for the precheck summary.
    pub(crate) keys: Vec<String>,
    /// Every key used in any requirement object.
    pub(crate) requirement_keys: Vec<String>,
    pub(crate) allow: Option<HashSet<String>>,
    pub(crate) max_calls: Option<Bound>,
    pub(crate) max_arg_chars: Option<Bound>,
    pub(crate) deny_patterns: DenyPatterns,
    pub(crate) limits: Vec<Limit>,
    pub(crate) identity: Option<Identity>,
    pub(crate) requires: Vec<Requirement>,
    pub(crate) max_calls_per_arg: Vec<CallCap>,
    pub(crate) values: Vec<AllowedValues>,
    pub(crate) required_args: Vec<RequiredArgs>,
    pub(crate) confirmation: Option<Confirmation>,
    pub(crate) require_complete: bool,
    pub(crate) require_defined_tools: bool,
}

impl Default for Policy {
    /// The policy `check` runs without `--policy`: only the built-in denied patterns.
    fn default() -> Policy {
        compile::compile(&Value::Object(serde_json::Map::new()))
            .unwrap_or_else(|_| unreachable!("the empty policy is valid"))
    }
}

impl Policy {
    /// Reads, parses and validates a policy file.
    pub fn from_path(path: &Path) -> Result<Policy, PolicyError> {
        let shown = crate::error::display_path(path);
        let bytes =
            crate::sidefile::read(path).map_err(|e| PolicyError::Io(os_error_text(&e, &shown)))?;
        let text = String::from_utf8(bytes).map_err(|e| PolicyError::Parse {
            path: shown.clone(),
            message: format!("not UTF-8 text ({e})"),
        })?;
        let document = read::parse_document(&text).map_err(|message| PolicyError::Parse {
            path: shown,
            message,
        })?;
        compile::compile(&document).map_err(|e| match e {
            PolicyError::TooLarge { detail, .. } => PolicyError::TooLarge {
                path: shown_for_error(path),
                detail,
            },
            other => other,
        })
    }

    /// Parses and validates a policy document given as JSON text; a parse error names `policy`.
    pub fn from_json_text(text: &str) -> Result<Policy, PolicyError> {
        let document = read::parse_document(text).map_err(|message| PolicyError::Parse {
            path: "policy".to_string(),
            message,
        })?;
        compile::compile(&document)
    }

    /// Returns true if and only if the policy reads the tools the agent was given
    /// (`require_defined_tools`).
    pub fn uses_tool_definitions(&self) -> bool {
        self.require_defined_tools
    }

    /// Returns true if and only if the policy reads the root span's attributes (only `identity` does).
    pub fn uses_identity(&self) -> bool {
        self.identity.is_some()
    }

    /// Evaluates one run: (detected, reason). The confidence is always 1.0.
    pub fn evaluate(&self, run: &PolicyRun) -> (bool, String) {
        eval::evaluate(self, run)
    }

    /// The precheck `policy keys:` text: the top-level keys sorted, `requires` followed by the sorted
    /// union of the keys its entries use, `(none)` for an empty policy.
    pub fn key_summary(&self) -> String {
        if self.keys.is_empty() {
            return "(none)".to_string();
        }
        let mut keys = self.keys.clone();
        keys.sort();
        keys.iter()
            .map(|k| {
                if k == "requires" && !self.requires.is_empty() {
                    format!("requires ({})", self.requirement_keys.join(", "))
                } else {
                    k.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Returns true if and only if some requirement reads tool results as JSON (a non-empty `result`
    /// or `latest: true`), so precheck warns when no result is JSON.
    pub fn needs_json_results(&self) -> bool {
        self.requires
            .iter()
            .any(|q| !q.result.is_empty() || q.latest)
    }
}

/// Python's text for an OS error: `[Errno 2] No such file or directory: 'p.json'`.
fn os_error_text(error: &std::io::Error, shown_path: &str) -> String {
    let full = error.to_string();
    let description = match full.rfind(" (os error ") {
        Some(at) => &full[..at],
        None => full.as_str(),
    };
    let quoted = crate::compat::reason::py_repr_str(shown_path);
    match error.raw_os_error() {
        Some(code) => format!("[Errno {code}] {description}: {quoted}"),
        None => format!("{description}: {quoted}"),
    }
}

#[cfg(test)]
mod tests;
