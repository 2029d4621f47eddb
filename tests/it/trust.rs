//! The trust table of `docs/calibration.md` ("How much to trust a verdict") is computed here from the
//! public labelled sets under `calibration/`: each row is what `faultgate calibrate` (and, for
//! Who&When's annotated mistakes, `faultgate check`) prints on that set. The test fails while a
//! shipped set's block in the page is stale, and rewrites the blocks when `FAULTGATE_WRITE_README=1`
//! is set (which is all `scripts/trust` does). A set that is fetched rather than shipped (`calibration/fetch SET`) is
//! recomputed only when its traces are here; otherwise its block is left as it was measured.

use crate::common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

use common::{faultgate, file, lower_hex, read_json, root, scratch, stderr};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The page that holds the trust tables.
const PAGE: &str = "docs/calibration.md";

/// One public labelled set: a folder of `calibration/`.
struct Set {
    folder: &'static str,
    /// Traces committed in the repository (else `calibration/fetch` brings them).
    shipped: bool,
    runs: &'static [Run],
}

/// One `faultgate calibrate` run over a set: which traces, which labels, and what a label means.
struct Run {
    title: &'static str,
    traces: &'static str,
    labels: &'static str,
    /// What a positive label says about a run.
    positive: &'static str,
    /// What the label-negative runs are, for the false-alarm column.
    negative: &'static str,
    /// Who&When: the annotated mistakes, matched against the steps a reason names.
    mistakes: Option<&'static str>,
}

const SETS: &[Set] = &[
    Set {
        folder: "tau2-bench",
        shipped: true,
        runs: &[
            Run {
                title: "τ²-bench results, task reward",
                traces: "calibration/tau2-bench/traces",
                labels: "calibration/tau2-bench/labels.csv",
                positive: "the run's reward is below 1 (the task failed)",
                negative: "successful runs",
                mistakes: None,
            },
            Run {
                title: "τ²-bench airline, LLM judge (customer-outcome prompt)",
                traces: "calibration/tau2-bench/traces/azure-airline.json.zst",
                labels: "calibration/tau2-bench/labels-judge-customer-outcome.csv",
                positive: "an LLM judge's verdict on the conversation is `fail`",
                negative: "runs the judge passed",
                mistakes: None,
            },
            Run {
                title: "τ²-bench airline, LLM judge (policy-conversation prompt)",
                traces: "calibration/tau2-bench/traces/azure-airline.json.zst",
                labels: "calibration/tau2-bench/labels-judge-policy-conversation.csv",
                positive: "an LLM judge's verdict on the conversation is `fail`",
                negative: "runs the judge passed",
                mistakes: None,
            },
        ],
    },
    Set {
        folder: "tau-bench",
        shipped: true,
        runs: &[Run {
            title: "τ-bench historical trajectories (gpt-4o, airline), task reward",
            traces: "calibration/tau-bench/traces",
            labels: "calibration/tau-bench/labels.csv",
            positive: "the run's reward is below 1 (the task failed)",
            negative: "successful runs",
            mistakes: None,
        }],
    },
    Set {
        folder: "who-and-when",
        shipped: true,
        runs: &[
            Run {
                title: "Who&When, algorithm-generated (AG2 CaptainAgent)",
                traces: "calibration/who-and-when/traces/algorithm-generated",
                labels: "calibration/who-and-when/labels-algorithm-generated.csv",
                positive: "the run failed its task (every run here did)",
                negative: "no run",
                mistakes: Some("calibration/who-and-when/mistakes-algorithm-generated.jsonl"),
            },
            Run {
                title: "Who&When, hand-crafted (Magentic-One)",
                traces: "calibration/who-and-when/traces/hand-crafted",
                labels: "calibration/who-and-when/labels-hand-crafted.csv",
                positive: "the run failed its task (every run here did)",
                negative: "no run",
                mistakes: Some("calibration/who-and-when/mistakes-hand-crafted.jsonl"),
            },
        ],
    },
    Set {
        folder: "swe-agent",
        shipped: false,
        runs: &[Run {
            title: "SWE-bench Verified, mini-SWE-agent with Gemini 3 Pro, resolved",
            traces: "calibration/swe-agent/traces",
            labels: "calibration/swe-agent/labels.csv",
            positive: "the instance was not resolved (its tests fail with the agent's patch)",
            negative: "resolved instances",
            mistakes: None,
        }],
    },
    Set {
        folder: "swe-agent/sample",
        shipped: true,
        runs: &[Run {
            title: "SWE-bench Verified, mini-SWE-agent with Gemini 3 Pro, resolved: the committed eighth",
            traces: "calibration/swe-agent/sample/traces",
            labels: "calibration/swe-agent/sample/labels.csv",
            positive: "the instance was not resolved (its tests fail with the agent's patch)",
            negative: "resolved instances",
            mistakes: None,
        }],
    },
];

