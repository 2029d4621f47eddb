//! Policy tests: every validation message, and for every key a run that violates it next to a close
//! look-alike that must not fire. Expected reasons were taken from faultgate 0.4.1 runs on equivalent
//! OTLP traces.

use serde_json::{Map, Value, json};

use super::*;

/// A step owned by the test; `span_failed` marks a tool span with a span error.
#[derive(Clone)]
struct Step {
    tool: String,
    args: String,
    result: String,
    span_failed: bool,
    confirmed: bool,
}

fn st(tool: &str, args: impl Into<ArgsText>, result: &str) -> Step {
    Step {
        tool: tool.to_string(),
        args: args.into().0,
        result: result.to_string(),
        span_failed: false,
        confirmed: false,
    }
}

struct ArgsText(String);

impl From<&str> for ArgsText {
    fn from(s: &str) -> ArgsText {
        ArgsText(s.to_string())
    }
}

impl From<Value> for ArgsText {
    fn from(v: Value) -> ArgsText {
        ArgsText(v.to_string())
    }
}

struct Run {
    steps: Vec<Step>,
    root: Option<Map<String, Value>>,
    root_error: Option<&'static str>,
    end_ns: u64,
    answer: &'static str,
    termination: &'static str,
    defined_tools: Option<Vec<String>>,
}

fn run(steps: Vec<Step>) -> Run {
    Run {
        steps,
        root: Some(Map::new()),
        root_error: None,
        end_ns: 10,
        answer: "done",
        termination: "",
        defined_tools: None,
    }
}

fn with_root(steps: Vec<Step>, attrs: Value) -> Run {
    let mut r = run(steps);
    r.root = match attrs {
        Value::Object(map) => Some(map),
        _ => None,
    };
    r
}

impl Run {
    fn eval(&self, policy: &Policy) -> (bool, String) {
        let steps: Vec<PolicyStep> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                // Enough of docs/compatibility.md §10.4 for these tests: an `Error:` prefix is a
                // structural error.
                let structural_error = s.result.trim().starts_with("Error:");
                PolicyStep {
                    index: i + 1,
                    tool: &s.tool,
                    arguments: &s.args,
                    result: &s.result,
                    structural_error,
                    succeeded: !structural_error && !s.span_failed,
                    confirmed: s.confirmed,
                }
            })
            .collect();
        let view = PolicyRun {
            steps: &steps,
            root: self.root.as_ref().map(|attrs| PolicyRoot {
                attrs,
                span_error: self.root_error,
                end_ns: self.end_ns,
            }),
            answer: self.answer,
            termination: self.termination,
            defined_tools: self.defined_tools.as_deref(),
        };
        policy.evaluate(&view)
    }
}

fn policy(v: &Value) -> Policy {
    match Policy::from_json_text(&v.to_string()) {
        Ok(p) => p,
        Err(e) => panic!("policy {v} rejected: {e}"),
    }
}

/// The reason of a run under a policy.
fn reason(p: &Policy, r: &Run) -> String {
    r.eval(p).1
}

fn fires(p: &Policy, r: &Run) -> bool {
    r.eval(p).0
}

fn rejected(text: &str) -> String {
    match Policy::from_json_text(text) {
        Ok(_) => panic!("{text} was accepted"),
        Err(e) => e.to_string(),
    }
}

// ---------------------------------------------------------------- validation

#[test]
fn validation_messages_match_0_4_1() {
    let cases = [
        (
            r##"{"aaa": 1, "allow": [], "zzz": 2}"##,
            "policy: unknown keys ['aaa', 'zzz']",
        ),
        (
            r##"{"allowlist": ["a"]}"##,
            "policy: unknown keys ['allowlist']",
        ),
        (r##""allow""##, "policy: unknown keys ['a', 'l', 'o', 'w']"),
        ("[1, 2]", "policy: unknown keys [1, 2]"),
        (r##"{"limits": {}}"##, "policy: limits must be a list"),
        (r##"{"limits": null}"##, "policy: limits must be a list"),
        (
            r##"{"values": 5, "limits": 5}"##,
            "policy: limits must be a list",
        ),
        (
            r##"{"requires": 5, "limits": [{}]}"##,
            "policy: limits[0] needs 'arg' and 'tool'",
        ),
        (
            r##"{"limits": [{"tool": "t", "max": 1}]}"##,
            "policy: limits[0] needs 'arg'",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a"}]}"##,
            "policy: limits[0] needs 'min' or 'max'",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a", "min": 5.5, "max": 1}]}"##,
            "policy: limits[0] min 5.5 > max 1",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a", "max": "5"}]}"##,
            "policy: limits[0].max must be a finite number",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a", "max": NaN}]}"##,
            "policy: limits[0].max must be a finite number",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a", "min": -Infinity}]}"##,
            "policy: limits[0].min must be a finite number",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a", "max": true}]}"##,
            "policy: limits[0].max must be a finite number",
        ),
        (
            r##"{"limits": [{"tool": "t", "arg": "a", "max": 1, "unit": "$"}]}"##,
            "policy: limits[0] has unknown keys ['unit']",
        ),
        (
            r##"{"limits": [5]}"##,
            "policy: limits[0] must be an object",
        ),
        (
            r##"{"identity": {"session_attr": "x"}}"##,
            "policy: identity needs 'arg'",
        ),
        (
            r##"{"identity": {"arg": "a", "tools": "t"}}"##,
            "policy: identity.tools must be a list of tool names",
        ),
        (
            r##"{"require_complete": 5, "identity": 3}"##,
            "policy: identity must be an object",
        ),
        (
            r##"{"requires": [{"tool": "a"}]}"##,
            "policy: requires[0] needs 'after'",
        ),
        (
            r##"{"requires": [{"after": "b", "zz": 1, "yy": 2}]}"##,
            "policy: requires[0] needs 'tool'",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "zz": 1, "yy": 2}]}"##,
            "policy: requires[0] has unknown keys ['yy', 'zz']",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": []}]}"##,
            "policy: requires[0].after must be a tool name or a list of tool names",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": ["b", 1]}]}"##,
            "policy: requires[0].after must be a tool name or a list of tool names",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "same_arg": 1}]}"##,
            "policy: requires[0].same_arg must be a string",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result_contains": 1}]}"##,
            "policy: requires[0].result_contains must be a string",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "success": "yes"}]}"##,
            "policy: requires[0].success must be true or false",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "latest": 1}]}"##,
            "policy: requires[0].latest must be true or false",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "invalidated_by": "c"}]}"##,
            "policy: requires[0].invalidated_by must be a non-empty list of names",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "invalidated_by": []}]}"##,
            "policy: requires[0].invalidated_by must be a non-empty list of names",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": []}]}"##,
            "policy: requires[0].result must be a non-empty list of predicates",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": {"path": "x"}}]}"##,
            "policy: requires[0].result must be a non-empty list of predicates",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [5]}]}"##,
            "policy: requires[0].result[0] must be an object",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"equals": 1}]}]}"##,
            "policy: requires[0].result[0] needs a 'path' (a dotted path into the JSON result)",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "", "equals": 1}]}]}"##,
            "policy: requires[0].result[0] needs a 'path' (a dotted path into the JSON result)",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "x", "zz": 1, "in": [1]}]}]}"##,
            "policy: requires[0].result[0] has unknown keys ['zz']",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "x"}]}]}"##,
            "policy: requires[0].result[0] needs exactly one of equals, in, not_in, exists",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "x", "equals": 1, "in": [1]}]}]}"##,
            "policy: requires[0].result[0] needs exactly one of equals, in, not_in, exists",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "x", "in": "p"}]}]}"##,
            "policy: requires[0].result[0].in must be a list",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "x", "not_in": 1}]}]}"##,
            "policy: requires[0].result[0].not_in must be a list",
        ),
        (
            r##"{"requires": [{"tool": "a", "after": "b", "result": [{"path": "x", "exists": "yes"}]}]}"##,
            "policy: requires[0].result[0].exists must be true or false",
        ),
        (
            r##"{"max_calls_per_arg": [{"tools": ["a"], "arg": "o"}]}"##,
            "policy: max_calls_per_arg[0] needs 'max'",
        ),
        (
            r##"{"max_calls_per_arg": [{"tools": ["a"], "arg": "o", "max": 0}]}"##,
            "policy: max_calls_per_arg[0].max must be a whole number >= 1",
        ),
        (
            r##"{"max_calls_per_arg": [{"tools": ["a"], "arg": "o", "max": 1.5}]}"##,
            "policy: max_calls_per_arg[0].max must be a whole number >= 1",
        ),
        (
            r##"{"max_calls_per_arg": [{"tools": ["a"], "arg": "o", "max": true}]}"##,
            "policy: max_calls_per_arg[0].max must be a whole number >= 1",
        ),
        (
            r##"{"max_calls_per_arg": [{"tools": "a", "arg": "o", "max": 1}]}"##,
            "policy: max_calls_per_arg[0].tools must be a list of tool names",
        ),
        (
            r##"{"values": [{"tool": "a", "arg": "r"}]}"##,
            "policy: values[0] needs 'allowed'",
        ),
        (
            r##"{"values": [{"tool": "a", "arg": "r", "allowed": []}]}"##,
            "policy: values[0].allowed must be a list of strings",
        ),
        (
            r##"{"values": [{"tool": "a", "arg": "r", "allowed": "x"}]}"##,
            "policy: values[0].allowed must be a list of strings",
        ),
        (
            r##"{"confirmation": 3, "values": [3]}"##,
            "policy: values[0] must be an object",
        ),
        (
            r##"{"required_args": [{"tool": "a"}]}"##,
            "policy: required_args[0] needs 'args'",
        ),
        (
            r##"{"required_args": [{"tool": "a", "args": []}]}"##,
            "policy: required_args[0].args must be a non-empty list of names",
        ),
        (
            r##"{"required_args": [{"tool": "a", "args": "x"}]}"##,
            "policy: required_args[0].args must be a non-empty list of names",
        ),
        (
            r##"{"required_args": [{"tool": "a", "args": [""]}]}"##,
            "policy: required_args[0].args must be a non-empty list of names",
        ),
        (
            r##"{"confirmation": {"tools": ["a"]}}"##,
            "policy: confirmation needs 'by'",
        ),
        (
            r##"{"confirmation": {"tools": ["a"], "by": "c", "x": 1}}"##,
            "policy: confirmation has unknown keys ['x']",
        ),
        (
            r##"{"confirmation": [{"tools": ["a"], "by": "c"}]}"##,
            "policy: confirmation must be an object",
        ),
        (
            r##"{"require_complete": "yes"}"##,
            "policy: require_complete must be true or false",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(rejected(text), expected, "for {text}");
    }
}

