//! `check --workflow` and `baseline --workflow` end to end through the binary: the OTLP multi-agent
//! traces in `examples/workflow/otlp/` give the reasons `conform` gives on the equivalent trajectories,
//! the check joins the selection only when asked, and a workflow violation is a hard block at the gate.

use crate::common;
use crate::common::ScratchDir;

use std::collections::BTreeMap;
use std::path::Path;

use common::{faultgate, read_json};
use faultgate::redact::Redaction;
use serde_json::{Value, json};

const SPEC: &str = "examples/workflow/spec.json";
const STYLES: [&str; 2] = ["nested", "agents_sdk"];
const SCENARIOS: [&str; 7] = [
    "conforms",
    "skipped",
    "late_checkpoint",
    "broken_contract",
    "propagated",
    "verified",
    "uncontracted",
];

fn scratch(name: &str) -> ScratchDir {
    ScratchDir::named(&format!("wfcheck-{name}"))
}

fn otlp(style: &str) -> String {
    format!("examples/workflow/otlp/{style}.json")
}

/// scenario -> (detected, reason) of the workflow check in a `check --json` report.
fn workflow_results(report: &Value) -> BTreeMap<String, (bool, String)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["check"] == "workflow")
        .map(|r| {
            (
                r["scenario"].as_str().unwrap_or_default().to_string(),
                (
                    r["detected"].as_bool().unwrap_or_default(),
                    r["reason"].as_str().unwrap_or_default().to_string(),
                ),
            )
        })
        .collect()
}

/// stem -> (verdict is BLOCK, `code: message` of every reason and warning) from `conform --json`.
fn conform_results(dir: &Path) -> BTreeMap<String, (bool, Vec<String>)> {
    let out = dir.join("conform.json");
    let mut args = vec![
        "conform".to_string(),
        SPEC.to_string(),
        "--json".to_string(),
        out.to_string_lossy().into_owned(),
    ];
    args.extend(
        SCENARIOS
            .iter()
            .map(|s| format!("examples/workflow/{s}.jsonl")),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(faultgate(&args).status.code(), Some(1));
    let report = read_json(&out);
    report["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            let stem = Path::new(f["path"].as_str().unwrap_or_default())
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut lines = Vec::new();
            for key in ["reasons", "warnings"] {
                for r in f[key].as_array().expect("findings") {
                    lines.push(format!(
                        "{}: {}",
                        r["code"].as_str().unwrap_or_default(),
                        r["message"].as_str().unwrap_or_default()
                    ));
                }
            }
            (stem, (f["verdict"] == "BLOCK", lines))
        })
        .collect()
}

fn code(line: &str) -> &str {
    line.split_once(": ").map_or(line, |(code, _)| code)
}

#[test]
fn otlp_multi_agent_traces_give_the_reason_codes_of_the_trajectories() {
    let dir = scratch("codes");
    let expected = conform_results(&dir);
    assert_eq!(expected.len(), SCENARIOS.len());
    for style in STYLES {
        let out = dir.join(format!("{style}.json"));
        let run = faultgate(&[
            "check",
            &otlp(style),
            "--workflow",
            SPEC,
            "--json",
            out.to_str().expect("utf-8 path"),
        ]);
        assert_eq!(run.status.code(), Some(1), "{style}: four traces block");
        let got = workflow_results(&read_json(&out));
        assert_eq!(got.len(), SCENARIOS.len(), "{style}");
        for (scenario, (blocks, lines)) in &expected {
            let (detected, reason) = &got[scenario];
            assert_eq!(detected, blocks, "{style}/{scenario}: {reason}");
            let want_codes: Vec<&str> = if lines.is_empty() {
                vec!["trajectory-conforms"]
            } else {
                lines.iter().map(|l| code(l)).collect()
            };
            // Findings are joined with "; ", which messages may contain too: find each code in turn.
            let mut rest = reason.as_str();
            for want in &want_codes {
                let at = rest
                    .find(*want)
                    .unwrap_or_else(|| panic!("{style}/{scenario}: no {want} in {reason}"));
                rest = &rest[at + want.len()..];
            }
            assert!(
                reason.starts_with(want_codes[0]),
                "{style}/{scenario}: {reason}"
            );
            // The traces record the same events in the same order, so where the trajectory numbers its
            // events 1, 2, 3, ... even the messages agree (skipped.jsonl jumps from seq 4 to 6).
            if scenario != "skipped" && !lines.is_empty() {
                assert_eq!(reason, &lines.join("; "), "{style}/{scenario}");
            }
        }
    }
}

