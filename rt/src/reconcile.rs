//! Popping frames: the normal exit (`close_top`, inlined into the hot path) and the cases where
//! the shadow stack and the machine stack disagree. A longjmp or an unwinding exception skips
//! the exit probes of the frames it crosses; the next exit probe that runs then finds its own
//! frame below the top. Frames are matched by routine id and by the stack pointer recorded at
//! entry: every shadow frame above the match belongs to a machine frame that no longer exists,
//! and is closed at the current time.
//!
//! A signal handler may run instrumented code in the middle of a probe. While a probe updates
//! the shadow stack, the depth word carries `BUSY`: a probe that runs then sees a depth past the
//! stack's capacity, so it only counts its event (`probes::enter_cold`) and leaves the frames
//! alone; its exit undoes its entry's step, and the interrupted probe goes on as if nothing ran.

use crate::compensate::{self, STANDARD};
use crate::inplace;
use crate::registry::UNREGISTERED;
use crate::switch;
use crate::thread::{Frame, Record, ThreadState};
use std::sync::atomic::{compiler_fence, Ordering::SeqCst};

/// Marks the depth word while a probe updates the shadow stack (see the module comment).
pub const BUSY: usize = instrument_live::DEPTH_BUSY as usize;

/// Marks the stack busy at `depth` (the depth a re-entering probe must leave it at).
#[inline(always)]
pub fn mark_busy(ts: &mut ThreadState, depth: usize) {
    ts.depth = depth | BUSY;
    compiler_fence(SeqCst);
}

/// Publishes the new `depth`, after every update of the frames and records before it.
#[inline(always)]
pub fn commit(ts: &mut ThreadState, depth: usize) {
    compiler_fence(SeqCst);
    ts.depth = depth;
}

/// Pops the top frame (at `depth`, a probe of `kind`) at time `now` and charges it to its
/// event, its callpath node and its parent.
///
/// # Safety
/// `ts` is the calling thread's attached state, `depth` its top frame (1 ≤ depth <
/// frame_cap), whose id is below `record_cap` (a frame is pushed only for such ids).
#[inline(always)]
pub unsafe fn close_top(ts: &mut ThreadState, depth: usize, now: u64, kind: usize) {
    mark_busy(ts, depth);
    // SAFETY: `depth` and `depth - 1` are frames of the mapped stack (the contract); the frame
    // and its parent are distinct.
    let (frame, parent) = unsafe { (&*ts.frame(depth), ts.frame(depth - 1)) };
    let inclusive = now.saturating_sub(frame.start);
    parent.child_incl += inclusive;
    // SAFETY: the frame's id is below record_cap (the contract).
    let record = unsafe { ts.record(frame.id) };
    let compensated = if compensate::enabled() {
        // Hot events are offered for in-place estimation only with compensation (inplace.rs).
        // SAFETY: at a timed exit on `ts`, before the charge, as it asks.
        unsafe { inplace::before_timed_charge(ts, frame.id, kind, record) };
        let (outer, own) = compensate::pair_cost(frame.id, kind);
        let comp_incl = inclusive as i64 - compensate::scaled_to_ticks(own + frame.overhead) as i64;
        parent.overhead += outer + frame.overhead;
        parent.comp_child += comp_incl;
        Some((comp_incl, comp_incl - frame.comp_child))
    } else {
        None
    };
    charge(record, frame, inclusive, compensated);
    // The counted share serves the throttling decision, which only the flat record takes.
    record.counted_children = record.counted_children.saturating_add(frame.children().1);
    if switch::due(record.calls) {
        // SAFETY: this thread's state, at its timed exit.
        unsafe { past_throttle_calls(ts, frame.id, kind, record) };
    }
    // SAFETY: the tree, when there is one, is this thread's (attach maps it).
    if let Some(tree) = unsafe { ts.tree() } {
        // SAFETY: the frame's node is one the tree made at the frame's entry.
        let node = unsafe { tree.node(frame.node) };
        charge(&mut node.record, frame, inclusive, compensated);
    }
    commit(ts, depth - 1);
}

/// A timed exit of event `id` (probe `kind`, its record just charged) on a thread where it has
/// reached the throttling check: the end of one of its in-place timed windows (inplace.rs
/// estimates events without compensation only from their throttling on, on the thread that
/// throttled them, so only here), else TAU's rule, and an offer when that throttles it.
///
/// # Safety
/// As `close_top`'s, at its charge of `id`.
#[cold]
#[inline(never)]
unsafe fn past_throttle_calls(ts: &mut ThreadState, id: u32, kind: usize, record: &Record) {
    if !compensate::enabled() && inplace::at_end(record.calls) {
        // SAFETY: a timed exit of `id` on this thread (the contract).
        unsafe { inplace::timed_boundary(ts, id, record.calls, u64::from(record.active)) };
    } else if switch::consider(id, record.calls, record.incl) {
        let timed_children = record.child_calls.saturating_sub(u64::from(record.counted_children));
        let mean = crate::untimed::throttled(id, kind, untimed_basis(record), record.calls, timed_children);
        // SAFETY: as above.
        unsafe { inplace::offer_throttled(ts, id, kind, record.calls, record.incl, mean) };
    }
}

