//! Judges: a model (or a file of saved verdicts) that answers a judged check's question about a trace.
//!
//! The contract is 0.4.1's (docs/compatibility.md §13, §7.8): one chat completion per trace and judged
//! check, at temperature 0 with at most 512 tokens, the system message built from the check's question
//! and the user message the trace render (masked when redaction is on, since it leaves the process). The
//! reply is read as JSON `{detected, confidence, reason}` ([`parse`]).
//!
//! A run asks the judge about a whole batch before the batch's checks run, so that calls can overlap:
//! [`Judge::verdicts`] answers what it can from the disk cache, sends the rest on
//! `--judge-concurrency` threads, and returns the verdicts, which the pipeline hands to the judged
//! checks as data (`crate::checks::JudgedVerdicts`). Files are read one after another while a judge
//! runs, so which calls `--judge-max-calls` skips is the same on every run.
//!
//! Module map: [`spec`] (the `--judge` value, the built-in judged checks, the call settings),
//! [`prefetch`] (the [`Judge`]: a batch's requests, the cache, the call budget, the calls, the
//! verdicts), [`stderr`] (the closing lines and warnings), [`listing`] (`faultgate judges`),
//! [`providers`] (spec → endpoint, wire formats), [`client`] (HTTP, retries), [`cache`] (replies on
//! disk), [`render`], [`parse`], [`replay`] (reading saved verdicts; `crate::report::render::replay` writes
//! them), [`custom`] (the `--judge-checks` file), [`error`].

pub(crate) mod cache;
pub(crate) mod client;
pub(crate) mod custom;
pub(crate) mod error;
pub(crate) mod listing;
pub(crate) mod parse;
pub(crate) mod prefetch;
pub(crate) mod providers;
pub(crate) mod render;
pub(crate) mod replay;
pub(crate) mod spec;
pub(crate) mod stderr;

pub(crate) use error::JudgeError;
pub(crate) use listing::listing;
pub(crate) use prefetch::Judge;
pub(crate) use spec::builtin_checks;
pub(crate) use spec::{JudgeOptions, JudgeSpec};
