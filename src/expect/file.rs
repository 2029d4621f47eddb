//! The expectations file: its JSON form (read by `--expect`, written by `expect import` and
//! `expect draft`) and the compiled expectations the check evaluates. The schema is documented in
//! `docs/formats.md`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::args::{ArgRule, canonical};
use super::read_only::ReadOnly;
use crate::error::display_path;

/// The version of the file format this build reads and writes.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// An expectations file as it is written: one entry per scenario key.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExpectFile {
    /// The format's version: 1, the one this build reads and writes.
    #[serde(default = "format_version")]
    pub version: u64,
    /// Where the expectations came from (the command that wrote them, its inputs and settings), for
    /// the person who reviews the file; the check does not read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    /// Globs of tools that change nothing, besides the default reading verbs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only_tools: Vec<String>,
    /// Globs of tools that change state whatever the other rules say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_changing_tools: Vec<String>,
    /// Whether the default reading verbs (`get_*`, `list_*`, ...) mark tools read-only.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub default_read_only: bool,
    /// The expectations, by scenario key.
    pub scenarios: BTreeMap<String, ScenarioFile>,
}

fn format_version() -> u64 {
    FORMAT_VERSION
}

fn yes() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_true(value: &bool) -> bool {
    *value
}

/// One scenario's expectations as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// `superset` (the default), `subset`, `unordered` or `strict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The calls the run should make.
    #[serde(default)]
    pub calls: Vec<CallFile>,
    /// Calls the run must not make.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<CallFile>,
}

/// One call as written: the tool, its arguments, which of them are compared and how.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CallFile {
    /// The tool's name, compared exactly.
    pub tool: String,
    /// The expected arguments.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
    /// The arguments compared; by default every one of `arguments` (and of `match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<Vec<String>>,
    /// A matcher per argument: `ignore`, `case_insensitive`, `subset`, `{"regex": …}`,
    /// `{"tolerance": …}`.
    #[serde(default, rename = "match", skip_serializing_if = "Map::is_empty")]
    pub matchers: Map<String, Value>,
}

/// How a scenario's expected calls are held against the calls a run made (the modes of agentevals'
/// trajectory match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every expected call is made; other calls are allowed.
    Superset,
    /// Every state-changing call made is expected; expected calls may be missing.
    Subset,
    /// Both.
    Unordered,
    /// Both, with the expected calls made in their order.
    Strict,
}

impl Mode {
    /// The mode named in a file.
    fn parse(name: &str) -> Option<Mode> {
        Some(match name {
            "superset" => Mode::Superset,
            "subset" => Mode::Subset,
            "unordered" => Mode::Unordered,
            "strict" => Mode::Strict,
            _ => return None,
        })
    }

    /// Every expected call must be made.
    pub(crate) fn needs_every_expected(self) -> bool {
        self != Mode::Subset
    }

    /// Every counted call must be expected.
    pub(crate) fn needs_every_made_expected(self) -> bool {
        self != Mode::Superset
    }
}

/// Why an expectations file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ExpectError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", display_path(.path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not an expectations file.
    #[error("{}: not an expectations file: {message}", display_path(.path))]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// One scenario's entry cannot be used.
    #[error("{}: scenario {scenario:?}: {message}", display_path(.path))]
    Scenario {
        /// The file.
        path: PathBuf,
        /// The scenario key.
        scenario: String,
        /// What is wrong.
        message: String,
    },
    /// A benchmark export given to `expect import` carries no expected actions.
    #[error(
        "{}: carries no expected actions (τ²-bench tasks[].evaluation_criteria.actions or τ-bench info.task.actions)",
        display_path(.0)
    )]
    NothingToImport(PathBuf),
    /// The expectations could not be written.
    #[error("cannot write {}: {source}", display_path(.path))]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Why a file's contents cannot be compiled: the scenario at fault, if one is, and what is wrong.
pub(crate) type CompileError = (Option<String>, String);

/// A compiled expected (or forbidden) call.
#[derive(Debug, Clone)]
pub(crate) struct ExpectedCall {
    pub(crate) tool: String,
    /// The compared arguments, each with its rule.
    pub(crate) args: Vec<(String, ArgRule)>,
}

impl ExpectedCall {
    /// Returns true if and only if a call of `tool` with these arguments matches.
    pub(crate) fn matches(&self, tool: &str, arguments: &Value) -> bool {
        tool == self.tool
            && self.args.iter().all(|(name, rule)| {
                arguments
                    .as_object()
                    .and_then(|a| a.get(name))
                    .is_some_and(|made| rule.accepts(made))
            })
    }

