//! The `--audit DIR` folder: what a reviewer needs to trust a verdict later.
//!
//! ## Files
//!
//! - `verdict.json`: [`VerdictJson`]: the version, time, verdict and exit code, the reproduce command,
//!   each input with its SHA-256, the run's counts and the gate object.
//! - `failing_traces.json`: a list of [`FailingTrace`], one per failing trace in report order, with the
//!   checks that fired and their redacted reasons. No payloads.
//! - `repro.sh`: the install line and the reproduce command; its header names this tool and version.
//!
//! Differences from faultgate 0.4.1: `faultgate_version` is this crate's version, not `0.4.1`; every
//! trace file of a multi-file or directory run is listed with role `traces`; `install` is new and
//! `repro.sh` installs and names this tool (`faultgate-rs`) instead of 0.4.1; and `created_utc` honours
//! `SOURCE_DATE_EPOCH` so reproducible builds can pin it. The folder is written whole or not at all.
//! A streamed run's `failing_traces.json` is written trace by trace in the pass over its verdicts, with
//! the bytes of the list built whole.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::markdown::{overall_verdict, results_by_id};
use super::repro::{PIP_INSTALL, TOOL, display_path};
use crate::gate::Gate;
use crate::output::StagedDir;
use crate::report::Report;
use crate::report::counts::SpilledCounts;
use crate::report::pass::{Body, Sink};
use crate::report::schema::{
    FailingTrace, FiredCheck, InputDigest, VerdictJson, to_pretty, to_pretty_writer,
};

/// One input file of the run and the role it played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    /// `traces`, `band`, `policy`, `golden` or `outcomes`.
    pub role: &'static str,
    pub path: PathBuf,
    /// The display path and SHA-256 a partial recorded when it read the file (`faultgate merge`);
    /// `None` reads the file now.
    pub recorded: Option<(String, String)>,
}

/// Everything the audit folder records.
pub(crate) struct Audit<'a> {
    pub report: &'a Report,
    pub gate: Option<&'a Gate>,
    /// The 0/1 exit code of the run, computed before any output was written.
    pub exit_code: i32,
    /// The reproduce command ([`super::repro::command`]).
    pub command: &'a str,
    /// `YYYY-MM-DDTHH:MM:SSZ` ([`utc_now`]).
    pub created_utc: String,
    /// The run's counts when its verdicts were written in a pass ([`FailingSink`]) rather than read
    /// from `report`.
    pub streamed: Option<&'a SpilledCounts>,
}

