//! [`BandFile`]: a band file read back for the gate, leniently as 0.4.1 reads it, and checked.

use std::path::Path;

use serde::Deserialize as _;
use serde_json::Value;

use super::BandPassK;
use super::file::{
    AGENT_VERSION, BandJson, BandPassKJson, EXPECTATIONS_SHA256, MEASURES_KEY, PASS_K,
    SCENARIO_CLEAN_RUNS, SET_ASIDE, Shaped,
};
use super::scenario_measures::{SCENARIO_MEASURES, ScenarioMedians};
use crate::compat::value::py_truthy;
use crate::error::display_path;
use crate::gate::measures::MEASURE_COUNT;
use crate::gate::{Budget, GateError};
use crate::gate::{DISTRIBUTIONS, STATISTICS};

/// A band file as the gate reads it: a [`BandJson`] checked, values kept as read where the gate echoes
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct BandFile {
    pub(crate) judge: Value,
    pub(crate) checks: Value,
    pub(crate) runs: Value,
    pub(crate) runs_number: f64,
    pub(crate) scenarios: Vec<Value>,
    pub(crate) min: Value,
    pub(crate) max: Value,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// `clean_rate.per_run`, or `[min, max]` when it is absent or empty.
    pub(crate) per_run: Vec<f64>,
    /// False when `per_run` is `[min, max]` standing in for rates the band does not have: the
    /// run-to-run variance is then unknown, which the gate says.
    pub(crate) per_run_known: bool,
    pub(crate) clean_in_all_runs: Vec<Value>,
    pub(crate) usage: Vec<(String, Value)>,
    /// [`SCENARIO_CLEAN_RUNS`] when the band has it.
    pub(crate) clean_runs: Option<Vec<u32>>,
    /// [`PASS_K`] when the band has it.
    pub(crate) pass_k: Option<BandPassK>,
    /// [`SET_ASIDE`]: the checks the band's rates leave out; empty when the band has no such key.
    pub(crate) set_aside: Vec<String>,
    /// [`AGENT_VERSION`]: the agent version the baseline runs were read for, when the band has one.
    pub(crate) agent_version: Option<String>,
    /// [`EXPECTATIONS_SHA256`]: the digest of the expectations the baseline runs were checked against.
    pub(crate) expectations: Option<String>,
    /// [`MEASURES_KEY`]: per measure of [`DISTRIBUTIONS`], per statistic of [`STATISTICS`], one value
    /// per baseline run (`None` for a run that recorded none); `None` when the band has no such key.
    pub(crate) measures: Option<BandMeasures>,
    /// [`SCENARIO_MEASURES`]: per measure, per entry of `scenarios`, the median over the baseline
    /// runs; `None` when the band has no such key.
    pub(crate) scenario_measures: Option<ScenarioMedians>,
    /// Each baseline run's clean rate per slice (`baseline --by`).
    pub(crate) slices: Option<crate::gate::slices::BandSlices>,
}

/// A band's measures: per measure, per statistic, per run.
pub(crate) type BandMeasures = [[Vec<Option<f64>>; 5]; MEASURE_COUNT];

