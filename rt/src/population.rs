//! Costs that no window of their own measured, from what the run's estimated events measured:
//! the calibration, scaled as those events moved from theirs.
//!
//! The calibration measures a probe pair in a tight loop, where everything the probes touch
//! (the runtime's records, frames and callpath nodes, their code) stays in the nearest caches
//! and a callpath node always has its child's step cached. In a real program those costs differ
//! from it for reasons the run's events share: the program's own data evicts the runtime's,
//! parents with many children miss their cached step. inplace measures hot events where they
//! run; the others (too few calls, a recursion too deep for windows) keep the calibration. On
//! SQLite's shell (late placement, every routine timed) the estimated events' pairs cost 1.1 x
//! their calibration in a flat profile and 1.2-1.3 x with callpaths (their steps' cache misses
//! included, which misses.rs now charges apart), while the unestimated ones carried a quarter of
//! the calls in the flat profile and three fifths with callpaths: compensated main came out 6-9 %
//! and 40 % above the plain run's.
//!
//! So an event without an estimate gets its kind's calibration times the estimated events' mean
//! ratio of their cost to it, weighed by their calls (`UNESTIMATED`): the best guess for an
//! unmeasured event is what the measured ones of the same run cost, not the tight loop. The
//! same holds for the pair a callpath parent's counted windows keep on the stack untimed
//! (`PATHED`), which only a leaf's windows can measure against a counted call (inplace's pathed
//! windows; a parent's counted call would put its children on paths that skip it): in the
//! ground truth's nested context (three routines each calling the next) the two parents' pathed
//! pairs cost 15.2 and 16.7 ns over their counted calls in place (about 23 ns in all) and the
//! leaf's 17 to 20 over its own, where the whole pair's calibration said 39.5 in that process (it
//! moved between 20 and 68 ns from process to process).
//!
//! The mean is shrunk toward 1 by a pseudo-event of average weight and ratio 1 (one estimated
//! event moves the scale half way, twenty almost all the way), so a single event in an unusual
//! context (a dependency chain where a pair costs a quarter of its calibration) does not set
//! every other event's cost.
//!
//! Only the thread that owns an estimation writes here (inplace publishes one estimate at a
//! time); every exit with compensation on reads `UNESTIMATED`'s scale, every pathed call
//! `PATHED`'s, and a callpath parent's estimate the median of the latest leaves'
//! (`PATHED_LATEST`).

use crate::event_table::EventTable;
use crate::overhead::SCALE;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A scale of calibrated costs, from the run's estimates.
pub struct Pool {
    /// The scale, by 2^SCALE (1.0 until an estimate).
    scaled: AtomicU64,
    /// Over the events that contributed: the sum of weights, of weight times ratio (f64 bits),
    /// and their number.
    sum_w: AtomicU64,
    sum_wr: AtomicU64,
    events: AtomicU64,
    /// Per event id, its contribution so far (weight, weight times ratio, as f64 bits): a new
    /// estimate of the event replaces it.
    last: EventTable<[AtomicU64; 2]>,
}

/// The timed pair of events without an estimate of their own.
pub static UNESTIMATED: Pool = Pool::new();
/// The pathed pair (`switch::PATHED`), from the leaves' pathed windows.
pub static PATHED: Pool = Pool::new();

impl Pool {
    /// Where a pool keeps its scale, for the pathed path in assembly (pathed_path.rs), which
    /// applies `PATHED` as `apply` does.
    pub(crate) const SCALED_AT: usize = std::mem::offset_of!(Pool, scaled);

    const fn new() -> Pool {
        Pool {
            scaled: AtomicU64::new(1 << SCALE),
            sum_w: AtomicU64::new(0),
            sum_wr: AtomicU64::new(0),
            events: AtomicU64::new(0),
            last: EventTable::new(),
        }
    }

    /// The scale (by 2^SCALE).
    #[inline(always)]
    pub fn scaled(&self) -> u64 {
        self.scaled.load(Relaxed)
    }

    /// `cost` (scaled ticks) times the scale, rounded.
    #[inline(always)]
    pub fn apply(&self, cost: u64) -> u64 {
        (cost * self.scaled() + (1 << (SCALE - 1))) >> SCALE
    }

    /// The same as a number, for the profile.
    pub fn scale(&self) -> f64 {
        self.scaled() as f64 / f64::from(1u32 << SCALE)
    }

    /// How many events' estimates the scale weighs.
    pub fn events(&self) -> u64 {
        self.events.load(Relaxed)
    }

