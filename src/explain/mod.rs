//! `check --explain`: where a regressed scenario's candidate trace first left the road its baseline
//! runs took.
//!
//! For each scenario explained, the candidate trace is the scenario's first trace on which a check
//! fired. The baseline runs are read again with the run's checks and side inputs (golden, outcomes,
//! policy, workflow: those the band was built with), and among the clean traces of the same scenario
//! in every run the one whose steps align with the candidate's at the least cost ([`align`]) is the
//! closest; ties go to the earliest run, then the earliest trace. The first divergence of that
//! alignment, or of the answers when the steps agree, is the explanation.
//!
//! Memory holds the steps of the candidate traces explained and, per scenario, of the closest baseline
//! trace so far: the candidate is read first, then each baseline run once, keeping only traces of the
//! scenarios explained (with `--explain-all`, of the scenarios where a check fired).

pub(crate) mod align;
pub(crate) mod read;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use self::align::{Step, align, answer_cost, first_divergence};
use self::read::{TraceView, read_run};
use crate::error::InputError;
pub(crate) use crate::report::explanation::Explained;
use crate::report::explanation::{Explanation, QUOTED_CHARS, Side, cut_chars};
use crate::run::RunSettings;

/// A baseline run as given to `--explain`: how it is named in the outputs, and its files.
#[derive(Debug, Clone)]
pub(crate) struct BaselineRun {
    pub shown: String,
    pub files: Vec<PathBuf>,
}

/// What to explain, and with what.
pub(crate) struct Request<'a> {
    /// The run's settings: its checks, side inputs, redaction and format.
    pub settings: &'a RunSettings,
    /// The candidate's files.
    pub candidate: &'a [PathBuf],
    pub baselines: &'a [BaselineRun],
    /// The agent version the band was built for (`baseline --agent-version`): the baseline runs'
    /// traces of that version alone are read, as the band's were.
    pub baseline_version: Option<std::sync::Arc<str>>,
    /// The gate's regressions (band scenarios clean in every baseline run, not clean now), in band
    /// order.
    pub regressions: &'a [String],
    /// `--explain-all`: also every scenario whose candidate fired a check no baseline run of it fired.
    pub all: bool,
}

/// The closest clean baseline trace of a scenario so far.
struct Closest {
    cost: u32,
    run: usize,
    view: TraceView,
}

/// Explains the regressions of `request` (and with `all` the other scenarios it covers).
pub(crate) fn explain(request: &Request<'_>) -> Result<Explained, InputError> {
    let regressed: HashSet<&str> = request.regressions.iter().map(String::as_str).collect();
    let all = request.all;
    // The candidate: the first failing trace of each scenario that may be explained, and the checks
    // that fired on any of its traces.
    let mut candidates: HashMap<String, TraceView> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut candidate_fired: HashMap<String, Vec<String>> = HashMap::new();
    read_run(
        request.candidate,
        request.settings,
        request.settings.agent_version.clone(),
        &|scenario, failed| failed && (all || regressed.contains(scenario)),
        &mut |view| {
            let fired = candidate_fired.entry(view.scenario.clone()).or_default();
            for (check, _) in &view.fired {
                if !fired.contains(check) {
                    fired.push(check.clone());
                }
            }
            if !candidates.contains_key(&view.scenario) {
                order.push(view.scenario.clone());
                candidates.insert(view.scenario.clone(), view);
            }
        },
    )?;

    let mut closest: HashMap<String, Closest> = HashMap::new();
    let mut baseline_fired: HashMap<String, HashSet<String>> = HashMap::new();
    let mut covered: Vec<HashSet<String>> = Vec::with_capacity(request.baselines.len());
    for (run, baseline) in request.baselines.iter().enumerate() {
        let mut seen = HashSet::new();
        read_run(
            &baseline.files,
            request.settings,
            request.baseline_version.clone(),
            &|scenario, _| candidates.contains_key(scenario),
            &mut |view| {
                seen.insert(view.scenario.clone());
                let fired = baseline_fired.entry(view.scenario.clone()).or_default();
                fired.extend(view.fired.iter().map(|(check, _)| check.clone()));
                if !view.clean() {
                    return;
                }
                let candidate = &candidates[&view.scenario];
                let cost = align(&candidate.steps, &view.steps).cost
                    + answer_cost(candidate.answer.as_deref(), view.answer.as_deref());
                // Runs and traces come in order, so only a lower cost replaces: ties keep the first.
                if closest.get(&view.scenario).is_none_or(|c| cost < c.cost) {
                    closest.insert(view.scenario.clone(), Closest { cost, run, view });
                }
            },
        )?;
        covered.push(seen);
    }

    // The scenarios to explain: the regressions, then (with `all`) those where a check fired that no
    // baseline run of the scenario fired.
    let mut notes = Vec::new();
    let mut targets: Vec<(&str, bool)> = Vec::new();
    let absent: Vec<&str> = request
        .regressions
        .iter()
        .map(String::as_str)
        .filter(|s| !candidates.contains_key(*s))
        .collect();
    if !absent.is_empty() {
        notes.push(format!(
            "--explain: {} regressed scenario(s) have no failing trace in this run (absent from it): {}",
            absent.len(),
            absent.join(", ")
        ));
    }
    for scenario in request.regressions {
        if candidates.contains_key(scenario) {
            targets.push((scenario, true));
        }
    }
    if all {
        for scenario in &order {
            if regressed.contains(scenario.as_str()) {
                continue;
            }
            let none = HashSet::new();
            let before = baseline_fired.get(scenario).unwrap_or(&none);
            if candidate_fired[scenario]
                .iter()
                .any(|c| !before.contains(c))
            {
                targets.push((scenario, false));
            }
        }
    }
    for (baseline, seen) in request.baselines.iter().zip(&covered) {
        let missing: Vec<&str> = targets
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| !seen.contains(*s))
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "--explain: baseline run {} holds no trace of {} scenario(s) to explain: {}",
                baseline.shown,
                missing.len(),
                missing.join(", ")
            ));
        }
    }

    let mut explanations = Vec::new();
    for (scenario, regressed) in targets {
        let candidate = &candidates[scenario];
        let Some(best) = closest.get(scenario) else {
            notes.push(format!(
                "--explain: {scenario}: no baseline run given holds a clean trace of it; not explained"
            ));
            continue;
        };
        let baseline_run = &request.baselines[best.run].shown;
        let expect = request.settings.inputs.expect.as_ref();
        match explanation(candidate, &best.view, baseline_run, regressed, &baseline_fired, expect) {
            Some(e) => explanations.push(e),
            None => notes.push(format!(
                "--explain: {scenario}: trace {} takes the steps and gives the answer of {baseline_run} trace {}; nothing sets them apart",
                candidate.trace_id, best.view.trace_id
            )),
        }
    }
    Ok(Explained {
        explanations,
        notes,
    })
}

