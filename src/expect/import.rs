//! `faultgate expect import`: the expected actions that benchmark exports carry, written as an
//! expectations file for the scenario keys faultgate gives those exports' traces.
//!
//! - τ²-bench results (`{"tasks": [...], "simulations": [...]}`): each task's
//!   `evaluation_criteria.actions`, with `name`, `arguments` and `compare_args` (the arguments its
//!   evaluator compares; all when null).
//! - τ-bench results (a list of `{"task_id", "info": {"task": {"actions": [...]}}, ...}`): each task's
//!   `actions`, with `name` and `kwargs`.
//!
//! Only state-changing actions become expected calls (by the default read-only rules): the benchmarks
//! list the look-ups their reference solution made too, which an agent may well make otherwise. A task
//! whose actions all read gets an empty `superset` expectation, which passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::file::{CallFile, ExpectError, ExpectFile, ScenarioFile};
use super::read_only::{DEFAULT_VERBS, has_reading_verb};
use crate::compat::value::py_str;
use crate::error::display_path;

/// The expectations of the benchmark exports `files`, merged in order (a later file's task with the
/// same key replaces an earlier one's only when their expectations are the same; see [`import`]).
///
/// # Errors
///
/// [`ExpectError::NothingToImport`] for a file that is no benchmark export or carries no expected
/// actions; [`ExpectError::Read`] or [`ExpectError::Syntax`] for one that cannot be read.
pub fn import(files: &[PathBuf]) -> Result<(ExpectFile, ImportSummary), ExpectError> {
    let mut scenarios: BTreeMap<String, ScenarioFile> = BTreeMap::new();
    let mut summary = ImportSummary::default();
    for path in files {
        let tasks = read_tasks(path)?;
        if tasks.is_empty() {
            return Err(ExpectError::NothingToImport(path.clone()));
        }
        for (key, calls) in tasks {
            let entry = ScenarioFile {
                mode: None,
                calls,
                forbidden: Vec::new(),
            };
            match scenarios.get(&key) {
                Some(seen) if *seen != entry => {
                    summary.conflicting.push(key.clone());
                }
                Some(_) => {}
                None => {
                    summary.tasks += 1;
                    summary.calls += entry.calls.len();
                    if entry.calls.is_empty() {
                        summary.read_only_tasks += 1;
                    }
                    scenarios.insert(key, entry);
                }
            }
        }
    }
    // Two exports that expect different calls under one key (tasks of two domains numbered alike)
    // cannot both be right: the key gets no expectation rather than a wrong one.
    summary.conflicting.sort();
    summary.conflicting.dedup();
    for key in &summary.conflicting {
        if let Some(entry) = scenarios.remove(key) {
            summary.tasks -= 1;
            summary.calls -= entry.calls.len();
            if entry.calls.is_empty() {
                summary.read_only_tasks -= 1;
            }
        }
    }
    let source = serde_json::json!({
        "command": "expect import",
        "files": files.iter().map(|p| display_path(p)).collect::<Vec<_>>(),
        "read_only": {"default_verbs": DEFAULT_VERBS},
    });
    Ok((
        ExpectFile {
            source: Some(source),
            scenarios,
            ..ExpectFile::default_file()
        },
        summary,
    ))
}

/// What an import found, for its summary line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    /// Scenarios written.
    pub tasks: usize,
    /// Expected calls written.
    pub calls: usize,
    /// Scenarios whose task expects no state-changing action.
    pub read_only_tasks: usize,
    /// Keys two files expect different calls for, left out.
    pub conflicting: Vec<String>,
}

impl ExpectFile {
    /// An empty file of this build's version with the default read-only rules.
    pub(crate) fn default_file() -> ExpectFile {
        ExpectFile {
            version: super::file::FORMAT_VERSION,
            source: None,
            read_only_tools: Vec::new(),
            state_changing_tools: Vec::new(),
            default_read_only: true,
            scenarios: BTreeMap::new(),
        }
    }
}

