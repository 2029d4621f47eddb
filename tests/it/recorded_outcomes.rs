//! The outcome each trace recorded of its own evaluation (a τ-bench reward, SWE-agent's `resolved`, a
//! Langfuse score): counted in every summary of a format that records one, the outcome check's input
//! under `--outcomes recorded`, and the labels of `calibrate --labels recorded`. The τ fixtures are cut
//! from the τ-bench results in `calibration/tau-bench` (see their SOURCE.md).

use crate::common;

use std::fs::File;

use arrow_array::{Array, BooleanArray, RecordBatch, StringArray};
use common::{arg, command, faultgate, read_json, scratch, stderr, stdout};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// τ-bench: task 1 trials 0 and 1 (reward 0, then 1) and task 0 trial 0 (reward 0).
const TAU: &str = "tests/fixtures/formats/tau/tau_bench_airline.json";
/// τ²-bench: one simulation that passed, one capped run that failed.
const TAU2: &str = "tests/fixtures/formats/tau/tau2_airline.json";
/// A mini-swe-agent run whose `info` says `resolved: false`.
const SWE_RESOLVED: &str =
    "tests/fixtures/formats/swe_agent/SWE-agent__test-repo-i1.resolved.traj.json";
/// Two Langfuse traces with a BOOLEAN `task_success` score of 1 and of 0.
const LANGFUSE_SCORES: &str = "tests/fixtures/formats/langfuse_scores.json";
/// A trajectory whose final event has `task_success: true`.
const TRAJECTORY: &str = "tests/fixtures/formats/trajectory.jsonl";

/// The summary line, without its elapsed time.
fn summary(out: &std::process::Output) -> String {
    let line = stdout(out)
        .lines()
        .find(|l| l.contains(" traces failed · "))
        .unwrap_or_else(|| panic!("no summary in {}", stdout(out)))
        .to_string();
    line.rsplit_once(" · ").unwrap().0.to_string()
}

