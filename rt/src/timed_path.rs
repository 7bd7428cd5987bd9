//! The timed probe pair in assembly: a measured event's entry and exit, the pair every profile
//! is made of, without the Rust bodies' prologues. `probes::enter` and `probes::close_top` each
//! save six registers, read five global flags and reload what their compiler fences make them
//! forget: the pair cost about 9 ns beyond its two clock reads where a minimal hand-written hook
//! costs 4 (`instrument bench probes`, the note of issue 24). These paths do what those bodies
//! do in the common case, in their order, and leave every other case to them with nothing
//! written:
//!
//! - the clock is the TSC without fences (`rdtsc` at entries, `rdtscp` at exits: clock.rs;
//!   `ENTRY_GATE`, one byte set at start-up by `refresh`) and, for exits, compensation is off
//!   (`GATE`): a timed entry does the same with compensation on (its frame's overhead and
//!   compensated children start at zero either way, and a missed callpath step, the one thing
//!   compensation charges at an entry, is left to the body), while the exit's compensated
//!   charges are the body's. Compensated runs took both bodies before (SQLite's shell,
//!   compensated: `probes::enter` 1.9 % of the run's samples, 0.6 % after, the rest on this
//!   path; the compensated rule's longer timed prefix makes timed pairs ten times as many);
//! - the thread has a state, its stack is neither busy nor full, and the event has a record;
//!   calls counted inline that wait to be charged to the frame on top
//!   (`ThreadState::pending_calls`) are charged first by flush_path.rs's wrappers, as the
//!   bodies' `mark_busy` would (the path goes on after them);
//! - in callpath mode, the parent's node has the step to this event cached (`Tree::step`'s
//!   first test); frames keep their node's address (`Frame::node_at`, 0 without a tree), and
//!   nodes their cached child's, so no node is found by index here;
//! - an exit closes the frame on top, pushed for this event at this stack pointer and timed
//!   (its start before the exit's timestamp).
//!
//! The entry marks the stack busy, counts the call as a timed child of the frame on top and as
//! an activation of the event (and of its node), fills the frame and takes the timestamp last.
//! The exit takes the timestamp first, marks the stack busy, charges the frame's parent and the
//! event's record as `probes::charge` does, and hands the rest to Rust when the event reached
//! the throttling check (`probes::exit_charged`) or a recalibration is due
//! (`probes::exit_recalibrate`); otherwise it charges the node in callpath mode and pops the
//! frame. A change to `probes::push`, `probes::close_top` or `probes::charge` is a change here.
//!
//! The entries are reached through the routed trampolines of `trampolines.rs` (a measured
//! event's mode, or an id past the mode table), with the id in `eax`, the id slot in `rdi` and,
//! with the C convention, the caller's stack pointer in `rsi`. The exits are the exported
//! symbols themselves: an exit runs only when its entry opened a frame, but that frame may be
//! untimed (a throttled callpath parent's). The instrumented code hands the exit what its entry
//! returned: `TIMED` (these entries' result) reads the clock at once, anything else looks up the
//! mode first and leaves an event not measured to its routed exit; what it does not handle goes
//! to the routed exits there (`exit_routed`, or
//! `probes::exit_timed_at` with the timestamp already taken). The `preserve_most` set's paths
//! save the registers they use (its exit keeps `rax` too) and find the stack pointer above
//! their saves.

use crate::callpath::{child_node_at, find_step, Node};
#[cfg(target_arch = "x86_64")]
use crate::flush_path::flush_first;
use crate::probes::{enter, exit_charged, exit_recalibrate, exit_timed_at, Opened, TIMED};
use crate::thread::{Frame, Record, ThreadState};
use crate::trampolines::{exit_routed, exit_routed_pm};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether the exit path here may run: the clock is the TSC without fences
/// (`clock::plain_tsc`), and compensation is off. Closed until the start-up calibration decides
/// both (`refresh`), so that the probes of constructors that run earlier take the bodies.
pub static GATE: AtomicBool = AtomicBool::new(false);
/// Whether the entry path here may run: the clock is the TSC without fences, compensation on
/// or off. Closed until `refresh`, as `GATE`.
pub static ENTRY_GATE: AtomicBool = AtomicBool::new(false);

