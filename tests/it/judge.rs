//! Judged runs end to end against an in-process HTTP server on 127.0.0.1 that speaks the OpenAI,
//! Anthropic and Ollama wire formats with scripted replies.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{command, read_json, root, scratch, stderr};
use serde_json::{Value, json};

/// One request the server received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The system prompt and the user message, whatever the wire.
    fn system_and_user(&self) -> (String, String) {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        if let Some(system) = self.body.get("system") {
            return (text(system), text(&self.body["messages"][0]["content"]));
        }
        (
            text(&self.body["messages"][0]["content"]),
            text(&self.body["messages"][1]["content"]),
        )
    }
}

/// What the server does with request number n (0-based).
enum Action {
    /// Reply 200 with this judge text, in the request's wire format.
    Judge(String),
    Status(u16, Vec<(&'static str, &'static str)>),
    /// Wait this long, then reply as for `Judge`.
    Slow(Duration, String),
}

type Script = dyn Fn(&Received, usize) -> Action + Send + Sync;

/// A scripted judge server; stops accepting when dropped.
struct Server {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    stop: Arc<AtomicBool>,
    /// The most requests it was answering at once.
    peak: Arc<AtomicUsize>,
}

impl Server {
    fn start(script: impl Fn(&Received, usize) -> Action + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let counter = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let (rx, st, pk) = (received.clone(), stop.clone(), peak.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (rx, script, counter) = (rx.clone(), script.clone(), counter.clone());
                let (pk, in_flight) = (pk.clone(), in_flight.clone());
                std::thread::spawn(move || serve(stream, &rx, &*script, &counter, &in_flight, &pk));
            }
        });
        Server {
            port,
            received,
            stop,
            peak,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(
    stream: TcpStream,
    received: &Mutex<Vec<Received>>,
    script: &Script,
    counter: &AtomicUsize,
    in_flight: &AtomicUsize,
    peak: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let request = Received {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let n = {
        let mut all = received.lock().unwrap();
        all.push(request.clone());
        counter.fetch_add(1, Ordering::SeqCst)
    };
    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    peak.fetch_max(now, Ordering::SeqCst);
    let (status, extra, text) = match script(&request, n) {
        Action::Judge(text) => (200, vec![], wire_reply(&request, &text)),
        Action::Slow(wait, text) => {
            std::thread::sleep(wait);
            (200, vec![], wire_reply(&request, &text))
        }
        Action::Status(code, extra) => (code, extra, "{\"error\": \"scripted\"}".to_string()),
    };
    let mut out = stream;
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        text.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    // One write: a reply split in two waits on Nagle's algorithm and the peer's delayed ACK.
    head.push_str(&text);
    in_flight.fetch_sub(1, Ordering::SeqCst);
    let _ = out.write_all(head.as_bytes());
}

/// A reply body carrying `text`, in the wire format of the request's path.
fn wire_reply(request: &Received, text: &str) -> String {
    let (_, user) = request.system_and_user();
    let prompt_tokens = user.len() / 4;
    if request.path.ends_with("/messages") {
        json!({"content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": prompt_tokens, "output_tokens": 7}})
    } else if request.path.ends_with("/api/chat") {
        json!({"message": {"role": "assistant", "content": text}, "done": true,
               "prompt_eval_count": prompt_tokens, "eval_count": 7})
    } else {
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
               "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7}})
    }
    .to_string()
}

/// The scripted judge: fires on traces with at least five steps.
fn verdict_text(request: &Received) -> String {
    let (_, user) = request.system_and_user();
    let detected = user.contains("\nStep 5:");
    json!({"detected": detected, "confidence": 0.8, "reason": format!("steps seen: {}", user.matches("\nStep ").count())})
        .to_string()
}

fn judge_script(request: &Received, _n: usize) -> Action {
    Action::Judge(verdict_text(request))
}

fn faultgate(args: &[&str], cache_home: &Path) -> Output {
    command(root())
        .args(args)
        .env("XDG_CACHE_HOME", cache_home)
        .env("HOME", cache_home)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_BASE")
        .env_remove("ANTHROPIC_API_BASE")
        .env_remove("OLLAMA_API_BASE")
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .output()
        .expect("run faultgate")
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// (trace id prefix, detected) of each judged result of a report.
fn judged(report: &Value, check: &str) -> Vec<(String, bool, String)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["check"] == check)
        .map(|r| {
            (
                r["trace_id"].as_str().unwrap()[..8].to_string(),
                r["detected"].as_bool().unwrap(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const QUESTION: &str = "Determine whether the agent made a MULTI_HOP_DIRECTION_ERROR. Rule: Return detected=true IF the agent searched in the reverse dependency direction across multi-hop entity links.";

fn openai_run(server: &Server, dir: &Path, extra: &[&str]) -> Output {
    let json_path = s(&dir.join("report.json"));
    let url = format!("{}/v1", server.url());
    let mut args = vec![
        "check",
        "examples/traces.json",
        "--judge",
        "openai:test-model",
        "--judge-url",
        &url,
        "--json",
        &json_path,
    ];
    args.extend_from_slice(extra);
    faultgate(&args, dir)
}

#[test]
fn openai_server_judges_wrong_direction_and_the_cache_answers_the_rerun() {
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let cache = s(&dir.join("cache"));
    let o = openai_run(&server, &dir, &["--judge-cache", &cache]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("judge openai:test-model: 5 verdict(s), 5 call(s), 0 from cache, 0 retried"),
        "{}",
        stderr(&o)
    );
    let requests = server.received();
    assert_eq!(requests.len(), 5);
    for r in &requests {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.body["model"], "test-model");
        assert_eq!(r.body["temperature"], 0.0);
        assert_eq!(r.body["max_tokens"], 512);
        assert_eq!(r.body["messages"][0]["role"], "system");
        assert_eq!(r.body["messages"][1]["role"], "user");
        let (system, user) = r.system_and_user();
        assert_eq!(
            system,
            format!(
                "You are an expert AI reliability judge evaluating an agent trace.\n{QUESTION}\nRespond ONLY with valid JSON: {{\"detected\": bool, \"confidence\": float, \"reason\": str}}"
            )
        );
        assert!(user.starts_with("Agent: "), "{user}");
        assert!(user.contains("\nSteps used: "));
        assert!(r.header("authorization").is_none());
    }
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["judge"], "openai:test-model");
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .contains(&json!("wrong_direction"))
    );
    let verdicts = judged(&report, "wrong_direction");
    let fired: Vec<bool> = verdicts.iter().map(|v| v.1).collect();
    assert_eq!(fired, [true, false, false, true, true]);
    assert_eq!(verdicts[0].2, "steps seen: 12");
    assert_eq!(report["fired"]["wrong_direction"], 3);
    let prompt_tokens: u64 = requests
        .iter()
        .map(|r| (r.system_and_user().1.len() / 4) as u64)
        .sum();
    assert_eq!(
        report["judge_usage"],
        json!({"prompt_tokens": prompt_tokens, "completion_tokens": 35, "total_tokens": prompt_tokens + 35})
    );
    let first = std::fs::read(dir.join("report.json")).unwrap();

    // The rerun is answered from the cache: no request, the same report.
    let o = openai_run(&server, &dir, &["--judge-cache", &cache]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(server.count(), 5);
    assert!(
        stderr(&o).contains("5 verdict(s), 0 call(s), 5 from cache"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("report.json")).unwrap(), first);

    // --no-judge-cache asks again.
    let o = openai_run(
        &server,
        &dir,
        &["--judge-cache", &cache, "--no-judge-cache"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(server.count(), 10);
}

#[test]
fn default_cache_lives_under_the_user_cache_directory() {
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(&server, &dir, &["--check", "wrong_direction"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let entries = std::fs::read_dir(dir.join("faultgate/judge"))
        .unwrap()
        .count();
    assert!(entries >= 1);
    let o = openai_run(&server, &dir, &["--check", "wrong_direction"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(server.count(), 5);
}

#[test]
fn fenced_and_garbage_replies_are_parsed_as_0_4_1_does() {
    let server = Server::start(|r: &Received, _| {
        let (_, user) = r.system_and_user();
        if user.contains("\nStep 9:") {
            Action::Judge("I think the agent was fine.".into())
        } else if user.contains("\nStep 5:") {
            Action::Judge(format!("Verdict:\n```json\n{}\n```", verdict_text(r)))
        } else {
            Action::Judge(
                "{\"detected\": \"false\", \"confidence\": null, \"reason\": \"short\"}".into(),
            )
        }
    });
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &["--no-judge-cache", "--check", "wrong_direction"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = read_json(&dir.join("report.json"));
    let verdicts = judged(&report, "wrong_direction");
    assert_eq!(
        verdicts[0],
        (
            "fc2cdab3".into(),
            false,
            "unparseable judge output: I think the agent was fine.".into()
        )
    );
    assert_eq!(verdicts[1], ("6d1f9d67".into(), false, "short".into()));
    assert_eq!(
        verdicts[4],
        ("2ab3b6c1".into(), true, "steps seen: 5".into())
    );
    let results = report["results"].as_array().unwrap();
    let confidences: Vec<&Value> = results
        .iter()
        .filter(|r| r["check"] == "wrong_direction")
        .map(|r| &r["confidence"])
        .collect();
    assert_eq!(
        confidences,
        [
            &json!(0.0),
            &json!(0.0),
            &json!(0.0),
            &json!(0.8),
            &json!(0.8)
        ]
    );
}

#[test]
fn a_rate_limit_is_retried_after_retry_after() {
    let server = Server::start(|r: &Received, n| {
        if n == 0 {
            Action::Status(429, vec![("Retry-After", "0")])
        } else {
            judge_script(r, n)
        }
    });
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &["--no-judge-cache", "--check", "wrong_direction"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(server.count(), 6);
    assert!(
        stderr(&o).contains("5 call(s), 0 from cache, 1 retried"),
        "{}",
        stderr(&o)
    );
    let fired: Vec<bool> = judged(&read_json(&dir.join("report.json")), "wrong_direction")
        .iter()
        .map(|v| v.1)
        .collect();
    assert_eq!(fired, [true, false, false, true, true]);
}

#[test]
fn a_slow_reply_times_out_and_is_retried() {
    let server = Server::start(|r: &Received, n| {
        if n == 0 {
            Action::Slow(Duration::from_secs(3), verdict_text(r))
        } else {
            judge_script(r, n)
        }
    });
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &[
            "--no-judge-cache",
            "--check",
            "wrong_direction",
            "--judge-timeout",
            "0.5",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(server.count(), 6);
    assert!(stderr(&o).contains("1 retried"), "{}", stderr(&o));
}

#[test]
fn a_failing_server_ends_the_run_with_one_line() {
    let server = Server::start(|_: &Received, _| Action::Status(500, vec![]));
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &[
            "--no-judge-cache",
            "--check",
            "wrong_direction",
            "--judge-retries",
            "1",
            "--judge-concurrency",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "faultgate: judge openai:test-model failed at {}/v1/chat/completions: HTTP 500: {{\"error\": \"scripted\"}} (after 2 attempts)",
            server.url()
        )
    );
    // One worker stops at the first call that failed for good: its two attempts, nothing more.
    assert_eq!(server.count(), 2);
    assert!(!dir.join("report.json").exists());
}

#[test]
fn an_unreachable_judge_is_exit_2() {
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    // A port nothing listens on: bind one, then free it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            "openai:m",
            "--judge-url",
            &url,
            "--no-judge-cache",
            "--judge-retries",
            "0",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "faultgate: judge openai:m failed at {url}/chat/completions: "
        )),
        "{err}"
    );
}

#[test]
fn an_unauthorised_judge_is_not_retried() {
    let server = Server::start(|_: &Received, _| Action::Status(401, vec![]));
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &["--no-judge-cache", "--judge-concurrency", "1"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("HTTP 401"), "{}", stderr(&o));
    assert_eq!(server.count(), 1);
}

fn email_trace(dir: &Path) -> PathBuf {
    let trace = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "t-mail", "spanId": "s1", "name": "invoke_agent",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.prompt", "value": {"stringValue": "Write to bob@example.com about the refund"}},
            {"key": "gen_ai.completion", "value": {"stringValue": "Done, mailed bob@example.com"}}
        ]
    }]}]}]});
    let path = dir.join("mail.json");
    std::fs::write(&path, trace.to_string()).unwrap();
    path
}

