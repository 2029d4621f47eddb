//! The crate's file graph, read from its source text: which file imports which.
//!
//! Every `use crate::…`, `use super::…` and `use self::…` tree and every inline `crate::…` or
//! `super::…` path in code is an arrow from the file it appears in to the file that defines what it
//! names. A name re-exported by a `use` (`pub use registry::Check` in `checks/mod.rs`) is followed to
//! the file that defines it, so a re-export is not mistaken for a dependency of its own. Comments and
//! string literals are skipped, and so is test-only code (items under `#[cfg(test)]`, and the files
//! of modules declared under it): the graph is the one the shipped crate has.
//!
//! A file's use of what an enclosing module's own file defines (a decoder naming `ingest::Format`,
//! defined in `ingest/mod.rs`) is not an arrow: a module contains its children, which see its items,
//! and a parent that declares its children and defines what they share is Rust's usual shape.
//! Arrows between siblings and across modules are all counted, through re-exports too.

use std::collections::{BTreeMap, BTreeSet};

/// A module path below the crate root: `["checks", "registry"]`.
type ModPath = Vec<String>;

/// What one file says about imports.
#[derive(Default)]
struct FileFacts {
    /// Each path named in code (after `crate`/`super`/`self` are made absolute), with the line it
    /// is on.
    paths: Vec<(ModPath, usize)>,
    /// Names this file brings into scope with `use`, and the absolute path each stands for.
    imports: BTreeMap<String, ModPath>,
    /// Child modules declared under `#[cfg(test)]` (`mod tests;`): their files are test-only.
    test_children: Vec<String>,
}

/// An arrow between two files, and one place in the first that draws it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Arrow {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) line: usize,
}

/// The file graph of a source tree given as (path under the crate, text), e.g.
/// `("src/checks/mod.rs", "...")`. `src/lib.rs` is the root; `src/main.rs` is a separate crate and
/// is left out.
pub(crate) struct Graph {
    /// One arrow per (from, to) pair, at its first line.
    pub(crate) arrows: Vec<Arrow>,
}

impl Graph {
    pub(crate) fn of(files: &BTreeMap<String, String>) -> Graph {
        let modules: BTreeMap<ModPath, &str> = files
            .keys()
            .filter_map(|f| module_of(f).map(|m| (m, f.as_str())))
            .collect();
        let is_module = |path: &[String]| modules.contains_key(path);
        let mut facts: BTreeMap<&str, FileFacts> = BTreeMap::new();
        for (module, file) in &modules {
            facts.insert(file, read_facts(module, &files[*file], &is_module));
        }
        let test_only = test_only_files(&modules, &facts);
        let resolver = Resolver {
            modules: &modules,
            facts: &facts,
        };
        let enclosing: BTreeMap<&str, BTreeSet<&str>> = modules
            .iter()
            .map(|(module, file)| {
                let parents = (0..module.len())
                    .filter_map(|n| modules.get(&module[..n]).copied())
                    .collect();
                (*file, parents)
            })
            .collect();
        let mut seen = BTreeSet::new();
        let mut arrows = Vec::new();
        for (file, file_facts) in &facts {
            if test_only.contains(*file) {
                continue;
            }
            for (path, line) in &file_facts.paths {
                let Some(to) = resolver.file_of(path, 0) else {
                    continue;
                };
                if to == *file || enclosing[file].contains(to) || test_only.contains(to) {
                    continue;
                }
                if seen.insert((file.to_string(), to.to_string())) {
                    arrows.push(Arrow {
                        from: file.to_string(),
                        to: to.to_string(),
                        line: *line,
                    });
                }
            }
        }
        Graph { arrows }
    }

    /// Every set of two or more files that reach each other through arrows, each as its files
    /// (sorted) and the arrows inside it.
    pub(crate) fn cycles(&self) -> Vec<(Vec<String>, Vec<Arrow>)> {
        let mut nodes: BTreeSet<&str> = BTreeSet::new();
        for a in &self.arrows {
            nodes.insert(&a.from);
            nodes.insert(&a.to);
        }
        let nodes: Vec<&str> = nodes.into_iter().collect();
        let index = |name: &str| nodes.binary_search(&name).expect("a node");
        let mut next = vec![Vec::new(); nodes.len()];
        for a in &self.arrows {
            next[index(&a.from)].push(index(&a.to));
        }
        strongly_connected(&next)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|component| {
                let mut files: Vec<String> =
                    component.iter().map(|&i| nodes[i].to_string()).collect();
                files.sort();
                let inside: Vec<Arrow> = self
                    .arrows
                    .iter()
                    .filter(|a| files.contains(&a.from) && files.contains(&a.to))
                    .cloned()
                    .collect();
                (files, inside)
            })
            .collect()
    }
}