/// Sets the gates from the clock and compensation (at start-up, when compensation is decided).
pub fn refresh() {
    let plain = crate::clock::plain_tsc();
    ENTRY_GATE.store(plain, Relaxed);
    GATE.store(plain && !crate::compensate::enabled(), Relaxed);
}

/// Charges the activation of frame `r9` (inclusive ticks in `rdx`) to the record at `$rec`,
/// as `probes::charge` does without compensation; `$s` is scratch (`$s32` its low half) and
/// `$zero` holds zero.
#[rustfmt::skip]
macro_rules! charge {
    ($rec:literal, $s:literal, $s32:literal, $zero:literal) => {
        concat!(
            "add qword ptr [", $rec, " + {r_calls}], 1\n",
            "mov ", $s32, ", dword ptr [r9 + {f_child_calls}]\n",
            "add qword ptr [", $rec, " + {r_child_calls}], ", $s, "\n",
            "mov ", $s, ", rdx\n",
            "sub ", $s, ", qword ptr [r9 + {f_child_incl}]\n",
            "cmovb ", $s, ", ", $zero, "\n",
            "add qword ptr [", $rec, " + {r_excl}], ", $s, "\n",
            "sub dword ptr [", $rec, " + {r_active}], 1\n",
            "jnz 2f\n",
            "add qword ptr [", $rec, " + {r_incl}], rdx\n",
            "2:",
        )
    };
}

