//! Budgets on the candidate's measures (`check --budget`): a statistic of a measure against a limit,
//! relative to the band or absolute, judged as the clean-rate gate is judged.
//!
//! A candidate past its limit FAILs only when the excess is significant: a bootstrap over the
//! candidate's scenarios (its traces of one scenario travel together) draws its statistic again, and
//! each draw meets the limit of one baseline run drawn at random, so both the candidate's sampling
//! noise and the band's run-to-run spread count. The p-value is the share of draws at or under their
//! limit. The generator is seeded with a constant, so the same inputs give the same verdict.
//!
//! Against a band with per-scenario medians (`baseline --measures --per-scenario`), a relative
//! budget on the mean is tested paired by scenario instead: see `budget_pairing.rs`.

use super::band::BandMeasures;
use super::bootstrap::{SEED, SplitMix64};
use super::budget_draw::{Drawn, RESAMPLES, spread};
use super::budget_pairing::BandPairing;
use super::measures::{DISTRIBUTIONS, MeasureValues, QUANTILES, STATISTICS};
use super::outcome::{Budget, BudgetOutcome, BudgetPairing, Limit, Unmeasured};
use super::stats::ALPHA;
use super::{Gate, GateError, GateWarning, Verdict};

/// The measures as a budget names them, with their [`DISTRIBUTIONS`] position.
const NAMES: [(&str, usize); 15] = [
    ("latency", 0),
    ("latency_ms", 0),
    ("tokens", 1),
    ("cost", 2),
    ("cost_usd", 2),
    ("steps", 3),
    ("tool_steps", 3),
    ("tool.steps", 3),
    ("tokens.input", 4),
    ("input_tokens", 4),
    ("tokens.output", 5),
    ("output_tokens", 5),
    ("model_calls", 6),
    ("model.calls", 6),
    ("calls", 6),
];

impl Limit {
    /// The limit for a band value of `reference`.
    pub(crate) fn of(self, reference: f64) -> f64 {
        match self {
            Limit::Percent(p) => reference * (1.0 + p / 100.0),
            Limit::Delta(d) => reference + d,
            Limit::Absolute(a) => a,
        }
    }
}

impl Budget {
    /// Parses `MEASURE.STATISTIC <= LIMIT`.
    ///
    /// # Errors
    ///
    /// [`GateError::BadBudget`] naming the expression and what is wrong with it.
    pub fn parse(expression: &str) -> Result<Budget, GateError> {
        let bad = |why: String| GateError::BadBudget {
            expression: expression.to_string(),
            why,
        };
        let (left, right) = expression.split_once("<=").ok_or_else(|| {
            bad("expected MEASURE.STATISTIC <= LIMIT, e.g. latency.p95 <= +20%".into())
        })?;
        let (name, stat) = left.trim().rsplit_once('.').ok_or_else(|| {
            bad("expected MEASURE.STATISTIC <= LIMIT, e.g. latency.p95 <= +20%".into())
        })?;
        let statistic = STATISTICS.iter().position(|s| *s == stat).ok_or_else(|| {
            bad(format!(
                "unknown statistic '{stat}' (one of {})",
                STATISTICS.join(", ")
            ))
        })?;
        let measure = NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, m)| m)
            .ok_or_else(|| {
                bad(format!(
                    "unknown measure '{name}' (one of latency, tokens, tokens.input, tokens.output, cost, steps, model_calls)"
                ))
            })?;
        let limit_text = right.trim();
        let number = |text: &str| {
            text.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .ok_or_else(|| {
                    bad(format!(
                        "the limit '{limit_text}' is not +N%, +N or a number"
                    ))
                })
        };
        let limit = if let Some(percent) = limit_text.strip_suffix('%') {
            if !percent.starts_with(['+', '-']) {
                return Err(bad(format!(
                    "a relative limit has a sign: '+{percent}%', not '{limit_text}'"
                )));
            }
            Limit::Percent(number(percent)?)
        } else if limit_text.starts_with(['+', '-']) {
            Limit::Delta(number(limit_text)?)
        } else {
            let value = number(limit_text)?;
            if value < 0.0 {
                return Err(bad(format!("the limit '{limit_text}' is negative")));
            }
            Limit::Absolute(value)
        };
        Ok(Budget {
            measure_name: name.to_string(),
            measure,
            statistic,
            limit,
            limit_text: limit_text.to_string(),
        })
    }

    /// `latency.p95`, as the expression named it.
    pub fn name(&self) -> String {
        format!("{}.{}", self.measure_name, STATISTICS[self.statistic])
    }

    /// Returns true if and only if the limit follows the band's value.
    pub fn is_relative(&self) -> bool {
        !matches!(self.limit, Limit::Absolute(_))
    }
}

