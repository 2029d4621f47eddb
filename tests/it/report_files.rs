//! `--junit` and `--html` end to end through the binary: the JUnit XML holds to the schema (checked in
//! process, see `junit_schema`; CI also validates it with xmllint) and carries a suite per check, a
//! case per trace and the gate; the HTML page loads nothing from anywhere; both are redacted.

use crate::common;
use crate::common::ScratchDir;
mod junit_schema;

use common::faultgate;
use std::path::Path;

const CANDIDATE: &str = "examples/gate/candidate_gpt.json";
const RUN2: &str = "examples/gate/baseline_glm_run2.json";
const BAND: &str = "examples/gate/band.json";
const GOLDEN: &str = "examples/gate/golden.json";
const PII: &str = "tests/fixtures/compat/pii.json";
const PII_GOLDEN: &str = "tests/fixtures/compat/golden/pii.json";
/// Raw values in the pii fixture that the builtin redaction masks, and that reach reasons unmasked with
/// `--redact off`.
const SECRETS: [&str; 4] = [
    "4111 1111 1111 1111",
    "ops@example.com",
    "sk-proj-abcdefghijklmnopqrstuvwx",
    "123-45-6789",
];

fn out_dir(name: &str) -> ScratchDir {
    ScratchDir::named(&format!("report-files-{name}"))
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Checks `xml` against the JUnit schema; panics with the breach when it does not hold.
fn assert_valid_junit(xml: &Path) {
    if let Err(breach) = junit_schema::validate(&text(xml)) {
        panic!("{} does not validate: {breach}", xml.display());
    }
}

/// The `<testsuite ...>` opening tags of a document, in order.
fn suites(xml: &str) -> Vec<&str> {
    xml.match_indices("<testsuite ")
        .map(|(at, _)| {
            let end = xml[at..].find('>').unwrap();
            &xml[at..at + end]
        })
        .collect()
}

#[test]
fn schema_rejects_a_malformed_report() {
    // The schema check must be able to fail: each document breaks one rule of junit.xsd.
    let case = |body: &str| {
        format!("<testsuites tests=\"1\" failures=\"0\" errors=\"0\">{body}</testsuites>")
    };
    let suite = |attrs: &str, body: &str| {
        case(&format!(
            "<testsuite name=\"a\" tests=\"1\" failures=\"0\" errors=\"0\"{attrs}>{body}</testsuite>"
        ))
    };
    let broken = [
        (
            "<testsuites tests=\"x\" failures=\"0\" errors=\"0\"/>".to_string(),
            "/testsuites: tests=\"x\" is not of its type",
        ),
        (
            suite("", "<testcase/>"),
            "/testsuites/testsuite[0]/testcase[0]: attribute name is required",
        ),
        (
            suite("", "<testcase name=\"c\"><failure/><error/></testcase>"),
            "/testsuites/testsuite[0]/testcase[0]: <error> is not allowed here",
        ),
        (
            suite("", "<system-out/><testcase name=\"c\"/>"),
            "/testsuites/testsuite[0]: <testcase> is not allowed here",
        ),
        (
            suite(" time=\"-1\"", ""),
            "/testsuites/testsuite[0]: time=\"-1\" is not of its type",
        ),
        (
            suite(" timestamp=\"2026-10-01\"", ""),
            "/testsuites/testsuite[0]: timestamp=\"2026-10-01\" is not of its type",
        ),
        (
            suite(" colour=\"red\"", ""),
            "/testsuites/testsuite[0]: attribute colour is not allowed",
        ),
        (
            suite("", "stray text"),
            "/testsuites/testsuite[0]: holds text \"stray text\"",
        ),
        (
            case("<testsuite name=\"a\" tests=\"1\" failures=\"0\"/>"),
            "/testsuites/testsuite[0]: attribute errors is required",
        ),
        (
            "<testsuite name=\"a\"/>".to_string(),
            "the root is <testsuite>, not <testsuites>",
        ),
    ];
    for (xml, breach) in broken {
        assert_eq!(
            junit_schema::validate(&xml),
            Err(breach.to_string()),
            "{xml}"
        );
    }
    assert!(junit_schema::validate("<testsuites tests=\"1\"").is_err());
    // What the schema allows passes: every optional part, in its place.
    let full = suite(
        " skipped=\"0\" time=\"0.5\" timestamp=\"2026-10-01T10:00:00.25+02:00\" hostname=\"h\"",
        "<properties><property name=\"k\" value=\"v\"/></properties>\
         <testcase name=\"c\" classname=\"k\" time=\"1\"><failure message=\"m &amp; n\" type=\"t\">why &#x3c;</failure>\
         <system-out>out</system-out></testcase><system-err>err</system-err>",
    );
    assert_eq!(junit_schema::validate(&full), Ok(()));
}

#[test]
fn junit_has_a_suite_per_check_a_case_per_trace_and_the_gate() {
    let dir = out_dir("junit-fail");
    let xml_path = dir.join("junit.xml");
    let run = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        BAND,
        "--golden",
        GOLDEN,
        "--junit",
        s(&xml_path),
    ]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_valid_junit(&xml_path);
    let xml = text(&xml_path);
    let suites = suites(&xml);
    let names: Vec<&str> = suites
        .iter()
        .map(|t| t.split('"').nth(1).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "search_loop",
            "abstention",
            "policy",
            "repeated_call",
            "unrecovered_tool_error",
            "context_overflow",
            "wrong_answer",
            "truncation",
            "gate"
        ]
    );
    for tag in &suites[..8] {
        assert!(tag.contains(" tests=\"30\" "), "{tag}");
    }
    // Same counts as the audit's `fired` (tests/it/outputs.rs): search_loop fired on 18 traces.
    assert!(suites[0].contains(" failures=\"18\""), "{}", suites[0]);
    assert!(xml.contains(
        "<testcase name=\"51c15300072be9563b8dcdae613d3f7f\" classname=\"r-0221\">\n            <failure message=\"no answer, 24 steps (cap), 62% empty results\" type=\"search_loop\"/>"
    ));
    assert!(suites[8].contains(" tests=\"1\" ") && suites[8].contains(" failures=\"1\""));
    assert!(xml.contains(
        "<failure message=\"gate FAIL: clean rate 0.30 vs band [0.80, 0.87], fail below 0.70, p=0.000, 0 policy violation(s), 15 regression(s)\" type=\"gate\"/>"
    ));
    // Deterministic: a second run writes the same bytes.
    let again = dir.join("again.xml");
    faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        BAND,
        "--golden",
        GOLDEN,
        "--junit",
        s(&again),
    ]);
    assert_eq!(xml, text(&again));
}

