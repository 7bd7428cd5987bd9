//! The probes' entry points, the symbols instrumented code calls: naked trampolines that read
//! the event's id and mode byte, return at once for a switched-off event and otherwise go to the
//! bodies in `probes.rs` (or `reconcile.rs`, for a landing pad) with the caller's stack pointer
//! (the identity of the machine frame, used only when a longjmp or an unwind has skipped exits).
//! They hold no logic of their own beyond that routing, so the bodies can be read as the hot path
//! in one file, with two exceptions in assembly: a throttled event's counted call, the commonest
//! probe of a call-heavy program, is done here (`counted_path!`) unless compensation or an
//! in-place window needs the Rust body (`probes::enter_counted`, which it mirrors), and a
//! measured event's timed pair goes to `timed_path.rs`, which also holds the exported exits
//! (`exit_routed` here is where they leave what they do not handle), and a pathed event's pair
//! (a callpath parent kept on the stack untimed) to `pathed_path.rs`. Every entry point is
//! called under the probe contract stated in `probes.rs`.
//!
//! Each probe comes in the two sets of `instrument_contract::probes`: the C convention's, which
//! jump to the bodies, and `preserve_most`'s (what the pass calls on x86-64), which save the
//! registers the caller keeps across the call, call the bodies and restore them (`save_and_call`).

use crate::callpath::{child_node_at, find_step};
use crate::pathed_path::{enter_pathed_fast, enter_pathed_fast_pm, exit_pathed_fast, exit_pathed_fast_pm};
use crate::probes::{enter, enter_throttled, exit, exit_other, exit_untimed, loop_exit, Opened};
use crate::reconcile::unwind;
use crate::switch;
use crate::thread::{Frame, Record, ThreadState};
use crate::timed_path::{__instrument_exit, __instrument_exit_pm, enter_timed_fast, enter_timed_fast_pm};

/// A loop exit's entry point with the C convention: a trampoline that passes the caller's stack
/// pointer in `rdx` and jumps to `$body`. A probe of a switched-off event returns from here,
/// after two loads (its id and its mode byte, see `switch`): no prologue, no thread state, no
/// clock. An event is switched off when its module registers, before any of its probes run, so
/// no activation of it is open.
macro_rules! trampoline {
    ($name:ident($($arg:ident: $ty:ty),*), $body:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) {
            core::arch::naked_asm!(
                "mov eax, dword ptr [rdi]",
                "cmp eax, {max}",
                "jae 2f",
                "lea rcx, [rip + {modes}]",
                "cmp byte ptr [rcx + rax], {off}",
                "je 3f",
                "2:",
                "mov rdx, rsp",
                "jmp {body}",
                "3:",
                "ret",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                off = const switch::OFF,
                body = sym $body,
            )
        }
    };
}

/// The same with `preserve_most`: the probe has no result, so `rax` is preserved too. The
/// switched-off path touches `r11`, the flags and the stack slot that keeps `rax`; any other
/// goes to `$body` through `save_rax_rdx`.
macro_rules! preserving_trampoline {
    ($name:ident($($arg:ident: $ty:ty),*), $body:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) {
            core::arch::naked_asm!(
                "push rax",
                "mov eax, dword ptr [rdi]",
                "cmp eax, {max}",
                "jae 2f",
                "lea r11, [rip + {modes}]",
                "cmp byte ptr [r11 + rax], {off}",
                "je 3f",
                "2:",
                "lea r11, [rip + {body}]",
                "jmp {save}",
                "3:",
                "pop rax",
                "ret",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                off = const switch::OFF,
                body = sym $body,
                save = sym save_rax_rdx,
            )
        }
    };
}