/// Judges each budget against the band's measures and the run's values, in the order given; with
/// `pairing` (a band with per-scenario medians), a relative budget on a mean is tested paired by
/// scenario (see `budget_pairing.rs`).
///
/// # Errors
///
/// [`GateError::BudgetNotMeasured`] for an absolute budget on a measure no trace of the run recorded:
/// with no band value to fall back on, it could only pass silently.
pub fn evaluate_budgets(
    budgets: &[Budget],
    band: &BandMeasures,
    run: &MeasureValues,
    pairing: Option<&BandPairing<'_>>,
) -> Result<Vec<BudgetOutcome>, GateError> {
    budgets
        .iter()
        .map(|budget| evaluate_budget(budget, band, run, pairing))
        .collect()
}

fn evaluate_budget(
    budget: &Budget,
    band: &BandMeasures,
    run: &MeasureValues,
    pairing: Option<&BandPairing<'_>>,
) -> Result<BudgetOutcome, GateError> {
    let per_run: Vec<f64> = band[budget.measure][budget.statistic]
        .iter()
        .flatten()
        .copied()
        .collect();
    let band_value = (budget.is_relative() && !per_run.is_empty())
        .then(|| per_run.iter().fold(0.0, |acc, v| acc + v) / per_run.len() as f64);
    let groups = ScenarioValues::of(run, budget.measure);
    let eligible = budget.is_relative() && QUANTILES[budget.statistic].is_none();
    let paired = pairing.map(|p| p.pair(budget.measure, groups.iter()));
    // Fewer than half the run's scenarios in the band: the pairs would speak for too small a part of
    // the run, so the unpaired test decides.
    let use_paired = eligible
        && paired
            .as_ref()
            .is_some_and(|p| p.len() * 2 >= groups.len().max(1));
    let test = paired.as_ref().map(|p| BudgetPairing {
        paired: use_paired,
        eligible,
        shared: p.len(),
    });
    let unmeasured = |what| BudgetOutcome {
        budget: budget.clone(),
        verdict: Verdict::Inconclusive,
        candidate: None,
        band: band_value,
        limit: None,
        p_value: None,
        unmeasured: Some(what),
        scenarios: groups.len(),
        band_runs: per_run.clone(),
        scenarios_to_tell: None,
        pairing: test,
    };
    let Some(candidate) = run.statistic(budget.measure, budget.statistic) else {
        if !budget.is_relative() {
            return Err(GateError::BudgetNotMeasured {
                budget: budget.name(),
                measure: DISTRIBUTIONS[budget.measure],
            });
        }
        return Ok(unmeasured(Unmeasured::Run));
    };
    if budget.is_relative() && per_run.is_empty() {
        return Ok(unmeasured(Unmeasured::Band));
    }
    let limit = budget.limit.of(band_value.unwrap_or(0.0));
    let (verdict, p_value, scenarios_to_tell) = if candidate <= limit {
        (Verdict::Pass, None, None)
    } else {
        // Each draw is held to one baseline run's limit: a band whose runs spread widely makes an
        // excess of the same size less significant.
        let (drawn, excess, scenarios) = match paired.as_ref().filter(|_| use_paired) {
            Some(paired) => {
                let centre = band_value.unwrap_or(0.0);
                let scales: Vec<f64> = per_run
                    .iter()
                    .map(|&v| if centre == 0.0 { 1.0 } else { v / centre })
                    .collect();
                let drawn = paired.draw(budget.limit, &scales);
                (drawn, paired.excess(budget.limit), paired.len())
            }
            None => {
                let limits: Vec<f64> = if budget.is_relative() {
                    per_run.iter().map(|&v| budget.limit.of(v)).collect()
                } else {
                    vec![limit]
                };
                let drawn = groups.draw(budget.statistic, &limits);
                (drawn, candidate - limit, groups.len())
            }
        };
        if drawn.p_value < ALPHA {
            (Verdict::Fail, Some(drawn.p_value), None)
        } else {
            let to_tell = drawn.scenarios_to_tell(excess, scenarios);
            (Verdict::Inconclusive, Some(drawn.p_value), to_tell)
        }
    };
    Ok(BudgetOutcome {
        budget: budget.clone(),
        verdict,
        candidate: Some(candidate),
        band: band_value,
        limit: Some(limit),
        p_value,
        unmeasured: None,
        scenarios: groups.len(),
        band_runs: per_run,
        scenarios_to_tell,
        pairing: test,
    })
}

