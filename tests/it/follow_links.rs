//! `--follow-links` end to end: a trace and the traces its spans link to (OTLP span links) checked
//! as one unit under the linking trace's id, wherever the linked traces sit.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

/// When the generated traces start, in Unix nanoseconds.
const T0: u64 = 1_758_000_000_000_000_000;

/// The same search with nothing found: twice in the continuation, once before it.
const SEARCH: (&str, &str) = ("search_orders", r#"{"hits": []}"#);

/// A 32-hex-digit trace id made of `c`.
fn id(c: char) -> String {
    std::iter::repeat_n(c, 32).collect()
}

/// One trace as an OTLP/JSON export line: a root (with a scenario when given) starting `at`
/// seconds in, whose span links to the roots of `links`, and a tool span per call.
fn trace(
    trace: &str,
    at: u64,
    calls: &[(&str, &str)],
    links: &[&str],
    scenario: Option<&str>,
) -> String {
    let s = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let t = T0 + at * 1_000_000_000;
    let root_id = format!("{}0000", &trace[..12]);
    let mut attributes = vec![
        s("gen_ai.operation.name", "invoke_agent"),
        s("gen_ai.prompt", "Where is order 7?"),
        s("gen_ai.completion", "Still looking."),
    ];
    if let Some(scenario) = scenario {
        attributes.push(s("faultgate.scenario", scenario));
    }
    let links: Vec<Value> = links
        .iter()
        .map(|to| json!({"traceId": to, "spanId": format!("{}0000", &to[..12])}))
        .collect();
    let mut spans = vec![json!({
        "traceId": trace, "spanId": root_id, "name": "invoke_agent support",
        "startTimeUnixNano": t.to_string(), "endTimeUnixNano": (t + 900_000_000).to_string(),
        "attributes": attributes, "links": links,
    })];
    for (k, (tool, result)) in calls.iter().enumerate() {
        let start = t + (k as u64 + 1) * 100_000_000;
        spans.push(json!({
            "traceId": trace, "spanId": format!("{}{:04}", &trace[..12], k + 1),
            "parentSpanId": root_id, "name": format!("execute_tool {tool}"),
            "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": (start + 50_000_000).to_string(),
            "attributes": [
                s("gen_ai.operation.name", "execute_tool"),
                s("gen_ai.tool.name", tool),
                s("gen_ai.tool.call.arguments", r#"{"q": "order 7"}"#),
                s("gen_ai.tool.call.result", result),
            ],
        }));
    }
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string() + "\n"
}

/// Trace `a` searches once and links to its continuation `b`, which searches twice more: a loop
/// neither trace shows alone.
fn continued(dir: &Path) -> PathBuf {
    let file = dir.join("t.jsonl");
    let text = trace(&id('a'), 0, &[SEARCH], &[&id('b')], Some("order-7"))
        + &trace(&id('b'), 10, &[SEARCH, SEARCH], &[], None);
    std::fs::write(&file, text).unwrap();
    file
}

/// `check` over `files` with `flags`: its JSON report and its output.
fn check(dir: &Path, files: &[&Path], flags: &[&str]) -> (Value, std::process::Output) {
    let report = dir.join("report.json");
    let mut args = vec!["check"];
    args.extend(files.iter().map(|f| arg(f)));
    args.extend(["--json", arg(&report)]);
    args.extend(flags);
    let out = faultgate(&args);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    (read_json(&report), out)
}

/// The failed (unit, check, reason) of a JSON report, in run order.
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

/// The distinct units of a JSON report, in run order, with each one's scenario.
fn units(report: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in report["results"].as_array().unwrap() {
        let unit = r["trace_id"].as_str().unwrap().to_string();
        if !out.iter().any(|(u, _)| *u == unit) {
            out.push((unit, r["scenario"].as_str().unwrap_or_default().into()));
        }
    }
    out
}

fn link_warnings(out: &std::process::Output) -> Vec<String> {
    stdout(out)
        .lines()
        .chain(stderr(out).lines())
        .filter(|l| l.contains(" link to other traces (span links: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_loop_continued_in_a_linked_trace_is_caught_only_when_links_are_followed() {
    let dir = scratch();
    let file = continued(dir.path());
    let (apart, out) = check(dir.path(), &[&file], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(fired(&apart).is_empty(), "{:?}", fired(&apart));
    assert_eq!(units(&apart).len(), 2);
    assert_eq!(link_warnings(&out).len(), 1, "{}", stdout(&out));

    let (joined, out) = check(dir.path(), &[&file], &["--follow-links"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // One unit, under the linking trace's id and scenario key, with both traces' steps.
    assert_eq!(units(&joined), vec![(id('a'), "order-7".to_string())]);
    let fired = fired(&joined);
    assert_eq!(fired.len(), 1, "{fired:?}");
    let (unit, check, reason) = &fired[0];
    assert_eq!(
        (unit.as_str(), check.as_str()),
        (id('a').as_str(), "repeated_call")
    );
    assert!(reason.contains("(steps 1, 2, 3)"), "{reason}");
    // Every link was joined: nothing to warn about.
    assert!(link_warnings(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn linked_traces_join_across_files_transitively_and_unjoined_links_still_warn() {
    let dir = scratch();
    // The continuations come first, in another file; `c` continues `b` and links to a trace no file
    // holds.
    let first = dir.path().join("a.jsonl");
    let second = dir.path().join("b.jsonl");
    std::fs::write(
        &first,
        trace(&id('b'), 10, &[SEARCH], &[&id('c')], None)
            + &trace(&id('c'), 20, &[SEARCH], &[&id('e')], None),
    )
    .unwrap();
    std::fs::write(
        &second,
        trace(&id('a'), 0, &[SEARCH], &[&id('b')], Some("order-7"))
            + &trace(
                &id('d'),
                5,
                &[("lookup", r#"{"status": "shipped"}"#)],
                &[],
                None,
            ),
    )
    .unwrap();
    let (apart, _) = check(dir.path(), &[&first, &second], &[]);
    assert!(fired(&apart).is_empty(), "{:?}", fired(&apart));
    assert_eq!(units(&apart).len(), 4);

    let (joined, out) = check(dir.path(), &[&first, &second], &["--follow-links"]);
    let ids: Vec<String> = units(&joined).into_iter().map(|(u, _)| u).collect();
    assert_eq!(ids, vec![id('d'), id('a')]);
    let fired = fired(&joined);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].0, id('a'));
    assert!(fired[0].2.contains("(steps 1, 2, 3)"), "{}", fired[0].2);
    // `c`'s link to a trace no file holds was not joined: its file is warned about, once.
    let warnings = link_warnings(&out);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("1 trace(s) in ") && warnings[0].contains("a.jsonl link to"),
        "{warnings:?}"
    );
}

#[test]
fn a_followed_links_run_gives_the_same_bytes_at_any_thread_count() {
    let dir = scratch();
    let file = continued(dir.path());
    let other = dir.path().join("b.jsonl");
    std::fs::write(
        &other,
        trace(&id('c'), 30, &[SEARCH], &[&id('a')], None)
            + &trace(&id('d'), 5, &[SEARCH], &[], None),
    )
    .unwrap();
    let outputs: Vec<(String, Vec<u8>)> = ["1", "2", "4"]
        .iter()
        .map(|threads| {
            let report = dir.path().join(format!("r{threads}.json"));
            let out = common::command(dir.path())
                .env("RAYON_NUM_THREADS", threads)
                .args(["check", arg(&file), arg(&other), "--follow-links"])
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
    assert_eq!(outputs[0], outputs[2]);
}

#[test]
fn follow_links_refuses_sessions_shards_and_partials_in_one_line() {
    let dir = scratch();
    let file = continued(dir.path());
    let partial = dir.path().join("p.fgpart");
    for extra in [
        &["--unit", "session"][..],
        &["--shard", "1/2"],
        &["--partial", arg(&partial)],
    ] {
        let mut args = vec!["check", arg(&file), "--follow-links"];
        args.extend(extra);
        let out = faultgate(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--follow-links cannot be combined with"),
            "{err}"
        );
    }
}
