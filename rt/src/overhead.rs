//! What the probes cost in this run, measured once at start-up on the calling thread, on the
//! exact paths the program's probes take (fenced or not, flat or callpath mode, with
//! compensation's arithmetic when it is on): a probe pair timed, counted only, and switched
//! off, for routine and loop probes (and with compensation, counted on the shadow stack:
//! `switch::PATHED`). Every profile reports these costs and the overhead they
//! add up to (Paradyn's cost model); compensation removes the timed and counted ones.
//!
//! The measurement is Malony and Shende's two-level experiment: k probe pairs in a tight loop,
//! repeated j times, the minimum kept, less the cost of the same empty loop. Compensation needs
//! precise timed costs: 2000 pairs, 5 repetitions per round, the rounds alternating between
//! the empty loop and the probe kinds so that each minimum draws on the whole measurement
//! window, at least 5 rounds and more while a round still lowers a minimum (at most 12, about
//! 20 ms fenced). The costs change while the program runs (the core's clock frequency does):
//! recalibrate.rs measures them again every few tens of milliseconds.
//! Everything else gets 9 x 500 (a fraction of a millisecond, which every run pays once).

use crate::thread::{self, ThreadState};
use crate::{clock, compensate, probes, registry, switch, trampolines};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
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
    /// The untimed modes (counted, switched off, pathed, the inline count).
    pub untimed: Untimed,
    /// The part of a routine's timed pair inside its interval when its entry fences
    /// (`switch::FENCED`, inplace's split windows): no unfinished work before the entry's
    /// timestamp, so about this much in place too.
    pub fenced_own: u64,
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
/// One round of the precise measurement, and how many rounds it takes.
const ROUND: Budget = (5, 2000);
const MIN_ROUNDS: usize = 5;
const MAX_ROUNDS: usize = 12;
/// A round that lowers a minimum by more than this share (1/256, 0.4 %) asks for another.
const SETTLED_SHIFT: u32 = 8;
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
    let precise = strategy.is_some();
    // SAFETY: `state` is the calling thread's attached state (checked non-null), with only its
    // root frame open at start-up.
    let mut costs = switch::without_throttling(|| unsafe { measure_on(&mut *state, precise) });
    // SAFETY: as above, after the calibration events closed.
    unsafe { thread::forget_calibration(&mut *state, &[base, base + 1]) };
    // Also without compensation: the in-place estimates of throttled events weigh their
    // measurements with these costs and model what no window sees from them (inplace).
    compensate::set_costs(&costs);
    costs.ticks = clock::now().saturating_sub(started);
    set_fenced_own(costs.fenced_own);
    let _ = COSTS.set(costs);
    // Throttled events are estimated in every run without a fixed-cost strategy (their honest
    // overhead), every hot event with the inplace one.
    match strategy {
        Some(compensate::Strategy::InPlace) => crate::inplace::start(true),
        None => crate::inplace::start(false),
        Some(_) => {}
    }
    crate::recalibrate::start(clock::now());
}

/// The hidden events the measurements run on: (parent, child).
pub fn hidden_events() -> (*const u32, *const u32) {
    (PARENT.as_ptr().cast_const(), CHILD.as_ptr().cast_const())
}

/// Whether event `id` is one of the hidden events the measurements run on. Throttling leaves
/// them alone (`switch::consider`): a recalibration round times 900 calls of the child before
/// its loop pairs, and the default threshold of 1000 calls throttled it in the middle of them,
/// so the round's loop pair came out a counted one, under half its start-up cost, and the
/// plausibility check (recalibrate.rs) dropped the round: with throttling on, most rounds of a
/// run were never used (SQLite's callpath run: 135 rounds, none used).
pub fn is_hidden(id: u32) -> bool {
    id == PARENT.load(Relaxed) || id == CHILD.load(Relaxed)
}

/// A probe pair of `kind` on the hidden child event, as the pass emits it: a routine's exit
/// runs only when its entry opened something, a loop's always.
///
/// # Safety
/// The calling thread measures (its state is attached), inside an activation of the hidden
/// parent event, as the probes' own contract asks of instrumented code.
unsafe fn pair(kind: usize) {
    let child = CHILD.as_ptr().cast_const();
    // SAFETY: `child` is the hidden event's id slot, a static; the caller's contract holds.
    let set = trampolines::set_in_use();
    // SAFETY: `child` is the hidden event's id slot, a static; the caller's contract holds.
    let opened = unsafe { (set.enter)(child) };
    if kind == LOOP {
        // SAFETY: as for the entry.
        unsafe { (set.loop_exit)(child, 0) };
    } else if opened != probes::NOTHING {
        // SAFETY: as for the entry; this exit matches the frame the entry opened.
        unsafe { (set.exit)(child, opened) };
    }
}