/// The routine and call-statement probes' trampolines with the C convention also route by mode,
/// so that the paths of a throttled event (counted entry, exit with nothing to close) are small
/// functions that save no registers, instead of the timed bodies' prologues (six pushes and pops
/// each way). A measured event (mode 0) goes to `$body` after one test; a switched-off one
/// returns (`NOTHING` opened, for the entry); a counted one (`INLINE` included) goes to `$routed`, a
/// pathed one (a callpath parent kept on the stack untimed) to `$pathed`, and any other mode
/// (lenient, fenced) to `$other`, after an `lfence` for a fenced one (its entry or exit
/// waits for the work before it: inplace's split windows); a tallied one (tally.rs) to
/// `$tallied`.
macro_rules! routed_trampoline {
    ($(#[$attr:meta])* $vis:vis $name:ident -> $ret:ty, $body:path, $routed:path, $tallied:path, $pathed:path, $other:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        $(#[$attr])*
        $vis unsafe extern "C" fn $name(id_slot: *const u32) -> $ret {
            core::arch::naked_asm!(
                "mov rsi, rsp",
                "mov eax, dword ptr [rdi]",
                "cmp eax, {max}",
                "jae 2f",
                "lea rcx, [rip + {modes}]",
                "movzx ecx, byte ptr [rcx + rax]",
                "test ecx, ecx",
                "jnz 3f",
                "2:",
                "jmp {body}",
                "3:",
                // INLINE is COUNTED with its own bit, which the probes do not tell apart.
                "and ecx, {routed_bits}",
                "cmp ecx, {counted}",
                "je {routed}",
                "cmp ecx, {tally}",
                "je {tallied}",
                "cmp ecx, {pathed}",
                "je {pathed_path}",
                "cmp ecx, {off}",
                "jne 5f",
                "xor eax, eax",
                "ret",
                // A split window's event (inplace): its work, or the caller's, done first.
                "5:",
                "cmp ecx, {fenced}",
                "jne {other}",
                "lfence",
                "jmp {other}",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                counted = const switch::COUNTED,
                routed_bits = const switch::ROUTED,
                tally = const switch::TALLY,
                pathed = const switch::PATHED,
                off = const switch::OFF,
                fenced = const switch::FENCED,
                routed = sym $routed,
                tallied = sym $tallied,
                pathed_path = sym $pathed,
                other = sym $other,
                body = sym $body,
            )
        }
    };
}

/// The same routing with `preserve_most`: a measured event jumps to `$body`, which keeps what it
/// uses itself (the entry's timed path in timed_path.rs, or `exit_pm`), the counted one goes as
/// `$counted` says (the entry's saves what its counted path uses itself), a tallied or pathed one
/// jumps to `$tallied` or `$pathed` (which keep what they use), and the others go through
/// `$save`.
/// A probe without a result must preserve `rax` as well (`preserve_most` spares only the
/// result's register): its `$prologue` keeps it on the stack, where `$save` and the `$off`
/// return find it. The switched-off path touches `r11` and the flags besides.
macro_rules! preserving_routed_trampoline {
    ($(#[$attr:meta])* $vis:vis $name:ident -> $ret:ty, $body:path, $routed:path, $tallied:path, $pathed:path, $other:path,
     prologue: $prologue:literal, off: $off:literal, save: $save:path, counted: [$($counted:literal),*]) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        $(#[$attr])*
        $vis unsafe extern "C" fn $name(id_slot: *const u32) -> $ret {
            core::arch::naked_asm!(
                $prologue,
                "mov eax, dword ptr [rdi]",
                "cmp eax, {max}",
                "jae 2f",
                "lea r11, [rip + {modes}]",
                "movzx r11d, byte ptr [r11 + rax]",
                "test r11d, r11d",
                "jnz 3f",
                "2:",
                "jmp {body}",
                "3:",
                "and r11d, {routed_bits}",
                "cmp r11d, {counted}",
                $($counted,)*
                "cmp r11d, {tally}",
                "je {tallied}",
                "cmp r11d, {pathed}",
                "je {pathed_path}",
                "cmp r11d, {off}",
                "jne 5f",
                $off,
                "ret",
                // A split window's event (inplace): its work, or the caller's, done first.
                "5:",
                "cmp r11d, {fenced}",
                "jne 6f",
                "lfence",
                "6:",
                "lea r11, [rip + {other}]",
                "jmp {save}",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                counted = const switch::COUNTED,
                routed_bits = const switch::ROUTED,
                tally = const switch::TALLY,
                pathed = const switch::PATHED,
                off = const switch::OFF,
                fenced = const switch::FENCED,
                routed = sym $routed,
                tallied = sym $tallied,
                pathed_path = sym $pathed,
                other = sym $other,
                body = sym $body,
                save = sym $save,
            )
        }
    };
}

/// The save around a body: jumped to (not called) by a trampoline with the body's address in
/// `r11` and the stack as the instrumented caller left it, or with the caller's `rax` pushed on
/// it (a probe without a result: `$restore` pops it). Pushes the C convention's argument and
/// scratch registers but `r11` and `rax`, moves the stack by `$align` to align it for the call,
/// passes the caller's stack pointer (the address of the return address, `$frame` bytes up,
/// which identifies its machine frame) in `$sp`, calls the body and restores them. `rax`
/// carries the body's result back, or is popped.
macro_rules! save_and_call {
    ($vis:vis $name:ident, $sp:literal, $align:literal, $frame:literal, $restore:literal) => {
        /// Register save around a probe body (see the macro); not callable.
        ///
        /// # Safety
        /// Only jumped to by the `preserve_most` trampolines above, with a body in `r11`.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        $vis unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                "push rdi",
                "push rsi",
                "push rdx",
                "push rcx",
                "push r8",
                "push r9",
                "push r10",
                concat!("sub rsp, ", $align),
                concat!("lea ", $sp, ", [rsp + ", $frame, "]"),
                "call r11",
                concat!("add rsp, ", $align),
                "pop r10",
                "pop r9",
                "pop r8",
                "pop rcx",
                "pop rdx",
                "pop rsi",
                "pop rdi",
                $restore,
                "ret",
            )
        }
    };
}

