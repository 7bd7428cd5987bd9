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
//! keep. The block's last two words are the thread's counts that wait for the runtime: the calls
//! a bare window may still count down and the calls counted inline or barely since the frame on
//! top last changed (`window_left`, `pending_calls`). They are the thread's, not its state's:
//! the runtime takes them (inline.rs) before the thread's state changes, and the instrumented
//! code reaches them from the thread pointer without loading the state's address, which a count
//! that runs where nothing else would pays for (the contract's module comment).

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

/// A word of the calling thread's block at offset `$at`, of type `$ty` (`$ptr` its size in
/// assembly, `$reg` the register modifier for it): its getter and setter.
#[cfg(target_arch = "x86_64")]
macro_rules! block_word {
    ($get:ident, $set:ident, $ty:ty, $at:path, $ptr:literal, $reg:literal, $doc:literal) => {
        #[doc = $doc]
        #[inline(always)]
        pub fn $get() -> $ty {
            let word: $ty;
            // SAFETY: reads a word of the calling thread's own block (above, the contract's
            // offset inside it), at its link-time offset from the thread pointer.
            unsafe {
                core::arch::asm!(
                    concat!("mov {:", $reg, "}, ", $ptr, " ptr fs:[instrument_rt_current@TPOFF + {at}]"),
                    out(reg) word,
                    at = const $at,
                    options(nostack, readonly, preserves_flags),
                )
            };
            word
        }

        #[doc = concat!("Sets `", stringify!($get), "`.")]
        #[inline(always)]
        pub fn $set(word: $ty) {
            // SAFETY: writes a word of the calling thread's own block (see the getter); nothing
            // else is written.
            unsafe {
                core::arch::asm!(
                    concat!("mov ", $ptr, " ptr fs:[instrument_rt_current@TPOFF + {at}], {:", $reg, "}"),
                    in(reg) word,
                    at = const $at,
                    options(nostack, preserves_flags),
                )
            };
        }
    };
}

#[cfg(target_arch = "x86_64")]
block_word!(
    pending_calls,
    set_pending_calls,
    u64,
    instrument_contract::inline_count::PENDING_CALLS_AT,
    "qword",
    "r",
    "The calls counted inline or barely on this thread since the frame on top last changed: the \
     caller's share, which `inline::charge_pending` charges to that frame before it changes."
);

#[cfg(target_arch = "x86_64")]
block_word!(
    window_left,
    set_window_left,
    u32,
    instrument_contract::inline_count::WINDOW_LEFT_AT,
    "dword",
    "e",
    "The calls the instrumented code's bare count may still count on this thread: nonzero only \
     while it runs a bare window of inplace (`ThreadState::bare_event`)."
);

/// Elsewhere no code counts inline: the two words are thread-locals of the runtime's own, a
/// getter and a setter each (see x86-64's `block_word`).
#[cfg(not(target_arch = "x86_64"))]
macro_rules! local_word {
    ($get:ident, $set:ident, $ty:ty, $cell:ident) => {
        thread_local! {
            static $cell: std::cell::Cell<$ty> = const { std::cell::Cell::new(0) };
        }

        /// See x86-64's.
        pub fn $get() -> $ty {
            $cell.with(|c| c.get())
        }

        /// See x86-64's.
        pub fn $set(word: $ty) {
            $cell.with(|c| c.set(word))
        }
    };
}

#[cfg(not(target_arch = "x86_64"))]
local_word!(pending_calls, set_pending_calls, u64, PENDING_CALLS);
#[cfg(not(target_arch = "x86_64"))]
local_word!(window_left, set_window_left, u32, WINDOW_LEFT);

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
