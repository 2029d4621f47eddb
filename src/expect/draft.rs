//! `faultgate expect draft`: expectations drafted from baseline runs, with no labels.
//!
//! Runs of a good agent on the same scenario tend to make the same state-changing calls, with the same
//! key arguments, while a failing run misses one or makes another. For each scenario the runs share,
//! the draft keeps what a share of at least `min_agree` of the runs holding the scenario agree on:
//!
//! - a tool is expected when that share of the runs call it;
//! - its n-th call is expected when that share makes an n-th call of it, with the arguments that share
//!   gives the same value (as canonical JSON); arguments the runs disagree on are not compared, nor is
//!   free text (a string of several words longer than 40 characters, such as a summary for a person).
//!
//! The drafted scenarios are in `superset` mode: every agreed call must be made, other calls are
//! allowed. A scenario whose runs made state-changing calls but agree on none gets no expectation, and
//! is counted and listed in the file's `source`. The default share is a strict majority.
//!
//! Memory does not grow with the scenarios: the runs' calls, as canonical text, are sorted by scenario
//! through temporary files a bounded chunk at a time, and the drafted entries wait in another.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::args::{canonical, parse_arguments};
use super::file::{CallFile, ExpectError, ExpectFile, ScenarioFile};
use super::read_only::{DEFAULT_VERBS, ReadOnly};
use crate::error::{InputError, display_path};
use crate::ingest::{self, Format, ReadOptions};
use crate::table::TableOptions;
use crate::table::columns::{Columns, opt};

/// The default `--min-agree`: a call needs more than half of the runs.
pub const STRICT_MAJORITY: f64 = 0.5;

/// One state-changing call as the draft holds it: the tool and each argument's canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeldCall {
    tool: String,
    args: Vec<(String, String)>,
}

/// What a draft found, for its summary.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DraftSummary {
    /// Scenarios seen in any run.
    pub scenarios: usize,
    /// Scenarios given an expectation.
    pub drafted: usize,
    /// Scenarios whose runs made state-changing calls but agreed on none, sorted.
    pub disagreed: Vec<String>,
    /// Expected calls written.
    pub calls: usize,
}

/// How the draft is made.
#[derive(Debug, Clone)]
pub struct DraftOptions {
    /// The share of runs holding a scenario that must agree on a call (`> min_agree`, or all of them
    /// when it is 1).
    pub min_agree: f64,
    /// The trace format of the runs.
    pub format: Format,
    /// Globs of tools that change nothing, besides the default reading verbs; written into the file.
    pub read_only_tools: Vec<String>,
    /// Globs of tools that change state whatever their name says; written into the file.
    pub state_changing_tools: Vec<String>,
    /// How the runs' paths are listed (`--since`/`--until`, `--s3-endpoint`).
    pub sources: crate::ingest::Sources,
}

impl Default for DraftOptions {
    fn default() -> Self {
        DraftOptions {
            min_agree: STRICT_MAJORITY,
            format: Format::Auto,
            read_only_tools: Vec::new(),
            state_changing_tools: Vec::new(),
            sources: crate::ingest::Sources::default(),
        }
    }
}

