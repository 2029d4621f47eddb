//! Followed span links (`--follow-links`): a trace and the traces its spans link to, checked as one
//! unit.
//!
//! An OTLP span link points at a span of another trace: a run continued in a new trace (a
//! conversation turn picked up by another request) leaves its causal context there. With the flag,
//! the traces a trace's spans link to are joined into the trace that links to them, transitively: the
//! unit takes the linking trace's id, agent and root (so its scenario key, prompt and answer), and
//! its root span comes first, then every other span of the joined traces in start order (ties in
//! join order), as a trace's spans are ordered. A trace linked from several traces joins the first
//! one in input order (file order, then trace order); a link that would close a cycle is not
//! followed.
//!
//! The links are found by a first read of every file, which keeps only each linking trace's id, its
//! file and the ids it links to. The run then reads its files as without the flag, except that each
//! trace of a unit is written to disk as it is read, into the bucket files of a session run
//! ([`SessionSpill`]) keyed by its unit's id; once every file is read the buckets are read back one at
//! a time and each unit is joined and checked. Memory holds the link graph, never the traces.
//!
//! Example: trace `a`'s span links to trace `b`, whose tool call fails; `a` and `b` are one unit `a`,
//! whose steps are `a`'s and `b`'s in start order.
//!
//! Limits: links are followed within the run's input only; a linked trace that no file holds, or that
//! joined another trace first, leaves its link unjoined, and the run warns about the linking trace as
//! without the flag.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::SessionSpill;
use crate::table::record::{TraceRecord, root_position};

/// The link graph of a run: which unit each trace of a unit belongs to.
#[derive(Debug, Default)]
pub struct LinkUnits {
    /// Each linking or linked trace's unit (the id of the trace at the top of its links).
    unit_of: HashMap<String, String>,
    /// The file (its place in the run) each linking trace was first read from, for the warnings.
    file_of: HashMap<String, usize>,
}

impl crate::table::TraceUnits for LinkUnits {
    fn unit_of(&self, trace_id: &str) -> Option<&str> {
        LinkUnits::unit_of(self, trace_id)
    }
}

impl LinkUnits {
    /// The units of a run whose linking traces are `linking` (trace id, its file, the ids it links
    /// to), in input order: each linked trace joins the first trace that links to it.
    pub(crate) fn new(linking: Vec<(String, usize, Vec<String>)>) -> LinkUnits {
        let mut parent: HashMap<String, String> = HashMap::new();
        fn top(parent: &HashMap<String, String>, id: &str) -> String {
            let mut id = id;
            // No cycle is ever recorded, so the walk ends.
            while let Some(up) = parent.get(id) {
                id = up;
            }
            id.to_string()
        }
        let mut file_of = HashMap::new();
        let mut linkers = Vec::new();
        for (linker, file, targets) in linking {
            file_of.entry(linker.clone()).or_insert(file);
            for target in targets {
                if target == linker
                    || parent.contains_key(&target)
                    || top(&parent, &linker) == target
                {
                    continue;
                }
                parent.insert(target, linker.clone());
            }
            linkers.push(linker);
        }
        let unit_of = parent
            .keys()
            .chain(&linkers)
            .map(|id| (id.clone(), top(&parent, id)))
            .collect();
        LinkUnits { unit_of, file_of }
    }

    /// The unit of trace `id`; `None` for a trace that neither links nor is linked to.
    pub(crate) fn unit_of(&self, id: &str) -> Option<&str> {
        self.unit_of.get(id).map(String::as_str)
    }
}

/// One followed-links run: its link graph, once the first read found it, and the spill its units'
/// traces wait in.
#[derive(Debug)]
pub struct LinkRun {
    pub(crate) spill: Arc<SessionSpill>,
    units: OnceLock<Arc<LinkUnits>>,
}

impl LinkRun {
    /// A run whose units' traces wait in `dir` (the system's temporary directory when `None`).
    pub fn new(dir: Option<PathBuf>) -> LinkRun {
        LinkRun {
            spill: Arc::new(SessionSpill::new(dir)),
            units: OnceLock::new(),
        }
    }

    /// The link graph, found once per run by `find`.
    pub(crate) fn units_or(&self, find: impl FnOnce() -> LinkUnits) -> Arc<LinkUnits> {
        self.units.get_or_init(|| Arc::new(find())).clone()
    }

