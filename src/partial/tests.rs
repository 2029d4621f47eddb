//! Unit tests of partials: merging in any grouping, the spilled merge against the one in memory,
//! the batches a written table is cut into, partials refused, split trace ids and the shard plan.

use arrow_ipc::reader::FileReader;

use super::merge::SpilledMerge;
use super::write::WRITTEN_ROWS;
use super::*;
use crate::checks::{Reasons, VerdictColumn};
use crate::redact::Redaction;
use crate::report::steps::StepView;
use crate::report::verdicts::{self, TraceFields, VerdictBatchBuilder};
use crate::run::Usage;

/// A one-check batch of the given trace ids; every other one fails.
fn batch(ids: &[&str]) -> VerdictBatch {
    let mut builder = VerdictBatchBuilder::new(verdicts::schema(&["policy"]), ids.len());
    let mut column = VerdictColumn::new(ids.len(), Reasons::All, Redaction::Off);
    for (i, id) in ids.iter().enumerate() {
        builder.push_trace(&TraceFields {
            trace_id: id,
            scenario: id,
            ..TraceFields::default()
        });
        column.sure(i % 2 == 0, "denied");
    }
    builder.finish(vec![column]).expect("verdict batch")
}

fn steps(id: &str, n: usize) -> Vec<TraceSteps> {
    let view = StepView {
        tool: "t".into(),
        arguments: String::new(),
        result: String::new(),
        error: false,
        actor: None,
    };
    (0..n)
        .map(|i| TraceSteps {
            trace_id: format!("{id}{i}"),
            steps: vec![view.clone()],
            more: 0,
        })
        .collect()
}

/// A partial of shard `shard` holding the files `(index, ids, failing steps)` of a 4-file run.
fn partial(shard: usize, files: &[(usize, &[&str], usize)]) -> (PathBuf, Partial) {
    let manifest = Manifest {
        format: FORMAT.into(),
        command: "check".into(),
        settings: vec![Setting {
            name: "policy".into(),
            value: "none".into(),
        }],
        checks: vec!["policy".into()],
        judge: "none".into(),
        redaction: "off".into(),
        inputs_total: 4,
        runs: Vec::new(),
        files: files
            .iter()
            .map(|(index, ids, _)| FileEntry {
                index: *index,
                run: 0,
                shard,
                path: format!("f{index}.json").into(),
                bytes: 1,
                sha256: None,
                rows: ids.len(),
                notes: None,
            })
            .collect(),
        other_inputs: Vec::new(),
        repro: "faultgate check in".into(),
        judge_usage: Some(Usage {
            prompt_tokens: 1,
            completion_tokens: 2,
        }),
        named_ids: false,
        sessions: None,
    };
    let part = Partial {
        manifest,
        batches: files.iter().map(|(_, ids, _)| batch(ids)).collect(),
        steps: files
            .iter()
            .map(|(index, _, n)| steps(&format!("f{index}-"), *n))
            .collect(),
    };
    (PathBuf::from(format!("p{shard}")), part)
}

fn ids(p: &Partial) -> Vec<String> {
    p.batches
        .iter()
        .flat_map(|b| b.trace_ids().map(String::from))
        .collect()
}

#[test]
fn merging_puts_files_in_input_order_whatever_the_grouping() {
    let a = || partial(1, &[(0, &["a", "b"], 150), (3, &["g"], 150)]);
    let b = || partial(2, &[(1, &["c", "d"], 30), (2, &["e", "f"], 10)]);
    let flat = merge(&[b(), a()]).unwrap();
    assert_eq!(ids(&flat.partial), ["a", "b", "c", "d", "e", "f", "g"]);
    assert!(flat.split_ids.is_empty());
    flat.partial.require_complete().unwrap();
    assert_eq!(
        flat.partial.manifest.judge_usage,
        Some(Usage {
            prompt_tokens: 2,
            completion_tokens: 4
        })
    );
    // The run keeps the first MAX_TRACES failing traces' steps, in input order.
    let kept: Vec<usize> = flat.partial.steps.iter().map(Vec::len).collect();
    assert_eq!(kept, [150, 30, 10, 10]);
    assert_eq!(flat.partial.failing_steps().len(), MAX_TRACES);
    // One partial alone is merged too, and a merge of it with the other gives the same partial.
    let once = merge(&[a()]).unwrap().partial;
    let twice = merge(&[(PathBuf::from("m"), once), b()]).unwrap().partial;
    assert_eq!(twice.manifest, flat.partial.manifest);
    assert_eq!(twice.steps, flat.partial.steps);
    assert_eq!(ids(&twice), ids(&flat.partial));
}

/// Trace ids of a spilled merge, in the order its spill gives them back.
fn spilled_ids(merged: &SpilledMerge) -> Vec<String> {
    let mut out = Vec::new();
    merged
        .spilled
        .for_each_batch(|b| {
            out.extend(b.rows().map(|r| r.trace_id().to_string()));
            Ok::<(), SpillError>(())
        })
        .unwrap();
    out
}

