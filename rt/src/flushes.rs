//! What a flush of a bare window's calls costs, charged as the overhead it is.
//!
//! A callpath leaf's bare windows (inplace) measure its counted probe call against its bare
//! count: the bare calls count themselves down in the program's code and leave their caller's
//! share pending, which the next probe that changes the stack charges (inline.rs's `flush`: the
//! calls credited to the event's record, their node credit deferred, the caller's frame charged).
//! Where a caller returns after each call (the ground truth's nested context, Lua's
//! `lua_settop`, 59 % of its calls), every bare call takes a flush of its own inside the window.
//! The counted windows they are measured against used to have none, and the flushes were taken
//! out of the bare windows at this calibration: in place a flush cost two to three times that
//! (about 42 ns against 16 to 27 calibrated on Lua), and the leaves' counted calls came out 4 to
//! 7 ns low (issue 23's forty-first note). The counted windows paired with bare ones are shadow
//! windows now (inline.rs's `open_shadow`), which leave the same calls pending and flush at the
//! same probes, so the flushes' cost cancels in the difference whatever it is in place.
//!
//! What a flush costs is still the program's time spent in the runtime: each flush that
//! credited bare calls, or took a shadow window's back, is charged as overhead to the frame it
//! runs in, at this calibration (with callpaths no inline count runs, so only those windows
//! flush, and no window measures those flushes as a cost of their own).
//!
//! The inline counts' flushes (flat profiles) are left alone: they run at the probes of timed
//! events, whose windows measure them in place (a timed window's entries and exits flush, a
//! counted window's entries do not), so charging them too would count them twice; a double
//! window flushes as often as the detour one it is measured against.
//!
//! The calibration (`calibrate`) runs the flush one pending bare call leaves, on the hidden
//! child in a bare window of its own above the hidden parent's frame, and puts back every word
//! it touched.

use crate::current::{pending_calls, set_pending_calls, set_window_left, window_left};
use crate::probes::BUSY;
use crate::tally::Pending;
use crate::thread::ThreadState;

/// How a measured flush runs: the paths' own (`flush_path::as_the_paths`), or the same work on a
/// state that is not the thread's (unit tests).
pub type Flush = unsafe fn(*mut ThreadState);

/// What one flush of a pending bare call costs, as `measure` times the body it is handed (a
/// flush each call, run by `flush`; the empty loop's cost not taken out).
///
/// # Safety
/// `ts` is the calling thread's state, inside the hidden parent's activation (its frame on top,
/// below frame_cap, not busy), with nothing pending; `child` is the hidden child's id, below
/// record_cap and inside the mode table; `flush` flushes `ts`.
pub unsafe fn calibrate(
    ts: &mut ThreadState,
    child: u32,
    flush: Flush,
    measure: impl FnOnce(&mut dyn FnMut()) -> u64,
) -> u64 {
    let top = ts.depth & !BUSY;
    // SAFETY: top < frame_cap (the contract).
    let frame = unsafe { *ts.frame(top) };
    if frame.id >= ts.record_cap() || pending_calls() != 0 {
        return 0;
    }
    // SAFETY: both ids below record_cap (checked, the contract); copies, no reference kept.
    let (caller, own) = unsafe { (*ts.record(frame.id), *ts.record(child)) };
    let saved = Saved::of(ts);
    (ts.bare_event, ts.bare_from, ts.bare_mask, ts.bare_at_end) = (child, u32::MAX, u64::MAX, false);
    set_window_left(u32::MAX);
    // The flush marks the stack busy while it runs, as in the paths; a signal handler's probes
    // between two flushes may take a call pending, and what they change of the frame and the
    // records is put back below.
    let state: *mut ThreadState = ts;
    let cost = measure(&mut || {
        // The bare count's two words (inline.rs's `replica_bare`), then the flush.
        set_window_left(window_left().wrapping_sub(1));
        set_pending_calls(pending_calls() + 1);
        // SAFETY: this thread's state (the contract), no reference to it held meanwhile.
        unsafe { flush(state) };
    });
    // SAFETY: as above: the frame and the records the flushes changed, put back.
    unsafe {
        *ts.frame(top) = frame;
        *ts.record(frame.id) = caller;
        *ts.record(child) = own;
    }
    saved.restore(ts);
    cost
}

/// The thread's words a flush changes besides the frame and the records.
struct Saved {
    depth: usize,
    bare_event: u32,
    window_left: u32,
    bare_from: u32,
    bare_pending: Pending,
    bare_mask: u64,
    bare_at_end: bool,
    pending_estimate: u64,
    inlined: u64,
}

impl Saved {
    fn of(ts: &mut ThreadState) -> Saved {
        Saved {
            depth: ts.depth,
            bare_event: ts.bare_event,
            window_left: window_left(),
            bare_from: ts.bare_from,
            bare_pending: ts.bare_pending.take(),
            bare_mask: ts.bare_mask,
            bare_at_end: ts.bare_at_end,
            pending_estimate: ts.pending_estimate,
            inlined: ts.counters.inlined,
        }
    }

    /// Puts them back; the node credit the measurement's calls wait for is dropped.
    fn restore(self, ts: &mut ThreadState) {
        (ts.bare_event, ts.bare_from) = (self.bare_event, self.bare_from);
        set_window_left(self.window_left);
        (ts.bare_pending, ts.bare_mask, ts.bare_at_end) =
            (self.bare_pending, self.bare_mask, self.bare_at_end);
        (ts.pending_estimate, ts.counters.inlined) = (self.pending_estimate, self.inlined);
        set_pending_calls(0);
        crate::probes::commit(ts, self.depth);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths' flush on a state that is not the thread's.
    unsafe fn flush_here(ts: *mut ThreadState) {
        // SAFETY: the test's state, no reference to it held across the call.
        crate::flush_path::flush_on(unsafe { &mut *ts }, false);
    }

    #[test]
    fn the_calibration_flushes_one_bare_call_at_a_time_and_puts_back_what_it_touched() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[1].id = 2;
        frames[1].overhead = 7;
        records[3].counted = 11;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        (ts.bare_event, ts.bare_from, ts.bare_mask) = (5, 9, 0);
        set_window_left(9);
        let mut seen = vec![];
        // SAFETY: a state over this test's frames and records, its frame 1 on top, nothing
        // pending, the child's id below their count and the mode table's length.
        let cost = unsafe {
            calibrate(&mut ts, 3, flush_here, |one| {
                for _ in 0..3 {
                    one();
                }
                seen.push(42);
                42
            })
        };
        assert_eq!((cost, seen), (42, vec![42]));
        assert_eq!((ts.bare_event, window_left(), ts.bare_from, ts.bare_mask), (5, 9, 9, 0));
        assert_eq!((pending_calls(), ts.counters.inlined), (0, 0));
        assert_eq!((frames[1].overhead, frames[1].child_calls), (7, 0), "the frame as it was");
        assert_eq!(records[3].counted, 11, "the child's record as it was");
    }
}
