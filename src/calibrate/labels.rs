//! Label files: what a human saw in each trace, per check, read from JSON, JSON lines or CSV.
//!
//! A label says "for this key, this check should (not) fire". A key is a trace id or a scenario key; the
//! builder in `calibrate` decides which one matches. This module only reads and validates files.
//!
//! ## Formats
//!
//! The format comes from the extension (`.csv`; `.jsonl` / `.ndjson`), else from the content: a first
//! line starting with `key,` is CSV, a document that parses as one JSON object is the object form, and
//! anything else is read as JSON lines.
//!
//! - **Object form**: `{"r-0208": {"search_loop": true, "abstention": false, "split": "test"}, ...}`.
//!   Every member of a key's object is a check name with a boolean, except `split`, a string.
//! - **JSON lines**: one object per non-blank line, either a single label
//!   `{"key": "r-0208", "check": "search_loop", "label": true, "split": "test"}` or a key's labels
//!   flattened `{"key": "r-0208", "search_loop": true, "abstention": false, "split": "test"}` (a line is
//!   the first shape when it has a `check` member). `split` is optional in both.
//! - **CSV**: header `key,check,label` or `key,check,label,split` (in that order); `label` is one of
//!   `true false 1 0 yes no` in any case. Fields are trimmed; double-quoted fields may hold commas and
//!   doubled quotes, not line breaks.
//!
//! ## Duplicates
//!
//! The same key and check labelled twice with the same value counts once. Conflicting values are an
//! error naming both places (a line, or an entry of the object form, counted from 1). A key given two
//! different splits is an error the same way. Repeated members of one JSON object are seen too (the
//! object form is read member by member, not through a map that would keep only the last one).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::error::{InputError, display_path};

/// The member naming a held-out split; every other member of a key's labels is a check.
pub(crate) const SPLIT_FIELD: &str = "split";

/// Where a label came from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A line of a CSV or JSON lines file, from 1.
    Line(usize),
    /// A top-level entry of the object form, from 1.
    Entry(usize),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Entry(n) => write!(f, "entry {n}"),
        }
    }
}

/// One human verdict: for `key`, `check` should fire iff `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The trace id or scenario key the label is about.
    pub key: String,
    /// The check the label judges (a name from the registry).
    pub check: String,
    /// True when the check should fire on the key's traces.
    pub value: bool,
    /// Where in the file the label was given.
    pub location: Location,
}

/// The labels of one file, duplicates removed, in file order, with each key's split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSet {
    /// The labels in file order, each (key, check) once.
    pub labels: Vec<Label>,
    /// Split name per key, for the keys that have one.
    pub splits: HashMap<String, String>,
    /// Labels given twice with the same value (counted once).
    pub duplicates: usize,
}

/// A label file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// The label file does not exist.
    #[error("no such file: {}", display_path(.0))]
    NotFound(PathBuf),
    /// The label file exists but could not be read.
    #[error("cannot read {}: {source}", display_path(.path))]
    Read {
        /// The label file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// One line or entry is not a usable label.
    #[error("{}: {at}: {message}", display_path(.path))]
    Invalid {
        /// The label file.
        path: PathBuf,
        /// The line or entry at fault.
        at: Location,
        /// What is wrong with it.
        message: String,
    },
    /// The file is not CSV, JSON lines or the object form as a whole.
    #[error("{}: {message}", display_path(.path))]
    Malformed {
        /// The label file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Two places give different values for one label or split.
    #[error("{0}")]
    Conflict(Box<Conflict>),
    /// The file holds no label at all.
    #[error("no labels in {}", display_path(.0))]
    Empty(PathBuf),
}

/// Two places in one file that say different things about the same label or split.
#[derive(Debug)]
pub struct Conflict {
    pub path: PathBuf,
    /// What is in conflict: `labels for KEY / CHECK` or `splits for KEY`.
    pub subject: String,
    pub first: Location,
    pub first_value: String,
    pub second: Location,
    pub second_value: String,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: conflicting {}: {} at {}, {} at {}",
            display_path(&self.path),
            self.subject,
            self.first_value,
            self.first,
            self.second_value,
            self.second
        )
    }
}