#[test]
fn a_spilled_merge_streams_the_rows_of_the_merge_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Files dealt across shards, one of them empty, one trace id read by both shards.
    let a = partial(
        1,
        &[
            (0, &["a", "b"], 150),
            (2, &[], 0),
            (3, &["split", "g"], 150),
        ],
    );
    let b = partial(2, &[(1, &["c", "split"], 30)]);
    let mut heads = Vec::new();
    for (path, part) in [&b, &a] {
        let at = dir.path().join(path);
        part.write(&at).unwrap();
        heads.push(PartialHead::read(&at).unwrap());
    }
    let spilled = merge_spilled(heads, Some(dir.path())).unwrap();
    let whole = merge(&[b.clone(), a.clone()]).unwrap();
    assert_eq!(spilled_ids(&spilled), ids(&whole.partial));
    assert_eq!(
        spilled_ids(&spilled),
        ["a", "b", "c", "split", "split", "g"]
    );
    assert_eq!(spilled.split_ids, whole.split_ids);
    assert_eq!(spilled.split_ids, ["split"]);
    assert_eq!(spilled.manifest, whole.partial.manifest);
    assert_eq!(spilled.failing_steps(), whole.partial.failing_steps());
    // Each run of files from one partial is one batch of the spill: a, c, g's file.
    assert_eq!(spilled.spilled.verdicts.batches(), 3);

    // A table that does not hold the rows its manifest lists is refused as before.
    let at = dir.path().join("short");
    a.1.write(&at).unwrap();
    let manifest = std::fs::read_to_string(at.join(MANIFEST_FILE)).unwrap();
    let edited = manifest.replacen("\"rows\": 2", "\"rows\": 3", 1);
    assert_ne!(edited, manifest);
    std::fs::write(at.join(MANIFEST_FILE), edited).unwrap();
    let heads = vec![
        PartialHead::read(&at).unwrap(),
        PartialHead::read(&dir.path().join(&b.0)).unwrap(),
    ];
    let err = merge_spilled(heads, None).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "cannot read partial {}: verdicts.arrow does not hold the rows manifest.json lists",
            crate::error::display_path(&at)
        )
    );
}

