//! tau-bench and tau2-bench results: simulated customer-service conversations with OpenAI-style messages
//! and tool calls, one per task and trial.
//!
//! - **tau-bench** (`run.py`'s results file): a list of `{"task_id", "reward", "info", "traj", "trial"}`,
//!   `traj` being the agent's chat messages.
//! - **tau2-bench** (`Results`): `{"info", "tasks", "simulations": [...]}`, each simulation a
//!   `SimulationRun` (`task_id`, `trial`, `termination_reason`, `reward_info`, `messages`, times and
//!   costs); a single simulation file (the `dir` storage format) or a list of simulations reads the same.
//!   A leaderboard submission's trajectory file is `{"domain", "agent", "model", "total_tasks",
//!   "passed", "pass_rate", "simulations": [...]}`, the same simulations under a summary instead of
//!   `info` and `tasks`; the summary is not read.
//!
//! Each simulation is one trace, `task-<task_id>#<trial>@<file name>`. The scenario key is
//! `task-<task_id>`: every trial of a task is the same scenario, so a results file can feed `baseline`.
//! tau2 names the domain (`info.environment_info.domain_name`, or a submission's `domain`); it is kept
//! on the root, and a run that holds several domains keys its scenarios `<domain>/task-<task_id>`, since
//! task ids repeat across domains (airline task 18 is not retail task 18). The reward is the recorded outcome (success when it
//! is 1, as tau-bench's pass^k counts it), kept on the root for display as trajectories keep
//! `task_success`; tau2's termination reason is the termination.

use std::collections::HashSet;

use serde_json::{Map, Value};
use simd_json::prelude::*;
use simd_json::tape::Value as TapeValue;

use super::chat::{
    DocumentFormat, content_text, file_stem, objects, role, root_span, tape_first, tape_get,
    tape_has, tool_spans, trace,
};
use super::common::{ns, set_usage};
use super::trajectory::RECORDED_OUTCOME;
use crate::compat::value::{py_str, py_truthy};
use crate::table::record::{TraceRecord, attr};

/// The root attribute holding the simulation's reward as recorded.
pub(crate) const REWARD: &str = "faultgate.reward";

/// tau-bench and tau2-bench results files.
pub(crate) static TAU: DocumentFormat = DocumentFormat {
    name: "tau-bench",
    detect,
    map: |docs, path| read(docs, &file_stem(path)),
};

/// The summary a leaderboard submission's trajectory file carries instead of `info` and `tasks`
/// (beside `domain`, `agent`, `model` and `passed`): faultgate counts the outcomes itself.
const LEADERBOARD_SUMMARY: [&str; 2] = ["total_tasks", "pass_rate"];

/// The agent name of every tau trace (results files do not name the agent).
const AGENT: &str = "agent";

fn is_tau_bench_record(v: TapeValue<'_, '_>) -> bool {
    tape_has(v, &["task_id", "traj"])
}

fn is_simulation(v: TapeValue<'_, '_>) -> bool {
    tape_has(v, &["task_id", "termination_reason"])
}

/// A list of tau-bench records or simulations, a tau2 `Results` object, a leaderboard submission's
/// trajectory file, or one simulation.
fn detect(doc: TapeValue<'_, '_>) -> bool {
    if doc.as_array().is_some() {
        return tape_first(doc).is_some_and(|r| is_tau_bench_record(r) || is_simulation(r));
    }
    if let Some(sims) = tape_get(doc, "simulations").filter(|s| s.as_array().is_some()) {
        let results = tape_has(doc, &["info"]) || tape_has(doc, &LEADERBOARD_SUMMARY);
        return tape_first(sims).is_none_or(is_simulation) && results;
    }
    is_simulation(doc)
}

