//! Sessions (`--unit session`): a conversation of several traces checked as one unit.
//!
//! A trace is a turn of the conversation its conversation id names (`gen_ai.conversation.id`, else a
//! Langfuse session, a LangSmith thread or an OpenInference `session.id`). A session run writes each
//! such trace to disk as it reads it ([`SessionSpill`]), into one of a fixed number of bucket files
//! chosen by the hash of its conversation id, so a conversation's turns may sit in any files of the
//! run and memory holds none of them while the files are read. Once every file is read, the buckets
//! are read back one at a time: a bucket's turns are grouped by conversation, put in start order, and
//! each conversation becomes one row, checked as one sequence of steps.
//!
//! A turn whose trace id several files hold is merged by the trace-identity rule first
//! (`crate::run::identity`), in memory as without sessions; its spilled first read is then left out.
//!
//! A reason keeps counting steps over the whole conversation, so that every reader of a reason (the
//! span it names, the steps a report shows) finds the same step; the turn of each step it names is
//! written before it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::table::TurnSink;
use crate::table::record::{TraceRecord, conversation_id, root_position};

pub mod links;

/// One unit of a session run: a conversation, or a trace that names none.
#[derive(Debug)]
pub(crate) enum Unit {
    /// A conversation's id and its turns, in turn order.
    Session(String, Vec<TraceRecord<'static>>),
    /// A trace without a conversation id: a unit of its own.
    Alone(TraceRecord<'static>),
}

/// Groups traces into units, in order of each unit's first trace in `traces`; a conversation's
/// turns are put in start order, ties broken by trace id, so the order of the files or of the
/// threads that read them changes nothing.
pub(crate) fn group(traces: Vec<TraceRecord<'static>>) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for trace in traces {
        match conversation_id(&trace.spans) {
            Some(id) => match at.get(&id) {
                Some(&i) => {
                    if let Unit::Session(_, turns) = &mut units[i] {
                        turns.push(trace);
                    }
                }
                None => {
                    at.insert(id.clone(), units.len());
                    units.push(Unit::Session(id, vec![trace]));
                }
            },
            None => units.push(Unit::Alone(trace)),
        }
    }
    for unit in &mut units {
        if let Unit::Session(_, turns) = unit {
            turns.sort_by(|a, b| {
                (start(a), a.trace_id.as_ref()).cmp(&(start(b), b.trace_id.as_ref()))
            });
        }
    }
    units
}

/// [`group`] for turns read back in no set order (all of them naming a conversation): the
/// conversations ordered by their first turn's start, then by id.
pub(crate) fn group_in_order(turns: Vec<TraceRecord<'static>>) -> Vec<Unit> {
    let mut units = group(turns);
    units.sort_by(|a, b| key(a).cmp(&key(b)));
    units
}

/// Where a unit sorts among those read back: its first turn's start, then its id.
fn key(unit: &Unit) -> (i64, &str) {
    match unit {
        Unit::Session(id, turns) => (turns.first().map_or(0, start), id),
        Unit::Alone(trace) => (start(trace), &trace.trace_id),
    }
}

/// When a turn started: its root's start, else its earliest known start (0 when it records none,
/// so such turns come first, in trace id order).
fn start(trace: &TraceRecord<'_>) -> i64 {
    root_position(&trace.spans)
        .map(|r| trace.spans[r].start_ns)
        .filter(|&s| s != 0)
        .or_else(|| {
            trace
                .spans
                .iter()
                .map(|s| s.start_ns)
                .filter(|&s| s != 0)
                .min()
        })
        .unwrap_or(0)
}

/// Writes, before each step a reason names (`step N`, counted over the conversation), the turn it
/// was taken in: `turn 2, step 5`. A list (`steps 2, 5, 7`) is followed by its turns
/// (`(turns 1, 2, 2)`). `turn_of` gives each step's turn, from 0; a number past it is left alone.
pub(crate) fn name_turns<'r>(reason: &'r str, turn_of: &[usize]) -> Cow<'r, str> {
    let turn = |n: usize| n.checked_sub(1).and_then(|i| turn_of.get(i)).map(|t| t + 1);
    let bytes = reason.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = reason[at..].find("step").map(|i| at + i) {
        at = found + 4;
        if found > 0 && bytes[found - 1].is_ascii_alphanumeric() {
            continue;
        }
        let plural = bytes.get(found + 4) == Some(&b's');
        let mut p = found + 4 + usize::from(plural);
        if bytes.get(p) != Some(&b' ') {
            continue;
        }
        p += 1;
        // The numbers that follow: one, or a list separated by `, ` when plural.
        let mut numbers = Vec::new();
        let mut end = p;
        loop {
            let digits = bytes[end..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0
                || bytes
                    .get(end + digits)
                    .is_some_and(u8::is_ascii_alphanumeric)
            {
                break;
            }
            numbers.push(
                reason[end..end + digits]
                    .parse::<usize>()
                    .ok()
                    .and_then(turn),
            );
            end += digits;
            if !plural || !reason[end..].starts_with(", ") {
                break;
            }
            let next = end + 2;
            if !bytes.get(next).is_some_and(u8::is_ascii_digit) {
                break;
            }
            end = next;
        }
        let Some(turns) = numbers.iter().copied().collect::<Option<Vec<usize>>>() else {
            continue;
        };
        if turns.is_empty() {
            continue;
        }
        if plural {
            out.push_str(&reason[copied..end]);
            let list: Vec<String> = turns.iter().map(usize::to_string).collect();
            out.push_str(&format!(" (turns {})", list.join(", ")));
        } else {
            out.push_str(&reason[copied..found]);
            out.push_str(&format!("turn {}, ", turns[0]));
            out.push_str(&reason[found..end]);
        }
        copied = end;
        at = end;
    }
    if copied == 0 {
        return Cow::Borrowed(reason);
    }
    out.push_str(&reason[copied..]);
    Cow::Owned(out)
}

