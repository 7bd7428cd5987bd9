//! The exits where the shadow stack and the machine stack disagree. A longjmp or an unwinding
//! exception skips the exit probes of the frames it crosses; the next exit probe that runs then
//! finds its own frame below the top (`exit_mismatch`), or a landing pad's probe reports where
//! the unwinder stopped (`unwind`). Frames are matched by routine id and by the stack pointer
//! recorded at entry: every shadow frame above the match belongs to a machine frame that no
//! longer exists, and is closed at the current time with the normal exit's `close_top`
//! (`probes.rs`). `close_all` closes what is still open when a thread or the process ends.

use crate::clock;
use crate::overhead::STANDARD;
use crate::probes::{close_top, BUSY};
use crate::registry::{load_id, UNREGISTERED};
use crate::tally::TRAP;
use crate::thread::{self, ThreadState};

/// A landing of the event in `id_slot` (its routine, or the loop that holds the landing; null
/// for a routine without events) was reached by an exception, a panic or a longjmp: the frames
/// above that event's frame belong to machine frames the unwinder or the jump removed, or to
/// the call statement that threw, and are closed now.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn unwind(id_slot: *const u32, sp: usize) {
    let now = clock::now();
    let state = thread::current();
    if !state.is_null() {
        // SAFETY: the probe contract: the slot is null or a table's.
        let id = if id_slot.is_null() { UNREGISTERED } else { unsafe { load_id(id_slot) } };
        // SAFETY: the state is this thread's.
        unsafe { unwind_to(&mut *state, id, sp, now) };
    }
    clock::fence();
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

/// A landing of event `id` ran with stack pointer `sp`: closes every frame entered deeper in the
/// machine stack (its entry stack pointer below `sp`; frames that overflowed the shadow stack go
/// too) and, of the frames of the landing's own machine frame (at `sp`), those above the
/// innermost of `id`: the loops and call statements the jump or the unwinding left. Where that
/// frame has no frame of `id` (the event is counted, or `id` is `UNREGISTERED`), its frames
/// stay. Frames of shallower machine frames always stay: with a recursive routine counted, a
/// frame of its own id further down belongs to an activation still running.
///
/// # Safety
/// `ts` is the calling thread's attached state.
#[cold]
#[inline(never)]
pub unsafe fn unwind_to(ts: &mut ThreadState, id: u32, sp: usize, now: u64) {
    // SAFETY: this thread's attached state, in its unwinding probe (the stack not busy).
    unsafe { crate::tally::interrupted(ts) };
    let top = (ts.depth & !BUSY).min(ts.frame_cap() - 1);
    // SAFETY: `top` is below frame_cap, so every frame up to it is on the mapped stack.
    let frame = |d: usize| unsafe { (ts.frame(d).id, ts.frame(d).sp & !TRAP) };
    let mut target = top;
    while target > 0 && frame(target).1 < sp {
        target -= 1;
    }
    let mut same = (1..=target).rev().take_while(|&d| frame(d).1 == sp);
    if let Some(own) = same.find(|&d| frame(d).0 == id) {
        target = own;
    }
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
    // Calls counted inline with no instrumented caller open (at exit, after main returned).
    crate::inline::charge_pending(ts, 0);
}
