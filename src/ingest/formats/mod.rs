//! One decoder per export format, each describing its traces as [`crate::table::record::SpanRecord`]s.

pub mod braintrust;
pub mod chat;
pub mod common;
pub mod langfuse;
pub mod langsmith;
pub mod multi_agent;
pub mod openinference;
pub mod otlp;
pub mod swe_agent;
pub mod tau;
pub mod trajectory;
