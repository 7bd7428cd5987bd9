//! Paired statistics over rounds. Every round runs each level of a program once, back to back
//! in a random order, so a level's error is taken against the MO (and PA-off) of the same
//! round: the machine's slow drift is common to both and cancels, where comparing minima or
//! means of separate series lets it through. The median of those per-round errors, with a
//! distribution-free 95 % interval, is what a reader can trust to the interval's width.
//!
//! Each trial is preceded by the noise control (`control`); control-normalised errors scale
//! each trial by its control's time relative to the controls' median, which removes what was
//! fast or slow about the machine at that moment. A program shows whichever of the two gives
//! the narrower intervals, and says which.

use super::interval::{median_interval, Interval};
use super::results::{percent_error, Cell, ControlSummary, Level, Paired, ProgramSummary, Trial};
use std::collections::BTreeMap;

/// % error of `level` against `reference` in every round that measured both; with `control`
/// (the controls' median), each time is first scaled by median / its own control.
pub fn round_errors(trials: &[&Trial], level: Level, reference: Level, control: Option<f64>) -> Vec<f64> {
    let time = |t: &Trial| -> Option<f64> {
        let main = t.main_ns?;
        match control {
            None => Some(main),
            Some(median) => Some(main * median / t.control_ns?),
        }
    };
    let by_round: BTreeMap<u32, f64> =
        trials.iter().filter(|t| t.level == reference).filter_map(|t| Some((t.trial, time(t)?))).collect();
    trials
        .iter()
        .filter(|t| t.level == level)
        .filter_map(|t| Some(percent_error(time(t)?, *by_round.get(&t.trial)?)))
        .collect()
}

/// Fills in the paired errors of every cell of `summary`, its control and which view it shows.
pub fn add(summary: &mut ProgramSummary, trials: &[Trial]) {
    let own: Vec<&Trial> =
        trials.iter().filter(|t| t.program == summary.program && t.main_ns.is_some()).collect();
    let control = ControlSummary::of(&own);
    let has_off = own.iter().any(|t| t.level == Level::PaOff);
    for (level, cell) in summary.cells.iter_mut() {
        let Some(cell) = cell else { continue };
        let paired = |reference: Level| Paired {
            raw: median_interval(&round_errors(&own, *level, reference, None)),
            normalised: control
                .and_then(|c| median_interval(&round_errors(&own, *level, reference, Some(c.median_ns)))),
        };
        if *level != Level::Mo {
            cell.vs_mo = paired(Level::Mo);
        }
        if has_off && !matches!(*level, Level::Mo | Level::PaOff) {
            cell.vs_off = paired(Level::PaOff);
        }
    }
    summary.normalised = normalising_narrows(&summary.cells);
    summary.control = control;
}

/// Whether the control-normalised intervals are narrower on average than the raw ones.
fn normalising_narrows(cells: &[(Level, Option<Cell>)]) -> bool {
    let mean_width = |pick: fn(&Paired) -> Option<Interval>| -> Option<f64> {
        let widths: Vec<f64> = cells
            .iter()
            .filter_map(|(_, c)| c.as_ref())
            .flat_map(|c| [pick(&c.vs_mo), pick(&c.vs_off)])
            .flatten()
            .map(|i| i.half_width())
            .collect();
        (!widths.is_empty()).then(|| widths.iter().sum::<f64>() / widths.len() as f64)
    };
    matches!((mean_width(|p| p.raw), mean_width(|p| p.normalised)), (Some(r), Some(n)) if n < r)
}

#[cfg(test)]
mod tests {
    use super::super::stats::summarize;
    use super::*;

    fn trial(level: Level, round: u32, ms: f64, control_ms: f64) -> Trial {
        Trial {
            program: "p".into(),
            level,
            trial: round,
            main_ns: Some(ms * 1e6),
            ranks_ns: Vec::new(),
            error: None,
            control_ns: Some(control_ms * 1e6),
        }
    }

    #[test]
    fn errors_pair_each_round_with_its_own_mo() {
        // The machine drifts 10 % slower in round 1; PA is 5 % over MO in both rounds.
        let trials = [
            trial(Level::Mo, 0, 100.0, 10.0),
            trial(Level::Pa, 0, 105.0, 10.0),
            trial(Level::Mo, 1, 110.0, 11.0),
            trial(Level::Pa, 1, 115.5, 11.0),
            trial(Level::Pa, 2, 200.0, 10.0), // no MO in round 2: not paired
        ];
        let refs: Vec<&Trial> = trials.iter().collect();
        let errors = round_errors(&refs, Level::Pa, Level::Mo, None);
        assert_eq!(errors.len(), 2);
        assert!(errors.iter().all(|e| (e - 5.0).abs() < 1e-9), "{errors:?}");
    }

    #[test]
    fn normalisation_scales_each_trial_by_its_control() {
        // MO ran during a slow moment (control 12 ms against a median of 10): normalised,
        // MO's 120 ms counts as 100, and PA's 105 ms (control 10) is +5 %, raw -12.5 %.
        let trials = [trial(Level::Mo, 0, 120.0, 12.0), trial(Level::Pa, 0, 105.0, 10.0)];
        let refs: Vec<&Trial> = trials.iter().collect();
        let raw = round_errors(&refs, Level::Pa, Level::Mo, None);
        let normalised = round_errors(&refs, Level::Pa, Level::Mo, Some(10.0e6));
        assert!((raw[0] + 12.5).abs() < 1e-9 && (normalised[0] - 5.0).abs() < 1e-9, "{raw:?} {normalised:?}");
    }

    #[test]
    fn summary_shows_the_narrower_view_and_the_effects_against_pa_off() {
        // Eight rounds: the machine's speed changes from round to round (control), MO, PA-off
        // and PA follow it exactly; PA-off is +2 % over MO (compiled code), PA +10 % over PA-off.
        let mut trials = Vec::new();
        for round in 0..8u32 {
            let speed = 1.0 + 0.05 * (round % 3) as f64;
            trials.push(trial(Level::Mo, round, 100.0 * speed, 10.0 * speed));
            trials.push(trial(Level::PaOff, round, 102.0 * speed, 10.0 * speed));
            // PA ran a moment later, when the machine was 3 % faster than in MO's trial.
            let later = speed * if round % 2 == 0 { 0.97 } else { 1.0 };
            trials.push(trial(Level::Pa, round, 112.2 * later, 10.0 * later));
        }
        let s = &summarize(&["p".into()], &[Level::Mo, Level::PaOff, Level::Pa], &trials)[0];
        assert!(s.normalised, "the control removes the 3 % moments");
        let pa = s.cells[2].1.unwrap();
        let vs_mo = pa.vs_mo.shown(true).unwrap();
        assert_eq!(vs_mo.n, 8);
        assert!((vs_mo.median - 12.2).abs() < 1e-9 && vs_mo.half_width() < 1e-9, "{vs_mo:?}");
        assert!((pa.vs_off.shown(true).unwrap().median - 10.0).abs() < 1e-9);
        assert!(pa.vs_mo.raw.unwrap().half_width() > 1.0, "raw errors keep the moments");
        let off = s.cells[1].1.unwrap();
        assert!((off.vs_mo.shown(true).unwrap().median - 2.0).abs() < 1e-9);
        assert_eq!(off.vs_off, Paired::default(), "PA-off is not compared with itself");
        let control = s.control.unwrap();
        assert_eq!(control.runs, 24);
    }
}