/// The check reads a JSON-lines trajectory's handoffs with both their ends, so it finds what `conform`
/// finds on the same file: no handoff from the run's first agent that the trajectory never made.
#[test]
fn trajectories_give_the_findings_of_conform() {
    let dir = scratch("trajectories");
    let expected = conform_results(&dir);
    let out = dir.join("trajectories.json");
    let mut args = vec![
        "check",
        "--workflow",
        SPEC,
        "--json",
        out.to_str().expect("utf-8 path"),
    ];
    let inputs: Vec<String> = SCENARIOS
        .iter()
        .map(|s| format!("examples/workflow/{s}.jsonl"))
        .collect();
    args.extend(inputs.iter().map(String::as_str));
    assert_eq!(faultgate(&args).status.code(), Some(1));
    let report = read_json(&out);
    for r in report["results"].as_array().expect("results") {
        if r["check"] != "workflow" {
            continue;
        }
        let stem = r["trace_id"].as_str().expect("trace id");
        let (blocks, lines) = &expected[stem];
        let reason = r["reason"].as_str().expect("reason");
        assert_eq!(r["detected"].as_bool(), Some(*blocks), "{stem}: {reason}");
        if lines.is_empty() {
            assert_eq!(reason, "trajectory-conforms", "{stem}");
        } else if stem != "skipped" {
            assert_eq!(reason, lines.join("; "), "{stem}");
        } else {
            let codes: Vec<&str> = reason.split("; ").map(code).collect();
            let want: Vec<&str> = lines.iter().map(|l| code(l)).collect();
            assert_eq!(codes, want, "{stem}: {reason}");
        }
    }
}

