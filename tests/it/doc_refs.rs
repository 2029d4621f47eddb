//! Every section reference in the code resolves: a section sign and number (optionally followed by
//! `item K`) in `src/`, `tests/`, `scripts/`, `benches/` or `fuzz/` must name a heading of
//! `docs/compatibility.md` (and an item that section lists), and a file that cites a section must name
//! that document, so a reader knows where the number points. Data (fixtures, fuzz seeds) is not
//! scanned. This file spells the section sign `\u{a7}` to stay out of its own scan.

use crate::common;

use common::root;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const SECTION: char = '\u{a7}';
const DOC: &str = "docs/compatibility.md";

/// One citation found in a source file.
#[derive(Debug)]
struct Citation {
    file: String,
    line: usize,
    section: String,
    item: Option<u32>,
}

/// Every file under `dir`, skipping hidden directories, build output and data (fixtures, fuzz inputs).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let data = ["target", "fixtures", "seeds", "corpus", "artifacts"];
        if name.starts_with('.') || data.contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The section number right after a section sign: digits and dots, without a trailing dot
/// (`11.5.` at the end of a sentence is section 11.5).
fn section_at(text: &str) -> Option<(String, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number = text[..end].trim_end_matches('.');
    (!number.is_empty() && number.starts_with(|c: char| c.is_ascii_digit()))
        .then(|| (number.to_string(), &text[end..]))
}

/// The citations of one file's text.
fn citations(file: &str, text: &str) -> Vec<Citation> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices(SECTION) {
            let after = &line[at + SECTION.len_utf8()..];
            let Some((section, rest)) = section_at(after) else {
                panic!("{file}:{}: a section sign without a number", i + 1);
            };
            // `item 15`, or the first of `items 1-2`.
            let item = rest
                .strip_prefix(" item ")
                .or_else(|| rest.strip_prefix(" items "))
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|d| d.parse().ok());
            out.push(Citation {
                file: file.to_string(),
                line: i + 1,
                section,
                item,
            });
        }
    }
    out
}

/// The document's numbered headings, each with the text up to the next heading.
fn sections(doc: &str) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        if let Some(title) = line.strip_prefix('#') {
            let title = title.trim_start_matches('#').trim_start();
            current = section_at(title).map(|(number, _)| number);
            if let Some(number) = &current {
                assert!(
                    out.insert(number.clone(), String::new()).is_none(),
                    "{DOC}: section {number} appears twice"
                );
            }
            continue;
        }
        if let Some(number) = &current {
            let body = out.get_mut(number).expect("section opened");
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

#[test]
fn every_section_the_code_cites_is_in_the_compatibility_doc() {
    let root = root();
    let doc = fs::read_to_string(root.join(DOC)).expect("read docs/compatibility.md");
    let sections = sections(&doc);
    // The headings the code has always cited, so a broken heading parser cannot pass vacuously.
    for expected in ["5.2", "8.3", "11.5", "18.3.1", "20.1"] {
        assert!(
            sections.contains_key(expected),
            "{DOC} lacks section {expected}"
        );
    }

    let mut files = Vec::new();
    for dir in ["src", "tests", "scripts", "benches", "fuzz"] {
        files_under(&root.join(dir), &mut files);
    }
    files.sort();
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for path in &files {
        let Ok(bytes) = fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let file = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let cited = citations(&file, &text);
        if !cited.is_empty() && !text.contains(DOC) {
            problems.push(format!(
                "{file}: cites sections but never names {DOC}, so a reader cannot tell where they point"
            ));
        }
        found.extend(cited);
    }

    for c in &found {
        match sections.get(&c.section) {
            None => problems.push(format!(
                "{}:{}: section {} is not a heading of {DOC}",
                c.file, c.line, c.section
            )),
            Some(body) => {
                if let Some(item) = c.item
                    && !body.contains(&format!("**Item {item}.**"))
                {
                    problems.push(format!(
                        "{}:{}: section {} of {DOC} does not list item {item}",
                        c.file, c.line, c.section
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The code cited about thirty sections when the document was written; far fewer means the scan
    // stopped seeing them.
    assert!(found.len() >= 20, "only {} citations found", found.len());
}

#[test]
fn citations_parse_numbers_and_items() {
    let text = format!(
        "see {SECTION}11.4 and {SECTION}11.5.\nper {SECTION}20.1 item 15, {SECTION}20.1 items 1-2 and {SECTION}18.3.1's window"
    );
    let found: Vec<(String, Option<u32>)> = citations("x", &text)
        .into_iter()
        .map(|c| (c.section, c.item))
        .collect();
    assert_eq!(
        found,
        [
            ("11.4".to_string(), None),
            ("11.5".to_string(), None),
            ("20.1".to_string(), Some(15)),
            ("20.1".to_string(), Some(1)),
            ("18.3.1".to_string(), None),
        ]
    );
    let doc = "# Title\n## 5. precheck\ntext\n### 5.2 Rows\n1. row\n#### 18.3.1 Cards\n";
    let sections = sections(doc);
    assert_eq!(sections.keys().collect::<Vec<_>>(), ["18.3.1", "5", "5.2"]);
    assert_eq!(sections["5.2"], "1. row\n");
}

#[test]
fn the_readme_links_the_compatibility_doc() {
    let readme = fs::read_to_string(root().join("README.md")).expect("read README.md");
    assert!(
        readme.contains(&format!("]({DOC})")),
        "README.md does not link {DOC}"
    );
}
