//! From flags to a resolved run: which checks are active, with which inputs, and the notes about the
//! ones that cannot run.

use super::CliError;
use super::args::{RedactArg, RunArgs};
use std::sync::Arc;
use std::time::Duration;

use crate::checks::judged::CustomCheck;
use crate::checks::{Check, CheckKind, SideInputs, checks};
use crate::golden::{Golden, Outcomes};
use crate::judge::custom::JudgedSpec;
use crate::judge::{Judge, JudgeOptions, JudgeSpec};
use crate::redact::{Redaction, RedactionError};
use crate::report::render::replay::JudgeRecord;
use crate::run::progress::Bar;
use crate::run::{Plan, RunSettings};

/// A resolved run, plus what to tell the user before it starts.
pub(crate) struct Resolved {
    /// What the library runs.
    pub plan: Plan,
    /// `note: … skipped …` lines for stderr.
    pub notes: Vec<String>,
}

/// Resolves the shared run flags in 0.4.1's order: policy, golden, outcomes, check names, judge,
/// redaction. The workflow spec (not in 0.4.1) is read right after the outcomes.
pub(crate) fn resolve(args: &RunArgs) -> Result<Resolved, CliError> {
    // The first read finds the links over every file, and a unit's traces may sit in different
    // shards.
    if args.follow_links && (args.partial.is_some() || args.shard.is_some()) {
        return Err(CliError::Invalid(
            "--follow-links cannot be combined with --partial or --shard: linked traces may sit in different shards"
                .into(),
        ));
    }
    if args.follow_links && args.unit == super::args::UnitArg::Session {
        return Err(CliError::Invalid(
            "--follow-links cannot be combined with --unit session: a conversation's turns are joined by conversation id, not by span links"
                .into(),
        ));
    }
    let policy = match &args.policy {
        Some(path) => crate::policy::Policy::from_path(path)?,
        None => crate::policy::Policy::default(),
    };
    let golden = args.golden.as_deref().map(Golden::from_path).transpose()?;
    let outcomes = if args.recorded_outcomes() {
        Some(Outcomes::recorded())
    } else {
        args.outcomes
            .as_deref()
            .map(Outcomes::from_path)
            .transpose()?
    };
    let workflow = args
        .workflow
        .as_deref()
        .map(crate::workflow::Workflow::load)
        .transpose()?;
    let expect = args
        .expect
        .as_deref()
        .map(crate::expect::Expectations::load)
        .transpose()?;

    let custom = args
        .judge_checks
        .as_deref()
        .map(crate::judge::custom::load)
        .transpose()?
        .unwrap_or_default();
    let registry = registry_with(&custom);

    let joined = args.check.join(",");
    let selected: Vec<&'static dyn Check> = if joined.is_empty() {
        registry
            .iter()
            .copied()
            .filter(|c| {
                c.default_enabled()
                    || (c.kind() == CheckKind::Outcome && outcomes.is_some())
                    || (c.kind() == CheckKind::Workflow && workflow.is_some())
                    || (c.kind() == CheckKind::Expect && expect.is_some())
            })
            .collect()
    } else {
        joined
            .split(',')
            .map(|name| {
                let name = crate::compat::value::py_strip(name);
                registry
                    .iter()
                    .copied()
                    .find(|c| c.name() == name)
                    .ok_or_else(|| {
                        let available: Vec<&str> = registry.iter().map(|c| c.name()).collect();
                        CliError::Invalid(format!(
                            "unknown check '{name}'; available: {}",
                            available.join(", ")
                        ))
                    })
            })
            .collect::<Result<_, _>>()?
    };

    let judge_spec = args.judge.as_deref().map(JudgeSpec::parse).transpose()?;
    let bound = |c: &&'static dyn Check| match c.kind() {
        CheckKind::Rule => true,
        CheckKind::Golden => golden.is_some(),
        CheckKind::Outcome => outcomes.is_some(),
        CheckKind::Workflow => workflow.is_some(),
        CheckKind::Expect => expect.is_some(),
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
                "{} need {}",
                judges.join(", "),
                crate::judge::spec::RUNNABLE
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
        if !names_of(CheckKind::Expect).is_empty() {
            parts.push("expected_actions needs --expect expect.json".to_string());
        }
        return Err(CliError::Invalid(format!(
            "nothing to run: {}",
            parts.join("; ")
        )));
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
    for name in names_of(CheckKind::Expect) {
        notes.push(format!(
            "note: {name} skipped — it needs --expect expect.json (from faultgate expect import or expect draft)"
        ));
    }
    for name in names_of(CheckKind::Judge) {
        notes.push(format!(
            "note: {name} skipped — it needs a judge ({}); see README for each judge's measured κ",
            crate::judge::spec::RUNNABLE
        ));
    }
    for name in names_of(CheckKind::Golden) {
        notes.push(format!(
            "note: {name} skipped — it needs --golden golden.json (expected answers)"
        ));
    }
    let redaction = match args.redact {
        RedactArg::Builtin => Redaction::Builtin,
        RedactArg::Off => Redaction::Off,
        RedactArg::Presidio => return Err(RedactionError::PresidioUnsupported.into()),
    };
    // The judge is built only when a judged check runs: a judge named for a run without one still
    // names the report, as in 0.4.1, and `laya` is refused only where it would have to answer.
    let judge = match &judge_spec {
        Some(spec) if active.iter().any(|c| c.kind() == CheckKind::Judge) => {
            let mut checks = crate::judge::builtin_checks();
            checks.extend(custom);
            let options = judge_options(args);
            let env = |name: &str| std::env::var(name).ok();
            Some(Arc::new(Judge::new(
                spec, checks, redaction, options, &env,
            )?))
        }
        _ => None,
    };
    let judge_name = match &judge {
        Some(j) => j.name().to_string(),
        None => args.judge.clone().unwrap_or_else(|| "none".into()),
    };
    let progress = Bar::for_stderr(args.quiet).map(Arc::new);
    let plan = Plan {
        strict_input: args.strict_input,
        verbose: args.verbose,
        skip_bad_input: args.skip_bad_input,
        check_names: active.iter().map(|c| c.name().to_string()).collect(),
        settings: RunSettings {
            checks: active,
            inputs: SideInputs {
                golden,
                outcomes,
                policy,
                workflow,
                expect,
            },
            judge,
            redaction,
            format: args.format,
            keep_raw_scenario: false,
            // `baseline` and `calibrate` print no reason; `check` asks for those its outputs print. A
            // replay file (`--judge-record`) holds every judged verdict's reason.
            reasons: if args.judge_record.is_some() {
                crate::checks::Reasons::All
            } else {
                crate::checks::Reasons::None
            },
            failing_steps: 0,
            progress: progress
                .clone()
                .map(|bar| bar as Arc<dyn crate::ingest::ReadProgress>),
            skip_bad_input: args.skip_bad_input,
            agent_version: args.agent_version.as_deref().map(Arc::from),
            outcome_score: args.outcome_score.as_deref().map(Arc::from),
            slices: None,
            sessions: (args.unit == super::args::UnitArg::Session)
                .then(|| Arc::new(crate::sessions::SessionSpill::new(None))),
            links: args
                .follow_links
                .then(|| Arc::new(crate::sessions::links::LinkRun::new(None))),
        },
        judge: judge_name,
        judge_record: args.judge_record.clone().map(JudgeRecord::new),
        redaction_name: redaction.name(),
        progress,
    };
    Ok(Resolved { plan, notes })
}