/// The traces of every document's results.
pub(crate) fn read(docs: &[Value], stem: &str) -> Result<Vec<TraceRecord<'static>>, String> {
    let mut out = Vec::new();
    let mut ids = Ids {
        stem: stem.to_string(),
        seen: HashSet::new(),
        domain: None,
    };
    for doc in docs {
        ids.domain = domain(doc);
        let records: Vec<&Map<String, Value>> = match doc {
            Value::Array(_) => objects(Some(doc)),
            Value::Object(obj) => match obj.get("simulations") {
                Some(sims) if sims.is_array() => objects(Some(sims)),
                _ => vec![obj],
            },
            _ => Vec::new(),
        };
        for record in records {
            let trace = if record.contains_key("traj") {
                tau_bench(record, &mut ids)
            } else if record.contains_key("termination_reason") {
                tau2(record, &mut ids)?
            } else {
                return Err("expected tau-bench records (`task_id`, `traj`) or tau2 simulations (`task_id`, \
                     `termination_reason`)"
                    .into());
            };
            out.push(trace);
        }
    }
    Ok(out)
}

/// The domain a tau2 results document names: a submission's `domain`, else the environment's.
fn domain(doc: &Value) -> Option<String> {
    let named = doc
        .get("domain")
        .or_else(|| doc.get("info")?.get("environment_info")?.get("domain_name"));
    named
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
}

/// Trace ids already given in a file, and the file's name (part of every id, so that the same task and
/// trial in two results files of one run stay two traces).
struct Ids {
    stem: String,
    seen: HashSet<String>,
    /// The domain the document being read names, if any.
    domain: Option<String>,
}

impl Ids {
    /// `task-<id>#<trial>@<file>`, made unique within the file (a resumed run can repeat a pair).
    fn next(&mut self, record: &Map<String, Value>) -> String {
        let task = record.get("task_id").map(py_str).unwrap_or_default();
        let trial = record.get("trial").map_or_else(|| "0".to_string(), py_str);
        let base = format!("task-{task}#{trial}@{}", self.stem);
        let mut id = base.clone();
        let mut n = 1;
        while !self.seen.insert(id.clone()) {
            n += 1;
            id = format!("{base}-{n}");
        }
        id
    }

    fn tag_domain(&self, attrs: &mut Map<String, Value>) {
        if let Some(domain) = &self.domain {
            attrs.insert(attr::DOMAIN.into(), domain.clone().into());
        }
    }
}

/// The root attributes every tau trace has: scenario and outcome.
fn outcome_attrs(record: &Map<String, Value>, reward: Option<&Value>) -> Map<String, Value> {
    let mut attrs = Map::new();
    let task = record.get("task_id").map(py_str).unwrap_or_default();
    attrs.insert(attr::SCENARIO.into(), format!("task-{task}").into());
    if let Some(reward) = reward.filter(|r| r.is_number()) {
        let success = reward.as_f64().is_some_and(|r| r >= 1.0 - 1e-6);
        attrs.insert(RECORDED_OUTCOME.into(), Value::Bool(success));
        attrs.insert(REWARD.into(), reward.clone());
    }
    attrs
}

/// The opening user message and the text of the agent's last turn.
fn prompt_and_answer(messages: &[&Map<String, Value>]) -> (String, String) {
    let prompt = messages
        .iter()
        .find(|m| role(m) == "user")
        .map(|m| content_text(m))
        .unwrap_or_default();
    // A run whose last agent turn is a tool call (cut off by the step budget or an error) has no answer.
    let answer = messages
        .iter()
        .rev()
        .find(|m| role(m) == "assistant")
        .map(|m| content_text(m))
        .unwrap_or_default();
    (prompt, answer)
}

fn tau_bench(record: &Map<String, Value>, ids: &mut Ids) -> TraceRecord<'static> {
    let id = ids.next(record);
    let messages = objects(record.get("traj"));
    let (prompt, answer) = prompt_and_answer(&messages);
    let mut attrs = outcome_attrs(record, record.get("reward"));
    ids.tag_domain(&mut attrs);
    let mut root = root_span(&id, AGENT, &prompt, &answer, attrs);
    // A run that raised records the exception in `info.error` (run.py) instead of a trajectory.
    if let Some(error) = record
        .get("info")
        .and_then(|i| i.get("error"))
        .filter(|e| py_truthy(e))
    {
        root.status_code = 2;
        root.status_message = py_str(error).into();
    }
    let spans = tool_spans(&id, &messages, |_| None);
    trace(id, root, spans)
}

