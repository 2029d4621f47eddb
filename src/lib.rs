//! faultgate: a release gate for AI agents over recorded traces.
//!
//! The flow, one module each:
//!
//! 1. [`ingest`] reads trace files (memory-mapped, parsed in parallel with simd-json): one decoder per
//!    format describes each trace's spans as records borrowing from the parsed bytes.
//! 2. [`table`] derives prompts, answers, scenario keys and tool steps from those records and appends
//!    traces, spans and steps straight into Arrow record batches.
//! 3. [`checks`] run as passes over those typed columns, filling verdict columns; [`run`] drives
//!    them over files in parallel and collects each batch's verdicts as an Arrow record batch.
//! 4. [`report`] turns the verdict batches into the terminal table, the JSON report and the other
//!    outputs.
//!
//! Everything that exists only to match faultgate 0.4.1 (Python) byte for byte lives in `compat`:
//! the domain code reads values and words its reasons through it, and only the writers in [`report`]
//! and [`cli`] format numbers and JSON with it.
//!
//! The command line in `main.rs` is a thin layer over [`cli`].

pub mod calibrate;
pub mod checks;
pub mod cli;
mod compat;
mod digest;
pub mod error;
pub mod expect;
mod explain;
pub mod gate;
pub mod golden;
pub mod ingest;
mod judge;
mod otlp_pb;
mod output;
mod partial;
pub mod policy;
mod precheck;
pub mod redact;
pub mod report;
pub mod run;
pub mod sessions;
mod sidefile;
pub mod table;
pub mod workflow;
