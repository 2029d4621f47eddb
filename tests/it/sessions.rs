//! `--unit session` end to end: the traces of one conversation (by `gen_ai.conversation.id`, Langfuse
//! `sessionId`, LangSmith thread metadata or OpenInference `session.id`) checked as one unit, wherever
//! its turns sit, with traces that name no conversation left as units of their own.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

/// When the generated conversations start, in Unix nanoseconds.
const T0: u64 = 1_758_000_000_000_000_000;

/// One tool call: tool, arguments, result.
type Call<'a> = (&'a str, &'a str, &'a str);

/// One turn as an OTLP/JSON export line: a root with prompt, answer, the conversation id when given
/// (under `key`) and the scenario when given, and a tool span per call, starting `at` seconds in.
fn turn(
    trace: &str,
    conversation: Option<(&str, &str)>,
    at: u64,
    calls: &[Call<'_>],
    prompt: &str,
    answer: &str,
    scenario: Option<&str>,
) -> String {
    let s = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let t = T0 + at * 1_000_000_000;
    let mut attributes = vec![
        s("gen_ai.operation.name", "invoke_agent"),
        s("gen_ai.prompt", prompt),
        s("gen_ai.completion", answer),
    ];
    if let Some((key, id)) = conversation {
        attributes.push(s(key, id));
    }
    if let Some(scenario) = scenario {
        attributes.push(s("faultgate.scenario", scenario));
    }
    let root_id = format!("{}0000", &trace[..12]);
    let mut spans = vec![json!({
        "traceId": trace, "spanId": root_id, "name": "invoke_agent support",
        "startTimeUnixNano": t.to_string(), "endTimeUnixNano": (t + 900_000_000).to_string(),
        "attributes": attributes,
    })];
    for (k, (tool, arguments, result)) in calls.iter().enumerate() {
        let start = t + (k as u64 + 1) * 100_000_000;
        spans.push(json!({
            "traceId": trace, "spanId": format!("{}{k:04}", &trace[..12]), "parentSpanId": root_id,
            "name": format!("execute_tool {tool}"),
            "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 50_000_000).to_string(),
            "attributes": [
                s("gen_ai.operation.name", "execute_tool"),
                s("gen_ai.tool.name", tool),
                s("gen_ai.tool.call.arguments", arguments),
                s("gen_ai.tool.call.result", result),
            ],
        }));
    }
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string() + "\n"
}

/// A 32-hex-digit trace id made of `c`.
fn id(c: char) -> String {
    std::iter::repeat_n(c, 32).collect()
}

const CONVERSATION: &str = "gen_ai.conversation.id";
/// The same search, with nothing found, once per turn: a loop no single turn shows.
const SEARCH: Call<'static> = ("search_orders", r#"{"q": "order 7"}"#, r#"{"hits": []}"#);

/// A conversation of three turns, each searching once for the same thing, with its middle turn in a
/// second file, and a trace without a conversation id in the first.
fn looping_conversation(dir: &Path) -> (PathBuf, PathBuf) {
    let conv = Some((CONVERSATION, "conv-1"));
    let first = dir.join("a.jsonl");
    let second = dir.join("b.jsonl");
    let lookup = ("lookup", "{}", r#"{"status": "shipped"}"#);
    std::fs::write(
        &first,
        turn(
            &id('c'),
            conv,
            20,
            &[SEARCH],
            "And now?",
            "Still looking.",
            None,
        ) + &turn(
            &id('a'),
            conv,
            0,
            &[SEARCH],
            "Where is order 7?",
            "Looking.",
            Some("order-7"),
        ) + &turn(
            &id('d'),
            None,
            5,
            &[lookup],
            "Hi",
            "Your order shipped.",
            None,
        ),
    )
    .unwrap();
    std::fs::write(
        &second,
        turn(
            &id('b'),
            conv,
            10,
            &[SEARCH],
            "Any news?",
            "Still looking.",
            None,
        ),
    )
    .unwrap();
    (first, second)
}

/// `check` over `files` with `flags`, its JSON report and its output.
fn check(dir: &Path, files: &[&Path], flags: &[&str]) -> (Value, std::process::Output) {
    let report = dir.join("report.json");
    let mut args = vec!["check"];
    args.extend(files.iter().map(|f| arg(f)));
    args.extend(["--json", arg(&report)]);
    args.extend(flags);
    let out = faultgate(&args);
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", stderr(&out));
    (read_json(&report), out)
}

/// The failed (trace id, check, reason) of a JSON report, in run order.
fn fired(report: &Value) -> Vec<(String, String, String)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["detected"] == true)
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("trace_id"), s("check"), s("reason"))
        })
        .collect()
}

