//! The command that reproduces a run locally, shown in the Markdown summary, verdict.json and repro.sh.
//!
//! It is rebuilt from the raw arguments: output flags are dropped (they name where this run wrote, not
//! what it read), input paths become display paths, and every argument is shell-quoted.
//!
//! Compatibility: faultgate 0.4.1 drops only the exact spellings `--json`, `--markdown` and `--audit`,
//! so abbreviated output flags (`--jso x`) and `--golden=/abs/path` reach the PR comment, absolute path
//! included. Here every spelling clap accepts for an output flag is dropped (`--jso`, `--mark=x`,
//! `--parquet`, ...), and inputs given as `--flag=path` are display-pathed too, so no absolute path
//! leaks. An input whose display path starts with `-` keeps a `./` before it, so it can never be read
//! back as a flag (0.4.1 drops the `./` of `./--json=x`, and running its repro.sh writes `x`). The
//! reproduce block keeps 0.4.1's shape (an install line, then the command), but the install line
//! installs this tool's wheel (`faultgate-rs`, pinned to this version) where 0.4.1 printed
//! `pip install 'faultgate==0.4.1'`: the command is meant to reproduce this run, so it names the binary
//! that made it.

use std::path::{Path, PathBuf};

use crate::compat::fmt::shlex_quote;

/// The Python distribution that ships the `faultgate` binary as a wheel. `faultgate` itself is taken on
/// PyPI by the Python implementation (0.4.1), whose import package would clash with it.
macro_rules! dist_name {
    () => {
        "faultgate-rs"
    };
}

/// This tool and version as the audit names it: the distribution and its version.
pub(crate) const TOOL: &str = concat!(dist_name!(), " ", env!("CARGO_PKG_VERSION"));

/// The install line printed above the command: this version's wheel.
pub(crate) const PIP_INSTALL: &str = concat!(
    "pip install '",
    dist_name!(),
    "==",
    env!("CARGO_PKG_VERSION"),
    "'"
);

/// Long flags (without `--`) whose values are where a run writes, or how it shows it (`color`,
/// `table`); they never appear in the command.
pub(crate) const OUTPUT_FLAGS: [&str; 15] = [
    "json",
    "markdown",
    "audit",
    "parquet",
    "judge-record",
    "judge-cache",
    "junit",
    "html",
    // A receiver's URL may carry a token; reproducing the verdicts needs none of the three.
    "otlp-events",
    "otlp-endpoint",
    "otlp-protocol",
    "color",
    "table",
    // A share of a run (`--shard`, `--partial`) is reproduced by the run over all of it.
    "partial",
    "shard",
];

/// Long switches (without `--`) that only change how a run shows itself; they never appear in the
/// command either.
pub(crate) const DISPLAY_SWITCHES: [&str; 2] = ["quiet", "verbose"];

/// The directory display paths are relative to: `$GITHUB_WORKSPACE` when set and non-empty, else the
/// working directory, symlinks resolved.
pub(crate) fn base_dir() -> Option<PathBuf> {
    let base = std::env::var_os("GITHUB_WORKSPACE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())?;
    std::fs::canonicalize(base).ok()
}

/// A path as the audit shows it: relative to `base` with `/` separators when it lies under it, else
/// only its file name. `None` when the path cannot be resolved (it does not exist).
pub(crate) fn display_path_under(path: &Path, base: Option<&Path>) -> Option<String> {
    if crate::ingest::remote::is_url(path) {
        return Some(path.to_string_lossy().into_owned());
    }
    let resolved = std::fs::canonicalize(path).ok()?;
    if let Some(rest) = base.and_then(|b| resolved.strip_prefix(b).ok()) {
        let parts: Vec<String> = rest
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if !parts.is_empty() {
            return Some(parts.join("/"));
        }
    }
    Some(
        resolved
            .file_name()
            .map_or_else(|| ".".into(), |n| n.to_string_lossy().into_owned()),
    )
}

/// [`display_path_under`] relative to [`base_dir`].
pub(crate) fn display_path(path: &Path) -> Option<String> {
    display_path_under(path, base_dir().as_deref())
}

/// Resolves a long option as typed (`jso`, `markdown`) to the flag clap would pick: the exact name, or
/// the only flag it is a prefix of.
fn resolve_flag<'a>(typed: &str, long_flags: &[&'a str]) -> Option<&'a str> {
    if let Some(exact) = long_flags.iter().find(|f| **f == typed) {
        return Some(exact);
    }
    let mut matches = long_flags.iter().filter(|f| f.starts_with(typed));
    match (matches.next(), matches.next()) {
        (Some(only), None) if !typed.is_empty() => Some(only),
        _ => None,
    }
}

/// Returns true if and only if `arg` names an existing file or directory.
fn names_input(arg: &str) -> bool {
    !arg.is_empty() && std::fs::metadata(arg).is_ok_and(|m| m.is_file() || m.is_dir())
}

