//! Archives as they are: a file still being written (a partial last line), a corrupt file among good
//! ones, a byte-order mark, and traces that come through a pipe (`-`, a FIFO, a device).

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{arg, faultgate_in, file, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

const TRACES: &str = "examples/traces.json";

/// The example export as JSON lines, one export per trace, as the Collector's file exporter writes
/// them.
fn export_lines() -> Vec<String> {
    let doc: Value = serde_json::from_slice(&std::fs::read(file(TRACES)).unwrap()).unwrap();
    let resource = &doc["resourceSpans"][0];
    let mut ids: Vec<String> = Vec::new();
    let mut by_trace: Vec<Vec<Value>> = Vec::new();
    for span in resource["scopeSpans"][0]["spans"].as_array().unwrap() {
        let id = span["traceId"].as_str().unwrap().to_string();
        match ids.iter().position(|i| *i == id) {
            Some(i) => by_trace[i].push(span.clone()),
            None => {
                ids.push(id);
                by_trace.push(vec![span.clone()]);
            }
        }
    }
    by_trace
        .into_iter()
        .map(|spans| {
            json!({"resourceSpans": [{"resource": resource["resource"], "scopeSpans": [{
                "scope": resource["scopeSpans"][0]["scope"], "spans": spans}]}]})
            .to_string()
        })
        .collect()
}

/// The summary line of a `check` run, without its elapsed time.
fn summary(out: &Output) -> String {
    let text = stdout(out);
    let line = text
        .lines()
        .find(|l| l.contains(" traces failed · "))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    line.rsplit_once(" · ").unwrap().0.to_string()
}

/// Runs the binary in `dir` under `timeout`, with `stdin` as its standard input, so that a read that
/// blocks fails the test instead of hanging it.
fn faultgate_fed(dir: &Path, args: &[&str], stdin: Stdio) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_faultgate"))
        .args(args)
        .current_dir(dir)
        .env_remove("GITHUB_WORKSPACE")
        .stdin(stdin)
        .output()
        .expect("run faultgate under timeout")
}

#[test]
fn a_file_still_being_written_is_read_up_to_its_partial_line_with_skip_bad_input() {
    let dir = scratch();
    let lines = export_lines();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    std::fs::copy(file(TRACES), runs.join("a.json")).unwrap();
    // b.jsonl: the last two traces, the second cut off mid-line as a writer leaves it.
    let cut = &lines[4][..lines[4].len() / 2];
    let b = format!("{}\n{cut}", lines[3]);
    std::fs::write(runs.join("b.jsonl"), &b).unwrap();
    // c.json: a pretty-printed export broken off, which no line of can be read.
    let pretty = std::fs::read_to_string(file(TRACES)).unwrap();
    std::fs::write(runs.join("c.json"), &pretty[..3000]).unwrap();

    // Without the flag the run stops on the first file it cannot read, as before.
    let refused = faultgate_in(dir.path(), &["check", "runs"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("cannot parse runs/b.jsonl"));

    let got = faultgate_in(
        dir.path(),
        &["check", "runs", "--skip-bad-input", "--json", "r.json"],
    );
    assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
    let err = stderr(&got);
    let line_at = lines[3].len() + 1;
    assert!(
        err.contains(&format!(
            "warning: skipped a JSON line of runs/b.jsonl at byte {line_at}: EOF while parsing"
        )),
        "{err}"
    );
    assert!(
        err.contains("warning: skipped runs/c.json at byte 2999: EOF while parsing"),
        "{err}"
    );
    // a.json's five traces, and the trace of b.jsonl's whole line read again: one trace, whose spans
    // are duplicates of a.json's.
    assert_eq!(
        summary(&got),
        "2/5 traces failed · search_loop=1, abstention=1, policy=0, repeated_call=0, \
         unrecovered_tool_error=0, context_overflow=0 · judge none · skipped bad input: 1 file(s), 1 JSON line(s)"
    );
    let report = read_json(&dir.path().join("r.json"));
    assert_eq!(report["skipped_input"], json!({"files": 1, "lines": 1}));
    let warnings = report["input_warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with(&format!(
                "skipped a JSON line of runs/b.jsonl at byte {line_at}"
            )))
    );

    // Shards write what they skipped into their partials, and the merge counts it as one run does.
    for k in ["1/2", "2/2"] {
        let part = format!("p{}", &k[..1]);
        let got = faultgate_in(
            dir.path(),
            &[
                "check",
                "runs",
                "--skip-bad-input",
                "--shard",
                k,
                "--partial",
                &part,
            ],
        );
        assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
    }
    let merged = faultgate_in(dir.path(), &["merge", "p1", "p2", "--json", "m.json"]);
    assert_eq!(
        summary(&merged),
        summary(&faultgate_in(
            dir.path(),
            &["check", "runs", "--skip-bad-input"]
        ))
    );
    assert_eq!(
        read_json(&dir.path().join("m.json"))["skipped_input"],
        json!({"files": 1, "lines": 1})
    );

    // It cannot be combined with --strict-input, and a run that skipped every file read nothing.
    let both = faultgate_in(
        dir.path(),
        &["check", "runs", "--skip-bad-input", "--strict-input"],
    );
    assert_eq!(both.status.code(), Some(2));
    assert!(
        stderr(&both).contains("cannot be used with"),
        "{}",
        stderr(&both)
    );
    let nothing = faultgate_in(dir.path(), &["check", "runs/c.json", "--skip-bad-input"]);
    assert_eq!(nothing.status.code(), Some(2));
    assert!(stderr(&nothing).contains("no traces found in runs/c.json"));
}

