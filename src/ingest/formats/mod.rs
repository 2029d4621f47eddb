//! One decoder per export format, each describing its traces as [`crate::table::record::SpanRecord`]s.

pub(crate) mod any_agent;
pub(crate) mod braintrust;
pub(crate) mod chat;
pub(crate) mod common;
pub(crate) mod langfuse;
pub(crate) mod langsmith;
pub(crate) mod langsmith_sdk;
pub(crate) mod multi_agent;
pub(crate) mod openinference;
pub(crate) mod openinference_spans;
pub(crate) mod otlp;
pub(crate) mod otlp_proto;
pub(crate) mod swe_agent;
pub(crate) mod tau;
pub(crate) mod trajectory;
