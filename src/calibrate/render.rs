//! Calibration output for people and programs: the terminal table, its notes, and the JSON report.
//!
//! Reads only a [`CalibrationReport`]; the Parquet tables live in `calibrate::parquet`.
//!
//! ## Terminal
//!
//! One table per scored set (all verdicts, then the held-out split when asked), columns
//! `check n pos TP FP TN FN TPR [95% CI] TNR [95% CI] precision κ unlabelled`, two spaces apart, rates
//! as `.2f`. An undefined value prints `—`; an undefined κ prints `— (<why>)`, the notation of
//! docs/calibration.md.
//!
//! ## Wire format (JSON)
//!
//! [`CalibrationJson`]: `split`, `labels` (counts, checks not run, keys not in the input), and per
//! check the metrics over all verdicts and over the held-out split. Undefined rates, intervals and
//! kappa are `null`; counts are integers, rates floats in [0, 1].

use super::metrics::Estimate;
use super::{CalibrationReport, CheckMetrics, CheckRow, FIRST_KEYS_SHOWN};
use crate::compat::reason::fmt_fixed;
use crate::report::schema::{
    CalibrationJson, CalibrationMetrics, CheckCalibration, KeysNotInInput, LabelsBlock,
};

const UNDEFINED: &str = "—";

/// The tables: all verdicts, then the held-out split under its own title when one was asked for.
pub(crate) fn render_table(report: &CalibrationReport) -> String {
    let all: Vec<(&str, &CheckMetrics)> = report
        .checks
        .iter()
        .map(|r| (r.check.as_str(), &r.all))
        .collect();
    let Some(split) = &report.split else {
        return table(&all);
    };
    let held_out: Vec<(&str, &CheckMetrics)> = report
        .checks
        .iter()
        .filter_map(|r| r.held_out.as_ref().map(|m| (r.check.as_str(), m)))
        .collect();
    format!(
        "all labelled traces\n{}\nsplit {split}\n{}",
        table(&all),
        table(&held_out)
    )
}

