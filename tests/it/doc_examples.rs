//! The console examples of the README and the guide (`docs/guide.md`) run as written. Each `sh` block's
//! commands run in order in one scratch folder holding a copy of `examples/`, so a band the
//! guide builds is the band it gates with; a command must not end in an error (exit 2), and the `text`
//! block that follows a block whose last command ran is that command's output: its lines must appear
//! in what the command printed, in order (stderr first, then stdout; elapsed times masked).
//!
//! Not run: commands of other programs ([`OUTSIDE`], which `.ci/run` and `scripts/test_wheel` run),
//! and commands over placeholder inputs ([`PLACEHOLDERS`]), which are only parsed: they must be
//! refused by the command (`faultgate: ...`, a missing input), not by the parser (a flag the command
//! line no longer has).

use crate::common;

use common::{command, root, stderr, stdout};
use std::fs;
use std::path::Path;

/// The pages whose examples run.
const PAGES: [&str; 2] = ["README.md", "docs/guide.md"];

/// Commands of other programs the pages show, by their first words, and why they do not run here.
const OUTSIDE: [(&str, &str); 3] = [
    ("cargo test", "the test suite itself; run by `.ci/run`"),
    (
        "cargo install",
        "installs into ~/.cargo/bin; the binary it builds is the one under test",
    ),
    (
        "pip install",
        "needs PyPI; `scripts/test_wheel` installs the wheel and runs the examples with it",
    ),
];

/// Arguments that stand for the reader's own runs, which the repository does not ship.
const PLACEHOLDERS: [&str; 5] = ["RUN1", "RUN2", "RUN3", "candidate/", "labelled/"];

/// A fenced block of a page: its language, its first line's number and its lines.
struct Block {
    lang: String,
    line: usize,
    body: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => {
                open = Some(Block {
                    lang: lang.trim().to_string(),
                    line: i + 1,
                    body: Vec::new(),
                });
            }
            (Some(_), Some("")) => out.extend(open.take()),
            (Some(block), _) => block.body.push(line.to_string()),
            (None, None) => {}
        }
    }
    out
}

/// A command line's words, as a POSIX shell splits them (single and double quotes, no expansions),
/// up to a `#` comment.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => out.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    out.extend(word);
    out
}

/// The commands of an `sh` block: lines joined at a trailing backslash, split into words.
fn commands(body: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in body {
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let command = words(&pending);
        if !command.is_empty() {
            out.push(command);
        }
        pending.clear();
    }
    out
}

/// The faultgate arguments of a command (`cargo run --` stands for the binary the tests built), or
/// `None` for another program's command.
fn faultgate_args(command: &[String]) -> Option<&[String]> {
    match command {
        [first, rest @ ..] if first == "faultgate" => Some(rest),
        [cargo, run, dashes, rest @ ..] if cargo == "cargo" && run == "run" && dashes == "--" => {
            Some(rest)
        }
        _ => None,
    }
}