impl BandFile {
    /// Reads a band file from disk (as `faultgate baseline` writes it).
    ///
    /// # Errors
    ///
    /// An unreadable file, a file that is not JSON, or a document [`BandFile::from_value`] refuses.
    pub fn read(path: &std::path::Path) -> Result<BandFile, GateError> {
        let shown = || crate::error::display_path(path);
        let bytes = crate::sidefile::read(path).map_err(|e| GateError::ReadBand {
            path: shown(),
            message: e.to_string(),
        })?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| GateError::BandNotJson {
                path: shown(),
                message: e.to_string(),
            })?;
        BandFile::from_value(path, &value)
    }

    /// Reads a parsed band file; `path` names it in error messages.
    ///
    /// # Errors
    ///
    /// A falsy document (0.4.1 silently skips the gate), a non-object, or a band without `judge`,
    /// `checks`, `runs`, a non-empty `scenarios` list, numeric `clean_rate.min` and `clean_rate.max`,
    /// or a `clean_in_all_runs` list.
    pub fn from_value(path: &Path, value: &Value) -> Result<Self, GateError> {
        let path = display_path(path);
        if !py_truthy(value) {
            return Err(GateError::EmptyBand { path });
        }
        if !value.is_object() {
            return Err(GateError::NotAnObject { path });
        }
        // An object always reads: every key the reader checks is kept as written, and checked below.
        let band = BandJson::deserialize(value)
            .map_err(|_| GateError::NotAnObject { path: path.clone() })?;
        let missing = |key| GateError::MissingKey {
            path: path.clone(),
            key,
        };
        let bad = |key, expected| GateError::BadValue {
            path: path.clone(),
            key,
            expected,
        };
        let judge = band.judge.ok_or_else(|| missing("judge"))?;
        let checks = band.checks.ok_or_else(|| missing("checks"))?;
        let runs = band.runs.ok_or_else(|| missing("runs"))?;
        let runs_number = number(&runs).ok_or_else(|| bad("runs", "a number"))?;
        let scenarios = match band.scenarios.ok_or_else(|| missing("scenarios"))? {
            Value::Array(items) if items.is_empty() => {
                return Err(GateError::EmptyKey {
                    path: path.clone(),
                    key: "scenarios",
                });
            }
            Value::Array(items) => items,
            _ => return Err(bad("scenarios", "a list")),
        };
        let clean_rate = match band.clean_rate.ok_or_else(|| missing("clean_rate.min"))? {
            Shaped::Object(rate) => rate,
            Shaped::Other(_) => return Err(bad("clean_rate", "an object")),
        };
        let min = clean_rate.min.ok_or_else(|| missing("clean_rate.min"))?;
        let lo = number(&min).ok_or_else(|| bad("clean_rate.min", "a number"))?;
        let max = clean_rate.max.ok_or_else(|| missing("clean_rate.max"))?;
        let hi = number(&max).ok_or_else(|| bad("clean_rate.max", "a number"))?;
        // Ranges and consistency: a band outside them (a hand edit, a corrupted file) would turn a FAIL
        // into a PASS, so it is refused rather than read as written.
        if !(runs_number.is_finite() && runs_number >= 1.0 && runs_number.fract() == 0.0) {
            return Err(bad("runs", "a whole number of runs, 1 or more"));
        }
        if !(0.0..=1.0).contains(&lo) {
            return Err(bad("clean_rate.min", "a rate from 0 to 1"));
        }
        if !(0.0..=1.0).contains(&hi) {
            return Err(bad("clean_rate.max", "a rate from 0 to 1"));
        }
        if lo > hi {
            return Err(bad("clean_rate.min", "at most clean_rate.max"));
        }
        let per_run_known = match &clean_rate.per_run {
            None | Some(Value::Null) => false,
            Some(Value::Array(items)) => !items.is_empty(),
            Some(_) => true,
        };
        let per_run = match clean_rate.per_run {
            // Bands written before per-run rates existed, or edited by hand: 0.4.1 reads any falsy
            // `per_run` as `[min, max]`, and min, max and runs are still checked above, so the verdict
            // cannot flip; only the run-to-run variance is unknown.
            None | Some(Value::Null) => vec![lo, hi],
            Some(Value::Array(items)) if items.is_empty() => vec![lo, hi],
            Some(Value::Array(items)) => {
                let rates = items
                    .iter()
                    .map(number)
                    .collect::<Option<Vec<f64>>>()
                    .ok_or_else(|| bad("clean_rate.per_run", "a list of numbers"))?;
                if rates.len() as f64 != runs_number {
                    return Err(bad(
                        "clean_rate.per_run",
                        "one rate per run (as many as \"runs\")",
                    ));
                }
                if rates.iter().any(|r| !(0.0..=1.0).contains(r)) {
                    return Err(bad("clean_rate.per_run", "a list of rates from 0 to 1"));
                }
                rates
            }
            Some(_) => return Err(bad("clean_rate.per_run", "a list of numbers")),
        };
        let Value::Array(clean_in_all_runs) = band
            .clean_in_all_runs
            .ok_or_else(|| missing("clean_in_all_runs"))?
        else {
            return Err(bad("clean_in_all_runs", "a list"));
        };
        let usage = match band.usage {
            None | Some(Shaped::Other(Value::Null)) => Vec::new(),
            Some(Shaped::Object(measures)) => measures.into_iter().collect(),
            Some(Shaped::Other(_)) => return Err(bad("usage", "an object")),
        };
        let clean_runs = match band.scenario_clean_runs {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let counts = items
                    .iter()
                    .map(|v| v.as_u64().and_then(|c| u32::try_from(c).ok()))
                    .collect::<Option<Vec<u32>>>()
                    .filter(|c| c.len() == scenarios.len())
                    .filter(|c| c.iter().all(|&k| f64::from(k) <= runs_number))
                    .ok_or_else(|| {
                        bad(
                            SCENARIO_CLEAN_RUNS,
                            "a list of clean-run counts, one per scenario, none above runs",
                        )
                    })?;
                Some(counts)
            }
            Some(_) => {
                return Err(bad(
                    SCENARIO_CLEAN_RUNS,
                    "a list of clean-run counts, one per scenario, none above runs",
                ));
            }
        };
        let pass_k = match band.pass_k {
            None | Some(Shaped::Other(Value::Null)) => None,
            Some(Shaped::Object(table)) => Some(
                read_pass_k(table)
                    .ok_or_else(|| bad(PASS_K, "{\"k\": k, \"per_run\": [k values per run]}"))?,
            ),
            Some(Shaped::Other(_)) => {
                return Err(bad(PASS_K, "{\"k\": k, \"per_run\": [k values per run]}"));
            }
        };
        let set_aside = match band.set_aside {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(String::from))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| bad(SET_ASIDE, "a list of check names"))?,
            Some(_) => return Err(bad(SET_ASIDE, "a list of check names")),
        };
        let agent_version = match band.agent_version {
            None | Some(Value::Null) => None,
            Some(Value::String(version)) => Some(version),
            Some(_) => return Err(bad(AGENT_VERSION, "an agent version (a string)")),
        };
        let expectations = match band.expectations_sha256 {
            None | Some(Value::Null) => None,
            Some(Value::String(digest)) => Some(digest),
            Some(_) => return Err(bad(EXPECTATIONS_SHA256, "a SHA-256 (a string)")),
        };
        let measures = match band.measures {
            None | Some(Value::Null) => None,
            Some(value) => Some(read_measures(&value, runs_number).ok_or_else(|| {
                bad(
                    MEASURES_KEY,
                    "an object of measures, each an object of statistics, each a list of one number (or null) per run",
                )
            })?),
        };
        let scenario_measures = match band.scenario_measures {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                super::scenario_measures::from_json(&value, scenarios.len()).ok_or_else(|| {
                    bad(
                        SCENARIO_MEASURES,
                        "an object of measures, each null or a list of one number (or null) per scenario",
                    )
                })?,
            ),
        };
        let slices = match band.slices {
            None | Some(Value::Null) => None,
            Some(value) => Some(crate::gate::slices::BandSlices::from_json(&value).ok_or_else(|| {
                bad(
                    "slices",
                    "an object with \"by\" (a list of keys) and \"values\" (per slice, \"clean_rate\" and \"traces\" lists of one entry per run)",
                )
            })?),
        };
        Ok(Self {
            judge,
            checks,
            runs,
            runs_number,
            scenarios,
            min,
            max,
            lo,
            hi,
            per_run,
            per_run_known,
            clean_in_all_runs,
            usage,
            clean_runs,
            pass_k,
            set_aside,
            agent_version,
            expectations,
            measures,
            scenario_measures,
            slices,
        })
    }

    /// The band's per-scenario clean-run counts, which the paired gate needs.
    ///
    /// # Errors
    ///
    /// The band was written without them (by 0.4.1, or without `baseline --per-scenario`).
    pub fn require_clean_runs(&self, path: &Path) -> Result<&[u32], GateError> {
        self.clean_runs
            .as_deref()
            .ok_or_else(|| GateError::NoPerScenario {
                path: display_path(path),
            })
    }

    /// The band's measures, which `--budget` needs.
    ///
    /// # Errors
    ///
    /// The band was written without them (by 0.4.1, or without `baseline --measures`).
    pub(crate) fn require_measures(&self, path: &Path) -> Result<&BandMeasures, GateError> {
        self.measures.as_ref().ok_or_else(|| GateError::NoMeasures {
            path: display_path(path),
        })
    }

    /// The band's measures, which `budgets` need, each of them recorded (if only as absent).
    ///
    /// # Errors
    ///
    /// The band was written without measures, or before a measure a budget names was recorded.
    pub fn require_measures_of(
        &self,
        path: &Path,
        budgets: &[Budget],
    ) -> Result<&BandMeasures, GateError> {
        let measures = self.require_measures(path)?;
        match budgets.iter().find(|b| measures[b.measure][0].is_empty()) {
            Some(budget) => Err(GateError::MeasureNotInBand {
                path: display_path(path),
                budget: budget.name(),
                measure: DISTRIBUTIONS[budget.measure],
            }),
            None => Ok(measures),
        }
    }

    /// The band's `runs` in Python str-notation, as the gate line prints it.
    pub fn runs_text(&self) -> String {
        crate::compat::reason::py_str(&self.runs)
    }
}

