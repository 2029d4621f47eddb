//! `faultgate check`: run the checks over trace files, print the table, write the reports.

use std::io::Write;
use std::time::Instant;

use super::Fatal;
use super::args::CheckArgs;
use super::selection::resolve;
use crate::error::display_path;
use crate::report::{Report, json, terminal, write_atomic};

/// Runs `check`; returns the exit code (0 clean, 1 a check fired).
pub fn run(args: &CheckArgs, _raw_args: &[String]) -> Result<i32, Fatal> {
    let resolved = resolve(&args.run)?;
    let mut stderr = std::io::stderr().lock();
    for note in &resolved.notes {
        writeln!(stderr, "{note}")?;
    }
    drop(stderr);
    if let Some(json_path) = &args.json
        && json_path.as_os_str().to_string_lossy().ends_with('/')
    {
        return Err(Fatal(format!(
            "--json {} names a directory; give a file path",
            json_path.display()
        )));
    }
    let started = Instant::now();
    let files = crate::ingest::expand_paths(&args.traces)?;
    let outcomes = crate::pipeline::run_files(&files, &resolved.settings);
    let mut report = Report {
        judge: resolved.judge.clone(),
        checks: resolved.check_names.clone(),
        redaction: resolved.redaction_name.to_string(),
        results: Vec::new(),
    };
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(file) => {
                if file.without_content > 0 {
                    warnings.push(format!(
                        "warning: {} trace(s) in {} carry no content attributes; the judge sees structure only",
                        file.without_content,
                        display_path(&file.path)
                    ));
                }
                report.results.extend(file.results);
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    if let Some((last, rest)) = errors.split_last() {
        let mut stderr = std::io::stderr().lock();
        for e in rest {
            writeln!(stderr, "faultgate: {e}")?;
        }
        return Err(Fatal(last.clone()));
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut stderr = std::io::stderr().lock();
    for w in &warnings {
        writeln!(stderr, "{w}")?;
    }
    drop(stderr);

    let mut out = std::io::stdout().lock();
    write!(out, "{}", terminal::table(&report))?;
    writeln!(out)?;
    writeln!(
        out,
        "{} · {}s",
        terminal::summary(&report),
        crate::pyfmt::fmt_fixed(elapsed, 1)
    )?;
    let outcome = report.outcome_summary();
    if let Some(o) = &outcome {
        let rate = if o.judged > 0 {
            format!(
                "{}/{} true ({})",
                o.true_count,
                o.judged,
                crate::pyfmt::fmt_fixed(o.outcome_rate.unwrap_or(0.0), 2)
            )
        } else {
            "no scenario has an outcome".to_string()
        };
        writeln!(
            out,
            "outcome: {rate} · {} scenario(s) without an outcome, not judged · structural clean rate {}",
            o.missing,
            crate::pyfmt::fmt_fixed(o.structural_clean_rate, 2)
        )?;
    }
    let exit = i32::from(!report.failed_traces().is_empty());

    if let Some(path) = &args.json {
        let mut value = json::report_value(&report);
        if let Some(o) = &outcome {
            value.insert("outcome".into(), json::outcome_value(o));
        }
        let text = crate::pyjson::to_pretty(&serde_json::Value::Object(value));
        write_atomic(path, text.as_bytes()).map_err(|e| Fatal(format!("cannot write output: {e}")))?;
        writeln!(out, "report written to {}", path.display())?;
    }
    Ok(exit)
}
