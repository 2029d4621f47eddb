//! The check list of `docs/checks.md` is generated from the registry (`src/checks/registry.rs`): this
//! test fails while the block between the markers is stale, and rewrites it when
//! `FAULTGATE_WRITE_README=1` is set (which is all `scripts/readme_checks` does).

use crate::common;

use common::{faultgate, root, stdout};
use faultgate::checks::{ALL, CheckKind, Gating, Registered};

const BEGIN: &str =
    "<!-- BEGIN checks: generated from src/checks/registry.rs by scripts/readme_checks -->\n";
const END: &str = "<!-- END checks -->\n";
/// The page that holds the block.
const PAGE: &str = "docs/checks.md";

/// The block: what `faultgate checks` prints, then one table row per registry line.
fn render(listing: &str) -> String {
    let mut out = String::from("`faultgate checks` prints:\n\n```text\n");
    out.push_str(listing);
    out.push_str("```\n\n");
    out.push_str(
        "| check | kind | reads | when it fires | default | detects | example reason (its fixture) |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for r in ALL {
        out.push_str(&row(r));
    }
    out
}

fn row(r: &Registered) -> String {
    let check = r.check;
    let name = check.name();
    let reads: Vec<String> = r.inputs.iter().map(|i| format!("`{}`", i.flag())).collect();
    let reads = if reads.is_empty() {
        "the trace".to_string()
    } else {
        reads.join(", ")
    };
    let fires = match r.gating {
        Gating::CleanRate if r.outcome_block => {
            "the trace is not clean; the report's `outcome` block counts its verdicts".to_string()
        }
        Gating::CleanRate => "the trace is not clean".to_string(),
        Gating::PolicyBlock => "hard block: the gate fails (policy violations)".to_string(),
        Gating::WorkflowBlock => "hard block: the gate fails (workflow violations)".to_string(),
    };
    let default = match (check.default_enabled(), check.kind()) {
        (true, _) => "yes".to_string(),
        (false, CheckKind::Outcome | CheckKind::Workflow) => {
            format!("with {}", reads_flag(r))
        }
        (false, _) => "no".to_string(),
    };
    format!(
        "| [`{name}`](checks/{name}.md) | {} | {reads} | {fires} | {default} | {} | [{}](../tests/checks/{name}/) |\n",
        check.kind().name(),
        check.description().replace('|', "\\|"),
        example_reason(name).replace('|', "\\|")
    )
}

/// The reason the check gives on its fixture's firing trace, from the reviewed snapshot
/// (`tests/checks/<check>/verdicts.snap`, whose line after `fires.…` holds it).
fn example_reason(name: &str) -> String {
    let path = root().join(format!("tests/checks/{name}/verdicts.snap"));
    let snapshot = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (every check has a fixture folder)", path.display()));
    let mut lines = snapshot.lines();
    let reason = lines
        .find(|line| line.starts_with("fires."))
        .and_then(|_| lines.next())
        .unwrap_or_else(|| panic!("{}: no reason after the fires line", path.display()));
    format!("`{}`", reason.trim())
}

/// The flag of the first input a check reads (the one an opt-in check is added by).
fn reads_flag(r: &Registered) -> String {
    r.inputs
        .first()
        .map_or_else(String::new, |i| format!("`{}`", i.flag()))
}

#[test]
fn readme_check_table_is_the_registrys() {
    let o = faultgate(&["checks"]);
    assert_eq!(o.status.code(), Some(0));
    let block = render(&stdout(&o));

    let path = root().join(PAGE);
    let readme = std::fs::read_to_string(&path).expect("read docs/checks.md");
    let start = readme
        .find(BEGIN)
        .expect("docs/checks.md has the BEGIN checks marker")
        + BEGIN.len();
    let end = start
        + readme[start..]
            .find(END)
            .expect("docs/checks.md has the END checks marker");
    if readme[start..end] == block {
        return;
    }
    if std::env::var_os("FAULTGATE_WRITE_README").is_some_and(|v| v == "1") {
        let updated = format!("{}{block}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("write docs/checks.md");
        return;
    }
    panic!(
        "the check list of docs/checks.md differs from the registry; run scripts/readme_checks\n--- docs/checks.md\n{}\n--- registry\n{block}",
        &readme[start..end]
    );
}
