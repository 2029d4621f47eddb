//! `faultgate expect draft`: expectations drafted from baseline runs, with no labels.
//!
//! Runs of a good agent on the same scenario tend to make the same state-changing calls, with the same
//! key arguments, while a failing run misses one or makes another. For each scenario the runs share,
//! the draft keeps what a share of at least `min_agree` of the runs holding the scenario agree on:
//!
//! - a tool is expected when that share of the runs call it;
//! - its n-th call is expected when that share makes an n-th call of it, with the arguments that share
//!   gives the same value (as canonical JSON); arguments the runs disagree on are not compared, nor is
//!   free text (a string of several words longer than 40 characters, such as a summary for a person).
//!
//! The drafted scenarios are in `superset` mode: every agreed call must be made, other calls are
//! allowed. A scenario whose runs made state-changing calls but agree on none gets no expectation, and
//! is counted and listed in the file's `source`. The default share is a strict majority.
//!
//! Memory holds, per scenario and run, the state-changing calls as canonical text, not the traces.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::args::{canonical, parse_arguments};
use super::file::{CallFile, ExpectFile, ScenarioFile};
use super::read_only::{DEFAULT_VERBS, ReadOnly};
use crate::error::{InputError, display_path};
use crate::ingest::{self, Format, ReadOptions};
use crate::table::TableOptions;
use crate::table::columns::{Columns, opt};

/// The default `--min-agree`: a call needs more than half of the runs.
pub const STRICT_MAJORITY: f64 = 0.5;

/// One state-changing call as the draft holds it: the tool and each argument's canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeldCall {
    tool: String,
    args: Vec<(String, String)>,
}

/// What a draft found, for its summary.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DraftSummary {
    /// Scenarios seen in any run.
    pub scenarios: usize,
    /// Scenarios given an expectation.
    pub drafted: usize,
    /// Scenarios whose runs made state-changing calls but agreed on none, sorted.
    pub disagreed: Vec<String>,
    /// Expected calls written.
    pub calls: usize,
}

/// How the draft is made.
#[derive(Debug, Clone)]
pub struct DraftOptions {
    /// The share of runs holding a scenario that must agree on a call (`> min_agree`, or all of them
    /// when it is 1).
    pub min_agree: f64,
    /// The trace format of the runs.
    pub format: Format,
    /// Globs of tools that change nothing, besides the default reading verbs; written into the file.
    pub read_only_tools: Vec<String>,
    /// Globs of tools that change state whatever their name says; written into the file.
    pub state_changing_tools: Vec<String>,
}

impl Default for DraftOptions {
    fn default() -> Self {
        DraftOptions {
            min_agree: STRICT_MAJORITY,
            format: Format::Auto,
            read_only_tools: Vec::new(),
            state_changing_tools: Vec::new(),
        }
    }
}

/// Drafts expectations from `runs` (each a file or a folder of one run).
///
/// # Errors
///
/// The first run that cannot be read, or that holds no trace.
pub fn draft(
    runs: &[PathBuf],
    options: &DraftOptions,
) -> Result<(ExpectFile, DraftSummary), InputError> {
    let rules = ReadOnly::new(
        options.read_only_tools.clone(),
        options.state_changing_tools.clone(),
        true,
    );
    // Per scenario, per run that holds it, the run's calls (the first trace of a scenario in a run
    // stands for the run).
    let mut held: BTreeMap<String, Vec<Vec<HeldCall>>> = BTreeMap::new();
    for path in runs {
        let mut seen_here: HashSet<String> = HashSet::new();
        for file in ingest::expand_paths(std::slice::from_ref(path))? {
            let read_options = ReadOptions::new(options.format, TableOptions::default());
            let each = |batch: crate::table::TraceBatch| -> Vec<(String, Vec<HeldCall>)> {
                let cols = Columns::new(&batch);
                cols.traces()
                    .filter_map(|t| {
                        let key = opt(cols.scenario, t)?.to_string();
                        Some((key, state_changing_calls(&cols, t, &rules)))
                    })
                    .collect()
            };
            let read = ingest::read_file(
                &file,
                &read_options,
                &each,
                &mut |traces| {
                    for (key, calls) in traces {
                        if seen_here.insert(key.clone()) {
                            let runs_of = held.entry(key).or_default();
                            runs_of.push(calls);
                        }
                    }
                    Ok(())
                },
                None,
            )?;
            if read.traces == 0 {
                return Err(InputError::NoTraces(file));
            }
        }
    }
    let mut summary = DraftSummary {
        scenarios: held.len(),
        ..DraftSummary::default()
    };
    let mut scenarios = BTreeMap::new();
    for (key, runs_of) in held {
        let calls = agreed_calls(&runs_of, options.min_agree);
        let any_made = runs_of.iter().any(|calls| !calls.is_empty());
        if calls.is_empty() && any_made {
            summary.disagreed.push(key);
            continue;
        }
        summary.drafted += 1;
        summary.calls += calls.len();
        scenarios.insert(
            key,
            ScenarioFile {
                mode: None,
                calls,
                forbidden: Vec::new(),
            },
        );
    }
    let source = serde_json::json!({
        "command": "expect draft",
        "runs": runs.iter().map(|p| display_path(p)).collect::<Vec<_>>(),
        "min_agree": options.min_agree,
        "read_only": {"default_verbs": DEFAULT_VERBS},
        "scenarios": summary.scenarios,
        "drafted": summary.drafted,
        "disagreed": summary.disagreed,
    });
    Ok((
        ExpectFile {
            source: Some(source),
            read_only_tools: options.read_only_tools.clone(),
            state_changing_tools: options.state_changing_tools.clone(),
            scenarios,
            ..ExpectFile::default_file()
        },
        summary,
    ))
}