/// A band's `pass_k` object: k ≥ 1 and a non-empty list of runs with k numbers each.
fn read_pass_k(table: BandPassKJson) -> Option<BandPassK> {
    let BandPassKJson { k, per_run } = table;
    let well_formed =
        k >= 1 && !per_run.is_empty() && per_run.iter().all(|values| values.len() == k as usize);
    well_formed.then_some(BandPassK { k, per_run })
}

/// A band's `measures` object; a measure or statistic it lacks reads as recorded by no run.
fn read_measures(value: &Value, runs: f64) -> Option<BandMeasures> {
    let measures = value.as_object()?;
    let runs = runs as usize;
    let mut read: BandMeasures = Default::default();
    for (m, name) in DISTRIBUTIONS.iter().enumerate() {
        let stats = match measures.get(*name) {
            // Written before the measure was recorded: no runs at all, so a budget on it asks for a
            // rebuild rather than reading it as a measure the runs lacked.
            None => continue,
            Some(Value::Null) => None,
            Some(stats) => Some(stats.as_object()?),
        };
        for (s, stat) in STATISTICS.iter().enumerate() {
            read[m][s] = match stats.and_then(|stats| stats.get(*stat)) {
                None | Some(Value::Null) => vec![None; runs],
                Some(Value::Array(items)) if items.len() == runs => items
                    .iter()
                    .map(|v| match v {
                        Value::Null => Some(None),
                        v => number(v).filter(|n| n.is_finite()).map(Some),
                    })
                    .collect::<Option<Vec<Option<f64>>>>()?,
                Some(_) => return None,
            };
        }
    }
    Some(read)
}

