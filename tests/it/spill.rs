//! The verdict spill: a run's verdicts live in an unlinked file of the temporary directory (`TMPDIR`),
//! never under a name, so nothing is left there whatever way the run ends; and the table and summary
//! written from the spill are those of the run read whole.

use crate::common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{arg, command, scratch, small_trace, stderr, stdout, write_traces};

/// The environment variable that keeps a run's verdicts in memory instead of spilling them.
const SPILL: &str = "FAULTGATE_SPILL";

/// Its value for a run compared with a spilled one: `off` for the run read whole.
fn spill_setting(whole: bool) -> &'static str {
    if whole { "off" } else { "on" }
}

/// stdout without the elapsed time of the summary line.
fn without_time(out: &str) -> String {
    out.lines()
        .map(|l| match l.rfind(" · ") {
            Some(at) if l.ends_with('s') && l.contains("traces failed") => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_table_and_summary_written_from_the_spill_are_those_of_the_run_read_whole() {
    let dir = scratch();
    let a = write_traces(&dir.path().join("a.jsonl"), 0, 300);
    let b = write_traces(&dir.path().join("b.jsonl"), 300, 500);
    // A trace split across files: the identity rule takes it out of both and checks it once, merged.
    let split = |i: usize| small_trace("feedfeedfeedfeedfeedfeedfeedfeed", i);
    let lines: Vec<String> = split(1).lines().map(String::from).collect();
    std::fs::write(dir.path().join("c.jsonl"), &lines[0]).unwrap();
    let mut b_text = std::fs::read_to_string(&b).unwrap();
    b_text.push_str(&split(1));
    std::fs::write(&b, b_text).unwrap();
    let c = dir.path().join("c.jsonl");
    let files = [arg(&a), arg(&b), arg(&c)];
    for table in ["all", "failing", "none"] {
        let mut outputs = Vec::new();
        for threads in ["1", "2", "4"] {
            let run = |whole: bool| {
                let mut args = vec!["check", "--table", table];
                args.extend(files);
                let got = command(dir.path())
                    .args(&args)
                    .env("RAYON_NUM_THREADS", threads)
                    .env(SPILL, spill_setting(whole))
                    .output()
                    .unwrap();
                assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
                without_time(&stdout(&got))
            };
            let streamed = run(false);
            assert!(
                streamed == run(true),
                "--table {table}, {threads} thread(s)"
            );
            assert!(streamed.contains("/501 traces failed"), "{streamed}");
            outputs.push(streamed);
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]), "--table {table}");
    }
}

#[test]
fn the_json_report_written_from_the_spill_is_the_bytes_of_the_run_read_whole_at_any_thread_count() {
    let dir = scratch();
    let a = write_traces(&dir.path().join("a.jsonl"), 0, 700);
    let b = write_traces(&dir.path().join("b.jsonl"), 700, 900);
    let clean = dir.path().join("clean.jsonl");
    std::fs::write(&clean, small_trace(&format!("{:032x}", 7), 0)).unwrap();
    let mut reports = Vec::new();
    for threads in ["1", "2", "4"] {
        let run = |files: &[&str], name: &str, whole: bool| {
            let json = dir.path().join(name);
            let mut args = vec!["check", "--table", "none"];
            args.extend(files);
            args.extend(["--json", arg(&json)]);
            let got = command(dir.path())
                .args(&args)
                .env("RAYON_NUM_THREADS", threads)
                .env(SPILL, spill_setting(whole))
                .output()
                .unwrap();
            assert!(got.status.code().is_some_and(|c| c < 2), "{}", stderr(&got));
            std::fs::read(&json).unwrap()
        };
        for files in [vec![arg(&a), arg(&b)], vec![arg(&clean)]] {
            let streamed = run(&files, "streamed.json", false);
            let whole = run(&files, "whole.json", true);
            assert_eq!(
                String::from_utf8(streamed.clone()).unwrap(),
                String::from_utf8(whole).unwrap(),
                "{files:?}, {threads} thread(s)"
            );
            reports.push(streamed);
        }
    }
    assert!(reports.iter().step_by(2).all(|r| r == &reports[0]));
    assert!(String::from_utf8_lossy(&reports[1]).contains("\"failed_traces\": []"));
}

/// The spill files the process `pid` holds open: (the path it was created at, whether it is unlinked).
fn open_files_in(pid: u32, dir: &Path) -> Vec<(String, bool)> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let prefix = dir.to_string_lossy().into_owned();
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .filter(|target| target.starts_with(&prefix))
        .map(|target| {
            let unlinked = target.ends_with(" (deleted)");
            (target, unlinked)
        })
        .collect()
}

