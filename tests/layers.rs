//! Rules over the source tree. Every file is the project's own (no copyright notice of another
//! author), and `unsafe` is allowed in two files only: the memory-mapped reading and the C library's
//! `erf`.
//!
//! The compatibility layer's import rule: outside `src/compat/`, code may use only `compat::value`
//! (Python's read semantics), `compat::reason` (the formatters of reason texts) and `compat::re` (policy
//! patterns, which are read in Python's syntax). The writers `compat::fmt` and `compat::json` belong to
//! the output layers: `src/report/` and `src/cli/` (conform's command code included).
//! Checks and the gate compute values; only writers and reason texts format them the Python way.

use std::fs;
use std::path::{Path, PathBuf};

/// What code outside `compat/` may use of it.
const OPEN_MODULES: [&str; 3] = ["value", "reason", "re"];

/// The output writers, which may also use `compat::fmt` and `compat::json`.
const WRITERS: [&str; 2] = ["src/report/", "src/cli/"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The rule's breaches in one file's text, as `file:line: what`. Comments are skipped (a doc link is
/// not a use); a grouped or renamed import of `compat` itself is refused, so every use names its
/// module and the scan stays exact.
fn breaches(file: &str, text: &str) -> Vec<String> {
    if file.starts_with("src/compat/") {
        return Vec::new();
    }
    let writer = WRITERS.iter().any(|w| file.starts_with(w));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("compat::") {
            let after = &rest[at + "compat::".len()..];
            let module: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let allowed = if module.is_empty() {
                false
            } else {
                OPEN_MODULES.contains(&module.as_str())
                    || (writer && ["fmt", "json"].contains(&module.as_str()))
            };
            if !allowed {
                let what = if module.is_empty() {
                    after.chars().take(12).collect()
                } else {
                    module
                };
                out.push(format!("{file}:{}: compat::{what}", i + 1));
            }
            rest = after;
        }
        if code.contains("compat as ") || code.contains("::compat;") {
            out.push(format!("{file}:{}: imports compat itself", i + 1));
        }
    }
    out
}

#[test]
fn only_writers_use_the_python_formatting() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 50, "the scan found the sources");
    let mut found = Vec::new();
    let mut users = 0;
    for path in &files {
        let file = path
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(path).expect("source is UTF-8");
        if !file.starts_with("src/compat/") && text.contains("compat::") {
            users += 1;
        }
        found.extend(breaches(&file, &text));
    }
    assert!(users > 20, "the domain code reads values through compat");
    assert!(
        found.is_empty(),
        "outside compat/ only compat::{{value, reason, re}} may be used, and compat::{{fmt, json}} \
         only by the writers ({WRITERS:?}):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_sees_a_breach() {
    let check = "use crate::compat::fmt::fmt_fixed;\nlet s = crate::compat::json::to_pretty(&v);\n";
    assert_eq!(
        breaches("src/checks/new_check.rs", check),
        [
            "src/checks/new_check.rs:1: compat::fmt",
            "src/checks/new_check.rs:2: compat::json"
        ]
    );
    assert!(breaches("src/report/markdown.rs", check).is_empty());
    assert!(breaches("src/compat/reason.rs", check).is_empty());
    let grouped = "use crate::compat::{fmt, value};\nuse crate::compat as py;\n";
    assert_eq!(breaches("src/gate/band.rs", grouped).len(), 2);
    let fine = "use crate::compat::value::py_strip;\n/// see [`crate::compat::json::to_pretty`]\n\
                let r = compat::reason::py_repr_str(s);\nlet p = crate::compat::re::translate(s);\n";
    assert!(breaches("src/checks/new_check.rs", fine).is_empty());
}

/// The files allowed `#![allow(unsafe_code)]` (the crate denies it): the memory mapping of inputs,
/// and the call of the C library's `erf` that keeps p-values bit-identical to 0.4.1's.
const UNSAFE_ALLOWED: [&str; 2] = ["src/gate/erf.rs", "src/ingest/source.rs"];

/// The project's Rust sources, as paths relative to the root.
fn sources() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "fuzz/fuzz_targets"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    files.sort();
    files
        .iter()
        .map(|path| {
            let file = path
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            (file, fs::read_to_string(path).expect("source is UTF-8"))
        })
        .collect()
}

#[test]
fn every_source_file_is_the_projects_own() {
    // Written without the words themselves, so this file does not match its own scan.
    let notices = [concat!("Copy", "right"), concat!("All rights ", "reserved")];
    let foreign: Vec<String> = sources()
        .iter()
        .filter(|(_, text)| notices.iter().any(|n| text.contains(n)))
        .map(|(file, _)| file.clone())
        .collect();
    assert!(
        foreign.is_empty(),
        "files carrying another author's notice: {foreign:?}"
    );
}

#[test]
fn unsafe_code_is_allowed_only_where_named() {
    let allow = concat!("allow(", "unsafe_code)");
    let allowing: Vec<String> = sources()
        .iter()
        .filter(|(file, text)| file.starts_with("src/") && text.contains(allow))
        .map(|(file, _)| file.clone())
        .collect();
    assert_eq!(allowing, UNSAFE_ALLOWED);
}
