//! Expected actions end to end through the binary: `expect import` on the shipped benchmark exports,
//! `expect draft` from runs that agree and disagree, `--expect` in check, baseline and merge, the band
//! that records the expectations, bad files, the gate example of docs/expected-actions.md, and the
//! same bytes at any thread count.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{arg, command, read_json, root, scratch, stderr, stdout};
use serde_json::{Value, json};

const EXAMPLE: &str = "examples/expect";

fn faultgate<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    command(root())
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1790848800")
        .output()
        .expect("run faultgate")
}

fn example(name: &str) -> String {
    format!("{EXAMPLE}/{name}.json")
}

/// The baseline runs of the gate example (docs/expected-actions.md).
fn baseline_runs() -> Vec<String> {
    (1..=3)
        .map(|i| example(&format!("baseline-run{i}")))
        .collect()
}

/// The gate example drafted into `dir`: `expect.json` from the baseline runs, and the band
/// built from the same runs with it (`band.json`) and without it (`plain.json`).
struct Drafted {
    expect: PathBuf,
    band: PathBuf,
    plain: PathBuf,
}

fn drafted_band(dir: &Path) -> Drafted {
    let d = Drafted {
        expect: dir.join("expect.json"),
        band: dir.join("band.json"),
        plain: dir.join("plain.json"),
    };
    let runs = baseline_runs();
    let mut draft: Vec<String> = vec!["expect".into(), "draft".into()];
    draft.extend(runs.iter().cloned());
    draft.extend(["--out".into(), s(&d.expect)]);
    assert_eq!(faultgate(&draft).status.code(), Some(0));
    for (out, with) in [(&d.band, true), (&d.plain, false)] {
        let mut a: Vec<String> = vec!["baseline".into()];
        a.extend(runs.iter().cloned());
        a.extend(["--out".into(), s(out)]);
        if with {
            a.extend(["--expect".into(), s(&d.expect)]);
        }
        let o = faultgate(&a);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    d
}

fn s(path: &Path) -> String {
    arg(path).to_string()
}

/// `check --json` over `traces` with `flags`; the report and the exit code.
fn report(dir: &Path, traces: &[&str], flags: &[&str]) -> (Value, Option<i32>) {
    let json = dir.join("report.json");
    let mut a: Vec<String> = vec!["check".into()];
    a.extend(traces.iter().map(ToString::to_string));
    a.extend(flags.iter().map(ToString::to_string));
    a.extend(["--json".into(), s(&json), "-q".into()]);
    let o = faultgate(&a);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    (read_json(&json), o.status.code())
}

/// The (trace id, detected, reason) of `expected_actions` in a report.
fn verdicts(report: &Value) -> Vec<(String, bool, String)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["check"] == "expected_actions")
        .map(|r| {
            (
                r["trace_id"].as_str().unwrap().to_string(),
                r["detected"].as_bool().unwrap(),
                r["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn imported_tau2_expectations_fire_on_the_runs_whose_task_failed() {
    let tmp = scratch();
    let expect = tmp.path().join("expect.json");
    let export = "calibration/tau2-bench/traces/gpt41-airline.json.zst";
    let o = faultgate(&["expect", "import", export, "--out", arg(&expect)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("expect import: 20 scenario(s)"),
        "{}",
        stdout(&o)
    );
    let file = read_json(&expect);
    assert_eq!(file["scenarios"].as_object().unwrap().len(), 20);
    // Look-ups are left out: only state-changing actions are expected.
    let tools: Vec<&str> = file["scenarios"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|s| s["calls"].as_array().unwrap())
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"update_reservation_flights"));
    assert!(
        !tools
            .iter()
            .any(|t| t.starts_with("get_") || t.starts_with("search_"))
    );

    let (report, _) = report(tmp.path(), &[export], &["--expect", arg(&expect)]);
    let verdicts = verdicts(&report);
    assert_eq!(verdicts.len(), 20);
    // The run's own rewards: the check agrees with them on most runs.
    let labels = std::fs::read_to_string(root().join("calibration/tau2-bench/labels.csv")).unwrap();
    let failed = |id: &str| {
        labels
            .lines()
            .find(|l| l.starts_with(&format!("{id},search_loop,")))
            .map(|l| l.ends_with(",true"))
            .expect("labelled")
    };
    let agree = verdicts
        .iter()
        .filter(|(id, d, _)| *d == failed(id))
        .count();
    assert!(agree >= 16, "agrees with the reward on {agree} of 20 runs");
    let fired: Vec<&(String, bool, String)> = verdicts.iter().filter(|v| v.1).collect();
    assert!(
        fired
            .iter()
            .all(|(_, _, r)| r.starts_with("expected call ")),
        "{fired:?}"
    );
}

#[test]
fn tau_bench_records_import_their_task_actions() {
    let tmp = scratch();
    let expect = tmp.path().join("expect.json");
    let o = faultgate(&[
        "expect",
        "import",
        "calibration/tau-bench/traces/gpt-4o-airline.json.zst",
        "--out",
        arg(&expect),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let file = read_json(&expect);
    assert_eq!(file["scenarios"].as_object().unwrap().len(), 50);
    assert_eq!(file["source"]["command"], "expect import");
}

#[test]
fn an_export_without_expectations_is_exit_2_and_writes_nothing() {
    let tmp = scratch();
    let expect = tmp.path().join("expect.json");
    let o = faultgate(&[
        "expect",
        "import",
        "examples/traces.json",
        "--out",
        arg(&expect),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("examples/traces.json: carries no expected actions"),
        "{err}"
    );
    assert!(!expect.exists());
}

#[test]
fn bad_expectations_files_are_exit_2_naming_the_file_and_the_scenario() {
    let tmp = scratch();
    let cases = [
        (
            "not-json.json",
            "{\"scenarios\": ".to_string(),
            "not an expectations file",
        ),
        (
            "mode.json",
            json!({"scenarios": {"task-1": {"mode": "exact"}}}).to_string(),
            "scenario \"task-1\": unknown mode \"exact\"",
        ),
        (
            "matcher.json",
            json!({"scenarios": {"task-2": {"calls": [{"tool": "pay", "arguments": {"a": 1},
                "match": {"a": "fuzzy"}}]}}})
            .to_string(),
            "scenario \"task-2\": pay: argument \"a\": unknown matcher \"fuzzy\"",
        ),
        (
            "regex.json",
            json!({"scenarios": {"task-3": {"calls": [{"tool": "pay",
                "match": {"id": {"regex": "(unclosed"}}}]}}})
            .to_string(),
            "scenario \"task-3\": pay: argument \"id\": bad regular expression",
        ),
        (
            "unknown-key.json",
            json!({"scenarios": {}, "modes": 1}).to_string(),
            "unknown field `modes`",
        ),
    ];
    for (name, text, message) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        let json = tmp.path().join("report.json");
        let o = faultgate(&[
            "check",
            &example("candidate-v1"),
            "--expect",
            arg(&path),
            "--json",
            arg(&json),
        ]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(message), "{name}: {err}");
        assert!(!json.exists(), "{name}: a report was written");
    }
}

/// Three runs in the τ-bench layout: task 0 cancels the same reservation in every run, with a reason
/// worded differently each time; task 1's runs each change something else.
fn disagreeing_runs(dir: &Path) -> Vec<PathBuf> {
    let call = |task: u32, tool: &str, args: Value| {
        json!({"task_id": task, "trial": 0, "reward": 1.0, "info": {}, "traj": [
            {"role": "user", "content": "help"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "get_reservation_details", "arguments": "{\"reservation_id\": \"Z\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "{}"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function",
                "function": {"name": tool, "arguments": args.to_string()}}]},
            {"role": "tool", "tool_call_id": "c2", "content": "{\"ok\": true}"},
            {"role": "assistant", "content": "done"}
        ]})
    };
    let second = [
        "book_reservation",
        "send_certificate",
        "update_reservation_baggages",
    ];
    (0..3)
        .map(|i| {
            let reason = format!("the customer changed plans, wording number {i} of the reason");
            let run = json!([
                call(
                    0,
                    "cancel_reservation",
                    json!({"reservation_id": "Z", "reason": reason})
                ),
                call(1, second[i], json!({"user_id": "u"})),
            ]);
            let path = dir.join(format!("run{i}.json"));
            std::fs::write(&path, run.to_string()).unwrap();
            path
        })
        .collect()
}

#[test]
fn a_draft_keeps_what_the_runs_agree_on_and_lists_the_scenarios_they_do_not() {
    let tmp = scratch();
    let runs = disagreeing_runs(tmp.path());
    let expect = tmp.path().join("expect.json");
    let mut a: Vec<String> = vec!["expect".into(), "draft".into()];
    a.extend(runs.iter().map(|p| s(p)));
    a.extend(["--out".into(), s(&expect)]);
    let o = faultgate(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("2 scenario(s) in 3 run(s): 1 drafted with 1 expected call(s), 1 without agreement (task-1)"),
        "{}",
        stdout(&o)
    );
    let file = read_json(&expect);
    // The free-text reason is not compared; the look-up is not expected.
    assert_eq!(
        file["scenarios"],
        json!({"task-0": {"calls": [{"tool": "cancel_reservation", "arguments": {"reservation_id": "Z"}}]}})
    );
    assert_eq!(file["source"]["disagreed"], json!(["task-1"]));
    assert_eq!(file["source"]["min_agree"], json!(0.5));

    // Every run must agree at --min-agree 1: task-0's cancellation still qualifies.
    let strict = tmp.path().join("strict.json");
    let mut b = a.clone();
    b.truncate(b.len() - 2);
    b.extend(["--out".into(), s(&strict), "--min-agree".into(), "1".into()]);
    assert_eq!(faultgate(&b).status.code(), Some(0));
    assert_eq!(read_json(&strict)["scenarios"], file["scenarios"]);
    // A run given twice would count twice.
    let mut twice = a.clone();
    twice.insert(3, s(&runs[0]));
    let o = faultgate(&twice);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is given twice"), "{}", stderr(&o));
}

#[test]
fn the_readme_gate_example_fails_the_weaker_agent_only_with_expectations() {
    let tmp = scratch();
    let Drafted {
        expect,
        band,
        plain,
    } = drafted_band(tmp.path());
    assert_eq!(
        read_json(&band)["expectations_sha256"]
            .as_str()
            .map(str::len),
        Some(64)
    );
    assert!(read_json(&plain).get("expectations_sha256").is_none());
    let gate = |candidate: &str, band: &Path, expect: Option<&Path>| {
        let mut a = vec![
            "check".to_string(),
            example(candidate),
            "--band".into(),
            s(band),
        ];
        if let Some(e) = expect {
            a.extend(["--expect".into(), s(e)]);
        }
        let o = faultgate(&a);
        let line = stdout(&o)
            .lines()
            .find(|l| l.starts_with("gate: "))
            .unwrap_or_default()
            .to_string();
        (o.status.code(), line)
    };
    let (code, line) = gate("candidate-v2", &band, Some(&expect));
    assert_eq!(code, Some(1), "{line}");
    assert!(line.starts_with("gate: FAIL · clean rate 0.62"), "{line}");
    let (code, line) = gate("candidate-v2", &plain, None);
    assert_eq!(code, Some(0), "{line}");
    assert!(line.starts_with("gate: PASS"), "{line}");
    let (code, line) = gate("candidate-v1", &band, Some(&expect));
    assert_eq!(code, Some(0), "{line}");
    assert!(line.starts_with("gate: PASS"), "{line}");
}

#[test]
fn a_band_with_other_expectations_than_the_run_is_refused() {
    let tmp = scratch();
    let Drafted {
        expect,
        band,
        plain,
    } = drafted_band(tmp.path());
    let other = tmp.path().join("other.json");
    std::fs::write(&other, r#"{"scenarios": {}}"#).unwrap();
    let candidate = example("candidate-v1");
    let refused = |band: &Path, expect: Option<&Path>, message: &str| {
        let json = tmp.path().join("refused.json");
        let mut a = vec![
            "check".to_string(),
            candidate.clone(),
            "--band".into(),
            s(band),
        ];
        a.extend(["--json".into(), s(&json)]);
        if let Some(e) = expect {
            a.extend(["--expect".into(), s(e)]);
        }
        let o = faultgate(&a);
        assert_eq!(o.status.code(), Some(2), "{message}");
        let err = stderr(&o);
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("faultgate: "))
            .collect();
        assert_eq!(errors.len(), 1, "{err}");
        assert!(
            errors[0].contains(message) && errors[0].contains(arg(band)),
            "{err}"
        );
        assert!(!json.exists());
    };
    refused(
        &band,
        None,
        "was built with expectations (baseline --expect)",
    );
    refused(&band, Some(&other), "another expectations file");
    refused(&plain, Some(&expect), "was built without expectations");
}

#[test]
fn expectations_give_the_same_bytes_at_any_thread_count() {
    let tmp = scratch();
    let expect = tmp.path().join("expect.json");
    let export = "calibration/tau-bench/traces/gpt-4o-airline.json.zst";
    assert_eq!(
        faultgate(&["expect", "import", export, "--out", arg(&expect)])
            .status
            .code(),
        Some(0)
    );
    let mut outputs = Vec::new();
    for threads in ["1", "2", "4"] {
        let json = tmp.path().join(format!("r{threads}.json"));
        let o = command(root())
            .args([
                "check",
                export,
                "--expect",
                arg(&expect),
                "--json",
                arg(&json),
            ])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        outputs.push(std::fs::read(&json).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    let drafted: Vec<Vec<u8>> = ["1", "4"]
        .iter()
        .map(|threads| {
            let out = tmp.path().join(format!("d{threads}.json"));
            let mut a: Vec<String> = vec!["expect".into(), "draft".into()];
            a.extend(baseline_runs());
            a.extend(["--out".into(), s(&out)]);
            let o = command(root())
                .args(&a)
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0));
            std::fs::read(&out).unwrap()
        })
        .collect();
    assert_eq!(drafted[0], drafted[1]);
}

#[test]
fn partials_with_expectations_merge_into_the_bytes_of_one_run() {
    let tmp = scratch();
    let Drafted { expect, band, .. } = drafted_band(tmp.path());

    let traces = [example("candidate-v1"), example("candidate-v2")];
    let outputs = |name: &str| -> Vec<String> {
        vec![
            "--band".into(),
            s(&band),
            "--json".into(),
            s(&tmp.path().join(format!("{name}.json"))),
            "--markdown".into(),
            s(&tmp.path().join(format!("{name}.md"))),
        ]
    };
    let mut single: Vec<String> = vec!["check".into()];
    single.extend(traces.iter().cloned());
    single.extend(["--expect".into(), s(&expect)]);
    single.extend(outputs("single"));
    let one = faultgate(&single);
    assert_eq!(one.status.code(), Some(1), "{}", stderr(&one));

    let parts: Vec<PathBuf> = (1..=2)
        .map(|k| {
            let dir = tmp.path().join(format!("p{k}"));
            let mut a: Vec<String> = vec!["check".into()];
            a.extend(traces.iter().cloned());
            a.extend([
                "--expect".into(),
                s(&expect),
                "--shard".into(),
                format!("{k}/2"),
            ]);
            a.extend(["--partial".into(), s(&dir)]);
            let o = faultgate(&a);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            dir
        })
        .collect();
    let mut merge: Vec<String> = vec!["merge".into(), s(&parts[0]), s(&parts[1])];
    merge.extend(outputs("merged"));
    let merged = faultgate(&merge);
    assert_eq!(merged.status.code(), Some(1), "{}", stderr(&merged));
    for ext in ["json", "md"] {
        let a = std::fs::read(tmp.path().join(format!("single.{ext}"))).unwrap();
        let b = std::fs::read(tmp.path().join(format!("merged.{ext}"))).unwrap();
        assert!(a == b, "{ext} differs");
    }
    assert!(
        String::from_utf8_lossy(&std::fs::read(tmp.path().join("single.json")).unwrap())
            .contains("\"expected_actions\"")
    );

    // A partial made without the expectations does not belong with these.
    let plain = tmp.path().join("plain");
    let mut a: Vec<String> = vec!["check".into()];
    a.extend(traces.iter().cloned());
    a.extend([
        "--shard".into(),
        "2/2".into(),
        "--partial".into(),
        s(&plain),
    ]);
    assert_eq!(faultgate(&a).status.code(), Some(0));
    let o = faultgate(&["merge", arg(&parts[0]), arg(&plain)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn explain_points_at_the_state_changing_call_not_a_look_up() {
    let tmp = scratch();
    let Drafted { expect, band, .. } = drafted_band(tmp.path());
    let mut a: Vec<String> = vec![
        "check".into(),
        example("candidate-v2"),
        "--band".into(),
        s(&band),
        "--expect".into(),
        s(&expect),
        "--explain".into(),
    ];
    a.extend(baseline_runs());
    let o = faultgate(&a);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  task-") && l.contains("(expected_actions)"))
        .collect();
    assert_eq!(lines.len(), 7, "{out}");
    // The look-ups differ from run to run; the explanation names the call that changes state.
    assert!(lines.iter().all(|l| !l.contains("get_")), "{out}");
    let task11 = lines.iter().find(|l| l.starts_with("  task-11 ")).unwrap();
    assert!(
        task11.contains("missing_call") && task11.contains("called send_certificate("),
        "{task11}"
    );
}
