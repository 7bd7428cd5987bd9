//! The flush of calls counted inline (or bare) on the way through the probes in assembly.
//!
//! Calls a throttled routine counted by its own entry code wait in the thread state
//! (`ThreadState::pending_calls`) until a probe changes the stack, which charges them to the
//! frame on top first (inline.rs's `charge_pending`). The timed and pathed paths in assembly
//! used to leave such a probe to the Rust bodies, so a flush cost the whole body path besides
//! the flush itself. That was a bias, not only a cost: a callpath leaf's bare windows (inplace)
//! measure its counted call against a bare count, and every flush inside them is taken out at
//! its calibrated cost (flushes.rs), but the body path the flushing probe took instead of its
//! assembly was not. Where a leaf alternates with probed siblings or callers (SQLite's record
//! compare in its B-tree descents, whose bare windows flushed after 84 of their 86 calls), a
//! probe in the body followed nearly every bare call: that compare's counted call measured 0 to
//! 2 ns over a bare count in 8 of 8 processes, where perf put the counted path at about 14 ns a
//! call, and SQLite's compensated callpath run charged its leaves 0.3 to 0.5 s (3 to 5 ns a
//! probed call) less than their probes' own time. With the paths flushing, 6 to 18 ns, and the
//! run's error 2.4 ±2.8 ns a probed call smaller (10 processes, interleaved).
//!
//! So the paths call `flush_entering` (the entries: the flush runs in the caller's frame) or
//! `flush_leaving` (the exits, after their timestamp: in the time of the frame below) and go on
//! in assembly; the body only sees what the flush could not take (a busy or full stack, which
//! the paths leave to it as before). Both keep every general register, so a path calls them with
//! its own registers live. The calibration of a flush (flushes.rs) measures `flush_entering`
//! itself, so what compensation charges a flush is what the paths run. (The bare windows no
//! longer take their flushes out at that calibration: the shadow windows they are measured
//! against flush alike, inline.rs's `open_shadow`.)

use crate::probes::{commit, mark_busy_keeping_pending};
use crate::thread::ThreadState;

/// Assembly with which a path in assembly flushes the calls counted inline before it goes on
/// (the wrappers keep every register). `check` falls through, as
/// local label 31, when nothing is pending, else jumps to local label 30; `retry`, placed where
/// nothing falls into it and just before the path's miss, is label 30: the path's wrapper
/// (the operand `{flush}`), then back to 31 when it took every call, else on into the miss (a
/// busy or full stack, which the body handles). The pending calls are the thread-local block's
/// (`current::pending_calls`), at the operand `{pending}`
/// (`instrument_contract::inline_count::PENDING_CALLS_AT`), reached from the thread pointer.
#[rustfmt::skip]
macro_rules! flush_first {
    (check) => {
        concat!("cmp qword ptr fs:[instrument_rt_current@TPOFF + {pending}], 0\n", "jne 30f\n", "31:")
    };
    (retry) => {
        concat!(
            "30:\n", "call {flush}\n",
            "cmp qword ptr fs:[instrument_rt_current@TPOFF + {pending}], 0\n", "je 31b"
        )
    };
}
pub(crate) use flush_first;

/// A wrapper that saves every general register the System V convention lets a callee change
/// (and `rbx`, which keeps the stack pointer), aligns the stack, calls `flush_pending` with `edi`
/// = `$leaving`, and restores them: the paths call it with their registers live and the stack
/// wherever their saves left it.
macro_rules! flush_wrapper {
    ($name:ident, $leaving:literal) => {
        /// A flush of the calls counted inline (see the module comment); keeps every general
        /// register.
        ///
        /// # Safety
        /// Called by the probes' paths in assembly, on the probing thread.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        pub(crate) unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                "push rax", "push rcx", "push rdx", "push rsi", "push rdi",
                "push r8", "push r9", "push r10", "push r11", "push rbx",
                "mov rbx, rsp",
                "and rsp, -16",
                concat!("mov edi, ", $leaving),
                "call {flush}",
                "mov rsp, rbx",
                "pop rbx", "pop r11", "pop r10", "pop r9", "pop r8",
                "pop rdi", "pop rsi", "pop rdx", "pop rcx", "pop rax",
                "ret",
                flush = sym flush_pending,
            )
        }
    };
}

