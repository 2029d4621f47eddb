//! Per-file verdicts and the two renderings of a `conform` run: deterministic text and JSON.
//!
//! ## Text
//!
//! A header, the spec line, then per file: counts, the recorded final outcome (marked as ignored), the
//! verdict line with reason code and exit, `reason :` / `warn :` / `note :` lines, and `contrast :` when
//! the final outcome says success while the verdict is BLOCK. A summary line gives the overall exit. The
//! last line is `report-sha256: <hex>`, the SHA-256 of every byte printed before it (newlines included),
//! so anyone can confirm they reproduced the exact report. Paths are printed as given; there is no
//! timing, so the same inputs give the same bytes.
//!
//! ## JSON (`--json PATH`)
//!
//! ```text
//! {"tool": "faultgate conform",
//!  "spec": {"path", "mandatory_checkpoints", "handoff_contracts", "precedence", "response"},
//!  "files": [{"path", "verdict", "reason_code", "exit",
//!             "trajectory": {"events", "agents", "handoffs", "checkpoints", "irreversible_actions"} | null,
//!             "final": {"task_success"} | null,
//!             "reasons" / "warnings" / "notes": [{"code", "seq", "message"}],
//!             "contrast": text | null, "error": text | null}],
//!  "summary": {"pass", "pass_with_warnings", "block", "error", "exit"},
//!  "report_sha256": the hex of the text report}
//! ```

use serde_json::{Value, json};

use super::event::Event;
use super::rules::{Finding, Severity};
use super::spec::Workflow;
use super::trajectory::Trajectory;
use super::{Verdict, worst_verdict};

/// What a file's events add up to, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryCounts {
    pub events: usize,
    pub agents: Vec<String>,
    pub handoffs: usize,
    pub checkpoints: usize,
    /// Actions whose type a mandatory checkpoint guards.
    pub irreversible_actions: usize,
}

/// The outcome for one file.
#[derive(Debug, Clone, PartialEq)]
pub enum FileOutcome {
    Replayed {
        counts: TrajectoryCounts,
        task_success: bool,
        findings: Vec<Finding>,
    },
    BadInput {
        detail: String,
    },
}

/// One file's verdict and the facts behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReport {
    /// As given on the command line (display form).
    pub path: String,
    pub outcome: FileOutcome,
}

const BAD_INPUT: &str = "bad-input";
const CONFORMS: &str = "trajectory-conforms";

impl FileReport {
    /// Replays a parsed trajectory against the workflow.
    pub fn replay(path: String, workflow: &Workflow, trajectory: &Trajectory) -> FileReport {
        let mut counts = TrajectoryCounts {
            events: trajectory.event_count(),
            agents: trajectory.agents.clone(),
            handoffs: 0,
            checkpoints: 0,
            irreversible_actions: 0,
        };
        for event in &trajectory.events {
            match event {
                Event::Handoff(_) => counts.handoffs += 1,
                Event::Checkpoint(_) => counts.checkpoints += 1,
                Event::Action(a) if workflow.is_guarded(&a.action_type) => {
                    counts.irreversible_actions += 1;
                }
                Event::Action(_) => {}
            }
        }
        FileReport {
            path,
            outcome: FileOutcome::Replayed {
                counts,
                task_success: trajectory.final_outcome.task_success,
                findings: workflow.evaluate(&trajectory.events),
            },
        }
    }

    pub fn verdict(&self) -> Verdict {
        match &self.outcome {
            FileOutcome::BadInput { .. } => Verdict::Error,
            FileOutcome::Replayed { findings, .. } => {
                if findings.iter().any(|f| f.severity == Severity::Block) {
                    Verdict::Block
                } else {
                    Verdict::Pass
                }
            }
        }
    }

    /// The headline reason code: the first blocking finding, else `trajectory-conforms` or `bad-input`.
    pub fn reason_code(&self) -> String {
        match &self.outcome {
            FileOutcome::BadInput { .. } => BAD_INPUT.to_string(),
            FileOutcome::Replayed { findings, .. } => findings
                .iter()
                .find(|f| f.severity == Severity::Block)
                .map_or_else(|| CONFORMS.to_string(), |f| f.code.to_string()),
        }
    }