#[test]
fn workflow_joins_the_selection_last_only_with_a_spec() {
    let dir = scratch("selection");
    let plain = dir.join("plain.json");
    let run = faultgate(&[
        "check",
        &otlp("nested"),
        "--json",
        plain.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(run.status.code(), Some(0));
    let checks = read_json(&plain)["checks"].clone();
    assert!(
        !checks
            .as_array()
            .expect("checks")
            .contains(&json!("workflow"))
    );

    let with = dir.join("with.json");
    faultgate(&[
        "check",
        &otlp("nested"),
        "--workflow",
        SPEC,
        "--json",
        with.to_str().expect("utf-8 path"),
    ]);
    let mut expected = checks.as_array().expect("checks").clone();
    expected.push(json!("workflow"));
    assert_eq!(read_json(&with)["checks"], Value::Array(expected));

    let alone = faultgate(&["check", &otlp("nested"), "--check", "workflow"]);
    assert_eq!(alone.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&alone.stderr),
        "faultgate: nothing to run: workflow needs --workflow spec.json\n"
    );
}

#[test]
fn an_unusable_spec_is_one_line_and_exit_2() {
    let dir = scratch("badspec");
    let spec = dir.join("spec.json");
    std::fs::write(&spec, "{}").expect("spec written");
    let run = faultgate(&[
        "check",
        &otlp("nested"),
        "--workflow",
        spec.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("spec.json") && stderr.contains("unusable spec"),
        "{stderr}"
    );
    assert!(run.stdout.is_empty());
}

/// An OTLP file holding only the traces of these scenarios.
fn subset(style: &str, keep: &[&str], to: &Path) {
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(otlp(style)).expect("fixture")).expect("OTLP JSON");
    let spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .expect("spans");
    let scenario_of = |span: &Value| {
        span["attributes"]
            .as_array()
            .and_then(|attrs| attrs.iter().find(|a| a["key"] == "faultgate.scenario"))
            .and_then(|a| a["value"]["stringValue"].as_str())
            .map(str::to_string)
    };
    let kept_traces: Vec<Value> = spans
        .iter()
        .filter(|s| scenario_of(s).is_some_and(|k| keep.contains(&k.as_str())))
        .map(|s| s["traceId"].clone())
        .collect();
    spans.retain(|s| kept_traces.contains(&s["traceId"]));
    std::fs::write(to, serde_json::to_vec(&doc).expect("serialised")).expect("written");
}

#[test]
fn a_workflow_violation_is_a_hard_block_at_the_gate() {
    let dir = scratch("gate");
    let band = dir.join("band.json");
    let baseline = faultgate(&[
        "baseline",
        &otlp("nested"),
        &otlp("agents_sdk"),
        "--workflow",
        SPEC,
        "--out",
        band.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(baseline.status.code(), Some(0), "{baseline:?}");
    assert!(
        read_json(&band)["checks"]
            .as_array()
            .expect("checks")
            .contains(&json!("workflow"))
    );

    // The candidate is a baseline run itself: its clean rate sits in the band, yet its four workflow
    // violations fail the gate.
    let report = dir.join("report.json");
    let run = faultgate(&[
        "check",
        &otlp("nested"),
        "--workflow",
        SPEC,
        "--band",
        band.to_str().expect("utf-8 path"),
        "--json",
        report.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(run.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("gate: FAIL · clean rate 0.43 vs band [0.43, 0.43]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\ngate: FAIL · workflow violation in 4 trace(s) (hard block)\n"),
        "{stdout}"
    );
    let gate = read_json(&report)["gate"].clone();
    assert_eq!(gate["verdict"], "FAIL");
    assert_eq!(gate["clean_rate"], json!(3.0 / 7.0));
    assert_eq!(
        gate["workflow_violations"].as_array().map(Vec::len),
        Some(4)
    );

    // Only the conforming traces: nothing blocks, and the same rate passes.
    let clean = dir.join("clean.json");
    subset("nested", &["conforms", "verified", "uncontracted"], &clean);
    let report = dir.join("clean_report.json");
    let run = faultgate(&[
        "check",
        clean.to_str().expect("utf-8 path"),
        "--workflow",
        SPEC,
        "--band",
        band.to_str().expect("utf-8 path"),
        "--json",
        report.to_str().expect("utf-8 path"),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("hard block"), "{stdout}");
    let gate = read_json(&report)["gate"].clone();
    assert_eq!(gate["verdict"], "PASS");
    assert_eq!(gate["workflow_violations"], json!([]));
}

#[test]
fn reasons_go_through_the_masker_and_reruns_are_byte_identical() {
    let dir = scratch("redact");
    // A value passed on unverified through two hops, naming a person: the reason quotes the value.
    let email = "jane.doe@example.com";
    let payload = json!({"contact": email}).to_string();
    let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
    let span = |id: &str, parent: Option<&str>, name: &str, start: u64, attrs: Vec<Value>| {
        let mut s = json!({
            "traceId": "0123456789abcdef0123456789abcdef", "spanId": id, "name": name,
            "startTimeUnixNano": start.to_string(), "endTimeUnixNano": "1783739700000000000",
            "attributes": attrs,
        });
        if let Some(p) = parent {
            s["parentSpanId"] = json!(p);
        }
        s
    };
    let agent = |name: &str| {
        vec![
            attr("gen_ai.operation.name", "invoke_agent"),
            attr("gen_ai.agent.name", name),
            attr("faultgate.handoff.payload", &payload),
        ]
    };
    let spans = vec![
        span(
            "aaaaaaaaaaaaaaaa",
            None,
            "invoke_agent intake",
            1783739640000000000,
            vec![
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", "intake"),
                attr("faultgate.scenario", "contact"),
            ],
        ),
        span(
            "bbbbbbbbbbbbbbbb",
            Some("aaaaaaaaaaaaaaaa"),
            "invoke_agent crm",
            1783739641000000000,
            agent("crm"),
        ),
        span(
            "cccccccccccccccc",
            Some("bbbbbbbbbbbbbbbb"),
            "invoke_agent mailer",
            1783739642000000000,
            agent("mailer"),
        ),
    ];
    let trace = dir.join("trace.json");
    let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
    std::fs::write(&trace, doc.to_string()).expect("written");
    let spec = dir.join("spec.json");
    std::fs::write(
        &spec,
        json!({"handoff_contracts": [
            {"from_agent": "intake", "to_agent": "crm", "required_fields": ["contact"]},
            {"from_agent": "crm", "to_agent": "mailer", "required_fields": ["contact"]}
        ]})
        .to_string(),
    )
    .expect("written");

    let run_once = |name: &str| {
        let out = dir.join(name);
        let run = faultgate(&[
            "check",
            trace.to_str().expect("utf-8 path"),
            "--workflow",
            spec.to_str().expect("utf-8 path"),
            "--check",
            "workflow",
            "--json",
            out.to_str().expect("utf-8 path"),
        ]);
        assert_eq!(run.status.code(), Some(1));
        std::fs::read(out).expect("report written")
    };
    let first = run_once("a.json");
    assert_eq!(first, run_once("b.json"), "byte-identical reruns");
    let results = workflow_results(&serde_json::from_slice(&first).expect("JSON"));
    let (detected, reason) = &results["contact"];
    assert!(detected);
    // The reason quotes the value, so it goes out through the default masker like every reason.
    let raw = format!(
        "unverified-claim-propagated-2-hops: field 'contact'='{email}' entered unverified at \
intake->crm (seq 1) and was passed on unverified through 2 handoffs, last at crm->mailer (seq 2); no agent \
verified it at any hop"
    );
    assert_eq!(reason, &Redaction::Builtin.mask(&raw));
}
