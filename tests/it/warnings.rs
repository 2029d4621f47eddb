//! What a run says on stderr besides its table: warnings summed up by kind (every one with
//! `--verbose` and in the JSON report), and notes that name only what this build can run.

use crate::common;

use common::{arg, command, faultgate, read_json, root, scratch, stderr};

/// Three trace ids each used by two different Who&When logs: three warnings of one kind.
const CLASHES: [&str; 2] = [
    "tests/fixtures/who_and_when_clashes/algorithm-generated",
    "tests/fixtures/who_and_when_clashes/hand-crafted",
];

fn warning_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("warning: ")).collect()
}

#[test]
fn warnings_of_one_kind_are_one_line_with_their_count_and_first_and_verbose_lists_each() {
    let dir = scratch();
    let json = dir.path().join("report.json");
    let out = faultgate(&["check", CLASHES[0], CLASHES[1], "--json", arg(&json)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let every: Vec<String> = read_json(&json)["input_warnings"]
        .as_array()
        .expect("input_warnings")
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert_eq!(every.len(), 3, "{every:?}");
    assert!(
        every[0].starts_with("trace id ")
            && every[0].contains("algorithm-generated/41.json.zst and ")
            && every[0].contains("hand-crafted/24.json.zst (span "),
        "{every:?}"
    );
    let err = stderr(&out);
    assert_eq!(
        warning_lines(&err),
        [format!(
            "warning: 3 trace ids used by different traces in two files, kept apart (--verbose lists each); first: {}",
            every[0]
        )]
    );

    let out = faultgate(&["check", CLASHES[0], CLASHES[1], "--verbose"]);
    let err = stderr(&out);
    let shown: Vec<String> = every.iter().map(|w| format!("warning: {w}")).collect();
    assert_eq!(warning_lines(&err), shown);
}

#[test]
fn the_summed_up_warnings_are_the_same_bytes_whatever_the_thread_count() {
    let runs: Vec<Vec<u8>> = ["1", "2", "4"]
        .into_iter()
        .map(|threads| {
            command(root())
                .args(["check", CLASHES[0], CLASHES[1], "--table", "none"])
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .expect("faultgate runs")
                .stderr
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn every_run_command_takes_verbose() {
    for cmd in ["check", "baseline", "calibrate"] {
        let out = faultgate(&[cmd, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(help.contains("-v, --verbose"), "{cmd}: {help}");
    }
}

#[test]
fn the_judge_note_names_the_judges_this_build_runs() {
    let runnable = "--judge litellm:<model> | openai:<model> with --judge-url | replay:FILE";
    let out = faultgate(&["check", "examples/traces.json"]);
    assert_eq!(
        stderr(&out).lines().next(),
        Some(
            format!(
                "note: wrong_direction skipped — it needs a judge ({runnable}); see README for each judge's measured κ"
            )
            .as_str()
        )
    );
    let out = faultgate(&[
        "check",
        "examples/traces.json",
        "--check",
        "wrong_direction",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        format!("faultgate: nothing to run: wrong_direction need {runnable}")
    );
}
