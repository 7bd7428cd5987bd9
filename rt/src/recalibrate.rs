//! Recalibration while the program runs. The probes' cost follows the core's clock frequency,
//! which a shared machine changes under the program: on this kind of VM about one run in five
//! starts in a phase of some 80 ms in which fenced probes cost 5-18 % more, and a Δi measured
//! only at start-up then over-compensates the rest of the run (IS class W: main 20 % below MO).
//! So with compensation on, the first probe exit after each period (`INSTRUMENT_RECALIBRATE_MS`,
//! default 50; 0: never) measures the costs again with a short round on the same hidden events
//! as start-up, from inside the event on top of the calling thread's stack, and later exits use
//! the lower of its costs and the previous round's (a round of 0.15 ms easily falls into a
//! short slow blip; a phase that lasts is seen by two rounds in a row). The round's own time is
//! charged to that event as measurement overhead, so compensated times do not contain it; the
//! frame is restored as it was, so its counts and children are untouched. Throttling is left
//! as it is (other threads keep running): the hidden events are never throttled
//! (`overhead::is_hidden`; a round times some 1800 pairs of its child, past the default
//! threshold, and a throttled child once made every round implausibly cheap and unused), and
//! their records are cleared after every round.
//!
//! Each round measures the untimed modes too (counted, switched off, kept on the stack untimed,
//! the inline count: `overhead::untimed_round`, each the lower of two rounds as well), which
//! do not move in proportion with the timed pair (`overhead::Untimed`): compensation charges
//! them to counted calls and in-place estimation takes them for what no window measures.
//!
//! Each round also rescales the estimated events' in-place costs as the calibration moved since
//! they were measured (`inplace::follow_phase`), as unestimated events follow it through their
//! calibrated cost.
//!
//! The same deadline, every `inplace::REESTIMATE_NS` without compensation (every period with
//! it), offers the calling thread's next throttled event for estimation again
//! (`inplace::reoffer`), so that throttled events' estimates follow the phases of the run.
//!
//! The hot path pays one load and one comparison per exit (`due`); the deadline is u64::MAX
//! when recalibration is off, and while a round runs, so one thread at a time measures.

use crate::overhead::{self, SCALE, STANDARD};
use crate::thread::{self, ThreadState};
use crate::{clock, compensate, settings, trampolines};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Repetitions and pairs of one round: about 0.15 ms fenced.
const BUDGET: (usize, usize) = (3, 300);
/// The same for each untimed mode: half the pairs, as each costs a fraction of a timed pair's
/// clock reads (all of them together about 0.1 ms a round with callpaths).
const UNTIMED_BUDGET: (usize, usize) = (3, 150);
pub(crate) const DEFAULT_PERIOD_MS: u64 = 50;

/// The clock reading from which the next exit recalibrates (u64::MAX: never).
pub(crate) static NEXT: AtomicU64 = AtomicU64::new(u64::MAX);
/// The period in ns. It is turned into ticks at every deadline (`period_ticks`), at the tick
/// rate measured so far: a rate taken as one tick per ns before there was one made the period
/// 19 ms instead of 50 on a 2.6 GHz TSC.
static PERIOD_NS: AtomicU64 = AtomicU64::new(0);
/// Whether the periodic work includes a round (compensation on), besides the re-estimation.
static RECALIBRATING: AtomicBool = AtomicBool::new(false);
static ROUNDS: AtomicU64 = AtomicU64::new(0);
/// Ticks spent in rounds, and the lowest and highest routine Δi and counted pair (scaled) used.
static SPENT: AtomicU64 = AtomicU64::new(0);
static LOW: AtomicU64 = AtomicU64::new(u64::MAX);
static HIGH: AtomicU64 = AtomicU64::new(0);
static COUNTED_LOW: AtomicU64 = AtomicU64::new(u64::MAX);
static COUNTED_HIGH: AtomicU64 = AtomicU64::new(0);
/// The previous round's Δi per kind and routine δ (scaled); at first the start-up ones.
static PREVIOUS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
/// The previous round's fenced pair inside part (scaled); at first the start-up one.
static PREVIOUS_FENCED: AtomicU64 = AtomicU64::new(0);
/// The previous round's untimed costs (scaled; `untimed_values`' order); at first the start-up
/// ones.
const UNTIMED_VALUES: usize = 11;
type UntimedValues = [u64; UNTIMED_VALUES];
static PREVIOUS_UNTIMED: [AtomicU64; UNTIMED_VALUES] = [const { AtomicU64::new(0) }; UNTIMED_VALUES];
/// Whether rounds measure the pathed pair: with callpaths (compensation is on in every round),
/// the only profiles whose estimates use it.
static PATHED: AtomicBool = AtomicBool::new(false);
/// The routine pair's cost (scaled) of the last `PHASE_ROUNDS` rounds used and of the start-up
/// measurement (0: none yet), in a ring: their median is the phase indicator that estimated
/// events' costs follow (`phase_indicator`).
const PHASE_ROUNDS: usize = 5;
static PHASE: [AtomicU64; PHASE_ROUNDS] = [const { AtomicU64::new(0) }; PHASE_ROUNDS];
static PHASE_NEXT: AtomicUsize = AtomicUsize::new(0);

