//! The paired gate: each scenario's candidate clean flag against that scenario's baseline clean rate.
//!
//! The band gate compares two aggregate rates, so the scenario-to-scenario spread counts as noise; the
//! same scenarios run in the baseline and the candidate, and pairing them removes that spread. The test
//! is a one-sided sign-flip permutation test of the paired differences `d = baseline rate − candidate
//! flag`: under "no change" each difference is as likely to have either sign. When every baseline rate is
//! 0 or 1 this is exactly McNemar's test on the discordant scenarios (a one-sided sign test), computed
//! from exact binomial sums. With fractional rates the permutation distribution is enumerated exactly by
//! a subset-sum table, or approximated by the normal distribution when that table would be too large.
//!
//! Everything here is a pure function of per-scenario counts; the band reader and the verdict wire it in.

use num_bigint::BigUint;

use super::stats::{Z_ALPHA, Z_BETA, normal_cdf, ratio_to_f64};

/// Cells × items above which the exact permutation table gives way to the normal approximation
/// (about a second of work in an unoptimised build).
const EXACT_BUDGET: u64 = 50_000_000;

/// Discordant scenarios up to which a binomial tail is summed exactly (each term is an m-bit integer,
/// so the work grows with m²); beyond, the normal approximation is as good as exact to three places.
const EXACT_BINOMIAL_MAX: usize = 20_000;

/// One scenario's pair: clean runs out of the band's runs, and the candidate's flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pair {
    /// Baseline runs in which the scenario was clean.
    pub baseline_clean: u32,
    /// Candidate clean (every trace of the scenario clean; absent counts as not clean).
    pub candidate_clean: bool,
}

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Every nonzero difference has the same size (always so when the baseline rates are 0 or 1, where
    /// it is exact one-sided McNemar): a binomial tail over the discordant scenarios.
    SignTest,
    /// Fractional baseline rates: the sign-flip permutation distribution, enumerated exactly.
    ExactPermutation,
    /// Too many discordant scenarios to count exactly: the normal approximation of the same
    /// distribution.
    NormalPermutation,
}

impl Method {
    /// The name written into the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SignTest => "sign test (exact)",
            Method::ExactPermutation => "paired permutation (exact)",
            Method::NormalPermutation => "paired permutation (normal approximation)",
        }
    }
}

/// The outcome of the paired test.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedStats {
    /// Scenarios compared.
    pub n: usize,
    /// Mean of the per-scenario baseline rates (equals the mean of the per-run rates).
    pub baseline_rate: f64,
    /// Share of scenarios clean in the candidate.
    pub candidate_rate: f64,
    /// `baseline_rate − candidate_rate`.
    pub drop: f64,
    /// Scenarios whose difference is not zero.
    pub discordant: usize,
    /// Indices of scenarios clean in every baseline run and not clean now.
    pub regressed: Vec<usize>,
    /// Indices of scenarios clean in no baseline run and clean now.
    pub improved: Vec<usize>,
    pub method: Method,
    /// One-sided p-value of a drop.
    pub p_value: f64,
    /// Scenarios the paired test needs to detect a drop of this size at alpha 0.05 and power 0.8; `None`
    /// when there is no drop.
    pub required_n: Option<u64>,
}