impl From<LabelError> for InputError {
    fn from(err: LabelError) -> Self {
        match err {
            LabelError::NotFound(path) => InputError::NotFound(path),
            LabelError::Read { path, source } => InputError::Read { path, source },
            other => InputError::Usage(other.to_string()),
        }
    }
}

/// Reads a label file in any of the three formats.
///
/// # Errors
/// A missing or unreadable file, a syntax error, a label that is not a boolean, conflicting
/// duplicates, or a file without labels; each message names the file and the line or entry.
pub fn read_labels(path: &Path) -> Result<LabelSet, LabelError> {
    let text = crate::sidefile::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => LabelError::NotFound(path.to_path_buf()),
        _ => LabelError::Read {
            path: path.to_path_buf(),
            source,
        },
    })?;
    parse_labels(path, &text)
}

/// Parses label text; `path` picks the format by extension and names the file in errors.
///
/// # Errors
/// As [`read_labels`], except for reading.
pub(crate) fn parse_labels(path: &Path, text: &str) -> Result<LabelSet, LabelError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let mut sink = Sink::new(path);
    match extension.as_deref() {
        Some("csv") => read_csv(text, &mut sink)?,
        Some("jsonl" | "ndjson") => read_json_lines(text, &mut sink)?,
        _ if first_line(text).starts_with("key,") => read_csv(text, &mut sink)?,
        _ if first_line_is_an_object(text) => match serde_json::from_str::<Members>(text) {
            Ok(members) if !looks_like_one_record(&members) => read_object(members, &mut sink)?,
            _ => read_json_lines(text, &mut sink)?,
        },
        _ => {
            let members =
                serde_json::from_str::<Members>(text).map_err(|e| LabelError::Invalid {
                    path: path.to_path_buf(),
                    at: Location::Line(e.line()),
                    message: format!("not a JSON object of {{key: {{check: true | false}}}} ({e})"),
                })?;
            read_object(members, &mut sink)?;
        }
    }
    sink.finish()
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// Returns true if and only if the first non-blank line is a JSON object on its own, as in JSON lines
/// (a pretty-printed object form opens with a lone `{`).
fn first_line_is_an_object(text: &str) -> bool {
    serde_json::from_str::<Members>(first_line(text)).is_ok()
}

/// A single JSON-lines record also parses as a whole document; its string `key` member gives it away
/// (in the object form every member's value is an object).
fn looks_like_one_record(members: &Members) -> bool {
    members
        .0
        .iter()
        .any(|(name, value)| name == "key" && value.is_string())
}

fn read_object(members: Members, sink: &mut Sink) -> Result<(), LabelError> {
    for (index, (key, value)) in members.0.into_iter().enumerate() {
        let at = Location::Entry(index + 1);
        let inner: Members = serde_json::from_value(value).map_err(|_| {
            sink.invalid(
                at,
                format!("labels of {key} must be an object of check: true | false"),
            )
        })?;
        sink.add_key_labels(&key, inner, at)?;
    }
    Ok(())
}

fn read_json_lines(text: &str, sink: &mut Sink) -> Result<(), LabelError> {
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = Location::Line(index + 1);
        let members: Members = serde_json::from_str(line)
            .map_err(|e| sink.invalid(at, format!("not a JSON object ({e})")))?;
        let mut members = members.0;
        let key = match take(&mut members, "key") {
            Some(Value::String(key)) => key,
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(sink.invalid(at, "missing string member 'key'".into())),
        };
        if members.iter().any(|(name, _)| name == "check") {
            let Some(Value::String(check)) = take(&mut members, "check") else {
                return Err(sink.invalid(at, "'check' must be a string".into()));
            };
            let Some(Value::Bool(value)) = take(&mut members, "label") else {
                return Err(sink.invalid(at, "'label' must be true or false".into()));
            };
            let split = match take(&mut members, SPLIT_FIELD) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(_) => return Err(sink.invalid(at, "'split' must be a string".into())),
            };
            if let Some((name, _)) = members.first() {
                return Err(sink.invalid(at, format!("unexpected member '{name}'")));
            }
            sink.add(&key, &check, value, at)?;
            if let Some(split) = split {
                sink.set_split(&key, split, at)?;
            }
        } else {
            sink.add_key_labels(&key, Members(members), at)?;
        }
    }
    Ok(())
}

