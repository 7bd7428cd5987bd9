//! The probe cost of events without an estimate of their own: the calibration, scaled as the
//! run's estimated events moved from it.
//!
//! The calibration measures a probe pair in a tight loop, where everything the probes touch
//! (the runtime's records, frames and callpath nodes, their code) stays in the nearest caches
//! and a callpath node always has its child's step cached. In a real program those costs differ
//! from it for reasons the run's events share: the program's own data evicts the runtime's,
//! parents with many children miss their cached step. inplace measures hot events where they
//! run; the others (too few calls, a recursion too deep for windows, with children in a
//! callpath profile) kept the calibration. On SQLite's shell (late placement, every routine timed) the estimated events'
//! pairs cost 1.1 x their calibration in a flat profile and 1.2-1.3 x with callpaths (their
//! steps' cache misses included, which misses.rs now charges apart), while the unestimated ones
//! carried a quarter of the calls in the flat profile and three fifths with callpaths:
//! compensated main came out 6-9 % and 40 % above the plain run's.
//!
//! So an event without an estimate gets its kind's calibration times the estimated events' mean
//! ratio of their cost to it, weighed by their calls: the best guess for an unmeasured event is
//! what the measured ones of the same run cost, not the tight loop. The mean is shrunk toward 1
//! by a pseudo-event of average weight and ratio 1 (one estimated event moves the scale half
//! way, twenty almost all the way), so a single event in an unusual context (a dependency chain
//! where a pair costs a quarter of its calibration) does not set every other event's cost.
//!
//! Only the thread that owns an estimation writes here (inplace publishes one estimate at a
//! time); every exit with compensation on reads `scale`.

use crate::event_table::EventTable;
use crate::overhead::SCALE;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The scale for unestimated events' calibrated costs, scaled by 2^SCALE (1.0 until an estimate).
static SCALED: AtomicU64 = AtomicU64::new(1 << SCALE);
/// Over the estimated events: the sum of weights, of weight times ratio (f64 bits), and their
/// number.
static SUM_W: AtomicU64 = AtomicU64::new(0);
static SUM_WR: AtomicU64 = AtomicU64::new(0);
static EVENTS: AtomicU64 = AtomicU64::new(0);
/// Per event id, its contribution so far (weight, weight times ratio, as f64 bits): a new
/// estimate of the event replaces it.
static LAST: EventTable<[AtomicU64; 2]> = EventTable::new();

/// Maps the per-event table (start-up, when events are estimated); without it the scale stays 1.
pub fn start() {
    LAST.map();
}

/// The scale of unestimated events' calibrated pair costs (scaled by 2^SCALE).
#[inline(always)]
pub fn scaled() -> u64 {
    SCALED.load(Relaxed)
}

/// The same as a number, for the profile.
pub fn scale() -> f64 {
    scaled() as f64 / f64::from(1u32 << SCALE)
}

/// Event `id`'s newest estimate: its pair cost `used` against its kind's calibration
/// `calibrated` (both scaled), weighed by `weight` (its calls).
///
/// Must only be called by the thread that owns the estimation (inplace), one at a time.
pub fn add(id: u32, weight: u64, used: u64, calibrated: u64) {
    let Some(last) = LAST.get(id).filter(|_| calibrated != 0 && weight != 0) else { return };
    let (old_w, old_wr) = (f64::from_bits(last[0].load(Relaxed)), f64::from_bits(last[1].load(Relaxed)));
    let (w, wr) = (weight as f64, weight as f64 * used as f64 / calibrated as f64);
    last[0].store(w.to_bits(), Relaxed);
    last[1].store(wr.to_bits(), Relaxed);
    if old_w == 0.0 {
        EVENTS.fetch_add(1, Relaxed);
    }
    let sum_w = f64::from_bits(SUM_W.load(Relaxed)) - old_w + w;
    let sum_wr = f64::from_bits(SUM_WR.load(Relaxed)) - old_wr + wr;
    SUM_W.store(sum_w.to_bits(), Relaxed);
    SUM_WR.store(sum_wr.to_bits(), Relaxed);
    let scale = shrunk(sum_w, sum_wr, EVENTS.load(Relaxed));
    SCALED.store((scale * f64::from(1u32 << SCALE)).round() as u64, Relaxed);
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
    use super::shrunk;

    #[test]
    fn the_scale_is_the_weighed_mean_ratio_shrunk_by_one_average_event() {
        assert_eq!(shrunk(0.0, 0.0, 0), 1.0, "no estimate: the calibration");
        assert_eq!(shrunk(100.0, 150.0, 1), 1.25, "one event of ratio 1.5: half way");
        let twenty = shrunk(2000.0, 2600.0, 20);
        assert!((twenty - (2600.0 + 100.0) / 2100.0).abs() < 1e-12, "{twenty}");
        assert!(shrunk(900.0 + 100.0, 900.0 * 1.0 + 100.0 * 2.0, 2) < 1.1, "weighed by calls");
    }
}
