//! A run that ends in a fatal signal still leaves its profile. For SIGSEGV, SIGBUS, SIGFPE,
//! SIGILL, SIGABRT (crashes and abort()) and SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU (the
//! user or a batch system ending a long run), the runtime installs a handler at start-up, but
//! only where the action is still the default: a program's own handlers and ignored signals are
//! left alone, and a handler the program installs later simply replaces this one.
//!
//! Writing a profile allocates and locks, which the interrupted process may not survive (the
//! crash may be inside malloc, another thread may hold a lock). So the handler forks a writer
//! with the raw system call (no atfork handlers, which take malloc's locks): the writer takes
//! the snapshot in its own copy of memory and writes the profile under the program's pid,
//! marked with the signal. In that copy no other thread exists, so the writer allocates from
//! fresh mappings instead of malloc (`alloc`) and takes over the runtime's locks that a
//! vanished thread held (`lock`): it never waits on either. The program waits for it at most
//! `WRITER_TIMEOUT_MS` (a writer stuck anyway is killed; the profile is then missing, never
//! torn), restores the default action and re-raises the signal, so it ends exactly as it would
//! have without instrumentation.
//! `INSTRUMENT_SIGNALS=0` installs nothing.

use std::sync::atomic::{AtomicBool, Ordering};

const FATAL: [libc::c_int; 10] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGXCPU,
];
const WRITER_TIMEOUT_MS: u32 = 10_000;
/// The alternate stack of the thread that started the runtime, so that a stack overflow in it
/// can still be reported.
const ALT_STACK_BYTES: usize = 256 * 1024;

static HANDLING: AtomicBool = AtomicBool::new(false);

/// Installs the handlers (once, from the runtime's start).
pub fn install() {
    if crate::settings::flag(&crate::settings::SIGNALS) == Some(false) {
        return;
    }
    install_alt_stack();
    // SAFETY: sigaction reads, and replaces only where it is still the default, the handlers of
    // the FATAL signals; sigaction structs are plain data, for which all zeros is valid.
    unsafe {
        for signal in FATAL {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0
                || current.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_ONSTACK | libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Gives the calling thread an alternate signal stack, unless it has one.
fn install_alt_stack() {
    // SAFETY: stack_t is plain data, for which all zeros is a valid value.
    let mut current: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: only reads the current alternate stack into `current`.
    let failed = unsafe { libc::sigaltstack(std::ptr::null(), &mut current) } != 0;
    if failed || current.ss_flags & libc::SS_DISABLE == 0 {
        return; // the program (or a sanitizer) has its own
    }
    let Some(memory) = crate::pages::map(ALT_STACK_BYTES) else { return };
    let stack = libc::stack_t { ss_sp: memory.as_ptr().cast(), ss_flags: 0, ss_size: ALT_STACK_BYTES };
    // SAFETY: `memory` is a fresh mapping of ALT_STACK_BYTES, kept for the process's life.
    unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
}

extern "C" fn on_fatal_signal(signal: libc::c_int) {
    // SA_RESETHAND restored the default action; a second fatal signal (in another thread, or
    // while writing) ends the process at once.
    if !HANDLING.swap(true, Ordering::AcqRel) {
        // SAFETY: the first fatal signal's handler (HANDLING was false), as it asks.
        unsafe { write_from_a_child(signal) };
    }
    // SAFETY: restores the default disposition and raises the signal being handled.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        // Pending until this handler returns (the signal is blocked while it runs), then fatal:
        // for a fault the faulting instruction would also repeat and fault again.
        libc::raise(signal);
    }
}

/// Writes the profile from a forked copy of the process, and waits for it.
///
/// # Safety
/// Called once, from the fatal-signal handler (`HANDLING` ensures once).
unsafe fn write_from_a_child(signal: libc::c_int) {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    // SAFETY: a raw fork (async-signal-safe, unlike libc's fork with its atfork handlers); the
    // child only writes the profile with the locks and allocator made usable first.
    match unsafe { libc::syscall(libc::SYS_fork) } {
        0 => {
            // Alone in a copy of the process: locks and malloc's arenas may be held by
            // threads that do not exist here.
            crate::alloc::use_fresh_mappings();
            crate::lock::take_over_held_locks();
            crate::lifecycle::finish_after_signal(pid, signal_name(signal));
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(0) };
        }
        child if child > 0 => wait_for_writer(child as libc::pid_t),
        _ => {}
    }
}

/// Waits for the writer `child`, at most WRITER_TIMEOUT_MS, then kills it.
fn wait_for_writer(child: libc::pid_t) {
    let pause = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
    for _ in 0..WRITER_TIMEOUT_MS {
        let mut status = 0;
        // SAFETY: waits for our own child, writing its status to a local.
        if unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) } != 0 {
            return;
        }
        // SAFETY: sleeps; no memory is written (no remainder pointer).
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
    // SAFETY: kills and reaps our own child.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        libc::waitpid(child, std::ptr::null_mut(), 0);
    }
}

pub fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGXCPU => "SIGXCPU",
        _ => "a signal",
    }
}