fn take(members: &mut Vec<(String, Value)>, name: &str) -> Option<Value> {
    let position = members.iter().position(|(n, _)| n == name)?;
    Some(members.remove(position).1)
}

fn read_csv(text: &str, sink: &mut Sink) -> Result<(), LabelError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((header_index, header)) = lines.next() else {
        return Ok(());
    };
    let header_at = Location::Line(header_index + 1);
    let columns = split_csv(header).map_err(|m| sink.invalid(header_at, m))?;
    let columns: Vec<String> = columns.iter().map(|c| c.to_ascii_lowercase()).collect();
    let has_split = match columns.as_slice() {
        [k, c, l] if k == "key" && c == "check" && l == "label" => false,
        [k, c, l, s] if k == "key" && c == "check" && l == "label" && s == SPLIT_FIELD => true,
        _ => {
            return Err(sink.invalid(
                header_at,
                "the header must be key,check,label or key,check,label,split".into(),
            ));
        }
    };
    let width = if has_split { 4 } else { 3 };
    for (index, line) in lines {
        let at = Location::Line(index + 1);
        let fields = split_csv(line).map_err(|m| sink.invalid(at, m))?;
        if fields.len() != width {
            return Err(sink.invalid(
                at,
                format!("expected {width} fields, found {}", fields.len()),
            ));
        }
        let value = parse_bool(&fields[2]).ok_or_else(|| {
            sink.invalid(
                at,
                format!("label must be true/false/1/0/yes/no, got '{}'", fields[2]),
            )
        })?;
        if fields[0].is_empty() || fields[1].is_empty() {
            return Err(sink.invalid(at, "key and check must not be empty".into()));
        }
        sink.add(&fields[0], &fields[1], value, at)?;
        if has_split && !fields[3].is_empty() {
            sink.set_split(&fields[0], fields[3].clone(), at)?;
        }
    }
    Ok(())
}

fn parse_bool(text: &str) -> Option<bool> {
    let is = |word: &str| text.eq_ignore_ascii_case(word);
    if is("true") || is("1") || is("yes") {
        Some(true)
    } else if is("false") || is("0") || is("no") {
        Some(false)
    } else {
        None
    }
}

/// One CSV record without line breaks inside fields (labels never need them).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    loop {
        let mut field = String::new();
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("unterminated quoted field".into()),
                }
            }
            while chars.peek().is_some_and(|c| *c != ',') {
                if let Some(c) = chars.next().filter(|c| !c.is_whitespace()) {
                    return Err(format!("unexpected '{c}' after a quoted field"));
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                field.push(c);
            }
        }
        fields.push(field.trim().to_string());
        if chars.next().is_none() {
            return Ok(fields);
        }
    }
}

/// Collects labels, folding duplicates and catching conflicts.
struct Sink<'p> {
    path: &'p Path,
    set: LabelSet,
    /// key -> indices in `set.labels` (a key has a handful of checks, scanned linearly).
    seen: HashMap<String, Vec<usize>>,
    split_at: HashMap<String, Location>,
}

impl<'p> Sink<'p> {
    fn new(path: &'p Path) -> Self {
        Sink {
            path,
            set: LabelSet::default(),
            seen: HashMap::new(),
            split_at: HashMap::new(),
        }
    }

    fn invalid(&self, at: Location, message: String) -> LabelError {
        LabelError::Invalid {
            path: self.path.to_path_buf(),
            at,
            message,
        }
    }

