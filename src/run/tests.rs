//! Tests of a run over files: batches cut into parts, failing steps bounded across files, and
//! traces split across files merged after one read of each.

use serde_json::json;

use super::drive::{Memo, PART_TRACES};
use super::identity::index_files;
use super::read::{read_files, read_groups};
use super::*;
use crate::checks::checks;
use crate::table::record::TraceRecord;
use crate::table::testing::TraceSpec;

fn settings(reasons: Reasons) -> RunSettings {
    RunSettings {
        checks: checks().filter(|c| c.default_enabled()).collect(),
        inputs: SideInputs::default(),
        judge: None,
        redaction: Redaction::Builtin,
        format: Format::Auto,
        keep_raw_scenario: true,
        reasons,
        failing_steps: 0,
        progress: None,
        skip_bad_input: false,
        agent_version: None,
        outcome_score: None,
        slices: None,
        sessions: None,
        links: None,
    }
}

/// Trace `i`: a few shapes in turn, some firing, one with a key and agent that need masking.
fn trace(i: usize) -> TraceRecord<'static> {
    let spec = match i % 4 {
        0 => TraceSpec::new().answer("ok"),
        1 => (0..12).fold(TraceSpec::new(), |t, _| t.step("search", "{}", "[]")),
        2 => TraceSpec::new()
            .root_attr("faultgate.scenario", json!("mail ada@example.com"))
            .step("fetch", "{}", "Error: down"),
        _ => TraceSpec::new()
            .root_attr("gen_ai.usage.input_tokens", json!(7))
            .answer("not found"),
    };
    TraceRecord {
        trace_id: format!("t{i}").into(),
        agent: if i % 4 == 2 {
            "ops bob@example.com".into()
        } else {
            String::new()
        },
        ..spec.build()
    }
}

#[test]
fn a_batch_cut_into_parts_gives_each_trace_the_row_it_gets_alone() {
    let n = 2 * PART_TRACES + 7;
    let traces: Vec<TraceRecord<'static>> = (0..n).map(trace).collect();
    let settings = settings(Reasons::All);
    let whole = run_batch(&TraceBatch::build(&traces), &settings);
    assert_eq!(whole.len(), n);
    for (i, row) in whole.rows().enumerate() {
        let alone = run_batch(&TraceBatch::build(&[trace(i)]), &settings);
        let single = alone.row(0);
        assert_eq!(row.trace_id(), format!("t{i}"));
        assert_eq!(row.trace_id(), single.trace_id());
        assert_eq!(row.scenario(), single.scenario());
        assert_eq!(row.raw_scenario(), single.raw_scenario());
        assert_eq!(row.agent(), single.agent());
        assert_eq!(row.steps(), single.steps());
        assert_eq!(row.measures(), single.measures());
        assert_eq!(
            row.verdicts().collect::<Vec<_>>(),
            single.verdicts().collect::<Vec<_>>()
        );
    }
}

/// What a run keeps of each file, as text: verdict rows, traces without content, unread tools,
/// failing steps and shared parts.
fn kept(results: &[Result<FileResults, InputError>]) -> Vec<String> {
    results
        .iter()
        .map(|r| match r {
            Err(e) => format!("error {e}"),
            Ok(f) => {
                let empty = FileDetails::default();
                let d = f.details.as_deref().unwrap_or(&empty);
                format!(
                    "rows {:?} empty {} unread {:?} steps {:?} parts {:?}",
                    d.batches
                        .iter()
                        .flat_map(|b| b
                            .rows()
                            .map(|r| format!(
                                "{}:{:?}",
                                r.trace_id(),
                                r.verdicts().collect::<Vec<_>>()
                            ))
                            .collect::<Vec<_>>())
                        .collect::<Vec<_>>(),
                    f.without_content,
                    d.unread_tools.traces,
                    d.failing_steps
                        .iter()
                        .map(|s| s.trace_id.as_str())
                        .collect::<Vec<_>>(),
                    d.shared_parts
                        .iter()
                        .map(|p| (p.trace_id.to_string(), p.spans.len()))
                        .collect::<Vec<_>>(),
                )
            }
        })
        .collect()
}

