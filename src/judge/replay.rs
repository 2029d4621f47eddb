//! `--judge replay:FILE`: verdicts computed elsewhere (a batch API job, a human review, an earlier run's
//! `--judge-record`), one JSON object per line.
//!
//! ## Line format
//!
//! `trace_id` (or `scenario`, matched against the raw and the written scenario key), `check`,
//! `detected` (boolean), `confidence` (number, default 1.0), `reason` (string, default ""), and
//! optionally `prompt_tokens`, `completion_tokens` and `judge`. When every line names the same `judge`,
//! the run reports that judge, so a band built with the live judge gates the replayed run. Blank lines
//! are skipped; the last line for a trace and check wins.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::JudgeError;
use super::providers::Usage;
use crate::checks::Verdict;

/// One replayed verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Replayed {
    pub verdict: Verdict,
    pub usage: Usage,
}

/// The verdicts of a replay file, by trace id and by scenario key.
#[derive(Debug, Default)]
pub(crate) struct ReplayFile {
    by_trace: HashMap<(String, String), Replayed>,
    by_scenario: HashMap<(String, String), Replayed>,
    /// The judge every line names, if they agree.
    pub judge: Option<String>,
}

impl ReplayFile {
    pub(crate) fn load(path: &Path) -> Result<ReplayFile, JudgeError> {
        let shown = crate::error::display_path(path);
        let text = crate::sidefile::read_to_string(path).map_err(|e| JudgeError::Replay {
            path: shown.clone(),
            detail: e.to_string(),
        })?;
        Self::parse(&text).map_err(|detail| JudgeError::Replay {
            path: shown,
            detail,
        })
    }

    pub(crate) fn parse(text: &str) -> Result<ReplayFile, String> {
        let mut file = ReplayFile::default();
        let mut judges: Option<Option<String>> = None;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |what: String| format!("line {}: {what}", n + 1);
            let value: Value =
                serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
            let Value::Object(object) = value else {
                return Err(at("not a JSON object".into()));
            };
            let (line_judge, trace, scenario, check, replayed) = read_line(&object).map_err(at)?;
            judges = Some(match judges {
                None => line_judge,
                Some(j) if j == line_judge => j,
                Some(_) => None,
            });
            match (trace, scenario) {
                (Some(t), _) => file.by_trace.insert((t, check), replayed),
                (None, Some(s)) => file.by_scenario.insert((s, check), replayed),
                (None, None) => return Err(at("needs trace_id or scenario".into())),
            };
        }
        file.judge = judges.flatten();
        Ok(file)
    }

    /// The verdict for one trace and check: by trace id, else by the raw, else the written scenario key.
    pub(crate) fn lookup(
        &self,
        trace_id: &str,
        scenario: &str,
        written: &str,
        check: &str,
    ) -> Option<&Replayed> {
        let k = |a: &str| (a.to_string(), check.to_string());
        self.by_trace
            .get(&k(trace_id))
            .or_else(|| self.by_scenario.get(&k(scenario)))
            .or_else(|| self.by_scenario.get(&k(written)))
    }
}

type Line = (
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    Replayed,
);

fn read_line(o: &Map<String, Value>) -> Result<Line, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key} must be a string")),
        }
    };
    let check = text("check")?.ok_or("needs check")?;
    let detected = match o.get("detected") {
        Some(Value::Bool(b)) => *b,
        _ => return Err("detected must be true or false".into()),
    };
    let confidence = match o.get("confidence") {
        None | Some(Value::Null) => 1.0,
        Some(v) => v.as_f64().ok_or("confidence must be a number")?,
    };
    let tokens = |key: &str| -> Result<u64, String> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or(format!("{key} must be a whole number")),
        }
    };
    let scenario = match text("scenario")? {
        Some(s) => Some(s),
        None => text("key")?,
    };
    Ok((
        text("judge")?,
        text("trace_id")?,
        scenario,
        check,
        Replayed {
            verdict: Verdict {
                detected,
                confidence,
                reason: text("reason")?.unwrap_or_default(),
            },
            usage: Usage {
                prompt_tokens: tokens("prompt_tokens")?,
                completion_tokens: tokens("completion_tokens")?,
            },
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_by_trace_and_scenario() {
        let file = ReplayFile::parse(
            "{\"trace_id\": \"t1\", \"check\": \"wrong_direction\", \"detected\": true, \"confidence\": 0.8, \"reason\": \"r\", \"judge\": \"litellm:m\"}\n\n\
             {\"scenario\": \"s2\", \"check\": \"wrong_direction\", \"detected\": false, \"judge\": \"litellm:m\"}\n",
        )
        .unwrap();
        assert_eq!(file.judge.as_deref(), Some("litellm:m"));
        let hit = file.lookup("t1", "x", "x", "wrong_direction").unwrap();
        assert_eq!(hit.verdict.reason, "r");
        assert!(hit.verdict.detected);
        let by_key = file.lookup("t9", "s2", "s2", "wrong_direction").unwrap();
        assert_eq!(by_key.verdict.confidence, 1.0);
        assert!(file.lookup("t1", "x", "x", "other").is_none());
    }

    #[test]
    fn mixed_judges_name_none() {
        let file = ReplayFile::parse(
            "{\"trace_id\": \"a\", \"check\": \"c\", \"detected\": true, \"judge\": \"x\"}\n{\"trace_id\": \"b\", \"check\": \"c\", \"detected\": true}\n",
        )
        .unwrap();
        assert_eq!(file.judge, None);
    }

    #[test]
    fn bad_lines_name_their_number() {
        let err =
            ReplayFile::parse("\n{\"trace_id\": \"a\", \"check\": \"c\", \"detected\": \"yes\"}")
                .unwrap_err();
        assert_eq!(err, "line 2: detected must be true or false");
        assert_eq!(
            ReplayFile::parse("[1]").unwrap_err(),
            "line 1: not a JSON object"
        );
        assert_eq!(
            ReplayFile::parse("{\"check\": \"c\", \"detected\": true}").unwrap_err(),
            "line 1: needs trace_id or scenario"
        );
    }
}
