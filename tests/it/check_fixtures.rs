//! One fixture folder per check, under `tests/checks/<check>/`: a trace that makes the check fire
//! (`fires.json` or `fires.jsonl`), a look-alike that must not (`look_alike.json[l]`), the inputs the
//! check needs, found by name (`golden.json`, `outcomes.json`, `policy.json`, `workflow.json`,
//! `expect.json`, `judge_replay.jsonl`), and the reviewed verdicts as an `insta` snapshot (`verdicts.snap`).
//!
//! Every check `faultgate checks` lists must have its folder, so a new check cannot land without one.
//! After a deliberate change of a verdict, review the new snapshot with `cargo insta review` (or
//! re-run with `INSTA_UPDATE=always` and read the diff).

use crate::common;

use std::fmt::Write as _;
use std::path::Path;

use common::{arg, faultgate, faultgate_in, read_json, scratch, stdout};

/// The inputs a check may need, each with the flag that passes it.
const INPUTS: [(&str, &str); 6] = [
    ("golden.json", "--golden"),
    ("outcomes.json", "--outcomes"),
    ("policy.json", "--policy"),
    ("workflow.json", "--workflow"),
    ("expect.json", "--expect"),
    ("judge_replay.jsonl", "--judge"),
];

fn registered_checks() -> Vec<String> {
    let out = faultgate(&["checks"]);
    assert_eq!(out.status.code(), Some(0));
    stdout(&out)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The one file of `dir` named `stem.json` or `stem.jsonl`.
fn trace_file(dir: &Path, stem: &str) -> String {
    let found: Vec<String> = ["json", "jsonl"]
        .iter()
        .map(|ext| format!("{stem}.{ext}"))
        .filter(|name| dir.join(name).is_file())
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{}: one {stem}.json or {stem}.jsonl",
        dir.display()
    );
    found.into_iter().next().unwrap_or_default()
}

/// (trace id, detected, confidence, reason) of `check` in a `--json` report.
fn verdicts(report: &serde_json::Value, check: &str) -> Vec<(String, bool, f64, String)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["check"] == check)
        .map(|r| {
            (
                r["trace_id"].as_str().unwrap_or_default().to_string(),
                r["detected"].as_bool().expect("detected"),
                r["confidence"].as_f64().expect("confidence"),
                r["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_check_fires_on_its_fixture_and_not_on_the_look_alike() {
    let checks = registered_checks();
    assert!(checks.len() >= 11, "{checks:?}");
    let fixtures = common::file("tests/checks");
    for check in &checks {
        let dir = fixtures.join(check);
        assert!(
            dir.is_dir(),
            "check {check} has no fixture folder tests/checks/{check}/ (see tests/it/check_fixtures.rs)"
        );
        let fires = trace_file(&dir, "fires");
        let look_alike = trace_file(&dir, "look_alike");
        let out_dir = scratch();
        let report = out_dir.path().join("report.json");
        let mut args: Vec<String> = ["check", &fires, &look_alike, "--check", check, "--quiet"]
            .map(String::from)
            .to_vec();
        for (name, flag) in INPUTS {
            if dir.join(name).is_file() {
                args.push(flag.to_string());
                args.push(if flag == "--judge" {
                    format!("replay:{name}")
                } else {
                    name.to_string()
                });
            }
        }
        args.extend(["--json".to_string(), arg(&report).to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = faultgate_in(&dir, &args);
        assert_eq!(
            run.status.code(),
            Some(1),
            "{check}: the firing trace fails the run\n{}",
            common::stderr(&run)
        );

        let got = verdicts(&read_json(&report), check);
        assert_eq!(got.len(), 2, "{check}: one verdict per trace: {got:?}");
        assert!(got[0].1, "{check}: {fires} must fire: {:?}", got[0]);
        assert!(
            !got[1].1,
            "{check}: {look_alike} must not fire: {:?}",
            got[1]
        );

        let snapshot: String = got.iter().zip([&fires, &look_alike]).fold(
            String::new(),
            |mut out, ((id, detected, confidence, reason), file)| {
                let _ = writeln!(
                    out,
                    "{file} ({id}): detected={detected} confidence={confidence}\n  {reason}"
                );
                out
            },
        );
        insta::with_settings!({
            snapshot_path => dir.clone(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!("verdicts", snapshot);
        });
    }
}
