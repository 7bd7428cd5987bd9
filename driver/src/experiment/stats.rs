//! The paper's evaluation: per program and instrumentation level, the minimum and the mean of
//! main's inclusive time over the trials, and their percentage error against main-only (MO).

use serde::{Deserialize, Serialize};

/// The instrumentation levels of Malony and Shende's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Level {
    #[serde(rename = "MO")]
    Mo,
    #[serde(rename = "PA")]
    Pa,
    #[serde(rename = "PA-comp")]
    PaComp,
    #[serde(rename = "CA")]
    Ca,
    #[serde(rename = "CA-comp")]
    CaComp,
}

impl Level {
    pub const ALL: [Level; 5] = [Level::Mo, Level::Pa, Level::PaComp, Level::Ca, Level::CaComp];

    pub fn name(self) -> &'static str {
        match self {
            Level::Mo => "MO",
            Level::Pa => "PA",
            Level::PaComp => "PA-comp",
            Level::Ca => "CA",
            Level::CaComp => "CA-comp",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(text))
    }

    /// MO builds only `main` with probes; the other levels share the all-routines build.
    pub fn main_only(self) -> bool {
        self == Level::Mo
    }

    pub fn callpaths(self) -> bool {
        matches!(self, Level::Ca | Level::CaComp)
    }

    pub fn compensated(self) -> bool {
        matches!(self, Level::PaComp | Level::CaComp)
    }
}

/// One trial's outcome: main's inclusive time, or why there is none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    pub program: String,
    pub level: Level,
    pub trial: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub min_ns: f64,
    pub mean_ns: f64,
    pub trials: usize,
    /// % error of min and mean against MO's (None for MO itself or without MO).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_min_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_mean_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramSummary {
    pub program: String,
    pub cells: Vec<(Level, Option<Cell>)>,
    pub failures: usize,
}

pub fn percent_error(value: f64, reference: f64) -> f64 {
    (value - reference) / reference * 100.0
}

pub fn summarize(programs: &[String], levels: &[Level], trials: &[Trial]) -> Vec<ProgramSummary> {
    programs
        .iter()
        .map(|program| {
            let times = |level: Level| -> Vec<f64> {
                trials
                    .iter()
                    .filter(|t| &t.program == program && t.level == level)
                    .filter_map(|t| t.main_ns)
                    .collect()
            };
            let cell_of = |v: &[f64]| {
                (!v.is_empty()).then(|| Cell {
                    min_ns: v.iter().copied().fold(f64::INFINITY, f64::min),
                    mean_ns: v.iter().sum::<f64>() / v.len() as f64,
                    trials: v.len(),
                    error_min_pct: None,
                    error_mean_pct: None,
                })
            };
            let mo = cell_of(&times(Level::Mo));
            let cells = levels
                .iter()
                .map(|&level| {
                    let cell = cell_of(&times(level)).map(|mut c| {
                        if let (Some(mo), false) = (mo, level == Level::Mo) {
                            c.error_min_pct = Some(percent_error(c.min_ns, mo.min_ns));
                            c.error_mean_pct = Some(percent_error(c.mean_ns, mo.mean_ns));
                        }
                        c
                    });
                    (level, cell)
                })
                .collect();
            let failures = trials.iter().filter(|t| &t.program == program && t.error.is_some()).count();
            ProgramSummary { program: program.clone(), cells, failures }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(level: Level, ns: f64) -> Trial {
        Trial { program: "p".into(), level, trial: 0, main_ns: Some(ns), error: None }
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
                error: Some("crashed".into()),
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