/// Waits for `child` while watching the spill directory: it stays empty, and the process holds its
/// spill open there, unlinked. Returns whether the spill was seen, once the run ended (or `stop_when_seen`
/// was called on it).
fn watch(child: &mut Child, spill: &Path, mut when_seen: impl FnMut(&mut Child)) -> bool {
    let mut seen = false;
    let start = Instant::now();
    loop {
        assert_eq!(
            std::fs::read_dir(spill).unwrap().count(),
            0,
            "nothing in the spill directory has a name while the run runs"
        );
        if !seen {
            let open = open_files_in(child.id(), spill);
            assert!(open.iter().all(|(_, unlinked)| *unlinked), "{open:?}");
            if !open.is_empty() {
                seen = true;
                when_seen(child);
            }
        }
        if child.try_wait().unwrap().is_some() {
            return seen;
        }
        assert!(start.elapsed() < Duration::from_secs(300), "the run ends");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn spawn(dir: &Path, spill: &Path, args: &[&str]) -> Child {
    command(dir)
        .args(args)
        .env("TMPDIR", spill)
        .env("RAYON_NUM_THREADS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn the_spill_is_an_unlinked_file_of_tmpdir_and_nothing_is_left_however_the_run_ends() {
    let dir = scratch();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    // Enough traces for the run to last while it is watched and stopped.
    let big = write_traces(&dir.path().join("big.jsonl"), 0, 20_000);
    let clean = dir.path().join("clean.jsonl");
    let clean_text: String = (0..10_000)
        .map(|i| small_trace(&format!("{:032x}", i + 1), 4 * i))
        .collect();
    std::fs::write(&clean, clean_text).unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    // A directory where the JSON report goes: the write fails after the run.
    let planted = dir.path().join("planted.json");
    std::fs::create_dir(&planted).unwrap();

    let runs: [(&str, Vec<&str>, Option<i32>); 4] = [
        ("clean", vec!["check", arg(&clean)], Some(0)),
        ("failing", vec!["check", arg(&big)], Some(1)),
        ("bad input", vec!["check", arg(&big), arg(&bad)], Some(2)),
        (
            "failed write",
            vec!["check", arg(&big), "--json", arg(&planted)],
            Some(2),
        ),
    ];
    for (what, args, code) in runs {
        let mut child = spawn(dir.path(), &spill, &args);
        let seen = watch(&mut child, &spill, |_| {});
        let status = child.wait().unwrap();
        assert_eq!(status.code(), code, "{what}");
        assert!(
            seen,
            "{what}: the run spilled its verdicts to TMPDIR, unlinked"
        );
        assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "{what}");
    }

    // Stopped mid-way by SIGTERM, SIGINT or SIGKILL.
    for signal in [
        Some(rustix::process::Signal::TERM),
        Some(rustix::process::Signal::INT),
        None,
    ] {
        // On a loaded machine the run can end between the spill being seen and the signal being
        // sent; such a run still must leave nothing, and is started again until one is stopped.
        let stopped = (0..5).any(|_| {
            let mut child = spawn(dir.path(), &spill, &["check", arg(&big)]);
            let seen = watch(&mut child, &spill, |child| match signal {
                Some(signal) => {
                    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a pid");
                    rustix::process::kill_process(pid, signal).expect("signal the run");
                }
                None => child.kill().expect("kill the run"),
            });
            let status = child.wait().unwrap();
            assert!(seen, "{signal:?}");
            assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "{signal:?}");
            status.code().is_none()
        });
        assert!(
            stopped,
            "{signal:?}: one of the runs was stopped by the signal"
        );
    }
}

#[test]
fn spill_dir_puts_the_spill_there_instead_of_tmpdir() {
    let dir = scratch();
    let tmpdir = dir.path().join("tmp");
    let spill = dir.path().join("spill");
    std::fs::create_dir(&tmpdir).unwrap();
    std::fs::create_dir(&spill).unwrap();
    let big = write_traces(&dir.path().join("big.jsonl"), 0, 20_000);
    let mut child = spawn(
        dir.path(),
        &tmpdir,
        &["check", arg(&big), "--spill-dir", arg(&spill)],
    );
    let mut in_tmpdir = Vec::new();
    let seen = watch(&mut child, &spill, |child| {
        in_tmpdir = open_files_in(child.id(), &tmpdir);
    });
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert!(
        seen,
        "the run spilled its verdicts to --spill-dir, unlinked"
    );
    assert!(in_tmpdir.is_empty(), "{in_tmpdir:?}");
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&tmpdir).unwrap().count(), 0);

    // A directory that cannot hold it: exit 2 before the run, one line naming it.
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let missing = dir.path().join("missing");
    for (place, why) in [(&missing, "no such directory"), (&file, "not a directory")] {
        let got = command(dir.path())
            .args(["check", arg(&big), "--spill-dir", arg(place)])
            .output()
            .unwrap();
        assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
        let errors: Vec<String> = stderr(&got)
            .lines()
            .filter(|l| !l.starts_with("note: "))
            .map(String::from)
            .collect();
        assert_eq!(
            errors,
            [format!("faultgate: --spill-dir {}: {why}", arg(place))]
        );
        assert!(stdout(&got).is_empty(), "{}", stdout(&got));
    }
}