/// A timed entry (see the module comment). `$save` keeps the registers the convention asks
/// for, `$sp_store` stores the caller's stack pointer in the new frame (`rdi` is free there), and
/// `$miss` runs after `$restore` (or, with the gate closed, before any save) with the stack and
/// registers as the trampoline left them. Uses `rax`, `rcx`, `rdx`, `rdi`, `r9` to `r11` and the
/// flags: each register fewer is a push and a pop fewer on the `preserve_most` set's path.
macro_rules! timed_enter {
    ($name:ident, save: [$($save:literal),*], sp_store: [$($sp_store:literal),*], restore: [$($restore:literal),*],
     miss: [$($miss:literal),*] $(, $operand:ident = sym $target:path)*) => {
        /// A timed entry path (see the macro); not callable.
        ///
        /// # Safety
        /// Only jumped to by its entry trampoline for a measured event (or an id past the mode
        /// table), under the probe contract.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        pub(crate) unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                // The gate first: with it closed (a serialized clock, or before start-up) the body
                // runs as it did through the trampoline, with nothing saved and restored.
                "cmp byte ptr [rip + {gate}], 0",
                "je 8f",
                $($save,)*
                "mov r10, qword ptr fs:[instrument_rt_current@TPOFF]",
                "test r10, r10",
                "jz 9f",
                // Calls counted inline since the frame on top last changed: charged to it first
                // (flush_path.rs), then on here.
                flush_first!(check),
                // rcx: the depth (a busy one is past any capacity; rdx the new one, for the
                // test), r9: the frame on top.
                "mov rcx, qword ptr [r10 + {depth}]",
                "lea rdx, [rcx + 1]",
                "cmp rdx, qword ptr [r10 + {frame_cap}]",
                "jae 9f",
                "cmp eax, dword ptr [r10 + {record_cap}]",
                "jae 9f",
                "mov r9, rcx", "shl r9, {frame_shift}",
                "add r9, qword ptr [r10 + {frames}]",
                // r11: the new frame's node, rdx: its address (both 0 without a tree, which the
                // frame on top's node address says).
                "xor r11d, r11d",
                "mov rdx, qword ptr [r9 + {f_node_at}]",
                "test rdx, rdx",
                "jnz 5f",
                "4:",
                "mov rdi, rcx",
                "bts rdi, {busy_bit}",
                "mov qword ptr [r10 + {depth}], rdi",
                "add qword ptr [r9 + {f_child_calls}], {timed_child}",
                "mov rdi, rax",
                "shl rdi, {record_shift}",
                "add rdi, qword ptr [r10 + {records}]",
                "add dword ptr [rdi + {r_active}], 1",
                "test rdx, rdx",
                "jz 6f",
                "add dword ptr [rdx + {node_record} + {r_active}], 1",
                "6:",
                "mov dword ptr [r9 + {frame_size} + {f_id}], eax",
                "mov dword ptr [r9 + {frame_size} + {f_node}], r11d",
                "mov qword ptr [r9 + {frame_size} + {f_node_at}], rdx",
                "xor eax, eax",
                "mov qword ptr [r9 + {frame_size} + {f_child_calls}], rax",
                $($sp_store,)*
                "mov qword ptr [r9 + {frame_size} + {f_child_incl}], rax",
                "mov qword ptr [r9 + {frame_size} + {f_overhead}], rax",
                "mov qword ptr [r9 + {frame_size} + {f_comp_child}], rax",
                "rdtsc",
                "shl rdx, 32",
                "or rax, rdx",
                "mov qword ptr [r9 + {frame_size} + {f_start}], rax",
                "inc rcx",
                "mov qword ptr [r10 + {depth}], rcx",
                "mov eax, {timed}",
                $($restore,)*
                "ret",
                // Callpath mode: a step the parent's node cached (r11: its offset), else the
                // body (rdi is the C set's argument until then). The child's node address is the
                // parent's plus the distance of their indices.
                "5:",
                "mov rdx, qword ptr [r9 + {f_node_at}]",
                find_step!("rdx", "r11d", "9f"),
                "mov r11d, dword ptr [rdx + r11 + {steps} + {step_child}]",
                child_node_at!("rdx", "rdi", "edi", "r11d", "dword ptr [r9 + {f_node}]", "rdx"),
                "jmp 4b",
                // The flush; calls it could not take (a busy or full stack) go to the body.
                flush_first!(retry),
                "9:",
                $($restore,)*
                "8:",
                $($miss,)*
                gate = sym ENTRY_GATE,
                flush = sym crate::flush_path::flush_entering,
                depth = const core::mem::offset_of!(ThreadState, depth),
                frame_cap = const ThreadState::FRAME_CAP_AT,
                pending = const instrument_contract::inline_count::PENDING_CALLS_AT,
                frames = const ThreadState::FRAMES_AT,
                records = const ThreadState::RECORDS_AT,
                record_cap = const ThreadState::RECORD_CAP_AT,
                node_record = const Node::RECORD_AT,
                steps = const Node::STEPS_AT,
                step_child = const Node::STEP_CHILD_AT,
                node_size = const Node::SIZE,
                busy_bit = const instrument_live::DEPTH_BUSY.trailing_zeros(),
                record_shift = const size_of::<Record>().trailing_zeros(),
                frame_size = const size_of::<Frame>(),
                frame_shift = const size_of::<Frame>().trailing_zeros(),
                f_id = const core::mem::offset_of!(Frame, id),
                f_node = const core::mem::offset_of!(Frame, node),
                f_node_at = const core::mem::offset_of!(Frame, node_at),
                f_child_calls = const core::mem::offset_of!(Frame, child_calls),
                f_sp = const core::mem::offset_of!(Frame, sp),
                f_start = const core::mem::offset_of!(Frame, start),
                f_child_incl = const core::mem::offset_of!(Frame, child_incl),
                f_overhead = const core::mem::offset_of!(Frame, overhead),
                f_comp_child = const core::mem::offset_of!(Frame, comp_child),
                r_active = const core::mem::offset_of!(Record, active),
                timed_child = const instrument_live::TIMED_CHILD,
                timed = const TIMED,
                $($operand = sym $target,)*
            )
        }
    };
}

