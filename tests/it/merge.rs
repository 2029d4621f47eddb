//! Partial results and `faultgate merge` end to end through the binary: the outputs merged from
//! shards are byte-identical to a single run over the union (check with a band, baseline, calibrate),
//! merging in levels gives the same bytes, and partials that do not belong together are refused.

use crate::common;
use crate::common::ScratchDir;

use std::path::{Path, PathBuf};

use common::{command, root, stderr};
use std::process::Output;

const BAND: &str = "examples/gate/band.json";
const POLICY: &str = "examples/gate/policy.json";
const GOLDEN: &str = "examples/gate/golden.json";
const TRACES: [&str; 5] = [
    "examples/traces.json",
    "examples/gate/baseline_glm_run1.json",
    "examples/gate/candidate_gpt.json",
    "examples/gate/candidate_qwen.json",
    "examples/formats/langfuse.json",
];

/// A fresh, empty directory for one test's outputs.
fn out_dir(name: &str) -> ScratchDir {
    ScratchDir::named(&format!("merge-{name}"))
}

/// Runs the binary from the repository root, with the audit's clock pinned.
fn faultgate<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    command(root())
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1790848800")
        .output()
        .expect("run faultgate")
}

fn args(items: &[&str], more: &[&Path]) -> Vec<String> {
    items
        .iter()
        .map(ToString::to_string)
        .chain(more.iter().map(|p| p.to_string_lossy().into_owned()))
        .collect()
}

/// Writes `n` shard partials of `command` over `inputs` with `flags`, into `dir/p1..pn`.
fn shards(dir: &Path, command: &str, inputs: &[&str], flags: &[&str], n: usize) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let part = dir.join(format!("p{k}"));
            let shard = format!("{k}/{n}");
            let mut a = args(&[command], &[]);
            a.extend(inputs.iter().map(ToString::to_string));
            a.extend(flags.iter().map(ToString::to_string));
            a.extend(["--shard".into(), shard, "--partial".into()]);
            a.push(part.to_string_lossy().into_owned());
            let out = faultgate(&a);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            part
        })
        .collect()
}

/// Every file under `dir`, by relative path, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Asserts the two output folders hold the same files with the same bytes.
fn assert_same_outputs(single: &Path, merged: &Path) {
    let (a, b) = (files_under(single), files_under(merged));
    assert!(!a.is_empty());
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{} differs", path.display());
    }
}

#[test]
fn check_with_a_band_merged_from_shards_writes_the_bytes_of_one_run() {
    let dir = out_dir("check");
    let run_flags = ["--policy", POLICY, "--golden", GOLDEN];
    let outputs = |o: &Path| {
        std::fs::create_dir_all(o).unwrap();
        args(
            &["--band", BAND, "--gate", "band", "--json"],
            &[&o.join("r.json")],
        )
        .into_iter()
        .chain(args(&["--markdown"], &[&o.join("r.md")]))
        .chain(args(&["--parquet"], &[&o.join("pq")]))
        .chain(args(&["--junit"], &[&o.join("r.xml")]))
        .chain(args(&["--html"], &[&o.join("r.html")]))
        .chain(args(&["--audit"], &[&o.join("audit")]))
        .collect::<Vec<String>>()
    };
    let mut single = args(&["check"], &[]);
    single.extend(TRACES.iter().map(ToString::to_string));
    single.extend(run_flags.iter().map(ToString::to_string));
    single.extend(outputs(&dir.join("single")));
    let one = faultgate(&single);
    assert!(matches!(one.status.code(), Some(0 | 1)), "{}", stderr(&one));

    let parts = shards(&dir, "check", &TRACES, &run_flags, 3);
    // Flat, and in two levels with the shards in another order: the same bytes.
    let mut flat = args(&["merge"], &[&parts[0], &parts[1], &parts[2]]);
    flat.extend(outputs(&dir.join("flat")));
    let merged = faultgate(&flat);
    assert_eq!(
        merged.status.code(),
        one.status.code(),
        "{}",
        stderr(&merged)
    );
    let level = dir.join("p31");
    let out = faultgate(&args(
        &["merge"],
        &[&parts[2], &parts[0], Path::new("--partial"), &level],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut two = args(&["merge"], &[&parts[1], &level]);
    two.extend(outputs(&dir.join("levels")));
    assert_eq!(faultgate(&two).status.code(), one.status.code());

    // The merged partials themselves do not depend on the grouping either.
    let all = dir.join("p123");
    let grouped = dir.join("p31-2");
    for (list, to) in [
        (vec![&parts[0], &parts[1], &parts[2]], &all),
        (vec![&level, &parts[1]], &grouped),
    ] {
        let mut a: Vec<&Path> = list.iter().map(|p| p.as_path()).collect();
        a.push(Path::new("--partial"));
        a.push(to);
        assert_eq!(faultgate(&args(&["merge"], &a)).status.code(), Some(0));
    }
    assert_same_outputs(&all, &grouped);

    assert_same_outputs(&dir.join("single"), &dir.join("flat"));
    assert_same_outputs(&dir.join("single"), &dir.join("levels"));
    let markdown = std::fs::read_to_string(dir.join("flat/r.md")).unwrap();
    assert!(
        markdown.contains("--band examples/gate/band.json"),
        "{markdown}"
    );
    assert!(!markdown.contains("--shard") && !markdown.contains("--partial"));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("flat/r.json")).unwrap()).unwrap();
    assert!(report["gate"].is_object(), "the band gated the merged run");
}