/// The command line that reproduces a run: `faultgate` and the kept arguments, each shell-quoted.
///
/// `raw_args` are the arguments after the program name; `long_flags` are the subcommand's long flags
/// without `--`, to resolve abbreviations as the parser did; `base` is the display-path base.
pub(crate) fn command_under(
    raw_args: &[String],
    long_flags: &[&str],
    base: Option<&Path>,
) -> String {
    let shown = |arg: &str| -> String {
        if names_input(arg) {
            let path = display_path_under(Path::new(arg), base).unwrap_or_else(|| arg.to_string());
            // A path that starts with `-` would read as a flag (`./--json=x` as `--json=x`).
            if path.starts_with('-') {
                format!("./{path}")
            } else {
                path
            }
        } else if let Some(file) = arg.strip_prefix("replay:").filter(|f| names_input(f)) {
            // `--judge replay:FILE` names an input inside its value.
            format!(
                "replay:{}",
                display_path_under(Path::new(file), base).unwrap_or_else(|| file.to_string())
            )
        } else {
            arg.to_string()
        }
    };
    let mut kept: Vec<String> = Vec::with_capacity(raw_args.len());
    let mut args = raw_args.iter();
    let mut positional_only = false;
    while let Some(arg) = args.next() {
        if positional_only {
            kept.push(shown(arg));
            continue;
        }
        if arg == "--" {
            positional_only = true;
            kept.push(arg.clone());
            continue;
        }
        if arg == "-q" || arg == "-v" {
            continue;
        }
        let Some(option) = arg.strip_prefix("--") else {
            kept.push(if arg.starts_with('-') {
                arg.clone()
            } else {
                shown(arg)
            });
            continue;
        };
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, None),
        };
        let flag = resolve_flag(name, long_flags);
        if value.is_none() && flag.is_some_and(|f| DISPLAY_SWITCHES.contains(&f)) {
            continue;
        }
        if flag.is_some_and(|f| OUTPUT_FLAGS.contains(&f)) {
            if value.is_none() {
                args.next();
            }
            continue;
        }
        match value {
            Some(value) => kept.push(format!("--{name}={}", shown(value))),
            None => kept.push(arg.clone()),
        }
    }
    let mut out = String::from("faultgate");
    for arg in &kept {
        out.push(' ');
        out.push_str(&shlex_quote(arg));
    }
    out
}

/// [`command_under`] relative to [`base_dir`].
pub(crate) fn command(raw_args: &[String], long_flags: &[&str]) -> String {
    command_under(raw_args, long_flags, base_dir().as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: &[&str] = &[
        "judge", "check", "policy", "golden", "outcomes", "format", "redact", "json", "markdown",
        "audit", "band", "parquet", "help", "quiet", "verbose",
    ];

    fn args(items: &[&str]) -> Vec<String> {
        items.iter().map(ToString::to_string).collect()
    }

    /// A folder holding `sub/t.json`, removed when the guard drops, and its canonical path.
    fn temp_base() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/t.json"), b"{}").unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        (dir, base)
    }

    #[test]
    fn judge_record_and_cache_are_dropped_and_a_replay_file_is_display_pathed() {
        let (_dir, base) = temp_base();
        let t = base.join("sub/t.json");
        let flags: Vec<&str> = FLAGS
            .iter()
            .copied()
            .chain(["judge-record", "judge-cache", "no-judge-cache"])
            .collect();
        let raw = args(&[
            "check",
            t.to_str().unwrap(),
            "--judge",
            &format!("replay:{}", t.display()),
            "--judge-record",
            "/abs/out.jsonl",
            "--judge-cache=/abs/cache",
            "--no-judge-cache",
        ]);
        assert_eq!(
            command_under(&raw, &flags, Some(&base)),
            "faultgate check sub/t.json --judge replay:sub/t.json --no-judge-cache"
        );
    }

    #[test]
    fn output_flags_are_dropped_in_every_spelling() {
        let cmd = command_under(
            &args(&[
                "check",
                "t.json",
                "--json",
                "r.json",
                "--jso",
                "a.json",
                "--mark=m.md",
                "--aud",
                "out",
                "--parquet",
                "pq",
                "--parq=pq2",
                "-q",
                "--check",
                "search_loop",
                "--quiet",
                "-v",
                "--verb",
            ]),
            FLAGS,
            None,
        );
        assert_eq!(cmd, "faultgate check t.json --check search_loop");
    }

    #[test]
    fn inputs_become_display_paths_in_both_forms() {
        let (_dir, base) = temp_base();
        let abs = base.join("sub/t.json");
        let abs = abs.to_str().unwrap();
        let cmd = command_under(
            &args(&["check", abs, &format!("--golden={abs}"), "--band", abs]),
            FLAGS,
            Some(&base),
        );
        assert_eq!(
            cmd,
            "faultgate check sub/t.json --golden=sub/t.json --band sub/t.json"
        );
        // Outside the base only the file name is shown.
        let elsewhere = command_under(
            &args(&["check", abs]),
            FLAGS,
            Some(Path::new("/nonexistent")),
        );
        assert_eq!(elsewhere, "faultgate check t.json");
    }

    #[test]
    fn other_arguments_are_kept_and_quoted() {
        let cmd = command_under(
            &args(&[
                "check",
                "no such.json",
                "--format=otlp",
                "--check",
                "a,b",
                "--",
                "--json",
            ]),
            FLAGS,
            None,
        );
        assert_eq!(
            cmd,
            "faultgate check 'no such.json' --format=otlp --check a,b -- --json"
        );
    }

    #[test]
    fn install_line_pins_this_wheel() {
        assert_eq!(
            PIP_INSTALL,
            format!("pip install 'faultgate-rs=={}'", env!("CARGO_PKG_VERSION"))
        );
        assert!(TOOL.starts_with(dist_name!()));
    }

    #[test]
    fn ambiguous_prefixes_are_not_output_flags() {
        assert_eq!(resolve_flag("j", FLAGS), None);
        assert_eq!(resolve_flag("js", FLAGS), Some("json"));
        assert_eq!(resolve_flag("check", FLAGS), Some("check"));
    }
}
