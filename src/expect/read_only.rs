//! Which tools change nothing. Expectations compare only the calls that change state (a booking, a
//! refund, a file written), since how an agent looks things up varies from run to run without
//! changing the outcome.
//!
//! A tool is read-only when its name matches a glob of the file's `read_only_tools`, or one of the
//! default reading verbs ([`DEFAULT_VERBS`], unless the file sets `default_read_only: false`), or when
//! the trace's own tool definitions mark it with the MCP annotation `readOnlyHint: true`. A glob of
//! `state_changing_tools` overrides all of these.

/// The default reading verbs, with the predicates `is`, `has` and `can`. A tool is read-only by
/// default when its name is one of them, or starts with one followed by `_`, `-`, `.` or an upper-case
/// letter (`get_user`, `list-orders`, `getUser`), compared without regard to case.
pub const DEFAULT_VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "find",
    "read",
    "fetch",
    "lookup",
    "query",
    "check",
    "view",
    "show",
    "describe",
    "count",
    "calculate",
    "think",
    "is",
    "has",
    "can",
];

/// The read-only rules of an expectations file.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadOnly {
    read_only: Vec<String>,
    state_changing: Vec<String>,
    default_verbs: bool,
}

impl ReadOnly {
    /// The rules: globs of read-only tools, globs of state-changing tools (which win), and whether the
    /// default verbs apply.
    pub(crate) fn new(
        read_only: Vec<String>,
        state_changing: Vec<String>,
        default_verbs: bool,
    ) -> ReadOnly {
        ReadOnly {
            read_only,
            state_changing,
            default_verbs,
        }
    }

    /// Returns true if and only if calls of `tool` change nothing; `annotated` says whether the trace's
    /// tool definitions mark it `readOnlyHint: true`.
    pub(crate) fn is_read_only(&self, tool: &str, annotated: bool) -> bool {
        if self.state_changing.iter().any(|g| glob_match(g, tool)) {
            return false;
        }
        annotated
            || self.read_only.iter().any(|g| glob_match(g, tool))
            || (self.default_verbs && has_reading_verb(tool))
    }
}

/// Returns true if and only if `tool` is named by a default reading verb.
pub(crate) fn has_reading_verb(tool: &str) -> bool {
    DEFAULT_VERBS.iter().any(|verb| {
        let Some(head) = tool.get(..verb.len()) else {
            return false;
        };
        if !head.eq_ignore_ascii_case(verb) {
            return false;
        }
        match tool[verb.len()..].chars().next() {
            None => true,
            Some(c) => matches!(c, '_' | '-' | '.') || c.is_uppercase(),
        }
    })
}

/// Shell-style glob over a whole tool name: `*` any run of characters, `?` one character.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    // Checked for every tool call of a run: most globs are plain names or end in one `*`, and neither
    // needs the general match.
    match pattern.find(['*', '?']) {
        None => return pattern == name,
        Some(star) if star + 1 == pattern.len() && pattern.ends_with('*') => {
            return name.starts_with(&pattern[..star]);
        }
        Some(_) => {}
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // The classic two-pointer match with one backtrack point: linear in practice, no recursion.
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("get_*", "get_user"));
        assert!(!glob_match("get_*", "forget_user"));
        assert!(glob_match("*_details", "get_order_details"));
        assert!(glob_match("a?c*", "abcdef"));
        assert!(!glob_match("a?c", "abcd"));
        assert!(glob_match("*", ""));
        assert!(glob_match("lookup", "lookup"));
        assert!(!glob_match("lookup", "lookups"));
        assert!(glob_match("lookup*", "lookups"));
        assert!(!glob_match("lookup*", "lookuP"));
    }

    #[test]
    fn reading_verbs_need_a_word_boundary() {
        assert!(has_reading_verb("get_user_details"));
        assert!(has_reading_verb("getUser"));
        assert!(has_reading_verb("think"));
        assert!(has_reading_verb("List-Orders"));
        assert!(!has_reading_verb("getaway_booking"));
        assert!(!has_reading_verb("book_reservation"));
        assert!(!has_reading_verb("checkout"));
    }

    #[test]
    fn state_changing_globs_win_and_annotations_count() {
        let rules = ReadOnly::new(vec!["lookup*".into()], vec!["get_and_delete".into()], true);
        assert!(rules.is_read_only("lookupThing", false));
        assert!(!rules.is_read_only("get_and_delete", true));
        assert!(rules.is_read_only("weather", true));
        assert!(!rules.is_read_only("weather", false));
        let no_defaults = ReadOnly::new(Vec::new(), Vec::new(), false);
        assert!(!no_defaults.is_read_only("get_user", false));
    }
}
