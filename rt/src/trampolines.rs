//! The probes' entry points, the symbols instrumented code calls: naked trampolines that read
//! the event's id and mode byte, return at once for a switched-off event, add the caller's
//! stack pointer (the identity of the machine frame, used only when a longjmp or an unwind has
//! skipped exits) and jump to the bodies in `probes.rs` (or `reconcile.rs`, for a landing pad).
//! They hold no logic of their own beyond that routing, so the bodies can be read as the hot
//! path in one file. Every entry point is called under the probe contract stated in `probes.rs`.

use crate::probes::{enter, enter_throttled, exit, exit_untimed, loop_exit, Opened};
use crate::reconcile::unwind;
use crate::switch;

/// A probe's entry point: a trampoline that passes the caller's stack pointer in register
/// `$sp` and jumps to `$body`. A probe of a switched-off event returns from here, after two
/// loads (its id and its mode byte, see `switch`): no prologue, no thread state, no clock. An
/// event is switched off when its module registers, before any of its probes run, so no
/// activation of it is open.
macro_rules! trampoline {
    ($name:ident($($arg:ident: $ty:ty),*), $sp:literal, $body:path) => {
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
                concat!("mov ", $sp, ", rsp"),
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

/// The routine and call-statement probes' trampolines also route by mode, so that the paths of
/// a throttled event (counted entry, exit with nothing to close) are small functions that save
/// no registers, instead of the timed bodies' prologues (six pushes and pops each way).
/// A measured event (mode 0) goes to `$body` after one test; a switched-off one returns
/// (`NOTHING` opened, for the entry); a counted one goes to `$routed`, and any other mode
/// (lenient) to `$other`.
macro_rules! routed_trampoline {
    ($name:ident -> $ret:ty, $body:path, $routed:path, $other:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (`probes.rs`): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name(id_slot: *const u32) -> $ret {
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
                "cmp ecx, {counted}",
                "je {routed}",
                "cmp ecx, {off}",
                "jne {other}",
                "xor eax, eax",
                "ret",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                counted = const switch::COUNTED,
                off = const switch::OFF,
                routed = sym $routed,
                other = sym $other,
                body = sym $body,
            )
        }
    };
}

const _: () = assert!(switch::MEASURED == 0, "the routed trampolines test the measured mode as zero");
routed_trampoline!(__instrument_enter -> Opened, enter, enter_throttled, enter);
routed_trampoline!(__instrument_exit -> (), exit, exit_untimed, exit_untimed);
trampoline!(__instrument_loop_exit(id_slot: *const u32, iterations: u64), "rdx", loop_exit);

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
