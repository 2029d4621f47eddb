//! The command line: clap definitions, and one function per subcommand. This module is the only user of
//! clap; library types that are flag values get their clap side in `values.rs`.
//!
//! Flags and messages follow faultgate 0.4.1 so CI jobs can swap the tools. Each command returns an
//! [`ExitStatus`] or a [`CliError`] (`exit.rs`): errors, the library's included, are printed as
//! `faultgate: <message>` with exit 2; a gate or check failure is exit 1.

pub(crate) mod args;
pub(crate) mod baseline;
pub(crate) mod calibrate;
pub(crate) mod check;
pub mod conform;
pub(crate) mod exit;
pub(crate) mod expect;
pub(crate) mod merge;
pub(crate) mod precheck;
pub(crate) mod run;
pub(crate) mod selection;
pub(crate) mod shell;
mod values;

use std::io::Write;

use args::{Cli, Command};
pub use exit::{CliError, ExitStatus};

/// Parses the arguments, runs the command and returns the process exit code.
pub fn main() -> i32 {
    run_command_line(std::env::args_os())
}

/// Runs the command line `args` (the program's name first) as [`main`] runs the process's own, and
/// returns the exit code: the way to run a whole command inside another process, as the test of the
/// heap a run keeps does.
pub fn run_command_line(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    use clap::Parser;
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let cli = Cli::parse_from(&args);
    // Lossy, not `to_str`: a non-UTF-8 argument must not panic (clap already accepted it).
    let raw_args: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut sources = crate::ingest::Sources {
        s3_endpoint: cli.s3_endpoint,
        ..crate::ingest::Sources::default()
    };
    if cli.since.is_some() || cli.until.is_some() {
        let parse = |flag: &str, text: &Option<String>| {
            text.as_deref()
                .map(crate::ingest::partition::parse_time)
                .transpose()
                .map_err(|e| format!("{flag}: {e}"))
        };
        match (parse("--since", &cli.since), parse("--until", &cli.until)) {
            (Ok(Some(since)), Ok(Some(until))) if since >= until => {
                // An empty window reads no partition at all, and the run would pass on nothing.
                let _ = writeln!(
                    std::io::stderr(),
                    "faultgate: --since {} is not before --until {}: the window holds no time, so no time partition would be read",
                    cli.since.as_deref().unwrap_or_default(),
                    cli.until.as_deref().unwrap_or_default()
                );
                return 2;
            }
            (Ok(since), Ok(until)) => {
                sources.window = crate::ingest::partition::TimeWindow { since, until };
            }
            (Err(e), _) | (_, Err(e)) => {
                let _ = writeln!(std::io::stderr(), "faultgate: {e}");
                return 2;
            }
        }
    }
    let outcome = match cli.command {
        Command::Check(args) => check::run(&args, &raw_args, &sources),
        Command::Baseline(args) => baseline::run(&args, &sources),
        Command::Precheck(args) => precheck::run(&args, &sources),
        Command::Conform(args) => {
            conform::run(&args, &mut std::io::stdout().lock()).map_err(CliError::from)
        }
        Command::Expect(args) => expect::run(&args, &sources),
        Command::Calibrate(args) => calibrate::run(&args, &sources),
        Command::Merge(args) => merge::run(&args, &raw_args, &sources),
        Command::Checks { name } => match name {
            Some(name) => check_page(&name),
            None => list_checks(),
        },
        Command::Judges => list_judges(),
        Command::Completions { shell } => shell::completions(shell),
        Command::Man => shell::man(),
    };
    match outcome {
        Ok(status) => status.code(),
        // A closed stdout ends the command quietly.
        Err(e @ CliError::BrokenPipe) => e.status().code(),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "faultgate: {e}");
            e.status().code()
        }
    }
}

fn list_checks() -> Result<ExitStatus, CliError> {
    let mut out = std::io::stdout().lock();
    for check in crate::checks::checks() {
        writeln!(
            out,
            "{:<16} {:<6} {}",
            check.name(),
            check.kind().name(),
            check.description()
        )?;
    }
    Ok(ExitStatus::Pass)
}

/// The page of one check, as `docs/checks/NAME.md` holds it.
fn check_page(name: &str) -> Result<ExitStatus, CliError> {
    let Some(page) = crate::checks::registry::page(name) else {
        let names: Vec<&str> = crate::checks::checks()
            .map(crate::checks::Check::name)
            .collect();
        return Err(CliError::Invalid(format!(
            "unknown check '{name}'; available: {}",
            names.join(", ")
        )));
    };
    std::io::stdout().lock().write_all(page.as_bytes())?;
    Ok(ExitStatus::Pass)
}

fn list_judges() -> Result<ExitStatus, CliError> {
    let mut out = std::io::stdout().lock();
    let env = |name: &str| std::env::var(name).ok();
    for line in crate::judge::listing(&env) {
        writeln!(out, "{line}")?;
    }
    Ok(ExitStatus::Pass)
}