    fn findings(&self, severity: Severity) -> impl Iterator<Item = &Finding> {
        let all: &[Finding] = match &self.outcome {
            FileOutcome::Replayed { findings, .. } => findings,
            FileOutcome::BadInput { .. } => &[],
        };
        all.iter().filter(move |f| f.severity == severity)
    }

    fn has_warnings(&self) -> bool {
        self.findings(Severity::Warn).next().is_some()
    }

    /// The contrast between the recorded outcome and the road, when they disagree.
    fn contrast(&self) -> Option<String> {
        match &self.outcome {
            FileOutcome::Replayed {
                task_success: true, ..
            } if self.verdict() == Verdict::Block => Some(format!(
                "final metric says task_success=true / trajectory says {}",
                self.reason_code()
            )),
            _ => None,
        }
    }
}

/// A whole `conform` run: the spec and every file's verdict, in input order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConformReport {
    pub spec_path: String,
    pub mandatory_checkpoints: usize,
    pub handoff_contracts: usize,
    pub precedence_rules: usize,
    pub response_rules: usize,
    pub files: Vec<FileReport>,
}

fn counted(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

impl ConformReport {
    pub(crate) fn new(
        spec_path: String,
        workflow: &Workflow,
        files: Vec<FileReport>,
    ) -> ConformReport {
        ConformReport {
            spec_path,
            mandatory_checkpoints: workflow.mandatory_checkpoint_count(),
            handoff_contracts: workflow.handoff_contract_count(),
            precedence_rules: workflow.precedence_count(),
            response_rules: workflow.response_count(),
            files,
        }
    }

    pub(crate) fn overall(&self) -> Verdict {
        worst_verdict(self.files.iter().map(FileReport::verdict))
    }

    pub(crate) fn exit_code(&self) -> i32 {
        self.overall().exit_code()
    }

    fn tally(&self) -> (usize, usize, usize, usize) {
        let mut pass = 0;
        let mut warned = 0;
        let mut block = 0;
        let mut error = 0;
        for file in &self.files {
            match file.verdict() {
                Verdict::Pass => {
                    pass += 1;
                    warned += usize::from(file.has_warnings());
                }
                Verdict::Block => block += 1,
                Verdict::Error => error += 1,
            }
        }
        (pass, warned, block, error)
    }

    fn body(&self) -> String {
        let mut out = String::new();
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        line("faultgate conform: the metric says it arrived; did it take the road?".into());
        let mut rules = vec![
            counted(
                self.mandatory_checkpoints,
                "mandatory checkpoint",
                "mandatory checkpoints",
            ),
            counted(
                self.handoff_contracts,
                "handoff contract",
                "handoff contracts",
            ),
        ];
        if self.precedence_rules > 0 {
            rules.push(counted(
                self.precedence_rules,
                "precedence rule",
                "precedence rules",
            ));
        }
        if self.response_rules > 0 {
            rules.push(counted(
                self.response_rules,
                "response rule",
                "response rules",
            ));
        }
        line(format!("spec : {} ({})", self.spec_path, rules.join(", ")));
        line(format!("files: {}", self.files.len()));
        for (index, file) in self.files.iter().enumerate() {
            line(format!("[{}] {}", index + 1, file.path));
            let verdict = file.verdict();
            match &file.outcome {
                FileOutcome::BadInput { detail } => {
                    line(format!(
                        "verdict : {} ({}) exit {}",
                        verdict.as_str(),
                        BAD_INPUT,
                        verdict.exit_code()
                    ));
                    line(format!("detail : {detail}"));
                }
                FileOutcome::Replayed {
                    counts,
                    task_success,
                    ..
                } => {
                    line(format!(
                        "trajectory: {}, agents: {}; {}, {}, {}",
                        counted(counts.events, "event", "events"),
                        counts.agents.join(", "),
                        counted(counts.handoffs, "handoff", "handoffs"),
                        counted(counts.checkpoints, "checkpoint", "checkpoints"),
                        counted(
                            counts.irreversible_actions,
                            "irreversible action",
                            "irreversible actions"
                        ),
                    ));
                    line(format!(
                        "final : task_success={task_success} (recorded, printed for contrast, ignored for the verdict)"
                    ));
                    line(format!(
                        "verdict : {} ({}) exit {}",
                        verdict.as_str(),
                        file.reason_code(),
                        verdict.exit_code()
                    ));
                    if verdict == Verdict::Pass {
                        let mut detail = String::from(
                            "all mandatory checkpoints present and in order; all contracted handoffs satisfied",
                        );
                        if self.precedence_rules + self.response_rules > 0 {
                            detail.push_str("; all precedence and response rules hold");
                        }
                        line(format!("detail : {detail}"));
                    }
                    for (label, severity) in [
                        ("reason", Severity::Block),
                        ("warn", Severity::Warn),
                        ("note", Severity::Note),
                    ] {
                        for finding in file.findings(severity) {
                            line(format!("{label} : {}: {}", finding.code, finding.message));
                        }
                    }
                    if let Some(contrast) = file.contrast() {
                        line(format!("contrast : {contrast}"));
                    }
                }
            }
        }
        let (pass, warned, block, error) = self.tally();
        let with_warnings = if warned > 0 {
            format!(" ({warned} with warnings)")
        } else {
            String::new()
        };
        line(format!(
            "summary: {pass} PASS{with_warnings}, {block} BLOCK, {error} ERROR -> overall exit {}",
            self.exit_code()
        ));
        out
    }

    /// The text report and its SHA-256 (lowercase hex) over everything before the last line.
    pub(crate) fn render_text(&self) -> (String, String) {
        let mut text = self.body();
        let digest = crate::digest::sha256_hex(text.as_bytes());
        text.push_str("report-sha256: ");
        text.push_str(&digest);
        text.push('\n');
        (text, digest)
    }

    /// The JSON report carrying the same facts as the text; `sha256` is the text report's digest.
    pub(crate) fn to_json(&self, sha256: &str) -> Value {
        let files: Vec<Value> = self.files.iter().map(file_json).collect();
        let (pass, warned, block, error) = self.tally();
        json!({
            "tool": "faultgate conform",
            "spec": {
                "path": self.spec_path,
                "mandatory_checkpoints": self.mandatory_checkpoints,
                "handoff_contracts": self.handoff_contracts,
                "precedence": self.precedence_rules,
                "response": self.response_rules,
            },
            "files": files,
            "summary": {
                "pass": pass,
                "pass_with_warnings": warned,
                "block": block,
                "error": error,
                "exit": self.exit_code(),
            },
            "report_sha256": sha256,
        })
    }
}

fn findings_json<'a>(findings: impl Iterator<Item = &'a Finding>) -> Value {
    Value::Array(
        findings
            .map(|f| json!({"code": f.code.to_string(), "seq": f.seq, "message": f.message}))
            .collect(),
    )
}

fn file_json(file: &FileReport) -> Value {
    let verdict = file.verdict();
    let (trajectory, final_outcome, error) = match &file.outcome {
        FileOutcome::Replayed {
            counts,
            task_success,
            ..
        } => (
            json!({
                "events": counts.events,
                "agents": counts.agents,
                "handoffs": counts.handoffs,
                "checkpoints": counts.checkpoints,
                "irreversible_actions": counts.irreversible_actions,
            }),
            json!({"task_success": task_success}),
            Value::Null,
        ),
        FileOutcome::BadInput { detail } => (Value::Null, Value::Null, json!(detail)),
    };
    json!({
        "path": file.path,
        "verdict": verdict.as_str(),
        "reason_code": file.reason_code(),
        "exit": verdict.exit_code(),
        "trajectory": trajectory,
        "final": final_outcome,
        "reasons": findings_json(file.findings(Severity::Block)),
        "warnings": findings_json(file.findings(Severity::Warn)),
        "notes": findings_json(file.findings(Severity::Note)),
        "contrast": file.contrast(),
        "error": error,
    })
}