impl Audit<'_> {
    /// The run's verdict word, as [`overall_verdict`] gives it for the report held whole.
    fn verdict_word(&self) -> &'static str {
        match (self.streamed, self.gate) {
            (Some(_), Some(gate)) => gate.verdict.as_str(),
            (Some(counts), None) if counts.failed == 0 => "PASS",
            (Some(_), None) => "FAIL",
            (None, gate) => overall_verdict(self.report, gate),
        }
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`, or the time `SOURCE_DATE_EPOCH` names when set.
pub(crate) fn utc_now() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        });
    format_utc(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian calendar).
pub(crate) fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// verdict.json ([`VerdictJson`] gives its keys), with its inputs' digests.
fn verdict(audit: &Audit<'_>, digests: InputDigests) -> VerdictJson<Digests> {
    let report = audit.report;
    VerdictJson {
        faultgate_version: env!("CARGO_PKG_VERSION").to_string(),
        created_utc: audit.created_utc.clone(),
        verdict: audit.verdict_word().to_string(),
        exit_code: audit.exit_code,
        command: audit.command.to_string(),
        install: PIP_INSTALL.to_string(),
        inputs: Digests {
            read: std::cell::RefCell::new(digests.0),
            failed: std::cell::RefCell::new(None),
        },
        judge: report.judge.clone(),
        checks: report.check_names(),
        redaction: report.redaction.clone(),
        traces: audit
            .streamed
            .map_or_else(|| report.trace_ids().len(), |counts| counts.traces),
        failed_traces: audit
            .streamed
            .map_or_else(|| report.failed_traces().len(), |counts| counts.failed),
        fired: match audit.streamed {
            Some(counts) => counts.fired_by_name(report).into_iter().collect(),
            None => report.fired().into_iter().collect(),
        },
        gate: audit.gate.map(super::json::gate),
    }
}

/// The run's inputs with their SHA-256, in order, up to the first that could not be read: what
/// verdict.json lists. The files are read ([`InputDigests::read`]) while the verdicts are written, on
/// a thread of their own, so reading the traces again costs the audit no time of its own.
pub(crate) struct InputDigests(Vec<std::io::Result<InputDigest>>);

impl InputDigests {
    /// Reads every input for its SHA-256 (taking the one a partial recorded, where it did), and stops
    /// at the first that cannot be read.
    pub(crate) fn read(inputs: &[Input]) -> InputDigests {
        let mut digests = Vec::with_capacity(inputs.len());
        for input in inputs {
            let digest = Self::digest(input);
            let failed = digest.is_err();
            digests.push(digest);
            if failed {
                break;
            }
        }
        InputDigests(digests)
    }

    fn digest(input: &Input) -> std::io::Result<InputDigest> {
        if let Some((shown, sha256)) = &input.recorded {
            return Ok(InputDigest {
                role: input.role.to_string(),
                path: shown.clone(),
                sha256: sha256.clone(),
            });
        }
        let shown = display_path(&input.path).unwrap_or_else(|| {
            input
                .path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        });
        Ok(InputDigest {
            role: input.role.to_string(),
            path: shown,
            sha256: crate::ingest::stream::sha256(&input.path)?,
        })
    }
}

/// verdict.json's inputs as they are written: the first read that failed ends the list, and is given
/// back to the caller as it was.
struct Digests {
    read: std::cell::RefCell<Vec<std::io::Result<InputDigest>>>,
    failed: std::cell::RefCell<Option<std::io::Error>>,
}

impl serde::Serialize for Digests {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let read = std::mem::take(&mut *self.read.borrow_mut());
        let mut list = serializer.serialize_seq(Some(read.len()))?;
        for digest in read {
            match digest {
                Ok(entry) => list.serialize_element(&entry)?,
                Err(e) => {
                    let message = e.to_string();
                    *self.failed.borrow_mut() = Some(e);
                    return Err(S::Error::custom(message));
                }
            }
        }
        list.end()
    }
}

/// Writes verdict.json to `out`.
///
/// # Errors
///
/// `out` fails, or an input can no longer be read for its digest (that read's error).
fn write_verdict(
    out: &mut dyn std::io::Write,
    audit: &Audit<'_>,
    digests: InputDigests,
) -> std::io::Result<()> {
    let verdict = verdict(audit, digests);
    let written = to_pretty_writer(&verdict, out);
    match verdict.inputs.failed.into_inner() {
        Some(read) => Err(read),
        None => written,
    }
}

/// failing_traces.json ([`FailingTrace`] gives its keys): each failing trace with every reason,
/// redacted, no payloads.
pub(crate) fn failing(report: &Report) -> Vec<FailingTrace> {
    let by_id = results_by_id(report);
    report
        .failed_traces()
        .into_iter()
        .map(|id| {
            let records = &by_id[id];
            let checks = records
                .iter()
                .flat_map(|r| report.checks.iter().zip(r.verdicts()))
                .filter(|(_, v)| v.detected)
                .map(|(check, v)| FiredCheck {
                    check: check.name.clone(),
                    reason: v.reason.unwrap_or_default().to_string(),
                })
                .collect();
            FailingTrace {
                trace_id: id.to_string(),
                scenario: records[0].scenario().to_string(),
                checks,
            }
        })
        .collect()
}

/// failing_traces.json of a run whose trace ids are distinct, written trace by trace as the pass hands
/// the rows on: the bytes [`to_pretty`] gives for [`failing`] of the run held whole.
pub(crate) struct FailingSink {
    checks: Vec<String>,
    written: usize,
    text: String,
    body: Body,
}

impl FailingSink {
    /// The sink of `report`'s failing traces, written to an unlinked file of `dir` (`TMPDIR` when
    /// `None`) until the folder is written.
    ///
    /// # Errors
    ///
    /// The file cannot be created.
    pub(crate) fn new(report: &Report, dir: Option<&Path>) -> std::io::Result<Self> {
        Ok(FailingSink {
            checks: report.check_names(),
            written: 0,
            text: String::new(),
            body: Body::new(dir)?,
        })
    }

    /// Writes the list.
    fn finish(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.body.copy_to(out)?;
        out.write_all(if self.written == 0 { b"[]" } else { b"\n]" })
    }
}

impl Sink for FailingSink {
    fn take(&mut self, batch: &crate::report::VerdictBatch) -> std::io::Result<()> {
        self.text.clear();
        for row in batch.rows().filter(crate::report::Row::failed) {
            let trace = FailingTrace {
                trace_id: row.trace_id().to_string(),
                scenario: row.scenario().to_string(),
                checks: self
                    .checks
                    .iter()
                    .zip(row.verdicts())
                    .filter(|(_, v)| v.detected)
                    .map(|(check, v)| FiredCheck {
                        check: check.clone(),
                        reason: v.reason.unwrap_or_default().to_string(),
                    })
                    .collect(),
            };
            // The list's entries one level in, as the whole list is written.
            self.text
                .push_str(if self.written == 0 { "[\n " } else { ",\n " });
            self.text.push_str(&to_pretty(&trace).replace('\n', "\n "));
            self.written += 1;
        }
        std::io::Write::write_all(&mut self.body, self.text.as_bytes())
    }
}

/// repro.sh: a shell script that installs faultgate and reruns the command.
pub(crate) fn repro_script(verdict: &str, exit_code: i32, command: &str) -> String {
    format!(
        "#!/bin/sh\n# {TOOL} \u{b7} verdict {verdict} \u{b7} exit {exit_code}\n{PIP_INSTALL}\n{command}\n"
    )
}

/// Writes the three files of the folder `dir`, to appear whole once the returned folder is committed
/// ([`crate::output::StagedDir`]): a write error leaves no `verdict.json` without its
/// `failing_traces.json`. `digests` are the inputs' ([`InputDigests::read`]); `streamed` is the list
/// of failing traces a pass wrote, for a run whose counts are [`Audit::streamed`].
///
/// # Errors
///
/// A file that cannot be written, or an input that could not be read for its digest.
pub(crate) fn stage(
    dir: &Path,
    audit: &Audit<'_>,
    digests: InputDigests,
    streamed: Option<FailingSink>,
) -> std::io::Result<StagedDir> {
    let script = repro_script(audit.verdict_word(), audit.exit_code, audit.command);
    let mut staged = StagedDir::new(dir)?;
    staged.write_with("verdict.json", |out| write_verdict(out, audit, digests))?;
    match streamed {
        Some(failing) => staged.write_with("failing_traces.json", |out| failing.finish(out))?,
        None => staged.write(
            "failing_traces.json",
            to_pretty(&failing(audit.report)).as_bytes(),
        )?,
    }
    staged.write("repro.sh", script.as_bytes())?;
    Ok(staged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_format_matches_known_instants() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_798_761_599), "2026-12-31T23:59:59Z");
        assert_eq!(format_utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn repro_script_has_the_reference_shape() {
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            repro_script("FAIL", 1, "faultgate check t.json"),
            format!(
                "#!/bin/sh\n# faultgate-rs {v} \u{b7} verdict FAIL \u{b7} exit 1\npip install 'faultgate-rs=={v}'\nfaultgate check t.json\n"
            )
        );
    }

    #[test]
    fn failing_traces_written_from_the_spill_are_the_bytes_of_the_list_built_whole() {
        use crate::checks::{Reasons, VerdictColumn};
        use crate::redact::Redaction;
        use crate::report::spill::SpilledRuleRun;
        use crate::report::verdicts::{TraceFields, VerdictBatch, VerdictBatchBuilder, schema};
        let names = ["abstention", "policy", "abstention"];
        let batch = |from: usize, to: usize, fire: bool| -> VerdictBatch {
            let mut builder = VerdictBatchBuilder::new(schema(&names), to - from);
            let column = || VerdictColumn::new(to - from, Reasons::All, Redaction::Off);
            let mut columns = vec![column(), column(), column()];
            for i in from..to {
                builder.push_trace(&TraceFields {
                    trace_id: &format!("t\u{e9}{i}"),
                    scenario: &format!("s \"{}\"", i % 2),
                    ..TraceFields::default()
                });
                columns[0].push(fire && i % 3 == 0, 0.5, "abstains \"here\"\n");
                columns[1].push(fire && i == 5, 1.0, "");
                columns[2].push(fire && i % 2 == 0, 0.0, "again");
            }
            builder.finish(columns).expect("verdict batch")
        };
        for fire in [true, false] {
            let batches = vec![batch(0, 3, fire), batch(3, 4, false), batch(4, 9, fire)];
            let SpilledRuleRun {
                whole,
                spilled,
                without_batches: empty,
            } = SpilledRuleRun::new(&names, batches);
            let source = crate::report::pass::VerdictSource::Spilled(&spilled);
            let sink = FailingSink::new(&empty, None).unwrap();
            let mut out = Vec::new();
            crate::report::pass::through(source, sink)
                .finish(&mut out)
                .unwrap();
            let expected = to_pretty(&failing(&whole));
            assert_eq!(String::from_utf8(out).unwrap(), expected, "fired: {fire}");
            assert_eq!(expected == "[]", !fire);
        }
    }
}