flush_wrapper!(flush_entering, "0");
flush_wrapper!(flush_leaving, "1");

/// The wrappers' call: the calling thread's state, flushed by `flush_on`.
extern "C" fn flush_pending(leaving: u32) {
    let ts = crate::thread::current();
    if !ts.is_null() {
        // SAFETY: the calling thread's state (`current`), which only this thread writes, and no
        // reference to it is held across a probe (the paths hold only registers).
        flush_on(unsafe { &mut *ts }, leaving != 0);
    }
}

/// Charges the calls counted inline to the frame on top, as the bodies' `mark_busy` (`leaving`
/// false) or `mark_busy_leaving` (true) do, with the stack marked busy meanwhile. Nothing where
/// its stack is busy or full: a path then finds the calls still pending and leaves the probe to
/// its body.
pub(crate) fn flush_on(ts: &mut ThreadState, leaving: bool) {
    // A busy depth (a probe this signal handler interrupted) is past any capacity.
    let top = ts.depth;
    if top >= ts.frame_cap() {
        return;
    }
    mark_busy_keeping_pending(ts, top);
    if leaving {
        crate::inline::charge_pending_leaving(ts, top);
    } else {
        crate::inline::charge_pending(ts, top);
    }
    commit(ts, top);
}

/// A flush as the paths run it, for its calibration (flushes.rs): `flush_entering` on the
/// calling thread's state.
///
/// # Safety
/// `ts` is the calling thread's state, and the caller holds no reference to it across the call.
pub(crate) unsafe fn as_the_paths(ts: *mut ThreadState) {
    debug_assert!(
        std::ptr::eq(ts, crate::thread::current()),
        "the calibration flushes its own thread's state"
    );
    // SAFETY: the wrapper keeps every general register and flushes the calling thread's own
    // state, which the caller does not hold across it (the contract).
    unsafe { flush_entering() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::Frame;
    use instrument_live::COUNTED_CHILD;

    /// Both wrappers flush the calling thread's pending calls into the frame on top and keep every
    /// general register the paths may hold live across them.
    #[test]
    fn the_flush_keeps_every_general_register_and_charges_the_frame_on_top() {
        for wrapper in [flush_entering as unsafe extern "C" fn(), flush_leaving] {
            // SAFETY: frames are plain integers, valid when zeroed.
            let mut frames: Vec<Frame> = (0..4).map(|_| unsafe { std::mem::zeroed() }).collect();
            let mut records = vec![crate::thread::Record::default(); 8];
            (frames[0].id, frames[1].id) = (crate::thread::SENTINEL_ID, 2);
            let mut ts = ThreadState::over(&mut frames, &mut records);
            ts.depth = 1;
            crate::current::set_pending_calls(3);
            crate::current::set(&mut ts);
            let kept: u64;
            // SAFETY: the wrapper flushes this thread's state (set above, frame 1 on top) and
            // keeps the registers; the block clobbers only what it declares, and uses the stack
            // (no `nostack`) for the call.
            unsafe {
                core::arch::asm!(
                    "mov rax, 1", "mov rcx, 2", "mov rdx, 3", "mov rsi, 4", "mov rdi, 5",
                    "mov r8, 6", "mov r9, 7", "mov r10, 8", "mov r11, 9",
                    "call r13",
                    "xor r12d, r12d",
                    "cmp rax, 1", "jne 2f", "cmp rcx, 2", "jne 2f", "cmp rdx, 3", "jne 2f",
                    "cmp rsi, 4", "jne 2f", "cmp rdi, 5", "jne 2f", "cmp r8, 6", "jne 2f",
                    "cmp r9, 7", "jne 2f", "cmp r10, 8", "jne 2f", "cmp r11, 9", "jne 2f",
                    "mov r12d, 1",
                    "2:",
                    in("r13") wrapper,
                    out("r12") kept,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                    clobber_abi("C"),
                );
            }
            crate::current::set(std::ptr::null_mut());
            assert_eq!(kept, 1, "a general register changed across the flush");
            assert_eq!((crate::current::pending_calls(), ts.counters.inlined, ts.depth), (0, 3, 1));
            assert_eq!(frames[1].child_calls, 3 * COUNTED_CHILD, "charged to the frame on top");
        }
    }
}
