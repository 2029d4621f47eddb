//! The OTLP trace and log messages (`opentelemetry/proto/{common,resource,trace,logs}/v1`), as
//! prost-build generates them: what the `otlp-proto` reader decodes and what the evaluation events
//! (`--otlp-endpoint`) are encoded with. Copied from the `opentelemetry-proto` crate 0.33.1 (Apache-2.0,
//! generated from opentelemetry-proto v1.x), with its serde and schemars attributes removed; do not edit
//! by hand. The logs messages keep only what the reader takes and declare the severity as the `int32`
//! its enum is on the wire. The collector's `ExportTraceServiceRequest` and `ExportLogsServiceRequest`
//! are not included: their wire forms are `TracesData`'s and `LogsData`'s. A field left at its default
//! is not on the wire, so a writer that sets fewer fields than are declared writes what it sets alone.
#![allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]

pub(crate) mod common {
    pub(crate) mod v1 {
        /// Represents any type of attribute value. AnyValue may contain a
        /// primitive value such as a string or integer or it may contain an arbitrary nested
        /// object containing arrays, key-value lists and primitives.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct AnyValue {
            /// The value is one of the listed fields. It is valid for all values to be unspecified
            /// in which case this AnyValue is considered to be "empty".
            #[prost(oneof = "any_value::Value", tags = "1, 2, 3, 4, 5, 6, 7, 8")]
            pub value: ::core::option::Option<any_value::Value>,
        }
        /// Nested message and enum types in `AnyValue`.
        pub(crate) mod any_value {
            /// The value is one of the listed fields. It is valid for all values to be unspecified
            /// in which case this AnyValue is considered to be "empty".
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
                #[prost(message, tag = "5")]
                ArrayValue(super::ArrayValue),
                #[prost(message, tag = "6")]
                KvlistValue(super::KeyValueList),
                #[prost(bytes, tag = "7")]
                BytesValue(::prost::alloc::vec::Vec<u8>),
                /// Reference to the string value in ProfilesDictionary.string_table.
                ///
                /// Note: This is currently used exclusively in the Profiling signal.
                /// Implementers of OTLP receivers for signals other than Profiling should
                /// treat the presence of this value as a non-fatal issue.
                /// Log an error or warning indicating an unexpected field intended for the
                /// Profiling signal and process the data as if this value were absent or
                /// empty, ignoring its semantic content for the non-Profiling signal.
                ///
                /// Status: \[Development\]
                #[prost(int32, tag = "8")]
                StringValueStrindex(i32),
            }
        }
        /// ArrayValue is a list of AnyValue messages. We need ArrayValue as a message
        /// since oneof in AnyValue does not allow repeated fields.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct ArrayValue {
            /// Array of values. The array may be empty (contain 0 elements).
            #[prost(message, repeated, tag = "1")]
            pub values: ::prost::alloc::vec::Vec<AnyValue>,
        }
        /// KeyValueList is a list of KeyValue messages. We need KeyValueList as a message
        /// since `oneof` in AnyValue does not allow repeated fields. Everywhere else where we need
        /// a list of KeyValue messages (e.g. in Span) we use `repeated KeyValue` directly to
        /// avoid unnecessary extra wrapping (which slows down the protocol). The 2 approaches
        /// are semantically equivalent.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct KeyValueList {
            /// A collection of key/value pairs of key-value pairs. The list may be empty (may
            /// contain 0 elements).
            ///
            /// The keys MUST be unique (it is not allowed to have more than one
            /// value with the same key).
            /// The behavior of software that receives duplicated keys can be unpredictable.
            #[prost(message, repeated, tag = "1")]
            pub values: ::prost::alloc::vec::Vec<KeyValue>,
        }
        /// Represents a key-value pair that is used to store Span attributes, Link
        /// attributes, etc.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct KeyValue {
            /// The key name of the pair.
            /// key_ref MUST NOT be set if key is used.
            #[prost(string, tag = "1")]
            pub key: ::prost::alloc::string::String,
            /// The value of the pair.
            #[prost(message, optional, tag = "2")]
            pub value: ::core::option::Option<AnyValue>,
            /// Reference to the string key in ProfilesDictionary.string_table.
            /// key MUST NOT be set if key_strindex is used.
            ///
            /// Note: This is currently used exclusively in the Profiling signal.
            /// Implementers of OTLP receivers for signals other than Profiling should
            /// treat the presence of this key as a non-fatal issue.
            /// Log an error or warning indicating an unexpected field intended for the
            /// Profiling signal and process the data as if this value were absent or
            /// empty, ignoring its semantic content for the non-Profiling signal.
            ///
            /// Status: \[Development\]
            #[prost(int32, tag = "3")]
            pub key_strindex: i32,
        }
        /// InstrumentationScope is a message representing the instrumentation scope information
        /// such as the fully qualified name and version.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct InstrumentationScope {
            /// A name denoting the Instrumentation scope.
            /// An empty instrumentation scope name means the name is unknown.
            #[prost(string, tag = "1")]
            pub name: ::prost::alloc::string::String,
            /// Defines the version of the instrumentation scope.
            /// An empty instrumentation scope version means the version is unknown.
            #[prost(string, tag = "2")]
            pub version: ::prost::alloc::string::String,
            /// Additional attributes that describe the scope. \[Optional\].
            /// Attribute keys MUST be unique (it is not allowed to have more than one
            /// attribute with the same key).
            /// The behavior of software that receives duplicated keys can be unpredictable.
            #[prost(message, repeated, tag = "3")]
            pub attributes: ::prost::alloc::vec::Vec<KeyValue>,
            /// The number of attributes that were discarded. Attributes
            /// can be discarded because their keys are too long or because there are too many
            /// attributes. If this value is 0, then no attributes were dropped.
            #[prost(uint32, tag = "4")]
            pub dropped_attributes_count: u32,
        }
        /// A reference to an Entity.
        /// Entity represents an object of interest associated with produced telemetry: e.g spans, metrics, profiles, or logs.
        ///
        /// Status: \[Development\]
        #[derive(Clone, PartialEq, Eq, Hash, ::prost::Message)]
        pub(crate) struct EntityRef {
            /// The Schema URL, if known. This is the identifier of the Schema that the entity data
            /// is recorded in. To learn more about Schema URL see
            /// <https://opentelemetry.io/docs/specs/otel/schemas/#schema-url>
            ///
            /// This schema_url applies to the data in this message and to the Resource attributes
            /// referenced by id_keys and description_keys.
            /// TODO: discuss if we are happy with this somewhat complicated definition of what
            /// the schema_url applies to.
            ///
            /// This field obsoletes the schema_url field in ResourceMetrics/ResourceSpans/ResourceLogs.
            #[prost(string, tag = "1")]
            pub schema_url: ::prost::alloc::string::String,
            /// Defines the type of the entity. MUST not change during the lifetime of the entity.
            /// For example: "service" or "host". This field is required and MUST not be empty
            /// for valid entities.
            #[prost(string, tag = "2")]
            pub r#type: ::prost::alloc::string::String,
            /// Attribute Keys that identify the entity.
            /// MUST not change during the lifetime of the entity. The Id must contain at least one attribute.
            /// These keys MUST exist in the containing {message}.attributes.
            #[prost(string, repeated, tag = "3")]
            pub id_keys: ::prost::alloc::vec::Vec<::prost::alloc::string::String>,
            /// Descriptive (non-identifying) attribute keys of the entity.
            /// MAY change over the lifetime of the entity. MAY be empty.
            /// These attribute keys are not part of entity's identity.
            /// These keys MUST exist in the containing {message}.attributes.
            #[prost(string, repeated, tag = "4")]
            pub description_keys: ::prost::alloc::vec::Vec<::prost::alloc::string::String>,
        }
    }
}