/// A measure's recorded values grouped by scenario (the scenarios in first-seen order, each one's
/// values in trace order).
struct ScenarioValues {
    values: Vec<f64>,
    /// Per scenario with a value, its position in the run's first-seen order.
    positions: Vec<u32>,
    /// Per scenario with a value, where its values start in `values`; one more entry at the end.
    starts: Vec<usize>,
}

impl ScenarioValues {
    fn of(run: &MeasureValues, measure: usize) -> Self {
        let mut pairs: Vec<(u32, f64)> = run
            .scenario
            .iter()
            .zip(&run.values[measure])
            .filter(|(_, v)| !v.is_nan())
            .map(|(&s, &v)| (s, v))
            .collect();
        // Stable: a scenario's values keep their trace order, so the statistic's sum is the run's.
        pairs.sort_by_key(|&(s, _)| s);
        let mut starts = Vec::new();
        let mut positions = Vec::new();
        for (i, (s, _)) in pairs.iter().enumerate() {
            if i == 0 || pairs[i - 1].0 != *s {
                starts.push(i);
                positions.push(*s);
            }
        }
        starts.push(pairs.len());
        let values: Vec<f64> = pairs.iter().map(|&(_, v)| v).collect();
        Self {
            values,
            positions,
            starts,
        }
    }

    /// Each scenario's position and values.
    fn iter(&self) -> impl Iterator<Item = (u32, &[f64])> {
        self.positions
            .iter()
            .zip(self.starts.windows(2))
            .map(|(&p, w)| (p, &self.values[w[0]..w[1]]))
    }

    fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Draws the run again [`RESAMPLES`] times, scenario by scenario, each draw against one of
    /// `limits` drawn at random.
    fn draw(&self, stat: usize, limits: &[f64]) -> Drawn {
        let n = self.len();
        if n == 0 {
            // Past the exact size the sample may hold no scenario with this measure: nothing to
            // resample, so nothing is significant.
            return Drawn {
                p_value: 1.0,
                run_spread: 0.0,
                band_spread: spread(limits),
            };
        }
        let mut rng = SplitMix64::new(SEED);
        let mut draw = Vec::with_capacity(self.values.len());
        let mut statistics = Vec::with_capacity(RESAMPLES);
        let mut within = 0usize;
        for _ in 0..RESAMPLES {
            draw.clear();
            for _ in 0..n {
                let s = rng.below(n as u64) as usize;
                draw.extend_from_slice(&self.values[self.starts[s]..self.starts[s + 1]]);
            }
            let limit = limits[rng.below(limits.len() as u64) as usize];
            let value = statistic(&mut draw, stat);
            within += usize::from(value <= limit);
            statistics.push(value);
        }
        Drawn {
            p_value: (within + 1) as f64 / (RESAMPLES + 1) as f64,
            run_spread: spread(&statistics),
            band_spread: spread(limits),
        }
    }
}