#[test]
fn baseline_merged_from_shards_writes_the_same_band_and_tables() {
    let dir = out_dir("baseline");
    let runs = [
        "examples/gate/baseline_glm_run1.json",
        "examples/gate/baseline_glm_run2.json",
        "examples/gate/candidate_gpt.json",
    ];
    let outputs = |o: &Path| {
        args(
            &["--per-scenario", "--pass-k", "--out"],
            &[&o.join("band.json")],
        )
        .into_iter()
        .chain(args(&["--parquet"], &[&o.join("pq")]))
        .collect::<Vec<String>>()
    };
    let mut single = args(&["baseline"], &[]);
    single.extend(runs.iter().map(ToString::to_string));
    single.extend(outputs(&dir.join("single")));
    let one = faultgate(&single);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let parts = shards(&dir, "baseline", &runs, &[], 2);
    let mut merge = args(&["merge"], &[&parts[1], &parts[0]]);
    merge.extend(outputs(&dir.join("merged")));
    let merged = faultgate(&merge);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert_same_outputs(&dir.join("single"), &dir.join("merged"));
}

#[test]
fn calibrate_merged_from_shards_scores_the_same_and_keeps_no_raw_key() {
    let dir = out_dir("calibrate");
    let inputs = ["examples/traces.json", "examples/gate/candidate_gpt.json"];
    let flags = ["--labels", "examples/labels.json", "--split", "test"];
    let outputs = |o: &Path| {
        args(&["--json"], &[&o.join("c.json")])
            .into_iter()
            .chain(args(&["--parquet"], &[&o.join("pq")]))
            .collect::<Vec<String>>()
    };
    let mut single = args(&["calibrate"], &[]);
    single.extend(inputs.iter().map(ToString::to_string));
    single.extend(flags.iter().map(ToString::to_string));
    single.extend(outputs(&dir.join("single")));
    let one = faultgate(&single);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let parts = shards(&dir, "calibrate", &inputs, &flags, 2);
    let mut merge = args(&["merge"], &[&parts[0], &parts[1]]);
    merge.extend(args(&["--labels", "examples/labels.json"], &[]));
    merge.extend(outputs(&dir.join("merged")));
    let merged = faultgate(&merge);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert_same_outputs(&dir.join("single"), &dir.join("merged"));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("merged/c.json")).unwrap()).unwrap();
    assert!(
        report.to_string().contains("\"test\""),
        "the split was scored"
    );

    // Another label file is refused by name.
    let other = dir.join("labels.json");
    std::fs::write(&other, b"{}").unwrap();
    let out = faultgate(&args(
        &["merge"],
        &[&parts[0], &parts[1], Path::new("--labels"), &other],
    ));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not the label file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn partials_that_do_not_belong_together_are_refused_naming_why() {
    let dir = out_dir("refused");
    let with_policy = shards(&dir, "check", &TRACES[..3], &["--policy", POLICY], 2);
    let plain_dir = dir.join("plain");
    std::fs::create_dir_all(&plain_dir).unwrap();
    let plain = shards(&plain_dir, "check", &TRACES[..3], &[], 2);
    let refused = |a: &[&Path], wanted: &str| {
        let mut list = args(&["merge"], a);
        list.extend(args(&["--json"], &[&dir.join("x.json")]));
        let out = faultgate(&list);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(wanted), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dir.join("x.json").exists());
    };
    refused(&[&with_policy[0], &plain[1]], "partials differ in policy");
    refused(&[&with_policy[0]], "the partials cover");
    refused(&[&with_policy[0], &with_policy[0]], "is in two partials");
    let other_inputs = shards(
        &dir.join("other"),
        "check",
        &TRACES[1..4],
        &["--policy", POLICY],
        2,
    );
    refused(
        &[&with_policy[0], &other_inputs[1]],
        "partials differ in input list",
    );
    let base = shards(&dir.join("base"), "baseline", &TRACES[..2], &[], 1);
    refused(&[&base[0]], "--json does not apply to baseline partials");

    // Outputs are written by merge, not by a shard.
    let out = faultgate(&args(
        &["check", TRACES[0], "--partial"],
        &[&dir.join("p"), Path::new("--json"), &dir.join("y.json")],
    ));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--json cannot be used with --partial"));
}

