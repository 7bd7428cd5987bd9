//! Overhead calibration and on-the-fly compensation (Malony and Shende, sections 3.1 and 3.2),
//! with probe costs measured in place.
//!
//! Every event's probe pair costs time in two places: the whole pair, Δi, inflates the
//! inclusive time of every enclosing event; the part between its own two timestamps, δ, inflates
//! its own. So at each exit the compensated inclusive time is the measured one less δ and less
//! the Δi of every descendant event, and the compensated exclusive time is the compensated
//! inclusive time less the children's compensated inclusive times. What lands in a parent's
//! exclusive time per direct child, the paper's Δe, is Δi - δ here.
//!
//! The paper measures Δi once, in a tight loop at start-up (the `calibrated` strategy). On an
//! out-of-order processor that is not what an unfenced probe costs in place: next to a long
//! dependency chain (IS's randlc) it runs in the chain's shadow almost for free, next to short
//! independent work (BT's block routines, fib) it costs everything, so a fixed Δi
//! over-compensates latency-bound code badly. The default strategy, `inplace`, keeps the probes
//! unfenced and measures each hot event's Δi where its probes run (inplace); events without
//! an estimate use the calibration. `fenced` serializes the probes (see
//! `clock::set_serialized`): their cost in place is then close to the calibrated one, at about
//! four times the cost of an unfenced probe. (Sampling the in-place cost with injected null
//! probes was measured and dropped: the injected timestamps sit next to the event's own and
//! measure the clock's throughput, not the probe's marginal cost.)
//!
//! Every strategy takes its calibrated costs from the start-up measurement of every run (overhead.rs),
//! made on the exact probe path the program runs with the paper's two-level experiment, and
//! from the shorter rounds that measure them again while the program runs (recalibrate.rs). A
//! throttled event's counted-only probes are compensated too: each costs its parent the
//! measured counted pair.
//!
//! A compensated time that comes out negative is kept, counted and reported, never clamped.

use crate::overhead::{Costs, Untimed, SCALE};
use crate::{clock, inplace, population};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};

pub use crate::overhead::{LOOP, STANDARD};

/// Whether compensation is on (the trampolines' counted path reads it too).
pub(crate) static ENABLED: AtomicBool = AtomicBool::new(false);
/// Δi per kind, in ticks (scaled by 2^16 for sub-tick precision).
static OUTER: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// A counted-only routine probe pair (a throttled event), scaled; charged to the frame on top
/// (by the trampolines' counted path too). `UNTIMED`'s value, in a static of its own for the
/// trampolines' assembly to read.
pub(crate) static COUNTED: AtomicU64 = AtomicU64::new(0);
/// One inline count of a throttled routine (`Untimed::inline`), scaled: charged to the frame on
/// top for every call counted inline under it (inline.rs, when its count is charged).
static INLINE_COUNT: AtomicU64 = AtomicU64::new(0);
/// δ / Δi from calibration, scaled by 2^16: the share of an estimated pair cost inside the
/// event's own interval.
static OWN_SHARE: AtomicU64 = AtomicU64::new(0);

#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// Scaled ticks to ticks, rounded to the nearest.
pub fn scaled_to_ticks(scaled: u64) -> u64 {
    (scaled + (1 << (SCALE - 1))) >> SCALE
}

/// How probe costs are estimated (`INSTRUMENT_COMPENSATE`): the profile's enum, which names
/// them as the setting does.
pub use instrument_profile::Strategy;

static STRATEGY: AtomicU32 = AtomicU32::new(0);

pub fn strategy() -> Strategy {
    match STRATEGY.load(Relaxed) {
        1 => Strategy::Fenced,
        2 => Strategy::InPlace,
        _ => Strategy::Calibrated,
    }
}

/// `INSTRUMENT_COMPENSATE`: unset or off (the boolean grammar's words): no compensation; on:
/// the default strategy; or a strategy by name. A bad value leaves compensation off (one line
/// on stderr), as the setting's default says. Read once: the throttling settings and the
/// calibration both ask.
pub fn requested() -> Option<Strategy> {
    static REQUESTED: std::sync::OnceLock<Option<Strategy>> = std::sync::OnceLock::new();
    *REQUESTED.get_or_init(|| match crate::settings::choice(&crate::settings::COMPENSATE)? {
        "calibrated" => Some(Strategy::Calibrated),
        "fenced" => Some(Strategy::Fenced),
        "inplace" | "on" => Some(DEFAULT_STRATEGY),
        _ => None,
    })
}

