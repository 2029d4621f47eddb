//! The heap a `check` run keeps grows with the number of scenario keys, not with the number of traces:
//! every output is written from the verdict spill. The command runs inside this process, whose
//! allocator counts the bytes in use and their peak (a separate test binary, so no other test's
//! allocations share the count).

mod common;

use std::ffi::OsString;
use std::path::Path;

use common::write_traces;
use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Traces per input file: a file's read holds its own traces while they are checked, whatever the run.
const PER_FILE: usize = 1_000;

/// Runs `check` over `files` input files of small traces (each its own scenario key: the test counts
/// the heap per trace, not per key) with every output file but Parquet, and returns the peak heap in
/// bytes. Parquet is left out because its writer fills a row group of 1,048,576 rows before it writes
/// it: bounded, but far beyond the traces a test can afford.
fn peak_heap_of_check(dir: &Path, files: usize) -> usize {
    let traces = dir.join(format!("traces-{files}"));
    let out = dir.join(format!("out-{files}"));
    std::fs::create_dir(&traces).unwrap();
    std::fs::create_dir(&out).unwrap();
    for f in 0..files {
        write_traces(
            &traces.join(format!("part-{f:03}.jsonl")),
            f * PER_FILE,
            (f + 1) * PER_FILE,
        );
    }
    let mut args: Vec<OsString> = ["faultgate", "check", "--table", "none"]
        .iter()
        .map(OsString::from)
        .collect();
    args.push(traces.into_os_string());
    for (flag, name) in [
        ("--json", "report.json"),
        ("--markdown", "report.md"),
        ("--html", "report.html"),
        ("--junit", "junit.xml"),
        ("--audit", "audit"),
        ("--otlp-events", "events.json"),
    ] {
        args.push(flag.into());
        args.push(out.join(name).into_os_string());
    }
    HEAP.reset_peak_usage();
    let before = HEAP.current_usage();
    let code = faultgate::cli::run_command_line(args);
    let peak = HEAP.peak_usage() - before;
    // One in four small traces abstains: the run fails, and every output was written.
    assert_eq!(code, 1);
    for name in ["report.json", "report.md", "report.html", "junit.xml"] {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert!(out.join("audit").join("failing_traces.json").is_file());
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(
        report.contains(&format!("{:032x}", files * PER_FILE)),
        "the last trace is in the report"
    );
    peak
}

#[test]
fn the_heap_of_check_with_every_output_does_not_grow_with_the_traces() {
    let dir = tempfile::tempdir().unwrap();
    let small = peak_heap_of_check(dir.path(), 4);
    let large = peak_heap_of_check(dir.path(), 24);
    let added = (24 - 4) * PER_FILE;
    let per_trace = large.saturating_sub(small) / added;
    // What stays per trace: a hash of its id while the run is counted and its scenario key's entry (one
    // key per trace here). A run that kept its verdicts in memory held about 3.5 kB per trace.
    assert!(
        per_trace < 256,
        "{per_trace} bytes of heap per trace: {small} bytes at {} traces, {large} at {}",
        4 * PER_FILE,
        24 * PER_FILE
    );
}
