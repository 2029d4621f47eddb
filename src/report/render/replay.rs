//! The replay file `--judge-record` writes: every judged verdict of the run, one JSON object per line,
//! in report order, for `--judge replay:FILE` to read back (the line format is `crate::judge::replay`'s).
//!
//! Reasons and scenario keys are the verdict table's, already masked. A `baseline` has several runs;
//! the file holds the verdicts of every run so far, and is rewritten whole after each.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;

use crate::judge::providers::Usage;
use crate::report::ReportCheck;
use crate::report::verdicts::VerdictBatch;

/// The `--judge-record` file of an invocation and the lines of its runs so far.
#[derive(Debug)]
pub(crate) struct JudgeRecord {
    path: PathBuf,
    lines: Mutex<String>,
}

impl JudgeRecord {
    pub(crate) fn new(path: PathBuf) -> JudgeRecord {
        JudgeRecord {
            path,
            lines: Mutex::default(),
        }
    }

    /// Adds one run's judged verdicts to the lines of the runs before it and writes them all (temp
    /// file, then rename). `usage` holds the tokens of each verdict by (trace id, check), and `judge`
    /// is the judge's name.
    pub(crate) fn add_run(
        &self,
        batches: &[VerdictBatch],
        checks: &[ReportCheck],
        usage: &HashMap<(String, String), Usage>,
        judge: &str,
    ) -> std::io::Result<()> {
        let mut lines = self
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        push_lines(&mut lines, batches, checks, usage, judge);
        crate::report::write_atomic(&self.path, lines.as_bytes())
    }
}

/// Appends one line per judged verdict of `batches`, in row order then check order.
fn push_lines(
    out: &mut String,
    batches: &[VerdictBatch],
    checks: &[ReportCheck],
    usage: &HashMap<(String, String), Usage>,
    judge: &str,
) {
    for row in batches.iter().flat_map(VerdictBatch::rows) {
        for (check, v) in checks.iter().zip(row.verdicts()) {
            if !check.role.judged {
                continue;
            }
            let usage = usage
                .get(&(row.trace_id().to_string(), check.name.clone()))
                .copied()
                .unwrap_or_default();
            let line = json!({
                "trace_id": row.trace_id(),
                "scenario": row.scenario(),
                "check": check.name,
                "detected": v.detected,
                "confidence": v.confidence,
                "reason": v.reason,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "judge": judge,
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Gating, Reasons, Role, VerdictColumn};
    use crate::judge::replay::ReplayFile;
    use crate::redact::Redaction;
    use crate::report::verdicts::{TraceFields, VerdictBatchBuilder, schema};

    #[test]
    fn judged_verdicts_are_written_in_report_order_and_read_back() {
        let role = |judged| Role {
            gating: Gating::CleanRate,
            outcome_block: false,
            judged,
        };
        let checks = [
            ReportCheck {
                name: "abstention".into(),
                role: role(false),
            },
            ReportCheck {
                name: "tone".into(),
                role: role(true),
            },
        ];
        let batch = |ids: &[&str]| {
            let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
            let mut builder = VerdictBatchBuilder::new(schema(&names), ids.len());
            let column = || VerdictColumn::new(ids.len(), Reasons::All, Redaction::Off);
            let (mut abstention, mut tone) = (column(), column());
            for (i, id) in ids.iter().enumerate() {
                builder.push_trace(&TraceFields {
                    trace_id: id,
                    scenario: &format!("s-{id}"),
                    ..TraceFields::default()
                });
                abstention.sure(true, "not judged");
                tone.push(i == 0, 0.5, format_args!("rude {id}"));
            }
            builder
                .finish(vec![abstention, tone])
                .expect("verdict batch")
        };
        let usage = HashMap::from([(
            ("b".to_string(), "tone".to_string()),
            Usage {
                prompt_tokens: 7,
                completion_tokens: 2,
            },
        )]);
        let mut lines = String::new();
        push_lines(
            &mut lines,
            &[batch(&["a", "b"]), batch(&["c"])],
            &checks,
            &usage,
            "openai:m",
        );
        let lines: Vec<&str> = lines.lines().collect();
        assert_eq!(lines.len(), 3, "one line per judged verdict");
        assert_eq!(
            lines[1],
            r#"{"trace_id":"b","scenario":"s-b","check":"tone","detected":false,"confidence":0.5,"reason":"rude b","prompt_tokens":7,"completion_tokens":2,"judge":"openai:m"}"#
        );
        assert!(lines[2].starts_with(r#"{"trace_id":"c","#), "{}", lines[2]);
        let file = ReplayFile::parse(&lines.join("\n")).expect("a replay file");
        assert_eq!(file.judge.as_deref(), Some("openai:m"));
        let read = file.lookup("a", "s-a", "s-a", "tone").expect("a's verdict");
        assert!(read.verdict.detected);
        assert_eq!(read.verdict.reason, "rude a");
    }
}
