//! `manifest.json`, format `faultgate-partial/8`: what names a partial and its rows (the command,
//! the settings that decide verdicts, each input file's place, shard, digest and rows), how it is
//! stored, and the checks made on manifests before a merge: that a partial covers its run, and the
//! first setting in which two partials of one run differ.

use std::collections::HashSet;

use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use super::PartialError;
use crate::report::verdicts;
pub(crate) use crate::run::Usage;

/// The setting of a partial written with `--by`: its keys, joined by `,`. Recorded only then, and
/// then its table has the `slice` column.
pub(crate) const SLICES_SETTING: &str = "by";

/// The manifest's `format`; a partial of another format is refused.
pub(crate) const FORMAT: &str = "faultgate-partial/8";

/// One setting of a run that decides its verdicts; partials merge only when all agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Setting {
    pub name: String,
    pub value: String,
}

/// One input file of a partial: its path and a few counters, so that a partial of a million files
/// costs little to write or merge. Its digest is kept as bytes, and what few files have to say
/// besides (warnings, a skip reason) is boxed and absent when empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredFileEntry", into = "StoredFileEntry")]
pub(crate) struct FileEntry {
    /// Place in the run's whole input list (every shard lists the same files).
    pub index: usize,
    /// The run it belongs to: the position of its argument for `baseline`, else 0.
    pub run: usize,
    /// The shard that read it (`K` of `--shard K/N`, 0 without one).
    pub shard: usize,
    /// Display path.
    pub path: Box<str>,
    pub bytes: u64,
    /// Its SHA-256, when it was taken.
    pub sha256: Option<[u8; 32]>,
    /// Its rows in the verdict table.
    pub rows: usize,
    /// Its warnings and skip reasons, when it has any.
    pub notes: Option<Box<FileEntryNotes>>,
}

/// What an input file of a partial has to say besides its rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileEntryNotes {
    /// Its input warnings (a shard's trace-identity warnings go with its last file).
    pub warnings: Vec<String>,
    /// Why it was skipped: a file in a walked folder that holds no traces.
    pub skipped: Option<String>,
    /// What `--skip-bad-input` left out of it.
    pub skipped_input: crate::report::SkippedInput,
}

impl FileEntryNotes {
    /// The notes, or none when there is nothing in them.
    pub(crate) fn boxed(self) -> Option<Box<FileEntryNotes>> {
        let empty =
            self.warnings.is_empty() && self.skipped.is_none() && self.skipped_input.is_none();
        (!empty).then(|| Box::new(self))
    }
}

impl FileEntry {
    /// Its SHA-256 as the manifest and the audit show it: lowercase hex, empty when not taken.
    pub(crate) fn sha256_hex(&self) -> String {
        self.sha256
            .map(|d| crate::digest::lower_hex(&d))
            .unwrap_or_default()
    }

    /// What `--skip-bad-input` left out of it.
    pub(crate) fn skipped_input(&self) -> crate::report::SkippedInput {
        self.notes
            .as_ref()
            .map(|n| n.skipped_input)
            .unwrap_or_default()
    }
}

/// A [`FileEntry`] as `manifest.json` holds it.
#[derive(Serialize, Deserialize)]
struct StoredFileEntry {
    index: usize,
    run: usize,
    shard: usize,
    path: String,
    bytes: u64,
    sha256: String,
    rows: usize,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    skipped: Option<String>,
    #[serde(default, skip_serializing_if = "crate::report::SkippedInput::is_none")]
    skipped_input: crate::report::SkippedInput,
}

impl From<FileEntry> for StoredFileEntry {
    fn from(entry: FileEntry) -> StoredFileEntry {
        let sha256 = entry.sha256_hex();
        let notes = entry.notes.map(|n| *n).unwrap_or_default();
        StoredFileEntry {
            index: entry.index,
            run: entry.run,
            shard: entry.shard,
            path: entry.path.into(),
            bytes: entry.bytes,
            sha256,
            rows: entry.rows,
            warnings: notes.warnings,
            skipped: notes.skipped,
            skipped_input: notes.skipped_input,
        }
    }
}

