//! The expectations file: its JSON form (read by `--expect`, written by `expect import` and
//! `expect draft`) and the compiled expectations the check evaluates. The schema is documented in
//! `docs/formats.md`.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::args::{ArgRule, canonical};
use super::read_only::ReadOnly;
use crate::error::display_path;
use crate::ingest::source::Source;

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
    /// A trace file of the runs a draft reads cannot be used.
    #[error(transparent)]
    Input(#[from] crate::error::InputError),
    /// A draft's temporary file (in `$TMPDIR`) could not be written or read back.
    #[error("cannot use a temporary file of the draft (in $TMPDIR): {0}")]
    Temporary(std::io::Error),
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

    /// Returns true if and only if a call holds an argument matched by a regular expression.
    fn has_pattern(&self) -> bool {
        self.calls.iter().chain(&self.forbidden).any(|call| {
            call.args
                .iter()
                .any(|(_, rule)| matches!(rule, ArgRule::Regex(_)))
        })
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
    scenarios: Vec<(Key<'a>, &'a RawValue)>,
}

/// A scenario key as the file writes it: borrowed from the text, or decoded when it holds an escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a scenario key")
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }

            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// The `scenarios` object's entries in file order, each value left as its text.
fn entries<'de, D>(deserializer: D) -> Result<Vec<(Key<'de>, &'de RawValue)>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Entries;
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = Vec<(Key<'de>, &'de RawValue)>;

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

/// Where `part`, a slice of `whole`, starts in it.
fn offset_in(whole: &[u8], part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// The hasher of scenario keys: seeded, so that a run looks keys up the same way every time.
fn key_hash(key: &str) -> u64 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::with_seed(0x6578_7065_6374).hash_one(key)
}

/// The bucket of a key hash: its top `bits` bits.
fn bucket_of(hash: u64, bits: u32) -> u64 {
    hash >> (64 - bits)
}

/// Where one scenario's key and entry are.
#[derive(Debug)]
struct Slot {
    hash: u64,
    key: KeyAt,
    entry: Range<usize>,
}

/// A scenario key: its place in the text, or the key itself when the text escapes a character of it.
#[derive(Debug)]
enum KeyAt {
    Text(Range<usize>),
    Decoded(Box<str>),
}

/// The expectations a run checks against.
///
/// They hold the file's text (mapped, not copied, when the file is large) and, per scenario, where
/// its key and entry are: about 50 bytes a scenario beside the file's pages, which the kernel may
/// drop and read again, and not a compiled copy of every entry. A file drafted from a run of a
/// million traces has a million entries, and compiled they took eight times the file's size. Each
/// entry is compiled once when the file is loaded, so that a bad one stops the run before it starts,
/// and again when a trace of its scenario is checked; an entry holding a regular expression is kept
/// compiled instead, since building the expression is what costs.
#[derive(Clone)]
pub struct Expectations {
    text: Arc<Source>,
    /// Sorted by key hash, then file order.
    slots: Arc<Vec<Slot>>,
    /// Where the slots of each value of their hash's top `bucket_bits` bits start, and one past the
    /// end. There are about as many buckets as slots, so a lookup reads one offset and one slot: a
    /// binary search over a million slots missed the cache at every step and cost more than the
    /// check's comparison.
    buckets: Arc<Vec<u32>>,
    bucket_bits: u32,
    /// The compiled scenarios with a regular expression, by slot.
    kept: Arc<HashMap<usize, Scenario>>,
    pub(crate) read_only: ReadOnly,
}

impl std::fmt::Debug for Expectations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expectations")
            .field("scenarios", &self.slots.len())
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