/// The outcome check's (trace id, detected, reason) per trace, from a report.json.
fn outcome_verdicts(report: &serde_json::Value) -> Vec<(String, bool, String)> {
    let mut rows: Vec<(String, bool, String)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["check"] == "outcome")
        .map(|r| {
            (
                r["trace_id"].as_str().unwrap().to_string(),
                r["detected"].as_bool().unwrap(),
                r["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn the_summary_counts_the_traces_that_failed_their_own_evaluation_without_a_flag() {
    let out = faultgate(&["check", TAU]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        summary(&out)
            .ends_with("context_overflow=0 · 2/3 failed their own evaluation · judge none"),
        "{}",
        summary(&out)
    );
    let out = faultgate(&["check", TAU2]);
    assert!(
        summary(&out).contains(" · 1/2 failed their own evaluation · judge none"),
        "{}",
        summary(&out)
    );
    let out = faultgate(&["check", SWE_RESOLVED]);
    assert!(
        summary(&out).contains(" · 1/1 failed their own evaluation · judge none"),
        "{}",
        summary(&out)
    );
}

#[test]
fn formats_0_4_1_reads_keep_its_summary() {
    for input in ["examples/traces.json", TRAJECTORY, LANGFUSE_SCORES] {
        let out = faultgate(&["check", input]);
        assert!(
            !stdout(&out).contains("own evaluation"),
            "{input}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn outcome_score_names_the_langfuse_score_that_is_the_outcome() {
    let out = faultgate(&["check", LANGFUSE_SCORES, "--outcome-score", "task_success"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        summary(&out).contains(" · 1/2 failed their own evaluation · "),
        "{}",
        summary(&out)
    );
    // A numeric score passes only at 1, as a τ-bench reward does.
    let out = faultgate(&["check", LANGFUSE_SCORES, "--outcome-score", "helpfulness"]);
    assert!(
        summary(&out).contains(" · 1/2 failed their own evaluation · "),
        "{}",
        summary(&out)
    );
    let dir = scratch();
    let json = dir.path().join("r.json");
    let out = faultgate(&[
        "check",
        LANGFUSE_SCORES,
        "--outcome-score",
        "task_success",
        "--outcomes",
        "recorded",
        "--json",
        arg(&json),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        outcome_verdicts(&read_json(&json)),
        [
            (
                "t-lf-s1".to_string(),
                false,
                "the trace's own evaluation passed".to_string()
            ),
            (
                "t-lf-s2".to_string(),
                true,
                "the trace's own evaluation failed".to_string()
            ),
        ]
    );
}

#[test]
fn outcomes_recorded_is_the_outcome_check_in_every_output() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let md = dir.path().join("r.md");
    let html = dir.path().join("r.html");
    let out = faultgate(&[
        "check",
        TAU,
        "--outcomes",
        "recorded",
        "--json",
        arg(&json),
        "--markdown",
        arg(&md),
        "--html",
        arg(&html),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let verdicts = outcome_verdicts(&read_json(&json));
    let fired: Vec<(&str, bool)> = verdicts
        .iter()
        .map(|(id, fired, _)| (id.as_str(), *fired))
        .collect();
    assert_eq!(
        fired,
        [
            ("task-0#0@tau_bench_airline", true),
            ("task-1#0@tau_bench_airline", true),
            ("task-1#1@tau_bench_airline", false),
        ]
    );
    assert_eq!(verdicts[0].2, "the trace's own evaluation failed");
    let table = stdout(&out);
    assert!(table.lines().next().unwrap().contains("outcome"), "{table}");
    assert!(
        summary(&out).contains(", outcome=2 · 2/3 failed their own evaluation · "),
        "{}",
        summary(&out)
    );
    assert!(
        table.contains("outcome: 1/3 true (0.33)"),
        "the outcome block: {table}"
    );
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        markdown.contains("2/3 failed their own evaluation"),
        "{markdown}"
    );
    assert!(
        markdown.contains("the trace's own evaluation failed"),
        "{markdown}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("2/3 failed their own evaluation"));
    assert!(page.contains(
        "<td>outcome</td><td><div class=\"reason\">the trace&#39;s own evaluation failed"
    ));
}

#[test]
fn outcomes_recorded_reads_a_trajectory_s_task_success() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let out = faultgate(&[
        "check",
        TRAJECTORY,
        "--outcomes",
        "recorded",
        "--json",
        arg(&json),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let verdicts = outcome_verdicts(&read_json(&json));
    assert_eq!(verdicts.len(), 1);
    assert_eq!(
        (verdicts[0].1, verdicts[0].2.as_str()),
        (false, "the trace's own evaluation passed")
    );
}

#[test]
fn outcomes_recorded_on_traces_that_record_none_is_refused() {
    let out = faultgate(&["check", "examples/traces.json", "--outcomes", "recorded"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with(
            "faultgate: --outcomes recorded: no trace of the input records its own outcome ("
        ),
        "{err}"
    );
    assert!(last.ends_with("; give an outcomes file instead"), "{err}");
    // A Langfuse score name no trace has records nothing either.
    let out = faultgate(&[
        "check",
        LANGFUSE_SCORES,
        "--outcomes",
        "recorded",
        "--outcome-score",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
}

#[test]
fn a_file_named_recorded_is_passed_with_a_path() {
    let dir = scratch();
    std::fs::write(dir.path().join("recorded"), r#"{"task-1": false}"#).unwrap();
    let trace = common::file(TAU);
    let out = command(dir.path())
        .args(["check", arg(&trace), "--outcomes", "./recorded", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        summary(&out).contains(", outcome=2 · 2/3 failed their own evaluation · "),
        "{}",
        summary(&out)
    );
    assert!(
        stdout(&out).contains("outcome: 0/2 true (0.00) · 1 scenario(s) without an outcome"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn parquet_holds_each_trace_s_recorded_outcome() {
    let dir = scratch();
    let pq = dir.path().join("pq");
    let out = faultgate(&["check", TAU, "examples/traces.json", "--parquet", arg(&pq)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let file = File::open(pq.join("traces.parquet")).unwrap();
    let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let traces = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap();
    let column = |name: &str| {
        traces
            .column(traces.schema().index_of(name).unwrap())
            .clone()
    };
    let ids = column("trace_id");
    let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
    let outcomes = column("recorded_outcome");
    let outcomes = outcomes.as_any().downcast_ref::<BooleanArray>().unwrap();
    let mut tau: Vec<(&str, Option<bool>)> = (0..traces.num_rows())
        .filter(|&i| ids.value(i).ends_with("@tau_bench_airline"))
        .map(|i| {
            (
                ids.value(i),
                outcomes.is_valid(i).then(|| outcomes.value(i)),
            )
        })
        .collect();
    tau.sort();
    assert_eq!(
        tau,
        [
            ("task-0#0@tau_bench_airline", Some(false)),
            ("task-1#0@tau_bench_airline", Some(false)),
            ("task-1#1@tau_bench_airline", Some(true)),
        ]
    );
    assert_eq!(outcomes.null_count(), traces.num_rows() - 3);
}

#[test]
fn shards_merged_count_the_recorded_outcomes_as_one_run() {
    let dir = scratch();
    let inputs = [TAU, TAU2, SWE_RESOLVED];
    for extra in [&[][..], &["--outcomes", "recorded"][..]] {
        let mut whole: Vec<&str> = vec!["check"];
        whole.extend(inputs);
        whole.extend(extra);
        let one = faultgate(&whole);
        let mut parts = Vec::new();
        for k in 1..=2 {
            let part = dir.path().join(format!("p{k}-{}", extra.len()));
            let shard = format!("{k}/2");
            let mut args = whole.clone();
            args.extend(["--shard", &shard, "--partial", arg(&part)]);
            let out = faultgate(&args);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            parts.push(part);
        }
        let merged = faultgate(&["merge", arg(&parts[0]), arg(&parts[1])]);
        assert_eq!(
            merged.status.code(),
            one.status.code(),
            "{}",
            stderr(&merged)
        );
        assert_eq!(summary(&merged), summary(&one));
        assert!(
            summary(&one).contains(" · 4/6 failed their own evaluation · "),
            "{}",
            summary(&one)
        );
    }
}

#[test]
fn calibrate_labels_recorded_scores_every_check_against_the_recorded_outcomes() {
    let out = faultgate(&["calibrate", TAU, TAU2, "--labels", "recorded"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |check: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{check} ")))
            .unwrap_or_else(|| panic!("no {check} row in {text}"))
            .split_whitespace()
            .take(7)
            .collect::<Vec<_>>()
            .join(" ")
    };
    // n pos TP FP TN FN: five traces recorded an outcome, three failed it; the capped τ² run's tool
    // errors are the only firing.
    assert_eq!(
        row("unrecovered_tool_error"),
        "unrecovered_tool_error 5 3 1 0 2 2"
    );
    assert_eq!(row("policy"), "policy 5 3 0 0 2 3");
    // As a label file of the same labels scores them.
    let dir = scratch();
    let labels = dir.path().join("labels.csv");
    let mut csv = String::from("key,check,label\n");
    for (id, failed) in [
        ("task-0#0@tau_bench_airline", true),
        ("task-1#0@tau_bench_airline", true),
        ("task-1#1@tau_bench_airline", false),
    ] {
        for check in [
            "search_loop",
            "abstention",
            "policy",
            "repeated_call",
            "unrecovered_tool_error",
            "context_overflow",
        ] {
            csv.push_str(&format!("{id},{check},{failed}\n"));
        }
    }
    std::fs::write(&labels, csv).unwrap();
    let recorded = faultgate(&["calibrate", TAU, "--labels", "recorded"]);
    let file = faultgate(&["calibrate", TAU, "--labels", arg(&labels)]);
    assert_eq!(stdout(&recorded), stdout(&file));
}

#[test]
fn calibrate_labels_recorded_merges_as_one_run_and_refuses_traces_without_outcomes() {
    let dir = scratch();
    let one = faultgate(&["calibrate", TAU, TAU2, "--labels", "recorded"]);
    let mut parts = Vec::new();
    for k in 1..=2 {
        let part = dir.path().join(format!("p{k}"));
        let shard = format!("{k}/2");
        let out = faultgate(&[
            "calibrate",
            TAU,
            TAU2,
            "--labels",
            "recorded",
            "--shard",
            &shard,
            "--partial",
            arg(&part),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        parts.push(part);
    }
    let merged = faultgate(&["merge", arg(&parts[0]), arg(&parts[1])]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert_eq!(stdout(&merged), stdout(&one));

    let out = faultgate(&["calibrate", "examples/traces.json", "--labels", "recorded"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).lines().last().unwrap().starts_with(
            "faultgate: --labels recorded: no trace of the input records its own outcome"
        ),
        "{}",
        stderr(&out)
    );
}