#[test]
fn remote_judges_receive_the_masked_render() {
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let trace = s(&email_trace(&dir));
    let url = format!("{}/v1", server.url());
    let base = [
        "check",
        trace.as_str(),
        "--judge",
        "openai:m",
        "--judge-url",
        url.as_str(),
        "--no-judge-cache",
    ];
    let o = faultgate(&base, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, user) = server.received()[0].system_and_user();
    assert_eq!(
        user,
        "Agent: agent\nPrompt: Write to <EMAIL> about the refund\nSteps used: 0\nTermination: unknown\nFinal answer: Done, mailed <EMAIL>"
    );
    let mut off = base.to_vec();
    off.extend(["--redact", "off"]);
    let o = faultgate(&off, &dir);
    assert_eq!(o.status.code(), Some(0));
    let (_, user) = server.received()[1].system_and_user();
    assert!(
        user.contains("Prompt: Write to bob@example.com about the refund"),
        "{user}"
    );
}

#[test]
fn anthropic_and_ollama_wires_by_litellm_prefix() {
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let json_path = s(&dir.join("a.json"));
    let url = server.url();
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            "litellm:anthropic/claude-test",
            "--judge-url",
            &url,
            "--no-judge-cache",
            "--check",
            "wrong_direction",
            "--json",
            &json_path,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let requests = server.received();
    assert_eq!(requests.len(), 5);
    let r = &requests[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("test-key"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.body["model"], "claude-test");
    assert_eq!(r.body["max_tokens"], 512);
    assert!(
        r.body["system"]
            .as_str()
            .unwrap()
            .contains("MULTI_HOP_DIRECTION_ERROR")
    );
    let report = read_json(&dir.join("a.json"));
    assert_eq!(report["judge"], "litellm:anthropic/claude-test");
    let fired: Vec<bool> = judged(&report, "wrong_direction")
        .iter()
        .map(|v| v.1)
        .collect();
    assert_eq!(fired, [true, false, false, true, true]);

    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            "litellm:ollama/llama-test",
            "--judge-url",
            &url,
            "--no-judge-cache",
            "--check",
            "wrong_direction",
            "--json",
            &json_path,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = &server.received()[5];
    assert_eq!(r.path, "/api/chat");
    assert_eq!(r.body["stream"], false);
    assert_eq!(r.body["options"]["num_predict"], 512);
    let fired: Vec<bool> = judged(&read_json(&dir.join("a.json")), "wrong_direction")
        .iter()
        .map(|v| v.1)
        .collect();
    assert_eq!(fired, [true, false, false, true, true]);
}

#[test]
fn a_replayed_run_writes_the_same_report_as_the_live_run() {
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let record = s(&dir.join("verdicts.jsonl"));
    let o = openai_run(
        &server,
        &dir,
        &["--no-judge-cache", "--judge-record", &record],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let live = std::fs::read(dir.join("report.json")).unwrap();
    let lines = std::fs::read_to_string(&record).unwrap();
    assert_eq!(lines.lines().count(), 5);
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["judge"], "openai:test-model");
    assert_eq!(first["check"], "wrong_direction");

    let json_path = s(&dir.join("replayed.json"));
    let spec = format!("replay:{record}");
    let audit = s(&dir.join("audit"));
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            &spec,
            "--json",
            &json_path,
            "--audit",
            &audit,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("judge openai:test-model: 5 verdict(s) replayed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(server.count(), 5);
    assert_eq!(std::fs::read(&json_path).unwrap(), live);
    // The saved verdicts are an input of the run: the audit fingerprints them.
    let verdict = read_json(&dir.join("audit/verdict.json"));
    let roles: Vec<&str> = verdict["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["traces", "judge_replay"]);
    assert_eq!(verdict["judge"], "openai:test-model");
}

#[test]
fn a_recorded_run_without_a_json_report_keeps_every_judged_reason() {
    // Only the JSON report and verdicts.parquet print every reason; a replay file needs them too.
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let record = s(&dir.join("verdicts.jsonl"));
    let url = format!("{}/v1", server.url());
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            "openai:test-model",
            "--judge-url",
            &url,
            "--no-judge-cache",
            "--judge-record",
            &record,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = std::fs::read_to_string(&record).unwrap();
    assert_eq!(lines.lines().count(), 5);
    let mut undetected = 0;
    for line in lines.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(
            v["reason"].as_str().unwrap().starts_with("steps seen: "),
            "{line}"
        );
        undetected += usize::from(v["detected"] == false);
    }
    assert!(
        undetected > 0,
        "a verdict that did not fire keeps its reason"
    );
}

#[test]
fn a_replay_file_keyed_by_scenario_and_a_missing_line() {
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let file = dir.join("human.jsonl");
    // Two hand-written verdicts; the other traces have none.
    let report = {
        let o = faultgate(
            &[
                "check",
                "examples/traces.json",
                "--json",
                &s(&dir.join("r.json")),
            ],
            &dir,
        );
        assert_eq!(o.status.code(), Some(1));
        read_json(&dir.join("r.json"))
    };
    let first_scenario = report["results"][0]["scenario"]
        .as_str()
        .unwrap()
        .to_string();
    let trace2 = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["trace_id"].as_str().unwrap())
        .find(|t| t.starts_with("6d1f9d67"))
        .unwrap()
        .to_string();
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n",
            json!({"scenario": first_scenario, "check": "wrong_direction", "detected": true, "reason": "human review"}),
            json!({"trace_id": trace2, "check": "wrong_direction", "detected": false, "confidence": 0.5})
        ),
    )
    .unwrap();
    let spec = format!("replay:{}", s(&file));
    let out = s(&dir.join("out.json"));
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            &spec,
            "--check",
            "wrong_direction",
            "--json",
            &out,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("judge replay: 5 verdict(s) replayed"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("warning: 3 judged verdict(s) have no line in the replay file"),
        "{}",
        stderr(&o)
    );
    let verdicts = judged(&read_json(&dir.join("out.json")), "wrong_direction");
    assert!(verdicts[0].1);
    assert_eq!(verdicts[0].2, "human review");
    assert_eq!(verdicts[2].2, "no replayed verdict for this trace");
}

