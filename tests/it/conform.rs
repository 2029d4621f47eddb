//! `faultgate conform` end to end through the library entry point, over the shipped fixtures in
//! `examples/workflow/`: every verdict row, the falsifiable one-line pair, byte-stable reruns, the JSON
//! report, the opt-in extensions and `--draft`.

use crate::common;

use std::path::PathBuf;

use faultgate::cli::conform::{ConformArgs, run};
use sha2::{Digest, Sha256};

const SPEC: &str = "examples/workflow/spec.json";
const EXTENDED_SPEC: &str = "examples/workflow/extended/spec.json";

/// The simple-form fixtures in the order a shell glob gives them, with their expected verdict line.
const FIXTURES: [(&str, &str); 8] = [
    ("bad_input", "verdict : ERROR (bad-input) exit 2"),
    (
        "broken_contract",
        "verdict : BLOCK (handoff-contract-violation) exit 1",
    ),
    ("conforms", "verdict : PASS (trajectory-conforms) exit 0"),
    (
        "late_checkpoint",
        "verdict : BLOCK (checkpoint-after-action) exit 1",
    ),
    (
        "propagated",
        "verdict : BLOCK (unverified-claim-propagated-2-hops) exit 1",
    ),
    ("skipped", "verdict : BLOCK (checkpoint-skipped) exit 1"),
    (
        "uncontracted",
        "verdict : PASS (trajectory-conforms) exit 0",
    ),
    ("verified", "verdict : PASS (trajectory-conforms) exit 0"),
];

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(format!("examples/workflow/{name}.jsonl"))
}

fn conform_with(args: &ConformArgs) -> (i32, String) {
    let mut out = Vec::new();
    let code = run(args, &mut out).expect("conform runs").code();
    (code, String::from_utf8(out).expect("utf-8 report"))
}

fn conform(spec: &str, files: &[PathBuf]) -> (i32, String) {
    conform_with(&ConformArgs {
        spec: Some(PathBuf::from(spec)),
        trajectories: files.to_vec(),
        ..ConformArgs::default()
    })
}

fn reasons(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| l.starts_with("reason : "))
        .collect()
}

#[test]
fn one_deleted_checkpoint_line_flips_pass_to_block() {
    let good = std::fs::read_to_string(fixture("conforms")).unwrap();
    let skipped = std::fs::read_to_string(fixture("skipped")).unwrap();
    let good_lines: Vec<&str> = good.lines().collect();
    let deleted: Vec<&str> = good_lines
        .iter()
        .copied()
        .filter(|l| !l.contains("\"event\": \"checkpoint\""))
        .collect();
    assert_eq!(good_lines.len(), deleted.len() + 1);
    assert_eq!(deleted, skipped.lines().collect::<Vec<_>>());
    assert!(good.contains("\"task_success\": true") && skipped.contains("\"task_success\": true"));

    let (code, report) = conform(SPEC, &[fixture("conforms")]);
    assert_eq!(code, 0);
    assert!(
        report.contains("verdict : PASS (trajectory-conforms) exit 0\n"),
        "{report}"
    );
    let (code, report) = conform(SPEC, &[fixture("skipped")]);
    assert_eq!(code, 1);
    assert!(
        report.contains("verdict : BLOCK (checkpoint-skipped) exit 1\n"),
        "{report}"
    );
}

#[test]
fn skipped_report_is_pinned() {
    let (_, report) = conform(SPEC, &[fixture("skipped")]);
    let body = "\
faultgate conform: the metric says it arrived; did it take the road?
spec : examples/workflow/spec.json (1 mandatory checkpoint, 2 handoff contracts)
files: 1
[1] examples/workflow/skipped.jsonl
trajectory: 6 events, agents: scanner, aggregator, reporter; 2 handoffs, 0 checkpoints, 1 irreversible action
final : task_success=true (recorded, printed for contrast, ignored for the verdict)
verdict : BLOCK (checkpoint-skipped) exit 1
reason : checkpoint-skipped: mandatory confirmation never happened: checkpoint 'confirm_with_user' absent from trajectory, guarded action 'send_report' executed at seq 6
contrast : final metric says task_success=true / trajectory says checkpoint-skipped
summary: 0 PASS, 1 BLOCK, 0 ERROR -> overall exit 1
";
    let digest = common::lower_hex(&Sha256::digest(body.as_bytes()));
    assert_eq!(report, format!("{body}report-sha256: {digest}\n"));
}