const DEFAULT_STRATEGY: Strategy = Strategy::InPlace;

/// Before the probe costs are measured: the probes take the path `strategy` gives them
/// (fenced or not, with the compensation arithmetic, whose costs are still zero); None leaves
/// compensation off.
pub fn prepare(strategy: Option<Strategy>) {
    STRATEGY.store(strategy.map_or(0, |s| s as u32), Relaxed);
    clock::set_serialized(strategy == Some(Strategy::Fenced));
    ENABLED.store(strategy.is_some(), Relaxed);
    inplace::open_gate();
    crate::timed_path::refresh();
}

/// Compensation's costs, from the measured ones.
pub fn set_costs(costs: &Costs) {
    set_pair_costs(costs.measured, costs.own[STANDARD]);
    set_untimed_costs(&costs.untimed);
}

/// The untimed modes' costs per kind (scaled: counted, switched off, pathed) in use: the
/// start-up ones, or the lower of the last two recalibration rounds'.
pub(crate) static UNTIMED: [[AtomicU64; 2]; 3] = [const { [const { AtomicU64::new(0) }; 2] }; 3];
/// Where in `UNTIMED` the pathed routine pair is (`pathed_cost`'s calibrated case), for the
/// pathed path in assembly (pathed_path.rs).
pub(crate) const PATHED_PAIR_AT: usize = 2 * size_of::<[AtomicU64; 2]>() + STANDARD * size_of::<AtomicU64>();

/// The untimed modes' costs, from a measurement at start-up or while the program runs
/// (recalibrate.rs).
pub fn set_untimed_costs(untimed: &Untimed) {
    for (slot, costs) in UNTIMED.iter().zip([untimed.counted, untimed.off, untimed.pathed]) {
        for kind in [STANDARD, LOOP] {
            slot[kind].store(costs[kind], Relaxed);
        }
    }
    COUNTED.store(untimed.counted[STANDARD], Relaxed);
    INLINE_COUNT.store(untimed.inline, Relaxed);
    BARE_COUNT.store(untimed.bare, Relaxed);
    DISPATCH.store(untimed.dispatch, Relaxed);
    FLUSH.store(untimed.flush, Relaxed);
    STEP_MISS.store(untimed.step_miss, Relaxed);
}

/// The untimed modes' costs in use (`set_untimed_costs`).
pub fn untimed_costs() -> Untimed {
    let load = |slot: &[AtomicU64; 2]| [slot[0].load(Relaxed), slot[1].load(Relaxed)];
    Untimed {
        counted: load(&UNTIMED[0]),
        off: load(&UNTIMED[1]),
        pathed: load(&UNTIMED[2]),
        inline: INLINE_COUNT.load(Relaxed),
        bare: BARE_COUNT.load(Relaxed),
        dispatch: DISPATCH.load(Relaxed),
        flush: FLUSH.load(Relaxed),
        step_miss: STEP_MISS.load(Relaxed),
    }
}

/// What one inline count costs its caller with compensation on (scaled): the calibrated inline
/// count, plus what inplace's double windows measured one more count to cost over that in place,
/// pooled and weighed against the calibration (`set_inline_excess`, inplace/excess.rs). No
/// window leaves the count out (none could keep the counts exact), so the windows add a second,
/// a shadow that changes nothing, and measure that.
#[inline(always)]
pub fn inline_count_cost() -> u64 {
    INLINE_COUNT.load(Relaxed).saturating_add_signed(INLINE_EXCESS.load(Relaxed))
}

/// What one bare count costs its caller (scaled): its calibration.
#[inline(always)]
pub fn bare_count_cost() -> u64 {
    BARE_COUNT.load(Relaxed)
}

/// What a flush that credits a bare window's calls costs (scaled, flushes.rs): its calibration.
#[inline(always)]
pub fn flush_cost() -> u64 {
    FLUSH.load(Relaxed)
}

/// The calibrated flush of a bare window's calls (scaled, flushes.rs).
static FLUSH: AtomicU64 = AtomicU64::new(0);