    fn add_key_labels(
        &mut self,
        key: &str,
        members: Members,
        at: Location,
    ) -> Result<(), LabelError> {
        for (name, value) in members.0 {
            match (name.as_str(), value) {
                (SPLIT_FIELD, Value::String(split)) => self.set_split(key, split, at)?,
                (SPLIT_FIELD, Value::Null) => {}
                (SPLIT_FIELD, _) => {
                    return Err(self.invalid(at, format!("split of {key} must be a string")));
                }
                (_, Value::Bool(b)) => self.add(key, &name, b, at)?,
                (_, other) => {
                    return Err(self.invalid(
                        at,
                        format!("label {key} / {name} must be true or false, got {other}"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn add(&mut self, key: &str, check: &str, value: bool, at: Location) -> Result<(), LabelError> {
        let labels = &self.set.labels;
        let earlier = self
            .seen
            .get(key)
            .and_then(|indices| indices.iter().copied().find(|&i| labels[i].check == check));
        if let Some(index) = earlier {
            let first = &self.set.labels[index];
            if first.value == value {
                self.set.duplicates += 1;
                return Ok(());
            }
            return Err(LabelError::Conflict(Box::new(Conflict {
                path: self.path.to_path_buf(),
                subject: format!("labels for {key} / {check}"),
                first: first.location,
                first_value: first.value.to_string(),
                second: at,
                second_value: value.to_string(),
            })));
        }
        let index = self.set.labels.len();
        match self.seen.get_mut(key) {
            Some(indices) => indices.push(index),
            None => {
                self.seen.insert(key.to_string(), vec![index]);
            }
        }
        self.set.labels.push(Label {
            key: key.to_string(),
            check: check.to_string(),
            value,
            location: at,
        });
        Ok(())
    }

    fn set_split(&mut self, key: &str, split: String, at: Location) -> Result<(), LabelError> {
        match self.set.splits.get(key) {
            Some(existing) if *existing == split => Ok(()),
            Some(existing) => Err(LabelError::Conflict(Box::new(Conflict {
                path: self.path.to_path_buf(),
                subject: format!("splits for {key}"),
                first: self.split_at.get(key).copied().unwrap_or(at),
                first_value: format!("'{existing}'"),
                second: at,
                second_value: format!("'{split}'"),
            }))),
            None => {
                self.split_at.insert(key.to_string(), at);
                self.set.splits.insert(key.to_string(), split);
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<LabelSet, LabelError> {
        if self.set.labels.is_empty() {
            return Err(LabelError::Empty(self.path.to_path_buf()));
        }
        Ok(self.set)
    }
}

/// A JSON object's members in document order, repeated names kept.
struct Members(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> Result<LabelSet, LabelError> {
        parse_labels(Path::new(name), text)
    }

    fn triples(set: &LabelSet) -> Vec<(&str, &str, bool)> {
        set.labels
            .iter()
            .map(|l| (l.key.as_str(), l.check.as_str(), l.value))
            .collect()
    }

    #[test]
    fn object_form_with_split() {
        let set = parse(
            "labels.json",
            r#"{"r-1": {"search_loop": true, "abstention": false, "split": "test"}, "r-2": {"search_loop": false}}"#,
        )
        .unwrap();
        assert_eq!(
            triples(&set),
            [
                ("r-1", "search_loop", true),
                ("r-1", "abstention", false),
                ("r-2", "search_loop", false)
            ]
        );
        assert_eq!(set.splits.get("r-1").map(String::as_str), Some("test"));
        assert_eq!(set.splits.get("r-2"), None);
        assert_eq!(set.labels[2].location, Location::Entry(2));
    }

    #[test]
    fn json_lines_in_both_shapes() {
        let text = "{\"key\": \"r-1\", \"check\": \"search_loop\", \"label\": true, \"split\": \"test\"}\n\n{\"key\": \"r-2\", \"abstention\": false}\n";
        let set = parse("labels.json", text).unwrap();
        assert_eq!(
            triples(&set),
            [("r-1", "search_loop", true), ("r-2", "abstention", false)]
        );
        assert_eq!(set.labels[1].location, Location::Line(3));
        assert_eq!(set.splits.get("r-1").map(String::as_str), Some("test"));
    }

    #[test]
    fn a_single_json_line_is_a_record_not_an_object_form() {
        let set = parse(
            "l.json",
            r#"{"key": "r-1", "check": "abstention", "label": false}"#,
        )
        .unwrap();
        assert_eq!(triples(&set), [("r-1", "abstention", false)]);
    }

    #[test]
    fn csv_with_and_without_split() {
        let set = parse(
            "l.csv",
            "key,check,label\nr-1,search_loop,yes\n\"r,2\", abstention ,0\n",
        )
        .unwrap();
        assert_eq!(
            triples(&set),
            [("r-1", "search_loop", true), ("r,2", "abstention", false)]
        );
        let set = parse(
            "l.txt",
            "key,check,label,split\r\nr-1,search_loop,TRUE,test\r\nr-2,search_loop,No,\r\n",
        )
        .unwrap();
        assert_eq!(
            triples(&set),
            [("r-1", "search_loop", true), ("r-2", "search_loop", false)]
        );
        assert_eq!(set.splits.len(), 1);
    }

    #[test]
    fn csv_errors_name_the_line() {
        let err = parse("l.csv", "key,check,label\nr-1,search_loop,maybe\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.csv: line 2: label must be true/false/1/0/yes/no, got 'maybe'"
        );
        let err = parse("l.csv", "key,label,check\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.csv: line 1: the header must be key,check,label or key,check,label,split"
        );
        let err = parse("l.csv", "key,check,label\nr-1,x\n").unwrap_err();
        assert_eq!(err.to_string(), "l.csv: line 2: expected 3 fields, found 2");
    }

    #[test]
    fn same_duplicate_counts_once() {
        let set = parse("l.csv", "key,check,label\nr-1,a,1\nr-1,a,true\n").unwrap();
        assert_eq!(set.labels.len(), 1);
        assert_eq!(set.duplicates, 1);
    }

    #[test]
    fn conflicting_duplicates_name_both_places() {
        let err = parse("l.csv", "key,check,label\nr-1,a,1\nr-2,a,0\nr-1,a,no\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.csv: conflicting labels for r-1 / a: true at line 2, false at line 4"
        );
        // A repeated member inside one JSON object is caught, not silently replaced.
        let err = parse("l.json", r#"{"r-1": {"a": true}, "r-1": {"a": false}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.json: conflicting labels for r-1 / a: true at entry 1, false at entry 2"
        );
    }

    #[test]
    fn conflicting_splits_are_an_error() {
        let err = parse(
            "l.csv",
            "key,check,label,split\nr-1,a,1,test\nr-1,b,0,train\n",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.csv: conflicting splits for r-1: 'test' at line 2, 'train' at line 3"
        );
    }

    #[test]
    fn non_boolean_labels_are_rejected() {
        let err = parse("l.json", r#"{"r-1": {"a": "yes"}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.json: entry 1: label r-1 / a must be true or false, got \"yes\""
        );
        let err = parse("l.json", r#"{"r-1": true}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.json: entry 1: labels of r-1 must be an object of check: true | false"
        );
        let err = parse(
            "l.jsonl",
            "{\"key\": \"r\", \"check\": \"a\", \"label\": 1}",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.jsonl: line 1: 'label' must be true or false"
        );
    }

    #[test]
    fn broken_json_lines_name_the_line() {
        let err = parse("l.jsonl", "{\"key\": \"r\", \"a\": true}\n{oops\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("l.jsonl: line 2: not a JSON object"),
            "{err}"
        );
    }

    #[test]
    fn broken_object_form_names_the_line() {
        let err = parse(
            "l.json",
            "{\n \"r-1\": {\"a\": true},\n \"r-2\": {\"a\": tru}\n}\n",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("l.json: line 3: not a JSON object"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_file_has_no_labels() {
        assert_eq!(
            parse("l.json", "{}").unwrap_err().to_string(),
            "no labels in l.json"
        );
        assert_eq!(
            parse("l.csv", "").unwrap_err().to_string(),
            "no labels in l.csv"
        );
    }

    #[test]
    fn missing_file_is_not_found() {
        let err = read_labels(Path::new("./no/such//labels.json")).unwrap_err();
        assert_eq!(err.to_string(), "no such file: no/such/labels.json");
    }
}