#[test]
fn sweep_gives_every_verdict_row_and_the_worst_exit() {
    let files: Vec<PathBuf> = FIXTURES.iter().map(|(n, _)| fixture(n)).collect();
    let (code, report) = conform(SPEC, &files);
    assert_eq!(code, 1, "a BLOCK outranks the ERROR");
    let verdicts: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("verdict : "))
        .collect();
    let expected: Vec<&str> = FIXTURES.iter().map(|(_, v)| *v).collect();
    assert_eq!(verdicts, expected, "{report}");
    assert!(
        report.contains("summary: 3 PASS (1 with warnings), 4 BLOCK, 1 ERROR -> overall exit 1\n")
    );
    assert_eq!(report.matches("contrast : ").count(), 4);
    assert!(report.contains(
        "warn : uncontracted-handoff: reporter->auditor (seq 7) is covered by no contract; the spec may be incomplete, flagging instead of blocking\n"
    ));
    assert!(report.contains("detail : line 2: unparseable JSONL: EOF while parsing"));
}

#[test]
fn broken_contract_fires_both_reasons() {
    let (_, report) = conform(SPEC, &[fixture("broken_contract")]);
    assert_eq!(
        reasons(&report),
        [
            "reason : handoff-contract-violation: required fields never delivered at a contracted border: aggregator->reporter (seq 4) missing ['summary']",
            "reason : unverified-claim-consumed-as-ground-truth: aggregator->reporter (seq 4): required fields ['row_count'] arrived without verified=true at a border whose contract demands verification",
        ]
    );
}

#[test]
fn propagation_blocks_and_verifying_the_source_passes() {
    let (code, report) = conform(SPEC, &[fixture("propagated")]);
    assert_eq!(code, 1);
    assert_eq!(
        reasons(&report),
        [
            "reason : unverified-claim-propagated-2-hops: field 'anomaly_count'=3 entered unverified at scanner->aggregator (seq 2) and was passed on unverified through 2 handoffs, last at aggregator->reporter (seq 4); no agent verified it at any hop"
        ]
    );
    let (code, _) = conform(SPEC, &[fixture("verified")]);
    assert_eq!(code, 0);
}

#[test]
fn late_checkpoint_names_both_seqs() {
    let (_, report) = conform(SPEC, &[fixture("late_checkpoint")]);
    assert_eq!(
        reasons(&report),
        [
            "reason : checkpoint-after-action: confirmation happened after the act it was supposed to gate: checkpoint 'confirm_with_user' at seq 6, action 'send_report' at seq 5"
        ]
    );
}

#[test]
fn every_fixture_twice_gives_identical_bytes_and_a_valid_hash() {
    let mut all: Vec<(&str, PathBuf)> = FIXTURES.iter().map(|(n, _)| (SPEC, fixture(n))).collect();
    for name in [
        "support_conforms",
        "support_not_renewed",
        "support_refund_unchecked",
        "support_ticket_left_open",
        "support_wrong_confirmer",
    ] {
        all.push((EXTENDED_SPEC, fixture(&format!("extended/{name}"))));
    }
    for (spec, file) in all {
        let first = conform(spec, std::slice::from_ref(&file));
        let second = conform(spec, std::slice::from_ref(&file));
        assert_eq!(first, second, "{}", file.display());
        let report = first.1;
        let (body, last) = report
            .trim_end_matches('\n')
            .rsplit_once('\n')
            .expect("several lines");
        let digest = common::lower_hex(&Sha256::digest(format!("{body}\n").as_bytes()));
        assert_eq!(
            last,
            format!("report-sha256: {digest}"),
            "{}",
            file.display()
        );
    }
}

#[test]
fn only_errors_exit_2_and_missing_file_is_bad_input() {
    let (code, report) = conform(SPEC, &[fixture("bad_input"), fixture("no_such_trajectory")]);
    assert_eq!(code, 2);
    assert!(report.contains("[2] examples/workflow/no_such_trajectory.jsonl\nverdict : ERROR (bad-input) exit 2\ndetail : no such file\n"));
    let (code, _) = conform(SPEC, &[fixture("conforms"), fixture("bad_input")]);
    assert_eq!(code, 2);
}

