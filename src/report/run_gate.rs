//! The gate of one `check` run: its settings, read before the run so a bad band fails fast, and the
//! decision made from the run's counts before anything is printed.
//!
//! `check` and `merge` both decide their gate here; the CLI only reads the flags into
//! [`GateSettings`] and turns a [`GateRefused`] into its exit status.

use std::path::Path;

use crate::gate::slices::{SliceTable, SliceVerdict};
use crate::gate::{
    BandFile, Budget, Gate, GateError, GateMode, RunSummary, SetAside, Trust, Verdict, add_budgets,
    evaluate_budgets, evaluate_mode, evaluate_pass_k, shared_scenarios, ungated,
};

use super::render::gate_lines::{disjoint_band_error, slices_not_gated_warning, ungated_warning};

/// The band and gate settings of a run, read before any work.
pub(crate) struct GateSettings {
    /// `--band`, read.
    pub band: Option<BandFile>,
    /// `--gate`.
    pub mode: GateMode,
    /// The band's clean-run counts per scenario, for the paired gate.
    pub clean_runs: Option<Vec<u32>>,
    /// `--trust` read, with `--min-kappa`.
    pub trust: Option<(Trust, f64)>,
    /// `--budget`, parsed.
    pub budgets: Vec<Budget>,
}

/// The gate's flags that are not read ahead: how the band is named and what refuses or fails a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GateFlags<'a> {
    /// The band's path as given (`--band`).
    pub band_path: Option<&'a Path>,
    /// `--strict-band`.
    pub strict_band: bool,
    /// `--metric pass^k`.
    pub pass_k_metric: bool,
    /// `--gate-slices`.
    pub gate_slices: bool,
}

/// What the gate decided: the gate with the band's runs in words, and the slices judged.
#[derive(Debug, Default)]
pub(crate) struct Decided {
    /// The gate and the band's runs as the gate lines name them; `None` without a band.
    pub gate: Option<(Gate, String)>,
    /// The slices judged against the band's, when it records them by the same keys.
    pub slice_verdicts: Option<Vec<SliceVerdict>>,
    /// Why the slices were not gated, for stderr.
    pub slice_warning: Option<String>,
}

/// Why a run's gate refuses it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GateRefused {
    /// `--strict-band` with scenarios outside the band, or a band with no scenario of the run.
    #[error("{0}")]
    Refused(String),
    /// The gate could not be computed (a budget or a metric the band cannot check).
    #[error(transparent)]
    Gate(#[from] GateError),
}

/// Decides the gate of a run from its `summary` and slices, with the checks `set_aside` by `--trust`.
///
/// # Errors
///
/// The run is refused (`--strict-band`, a band of another suite), or the gate cannot be computed.
pub(crate) fn decide(
    settings: &GateSettings,
    flags: GateFlags<'_>,
    summary: Option<&RunSummary>,
    set_aside: &[SetAside],
    slice_table: Option<&SliceTable>,
) -> Result<Decided, GateRefused> {
    let band = &settings.band;
    if let Some((band, summary)) = band.as_ref().filter(|_| flags.strict_band).zip(summary)
        && let Some(outside) = ungated(band, summary)
    {
        // Refused before anything is printed or written, as --strict-input refuses.
        return Err(GateRefused::Refused(format!(
            "--strict-band: {}; the run is refused",
            ungated_warning(&outside)
        )));
    }
    if let Some((band, summary)) = band.as_ref().zip(summary)
        && shared_scenarios(band, summary) == 0
    {
        // Refused before anything is printed: a band of another suite would fail the run on every
        // band scenario, and read as a regression of the release.
        let path = flags.band_path.map(crate::error::display_path);
        let run_keys: Vec<&str> = summary.scenarios.iter().map(|(k, _)| k).collect();
        let band_keys: Vec<&str> = band.scenarios.iter().filter_map(|k| k.as_str()).collect();
        return Err(GateRefused::Refused(disjoint_band_error(
            path.as_deref().unwrap_or("band"),
            &run_keys,
            &band_keys,
        )));
    }
    // The gate is decided before anything is printed: a budget it cannot check is exit 2 with
    // nothing on stdout.
    let band_gate_for_metric =
        |band: &BandFile, summary: &RunSummary| match (flags.pass_k_metric, flags.band_path) {
            (true, Some(path)) => evaluate_pass_k(band, summary, path).map(Some),
            _ => Ok(None),
        };
    let gate = band.as_ref().zip(summary);
    let gate = gate.map(|(band, summary)| -> Result<_, GateRefused> {
        let band_gate = band_gate_for_metric(band, summary)?;
        let mut gate = evaluate_mode(
            band,
            summary,
            settings.mode,
            settings.clean_runs.as_deref(),
            band_gate,
        );
        gate.set_aside = set_aside.to_vec();
        if let (Some(measures), Some(values)) = (&band.measures, &summary.measures)
            && !settings.budgets.is_empty()
        {
            let pairing = band.scenario_measures.as_ref().map(|medians| {
                crate::gate::BandPairing::new(medians, &band.scenarios, &summary.scenarios)
            });
            let outcomes = evaluate_budgets(&settings.budgets, measures, values, pairing.as_ref())?;
            add_budgets(&mut gate, outcomes);
        }
        Ok((gate, band.runs_text()))
    });
    let mut gate = gate.transpose()?;
    // The slices are judged when the band records them by the same keys; a slice FAIL fails the
    // gate only with --gate-slices.
    let mut slice_warning = None;
    let slice_verdicts = match (band, slice_table, &mut gate) {
        (Some(band), Some(table), Some((gate, _))) => {
            let judged = band
                .slices
                .as_ref()
                .and_then(|slices| crate::gate::slices::judge_slices(slices, table));
            if judged.is_none() {
                slice_warning = Some(slices_not_gated_warning(
                    band.slices.as_ref().map(|s| s.by.as_slice()),
                    &table.by,
                ));
            }
            if flags.gate_slices && judged.iter().flatten().any(|v| v.verdict == Verdict::Fail) {
                gate.verdict = Verdict::Fail;
            }
            judged
        }
        _ => None,
    };
    Ok(Decided {
        gate,
        slice_verdicts,
        slice_warning,
    })
}