#[test]
fn custom_judged_checks_run_report_gate_and_calibrate() {
    let server = Server::start(|r: &Received, _| {
        let (system, user) = r.system_and_user();
        if system.contains("Was the agent rude?") {
            let rude = user.contains("\nSteps used: 4\n");
            Action::Judge(
                json!({"detected": rude, "confidence": 0.9, "reason": "tone"}).to_string(),
            )
        } else {
            Action::Judge(verdict_text(r))
        }
    });
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let checks = dir.join("judged.json");
    std::fs::write(
        &checks,
        json!([{"name": "rude_reply", "question": "Was the agent rude?", "budget": 300}])
            .to_string(),
    )
    .unwrap();
    let checks = s(&checks);
    let o = openai_run(
        &server,
        &dir,
        &[
            "--no-judge-cache",
            "--judge-checks",
            &checks,
            "--check",
            "wrong_direction,rude_reply",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["checks"], json!(["wrong_direction", "rude_reply"]));
    let rude: Vec<bool> = judged(&report, "rude_reply").iter().map(|v| v.1).collect();
    assert_eq!(rude, [false, true, false, false, false]);
    assert_eq!(
        report["fired"],
        json!({"wrong_direction": 3, "rude_reply": 1})
    );
    // The budget cuts the render of the custom check only.
    let long = server
        .received()
        .iter()
        .filter(|r| r.system_and_user().0.contains("rude"))
        .map(|r| r.system_and_user().1)
        .find(|u| u.contains("steps omitted"));
    assert!(long.is_some());

    // In the default selection after wrong_direction, and gated through a band like any check.
    let url = format!("{}/v1", server.url());
    let band = s(&dir.join("band.json"));
    let o = faultgate(
        &[
            "baseline",
            "examples/traces.json",
            "examples/traces.json",
            "--judge",
            "openai:test-model",
            "--judge-url",
            &url,
            "--judge-checks",
            &checks,
            "--judge-cache",
            &s(&dir.join("c")),
            "--out",
            &band,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let band_json = read_json(Path::new(&band));
    let names: Vec<&str> = band_json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names[names.len() - 2..], ["wrong_direction", "rude_reply"]);
    assert_eq!(band_json["judge"], "openai:test-model");
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            "openai:test-model",
            "--judge-url",
            &url,
            "--judge-checks",
            &checks,
            "--judge-cache",
            &s(&dir.join("c")),
            "--band",
            &band,
        ],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("PASS"), "{out}\n{}", stderr(&o));
    assert!(
        !stderr(&o).contains("band was built with"),
        "{}",
        stderr(&o)
    );

    // Calibrated against labels like a built-in check.
    let labels = dir.join("labels.csv");
    let ids: Vec<String> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["check"] == "rude_reply")
        .map(|r| r["trace_id"].as_str().unwrap().to_string())
        .collect();
    let csv: String = std::iter::once("key,check,label\n".to_string())
        .chain(
            ids.iter()
                .enumerate()
                .map(|(i, id)| format!("{id},rude_reply,{}\n", u8::from(i == 1))),
        )
        .collect();
    std::fs::write(&labels, csv).unwrap();
    let o = faultgate(
        &[
            "calibrate",
            "examples/traces.json",
            "--labels",
            &s(&labels),
            "--judge",
            "openai:test-model",
            "--judge-url",
            &url,
            "--judge-checks",
            &checks,
            "--judge-cache",
            &s(&dir.join("c")),
            "--check",
            "rude_reply",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let row = out
        .lines()
        .find(|l| l.starts_with("rude_reply"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("1.00"), "{out}");
}

#[test]
fn max_calls_skips_the_rest_in_trace_order() {
    let server = Server::start(judge_script);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &[
            "--no-judge-cache",
            "--check",
            "wrong_direction",
            "--judge-max-calls",
            "2",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(server.count(), 2);
    assert!(
        stderr(&o).contains("warning: 3 judged verdict(s) skipped: --judge-max-calls 2 reached; they count as not detected"),
        "{}",
        stderr(&o)
    );
    let verdicts = judged(&read_json(&dir.join("report.json")), "wrong_direction");
    assert!(verdicts[0].1);
    assert_eq!(verdicts[1].2, "steps seen: 4");
    assert_eq!(verdicts[2].2, "judge not asked: --judge-max-calls reached");
}

#[test]
fn laya_and_unknown_specs_are_refused() {
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = faultgate(&["check", "examples/traces.json", "--judge", "laya"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("use litellm:ollama/<model>"),
        "{}",
        stderr(&o)
    );
    // A judge named for a run without judged checks still names the report, as in 0.4.1.
    let json_path = s(&dir.join("r.json"));
    let o = faultgate(
        &[
            "check",
            "examples/traces.json",
            "--judge",
            "laya",
            "--check",
            "search_loop",
            "--json",
            &json_path,
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = read_json(Path::new(&json_path));
    assert_eq!(report["judge"], "laya");
    assert!(report.get("judge_usage").is_none());
    let o = faultgate(&["check", "examples/traces.json", "--judge", "gpt"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "faultgate: unknown judge 'gpt'; use 'litellm:<model>', 'openai:<model>' or 'replay:FILE' (see faultgate judges)\n"
    );
}

#[test]
fn calls_in_flight_are_bounded_by_the_concurrency() {
    let slow = |r: &Received, _| Action::Slow(Duration::from_millis(400), verdict_text(r));
    let server = Server::start(slow);
    let scratch = scratch();
    let dir = scratch.path().to_path_buf();
    let o = openai_run(
        &server,
        &dir,
        &[
            "--no-judge-cache",
            "--check",
            "wrong_direction",
            "--judge-concurrency",
            "2",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(server.count(), 5);
    assert!(server.peak.load(Ordering::SeqCst) <= 2);

    // The default (8) sends all five at once.
    let server = Server::start(slow);
    let o = openai_run(
        &server,
        &dir,
        &["--no-judge-cache", "--check", "wrong_direction"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(server.peak.load(Ordering::SeqCst) > 2);
}
