//! Scenario-clustered bootstrap intervals for the candidate's clean rate and its difference from the
//! baseline.
//!
//! Scenarios, not traces, are resampled: the traces of one scenario (its trials) and its baseline rate
//! travel together, so the interval reflects that outcomes within a scenario are correlated. The
//! generator is seeded with a constant, so the same inputs always give the same interval. Percentiles
//! interpolate linearly between order statistics, as NumPy's default does.

/// Resamples drawn.
pub(crate) const RESAMPLES: usize = 2000;
/// Seed of the resampling generator.
pub(crate) const SEED: u64 = 16;
/// Coverage of the intervals.
pub(crate) const CONFIDENCE: f64 = 0.95;

/// Percentile intervals from a scenario bootstrap.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    /// Interval for the mean of the candidate values.
    pub candidate: [f64; 2],
    /// Interval for the mean of candidate minus baseline values.
    pub difference: [f64; 2],
}

/// Bootstrap intervals over scenarios with per-scenario `candidate` and `baseline` values (same length,
/// not empty), `resamples` draws from generator `seed`.
pub(crate) fn scenario_bootstrap(
    candidate: &[f64],
    baseline: &[f64],
    resamples: usize,
    seed: u64,
) -> Intervals {
    let n = candidate.len();
    let mut rng = SplitMix64::new(seed);
    let mut means = Vec::with_capacity(resamples);
    let mut differences = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let (mut c, mut d) = (0.0, 0.0);
        for _ in 0..n {
            let i = rng.below(n as u64) as usize;
            c += candidate[i];
            d += candidate[i] - baseline[i];
        }
        means.push(c / n as f64);
        differences.push(d / n as f64);
    }
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Intervals {
        candidate: [
            percentile(&mut means, tail),
            percentile(&mut means, 1.0 - tail),
        ],
        difference: [
            percentile(&mut differences, tail),
            percentile(&mut differences, 1.0 - tail),
        ],
    }
}

/// The `q` quantile (0 ≤ q ≤ 1) of `values`, interpolating linearly between order statistics (NumPy's
/// `percentile` with its default method). Sorts `values`; `values` must not be empty.
pub(crate) fn percentile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let h = (values.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(values.len() - 1);
    values[lo] + (h - lo as f64) * (values[hi] - values[lo])
}

/// Steele, Lea and Flood's SplitMix64: small, fast, and fully determined by its seed.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer below `bound` (> 0), by Lemire's multiply-and-reject.
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(bound);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference outputs of SplitMix64 seeded with 1234567 (Vigna's C reference implementation).
    #[test]
    fn generator_matches_the_reference_sequence() {
        let mut rng = SplitMix64::new(1234567);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423
            ]
        );
    }

    #[test]
    fn percentile_interpolates_like_numpy() {
        let mut values = [4.0, 1.0, 3.0, 2.0];
        // numpy.percentile([1, 2, 3, 4], [2.5, 50, 97.5]) = [1.075, 2.5, 3.925]
        assert_eq!(percentile(&mut values, 0.5), 2.5);
        assert!((percentile(&mut values, 0.025) - 1.075).abs() < 1e-15);
        assert!((percentile(&mut values, 0.975) - 3.925).abs() < 1e-15);
        assert_eq!(percentile(&mut [7.0], 0.975), 7.0);
    }

    #[test]
    fn constant_inputs_give_a_point_interval() {
        let intervals = scenario_bootstrap(&[1.0; 20], &[0.5; 20], 200, SEED);
        assert_eq!(intervals.candidate, [1.0, 1.0]);
        assert_eq!(intervals.difference, [0.5, 0.5]);
    }

    #[test]
    fn same_seed_same_interval_and_it_covers_the_estimate() {
        let candidate: Vec<f64> = (0..50).map(|i| f64::from(u8::from(i % 5 != 0))).collect();
        let baseline = vec![1.0; 50];
        let a = scenario_bootstrap(&candidate, &baseline, RESAMPLES, SEED);
        let b = scenario_bootstrap(&candidate, &baseline, RESAMPLES, SEED);
        assert_eq!(a, b);
        assert!(a.candidate[0] < 0.8 && 0.8 < a.candidate[1]);
        assert!(a.difference[0] < -0.2 && -0.2 < a.difference[1]);
    }

    #[test]
    fn draws_below_a_bound_are_uniform_enough() {
        let mut rng = SplitMix64::new(SEED);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[rng.below(7) as usize] += 1;
        }
        // Each count is Binomial(70000, 1/7): mean 10000, sd ≈ 93; 6 sd is far outside chance.
        assert!(
            counts.iter().all(|&c| c.abs_diff(10_000) < 560),
            "{counts:?}"
        );
    }

    /// `numpy.percentile(values, [2.5, 50, 97.5])`, from `scripts/stats_reference`.
    #[test]
    fn percentile_matches_numpy() {
        let values = [0.3, 0.1, 0.7, 0.5, 0.9, 0.2, 0.4];
        for (q, expected) in [(0.025, 0.115), (0.5, 0.4), (0.975, 0.8699999999999999)] {
            let got = percentile(&mut values.clone(), q);
            assert!((got - expected).abs() < 1e-15, "q={q}: {got} vs {expected}");
        }
    }

    /// `scipy.stats.bootstrap(..., method="percentile")` with 200,000 resamples (paired for the
    /// difference). Ours uses 2000 resamples from another generator, so the endpoints agree within
    /// Monte Carlo error: one and a half steps of 1/60.
    #[test]
    fn bootstrap_interval_matches_scipy_within_resampling_error() {
        let n = 60;
        let candidate: Vec<f64> = (0..n)
            .map(|i| if i % 12 == 0 || i % 17 == 5 { 0.0 } else { 1.0 })
            .collect();
        let baseline: Vec<f64> = (0..n)
            .map(|i| if i % 9 != 0 { 1.0 } else { 2.0 / 3.0 })
            .collect();
        let got = scenario_bootstrap(&candidate, &baseline, RESAMPLES, SEED);
        let tolerance = 1.5 / f64::from(n);
        let scipy_rate = [0.75, 0.9333333333333333];
        let scipy_difference = [-0.20555555555555555, -0.02777777777777777];
        for (g, e) in got.candidate.iter().zip(scipy_rate) {
            assert!(
                (g - e).abs() <= tolerance,
                "rate {:?} vs {scipy_rate:?}",
                got.candidate
            );
        }
        for (g, e) in got.difference.iter().zip(scipy_difference) {
            assert!(
                (g - e).abs() <= tolerance,
                "difference {:?} vs {scipy_difference:?}",
                got.difference
            );
        }
    }
}
