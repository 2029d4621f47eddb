//! # outcome
//!
//! **What it detects.** A scenario the team's own evaluator marked failed, from `--outcomes`
//! (`{scenario key or prompt: true | false}`), or, with `--outcomes recorded`, a trace whose own
//! recorded evaluation failed (a τ-bench reward below 1, SWE-agent `resolved: false`, the Langfuse score
//! `--outcome-score` names).
//!
//! **Why it matters.** It lets a gate combine structural checks with the outcome signal a team already
//! has, so both move the same clean rate.
//!
//! **Example.** `{"refund-o7": false}`: `outcome false in the outcomes file`; with `--outcomes recorded`,
//! `the trace's own evaluation failed`.
//!
//! **Known limits.** The outcome is taken as given; a scenario missing from the file is not judged
//! (confidence 0) and counts as clean, as is a trace that records no outcome under `--outcomes recorded`.

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::table::columns::Columns;

pub(crate) struct Outcome;

impl Check for Outcome {
    fn name(&self) -> &'static str {
        "outcome"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Outcome
    }

    fn description(&self) -> &'static str {
        "The user's own evaluator marked the scenario failed (needs --outcomes)."
    }

    fn default_enabled(&self) -> bool {
        false
    }

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        if cx.inputs.recorded_outcomes() {
            for t in cols.traces() {
                match cols.recorded_outcome(t) {
                    None => out.push(false, 0.0, "the trace records no outcome"),
                    Some(true) => out.sure(false, "the trace's own evaluation passed"),
                    Some(false) => out.sure(true, "the trace's own evaluation failed"),
                }
            }
            return;
        }
        for t in cols.traces() {
            match cx
                .inputs
                .outcomes
                .as_ref()
                .and_then(|o| o.lookup(cols.scenario.value(t), cols.prompt.value(t)))
            {
                None => out.push(false, 0.0, "no outcome for this scenario"),
                Some(true) => out.sure(false, "outcome true in the outcomes file"),
                Some(false) => out.sure(true, "outcome false in the outcomes file"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Verdict;
    use crate::checks::contract::SideInputs;
    use crate::checks::testing::{RunCheck, TraceSpec};
    use crate::golden::Outcomes;
    use serde_json::json;

    #[test]
    fn reads_the_recorded_outcome() {
        let cx = SideInputs {
            outcomes: Some(Outcomes::from_value(json!({"a": false, "b": true})).unwrap()),
            ..SideInputs::default()
        };
        let run = |key: &str| {
            TraceSpec::new()
                .root_attr("faultgate.scenario", json!(key))
                .run_with(&Outcome, &cx)
        };
        assert_eq!(
            run("a"),
            Verdict::sure(true, "outcome false in the outcomes file")
        );
        assert_eq!(
            run("b"),
            Verdict::sure(false, "outcome true in the outcomes file")
        );
        let missing = run("c");
        assert_eq!((missing.detected, missing.confidence), (false, 0.0));
    }

    #[test]
    fn recorded_takes_each_traces_own_outcome_and_no_file() {
        let cx = SideInputs {
            outcomes: Some(Outcomes::recorded()),
            ..SideInputs::default()
        };
        let run = |outcome: Option<serde_json::Value>| {
            let spec = TraceSpec::new().root_attr("faultgate.scenario", json!("a"));
            match outcome {
                Some(v) => spec.root_attr("faultgate.recorded_outcome", v),
                None => spec,
            }
            .run_with(&Outcome, &cx)
        };
        assert_eq!(
            run(Some(json!(false))),
            Verdict::sure(true, "the trace's own evaluation failed")
        );
        assert_eq!(
            run(Some(json!(true))),
            Verdict::sure(false, "the trace's own evaluation passed")
        );
        let none = run(None);
        assert_eq!(
            (none.detected, none.confidence, none.reason.as_str()),
            (false, 0.0, "the trace records no outcome")
        );
    }
}
