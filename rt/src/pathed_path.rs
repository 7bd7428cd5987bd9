//! The pathed pair in assembly: the entry and exit of a callpath parent kept on the shadow stack
//! untimed (`switch::PATHED`: inplace's counted windows of an event with children, and the
//! throttled parents that settle there). Such parents run as often as the hot leaves they call
//! (Lua's `luaD_precall` and `luaV_execute`: 14 M calls a run, SQLite's B-tree descents 35 M),
//! and their pairs went through the Rust bodies: the trampolines' register saves, `probes::enter`
//! and `enter_pathed` out of line, `exit_other`, `exit_pathed`, and `close_untimed` out of line
//! with `hand_up_descendants`. On Lua's compensated callpath profile (perf, the kept paired
//! executable of `scripts/nas-paired`) those took 30 % of the run's samples, 21 % through these
//! paths; interleaved, the probes' in-place cost fell by 15 ns a probed call (38 to 23).
//!
//! `pathed_enter!` does what `enter_pathed` and `open_pathed` do in the common case, and
//! `pathed_exit!` what `close_untimed` and `hand_up_descendants` do, each in their order; every
//! other case goes to the bodies with nothing written (the macros list them). A frame a tally
//! window trapped (its `sp` marked) fails the exit's match and goes to the body, which mends it
//! (`tally::left`). A change to those bodies is a change here.

use crate::callpath::{child_node_at, find_step};
#[cfg(target_arch = "x86_64")]
use crate::flush_path::flush_first;
use crate::probes::{enter, exit_other};
use crate::thread::{Frame, Record, ThreadState};
use crate::trampolines::charge_estimate;