/// What a step that misses its caller's node cache costs at least (scaled): the calibrated
/// trip into the probes' Rust bodies and past the cache (`overhead::Untimed::step_miss`), which
/// the misses' in-place sample does not see (misses.rs charges the larger of the two).
#[inline(always)]
pub fn step_miss_cost() -> u64 {
    STEP_MISS.load(Relaxed)
}

/// The calibrated missed step (scaled, `step_miss_cost`).
static STEP_MISS: AtomicU64 = AtomicU64::new(0);

/// The calibrated bare count (scaled), and what the inline count costs over its calibration in
/// place (scaled, pooled over the events the double windows measured: inplace's excess.rs).
static BARE_COUNT: AtomicU64 = AtomicU64::new(0);
/// The calibrated dispatch of a routine that counts inline, switched off (scaled,
/// `overhead::Untimed::dispatch`).
static DISPATCH: AtomicU64 = AtomicU64::new(0);
static INLINE_EXCESS: AtomicI64 = AtomicI64::new(0);
/// Whether any double window measured the inline count (`set_inline_excess` ran).
static INLINE_MEASURED: AtomicBool = AtomicBool::new(false);

/// Sets what the inline count costs over its calibration in place (scaled, may be negative).
pub fn set_inline_excess(scaled: i64) {
    INLINE_EXCESS.store(scaled, Relaxed);
    INLINE_MEASURED.store(true, Relaxed);
}

/// What one inline count costs in place (scaled) where double windows measured it
/// (`inline_count_cost`), else None: the overhead figure's inline count, with compensation on
/// or off.
pub fn measured_inline_count_cost() -> Option<u64> {
    INLINE_MEASURED.load(Relaxed).then(inline_count_cost)
}

/// Δi per kind and the routine pair's δ (scaled), from a measurement at start-up or while the
/// program runs (recalibrate.rs).
pub fn set_pair_costs(measured: [u64; 2], own: u64) {
    for kind in [STANDARD, LOOP] {
        OUTER[kind].store(measured[kind], Relaxed);
    }
    let outer = measured[STANDARD];
    OWN_SHARE.store(((own << SCALE) + outer / 2).checked_div(outer).unwrap_or(0).min(1 << SCALE), Relaxed);
}

/// What a counted-only activation of event `id` adds to the frame on top, scaled, with
/// compensation on: its in-place estimate, else the calibrated cost.
#[inline(always)]
pub fn counted_cost(id: u32) -> u64 {
    match inplace::costs(id) {
        (0, _) => COUNTED.load(Relaxed),
        (_, untimed) => untimed,
    }
}

/// What a call of event `id` kept on the stack untimed (`switch::PATHED`: the counted windows
/// of a callpath parent) adds to the frame on top, scaled: the untimed pair's cost its estimate
/// kept (inplace stores it as the event's counted cost), else the calibrated one times what the
/// run's leaves measured of it (`population::PATHED`). A leaf's own pathed windows
/// (`inplace::pathed_leaf`) charge the latter: its estimate's untimed part is a counted call's.
pub fn pathed_cost(id: u32) -> u64 {
    match inplace::costs(id) {
        (timed, untimed) if timed != 0 && !inplace::pathed_leaf(id) => untimed,
        _ => population::PATHED.apply(UNTIMED[2][STANDARD].load(Relaxed)),
    }
}

/// The calibrated Δi (scaled) of a probe of `kind`: the start-up one, or the latest
/// recalibration's.
pub fn calibrated_pair_cost(kind: usize) -> u64 {
    OUTER[kind].load(Relaxed)
}