/// After the start-up measurement: schedules the first round, with compensation on, and the
/// periodic re-estimation of throttled events (`inplace::reoffer`) when they are estimated.
pub fn start(now: u64) {
    let ms = settings::number(&settings::RECALIBRATE_MS).unwrap_or(DEFAULT_PERIOD_MS);
    let recalibrating = ms != 0 && compensate::enabled();
    let reestimating = crate::inplace::enabled() && crate::switch::rule().is_some();
    let period_ns = match (recalibrating, reestimating) {
        (true, _) => ms.saturating_mul(1_000_000),
        (false, true) => crate::inplace::REESTIMATE_NS,
        (false, false) => return,
    };
    if let Some(costs) = overhead::costs() {
        let start = [costs.measured[0], costs.measured[1], costs.own[STANDARD]];
        for (previous, value) in PREVIOUS.iter().zip(start) {
            previous.store(value, Relaxed);
        }
        PREVIOUS_FENCED.store(costs.fenced_own, Relaxed);
        for (previous, value) in PREVIOUS_UNTIMED.iter().zip(untimed_values(&costs.untimed)) {
            previous.store(value, Relaxed);
        }
        note_phase(costs.measured[STANDARD]);
    }
    RECALIBRATING.store(recalibrating, Relaxed);
    PATHED.store(crate::callpath::depth() != 0, Relaxed);
    PERIOD_NS.store(period_ns, Relaxed);
    NEXT.store(now.saturating_add(period_ticks()), Relaxed);
}

/// The period in ticks at the tick rate measured so far (one tick per ns before there is one,
/// which start-up, longer than `clock::ticks_per_ns_estimate` needs, leaves only to a start-up
/// without its measurement: the first deadline then comes early).
fn period_ticks() -> u64 {
    let ticks_per_ns = clock::ticks_per_ns_estimate().unwrap_or(1.0);
    (PERIOD_NS.load(Relaxed) as f64 * ticks_per_ns) as u64
}

/// Whether the exit at `now` should recalibrate.
#[inline(always)]
pub fn due(now: u64) -> bool {
    now >= NEXT.load(Relaxed)
}

/// A round from inside the event on top of `state`'s stack (see the module comment), after
/// offering the next throttled event of the thread for re-estimation.
///
/// # Safety
/// `state` is the calling thread's attached state, and the call comes at the end of a timed
/// exit, as `probes::exit_at` makes it.
#[cold]
#[inline(never)]
pub unsafe fn run(state: *mut ThreadState, now: u64) {
    let next = NEXT.load(Relaxed);
    if now < next || NEXT.compare_exchange(next, u64::MAX, Relaxed, Relaxed).is_err() {
        return;
    }
    // SAFETY: the caller's contract: this thread's own state, nobody else's reference.
    let ts = unsafe { &mut *state };
    let depth = ts.depth;
    // SAFETY: at a timed exit on `ts`, as reoffer asks.
    unsafe { crate::inplace::reoffer(ts, now) };
    if RECALIBRATING.load(Relaxed) && depth + 3 < ts.frame_cap() {
        let started = clock::now();
        // SAFETY: `depth` is below frame_cap (checked), a frame of the mapped stack.
        let saved = unsafe { *ts.frame(depth) };
        // SAFETY: the round pushes at most two frames above `depth` (depth + 3 < frame_cap).
        let (timed, fenced, untimed) = unsafe { measure(state) };
        // SAFETY: as above; `measure` is done with the state.
        let ts = unsafe { &mut *state };
        // SAFETY: the same frame as `saved`, restored as it was.
        unsafe { *ts.frame(depth) = saved };
        ts.depth = depth;
        record(&timed, fenced, &untimed);
        let spent = clock::now().saturating_sub(started);
        // SAFETY: the same frame; the round's time is charged to it as overhead.
        unsafe { ts.frame(depth).overhead += spent << SCALE };
        SPENT.fetch_add(spent, Relaxed);
    }
    NEXT.store(clock::now().saturating_add(period_ticks()), Relaxed);
}