/// Drafts expectations from `runs` (each a file or a folder of one run).
///
/// The runs' calls are sorted by scenario through unlinked temporary files, a bounded chunk at a
/// time, and the drafted entries go to another until [`Draft::write`]: memory holds one chunk and
/// one scenario's calls whatever the number of scenarios, and the keys of the scenarios without
/// agreement, which the file lists.
///
/// # Errors
///
/// The first run that cannot be read, or that holds no trace; a temporary file that cannot be
/// written.
pub fn draft(runs: &[PathBuf], options: &DraftOptions) -> Result<Draft, ExpectError> {
    let rules = ReadOnly::new(
        options.read_only_tools.clone(),
        options.state_changing_tools.clone(),
        true,
    );
    let mut sorter = Sorter::default();
    for (run, path) in runs.iter().enumerate() {
        let run = u32::try_from(run).unwrap_or(u32::MAX);
        for file in ingest::expand_paths(std::slice::from_ref(path), &options.sources)? {
            let read_options = ReadOptions::new(options.format, TableOptions::default());
            let each = |batch: crate::table::TraceBatch| -> Vec<(Box<str>, Box<[u8]>)> {
                let cols = Columns::new(&batch);
                cols.traces()
                    .filter_map(|t| {
                        let key = opt(cols.scenario, t)?;
                        Some((key.into(), encode(&state_changing_calls(&cols, t, &rules))))
                    })
                    .collect()
            };
            let mut spill_error = None;
            let read = ingest::read_file(
                &file,
                &read_options,
                &each,
                &mut |traces| {
                    for (key, calls) in traces {
                        if let Err(e) = sorter.push(key, run, calls) {
                            spill_error.get_or_insert(e);
                        }
                    }
                    Ok(())
                },
                None,
            )?;
            if let Some(e) = spill_error {
                return Err(ExpectError::Temporary(e));
            }
            if read.traces == 0 {
                return Err(InputError::NoTraces(file).into());
            }
        }
    }
    let mut summary = DraftSummary::default();
    let mut entries = Entries::new().map_err(ExpectError::Temporary)?;
    let mut group: Option<(Box<str>, Vec<Vec<HeldCall>>)> = None;
    let mut last_run = u32::MAX;
    let mut finish = |key: Box<str>, runs_of: Vec<Vec<HeldCall>>, entries: &mut Entries| {
        summary.scenarios += 1;
        let calls = agreed_calls(&runs_of, options.min_agree);
        if calls.is_empty() && runs_of.iter().any(|calls| !calls.is_empty()) {
            summary.disagreed.push(key.into());
            return Ok(());
        }
        summary.drafted += 1;
        summary.calls += calls.len();
        entries.push(
            &key,
            &ScenarioFile {
                mode: None,
                calls,
                forbidden: Vec::new(),
            },
        )
    };
    for record in sorter.into_sorted().map_err(ExpectError::Temporary)? {
        let record = record.map_err(ExpectError::Temporary)?;
        match &mut group {
            Some((key, runs_of)) if *key == record.key => {
                // The first trace of a scenario in a run stands for the run.
                if record.run != last_run {
                    runs_of.push(decode(&record.calls));
                }
            }
            _ => {
                if let Some((key, runs_of)) = group.take() {
                    finish(key, runs_of, &mut entries).map_err(ExpectError::Temporary)?;
                }
                group = Some((record.key, vec![decode(&record.calls)]));
            }
        }
        last_run = record.run;
    }
    if let Some((key, runs_of)) = group.take() {
        finish(key, runs_of, &mut entries).map_err(ExpectError::Temporary)?;
    }
    let source = serde_json::json!({
        "command": "expect draft",
        "runs": runs.iter().map(|p| display_path(p)).collect::<Vec<_>>(),
        "min_agree": options.min_agree,
        "read_only": {"default_verbs": DEFAULT_VERBS},
        "scenarios": summary.scenarios,
        "drafted": summary.drafted,
        "disagreed": summary.disagreed,
    });
    let head = ExpectFile {
        source: Some(source),
        read_only_tools: options.read_only_tools.clone(),
        state_changing_tools: options.state_changing_tools.clone(),
        scenarios: BTreeMap::new(),
        ..ExpectFile::default_file()
    };
    Ok(Draft {
        head,
        entries,
        summary,
    })
}

/// A drafted expectations file, its scenarios' entries waiting in a temporary file.
pub struct Draft {
    head: ExpectFile,
    entries: Entries,
    /// What the draft found.
    pub summary: DraftSummary,
}

