//! Calibration: how far each check agrees with human labels on the user's own traces.
//!
//! The builder [`Calibration`] takes the labels (`labels`) and every verdict of a check run, one
//! (trace id, scenario key, check, detected) at a time, and produces a [`CalibrationReport`]: one
//! [`CheckRow`] per check with its confusion matrix (`metrics`), one [`TraceRow`] per verdict for
//! drill-down, and an account of every label that did not count. Rendering lives in `render`. This
//! module does not run checks or read traces; the `calibrate` command feeds it the runner's results.
//!
//! ## Matching
//!
//! A verdict takes the label for its check under its trace id, else the one under its scenario key.
//! Unlabelled verdicts are counted per check. Labels that never meet a verdict are reported, never
//! dropped silently: labels for checks that did not run, labels whose key is neither a trace id nor a
//! scenario key of the input, and labels shadowed by a trace-id label for the same check.
//!
//! ## Held-out split
//!
//! With a [`SplitFilter`], each check is also scored on the verdicts whose label key carries that split
//! (the key of the matching label; for an unlabelled verdict, the trace id's split, else the scenario
//! key's). The full-set metrics are always computed too.

pub(crate) mod labels;
pub(crate) mod metrics;
pub(crate) mod parquet;
pub(crate) mod render;

use std::collections::HashMap;

use crate::error::InputError;
pub use labels::{Label, LabelError, LabelSet, Location, read_labels};
pub use metrics::{Confusion, Estimate, KappaUndefined};

/// How many keys a report lists by name before it only counts.
pub const FIRST_KEYS_SHOWN: usize = 5;

/// The held-out subset to score besides the full set (`--split`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitFilter {
    /// The split name the label file gives held-out keys (`test`, `holdout`, ...).
    pub name: String,
}

impl SplitFilter {
    /// Reads `--split NAME` or `--split split=NAME`.
    ///
    /// # Errors
    /// An empty name, or a field other than `split`.
    pub fn parse(arg: &str) -> Result<SplitFilter, InputError> {
        let name = match arg.split_once('=') {
            Some((field, name)) if field.trim() == labels::SPLIT_FIELD => name.trim(),
            Some(_) => {
                return Err(InputError::Usage(format!(
                    "--split: expected NAME or split=NAME, got '{arg}'"
                )));
            }
            None => arg.trim(),
        };
        if name.is_empty() {
            return Err(InputError::Usage("--split: the split name is empty".into()));
        }
        Ok(SplitFilter {
            name: name.to_string(),
        })
    }
}

/// One check's matrix over a set of verdicts, plus the verdicts that had no label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckMetrics {
    /// The verdicts that had a label, scored against it.
    pub confusion: Confusion,
    /// Verdicts whose trace id and scenario key have no label for this check.
    pub unlabelled: u64,
}

impl CheckMetrics {
    fn add(&mut self, label: Option<bool>, detected: bool) {
        match label {
            Some(label) => self.confusion.add(label, detected),
            None => self.unlabelled += 1,
        }
    }
}

/// One check's agreement with the labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRow {
    /// The check's name.
    pub check: String,
    /// Every verdict of the check.
    pub all: CheckMetrics,
    /// The verdicts in the held-out split, when a split was asked for.
    pub held_out: Option<CheckMetrics>,
}

/// One verdict with the label it was scored against, for drill-down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRow {
    /// Id of the scored trace.
    pub trace_id: String,
    /// Scenario key of the trace (redacted as in the report).
    pub scenario: String,
    /// The check's name.
    pub check: String,
    /// Whether the check fired on the trace.
    pub detected: bool,
    /// The human label, if any.
    pub label: Option<bool>,
    /// The label's key (the trace id or the scenario key), if labelled.
    pub label_key: Option<String>,
    /// The split the verdict belongs to, if the label file gives one.
    pub split: Option<String>,
}

/// Keys of the label file that matched neither a trace id nor a scenario key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MissingKeys {
    /// Distinct keys.
    pub keys: usize,
    /// Labels under those keys (for checks that ran).
    pub labels: usize,
    /// The first [`FIRST_KEYS_SHOWN`] keys in file order.
    pub first: Vec<String>,
}

/// What calibration found: per-check metrics, per-verdict rows, and the labels that did not count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalibrationReport {
    /// One row per check, in the order the checks first gave a verdict.
    pub checks: Vec<CheckRow>,
    /// One row per verdict, in input order.
    pub rows: Vec<TraceRow>,
    /// The held-out split scored besides the full set.
    pub split: Option<String>,
    /// Distinct labels in the file.
    pub labels_total: usize,
    /// Labels that scored at least one verdict.
    pub labels_used: usize,
    /// Labels given twice with the same value, counted once.
    pub duplicate_labels: usize,
    /// Labels for checks that gave no verdict: (check, labels), in file order.
    pub checks_not_run: Vec<(String, usize)>,
    /// Labels whose key is not in the input.
    pub missing_keys: MissingKeys,
    /// Labels under a scenario key that lost to a trace-id label for the same check on every trace.
    pub shadowed: usize,
}

