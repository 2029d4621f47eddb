//! The progress bar through the binary: it shows on a terminal's stderr during a long run, never in a
//! pipe or with `--quiet`, and no output byte changes because of it.

use std::path::Path;
use std::process::{Command, Output};

/// An export of `copies` copies of the example traces, each copy with its own trace ids, so the run
/// takes long enough for the bar to appear: it shows once a run has taken a second, so the run must
/// read for well over that on an idle machine too (2,400 copies, 63 MB: about 3.5 s in a test build).
fn long_export(dir: &Path, copies: usize) -> std::path::PathBuf {
    let example =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces.json"))
            .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&example).unwrap();
    let resource_spans = doc["resourceSpans"].as_array().unwrap();
    let mut all = Vec::new();
    for copy in 0..copies {
        for rs in resource_spans {
            let text = serde_json::to_string(rs).unwrap();
            // Trace ids are 32 hex digits; the copy number replaces the first eight.
            let renamed = text.replace("\"traceId\":\"", &format!("\"traceId\":\"{copy:08x}"));
            let mut value: serde_json::Value = serde_json::from_str(&renamed).unwrap();
            for ss in value["scopeSpans"].as_array_mut().unwrap() {
                for span in ss["spans"].as_array_mut().unwrap() {
                    let id = span["traceId"].as_str().unwrap();
                    span["traceId"] = id[..32].into();
                }
            }
            all.push(value);
        }
    }
    let path = dir.join("long.json");
    std::fs::write(
        &path,
        serde_json::to_vec(&serde_json::json!({ "resourceSpans": all })).unwrap(),
    )
    .unwrap();
    path
}

/// Runs `check` under util-linux `script`, so stderr is a terminal; stdout goes to `stdout_file`.
/// Returns what reached the terminal.
fn on_terminal(args: &str, stdout_file: &Path) -> String {
    let cmd = format!(
        "{} {args} > {}",
        env!("CARGO_BIN_EXE_faultgate"),
        stdout_file.display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .expect("util-linux script");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn piped(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .args(args)
        .output()
        .expect("run faultgate")
}

/// Text without the run's elapsed time and the report's path, which differ between runs.
fn without_elapsed(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("report written to"))
        .map(|l| match l.rfind(" \u{b7} ") {
            Some(i) if l.ends_with('s') && l.contains("traces failed") => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[ignore = "needs util-linux `script` for a terminal; .ci/run runs it (cargo test -- --ignored)"]
fn a_long_run_shows_progress_on_a_terminal_and_changes_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let export = long_export(dir.path(), 2400);
    let export = export.to_str().unwrap();

    let plain_json = dir.path().join("plain.json");
    let plain = piped(&["check", export, "--json", plain_json.to_str().unwrap()]);
    assert_eq!(plain.status.code(), Some(1));
    let plain_stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(!plain_stderr.contains("files ·"), "{plain_stderr}");

    let bar_json = dir.path().join("bar.json");
    let bar_stdout = dir.path().join("bar.stdout");
    let terminal = on_terminal(
        &format!("check {export} --json {}", bar_json.display()),
        &bar_stdout,
    );
    assert!(terminal.contains("1/1 files"), "{terminal:?}");
    assert!(terminal.contains("traces"), "{terminal:?}");

    let quiet_stdout = dir.path().join("quiet.stdout");
    let quiet_json = dir.path().join("quiet.json");
    let quiet = on_terminal(
        &format!("check {export} --quiet --json {}", quiet_json.display()),
        &quiet_stdout,
    );
    assert!(!quiet.contains("files ·"), "{quiet:?}");

    let plain_stdout = without_elapsed(&String::from_utf8_lossy(&plain.stdout));
    for stdout in [&bar_stdout, &quiet_stdout] {
        let text = std::fs::read_to_string(stdout).unwrap();
        assert_eq!(without_elapsed(&text), plain_stdout);
    }
    let report = |p: &Path| {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("elapsed_s");
        v
    };
    assert_eq!(report(&bar_json), report(&plain_json));
    assert_eq!(report(&quiet_json), report(&plain_json));
}
