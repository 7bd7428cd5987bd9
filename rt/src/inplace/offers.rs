//! Which events are estimated, and when: hot events at powers of four of their calls (with
//! compensation), throttled ones from their throttling and again every period, one at a time,
//! the others waiting in the queue (`pending`), counted where their estimation would otherwise
//! change what the ones ahead of them measure.

use super::split::splits;
use super::{
    at_end, cost_of, defer_start, due, enabled, give_up_idle, give_up_stale, pending, record_of, set_end,
    timed_boundary, Deferred, GIVEN_UP, HOT_OFFERS, MAX_WAITS, MAX_WINDOW, MEASURED_SHARE, MIN_PAIRS,
    MIN_THROTTLED_BUDGET, MIN_WINDOW, NONE, OWNER, PAIRS_IN_BUDGET, PATHED_LEAF, PATHED_MISSES,
    TALLY_WINDOWS, TARGET, TARGET_MISSES, THROTTLED_SHARE, WINDOWS, WINDOW_NS,
};
use crate::thread::{Record, ThreadState};
use crate::{clock, registry, switch};
use std::sync::atomic::Ordering::{Acquire, Relaxed};

/// At a timed exit of event `id` (probe `kind`), before it is charged to `record`, this
/// thread's record of the event: the end of a timed window, or an offer, as of the counts the
/// charge is about to give (one more call, one fewer open activation).
///
/// An event is offered when its executions, timed and counted, reach each power of four. Its
/// timed calls alone fell behind those of the other events of its loop by what its windows and
/// its waits counted, each its own amount; so at the next power of four the event measured
/// first started while the one to wait behind it was still timed, and its first pairs measured
/// it next to a timed partner, the rest next to a counted one (ground truth, nested context:
/// the first six of 24 pairs at 33 ns, the others at 44). Between estimations a measured
/// event's counted calls do not move, so the sum passes every power of four at a timed exit.
///
/// # Safety
/// As `probes::close_top`'s, before its charge: `ts` is the calling thread's attached state,
/// `id` (below its `record_cap`) the event of the frame it pops and `record` its record of
/// `id`; the caller writes none of its records until this returns.
#[inline(always)]
pub unsafe fn before_timed_charge(ts: &mut ThreadState, id: u32, kind: usize, record: &Record) {
    let calls = record.calls + 1;
    if at_end(calls) {
        // SAFETY: a timed exit of `id` on this thread, records left alone meanwhile (the contract).
        unsafe { timed_boundary(ts, id, calls, u64::from(record.active.saturating_sub(1))) };
    } else if due(calls + record.counted) && HOT_OFFERS.load(Relaxed) != 0 {
        // SAFETY: this thread's state, `id` below its record_cap, records left alone meanwhile
        // (the contract).
        unsafe { offer_hot(ts, id, kind, calls, record.incl) };
    }
}

/// Offers measured event `id` (probe `kind`, its counts as charged: `calls`, `incl`), hot on
/// `ts`. When another event holds the estimation, it waits in this thread's queue and starts
/// when that estimation ends: events that become hot together (the kernels of one loop, called
/// equally often) reach each power of four within a few calls of each other, and without the
/// queue whether one of them was ever measured depended on whether an estimation happened to
/// end before its offer (on BT.W, two builds of the same sources: all three kernels measured
/// in one, none in the other, which kept the start-up calibration for 20 M calls).
///
/// It waits counted (module comment), at its mean so far as the untimed calls of a throttled
/// event are, or, a callpath parent, kept on the stack as its counted windows keep it
/// (`keeps_path`); `resume` measures it again when its turn comes, when it had its share
/// (`waited_out`), or when its thread retires.
///
/// # Safety
/// As `offer`'s.
#[cold]
#[inline(never)]
pub(super) unsafe fn offer_hot(ts: &mut ThreadState, id: u32, kind: usize, calls: u64, incl: u64) {
    // SAFETY: the contract.
    if unsafe { offer(ts, id, kind, calls, incl, switch::MEASURED, budget(calls, switch::MEASURED)) } {
        return;
    }
    // SAFETY: `id < record_cap` (offer's caller checked it), records left alone meanwhile (the
    // estimation `offer` may have given up credited its counts before this reference).
    let record = unsafe { record_of(ts, id) };
    if eligible(id, switch::MEASURED, record) && TARGET.load(Relaxed) != NONE {
        // Not the event under estimation (hot on another thread too): its windows set its mode.
        let waits = TARGET.load(Relaxed) != id;
        let waiting = if waits { pending::WAITING } else { 0 };
        // A callpath parent waits on the stack, as its counted windows keep it.
        let mode = if keeps_path(record) { switch::PATHED } else { switch::COUNTED };
        if pending::push(ts.index, kind | pending::MEASURED | waiting, id) && waits {
            if let Some(cost) = cost_of(id) {
                cost.wait_until.store(wait_limit(record.counted, calls), Relaxed);
            }
            crate::untimed::hot(id, crate::untimed::basis(record), calls);
            switch::set(id, mode);
        }
    }
}