#[test]
fn taking_shared_traces_out_after_the_read_keeps_what_holding_them_while_reading_keeps() {
    let dir = tempfile::tempdir().unwrap();
    // Traces u0..u7 over three files; u1, u4 and u6 are split, and every trace's tool fails, so
    // every trace has failing steps (which a file keeps only so many of).
    let span = |t: usize, k: usize| {
        let trace = format!("u{t}");
        let root = format!("r{t}");
        let id = format!("s{t}-{k}");
        (trace, id, root, k)
    };
    let layout: [&[(usize, usize)]; 3] = [
        &[(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (6, 2)],
        &[(1, 2), (3, 0), (3, 1), (4, 0), (4, 1)],
        &[(4, 2), (5, 0), (5, 1), (6, 0), (6, 1), (7, 0), (7, 1)],
    ];
    let files: Vec<PathBuf> = layout
        .iter()
        .enumerate()
        .map(|(n, spans)| {
            let spans: Vec<(String, String, String, usize)> =
                spans.iter().map(|&(t, k)| span(t, k)).collect();
            let spans: Vec<Span<'_>> = spans
                .iter()
                .map(|(trace, id, root, k)| {
                    if *k == 0 {
                        (
                            trace.as_str(),
                            root.as_str(),
                            None,
                            "agent",
                            10 * *k as i64,
                            None,
                        )
                    } else {
                        let result = if *k == 1 { "Error: down" } else { "[]" };
                        (
                            trace.as_str(),
                            id.as_str(),
                            Some(root.as_str()),
                            "search",
                            10 * *k as i64,
                            Some(result),
                        )
                    }
                })
                .collect();
            let path = dir.path().join(format!("part{n}.json"));
            std::fs::write(&path, export(&spans)).unwrap();
            path
        })
        .collect();
    for limit in [0, 1, 2, 10] {
        let settings = RunSettings {
            failing_steps: limit,
            ..settings(Reasons::All)
        };
        let (refused, shared) = index_files(&files, &settings, 2);
        assert_eq!(shared.len(), 3);
        let options = ReadOptions {
            hold: Some(std::sync::Arc::new(shared)),
            ..read_options(&settings)
        };
        let schema = settings.verdict_schema();
        let want = read_groups(&files, &settings, &options, &schema, 2, refused, None, None);
        let got = read_files(&files, &settings, None);
        assert_eq!(kept(&got), kept(&want), "steps of {limit} failing traces");
        if limit > 0 {
            assert!(
                kept(&want)[0].contains("steps [\"u0\""),
                "{:?}",
                kept(&want)
            );
        }
    }
}

#[test]
fn a_run_over_many_failing_files_keeps_the_steps_of_its_first_failing_traces_only() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..40)
        .map(|n| {
            let (trace, root, tool) = (format!("f{n}"), format!("r{n}"), format!("s{n}"));
            let spans: [Span<'_>; 2] = [
                (&trace, &root, None, "agent", 0, None),
                (
                    &trace,
                    &tool,
                    Some(&root),
                    "search",
                    10,
                    Some("Error: down"),
                ),
            ];
            let path = dir.path().join(format!("f{n:02}.json"));
            std::fs::write(&path, export(&spans)).unwrap();
            path
        })
        .collect();
    for limit in [0, 1, 3, 8] {
        let settings = RunSettings {
            failing_steps: limit,
            ..settings(Reasons::All)
        };
        let kept: Vec<String> = read_files(&files, &settings, None)
            .iter()
            .filter_map(|r| r.as_ref().ok()?.details.as_deref())
            .flat_map(|d| d.failing_steps.iter().map(|s| s.trace_id.clone()))
            .collect();
        // Each file used to keep its own failing trace's steps until every file was read: all
        // 40, whatever the run shows.
        let firsts: Vec<String> = (0..limit).map(|n| format!("f{n}")).collect();
        assert_eq!(kept, firsts);
    }
}

