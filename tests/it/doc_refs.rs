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

/// The flow in `ARCHITECTURE.md` follows one trace file by file, so a file it names that moved or went
/// away misleads the reader at that step: every `src/` path it names in code must exist.
#[test]
fn the_architecture_flow_names_files_that_exist() {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    let start = text
        .find("<!-- flow")
        .expect("ARCHITECTURE.md has a flow section");
    let end = text.find("<!-- /flow -->").expect("the flow section ends");
    let flow = &text[start..end];
    let named: Vec<&str> = flow
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("src/") && !span.contains('<'))
        .collect();
    assert!(
        named.len() >= 20,
        "the flow names only {} files",
        named.len()
    );
    let missing: Vec<&str> = named
        .into_iter()
        .filter(|path| !root().join(path).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's flow names files that do not exist: {}",
        missing.join(", ")
    );
}

/// The Markdown pages whose links are checked: the README, the contributing guide, the architecture
/// page, every page of `docs/` and its folders, and the READMEs that describe the benches, the
/// examples, the calibration sets and the check fixtures.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut out: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
        "benches/README.md",
        "examples/README.md",
        "calibration/README.md",
        "tests/checks/README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    out.extend(docs_pages());
    out
}

/// The Markdown pages of `docs/` and its folders (the generated check and command-line pages).
fn docs_pages() -> Vec<PathBuf> {
    let mut files = Vec::new();
    files_under(&root().join("docs"), &mut files);
    files.retain(|p| p.extension().is_some_and(|e| e == "md"));
    files.sort();
    files
}

/// The book (`book.toml`, built by mdBook) holds every page of `docs/`: `docs/SUMMARY.md` links each
/// one, since a page it does not list is left out of the book, and every page it links exists.
#[test]
fn the_book_summary_lists_every_page_of_docs() {
    let summary_path = root().join("docs/SUMMARY.md");
    let summary = fs::read_to_string(&summary_path).expect("read docs/SUMMARY.md");
    let listed: Vec<PathBuf> = summary
        .lines()
        .flat_map(link_targets)
        .map(|t| root().join("docs").join(t))
        .collect();
    let missing: Vec<String> = docs_pages()
        .into_iter()
        .filter(|p| *p != summary_path && !listed.contains(p))
        .map(|p| p.strip_prefix(root()).unwrap_or(&p).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/SUMMARY.md does not list: {}",
        missing.join(", ")
    );
    assert!(listed.len() >= 30, "only {} pages listed", listed.len());
}

/// A line with its code spans (`` `...` ``, any number of backticks) taken out, so that a link
/// written as code is not read as a link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].len() - rest[at..].trim_start_matches('`').len();
        let fence = &rest[at..at + run];
        let after = &rest[at + run..];
        match after.find(fence) {
            Some(close) => rest = &after[close + run..],
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let mark: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        let is_mark = mark.len() >= 3 && mark.chars().all(|c| c == mark.chars().next().unwrap());
        match &fence {
            None if is_mark && !(mark.starts_with('`') && trimmed[mark.len()..].contains('`')) => {
                fence = Some(mark);
                continue;
            }
            Some(open)
                if is_mark
                    && mark.starts_with(&open[..1])
                    && mark.len() >= open.len()
                    && trimmed[mark.len()..].trim().is_empty() =>
            {
                fence = None;
                continue;
            }
            _ => {}
        }
        if fence.is_none() {
            out.push((i + 1, line));
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '_' || c == '-' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings (a repeated heading gets `-1`, `-2`, ... as on GitHub).
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        out.push(anchor);
    }
    out
}

/// The targets of a line's links and images: `[text](target)` and `src="target"`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    for (at, _) in line.match_indices("](") {
        let rest = &line[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
        }
    }
    for (at, _) in line.match_indices("src=\"") {
        let rest = &line[at + 5..];
        if let Some(end) = rest.find('"') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

/// Every broken relative link of the pages (a file that does not exist, or an anchor that is no
/// heading of the page it points into), and how many relative links were checked.
fn broken_links(pages: &[PathBuf]) -> (Vec<String>, usize) {
    let root = root();
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages {
        let text = fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let name = page
            .strip_prefix(root)
            .unwrap_or(page)
            .display()
            .to_string();
        for (line_no, line) in prose_lines(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().expect("a page's folder").join(path)
                };
                if !file.exists() {
                    problems.push(format!("{name}:{line_no}: {target}: no such file"));
                    continue;
                }
                if anchor.is_empty() || file.extension().is_none_or(|e| e != "md") {
                    continue;
                }
                let body = fs::read_to_string(&file).expect("a linked page");
                if !anchors(&body).iter().any(|a| a == anchor) {
                    problems.push(format!(
                        "{name}:{line_no}: {target}: no heading of {} has the anchor #{anchor}",
                        file.strip_prefix(root).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    (problems, checked)
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let pages = pages();
    assert!(
        pages.len() >= 20,
        "the README and docs/ hold the manual: {pages:?}"
    );
    let (problems, checked) = broken_links(&pages);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The pages held over two hundred relative links when this test was written; far fewer means the
    // scan stopped seeing them.
    assert!(checked >= 150, "only {checked} relative links found");
}

#[test]
fn links_are_read_as_github_renders_them() {
    assert_eq!(
        slug("Why a scenario regressed (`--explain`)"),
        "why-a-scenario-regressed---explain"
    );
    assert_eq!(
        slug("Compatibility with faultgate 0.4.1"),
        "compatibility-with-faultgate-041"
    );
    assert_eq!(
        slug("Paired gate, intervals and pass^k"),
        "paired-gate-intervals-and-passk"
    );
    let page = "# Title\n\n```sh\n# a comment, not a heading\n```\n\n## Notes\n## Notes\n";
    assert_eq!(anchors(page), ["title", "notes", "notes-1"]);
    assert_eq!(
        link_targets("see [a](a.md#x), `[b](b.md)` and <img src=\"c.png\">"),
        ["a.md#x", "c.png"]
    );
    assert_eq!(without_code_spans("a ```` ``` ```` b `c` d"), "a  b  d");
    // A broken link is found: a page that links a missing file and a missing anchor.
    let dir = common::scratch();
    let page = dir.path().join("page.md");
    fs::write(
        &page,
        "# Page\n[ok](#page) [gone](missing.md) [bad](#nowhere)\n",
    )
    .unwrap();
    let (found, checked) = broken_links(&[page]);
    assert_eq!((found.len(), checked), (2, 3), "{found:?}");
    assert!(found[0].ends_with("missing.md: no such file"), "{found:?}");
    assert!(found[1].contains("no heading of"), "{found:?}");
}
