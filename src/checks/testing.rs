//! Running checks over hand-built traces ([`TraceSpec`]) in their unit tests.

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, Float64Array};

use super::contract::{
    Check, CheckContext, JudgedVerdicts, Reasons, SideInputs, Verdict, VerdictColumn,
};
use crate::redact::Redaction;
use crate::table::columns::Columns;
pub(crate) use crate::table::testing::TraceSpec;

/// One check run on one hand-built trace.
pub(crate) trait RunCheck {
    /// Runs `check` on this trace, with no side input.
    fn run(self, check: &dyn Check) -> Verdict;
    /// Runs `check` on this trace with these side inputs.
    fn run_with(self, check: &dyn Check, inputs: &SideInputs) -> Verdict;
}

impl RunCheck for TraceSpec {
    fn run(self, check: &dyn Check) -> Verdict {
        self.run_with(check, &SideInputs::default())
    }

    fn run_with(self, check: &dyn Check, inputs: &SideInputs) -> Verdict {
        run_all(vec![self], check, inputs, Reasons::All)
            .pop()
            .expect("one verdict per trace")
    }
}

/// Runs one check as a pass over one batch of these traces and reads its column back, one verdict
/// per trace in order; a reason the column did not keep comes back empty.
pub(crate) fn run_all(
    specs: Vec<TraceSpec>,
    check: &dyn Check,
    inputs: &SideInputs,
    reasons: Reasons,
) -> Vec<Verdict> {
    run_judged(specs, check, inputs, &JudgedVerdicts::default(), reasons)
}

/// [`run_all`] with the judge's verdicts on the batch.
pub(crate) fn run_judged(
    specs: Vec<TraceSpec>,
    check: &dyn Check,
    inputs: &SideInputs,
    judged: &JudgedVerdicts,
    reasons: Reasons,
) -> Vec<Verdict> {
    let batch = crate::table::testing::batch(specs);
    let cols = Columns::new(&batch);
    let mut out = VerdictColumn::new(batch.len(), reasons, Redaction::Off);
    check.run(&cols, &CheckContext { inputs, judged }, &mut out);
    assert_eq!(out.len(), batch.len(), "one verdict per trace");
    let [detected, confidence, reason] = out.finish();
    let detected: &BooleanArray = detected.as_boolean();
    let confidence: &Float64Array = confidence.as_primitive::<arrow_array::types::Float64Type>();
    let reason = reason.as_string::<i64>();
    (0..batch.len())
        .map(|t| Verdict {
            detected: detected.value(t),
            confidence: confidence.value(t),
            reason: if reason.is_valid(t) {
                reason.value(t).to_string()
            } else {
                String::new()
            },
        })
        .collect()
}

/// Seeded draws below `n` (xorshift): generated test inputs that are the same on every run.
pub(crate) fn draws(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}
