//! Trace identity across the files of one run: one rule, applied to every format.
//!
//! A trace is its trace id within one run. Spans of one trace id found in several files of the run are
//! one trace (the Collector's file exporter splits a trace across the files it rotates through). A span
//! found again with the same trace id, span id and content is the same span: it is dropped and counted.
//! The same span id with different content means the trace id was reused by a different trace: the
//! later file's trace is kept apart, under the id `<trace id>@<file>`, and a warning names both. The
//! file is named by the shortest end of its path that no other file of the run shares (its name,
//! else its folder and name, ...): never more of the path than the command line gave.
//! Within one file, traces are read as 0.4.1 reads them (each format groups its spans by trace id).
//!
//! The rule is applied once the files are read: each file is read once and gives the hashes of its
//! trace ids; the ids behind a hash two files list are confirmed ([`SharedIds`], over those files
//! alone), the shared traces' parts are decoded again whole and taken out of their files' results, and
//! [`merge`] joins the parts. (A run with a judge lists every file's ids first and keeps the parts whole
//! as it reads.) Memory holds 8 bytes per trace and the shared traces' parts, not the archive.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::error::display_path;
use crate::table::record::{SpanRecord, TraceRecord, is_content_record, join_content};

/// The trace ids of a run's files, told file by file, and those found in more than one file.
#[derive(Debug, Default)]
pub(crate) struct SharedIds {
    first_file: HashMap<String, usize>,
    shared: HashSet<String>,
}

impl SharedIds {
    /// Adds the ids of file number `file` (repeats allowed).
    pub(crate) fn add(&mut self, file: usize, ids: Vec<String>) {
        for id in ids {
            match self.first_file.get(&id) {
                Some(&f) if f != file => {
                    self.shared.insert(id);
                }
                Some(_) => {}
                None => {
                    self.first_file.insert(id, file);
                }
            }
        }
    }

    /// The ids found in more than one file.
    pub(crate) fn shared(self) -> HashSet<String> {
        self.shared
    }
}

/// Traces merged across files, and what the merge found.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    /// One trace per identity, in order of first appearance (file order, then trace order).
    pub traces: Vec<TraceRecord<'static>>,
    /// Exact duplicate spans dropped, with the first one's trace id, span id and file.
    pub duplicates: usize,
    pub first_duplicate: Option<(String, String, PathBuf)>,
    /// Trace ids reused by different traces: the id, the clashing span id, the earlier file and the
    /// later one (whose trace was renamed), and the later trace's new id.
    pub clashes: Vec<(String, String, PathBuf, PathBuf, String)>,
    /// Content records (OTLP log records) whose span no file holds: the trace id and span id of each.
    pub unjoined: Vec<(String, String)>,
}

impl Merged {
    /// The input warnings the merge raises.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((trace, span, file)) = &self.first_duplicate {
            out.push(format!(
                "{} duplicate span(s) dropped: the same span (trace id, span id and content) was read from more than one file (first: trace {trace} span {span} in {})",
                self.duplicates,
                display_path(file)
            ));
        }
        for (trace, span, earlier, later, renamed) in &self.clashes {
            out.push(format!(
                "trace id {trace} is used by different traces in {} and {} (span {span} differs): they are kept apart, the second as {renamed}",
                display_path(earlier),
                display_path(later),
            ));
        }
        if let Some((trace, span)) = self.unjoined.first() {
            out.push(format!(
                "{} log record(s) carry GenAI content for spans no input of the run holds; their content was not read (first: trace {trace} span {span})",
                self.unjoined.len()
            ));
        }
        out
    }
}

/// The key a span is held under in a group: its id, or for a content record (which is no span, and
/// never clashes with its span) its id marked as a content record's.
fn key(span: &SpanRecord<'_>) -> String {
    if is_content_record(span) {
        format!("{}{}", span.name, span.span_id)
    } else {
        span.span_id.to_string()
    }
}

/// A trace being merged: its spans, and the spans' ids (with the position of each) for lookups.
struct Group {
    trace: TraceRecord<'static>,
    by_id: HashMap<String, Vec<usize>>,
    first_file: usize,
}

