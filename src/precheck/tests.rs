//! Every row of docs/compatibility.md §5.2, the policy warning and the tools-not-read warning, each
//! firing and not firing, on traces built span by span.

use serde_json::{Value, json};

use super::*;
use crate::table::record::{Attrs, SpanRecord, TraceRecord};

const TRACE: &str = "aaaaaaaaaaaaaaaa1111";

fn span(
    id: &str,
    parent: Option<&str>,
    name: &str,
    start: i64,
    attrs: Value,
) -> SpanRecord<'static> {
    SpanRecord {
        span_id: id.to_string().into(),
        parent_id: parent.map(|p| p.to_string().into()),
        name: name.to_string().into(),
        start_ns: start,
        end_ns: start + 10,
        attrs: Attrs::from_map(match attrs {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        }),
        ..SpanRecord::default()
    }
}

fn root() -> SpanRecord<'static> {
    span(
        "r1",
        None,
        "invoke_agent",
        100,
        json!({
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": r#"[{"role": "user", "parts": [{"type": "text", "content": "Find the order"}]}]"#,
            "gen_ai.output.messages": r#"[{"role": "assistant", "parts": [{"type": "text", "content": "Order 7 shipped"}]}]"#,
        }),
    )
}

fn tool(id: &str, start: i64, name: &str) -> SpanRecord<'static> {
    span(
        id,
        Some("r1"),
        &format!("execute_tool {name}"),
        start,
        json!({
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.arguments": "{\"q\": 1}",
            "gen_ai.tool.call.result": "found",
        }),
    )
}

fn trace(spans: Vec<SpanRecord<'static>>) -> TraceRecord<'static> {
    TraceRecord {
        trace_id: TRACE.into(),
        agent: "agent".into(),
        spans,
        skipped_attributes: 0,
        resource: Default::default(),
    }
}

fn clean() -> Vec<SpanRecord<'static>> {
    vec![root(), tool("t1", 110, "search"), tool("t2", 120, "fetch")]
}

fn options() -> Options {
    Options {
        format: Format::Auto,
        sample: 5,
        needs_json_results: false,
    }
}

fn run_with(traces: &[TraceRecord<'static>], options: &Options) -> Precheck {
    precheck_traces(traces, options.format, options)
}

fn run(spans: Vec<SpanRecord<'static>>) -> Precheck {
    run_with(&[trace(spans)], &options())
}

fn messages(p: &Precheck) -> Vec<(Level, &str)> {
    p.issues
        .iter()
        .map(|i| (i.level, i.message.as_str()))
        .collect()
}

#[test]
fn a_clean_trace_has_no_issue() {
    let p = run(clean());
    assert_eq!(messages(&p), vec![]);
    assert_eq!(
        (p.format.as_str(), p.total, p.checked, p.steps),
        ("otlp", 1, 1, 2)
    );
    assert_eq!(p.errors(), 0);
    assert_eq!(
        p.render(),
        "precheck: OK · format otlp · checked 1 of 1 traces · 2 tool steps read · 0 error(s), 0 warning(s)\n"
    );
}

#[test]
fn duplicate_span_ids_are_errors_sorted_one_per_id() {
    let mut spans = clean();
    spans.push(tool("t2", 130, "fetch"));
    spans.push(tool("t1", 140, "search"));
    spans.push(tool("t1", 150, "search"));
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![
            (Level::Error, "duplicate span id t1"),
            (Level::Error, "duplicate span id t2"),
        ]
    );
    assert!(p.errors() > 0);
}

#[test]
fn a_trace_without_a_root_span_is_warned() {
    let mut spans = clean();
    spans[0].parent_id = Some("outside".into());
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![
            (
                Level::Warning,
                "no root span in the export: prompt and answer are read from child spans"
            ),
            (
                Level::Warning,
                "1 span(s) point at 1 parent(s) not in the export (outside)"
            ),
        ]
    );
    assert_eq!(p.errors(), 0);
}