/// Whether event `id`, waiting counted, has had its share (`counted` being its counted count on
/// the calling thread): `MAX_WAITS` estimations' budgets (a 32nd of its calls when it was
/// queued, each), half its calls. It waits for the estimations ahead of it to end (its turn
/// resumes it), and this is only the limit: waiting past it would leave most of its calls
/// untimed behind a long queue (Lua 5.4: half of `singlematch`'s two million calls); it is
/// then measured again and keeps its place in the queue, its differences telescoping only in
/// part. A share of one budget per estimation ahead was too short: an estimation spends more
/// than its budget where its windows are the shortest (`MIN_WINDOW`, `MIN_PAIRS` of them) and
/// with its spacers. On NPB BT (class W, every call timed) `matmul_sub`, queued behind
/// `binvcrhs` at 16 384 calls, was timed again 0.2 ms into that 1.8 ms estimation, and 0.1 ms
/// before the end of the later ones (a traced runtime), so that `binvcrhs` was measured next to
/// its partner timed; with one budget for every estimation ahead, the third of three routines
/// of one loop was timed again while the second was measured (ground truth, nested context).
#[inline(always)]
pub fn waited_out(id: u32, counted: u64) -> bool {
    cost_of(id).is_some_and(|cost| {
        let until = cost.wait_until.load(Relaxed);
        until != 0 && counted >= until
    })
}

/// A measured event that waited counted (or pathed) in the queue (`offer_hot`) is measured
/// again (unless something else switched it meanwhile: `instrument top`, or throttling after an
/// estimation).
pub fn resume(id: u32) {
    if let Some(cost) = cost_of(id) {
        cost.wait_until.store(0, Relaxed);
    }
    let mode = switch::mode(id);
    if (mode == switch::COUNTED || mode == switch::PATHED) && !switch::throttled(id) {
        crate::untimed::clear(id);
        switch::set(id, switch::MEASURED);
    }
}

/// Offers event `id` (probe `kind`), which its timed exit on `state` (its counts as charged:
/// `calls`, `incl`) has just throttled: estimated, it goes back to being counted.
///
/// # Safety
/// `state` is the calling thread's attached state, at a timed exit of `id` (below its
/// `record_cap`) whose charge has just throttled it (`probes::past_throttle_calls`); the
/// caller writes none of its records until this returns.
#[cold]
#[inline(never)]
pub unsafe fn offer_throttled(
    state: *mut ThreadState,
    id: u32,
    kind: usize,
    calls: u64,
    incl: u64,
    mean: u64,
) {
    // SAFETY: this thread's state, `id` below its record_cap, records left alone meanwhile (the
    // contract).
    if unsafe { offer(state, id, kind, calls, incl, switch::COUNTED, budget(calls, switch::COUNTED)) } {
        // SAFETY: `offer` returned true: this thread just won TARGET, so it alone touches the
        // windows (see `Owned`).
        unsafe { (*WINDOWS.0.get()).mean = mean };
    } else if TARGET.load(Relaxed) != NONE
        // SAFETY: as above.
        && eligible(id, switch::COUNTED, unsafe { record_of(&*state, id) })
    {
        // SAFETY: `state` is this thread's attached state (the contract).
        if pending::push(unsafe { (*state).index }, kind, id) {
            // SAFETY: as above.
            unsafe { challenge_after(&*state, id, calls) };
        }
    }
}