/// The entry of a pathed event (see the module comment), jumped to by an entry trampoline with
/// the id in `eax` and the id slot in `rdi`: what `probes::enter_pathed` does in the common case,
/// in about 110 instructions with the saves where the body ran about 200 after the trampoline's
/// seven-register save. `$save` keeps the registers
/// the path uses (`rcx`, `rdx`, `rsi`, `rdi`, `r8` to `r10`) as the convention asks, and `$sp`
/// (after the saves) puts the caller's stack pointer in `r10`; `$restore` undoes `$save`; a
/// miss runs `$restore` then `$miss` with `rdi` (and the C convention's `rsi`) as they came.
/// Every case the body handles otherwise goes there with nothing written: no thread state, a
/// busy stack or one with no room for the frame, an id past the records, calls counted inline
/// that flush_path.rs could not charge first (a busy stack), the counted path's gate closed (fenced
/// counting) or reached (an in-place window's end), no callpath tree, a caller's node without
/// this step cached (`Tree::step`'s miss, which compensation charges), a waiting event that has
/// had its share (`inplace::waited_out`). The call's cost is `compensate::pathed_cost`'s, its
/// calibrated case included: the start-up calibration and the leaves' pathed windows, which
/// scale it, measure the pathed pair through this path as the parents run it (when the
/// parents with an estimate alone took it, the calibrated case measured the body's dearer pair,
/// and Lua's compensated callpath error went from 4.6 ns a probed call short to 2.9 over).
macro_rules! pathed_enter {
    ($name:ident, save: [$($save:literal),*], sp: [$($sp:literal),*], restore: [$($restore:literal),*],
     miss: [$($miss:literal),*] $(, $operand:ident = sym $target:path)*) => {
        /// A pathed entry (see the macro); not callable.
        ///
        /// # Safety
        /// Only jumped to by its entry trampoline, under the probe contract; the id is inside
        /// the mode table (the trampoline checked it).
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        pub(crate) unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                $($save,)*
                "mov rdx, qword ptr fs:[instrument_rt_current@TPOFF]",
                "test rdx, rdx",
                "jz 9f",
                // Calls counted inline: charged to the frame on top first (flush_path.rs).
                flush_first!(check),
                // rcx: the depth (a busy one is past any capacity), with room for one frame.
                "mov rcx, qword ptr [rdx + {depth}]",
                "lea r8, [rcx + 1]",
                "cmp r8, qword ptr [rdx + {frame_cap}]",
                "jae 9f",
                "cmp eax, dword ptr [rdx + {record_cap}]",
                "jae 9f",
                // r8: the record, r9: its count with this call, short of the window's end.
                "mov r8, rax",
                "shl r8, {record_shift}",
                "add r8, qword ptr [rdx + {records}]",
                "mov r9, qword ptr [r8 + {r_counted}]",
                "add r9, 1",
                "mov r10, qword ptr [rip + {gate}]",
                "test r10, r10",
                "jz 9f",
                "cmp r9, r10",
                "je 9f",
                // r10: the call's cost, the event's own estimate's untimed pair, unless it waited
                // out its turn in the queue.
                "mov r10, qword ptr [rip + {costs}]",
                "test r10, r10",
                "jz 5f",
                "mov rsi, rax",
                "shl rsi, {cost_shift}",
                "add r10, rsi",
                "mov rsi, qword ptr [r10 + {wait_until}]",
                "test rsi, rsi",
                "jz 1f",
                "cmp r9, rsi",
                "jae 9f",
                "1:",
                "cmp qword ptr [r10 + {timed}], 0",
                "je 5f",
                "cmp eax, dword ptr [rip + {pathed_leaf}]",
                "je 5f",
                "mov r10, qword ptr [r10 + {counted_cost}]",
                "jmp 6f",
                // Else the calibrated pathed pair times what the leaves' pathed windows
                // measured of it (`compensate::pathed_cost`, `population::Pool::apply`).
                "5:",
                "mov r10, qword ptr [rip + {calibrated} + {pathed_pair}]",
                "imul r10, qword ptr [rip + {pool} + {pool_scaled}]",
                "add r10, {half}",
                "shr r10, {scale}",
                "6:",
                // r11: the frame on top, rdi: its node, rsi: the step's child (cached).
                "mov r11, rcx",
                "shl r11, {frame_shift}",
                "add r11, qword ptr [rdx + {frames}]",
                "mov rdi, qword ptr [r11 + {f_node_at}]",
                "test rdi, rdi",
                "jz 9f",
                find_step!("rdi", "esi", "9f"),
                "mov esi, dword ptr [rdi + rsi + {steps} + {step_child}]",
                // Marked busy; the call counted, as a counted child of the frame on top, which
                // its cost goes to.
                "mov r9, rcx",
                "bts r9, {busy_bit}",
                "mov qword ptr [rdx + {depth}], r9",
                "add qword ptr [r8 + {r_counted}], 1",
                "movabs r9, {counted_child}",
                "add qword ptr [r11 + {f_child_calls}], r9",
                "add qword ptr [r11 + {f_overhead}], r10",
                // r10: the estimate, to the event and to the top frame's event unless it is the
                // sentinel (`probes::charge_untimed`).
                charge_estimate!(record: "r8", frame: "r11", estimate: "r10", scratch: "r9", "r9d", done: "2f"),
                "2:",
                // r8: the child's node (the parent's address plus the distance of their
                // indices): the call and its estimate on it, the estimate on the caller's too,
                // then r9: its untimed-children total, the frame's start (`open_pathed`).
                child_node_at!("r8", "r8", "r8d", "esi", "dword ptr [r11 + {f_node}]", "rdi"),
                "add qword ptr [r8 + {node_record} + {r_counted}], 1",
                "add qword ptr [r8 + {node_record} + {untimed_own}], r10",
                "add qword ptr [rdi + {node_record} + {untimed_children}], r10",
                "mov r9, qword ptr [r8 + {node_record} + {untimed_children}]",
                "bts r9, 63",
                // The frame above, then the depth with it (`commit`).
                $($sp,)*
                "mov dword ptr [r11 + {frame_size} + {frame_id}], eax",
                "mov dword ptr [r11 + {frame_size} + {f_node}], esi",
                "mov qword ptr [r11 + {frame_size} + {f_child_calls}], 0",
                "mov qword ptr [r11 + {frame_size} + {f_sp}], r10",
                "mov qword ptr [r11 + {frame_size} + {f_start}], r9",
                "mov qword ptr [r11 + {frame_size} + {f_child_incl}], 0",
                "mov qword ptr [r11 + {frame_size} + {f_overhead}], 0",
                "mov qword ptr [r11 + {frame_size} + {f_comp_child}], 0",
                "mov qword ptr [r11 + {frame_size} + {f_node_at}], r8",
                "add rcx, 1",
                "mov qword ptr [rdx + {depth}], rcx",
                $($restore,)*
                "mov eax, {opened}",
                "ret",
                // The flush; calls it could not take (a busy or full stack) go to the body.
                flush_first!(retry),
                "9:",
                $($restore,)*
                $($miss,)*
                flush = sym crate::flush_path::flush_entering,
                gate = sym crate::inplace::COUNTED_GATE,
                costs = sym crate::inplace::TABLE,
                pathed_leaf = sym crate::inplace::PATHED_LEAF,
                calibrated = sym crate::compensate::UNTIMED,
                pathed_pair = const crate::compensate::PATHED_PAIR_AT,
                pool = sym crate::population::PATHED,
                pool_scaled = const crate::population::Pool::SCALED_AT,
                half = const 1u64 << (crate::overhead::SCALE - 1),
                scale = const crate::overhead::SCALE,
                per_call = sym crate::untimed::PER_CALL,
                timed = const core::mem::offset_of!(crate::inplace::Cost, timed),
                counted_cost = const core::mem::offset_of!(crate::inplace::Cost, counted),
                wait_until = const core::mem::offset_of!(crate::inplace::Cost, wait_until),
                cost_shift = const size_of::<crate::inplace::Cost>().trailing_zeros(),
                steps = const crate::callpath::Node::STEPS_AT,
                step_child = const crate::callpath::Node::STEP_CHILD_AT,
                node_size = const crate::callpath::Node::SIZE,
                node_record = const crate::callpath::Node::RECORD_AT,
                depth = const core::mem::offset_of!(ThreadState, depth),
                frame_cap = const ThreadState::FRAME_CAP_AT,
                pending = const instrument_contract::inline_count::PENDING_CALLS_AT,
                frames = const ThreadState::FRAMES_AT,
                records = const ThreadState::RECORDS_AT,
                record_cap = const ThreadState::RECORD_CAP_AT,
                busy_bit = const instrument_live::DEPTH_BUSY.trailing_zeros(),
                record_shift = const size_of::<Record>().trailing_zeros(),
                frame_shift = const size_of::<Frame>().trailing_zeros(),
                frame_size = const size_of::<Frame>(),
                sentinel = const crate::thread::SENTINEL_ID,
                counted_child = const instrument_live::COUNTED_CHILD,
                opened = const crate::probes::OPENED,
                frame_id = const core::mem::offset_of!(Frame, id),
                f_node = const core::mem::offset_of!(Frame, node),
                f_node_at = const core::mem::offset_of!(Frame, node_at),
                f_child_calls = const core::mem::offset_of!(Frame, child_calls),
                f_sp = const core::mem::offset_of!(Frame, sp),
                f_start = const core::mem::offset_of!(Frame, start),
                f_child_incl = const core::mem::offset_of!(Frame, child_incl),
                f_overhead = const core::mem::offset_of!(Frame, overhead),
                f_comp_child = const core::mem::offset_of!(Frame, comp_child),
                r_counted = const core::mem::offset_of!(Record, counted),
                untimed_children = const core::mem::offset_of!(Record, untimed_children),
                untimed_own = const core::mem::offset_of!(Record, untimed_own),
                $($operand = sym $target,)*
            )
        }
    };
}

