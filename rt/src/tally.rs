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
//! switched-off pair's, scaled as the counted path's part measured over it moved from its own
//! (`tally_path`: nothing where counting hid in the event's shadow, several times the
//! calibration next to cache misses).
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
//!   `left` on the cold path, which adds what was tallied, mends the frame and lets the exit go
//!   on. Unwinding, reconciling and the thread's end reach `interrupted`, which does the same.
//!
//! The caller's exit does not end the window: its executions so far are credited to that frame
//! (`caller_left`), and the window waits for the event's next entry at the same depth, from
//! whatever frame is on top there then, which the tally path traps in turn (`REARM`); a caller
//! trapped so that made one call of the event voids it (`caller_left` says why). A window
//! voided at its caller's exit measured nothing where the caller returns within a window's
//! executions: a callpath parent calling its siblings a few times each (NPB BT's solve_line,
//! the ground truth's siblings context) kept every counted call of its children at the
//! calibration, which the node steps that miss make two to three times too low.
//!
//! A window ended otherwise (not at an entry of the event: unwinding, reconciling, the thread's
//! end) is void for the measurement, and an estimation whose tally windows keep being
//! interrupted stops opening them (inplace).

use crate::probes::{charge_untimed, commit, mark_busy, BUSY};
use crate::thread::ThreadState;
use instrument_live::COUNTED_CHILD;

/// `ThreadState::tally` of a thread that runs no tally window: far enough below zero that its
/// decrements in the trampoline (taken on every entry of an event in tally mode on any thread)
/// never bring it back above zero.
pub const IDLE: i64 = i64::MIN / 2;
/// Set in the stack pointer of the frame the tally window's executions are called from.
pub const TRAP: usize = 1;
/// Set in `ThreadState::tally_depth` while the window waits for the event's next entry at that
/// depth (its caller left): no depth word has it (depths stay below the frame cap, and the busy
/// bit is lower), so the tally path's depth test fails, and its re-arm branch traps the frame on
/// top, clears it and tallies.
pub const REARM: usize = 1 << 62;
const _: () = assert!(REARM as u64 > instrument_live::DEPTH_BUSY, "a waiting window's depth never matches");

/// Tallied executions credited to their caller's frame and records but not yet to their
/// callpath node: the step from the caller's node, which misses its cache where the caller
/// alternates children, is taken once for every caller activation with the same node, at the
/// window's end or when another node's turn comes. Each caller's exit credits its executions
/// inside the tally window, whose time would otherwise hold a lookup per caller (of about 7
/// executions each in NPB BT's solve_line) that no counted window has. A bare window's calls
/// wait so too (inline.rs).
#[derive(Clone, Copy)]
pub struct Pending {
    node: u32,
    calls: u64,
    estimate: u64,
}

impl Pending {
    pub const NONE: Pending = Pending { node: 0, calls: 0, estimate: 0 };

    /// Adds `calls` (their untimed `estimate` in all) whose caller's node is `node`, and returns
    /// what waited under another node (`NONE` if nothing did), to be settled first.
    pub fn add(&mut self, node: u32, calls: u64, estimate: u64) -> Pending {
        let earlier = if self.node != node { self.take() } else { Pending::NONE };
        (self.node, self.calls, self.estimate) =
            (node, self.calls + calls, self.estimate.wrapping_add(estimate));
        earlier
    }

    /// What waits, which waits no more.
    pub fn take(&mut self) -> Pending {
        std::mem::replace(self, Pending::NONE)
    }

    /// Counts the calls of event `id` that waited on their node (`probes::count_pending_on_node`,
    /// which marks the stack busy if it is not).
    ///
    /// # Safety
    /// `ts` is the calling thread's state, `id` below its record_cap and inside the mode table;
    /// the node is one the thread's tree made (a frame's).
    pub unsafe fn settle(self, ts: &mut ThreadState, id: u32) {
        if self.calls != 0 {
            // SAFETY: the contract.
            unsafe { crate::probes::count_pending_on_node(ts, self.node, id, self.calls, self.estimate) };
        }
    }
}

