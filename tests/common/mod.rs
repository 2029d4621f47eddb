//! Helpers the integration tests share: running the binary, reading what it wrote, scratch folders.
//!
//! Each test binary compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The crate's folder: relative paths in the tests (`examples/…`) resolve against it.
pub(crate) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `faultgate ARGS` in the crate's folder.
pub(crate) fn faultgate(args: &[&str]) -> Output {
    faultgate_in(root(), args)
}

/// Runs `faultgate ARGS` in `dir`.
pub(crate) fn faultgate_in(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().expect("faultgate runs")
}

/// The binary to run in `dir`, outside any CI job's environment (a GitHub workspace would change
/// where reports point), for tests that set more of the environment.
pub(crate) fn command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_faultgate"));
    command.current_dir(dir).env_remove("GITHUB_WORKSPACE");
    command
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fresh folder removed when the value drops.
pub(crate) fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("faultgate-test-")
        .tempdir()
        .expect("scratch folder")
}

/// A fresh folder named for what a test puts in it (`faultgate-NAME-` and a random tail), removed
/// with everything in it when the value drops, whether the test passes or panics. It reads as the
/// folder's path, so a test joins names onto it as onto a `Path`.
pub(crate) struct ScratchDir(tempfile::TempDir);

impl ScratchDir {
    pub(crate) fn named(name: &str) -> ScratchDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("faultgate-{name}-"))
            .tempdir()
            .expect("scratch folder");
        ScratchDir(dir)
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for ScratchDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

/// A JSON file the binary wrote.
pub(crate) fn read_json(path: &Path) -> Value {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A path as a command-line argument (the tests' paths are UTF-8).
pub(crate) fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A file of the crate, by its path relative to the crate's folder.
pub(crate) fn file(relative: &str) -> PathBuf {
    root().join(relative)
}

/// Lowercase hex of some bytes (the digests the reports print).
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// What small trace `i`'s agent answers: one in four abstains.
const ANSWERS: [&str; 4] = [
    "Order {i} shipped on Monday.",
    "I don't know where order {i} is right now.",
    "Your refund for order {i} was issued.",
    "Order {i} is packed.",
];

/// Small trace `i` (a root with a prompt and an answer, and a tool call) as one OTLP/JSON export line.
pub(crate) fn small_trace(trace: &str, i: usize) -> String {
    let s = |key: &str, value: &str| {
        format!(
            r#"{{"key":"{key}","value":{{"stringValue":{}}}}}"#,
            serde_json::json!(value)
        )
    };
    let t = 1_758_000_000_000_000_000u64 + i as u64 * 10_000_000;
    let answer = ANSWERS[i % ANSWERS.len()].replace("{i}", &i.to_string());
    let root = format!(
        r#"{{"traceId":"{trace}","spanId":"r{i:015x}","name":"invoke_agent support","startTimeUnixNano":"{t}","endTimeUnixNano":"{}","attributes":[{},{},{}]}}"#,
        t + 9_000_000,
        s("gen_ai.operation.name", "invoke_agent"),
        s("gen_ai.prompt", &format!("Where is my order {i}?")),
        s("gen_ai.completion", &answer),
    );
    let tool = format!(
        r#"{{"traceId":"{trace}","spanId":"t{i:015x}","parentSpanId":"r{i:015x}","name":"execute_tool lookup_order","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{},{},{}]}}"#,
        t + 1_000_000,
        t + 2_000_000,
        s("gen_ai.operation.name", "execute_tool"),
        s("gen_ai.tool.name", "lookup_order"),
        s("gen_ai.tool.call.result", &format!("{{\"order\": {i}}}")),
    );
    format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{root},{tool}]}}]}}]}}"#) + "\n"
}

/// The environment variable that keeps a run's verdicts in memory instead of spilling them.
const SPILL: &str = "FAULTGATE_SPILL";

/// Its value for a run compared with a spilled one: `off` for the run read whole.
fn spill_setting(whole: bool) -> &'static str {
    if whole { "off" } else { "on" }
}

/// Writes traces `from..to` as JSON lines to `path`.
pub(crate) fn write_traces(path: &Path, from: usize, to: usize) -> PathBuf {
    let text: String = (from..to)
        .map(|i| small_trace(&format!("{:032x}", i + 1), i))
        .collect();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}