/// The exit of a pathed event (see the module comment), jumped to by an exit trampoline with
/// the id in `eax` and the id slot in `rdi`; `$save` keeps what the convention asks of `rcx`,
/// `rdx`, `rsi` and `rdi`, `$sp` puts the caller's stack pointer in `r11`, `$restore` undoes
/// `$save` and `$done` returns; a miss runs `$restore` then `$miss` with `rdi` as it came.
/// Uses `rax`, `rcx`, `rdx`, `rsi`, `rdi`, `r11` and the flags.
macro_rules! pathed_exit {
    ($name:ident, save: [$($save:literal),*], sp: [$($sp:literal),*], restore: [$($restore:literal),*],
     done: [$($done:literal),*], miss: [$($miss:literal),*] $(, $operand:ident = sym $target:path)*) => {
        /// A pathed exit (see the macro); not callable.
        ///
        /// # Safety
        /// Only jumped to by its exit trampoline, under the probe contract.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        pub(crate) unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                $($save,)*
                $($sp,)*
                "mov rdx, qword ptr fs:[instrument_rt_current@TPOFF]",
                "test rdx, rdx",
                "jz 9f",
                // Calls counted inline: charged to the frame on top first (flush_path.rs).
                flush_first!(check),
                // rcx: the depth (a busy one is past any capacity), rsi: the frame on top.
                "mov rcx, qword ptr [rdx + {depth}]",
                "cmp rcx, qword ptr [rdx + {frame_cap}]",
                "jae 9f",
                "mov rsi, rcx",
                "shl rsi, {frame_shift}",
                "add rsi, qword ptr [rdx + {frames}]",
                "cmp dword ptr [rsi + {frame_id}], eax",
                "jne 9f",
                "cmp qword ptr [rsi + {f_sp}], r11",
                "jne 9f",
                // r11: the start, untimed (its top bit set) or the body's.
                "mov r11, qword ptr [rsi + {f_start}]",
                "test r11, r11",
                "jns 9f",
                // Closed from here on (`mark_busy_leaving`): the frame's sums to its parent's.
                "bts rcx, {busy_bit}",
                "mov qword ptr [rdx + {depth}], rcx",
                "mov rcx, qword ptr [rsi + {f_child_incl}]",
                "add qword ptr [rsi - {frame_size} + {f_child_incl}], rcx",
                "mov rcx, qword ptr [rsi + {f_overhead}]",
                "add qword ptr [rsi - {frame_size} + {f_overhead}], rcx",
                "mov rcx, qword ptr [rsi + {f_comp_child}]",
                "add qword ptr [rsi - {frame_size} + {f_comp_child}], rcx",
                // rdi: the event's record; rax: the frame's calls, which it counts, and of
                // those the counted ones (saturating).
                "mov edi, eax",
                "shl rdi, {record_shift}",
                "add rdi, qword ptr [rdx + {records}]",
                "mov eax, dword ptr [rsi + {f_child_calls}]",
                "add qword ptr [rdi + {r_child_calls}], rax",
                "mov ecx, dword ptr [rsi + {f_child_calls} + 4]",
                "test ecx, ecx",
                "jz 1f",
                "add ecx, dword ptr [rdi + {r_counted_children}]",
                "jnc 3f",
                "mov ecx, -1",
                "3:",
                "mov dword ptr [rdi + {r_counted_children}], ecx",
                "1:",
                // Callpaths (rcx: the frame's node): its calls, then what its descendants'
                // untimed calls were estimated at since it opened (`hand_up_descendants`),
                // unless its parent is on the same node.
                "mov rcx, qword ptr [rsi + {f_node_at}]",
                "test rcx, rcx",
                "jz 2f",
                "add qword ptr [rcx + {node_record} + {r_child_calls}], rax",
                "mov rax, qword ptr [rcx + {node_record} + {untimed_children}]",
                "sub rax, r11",
                "shl rax, 1",
                "shr rax, 1",
                "jz 2f",
                "mov r11d, dword ptr [rsi + {f_node}]",
                "cmp r11d, dword ptr [rsi - {frame_size} + {f_node}]",
                "je 2f",
                "add qword ptr [rcx + {node_record} + {untimed_own}], rax",
                "mov rcx, qword ptr [rsi - {frame_size} + {f_node_at}]",
                "add qword ptr [rcx + {node_record} + {untimed_children}], rax",
                "add qword ptr [rdi + {untimed_own}], rax",
                "mov ecx, dword ptr [rsi - {frame_size} + {frame_id}]",
                "cmp ecx, {sentinel}",
                "je 2f",
                "shl rcx, {record_shift}",
                "add rcx, qword ptr [rdx + {records}]",
                "add qword ptr [rcx + {untimed_children}], rax",
                // Popped (`commit`): the depth below, unmarked.
                "2:",
                "mov rcx, qword ptr [rdx + {depth}]",
                "btr rcx, {busy_bit}",
                "sub rcx, 1",
                "mov qword ptr [rdx + {depth}], rcx",
                $($restore,)*
                $($done,)*
                // The flush, in the time of the frame below; calls it could not take go to the
                // body.
                flush_first!(retry),
                "9:",
                $($restore,)*
                $($miss,)*
                flush = sym crate::flush_path::flush_leaving,
                depth = const core::mem::offset_of!(ThreadState, depth),
                frame_cap = const ThreadState::FRAME_CAP_AT,
                pending = const instrument_contract::inline_count::PENDING_CALLS_AT,
                frames = const ThreadState::FRAMES_AT,
                records = const ThreadState::RECORDS_AT,
                node_record = const crate::callpath::Node::RECORD_AT,
                busy_bit = const instrument_live::DEPTH_BUSY.trailing_zeros(),
                record_shift = const size_of::<Record>().trailing_zeros(),
                frame_shift = const size_of::<Frame>().trailing_zeros(),
                frame_size = const size_of::<Frame>(),
                sentinel = const crate::thread::SENTINEL_ID,
                frame_id = const core::mem::offset_of!(Frame, id),
                f_node = const core::mem::offset_of!(Frame, node),
                f_node_at = const core::mem::offset_of!(Frame, node_at),
                f_child_calls = const core::mem::offset_of!(Frame, child_calls),
                f_sp = const core::mem::offset_of!(Frame, sp),
                f_start = const core::mem::offset_of!(Frame, start),
                f_child_incl = const core::mem::offset_of!(Frame, child_incl),
                f_overhead = const core::mem::offset_of!(Frame, overhead),
                f_comp_child = const core::mem::offset_of!(Frame, comp_child),
                r_child_calls = const core::mem::offset_of!(Record, child_calls),
                r_counted_children = const core::mem::offset_of!(Record, counted_children),
                untimed_children = const core::mem::offset_of!(Record, untimed_children),
                untimed_own = const core::mem::offset_of!(Record, untimed_own),
                $($operand = sym $target,)*
            )
        }
    };
}