fn tau2(record: &Map<String, Value>, ids: &mut Ids) -> Result<TraceRecord<'static>, String> {
    let id = ids.next(record);
    let messages = objects(record.get("messages"));
    let (prompt, answer) = prompt_and_answer(&messages);
    let reward = record.get("reward_info").and_then(|r| r.get("reward"));
    let mut attrs = outcome_attrs(record, reward);
    ids.tag_domain(&mut attrs);
    if let Some(reason) = record.get("termination_reason").filter(|v| py_truthy(v)) {
        attrs.insert(attr::TERMINATION.into(), py_str(reason).into());
    }
    if let Some(cost) = record.get("agent_cost").filter(|v| v.is_number()) {
        attrs.insert(attr::COST_USD.into(), cost.clone());
    }
    let usage = |key: &str| {
        let counts: Vec<i64> = messages
            .iter()
            .filter(|m| role(m) == "assistant")
            .filter_map(|m| m.get("usage")?.get(key)?.as_i64())
            .collect();
        (!counts.is_empty()).then(|| Value::from(counts.iter().sum::<i64>()))
    };
    set_usage(
        &mut attrs,
        usage("prompt_tokens").as_ref(),
        usage("completion_tokens").as_ref(),
    );
    let mut root = root_span(&id, AGENT, &prompt, &answer, attrs);
    let time = |key: &str| record.get(key).map_or(Ok(0), ns).map_err(|e| e.to_string());
    root.start_ns = time("start_time")?;
    root.end_ns = time("end_time")?;
    // In tau2 the simulated user also calls tools (on their own device): those are the user's steps.
    let spans = tool_spans(&id, &messages, |m| {
        (role(m) == "user").then(|| "user".to_string())
    });
    Ok(trace(id, root, spans))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::json::with_tape;

    fn detects(text: &str) -> bool {
        with_tape(text.as_bytes(), detect).unwrap()
    }

    #[test]
    fn detection_needs_the_results_fields() {
        assert!(detects(
            r#"[{"task_id": 0, "reward": 1.0, "traj": [], "trial": 0}]"#
        ));
        assert!(detects(
            r#"{"info": {}, "simulations": [{"task_id": "1", "termination_reason": "user_stop"}]}"#
        ));
        assert!(detects(
            r#"{"task_id": "1", "termination_reason": "max_steps", "messages": []}"#
        ));
        // A leaderboard submission's trajectory file: a summary instead of `info`.
        assert!(detects(
            r#"{"domain": "airline", "agent": "a", "model": "m", "total_tasks": 1, "passed": 1,
                "pass_rate": 100.0, "simulations": [{"task_id": "1", "termination_reason": "user_stop"}]}"#
        ));
        assert!(!detects(
            r#"{"simulations": [{"task_id": "1", "termination_reason": "user_stop"}]}"#
        ));
        assert!(!detects(r#"[{"task_id": 0, "reward": 1.0}]"#));
        assert!(!detects(r#"{"simulations": [{"id": 1}], "info": {}}"#));
        assert!(!detects(r#"[{"role": "user", "content": "hi"}]"#));
    }

    #[test]
    fn a_run_that_raised_is_a_root_error_and_trials_stay_apart() {
        // run.py's record for a task whose run raised, and a resumed run repeating a task and trial.
        let doc = serde_json::json!([
            {"task_id": 3, "reward": 0.0, "info": {"error": "RateLimitError", "traceback": "..."}, "traj": [], "trial": 0},
            {"task_id": 3, "reward": 1.0, "info": {}, "traj": [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "done"}], "trial": 0}
        ]);
        let traces = read(&[doc], "results").unwrap();
        let ids: Vec<&str> = traces.iter().map(|t| t.trace_id.as_ref()).collect();
        assert_eq!(ids, ["task-3#0@results", "task-3#0@results-2"]);
        let root = &traces[0].spans[0];
        assert_eq!(
            (root.status_code, root.status_message.as_ref()),
            (2, "RateLimitError")
        );
        assert_eq!(root.attr_str(attr::SCENARIO), Some("task-3"));
        assert_eq!(traces[1].spans[0].status_code, 0);
    }
}