/// Bucket files a session run's held turns are spread over, by conversation: a conversation's turns
/// are all in one bucket, and a bucket is read back and grouped on its own, so memory holds one
/// bucket's turns at a time.
const BUCKETS: usize = 256;

/// The ids of the conversations a run checked as units, kept as 64-bit hashes: 2.5 million
/// conversations take about 40 MB rather than the 160 MB of their texts. Two ids of one run share a
/// hash with a chance of about one in a million at ten million traces, and the only effect would be a
/// trace's row named as a conversation's in `traces.parquet`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionIds(HashSet<u64>);

impl SessionIds {
    fn hash(id: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        // SipHash with fixed keys: the same hash in every run.
        let mut hasher = std::hash::DefaultHasher::new();
        id.hash(&mut hasher);
        hasher.finish()
    }

    /// Adds a conversation checked as a unit.
    pub fn insert(&mut self, id: &str) {
        self.0.insert(Self::hash(id));
    }

    /// Returns true if and only if `id` is (up to the hash) a conversation checked as a unit.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(&Self::hash(id))
    }

    /// The conversations checked as units.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Returns true if and only if no conversation was checked as a unit.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The turns of a session run, written to disk as they are read, into a fixed number (256) of
/// temporary files (unlinked at once) by the hash of their conversation id.
pub struct SessionSpill {
    dir: Option<PathBuf>,
    /// `--shard K/N` with `--partial`: the shard `(K, N)` whose units this run checks.
    shard: Option<(usize, usize)>,
    state: Mutex<SpillState>,
}

#[derive(Default)]
struct SpillState {
    buckets: Vec<Option<BufWriter<File>>>,
    /// Trace ids whose spilled turns are left out when read back: the run found their trace in
    /// several files and merges its parts in memory.
    excluded: HashSet<String>,
    /// The first write that failed; the run fails with it once its files are read.
    failed: Option<std::io::Error>,
}

impl std::fmt::Debug for SessionSpill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionSpill")
            .field("dir", &self.dir)
            .finish()
    }
}

impl SessionSpill {
    /// A spill whose files go to `dir` (the system's temporary directory when `None`).
    pub fn new(dir: Option<PathBuf>) -> SessionSpill {
        SessionSpill {
            dir,
            shard: None,
            state: Mutex::new(SpillState::default()),
        }
    }

