//! faultgate: a release gate for AI agents over recorded traces.

pub mod calibrate;
pub mod error;
pub mod model;
pub mod pyfmt;
pub mod pyjson;
