//! The alignment of a candidate trace's steps with a baseline trace's, and the first place where they
//! part.
//!
//! A step is compared as (tool, normalised arguments, result class). The alignment is the edit script
//! of least cost that turns the baseline's steps into the candidate's, under this cost model:
//!
//! | edit | cost |
//! |---|---|
//! | the same tool, arguments and result class | 0 |
//! | the same tool and arguments, another result class | 1 |
//! | the same tool, other arguments (any result class) | 2, plus 1 if the result class differs |
//! | another tool at the same place | 3 |
//! | a call the baseline did not make (extra) | 4 |
//! | a call of the baseline the candidate did not make (missing) | 4 |
//! | other final answers (after the steps) | 2 |
//!
//! A swapped tool (3) is cheaper than a missing call and an extra one (8), so a changed step is read
//! as changed, not as one removed and one added; a changed argument (2) is cheaper than a swapped tool,
//! and a changed result (1) cheaper still, so the script names the smallest change that explains a
//! step. When scripts tie, the one that keeps steps paired longest is taken (a pair before a missing
//! call before an extra call), so the result does not depend on anything but the two step lists.
//!
//! Only the first [`MAX_ALIGNED`] steps of each side are aligned: the table is their product.

use serde_json::Value;

pub(crate) use crate::report::explanation::Kind;

/// Steps of each side the alignment covers.
pub(crate) const MAX_ALIGNED: usize = 1000;

/// Cost of a call the baseline did not make, or of a baseline call the candidate did not make.
pub(crate) const GAP: u32 = 4;
/// Cost of another tool at the same place.
pub(crate) const OTHER_TOOL: u32 = 3;
/// Cost of other arguments to the same tool.
pub(crate) const OTHER_ARGUMENTS: u32 = 2;
/// Cost of another result class (ok, empty, error) of the same call.
pub(crate) const OTHER_RESULT: u32 = 1;
/// Cost of another final answer.
pub(crate) const OTHER_ANSWER: u32 = 2;

/// What a tool call gave back, as far as the comparison cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultClass {
    /// A result that is neither empty nor an error.
    Ok,
    /// An empty result (`[]`, `{}`, nothing found), as the checks read it.
    Empty,
    /// A failed call: an error in the result or on the step's span.
    Error,
}

/// One step as compared: the tool, the arguments in a normal form, and the result class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub tool: String,
    pub arguments: String,
    pub class: ResultClass,
}

impl Step {
    /// A step of `tool` with `arguments` normalised ([`normalise_arguments`]).
    pub(crate) fn new(tool: &str, arguments: &str, class: ResultClass) -> Step {
        Step {
            tool: tool.to_string(),
            arguments: normalise_arguments(arguments),
            class,
        }
    }
}

/// Arguments in a form where spelling does not count: a JSON document with its object keys sorted at
/// every level and no whitespace, else the text trimmed with its runs of whitespace made one space.
pub(crate) fn normalise_arguments(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            let mut out = String::with_capacity(text.len());
            canonical(&value, &mut out);
            out
        }
        Err(_) => normalise_text(text),
    }
}

/// Text trimmed, with each run of whitespace made one space.
pub(crate) fn normalise_text(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `value` as compact JSON with object keys sorted (the crate keeps objects in document order).
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Cost of pairing candidate step `a` with baseline step `b`.
pub(crate) fn pair_cost(a: &Step, b: &Step) -> u32 {
    if a.tool != b.tool {
        return OTHER_TOOL;
    }
    let result = if a.class == b.class { 0 } else { OTHER_RESULT };
    if a.arguments != b.arguments {
        OTHER_ARGUMENTS + result
    } else {
        result
    }
}

/// One edit of the script, by 0-based positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Candidate step `.0` paired with baseline step `.1` (equal or changed).
    Pair(usize, usize),
    /// Candidate step `.0`, which the baseline did not make; the baseline was at its step `.1`.
    Extra(usize, usize),
    /// Baseline step `.1`, which the candidate did not make; the candidate was at its step `.0`.
    Missing(usize, usize),
}

/// The least-cost script and its cost (answers not included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Alignment {
    pub cost: u32,
    pub edits: Vec<Edit>,
}

