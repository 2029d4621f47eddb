//! Slices (`--by`), end to end: generated runs of two models whose clean rates are known, so that one
//! model's slice regresses while the whole run holds; the cap on slice values; the same bytes at any
//! thread count and after a merge; unknown keys refused before any work.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::{Value, json};

/// Scenarios per model in the generated runs.
const PER_MODEL: usize = 40;

/// The two models of the generated runs.
const MODELS: [&str; 2] = ["gpt-5.4", "gpt-5.4-mini"];

/// A run as OTLP/JSON lines: `PER_MODEL` scenarios per model; scenario `i` of model `m` abstains (so
/// `abstention` fires) when `fails(m, i)`. The model is on the chat span, the tenant `tenant(i)` on
/// the root.
fn write_run(
    path: &Path,
    fails: impl Fn(usize, usize) -> bool,
    tenant: impl Fn(usize) -> String,
) -> PathBuf {
    let attr = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let mut text = String::new();
    for (m, model) in MODELS.iter().enumerate() {
        for i in 0..PER_MODEL {
            let n = m * PER_MODEL + i;
            let trace = format!("{:032x}", n + 1);
            let answer = if fails(m, i) {
                "I could not find the information you asked for.".to_string()
            } else {
                format!("Item {n} is in stock.")
            };
            let spans = json!([
                {"traceId": trace, "spanId": format!("r{n:015x}"), "name": "invoke_agent researcher",
                 "startTimeUnixNano": "1758000000000000000", "endTimeUnixNano": "1758000001000000000",
                 "attributes": [
                    attr("gen_ai.operation.name", "invoke_agent"),
                    attr("gen_ai.agent.name", "researcher"),
                    attr("faultgate.scenario", &format!("s{n:03}")),
                    attr("gen_ai.prompt", &format!("Is item {n} in stock?")),
                    attr("gen_ai.completion", &answer),
                    attr("tenant", &tenant(n)),
                 ]},
                {"traceId": trace, "spanId": format!("c{n:015x}"), "parentSpanId": format!("r{n:015x}"),
                 "name": "chat", "startTimeUnixNano": "1758000000100000000",
                 "endTimeUnixNano": "1758000000900000000",
                 "attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", model)]},
            ]);
            let line = json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

fn no_tenant(_: usize) -> String {
    "acme".into()
}

/// Three baseline runs in which each model abstains on 4 of its 40 scenarios (clean rate 0.90),
/// and the band built from them with `by`.
fn band(dir: &Path, by: &[&str]) -> PathBuf {
    let runs: Vec<PathBuf> = (0..3)
        .map(|r| {
            write_run(
                &dir.join(format!("baseline{r}.json")),
                move |_, i| (i + r) % 10 == 0,
                no_tenant,
            )
        })
        .collect();
    let out = dir.join("band.json");
    let mut args = vec!["baseline"];
    args.extend(runs.iter().map(|p| arg(p)));
    args.extend(["--check", "abstention", "--out", arg(&out), "-q"]);
    for key in by {
        args.extend(["--by", key]);
    }
    let done = faultgate(&args);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    out
}

/// A candidate whose first model never abstains and whose mini model abstains on 8 of 40: the
/// whole run keeps the band's 0.90, the mini slice drops to 0.80.
fn candidate(dir: &Path) -> PathBuf {
    write_run(
        &dir.join("candidate.json"),
        |m, i| m == 1 && i % 5 == 0,
        no_tenant,
    )
}

fn check(args: &[&str]) -> std::process::Output {
    let mut all = vec!["check"];
    all.extend(args);
    all.extend(["--check", "abstention", "--table", "none"]);
    faultgate(&all)
}

#[test]
fn a_slice_that_regressed_is_named_while_the_whole_run_passes() {
    let dir = scratch();
    let band = band(dir.path(), &["model"]);
    let written = read_json(&band);
    assert_eq!(written["slices"]["by"], json!(["model"]));
    assert_eq!(
        written["slices"]["values"]["model=gpt-5.4-mini"]["clean_rate"],
        json!([0.9, 0.9, 0.9])
    );
    let candidate = candidate(dir.path());
    let report = dir.path().join("report.json");
    let out = check(&[
        arg(&candidate),
        "--band",
        arg(&band),
        "--by",
        "model",
        "--json",
        arg(&report),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("gate: PASS"), "{text}");
    assert!(
        text.contains(
            "slice model=gpt-5.4-mini: clean rate 0.80 vs band [0.90, 0.90] over 40 traces · FAIL (reported, not gated"
        ),
        "{text}"
    );
    assert!(!text.contains("slice model=gpt-5.4:"), "{text}");
    assert!(
        text.contains("  model=gpt-5.4-mini  40      0.80        8"),
        "{text}"
    );
    let slices = &read_json(&report)["slices"];
    assert_eq!(slices["all"]["traces"], 80);
    assert_eq!(slices["all"]["clean_rate"], 0.9);
    assert_eq!(slices["values"][1]["slice"], "model=gpt-5.4-mini");
    assert_eq!(slices["values"][1]["fired"]["abstention"], 8);
    let gate: Vec<(&str, &str)> = slices["gate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["slice"].as_str().unwrap(), v["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        gate,
        [("model=gpt-5.4", "PASS"), ("model=gpt-5.4-mini", "FAIL")]
    );
    assert_eq!(read_json(&report)["gate"]["verdict"], "PASS");

    // The Markdown and HTML reports end with the same table and line.
    let markdown = dir.path().join("report.md");
    let html = dir.path().join("report.html");
    check(&[
        arg(&candidate),
        "--band",
        arg(&band),
        "--by",
        "model",
        "--markdown",
        arg(&markdown),
        "--html",
        arg(&html),
    ]);
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    assert!(
        markdown.contains(
            "### Slices by model\n\n| slice | traces | clean rate | abstention |\n|---|---|---|---|\n| `all` | 80 | 0.90 | 8 |\n| `model=gpt-5.4` | 40 | 1.00 | 0 |\n| `model=gpt-5.4-mini` | 40 | 0.80 | 8 |\n"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("**Slice:** model=gpt-5.4-mini: clean rate 0.80 vs band [0.90, 0.90]"),
        "{markdown}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains(
            "<tr class=\"hit\"><td>model=gpt-5.4-mini</td><td>40</td><td>0.80</td><td>8</td></tr>"
        ),
        "{html}"
    );
    assert!(html.find("Slices by model").unwrap() < html.rfind("</body>").unwrap());

    // --gate-slices turns the slice's FAIL into the gate's.
    let out = check(&[
        arg(&candidate),
        "--band",
        arg(&band),
        "--by",
        "model",
        "--gate-slices",
        "--json",
        arg(&report),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "slice model=gpt-5.4-mini: clean rate 0.80 vs band [0.90, 0.90] over 40 traces · FAIL\n"
        ),
        "{text}"
    );
    assert_eq!(read_json(&report)["gate"]["verdict"], "FAIL");
}

#[test]
fn a_band_without_slices_reads_as_before_and_says_slices_are_not_gated() {
    let dir = scratch();
    let band = band(dir.path(), &[]);
    assert!(read_json(&band).get("slices").is_none());
    let candidate = candidate(dir.path());
    let out = check(&[arg(&candidate), "--band", arg(&band), "--by", "model"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("gate: PASS"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("slice model="), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("the band records no slices; slices by model are not gated"),
        "{}",
        stderr(&out)
    );
    // A band sliced by other keys is not held against these.
    let by_agent = band_dir_by(dir.path(), "agent");
    let out = check(&[arg(&candidate), "--band", arg(&by_agent), "--by", "model"]);
    assert!(
        stderr(&out).contains("the band records slices by agent, not by model"),
        "{}",
        stderr(&out)
    );
}

fn band_dir_by(dir: &Path, key: &str) -> PathBuf {
    let sub = dir.join(key);
    std::fs::create_dir_all(&sub).unwrap();
    band(&sub, &[key])
}

#[test]
fn values_past_the_cap_are_counted_as_other_and_said_so() {
    let dir = scratch();
    let run = write_run(
        &dir.path().join("run.json"),
        |_, i| i % 4 == 0,
        |n| format!("t{:02}", n % 40),
    );
    let report = dir.path().join("report.json");
    let out = check(&[arg(&run), "--by", "attr:tenant", "--json", arg(&report)]);
    let text = stdout(&out);
    assert!(
        text.contains("other: 16 trace(s) of the values past the first 32, counted together"),
        "{text}"
    );
    let slices = &read_json(&report)["slices"];
    assert_eq!(slices["other"], true);
    assert_eq!(slices["max_slices"], 32);
    let values = slices["values"].as_array().unwrap();
    assert_eq!(values.len(), 33);
    assert_eq!(values[0]["slice"], "attr:tenant=t00");
    assert_eq!(values[32]["slice"], "other");
    assert_eq!(values[32]["traces"], 16);
    let traces: u64 = values.iter().map(|v| v["traces"].as_u64().unwrap()).sum();
    assert_eq!(traces, 80);
}

#[test]
fn two_keys_make_one_slice_per_pair_and_a_missing_value_reads_none() {
    let dir = scratch();
    let run = candidate(dir.path());
    let report = dir.path().join("report.json");
    let out = check(&[
        arg(&run),
        "--by",
        "model",
        "--by",
        "agent_version",
        "--json",
        arg(&report),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let slices = &read_json(&report)["slices"];
    assert_eq!(slices["by"], json!(["model", "agent_version"]));
    let names: Vec<&str> = slices["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["slice"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "model=gpt-5.4,agent_version=(none)",
            "model=gpt-5.4-mini,agent_version=(none)"
        ]
    );
}

/// Every output file of a sliced run, by name.
fn outputs(dir: &Path, run: &Path, band: &Path, threads: &str) -> Vec<(String, Vec<u8>)> {
    let out_dir = dir.join(format!("out{threads}"));
    std::fs::create_dir_all(&out_dir).unwrap();
    let json = out_dir.join("report.json");
    let markdown = out_dir.join("report.md");
    let parquet = out_dir.join("parquet");
    let done = common::command(dir)
        .args([
            "check",
            arg(run),
            "--check",
            "abstention",
            "--band",
            arg(band),
            "--by",
            "model",
            "--by",
            "attr:tenant",
            "--json",
            arg(&json),
            "--markdown",
            arg(&markdown),
            "--parquet",
            arg(&parquet),
            "--table",
            "none",
        ])
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(
        done.status.code().is_some_and(|c| c < 2),
        "{}",
        stderr(&done)
    );
    let mut files = vec![
        ("report.json".to_string(), std::fs::read(&json).unwrap()),
        ("report.md".to_string(), std::fs::read(&markdown).unwrap()),
    ];
    for name in ["traces.parquet", "verdicts.parquet"] {
        files.push((name.to_string(), std::fs::read(parquet.join(name)).unwrap()));
    }
    let shown = stdout(&done);
    let summary: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("  ") || l.starts_with("slice"))
        .collect();
    files.push(("stdout".to_string(), summary.join("\n").into_bytes()));
    files
}

#[test]
fn the_same_bytes_at_one_two_and_four_threads() {
    let dir = scratch();
    let band = band(dir.path(), &["model", "attr:tenant"]);
    let run = write_run(
        &dir.path().join("run.json"),
        |m, i| (m + i) % 3 == 0,
        |n| format!("t{}", n % 5),
    );
    let one = outputs(dir.path(), &run, &band, "1");
    assert!(String::from_utf8_lossy(&one[0].1).contains("\"slices\""));
    assert!(
        String::from_utf8_lossy(&one[0].1).contains("\"gate_slices\""),
        "the band's slices are judged"
    );
    for threads in ["2", "4"] {
        assert_eq!(one, outputs(dir.path(), &run, &band, threads), "{threads}");
    }
}

#[test]
fn traces_parquet_has_a_slice_column_only_with_by() {
    let dir = scratch();
    let run = candidate(dir.path());
    for (by, sliced) in [(true, true), (false, false)] {
        let parquet = dir.path().join(format!("parquet-{by}"));
        let mut args = vec![arg(&run), "--parquet", arg(&parquet)];
        if by {
            args.extend(["--by", "model"]);
        }
        check(&args);
        let bytes = std::fs::read(parquet.join("traces.parquet")).unwrap();
        let has = bytes
            .windows(b"model=gpt-5.4-mini".len())
            .any(|w| w == b"model=gpt-5.4-mini");
        assert_eq!(has, sliced, "--by {by}");
    }
}

#[test]
fn merge_of_partials_equals_one_run() {
    let dir = scratch();
    let band = band(dir.path(), &["model"]);
    let run = candidate(dir.path());
    // Two files, so that two shards each read one.
    let text = std::fs::read_to_string(&run).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2 + 3);
    let first = dir.path().join("part1.json");
    let second = dir.path().join("part2.json");
    std::fs::write(&first, a.join("\n") + "\n").unwrap();
    std::fs::write(&second, b.join("\n") + "\n").unwrap();
    let mut partials = Vec::new();
    for shard in ["1/2", "2/2"] {
        let partial = dir.path().join(format!("partial{}", &shard[..1]));
        let done = check(&[
            arg(&first),
            arg(&second),
            "--by",
            "model",
            "--partial",
            arg(&partial),
            "--shard",
            shard,
        ]);
        assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
        partials.push(partial);
    }
    let merged = dir.path().join("merged.json");
    let done = faultgate(&[
        "merge",
        arg(&partials[0]),
        arg(&partials[1]),
        "--band",
        arg(&band),
        "--by",
        "model",
        "--json",
        arg(&merged),
        "--table",
        "none",
    ]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let single = dir.path().join("single.json");
    let one = check(&[
        arg(&first),
        arg(&second),
        "--band",
        arg(&band),
        "--by",
        "model",
        "--json",
        arg(&single),
    ]);
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&single).unwrap()
    );
    let lines = |text: String| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("  ") || l.starts_with("slice"))
            .map(String::from)
            .collect()
    };
    assert_eq!(lines(stdout(&done)), lines(stdout(&one)));
    // Partials written with other keys are refused.
    let done = faultgate(&[
        "merge",
        arg(&partials[0]),
        arg(&partials[1]),
        "--by",
        "agent",
    ]);
    assert_eq!(done.status.code(), Some(2));
    assert!(
        stderr(&done).contains(
            "--by agent: the partials were written with --by model; write them with the same --by to merge by it"
        ),
        "{}",
        stderr(&done)
    );
}