impl TryFrom<StoredFileEntry> for FileEntry {
    type Error = String;

    fn try_from(stored: StoredFileEntry) -> Result<FileEntry, String> {
        let sha256 = if stored.sha256.is_empty() {
            None
        } else {
            Some(parse_sha256(&stored.sha256).ok_or_else(|| {
                format!(
                    "file {}: sha256 '{}' is not 64 hex digits",
                    stored.path, stored.sha256
                )
            })?)
        };
        Ok(FileEntry {
            index: stored.index,
            run: stored.run,
            shard: stored.shard,
            path: stored.path.into_boxed_str(),
            bytes: stored.bytes,
            sha256,
            rows: stored.rows,
            notes: FileEntryNotes {
                warnings: stored.warnings,
                skipped: stored.skipped,
                skipped_input: stored.skipped_input,
            }
            .boxed(),
        })
    }
}

/// The bytes of a SHA-256 written as 64 lowercase hex digits.
pub(crate) fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (value(pair[0])? << 4) | value(pair[1])?;
    }
    Some(out)
}

/// One run of a partial: for `baseline` each trace argument, else the single run over all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunEntry {
    /// The argument as typed (the baseline's per-run line).
    pub arg: String,
    /// The argument as the outputs show it.
    pub shown: String,
}

/// An input besides the traces (policy, golden, ...) as the audit lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OtherInput {
    pub role: String,
    pub path: String,
    pub sha256: String,
}

/// What names a partial and its rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub format: String,
    /// `check`, `baseline` or `calibrate`.
    pub command: String,
    /// The settings every partial of one run shares, in a fixed order.
    pub settings: Vec<Setting>,
    /// Checks in selection order (the verdict table's columns).
    pub checks: Vec<String>,
    pub judge: String,
    pub redaction: String,
    /// Number of input files of the whole run.
    pub inputs_total: usize,
    pub runs: Vec<RunEntry>,
    /// This partial's input files, in input order.
    pub files: Vec<FileEntry>,
    /// Policy, golden and other inputs, for the audit.
    pub other_inputs: Vec<OtherInput>,
    /// The command that reproduces the run, without the share and partial flags.
    pub repro: String,
    /// Tokens the judge used, when the run had a judge.
    pub judge_usage: Option<Usage>,
    /// Some file was read in a format whose trace ids are names (the outputs then show them wider,
    /// [`crate::report::render::shown::IdColumn`]); absent when none was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub named_ids: bool,
    /// `check --unit session`: the units checked after the files; absent for a partial of traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionUnits>,
}

/// What a partial of `check --unit session` holds besides its files' rows: the units a run over every
/// file checks after its files (the traces merged across files, then the conversations), those of
/// this partial's shard. Their rows follow the files' in the verdict table, in the order of their
/// places, which number every such unit of the whole run the same way in every shard: a merge puts
/// the rows of all shards back in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SessionUnits {
    /// The places below this one are traces without a conversation, the others conversations.
    pub alone: u64,
    /// Each row's place, rising.
    pub places: Vec<u64>,
    /// The rows whose tools were not read, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread_tools: Option<UnreadUnits>,
}

/// The units of a [`SessionUnits`] that used tools but had none read: the warning a run over every
/// file gives about them counts all shards' and names the first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UnreadUnits {
    pub count: usize,
    /// The first one's place, id and what shows its tools (masked).
    pub place: u64,
    pub trace: String,
    pub evidence: String,
}

impl SessionUnits {
    /// The units of a shard, as its run numbered them.
    pub(crate) fn of(tail: crate::run::TailPlaces) -> SessionUnits {
        SessionUnits {
            alone: tail.alone,
            unread_tools: tail
                .first_unread
                .map(|(place, trace, evidence)| UnreadUnits {
                    count: tail.unread,
                    place,
                    trace,
                    evidence,
                }),
            places: tail.places,
        }
    }

