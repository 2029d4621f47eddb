//! Traces read from object storage: a real S3 server (s3s-fs, which serves a folder as buckets and
//! checks request signatures) on 127.0.0.1, and a hand-written one that breaks off every download.

use crate::common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{command, read_json, scratch, stderr, stdout, write_traces};

const KEY: &str = "test-access-key";
const SECRET: &str = "test-secret-key-never-printed";

/// Serves the folders in `root` as buckets on a free port of 127.0.0.1, for as long as the test
/// process runs; returns its endpoint.
fn start_s3(root: &Path) -> String {
    let fs = s3s_fs::FileSystem::new(root).expect("s3s-fs root");
    let mut builder = s3s::service::S3ServiceBuilder::new(fs);
    builder.set_auth(s3s::auth::SimpleAuth::from_single(KEY, SECRET));
    let service = builder.build();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                        .await;
                });
            }
        });
    });
    format!("http://{address}")
}

/// `faultgate ARGS` in `dir` with the credentials of the store at `endpoint` (`secret` as the secret
/// key) and nothing else of the environment's AWS settings.
fn faultgate_s3(dir: &Path, endpoint: &str, secret: &str, args: &[&str]) -> Output {
    let mut cmd = command(dir);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", endpoint)
        .args(args)
        .output()
        .expect("faultgate runs")
}

/// The error line of a failed run (the notes on skipped checks come before it), which must be its
/// only one.
fn error_line(out: &Output) -> String {
    let text = stderr(out);
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("faultgate: "))
        .collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(text.trim_end().ends_with(errors[0]), "{text}");
    errors[0].to_string()
}

fn gzip(path: &Path) {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(path).unwrap()).unwrap();
    std::fs::write(path.with_extension("json.gz"), gz.finish().unwrap()).unwrap();
    std::fs::remove_file(path).unwrap();
}

/// A bucket `traces` under `root` laid out as a Collector's S3 exporter writes one, with objects
/// that a folder walk skips (a README, a hidden folder).
fn bucket_of_traces(root: &Path) {
    let day = |d: &str| root.join("traces/2026/11").join(d);
    for d in ["01", "02", "03"] {
        std::fs::create_dir_all(day(d)).unwrap();
    }
    write_traces(&day("01").join("part-000.json"), 0, 40);
    gzip(&day("01").join("part-000.json"));
    write_traces(&day("01").join("part-001.jsonl"), 40, 70);
    write_traces(&day("02").join("part-002.json"), 70, 120);
    gzip(&day("02").join("part-002.json"));
    write_traces(&day("03").join("part-003.json"), 120, 150);
    std::fs::write(root.join("traces/README.md"), "# traces\n").unwrap();
    std::fs::create_dir_all(root.join("traces/.staging")).unwrap();
    write_traces(&root.join("traces/.staging/part-9.json"), 500, 510);
}

/// A report as read from `url`, with the URL's prefix written as the local folder's.
fn as_local(text: &str) -> String {
    text.replace("s3://traces", "traces")
}

