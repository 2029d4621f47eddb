//! The OTLP logs messages an evaluation export is encoded with: the crate's one declaration of the
//! OTLP messages ([`crate::otlp_pb`], which the `otlp-proto` reader decodes with too). An export sets
//! only the fields faultgate writes; the others stay at their defaults, which are not on the wire.
//! The enclosing messages are written by hand around the streamed records ([`super::write_protobuf`]),
//! so only the tests build them whole, to decode an export: as `LogsData`, whose wire form is the
//! collector's `ExportLogsServiceRequest`'s.

pub(crate) use crate::otlp_pb::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
pub(crate) use crate::otlp_pb::logs::v1::LogRecord;
#[cfg(test)]
pub(crate) use crate::otlp_pb::logs::v1::LogsData;
pub(crate) use crate::otlp_pb::resource::v1::Resource;