pub(crate) mod resource {
    pub(crate) mod v1 {
        /// Resource information.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct Resource {
            /// Set of attributes that describe the resource.
            /// Attribute keys MUST be unique (it is not allowed to have more than one
            /// attribute with the same key).
            /// The behavior of software that receives duplicated keys can be unpredictable.
            #[prost(message, repeated, tag = "1")]
            pub attributes: ::prost::alloc::vec::Vec<super::super::common::v1::KeyValue>,
            /// The number of dropped attributes. If the value is 0, then
            /// no attributes were dropped.
            #[prost(uint32, tag = "2")]
            pub dropped_attributes_count: u32,
            /// Set of entities that participate in this Resource.
            ///
            /// Note: keys in the references MUST exist in attributes of this message.
            ///
            /// Status: \[Development\]
            #[prost(message, repeated, tag = "3")]
            pub entity_refs: ::prost::alloc::vec::Vec<super::super::common::v1::EntityRef>,
        }
    }
}

pub(crate) mod trace {
    pub(crate) mod v1 {
        /// TracesData represents the traces data that can be stored in a persistent storage,
        /// OR can be embedded by other protocols that transfer OTLP traces data but do
        /// not implement the OTLP protocol.
        ///
        /// The main difference between this message and collector protocol is that
        /// in this message there will not be any "control" or "metadata" specific to
        /// OTLP protocol.
        ///
        /// When new fields are added into this message, the OTLP request MUST be updated
        /// as well.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct TracesData {
            /// An array of ResourceSpans.
            /// For data coming from a single resource this array will typically contain
            /// one element. Intermediary nodes that receive data from multiple origins
            /// typically batch the data before forwarding further and in that case this
            /// array will contain multiple elements.
            #[prost(message, repeated, tag = "1")]
            pub resource_spans: ::prost::alloc::vec::Vec<ResourceSpans>,
        }
        /// A collection of ScopeSpans from a Resource.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct ResourceSpans {
            /// The resource for the spans in this message.
            /// If this field is not set then no resource info is known.
            #[prost(message, optional, tag = "1")]
            pub resource: ::core::option::Option<super::super::resource::v1::Resource>,
            /// A list of ScopeSpans that originate from a resource.
            #[prost(message, repeated, tag = "2")]
            pub scope_spans: ::prost::alloc::vec::Vec<ScopeSpans>,
            /// The Schema URL, if known. This is the identifier of the Schema that the resource data
            /// is recorded in. Notably, the last part of the URL path is the version number of the
            /// schema: http\[s\]://server\[:port\]/path/<version>. To learn more about Schema URL see
            /// <https://opentelemetry.io/docs/specs/otel/schemas/#schema-url>
            /// This schema_url applies to the data in the "resource" field. It does not apply
            /// to the data in the "scope_spans" field which have their own schema_url field.
            #[prost(string, tag = "3")]
            pub schema_url: ::prost::alloc::string::String,
        }
        /// A collection of Spans produced by an InstrumentationScope.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct ScopeSpans {
            /// The instrumentation scope information for the spans in this message.
            /// Semantically when InstrumentationScope isn't set, it is equivalent with
            /// an empty instrumentation scope name (unknown).
            #[prost(message, optional, tag = "1")]
            pub scope: ::core::option::Option<super::super::common::v1::InstrumentationScope>,
            /// A list of Spans that originate from an instrumentation scope.
            #[prost(message, repeated, tag = "2")]
            pub spans: ::prost::alloc::vec::Vec<Span>,
            /// The Schema URL, if known. This is the identifier of the Schema that the span data
            /// is recorded in. Notably, the last part of the URL path is the version number of the
            /// schema: http\[s\]://server\[:port\]/path/<version>. To learn more about Schema URL see
            /// <https://opentelemetry.io/docs/specs/otel/schemas/#schema-url>
            /// This schema_url applies to the data in the "scope" field and all spans and span
            /// events in the "spans" field.
            #[prost(string, tag = "3")]
            pub schema_url: ::prost::alloc::string::String,
        }
        /// A Span represents a single operation performed by a single component of the system.
        ///
        /// The next available field id is 17.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct Span {
            /// A unique identifier for a trace. All spans from the same trace share
            /// the same `trace_id`. The ID is a 16-byte array. An ID with all zeroes OR
            /// of length other than 16 bytes is considered invalid (empty string in OTLP/JSON
            /// is zero-length and thus is also invalid).
            ///
            /// This field is required.
            #[prost(bytes = "vec", tag = "1")]
            pub trace_id: ::prost::alloc::vec::Vec<u8>,
            /// A unique identifier for a span within a trace, assigned when the span
            /// is created. The ID is an 8-byte array. An ID with all zeroes OR of length
            /// other than 8 bytes is considered invalid (empty string in OTLP/JSON
            /// is zero-length and thus is also invalid).
            ///
            /// This field is required.
            #[prost(bytes = "vec", tag = "2")]
            pub span_id: ::prost::alloc::vec::Vec<u8>,
            /// trace_state conveys information about request position in multiple distributed tracing graphs.
            /// It is a trace_state in w3c-trace-context format: <https://www.w3.org/TR/trace-context/#tracestate-header>
            /// See also <https://github.com/w3c/distributed-tracing> for more details about this field.
            #[prost(string, tag = "3")]
            pub trace_state: ::prost::alloc::string::String,
            /// The `span_id` of this span's parent span. If this is a root span, then this
            /// field must be empty. The ID is an 8-byte array.
            #[prost(bytes = "vec", tag = "4")]
            pub parent_span_id: ::prost::alloc::vec::Vec<u8>,
            /// Flags, a bit field.
            ///
            /// Bits 0-7 (8 least significant bits) are the trace flags as defined in W3C Trace
            /// Context specification. To read the 8-bit W3C trace flag, use
            /// `flags & SPAN_FLAGS_TRACE_FLAGS_MASK`.
            ///
            /// See <https://www.w3.org/TR/trace-context-2/#trace-flags> for the flag definitions.
            ///
            /// Bits 8 and 9 represent the 3 states of whether a span's parent
            /// is remote. The states are (unknown, is not remote, is remote).
            /// To read whether the value is known, use `(flags & SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK) != 0`.
            /// To read whether the span is remote, use `(flags & SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK) != 0`.
            ///
            /// When creating span messages, if the message is logically forwarded from another source
            /// with an equivalent flags fields (i.e., usually another OTLP span message), the field SHOULD
            /// be copied as-is. If creating from a source that does not have an equivalent flags field
            /// (such as a runtime representation of an OpenTelemetry span), the high 22 bits MUST
            /// be set to zero.
            /// Readers MUST NOT assume that bits 10-31 (22 most significant bits) will be zero.
            ///
            /// \[Optional\].
            #[prost(fixed32, tag = "16")]
            pub flags: u32,
            /// A description of the span's operation.
            ///
            /// For example, the name can be a qualified method name or a file name
            /// and a line number where the operation is called. A best practice is to use
            /// the same display name at the same call point in an application.
            /// This makes it easier to correlate spans in different traces.
            ///
            /// This field is semantically required to be set to non-empty string.
            /// Empty value is equivalent to an unknown span name.
            ///
            /// This field is required.
            #[prost(string, tag = "5")]
            pub name: ::prost::alloc::string::String,
            /// Distinguishes between spans generated in a particular context. For example,
            /// two spans with the same name may be distinguished using `CLIENT` (caller)
            /// and `SERVER` (callee) to identify queueing latency associated with the span.
            #[prost(enumeration = "span::SpanKind", tag = "6")]
            pub kind: i32,
            /// The start time of the span. On the client side, this is the time
            /// kept by the local machine where the span execution starts. On the server side, this
            /// is the time when the server's application handler starts running.
            /// Value is UNIX Epoch time in nanoseconds since 00:00:00 UTC on 1 January 1970.
            ///
            /// This field is semantically required and it is expected that end_time >= start_time.
            #[prost(fixed64, tag = "7")]
            pub start_time_unix_nano: u64,
            /// The end time of the span. On the client side, this is the time
            /// kept by the local machine where the span execution ends. On the server side, this
            /// is the time when the server application handler stops running.
            /// Value is UNIX Epoch time in nanoseconds since 00:00:00 UTC on 1 January 1970.
            ///
            /// This field is semantically required and it is expected that end_time >= start_time.
            #[prost(fixed64, tag = "8")]
            pub end_time_unix_nano: u64,
            /// A collection of key/value pairs. Note, global attributes
            /// like server name can be set using the resource API. Examples of attributes:
            ///
            /// ```text
            /// "/http/user_agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_2) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/71.0.3578.98 Safari/537.36"
            /// "/http/server_latency": 300
            /// "example.com/myattribute": true
            /// "example.com/score": 10.239
            /// ```
            ///
            /// Attribute keys MUST be unique (it is not allowed to have more than one
            /// attribute with the same key).
            /// The behavior of software that receives duplicated keys can be unpredictable.
            #[prost(message, repeated, tag = "9")]
            pub attributes: ::prost::alloc::vec::Vec<super::super::common::v1::KeyValue>,
            /// The number of attributes that were discarded. Attributes
            /// can be discarded because their keys are too long or because there are too many
            /// attributes. If this value is 0, then no attributes were dropped.
            #[prost(uint32, tag = "10")]
            pub dropped_attributes_count: u32,
            /// A collection of Event items.
            #[prost(message, repeated, tag = "11")]
            pub events: ::prost::alloc::vec::Vec<span::Event>,
            /// The number of dropped events. If the value is 0, then no
            /// events were dropped.
            #[prost(uint32, tag = "12")]
            pub dropped_events_count: u32,
            /// A collection of Links, which are references from this span to a span
            /// in the same or different trace.
            #[prost(message, repeated, tag = "13")]
            pub links: ::prost::alloc::vec::Vec<span::Link>,
            /// The number of dropped links after the maximum size was
            /// enforced. If this value is 0, then no links were dropped.
            #[prost(uint32, tag = "14")]
            pub dropped_links_count: u32,
            /// An optional final status for this span. Semantically when Status isn't set, it means
            /// span's status code is unset, i.e. assume STATUS_CODE_UNSET (code = 0).
            #[prost(message, optional, tag = "15")]
            pub status: ::core::option::Option<Status>,
        }
        /// Nested message and enum types in `Span`.
        pub(crate) mod span {
            /// Event is a time-stamped annotation of the span, consisting of user-supplied
            /// text description and key-value pairs.
            #[derive(Clone, PartialEq, ::prost::Message)]
            pub(crate) struct Event {
                /// The time the event occurred.
                #[prost(fixed64, tag = "1")]
                pub time_unix_nano: u64,
                /// The name of the event.
                /// This field is semantically required to be set to non-empty string.
                #[prost(string, tag = "2")]
                pub name: ::prost::alloc::string::String,
                /// A collection of attribute key/value pairs on the event.
                /// Attribute keys MUST be unique (it is not allowed to have more than one
                /// attribute with the same key).
                /// The behavior of software that receives duplicated keys can be unpredictable.
                #[prost(message, repeated, tag = "3")]
                pub attributes: ::prost::alloc::vec::Vec<super::super::super::common::v1::KeyValue>,
                /// The number of dropped attributes. If the value is 0,
                /// then no attributes were dropped.
                #[prost(uint32, tag = "4")]
                pub dropped_attributes_count: u32,
            }
            /// A pointer from the current span to another span in the same trace or in a
            /// different trace. For example, this can be used in batching operations,
            /// where a single batch handler processes multiple requests from different
            /// traces or when the handler receives a request from a different project.
            #[derive(Clone, PartialEq, ::prost::Message)]
            pub(crate) struct Link {
                /// A unique identifier of a trace that this linked span is part of. The ID is a
                /// 16-byte array.
                #[prost(bytes = "vec", tag = "1")]
                pub trace_id: ::prost::alloc::vec::Vec<u8>,
                /// A unique identifier for the linked span. The ID is an 8-byte array.
                #[prost(bytes = "vec", tag = "2")]
                pub span_id: ::prost::alloc::vec::Vec<u8>,
                /// The trace_state associated with the link.
                #[prost(string, tag = "3")]
                pub trace_state: ::prost::alloc::string::String,
                /// A collection of attribute key/value pairs on the link.
                /// Attribute keys MUST be unique (it is not allowed to have more than one
                /// attribute with the same key).
                /// The behavior of software that receives duplicated keys can be unpredictable.
                #[prost(message, repeated, tag = "4")]
                pub attributes: ::prost::alloc::vec::Vec<super::super::super::common::v1::KeyValue>,
                /// The number of dropped attributes. If the value is 0,
                /// then no attributes were dropped.
                #[prost(uint32, tag = "5")]
                pub dropped_attributes_count: u32,
                /// Flags, a bit field.
                ///
                /// Bits 0-7 (8 least significant bits) are the trace flags as defined in W3C Trace
                /// Context specification. To read the 8-bit W3C trace flag, use
                /// `flags & SPAN_FLAGS_TRACE_FLAGS_MASK`.
                ///
                /// See <https://www.w3.org/TR/trace-context-2/#trace-flags> for the flag definitions.
                ///
                /// Bits 8 and 9 represent the 3 states of whether the link is remote.
                /// The states are (unknown, is not remote, is remote).
                /// To read whether the value is known, use `(flags & SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK) != 0`.
                /// To read whether the link is remote, use `(flags & SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK) != 0`.
                ///
                /// Readers MUST NOT assume that bits 10-31 (22 most significant bits) will be zero.
                /// When creating new spans, bits 10-31 (most-significant 22-bits) MUST be zero.
                ///
                /// \[Optional\].
                #[prost(fixed32, tag = "6")]
                pub flags: u32,
            }
            /// SpanKind is the type of span. Can be used to specify additional relationships between spans
            /// in addition to a parent/child relationship.
            #[derive(
                Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration,
            )]
            #[repr(i32)]
            pub enum SpanKind {
                /// Unspecified. Do NOT use as default.
                /// Implementations MAY assume SpanKind to be INTERNAL when receiving UNSPECIFIED.
                Unspecified = 0,
                /// Indicates that the span represents an internal operation within an application,
                /// as opposed to an operation happening at the boundaries. Default value.
                Internal = 1,
                /// Indicates that the span covers server-side handling of an RPC or other
                /// remote network request.
                Server = 2,
                /// Indicates that the span describes a request to some remote service.
                Client = 3,
                /// Indicates that the span describes a producer sending a message to a broker.
                /// Unlike CLIENT and SERVER, there is often no direct critical path latency relationship
                /// between producer and consumer spans. A PRODUCER span ends when the message was accepted
                /// by the broker while the logical processing of the message might span a much longer time.
                Producer = 4,
                /// Indicates that the span describes consumer receiving a message from a broker.
                /// Like the PRODUCER kind, there is often no direct critical path latency relationship
                /// between producer and consumer spans.
                Consumer = 5,
            }
            impl SpanKind {
                /// String value of the enum field names used in the ProtoBuf definition.
                ///
                /// The values are not transformed in any way and thus are considered stable
                /// (if the ProtoBuf definition does not change) and safe for programmatic use.
                pub fn as_str_name(&self) -> &'static str {
                    match self {
                        Self::Unspecified => "SPAN_KIND_UNSPECIFIED",
                        Self::Internal => "SPAN_KIND_INTERNAL",
                        Self::Server => "SPAN_KIND_SERVER",
                        Self::Client => "SPAN_KIND_CLIENT",
                        Self::Producer => "SPAN_KIND_PRODUCER",
                        Self::Consumer => "SPAN_KIND_CONSUMER",
                    }
                }
                /// Creates an enum from field names used in the ProtoBuf definition.
                pub fn from_str_name(value: &str) -> ::core::option::Option<Self> {
                    match value {
                        "SPAN_KIND_UNSPECIFIED" => Some(Self::Unspecified),
                        "SPAN_KIND_INTERNAL" => Some(Self::Internal),
                        "SPAN_KIND_SERVER" => Some(Self::Server),
                        "SPAN_KIND_CLIENT" => Some(Self::Client),
                        "SPAN_KIND_PRODUCER" => Some(Self::Producer),
                        "SPAN_KIND_CONSUMER" => Some(Self::Consumer),
                        _ => None,
                    }
                }
            }
        }
        /// The Status type defines a logical error model that is suitable for different
        /// programming environments, including REST APIs and RPC APIs.
        #[derive(Clone, PartialEq, Eq, Hash, ::prost::Message)]
        pub(crate) struct Status {
            /// A developer-facing human readable error message.
            #[prost(string, tag = "2")]
            pub message: ::prost::alloc::string::String,
            /// The status code.
            #[prost(enumeration = "status::StatusCode", tag = "3")]
            pub code: i32,
        }
        /// Nested message and enum types in `Status`.
        pub(crate) mod status {
            /// For the semantics of status codes see
            /// <https://github.com/open-telemetry/opentelemetry-specification/blob/main/specification/trace/api.md#set-status>
            #[derive(
                Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration,
            )]
            #[repr(i32)]
            pub enum StatusCode {
                /// The default status.
                Unset = 0,
                /// The Span has been validated by an Application developer or Operator to
                /// have completed successfully.
                Ok = 1,
                /// The Span contains an error.
                Error = 2,
            }
            impl StatusCode {
                /// String value of the enum field names used in the ProtoBuf definition.
                ///
                /// The values are not transformed in any way and thus are considered stable
                /// (if the ProtoBuf definition does not change) and safe for programmatic use.
                pub fn as_str_name(&self) -> &'static str {
                    match self {
                        Self::Unset => "STATUS_CODE_UNSET",
                        Self::Ok => "STATUS_CODE_OK",
                        Self::Error => "STATUS_CODE_ERROR",
                    }
                }
                /// Creates an enum from field names used in the ProtoBuf definition.
                pub fn from_str_name(value: &str) -> ::core::option::Option<Self> {
                    match value {
                        "STATUS_CODE_UNSET" => Some(Self::Unset),
                        "STATUS_CODE_OK" => Some(Self::Ok),
                        "STATUS_CODE_ERROR" => Some(Self::Error),
                        _ => None,
                    }
                }
            }
        }
        /// SpanFlags represents constants used to interpret the
        /// Span.flags field, which is protobuf 'fixed32' type and is to
        /// be used as bit-fields. Each non-zero value defined in this enum is
        /// a bit-mask.  To extract the bit-field, for example, use an
        /// expression like:
        ///
        /// (span.flags & SPAN_FLAGS_TRACE_FLAGS_MASK)
        ///
        /// See <https://www.w3.org/TR/trace-context-2/#trace-flags> for the flag definitions.
        ///
        /// Note that Span flags were introduced in version 1.1 of the
        /// OpenTelemetry protocol.  Older Span producers do not set this
        /// field, consequently consumers should not rely on the absence of a
        /// particular flag bit to indicate the presence of a particular feature.
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration,
        )]
        #[repr(i32)]
        pub enum SpanFlags {
            /// The zero value for the enum. Should not be used for comparisons.
            /// Instead use bitwise "and" with the appropriate mask as shown above.
            DoNotUse = 0,
            /// Bits 0-7 are used for trace flags.
            TraceFlagsMask = 255,
            /// Bits 8 and 9 are used to indicate that the parent span or link span is remote.
            /// Bit 8 (`HAS_IS_REMOTE`) indicates whether the value is known.
            /// Bit 9 (`IS_REMOTE`) indicates whether the span or link is remote.
            ContextHasIsRemoteMask = 256,
            ContextIsRemoteMask = 512,
        }
        impl SpanFlags {
            /// String value of the enum field names used in the ProtoBuf definition.
            ///
            /// The values are not transformed in any way and thus are considered stable
            /// (if the ProtoBuf definition does not change) and safe for programmatic use.
            pub fn as_str_name(&self) -> &'static str {
                match self {
                    Self::DoNotUse => "SPAN_FLAGS_DO_NOT_USE",
                    Self::TraceFlagsMask => "SPAN_FLAGS_TRACE_FLAGS_MASK",
                    Self::ContextHasIsRemoteMask => "SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK",
                    Self::ContextIsRemoteMask => "SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK",
                }
            }
            /// Creates an enum from field names used in the ProtoBuf definition.
            pub fn from_str_name(value: &str) -> ::core::option::Option<Self> {
                match value {
                    "SPAN_FLAGS_DO_NOT_USE" => Some(Self::DoNotUse),
                    "SPAN_FLAGS_TRACE_FLAGS_MASK" => Some(Self::TraceFlagsMask),
                    "SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK" => Some(Self::ContextHasIsRemoteMask),
                    "SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK" => Some(Self::ContextIsRemoteMask),
                    _ => None,
                }
            }
        }
    }
}

