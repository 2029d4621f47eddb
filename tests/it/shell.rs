//! `faultgate completions SHELL` and `faultgate man` through the binary: the scripts are valid for
//! their shell and know the subcommands and flags; the man page is roff naming every subcommand.

use std::process::{Command, Output};

fn faultgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultgate"))
        .args(args)
        .output()
        .expect("run faultgate")
}

fn stdout(args: &[&str]) -> String {
    let out = faultgate(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs bash; .ci/run runs it (cargo test -- --ignored)"]
fn bash_completion_loads_and_completes_subcommands_and_flags() {
    let script = stdout(&["completions", "bash"]);
    // Source it in a real bash and ask the completion function for `faultgate che` and
    // `faultgate check --jun`.
    let dir = crate::common::ScratchDir::named("completion");
    let path = dir.join("faultgate.bash");
    std::fs::write(&path, &script).unwrap();
    let probe = r#"
source "$1"
complete -p faultgate >/dev/null || exit 3
COMP_WORDS=(faultgate che); COMP_CWORD=1; _faultgate faultgate che faultgate; echo "sub: ${COMPREPLY[*]}"
COMP_WORDS=(faultgate check --jun); COMP_CWORD=2; _faultgate faultgate --jun check; echo "flag: ${COMPREPLY[*]}"
"#;
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-c", probe, "probe"])
        .arg(&path)
        .output()
        .expect("bash");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("sub: check checks"), "{text}");
    assert!(text.contains("flag: --junit\n"), "{text}");
}

#[test]
fn other_shells_get_their_own_formats() {
    assert!(stdout(&["completions", "zsh"]).starts_with("#compdef faultgate"));
    let fish = stdout(&["completions", "fish"]);
    assert!(fish.contains("complete -c faultgate") && fish.contains("-l html"));
    let ps = stdout(&["completions", "powershell"]);
    assert!(ps.contains("Register-ArgumentCompleter") && ps.contains("--junit"));
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let out = faultgate(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn man_page_is_roff_with_every_subcommand() {
    let page = stdout(&["man"]);
    assert!(page.contains(".TH faultgate 1"), "{}", &page[..200]);
    assert!(
        page.contains(".SH NAME\nfaultgate \\- A release gate for AI agents over recorded traces")
    );
    for sub in [
        "check",
        "baseline",
        "precheck",
        "conform",
        "calibrate",
        "completions",
    ] {
        assert!(
            page.contains(&format!("faultgate\\-{sub}(1)")),
            "man page lacks {sub}"
        );
    }
}

/// `check -h` opens with two examples, groups its flags under headings (the gate and output flags
/// before the judge's), and fits a screen.
#[test]
fn check_help_opens_with_examples_and_groups_its_flags() {
    let help = stdout(&["check", "-h"]);
    let lines: Vec<&str> = help.lines().collect();
    assert!(lines.len() < 80, "{} lines:\n{help}", lines.len());
    let usage = lines.iter().position(|l| l.starts_with("Usage:")).unwrap();
    let examples = lines[..usage]
        .iter()
        .filter(|l| l.trim_start().starts_with("faultgate check "))
        .count();
    assert_eq!(examples, 2, "{help}");
    let at = |needle: &str| {
        help.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in:\n{help}"))
    };
    for heading in [
        "\nInputs:\n",
        "\nChecks:\n",
        "\nGate:\n",
        "\nOutputs:\n",
        "\nJudges:\n",
        "\nScale:\n",
    ] {
        at(heading);
    }
    assert!(at("\nInputs:\n") < at("--format <"));
    assert!(at("\nGate:\n") < at("--band <") && at("--band <") < at("\nOutputs:\n"));
    assert!(at("--json <") < at("\nJudges:\n") && at("--html <") < at("\nJudges:\n"));
    assert!(at("\nJudges:\n") < at("--judge <") && at("--judge-url <") < at("\nScale:\n"));
    // The long help has the same groups.
    let long = stdout(&["check", "--help"]);
    assert!(long.contains("\nGate:\n") && long.contains("\nJudges:\n"));
}
