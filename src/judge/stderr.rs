//! What a judged run says on stderr: the lines closing each run, from its counters, and the warning
//! when the reply cache cannot be written.

use std::path::Path;

/// Counters of one run, for the closing stderr line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    pub verdicts: usize,
    pub calls: usize,
    pub cache_hits: usize,
    pub retries: usize,
    pub skipped: usize,
    pub missing: usize,
}

/// The stderr lines closing a judged run of the judge `name`: `replayed` for a `replay:` judge, and
/// `max_calls` the `--judge-max-calls` budget.
pub(crate) fn closing_lines(
    name: &str,
    replayed: bool,
    max_calls: Option<usize>,
    stats: &RunStats,
) -> Vec<String> {
    let mut lines = Vec::new();
    if replayed {
        lines.push(format!(
            "judge {name}: {} verdict(s) replayed",
            stats.verdicts
        ));
    } else {
        lines.push(format!(
            "judge {name}: {} verdict(s), {} call(s), {} from cache, {} retried",
            stats.verdicts, stats.calls, stats.cache_hits, stats.retries
        ));
    }
    if stats.skipped > 0 {
        lines.push(format!(
            "warning: {} judged verdict(s) skipped: --judge-max-calls {} reached; they count as not detected",
            stats.skipped,
            max_calls.unwrap_or_default()
        ));
    }
    if stats.missing > 0 {
        lines.push(format!(
            "warning: {} judged verdict(s) have no line in the replay file; they count as not detected",
            stats.missing
        ));
    }
    lines
}

/// The warning, printed once per run, when a reply cannot be stored in the cache folder `dir`.
pub(crate) fn cache_warning(dir: &Path, error: &std::io::Error) -> String {
    format!(
        "warning: cannot write the judge cache {}: {error}; going on without it",
        crate::error::display_path(dir)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_closes_with_its_counts_and_a_warning_per_shortfall() {
        let stats = RunStats {
            verdicts: 5,
            calls: 2,
            cache_hits: 1,
            retries: 3,
            ..RunStats::default()
        };
        assert_eq!(
            closing_lines("openai:m", false, None, &stats),
            ["judge openai:m: 5 verdict(s), 2 call(s), 1 from cache, 3 retried"]
        );
        let short = RunStats {
            skipped: 2,
            missing: 1,
            ..stats
        };
        assert_eq!(
            closing_lines("replay", true, Some(3), &short),
            [
                "judge replay: 5 verdict(s) replayed",
                "warning: 2 judged verdict(s) skipped: --judge-max-calls 3 reached; they count as not detected",
                "warning: 1 judged verdict(s) have no line in the replay file; they count as not detected",
            ]
        );
    }
}
