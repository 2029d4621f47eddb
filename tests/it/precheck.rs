//! `faultgate precheck` end to end on small crafted OTLP/JSON files: the error rows exit 2, the warning
//! rows exit 0, a bad `--policy` exits 2 naming the key, and the output layout is 0.4.1's.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const TRACE: &str = "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb";

/// A fresh directory for one test.
fn dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("precheck-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test dir");
    dir
}

/// An OTLP attribute list from a JSON object of strings.
fn attributes(attrs: Value) -> Value {
    let Value::Object(attrs) = attrs else {
        return Value::Array(Vec::new());
    };
    let list: Vec<Value> = attrs
        .into_iter()
        .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
        .collect();
    Value::Array(list)
}

/// One OTLP span; `start`/`end` are seconds after a fixed epoch, `None` leaves the time out.
fn span(
    id: &str,
    parent: Option<&str>,
    name: &str,
    start: Option<u64>,
    end: Option<u64>,
    attrs: Value,
) -> Value {
    let ns = |s: u64| (1_790_000_000_000_000_000u64 + s * 1_000_000_000).to_string();
    let mut span =
        json!({"traceId": TRACE, "spanId": id, "name": name, "attributes": attributes(attrs)});
    if let Some(p) = parent {
        span["parentSpanId"] = json!(p);
    }
    if let Some(s) = start {
        span["startTimeUnixNano"] = json!(ns(s));
    }
    if let Some(e) = end {
        span["endTimeUnixNano"] = json!(ns(e));
    }
    span
}

fn root() -> Value {
    span(
        "r1",
        None,
        "invoke_agent",
        Some(1),
        Some(20),
        json!({
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": r#"[{"role": "user", "parts": [{"type": "text", "content": "Where is order 7?"}]}]"#,
            "gen_ai.output.messages": r#"[{"role": "assistant", "parts": [{"type": "text", "content": "It shipped."}]}]"#,
        }),
    )
}

