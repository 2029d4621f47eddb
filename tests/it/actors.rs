//! Who made each tool step: a simulated user's own tool calls are read as the user's, are not judged
//! by the rule checks, and are counted in the summary, the Parquet tables and the HTML report. The
//! τ²-bench fixtures are cut from the telecom results in `calibration/tau2-bench` (see their SOURCE.md).

use crate::common;

use std::fs::File;
use std::path::Path;

use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// The simulated user runs `run_speed_test` three times with the same result; the agent repeats nothing.
const USER_REPEATS: &str = "tests/fixtures/formats/tau/tau2_telecom_user_speed_tests.json";
/// The agent calls `get_details_by_id {"id": "L1002"}` three times with the same answer, among the
/// user's own tool calls.
const AGENT_REPEATS: &str = "tests/fixtures/formats/tau/tau2_telecom_agent_repeats.json";
/// OTLP: one trace whose three identical `search` calls carry `faultgate.actor: user`, one whose
/// identical `lookup` calls are the agent's.
const OTLP_ACTORS: &str = "tests/fixtures/compat/known_user_actor.json";

/// `repeated_call`'s verdict per trace id, from a report.json.
fn repeated_call(report: &serde_json::Value) -> Vec<(String, bool, String)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["check"] == "repeated_call")
        .map(|r| {
            (
                r["trace_id"].as_str().unwrap().to_string(),
                r["detected"].as_bool().unwrap(),
                r["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The last line of stdout that holds the summary.
fn summary(out: &std::process::Output) -> String {
    stdout(out)
        .lines()
        .find(|l| l.contains(" traces failed · "))
        .unwrap_or_else(|| panic!("no summary in {}", stdout(out)))
        .to_string()
}

fn read_parquet(path: &Path) -> RecordBatch {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

#[test]
fn a_simulated_user_repeating_a_speed_test_is_not_a_repeated_call() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let out = faultgate(&["check", USER_REPEATS, "--json", arg(&json)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let verdicts = repeated_call(&read_json(&json));
    assert_eq!(verdicts.len(), 1);
    assert!(!verdicts[0].1, "repeated_call fired: {}", verdicts[0].2);
    assert!(
        summary(&out).contains("repeated_call=0, unrecovered_tool_error=0, context_overflow=0 · 12 user step(s) not judged · 1/1 failed their own evaluation · judge none"),
        "{}",
        summary(&out)
    );
}

#[test]
fn an_agent_repeat_still_fires_among_the_user_s_steps() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let out = faultgate(&["check", AGENT_REPEATS, "--json", arg(&json)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let verdicts = repeated_call(&read_json(&json));
    assert!(verdicts[0].1);
    // Step numbers count every step of the trace, the user's too, as the HTML lists them.
    assert!(
        verdicts[0].2.starts_with(
            r#"Tool 'get_details_by_id' with arguments {"id":"L1002"} issued >= 3 times (steps 3, 4, 10)"#
        ),
        "{}",
        verdicts[0].2
    );
    assert!(
        summary(&out).contains("· 10 user step(s) not judged ·"),
        "{}",
        summary(&out)
    );
}

#[test]
fn the_otlp_actor_attribute_marks_the_user_s_steps() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let out = faultgate(&["check", OTLP_ACTORS, "--json", arg(&json)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let verdicts = repeated_call(&read_json(&json));
    let fired: Vec<(&str, bool)> = verdicts
        .iter()
        .map(|(id, fired, _)| (&id[..12], *fired))
        .collect();
    assert_eq!(fired, [("dc4bfa4a2705", false), ("0467096af7ac", true)]);
    assert!(
        summary(&out).contains("· 3 user step(s) not judged ·"),
        "{}",
        summary(&out)
    );
}

#[test]
fn parquet_counts_the_user_steps_of_each_trace() {
    let dir = scratch();
    let pq = dir.path().join("pq");
    let out = faultgate(&[
        "check",
        USER_REPEATS,
        AGENT_REPEATS,
        OTLP_ACTORS,
        "--parquet",
        arg(&pq),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let traces = read_parquet(&pq.join("traces.parquet"));
    let column = |name: &str| {
        traces
            .column(traces.schema().index_of(name).unwrap())
            .clone()
    };
    let ids = column("trace_id");
    let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
    let steps = column("steps");
    let steps = steps.as_any().downcast_ref::<Int64Array>().unwrap();
    let users = column("user_steps");
    let users = users.as_any().downcast_ref::<Int64Array>().unwrap();
    let mut rows: Vec<(String, i64, i64)> = (0..traces.num_rows())
        .map(|i| {
            let id: String = ids.value(i).chars().take(12).collect();
            (id, steps.value(i), users.value(i))
        })
        .collect();
    rows.sort();
    let user_rows: Vec<i64> = rows.iter().map(|r| r.2).collect();
    assert_eq!(user_rows.iter().sum::<i64>(), 12 + 10 + 3, "{rows:?}");
    assert!(
        rows.iter().all(|(_, steps, users)| users <= steps),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|(id, _, users)| id == "0467096af7ac" && *users == 0),
        "{rows:?}"
    );
    assert!(users.null_count() == 0);
}

#[test]
fn the_html_report_labels_the_user_s_steps() {
    let dir = scratch();
    let html = dir.path().join("r.html");
    let out = faultgate(&["check", AGENT_REPEATS, "--html", arg(&html)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    let labelled = page.matches("<span class=\"actor\"").count();
    assert_eq!(labelled, 10, "one label per user step");
    assert!(page.contains("<tr class=\"others\">"));
    assert!(page.contains(">user</span>"));
    assert!(page.contains("1/1 traces failed \u{b7} 10 user step(s) not judged \u{b7} 0/1 failed their own evaluation \u{b7} judge none"));
}

#[test]
fn shards_merged_count_the_user_steps_as_one_run() {
    let dir = scratch();
    let inputs = [USER_REPEATS, AGENT_REPEATS, OTLP_ACTORS];
    let one = faultgate(&["check"].iter().copied().chain(inputs).collect::<Vec<_>>());
    let mut parts = Vec::new();
    for k in 1..=2 {
        let part = dir.path().join(format!("p{k}"));
        let shard = format!("{k}/2");
        let mut args: Vec<&str> = vec!["check"];
        args.extend(inputs);
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
    let without_time = |line: String| line.rsplit_once(" · ").unwrap().0.to_string();
    assert_eq!(without_time(summary(&merged)), without_time(summary(&one)));
    assert!(summary(&one).contains("· 25 user step(s) not judged ·"));
}
