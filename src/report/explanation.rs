//! Why a scenario regressed, as `check --explain` found it, and its wording in the outputs: a line
//! under the terminal's regressions, the JSON report's `explanations`, a Markdown section and the HTML
//! step lists.
//!
//! `crate::explain` aligns the traces and fills these values; the text here is already redacted and
//! cut, so renderers only place it.

use serde::Serialize;

use super::render::shown::{IdColumn, code_span};
use super::steps::StepView;
use crate::compat::fmt::md_cell;

/// Characters of a tool, arguments, result or answer an explanation quotes (after redaction), as a
/// reason quotes arguments.
pub(crate) const QUOTED_CHARS: usize = 60;

/// How a candidate first left a baseline's road.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A call the baseline did not make.
    ExtraCall,
    /// A call of the baseline the candidate did not make.
    MissingCall,
    /// Another tool at the same place.
    OtherTool,
    /// The same tool with other arguments.
    OtherArguments,
    /// The same call failed where the baseline's did not.
    ErrorResult,
    /// The same call came back empty where the baseline's did not.
    EmptyResult,
    /// The steps agree, and the candidate gave no answer where the baseline gave one.
    NoAnswer,
    /// The steps agree, and the answers differ.
    OtherAnswer,
}

impl Kind {
    /// The kind as the outputs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ExtraCall => "extra_call",
            Kind::MissingCall => "missing_call",
            Kind::OtherTool => "other_tool",
            Kind::OtherArguments => "other_arguments",
            Kind::ErrorResult => "error_result",
            Kind::EmptyResult => "empty_result",
            Kind::NoAnswer => "no_answer",
            Kind::OtherAnswer => "other_answer",
        }
    }

    /// Returns true if and only if the kind is about the answers, not a step.
    pub fn is_answer(self) -> bool {
        matches!(self, Kind::NoAnswer | Kind::OtherAnswer)
    }
}

/// What one side did at the divergence: a step, or its answer once it had no step left there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Side {
    /// A tool call.
    Step {
        /// The tool called.
        tool: String,
        /// Its arguments as recorded.
        arguments: String,
        /// What it gave back.
        result: String,
    },
    /// The answer.
    Answer {
        /// The final answer; `None`: no answer.
        answer: Option<String>,
    },
}

/// The explanations, in order (regressions in band order, then the other scenarios in run order), and
/// notes about what could not be explained.
#[derive(Debug, Default)]
pub(crate) struct Explained {
    pub explanations: Vec<Explanation>,
    pub notes: Vec<String>,
}

/// The first divergence of a regressed scenario's candidate trace from the closest clean baseline
/// trace. Serialised with the keys of the JSON report's `explanations`, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The scenario key (redacted).
    pub scenario: String,
    /// The candidate trace explained: the scenario's first trace on which a check fired.
    pub trace_id: String,
    /// The baseline run of the closest clean trace, as given on the command line.
    pub baseline_run: String,
    /// The closest clean baseline trace.
    pub baseline_trace_id: String,
    /// How the candidate left that trace's road.
    pub kind: Kind,
    /// The candidate's step at the divergence, 1-based; one past its last step for its answer.
    pub step: usize,
    /// The baseline's step at the divergence, 1-based; one past its last step for its answer.
    pub baseline_step: usize,
    /// What the candidate did at the divergence.
    pub candidate: Side,
    /// What the baseline trace did there.
    pub baseline: Side,
    /// The first check that fired on the candidate trace, and its reason (redacted).
    pub check: String,
    /// That check's reason.
    pub reason: String,
    /// Steps after the divergence that still differ.
    pub later_differences: usize,
    /// A regression (else a scenario `--explain-all` added).
    #[serde(skip)]
    pub regressed: bool,
    /// The candidate trace's steps as the HTML report shows them.
    #[serde(skip)]
    pub candidate_steps: Vec<StepView>,
    /// The baseline trace's steps, likewise.
    #[serde(skip)]
    pub baseline_steps: Vec<StepView>,
    /// The candidate trace's answer as the HTML report shows it (redacted, cut).
    #[serde(skip)]
    pub candidate_answer: Option<String>,
    /// The baseline trace's answer, likewise.
    #[serde(skip)]
    pub baseline_answer: Option<String>,
}