const _: () = assert!(
    instrument_live::UNTIMED_START == 1 << 63,
    "the pathed exit tests an untimed start by its sign and masks the snapshot by a shift"
);
const _: () = assert!(
    core::mem::offset_of!(Frame, child_calls) % 8 == 0,
    "the pathed exit reads a frame's counted children as the high half of child_calls"
);

// The C set's: every register the path uses is scratch; a miss jumps to the body with the
// caller's stack pointer in `rsi` (its return address on top).
pathed_exit!(exit_pathed_fast, save: [], sp: ["mov r11, rsi"], restore: [], done: ["ret"],
    miss: ["mov rsi, rsp", "jmp {body}"], body = sym exit_other);
// The `preserve_most` set's: the trampoline pushed `rax`, which `$done` pops; the four other
// registers the path uses are kept on the stack, and a miss reaches the body through the
// trampolines' register save with the stack as the trampoline left it.
pathed_exit!(exit_pathed_fast_pm,
    save: ["push rcx", "push rdx", "push rsi", "push rdi"],
    sp: ["lea r11, [rsp + 40]"],
    restore: ["pop rdi", "pop rsi", "pop rdx", "pop rcx"],
    done: ["pop rax", "ret"],
    miss: ["lea r11, [rip + {body}]", "jmp {save}"],
    body = sym exit_other, save = sym crate::trampolines::save_rax_rsi);

