//! The check contract: what every check declares and what a check pass receives and fills.
//!
//! A check ([`Check`]) is a pass over one batch: it reads the batch's typed columns
//! ([`crate::table::columns::Columns`]) and its [`CheckContext`] (the run's [`SideInputs`], and the
//! judge's verdicts on the batch for a judged check), and pushes one verdict per trace into a
//! [`VerdictColumn`]. Its registry line says what the rest of the run needs besides: the [`Input`]s it
//! reads and its [`Gating`].
//!
//! Reasons are text, and most traces pass most checks, so a column builds only the reasons some output
//! of the run prints ([`Reasons`]): none for the terminal table, the gate, `baseline` and `calibrate`;
//! those of verdicts that fired for Markdown and the audit folder; every one for the JSON report and
//! `verdicts.parquet`. A check hands its reason over as a [`Reason`], which is written only when it is
//! kept, into one buffer reused across traces. Every kept reason is masked under the
//! run's redaction before it is stored, so nothing unmasked leaves the check pass.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::LargeStringBuilder;
use arrow_array::{ArrayRef, BooleanArray, Float64Array};

use crate::golden::{Golden, Outcomes};
use crate::redact::Redaction;
use crate::table::columns::Columns;

/// A failure mode faultgate can detect in a trace.
pub trait Check: Sync {
    /// The permanent name used on the command line and in reports.
    fn name(&self) -> &'static str;
    /// How the check reaches its verdict, which says which side input it needs.
    fn kind(&self) -> CheckKind;
    /// One line for `faultgate checks`.
    fn description(&self) -> &'static str;
    /// Returns true if and only if the check is part of the default selection.
    fn default_enabled(&self) -> bool {
        true
    }
    /// Runs over every trace of `cols.traces()`, in order, pushing exactly one verdict per trace into
    /// `out`.
    fn run(&self, cols: &Columns<'_>, cx: &CheckContext<'_>, out: &mut VerdictColumn);
}

/// How a check reaches its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// A rule over the trace's own columns; needs no side input.
    Rule,
    /// Compares the answer with the golden file's expected answer.
    Golden,
    /// Asks an LLM judge.
    Judge,
    /// Reads the outcomes file's verdict on the trace.
    Outcome,
    /// Needs a workflow spec (`--workflow`).
    Workflow,
    /// Compares the run's calls with the expectations file (`--expect`).
    Expect,
}

impl CheckKind {
    /// The kind as the check table of docs/checks.md and `faultgate checks` print it (`rule`,
    /// `golden`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Rule => "rule",
            CheckKind::Golden => "golden",
            CheckKind::Judge => "judge",
            CheckKind::Outcome => "outcome",
            CheckKind::Workflow => "spec",
            CheckKind::Expect => "expect",
        }
    }
}

/// A side input a check reads besides the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Expected answers (`--golden`).
    Golden,
    /// The team's own outcomes (`--outcomes`).
    Outcomes,
    /// The tool-call policy (`--policy`; without it, the empty policy).
    Policy,
    /// A workflow spec (`--workflow`).
    Workflow,
    /// A judge (`--judge`).
    Judge,
    /// Expected actions (`--expect`).
    Expect,
}

impl Input {
    /// The flag that gives the input.
    pub fn flag(self) -> &'static str {
        match self {
            Input::Golden => "--golden",
            Input::Outcomes => "--outcomes",
            Input::Policy => "--policy",
            Input::Workflow => "--workflow",
            Input::Judge => "--judge",
            Input::Expect => "--expect",
        }
    }
}

/// What a check's firing does at the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gating {
    /// The trace is not clean; the gate weighs the run's clean rate against the band.
    CleanRate,
    /// A hard block: the gate fails whatever the clean rate, and lists the traces as policy violations
    /// (the gate object always has the list, as in 0.4.1).
    PolicyBlock,
    /// A hard block listed as workflow violations; the gate object has the list only when the check ran,
    /// so runs without it keep 0.4.1's gate object.
    WorkflowBlock,
}

