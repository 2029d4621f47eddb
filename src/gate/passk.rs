//! pass^k: the chance that all k trials of a scenario pass, averaged over scenarios.
//!
//! Agent benchmarks run each task several times because one lucky pass hides flakiness. With `n` trials
//! of which `c` passed, C(c, k) / C(n, k) is the unbiased estimate of the chance that k trials drawn
//! from the scenario all pass (τ-bench's pass^k). A scenario with fewer than k trials says nothing about
//! pass^k and is left out of that k's mean.

/// One scenario's trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trials {
    /// Traces carrying the scenario key.
    pub trials: u32,
    /// Those that passed.
    pub passes: u32,
}

/// pass^k for one k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassK {
    pub k: u32,
    /// Mean over the scenarios with at least k trials.
    pub value: f64,
    /// Scenarios with at least k trials.
    pub scenarios: usize,
}

/// C(c, k) / C(n, k) as a product of k ratios, so no factorial overflows; 0 when c < k.
pub fn all_pass_probability(n: u32, c: u32, k: u32) -> f64 {
    if c < k {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, j| acc * f64::from(c - j) / f64::from(n - j))
}

/// pass^1 … pass^K, K the largest trial count, over `scenarios` (each with passes ≤ trials).
pub fn pass_hat_k(scenarios: &[Trials]) -> Vec<PassK> {
    let max_trials = scenarios.iter().map(|s| s.trials).max().unwrap_or(0);
    (1..=max_trials)
        .map(|k| {
            let eligible: Vec<&Trials> = scenarios.iter().filter(|s| s.trials >= k).collect();
            let sum = eligible
                .iter()
                .fold(0.0, |acc, s| acc + all_pass_probability(s.trials, s.passes, k));
            PassK {
                k,
                value: sum / eligible.len() as f64,
                scenarios: eligible.len(),
            }
        })
        .collect()
}

/// True when some scenario has more than one trial: only then is pass^k reported.
pub fn has_trials(scenarios: &[Trials]) -> bool {
    scenarios.iter().any(|s| s.trials > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_worked_probabilities() {
        // 4 trials, 3 passes: pass^1 = 3/4, pass^2 = 3/6, pass^3 = 1/4, pass^4 = 0.
        assert_eq!(all_pass_probability(4, 3, 1), 0.75);
        assert_eq!(all_pass_probability(4, 3, 2), 0.5);
        assert_eq!(all_pass_probability(4, 3, 3), 0.25);
        assert_eq!(all_pass_probability(4, 3, 4), 0.0);
        assert_eq!(all_pass_probability(5, 5, 5), 1.0);
    }

    #[test]
    fn scenarios_with_fewer_trials_drop_out_of_higher_k() {
        let scenarios = [
            Trials {
                trials: 2,
                passes: 1,
            },
            Trials {
                trials: 1,
                passes: 1,
            },
        ];
        let got = pass_hat_k(&scenarios);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].value, 0.75);
        assert_eq!(got[0].scenarios, 2);
        assert_eq!(got[1].value, 0.0);
        assert_eq!(got[1].scenarios, 1);
        assert!(has_trials(&scenarios));
        assert!(!has_trials(&scenarios[1..]));
    }

    /// Mean over scenarios of `scipy.special.comb(c, k) / comb(4, k)`, from `scripts/stats_reference`.
    #[test]
    fn pass_k_matches_scipy() {
        let scenarios: Vec<Trials> = [4, 3, 2, 0, 1]
            .iter()
            .map(|&passes| Trials { trials: 4, passes })
            .collect();
        let expected = [0.5, 0.33333333333333337, 0.25, 0.2];
        let got = pass_hat_k(&scenarios);
        assert_eq!(got.len(), 4);
        for (g, e) in got.iter().zip(expected) {
            assert!((g.value - e).abs() < 1e-15, "pass^{} = {} vs {e}", g.k, g.value);
            assert_eq!(g.scenarios, 5);
        }
    }
}
