//! Hostile and careless use through the binary: outputs that name inputs or special files, paths that
//! look like flags, symlink loops, empty directories, special files as inputs, repeated flags.

use crate::common;

use common::{faultgate_in, root, stderr};
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Output};

const TRACES: &str = "examples/traces.json";
const CANDIDATE: &str = "examples/gate/candidate_gpt.json";
const BAND: &str = "examples/gate/band.json";

/// Runs the binary in `dir`.
/// A scratch directory holding a copy of the small example traces as `in.json`.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(TRACES), dir.path().join("in.json")).unwrap();
    dir
}

#[test]
fn an_output_naming_an_input_is_refused_in_every_spelling() {
    let dir = scratch();
    let before = std::fs::read(dir.path().join("in.json")).unwrap();
    symlink("in.json", dir.path().join("alias.json")).unwrap();
    for out in ["in.json", "./in.json", "alias.json", ".//in.json"] {
        for flag in ["--json", "--markdown"] {
            let got = faultgate_in(dir.path(), &["check", "in.json", flag, out]);
            assert_eq!(got.status.code(), Some(2), "{flag} {out}: {}", stderr(&got));
            assert!(
                stderr(&got).contains("refusing to overwrite an input"),
                "{}",
                stderr(&got)
            );
        }
    }
    // An input found by walking a directory counts too.
    let got = faultgate_in(dir.path(), &["check", ".", "--json", "in.json"]);
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    assert_eq!(std::fs::read(dir.path().join("in.json")).unwrap(), before);
}

#[test]
fn baseline_out_naming_a_run_is_refused() {
    let dir = scratch();
    std::fs::copy(root().join(CANDIDATE), dir.path().join("r.json")).unwrap();
    let before = std::fs::read(dir.path().join("r.json")).unwrap();
    let got = faultgate_in(
        dir.path(),
        &["baseline", "r.json", "in.json", "--out", "r.json"],
    );
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    assert!(stderr(&got).contains("--out r.json is the input r.json"));
    assert_eq!(std::fs::read(dir.path().join("r.json")).unwrap(), before);
}

#[test]
fn a_band_named_as_the_report_is_refused() {
    let dir = scratch();
    std::fs::copy(root().join(BAND), dir.path().join("band.json")).unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "check",
            "in.json",
            "--band",
            "band.json",
            "--json",
            "band.json",
        ],
    );
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
}

