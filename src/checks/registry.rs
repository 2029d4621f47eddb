//! The one list of checks. A new check is a file in `checks/` and a line in [`ALL`].

use super::{CheckContext, Columns, VerdictColumn};

/// How a check reaches its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    Rule,
    Golden,
    Judge,
    Outcome,
    /// Needs a workflow spec (`--workflow`).
    Workflow,
}

impl CheckKind {
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Rule => "rule",
            CheckKind::Golden => "golden",
            CheckKind::Judge => "judge",
            CheckKind::Outcome => "outcome",
            CheckKind::Workflow => "spec",
        }
    }
}

/// A failure mode faultgate can detect in a trace.
pub trait Check: Sync {
    /// The permanent name used on the command line and in reports.
    fn name(&self) -> &'static str;
    fn kind(&self) -> CheckKind;
    /// One line for `faultgate checks`.
    fn description(&self) -> &'static str;
    /// Returns true if and only if the check is part of the default selection.
    fn default_enabled(&self) -> bool {
        true
    }
    /// Runs over every trace of `cols.traces()`, in order, pushing exactly one verdict per trace into
    /// `out`.
    fn run(&self, cols: &Columns<'_>, cx: &CheckContext, out: &mut VerdictColumn);
}

/// Every check, in the order `faultgate checks` lists them and the default selection runs them.
pub static ALL: &[&dyn Check] = &[
    &super::search_loop::SearchLoop,
    &super::abstention::Abstention,
    &super::policy::PolicyCheck,
    &super::repeated_call::RepeatedCall,
    &super::unrecovered_tool_error::UnrecoveredToolError,
    &super::context_overflow::ContextOverflow,
    &super::wrong_answer::WrongAnswer,
    &super::truncation::Truncation,
    &super::wrong_direction::WrongDirection,
    &super::outcome::Outcome,
    &super::workflow::WorkflowCheck,
];

/// The check with this name.
pub fn find(name: &str) -> Option<&'static dyn Check> {
    ALL.iter().copied().find(|c| c.name() == name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::checks::testing::{TraceSpec, run_all};
    use crate::checks::{Reasons, Verdict};
    use crate::golden::{Golden, Outcomes};
    use crate::workflow::{SpecConfig, Workflow};

    /// Traces that make each check fire or pass in a different way, with and without spans and steps.
    fn mixed_traces() -> Vec<TraceSpec> {
        let sc = |key: &str| TraceSpec::new().root_attr("faultgate.scenario", json!(key));
        let searching = (0..12).fold(sc("loop"), |t, i| {
            t.step("search", &format!("{{\"q\": {i}}}"), "[]")
        });
        vec![
            TraceSpec::new(),
            searching,
            sc("sc1")
                .answer("The auditor is Alto.")
                .prompt("who audits?"),
            sc("sc2")
                .step("fetch", "{}", r#"{"exit_code": 1}"#)
                .step("read_file", r#"{"path": "../../etc/passwd"}"#, "x")
                .answer("I could not find it"),
            sc("sc1")
                .step("search", "{}", "[]")
                .step("search", "{ }", "[] ")
                .step("search", "{}", "[]")
                .chat_span(|s| {
                    s.attrs
                        .insert("gen_ai.response.finish_reasons".into(), json!(["length"]));
                })
                .answer("alto-5275"),
            sc("sc3")
                .span_with("send", "{}", "ok", |s| s.status_code = 2)
                .termination("token limit reached"),
            TraceSpec::new().root_status(2).step("confirm", "{}", "ok"),
        ]
    }

    fn context() -> CheckContext {
        let spec: SpecConfig = serde_json::from_value(json!({
            "mandatory_checkpoints": [{"checkpoint_id": "confirm", "must_precede": "send"}]
        }))
        .expect("spec");
        CheckContext {
            golden: Some(Golden::from_value(json!({"sc1": "Alto-5275", "sc2": "x"})).unwrap()),
            outcomes: Some(Outcomes::from_value(json!({"sc1": false, "sc2": true})).unwrap()),
            workflow: Some(Workflow::compile(spec).expect("valid spec")),
            ..CheckContext::default()
        }
    }

    #[test]
    fn a_pass_over_a_batch_gives_each_trace_the_verdict_it_gets_alone() {
        let cx = context();
        for check in ALL {
            let alone: Vec<Verdict> = mixed_traces()
                .into_iter()
                .map(|t| run_all(vec![t], *check, &cx, Reasons::All).remove(0))
                .collect();
            let together = run_all(mixed_traces(), *check, &cx, Reasons::All);
            assert_eq!(together, alone, "{}", check.name());
            // Keeping only fired reasons changes nothing else.
            let fired = run_all(mixed_traces(), *check, &cx, Reasons::Fired);
            for (f, a) in fired.iter().zip(&alone) {
                assert_eq!((f.detected, f.confidence), (a.detected, a.confidence));
                let expected = if a.detected { a.reason.as_str() } else { "" };
                assert_eq!(f.reason, expected, "{}", check.name());
            }
        }
        // The traces do make the checks fire, so the comparison covers fired reasons too.
        let fired: Vec<&str> = ALL
            .iter()
            .filter(|c| {
                run_all(mixed_traces(), **c, &cx, Reasons::Fired)
                    .iter()
                    .any(|v| v.detected)
            })
            .map(|c| c.name())
            .collect();
        assert_eq!(
            fired,
            [
                "search_loop",
                "abstention",
                "policy",
                "repeated_call",
                "unrecovered_tool_error",
                "context_overflow",
                "wrong_answer",
                "truncation",
                "outcome",
                "workflow"
            ]
        );
    }

    #[test]
    fn names_are_unique_and_described() {
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL.iter().all(|c| !c.description().is_empty()));
    }
}