#[test]
fn junit_gate_case_passes_when_the_gate_passes() {
    let dir = out_dir("junit-pass");
    let xml_path = dir.join("junit.xml");
    let run = faultgate(&["check", RUN2, "--band", BAND, "--junit", s(&xml_path)]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_valid_junit(&xml_path);
    let xml = text(&xml_path);
    let gate = *suites(&xml).last().unwrap();
    assert!(gate.contains("name=\"gate\"") && gate.contains(" failures=\"0\""));
    assert!(xml.contains("<system-out>gate PASS: clean rate 0.93 vs band [0.80, 0.87]"));
    // Two traces still fired search_loop: they are failures of that suite, not of the gate.
    assert!(suites(&xml)[0].contains(" failures=\"2\""));
}

#[test]
fn junit_and_html_are_redacted() {
    let dir = out_dir("redacted");
    let (xml, page) = (dir.join("r.xml"), dir.join("r.html"));
    let args = |extra: &[&'static str]| -> Vec<String> {
        let mut a: Vec<String> = ["check", PII, "--golden", PII_GOLDEN]
            .iter()
            .map(ToString::to_string)
            .collect();
        a.extend(extra.iter().map(ToString::to_string));
        a.extend([
            "--junit".into(),
            s(&xml).into(),
            "--html".into(),
            s(&page).into(),
        ]);
        a
    };
    let run = |a: Vec<String>| faultgate(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(run(args(&["--redact", "off"])).status.code(), Some(1));
    // Without redaction the raw values reach the reasons, so the fixture does exercise them ...
    let (raw_xml, raw_page) = (text(&xml), text(&page));
    for secret in SECRETS {
        assert!(raw_xml.contains(secret), "{secret} not in unredacted XML");
        assert!(raw_page.contains(secret), "{secret} not in unredacted HTML");
    }
    // ... and with the default redaction none of them is written.
    assert_eq!(run(args(&[])).status.code(), Some(1));
    assert_valid_junit(&xml);
    let (xml, page) = (text(&xml), text(&page));
    for secret in SECRETS {
        assert!(!xml.contains(secret), "{secret} in JUnit XML");
        assert!(!page.contains(secret), "{secret} in HTML");
    }
    assert!(xml.contains("card &lt;CREDIT_CARD&gt; declined"));
    assert!(page.contains("card &lt;CREDIT_CARD&gt; declined"));
}

/// Attribute and CSS forms through which a page would load something.
const LOADERS: [&str; 9] = [
    "src=", "href=", "url(", "@import", "<script", "<link", "<iframe", "<object", "srcset",
];

#[test]
fn html_is_self_contained_and_shows_the_run() {
    let dir = out_dir("html");
    let page_path = dir.join("report.html");
    let run = faultgate(&[
        "check",
        CANDIDATE,
        "--band",
        BAND,
        "--golden",
        GOLDEN,
        "--html",
        s(&page_path),
    ]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let page = text(&page_path);
    assert!(!page.contains("http://") && !page.contains("https://"));
    // Links inside the page (to a trace's steps) load nothing; any other href would.
    let in_page = page.matches("href=\"#t").count();
    assert!(in_page > 0);
    for loader in LOADERS {
        let allowed = if loader == "href=" { in_page } else { 0 };
        assert_eq!(
            page.matches(loader).count(),
            allowed,
            "the page contains {loader}"
        );
    }
    assert!(page.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\""));
    assert!(page.contains("<span class=\"v v-FAIL\" id=\"verdict\">FAIL</span>"));
    assert!(page.contains("21/30 traces failed"));
    // The chart: two baseline runs, the band, this run.
    assert_eq!(page.matches("<circle class=\"run\"").count(), 2);
    assert!(page.contains("<rect class=\"band\"") && page.contains("<rect class=\"candidate\""));
    // Checks by fired count, most first.
    let checks = &page[page.find("<table id=\"checks\">").unwrap()..];
    let first = checks.find("<tr><td>").unwrap();
    assert!(checks[first..].starts_with(
        "<tr><td>search_loop</td><td class=\"n\">18</td></tr>\n<tr><td>wrong_answer</td><td class=\"n\">3</td></tr>\n<tr><td>truncation</td><td class=\"n\">3</td></tr>\n<tr><td>abstention</td><td class=\"n\">0</td></tr>"
    ), "{}", &checks[..400]);
    // One filter per check that fired, and each failing row is tagged with its check's filter.
    assert!(page.contains("<label for=\"f0\">search_loop</label> <label for=\"f1\">wrong_answer</label> <label for=\"f2\">truncation</label></div>"));
    assert!(page.contains("#f0:checked~.scroll tr.row:not(.c0){display:none}"));
    assert!(page.contains(
        "<tr class=\"row c0\"><td>r-0221</td><td><a href=\"#t1\"><code>51c15300072be9563b8dcdae613d3f7f</code></a></td><td class=\"n\">24</td><td>search_loop</td><td><div class=\"reason\">no answer, 24 steps (cap), 62% empty results</div></td>"
    ));
    // Each failing trace's steps (tool, arguments and result) sit behind the link of its rows.
    assert!(page.contains("<h2>Steps of failing traces</h2>\n<details class=\"trace\" id=\"t0\">"));
    assert_eq!(page.matches("<details class=\"trace\"").count(), 21);
    let linked = &page[page.find("<details class=\"trace\" id=\"t1\">").unwrap()..];
    let linked = &linked[..linked.find("</details>").unwrap()];
    assert!(linked.contains(
        "<summary><code>51c15300072be9563b8dcdae613d3f7f</code> \u{b7} search_loop \u{b7} 24 steps</summary>"
    ), "{linked}");
    assert_eq!(linked.matches("<tr class=").count(), 24);
    assert!(linked.contains("<td class=\"n\">1</td><td>"), "{linked}");
    assert!(!page.contains(env!("CARGO_MANIFEST_DIR")));
}

#[test]
fn unwritable_outputs_exit_2() {
    let dir = out_dir("unwritable");
    let blocker = dir.join("file");
    std::fs::write(&blocker, b"x").unwrap();
    for flag in ["--junit", "--html"] {
        let target = blocker.join("out");
        let run = faultgate(&["check", CANDIDATE, flag, s(&target)]);
        assert_eq!(run.status.code(), Some(2), "{flag}: {run:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains("cannot write output"), "{stderr}");
    }
}

#[test]
fn html_marks_the_step_a_reason_names() {
    let dir = out_dir("html_steps");
    let (policy, page_path) = (dir.join("policy.json"), dir.join("report.html"));
    std::fs::write(&policy, br#"{"allow": ["search"]}"#).unwrap();
    let run = faultgate(&[
        "check",
        "examples/traces.json",
        "--check",
        "policy",
        "--policy",
        s(&policy),
        "--html",
        s(&page_path),
    ]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let page = text(&page_path);
    assert!(page.contains("step 10: tool &#39;lookup&#39; not in allowlist"));
    // Only the lookup call, step 10 of the one trace that made it, is marked.
    assert_eq!(page.matches("<tr class=\"hit\">").count(), 1);
    assert!(page.contains("<tr class=\"hit\"><td class=\"n\">10</td><td>lookup</td>"));
}