#[test]
fn a_fifo_output_is_written_in_place() {
    let dir = scratch();
    let fifo = dir.path().join("report.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let got = faultgate_in(dir.path(), &["check", "in.json", "--json", "report.fifo"]);
    assert!(got.status.code() != Some(2), "{}", stderr(&got));
    let text = reader.join().unwrap();
    assert!(text.contains("\"checks\""), "{text}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

/// Outputs are put in place on a thread while the next is written: one that cannot be written still
/// stops the ones after it, leaves those before it in place with their lines, and leaves no temporary
/// file behind.
#[test]
fn an_output_that_cannot_be_written_stops_the_ones_after_it() {
    let dir = scratch();
    std::fs::create_dir(dir.path().join("taken")).unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "check",
            "in.json",
            "--json",
            "report.json",
            "--markdown",
            "taken",
            "--junit",
            "junit.xml",
            "--html",
            "page.html",
        ],
    );
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    assert!(stderr(&got).contains("taken is a directory; refusing to write it"));
    let stdout = String::from_utf8_lossy(&got.stdout);
    assert!(
        stdout.ends_with("report written to report.json\n"),
        "{stdout}"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["in.json", "report.json", "taken"]);
}

#[test]
fn dev_null_as_an_output_stays_a_device() {
    let dir = scratch();
    let got = faultgate_in(dir.path(), &["check", "in.json", "--json", "/dev/null"]);
    assert!(got.status.code() != Some(2), "{}", stderr(&got));
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn a_path_that_looks_like_a_flag_stays_a_path_in_repro_sh() {
    let dir = scratch();
    // `./--json=out/v.json` is a trace file; `out/v.json` a file its dropped `./` would overwrite.
    std::fs::create_dir_all(dir.path().join("--json=out")).unwrap();
    std::fs::copy(root().join(TRACES), dir.path().join("--json=out/v.json")).unwrap();
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/v.json"), "keep").unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "check",
            "./--json=out/v.json",
            "in.json",
            "--audit",
            "audit",
            "--markdown",
            "summary.md",
        ],
    );
    assert!(got.status.code() != Some(2), "{}", stderr(&got));
    let script = std::fs::read_to_string(dir.path().join("audit/repro.sh")).unwrap();
    assert!(script.contains(" ./--json=out/v.json "), "{script}");
    let verdict = std::fs::read_to_string(dir.path().join("audit/verdict.json")).unwrap();
    assert!(verdict.contains(" ./--json=out/v.json "), "{verdict}");
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(markdown.contains(" ./--json=out/v.json "), "{markdown}");

    // Run the generated script with `faultgate` on PATH pointing at this build and `pip` a no-op: it must
    // read the file, not write a report over `out/v.json`.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    symlink(env!("CARGO_BIN_EXE_faultgate"), bin.join("faultgate")).unwrap();
    std::fs::write(bin.join("pip"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(bin.join("pip"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    // By the interpreter its first line names (every POSIX system has /bin/sh, on PATH or not).
    let ran = Command::new("/bin/sh")
        .arg("audit/repro.sh")
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(ran.status.code() != Some(2), "{}", stderr(&ran));
    assert!(String::from_utf8_lossy(&ran.stdout).contains("traces failed"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/v.json")).unwrap(),
        "keep"
    );
    assert!(!String::from_utf8_lossy(&ran.stdout).contains("report written"));
}

#[test]
fn a_directory_symlink_loop_ends_and_each_file_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(runs.join("sub")).unwrap();
    std::fs::copy(root().join(TRACES), runs.join("sub/a.json")).unwrap();
    symlink("..", runs.join("sub/up")).unwrap();
    symlink(".", runs.join("self")).unwrap();
    symlink("sub/a.json", runs.join("again.json")).unwrap();
    let single = faultgate_in(dir.path(), &["check", "runs/sub/a.json"]);
    let looped = faultgate_in(dir.path(), &["check", "runs"]);
    assert!(looped.status.code() != Some(2), "{}", stderr(&looped));
    let summary = |out: &Output| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.contains("traces failed"))
            // Everything but the elapsed time: the counts per check show a file read twice.
            .map(|l| l.rsplit_once(" \u{b7} ").unwrap().0.to_string())
            .unwrap()
    };
    assert_eq!(summary(&looped), summary(&single));
}

#[test]
fn an_empty_or_hidden_only_directory_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    std::fs::create_dir_all(dir.path().join("hidden")).unwrap();
    std::fs::copy(root().join(TRACES), dir.path().join("hidden/.t.json")).unwrap();
    for d in ["empty", "hidden"] {
        let got = faultgate_in(dir.path(), &["check", d]);
        assert_eq!(got.status.code(), Some(2), "{d}: {}", stderr(&got));
        assert!(
            stderr(&got).contains("no trace files in"),
            "{}",
            stderr(&got)
        );
    }
}

#[test]
fn devices_as_inputs_are_read_as_streams_and_refused_for_what_they_hold() {
    // A FIFO is read too (tests/it/archives.rs); a device that holds no JSON is refused as a file of its
    // bytes is, never with "no such file", and never read forever.
    let dir = tempfile::tempdir().unwrap();
    for input in ["/dev/null", "/dev/zero"] {
        let got = faultgate_bounded(dir.path(), &["check", input]);
        assert_eq!(got.status.code(), Some(2), "{input}: {}", stderr(&got));
        let err = stderr(&got);
        assert!(
            err.contains(&format!("cannot parse {input}")),
            "{input}: {err}"
        );
        assert!(!err.contains("no such file"), "{input}: {err}");
    }
}

#[test]
fn a_single_valued_flag_given_twice_keeps_the_last() {
    let dir = scratch();
    let got = faultgate_in(
        dir.path(),
        &["check", "in.json", "--json", "a.json", "--json", "b.json"],
    );
    assert!(got.status.code() != Some(2), "{}", stderr(&got));
    assert!(!dir.path().join("a.json").exists());
    assert!(dir.path().join("b.json").exists());
    let got = faultgate_in(
        dir.path(),
        &["check", "in.json", "--format", "otlp", "--format", "auto"],
    );
    assert!(got.status.code() != Some(2), "{}", stderr(&got));
    let got = faultgate_in(
        dir.path(),
        &["precheck", "in.json", "--sample", "1", "--sample", "2"],
    );
    assert!(got.status.code() != Some(2), "{}", stderr(&got));
}

#[test]
fn conform_and_calibrate_refuse_an_output_naming_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.json");
    std::fs::copy(root().join("examples/workflow/spec.json"), &spec).unwrap();
    std::fs::copy(
        root().join("examples/workflow/conforms.jsonl"),
        dir.path().join("t.jsonl"),
    )
    .unwrap();
    let before = std::fs::read(&spec).unwrap();
    let got = faultgate_in(
        dir.path(),
        &["conform", "spec.json", "t.jsonl", "--json", "./spec.json"],
    );
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    assert!(stderr(&got).contains("refusing to overwrite an input"));
    assert_eq!(std::fs::read(&spec).unwrap(), before);

    std::fs::copy(root().join(TRACES), dir.path().join("in.json")).unwrap();
    std::fs::copy(
        root().join("examples/labels.json"),
        dir.path().join("labels.json"),
    )
    .unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "calibrate",
            "in.json",
            "--labels",
            "labels.json",
            "--json",
            "labels.json",
        ],
    );
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    assert!(stderr(&got).contains("refusing to overwrite an input"));
}

