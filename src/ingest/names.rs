//! Names of inputs: which files a folder walk (or a prefix listing) reads, and shell patterns
//! (`*`, `?`, `[…]`) matched one path component at a time. Shared by local paths and object-storage
//! keys, so both select the same files.

/// The names of trace files a directory walk reads; a file named on the command line is read whatever
/// its name.
const TRACE_SUFFIXES: [&str; 7] = [
    ".json",
    ".jsonl",
    ".ndjson",
    ".traj",
    ".pb",
    ".binpb",
    ".protobuf",
];
const COMPRESSED_SUFFIXES: [&str; 2] = [".gz", ".zst"];
pub(crate) const TRACE_SUFFIXES_TEXT: &str = ".json, .jsonl, .ndjson, .traj or OTLP protobuf's .pb, .binpb or .protobuf, optionally .gz or .zst";

/// Returns true if and only if a walked file's name is that of a trace file (case-insensitive).
pub(crate) fn is_trace_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let base = COMPRESSED_SUFFIXES
        .iter()
        .find_map(|c| name.strip_suffix(c))
        .unwrap_or(&name);
    TRACE_SUFFIXES
        .iter()
        .any(|s| base.len() > s.len() && base.ends_with(s))
}

/// Returns true if and only if `s` holds a shell pattern character.
pub(crate) fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Returns true if and only if `name` matches the shell pattern (`*`, `?`, `[abc]`, `[a-z]`, `[!x]`).
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some((hit, len)) = class(&p[pi..], n[ni])
                        && hit
                    {
                        pi += len;
                        ni += 1;
                        continue;
                    } else if class(&p[pi..], n[ni]).is_none() && n[ni] == '[' {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether `c` is in the bracket class at the start of `p`, and the class's length; `None` when the
/// bracket is not closed (then it is a literal `[`).
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            hit |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            hit |= p[i] == c;
            i += 1;
        }
    }
    None
}