// Seven pushes leave the stack 16-byte aligned (it was 8 off at the trampoline's entry); with
// `rax` pushed first, eight more bytes realign it. The frame offset reaches the return address.
save_and_call!(pub(crate) save_rsi, "rsi", "0", "56", "");
save_and_call!(pub(crate) save_rax_rsi, "rsi", "8", "72", "pop rax");
save_and_call!(save_rax_rdx, "rdx", "8", "72", "pop rax");

const _: () = assert!(switch::MEASURED == 0, "the routed trampolines test the measured mode as zero");
/// The tally path of an entry (tally.rs), jumped to by an entry trampoline with the id slot in
/// `rdi` and the caller's stack pointer in `rsi`: on the thread that runs a tally window, called
/// from the window's depth, the execution is only tallied (one decrement of the thread's count,
/// no record touched) until the count runs out (a window waiting at that depth since its caller
/// left, `tally::REARM`, first traps the frame on top as its caller); every other case, and the window's last
/// execution, is counted as usual (`enter_throttled`), through `$miss`. It touches `$base`,
/// `$scratch` and the flags, and returns `NOTHING` in `eax`. (It steps to no callpath node, and
/// the counted calls of the windows paired with it leave their caller's cached step as it was:
/// `inplace::KEEP_STEP`; the window's end counts its executions on their node, `tally::close`.)
macro_rules! tally_path {
    ($name:ident, base: $base:literal, scratch: $scratch:literal, miss: $miss:literal,
     [$($tail:literal),*] $(, $operand:ident = sym $target:path)*) => {
        /// A tally path (see the macro); not callable.
        ///
        /// # Safety
        /// Only jumped to by its entry trampoline, under the probe contract.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                concat!("mov ", $base, ", qword ptr fs:[instrument_rt_current@TPOFF]"),
                concat!("test ", $base, ", ", $base),
                concat!("jz ", $miss),
                concat!("mov ", $scratch, ", qword ptr [", $base, " + {tally_depth}]"),
                concat!("cmp ", $scratch, ", qword ptr [", $base, " + {depth}]"),
                "jne 3f",
                "1:",
                concat!("sub qword ptr [", $base, " + {tally}], 1"),
                concat!("jle ", $miss),
                "xor eax, eax",
                "ret",
                // A window waiting at this depth since its caller left (`tally::REARM`): the
                // frame on top is its caller now, trapped as `tally::open` traps it.
                "3:",
                concat!("btr ", $scratch, ", {rearm_bit}"),
                concat!("jnc ", $miss),
                concat!("cmp ", $scratch, ", qword ptr [", $base, " + {depth}]"),
                concat!("jne ", $miss),
                concat!("mov qword ptr [", $base, " + {tally_depth}], ", $scratch),
                concat!("shl ", $scratch, ", {frame_shift}"),
                concat!("add ", $scratch, ", qword ptr [", $base, " + {frames}]"),
                concat!("or qword ptr [", $scratch, " + {frame_sp}], {trap}"),
                "jmp 1b",
                $($tail,)*
                counted = sym enter_throttled,
                tally_depth = const core::mem::offset_of!(ThreadState, tally_depth),
                depth = const core::mem::offset_of!(ThreadState, depth),
                tally = const core::mem::offset_of!(ThreadState, tally),
                rearm_bit = const crate::tally::REARM.trailing_zeros(),
                frame_shift = const size_of::<Frame>().trailing_zeros(),
                frames = const ThreadState::FRAMES_AT,
                frame_sp = const core::mem::offset_of!(Frame, sp),
                trap = const crate::tally::TRAP,
                $($operand = sym $target,)*
            )
        }
    };
}