/// A timed exit (see the module comment). `$early_miss` runs when the gate is closed, before
/// anything is saved; `$save_early` keeps what the clock read clobbers, `$save` the rest of what the
/// convention asks for, and `$sp` puts the caller's stack pointer in `rsi`. `$restore` undoes
/// both saves, `$done` returns, `$tail` finishes through the Rust function in `r11` (arguments
/// in `rdi`, `rsi`, `rdx`), and `$late_miss` leaves to the bodies a case found after the
/// clock read (the timestamp in `rax`); `$mode_miss` undoes the early saves and leaves an event
/// not measured to its routed exit before the clock read. Uses `rax`, `rcx`, `rdx`, `rsi`, `rdi`,
/// `r8` to `r11` and the flags.
macro_rules! timed_exit {
    ($name:ident, prologue: [$($prologue:literal),*], save_early: [$($save_early:literal),*], save: [$($save:literal),*],
     sp: [$($sp:literal),*], restore: [$($restore:literal),*], done: [$($done:literal),*],
     tail: [$($tail:literal),*], late_miss: [$($late_miss:literal),*],
     mode_miss: [$($mode_miss:literal),*],
     early_miss: [$($early_miss:literal),*] $(, $operand:ident = sym $target:path)*) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name(id_slot: *const u32, opened: Opened) {
            core::arch::naked_asm!(
                // The gate first: with it closed the exit is the routed one it was, with
                // nothing saved and restored.
                "cmp byte ptr [rip + {gate}], 0",
                "je 8f",
                $($prologue,)*
                $($save_early,)*
                // esi: what the entry returned. A frame it timed is closed from the clock read
                // on; any other (an untimed frame, or code of an older pass, which passes none)
                // looks up the mode first (12).
                "cmp esi, {timed}",
                "jne 12f",
                // rax: the timestamp, r11d: the id.
                "10:",
                "rdtscp",
                "shl rdx, 32",
                "or rax, rdx",
                "mov r11d, dword ptr [rdi]",
                $($save,)*
                $($sp,)*
                "mov r10, qword ptr fs:[instrument_rt_current@TPOFF]",
                "test r10, r10",
                "jz 7f",
                // Calls counted inline: charged to the frame on top first, their flush in the
                // time of the frame below (flush_path.rs).
                flush_first!(check),
                // rcx: the depth (a busy one is past any capacity), r9: the frame on top.
                "mov rcx, qword ptr [r10 + {depth}]",
                "cmp rcx, qword ptr [r10 + {frame_cap}]",
                "jae 9f",
                "mov r9, rcx", "shl r9, {frame_shift}",
                "add r9, qword ptr [r10 + {frames}]",
                "cmp dword ptr [r9 + {f_id}], r11d",
                "jne 9f",
                "cmp qword ptr [r9 + {f_sp}], rsi",
                "jne 9f",
                // rdx: the inclusive ticks. A start after the timestamp is a frame kept on the
                // stack untimed (`UNTIMED_START`: a throttled callpath parent's, or a pathed
                // window's), or a clock read on another core behind this one: the body's.
                "mov rdx, rax",
                "sub rdx, qword ptr [r9 + {f_start}]",
                "jb 9f",
                // Closed from here on: rsi and rdi are free. r8: zero.
                "mov rdi, rcx",
                "bts rdi, {busy_bit}",
                "mov qword ptr [r10 + {depth}], rdi",
                "xor r8d, r8d",
                "add qword ptr [r9 - {parent_child_incl}], rdx",
                "mov edi, r11d",
                "shl rdi, {record_shift}",
                "add rdi, qword ptr [r10 + {records}]",
                charge!("rdi", "rsi", "esi", "r8"),
                // The counted children, saturating (the throttling decision's share).
                "mov esi, dword ptr [r9 + {f_child_calls} + 4]",
                "test esi, esi",
                "jz 1f",
                "add esi, dword ptr [rdi + {r_counted_children}]",
                "sbb r8d, r8d",
                "or esi, r8d",
                "mov dword ptr [rdi + {r_counted_children}], esi",
                "1:",
                "mov rsi, qword ptr [rdi + {r_calls}]",
                "cmp rsi, qword ptr [rip + {throttle_calls}]",
                "jae 6f",
                "cmp qword ptr [r9 + {f_node_at}], 0",
                "jne 5f",
                "4:",
                "dec rcx",
                "mov qword ptr [r10 + {depth}], rcx",
                "cmp rax, qword ptr [rip + {recalibrate_at}]",
                "jae 3f",
                "7:",
                $($restore,)*
                $($done,)*
                // Callpath mode: the frame's node, charged as the record.
                "5:",
                "mov rsi, qword ptr [r9 + {f_node_at}]",
                "add rsi, {node_record}",
                "xor r8d, r8d",
                charge!("rsi", "rdi", "edi", "r8"),
                "jmp 4b",
                // The throttling check is due: the rest in Rust.
                "6:",
                "mov rdi, r10",
                "mov rsi, rcx",
                "mov rdx, rax",
                "lea r11, [rip + {charged}]",
                $($tail,)*
                // A recalibration is due, the frame popped.
                "3:",
                "mov rdi, r10",
                "mov rsi, rax",
                "lea r11, [rip + {recalibrate}]",
                $($tail,)*
                // An event in the mode table but not measured (a throttled callpath parent's
                // frame kept untimed, or an event switched since its entry) exits through its
                // routed path, which reads no clock for an untimed frame: an `rdtscp` waits for
                // all the work before it, and the program's loads in flight with it. Looked up
                // only here, since the two dependent loads delayed every timed exit's clock read
                // as much: with them first (and two more saves in the entry) the leaf's pair
                // read 0.009 to 0.107 higher over the hand hook's at each of four paddings of the
                // paths on an EPYC (driver/src/bench_hook.rs's program, three processes each).
                "12:",
                "mov r11d, dword ptr [rdi]",
                "cmp r11d, {max}",
                "jae 10b",
                "lea rcx, [rip + {modes}]",
                "cmp byte ptr [rcx + r11], 0",
                "je 10b",
                $($mode_miss,)*
                // The flush; calls it could not take (a busy or full stack) go to the body.
                flush_first!(retry),
                "9:",
                $($late_miss,)*
                "8:",
                $($early_miss,)*
                gate = sym GATE,
                timed = const TIMED,
                flush = sym crate::flush_path::flush_leaving,
                max = const crate::switch::TABLE_LEN,
                modes = sym crate::switch::MODES,
                throttle_calls = sym crate::switch::THROTTLE_CALLS,
                recalibrate_at = sym crate::recalibrate::NEXT,
                charged = sym exit_charged,
                recalibrate = sym exit_recalibrate,
                depth = const core::mem::offset_of!(ThreadState, depth),
                frame_cap = const ThreadState::FRAME_CAP_AT,
                pending = const instrument_contract::inline_count::PENDING_CALLS_AT,
                frames = const ThreadState::FRAMES_AT,
                records = const ThreadState::RECORDS_AT,
                node_record = const Node::RECORD_AT,
                busy_bit = const instrument_live::DEPTH_BUSY.trailing_zeros(),
                record_shift = const size_of::<Record>().trailing_zeros(),
                frame_shift = const size_of::<Frame>().trailing_zeros(),
                parent_child_incl = const size_of::<Frame>() - core::mem::offset_of!(Frame, child_incl),
                f_id = const core::mem::offset_of!(Frame, id),
                f_node_at = const core::mem::offset_of!(Frame, node_at),
                f_child_calls = const core::mem::offset_of!(Frame, child_calls),
                f_sp = const core::mem::offset_of!(Frame, sp),
                f_start = const core::mem::offset_of!(Frame, start),
                f_child_incl = const core::mem::offset_of!(Frame, child_incl),
                r_calls = const core::mem::offset_of!(Record, calls),
                r_child_calls = const core::mem::offset_of!(Record, child_calls),
                r_excl = const core::mem::offset_of!(Record, excl),
                r_incl = const core::mem::offset_of!(Record, incl),
                r_active = const core::mem::offset_of!(Record, active),
                r_counted_children = const core::mem::offset_of!(Record, counted_children),
                $($operand = sym $target,)*
            )
        }
    };
}

