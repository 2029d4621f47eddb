//! `faultgate judges`: the judge specs this build knows, and what each needs from the environment.

/// `faultgate judges`: one line per judge spec, saying what this build and environment can run.
pub(crate) fn listing(env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let set = |names: &[&str]| names.iter().any(|n| env(n).is_some_and(|v| !v.is_empty()));
    let state = |names: &[&str], what: &str| {
        if set(names) {
            format!("{what} set")
        } else {
            format!("{what} not set")
        }
    };
    let line = |key: &str, text: String| format!("{key:<16} {text}");
    vec![
        line(
            "litellm:<model>",
            format!(
                "a chat model by LiteLLM's prefix: openai/<m> or bare (OPENAI_BASE_URL, OPENAI_API_KEY; {}), anthropic/<m> ({}), ollama/<m> (OLLAMA_API_BASE, default http://localhost:11434), azure/<deployment> (AZURE_API_BASE, AZURE_API_KEY, AZURE_API_VERSION; {})",
                state(&["OPENAI_API_KEY"], "key"),
                state(&["ANTHROPIC_API_KEY"], "ANTHROPIC_API_KEY"),
                state(&["AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"], "base"),
            ),
        ),
        line(
            "openai:<model>",
            "any OpenAI-compatible server at --judge-url URL (vLLM, llama.cpp, Ollama's /v1, LM Studio, a LiteLLM proxy)".into(),
        ),
        line(
            "replay:FILE",
            "saved verdicts, one JSON line each (from --judge-record, a batch job or a review); no network".into(),
        ),
        line(
            "laya",
            "not available: 0.4.1's local model cannot be bundled; use litellm:ollama/<model> or openai:<model> instead".into(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_has_one_line_per_spec_and_reads_the_environment() {
        let lines = listing(&|n| (n == "OPENAI_API_KEY").then(|| "k".to_string()));
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("litellm:<model>  "));
        assert!(lines[0].contains("key set"));
        assert!(lines[0].contains("ANTHROPIC_API_KEY not set"));
        assert!(lines[3].starts_with("laya             not available"));
    }
}