// The C entry's: `rcx` and `rdx` are scratch there, and a miss jumps to the counted body.
tally_path!(enter_tally, base: "rcx", scratch: "rdx", miss: "{counted}", []);
// The `preserve_most` entry's: only `r11` and the result's `rax` may change, and a miss reaches
// the counted body through the register save.
tally_path!(enter_tally_pm, base: "r11", scratch: "rax", miss: "2f",
    ["2:", "lea r11, [rip + {counted}]", "jmp {save}"], save = sym save_rsi);

/// The exit of a tallied event on another thread (whose activation began measured) with
/// `preserve_most`: the untimed exit, through the register save as `__instrument_exit_pm`'s
/// other modes.
///
/// # Safety
/// Only jumped to by `__instrument_exit_pm` (`rax` pushed), under the probe contract.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn exit_tally_pm() {
    core::arch::naked_asm!("lea r11, [rip + {body}]", "jmp {save}", body = sym exit_untimed, save = sym save_rax_rsi)
}

/// The measured exit with `preserve_most` that the exit's assembly path (timed_path.rs) leaves
/// to the body: through the register save, as the other modes.
///
/// # Safety
/// Only jumped to by `exit_routed_pm` (`rax` pushed), under the probe contract.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn exit_pm() {
    core::arch::naked_asm!("lea r11, [rip + {body}]", "jmp {save}", body = sym exit, save = sym save_rax_rsi)
}

/// Assembly that charges a counted call's untimed estimate, as `probes::charge_untimed` does:
/// the estimate of the event whose id is in `eax` (`untimed::PER_CALL`) goes to `$estimate` (0
/// without one, which ends here at `$done`), to the event's record at `$record`, and, unless the
/// frame at `$frame` is the sentinel's, to its event's record (found through the thread state in
/// `rdx`). `$scratch` (`$scratch32` its low half) and the flags change. The counted path and the
/// pathed entry (pathed_path.rs) both charge so.
#[rustfmt::skip]
macro_rules! charge_estimate {
    (record: $record:literal, frame: $frame:literal, estimate: $estimate:literal,
     scratch: $scratch:literal, $scratch32:literal, done: $done:literal) => {
        concat!(
            "lea ", $scratch, ", [rip + {per_call}]\n",
            "mov ", $estimate, ", qword ptr [", $scratch, " + 8 * rax]\n",
            "test ", $estimate, ", ", $estimate, "\n",
            "jz ", $done, "\n",
            "add qword ptr [", $record, " + {untimed_own}], ", $estimate, "\n",
            "mov ", $scratch32, ", dword ptr [", $frame, " + {frame_id}]\n",
            "cmp ", $scratch32, ", {sentinel}\n",
            "je ", $done, "\n",
            "shl ", $scratch, ", {record_shift}\n",
            "add ", $scratch, ", qword ptr [rdx + {records}]\n",
            "add qword ptr [", $scratch, " + {untimed_children}], ", $estimate,
        )
    };
}
pub(crate) use charge_estimate;

