//! band.json: the keys `baseline` writes, in order, and how they read back.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Band;
use crate::gate::{DISTRIBUTIONS, MEASURES, RunStatistics, STATISTICS};

/// The band's decision rule, written verbatim into band.json.
const RULE: &str = "PASS if clean_rate >= min - 1/n; FAIL if clean_rate < min - 3/n or the drop from \
the baseline mean is significant (one-sided, alpha 0.05); else INCONCLUSIVE with the n needed for power 0.8";

/// The band.json key of the per-scenario clean-run counts (in `scenarios` order), written by
/// `baseline --per-scenario` for the paired gate.
pub(crate) const SCENARIO_CLEAN_RUNS: &str = "scenario_clean_runs";

/// The band.json key of pass^k per run, written when a baseline run has several traces for a key:
/// `{"k": K, "per_run": [[pass^1, …, pass^K] per run]}`.
pub(crate) const PASS_K: &str = "pass_k";

/// The band.json key of the checks `baseline --trust` set aside.
pub(crate) const SET_ASIDE: &str = "set_aside";

/// The band.json key of the agent version `baseline --agent-version` read the runs' traces of.
pub(crate) const AGENT_VERSION: &str = "agent_version";

/// The band.json key of the SHA-256 of the expectations file `baseline --expect` checked the runs
/// against.
pub(crate) const EXPECTATIONS_SHA256: &str = "expectations_sha256";

/// band.json, written by `baseline` and read by `check --band`.
///
/// The gate reads a band leniently, as 0.4.1 did, and echoes some of its values: those fields are
/// [`Value`]s holding what the file has (the doc says what faultgate writes there). A key faultgate
/// requires is `None` when the file lacks it and `Some(Value::Null)` when it is `null`. Keys only
/// written (`n`, `rule`, `clean_rate.mean`) are not read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandJson {
    /// Judge name of the baseline runs (a string). Required.
    #[serde(default, deserialize_with = "present")]
    pub judge: Option<Value>,
    /// Active check list of the baseline runs (a list of strings). Required.
    #[serde(default, deserialize_with = "present")]
    pub checks: Option<Value>,
    /// Number of baseline runs (an integer). Required: a whole number, 1 or more.
    #[serde(default, deserialize_with = "present")]
    pub runs: Option<Value>,
    /// Number of `scenarios`. Not read back.
    #[serde(skip_deserializing)]
    pub n: usize,
    /// Scenario keys present in every baseline run, sorted by code point. Required, not empty.
    #[serde(default, deserialize_with = "present")]
    pub scenarios: Option<Value>,
    /// The per-run clean rates. Required, an object.
    #[serde(default, deserialize_with = "present")]
    pub clean_rate: Option<Shaped<BandCleanRate>>,
    /// Scenarios clean in every baseline run, sorted. Required, a list.
    #[serde(default, deserialize_with = "present")]
    pub clean_in_all_runs: Option<Value>,
    /// Measure (`tokens`, `latency_ms`, `cost_usd`) → its mean over every trace of every run that
    /// recorded it, or `null`. Optional when read.
    #[serde(default, deserialize_with = "present")]
    pub usage: Option<Shaped<Map<String, Value>>>,
    /// The decision rule in words (a fixed sentence). Not read back.
    #[serde(skip_deserializing)]
    pub rule: String,
    /// pass^1 … pass^k of each baseline run; written by `baseline --pass-k` when some run had several
    /// traces for a scenario, needed by `check --metric pass^k`. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub pass_k: Option<Shaped<BandPassKJson>>,
    /// Per scenario (in `scenarios` order), the number of baseline runs it was clean in; written by
    /// `baseline --per-scenario`, needed by `check --gate paired` and `both`. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub scenario_clean_runs: Option<Value>,
    /// The checks `baseline --trust` set aside (reported, not counted in the rates), in run order;
    /// written only when some were. `check` warns when its own set differs. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub set_aside: Option<Value>,
    /// The agent version whose traces alone the baseline runs were read for (`baseline
    /// --agent-version`; a string, masked as the verdicts' agent versions are); written only then.
    /// `check --explain` reads the baseline runs' traces of this version. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent_version: Option<Value>,
    /// The SHA-256 of the expectations file the baseline runs were checked against (`baseline
    /// --expect`); written only then. `check` refuses a band whose expectations differ from its own.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub expectations_sha256: Option<Value>,
    /// Per measure (`latency_ms`, `tokens`, `cost_usd`, `steps`), per statistic (`mean`, `p50`, `p90`,
    /// `p95`, `p99`), one number per baseline run (`null` for a run no trace of which recorded the
    /// measure); written by `baseline --measures`, needed by `check --budget`. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub measures: Option<Value>,
    /// Per measure (`latency_ms`, `tokens`, …), one median over the baseline runs per entry of
    /// `scenarios` (`null` where no run recorded it; `null` as a whole for a measure no scenario
    /// recorded); written by `baseline --measures --per-scenario`, read by `check --budget` to pair
    /// a budget on a mean by scenario. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub scenario_measures: Option<Value>,
    /// `{"by": [keys], "values": {slice: {"clean_rate": [one per run], "traces": [one per run]}}}`:
    /// each baseline run's clean rate per slice (`null`, with 0 traces, for a run without the
    /// slice); written by `baseline --by`, read by `check --by` with the same keys. Absent otherwise.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub slices: Option<Value>,
}

