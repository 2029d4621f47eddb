//! Traces written by real instrumentation libraries, not by hand: `tests/fixtures/instrumented/`, as
//! `scripts/record_fixtures` records them (pydantic-ai's OpenTelemetry instrumentation,
//! opentelemetry-instrumentation-openai-v2 with opentelemetry-util-genai's agent and tool spans,
//! openinference-instrumentation-openai, and the OpenAI Agents SDK traced by
//! openinference-instrumentation-openai-agents, each against a scripted fake model). Each scenario is
//! recorded twice through the SDK's exporters: the OTLP JSON file exporter's lines (`otlp.jsonl`) and
//! the protobuf bodies the OTLP/HTTP exporter posted (`otlp.binpb`); both must give the verdicts the
//! scenario was scripted for.

use crate::common;

use common::{arg, faultgate, file, read_json, scratch, stderr, stdout};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The library families recorded, and the scenarios each recorded.
const FAMILIES: [(&str, &[&str]); 4] = [
    (
        "pydantic_ai",
        &["clean", "loop", "tool_error", "multi_turn", "server_tool"],
    ),
    ("openai_v2", &["clean", "loop", "tool_error", "multi_turn"]),
    (
        "openinference",
        &["clean", "loop", "tool_error", "multi_turn"],
    ),
    (
        "openai_agents",
        &["clean", "loop", "tool_error", "multi_turn", "server_tool"],
    ),
];

/// The two exports of each recording.
const FORMS: [&str; 2] = ["otlp.jsonl", "otlp.binpb"];

/// The tool steps read from the run whose model used a provider-run web search: the search itself.
/// Neither library writes a `server_tool_call` part for it: pydantic-ai records a `tool_call` part
/// with `builtin: true` and its `tool_call_response` in the same output message, the OpenInference
/// processor of the Agents SDK a tool call of the response's output message; both read as one step.
const SERVER_TOOL_STEPS: usize = 1;

/// One trace of a report: its scenario key and the checks that fired on it.
#[derive(Debug)]
struct Trace {
    scenario: String,
    fired: Vec<String>,
}

/// What `faultgate check` says of one recording.
#[derive(Debug)]
struct Run {
    exit: i32,
    traces: Vec<Trace>,
    report: Value,
    stderr: String,
}

fn fixture(family: &str, scenario: &str, form: &str) -> String {
    format!("tests/fixtures/instrumented/{family}/{scenario}/{form}")
}

/// Every recording of a scenario, in each family that recorded it and in both forms.
fn recordings(scenario: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (family, scenarios) in FAMILIES {
        if scenarios.contains(&scenario) {
            for form in FORMS {
                paths.push(fixture(family, scenario, form));
            }
        }
    }
    assert!(!paths.is_empty(), "no recording of {scenario}");
    paths
}

fn check(path: &str) -> Run {
    let dir = scratch();
    let report_path = dir.path().join("report.json");
    let out = faultgate(&[
        "check",
        "--table",
        "none",
        "--color",
        "never",
        "--json",
        arg(&report_path),
        path,
    ]);
    let report = read_json(&report_path);
    let mut traces: Vec<(String, Trace)> = Vec::new();
    for result in report["results"].as_array().unwrap() {
        let id = result["trace_id"].as_str().unwrap().to_string();
        if traces.last().is_none_or(|(last, _)| *last != id) {
            traces.push((
                id,
                Trace {
                    scenario: result["scenario"].as_str().unwrap().to_string(),
                    fired: Vec::new(),
                },
            ));
        }
        if result["detected"] == Value::Bool(true) {
            let check = result["check"].as_str().unwrap().to_string();
            traces.last_mut().unwrap().1.fired.push(check);
        }
    }
    Run {
        exit: out.status.code().unwrap(),
        traces: traces.into_iter().map(|(_, t)| t).collect(),
        report,
        stderr: stderr(&out),
    }
}

/// The tool steps `precheck` reads from every trace of a file.
fn tool_steps(path: &str) -> usize {
    let out = faultgate(&["precheck", "--sample", "0", path]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("precheck: "))
        .unwrap_or_else(|| panic!("{path}: no precheck summary in {text}"));
    let count = line
        .split(" · ")
        .find_map(|part| part.strip_suffix(" tool steps read"))
        .unwrap_or_else(|| panic!("{path}: {line}"));
    count.parse().unwrap()
}

/// The scenario key of a trace whose root carries neither `faultgate.scenario` nor an agent id: the
/// prompt's digest. Matching it shows the prompt was read from the recorded content.
fn prompt_key(prompt: &str) -> String {
    let digest = common::lower_hex(&Sha256::digest(prompt.as_bytes()));
    format!("p-{}", &digest[..12])
}

/// No input warning: everything the libraries wrote was read as a trace needs it.
fn assert_no_warning(path: &str, run: &Run) {
    assert!(!run.stderr.contains("warning"), "{path}: {}", run.stderr);
    assert!(run.report.get("input_warnings").is_none(), "{path}");
}

#[test]
fn a_clean_run_passes_every_check() {
    for path in recordings("clean") {
        let run = check(&path);
        assert_eq!(run.exit, 0, "{path}: {run:?}");
        assert_eq!(run.traces.len(), 1, "{path}");
        assert_eq!(run.traces[0].fired, Vec::<String>::new(), "{path}");
        assert_eq!(
            run.traces[0].scenario,
            prompt_key("What is the status of order A-1001?"),
            "{path}"
        );
        assert_no_warning(&path, &run);
        assert_eq!(tool_steps(&path), 1, "{path}");
        // The fake model reports 120 input tokens plus 40 per message sent, and 18 output tokens, on
        // each of the run's two calls: pydantic-ai sends the user message, then it with the call and
        // the result; the others send a system message (the Agents SDK's instructions) too. Tokens are summed over the
        // model call spans once (pydantic-ai's run span totals them under other names).
        let measures = run.report["measures"].as_object().unwrap();
        let tokens = measures.values().next().unwrap()["tokens"].as_f64();
        let want = if path.contains("pydantic_ai") {
            (120 + 40 + 18) + (120 + 3 * 40 + 18)
        } else {
            (120 + 2 * 40 + 18) + (120 + 4 * 40 + 18)
        };
        assert_eq!(tokens, Some(f64::from(want)), "{path}");
    }
}

