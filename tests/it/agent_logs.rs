//! The benchmark and agent-log formats 0.4.1 did not read (tau-bench and tau2-bench results, SWE-agent
//! and mini-swe-agent trajectories, Who&When multi-agent logs), read end to end from fixtures built from
//! each format's public repository (`tests/fixtures/formats/<format>/SOURCE.md`): what each trace's table
//! says, the verdicts `check` gives, a tau results file feeding `baseline`, and multi-agent handoffs seen
//! by the workflow check.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use arrow_array::Array;
use common::{faultgate, root, scratch};
use faultgate::ingest::{Format, read_path};
use faultgate::table::TraceBatch;
use faultgate::table::schema::*;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/formats").join(name)
}

fn read(name: &str) -> (Format, TraceBatch) {
    read_path(&fixture(name), Format::Auto).unwrap_or_else(|e| panic!("{e}"))
}

/// What the tables say about one trace.
#[derive(Debug)]
struct Trace {
    id: String,
    agent: String,
    prompt: String,
    answer: String,
    scenario: String,
    termination: String,
    tokens: (Option<i64>, Option<i64>),
    latency_ms: Option<f64>,
    cost: Option<f64>,
    /// Tool, arguments and result of each step.
    steps: Vec<(String, String, String)>,
    root: serde_json::Map<String, Value>,
}

impl Trace {
    fn tools(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.0.as_str()).collect()
    }

    /// The outcome the format recorded, kept on the root.
    fn outcome(&self) -> Option<&Value> {
        self.root.get("faultgate.recorded_outcome")
    }
}

fn traces(batch: &TraceBatch) -> Vec<Trace> {
    (0..batch.len())
        .map(|t| {
            let text = |name: &str| batch.trace_str(name).value(t).to_string();
            let int = |name: &str| {
                let col = batch.trace_i64(name);
                col.is_valid(t).then(|| col.value(t))
            };
            let float = |name: &str| {
                let col = batch.trace_f64(name);
                col.is_valid(t).then(|| col.value(t))
            };
            Trace {
                id: text(TRACE_ID),
                agent: text(TRACE_AGENT),
                prompt: text(TRACE_PROMPT),
                answer: text(TRACE_ANSWER),
                scenario: text(TRACE_SCENARIO),
                termination: text(TRACE_TERMINATION),
                tokens: (int(TRACE_INPUT_TOKENS), int(TRACE_OUTPUT_TOKENS)),
                latency_ms: float(TRACE_LATENCY_MS),
                cost: float(TRACE_COST_USD),
                steps: batch
                    .step_rows(t)
                    .map(|row| {
                        let s = |name: &str| batch.step_str(name).value(row).to_string();
                        (s(STEP_TOOL), s(STEP_ARGUMENTS), s(STEP_RESULT))
                    })
                    .collect(),
                root: serde_json::from_str(&text(TRACE_ROOT_ATTRIBUTES)).unwrap(),
            }
        })
        .collect()
}

/// trace id -> the checks that fired on it, with their reasons, from `check --json`.
fn fired(report: &Path) -> Vec<(String, String, String)> {
    let report: Value = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["detected"] == json!(true))
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("trace_id"), s("check"), s("reason"))
        })
        .collect()
}

