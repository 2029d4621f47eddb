//! `check --trust FILE --min-kappa K` and `baseline --trust`, end to end through the binary: checks
//! the calibration report does not trust still run and are reported, but do not gate, and every output
//! that shows the gate says which and why. Without the flags nothing changes.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

const RUN1: &str = "examples/gate/baseline_glm_run1.json";
const RUN2: &str = "examples/gate/baseline_glm_run2.json";
const CANDIDATE: &str = "examples/gate/candidate_gpt.json";

/// A `calibrate --json` report: `search_loop` below 0.60, `policy` without κ, `context_overflow` not
/// scored, the rest trusted.
fn calibration(dir: &Path) -> PathBuf {
    let entry = |check: &str, kappa: Value, undefined: Value| json!({"check": check, "all": {"n": 10, "kappa": kappa, "kappa_undefined": undefined}, "split": null});
    let report = json!({"split": null, "labels": {"total": 10}, "checks": [
        entry("search_loop", json!(0.41), Value::Null),
        entry("abstention", json!(0.9), Value::Null),
        entry("policy", Value::Null, json!("0 positives")),
        entry("repeated_call", json!(0.6), Value::Null),
        entry("unrecovered_tool_error", json!(0.8), Value::Null),
    ]});
    let path = dir.join("calibration.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&report).unwrap()).unwrap();
    path
}

const SET_ASIDE: [&str; 3] = [
    "search_loop: κ 0.41 < 0.60, reported, not gated",
    "policy: κ undefined (0 positives), reported, not gated",
    "context_overflow: not calibrated, reported, not gated",
];

fn band(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args = vec!["baseline", RUN1, RUN2, "--out", arg(&path)];
    args.extend(extra);
    let out = faultgate(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    path
}

/// The GPT candidate fails the GLM band on `search_loop` alone. With `search_loop` set aside it
/// passes: the check still fires and is reported, it no longer counts.
#[test]
fn a_check_below_the_bar_is_reported_but_does_not_gate_in_any_output() {
    let dir = scratch();
    let p = |name: &str| dir.path().join(name);
    let trust = calibration(dir.path());
    let plain_band = band(dir.path(), "band.json", &[]);
    let trusted_band = band(
        dir.path(),
        "trusted.json",
        &["--trust", arg(&trust), "--min-kappa", "0.6"],
    );
    assert_eq!(
        read_json(&trusted_band)["set_aside"],
        json!(["search_loop", "policy", "context_overflow"])
    );
    assert!(read_json(&plain_band).get("set_aside").is_none());

    let plain = faultgate(&["check", CANDIDATE, "--band", arg(&plain_band)]);
    assert_eq!(plain.status.code(), Some(1), "{}", stdout(&plain));

    let out = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        arg(&trusted_band),
        "--trust",
        arg(&trust),
        "--min-kappa",
        "0.6",
        "--json",
        arg(&p("r.json")),
        "--markdown",
        arg(&p("s.md")),
        "--html",
        arg(&p("r.html")),
        "--junit",
        arg(&p("j.xml")),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    // The table still shows search_loop firing; the gate does not count it.
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("gate: PASS"), "{text}");
    for line in SET_ASIDE {
        assert!(text.contains(&format!("trust: {line}\n")), "{text}");
    }
    assert!(!stderr(&out).contains("set aside"), "{}", stderr(&out));
    let report = read_json(&p("r.json"));
    assert_eq!(report["gate"]["set_aside"], json!(SET_ASIDE));
    assert_eq!(report["gate"]["verdict"], "PASS");
    assert!(!text.contains("search_loop=0,"), "{text}");
    let file = |name: &str| std::fs::read_to_string(p(name)).unwrap();
    for line in SET_ASIDE {
        assert!(file("s.md").contains(&format!("**Not gated:** {line}\n")));
        let escaped = line.replace('<', "&lt;");
        assert!(file("r.html").contains(&format!("trust: {escaped}</p>")));
        assert!(file("j.xml").contains(&format!("trust: {escaped}")));
    }
}

/// A band built without `--trust` gates checks the run now sets aside: the gate warns, as it does for
/// another check list.
#[test]
fn a_band_built_with_another_trust_setting_is_warned_about() {
    let dir = scratch();
    let trust = calibration(dir.path());
    let plain_band = band(dir.path(), "band.json", &[]);
    let out = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        arg(&plain_band),
        "--trust",
        arg(&trust),
        "--min-kappa",
        "0.6",
    ]);
    let warning = "warning: band's rates leave out checks [] (baseline --trust); this run's leave out \
['search_loop', 'policy', 'context_overflow'] (check --trust), so the rates count different checks";
    assert!(
        stderr(&out).lines().any(|l| l == warning),
        "{}",
        stderr(&out)
    );
    // Trusting every check (a bar below every κ and every check scored) sets nothing aside and keeps
    // the plain band's gate, without the warning.
    let everything = dir.path().join("all.json");
    let entries: Vec<Value> = [
        "search_loop",
        "abstention",
        "policy",
        "repeated_call",
        "unrecovered_tool_error",
        "context_overflow",
    ]
    .iter()
    .map(|c| json!({"check": c, "all": {"kappa": 0.5, "kappa_undefined": null}}))
    .collect();
    std::fs::write(&everything, json!({"checks": entries}).to_string()).unwrap();
    let trusted = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        arg(&plain_band),
        "--trust",
        arg(&everything),
        "--min-kappa",
        "0.5",
    ]);
    let plain = faultgate(&["check", CANDIDATE, "--band", arg(&plain_band)]);
    assert_eq!(trusted.status.code(), plain.status.code());
    assert_eq!(stderr(&trusted), stderr(&plain));
    assert!(!stdout(&trusted).contains("trust:"));
}