/// The module a file defines: `src/checks/mod.rs` and `src/checks.rs` are `["checks"]`,
/// `src/lib.rs` is the root `[]`; files outside `src/`, `src/main.rs` and non-Rust files are none.
fn module_of(file: &str) -> Option<ModPath> {
    let rest = file.strip_prefix("src/")?.strip_suffix(".rs")?;
    if rest == "main" {
        return None;
    }
    if rest == "lib" {
        return Some(Vec::new());
    }
    let mut parts: ModPath = rest.split('/').map(String::from).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// Files of modules declared under `#[cfg(test)]`, and every file below them.
fn test_only_files<'a>(
    modules: &BTreeMap<ModPath, &'a str>,
    facts: &BTreeMap<&str, FileFacts>,
) -> BTreeSet<&'a str> {
    let mut roots: Vec<ModPath> = Vec::new();
    for (module, file) in modules {
        for child in &facts[file].test_children {
            let mut path = module.clone();
            path.push(child.clone());
            roots.push(path);
        }
    }
    modules
        .iter()
        .filter(|(module, _)| roots.iter().any(|r| module.starts_with(r)))
        .map(|(_, file)| *file)
        .collect()
}

struct Resolver<'a> {
    modules: &'a BTreeMap<ModPath, &'a str>,
    facts: &'a BTreeMap<&'a str, FileFacts>,
}

impl<'a> Resolver<'a> {
    /// The file that defines what `path` names: the deepest module file on the path, or, when the
    /// next name is one that file imports, the file that import leads to.
    fn file_of(&self, path: &[String], depth: usize) -> Option<&'a str> {
        let mut module: ModPath = Vec::new();
        for (i, name) in path.iter().enumerate() {
            module.push(name.clone());
            if self.modules.contains_key(&module) {
                continue;
            }
            module.pop();
            let file = *self.modules.get(&module)?;
            // A re-export (or a private import a child module reuses) leads on to its source; a
            // chain of them ends in a few steps, the bound only guards a `use` cycle.
            if depth < 16
                && let Some(target) = self.facts[file].imports.get(name)
            {
                let mut rest = target.clone();
                rest.extend(path[i + 1..].iter().cloned());
                if rest != path {
                    return self.file_of(&rest, depth + 1);
                }
            }
            return Some(file);
        }
        self.modules.get(&module).copied()
    }
}

/// A token of Rust source once comments and literals are gone.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Punct(char),
    /// `::`
    Path,
}