/// With compensation on, sends queued throttled event `id` (`calls` timed calls on `ts`) to
/// the counted path's body after as many more counted calls as an estimation of it may spend
/// (the fast path compares with `wait_until`, as for a waiting measured event), so that the
/// queue's estimation can be found idle (`overtake`).
///
/// # Safety
/// `ts` is the calling thread's attached state and `id` below its `record_cap`.
unsafe fn challenge_after(ts: &ThreadState, id: u32, calls: u64) {
    if let (true, Some(cost)) = (crate::compensate::enabled(), cost_of(id)) {
        // SAFETY: the contract.
        let counted = unsafe { record_of(ts, id) }.counted;
        cost.wait_until.store(counted + budget(calls, switch::COUNTED), Relaxed);
        // SAFETY: `ts` is this thread's attached state (the contract).
        unsafe { super::mark_challenge(ts, id) };
    }
}

/// Queued throttled event `id` has had as many counted calls as an estimation may spend since
/// it was queued, or since the last time (`challenge_after`): the estimation under way is given
/// up if it spent less than half its budget meanwhile (`give_up_idle`) or is stale or overdue
/// (`give_up_stale`), and the queue's next one starts; else the event, while still queued,
/// challenges it again after as many calls. The estimation given up is offered again at a
/// re-offer (its event is rested and counted, `reoffer`).
///
/// # Safety
/// `ts` is the calling thread's attached state, in a counted entry of `id` (below its
/// `record_cap`) that has counted it, with the stack marked busy; the caller writes none of its
/// records until this returns.
#[cold]
#[inline(never)]
pub unsafe fn overtake(ts: &mut ThreadState, id: u32) {
    let Some(cost) = cost_of(id) else { return };
    cost.wait_until.store(0, Relaxed);
    // An estimation that has not begun a window for a while, or a throttled one overdue, ends
    // here too: offers, which check that otherwise, come only at timed exits, and a phase of
    // counted routines may have none for a long time.
    // SAFETY: this thread's state inside a probe (the contract).
    unsafe { give_up_stale(ts, clock::now()) };
    // SAFETY: as above, for both calls.
    let challenges = (TARGET.load(Relaxed) != NONE && !unsafe { give_up_idle(ts, id) })
        || (unsafe { start_pending(ts) } && TARGET.load(Relaxed) != id);
    // Only an event still queued challenges again: one estimated meanwhile (or taken by the
    // queue just now) has no turn to wait for.
    if challenges && pending::queued(ts.index, id) {
        // SAFETY: the contract.
        let calls = unsafe { record_of(ts, id) }.calls;
        // SAFETY: as above.
        unsafe { challenge_after(ts, id, calls) };
    }
}

/// Event `id`, waiting in the queue, has had its share of counted calls (`waited_out`): a
/// measured one is measured again (`resume`), a throttled one challenges the estimation ahead
/// of it (`overtake`).
///
/// # Safety
/// As `overtake`'s.
#[cold]
#[inline(never)]
pub unsafe fn had_its_share(ts: &mut ThreadState, id: u32) {
    if switch::throttled(id) {
        // SAFETY: the contract.
        unsafe { overtake(ts, id) }
    } else {
        resume(id)
    }
}

/// Every `REESTIMATE_NS` (recalibrate.rs's deadline, at a timed exit on `ts`) when no
/// estimation is under way: of the events counted on this thread and rested (rests.rs), the
/// one with the most counted calls since it was last offered is estimated again, so that its
/// untimed calls from then on are charged at what a call costs in this phase of the run, not at
/// what it cost just after it was throttled (a compressor's match finder slows down as its
/// dictionary fills).
///
/// An estimation left stale on this thread (its event no longer called) or overdue (run for half
/// a period) is ended first. Events waiting since they were throttled, and measured ones whose
/// phase moved, come before those estimated already, unless the busiest of those has had more
/// calls since its last offer than the most called waiting one has had in all.
///
/// # Safety
/// `ts` is the calling thread's attached state, at the end of a timed exit
/// (`recalibrate::run`); the caller writes none of its records until this returns.
pub unsafe fn reoffer(ts: &mut ThreadState, now: u64) {
    if !enabled() {
        return;
    }
    // SAFETY: `ts` is this thread's state (the contract).
    unsafe { give_up_stale(ts, now) };
    // SAFETY: this thread's state, records left alone meanwhile (the contract).
    if TARGET.load(Relaxed) != NONE {
        return;
    }
    // SAFETY: this thread's state, records left alone meanwhile (the contract).
    let busiest = unsafe { busiest_rested(ts, now) };
    // SAFETY: as above.
    let waits = unsafe { hottest_pending(ts) };
    let first = busiest.filter(|&(_, since, _)| since > waits);
    // SAFETY: as above.
    if first.is_none() && (unsafe { start_pending(ts) } || unsafe { offer_moved(ts) }) {
        return;
    }
    // The busiest rested event, whether it went first or the queue and moved phases had none.
    if let Some((id, _, counted)) = busiest {
        crate::rests::offered(id, counted);
        // SAFETY: as above: this thread's state, `id` below its record_cap.
        unsafe { offer_counted(ts, id, registry::probe_kind(id), true) };
    }
}

