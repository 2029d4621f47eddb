//! `faultgate completions SHELL` and `faultgate man`: shell completion scripts and the man page, both
//! generated from the clap definitions so they cannot drift from the flags.
//!
//! clap_complete and clap_mangen are the clap project's own generators; writing either format by hand
//! would duplicate every flag.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use super::args::{Cli, CompletionShell};
use super::{CliError, ExitStatus};

impl From<CompletionShell> for Shell {
    fn from(shell: CompletionShell) -> Self {
        match shell {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
            CompletionShell::Powershell => Shell::PowerShell,
            CompletionShell::Elvish => Shell::Elvish,
        }
    }
}

/// Writes the completion script for `shell` to stdout.
pub(crate) fn completions(shell: CompletionShell) -> Result<ExitStatus, CliError> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(Shell::from(shell), &mut cmd, "faultgate", &mut buf);
    std::io::stdout().lock().write_all(&buf)?;
    Ok(ExitStatus::Pass)
}

/// Writes the man page (roff, section 1) to stdout.
pub(crate) fn man() -> Result<ExitStatus, CliError> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    std::io::stdout().lock().write_all(&buf)?;
    Ok(ExitStatus::Pass)
}
