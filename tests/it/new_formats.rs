//! The formats 0.4.1 refused, read end to end from fixtures built from each format's public source
//! (`tests/fixtures/<format>/SOURCE.md`): OTLP protobuf (the same export as OTLP/JSON gives the same
//! tables and verdicts), any-agent traces, LangSmith SDK batches and OpenInference span dumps.

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::Array;
use faultgate::ingest::{Format, read_bytes, read_path};
use faultgate::table::TraceBatch;
use faultgate::table::schema::*;
use serde_json::{Value, json};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &str) -> (Format, TraceBatch) {
    read_path(&fixture(path), Format::Auto).unwrap_or_else(|e| panic!("{e}"))
}

/// A payload as JSON when it is JSON, else as text.
fn payload(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// What the tables say about one trace.
#[derive(Debug, PartialEq)]
struct Facts {
    trace_id: String,
    prompt: String,
    answer: String,
    scenario: String,
    tokens: (Option<i64>, Option<i64>),
    steps: Vec<(String, Value, Value)>,
}

fn facts(batch: &TraceBatch) -> Vec<Facts> {
    (0..batch.len())
        .map(|t| {
            let int = |name: &str| {
                let col = batch.trace_i64(name);
                col.is_valid(t).then(|| col.value(t))
            };
            let text = |name: &str| batch.trace_str(name).value(t).to_string();
            Facts {
                trace_id: text(TRACE_ID),
                prompt: text(TRACE_PROMPT),
                answer: text(TRACE_ANSWER),
                scenario: text(TRACE_SCENARIO),
                tokens: (int(TRACE_INPUT_TOKENS), int(TRACE_OUTPUT_TOKENS)),
                steps: batch
                    .step_rows(t)
                    .map(|row| {
                        (
                            batch.step_str(STEP_TOOL).value(row).to_string(),
                            payload(batch.step_str(STEP_ARGUMENTS).value(row)),
                            payload(batch.step_str(STEP_RESULT).value(row)),
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

/// `check`'s exit code and the JSON report's verdicts (trace, scenario, check, detected, reason).
fn verdicts(file: &Path, extra: &[&str]) -> (i32, Vec<Value>) {
    let dir = crate::common::ScratchDir::named("new-formats");
    let report = dir.join(format!(
        "{}.json",
        file.file_name().unwrap().to_string_lossy()
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .arg("check")
        .arg(file)
        .args(extra)
        .arg("--json")
        .arg(&report)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (code, doc["results"].as_array().unwrap().clone())
}

#[test]
fn otlp_protobuf_gives_the_tables_and_verdicts_of_its_json_form() {
    for (json_file, proto_file, format) in [
        (
            "examples/traces.json",
            "tests/fixtures/otlp_proto/traces.pb",
            Format::Otlp,
        ),
        (
            "tests/fixtures/formats/openinference_batches.json",
            "tests/fixtures/otlp_proto/openinference.binpb",
            Format::Openinference,
        ),
    ] {
        let (json_format, json_batch) = read(json_file);
        let (proto_format, proto_batch) = read(proto_file);
        assert_eq!(json_format, format);
        assert_eq!(proto_format, Format::OtlpProto);
        let want = facts(&json_batch);
        assert!(want.iter().any(|f| !f.steps.is_empty()), "{json_file}");
        assert_eq!(facts(&proto_batch), want, "{proto_file}");
        let (json_code, json_verdicts) = verdicts(&fixture(json_file), &[]);
        let (proto_code, proto_verdicts) = verdicts(&fixture(proto_file), &[]);
        assert_eq!(proto_verdicts, json_verdicts, "{proto_file}");
        assert_eq!(proto_code, json_code, "{proto_file}");
    }
    // examples/traces.json has a search loop and an abstention: the protobuf form fails the same way.
    let (code, results) = verdicts(&fixture("tests/fixtures/otlp_proto/traces.pb"), &[]);
    assert_eq!(code, 1);
    let fired: Vec<&str> = results
        .iter()
        .filter(|r| r["detected"] == json!(true))
        .map(|r| r["check"].as_str().unwrap())
        .collect();
    assert_eq!(fired, ["search_loop", "abstention"]);
}

#[test]
fn otlp_protobuf_is_recognised_by_its_bytes_and_refused_when_broken() {
    let bytes = std::fs::read(fixture("tests/fixtures/otlp_proto/traces.pb")).unwrap();
    // No telling extension: the bytes are sniffed.
    let (format, batch) = read_bytes(Path::new("export.dat"), &bytes, Format::Auto).unwrap();
    assert_eq!((format, batch.len()), (Format::OtlpProto, 5));
    // A cut file frames no longer, and does not decode whole: a one-line error, no panic.
    let cut = &bytes[..bytes.len() - 3];
    let Err(err) = read_bytes(Path::new("export.pb"), cut, Format::Auto) else {
        panic!("a cut protobuf file must be refused");
    };
    assert!(
        err.to_string().contains("not an OTLP protobuf message"),
        "{err}"
    );
    // Sniffing never takes JSON, nor bytes that merely start like protobuf.
    assert!(read_bytes(Path::new("x.dat"), b"\n{\"a\": 1}\n", Format::Auto).is_err());
    assert!(read_bytes(Path::new("x.dat"), &cut[..40], Format::Auto).is_err());
    // Forcing protobuf on JSON is refused.
    let json = std::fs::read(fixture("examples/traces.json")).unwrap();
    assert!(read_bytes(Path::new("t.json"), &json, Format::OtlpProto).is_err());
}

#[test]
fn any_agent_openinference_flavour_reads_its_tool_spans() {
    let (format, batch) = read("tests/fixtures/any_agent/openai_openinference.json");
    assert_eq!(format, Format::AnyAgent);
    let facts = facts(&batch);
    assert_eq!(facts.len(), 1);
    let trace = &facts[0];
    assert_eq!(
        trace.prompt,
        "what's a good brewery near Aspinwall PA? Write the answer to /projects/hi.txt"
    );
    let tools: Vec<&str> = trace.steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(tools, ["search_web", "write_file"]);
    assert_eq!(
        trace.steps[0].1,
        json!({"query": "brewery near Aspinwall PA"})
    );
    assert!(!trace.answer.is_empty());
    let (code, results) = verdicts(
        &fixture("tests/fixtures/any_agent/openai_openinference.json"),
        &[],
    );
    assert_eq!(code, 0);
    assert!(results.iter().all(|r| r["detected"] == json!(false)));
}

/// The GenAI flavour's trace ids are integers past 64 bits: read exactly, as OTLP hex.
#[test]
fn any_agent_genai_flavour_reads_end_to_end() {
    let (format, batch) = read("tests/fixtures/any_agent/tinyagent.json");
    assert_eq!(format, Format::AnyAgent);
    let facts = facts(&batch);
    assert_eq!(facts[0].trace_id, "9707d5fd6d4a546d47757044c6127e04");
    let tools: Vec<&str> = facts[0].steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(tools, ["get_current_time", "write_file", "final_answer"]);
    assert!(
        facts[0].prompt.starts_with("Find what year it is"),
        "{}",
        facts[0].prompt
    );
    assert!(
        facts[0].answer.contains("Write the year to a file."),
        "{}",
        facts[0].answer
    );
    assert_eq!(
        facts[0].tokens,
        (Some(328 + 414 + 449 + 178), Some(16 + 14 + 43 + 83))
    );
}

#[test]
fn langsmith_sdk_batches_merge_updates_into_their_runs() {
    let (format, batch) = read("tests/fixtures/langsmith_sdk/batches.jsonl");
    assert_eq!(format, Format::LangsmithSdk);
    let facts = facts(&batch);
    assert_eq!(facts.len(), 2);
    // The SDK's own wrap_openai recording: one llm run, created then patched with its outputs.
    assert_eq!(facts[0].trace_id, "d0d84d31-923d-4cb5-94a8-40a0a0087578");
    assert_eq!(facts[0].prompt, "howdy");
    assert_eq!(facts[0].answer, "Howdy! How can I assist you today?");
    assert_eq!(facts[0].tokens, (Some(9), Some(9)));
    assert!(facts[0].steps.is_empty());
    // An agent run with a tool run: created in one batch, completed in the next.
    assert_eq!(facts[1].prompt, "What is the status of order o-7?");
    assert_eq!(facts[1].answer, "Order o-7 has shipped.");
    assert_eq!(facts[1].tokens, (Some(140), Some(27)));
    assert_eq!(
        facts[1].steps,
        [(
            "lookup_order".to_string(),
            json!({"order_id": "o-7"}),
            json!({"status": "shipped"})
        )]
    );
}

#[test]
fn langsmith_js_sdk_updates_without_ids_merge_into_their_runs() {
    // The JS SDK's own wrap_openai recording: its patch carries no id, only trace_id and dotted_order.
    let file = "tests/fixtures/langsmith_sdk/js_wrap_openai_default.json";
    let (format, batch) = read(file);
    assert_eq!(format, Format::LangsmithSdk);
    assert_eq!(
        facts(&batch),
        [Facts {
            trace_id: "dc34609e-3eeb-459d-bc2a-6fedb01d2e6e".into(),
            prompt: "howdy".into(),
            answer: "Howdy! How can I assist you today?".into(),
            // No scenario in the run: the key is the hash of the prompt.
            scenario: "p-0f1128046248".into(),
            tokens: (Some(9), Some(9)),
            steps: Vec::new(),
        }]
    );
    // Created at 1728803137170 ms, ended at 1728803138285 ms (the patch's end time).
    assert_eq!(batch.trace_f64(TRACE_LATENCY_MS).value(0), 1115.0);
    let (code, results) = verdicts(&fixture(file), &[]);
    assert_eq!(code, 0);
    assert!(results.iter().all(|r| r["detected"] == json!(false)));
}

#[test]
fn langsmith_sdk_tool_calls_without_tool_runs_are_steps() {
    // The same agent, traced by the OpenAI wrapper alone: the tool ran outside any run.
    let text =
        std::fs::read_to_string(fixture("tests/fixtures/langsmith_sdk/batches.jsonl")).unwrap();
    let without_tool: String = text
        .lines()
        .map(|line| {
            let mut batch: Value = serde_json::from_str(line).unwrap();
            for key in ["post", "patch"] {
                if let Some(runs) = batch.get_mut(key).and_then(Value::as_array_mut) {
                    runs.retain(|r| r["id"] != json!("7f3e7a52-1c0e-4f4a-9a51-2b8f3c1d0a03"));
                }
            }
            batch.to_string() + "\n"
        })
        .collect();
    let (_, batch) =
        read_bytes(Path::new("b.jsonl"), without_tool.as_bytes(), Format::Auto).unwrap();
    assert_eq!(
        facts(&batch)[1].steps,
        [(
            "lookup_order".to_string(),
            json!({"order_id": "o-7"}),
            json!({"status": "shipped"})
        )]
    );
}

#[test]
fn openinference_span_dumps_read_as_their_otlp_form_would() {
    let (format, batch) = read("tests/fixtures/openinference_spans/spec_spans.jsonl");
    assert_eq!(format, Format::OpeninferenceSpans);
    let facts = facts(&batch);
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].trace_id, "ed7b336d-e71a-46f0-a334-5f2e87cb6cfc");
    assert_eq!(facts[0].prompt, "What is the weather in Paris?");
    assert_eq!(facts[0].answer, "It is 18°C and sunny in Paris.");
    assert_eq!(facts[0].tokens, (Some(41), Some(12)));
    assert_eq!(
        facts[0].steps,
        [(
            "get_weather".to_string(),
            json!({"city": "Paris"}),
            json!({"temp_c": 18, "sky": "sunny"})
        )]
    );
}

#[test]
fn vercel_ai_sdk_spans_read_prompt_answer_and_tokens() {
    let (format, batch) = read("tests/fixtures/openinference_spans/vercel_ai_sdk.json");
    assert_eq!(format, Format::OpeninferenceSpans);
    let facts = facts(&batch);
    let haiku = facts
        .iter()
        .find(|f| f.trace_id == "700d5f98fe2420adcf6ab0822f7a323c")
        .expect("the generateText trace");
    assert_eq!(haiku.prompt, "Write a haiku about programming.");
    assert!(
        haiku.answer.starts_with("Lines of code align"),
        "{}",
        haiku.answer
    );
    let chat = facts
        .iter()
        .find(|f| f.trace_id == "673a889f59126f8b4c90dce5a1f99368")
        .expect("the multi-turn trace");
    assert_eq!(chat.prompt, "And what is 3 + 3?");
    assert_eq!(chat.answer, "3 + 3 equals 6.");
}