/// The probe pair cost (Δi, scaled) of event `id`, a probe of `kind`, and the part of it inside
/// the event's own interval: the event's in-place estimate where there is one, else the
/// calibrated cost of its kind scaled as the run's estimated events moved from theirs
/// (population.rs); the part inside as the event's split windows measured it (inplace
/// `splits`), else the calibration's share.
#[inline(always)]
pub fn pair_cost(id: u32, kind: usize) -> (u64, u64) {
    let (cost, inside) = match inplace::split_cost(id) {
        (0, _) => (population::UNESTIMATED.apply(OUTER[kind].load(Relaxed)), None),
        estimate => estimate,
    };
    let share = || (cost * OWN_SHARE.load(Relaxed) + (1 << (SCALE - 1))) >> SCALE;
    (cost, inside.map_or_else(share, |inside| inside.min(cost)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::close_top;
    use crate::thread::{Frame, Record, ThreadState};

    /// Sets Δi and δ (in ticks) and switches compensation on, as calibration would.
    fn set_costs(outer: u64, own: u64) {
        OUTER[STANDARD].store(outer << SCALE, Relaxed);
        OWN_SHARE.store(((own << SCALE) + outer / 2) / outer, Relaxed);
        ENABLED.store(true, Relaxed);
    }

    struct Harness {
        frames: Vec<Frame>,
        records: Vec<Record>,
        ts: ThreadState,
    }

    impl Harness {
        fn new() -> Box<Harness> {
            // SAFETY: a frame is plain integers, valid when zeroed.
            let mut frames: Vec<Frame> = (0..16).map(|_| unsafe { std::mem::zeroed() }).collect();
            let mut records = vec![Record::default(); 8];
            frames[0].id = crate::thread::SENTINEL_ID;
            // The vectors' buffers do not move when they move into the box.
            let ts = ThreadState::over(&mut frames, &mut records);
            Box::new(Harness { frames, records, ts })
        }

        /// An event `id` whose entry timestamp is `start`.
        fn open(&mut self, id: u32, start: u64) {
            let depth = self.ts.depth + 1;
            self.ts.depth = depth;
            self.frames[depth - 1].child_calls += 1;
            self.records[id as usize].active += 1;
            // SAFETY: as in `new`.
            self.frames[depth] = Frame { id, start, ..unsafe { std::mem::zeroed() } };
        }

        fn close(&mut self, now: u64) {
            let depth = self.ts.depth;
            // SAFETY: the harness's frames and records back the state, and `open` pushed the
            // top frame for an id below record_cap.
            unsafe { close_top(&mut self.ts, depth, now, STANDARD) };
        }
    }

    /// Malony and Shende's example shape: A runs once (N = 1) and calls B twice (L = 2); each B
    /// calls C once, so A has M = 4 descendant events. With Δi = 10 ticks per event, 4 of them
    /// inside the event's own interval (δ), and true times C = 100, B = 150 inclusive (50
    /// exclusive), A = 500 inclusive (200 exclusive), the measured times are C = 100 + δ = 104,
    /// B = 150 + δ + Δi = 164, A = 500 + δ + M Δi = 544; A's measured exclusive time is
    /// 200 + δ + L (Δi - δ) = 216, the paper's N Δi + L Δe shape.
    #[test]
    fn compensation_recovers_the_true_times_of_a_hand_computed_example() {
        set_costs(10, 4);
        let (a, b, c) = (1u32, 2u32, 3u32);
        let mut h = Harness::new();
        h.open(a, 0);
        h.open(b, 10);
        h.open(c, 20);
        h.close(124);
        h.close(174);
        h.open(b, 200);
        h.open(c, 210);
        h.close(314);
        h.close(364);
        h.close(544);
        let r = |id: u32| h.records[id as usize];
        assert_eq!((r(c).incl, r(c).comp_incl, r(c).comp_excl), (208, 200, 200));
        assert_eq!((r(b).incl, r(b).excl, r(b).comp_incl, r(b).comp_excl), (328, 120, 300, 100));
        assert_eq!((r(a).incl, r(a).excl, r(a).comp_incl, r(a).comp_excl), (544, 216, 500, 200));
        assert_eq!(r(a).negative + r(b).negative + r(c).negative, 0);
        // Everything removed lands at the root: 5 events of 10 ticks.
        assert_eq!(scaled_to_ticks(h.frames[0].overhead), 50);
    }

    #[test]
    fn an_event_shorter_than_the_probe_cost_is_counted_negative_not_clamped() {
        set_costs(10, 4);
        let mut h = Harness::new();
        h.open(1, 0);
        h.close(3);
        let r = h.records[1];
        assert_eq!((r.comp_incl, r.comp_excl, r.negative), (-1, -1, 1));
    }

    #[test]
    fn a_lone_event_loses_only_its_own_share() {
        set_costs(10, 4);
        let mut h = Harness::new();
        h.open(5, 1000);
        h.close(2000);
        assert_eq!(h.records[5].comp_incl, 996);
    }
}
