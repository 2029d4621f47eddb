//! Decoding throughput of every trace format, on the shipped example and fixture files.
//!
//! Each file is read from memory through `ingest::read_bytes` (format detection, decoding and the
//! Arrow table build; no checks) until at least `FG_BENCH_SECS` seconds (default 0.5) have passed,
//! and the mean per read gives MB/s and traces/s. The files are small (a few KB to a few hundred KB),
//! so these are per-file figures: they include detection and the fixed cost of a table, which a
//! large export amortises. OTLP/JSON's example is measured the same way for comparison.
//!
//! Each read must give the format and trace count the first read gave, so the work cannot silently
//! change while it is timed.

use std::path::Path;
use std::time::{Duration, Instant};

use faultgate::ingest::{self, Format};

/// (format shown, file under the crate root).
const FILES: [(&str, &str); 15] = [
    ("otlp (JSON)", "examples/traces.json"),
    (
        "otlp (JSON, gate example)",
        "examples/gate/candidate_gpt.json",
    ),
    ("openinference", "examples/formats/openinference.json"),
    ("langfuse", "examples/formats/langfuse.json"),
    ("langsmith", "examples/formats/langsmith.json"),
    ("braintrust", "examples/formats/braintrust.json"),
    ("trajectory", "tests/fixtures/formats/trajectory.jsonl"),
    (
        "tau-bench",
        "tests/fixtures/formats/tau/tau_bench_airline.json",
    ),
    (
        "tau-bench (tau2)",
        "tests/fixtures/formats/tau/tau2_airline.json",
    ),
    (
        "swe-agent",
        "tests/fixtures/formats/swe_agent/6e44b9__sweagenttestrepo-1c2844.traj",
    ),
    (
        "multi-agent",
        "tests/fixtures/formats/multi_agent/who_and_when_ag2.json",
    ),
    ("otlp-proto", "tests/fixtures/otlp_proto/traces.pb"),
    ("any-agent", "tests/fixtures/any_agent/tinyagent.json"),
    (
        "langsmith-sdk",
        "tests/fixtures/langsmith_sdk/batches.jsonl",
    ),
    (
        "openinference-spans",
        "tests/fixtures/openinference_spans/spec_spans.jsonl",
    ),
];

fn main() {
    let budget = std::env::var("FG_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    println!(
        "| format | file KB | traces | reads | MB/s | traces/s |\n|---|---:|---:|---:|---:|---:|"
    );
    for (shown, file) in FILES {
        let path = root.join(file);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let read = || ingest::read_bytes(&path, &bytes, Format::Auto).expect("the file reads");
        let (format, first) = read();
        let traces = first.len();
        let started = Instant::now();
        let mut reads = 0u32;
        while started.elapsed() < Duration::from_secs_f64(budget) || reads < 3 {
            let (f, batch) = read();
            assert_eq!((f, batch.len()), (format, traces), "{file}");
            reads += 1;
        }
        let per_read = started.elapsed().as_secs_f64() / f64::from(reads);
        println!(
            "| {shown} | {:.1} | {traces} | {reads} | {:.0} | {:.0} |",
            bytes.len() as f64 / 1e3,
            bytes.len() as f64 / 1e6 / per_read,
            traces as f64 / per_read,
        );
    }
}