/// Of the events counted on `ts` and rested (rests.rs), the one with the most counted calls
/// since it was last offered: its id, those calls, and its counted calls on `ts`.
///
/// # Safety
/// As `reoffer`'s.
unsafe fn busiest_rested(ts: &ThreadState, now: u64) -> Option<(u32, u64, u64)> {
    let used = registry::count().min(ts.record_cap()).min(switch::TABLE_LEN);
    let mut busiest: Option<(u32, u64, u64)> = None;
    for id in 0..used {
        // SAFETY: `id < used <= record_cap`, records left alone meanwhile (the contract).
        let counted = unsafe { record_of(ts, id) }.counted;
        if counted == 0 || !switch::settled_throttled(id) || !crate::rests::rested(id, now) {
            continue;
        }
        let since = crate::rests::calls_since(id, counted);
        if since != 0 && busiest.is_none_or(|(_, most, _)| since > most) {
            busiest = Some((id, since, counted));
        }
    }
    busiest
}

/// Offers every measured event of `ts` whose cost the phase has moved too far since its estimate
/// (`phase::moved`), as their powers of four do (`offer_hot`): the first starts, the others wait
/// for it in the queue, so that the differences of events hot together telescope again. An
/// event whose activation is open on `ts` starts once it has closed (`Deferred::Await`). True
/// when one started.
///
/// # Safety
/// As `reoffer`'s, with no estimation under way.
unsafe fn offer_moved(ts: &mut ThreadState) -> bool {
    for id in super::phase::moved() {
        if id >= ts.record_cap() || switch::mode(id) != switch::MEASURED {
            continue;
        }
        // SAFETY: `id < record_cap` (checked), records left alone meanwhile (the contract).
        let record = unsafe { record_of(ts, id) };
        if record.calls != 0 {
            // SAFETY: this thread's state, `id` below its record_cap (the contract).
            unsafe { offer_hot(ts, id, registry::probe_kind(id), record.calls, record.incl) };
        }
    }
    TARGET.load(Relaxed) != NONE
}

/// The period of `reoffer`, in ns: the shortest rest of a throttled event between its
/// estimations (rests.rs).
pub const REESTIMATE_NS: u64 = 50_000_000;

pub(super) fn reestimate_ticks() -> u64 {
    (REESTIMATE_NS as f64 * clock::ticks_per_ns_estimate().unwrap_or(1.0)) as u64
}

/// An estimation just ended on `ts` (the stack marked busy): of the events this thread
/// throttled (or found hot) while another was estimated, the most called starts its windows
/// now (`pending::take_hottest`), a throttled one from its counted calls (its timed ones stay
/// what they were at throttling). True when one started.
///
/// # Safety
/// `ts` is the calling thread's attached state; the caller writes none of its records until this
/// returns.
pub(super) unsafe fn start_pending(ts: &mut ThreadState) -> bool {
    let (records, cap) = (ts.records(), ts.record_cap());
    // SAFETY: `ts` is this thread's state (the contract).
    let calls = |id: u32| unsafe { calls_on(records, cap, id) };
    while let Some((kind, id)) = pending::take_hottest(ts.index, calls) {
        if id >= ts.record_cap() {
            continue;
        }
        let started = if kind & pending::MEASURED != 0 {
            if kind & pending::WAITING != 0 {
                resume(id);
            }
            // SAFETY: `id < record_cap` (checked), records left alone meanwhile (the contract).
            let record = unsafe { record_of(ts, id) };
            let budget = budget(record.calls, switch::MEASURED);
            let kind = kind & !(pending::MEASURED | pending::WAITING);
            // SAFETY: as above, this thread's state; `offer` checks the event is still measured.
            unsafe { offer(ts, id, kind, record.calls, record.incl, switch::MEASURED, budget) }
        } else {
            // SAFETY: as above.
            switch::settled_throttled(id) && unsafe { offer_counted(ts, id, kind, false) }
        };
        if started {
            return true;
        }
    }
    false
}

