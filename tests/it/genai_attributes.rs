//! The GenAI attributes the conventions added since mid-2025, read where a check or the policy can use
//! them: `gen_ai.tool.definitions` (the policy's `require_defined_tools`), `gen_ai.system_instructions`,
//! reasoning message parts, `gen_ai.tool.call.id`, `invoke_workflow` spans and `gen_ai.agent.version`.

use crate::common;

use common::{arg, faultgate, read_json, scratch, stderr};
use serde_json::{Value, json};

/// An OTLP/JSON attribute list of string values.
fn attributes(pairs: &[(&str, &str)]) -> Value {
    pairs
        .iter()
        .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
        .collect()
}

/// A span of trace `t1`: its id, parent, name, start and string attributes.
fn span(id: &str, parent: Option<&str>, name: &str, start: u64, attrs: &[(&str, &str)]) -> Value {
    let mut span = json!({
        "traceId": "0123456789abcdef0123456789abcdef",
        "spanId": id,
        "name": name,
        "startTimeUnixNano": start.to_string(),
        "endTimeUnixNano": (start + 1).to_string(),
        "attributes": attributes(attrs),
    });
    if let Some(parent) = parent {
        span["parentSpanId"] = json!(parent);
    }
    span
}

fn export(spans: &[Value]) -> String {
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

/// Runs `check` over one trace file with extra arguments; returns the exit code and the JSON report.
fn check(traces: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, traces).unwrap();
    let report = dir.path().join("r.json");
    let mut args = vec!["check", arg(&file), "--json", arg(&report)];
    args.extend(extra);
    let out = faultgate(&args);
    assert!(out.status.code() != Some(2), "{}", stderr(&out));
    (out.status.code(), read_json(&report))
}

/// The result of `check` in a report.
fn result<'r>(report: &'r Value, check: &str) -> &'r Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} result in {report}"))
}

const ROOT: &str = "a000000000000001";

/// An agent run whose chat span offered `definitions` and whose tool spans called `calls`.
fn agent_with_tools(definitions: &str, calls: &[&str]) -> String {
    let mut spans = vec![
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", "invoke_agent"),
                (
                    "gen_ai.input.messages",
                    r#"[{"role": "user", "parts": [{"type": "text", "content": "close my ticket"}]}]"#,
                ),
                (
                    "gen_ai.output.messages",
                    r#"[{"role": "assistant", "parts": [{"type": "text", "content": "Closed."}]}]"#,
                ),
            ],
        ),
        span(
            "b000000000000001",
            Some(ROOT),
            "chat",
            11,
            &[
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.tool.definitions", definitions),
            ],
        ),
    ];
    for (i, tool) in calls.iter().enumerate() {
        spans.push(span(
            &format!("c00000000000000{i}"),
            Some(ROOT),
            &format!("execute_tool {tool}"),
            20 + i as u64,
            &[
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", tool),
                ("gen_ai.tool.call.arguments", r#"{"ticket": 7}"#),
                ("gen_ai.tool.call.result", "ok"),
            ],
        ));
    }
    export(&spans)
}

#[test]
fn the_policy_flags_a_call_to_a_tool_the_agent_was_not_given() {
    let dir = scratch();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"require_defined_tools": true}"#).unwrap();
    let with_policy = ["--check", "policy", "--policy", arg(&policy)];
    // The conventions' form (`name` on each definition) and OpenAI's request form (`function.name`).
    for definitions in [
        r#"[{"type": "function", "name": "get_ticket", "parameters": {}}, {"type": "function", "name": "close_ticket"}]"#,
        r#"[{"type": "function", "function": {"name": "get_ticket"}}, {"type": "function", "function": {"name": "close_ticket"}}]"#,
    ] {
        let (code, report) = check(
            &agent_with_tools(
                definitions,
                &["get_ticket", "delete_ticket", "close_ticket"],
            ),
            &with_policy,
        );
        assert_eq!(code, Some(1), "{report}");
        assert_eq!(
            result(&report, "policy")["reason"],
            "step 2: tool 'delete_ticket' was not given to the agent (gen_ai.tool.definitions)"
        );
        let (code, report) = check(
            &agent_with_tools(definitions, &["get_ticket", "close_ticket"]),
            &with_policy,
        );
        assert_eq!(code, Some(0), "{report}");
        assert_eq!(result(&report, "policy")["detected"], false);
    }
    // Without the rule, the same run is within the default policy.
    let (code, report) = check(
        &agent_with_tools(r#"[{"name": "get_ticket"}]"#, &["delete_ticket"]),
        &["--check", "policy"],
    );
    assert_eq!(code, Some(0));
    assert_eq!(result(&report, "policy")["detected"], false);
}

