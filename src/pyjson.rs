//! JSON text the way faultgate 0.4.1 writes it (Python's `json.dumps`).
//!
//! Reports, bands and audit files are written with one-space indentation and ASCII escapes; tool
//! payloads are re-serialised with spaced separators and literal non-ASCII. Both must match the
//! reference bytes.

use serde_json::Value;

/// A report file: `json.dumps(v, indent=1)` with ASCII escapes, no trailing newline.
pub fn to_pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// `json.dumps(v, ensure_ascii=False)`: separators `, ` and `: `, keys in input order.
pub fn dumps_spaced(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
pub fn dumps_sorted_compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