/// A `--json` report in a scratch folder, removed with it when the value drops.
struct JsonReport {
    _scratch: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for JsonReport {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

fn check_json(tag: &str, args: &[&str]) -> (Output, JsonReport) {
    let scratch = scratch();
    let path = scratch.path().join(format!("report-{tag}.json"));
    let mut argv = vec!["check"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--json", path.to_str().unwrap()]);
    let run = faultgate(&argv);
    (
        run,
        JsonReport {
            _scratch: scratch,
            path,
        },
    )
}

#[test]
fn tau_bench_results_give_one_trace_per_trial_with_the_reward_as_outcome() {
    let (format, batch) = read("tau/tau_bench_airline.json");
    assert_eq!(format, Format::TauBench);
    let t = traces(&batch);
    let ids: Vec<&str> = t.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "task-1#0@tau_bench_airline",
            "task-1#1@tau_bench_airline",
            "task-0#0@tau_bench_airline"
        ]
    );
    let scenarios: Vec<&str> = t.iter().map(|t| t.scenario.as_str()).collect();
    assert_eq!(scenarios, ["task-1", "task-1", "task-0"]);
    let outcomes: Vec<Option<&Value>> = t.iter().map(Trace::outcome).collect();
    assert_eq!(
        outcomes,
        [Some(&json!(false)), Some(&json!(true)), Some(&json!(false))]
    );
    assert_eq!(t[1].root.get("faultgate.reward"), Some(&json!(1.0)));

    let solved = &t[1];
    assert_eq!(solved.agent, "agent");
    assert_eq!(
        solved.prompt,
        "Hi! I need to change my return flight from Texas to Newark."
    );
    assert!(
        solved
            .answer
            .starts_with("Your reservation with ID **Z7GOZK** has been successfully cancelled"),
        "{}",
        solved.answer
    );
    assert_eq!(
        solved.tools(),
        [
            "get_user_details",
            "get_reservation_details",
            "get_reservation_details",
            "get_reservation_details",
            "cancel_reservation"
        ]
    );
    // Arguments are the call's JSON text as recorded; results the paired tool message's content.
    assert_eq!(solved.steps[0].1, r#"{"user_id":"olivia_gonzalez_2305"}"#);
    assert_eq!(solved.steps[4].1, r#"{"reservation_id":"Z7GOZK"}"#);
    assert!(
        solved.steps[4]
            .2
            .starts_with(r#"{"reservation_id": "Z7GOZK", "user_id": "olivia_gonzalez_2305""#)
    );
    // tau-bench records no termination reason, times, tokens or agent cost.
    assert_eq!(solved.termination, "");
    assert_eq!(
        (solved.tokens, solved.latency_ms, solved.cost),
        ((None, None), None, None)
    );

    // A conversation without tool calls has no steps; one cut off after a tool call has no answer.
    assert!(t[0].steps.is_empty());
    assert!(t[0].answer.starts_with("You're welcome!"));
    assert_eq!(t[2].tools(), ["get_user_details", "search_direct_flight"]);
    assert_eq!(t[2].answer, "");
}

#[test]
fn a_reused_tau_bench_call_id_gives_each_call_its_own_result() {
    // gpt-4o reused `call_dhYivf6VRUVJfU9DItC2EQ95`: a flight search, then a flight update that failed.
    let (format, batch) = read("tau/tau_bench_reused_ids.json");
    assert_eq!(format, Format::TauBench);
    let t = &traces(&batch)[0];
    assert_eq!(
        t.tools(),
        [
            "get_reservation_details",
            "search_direct_flight",
            "get_reservation_details",
            "search_direct_flight",
            "think",
            "update_reservation_flights",
            "update_reservation_flights"
        ]
    );
    assert!(
        t.steps[3].2.starts_with(r#"[{"flight_number": "HAT004""#),
        "{}",
        t.steps[3].2
    );
    assert_eq!(
        t.steps[6].2,
        "Error: flight HAT030 not available on date 2024-05-13"
    );

    // The run ends on that error, which no later update recovers from.
    let (run, report) = check_json(
        "tau-reused",
        &["tests/fixtures/formats/tau/tau_bench_reused_ids.json"],
    );
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        fired(&report),
        [(
            "task-13#0@tau_bench_reused_ids".to_string(),
            "unrecovered_tool_error".to_string(),
            "Tool 'update_reservation_flights' failed at step 6 (Response starts with 'Error:') and no \
             subsequent call to 'update_reservation_flights' succeeded."
                .to_string()
        )]
    );
}

#[test]
fn tau2_results_read_termination_usage_times_and_tool_errors() {
    let (format, batch) = read("tau/tau2_airline.json");
    assert_eq!(format, Format::TauBench);
    let t = traces(&batch);
    assert_eq!(t.len(), 2);
    let (done, capped) = (&t[0], &t[1]);
    assert_eq!(
        (done.id.as_str(), done.scenario.as_str()),
        ("task-7#0@tau2_airline", "task-7")
    );
    assert_eq!(
        (capped.id.as_str(), capped.scenario.as_str()),
        ("task-7#1@tau2_airline", "task-7")
    );
    assert_eq!(done.termination, "user_stop");
    assert_eq!(capped.termination, "max_steps");
    assert_eq!(done.outcome(), Some(&json!(true)));
    assert_eq!(capped.outcome(), Some(&json!(false)));
    // Usage is summed over the agent's messages; the cost is the agent's; latency from start to end.
    assert_eq!(
        done.tokens,
        (
            Some(1200 + 1300 + 1400 + 1450 + 1500),
            Some(25 + 24 + 40 + 20 + 30)
        )
    );
    assert_eq!(done.cost, Some(0.0123));
    assert_eq!(done.latency_ms, Some(9500.0));
    assert_eq!(
        done.prompt,
        "Hi, I need to cancel my trip from Newark. My user id is olivia_gonzalez_2305."
    );
    assert!(
        done.answer
            .starts_with("Your reservation Z7GOZK is cancelled")
    );
    assert_eq!(
        done.tools(),
        [
            "get_user_details",
            "get_reservation_details",
            "cancel_reservation"
        ]
    );
    assert_eq!(done.steps[2].1, r#"{"reservation_id": "Z7GOZK"}"#);
    assert_eq!(
        done.steps[2].2,
        r#"{"reservation_id": "Z7GOZK", "status": "cancelled"}"#
    );

    // tau2's `"error": true` makes an error result; the simulated user's own tool call is a step too.
    assert_eq!(
        capped.steps,
        [
            (
                "cancel_reservation".to_string(),
                r#"{"reservation_id": "Z7G0ZK"}"#.to_string(),
                "Error: Reservation Z7G0ZK not found".to_string()
            ),
            (
                "cancel_reservation".to_string(),
                r#"{"reservation_id": "Z7G0ZK"}"#.to_string(),
                "Error: Reservation Z7G0ZK not found".to_string()
            ),
            (
                "check_email".to_string(),
                r#"{"subject": "reservation"}"#.to_string(),
                "Your reservation: Z7GOZK".to_string()
            ),
        ]
    );
    assert_eq!(capped.answer, "", "the run ended on a tool call");

    // One simulation per file (tau2's `dir` storage) reads the same.
    let results: Value =
        serde_json::from_slice(&std::fs::read(fixture("tau/tau2_airline.json")).unwrap()).unwrap();
    let scratch = scratch();
    let single = scratch.path().join("3c2a9e0e.json");
    std::fs::write(&single, results["simulations"][1].to_string()).unwrap();
    let (format, batch) = read_path(&single, Format::Auto).unwrap();
    assert_eq!(format, Format::TauBench);
    let alone = &traces(&batch)[0];
    assert_eq!(
        (alone.id.as_str(), alone.termination.as_str()),
        ("task-7#1@3c2a9e0e", "max_steps")
    );
    assert_eq!(alone.steps, capped.steps);

    let (run, report) = check_json("tau2", &["tests/fixtures/formats/tau/tau2_airline.json"]);
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let fired = fired(&report);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(
        (fired[0].0.as_str(), fired[0].1.as_str()),
        ("task-7#1@tau2_airline", "unrecovered_tool_error")
    );
}

#[test]
fn tau2_leaderboard_submissions_read_as_their_simulations() {
    // A trajectory file of the tau2-bench leaderboard: the simulations under a summary, no `info`.
    let (format, batch) = read("tau/tau2_leaderboard_airline.json");
    assert_eq!(format, Format::TauBench);
    let t = traces(&batch);
    let ids: Vec<(&str, &str)> = t
        .iter()
        .map(|t| (t.id.as_str(), t.scenario.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            ("task-3#0@tau2_leaderboard_airline", "task-3"),
            ("task-7#0@tau2_leaderboard_airline", "task-7")
        ]
    );
    let (passed, broken) = (&t[0], &t[1]);
    assert_eq!(passed.outcome(), Some(&json!(true)));
    assert_eq!(passed.termination, "user_stop");
    assert_eq!(
        passed.tools(),
        [
            "get_reservation_details",
            "get_user_details",
            "transfer_to_human_agents"
        ]
    );
    assert!(passed.latency_ms.is_some_and(|ms| ms > 0.0));
    // The run that never started (an infrastructure error) has no messages, hence no steps.
    assert_eq!(broken.termination, "infrastructure_error");
    assert!(broken.steps.is_empty());
    let (run, _) = check_json(
        "tau2-leaderboard",
        &["tests/fixtures/formats/tau/tau2_leaderboard_airline.json"],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn a_tau_results_file_feeds_baseline_one_scenario_per_task() {
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let second = dir.join("run2.json");
    std::fs::copy(fixture("tau/tau_bench_airline.json"), &second).unwrap();
    let band = dir.join("band.json");
    let run = faultgate(&[
        "baseline",
        "tests/fixtures/formats/tau/tau_bench_airline.json",
        second.to_str().unwrap(),
        "--out",
        band.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let band: Value = serde_json::from_slice(&std::fs::read(&band).unwrap()).unwrap();
    assert_eq!(band["scenarios"], json!(["task-0", "task-1"]));
    assert_eq!(band["runs"], json!(2));
    // The two trials of task 1 are one scenario, which the run reports as such.
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("1 scenario key(s) carried by more than one trace, each clean only if all its traces are: task-1"),
        "{stderr}"
    );
}

#[test]
fn swe_agent_actions_are_tool_steps_and_the_submission_the_answer() {
    let (format, batch) = read("swe_agent/6e44b9__sweagenttestrepo-1c2844.traj");
    assert_eq!(format, Format::SweAgent);
    let t = traces(&batch);
    assert_eq!(t.len(), 1);
    let t = &t[0];
    assert_eq!(t.id, "6e44b9__sweagenttestrepo-1c2844");
    assert_eq!(t.agent, "swe-agent");
    assert_eq!(t.scenario, "SWE-agent__test-repo-i1");
    assert_eq!(t.termination, "submitted");
    assert_eq!(t.tokens, (Some(7141), Some(243)));
    assert_eq!(t.cost, Some(0.019520000000000006));
    assert!(
        t.prompt.starts_with(
            "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\nSyntaxError: invalid syntax"
        ),
        "{}",
        t.prompt
    );
    assert!(
        t.answer
            .contains("+def division(a: float, b: float) -> float:")
    );
    assert_eq!(
        t.tools(),
        ["find_file", "open", "edit", "python3", "submit"]
    );
    assert_eq!(t.steps[0].1, "find_file missing_colon.py");
    assert!(
        t.steps[0]
            .2
            .starts_with("Found 1 matches for \"missing_colon.py\"")
    );
    assert_eq!(
        t.steps[3].1,
        "python3 /SWE-agent__test-repo/tests/missing_colon.py"
    );
    assert_eq!(t.steps[3].2, "8.2");
}

#[test]
fn mini_swe_agent_tool_calls_pair_with_their_observations() {
    let (format, batch) = read("swe_agent/SWE-agent__test-repo-i1.traj.json");
    assert_eq!(format, Format::SweAgent);
    let t = &traces(&batch)[0];
    assert_eq!(
        (t.id.as_str(), t.agent.as_str()),
        ("SWE-agent__test-repo-i1", "mini-swe-agent")
    );
    assert_eq!(t.scenario, "SWE-agent__test-repo-i1");
    assert_eq!(t.termination, "Submitted");
    assert_eq!(t.cost, Some(0.015));
    assert_eq!(t.latency_ms, Some(15000.0));
    assert!(t.prompt.starts_with("<pr_description>"));
    assert!(t.answer.starts_with("diff --git a/tests/missing_colon.py"));
    let commands: Vec<&str> = t.steps.iter().map(|s| s.1.as_str()).collect();
    assert_eq!(
        commands,
        [
            r#"{"command": "cat tests/missing_colon.py"}"#,
            r#"{"command": "sed -i 's/-> float$/-> float:/' tests/missing_colon.py"}"#,
            r#"{"command": "python tests/missing_colon.py"}"#,
            r#"{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"}"#,
        ]
    );
    assert!(t.tools().iter().all(|tool| *tool == "bash"));
    assert_eq!(
        t.steps[2].2,
        "<returncode>1</returncode>\n<output>\nZeroDivisionError: division by zero\n</output>"
    );
}

#[test]
fn a_bare_mini_swe_agent_message_list_reads_its_fenced_commands() {
    let (format, batch) = read("swe_agent/local.traj.json");
    assert_eq!(format, Format::SweAgent);
    let t = &traces(&batch)[0];
    assert_eq!(t.id, "local");
    assert!(
        t.prompt
            .starts_with("Please solve this issue: Blah blah blah")
    );
    assert_eq!(
        t.steps,
        [
            (
                "bash".to_string(),
                r#"{"command": "echo 'hello world'"}"#.to_string(),
                "<returncode>0</returncode>\n<output>\nhello world\n</output>".to_string()
            ),
            (
                "bash".to_string(),
                r#"{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}"#.to_string(),
                String::new()
            ),
        ]
    );
    // What followed the submit command is the submission: here nothing.
    assert_eq!(t.answer, "");
}

#[test]
fn ag2_turns_are_agent_steps_and_code_execution_is_a_tool_step() {
    let (format, batch) = read("multi_agent/who_and_when_ag2.json");
    assert_eq!(format, Format::MultiAgent);
    let t = &traces(&batch)[0];
    assert_eq!(t.agent, "Excel_Expert");
    // Who&When names its files 1.json, 2.json... in both subsets, so the question id is the trace id.
    assert_eq!(t.id, "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2");
    assert_eq!(t.scenario, "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2");
    assert_eq!(t.outcome(), Some(&json!(false)));
    assert!(
        t.prompt
            .starts_with("This spreadsheet contains a list of clients")
    );
    // The last words before the closing TERMINATE.
    assert!(
        t.answer
            .starts_with("The code has successfully executed and returned the result."),
        "{}",
        t.answer
    );
    assert_eq!(t.tools(), ["execute_code", "execute_code"]);
    assert!(
        t.steps[0].1.starts_with("import pandas as pd"),
        "{}",
        t.steps[0].1
    );
    assert!(
        t.steps[0]
            .2
            .starts_with("exitcode: 0 (execution succeeded)")
    );
    assert_eq!(
        t.steps[1].2,
        "exitcode: 0 (execution succeeded)\nCode output: 4\n"
    );

    // The executed code reads a file through `../`, which the default policy denies.
    let (run, report) = check_json(
        "ag2",
        &["tests/fixtures/formats/multi_agent/who_and_when_ag2.json"],
    );
    assert_eq!(run.status.code(), Some(1));
    let fired = fired(&report);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].1, "policy");
    assert!(
        fired[0]
            .2
            .starts_with(r"step 1: execute_code arguments match denied pattern '\.\./'"),
        "{}",
        fired[0].2
    );
}

#[test]
fn magentic_one_reads_the_final_answer_and_the_workflow_check_sees_its_handoffs() {
    let (format, batch) = read("multi_agent/who_and_when_magentic_one.json");
    assert_eq!(format, Format::MultiAgent);
    let t = &traces(&batch)[0];
    assert_eq!(t.agent, "Orchestrator");
    assert_eq!(
        t.prompt,
        "What's the highest price a high-rise apartment was sold for in Mission Bay, San Francisco, in 2021?"
    );
    assert_eq!(t.answer, "1080000000");
    assert_eq!(t.termination, "No agent selected.");
    assert_eq!(t.outcome(), Some(&json!(false)));
    assert!(t.steps.is_empty(), "web actions are prose, not tool calls");

    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let spec = dir.join("spec.json");
    std::fs::write(
        &spec,
        json!({"mandatory_checkpoints": [], "handoff_contracts": [
            {"from_agent": "Orchestrator", "to_agent": "WebSurfer", "required_fields": ["url"], "require_verified": false}
        ]})
        .to_string(),
    )
    .unwrap();
    let (run, report) = check_json(
        "handoffs-run",
        &[
            "tests/fixtures/formats/multi_agent/who_and_when_magentic_one.json",
            "--workflow",
            spec.to_str().unwrap(),
            "--check",
            "workflow",
        ],
    );
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let fired = fired(&report);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(
        fired[0].2,
        "handoff-contract-violation: required fields never delivered at a contracted border: \
         Orchestrator->WebSurfer (seq 1) missing ['url']; uncontracted-handoff: WebSurfer->Orchestrator \
         (seq 2) is covered by no contract; the spec may be incomplete, flagging instead of blocking"
    );
}

#[test]
fn the_new_formats_are_selectable_and_a_wrong_one_is_refused_in_one_line() {
    let forced = faultgate(&[
        "check",
        "tests/fixtures/formats/multi_agent/who_and_when_ag2.json",
        "--format",
        "swe-agent",
    ]);
    assert_eq!(forced.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&forced.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("note:")).collect();
    assert_eq!(
        errors,
        [
            "faultgate: tests/fixtures/formats/multi_agent/who_and_when_ag2.json: not a valid swe-agent \
             export: the records do not have its fields (expected a SWE-agent `.traj` object \
             (`trajectory`, `info`), a mini-swe-agent run (`messages`) or a message list; found keys \
             is_correct, question, question_ID, level, ground_truth, history, mistake_agent, mistake_step, …)"
        ],
        "{stderr}"
    );

    // A message list without mini-swe-agent's submit command is not detected, but can be forced.
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let plain = dir.join("chat.json");
    std::fs::write(
        &plain,
        json!([{"role": "user", "content": "list files"},
               {"role": "assistant", "content": "```bash\nls\n```"},
               {"role": "user", "content": "a.txt"}])
        .to_string(),
    )
    .unwrap();
    assert!(read_path(&plain, Format::Auto).is_err());
    let (format, batch) = read_path(&plain, Format::SweAgent).unwrap();
    assert_eq!(format, Format::SweAgent);
    let t = &traces(&batch)[0];
    assert_eq!(
        t.steps,
        [(
            "bash".to_string(),
            r#"{"command": "ls"}"#.to_string(),
            "a.txt".to_string()
        )]
    );
}

#[test]
fn inputs_of_the_older_formats_keep_their_format() {
    let mut files = Vec::new();
    for dir in [
        "examples/formats",
        "tests/fixtures/formats",
        "tests/fixtures/compat",
        "examples/gate",
    ] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file()
                && path
                    .extension()
                    .is_some_and(|e| e == "json" || e == "jsonl")
            {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 20);
    for path in files {
        if let Ok((format, _)) = read_path(&path, Format::Auto) {
            assert!(
                !matches!(
                    format,
                    Format::TauBench | Format::SweAgent | Format::MultiAgent
                ),
                "{} now reads as {format:?}",
                path.display()
            );
        }
    }
}

#[test]
fn cut_and_odd_inputs_are_an_error_or_traces_never_a_panic() {
    let forced = [
        Format::Auto,
        Format::TauBench,
        Format::SweAgent,
        Format::MultiAgent,
    ];
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for name in [
        "tau/tau_bench_airline.json",
        "tau/tau2_airline.json",
        "swe_agent/6e44b9__sweagenttestrepo-1c2844.traj",
        "swe_agent/SWE-agent__test-repo-i1.traj.json",
        "swe_agent/local.traj.json",
        "multi_agent/who_and_when_ag2.json",
        "multi_agent/who_and_when_magentic_one.json",
    ] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let step = (bytes.len() / 40).max(1);
        inputs.extend(
            (0..bytes.len())
                .step_by(step)
                .map(|cut| bytes[..cut].to_vec()),
        );
        inputs.push(bytes);
    }
    for odd in [
        r#"[{"task_id": {}, "traj": "x", "reward": "1", "trial": null}]"#,
        r#"[{"task_id": 1, "traj": [{"role": "assistant", "tool_calls": [1, {"function": 5}]}, {"role": "tool", "tool_call_id": [], "content": {}}]}]"#,
        r#"{"info": {}, "simulations": [{"task_id": 1, "termination_reason": null, "start_time": "garbage", "messages": []}]}"#,
        r#"{"task_id": "1", "termination_reason": "x", "messages": [{"role": "tool", "id": "a", "content": [], "error": true, "timestamp": -5}]}"#,
        r#"{"trajectory": [{"action": 5, "observation": null}, 3], "info": 5, "replay_config": "{not json"}"#,
        r#"{"trajectory_format": "mini-swe-agent-1.1", "messages": [{"role": "assistant", "content": "```bash\n", "extra": {"actions": 3}}]}"#,
        r#"[{"role": "system", "content": "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}, {"role": "assistant", "content": "```mswea_bash_command"}]"#,
        r#"{"history": [{"content": "exitcode:", "name": "t"}, {"content": null, "role": " ()"}, {"content": "FINAL ANSWER:", "role": "x (termination condition)"}]}"#,
        r#"[{"history": [{"content": 1, "role": 2}]}, 7]"#,
        r#"{"history": []}"#,
    ] {
        inputs.push(odd.as_bytes().to_vec());
    }
    let path = Path::new("odd.json");
    for bytes in &inputs {
        for format in forced {
            let _ = faultgate::ingest::read_bytes(path, bytes, format);
        }
    }
    // The odd inputs above are not all refused: a log with turns but odd values still reads.
    let (format, batch) =
        faultgate::ingest::read_bytes(path, inputs[inputs.len() - 3].as_slice(), Format::Auto)
            .unwrap();
    assert_eq!((format, batch.len()), (Format::MultiAgent, 1));
}

#[test]
fn json_lines_of_multi_agent_records_give_one_trace_each() {
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let lines: Vec<String> = ["who_and_when_ag2.json", "who_and_when_magentic_one.json"]
        .iter()
        .map(|f| {
            let v: Value = serde_json::from_slice(
                &std::fs::read(fixture(&format!("multi_agent/{f}"))).unwrap(),
            )
            .unwrap();
            v.to_string()
        })
        .collect();
    let path = dir.join("who_and_when.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (format, batch) = read_path(&path, Format::Auto).unwrap();
    assert_eq!(format, Format::MultiAgent);
    let t = traces(&batch);
    let read: Vec<(&str, &str, &str)> = t
        .iter()
        .map(|t| (t.id.as_str(), t.agent.as_str(), t.answer.as_str()))
        .collect();
    assert_eq!(read[0].0, "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2");
    assert_eq!(read[0].1, "Excel_Expert");
    assert_eq!(
        read[1],
        (
            "e6bc98089608217e45b6956a46518fe3cce64a799b3ac43c6974c449ae14c408",
            "Orchestrator",
            "1080000000"
        )
    );
}

#[test]
fn tau2_files_of_several_domains_keep_their_ids_and_keys_apart() {
    // The tau2-bench repository names its results `gpt-4.1_<domain>_…json`: ids end in the whole name,
    // and the same task id in two domains is two scenarios once the run holds both.
    let scratch = scratch();
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(fixture("tau/tau2_airline.json")).unwrap()).unwrap();
    let airline = scratch
        .path()
        .join("gpt-4.1_airline_default_gpt-4.1_1trials.json");
    std::fs::write(&airline, doc.to_string()).unwrap();
    doc["info"]["environment_info"]["domain_name"] = json!("retail");
    let retail = scratch
        .path()
        .join("gpt-4.1_retail_default_gpt-4.1_1trials.json");
    std::fs::write(&retail, doc.to_string()).unwrap();
    let keys = |files: &[&Path]| {
        let mut args: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
        args.push("--check");
        args.push("search_loop");
        let (run, report) = check_json("domains", &args);
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        let stderr = String::from_utf8_lossy(&run.stderr).to_string();
        assert!(!stderr.contains("used by different traces"), "{stderr}");
        let report: Value = serde_json::from_slice(&std::fs::read(&*report).unwrap()).unwrap();
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_string();
                (s("trace_id"), s("scenario"))
            })
            .collect::<Vec<_>>()
    };
    let both = keys(&[&airline, &retail]);
    assert_eq!(
        both,
        [
            (
                "task-7#0@gpt-4.1_airline_default_gpt-4.1_1trials",
                "airline/task-7"
            ),
            (
                "task-7#1@gpt-4.1_airline_default_gpt-4.1_1trials",
                "airline/task-7"
            ),
            (
                "task-7#0@gpt-4.1_retail_default_gpt-4.1_1trials",
                "retail/task-7"
            ),
            (
                "task-7#1@gpt-4.1_retail_default_gpt-4.1_1trials",
                "retail/task-7"
            ),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // A run of one domain keeps the bare key, so bands drawn before still match.
    let one = keys(&[&airline]);
    assert_eq!(one[0].1, "task-7");
}