/// Opens a tally window of `executions` (the entry at hand being the first) on `ts`, its top
/// frame at `depth` the caller of every execution it may tally.
///
/// # Safety
/// `ts` is the calling thread's state, at a counted entry of the event under estimation with
/// the stack marked busy; `depth` is its top frame (below frame_cap).
pub unsafe fn open(ts: &mut ThreadState, depth: usize, executions: u64) {
    ts.tally = executions.saturating_sub(1).min(i64::MAX as u64) as i64;
    ts.tally_credited = ts.tally;
    ts.tally_rearmed = false;
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

/// Ends the tally window `ts` runs for event `id`: its tallied executions not yet credited are
/// counted as the counted path counts (`cost` each for compensation, scaled ticks), and its
/// caller's frame is mended. Returns how many executions the whole window tallied.
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy, running a tally window
/// (`open_on`) of event `id`, which is below its record_cap and inside the mode table.
pub unsafe fn close(ts: &mut ThreadState, id: u32, cost: u64, executions: u64) -> u64 {
    let (left, depth) = (ts.tally.max(1), ts.tally_depth);
    // The execution that brought `left` to zero took the counted path (the window's end).
    let tallied = executions.saturating_sub(1).saturating_sub(left as u64);
    let fresh = ts.tally_credited.saturating_sub(left) as u64;
    (ts.tally, ts.tally_depth) = (IDLE, usize::MAX);
    if depth & REARM == 0 {
        // SAFETY: the contract; the window's frame is still on the stack (leaving it reaches
        // `caller_left` first) below frame_cap.
        unsafe { credit(ts, id, depth, fresh, cost) };
    } else {
        debug_assert_eq!(fresh, 0, "a waiting tally window tallied nothing since its caller left");
    }
    // SAFETY: the contract.
    unsafe { settle(ts, id) };
    tallied
}

/// The executions of the tally window `ts` runs since it last credited any (`tally_credited`),
/// credited to its caller, frame `depth`, whose trap is taken off, as the counted path would have
/// counted them one by one: the event's count, the caller's counted children and untimed
/// estimate; their callpath node's share waits (`Pending`).
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy, `depth` the window's trapped
/// frame (below frame_cap, open), `id` below record_cap and inside the mode table.
unsafe fn credit(ts: &mut ThreadState, id: u32, depth: usize, tallied: u64, cost: u64) {
    ts.tally_credited = ts.tally;
    // SAFETY: the contract; records and frames are distinct memory, one reference at a time.
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
            let node = ts.frame(depth).node;
            ts.tally_pending.add(node, tallied, estimate * tallied).settle(ts, id);
        }
    }
}

/// Credits the pending executions (`Pending`) of event `id` to their callpath node.
///
/// # Safety
/// As `credit`'s.
unsafe fn settle(ts: &mut ThreadState, id: u32) {
    // SAFETY: the contract; the node was a frame's, one the thread's tree made.
    unsafe { ts.tally_pending.take().settle(ts, id) };
}

/// The exit of event `id` whose machine frame is at `sp` found the top frame's match failing.
/// When that frame is the tally window's trapped caller, the window's executions so far are
/// credited to it (`cost` each, as `close`), and the window waits for the event's next entry
/// at the same depth (`REARM`); returns how many were credited. Otherwise None: the caller
/// voids the window (`interrupted`), or has none to void.
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy, `id` below record_cap and
/// inside the mode table when it is the window's event.
pub unsafe fn caller_left(ts: &mut ThreadState, event: u32, id: u32, sp: usize, cost: u64) -> Option<u64> {
    let depth = ts.tally_depth;
    if !open_on(ts) || depth & REARM != 0 || depth == 0 || depth != ts.depth & !BUSY {
        return None;
    }
    // SAFETY: an open window's depth is below frame_cap (`open`'s contract).
    let frame = unsafe { ts.frame(depth) };
    if frame.id != id || frame.sp != sp | TRAP {
        return None;
    }
    let fresh = ts.tally_credited.saturating_sub(ts.tally.max(1)) as u64;
    if fresh < 2 && ts.tally_rearmed {
        // A caller that made one call of the event since the window re-armed on it (its first
        // call there): every tally execution would come with this exit's work, which the window
        // cannot tell from the execution's own cost (the ground truth's nested context, three
        // routines each calling the next once: the leaf's counted call measured at 0 to 7 ns,
        // and the estimations' trapped exits cost its run 14 ns an event). Void, as before
        // windows went on. The window's first caller is not judged: the window opened anywhere
        // among its calls (c-fixtures/nested_throttle.c, eight calls a caller, lost a tenth of
        // its windows and every estimate's tally pairs so).
        return None;
    }
    // SAFETY: the contract; the window's event is `event`, its frame `depth`.
    unsafe { credit(ts, event, depth, fresh, cost) };
    ts.tally_depth = depth | REARM;
    ts.tally_rearmed = true;
    Some(fresh)
}

