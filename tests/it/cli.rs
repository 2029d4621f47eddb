//! End-to-end runs of the `faultgate` binary on the shipped examples and on small crafted inputs.

use crate::common;
use crate::common::ScratchDir;

use common::{faultgate, stderr, stdout};
use std::path::Path;
use std::process::Command;

fn temp_dir(name: &str) -> ScratchDir {
    ScratchDir::named(&format!("cli-{name}"))
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// stdout without the elapsed time that ends the summary line.
fn without_elapsed(out: &str) -> String {
    out.lines()
        .map(|l| match l.rsplit_once(" · ") {
            Some((head, tail)) if tail.ends_with('s') && l.contains("traces failed") => head,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn table_prints_all_rows_the_failing_ones_or_none_and_always_the_summary_and_gate() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "examples/gate/candidate_gpt.json",
            "--band",
            "examples/gate/band.json",
        ];
        args.extend_from_slice(extra);
        let o = faultgate(&args);
        (o.status.code(), without_elapsed(&stdout(&o)), stderr(&o))
    };
    let (code, all, notes) = run(&[]);
    assert_eq!(run(&["--table", "all"]), (code, all.clone(), notes.clone()));
    // `-q` leaves out the notes about skipped checks, and nothing else.
    assert!(notes.contains("note: "), "{notes}");
    let unnoted: String = notes
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("note: "))
        .collect();
    assert_eq!(run(&["-q", "--table=all"]), (code, all.clone(), unnoted));
    let lines: Vec<&str> = all.lines().collect();
    let blank = lines.iter().position(|l| l.is_empty()).unwrap();
    let (table, tail) = (&lines[..blank], &lines[blank + 1..]);
    assert!(tail[0].contains(" traces failed · "), "{all}");
    assert!(tail.iter().any(|l| l.starts_with("gate: ")), "{all}");
    let failing: Vec<&str> = table
        .iter()
        .enumerate()
        .filter(|(i, l)| *i < 2 || l.contains("FAIL"))
        .map(|(_, l)| *l)
        .collect();
    assert!(failing.len() > 2 && failing.len() < table.len(), "{all}");

    // The failing rows begin with the lines the whole table prints for them and end with the first
    // check that fired and its reason, under a `reason` header; the rest is unchanged.
    let (failing_code, shown, failing_notes) = run(&["--table", "failing"]);
    assert_eq!((failing_code, &failing_notes), (code, &notes));
    let shown: Vec<&str> = shown.lines().collect();
    assert_eq!(shown.len(), failing.len() + 1 + tail.len(), "{shown:?}");
    assert_eq!(shown[0], format!("{}  reason", failing[0]));
    assert_eq!(shown[failing.len()..], [&[""][..], tail].concat());
    let reason_at = shown[0].len() - "reason".len();
    assert_eq!(
        &shown[2][reason_at..],
        "search_loop: no answer, 24 steps (cap), 62% empty results"
    );
    for (row, whole) in shown[2..failing.len()].iter().zip(&failing[2..]) {
        assert!(row.starts_with(whole), "{row}");
        assert!(row[whole.len()..reason_at].trim().is_empty(), "{row}");
        let (check, reason) = row[reason_at..].split_once(": ").expect("check: reason");
        assert!(
            row[..reason_at].contains("FAIL") && !reason.is_empty(),
            "{check}: {row}"
        );
    }
    assert_eq!(run(&["--table", "none"]), (code, tail.join("\n"), notes));
    let bad = faultgate(&["check", "examples/traces.json", "--table", "some"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn check_on_the_shipped_examples_prints_the_table_and_fails() {
    let o = faultgate(&["check", "examples/traces.json"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "trace         search_loop       abstention        policy            repeated_call     unrecovered_tool_error  context_overflow"
    );
    assert_eq!(
        lines[2],
        "fc2cdab304bd  FAIL 1.00         ok   1.00         ok   1.00         ok   1.00         ok   1.00         ok   1.00       "
    );
    assert!(lines[8].starts_with(
        "2/5 traces failed · search_loop=1, abstention=1, policy=0, repeated_call=0, unrecovered_tool_error=0, context_overflow=0 · judge none · "
    ));
    assert!(
        stderr(&o).contains(
            "note: wrong_answer skipped — it needs --golden golden.json (expected answers)"
        )
    );
}

#[test]
fn json_report_carries_the_reasons() {
    let dir = temp_dir("json");
    let report = dir.join("r.json");
    let o = faultgate(&[
        "check",
        "examples/traces.json",
        "--golden",
        "examples/golden.json",
        "--json",
        path_str(&report),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["traces"], 5);
    assert_eq!(v["fired"]["wrong_answer"], 2);
    assert_eq!(v["fired"]["truncation"], 1);
    let reasons: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert!(reasons.contains(&"no answer, 12 steps (cap), 83% empty results"));
    assert!(reasons.contains(&"answer says 'no matching source'"));
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let dir = temp_dir("bad");
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        "{\n \"resourceSpans\": [\n  {\"scopeSpans\" [] }\n ]\n}",
    )
    .unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, r#"{"resourceSpans": []}"#).unwrap();
    let cases = [
        (
            vec!["check", "no/such/file.json"],
            "faultgate: no such file: no/such/file.json",
        ),
        (
            vec!["check", path_str(&broken)],
            "expected `:` at line 3 column 17",
        ),
        (vec!["check", path_str(&empty)], "no traces found in"),
        (
            vec!["check", "examples/traces.json", "--check", "nope"],
            "faultgate: unknown check 'nope'; available: search_loop",
        ),
        (
            vec![
                "check",
                "examples/traces.json",
                "--golden",
                "examples/traces.json",
            ],
            "golden: expected a JSON object",
        ),
        (
            vec!["check", "examples/traces.json", "--check", "wrong_answer"],
            "faultgate: nothing to run: wrong_answer need --golden golden.json",
        ),
    ];
    for (args, expected) in cases {
        let o = faultgate(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        let last = err.lines().last().unwrap_or_default();
        assert!(last.contains(expected), "{args:?}: {err}");
        assert!(stdout(&o).is_empty(), "{args:?} printed to stdout");
    }
}

#[test]
fn a_broken_file_in_a_directory_is_named_after_the_rest_is_read() {
    let dir = temp_dir("dir");
    std::fs::copy("examples/traces.json", dir.join("a.json")).unwrap();
    std::fs::write(dir.join("b.json"), "{\"resourceSpans\": [}").unwrap();
    let o = faultgate(&["check", path_str(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("b.json"), "{}", stderr(&o));
    assert!(stderr(&o).contains("(byte 19)"), "{}", stderr(&o));
}

#[test]
fn lists_of_exports_json_lines_and_directories_read_the_same_traces() {
    let dir = temp_dir("shapes");
    let export: serde_json::Value =
        serde_json::from_slice(&std::fs::read("examples/traces.json").unwrap()).unwrap();
    // Split the one export into one export per resourceSpans element... and per span, so traces cross lines.
    let spans: Vec<serde_json::Value> = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .clone();
    let one = |chunk: &[serde_json::Value]| serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": chunk}]}]});
    let halves: Vec<serde_json::Value> = spans.chunks(spans.len() / 2 + 1).map(one).collect();
    std::fs::write(
        dir.join("list.json"),
        serde_json::to_string(&halves).unwrap(),
    )
    .unwrap();
    let lines: Vec<String> = halves
        .iter()
        .map(|h| serde_json::to_string(h).unwrap())
        .collect();
    std::fs::write(dir.join("lines.jsonl"), lines.join("\n") + "\n").unwrap();
    let reference = faultgate(&[
        "check",
        "examples/traces.json",
        "--json",
        path_str(&dir.join("ref.json")),
    ]);
    for input in ["list.json", "lines.jsonl"] {
        let out = dir.join(format!("{input}.report"));
        let o = faultgate(&[
            "check",
            path_str(&dir.join(input)),
            "--json",
            path_str(&out),
        ]);
        assert_eq!(
            o.status.code(),
            reference.status.code(),
            "{input}: {}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(dir.join("ref.json")).unwrap(),
            "{input}"
        );
    }
}

#[test]
fn reports_are_byte_identical_whatever_the_thread_count() {
    let dir = temp_dir("threads");
    let mut outputs = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = dir.join(format!("r{threads}.json"));
        let o = Command::new(env!("CARGO_BIN_EXE_faultgate"))
            .args(["check", "examples/gate", "--json", path_str(&out)])
            .env("RAYON_NUM_THREADS", threads)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        // examples/gate holds band.json and golden.json too: they are not exports, so they are
        // skipped with a warning and the traces beside them are checked.
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("examples/gate/band.json (no trace format)"),
            "{}",
            stderr(&o)
        );
        let o = Command::new(env!("CARGO_BIN_EXE_faultgate"))
            .args([
                "check",
                "examples/gate/baseline_glm_run1.json",
                "examples/gate/candidate_gpt.json",
                "examples/traces.json",
                "--json",
                path_str(&out),
            ])
            .env("RAYON_NUM_THREADS", threads)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn an_unwritable_report_exits_2_and_leaves_no_file() {
    let dir = temp_dir("unwritable");
    let blocker = dir.join("file");
    std::fs::write(&blocker, "x").unwrap();
    let target = blocker.join("r.json");
    let o = faultgate(&["check", "examples/traces.json", "--json", path_str(&target)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("faultgate: cannot write output:"),
        "{}",
        stderr(&o)
    );
    assert!(!target.exists());
}

#[test]
fn baseline_then_gate_on_the_shipped_runs() {
    let dir = temp_dir("gate");
    let band = dir.join("band.json");
    let o = faultgate(&[
        "baseline",
        "examples/gate/baseline_glm_run1.json",
        "examples/gate/baseline_glm_run2.json",
        "--out",
        path_str(&band),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("band [0.93, 0.93] over 30 scenarios × 2 runs · 26 clean in every run")
    );
    let expect = [
        ("candidate_gpt", 1, "gate: FAIL · clean rate 0.40"),
        ("candidate_qwen", 1, "gate: FAIL · clean rate 0.70"),
        ("baseline_glm_run2", 0, "gate: PASS · clean rate 0.93"),
    ];
    for (run, code, line) in expect {
        let o = faultgate(&[
            "check",
            &format!("examples/gate/{run}.json"),
            "--band",
            path_str(&band),
        ]);
        assert_eq!(o.status.code(), Some(code), "{run}");
        assert!(stdout(&o).contains(line), "{run}: {}", stdout(&o));
    }
    std::fs::write(dir.join("empty.json"), "{}").unwrap();
    let o = faultgate(&[
        "check",
        "examples/traces.json",
        "--band",
        path_str(&dir.join("empty.json")),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn checks_lists_every_check() {
    let o = faultgate(&["checks"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("search_loop      rule   Run ended with no answer at the step budget"));
    // One line per registered check, in the registry's order.
    let listed: Vec<&str> = out
        .lines()
        .map(|line| line.split(' ').next().unwrap_or_default())
        .collect();
    let registered: Vec<&str> = faultgate::checks::checks()
        .map(faultgate::checks::Check::name)
        .collect();
    assert_eq!(listed, registered);
}

#[test]
fn calibrate_scores_the_shipped_labels() {
    let dir = temp_dir("calibrate");
    let report = dir.join("cal.json");
    let o = faultgate(&[
        "calibrate",
        "examples/traces.json",
        "--labels",
        "examples/labels.json",
        "--golden",
        "examples/golden.json",
        "--json",
        path_str(&report),
        "--parquet",
        path_str(&dir.join("pq")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let row = out.lines().find(|l| l.starts_with("wrong_answer")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // n, positives, TP, FP, TN, FN: the abstaining trace is a false positive of wrong_answer.
    assert_eq!(&cells[1..7], ["4", "1", "1", "1", "2", "0"]);
    assert!(out.contains("1 label(s) for checks that did not run: wrong_direction"));
    assert!(dir.join("pq/calibration_checks.parquet").exists());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(v.is_object());
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    use std::io::Read;
    // Enough distinct traces that the table outgrows the pipe's buffer.
    let dir = temp_dir("pipe");
    let mut export: serde_json::Value =
        serde_json::from_slice(&std::fs::read("examples/gate/candidate_gpt.json").unwrap())
            .unwrap();
    let spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .clone();
    let copies: Vec<serde_json::Value> = (0..40)
        .flat_map(|k| {
            spans.iter().map(move |span| {
                let mut span = span.clone();
                let id = format!("{}{k:03}", span["traceId"].as_str().unwrap());
                span["traceId"] = serde_json::Value::String(id);
                span
            })
        })
        .collect();
    export["resourceSpans"][0]["scopeSpans"][0]["spans"] = serde_json::Value::Array(copies);
    let big = dir.join("big.json");
    std::fs::write(&big, serde_json::to_vec(&export).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .args(["check", path_str(&big)])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then hang up: the table is still being written.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("Broken pipe"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
}