/// The expected state-changing calls of every task an export describes, by scenario key.
fn read_tasks(path: &Path) -> Result<Vec<(String, Vec<CallFile>)>, ExpectError> {
    let value: Value = crate::ingest::contents::with(path, |data| {
        serde_json::from_slice(&data).map_err(|e| crate::error::InputError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    })
    .map_err(|e| ExpectError::Syntax {
        path: path.to_path_buf(),
        message: match e {
            crate::error::InputError::Invalid { message, .. } => message,
            other => other.to_string(),
        },
    })?;
    let mut tasks = Vec::new();
    match &value {
        // τ²-bench: the tasks are listed once, beside the simulations.
        Value::Object(results) => {
            for task in results
                .get("tasks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(actions) = task
                    .pointer("/evaluation_criteria/actions")
                    .and_then(Value::as_array)
                else {
                    continue;
                };
                let Some(id) = task.get("id") else { continue };
                let calls = actions
                    .iter()
                    .filter_map(|a| {
                        call(
                            a.get("name")?,
                            a.get("arguments"),
                            a.get("compare_args").filter(|c| !c.is_null()),
                        )
                    })
                    .collect();
                tasks.push((format!("task-{}", py_str(id)), calls));
            }
        }
        // τ-bench: each record carries its task.
        Value::Array(records) => {
            for record in records {
                let Some(actions) = record
                    .pointer("/info/task/actions")
                    .and_then(Value::as_array)
                else {
                    continue;
                };
                let Some(id) = record.get("task_id") else {
                    continue;
                };
                let calls = actions
                    .iter()
                    .filter_map(|a| call(a.get("name")?, a.get("kwargs"), None))
                    .collect();
                tasks.push((format!("task-{}", py_str(id)), calls));
            }
        }
        _ => {}
    }
    // Trials of one task repeat it: keep its first listing.
    let mut seen = std::collections::HashSet::new();
    tasks.retain(|(key, _)| seen.insert(key.clone()));
    Ok(tasks)
}

/// One benchmark action as an expected call; `None` for a read-only one.
fn call(name: &Value, arguments: Option<&Value>, compare: Option<&Value>) -> Option<CallFile> {
    let tool = name.as_str()?.to_string();
    if has_reading_verb(&tool) {
        return None;
    }
    let arguments: Map<String, Value> = arguments
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let compare = compare.and_then(Value::as_array).map(|names| {
        names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    });
    Some(CallFile {
        tool,
        arguments,
        compare,
        matchers: Map::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        path
    }

    #[test]
    fn tau2_tasks_give_their_state_changing_actions_with_compare_args() {
        let dir = tempfile::tempdir().unwrap();
        let export = serde_json::json!({"tasks": [
            {"id": "7", "evaluation_criteria": {"actions": [
                {"name": "get_user_details", "arguments": {"user_id": "u"}},
                {"name": "book_reservation", "arguments": {"user_id": "u", "insurance": "no"},
                 "compare_args": ["user_id"]}
            ]}},
            {"id": 8, "evaluation_criteria": {"actions": [
                {"name": "get_reservation_details", "arguments": {"reservation_id": "R"}}
            ]}}
        ], "simulations": []});
        let (file, summary) = import(&[write(dir.path(), "r.json", &export)]).unwrap();
        let keys: Vec<&String> = file.scenarios.keys().collect();
        assert_eq!(keys, ["task-7", "task-8"]);
        let calls = &file.scenarios["task-7"].calls;
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].tool, "book_reservation");
        assert_eq!(
            calls[0].compare.as_deref(),
            Some(&["user_id".to_string()][..])
        );
        assert!(file.scenarios["task-8"].calls.is_empty());
        assert_eq!(summary.read_only_tasks, 1);
    }

    #[test]
    fn tau_records_give_their_task_actions_once_per_task() {
        let dir = tempfile::tempdir().unwrap();
        let record = |trial: u32| {
            serde_json::json!({"task_id": 3, "trial": trial, "reward": 1.0, "traj": [],
                "info": {"task": {"actions": [{"name": "cancel_reservation", "kwargs": {"reservation_id": "Z"}}]}}})
        };
        let path = write(
            dir.path(),
            "t.json",
            &Value::Array(vec![record(0), record(1)]),
        );
        let (file, summary) = import(&[path]).unwrap();
        assert_eq!(summary.tasks, 1);
        assert_eq!(
            file.scenarios["task-3"].calls[0].arguments["reservation_id"],
            "Z"
        );
    }

    #[test]
    fn an_export_without_expectations_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "otlp.json",
            &serde_json::json!({"resourceSpans": []}),
        );
        let err = import(&[path]).unwrap_err().to_string();
        assert!(
            err.contains("otlp.json: carries no expected actions"),
            "{err}"
        );
    }

    #[test]
    fn keys_two_exports_disagree_on_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let export = |tool: &str| {
            serde_json::json!({"tasks": [{"id": 1, "evaluation_criteria": {"actions": [
                {"name": tool, "arguments": {}}]}}]})
        };
        let a = write(dir.path(), "a.json", &export("book"));
        let b = write(dir.path(), "b.json", &export("cancel"));
        let (file, summary) = import(&[a, b]).unwrap();
        assert!(file.scenarios.is_empty());
        assert_eq!(summary.conflicting, ["task-1"]);
    }
}
