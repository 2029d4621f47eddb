//! The one list of checks. A new check is a file in `checks/` and a line in [`ALL`], which also says
//! what the report and the gate need to know about it: the inputs it reads, whether its firing is a
//! hard block at the gate, and whether its verdicts feed the report's `outcome` block. Nothing else
//! matches on a check's name: the run's selection takes each selected check's [`Role`] from here, and
//! the report carries it.
//!
//! Each line also carries its check file's source, whose module doc is the check's page: what it
//! detects, why it matters, an example and its known limits. `faultgate checks NAME` prints that page,
//! and `docs/checks/NAME.md` is a copy of it, so the explanation lives next to the code it explains.

use super::contract::{Check, CheckKind, Gating, Input};
use Gating::{CleanRate, PolicyBlock, WorkflowBlock};

/// A check with what the report and the gate need to know about it; one line of [`ALL`].
pub struct Registered {
    /// The check itself.
    pub check: &'static dyn Check,
    /// The side inputs it reads; one it needs by its [`CheckKind`] is among them.
    pub inputs: &'static [Input],
    /// How the check's firing affects the gate.
    pub gating: Gating,
    /// Its verdicts feed the report's `outcome` block (how many traces were judged, and the clean rate
    /// of the other checks) rather than being one check among others there.
    pub outcome_block: bool,
    /// The source of the check's file, read for its page (see [`page`]).
    pub source: &'static str,
}

impl Registered {
    /// A registry line; `const` so that [`ALL`] is a static table. `source` is the check file's text
    /// (`include_str!`), whose module doc is the check's page.
    pub const fn new(
        check: &'static dyn Check,
        inputs: &'static [Input],
        gating: Gating,
        source: &'static str,
    ) -> Self {
        Registered {
            check,
            inputs,
            gating,
            outcome_block: false,
            source,
        }
    }

    /// The check whose verdicts feed the `outcome` block.
    pub const fn outcome_block(self) -> Self {
        Registered {
            outcome_block: true,
            ..self
        }
    }
}

/// Every check, in the order `faultgate checks` lists them and the default selection runs them.
// One line per check, so the list reads as a table (rustfmt would spread the longer ones).
#[rustfmt::skip]
pub static ALL: &[Registered] = &[
    Registered::new(&super::search_loop::SearchLoop, &[], CleanRate, include_str!("search_loop.rs")),
    Registered::new(&super::abstention::Abstention, &[], CleanRate, include_str!("abstention.rs")),
    Registered::new(&super::policy::PolicyCheck, &[Input::Policy], PolicyBlock, include_str!("policy.rs")),
    Registered::new(&super::repeated_call::RepeatedCall, &[], CleanRate, include_str!("repeated_call.rs")),
    Registered::new(&super::unrecovered_tool_error::UnrecoveredToolError, &[], CleanRate, include_str!("unrecovered_tool_error.rs")),
    Registered::new(&super::context_overflow::ContextOverflow, &[], CleanRate, include_str!("context_overflow.rs")),
    Registered::new(&super::wrong_answer::WrongAnswer, &[Input::Golden], CleanRate, include_str!("wrong_answer.rs")),
    Registered::new(&super::truncation::Truncation, &[Input::Golden], CleanRate, include_str!("truncation.rs")),
    Registered::new(&super::wrong_direction::WrongDirection, &[Input::Judge], CleanRate, include_str!("wrong_direction.rs")),
    Registered::new(&super::outcome::Outcome, &[Input::Outcomes], CleanRate, include_str!("outcome.rs")).outcome_block(),
    Registered::new(&super::workflow::WorkflowCheck, &[Input::Workflow], WorkflowBlock, include_str!("workflow.rs")),
    Registered::new(&super::expected_actions::ExpectedActions, &[Input::Expect], CleanRate, include_str!("expected_actions.rs")),
];

/// Every registered check, in [`ALL`]'s order.
pub fn checks() -> impl Iterator<Item = &'static dyn Check> {
    ALL.iter().map(|r| r.check)
}

/// The check with this name.
pub fn find(name: &str) -> Option<&'static dyn Check> {
    registered(name).map(|r| r.check)
}

/// The registry line of the check with this name; `None` for a custom judged check (`--judge-checks`),
/// which reads the judge, counts against the clean rate and feeds no block.
fn registered(name: &str) -> Option<&'static Registered> {
    ALL.iter().find(|r| r.check.name() == name)
}

/// The sections a check's page has, in this order, each a paragraph opening with its bold title.
pub const PAGE_SECTIONS: [&str; 4] = [
    "**What it detects.**",
    "**Why it matters.**",
    "**Example.**",
    "**Known limits.**",
];