#[test]
fn the_same_call_four_times_is_flagged_by_the_loop_check() {
    for path in recordings("loop") {
        let run = check(&path);
        assert_eq!(run.exit, 1, "{path}: {run:?}");
        assert_eq!(run.traces.len(), 1, "{path}");
        assert_eq!(run.traces[0].fired, ["repeated_call"], "{path}");
        let reason = run.report["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "repeated_call")
            .unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(reason.contains("search_docs"), "{path}: {reason}");
        assert_no_warning(&path, &run);
        assert_eq!(tool_steps(&path), 4, "{path}");
    }
}

#[test]
fn a_tool_error_left_unrecovered_is_flagged() {
    for path in recordings("tool_error") {
        let run = check(&path);
        assert_eq!(run.exit, 1, "{path}: {run:?}");
        assert_eq!(run.traces.len(), 1, "{path}");
        assert_eq!(run.traces[0].fired, ["unrecovered_tool_error"], "{path}");
        assert_no_warning(&path, &run);
        assert_eq!(tool_steps(&path), 1, "{path}");
    }
}

#[test]
fn a_conversation_is_read_as_one_trace_per_turn() {
    let prompts = [
        "What is the status of order A-1001?",
        "Please change the delivery address of A-1001 to Lyon.",
        "How will it be delivered?",
    ];
    for (family, _) in FAMILIES {
        // pydantic-ai's run span carries no input messages, nor does the util-genai agent span when
        // content goes to events only, nor the Agents SDK's agent span, so the prompt is read from
        // the turn's first model call, whose input re-sends the earlier turns: every user text of the
        // conversation so far. The hand-made OpenInference agent span carries the turn's own message
        // as its input.
        let mut want: Vec<String> = (0..prompts.len())
            .map(|turn| match family {
                "openinference" => prompt_key(prompts[turn]),
                _ => prompt_key(&prompts[..=turn].join("\n")),
            })
            .collect();
        want.sort();
        for form in FORMS {
            let path = fixture(family, "multi_turn", form);
            let run = check(&path);
            assert_eq!(run.exit, 0, "{path}: {run:?}");
            let mut scenarios: Vec<String> =
                run.traces.iter().map(|t| t.scenario.clone()).collect();
            scenarios.sort();
            assert_eq!(scenarios, want, "{path}");
            assert!(run.traces.iter().all(|t| t.fired.is_empty()), "{path}");
            // The last turn calls no tool, but its model call re-sends the earlier turns' tool calls
            // and results: those are the earlier traces' steps, so this trace raises no warning.
            assert_no_warning(&path, &run);
            assert_eq!(tool_steps(&path), 2, "{path}");
        }
    }
}

#[test]
fn the_turns_of_a_conversation_share_its_id_in_the_recordings() {
    // What `--unit session` will group by: the conversation id each library wrote on every turn.
    for (family, key) in [
        ("pydantic_ai", "gen_ai.conversation.id"),
        ("openai_v2", "gen_ai.conversation.id"),
        ("openinference", "session.id"),
        ("openai_agents", "session.id"),
    ] {
        let path = file(&fixture(family, "multi_turn", "otlp.jsonl"));
        let text = std::fs::read_to_string(&path).unwrap();
        let mut traces = std::collections::BTreeSet::new();
        for line in text.lines() {
            let doc: Value = serde_json::from_str(line).unwrap();
            for spans in doc["resourceSpans"].as_array().into_iter().flatten() {
                for scope in spans["scopeSpans"].as_array().unwrap() {
                    for span in scope["spans"].as_array().unwrap() {
                        let carries = span["attributes"].as_array().unwrap().iter().any(|kv| {
                            kv["key"] == key && kv["value"]["stringValue"] == "conv-support-7"
                        });
                        if carries {
                            traces.insert(span["traceId"].as_str().unwrap().to_string());
                        }
                    }
                }
            }
        }
        assert_eq!(traces.len(), 3, "{family}: {traces:?}");
    }
}

#[test]
fn a_run_with_a_provider_run_web_search_is_read_without_error() {
    for path in recordings("server_tool") {
        let run = check(&path);
        assert_eq!(run.exit, 0, "{path}: {run:?}");
        assert_eq!(run.traces.len(), 1, "{path}");
        assert_eq!(run.traces[0].fired, Vec::<String>::new(), "{path}");
        assert_eq!(
            run.traces[0].scenario,
            prompt_key("When does the museum of fine arts in Lyon open today?"),
            "{path}"
        );
        assert_no_warning(&path, &run);
        assert_eq!(tool_steps(&path), SERVER_TOOL_STEPS, "{path}");
    }
}

#[test]
fn both_exports_of_a_recording_give_the_same_report() {
    for (family, scenarios) in FAMILIES {
        for scenario in scenarios {
            let json = check(&fixture(family, scenario, "otlp.jsonl"));
            let proto = check(&fixture(family, scenario, "otlp.binpb"));
            assert_eq!(json.report, proto.report, "{family}/{scenario}");
            assert_eq!(json.exit, proto.exit, "{family}/{scenario}");
        }
    }
}
