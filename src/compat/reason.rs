//! The formatters reason and summary texts use, as 0.4.1 writes them: `repr()` of strings and values,
//! `str()` of values, fixed-point, `g` and percent numbers, and the repr of a float.
//!
//! Checks, policies, workflow rules, the gate and calibration build their human-readable texts with
//! these and nothing else from [`super::fmt`], so the bytes a reason holds are decided in one place.

pub use super::fmt::{float_repr, fmt_fixed, fmt_g, fmt_percent0, py_repr, py_repr_str, py_str};
