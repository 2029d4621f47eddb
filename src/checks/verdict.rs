//! The verdict column a check pass fills: one detected flag, confidence and reason per trace.
//!
//! Reasons are text, and most traces pass most checks, so a column builds only the reasons some output
//! of the run prints ([`Reasons`]): none for the terminal table, the gate, `baseline` and `calibrate`;
//! those of verdicts that fired for Markdown and the audit folder; every one for the JSON report and
//! `verdicts.parquet`. A check hands its reason over as a [`Reason`], which is written only when it is
//! kept, into one buffer reused across traces. Every kept reason is masked under the
//! run's redaction before it is stored, so nothing unmasked leaves the check pass.

use std::borrow::Cow;
use std::fmt::{self, Write};
use std::sync::Arc;

use arrow_array::builder::LargeStringBuilder;
use arrow_array::{ArrayRef, BooleanArray, Float64Array};

use super::Verdict;
use crate::redact::Redaction;

/// Which reasons a run keeps: those its outputs print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reasons {
    /// No reason (the terminal table, the gate, `baseline` and `calibrate` print none).
    None,
    /// Reasons of verdicts that fired (Markdown and the audit folder print no other).
    #[default]
    Fired,
    /// Every reason (the JSON report and `verdicts.parquet`).
    All,
}

impl Reasons {
    /// Returns true if and only if the reason of a verdict with this `detected` flag is kept.
    pub fn keeps(self, detected: bool) -> bool {
        match self {
            Reasons::None => false,
            Reasons::Fired => detected,
            Reasons::All => true,
        }
    }
}

/// A reason, written only when the column keeps it.
pub trait Reason {
    /// Appends the reason's text to `out`.
    fn write_to(self, out: &mut String);
}

impl Reason for &str {
    fn write_to(self, out: &mut String) {
        out.push_str(self);
    }
}

impl Reason for String {
    fn write_to(self, out: &mut String) {
        out.push_str(&self);
    }
}

impl Reason for fmt::Arguments<'_> {
    fn write_to(self, out: &mut String) {
        // Writing into a String cannot fail.
        let _ = out.write_fmt(self);
    }
}

/// A closure that writes the reason, for reasons whose parts cost something to compute.
impl<F: FnOnce(&mut String)> Reason for F {
    fn write_to(self, out: &mut String) {
        self(out);
    }
}

/// One check's verdicts over the traces of a pass, in trace order.
pub struct VerdictColumn {
    reasons: Reasons,
    redaction: Redaction,
    detected: Vec<bool>,
    confidence: Vec<f64>,
    reason: LargeStringBuilder,
    scratch: String,
}

impl VerdictColumn {
    /// An empty column with room for `capacity` traces.
    pub fn new(capacity: usize, reasons: Reasons, redaction: Redaction) -> VerdictColumn {
        VerdictColumn {
            reasons,
            redaction,
            detected: Vec::with_capacity(capacity),
            confidence: Vec::with_capacity(capacity),
            reason: LargeStringBuilder::with_capacity(capacity, 0),
            scratch: String::new(),
        }
    }

    /// Appends the next trace's verdict; `reason` is written (and masked) only when it is kept.
    pub fn push(&mut self, detected: bool, confidence: f64, reason: impl Reason) {
        self.detected.push(detected);
        self.confidence.push(confidence);
        if self.reasons.keeps(detected) {
            self.scratch.clear();
            reason.write_to(&mut self.scratch);
            match self.redaction.mask(&self.scratch) {
                Cow::Borrowed(text) => self.reason.append_value(text),
                Cow::Owned(masked) => self.reason.append_value(masked),
            }
        } else {
            self.reason.append_null();
        }
    }

    /// Appends a verdict with full confidence.
    pub fn sure(&mut self, detected: bool, reason: impl Reason) {
        self.push(detected, 1.0, reason);
    }

    /// Appends a verdict reached for one trace on its own (a judge's, say).
    pub fn push_verdict(&mut self, verdict: Verdict) {
        self.push(verdict.detected, verdict.confidence, verdict.reason);
    }

    /// Number of verdicts so far.
    pub fn len(&self) -> usize {
        self.detected.len()
    }

    /// Returns true if and only if no verdict was pushed.
    pub fn is_empty(&self) -> bool {
        self.detected.is_empty()
    }

    /// The detected, confidence and reason arrays (reason null where not kept).
    pub fn finish(mut self) -> [ArrayRef; 3] {
        [
            Arc::new(BooleanArray::from(self.detected)),
            Arc::new(Float64Array::from(self.confidence)),
            Arc::new(self.reason.finish()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Float64Type;
    use arrow_array::{Array, LargeStringArray};

    use super::*;

    fn reasons_of(column: VerdictColumn) -> Vec<Option<String>> {
        let [_, _, reason] = column.finish();
        let reason: &LargeStringArray = reason.as_string::<i64>();
        (0..reason.len())
            .map(|i| reason.is_valid(i).then(|| reason.value(i).to_string()))
            .collect()
    }

    #[test]
    fn only_fired_reasons_are_written_unless_all_are_asked_for() {
        let written = Cell::new(0);
        let mut column = VerdictColumn::new(3, Reasons::Fired, Redaction::Off);
        column.sure(false, |r: &mut String| {
            written.set(written.get() + 1);
            r.push_str("clean");
        });
        column.push(true, 0.5, |r: &mut String| {
            written.set(written.get() + 1);
            r.push_str("fired");
        });
        column.push_verdict(Verdict::sure(false, "also clean"));
        assert_eq!(written.get(), 1, "the clean verdict's reason was built");
        assert_eq!(reasons_of(column), vec![None, Some("fired".into()), None]);

        let mut none = VerdictColumn::new(1, Reasons::None, Redaction::Off);
        none.sure(true, |_: &mut String| written.set(written.get() + 1));
        assert_eq!(written.get(), 1, "a reason no output prints was built");
        assert_eq!(reasons_of(none), vec![None]);

        let mut all = VerdictColumn::new(2, Reasons::All, Redaction::Off);
        all.sure(false, format_args!("{} steps", 3));
        all.sure(true, String::from("fired"));
        assert_eq!(
            reasons_of(all),
            vec![Some("3 steps".into()), Some("fired".into())]
        );
    }

    #[test]
    fn kept_reasons_are_masked_and_flags_and_confidences_kept() {
        let mut column = VerdictColumn::new(2, Reasons::All, Redaction::Builtin);
        column.sure(true, "mail ada@example.com failed");
        column.push(false, 0.0, "nothing to mask");
        assert_eq!(column.len(), 2);
        let [detected, confidence, reason] = column.finish();
        let detected = detected.as_boolean();
        assert!(detected.value(0) && !detected.value(1));
        let confidence = confidence.as_primitive::<Float64Type>();
        assert_eq!((confidence.value(0), confidence.value(1)), (1.0, 0.0));
        let reason = reason.as_string::<i64>();
        assert!(
            !reason.value(0).contains("ada@example.com"),
            "{}",
            reason.value(0)
        );
        assert_eq!(
            reason.value(0),
            Redaction::Builtin.mask("mail ada@example.com failed")
        );
        assert_eq!(reason.value(1), "nothing to mask");
    }
}