#[test]
fn the_key_memo_gives_each_key_its_own_masked_text_through_one_buffer() {
    let keys = [
        "p-203279939695",
        "p-203279939695",
        "mail ada@example.com",
        "refund",
        "",
        "refund",
    ];
    let mut memo = Memo::default();
    for key in keys {
        let got = memo
            .get(key, |k| Redaction::Builtin.scenario_key_text(k))
            .to_string();
        assert_eq!(got, Redaction::Builtin.scenario_key(key), "{key:?}");
    }
    assert_ne!(
        memo.get("ada@example.com", |k| Redaction::Builtin
            .scenario_key_text(k)),
        "ada@example.com"
    );
}

#[test]
fn keys_agents_and_reasons_leave_masked_and_reasons_follow_the_setting() {
    let traces: Vec<TraceRecord<'static>> = (0..4).map(trace).collect();
    let batch = TraceBatch::build(&traces);
    let all = run_batch(&batch, &settings(Reasons::All));
    let masked = all.row(2);
    assert_eq!(
        masked.scenario(),
        Redaction::Builtin.scenario_key("mail ada@example.com")
    );
    assert_ne!(masked.scenario(), "mail ada@example.com");
    assert_eq!(masked.raw_scenario(), Some("mail ada@example.com"));
    assert_eq!(
        masked.agent(),
        Some(Redaction::Builtin.mask("ops bob@example.com").as_ref())
    );
    assert_eq!(all.row(0).agent(), None);
    for row in all.rows() {
        assert!(row.verdicts().all(|v| v.reason.is_some()));
    }
    // Only fired reasons are kept by default, and nothing else changes.
    let fired = run_batch(&batch, &settings(Reasons::Fired));
    assert!(fired.rows().any(|r| r.failed()));
    for (f, a) in fired.rows().zip(all.rows()) {
        for (fv, av) in f.verdicts().zip(a.verdicts()) {
            assert_eq!((fv.detected, fv.confidence), (av.detected, av.confidence));
            assert_eq!(fv.reason, if av.detected { av.reason } else { None });
        }
    }
    let none = run_batch(&batch, &settings(Reasons::None));
    assert!(
        none.rows()
            .all(|r| r.verdicts().all(|v| v.reason.is_none()))
    );
    assert_eq!(
        none.rows().map(|r| r.failed()).collect::<Vec<_>>(),
        all.rows().map(|r| r.failed()).collect::<Vec<_>>()
    );
    assert_eq!(all.row(1).measures().tokens, None, "no tokens recorded");
    assert_eq!(all.row(3).measures().tokens, Some(7.0));
}

/// A span: trace id, span id, parent, name, start, and the result of a tool span.
type Span<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    &'a str,
    i64,
    Option<&'a str>,
);

