//! Agreement arithmetic between one check and human labels: the confusion matrix and what it implies.
//!
//! Owns the numbers only (counts, rates, Wilson score intervals, precision, Cohen's kappa); it knows
//! nothing of label files or traces, which `calibrate::labels` and `calibrate` (the builder) handle.
//!
//! Degenerate matrices are answered, never divided by zero:
//! - a rate whose denominator is empty (TPR with no positives, TNR with no negatives, precision when
//!   the check never fired on a labelled trace) is `None`;
//! - kappa is undefined when the labels have a single class (or there are none): chance agreement then
//!   equals observed agreement by construction, so the statistic says nothing about the check. This
//!   covers chance agreement of exactly 1 (labels one class and the check constant in agreement).
//! - a check that never (or always) fires against labels of both classes has kappa exactly 0, which is
//!   the honest answer "no better than chance"; it is reported as 0, with a note from the builder.

/// z for a two-sided 95% interval (the 0.975 quantile of the standard normal).
pub(crate) const Z_95: f64 = 1.959963984540054;

/// One check's verdicts against the labels: true/false positives and negatives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    /// True positives: the label says fire and the check fired.
    pub tp: u64,
    /// False positives: the check fired against a clean label.
    pub fp: u64,
    /// True negatives: both say clean.
    pub tn: u64,
    /// False negatives: the label says fire and the check did not.
    pub fn_: u64,
}

impl Confusion {
    /// A matrix from its four cells.
    pub fn new(tp: u64, fp: u64, tn: u64, fn_: u64) -> Self {
        Confusion { tp, fp, tn, fn_ }
    }

    /// Counts one labelled verdict.
    pub fn add(&mut self, label: bool, detected: bool) {
        match (label, detected) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (false, false) => self.tn += 1,
            (true, false) => self.fn_ += 1,
        }
    }

    /// Labelled verdicts in the matrix.
    pub fn total(&self) -> u64 {
        self.tp + self.fp + self.tn + self.fn_
    }

    /// Verdicts labelled as a failure.
    pub fn positives(&self) -> u64 {
        self.tp + self.fn_
    }

    /// Verdicts labelled as clean.
    pub fn negatives(&self) -> u64 {
        self.tn + self.fp
    }

    /// Verdicts where the check fired.
    pub fn fired(&self) -> u64 {
        self.tp + self.fp
    }

    /// True positive rate (recall) with its Wilson interval; `None` without positives.
    pub fn tpr(&self) -> Option<Estimate> {
        Estimate::wilson(self.tp, self.positives())
    }

    /// True negative rate (specificity) with its Wilson interval; `None` without negatives.
    pub fn tnr(&self) -> Option<Estimate> {
        Estimate::wilson(self.tn, self.negatives())
    }

    /// Share of firings that a human also labelled a failure; `None` when the check never fired.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.fired())
    }

    /// Cohen's kappa: (observed − chance agreement) / (1 − chance agreement).
    ///
    /// # Errors
    /// [`KappaUndefined`] when there are no labels or the labels have a single class.
    pub fn kappa(&self) -> Result<f64, KappaUndefined> {
        let n = self.total();
        if n == 0 {
            return Err(KappaUndefined::NoLabels);
        }
        if self.positives() == 0 {
            return Err(KappaUndefined::OneLabelClass { positive: false });
        }
        if self.negatives() == 0 {
            return Err(KappaUndefined::OneLabelClass { positive: true });
        }
        let n = n as f64;
        let observed = (self.tp + self.tn) as f64 / n;
        let fired = self.fired() as f64;
        let quiet = (self.tn + self.fn_) as f64;
        let chance = (fired * self.positives() as f64 + quiet * self.negatives() as f64) / (n * n);
        // With both label classes present chance agreement is at most max(pos, neg) / n < 1.
        Ok((observed - chance) / (1.0 - chance))
    }
}

/// Why kappa has no value for a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KappaUndefined {
    /// No verdict of this check had a label.
    NoLabels,
    /// Every label says the same thing (`positive`: all failures, else all clean).
    OneLabelClass {
        /// True when every label says the check should fire.
        positive: bool,
    },
}

impl std::fmt::Display for KappaUndefined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KappaUndefined::NoLabels => f.write_str("no labels"),
            KappaUndefined::OneLabelClass { positive: false } => f.write_str("0 positives"),
            KappaUndefined::OneLabelClass { positive: true } => f.write_str("0 negatives"),
        }
    }
}

/// A proportion with its 95% Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The observed proportion, from 0 to 1.
    pub value: f64,
    /// Lower end of the 95% Wilson interval.
    pub low: f64,
    /// Upper end of the 95% Wilson interval.
    pub high: f64,
}