    /// The call as reasons show it: the tool and the expected values of its compared arguments (a
    /// pattern has none). Built only for a reason, since most calls are met.
    pub(crate) fn shown(&self) -> String {
        let values: Map<String, Value> = self
            .args
            .iter()
            .filter_map(|(name, rule)| Some((name.clone(), rule.expected()?)))
            .collect();
        if values.is_empty() {
            self.tool.clone()
        } else {
            format!("{} {}", self.tool, canonical(&Value::Object(values)))
        }
    }

    fn compile(mut call: CallFile) -> Result<ExpectedCall, String> {
        if call.tool.is_empty() {
            return Err("a call has an empty \"tool\"".into());
        }
        let names: Vec<String> = match &call.compare {
            Some(names) => names.clone(),
            None => {
                let mut names: Vec<String> = call.arguments.keys().cloned().collect();
                names.extend(
                    call.matchers
                        .keys()
                        .filter(|k| !call.arguments.contains_key(*k))
                        .cloned(),
                );
                names
            }
        };
        if let Some(unknown) = call
            .matchers
            .keys()
            .find(|k| call.compare.is_some() && !names.contains(k))
        {
            return Err(format!(
                "{}: matcher for argument {unknown:?}, which \"compare\" leaves out",
                call.tool
            ));
        }
        let mut args = Vec::with_capacity(names.len());
        for name in names {
            let rule =
                ArgRule::from_matcher(call.matchers.get(&name), call.arguments.remove(&name))
                    .map_err(|e| format!("{}: argument {name:?}: {e}", call.tool))?;
            if let Some(rule) = rule {
                args.push((name, rule));
            }
        }
        Ok(ExpectedCall {
            tool: call.tool,
            args,
        })
    }
}

/// One scenario's compiled expectations.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    pub(crate) mode: Mode,
    pub(crate) calls: Vec<ExpectedCall>,
    pub(crate) forbidden: Vec<ExpectedCall>,
}

impl Scenario {
    /// Returns true if and only if the scenario names `tool` in its expected calls: its calls are
    /// compared even when it is read-only.
    pub(crate) fn names(&self, tool: &str) -> bool {
        self.calls.iter().any(|c| c.tool == tool)
    }

    /// Returns true if and only if no run can break these expectations: `superset` with no expected
    /// and no forbidden call.
    pub(crate) fn expects_nothing(&self) -> bool {
        self.mode == Mode::Superset && self.calls.is_empty() && self.forbidden.is_empty()
    }
}

/// An expectations file as `--expect` first reads it: the settings, and each scenario's entry as its
/// JSON text, in file order. `source` is for the person reviewing the file and is skipped unread.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Outline<'a> {
    #[serde(default = "format_version")]
    version: u64,
    #[serde(default, rename = "source")]
    _source: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    read_only_tools: Vec<String>,
    #[serde(default)]
    state_changing_tools: Vec<String>,
    #[serde(default = "yes")]
    default_read_only: bool,
    #[serde(borrow, deserialize_with = "entries")]
    scenarios: Vec<(String, &'a RawValue)>,
}

/// The `scenarios` object's entries in file order, each value left as its text.
fn entries<'de, D>(deserializer: D) -> Result<Vec<(String, &'de RawValue)>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Entries;
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = Vec<(String, &'de RawValue)>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object of scenario keys")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(entry) = map.next_entry()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_map(Entries)
}

/// Refuses a format version this build does not read.
fn check_version(version: u64) -> Result<(), CompileError> {
    if version == FORMAT_VERSION {
        return Ok(());
    }
    Err((
        None,
        format!("version {version} (this build reads version {FORMAT_VERSION})"),
    ))
}

/// A parse error inside one scenario's entry, without the line and column, which count from the
/// entry's start rather than the file's.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The expectations a run checks against, compiled once.
#[derive(Debug, Clone)]
pub struct Expectations {
    scenarios: HashMap<String, Scenario>,
    pub(crate) read_only: ReadOnly,
}

