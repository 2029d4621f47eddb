//! Unit tests of the table builder: steps of each kind, sparse columns, the one-pass read of a
//! span's attributes, columns past 2 GiB, and the room each batch's columns start with.

use arrow_array::Array;
use serde_json::Value;

use super::build::ReadAttrs;
use super::capacity::{CARRIED_BYTES_MAX, ColumnBuilder, RESERVE_SPANS, SparseText};
use super::record::{AttrValue, Attrs, SpanRecord, TraceRecord};
use super::schema::*;
use super::*;

fn answering<'a>(trace_id: &'static str, answer: &'a str) -> TraceRecord<'a> {
    let mut attrs = Attrs::default();
    attrs.push(attr::COMPLETION, AttrValue::from(answer));
    TraceRecord {
        trace_id: trace_id.into(),
        agent: "agent".into(),
        spans: vec![SpanRecord {
            span_id: "root".into(),
            attrs,
            ..SpanRecord::default()
        }],
        skipped_attributes: 0,
        resource: Default::default(),
    }
}

#[test]
fn retrievals_and_memory_operations_are_steps_of_their_own_kind_and_a_plan_is_none() {
    let span = |id: &'static str, start: i64, name: &'static str, pairs: &[(&str, &str)]| {
        let mut attrs = Attrs::default();
        for (k, v) in pairs {
            attrs.push(k.to_string(), AttrValue::Str(v.to_string().into()));
        }
        SpanRecord {
            span_id: id.into(),
            parent_id: (id != "r").then(|| "r".into()),
            name: name.into(),
            start_ns: start,
            attrs,
            ..SpanRecord::default()
        }
    };
    let trace = TraceRecord {
        trace_id: "t".into(),
        agent: "agent".into(),
        spans: vec![
            span(
                "r",
                0,
                "invoke_agent",
                &[(attr::OPERATION_NAME, "invoke_agent")],
            ),
            span(
                "p",
                1,
                "plan tool_router",
                &[(attr::OPERATION_NAME, "plan")],
            ),
            span(
                "k",
                2,
                "retrieval kb",
                &[
                    (attr::OPERATION_NAME, "retrieval"),
                    (attr::DATA_SOURCE_ID, "kb"),
                    (attr::RETRIEVAL_QUERY, "refund rules"),
                    (attr::RETRIEVAL_DOCUMENTS, r#"[{"id":"d1"}]"#),
                ],
            ),
            span(
                "m",
                3,
                "search_memory",
                &[
                    (attr::OPERATION_NAME, "search_memory"),
                    (attr::MEMORY_STORE_ID, "prefs"),
                ],
            ),
            span(
                "x",
                4,
                "execute_tool refund",
                &[(attr::OPERATION_NAME, "execute_tool")],
            ),
        ],
        skipped_attributes: 0,
        resource: Default::default(),
    };
    let batch = TraceBatch::build(&[trace]);
    let column = |name| -> Vec<String> {
        let array = batch.step_str(name);
        (0..array.len())
            .map(|i| array.value(i).to_string())
            .collect()
    };
    assert_eq!(column(STEP_TOOL), ["retrieval", "search_memory", "refund"]);
    assert_eq!(column(STEP_KIND), ["retrieval", "memory", "tool"]);
    assert_eq!(column(STEP_SPAN_ID), ["k", "m", "x"]);
    assert_eq!(
        column(STEP_ARGUMENTS),
        [
            r#"{"query":"refund rules","data_source_id":"kb"}"#,
            r#"{"store_id":"prefs"}"#,
            ""
        ]
    );
    assert_eq!(column(STEP_RESULT), [r#"[{"id":"d1"}]"#, "", ""]);
}

#[test]
fn a_sparse_column_holds_its_nulls_where_they_were_appended() {
    let mut column = SparseText::with_capacity(2);
    column.append_option(None::<&str>);
    column.append_option(None::<&str>);
    column.append_option(Some("a"));
    column.append_option(None::<&str>);
    assert_eq!(column.held().items, 4);
    let array = column.finish();
    let cells: Vec<Option<&str>> = array.iter().collect();
    assert_eq!(cells, [None, None, Some("a"), None]);
    assert!(column.finish().is_empty());
}

#[test]
fn one_pass_over_the_attributes_reads_what_each_lookup_reads() {
    // Every key a row reads, some twice with different values, among keys no row reads.
    let keys = [
        attr::OPERATION_NAME,
        attr::ERROR_TYPE,
        attr::FINISH_REASONS,
        attr::CONFIRMED,
        attr::AGENT_NAME,
        attr::CHECKPOINT,
        attr::CONFIRMED_BY,
        attr::HANDOFF_FROM,
        attr::HANDOFF_TO,
        attr::HANDOFF_PAYLOAD,
        attr::RESPONSE_ID,
    ];
    let lookups = |span: &SpanRecord<'_>| -> Vec<Option<String>> {
        keys.iter()
            .map(|k| span.attr(k).map(|v| v.py_str().into_owned()))
            .collect()
    };
    let one_pass = |span: &SpanRecord<'_>| -> Vec<Option<String>> {
        let read = ReadAttrs::of(span);
        [
            read.operation,
            read.error_type,
            read.finish_reasons,
            read.confirmed,
            read.agent_name,
            read.checkpoint,
            read.confirmed_by,
            read.handoff_from,
            read.handoff_to,
            read.handoff_payload,
            read.response_id,
        ]
        .iter()
        .map(|v| v.map(|v| v.py_str().into_owned()))
        .collect()
    };
    let mut attrs = Attrs::default();
    attrs.push("gen_ai.request.model", AttrValue::from("m"));
    for (i, key) in keys.iter().enumerate() {
        attrs.push(*key, AttrValue::Str(format!("first {i}").into()));
        if i % 3 == 0 {
            attrs.push("unread", AttrValue::from("x"));
            attrs.push(*key, AttrValue::Str(format!("last {i}").into()));
        }
    }
    let full = SpanRecord {
        name: "execute_tool lookup".into(),
        attrs,
        ..SpanRecord::default()
    };
    assert_eq!(one_pass(&full), lookups(&full));
    assert_eq!(one_pass(&full)[0].as_deref(), Some("last 0"));
    let read = ReadAttrs::of(&full);
    assert!(!read.tool_attributes && !read.openinference_kind);
    assert!(!record::runs_a_tool(&full.name, read.operation));

    let mut attrs = Attrs::default();
    attrs.push(attr::LEGACY_TOOL_NAME, AttrValue::from("search"));
    attrs.push(attr::OPENINFERENCE_KIND, AttrValue::from("TOOL"));
    let bare = SpanRecord {
        name: "execute_tool lookup".into(),
        attrs,
        ..SpanRecord::default()
    };
    assert_eq!(one_pass(&bare), lookups(&bare));
    let read = ReadAttrs::of(&bare);
    assert!(read.tool_attributes && read.openinference_kind);
    assert_eq!(
        record::runs_a_tool(&bare.name, read.operation),
        record::is_tool_span(&bare)
    );
    assert!(record::is_tool_span(&bare));
}

#[test]
fn a_column_holding_more_than_2_gib_of_text_is_built() {
    // Two answers of 1.05 GiB each: past what 32-bit offsets can address.
    let text = "a".repeat(1_100 << 20);
    let mut builder = TableBuilder::new(TableOptions::default());
    builder.append(&answering("t1", &text));
    builder.append(&answering("t2", &text));
    let batch = builder.finish();
    let answers = batch.trace_str(TRACE_ANSWER);
    assert_eq!(answers.value(0).len(), text.len());
    assert_eq!(answers.value(1).len(), text.len());
    assert!(answers.value(1).ends_with("aaaa"));
    assert!(*answers.value_offsets().last().unwrap() > i64::from(i32::MAX));
    assert_eq!(batch.trace_str(TRACE_ID).value(1), "t2");
}

#[test]
fn a_trace_of_many_spans_is_built_in_buffers_of_its_exact_size_with_the_same_rows() {
    let n = RESERVE_SPANS + 3;
    let spans: Vec<SpanRecord<'static>> = (0..n)
        .map(|i| {
            let mut attrs = Attrs::default();
            let tool = i % 4 == 3;
            let op = if i == 0 {
                "invoke_agent"
            } else if tool {
                "execute_tool"
            } else {
                "chat"
            };
            attrs.push(attr::OPERATION_NAME, AttrValue::from(op));
            if tool {
                attrs.push(attr::TOOL_NAME, AttrValue::from("count"));
                attrs.push(
                    attr::TOOL_CALL_ARGUMENTS,
                    Value::from(format!("{{\"n\": {i}}}")).into(),
                );
                attrs.push(attr::TOOL_CALL_RESULT, Value::from(i.to_string()).into());
            }
            SpanRecord {
                span_id: format!("{i:016x}").into(),
                parent_id: (i > 0).then(|| format!("{:016x}", 0).into()),
                name: op.into(),
                start_ns: i as i64,
                attrs,
                ..SpanRecord::default()
            }
        })
        .collect();
    let big = TraceRecord {
        trace_id: "big".into(),
        agent: "agent".into(),
        spans,
        skipped_attributes: 0,
        resource: Default::default(),
    };
    // First in its batch, the trace gets exact buffers; after another trace, the growing ones.
    let alone = TraceBatch::build(std::slice::from_ref(&big));
    let after = TraceBatch::build(&[answering("small", "yes"), big]);
    assert_eq!(alone.spans, after.spans.slice(1, n));
    assert_eq!(alone.steps, after.steps);
    assert_eq!(alone.traces, after.traces.slice(1, 1));
    assert_eq!(alone.steps.num_rows(), n / 4);
    let ids = alone.span_str(SPAN_ID);
    assert_eq!(ids.values().len(), 16 * n);
    assert_eq!(ids.values().capacity(), ids.values().len());
    let arguments = alone.step_str(STEP_ARGUMENTS);
    assert_eq!(arguments.values().capacity(), arguments.values().len());
    assert!(after.span_str(SPAN_ID).values().capacity() > 16 * (n + 1));
}

#[test]
fn a_batch_starts_with_the_room_the_last_one_took_scaled_to_its_weight_and_capped() {
    let answer = "an answer of forty bytes, give or take..";
    let mut builder = TableBuilder::new(TableOptions::default());
    builder.start_batch(1_000);
    for _ in 0..10 {
        builder.append(&answering("t", answer));
    }
    builder.finish();
    // Twice the weight: twice the room, an eighth more, so twenty answers fit without growing.
    builder.start_batch(2_000);
    for _ in 0..20 {
        builder.append(&answering("t", answer));
    }
    let batch = builder.finish();
    let answers = batch.trace_str(TRACE_ANSWER).values();
    assert_eq!(answers.len(), 20 * answer.len());
    let room = 2 * 10 * answer.len();
    // Arrow may round the request up to 64 bytes; growing would have doubled it.
    let carried = room + room / 8;
    assert!(
        (carried..=carried.next_multiple_of(64)).contains(&answers.capacity()),
        "{} bytes of room for {room}",
        answers.capacity()
    );
    let ids = batch.span_str(SPAN_ID);
    assert_eq!(ids.len(), 20);
    assert!(ids.values().capacity() >= "root".len() * 20);

    // One huge answer does not make the batches after it start as large.
    let huge = "a".repeat(CARRIED_BYTES_MAX * 2);
    builder.start_batch(2_000);
    builder.append(&answering("huge", &huge));
    builder.finish();
    builder.start_batch(2_000);
    builder.append(&answering("t", answer));
    let batch = builder.finish();
    assert_eq!(
        batch.trace_str(TRACE_ANSWER).values().capacity(),
        CARRIED_BYTES_MAX
    );

    // A batch whose weight nobody gave carries nothing to the next.
    let mut builder = TableBuilder::new(TableOptions::default());
    builder.append(&answering("t", answer));
    builder.finish();
    builder.start_batch(2_000);
    builder.append(&answering("t", answer));
    let batch = builder.finish();
    let capacity = batch.trace_str(TRACE_ANSWER).values().capacity();
    assert!(
        capacity <= answer.len().next_multiple_of(64),
        "{capacity} bytes of room for one answer"
    );
}

#[test]
fn the_builder_starts_empty_after_each_batch() {
    let mut builder = TableBuilder::new(TableOptions::default());
    builder.append(&answering("t1", "yes"));
    assert_eq!(builder.finish().len(), 1);
    assert!(builder.is_empty());
    builder.append(&answering("t2", "no"));
    let batch = builder.finish();
    assert_eq!(batch.len(), 1);
    assert_eq!(batch.trace_str(TRACE_ANSWER).value(0), "no");
    assert_eq!(batch.span_rows(0), 0..1);
}