/// The distinct trace ids of a JSON report, in run order.
fn units(report: &Value) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for r in report["results"].as_array().unwrap() {
        let id = r["trace_id"].as_str().unwrap().to_string();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

#[test]
fn a_loop_spanning_turns_in_several_files_is_caught_only_as_a_session() {
    let dir = scratch();
    let (first, second) = looping_conversation(dir.path());
    let (traces, out) = check(dir.path(), &[&first, &second], &["-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(fired(&traces).is_empty(), "{:?}", fired(&traces));
    assert_eq!(units(&traces).len(), 4);
    assert!(traces.get("units").is_none());

    let (sessions, out) = check(dir.path(), &[&first, &second], &["--unit", "session", "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(units(&sessions), vec![id('d'), "conv-1".to_string()]);
    assert_eq!(
        sessions["units"],
        json!({"sessions": 1, "traces_without_conversation": 1})
    );
    let fired = fired(&sessions);
    assert_eq!(fired.len(), 1, "{fired:?}");
    let (unit, check, reason) = &fired[0];
    assert_eq!((unit.as_str(), check.as_str()), ("conv-1", "repeated_call"));
    // Steps count over the conversation, in turn order whatever the files' order; each names its turn.
    assert!(
        reason.contains("(steps 1, 2, 3 (turns 1, 2, 3))"),
        "{reason}"
    );
    // The scenario key is the first turn's.
    let scenario = sessions["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["trace_id"] == "conv-1")
        .map(|r| r["scenario"].clone());
    assert_eq!(scenario, Some(json!("order-7")));
    // The summary says how many units are conversations and how many traces named none.
    let summary = stdout(&out);
    assert!(
        summary.contains("1/2 units (1 session(s), 1 trace(s) without a conversation id) failed"),
        "{summary}"
    );
}

#[test]
fn a_conversation_ending_in_an_abstention_after_good_turns_is_one_failing_unit() {
    let dir = scratch();
    let conv = Some((CONVERSATION, "conv-2"));
    let path = dir.path().join("conversation.jsonl");
    let mut text = String::new();
    for (i, (c, answer)) in [
        ('1', "Order 7 is packed."),
        ('2', "It ships tomorrow."),
        ('3', "The courier is DHL."),
        ('4', "I could not find the tracking number."),
    ]
    .into_iter()
    .enumerate()
    {
        let prompt = format!("Question {i} about order 7");
        let arguments = format!(r#"{{"id": 7, "field": {i}}}"#);
        let lookup = (
            "lookup_order",
            arguments.as_str(),
            r#"{"status": "packed"}"#,
        );
        text += &turn(
            &id(c),
            conv,
            i as u64 * 10,
            &[lookup],
            &prompt,
            answer,
            None,
        );
    }
    std::fs::write(&path, text).unwrap();

    let (traces, _) = check(dir.path(), &[&path], &["-q"]);
    assert_eq!(units(&traces).len(), 4);
    let (session, out) = check(dir.path(), &[&path], &["--unit", "session", "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(units(&session), vec!["conv-2".to_string()]);
    assert_eq!(session["failed_traces"], json!(["conv-2"]));
    let checks: Vec<String> = fired(&session).into_iter().map(|f| f.1).collect();
    assert_eq!(checks, vec!["abstention".to_string()]);
}

#[test]
fn langfuse_langsmith_and_openinference_sessions_are_conversations() {
    let dir = scratch();
    let langfuse = dir.path().join("langfuse.json");
    let trace = |id: &str, at: &str, output: &str| {
        json!({
            "id": id, "name": "support", "timestamp": at, "sessionId": "lf-session",
            "input": {"messages": [{"role": "user", "content": "Where is order 7?"}]},
            "output": output,
            "observations": [{
                "id": format!("{id}-t"), "traceId": id, "type": "TOOL", "name": "search_orders",
                "input": {"q": "order 7"}, "output": {"hits": []},
                "startTime": at, "endTime": at, "level": "DEFAULT"
            }]
        })
    };
    let data = json!({"data": [
        trace("lf-2", "2026-10-01T10:01:00.000Z", "Still looking."),
        trace("lf-1", "2026-10-01T10:00:00.000Z", "Looking."),
        trace("lf-3", "2026-10-01T10:02:00.000Z", "Still looking."),
    ]});
    std::fs::write(&langfuse, data.to_string()).unwrap();

    let langsmith = dir.path().join("langsmith.json");
    let runs: Vec<Value> = (1..=3)
        .flat_map(|i| {
            let at = format!("2026-10-01T10:0{i}:00.000000");
            [
                json!({"id": format!("root-{i}"), "trace_id": format!("ls-{i}"), "parent_run_id": null,
                    "run_type": "chain", "name": "support", "inputs": {"input": "Where is order 7?"},
                    "outputs": {"output": "Still looking."}, "start_time": at, "end_time": at,
                    "extra": {"metadata": {"thread_id": "ls-thread"}}}),
                json!({"id": format!("tool-{i}"), "trace_id": format!("ls-{i}"),
                    "parent_run_id": format!("root-{i}"), "run_type": "tool", "name": "search_orders",
                    "inputs": {"input": {"q": "order 7"}}, "outputs": {"output": {"hits": []}},
                    "start_time": at, "end_time": at}),
            ]
        })
        .collect();
    std::fs::write(&langsmith, Value::Array(runs).to_string()).unwrap();

    let openinference = dir.path().join("openinference.jsonl");
    let text: String = ['e', 'f', 'g']
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let session = Some(("session.id", "oi-session"));
            turn(
                &id(c),
                session,
                i as u64,
                &[SEARCH],
                "Where?",
                "Looking.",
                None,
            )
        })
        .collect();
    std::fs::write(&openinference, text).unwrap();

    for (path, session) in [
        (&langfuse, "lf-session"),
        (&langsmith, "ls-thread"),
        (&openinference, "oi-session"),
    ] {
        let (traces, _) = check(dir.path(), &[path], &["-q"]);
        assert_eq!(units(&traces).len(), 3, "{}", path.display());
        let (sessions, out) = check(dir.path(), &[path], &["--unit", "session", "-q"]);
        assert_eq!(
            units(&sessions),
            vec![session.to_string()],
            "{}",
            stderr(&out)
        );
        let checks: Vec<String> = fired(&sessions).into_iter().map(|f| f.1).collect();
        assert!(checks.contains(&"repeated_call".to_string()), "{checks:?}");
    }
}

#[test]
fn a_scenario_carried_by_several_sessions_is_clean_only_if_all_are() {
    let dir = scratch();
    let run = dir.path().join("run.jsonl");
    let mut text = String::new();
    // Two conversations of scenario `refund` (their first turns'), one of them looping; one clean
    // conversation of scenario `other`, whose turns each look up another order.
    for (conversation, c, looping, scenario) in [
        ("s1", ['1', '2', '3'], true, "refund"),
        ("s2", ['4', '5', '6'], false, "refund"),
        ("s3", ['7', '8', '9'], false, "other"),
    ] {
        for (i, c) in c.into_iter().enumerate() {
            let first = (i == 0).then_some(scenario);
            let conv = Some((CONVERSATION, conversation));
            let prompt = format!("{conversation} turn {i}");
            let arguments = format!(r#"{{"id": {i}}}"#);
            let call = if looping {
                SEARCH
            } else {
                ("lookup", arguments.as_str(), r#"{"status": "packed"}"#)
            };
            text += &turn(&id(c), conv, i as u64, &[call], &prompt, "Done.", first);
        }
    }
    std::fs::write(&run, text).unwrap();
    let band = dir.path().join("band.json");
    let out = faultgate(&[
        "baseline",
        arg(&run),
        arg(&run),
        "--unit",
        "session",
        "--out",
        arg(&band),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let band = read_json(&band);
    assert_eq!(band["scenarios"], json!(["other", "refund"]));
    assert_eq!(band["clean_in_all_runs"], json!(["other"]));
}

#[test]
fn a_session_run_gives_the_same_bytes_at_any_thread_count() {
    let dir = scratch();
    let (first, second) = looping_conversation(dir.path());
    let outputs: Vec<(String, Vec<u8>)> = ["1", "2"]
        .iter()
        .map(|threads| {
            let report = dir.path().join(format!("r{threads}.json"));
            let out = common::command(dir.path())
                .env("RAYON_NUM_THREADS", threads)
                .args(["check", arg(&first), arg(&second), "--unit", "session"])
                .args(["--json", arg(&report), "-q"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let table = stdout(&out);
            // The elapsed time ends the summary line.
            let table = table
                .rsplit_once(" · ")
                .map_or(table.clone(), |(t, _)| t.into());
            (table, std::fs::read(&report).unwrap())
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
}

#[test]
fn a_session_run_refuses_shards_in_one_line() {
    let dir = scratch();
    let (first, _) = looping_conversation(dir.path());
    let out = faultgate(&["check", arg(&first), "--unit", "session", "--shard", "1/2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--unit session"), "{err}");
}

/// The `session_id` column of a `traces.parquet`, when it has one, and its row ids.
fn parquet_sessions(path: &Path) -> (Vec<String>, Option<Vec<Option<String>>>) {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut ids = Vec::new();
    let mut sessions: Option<Vec<Option<String>>> = None;
    for batch in reader {
        let batch = batch.unwrap();
        let trace_ids = batch.column_by_name("trace_id").unwrap().as_string::<i32>();
        ids.extend(trace_ids.iter().map(|v| v.unwrap().to_string()));
        if let Some(column) = batch.column_by_name("session_id") {
            let column = column.as_string::<i32>();
            let values =
                (0..column.len()).map(|i| column.is_valid(i).then(|| column.value(i).into()));
            sessions.get_or_insert_with(Vec::new).extend(values);
        }
    }
    (ids, sessions)
}

#[test]
fn parquet_names_each_rows_session_only_under_unit_session_spilled_or_not() {
    let dir = scratch();
    let (first, second) = looping_conversation(dir.path());
    let write = |name: &str, spill: &str, unit: &str| {
        let out_dir = dir.path().join(name);
        let out = common::command(dir.path())
            .env("FAULTGATE_SPILL", spill)
            .args(["check", arg(&first), arg(&second), "--unit", unit])
            .args(["--parquet", arg(&out_dir), "-q"])
            .output()
            .unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        out_dir.join("traces.parquet")
    };
    let (ids, sessions) = parquet_sessions(&write("traces", "off", "trace"));
    assert_eq!(ids.len(), 4);
    assert_eq!(sessions, None);
    let whole = write("whole", "off", "session");
    let (ids, sessions) = parquet_sessions(&whole);
    assert_eq!(ids, vec![id('d'), "conv-1".to_string()]);
    assert_eq!(sessions, Some(vec![None, Some("conv-1".to_string())]));
    let spilled = write("spilled", "on", "session");
    assert_eq!(
        std::fs::read(whole).unwrap(),
        std::fs::read(spilled).unwrap()
    );
}

#[test]
fn a_turn_split_across_files_joins_its_conversation_once() {
    let dir = scratch();
    let conv = Some((CONVERSATION, "conv-3"));
    let first = dir.path().join("a.jsonl");
    let second = dir.path().join("b.jsonl");
    // Turn one's root and first call in one file; its second call, under the same trace id, in the
    // other, with turn two.
    let whole = turn(
        &id('a'),
        conv,
        0,
        &[SEARCH, SEARCH],
        "Where is order 7?",
        "Looking.",
        None,
    );
    let mut export: Value = serde_json::from_str(&whole).unwrap();
    let spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .unwrap();
    let moved = spans.pop().unwrap();
    let rest = json!({"resourceSpans": [{"scopeSpans": [{"spans": [moved]}]}]});
    std::fs::write(&first, export.to_string() + "\n").unwrap();
    let second_turn = turn(
        &id('b'),
        conv,
        10,
        &[SEARCH],
        "Any news?",
        "Still looking.",
        None,
    );
    std::fs::write(&second, rest.to_string() + "\n" + &second_turn).unwrap();

    let out_dir = dir.path().join("pq");
    let (report, out) = check(
        dir.path(),
        &[&first, &second],
        &["--unit", "session", "--parquet", arg(&out_dir), "-q"],
    );
    assert_eq!(
        units(&report),
        vec!["conv-3".to_string()],
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("(1 session(s), 0 trace(s) without a conversation id)"));
    // Three calls, each once: the turn's parts are merged, and its first read is not counted again.
    let file = std::fs::File::open(out_dir.join("traces.parquet")).unwrap();
    let mut reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batch = reader.next().unwrap().unwrap();
    let steps = batch.column_by_name("steps").unwrap();
    let steps = arrow_array::cast::AsArray::as_primitive::<arrow_array::types::Int64Type>(steps);
    assert_eq!(steps.values().to_vec(), vec![3]);
}

/// With `--spill-dir`, the turns wait there as the verdicts do, not in the system's temporary
/// directory (here one that does not exist).
#[test]
fn a_session_runs_turns_spill_where_spill_dir_says() {
    let dir = scratch();
    let (first, second) = looping_conversation(dir.path());
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let report = dir.path().join("report.json");
    let out = common::command(dir.path())
        .env("TMPDIR", dir.path().join("no-such-dir"))
        .args([
            "check",
            arg(&first),
            arg(&second),
            "--unit",
            "session",
            "--spill-dir",
            arg(&spill),
            "--json",
            arg(&report),
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        units(&read_json(&report)),
        vec![id('d'), "conv-1".to_string()]
    );
}
