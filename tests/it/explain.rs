//! `check --explain`: the first step where a regressed scenario's trace left its baseline runs' road,
//! on generated runs with one known change per scenario and on the shipped gate example.

use crate::common;

use std::path::Path;

use common::{arg, faultgate, faultgate_in, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

/// A tool step: tool, arguments, result.
type Step = (&'static str, &'static str, &'static str);

/// The road every baseline trace takes.
fn road() -> Vec<Step> {
    vec![
        ("search", r#"{"q": "a"}"#, r#"{"hits": 3}"#),
        ("search", r#"{"q": "b"}"#, r#"{"hits": 2}"#),
        ("fetch", r#"{"id": 1}"#, r#"{"doc": "x"}"#),
        ("read", r#"{"path": "p"}"#, r#"{"text": "y"}"#),
    ]
}

/// One trace of scenario `key` as OTLP spans: a root with the prompt and answer, then its steps.
fn spans(trace_id: &str, key: &str, steps: &[Step], answer: Option<&str>) -> Vec<Value> {
    let text = |v: &str| json!({"stringValue": v});
    let mut root = vec![
        json!({"key": "gen_ai.operation.name", "value": text("invoke_agent")}),
        json!({"key": "gen_ai.agent.id", "value": text(key)}),
        json!({"key": "gen_ai.input.messages", "value": text(&json!([{"role": "user", "parts": [{"type": "text", "content": format!("question {key}")}]}]).to_string())}),
    ];
    if let Some(answer) = answer {
        root.push(json!({"key": "gen_ai.output.messages", "value": text(&json!([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]).to_string())}));
    }
    let root_id = format!("{}0000", &trace_id[..12]);
    let mut out = vec![json!({
        "traceId": trace_id, "spanId": root_id, "name": "invoke_agent",
        "startTimeUnixNano": "1000", "endTimeUnixNano": "9000000", "attributes": root,
    })];
    for (i, (tool, arguments, result)) in steps.iter().enumerate() {
        let start = 2000 + i as u64 * 1000;
        out.push(json!({
            "traceId": trace_id, "spanId": format!("{}{:04}", &trace_id[..12], i + 1),
            "parentSpanId": root_id, "name": format!("execute_tool {tool}"),
            "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 500).to_string(),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": text("execute_tool")},
                {"key": "gen_ai.tool.name", "value": text(tool)},
                {"key": "gen_ai.tool.call.arguments", "value": text(arguments)},
                {"key": "gen_ai.tool.call.result", "value": text(result)},
            ],
        }));
    }
    out
}

/// An OTLP/JSON export of traces (trace id, scenario key, steps, answer).
fn export(path: &Path, traces: &[(String, &str, Vec<Step>, Option<&str>)]) {
    let spans: Vec<Value> = traces
        .iter()
        .flat_map(|(id, key, steps, answer)| spans(id, key, steps, *answer))
        .collect();
    let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
    std::fs::write(path, doc.to_string()).unwrap();
}

/// A 32-hex-digit trace id for run `run` and scenario `i`.
fn id(run: usize, i: usize) -> String {
    format!("{run:02x}{i:030x}")
}

/// A scenario: its key, the candidate's steps and answer, and the kind, step and baseline step its
/// explanation must give.
type Case = (
    &'static str,
    Vec<Step>,
    Option<&'static str>,
    &'static str,
    u64,
    u64,
);

/// The scenarios, each with the candidate's one change from the road, and the kind and steps
/// (candidate, baseline) the explanation must give.
fn cases() -> Vec<Case> {
    let with = |f: &dyn Fn(&mut Vec<Step>)| {
        let mut steps = road();
        f(&mut steps);
        steps
    };
    let wrong = Some("Rome");
    vec![
        (
            "s-extra",
            with(&|s| s.insert(2, ("lookup", r#"{"k": 1}"#, r#"{"v": 1}"#))),
            wrong,
            "extra_call",
            3,
            3,
        ),
        (
            "s-missing",
            with(&|s| {
                s.remove(2);
            }),
            wrong,
            "missing_call",
            3,
            3,
        ),
        (
            "s-tool",
            with(&|s| s[2] = ("lookup", r#"{"id": 1}"#, r#"{"doc": "x"}"#)),
            wrong,
            "other_tool",
            3,
            3,
        ),
        (
            "s-args",
            with(&|s| s[2] = ("fetch", r#"{"id": 9}"#, r#"{"doc": "x"}"#)),
            wrong,
            "other_arguments",
            3,
            3,
        ),
        (
            "s-error",
            with(&|s| s[2] = ("fetch", r#"{"id": 1}"#, "Error: connection refused")),
            wrong,
            "error_result",
            3,
            3,
        ),
        (
            "s-empty",
            with(&|s| s[2] = ("fetch", r#"{"id": 1}"#, "[]")),
            wrong,
            "empty_result",
            3,
            3,
        ),
        ("s-answer", road(), wrong, "other_answer", 5, 5),
        (
            "s-longer",
            with(&|s| s.push(("search", r#"{"q": "c"}"#, r#"{"hits": 1}"#))),
            wrong,
            "extra_call",
            5,
            5,
        ),
    ]
}

/// Writes the baseline runs, the golden answers, the band and the candidate into `dir`: run1 takes a
/// detour (an extra first call) in every scenario, run2 and run3 the road; run3 lacks `s-args`.
fn setup(dir: &Path) {
    let cases = cases();
    let keys: Vec<&str> = cases.iter().map(|c| c.0).chain(["s-same"]).collect();
    let golden: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.to_string(), json!("Paris")))
        .collect();
    std::fs::write(dir.join("golden.json"), Value::Object(golden).to_string()).unwrap();
    let detour = || {
        let mut steps = vec![("ping", "{}", r#"{"pong": true}"#)];
        steps.extend(road());
        steps
    };
    for run in 1..=3 {
        let traces: Vec<(String, &str, Vec<Step>, Option<&str>)> = keys
            .iter()
            .enumerate()
            .filter(|(_, k)| run != 3 || **k != "s-args")
            .map(|(i, k)| {
                let steps = if run == 1 { detour() } else { road() };
                (id(run, i), *k, steps, Some("Paris"))
            })
            .collect();
        export(&dir.join(format!("run{run}.json")), &traces);
    }
    let mut candidate: Vec<(String, &str, Vec<Step>, Option<&str>)> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| (id(9, i), c.0, c.1.clone(), c.2))
        .collect();
    candidate.push((id(9, 99), "s-same", road(), Some("Paris")));
    export(&dir.join("candidate.json"), &candidate);
    let out = faultgate_in(
        dir,
        &[
            "baseline",
            "run1.json",
            "run2.json",
            "--golden",
            "golden.json",
            "--out",
            "band.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn each_kind_of_divergence_is_named_at_its_step_against_the_closest_baseline_trace() {
    let dir = scratch();
    setup(dir.path());
    let out = faultgate_in(
        dir.path(),
        &[
            "check",
            "candidate.json",
            "--band",
            "band.json",
            "--golden",
            "golden.json",
            "--json",
            "report.json",
            "--markdown",
            "summary.md",
            "--explain",
            "run1.json",
            "run2.json",
            "run3.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = read_json(&dir.path().join("report.json"));
    let explanations = report["explanations"].as_array().expect("explanations");
    let cases = cases();
    let regressions: Vec<&str> = report["gate"]["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = cases.iter().map(|c| c.0).collect();
    expected.sort_unstable();
    assert_eq!(
        regressions, expected,
        "every changed scenario regressed, s-same did not"
    );
    assert_eq!(explanations.len(), cases.len());
    for e in explanations {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "scenario",
                "trace_id",
                "baseline_run",
                "baseline_trace_id",
                "kind",
                "step",
                "baseline_step",
                "candidate",
                "baseline",
                "check",
                "reason",
                "later_differences"
            ]
        );
        let scenario = e["scenario"].as_str().unwrap();
        let case = cases
            .iter()
            .find(|c| c.0 == scenario)
            .expect("a known scenario");
        assert_eq!(e["kind"], case.3, "{scenario}: {e}");
        assert_eq!(e["step"], case.4, "{scenario}: {e}");
        assert_eq!(e["baseline_step"], case.5, "{scenario}: {e}");
        // run2 takes the road, run1 a detour; run3 ties with run2, and ties go to the earlier run.
        assert_eq!(e["baseline_run"], "run2.json", "{scenario}");
        assert_eq!(e["later_differences"], 0, "{scenario}: {e}");
        // The first check that fired, in selection order: a failed call is unrecovered before the
        // answer is wrong.
        let check = if scenario == "s-error" {
            "unrecovered_tool_error"
        } else {
            "wrong_answer"
        };
        assert_eq!(e["check"], check, "{scenario}: {e}");
    }
    let by = |key: &str| explanations.iter().find(|e| e["scenario"] == key).unwrap();
    assert_eq!(
        by("s-extra")["candidate"],
        json!({"tool": "lookup", "arguments": r#"{"k": 1}"#, "result": r#"{"v": 1}"#})
    );
    assert_eq!(
        by("s-extra")["baseline"],
        json!({"tool": "fetch", "arguments": r#"{"id": 1}"#, "result": r#"{"doc": "x"}"#})
    );
    assert_eq!(by("s-answer")["candidate"], json!({"answer": "Rome"}));
    assert_eq!(by("s-answer")["baseline"], json!({"answer": "Paris"}));
    assert_eq!(by("s-longer")["baseline"], json!({"answer": "Paris"}));
    assert_eq!(by("s-missing")["candidate"]["tool"], "read");

    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("regressions (clean in every baseline, not now): "))
        .expect("the regressions line");
    assert!(
        lines[at + 1..at + 1 + cases.len()]
            .iter()
            .all(|l| l.starts_with("  s-")),
        "{text}"
    );
    assert!(text.contains(
        r#"  s-longer (wrong_answer): step 5 extra_call search({"q": "c"}) — baseline run2.json answered after step 4"#
    ), "{text}");
    assert!(text.contains(
        r#"  s-missing (wrong_answer): step 3 missing_call read({"path": "p"}) — baseline run2.json called fetch({"id": 1}) at step 3"#
    ), "{text}");
    assert!(
        stderr(&out).contains("note: --explain: baseline run run3.json holds no trace of 1 scenario(s) to explain: s-args"),
        "{}",
        stderr(&out)
    );
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        md.contains("### Where the regressions left the baseline"),
        "{md}"
    );
    assert!(md.contains("- `s-error` · trace `09"), "{md}");
}

#[test]
fn explain_all_adds_scenarios_that_fired_a_check_no_baseline_run_fired() {
    let dir = scratch();
    setup(dir.path());
    // A scenario no band run was clean in: the band does not name it a regression.
    let road_with = |answer| vec![(id(9, 50), "s-new", road(), answer)];
    export(&dir.path().join("extra.json"), &road_with(Some("Rome")));
    let base = |run: usize| vec![(id(run, 50), "s-new", road(), Some("Paris"))];
    export(&dir.path().join("extra_base.json"), &base(7));
    let golden = dir.path().join("golden.json");
    let mut answers = read_json(&golden);
    answers["s-new"] = json!("Paris");
    std::fs::write(&golden, answers.to_string()).unwrap();
    let args = |all: bool| {
        let mut a = vec![
            "check",
            "candidate.json",
            "extra.json",
            "--band",
            "band.json",
            "--golden",
            "golden.json",
            "--json",
            "report.json",
            "--explain",
            "run2.json",
            "extra_base.json",
        ];
        if all {
            a.push("--explain-all");
        }
        a
    };
    let out = faultgate_in(dir.path(), &args(false));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let scenarios = |report: &Value| -> Vec<String> {
        report["explanations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["scenario"].as_str().unwrap().to_string())
            .collect()
    };
    let plain = scenarios(&read_json(&dir.path().join("report.json")));
    assert!(!plain.contains(&"s-new".to_string()), "{plain:?}");
    let out = faultgate_in(dir.path(), &args(true));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = scenarios(&read_json(&dir.path().join("report.json")));
    assert_eq!(all.last().map(String::as_str), Some("s-new"), "{all:?}");
    assert_eq!(&all[..all.len() - 1], plain.as_slice());
    let text = stdout(&out);
    assert!(
        text.contains("explained (a check fired that no baseline run of the scenario fired):\n  s-new (wrong_answer): after step 4 other_answer answered \"Rome\" — baseline extra_base.json answered \"Paris\""),
        "{text}"
    );
}

#[test]
fn every_regression_of_the_gate_example_is_explained_alike_at_1_2_and_4_threads() {
    let dir = scratch();
    for candidate in ["candidate_qwen", "candidate_gpt"] {
        let mut seen: Vec<(String, Vec<u8>)> = Vec::new();
        for threads in ["1", "2", "4"] {
            let json_path = dir.path().join(format!("{candidate}-{threads}.json"));
            let out = common::command(common::root())
                .args([
                    "check",
                    &format!("examples/gate/{candidate}.json"),
                    "--band",
                    "examples/gate/band.json",
                    "--golden",
                    "examples/gate/golden.json",
                    "--check",
                    "search_loop,abstention,policy,wrong_answer,truncation",
                    "--json",
                    arg(&json_path),
                    "--explain",
                    "examples/gate/baseline_glm_run1.json",
                    "examples/gate/baseline_glm_run2.json",
                ])
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            // The summary line holds the elapsed time, the last line the report's path.
            let text: String = stdout(&out)
                .lines()
                .filter(|l| !l.contains(" · judge ") && !l.starts_with("report written to "))
                .collect::<Vec<_>>()
                .join("\n");
            let report = read_json(&json_path);
            let regressions = report["gate"]["regressions"].as_array().unwrap();
            assert!(!regressions.is_empty(), "{candidate}");
            let explained: Vec<&Value> = report["explanations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| &e["scenario"])
                .collect();
            assert_eq!(
                explained,
                regressions.iter().collect::<Vec<_>>(),
                "{candidate}"
            );
            assert_eq!(
                text.lines().filter(|l| l.starts_with("  r-")).count(),
                regressions.len(),
                "{text}"
            );
            seen.push((text, std::fs::read(&json_path).unwrap()));
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{candidate}");
    }
}

#[test]
fn explain_is_refused_where_it_cannot_work() {
    let gate = "examples/gate";
    let candidate = format!("{gate}/candidate_qwen.json");
    let run = format!("{gate}/baseline_glm_run1.json");
    let band = format!("{gate}/band.json");
    let refused = |args: &[&str], message: &str| {
        let out = faultgate(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    };
    refused(
        &["check", &candidate, "--explain", &run],
        "--explain needs --band",
    );
    refused(
        &["check", &candidate, "--explain-all"],
        "--explain-all needs --explain",
    );
    refused(
        &[
            "check",
            &candidate,
            "--band",
            &band,
            "--judge",
            "replay:x.jsonl",
            "--explain",
            &run,
        ],
        "--explain cannot be used with --judge",
    );
    let dir = scratch();
    let partial = dir.path().join("p");
    refused(
        &[
            "check",
            &candidate,
            "--partial",
            arg(&partial),
            "--explain",
            &run,
        ],
        "--explain cannot be used with --partial",
    );
    refused(
        &[
            "check",
            &candidate,
            "--band",
            &band,
            "--explain",
            "no/such/run.json",
        ],
        "no/such/run.json",
    );
}

#[test]
fn without_explain_the_report_has_no_explanations_key() {
    let dir = scratch();
    let json_path = dir.path().join("r.json");
    let out = faultgate(&[
        "check",
        "examples/gate/candidate_qwen.json",
        "--band",
        "examples/gate/band.json",
        "--golden",
        "examples/gate/golden.json",
        "--check",
        "search_loop,abstention,policy,wrong_answer,truncation",
        "--json",
        arg(&json_path),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(read_json(&json_path).get("explanations").is_none());
}

#[test]
fn the_html_report_shows_both_step_lists_with_the_divergent_steps_marked() {
    let dir = scratch();
    setup(dir.path());
    let run = |explain: bool, page: &str| {
        let mut args = vec![
            "check",
            "candidate.json",
            "--band",
            "band.json",
            "--golden",
            "golden.json",
            "--html",
            page,
        ];
        if explain {
            args.extend(["--explain", "run1.json", "run2.json"]);
        }
        let out = faultgate_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        std::fs::read_to_string(dir.path().join(page)).unwrap()
    };
    let plain = run(false, "plain.html");
    assert!(!plain.contains("explanations"));
    assert!(!plain.contains(".pair"));
    let page = run(true, "explained.html");
    let section = &page[page
        .find("<section id=\"explanations\">")
        .expect("the section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert_eq!(
        section.matches("<details class=\"trace\"").count(),
        cases().len()
    );
    let block = |key: &str| {
        section
            .split("</details>")
            .find(|d| d.contains(&format!("><summary>{key} (")))
            .unwrap_or_else(|| panic!("{key}: {section}"))
    };
    // Regressions come in band order, the first block open.
    assert!(
        section.contains("id=\"e0\" open><summary>s-answer ("),
        "{section}"
    );
    // s-extra: the candidate's extra call is its step 3, the baseline's step 3 the call it went on
    // with.
    let extra = block("s-extra");
    assert!(
        extra.contains("<summary>s-extra (wrong_answer): step 3 extra_call"),
        "{extra}"
    );
    let marked: Vec<&str> = extra
        .lines()
        .filter(|l| l.starts_with("<tr class=\"div"))
        .collect();
    assert_eq!(marked.len(), 2, "{extra}");
    assert!(
        marked[0].contains("<td class=\"n\">3</td><td>lookup</td>"),
        "{extra}"
    );
    assert!(
        marked[1].contains("<td class=\"n\">3</td><td>fetch</td>"),
        "{extra}"
    );
    assert!(extra.contains("<h3>this run"), "{extra}");
    assert!(extra.contains("<h3>run2.json"), "{extra}");
    // s-answer: the steps agree, so the answer rows are marked.
    let answer = block("s-answer");
    assert_eq!(
        answer
            .matches("<tr class=\"div\"><td></td><td>answer</td>")
            .count(),
        2,
        "{answer}"
    );
    // Everything else on the page is as without --explain (the reproduce command aside).
    let strip = |p: &str| -> String {
        let p = p.replace(explain_style(), "");
        let p = match p.find("<section id=\"explanations\">") {
            Some(a) => {
                let b = a + p[a..].find("</section>\n").unwrap() + "</section>\n".len();
                format!("{}{}", &p[..a], &p[b..])
            }
            None => p,
        };
        p[..p.find("<h2>Reproduce locally</h2>").unwrap()].to_string()
    };
    assert_eq!(strip(&page), strip(&plain));
}

/// The styles only a page with explanations carries.
fn explain_style() -> &'static str {
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:.8rem}.pair h3{font-size:1rem;margin:.4rem 0}tr.div td{background:#fff1e5}tr.div td:first-child{border-left:3px solid #cf222e}\n@media (max-width:40rem){.pair{grid-template-columns:1fr}}\n"
}

#[test]
fn a_run_of_several_tau2_domains_is_explained_under_the_keys_the_gate_names() {
    // Task 7 of airline and of retail are two scenarios once a run holds both domains: the gate names
    // the regression `retail/task-7`, and the explanation must find it under that key.
    let dir = scratch();
    let fixture: Value = read_json(&common::file(
        "tests/fixtures/formats/tau/tau2_airline.json",
    ));
    // Trial 0 of the fixture is clean; trial 1 fires unrecovered_tool_error.
    let with = |domain: &str, trial: usize| {
        let mut doc = fixture.clone();
        doc["info"]["environment_info"]["domain_name"] = json!(domain);
        let kept = doc["simulations"][trial].clone();
        doc["simulations"] = json!([kept]);
        doc.to_string()
    };
    for (run, retail_trial) in [("base1", 0), ("base2", 0), ("cand", 1)] {
        let folder = dir.path().join(run);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("airline.json"), with("airline", 0)).unwrap();
        std::fs::write(folder.join("retail.json"), with("retail", retail_trial)).unwrap();
    }
    let band = faultgate_in(
        dir.path(),
        &["baseline", "base1", "base2", "--out", "band.json"],
    );
    assert_eq!(band.status.code(), Some(0), "{}", stderr(&band));
    let out = faultgate_in(
        dir.path(),
        &[
            "check",
            "cand",
            "--band",
            "band.json",
            "--json",
            "report.json",
            "--explain",
            "base1",
            "base2",
        ],
    );
    // One trace of two failed: within the noise two baseline runs allow, so the gate passes.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["gate"]["regressions"], json!(["retail/task-7"]));
    let explanations = report["explanations"].as_array().expect("explanations");
    assert_eq!(explanations.len(), 1, "{}", stderr(&out));
    let e = &explanations[0];
    assert_eq!(e["scenario"], "retail/task-7");
    assert_eq!(e["trace_id"], "task-7#1@retail");
    assert_eq!(e["baseline_run"], "base1");
    assert_eq!(e["check"], "unrecovered_tool_error");
    assert!(!stderr(&out).contains("absent from it"), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("\n  retail/task-7 (unrecovered_tool_error): "),
        "{text}"
    );
}