/// A run directory holding `files` (shipped gate examples): every scenario key then has one trace
/// per file.
fn trial_run(dir: &Path, name: &str, files: &[&str]) -> String {
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    for (i, f) in files.iter().enumerate() {
        std::fs::copy(common::root().join(f), run.join(format!("trial{i}.json"))).unwrap();
    }
    arg(&run).to_string()
}

#[test]
fn gated_outputs_counted_from_the_spill_are_those_of_the_run_read_whole() {
    const RUN1: &str = "examples/gate/baseline_glm_run1.json";
    const RUN2: &str = "examples/gate/baseline_glm_run2.json";
    const GPT: &str = "examples/gate/candidate_gpt.json";
    const QWEN: &str = "examples/gate/candidate_qwen.json";
    let dir = scratch();
    let d = dir.path();
    let root = |f: &str| common::root().join(f).to_str().unwrap().to_string();
    let baseline = |name: &str, runs: &[String], extra: &[&str]| -> String {
        let band = d.join(name);
        let mut args = vec!["baseline".to_string()];
        args.extend(runs.iter().cloned());
        args.extend(["--out".to_string(), arg(&band).to_string()]);
        args.extend(extra.iter().map(std::string::ToString::to_string));
        let got = command(d).args(&args).output().unwrap();
        assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
        arg(&band).to_string()
    };
    let runs = [root(RUN1), root(RUN2)];
    let band = baseline("band.json", &runs, &["--per-scenario"]);
    let trials = [
        trial_run(d, "base1", &[RUN1, RUN2]),
        trial_run(d, "base2", &[RUN2, RUN1]),
    ];
    let pass_k_band = baseline("pass_k_band.json", &trials, &["--pass-k"]);
    let trial_candidate = trial_run(d, "candidate", &[GPT, RUN1, QWEN]);
    // An outcome per scenario of the shipped runs: the outcome block comes from the spill too.
    let mut keys: Vec<String> = Vec::new();
    for f in [RUN1, GPT] {
        let text = std::fs::read_to_string(common::root().join(f)).unwrap();
        // `"key": "gen_ai.agent.id", "value": {"stringValue": "<key>"`
        for part in text.split("\"gen_ai.agent.id\"").skip(1) {
            if let Some(key) = part.split('"').nth(5) {
                keys.push(key.to_string());
            }
        }
    }
    let outcomes: serde_json::Map<String, serde_json::Value> = keys
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 5 != 0)
        .map(|(i, k)| (k.clone(), serde_json::Value::from(i % 3 != 0)))
        .collect();
    let outcomes_file = d.join("outcomes.json");
    std::fs::write(&outcomes_file, serde_json::to_string(&outcomes).unwrap()).unwrap();
    let policy = root("examples/gate/policy.json");
    let cases: Vec<Vec<String>> = vec![
        vec![root(GPT), "--band".into(), band.clone()],
        vec![
            root(QWEN),
            "--band".into(),
            band.clone(),
            "--gate".into(),
            "both".into(),
        ],
        vec![
            root(GPT),
            "--band".into(),
            band.clone(),
            "--policy".into(),
            policy,
        ],
        vec![
            root(GPT),
            "--band".into(),
            band.clone(),
            "--outcomes".into(),
            arg(&outcomes_file).into(),
        ],
        vec![
            trial_candidate.clone(),
            "--band".into(),
            pass_k_band,
            "--metric".into(),
            "pass^k".into(),
            "--pass-k".into(),
        ],
        vec![trial_candidate, "--pass-k".into()],
    ];
    for case in &cases {
        let mut seen: Vec<(String, Vec<u8>, Vec<u8>)> = Vec::new();
        for threads in ["1", "2", "4"] {
            let run = |whole: bool| {
                let tag = if whole { "whole" } else { "streamed" };
                let json = d.join(format!("{tag}.json"));
                let events = d.join(format!("{tag}.otlp.json"));
                let mut args: Vec<String> = vec!["check".into()];
                args.extend(case.iter().cloned());
                args.extend([
                    "--json".into(),
                    arg(&json).into(),
                    "--otlp-events".into(),
                    arg(&events).into(),
                ]);
                let got = command(d)
                    .args(&args)
                    .env("RAYON_NUM_THREADS", threads)
                    .env(SPILL, spill_setting(whole))
                    .output()
                    .unwrap();
                assert!(
                    got.status.code().is_some_and(|c| c < 2),
                    "{case:?}: {}",
                    stderr(&got)
                );
                let out = without_time(&stdout(&got))
                    .replace(arg(&json), "REPORT")
                    .replace(arg(&events), "EVENTS");
                (
                    format!("{out}\n{}", stderr(&got)),
                    std::fs::read(&json).unwrap(),
                    std::fs::read(&events).unwrap(),
                )
            };
            let streamed = run(false);
            let whole = run(true);
            assert_eq!(streamed.0, whole.0, "{case:?}, {threads} thread(s)");
            assert!(
                streamed.1 == whole.1,
                "{case:?}, {threads} thread(s): the JSON reports differ"
            );
            assert!(
                streamed.2 == whole.2,
                "{case:?}, {threads} thread(s): the evaluation events differ"
            );
            seen.push(streamed);
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{case:?}");
        let report: serde_json::Value = serde_json::from_slice(&seen[0].1).unwrap();
        let gated = case.iter().any(|a| a == "--band");
        assert_eq!(report.get("gate").is_some(), gated, "{case:?}");
        if case.iter().any(|a| a == "--outcomes") {
            assert!(report.get("outcome").is_some(), "{case:?}");
        }
        if case.iter().any(|a| a == "--pass-k") {
            assert!(report.get("pass_k").is_some(), "{case:?}");
        }
    }
}

