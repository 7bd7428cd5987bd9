//! The runtime's side of the inline count (`instrument_contract::inline_count`): a throttled
//! routine whose mode is `INLINE` is counted by its own entry code, which adds to the event's
//! record (`counted`, `untimed_own`) as the counted path does, but cannot reach the frame on
//! top. It leaves the caller's share in the thread-local block and the thread state instead
//! (`current::pending_calls`, `ThreadState::pending_estimate`): every such call since the frame on top last changed had that frame as
//! its caller, so the first probe that changes the stack charges them to it here (`charge_pending`,
//! from `probes::mark_busy`; the timed and pathed paths in assembly call the same through
//! flush_path.rs and go on), as the counted path would have one by one: counted child calls of
//! the frame, the estimates to its event's `untimed_children`, and with compensation on what
//! the inline counts cost (`compensate::inline_count_cost`) to the frame's overhead.
//!
//! `replica` is the same sequence in assembly, for the start-up measurement of what an inline
//! count costs (overhead.rs), which the profile's overhead takes for every inline count
//! instead of a counted probe call's cost; `replica_bare` the bare count's (the mode tests
//! before it included), which a callpath leaf's bare windows (inplace) leave to calibration.
//!
//! The bare count (`instrument_contract::inline_count`) leaves its calls in `pending_calls` and
//! counts `window_left` down (both the block's); `credit_bare` gives them to the bare window's
//! event (its record's count and estimate, as the inline count would have, and with callpaths
//! its node's, the step from the caller's: a callpath leaf's bare windows run where no inline
//! count does) before they are charged, or, a flat routine's (measured against its inline
//! count), at the window's end (`end_bare`).

use crate::current::{pending_calls, set_pending_calls, set_window_left, window_left};
use crate::thread::{ThreadState, SENTINEL_ID};
use instrument_live::COUNTED_CHILD;

/// Charges the calls counted inline since the frame on top last changed, if any, to frame
/// `top` (the top of the stack, marked busy): every probe body before it changes the stack
/// (`probes::mark_busy`), and the thread's end for what was counted with no frame left above
/// the sentinel.
#[inline(always)]
pub fn charge_pending(ts: &mut ThreadState, top: usize) {
    if pending_calls() != 0 {
        flush(ts, top, top);
    }
}

/// `charge_pending` at the exit of frame `top`, after its timestamp: the flush itself runs in
/// the time of the frame below, which its cost goes to (`flushes.rs`).
#[inline(always)]
pub fn charge_pending_leaving(ts: &mut ThreadState, top: usize) {
    if pending_calls() != 0 {
        flush(ts, top, top.saturating_sub(1));
    }
}

/// `charge_pending`'s work, with what each inline (or bare) count costs its caller when
/// compensation is on, and with callpaths what a flush that credited a bare window's calls
/// costs, to frame `runs_in` (flushes.rs: no inline count runs there, so no other window
/// measured it; the inline counts' flushes are left in the windows of the events at whose
/// probes they run).
#[cold]
#[inline(never)]
fn flush(ts: &mut ThreadState, top: usize, runs_in: usize) {
    // A callpath leaf's bare window's calls are credited at every flush, to the node of the
    // frame on top; a flat one's only at the window's end (`bare_at_end`).
    let (counted_down, bare) = if ts.bare_at_end { (0, 0) } else { credit_bare(ts) };
    let compensated = crate::compensate::enabled();
    let cost = if compensated {
        let inline = pending_calls().saturating_sub(bare);
        inline * crate::compensate::inline_count_cost() + bare * crate::compensate::bare_count_cost()
    } else {
        0
    };
    charge(ts, top, cost);
    if counted_down != 0 && compensated && crate::callpath::depth() != 0 && runs_in < ts.frame_cap() {
        // SAFETY: runs_in < frame_cap, checked; this thread's state (the callers' contract).
        let frame = unsafe { ts.frame(runs_in) };
        frame.overhead = frame.overhead.wrapping_add(crate::compensate::flush_cost());
    }
}

