//! What a run must satisfy once its files are read, before its verdicts are used: every file read, not
//! every file skipped, no input warning under `--strict-input`, and a judge that did not fail for good.
//! The run's warnings go to stderr here.

use std::io::Write;

use super::RunError;
use super::plan::{Plan, report_checks};
use super::produce::{FilesRead, InputFile, Produced, SpillTo, Usage, produce};
use crate::error::display_path;
use crate::report::VerdictBatch;

/// Produces the run over `files` and holds it to what a produced run must satisfy (file errors,
/// skipped files, `--strict-input`, the judge's end). With `spill`, the verdicts go to a temporary
/// file as they are made ([`Produced::spilled`]).
pub(crate) fn produce_accepted(
    plan: &Plan,
    files: Vec<InputFile>,
    spill: Option<SpillTo<'_>>,
) -> Result<Produced, RunError> {
    let read = produce(files, plan, spill)?;
    let mut produced = accept(read, plan.strict_input, plan.verbose)?;
    produced.judge_usage = finish_judge(plan, &produced.batches)?;
    Ok(produced)
}

/// Accepts or refuses what the files gave. If any file could not be read, every file error is printed
/// and the last one refuses the run. Otherwise the notices and the run's input warnings go to
/// stderr (summed up by kind unless `verbose`, see [`crate::report::render::warnings`]), and a run where every
/// file found was skipped, or under `strict_input` one with an input warning, is refused.
fn accept(read: FilesRead, strict_input: bool, verbose: bool) -> Result<Produced, RunError> {
    let FilesRead {
        produced,
        errors,
        notices,
    } = read;
    let mut stderr = std::io::stderr().lock();
    if let Some((last, rest)) = errors.split_last() {
        for e in rest {
            writeln!(stderr, "faultgate: {e}")?;
        }
        return Err(RunError::Refused(last.clone()));
    }
    let run_warnings = produced.input_warnings();
    let all = notices.iter().chain(&run_warnings).map(String::as_str);
    for line in crate::report::render::warnings::lines(all, verbose) {
        writeln!(stderr, "{line}")?;
    }
    let spilled_nothing = produced
        .spilled
        .as_ref()
        .is_none_or(|s| s.files.iter().all(|f| f.batches.is_empty()));
    if produced.batches.iter().all(VerdictBatch::is_empty)
        && spilled_nothing
        && produced
            .notes()
            .any(|n| n.skipped.is_some() || n.skipped_input.files > 0)
    {
        // Every file found was skipped: a gate that read nothing must not pass.
        return Err(RunError::Refused(format!(
            "no traces found in {}",
            produced
                .files
                .iter()
                .map(|f| display_path(&f.path))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if strict_input && !run_warnings.is_empty() {
        return Err(RunError::Refused(format!(
            "--strict-input: {} input warning(s); the run is refused",
            run_warnings.len()
        )));
    }
    Ok(produced)
}

/// Ends the judge's run, when there is a judge: prints its statistics, writes `--judge-record`, and
/// returns the tokens it used.
fn finish_judge(plan: &Plan, batches: &[VerdictBatch]) -> Result<Option<Usage>, RunError> {
    let Some(judge) = &plan.settings.judge else {
        return Ok(None);
    };
    // A judge that failed for good ends the run: its verdicts would be guesses.
    let stats = judge.finish_run().map_err(RunError::JudgeFailed)?;
    let mut stderr = std::io::stderr().lock();
    for line in judge.stats_lines(&stats) {
        writeln!(stderr, "{line}")?;
    }
    if let Some(record) = &plan.judge_record {
        let checks = report_checks(&plan.check_names);
        record
            .add_run(batches, &checks, &judge.take_verdict_usage(), judge.name())
            .map_err(|e| RunError::Record(e.to_string()))?;
    }
    let usage = judge.usage_json();
    let count = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
    Ok(Some(Usage {
        prompt_tokens: count("prompt_tokens").unwrap_or(0),
        completion_tokens: count("completion_tokens").unwrap_or(0),
    }))
}