/// One round on the hidden events, whose records are then cleared: the timed costs, the
/// fenced pair's inside part (`overhead::fenced_inner`) and the untimed modes' costs.
///
/// # Safety
/// As `run`'s, with room for two frames above the top.
unsafe fn measure(state: *mut ThreadState) -> (overhead::Timed, u64, overhead::Untimed) {
    let (parent, child) = overhead::hidden_events();
    // SAFETY: the hidden events' id slots are statics.
    let (parent_id, child_id) =
        unsafe { (crate::registry::load_id(parent), crate::registry::load_id(child)) };
    // SAFETY: the caller's contract.
    let records = unsafe { (*state).records() };
    // SAFETY: a probe on this measuring thread, with room on its stack (the caller's contract).
    let opened = unsafe { (trampolines::set_in_use().enter)(parent) };
    // SAFETY: inside the parent's activation; the child's id is below the record capacity
    // (registered before the first event, the records grew to hold it).
    let own = || unsafe { (*records.add(child_id as usize)).incl };
    // SAFETY: as above.
    let timed = unsafe { overhead::timed_round(BUDGET, own) };
    // SAFETY: as above.
    let fenced = unsafe { overhead::fenced_inner(BUDGET, own) };
    // SAFETY: as above; the parent's entry charged any inline counts pending on the thread.
    let untimed =
        unsafe { overhead::untimed_round(&mut *state, UNTIMED_BUDGET, timed.baseline, PATHED.load(Relaxed)) };
    // SAFETY: closes the parent's activation opened above.
    unsafe { (trampolines::set_in_use().exit)(parent, opened) };
    // SAFETY: this thread's attached state.
    unsafe { thread::forget_records(&mut *state, &[parent_id, child_id]) };
    (timed, fenced, untimed)
}

/// Hands the round's costs to compensation (and the fenced pair's inside part to the split
/// windows, inplace), unless they are implausible against the start-up ones (under half or
/// over four times: a round cut short by a preemption, say), which are then kept until the next
/// round.
fn record(timed: &overhead::Timed, fenced: u64, untimed: &overhead::Untimed) {
    let measured = timed.pair_costs();
    let Some(start) = overhead::costs() else { return };
    let near = |value: u64, start: u64| value > start / 2 && value < start.saturating_mul(4);
    let plausible = (0..2).all(|k| near(measured[k], start.measured[k]));
    if !plausible {
        return;
    }
    note_phase(measured[STANDARD]);
    let round = [measured[0], measured[1], timed.inner[STANDARD]];
    let previous: [u64; 3] = std::array::from_fn(|i| PREVIOUS[i].swap(round[i], Relaxed));
    let lower = |kind: usize| round[kind].min(previous[kind]);
    let own = if lower(STANDARD) == round[STANDARD] { round[2] } else { previous[2] };
    compensate::set_pair_costs([lower(0), lower(1)], own);
    crate::inplace::follow_phase();
    if near(fenced, start.fenced_own) {
        overhead::set_fenced_own(fenced.min(PREVIOUS_FENCED.swap(fenced, Relaxed)));
    }
    record_untimed(untimed, start);
    ROUNDS.fetch_add(1, Relaxed);
    LOW.fetch_min(lower(STANDARD), Relaxed);
    HIGH.fetch_max(lower(STANDARD), Relaxed);
}

/// Hands the round's untimed costs to compensation, each the lower of this round's and the
/// previous one's; one that is implausible against its start-up value (as `record`'s) or was
/// not measured (the pathed pair in a flat profile) keeps the previous one.
fn record_untimed(untimed: &overhead::Untimed, start: &overhead::Costs) {
    let previous = std::array::from_fn(|k| PREVIOUS_UNTIMED[k].load(Relaxed));
    let (kept, used) = next_untimed(untimed_values(untimed), untimed_values(&start.untimed), previous);
    for (slot, value) in PREVIOUS_UNTIMED.iter().zip(kept) {
        slot.store(value, Relaxed);
    }
    let [c0, c1, o0, o1, p0, p1, inline, bare, dispatch, flush, step_miss] = used;
    COUNTED_LOW.fetch_min(c0, Relaxed);
    COUNTED_HIGH.fetch_max(c0, Relaxed);
    compensate::set_untimed_costs(&overhead::Untimed {
        counted: [c0, c1],
        off: [o0, o1],
        pathed: [p0, p1],
        inline,
        bare,
        dispatch,
        flush,
        step_miss,
    });
}

/// `record_untimed`'s arithmetic: from this round's values, the start-up ones and the previous
/// round's, what the next round compares with and what compensation uses.
fn next_untimed(
    round: UntimedValues,
    starts: UntimedValues,
    previous: UntimedValues,
) -> (UntimedValues, UntimedValues) {
    let kept: UntimedValues = std::array::from_fn(|k| {
        let near = round[k] > starts[k] / 2 && round[k] < starts[k].saturating_mul(4);
        if near {
            round[k]
        } else {
            previous[k]
        }
    });
    (kept, std::array::from_fn(|k| kept[k].min(previous[k])))
}