/// The side inputs a run's checks read besides the trace, loaded once per run.
#[derive(Default)]
pub struct SideInputs {
    /// Expected answers per scenario (`--golden`); `None` when not given.
    pub golden: Option<Golden>,
    /// Task outcomes per trace (`--outcomes`); `None` when not given.
    pub outcomes: Option<Outcomes>,
    /// The tool-use policy (`--policy`); the built-in default when none is given.
    pub policy: crate::policy::Policy,
    /// The workflow spec of `--workflow`; the `workflow` check needs it.
    pub workflow: Option<crate::workflow::Workflow>,
    /// The expected actions of `--expect`; the `expected_actions` check needs them.
    pub expect: Option<crate::expect::Expectations>,
}

impl SideInputs {
    /// Returns true if and only if the outcomes are those the traces recorded (`--outcomes recorded`).
    pub fn recorded_outcomes(&self) -> bool {
        self.outcomes.as_ref().is_some_and(Outcomes::is_recorded)
    }
}

/// What a check pass reads besides the batch's columns.
#[derive(Clone, Copy)]
pub struct CheckContext<'a> {
    /// The run's side inputs.
    pub inputs: &'a SideInputs,
    /// The judge's verdicts on the batch, which the judged checks push; empty when the run has no judge.
    pub judged: &'a JudgedVerdicts,
}

/// A judge's verdicts on the traces of one batch, by judged check: the answers the run asked for
/// before the batch's checks ran, handed to them as data.
#[derive(Debug, Default)]
pub struct JudgedVerdicts {
    /// Per judged check, one verdict per trace of `traces`, in order.
    by_check: HashMap<String, Vec<Verdict>>,
    traces: Range<usize>,
}

impl JudgedVerdicts {
    /// No verdict yet, for the traces `traces` of a batch.
    pub fn new(traces: Range<usize>) -> JudgedVerdicts {
        JudgedVerdicts {
            by_check: HashMap::new(),
            traces,
        }
    }

    /// Sets one judged check's verdicts, one per trace, in trace order.
    pub fn insert(&mut self, check: &str, verdicts: Vec<Verdict>) {
        debug_assert_eq!(verdicts.len(), self.traces.len());
        self.by_check.insert(check.to_string(), verdicts);
    }

    /// The verdict of the named check on trace `t`; `None` when the judge gave it none.
    pub fn get(&self, check: &str, t: usize) -> Option<&Verdict> {
        let i = t.checked_sub(self.traces.start)?;
        self.by_check.get(check)?.get(i)
    }
}

/// What one check concluded about one trace, as a value (a judge's verdict, a test's expectation).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether the check fired.
    pub detected: bool,
    /// How sure the check is, from 0 to 1.
    pub confidence: f64,
    /// Why the check fired or not; empty when it gives no reason.
    pub reason: String,
}

impl Verdict {
    /// A verdict with full confidence.
    pub fn sure(detected: bool, reason: impl Into<String>) -> Verdict {
        Verdict {
            detected,
            confidence: 1.0,
            reason: reason.into(),
        }
    }

