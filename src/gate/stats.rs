//! The gate's statistics: a one-sided test of the candidate's clean rate against the baseline mean,
//! and the number of scenarios a drop of that size needs to be told from noise.
//!
//! The variance has three parts: the binomial noise of the baseline runs, that of the candidate, and
//! the run-to-run variance of the baseline clean rates. Every formula is evaluated in 0.4.1's order so
//! that p-values agree to the last bit; [`sample_variance`] is exact because 0.4.1's is.
//! The verdict that uses these numbers lives in [`super::verdict`].

use num_bigint::{BigInt, BigUint};

/// Φ⁻¹(0.95): the one-sided critical value for alpha 0.05.
pub(crate) const Z_ALPHA: f64 = 1.6448536269514715;
/// Φ⁻¹(0.80): the quantile for power 0.80.
pub(crate) const Z_BETA: f64 = 0.8416212335729144;
/// Significance level of the one-sided test.
pub(crate) const ALPHA: f64 = 0.05;
/// Power the required sample size aims for.
pub(crate) const POWER: f64 = 0.8;

/// Standard normal distribution function, Φ(x) = (1 + erf(x/√2)) / 2.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + super::erf::erf(x / std::f64::consts::SQRT_2))
}

/// The numbers the verdict is decided from.
#[derive(Debug, Clone, PartialEq)]
pub struct GateStats {
    /// Mean of the baseline runs' clean rates.
    pub baseline_mean: f64,
    /// Baseline mean minus the candidate's rate.
    pub drop: f64,
    /// One-sided p-value of the drop.
    pub p_value: f64,
    /// Scenarios needed to detect the drop with power 0.80, when the rate dropped.
    pub required_n: Option<u64>,
    /// `required_n` minus the scenarios the band has, at least 0, when the rate dropped.
    pub additional_n: Option<u64>,
}

/// Tests a candidate rate `rate` over `n` scenarios against baseline rates `per_run`.
///
/// `per_run` must not be empty (the band reader substitutes `[min, max]`).
pub(crate) fn test_drop(per_run: &[f64], rate: f64, n: usize) -> GateStats {
    let runs = per_run.len();
    let baseline_mean = per_run.iter().fold(0.0, |acc, r| acc + r) / runs as f64;
    let between = if runs > 1 {
        sample_variance(per_run)
    } else {
        0.0
    };
    let n_f = n as f64;
    let se = (baseline_mean * (1.0 - baseline_mean) / (runs * n) as f64
        + rate * (1.0 - rate) / n_f
        + between)
        .sqrt();
    let drop = baseline_mean - rate;
    let p_value = if se > 0.0 {
        1.0 - normal_cdf(drop / se)
    } else if drop > 0.0 {
        0.0
    } else {
        1.0
    };
    let (required_n, additional_n) = if drop > 0.0 {
        let required = required_sample_size(baseline_mean, rate, drop);
        (Some(required), Some(required.saturating_sub(n as u64)))
    } else {
        (None, None)
    };
    GateStats {
        baseline_mean,
        drop,
        p_value,
        required_n,
        additional_n,
    }
}

/// Scenarios per side for a one-sided two-proportion test at alpha 0.05 and power 0.80.
fn required_sample_size(baseline: f64, rate: f64, drop: f64) -> u64 {
    let pooled = (baseline + rate) / 2.0;
    let num = Z_ALPHA * (2.0 * pooled * (1.0 - pooled)).sqrt()
        + Z_BETA * (baseline * (1.0 - baseline) + rate * (1.0 - rate)).sqrt();
    let ratio = num / drop;
    // The small epsilon keeps an exact integer from rounding up to the next one.
    let needed = (ratio * ratio - 1e-9).ceil();
    if needed.is_nan() || needed <= 0.0 {
        0
    } else {
        // Saturates for an infinite ratio, where 0.4.1 crashes.
        needed as u64
    }
}

/// Sample variance (denominator len − 1) computed exactly and rounded once to the nearest double.
///
/// 0.4.1 computes it over exact rationals; a floating-point two-pass formula differs in the last bits
/// for rates such as 14/15, and those bits reach the p-value. Non-finite input gives NaN.
pub(crate) fn sample_variance(values: &[f64]) -> f64 {
    let count = values.len();
    if count < 2 {
        return f64::NAN;
    }
    if values.iter().any(|v| !v.is_finite()) {
        return f64::NAN;
    }
    let decoded: Vec<(i64, i32)> = values.iter().map(|&v| decode(v)).collect();
    let min_exp = decoded.iter().map(|&(_, e)| e).min().unwrap_or(0);
    // Every value is a_i · 2^min_exp with an integer a_i, so
    // variance = (count · Σa² − (Σa)²) / (count · (count − 1)) · 2^(2·min_exp), all exact.
    let mut sum = BigInt::from(0);
    let mut sum_sq = BigInt::from(0);
    for &(mantissa, exp) in &decoded {
        let a = BigInt::from(mantissa) << ((exp - min_exp) as usize);
        sum_sq += &a * &a;
        sum += a;
    }
    let numerator = BigInt::from(count) * sum_sq - &sum * &sum;
    let Some(numerator) = numerator.to_biguint() else {
        return 0.0;
    };
    let denominator = BigUint::from(count) * BigUint::from(count - 1);
    ratio_to_f64(&numerator, &denominator, 2 * i64::from(min_exp))
}