#[test]
fn an_unknown_key_is_exit_2_before_anything_is_read() {
    let dir = scratch();
    let report = dir.path().join("report.json");
    let missing = dir.path().join("missing.json");
    let band_out = dir.path().join("band.json");
    for args in [
        vec![
            "check",
            arg(&missing),
            "--by",
            "region",
            "--json",
            arg(&report),
        ],
        vec![
            "baseline",
            arg(&missing),
            arg(&missing),
            "--by",
            "region",
            "--out",
            arg(&band_out),
        ],
        vec!["merge", arg(&missing), "--by", "region"],
        vec!["check", arg(&missing), "--by", "attr:"],
    ] {
        let done = faultgate(&args);
        assert_eq!(done.status.code(), Some(2), "{args:?}");
        let key = args[args.iter().position(|a| *a == "--by").unwrap() + 1];
        assert_eq!(
            stderr(&done),
            format!(
                "faultgate: --by {key}: unknown slice key (one of model, agent, agent_version, service, attr:NAME)\n"
            ),
            "{args:?}"
        );
    }
    assert!(!report.exists() && !band_out.exists());
}

#[test]
fn without_by_no_output_names_slices() {
    let dir = scratch();
    let band = band(dir.path(), &[]);
    let run = candidate(dir.path());
    let report = dir.path().join("report.json");
    let out = check(&[arg(&run), "--band", arg(&band), "--json", arg(&report)]);
    assert!(!stdout(&out).contains("slice"), "{}", stdout(&out));
    let doc: Value = read_json(&report);
    assert!(doc.get("slices").is_none());
}