/// A band's `clean_rate`: the share of `scenarios` clean in each baseline run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandCleanRate {
    /// Lowest per-run rate, from 0 to 1. Required; the gate's thresholds start from it.
    #[serde(default, deserialize_with = "present")]
    pub min: Option<Value>,
    /// Highest per-run rate, from 0 to 1, at least `min`. Required.
    #[serde(default, deserialize_with = "present")]
    pub max: Option<Value>,
    /// Mean of `per_run`. Not read back.
    #[serde(skip_deserializing)]
    pub mean: f64,
    /// Each run's rate, one per run. When read: optional (`[min, max]` stands in for a band without
    /// it or with an empty list, and the gate notes that the run-to-run variance is unknown), else as
    /// many rates from 0 to 1 as `runs`.
    #[serde(default, deserialize_with = "present")]
    pub per_run: Option<Value>,
}

/// A band's `pass_k`: pass^1 … pass^k of each baseline run over the shared scenarios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandPassKJson {
    /// The largest k every shared scenario has traces for in every run (1 or more).
    pub k: u32,
    /// Per run, `[pass^1, …, pass^k]`: one list of k numbers per run, at least one run.
    pub per_run: Vec<Vec<f64>>,
}

/// A band value that should be an object: `T` when it is an object that reads as `T`, else the value
/// as written, so the reader can name the key that is wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum Shaped<T> {
    /// An object that reads as `T`.
    Object(T),
    /// Anything else, as written.
    Other(Value),
}

impl<T: Serialize> Serialize for Shaped<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Shaped::Object(fields) => fields.serialize(serializer),
            Shaped::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de, T: de::DeserializeOwned> Deserialize<'de> for Shaped<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(fields) => {
                let object = Value::Object(fields);
                Ok(T::deserialize(&object).map_or(Shaped::Other(object), Shaped::Object))
            }
            other => Ok(Shaped::Other(other)),
        }
    }
}

/// A key that is present, even as `null`: `Some(value)`; with `#[serde(default)]`, a missing key is
/// `None`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

impl Band {
    /// band.json, keys in 0.4.1's order ([`BandJson`] gives them).
    pub fn to_wire(&self) -> BandJson {
        self.to_wire_with(false, false)
    }

