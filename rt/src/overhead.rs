//! What the probes cost in this run, measured once at start-up on the calling thread, on the
//! exact paths the program's probes take (fenced or not, flat or callpath mode, with
//! compensation's arithmetic when it is on): a probe pair timed, counted only, and switched
//! off, for routine and loop probes. Every profile reports these costs and the overhead they
//! add up to (Paradyn's cost model); compensation removes the timed and counted ones.
//!
//! The measurement is Malony and Shende's two-level experiment: k probe pairs in a tight loop,
//! repeated j times, the minimum kept, less the cost of the same empty loop. Compensation needs
//! precise timed costs and gets 25 x 2000 pairs for them (a few milliseconds); everything else
//! gets 9 x 500 (a fraction of a millisecond, which every run pays once).

use crate::thread::{self, ThreadState};
use crate::{clock, compensate, probes, registry, switch};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::OnceLock;

/// Probe kinds with their own costs: routine and call-statement probes share code.
pub const STANDARD: usize = 0;
pub const LOOP: usize = 1;

/// Fixed-point scale of the costs: 2^16 per tick, for sub-tick precision.
pub const SCALE: u32 = 16;

/// Per kind, a probe pair's cost in scaled ticks.
pub struct Costs {
    /// Timed, the whole pair: Malony and Shende's Δi.
    pub measured: [u64; 2],
    /// The part of a timed pair inside the event's own interval (δ).
    pub own: [u64; 2],
    pub counted: [u64; 2],
    pub off: [u64; 2],
    /// How long the measurement took, in ticks.
    pub ticks: u64,
}

static COSTS: OnceLock<Costs> = OnceLock::new();

/// The costs measured at start-up, if the measurement could run.
pub fn costs() -> Option<&'static Costs> {
    COSTS.get()
}

/// Repetitions and pairs per repetition.
type Budget = (usize, usize);
const PRECISE: Budget = (25, 2000);
const QUICK: Budget = (9, 500);

static PARENT: AtomicU32 = AtomicU32::new(registry::UNREGISTERED);
static CHILD: AtomicU32 = AtomicU32::new(registry::UNREGISTERED);

/// Measures the probe costs, and switches compensation on when `INSTRUMENT_COMPENSATE` asks
/// for it. Runs once, at start-up, before any program event.
pub fn measure() {
    let strategy = compensate::requested();
    compensate::prepare(strategy);
    let started = clock::now();
    let base = registry::register_hidden(&["__instrument_calibration", "__instrument_calibration_probe"]);
    PARENT.store(base, Relaxed);
    CHILD.store(base + 1, Relaxed);
    let state = match thread::current() {
        s if !s.is_null() => s,
        _ => thread::attach(),
    };
    if state.is_null() {
        eprintln!("instrument: cannot measure the probe costs; the profile will not say what they cost");
        compensate::prepare(None);
        return;
    }
    let timed_budget = if strategy.is_some() { PRECISE } else { QUICK };
    let mut costs = switch::without_throttling(|| unsafe { measure_on(&mut *state, timed_budget) });
    unsafe { thread::forget_calibration(&mut *state, &[base, base + 1]) };
    if strategy.is_some() {
        compensate::set_costs(&costs);
    }
    costs.ticks = clock::now().saturating_sub(started);
    let _ = COSTS.set(costs);
}

/// Every kind in every mode, inside one activation of the hidden parent event.
unsafe fn measure_on(state: &mut ThreadState, timed_budget: Budget) -> Costs {
    let parent = PARENT.as_ptr().cast_const();
    let child_id = CHILD.load(Relaxed);
    let child = CHILD.as_ptr().cast_const();
    let mut costs = Costs { measured: [0; 2], own: [0; 2], counted: [0; 2], off: [0; 2], ticks: 0 };
    probes::__instrument_enter(parent);
    // The empty loop's cost, once per budget.
    let empty = |budget| min_pair(budget, || std::hint::black_box(()), || 0).0;
    let (timed_baseline, quick_baseline) = (empty(timed_budget), empty(QUICK));
    for kind in [STANDARD, LOOP] {
        let pair = || {
            probes::__instrument_enter(child);
            if kind == LOOP {
                probes::__instrument_loop_exit(child, 0);
            } else {
                probes::__instrument_exit(child);
            }
        };
        let records = state.records;
        let own = || (*records.add(child_id as usize)).incl;
        let (outer, inner) = min_pair(timed_budget, pair, own);
        costs.measured[kind] = outer.saturating_sub(timed_baseline);
        costs.own[kind] = inner;
        for (mode, cost) in [(switch::COUNTED, &mut costs.counted), (switch::OFF, &mut costs.off)] {
            switch::set(child_id, mode);
            cost[kind] = min_pair(QUICK, pair, || 0).0.saturating_sub(quick_baseline);
            switch::set(child_id, switch::MEASURED);
        }
    }
    probes::__instrument_exit(parent);
    costs
}

/// The smallest (outer time, inner time) per iteration over the repetitions, scaled: outer is
/// the loop's wall time, inner the growth of `inner_total` (the probed event's own inclusive
/// time).
fn min_pair(
    (repeats, iterations): Budget,
    mut body: impl FnMut(),
    inner_total: impl Fn() -> u64,
) -> (u64, u64) {
    let (mut best_outer, mut best_inner) = (u64::MAX, u64::MAX);
    for _ in 0..repeats {
        let inner_before = inner_total();
        let t0 = clock::now();
        for _ in 0..iterations {
            body();
        }
        let t1 = clock::now();
        let inner = inner_total() - inner_before;
        best_outer = best_outer.min(((t1 - t0) << SCALE) / iterations as u64);
        best_inner = best_inner.min((inner << SCALE) / iterations as u64);
    }
    (best_outer, best_inner)
}