/// Builds a [`CalibrationReport`] from labels and verdicts.
#[derive(Debug)]
pub struct Calibration {
    labels: Vec<Label>,
    duplicates: usize,
    by_key: HashMap<String, KeyEntry>,
    used: Vec<bool>,
    split: Option<String>,
    check_index: HashMap<String, usize>,
    last_check: usize,
    checks: Vec<CheckRow>,
    rows: Vec<TraceRow>,
}

#[derive(Debug, Default)]
struct KeyEntry {
    /// Indices into `Calibration::labels`.
    labels: Vec<usize>,
    split: Option<String>,
    /// The key matched a trace id or scenario key of the input.
    seen: bool,
}

impl Calibration {
    /// A calibration against these labels.
    pub fn new(set: LabelSet) -> Calibration {
        let LabelSet {
            labels,
            splits,
            duplicates,
        } = set;
        let mut by_key: HashMap<String, KeyEntry> = HashMap::new();
        for (index, label) in labels.iter().enumerate() {
            by_key
                .entry(label.key.clone())
                .or_default()
                .labels
                .push(index);
        }
        for (key, split) in splits {
            by_key.entry(key).or_default().split = Some(split);
        }
        Calibration {
            used: vec![false; labels.len()],
            labels,
            duplicates,
            by_key,
            split: None,
            check_index: HashMap::new(),
            last_check: 0,
            checks: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Also scores the verdicts of this held-out split; call before adding verdicts.
    pub fn split(&mut self, filter: Option<SplitFilter>) -> &mut Self {
        self.split = filter.map(|f| f.name);
        for row in &mut self.checks {
            row.held_out = self.split.as_ref().map(|_| CheckMetrics::default());
        }
        self
    }

    /// Scores one verdict of `check` on the trace `trace_id` with scenario key `scenario`.
    pub fn add_verdict(&mut self, trace_id: &str, scenario: &str, check: &str, detected: bool) {
        let labels = &self.labels;
        // One map probe per key: the probe marks the key seen and finds its label and split at once.
        let mut probe = |key: &str| {
            self.by_key.get_mut(key).map(|entry| {
                entry.seen = true;
                let label = entry
                    .labels
                    .iter()
                    .copied()
                    .find(|&index| labels[index].check == check);
                (label, entry.split.clone())
            })
        };
        let by_trace = probe(trace_id);
        let by_scenario = if scenario == trace_id {
            None
        } else {
            probe(scenario)
        };
        // The trace id's label wins; an unlabelled verdict takes the trace id's split, else the scenario's.
        let (found, split) = match (by_trace, by_scenario) {
            (Some((Some(index), split)), _) => (Some(index), split),
            (_, Some((Some(index), split))) => (Some(index), split),
            (Some((None, Some(split))), _) => (None, Some(split)),
            (_, Some((None, split))) => (None, split),
            _ => (None, None),
        };
        let (label, label_key) = match found {
            Some(index) => {
                self.used[index] = true;
                let label = &self.labels[index];
                (Some(label.value), Some(label.key.clone()))
            }
            None => (None, None),
        };

        let index = self.check_slot(check);
        let row = &mut self.checks[index];
        row.all.add(label, detected);
        if let (Some(held_out), Some(wanted)) = (&mut row.held_out, &self.split)
            && split.as_ref() == Some(wanted)
        {
            held_out.add(label, detected);
        }
        self.rows.push(TraceRow {
            trace_id: trace_id.to_string(),
            scenario: scenario.to_string(),
            check: check.to_string(),
            detected,
            label,
            label_key,
            split,
        });
    }

    /// The check's row, created on its first verdict. Runners give a check's verdicts in runs, so the
    /// last slot is tried before the map.
    fn check_slot(&mut self, check: &str) -> usize {
        if self
            .checks
            .get(self.last_check)
            .is_some_and(|row| row.check == check)
        {
            return self.last_check;
        }
        let index = match self.check_index.get(check) {
            Some(&index) => index,
            None => {
                self.check_index
                    .insert(check.to_string(), self.checks.len());
                self.checks.push(CheckRow {
                    check: check.to_string(),
                    all: CheckMetrics::default(),
                    held_out: self.split.as_ref().map(|_| CheckMetrics::default()),
                });
                self.checks.len() - 1
            }
        };
        self.last_check = index;
        index
    }

    /// The report; every label is either used or accounted for.
    pub fn finish(self) -> CalibrationReport {
        let mut checks_not_run: Vec<(String, usize)> = Vec::new();
        let mut missing = MissingKeys::default();
        let mut missing_seen: HashMap<&str, ()> = HashMap::new();
        let mut shadowed = 0;
        for (label, used) in self.labels.iter().zip(&self.used) {
            if *used {
                continue;
            }
            if !self.check_index.contains_key(&label.check) {
                match checks_not_run.iter_mut().find(|(c, _)| *c == label.check) {
                    Some((_, count)) => *count += 1,
                    None => checks_not_run.push((label.check.clone(), 1)),
                }
            } else if self.by_key.get(&label.key).is_some_and(|e| !e.seen) {
                missing.labels += 1;
                if missing_seen.insert(&label.key, ()).is_none() {
                    missing.keys += 1;
                    if missing.first.len() < FIRST_KEYS_SHOWN {
                        missing.first.push(label.key.clone());
                    }
                }
            } else {
                shadowed += 1;
            }
        }
        CalibrationReport {
            checks: self.checks,
            rows: self.rows,
            split: self.split,
            labels_total: self.labels.len(),
            labels_used: self.used.iter().filter(|u| **u).count(),
            duplicate_labels: self.duplicates,
            checks_not_run,
            missing_keys: missing,
            shadowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn labels(text: &str) -> LabelSet {
        labels::parse_labels(Path::new("l.csv"), text).unwrap()
    }

    #[test]
    fn split_filter_reads_both_spellings() {
        assert_eq!(SplitFilter::parse("test").unwrap().name, "test");
        assert_eq!(SplitFilter::parse("split=test").unwrap().name, "test");
        assert!(SplitFilter::parse("fold=test").is_err());
        assert!(SplitFilter::parse("split=").is_err());
    }

    #[test]
    fn trace_id_label_wins_over_scenario_label() {
        let mut c = Calibration::new(labels("key,check,label\ns-1,loop,false\nt-1,loop,true\n"));
        c.add_verdict("t-1", "s-1", "loop", true);
        c.add_verdict("t-2", "s-1", "loop", true);
        let r = c.finish();
        assert_eq!(r.checks[0].all.confusion, Confusion::new(1, 1, 0, 0));
        assert_eq!(r.rows[0].label_key.as_deref(), Some("t-1"));
        assert_eq!(r.rows[1].label_key.as_deref(), Some("s-1"));
        assert_eq!((r.labels_used, r.shadowed), (2, 0));
    }

    #[test]
    fn unlabelled_verdicts_are_counted_per_check() {
        let mut c = Calibration::new(labels("key,check,label\nt-1,loop,true\n"));
        c.add_verdict("t-1", "s-1", "loop", true);
        c.add_verdict("t-1", "s-1", "abstention", false);
        c.add_verdict("t-2", "s-2", "loop", false);
        let r = c.finish();
        assert_eq!(r.checks[0].check, "loop");
        assert_eq!(r.checks[0].all.unlabelled, 1);
        assert_eq!(r.checks[1].all.unlabelled, 1);
        assert_eq!(r.checks[1].all.confusion.total(), 0);
    }

    #[test]
    fn labels_that_do_not_count_are_accounted_for() {
        let text = "key,check,label\n\
                    t-1,loop,true\n\
                    t-1,wrong_direction,true\n\
                    s-1,loop,false\n\
                    gone-1,loop,true\n\
                    gone-1,abstention,false\n\
                    gone-2,loop,false\n\
                    gone-3,wrong_direction,false\n";
        let mut c = Calibration::new(labels(text));
        c.add_verdict("t-1", "s-1", "loop", true);
        c.add_verdict("t-1", "s-1", "abstention", false);
        let r = c.finish();
        assert_eq!(r.labels_total, 7);
        assert_eq!(r.labels_used, 1);
        assert_eq!(r.checks_not_run, [("wrong_direction".to_string(), 2)]);
        assert_eq!(
            r.missing_keys,
            MissingKeys {
                keys: 2,
                labels: 3,
                first: vec!["gone-1".into(), "gone-2".into()],
            }
        );
        // s-1 / loop is in the input but the trace-id label took its only verdict.
        assert_eq!(r.shadowed, 1);
    }

    #[test]
    fn held_out_split_scores_only_its_keys() {
        let text = "key,check,label,split\n\
                    t-1,loop,true,test\n\
                    t-2,loop,false,train\n\
                    t-3,loop,false,test\n";
        let mut c = Calibration::new(labels(text));
        c.split(Some(SplitFilter::parse("test").unwrap()));
        c.add_verdict("t-1", "s", "loop", true);
        c.add_verdict("t-2", "s", "loop", true);
        c.add_verdict("t-3", "s", "loop", false);
        c.add_verdict("t-4", "s", "loop", false);
        let r = c.finish();
        let row = &r.checks[0];
        assert_eq!(row.all.confusion, Confusion::new(1, 1, 1, 0));
        assert_eq!(row.all.unlabelled, 1);
        assert_eq!(row.held_out.unwrap().confusion, Confusion::new(1, 0, 1, 0));
        assert_eq!(row.held_out.unwrap().unlabelled, 0);
        assert_eq!(r.rows[1].split.as_deref(), Some("train"));
        assert_eq!(r.split.as_deref(), Some("test"));
    }

    #[test]
    fn split_of_an_unlabelled_verdict_comes_from_its_trace_or_scenario() {
        let text = "key,check,label,split\ns-1,abstention,false,test\n";
        let mut c = Calibration::new(labels(text));
        c.split(Some(SplitFilter::parse("test").unwrap()));
        c.add_verdict("t-1", "s-1", "loop", false);
        let r = c.finish();
        assert_eq!(r.rows[0].split.as_deref(), Some("test"));
        assert_eq!(r.checks[0].held_out.unwrap().unlabelled, 1);
        // The abstention label is for a check that did not run.
        assert_eq!(r.checks_not_run, [("abstention".to_string(), 1)]);
    }

    #[test]
    fn duplicate_labels_are_reported() {
        let mut c = Calibration::new(labels("key,check,label\nt,loop,1\nt,loop,yes\n"));
        c.add_verdict("t", "s", "loop", true);
        let r = c.finish();
        assert_eq!((r.labels_total, r.duplicate_labels), (1, 1));
    }

    /// The shipped example traces, run with `--golden examples/golden.json`: which checks fired on
    /// which trace (as faultgate 0.4.1 reports them), scored against `examples/labels.json`.
    fn example_report(split: Option<&str>) -> CalibrationReport {
        const CHECKS: [&str; 8] = [
            "search_loop",
            "abstention",
            "policy",
            "repeated_call",
            "unrecovered_tool_error",
            "context_overflow",
            "wrong_answer",
            "truncation",
        ];
        const TRACES: [(&str, &str, &[&str]); 5] = [
            (
                "fc2cdab304bd903931b3e698c585e8fb",
                "p-da566af9157f",
                &["search_loop"],
            ),
            (
                "6d1f9d67a2d4f7d2f0d0793b00931995",
                "p-bd4d333e967c",
                &["abstention", "wrong_answer"],
            ),
            ("8bf3879339eba84583941e17ec56b3de", "p-273ca74e6e50", &[]),
            ("3a9e507a0f6dd628395d642ce5db5a3e", "p-0fa9aeb3af7f", &[]),
            (
                "2ab3b6c1e8913b1951ea564e20404848",
                "p-d36f174afef1",
                &["wrong_answer", "truncation"],
            ),
        ];
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/labels.json");
        let mut c = Calibration::new(read_labels(&path).unwrap());
        c.split(split.map(|s| SplitFilter::parse(s).unwrap()));
        for (trace, scenario, fired) in TRACES {
            for check in CHECKS {
                c.add_verdict(trace, scenario, check, fired.contains(&check));
            }
        }
        c.finish()
    }

    #[test]
    fn example_labels_score_the_shipped_traces() {
        let r = example_report(Some("test"));
        let by_name = |name: &str| r.checks.iter().find(|row| row.check == name).unwrap();
        assert_eq!(
            by_name("search_loop").all.confusion,
            Confusion::new(1, 0, 4, 0)
        );
        // The abstaining trace has no wrong answer in it, but the golden check counts it as one.
        assert_eq!(
            by_name("wrong_answer").all.confusion,
            Confusion::new(1, 1, 2, 0)
        );
        assert_eq!(by_name("wrong_answer").all.unlabelled, 1);
        assert_eq!(by_name("policy").all.unlabelled, 5);
        assert_eq!(r.checks_not_run, [("wrong_direction".to_string(), 1)]);
        assert_eq!((r.labels_used, r.shadowed, r.missing_keys.keys), (28, 0, 0));
        let table = render::render_table(&r);
        let notes = render::notes(&r);
        println!("{table}\n{}", notes.join("\n"));
        assert!(table.contains("\nsplit test\n"));
        assert_eq!(
            notes,
            [
                "note: wrong_answer fired on every labelled trace in split test; κ 0.00 means no better than chance",
                "note: 1 label(s) for checks that did not run: wrong_direction (1)",
            ]
        );
    }
}