impl Expectations {
    /// Reads and compiles an expectations file.
    ///
    /// # Errors
    ///
    /// [`ExpectError`] naming the file (and the scenario, for an entry that cannot be used).
    pub fn load(path: &Path) -> Result<Expectations, ExpectError> {
        let bytes = crate::sidefile::read(path).map_err(|source| ExpectError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Expectations::parse(&bytes).map_err(|(scenario, message)| match scenario {
            Some(scenario) => ExpectError::Scenario {
                path: path.to_path_buf(),
                scenario,
                message,
            },
            None => ExpectError::Syntax {
                path: path.to_path_buf(),
                message,
            },
        })
    }

    /// Parses and compiles the text of an expectations file; the error names the scenario, if one is
    /// at fault, and what is wrong.
    pub(crate) fn parse(text: &[u8]) -> Result<Expectations, CompileError> {
        // Read in two steps: the file's outline with each scenario's entry left as its text, then
        // the entries parsed and compiled in parallel. A file drafted from a large run holds
        // hundreds of thousands of entries, and reading them one by one would keep every core but
        // one idle before the run starts.
        let outline: Outline<'_> =
            serde_json::from_slice(text).map_err(|e| (None, e.to_string()))?;
        check_version(outline.version)?;
        let read_only = ReadOnly::new(
            outline.read_only_tools,
            outline.state_changing_tools,
            outline.default_read_only,
        );
        let compiled: Vec<Result<(String, Scenario), CompileError>> = outline
            .scenarios
            .into_par_iter()
            .map(|(key, text)| match serde_json::from_str(text.get()) {
                Ok(entry) => compile_scenario(key, entry),
                Err(e) => Err((Some(key), without_position(&e))),
            })
            .collect();
        Expectations::gather(compiled, read_only)
    }

    /// The compiled scenarios, in the order they were read, as one set of expectations; the error
    /// is the first scenario's that could not be compiled. A key given twice keeps its last entry,
    /// as a JSON object read into a map does.
    fn gather(
        compiled: Vec<Result<(String, Scenario), CompileError>>,
        read_only: ReadOnly,
    ) -> Result<Expectations, CompileError> {
        let mut scenarios = HashMap::with_capacity(compiled.len());
        for scenario in compiled {
            let (key, scenario) = scenario?;
            scenarios.insert(key, scenario);
        }
        Ok(Expectations {
            scenarios,
            read_only,
        })
    }

    /// The expectations of a scenario key; `None` when the file has none for it.
    pub(crate) fn scenario(&self, key: &str) -> Option<&Scenario> {
        self.scenarios.get(key)
    }
}

/// One scenario's entry compiled; the error names the scenario.
fn compile_scenario(key: String, entry: ScenarioFile) -> Result<(String, Scenario), CompileError> {
    let fail = |message: String| (Some(key.clone()), message);
    let mode = match entry.mode.as_deref() {
        None => Mode::Superset,
        Some(name) => Mode::parse(name).ok_or_else(|| {
            fail(format!(
                "unknown mode {name:?} (superset, subset, unordered or strict)"
            ))
        })?,
    };
    let compile = |calls: Vec<CallFile>| -> Result<Vec<ExpectedCall>, CompileError> {
        calls
            .into_iter()
            .map(|c| ExpectedCall::compile(c).map_err(fail))
            .collect()
    };
    let calls = compile(entry.calls)?;
    let forbidden = compile(entry.forbidden)?;
    Ok((
        key,
        Scenario {
            mode,
            calls,
            forbidden,
        },
    ))
}

impl ExpectFile {
    /// Writes the file as indented JSON with a final newline, whole or not at all (written beside its
    /// place, then renamed).
    ///
    /// # Errors
    ///
    /// [`ExpectError::Write`] naming the file.
    pub fn write(&self, path: &Path) -> Result<(), ExpectError> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        crate::output::write_atomic(path, text.as_bytes()).map_err(|source| ExpectError::Write {
            path: path.to_path_buf(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(text: &str) -> Result<Expectations, CompileError> {
        Expectations::parse(text.as_bytes())
    }

    #[test]
    fn an_unknown_mode_names_the_scenario() {
        let err = compile(r#"{"scenarios": {"t-1": {"mode": "exact", "calls": []}}}"#).unwrap_err();
        assert_eq!(err.0.as_deref(), Some("t-1"));
        assert!(err.1.contains("unknown mode \"exact\""), "{}", err.1);
    }

    #[test]
    fn a_matcher_outside_compare_is_refused() {
        let err = compile(
            r#"{"scenarios": {"t": {"calls": [{"tool": "pay", "arguments": {"a": 1},
                "compare": ["a"], "match": {"b": "ignore"}}]}}}"#,
        )
        .unwrap_err();
        assert!(err.1.contains("\"compare\" leaves out"), "{}", err.1);
    }

    #[test]
    fn compare_limits_the_arguments_held_against_the_call() {
        let e = compile(
            r#"{"scenarios": {"t": {"calls": [{"tool": "pay",
                "arguments": {"user": "u1", "amount": 10, "note": "x"}, "compare": ["user", "amount"]}]}}}"#,
        )
        .unwrap();
        let call = &e.scenario("t").unwrap().calls[0];
        assert!(call.matches(
            "pay",
            &serde_json::json!({"amount": 10.0, "user": "u1", "note": "y"})
        ));
        assert!(!call.matches("pay", &serde_json::json!({"amount": 11, "user": "u1"})));
        assert!(!call.matches("refund", &serde_json::json!({"amount": 10, "user": "u1"})));
        assert_eq!(call.shown(), r#"pay {"amount":10,"user":"u1"}"#);
    }

    #[test]
    fn another_version_is_refused() {
        let err = compile(r#"{"version": 2, "scenarios": {}}"#).unwrap_err();
        assert!(err.1.contains("version 2"));
    }
}
