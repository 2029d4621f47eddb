//! The formatters reason and summary texts use, as 0.4.1 writes them: `repr()` of strings and values,
//! `str()` of values, and fixed-point, `g` and percent numbers.
//!
//! Checks, policies, workflow rules, the gate and calibration build their human-readable texts with
//! these and nothing else from [`super::fmt`], so the bytes a reason holds are decided in one place.

pub(crate) use super::fmt::{fmt_fixed, fmt_g, fmt_percent0, py_repr, py_repr_str, py_str};
