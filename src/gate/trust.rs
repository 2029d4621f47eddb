//! `check --trust FILE --min-kappa K`: the checks whose agreement with the user's labels is too low
//! to block a release.
//!
//! FILE is the report `faultgate calibrate --json` wrote on the user's own labels. A check whose κ
//! over every labelled verdict (`checks[].all.kappa`) is below K, whose κ is undefined there, or that
//! the file does not score, is set aside: it still runs and is reported, but a trace it fires on still
//! counts as clean for the gate, and its hard block (`policy`, `workflow`) does not fail the gate.
//! Everything here is a pure function of the file and the run's check list.

use std::path::Path;

use serde_json::Value;

use super::GateError;
use crate::error::display_path;

/// κ per check, as a calibration report gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Trust {
    /// Check name → its κ, or why the report has none (`0 positives`, …), in the report's order.
    kappas: Vec<(String, Result<f64, String>)>,
}

/// Why a check was set aside.
#[derive(Debug, Clone, PartialEq)]
pub enum Distrust {
    /// κ below the bar.
    Below {
        /// The check's κ.
        kappa: f64,
        /// `--min-kappa`.
        min: f64,
    },
    /// The calibration could not compute κ (the labels had one class, or none): why.
    Undefined(String),
    /// The calibration report does not score this check.
    NotCalibrated,
}

/// A check that runs and is reported but does not gate.
#[derive(Debug, Clone, PartialEq)]
pub struct SetAside {
    /// The check's name.
    pub check: String,
    /// Why.
    pub why: Distrust,
}

impl Trust {
    /// Reads a calibration report from disk.
    ///
    /// # Errors
    ///
    /// An unreadable file, a file that is not JSON, or one [`Trust::from_value`] refuses.
    pub fn read(path: &Path) -> Result<Trust, GateError> {
        let bytes = crate::sidefile::read(path).map_err(|e| GateError::ReadTrust {
            path: display_path(path),
            message: e.to_string(),
        })?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| GateError::ReadTrust {
            path: display_path(path),
            message: format!("not JSON: {e}"),
        })?;
        Trust::from_value(path, &value)
    }

    /// Reads a parsed calibration report; `path` names it in error messages.
    ///
    /// # Errors
    ///
    /// The document is not a `calibrate --json` report: no `checks` list, or an entry without a
    /// `check` name or an `all.kappa` that is a number or `null`.
    pub fn from_value(path: &Path, value: &Value) -> Result<Trust, GateError> {
        let bad = |expected: &'static str| GateError::BadTrust {
            path: display_path(path),
            expected,
        };
        let checks = value
            .get("checks")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("a \"checks\" list"))?;
        let kappas = checks
            .iter()
            .map(|entry| {
                let name = entry
                    .get("check")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("a \"check\" name in every entry of \"checks\""))?;
                let all = entry
                    .get("all")
                    .filter(|a| a.is_object())
                    .ok_or_else(|| bad("an \"all\" object in every entry of \"checks\""))?;
                let kappa = match all.get("kappa") {
                    Some(Value::Number(k)) => k
                        .as_f64()
                        .filter(|k| k.is_finite())
                        .map(Ok)
                        .ok_or_else(|| bad("\"all.kappa\" a number or null"))?,
                    Some(Value::Null) | None => Err(all
                        .get("kappa_undefined")
                        .and_then(Value::as_str)
                        .unwrap_or("no labels")
                        .to_string()),
                    Some(_) => return Err(bad("\"all.kappa\" a number or null")),
                };
                Ok((name.to_string(), kappa))
            })
            .collect::<Result<Vec<_>, GateError>>()?;
        Ok(Trust { kappas })
    }

    /// The checks of `checks` (a run's active list, in order) that do not gate at `min_kappa`, each
    /// once, in the run's order.
    pub fn set_aside(&self, checks: &[String], min_kappa: f64) -> Vec<SetAside> {
        let mut out: Vec<SetAside> = Vec::new();
        for check in checks {
            if out.iter().any(|s| &s.check == check) {
                continue;
            }
            let why = match self.kappas.iter().find(|(name, _)| name == check) {
                None => Some(Distrust::NotCalibrated),
                Some((_, Err(reason))) => Some(Distrust::Undefined(reason.clone())),
                Some((_, Ok(kappa))) if *kappa < min_kappa => Some(Distrust::Below {
                    kappa: *kappa,
                    min: min_kappa,
                }),
                Some(_) => None,
            };
            if let Some(why) = why {
                out.push(SetAside {
                    check: check.clone(),
                    why,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn report() -> Value {
        json!({"split": null, "labels": {}, "checks": [
            {"check": "repeated_call", "all": {"kappa": 0.41, "kappa_undefined": null}, "split": null},
            {"check": "search_loop", "all": {"kappa": 0.8, "kappa_undefined": null}, "split": null},
            {"check": "abstention", "all": {"kappa": null, "kappa_undefined": "0 positives"}, "split": null},
        ]})
    }

    #[test]
    fn checks_below_the_bar_undefined_or_uncalibrated_are_set_aside_once_in_run_order() {
        let trust = Trust::from_value(Path::new("c.json"), &report()).expect("trust");
        let checks: Vec<String> = [
            "search_loop",
            "abstention",
            "repeated_call",
            "policy",
            "repeated_call",
        ]
        .map(String::from)
        .to_vec();
        let set_aside = trust.set_aside(&checks, 0.6);
        assert_eq!(
            set_aside,
            [
                SetAside {
                    check: "abstention".into(),
                    why: Distrust::Undefined("0 positives".into())
                },
                SetAside {
                    check: "repeated_call".into(),
                    why: Distrust::Below {
                        kappa: 0.41,
                        min: 0.6
                    }
                },
                SetAside {
                    check: "policy".into(),
                    why: Distrust::NotCalibrated
                },
            ]
        );
        // κ equal to the bar gates.
        assert_eq!(trust.set_aside(&checks[2..3], 0.41), []);
    }

    #[test]
    fn a_file_that_is_not_a_calibration_report_names_what_is_missing() {
        let err = |v: Value| {
            Trust::from_value(Path::new("./t//c.json"), &v)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            err(json!({"judge": "none"})),
            "t/c.json: not a calibration report (faultgate calibrate --json): expected a \"checks\" list"
        );
        assert!(err(json!({"checks": [{"all": {"kappa": 1}}]})).contains("\"check\" name"));
        assert!(
            err(json!({"checks": [{"check": "a", "all": {"kappa": "high"}}]}))
                .contains("all.kappa")
        );
    }
}
