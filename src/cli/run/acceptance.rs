//! What a run must satisfy once its files are read, before its verdicts are used: every file read, not
//! every file skipped, no input warning under `--strict-input`, and a judge that did not fail for good.
//! The run's warnings go to stderr here.

use std::io::Write;

use super::produce::{FilesRead, Produced};
use crate::cli::CliError;
use crate::cli::selection::Resolved;
use crate::error::display_path;
use crate::partial::Usage;
use crate::report::VerdictBatch;

/// Accepts or refuses what the files gave. If any file could not be read, every file error is printed
/// and the last one is returned (exit 2). Otherwise the notices and the run's input warnings go to
/// stderr (summed up by kind unless `verbose`, see [`crate::report::render::warnings`]), and a run where every
/// file found was skipped, or under `strict_input` one with an input warning, is refused.
pub(super) fn accept(
    read: FilesRead,
    strict_input: bool,
    verbose: bool,
) -> Result<Produced, CliError> {
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
        return Err(CliError::Invalid(last.clone()));
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
        return Err(CliError::Invalid(format!(
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
        return Err(CliError::Invalid(format!(
            "--strict-input: {} input warning(s); the run is refused",
            run_warnings.len()
        )));
    }
    Ok(produced)
}

/// Ends the judge's run, when there is a judge: prints its statistics, writes `--judge-record`, and
/// returns the tokens it used.
pub(super) fn finish_judge(
    resolved: &Resolved,
    batches: &[VerdictBatch],
) -> Result<Option<Usage>, CliError> {
    let Some(judge) = &resolved.settings.judge else {
        return Ok(None);
    };
    // A judge that failed for good ends the run: its verdicts would be guesses.
    let stats = judge.finish_run().map_err(CliError::JudgeFailed)?;
    let mut stderr = std::io::stderr().lock();
    for line in judge.stats_lines(&stats) {
        writeln!(stderr, "{line}")?;
    }
    if let Some(record) = &resolved.judge_record {
        let checks = crate::cli::selection::report_checks(&resolved.check_names);
        record
            .add_run(batches, &checks, &judge.take_verdict_usage(), judge.name())
            .map_err(CliError::output)?;
    }
    let usage = judge.usage_json();
    let count = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
    Ok(Some(Usage {
        prompt_tokens: count("prompt_tokens").unwrap_or(0),
        completion_tokens: count("completion_tokens").unwrap_or(0),
    }))
}
