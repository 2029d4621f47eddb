//! faultgate: a release gate for AI agents over recorded traces.