#[test]
fn a_corrupt_line_in_the_middle_is_left_out_and_the_rest_read() {
    let dir = scratch();
    let mut lines = export_lines();
    lines[1] = lines[1][..40].to_string();
    std::fs::write(dir.path().join("t.jsonl"), lines.join("\n")).unwrap();
    let got = faultgate_in(dir.path(), &["check", "t.jsonl", "--skip-bad-input"]);
    assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
    assert!(
        summary(&got).starts_with("1/4 traces failed"),
        "{}",
        summary(&got)
    );
    assert!(summary(&got).ends_with("skipped bad input: 0 file(s), 1 JSON line(s)"));
}

#[test]
fn a_leading_byte_order_mark_is_read_past() {
    let dir = scratch();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(file(TRACES)).unwrap());
    std::fs::write(dir.path().join("bom.json"), &bytes).unwrap();
    let mut lines = b"\xEF\xBB\xBF".to_vec();
    lines.extend(export_lines().join("\n").into_bytes());
    std::fs::write(dir.path().join("bom.jsonl"), &lines).unwrap();
    let plain = faultgate_in(dir.path(), &["check", arg(&file(TRACES))]);
    for name in ["bom.json", "bom.jsonl"] {
        let got = faultgate_in(dir.path(), &["check", name]);
        assert_eq!(got.status.code(), Some(1), "{name}: {}", stderr(&got));
        assert_eq!(summary(&got), summary(&plain), "{name}");
        let pre = faultgate_in(dir.path(), &["precheck", name]);
        assert_eq!(pre.status.code(), Some(0), "{name}: {}", stdout(&pre));
    }
}

#[test]
fn traces_on_standard_input_are_read_plain_or_compressed() {
    let dir = scratch();
    let plain = faultgate_in(dir.path(), &["check", arg(&file(TRACES))]);
    let from_file = std::fs::File::open(file(TRACES)).unwrap();
    let got = faultgate_fed(dir.path(), &["check", "-"], Stdio::from(from_file));
    assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
    assert_eq!(stdout(&got).lines().count(), stdout(&plain).lines().count());
    assert_eq!(summary(&got), summary(&plain));

    // gzip through a pipe: compression is told from the first bytes, not from a name.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(file(TRACES)).unwrap()).unwrap();
    std::fs::write(dir.path().join("packed"), gz.finish().unwrap()).unwrap();
    let packed = std::fs::File::open(dir.path().join("packed")).unwrap();
    let got = faultgate_fed(
        dir.path(),
        &["check", "-", "--json", "r.json", "--audit", "audit"],
        Stdio::from(packed),
    );
    assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
    assert_eq!(summary(&got), summary(&plain));
    assert_eq!(read_json(&dir.path().join("r.json"))["traces"], 5);
    // The audit's digest is the stream's bytes as they came in.
    let verdict = read_json(&dir.path().join("audit/verdict.json"));
    let packed_sha = common::lower_hex(&sha256(&std::fs::read(dir.path().join("packed")).unwrap()));
    assert_eq!(verdict["inputs"][0]["sha256"], json!(packed_sha));
}

#[test]
fn a_fifo_given_as_traces_is_read_as_a_stream() {
    let dir = scratch();
    let fifo = dir.path().join("t.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let bytes = std::fs::read(file(TRACES)).unwrap();
            std::fs::OpenOptions::new()
                .write(true)
                .open(fifo)
                .unwrap()
                .write_all(&bytes)
                .unwrap();
        })
    };
    let got = faultgate_fed(
        dir.path(),
        &["check", "t.fifo", "--json", "r.json"],
        Stdio::null(),
    );
    writer.join().unwrap();
    assert_eq!(got.status.code(), Some(1), "{}", stderr(&got));
    let plain = faultgate_in(dir.path(), &["check", arg(&file(TRACES))]);
    assert_eq!(summary(&got), summary(&plain));
    assert_eq!(read_json(&dir.path().join("r.json"))["traces"], 5);
}

#[test]
fn endless_devices_as_traces_end_at_once_with_exit_2() {
    let dir = scratch();
    for device in ["/dev/zero", "/dev/urandom", "/dev/null"] {
        let got = faultgate_fed(dir.path(), &["check", device], Stdio::null());
        assert_eq!(got.status.code(), Some(2), "{device}: {}", stderr(&got));
        let err = stderr(&got);
        assert!(
            err.contains(&format!("cannot parse {device}")),
            "{device}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// SHA-256 of some bytes, through the binary-independent `sha2` crate the tests share with the crate.
fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}
