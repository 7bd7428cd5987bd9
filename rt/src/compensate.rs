//! Overhead calibration and on-the-fly compensation (Malony and Shende, sections 3.1 and 3.2).
//!
//! Every event's probe pair costs time in two places: the whole pair, Δi, inflates the
//! inclusive time of every enclosing event; the part between its own two timestamps, δ, inflates
//! its own. So at each exit the compensated inclusive time is the measured one less δ and less
//! the Δi of every descendant event, and the compensated exclusive time is the compensated
//! inclusive time less the children's compensated inclusive times. What lands in a parent's
//! exclusive time per direct child, the paper's Δe, is Δi - δ here (the child's probe work
//! outside its own interval, including the parent's bookkeeping done in the child's exit).
//!
//! Compensation switches the probes to serialized timestamps (see `clock::set_serialized`): on an
//! out-of-order processor an unfenced probe hides in the program's in-flight work by an amount
//! that depends on the surrounding code, so only fenced probes have a cost that calibration can
//! measure and compensation can remove.
//!
//! Both costs are measured at start-up on the exact probe path the program uses (flat or
//! callpath mode, routine/call-statement probes and loop probes), with the paper's two-level
//! experiment: k probe pairs in a tight loop, repeated j times, the minimum kept, less the cost
//! of the same empty loop. A compensated time that comes out negative is kept, counted and
//! reported, never clamped.

use crate::{clock, probes, registry, thread};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Probe kinds with their own costs: routine and call-statement probes share their code.
pub const STANDARD: usize = 0;
pub const LOOP: usize = 1;

static ENABLED: AtomicBool = AtomicBool::new(false);
/// Δi per kind, in ticks (scaled by 2^16 for sub-tick precision).
static OUTER: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// δ per kind, in ticks (scaled by 2^16).
static OWN: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static CALIBRATION_TICKS: AtomicU64 = AtomicU64::new(0);
const SCALE: u32 = 16;
const REPEATS: usize = 25;
const ITERATIONS: usize = 2000;

#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// (Δi, δ) for `kind`, in ticks scaled by 2^16.
#[inline(always)]
pub fn costs(kind: usize) -> (u64, u64) {
    (OUTER[kind].load(Relaxed), OWN[kind].load(Relaxed))
}

pub fn scaled_to_ticks(scaled: u64) -> u64 {
    scaled >> SCALE
}

/// The measured costs for the profile: (Δi, δ) per kind in ticks, and the time calibration took.
pub struct Calibrated {
    pub outer: [f64; 2],
    pub own: [f64; 2],
    pub ticks: u64,
}

pub fn calibrated() -> Option<Calibrated> {
    enabled().then(|| {
        let unscale = |v: u64| v as f64 / f64::from(1u32 << SCALE);
        Calibrated {
            outer: [unscale(OUTER[0].load(Relaxed)), unscale(OUTER[1].load(Relaxed))],
            own: [unscale(OWN[0].load(Relaxed)), unscale(OWN[1].load(Relaxed))],
            ticks: CALIBRATION_TICKS.load(Relaxed),
        }
    })
}

static PARENT: AtomicU32 = AtomicU32::new(registry::UNREGISTERED);
static CHILD: AtomicU32 = AtomicU32::new(registry::UNREGISTERED);

/// Measures the probe costs on the calling thread and switches compensation on, when
/// `INSTRUMENT_COMPENSATE` asks for it. Runs once, at start-up, before any program event.
pub fn calibrate_if_requested() {
    let wanted =
        std::env::var("INSTRUMENT_COMPENSATE").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "no" | "off"));
    if !wanted {
        return;
    }
    clock::set_serialized(true);
    let started = clock::now();
    let base = registry::register_hidden(&["__instrument_calibration", "__instrument_calibration_probe"]);
    PARENT.store(base, Relaxed);
    CHILD.store(base + 1, Relaxed);
    let state = match thread::current() {
        s if !s.is_null() => s,
        _ => thread::attach(),
    };
    if state.is_null() {
        eprintln!("instrument: cannot calibrate the probes; times are not compensated");
        return;
    }
    let parent = PARENT.as_ptr().cast_const();
    let child = CHILD.as_ptr().cast_const();
    // Measure the exact path the program will run: with the compensation arithmetic (its costs
    // are still zero here).
    ENABLED.store(true, Relaxed);
    unsafe {
        probes::__instrument_enter(parent);
        let baseline = min_per_iteration(|| std::hint::black_box(()), || 0);
        for kind in [STANDARD, LOOP] {
            let pair = || {
                probes::__instrument_enter(child);
                if kind == LOOP {
                    probes::__instrument_loop_exit(child, 0);
                } else {
                    probes::__instrument_exit(child);
                }
            };
            let own = || (*(*state).records.add(CHILD.load(Relaxed) as usize)).incl;
            let (outer, inner) = min_pair(pair, own);
            OUTER[kind].store(outer.saturating_sub(baseline), Relaxed);
            OWN[kind].store(inner, Relaxed);
        }
        probes::__instrument_exit(parent);
        thread::forget_calibration(&mut *state, &[base, base + 1]);
    }
    CALIBRATION_TICKS.store(clock::now().saturating_sub(started), Relaxed);
    ENABLED.store(true, Relaxed);
}

/// The smallest (outer time, inner time) per iteration over the repetitions, scaled by 2^16:
/// outer is the loop's wall time, inner the growth of `inner_total` (the probed event's own
/// inclusive time).
fn min_pair(mut body: impl FnMut(), inner_total: impl Fn() -> u64) -> (u64, u64) {
    let (mut best_outer, mut best_inner) = (u64::MAX, u64::MAX);
    for _ in 0..REPEATS {
        let inner_before = inner_total();
        let t0 = clock::now();
        for _ in 0..ITERATIONS {
            body();
        }
        let t1 = clock::now();
        let inner = inner_total() - inner_before;
        best_outer = best_outer.min(((t1 - t0) << SCALE) / ITERATIONS as u64);
        best_inner = best_inner.min((inner << SCALE) / ITERATIONS as u64);
    }
    (best_outer, best_inner)
}

fn min_per_iteration(body: impl FnMut(), inner_total: impl Fn() -> u64) -> u64 {
    min_pair(body, inner_total).0
}