/// The text block after `marker` in the guide.
fn guide_block(guide: &str, marker: &str) -> String {
    let at = guide.find(marker).expect("marker in the guide");
    let rest = &guide[at..];
    let start = rest.find("```text\n").expect("a text block") + "```text\n".len();
    let end = rest[start..].find("```").expect("the block's end");
    rest[start..start + end].to_string()
}

/// Stdout with each timing (`· 0.1s` at a line's end) read as `· 0.0s`.
fn untimed(out: &std::process::Output) -> String {
    stdout(out)
        .lines()
        .map(|line| match line.rsplit_once(" · ") {
            Some((head, tail))
                if tail.ends_with('s') && tail[..tail.len() - 1].parse::<f64>().is_ok() =>
            {
                format!("{head} · 0.0s\n")
            }
            _ => format!("{line}\n"),
        })
        .collect()
}

/// The guide's example in a scratch folder: the three baseline runs of `examples/slices/` and
/// `candidate`, with the band built as the guide builds it; the folder and the baseline's output.
fn guide_example(candidate: &str) -> (tempfile::TempDir, std::process::Output) {
    let dir = scratch();
    let runs = [
        "baseline-run1.json",
        "baseline-run2.json",
        "baseline-run3.json",
    ];
    for name in runs.iter().chain([&candidate]) {
        std::fs::copy(
            common::file(&format!("examples/slices/{name}")),
            dir.path().join(name),
        )
        .unwrap();
    }
    let baseline = common::command(dir.path())
        .arg("baseline")
        .args(runs)
        .args(["--check", "abstention", "--measures", "--by", "model"])
        .args(["--out", "band.json"])
        .output()
        .unwrap();
    (dir, baseline)
}