/// Aligns `candidate` with `baseline` (each cut to [`MAX_ALIGNED`] steps).
pub(crate) fn align(candidate: &[Step], baseline: &[Step]) -> Alignment {
    let a = &candidate[..candidate.len().min(MAX_ALIGNED)];
    let b = &baseline[..baseline.len().min(MAX_ALIGNED)];
    let (n, m) = (a.len(), b.len());
    let width = m + 1;
    // rest[i * width + j]: least cost of aligning a[i..] with b[j..]. Filled from the end, so the
    // script is read forwards and ties resolve at the earliest step.
    let mut rest = vec![0u32; (n + 1) * width];
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            let at = i * width + j;
            rest[at] = match (i < n, j < m) {
                (false, false) => 0,
                (true, false) => GAP + rest[at + width],
                (false, true) => GAP + rest[at + 1],
                (true, true) => (pair_cost(&a[i], &b[j]) + rest[at + width + 1])
                    .min(GAP + rest[at + 1])
                    .min(GAP + rest[at + width]),
            };
        }
    }
    let mut edits = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        let here = rest[i * width + j];
        if i < n && j < m && pair_cost(&a[i], &b[j]) + rest[(i + 1) * width + j + 1] == here {
            edits.push(Edit::Pair(i, j));
            i += 1;
            j += 1;
        } else if j < m && GAP + rest[i * width + j + 1] == here {
            edits.push(Edit::Missing(i, j));
            j += 1;
        } else {
            edits.push(Edit::Extra(i, j));
            i += 1;
        }
    }
    Alignment {
        cost: rest[0],
        edits,
    }
}

/// The first divergence of a script: its kind and the 0-based positions on each side (a position
/// equal to a side's step count stands for its answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Divergence {
    pub kind: Kind,
    pub step: usize,
    pub baseline_step: usize,
    /// Edits after the first divergence that are not exact pairs.
    pub later_differences: usize,
}

/// The kind of a step edit that is a divergence; `None` for an exact pair, and for a pair whose only
/// change is a result that is ok where the baseline's failed or was empty (the candidate did better
/// there, so that is not where it left the road).
fn step_kind(edit: Edit, a: &[Step], b: &[Step]) -> Option<Kind> {
    match edit {
        Edit::Extra(..) => Some(Kind::ExtraCall),
        Edit::Missing(..) => Some(Kind::MissingCall),
        Edit::Pair(i, j) => {
            let (x, y) = (&a[i], &b[j]);
            if x.tool != y.tool {
                Some(Kind::OtherTool)
            } else if x.arguments != y.arguments {
                Some(Kind::OtherArguments)
            } else {
                match (x.class, y.class) {
                    (c, d) if c == d => None,
                    (ResultClass::Error, _) => Some(Kind::ErrorResult),
                    (ResultClass::Empty, _) => Some(Kind::EmptyResult),
                    (ResultClass::Ok, _) => None,
                }
            }
        }
    }
}

/// The first divergence of the script, else of the answers (normalised, `None` for no answer); `None`
/// when nothing differs.
pub(crate) fn first_divergence(
    candidate: &[Step],
    baseline: &[Step],
    alignment: &Alignment,
    answers: (Option<&str>, Option<&str>),
) -> Option<Divergence> {
    let a = &candidate[..candidate.len().min(MAX_ALIGNED)];
    let b = &baseline[..baseline.len().min(MAX_ALIGNED)];
    let differs = |edit: &Edit| match *edit {
        Edit::Pair(i, j) => pair_cost(&a[i], &b[j]) > 0,
        _ => true,
    };
    for (k, &edit) in alignment.edits.iter().enumerate() {
        let Some(kind) = step_kind(edit, a, b) else {
            continue;
        };
        let (step, baseline_step) = match edit {
            Edit::Pair(i, j) | Edit::Extra(i, j) | Edit::Missing(i, j) => (i, j),
        };
        return Some(Divergence {
            kind,
            step,
            baseline_step,
            later_differences: alignment.edits[k + 1..]
                .iter()
                .filter(|e| differs(e))
                .count(),
        });
    }
    let kind = match answers {
        (x, y) if x == y => return None,
        (None, Some(_)) => Kind::NoAnswer,
        _ => Kind::OtherAnswer,
    };
    Some(Divergence {
        kind,
        step: a.len(),
        baseline_step: b.len(),
        later_differences: 0,
    })
}

