//! One reader per export format, each mapping its records onto [`crate::model::Span`]s.

pub mod otlp;
