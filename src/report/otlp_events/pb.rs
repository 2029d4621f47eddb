//! The OTLP logs messages an evaluation export needs (`opentelemetry/proto/{common,resource,logs}/v1`
//! and the collector's `ExportLogsServiceRequest`), declared for prost as prost-build declares them,
//! with only the fields faultgate writes. Field numbers and types are the proto's; a receiver reads
//! what is not declared here as absent.
//! The enclosing messages are written by hand around the streamed records ([`super::write_protobuf`]),
//! so only the tests build them whole, to decode an export.
#![allow(dead_code, clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]

/// `opentelemetry.proto.common.v1.AnyValue`, with the scalar cases an event's attributes use.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct AnyValue {
    #[prost(oneof = "any_value::Value", tags = "1, 2, 3, 4")]
    pub value: ::core::option::Option<any_value::Value>,
}

pub(crate) mod any_value {
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub(crate) enum Value {
        #[prost(string, tag = "1")]
        StringValue(::prost::alloc::string::String),
        #[prost(bool, tag = "2")]
        BoolValue(bool),
        #[prost(int64, tag = "3")]
        IntValue(i64),
        #[prost(double, tag = "4")]
        DoubleValue(f64),
    }
}

/// `opentelemetry.proto.common.v1.KeyValue`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct KeyValue {
    #[prost(string, tag = "1")]
    pub key: ::prost::alloc::string::String,
    #[prost(message, optional, tag = "2")]
    pub value: ::core::option::Option<AnyValue>,
}

/// `opentelemetry.proto.common.v1.InstrumentationScope`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct InstrumentationScope {
    #[prost(string, tag = "1")]
    pub name: ::prost::alloc::string::String,
    #[prost(string, tag = "2")]
    pub version: ::prost::alloc::string::String,
}

/// `opentelemetry.proto.resource.v1.Resource`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct Resource {
    #[prost(message, repeated, tag = "1")]
    pub attributes: ::prost::alloc::vec::Vec<KeyValue>,
}

/// `opentelemetry.proto.logs.v1.LogRecord`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct LogRecord {
    #[prost(fixed64, tag = "1")]
    pub time_unix_nano: u64,
    #[prost(message, repeated, tag = "6")]
    pub attributes: ::prost::alloc::vec::Vec<KeyValue>,
    #[prost(bytes = "vec", tag = "9")]
    pub trace_id: ::prost::alloc::vec::Vec<u8>,
    #[prost(bytes = "vec", tag = "10")]
    pub span_id: ::prost::alloc::vec::Vec<u8>,
    #[prost(string, tag = "12")]
    pub event_name: ::prost::alloc::string::String,
}

/// `opentelemetry.proto.logs.v1.ScopeLogs`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct ScopeLogs {
    #[prost(message, optional, tag = "1")]
    pub scope: ::core::option::Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub log_records: ::prost::alloc::vec::Vec<LogRecord>,
}

/// `opentelemetry.proto.logs.v1.ResourceLogs`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct ResourceLogs {
    #[prost(message, optional, tag = "1")]
    pub resource: ::core::option::Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub scope_logs: ::prost::alloc::vec::Vec<ScopeLogs>,
}

/// `opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest`: the body of a `/v1/logs` post.
#[derive(Clone, PartialEq, ::prost::Message)]
pub(crate) struct ExportLogsServiceRequest {
    #[prost(message, repeated, tag = "1")]
    pub resource_logs: ::prost::alloc::vec::Vec<ResourceLogs>,
}
