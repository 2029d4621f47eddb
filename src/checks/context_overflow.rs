//! # context_overflow
//!
//! **What it detects.** A run that hit the model's context window or output token limit: a cutoff finish
//! reason (`length`, `max_tokens`, ...), or an overflow message in a span status, an `error.type`, an
//! error result of a tool, or the run's termination reason.
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

use regex_automata::meta::Regex;

use super::{Check, CheckContext, CheckKind, TraceView, Verdict};
use crate::pyfmt::{is_py_space, py_repr_str};
use crate::table::schema::{SPAN_ERROR_TYPE, SPAN_NAME, SPAN_STATUS_MESSAGE};

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

fn overflow_phrase(text: &str) -> Option<&str> {
    OVERFLOW.find(text).map(|m| &text[m.range()])
}

pub struct ContextOverflow;

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

    fn run(&self, trace: &TraceView<'_>, _cx: &CheckContext) -> Verdict {
        for p in 0..trace.span_count() {
            let name = trace.span_text(SPAN_NAME, p);
            if let Some(reason) = trace
                .finish_reasons(p)
                .into_iter()
                .find(|r| CUTOFF_REASONS.contains(&r.to_lowercase().as_str()))
            {
                return Verdict::sure(
                    true,
                    format!(
                        "span {} ({name}) stopped on finish reason {}: output cut at the token limit",
                        p + 1,
                        py_repr_str(reason)
                    ),
                );
            }
            let sources = [
                ("status", trace.span_text(SPAN_STATUS_MESSAGE, p)),
                (
                    "error.type",
                    trace.span_opt_text(SPAN_ERROR_TYPE, p).unwrap_or(""),
                ),
            ];
            for (label, text) in sources {
                if let Some(hit) = overflow_phrase(text) {
                    return Verdict::sure(
                        true,
                        format!("span {} ({name}) {label}: {}", p + 1, py_repr_str(hit)),
                    );
                }
            }
        }
        for i in 0..trace.step_count() {
            let result = trace.result(i);
            let is_error = result.trim_start_matches(is_py_space).starts_with("Error")
                || trace.structural_error(i).is_some();
            if is_error && let Some(hit) = overflow_phrase(result) {
                return Verdict::sure(
                    true,
                    format!(
                        "step {} ({}) result: {}",
                        i + 1,
                        trace.tool(i),
                        py_repr_str(hit)
                    ),
                );
            }
        }
        if let Some(hit) = overflow_phrase(trace.termination()) {
            return Verdict::sure(true, format!("run terminated: {}", py_repr_str(hit)));
        }
        Verdict::sure(false, "no context overflow or token cutoff")
    }
}

#[cfg(test)]
mod tests {
    use super::overflow_phrase;

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
}

#[cfg(test)]
mod check_tests {
    use super::*;
    use crate::checks::testing::TraceSpec;
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