/// Every kind in every mode, inside one activation of the hidden parent event.
///
/// # Safety
/// `state` is the calling thread's attached state, and the hidden events are registered.
unsafe fn measure_on(state: &mut ThreadState, precise: bool) -> Costs {
    let parent = PARENT.as_ptr().cast_const();
    let child_id = CHILD.load(Relaxed);
    // SAFETY: the parent's id slot is a static; the thread measures (the caller's contract).
    let opened = unsafe { (trampolines::set_in_use().enter)(parent) };
    let quick_baseline = min_pair(QUICK, || std::hint::black_box(()), || 0).0;
    let records = state.records();
    // SAFETY: the registered child's id is below the thread's record capacity (its records
    // grew to hold every registered event before the measurement).
    let own = || unsafe { (*records.add(child_id as usize)).incl };
    // SAFETY: inside the parent's activation, on the measuring thread.
    let timed = unsafe {
        if precise {
            timed_rounds(own)
        } else {
            timed_round(QUICK, own)
        }
    };
    // SAFETY: inside the parent's activation, on the measuring thread.
    let fenced_own = unsafe { fenced_inner(if precise { ROUND } else { QUICK }, own) };
    // SAFETY: inside the parent's activation, on the measuring thread.
    let untimed = unsafe { untimed_round(state, QUICK, quick_baseline, crate::callpath::depth() != 0) };
    let costs = Costs { measured: timed.pair_costs(), own: timed.inner, untimed, fenced_own, ticks: 0 };
    // SAFETY: closes the parent's activation opened above.
    unsafe { (trampolines::set_in_use().exit)(parent, opened) };
    costs
}

/// The untimed modes' pair costs (scaled): measured at start-up (`Costs::untimed`) and
/// again by every recalibration round (recalibrate.rs), since they do not follow the timed
/// pair's moves in proportion. On this kind of VM a phase that made the timed pair 1.5 x dearer
/// made the counted pair 2.2 x and the pathed pair 1.6 to 2.2 x dearer: in the 202 rounds of one
/// run of `hot_parent.c` with callpaths, timed 138 to 168 ticks, counted 10 and pathed 39 to 47
/// in the quiet rounds, timed 211 to 236, counted 21 to 23 and pathed 67 to 97 in the slow
/// ones (the start-up measurements of 24 processes, 12 with and 12 without address
/// randomisation, interleaved, moved alike: the phase, not the layout).
#[derive(Clone, Copy, Default)]
pub struct Untimed {
    pub counted: [u64; 2],
    pub off: [u64; 2],
    /// Counted but kept on the shadow stack (`switch::PATHED`: a throttled callpath parent, and
    /// inplace's counted windows of one): measured where callpaths are recorded, the only runs
    /// that use it (0 else).
    pub pathed: [u64; 2],
    /// One inline count of a throttled routine (inline.rs's replica of the pass's code).
    pub inline: u64,
    /// One bare count (inline.rs's `replica_bare`): what a callpath leaf's bare windows
    /// (inplace), against which its counted call is measured, leave to the calibration (0 where
    /// compensation is off: no bare window runs).
    pub bare: u64,
    /// The entry code of a routine that counts inline (its probed copy's dispatch,
    /// pass/src/probed_copy.rs) when the routine is switched off: the checks every call of it
    /// runs before its own code, whatever its mode. No window leaves them out (the routine's
    /// own code is reached only through them), so the calibrated paths its estimates charge
    /// get them added from here (`inplace::model::split`: a callpath leaf's bare reference is
    /// the dispatch alone). With the bare count, where compensation is on (0 else).
    pub dispatch: u64,
    /// One flush of a bare window's pending calls (flushes.rs), where compensation is on.
    pub flush: u64,
    /// What a pathed entry whose step misses its caller's node cache costs over one that finds
    /// it there, where callpaths are recorded and compensation is on (0 else): the trip out of
    /// the assembly path into the probes' Rust bodies and the step past the cache
    /// (`step_miss_round`). The misses' sample (misses.rs) times only the step itself.
    pub step_miss: u64,
}

