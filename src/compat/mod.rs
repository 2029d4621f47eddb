//! Compatibility with faultgate 0.4.1 (Python): everything that exists only to match its bytes and
//! semantics (docs/compatibility.md).
//!
//! - [`value`]: how 0.4.1 reads JSON values (strip, truthiness, `int()`, `float()`, `str()`).
//! - [`reason`]: the few formatters reason and summary texts use (repr of a string, fixed and `g`
//!   numbers, percentages).
//! - [`re`]: Python `re` patterns translated for the Rust regex engine (policy files).
//! - [`fmt`]: Python's number and string formatting, for the output writers.
//! - [`json`]: 0.4.1's JSON layouts, as a `serde_json` formatter, for the output writers.
//! - `unicode`: the Unicode 14.0 data Python 3.11 uses.
//!
//! Layering: outside `compat/`, `report/` and `cli/`, code uses only [`value`], [`reason`] and [`re`];
//! the writers [`fmt`] and [`json`] are for output (`tests/it/layers.rs` holds the rule).

pub(crate) mod fmt;
pub(crate) mod json;
pub(crate) mod re;
pub(crate) mod reason;
mod unicode;
pub(crate) mod value;
