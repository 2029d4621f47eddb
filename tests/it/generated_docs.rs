//! The reference pages generated from the code: the command-line reference (`docs/reference/cli.md`,
//! every command's `--help`), one page per check (`docs/checks/NAME.md`, what `faultgate checks NAME`
//! prints: the check file's module doc) and the formats block of `docs/input-formats.md` (from the
//! decoders). Each test fails while its committed copy differs from what the code generates, and
//! writes the copy instead when `FAULTGATE_WRITE_README=1` is set, as the check list's test does.

use crate::common;

use common::{faultgate, root, stderr, stdout};
use faultgate::ingest::{DECODERS, Detection};
use std::fs;
use std::path::Path;

/// How to rewrite the generated pages, named in every failure.
const REGENERATE: &str = "FAULTGATE_WRITE_README=1 cargo test --test it generated_docs::";

fn writing() -> bool {
    std::env::var_os("FAULTGATE_WRITE_README").is_some_and(|v| v == "1")
}

/// Compares a committed page (relative to the repository root) with its generated text, or writes
/// it when asked to; the problem, if any.
fn compare(page: &str, generated: &str) -> Option<String> {
    let path = root().join(page);
    let committed = fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return None;
    }
    if writing() {
        fs::create_dir_all(path.parent().expect("a page's folder")).expect("create the folder");
        fs::write(&path, generated).unwrap_or_else(|e| panic!("write {page}: {e}"));
        return None;
    }
    let line = committed
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    Some(format!(
        "{page} differs from what the code generates (first at line {}); run {REGENERATE}",
        line + 1
    ))
}

/// The commands the binary has, as paths below `faultgate` (`["expect", "draft"]`), in the order its
/// help lists them, each followed by its own subcommands.
fn commands(path: &[String], out: &mut Vec<Vec<String>>) {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = stdout(&faultgate(&args));
    let Some(list) = help.split("\nCommands:\n").nth(1) else {
        return;
    };
    for line in list.lines().take_while(|l| l.starts_with("  ")) {
        let name = line.split_whitespace().next().expect("a command's name");
        if name == "help" {
            continue;
        }
        let mut sub = path.to_vec();
        sub.push(name.to_string());
        out.push(sub.clone());
        commands(&sub, out);
    }
}

/// `docs/reference/cli.md`: the long help of `faultgate` and of every command below it.
fn cli_reference() -> String {
    let mut paths = vec![Vec::new()];
    commands(&[], &mut paths);
    let mut page = String::from(
        "# Command-line reference\n\n\
         Every command's `--help`, generated from the binary by `tests/it/generated_docs.rs`; do not\n\
         edit it by hand, run `FAULTGATE_WRITE_README=1 cargo test --test it generated_docs::` after\n\
         changing a flag. [Usage](../usage.md) explains the flags with examples.\n",
    );
    for path in &paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        let title = ["faultgate"]
            .into_iter()
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        args.push("--help");
        let o = faultgate(&args);
        assert_eq!(o.status.code(), Some(0), "{title} --help: {}", stderr(&o));
        page.push_str(&format!("\n## `{title}`\n\n```text\n{}```\n", stdout(&o)));
    }
    page
}

#[test]
fn the_cli_reference_is_every_commands_help() {
    let page = cli_reference();
    // Every command of the README's tour has its section, so a broken help parser cannot pass.
    for command in [
        "check",
        "baseline",
        "merge",
        "expect draft",
        "completions",
        "man",
    ] {
        assert!(
            page.contains(&format!("## `faultgate {command}`")),
            "{command}"
        );
    }
    if let Some(problem) = compare("docs/reference/cli.md", &page) {
        panic!("{problem}");
    }
}

