//! The terminal table and the Markdown summary on formats whose trace ids are names: ids as wide as
//! tells the traces apart, the failing rows' reasons, and Markdown that renders alike everywhere.

use crate::common;

use common::{arg, faultgate, faultgate_in, scratch, stderr, stdout};
use serde_json::{Value, json};

const TAU2: &str = "tests/fixtures/formats/tau";

/// The table's lines of a run: stdout up to the blank line before the summary.
fn table_lines(out: &str) -> Vec<String> {
    out.lines()
        .take_while(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn swe_agent_ids_are_shown_whole_where_0_4_1_cut_them_alike() {
    let o = faultgate(&["check", "-q", "tests/fixtures/terminal/swe_agent"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = table_lines(&stdout(&o));
    let ids: Vec<&str> = lines[2..]
        .iter()
        .map(|l| l.split("  ").next().unwrap())
        .collect();
    assert_eq!(ids, ["astropy__astropy-12907", "astropy__astropy-14182"]);
    assert!(
        lines[0].starts_with("trace                   search_loop"),
        "{}",
        lines[0]
    );
}

#[test]
fn tau2_rows_are_told_apart_and_the_failing_ones_say_why() {
    let o = faultgate(&[
        "check",
        "-q",
        &format!("{TAU2}/tau2_airline.json"),
        &format!("{TAU2}/tau2_telecom_agent_repeats.json"),
        "--table",
        "failing",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        table_lines(&stdout(&o)),
        [
            "trace                                             search_loop       abstention        policy            repeated_call     unrecovered_tool_error  context_overflow  reason",
            "--------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
            // A 48-character id is shown whole; a longer one keeps its head and its end.
            "task-7#1@tau2_airline                             ok   1.00         ok   1.00         ok   1.00         ok   1.00         FAIL 1.00         ok   1.00               unrecovered_tool_error: Tool 'cancel_reservation' failed at step 1 (Response…",
            "task-[mms_issue]bad_net…u2_telecom_agent_repeats  ok   1.00         ok   1.00         ok   1.00         FAIL 1.00         ok   1.00         ok   1.00               repeated_call: Tool 'get_details_by_id' with arguments {\"id\":\"L1002\"} issued >=…",
        ]
    );
    // Every row of the whole table, ids as wide.
    let all = faultgate(&[
        "check",
        "-q",
        &format!("{TAU2}/tau2_airline.json"),
        &format!("{TAU2}/tau2_telecom_agent_repeats.json"),
    ]);
    let ids: Vec<String> = table_lines(&stdout(&all))[2..]
        .iter()
        .map(|l| l.split("  ").next().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        [
            "task-7#0@tau2_airline",
            "task-7#1@tau2_airline",
            "task-[mms_issue]bad_net…u2_telecom_agent_repeats",
        ]
    );
}

#[test]
fn the_markdown_of_a_tau2_run_keeps_pipes_out_of_code_spans() {
    // A task id with a pipe, as τ²'s telecom tasks have: the id's cell is plain text with the pipe as
    // an entity, which every renderer shows as `|` and no table reads as a cell's end.
    let dir = scratch();
    let mut doc: Value = common::read_json(&common::file(&format!("{TAU2}/tau2_airline.json")));
    for sim in doc["simulations"].as_array_mut().unwrap() {
        sim["task_id"] = json!("a|b");
    }
    if let Some(tasks) = doc["tasks"].as_array_mut() {
        for task in tasks {
            task["id"] = json!("a|b");
        }
    }
    let path = dir.path().join("run.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let o = faultgate_in(
        dir.path(),
        &["check", "-q", arg(&path), "--markdown", "summary.md"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.contains("| unrecovered_tool_error | Tool"))
        .unwrap_or_else(|| panic!("{md}"));
    assert_eq!(
        row,
        "| task-a\\|b | task-a&#124;b#1@run | unrecovered_tool_error | Tool 'cancel_reservation' failed at step 1 (Response starts with 'Error:') and no subsequent call to 'cancel_reservation' succeeded. |"
    );
    assert!(!md.contains("`task-a"), "{md}");
}

#[test]
fn merged_shards_show_ids_as_the_run_does() {
    // OTLP and SWE-agent files in two shards: the merged run read ids that are names.
    let dir = scratch();
    let inputs = ["examples/traces.json", "tests/fixtures/terminal/swe_agent"];
    let parts: Vec<String> = (1..=2)
        .map(|k| {
            let part = dir.path().join(format!("p{k}"));
            let mut a = vec!["check", "-q"];
            a.extend(inputs);
            let shard = format!("{k}/2");
            a.extend(["--shard", &shard, "--partial", arg(&part)]);
            let o = faultgate(&a);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            arg(&part).to_string()
        })
        .collect();
    let mut whole = vec!["check", "-q"];
    whole.extend(inputs);
    let whole = table_lines(&stdout(&faultgate(&whole)));
    let merged = faultgate(&["merge", &parts[0], &parts[1]]);
    assert_eq!(table_lines(&stdout(&merged)), whole);
    assert!(
        whole
            .iter()
            .any(|l| l.starts_with("astropy__astropy-14182  ")),
        "{whole:?}"
    );
}
