use super::*;
use crate::table::record::{SpanRecord, attr};

fn turn(trace_id: &str, conversation: Option<&str>, start: i64) -> TraceRecord<'static> {
    let mut root = SpanRecord {
        span_id: format!("{trace_id}-root").into(),
        name: "invoke_agent".into(),
        start_ns: start,
        end_ns: start + 10,
        ..SpanRecord::default()
    };
    if let Some(id) = conversation {
        root.attrs.push(
            attr::CONVERSATION_ID,
            crate::table::record::AttrValue::from(serde_json::Value::String(id.into())),
        );
    }
    TraceRecord {
        trace_id: trace_id.to_string().into(),
        agent: "agent".into(),
        spans: vec![root],
        skipped_attributes: 0,
        resource: Default::default(),
    }
}

fn ids(unit: &Unit) -> Vec<String> {
    match unit {
        Unit::Session(id, turns) => std::iter::once(format!("session {id}"))
            .chain(turns.iter().map(|t| t.trace_id.to_string()))
            .collect(),
        Unit::Alone(trace) => vec![trace.trace_id.to_string()],
    }
}

#[test]
fn turns_are_grouped_by_conversation_in_start_order_ties_by_trace_id() {
    let traces = vec![
        turn("t3", Some("c1"), 300),
        turn("lone", None, 50),
        turn("t1", Some("c1"), 100),
        turn("u1", Some("c2"), 100),
        turn("t2b", Some("c1"), 200),
        turn("t2a", Some("c1"), 200),
    ];
    let units: Vec<Vec<String>> = group(traces).iter().map(ids).collect();
    assert_eq!(
        units,
        vec![
            vec!["session c1", "t1", "t2a", "t2b", "t3"],
            vec!["lone"],
            vec!["session c2", "u1"],
        ]
    );
}

#[test]
fn each_unit_belongs_to_one_shard_and_shards_share_the_buckets() {
    let shards: Vec<SessionSpill> = (1..=3)
        .map(|k| SessionSpill::new(None).for_shard(k, 3))
        .collect();
    let mut counts = [0; 3];
    let mut buckets_of_first = HashSet::new();
    for i in 0..3000 {
        let id = format!("conv-{i}");
        let owners: Vec<usize> = (0..3).filter(|&k| shards[k].owns(&id)).collect();
        assert_eq!(owners.len(), 1, "{id}");
        counts[owners[0]] += 1;
        if owners[0] == 0 {
            buckets_of_first.insert(SessionSpill::bucket(&id));
        }
    }
    assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
    assert!(buckets_of_first.len() > 200, "{}", buckets_of_first.len());
    assert!(SessionSpill::new(None).owns("anything"));
}

#[test]
fn a_reason_names_the_turn_of_each_step_it_names() {
    let turn_of = [0, 0, 1, 1, 1, 2];
    assert_eq!(
        name_turns(
            "Tool 'x' failed at step 4 (boom) and no call succeeded.",
            &turn_of
        ),
        "Tool 'x' failed at turn 2, step 4 (boom) and no call succeeded."
    );
    assert_eq!(
        name_turns("issued >= 3 times (steps 2, 4, 6) where", &turn_of),
        "issued >= 3 times (steps 2, 4, 6 (turns 1, 2, 3)) where"
    );
    // Counts and numbers past the conversation's steps name no step.
    assert_eq!(name_turns("12 steps (cap)", &turn_of), "12 steps (cap)");
    assert_eq!(name_turns("step 9 of", &turn_of), "step 9 of");
    assert_eq!(name_turns("footstep 2", &turn_of), "footstep 2");
}

#[test]
fn spilled_turns_read_back_as_they_were_held_by_bucket_without_the_excluded() {
    let mut tool = SpanRecord {
        span_id: "t".into(),
        parent_id: Some("r".into()),
        name: "execute_tool x".into(),
        start_ns: -5,
        end_ns: i64::MAX,
        status_code: 2,
        status_message: "boom ü".into(),
        ..SpanRecord::default()
    };
    tool.attrs
        .push("text", crate::table::record::AttrValue::from("{\"a\": 1}"));
    tool.attrs.push(
        "json",
        crate::table::record::AttrValue::json(serde_json::json!({"a": [1.5, null, "x"]})),
    );
    let mut first = turn("t1", Some("c1"), 100);
    first.spans.push(tool);
    first.skipped_attributes = 3;
    first.resource.push(
        "service.version",
        crate::table::record::AttrValue::from("2.1.0"),
    );
    let traces = [
        first,
        turn("t2", Some("c1"), 200),
        turn("t3", Some("c2"), 50),
    ];
    let spill = SessionSpill::new(None);
    for trace in &traces {
        spill.put(&conversation_id(&trace.spans).unwrap(), trace);
    }
    spill.exclude(&HashSet::from(["t2".to_string()]));
    let mut back: Vec<(usize, TraceRecord<'static>)> = Vec::new();
    spill
        .drain(&mut |b, turns| back.extend(turns.into_iter().map(|t| (b, t))))
        .unwrap();
    back.sort_by(|a, b| a.1.trace_id.cmp(&b.1.trace_id));
    assert_eq!(back.len(), 2);
    assert_eq!(back[0].1, traces[0]);
    assert_eq!(back[1].1, traces[2]);
    assert_eq!(back[0].0, SessionSpill::bucket("c1"));
    assert_eq!(back[1].0, SessionSpill::bucket("c2"));
}