/// Credits the calls the instrumented code's bare count (`instrument_contract::inline_count`)
/// counted down on this thread since the last credit to the event of its bare window, as its
/// inline count would have counted them: the record's count and untimed estimate, and the
/// estimate to the pending ones (the caller's share; flat, where the calls are credited at the
/// window's end only, to the caller's record at once). In a shadow window (`open_shadow`) the
/// calls counted down were counted by their counted path already: the same work is done with
/// none of them credited, and they leave the pending ones. Returns how many calls were counted
/// down and how many of them were credited (among the pending calls).
pub fn credit_bare(ts: &mut ThreadState) -> (u64, u64) {
    let left = window_left();
    let counted_down = u64::from(ts.bare_from.wrapping_sub(left));
    ts.bare_from = left;
    let id = ts.bare_event;
    if counted_down == 0 || id >= ts.record_cap() || id >= crate::switch::TABLE_LEN {
        return (0, 0);
    }
    let calls = counted_down & ts.bare_mask;
    set_pending_calls(pending_calls().saturating_sub(counted_down - calls));
    // SAFETY: id < TABLE_LEN, checked.
    let estimate = unsafe { crate::untimed::per_call_in_table(id) }.wrapping_mul(calls);
    // SAFETY: id < record_cap, checked; this thread's state (the callers' contract).
    let record = unsafe { ts.record(id) };
    record.counted += calls;
    record.untimed_own = record.untimed_own.wrapping_add(estimate);
    if ts.bare_at_end {
        // Their calls were charged to their caller already; its record gets their estimate.
        charge_estimate(ts, ts.depth & !crate::probes::BUSY, estimate);
        return (counted_down, calls);
    }
    ts.pending_estimate = ts.pending_estimate.wrapping_add(estimate);
    pend_on_node(ts, id, calls, estimate);
    (counted_down, calls)
}

/// The last call of a bare window at the entry probe (its count down ended), with the frame on
/// top `top`: its calls credited (flat: here, `flush`), then the pending ones charged.
pub fn end_bare(ts: &mut ThreadState, top: usize) {
    if ts.bare_at_end {
        let (_, calls) = credit_bare(ts);
        crate::inplace::bare_credited(calls);
    }
    charge_pending(ts, top);
}

/// With callpaths, `calls` bare calls of `id` (their untimed `estimate` in all), whose caller is
/// the frame on top, wait for their node's credit (`tally::Pending`): one step from the
/// caller's node for every run of credits under the same node, at the window's end
/// (`close_bare`) or when another node's turn comes, not one at every credit.
fn pend_on_node(ts: &mut ThreadState, id: u32, calls: u64, estimate: u64) {
    let top = ts.depth & !crate::probes::BUSY;
    // SAFETY: the tree, when there is one, is this thread's.
    if top >= ts.frame_cap() || unsafe { ts.tree() }.is_none() {
        return;
    }
    // SAFETY: top < frame_cap, checked.
    let node = unsafe { ts.frame(top) }.node;
    let earlier = ts.bare_pending.add(node, calls, estimate);
    // SAFETY: this thread's state; `id` (below record_cap and TABLE_LEN: `credit_bare` checked)
    // is the bare window's event, whose calls waited; the node was a frame's.
    unsafe { earlier.settle(ts, id) };
}

/// Credits the bare calls waiting for their node (`pend_on_node`) of event `id` to it.
fn settle_bare(ts: &mut ThreadState, id: u32) {
    let pending = ts.bare_pending.take();
    if id < ts.record_cap() && id < crate::switch::TABLE_LEN {
        // SAFETY: this thread's state; id below record_cap and TABLE_LEN, checked; the node was
        // a frame's, one the thread's tree made.
        unsafe { pending.settle(ts, id) };
    }
}