    /// The input warning about the units whose tools were not read, as a run over every file gives
    /// it after its last file's.
    pub(crate) fn unread_warning(&self) -> Option<String> {
        self.unread_tools.as_ref().map(|u| {
            crate::run::unread_tools_warning(
                u.count,
                crate::run::MERGED_TRACES,
                &u.trace,
                &u.evidence,
            )
        })
    }
}

/// The SHA-256 of the files a manifest describes, stored after its other keys; a partial whose files
/// do not match them is refused, since a changed byte (inside a string, say) would still parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Digests {
    pub(super) verdicts_sha256: String,
    pub(super) steps_sha256: String,
}

/// `manifest.json` as written: the manifest, then the digests of the partial's other files.
#[derive(Serialize)]
pub(super) struct StoredManifest<'a> {
    #[serde(flatten)]
    pub(super) manifest: &'a Manifest,
    #[serde(flatten)]
    pub(super) digests: Digests,
}

impl Manifest {
    /// The rows of the verdict table: its files', then its session units'.
    pub(crate) fn listed_rows(&self) -> usize {
        self.files.iter().map(|f| f.rows).sum::<usize>()
            + self.sessions.as_ref().map_or(0, |s| s.places.len())
    }

    /// The schema of the partial's verdict table: its checks' columns, after the `slice` column
    /// when the partial was written with `--by`.
    pub(crate) fn verdict_schema(&self) -> SchemaRef {
        let names: Vec<&str> = self.checks.iter().map(String::as_str).collect();
        let sliced = self.settings.iter().any(|s| s.name == SLICES_SETTING);
        verdicts::schema_sliced(&names, sliced)
    }

    /// Returns an error unless these files are every input file of the run.
    ///
    /// # Errors
    ///
    /// [`PartialError::Incomplete`], naming up to three missing files by index.
    pub(crate) fn require_complete(&self) -> Result<(), PartialError> {
        let total = self.inputs_total;
        let covered = self.files.len();
        if covered == total {
            return Ok(());
        }
        let have: HashSet<usize> = self.files.iter().map(|f| f.index).collect();
        let missing: Vec<String> = (0..total)
            .filter(|i| !have.contains(i))
            .take(3)
            .map(|i| format!("#{}", i + 1))
            .collect();
        let more = total - covered;
        let missing = if more > missing.len() {
            format!(
                "input files {} and {} more",
                missing.join(", "),
                more - missing.len()
            )
        } else {
            format!("input files {}", missing.join(", "))
        };
        Err(PartialError::Incomplete {
            covered,
            total,
            missing,
        })
    }
}

/// The first field in which two manifests of one run could differ, with both values.
pub(super) fn first_difference(a: &Manifest, b: &Manifest) -> Option<(String, String, String)> {
    let pair = |name: &str, x: &str, y: &str| {
        (x != y).then(|| (name.to_string(), x.to_string(), y.to_string()))
    };
    if let Some(d) = pair("command", &a.command, &b.command) {
        return Some(d);
    }
    let unit = |m: &Manifest| {
        if m.sessions.is_some() {
            "session"
        } else {
            "trace"
        }
    };
    if let Some((setting, x, y)) = pair("unit", unit(a), unit(b)) {
        return Some((
            format!("{setting} (--unit session partials merge only with each other)"),
            x,
            y,
        ));
    }
    let value_of = |m: &Manifest, name: &str| {
        m.settings
            .iter()
            .find(|s| s.name == name)
            .map_or_else(|| "nothing".to_string(), |s| s.value.clone())
    };
    let mut names: Vec<&str> = a.settings.iter().map(|s| s.name.as_str()).collect();
    for s in &b.settings {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    for name in names {
        if let Some(d) = pair(name, &value_of(a, name), &value_of(b, name)) {
            return Some(d);
        }
    }
    let runs = |m: &Manifest| {
        m.runs
            .iter()
            .map(|r| r.shown.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    pair("runs", &runs(a), &runs(b))
        .or_else(|| pair("reproduce command", &a.repro, &b.repro))
        .or_else(|| {
            let others = |m: &Manifest| serde_json::to_string(&m.other_inputs).unwrap_or_default();
            pair("inputs besides the traces", &others(a), &others(b))
        })
}