/// The check whose divergence is sought among state-changing calls only.
const EXPECTED_ACTIONS: &str = "expected_actions";

/// The explanation of `candidate` against its closest baseline trace `baseline`; `None` when nothing
/// differs.
fn explanation(
    candidate: &TraceView,
    baseline: &TraceView,
    baseline_run: &str,
    regressed: bool,
    baseline_fired: &HashMap<String, HashSet<String>>,
    expect: Option<&crate::expect::Expectations>,
) -> Option<Explanation> {
    // A regression names the first check that fired; a scenario added by `--explain-all` the first
    // that no baseline run of it fired.
    let fired_before = baseline_fired.get(&candidate.scenario);
    let (check, reason) = candidate
        .fired
        .iter()
        .find(|(c, _)| regressed || !fired_before.is_some_and(|f| f.contains(c)))
        .or(candidate.fired.first())
        .cloned()
        .unwrap_or_default();
    // Expected actions compare only the calls that change state, so their road is walked without the
    // look-ups, which differ from run to run without changing the outcome.
    let compared = |steps: &[Step]| -> Vec<usize> {
        (0..steps.len())
            .filter(|&i| match expect {
                Some(e) if check == EXPECTED_ACTIONS => {
                    !e.read_only.is_read_only(&steps[i].tool, false)
                }
                _ => true,
            })
            .collect()
    };
    let (at, baseline_at) = (compared(&candidate.steps), compared(&baseline.steps));
    let pick = |steps: &[Step], at: &[usize]| -> Vec<Step> {
        at.iter().map(|&i| steps[i].clone()).collect()
    };
    let (steps, baseline_steps) = (
        pick(&candidate.steps, &at),
        pick(&baseline.steps, &baseline_at),
    );
    let alignment = align(&steps, &baseline_steps);
    let mut divergence = first_divergence(
        &steps,
        &baseline_steps,
        &alignment,
        (candidate.answer.as_deref(), baseline.answer.as_deref()),
    )?;
    // Back to positions among all the steps; one past the compared ones is one past all of them.
    let whole = |k: usize, at: &[usize], all: usize| at.get(k).copied().unwrap_or(all);
    divergence.step = whole(divergence.step, &at, candidate.steps.len());
    divergence.baseline_step = whole(divergence.baseline_step, &baseline_at, baseline.steps.len());
    Some(Explanation {
        scenario: candidate.scenario.clone(),
        trace_id: candidate.trace_id.clone(),
        baseline_run: baseline_run.to_string(),
        baseline_trace_id: baseline.trace_id.clone(),
        kind: divergence.kind,
        step: divergence.step + 1,
        baseline_step: divergence.baseline_step + 1,
        candidate: side(candidate, divergence.step, divergence.kind.is_answer()),
        baseline: side(
            baseline,
            divergence.baseline_step,
            divergence.kind.is_answer(),
        ),
        check,
        reason,
        later_differences: divergence.later_differences,
        regressed,
        candidate_steps: candidate.shown.clone(),
        baseline_steps: baseline.shown.clone(),
        candidate_answer: candidate.answer_shown.clone(),
        baseline_answer: baseline.answer_shown.clone(),
    })
}

/// What `view` did at 0-based position `at`: its step there, else (or when the answers are the point)
/// its answer.
fn side(view: &TraceView, at: usize, answer: bool) -> Side {
    let quote = |text: &str| cut_chars(text, QUOTED_CHARS);
    match view.shown.get(at) {
        Some(step) if !answer => Side::Step {
            tool: quote(&step.tool),
            arguments: quote(&step.arguments),
            result: quote(&step.result),
        },
        _ => Side::Answer {
            answer: view.answer_shown.as_deref().map(quote),
        },
    }
}
