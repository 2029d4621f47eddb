//! Run summaries matching the shipped gate examples, for tests that compare with 0.4.1's output.
//!
//! Which scenarios fail and the latency of each trace come from 0.4.1's JSON reports of
//! `examples/gate/*.json` with the default checks.

use super::RunSummary;

pub(crate) const GLM_KEYS: [&str; 30] = [
    "r-0204", "r-0205", "r-0208", "r-0214", "r-0216", "r-0221", "r-0224", "r-0226", "r-0232",
    "r-0242", "r-0258", "r-0263", "r-0274", "r-0277", "r-0279", "r-0286", "r-0292", "r-0300",
    "r-0307", "r-0317", "r-0318", "r-0320", "r-0322", "r-0324", "r-0330", "r-0332", "r-0336",
    "r-0344", "r-0349", "r-0350",
];

pub(crate) fn default_checks() -> Vec<String> {
    [
        "search_loop",
        "abstention",
        "policy",
        "repeated_call",
        "unrecovered_tool_error",
        "context_overflow",
    ]
    .map(String::from)
    .to_vec()
}

fn summary(dirty: &[&str], latency_ms: &[f64]) -> RunSummary {
    RunSummary {
        judge: "none".into(),
        checks: default_checks(),
        trace_count: GLM_KEYS.len(),
        scenario_clean: GLM_KEYS
            .iter()
            .map(|k| (k.to_string(), !dirty.contains(k)))
            .collect(),
        policy_violations: Vec::new(),
        workflow_violations: None,
        usage: [Vec::new(), latency_ms.to_vec(), Vec::new()],
    }
}

pub(crate) fn glm_run1() -> RunSummary {
    summary(
        &["r-0336", "r-0300"],
        &[
            24100.0, 19100.0, 21100.0, 19100.0, 15100.0, 24100.0, 15100.0, 15100.0, 17100.0,
            12100.0, 19100.0, 15100.0, 20100.0, 15100.0, 12100.0, 16100.0, 21100.0, 14100.0,
            15100.0, 12100.0, 15100.0, 21100.0, 16100.0, 11100.0, 19100.0, 19100.0, 22100.0,
            12100.0, 14100.0, 16100.0,
        ],
    )
}

pub(crate) fn glm_run2() -> RunSummary {
    summary(
        &["r-0221", "r-0277"],
        &[
            13100.0, 24100.0, 12100.0, 15100.0, 17100.0, 17100.0, 14100.0, 15100.0, 15100.0,
            13100.0, 15100.0, 14100.0, 17100.0, 16100.0, 15100.0, 16100.0, 17100.0, 16100.0,
            16100.0, 17100.0, 17100.0, 17100.0, 16100.0, 17100.0, 12100.0, 12100.0, 17100.0,
            16100.0, 16100.0, 24100.0,
        ],
    )
}

pub(crate) fn candidate_gpt() -> RunSummary {
    summary(
        &[
            "r-0221", "r-0286", "r-0232", "r-0216", "r-0292", "r-0214", "r-0263", "r-0344",
            "r-0320", "r-0350", "r-0224", "r-0279", "r-0330", "r-0226", "r-0258", "r-0322",
            "r-0317", "r-0208",
        ],
        &[
            17100.0, 24100.0, 22100.0, 24100.0, 24100.0, 16100.0, 24100.0, 24100.0, 24100.0,
            24100.0, 21100.0, 24100.0, 24100.0, 23100.0, 21100.0, 24100.0, 24100.0, 5100.0,
            20100.0, 24100.0, 24100.0, 24100.0, 24100.0, 16100.0, 24100.0, 24100.0, 24100.0,
            24100.0, 22100.0, 15100.0,
        ],
    )
}
