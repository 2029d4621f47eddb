//! The heap a `check` run keeps grows with the number of scenario keys, not with the number of traces:
//! every output is written from the verdict spill, and so are partials and their merges. The command runs inside this process, whose
//! allocator counts the bytes in use and their peak (a separate test binary, so no other test's
//! allocations share the count).

mod common;

use std::ffi::OsString;
use std::path::Path;

use common::write_traces;
use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// One command at a time: the tests of this binary share the allocator's count.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
    let mut argv: Vec<OsString> = ["check", "--table", "none"]
        .iter()
        .map(OsString::from)
        .collect();
    argv.extend(args);
    for &(flag, name) in outputs {
        argv.push(flag.into());
        argv.push(out.join(name).into_os_string());
    }
    peak_heap_of_command(argv)
}

/// Runs `faultgate ARGS` inside this process; returns its exit code and the peak heap it added, in
/// bytes.
fn peak_heap_of_command(args: Vec<OsString>) -> (i32, usize) {
    let mut argv = vec![OsString::from("faultgate")];
    argv.extend(args);
    HEAP.reset_peak_usage();
    let before = HEAP.current_usage();
    let code = faultgate::cli::run_command_line(argv);
    (code, HEAP.peak_usage() - before)
}

/// Runs `check` over `files` input files of small traces (each its own scenario key: the test counts
/// the heap per trace, not per key) with every output file but Parquet, and returns the peak heap in
/// bytes. Parquet is left out because its writer fills a row group of 131,072 rows before it writes
/// it: bounded, but far beyond the traces a test can afford.
fn peak_heap_of_check(dir: &Path, files: usize) -> usize {
    let traces = trace_folder(dir, &format!("traces-{files}"), files, PER_FILE);
    let out = dir.join(format!("out-{files}"));
    std::fs::create_dir(&out).unwrap();
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
    let _one = one_at_a_time();
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
    let traces = trace_folder(dir, &format!("one-trace-files-{files}"), files, 1);
    let out = dir.join(format!("out-files-{files}"));
    std::fs::create_dir(&out).unwrap();
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
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    // A first run pays what a process builds once (thread pools, compiled patterns, buffers), which
    // would otherwise count against the smaller run only, whichever test of this binary runs first.
    peak_heap_of_files(dir.path(), 100);
    let small = peak_heap_of_files(dir.path(), 4_000);
    let large = peak_heap_of_files(dir.path(), 16_000);
    let per_file = large.saturating_sub(small) / 12_000;
    // What stays per input file: its path (about 60 bytes here) in the run's list and in the audit's
    // list of inputs, where its verdicts are in the spill, and a few counters; about 410 bytes. A run
    // that also built the audit's verdict.json whole held about 720, and one that copied the list
    // again and kept each file's empty warnings, skip reasons and steps more.
    assert!(
        per_file < 512,
        "{per_file} bytes of heap per input file: {small} bytes at 4,000 files, {large} at 16,000"
    );
}

/// Writes `files` input files of `per_file` small traces each (every trace its own scenario key) in
/// the folder `name` of `dir`.
fn trace_folder(dir: &Path, name: &str, files: usize, per_file: usize) -> std::path::PathBuf {
    let traces = dir.join(name);
    std::fs::create_dir(&traces).unwrap();
    for f in 0..files {
        write_traces(
            &traces.join(format!("t{f:06}.jsonl")),
            f * per_file,
            (f + 1) * per_file,
        );
    }
    traces
}

fn os(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    items.iter().map(|i| i.as_ref().to_os_string()).collect()
}