fn begin(set: &Set) -> String {
    format!(
        "<!-- BEGIN trust {}: generated from calibration/{} by scripts/trust -->\n",
        set.folder, set.folder
    )
}

fn end(set: &Set) -> String {
    format!("<!-- END trust {} -->\n", set.folder)
}

/// The set's block: per run, what its labels mean and one row per labelled check.
fn render(set: &Set) -> String {
    let mut out = String::new();
    for run in set.runs {
        let command = format!("faultgate calibrate {} --labels {}", run.traces, run.labels);
        let tmp = scratch();
        let json = tmp.path().join("calibration.json");
        let mut args: Vec<&str> = command.split(' ').skip(1).collect();
        args.extend(["--json", common::arg(&json), "-q"]);
        let o = faultgate(&args);
        assert_eq!(o.status.code(), Some(0), "{command}: {}", stderr(&o));
        let report = read_json(&json);
        let rows: Vec<&Value> = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter(|c| c["all"]["n"].as_u64() > Some(0))
            .collect();
        let n = rows.first().map_or(0, |c| c["all"]["n"].as_u64().unwrap());
        let positives = rows
            .first()
            .map_or(0, |c| c["all"]["positives"].as_u64().unwrap());
        let _ = writeln!(
            out,
            "**{}**: {n} runs, {positives} labelled positive. A positive label means {}.\n",
            run.title, run.positive
        );
        match run.mistakes {
            None => out.push_str(&confusion_table(&rows, run, &command)),
            Some(mistakes) => out.push_str(&mistake_table(&rows, run, mistakes, &command)),
        }
        out.push('\n');
    }
    out
}

fn confusion_table(rows: &[&Value], run: &Run, command: &str) -> String {
    let mut out = format!(
        "| check | fired on positives | fired on {} (false alarms) | TPR [95% CI] | TNR [95% CI] | κ | reproduce |\n|---|---|---|---|---|---|---|\n",
        run.negative
    );
    for c in rows {
        let name = c["check"].as_str().unwrap();
        let m = &c["all"];
        let count = |k: &str| m[k].as_u64().unwrap();
        let _ = writeln!(
            out,
            "| `{name}` | {} | {} | {} | {} | {} | `{command} --check {name}` |",
            share(count("tp"), count("positives")),
            share(count("fp"), count("negatives")),
            interval(&m["tpr"], &m["tpr_ci"]),
            interval(&m["tnr"], &m["tnr_ci"]),
            kappa(m),
        );
    }
    out
}