/// The exclusive ticks of a throttled event's timed calls that its untimed calls are estimated
/// from (untimed.rs): compensated when compensation is on, and without what its own throttled
/// children's untimed calls were estimated at (those stay theirs).
fn untimed_basis(record: &Record) -> i64 {
    let measured = if compensate::enabled() { record.comp_excl } else { record.excl as i64 };
    measured - compensate::scaled_to_ticks(record.untimed_children) as i64
}

/// One finished activation of an event (or of a callpath node), with its compensated
/// (inclusive, exclusive) ticks when compensation is on.
#[inline(always)]
fn charge(record: &mut Record, frame: &Frame, inclusive: u64, compensated: Option<(i64, i64)>) {
    record.calls += 1;
    record.child_calls += frame.children().0;
    record.excl += inclusive.saturating_sub(frame.child_incl);
    record.active -= 1;
    let outermost = record.active == 0;
    if outermost {
        record.incl += inclusive;
    }
    if let Some((comp_incl, comp_excl)) = compensated {
        record.comp_excl += comp_excl;
        record.negative += u64::from(comp_incl < 0);
        if outermost {
            record.comp_incl += comp_incl;
        }
    }
}

/// An exit whose frame is not on top. Finds the innermost frame of routine `id` whose entry
/// stack pointer is at or above `sp`; closes everything above it, then it.
///
/// # Safety
/// `ts` is the calling thread's attached state, its depth below frame_cap.
#[cold]
#[inline(never)]
pub unsafe fn exit_mismatch(ts: &mut ThreadState, id: u32, sp: usize, now: u64, kind: usize) {
    let top = ts.depth;
    let found = (1..=top).rev().find(|&d| {
        // SAFETY: frames 1..=depth are on the mapped stack (the contract).
        let f = unsafe { &*ts.frame(d) };
        f.id == id && f.sp >= sp
    });
    let Some(target) = found else {
        if id == UNREGISTERED {
            ts.counters.unregistered += 1;
        } else {
            ts.counters.unmatched_exits += 1;
        }
        return;
    };
    for depth in (target + 1..=top).rev() {
        // SAFETY: `depth` is the top frame at each step, an open frame of a registered event.
        unsafe { close_top(ts, depth, now, STANDARD) };
        ts.counters.reconciled += 1;
    }
    // SAFETY: as above, `target` is now the top.
    unsafe { close_top(ts, target, now, kind) };
}

/// A landing pad of event `id` ran with stack pointer `sp`: closes every frame above the
/// innermost frame of `id` whose entry stack pointer is at or above `sp` (frames that
/// overflowed the shadow stack go too). Nothing happens when no such frame is open.
///
/// # Safety
/// `ts` is the calling thread's attached state.
#[cold]
#[inline(never)]
pub unsafe fn unwind_to(ts: &mut ThreadState, id: u32, sp: usize, now: u64) {
    let top = (ts.depth & !BUSY).min(ts.frame_cap() - 1);
    let found = (1..=top).rev().find(|&d| {
        // SAFETY: `top` is below frame_cap, so every frame up to it is on the mapped stack.
        let f = unsafe { &*ts.frame(d) };
        f.id == id && f.sp >= sp
    });
    let Some(target) = found else { return };
    ts.depth = top;
    for depth in (target + 1..=top).rev() {
        // SAFETY: `depth` is the top frame at each step.
        unsafe { close_top(ts, depth, now, STANDARD) };
        ts.counters.reconciled += 1;
    }
}

/// Closes every open frame at `now` (process or thread exit with routines still active).
///
/// # Safety
/// `ts` is an attached thread's state that no probe is using (its thread exits, or the
/// process writes its profile).
pub unsafe fn close_all(ts: &mut ThreadState, now: u64) {
    // A fatal signal may have interrupted a probe: the frames below its mark are whole.
    ts.depth &= !BUSY;
    if ts.depth >= ts.frame_cap() {
        ts.depth = ts.frame_cap() - 1;
    }
    while ts.depth > 0 {
        // SAFETY: the top frame, below frame_cap (clamped above).
        unsafe { close_top(ts, ts.depth, now, STANDARD) };
        ts.counters.closed_at_exit += 1;
    }
}