// The C set's: `rdi` and `rsi` (the caller's stack pointer, which the frame keeps) are kept for
// a miss, which jumps to the body; the others the path uses are scratch.
pathed_enter!(enter_pathed_fast, save: ["push rdi", "push rsi"], sp: ["mov r10, qword ptr [rsp]"],
    restore: ["pop rsi", "pop rdi"], miss: ["jmp {body}"], body = sym enter);
// The `preserve_most` set's: only `r11` and the result's `rax` may change, so the seven others
// it uses are kept on the stack, and a miss reaches the body through the register save with
// the stack as the trampoline left it.
pathed_enter!(enter_pathed_fast_pm,
    save: ["push rcx", "push rdx", "push rsi", "push rdi", "push r8", "push r9", "push r10"],
    sp: ["lea r10, [rsp + 56]"],
    restore: ["pop r10", "pop r9", "pop r8", "pop rdi", "pop rsi", "pop rdx", "pop rcx"],
    miss: ["lea r11, [rip + {body}]", "jmp {save}"],
    body = sym enter, save = sym crate::trampolines::save_rsi);

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use crate::probes::{Opened, OPENED};
    use crate::switch;
    use crate::thread::{Frame, Record, ThreadState, SENTINEL_ID};
    use crate::timed_path::{__instrument_exit, __instrument_exit_pm};
    use crate::trampolines::{__instrument_enter, __instrument_enter_pm};
    use instrument_live::{COUNTED_CHILD, TIMED_CHILD, UNTIMED_START};

    /// The tests' events, one each: the mode table is shared by the tests running beside each
    /// other, so no other test's mode or record reaches them.
    const ID: u32 = 120;
    const INLINE_ID: u32 = 121;
    const TIMED_ID: u32 = 122;

    /// A pathed call of `id` under frame 1 (event 2) through `enter` and `exit`, with three
    /// timed and two counted children charged to its frame in between, and what `between` does
    /// to the thread's state before the exit: the frames and records, and the state's calls
    /// counted inline (`counters.inlined`) and still pending after the exit.
    fn pathed_call(
        id: u32,
        enter: unsafe extern "C" fn(*const u32) -> Opened,
        exit: unsafe extern "C" fn(*const u32, Opened),
        between: impl FnOnce(&mut ThreadState),
    ) -> (Vec<Frame>, Vec<Record>, (u64, u64)) {
        // SAFETY: frames are plain integers, valid when zeroed.
        let mut frames: Vec<Frame> = (0..4).map(|_| unsafe { std::mem::zeroed() }).collect();
        let mut records = vec![Record::default(); id as usize + 1];
        (frames[0].id, frames[1].id) = (SENTINEL_ID, 2);
        records[id as usize].counted_children = u32::MAX - 1;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        crate::current::set(&mut ts);
        switch::set(id, switch::PATHED);
        // SAFETY: the probe contract: this thread's state is `ts` (frame 1 on top, room for
        // one more, the records past id), and id is inside the mode table. The entry's frame
        // keeps this function's stack pointer at the call, the exit's call matches it.
        let opened = unsafe { enter(&id) };
        assert_eq!((opened, ts.depth), (OPENED, 2), "a frame for its children's paths");
        assert_eq!((frames[2].id, frames[2].start), (id, UNTIMED_START), "kept untimed");
        frames[2].child_calls = 3 * TIMED_CHILD + 2 * COUNTED_CHILD;
        (frames[2].child_incl, frames[2].overhead, frames[2].comp_child) = (100, 7, 90);
        between(&mut ts);
        // SAFETY: as above, the frame on top this entry's.
        unsafe { exit(&id, opened) };
        switch::set(id, switch::MEASURED);
        crate::current::set(std::ptr::null_mut());
        assert_eq!(ts.depth, 1, "popped");
        let inline = (ts.counters.inlined, crate::current::pending_calls());
        (frames, records, inline)
    }

    const SETS: [(&str, PairOf); 2] = [
        ("C", (__instrument_enter, __instrument_exit)),
        ("preserve_most", (__instrument_enter_pm, __instrument_exit_pm)),
    ];
    type PairOf = (unsafe extern "C" fn(*const u32) -> Opened, unsafe extern "C" fn(*const u32, Opened));

    /// The pathed exit (in assembly here, as a frame without a callpath node makes the entry
    /// take the body) hands its frame's sums to its parent and counts its children, the counted
    /// ones saturating, as `probes::close_untimed` does; with either probe set.
    #[test]
    fn the_pathed_exit_hands_its_frames_sums_to_its_parent_and_counts_its_children() {
        for (set, (enter, exit)) in SETS {
            let (frames, records, _) = pathed_call(ID, enter, exit, |_| {});
            let record = &records[ID as usize];
            assert_eq!((record.calls, record.counted, record.child_calls), (0, 1, 5), "{set} set");
            assert_eq!(record.counted_children, u32::MAX, "{set} set: saturated");
            assert_eq!((frames[1].child_incl, frames[1].comp_child), (100, 90), "{set} set");
            assert_eq!(frames[1].child_calls, COUNTED_CHILD, "{set} set: one counted call");
            assert_eq!(frames[1].overhead, crate::compensate::pathed_cost(ID) + 7, "{set} set");
        }
    }

    /// A measured call's entry says its frame is timed (`TIMED`, which the exit reads its clock
    /// first on), a pathed call's only that it opened one; an exit closes the frame on top
    /// whatever it is handed (`UNKNOWN_OPENED` from code of an older pass, or a stale value):
    /// with either probe set.
    #[test]
    fn a_timed_entry_says_so_and_its_exit_closes_the_frame_whatever_it_is_handed() {
        use crate::probes::TIMED;
        for (set, (enter, exit)) in SETS {
            for handed in [TIMED, OPENED, 0x5a5a] {
                // SAFETY: frames are plain integers, valid when zeroed.
                let mut frames: Vec<Frame> = (0..4).map(|_| unsafe { std::mem::zeroed() }).collect();
                let mut records = vec![Record::default(); TIMED_ID as usize + 1];
                (frames[0].id, frames[1].id) = (SENTINEL_ID, 2);
                let mut ts = ThreadState::over(&mut frames, &mut records);
                ts.depth = 1;
                crate::current::set(&mut ts);
                // SAFETY: as in `pathed_call`, for a measured event.
                let opened = unsafe { enter(&TIMED_ID) };
                assert_eq!((opened, ts.depth), (TIMED, 2), "{set} set");
                // SAFETY: as above, the frame on top this entry's.
                unsafe { exit(&TIMED_ID, handed) };
                crate::current::set(std::ptr::null_mut());
                assert_eq!(ts.depth, 1, "{set} set, handed {handed:#x}: popped");
                assert_eq!(records[TIMED_ID as usize].calls, 1, "{set} set, handed {handed:#x}: timed once");
            }
        }
    }

    /// Calls counted inline under the pathed frame, still pending at its exit, are charged to
    /// that frame before it hands its sums up (flush_path.rs: the exit in assembly flushes them
    /// and goes on), so its record counts them among its children; with either probe set.
    #[test]
    fn the_pathed_exit_charges_the_calls_counted_inline_under_its_frame_first() {
        for (set, (enter, exit)) in SETS {
            let (frames, records, inline) =
                pathed_call(INLINE_ID, enter, exit, |_| crate::current::set_pending_calls(2));
            assert_eq!(inline, (2, 0), "{set} set: both flushed");
            assert_eq!(records[INLINE_ID as usize].child_calls, 7, "{set} set: three timed, four counted");
            assert_eq!(frames[1].child_calls, COUNTED_CHILD, "{set} set: one counted call");
        }
    }
}