/// The state-changing calls of trace `t` that did not fail, in step order.
fn state_changing_calls(cols: &Columns<'_>, t: usize, rules: &ReadOnly) -> Vec<HeldCall> {
    let annotated = cols.read_only_tools(t);
    cols.step_rows(t)
        .filter(|&s| {
            let tool = cols.tool.value(s);
            !tool.is_empty()
                && cols.step_succeeded(t, s)
                && !rules.is_read_only(tool, annotated.iter().any(|a| a == tool))
        })
        .map(|s| {
            let args = match parse_arguments(cols.arguments.value(s)) {
                Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), canonical(v))).collect(),
                _ => Vec::new(),
            };
            HeldCall {
                tool: cols.tool.value(s).to_string(),
                args,
            }
        })
        .collect()
}

/// The longest string value still compared when it holds several words.
const PROSE_CHARS: usize = 40;

/// Returns true if and only if a canonical value is free text (a summary, a message to a person): a
/// string of several words longer than [`PROSE_CHARS`]. Runs never word such text alike, so a draft
/// that compared it would expect one run's wording of every other run.
fn is_prose(value: &str) -> bool {
    value.starts_with('"') && value.contains(' ') && value.chars().count() > PROSE_CHARS + 2
}

/// Returns true if and only if `count` of `of` runs is the share the draft needs.
fn agrees(count: usize, of: usize, min_agree: f64) -> bool {
    #[allow(clippy::cast_precision_loss)] // run counts are small
    let share = count as f64 / of as f64;
    if min_agree >= 1.0 {
        count == of
    } else {
        share > min_agree
    }
}

/// The calls a share of the runs agree on, tool by tool in the order the tools first appear.
fn agreed_calls(runs: &[Vec<HeldCall>], min_agree: f64) -> Vec<CallFile> {
    let n = runs.len();
    let mut tools: Vec<&str> = Vec::new();
    for calls in runs {
        for call in calls {
            if !tools.contains(&call.tool.as_str()) {
                tools.push(&call.tool);
            }
        }
    }
    let mut out = Vec::new();
    for tool in tools {
        let per_run: Vec<Vec<&HeldCall>> = runs
            .iter()
            .map(|calls| calls.iter().filter(|c| c.tool == tool).collect())
            .collect();
        let calling = per_run.iter().filter(|c| !c.is_empty()).count();
        if !agrees(calling, n, min_agree) {
            continue;
        }
        // The n-th call of the tool, for as many calls as the runs agree the tool is called.
        let most = per_run.iter().map(Vec::len).max().unwrap_or(0);
        for slot in 0..most {
            let nth: Vec<&HeldCall> = per_run
                .iter()
                .filter_map(|c| c.get(slot).copied())
                .collect();
            if !agrees(nth.len(), n, min_agree) {
                break;
            }
            let mut arguments = Map::new();
            let mut keys: Vec<&str> = nth
                .iter()
                .flat_map(|c| c.args.iter().map(|(k, _)| k.as_str()))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                let mut counts: Vec<(&str, usize)> = Vec::new();
                for call in &nth {
                    if let Some((_, value)) = call.args.iter().find(|(k, _)| k == key) {
                        match counts.iter_mut().find(|(v, _)| *v == value) {
                            Some((_, c)) => *c += 1,
                            None => counts.push((value, 1)),
                        }
                    }
                }
                // The most common value, the first seen among equals, when enough runs give it.
                if let Some((value, count)) = counts
                    .iter()
                    .copied()
                    .reduce(|best, next| if next.1 > best.1 { next } else { best })
                    && agrees(count, n, min_agree)
                    && !is_prose(value)
                {
                    arguments.insert(
                        key.to_string(),
                        serde_json::from_str(value).unwrap_or(Value::Null),
                    );
                }
            }
            out.push(CallFile {
                tool: tool.to_string(),
                arguments,
                compare: None,
                matchers: Map::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: &[(&str, &str)]) -> HeldCall {
        HeldCall {
            tool: tool.into(),
            args: args
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_majority_gives_the_call_and_the_arguments_it_agrees_on() {
        let runs = vec![
            vec![call("cancel", &[("id", "\"Z\""), ("reason", "\"a\"")])],
            vec![call("cancel", &[("id", "\"Z\""), ("reason", "\"b\"")])],
            vec![call("refund", &[("id", "\"Z\"")])],
        ];
        let calls = agreed_calls(&runs, STRICT_MAJORITY);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].tool, "cancel");
        assert_eq!(
            Value::Object(calls[0].arguments.clone()),
            serde_json::json!({"id": "Z"})
        );
    }

    #[test]
    fn runs_that_agree_on_nothing_give_nothing() {
        let runs = vec![
            vec![call("cancel", &[])],
            vec![call("refund", &[])],
            vec![call("book", &[])],
        ];
        assert!(agreed_calls(&runs, STRICT_MAJORITY).is_empty());
    }

    #[test]
    fn repeated_calls_are_expected_as_often_as_the_runs_agree() {
        let runs = vec![
            vec![call("pay", &[("n", "1")]), call("pay", &[("n", "2")])],
            vec![call("pay", &[("n", "1")]), call("pay", &[("n", "2")])],
            vec![call("pay", &[("n", "1")])],
        ];
        let calls = agreed_calls(&runs, STRICT_MAJORITY);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].arguments["n"], 2);
    }

    #[test]
    fn a_share_of_one_needs_every_run() {
        let runs = vec![vec![call("pay", &[])], vec![call("pay", &[])], vec![]];
        assert!(agreed_calls(&runs, 1.0).is_empty());
        assert_eq!(agreed_calls(&runs, 0.6).len(), 1);
    }
}