#[test]
fn several_root_spans_are_warned() {
    let mut spans = clean();
    spans[2].parent_id = None;
    spans[1].parent_id = None;
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![(Level::Warning, "3 root spans; the first is used as the run")]
    );
}

#[test]
fn dangling_parents_name_the_first_three_sorted() {
    let mut spans = clean();
    for (i, parent) in ["p4", "p2", "p3", "p1", "p2"].iter().enumerate() {
        spans.push(span(&format!("x{i}"), Some(parent), "chat", 130, json!({})));
    }
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![(
            Level::Warning,
            "5 span(s) point at 4 parent(s) not in the export (p1, p2, p3)"
        )]
    );
}

#[test]
fn missing_and_backwards_timestamps_are_errors_in_span_order() {
    let mut spans = clean();
    spans[1].start_ns = 0;
    spans[2].end_ns = spans[2].start_ns - 1;
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![
            (
                Level::Error,
                "span t1 (execute_tool search): missing start time"
            ),
            (
                Level::Error,
                "span t2 (execute_tool fetch): ends before it starts"
            ),
        ]
    );
    assert!(p.errors() > 0);
}

#[test]
fn formats_without_times_take_a_missing_time_as_a_note_not_an_error() {
    let mut spans = clean();
    for span in &mut spans {
        span.start_ns = 0;
        span.end_ns = 0;
    }
    let traces = [trace(spans)];
    for format in [Format::TauBench, Format::SweAgent, Format::MultiAgent] {
        let p = precheck_traces(&traces, format, &options());
        assert_eq!(messages(&p), vec![], "{format:?}");
        assert_eq!(
            p.render(),
            format!(
                "note: format {} records no times: latency is not measured\n\
                 precheck: OK · format {} · checked 1 of 1 traces · 2 tool steps read · 0 error(s), 0 warning(s)\n",
                format.name(),
                format.name()
            )
        );
    }
    // The formats that define times keep 0.4.1's error (docs/compatibility.md §5.2).
    let p = precheck_traces(&traces, Format::Langsmith, &options());
    assert_eq!(p.errors(), 3);
    assert_eq!(p.note, None);
}

#[test]
fn formats_without_times_still_refuse_backwards_times_and_note_only_what_is_unmeasured() {
    // A tau2 simulation records its start and end: its latency is measured, so nothing is noted.
    let timed = precheck_traces(&[trace(clean())], Format::TauBench, &options());
    assert_eq!((timed.errors(), timed.note.as_deref()), (0, None));
    let mut spans = clean();
    spans[2].end_ns = spans[2].start_ns - 1;
    let p = precheck_traces(&[trace(spans)], Format::SweAgent, &options());
    assert_eq!(
        messages(&p),
        vec![(
            Level::Error,
            "span t2 (execute_tool fetch): ends before it starts"
        )]
    );
}

#[test]
fn an_unknown_end_time_is_not_backwards() {
    let mut spans = clean();
    spans[1].end_ns = 0;
    assert_eq!(messages(&run(spans)), vec![]);
}

#[test]
fn spans_starting_before_the_root_are_counted() {
    let mut spans = clean();
    spans[1].start_ns = 50;
    spans[2].start_ns = 60;
    spans.sort_by_key(|s| s.start_ns);
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![(Level::Warning, "2 span(s) start before the root span")]
    );
}

#[test]
fn tool_calls_without_a_name_are_errors_by_step() {
    let mut spans = clean();
    spans[2]
        .attrs
        .insert("gen_ai.tool.name".into(), Value::String(String::new()));
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![(Level::Error, "step 2: tool call without a name")]
    );
    assert!(p.errors() > 0);

    // A chat message's tool call without a name reads as the tool `unknown`.
    let chat = span(
        "c1",
        Some("r1"),
        "chat",
        110,
        json!({"gen_ai.output.messages": r#"[{"role": "assistant", "parts": [{"type": "tool_call", "id": "k", "arguments": {"q": 1}}]}]"#}),
    );
    let p = run(vec![root(), chat]);
    assert_eq!(
        messages(&p),
        vec![(Level::Error, "step 1: tool call without a name")]
    );
}

#[test]
fn tool_spans_known_by_name_only_are_warned() {
    let mut spans = clean();
    spans[1].attrs.remove("gen_ai.operation.name");
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![(
            Level::Warning,
            "1 tool span(s) recognised by span name only; set gen_ai.operation.name = execute_tool"
        )]
    );
    assert_eq!(p.steps, 2);
}

