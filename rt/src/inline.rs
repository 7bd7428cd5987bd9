//! The runtime's side of the inline count (`instrument_contract::inline_count`): a throttled
//! routine whose mode is `INLINE` is counted by its own entry code, which adds to the event's
//! record (`counted`, `untimed_own`) as the counted path does, but cannot reach the frame on
//! top. It leaves the caller's share in the thread state instead (`pending_calls`,
//! `pending_estimate`): every such call since the frame on top last changed had that frame as
//! its caller, so the first probe that changes the stack charges them to it here (`charge_pending`,
//! from `probes::mark_busy`; the timed paths in assembly leave to the bodies while any are
//! pending), as the counted path would have one by one: counted child calls of the frame, the
//! estimates to its event's `untimed_children`, and with compensation on what the inline counts
//! cost (`compensate::inline_count_cost`) to the frame's overhead.
//!
//! `replica` is the same sequence in assembly, for the start-up measurement of what an inline
//! count costs (overhead.rs), which the profile's overhead takes for every inline count
//! instead of a counted probe call's cost.

use crate::thread::{ThreadState, SENTINEL_ID};
use instrument_live::COUNTED_CHILD;

/// Charges the calls counted inline since the frame on top last changed, if any, to frame
/// `top` (the top of the stack, marked busy): every probe body before it changes the stack
/// (`probes::mark_busy`), and the thread's end for what was counted with no frame left above
/// the sentinel.
#[inline(always)]
pub fn charge_pending(ts: &mut ThreadState, top: usize) {
    if ts.pending_calls != 0 {
        flush(ts, top);
    }
}

/// `charge_pending`'s work, with what each inline count costs its caller when compensation is on.
#[cold]
#[inline(never)]
fn flush(ts: &mut ThreadState, top: usize) {
    let cost = if crate::compensate::enabled() { crate::compensate::inline_count_cost() } else { 0 };
    charge(ts, top, cost);
}

/// Charges the pending inline counts to frame `top`, `cost` (scaled) each to its overhead:
/// nothing to a frame past the stored ones (an overflowed stack) or to the sentinel's absent
/// record; the thread's total of inline counts in any case.
fn charge(ts: &mut ThreadState, top: usize, cost: u64) {
    let (calls, estimate) = (ts.pending_calls, ts.pending_estimate);
    (ts.pending_calls, ts.pending_estimate) = (0, 0);
    ts.counters.inlined += calls;
    if top >= ts.frame_cap() {
        return;
    }
    // SAFETY: top < frame_cap, checked; this thread's state (the caller's contract).
    let frame = unsafe { ts.frame(top) };
    frame.child_calls = frame.child_calls.wrapping_add(calls.wrapping_mul(COUNTED_CHILD));
    // What the counted path would have charged the frame one call at a time.
    frame.overhead = frame.overhead.wrapping_add(calls.wrapping_mul(cost));
    let caller = frame.id;
    if caller != SENTINEL_ID && caller < ts.record_cap() && estimate != 0 {
        // SAFETY: caller < record_cap, checked; the frame's reference has ended.
        unsafe { ts.record(caller).untimed_children += estimate };
    }
}

/// One inline count of event `id` on `ts` (scratch `rax`, `rcx`, `rdx`), the instructions the
/// pass emits on the path that counts: for the start-up measurement only.
///
/// # Safety
/// `ts` is the calling thread's state, with `id` below its record_cap and the mode table's
/// length, and the stack marked busy (nothing else touches the record meanwhile).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn replica(ts: *mut ThreadState, id_slot: *const u32) {
    use instrument_contract::inline_count as abi;
    // SAFETY: reads the id slot, the mode and estimate tables at `id` (inside them: the
    // contract), and adds to the record at `id` and to the state's pending words, all this
    // thread's (the contract).
    unsafe {
        core::arch::asm!(
            "mov eax, dword ptr [{slot}]",
            "cmp rax, {len}",
            "jae 2f",
            "lea rcx, [rip + {modes}]",
            "cmp byte ptr [rcx + rax], {inline}",
            "jne 2f",
            "cmp eax, dword ptr [{ts} + {cap}]",
            "jae 2f",
            "mov rcx, rax",
            "shl rcx, {shift}",
            "add rcx, qword ptr [{ts} + {records}]",
            "mov rdx, qword ptr [rcx + {counted}]",
            "cmp rdx, qword ptr [{ts} + {end}]",
            "je 2f",
            "add rdx, 1",
            "mov qword ptr [rcx + {counted}], rdx",
            "lea rdx, [rip + {per_call}]",
            "mov rdx, qword ptr [rdx + 8 * rax]",
            "add qword ptr [rcx + {own}], rdx",
            "add qword ptr [{ts} + {pending}], 1",
            "add qword ptr [{ts} + {estimate}], rdx",
            "2:",
            slot = in(reg) id_slot,
            ts = in(reg) ts,
            cap = const abi::RECORD_CAP_AT,
            len = const abi::TABLE_LEN,
            modes = sym crate::switch::MODES,
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
            options(nostack),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_inline_counts_are_charged_to_the_frame_on_top_with_their_cost() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[2].id = 3;
        frames[2].overhead = 100;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 2;
        (ts.pending_calls, ts.pending_estimate) = (4, 40);
        charge_pending(&mut ts, 2);
        (ts.pending_calls, ts.pending_estimate) = (3, 30);
        charge(&mut ts, 2, 7);
        assert_eq!((ts.pending_calls, ts.pending_estimate, ts.counters.inlined), (0, 0, 7));
        assert_eq!(frames[2].child_calls, 7 * COUNTED_CHILD);
        assert_eq!(frames[2].overhead, 100 + 3 * 7, "compensation off: nothing; on: 7 a count");
        assert_eq!(records[3].untimed_children, 70);
    }
}
