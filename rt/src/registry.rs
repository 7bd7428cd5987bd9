//! Module registration: each instrumented module's constructor hands its function table to the
//! runtime, which assigns process-wide ids by writing them into the module's id slots. Ids are
//! therefore never chosen at compile time, and ThinLTO backends or separately compiled modules
//! cannot collide.

use crate::lifecycle;
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Mutex;

/// Mirrors `pass/src/table.rs` (ABI version 1).
#[repr(C)]
pub struct ModuleTable {
    abi: u32,
    count: u32,
    ids: *mut u32,
    functions: *const FunctionEntry,
    module: *const c_char,
}

#[repr(C)]
struct FunctionEntry {
    name: *const c_char,
    file: *const c_char,
    line: u32,
    flags: u32,
}

const ABI_VERSION: u32 = 1;
const FLAG_LOCAL: u32 = 1;
const FLAG_FORTRAN: u32 = 2;
/// The value of an id slot before its module is registered; probes seeing it count the event
/// as unregistered.
pub const UNREGISTERED: u32 = u32::MAX;

/// What the profile says about a function; copied at registration so that a module unloaded
/// with dlclose leaves nothing dangling.
#[derive(Debug, Clone)]
pub struct FunctionInfo {
    pub name: String,
    pub file: String,
    pub line: u32,
    pub local: bool,
    pub fortran: bool,
}

static FUNCTIONS: Mutex<Vec<FunctionInfo>> = Mutex::new(Vec::new());
static COUNT: AtomicU32 = AtomicU32::new(0);

/// Number of ids handed out so far.
pub fn count() -> u32 {
    COUNT.load(Relaxed)
}

pub fn functions() -> Vec<FunctionInfo> {
    FUNCTIONS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Reads an id slot as the probes do.
#[inline(always)]
pub unsafe fn load_id(slot: *const u32) -> u32 {
    (*(slot as *const AtomicU32)).load(Relaxed)
}

#[no_mangle]
pub unsafe extern "C" fn __instrument_register_module(table: *const ModuleTable) {
    lifecycle::start();
    let Some(table) = table.as_ref() else { return };
    if table.abi != ABI_VERSION {
        eprintln!(
            "instrument: a module was instrumented for runtime ABI {} but this runtime speaks {}; its routines are not measured",
            table.abi, ABI_VERSION
        );
        return;
    }
    let mut functions = FUNCTIONS.lock().unwrap_or_else(|e| e.into_inner());
    for i in 0..table.count as usize {
        let entry = &*table.functions.add(i);
        let id = functions.len() as u32;
        functions.push(FunctionInfo {
            name: text(entry.name),
            file: text(entry.file),
            line: entry.line,
            local: entry.flags & FLAG_LOCAL != 0,
            fortran: entry.flags & FLAG_FORTRAN != 0,
        });
        (*(table.ids.add(i) as *const AtomicU32)).store(id, Relaxed);
    }
    COUNT.store(functions.len() as u32, Relaxed);
}

unsafe fn text(ptr: *const c_char) -> String {
    if ptr.is_null() {
        String::new()
    } else {
        CStr::from_ptr(ptr).to_string_lossy().into_owned()
    }
}