#[test]
fn a_bucket_reads_as_the_same_folder_does_with_listing_globs_and_gzip() {
    let dir = scratch();
    bucket_of_traces(dir.path());
    let endpoint = start_s3(dir.path());
    let cases = [
        ("traces", "s3://traces"),
        (
            "traces/2026/11/*/part-*.json.gz",
            "s3://traces/2026/11/*/part-*.json.gz",
        ),
        ("traces/2026/11/0[12]", "s3://traces/2026/11/0[12]"),
    ];
    for (local, url) in cases {
        let local_out = command(dir.path())
            .args([
                "check",
                local,
                "--json",
                "local.json",
                "--audit",
                "local-audit",
            ])
            .output()
            .unwrap();
        let remote_out = faultgate_s3(
            dir.path(),
            &endpoint,
            SECRET,
            &[
                "check",
                url,
                "--json",
                "remote.json",
                "--audit",
                "remote-audit",
            ],
        );
        assert_eq!(
            remote_out.status.code(),
            local_out.status.code(),
            "{url}: {}",
            stderr(&remote_out)
        );
        let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
        let remote_report = read("remote.json");
        assert_eq!(remote_report, read("local.json"), "{url}");
        let verdict = read("remote-audit/verdict.json");
        assert!(verdict.contains("\"s3://traces/2026/11/0"), "{verdict}");
        let undated = |text: &str| -> String {
            text.lines()
                .filter(|l| !l.contains("\"created_utc\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            undated(&as_local(&verdict)),
            undated(&read("local-audit/verdict.json")),
            "{url}"
        );
        assert!(!remote_report.contains(SECRET));
        assert!(!read("remote-audit/repro.sh").contains(SECRET));
        assert_eq!(
            as_local(&stderr(&remote_out)),
            stderr(&local_out).replace("hidden files and folders", "hidden keys"),
            "{url}"
        );
    }
    // The prefix listing read the gzip objects, the plain one and skipped the README and the hidden
    // folder: 150 traces.
    let listed = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &["check", "s3://traces/", "--json", "all.json"],
    );
    assert_eq!(
        read_json(&dir.path().join("all.json"))["traces"],
        150,
        "{}",
        stderr(&listed)
    );
    assert!(
        stdout(&listed).contains("38/150 traces failed"),
        "{}",
        stdout(&listed)
    );
    assert!(
        stderr(&listed).contains("s3://traces/README.md"),
        "{}",
        stderr(&listed)
    );
}

#[test]
fn the_endpoint_flag_reaches_the_store_and_shards_plan_alike() {
    let dir = scratch();
    bucket_of_traces(dir.path());
    let endpoint = start_s3(dir.path());
    let whole = faultgate_s3(
        dir.path(),
        "http://127.0.0.1:1",
        SECRET,
        &[
            "check",
            "s3://traces/",
            "--s3-endpoint",
            &endpoint,
            "--json",
            "whole.json",
        ],
    );
    assert!(
        whole.status.code().is_some_and(|c| c < 2),
        "{}",
        stderr(&whole)
    );
    // Shard 1's partial goes to the store, shard 2's to a local folder; merge reads both.
    std::fs::create_dir(dir.path().join("partials")).unwrap();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let part = if k == 1 {
            "s3://partials/run/shard1/".to_string()
        } else {
            "part2.fgp".to_string()
        };
        let out = faultgate_s3(
            dir.path(),
            &endpoint,
            SECRET,
            &[
                "check",
                "s3://traces/",
                "--shard",
                &shard,
                "--partial",
                &part,
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert!(
        dir.path()
            .join("partials/run/shard1/manifest.json")
            .exists()
    );
    let merged = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &[
            "merge",
            "s3://partials/run/shard1",
            "part2.fgp",
            "--json",
            "merged.json",
        ],
    );
    assert!(
        merged.status.code().is_some_and(|c| c < 2),
        "{}",
        stderr(&merged)
    );
    let mut whole = read_json(&dir.path().join("whole.json"));
    let mut merged = read_json(&dir.path().join("merged.json"));
    for report in [&mut whole, &mut merged] {
        if let Some(object) = report.as_object_mut() {
            object.remove("elapsed_seconds");
        }
    }
    assert_eq!(whole, merged);
}

#[test]
fn a_denied_request_and_a_missing_key_exit_2_with_one_line_naming_the_url() {
    let dir = scratch();
    bucket_of_traces(dir.path());
    let endpoint = start_s3(dir.path());
    let wrong = "a-wrong-secret-never-printed";
    let denied = faultgate_s3(
        dir.path(),
        &endpoint,
        wrong,
        &[
            "check",
            "s3://traces/2026/11/01/part-001.jsonl",
            "--json",
            "out.json",
        ],
    );
    assert_eq!(denied.status.code(), Some(2), "{}", stderr(&denied));
    let message = error_line(&denied);
    assert!(
        message.contains("s3://traces/2026/11/01/part-001.jsonl") && message.contains("403"),
        "{message}"
    );
    assert!(
        !message.contains(wrong) && !message.contains(KEY),
        "{message}"
    );
    assert!(!dir.path().join("out.json").exists());

    let missing = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &[
            "check",
            "s3://traces/2026/11/09/part-404.json",
            "--json",
            "out.json",
        ],
    );
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    let message = error_line(&missing);
    assert!(
        message.contains("s3://traces/2026/11/09/part-404.json"),
        "{message}"
    );
    assert!(!dir.path().join("out.json").exists());

    let no_bucket = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &["check", "s3://nobucket/x/"],
    );
    assert_eq!(no_bucket.status.code(), Some(2), "{}", stderr(&no_bucket));
    assert!(
        stderr(&no_bucket).contains("s3://nobucket/x/"),
        "{}",
        stderr(&no_bucket)
    );
}