/// Input files for the output tests: two files of small traces, a trace whose spans are split across
/// a third file and the second (the identity rule checks it once, merged, after every file), and
/// PII in its prompt and answer (redaction is on, as by default). Returns the files' paths.
fn output_inputs(dir: &Path) -> Vec<String> {
    let a = write_traces(&dir.join("a.jsonl"), 0, 1700);
    let b = write_traces(&dir.join("b.jsonl"), 1700, 2200);
    let split = small_trace("feedfeedfeedfeedfeedfeedfeedfeed", 1)
        .replace("order 1?", "order 1? Mail me at jane.doe@example.com")
        .replace(
            "I don't know where order 1 is right now.",
            "I don't know where order 1 is; mail jane.doe@example.com <&>",
        );
    let export: serde_json::Value = serde_json::from_str(&split).unwrap();
    let spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .clone();
    let with_spans = |spans: Vec<serde_json::Value>| {
        let mut one = export.clone();
        one["resourceSpans"][0]["scopeSpans"][0]["spans"] = serde_json::Value::Array(spans);
        format!("{one}\n")
    };
    let c = dir.join("c.jsonl");
    std::fs::write(&c, with_spans(vec![spans[0].clone()])).unwrap();
    let mut b_text = std::fs::read_to_string(&b).unwrap();
    b_text.push_str(&with_spans(vec![spans[1].clone()]));
    std::fs::write(&b, b_text).unwrap();
    [a, b, c].iter().map(|p| arg(p).to_string()).collect()
}

