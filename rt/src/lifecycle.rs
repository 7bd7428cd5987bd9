//! Start-up and the end of the run. The runtime starts at the first module registration (a
//! constructor, before main) and finishes in an atexit handler registered then, which runs
//! after main returns, after `exit()` called from any depth, and after the C++ static
//! destructors registered later. Finishing closes the frames still open, merges every thread
//! and writes the profile once.

use crate::{clock, output, thread};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static START: Once = Once::new();
static CALIBRATION: Once = Once::new();
static CALIBRATING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static FINISHED_ONCE: AtomicBool = AtomicBool::new(false);

pub fn start() {
    START.call_once(|| {
        clock::init();
        crate::callpath::configure();
        unsafe { libc::atexit(at_exit) };
    });
    // Calibration attaches the calling thread, which calls start() again: skip it then.
    if !CALIBRATING.swap(true, Ordering::AcqRel) {
        CALIBRATION.call_once(crate::compensate::calibrate_if_requested);
    }
}

extern "C" fn at_exit() {
    finish();
}

pub fn finish() {
    if FINISHED_ONCE.swap(true, Ordering::AcqRel) {
        return;
    }
    let now = clock::now();
    thread::retire_current(now);
    thread::FINISHED.store(true, Ordering::Relaxed);
    let calibration = clock::calibrate();
    let snapshot = output::Snapshot::take(now);
    if let Err(message) = output::write(&snapshot, &calibration) {
        eprintln!("instrument: {message}");
    }
}
