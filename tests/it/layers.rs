//! The crate's import rules.
//!
//! 1. **Layers.** `docs/architecture.md` lists the modules in layers, top to bottom (between the
//!    `layers` markers). A file may import from its own layer or the layers below, and
//!    no files may import each other, directly or through others. The graph is read from the source
//!    (`layers/graph.rs`), so a new import that breaks either rule fails here, naming the line.
//! 2. **Python compatibility.** Outside `src/compat/`, code may use only `compat::value` (Python's
//!    read semantics), `compat::reason` (the formatters of reason texts) and `compat::re` (policy
//!    patterns, which are read in Python's syntax). The writers `compat::fmt` and `compat::json`
//!    belong to the output layers: `src/report/` and `src/cli/` (conform's command code included).
//!    Checks and the gate compute values; only writers and reason texts format them the Python way.
//! 3. **Our own code, and `unsafe` where named.** No file carries another author's copyright notice,
//!    and `unsafe` is allowed in two files only: the memory-mapped reading and the C library's `erf`.

mod graph;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use graph::Graph;

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
            // `simdutf8::compat::` or `mycompat::` is another module: ours is reached from the crate's
            // root, a parent, or its own name.
            let before = &rest[..at];
            let foreign = before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                || (before.ends_with("::")
                    && !["crate::", "super::", "self::"]
                        .iter()
                        .any(|root| before.ends_with(root)));
            if foreign {
                rest = after;
                continue;
            }
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
    assert!(breaches("src/report/render/markdown.rs", check).is_empty());
    assert!(breaches("src/compat/reason.rs", check).is_empty());
    let grouped = "use crate::compat::{fmt, value};\nuse crate::compat as py;\n";
    assert_eq!(breaches("src/gate/band.rs", grouped).len(), 2);
    let fine = "use crate::compat::value::py_strip;\n/// see [`crate::compat::json::to_pretty`]\n\
                let r = compat::reason::py_repr_str(s);\nlet p = crate::compat::re::translate(s);\n";
    assert!(breaches("src/checks/new_check.rs", fine).is_empty());
    let foreign = "let e = simdutf8::compat::from_utf8(b);\nlet m = mycompat::fmt::x();\n";
    assert!(breaches("src/ingest/survey.rs", foreign).is_empty());
    let ours = "let x = super::compat::fmt::y();\nlet z = self::compat::json::w();\n";
    assert_eq!(breaches("src/ingest/survey.rs", ours).len(), 2);
}

/// The crate's sources as (path under the crate, text).
fn sources() -> BTreeMap<String, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files
        .iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            (name, fs::read_to_string(path).expect("source is UTF-8"))
        })
        .collect()
}

/// The layers `docs/architecture.md` lists between `<!-- layers -->` and
/// `<!-- /layers -->`: one line each, top first, module names in backticks.
fn documented_layers(doc: &str) -> Vec<Vec<String>> {
    let start = doc
        .find("<!-- layers -->")
        .expect("docs/architecture.md marks its layers");
    let end = doc[start..]
        .find("<!-- /layers -->")
        .expect("the layers block ends")
        + start;
    doc[start..end]
        .lines()
        .filter(|line| line.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|line| {
            line.split('`')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect::<Vec<String>>()
        })
        .filter(|layer| !layer.is_empty())
        .collect()
}