/// The counted path of an entry (a throttled event's call), jumped to by an entry trampoline
/// with the id in `eax`, the id slot in `rdi` and the stack as the instrumented caller left it:
/// what `probes::enter_counted` does away from a window's end, in 30 instructions instead of
/// 60 (a counted call of a hot leaf in a memory-bound program cost about 4.5 ns more than a
/// switched-off one through the Rust body, and each instruction counts there: the note of issue
/// 24). With the stack marked busy as the body marks it, it counts the call in the event's
/// record and as a counted child of the frame on top, and charges the event's untimed estimate
/// to the event and to that frame's event (`probes::charge_untimed`). With compensation on it
/// also does what `probes::counted_compensated` does but the fence: the call's cost to the
/// frame on top. Through the Rust body, that made a counted call cost 4 to 30 ns more than
/// this path without compensation (issue 23's ground truth: 5.2 against 0.4 ns beside
/// multiply-adds, 40.5 against 11.4 beside cache misses), which compensation then had to
/// estimate; and an event waiting counted in the
/// in-place queue was measured against the body's cost while its counted windows took this
/// path, which broke the telescoping of inplace (the ground truth's nested context: a parent
/// measured 37.5 ns over counting where it costs 41.4). Every other case goes to `$miss` with
/// nothing written: no thread state, a busy or full stack, an id past the records, serialized
/// mode, a waiting event that has had its share (compensation on), a count at the window's
/// end (`inplace::COUNTED_GATE`), or with callpaths a caller's node whose cached step is not
/// this event's. With callpaths the call is also counted on its node, the cached step's, with its
/// estimate (`probes::count_on_node`). On the thread that runs a shadow window of the event
/// (inplace), the call is also counted down and left pending as a bare count leaves it
/// (inline.rs's `open_shadow`); elsewhere that costs a compare with the thread's bare event.
/// The body uses `rcx`, `rdx`,
/// `r8` to `r11` and the flags; `$save` and `$restore` keep what the convention asks.
macro_rules! counted_path {
    ($name:ident, save: [$($save:literal),*], restore: [$($restore:literal),*], miss: [$($miss:literal),*]
     $(, $operand:ident = sym $target:path)*) => {
        /// A counted path (see the macro); not callable.
        ///
        /// # Safety
        /// Only jumped to by its entry trampoline, under the probe contract; the id is inside the
        /// mode table (the trampoline checked it).
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                // Compensation on: straight to the body, before any register is saved.
                "cmp qword ptr [rip + {gate}], 0",
                "je 8f",
                $($save,)*
                "mov rdx, qword ptr fs:[instrument_rt_current@TPOFF]",
                "test rdx, rdx",
                "jz 9f",
                // rcx: the depth; a busy one is past any capacity.
                "mov rcx, qword ptr [rdx + {depth}]",
                "lea r8, [rcx + 1]",
                "cmp r8, qword ptr [rdx + {frame_cap}]",
                "jae 9f",
                "cmp eax, dword ptr [rdx + {record_cap}]",
                "jae 9f",
                "mov r10, qword ptr [rip + {gate}]",
                "test r10, r10",
                "jz 9f",
                // Marked busy (depth | BUSY), then r8: the record, r9: its new count.
                "mov r8, rcx",
                "bts r8, {busy_bit}",
                "mov qword ptr [rdx + {depth}], r8",
                "mov r8, rax",
                "shl r8, {record_shift}",
                "add r8, qword ptr [rdx + {records}]",
                "mov r9, qword ptr [r8 + {counted}]",
                "add r9, 1",
                "cmp r9, r10",
                "je 2f",
                // Compensation on: an event waiting counted in inplace's queue that has had its
                // share (`inplace::waited_out`) goes to the body, which measures it again.
                "cmp byte ptr [rip + {compensating}], 0",
                "je 7f",
                "mov r11, qword ptr [rip + {costs}]",
                "test r11, r11",
                "jz 7f",
                "mov r10, rax",
                "shl r10, {cost_shift}",
                "mov r10, qword ptr [r11 + r10 + {wait_until}]",
                "test r10, r10",
                "jz 7f",
                "cmp r9, r10",
                "jae 2f",
                "7:",
                // r11: the frame on top. With callpaths (its node's address is not 0) one of
                // the steps its node cached must be this event's, else the body steps
                // (`Tree::step_counted`).
                "mov r11, rcx",
                "shl r11, {frame_shift}",
                "add r11, qword ptr [rdx + {frames}]",
                "mov r10, qword ptr [r11 + {node_at}]",
                "test r10, r10",
                "jz 1f",
                find_step!(check "r10", "1f"),
                "jmp 2f",
                "1:",
                "mov qword ptr [r8 + {counted}], r9",
                // A shadow window's call (inplace, on the thread that runs it): counted down and
                // left pending as a bare count leaves its call (inline.rs's `open_shadow`).
                "cmp eax, dword ptr [rdx + {bare_event}]",
                "jne 12f",
                "cmp dword ptr fs:[instrument_rt_current@TPOFF + {window_left}], 0",
                "je 12f",
                "sub dword ptr fs:[instrument_rt_current@TPOFF + {window_left}], 1",
                "add qword ptr fs:[instrument_rt_current@TPOFF + {pending}], 1",
                "12:",
                // One more counted child of the frame on top.
                "movabs r9, {counted_child}",
                "add qword ptr [r11 + {child_calls}], r9",
                // Compensation on: the call's in-place cost to the frame on top
                // (`compensate::counted_cost`: the event's estimate once it has one, else the
                // calibrated cost).
                "cmp byte ptr [rip + {compensating}], 0",
                "je 4f",
                "mov r9, qword ptr [rip + {costs}]",
                "test r9, r9",
                "jz 6f",
                "mov r10, rax",
                "shl r10, {cost_shift}",
                "add r9, r10",
                "cmp qword ptr [r9 + {timed}], 0",
                "je 6f",
                "mov r10, qword ptr [r9 + {counted_cost}]",
                "jmp 5f",
                "6:",
                "mov r10, qword ptr [rip + {calibrated}]",
                "5:",
                "add qword ptr [r11 + {overhead}], r10",
                "4:",
                charge_estimate!(record: "r8", frame: "r11", estimate: "r10", scratch: "r9", "r9d", done: "3f"),
                "3:",
                // Callpaths: the call and its estimate (r10, 0 without one) on the cached step's
                // node, the estimate on the caller's too (`probes::count_on_node`).
                // r8 (free now): the step's offset, found again, then the child's node (the
                // parent's address plus the distance of their indices).
                "mov r9, qword ptr [r11 + {node_at}]",
                "test r9, r9",
                "jz 0f",
                "mov r11d, dword ptr [r11 + {frame_node}]",
                find_step!("r9", "r8d", "0f"),
                child_node_at!("r11", "r8", "r8d", "dword ptr [r9 + r8 + {steps} + {step_child}]", "r11d", "r9"),
                "add qword ptr [r11 + {node_record} + {counted}], 1",
                "add qword ptr [r11 + {node_record} + {untimed_own}], r10",
                "add qword ptr [r9 + {node_record} + {untimed_children}], r10",
                "0:",
                "mov qword ptr [rdx + {depth}], rcx",
                $($restore,)*
                "xor eax, eax",
                "ret",
                // At the window's end or a waiting event's last wait: unmarked, nothing written, and
                // the body does it all.
                "2:",
                "mov qword ptr [rdx + {depth}], rcx",
                "9:",
                $($restore,)*
                "8:",
                $($miss,)*
                gate = sym crate::inplace::COUNTED_GATE,
                compensating = sym crate::compensate::ENABLED,
                calibrated = sym crate::compensate::COUNTED,
                costs = sym crate::inplace::TABLE,
                timed = const core::mem::offset_of!(crate::inplace::Cost, timed),
                counted_cost = const core::mem::offset_of!(crate::inplace::Cost, counted),
                wait_until = const core::mem::offset_of!(crate::inplace::Cost, wait_until),
                cost_shift = const size_of::<crate::inplace::Cost>().trailing_zeros(),
                overhead = const core::mem::offset_of!(Frame, overhead),
                per_call = sym crate::untimed::PER_CALL,
                node_at = const core::mem::offset_of!(Frame, node_at),
                steps = const crate::callpath::Node::STEPS_AT,
                step_child = const crate::callpath::Node::STEP_CHILD_AT,
                node_size = const crate::callpath::Node::SIZE,
                frame_node = const core::mem::offset_of!(Frame, node),
                node_record = const crate::callpath::Node::RECORD_AT,
                depth = const core::mem::offset_of!(ThreadState, depth),
                bare_event = const core::mem::offset_of!(ThreadState, bare_event),
                window_left = const instrument_contract::inline_count::WINDOW_LEFT_AT,
                pending = const instrument_contract::inline_count::PENDING_CALLS_AT,
                frame_cap = const ThreadState::FRAME_CAP_AT,
                frames = const ThreadState::FRAMES_AT,
                records = const ThreadState::RECORDS_AT,
                record_cap = const ThreadState::RECORD_CAP_AT,
                busy_bit = const instrument_live::DEPTH_BUSY.trailing_zeros(),
                record_shift = const size_of::<Record>().trailing_zeros(),
                frame_shift = const size_of::<Frame>().trailing_zeros(),
                counted = const core::mem::offset_of!(Record, counted),
                untimed_own = const core::mem::offset_of!(Record, untimed_own),
                untimed_children = const core::mem::offset_of!(Record, untimed_children),
                child_calls = const core::mem::offset_of!(Frame, child_calls),
                frame_id = const core::mem::offset_of!(Frame, id),
                counted_child = const instrument_live::COUNTED_CHILD,
                sentinel = const crate::thread::SENTINEL_ID,
                $($operand = sym $target,)*
            )
        }
    };
}

