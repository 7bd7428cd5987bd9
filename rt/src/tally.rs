//! Tally windows: what counting an event costs in place, measured.
//!
//! inplace measures what timing an event costs over counting it (timed against counted
//! windows). What counting itself costs there was a model, and the ground truth showed where it
//! fails: next to cache misses a counted call costs 47 ns in place against 2 ns calibrated, and
//! after a system call 16 ns. So the windows have a third kind: in a tally window the estimating
//! thread's executions of the event take a path of ten instructions in the entry trampoline
//! (the thread pointer, two depth words, one decrement) instead of the counted body, and the
//! counted minus the tally windows' time per execution is what counting costs over that path.
//! What is left unseen is the tally path itself, about a switched-off pair: a call and a few
//! loads, not the records' cache lines. inplace takes it from its calibration, the
//! switched-off pair's, scaled down as the counted path's part measured over it moved below its
//! own (`tally_path`: nothing where counting hid in the event's shadow, the calibration at
//! most).
//!
//! The tally path keeps the counts exact without touching a record: its executions are added at
//! the window's end to the event's count, to its caller's child calls and untimed estimate (and
//! with callpaths to their node), as the counted path would have added them one by one. That
//! needs every tallied execution to have had the same caller, the frame on top when the window
//! opened (at `tally_depth`):
//! - a call from deeper (a child of that frame calling the event) fails the trampoline's depth
//!   test and takes the counted path, which charges its own caller and ends the window there;
//! - the frame itself cannot be left without a probe seeing it: its exit would find a stack
//!   pointer with bit 0 set (a real one never has it), fail the top frame's match and reach
//!   `interrupted` on the cold path, which adds what was tallied, mends the frame and lets the
//!   exit go on. So do unwinding, reconciling and the thread's end.
//!
//! A window ended that way (not at an entry of the event) is void for the measurement, and an
//! estimation whose tally windows keep being interrupted stops opening them (inplace).

use crate::probes::{charge_untimed, commit, mark_busy, BUSY};
use crate::thread::ThreadState;
use instrument_live::COUNTED_CHILD;

/// `ThreadState::tally` of a thread that runs no tally window: far enough below zero that its
/// decrements in the trampoline (taken on every entry of an event in tally mode on any thread)
/// never bring it back above zero.
pub const IDLE: i64 = i64::MIN / 2;
/// Set in the stack pointer of the frame the tally window's executions are called from.
const TRAP: usize = 1;

/// Opens a tally window of `executions` (the entry at hand being the first) on `ts`, its top
/// frame at `depth` the caller of every execution it may tally.
///
/// # Safety
/// `ts` is the calling thread's state, at a counted entry of the event under estimation with
/// the stack marked busy; `depth` is its top frame (below frame_cap).
pub unsafe fn open(ts: &mut ThreadState, depth: usize, executions: u64) {
    ts.tally = executions.saturating_sub(1).min(i64::MAX as u64) as i64;
    ts.tally_depth = depth;
    if depth >= 1 {
        // SAFETY: depth < frame_cap (the contract).
        unsafe { ts.frame(depth).sp |= TRAP };
    }
}

/// Whether `ts` runs a tally window.
#[inline(always)]
pub fn open_on(ts: &ThreadState) -> bool {
    ts.tally_depth != usize::MAX
}

/// Ends the tally window `ts` runs for event `id`: its tallied executions are counted as the
/// counted path counts (`cost` each for compensation, scaled ticks), and its caller's frame is
/// mended. Returns how many there were.
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy, running a tally window
/// (`open_on`) of event `id`, which is below its record_cap and inside the mode table.
pub unsafe fn close(ts: &mut ThreadState, id: u32, cost: u64, executions: u64) -> u64 {
    let (left, depth) = (ts.tally, ts.tally_depth);
    (ts.tally, ts.tally_depth) = (IDLE, usize::MAX);
    // The execution that brought `left` to zero took the counted path (the window's end).
    let tallied = executions.saturating_sub(1).saturating_sub(left.max(1) as u64);
    // SAFETY: the tally window's frame is still on the stack (leaving it reaches `interrupted`
    // first) below frame_cap; records and frames are distinct memory, one reference at a time.
    unsafe {
        let caller = ts.frame(depth);
        if depth >= 1 {
            caller.sp &= !TRAP;
        }
        caller.child_calls += tallied * COUNTED_CHILD;
        caller.overhead += tallied * cost;
        let caller = caller.id;
        ts.record(id).counted += tallied;
        let estimate = crate::untimed::per_call_in_table(id);
        if estimate != 0 && tallied != 0 {
            charge_untimed(ts, id, caller, estimate * tallied, false);
        }
        if tallied != 0 {
            crate::probes::count_on_node(ts, depth, id, tallied, estimate * tallied);
        }
    }
    tallied
}

/// A probe on `ts` found its top frame's match failing, or is about to change frames without
/// one (unwinding, reconciling, the thread's end): if `ts` runs a tally window, it is ended
/// (inplace counts its executions and voids it) and the trapped frame is mended. True when
/// it did, so that the caller matches again.
///
/// Also where the estimation ends elsewhere than at a boundary (given up, or its thread
/// retiring): the window's executions are counted before it is released.
///
/// # Safety
/// `ts` is the calling thread's attached state, inside a probe (the stack marked busy or not) or
/// retiring.
#[cold]
#[inline(never)]
pub unsafe fn interrupted(ts: &mut ThreadState) -> bool {
    if !open_on(ts) {
        return false;
    }
    let word = ts.depth;
    mark_busy(ts, word & !BUSY);
    // SAFETY: this thread runs a tally window, so it owns the estimation (only the owner opens
    // one), with the stack marked busy.
    unsafe { crate::inplace::tally_interrupted(ts) };
    commit(ts, word);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::{Frame, Record};

    /// A thread with frame 1 (event 2, its machine frame at 0x1000) on top, and event 5 tallied
    /// from it in a window of 10 executions, 3 of them left when `left` is 3.
    fn closed_with(left: i64) -> (u64, Vec<Frame>, Vec<Record>) {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[1].id = 2;
        frames[1].sp = 0x1000;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        // SAFETY: depth 1 and event 5 are inside the slices `ts` is over.
        let tallied = unsafe {
            open(&mut ts, 1, 10);
            assert_eq!((ts.tally, ts.tally_depth, ts.frame(1).sp), (9, 1, 0x1001), "the frame is trapped");
            ts.tally = left;
            close(&mut ts, 5, 0, 10)
        };
        assert_eq!((ts.tally, ts.tally_depth), (IDLE, usize::MAX));
        (tallied, frames, records)
    }

    #[test]
    fn a_tally_window_counts_its_executions_as_the_counted_path_would() {
        // All 10: the first and the last took the counted path, 8 were tallied.
        let (tallied, frames, records) = closed_with(0);
        assert_eq!(tallied, 8);
        assert_eq!(records[5].counted, 8);
        assert_eq!(frames[1].child_calls, 8 * COUNTED_CHILD);
        assert_eq!(frames[1].sp, 0x1000, "the frame is mended");
        // Ended early by another probe with 3 left: executions 2 to 7 were tallied.
        assert_eq!(closed_with(3).0, 6);
    }
}