/// The rows a partial's manifest lists, and its number of files.
fn listed(partial: &Path) -> (usize, usize) {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(partial.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    let rows = files
        .iter()
        .map(|f| f["rows"].as_u64().unwrap())
        .sum::<u64>();
    (usize::try_from(rows).unwrap(), files.len())
}

/// Writes the two shards of a `check` over `files` files of `per_file` traces as partials, then merges
/// them into one partial; returns the peak heap of the first shard's `check --partial` and of the
/// `merge --partial`.
fn peak_heap_of_partials(dir: &Path, files: usize, per_file: usize) -> (usize, usize) {
    let name = format!("{files}x{per_file}");
    let traces = trace_folder(dir, &format!("traces-{name}"), files, per_file);
    let shards: Vec<_> = (1..=2)
        .map(|k| dir.join(format!("shard-{name}-{k}")))
        .collect();
    let mut check_peak = 0;
    for (k, shard) in shards.iter().enumerate() {
        let (code, peak) = peak_heap_of_command(os(&[
            &"check",
            &traces,
            &"--shard",
            &format!("{}/2", k + 1),
            &"--partial",
            shard,
        ]));
        assert_eq!(code, 0);
        if k == 0 {
            check_peak = peak;
        }
    }
    let merged = dir.join(format!("merged-{name}"));
    let (code, merge_peak) = peak_heap_of_command(os(&[
        &"merge",
        &shards[0],
        &shards[1],
        &"--partial",
        &merged,
    ]));
    assert_eq!(code, 0);
    assert_eq!(listed(&merged), (files * per_file, files));
    (check_peak, merge_peak)
}

#[test]
fn the_heap_of_writing_and_merging_partials_does_not_grow_with_the_verdicts() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (check_small, merge_small) = peak_heap_of_partials(dir.path(), 4, PER_FILE);
    let (check_large, merge_large) = peak_heap_of_partials(dir.path(), 24, PER_FILE);
    // A shard reads half the files; the merge reads every verdict.
    let check_per_trace = check_large.saturating_sub(check_small) / (10 * PER_FILE);
    let merge_per_trace = merge_large.saturating_sub(merge_small) / (20 * PER_FILE);
    // What stays per trace: the hash of its id until a run of them goes to disk and, for `check`, the
    // steps of each file's first failing traces (up to 200 a file, as `--html` keeps them) until
    // every file is read, which a test of a few files counts as kept per trace (between 40 and 180
    // bytes here). A partial written from the verdicts in memory kept every verdict batch: about
    // 1,040 bytes per trace. A merge into a partial read every partial whole.
    assert!(
        check_per_trace < 256,
        "check --partial: {check_per_trace} bytes of heap per trace: {check_small} bytes at {} traces, {check_large} at {}",
        2 * PER_FILE,
        12 * PER_FILE
    );
    assert!(
        merge_per_trace < 64,
        "merge --partial: {merge_per_trace} bytes of heap per trace: {merge_small} bytes at {} traces, {merge_large} at {}",
        4 * PER_FILE,
        24 * PER_FILE
    );
}

#[test]
fn the_heap_of_a_partial_of_many_files_keeps_little_per_file() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (check_small, merge_small) = peak_heap_of_partials(dir.path(), 4_000, 1);
    let (check_large, merge_large) = peak_heap_of_partials(dir.path(), 16_000, 1);
    let check_per_file = check_large.saturating_sub(check_small) / 6_000;
    let merge_per_file = merge_large.saturating_sub(merge_small) / 12_000;
    // What stays per input file: its manifest entry (its path, about 60 bytes here, its SHA-256 and
    // a few counters), and what `check` keeps of it (about 130 bytes; see above). A partial written
    // from verdicts in memory kept a batch per file, about 9 kB; a merge into a partial read each
    // partial whole and copied every manifest entry, about 1.9 kB per file.
    assert!(
        check_per_file < 600,
        "check --partial: {check_per_file} bytes of heap per input file: {check_small} bytes at 2,000 files, {check_large} at 8,000"
    );
    assert!(
        merge_per_file < 450,
        "merge --partial: {merge_per_file} bytes of heap per input file: {merge_small} bytes at 4,000 files, {merge_large} at 16,000"
    );
}
