//! # context_overflow
//!
//! **What it detects.** A run that hit the model's context window or output token limit: a cutoff finish
//! reason (`length`, `max_tokens`, ...), or an overflow message in a span status, an `error.type`, an
//! error result of a tool, or the run's termination reason. When a span at or before the cut compacted
//! the context (a `compaction` message part or finish reason), the reason names it: the compaction did
//! not keep the run within the window.
//!
//! **Why it matters.** A truncated prompt or answer fails silently: the model answers from partial
//! context, or the answer stops mid-sentence.
//!
//! **Example.** A chat span with `gen_ai.response.finish_reasons = ["length"]`:
//! `span 2 (chat) stopped on finish reason 'length': output cut at the token limit`.
//!
//! **Known limits.** Provider phrasings are matched by shape; a new provider wording is missed until it is
//! added. A tool result is searched only when it is an error (starts with `Error` or is a structural
//! error), so a document that quotes "maximum context length" does not fire.

use std::sync::LazyLock;

use arrow_array::Array;
use regex_automata::meta::Regex;

use super::contract::{Check, CheckContext, CheckKind, VerdictColumn};
use crate::compat::reason::py_repr_str;
use crate::compat::value::is_py_space;
use crate::table::columns::Columns;
use crate::table::columns::opt;

const CUTOFF_REASONS: [&str; 5] = [
    "length",
    "max_tokens",
    "max_output_tokens",
    "model_length",
    "model_context_window_exceeded",
];

static OVERFLOW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)",
        r"context[ _-]?length[ _-]?exceeded",
        r"|maximum context length",
        r"|context[ _-]?window[ _-]?(?:exceeded|overflow)",
        r"|exceeds?\s+the\s+(?:model'?s\s+)?(?:context|token)\s+(?:window|limit)",
        r"|prompt is too long",
        r"|too many (?:input )?tokens",
        r"|token limit (?:reached|exceeded)",
        r"|(?:max|maximum)[ _-]?tokens? (?:limit )?(?:reached|exceeded)",
        r"|exceeds?\s+the\s+maximum\s+number\s+of\s+tokens",
        r"|input is too long for (?:the )?requested model",
    ))
    .expect("overflow phrases compile")
});

/// Whether a finish reason is a cutoff, in any case. An ASCII reason is compared in place; any other
/// is lowercased the Unicode way first, since that maps a few non-ASCII letters onto ASCII ones (the
/// Kelvin sign onto `k` of `max_tokens`).
fn is_cutoff(reason: &str) -> bool {
    if reason.is_ascii() {
        CUTOFF_REASONS
            .iter()
            .any(|cutoff| reason.eq_ignore_ascii_case(cutoff))
    } else {
        CUTOFF_REASONS.contains(&reason.to_lowercase().as_str())
    }
}

fn overflow_phrase(text: &str) -> Option<&str> {
    OVERFLOW.find(text).map(|m| &text[m.range()])
}

pub(crate) struct ContextOverflow;

impl Check for ContextOverflow {
    fn name(&self) -> &'static str {
        "context_overflow"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Rule
    }

    fn description(&self) -> &'static str {
        "The run hit the context window or output token limit (finish reason or provider error)."
    }

    fn run(&self, cols: &Columns<'_>, _cx: &CheckContext<'_>, out: &mut VerdictColumn) {
        for t in cols.traces() {
            let Some((hit, at)) = overflow(cols, t) else {
                out.sure(false, "no context overflow or token cutoff");
                continue;
            };
            let compacted = compacted_before(cols, t, at);
            out.sure(true, |reason: &mut String| {
                use std::fmt::Write;
                // Writing into a String cannot fail.
                let _ = match hit {
                    Hit::FinishReason { p, name, reason: r } => write!(
                        reason,
                        "span {} ({name}) stopped on finish reason {}: output cut at the token limit",
                        p + 1,
                        py_repr_str(r)
                    ),
                    Hit::Span { p, name, label, hit } => {
                        write!(reason, "span {} ({name}) {label}: {}", p + 1, py_repr_str(hit))
                    }
                    Hit::Step { i, tool, hit } => write!(
                        reason,
                        "step {} ({tool}) result: {}",
                        i + 1,
                        py_repr_str(hit)
                    ),
                    Hit::Termination(hit) => {
                        write!(reason, "run terminated: {}", py_repr_str(hit))
                    }
                };
                if let Some((p, name)) = compacted {
                    let _ = write!(
                        reason,
                        "; the context was compacted at span {} ({name}) before the cut",
                        p + 1
                    );
                }
            });
        }
    }
}

/// The last span of trace `t` at or before position `at` (every span when `None`) whose context was
/// compacted, with its name: an overflow after a compaction is one the compaction did not prevent.
fn compacted_before<'a>(
    cols: &Columns<'a>,
    t: usize,
    at: Option<usize>,
) -> Option<(usize, &'a str)> {
    let spans = cols.span_rows(t);
    let first = spans.start;
    let end = at.map_or(spans.end, |p| (first + p + 1).min(spans.end));
    (first..end)
        .rev()
        .find(|&row| cols.compacted.value(row))
        .map(|row| (row - first, cols.name.value(row)))
}

/// Where a trace first shows an overflow, in the order the sources are searched.
enum Hit<'a> {
    FinishReason {
        p: usize,
        name: &'a str,
        reason: &'a str,
    },
    Span {
        p: usize,
        name: &'a str,
        label: &'static str,
        hit: &'a str,
    },
    Step {
        i: usize,
        tool: &'a str,
        hit: &'a str,
    },
    Termination(&'a str),
}