#[test]
fn a_tool_span_takes_its_call_and_result_from_the_messages_with_its_call_id() {
    let call = r#"[{"role": "assistant", "parts": [{"type": "tool_call", "id": "call_7", "name": "refund", "arguments": {"order": "A1", "amount": 500}}]}]"#;
    let response = r#"[{"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_7", "result": "Error: refund service unavailable"}]}]"#;
    let traces = export(&[
        span(
            ROOT,
            None,
            "invoke_agent",
            10,
            &[
                ("gen_ai.operation.name", "invoke_agent"),
                (
                    "gen_ai.input.messages",
                    r#"[{"role": "user", "parts": [{"type": "text", "content": "refund order A1"}]}]"#,
                ),
                (
                    "gen_ai.output.messages",
                    r#"[{"role": "assistant", "parts": [{"type": "text", "content": "Refunded."}]}]"#,
                ),
            ],
        ),
        span(
            "b000000000000001",
            Some(ROOT),
            "chat",
            11,
            &[
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.output.messages", call),
            ],
        ),
        // The tool span records its call id only: content capture is off on tool spans.
        span(
            "c000000000000001",
            Some(ROOT),
            "execute_tool refund",
            12,
            &[
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", "refund"),
                ("gen_ai.tool.call.id", "call_7"),
            ],
        ),
        span(
            "b000000000000002",
            Some(ROOT),
            "chat",
            13,
            &[
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.input.messages", response),
            ],
        ),
    ]);
    let dir = scratch();
    let policy = dir.path().join("policy.json");
    std::fs::write(
        &policy,
        r#"{"limits": [{"tool": "refund", "arg": "amount", "max": 100}]}"#,
    )
    .unwrap();
    let (code, report) = check(&traces, &["--policy", arg(&policy)]);
    assert_eq!(code, Some(1), "{report}");
    // The arguments of the call with the span's id, checked once (the call is the span's, not a
    // second step).
    assert_eq!(
        result(&report, "policy")["reason"],
        "step 1: refund.amount 500 > max 100"
    );
    // The response with the span's id is the step's result.
    let error = result(&report, "unrecovered_tool_error");
    assert_eq!(error["detected"], true, "{error}");
}

#[test]
fn an_invoke_workflow_span_is_the_root_whose_output_is_the_answer() {
    // The workflow ran inside a request whose span was not exported: no span is parentless.
    let outside = "f000000000000001";
    let workflow = "a000000000000009";
    let traces = export(&[
        span(
            workflow,
            Some(outside),
            "invoke_workflow support_tools",
            10,
            &[
                ("gen_ai.operation.name", "invoke_workflow"),
                (
                    "gen_ai.input.messages",
                    r#"[{"role": "user", "parts": [{"type": "text", "content": "refund order A1"}]}]"#,
                ),
                (
                    "gen_ai.output.messages",
                    r#"[{"role": "assistant", "parts": [{"type": "text", "content": "Refund issued for order A1."}]}]"#,
                ),
            ],
        ),
        span(
            "b000000000000001",
            Some(workflow),
            "invoke_agent triage",
            11,
            &[
                ("gen_ai.operation.name", "invoke_agent"),
                ("gen_ai.agent.name", "triage"),
                (
                    "gen_ai.output.messages",
                    r#"[{"role": "assistant", "parts": [{"type": "text", "content": "Routing to refunds."}]}]"#,
                ),
            ],
        ),
        span(
            "b000000000000002",
            Some(workflow),
            "invoke_agent refunds",
            12,
            &[
                ("gen_ai.operation.name", "invoke_agent"),
                ("gen_ai.agent.name", "refunds"),
            ],
        ),
    ]);
    let dir = scratch();
    let golden = dir.path().join("golden.json");
    std::fs::write(
        &golden,
        r#"{"refund order A1": "Refund issued for order A1."}"#,
    )
    .unwrap();
    let (code, report) = check(
        &traces,
        &["--check", "wrong_answer", "--golden", arg(&golden)],
    );
    let verdict = result(&report, "wrong_answer");
    assert_eq!(verdict["detected"], false, "{verdict}");
    assert_eq!(code, Some(0));
    // Named after its workflow, the span is not taken for a tool: precheck has nothing to warn about.
    let file = dir.path().join("w.json");
    std::fs::write(&file, &traces).unwrap();
    let out = faultgate(&["precheck", arg(&file)]);
    assert!(
        !common::stdout(&out).contains("named like a tool"),
        "{}",
        common::stdout(&out)
    );
}

