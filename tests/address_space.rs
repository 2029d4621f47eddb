//! Inputs that must be refused in bounded memory, through the binary run within a 2 GiB address
//! space: decompression bombs, and a deny list far past the automaton limit. A reader that held what
//! it should refuse would fail to allocate there and abort instead of exiting 2.

mod common;

use common::{root, stderr};
use std::path::Path;
use std::process::{Command, Output};

const TRACES: &str = "examples/traces.json";

/// A gzip file of `members` copies of one gzip member holding `member` (a gzip reader reads every
/// member): 640 members of 16 MiB make a 10 GiB bomb of about 10 MB, built from one 16 MiB compression.
fn gzip_bomb(prefix: &[u8], member: &[u8], members: usize) -> Vec<u8> {
    use std::io::Write;
    let pack = |data: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    };
    let mut bomb = pack(prefix);
    let one = pack(member);
    for _ in 0..members {
        bomb.extend_from_slice(&one);
    }
    bomb
}

/// The address space every child of this test process gets: 2 GiB.
const ADDRESS_SPACE: u64 = 2 << 30;

/// Runs the binary in `dir` with an address space of 2 GiB (RLIMIT_AS): a reader that holds what it
/// should have refused fails to allocate and aborts instead of exiting 2. Few threads and malloc
/// arenas keep the address space the runtime reserves small.
///
/// The limit is set on this test process, whose children inherit it; that needs no program beyond the
/// toolchain (such as util-linux `prlimit`) and no `unsafe` here (`rlimit` wraps the system call).
/// Only the tests of this file run in this process, and each of them wants the same limit.
fn faultgate_within_2_gib(dir: &Path, args: &[&str]) -> Output {
    let (_, hard) = rlimit::getrlimit(rlimit::Resource::AS).expect("read RLIMIT_AS");
    rlimit::setrlimit(rlimit::Resource::AS, ADDRESS_SPACE.min(hard), hard).expect("set RLIMIT_AS");
    Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .args(args)
        .current_dir(dir)
        .env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .expect("run faultgate")
}

#[test]
fn gzip_bombs_exit_2_early_within_a_2_gib_address_space() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = gzip_bomb(b"", &vec![0u8; 16 << 20], 640);
    let spaces = gzip_bomb(b"{\"resourceSpans\": [", &vec![b' '; 16 << 20], 640);
    assert!(zeros.len() < 16 << 20, "{}", zeros.len());
    std::fs::write(dir.path().join("zeros.json.gz"), &zeros).unwrap();
    std::fs::write(dir.path().join("spaces.json.gz"), &spaces).unwrap();
    for bomb in ["zeros.json.gz", "spaces.json.gz"] {
        let got = faultgate_within_2_gib(dir.path(), &["check", bomb]);
        let err = stderr(&got);
        assert_eq!(got.status.code(), Some(2), "{bomb}: {err}");
        assert!(
            err.contains(&format!(
                "{bomb}: decompresses to more than 200 times its size"
            )),
            "{bomb}: {err}"
        );
    }
}

#[test]
fn a_policy_far_past_the_automaton_limit_is_refused_within_a_2_gib_address_space() {
    // 400,000 patterns in 13 MB: parsed all at once, their syntax trees alone take gigabytes.
    let patterns: Vec<String> = (0..400_000)
        .map(|i| format!(r"secret_{i}_[a-z]+\d{{2,4}}"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let policy = serde_json::to_vec(&serde_json::json!({ "deny_patterns": patterns })).unwrap();
    std::fs::write(dir.path().join("policy.json"), policy).unwrap();
    let traces = root().join(TRACES);
    let got = faultgate_within_2_gib(
        dir.path(),
        &[
            "check",
            &traces.to_string_lossy(),
            "--policy",
            "policy.json",
        ],
    );
    let err = stderr(&got);
    assert_eq!(got.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "policy.json: the 400000 deny_patterns compile past the 32 MiB automaton limit"
        ),
        "{err}"
    );
}
