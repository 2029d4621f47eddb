//! The `--json` report.
//!
//! ## Wire format
//!
//! One object, keys in this order: `judge`, `checks` (active names, duplicates kept), `redaction`, `traces`
//! (distinct ids), `failed_traces` (ids), `fired` (name → count), `measures` (trace id → `tokens`,
//! `latency_ms`, `cost_usd`, each a float or null), `results` (one object per trace and check: `trace_id`,
//! `scenario`, `check`, `detected`, `confidence` rounded to 4 places, `reason`), then `outcome` and `gate`
//! when present. Written with one-space indentation and ASCII escapes, as faultgate 0.4.1 writes it.

use serde_json::{Map, Value, json};

use super::Report;
use crate::compat::fmt::round_half_even;

fn float_or_null(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::from)
}

/// The report object without the optional `outcome` and `gate` blocks.
pub fn report_value(report: &Report) -> Map<String, Value> {
    let mut measures = Map::new();
    for r in report.rows() {
        let m = r.measures();
        measures.insert(
            r.trace_id().to_string(),
            json!({
                "tokens": float_or_null(m.tokens),
                "latency_ms": float_or_null(m.latency_ms),
                "cost_usd": float_or_null(m.cost_usd),
            }),
        );
    }
    let mut results = Vec::with_capacity(report.row_count() * report.checks.len());
    for r in report.rows() {
        for (check, v) in report.checks.iter().zip(r.verdicts()) {
            results.push(json!({
                "trace_id": r.trace_id(),
                "scenario": r.scenario(),
                "check": check,
                "detected": v.detected,
                "confidence": round_half_even(v.confidence, 4),
                // A run writing this report keeps every reason (`Reasons::All`).
                "reason": v.reason.unwrap_or_default(),
            }));
        }
    }
    let mut fired = Map::new();
    for (name, n) in report.fired() {
        fired.insert(name.to_string(), Value::from(n));
    }
    let mut out = Map::new();
    out.insert("judge".into(), Value::from(report.judge.clone()));
    out.insert("checks".into(), Value::from(report.checks.clone()));
    out.insert("redaction".into(), Value::from(report.redaction.clone()));
    out.insert("traces".into(), Value::from(report.trace_ids().len()));
    out.insert(
        "failed_traces".into(),
        Value::from(
            report
                .failed_traces()
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>(),
        ),
    );
    out.insert("fired".into(), Value::Object(fired));
    out.insert("measures".into(), Value::Object(measures));
    out.insert("results".into(), Value::Array(results));
    // Absent when there is nothing to say, so a clean run's report keeps 0.4.1's keys exactly.
    if !report.input_warnings.is_empty() {
        out.insert(
            "input_warnings".into(),
            Value::from(report.input_warnings.clone()),
        );
    }
    out
}

/// The `outcome` block of the report.
pub fn outcome_value(summary: &super::OutcomeSummary) -> Value {
    json!({
        "judged": summary.judged,
        "missing": summary.missing,
        "true": summary.true_count,
        "outcome_rate": float_or_null(summary.outcome_rate),
        "structural_clean_rate": summary.structural_clean_rate,
        "clean_rate": summary.clean_rate,
    })
}
