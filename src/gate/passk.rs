//! pass^k: the chance that all k trials of a scenario pass, averaged over scenarios.
//!
//! Agent benchmarks run each task several times because one lucky pass hides flakiness. With `n` trials
//! of which `c` passed, C(c, k) / C(n, k) is the unbiased estimate of the chance that k trials drawn
//! from the scenario all pass (τ-bench's pass^k). A scenario with fewer than k trials says nothing about
//! pass^k and is left out of that k's mean.

/// One scenario's trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trials {
    /// Traces carrying the scenario key.
    pub trials: u32,
    /// Those that passed.
    pub passes: u32,
}

/// pass^k for one k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PassK {
    pub k: u32,
    /// Mean over the scenarios with at least k trials.
    pub value: f64,
    /// Scenarios with at least k trials.
    pub scenarios: usize,
}

/// C(c, k) / C(n, k) as a product of k ratios, so no factorial overflows; 0 when c < k.
pub(crate) fn all_pass_probability(n: u32, c: u32, k: u32) -> f64 {
    if c < k {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, j| acc * f64::from(c - j) / f64::from(n - j))
}

/// pass^1 … pass^K, K the largest trial count, over `scenarios` (each with passes ≤ trials).
pub(crate) fn pass_hat_k(scenarios: &[Trials]) -> Vec<PassK> {
    let max_trials = scenarios.iter().map(|s| s.trials).max().unwrap_or(0);
    (1..=max_trials)
        .map(|k| {
            let eligible: Vec<&Trials> = scenarios.iter().filter(|s| s.trials >= k).collect();
            let sum = eligible.iter().fold(0.0, |acc, s| {
                acc + all_pass_probability(s.trials, s.passes, k)
            });
            PassK {
                k,
                value: sum / eligible.len() as f64,
                scenarios: eligible.len(),
            }
        })
        .collect()
}

/// True when some scenario has more than one trial: only then is pass^k reported.
pub(crate) fn has_trials(scenarios: &[Trials]) -> bool {
    scenarios.iter().any(|s| s.trials > 1)
}

/// pass^1 … pass^K of one run, overall and per check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PassKTable {
    /// Distinct scenario keys.
    pub scenarios: usize,
    /// Largest number of traces carrying one key.
    pub max_trials: u32,
    /// A trace passes when no check fired on it.
    pub overall: Vec<PassK>,
    /// Per distinct check name, in first-listed order: a trace passes the check when it did not fire.
    pub by_check: Vec<(String, Vec<PassK>)>,
}

/// The pass^k table of a run from its traces: for each trace, its scenario key and one fired flag per
/// name of `checks` (duplicates in `checks` allowed). `None` when no key has more than one trace.
#[cfg(test)]
pub(crate) fn pass_k_table<'a>(
    checks: &[String],
    traces: impl IntoIterator<Item = (&'a str, &'a [bool])>,
) -> Option<PassKTable> {
    let mut scenarios = super::ScenarioTally::new();
    let mut by_check = PassKTally::new(checks);
    for (key, fired) in traces {
        let scenario = scenarios.add(key, !fired.iter().any(|&f| f));
        by_check.add(scenario, fired);
    }
    by_check.finish(&scenarios)
}

/// The per-check half of a run's pass^k table, counted trace by trace: per scenario (its position in
/// the run's [`super::ScenarioTally`], which holds the overall trials) and per distinct check name,
/// the traces the check passed. 4 bytes per scenario and distinct check, kept only when pass^k is
/// asked for.
#[derive(Debug, Clone)]
pub(crate) struct PassKTally {
    names: Vec<String>,
    /// Column of each distinct name: a duplicated name passes only if none of its copies fired.
    columns: Vec<Vec<usize>>,
    /// Per scenario, the traces where no check fired, then those each distinct name passed:
    /// `passes[scenario * (names.len() + 1) + column]`.
    passes: Vec<u32>,
}

impl PassKTally {
    /// An empty tally for the active checks `checks` (duplicates allowed).
    pub(crate) fn new(checks: &[String]) -> Self {
        let mut names: Vec<String> = Vec::new();
        for name in checks {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        let columns = names
            .iter()
            .map(|n| (0..checks.len()).filter(|&i| checks[i] == *n).collect())
            .collect();
        Self {
            names,
            columns,
            passes: Vec::new(),
        }
    }

    /// Counts a trace of the scenario at `scenario` (first-seen position) with one fired flag per
    /// active check.
    pub(crate) fn add(&mut self, scenario: usize, fired: &[bool]) {
        let width = self.names.len() + 1;
        let end = (scenario + 1) * width;
        if self.passes.len() < end {
            self.passes.resize(end, 0);
        }
        let row = &mut self.passes[scenario * width..end];
        let clean = !fired.iter().any(|&f| f);
        let passed = std::iter::once(clean).chain(
            self.columns
                .iter()
                .map(|cols| !cols.iter().any(|&i| fired.get(i).copied().unwrap_or(false))),
        );
        for (cell, pass) in row.iter_mut().zip(passed) {
            *cell = cell.saturating_add(u32::from(pass));
        }
    }

    /// The table, with the trial counts of `scenarios` (the same traces, counted by the run's scenario
    /// tally, whose clean flags may leave checks out); `None` when no key has more than one trace.
    pub(crate) fn finish(&self, scenarios: &super::ScenarioTally) -> Option<PassKTable> {
        let width = self.names.len() + 1;
        let column = |c: usize| -> Vec<Trials> {
            scenarios
                .iter()
                .enumerate()
                .map(|(s, (_, stats))| Trials {
                    trials: stats.trials().trials,
                    passes: self.passes.get(s * width + c).copied().unwrap_or(0),
                })
                .collect()
        };
        let overall = column(0);
        if !has_trials(&overall) {
            return None;
        }
        Some(PassKTable {
            scenarios: overall.len(),
            max_trials: overall.iter().map(|t| t.trials).max().unwrap_or(0),
            overall: pass_hat_k(&overall),
            by_check: self
                .names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), pass_hat_k(&column(i + 1))))
                .collect(),
        })
    }
}