#[test]
fn spans_with_tool_attributes_that_are_not_steps_are_warned() {
    let mut spans = clean();
    for (id, name) in [
        ("u1", "tool b"),
        ("u2", "tool a"),
        ("u3", "tool d"),
        ("u4", "tool c"),
    ] {
        let mut s = tool(id, 130, "x");
        s.name = name.into();
        s.attrs
            .insert("gen_ai.operation.name".into(), Value::String("chat".into()));
        spans.push(s);
    }
    // A root carrying tool attributes is not counted: only spans with a parent are.
    spans[0]
        .attrs
        .insert("tool.name".into(), Value::String("x".into()));
    let p = run(spans);
    assert_eq!(
        messages(&p),
        vec![(
            Level::Warning,
            "4 span(s) carry tool attributes but are not read as tool steps (tool a, tool b, tool c); set gen_ai.operation.name = execute_tool"
        )]
    );
}

#[test]
fn native_tool_spans_in_an_openinference_export_are_warned() {
    let mut spans = clean();
    spans[0].attrs.insert(
        "openinference.span.kind".into(),
        Value::String("AGENT".into()),
    );
    let p = run(spans.clone());
    assert_eq!(p.format, "openinference");
    assert_eq!(
        messages(&p),
        vec![(
            Level::Warning,
            "mixed export: native execute_tool spans next to OpenInference spans; steps are read from the tool spans, not from LLM messages (--format otlp reads the same steps)"
        )]
    );

    // Tool spans that carry the OpenInference kind are not mixed.
    for s in &mut spans[1..] {
        s.attrs.insert(
            "openinference.span.kind".into(),
            Value::String("TOOL".into()),
        );
    }
    assert_eq!(messages(&run(spans.clone())), vec![]);

    // Read as plain OTLP, nothing is mixed.
    spans[1].attrs.remove("openinference.span.kind");
    let forced = run_with(
        &[trace(spans)],
        &Options {
            format: Format::Otlp,
            ..options()
        },
    );
    assert_eq!(forced.format, "otlp");
    assert_eq!(messages(&forced), vec![]);
}

#[test]
fn content_prompt_and_answer_warnings() {
    let bare = vec![
        span("r1", None, "invoke_agent", 100, json!({})),
        span(
            "t1",
            Some("r1"),
            "execute_tool search",
            110,
            json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}),
        ),
    ];
    let p = run(bare.clone());
    assert_eq!(
        messages(&p),
        vec![
            (
                Level::Warning,
                "no content attributes (prompt, answer, tool arguments or results): rules see structure only"
            ),
            (
                Level::Warning,
                "no prompt: scenario keys fall back to a hash of the empty string unless faultgate.scenario is set"
            ),
            (
                Level::Warning,
                "no final answer and no faultgate.termination"
            ),
        ]
    );

    // Tool arguments are content; a termination stands in for the answer; a blank prompt is no prompt.
    let mut spans = bare;
    spans[1].attrs.insert(
        "gen_ai.tool.call.arguments".into(),
        Value::String("{}".into()),
    );
    spans[0].attrs.insert(
        "faultgate.termination".into(),
        Value::String("budget".into()),
    );
    spans[0]
        .attrs
        .insert("gen_ai.prompt".into(), Value::String(" \n".into()));
    assert_eq!(
        messages(&run(spans)),
        vec![(
            Level::Warning,
            "no prompt: scenario keys fall back to a hash of the empty string unless faultgate.scenario is set"
        )]
    );
}