impl Group {
    fn new(trace: TraceRecord<'static>, file: usize) -> Group {
        let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, s) in trace.spans.iter().enumerate() {
            by_id.entry(key(s)).or_default().push(i);
        }
        Group {
            trace,
            by_id,
            first_file: file,
        }
    }

    /// The first span of `part` whose id the group holds with other content, if any.
    fn clash<'p>(&self, part: &'p TraceRecord<'static>) -> Option<&'p SpanRecord<'static>> {
        part.spans
            .iter()
            .filter(|s| !is_content_record(s))
            .find(|s| {
                self.by_id
                    .get(s.span_id.as_ref())
                    .is_some_and(|held| held.iter().all(|&i| !same_span(&self.trace.spans[i], s)))
            })
    }

    /// Adds the spans of `part` the group does not hold yet; returns the first duplicate's id and how
    /// many were dropped.
    fn absorb(&mut self, part: TraceRecord<'static>) -> (usize, Option<String>) {
        let mut dropped = 0;
        let mut first = None;
        for span in part.spans {
            let held = self
                .by_id
                .get(&key(&span))
                .is_some_and(|held| held.iter().any(|&i| same_span(&self.trace.spans[i], &span)));
            if held {
                dropped += 1;
                first.get_or_insert_with(|| span.span_id.to_string());
                continue;
            }
            self.by_id
                .entry(key(&span))
                .or_default()
                .push(self.trace.spans.len());
            self.trace.spans.push(span);
        }
        self.trace.skipped_attributes += part.skipped_attributes;
        // The first file's resource keeps its values, as the first resource of one file's does.
        self.trace.resource.add_missing(&part.resource);
        (dropped, first)
    }
}

/// The shortest end of `files[file]`'s path (whole components) that is the end of no other file's
/// path; the whole path as given when every end is shared (the same file given twice).
fn short_name(files: &[PathBuf], file: usize) -> String {
    let shown = display_path(&files[file]);
    let parts: Vec<&str> = shown.split('/').filter(|p| !p.is_empty()).collect();
    let others: Vec<String> = files
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != file)
        .map(|(_, f)| format!("/{}", display_path(f).trim_start_matches('/')))
        .collect();
    (1..parts.len())
        .map(|k| parts[parts.len() - k..].join("/"))
        .find(|end| {
            let tail = format!("/{end}");
            !others.iter().any(|o| o.ends_with(&tail))
        })
        .unwrap_or(shown)
}

fn same_span(a: &SpanRecord<'_>, b: &SpanRecord<'_>) -> bool {
    a == b
}