/// Runs `check` over `files` at `threads` with `flags`, each an output flag and the name of the file
/// or folder it writes in `out`; returns the bytes of the files named by `read` (paths in `out`).
/// With `whole`, the verdicts stay in memory and the outputs are written from them.
fn run_outputs(
    dir: &Path,
    files: &[String],
    extra: &[&str],
    threads: &str,
    flags: &[(&str, &str)],
    read: &[&str],
    whole: bool,
) -> Vec<(String, Vec<u8>)> {
    let out = dir.join(if whole { "whole" } else { "streamed" });
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir(&out).unwrap();
    let mut args: Vec<String> = vec!["check".into(), "--table".into(), "none".into()];
    args.extend(files.iter().cloned());
    args.extend(extra.iter().map(ToString::to_string));
    for (flag, name) in flags {
        args.push((*flag).into());
        args.push(arg(&out.join(name)).to_string());
    }
    let got = command(dir)
        .args(&args)
        .env("RAYON_NUM_THREADS", threads)
        .env(SPILL, spill_setting(whole))
        // The audit's creation time, pinned so the folders compare.
        .env("SOURCE_DATE_EPOCH", "1758000000")
        .output()
        .unwrap();
    // One trace in four abstains: the run fails, unless it writes a partial instead of a verdict.
    let partial = flags.iter().any(|(flag, _)| *flag == "--partial");
    let code = if partial { 0 } else { 1 };
    assert_eq!(got.status.code(), Some(code), "{}", stderr(&got));
    read.iter()
        .map(|name| {
            let bytes = std::fs::read(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name.to_string(), bytes)
        })
        .collect()
}

/// Each output named in `flags` written from the spill is the bytes of the same output written from the
/// run read whole, at 1, 2 and 4 threads, and the same at every thread count; `extra` are more
/// arguments of both runs.
fn assert_streamed_outputs_are_whole_run_bytes(
    flags: &[(&str, &str)],
    read: &[&str],
    extra: &[&str],
) -> String {
    let dir = scratch();
    let files = output_inputs(dir.path());
    let mut first: Option<Vec<(String, Vec<u8>)>> = None;
    for threads in ["1", "2", "4"] {
        let streamed = run_outputs(dir.path(), &files, extra, threads, flags, read, false);
        let whole = run_outputs(dir.path(), &files, extra, threads, flags, read, true);
        for ((name, s), (_, w)) in streamed.iter().zip(&whole) {
            assert!(
                s == w,
                "{name}, {threads} thread(s): streamed\n{}\nwhole\n{}",
                String::from_utf8_lossy(s),
                String::from_utf8_lossy(w)
            );
        }
        match &first {
            None => first = Some(streamed),
            Some(first) => assert!(first == &streamed, "{threads} thread(s)"),
        }
    }
    let first = first.unwrap();
    let text: String = first
        .iter()
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .collect();
    assert!(
        !text.contains("jane.doe@example.com"),
        "redaction applies to what is written from the spill"
    );
    text
}

/// The id of the trace whose spans are split across files.
const SPLIT_TRACE: &str = "feedfeedfeedfeedfeedfeedfeedfeed";

#[test]
fn junit_written_from_the_spill_is_the_bytes_of_the_run_read_whole() {
    let text = assert_streamed_outputs_are_whole_run_bytes(
        &[("--junit", "junit.xml")],
        &["junit.xml"],
        &[],
    );
    assert!(text.contains(SPLIT_TRACE), "the merged trace is written");
}