/// Every check a run can select: the built-in ones, with the custom judged checks right after the
/// built-in judged check (before `outcome` and `workflow`, which join the default set last).
fn registry_with(custom: &[JudgedSpec]) -> Vec<&'static dyn Check> {
    let mut registry: Vec<&'static dyn Check> = checks().collect();
    let at = registry
        .iter()
        .rposition(|c| c.kind() == CheckKind::Judge)
        .map_or(registry.len(), |i| i + 1);
    for (i, spec) in custom.iter().enumerate() {
        registry.insert(at + i, CustomCheck::leak(&spec.name, &spec.question));
    }
    registry
}

/// The judge flags as call settings.
fn judge_options(args: &RunArgs) -> JudgeOptions {
    let defaults = JudgeOptions::default();
    let cache_dir = if args.no_judge_cache {
        None
    } else {
        args.judge_cache.clone().or(defaults.cache_dir)
    };
    JudgeOptions {
        url: args.judge_url.clone(),
        concurrency: usize::try_from(args.judge_concurrency).unwrap_or(usize::MAX),
        policy: crate::judge::client::CallPolicy {
            timeout: Duration::from_secs_f64(args.judge_timeout),
            retries: args.judge_retries,
            backoff: defaults.policy.backoff,
        },
        max_calls: args.judge_max_calls,
        cache_dir,
        record: args.judge_record.is_some(),
    }
}