/// The calls (timed and counted) of the most called event waiting on `ts` (0: none waits).
///
/// # Safety
/// As `start_pending`'s.
unsafe fn hottest_pending(ts: &ThreadState) -> u64 {
    let (records, cap) = (ts.records(), ts.record_cap());
    // SAFETY: `ts` is this thread's state (the contract).
    pending::hottest(ts.index, |id| unsafe { calls_on(records, cap, id) })
}

/// Event `id`'s calls, timed and counted, in a thread's `records` (`cap` of them); 0 past them.
///
/// # Safety
/// `records` and `cap` are the calling thread's own, which nothing writes meanwhile.
unsafe fn calls_on(records: *const Record, cap: u32, id: u32) -> u64 {
    if id >= cap {
        return 0;
    }
    // SAFETY: `id < cap` (checked): the thread's mapped records (the contract).
    let record = unsafe { &*records.add(id as usize) };
    record.calls + record.counted
}

/// Offers event `id` (probe `kind`), throttled on `ts`, for estimation from its counted calls:
/// its first (`again` false: it waited while another was estimated) with the budget it had when
/// throttled, a share of its timed calls; a re-estimation (`reoffer`) with the least budget,
/// `MIN_THROTTLED_BUDGET`. A share of all its calls would let the windows of a tiny routine,
/// timed at many times its cost, take a tenth of the run at every re-estimation; a share of its
/// timed calls grew with every re-estimation too, since each adds its timed windows to them: NPB
/// IS's randlc, throttled under an instrumented caller, was timed in 12.5 M of its 180 M calls
/// in a 6.9 s run, and the kernel ran 10 % slower than its plain copy in the same process
/// (`instrument bench probes`, its IS-like line in one process), against 4 % in the first 1 s.
///
/// # Safety
/// `ts` is the calling thread's attached state and `id < record_cap`; the caller writes none of
/// its records until this returns.
pub(super) unsafe fn offer_counted(ts: &mut ThreadState, id: u32, kind: usize, again: bool) -> bool {
    // SAFETY: `id < record_cap`, records left alone meanwhile (the contract).
    let record = unsafe { record_of(ts, id) };
    let budget = if again { MIN_THROTTLED_BUDGET } else { budget(record.calls, switch::COUNTED) };
    // SAFETY: this function's contract is `offer`'s.
    if !unsafe { offer(ts, id, kind, record.calls, record.incl, switch::COUNTED, budget) } {
        return false;
    }
    // The fallback for too few timed windows (`throttled_mean`): the estimate it has, with the
    // inside part of a timed pair (that `measured_in_place` takes off) put back.
    let inside = crate::overhead::costs().map_or(0, |c| c.own[kind]);
    // SAFETY: `offer` returned true: this thread just won TARGET, so it alone touches the
    // windows (see `Owned`).
    unsafe { (*WINDOWS.0.get()).mean = crate::untimed::per_call_in_table(id) + inside };
    true
}

