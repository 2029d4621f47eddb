//! What a run asks of its judge: the `--judge` value, the judged checks it answers, and how it calls
//! its server (the `--judge-*` flags).

use std::path::PathBuf;
use std::time::Duration;

use super::cache;
use super::client::CallPolicy;
use super::custom::JudgedSpec;
use super::error::JudgeError;

/// A `--judge` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeSpec {
    /// 0.4.1's local model; accepted as a name, refused when it would run.
    Laya,
    /// `litellm:<model>`: the provider from the model's prefix.
    Litellm(String),
    /// `openai:<model>`: an OpenAI-compatible server (`--judge-url`).
    OpenAi(String),
    /// `replay:FILE`: saved verdicts.
    Replay(PathBuf),
}

impl JudgeSpec {
    pub fn parse(spec: &str) -> Result<JudgeSpec, JudgeError> {
        let nonempty = |p: &str| spec.strip_prefix(p).filter(|m| !m.is_empty());
        if spec == "laya" {
            Ok(JudgeSpec::Laya)
        } else if let Some(m) = nonempty("litellm:") {
            Ok(JudgeSpec::Litellm(m.into()))
        } else if let Some(m) = nonempty("openai:") {
            Ok(JudgeSpec::OpenAi(m.into()))
        } else if let Some(f) = nonempty("replay:") {
            Ok(JudgeSpec::Replay(f.into()))
        } else {
            Err(JudgeError::UnknownSpec(spec.into()))
        }
    }
}

/// The `--judge` values this build runs, as a note or error that asks for a judge names them: `laya`
/// is parsed for 0.4.1's sake but refused, so naming it would send a user to an error
/// (docs/compatibility.md §2.1).
pub(crate) const RUNNABLE: &str =
    "--judge litellm:<model> | openai:<model> with --judge-url | replay:FILE";

/// The built-in judged checks.
pub(crate) fn builtin_checks() -> Vec<JudgedSpec> {
    vec![JudgedSpec {
        name: "wrong_direction".into(),
        question: crate::checks::wrong_direction::QUESTION.into(),
        budget: None,
    }]
}

/// How a judged run calls its judge.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    /// `--judge-url`: the server of a `litellm:` or `openai:` judge.
    pub url: Option<String>,
    pub concurrency: usize,
    pub policy: CallPolicy,
    pub max_calls: Option<usize>,
    /// The cache folder, or none with `--no-judge-cache`.
    pub cache_dir: Option<PathBuf>,
    /// Keep per-verdict token counts for `--judge-record`.
    pub record: bool,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            url: None,
            concurrency: 8,
            policy: CallPolicy {
                timeout: Duration::from_secs(60),
                retries: 4,
                backoff: Duration::from_millis(500),
            },
            max_calls: None,
            cache_dir: cache::default_dir(),
            record: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judges_a_note_names_are_the_ones_this_build_runs() {
        let named: Vec<&str> = RUNNABLE
            .strip_prefix("--judge ")
            .unwrap()
            .split(" | ")
            .map(|s| s.split(' ').next().unwrap())
            .collect();
        assert_eq!(named, ["litellm:<model>", "openai:<model>", "replay:FILE"]);
        for spec in named {
            assert!(JudgeSpec::parse(spec).is_ok(), "{spec}");
        }
        assert!(!RUNNABLE.contains("laya"));
    }

    #[test]
    fn specs_resolve_as_in_0_4_1_plus_the_new_ones() {
        assert_eq!(JudgeSpec::parse("laya"), Ok(JudgeSpec::Laya));
        assert_eq!(
            JudgeSpec::parse("litellm:openai/gpt-x"),
            Ok(JudgeSpec::Litellm("openai/gpt-x".into()))
        );
        assert_eq!(
            JudgeSpec::parse("openai:qwen"),
            Ok(JudgeSpec::OpenAi("qwen".into()))
        );
        assert_eq!(
            JudgeSpec::parse("replay:v.jsonl"),
            Ok(JudgeSpec::Replay("v.jsonl".into()))
        );
        for bad in ["", "gpt", "litellm:", "openai:", "replay:"] {
            assert_eq!(
                JudgeSpec::parse(bad),
                Err(JudgeError::UnknownSpec(bad.into()))
            );
        }
    }
}