/// The paired test over `pairs`, with `runs` baseline runs.
///
/// `pairs` must not be empty and every `baseline_clean` must be at most `runs`.
pub(crate) fn paired_test(pairs: &[Pair], runs: u32) -> PairedStats {
    let n = pairs.len();
    let r = i64::from(runs.max(1));
    // Differences in units of 1/runs: baseline clean runs minus `runs` when the candidate is clean.
    let diffs: Vec<i64> = pairs
        .iter()
        .map(|p| i64::from(p.baseline_clean) - if p.candidate_clean { r } else { 0 })
        .collect();
    let baseline_total: i64 = pairs.iter().map(|p| i64::from(p.baseline_clean)).sum();
    let candidate_total = pairs.iter().filter(|p| p.candidate_clean).count();
    let baseline_rate = baseline_total as f64 / (r as f64 * n as f64);
    let candidate_rate = candidate_total as f64 / n as f64;
    let regressed = (0..n)
        .filter(|&i| i64::from(pairs[i].baseline_clean) == r && !pairs[i].candidate_clean)
        .collect();
    let improved = (0..n)
        .filter(|&i| pairs[i].baseline_clean == 0 && pairs[i].candidate_clean)
        .collect();
    let (method, p_value) = sign_flip_p_value(&diffs);
    let units: Vec<f64> = diffs.iter().map(|&d| d as f64 / r as f64).collect();
    PairedStats {
        n,
        baseline_rate,
        candidate_rate,
        drop: baseline_rate - candidate_rate,
        discordant: diffs.iter().filter(|&&d| d != 0).count(),
        regressed,
        improved,
        method,
        p_value,
        required_n: paired_sample_size(&units),
    }
}

/// One-sided p-value P(S ≥ observed sum) of the sign-flip distribution of integer differences.
pub(crate) fn sign_flip_p_value(diffs: &[i64]) -> (Method, f64) {
    let magnitudes: Vec<u64> = diffs
        .iter()
        .filter(|&&d| d != 0)
        .map(|d| d.unsigned_abs())
        .collect();
    let observed: i64 = diffs.iter().sum();
    let m = magnitudes.len();
    if m == 0 {
        // No discordant scenario: nothing points either way.
        return (Method::SignTest, 1.0);
    }
    let g = magnitudes.iter().copied().fold(0, gcd);
    let scaled: Vec<u64> = magnitudes.iter().map(|a| a / g).collect();
    let total: u64 = scaled.iter().sum();
    // S = 2·U − total, with U the sum of the magnitudes given a plus sign; S ≥ T ⇔ U ≥ (T/g + total)/2.
    let threshold = (observed / g as i64 + total as i64 + 1).div_euclid(2);
    if m <= EXACT_BINOMIAL_MAX && scaled.iter().all(|&a| a == 1) {
        // U is Binomial(m, 1/2): count exactly.
        let successes = threshold.clamp(0, m as i64 + 1) as u64;
        return (
            Method::SignTest,
            binomial_half_upper_tail(m as u64, successes),
        );
    }
    if (m as u64).saturating_mul(total) <= EXACT_BUDGET {
        return (
            Method::ExactPermutation,
            exact_subset_sum_tail(&scaled, threshold),
        );
    }
    // Mean 0 and variance Σa²; S moves in steps of 2, so the continuity correction is 1.
    let variance: f64 = scaled.iter().map(|&a| (a as f64) * (a as f64)).sum();
    let t = observed as f64 / g as f64;
    let p = 1.0 - normal_cdf((t - 1.0) / variance.sqrt());
    (Method::NormalPermutation, p.clamp(0.0, 1.0))
}

/// P(X ≥ k) for X ~ Binomial(m, 1/2), from exact integer sums rounded once.
pub(crate) fn binomial_half_upper_tail(m: u64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > m {
        return 0.0;
    }
    // C(m, j) for j = k..=m, summed exactly; C(m, j+1) = C(m, j)·(m−j)/(j+1).
    let mut coefficient = BigUint::from(1u8);
    for j in 0..k {
        coefficient = coefficient * BigUint::from(m - j) / BigUint::from(j + 1);
    }
    let mut sum = coefficient.clone();
    for j in k..m {
        coefficient = coefficient * BigUint::from(m - j) / BigUint::from(j + 1);
        sum += &coefficient;
    }
    ratio_to_f64(&sum, &BigUint::from(1u8), -(m as i64))
}

