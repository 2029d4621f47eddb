use prost::Message as _;

use super::*;
use crate::checks::{Gating, Reasons, VerdictColumn};
use crate::redact::Redaction;
use crate::report::verdicts::{TraceFields, VerdictBatch, VerdictBatchBuilder, schema};
use crate::report::{Measures, ReportCheck};

const CHECKS: [&str; 2] = ["policy", "policy"];
const OTEL_TRACE: &str = "4BF92F3577B34DA6A3CE929D0E0E4736";
const ROOT_SPAN: &str = "00f067aa0ba902b7";

/// Traces `ids[from..to]`: the first has an OTel id and a root span, the others ids of a benchmark
/// log and no span; the first policy column fires on even rows.
fn batch(ids: &[&str], from: usize, to: usize) -> VerdictBatch {
    let mut builder = VerdictBatchBuilder::new(schema(&CHECKS), to - from);
    let column = || VerdictColumn::new(to - from, Reasons::All, Redaction::Off);
    let mut columns = [column(), column()];
    for (i, id) in ids.iter().enumerate().take(to).skip(from) {
        builder.push_trace(&TraceFields {
            trace_id: id,
            scenario: "refund \"fast\"",
            steps: 1,
            measures: Measures::default(),
            root_span_id: (i == 0).then_some(ROOT_SPAN),
            ..TraceFields::default()
        });
        columns[0].push(i % 2 == 0, 0.75, format_args!("step {i} denied"));
        columns[1].sure(false, "allowed");
    }
    builder.finish(columns.into()).expect("verdict batch")
}

fn report(batches: Vec<VerdictBatch>) -> Report {
    Report {
        judge: "none".into(),
        checks: CHECKS
            .iter()
            .map(|name| ReportCheck::rule(name, Gating::PolicyBlock))
            .collect(),
        redaction: "off".into(),
        batches,
        ..Report::default()
    }
}