impl Expectations {
    /// Reads and compiles an expectations file.
    ///
    /// # Errors
    ///
    /// [`ExpectError`] naming the file (and the scenario, for an entry that cannot be used).
    pub fn load(path: &Path) -> Result<Expectations, ExpectError> {
        let read = |source: std::io::Error| ExpectError::Read {
            path: path.to_path_buf(),
            source,
        };
        // Checked before opening, since opening a FIFO blocks until a writer appears.
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() {
            return Err(read(std::io::Error::other(format!(
                "not a regular file ({})",
                crate::sidefile::special_kind(&meta)
            ))));
        }
        let text = Source::open(path).map_err(read)?;
        Expectations::parse(text).map_err(|(scenario, message)| match scenario {
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

    /// Parses and compiles the text of an expectations file; the error names the first scenario in
    /// file order that is at fault, if one is, and what is wrong.
    pub(crate) fn parse(text: Source) -> Result<Expectations, CompileError> {
        let bytes: &[u8] = &text;
        let outline: Outline<'_> =
            serde_json::from_slice(bytes).map_err(|e| (None, e.to_string()))?;
        check_version(outline.version)?;
        let read_only = ReadOnly::new(
            outline.read_only_tools,
            outline.state_changing_tools,
            outline.default_read_only,
        );
        // Every entry compiled on every core, each dropped on the thread that built it; only those
        // holding a regular expression are kept, by where their entry starts.
        let entries = outline.scenarios;
        let compiled: Vec<Result<Option<(usize, Scenario)>, CompileError>> = entries
            .par_iter()
            .map(|(key, entry)| match compile_entry(entry.get()) {
                Ok(scenario) if scenario.has_pattern() => {
                    Ok(Some((offset_in(bytes, entry.get()), scenario)))
                }
                Ok(_) => Ok(None),
                Err(message) => Err((Some(key.0.to_string()), message)),
            })
            .collect();
        let mut kept = HashMap::new();
        for scenario in compiled {
            if let Some((at, scenario)) = scenario? {
                kept.insert(at, scenario);
            }
        }
        let mut slots: Vec<Slot> = entries
            .iter()
            .map(|(key, entry)| {
                let entry_at = offset_in(bytes, entry.get());
                Slot {
                    hash: key_hash(&key.0),
                    key: match &key.0 {
                        Cow::Borrowed(k) => {
                            let at = offset_in(bytes, k);
                            KeyAt::Text(at..at + k.len())
                        }
                        Cow::Owned(k) => KeyAt::Decoded(k.as_str().into()),
                    },
                    entry: entry_at..entry_at + entry.get().len(),
                }
            })
            .collect();
        // Stable: a key given twice keeps its entries in file order, and the lookup takes the last.
        slots.sort_by_key(|slot| slot.hash);
        drop(entries);
        if u32::try_from(slots.len()).is_err() {
            return Err((None, "more than 4 billion scenarios".to_string()));
        }
        // 4 bytes of offsets per slot at most: one bucket per slot, rounded down to a power of two.
        let bucket_bits = slots.len().max(1).ilog2().clamp(1, 30);
        let mut buckets = Vec::with_capacity((1 << bucket_bits) + 1);
        let mut at = 0;
        for bucket in 0..=1u64 << bucket_bits {
            while at < slots.len() && bucket_of(slots[at].hash, bucket_bits) < bucket {
                at += 1;
            }
            #[allow(clippy::cast_possible_truncation)] // checked above: fewer than 2^32 slots
            buckets.push(at as u32);
        }
        Ok(Expectations {
            text: Arc::new(text),
            slots: Arc::new(slots),
            buckets: Arc::new(buckets),
            bucket_bits,
            kept: Arc::new(kept),
            read_only,
        })
    }

    /// The expectations of a file's text held in memory.
    #[cfg(test)]
    pub(crate) fn from_text(text: &str) -> Result<Expectations, CompileError> {
        Expectations::parse(Source::Read(text.as_bytes().to_vec()))
    }

    /// The expectations of a scenario key, compiled; `None` when the file has none for it. A key the
    /// file gives twice has its last entry, as a JSON object read into a map does.
    pub(crate) fn scenario(&self, key: &str) -> Option<Cow<'_, Scenario>> {
        let hash = key_hash(key);
        #[allow(clippy::cast_possible_truncation)] // fewer than 2^30 buckets
        let bucket = bucket_of(hash, self.bucket_bits) as usize;
        let bucket = &self.slots[self.buckets[bucket] as usize..self.buckets[bucket + 1] as usize];
        let text: &[u8] = &self.text;
        // The last of equal keys: slots of one hash keep file order.
        let slot = bucket.iter().rev().find(|slot| {
            slot.hash == hash
                && match &slot.key {
                    KeyAt::Text(range) => &text[range.clone()] == key.as_bytes(),
                    KeyAt::Decoded(k) => &**k == key,
                }
        })?;
        if let Some(scenario) = self.kept.get(&slot.entry.start) {
            return Some(Cow::Borrowed(scenario));
        }
        let entry = std::str::from_utf8(&text[slot.entry.clone()]).ok()?;
        // Compiled without error when the file was loaded, from these same bytes.
        compile_entry(entry).ok().map(Cow::Owned)
    }
}

/// One scenario's entry, as its JSON text, compiled.
fn compile_entry(text: &str) -> Result<Scenario, String> {
    let entry: ScenarioFile = serde_json::from_str(text).map_err(|e| without_position(&e))?;
    let mode = match entry.mode.as_deref() {
        None => Mode::Superset,
        Some(name) => Mode::parse(name).ok_or_else(|| {
            format!("unknown mode {name:?} (superset, subset, unordered or strict)")
        })?,
    };
    let compile = |calls: Vec<CallFile>| -> Result<Vec<ExpectedCall>, String> {
        calls.into_iter().map(ExpectedCall::compile).collect()
    };
    Ok(Scenario {
        mode,
        calls: compile(entry.calls)?,
        forbidden: compile(entry.forbidden)?,
    })
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
        Expectations::from_text(text)
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
    fn a_key_given_twice_keeps_its_last_entry_and_escaped_keys_are_found() {
        let e = compile(
            r#"{"scenarios": {"t-1": {"calls": [{"tool": "a"}]}, "t\u002d2": {"calls": [{"tool": "b"}]},
                "t-1": {"calls": [{"tool": "c"}]}}}"#,
        )
        .unwrap();
        assert_eq!(e.scenario("t-1").unwrap().calls[0].tool, "c");
        assert_eq!(e.scenario("t-2").unwrap().calls[0].tool, "b");
        assert!(e.scenario("t-3").is_none());
        assert!(e.scenario("t\\u002d2").is_none());
    }