/// Who&When: every run failed, so only the fire rate is a trace-level figure; the annotated mistake
/// step and agent say whether a firing check points at the right place.
fn mistake_table(rows: &[&Value], run: &Run, mistakes: &str, command: &str) -> String {
    let mistakes = read_mistakes(mistakes);
    let tmp = scratch();
    let json = tmp.path().join("check.json");
    let o = faultgate(&["check", run.traces, "--json", common::arg(&json), "-q"]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "check {}: {}",
        run.traces,
        stderr(&o)
    );
    let report = read_json(&json);
    let mut out = String::from(
        "| check | fired (of failed runs) | reason names a step | names the annotated mistake step | names a step by the annotated agent | reproduce |\n|---|---|---|---|---|---|\n",
    );
    for c in rows {
        let name = c["check"].as_str().unwrap();
        let m = &c["all"];
        let (mut named, mut at_step, mut by_agent) = (0, 0, 0);
        for v in report["results"].as_array().unwrap() {
            if v["check"] != name || v["detected"] != true {
                continue;
            }
            let mistake = &mistakes[v["trace_id"].as_str().unwrap()];
            let steps: Vec<&Step> = named_steps(v["reason"].as_str().unwrap())
                .into_iter()
                .filter_map(|k| mistake.steps.get(k.checked_sub(1)?))
                .collect();
            if steps.is_empty() {
                continue;
            }
            named += 1;
            if steps
                .iter()
                .any(|s| s.turn == mistake.step || s.by_turn == mistake.step)
            {
                at_step += 1;
            }
            if steps.iter().any(|s| s.by == mistake.agent) {
                by_agent += 1;
            }
        }
        let fired = m["tp"].as_u64().unwrap();
        let _ = writeln!(
            out,
            "| `{name}` | {} {} | {named} | {} | {} | `{command} --check {name}` |",
            share(fired, m["positives"].as_u64().unwrap()),
            interval(&m["tpr"], &m["tpr_ci"]),
            share(at_step, named),
            share(by_agent, named),
        );
    }
    out
}

struct Mistake {
    agent: String,
    step: i64,
    steps: Vec<Step>,
}

/// A tool step of a Who&When log: the turn it is recorded at, and the turn and agent its action
/// came from (for a code execution, the turn holding the code).
struct Step {
    turn: i64,
    by_turn: i64,
    by: String,
}

fn read_mistakes(path: &str) -> BTreeMap<String, Mistake> {
    let text = std::fs::read_to_string(file(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}: {e}"));
            let steps = v["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| Step {
                    turn: s["turn"].as_i64().unwrap(),
                    by_turn: s["by_turn"].as_i64().unwrap(),
                    by: s["by"].as_str().unwrap_or_default().to_string(),
                })
                .collect();
            let mistake = Mistake {
                agent: v["mistake_agent"].as_str().unwrap().to_string(),
                step: v["mistake_step"].as_i64().unwrap(),
                steps,
            };
            (v["key"].as_str().unwrap().to_string(), mistake)
        })
        .collect()
}

/// The step numbers a reason names: `step 3`, `steps 1, 2, 3`.
fn named_steps(reason: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = reason;
    while let Some(at) = rest.find("step") {
        rest = &rest[at + 4..];
        rest = rest.strip_prefix('s').unwrap_or(rest);
        let Some(list) = rest.strip_prefix(' ') else {
            continue;
        };
        let mut tail = list;
        loop {
            let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                break;
            }
            out.push(tail[..digits].parse().unwrap());
            tail = &tail[digits..];
            match tail.strip_prefix(", ") {
                Some(more) => tail = more,
                None => break,
            }
        }
        rest = tail;
    }
    out
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return format!("{part}/{whole}");
    }
    format!(
        "{part}/{whole} ({:.1}%)",
        part as f64 * 100.0 / whole as f64
    )
}

fn interval(value: &Value, ci: &Value) -> String {
    match (value.as_f64(), ci.as_array()) {
        (Some(v), Some(ci)) => format!(
            "{v:.2} [{:.2}, {:.2}]",
            ci[0].as_f64().unwrap(),
            ci[1].as_f64().unwrap()
        ),
        _ => "—".to_string(),
    }
}

fn kappa(m: &Value) -> String {
    match (m["kappa"].as_f64(), m["kappa_undefined"].as_str()) {
        (Some(k), _) => format!("{k:.2}"),
        (None, Some(why)) => format!("— ({why})"),
        (None, None) => "—".to_string(),
    }
}

/// Whether a fetched set's traces are here.
fn present(set: &Set) -> bool {
    set.runs.iter().all(|r| file(r.traces).exists())
}