const _: () = assert!(size_of::<Record>().is_power_of_two(), "the paths index records by a shift");
const _: () = assert!(size_of::<Frame>().is_power_of_two(), "the paths index frames by a shift");
const _: () = assert!(instrument_live::DEPTH_BUSY.is_power_of_two(), "the paths mark busy with one bit");
const _: () = assert!(
    core::mem::offset_of!(Frame, child_calls) % 8 == 0,
    "the exit reads a frame's counted children as the high half of child_calls"
);

// The C set's: every register the paths use is scratch, a miss jumps to the body (the exit's,
// after its clock read, with the timestamp), and a Rust tail is a tail call.
timed_enter!(enter_timed_fast, save: [], sp_store: ["mov qword ptr [r9 + {frame_size} + {f_sp}], rsi"],
    restore: [], miss: ["jmp {full}"], full = sym enter);
timed_exit!(__instrument_exit, prologue: [], save_early: [], save: [], sp: ["mov rsi, rsp"], restore: [],
    done: ["ret"], tail: ["jmp r11"], late_miss: ["mov rdx, rax", "jmp {timed_at}"],
    mode_miss: ["jmp {routed}"], early_miss: ["jmp {routed}"], routed = sym exit_routed,
    timed_at = sym exit_timed_at);

/// The C set's entry for a measured event (`instrument_contract::probes::C.enter_measured`): the
/// inline count's code has read the mode byte as measured, so this skips the trampoline's mode
/// lookup and goes to the timed entry with what it expects (the id in `eax`, the caller's stack
/// pointer in `rsi`). An event whose mode changed meanwhile is timed once more, as an activation
/// that began before the change.
///
/// # Safety
/// The probe contract (`probes.rs`): called by instrumented code with an id slot.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn __instrument_enter_measured(id_slot: *const u32) -> crate::probes::Opened {
    core::arch::naked_asm!("mov eax, dword ptr [rdi]", "mov rsi, rsp", "jmp {timed}", timed = sym enter_timed_fast)
}