fn json(report: &Report) -> String {
    let mut out = Vec::new();
    write_json(&mut out, Export::whole(report, None)).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn ids_are_kept_only_when_they_are_otel_ids() {
    assert_eq!(
        hex_id::<8>(ROOT_SPAN),
        Some([0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
    );
    assert!(hex_id::<16>(OTEL_TRACE).is_some(), "upper case is hex too");
    assert_eq!(hex_id::<8>("0000000000000000"), None, "all zero is invalid");
    assert_eq!(hex_id::<8>("00f067aa0ba902b"), None);
    assert_eq!(hex_id::<8>("step-1-of-trace"), None);
    assert_eq!(hex_id::<16>("r-0001"), None);
}

#[test]
fn the_json_export_is_one_record_per_verdict_scored_1_for_a_pass_and_0_for_a_fail() {
    let ids = [OTEL_TRACE, "run1-task7"];
    let text = json(&report(vec![batch(&ids, 0, 2)]));
    let version = env!("CARGO_PKG_VERSION");
    let scenario = r#"{"key":"faultgate.scenario","value":{"stringValue":"refund \"fast\""}}"#;
    let expected = format!(
        concat!(
            r#"{{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"faultgate"}}}},{{"key":"service.version","value":{{"stringValue":"{v}"}}}}]}},"scopeLogs":[{{"scope":{{"name":"faultgate","version":"{v}"}},"logRecords":["#,
            "\n",
            r#"{{"timeUnixNano":"0","eventName":"gen_ai.evaluation.result","traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","attributes":[{{"key":"gen_ai.evaluation.name","value":{{"stringValue":"policy"}}}},{{"key":"gen_ai.evaluation.score.value","value":{{"doubleValue":0.0}}}},{{"key":"gen_ai.evaluation.score.label","value":{{"stringValue":"fail"}}}},{{"key":"gen_ai.evaluation.explanation","value":{{"stringValue":"step 0 denied"}}}},{{"key":"faultgate.confidence","value":{{"doubleValue":0.75}}}},{s}]}},"#,
            "\n",
            r#"{{"timeUnixNano":"0","eventName":"gen_ai.evaluation.result","traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","attributes":[{{"key":"gen_ai.evaluation.name","value":{{"stringValue":"policy#2"}}}},{{"key":"gen_ai.evaluation.score.value","value":{{"doubleValue":1.0}}}},{{"key":"gen_ai.evaluation.score.label","value":{{"stringValue":"pass"}}}},{{"key":"gen_ai.evaluation.explanation","value":{{"stringValue":"allowed"}}}},{{"key":"faultgate.confidence","value":{{"doubleValue":1.0}}}},{s}]}},"#,
            "\n",
            r#"{{"timeUnixNano":"0","eventName":"gen_ai.evaluation.result","attributes":[{{"key":"gen_ai.evaluation.name","value":{{"stringValue":"policy"}}}},{{"key":"gen_ai.evaluation.score.value","value":{{"doubleValue":1.0}}}},{{"key":"gen_ai.evaluation.score.label","value":{{"stringValue":"pass"}}}},{{"key":"gen_ai.evaluation.explanation","value":{{"stringValue":"step 1 denied"}}}},{{"key":"faultgate.confidence","value":{{"doubleValue":0.75}}}},{s},{{"key":"faultgate.trace.id","value":{{"stringValue":"run1-task7"}}}}]}},"#,
            "\n",
            r#"{{"timeUnixNano":"0","eventName":"gen_ai.evaluation.result","attributes":[{{"key":"gen_ai.evaluation.name","value":{{"stringValue":"policy#2"}}}},{{"key":"gen_ai.evaluation.score.value","value":{{"doubleValue":1.0}}}},{{"key":"gen_ai.evaluation.score.label","value":{{"stringValue":"pass"}}}},{{"key":"gen_ai.evaluation.explanation","value":{{"stringValue":"allowed"}}}},{{"key":"faultgate.confidence","value":{{"doubleValue":1.0}}}},{s},{{"key":"faultgate.trace.id","value":{{"stringValue":"run1-task7"}}}}]}}"#,
            "\n]}}]}}]}}\n"
        ),
        v = version,
        s = scenario
    );
    assert_eq!(text, expected);
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let records = &parsed["resourceLogs"][0]["scopeLogs"][0]["logRecords"];
    assert_eq!(records.as_array().map(Vec::len), Some(4));
}

#[test]
fn the_bytes_do_not_depend_on_how_the_rows_are_batched() {
    let ids = [OTEL_TRACE, "a", "b", "c", "d"];
    let whole = report(vec![batch(&ids, 0, 5)]);
    let split = report(vec![
        batch(&ids, 0, 2),
        batch(&ids, 2, 3),
        batch(&ids, 3, 5),
    ]);
    assert_eq!(json(&whole), json(&split));
    let protobuf = |report: &Report| {
        let mut out = Vec::new();
        write_protobuf(&mut out, Export::whole(report, None)).unwrap();
        out
    };
    assert_eq!(protobuf(&whole), protobuf(&split));
}

#[test]
fn the_protobuf_export_decodes_to_the_records_of_the_json_one() {
    let ids = [OTEL_TRACE, "run1-task7", "run1-task8"];
    let report = report(vec![batch(&ids, 0, 3)]);
    let mut bytes = Vec::new();
    write_protobuf(&mut bytes, Export::whole(&report, None)).unwrap();
    let request = pb::LogsData::decode(bytes.as_slice()).expect("decodes");
    assert_eq!(request.encoded_len(), bytes.len(), "no byte left over");
    let [resource_logs] = request.resource_logs.as_slice() else {
        panic!("one ResourceLogs");
    };
    let resource = resource_logs.resource.as_ref().expect("resource");
    assert_eq!(resource.attributes[0].key, "service.name");
    let [scope_logs] = resource_logs.scope_logs.as_slice() else {
        panic!("one ScopeLogs");
    };
    assert_eq!(
        scope_logs.scope.as_ref().map(|s| s.name.as_str()),
        Some("faultgate")
    );
    let records = &scope_logs.log_records;
    let text = json(&report);
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
    let json_records = parsed["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(records.len(), json_records.len());
    assert_eq!(records.len(), 6);
    for (record, from_json) in records.iter().zip(&json_records) {
        assert_eq!(record.event_name, EVENT_NAME);
        assert_eq!(
            hex(&record.trace_id),
            from_json["traceId"].as_str().unwrap_or_default()
        );
        assert_eq!(
            hex(&record.span_id),
            from_json["spanId"].as_str().unwrap_or_default()
        );
        let keys: Vec<&str> = record.attributes.iter().map(|a| a.key.as_str()).collect();
        let json_keys: Vec<&str> = from_json["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys, json_keys);
    }
    assert_eq!(hex(&records[0].span_id), ROOT_SPAN);
    assert!(records[2].span_id.is_empty() && records[2].trace_id.is_empty());
}

#[test]
fn a_verdict_naming_a_step_sits_on_that_steps_span_and_the_others_on_the_root() {
    const STEP_SPAN: &str = "b7ad6b7169203331";
    let mut builder = VerdictBatchBuilder::new(schema(&CHECKS), 2);
    for (id, root) in [(OTEL_TRACE, Some(ROOT_SPAN)), ("run1-task7", None)] {
        builder.push_trace(&TraceFields {
            trace_id: id,
            scenario: "s",
            root_span_id: root,
            ..TraceFields::default()
        });
    }
    // The first check names a step with a span; the second names one whose id is not an OTel id.
    builder.push_verdict_spans(Some(&format!("{STEP_SPAN},")));
    builder.push_verdict_spans(Some("step-3-span,"));
    let column = || VerdictColumn::new(2, Reasons::All, Redaction::Off);
    let mut columns = [column(), column()];
    columns[0].sure(true, "step 2: fetch denied");
    columns[0].sure(true, "step 3: fetch denied");
    columns[1].sure(false, "allowed");
    columns[1].sure(false, "allowed");
    let report = report(vec![builder.finish(columns.into()).unwrap()]);
    let parsed: serde_json::Value = serde_json::from_str(&json(&report)).unwrap();
    let records = parsed["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array()
        .unwrap();
    let spans: Vec<Option<&str>> = records.iter().map(|r| r["spanId"].as_str()).collect();
    assert_eq!(spans, [Some(STEP_SPAN), Some(ROOT_SPAN), None, None]);
}
