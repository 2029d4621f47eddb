//! Messages for inputs that are wrong in a way the user can fix: each names the file or flag, says what
//! is wrong and, where there is one, the fix.

use crate::common;

use common::{arg, faultgate, faultgate_in, root, scratch, stderr, stdout};

#[test]
fn an_empty_trace_file_says_it_is_empty_and_how_to_skip_it() {
    let dir = scratch();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "\n").unwrap();
    let out = faultgate_in(dir.path(), &["check", "empty.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().last(),
        Some(
            "faultgate: cannot parse empty.json: the file is empty (pass --skip-bad-input to skip \
             files that cannot be read)"
        )
    );
    // The hint works: the empty file is skipped with a warning, and the other file is checked.
    let traces = root().join("examples/traces.json");
    let out = faultgate(&["check", arg(&empty), arg(&traces), "--skip-bad-input"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("skipped {}: the file is empty", arg(&empty))),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("2/5 traces failed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn since_after_until_is_refused_in_one_line() {
    let out = faultgate(&[
        "check",
        "examples/traces.json",
        "--since",
        "2026-02-01",
        "--until",
        "2026-01-01",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "faultgate: --since 2026-02-01 is not before --until 2026-01-01: the window holds no time, \
         so no time partition would be read\n"
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn the_same_file_given_twice_to_baseline_is_warned_about() {
    let dir = scratch();
    let band = dir.path().join("band.json");
    let run = "examples/gate/baseline_glm_run1.json";
    let out = faultgate(&["baseline", run, &format!("./{run}"), "--out", arg(&band)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out)
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .collect::<Vec<_>>(),
        [format!(
            "warning: baseline runs 1 and 2 read the same file(s) ({run} and {run}): one run \
             counted twice makes the band's run-to-run noise look smaller than it is"
        )]
    );
    // Two different runs: no such warning.
    let out = faultgate(&[
        "baseline",
        run,
        "examples/gate/baseline_glm_run2.json",
        "--out",
        arg(&band),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("same file"), "{}", stderr(&out));
}

#[test]
fn a_trace_export_given_as_band_is_named_as_one() {
    let out = faultgate(&[
        "check",
        "examples/traces.json",
        "--band",
        "examples/gate/candidate_gpt.json",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().last(),
        Some(
            "faultgate: examples/gate/candidate_gpt.json: this looks like a trace export (otlp \
             format, 30 trace(s)), not a band; build a band from baseline runs with `faultgate \
             baseline RUN1 RUN2 --out band.json`"
        )
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn traces_without_content_raise_no_judge_warning_when_no_judge_runs() {
    let dir = scratch();
    let bare = dir.path().join("bare.json");
    let span = |id: &str, parent: Option<&str>, name: &str, op: &str| {
        serde_json::json!({
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": id, "parentSpanId": parent,
            "name": name, "startTimeUnixNano": "1790000000000000000", "endTimeUnixNano": "1790000001000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
        })
    };
    let export = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("b7ad6b7169203331", None, "invoke_agent a", "invoke_agent"),
        span("00f067aa0ba902b7", Some("b7ad6b7169203331"), "execute_tool lookup", "execute_tool"),
    ]}]}]});
    std::fs::write(&bare, export.to_string()).unwrap();
    let out = faultgate_in(dir.path(), &["check", "bare.json"]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    // The rules read the structure whatever the content; only a judge needs the words.
    assert!(
        !stderr(&out).contains("the judge sees structure only"),
        "{}",
        stderr(&out)
    );
}