// The `preserve_most` set's: only `r11` and the entry's result may change, so the others the
// paths use are kept on the stack (the exit's trampoline has pushed `rax`); a miss reaches the
// body through the trampolines' register save, with the stack as the trampoline left it (the
// exit's body then reads the clock itself), and a Rust tail is called with the stack aligned
// (the return address and eight pushes).
timed_enter!(enter_timed_fast_pm,
    save: ["push rcx", "push rdx", "push rdi", "push r9", "push r10"],
    sp_store: ["lea rdi, [rsp + 40]", "mov qword ptr [r9 + {frame_size} + {f_sp}], rdi"],
    restore: ["pop r10", "pop r9", "pop rdi", "pop rdx", "pop rcx"],
    miss: ["lea r11, [rip + {full}]", "jmp {save}"],
    full = sym enter, save = sym crate::trampolines::save_rsi);
timed_exit!(__instrument_exit_pm,
    prologue: ["push rax"],
    save_early: ["push rdx", "push rcx"],
    save: ["push rsi", "push rdi", "push r8", "push r9", "push r10"],
    sp: ["lea rsi, [rsp + 64]"],
    restore: ["pop r10", "pop r9", "pop r8", "pop rdi", "pop rsi", "pop rcx", "pop rdx"],
    done: ["pop rax", "ret"],
    tail: ["sub rsp, 8", "call r11", "add rsp, 8",
        "pop r10", "pop r9", "pop r8", "pop rdi", "pop rsi", "pop rcx", "pop rdx", "pop rax", "ret"],
    late_miss: ["pop r10", "pop r9", "pop r8", "pop rdi", "pop rsi", "pop rcx", "pop rdx", "pop rax",
        "jmp {routed}"],
    mode_miss: ["pop rcx", "pop rdx", "pop rax", "jmp {routed}"],
    early_miss: ["jmp {routed}"],
    routed = sym exit_routed_pm);

/// The `preserve_most` set's entry for a measured event (`PRESERVING.enter_measured`), as the C
/// set's: the id in `eax` (the result register, free under the convention) and on to the timed
/// entry, which saves what it uses and finds the caller's stack pointer above its saves, as
/// when `__instrument_enter_pm` jumps to it.
///
/// # Safety
/// The probe contract (`probes.rs`): called by instrumented code with an id slot.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn __instrument_enter_measured_pm(id_slot: *const u32) -> crate::probes::Opened {
    core::arch::naked_asm!("mov eax, dword ptr [rdi]", "jmp {timed}", timed = sym enter_timed_fast_pm)
}