#[test]
fn readme_trust_table_is_what_calibrate_prints() {
    let path = root().join(PAGE);
    let mut readme = std::fs::read_to_string(&path).expect("read docs/calibration.md");
    let write = std::env::var_os("FAULTGATE_WRITE_README").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for set in SETS {
        let (begin, end) = (begin(set), end(set));
        let start = readme
            .find(&begin)
            .unwrap_or_else(|| panic!("{PAGE} has the marker {begin}"))
            + begin.len();
        let stop = start
            + readme[start..]
                .find(&end)
                .unwrap_or_else(|| panic!("{PAGE} has the marker {end}"));
        if !set.shipped && !present(set) {
            eprintln!(
                "note: calibration/{} is fetched, not shipped, and not here: its block in {PAGE} is kept as measured (calibration/fetch {} to recompute it)",
                set.folder, set.folder
            );
            continue;
        }
        let block = render(set);
        if readme[start..stop] == block {
            continue;
        }
        if write {
            readme.replace_range(start..stop, &block);
        } else {
            stale.push(format!(
                "--- {PAGE}, {}\n{}\n--- calibrate\n{block}",
                set.folder,
                &readme[start..stop]
            ));
        }
    }
    if write {
        std::fs::write(&path, &readme).expect("write docs/calibration.md");
    }
    assert!(
        stale.is_empty(),
        "the trust table of {PAGE} differs from what calibrate prints; run scripts/trust\n{}",
        stale.join("\n")
    );
}

/// The block of `docs/calibration.md` on the `expected_actions` check on the benchmark sets, whose exports carry each
/// task's expected actions.
const EXPECT_BEGIN: &str = "<!-- BEGIN trust expected-actions: generated from calibration/tau2-bench and calibration/tau-bench by scripts/trust -->\n";
const EXPECT_END: &str = "<!-- END trust expected-actions -->\n";

/// The τ²-bench runs that share tasks, by setup: a run's expectations are drafted from the others of
/// its setup. (Task numbers are per results file, so expectations are imported file by file.)
const SETUPS: &[(&str, &[&str])] = &[
    (
        "airline",
        &[
            "azure-airline",
            "gpt41-airline",
            "sft-airline",
            "whissle-airline",
        ],
    ),
    ("retail", &["gpt41-retail", "sft-retail"]),
    (
        "telecom",
        &["gpt41-telecom", "gpt4o-telecom", "sft-telecom"],
    ),
    (
        "telecom, no user simulator",
        &["gpt41-telecom-no-user", "sft-telecom-no-user"],
    ),
];

/// (tp, fp, tn, fn) of one `calibrate --check expected_actions` run, and its row of the table.
fn expectation_row(
    label: &str,
    traces: &str,
    labels: &str,
    expect: &Path,
    reproduce: &str,
) -> ([u64; 4], String) {
    let tmp = scratch();
    let json = tmp.path().join("calibration.json");
    let o = faultgate(&[
        "calibrate",
        traces,
        "--labels",
        labels,
        "--expect",
        common::arg(expect),
        "--check",
        "expected_actions",
        "--json",
        common::arg(&json),
        "-q",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "calibrate {traces}: {}",
        stderr(&o)
    );
    let report = read_json(&json);
    let c = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "expected_actions")
        .expect("the expected_actions row");
    let m = &c["all"];
    let count = |k: &str| m[k].as_u64().unwrap();
    let counts = [count("tp"), count("fp"), count("tn"), count("fn")];
    let row = format!(
        "| {label} | {} | {} | {} | {} | {} | `{reproduce}` |\n",
        share(count("tp"), count("positives")),
        share(count("fp"), count("negatives")),
        interval(&m["tpr"], &m["tpr_ci"]),
        interval(&m["tnr"], &m["tnr_ci"]),
        kappa(m),
    );
    (counts, row)
}

/// Cohen's κ of summed counts.
fn pooled_kappa([tp, fp, tn, fn_]: [u64; 4]) -> f64 {
    let n = (tp + fp + tn + fn_) as f64;
    let observed = (tp + tn) as f64 / n;
    let chance =
        ((tp + fp) as f64 * (tp + fn_) as f64 + (fn_ + tn) as f64 * (fp + tn) as f64) / (n * n);
    (observed - chance) / (1.0 - chance)
}