#[test]
fn what_crashes_0_4_1_is_rejected_with_the_key_path() {
    let cases = [
        ("5", "policy: the policy file must hold a JSON object"),
        ("null", "policy: the policy file must hold a JSON object"),
        (
            r##"["allow"]"##,
            "policy: the policy file must hold a JSON object",
        ),
        (
            r##"[{"allow": []}]"##,
            "policy: the policy file must hold a JSON object",
        ),
        (
            r##"{"allow": null}"##,
            "policy: allow must be a list of tool names",
        ),
        (
            r##"{"allow": [["a"]]}"##,
            "policy: allow must be a list of tool names",
        ),
        (
            r##"{"deny_patterns": null}"##,
            "policy: deny_patterns must be a list of regular expressions",
        ),
        (
            r##"{"deny_patterns": ["ok", 5]}"##,
            "policy: deny_patterns[1] must be a string",
        ),
        (
            r##"{"max_calls": "5"}"##,
            "policy: max_calls must be a number",
        ),
        (
            r##"{"max_arg_chars": [1]}"##,
            "policy: max_arg_chars must be a number",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(rejected(text), expected, "for {text}");
    }
    let bad_regex = rejected(r##"{"deny_patterns": ["fine", "(unclosed"]}"##);
    assert!(
        bad_regex
            .starts_with("policy: deny_patterns[1] '(unclosed' is not a valid regular expression"),
        "{bad_regex}"
    );
    assert!(!bad_regex.contains('\n'));
}

#[test]
fn several_bad_keys_are_reported_in_file_order() {
    let text = r##"{"max_calls_per_arg": [{"max": 0, "tools": "t", "arg": 1}]}"##;
    for _ in 0..3 {
        assert_eq!(
            rejected(text),
            "policy: max_calls_per_arg[0].max must be a whole number >= 1"
        );
    }
}

#[test]
fn file_errors_use_python_os_error_text() {
    let missing = Policy::from_path(Path::new("./no-such-dir//p.json"));
    assert_eq!(
        missing.err().map(|e| e.to_string()).as_deref(),
        Some("[Errno 2] No such file or directory: 'no-such-dir/p.json'")
    );
    let broken = rejected("{\"allow\": [\"s\"],}");
    assert!(broken.starts_with("cannot parse policy: "), "{broken}");
}

#[test]
fn shipped_example_policies_load() {
    for text in [
        include_str!("../../examples/policy_retail.json"),
        include_str!("../../examples/policy_retail_v031.json"),
        include_str!("../../examples/policy_support.json"),
        include_str!("../../examples/gate/policy.json"),
    ] {
        assert!(Policy::from_json_text(text).is_ok());
    }
}

#[test]
fn key_summary_and_json_needs() {
    let retail = Policy::from_json_text(include_str!("../../examples/policy_retail.json")).unwrap();
    assert_eq!(
        retail.key_summary(),
        "allow, max_calls_per_arg, required_args, requires (after, invalidated_by, latest, result, same_arg, success, tool), values"
    );
    assert!(retail.needs_json_results());
    let v031 =
        Policy::from_json_text(include_str!("../../examples/policy_retail_v031.json")).unwrap();
    assert!(!v031.needs_json_results());
    assert_eq!(Policy::default().key_summary(), "(none)");
    assert_eq!(
        policy(&json!({"requires": [], "max_calls": 3})).key_summary(),
        "max_calls, requires"
    );
    assert!(
        policy(&json!({"requires": [{"tool": "a", "after": "b", "latest": true}]}))
            .needs_json_results()
    );
    assert!(
        !policy(&json!({"requires": [{"tool": "a", "after": "b", "latest": false}]}))
            .needs_json_results()
    );
}

// ---------------------------------------------------------------- allow, deny, sizes, call budget

fn faultline() -> Policy {
    Policy::from_json_text(include_str!("../../examples/gate/policy.json")).unwrap()
}

#[test]
fn default_policy_denies_traversal_and_files_only() {
    let p = Policy::default();
    let traversal = run(vec![st(
        "search",
        json!({"path": "../../etc/passwd"}),
        "ok",
    )]);
    assert_eq!(
        reason(&p, &traversal),
        r"step 1: search argument path matches denied pattern '\.\./'"
    );
    let file_url = run(vec![st("read", json!({"u": "FILE:///etc/shadow"}), "ok")]);
    assert_eq!(
        reason(&p, &file_url),
        "step 1: read argument u matches denied pattern 'file://'"
    );
    let shadow = run(vec![st("read", json!({"u": "/etc/shadow"}), "ok")]);
    assert_eq!(
        reason(&p, &shadow),
        "step 1: read argument u matches denied pattern '/etc/(passwd|shadow)'"
    );
    let anything_else = run(vec![st("anything", "x".repeat(400).as_str(), "ok"); 30]);
    assert_eq!(reason(&p, &anything_else), "30 calls within policy");
    let look_alike = run(vec![st(
        "search",
        json!({"q": "a ./b and /etc/passwords.. /"}),
        "ok",
    )]);
    assert!(!fires(&p, &look_alike));
}

/// A denial names the tool and the argument whose value matched, and shows the pattern as the policy
/// file writes it (no doubled backslashes); when no one argument holds the match, it names the tool.
#[test]
fn a_denial_names_the_tool_the_argument_and_the_pattern_as_written() {
    let p = policy(&json!({"deny_patterns": ["\\.\\./", "x\",\"b"]}));
    let r = run(vec![st(
        "shell",
        json!({"cwd": "/home", "cmd": "cat ../../etc/hosts", "n": 3}),
        "ok",
    )]);
    assert_eq!(
        reason(&p, &r),
        r"step 1: shell argument cmd matches denied pattern '\.\./'"
    );
    let not_object = run(vec![st("shell", "cat ../x", "ok")]);
    assert_eq!(
        reason(&p, &not_object),
        r"step 1: shell arguments match denied pattern '\.\./'"
    );
    // Patterns match the raw arguments, so a match may span two of them: no one argument is named.
    let across = run(vec![st("say", r#"{"a":"x","b":"y"}"#, "ok")]);
    assert_eq!(
        reason(&p, &across),
        r#"step 1: say arguments match denied pattern 'x","b'"#
    );
}

#[test]
fn long_and_short_pattern_lists_name_the_same_first_pattern() {
    // A short list is searched through a literal prefilter, a long one by the automaton alone; both
    // must name the first pattern in file order that matches, case-insensitively.
    let policy = |filler: usize| {
        let mut patterns: Vec<String> = (0..filler).map(|i| format!("never{i}x")).collect();
        patterns.extend(["Secret_[0-9]+".to_string(), "secret".to_string()]);
        Policy::from_json_text(&json!({ "deny_patterns": patterns }).to_string()).unwrap()
    };
    let (short, long) = (policy(3), policy(100));
    let leaked = run(vec![st(
        "send",
        json!({"body": "our SECRET_42 is out"}),
        "ok",
    )]);
    let mentioned = run(vec![st("send", json!({"body": "no secrets here"}), "ok")]);
    let clean = run(vec![st("send", json!({"body": "nothing to see"}), "ok")]);
    for p in [&short, &long] {
        assert_eq!(
            reason(p, &leaked),
            "step 1: send argument body matches denied pattern 'Secret_[0-9]+'"
        );
        assert_eq!(
            reason(p, &mentioned),
            "step 1: send argument body matches denied pattern 'secret'"
        );
        assert!(!fires(p, &clean));
    }
}

#[test]
fn faultline_policy_allow_size_and_budget() {
    let p = faultline();
    let unlisted = run(vec![
        st("search", json!({"q": "x"}), "ok"),
        st("shell", json!({"c": "ls"}), "ok"),
    ]);
    assert_eq!(
        reason(&p, &unlisted),
        "step 2: tool 'shell' not in allowlist"
    );
    let long = run(vec![st("search", json!({"q": "x".repeat(300)}), "ok")]);
    assert_eq!(reason(&p, &long), "step 1: arguments 308 chars > 200");
    let loop_ = run(vec![st("search", json!({"q": "x"}), "ok"); 13]);
    assert_eq!(reason(&p, &loop_), "13 tool calls > max 10");
    let within = run(vec![st("lookup", json!({"q": "x".repeat(190)}), "ok"); 10]);
    assert_eq!(reason(&p, &within), "10 calls within policy");
}

#[test]
fn bound_types_follow_python() {
    let two = run(vec![
        st("s", json!({"q": "x"}), "ok"),
        st("s", json!({"q": "y"}), "ok"),
    ]);
    assert_eq!(
        reason(&policy(&json!({"max_calls": 1.5})), &two),
        "2 tool calls > max 1.5"
    );
    assert!(!fires(
        &policy(&json!({"max_calls": null, "max_arg_chars": null})),
        &two
    ));
    assert!(!fires(&policy(&json!({"max_calls": NAN_AS_NULL})), &two));
}

#[test]
fn every_top_level_key_is_type_checked() {
    // 0.4.1 reads a string `allow` as its characters (flagging every call) and a boolean bound as 0/1;
    // those are type errors here.
    let cases = [
        (
            r#"{"allow": "search"}"#,
            "policy: allow must be a list of tool names",
        ),
        (
            r#"{"allow": {"search": 1}}"#,
            "policy: allow must be a list of tool names",
        ),
        (
            r#"{"allow": ["search", 1]}"#,
            "policy: allow must be a list of tool names",
        ),
        (
            r#"{"max_calls": true}"#,
            "policy: max_calls must be a number",
        ),
        (
            r#"{"max_arg_chars": false}"#,
            "policy: max_arg_chars must be a number",
        ),
        (
            r#"{"deny_patterns": "x"}"#,
            "policy: deny_patterns must be a list of regular expressions",
        ),
        (
            r#"{"deny_patterns": {"x": 1}}"#,
            "policy: deny_patterns must be a list of regular expressions",
        ),
        (r#"{"limits": {}}"#, "policy: limits must be a list"),
        (r#"{"requires": "x"}"#, "policy: requires must be a list"),
        (
            r#"{"require_complete": 1}"#,
            "policy: require_complete must be true or false",
        ),
        (
            r#"{"identity": "arg"}"#,
            "policy: identity must be an object",
        ),
        (
            r#"{"confirmation": []}"#,
            "policy: confirmation must be an object",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(rejected(text), expected, "for {text}");
    }
}

#[test]
fn a_non_finite_argument_is_quoted_as_python_prints_it() {
    let p = policy(&json!({"limits": [{"tool": "pay", "arg": "amount", "max": 10}]}));
    for (raw, shown) in [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")] {
        let args = format!(r#"{{"amount": {raw}}}"#);
        let r = run(vec![st("pay", args.as_str(), "ok")]);
        assert_eq!(
            reason(&p, &r),
            format!("step 1: pay.amount {shown} is not a number")
        );
    }
    let r = run(vec![st("pay", r#"{"amount": null}"#, "ok")]);
    assert_eq!(reason(&p, &r), "step 1: pay.amount None is not a number");
}

#[test]
fn many_deny_patterns_compile_as_one_automaton_or_are_refused() {
    // 20k literal patterns fit: one automaton, the first matching pattern in file order reported.
    let mut patterns: Vec<String> = (0..20_000).map(|i| format!("secret{i:05}")).collect();
    patterns.push("ret0001".into());
    let p = policy(&json!({ "deny_patterns": patterns }));
    let r = run(vec![st("t", json!({"q": "the SECRET00017 here"}), "ok")]);
    assert_eq!(
        reason(&p, &r),
        "step 1: t argument q matches denied pattern 'secret00017'"
    );
    let r = run(vec![st("t", json!({"q": "ret00019"}), "ok")]);
    assert_eq!(
        reason(&p, &r),
        "step 1: t argument q matches denied pattern 'ret0001'"
    );
    // Past the size limit the policy is refused by name, not compiled for minutes.
    let heavy: Vec<String> = (0..5_000).map(|i| format!(r"tok{i}\w+\d{{2,9}}")).collect();
    let text = serde_json::to_string(&json!({ "deny_patterns": heavy })).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    std::fs::write(&path, text).unwrap();
    let err = Policy::from_path(&path).unwrap_err().to_string();
    assert!(err.starts_with("policy "), "{err}");
    assert!(err.contains("big.json"), "{err}");
    assert!(err.contains("automaton limit"), "{err}");
}

/// `NaN` in a policy file reads as null, which never fires, as `n > nan` never holds in Python.
const NAN_AS_NULL: Value = Value::Null;

#[test]
fn custom_deny_patterns_replace_defaults_and_report_the_first_match() {
    let p = policy(&json!({"deny_patterns": ["rm -rf", "DROP\\s+TABLE", "rm"]}));
    let r = run(vec![
        st("sql", json!({"q": "drop   table users; rm -rf /"}), "ok"),
        st("read", json!({"p": "../x"}), "ok"),
    ]);
    assert_eq!(
        reason(&p, &r),
        "step 1: sql argument q matches denied pattern 'rm -rf'"
    );
}

// ---------------------------------------------------------------- limits

fn refund_limits() -> Policy {
    policy(&json!({"limits": [{"tool": "issue_refund", "arg": "amount", "min": 0, "max": 500}]}))
}

#[test]
fn limits_fire_on_out_of_range_and_non_numbers() {
    let p = refund_limits();
    let one = |amount: Value| run(vec![st("issue_refund", json!({"amount": amount}), "ok")]);
    assert_eq!(
        reason(&p, &one(json!(750))),
        "step 1: issue_refund.amount 750 > max 500"
    );
    assert_eq!(
        reason(&p, &one(json!(-1))),
        "step 1: issue_refund.amount -1 < min 0"
    );
    assert_eq!(
        reason(&p, &one(json!("$1,200.50"))),
        "step 1: issue_refund.amount 1200.5 > max 500"
    );
    assert_eq!(
        reason(&p, &one(json!("abc"))),
        "step 1: issue_refund.amount 'abc' is not a number"
    );
    assert_eq!(
        reason(&p, &one(json!(true))),
        "step 1: issue_refund.amount True is not a number"
    );
    assert_eq!(
        reason(&p, &one(Value::Null)),
        "step 1: issue_refund.amount None is not a number"
    );
    assert_eq!(
        reason(&p, &one(json!([1]))),
        "step 1: issue_refund.amount [1] is not a number"
    );
    for fine in [json!(500), json!(0), json!(" 499.99 "), json!("$-0")] {
        assert!(!fires(&p, &one(fine.clone())), "{fine}");
    }
}

#[test]
fn limits_read_paths_encodings_and_skip_what_is_absent() {
    let p = refund_limits();
    let absent = run(vec![
        st("issue_refund", json!({"order": 1}), "ok"),
        st("other", json!({"amount": 900}), "ok"),
    ]);
    assert!(!fires(&p, &absent));
    let nested = policy(&json!({"limits": [{"tool": "r", "arg": "refund.amount", "max": 1e6}]}));
    assert_eq!(
        reason(
            &nested,
            &run(vec![st("r", json!({"refund": {"amount": 1234567}}), "ok")])
        ),
        // 0.4.1 prints `1.23457e+06 > max 1e+06`; the `g` format itself is pinned in `compat::fmt`.
        format!(
            "step 1: r.refund.amount {} > max {}",
            crate::compat::reason::fmt_g(1234567.0),
            crate::compat::reason::fmt_g(1e6)
        )
    );
    assert!(!fires(
        &nested,
        &run(vec![st("r", json!({"refund": 5}), "ok")])
    ));
    let not_object = run(vec![st("issue_refund", "amount=900", "ok")]);
    assert_eq!(
        reason(&p, &not_object),
        "step 1: issue_refund arguments are not a JSON object, cannot check amount"
    );
    let doubled = |n: i64| {
        run(vec![st(
            "issue_refund",
            Value::String(json!({"amount": n}).to_string()),
            "ok",
        )])
    };
    assert!(fires(&p, &doubled(900)));
    assert!(!fires(&p, &doubled(9)));
    assert!(!fires(
        &p,
        &run(vec![
            st("issue_refund", "", "ok"),
            st("issue_refund", "  ", "ok")
        ])
    ));
}

#[test]
fn repeated_limit_entries_each_report() {
    let p = policy(&json!({"limits": [
        {"tool": "t", "arg": "a", "max": 1}, {"tool": "t", "arg": "a", "min": 0}
    ]}));
    assert_eq!(
        reason(&p, &run(vec![st("t", "nope", "ok")])),
        "step 1: t arguments are not a JSON object, cannot check a; step 1: t arguments are not a JSON object, cannot check a"
    );
}

// ---------------------------------------------------------------- identity

fn billing_identity() -> Policy {
    policy(&json!({"identity": {"arg": "customer_id", "tools": ["modify_billing_record"]}}))
}

#[test]
fn identity_compares_the_argument_with_the_session() {
    let p = billing_identity();
    let session = json!({"enduser.id": "C-123"});
    let mismatch = with_root(
        vec![
            st(
                "modify_billing_record",
                json!({"customer_id": "C-123"}),
                "ok",
            ),
            st(
                "modify_billing_record",
                json!({"customer_id": "C-999"}),
                "ok",
            ),
        ],
        session.clone(),
    );
    assert_eq!(
        reason(&p, &mismatch),
        "step 2: modify_billing_record.customer_id 'C-999' != session enduser.id 'C-123'"
    );
    let others = with_root(
        vec![
            st("lookup", json!({"customer_id": "C-999"}), "ok"),
            st("modify_billing_record", json!({"note": "x"}), "ok"),
        ],
        session,
    );
    assert!(!fires(&p, &others));
    let no_session = run(vec![st(
        "modify_billing_record",
        json!({"customer_id": "C-1"}),
        "ok",
    )]);
    assert_eq!(
        reason(&p, &no_session),
        "step 1: cannot verify customer_id, root span has no enduser.id"
    );
    let mut no_root = run(vec![st(
        "modify_billing_record",
        json!({"customer_id": "C-1"}),
        "ok",
    )]);
    no_root.root = None;
    assert_eq!(
        reason(&p, &no_root),
        "step 1: cannot verify customer_id, root span has no enduser.id"
    );
}

#[test]
fn identity_value_texts_and_custom_session_attr() {
    let p = policy(&json!({"identity": {"arg": "c", "session_attr": "sess"}}));
    let r = |arg: Value, sess: Value| {
        with_root(
            vec![st("x", json!({"c": arg}), "ok")],
            json!({"sess": sess}),
        )
    };
    assert_eq!(
        reason(&p, &r(json!(7), json!("8"))),
        "step 1: x.c '7' != session sess '8'"
    );
    assert!(!fires(&p, &r(json!(7), json!(" 7 "))));
    assert_eq!(
        reason(&p, &r(Value::Null, json!("C1"))),
        "step 1: x.c 'None' != session sess 'C1'"
    );
    assert_eq!(
        reason(&p, &r(json!({"k": 1}), json!("C1"))),
        "step 1: x.c \"{'k': 1}\" != session sess 'C1'"
    );
    let nested = policy(&json!({"identity": {"arg": "u.id", "session_attr": "sess"}}));
    let float_session = with_root(
        vec![st("x", json!({"u": {"id": 5}}), "ok")],
        json!({"sess": 5.0}),
    );
    assert_eq!(
        reason(&nested, &float_session),
        "step 1: x.u.id '5' != session sess '5.0'"
    );
    let empty = policy(&json!({"identity": {"arg": "q"}}));
    assert_eq!(
        reason(
            &empty,
            &with_root(
                vec![st("s", json!({"q": "x"}), "ok")],
                json!({"enduser.id": ""})
            )
        ),
        "step 1: s.q 'x' != session enduser.id ''"
    );
    let no_tools = policy(&json!({"identity": {"arg": "o", "tools": []}}));
    assert!(!fires(
        &no_tools,
        &run(vec![st("c", json!({"o": "1"}), "ok")])
    ));
}

#[test]
fn identity_on_unreadable_arguments() {
    let listed = billing_identity();
    assert_eq!(
        reason(
            &listed,
            &run(vec![st("modify_billing_record", "customer=C-9", "ok")])
        ),
        "step 1: modify_billing_record arguments are not a JSON object, cannot check customer_id"
    );
    let any_tool = policy(&json!({"identity": {"arg": "customer_id"}}));
    assert!(fires(
        &any_tool,
        &run(vec![st("t", "customer_id=C-9", "ok")])
    ));
    assert!(!fires(&any_tool, &run(vec![st("t", "customer=C-9", "ok")])));
    let nested = policy(&json!({"identity": {"arg": "a.o"}}));
    assert!(!fires(&nested, &run(vec![st("c", "[1]", "ok")])));
}

// ---------------------------------------------------------------- requires (plain)

#[test]
fn plain_requires_order_presence_and_substring() {
    let p = policy(&json!({"requires": [
        {"tool": "modify_billing_record", "after": "verify_customer_identity", "result_contains": "VERIFIED"}
    ]}));
    let first = run(vec![st("modify_billing_record", "{}", "ok")]);
    assert_eq!(
        reason(&p, &first),
        "step 1: modify_billing_record before verify_customer_identity returned 'VERIFIED'"
    );
    let unverified = run(vec![
        st("verify_customer_identity", "{}", "FAILED"),
        st("modify_billing_record", "{}", "ok"),
    ]);
    assert!(fires(&p, &unverified));
    let after = run(vec![
        st("modify_billing_record", "{}", "ok"),
        st("verify_customer_identity", "{}", "VERIFIED"),
    ]);
    assert!(fires(&p, &after));
    let good = run(vec![
        st("verify_customer_identity", "{}", "status VERIFIED"),
        st("modify_billing_record", "{}", "ok"),
    ]);
    assert!(!fires(&p, &good));
    let bare = policy(&json!({"requires": [{"tool": "b", "after": "a"}]}));
    assert_eq!(
        reason(&bare, &run(vec![st("b", "{}", "ok")])),
        "step 1: b before a"
    );
    let empty_needle =
        policy(&json!({"requires": [{"tool": "c", "after": "x", "result_contains": ""}]}));
    assert_eq!(
        reason(&empty_needle, &run(vec![st("c", "{}", "ok")])),
        "step 1: c before x returned ''"
    );
}

#[test]
fn plain_requires_alternatives_and_same_arg() {
    let alternatives = policy(&json!({"requires": [
        {"tool": "get_user_details", "after": ["find_user_id_by_email", "find_user_id_by_name_zip"]}
    ]}));
    assert_eq!(
        reason(
            &alternatives,
            &run(vec![st("get_user_details", "{}", "ok")])
        ),
        "step 1: get_user_details before find_user_id_by_email or find_user_id_by_name_zip"
    );
    for first in ["find_user_id_by_email", "find_user_id_by_name_zip"] {
        assert!(!fires(
            &alternatives,
            &run(vec![
                st(first, "{}", "u1"),
                st("get_user_details", "{}", "ok")
            ])
        ));
    }
    let v031 =
        Policy::from_json_text(include_str!("../../examples/policy_retail_v031.json")).unwrap();
    let other_order = run(vec![
        st("get_order_details", json!({"order_id": "mine"}), "pending"),
        st(
            "cancel_pending_order",
            json!({"order_id": "victim", "reason": "no longer needed"}),
            "ok",
        ),
    ]);
    assert_eq!(
        reason(&v031, &other_order),
        "step 2: cancel_pending_order before get_order_details returned 'pending' for the same order_id 'victim'"
    );
    let delivered = run(vec![
        st("get_order_details", json!({"order_id": "o"}), "delivered"),
        st(
            "cancel_pending_order",
            json!({"order_id": "o", "reason": "no longer needed"}),
            "ok",
        ),
    ]);
    assert!(fires(&v031, &delivered));
    let same = run(vec![
        st("get_order_details", json!({"order_id": 7}), "pending"),
        st(
            "cancel_pending_order",
            json!({"order_id": "7", "reason": "no longer needed"}),
            "ok",
        ),
    ]);
    assert!(!fires(&v031, &same));
    let missing = run(vec![st(
        "cancel_pending_order",
        json!({"reason": "no longer needed"}),
        "ok",
    )]);
    assert_eq!(
        reason(&v031, &missing),
        "step 1: cancel_pending_order has no readable order_id, cannot match it to get_order_details"
    );
}

// ---------------------------------------------------------------- requires (stateful)

const LOOKUP_PENDING: &str = r##"{"order_id": "#W1", "status": "pending"}"##;

fn order(id: &str) -> Value {
    json!({"order_id": id})
}

#[test]
fn success_requires_a_successful_prerequisite() {
    let p = policy(&json!({"requires": [{"tool": "modify_user_address",
        "after": ["find_user_id_by_email", "find_user_id_by_name_zip"], "success": true}]}));
    let failed = run(vec![
        st("find_user_id_by_email", "{}", "Error: no user"),
        st("modify_user_address", "{}", "ok"),
    ]);
    assert_eq!(
        reason(&p, &failed),
        "step 2: modify_user_address before a successful find_user_id_by_email or find_user_id_by_name_zip (step 1 find_user_id_by_email: failed)"
    );
    let mut span_error = run(vec![
        st("find_user_id_by_email", "{}", "u1"),
        st("modify_user_address", "{}", "ok"),
    ]);
    span_error.steps[0].span_failed = true;
    assert!(fires(&p, &span_error));
    let retried = run(vec![
        st("find_user_id_by_email", "{}", "Error: no user"),
        st("find_user_id_by_name_zip", "{}", "u1"),
        st("modify_user_address", "{}", "ok"),
    ]);
    assert!(!fires(&p, &retried));
    let lenient = policy(
        &json!({"requires": [{"tool": "modify_user_address", "after": "find_user_id_by_email"}]}),
    );
    assert!(!fires(&lenient, &failed));
}

#[test]
fn result_predicates_read_the_json_result() {
    let p = policy(
        &json!({"requires": [{"tool": "cancel_pending_order", "after": "get_order_details",
        "same_arg": "order_id", "result": [{"path": "status", "equals": "pending"}]}]}),
    );
    let cancel = || st("cancel_pending_order", order("#W1"), "ok");
    assert!(!fires(
        &p,
        &run(vec![
            st("get_order_details", order("#W1"), LOOKUP_PENDING),
            cancel()
        ])
    ));
    assert_eq!(
        reason(
            &p,
            &run(vec![
                st(
                    "get_order_details",
                    order("#W1"),
                    "Error: pending lookup failed"
                ),
                cancel()
            ])
        ),
        "step 2: cancel_pending_order before get_order_details with status == 'pending' for the same order_id '#W1' (step 1 get_order_details: result is not JSON)"
    );
    let note = r##"{"status": "delivered", "note": "was pending"}"##;
    assert_eq!(
        reason(
            &p,
            &run(vec![st("get_order_details", order("#W1"), note), cancel()])
        ),
        "step 2: cancel_pending_order before get_order_details with status == 'pending' for the same order_id '#W1' (step 1 get_order_details: status is 'delivered', not 'pending')"
    );
    let plain = policy(
        &json!({"requires": [{"tool": "cancel_pending_order", "after": "get_order_details", "result_contains": "pending"}]}),
    );
    assert!(!fires(
        &plain,
        &run(vec![st("get_order_details", order("#W1"), note), cancel()])
    ));
}

#[test]
fn predicate_operators() {
    let req = |pred: Value| {
        policy(&json!({"requires": [{"tool": "c", "after": ["g", "h"], "result": [pred]}]}))
    };
    let after = |result: &str| run(vec![st("g", "{}", result), st("c", "{}", "ok")]);
    let in_ = req(json!({"path": "status", "in": ["p", "q"]}));
    assert!(!fires(&in_, &after(r##"{"status": "q"}"##)));
    assert_eq!(
        reason(&in_, &after(r##"{"status": "x"}"##)),
        "step 2: c before g or h with status in ['p', 'q'] (step 1 g: status is 'x', not in ['p', 'q'])"
    );
    let bool_in = req(json!({"path": "b", "in": [1, "x"]}));
    assert_eq!(
        reason(&bool_in, &after(r##"{"b": true}"##)),
        "step 2: c before g or h with b in [1, 'x'] (step 1 g: b is True, not in [1, 'x'])"
    );
    let not_in = req(json!({"path": "b", "not_in": [1, "x"]}));
    assert!(!fires(&not_in, &after(r##"{"b": 2}"##)));
    assert_eq!(
        reason(&not_in, &after(r##"{"b": 1.0}"##)),
        "step 2: c before g or h with b not in [1, 'x'] (step 1 g: b is 1.0)"
    );
    assert_eq!(
        reason(&not_in, &after(r##"{"a": 1}"##)),
        "step 2: c before g or h with b not in [1, 'x'] (step 1 g: result has no b)"
    );
    let exists = req(json!({"path": "a.0", "exists": true}));
    assert!(!fires(&exists, &after(r##"{"a": [0]}"##)));
    assert_eq!(
        reason(&exists, &after(r##"{"a": []}"##)),
        "step 2: c before g or h with a.0 present (step 1 g: result has no a.0)"
    );
    let absent = req(json!({"path": "a", "exists": false}));
    assert_eq!(
        reason(&absent, &after(r##"{"a": null}"##)),
        "step 2: c before g or h with no a (step 1 g: result has a)"
    );
    assert_eq!(
        reason(&absent, &run(vec![st("c", "{}", "ok")])),
        "step 1: c before g or h with no a"
    );
    let typed = req(json!({"path": "items.0.available", "equals": true}));
    assert!(!fires(
        &typed,
        &after(r##"{"items": [{"available": true}]}"##)
    ));
    assert_eq!(
        reason(&typed, &after(r##"{"items": [{"available": 1}]}"##)),
        "step 2: c before g or h with items.0.available == True (step 1 g: items.0.available is 1, not True)"
    );
    let doubled = Value::String(r##"{"items": [{"available": true}]}"##.to_string()).to_string();
    assert!(!fires(&typed, &after(&doubled)));
    let nested = req(json!({"path": "b", "equals": [1]}));
    assert!(!fires(&nested, &after(r##"{"b": [true]}"##)));
}

#[test]
fn latest_looks_only_at_the_newest_lookup_of_the_same_value() {
    let p = policy(
        &json!({"requires": [{"tool": "cancel_pending_order", "after": "get_order_details",
        "same_arg": "order_id", "latest": true, "result": [{"path": "status", "equals": "pending"}]}]}),
    );
    let cancelled = r##"{"status": "cancelled"}"##;
    let newer = run(vec![
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        st("get_order_details", order("#W1"), cancelled),
        st("cancel_pending_order", order("#W1"), "ok"),
    ]);
    assert_eq!(
        reason(&p, &newer),
        "step 3: cancel_pending_order before get_order_details with status == 'pending' for the same order_id '#W1' (latest get_order_details at step 2: status is 'cancelled', not 'pending')"
    );
    let without_latest = policy(
        &json!({"requires": [{"tool": "cancel_pending_order", "after": "get_order_details",
        "same_arg": "order_id", "result": [{"path": "status", "equals": "pending"}]}]}),
    );
    assert!(!fires(&without_latest, &newer));
    let other_order = run(vec![
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        st("get_order_details", order("#W2"), cancelled),
        st("cancel_pending_order", order("#W1"), "ok"),
    ]);
    assert!(!fires(&p, &other_order));
    let s_eq = policy(
        &json!({"requires": [{"tool": "c", "after": "g", "latest": true, "result": [{"path": "s", "equals": 1}]}]}),
    );
    let r = run(vec![
        st("g", "{}", r##"{"s": 1}"##),
        st("c", "{}", "ok"),
        st("g", "{}", r##"{"s": 2}"##),
        st("c", "{}", "ok"),
    ]);
    assert_eq!(
        reason(&s_eq, &r),
        "step 4: c before g with s == 1 (latest g at step 3: s is 2, not 1)"
    );
}

#[test]
fn invalidated_by_voids_earlier_lookups() {
    let p = policy(
        &json!({"requires": [{"tool": "modify_pending_order_items", "after": "get_order_details",
        "same_arg": "order_id", "result": [{"path": "status", "equals": "pending"}],
        "invalidated_by": ["cancel_pending_order"]}]}),
    );
    let modify = || st("modify_pending_order_items", order("#W1"), "ok");
    let voided = run(vec![
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        st("cancel_pending_order", order("#W1"), "ok"),
        modify(),
    ]);
    assert_eq!(
        reason(&p, &voided),
        "step 3: modify_pending_order_items before get_order_details with status == 'pending' for the same order_id '#W1' (get_order_details at step 1 voided by cancel_pending_order at step 2)"
    );
    let fresh = run(vec![
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        st("cancel_pending_order", order("#W1"), "ok"),
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        modify(),
    ]);
    assert!(!fires(&p, &fresh));
    let failed_cancel = run(vec![
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        st("cancel_pending_order", order("#W1"), "Error: not allowed"),
        modify(),
    ]);
    assert!(!fires(&p, &failed_cancel));
    let other_cancel = run(vec![
        st("get_order_details", order("#W1"), LOOKUP_PENDING),
        st("cancel_pending_order", order("#W2"), "ok"),
        modify(),
    ]);
    assert!(!fires(&p, &other_cancel));
    let success = policy(
        &json!({"requires": [{"tool": "c", "after": "g", "success": true, "invalidated_by": ["c"]}]}),
    );
    let twice = run(vec![
        st("g", "{}", "ok"),
        st("c", "{}", "ok"),
        st("c", "{}", "ok"),
    ]);
    assert_eq!(
        reason(&success, &twice),
        "step 3: c before a successful g (g at step 1 voided by c at step 2)"
    );
}

#[test]
fn a_step_that_is_both_prerequisite_and_invalidation_is_neither_stale_nor_fresh() {
    let p = policy(
        &json!({"requires": [{"tool": "c", "after": "g", "same_arg": "o", "invalidated_by": ["g"]}]}),
    );
    let two = run(vec![
        st("g", json!({"o": "1"}), "ok"),
        st("g", json!({"o": "1"}), "ok"),
        st("c", json!({"o": "1"}), "ok"),
    ]);
    assert_eq!(
        reason(&p, &two),
        "step 3: c before g for the same o '1' (g at step 1 voided by g at step 2)"
    );
    let one = run(vec![
        st("g", json!({"o": "1"}), "ok"),
        st("c", json!({"o": "1"}), "ok"),
    ]);
    assert_eq!(reason(&p, &one), "step 2: c before g for the same o '1'");
}

#[test]
fn all_stateful_parts_in_one_condition() {
    let p = policy(
        &json!({"requires": [{"tool": "c", "after": ["g", "h"], "success": true, "latest": true,
        "result_contains": "o", "result": [{"path": "a.0", "exists": true}, {"path": "b", "not_in": [1, "x"]}],
        "same_arg": "o"}]}),
    );
    let r = run(vec![
        st("g", json!({"o": "1"}), "ok"),
        st("g", json!({"o": "1"}), "Error: x"),
        st("c", json!({"o": "1"}), "ok"),
    ]);
    assert_eq!(
        reason(&p, &r),
        "step 3: c before a successful g or h returned 'o' with a.0 present and b not in [1, 'x'] for the same o '1' (latest g at step 2: failed)"
    );
}

/// A retail run of `orders` order updates, each after its own `get_order_details`: the
/// `policy_retail.json` requirements bind every update to an earlier lookup of the same order, with a
/// result predicate, so a pass that rescans earlier steps per call does work quadratic in `orders`.
fn retail_run(orders: usize) -> Run {
    let mut steps = vec![st("find_user_id_by_email", "{}", r##"{"user_id": "u"}"##)];
    for k in 0..orders {
        let id = format!("#W{k}");
        steps.push(st(
            "get_order_details",
            order(&id),
            &format!(r##"{{"status": "pending", "order_id": "{id}"}}"##),
        ));
        steps.push(st(
            "modify_pending_order_address",
            json!({"order_id": id, "address1": "a", "city": "c", "state": "s", "country": "x", "zip": "1"}),
            "ok",
        ));
    }
    run(steps)
}

/// Step reads (argument and result reads, prerequisite judgements) of one evaluation.
fn step_reads(p: &Policy, r: &Run) -> (u64, String) {
    eval::STEP_READS.with(|n| n.set(0));
    let reason = reason(p, r);
    (eval::STEP_READS.with(std::cell::Cell::get), reason)
}

#[test]
fn stateful_requires_stay_linear_on_long_runs() {
    let p = Policy::from_json_text(include_str!("../../examples/policy_retail.json")).unwrap();
    let (small, small_reason) = step_reads(&p, &retail_run(300));
    let (large, large_reason) = step_reads(&p, &retail_run(3000));
    assert_eq!(small_reason, "601 calls within policy");
    assert_eq!(large_reason, "6001 calls within policy");
    // Every step is read at least once, so the counter sees the work; ten times the steps must cost
    // about ten times the reads (a rescan of earlier steps would cost about a hundred times).
    assert!(small >= 601, "{small} reads for 601 steps");
    assert!(
        large <= small * 11,
        "10x the steps took {large} step reads against {small}: not linear"
    );
}

// ---------------------------------------------------------------- per-value budget, values, required args

#[test]
fn max_calls_per_arg_counts_successful_calls_per_value() {
    let p = policy(&json!({"max_calls_per_arg": [
        {"tools": ["modify_items", "exchange", "exchange"], "arg": "order_id", "max": 1}]}));
    let twice = run(vec![
        st("exchange", order("#W1"), "ok"),
        st("modify_items", order("#W2"), "ok"),
        st("modify_items", order("#W1"), "ok"),
        st("modify_items", order("#W1"), "ok"),
    ]);
    assert_eq!(
        reason(&p, &twice),
        "step 3: 2 successful exchange/modify_items calls for order_id '#W1' > max 1 (steps 1, 3)"
    );
    let failed = run(vec![
        st("exchange", order("#W1"), "Error: nope"),
        st("modify_items", order("#W1"), "ok"),
    ]);
    assert!(!fires(&p, &failed));
    let unreadable = run(vec![
        st("exchange", "order #W1", "ok"),
        st("exchange", json!({}), "ok"),
    ]);
    assert_eq!(
        reason(&p, &unreadable),
        "step 1: exchange has no readable order_id, cannot count it against max 1 per order_id; step 2: exchange has no readable order_id, cannot count it against max 1 per order_id"
    );
    let two = policy(&json!({"max_calls_per_arg": [{"tools": ["e", "m"], "arg": "o", "max": 2}]}));
    let three = run(vec![
        st("e", json!({"o": 1}), "ok"),
        st("m", json!({"o": "1"}), "ok"),
        st("e", json!({"o": "1"}), "ok"),
    ]);
    assert_eq!(
        reason(&two, &three),
        "step 3: 3 successful e/m calls for o '1' > max 2 (steps 1, 2, 3)"
    );
}

#[test]
fn values_accept_only_listed_texts() {
    let p = policy(
        &json!({"values": [{"tool": "cancel_pending_order", "arg": "reason",
        "allowed": ["no longer needed", "ordered by mistake"]}]}),
    );
    let with = |reason_: Value| {
        run(vec![st(
            "cancel_pending_order",
            json!({"reason": reason_}),
            "ok",
        )])
    };
    assert!(!fires(&p, &with(json!("no longer needed"))));
    assert!(!fires(
        &p,
        &run(vec![st("cancel_pending_order", "{}", "ok")])
    ));
    assert_eq!(
        reason(&p, &with(json!("invalid reason"))),
        "step 1: cancel_pending_order.reason 'invalid reason' not in allowed values"
    );
    assert!(fires(&p, &with(json!("No longer needed"))));
    assert_eq!(
        reason(
            &p,
            &run(vec![st("cancel_pending_order", "cancel it", "ok")])
        ),
        "step 1: cancel_pending_order arguments are not a JSON object, cannot check reason"
    );
}

#[test]
fn required_args_reject_empty_values() {
    let p = policy(
        &json!({"required_args": [{"tool": "cancel_pending_order", "args": ["order_id", "reason"]},
        {"tool": "ship", "args": ["order.id"]}]}),
    );
    let cancel = |args: Value| run(vec![st("cancel_pending_order", args, "ok")]);
    assert_eq!(
        reason(&p, &cancel(json!({"order_id": "#W1"}))),
        "step 1: cancel_pending_order missing required argument reason"
    );
    assert_eq!(
        reason(&p, &cancel(json!({"order_id": "#W1", "reason": "  "}))),
        "step 1: cancel_pending_order missing required argument reason"
    );
    assert_eq!(
        reason(&p, &cancel(json!({"order_id": "", "reason": null}))),
        "step 1: cancel_pending_order missing required argument order_id; step 1: cancel_pending_order missing required argument reason"
    );
    assert!(!fires(&p, &cancel(json!({"order_id": 0, "reason": false}))));
    assert_eq!(
        reason(&p, &run(vec![st("ship", json!({"order": {}}), "ok")])),
        "step 1: ship missing required argument order.id"
    );
    assert!(!fires(
        &p,
        &run(vec![
            st("ship", json!({"order": {"id": 1}}), "ok"),
            st("other", "{}", "ok")
        ])
    ));
    assert_eq!(
        reason(&p, &cancel(json!("#W1"))),
        "step 1: cancel_pending_order arguments are not a JSON object, cannot check required order_id"
    );
}

// ---------------------------------------------------------------- confirmation, completeness

#[test]
fn confirmation_needs_an_earlier_successful_confirm_for_the_same_record() {
    let p = policy(
        &json!({"confirmation": {"tools": ["cancel_pending_order"], "by": "confirm_action", "same_arg": "order_id"}}),
    );
    let cancel = || st("cancel_pending_order", order("#W1"), "ok");
    let unconfirmed = run(vec![st("get_order_details", order("#W1"), "ok"), cancel()]);
    assert_eq!(
        reason(&p, &unconfirmed),
        "step 2: cancel_pending_order without an earlier successful confirm_action for the same order_id '#W1' (or faultgate.confirmed = true on its span)"
    );
    assert!(!fires(
        &p,
        &run(vec![st("confirm_action", order("#W1"), "yes"), cancel()])
    ));
    assert!(fires(
        &p,
        &run(vec![st("confirm_action", order("#W2"), "yes"), cancel()])
    ));
    assert!(fires(
        &p,
        &run(vec![
            st("confirm_action", order("#W1"), "Error: denied"),
            cancel()
        ])
    ));
    assert!(fires(
        &p,
        &run(vec![cancel(), st("confirm_action", order("#W1"), "yes")])
    ));
    let mut flagged = cancel();
    flagged.confirmed = true;
    assert!(!fires(&p, &run(vec![flagged])));
    assert!(!fires(
        &p,
        &run(vec![st("get_order_details", order("#W1"), "ok")])
    ));
    assert_eq!(
        reason(&p, &run(vec![st("cancel_pending_order", "{}", "ok")])),
        "step 1: cancel_pending_order has no readable order_id, cannot match it to a confirm_action"
    );
    let any = policy(
        &json!({"confirmation": {"tools": ["cancel_pending_order"], "by": "confirm_action"}}),
    );
    assert!(!fires(
        &any,
        &run(vec![st("confirm_action", order("#W2"), "yes"), cancel()])
    ));
}

#[test]
fn require_complete_reports_every_gap_of_the_run() {
    let p = policy(&json!({"require_complete": true}));
    let mut broken = run(vec![]);
    broken.answer = "  ";
    broken.termination = "TimeOut";
    broken.root_error = Some("Span status error: Code 2");
    broken.end_ns = 0;
    assert_eq!(
        reason(&p, &broken),
        "run incomplete: no final answer; run incomplete: terminated 'TimeOut'; run incomplete: root span error (Span status error: Code 2); run incomplete: root span has no end time"
    );
    let mut errored = run(vec![]);
    errored.termination = "too_many_errors";
    errored.root_error = Some("Span error: ValueError");
    assert_eq!(
        reason(&p, &errored),
        "run incomplete: terminated 'too_many_errors'; run incomplete: root span error (Span error: ValueError)"
    );
    let mut rootless = run(vec![]);
    rootless.root = None;
    rootless.answer = "";
    assert_eq!(reason(&p, &rootless), "run incomplete: no root span");
    let mut stopped = run(vec![]);
    stopped.termination = "user_stop";
    assert_eq!(reason(&p, &stopped), "0 calls within policy");
    for t in [
        "max_steps",
        "Max Steps",
        "step limit hit",
        "crashed",
        "aborted",
        "timed out",
    ] {
        let mut r = run(vec![]);
        r.termination = t;
        assert!(fires(&p, &r), "{t}");
    }
    assert!(!fires(&Policy::default(), &broken));
}

#[test]
fn messages_of_one_step_come_in_key_order() {
    let p = policy(
        &json!({"requires": [{"tool": "c", "after": ["g", "h"], "same_arg": "o"}],
        "limits": [{"tool": "c", "arg": "o", "max": 1}], "values": [{"tool": "c", "arg": "o", "allowed": ["1"]}],
        "required_args": [{"tool": "c", "args": ["x", "y"]}],
        "confirmation": {"tools": ["c"], "by": "k", "same_arg": "o"}, "identity": {"arg": "o"}}),
    );
    assert_eq!(
        reason(&p, &run(vec![st("c", "nope", "ok")])),
        "step 1: c arguments are not a JSON object, cannot check o; step 1: c arguments are not a JSON object, cannot check o; step 1: c arguments are not a JSON object, cannot check o; step 1: c has no readable o, cannot match it to g or h; step 1: c arguments are not a JSON object, cannot check required x; step 1: c has no readable o, cannot match it to a k"
    );
}

// ---------------------------------------------------------------- the six retail gaps of 0.4

fn retail_full() -> Policy {
    let mut doc: Value =
        serde_json::from_str(include_str!("../../examples/policy_retail.json")).unwrap();
    doc["confirmation"] = json!({"tools": ["cancel_pending_order", "modify_pending_order_items"],
        "by": "confirm_action", "same_arg": "order_id"});
    doc["require_complete"] = json!(true);
    if let Some(allow) = doc["allow"].as_array_mut() {
        allow.push(json!("confirm_action"));
    }
    policy(&doc)
}

fn retail_gaps() -> Vec<(&'static str, Vec<Step>)> {
    let find = || {
        st(
            "find_user_id_by_email",
            json!({"email": "a@b.c"}),
            r##"{"user_id": "u1"}"##,
        )
    };
    let lookup = || st("get_order_details", order("#W1"), LOOKUP_PENDING);
    let confirm = || st("confirm_action", order("#W1"), "confirmed");
    let done = r##"{"order_id": "#W1", "status": "cancelled"}"##;
    let cancel = || {
        st(
            "cancel_pending_order",
            json!({"order_id": "#W1", "reason": "no longer needed"}),
            done,
        )
    };
    let mut confirmed_cancel = st(
        "cancel_pending_order",
        json!({"order_id": "#W1", "reason": "ordered by mistake"}),
        done,
    );
    confirmed_cancel.confirmed = true;
    vec![
        (
            "G1",
            vec![
                st(
                    "find_user_id_by_email",
                    json!({"email": "a@b.c"}),
                    "Error: user not found",
                ),
                lookup(),
                confirm(),
                cancel(),
            ],
        ),
        (
            "G2",
            vec![
                find(),
                lookup(),
                st(
                    "get_order_details",
                    order("#W1"),
                    "Error: order #W1 is no longer pending",
                ),
                confirm(),
                cancel(),
            ],
        ),
        (
            "G3",
            vec![
                find(),
                lookup(),
                confirm(),
                st(
                    "modify_pending_order_items",
                    json!({"order_id": "#W1", "item_ids": ["1"], "new_item_ids": ["2"]}),
                    LOOKUP_PENDING,
                ),
                confirm(),
                cancel(),
            ],
        ),
        (
            "G4",
            vec![
                find(),
                st(
                    "get_order_details",
                    order("#W1"),
                    r##"{"order_id": "#W1", "status": "delivered", "note": "was pending until May"}"##,
                ),
                confirm(),
                cancel(),
            ],
        ),
        (
            "G5",
            vec![
                find(),
                lookup(),
                confirm(),
                st("cancel_pending_order", order("#W1"), done),
            ],
        ),
        ("G6", vec![find(), lookup(), cancel()]),
        ("ok", vec![find(), lookup(), confirm(), cancel()]),
        (
            "ok-retry",
            vec![
                st(
                    "find_user_id_by_email",
                    json!({"email": "a@b.c"}),
                    "Error: timeout",
                ),
                st(
                    "find_user_id_by_name_zip",
                    json!({"first_name": "A", "zip": "1"}),
                    r##"{"user_id": "u1"}"##,
                ),
                lookup(),
                confirm(),
                cancel(),
            ],
        ),
        ("ok-confirmed", vec![find(), lookup(), confirmed_cancel]),
    ]
}

#[test]
fn retail_gaps_fire_under_the_0_4_policy_and_look_alikes_pass() {
    let p = retail_full();
    let expected = [
        (
            "G1",
            "step 4: cancel_pending_order before a successful find_user_id_by_email or find_user_id_by_name_zip (step 1 find_user_id_by_email: failed)",
        ),
        (
            "G2",
            "step 5: cancel_pending_order before a successful get_order_details with status == 'pending' for the same order_id '#W1' (latest get_order_details at step 3: failed)",
        ),
        (
            "G3",
            "step 6: cancel_pending_order before a successful get_order_details with status == 'pending' for the same order_id '#W1' (get_order_details at step 2 voided by modify_pending_order_items at step 4)",
        ),
        (
            "G4",
            "step 4: cancel_pending_order before a successful get_order_details with status == 'pending' for the same order_id '#W1' (latest get_order_details at step 2: status is 'delivered', not 'pending')",
        ),
        (
            "G5",
            "step 4: cancel_pending_order missing required argument reason",
        ),
        (
            "G6",
            "step 3: cancel_pending_order without an earlier successful confirm_action for the same order_id '#W1' (or faultgate.confirmed = true on its span)",
        ),
        ("ok", "4 calls within policy"),
        ("ok-retry", "5 calls within policy"),
        ("ok-confirmed", "3 calls within policy"),
    ];
    for ((name, steps), (expected_name, expected_reason)) in retail_gaps().into_iter().zip(expected)
    {
        assert_eq!(name, expected_name);
        assert_eq!(reason(&p, &run(steps)), expected_reason, "{name}");
    }
}

#[test]
fn retail_gaps_pass_the_0_3_1_policy_apart_from_its_allowlist() {
    let mut doc: Value =
        serde_json::from_str(include_str!("../../examples/policy_retail_v031.json")).unwrap();
    if let Some(allow) = doc["allow"].as_array_mut() {
        allow.push(json!("confirm_action"));
    }
    let p = policy(&doc);
    for (name, steps) in retail_gaps() {
        assert!(!fires(&p, &run(steps)), "{name}");
    }
}

// ---------------------------------------------------------------- the support example

#[test]
fn support_policy_on_a_support_run() {
    let p = Policy::from_json_text(include_str!("../../examples/policy_support.json")).unwrap();
    let session = json!({"enduser.id": "C-123"});
    let flow = |refund: Value, verified: &str| {
        with_root(
            vec![
                st("lookup_order", json!({"order_id": "o1"}), "found"),
                st(
                    "verify_customer_identity",
                    json!({"customer_id": "C-123"}),
                    verified,
                ),
                st("issue_refund", refund, "refunded"),
            ],
            session.clone(),
        )
    };
    assert!(!fires(
        &p,
        &flow(json!({"customer_id": "C-123", "amount": 40}), "VERIFIED")
    ));
    assert_eq!(
        reason(
            &p,
            &flow(json!({"customer_id": "C-123", "amount": 900}), "VERIFIED")
        ),
        "step 3: issue_refund.amount 900 > max 500"
    );
    assert_eq!(
        reason(
            &p,
            &flow(json!({"customer_id": "C-999", "amount": 40}), "VERIFIED")
        ),
        "step 3: issue_refund.customer_id 'C-999' != session enduser.id 'C-123'"
    );
    let skipped = with_root(
        vec![
            st("lookup_order", json!({"order_id": "o1"}), "found"),
            st(
                "verify_customer_identity",
                json!({"customer_id": "C-123"}),
                "DENIED",
            ),
            st(
                "modify_billing_record",
                json!({"customer_id": "C-123"}),
                "ok",
            ),
        ],
        session,
    );
    assert_eq!(
        reason(&p, &skipped),
        "step 3: modify_billing_record before verify_customer_identity returned 'VERIFIED'"
    );
}

// ---------------------------------------------------------------- require_defined_tools

#[test]
fn require_defined_tools_flags_a_call_to_a_tool_the_agent_was_not_given() {
    let p = policy(&json!({"require_defined_tools": true}));
    let mut r = run(vec![
        st("search", "{}", "ok"),
        st("delete_account", "{}", "ok"),
        st("search", "{}", "ok"),
    ]);
    r.defined_tools = Some(vec!["lookup".into(), "search".into()]);
    assert_eq!(
        reason(&p, &r),
        "step 2: tool 'delete_account' was not given to the agent (gen_ai.tool.definitions)"
    );
    // Given every tool it called, the run is within policy.
    r.defined_tools = Some(vec!["delete_account".into(), "search".into()]);
    assert!(!fires(&p, &r));
    // A run that records no definitions cannot be judged by the rule.
    r.defined_tools = None;
    assert_eq!(reason(&p, &r), "3 calls within policy");
    // Off (the default), definitions are not read.
    r.defined_tools = Some(Vec::new());
    assert!(!fires(&policy(&json!({})), &r));
    assert!(fires(&p, &r));
    assert_eq!(
        rejected(r#"{"require_defined_tools": "yes"}"#),
        "policy: require_defined_tools must be true or false"
    );
}