/// `text` cut to `max` characters with `…`.
pub(crate) fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A side in words: `tool(arguments)`, with ` → result` when the result is the point.
fn side_words(side: &Side, with_result: bool) -> String {
    match side {
        Side::Step {
            tool,
            arguments,
            result,
        } if with_result => format!("{tool}({arguments}) → {result}"),
        Side::Step {
            tool, arguments, ..
        } => format!("{tool}({arguments})"),
        Side::Answer { answer: Some(a) } => format!("answered \"{a}\""),
        Side::Answer { answer: None } => "gave no answer".to_string(),
    }
}

impl Explanation {
    /// The terminal line, e.g. `r-0208 (search_loop): step 4 extra_call search({"q": …}) — baseline
    /// run2.json answered after step 3`.
    pub fn line(&self) -> String {
        let results = matches!(self.kind, Kind::ErrorResult | Kind::EmptyResult);
        let head = format!("{} ({})", self.scenario, self.check);
        let run = &self.baseline_run;
        if self.kind.is_answer() {
            return format!(
                "{head}: after step {} {} {} — baseline {run} {}",
                self.step - 1,
                self.kind.as_str(),
                side_words(&self.candidate, false),
                side_words(&self.baseline, false)
            );
        }
        let candidate = match &self.candidate {
            Side::Step { .. } => side_words(&self.candidate, results),
            Side::Answer { .. } => format!(
                "({} after step {})",
                side_words(&self.candidate, false),
                self.step - 1
            ),
        };
        let baseline = match &self.baseline {
            Side::Step { .. } => format!(
                "called {} at step {}",
                side_words(&self.baseline, results),
                self.baseline_step
            ),
            Side::Answer { answer: Some(_) } => {
                format!("answered after step {}", self.baseline_step - 1)
            }
            Side::Answer { answer: None } => {
                format!(
                    "stopped without an answer after step {}",
                    self.baseline_step - 1
                )
            }
        };
        format!(
            "{head}: step {} {} {candidate} — baseline {run} {baseline}",
            self.step,
            self.kind.as_str()
        )
    }
}

/// The terminal lines under the gate's regressions: one per explanation, two spaces in; then the
/// scenarios `--explain-all` added, under their own heading.
pub(crate) fn terminal_lines(explanations: &[Explanation]) -> (Vec<String>, Vec<String>) {
    let lines = |regressed: bool| -> Vec<String> {
        explanations
            .iter()
            .filter(|e| e.regressed == regressed)
            .map(|e| format!("  {}", e.line()))
            .collect()
    };
    let mut others = lines(false);
    if !others.is_empty() {
        others.insert(
            0,
            "explained (a check fired that no baseline run of the scenario fired):".to_string(),
        );
    }
    (lines(true), others)
}

/// The Markdown section: one item per explanation.
pub(crate) fn markdown_lines(explanations: &[Explanation], ids: IdColumn) -> Vec<String> {
    if explanations.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![
        String::new(),
        "### Where the regressions left the baseline".to_string(),
        String::new(),
    ];
    for e in explanations {
        // Code spans in a list item, outside a table: a pipe needs no escape there (an escape would
        // show), and a key or id is never cut in two.
        lines.push(format!(
            "- {} · trace {} · {}: {}",
            code_span(&e.scenario),
            code_span(&ids.shown(&e.trace_id)),
            md_cell(&e.check),
            md_cell(e.line().split_once(": ").map_or("", |(_, rest)| rest))
        ));
        if e.later_differences > 0 {
            lines.push(format!(
                "  ({} later step(s) differ from baseline trace {})",
                e.later_differences,
                code_span(&ids.shown(&e.baseline_trace_id))
            ));
        }
    }
    lines
}
