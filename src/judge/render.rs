//! The trace render a judge reads (docs/compatibility.md §7.8): a header, then one line per tool step,
//! cut to a character budget when the judge has one.

use crate::table::columns::{Columns, opt};

/// What the render shows of one trace.
pub(crate) struct RenderInput<'a> {
    pub agent: &'a str,
    pub prompt: &'a str,
    pub termination: &'a str,
    pub answer: &'a str,
    /// (tool, arguments, result) per step, in step order.
    pub steps: Vec<(&'a str, &'a str, &'a str)>,
}

impl<'a> RenderInput<'a> {
    /// The render input of trace `t` of a batch.
    pub(crate) fn from_columns(cols: &Columns<'a>, t: usize) -> Self {
        RenderInput {
            agent: opt(cols.agent, t).unwrap_or("agent"),
            prompt: cols.prompt.value(t),
            termination: cols.termination.value(t),
            answer: cols.answer.value(t),
            steps: cols
                .step_rows(t)
                .map(|s| {
                    (
                        cols.tool.value(s),
                        cols.arguments.value(s),
                        cols.result.value(s),
                    )
                })
                .collect(),
        }
    }
}

/// Lengths are Python's: code points.
fn len(s: &str) -> i64 {
    s.chars().count() as i64
}

/// A value longer than `n` code points becomes its first n−1 code points and `…`.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The render of §7.8, with an optional character budget. The result can exceed the budget: the header
/// and the first two steps are always kept.
pub(crate) fn render(input: &RenderInput<'_>, budget: Option<usize>) -> String {
    let limit = |s: &str, n: usize| match budget {
        Some(_) => cut(s, n),
        None => s.to_string(),
    };
    let prompt = limit(input.prompt, 600);
    let answer = limit(input.answer, 400);
    let header = [
        format!("Agent: {}", input.agent),
        format!("Prompt: {prompt}"),
        format!("Steps used: {}", input.steps.len()),
        format!(
            "Termination: {}",
            if input.termination.is_empty() {
                "unknown"
            } else {
                input.termination
            }
        ),
        format!(
            "Final answer: {}",
            if answer.is_empty() { "(none)" } else { &answer }
        ),
    ];
    let steps: Vec<String> = input
        .steps
        .iter()
        .enumerate()
        .map(|(i, (tool, args, result))| {
            format!(
                "Step {}: {tool} {} -> {}",
                i + 1,
                limit(args, 160),
                limit(result, 160)
            )
        })
        .collect();
    let mut lines: Vec<&str> = header.iter().map(String::as_str).collect();
    let Some(budget) = budget else {
        lines.extend(steps.iter().map(String::as_str));
        return lines.join("\n");
    };
    let head = steps.len().min(2);
    let mut room = budget as i64
        - header.iter().map(|l| len(l) + 1).sum::<i64>()
        - steps[..head].iter().map(|l| len(l) + 1).sum::<i64>();
    let mut tail_start = steps.len();
    while tail_start > head {
        let line_len = len(&steps[tail_start - 1]);
        if room - line_len - 1 < 24 {
            break;
        }
        room -= line_len + 1;
        tail_start -= 1;
    }
    lines.extend(steps[..head].iter().map(String::as_str));
    let omitted = tail_start - head;
    let middle = format!("... {omitted} steps omitted ...");
    if omitted > 0 {
        lines.push(&middle);
    }
    lines.extend(steps[tail_start..].iter().map(String::as_str));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(steps: Vec<(&'a str, &'a str, &'a str)>) -> RenderInput<'a> {
        RenderInput {
            agent: "bot",
            prompt: "Who audits the partner of X?",
            termination: "",
            answer: "",
            steps,
        }
    }

    #[test]
    fn unbudgeted_render_has_every_line() {
        let text = render(
            &input(vec![
                ("search", "{\"q\": \"x\"}", "[]"),
                ("lookup", "a", "b"),
            ]),
            None,
        );
        assert_eq!(
            text,
            "Agent: bot\nPrompt: Who audits the partner of X?\nSteps used: 2\nTermination: unknown\n\
Final answer: (none)\nStep 1: search {\"q\": \"x\"} -> []\nStep 2: lookup a -> b"
        );
    }

    #[test]
    fn budget_cuts_values_and_omits_middle_steps() {
        let long = "r".repeat(300);
        let steps: Vec<(&str, &str, &str)> = (0..20).map(|_| ("t", "a", long.as_str())).collect();
        let text = render(&input(steps), Some(1400));
        let lines: Vec<&str> = text.lines().collect();
        // Each result is cut to 159 code points and an ellipsis.
        let step = format!("Step 1: t a -> {}…", "r".repeat(159));
        assert_eq!(lines[5], step);
        assert!(lines[6].starts_with("Step 2: "));
        // Header lines take 105 with their newlines and the first two steps 2 × 176, so room is 943;
        // each two-digit tail step takes 177, and five fit (943 − 5 × 177 = 58 ≥ 24) but not a sixth.
        assert_eq!(lines[7], "... 13 steps omitted ...");
        assert!(lines[8].starts_with("Step 16: "));
        assert_eq!(lines.len(), 13);
    }

    #[test]
    fn short_traces_are_not_cut() {
        let text = render(&input(vec![("a", "b", "c")]), Some(10));
        assert!(text.ends_with("Step 1: a b -> c"));
        assert!(!text.contains("omitted"));
    }

    #[test]
    fn cut_counts_code_points() {
        assert_eq!(cut("ééé", 3), "ééé");
        assert_eq!(cut("éééé", 3), "éé…");
    }
}