/// Splits a finite double into an integer mantissa and a power of two.
fn decode(v: f64) -> (i64, i32) {
    let bits = v.to_bits();
    let sign = if bits >> 63 == 0 { 1 } else { -1 };
    let exp_bits = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1u64 << 52) - 1)) as i64;
    if exp_bits == 0 {
        (sign * fraction, -1074)
    } else {
        (sign * (fraction | (1i64 << 52)), exp_bits - 1075)
    }
}

/// Nearest double (ties to even) to `num / den · 2^scale`, for a result in the normal range.
pub(crate) fn ratio_to_f64(num: &BigUint, den: &BigUint, scale: i64) -> f64 {
    if num.bits() == 0 {
        return 0.0;
    }
    // Shift so the quotient carries at least 55 bits: 53 kept, a rounding bit, and more for safety.
    let shift = (55 + den.bits() as i64 - num.bits() as i64).max(0);
    let shifted = num << (shift as usize);
    let quotient = &shifted / den;
    let inexact = (&shifted % den).bits() != 0;
    let quotient_bits = quotient.bits() as i64;
    let dropped = quotient_bits - 53;
    let mut mantissa = u64::try_from(&quotient >> (dropped as usize)).unwrap_or(u64::MAX);
    let half = BigUint::from(1u8) << ((dropped - 1) as usize);
    let low = &quotient & ((BigUint::from(1u8) << (dropped as usize)) - 1u8);
    let round_up = match low.cmp(&half) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => inexact || mantissa & 1 == 1,
    };
    if round_up {
        mantissa += 1;
    }
    scale_by_power_of_two(mantissa as f64, dropped - shift + scale)
}

/// `x · 2^exp`, exact while the result stays a normal double.
fn scale_by_power_of_two(mut x: f64, mut exp: i64) -> f64 {
    // Steps small enough that each factor is itself a finite double.
    while exp > 1000 {
        x *= 2f64.powi(1000);
        exp -= 1000;
    }
    while exp < -1000 {
        x *= 2f64.powi(-1000);
        exp += 1000;
    }
    x * 2f64.powi(exp as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked numbers of docs/compatibility.md §15.3: an all-clean 2-run band over 30 scenarios.
    #[test]
    fn worked_numbers_of_an_all_clean_band() {
        let per_run = [1.0, 1.0];
        let cases = [
            (29, 0.1545540585735654, 182, 152),
            (28, 0.07161745376233486, 89, 59),
            (27, 0.03394457743091461, 58, 28),
            (26, 0.015843194269896888, 43, 13),
        ];
        for (clean, p_value, required, additional) in cases {
            let stats = test_drop(&per_run, f64::from(clean) / 30.0, 30);
            assert_eq!(stats.p_value, p_value, "p for {clean}/30");
            assert_eq!(
                stats.required_n,
                Some(required),
                "required_n for {clean}/30"
            );
            assert_eq!(
                stats.additional_n,
                Some(additional),
                "additional_n for {clean}/30"
            );
        }
    }

    #[test]
    fn zero_standard_error_decides_by_the_sign_of_the_drop() {
        let dropped = test_drop(&[1.0, 1.0], 0.0, 30);
        // rate 0 and baseline 1 have no binomial noise and no spread: a certain drop.
        assert_eq!(dropped.p_value, 0.0);
        assert!(dropped.required_n.is_some_and(|n| n >= 1));
        let flat = test_drop(&[0.0, 0.0], 0.0, 30);
        assert_eq!(flat.p_value, 1.0);
        assert_eq!(flat.drop, 0.0);
        assert_eq!(flat.required_n, None);
        assert_eq!(flat.additional_n, None);
    }

    #[test]
    fn candidate_above_the_mean_is_not_a_drop() {
        let stats = test_drop(&[0.8, 0.8], 0.9, 30);
        assert!(stats.p_value > 0.5);
        assert_eq!(stats.required_n, None);
    }

    #[test]
    fn spread_between_runs_raises_the_p_value() {
        let tight = test_drop(&[0.9, 0.9, 0.9], 0.8, 50);
        let spread = test_drop(&[0.8, 0.9, 1.0], 0.8, 50);
        assert!(spread.p_value > tight.p_value);
    }

    /// Reference values from Python's `statistics.variance`, which works over exact fractions.
    #[test]
    fn sample_variance_is_exact() {
        let cases: [(&[f64], f64); 6] = [
            (&[1.0, 1.0], 0.0),
            (&[0.8, 0.9], 0.0049999999999999975),
            (
                &[0.9333333333333333, 0.8666666666666667, 0.8],
                0.004444444444444443,
            ),
            (&[0.1, 0.2, 0.3, 0.4], 0.016666666666666666),
            (&[1e-5, 0.5, 0.99999], 0.24999000010000003),
            // A naive two-pass sum gives ...407 here.
            (
                &[0.7, 0.7333333333333333, 0.9666666666666667, 0.5],
                0.03657407407407408,
            ),
        ];
        for (values, expected) in cases {
            assert_eq!(sample_variance(values), expected, "{values:?}");
        }
    }
}