/// The first overflow of trace `t`: spans in order (finish reasons, then status, then `error.type`),
/// then error results of steps, then the termination reason. With it, the position of the span it was
/// found on (a step's span), `None` for the termination reason.
fn overflow<'a>(cols: &Columns<'a>, t: usize) -> Option<(Hit<'a>, Option<usize>)> {
    let hit = first_overflow(cols, t)?;
    let at = match hit {
        Hit::FinishReason { p, .. } | Hit::Span { p, .. } => Some(p),
        Hit::Step { i, .. } => cols.step_span(cols.step_rows(t).start + i),
        Hit::Termination(_) => None,
    };
    Some((hit, at))
}

fn first_overflow<'a>(cols: &Columns<'a>, t: usize) -> Option<Hit<'a>> {
    let spans = cols.span_rows(t);
    let first_span = spans.start;
    for row in spans {
        let p = row - first_span;
        let name = cols.name.value(row);
        if let Some(reason) = cols.finish_reasons(row).find(|r| is_cutoff(r)) {
            return Some(Hit::FinishReason { p, name, reason });
        }
        let sources = [
            ("status", cols.status_message.value(row)),
            ("error.type", opt(cols.error_type, row).unwrap_or("")),
        ];
        for (label, text) in sources {
            if let Some(hit) = overflow_phrase(text) {
                return Some(Hit::Span {
                    p,
                    name,
                    label,
                    hit,
                });
            }
        }
    }
    let steps = cols.step_rows(t);
    let first_step = steps.start;
    for s in steps.filter(|&s| cols.agent_step(s)) {
        let result = cols.result.value(s);
        let is_error = result.trim_start_matches(is_py_space).starts_with("Error")
            || cols.structural_error.is_valid(s);
        if is_error && let Some(hit) = overflow_phrase(result) {
            return Some(Hit::Step {
                i: s - first_step,
                tool: cols.tool.value(s),
                hit,
            });
        }
    }
    overflow_phrase(cols.termination.value(t)).map(Hit::Termination)
}

#[cfg(test)]
mod tests {
    use super::{is_cutoff, overflow_phrase};

    #[test]
    fn provider_phrasings() {
        for (text, hit) in [
            ("Error: context_length_exceeded", "context_length_exceeded"),
            (
                "This model's maximum context length is 8192",
                "maximum context length",
            ),
            (
                "request exceeds the model's context window",
                "exceeds the model's context window",
            ),
            ("prompt is too long: 210000 tokens", "prompt is too long"),
            ("Too many input tokens", "Too many input tokens"),
            ("max_tokens limit reached", "max_tokens limit reached"),
            (
                "input exceeds the maximum number of tokens",
                "exceeds the maximum number of tokens",
            ),
            (
                "Input is too long for requested model",
                "Input is too long for requested model",
            ),
        ] {
            assert_eq!(overflow_phrase(text), Some(hit), "{text}");
        }
        assert_eq!(overflow_phrase("the context was long"), None);
    }

    #[test]
    fn cutoff_reasons_in_any_case() {
        assert!(is_cutoff("Length"));
        assert!(is_cutoff("MAX_OUTPUT_TOKENS"));
        assert!(is_cutoff("max_to\u{212a}ens"));
        assert!(!is_cutoff("stop"));
        assert!(!is_cutoff("length "));
        assert!(!is_cutoff("lengthé"));
    }
}

#[cfg(test)]
mod check_tests {
    use super::*;
    use crate::checks::testing::{RunCheck, TraceSpec};
    use serde_json::json;

    #[test]
    fn a_cutoff_finish_reason_fires_with_its_case() {
        let v = TraceSpec::new()
            .chat_span(|s| {
                s.attrs.insert(
                    "gen_ai.response.finish_reasons".into(),
                    json!(["stop", "MAX_TOKENS"]),
                );
            })
            .run(&ContextOverflow);
        assert!(v.detected);
        assert_eq!(
            v.reason,
            "span 2 (chat) stopped on finish reason 'MAX_TOKENS': output cut at the token limit"
        );
    }

    #[test]
    fn status_messages_error_results_and_termination() {
        let v = TraceSpec::new()
            .chat_span(|s| s.status_message = "context_length_exceeded".into())
            .run(&ContextOverflow);
        assert_eq!(v.reason, "span 2 (chat) status: 'context_length_exceeded'");
        let v = TraceSpec::new()
            .step("read", "{}", "Errors: prompt is too long")
            .run(&ContextOverflow);
        assert_eq!(v.reason, "step 1 (read) result: 'prompt is too long'");
        let v = TraceSpec::new()
            .termination("token limit reached")
            .run(&ContextOverflow);
        assert_eq!(v.reason, "run terminated: 'token limit reached'");
    }

    #[test]
    fn a_plain_result_quoting_the_phrase_does_not_fire() {
        let v = TraceSpec::new()
            .step("docs", "{}", "The maximum context length is 8k")
            .chat_span(|s| {
                s.attrs
                    .insert("gen_ai.response.finish_reasons".into(), json!("stop"));
            })
            .run(&ContextOverflow);
        assert!(!v.detected);
        assert_eq!(v.reason, "no context overflow or token cutoff");
    }
}
