//! The renderers: one file per output, each writing the run's results as that output shows them,
//! and the wording they share (the gate's lines, how ids and cut texts are shown, the reproduce
//! command, the slices and the warnings). They read the report model (`crate::report`) and never
//! compute a verdict or a count of their own.

pub(crate) mod audit;
pub(crate) mod colour;
pub(crate) mod gate_lines;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod markdown;
pub(crate) mod otlp_events;
pub(crate) mod parquet;
pub(crate) mod replay;
pub(crate) mod repro;
pub(crate) mod shown;
pub(crate) mod slices;
pub(crate) mod terminal;
pub(crate) mod warnings;