/// Reads one file: its paths, its imports and its test-only children. `module` is the file's own
/// module path, against which `super`, `self` and names of child modules resolve (inline
/// `mod x { … }` blocks count); `is_module` tells which module paths have a file.
fn read_facts(module: &[String], text: &str, is_module: &dyn Fn(&[String]) -> bool) -> FileFacts {
    let tokens = tokens(text);
    let mut facts = FileFacts::default();
    let mut scope: Vec<(String, usize)> = Vec::new(); // inline modules: (name, brace depth inside)
    let mut depth = 0usize;
    let mut i = 0;
    let here = |scope: &[(String, usize)]| -> ModPath {
        let mut m = module.to_vec();
        m.extend(scope.iter().map(|(name, _)| name.clone()));
        m
    };
    while i < tokens.len() {
        let (token, line) = &tokens[i];
        match token {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if scope.last().is_some_and(|(_, d)| *d == depth) {
                    scope.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Punct('#') if is_cfg_test(&tokens, i) => {
                i = skip_test_item(&tokens, i, &mut facts);
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some((Token::Ident(name), _)), Some((Token::Punct('{'), _))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    depth += 1;
                    scope.push((name.clone(), depth));
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Token::Ident(word) if word == "use" => {
                let end = (i..tokens.len())
                    .find(|&k| tokens[k].0 == Token::Punct(';'))
                    .unwrap_or(tokens.len());
                let base = here(&scope);
                let mut trees = Vec::new();
                use_tree(&tokens[i + 1..end], &[], &mut trees);
                for (path, alias) in trees {
                    if let Some(absolute) = absolute(&path, &base, is_module) {
                        if scope.is_empty()
                            && let Some(name) = alias
                        {
                            facts.imports.insert(name, absolute.clone());
                        }
                        facts.paths.push((absolute, *line));
                    }
                }
                i = end + 1;
            }
            // A path in code: from `crate`, `super` or `self`, or from a child module's name or an
            // imported name (`registry::find`, `ingest::open`), where it starts a path.
            Token::Ident(word)
                if tokens.get(i + 1).is_some_and(|t| t.0 == Token::Path)
                    && (i == 0 || tokens[i - 1].0 != Token::Path) =>
            {
                let mut path = vec![word.clone()];
                let mut k = i + 1;
                while let (Some((Token::Path, _)), Some((Token::Ident(next), _))) =
                    (tokens.get(k), tokens.get(k + 1))
                {
                    path.push(next.clone());
                    k += 2;
                }
                let absolute = match facts.imports.get(word) {
                    Some(target) if scope.is_empty() => {
                        Some(target.iter().chain(&path[1..]).cloned().collect())
                    }
                    _ => absolute(&path, &here(&scope), is_module),
                };
                if let Some(absolute) = absolute {
                    facts.paths.push((absolute, *line));
                }
                i = k;
            }
            _ => i += 1,
        }
    }
    facts
}

/// The path made absolute from `base` (the module the code is in): `crate`, `super` and `self`,
/// and a first name that is a child module of `base`; `None` for a path that does not start in this
/// crate (`std::…`, an extern crate, a local type's `Self::…`).
fn absolute(
    path: &[String],
    base: &[String],
    is_module: &dyn Fn(&[String]) -> bool,
) -> Option<ModPath> {
    let first = path.first()?;
    let mut child = base.to_vec();
    child.push(first.clone());
    let (mut out, mut rest): (ModPath, &[String]) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "super" | "self" => (base.to_vec(), &path[1..]),
        _ if is_module(&child) => (base.to_vec(), path),
        _ => return None,
    };
    if first == "super" {
        out.pop()?;
        while rest.first().is_some_and(|p| p == "super") {
            out.pop()?;
            rest = &rest[1..];
        }
    }
    out.extend(rest.iter().filter(|p| *p != "self").cloned());
    Some(out)
}

/// Expands a `use` tree (the tokens between `use` and `;`) into its paths, each with the name it
/// brings into scope (`None` for a glob).
fn use_tree(
    tokens: &[(Token, usize)],
    prefix: &[String],
    out: &mut Vec<(ModPath, Option<String>)>,
) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Ident(word) if word == "as" => {
                if let Some((Token::Ident(alias), _)) = tokens.get(i + 1) {
                    out.push((path.clone(), Some(alias.clone())));
                }
                return;
            }
            Token::Ident(word) => {
                path.push(word.clone());
                i += 1;
            }
            Token::Path => i += 1,
            Token::Punct('*') => {
                out.push((path, None));
                return;
            }
            Token::Punct('{') => {
                // Each comma-separated branch at this level, with the path so far as its prefix.
                let mut level = 0;
                let mut start = i + 1;
                for k in i..tokens.len() {
                    match tokens[k].0 {
                        Token::Punct('{') => level += 1,
                        Token::Punct('}') => {
                            level -= 1;
                            if level == 0 {
                                use_tree(&tokens[start..k], &path, out);
                                return;
                            }
                        }
                        Token::Punct(',') if level == 1 => {
                            use_tree(&tokens[start..k], &path, out);
                            start = k + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => i += 1,
        }
    }
    if path.len() > prefix.len() {
        let name = path.last().filter(|n| *n != "self").cloned().or_else(|| {
            // `use a::b::{self}` brings `b` into scope.
            prefix.last().cloned()
        });
        out.push((path, name));
    }
}

/// Returns true if and only if the attribute starting at `tokens[i]` is `#[cfg(test)]`.
fn is_cfg_test(tokens: &[(Token, usize)], i: usize) -> bool {
    let expected = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".into()),
        Token::Punct('('),
        Token::Ident("test".into()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    tokens.len() >= i + expected.len()
        && tokens[i..i + expected.len()]
            .iter()
            .zip(&expected)
            .all(|((t, _), e)| t == e)
}

/// Skips the item under a `#[cfg(test)]` at `tokens[i]` (its other attributes, then up to its `;`
/// or through its braced body), noting a `mod x;` it declares. Returns the index after the item.
fn skip_test_item(tokens: &[(Token, usize)], i: usize, facts: &mut FileFacts) -> usize {
    let mut k = i;
    // The attribute itself and any that follow it.
    while tokens.get(k).is_some_and(|t| t.0 == Token::Punct('#')) {
        let mut level = 0;
        while k < tokens.len() {
            match tokens[k].0 {
                Token::Punct('[') => level += 1,
                Token::Punct(']') => {
                    level -= 1;
                    if level == 0 {
                        k += 1;
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
    }
    let start = k;
    while k < tokens.len() {
        match tokens[k].0 {
            Token::Punct(';') => {
                let item = &tokens[start..k];
                if let Some(at) = item.iter().position(|t| t.0 == Token::Ident("mod".into()))
                    && let Some((Token::Ident(name), _)) = item.get(at + 1)
                {
                    facts.test_children.push(name.clone());
                }
                return k + 1;
            }
            Token::Punct('{') => {
                let mut level = 0;
                while k < tokens.len() {
                    match tokens[k].0 {
                        Token::Punct('{') => level += 1,
                        Token::Punct('}') => {
                            level -= 1;
                            if level == 0 {
                                return k + 1;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                return k;
            }
            _ => k += 1,
        }
    }
    k
}

/// The tokens of `text` with their line numbers (1-based): identifiers, `::` and single punctuation
/// characters. Comments, string and character literals, lifetimes and numbers are dropped.
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut level = 0;
                while i < bytes.len() {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        level += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        level -= 1;
                        i += 2;
                        if level == 0 {
                            break;
                        }
                    } else {
                        if bytes[i] == b'\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            b'"' => i = skip_string(bytes, i + 1, 0, &mut line),
            b'r' | b'b' if raw_string_start(bytes, i).is_some() => {
                let (hashes, open) = raw_string_start(bytes, i).expect("checked");
                i = skip_string(bytes, open + 1, hashes, &mut line);
            }
            b'b' if bytes.get(i + 1) == Some(&b'"') => i = skip_string(bytes, i + 2, 0, &mut line),
            b'b' if bytes.get(i + 1) == Some(&b'\'') => i = skip_char(bytes, i + 1),
            b'\'' => i = skip_char(bytes, i),
            b':' if bytes.get(i + 1) == Some(&b':') => {
                out.push((Token::Path, line));
                i += 2;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                // `r#ident` is a raw identifier, not a raw string.
                out.push((
                    Token::Ident(word.trim_start_matches("r#").to_string()),
                    line,
                ));
            }
            c if c.is_ascii_digit() => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
            }
            c if c.is_ascii_whitespace() => i += 1,
            c if c.is_ascii() => {
                out.push((Token::Punct(c as char), line));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// At `bytes[i]`, a raw string's opening (`r"`, `r#"`, `br##"`…): its number of `#` and the index
/// of its opening quote.
fn raw_string_start(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
        return None;
    }
    let mut k = i;
    if bytes[k] == b'b' {
        k += 1;
    }
    if bytes.get(k) != Some(&b'r') {
        return None;
    }
    k += 1;
    let hashes = bytes[k..].iter().take_while(|&&b| b == b'#').count();
    (bytes.get(k + hashes) == Some(&b'"')).then_some((hashes, k + hashes))
}

/// Skips a string literal's body from `i` (just after its opening quote); a raw string (`hashes`
/// > 0, or a raw string without `#`) has no escapes. Returns the index after the closing quote.
fn skip_string(bytes: &[u8], mut i: usize, hashes: usize, line: &mut usize) -> usize {
    let raw = hashes > 0 || (i >= 2 && bytes[i - 2] == b'r');
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if !raw => i += 2,
            b'"' if bytes[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&b| b == b'#')
                .count()
                == hashes =>
            {
                return i + 1 + hashes;
            }
            b'\n' => {
                *line += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// At a `'`: skips a character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime (`'a`).
fn skip_char(bytes: &[u8], i: usize) -> usize {
    if bytes.get(i + 1) == Some(&b'\\') {
        let mut k = i + 2;
        while k < bytes.len() && bytes[k] != b'\'' {
            k += 1;
        }
        return k + 1;
    }
    // One character (possibly multi-byte UTF-8), then a closing quote: a literal. Otherwise a
    // lifetime or label, whose name the identifier rule would misread as a word: skip it too.
    let width = match bytes.get(i + 1) {
        Some(&b) if b >= 0xF0 => 4,
        Some(&b) if b >= 0xE0 => 3,
        Some(&b) if b >= 0xC0 => 2,
        _ => 1,
    };
    if bytes.get(i + 1 + width) == Some(&b'\'') {
        return i + 2 + width;
    }
    let mut k = i + 1;
    while k < bytes.len() && (bytes[k].is_ascii_alphanumeric() || bytes[k] == b'_') {
        k += 1;
    }
    k
}

/// Tarjan's strongly connected components over `next` (adjacency by index), iteratively.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut edge)) = work.last_mut() {
            if let Some(&w) = next[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}
