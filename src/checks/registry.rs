//! The one list of checks. A new check is a file in `checks/` and a line in [`ALL`].

use super::{CheckContext, Columns, VerdictColumn};

/// How a check reaches its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    Rule,
    Golden,
    Judge,
    Outcome,
    /// Needs a workflow spec (`--workflow`).
    Workflow,
}

impl CheckKind {
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Rule => "rule",
            CheckKind::Golden => "golden",
            CheckKind::Judge => "judge",
            CheckKind::Outcome => "outcome",
            CheckKind::Workflow => "spec",
        }
    }
}

/// A failure mode faultgate can detect in a trace.
pub trait Check: Sync {
    /// The permanent name used on the command line and in reports.
    fn name(&self) -> &'static str;
    fn kind(&self) -> CheckKind;
    /// One line for `faultgate checks`.
    fn description(&self) -> &'static str;
    /// Returns true if and only if the check is part of the default selection.
    fn default_enabled(&self) -> bool {
        true
    }
    /// Runs over every trace of `cols.traces()`, in order, pushing exactly one verdict per trace into
    /// `out`.
    fn run(&self, cols: &Columns<'_>, cx: &CheckContext, out: &mut VerdictColumn);
}

/// Every check, in the order `faultgate checks` lists them and the default selection runs them.
pub static ALL: &[&dyn Check] = &[
    &super::search_loop::SearchLoop,
    &super::abstention::Abstention,
    &super::policy::PolicyCheck,
    &super::repeated_call::RepeatedCall,
    &super::unrecovered_tool_error::UnrecoveredToolError,
    &super::context_overflow::ContextOverflow,
    &super::wrong_answer::WrongAnswer,
    &super::truncation::Truncation,
    &super::wrong_direction::WrongDirection,
    &super::outcome::Outcome,
    &super::workflow::WorkflowCheck,
];

/// The check with this name.
pub fn find(name: &str) -> Option<&'static dyn Check> {
    ALL.iter().copied().find(|c| c.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_described() {
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL.iter().all(|c| !c.description().is_empty()));
    }
}