#[test]
fn the_policy_warning_needs_json_results() {
    let needs = Options {
        needs_json_results: true,
        ..options()
    };
    let p = run_with(&[trace(clean())], &needs);
    assert_eq!(
        p.issues,
        vec![Issue {
            level: Level::Warning,
            trace: None,
            message: NO_JSON_RESULTS.into()
        }]
    );
    assert_eq!(
        p.issues[0].line(),
        format!("warning  -             {NO_JSON_RESULTS}")
    );

    for result in ["{\"ok\": true}", "[1]", "\"{\\\"ok\\\": 1}\""] {
        let mut spans = clean();
        spans[2].attrs.insert(
            "gen_ai.tool.call.result".into(),
            Value::String(result.into()),
        );
        assert_eq!(
            messages(&run_with(&[trace(spans)], &needs)),
            vec![],
            "{result}"
        );
    }
    // A policy without result / latest rules never warns.
    assert_eq!(messages(&run(clean())), vec![]);
}

#[test]
fn an_export_whose_tools_are_not_read_is_warned() {
    let mut spans = clean();
    for s in &mut spans[1..] {
        s.attrs.clear();
        s.name = "tool call".into();
    }
    let p = run(spans);
    assert_eq!(p.steps, 0);
    assert_eq!(
        messages(&p),
        vec![(
            Level::Warning,
            "1 of the checked traces show tool activity but yield no tool step (trace aaaaaaaaaaaa: span 'tool call' is named like a tool): this export's tools are not read; every structural check will pass"
        )]
    );
    assert_eq!(p.issues[0].trace, None);
    assert_eq!(p.errors(), 0);

    // Spans that show no tool activity at all are not warned about: such a trace has no tools to read.
    let mut plain = clean();
    for s in &mut plain[1..] {
        s.attrs.clear();
        s.name = "plan".into();
    }
    let p = run(plain);
    assert_eq!(p.steps, 0);
    assert_eq!(messages(&p), vec![]);

    // One trace with steps among the checked ones is enough.
    let mut quiet = clean();
    quiet.truncate(1);
    let traces = [trace(quiet), trace(clean())];
    assert_eq!(messages(&run_with(&traces, &options())), vec![]);
}

#[test]
fn the_sample_limits_the_checked_traces() {
    let mut bad = clean();
    bad[1].start_ns = 0;
    let traces: Vec<TraceRecord<'static>> = (0..4)
        .map(|i| {
            if i == 3 {
                trace(bad.clone())
            } else {
                trace(clean())
            }
        })
        .collect();
    let sampled = run_with(
        &traces,
        &Options {
            sample: 2,
            ..options()
        },
    );
    assert_eq!((sampled.checked, sampled.total, sampled.steps), (2, 4, 4));
    assert_eq!(sampled.errors(), 0);
    for sample in [0, -1, 10] {
        let all = run_with(
            &traces,
            &Options {
                sample,
                ..options()
            },
        );
        assert_eq!(
            (all.checked, all.total, all.errors()),
            (4, 4, 1),
            "{sample}"
        );
    }
}

#[test]
fn no_traces_is_an_error_with_the_detected_format() {
    let p = run_with(&[], &options());
    assert_eq!(
        p.render(),
        "error    -             no traces in file\nprecheck: FAILED · format otlp · checked 0 of 0 traces · 0 tool steps read · 1 error(s), 0 warning(s)\n"
    );
}

#[test]
fn the_trace_column_is_twelve_code_points() {
    let issue = Issue::error(Some("éééééééééééééééé"), "m".into());
    assert_eq!(issue.line(), "error    éééééééééééé  m");
    let short = Issue::warning(Some("abc"), "m".into());
    assert_eq!(short.line(), "warning  abc           m");
}

#[test]
fn unreadable_files_are_issues_with_format_unknown() {
    let p = precheck_file(Path::new("./no/such//file.json"), &options());
    assert_eq!(p.format, "unknown");
    assert_eq!(
        p.issues[0].message,
        "cannot parse no/such/file.json: [Errno 2] No such file or directory: 'no/such/file.json'"
    );
    assert!(p.errors() > 0);
}