/// The top-level module of a file under `src/`: `src/checks/registry.rs` is `checks`, `src/run/mod.rs`
/// is `run`.
fn top_module(file: &str) -> &str {
    let rest = file.strip_prefix("src/").unwrap_or(file);
    let first = rest.split('/').next().unwrap_or(rest);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// Every breach of the layer rule in `files`: arrows to a higher layer, file cycles, and modules the
/// layers do not place. `layers` are top first.
fn layer_breaches(files: &BTreeMap<String, String>, layers: &[Vec<String>]) -> Vec<String> {
    let height = |module: &str| {
        layers
            .iter()
            .position(|layer| layer.iter().any(|m| m == module))
            .map(|from_top| layers.len() - from_top)
    };
    let mut out = Vec::new();
    let mut unplaced: Vec<&str> = files
        .keys()
        .map(|f| top_module(f))
        .filter(|m| !["lib", "main"].contains(m) && height(m).is_none())
        .collect();
    unplaced.dedup();
    for module in unplaced {
        out.push(format!(
            "module `{module}` is in no layer of docs/architecture.md"
        ));
    }
    let graph = Graph::of(files);
    for arrow in &graph.arrows {
        let (from, to) = (top_module(&arrow.from), top_module(&arrow.to));
        if let (Some(a), Some(b)) = (height(from), height(to))
            && b > a
        {
            out.push(format!(
                "{}:{}: `{from}` imports `{to}` ({}), a higher layer",
                arrow.from, arrow.line, arrow.to
            ));
        }
    }
    for (files, arrows) in graph.cycles() {
        let arrows: Vec<String> = arrows
            .iter()
            .map(|a| format!("  {}:{} -> {}", a.from, a.line, a.to))
            .collect();
        out.push(format!(
            "files that import each other: {}\n{}",
            files.join(", "),
            arrows.join("\n")
        ));
    }
    out
}

#[test]
fn imports_go_down_the_documented_layers_and_no_files_import_each_other() {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md");
    let layers = documented_layers(&doc);
    assert!(
        layers.len() >= 5,
        "docs/architecture.md lists the layers: {layers:?}"
    );
    let files = sources();
    let graph = Graph::of(&files);
    assert!(
        graph.arrows.len() > 100,
        "the scan found the imports ({} arrows)",
        graph.arrows.len()
    );
    let breaches = layer_breaches(&files, &layers);
    assert!(
        breaches.is_empty(),
        "the module graph breaks the layers of docs/architecture.md:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn the_layer_scan_sees_cycles_upward_arrows_and_unplaced_modules() {
    let tree = |files: &[(&str, &str)]| -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    };
    let layers = vec![
        vec!["report".to_string()],
        vec!["checks".to_string()],
        vec!["table".to_string()],
    ];
    // A re-export is followed to its source, test code and comments are not imports, and a chain
    // down the layers is fine.
    let fine = tree(&[
        (
            "src/lib.rs",
            "pub mod checks; pub mod report; pub mod table;",
        ),
        (
            "src/checks/mod.rs",
            "mod contract; mod registry; mod loop_check;\npub use contract::Check;\n\
             #[cfg(test)] mod testing;",
        ),
        (
            "src/checks/contract.rs",
            "pub trait Check {}\nuse crate::table::Columns;",
        ),
        (
            "src/checks/registry.rs",
            "use super::loop_check::LoopCheck;\npub static ALL: &[&dyn super::Check] = &[&LoopCheck];",
        ),
        (
            "src/checks/loop_check.rs",
            "use super::Check; // not crate::report\nconst S: &str = \"crate::report::x\";\n\
             #[cfg(test)]\nmod tests { use crate::report::Report; }",
        ),
        ("src/checks/testing.rs", "use crate::report::Report;"),
        ("src/table/mod.rs", "pub struct Columns;"),
        (
            "src/report/mod.rs",
            "use crate::checks::{self, Check};\nfn f() { crate::table::Columns; }",
        ),
    ]);
    assert_eq!(layer_breaches(&fine, &layers), Vec::<String>::new());
    let graph = Graph::of(&fine);
    let arrows: Vec<(&str, &str)> = graph
        .arrows
        .iter()
        .map(|a| (a.from.as_str(), a.to.as_str()))
        .collect();
    assert!(arrows.contains(&("src/checks/loop_check.rs", "src/checks/contract.rs")));
    assert!(arrows.contains(&("src/checks/mod.rs", "src/checks/contract.rs")));
    assert!(
        !arrows
            .iter()
            .any(|(from, to)| from.contains("loop_check") && to.contains("report"))
    );
    assert!(arrows.contains(&("src/report/mod.rs", "src/table/mod.rs")));

    // Two files that import each other, an upward arrow, and a module outside every layer.
    let mut broken = fine.clone();
    broken.insert(
        "src/checks/contract.rs".into(),
        "pub trait Check {}\nuse super::registry::ALL;".into(),
    );
    broken.insert(
        "src/table/extra.rs".into(),
        "fn f() {\n    crate::report::render();\n}".into(),
    );
    broken.insert("src/judge.rs".into(), "use crate::table::Columns;".into());
    let found = layer_breaches(&broken, &layers);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(
        found[0],
        "module `judge` is in no layer of docs/architecture.md"
    );
    assert_eq!(
        found[1],
        "src/table/extra.rs:2: `table` imports `report` (src/report/mod.rs), a higher layer"
    );
    assert!(
        found[2].starts_with(
            "files that import each other: src/checks/contract.rs, src/checks/loop_check.rs, \
             src/checks/registry.rs"
        ),
        "{}",
        found[2]
    );
}

/// The files allowed `#![allow(unsafe_code)]` (the crate denies it): the memory mapping of inputs,
/// the call of the C library's `erf` that keeps p-values bit-identical to 0.4.1's, and the call of
/// `sync_file_range` that starts an output's writeback as it is written.
const UNSAFE_ALLOWED: [&str; 3] = ["src/gate/erf.rs", "src/ingest/source.rs", "src/output.rs"];

/// Every Rust source of the project (library, tests, benches, fuzz targets), as paths relative to
/// the root.
fn project_sources() -> Vec<(String, String)> {
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
    let foreign: Vec<String> = project_sources()
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
    let allowing: Vec<String> = project_sources()
        .iter()
        .filter(|(file, text)| file.starts_with("src/") && text.contains(allow))
        .map(|(file, _)| file.clone())
        .collect();
    assert_eq!(allowing, UNSAFE_ALLOWED);
}