#[test]
fn repeated_single_valued_flags_keep_the_last_in_every_command() {
    let dir = scratch();
    std::fs::copy(root().join(CANDIDATE), dir.path().join("r.json")).unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "baseline", "r.json", "r.json", "--out", "a.json", "--out", "b.json",
        ],
    );
    assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
    assert!(!dir.path().join("a.json").exists());
    assert!(dir.path().join("b.json").exists());
    std::fs::copy(
        root().join("examples/workflow/spec.json"),
        dir.path().join("spec.json"),
    )
    .unwrap();
    std::fs::copy(
        root().join("examples/workflow/conforms.jsonl"),
        dir.path().join("t.jsonl"),
    )
    .unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "conform",
            "spec.json",
            "t.jsonl",
            "--json",
            "c.json",
            "--json",
            "d.json",
        ],
    );
    assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
    assert!(!dir.path().join("c.json").exists());
    assert!(dir.path().join("d.json").exists());
}

/// Found by the `trace_bytes` fuzz target: times far apart overflowed the latency subtraction.
#[test]
fn extreme_span_times_do_not_overflow_the_latency() {
    let got = faultgate_in(
        root(),
        &["check", "tests/fixtures/hostile/latency_overflow.jsonl"],
    );
    assert!(
        matches!(got.status.code(), Some(0..=2)),
        "{:?} {}",
        got.status,
        stderr(&got)
    );
    assert!(!stderr(&got).contains("panicked"), "{}", stderr(&got));
}

/// Runs the binary in `dir` under `timeout`, so a reader that blocks on a FIFO fails the test instead
/// of hanging it.
fn faultgate_bounded(dir: &Path, args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_faultgate"))
        .args(args)
        .current_dir(dir)
        .env_remove("GITHUB_WORKSPACE")
        .output()
        .expect("run faultgate under timeout")
}

#[test]
fn special_files_as_side_inputs_exit_2_naming_what_they_are() {
    let dir = scratch();
    let fifo = dir.path().join("side.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let traces = root().join(TRACES);
    let traces = traces.to_str().unwrap();
    for side in ["side.fifo", "/dev/zero", "/dev/null"] {
        let kind = if side == "side.fifo" {
            "(a FIFO)"
        } else {
            "(a character device)"
        };
        let replay = format!("replay:{side}");
        let runs: Vec<Vec<&str>> = vec![
            vec!["check", traces, "--policy", side],
            vec!["check", traces, "--band", side],
            vec!["check", traces, "--golden", side],
            vec!["check", traces, "--outcomes", side],
            vec!["check", traces, "--workflow", side],
            vec!["check", traces, "--judge-checks", side],
            vec!["check", traces, "--judge", &replay],
            vec!["calibrate", traces, "--labels", side],
            vec!["conform", side, "in.json"],
            vec!["precheck", traces, "--policy", side],
        ];
        for args in runs {
            let got = faultgate_bounded(dir.path(), &args);
            let err = stderr(&got);
            assert_eq!(got.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("not a regular file"), "{args:?}: {err}");
            assert!(err.contains(kind), "{args:?}: {err}");
            let errors = err.lines().filter(|l| !l.starts_with("note: ")).count();
            assert_eq!(errors, 1, "one error line: {args:?}: {err}");
        }
    }
}

#[test]
fn the_judge_replay_file_record_and_cache_are_kept_apart_from_outputs_and_inputs() {
    let dir = scratch();
    std::fs::write(dir.path().join("v.jsonl"), "").unwrap();
    let refused = [
        // Recording into the replay file being read.
        vec![
            "check",
            "in.json",
            "--judge",
            "replay:v.jsonl",
            "--judge-record",
            "v.jsonl",
        ],
        // The report written over the replay file.
        vec![
            "check",
            "in.json",
            "--judge",
            "replay:v.jsonl",
            "--json",
            "./v.jsonl",
        ],
        // Recording over a trace file.
        vec![
            "check",
            "in.json",
            "--judge",
            "replay:v.jsonl",
            "--judge-record",
            "in.json",
        ],
        // A cache folder that holds the traces.
        vec![
            "check",
            "in.json",
            "--judge",
            "replay:v.jsonl",
            "--judge-cache",
            ".",
        ],
    ];
    for args in refused {
        let before = std::fs::read(dir.path().join("v.jsonl")).unwrap();
        let got = faultgate_in(dir.path(), &args);
        let err = stderr(&got);
        assert_eq!(got.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("refusing to"), "{args:?}: {err}");
        assert_eq!(std::fs::read(dir.path().join("v.jsonl")).unwrap(), before);
    }
    let sub = dir.path().join("cache");
    std::fs::create_dir(&sub).unwrap();
    let got = faultgate_in(
        dir.path(),
        &[
            "check",
            "in.json",
            "--judge",
            "replay:v.jsonl",
            "--judge-cache",
            "cache",
            "--judge-record",
            "r.jsonl",
        ],
    );
    assert_ne!(got.status.code(), Some(2), "{}", stderr(&got));
    assert!(dir.path().join("r.jsonl").exists());
}