/// Per trace (same order as `traces`, each a scenario key and clean flag): the traces carrying its key,
/// those of them that are clean, and the scenario's pass^K with K the largest trial count of the run
/// (`None` when the scenario has fewer than K traces). `None` overall when no key has several traces.
pub(crate) fn trials_per_trace<'a>(
    traces: impl IntoIterator<Item = (&'a str, bool)> + Clone,
) -> Option<Vec<(Trials, Option<f64>)>> {
    let mut counts: std::collections::HashMap<&str, Trials> = std::collections::HashMap::new();
    for (key, clean) in traces.clone() {
        let cell = counts.entry(key).or_insert(Trials {
            trials: 0,
            passes: 0,
        });
        cell.trials += 1;
        cell.passes += u32::from(clean);
    }
    let max_trials = counts.values().map(|t| t.trials).max().unwrap_or(0);
    if max_trials < 2 {
        return None;
    }
    Some(
        traces
            .into_iter()
            .map(|(key, _)| {
                let t = counts[key];
                let pass_k = (t.trials >= max_trials)
                    .then(|| all_pass_probability(t.trials, t.passes, max_trials));
                (t, pass_k)
            })
            .collect(),
    )
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
            assert!(
                (g.value - e).abs() < 1e-15,
                "pass^{} = {} vs {e}",
                g.k,
                g.value
            );
            assert_eq!(g.scenarios, 5);
        }
    }

    /// k trials per scenario with a known pattern of failures: pass^1..pass^k against a direct count
    /// of the k-subsets of trials that all pass.
    #[test]
    fn run_with_k_trials_matches_a_direct_count() {
        let checks: Vec<String> = ["search_loop", "abstention"].map(String::from).to_vec();
        let k = 5usize;
        // Scenario s fails trial t on search_loop when (s + t) % 4 == 0, on abstention when t < s % 3.
        let fired: Vec<(String, [bool; 2])> = (0..12)
            .flat_map(|s| {
                (0..k).map(move |t| (format!("s{s}"), [(s + t).is_multiple_of(4), t < s % 3]))
            })
            .collect();
        let table = pass_k_table(&checks, fired.iter().map(|(key, f)| (key.as_str(), &f[..])))
            .expect("trials");
        assert_eq!(table.scenarios, 12);
        assert_eq!(table.max_trials, 5);
        // Direct count: for each scenario, the share of the C(k, j) subsets of trials that all pass.
        let direct = |j: usize, pass: &dyn Fn(usize, usize) -> bool| -> f64 {
            let mut total = 0.0;
            for s in 0..12 {
                let subsets: Vec<u32> = (0u32..1 << k)
                    .filter(|m| m.count_ones() as usize == j)
                    .collect();
                let good = subsets
                    .iter()
                    .filter(|m| (0..k).all(|t| (*m >> t) & 1 == 0 || pass(s, t)))
                    .count();
                total += good as f64 / subsets.len() as f64;
            }
            total / 12.0
        };
        let clean = |s: usize, t: usize| !(s + t).is_multiple_of(4) && t >= s % 3;
        let no_loop = |s: usize, t: usize| !(s + t).is_multiple_of(4);
        let no_abstention = |s: usize, t: usize| t >= s % 3;
        for j in 1..=k {
            assert!(
                (table.overall[j - 1].value - direct(j, &clean)).abs() < 1e-12,
                "overall k={j}"
            );
            assert!((table.by_check[0].1[j - 1].value - direct(j, &no_loop)).abs() < 1e-12);
            assert!((table.by_check[1].1[j - 1].value - direct(j, &no_abstention)).abs() < 1e-12);
        }
        assert_eq!(table.by_check[0].0, "search_loop");
        assert_eq!(
            table.overall[4].value, 0.0,
            "every scenario fails some trial"
        );
    }

    #[test]
    fn one_trace_per_scenario_has_no_table() {
        let checks = vec!["search_loop".to_string()];
        let traces = [("a", &[true][..]), ("b", &[false][..])];
        assert_eq!(pass_k_table(&checks, traces), None);
    }

    #[test]
    fn trials_per_trace_count_the_key() {
        let traces = [
            ("a", true),
            ("b", true),
            ("a", false),
            ("a", true),
            ("b", true),
        ];
        let got = trials_per_trace(traces.iter().copied()).expect("trials");
        let a = Trials {
            trials: 3,
            passes: 2,
        };
        assert_eq!(got[0], (a, Some(0.0)));
        assert_eq!(got[2], (a, Some(0.0)));
        // b has 2 of the run's 3 trials: no pass^3 of its own.
        assert_eq!(
            got[1],
            (
                Trials {
                    trials: 2,
                    passes: 2
                },
                None
            )
        );
        assert_eq!(trials_per_trace([("a", true), ("b", false)]), None);
    }
}