#[test]
fn a_byte_changed_in_a_partial_is_refused_naming_the_partial() {
    let dir = out_dir("damaged");
    let parts = shards(&dir, "check", &TRACES[..2], &[], 2);
    let merged = |name: &str| {
        let mut list = args(&["merge"], &[&parts[0], &parts[1]]);
        list.extend(args(&["--json"], &[&dir.join(name)]));
        faultgate(&list)
    };
    let out = merged("before.json");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // One letter of a trace id, inside a string of the Arrow table: the table still parses.
    let id = b"fc2cdab304bd903931b3e698c585e8fb";
    let (part, mut bytes, at) = parts
        .iter()
        .find_map(|p| {
            let bytes = std::fs::read(p.join("verdicts.arrow")).unwrap();
            let at = bytes.windows(id.len()).position(|w| w == id)?;
            Some((p, bytes, at))
        })
        .expect("a trace id of examples/traces.json in one of the partials");
    bytes[at] = b'e';
    std::fs::write(part.join("verdicts.arrow"), &bytes).unwrap();
    let out = merged("after.json");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("cannot read partial {}", part.display()))
            && err.contains("verdicts.arrow")
            && err.contains("SHA-256"),
        "{err}"
    );
    assert!(!dir.join("after.json").exists());
}

#[test]
fn a_trace_id_read_by_two_shards_is_reported_with_a_count() {
    let dir = out_dir("split");
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    // The same traces in two files: each shard reads one copy.
    for name in ["a.json", "b.json"] {
        std::fs::copy("examples/gate/candidate_gpt.json", inputs.join(name)).unwrap();
    }
    let input = inputs.to_string_lossy().into_owned();
    let parts = shards(&dir, "check", &[&input], &[], 2);
    let out = faultgate(&args(&["merge"], &[&parts[0], &parts[1]]));
    let err = stderr(&out);
    let ids: std::collections::HashSet<String> = {
        let one = faultgate(&args(
            &["check", "examples/gate/candidate_gpt.json", "--json"],
            &[&dir.join("one.json")],
        ));
        assert!(one.status.success() || one.status.code() == Some(1));
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("one.json")).unwrap()).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["trace_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!ids.is_empty());
    assert!(
        err.contains(&format!(
            "warning: {} trace id(s) found in more than one partial",
            ids.len()
        )),
        "{err}"
    );
    // Within one shard the same ids are one run's business: no warning.
    let whole = shards(&dir.join("whole"), "check", &[&input], &[], 1);
    let out = faultgate(&args(&["merge"], &[&whole[0]]));
    assert!(!stderr(&out).contains("more than one partial"));
}

/// stdout without the elapsed time of the summary line, with the output folder's name `from`
/// written `to`.
fn stdout_of(out: &Output, from: &Path, to: &str) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| match l.rfind(" · ") {
            Some(at) if l.ends_with('s') && l.contains("traces failed") => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
        .replace(&from.to_string_lossy().into_owned(), to)
}

#[test]
fn check_partials_merged_through_a_spill_write_the_bytes_of_one_run() {
    let dir = out_dir("spilled");
    let run_flags = ["--policy", POLICY, "--golden", GOLDEN];
    let spill = dir.join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    // Written from the spill a batch at a time: the table, the gate, the JSON report, the events.
    let outputs = |o: &Path| {
        std::fs::create_dir_all(o).unwrap();
        args(&["--band", BAND, "--json"], &[&o.join("r.json")])
            .into_iter()
            .chain(args(&["--otlp-events"], &[&o.join("events.json")]))
            .collect::<Vec<String>>()
    };
    let mut single = args(&["check"], &[]);
    single.extend(TRACES.iter().map(ToString::to_string));
    single.extend(run_flags.iter().map(ToString::to_string));
    single.extend(outputs(&dir.join("single")));
    let one = faultgate(&single);
    assert!(matches!(one.status.code(), Some(0 | 1)), "{}", stderr(&one));
    let expected = stdout_of(&one, &dir.join("single"), "OUT");
    assert!(expected.contains("\ngate: "), "{expected}");

    let parts = shards(&dir, "check", &TRACES, &run_flags, 3);
    let level = dir.join("p31");
    // A merged partial goes through a spill too, in --spill-dir when given.
    let out = faultgate(&args(
        &["merge"],
        &[
            &parts[2],
            &parts[0],
            Path::new("--partial"),
            &level,
            Path::new("--spill-dir"),
            &spill,
        ],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    for (name, list) in [
        ("flat", vec![&parts[0], &parts[1], &parts[2]]),
        ("reversed", vec![&parts[2], &parts[1], &parts[0]]),
        ("levels", vec![&parts[1], &level]),
    ] {
        let o = dir.join(name);
        let mut a = args(
            &["merge"],
            &list.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
        );
        a.extend(outputs(&o));
        a.extend(args(&["--spill-dir"], &[&spill]));
        let merged = faultgate(&a);
        assert_eq!(
            merged.status.code(),
            one.status.code(),
            "{}",
            stderr(&merged)
        );
        assert_eq!(stdout_of(&merged, &o, "OUT"), expected, "{name}");
        assert_same_outputs(&dir.join("single"), &o);
        assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    }

    // A spill directory that cannot hold the spill: one line naming it.
    let missing = dir.join("missing");
    let mut a = args(&["merge"], &[&parts[0], &parts[1], &parts[2]]);
    a.extend(args(&["--spill-dir"], &[&missing]));
    let refused = faultgate(&a);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(&format!(
            "--spill-dir {}: no such directory",
            missing.display()
        )),
        "{}",
        stderr(&refused)
    );
}