#[test]
fn a_partial_written_from_the_spill_is_the_bytes_of_the_run_read_whole() {
    let text = assert_streamed_outputs_are_whole_run_bytes(
        &[("--partial", "part")],
        &[
            "part/verdicts.arrow",
            "part/steps.json",
            "part/manifest.json",
        ],
        &[],
    );
    assert!(text.contains(SPLIT_TRACE), "the merged trace is written");
}

#[test]
fn parquet_written_from_the_spill_is_the_bytes_of_the_run_read_whole() {
    let text = assert_streamed_outputs_are_whole_run_bytes(
        &[("--parquet", "parquet")],
        &["parquet/verdicts.parquet", "parquet/traces.parquet"],
        &[],
    );
    assert!(text.contains(SPLIT_TRACE), "the merged trace is written");
}

#[test]
fn the_audit_folder_written_from_the_spill_is_the_bytes_of_the_run_read_whole() {
    let text = assert_streamed_outputs_are_whole_run_bytes(
        &[("--audit", "audit")],
        &["audit/failing_traces.json", "audit/verdict.json"],
        &[],
    );
    assert!(text.contains(SPLIT_TRACE), "the merged trace is written");
}

#[test]
fn markdown_and_html_written_from_the_spill_are_the_bytes_of_the_run_read_whole() {
    let dir = scratch();
    // Every trace calls a tool the policy does not allow: more policy blocks than the Markdown lists,
    // and more failing rows than the HTML page does.
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"allow": ["search"]}"#).unwrap();
    let text = assert_streamed_outputs_are_whole_run_bytes(
        &[("--markdown", "report.md"), ("--html", "report.html")],
        &["report.md", "report.html"],
        &["--policy", arg(&policy)],
    );
    // Both lists are cut: the Markdown's policy table and failing traces, the HTML's failing rows.
    assert!(text.contains("Policy violated in 2201 trace(s)"), "{text}");
    assert!(
        text.contains("### Failing traces (first 20 of 2201)"),
        "{text}"
    );
    assert!(text.contains("First 2000 of "), "{text}");
}

#[test]
fn the_coloured_table_written_from_the_spill_is_that_of_the_run_read_whole() {
    let dir = scratch();
    let files = output_inputs(dir.path());
    let mut tables = Vec::new();
    for threads in ["1", "2", "4"] {
        let run = |whole: bool| {
            let mut args = vec!["check", "--color", "always"];
            args.extend(files.iter().map(String::as_str));
            let got = command(dir.path())
                .args(&args)
                .env("RAYON_NUM_THREADS", threads)
                .env(SPILL, spill_setting(whole))
                .output()
                .unwrap();
            assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
            without_time(&stdout(&got))
        };
        let streamed = run(false);
        assert!(streamed == run(true), "{threads} thread(s)");
        assert!(streamed.contains("\x1b[31mFAIL\x1b[0m 1.00"));
        tables.push(streamed);
    }
    assert!(tables.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn faultgate_spill_off_keeps_the_verdicts_in_memory() {
    let dir = scratch();
    let traces = write_traces(&dir.path().join("t.jsonl"), 0, 40);
    let missing = dir.path().join("missing");
    // A temporary directory that does not exist: the spill cannot be made, so a spilling run stops
    // with exit 2 naming it, and a run that keeps its verdicts in memory never needs it.
    for (setting, code) in [(None, 2), (Some("on"), 2), (Some("off"), 1)] {
        let mut cmd = command(dir.path());
        cmd.args(["check", arg(&traces)]).env("TMPDIR", &missing);
        if let Some(value) = setting {
            cmd.env(SPILL, value);
        }
        let got = cmd.output().unwrap();
        assert_eq!(
            got.status.code(),
            Some(code),
            "{setting:?}: {}",
            stderr(&got)
        );
        if code == 2 {
            assert!(stderr(&got).contains("verdict spill"), "{}", stderr(&got));
        } else {
            assert!(
                stdout(&got).contains("/40 traces failed"),
                "{}",
                stdout(&got)
            );
        }
    }
}
