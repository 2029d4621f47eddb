//! The integration tests, built as one binary: one link instead of one per file.
//!
//! `address_space.rs` stays a binary of its own, since it lowers its own process's address-space
//! limit for the children it runs. Run one file's tests with `cargo test --test it NAME::`.

#[path = "../common/mod.rs"]
mod common;

mod actors;
mod agent_logs;
mod archives;
mod band_edges;
mod budgets;
mod check_fixtures;
mod cli;
mod colour;
mod conform;
mod content_in_logs;
mod doc_examples;
mod doc_refs;
mod expect;
mod explain;
mod follow_links;
mod formats;
mod gate_modes;
mod genai_2026;
mod genai_attributes;
mod genai_conventions;
mod generated_docs;
mod hostile;
mod input_rules;
mod instrumented;
mod judge;
mod layers;
mod merge;
mod messages;
mod new_formats;
mod object_storage;
mod otlp_events;
mod outputs;
mod precheck;
mod progress;
mod readme_checks;
mod recorded_outcomes;
mod report_files;
mod resources;
mod session_shards;
mod sessions;
mod shapes_agree;
mod shell;
mod slices;
mod spill;
mod terminal;
mod trust;
mod trusted_gate;
mod warnings;
mod workflow_check;
