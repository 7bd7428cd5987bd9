//! The paper's evaluation: per program and instrumentation level, the minimum and the mean of
//! main's inclusive time over the trials, and their percentage error against main-only (MO)
//! (Table 1); for MPI programs also the paper's Table 2: each rank's minimum over the trials,
//! the highest and lowest of them, the mean of the rank-by-rank errors against MO's minima,
//! and the error of the highest. Beside each mean's error goes its noise: two standard errors
//! of the difference of the two means, so a reader can tell an error from the machine's
//! run-to-run variation (MO's own column holds the noise of MO's mean). The paired statistics
//! (each round's error against that round's MO or PA-off, their median and its interval, the
//! noise control) are in `paired`.

use super::paired;
use super::results::{percent_error, Cell, Level, Paired, ProgramSummary, RankCell, Trial};

/// The sample standard deviation of `v` (0 below two values).
pub(crate) fn std_dev(v: &[f64], mean: f64) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// Two standard errors of the difference between `cell`'s mean and MO's, in % of MO's mean;
/// for MO itself (`cell` is None), two standard errors of its own mean. None with fewer than
/// two trials on either side.
fn noise_pct(mo: &Cell, cell: Option<&Cell>) -> Option<f64> {
    let variance = |c: &Cell| (c.trials > 1).then(|| c.sd_ns.powi(2) / c.trials as f64);
    let sum = match cell {
        None => variance(mo)?,
        Some(c) => variance(mo)? + variance(c)?,
    };
    Some(2.0 * sum.sqrt() / mo.mean_ns * 100.0)
}

pub fn summarize(programs: &[String], levels: &[Level], trials: &[Trial]) -> Vec<ProgramSummary> {
    programs.iter().map(|program| summarize_program(program, levels, trials)).collect()
}

fn summarize_program(program: &String, levels: &[Level], trials: &[Trial]) -> ProgramSummary {
    let times = |level: Level| -> Vec<f64> {
        trials
            .iter()
            .filter(|t| &t.program == program && t.level == level)
            .filter_map(|t| t.main_ns)
            .collect()
    };
    let mo = cell_of(&times(Level::Mo));
    let cells = levels
        .iter()
        .map(|&level| {
            let cell = cell_of(&times(level)).map(|mut c| {
                if let (Some(mo), false) = (mo, level == Level::Mo) {
                    c.error_min_pct = Some(percent_error(c.min_ns, mo.min_ns));
                    c.error_mean_pct = Some(percent_error(c.mean_ns, mo.mean_ns));
                    c.noise_pct = noise_pct(&mo, Some(&c));
                } else if let Some(mo) = mo {
                    c.noise_pct = noise_pct(&mo, None);
                }
                c
            });
            (level, cell)
        })
        .collect();
    let failed: Vec<&Trial> = trials.iter().filter(|t| &t.program == program && t.error.is_some()).collect();
    let mut failure_reasons: Vec<String> = failed.iter().filter_map(|t| t.error.clone()).collect();
    failure_reasons.sort();
    failure_reasons.dedup();
    let mut summary = ProgramSummary {
        program: program.clone(),
        cells,
        failures: failed.len(),
        ranks: rank_cells(program, levels, trials),
        control: None,
        normalised: false,
        failure_reasons,
    };
    paired::add(&mut summary, trials);
    summary
}

/// A level's cell from its trials' times (None without any): min, mean and spread, the errors
/// filled in by the caller.
fn cell_of(v: &[f64]) -> Option<Cell> {
    (!v.is_empty()).then(|| {
        let mean_ns = v.iter().sum::<f64>() / v.len() as f64;
        Cell {
            min_ns: v.iter().copied().fold(f64::INFINITY, f64::min),
            mean_ns,
            sd_ns: std_dev(v, mean_ns),
            trials: v.len(),
            error_min_pct: None,
            error_mean_pct: None,
            noise_pct: None,
            vs_mo: Paired::default(),
            vs_off: Paired::default(),
        }
    })
}

/// Each rank's minimum over the trials of `program` at `level`.
fn rank_minima(program: &str, level: Level, trials: &[Trial]) -> Vec<f64> {
    let mut minima: Vec<f64> = Vec::new();
    for t in trials.iter().filter(|t| t.program == program && t.level == level) {
        if minima.len() < t.ranks_ns.len() {
            minima.resize(t.ranks_ns.len(), f64::INFINITY);
        }
        for (m, &v) in minima.iter_mut().zip(&t.ranks_ns) {
            *m = m.min(v);
        }
    }
    minima
}

