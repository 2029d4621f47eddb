//! Expected actions: per scenario key, the calls a run should make and must not make, and how the
//! calls it made are held against them (`--expect FILE`, the `expected_actions` check).
//!
//! - `file`: the expectations file as written ([`ExpectFile`]) and compiled ([`Expectations`]).
//! - `args`: arguments compared as canonical JSON, and the per-argument matchers.
//! - `read_only`: which tools change nothing, so that only state-changing calls are compared.
//! - `trajectory`: the comparison itself, in the four modes.
//! - [`import`]: expectations from benchmark exports (`faultgate expect import`).
//! - [`draft`]: expectations from what baseline runs agree on (`faultgate expect draft`).

pub(crate) mod args;
pub mod draft;
pub(crate) mod file;
pub mod import;
pub(crate) mod read_only;
pub(crate) mod trajectory;

pub use file::{CallFile, ExpectError, ExpectFile, Expectations, Mode, ScenarioFile};
pub use read_only::DEFAULT_VERBS;