/// The untimed modes of both kinds with `budget`, less `baseline` (the empty loop's, scaled):
/// counted, switched off, kept on the stack untimed when `pathed` (only callpath runs use it:
/// throttled parents and inplace's pathed windows), and the inline count on x86-64, with the bare count
/// and the flush of a bare call where compensation is on (only its bare windows run them:
/// inplace's `Reference::Bare`, flushes.rs).
///
/// # Safety
/// As `pair`'s: on the measuring thread, inside the hidden parent's activation, with no inline
/// count pending (its entry charged them).
pub unsafe fn untimed_round(state: &mut ThreadState, budget: Budget, baseline: u64, pathed: bool) -> Untimed {
    let child_id = CHILD.load(Relaxed);
    let mut untimed = Untimed::default();
    let pathed_mode = if pathed { Some((switch::PATHED, &mut untimed.pathed)) } else { None };
    let mut modes =
        [Some((switch::COUNTED, &mut untimed.counted)), Some((switch::OFF, &mut untimed.off)), pathed_mode];
    for kind in [STANDARD, LOOP] {
        for (mode, cost) in modes.iter_mut().flatten() {
            switch::set(child_id, *mode);
            // SAFETY: the caller's contract is `pair`'s.
            cost[kind] = min_pair(budget, || unsafe { pair(kind) }, || 0).0.saturating_sub(baseline);
            switch::set(child_id, switch::MEASURED);
        }
    }
    if pathed && compensate::enabled() {
        // SAFETY: the caller's contract is `step_miss_round`'s.
        untimed.step_miss = unsafe { step_miss_round(state, budget, baseline, untimed.pathed[STANDARD]) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::ptr::eq(crate::current::get(), state) {
        let child = CHILD.as_ptr().cast_const();
        switch::set(child_id, switch::INLINE);
        // SAFETY: this thread's state, the one its block holds (tested), the hidden child below
        // its record capacity (registered before the first event) and the mode table's length;
        // nothing else runs on the thread meanwhile.
        untimed.inline = min_pair(budget, || unsafe { crate::inline::replica(child) }, || 0).0;
        untimed.inline = untimed.inline.saturating_sub(baseline);
        if compensate::enabled() {
            switch::set(child_id, switch::BARE);
            // A bare window the thread runs (a recalibration round inside one) gets its calls left
            // back: the round's entry charged those counted so far (`inline::charge_pending`),
            // and credited them (a callpath leaf's) or left them to the window's end (a flat
            // one's, from its calls left): none lost or doubled.
            let left = crate::current::window_left();
            crate::current::set_window_left(u32::MAX);
            // SAFETY: as the inline count's.
            untimed.bare = min_pair(budget, || unsafe { crate::inline::replica_bare(child) }, || 0).0;
            untimed.bare = untimed.bare.saturating_sub(baseline);
            // The same code with the routine switched off stops after the mode's checks: the
            // dispatch every call of it runs.
            switch::set(child_id, switch::OFF);
            // SAFETY: as the bare count's; switched off, it changes nothing.
            untimed.dispatch = min_pair(budget, || unsafe { crate::inline::replica_bare(child) }, || 0).0;
            untimed.dispatch = untimed.dispatch.saturating_sub(baseline);
            crate::current::set_window_left(left);
        }
        switch::set(child_id, switch::MEASURED);
        // The measurement's counts were never calls: none to charge, none in the totals.
        state.pending_estimate = 0;
        crate::current::set_pending_calls(0);
        if compensate::enabled() {
            // SAFETY: this thread's state inside the hidden parent's activation (the caller's
            // contract), nothing pending (cleared above), the hidden child as above.
            let flush = unsafe {
                crate::flushes::calibrate(state, child_id, crate::flush_path::as_the_paths, |one| {
                    min_pair(budget, one, || 0).0
                })
            };
            untimed.flush = flush.saturating_sub(baseline);
        }
    }
    untimed
}

/// `Untimed::step_miss`: the hidden child's pathed pair with its step forgotten from the hidden
/// parent's node before every pair (so that each one misses, as a child of a caller that cycles
/// through more children than its node caches does), less the forgetting alone and the pathed
/// pair that finds its step (`pathed`, scaled). 0 without a callpath tree. The thread's misses
/// sample is set aside meanwhile, so that these misses change neither it nor the count.
///
/// # Safety
/// As `pair`'s: on the measuring thread, inside the hidden parent's activation.
unsafe fn step_miss_round(state: &mut ThreadState, budget: Budget, baseline: u64, pathed: u64) -> u64 {
    // SAFETY: this thread's state; the tree is only used by this thread, and no reference to
    // it outlives a statement below (the probes take their own).
    let Some(tree) = (unsafe { state.tree() }).map(|t| t as *mut crate::callpath::Tree) else { return 0 };
    // SAFETY: the frame on top is the hidden parent's (the contract), below frame_cap.
    let node = unsafe { state.frame(state.depth).node };
    // SAFETY: as above; `node` is a node of this tree.
    let forget = move || unsafe { (*tree).forget_steps(node) };
    // SAFETY: as above.
    let saved = unsafe { std::mem::take(&mut (*tree).misses) };
    let child_id = CHILD.load(Relaxed);
    switch::set(child_id, switch::PATHED);
    let missed = min_pair(
        budget,
        || {
            forget();
            // SAFETY: the caller's contract is `pair`'s.
            unsafe { pair(STANDARD) }
        },
        || 0,
    )
    .0;
    switch::set(child_id, switch::MEASURED);
    let forgetting = min_pair(budget, forget, || 0).0;
    // SAFETY: as above.
    unsafe { (*tree).misses = saved };
    missed.saturating_sub(forgetting.max(baseline)).saturating_sub(pathed)
}

/// The inside part of a routine's timed pair whose entry fences (`Costs::fenced_own`), scaled:
/// the hidden child's own time per pair, the least over `budget`'s repetitions.
///
/// # Safety
/// As `pair`'s: on the measuring thread, inside the hidden parent's activation.
pub unsafe fn fenced_inner(budget: Budget, own: impl Fn() -> u64) -> u64 {
    let child_id = CHILD.load(Relaxed);
    switch::set(child_id, switch::FENCED);
    // SAFETY: the caller's contract is `pair`'s.
    let inner = min_pair(budget, || unsafe { pair(STANDARD) }, own).1;
    switch::set(child_id, switch::MEASURED);
    inner
}

/// The fenced pair's inside part in use (scaled): the start-up one, or the lower of the last
/// two recalibration rounds' (recalibrate.rs), as for the other costs.
static FENCED_OWN: AtomicU64 = AtomicU64::new(0);

pub fn fenced_own() -> u64 {
    FENCED_OWN.load(Relaxed)
}

pub fn set_fenced_own(scaled: u64) {
    FENCED_OWN.store(scaled, Relaxed);
}

/// Minima of the timed measurement, scaled ticks per iteration: the empty loop, and per kind
/// the probe-pair loop (outer) and the probed event's own time (inner).
#[derive(Clone, Copy)]
pub struct Timed {
    pub baseline: u64,
    pub outer: [u64; 2],
    pub inner: [u64; 2],
}

impl Timed {
    /// Per kind, a probe pair's cost: the pair loop less the empty loop (Δi).
    pub fn pair_costs(&self) -> [u64; 2] {
        self.outer.map(|outer| outer.saturating_sub(self.baseline))
    }

    fn values(&self) -> [u64; 5] {
        [self.baseline, self.outer[0], self.outer[1], self.inner[0], self.inner[1]]
    }

    /// Whether `self` lowers any of `before`'s minima by more than 1 / 2^SETTLED_SHIFT.
    fn lowers(&self, before: &Timed) -> bool {
        self.values().iter().zip(before.values()).any(|(&now, then)| now < then - (then >> SETTLED_SHIFT))
    }

    fn min(&self, other: &Timed) -> Timed {
        let m = |a: [u64; 2], b: [u64; 2]| [a[0].min(b[0]), a[1].min(b[1])];
        Timed {
            baseline: self.baseline.min(other.baseline),
            outer: m(self.outer, other.outer),
            inner: m(self.inner, other.inner),
        }
    }
}

/// One round: the empty loop, then each kind's timed pair, with `budget`.
///
/// # Safety
/// As `pair`'s: on the measuring thread, inside the hidden parent's activation.
pub unsafe fn timed_round(budget: Budget, own: impl Fn() -> u64 + Copy) -> Timed {
    let baseline = min_pair(budget, || std::hint::black_box(()), || 0).0;
    // SAFETY: the caller's contract is `pair`'s.
    let (o0, i0) = min_pair(budget, || unsafe { pair(STANDARD) }, own);
    // SAFETY: as above.
    let (o1, i1) = min_pair(budget, || unsafe { pair(LOOP) }, own);
    Timed { baseline, outer: [o0, o1], inner: [i0, i1] }
}

/// The precise measurement: MIN_ROUNDS rounds, then more while a round lowers a minimum.
///
/// # Safety
/// As `timed_round`'s.
unsafe fn timed_rounds(own: impl Fn() -> u64 + Copy) -> Timed {
    // SAFETY: the caller's contract is timed_round's.
    let mut best = unsafe { timed_round(ROUND, own) };
    for round in 1..MAX_ROUNDS {
        // SAFETY: as above.
        let next = unsafe { timed_round(ROUND, own) };
        let lowered = next.lowers(&best);
        best = best.min(&next);
        if round + 1 >= MIN_ROUNDS && !lowered {
            break;
        }
    }
    best
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
