//! # workflow
//!
//! **What it detects.** A run that did not take the road a workflow spec (`--workflow spec.json`, the
//! format of `faultgate conform`) demands: a mandatory checkpoint skipped or walked after the act it
//! gates, a handoff contract broken, an unverified value consumed as ground truth or passed on through
//! several agents, and the opt-in extensions (`every`, `confirmed_by`, `precedence`, `response`).
//!
//! **Why it matters.** A run can end well and still be wrong on the way; a workflow violation is a hard
//! block at the gate, like a policy violation.
//!
//! **Example.** `send_report` with no `confirm_with_user` before it: `checkpoint-skipped: mandatory
//! confirmation never happened: checkpoint 'confirm_with_user' absent from trajectory, guarded action
//! 'send_report' executed at seq 5`.
//!
//! **Known limits.** The events are read from the trace as `crate::workflow::from_table` describes
//! (tool steps, `faultgate.checkpoint` spans, agent-to-agent transfers); a checkpoint or handoff the trace
//! does not record cannot be seen. Sequence numbers in reasons count these events, so they differ from
//! a JSON-lines trajectory of the same run. Warnings (an uncontracted handoff) are listed in the reason
//! but do not fire the check.

use super::{Check, CheckContext, CheckKind, TraceView, Verdict};
use crate::workflow::{Severity, from_table};

pub struct WorkflowCheck;

/// The reason when the road conforms and nothing needs a warning.
pub const CONFORMS: &str = "trajectory-conforms";

impl Check for WorkflowCheck {
    fn name(&self) -> &'static str {
        "workflow"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Workflow
    }

    fn description(&self) -> &'static str {
        "The run broke the workflow spec: a mandatory checkpoint skipped or late, a handoff contract broken, an unverified value consumed or propagated (needs --workflow)."
    }

    fn default_enabled(&self) -> bool {
        false
    }

    fn run(&self, trace: &TraceView<'_>, cx: &CheckContext) -> Verdict {
        let Some(workflow) = &cx.workflow else {
            return Verdict {
                detected: false,
                confidence: 0.0,
                reason: "no workflow spec".into(),
            };
        };
        let events = from_table::trace_events(trace, workflow);
        let findings = workflow.evaluate(&events);
        let detected = findings.iter().any(|f| f.severity == Severity::Block);
        // Blocking findings first (the headline), then warnings; notes stay out of the reason.
        let mut listed: Vec<String> = Vec::new();
        for severity in [Severity::Block, Severity::Warn] {
            listed.extend(
                findings
                    .iter()
                    .filter(|f| f.severity == severity)
                    .map(|f| format!("{}: {}", f.code, f.message)),
            );
        }
        if listed.is_empty() {
            listed.push(CONFORMS.to_string());
        }
        Verdict::sure(detected, listed.join("; "))
    }
}
