//! Which server a judge spec talks to, and that server's wire format.
//!
//! `litellm:<model>` reads the provider from the model's prefix as LiteLLM does: `openai/` or a bare name
//! (any OpenAI-compatible server), `anthropic/` (the Messages API), `ollama/` (Ollama's chat API) and
//! `azure/` (an Azure OpenAI deployment). `openai:<model>` is an OpenAI-compatible server at
//! `--judge-url`. Settings come from the variables LiteLLM reads, so a team's environment works as is.

use serde_json::{Value, json};

use super::error::JudgeError;

/// The request and reply shapes a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// `POST …/chat/completions` (OpenAI, vLLM, llama.cpp, Ollama's `/v1`, LM Studio, LiteLLM proxy).
    OpenAi,
    /// `POST …/v1/messages`.
    Anthropic,
    /// `POST …/api/chat` with `stream: false`.
    Ollama,
}

/// A resolved judge endpoint: where to post, how, and for which model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub wire: Wire,
    pub url: String,
    /// The model name sent in the request body.
    pub model: String,
    /// Extra headers (authentication, API version); never shown in messages.
    pub headers: Vec<(String, String)>,
}

/// Token counts a reply reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub(crate) fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// 0.4.1's sampling settings for every judge call.
const TEMPERATURE: f64 = 0.0;
const MAX_TOKENS: u32 = 512;

const OPENAI_DEFAULT: &str = "https://api.openai.com/v1";
const ANTHROPIC_DEFAULT: &str = "https://api.anthropic.com";
const OLLAMA_DEFAULT: &str = "http://localhost:11434";
const AZURE_DEFAULT_VERSION: &str = "2024-10-21";

fn join(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// The first variable of `names` that is set and non-empty.
fn first_var(env: &dyn Fn(&str) -> Option<String>, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| env(n).filter(|v| !v.trim().is_empty()))
}