/// Starts a bare window of event `id` on `ts` (inplace): its bare count counts down `calls`.
/// `at_end`: its calls are credited at its end only (flat, `ThreadState::bare_at_end`), else at
/// every flush (a callpath leaf's, whose calls go to the node of the frame on top).
pub fn open_bare(ts: &mut ThreadState, id: u32, calls: u32, at_end: bool) {
    close_bare(ts);
    (ts.bare_event, ts.bare_from, ts.bare_mask, ts.bare_at_end) = (id, calls, u64::MAX, at_end);
    set_window_left(calls);
}

/// Starts a shadow window of event `id` on `ts` (inplace's `Window::Shadow`): its counted path
/// counts `calls` of its calls down and leaves them pending as the bare count does, and their
/// flushes credit nothing (`credit_bare`). A bare window's calls leave their caller's share to the
/// next probe that changes the stack, whose flush of them costs two to three times its
/// calibration in place (flushes.rs); counted windows that flush alike cancel it, whatever it
/// costs, where taking it out at its calibration left a callpath leaf's counted call measured 4
/// to 7 ns low over its bare count (issue 23's forty-first note).
pub fn open_shadow(ts: &mut ThreadState, id: u32, calls: u32) {
    close_bare(ts);
    (ts.bare_event, ts.bare_from, ts.bare_mask) = (id, calls, 0);
    set_window_left(calls);
}

/// Ends the bare window `ts` runs, if any, its counted calls credited (to be charged with the
/// pending ones).
pub fn close_bare(ts: &mut ThreadState) {
    credit_bare(ts);
    settle_bare(ts, ts.bare_event);
    (ts.bare_from, ts.bare_at_end) = (0, false);
    set_window_left(0);
}

/// Charges the pending inline counts to frame `top`, with `cost` (scaled, their cost in all) to
/// its overhead: nothing to a frame past the stored ones (an overflowed stack) or to the
/// sentinel's absent record; the thread's total of inline counts in any case.
fn charge(ts: &mut ThreadState, top: usize, cost: u64) {
    let (calls, estimate) = (pending_calls(), ts.pending_estimate);
    set_pending_calls(0);
    ts.pending_estimate = 0;
    ts.counters.inlined += calls;
    if top >= ts.frame_cap() {
        return;
    }
    // SAFETY: top < frame_cap, checked; this thread's state (the caller's contract).
    let frame = unsafe { ts.frame(top) };
    frame.child_calls = frame.child_calls.wrapping_add(calls.wrapping_mul(COUNTED_CHILD));
    // What the counted path would have charged the frame one call at a time.
    frame.overhead = frame.overhead.wrapping_add(cost);
    charge_estimate(ts, top, estimate);
}

/// Adds `estimate` (scaled) to the untimed children of frame `top`'s event: nothing to a frame
/// past the stored ones or to the sentinel's absent record.
fn charge_estimate(ts: &mut ThreadState, top: usize, estimate: u64) {
    if top >= ts.frame_cap() || estimate == 0 {
        return;
    }
    // SAFETY: top < frame_cap, checked; this thread's state (the callers' contract).
    let caller = unsafe { ts.frame(top) }.id;
    if caller != SENTINEL_ID && caller < ts.record_cap() {
        // SAFETY: caller < record_cap, checked.
        unsafe { ts.record(caller).untimed_children += estimate };
    }
}