    /// The link graph, once found.
    pub(crate) fn units(&self) -> Option<Arc<LinkUnits>> {
        self.units.get().cloned()
    }
}

/// A unit read back: the joined trace, and the linking traces among its parts whose links did not
/// all join it (by file).
pub(crate) struct Joined {
    pub trace: TraceRecord<'static>,
    pub unjoined_in: Vec<usize>,
}

/// Groups the traces of a bucket into their units and joins each; the units in order of their
/// linking trace's start, then id, so the order the threads spilled them in changes nothing.
pub(crate) fn join(traces: Vec<TraceRecord<'static>>, units: &LinkUnits) -> Vec<Joined> {
    let mut by_unit: HashMap<String, Vec<TraceRecord<'static>>> = HashMap::new();
    for trace in traces {
        let unit = units
            .unit_of(&trace.trace_id)
            .unwrap_or(&trace.trace_id)
            .to_string();
        by_unit.entry(unit).or_default().push(trace);
    }
    let mut joined: Vec<(i64, String, Joined)> = by_unit
        .into_iter()
        .map(|(id, parts)| {
            let unit = join_unit(&id, parts, units);
            (start(&unit.trace), id, unit)
        })
        .collect();
    joined.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    joined.into_iter().map(|(_, _, unit)| unit).collect()
}

/// Joins the parts of unit `id`: the linking trace's root first, then every other span in start
/// order, the parts taken linking trace first, then by start and id.
fn join_unit(id: &str, mut parts: Vec<TraceRecord<'static>>, units: &LinkUnits) -> Joined {
    parts.sort_by(|a, b| {
        let key = |t: &TraceRecord<'_>| (t.trace_id != id, start(t), t.trace_id.to_string());
        key(a).cmp(&key(b))
    });
    let ids: HashSet<&str> = parts.iter().map(|p| p.trace_id.as_ref()).collect();
    let mut unjoined_in: Vec<usize> = parts
        .iter()
        .filter(|part| {
            crate::table::derive::linked_traces(&part.spans).is_some_and(|list| {
                serde_json::from_str::<Vec<String>>(&list)
                    .unwrap_or_default()
                    .iter()
                    .any(|target| !ids.contains(target.as_str()))
            })
        })
        .filter_map(|part| units.file_of.get(part.trace_id.as_ref()).copied())
        .collect();
    unjoined_in.sort_unstable();
    let mut parts = parts.into_iter();
    let Some(mut whole) = parts.next() else {
        return Joined {
            trace: TraceRecord::default(),
            unjoined_in,
        };
    };
    whole.trace_id = id.to_string().into();
    let root = root_position(&whole.spans).map(|r| whole.spans.remove(r));
    for part in parts {
        whole.skipped_attributes += part.skipped_attributes;
        whole.spans.extend(part.spans);
    }
    whole.spans.sort_by_key(|s| s.start_ns);
    if let Some(root) = root {
        whole.spans.insert(0, root);
    }
    Joined {
        trace: whole,
        unjoined_in,
    }
}

/// When a trace started: its root's start, else its earliest recorded start (0 when none).
fn start(trace: &TraceRecord<'_>) -> i64 {
    root_position(&trace.spans)
        .map(|r| trace.spans[r].start_ns)
        .or_else(|| trace.spans.iter().map(|s| s.start_ns).min())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(list: &[(&str, usize, &[&str])]) -> LinkUnits {
        LinkUnits::new(
            list.iter()
                .map(|(id, file, targets)| {
                    (
                        id.to_string(),
                        *file,
                        targets.iter().map(ToString::to_string).collect(),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn linked_traces_join_the_first_linking_trace_transitively_without_cycles() {
        let units = links(&[
            ("d", 0, &["c"]),
            ("b", 0, &["c", "e"]),
            ("a", 1, &["b"]),
            ("e", 1, &["a"]),
            ("x", 1, &["x"]),
        ]);
        assert_eq!(units.unit_of("a"), Some("a"));
        assert_eq!(units.unit_of("b"), Some("a"));
        assert_eq!(units.unit_of("e"), Some("a"));
        // `c` joined `d`, the first trace linking to it.
        assert_eq!(units.unit_of("c"), Some("d"));
        assert_eq!(units.unit_of("d"), Some("d"));
        assert_eq!(units.unit_of("x"), Some("x"));
        assert_eq!(units.unit_of("y"), None);
    }
}