impl Endpoint {
    /// The endpoint of `litellm:<model>` (`model` is the part after `litellm:`).
    pub(crate) fn litellm(
        model: &str,
        url: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, JudgeError> {
        let judge = format!("litellm:{model}");
        let (provider, name) = match model.split_once('/') {
            Some((p, rest)) if !rest.is_empty() => (p, rest),
            _ => ("", model),
        };
        match provider {
            "" | "openai" | "text-completion-openai" => Self::openai(&judge, name, url, env),
            "anthropic" => {
                let base = url
                    .map(String::from)
                    .or_else(|| first_var(env, &["ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"]));
                let key = first_var(env, &["ANTHROPIC_API_KEY"]);
                if base.is_none() && key.is_none() {
                    return Err(JudgeError::MissingVariable {
                        judge,
                        var: "ANTHROPIC_API_KEY".into(),
                    });
                }
                let base = base.unwrap_or_else(|| ANTHROPIC_DEFAULT.into());
                let path = if base.trim_end_matches('/').ends_with("/v1") {
                    "/messages"
                } else {
                    "/v1/messages"
                };
                let mut headers = vec![("anthropic-version".into(), "2023-06-01".into())];
                if let Some(key) = key {
                    headers.push(("x-api-key".into(), key));
                }
                Ok(Endpoint {
                    wire: Wire::Anthropic,
                    url: join(&base, path),
                    model: name.into(),
                    headers,
                })
            }
            "ollama" | "ollama_chat" => {
                let base = url
                    .map(String::from)
                    .or_else(|| first_var(env, &["OLLAMA_API_BASE", "OLLAMA_HOST"]))
                    .unwrap_or_else(|| OLLAMA_DEFAULT.into());
                let base = if base.starts_with("http://") || base.starts_with("https://") {
                    base
                } else {
                    // OLLAMA_HOST is often a bare host:port.
                    format!("http://{base}")
                };
                Ok(Endpoint {
                    wire: Wire::Ollama,
                    url: join(&base, "/api/chat"),
                    model: name.into(),
                    headers: Vec::new(),
                })
            }
            "azure" => {
                let base = url
                    .map(String::from)
                    .or_else(|| first_var(env, &["AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"]))
                    .ok_or_else(|| JudgeError::MissingVariable {
                        judge: judge.clone(),
                        var: "AZURE_API_BASE".into(),
                    })?;
                let key = first_var(env, &["AZURE_API_KEY", "AZURE_OPENAI_API_KEY"]).ok_or_else(
                    || JudgeError::MissingVariable {
                        judge: judge.clone(),
                        var: "AZURE_API_KEY".into(),
                    },
                )?;
                let version = first_var(env, &["AZURE_API_VERSION", "OPENAI_API_VERSION"])
                    .unwrap_or_else(|| AZURE_DEFAULT_VERSION.into());
                Ok(Endpoint {
                    wire: Wire::OpenAi,
                    url: format!(
                        "{}?api-version={version}",
                        join(
                            &base,
                            &format!("/openai/deployments/{name}/chat/completions")
                        )
                    ),
                    model: name.into(),
                    headers: vec![("api-key".into(), key)],
                })
            }
            other => Err(JudgeError::UnknownProvider {
                judge,
                provider: other.into(),
            }),
        }
    }

    /// An OpenAI-compatible endpoint: `url` (or `OPENAI_BASE_URL`, else the public API), with
    /// `OPENAI_API_KEY` as a bearer token when set. The public API needs the key.
    pub(crate) fn openai(
        judge: &str,
        model: &str,
        url: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, JudgeError> {
        let base = url
            .map(String::from)
            .or_else(|| first_var(env, &["OPENAI_BASE_URL", "OPENAI_API_BASE"]));
        let key = first_var(env, &["OPENAI_API_KEY"]);
        if base.is_none() && key.is_none() {
            return Err(JudgeError::MissingVariable {
                judge: judge.into(),
                var: "OPENAI_API_KEY".into(),
            });
        }
        let base = base.unwrap_or_else(|| OPENAI_DEFAULT.into());
        let url = if base.trim_end_matches('/').ends_with("/chat/completions") {
            base.trim_end_matches('/').to_string()
        } else {
            join(&base, "/chat/completions")
        };
        Ok(Endpoint {
            wire: Wire::OpenAi,
            url,
            model: model.into(),
            headers: key
                .map(|k| vec![("Authorization".into(), format!("Bearer {k}"))])
                .unwrap_or_default(),
        })
    }

    /// What a cached reply is valid for: the wire, the server and the model (never the credentials).
    pub(crate) fn identity(&self) -> String {
        format!("{:?} {} {}", self.wire, self.url, self.model)
    }

    /// The request body of one judge call.
    pub(crate) fn body(&self, system: &str, user: &str) -> String {
        let value = match self.wire {
            Wire::OpenAi => json!({
                "model": self.model,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                "temperature": TEMPERATURE,
                "max_tokens": MAX_TOKENS,
            }),
            Wire::Anthropic => json!({
                "model": self.model,
                "system": system,
                "messages": [{"role": "user", "content": user}],
                "temperature": TEMPERATURE,
                "max_tokens": MAX_TOKENS,
            }),
            Wire::Ollama => json!({
                "model": self.model,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                "stream": false,
                "options": {"temperature": TEMPERATURE, "num_predict": MAX_TOKENS},
            }),
        };
        value.to_string()
    }

    /// The reply text and token counts of a successful response body. A body that is not this wire's
    /// JSON is an error (the URL points at something else); a reply without text is an empty reply.
    pub(crate) fn read_reply(&self, body: &str) -> Result<(String, Usage), String> {
        let value: Value = serde_json::from_str(body)
            .map_err(|_| format!("the reply is not JSON: {}", head(body)))?;
        let count = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
        match self.wire {
            Wire::OpenAi => {
                let choice = value
                    .get("choices")
                    .and_then(|c| c.get(0))
                    .ok_or_else(|| format!("the reply has no choices: {}", head(body)))?;
                let text = choice
                    .pointer("/message/content")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let usage = value.get("usage").cloned().unwrap_or(Value::Null);
                Ok((
                    text.into(),
                    Usage {
                        prompt_tokens: count(&usage, "prompt_tokens"),
                        completion_tokens: count(&usage, "completion_tokens"),
                    },
                ))
            }
            Wire::Anthropic => {
                let parts = value
                    .get("content")
                    .and_then(Value::as_array)
                    .ok_or_else(|| format!("the reply has no content: {}", head(body)))?;
                let text: String = parts
                    .iter()
                    .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                let usage = value.get("usage").cloned().unwrap_or(Value::Null);
                Ok((
                    text,
                    Usage {
                        prompt_tokens: count(&usage, "input_tokens"),
                        completion_tokens: count(&usage, "output_tokens"),
                    },
                ))
            }
            Wire::Ollama => {
                let message = value
                    .get("message")
                    .ok_or_else(|| format!("the reply has no message: {}", head(body)))?;
                let text = message
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Ok((
                    text.into(),
                    Usage {
                        prompt_tokens: count(&value, "prompt_eval_count"),
                        completion_tokens: count(&value, "eval_count"),
                    },
                ))
            }
        }
    }
}

/// The first 200 code points of a body, on one line, for an error message.
pub(crate) fn head(body: &str) -> String {
    body.chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn bare_and_openai_prefix_use_the_openai_base_url() {
        let env = env_of(&[
            ("OPENAI_BASE_URL", "http://h:8000/v1/"),
            ("OPENAI_API_KEY", "k"),
        ]);
        for model in ["gpt-x", "openai/gpt-x"] {
            let ep = Endpoint::litellm(model, None, &env).unwrap();
            assert_eq!(ep.wire, Wire::OpenAi);
            assert_eq!(ep.url, "http://h:8000/v1/chat/completions");
            assert_eq!(ep.model, "gpt-x");
            assert_eq!(
                ep.headers,
                vec![("Authorization".into(), "Bearer k".into())]
            );
        }
    }

    #[test]
    fn the_public_api_needs_a_key() {
        let err = Endpoint::litellm("gpt-x", None, &env_of(&[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "judge litellm:gpt-x needs OPENAI_API_KEY to be set"
        );
        let ep = Endpoint::litellm("gpt-x", None, &env_of(&[("OPENAI_API_KEY", "k")])).unwrap();
        assert_eq!(ep.url, "https://api.openai.com/v1/chat/completions");
    }

    #[test]
    fn anthropic_ollama_and_azure_by_prefix() {
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "a"),
            ("AZURE_API_BASE", "https://r.openai.azure.com"),
            ("AZURE_API_KEY", "z"),
            ("AZURE_API_VERSION", "2024-06-01"),
        ]);
        let a = Endpoint::litellm("anthropic/claude-x", None, &env).unwrap();
        assert_eq!(
            (a.wire, a.url.as_str()),
            (Wire::Anthropic, "https://api.anthropic.com/v1/messages")
        );
        assert!(a.headers.contains(&("x-api-key".into(), "a".into())));
        let o = Endpoint::litellm("ollama/llama3", None, &env).unwrap();
        assert_eq!(
            (o.wire, o.url.as_str()),
            (Wire::Ollama, "http://localhost:11434/api/chat")
        );
        let z = Endpoint::litellm("azure/dep1", None, &env).unwrap();
        assert_eq!(
            z.url,
            "https://r.openai.azure.com/openai/deployments/dep1/chat/completions?api-version=2024-06-01"
        );
        assert_eq!(z.headers, vec![("api-key".into(), "z".into())]);
    }

    #[test]
    fn unknown_provider_is_named() {
        let err = Endpoint::litellm("groq/llama", None, &env_of(&[])).unwrap_err();
        assert!(err.to_string().contains("'groq'"), "{err}");
    }

    #[test]
    fn replies_of_each_wire() {
        let ep = |wire| Endpoint {
            wire,
            url: String::new(),
            model: "m".into(),
            headers: vec![],
        };
        let (text, usage) = ep(Wire::OpenAi)
            .read_reply(r#"{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#)
            .unwrap();
        assert_eq!(
            (text.as_str(), usage.prompt_tokens, usage.completion_tokens),
            ("hi", 3, 4)
        );
        let (text, usage) = ep(Wire::Anthropic)
            .read_reply(r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"usage":{"input_tokens":5,"output_tokens":6}}"#)
            .unwrap();
        assert_eq!(
            (text.as_str(), usage.prompt_tokens, usage.completion_tokens),
            ("ab", 5, 6)
        );
        let (text, _) = ep(Wire::Ollama)
            .read_reply(r#"{"message":{"role":"assistant","content":"x"},"prompt_eval_count":1}"#)
            .unwrap();
        assert_eq!(text, "x");
        assert!(ep(Wire::OpenAi).read_reply("<html>").is_err());
    }
}