/// An OTLP/JSON export of `spans`.
fn export(spans: &[Span<'_>]) -> String {
    let spans: Vec<serde_json::Value> = spans
        .iter()
        .map(|&(trace, span, parent, name, start, result)| {
            let mut attributes = vec![json!({"key": "gen_ai.operation.name",
                "value": {"stringValue": if result.is_some() { "execute_tool" } else { "invoke_agent" }}})];
            if let Some(result) = result {
                attributes.push(json!({"key": "gen_ai.tool.name", "value": {"stringValue": "search"}}));
                attributes.push(json!({"key": "gen_ai.tool.call.result", "value": {"stringValue": result}}));
            }
            json!({"traceId": trace, "spanId": span, "parentSpanId": parent, "name": name,
                "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 1).to_string(),
                "attributes": attributes})
        })
        .collect();
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

fn ids(batches: &[VerdictBatch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| b.trace_ids().map(String::from))
        .collect()
}

#[test]
fn traces_split_across_files_are_merged_after_one_read_of_each_file_and_only_they_decoded_again() {
    use crate::ingest::reads::{self, Reads};
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let c = dir.path().join("c.json");
    let d = dir.path().join("d.json");
    // t2 starts in a.json and ends in b.json, whose copy of its id is escaped (`t\u0032`).
    std::fs::write(
        &a,
        export(&[
            ("t1", "r1", None, "agent", 1, None),
            ("t1", "s1", Some("r1"), "search", 2, Some("[]")),
            ("t2", "r2", None, "agent", 3, None),
        ]),
    )
    .unwrap();
    let b_text = export(&[
        ("t2", "s2", Some("r2"), "search", 4, Some("found")),
        ("t3", "r3", None, "agent", 5, None),
    ])
    .replace(r#""traceId":"t2""#, r#""traceId":"t\u0032""#);
    assert!(b_text.contains(r"t\u0032"));
    std::fs::write(&b, b_text).unwrap();
    // A vendor export read twice: every span of its trace is a duplicate the second time.
    let langfuse = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/formats/langfuse.json");
    std::fs::copy(&langfuse, &c).unwrap();
    std::fs::copy(&langfuse, &d).unwrap();
    let files = vec![a.clone(), b.clone(), c.clone(), d.clone()];
    let settings = settings(Reasons::All);
    let RunResults {
        files: results,
        shared,
    } = check(&settings, &files, None);

    let kept: Vec<Vec<String>> = results
        .iter()
        .map(|r| ids(&r.as_ref().unwrap().details.as_ref().unwrap().batches))
        .collect();
    assert_eq!(kept, [vec!["t1"], vec!["t3"], vec![], vec![]]);
    assert_eq!(shared.verdicts.len(), 1, "traces are shared");
    let merged = &shared.verdicts[0];
    assert_eq!(ids(std::slice::from_ref(merged)), ["t2", "t-lf-1"]);
    assert_eq!(merged.row(0).steps(), 1, "t2's tool span came from b.json");
    assert_eq!(merged.row(1).steps(), 2, "the vendor trace counted once");
    assert_eq!(shared.warnings.len(), 1);
    assert!(
        shared.warnings[0].starts_with("4 duplicate span(s) dropped"),
        "{}",
        shared.warnings[0]
    );
    // Each file is read once; a file holding a shared trace is opened again, and only its shared
    // traces decoded again (a format read whole when opened, the vendor export, is decoded by each
    // opening).
    for (file, decoded) in [(&a, 2 + 1), (&b, 2 + 1), (&c, 1 + 1), (&d, 1 + 1)] {
        assert_eq!(
            reads::of(file),
            Reads { opened: 2, decoded },
            "{}",
            file.display()
        );
    }
    // Files that share no trace are opened once and each trace decoded once.
    let e = dir.path().join("e.json");
    let f = dir.path().join("f.json");
    std::fs::write(&e, export(&[("t5", "r5", None, "agent", 1, None)])).unwrap();
    std::fs::write(&f, export(&[("t6", "r6", None, "agent", 1, None)])).unwrap();
    assert!(
        check(&settings, &[e.clone(), f.clone()], None)
            .shared
            .verdicts
            .is_empty()
    );
    for file in [&e, &f] {
        assert_eq!(
            reads::of(file),
            Reads {
                opened: 1,
                decoded: 1
            }
        );
    }
    // One file: nothing to share, so no index is read first.
    let alone = dir.path().join("alone.json");
    std::fs::copy(&a, &alone).unwrap();
    let results = read_files(std::slice::from_ref(&alone), &settings, None);
    assert_eq!(
        ids(&results[0]
            .as_ref()
            .unwrap()
            .details
            .as_ref()
            .unwrap()
            .batches),
        ["t1", "t2"]
    );
    assert_eq!(
        reads::of(&alone),
        Reads {
            opened: 1,
            decoded: 2
        }
    );
}
