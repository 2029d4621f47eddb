//! Golden answers (`--golden`) and recorded outcomes (`--outcomes`): small JSON maps keyed by raw
//! scenario key or by the exact prompt text.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{InputError, display_path};

/// Expected answers by scenario key or prompt.
#[derive(Debug, Clone, Default)]
pub struct Golden(Map<String, Value>);

/// Recorded outcomes by scenario key or prompt, or (`--outcomes recorded`) those the traces recorded.
#[derive(Debug, Clone, Default)]
pub struct Outcomes(Map<String, Value>, bool);

/// The `--outcomes` value that takes each trace's own recorded outcome instead of a file (a file of
/// that name is passed as `./recorded`).
pub const RECORDED: &str = "recorded";

fn read_object(path: &Path, what: &str) -> Result<Value, InputError> {
    let text = crate::sidefile::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => InputError::NotFound(path.to_path_buf()),
        _ => InputError::Read {
            path: path.to_path_buf(),
            source: e,
        },
    })?;
    serde_json::from_slice(&text)
        .map_err(|e| InputError::Usage(format!("{what}: {} is not JSON ({e})", display_path(path))))
}

impl Golden {
    /// Reads a golden-answers file (`--golden`): a JSON object of scenario key or prompt to answer.
    pub fn from_path(path: &Path) -> Result<Golden, InputError> {
        Self::from_value(read_object(path, "golden")?)
    }

    /// A golden map from parsed JSON: an object whose values are all strings.
    pub fn from_value(value: Value) -> Result<Golden, InputError> {
        match value {
            Value::Object(map) if map.values().all(Value::is_string) => Ok(Golden(map)),
            _ => Err(InputError::Usage(
                "golden: expected a JSON object of {scenario key or prompt: expected answer}"
                    .into(),
            )),
        }
    }

    /// The expected answer: by key when it is non-empty, else by prompt.
    pub fn expected(&self, key: &str, prompt: &str) -> Option<&str> {
        match self.0.get(key).and_then(Value::as_str) {
            Some(v) if !v.is_empty() => Some(v),
            _ => self.0.get(prompt).and_then(Value::as_str),
        }
    }
}

impl Outcomes {
    /// Reads an outcomes file (`--outcomes`): a JSON object of scenario key or prompt to `true`/`false`.
    pub fn from_path(path: &Path) -> Result<Outcomes, InputError> {
        Self::from_value(read_object(path, "outcomes")?)
    }

    /// An outcomes map from parsed JSON: an object whose values are all booleans.
    pub fn from_value(value: Value) -> Result<Outcomes, InputError> {
        match value {
            Value::Object(map) if map.values().all(Value::is_boolean) => Ok(Outcomes(map, false)),
            _ => Err(InputError::Usage(
                "outcomes: expected a JSON object of {scenario key or prompt: true | false}".into(),
            )),
        }
    }

    /// The outcomes each trace recorded itself (`--outcomes recorded`).
    pub fn recorded() -> Outcomes {
        Outcomes(Map::new(), true)
    }

    /// Returns true if and only if the outcomes are those the traces recorded, not a file's.
    pub fn is_recorded(&self) -> bool {
        self.1
    }

    /// The outcome recorded for the key, else for the prompt.
    pub fn lookup(&self, key: &str, prompt: &str) -> Option<bool> {
        self.0
            .get(key)
            .or_else(|| self.0.get(prompt))
            .and_then(Value::as_bool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_the_wrong_shapes() {
        assert!(Golden::from_value(serde_json::json!({"k": 1})).is_err());
        assert!(Golden::from_value(serde_json::json!(["x"])).is_err());
        assert!(Outcomes::from_value(serde_json::json!({"k": "true"})).is_err());
        assert!(Outcomes::from_value(serde_json::json!({"k": true})).is_ok());
    }

    #[test]
    fn golden_falls_back_to_prompt_on_empty_key() {
        let g = Golden(serde_json::from_str(r#"{"k": "", "p": "x"}"#).unwrap());
        assert_eq!(g.expected("k", "p"), Some("x"));
        assert_eq!(g.expected("k", "q"), None);
        let g = Golden(serde_json::from_str(r#"{"k": "", "p": ""}"#).unwrap());
        assert_eq!(g.expected("k", "p"), Some(""));
    }

    #[test]
    fn outcomes_take_the_first_present() {
        let o = Outcomes(
            serde_json::from_str(r#"{"k": false, "p": true}"#).unwrap(),
            false,
        );
        assert_eq!(o.lookup("k", "p"), Some(false));
        assert_eq!(o.lookup("x", "p"), Some(true));
        assert_eq!(o.lookup("x", "y"), None);
    }
}
