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

/// Every output file but Parquet (see [`peak_heap_of_check`]), as flags and the names they write.
const OUTPUTS: [(&str, &str); 6] = [
    ("--json", "report.json"),
    ("--markdown", "report.md"),
    ("--html", "report.html"),
    ("--junit", "junit.xml"),
    ("--audit", "audit"),
    ("--otlp-events", "events.json"),
];

/// The outputs of [`OUTPUTS`] that keep no row: Markdown and HTML keep the rows they show (up to
/// 2,000 failing traces), which a test of a few thousand files would count as kept per file.
const ROWLESS_OUTPUTS: [(&str, &str); 4] = [
    ("--json", "report.json"),
    ("--junit", "junit.xml"),
    ("--audit", "audit"),
    ("--otlp-events", "events.json"),
];

/// Runs `faultgate check --table none ARGS` inside this process with `outputs` written to `out`;
/// returns its exit code and the peak heap it added, in bytes.
fn peak_heap_of(args: Vec<OsString>, outputs: &[(&str, &str)], out: &Path) -> (i32, usize) {
    let mut argv: Vec<OsString> = ["faultgate", "check", "--table", "none"]
        .iter()
        .map(OsString::from)
        .collect();
    argv.extend(args);
    for &(flag, name) in outputs {
        argv.push(flag.into());
        argv.push(out.join(name).into_os_string());
    }
    HEAP.reset_peak_usage();
    let before = HEAP.current_usage();
    let code = faultgate::cli::run_command_line(argv);
    (code, HEAP.peak_usage() - before)
}

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
    let (code, peak) = peak_heap_of(vec![traces.into_os_string()], &OUTPUTS, &out);
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
    // What stays per trace: its scenario key's entry (one key per trace here) and, until a run of
    // 512 Ki goes to disk, the hash of its id. A run that kept its verdicts in memory held about
    // 3.5 kB per trace.
    assert!(
        per_trace < 256,
        "{per_trace} bytes of heap per trace: {small} bytes at {} traces, {large} at {}",
        4 * PER_FILE,
        24 * PER_FILE
    );
}

/// Runs `check` over `files` input files of one small trace each, with the outputs that keep no
/// row; returns the peak heap in bytes.
fn peak_heap_of_files(dir: &Path, files: usize) -> usize {
    let traces = dir.join(format!("one-trace-files-{files}"));
    let out = dir.join(format!("out-files-{files}"));
    std::fs::create_dir(&traces).unwrap();
    std::fs::create_dir(&out).unwrap();
    for f in 0..files {
        write_traces(&traces.join(format!("t{f:06}.jsonl")), f, f + 1);
    }
    let (code, peak) = peak_heap_of(vec![traces.into_os_string()], &ROWLESS_OUTPUTS, &out);
    assert_eq!(code, 1);
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(
        report.contains(&format!("{files:032x}")),
        "the last file's trace is in the report"
    );
    peak
}

#[test]
fn the_heap_of_check_over_many_files_keeps_little_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let small = peak_heap_of_files(dir.path(), 4_000);
    let large = peak_heap_of_files(dir.path(), 16_000);
    let per_file = large.saturating_sub(small) / 12_000;
    // What stays per input file: its path (about 60 bytes here) listed once, where its verdicts are
    // in the spill, and a few counters; about 270 bytes. A run that copied the list twice and kept
    // each file's empty warnings, skip reasons and steps held about 500.
    assert!(
        per_file < 350,
        "{per_file} bytes of heap per input file: {small} bytes at 4,000 files, {large} at 16,000"
    );
}