    /// Not detected, with no confidence: the verdict of a check that could not decide.
    pub fn unsure(reason: impl Into<String>) -> Verdict {
        Verdict {
            detected: false,
            confidence: 0.0,
            reason: reason.into(),
        }
    }
}

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
    /// The last reason text masked and what masking gave: most traces of a pass get the same reason
    /// text as the one before (a passing check's fixed wording), so each run of one text is masked once.
    last_raw: Option<String>,
    last_masked: String,
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
            last_raw: None,
            last_masked: String::new(),
        }
    }

    /// Appends the next trace's verdict; `reason` is written (and masked) only when it is kept.
    pub fn push(&mut self, detected: bool, confidence: f64, reason: impl Reason) {
        self.detected.push(detected);
        self.confidence.push(confidence);
        if self.reasons.keeps(detected) {
            self.scratch.clear();
            reason.write_to(&mut self.scratch);
            if self.last_raw.as_deref() != Some(self.scratch.as_str()) {
                match self.redaction.mask(&self.scratch) {
                    Cow::Borrowed(text) => {
                        self.last_masked.clear();
                        self.last_masked.push_str(text);
                    }
                    Cow::Owned(masked) => self.last_masked = masked,
                }
                let last = self.last_raw.get_or_insert_with(String::new);
                last.clear();
                last.push_str(&self.scratch);
            }
            self.reason.append_value(&self.last_masked);
        } else {
            self.reason.append_null();
        }
    }

    /// Appends a verdict with full confidence.
    pub fn sure(&mut self, detected: bool, reason: impl Reason) {
        self.push(detected, 1.0, reason);
    }

    /// Appends a verdict reached for one trace on its own (a judge's, say).
    pub fn push_verdict(&mut self, verdict: &Verdict) {
        self.push(
            verdict.detected,
            verdict.confidence,
            verdict.reason.as_str(),
        );
    }

    /// Number of verdicts so far.
    pub fn len(&self) -> usize {
        self.detected.len()
    }

    /// Returns true if and only if no verdict was pushed.
    pub fn is_empty(&self) -> bool {
        self.detected.is_empty()
    }

    /// The kept (masked) reason of the `i`-th verdict; `None` where the column did not keep it.
    pub fn reason(&self, i: usize) -> Option<&str> {
        if self
            .reason
            .validity_slice()
            .is_some_and(|bits| bits[i / 8] & (1 << (i % 8)) == 0)
        {
            return None;
        }
        let offsets = self.reason.offsets_slice();
        let (from, to) = (offsets[i] as usize, offsets[i + 1] as usize);
        std::str::from_utf8(&self.reason.values_slice()[from..to]).ok()
    }

    /// The column with each kept reason replaced by what `f` makes of it (given its verdict's place).
    pub(crate) fn rewrite_reasons(
        mut self,
        mut f: impl FnMut(usize, &str) -> Cow<'_, str>,
    ) -> VerdictColumn {
        let mut reason = LargeStringBuilder::with_capacity(self.len(), 0);
        for i in 0..self.len() {
            match self.reason(i) {
                Some(text) => reason.append_value(f(i, text)),
                None => reason.append_null(),
            }
        }
        self.reason = reason;
        self
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

    /// The reasons as the finished column holds them, after checking that the column read them
    /// alike while it was being built.
    fn reasons_of(column: VerdictColumn) -> Vec<Option<String>> {
        let building: Vec<Option<String>> = (0..column.len())
            .map(|i| column.reason(i).map(str::to_string))
            .collect();
        let [_, _, reason] = column.finish();
        let reason: &LargeStringArray = reason.as_string::<i64>();
        let finished: Vec<Option<String>> = (0..reason.len())
            .map(|i| reason.is_valid(i).then(|| reason.value(i).to_string()))
            .collect();
        assert_eq!(building, finished);
        finished
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
        column.push_verdict(&Verdict::sure(false, "also clean"));
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
    fn runs_of_one_reason_and_alternating_reasons_are_each_masked_as_written() {
        let texts = [
            "ok",
            "ok",
            "mail ada@example.com failed",
            "mail ada@example.com failed",
            "ok",
            "",
            "call 415-555-0177",
            "ok",
        ];
        let mut column = VerdictColumn::new(texts.len(), Reasons::All, Redaction::Builtin);
        for text in texts {
            column.sure(false, text);
        }
        let [_, _, reason] = column.finish();
        let reason = reason.as_string::<i64>();
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(reason.value(i), Redaction::Builtin.mask(text), "{text:?}");
        }
        assert_ne!(reason.value(3), texts[3]);
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