#[test]
fn json_report_carries_the_same_facts() {
    let dir = common::ScratchDir::named("conform");
    let path = dir.join("nested/report.json");
    let (code, text) = conform_with(&ConformArgs {
        spec: Some(PathBuf::from(SPEC)),
        trajectories: vec![
            fixture("skipped"),
            fixture("uncontracted"),
            fixture("bad_input"),
        ],
        json: Some(path.clone()),
        ..ConformArgs::default()
    });
    assert_eq!(code, 1);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("nested")).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left behind");

    let digest = text
        .lines()
        .last()
        .unwrap()
        .trim_start_matches("report-sha256: ");
    assert_eq!(written["report_sha256"], digest);
    assert_eq!(written["summary"]["exit"], 1);
    assert_eq!(written["summary"]["pass_with_warnings"], 1);
    let files = written["files"].as_array().unwrap();
    assert_eq!(files[0]["reason_code"], "checkpoint-skipped");
    assert_eq!(files[0]["reasons"][0]["seq"], 6);
    assert_eq!(
        files[0]["contrast"],
        "final metric says task_success=true / trajectory says checkpoint-skipped"
    );
    assert_eq!(
        files[0]["trajectory"]["agents"],
        serde_json::json!(["scanner", "aggregator", "reporter"])
    );
    assert_eq!(files[1]["warnings"][0]["code"], "uncontracted-handoff");
    assert_eq!(files[2]["verdict"], "ERROR");
    assert!(
        files[2]["error"]
            .as_str()
            .unwrap()
            .starts_with("line 2: unparseable JSONL")
    );
}

#[test]
fn json_path_that_is_a_directory_is_refused() {
    let err = run(
        &ConformArgs {
            spec: Some(PathBuf::from(SPEC)),
            trajectories: vec![fixture("conforms")],
            json: Some(PathBuf::from("some/dir/")),
            ..ConformArgs::default()
        },
        &mut Vec::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot write output: --json some/dir is a directory, not a file"
    );
}

#[test]
fn unusable_spec_is_an_error_naming_the_file() {
    let dir = common::ScratchDir::named("spec");
    let spec = dir.join("empty.json");
    std::fs::write(
        &spec,
        r#"{"mandatory_checkpoints": [], "handoff_contracts": []}"#,
    )
    .unwrap();
    let err = run(
        &ConformArgs {
            spec: Some(spec.clone()),
            trajectories: vec![fixture("conforms")],
            ..ConformArgs::default()
        },
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(
        err.to_string().ends_with(
            "empty.json: unusable spec: no mandatory_checkpoints and no handoff_contracts"
        )
    );
}

#[test]
fn extensions_each_fire_on_their_fixture() {
    let cases = [
        (
            "support_conforms",
            "verdict : PASS (trajectory-conforms) exit 0",
        ),
        (
            "support_not_renewed",
            "verdict : BLOCK (checkpoint-not-renewed) exit 1",
        ),
        (
            "support_refund_unchecked",
            "verdict : BLOCK (precedence-violated) exit 1",
        ),
        (
            "support_ticket_left_open",
            "verdict : BLOCK (response-missing) exit 1",
        ),
        (
            "support_wrong_confirmer",
            "verdict : BLOCK (checkpoint-wrong-confirmer) exit 1",
        ),
    ];
    for (name, verdict) in cases {
        let (_, report) = conform(EXTENDED_SPEC, &[fixture(&format!("extended/{name}"))]);
        assert!(
            report.contains(&format!("{verdict}\n")),
            "{name}:\n{report}"
        );
        let blocks = reasons(&report).len();
        assert_eq!(
            blocks,
            usize::from(verdict.contains("BLOCK")),
            "{name}:\n{report}"
        );
    }
    let (_, report) = conform(
        EXTENDED_SPEC,
        &[fixture("extended/support_refund_unchecked")],
    );
    assert_eq!(
        reasons(&report),
        [
            "reason : precedence-violated: action 'issue_refund' at seq 8 has no earlier 'lookup_order' with the same order_id='A-18'"
        ]
    );
}

#[test]
fn drafted_spec_passes_good_runs_and_blocks_the_skip() {
    let (code, drafted) = conform_with(&ConformArgs {
        draft: vec![fixture("conforms"), fixture("verified")],
        ..ConformArgs::default()
    });
    assert_eq!(code, 0);
    let spec: serde_json::Value = serde_json::from_str(&drafted).unwrap();
    assert_eq!(
        spec["mandatory_checkpoints"],
        serde_json::json!([{"checkpoint_id": "confirm_with_user", "must_precede": "send_report",
                            "confirmed_by": ["owner"]}])
    );
    assert_eq!(spec["handoff_contracts"][1]["require_verified"], true);
    let dir = common::ScratchDir::named("draft");
    let path = dir.join("drafted.json");
    std::fs::write(&path, &drafted).unwrap();
    let spec_path = path.to_string_lossy().into_owned();
    let (good, _) = conform(&spec_path, &[fixture("conforms")]);
    let (skipped, report) = conform(&spec_path, &[fixture("skipped")]);
    assert_eq!(good, 0);
    assert_eq!(skipped, 1);
    assert!(report.contains("verdict : BLOCK (checkpoint-skipped) exit 1"));
}