fn pooled_row(label: &str, [tp, fp, tn, fn_]: [u64; 4]) -> String {
    format!(
        "| **{label}** | {} | {} | {:.2} | {:.2} | **{:.2}** | sum of the rows above |\n",
        share(tp, tp + fn_),
        share(fp, fp + tn),
        tp as f64 / (tp + fn_) as f64,
        tn as f64 / (fp + tn) as f64,
        pooled_kappa([tp, fp, tn, fn_]),
    )
}

fn add(total: &mut [u64; 4], counts: [u64; 4]) {
    for (t, c) in total.iter_mut().zip(counts) {
        *t += c;
    }
}

const TABLE_HEAD: &str = "| run | fired on failed runs | fired on successful runs (false alarms) | TPR [95% CI] | TNR [95% CI] | κ | reproduce |\n|---|---|---|---|---|---|---|\n";

/// The block: expectations imported from each export, then drafted from the other runs of a setup.
fn render_expectations() -> String {
    let tmp = scratch();
    let import = |export: &str, out: &Path| {
        let o = faultgate(&["expect", "import", export, "--out", common::arg(out)]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "expect import {export}: {}",
            stderr(&o)
        );
    };
    let mut out = String::from(
        "**Imported** (`faultgate expect import`): each results file's own task definitions. A positive label means the run's reward is below 1.\n\n",
    );
    out.push_str(TABLE_HEAD);
    let mut total = [0; 4];
    let mut exports: Vec<(String, &str)> = SETUPS
        .iter()
        .flat_map(|(_, runs)| runs.iter())
        .map(|run| {
            (
                format!("calibration/tau2-bench/traces/{run}.json.zst"),
                "calibration/tau2-bench/labels.csv",
            )
        })
        .collect();
    exports.push((
        "calibration/tau-bench/traces/gpt-4o-airline.json.zst".into(),
        "calibration/tau-bench/labels.csv",
    ));
    for (export, labels) in &exports {
        let expect = tmp.path().join("imported.json");
        import(export, &expect);
        let reproduce = format!(
            "faultgate expect import {export} --out e.json && faultgate calibrate {export} --labels {labels} --expect e.json --check expected_actions"
        );
        let name = export
            .rsplit('/')
            .next()
            .unwrap()
            .trim_end_matches(".json.zst");
        let (counts, row) =
            expectation_row(&format!("`{name}`"), export, labels, &expect, &reproduce);
        add(&mut total, counts);
        out.push_str(&row);
    }
    out.push_str(&pooled_row("all, pooled", total));
    out.push_str(
        "\n**Drafted, leave one out** (`faultgate expect draft`, no labels): each τ²-bench run is checked against the calls the other runs of its setup agree on (a strict majority).\n\n",
    );
    out.push_str(TABLE_HEAD);
    let mut total = [0; 4];
    for (setup, runs) in SETUPS {
        for run in *runs {
            let others: Vec<String> = runs
                .iter()
                .filter(|o| *o != run)
                .map(|o| format!("calibration/tau2-bench/traces/{o}.json.zst"))
                .collect();
            let expect = tmp.path().join("drafted.json");
            let mut a: Vec<&str> = vec!["expect", "draft"];
            a.extend(others.iter().map(String::as_str));
            a.extend(["--out", common::arg(&expect)]);
            let o = faultgate(&a);
            assert_eq!(o.status.code(), Some(0), "expect draft: {}", stderr(&o));
            let export = format!("calibration/tau2-bench/traces/{run}.json.zst");
            let reproduce = format!(
                "faultgate expect draft {} --out e.json && faultgate calibrate {export} --labels calibration/tau2-bench/labels.csv --expect e.json --check expected_actions",
                others.join(" ")
            );
            let (counts, row) = expectation_row(
                &format!("`{run}` ({setup})"),
                &export,
                "calibration/tau2-bench/labels.csv",
                &expect,
                &reproduce,
            );
            add(&mut total, counts);
            out.push_str(&row);
        }
    }
    out.push_str(&pooled_row("all, pooled", total));
    out
}