/// An `Untimed`'s values in `PREVIOUS_UNTIMED`'s order.
fn untimed_values(u: &overhead::Untimed) -> UntimedValues {
    [
        u.counted[0],
        u.counted[1],
        u.off[0],
        u.off[1],
        u.pathed[0],
        u.pathed[1],
        u.inline,
        u.bare,
        u.dispatch,
        u.flush,
        u.step_miss,
    ]
}

/// Keeps a round's routine pair cost in the phase ring (one thread at a time records rounds).
fn note_phase(cost: u64) {
    let slot = PHASE_NEXT.fetch_add(1, Relaxed) % PHASE_ROUNDS;
    PHASE[slot].store(cost, Relaxed);
}

/// The phase of the run, for the estimated events' costs to follow (inplace's phase.rs): the
/// median of the routine pair's cost over the last `PHASE_ROUNDS` rounds (a quarter of a second
/// at the default period); None before recalibration started. The calibration compensation
/// takes for unestimated events, the lower of two rounds, follows every blip of a round of
/// 0.15 ms: on the ground truth's in_chain context it moved between 85 and 110 ns from round
/// to round in a phase whose in-place cost stayed at 95 to 105, and each estimate's cost was
/// kept scaled by the round that happened to precede it (+8 % over the run).
pub fn phase_indicator() -> Option<u64> {
    median_of_rounds(std::array::from_fn(|k| PHASE[k].load(Relaxed)))
}

/// The median of the rounds' costs (0: no round), the upper one of an even number; None
/// without any. Allocates nothing (it runs at an estimate's publication, inside a probe).
fn median_of_rounds(mut costs: [u64; PHASE_ROUNDS]) -> Option<u64> {
    costs.sort_unstable();
    let rounds = &costs[costs.iter().take_while(|&&cost| cost == 0).count()..];
    rounds.get(rounds.len() / 2).copied()
}

/// What recalibration did (`summary`).
pub struct Summary {
    /// Rounds whose costs were used, and ticks spent in all rounds.
    pub rounds: u64,
    pub spent: u64,
    /// The lowest and highest routine Δi and counted pair used (scaled ticks).
    pub routine: (u64, u64),
    pub counted: (u64, u64),
}

/// What recalibration did; None when no round was used.
pub fn summary() -> Option<Summary> {
    let rounds = ROUNDS.load(Relaxed);
    (rounds > 0).then(|| Summary {
        rounds,
        spent: SPENT.load(Relaxed),
        routine: (LOW.load(Relaxed), HIGH.load(Relaxed)),
        counted: (COUNTED_LOW.load(Relaxed), COUNTED_HIGH.load(Relaxed)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_is_the_median_of_the_rounds_so_far() {
        assert_eq!(median_of_rounds([0; PHASE_ROUNDS]), None);
        assert_eq!(median_of_rounds([100, 0, 0, 0, 0]), Some(100));
        assert_eq!(median_of_rounds([100, 140, 60, 0, 0]), Some(100));
        assert_eq!(median_of_rounds([0, 140, 60, 0, 0]), Some(140), "the upper of two");
        assert_eq!(median_of_rounds([90, 95, 200, 100, 85]), Some(95), "a blip moves nothing");
    }

    #[test]
    fn an_untimed_cost_is_the_lower_of_two_plausible_rounds() {
        let starts = [100, 120, 20, 30, 400, 0, 40, 20, 8, 50, 300];
        let previous = starts;
        // Counted dearer (a slow phase), off cheaper, pathed implausible (a preemption), the
        // loop's pathed pair never measured (0), the inline count dearer, the bare one and the
        // flush cheaper, the dispatch unmeasurable (0), the missed step cheaper.
        let round = [170, 130, 15, 30, 5000, 0, 60, 15, 0, 45, 280];
        let (kept, used) = next_untimed(round, starts, previous);
        assert_eq!(kept, [170, 130, 15, 30, 400, 0, 60, 15, 8, 45, 280]);
        assert_eq!(used, [100, 120, 15, 30, 400, 0, 40, 15, 8, 45, 280], "one dear round moves nothing");
        let (kept, used) = next_untimed([180, 125, 16, 31, 390, 0, 70, 16, 7, 48, 310], starts, kept);
        assert_eq!(kept, [180, 125, 16, 31, 390, 0, 70, 16, 7, 48, 310]);
        assert_eq!(used, [170, 125, 15, 30, 390, 0, 60, 15, 7, 45, 280], "two in a row move it");
    }
}
