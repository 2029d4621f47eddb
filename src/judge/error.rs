//! What can stop a judged run, each a one-line message naming the judge or the file.

/// What can stop a judged run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    #[error(
        "unknown judge '{0}'; use 'litellm:<model>', 'openai:<model>' or 'replay:FILE' (see faultgate judges)"
    )]
    UnknownSpec(String),
    #[error(
        "the laya judge is not available: its local model cannot be bundled with this build; use litellm:ollama/<model> (a local Ollama model), openai:<model> --judge-url URL (vLLM, llama.cpp, LM Studio, a LiteLLM proxy), litellm:<provider>/<model> (an API model) or replay:FILE (saved verdicts)"
    )]
    Laya,
    #[error("judge {judge} needs {var} to be set")]
    MissingVariable { judge: String, var: String },
    #[error(
        "judge {judge}: unknown provider '{provider}'; litellm: knows openai/, anthropic/, ollama/ and azure/ (reach others through a LiteLLM proxy: litellm:openai/<model> with OPENAI_BASE_URL)"
    )]
    UnknownProvider { judge: String, provider: String },
    #[error("replay file {path}: {detail}")]
    Replay { path: String, detail: String },
    #[error("judge checks {path}: {detail}")]
    ChecksFile { path: String, detail: String },
    #[error("judge {judge} failed at {url}: {detail}")]
    Unreachable {
        judge: String,
        url: String,
        detail: String,
    },
}