#[test]
fn the_guide_example_prints_what_the_guide_shows() {
    let guide = std::fs::read_to_string(common::file("docs/budgets-and-slices.md")).unwrap();
    let (dir, baseline) = guide_example("candidate.json");
    let run = |args: &[&str]| common::command(dir.path()).args(args).output().unwrap();
    assert_eq!(
        untimed(&baseline),
        guide_block(&guide, "<!-- baseline output")
    );
    let check = [
        "check",
        "candidate.json",
        "--band",
        "band.json",
        "--check",
        "abstention",
        "--by",
        "model",
        "--budget",
        "cost.mean <= +10%",
        "--table",
        "none",
    ];
    let out = run(&check);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(untimed(&out), guide_block(&guide, "<!-- check output"));
    let mut gated = check.to_vec();
    gated.push("--gate-slices");
    let out = run(&gated);
    assert_eq!(out.status.code(), Some(1));
    let closing = guide_block(&guide, "With `--gate-slices` the same run fails");
    assert!(untimed(&out).ends_with(&closing), "{}", untimed(&out));
}

/// The guide's budget example: a candidate with the band's clean rate and twice its cost fails on
/// its cost budget alone.
#[test]
fn the_guide_cost_example_fails_on_its_budget() {
    let guide = std::fs::read_to_string(common::file("docs/budgets-and-slices.md")).unwrap();
    let (dir, baseline) = guide_example("candidate-costly.json");
    let run = |args: &[&str]| common::command(dir.path()).args(args).output().unwrap();
    assert_eq!(baseline.status.code(), Some(0));
    let out = run(&[
        "check",
        "candidate-costly.json",
        "--band",
        "band.json",
        "--check",
        "abstention",
        "--by",
        "model",
        "--budget",
        "cost.mean <= +10%",
        "--table",
        "none",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        untimed(&out),
        guide_block(&guide, "<!-- costly check output")
    );
}

#[test]
fn a_band_merged_from_baseline_partials_equals_one_baseline() {
    let dir = scratch();
    // The example's runs: each run's traces have ids of their own, as separate runs' do.
    let runs: Vec<PathBuf> = (1..=3)
        .map(|r| common::file(&format!("examples/slices/baseline-run{r}.json")))
        .collect();
    let names: Vec<&str> = runs.iter().map(|p| arg(p)).collect();
    let baseline = |extra: &[&str]| {
        let mut args = vec!["baseline"];
        args.extend(&names);
        args.extend(["--check", "abstention", "--by", "model", "-q"]);
        args.extend(extra);
        let done = faultgate(&args);
        assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    };
    let single = dir.path().join("single.json");
    baseline(&["--out", arg(&single)]);
    let partials: Vec<PathBuf> = ["1/2", "2/2"]
        .iter()
        .map(|shard| {
            let partial = dir.path().join(format!("partial{}", &shard[..1]));
            baseline(&["--partial", arg(&partial), "--shard", shard]);
            partial
        })
        .collect();
    let merged = dir.path().join("merged.json");
    let done = faultgate(&[
        "merge",
        arg(&partials[0]),
        arg(&partials[1]),
        "--by",
        "model",
        "--out",
        arg(&merged),
    ]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert!(read_json(&single).get("slices").is_some());
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&single).unwrap()
    );
}
