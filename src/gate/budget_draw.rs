//! What a budget's significance bootstrap found, paired (`budget_pairing.rs`) or not
//! (`budget.rs`): the p-value and the two spreads the estimate of the scenarios that would tell
//! rests on.

use super::stats::Z_ALPHA;

/// Draws of the significance bootstrap.
pub(crate) const RESAMPLES: usize = 2000;

/// What the significance bootstrap found.
pub(crate) struct Drawn {
    /// The share of draws at or under their limit, counting the observed run as one draw.
    pub(crate) p_value: f64,
    /// The spread (standard deviation) of the drawn statistic: the run's sampling noise.
    pub(crate) run_spread: f64,
    /// The spread of the drawn limits: the band's run-to-run noise, which more scenarios of the run
    /// do not reduce.
    pub(crate) band_spread: f64,
}

impl Drawn {
    /// About how many scenarios would make an excess of `excess` significant, the run's noise
    /// shrinking as one over the square root of its scenarios and the band's staying; `None` when
    /// the band's spread alone hides the excess (more baseline runs would tell, not more scenarios).
    pub(crate) fn scenarios_to_tell(&self, excess: f64, scenarios: usize) -> Option<usize> {
        let needed = (excess / Z_ALPHA).powi(2) - self.band_spread.powi(2);
        if needed <= 0.0 || !needed.is_finite() {
            return None;
        }
        let n = scenarios as f64 * self.run_spread.powi(2) / needed;
        (n.is_finite() && n < 1e12).then(|| (n.ceil() as usize).max(scenarios + 1))
    }
}

/// The standard deviation of `values` (not empty).
pub(crate) fn spread(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()
}