/// A statistic of `values` (not empty), by selection rather than a sort: the bootstrap takes it
/// thousands of times. Reorders `values`.
fn statistic(values: &mut [f64], stat: usize) -> f64 {
    match QUANTILES[stat] {
        None => values.iter().fold(0.0, |acc, v| acc + v) / values.len() as f64,
        Some(q) => {
            let h = (values.len() - 1) as f64 * q;
            let lo = h.floor() as usize;
            let (_, &mut low, above) = values.select_nth_unstable_by(lo, f64::total_cmp);
            let high = above.iter().copied().min_by(f64::total_cmp).unwrap_or(low);
            low + (h - lo as f64) * (high - low)
        }
    }
}

/// Puts the budgets' outcomes on the gate: a budget FAIL fails it, a budget INCONCLUSIVE makes a PASS
/// inconclusive, and a budget not measured is warned about, so that none passes silently.
pub fn add_budgets(gate: &mut Gate, outcomes: Vec<BudgetOutcome>) {
    for outcome in &outcomes {
        if let Some(side) = outcome.unmeasured {
            gate.warnings.push(GateWarning::BudgetUnmeasured {
                budget: outcome.budget.name(),
                measure: DISTRIBUTIONS[outcome.budget.measure],
                side,
            });
        }
        gate.verdict = match (gate.verdict, outcome.verdict) {
            (_, Verdict::Fail) | (Verdict::Fail, _) => Verdict::Fail,
            (_, Verdict::Inconclusive) | (Verdict::Inconclusive, _) => Verdict::Inconclusive,
            _ => Verdict::Pass,
        };
    }
    gate.budgets = Some(outcomes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_parses_to_its_limit() {
        let parsed = |text: &str| {
            let b = Budget::parse(text).expect(text);
            (b.name(), b.limit, b.limit_text)
        };
        assert_eq!(
            parsed("latency.p95 <= +20%"),
            ("latency.p95".into(), Limit::Percent(20.0), "+20%".into())
        );
        assert_eq!(
            parsed("cost.mean<=+10%"),
            ("cost.mean".into(), Limit::Percent(10.0), "+10%".into())
        );
        assert_eq!(
            parsed("steps.p90 <= +2"),
            ("steps.p90".into(), Limit::Delta(2.0), "+2".into())
        );
        assert_eq!(
            parsed("cost.p95 <= 0.05"),
            ("cost.p95".into(), Limit::Absolute(0.05), "0.05".into())
        );
        assert_eq!(
            parsed("tokens.p99 <= -5%"),
            ("tokens.p99".into(), Limit::Percent(-5.0), "-5%".into())
        );
        assert_eq!(Limit::Percent(20.0).of(100.0), 120.0);
        assert_eq!(Limit::Delta(2.0).of(3.0), 5.0);
        assert_eq!(Limit::Absolute(0.05).of(3.0), 0.05);
    }

    #[test]
    fn bad_expressions_name_themselves() {
        for (text, message) in [
            (
                "latency.p95",
                "--budget 'latency.p95': expected MEASURE.STATISTIC <= LIMIT, e.g. latency.p95 <= +20%",
            ),
            (
                "retries.mean <= +1",
                "--budget 'retries.mean <= +1': unknown measure 'retries' (one of latency, tokens, tokens.input, tokens.output, cost, steps, model_calls)",
            ),
            (
                "cost.p95 <= +x%",
                "--budget 'cost.p95 <= +x%': the limit '+x%' is not +N%, +N or a number",
            ),
        ] {
            let error = Budget::parse(text).map(|_| ()).expect_err(text);
            assert_eq!(error.to_string(), message);
        }
        // A signed number is a difference from the band's value, not a negative absolute limit.
        assert_eq!(
            Budget::parse("cost.p95 <= -1").map(|b| b.limit),
            Ok(Limit::Delta(-1.0))
        );
    }

    /// A band of two runs whose latency means are 100 and 110 (so 105), and a run of 400 scenarios
    /// whose values spread ±20 around `centre`.
    fn judged(centre: f64, limit: &str) -> BudgetOutcome {
        judged_over(400, centre, limit)
    }

    fn judged_over(scenarios: usize, centre: f64, limit: &str) -> BudgetOutcome {
        let mut band: BandMeasures = Default::default();
        band[0][0] = vec![Some(100.0), Some(110.0)];
        let mut run = MeasureValues::default();
        for i in 0..scenarios {
            let value = centre + (i % 5) as f64 * 10.0 - 20.0;
            run.add(i, [Some(value), None, None, Some(1.0), None, None, None]);
        }
        let budget = Budget::parse(&format!("latency.mean <= {limit}")).expect("budget");
        evaluate_budgets(&[budget], &band, &run, None)
            .expect("judged")
            .remove(0)
    }

    #[test]
    fn a_value_past_its_limit_fails_only_beyond_the_noise() {
        // +10% of 105 is 115.5 (110 and 121 run by run).
        let inside = judged(115.0, "+10%");
        assert_eq!((inside.verdict, inside.p_value), (Verdict::Pass, None));
        assert_eq!(inside.limit, Some(105.0 * 1.1));
        let barely = judged(116.0, "+10%");
        assert_eq!(barely.verdict, Verdict::Inconclusive);
        assert!(barely.p_value.is_some_and(|p| p >= ALPHA), "{barely:?}");
        let far = judged(125.0, "+10%");
        assert_eq!(far.verdict, Verdict::Fail);
        assert!(far.p_value.is_some_and(|p| p < ALPHA), "{far:?}");
        // Against a fixed limit only the run's own noise counts: 2 over it is significant here.
        let fixed = judged(117.5, "115.5");
        assert_eq!(fixed.verdict, Verdict::Fail, "{fixed:?}");
    }

    #[test]
    fn an_inconclusive_excess_says_how_many_scenarios_would_tell() {
        // 0.5 over a fixed limit, values spread ±20 (standard deviation 14.1): over 400 scenarios the
        // mean's noise is 0.71, and 0.5 is significant once it is 0.5 / 1.645 = 0.30, at about 2,200.
        let short = judged_over(400, 116.0, "115.5");
        assert_eq!(short.verdict, Verdict::Inconclusive, "{short:?}");
        let needed = short.scenarios_to_tell.expect("a number of scenarios");
        assert!((1_800..2_600).contains(&needed), "{needed}");
        // That many bring the excess to the edge of significance; a fifth more pass it.
        let edge = judged_over(needed.next_multiple_of(5), 116.0, "115.5");
        let p = edge.p_value.expect("past the limit");
        assert!((0.03..0.07).contains(&p), "{edge:?}");
        let long = judged_over((needed * 6 / 5).next_multiple_of(5), 116.0, "115.5");
        assert_eq!(long.verdict, Verdict::Fail, "{long:?}");
        // Against the band (runs 10 apart, so limits 11 apart), 0.5 over is within the band's own
        // spread: no number of scenarios would tell.
        let banded = judged(116.0, "+10%");
        assert_eq!(banded.verdict, Verdict::Inconclusive);
        assert_eq!(banded.scenarios_to_tell, None);
        // A FAIL or a PASS needs no estimate.
        assert_eq!(judged(125.0, "+10%").scenarios_to_tell, None);
        assert_eq!(judged(115.0, "+10%").scenarios_to_tell, None);
    }

    #[test]
    fn an_absolute_budget_on_an_unrecorded_measure_is_an_error() {
        let band: BandMeasures = Default::default();
        let run = MeasureValues::default();
        let absolute = Budget::parse("cost.p95 <= 0.05").expect("budget");
        assert_eq!(
            evaluate_budgets(&[absolute], &band, &run, None),
            Err(GateError::BudgetNotMeasured {
                budget: "cost.p95".into(),
                measure: "cost_usd",
            })
        );
        let relative = Budget::parse("cost.p95 <= +5%").expect("budget");
        let outcome = evaluate_budgets(&[relative], &band, &run, None).expect("judged");
        assert_eq!(outcome[0].verdict, Verdict::Inconclusive);
        assert_eq!(outcome[0].unmeasured, Some(Unmeasured::Run));
    }
}