#[test]
fn credentials_region_and_endpoint_come_from_the_aws_profile() {
    let dir = scratch();
    bucket_of_traces(dir.path());
    let endpoint = start_s3(dir.path());
    let aws = dir.path().join("aws");
    std::fs::create_dir(&aws).unwrap();
    let wrong = "a-wrong-secret-never-printed";
    std::fs::write(
        aws.join("credentials"),
        format!(
            "[default]\naws_access_key_id = {KEY}\naws_secret_access_key = {wrong}\n\n\
             [ci]\naws_access_key_id = {KEY}\naws_secret_access_key = {SECRET}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        aws.join("config"),
        format!(
            "[default]\nregion = us-east-1\nendpoint_url = {endpoint}\n\
             [profile ci]\nregion = us-east-1\nendpoint_url = {endpoint}\n"
        ),
    )
    .unwrap();
    let with_profile = |profile: Option<&str>, json: &str| {
        let mut cmd = command(dir.path());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("AWS_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", dir.path().join("nohome"))
            .env("AWS_SHARED_CREDENTIALS_FILE", aws.join("credentials"))
            .env("AWS_CONFIG_FILE", aws.join("config"));
        if let Some(profile) = profile {
            cmd.env("AWS_PROFILE", profile);
        }
        cmd.args(["check", "s3://traces", "--json", json])
            .output()
            .unwrap()
    };
    let local = command(dir.path())
        .args(["check", "traces", "--json", "local.json"])
        .output()
        .unwrap();
    let ci = with_profile(Some("ci"), "ci.json");
    assert_eq!(ci.status.code(), local.status.code(), "{}", stderr(&ci));
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(read("ci.json"), read("local.json"));

    // Without AWS_PROFILE the default profile is used: its secret is wrong, so the store says 403.
    let default = with_profile(None, "default.json");
    assert_eq!(default.status.code(), Some(2), "{}", stderr(&default));
    let message = error_line(&default);
    assert!(
        message.contains("403") && !message.contains(wrong),
        "{message}"
    );
    assert!(!dir.path().join("default.json").exists());

    let absent = with_profile(Some("staging"), "absent.json");
    assert_eq!(absent.status.code(), Some(2), "{}", stderr(&absent));
    let message = error_line(&absent);
    assert!(
        message.contains("s3://traces") && message.contains("`staging`"),
        "{message}"
    );
}

/// A server that answers HEAD with an object's size and each GET with half the object, then hangs
/// up; counts the GETs. It serves a bounded number of connections.
fn start_dying_server(size: usize) -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = gets.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(200) {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") {
                match stream.read(&mut byte) {
                    Ok(1) => request.push(byte[0]),
                    _ => break,
                }
            }
            let head = format!(
                "Content-Length: {size}\r\nLast-Modified: Wed, 02 Dec 2026 10:00:00 GMT\r\nETag: \"0123\"\r\nConnection: close\r\n\r\n"
            );
            if request.starts_with(b"HEAD") {
                let _ = stream.write_all(format!("HTTP/1.1 200 OK\r\n{head}").as_bytes());
            } else {
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = stream.write_all(
                    format!(
                        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-{}/{size}\r\n{head}",
                        size - 1
                    )
                    .as_bytes(),
                );
                let _ = stream.write_all(&vec![b' '; size / 2]);
            }
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    (format!("http://{address}"), gets)
}

