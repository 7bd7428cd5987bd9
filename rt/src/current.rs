//! The calling thread's state pointer, in a thread-local slot reached with the local-exec model:
//! one `mov` from `%fs`, no call. `thread_local!` in a static library is compiled for the
//! general-dynamic model (a call to `__tls_get_addr` that the linker relaxes into a `mov`, but
//! that still makes every probe body keep its arguments in callee-saved registers across the
//! call), and stable Rust has no `-Z tls-model`. Local-exec is sound here because the runtime is
//! linked only into executables (toolchain/src/wrapper: never into `-shared` links; shared libraries
//! resolve the probes from the executable), whose static TLS block holds the slot. The slot is
//! also the start of `__instrument_thread`, which instrumented code reads with the initial-exec
//! model, and whose next word holds the state's record capacity (zero without a state: the one
//! test of the inline count, `instrument_contract::inline_count`), which `set` and `set_capacity`
//! keep.

#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".pushsection .tbss.instrument_rt_current,\"awT\",@nobits",
    ".p2align 3",
    ".hidden instrument_rt_current",
    ".globl instrument_rt_current",
    // The same slot under the name instrumented code reads it by (the inline count of
    // instrument_contract::inline_count), exported to the shared libraries' code.
    ".globl __instrument_thread",
    ".type __instrument_thread, @tls_object",
    ".size __instrument_thread, {bytes}",
    "__instrument_thread:",
    "instrument_rt_current:",
    ".zero {bytes}",
    ".popsection",
    bytes = const instrument_contract::inline_count::THREAD_BYTES,
);

/// The slot's value: null before the thread's first event and after it retired.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn get() -> *mut crate::thread::ThreadState {
    let state: *mut crate::thread::ThreadState;
    // SAFETY: reads the calling thread's own 8-byte slot, defined above in .tbss (zeroed for
    // every thread), at its link-time offset from the thread pointer; no other memory is read.
    unsafe {
        core::arch::asm!(
            "mov {}, qword ptr fs:[instrument_rt_current@TPOFF]",
            out(reg) state,
            options(nostack, readonly, preserves_flags, pure),
        )
    };
    state
}

/// Sets the slot of the calling thread, and the record capacity next to it: `state`'s, or zero
/// for null.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn set(state: *mut crate::thread::ThreadState) {
    // SAFETY: a non-null `state` is a live thread state (every caller's is).
    let capacity = unsafe { state.as_ref() }.map_or(0, |s| s.record_cap());
    // SAFETY: writes the calling thread's own slot (see `get`); nothing else is written.
    unsafe {
        core::arch::asm!(
            "mov qword ptr fs:[instrument_rt_current@TPOFF], {}",
            in(reg) state,
            options(nostack, preserves_flags),
        )
    };
    set_capacity(capacity);
}

/// Sets the record capacity the calling thread's inline counts test (its state's, after it
/// grew).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn set_capacity(capacity: u32) {
    // SAFETY: writes the 4-byte capacity word of the calling thread's block (above, the
    // contract's offset inside it); nothing else is written.
    unsafe {
        core::arch::asm!(
            "mov dword ptr fs:[instrument_rt_current@TPOFF + {at}], {capacity:e}",
            at = const instrument_contract::inline_count::THREAD_CAP_AT,
            capacity = in(reg) capacity,
            options(nostack, preserves_flags),
        )
    };
}

#[cfg(not(target_arch = "x86_64"))]
thread_local! {
    static CURRENT: std::cell::Cell<*mut crate::thread::ThreadState> =
        const { std::cell::Cell::new(std::ptr::null_mut()) };
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn get() -> *mut crate::thread::ThreadState {
    CURRENT.with(|c| c.get())
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn set(state: *mut crate::thread::ThreadState) {
    CURRENT.with(|c| c.set(state))
}

/// Nothing to keep: only x86-64 code counts inline.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn set_capacity(_capacity: u32) {}