#[test]
fn each_check_has_its_page_and_the_pages_are_the_checks_docs() {
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for check in faultgate::checks::checks() {
        let name = check.name();
        names.push(format!("{name}.md"));
        let o = faultgate(&["checks", name]);
        assert_eq!(o.status.code(), Some(0), "checks {name}: {}", stderr(&o));
        let page = stdout(&o);
        assert_eq!(
            Some(page.as_str()),
            faultgate::checks::registry::page(name).as_deref()
        );
        problems.extend(compare(&format!("docs/checks/{name}.md"), &page));
    }
    // A page left behind by a renamed or removed check.
    for entry in fs::read_dir(root().join("docs/checks")).expect("docs/checks/") {
        let file = entry.expect("an entry").file_name();
        let file = file.to_string_lossy();
        if !names.iter().any(|n| *n == file) {
            problems.push(format!("docs/checks/{file} is the page of no check"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_unknown_check_name_is_a_usage_error_on_one_line() {
    let o = faultgate(&["checks", "no_such_check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("faultgate: unknown check 'no_such_check'; available: search_loop, "),
        "{err}"
    );
}

const FORMATS_BEGIN: &str = "<!-- BEGIN formats: generated from the decoders (src/ingest/formats/mod.rs) by tests/it/generated_docs.rs -->\n";
const FORMATS_END: &str = "<!-- END formats -->\n";
const FORMATS_PAGE: &str = "docs/input-formats.md";

/// The formats block: one row per decoder, in the order `--format` lists them.
fn formats_block() -> String {
    let mut out = String::from(
        "| `--format` | how `--format auto` finds it | named in messages as | trace ids in the table |\n\
         |---|---|---|---|\n",
    );
    for decoder in DECODERS {
        let found = match decoder.detection() {
            Detection::Document => "on the file's first document".to_string(),
            Detection::Refines(base) => {
                format!("on the first document, just before `{base}`, whose documents it refines")
            }
            Detection::Binary => {
                "on the file's name or bytes, before any JSON is parsed".to_string()
            }
        };
        let ids = if decoder.named_ids() {
            "whole (names of tasks, trials or files)"
        } else {
            "12 characters, as 0.4.1"
        };
        out.push_str(&format!(
            "| `{}` | {found} | {} | {ids} |\n",
            decoder.name(),
            decoder.title()
        ));
    }
    out
}

/// The formats the page's descriptive table (`| format | recognised by |`) lists, in its order.
fn described_formats(page: &str) -> Vec<String> {
    let table = page
        .split("| format | recognised by |\n")
        .nth(1)
        .expect("docs/input-formats.md has the `recognised by` table");
    table
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('`').nth(1).unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_formats_block_is_the_decoders_and_the_page_describes_each() {
    let path = root().join(FORMATS_PAGE);
    let page = fs::read_to_string(&path).expect("read docs/input-formats.md");
    let names: Vec<&str> = DECODERS.iter().map(|d| d.name()).collect();
    assert_eq!(
        described_formats(&page),
        names,
        "the `recognised by` table of {FORMATS_PAGE} describes the decoders, in their order"
    );
    let start = page.find(FORMATS_BEGIN).expect("the BEGIN formats marker") + FORMATS_BEGIN.len();
    let end = start
        + page[start..]
            .find(FORMATS_END)
            .expect("the END formats marker");
    let updated = format!("{}{}{}", &page[..start], formats_block(), &page[end..]);
    if let Some(problem) = compare(FORMATS_PAGE, &updated) {
        panic!("{problem}");
    }
}

#[test]
fn a_stale_page_is_found_and_named_with_the_way_to_regenerate() {
    if writing() {
        return;
    }
    let dir = common::scratch();
    let page = dir.path().join("page.md");
    fs::write(&page, "# A\nold\n").unwrap();
    let problem = compare(as_page(&page), "# A\nnew\n").expect("a stale page");
    assert!(problem.contains("first at line 2"), "{problem}");
    assert!(problem.ends_with(REGENERATE), "{problem}");
    assert_eq!(compare(as_page(&page), "# A\nold\n"), None);
}

/// An absolute path as `compare` takes it: `Path::join` keeps an absolute path whole.
fn as_page(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}