    #[test]
    fn every_key_of_a_large_file_is_found_in_its_bucket() {
        // Buckets hold several slots and some none.
        let n = 100_000;
        let mut text = String::from(r#"{"scenarios": {"#);
        for i in 0..n {
            text.push_str(&format!(r#""k{i}": {{"calls": [{{"tool": "t{i}"}}]}},"#));
        }
        text.push_str(r#""last": {}}}"#);
        let e = compile(&text).unwrap();
        for i in 0..n {
            assert_eq!(
                e.scenario(&format!("k{i}")).unwrap().calls[0].tool,
                format!("t{i}")
            );
            assert!(e.scenario(&format!("k{i}x")).is_none());
        }
        assert!(e.scenario("last").unwrap().calls.is_empty());
    }

    #[test]
    fn a_bad_entry_is_named_even_among_many_good_ones() {
        let mut text = String::from(r#"{"scenarios": {"#);
        for i in 0..500 {
            text.push_str(&format!(
                r#""s{i}": {{"calls": [{{"tool": "pay", "arguments": {{"n": {i}}}}}]}},"#
            ));
        }
        text.push_str(r#""bad": {"calls": [{"tool": "pay", "arguments": {"n": 1}, "match": {"n": {"regex": "("}}}]}}}"#);
        let err = compile(&text).unwrap_err();
        assert_eq!(err.0.as_deref(), Some("bad"));
        let good = compile(&text.replace(r#"{"regex": "("}"#, r#"{"regex": "^[0-9]$"}"#)).unwrap();
        let bad = good.scenario("bad").unwrap();
        assert!(bad.calls[0].matches("pay", &serde_json::json!({"n": 7})));
        assert!(!bad.calls[0].matches("pay", &serde_json::json!({"n": 17})));
        assert_eq!(
            good.scenario("s499").unwrap().calls[0].shown(),
            r#"pay {"n":499}"#
        );
    }

    #[test]
    fn another_version_is_refused() {
        let err = compile(r#"{"version": 2, "scenarios": {}}"#).unwrap_err();
        assert!(err.1.contains("version 2"));
    }
}
