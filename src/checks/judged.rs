//! The pass of a judged check: the built-in `wrong_direction` and the custom checks of
//! `--judge-checks` (docs/compatibility.md §13).
//!
//! A judged check asks nothing itself. Before a batch's checks run, the pipeline asks the run's judge
//! for its verdicts on the whole batch (calls overlap, the cache and `--judge-max-calls` apply there,
//! see `crate::judge`) and hands them to every pass of the batch in [`CheckContext::judged`]; the
//! pass pushes them in trace order.

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::table::columns::Columns;

/// The pass of a judged check: per trace, the judge's verdict on it, or "no judge configured" when
/// the run's judge gave none (a run without a judge).
pub(crate) fn judged_column(
    cols: &Columns<'_>,
    cx: &CheckContext<'_>,
    check: &str,
    out: &mut VerdictColumn,
) {
    for t in cols.traces() {
        match cx.judged.get(check, t) {
            Some(verdict) => out.push_verdict(verdict),
            None => out.push(false, 0.0, "no judge configured"),
        }
    }
}

/// A custom judged check (`--judge-checks`), run, reported, gated and calibrated like
/// `wrong_direction`.
pub(crate) struct CustomCheck {
    name: &'static str,
    description: &'static str,
}

impl Check for CustomCheck {
    fn name(&self) -> &'static str {
        self.name
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Judge
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        judged_column(cols, cx, self.name, out);
    }
}

impl CustomCheck {
    /// The check named `name` that asks `question`. The registry holds `&'static dyn Check`; a run
    /// loads its file once, so the few bytes of each custom check live for the rest of the process.
    pub(crate) fn leak(name: &str, question: &str) -> &'static dyn Check {
        Box::leak(Box::new(CustomCheck {
            name: Box::leak(name.to_string().into_boxed_str()),
            description: Box::leak(format!("Judged: {question}").into_boxed_str()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::contract::{JudgedVerdicts, Reasons, SideInputs, Verdict};
    use crate::checks::testing::run_judged;
    use crate::table::testing::TraceSpec;

    #[test]
    fn a_judged_pass_pushes_the_judges_verdicts_and_says_when_there_is_none() {
        let check = CustomCheck::leak("tone", "Was it rude?");
        assert_eq!(check.description(), "Judged: Was it rude?");
        let mut judged = JudgedVerdicts::new(0..2);
        let rude = Verdict {
            detected: true,
            confidence: 0.75,
            reason: "rude".into(),
        };
        judged.insert("tone", vec![Verdict::unsure("polite"), rude.clone()]);
        let traces = vec![TraceSpec::new(), TraceSpec::new()];
        let verdicts = run_judged(traces, check, &SideInputs::default(), &judged, Reasons::All);
        assert_eq!(verdicts, [Verdict::unsure("polite"), rude]);
        // Without the judge's verdicts (a run without a judge), the check cannot decide.
        let none = run_judged(
            vec![TraceSpec::new()],
            check,
            &SideInputs::default(),
            &JudgedVerdicts::default(),
            Reasons::All,
        );
        assert_eq!(none, [Verdict::unsure("no judge configured")]);
    }
}