/// Merges the parts of shared traces (each a trace as one file holds it, with the file's position),
/// given in file order, by the rule of this module. Merged spans are ordered by start (stably, so
/// ties keep file order); the agent is the first part's.
pub(crate) fn merge(parts: Vec<(usize, TraceRecord<'static>)>, files: &[PathBuf]) -> Merged {
    let mut merged = Merged::default();
    // Groups of one trace id, in order of first appearance; a clash opens a new group.
    let mut groups: Vec<Group> = Vec::new();
    let mut by_trace: HashMap<String, Vec<usize>> = HashMap::new();
    for (file, part) in parts {
        let id = part.trace_id.to_string();
        let candidates = by_trace.entry(id.clone()).or_default();
        let fits = candidates
            .iter()
            .copied()
            .find(|&g| groups[g].clash(&part).is_none());
        match fits {
            Some(g) => {
                let (dropped, first) = groups[g].absorb(part);
                merged.duplicates += dropped;
                if merged.first_duplicate.is_none()
                    && let Some(span) = first
                {
                    merged.first_duplicate = Some((id, span, files[file].clone()));
                }
            }
            None => {
                let renamed = format!("{id}@{}", short_name(files, file));
                if let Some(&g) = candidates.first() {
                    let span = groups[g]
                        .clash(&part)
                        .map(|s| s.span_id.to_string())
                        .unwrap_or_default();
                    merged.clashes.push((
                        id.clone(),
                        span,
                        files[groups[g].first_file].clone(),
                        files[file].clone(),
                        renamed.clone(),
                    ));
                }
                let mut part = part;
                // The later file's trace keeps a name the warning can point at.
                if !candidates.is_empty() {
                    part.trace_id = renamed.into();
                }
                candidates.push(groups.len());
                groups.push(Group::new(part, file));
            }
        }
    }
    // Log records join their spans once every part is in; a trace of log records alone is no trace.
    let mut unjoined = Vec::new();
    merged.traces = groups
        .into_iter()
        .filter_map(|mut g| {
            let id = g.trace.trace_id.to_string();
            unjoined.extend(
                join_content(&mut g.trace)
                    .into_iter()
                    .map(|s| (id.clone(), s)),
            );
            g.trace.spans.sort_by_key(|s| s.start_ns);
            (!g.trace.spans.is_empty()).then_some(g.trace)
        })
        .collect();
    merged.unjoined = unjoined;
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: &str, start: i64, name: &str) -> SpanRecord<'static> {
        SpanRecord {
            span_id: id.to_string().into(),
            name: name.to_string().into(),
            start_ns: start,
            ..SpanRecord::default()
        }
    }

    fn trace(id: &str, spans: Vec<SpanRecord<'static>>) -> TraceRecord<'static> {
        TraceRecord {
            trace_id: id.to_string().into(),
            agent: "a".into(),
            spans,
            skipped_attributes: 0,
            resource: Default::default(),
        }
    }

    fn files() -> Vec<PathBuf> {
        vec!["a.json".into(), "b.json".into(), "c.json".into()]
    }

    #[test]
    fn ids_shared_between_files_only() {
        let mut ids = SharedIds::default();
        let owned = |ids: &[&str]| ids.iter().map(ToString::to_string).collect();
        ids.add(0, owned(&["t1", "t2", "t2"]));
        ids.add(1, owned(&["t3", "t1"]));
        ids.add(2, owned(&["t4"]));
        assert_eq!(
            ids.shared(),
            HashSet::from(["t1".to_string()]),
            "t2 repeats within one file only"
        );
    }

    #[test]
    fn split_traces_merge_and_exact_duplicates_are_dropped() {
        let parts = vec![
            (
                0,
                trace("t", vec![span("root", 1, "agent"), span("llm", 2, "chat")]),
            ),
            (
                1,
                trace("t", vec![span("tool", 3, "search"), span("llm", 2, "chat")]),
            ),
        ];
        let merged = merge(parts, &files());
        assert_eq!(merged.traces.len(), 1);
        let names: Vec<&str> = merged.traces[0]
            .spans
            .iter()
            .map(|s| s.name.as_ref())
            .collect();
        assert_eq!(names, ["agent", "chat", "search"]);
        assert_eq!(merged.duplicates, 1);
        assert!(merged.clashes.is_empty());
        assert_eq!(merged.warnings().len(), 1);
        assert!(merged.warnings()[0].contains("trace t span llm in b.json"));
    }

    #[test]
    fn a_reused_id_with_other_content_stays_a_different_trace() {
        let parts = vec![
            (0, trace("t", vec![span("root", 1, "agent")])),
            (1, trace("t", vec![span("root", 5, "other agent")])),
            (2, trace("t", vec![span("extra", 9, "late")])),
        ];
        let merged = merge(parts, &files());
        let ids: Vec<&str> = merged.traces.iter().map(|t| t.trace_id.as_ref()).collect();
        assert_eq!(ids, ["t", "t@b.json"]);
        assert_eq!(
            merged.traces[0].spans.len(),
            2,
            "c.json's span joins the first trace"
        );
        assert_eq!(merged.clashes.len(), 1);
        assert!(merged.warnings()[0].contains("kept apart, the second as t@b.json"));
    }

    #[test]
    fn a_renamed_id_names_its_file_by_the_shortest_end_of_its_path() {
        let files: Vec<PathBuf> = vec![
            "/home/u/runs/airline/x.json".into(),
            "/home/u/runs/retail/x.json".into(),
            "/home/u/runs/retail/y.json".into(),
        ];
        let parts = vec![
            (0, trace("t", vec![span("root", 1, "agent")])),
            (1, trace("t", vec![span("root", 5, "other agent")])),
            (2, trace("t", vec![span("root", 7, "third agent")])),
        ];
        let merged = merge(parts, &files);
        let ids: Vec<&str> = merged.traces.iter().map(|t| t.trace_id.as_ref()).collect();
        assert_eq!(ids, ["t", "t@retail/x.json", "t@y.json"]);
        assert!(merged.warnings()[1].ends_with("the second as t@y.json"));
        // The same path twice has no shorter end of its own: it is named whole.
        assert_eq!(
            short_name(&["a/x.json".into(), "a/x.json".into()], 1),
            "a/x.json"
        );
    }
}
