//! `check --unit session` across shards: every shard reads every file and checks the conversations
//! (and merged traces) whose id hashes to it, and `merge` puts the shards' units back in the order of
//! one run, so the merged outputs are the bytes of one `check --unit session` over every file.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{scratch, stderr};
use serde_json::json;

/// When the generated conversations start, in Unix nanoseconds.
const T0: u64 = 1_758_000_000_000_000_000;

/// One turn as an OTLP/JSON export line: a root with prompt and answer, the conversation id and the
/// scenario when given, and one `search` call (the same in every turn: a loop across turns), or one
/// `lookup` call with arguments of its own; `at` seconds in.
fn turn(
    trace: &str,
    conversation: Option<&str>,
    scenario: Option<&str>,
    at: u64,
    loops: bool,
) -> String {
    let s = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let t = T0 + at * 1_000_000_000;
    let mut attributes = vec![
        s("gen_ai.operation.name", "invoke_agent"),
        s("gen_ai.prompt", &format!("turn {trace}")),
        s("gen_ai.completion", "Done."),
    ];
    if let Some(id) = conversation {
        attributes.push(s("gen_ai.conversation.id", id));
    }
    if let Some(scenario) = scenario {
        attributes.push(s("faultgate.scenario", scenario));
    }
    let (tool, arguments) = if loops {
        ("search", r#"{"q": "order 7"}"#.to_string())
    } else {
        ("lookup", format!(r#"{{"id": "{trace}"}}"#))
    };
    let root = format!("{}0000", &trace[..12]);
    let spans = json!([
        {
            "traceId": trace, "spanId": root, "name": "invoke_agent support",
            "startTimeUnixNano": t.to_string(), "endTimeUnixNano": (t + 900_000_000).to_string(),
            "attributes": attributes,
        },
        {
            "traceId": trace, "spanId": format!("{}0001", &trace[..12]), "parentSpanId": root,
            "name": format!("execute_tool {tool}"),
            "startTimeUnixNano": (t + 100_000_000).to_string(),
            "endTimeUnixNano": (t + 150_000_000).to_string(),
            "attributes": [
                s("gen_ai.operation.name", "execute_tool"),
                s("gen_ai.tool.name", tool),
                s("gen_ai.tool.call.arguments", &arguments),
                s("gen_ai.tool.call.result", r#"{"hits": []}"#),
            ],
        },
    ]);
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string() + "\n"
}

/// The same line with its spans split in two exports: the root in the first, the call in the
/// second (the Collector cut the trace across files).
fn split(line: &str) -> (String, String) {
    let mut export: serde_json::Value = serde_json::from_str(line).unwrap();
    let spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .unwrap();
    let call = spans.pop().unwrap();
    let rest = json!({"resourceSpans": [{"scopeSpans": [{"spans": [call]}]}]});
    (export.to_string() + "\n", rest.to_string() + "\n")
}

/// Four files of conversations whose turns are dealt across them out of start order, traces without
/// a conversation in each, a turn and a lone trace each cut across two files, and scenarios several
/// conversations carry (one of them looping); returns their names, relative to `dir`.
fn conversations(dir: &Path) -> Vec<String> {
    let mut files = vec![String::new(); 4];
    for c in 0..24u64 {
        let conversation = format!("conv-{c:02}");
        let scenario = format!("scenario-{}", c % 5);
        // Later turns first, in files chosen by the conversation and the turn; conversations 13
        // apart start at the same second.
        for t in (0..3u64).rev() {
            let trace = format!("{:016x}{:016x}", c + 1, t + 1);
            let first = (t == 0).then_some(scenario.as_str());
            let at = 100 + (c * 5 % 13) * 10 + t * 3;
            let line = turn(&trace, Some(&conversation), first, at, c % 7 == 3);
            let file = ((c + t * 3) % 4) as usize;
            if c == 5 && t == 1 {
                let (root, call) = split(&line);
                files[0] += &root;
                files[3] += &call;
            } else {
                files[file] += &line;
            }
        }
    }
    for l in 0..10u64 {
        let trace = format!("{:016x}{:016x}", 0xabc, l + 1);
        let line = turn(
            &trace,
            None,
            Some(&format!("scenario-{}", l % 3)),
            l,
            l == 4,
        );
        if l == 7 {
            let (root, call) = split(&line);
            files[1] += &root;
            files[2] += &call;
        } else {
            files[(l % 4) as usize] += &line;
        }
    }
    files
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let name = format!("part-{i}.jsonl");
            std::fs::write(dir.join(&name), text).unwrap();
            name
        })
        .collect()
}

/// Runs the binary in `dir` with `threads` threads and the audit's clock pinned.
fn faultgate(dir: &Path, threads: &str, args: &[String]) -> Output {
    common::command(dir)
        .env("RAYON_NUM_THREADS", threads)
        .env("SOURCE_DATE_EPOCH", "1790848800")
        .args(args)
        .output()
        .unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

/// The output flags of a gated run writing into `out`.
fn outputs(out: &str) -> Vec<String> {
    strings(&[
        "--band",
        "band.json",
        "--gate",
        "band",
        "--json",
        &format!("{out}/r.json"),
        "--markdown",
        &format!("{out}/r.md"),
        "--junit",
        &format!("{out}/r.xml"),
        "--parquet",
        &format!("{out}/pq"),
        "--otlp-events",
        &format!("{out}/events.json"),
    ])
}

/// The files under `dir`, by name, with their bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// The `trace_id` and `session_id` columns of a `traces.parquet`.
fn parquet_units(path: &Path) -> Vec<(String, Option<String>)> {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let ids = batch.column_by_name("trace_id").unwrap().as_string::<i32>();
        let sessions = batch
            .column_by_name("session_id")
            .unwrap()
            .as_string::<i32>();
        for i in 0..ids.len() {
            let session = sessions.is_valid(i).then(|| sessions.value(i).to_string());
            rows.push((ids.value(i).to_string(), session));
        }
    }
    rows
}

/// What a run printed, but the elapsed time that ends its summary line.
fn table(out: &Output) -> String {
    common::stdout(out)
        .lines()
        .map(|line| match line.rsplit_once(" · ") {
            Some((before, _)) if line.contains(" units (") => before,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One gated run and the merge of three shards' partials, at `threads` threads: the same exit code
/// and the same bytes in every output.
fn shards_merge_to_one_run(threads: &str) {
    let dir = scratch();
    let inputs = conversations(dir.path());
    let session = strings(&["--unit", "session", "-q"]);
    // The band: two runs of the first half of the conversations' files.
    let mut baseline = strings(&["baseline", &inputs[0], &inputs[1]]);
    baseline.extend(session.clone());
    baseline.extend(strings(&["--out", "band.json"]));
    let out = faultgate(dir.path(), threads, &baseline);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let mut single = strings(&["check"]);
    single.extend(inputs.clone());
    single.extend(session.clone());
    single.extend(outputs("single"));
    std::fs::create_dir_all(dir.path().join("single")).unwrap();
    let one = faultgate(dir.path(), threads, &single);
    assert!(matches!(one.status.code(), Some(0 | 1)), "{}", stderr(&one));

    let mut merge = strings(&["merge"]);
    for k in 1..=3 {
        let mut shard = strings(&["check"]);
        shard.extend(inputs.clone());
        shard.extend(session.clone());
        let part = format!("p{k}");
        shard.extend(strings(&["--shard", &format!("{k}/3"), "--partial", &part]));
        let out = faultgate(dir.path(), threads, &shard);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        merge.push(part);
    }
    // The shards in another order than their numbers: the order is the units', not the partials'.
    merge.swap(1, 3);
    merge.extend(outputs("merged"));
    std::fs::create_dir_all(dir.path().join("merged")).unwrap();
    let merged = faultgate(dir.path(), threads, &merge);
    assert_eq!(
        merged.status.code(),
        one.status.code(),
        "{}",
        stderr(&merged)
    );
    assert_eq!(table(&merged).replace("merged/", "single/"), table(&one));

    let (a, b) = (
        files_under(&dir.path().join("single")),
        files_under(&dir.path().join("merged")),
    );
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{} differs", path.display());
    }
    // What was compared is a session run's: 24 conversations and 10 traces without one, the
    // conversations named as such, and a gate that found the looping scenario.
    let rows = parquet_units(&dir.path().join("merged/pq/traces.parquet"));
    assert_eq!(rows.len(), 34);
    let sessions: Vec<&str> = rows.iter().filter_map(|(_, s)| s.as_deref()).collect();
    assert_eq!(sessions.len(), 24);
    assert!(
        rows.iter()
            .all(|(id, s)| s.as_ref().is_none_or(|s| s == id))
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("merged/r.json")).unwrap()).unwrap();
    assert!(report["gate"].is_object(), "the band gated the merged run");
    let failed = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["detected"] == true && r["trace_id"].as_str().unwrap().starts_with("conv-"))
        .count();
    assert!(failed > 0, "a loop across turns was caught");

    // Merged in levels, the same bytes.
    let level = strings(&["merge", "p3", "p1", "--partial", "p31"]);
    assert_eq!(
        faultgate(dir.path(), threads, &level).status.code(),
        Some(0)
    );
    let mut two = strings(&["merge", "p2", "p31"]);
    two.extend(outputs("levels"));
    std::fs::create_dir_all(dir.path().join("levels")).unwrap();
    let out = faultgate(dir.path(), threads, &two);
    assert_eq!(out.status.code(), one.status.code(), "{}", stderr(&out));
    assert_eq!(files_under(&dir.path().join("levels")), a);
}

#[test]
fn session_shards_merged_write_the_bytes_of_one_run_at_one_thread() {
    shards_merge_to_one_run("1");
}

#[test]
fn session_shards_merged_write_the_bytes_of_one_run_at_two_threads() {
    shards_merge_to_one_run("2");
}

#[test]
fn a_session_partial_and_a_trace_partial_are_not_merged() {
    let dir = scratch();
    let inputs = conversations(dir.path());
    let mut sessions = strings(&["check"]);
    sessions.extend(inputs.clone());
    sessions.extend(strings(&["--unit", "session", "--partial", "s", "-q"]));
    assert_eq!(faultgate(dir.path(), "2", &sessions).status.code(), Some(0));
    let mut traces = strings(&["check"]);
    traces.extend(inputs);
    traces.extend(strings(&["--partial", "t", "-q"]));
    assert_eq!(faultgate(dir.path(), "2", &traces).status.code(), Some(0));
    let out = faultgate(
        dir.path(),
        "2",
        &strings(&["merge", "s", "t", "--json", "r.json"]),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("partials differ in unit"), "{err}");
    assert!(err.contains("s has session, t has trace"), "{err}");
}

#[test]
fn a_session_shard_needs_a_partial_and_a_check() {
    let dir = scratch();
    let inputs = conversations(dir.path());
    let run = |command: &str, flags: &[&str]| {
        let mut args = strings(&[command]);
        args.extend(inputs.clone());
        args.extend(strings(&["--unit", "session"]));
        args.extend(strings(flags));
        faultgate(dir.path(), "2", &args)
    };
    let out = run("check", &["--shard", "1/2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--shard K/N needs --partial DIR"),
        "{}",
        stderr(&out)
    );
    let out = run("baseline", &["--partial", "b"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--unit session: baseline"),
        "{}",
        stderr(&out)
    );
}