#[test]
fn a_partial_of_many_small_files_holds_a_few_batches_not_one_per_file() {
    // Two shards of a 2,000-file run, one trace per file, dealt alternately.
    let all: Vec<String> = (0..2000).map(|i| format!("t{i}")).collect();
    let shard = |k: usize| {
        let files: Vec<(usize, &[&str], usize)> = Vec::new();
        let (path, mut part) = partial(k, &files);
        part.manifest.inputs_total = all.len();
        for i in (k - 1..all.len()).step_by(2) {
            part.manifest.files.push(FileEntry {
                index: i,
                run: i / 1000,
                shard: k,
                path: format!("f{i}.json").into(),
                bytes: 1,
                sha256: None,
                rows: 1,
                notes: None,
            });
            part.batches.push(batch(&[all[i].as_str()]));
            part.steps.push(Vec::new());
        }
        (path, part)
    };
    let dir = tempfile::tempdir().unwrap();
    let mut read = Vec::new();
    for k in [1, 2] {
        let (path, part) = shard(k);
        assert_eq!(part.batches.len(), 1000);
        let at = dir.path().join(&path);
        part.write(&at).unwrap();
        let back = PartialHead::read(&at)
            .and_then(PartialHead::into_partial)
            .unwrap();
        assert_eq!(back.batches.len(), 1, "one joined batch, not one per file");
        assert_eq!(ids(&back), ids(&part));
        read.push((path, back));
    }
    let merged = merge(&read).unwrap().partial;
    assert_eq!(ids(&merged), all);
    assert_eq!(merged.batches.len(), 1);
    assert!(
        merged
            .manifest
            .files
            .windows(2)
            .all(|w| w[0].index + 1 == w[1].index)
    );
    // A run's rows are the rows of its files.
    let run_ids = |run: usize| -> Vec<String> {
        merged
            .rows_of(|f| f.run == run)
            .iter()
            .flat_map(|b| {
                b.rows()
                    .map(|r| r.trace_id().to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(run_ids(1), all[1000..]);
    assert_eq!(run_ids(0).len(), 1000);
    // Merging in levels gives the same partial.
    let again = merge(&[(PathBuf::from("m"), merged.clone())])
        .unwrap()
        .partial;
    assert_eq!(again.manifest, merged.manifest);
    assert_eq!(ids(&again), all);
}

/// A batch of the traces `t{from}..t{to}`; every third one fails, whatever the batch.
fn numbered(from: usize, to: usize) -> VerdictBatch {
    let ids: Vec<String> = (from..to).map(|i| format!("t{i}")).collect();
    let mut builder = VerdictBatchBuilder::new(verdicts::schema(&["policy"]), ids.len());
    let mut column = VerdictColumn::new(ids.len(), Reasons::All, Redaction::Off);
    for (i, id) in (from..to).zip(&ids) {
        builder.push_trace(&TraceFields {
            trace_id: id,
            scenario: id,
            ..TraceFields::default()
        });
        column.sure(i % 3 == 0, "denied");
    }
    builder.finish(vec![column]).expect("verdict batch")
}

#[test]
fn a_written_table_is_the_same_bytes_however_its_rows_were_batched() {
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<String> = (0..3000).map(|i| format!("t{i}")).collect();
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let written = |name: &str, sizes: &[usize]| {
        let (_, mut part) = partial(1, &[(0, &refs, 0)]);
        let mut at = 0;
        part.batches = sizes
            .iter()
            .map(|&n| {
                at += n;
                numbered(at - n, at)
            })
            .collect();
        assert_eq!(at, 3000);
        let to = dir.path().join(name);
        part.write(&to).unwrap();
        let back = PartialHead::read(&to)
            .and_then(PartialHead::into_partial)
            .unwrap();
        assert_eq!(ids(&back), all);
        std::fs::read(to.join(VERDICTS_FILE)).unwrap()
    };
    let whole = written("whole", &[3000]);
    // Pieces that cut the table's batches at offsets that are not a multiple of 8, and a
    // hundred one-row batches (joined as they wait).
    let mut sizes = vec![1, 700, 1023, 1, 3, 172];
    sizes.extend([1; 100]);
    sizes.push(1000);
    assert_eq!(written("pieces", &sizes), whole);
    let reader = FileReader::try_new(std::io::Cursor::new(whole), None).unwrap();
    let rows: Vec<usize> = reader.map(|b| b.unwrap().num_rows()).collect();
    assert_eq!(rows, [WRITTEN_ROWS, WRITTEN_ROWS, 3000 - 2 * WRITTEN_ROWS]);
}

#[test]
fn partials_that_do_not_belong_together_are_refused() {
    let (path, mut other) = partial(2, &[(1, &["c"], 0)]);
    other.manifest.settings[0].value = "abc".into();
    let err = merge(&[partial(1, &[(0, &["a"], 0)]), (path, other)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "partials differ in policy: p1 has none, p2 has abc"
    );
    let err = merge(&[partial(1, &[(0, &["a"], 0)]), partial(2, &[(0, &["a"], 0)])]).unwrap_err();
    assert!(matches!(err, PartialError::SameFile { .. }), "{err}");
    let part = merge(&[partial(1, &[(0, &["a"], 0), (2, &["b"], 0)])])
        .unwrap()
        .partial;
    assert_eq!(
        part.require_complete().unwrap_err().to_string(),
        "the partials cover 2 of the run's 4 input files; missing: input files #2, #4"
    );
    assert!(matches!(merge(&[]), Err(PartialError::Empty)));
}

#[test]
fn trace_ids_read_by_two_shards_are_counted_once_each() {
    let merged = merge(&[
        partial(1, &[(0, &["a", "b", "a"], 0)]),
        partial(2, &[(1, &["b", "c"], 0), (2, &["a"], 0)]),
        partial(3, &[(3, &["c", "d"], 0)]),
    ])
    .unwrap();
    assert_eq!(merged.split_ids, ["b", "a", "c"], "in first-split order");
}

#[test]
fn shards_cover_every_file_once_balanced_by_bytes() {
    let sizes = [100, 1, 1, 50, 50, 3, 97, 2];
    let plan = shard_plan(&sizes, 3);
    let mut all: Vec<usize> = plan.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..sizes.len()).collect::<Vec<_>>());
    let loads: Vec<u64> = plan
        .iter()
        .map(|s| s.iter().map(|&i| sizes[i]).sum())
        .collect();
    assert_eq!(loads, [102, 101, 101]);
    assert_eq!(
        plan,
        shard_plan(&sizes, 3),
        "the same list gives the same plan"
    );
    assert!(plan.iter().all(|s| s.windows(2).all(|w| w[0] < w[1])));
    let many = shard_plan(&[5, 5], 4);
    assert_eq!(many, [vec![0], vec![1], vec![], vec![]]);
}

#[test]
fn shard_flags_are_checked() {
    assert_eq!(parse_shard("3/8"), Ok((3, 8)));
    assert_eq!(parse_shard("1/1"), Ok((1, 1)));
    for bad in ["0/8", "9/8", "3", "a/b", "3/0", ""] {
        assert!(parse_shard(bad).is_err(), "{bad}");
    }
}

#[test]
fn split_ids_warning_counts_and_names_a_few() {
    let ids: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
    let line = split_ids_warning(&ids);
    assert!(line.starts_with("warning: 5 trace id(s)"), "{line}");
    assert!(line.contains("t0, t1, t2, and 2 more"), "{line}");
}