impl Estimate {
    /// `successes / trials` with the Wilson score interval at `Z_95`; `None` when `trials` is 0.
    pub fn wilson(successes: u64, trials: u64) -> Option<Estimate> {
        let value = ratio(successes, trials)?;
        let n = trials as f64;
        let z2 = Z_95 * Z_95;
        let denominator = 1.0 + z2 / n;
        let center = (value + z2 / (2.0 * n)) / denominator;
        let half = Z_95 / denominator * (value * (1.0 - value) / n + z2 / (4.0 * n * n)).sqrt();
        // Clamp the rounding noise at the ends: p = 0 must give a low of exactly 0, p = 1 a high of 1.
        Some(Estimate {
            value,
            low: (center - half).max(0.0),
            high: (center + half).min(1.0),
        })
    }
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn add_fills_the_right_cells() {
        let mut c = Confusion::default();
        c.add(true, true);
        c.add(true, false);
        c.add(false, true);
        c.add(false, false);
        c.add(false, false);
        assert_eq!(c, Confusion::new(1, 1, 2, 1));
        assert_eq!(
            (c.total(), c.positives(), c.negatives(), c.fired()),
            (5, 2, 3, 2)
        );
    }

    #[test]
    fn rates_and_kappa_on_a_hand_computed_matrix() {
        // tp 20, fp 5, tn 70, fn 5, n 100.
        // observed = 0.90; chance = (25*25 + 75*75) / 100^2 = 0.625; kappa = 0.275 / 0.375.
        let c = Confusion::new(20, 5, 70, 5);
        assert!(close(c.tpr().unwrap().value, 0.8));
        assert!(close(c.tnr().unwrap().value, 70.0 / 75.0));
        assert!(close(c.precision().unwrap(), 0.8));
        assert!(close(c.kappa().unwrap(), 0.275 / 0.375));
    }

    #[test]
    fn wilson_matches_hand_computation() {
        // 8 of 10: center = (0.8 + z²/20) / (1 + z²/10), half = z/(1 + z²/10) * sqrt(0.016 + z²/400).
        let z2 = Z_95 * Z_95;
        let d = 1.0 + z2 / 10.0;
        let center = (0.8 + z2 / 20.0) / d;
        let half = Z_95 / d * (0.016 + z2 / 400.0).sqrt();
        let e = Estimate::wilson(8, 10).unwrap();
        assert!(close(e.low, center - half) && close(e.high, center + half));
        // Published value of the 8/10 Wilson interval: [0.4902, 0.9433].
        assert!((e.low - 0.4902).abs() < 1e-4 && (e.high - 0.9433).abs() < 1e-4);
    }

    #[test]
    fn wilson_at_the_ends_stays_inside_zero_one() {
        let all = Estimate::wilson(5, 5).unwrap();
        assert_eq!(all.high, 1.0);
        // z² / (n + z²) for n = 5.
        assert!(close(all.low, 5.0 / (5.0 + Z_95 * Z_95)));
        let none = Estimate::wilson(0, 5).unwrap();
        assert_eq!(none.low, 0.0);
        assert!(close(none.high, Z_95 * Z_95 / (5.0 + Z_95 * Z_95)));
        assert_eq!(Estimate::wilson(0, 0), None);
    }

    #[test]
    fn perfect_agreement_gives_kappa_one() {
        assert!(close(Confusion::new(3, 0, 7, 0).kappa().unwrap(), 1.0));
    }

    #[test]
    fn perfect_disagreement_gives_kappa_minus_one() {
        // observed 0, chance = (5*5 + 5*5) / 100 = 0.5.
        assert!(close(Confusion::new(0, 5, 0, 5).kappa().unwrap(), -1.0));
    }

    #[test]
    fn check_that_never_fires_has_kappa_zero_and_no_precision() {
        // 4 positives all missed, 6 negatives all right: observed 0.6 = chance 0.6.
        let c = Confusion::new(0, 0, 6, 4);
        assert_eq!(c.kappa(), Ok(0.0));
        assert_eq!(c.precision(), None);
        assert_eq!(c.tpr().unwrap().value, 0.0);
        assert_eq!(c.tnr().unwrap().value, 1.0);
    }

    #[test]
    fn check_that_always_fires_has_kappa_zero() {
        assert_eq!(Confusion::new(4, 6, 0, 0).kappa(), Ok(0.0));
    }

    #[test]
    fn labels_of_one_class_leave_kappa_undefined() {
        // The check and the labels agree everywhere: chance agreement is exactly 1.
        let all_clean = Confusion::new(0, 0, 9, 0);
        assert_eq!(
            all_clean.kappa(),
            Err(KappaUndefined::OneLabelClass { positive: false })
        );
        assert_eq!(all_clean.tpr(), None);
        assert_eq!(all_clean.precision(), None);
        // Labels all clean, check fires on some: still one class, still undefined.
        let noisy = Confusion::new(0, 2, 7, 0);
        assert_eq!(
            noisy.kappa(),
            Err(KappaUndefined::OneLabelClass { positive: false })
        );
        assert_eq!(noisy.precision(), Some(0.0));
        let all_failing = Confusion::new(3, 0, 0, 1);
        assert_eq!(
            all_failing.kappa(),
            Err(KappaUndefined::OneLabelClass { positive: true })
        );
        assert_eq!(all_failing.tnr(), None);
        assert_eq!(all_failing.kappa().unwrap_err().to_string(), "0 negatives");
    }

    #[test]
    fn no_labels_leave_everything_undefined() {
        let c = Confusion::default();
        assert_eq!(c.kappa(), Err(KappaUndefined::NoLabels));
        assert_eq!((c.tpr(), c.tnr(), c.precision()), (None, None, None));
    }
}
