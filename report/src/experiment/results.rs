//! What an experiment produces: the levels, each trial's times, and per program and level the
//! cell of statistics that `stats` (minimum and mean against MO) and `paired` (per-round errors
//! and the noise control) fill in.

use super::interval::{median, robust_spread_pct, Interval};
use serde::{Deserialize, Serialize};

/// The instrumentation levels of Malony and Shende's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Level {
    #[serde(rename = "MO")]
    Mo,
    /// The PA build with every probe but main's switched off at run time: what instrumenting
    /// changed in the compiled code, without the probes' run-time cost.
    #[serde(rename = "PA-off")]
    PaOff,
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
    pub const ALL: [Level; 6] = [Level::Mo, Level::PaOff, Level::Pa, Level::PaComp, Level::Ca, Level::CaComp];

    pub fn name(self) -> &'static str {
        match self {
            Level::Mo => "MO",
            Level::PaOff => "PA-off",
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

    /// Every probe but main's switched off at run time.
    pub fn switched_off(self) -> bool {
        self == Level::PaOff
    }
}

/// One trial's outcome: main's inclusive time, or why there is none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    pub program: String,
    pub level: Level,
    /// The round: every level of a program runs once per round, in a random order.
    pub trial: u32,
    /// Rank 0's main for an MPI program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_ns: Option<f64>,
    /// Every rank's main, by rank (MPI programs only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks_ns: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The noise control's time just before this trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_ns: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub min_ns: f64,
    pub mean_ns: f64,
    /// Sample standard deviation over the trials (0 with one trial).
    #[serde(default)]
    pub sd_ns: f64,
    pub trials: usize,
    /// % error of min and mean against MO's (None for MO itself or without MO).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_min_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_mean_pct: Option<f64>,
    /// Two standard errors of `error_mean_pct` (for MO: of its own mean), in % of MO's mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
    /// The median of the per-round % errors against the same round's MO, with its interval.
    #[serde(default)]
    pub vs_mo: Paired,
    /// The same against the round's PA-off: the probes' run-time part of the error.
    #[serde(default)]
    pub vs_off: Paired,
}

/// Table 2's cell: the per-rank minima of one level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankCell {
    pub ranks: usize,
    pub high_ns: f64,
    pub low_ns: f64,
    /// Mean over ranks of each rank's minimum's % error against that rank's MO minimum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_mean_pct: Option<f64>,
    /// % error of the highest minimum against MO's highest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_high_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramSummary {
    pub program: String,
    pub cells: Vec<(Level, Option<Cell>)>,
    pub failures: usize,
    /// Table 2, for MPI programs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<(Level, Option<RankCell>)>>,
    /// The noise control's times over this program's trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlSummary>,
    /// Whether the paired errors shown are control-normalised (they narrowed the intervals).
    #[serde(default)]
    pub normalised: bool,
    /// Why trials failed, each reason once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_reasons: Vec<String>,
}

pub fn percent_error(value: f64, reference: f64) -> f64 {
    (value - reference) / reference * 100.0
}

/// Per-round errors of one level against a reference level, raw and control-normalised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalised: Option<Interval>,
}

impl Paired {
    /// The interval a summary shows (see `ProgramSummary::normalised`).
    pub fn shown(&self, normalised: bool) -> Option<Interval> {
        if normalised {
            self.normalised
        } else {
            self.raw
        }
    }
}

/// The noise control's times: how many, their median and their robust spread (the noise floor).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ControlSummary {
    pub runs: usize,
    pub median_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_pct: Option<f64>,
}

impl ControlSummary {
    pub fn of(trials: &[&Trial]) -> Option<ControlSummary> {
        let times: Vec<f64> = trials.iter().filter_map(|t| t.control_ns).collect();
        Some(ControlSummary {
            runs: times.len(),
            median_ns: median(&times)?,
            spread_pct: robust_spread_pct(&times),
        })
    }
}