/// The page of the check with this name, in Markdown: its file's module doc (the leading `//!` lines),
/// with rustdoc's links to items written as plain code, since the page is read outside rustdoc.
pub fn page(name: &str) -> Option<String> {
    let source = registered(name)?.source;
    let mut out = String::new();
    for line in source.lines() {
        let Some(text) = line.strip_prefix("//!") else {
            break;
        };
        out.push_str(&without_item_links(text.strip_prefix(' ').unwrap_or(text)));
        out.push('\n');
    }
    Some(out)
}

/// A doc line with each intra-doc link (`` [`QUESTION`] ``, not followed by a link target) written as
/// its code span alone.
fn without_item_links(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("[`") {
        let Some(close) = rest[at..].find("`]") else {
            break;
        };
        let end = at + close + 2;
        if rest[end..].starts_with('(') || rest[end..].starts_with('[') {
            out.push_str(&rest[..end]);
        } else {
            out.push_str(&rest[..at]);
            out.push_str(&rest[at + 1..end - 1]);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// What a selected check's verdicts mean to the gate and the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Role {
    /// What its firing does at the gate.
    pub gating: Gating,
    /// Its verdicts feed the report's `outcome` block (see [`Registered::outcome_block`]).
    pub outcome_block: bool,
    /// A judge gives its verdicts (they are what `--judge-record` writes).
    pub judged: bool,
}

/// The role of the named check: its registry line's, or for a custom judged check that of a judged
/// check counting against the clean rate.
pub(crate) fn role(name: &str) -> Role {
    match registered(name) {
        Some(r) => Role {
            gating: r.gating,
            outcome_block: r.outcome_block,
            judged: r.check.kind() == CheckKind::Judge,
        },
        None => Role {
            gating: CleanRate,
            outcome_block: false,
            judged: true,
        },
    }
}

/// Returns true if and only if the named check reads `input`.
pub(crate) fn reads(name: &str, input: Input) -> bool {
    match registered(name) {
        Some(r) => r.inputs.contains(&input),
        None => input == Input::Judge,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::checks::contract::{Reasons, SideInputs, Verdict};
    use crate::checks::testing::{TraceSpec, run_all};
    use crate::golden::{Golden, Outcomes};
    use crate::workflow::{SpecConfig, Workflow};

    /// Traces that make each check fire or pass in a different way, with and without spans and steps.
    fn mixed_traces() -> Vec<TraceSpec> {
        let sc = |key: &str| TraceSpec::new().root_attr("faultgate.scenario", json!(key));
        let searching = (0..12).fold(sc("loop"), |t, i| {
            t.step("search", &format!("{{\"q\": {i}}}"), "[]")
        });
        vec![
            TraceSpec::new(),
            searching,
            sc("sc1")
                .answer("The auditor is Alto.")
                .prompt("who audits?"),
            sc("sc2")
                .step("fetch", "{}", r#"{"exit_code": 1}"#)
                .step("read_file", r#"{"path": "../../etc/passwd"}"#, "x")
                .answer("I could not find it"),
            sc("sc1")
                .step("search", "{}", "[]")
                .step("search", "{ }", "[] ")
                .step("search", "{}", "[]")
                .chat_span(|s| {
                    s.attrs
                        .insert("gen_ai.response.finish_reasons".into(), json!(["length"]));
                })
                .answer("alto-5275"),
            sc("sc3")
                .span_with("send", "{}", "ok", |s| s.status_code = 2)
                .termination("token limit reached"),
            TraceSpec::new().root_status(2).step("confirm", "{}", "ok"),
        ]
    }

    fn context() -> SideInputs {
        let spec: SpecConfig = serde_json::from_value(json!({
            "mandatory_checkpoints": [{"checkpoint_id": "confirm", "must_precede": "send"}]
        }))
        .expect("spec");
        SideInputs {
            golden: Some(Golden::from_value(json!({"sc1": "Alto-5275", "sc2": "x"})).unwrap()),
            outcomes: Some(Outcomes::from_value(json!({"sc1": false, "sc2": true})).unwrap()),
            workflow: Some(Workflow::compile(spec).expect("valid spec")),
            expect: Some(
                crate::expect::Expectations::from_text(
                    &json!({"scenarios": {
                        "sc1": {"calls": []},
                        "sc2": {"calls": [{"tool": "pay", "arguments": {"amount": 1}}]}
                    }})
                    .to_string(),
                )
                .expect("valid expectations"),
            ),
            ..SideInputs::default()
        }
    }

    #[test]
    fn a_pass_over_a_batch_gives_each_trace_the_verdict_it_gets_alone() {
        let cx = context();
        for check in checks() {
            let alone: Vec<Verdict> = mixed_traces()
                .into_iter()
                .map(|t| run_all(vec![t], check, &cx, Reasons::All).remove(0))
                .collect();
            let together = run_all(mixed_traces(), check, &cx, Reasons::All);
            assert_eq!(together, alone, "{}", check.name());
            // Keeping only fired reasons changes nothing else.
            let fired = run_all(mixed_traces(), check, &cx, Reasons::Fired);
            for (f, a) in fired.iter().zip(&alone) {
                assert_eq!((f.detected, f.confidence), (a.detected, a.confidence));
                let expected = if a.detected { a.reason.as_str() } else { "" };
                assert_eq!(f.reason, expected, "{}", check.name());
            }
        }
        // The traces do make the checks fire, so the comparison covers fired reasons too.
        let fired: Vec<&str> = checks()
            .filter(|c| {
                run_all(mixed_traces(), *c, &cx, Reasons::Fired)
                    .iter()
                    .any(|v| v.detected)
            })
            .map(super::Check::name)
            .collect();
        assert_eq!(
            fired,
            [
                "search_loop",
                "abstention",
                "policy",
                "repeated_call",
                "unrecovered_tool_error",
                "context_overflow",
                "wrong_answer",
                "truncation",
                "outcome",
                "workflow",
                "expected_actions"
            ]
        );
    }

    #[test]
    fn every_check_page_has_its_title_and_four_sections_in_order() {
        for check in checks() {
            let name = check.name();
            let page = page(name).expect("a registered check has a page");
            assert!(
                page.starts_with(&format!("# {name}\n\n")),
                "src/checks/{name}.rs: the module doc opens with `# {name}`"
            );
            let mut from = 0;
            for section in PAGE_SECTIONS {
                let at = page[from..]
                    .find(&format!("\n{section} "))
                    .unwrap_or_else(|| {
                        panic!("src/checks/{name}.rs: the module doc lacks {section}, or has it out of order")
                    });
                from += at + section.len();
            }
        }
        assert_eq!(page("no_such_check"), None);
    }

    #[test]
    fn item_links_become_code_and_real_links_stay() {
        assert_eq!(
            without_item_links("answers [`QUESTION`] and [`x`](y.md) [`z`][r]"),
            "answers `QUESTION` and [`x`](y.md) [`z`][r]"
        );
    }

    #[test]
    fn names_are_unique_and_described() {
        let mut names: Vec<&str> = checks().map(super::Check::name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(checks().all(|c| !c.description().is_empty()));
    }

    #[test]
    fn a_check_reads_the_input_its_kind_needs() {
        for r in ALL {
            let needed = match r.check.kind() {
                CheckKind::Rule => None,
                CheckKind::Golden => Some(Input::Golden),
                CheckKind::Judge => Some(Input::Judge),
                CheckKind::Outcome => Some(Input::Outcomes),
                CheckKind::Workflow => Some(Input::Workflow),
                CheckKind::Expect => Some(Input::Expect),
            };
            assert!(
                needed.is_none_or(|i| r.inputs.contains(&i)),
                "{}",
                r.check.name()
            );
        }
    }

    #[test]
    fn the_gate_and_the_report_find_their_checks_by_role() {
        let blocks: Vec<(&str, Gating)> = ALL
            .iter()
            .filter(|r| r.gating != Gating::CleanRate)
            .map(|r| (r.check.name(), r.gating))
            .collect();
        assert_eq!(
            blocks,
            [
                ("policy", Gating::PolicyBlock),
                ("workflow", Gating::WorkflowBlock)
            ]
        );
        // One check at most fills each list the gate writes, and one the outcome block.
        let outcome: Vec<&str> = ALL
            .iter()
            .filter(|r| r.outcome_block)
            .map(|r| r.check.name())
            .collect();
        assert_eq!(outcome, ["outcome"]);
        assert!(role("outcome").outcome_block && !role("search_loop").outcome_block);
        assert_eq!(role("policy").gating, Gating::PolicyBlock);
        assert!(role("wrong_direction").judged && !role("abstention").judged);
        // A custom judged check is not in the registry: it reads the judge and weighs on the clean rate.
        assert_eq!(
            role("my_judged_check"),
            Role {
                gating: Gating::CleanRate,
                outcome_block: false,
                judged: true
            }
        );
        assert!(reads("my_judged_check", Input::Judge) && !reads("my_judged_check", Input::Policy));
        assert!(reads("policy", Input::Policy) && !reads("abstention", Input::Policy));
    }
}