impl Draft {
    /// Writes the file to `path` (whole or not at all), the same bytes as [`ExpectFile::write`]
    /// would give with every scenario in memory.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn write(&mut self, path: &Path) -> Result<(), ExpectError> {
        let head = serde_json::to_string_pretty(&self.head).unwrap_or_default();
        const EMPTY: &str = "\"scenarios\": {}";
        let at = head
            .rfind(EMPTY)
            .map_or(head.len(), |at| at + EMPTY.len() - 2);
        let (before, after) = head.split_at(at);
        let entries = &mut self.entries;
        crate::output::write_atomic_with(path, |out| {
            out.write_all(before.as_bytes())?;
            if entries.count == 0 {
                out.write_all(b"{}")?;
            } else {
                out.write_all(b"{\n")?;
                entries.file.flush()?;
                let file = entries.file.get_mut();
                file.seek(SeekFrom::Start(0))?;
                io::copy(file, out)?;
                out.write_all(b"\n  }")?;
            }
            out.write_all(after.get(2..).unwrap_or_default().as_bytes())?;
            out.write_all(b"\n")
        })
        .map_err(|source| ExpectError::Write {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The drafted scenarios' entries, written as they come (in key order) at the indent they take
/// in the file.
struct Entries {
    file: BufWriter<File>,
    count: usize,
}

impl Entries {
    fn new() -> io::Result<Entries> {
        Ok(Entries {
            file: BufWriter::new(tempfile::tempfile()?),
            count: 0,
        })
    }

    fn push(&mut self, key: &str, scenario: &ScenarioFile) -> io::Result<()> {
        let one = BTreeMap::from([(key, scenario)]);
        let text = serde_json::to_string_pretty(&one).map_err(io::Error::other)?;
        // `{`, the entry at one indent, `}`: the entry's lines go one indent deeper in the file.
        let lines: Vec<&str> = text.lines().collect();
        if self.count > 0 {
            self.file.write_all(b",\n")?;
        }
        for (i, line) in lines[1..lines.len() - 1].iter().enumerate() {
            if i > 0 {
                self.file.write_all(b"\n")?;
            }
            self.file.write_all(b"  ")?;
            self.file.write_all(line.as_bytes())?;
        }
        self.count += 1;
        Ok(())
    }
}

/// One trace's state-changing calls, sorted by scenario.
struct Record {
    key: Box<str>,
    run: u32,
    calls: Box<[u8]>,
}

/// The payload bytes held before the sorted chunk is written out.
const CHUNK_BYTES: usize = 64 << 20;

/// Records sorted by key, in the order they came among equal keys, through sorted chunks in
/// unlinked temporary files merged at the end.
struct Sorter {
    chunk: Vec<Record>,
    bytes: usize,
    limit: usize,
    spilled: Vec<File>,
}

impl Default for Sorter {
    fn default() -> Self {
        Sorter {
            chunk: Vec::new(),
            bytes: 0,
            limit: CHUNK_BYTES,
            spilled: Vec::new(),
        }
    }
}

impl Sorter {
    fn push(&mut self, key: Box<str>, run: u32, calls: Box<[u8]>) -> io::Result<()> {
        self.bytes += key.len() + calls.len() + std::mem::size_of::<Record>();
        self.chunk.push(Record { key, run, calls });
        if self.bytes >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        // Stable: among equal keys, the order the records came in, so the earlier run comes first.
        self.chunk.sort_by(|a, b| a.key.cmp(&b.key));
        let mut out = BufWriter::new(tempfile::tempfile()?);
        for record in self.chunk.drain(..) {
            write_bytes(&mut out, record.key.as_bytes())?;
            out.write_all(&record.run.to_le_bytes())?;
            write_bytes(&mut out, &record.calls)?;
        }
        let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        self.spilled.push(file);
        self.bytes = 0;
        Ok(())
    }

    /// Every record, by key, then in the order pushed.
    fn into_sorted(mut self) -> io::Result<impl Iterator<Item = io::Result<Record>>> {
        self.chunk.sort_by(|a, b| a.key.cmp(&b.key));
        let mut sources: Vec<Box<dyn Iterator<Item = io::Result<Record>>>> = self
            .spilled
            .into_iter()
            .map(|file| {
                let mut reader = BufReader::new(file);
                Box::new(std::iter::from_fn(move || {
                    read_record(&mut reader).transpose()
                })) as Box<dyn Iterator<Item = io::Result<Record>>>
            })
            .collect();
        sources.push(Box::new(self.chunk.into_iter().map(Ok)));
        // The head of each source, and a heap of (key, source) so that equal keys come out in the
        // order of their sources, which is the order they were pushed.
        let mut heads: Vec<Option<Record>> = Vec::with_capacity(sources.len());
        let mut heap = BinaryHeap::new();
        for (i, source) in sources.iter_mut().enumerate() {
            let head = source.next().transpose()?;
            if let Some(record) = &head {
                heap.push(Reverse((record.key.clone(), i)));
            }
            heads.push(head);
        }
        Ok(std::iter::from_fn(move || {
            let Reverse((_, i)) = heap.pop()?;
            let record = heads[i].take()?;
            match sources[i].next().transpose() {
                Ok(Some(next)) => {
                    heap.push(Reverse((next.key.clone(), i)));
                    heads[i] = Some(next);
                }
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
            Some(Ok(record))
        }))
    }
}

fn write_bytes(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len()).map_err(io::Error::other)?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(bytes)
}

fn read_u32(input: &mut impl Read) -> io::Result<Option<u32>> {
    let mut buf = [0u8; 4];
    match input.read_exact(&mut buf) {
        Ok(()) => Ok(Some(u32::from_le_bytes(buf))),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

fn read_bytes(input: &mut impl Read, len: u32) -> io::Result<Box<[u8]>> {
    let mut buf = vec![0u8; len as usize];
    input.read_exact(&mut buf)?;
    Ok(buf.into_boxed_slice())
}

fn read_record(input: &mut impl Read) -> io::Result<Option<Record>> {
    let Some(len) = read_u32(input)? else {
        return Ok(None);
    };
    let key = String::from_utf8(read_bytes(input, len)?.into_vec()).map_err(io::Error::other)?;
    let run = read_u32(input)?.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    let len = read_u32(input)?.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    Ok(Some(Record {
        key: key.into(),
        run,
        calls: read_bytes(input, len)?,
    }))
}

/// A trace's calls as bytes: each string length-prefixed, a count before each list.
fn encode(calls: &[HeldCall]) -> Box<[u8]> {
    fn put(out: &mut Vec<u8>, text: &str) {
        out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    let mut out = Vec::new();
    out.extend_from_slice(&u32::try_from(calls.len()).unwrap_or(u32::MAX).to_le_bytes());
    for call in calls {
        put(&mut out, &call.tool);
        out.extend_from_slice(
            &u32::try_from(call.args.len())
                .unwrap_or(u32::MAX)
                .to_le_bytes(),
        );
        for (name, value) in &call.args {
            put(&mut out, name);
            put(&mut out, value);
        }
    }
    out.into_boxed_slice()
}

/// The calls [`encode`] wrote.
fn decode(mut bytes: &[u8]) -> Vec<HeldCall> {
    fn count(bytes: &mut &[u8]) -> usize {
        let (head, rest) = bytes.split_at(4);
        *bytes = rest;
        u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize
    }
    fn text(bytes: &mut &[u8]) -> String {
        let len = count(bytes);
        let (head, rest) = bytes.split_at(len);
        *bytes = rest;
        String::from_utf8_lossy(head).into_owned()
    }
    let calls = count(&mut bytes);
    (0..calls)
        .map(|_| {
            let tool = text(&mut bytes);
            let args = (0..count(&mut bytes))
                .map(|_| (text(&mut bytes), text(&mut bytes)))
                .collect();
            HeldCall { tool, args }
        })
        .collect()
}

/// The state-changing calls of trace `t` that did not fail, in step order.
fn state_changing_calls(cols: &Columns<'_>, t: usize, rules: &ReadOnly) -> Vec<HeldCall> {
    let annotated = cols.read_only_tools(t);
    cols.step_rows(t)
        .filter(|&s| {
            let tool = cols.tool.value(s);
            !tool.is_empty()
                && cols.step_succeeded(t, s)
                && !rules.is_read_only(tool, annotated.iter().any(|a| a == tool))
        })
        .map(|s| {
            let args = match parse_arguments(cols.arguments.value(s)) {
                Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), canonical(v))).collect(),
                _ => Vec::new(),
            };
            HeldCall {
                tool: cols.tool.value(s).to_string(),
                args,
            }
        })
        .collect()
}

/// The longest string value still compared when it holds several words.
const PROSE_CHARS: usize = 40;

/// Returns true if and only if a canonical value is free text (a summary, a message to a person): a
/// string of several words longer than [`PROSE_CHARS`]. Runs never word such text alike, so a draft
/// that compared it would expect one run's wording of every other run.
fn is_prose(value: &str) -> bool {
    value.starts_with('"') && value.contains(' ') && value.chars().count() > PROSE_CHARS + 2
}

/// Returns true if and only if `count` of `of` runs is the share the draft needs.
fn agrees(count: usize, of: usize, min_agree: f64) -> bool {
    #[allow(clippy::cast_precision_loss)] // run counts are small
    let share = count as f64 / of as f64;
    if min_agree >= 1.0 {
        count == of
    } else {
        share > min_agree
    }
}

/// The calls a share of the runs agree on, tool by tool in the order the tools first appear.
fn agreed_calls(runs: &[Vec<HeldCall>], min_agree: f64) -> Vec<CallFile> {
    let n = runs.len();
    let mut tools: Vec<&str> = Vec::new();
    for calls in runs {
        for call in calls {
            if !tools.contains(&call.tool.as_str()) {
                tools.push(&call.tool);
            }
        }
    }
    let mut out = Vec::new();
    for tool in tools {
        let per_run: Vec<Vec<&HeldCall>> = runs
            .iter()
            .map(|calls| calls.iter().filter(|c| c.tool == tool).collect())
            .collect();
        let calling = per_run.iter().filter(|c| !c.is_empty()).count();
        if !agrees(calling, n, min_agree) {
            continue;
        }
        // The n-th call of the tool, for as many calls as the runs agree the tool is called.
        let most = per_run.iter().map(Vec::len).max().unwrap_or(0);
        for slot in 0..most {
            let nth: Vec<&HeldCall> = per_run
                .iter()
                .filter_map(|c| c.get(slot).copied())
                .collect();
            if !agrees(nth.len(), n, min_agree) {
                break;
            }
            let mut arguments = Map::new();
            let mut keys: Vec<&str> = nth
                .iter()
                .flat_map(|c| c.args.iter().map(|(k, _)| k.as_str()))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                let mut counts: Vec<(&str, usize)> = Vec::new();
                for call in &nth {
                    if let Some((_, value)) = call.args.iter().find(|(k, _)| k == key) {
                        match counts.iter_mut().find(|(v, _)| *v == value) {
                            Some((_, c)) => *c += 1,
                            None => counts.push((value, 1)),
                        }
                    }
                }
                // The most common value, the first seen among equals, when enough runs give it.
                if let Some((value, count)) = counts
                    .iter()
                    .copied()
                    .reduce(|best, next| if next.1 > best.1 { next } else { best })
                    && agrees(count, n, min_agree)
                    && !is_prose(value)
                {
                    arguments.insert(
                        key.to_string(),
                        serde_json::from_str(value).unwrap_or(Value::Null),
                    );
                }
            }
            out.push(CallFile {
                tool: tool.to_string(),
                arguments,
                compare: None,
                matchers: Map::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: &[(&str, &str)]) -> HeldCall {
        HeldCall {
            tool: tool.into(),
            args: args
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_majority_gives_the_call_and_the_arguments_it_agrees_on() {
        let runs = vec![
            vec![call("cancel", &[("id", "\"Z\""), ("reason", "\"a\"")])],
            vec![call("cancel", &[("id", "\"Z\""), ("reason", "\"b\"")])],
            vec![call("refund", &[("id", "\"Z\"")])],
        ];
        let calls = agreed_calls(&runs, STRICT_MAJORITY);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].tool, "cancel");
        assert_eq!(
            Value::Object(calls[0].arguments.clone()),
            serde_json::json!({"id": "Z"})
        );
    }

    #[test]
    fn runs_that_agree_on_nothing_give_nothing() {
        let runs = vec![
            vec![call("cancel", &[])],
            vec![call("refund", &[])],
            vec![call("book", &[])],
        ];
        assert!(agreed_calls(&runs, STRICT_MAJORITY).is_empty());
    }

    #[test]
    fn repeated_calls_are_expected_as_often_as_the_runs_agree() {
        let runs = vec![
            vec![call("pay", &[("n", "1")]), call("pay", &[("n", "2")])],
            vec![call("pay", &[("n", "1")]), call("pay", &[("n", "2")])],
            vec![call("pay", &[("n", "1")])],
        ];
        let calls = agreed_calls(&runs, STRICT_MAJORITY);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].arguments["n"], 2);
    }

    #[test]
    fn a_share_of_one_needs_every_run() {
        let runs = vec![vec![call("pay", &[])], vec![call("pay", &[])], vec![]];
        assert!(agreed_calls(&runs, 1.0).is_empty());
        assert_eq!(agreed_calls(&runs, 0.6).len(), 1);
    }

    #[test]
    fn calls_come_back_as_encoded() {
        let calls = vec![
            call("cancel", &[("id", "\"Z\""), ("note", "\"é\"")]),
            call("refund", &[]),
        ];
        assert_eq!(decode(&encode(&calls)), calls);
        assert!(decode(&encode(&[])).is_empty());
    }

    #[test]
    fn records_spilled_in_chunks_come_back_by_key_in_the_order_pushed() {
        let mut sorter = Sorter {
            limit: 100,
            ..Sorter::default()
        };
        let pushed = [
            ("b", 0),
            ("a", 0),
            ("c", 0),
            ("a", 0),
            ("b", 1),
            ("a", 1),
            ("c", 2),
        ];
        for (i, (key, run)) in pushed.iter().enumerate() {
            let calls = encode(&[call(&format!("t{i}"), &[])]);
            sorter.push((*key).into(), *run, calls).unwrap();
        }
        assert!(sorter.spilled.len() >= 2, "the test needs several chunks");
        let got: Vec<(String, u32, String)> = sorter
            .into_sorted()
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                let tool = decode(&r.calls)[0].tool.clone();
                (r.key.into(), r.run, tool)
            })
            .collect();
        let want = [
            ("a", 0, "t1"),
            ("a", 0, "t3"),
            ("a", 1, "t5"),
            ("b", 0, "t0"),
            ("b", 1, "t4"),
            ("c", 0, "t2"),
            ("c", 2, "t6"),
        ];
        let want: Vec<(String, u32, String)> = want
            .iter()
            .map(|(k, r, t)| ((*k).to_string(), *r, (*t).to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_draft_writes_the_bytes_of_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let scenario = |tool: &str| ScenarioFile {
            mode: None,
            calls: vec![CallFile {
                tool: tool.into(),
                arguments: serde_json::from_str(r#"{"id": "Z", "n": [1, {"k": true}]}"#).unwrap(),
                compare: None,
                matchers: Map::new(),
            }],
            forbidden: Vec::new(),
        };
        let head = ExpectFile {
            source: Some(serde_json::json!({"command": "expect draft", "disagreed": ["x"]})),
            read_only_tools: vec!["peek_*".into()],
            ..ExpectFile::default_file()
        };
        for keys in [
            &[][..],
            &["task-1"][..],
            &["a \"quoted\" key", "task-2", "z"][..],
        ] {
            let mut whole = head.clone();
            let mut entries = Entries::new().unwrap();
            for key in keys {
                whole.scenarios.insert((*key).to_string(), scenario(key));
                entries.push(key, &scenario(key)).unwrap();
            }
            let mut drafted = Draft {
                head: head.clone(),
                entries,
                summary: DraftSummary::default(),
            };
            let (a, b) = (
                dir.path().join("whole.json"),
                dir.path().join("drafted.json"),
            );
            whole.write(&a).unwrap();
            drafted.write(&b).unwrap();
            assert_eq!(
                std::fs::read_to_string(&b).unwrap(),
                std::fs::read_to_string(&a).unwrap(),
                "{keys:?}"
            );
        }
    }
}