fn tool(id: &str, start: u64, name: &str, result: &str) -> Value {
    span(
        id,
        Some("r1"),
        &format!("execute_tool {name}"),
        Some(start),
        Some(start + 1),
        json!({
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.arguments": "{\"order\": 7}",
            "gen_ai.tool.call.result": result,
        }),
    )
}

fn export(spans: &[Value]) -> String {
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

fn clean() -> Vec<Value> {
    vec![
        root(),
        tool("t1", 2, "lookup", "shipped"),
        tool("t2", 3, "track", "in transit"),
    ]
}

/// Runs `faultgate precheck <args>` in `dir`: (exit code, stdout, stderr).
fn precheck(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .arg("precheck")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run faultgate");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

fn precheck_spans(test: &str, spans: &[Value], args: &[&str]) -> (i32, String, String) {
    let dir = dir(test);
    std::fs::write(dir.join("t.json"), export(spans)).expect("write traces");
    let mut argv = vec!["t.json"];
    argv.extend_from_slice(args);
    precheck(&dir, &argv)
}

#[test]
fn a_clean_export_passes() {
    let (code, out, err) = precheck_spans("clean", &clean(), &[]);
    assert_eq!(
        out,
        "precheck: OK · format otlp · checked 1 of 1 traces · 2 tool steps read · 0 error(s), 0 warning(s)\n"
    );
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn structural_errors_exit_2() {
    let mut spans = clean();
    spans.push(tool("t1", 4, "lookup", "again"));
    spans.push(span(
        "t3",
        Some("r1"),
        "execute_tool clock",
        None,
        Some(5),
        json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "clock"}),
    ));
    spans.push(span(
        "t4",
        Some("r1"),
        "execute_tool late",
        Some(6),
        Some(5),
        json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": ""}),
    ));
    let (code, out, _) = precheck_spans("errors", &spans, &["--sample", "0"]);
    assert_eq!(
        out,
        "\
error    aaaaaaaaaaaa  duplicate span id t1
error    aaaaaaaaaaaa  span t3 (execute_tool clock): missing start time
error    aaaaaaaaaaaa  span t4 (execute_tool late): ends before it starts
error    aaaaaaaaaaaa  step 5: tool call without a name
precheck: FAILED · format otlp · checked 1 of 1 traces · 5 tool steps read · 4 error(s), 0 warning(s)
"
    );
    assert_eq!(code, 2);
}

#[test]
fn warnings_exit_0() {
    let mut spans = vec![span(
        "r1",
        None,
        "invoke_agent",
        Some(3),
        Some(20),
        json!({"gen_ai.operation.name": "invoke_agent"}),
    )];
    spans.push(span(
        "t1",
        Some("r1"),
        "execute_tool lookup",
        Some(4),
        Some(5),
        json!({"gen_ai.tool.name": "lookup"}),
    ));
    spans.push(span(
        "c1",
        Some("gone"),
        "chat",
        Some(1),
        Some(2),
        json!({"gen_ai.tool.name": "track"}),
    ));
    spans.push(span("r2", None, "second root", Some(6), Some(7), json!({})));
    let (code, out, _) = precheck_spans("warnings", &spans, &[]);
    assert_eq!(
        out,
        "\
warning  aaaaaaaaaaaa  2 root spans; the first is used as the run
warning  aaaaaaaaaaaa  1 span(s) point at 1 parent(s) not in the export (gone)
warning  aaaaaaaaaaaa  1 span(s) start before the root span
warning  aaaaaaaaaaaa  1 tool span(s) recognised by span name only; set gen_ai.operation.name = execute_tool
warning  aaaaaaaaaaaa  1 span(s) carry tool attributes but are not read as tool steps (chat); set gen_ai.operation.name = execute_tool
warning  aaaaaaaaaaaa  no content attributes (prompt, answer, tool arguments or results): rules see structure only
warning  aaaaaaaaaaaa  no prompt: scenario keys fall back to a hash of the empty string unless faultgate.scenario is set
warning  aaaaaaaaaaaa  no final answer and no faultgate.termination
precheck: OK · format otlp · checked 1 of 1 traces · 1 tool steps read · 0 error(s), 8 warning(s)
"
    );
    assert_eq!(code, 0);
}

#[test]
fn a_missing_root_is_warned_but_an_empty_parent_id_is_a_root() {
    let mut spans = clean();
    spans[0]["parentSpanId"] = json!("elsewhere");
    let (code, out, _) = precheck_spans("no-root", &spans, &[]);
    assert!(out.starts_with(
        "warning  aaaaaaaaaaaa  no root span in the export: prompt and answer are read from child spans\n"
    ));
    assert_eq!(code, 0);

    let mut spans = clean();
    spans[0]["parentSpanId"] = json!("");
    let (_, out, _) = precheck_spans("empty-parent", &spans, &[]);
    assert!(out.starts_with("precheck: OK"), "{out}");
}

#[test]
fn openinference_exports_warn_about_native_tool_spans() {
    let mut spans = clean();
    spans[0]["attributes"]
        .as_array_mut()
        .expect("attributes")
        .push(json!({"key": "openinference.span.kind", "value": {"stringValue": "AGENT"}}));
    let (code, out, _) = precheck_spans("mixed", &spans, &[]);
    assert_eq!(
        out,
        "\
warning  aaaaaaaaaaaa  mixed export: native execute_tool spans next to OpenInference spans; steps are read from the tool spans, not from LLM messages (--format otlp reads the same steps)
precheck: OK · format openinference · checked 1 of 1 traces · 2 tool steps read · 0 error(s), 1 warning(s)
"
    );
    assert_eq!(code, 0);
}

#[test]
fn an_export_whose_tools_are_not_read_is_warned() {
    let spans = vec![
        root(),
        span(
            "x1",
            Some("r1"),
            "call lookup",
            Some(2),
            Some(3),
            json!({"input": "{\"order\": 7}"}),
        ),
    ];
    let (code, out, _) = precheck_spans("tools-not-read", &spans, &[]);
    assert_eq!(
        out,
        "\
warning  -             1 of the checked traces show tool activity but yield no tool step (trace aaaaaaaaaaaa: span 'call lookup' is named like a tool): this export's tools are not read; every structural check will pass
precheck: OK · format otlp · checked 1 of 1 traces · 0 tool steps read · 0 error(s), 1 warning(s)
"
    );
    assert_eq!(code, 0);
}

#[test]
fn the_policy_keys_and_the_json_results_warning() {
    let dir = dir("policy");
    std::fs::write(dir.join("t.json"), export(&clean())).expect("write traces");
    std::fs::write(
        dir.join("p.json"),
        r#"{"allow": ["lookup", "track"], "requires": [{"tool": "track", "after": "lookup", "result": [{"path": "status", "equals": "shipped"}]}]}"#,
    )
    .expect("write policy");
    let (code, out, _) = precheck(&dir, &["t.json", "--policy", "p.json"]);
    assert_eq!(
        out,
        "\
policy keys: allow, requires (after, result, tool)
warning  -             the policy's requires use result / latest, but no tool result in the checked traces is JSON: those prerequisites can never be met
precheck: OK · format otlp · checked 1 of 1 traces · 2 tool steps read · 0 error(s), 1 warning(s)
"
    );
    assert_eq!(code, 0);

    let mut spans = clean();
    spans[1] = tool("t1", 2, "lookup", "{\"status\": \"shipped\"}");
    std::fs::write(dir.join("json.json"), export(&spans)).expect("write traces");
    let (_, out, _) = precheck(&dir, &["json.json", "--policy", "p.json"]);
    assert!(!out.contains("warning  -"), "{out}");

    std::fs::write(dir.join("empty.json"), "{}").expect("write policy");
    let (_, out, _) = precheck(&dir, &["t.json", "--policy", "empty.json"]);
    assert!(
        out.starts_with("policy keys: (none)\nprecheck: OK"),
        "{out}"
    );
}

#[test]
fn a_malformed_policy_exits_2_naming_the_key() {
    let dir = dir("bad-policy");
    std::fs::write(dir.join("t.json"), export(&clean())).expect("write traces");
    let cases = [
        (r#"{"max_calls": "5"}"#, "max_calls"),
        (r#"{"allow": null}"#, "allow"),
        (r#"{"deny_patterns": ["("]}"#, "deny_patterns"),
        (r#"{"no_such_key": 1}"#, "no_such_key"),
        (
            r#"{"limits": [{"tool": "t", "arg": "n", "max": Infinity}]}"#,
            "limits[0].max",
        ),
        (
            r#"{"requires": [{"tool": "t", "after": "u", "latest": 1}]}"#,
            "requires[0].latest",
        ),
    ];
    for (text, key) in cases {
        std::fs::write(dir.join("p.json"), text).expect("write policy");
        let (code, out, err) = precheck(&dir, &["t.json", "--policy", "p.json"]);
        assert_eq!(code, 2, "{text}");
        assert_eq!(out, "", "{text}");
        assert_eq!(err.lines().count(), 1, "{text}: {err}");
        assert!(
            err.starts_with("faultgate: ") && err.contains(key),
            "{text}: {err}"
        );
    }
}

#[test]
fn unreadable_inputs_are_error_issues() {
    let dir = dir("unreadable");
    let (code, out, _) = precheck(&dir, &["missing.json"]);
    assert_eq!(
        out,
        "\
error    -             cannot parse missing.json: [Errno 2] No such file or directory: 'missing.json'
precheck: FAILED · format unknown · checked 0 of 0 traces · 0 tool steps read · 1 error(s), 0 warning(s)
"
    );
    assert_eq!(code, 2);

    std::fs::write(dir.join("empty.json"), r#"{"resourceSpans": []}"#).expect("write");
    let (code, out, _) = precheck(&dir, &["empty.json"]);
    assert_eq!(
        out,
        "\
error    -             no traces in file
precheck: FAILED · format otlp · checked 0 of 0 traces · 0 tool steps read · 1 error(s), 0 warning(s)
"
    );
    assert_eq!(code, 2);

    std::fs::write(dir.join("odd.json"), r#"{"resourceSpans": {"x": 1}}"#).expect("write");
    let (code, out, _) = precheck(&dir, &["odd.json"]);
    assert!(
        out.starts_with("error    -             cannot load as auto: "),
        "{out}"
    );
    assert!(out.contains("· format auto ·"), "{out}");
    assert_eq!(code, 2);
}

#[test]
fn several_files_each_get_a_block() {
    let dir = dir("several");
    std::fs::write(dir.join("a.json"), export(&clean())).expect("write");
    let (code, out, _) = precheck(&dir, &["a.json", "b.json"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "file a.json");
    assert!(lines[1].starts_with("precheck: OK"));
    assert_eq!(lines[2], "file b.json");
    assert!(lines[4].starts_with("precheck: FAILED"));
    assert_eq!(code, 2);
}

#[test]
fn broken_json_is_reported_in_python_words() {
    let dir = dir("broken");
    std::fs::write(dir.join("broken.json"), "{\"resourceSpans\": [\n").expect("write");
    let (code, out, _) = precheck(&dir, &["broken.json"]);
    assert_eq!(
        out,
        "\
error    -             cannot parse broken.json: Expecting value: line 2 column 1 (char 20)
precheck: FAILED · format unknown · checked 0 of 0 traces · 0 tool steps read · 1 error(s), 0 warning(s)
"
    );
    assert_eq!(code, 2);
}

#[test]
fn benchmark_logs_without_times_pass_with_one_note() {
    // tau-bench, SWE-agent `.traj` and Who&When logs record no times; each is a valid export.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, format, traces, steps) in [
        (
            "tests/fixtures/formats/tau/tau_bench_airline.json",
            "tau-bench",
            3,
            7,
        ),
        (
            "tests/fixtures/formats/swe_agent/6e44b9__sweagenttestrepo-1c2844.traj",
            "swe-agent",
            1,
            5,
        ),
        (
            "tests/fixtures/formats/multi_agent/who_and_when_ag2.json",
            "multi-agent",
            1,
            2,
        ),
    ] {
        let (code, out, err) = precheck(root, &[file, "--sample", "0"]);
        assert_eq!((code, err.as_str()), (0, ""), "{file}: {out}");
        assert!(!out.contains("missing start time"), "{file}: {out}");
        let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("note: ")).collect();
        assert_eq!(
            notes,
            [format!("note: format {format} records no times: latency is not measured").as_str()],
            "{file}"
        );
        let summary = out.lines().last().unwrap();
        assert!(
            summary.starts_with(&format!(
                "precheck: OK · format {format} · checked {traces} of {traces} traces · {steps} tool steps read · 0 error(s)"
            )),
            "{file}: {summary}"
        );
    }
    // A tau2 results file records each simulation's start and end: nothing to note.
    let (code, out, _) = precheck(root, &["tests/fixtures/formats/tau/tau2_airline.json"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("note: "), "{out}");
}
