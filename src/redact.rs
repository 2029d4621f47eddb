//! Redaction of PII and secrets in everything that leaves the process (placeholder until the builtin
//! masker lands).

use std::borrow::Cow;

/// Which masker runs on reasons and scenario keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redaction {
    Builtin,
    Off,
}

impl Redaction {
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(text)
    }

    pub fn scenario_key(&self, raw_key: &str) -> String {
        raw_key.to_string()
    }
}
