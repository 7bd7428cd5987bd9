//! In-place costs that follow the machine's phases.
//!
//! A shared machine changes what the probes cost under the program for hundreds of
//! milliseconds at a time: on NPB BT.W here, recalibration (recalibrate.rs) measured the routine
//! pair at 102 ticks for most of a run, then 135 for half a second, and 147 for a third of a
//! second later on. An event is estimated in place at powers of four of its calls, so most of
//! its estimates come early and the last one may be a second old; compensation kept charging
//! each event what it cost in the phase of its last estimate, though estimates made inside such
//! a phase came out 10 to 16 % higher (four BT kernels, eight runs). Unestimated events follow
//! the phases already:
//! their cost is the latest calibration times the population's scale (population.rs). Here an
//! estimated event's costs are kept as measured (`Base`), with the calibration of that moment,
//! and every recalibration sets the costs compensation reads to the measured ones times how the
//! calibration moved since: the same proportional model, one event at a time. An event's
//! earlier estimates enter the pool of its next one by the same model, each scaled as the
//! calibration moved since it was made (`history::in_phase`), so that the pool is of costs of
//! one phase, the one its calibration is kept with.

use super::{cost_of, Cost};
use crate::overhead::STANDARD;
use std::sync::atomic::{
    AtomicU32, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};

/// Events whose costs follow the phases: the first MAX_TRACKED estimated ones (the others keep
/// their measured costs).
const MAX_TRACKED: usize = 4096;
static TRACKED: [AtomicU32; MAX_TRACKED] = [const { AtomicU32::new(0) }; MAX_TRACKED];
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The phase indicator: the routine pair's cost over the last recalibration rounds
/// (`recalibrate::phase_indicator`; scaled), or the calibration where no round has run.
pub(super) fn calibration() -> u64 {
    crate::recalibrate::phase_indicator()
        .unwrap_or_else(|| crate::compensate::calibrated_pair_cost(STANDARD))
        .max(1)
}

/// Sets event `id`'s costs as an estimation measured them (scaled; `inside` plus one, 0: none),
/// in the phase `at` (the indicator its pooling read, `calibration`), and the costs
/// compensation reads from them.
///
/// Must only be called by the thread that owns the estimation (inplace), one at a time.
pub(super) fn set(cost: &Cost, id: u32, (timed, counted, inside): (u64, u64, u64), at: u64) {
    let first = cost.base_calibration.load(Relaxed) == 0;
    cost.base_timed.store(timed, SeqCst);
    cost.base_counted.store(counted, SeqCst);
    cost.base_inside.store(inside, SeqCst);
    cost.base_calibration.store(at, SeqCst);
    if first {
        let n = COUNT.load(Relaxed);
        if n < MAX_TRACKED {
            TRACKED[n].store(id, Relaxed);
            COUNT.store(n + 1, Release);
        }
    }
    apply(cost);
}

/// After a recalibration: every tracked event's costs follow the calibration.
pub fn follow() {
    // A tracked id had an estimate, so the table is mapped and has its entry.
    for cost in TRACKED[..COUNT.load(Acquire)].iter().filter_map(|slot| cost_of(slot.load(Relaxed))) {
        apply(cost);
    }
}

/// How far (in %) the phase indicator moves from an event's estimate before the event is
/// estimated again (`offers::reoffer`): scaling follows a phase only as far as the proportional
/// model holds (on one trace the indicator moved -32 % where the calls' cost moved -26 %), and
/// an estimate published while the indicator still lagged a change (its median takes three
/// rounds to move) was scaled by the change a second time. Three times what the five-round
/// median moves within one phase here (single rounds ±10 %), so that noise re-estimates
/// nothing.
const MOVED: u64 = 15;

/// The tracked events whose costs the phase indicator scales by more than `MOVED` % now.
pub(super) fn moved() -> impl Iterator<Item = u32> {
    let now = u128::from(calibration());
    TRACKED[..COUNT.load(Acquire)].iter().map(|slot| slot.load(Relaxed)).filter(move |&id| {
        cost_of(id).is_some_and(|cost| {
            let base = u128::from(cost.base_calibration.load(Relaxed));
            base != 0
                && (now * 100 > base * (100 + u128::from(MOVED))
                    || now * (100 + u128::from(MOVED)) < base * 100)
        })
    })
}

/// Sets the costs compensation reads from the measured ones, scaled as the calibration moved
/// since they were measured. The estimating thread (`set`) and a recalibrating one (`follow`)
/// may apply one event at once: each checks after its stores that the measured costs did not
/// change meanwhile, and applies them again if they did, so the last stores are of the newest.
fn apply(cost: &Cost) {
    loop {
        let base = Base::of(cost);
        let (timed, counted, inside) = base.at(calibration());
        cost.counted.store(counted, Relaxed);
        cost.timed.store(timed, Relaxed);
        cost.inside.store(inside, Relaxed);
        if Base::of(cost) == base {
            return;
        }
    }
}

/// An event's costs as measured, and the calibration then.
#[derive(PartialEq, Eq)]
struct Base {
    timed: u64,
    counted: u64,
    inside: u64,
    calibration: u64,
}

impl Base {
    fn of(cost: &Cost) -> Base {
        Base {
            timed: cost.base_timed.load(SeqCst),
            counted: cost.base_counted.load(SeqCst),
            inside: cost.base_inside.load(SeqCst),
            calibration: cost.base_calibration.load(SeqCst),
        }
    }

    /// The costs (timed, counted, inside plus one) where the calibration is `now`: as measured,
    /// times how the calibration moved since.
    fn at(&self, now: u64) -> (u64, u64, u64) {
        let scaled = |v: u64| (u128::from(v) * u128::from(now) / u128::from(self.calibration.max(1))) as u64;
        (
            scaled(self.timed).max(1),
            scaled(self.counted),
            self.inside.checked_sub(1).map_or(0, |i| scaled(i) + 1),
        )
    }
}

/// Event `cost`'s timed pair cost as measured (scaled), whatever the phase now.
pub(super) fn measured_timed(cost: &Cost) -> u64 {
    cost.base_timed.load(Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_the_calibration_in_proportion() {
        let base = Base { timed: 1000, counted: 60, inside: 401, calibration: 100 };
        assert_eq!(base.at(100), (1000, 60, 401), "the phase it was measured in");
        assert_eq!(base.at(135), (1350, 81, 541), "a slower phase");
        assert_eq!(base.at(50), (500, 30, 201));
        let unsplit = Base { inside: 0, ..base };
        assert_eq!(unsplit.at(135).2, 0, "no split measured stays none");
    }
}