/// A JSON number as a double; booleans and everything else are not numbers here.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn minimal_band() -> Value {
        json!({
            "judge": "none", "checks": ["search_loop"], "runs": 2,
            "scenarios": ["a", "b"],
            "clean_rate": {"min": 1, "max": 1},
            "clean_in_all_runs": ["a", "b"]
        })
    }

    #[test]
    fn band_file_keeps_values_as_read() {
        let band = BandFile::from_value(Path::new("./b.json"), &minimal_band()).expect("band");
        assert_eq!(band.min, json!(1));
        assert_eq!(band.per_run, vec![1.0, 1.0]);
        assert_eq!(band.runs_text(), "2");
        assert!(band.usage.is_empty());
    }

    #[test]
    fn the_agent_version_of_a_band_is_read_when_it_has_one() {
        let path = Path::new("band.json");
        let read = |version: Option<Value>| {
            let mut band = minimal_band();
            if let Some(version) = version {
                band[AGENT_VERSION] = version;
            }
            BandFile::from_value(path, &band).map(|b| b.agent_version)
        };
        assert_eq!(read(None).expect("band"), None);
        assert_eq!(read(Some(Value::Null)).expect("band"), None);
        assert_eq!(
            read(Some(json!("2.1.0"))).expect("band"),
            Some("2.1.0".into())
        );
        assert_eq!(
            read(Some(json!(2.1))).expect_err("a number").to_string(),
            "band.json: the band's \"agent_version\" must be an agent version (a string)"
        );
    }

    #[test]
    fn unusable_band_files_name_the_file_and_the_key() {
        let path = Path::new("./gate//band.json");
        let err = |v: Value| {
            BandFile::from_value(path, &v)
                .expect_err("must fail")
                .to_string()
        };
        assert_eq!(err(json!({})), "gate/band.json: the band is empty");
        assert_eq!(err(json!(null)), "gate/band.json: the band is empty");
        assert_eq!(
            err(json!([1])),
            "gate/band.json: the band is not a JSON object"
        );
        for key in ["judge", "checks", "runs", "scenarios", "clean_in_all_runs"] {
            let mut band = minimal_band();
            band.as_object_mut().expect("object").remove(key);
            assert_eq!(
                err(band),
                format!("gate/band.json: the band has no \"{key}\"")
            );
        }
        let mut band = minimal_band();
        band["scenarios"] = json!([]);
        assert_eq!(
            err(band),
            "gate/band.json: the band's \"scenarios\" is empty"
        );
        let mut band = minimal_band();
        band["clean_rate"]
            .as_object_mut()
            .expect("object")
            .remove("max");
        assert_eq!(
            err(band),
            "gate/band.json: the band has no \"clean_rate.max\""
        );
        let mut band = minimal_band();
        band["clean_rate"]["min"] = json!("high");
        assert_eq!(
            err(band),
            "gate/band.json: the band's \"clean_rate.min\" must be a number"
        );
    }

    #[test]
    fn band_fields_out_of_range_or_inconsistent_name_the_field() {
        let path = Path::new("band.json");
        let cases: [(&str, Value, &str); 9] = [
            ("/clean_rate/min", json!(-1), "clean_rate.min"),
            ("/clean_rate/min", json!(1.5), "clean_rate.min"),
            ("/clean_rate/max", json!(2), "clean_rate.max"),
            ("/clean_rate/max", json!(f64::NAN), "clean_rate.max"),
            ("/runs", json!(0), "runs"),
            ("/runs", json!(-1), "runs"),
            ("/runs", json!(2.5), "runs"),
            (
                "/clean_rate/per_run",
                json!([1, 1, 1]),
                "clean_rate.per_run",
            ),
            (
                "/clean_rate/per_run",
                json!([1, -0.5]),
                "clean_rate.per_run",
            ),
        ];
        for (pointer, value, key) in cases {
            let mut band = minimal_band();
            let (parent, key_name) = pointer.rsplit_once('/').expect("pointer");
            band.pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("parent")
                .insert(key_name.to_string(), value.clone());
            let err = BandFile::from_value(path, &band)
                .expect_err(&format!("{pointer} = {value} must be refused"))
                .to_string();
            assert!(
                err.starts_with(&format!("band.json: the band's \"{key}\" must be")),
                "{err}"
            );
        }
        let mut band = minimal_band();
        band["clean_rate"] = json!({"min": 0.9, "max": 0.5});
        let err = BandFile::from_value(path, &band)
            .expect_err("min > max")
            .to_string();
        assert!(
            err.contains("\"clean_rate.min\" must be at most clean_rate.max"),
            "{err}"
        );
        let mut band = minimal_band();
        band["clean_rate"] = json!({"min": 0.5, "max": 1, "per_run": [0.5, 1]});
        assert!(BandFile::from_value(path, &band).is_ok());
    }

    /// 0.4.1 reads an empty `per_run` as `[min, max]`; so does the gate, which then says the run-to-run
    /// variance is unknown. What would flip a verdict is still refused with it.
    #[test]
    fn empty_per_run_reads_as_min_and_max_and_range_checks_still_hold() {
        let path = Path::new("band.json");
        let mut band = minimal_band();
        band["clean_rate"] = json!({"min": 0.5, "max": 0.75, "per_run": []});
        let read = BandFile::from_value(path, &band).expect("an empty per_run is read");
        assert_eq!(read.per_run, vec![0.5, 0.75]);
        assert!(!read.per_run_known);
        band["clean_rate"]["per_run"] = json!([0.5, 0.75]);
        assert!(
            BandFile::from_value(path, &band)
                .expect("band")
                .per_run_known
        );
        let refused = [
            (
                json!({"min": 0.9, "max": 0.5, "per_run": []}),
                "clean_rate.min",
            ),
            (
                json!({"min": -0.1, "max": 0.5, "per_run": []}),
                "clean_rate.min",
            ),
            (
                json!({"min": 0.1, "max": 1.5, "per_run": []}),
                "clean_rate.max",
            ),
        ];
        for (rate, key) in refused {
            let mut band = minimal_band();
            band["clean_rate"] = rate.clone();
            let err = BandFile::from_value(path, &band)
                .expect_err(&format!("{rate} must be refused"))
                .to_string();
            assert!(err.contains(&format!("\"{key}\" must be")), "{err}");
        }
        let mut band = minimal_band();
        band["clean_rate"]["per_run"] = json!([]);
        band["runs"] = json!(0);
        let err = BandFile::from_value(path, &band)
            .expect_err("runs 0")
            .to_string();
        assert!(err.contains("\"runs\" must be"), "{err}");
    }

    #[test]
    fn keys_of_the_wrong_shape_name_the_key_and_null_optional_keys_are_absent() {
        let path = Path::new("band.json");
        let err = |pointer: &str, value: Value| {
            let mut band = minimal_band();
            let (parent, key) = pointer.rsplit_once('/').expect("pointer");
            band.pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("parent")
                .insert(key.to_string(), value);
            BandFile::from_value(path, &band)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        // A list is not an object, even with the right number of members.
        let shape = |key: &str| Err(format!("band.json: the band's \"{key}\" must be "));
        let starts = |got: Result<(), String>, want: Result<(), String>| match (&got, &want) {
            (Err(g), Err(w)) => assert!(g.starts_with(w.as_str()), "{g}"),
            _ => assert_eq!(got, want),
        };
        starts(
            err("/clean_rate", json!([0.5, 1, 0.7, [0.5, 1]])),
            shape("clean_rate"),
        );
        starts(err("/usage", json!([1])), shape("usage"));
        starts(err("/pass_k", json!([2, [[1, 1]]])), shape("pass_k"));
        starts(
            err("/pass_k", json!({"k": 2.0, "per_run": [[1, 1]]})),
            shape("pass_k"),
        );
        starts(
            err("/pass_k", json!({"k": 0, "per_run": [[]]})),
            shape("pass_k"),
        );
        starts(
            err("/pass_k", json!({"k": 2, "per_run": [[1]]})),
            shape("pass_k"),
        );
        starts(
            err("/pass_k", json!({"k": 1, "per_run": []})),
            shape("pass_k"),
        );
        starts(
            err("/scenario_clean_runs", json!([3, 0])),
            shape("scenario_clean_runs"),
        );
        // `null` stands for absent where a key is optional, and is kept as written where it is not.
        for key in ["usage", "pass_k", "scenario_clean_runs"] {
            assert_eq!(err(&format!("/{key}"), Value::Null), Ok(()), "{key}");
        }
        assert_eq!(err("/clean_rate/per_run", Value::Null), Ok(()));
        assert_eq!(err("/judge", Value::Null), Ok(()));
        starts(err("/runs", Value::Null), shape("runs"));
        let mut band = minimal_band();
        band["pass_k"] = json!({"k": 2, "per_run": [[1, 0.5], [1, 1]]});
        band["usage"] = json!({"tokens": 10, "cost_usd": null});
        band["scenario_clean_runs"] = json!([2, 1]);
        let read = BandFile::from_value(path, &band).expect("band");
        assert_eq!(read.pass_k.map(|p| (p.k, p.per_run.len())), Some((2, 2)));
        assert_eq!(
            read.usage,
            [
                ("tokens".to_string(), json!(10)),
                ("cost_usd".to_string(), Value::Null)
            ]
        );
        assert_eq!(read.clean_runs, Some(vec![2, 1]));
    }
}