    /// band.json with optional keys after 0.4.1's (which 0.4.1 ignores): with `per_scenario`,
    /// `SCENARIO_CLEAN_RUNS`, each scenario's count of clean runs, which the paired gate needs, and
    /// (for a band with them) the measures' per-scenario medians, which paired budgets need; with
    /// `pass_k` and runs that had trials, `PASS_K`, which `--metric pass^k` needs.
    pub fn to_wire_with(&self, per_scenario: bool, pass_k: bool) -> BandJson {
        BandJson {
            judge: Some(Value::from(self.judge.clone())),
            checks: Some(Value::from(self.checks.clone())),
            runs: Some(Value::from(self.runs)),
            n: self.scenarios.len(),
            scenarios: Some(Value::from(self.scenarios.clone())),
            clean_rate: Some(Shaped::Object(BandCleanRate {
                min: Some(Value::from(self.min())),
                max: Some(Value::from(self.max())),
                mean: self.mean(),
                per_run: Some(Value::from(self.per_run.clone())),
            })),
            clean_in_all_runs: Some(Value::from(self.clean_in_all_runs.clone())),
            usage: Some(Shaped::Object(
                MEASURES
                    .iter()
                    .zip(self.usage)
                    .map(|(name, mean)| (name.to_string(), Value::from(mean)))
                    .collect(),
            )),
            rule: RULE.to_string(),
            pass_k: self.pass_k.as_ref().filter(|_| pass_k).map(|table| {
                Shaped::Object(BandPassKJson {
                    k: table.k,
                    per_run: table.per_run.clone(),
                })
            }),
            scenario_clean_runs: per_scenario.then(|| Value::from(self.clean_runs.clone())),
            set_aside: (!self.set_aside.is_empty()).then(|| Value::from(self.set_aside.clone())),
            agent_version: self.agent_version.clone().map(Value::from),
            expectations_sha256: self.expectations.clone().map(Value::from),
            measures: self.measures.as_ref().map(|runs| measures_json(runs)),
            scenario_measures: self
                .scenario_measures
                .as_ref()
                .filter(|_| per_scenario)
                .map(super::scenario_measures::to_json),
            slices: self
                .slices
                .as_ref()
                .map(crate::gate::slices::BandSlices::to_json),
        }
    }
}

/// The band.json key of the measures' statistics per run, written by `baseline --measures`.
pub(crate) const MEASURES_KEY: &str = "measures";

/// `measures`: measure → statistic → one value per run.
fn measures_json(runs: &[RunStatistics]) -> Value {
    let by_measure = DISTRIBUTIONS.iter().enumerate().map(|(m, measure)| {
        let by_stat = STATISTICS.iter().enumerate().map(|(s, stat)| {
            let per_run: Vec<Value> = runs
                .iter()
                .map(|run| run[m].map_or(Value::Null, |stats| Value::from(stats[s])))
                .collect();
            (stat.to_string(), Value::Array(per_run))
        });
        (measure.to_string(), Value::Object(by_stat.collect()))
    });
    Value::Object(by_measure.collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::gate::BandBuilder;
    use crate::gate::fixtures;

    #[test]
    fn band_over_glm_runs_matches_the_reference() {
        let (run1, run2) = (fixtures::glm_run1(), fixtures::glm_run2());
        let mut builder = BandBuilder::new();
        builder.add_run(&run1);
        builder.add_run(&run2);
        let band = builder.finish().expect("band");
        let json = serde_json::to_value(band.to_wire()).unwrap();
        assert_eq!(json["n"], json!(30));
        assert_eq!(json["clean_rate"]["min"], json!(0.9333333333333333));
        assert_eq!(
            json["clean_rate"]["per_run"],
            json!([0.9333333333333333, 0.9333333333333333])
        );
        assert_eq!(json["clean_in_all_runs"].as_array().map(Vec::len), Some(26));
        assert_eq!(
            json["usage"],
            json!({"tokens": null, "latency_ms": 16483.333333333332, "cost_usd": null})
        );
        let keys: Vec<&str> = json
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "judge",
                "checks",
                "runs",
                "n",
                "scenarios",
                "clean_rate",
                "clean_in_all_runs",
                "usage",
                "rule"
            ]
        );
    }
}
