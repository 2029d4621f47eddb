//! Bands at their edges, end to end through the binary: a band without per-run rates, which 0.4.1
//! reads, and a candidate whose scenarios the band does not know.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::Value;

const RUN1: &str = "examples/gate/baseline_glm_run1.json";
const RUN2: &str = "examples/gate/baseline_glm_run2.json";

/// The band of the two GLM runs, written into `dir`.
fn glm_band(dir: &Path) -> PathBuf {
    let path = dir.join("band.json");
    let out = faultgate(&["baseline", RUN1, RUN2, "--out", arg(&path)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    path
}

/// `band` with its JSON changed by `edit`, written next to it as `name`.
fn edited(band: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut value = read_json(band);
    edit(&mut value);
    let path = band.with_file_name(name);
    std::fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    path
}

const NOTE: &str = "note: band has no per-run clean rates (clean_rate.per_run); the run-to-run \
variance is unknown, so [min, max] stands in for the baseline runs";

#[test]
fn band_with_an_empty_per_run_gates_as_0_4_1_does_with_a_note() {
    let dir = scratch();
    let band = glm_band(dir.path());
    let empty = edited(&band, "empty.json", |b| {
        b["clean_rate"]["per_run"] = Value::Array(Vec::new());
    });
    let report = dir.path().join("r.json");
    let out = faultgate(&["check", RUN2, "--band", arg(&empty), "--json", arg(&report)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("gate: PASS · clean rate 0.93 vs band [0.93, 0.93] from 2 baseline runs"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).lines().any(|l| l == NOTE), "{}", stderr(&out));
    let gate = &read_json(&report)["gate"];
    assert_eq!(gate["verdict"], "PASS");
    // [min, max] stands in for the runs: both 0.9333…, so the mean is 0.4.1's.
    assert_eq!(gate["stats"]["baseline_mean"], 0.9333333333333333);
    assert_eq!(gate["stats"]["p_value"], 0.5);
    let warnings: Vec<&str> = gate["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(warnings.last(), NOTE.strip_prefix("note: ").as_ref());

    // The band with its rates: no note.
    let out = faultgate(&["check", RUN2, "--band", arg(&band)]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stderr(&out).contains("per-run clean rates"));
}

#[test]
fn band_with_an_empty_per_run_still_refuses_what_would_flip_a_verdict() {
    let dir = scratch();
    let band = glm_band(dir.path());
    let cases: [(&str, &str, Value); 4] = [
        ("/clean_rate/min", "clean_rate.min", Value::from(0.99)),
        ("/clean_rate/min", "clean_rate.min", Value::from(-1)),
        ("/clean_rate/max", "clean_rate.max", Value::from(1.5)),
        ("/runs", "runs", Value::from(0)),
    ];
    for (i, (pointer, key, value)) in cases.into_iter().enumerate() {
        let bad = edited(&band, &format!("bad{i}.json"), |b| {
            b["clean_rate"]["per_run"] = Value::Array(Vec::new());
            *b.pointer_mut(pointer).unwrap() = value.clone();
        });
        let out = faultgate(&["check", RUN2, "--band", arg(&bad)]);
        assert_eq!(out.status.code(), Some(2), "{pointer} = {value}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("the band's \"{key}\" must be")),
            "{pointer} = {value}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{pointer}: nothing gated");
    }
}

/// A band of another suite (examples/gate's retail scenarios against examples/traces.json): exit 2
/// before anything is printed, naming the band and showing both sides' keys.
#[test]
fn a_band_that_shares_no_scenario_with_the_run_is_refused() {
    let dir = scratch();
    let report = dir.path().join("r.json");
    let out = faultgate(&[
        "check",
        "examples/traces.json",
        "--band",
        "examples/gate/band.json",
        "--json",
        arg(&report),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().last(),
        Some(
            "faultgate: examples/gate/band.json: the band shares no scenario with this run; this \
             run's keys are 'p-da566af9157f', 'p-bd4d333e967c', 'p-273ca74e6e50', and 2 more, the \
             band's are 'r-0204', 'r-0205', 'r-0208', and 27 more (pass the band built from this \
             suite's baseline runs)"
        )
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(!report.exists());
}

/// A band of which the run has fewer than half the scenarios gates as before, with a warning.
#[test]
fn a_band_sharing_fewer_than_half_its_scenarios_is_warned_about() {
    let dir = scratch();
    let band = glm_band(dir.path());
    let warning = "this run has only 30 of the band's 61 scenarios (fewer than half); the others \
                   count as not clean: is the band from another suite or domain?";
    let grown = |name: &str, extra: usize| {
        edited(&band, name, |b| {
            let scenarios = b["scenarios"].as_array_mut().unwrap();
            scenarios.extend((0..extra).map(|i| Value::from(format!("other-{i}"))));
        })
    };
    let report = dir.path().join("r.json");
    let few = grown("few.json", 31);
    let out = faultgate(&["check", RUN2, "--band", arg(&few), "--json", arg(&report)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l == format!("warning: {warning}")),
        "{}",
        stderr(&out)
    );
    let warnings = read_json(&report)["gate"]["warnings"].clone();
    assert!(
        warnings.as_array().unwrap().iter().any(|w| w == warning),
        "{warnings}"
    );

    // Half of them shared: no such warning.
    let half = grown("half.json", 30);
    let out = faultgate(&["check", RUN2, "--band", arg(&half)]);
    assert!(
        !stderr(&out).contains("fewer than half"),
        "{}",
        stderr(&out)
    );
}

const UNGATED: &str = "5 scenario(s) of this run are not in the band and were not gated (2 of their \
traces failed)";

/// The GLM band gates a run of its own scenarios plus examples/traces.json, whose 5 scenarios no
/// baseline run had (2 of their traces fail): the verdict is the band's, and every output that shows
/// the gate says what was left out.
#[test]
fn scenarios_outside_the_band_are_named_everywhere_the_gate_is_shown() {
    let dir = scratch();
    let band = glm_band(dir.path());
    let p = |name: &str| dir.path().join(name);
    let out = faultgate(&[
        "check",
        RUN2,
        "examples/traces.json",
        "--band",
        arg(&band),
        "--json",
        arg(&p("r.json")),
        "--markdown",
        arg(&p("s.md")),
        "--html",
        arg(&p("r.html")),
        "--junit",
        arg(&p("j.xml")),
        "--audit",
        arg(&p("audit")),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("gate: PASS"), "{}", stdout(&out));
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l == format!("warning: {UNGATED}")),
        "{}",
        stderr(&out)
    );
    let listed = |gate: &Value| {
        gate["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == UNGATED)
    };
    assert!(listed(&read_json(&p("r.json"))["gate"]));
    assert!(listed(&read_json(&p("audit/verdict.json"))["gate"]));
    let text = |name: &str| std::fs::read_to_string(p(name)).unwrap();
    assert!(
        text("s.md").contains(&format!("**Warning:** {UNGATED}\n")),
        "{}",
        text("s.md")
    );
    assert!(text("r.html").contains(&format!("warning: {UNGATED}</p>")));
    assert!(text("j.xml").contains(&format!("<system-err>warning: {UNGATED}</system-err>")));

    // --strict-band refuses the run, before any output.
    let strict = p("strict.json");
    let out = faultgate(&[
        "check",
        RUN2,
        "examples/traces.json",
        "--band",
        arg(&band),
        "--strict-band",
        "--json",
        arg(&strict),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("--strict-band: {UNGATED}; the run is refused")),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(!strict.exists());
}

/// A run whose scenarios are all in the band: no warning, the Markdown and HTML as before, and
/// `--strict-band` changes nothing.
#[test]
fn a_run_inside_the_band_is_unchanged_by_the_warning_and_strict_band() {
    let dir = scratch();
    let band = glm_band(dir.path());
    let p = |name: &str| dir.path().join(name);
    let run = |md: &str, extra: &[&str]| {
        let mut args = vec!["check", RUN2, "--band", arg(&band)];
        let md = p(md);
        args.extend(["--markdown", arg(&md)]);
        args.extend(extra);
        let out = faultgate(&args);
        (out, std::fs::read_to_string(md).unwrap())
    };
    let (plain, plain_md) = run("a.md", &[]);
    let (strict, strict_md) = run("b.md", &["--strict-band"]);
    assert_eq!(plain.status.code(), Some(0));
    assert_eq!(strict.status.code(), Some(0));
    assert_eq!(stderr(&plain), stderr(&strict));
    assert!(!stderr(&plain).contains("not in the band"));
    assert!(!plain_md.contains("**Warning:**"));
    // The Markdown's reproduce command keeps the flag; everything else is the same.
    assert_eq!(
        plain_md
            .lines()
            .filter(|l| !l.contains("faultgate check"))
            .collect::<Vec<_>>(),
        strict_md
            .lines()
            .filter(|l| !l.contains("faultgate check"))
            .collect::<Vec<_>>()
    );
}