/// Offers event `id` (probe `kind`), at a timed exit on `state` that brings its calls to
/// `calls`, for estimation, whose windows may spend `budget` of its executions; the
/// first window (counted) starts here, and the event is left in mode `after` when the estimation
/// ends. True when the estimation started.
///
/// # Safety
/// `state` is the calling thread's attached state (it becomes the windows' owner) and
/// `id < record_cap`; the caller writes none of its records until this returns.
#[cold]
#[inline(never)]
pub(super) unsafe fn offer(
    state: *mut ThreadState,
    id: u32,
    kind: usize,
    calls: u64,
    incl: u64,
    after: u8,
    budget: u64,
) -> bool {
    // SAFETY: `state` is this thread's attached state and `id` below its record_cap, records left
    // alone meanwhile (the contract).
    let record = unsafe { record_of(&*state, id) };
    if !eligible(id, after, record) {
        return false;
    }
    let now = clock::now();
    // SAFETY: `state` is this thread's (the contract).
    unsafe { give_up_stale(state, now) };
    if TARGET.compare_exchange(NONE, id, Acquire, Relaxed).is_err() {
        return false;
    }
    OWNER.store(state, Relaxed);
    let ticks_per_ns = clock::ticks_per_ns_estimate().unwrap_or(1.0);
    let mean = (incl / calls.max(1)).max(1) as f64;
    // A leaf's inline windows measure its counted call against its inline count; a throttled
    // event's, whatever it calls, also which of the two it settles in (`settled_mode`).
    let leaf = record.child_calls == 0;
    let inlines = switch::inline_windows_possible()
        && registry::counts_inline(id)
        && (leaf || after == switch::COUNTED);
    let fenced = splits(kind);
    let pathed = keeps_path(record);
    // A leaf's pathed windows scale the pathed pair's calibration for compensation: only with it on.
    let pathes = leaf && crate::callpath::depth() != 0 && crate::compensate::enabled();
    // Count windows: with inline windows, double ones against detour ones and inline ones
    // against bare ones measure what an inline count costs (excess.rs), for compensation and for
    // the overhead figure alike (so with compensation off too); with compensation and no inline
    // windows (a callpath leaf's, or a flat parent's), bare ones measure its counted call
    // against a bare count (`model::Reference::Bare`), which sees the call into the runtime and
    // the probed copy that a tally window does not. A callpath parent waits pathed: no bare
    // count stands for its pair. Flat parents had only tally windows, and the ground truth's nested
    // context (`probe-context --truth`, three processes) put nest_top's counted call at 9.4 to 10.3
    // ns where it was charged 5.7 to 6.1, nest_find's at 8.7 to 10.3 charged 6.7 to 8.9; with bare
    // windows, interleaved with the tally-only runtime (4 processes each), nested flat's error went
    // from -10.4 to -7.8 % of in place (each process closer, by 0.3 to 5.4) and siblings' from -3.4
    // to +0.2; SQLite with every call timed -6.7 -> -4.7 ns a call (6 processes, +2.0 ±4.5), BT and
    // Lua unchanged. Not settled: in about one process in three the middle routine's (nest_find's)
    // bare windows read far above its truth, with small standard errors: 27 to 42 ns over the bare
    // count where the truth phase put its counted call at 15 (a slow phase of the machine), and a
    // charge 6 to 13 ns above the truth in normal phases; why is open (session 47's note).
    let counts = inlines
        || (crate::compensate::enabled()
            && !pathed
            && switch::bare_windows_possible()
            && registry::counts_inline(id));
    // With inline and count windows, a group of inline windows against bare ones too.
    let firsts = inlines && counts;
    let extra_groups =
        u64::from(inlines) + u64::from(counts) + u64::from(firsts) + u64::from(fenced) + u64::from(pathes);
    let pairs_in_budget = PAIRS_IN_BUDGET + extra_groups * MIN_PAIRS as u64 / 2;
    let largest = (budget / (2 * pairs_in_budget)).clamp(MIN_WINDOW, MAX_WINDOW);
    let window = ((WINDOW_NS * ticks_per_ns / mean) as u64).clamp(MIN_WINDOW, largest);
    if after == switch::MEASURED {
        crate::untimed::hot(id, crate::untimed::basis(record), calls);
    }
    let counted = record.counted;
    // SAFETY: this thread just won TARGET, so it alone touches the windows (see `Owned`).
    let w = unsafe { &mut *WINDOWS.0.get() };
    (w.id, w.kind, w.window, w.largest, w.budget, w.after) = (id, kind, window, largest, budget, after);
    (w.spent, w.done, w.mean) = (0, 0, 0);
    for series in [&mut w.timed_means, &mut w.fenced_means, &mut w.counted_means, &mut w.under_means] {
        series.clear();
    }
    for series in [
        &mut w.differences,
        &mut w.tally_differences,
        &mut w.inline_differences,
        &mut w.bare_differences,
        &mut w.double_differences,
        &mut w.first_differences,
        &mut w.pathed_differences,
    ] {
        series.clear();
    }
    (w.timed_spent, w.pathed_spent) = (0, 0);
    TARGET_MISSES.store(0, Relaxed);
    PATHED_MISSES.store(0, Relaxed);
    // A pathed call has no tally path to be measured against.
    (w.tallies, w.voided) = (TALLY_WINDOWS && !pathed, 0);
    (w.inlines, w.counts, w.fenced, w.leaf, w.pathed, w.pathes) =
        (inlines, counts, fenced, leaf, pathed, pathes);
    PATHED_LEAF.store(if pathes { id } else { NONE }, Relaxed);
    (w.began, w.start) = (now, now);
    w.challenges = super::challenges::Challenges::EMPTY;
    // Any nonzero seed: xorshift stays nonzero.
    w.random = now | 1;
    // Activations of the event left open as of `calls` (a timed exit not yet charged, which
    // `offer_hot` offers at, is still open in the record but not in `calls`).
    let open = u64::from(record.active).saturating_sub(calls.saturating_sub(record.calls));
    if open == 0 {
        defer_start(w, counted);
    } else {
        (w.deferred, w.start_count) = (Deferred::Await, calls);
        set_end(calls + open);
    }
    true
}