fn rank_cells(program: &str, levels: &[Level], trials: &[Trial]) -> Option<Vec<(Level, Option<RankCell>)>> {
    if !trials.iter().any(|t| t.program == program && !t.ranks_ns.is_empty()) {
        return None;
    }
    let high = |m: &[f64]| m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mo = rank_minima(program, Level::Mo, trials);
    let cell = |level: Level| {
        let minima = rank_minima(program, level, trials);
        (!minima.is_empty()).then(|| {
            let compared = level != Level::Mo && mo.len() == minima.len();
            RankCell {
                ranks: minima.len(),
                high_ns: high(&minima),
                low_ns: minima.iter().copied().fold(f64::INFINITY, f64::min),
                error_mean_pct: compared.then(|| {
                    minima.iter().zip(&mo).map(|(&v, &r)| percent_error(v, r)).sum::<f64>()
                        / minima.len() as f64
                }),
                error_high_pct: compared.then(|| percent_error(high(&minima), high(&mo))),
            }
        })
    };
    Some(levels.iter().map(|&level| (level, cell(level))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(level: Level, ns: f64) -> Trial {
        Trial {
            program: "p".into(),
            level,
            trial: 0,
            main_ns: Some(ns),
            ranks_ns: Vec::new(),
            error: None,
            control_ns: None,
        }
    }

    fn ranks(level: Level, ns: &[f64]) -> Trial {
        Trial { ranks_ns: ns.to_vec(), ..trial(level, ns[0]) }
    }

    #[test]
    fn table_2_high_low_and_rank_by_rank_errors() {
        let trials = vec![
            ranks(Level::Mo, &[100.0, 90.0]),
            ranks(Level::Mo, &[110.0, 80.0]),
            ranks(Level::Pa, &[120.0, 85.0]),
            ranks(Level::Pa, &[115.0, 95.0]),
        ];
        let s = summarize(&["p".into()], &[Level::Mo, Level::Pa], &trials);
        let cells = s[0].ranks.as_ref().unwrap();
        let mo = cells[0].1.unwrap();
        assert_eq!((mo.ranks, mo.high_ns, mo.low_ns, mo.error_mean_pct), (2, 100.0, 80.0, None));
        let pa = cells[1].1.unwrap();
        assert_eq!((pa.high_ns, pa.low_ns), (115.0, 85.0));
        // Rank 0: 115 against 100 (+15 %); rank 1: 85 against 80 (+6.25 %).
        assert!((pa.error_mean_pct.unwrap() - 10.625).abs() < 1e-9, "{pa:?}");
        assert!((pa.error_high_pct.unwrap() - 15.0).abs() < 1e-9, "{pa:?}");
        assert!(summarize(&["p".into()], &[Level::Mo], &[trial(Level::Mo, 1.0)])[0].ranks.is_none());
    }

    #[test]
    fn noise_is_two_standard_errors_of_the_difference_of_means() {
        let trials = [(Level::Mo, 100.0), (Level::Mo, 104.0), (Level::Pa, 110.0), (Level::Pa, 120.0)];
        let trials: Vec<Trial> = trials.iter().map(|&(l, ns)| trial(l, ns)).collect();
        let s = summarize(&["p".into()], &[Level::Mo, Level::Pa], &trials);
        let (mo, pa) = (s[0].cells[0].1.unwrap(), s[0].cells[1].1.unwrap());
        // MO: mean 102, sd 2.828 (variance of the mean 4); PA: mean 115, sd 7.071 (25).
        assert!((mo.sd_ns - 8f64.sqrt()).abs() < 1e-9 && (pa.sd_ns - 50f64.sqrt()).abs() < 1e-9);
        // MO's own mean: 2 * sqrt(4) / 102 = 3.92 %; PA against MO: 2 * sqrt(4 + 25) / 102 = 10.56 %.
        assert!((mo.noise_pct.unwrap() - 3.9216).abs() < 1e-3, "{mo:?}");
        assert!((pa.noise_pct.unwrap() - 10.5589).abs() < 1e-3, "{pa:?}");
        let single = summarize(&["p".into()], &[Level::Mo, Level::Pa], &trials[1..]);
        assert_eq!(
            (single[0].cells[0].1.unwrap().noise_pct, single[0].cells[1].1.unwrap().noise_pct),
            (None, None)
        );
    }

    #[test]
    fn min_mean_and_errors_against_main_only() {
        // The paper's IS-A row, MO min 5967910 and PA min 17540614 us: 193.9 % error.
        let trials = vec![
            trial(Level::Mo, 5_967_910.0),
            trial(Level::Mo, 6_006_094.0),
            trial(Level::Pa, 17_540_614.0),
            trial(Level::Pa, 17_793_614.0),
            Trial {
                program: "p".into(),
                level: Level::PaComp,
                trial: 0,
                main_ns: None,
                ranks_ns: Vec::new(),
                error: Some("crashed".into()),
                control_ns: None,
            },
        ];
        let s = summarize(&["p".into()], &[Level::Mo, Level::Pa, Level::PaComp], &trials);
        let cells: Vec<_> = s[0].cells.iter().map(|(_, c)| *c).collect();
        let mo = cells[0].unwrap();
        assert_eq!((mo.min_ns, mo.mean_ns, mo.error_min_pct), (5_967_910.0, 5_987_002.0, None));
        let pa = cells[1].unwrap();
        assert!((pa.error_min_pct.unwrap() - 193.9).abs() < 0.05, "{pa:?}");
        assert!((pa.error_mean_pct.unwrap() - 195.0).abs() < 0.2, "{pa:?}");
        assert!(cells[2].is_none());
        assert_eq!(s[0].failures, 1);
    }
}