#[test]
fn a_server_that_dies_during_a_get_is_retried_then_exit_2() {
    let dir = scratch();
    let (endpoint, gets) = start_dying_server(4096);
    let out = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &["check", "s3://traces/part-000.json", "--json", "out.json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = error_line(&out);
    assert!(message.contains("s3://traces/part-000.json"), "{message}");
    assert!(!message.contains(SECRET), "{message}");
    assert!(
        gets.load(Ordering::SeqCst) >= 2,
        "the GET was not retried: {message}"
    );
    assert!(!dir.path().join("out.json").exists());
}

#[test]
fn since_and_until_select_the_collector_exporters_time_partitions() {
    let dir = scratch();
    let hour = |d: &str, h: &str| {
        let path = dir.path().join(format!(
            "otel/exports/year=2026/month=11/day={d}/hour={h}/minute=00"
        ));
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    write_traces(&hour("01", "23").join("traces_a.json"), 0, 10);
    write_traces(&hour("02", "09").join("traces_b.json"), 10, 30);
    write_traces(&hour("02", "10").join("traces_c.json"), 30, 60);
    gzip(&hour("02", "10").join("traces_c.json"));
    write_traces(&hour("03", "00").join("traces_d.json"), 60, 100);
    std::fs::create_dir_all(dir.path().join("otel/exports/manual")).unwrap();
    write_traces(&dir.path().join("otel/exports/manual/extra.json"), 100, 105);
    let endpoint = start_s3(dir.path());
    let run = |input: &str, window: &[&str]| {
        let mut args = vec!["check", input, "--json", "r.json"];
        args.extend_from_slice(window);
        let out = faultgate_s3(dir.path(), &endpoint, SECRET, &args);
        assert!(out.status.code().is_some_and(|c| c < 2), "{}", stderr(&out));
        (
            read_json(&dir.path().join("r.json"))["traces"].clone(),
            stderr(&out),
        )
    };
    let (traces, _) = run("s3://otel/exports/", &[]);
    assert_eq!(traces, 105);
    // Hours 09 and 10 of the 2nd (the 10 o'clock partition gzipped), and the file with no time.
    let window = ["--since", "2026-11-02T09:00", "--until", "2026-11-02T11"];
    let (traces, note) = run("s3://otel/exports/", &window);
    assert_eq!(traces, 20 + 30 + 5, "{note}");
    assert!(
        note.contains("left out 2 file(s) by their time partition")
            && note.contains("read 1 whose path has none"),
        "{note}"
    );
    // A local copy of the bucket selects the same partitions.
    let (local, _) = run("otel/exports", &window);
    assert_eq!(local, 55);
    // A partition spans its finest field: `minute=00` of 09 o'clock ends at 09:01.
    let (traces, _) = run(
        "s3://otel/exports/",
        &["--since", "2026-11-02T09:01", "--until", "2026-11-02T11"],
    );
    assert_eq!(traces, 30 + 5);
    let (traces, _) = run("s3://otel/exports/", &["--until", "2026-11-02"]);
    assert_eq!(traces, 10 + 5);
    let empty = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &[
            "check",
            "s3://otel/exports/year=2026/",
            "--since",
            "2027-01-01",
        ],
    );
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        error_line(&empty).contains("--since/--until window"),
        "{}",
        stderr(&empty)
    );
    let bad = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &["check", "s3://otel/", "--since", "noon"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(error_line(&bad).contains("--since"), "{}", stderr(&bad));
}

#[test]
fn precheck_reads_a_url() {
    let dir = scratch();
    bucket_of_traces(dir.path());
    let endpoint = start_s3(dir.path());
    let remote = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &["precheck", "s3://traces/2026/11/02/part-002.json.gz"],
    );
    let local = command(dir.path())
        .args(["precheck", "traces/2026/11/02/part-002.json.gz"])
        .output()
        .unwrap();
    assert_eq!(
        remote.status.code(),
        local.status.code(),
        "{}",
        stderr(&remote)
    );
    assert_eq!(as_local(&stdout(&remote)), stdout(&local));
}

#[test]
fn an_object_larger_than_a_range_reads_as_the_file_does() {
    let dir = scratch();
    std::fs::create_dir_all(dir.path().join("big")).unwrap();
    let file = write_traces(&dir.path().join("big/run.jsonl"), 0, 12_000);
    assert!(
        std::fs::metadata(&file).unwrap().len() > 9 << 20,
        "not past one 8 MiB range"
    );
    let endpoint = start_s3(dir.path());
    let local = command(dir.path())
        .args(["check", "big/run.jsonl", "--json", "local.json"])
        .output()
        .unwrap();
    let remote = faultgate_s3(
        dir.path(),
        &endpoint,
        SECRET,
        &["check", "s3://big/run.jsonl", "--json", "remote.json"],
    );
    assert_eq!(
        remote.status.code(),
        local.status.code(),
        "{}",
        stderr(&remote)
    );
    let read = |p: &str| std::fs::read(dir.path().join(p)).unwrap();
    assert_eq!(read("remote.json"), read("local.json"));
}
