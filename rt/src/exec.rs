//! exec() gives the process a new program, and its exit handlers never run: the profile is
//! written just before, marked `"ended_by": "exec"` (the program's exec calls reach here through
//! the wrappers in shim/exec.c). Measuring goes on meanwhile: if the exec fails, that profile is
//! withdrawn and the exit writes one for the whole run. Two cases write nothing: a vfork child,
//! which shares its parent's memory, and a forked child that has measured nothing since the
//! fork (the usual fork-then-exec), whose profile would only repeat its parent's.

use crate::lifecycle;
use std::path::PathBuf;
use std::sync::Mutex;

/// The profile written for an exec in progress, withdrawn if the exec fails.
static WRITTEN: Mutex<Option<PathBuf>> = Mutex::new(None);

#[no_mangle]
pub extern "C" fn __instrument_before_exec() {
    if !lifecycle::in_own_process() || lifecycle::idle_forked_child() {
        return;
    }
    *WRITTEN.lock().unwrap_or_else(|e| e.into_inner()) = lifecycle::profile_before_exec();
}

#[no_mangle]
pub extern "C" fn __instrument_exec_failed() {
    if !lifecycle::in_own_process() {
        return;
    }
    if let Some(path) = WRITTEN.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::remove_file(path);
    }
}