/// P(U ≥ threshold) where U sums each magnitude with probability 1/2, by a table of subset sums.
fn exact_subset_sum_tail(magnitudes: &[u64], threshold: i64) -> f64 {
    let total: usize = magnitudes.iter().map(|&a| a as usize).sum();
    if threshold <= 0 {
        return 1.0;
    }
    if threshold as usize > total {
        return 0.0;
    }
    // Probabilities rather than counts: each step halves, so nothing overflows and nothing is lost
    // until a probability falls below 2^-1074.
    let mut table = vec![0.0f64; total + 1];
    table[0] = 1.0;
    let mut reach = 0usize;
    for &a in magnitudes {
        let a = a as usize;
        for u in (0..=reach + a).rev() {
            let stay = if u <= reach { table[u] } else { 0.0 };
            let moved = if u >= a { table[u - a] } else { 0.0 };
            table[u] = 0.5 * (stay + moved);
        }
        reach += a;
    }
    // Summed from the far tail inwards so small terms are not lost against large ones.
    table[threshold as usize..]
        .iter()
        .rev()
        .fold(0.0, |acc, p| acc + p)
        .min(1.0)
}

/// Scenarios a paired test needs to detect the mean of `diffs` (per-scenario differences in clean-rate
/// units, positive for a drop) at one-sided alpha 0.05 and power 0.8; `None` when the mean is not a drop.
///
/// Under "no change" the mean difference has variance E[d²]/n, under the observed change
/// (E[d²] − δ²)/n, so n = ((z_α·√E[d²] + z_β·√(E[d²] − δ²)) / δ)². With 0/1 baseline rates this is
/// Connor's (1987) sample size for McNemar's test, E[d²] being the share of discordant scenarios.
pub(crate) fn paired_sample_size(diffs: &[f64]) -> Option<u64> {
    if diffs.is_empty() {
        return None;
    }
    let n = diffs.len() as f64;
    let delta = diffs.iter().sum::<f64>() / n;
    if delta <= 0.0 || delta.is_nan() {
        return None;
    }
    let second = diffs.iter().map(|d| d * d).sum::<f64>() / n;
    let ratio =
        (Z_ALPHA * second.sqrt() + Z_BETA * (second - delta * delta).max(0.0).sqrt()) / delta;
    // The small epsilon keeps an exact integer from rounding up to the next one.
    let needed = (ratio * ratio - 1e-9).ceil();
    Some(if needed <= 0.0 { 1 } else { needed as u64 })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(baseline: &[u32], candidate: &[bool]) -> Vec<Pair> {
        baseline
            .iter()
            .zip(candidate)
            .map(|(&b, &c)| Pair {
                baseline_clean: b,
                candidate_clean: c,
            })
            .collect()
    }

    /// Hand-worked: 3 regressed, 0 improved → P(X ≥ 3 | Bin(3, ½)) = 1/8.
    #[test]
    fn three_regressions_alone_give_one_eighth() {
        let p = pairs(
            &[2, 2, 2, 2, 2, 0],
            &[false, false, false, true, true, false],
        );
        let stats = paired_test(&p, 2);
        assert_eq!(stats.method, Method::SignTest);
        assert_eq!(stats.p_value, 0.125);
        assert_eq!(stats.regressed, vec![0, 1, 2]);
        assert!(stats.improved.is_empty());
        assert_eq!(stats.discordant, 3);
    }

    /// Hand-worked: 4 regressed, 1 improved → P(X ≥ 4 | Bin(5, ½)) = 6/32.
    #[test]
    fn improvements_offset_regressions() {
        let p = pairs(
            &[1, 1, 1, 1, 0, 1],
            &[false, false, false, false, true, true],
        );
        let stats = paired_test(&p, 1);
        assert_eq!(stats.p_value, 6.0 / 32.0);
        assert_eq!(stats.improved, vec![4]);
        assert_eq!(stats.drop, 3.0 / 6.0);
    }

    #[test]
    fn no_discordant_scenario_is_no_evidence() {
        let p = pairs(&[3, 3, 0], &[true, true, false]);
        let stats = paired_test(&p, 3);
        assert_eq!(stats.p_value, 1.0);
        assert_eq!(stats.required_n, None);
    }

    /// Hand-worked fractional case: differences (in thirds) 3, 2, 1, −1. Of the 16 sign patterns, the
    /// sums ≥ 5 are (+3+2+1−1)=5, (+3+2+1+1)=7, (+3+2−1+1)=5: 3/16.
    #[test]
    fn fractional_rates_enumerate_the_sign_flips() {
        let p = pairs(&[3, 2, 1, 2], &[false, false, false, true]);
        let stats = paired_test(&p, 3);
        assert_eq!(stats.method, Method::ExactPermutation);
        assert_eq!(stats.p_value, 3.0 / 16.0);
        assert_eq!(stats.regressed, vec![0]);
    }

    /// Every sign pattern counted by brute force agrees with the subset-sum table.
    #[test]
    fn subset_sum_table_matches_brute_force() {
        let diffs: [i64; 9] = [4, -1, 3, 3, 2, -4, 1, 4, 2];
        let observed: i64 = diffs.iter().sum();
        let m = diffs.len();
        let at_least = (0u32..1 << m)
            .filter(|mask| {
                let s: i64 = (0..m)
                    .map(|i| {
                        let a = diffs[i].abs();
                        if mask >> i & 1 == 1 { a } else { -a }
                    })
                    .sum();
                s >= observed
            })
            .count();
        let (method, p) = sign_flip_p_value(&diffs);
        assert_eq!(method, Method::ExactPermutation);
        assert_eq!(p, at_least as f64 / 512.0);
    }

    #[test]
    fn binomial_tail_edges_and_symmetry() {
        assert_eq!(binomial_half_upper_tail(10, 0), 1.0);
        assert_eq!(binomial_half_upper_tail(10, 11), 0.0);
        assert_eq!(binomial_half_upper_tail(10, 10), 1.0 / 1024.0);
        // P(X ≥ 6) + P(X ≥ 5) = 1 for Bin(10, ½) by symmetry.
        assert_eq!(
            binomial_half_upper_tail(10, 6) + binomial_half_upper_tail(10, 5),
            1.0
        );
        // Far tails stay positive and exact: 2^-2000.
        assert_eq!(
            binomial_half_upper_tail(2000, 2000),
            2f64.powi(-1000) * 2f64.powi(-1000)
        );
    }

    #[test]
    fn large_fractional_input_falls_back_to_the_normal_approximation() {
        // 10,000 scenarios at rates 2/3 and 1/3, the candidate clean on half of each: too big to enumerate,
        // and no net change, so p is near one half (the correction for continuity lifts it a little).
        let p: Vec<Pair> = (0..10_000)
            .map(|i| Pair {
                baseline_clean: if i % 2 == 0 { 2 } else { 1 },
                candidate_clean: i % 4 < 2,
            })
            .collect();
        let stats = paired_test(&p, 3);
        assert_eq!(stats.method, Method::NormalPermutation);
        assert!(
            stats.p_value > 0.5 && stats.p_value < 0.52,
            "{}",
            stats.p_value
        );
    }

    /// Hand-worked Connor: 5 regressed of 100, none improved: ψ = δ = 0.05,
    /// n = ((1.64485·√0.05 + 0.84162·√0.0475)/0.05)² = 121.5… → 122.
    #[test]
    fn sample_size_for_mcnemar() {
        let mut diffs = vec![0.0; 100];
        diffs[..5].fill(1.0);
        assert_eq!(paired_sample_size(&diffs), Some(122));
        assert_eq!(paired_sample_size(&[0.0, -1.0]), None);
        assert_eq!(paired_sample_size(&[]), None);
    }

    /// `scipy.stats.binomtest(k, n, 0.5, alternative="greater").pvalue`, from `scripts/stats_reference`.
    #[test]
    fn sign_test_matches_scipy() {
        let cases = [
            (3, 3, 0.125),
            (4, 5, 0.1875),
            (9, 12, 0.072998046875),
            (15, 20, 0.020694732666015625),
            (30, 45, 0.017848901777597348),
            (520, 1000, 0.10872414660207075),
            (7, 7, 0.0078125),
        ];
        for (k, n, expected) in cases {
            let got = binomial_half_upper_tail(n, k);
            assert!(
                (got - expected).abs() <= 1e-13 * expected,
                "P(X >= {k} | Bin({n}, 1/2)) = {got}, scipy {expected}"
            );
            // Through the paired test: k regressed and n − k improved scenarios of 2 runs.
            let p: Vec<Pair> = (0..n)
                .map(|i| Pair {
                    baseline_clean: if i < k { 2 } else { 0 },
                    candidate_clean: i >= k,
                })
                .collect();
            let stats = paired_test(&p, 2);
            assert_eq!(stats.method, Method::SignTest);
            assert_eq!(stats.p_value, got);
        }
        // SciPy's binomial tail is off in the last bits there; the exact sum over fractions
        // (Python: `float(Fraction(sum(comb(1000, j) for j in range(520, 1001)), 2**1000))`) is this.
        assert_eq!(binomial_half_upper_tail(1000, 520), 0.10872414660207047);
    }

    /// statsmodels' exact McNemar (`mcnemar([[10, b], [c, 4]], exact=True)`) is two-sided: twice the
    /// one-sided tail of the larger discordant count.
    #[test]
    fn two_sided_mcnemar_matches_statsmodels() {
        for (b, c, expected) in [
            (9, 3, 0.14599609375),
            (15, 5, 0.04138946533203125),
            (6, 0, 0.03125),
        ] {
            let one_sided = binomial_half_upper_tail(b + c, b);
            assert_eq!((2.0 * one_sided).min(1.0), expected, "b={b} c={c}");
        }
    }

    /// `scipy.stats.permutation_test` over all 2^14 within-pair swaps, statistic mean(baseline −
    /// candidate), alternative "greater".
    #[test]
    fn permutation_test_matches_scipy() {
        let baseline = [3, 3, 2, 3, 1, 2, 3, 3, 0, 2, 3, 1, 3, 2];
        let candidate = [0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0];
        let p: Vec<Pair> = baseline
            .iter()
            .zip(candidate)
            .map(|(&b, c)| Pair {
                baseline_clean: b,
                candidate_clean: c == 1,
            })
            .collect();
        let stats = paired_test(&p, 3);
        assert_eq!(stats.method, Method::ExactPermutation);
        assert_eq!(stats.p_value, 0.025390625);
        // Sample size by the same formula with scipy.stats.norm.ppf quantiles.
        assert_eq!(stats.required_n, Some(19));
    }

    /// `scipy.stats.norm.sf(z)`, the tail the normal approximation uses.
    #[test]
    fn normal_tail_matches_scipy() {
        for (z, expected) in [
            (0.5, 0.3085375387259869),
            (1.6448536269514715, 0.05000000000000011),
            (3.0, 0.0013498980316300933),
        ] {
            let got = 1.0 - normal_cdf(z);
            assert!((got - expected).abs() < 1e-15, "z={z}: {got} vs {expected}");
        }
    }

    /// Connor's sample size with scipy's normal quantiles, from `scripts/stats_reference`.
    #[test]
    fn sample_size_matches_the_scipy_formula() {
        let mut diffs = vec![0.0; 300];
        diffs[..6].fill(1.0);
        diffs[6..8].fill(-1.0);
        assert_eq!(paired_sample_size(&diffs), Some(926));
    }

    #[test]
    fn very_many_discordant_scenarios_use_the_normal_approximation() {
        // 30,000 discordant scenarios, 15,100 regressed: z = (200 − 1)/√30000 ≈ 1.149.
        let p: Vec<Pair> = (0..30_000)
            .map(|i| Pair {
                baseline_clean: u32::from(i < 15_100),
                candidate_clean: i >= 15_100,
            })
            .collect();
        let stats = paired_test(&p, 1);
        assert_eq!(stats.method, Method::NormalPermutation);
        let expected = 1.0 - normal_cdf(199.0 / 30_000f64.sqrt());
        assert_eq!(stats.p_value, expected);
        // The exact tail, scipy.stats.binom.sf(15099, 30000, 0.5) (scripts/stats_reference).
        let exact = 0.12529282366821576;
        assert!((stats.p_value - exact).abs() < 1e-6, "{}", stats.p_value);
    }
}