/// A line of output as a page shows it: the elapsed time that ends a summary line masked.
fn masked(line: &str) -> String {
    let line = line.trim_end();
    if let Some((head, tail)) = line.rsplit_once(" · ")
        && tail.ends_with('s')
        && tail[..tail.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.')
    {
        return format!("{head} · <elapsed>");
    }
    line.to_string()
}

/// Copies a folder, as the examples are shown: a link would make the binary name files by the
/// folder the link points to.
fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create the copy");
    for entry in fs::read_dir(from).expect("read the folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

/// The problems with one page's examples, and how many commands ran.
fn run_page(page: &str) -> (Vec<String>, usize) {
    let text = fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
    let dir = common::scratch();
    copy_dir(&root().join("examples"), &dir.path().join("examples"));
    let mut problems = Vec::new();
    let mut ran = 0;
    // What the last command of the last `sh` block printed, when it ran.
    let mut last_output: Option<Vec<String>> = None;
    for block in blocks(&text) {
        let at = format!("{page}:{}", block.line);
        match block.lang.as_str() {
            "sh" => {
                last_output = None;
                for cmd in commands(&block.body) {
                    let shown = cmd.join(" ");
                    let Some(args) = faultgate_args(&cmd) else {
                        if !OUTSIDE.iter().any(|(prefix, _)| shown.starts_with(prefix)) {
                            problems.push(format!(
                                "{at}: `{shown}` is no faultgate command and not named in OUTSIDE"
                            ));
                        }
                        last_output = None;
                        continue;
                    };
                    let o = command(dir.path())
                        .args(args)
                        .output()
                        .expect("run faultgate");
                    let err = stderr(&o);
                    if args.iter().any(|a| PLACEHOLDERS.contains(&a.as_str())) {
                        // Clap refuses a command line with `error: ...` before the command runs; the
                        // command's own refusal is its last line.
                        let refused = err.lines().last().unwrap_or_default();
                        if o.status.code() != Some(2) || !refused.starts_with("faultgate: ") {
                            problems.push(format!(
                                "{at}: `{shown}` should fail only on its placeholder input, got exit {:?}: {err}",
                                o.status.code()
                            ));
                        }
                        last_output = None;
                        continue;
                    }
                    ran += 1;
                    if !matches!(o.status.code(), Some(0 | 1)) {
                        problems.push(format!(
                            "{at}: `{shown}` exited {:?}: {err}",
                            o.status.code()
                        ));
                    }
                    let printed = format!("{err}{}", stdout(&o));
                    last_output = Some(printed.lines().map(masked).collect());
                }
            }
            "text" => {
                let Some(printed) = last_output.take() else {
                    continue;
                };
                let mut rest = printed.iter();
                for line in block.body.iter().map(|l| masked(l)) {
                    if line.is_empty() {
                        continue;
                    }
                    if !rest.any(|p| *p == line) {
                        problems.push(format!(
                            "{at}: the command before this block does not print, in this order:\n  {line}\nit printed:\n  {}",
                            printed.join("\n  ")
                        ));
                        break;
                    }
                }
            }
            _ => last_output = None,
        }
    }
    (problems, ran)
}

#[test]
fn the_readme_and_guide_examples_run_and_print_what_they_show() {
    let mut problems = Vec::new();
    let mut ran = Vec::new();
    for page in PAGES {
        let (found, count) = run_page(page);
        problems.extend(found);
        ran.push(count);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The README ran one command and the guide five when this test was written; none means the
    // block parser stopped seeing them.
    assert!(
        ran.iter().all(|&n| n >= 1),
        "commands run per page: {ran:?}"
    );
}

#[test]
fn commands_are_split_as_a_shell_splits_them() {
    let body: Vec<String> = [
        "faultgate check a.json --budget 'latency.p95 <= +20%' \\",
        "    --by model   # a comment",
        "",
        "cargo run -- check \"x y\"",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let found = commands(&body);
    assert_eq!(
        found,
        [
            vec![
                "faultgate",
                "check",
                "a.json",
                "--budget",
                "latency.p95 <= +20%",
                "--by",
                "model"
            ],
            vec!["cargo", "run", "--", "check", "x y"],
        ]
    );
    assert_eq!(
        faultgate_args(&found[1]).map(<[String]>::len),
        Some(2),
        "cargo run -- stands for the binary"
    );
    assert_eq!(
        masked("2/5 traces failed · judge none · 0.0s  "),
        "2/5 traces failed · judge none · <elapsed>"
    );
    assert_eq!(masked("gate: FAIL · p=0.000"), "gate: FAIL · p=0.000");
    let page = "x\n```sh\nfaultgate checks\n```\n```text\nout\n```\n";
    let found = blocks(page);
    assert_eq!(found.len(), 2);
    assert_eq!((found[1].lang.as_str(), found[1].line), ("text", 5));
}