pub(crate) mod logs {
    pub(crate) mod v1 {
        /// LogsData represents the logs data that can be stored in a persistent storage,
        /// OR can be embedded by other protocols that transfer OTLP logs data but do not
        /// implement the OTLP protocol.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct LogsData {
            /// An array of ResourceLogs.
            #[prost(message, repeated, tag = "1")]
            pub resource_logs: ::prost::alloc::vec::Vec<ResourceLogs>,
        }
        /// A collection of ScopeLogs from a Resource.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct ResourceLogs {
            /// The resource for the logs in this message.
            #[prost(message, optional, tag = "1")]
            pub resource: ::core::option::Option<super::super::resource::v1::Resource>,
            /// A list of ScopeLogs that originate from a resource.
            #[prost(message, repeated, tag = "2")]
            pub scope_logs: ::prost::alloc::vec::Vec<ScopeLogs>,
            /// The Schema URL, if known.
            #[prost(string, tag = "3")]
            pub schema_url: ::prost::alloc::string::String,
        }
        /// A collection of Logs produced by a Scope.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct ScopeLogs {
            /// The instrumentation scope information for the logs in this message.
            #[prost(message, optional, tag = "1")]
            pub scope: ::core::option::Option<super::super::common::v1::InstrumentationScope>,
            /// A list of log records.
            #[prost(message, repeated, tag = "2")]
            pub log_records: ::prost::alloc::vec::Vec<LogRecord>,
            /// The Schema URL, if known.
            #[prost(string, tag = "3")]
            pub schema_url: ::prost::alloc::string::String,
        }
        /// A log record according to OpenTelemetry Log Data Model.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub(crate) struct LogRecord {
            /// time_unix_nano is the time when the event occurred.
            #[prost(fixed64, tag = "1")]
            pub time_unix_nano: u64,
            /// Time when the event was observed by the collection system.
            #[prost(fixed64, tag = "11")]
            pub observed_time_unix_nano: u64,
            /// Numerical value of the severity (a `SeverityNumber`).
            #[prost(int32, tag = "2")]
            pub severity_number: i32,
            /// The severity text (also known as log level).
            #[prost(string, tag = "3")]
            pub severity_text: ::prost::alloc::string::String,
            /// A value containing the body of the log record.
            #[prost(message, optional, tag = "5")]
            pub body: ::core::option::Option<super::super::common::v1::AnyValue>,
            /// Additional attributes that describe the specific event occurrence.
            #[prost(message, repeated, tag = "6")]
            pub attributes: ::prost::alloc::vec::Vec<super::super::common::v1::KeyValue>,
            /// The number of attributes that were discarded.
            #[prost(uint32, tag = "7")]
            pub dropped_attributes_count: u32,
            /// Flags, a bit field (the W3C trace flags in bits 0-7).
            #[prost(fixed32, tag = "8")]
            pub flags: u32,
            /// A unique identifier for a trace (16 bytes), or empty.
            #[prost(bytes = "vec", tag = "9")]
            pub trace_id: ::prost::alloc::vec::Vec<u8>,
            /// A unique identifier for a span within a trace (8 bytes), or empty.
            #[prost(bytes = "vec", tag = "10")]
            pub span_id: ::prost::alloc::vec::Vec<u8>,
            /// A unique identifier of event category/type.
            #[prost(string, tag = "12")]
            pub event_name: ::prost::alloc::string::String,
        }
    }
}