#[test]
fn reasoning_parts_are_kept_apart_from_the_answer() {
    let output = r#"[{"role": "assistant", "parts": [{"type": "reasoning", "content": "I don't know this offhand; I cannot answer without a lookup."}, {"type": "text", "content": "The capital of France is Paris."}]}]"#;
    let traces = export(&[span(
        ROOT,
        None,
        "invoke_agent",
        10,
        &[
            ("gen_ai.operation.name", "invoke_agent"),
            (
                "gen_ai.input.messages",
                r#"[{"role": "user", "parts": [{"type": "text", "content": "What is the capital of France?"}]}]"#,
            ),
            ("gen_ai.output.messages", output),
        ],
    )]);
    let (code, report) = check(&traces, &["--check", "abstention"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        result(&report, "abstention")["reason"],
        "answer does not abstain"
    );
}

#[test]
fn the_agent_version_is_carried_to_the_verdicts() {
    use arrow_array::{Array, StringArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let agent = |id: &str, version: Option<&str>| {
        let mut attrs = vec![
            ("gen_ai.operation.name", "invoke_agent"),
            ("gen_ai.agent.name", "support"),
            (
                "gen_ai.input.messages",
                r#"[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]"#,
            ),
        ];
        if let Some(version) = version {
            attrs.push(("gen_ai.agent.version", version));
        }
        let mut root = span(ROOT, None, "invoke_agent", 10, &attrs);
        root["traceId"] = json!(id);
        root
    };
    let traces = export(&[
        agent("11111111111111111111111111111111", Some("2.1.0")),
        agent("22222222222222222222222222222222", None),
    ]);
    let dir = scratch();
    let file = dir.path().join("t.json");
    std::fs::write(&file, traces).unwrap();
    let parquet = dir.path().join("pq");
    let out = faultgate(&["check", arg(&file), "--parquet", arg(&parquet)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reader = ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(parquet.join("traces.parquet")).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let batch = reader.map(Result::unwrap).next().unwrap();
    let column = |name: &str| -> Vec<Option<String>> {
        let array = batch.column_by_name(name).unwrap();
        let strings = array.as_any().downcast_ref::<StringArray>().unwrap();
        (0..strings.len())
            .map(|i| strings.is_valid(i).then(|| strings.value(i).to_string()))
            .collect()
    };
    assert_eq!(
        column("agent"),
        [Some("support".into()), Some("support".into())]
    );
    assert_eq!(column("agent_version"), [Some("2.1.0".into()), None]);
}

/// One agent run of `scenario` by agent `version` (none when `None`): clean when `clean`, else its
/// answer abstains.
fn versioned_run(trace: usize, scenario: &str, version: Option<&str>, clean: bool) -> Value {
    let answer = if clean {
        "The order ships on Monday."
    } else {
        "I don't know, I cannot help with that."
    };
    let output = json!([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]);
    let input = json!([{"role": "user", "parts": [{"type": "text", "content": format!("when does {scenario} ship?")}]}]);
    let (input, output) = (input.to_string(), output.to_string());
    let mut attrs = vec![
        ("gen_ai.operation.name", "invoke_agent"),
        ("faultgate.scenario", scenario),
        ("gen_ai.input.messages", input.as_str()),
        ("gen_ai.output.messages", output.as_str()),
    ];
    if let Some(version) = version {
        attrs.push(("gen_ai.agent.version", version));
    }
    let mut root = span(
        &format!("a{trace:015x}"),
        None,
        "invoke_agent",
        10 + trace as u64,
        &attrs,
    );
    root["traceId"] = json!(format!("{trace:032x}"));
    root
}

/// A run of four scenarios, each run once by version 1.0 (clean) and once by version 2.0 (abstaining);
/// `unversioned` adds a trace that records no version.
fn mixed_versions(first_trace: usize, unversioned: bool) -> String {
    let mut spans = Vec::new();
    for (i, scenario) in ["s1", "s2", "s3", "s4"].iter().enumerate() {
        spans.push(versioned_run(
            first_trace + 2 * i,
            scenario,
            Some("1.0"),
            true,
        ));
        spans.push(versioned_run(
            first_trace + 2 * i + 1,
            scenario,
            Some("2.0"),
            false,
        ));
    }
    if unversioned {
        spans.push(versioned_run(first_trace + 100, "s9", None, false));
    }
    export(&spans)
}

#[test]
fn a_band_is_built_and_gated_for_one_agent_version() {
    let dir = scratch();
    let at = |name: &str| dir.path().join(name);
    let runs: Vec<String> = (0..3)
        .map(|r| {
            let path = at(&format!("run{r}.json"));
            std::fs::write(&path, mixed_versions(1000 * r, r == 1)).unwrap();
            arg(&path).to_string()
        })
        .collect();
    let baseline = |out: &str, extra: &[&str]| {
        let mut args = vec!["baseline"];
        args.extend(runs.iter().map(String::as_str));
        let out = at(out);
        args.extend(["--out", arg(&out)]);
        args.extend(extra);
        faultgate(&args)
    };

    // Every trace: no scenario is clean in any run, and the band names no version (0.4.1's keys).
    let out = baseline("all.json", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = read_json(&at("all.json"));
    assert_eq!(all["clean_rate"]["per_run"], json!([0.0, 0.0, 0.0]));
    assert!(all.get("agent_version").is_none(), "{all}");

    // Version 1.0's traces alone: every scenario clean in every run, and the band says whose it is.
    let out = baseline("v1.json", &["--agent-version", "1.0"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v1 = read_json(&at("v1.json"));
    assert_eq!(v1["clean_rate"]["per_run"], json!([1.0, 1.0, 1.0]));
    assert_eq!(v1["scenarios"], json!(["s1", "s2", "s3", "s4"]));
    assert_eq!(v1["agent_version"], "1.0");
    let text = common::stdout(&out);
    assert!(text.contains("run0.json: 4 traces"), "{text}");
    assert!(
        text.contains("over 4 scenarios \u{d7} 3 runs of agent version 1.0 \u{b7}"),
        "{text}"
    );

    // The same band from the partials of three shards, merged.
    let partial = |shard: &str, part: &str, extra: &[&str]| {
        let mut args = vec!["baseline"];
        args.extend(runs.iter().map(String::as_str));
        let part = at(part);
        args.extend(["--shard", shard, "--partial", arg(&part)]);
        args.extend(extra);
        let out = faultgate(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    };
    for k in 1..=3 {
        partial(
            &format!("{k}/3"),
            &format!("part{k}"),
            &["--agent-version", "1.0"],
        );
    }
    let merged = at("merged.json");
    let merge = |parts: &[&str]| {
        let paths: Vec<std::path::PathBuf> = parts.iter().map(|p| at(p)).collect();
        let mut args = vec!["merge"];
        args.extend(paths.iter().map(|p| arg(p)));
        args.extend(["--out", arg(&merged)]);
        faultgate(&args)
    };
    let out = merge(&["part1", "part2", "part3"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read_json(&merged), v1);
    // A shard read for every version does not merge with them.
    partial("3/3", "every", &[]);
    let out = merge(&["part1", "part2", "every"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("agent version"), "{}", stderr(&out));

    // A candidate of both versions, gated on each against version 1.0's band.
    let candidate = at("candidate.json");
    std::fs::write(&candidate, mixed_versions(5000, true)).unwrap();
    let gate = |version: &str| {
        let report = at(&format!("gate-{version}.json"));
        let out = faultgate(&[
            "check",
            arg(&candidate),
            "--agent-version",
            version,
            "--band",
            arg(&at("v1.json")),
            "--json",
            arg(&report),
        ]);
        (out, report)
    };
    let (out, report) = gate("1.0");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = read_json(&report);
    assert_eq!(report["traces"], 4, "{report}");
    assert_eq!(report["gate"]["verdict"], "PASS", "{report}");
    let (out, report) = gate("2.0");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = read_json(&report);
    assert_eq!(report["traces"], 4);
    assert_eq!(report["gate"]["verdict"], "FAIL", "{report}");

    // Every version against one version's band: read, and the user is told.
    let out = faultgate(&["check", arg(&candidate), "--band", arg(&at("v1.json"))]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "note: the band holds agent version 1.0's traces alone (baseline --agent-version); this run checks every trace"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        common::stdout(&out).contains("5/9 traces failed"),
        "{}",
        common::stdout(&out)
    );

    // A version no trace records gates nothing: refused, in check as in baseline.
    let (out, report) = gate("1.0.1");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "faultgate: --agent-version 1.0.1: no trace of the input records this gen_ai.agent.version; nothing was checked"
    );
    assert!(!report.exists());
    let out = baseline("none.json", &["--agent-version", "3.0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run0.json: --agent-version 3.0: no trace"),
        "{}",
        stderr(&out)
    );
    assert!(!at("none.json").exists());
    let labels = at("labels.csv");
    std::fs::write(&labels, "key,check,label\ns1,abstention,true\n").unwrap();
    let calibrate = |version: &str| {
        faultgate(&[
            "calibrate",
            arg(&candidate),
            "--labels",
            arg(&labels),
            "--agent-version",
            version,
        ])
    };
    let out = calibrate("2.0");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = calibrate("3.0");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--agent-version 3.0: no trace"),
        "{}",
        stderr(&out)
    );
}
