//! From flags to a resolved run: which checks are active, with which inputs, and the notes about the
//! ones that cannot run.

use super::Fatal;
use super::args::{RedactArg, RunArgs};
use crate::checks::{ALL, Check, CheckContext, CheckKind, find};
use crate::golden::{Golden, Outcomes};
use crate::pipeline::RunSettings;
use crate::redact::{Redaction, RedactionError};

/// A resolved run, plus what to tell the user before it starts.
pub struct Resolved {
    pub settings: RunSettings,
    pub check_names: Vec<String>,
    pub judge: String,
    pub redaction_name: &'static str,
    /// `note: … skipped …` lines for stderr.
    pub notes: Vec<String>,
}

/// Resolves the shared run flags in 0.4.1's order: policy, golden, outcomes, check names, judge,
/// redaction. The workflow spec (not in 0.4.1) is read right after the outcomes.
pub fn resolve(args: &RunArgs) -> Result<Resolved, Fatal> {
    let policy = match &args.policy {
        Some(path) => crate::policy::Policy::from_path(path)?,
        None => crate::policy::Policy::default(),
    };
    let golden = args.golden.as_deref().map(Golden::from_path).transpose()?;
    let outcomes = args
        .outcomes
        .as_deref()
        .map(Outcomes::from_path)
        .transpose()?;
    let workflow = args
        .workflow
        .as_deref()
        .map(crate::workflow::Workflow::load)
        .transpose()?;

    let joined = args.check.join(",");
    let selected: Vec<&'static dyn Check> = if joined.is_empty() {
        ALL.iter()
            .copied()
            .filter(|c| {
                c.default_enabled()
                    || (c.kind() == CheckKind::Outcome && outcomes.is_some())
                    || (c.kind() == CheckKind::Workflow && workflow.is_some())
            })
            .collect()
    } else {
        joined
            .split(',')
            .map(|name| {
                let name = crate::pyfmt::py_strip(name);
                find(name).ok_or_else(|| {
                    let available: Vec<&str> = ALL.iter().map(|c| c.name()).collect();
                    Fatal(format!(
                        "unknown check '{name}'; available: {}",
                        available.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };

    if let Some(judge) = &args.judge {
        let valid = judge == "laya"
            || judge
                .strip_prefix("litellm:")
                .is_some_and(|m| !m.is_empty());
        if !valid {
            return Err(Fatal(format!(
                "unknown judge '{judge}'; use 'laya' or 'litellm:<model>'"
            )));
        }
    }
    let bound = |c: &&'static dyn Check| match c.kind() {
        CheckKind::Rule => true,
        CheckKind::Golden => golden.is_some(),
        CheckKind::Outcome => outcomes.is_some(),
        CheckKind::Workflow => workflow.is_some(),
        CheckKind::Judge => args.judge.is_some(),
    };
    let dropped: Vec<&'static dyn Check> = selected.iter().copied().filter(|c| !bound(c)).collect();
    let active: Vec<&'static dyn Check> = selected.iter().copied().filter(bound).collect();
    let names_of = |kind: CheckKind| -> Vec<&str> {
        dropped
            .iter()
            .filter(|c| c.kind() == kind)
            .map(|c| c.name())
            .collect()
    };
    if active.is_empty() {
        let mut parts = Vec::new();
        let judges = names_of(CheckKind::Judge);
        if !judges.is_empty() {
            parts.push(format!(
                "{} need --judge laya | litellm:<model>",
                judges.join(", ")
            ));
        }
        let goldens = names_of(CheckKind::Golden);
        if !goldens.is_empty() {
            parts.push(format!("{} need --golden golden.json", goldens.join(", ")));
        }
        if !names_of(CheckKind::Outcome).is_empty() {
            parts.push("outcome needs --outcomes outcomes.json".to_string());
        }
        if !names_of(CheckKind::Workflow).is_empty() {
            parts.push("workflow needs --workflow spec.json".to_string());
        }
        return Err(Fatal(format!("nothing to run: {}", parts.join("; "))));
    }
    let mut notes = Vec::new();
    for name in names_of(CheckKind::Outcome) {
        notes.push(format!(
            "note: {name} skipped — it needs --outcomes outcomes.json (true / false per scenario)"
        ));
    }
    for name in names_of(CheckKind::Workflow) {
        notes.push(format!(
            "note: {name} skipped — it needs --workflow spec.json (a workflow spec, as for conform)"
        ));
    }
    for name in names_of(CheckKind::Judge) {
        notes.push(format!(
            "note: {name} skipped — it needs a judge (--judge laya | litellm:<model>); see README for each judge's measured κ"
        ));
    }
    for name in names_of(CheckKind::Golden) {
        notes.push(format!(
            "note: {name} skipped — it needs --golden golden.json (expected answers)"
        ));
    }
    if let Some(judge) = &args.judge
        && active.iter().any(|c| c.kind() == CheckKind::Judge)
    {
        return Err(Fatal(format!(
            "the {judge} judge is not available: this build bundles no judge model; run the judge checks with faultgate 0.4.1 or drop --judge"
        )));
    }
    let redaction = match args.redact {
        RedactArg::Builtin => Redaction::Builtin,
        RedactArg::Off => Redaction::Off,
        RedactArg::Presidio => return Err(Fatal(RedactionError::PresidioUnsupported.to_string())),
    };
    Ok(Resolved {
        check_names: active.iter().map(|c| c.name().to_string()).collect(),
        settings: RunSettings {
            checks: active,
            context: CheckContext {
                golden,
                outcomes,
                policy,
                workflow,
            },
            redaction,
            format: args.format,
            keep_raw_scenario: false,
            // `baseline` and `calibrate` print no reason; `check` asks for those its outputs print.
            reasons: crate::checks::Reasons::None,
        },
        judge: args.judge.clone().unwrap_or_else(|| "none".into()),
        redaction_name: redaction.name(),
        notes,
    })
}
