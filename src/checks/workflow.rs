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
//! **Known limits.** The events are read from the trace's tool steps, `faultgate.checkpoint` spans and
//! agent-to-agent transfers (see `docs/workflow.md`); a checkpoint or handoff the trace does not
//! record cannot be seen. Sequence numbers in reasons count these events, so they differ from
//! a JSON-lines trajectory of the same run. Warnings (an uncontracted handoff) are listed in the reason
//! but do not fire the check.

use std::fmt::Write;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::table::columns::Columns;
use crate::workflow::{Severity, from_table};

pub(crate) struct WorkflowCheck;

/// The reason when the road conforms and nothing needs a warning.
pub(crate) const CONFORMS: &str = "trajectory-conforms";

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

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        let Some(workflow) = &cx.inputs.workflow else {
            for _ in cols.traces() {
                out.push(false, 0.0, "no workflow spec");
            }
            return;
        };
        for t in cols.traces() {
            let events = from_table::trace_events(cols, t, workflow);
            let findings = workflow.evaluate(&events);
            let detected = findings.iter().any(|f| f.severity == Severity::Block);
            out.sure(detected, |r: &mut String| {
                // Blocking findings first (the headline), then warnings; notes stay out of the reason.
                for severity in [Severity::Block, Severity::Warn] {
                    for f in findings.iter().filter(|f| f.severity == severity) {
                        if !r.is_empty() {
                            r.push_str("; ");
                        }
                        let _ = write!(r, "{}: {}", f.code, f.message);
                    }
                }
                if r.is_empty() {
                    r.push_str(CONFORMS);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::checks::Verdict;
    use crate::checks::contract::SideInputs;
    use crate::checks::testing::{RunCheck, TraceSpec};
    use crate::workflow::{SpecConfig, Workflow};

    fn context() -> SideInputs {
        let config: SpecConfig = serde_json::from_value(json!({
            "mandatory_checkpoints": [{"checkpoint_id": "confirm", "must_precede": "send"}],
            "handoff_contracts": [{"from_agent": "a", "to_agent": "b", "required_fields": ["x"]}]
        }))
        .expect("spec");
        SideInputs {
            workflow: Some(Workflow::compile(config).expect("valid spec")),
            ..SideInputs::default()
        }
    }

    fn run(spec: TraceSpec) -> Verdict {
        spec.root_attr("gen_ai.agent.name", json!("a"))
            .run_with(&WorkflowCheck, &context())
    }

    #[test]
    fn blocks_name_code_and_message_and_fire() {
        let v = run(TraceSpec::new().step("send", "{}", "ok"));
        assert_eq!(
            v,
            Verdict::sure(
                true,
                "checkpoint-skipped: mandatory confirmation never happened: checkpoint 'confirm' absent from trajectory, guarded action 'send' executed at seq 1"
            )
        );
    }

    #[test]
    fn warnings_alone_do_not_fire_and_a_clean_road_conforms() {
        let warned = run(TraceSpec::new()
            .step("confirm", "{}", "ok")
            .step("transfer_to_c", "{}", "ok")
            .step("send", "{}", "ok"));
        assert!(!warned.detected);
        assert!(
            warned
                .reason
                .starts_with("uncontracted-handoff: a->c (seq 2)"),
            "{}",
            warned.reason
        );
        let clean = run(TraceSpec::new()
            .step("transfer_to_b", r#"{"x": 1}"#, "ok")
            .step("confirm", "{}", "ok")
            .step("send", "{}", "ok"));
        assert_eq!(clean, Verdict::sure(false, CONFORMS));
    }

    #[test]
    fn without_a_spec_nothing_is_judged() {
        let v = TraceSpec::new().run(&WorkflowCheck);
        assert_eq!((v.detected, v.confidence), (false, 0.0));
    }
}
