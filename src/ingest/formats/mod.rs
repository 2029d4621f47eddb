//! One reader per export format, each mapping its records onto [`crate::model::Span`]s.

pub mod braintrust;
pub mod common;
pub mod langfuse;
pub mod langsmith;
pub mod openinference;
pub mod otlp;
pub mod trajectory;