/// The counted count at which a measured event queued with `calls` timed calls and `counted`
/// counted ones has waited out (`waited_out`): `MAX_WAITS` budgets on, whatever is queued ahead.
fn wait_limit(counted: u64, calls: u64) -> u64 {
    counted + budget(calls, switch::MEASURED).max(MIN_WINDOW) * MAX_WAITS
}

/// The executions an estimation of an event with `calls` timed calls, left in mode `after`, may
/// spend in its windows: a share of those calls, and at least `MIN_THROTTLED_BUDGET` for a
/// throttled event.
pub(super) fn budget(calls: u64, after: u8) -> u64 {
    match after {
        switch::COUNTED => (calls / THROTTLED_SHARE).max(MIN_THROTTLED_BUDGET),
        _ => calls / MEASURED_SHARE,
    }
}

/// Whether event `id`, in mode `after`, may be estimated (when no other estimation holds the
/// windows): estimation is on, the event is in the tables, and not given up (`record`, its
/// record on the offering thread).
///
/// A measured event that an estimation left `LENIENT` (given up in a counted window when its
/// calls paused: `give_up_stale`) is offered again at its next power of four as if measured,
/// when no timed activation of it is open on the thread but the one exiting: lenient, its exits
/// were not reconciled because an activation of it that began counted might close inside a
/// timed one of its own and close that too; with none of those open (no recursion under way),
/// none opened later can hold such an activation, and its estimation ends measured or lenient
/// again as any does. Left lenient for the rest of the run, it kept the start-up calibration:
/// SQLite's most called routine (`vdbeSorterCompareInt`, a third of the probed calls, every
/// call timed), given up when its sort paused at its first offer, was never estimated, and
/// its lenient probes cost more (issue 23's note of session 52).
pub(super) fn eligible(id: u32, after: u8, record: &Record) -> bool {
    let mode = switch::mode(id);
    let relapsed = after == switch::MEASURED && record.active <= 1 && switch::left_lenient(id);
    let in_mode = mode == after || relapsed || (after == switch::COUNTED && switch::settled_throttled(id));
    enabled() && id < switch::TABLE_LEN && !given_up(id) && in_mode
}

/// Whether the counted windows of a measured event keep it on the shadow stack
/// (`switch::PATHED`): with callpaths on, a counted event is not on its children's paths, so in
/// its counted windows their calls would go to paths that skip it (BT.W: x_solve => binvcrhs,
/// 54000 calls of a call the program never makes). So an event with children (`record`, its
/// record on the offering thread) is counted on the stack instead, and the windows measure
/// timing against that. So is a throttled parent, which settles there (`switch::settled_for`).
fn keeps_path(record: &Record) -> bool {
    crate::callpath::depth() != 0 && record.child_calls != 0
}

/// The last event given up (recursive), so that it is not offered again at every power of four.
pub(super) fn given_up(id: u32) -> bool {
    GIVEN_UP.load(Relaxed) == u64::from(id) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_event_waits_for_its_turn_up_to_half_its_calls() {
        // BT's matmul_sub queued behind binvcrhs at 16 384 calls: an estimation there spends
        // about 2 600 calls (its windows at their shortest), five times its budget of 512.
        assert_eq!(wait_limit(100, 16_384), 100 + 8_192, "half its calls, not one budget");
        assert!(wait_limit(0, 16_384) > 2_600, "the estimation ahead ends first");
        assert_eq!(wait_limit(7, 10), 7 + MIN_WINDOW * MAX_WAITS, "at least the shortest windows");
    }
}