/// The exit of event `id` whose machine frame is at `sp` found the top frame's match failing:
/// where that frame is the tally window's caller, the window goes on (`caller_left`, through
/// inplace, which moves the window's end on by what it credited), and the time this took is
/// kept out of the window (a normal exit does none of it, and where the caller returns after a
/// few executions it would weigh on each tally execution) and charged to the frame below, whose
/// time holds it; otherwise it is void (`interrupted`). True when either mended the
/// frame, so that the caller matches again.
///
/// # Safety
/// `ts` is the calling thread's attached state, in the exit probe, the stack not busy.
#[cold]
#[inline(never)]
pub unsafe fn left(ts: &mut ThreadState, id: u32, sp: usize) -> bool {
    if !open_on(ts) {
        return false;
    }
    // Three clock reads around the work, as misses.rs times a miss: the first two a lone read
    // apart, so that the work and all three reads come to `end + start - 2 * before`.
    let before = crate::clock::now();
    let start = crate::clock::now();
    let word = ts.depth;
    mark_busy(ts, word & !BUSY);
    // SAFETY: this thread runs a tally window, so it owns the estimation, with the stack marked
    // busy.
    let kept = unsafe { crate::inplace::tally_caller_left(ts, id, sp) };
    if kept {
        let ticks = (crate::clock::now() + start).saturating_sub(2 * before);
        // SAFETY: as above.
        unsafe { crate::inplace::tally_window_later(ts, ticks) };
    }
    commit(ts, word);
    // SAFETY: the contract.
    kept || unsafe { interrupted(ts) }
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

    #[test]
    fn a_tally_window_credits_its_caller_when_it_leaves_and_goes_on_from_the_next() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[1].id = 2;
        frames[1].sp = 0x1000;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        // SAFETY: depth 1 and events 2 and 5 are inside the slices `ts` is over.
        unsafe {
            open(&mut ts, 1, 10);
            ts.tally = 6; // three tallied
            assert_eq!(caller_left(&mut ts, 5, 3, 0x1000, 0), None, "another event's exit");
            assert_eq!(caller_left(&mut ts, 5, 2, 0x1000, 0), Some(3));
            assert_eq!((ts.tally_depth, ts.frame(1).sp), (1 | REARM, 0x1000), "waiting, the frame mended");
            assert_eq!((ts.record(5).counted, ts.frame(1).child_calls), (3, 3 * COUNTED_CHILD));
            // The next caller at depth 1, trapped by the tally path's re-arm, tallies four more.
            ts.frame(1).child_calls = 0;
            ts.frame(1).sp = 0x2000 | TRAP;
            ts.tally_depth = 1;
            ts.tally = 5;
            assert_eq!(caller_left(&mut ts, 5, 2, 0x2000, 0), None, "a re-armed caller of one call: void");
            ts.tally = 2;
            assert_eq!(close(&mut ts, 5, 0, 10), 7, "all but the first and the last");
            assert_eq!(
                (ts.record(5).counted, ts.frame(1).child_calls, ts.frame(1).sp),
                (7, 4 * COUNTED_CHILD, 0x2000)
            );
        }
    }
}