#[test]
fn readme_expectations_table_is_what_calibrate_prints() {
    let path = root().join(PAGE);
    let mut readme = std::fs::read_to_string(&path).expect("read docs/calibration.md");
    let start = readme
        .find(EXPECT_BEGIN)
        .unwrap_or_else(|| panic!("{PAGE} has the marker {EXPECT_BEGIN}"))
        + EXPECT_BEGIN.len();
    let stop = start
        + readme[start..]
            .find(EXPECT_END)
            .unwrap_or_else(|| panic!("{PAGE} has the marker {EXPECT_END}"));
    let block = render_expectations();
    if readme[start..stop] == block {
        return;
    }
    let write = std::env::var_os("FAULTGATE_WRITE_README").is_some_and(|v| v == "1");
    assert!(
        write,
        "the expected-actions trust table of {PAGE} differs from what calibrate prints; run scripts/trust\n--- {PAGE}\n{}\n--- calibrate\n{block}",
        &readme[start..stop]
    );
    readme.replace_range(start..stop, &block);
    std::fs::write(&path, &readme).expect("write docs/calibration.md");
}

/// The shipped traces are the upstream files, byte for byte: each decompresses to the SHA-256 that
/// `files.tsv` lists next to the repository, commit and path it was taken from.
#[test]
fn shipped_traces_are_the_listed_upstream_files() {
    for set in SETS.iter().filter(|s| s.shipped) {
        let list = format!("calibration/{}/files.tsv", set.folder);
        let text = std::fs::read_to_string(file(&list)).unwrap_or_else(|e| panic!("{list}: {e}"));
        let mut traces = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split('\t').collect();
            let [name, repo, commit, path, sha] = fields[..] else {
                panic!("{list}: {line:?} is not name, repository, commit, path, sha256");
            };
            assert_eq!(commit.len(), 40, "{list}: {name}: a full commit id");
            if !name.starts_with("traces/") {
                continue;
            }
            let stored = file(&format!("calibration/{}/{name}.zst", set.folder));
            let compressed = std::fs::File::open(&stored)
                .unwrap_or_else(|e| panic!("{}: {e}", stored.display()));
            let mut bytes = Vec::new();
            zstd::Decoder::new(compressed)
                .and_then(|mut d| d.read_to_end(&mut bytes))
                .unwrap_or_else(|e| panic!("{}: {e}", stored.display()));
            assert_eq!(
                lower_hex(&Sha256::digest(&bytes)),
                sha,
                "{} is not {repo}@{commit}:{path}",
                stored.display()
            );
            traces += 1;
        }
        assert!(traces > 0, "{list} lists no trace");
    }
}

/// The committed SWE-bench sample's labels are the whole set's, for the sample's instances.
#[test]
fn swe_sample_labels_are_the_whole_sets_for_its_instances() {
    let read = |path: &str| std::fs::read_to_string(file(path)).expect(path);
    let sample: Vec<String> = std::fs::read_dir(file("calibration/swe-agent/sample/traces"))
        .expect("the sample's traces")
        .map(|e| {
            let name = e.expect("an entry").file_name();
            let name = name.to_str().expect("a UTF-8 name");
            name.strip_suffix(".traj.json.zst")
                .unwrap_or_else(|| panic!("{name} is a compressed trajectory"))
                .to_string()
        })
        .collect();
    let whole = read("calibration/swe-agent/labels.csv");
    let mut lines = whole.lines();
    let header = lines.next().expect("a header");
    let expected: Vec<&str> = std::iter::once(header)
        .chain(lines.filter(|l| sample.iter().any(|k| l.split(',').next() == Some(k))))
        .collect();
    let committed = read("calibration/swe-agent/sample/labels.csv");
    assert_eq!(committed.lines().collect::<Vec<_>>(), expected);
    assert_eq!(
        expected.len(),
        1 + 5 * sample.len(),
        "five checks labelled per instance"
    );
}

#[test]
fn named_steps_reads_the_reasons_forms() {
    assert_eq!(
        named_steps("Tool 'x' failed at step 3 (Non-zero exit_code: 1) and no subsequent call"),
        [3]
    );
    assert_eq!(
        named_steps("issued >= 3 times (steps 1, 2, 10) where all 3 responses"),
        [1, 2, 10]
    );
    assert_eq!(
        named_steps("step 1: denied; step 2: denied; steps are"),
        [1, 2]
    );
    assert!(named_steps("answer says 'not found'").is_empty());
}
