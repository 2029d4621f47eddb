//! `--color` and `NO_COLOR` through the binary: piped output is byte-identical whatever the setting
//! (unless `--color always`), and coloured output differs from it only by the escapes.

use std::process::{Command, Output};

fn faultgate(args: &[&str], no_color: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultgate"));
    cmd.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    match no_color {
        Some(v) => cmd.env("NO_COLOR", v),
        None => cmd.env_remove("NO_COLOR"),
    };
    cmd.output().expect("run faultgate")
}

/// Stdout without the summary's elapsed time, which differs between runs.
fn stdout(out: &Output) -> String {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    text.lines()
        .map(|l| match l.rfind(" \u{b7} ") {
            Some(i) if l.ends_with('s') && l.contains("traces failed") => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const RUN: [&str; 2] = ["check", "examples/traces.json"];

#[test]
fn piped_output_is_plain_unless_colour_is_forced() {
    let plain = faultgate(&RUN, None);
    assert_eq!(plain.status.code(), Some(1));
    let plain = stdout(&plain);
    assert!(!plain.contains('\x1b'));
    for (extra, no_color) in [
        (None, Some("1")),
        (Some("--color=never"), None),
        (Some("--color=auto"), None),
    ] {
        let mut args = RUN.to_vec();
        args.extend(extra);
        assert_eq!(
            stdout(&faultgate(&args, no_color)),
            plain,
            "{extra:?} {no_color:?}"
        );
    }
    // Forced colour wins over NO_COLOR, and removing the escapes gives the plain bytes back.
    let forced = stdout(&faultgate(
        &["check", "examples/traces.json", "--color", "always"],
        Some("1"),
    ));
    assert!(forced.contains("\x1b[31mFAIL\x1b[0m 1.00"));
    assert!(forced.contains("\x1b[2mok\x1b[0m   1.00"));
    let stripped = forced
        .replace("\x1b[31m", "")
        .replace("\x1b[2m", "")
        .replace("\x1b[0m", "");
    assert_eq!(stripped, plain);
}

#[test]
fn colour_flag_is_not_part_of_the_reproduce_command() {
    let dir = crate::common::ScratchDir::named("colour");
    let md = dir.join("s.md");
    faultgate(
        &[
            "check",
            "examples/traces.json",
            "--color",
            "always",
            "--markdown",
            md.to_str().unwrap(),
        ],
        None,
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("\nfaultgate check examples/traces.json\n"),
        "{text}"
    );
}

#[test]
fn bad_colour_value_is_a_usage_error() {
    let out = faultgate(
        &["check", "examples/traces.json", "--color", "sometimes"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

/// Runs the table on a pseudo-terminal with util-linux `script`, so stdout is a terminal.
fn on_terminal(no_color: Option<&str>) -> String {
    let cmd = format!(
        "{} check examples/traces.json 2>/dev/null",
        env!("CARGO_BIN_EXE_faultgate")
    );
    let mut script = Command::new("script");
    script
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    match no_color {
        Some(v) => script.env("NO_COLOR", v),
        None => script.env_remove("NO_COLOR"),
    };
    let out = script.output().expect("util-linux script");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs util-linux `script` for a terminal; .ci/run runs it (cargo test -- --ignored)"]
fn a_terminal_gets_colour_unless_no_color_is_set() {
    assert!(on_terminal(None).contains("\x1b[31mFAIL\x1b[0m"));
    let plain = on_terminal(Some("1"));
    assert!(plain.contains("FAIL 1.00") && !plain.contains('\x1b'));
}

/// The gate line's verdict is coloured with the table (red FAIL, green PASS); piped, it is plain.
#[test]
fn gate_verdict_is_coloured_when_colour_is_on() {
    let gate = |candidate: &str, colour: &str| {
        let out = faultgate(
            &[
                "check",
                candidate,
                "--band",
                "examples/gate/band.json",
                "--color",
                colour,
            ],
            None,
        );
        stdout(&out)
    };
    let fail = gate("examples/gate/candidate_gpt.json", "always");
    let pass = gate("examples/gate/baseline_glm_run1.json", "always");
    assert!(
        fail.contains("\ngate: \x1b[31mFAIL\x1b[0m \u{b7} "),
        "{fail}"
    );
    assert!(
        pass.contains("\ngate: \x1b[32mPASS\x1b[0m \u{b7} "),
        "{pass}"
    );
    let plain = gate("examples/gate/candidate_gpt.json", "never");
    assert!(
        plain.contains("\ngate: FAIL \u{b7} ") && !plain.contains("\x1b[31mFAIL\x1b[0m \u{b7}")
    );
}