/// Cost of the answers: 0 when equal, else [`OTHER_ANSWER`].
pub(crate) fn answer_cost(candidate: Option<&str>, baseline: Option<&str>) -> u32 {
    if candidate == baseline {
        0
    } else {
        OTHER_ANSWER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(tool: &str, args: &str) -> Step {
        Step::new(tool, args, ResultClass::Ok)
    }

    fn road() -> Vec<Step> {
        vec![
            ok("search", r#"{"q": "a"}"#),
            ok("search", r#"{"q": "b"}"#),
            ok("fetch", r#"{"id": 1}"#),
            ok("fetch", r#"{"id": 2}"#),
            ok("answer", "{}"),
        ]
    }

    fn first(candidate: &[Step], baseline: &[Step]) -> Option<Divergence> {
        let alignment = align(candidate, baseline);
        first_divergence(candidate, baseline, &alignment, (Some("x"), Some("x")))
    }

    #[test]
    fn arguments_compare_in_normal_form() {
        assert_eq!(
            normalise_arguments("{\"b\": [1, {\"d\": 2, \"c\": 3}],  \"a\": \"x y\"}"),
            r#"{"a":"x y","b":[1,{"c":3,"d":2}]}"#
        );
        assert_eq!(normalise_arguments("  go   north \n"), "go north");
        assert_eq!(
            pair_cost(
                &ok("s", r#"{"a":1,"b":2}"#),
                &ok("s", r#"{"b": 2, "a": 1}"#)
            ),
            0
        );
    }

    #[test]
    fn each_kind_of_change_is_found_at_its_step() {
        let base = road();
        let mut extra = road();
        extra.insert(2, ok("search", r#"{"q": "again"}"#));
        let d = first(&extra, &base).unwrap();
        assert_eq!((d.kind, d.step, d.baseline_step), (Kind::ExtraCall, 2, 2));
        assert_eq!(d.later_differences, 0);

        let mut missing = road();
        missing.remove(2);
        let d = first(&missing, &base).unwrap();
        assert_eq!((d.kind, d.step, d.baseline_step), (Kind::MissingCall, 2, 2));

        let mut swapped = road();
        swapped[2] = ok("lookup", r#"{"id": 1}"#);
        let d = first(&swapped, &base).unwrap();
        assert_eq!((d.kind, d.step, d.baseline_step), (Kind::OtherTool, 2, 2));

        let mut changed = road();
        changed[2] = ok("fetch", r#"{"id": 9}"#);
        let d = first(&changed, &base).unwrap();
        assert_eq!((d.kind, d.step), (Kind::OtherArguments, 2));

        let mut failed = road();
        failed[2].class = ResultClass::Error;
        let d = first(&failed, &base).unwrap();
        assert_eq!((d.kind, d.step), (Kind::ErrorResult, 2));

        let mut empty = road();
        empty[2].class = ResultClass::Empty;
        let d = first(&empty, &base).unwrap();
        assert_eq!((d.kind, d.step), (Kind::EmptyResult, 2));
    }

    #[test]
    fn a_call_past_the_baseline_s_last_step_faces_its_answer() {
        let base = road();
        let mut longer = road();
        longer.push(ok("search", r#"{"q": "more"}"#));
        let d = first(&longer, &base).unwrap();
        assert_eq!((d.kind, d.step, d.baseline_step), (Kind::ExtraCall, 5, 5));
    }

    #[test]
    fn answers_decide_only_when_the_steps_agree() {
        let base = road();
        let alignment = align(&base, &base);
        assert_eq!(alignment.cost, 0);
        let d = first_divergence(&base, &base, &alignment, (None, Some("Paris"))).unwrap();
        assert_eq!((d.kind, d.step, d.baseline_step), (Kind::NoAnswer, 5, 5));
        let d = first_divergence(&base, &base, &alignment, (Some("Rome"), Some("Paris"))).unwrap();
        assert_eq!(d.kind, Kind::OtherAnswer);
        assert!(first_divergence(&base, &base, &alignment, (Some("a"), Some("a"))).is_none());
    }

    #[test]
    fn later_differences_count_what_still_differs_after_the_first() {
        let base = road();
        let mut both = road();
        both[1] = ok("search", r#"{"q": "z"}"#);
        both[3].class = ResultClass::Error;
        both.push(ok("extra", "{}"));
        let d = first(&both, &base).unwrap();
        assert_eq!(
            (d.kind, d.step, d.later_differences),
            (Kind::OtherArguments, 1, 2)
        );
    }

    #[test]
    fn a_better_result_is_not_where_the_road_was_left() {
        let mut base = road();
        base[1].class = ResultClass::Error;
        let mut cand = road();
        cand[3] = ok("other", "{}");
        let d = first(&cand, &base).unwrap();
        assert_eq!((d.kind, d.step), (Kind::OtherTool, 3));
    }

    #[test]
    fn the_cost_model_prefers_the_smallest_change() {
        let base = road();
        let mut swapped = road();
        swapped[0] = ok("lookup", "{}");
        assert_eq!(align(&swapped, &base).cost, OTHER_TOOL);
        let mut extra = road();
        extra.insert(0, ok("lookup", "{}"));
        assert_eq!(align(&extra, &base).cost, GAP);
        assert_eq!(align(&[], &base).cost, GAP * 5);
    }
}
