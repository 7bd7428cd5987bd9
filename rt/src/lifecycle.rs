//! Start-up and the end of the run. The runtime starts at the first module registration (a
//! constructor, before main) and finishes in an atexit handler registered then, which runs
//! after main returns, after `exit()` called from any depth, and after the C++ static
//! destructors registered later. Finishing closes the frames still open, merges every thread
//! and writes the profile once. A fatal signal writes it from a forked writer (`signals`); a
//! child of `fork()` writes its own profile at its exit, holding what its parent measured
//! before the fork and what it measured itself (as TAU's TAU_INCLUDE_PARENT_DATA), marked with
//! the parent's pid. Before an exec the profile is written as at the end (`exec`).

use crate::{clock, live, output, thread};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Once;

static START: Once = Once::new();
static CALIBRATION: Once = Once::new();
static CALIBRATING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static FINISHED_ONCE: AtomicBool = AtomicBool::new(false);
/// The pid of the process this one was forked from (0: not a forked child).
static FORKED_FROM: AtomicU32 = AtomicU32::new(0);
/// This process's pid, set at start and in a forked child: a vfork child (which shares the
/// parent's memory and runs no atfork handler) sees another.
static PID: AtomicU32 = AtomicU32::new(0);
/// A forked child's calls counted at the fork, to tell whether it measured anything itself.
static CALLS_AT_FORK: AtomicU64 = AtomicU64::new(0);

/// How the run ended, for the profile.
pub struct Ending {
    pub pid: u32,
    /// A signal's name, or "exec".
    pub ended_by: Option<&'static str>,
    pub forked_from: Option<u32>,
}

pub fn start() {
    START.call_once(|| {
        PID.store(std::process::id(), Ordering::Relaxed);
        output::remember_start();
        clock::init();
        crate::mpi::from_environment();
        live::init(crate::switch::table());
        crate::callpath::configure();
        crate::switch::configure();
        // SAFETY: the handlers are functions of this crate, with the signatures libc expects,
        // that live for the process.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(Some(before_fork), Some(after_fork_in_parent), Some(after_fork_in_child));
        }
        crate::signals::install();
    });
    // Calibration attaches the calling thread, which calls start() again: skip it then.
    if !CALIBRATING.swap(true, Ordering::AcqRel) {
        CALIBRATION.call_once(crate::overhead::measure);
    }
}

extern "C" fn at_exit() {
    finish();
}

pub fn finish() {
    finish_as(Ending { pid: std::process::id(), ended_by: None, forked_from: forked_from() });
}

/// In the writer forked by the fatal-signal handler: the profile of process `pid`.
pub fn finish_after_signal(pid: u32, signal: &'static str) {
    finish_as(Ending { pid, ended_by: Some(signal), forked_from: forked_from() });
}

/// Before an exec: writes the profile of the run so far, with the calling thread's open frames
/// closed now, and returns its path. Measuring goes on unchanged (the frames are open again
/// afterwards), since the exec may fail. None if the profile is written already or cannot be.
pub fn profile_before_exec() -> Option<PathBuf> {
    if FINISHED_ONCE.load(Ordering::Acquire) {
        return None;
    }
    let now = clock::now();
    let saved = thread::close_current_frames(now);
    crate::inplace::resume_waiting();
    let calibration = clock::calibrate();
    let snapshot = output::Snapshot::take(now);
    let ending = Ending { pid: std::process::id(), ended_by: Some("exec"), forked_from: forked_from() };
    let written = output::write(&snapshot, &calibration, &ending);
    if let Some(saved) = saved {
        thread::reopen_current_frames(saved);
    }
    written.map_err(|message| eprintln!("instrument: {message}")).ok()
}

/// False in a vfork child, which shares this process's memory and must not touch it.
pub fn in_own_process() -> bool {
    PID.load(Ordering::Relaxed) == std::process::id()
}

/// True in a forked child that has measured nothing since the fork (a fork followed by an
/// exec): its profile would only repeat the parent's.
pub fn idle_forked_child() -> bool {
    forked_from().is_some() && thread::current_calls() == CALLS_AT_FORK.load(Ordering::Relaxed)
}

fn forked_from() -> Option<u32> {
    Some(FORKED_FROM.load(Ordering::Relaxed)).filter(|&p| p != 0)
}

fn finish_as(ending: Ending) {
    if FINISHED_ONCE.swap(true, Ordering::AcqRel) {
        return;
    }
    let now = clock::now();
    thread::retire_current(now);
    crate::inplace::resume_waiting();
    thread::FINISHED.store(true, Ordering::Relaxed);
    let calibration = clock::calibrate();
    let snapshot = output::Snapshot::take(now);
    if let Err(message) = output::write(&snapshot, &calibration, &ending) {
        eprintln!("instrument: {message}");
    }
    live::finished();
}

thread_local! {
    /// The runtime's locks, held by the forking thread across fork() so that the child never
    /// inherits one taken by a thread that does not exist in it.
    static FORK_LOCKS: RefCell<Option<ForkLocks>> = const { RefCell::new(None) };
}

type ForkLocks = (
    crate::lock::Guard<'static, thread::Merged>,
    crate::registry::EventsGuard,
    crate::lock::Guard<'static, live::Space>,
);

extern "C" fn before_fork() {
    let mut locks = (thread::lock_merged(), crate::registry::lock_events(), live::lock_space());
    live::before_fork(&mut locks.2);
    FORK_LOCKS.with(|l| *l.borrow_mut() = Some(locks));
}

extern "C" fn after_fork_in_parent() {
    if let Some(mut locks) = FORK_LOCKS.with(|l| l.borrow_mut().take()) {
        live::after_fork_in_parent(&mut locks.2);
    }
}

extern "C" fn after_fork_in_child() {
    // SAFETY: a system call without arguments.
    FORKED_FROM.store(unsafe { libc::getppid() } as u32, Ordering::Relaxed);
    PID.store(std::process::id(), Ordering::Relaxed);
    thread::adopt_current_after_fork();
    if let Some(mut locks) = FORK_LOCKS.with(|l| l.borrow_mut().take()) {
        live::after_fork_in_child(&mut locks.2);
    }
    CALLS_AT_FORK.store(thread::current_calls(), Ordering::Relaxed);
}