    /// Event `id`'s newest estimate: its cost `used` against the calibration `calibrated` (both
    /// scaled), weighed by `weight` (its calls).
    ///
    /// Must only be called by the thread that owns the estimation (inplace), one at a time.
    pub fn add(&self, id: u32, weight: u64, used: u64, calibrated: u64) {
        let Some(last) = self.last.get(id).filter(|_| calibrated != 0 && weight != 0) else { return };
        let (old_w, old_wr) = (f64::from_bits(last[0].load(Relaxed)), f64::from_bits(last[1].load(Relaxed)));
        let (w, wr) = (weight as f64, weight as f64 * used as f64 / calibrated as f64);
        last[0].store(w.to_bits(), Relaxed);
        last[1].store(wr.to_bits(), Relaxed);
        if old_w == 0.0 {
            self.events.fetch_add(1, Relaxed);
        }
        let sum_w = f64::from_bits(self.sum_w.load(Relaxed)) - old_w + w;
        let sum_wr = f64::from_bits(self.sum_wr.load(Relaxed)) - old_wr + wr;
        self.sum_w.store(sum_w.to_bits(), Relaxed);
        self.sum_wr.store(sum_wr.to_bits(), Relaxed);
        let scale = shrunk(sum_w, sum_wr, self.events.load(Relaxed));
        self.scaled.store((scale * f64::from(1u32 << SCALE)).round() as u64, Relaxed);
    }
}

/// The ratios of the latest leaves' pathed estimates to their calibration, of which a callpath
/// parent's estimate takes the median as a floor for its pathed pair (`model::pathed_under`).
/// Not the pool's mean: one leaf whose pathed windows read twice its siblings' moves the mean of
/// four by a quarter, and a floor taken from it charged Lua's `luaD_precall` (7.8 M pathed calls
/// in the paired harness, 13.9 ns each in place) 22.4 ns a call in one process of three. The
/// median of three or more is what most of the run's leaves measured; fewer give none.
pub struct Latest {
    /// The ratios (f64 bits), a ring of the latest `LATEST` (every leaf estimation adds one).
    ratios: [AtomicU64; LATEST],
    added: AtomicU64,
}

/// How many of the latest leaf estimations `Latest` keeps (the run's current phase).
const LATEST: usize = 32;

/// The latest leaves' pathed ratios.
pub static PATHED_LATEST: Latest = Latest::new();

impl Latest {
    const fn new() -> Latest {
        Latest { ratios: [const { AtomicU64::new(0) }; LATEST], added: AtomicU64::new(0) }
    }

    /// A leaf's newest estimate: its cost `used` against the calibration `calibrated`.
    ///
    /// Must only be called by the thread that owns the estimation (inplace), one at a time.
    pub fn add(&self, used: u64, calibrated: u64) {
        if calibrated == 0 {
            return;
        }
        let added = self.added.load(Relaxed);
        let ratio = used as f64 / calibrated as f64;
        self.ratios[added as usize % LATEST].store(ratio.to_bits(), Relaxed);
        self.added.store(added + 1, Relaxed);
    }

    /// The median ratio, with three or more; read where estimates are published (the
    /// estimation's owner thread, or `finish` once no thread measures).
    pub fn median(&self) -> Option<f64> {
        let held = (self.added.load(Relaxed) as usize).min(LATEST);
        let mut ratios = [0.0f64; LATEST];
        for (to, from) in ratios.iter_mut().zip(&self.ratios).take(held) {
            *to = f64::from_bits(from.load(Relaxed));
        }
        median_of(&mut ratios[..held])
    }
}

/// The median of `values` (sorted in place), with three or more.
fn median_of(values: &mut [f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

/// Maps the per-event tables (start-up, when events are estimated); without them the scales
/// stay 1.
pub fn start() {
    UNESTIMATED.last.map();
    PATHED.last.map();
}

/// The weighed mean ratio `sum_wr / sum_w` of `events` events, with a pseudo-event of ratio 1
/// and their mean weight.
fn shrunk(sum_w: f64, sum_wr: f64, events: u64) -> f64 {
    if events == 0 || sum_w <= 0.0 {
        return 1.0;
    }
    let pseudo = sum_w / events as f64;
    (sum_wr + pseudo) / (sum_w + pseudo)
}

#[cfg(test)]
mod tests {
    use super::{median_of, shrunk};

    #[test]
    fn the_median_needs_three_ratios_and_ignores_one_outlier() {
        assert_eq!(median_of(&mut []), None);
        assert_eq!(median_of(&mut [1.2, 4.0]), None, "two: either may be the outlier");
        assert_eq!(median_of(&mut [4.0, 1.2, 1.3]), Some(1.3));
        assert_eq!(median_of(&mut [1.2, 4.0, 1.3, 1.1]), Some(1.25));
    }

    #[test]
    fn the_scale_is_the_weighed_mean_ratio_shrunk_by_one_average_event() {
        assert_eq!(shrunk(0.0, 0.0, 0), 1.0, "no estimate: the calibration");
        assert_eq!(shrunk(100.0, 150.0, 1), 1.25, "one event of ratio 1.5: half way");
        let twenty = shrunk(2000.0, 2600.0, 20);
        assert!((twenty - (2600.0 + 100.0) / 2100.0).abs() < 1e-12, "{twenty}");
        assert!(shrunk(900.0 + 100.0, 900.0 * 1.0 + 100.0 * 2.0, 2) < 1.1, "weighed by calls");
    }
}