/// One inline count of the event in `id_slot` on the calling thread (scratch `rax`, `rcx`,
/// `rdx`, `r8`), the instructions the pass emits on the path that counts, the block's words
/// read through `%fs` as the code reads them (the offset known at link time where the code
/// loads it from the GOT): for the start-up measurement only.
///
/// # Safety
/// The calling thread has a state, with the event's id below its record capacity and the mode
/// table's length, and the stack marked busy (nothing else touches the record meanwhile).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn replica(id_slot: *const u32) {
    use instrument_contract::inline_count as abi;
    // SAFETY: reads the id slot, the calling thread's block, the mode and estimate tables at `id`
    // (inside them: the capacity test), and adds to the record at `id` and to the state's
    // pending words, all this thread's (the contract).
    unsafe {
        core::arch::asm!(
            "mov eax, dword ptr [{slot}]",
            "cmp eax, dword ptr fs:[instrument_rt_current@TPOFF + {cap}]",
            "jae 2f",
            "lea rcx, [rip + {modes}]",
            "movzx ecx, byte ptr [rcx + rax]",
            "cmp ecx, {off}",
            "je 2f",
            "cmp ecx, {inline}",
            "jne 2f",
            "mov r8, qword ptr fs:[instrument_rt_current@TPOFF]",
            "mov rcx, rax",
            "shl rcx, {shift}",
            "add rcx, qword ptr [r8 + {records}]",
            "mov rdx, qword ptr [rcx + {counted}]",
            "cmp rdx, qword ptr [r8 + {end}]",
            "je 2f",
            "add rdx, 1",
            "mov qword ptr [rcx + {counted}], rdx",
            "lea rdx, [rip + {per_call}]",
            "mov rdx, qword ptr [rdx + 8 * rax]",
            "add qword ptr [rcx + {own}], rdx",
            "add qword ptr fs:[instrument_rt_current@TPOFF + {pending}], 1",
            "add qword ptr [r8 + {estimate}], rdx",
            "2:",
            slot = in(reg) id_slot,
            cap = const abi::THREAD_CAP_AT,
            modes = sym crate::switch::MODES,
            off = const abi::OFF,
            inline = const abi::MODE,
            shift = const abi::RECORD_SHIFT,
            records = const abi::RECORDS_AT,
            per_call = sym crate::untimed::PER_CALL,
            counted = const abi::COUNTED_AT,
            end = const abi::INLINE_END_AT,
            own = const abi::UNTIMED_OWN_AT,
            pending = const abi::PENDING_CALLS_AT,
            estimate = const abi::PENDING_ESTIMATE_AT,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            out("r8") _,
            options(nostack),
        )
    };
}

