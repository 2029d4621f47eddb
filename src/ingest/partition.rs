//! Time partitions in input paths, as the Collector's S3 exporter writes them
//! (`…/year=2026/month=11/day=02/hour=10/minute=05/traces_….json.gz`), and the `--since`/`--until`
//! window that selects them.
//!
//! A partition spans from its time to the end of its finest field (a `day=` partition is the whole
//! day). It is read when that span meets the window: it ends after `--since` and starts before
//! `--until`. A path with no `year=` segment carries no time; it is read whatever the window, and the
//! run's note counts such paths.

use std::path::Path;

/// A time as minutes since the Unix epoch (UTC): the finest field a partition path has.
type Minutes = i64;

/// The window given on the command line: `[since, until)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// Partitions that end at or before this are left out.
    pub since: Option<Minutes>,
    /// Partitions that start at or after this are left out.
    pub until: Option<Minutes>,
}

/// Parses `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDTHH`, `YYYY-MM-DDTHH:MM` (a space may stand for
/// the `T`, and a trailing `Z` or `:SS` is allowed) as UTC minutes since the epoch.
pub fn parse_time(text: &str) -> Result<Minutes, String> {
    let bad = || {
        format!("{text:?} is not a UTC time such as 2026-11-02, 2026-11-02T10 or 2026-11-02T10:30Z")
    };
    let trimmed = text.trim().trim_end_matches(['Z', 'z']);
    let (date, time) = match trimmed.split_once(['T', 't', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (trimmed, None),
    };
    let mut fields = [0i64, 1, 1, 0, 0];
    let date_parts: Vec<&str> = date.split('-').collect();
    if date_parts.is_empty() || date_parts.len() > 3 || (time.is_some() && date_parts.len() < 3) {
        return Err(bad());
    }
    let time_parts: Vec<&str> = time.map(|t| t.split(':').collect()).unwrap_or_default();
    if time_parts.len() > 3 {
        return Err(bad());
    }
    for (i, part) in date_parts
        .iter()
        .chain(time_parts.iter().take(2))
        .enumerate()
    {
        let expected = if i == 0 { 4 } else { 2 };
        if part.len() != expected || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        fields[i] = part.parse().map_err(|_| bad())?;
    }
    if let Some(seconds) = time_parts.get(2)
        && !(seconds.len() == 2 && seconds.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(bad());
    }
    let [year, month, day, hour, minute] = fields;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return Err(bad());
    }
    Ok(minutes(year, month, day, hour, minute))
}

/// The span `[start, end)` of the partition `path` lies in, if its path carries a time.
pub(crate) fn span(path: &Path) -> Option<(Minutes, Minutes)> {
    let text = path.to_string_lossy();
    let mut fields: [Option<i64>; 5] = [None; 5];
    const NAMES: [&str; 5] = ["year=", "month=", "day=", "hour=", "minute="];
    for segment in text.split('/') {
        for (i, name) in NAMES.iter().enumerate() {
            if let Some(value) = segment.strip_prefix(name)
                && let Ok(value) = value.parse::<i64>()
            {
                fields[i] = Some(value);
            }
        }
    }
    let year = fields[0]?;
    // The finest field given in order from the year: a `day=` without `month=` is not a time.
    let depth = fields.iter().take_while(|f| f.is_some()).count();
    let value = |i: usize, default: i64| fields[i].filter(|_| i < depth).unwrap_or(default);
    let (month, day, hour, minute) = (value(1, 1), value(2, 1), value(3, 0), value(4, 0));
    let start = minutes(year, month, day, hour, minute);
    let end = match depth {
        1 => minutes(year + 1, 1, 1, 0, 0),
        2 if month == 12 => minutes(year + 1, 1, 1, 0, 0),
        2 => minutes(year, month + 1, 1, 0, 0),
        3 => start + 24 * 60,
        4 => start + 60,
        _ => start + 1,
    };
    Some((start, end))
}

impl TimeWindow {
    /// Whether a bound was given: without one every file is read and none is noted as untimed.
    pub(crate) fn is_bounded(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Whether a partition spanning `[start, end)` meets the window.
    pub(crate) fn meets(&self, (start, end): (Minutes, Minutes)) -> bool {
        self.since.is_none_or(|since| end > since) && self.until.is_none_or(|until| start < until)
    }
}

/// Minutes since the epoch of a UTC civil time.
fn minutes(year: i64, month: i64, day: i64, hour: i64, minute: i64) -> Minutes {
    let days = crate::ingest::formats::common::days_from_civil(year, month, day);
    (days * 24 + hour) * 60 + minute
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_at_every_precision() {
        assert_eq!(parse_time("1970-01-01"), Ok(0));
        assert_eq!(parse_time("1970-01-02T01:30Z"), Ok(24 * 60 + 90));
        assert_eq!(parse_time("1970-01-02 01:30:59"), Ok(24 * 60 + 90));
        assert_eq!(parse_time("2026-11"), parse_time("2026-11-01T00:00"));
        assert_eq!(
            parse_time("2000-03-01").unwrap() - parse_time("2000-02-28").unwrap(),
            2 * 1440
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-1-1",
            "2026-11-02T25",
            "2026T10",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn partitions_span_their_finest_field_and_meet_the_window() {
        let day = span(Path::new("s3://b/p/year=2026/month=11/day=02/x.json")).unwrap();
        assert_eq!(
            day,
            (
                parse_time("2026-11-02").unwrap(),
                parse_time("2026-11-03").unwrap()
            )
        );
        let minute = span(Path::new(
            "y/year=2026/month=12/day=31/hour=23/minute=59/x.binpb",
        ))
        .unwrap();
        assert_eq!(minute.1 - minute.0, 1);
        let month = span(Path::new("year=2026/month=12/x.json")).unwrap();
        assert_eq!(month.1, parse_time("2027-01-01").unwrap());
        assert_eq!(span(Path::new("s3://b/2026/11/02/x.json")), None);
        let window = TimeWindow {
            since: parse_time("2026-11-02T12").ok(),
            until: parse_time("2026-11-03").ok(),
        };
        assert!(window.meets(day));
        let next = span(Path::new("year=2026/month=11/day=03/x.json")).unwrap();
        assert!(!window.meets(next));
        let before = span(Path::new("year=2026/month=11/day=02/hour=11/x.json")).unwrap();
        assert!(!window.meets(before));
    }
}