fn table(rows: &[(&str, &CheckMetrics)]) -> String {
    const HEADER: [&str; 12] = [
        "check",
        "n",
        "pos",
        "TP",
        "FP",
        "TN",
        "FN",
        "TPR [95% CI]",
        "TNR [95% CI]",
        "precision",
        "κ",
        "unlabelled",
    ];
    let mut cells: Vec<Vec<String>> = vec![HEADER.iter().map(ToString::to_string).collect()];
    for (check, m) in rows {
        let c = &m.confusion;
        cells.push(vec![
            check.to_string(),
            c.total().to_string(),
            c.positives().to_string(),
            c.tp.to_string(),
            c.fp.to_string(),
            c.tn.to_string(),
            c.fn_.to_string(),
            estimate_cell(c.tpr()),
            estimate_cell(c.tnr()),
            c.precision()
                .map_or_else(|| UNDEFINED.to_string(), |p| fmt_fixed(p, 2)),
            match c.kappa() {
                // A κ of −0.001 is chance agreement, not a signed finding: print it as 0.00.
                Ok(k) if k.abs() < 0.005 => fmt_fixed(0.0, 2),
                Ok(k) => fmt_fixed(k, 2),
                Err(why) => format!("{UNDEFINED} ({why})"),
            },
            m.unlabelled.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let numeric = |i: usize| (1..=6).contains(&i) || i == HEADER.len() - 1;
    let mut out = String::new();
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = widths[i] - cell.chars().count();
                if numeric(i) {
                    format!("{}{cell}", " ".repeat(pad))
                } else {
                    format!("{cell}{}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn estimate_cell(estimate: Option<Estimate>) -> String {
    match estimate {
        Some(e) => format!(
            "{} [{}, {}]",
            fmt_fixed(e.value, 2),
            fmt_fixed(e.low, 2),
            fmt_fixed(e.high, 2)
        ),
        None => UNDEFINED.to_string(),
    }
}

/// One `note: …` line per thing a reader must know to trust the table: checks that never or always
/// fired, and every label that did not count.
pub(crate) fn notes(report: &CalibrationReport) -> Vec<String> {
    let mut notes = Vec::new();
    let held_out = report
        .split
        .as_ref()
        .map(|name| format!(" in split {name}"));
    for CheckRow {
        check,
        all,
        held_out: held_out_metrics,
    } in &report.checks
    {
        let sets = std::iter::once((all, String::new()))
            .chain(held_out_metrics.as_ref().zip(held_out.clone()));
        for (metrics, where_) in sets {
            let c = &metrics.confusion;
            if c.positives() == 0 || c.negatives() == 0 {
                continue;
            }
            let what = if c.fired() == 0 {
                "never fired on a labelled trace"
            } else if c.fired() == c.total() {
                "fired on every labelled trace"
            } else {
                continue;
            };
            notes.push(format!(
                "note: {check} {what}{where_}; κ 0.00 means no better than chance"
            ));
        }
    }
    if !report.checks_not_run.is_empty() {
        let count: usize = report.checks_not_run.iter().map(|(_, n)| n).sum();
        let list: Vec<String> = report
            .checks_not_run
            .iter()
            .map(|(c, n)| format!("{c} ({n})"))
            .collect();
        notes.push(format!(
            "note: {count} label(s) for checks that did not run: {}",
            list.join(", ")
        ));
    }
    let missing = &report.missing_keys;
    if missing.keys > 0 {
        let more = if missing.keys > FIRST_KEYS_SHOWN {
            ", …"
        } else {
            ""
        };
        notes.push(format!(
            "note: {} label(s) under {} key(s) not in the input: {}{more}",
            missing.labels,
            missing.keys,
            missing.first.join(", ")
        ));
    }
    if report.shadowed > 0 {
        notes.push(format!(
            "note: {} scenario label(s) unused: a trace-id label for the same check took precedence",
            report.shadowed
        ));
    }
    if report.duplicate_labels > 0 {
        notes.push(format!(
            "note: {} duplicate label(s) counted once",
            report.duplicate_labels
        ));
    }
    notes
}

/// The JSON report ([`CalibrationJson`] gives its keys); write it with
/// [`crate::report::schema::to_pretty`].
pub(crate) fn to_wire(report: &CalibrationReport) -> CalibrationJson {
    CalibrationJson {
        split: report.split.clone(),
        labels: LabelsBlock {
            total: report.labels_total,
            used: report.labels_used,
            duplicates: report.duplicate_labels,
            checks_not_run: report.checks_not_run.iter().cloned().collect(),
            keys_not_in_input: KeysNotInInput {
                keys: report.missing_keys.keys,
                labels: report.missing_keys.labels,
                first: report.missing_keys.first.clone(),
            },
            shadowed: report.shadowed,
        },
        checks: report
            .checks
            .iter()
            .map(|row| CheckCalibration {
                check: row.check.clone(),
                all: metrics(&row.all),
                split: row.held_out.as_ref().map(metrics),
            })
            .collect(),
    }
}

fn metrics(m: &CheckMetrics) -> CalibrationMetrics {
    let c = &m.confusion;
    let (kappa, kappa_undefined) = match c.kappa() {
        Ok(k) => (Some(k), None),
        Err(why) => (None, Some(why.to_string())),
    };
    let interval = |e: Option<Estimate>| e.map(|e| [e.low, e.high]);
    CalibrationMetrics {
        n: c.total(),
        positives: c.positives(),
        negatives: c.negatives(),
        tp: c.tp,
        fp: c.fp,
        tn: c.tn,
        fn_: c.fn_,
        unlabelled: m.unlabelled,
        tpr: c.tpr().map(|e| e.value),
        tpr_ci: interval(c.tpr()),
        tnr: c.tnr().map(|e| e.value),
        tnr_ci: interval(c.tnr()),
        precision: c.precision(),
        kappa,
        kappa_undefined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{Calibration, SplitFilter, labels::parse_labels};
    use std::path::Path;

    fn report(
        labels: &str,
        verdicts: &[(&str, &str, bool)],
        split: Option<&str>,
    ) -> CalibrationReport {
        let set = parse_labels(Path::new("l.csv"), labels).unwrap();
        let mut c = Calibration::new(set);
        c.split(split.map(|s| SplitFilter::parse(s).unwrap()));
        for (trace, check, detected) in verdicts {
            c.add_verdict(trace, "s", check, *detected);
        }
        c.finish()
    }

    const LABELS: &str = "key,check,label,split\n\
                          t1,search_loop,1,test\n\
                          t2,search_loop,0,test\n\
                          t3,search_loop,0,\n\
                          t1,abstention,0,test\n\
                          t2,abstention,0,test\n\
                          t9,wrong_direction,1,\n";
    const VERDICTS: &[(&str, &str, bool)] = &[
        ("t1", "search_loop", true),
        ("t1", "abstention", false),
        ("t2", "search_loop", false),
        ("t2", "abstention", false),
        ("t3", "search_loop", true),
        ("t3", "abstention", false),
    ];

    #[test]
    fn table_shows_counts_intervals_and_undefined_kappa() {
        let text = render_table(&report(LABELS, VERDICTS, None));
        // search_loop: tp 1, fp 1, tn 1; chance = (2·1 + 1·2) / 9, κ = (6/9 − 4/9) / (5/9) = 0.40.
        let expected = "\
check        n  pos  TP  FP  TN  FN  TPR [95% CI]       TNR [95% CI]       precision  κ                unlabelled
search_loop  3    1   1   1   1   0  1.00 [0.21, 1.00]  0.50 [0.09, 0.91]  0.50       0.40                      0
abstention   2    0   0   0   2   0  —                  1.00 [0.34, 1.00]  —          — (0 positives)           1
";
        assert_eq!(text, expected);
    }

    #[test]
    fn split_adds_a_second_table() {
        let text = render_table(&report(LABELS, VERDICTS, Some("test")));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "all labelled traces");
        assert_eq!(lines[4], "");
        assert_eq!(lines[5], "split test");
        assert!(
            lines[7].starts_with("search_loop  2    1   1   0   1   0  1.00"),
            "{}",
            lines[7]
        );
        assert!(
            lines[8].ends_with("— (0 positives)           0"),
            "{}",
            lines[8]
        );
    }

    #[test]
    fn notes_account_for_unused_labels() {
        let labels =
            "key,check,label\nt1,loop,1\nt2,loop,0\nt2,loop,false\nghost,loop,1\nt1,judge,0\n";
        let r = report(
            labels,
            &[("t1", "loop", false), ("t2", "loop", false)],
            None,
        );
        assert_eq!(
            notes(&r),
            [
                "note: loop never fired on a labelled trace; κ 0.00 means no better than chance",
                "note: 1 label(s) for checks that did not run: judge (1)",
                "note: 1 label(s) under 1 key(s) not in the input: ghost",
                "note: 1 duplicate label(s) counted once",
            ]
        );
    }

    #[test]
    fn json_report_has_nulls_for_undefined_values() {
        let v = serde_json::to_value(to_wire(&report(LABELS, VERDICTS, Some("test")))).unwrap();
        assert_eq!(v["split"], "test");
        assert_eq!(v["labels"]["total"], 6);
        assert_eq!(v["labels"]["used"], 5);
        assert_eq!(v["labels"]["checks_not_run"]["wrong_direction"], 1);
        let abstention = &v["checks"][1];
        assert_eq!(abstention["check"], "abstention");
        assert_eq!(abstention["all"]["tpr"], serde_json::Value::Null);
        assert_eq!(abstention["all"]["kappa"], serde_json::Value::Null);
        assert_eq!(abstention["all"]["kappa_undefined"], "0 positives");
        assert_eq!(abstention["all"]["unlabelled"], 1);
        let search_loop = &v["checks"][0];
        assert_eq!(search_loop["all"]["tp"], 1);
        assert_eq!(search_loop["split"]["n"], 2);
        let kappa = search_loop["all"]["kappa"].as_f64().unwrap();
        assert!((kappa - 0.4).abs() < 1e-12);
    }
}