/// One bare count of the event in `id_slot` on the calling thread (scratch `rax`, `rcx`), the
/// instructions the pass emits on the path that counts barely, read as in `replica`: for the
/// start-up measurement only.
///
/// # Safety
/// The calling thread has a state.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn replica_bare(id_slot: *const u32) {
    use instrument_contract::inline_count as abi;
    // SAFETY: reads the id slot, the calling thread's block and the mode table at `id` (inside
    // it: the capacity test), and changes two words of this thread's block (the contract).
    unsafe {
        core::arch::asm!(
            "mov eax, dword ptr [{slot}]",
            "cmp eax, dword ptr fs:[instrument_rt_current@TPOFF + {cap}]",
            "jae 2f",
            "lea rcx, [rip + {modes}]",
            "movzx ecx, byte ptr [rcx + rax]",
            "cmp ecx, {off}",
            "je 2f",
            "cmp ecx, {inline}",
            "je 2f",
            "cmp ecx, {bare}",
            "jne 2f",
            "mov eax, dword ptr fs:[instrument_rt_current@TPOFF + {left}]",
            "test eax, eax",
            "je 2f",
            "sub eax, 1",
            "mov dword ptr fs:[instrument_rt_current@TPOFF + {left}], eax",
            "add qword ptr fs:[instrument_rt_current@TPOFF + {pending}], 1",
            "2:",
            slot = in(reg) id_slot,
            cap = const abi::THREAD_CAP_AT,
            modes = sym crate::switch::MODES,
            inline = const abi::MODE,
            off = const abi::OFF,
            bare = const abi::BARE,
            left = const abi::WINDOW_LEFT_AT,
            pending = const abi::PENDING_CALLS_AT,
            out("rax") _,
            out("rcx") _,
            options(nostack),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state over `frames` and `records` with event 2's frame on top, at depth 1.
    fn under_caller(
        frames: &mut [crate::thread::Frame],
        records: &mut [crate::thread::Record],
    ) -> ThreadState {
        frames[1].id = 2;
        let mut ts = ThreadState::over(frames, records);
        ts.depth = 1;
        ts
    }

    /// What the instrumented code does: `down` calls counted down (bare ones), `pending` left
    /// pending in all.
    fn count_down(down: u32, pending: u64) {
        set_window_left(window_left() - down);
        set_pending_calls(pending_calls() + pending);
    }

    #[test]
    fn pending_inline_counts_are_charged_to_the_frame_on_top_with_their_cost() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[2].id = 3;
        frames[2].overhead = 100;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 2;
        ts.pending_estimate = 40;
        set_pending_calls(4);
        charge_pending(&mut ts, 2);
        ts.pending_estimate = 30;
        set_pending_calls(3);
        charge(&mut ts, 2, 21);
        assert_eq!((pending_calls(), ts.pending_estimate, ts.counters.inlined), (0, 0, 7));
        assert_eq!(frames[2].child_calls, 7 * COUNTED_CHILD);
        assert_eq!(frames[2].overhead, 100 + 21, "compensation off: nothing; on: their cost");
        assert_eq!(records[3].untimed_children, 70);
    }

    #[test]
    fn a_bare_windows_counts_are_credited_to_its_event_once() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        let mut ts = under_caller(&mut frames, &mut records);
        open_bare(&mut ts, 5, 10, false);
        // The instrumented code counts three calls down.
        count_down(3, 3);
        assert_eq!(credit_bare(&mut ts), (3, 3));
        assert_eq!(credit_bare(&mut ts), (0, 0), "credited once");
        count_down(2, 2);
        close_bare(&mut ts);
        assert_eq!((window_left(), ts.bare_from), (0, 0));
        charge_pending(&mut ts, 1);
        assert_eq!(pending_calls(), 0);
        assert_eq!(frames[1].child_calls, 5 * COUNTED_CHILD, "the caller's child calls");
        assert_eq!(records[5].counted, 5, "the event's count");
    }

    #[test]
    fn a_flat_bare_windows_counts_are_charged_as_they_flush_and_credited_at_its_end() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        let mut ts = under_caller(&mut frames, &mut records);
        open_bare(&mut ts, 5, 10, true);
        count_down(3, 3);
        charge_pending(&mut ts, 1);
        assert_eq!(pending_calls(), 0, "flushed");
        assert_eq!(frames[1].child_calls, 3 * COUNTED_CHILD, "the caller's child calls at once");
        assert_eq!((records[5].counted, ts.bare_from), (0, 10), "nothing credited yet");
        count_down(2, 2);
        // The window's end (`end_bare`'s credit, without moving the window's END).
        assert_eq!(credit_bare(&mut ts), (5, 5));
        charge_pending(&mut ts, 1);
        assert_eq!(records[5].counted, 5, "every call counted once");
        assert_eq!(frames[1].child_calls, 5 * COUNTED_CHILD, "and charged once");
        close_bare(&mut ts);
        assert_eq!((records[5].counted, ts.bare_at_end), (5, false), "nothing credited twice");
    }

    #[test]
    fn a_shadow_windows_counts_flush_as_a_bare_ones_and_credit_nothing() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        let mut ts = under_caller(&mut frames, &mut records);
        open_shadow(&mut ts, 5, 10);
        // The counted path counts three calls (itself) and counts them down; an inline count of
        // another event is pending too.
        records[5].counted = 3;
        count_down(3, 4);
        charge_pending(&mut ts, 1);
        assert_eq!(pending_calls(), 0);
        assert_eq!(frames[1].child_calls, COUNTED_CHILD, "only the inline count's");
        assert_eq!(records[5].counted, 3, "nothing credited twice");
        count_down(2, 2);
        close_bare(&mut ts);
        assert_eq!((pending_calls(), window_left()), (0, 0), "the window's end takes its calls back");
        open_bare(&mut ts, 5, 10, false);
        assert_eq!(ts.bare_mask, u64::MAX, "a bare window credits again");
    }
}