// The C entry's: `rcx`, `rdx` and `r8` to `r11` are scratch there, `rsi` holds the caller's
// stack pointer for the body, and a miss jumps to the Rust body.
counted_path!(enter_counted_fast, save: [], restore: [], miss: ["jmp {full}"], full = sym enter_throttled);
// The `preserve_most` entry's: only `r11` and the result's `rax` may change, so the others it
// uses are kept on the stack, and a miss reaches the body through the register save with the
// stack as the trampoline left it.
counted_path!(enter_counted_fast_pm,
    save: ["push rcx", "push rdx", "push r8", "push r9", "push r10"],
    restore: ["pop r10", "pop r9", "pop r8", "pop rdx", "pop rcx"],
    miss: ["lea r11, [rip + {full}]", "jmp {save}"],
    full = sym enter_throttled, save = sym save_rsi);

const _: () = assert!(size_of::<Record>().is_power_of_two(), "the counted path indexes records by a shift");
const _: () = assert!(
    size_of::<crate::inplace::Cost>().is_power_of_two(),
    "the counted path indexes the costs by a shift"
);
const _: () =
    assert!(instrument_live::DEPTH_BUSY.is_power_of_two(), "the counted path marks busy with one bit");

routed_trampoline!(#[no_mangle] pub __instrument_enter -> Opened, enter_timed_fast, enter_counted_fast, enter_tally, enter_pathed_fast, enter);
routed_trampoline!(pub(crate) exit_routed -> (), exit, exit_untimed, exit_untimed, exit_pathed_fast, exit_other);
trampoline!(__instrument_loop_exit(id_slot: *const u32, iterations: u64), loop_exit);
preserving_routed_trampoline!(#[no_mangle] pub __instrument_enter_pm -> Opened, enter_timed_fast_pm, enter_counted_fast_pm, enter_tally_pm, enter_pathed_fast_pm, enter,
    prologue: "", off: "xor eax, eax", save: save_rsi, counted: ["je {routed}"]);
preserving_routed_trampoline!(pub(crate) exit_routed_pm -> (), exit_pm, exit_untimed, exit_tally_pm, exit_pathed_fast_pm, exit_other,
    prologue: "push rax", off: "pop rax", save: save_rax_rsi,
    counted: ["jne 4f", "lea r11, [rip + {routed}]", "jmp {save}", "4:"]);
preserving_trampoline!(__instrument_loop_exit_pm(id_slot: *const u32, iterations: u64), loop_exit);

/// An exit that early placement left for the end of the pipeline (see
/// `instrument_contract::probes::ProbeSet::exit_if`) and no pass lowered: the exit when `opened`
/// is non-zero, handed on to it in `esi`. Touches the flags only before the exit's own
/// trampoline.
macro_rules! exit_if {
    ($name:ident, $exit:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`).
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name(id_slot: *const u32, opened: u32) {
            core::arch::naked_asm!("test esi, esi", "jnz {exit}", "ret", exit = sym $exit)
        }
    };
}

exit_if!(__instrument_exit_if, __instrument_exit);
exit_if!(__instrument_exit_if_pm, __instrument_exit_pm);

/// The entry points of one probe set, for the runtime's own measurements of what probes cost:
/// `set_in_use` is the set the program's modules call.
pub struct EntryPoints {
    pub enter: unsafe extern "C" fn(*const u32) -> Opened,
    /// The exit, with what the entry returned (as instrumented code calls it).
    pub exit: unsafe extern "C" fn(*const u32, Opened),
    pub loop_exit: unsafe extern "C" fn(*const u32, u64),
}

/// The `preserve_most` set, which the pass calls on x86-64 under either placement
/// (`instrument_contract::probes::set_for`); callable with the C convention too, since it
/// preserves more registers than that asks. (The C set stays for what calls it: the ABI of
/// other targets, objects instrumented before late placement called this set.)
const PRESERVING_SET: EntryPoints = EntryPoints {
    enter: __instrument_enter_pm,
    exit: __instrument_exit_pm,
    loop_exit: __instrument_loop_exit_pm,
};

/// The set the measurements call: the one the program's modules call.
pub fn set_in_use() -> &'static EntryPoints {
    &PRESERVING_SET
}

/// A landing pad's probe: passes the stack pointer to `unwind`.
///
/// # Safety
/// The probe contract (`probes.rs`).
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn __instrument_unwind(id_slot: *const u32) {
    core::arch::naked_asm!("mov rsi, rsp", "jmp {}", sym unwind)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::compensate::{COUNTED, ENABLED};
    use instrument_live::COUNTED_CHILD;
    use std::sync::atomic::Ordering::Relaxed;

    /// This test's events: no other test's records or cost-table entries reach them.
    const FIRST: u32 = 100;

    /// What `enter` charged the frame on top for a counted call of each of this test's three
    /// events, with compensation on.
    fn charged_by(enter: unsafe extern "C" fn(*const u32) -> Opened) -> Vec<u64> {
        // SAFETY: frames are plain integers, valid when zeroed.
        let mut frames: Vec<Frame> = (0..4).map(|_| unsafe { std::mem::zeroed() }).collect();
        let mut records = vec![Record::default(); FIRST as usize + 3];
        frames[0].id = crate::thread::SENTINEL_ID;
        frames[1].id = 2;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        crate::current::set(&mut ts);
        let mut charged = Vec::new();
        for id in FIRST..FIRST + 3 {
            switch::set(id, switch::COUNTED);
            let before = frames[1].overhead;
            // SAFETY: the probe contract: this thread's state is `ts` (frame 1 on top, the
            // records past every id here), and the ids are inside the mode table.
            let opened = unsafe { enter(&id) };
            assert_eq!(opened, crate::probes::NOTHING, "a counted call opens nothing");
            charged.push(frames[1].overhead - before);
        }
        crate::current::set(std::ptr::null_mut());
        assert_eq!(ts.depth, 1, "the stack unmarked");
        assert_eq!(frames[1].child_calls, 3 * COUNTED_CHILD);
        assert!(records[FIRST as usize..].iter().all(|r| r.counted == 1));
        charged
    }

    /// The counted path in assembly reads each event's own entry of the in-place cost table (a
    /// stride of 24 bytes where entries had grown to 32 once made every event but the first read
    /// another's fields, and no test saw it).
    #[test]
    fn the_counted_path_charges_each_event_its_own_in_place_counted_cost() {
        let cost = crate::inplace::cost_for_tests;
        // Two estimated events and one without an estimate (its timed cost 0), whose counted
        // call costs the calibrated counted pair. Every other field holds a large value no
        // charge below equals (and that, read as a wait, keeps the call on the assembly path).
        cost(FIRST).fill_for_tests(1000, 111, 0, 5000);
        cost(FIRST + 1).fill_for_tests(2000, 222, 0, 6000);
        cost(FIRST + 2).fill_for_tests(0, 333, 0, 7000);
        COUNTED.store(444, Relaxed);
        ENABLED.store(true, Relaxed);
        for (set, enter) in [("C", __instrument_enter as _), ("preserve_most", __instrument_enter_pm as _)] {
            assert_eq!(
                charged_by(enter),
                [111, 222, 444],
                "{set} set: each event's own cost, else the calibrated one"
            );
        }
    }

    /// In a shadow window (inplace) the counted path counts its event's calls as ever and also
    /// counts them down and leaves them pending as the bare count does, until the window's count
    /// is down; another event's counted calls only count.
    #[test]
    fn the_counted_path_counts_a_shadow_windows_calls_down_and_leaves_them_pending() {
        const SHADOWED: u32 = FIRST + 10;
        for enter in [__instrument_enter as unsafe extern "C" fn(*const u32) -> Opened, __instrument_enter_pm]
        {
            let (mut frames, _) = ThreadState::test_stacks();
            let mut records = vec![Record::default(); SHADOWED as usize + 2];
            (frames[0].id, frames[1].id) = (crate::thread::SENTINEL_ID, 2);
            let mut ts = ThreadState::over(&mut frames, &mut records);
            ts.depth = 1;
            crate::inline::open_shadow(&mut ts, SHADOWED, 2);
            crate::current::set(&mut ts);
            for id in [SHADOWED, SHADOWED + 1, SHADOWED, SHADOWED] {
                switch::set(id, switch::COUNTED);
                // SAFETY: the probe contract: this thread's state is `ts` (frame 1 on top, the
                // records past both ids), and the ids are inside the mode table.
                let opened = unsafe { enter(&id) };
                assert_eq!(opened, crate::probes::NOTHING);
            }
            crate::current::set(std::ptr::null_mut());
            let words = (crate::current::window_left(), crate::current::pending_calls());
            assert_eq!(words, (0, 2), "two counted down, the third not");
            assert_eq!(frames[1].child_calls, 4 * COUNTED_CHILD, "every call a counted child");
            assert_eq!((records[SHADOWED as usize].counted, records[SHADOWED as usize + 1].counted), (3, 1));
        }
    }
}
