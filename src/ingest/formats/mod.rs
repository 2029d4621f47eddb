//! One decoder per export format, each describing its traces as [`crate::table::record::SpanRecord`]s.

pub mod braintrust;
pub mod common;
pub mod langfuse;
pub mod langsmith;
pub mod openinference;
pub mod otlp;
pub mod trajectory;