    /// This spill for shard `k` of `n` (1-based) of a run written as partials: the run reads every
    /// file, and checks only the units it owns ([`SessionSpill::owns`]).
    pub fn for_shard(&self, k: usize, n: usize) -> SessionSpill {
        SessionSpill {
            dir: self.dir.clone(),
            shard: Some((k, n.max(1))),
            state: Mutex::new(SpillState::default()),
        }
    }

    /// The shard `(K, N)` this run checks the units of, when it is one of a sharded run.
    pub fn shard(&self) -> Option<(usize, usize)> {
        self.shard
    }

    /// Returns true if and only if the unit named `id` (a conversation id, or the trace id of a
    /// trace without one) is this run's to check: every unit when the run is not sharded, else the
    /// units whose id hashes to its shard. The hash is not the bucket's (its high bits, not its low
    /// ones), so that each shard checks conversations of every bucket.
    pub fn owns(&self, id: &str) -> bool {
        match self.shard {
            None => true,
            Some((k, n)) => ((crate::ingest::id_hash(id) >> 8) % n as u64) as usize == k - 1,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SpillState> {
        // A panic while another thread wrote is a bug that already fails the run.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Forgets every turn written so far: the run reads its files again.
    pub(crate) fn reset(&self) {
        *self.state() = SpillState::default();
    }

    /// Leaves the spilled turns of these trace ids out when the buckets are read back.
    pub(crate) fn exclude(&self, ids: &HashSet<String>) {
        self.state().excluded.extend(ids.iter().cloned());
    }

    /// Where a conversation's turns go.
    pub(crate) fn bucket(conversation: &str) -> usize {
        (crate::ingest::id_hash(conversation) % BUCKETS as u64) as usize
    }

    /// Reads every bucket back, one at a time, and hands `each` its turns (in no set order), the
    /// turns of the excluded trace ids left out.
    pub(crate) fn drain(
        &self,
        each: &mut dyn FnMut(usize, Vec<TraceRecord<'static>>),
    ) -> Result<(), std::io::Error> {
        let mut state = self.state();
        if let Some(error) = state.failed.take() {
            return Err(error);
        }
        let excluded = std::mem::take(&mut state.excluded);
        let mut buckets = std::mem::take(&mut state.buckets);
        drop(state);
        for b in 0..BUCKETS {
            let Some(writer) = buckets.get_mut(b).and_then(Option::take) else {
                each(b, Vec::new());
                continue;
            };
            let mut file = writer
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
            file.seek(SeekFrom::Start(0))?;
            let mut reader = BufReader::new(file);
            let mut turns = Vec::new();
            while let Some(trace) = codec::read(&mut reader)? {
                if !excluded.contains(trace.trace_id.as_ref()) {
                    turns.push(trace);
                }
            }
            each(b, turns);
        }
        Ok(())
    }
}

impl TurnSink for SessionSpill {
    fn put(&self, conversation: &str, trace: &TraceRecord<'_>) {
        let mut bytes = Vec::new();
        codec::write(&mut bytes, trace);
        let b = Self::bucket(conversation);
        let mut state = self.state();
        if state.failed.is_some() {
            return;
        }
        if state.buckets.is_empty() {
            state.buckets.resize_with(BUCKETS, || None);
        }
        let written = (|| {
            if state.buckets[b].is_none() {
                let file = match &self.dir {
                    Some(dir) => tempfile::tempfile_in(dir)?,
                    None => tempfile::tempfile()?,
                };
                state.buckets[b] = Some(BufWriter::with_capacity(1 << 13, file));
            }
            state.buckets[b]
                .as_mut()
                .expect("the bucket was just opened")
                .write_all(&bytes)
        })();
        if let Err(error) = written {
            state.failed = Some(error);
        }
    }
}

/// The spill's record of one trace: its strings length-prefixed, an attribute's value tagged as text
/// or JSON, so that a trace reads back as it was held.
mod codec {
    use std::borrow::Cow;
    use std::io::{self, Read};

    use crate::table::record::{AttrValue, Attrs, SpanRecord, TraceRecord};

    fn text(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    fn int(out: &mut Vec<u8>, n: i64) {
        out.extend_from_slice(&n.to_le_bytes());
    }

    /// Appends the record of `trace` to `out`.
    pub(super) fn write(out: &mut Vec<u8>, trace: &TraceRecord<'_>) {
        text(out, &trace.trace_id);
        text(out, &trace.agent);
        int(out, trace.skipped_attributes as i64);
        int(out, trace.spans.len() as i64);
        for span in &trace.spans {
            text(out, &span.span_id);
            match &span.parent_id {
                Some(parent) => {
                    out.push(1);
                    text(out, parent);
                }
                None => out.push(0),
            }
            text(out, &span.name);
            int(out, span.start_ns);
            int(out, span.end_ns);
            int(out, span.status_code);
            text(out, &span.status_message);
            attrs(out, &span.attrs);
        }
        attrs(out, &trace.resource);
    }

    fn attrs(out: &mut Vec<u8>, attrs: &Attrs<'_>) {
        int(out, attrs.len() as i64);
        for (key, value) in attrs.iter() {
            text(out, key);
            match value {
                AttrValue::Str(s) => {
                    out.push(0);
                    text(out, s);
                }
                AttrValue::Json(v) => {
                    out.push(1);
                    text(out, &serde_json::to_string(v).unwrap_or_default());
                }
            }
        }
    }

    fn read_attrs(r: &mut impl Read) -> io::Result<Attrs<'static>> {
        let n = usize::try_from(read_int(r)?).map_err(|_| bad("an attribute count"))?;
        let mut attrs = Attrs::default();
        for _ in 0..n {
            let key = read_text(r)?;
            let value = match read_byte(r)? {
                0 => AttrValue::Str(Cow::Owned(read_text(r)?)),
                _ => AttrValue::json(
                    serde_json::from_str(&read_text(r)?).map_err(|_| bad("a JSON value"))?,
                ),
            };
            attrs.push(key, value);
        }
        Ok(attrs)
    }

    fn bad(what: &str) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, format!("session spill: {what}"))
    }

    fn read_int(r: &mut impl Read) -> io::Result<i64> {
        let mut b = [0; 8];
        r.read_exact(&mut b)?;
        Ok(i64::from_le_bytes(b))
    }

    fn read_text(r: &mut impl Read) -> io::Result<String> {
        let len = usize::try_from(read_int(r)?).map_err(|_| bad("a length"))?;
        let mut b = Vec::new();
        r.take(len as u64).read_to_end(&mut b)?;
        if b.len() != len {
            return Err(bad("a cut record"));
        }
        String::from_utf8(b).map_err(|_| bad("text that is not UTF-8"))
    }

    fn read_byte(r: &mut impl Read) -> io::Result<u8> {
        let mut b = [0; 1];
        r.read_exact(&mut b)?;
        Ok(b[0])
    }

    /// The next trace of `r`; `None` at its end.
    pub(super) fn read(r: &mut impl io::BufRead) -> io::Result<Option<TraceRecord<'static>>> {
        if r.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let trace_id = read_text(r)?;
        let agent = read_text(r)?;
        let skipped_attributes = usize::try_from(read_int(r)?).unwrap_or(0);
        let spans = usize::try_from(read_int(r)?).map_err(|_| bad("a span count"))?;
        let mut trace = TraceRecord {
            trace_id: Cow::Owned(trace_id),
            agent,
            spans: Vec::with_capacity(spans),
            skipped_attributes,
            resource: Attrs::default(),
        };
        for _ in 0..spans {
            let span_id = read_text(r)?;
            let parent_id = match read_byte(r)? {
                0 => None,
                _ => Some(Cow::Owned(read_text(r)?)),
            };
            let name = read_text(r)?;
            let start_ns = read_int(r)?;
            let end_ns = read_int(r)?;
            let status_code = read_int(r)?;
            let status_message = read_text(r)?;
            let attrs = read_attrs(r)?;
            trace.spans.push(SpanRecord {
                span_id: Cow::Owned(span_id),
                parent_id,
                name: Cow::Owned(name),
                start_ns,
                end_ns,
                attrs,
                status_code,
                status_message: Cow::Owned(status_message),
            });
        }
        trace.resource = read_attrs(r)?;
        Ok(Some(trace))
    }
}

#[cfg(test)]
mod tests;