/// `policy` set aside cannot block: a policy violation that fails the gate without `--trust` is
/// reported and does not block with it.
#[test]
fn a_set_aside_policy_check_cannot_block() {
    let dir = scratch();
    let trust = calibration(dir.path());
    let band = band(
        dir.path(),
        "band.json",
        &["--policy", "examples/gate/policy.json"],
    );
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "check",
            RUN2,
            "--band",
            arg(&band),
            "--policy",
            "examples/gate/policy.json",
        ];
        a.extend(extra);
        a.iter().map(ToString::to_string).collect::<Vec<String>>()
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        faultgate(&refs)
    };
    let plain = run(args(&[]));
    assert!(
        stdout(&plain).contains("(hard block)"),
        "{}",
        stdout(&plain)
    );
    let mut trusted_args = args(&[]);
    trusted_args.extend([
        "--trust".to_string(),
        arg(&trust).to_string(),
        "--min-kappa".to_string(),
        "0.6".to_string(),
    ]);
    let trusted = run(trusted_args);
    assert!(
        !stdout(&trusted).contains("(hard block)"),
        "{}",
        stdout(&trusted)
    );
    assert!(
        stdout(&trusted).contains("trust: policy: κ undefined (0 positives), reported, not gated")
    );
}

#[test]
fn trust_flags_come_together_and_a_file_that_is_not_a_calibration_report_is_refused() {
    let dir = scratch();
    let band = band(dir.path(), "band.json", &[]);
    let out = faultgate(&["check", RUN2, "--band", arg(&band), "--min-kappa", "0.6"]);
    assert_eq!(out.status.code(), Some(2));
    let out = faultgate(&[
        "check",
        RUN2,
        "--band",
        arg(&band),
        "--trust",
        arg(&band),
        "--min-kappa",
        "0.6",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(": not a calibration report (faultgate calibrate --json): expected "),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
    let trust = calibration(dir.path());
    let out = faultgate(&[
        "check",
        RUN2,
        "--band",
        arg(&band),
        "--trust",
        arg(&trust),
        "--min-kappa",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(2));
}
