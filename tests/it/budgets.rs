//! Budgets on the band's measures, end to end: `baseline --measures` records each run's latency, cost
//! and steps, and `check --budget` holds a candidate to them, on generated runs whose values are known.

use crate::common;

use std::path::{Path, PathBuf};

use common::{arg, faultgate, read_json, scratch, stderr, stdout};
use serde_json::Value;

/// Scenarios of the generated runs.
const SCENARIOS: usize = 200;

/// A run as OTLP/JSON lines: scenario `i`'s root span lasts `latency(i)` ms and costs `cost(i)`
/// dollars (no cost attribute when `None`), with `steps(i)` tool calls under it.
fn write_run(
    path: &Path,
    latency: impl Fn(usize) -> u64,
    cost: impl Fn(usize) -> Option<f64>,
    steps: impl Fn(usize) -> usize,
) -> PathBuf {
    let attr = |key: &str, value: Value| {
        let typed = match value {
            Value::String(s) => serde_json::json!({ "stringValue": s }),
            other => serde_json::json!({ "doubleValue": other }),
        };
        serde_json::json!({ "key": key, "value": typed })
    };
    let mut text = String::new();
    for i in 0..SCENARIOS {
        let trace = format!("{:032x}", i + 1);
        let start = 1_758_000_000_000_000_000u64 + i as u64 * 100_000_000_000;
        let mut attributes = vec![
            attr("gen_ai.operation.name", "invoke_agent".into()),
            attr("faultgate.scenario", format!("s{i:03}").into()),
            attr("gen_ai.prompt", format!("Where is order {i}?").into()),
            attr("gen_ai.completion", format!("Order {i} shipped.").into()),
        ];
        if let Some(cost) = cost(i) {
            attributes.push(attr("faultgate.cost_usd", cost.into()));
        }
        let mut spans = vec![serde_json::json!({
            "traceId": trace, "spanId": format!("r{i:015x}"), "name": "invoke_agent support",
            "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": (start + latency(i) * 1_000_000).to_string(),
            "attributes": attributes,
        })];
        for k in 0..steps(i) {
            let at = start + 1_000 * (k as u64 + 1);
            spans.push(serde_json::json!({
                "traceId": trace, "spanId": format!("t{i:07x}{k:08x}"),
                "parentSpanId": format!("r{i:015x}"), "name": "execute_tool lookup",
                "startTimeUnixNano": at.to_string(), "endTimeUnixNano": (at + 500).to_string(),
                "attributes": [
                    attr("gen_ai.operation.name", "execute_tool".into()),
                    attr("gen_ai.tool.name", format!("lookup_{k}").into()),
                    attr("gen_ai.tool.call.result", format!("{{\"order\": {i}, \"part\": {k}}}").into()),
                ],
            }));
        }
        let line = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// Latencies from `base` to `base + 190` ms, ten apart, over the scenarios.
fn spread(base: u64) -> impl Fn(usize) -> u64 {
    move |i| base + (i % 20) as u64 * 10
}

/// A band of three runs whose latencies start at 995, 1000 and 1005 ms (means 1090, 1095 and 1100),
/// costing 0.01 each, with 1 or 2 tool steps.
fn band(dir: &Path, measures: bool) -> PathBuf {
    let runs: Vec<PathBuf> = [995, 1000, 1005]
        .iter()
        .enumerate()
        .map(|(r, &base)| {
            write_run(
                &dir.join(format!("run{r}.jsonl")),
                spread(base),
                |_| Some(0.01),
                |i| 1 + i % 2,
            )
        })
        .collect();
    let out = dir.join("band.json");
    let mut args = vec!["baseline"];
    args.extend(runs.iter().map(|r| arg(r)));
    args.extend(["--out", arg(&out), "-q"]);
    if measures {
        args.push("--measures");
    }
    let done = faultgate(&args);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    out
}

/// A candidate whose latencies start at `base` ms, costing `cost` each, with 1 or 2 tool steps.
fn candidate(dir: &Path, base: u64, cost: Option<f64>) -> PathBuf {
    write_run(
        &dir.join(format!("candidate{base}.jsonl")),
        spread(base),
        |_| cost,
        |i| 1 + i % 2,
    )
}

/// `check CANDIDATE --band BAND --budget …`: exit code, stdout lines after the summary line, stderr.
fn check(candidate: &Path, band: &Path, budgets: &[&str]) -> (Option<i32>, Vec<String>, String) {
    let mut args = vec![
        "check",
        arg(candidate),
        "--band",
        arg(band),
        "--table",
        "none",
        "-q",
    ];
    for b in budgets {
        args.extend(["--budget", b]);
    }
    let out = faultgate(&args);
    let lines = stdout(&out).lines().skip(1).map(String::from).collect();
    (out.status.code(), lines, stderr(&out))
}

#[test]
fn the_band_records_each_runs_measures_after_0_4_1s_keys() {
    let dir = scratch();
    let band = read_json(&band(dir.path(), true));
    let keys: Vec<&str> = band
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.last(), Some(&"measures"));
    let latency = &band["measures"]["latency_ms"];
    assert_eq!(latency["mean"], serde_json::json!([1090.0, 1095.0, 1100.0]));
    // 200 values, ten of each of 20 levels: p50 falls between the 10th and 11th level.
    assert_eq!(latency["p50"], serde_json::json!([1090.0, 1095.0, 1100.0]));
    assert_eq!(latency["p99"], serde_json::json!([1185.0, 1190.0, 1195.0]));
    assert_eq!(
        band["measures"]["cost_usd"]["p95"],
        serde_json::json!([0.01, 0.01, 0.01])
    );
    assert_eq!(
        band["measures"]["steps"]["mean"],
        serde_json::json!([1.5, 1.5, 1.5])
    );
    assert_eq!(
        band["measures"]["tokens"]["mean"],
        serde_json::json!([null, null, null])
    );
    // Without the flag the band keeps 0.4.1's keys alone.
    let plain_dir = dir.path().join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    let plain = read_json(&self::band(&plain_dir, false));
    assert!(plain.get("measures").is_none());
}

#[test]
fn each_budget_form_is_judged_and_a_failing_one_fails_the_gate() {
    let dir = scratch();
    let band = band(dir.path(), true);
    // Latency 50% up (mean 1645 against 1095), cost doubled, the same steps.
    let slow = candidate(dir.path(), 1550, Some(0.02));
    let (code, lines, _) = check(
        &slow,
        &band,
        &[
            "latency.p95 <= +20%",
            "cost.mean <= +10%",
            "steps.p90 <= +2",
            "cost.p95 <= 0.05",
        ],
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [
            "gate: PASS · clean rate 1.00 vs band [1.00, 1.00] from 3 baseline runs · fail below 0.98 · p=1.000",
            "budget latency.p95: FAIL · +46.6% > +20% (p=0.000) · 1730.5 vs band 1180.5 over 200 scenarios",
            "budget cost.mean: FAIL · +100% > +10% (p=0.000) · 0.02 vs band 0.01 over 200 scenarios",
            "budget steps.p90: PASS · +0 <= +2 · 2 vs band 2 over 200 scenarios",
            "budget cost.p95: PASS · 0.02 <= 0.05 · 0.02 over 200 scenarios",
            "gate: FAIL · budget latency.p95 +46.6% > +20% (p=0.000)",
            "gate: FAIL · budget cost.mean +100% > +10% (p=0.000)",
        ]
    );
    let fast = candidate(dir.path(), 1000, Some(0.01));
    let (code, lines, _) = check(&fast, &band, &["latency.p95 <= +20%", "steps.p90 <= +0"]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(
        lines[1..],
        [
            "budget latency.p95: PASS · +0% <= +20% · 1180.5 vs band 1180.5 over 200 scenarios",
            "budget steps.p90: PASS · +0 <= +0 · 2 vs band 2 over 200 scenarios",
        ]
    );
}

#[test]
fn the_json_gate_lists_the_budgets_only_when_asked() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let slow = candidate(dir.path(), 1550, Some(0.02));
    let report = dir.path().join("r.json");
    let out = faultgate(&[
        "check",
        arg(&slow),
        "--band",
        arg(&band),
        "--budget",
        "tokens.mean <= +15%",
        "--budget",
        "latency.mean <= +10%",
        "--json",
        arg(&report),
        "--markdown",
        arg(&dir.path().join("r.md")),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let markdown = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(
        markdown.starts_with("<!-- faultgate -->\n## faultgate: FAIL"),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "**Budget:** latency.mean: FAIL · +50.2% > +10% (p=0.000) · 1645 vs band 1095 over 200 scenarios\n"
        ),
        "{markdown}"
    );
    let gate = &read_json(&report)["gate"];
    assert_eq!(gate["verdict"], "FAIL");
    assert_eq!(
        gate["budgets"][1],
        serde_json::json!({
            "budget": "latency.mean <= +10%", "verdict": "FAIL", "candidate": 1645.0,
            "band": 1095.0, "limit": 1204.5, "p_value": 0.0004997501249375312, "scenarios": 200,
            "unmeasured": null, "scenarios_to_tell": null
        })
    );
    // No trace records tokens: a relative budget is warned about, never passed.
    assert_eq!(gate["budgets"][0]["verdict"], "INCONCLUSIVE");
    assert_eq!(gate["budgets"][0]["unmeasured"], "run");
    assert!(
        stderr(&out).contains(
            "warning: budget tokens.mean: no trace of this run records tokens (its format has none); the budget is not checked, INCONCLUSIVE"
        ),
        "{}",
        stderr(&out)
    );
    let plain = dir.path().join("plain.json");
    let out = faultgate(&[
        "check",
        arg(&slow),
        "--band",
        arg(&band),
        "--json",
        arg(&plain),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(read_json(&plain)["gate"].get("budgets").is_none());
}

/// A mean budget of +10% over a band of mean 1095 holds the candidate to 1204.5 (1199 to 1210 run by
/// run); the candidate's mean moves ten apart with its base, its spread stays.
#[test]
fn an_excess_fails_only_when_it_is_significant() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let verdict = |base: u64| {
        let run = candidate(dir.path(), base, Some(0.01));
        let (code, lines, _) = check(&run, &band, &["latency.mean <= +10%"]);
        (code, lines[1].clone())
    };
    // Just inside: 1200 <= 1204.5.
    assert_eq!(
        verdict(1105),
        (
            Some(0),
            "budget latency.mean: PASS · +9.6% <= +10% · 1200 vs band 1095 over 200 scenarios"
                .into()
        )
    );
    // Just outside, by less than the noise of 200 scenarios and the band's spread.
    assert_eq!(
        verdict(1112),
        (
            Some(0),
            "budget latency.mean: INCONCLUSIVE · +10.2% > +10% (p=0.358), not significant against the band's run-to-run spread · 1207 vs band 1095 over 200 scenarios · more baseline runs would tell, not more scenarios".into()
        )
    );
    // The budget alone turns the gate: the clean rate's own line passes, so the change is named.
    let run = candidate(dir.path(), 1112, Some(0.01));
    let (_, lines, _) = check(&run, &band, &["latency.mean <= +10%"]);
    assert!(lines[0].starts_with("gate: PASS"), "{lines:?}");
    assert!(
        lines.contains(
            &"gate: INCONCLUSIVE · budget latency.mean +10.2% > +10% (p=0.358)".to_string()
        ),
        "{lines:?}"
    );
    // Outside by more than both.
    assert_eq!(
        verdict(1130),
        (
            Some(1),
            "budget latency.mean: FAIL · +11.9% > +10% (p=0.000) · 1225 vs band 1095 over 200 scenarios".into()
        )
    );
}

#[test]
fn a_run_without_costs_cannot_meet_an_absolute_cost_budget() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let free = candidate(dir.path(), 1000, None);
    let report = dir.path().join("refused.json");
    let out = faultgate(&[
        "check",
        arg(&free),
        "--band",
        arg(&band),
        "--budget",
        "cost.p95 <= 0.05",
        "--json",
        arg(&report),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with(
            "\nfaultgate: budget cost.p95: no trace of this run records cost_usd (its format has none), so the budget cannot be checked\n"
        ),
        "{}",
        stderr(&out)
    );
    // Refused before any output: no table, no summary line, no report.
    assert_eq!(stdout(&out), "");
    assert!(!report.exists());
    let (code, lines, err) = check(&free, &band, &["cost.p95 <= +10%"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        lines[1],
        "budget cost.p95: INCONCLUSIVE · not measured (this run does not record it)"
    );
    assert!(err.contains("warning: budget cost.p95: no trace of this run records cost_usd"));
}

#[test]
fn a_band_without_measures_is_refused_with_how_to_rebuild_it() {
    let dir = scratch();
    let band = band(dir.path(), false);
    let run = candidate(dir.path(), 1000, Some(0.01));
    let (code, lines, err) = check(&run, &band, &["latency.p95 <= +20%"]);
    assert_eq!(code, Some(2));
    assert!(lines.is_empty(), "{lines:?}");
    assert_eq!(
        err.trim_end(),
        format!(
            "faultgate: {}: the band records no measures, which --budget needs; rebuild it with `faultgate baseline --measures`",
            band.display()
        )
    );
}

#[test]
fn bad_expressions_are_refused_before_anything_is_read() {
    for (expression, why) in [
        (
            "latency.p95 < +20%",
            "expected MEASURE.STATISTIC <= LIMIT, e.g. latency.p95 <= +20%",
        ),
        (
            "latency.p42 <= +20%",
            "unknown statistic 'p42' (one of mean, p50, p90, p95, p99)",
        ),
        (
            "tokens.cached.mean <= +15%",
            "unknown measure 'tokens.cached' (one of latency, tokens, tokens.input, tokens.output, cost, steps, model_calls)",
        ),
        (
            "latency.p95 <= fast",
            "the limit 'fast' is not +N%, +N or a number",
        ),
        (
            "latency.p95 <= 20%",
            "a relative limit has a sign: '+20%', not '20%'",
        ),
    ] {
        // Neither the traces nor the band exist: the expression is refused first.
        let out = faultgate(&[
            "check",
            "no-such-run.json",
            "--band",
            "no-such-band.json",
            "--budget",
            expression,
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(2), "{expression}");
        assert_eq!(
            stderr(&out),
            format!("faultgate: --budget '{expression}': {why}\n")
        );
    }
}

#[test]
fn budgets_give_the_same_bytes_at_any_thread_count() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let run = candidate(dir.path(), 1112, Some(0.015));
    let outputs: Vec<(Vec<String>, Value)> = ["1", "2", "4"]
        .iter()
        .map(|threads| {
            let report = dir.path().join(format!("r{threads}.json"));
            let out = common::command(dir.path())
                .env("RAYON_NUM_THREADS", threads)
                .args([
                    "check",
                    arg(&run),
                    "--band",
                    arg(&band),
                    "--budget",
                    "latency.p90 <= +10%",
                    "--budget",
                    "cost.mean <= +40%",
                    "--json",
                    arg(&report),
                    "--table",
                    "none",
                    "-q",
                ])
                .output()
                .unwrap();
            // The summary line carries the elapsed time; the rest must not move.
            let lines = stdout(&out)
                .lines()
                .skip(1)
                .filter(|l| !l.starts_with("report written to"))
                .map(String::from)
                .collect();
            (lines, read_json(&report)["gate"].clone())
        })
        .collect();
    assert!(
        outputs[0]
            .0
            .iter()
            .any(|l| l.starts_with("budget latency.p90"))
    );
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
}

/// tau-bench's results record no time, cost or tokens: a band of its runs has no latency either.
#[test]
fn a_format_without_times_is_refused_an_absolute_budget_and_warned_of_a_relative_one() {
    let dir = scratch();
    let source = common::file("tests/fixtures/formats/tau/tau_bench_airline.json");
    let runs: Vec<PathBuf> = ["a.json", "b.json"]
        .iter()
        .map(|name| {
            let path = dir.path().join(name);
            std::fs::copy(&source, &path).unwrap();
            path
        })
        .collect();
    let band = dir.path().join("band.json");
    let out = faultgate(&[
        "baseline",
        arg(&runs[0]),
        arg(&runs[1]),
        "--measures",
        "--out",
        arg(&band),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        read_json(&band)["measures"]["latency_ms"]["p95"],
        serde_json::json!([null, null])
    );
    let (code, _, err) = check(&source, &band, &["latency.p95 <= 20000"]);
    assert_eq!(code, Some(2));
    assert!(
        err.ends_with(
            "faultgate: budget latency.p95: no trace of this run records latency_ms (its format has none), so the budget cannot be checked\n"
        ),
        "{err}"
    );
    let report = dir.path().join("r.json");
    let out = faultgate(&[
        "check",
        arg(&source),
        "--band",
        arg(&band),
        "--budget",
        "latency.p95 <= +20%",
        "--json",
        arg(&report),
        "--table",
        "none",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "budget latency.p95: INCONCLUSIVE · not measured (this run does not record it)\n"
        ),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains(
        "warning: budget latency.p95: no trace of this run records latency_ms (its format has none); the budget is not checked, INCONCLUSIVE"
    ));
    // The gate does not pass on a budget it could not check.
    assert_eq!(read_json(&report)["gate"]["verdict"], "INCONCLUSIVE");
}

#[test]
fn a_budgets_file_adds_its_budgets_after_the_flags() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let slow = candidate(dir.path(), 1550, Some(0.01));
    let file = dir.path().join("budgets.json");
    std::fs::write(
        &file,
        r#"{"budgets": ["cost.mean <= +10%", "latency.p95 <= +20%"]}"#,
    )
    .unwrap();
    let out = faultgate(&[
        "check",
        arg(&slow),
        "--band",
        arg(&band),
        "--budget",
        "steps.p90 <= +2",
        "--budgets",
        arg(&file),
        "--table",
        "none",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let printed = stdout(&out);
    let budgets: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("budget "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        budgets,
        ["budget steps.p90", "budget cost.mean", "budget latency.p95"]
    );
    std::fs::write(&file, r#"{"budgets": "latency.p95 <= +20%"}"#).unwrap();
    let out = faultgate(&[
        "check",
        arg(&slow),
        "--band",
        arg(&band),
        "--budgets",
        arg(&file),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "faultgate: {}: expected a JSON object with a \"budgets\" list of expressions, e.g. {{\"budgets\": [\"latency.p95 <= +20%\"]}}\n",
            file.display()
        )
    );
}

#[test]
fn junit_has_a_case_per_budget_in_the_gate_suite() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let slow = candidate(dir.path(), 1550, Some(0.01));
    let junit = dir.path().join("r.xml");
    let out = faultgate(&[
        "check",
        arg(&slow),
        "--band",
        arg(&band),
        "--budget",
        "latency.p95 <= +20%",
        "--budget",
        "cost.mean <= +10%",
        "--junit",
        arg(&junit),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let xml = std::fs::read_to_string(&junit).unwrap();
    let suite = &xml[xml.find("<testsuite name=\"gate\"").expect("gate suite")..];
    assert!(
        suite.starts_with(
            "<testsuite name=\"gate\" tests=\"3\" skipped=\"0\" errors=\"0\" failures=\"2\">"
        ),
        "{suite}"
    );
    assert!(
        suite.contains(
            "<testcase name=\"budget latency.p95 &lt;= +20%\" classname=\"gate\">\n            <failure message=\"budget latency.p95: FAIL · +46.6% &gt; +20% (p=0.000) · 1730.5 vs band 1180.5 over 200 scenarios\" type=\"budget\"/>\n        </testcase>"
        ),
        "{suite}"
    );
    assert!(
        suite.contains(
            "<testcase name=\"budget cost.mean &lt;= +10%\" classname=\"gate\">\n            <system-out>budget cost.mean: PASS · +0% &lt;= +10% · 0.01 vs band 0.01 over 200 scenarios</system-out>\n        </testcase>\n    </testsuite>\n</testsuites>\n"
        ),
        "{suite}"
    );
}

/// A run as OTLP/JSON lines whose scenario `i` makes `calls(i)` model calls (`chat` spans) under an
/// `invoke_agent` root, each reading 100 tokens and writing `output(i)`.
fn write_chat_run(
    path: &Path,
    output: impl Fn(usize) -> u64,
    calls: impl Fn(usize) -> usize,
) -> PathBuf {
    let int = |key: &str, value: u64| serde_json::json!({"key": key, "value": {"intValue": value.to_string()}});
    let text =
        |key: &str, value: &str| serde_json::json!({"key": key, "value": {"stringValue": value}});
    let mut lines = String::new();
    for i in 0..SCENARIOS {
        let trace = format!("{:032x}", i + 1);
        let start = 1_758_000_000_000_000_000u64 + i as u64 * 100_000_000_000;
        let mut spans = vec![serde_json::json!({
            "traceId": trace, "spanId": format!("r{i:015x}"), "name": "invoke_agent support",
            "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 1_000_000).to_string(),
            "attributes": [
                text("gen_ai.operation.name", "invoke_agent"),
                text("faultgate.scenario", &format!("s{i:03}")),
                text("gen_ai.prompt", &format!("Where is order {i}?")),
                text("gen_ai.completion", &format!("Order {i} shipped.")),
            ],
        })];
        for k in 0..calls(i) {
            let at = start + 1_000 * (k as u64 + 1);
            spans.push(serde_json::json!({
                "traceId": trace, "spanId": format!("c{i:07x}{k:08x}"),
                "parentSpanId": format!("r{i:015x}"), "name": "chat gpt-5",
                "startTimeUnixNano": at.to_string(), "endTimeUnixNano": (at + 500).to_string(),
                "attributes": [
                    text("gen_ai.operation.name", "chat"),
                    int("gen_ai.usage.input_tokens", 100),
                    int("gen_ai.usage.output_tokens", output(i)),
                ],
            }));
        }
        let line = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(path, lines).unwrap();
    path.to_path_buf()
}

#[test]
fn input_and_output_tokens_and_model_calls_are_measured_and_budgeted() {
    let dir = scratch();
    let runs: Vec<PathBuf> = [200, 205, 210]
        .iter()
        .map(|&base| {
            write_chat_run(
                &dir.path().join(format!("run{base}.jsonl")),
                move |i| base + (i % 20) as u64 * 5,
                |i| 1 + i % 2,
            )
        })
        .collect();
    let band = dir.path().join("band.json");
    let mut args = vec!["baseline"];
    args.extend(runs.iter().map(|r| arg(r)));
    args.extend(["--measures", "--out", arg(&band), "-q"]);
    let out = faultgate(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let measures = &read_json(&band)["measures"];
    let keys: Vec<&str> = measures
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "latency_ms",
            "tokens",
            "cost_usd",
            "steps",
            "input_tokens",
            "output_tokens",
            "model_calls"
        ]
    );
    // 1 or 2 calls a trace, so 150 input tokens on average; a median output of 350 tokens at base 200.
    assert_eq!(
        measures["model_calls"]["mean"],
        serde_json::json!([1.5, 1.5, 1.5])
    );
    assert_eq!(
        measures["input_tokens"]["mean"],
        serde_json::json!([150.0, 150.0, 150.0])
    );
    assert_eq!(
        measures["output_tokens"]["p50"],
        serde_json::json!([350.0, 357.5, 365.0])
    );

    // The same calls, each writing twice as much.
    let verbose = write_chat_run(
        &dir.path().join("verbose.jsonl"),
        |i| 2 * (205 + (i % 20) as u64 * 5),
        |i| 1 + i % 2,
    );
    let (code, lines, _) = check(
        &verbose,
        &band,
        &[
            "tokens.output.mean <= +15%",
            "tokens.input.p95 <= +5%",
            "model_calls.mean <= +0",
        ],
    );
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(
        lines[1].starts_with("budget tokens.output.mean: FAIL · +100% > +15% (p=0.000)"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("budget tokens.input.p95: PASS · +0% <= +5%"),
        "{lines:?}"
    );
    assert!(
        lines[3].starts_with("budget model_calls.mean: PASS · +0 <= +0 · 1.5 vs band 1.5"),
        "{lines:?}"
    );

    // A band written before these measures were recorded is refused with how to rebuild it.
    let mut old = read_json(&band);
    for key in ["input_tokens", "output_tokens", "model_calls"] {
        old["measures"].as_object_mut().unwrap().remove(key);
    }
    let old_band = dir.path().join("old-band.json");
    std::fs::write(&old_band, old.to_string()).unwrap();
    let (code, lines, err) = check(&verbose, &old_band, &["model_calls.mean <= +0"]);
    assert_eq!(code, Some(2));
    assert!(lines.is_empty(), "{lines:?}");
    assert_eq!(
        err.lines().last().unwrap_or_default(),
        format!(
            "faultgate: {}: the band records no model_calls, which --budget model_calls.mean needs; rebuild it with `faultgate baseline --measures`",
            old_band.display()
        )
    );
    // Its older measures still serve.
    let (code, _, err) = check(&verbose, &old_band, &["latency.p95 <= +20%"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn budgets_reach_the_html_parquet_and_evaluation_events() {
    use arrow_array::{Array, Float64Array, Int64Array, StringArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let dir = scratch();
    let band = band(dir.path(), true);
    // Latency 50% up, the same cost: one budget fails, one passes, one is just past its limit.
    let slow = candidate(dir.path(), 1550, Some(0.01));
    let html = dir.path().join("r.html");
    let pq = dir.path().join("pq");
    let events = dir.path().join("events.json");
    let out = faultgate(&[
        "check",
        arg(&slow),
        "--band",
        arg(&band),
        "--budget",
        "latency.p95 <= +20%",
        "--budget",
        "cost.mean <= +10%",
        "--html",
        arg(&html),
        "--parquet",
        arg(&pq),
        "--otlp-events",
        arg(&events),
        "--table",
        "none",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    // HTML: each budget's line and a chart with one dot per baseline run, the limit and this run.
    let page = std::fs::read_to_string(&html).unwrap();
    let section = &page[page.find("<h2>Budgets</h2>").expect("a budgets section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains(
        "<p class=\"budget\">budget latency.p95: FAIL · +46.6% &gt; +20% (p=0.000) · 1730.5 vs band 1180.5 over 200 scenarios</p>"
    ), "{section}");
    assert_eq!(section.matches("class=\"budget-chart\"").count(), 2);
    assert_eq!(section.matches("<circle class=\"run\"").count(), 6);
    assert!(section.contains("<title>limit 1416.6</title>"), "{section}");
    assert!(
        section.contains("fill=\"#cf222e\"><title>1730.5</title></rect>"),
        "{section}"
    );

    // Parquet: one row per budget.
    let file = std::fs::File::open(pq.join("budgets.parquet")).unwrap();
    let batches: Vec<_> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(batches.len(), 1);
    let batch = &batches[0];
    let text = |name: &str| {
        let column = batch.column_by_name(name).unwrap();
        let column = column.as_any().downcast_ref::<StringArray>().unwrap();
        (0..column.len())
            .map(|i| column.value(i).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(text("budget"), ["latency.p95 <= +20%", "cost.mean <= +10%"]);
    assert_eq!(text("measure"), ["latency_ms", "cost_usd"]);
    assert_eq!(text("verdict"), ["FAIL", "PASS"]);
    let candidate = batch.column_by_name("candidate").unwrap();
    let candidate = candidate.as_any().downcast_ref::<Float64Array>().unwrap();
    assert!((candidate.value(0) - 1730.5).abs() < 1e-9, "{candidate:?}");
    let p = batch.column_by_name("p_value").unwrap();
    assert!(p.is_null(1));
    let scenarios = batch.column_by_name("scenarios").unwrap();
    let scenarios = scenarios.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(scenarios.values(), &[200, 200]);

    // Evaluation events: a record per budget after the gate's, scored 1.0 for a pass and 0.0 for a fail.
    let export = read_json(&events);
    let records = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array()
        .unwrap();
    let attribute = |record: &Value, key: &str| {
        record["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| a["value"].clone())
    };
    let named: Vec<String> = records
        .iter()
        .rev()
        .take(3)
        .map(|r| {
            attribute(r, "gen_ai.evaluation.name").unwrap()["stringValue"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        named,
        [
            "faultgate.budget.cost.mean",
            "faultgate.budget.latency.p95",
            "faultgate.gate"
        ]
    );
    let latency = &records[records.len() - 2];
    assert_eq!(
        attribute(latency, "gen_ai.evaluation.score.value"),
        Some(serde_json::json!({"doubleValue": 0.0}))
    );
    assert_eq!(
        attribute(latency, "gen_ai.evaluation.score.label"),
        Some(serde_json::json!({"stringValue": "fail"}))
    );
    let limit = attribute(latency, "faultgate.budget.limit").unwrap()["doubleValue"]
        .as_f64()
        .unwrap();
    assert!((limit - 1416.6).abs() < 1e-9, "{limit}");
    let cost = &records[records.len() - 1];
    assert_eq!(
        attribute(cost, "gen_ai.evaluation.score.value"),
        Some(serde_json::json!({"doubleValue": 1.0}))
    );
    assert_eq!(attribute(cost, "faultgate.budget.p_value"), None);
}

#[test]
fn budgets_over_merged_shards_equal_one_run() {
    let dir = scratch();
    let band = band(dir.path(), true);
    let run = candidate(dir.path(), 1112, Some(0.015));
    // The candidate's traces in two files, so that two shards read one each.
    let text = std::fs::read_to_string(&run).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    for (k, half) in lines.chunks(lines.len() / 2 + 1).enumerate() {
        std::fs::write(
            inputs.join(format!("part{k}.jsonl")),
            half.join("\n") + "\n",
        )
        .unwrap();
    }
    let budgets = [
        "--budget",
        "latency.p90 <= +10%",
        "--budget",
        "tokens.output.mean <= +5%",
        "--budget",
        "cost.mean <= +40%",
    ];
    let report = |name: &str, args: &[&str]| {
        let path = dir.path().join(name);
        let mut all = args.to_vec();
        all.extend(["--band", arg(&band)]);
        all.extend(budgets);
        all.extend(["--json", arg(&path), "--table", "none"]);
        let out = faultgate(&all);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        let lines: Vec<String> = stdout(&out)
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with("report written to"))
            .map(String::from)
            .collect();
        (lines, read_json(&path))
    };
    let one = report("one.json", &["check", arg(&inputs)]);
    for k in ["1/2", "2/2"] {
        let partial = dir.path().join(format!("p{}", &k[..1]));
        let out = faultgate(&[
            "check",
            arg(&inputs),
            "--shard",
            k,
            "--partial",
            arg(&partial),
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let p1 = dir.path().join("p1");
    let p2 = dir.path().join("p2");
    let merged = report("merged.json", &["merge", arg(&p1), arg(&p2)]);
    assert!(
        one.0
            .iter()
            .any(|l| l.starts_with("budget cost.mean: FAIL")),
        "{:?}",
        one.0
    );
    assert_eq!(one.0, merged.0);
    assert_eq!(one.1["gate"], merged.1["gate"]);
}

/// Scenario `i`'s cost in baseline run `run` (0.5% apart run to run) times `factor`: from 0.001 to
/// 0.1 dollars over the scenarios, so that they differ far more than a release moves them.
fn scenario_cost(i: usize, run: usize, factor: f64) -> f64 {
    let base = 0.001 * (1 + (i * 37) % 100) as f64;
    base * (1.0 + 0.005 * (run as f64 - 1.0)) * factor
}

/// A band of three runs of [`scenario_cost`], with `flags` after `--measures`.
fn cost_band(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let runs: Vec<PathBuf> = (0..3)
        .map(|r| {
            write_run(
                &dir.join(format!("cost-run{r}.jsonl")),
                spread(1000),
                |i| Some(scenario_cost(i, r, 1.0)),
                |_| 1,
            )
        })
        .collect();
    let out = dir.join(name);
    let mut args = vec!["baseline"];
    args.extend(runs.iter().map(|r| arg(r)));
    args.extend(["--out", arg(&out), "-q", "--measures"]);
    args.extend(flags);
    let done = faultgate(&args);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    out
}

/// `check --json` of `candidate` against `band` with `budgets`: the exit code, the budget lines and
/// the JSON gate.
fn check_json(
    dir: &Path,
    candidate: &Path,
    band: &Path,
    budgets: &[&str],
    threads: &str,
) -> (Option<i32>, Vec<String>, Value) {
    let report = dir.join("gate-report.json");
    let mut args = vec![
        "check",
        arg(candidate),
        "--band",
        arg(band),
        "--table",
        "none",
        "-q",
    ];
    for b in budgets {
        args.extend(["--budget", b]);
    }
    args.extend(["--json", arg(&report)]);
    let out = common::command(dir)
        .env("RAYON_NUM_THREADS", threads)
        .args(&args)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let lines = stdout(&out)
        .lines()
        .filter(|l| l.starts_with("budget "))
        .map(String::from)
        .collect();
    (out.status.code(), lines, read_json(&report)["gate"].clone())
}

#[test]
fn the_band_records_each_scenarios_median_after_the_measures() {
    let dir = scratch();
    let band = read_json(&cost_band(dir.path(), "band.json", &["--per-scenario"]));
    let keys: Vec<&str> = band
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys[keys.len() - 3..],
        ["scenario_clean_runs", "measures", "scenario_measures"]
    );
    let medians = &band["scenario_measures"];
    let costs = medians["cost_usd"].as_array().unwrap();
    assert_eq!(costs.len(), SCENARIOS);
    // Scenario s000 costs 0.001 in the middle run, 0.5% less and more in the others.
    assert_eq!(band["scenarios"][0], "s000");
    assert_eq!(costs[0], serde_json::json!(0.001));
    assert_eq!(medians["steps"][7], serde_json::json!(1.0));
    // No trace records tokens: null as a whole, not a list of nulls.
    assert_eq!(medians["tokens"], Value::Null);
    // Without --per-scenario, or without --measures, the band has no medians.
    let plain = read_json(&cost_band(dir.path(), "plain.json", &[]));
    assert!(plain.get("scenario_measures").is_none());
    assert!(plain.get("scenario_clean_runs").is_none());
}

#[test]
fn a_rise_on_every_scenario_fails_paired_where_the_unpaired_test_cannot_tell() {
    let dir = scratch();
    let paired = cost_band(dir.path(), "paired.json", &["--per-scenario"]);
    let unpaired = cost_band(dir.path(), "unpaired.json", &[]);
    let run = |factor: f64| {
        write_run(
            &dir.path().join(format!("candidate-{factor}.jsonl")),
            spread(1000),
            |i| Some(scenario_cost(i, 1, factor)),
            |_| 1,
        )
    };
    let budget = ["cost.mean <= +10%"];
    let risen = run(1.12);
    let (code, lines, gate) = check_json(dir.path(), &risen, &unpaired, &budget, "2");
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        lines[0].starts_with("budget cost.mean: INCONCLUSIVE · +12% > +10%"),
        "{lines:?}"
    );
    // A band without per-scenario medians gives today's bytes: no test named.
    assert!(gate["budgets"][0].get("test").is_none(), "{gate}");
    let (code, lines, gate) = check_json(dir.path(), &risen, &paired, &budget, "2");
    assert_eq!(code, Some(1), "{lines:?}");
    assert_eq!(
        lines,
        [
            "budget cost.mean: FAIL · +12% > +10% (p=0.000) · 0.0566 vs band 0.0505 over 200 scenarios, 200 paired with the band's medians"
        ]
    );
    assert_eq!(gate["budgets"][0]["test"], "paired");
    assert_eq!(gate["budgets"][0]["paired_scenarios"], 200);
    // A percentile is never paired: its tail is not each scenario's centre.
    let (_, _, gate) = check_json(dir.path(), &risen, &paired, &["cost.p90 <= +10%"], "2");
    assert_eq!(gate["budgets"][0]["test"], "unpaired");
    // Within the limit, either way.
    let modest = run(1.05);
    for band in [&paired, &unpaired] {
        let (code, lines, _) = check_json(dir.path(), &modest, band, &budget, "2");
        assert_eq!(code, Some(0), "{lines:?}");
        assert!(
            lines[0].starts_with("budget cost.mean: PASS · +5% <= +10%"),
            "{lines:?}"
        );
    }
    // The same bytes at any thread count.
    let at = |threads| check_json(dir.path(), &risen, &paired, &budget, threads);
    let one = at("1");
    assert_eq!(one, at("2"));
    assert_eq!(one, at("4"));
}

#[test]
fn a_candidate_mostly_outside_the_band_is_tested_unpaired_and_says_so() {
    let dir = scratch();
    let paired = cost_band(dir.path(), "paired.json", &["--per-scenario"]);
    // Scenarios renamed past the first 60: 60 of 200 in the band, fewer than half.
    let renamed = dir.path().join("renamed.jsonl");
    let original = write_run(
        &dir.path().join("original.jsonl"),
        spread(1000),
        |i| Some(scenario_cost(i, 1, 1.12)),
        |_| 1,
    );
    let text = std::fs::read_to_string(original).unwrap();
    let moved: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i < 60 {
                line.to_string()
            } else {
                line.replace(&format!("\"s{i:03}\""), &format!("\"new{i:03}\""))
            }
        })
        .collect();
    std::fs::write(&renamed, moved.join("\n") + "\n").unwrap();
    let (_, lines, gate) = check_json(dir.path(), &renamed, &paired, &["cost.mean <= +10%"], "2");
    assert_eq!(gate["budgets"][0]["test"], "unpaired", "{gate}");
    assert_eq!(gate["budgets"][0]["paired_scenarios"], 60);
    assert!(
        lines[0].contains(
            "(p=0.334), not significant against the band's run-to-run spread · 0.0566 vs band 0.0505 over 200 scenarios, only 60 in the band: tested unpaired"
        ),
        "{lines:?}"
    );
}

#[test]
fn paired_budgets_over_merged_shards_equal_one_run() {
    let dir = scratch();
    let band = cost_band(dir.path(), "paired.json", &["--per-scenario"]);
    let run = write_run(
        &dir.path().join("risen.jsonl"),
        spread(1000),
        |i| Some(scenario_cost(i, 1, 1.12)),
        |_| 1,
    );
    let text = std::fs::read_to_string(&run).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    for (k, part) in lines.chunks(lines.len() / 2 + 1).enumerate() {
        std::fs::write(
            inputs.join(format!("part{k}.jsonl")),
            part.join("\n") + "\n",
        )
        .unwrap();
    }
    let gate = |name: &str, args: &[&str]| {
        let path = dir.path().join(name);
        let mut all = args.to_vec();
        all.extend(["--band", arg(&band), "--budget", "cost.mean <= +10%"]);
        all.extend(["--json", arg(&path), "--table", "none"]);
        let out = faultgate(&all);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        read_json(&path)["gate"].clone()
    };
    let one = gate("one.json", &["check", arg(&inputs)]);
    for k in ["1/2", "2/2"] {
        let partial = dir.path().join(format!("p{}", &k[..1]));
        let out = faultgate(&[
            "check",
            arg(&inputs),
            "--shard",
            k,
            "--partial",
            arg(&partial),
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let (p1, p2) = (dir.path().join("p1"), dir.path().join("p2"));
    let merged = gate("merged.json", &["merge", arg(&p1), arg(&p2)]);
    assert_eq!(one["budgets"][0]["test"], "paired");
    assert_eq!(one["budgets"][0]["verdict"], "FAIL");
    assert_eq!(one, merged);
}
