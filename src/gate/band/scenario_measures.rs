//! Per-scenario medians of the measures (`baseline --measures --per-scenario`), which let a budget on
//! a mean pair each candidate scenario with the same scenario of the band.
//!
//! band.json's `scenario_measures` maps each measure of [`DISTRIBUTIONS`] to one value per entry of
//! the band's `scenarios` list, in that order: the median over the baseline runs of the scenario's
//! value in each run (the mean of its traces there), `null` where no run recorded it. A measure no
//! shared scenario recorded is `null` as a whole rather than a list of nulls. Lists aligned with
//! `scenarios` cost a number per scenario and measure where an object per scenario would repeat
//! every key; the medians are written to 7 significant digits (a relative error under 1e-6, far
//! below any budget's resolution), which keeps a band of 200,000 scenarios within tens of
//! megabytes. 0.4.1 ignores the key.
//!
//! Limit: past [`EXACT_TRACES`](crate::gate::EXACT_TRACES) traces a baseline run keeps the values of
//! a sample of its scenarios only, so its other scenarios count as not recorded in that run.

use serde_json::Value;

use crate::gate::measures::{DISTRIBUTIONS, MEASURE_COUNT};

/// The band.json key of the per-scenario medians.
pub(crate) const SCENARIO_MEASURES: &str = "scenario_measures";

/// Per measure of [`DISTRIBUTIONS`], per band scenario (in `scenarios` order), the median over the
/// baseline runs; `None` for a measure no scenario recorded.
pub type ScenarioMedians = [Option<Vec<Option<f64>>>; MEASURE_COUNT];

/// The median of `values` (NaN for a run without the value, skipped), as NumPy's median takes it:
/// the mean of the two middle values of an even count. `None` when every value is NaN.
pub(crate) fn median(values: &mut Vec<f64>) -> Option<f64> {
    values.retain(|v| !v.is_nan());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let half = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[half]
    } else {
        (values[half - 1] + values[half]) / 2.0
    })
}

/// `value` to 7 significant digits, so that it prints short.
fn rounded(value: f64) -> f64 {
    format!("{value:.6e}").parse().unwrap_or(value)
}

/// `scenario_measures` as band.json holds it.
pub(crate) fn to_json(medians: &ScenarioMedians) -> Value {
    let by_measure = DISTRIBUTIONS.iter().zip(medians).map(|(name, values)| {
        let value = values.as_ref().map_or(Value::Null, |values| {
            Value::Array(
                values
                    .iter()
                    .map(|v| v.map_or(Value::Null, |v| Value::from(rounded(v))))
                    .collect(),
            )
        });
        (name.to_string(), value)
    });
    Value::Object(by_measure.collect())
}

/// `scenario_measures` read back: an object whose measures are each `null` or a list of one number
/// (or `null`) per band scenario; a measure it lacks reads as not recorded. `None` when malformed.
pub(crate) fn from_json(value: &Value, scenarios: usize) -> Option<ScenarioMedians> {
    let measures = value.as_object()?;
    let mut read: ScenarioMedians = Default::default();
    for (m, name) in DISTRIBUTIONS.iter().enumerate() {
        read[m] = match measures.get(*name) {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) if items.len() == scenarios => Some(
                items
                    .iter()
                    .map(|v| match v {
                        Value::Null => Some(None),
                        Value::Number(n) => n.as_f64().filter(|n| n.is_finite()).map(Some),
                        _ => None,
                    })
                    .collect::<Option<Vec<Option<f64>>>>()?,
            ),
            Some(_) => return None,
        };
    }
    Some(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_skip_missing_runs_and_average_the_middle_pair() {
        assert_eq!(median(&mut vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut vec![4.0, f64::NAN, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut vec![f64::NAN]), None);
    }

    #[test]
    fn the_lists_round_trip_to_seven_digits_and_malformed_ones_are_refused() {
        let mut medians: ScenarioMedians = Default::default();
        medians[2] = Some(vec![Some(0.012345678901), None]);
        let json = to_json(&medians);
        assert_eq!(json["cost_usd"], serde_json::json!([0.01234568, null]));
        assert_eq!(json["latency_ms"], Value::Null);
        let read = from_json(&json, 2).expect("read");
        assert_eq!(read[2], Some(vec![Some(0.01234568), None]));
        assert_eq!(from_json(&json, 3), None);
        assert_eq!(
            from_json(&serde_json::json!({"cost_usd": ["x", 1]}), 2),
            None
        );
    }
}
