//! Module registration: each instrumented module's constructor hands its program graph to the
//! runtime, which assigns process-wide ids by writing them into the module's id slots. Ids are
//! therefore never chosen at compile time, and ThinLTO backends or separately compiled modules
//! cannot collide.

use crate::bits::EventBits;
use crate::lifecycle;
use crate::lock::Lock;
use instrument_contract::table::{
    ABI_VERSION, FLAG_LATE, FLAG_LOCAL, FLAG_RECURSIVE, NONE, SMALL_MASK, SMALL_SHIFT,
};
use instrument_contract::Language;
use instrument_profile::Placement;
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

pub use instrument_contract::table::UNREGISTERED;

/// The module table as `instrument_contract::table` lays it out (pass/src/table.rs writes it).
#[repr(C)]
pub struct ModuleTable {
    abi: u32,
    functions: u32,
    loops: u32,
    sites: u32,
    ids: *mut u32,
    function_entries: *const FunctionEntry,
    loop_entries: *const LoopEntry,
    site_entries: *const SiteEntry,
    module: *const c_char,
}

#[repr(C)]
struct FunctionEntry {
    name: *const c_char,
    file: *const c_char,
    line: u32,
    flags: u32,
}

#[repr(C)]
struct LoopEntry {
    file: *const c_char,
    line: u32,
    function: u32,
    parent: u32,
    reserved: u32,
}

#[repr(C)]
struct SiteEntry {
    callee: *const c_char,
    file: *const c_char,
    line: u32,
    function: u32,
    in_loop: u32,
    reserved: u32,
}

/// What kind of event an id names, with its place in the program graph (ids, not indexes).
#[derive(Debug, Clone)]
pub enum Kind {
    Function { name: String, local: bool, language: Language, recursive: bool },
    Loop { function: u32, parent: Option<u32> },
    CallSite { function: u32, in_loop: Option<u32>, callee: String },
}

/// What the profile says about an event; copied at registration so that a module unloaded
/// with dlclose leaves nothing dangling.
#[derive(Debug, Clone)]
pub struct EventInfo {
    pub kind: Kind,
    pub file: String,
    pub line: u32,
}

static EVENTS: Lock<Vec<EventInfo>> = Lock::new(Vec::new());

pub type EventsGuard = crate::lock::Guard<'static, Vec<EventInfo>>;

/// The registry's lock, held across fork() (lifecycle.rs).
pub fn lock_events() -> EventsGuard {
    EVENTS.lock()
}
static COUNT: AtomicU32 = AtomicU32::new(0);
/// Registered modules instrumented before inlining and after optimisation.
static EARLY_MODULES: AtomicU32 = AtomicU32::new(0);
static LATE_MODULES: AtomicU32 = AtomicU32::new(0);
/// The highest small-routine threshold of the registered modules (`table::SMALL_SHIFT`).
static SMALL_THRESHOLD: AtomicU32 = AtomicU32::new(0);

/// The highest small-routine threshold the registered modules were built with: routines with
/// fewer instructions, no loop and no recursion have no events. None when every routine has them.
pub fn small_threshold() -> Option<u32> {
    Some(SMALL_THRESHOLD.load(Relaxed)).filter(|&n| n > 0)
}

/// Where the registered modules' probes were placed: `early`, `late`, `early and late` when
/// modules differ, none when no module registered a routine.
pub fn placement() -> Option<Placement> {
    match (EARLY_MODULES.load(Relaxed) > 0, LATE_MODULES.load(Relaxed) > 0) {
        (true, true) => Some(Placement::Mixed),
        (true, false) => Some(Placement::Early),
        (false, true) => Some(Placement::Late),
        (false, false) => None,
    }
}

/// Number of ids handed out so far.
pub fn count() -> u32 {
    COUNT.load(Relaxed)
}

pub fn events() -> Vec<EventInfo> {
    EVENTS.lock().clone()
}

/// One bit per event id: a routine in a recursive cycle of its module's call graph, or a loop
/// or call statement of one (their activations can nest); read by inplace.
static NESTS: EventBits = EventBits::new();

/// Whether activations of event `id` can nest (recursion the static call graph shows).
pub fn nests(id: u32) -> bool {
    NESTS.get(id)
}

/// One bit per event id: a routine whose entry counts inline when its mode says so (late
/// placement on x86-64 Linux: `instrument_contract::inline_count`); read by inplace, which
/// measures what an inline count costs against a counted probe call only for those.
static COUNTS_INLINE: EventBits = EventBits::new();

/// Whether event `id`'s code counts inline in mode `INLINE`.
pub fn counts_inline(id: u32) -> bool {
    COUNTS_INLINE.get(id)
}

/// One bit per event id: a loop (whose probes are of kind `overhead::LOOP`).
static LOOPS: EventBits = EventBits::new();

/// The probe kind of event `id` (`overhead::LOOP` or `overhead::STANDARD`).
pub fn probe_kind(id: u32) -> usize {
    if LOOPS.get(id) {
        crate::overhead::LOOP
    } else {
        crate::overhead::STANDARD
    }
}

/// Reads an id slot as the probes do.
///
/// # Safety
/// `slot` is an id slot of a module table (or a hidden event's static), aligned and live for
/// the process.
#[inline(always)]
pub unsafe fn load_id(slot: *const u32) -> u32 {
    // SAFETY: the contract; the runtime writes slots atomically at registration.
    unsafe { (*(slot as *const AtomicU32)).load(Relaxed) }
}

/// Registers a module's table (from its constructor, which the pass emits).
///
/// # Safety
/// `table` is null or a module table the pass wrote (the contract's layout), live for the
/// process.
#[no_mangle]
pub unsafe extern "C" fn __instrument_register_module(table: *const ModuleTable) {
    // SAFETY: the contract: null or a valid table.
    let table = unsafe { table.as_ref() };
    // Counted before start-up, whose calibration measures the probes the modules call.
    if let Some(table) = table.filter(|t| t.abi == ABI_VERSION && t.functions > 0) {
        // SAFETY: the table has `functions` entries, and that is not zero.
        let flags = unsafe { (*table.function_entries).flags };
        (if flags & FLAG_LATE != 0 { &LATE_MODULES } else { &EARLY_MODULES }).fetch_add(1, Relaxed);
        SMALL_THRESHOLD.fetch_max(flags >> SMALL_SHIFT & SMALL_MASK, Relaxed);
    }
    lifecycle::start();
    let Some(table) = table else { return };
    if table.abi != ABI_VERSION {
        eprintln!(
            "instrument: a module was instrumented for runtime ABI {} but this runtime speaks {}; rebuild it with this instrument",
            table.abi, ABI_VERSION
        );
        return;
    }
    let mut events = EVENTS.lock();
    let base = events.len() as u32;
    // SAFETY: the pass wrote the table's arrays with its counts (the contract).
    unsafe { read_events(table, base, &mut events) };
    // SAFETY: as above.
    unsafe { register_statics(table, base) };
    mark_kinds(&events, base);
    crate::switch::apply_selection(&events, base);
    crate::live::publish_names(&events, base as usize, false);
    let total = (table.functions + table.loops + table.sites) as usize;
    for i in 0..total {
        // SAFETY: `ids` holds one slot per event, `total` in all (the contract).
        unsafe { (*(table.ids.add(i) as *const AtomicU32)).store(base + i as u32, Relaxed) };
    }
    COUNT.store(events.len() as u32, Relaxed);
}

/// Appends the module's routines, loops and call statements (ids from `base`) to `events`.
///
/// # Safety
/// `table`'s entry arrays hold as many entries as its counts say, with valid strings (the
/// pass writes them so, see `instrument_contract::table`).
unsafe fn read_events(table: &ModuleTable, base: u32, events: &mut Vec<EventInfo>) {
    let loop_base = base + table.functions;
    let local = |index: u32, offset: u32| (index != NONE).then_some(offset + index);
    for i in 0..table.functions as usize {
        // SAFETY: below the table's count of routines (the contract).
        let e = unsafe { &*table.function_entries.add(i) };
        let kind = Kind::Function {
            // SAFETY: the entry's strings are the pass's constants, null-terminated.
            name: unsafe { text(e.name) },
            local: e.flags & FLAG_LOCAL != 0,
            language: Language::of_flags(e.flags),
            recursive: e.flags & FLAG_RECURSIVE != 0,
        };
        // SAFETY: as above.
        events.push(EventInfo { kind, file: unsafe { text(e.file) }, line: e.line });
        if e.flags & FLAG_RECURSIVE != 0 {
            NESTS.set(base + i as u32);
        }
        if e.flags & FLAG_LATE != 0 && cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            COUNTS_INLINE.set(base + i as u32);
        }
    }
    for i in 0..table.loops as usize {
        // SAFETY: below the table's count of loops; its strings are the pass's constants.
        let (e, file) = unsafe {
            let e = &*table.loop_entries.add(i);
            (e, text(e.file))
        };
        let kind = Kind::Loop { function: base + e.function, parent: local(e.parent, loop_base) };
        events.push(EventInfo { kind, file, line: e.line });
    }
    for i in 0..table.sites as usize {
        // SAFETY: below the table's count of call statements; strings as above.
        let (e, file, callee) = unsafe {
            let e = &*table.site_entries.add(i);
            (e, text(e.file), text(e.callee))
        };
        let kind =
            Kind::CallSite { function: base + e.function, in_loop: local(e.in_loop, loop_base), callee };
        events.push(EventInfo { kind, file, line: e.line });
    }
}

/// Marks the new events (from `base`) that are loops, and those that can nest (in a
/// recursive routine).
fn mark_kinds(events: &[EventInfo], base: u32) {
    for (id, event) in events.iter().enumerate().skip(base as usize) {
        if let Kind::Loop { .. } = event.kind {
            LOOPS.set(id as u32);
        }
        if let Kind::Loop { function, .. } | Kind::CallSite { function, .. } = event.kind {
            if nests(function) {
                NESTS.set(id as u32);
            }
        }
    }
}

/// The program graph for precomputed callpath transitions: each loop and call statement is a
/// static child of its innermost loop or its routine, numbered among that parent's children.
///
/// # Safety
/// As `read_events`'s.
unsafe fn register_statics(table: &ModuleTable, base: u32) {
    use crate::callpath::{add_static_child, set_static, StaticInfo, NONE as NO};
    let loop_base = base + table.functions;
    let site_base = loop_base + table.loops;
    for i in 0..table.functions {
        set_static(base + i, StaticInfo { parent: NO, local_index: NO, children: 0 });
    }
    let add = |id: u32, parent: u32| {
        let local_index = add_static_child(parent);
        set_static(id, StaticInfo { parent, local_index, children: 0 });
    };
    for i in 0..table.loops {
        // SAFETY: below the table's count of loops (the contract).
        let e = unsafe { &*table.loop_entries.add(i as usize) };
        add(loop_base + i, if e.parent == NONE { base + e.function } else { loop_base + e.parent });
    }
    for i in 0..table.sites {
        // SAFETY: below the table's count of call statements (the contract).
        let e = unsafe { &*table.site_entries.add(i as usize) };
        add(site_base + i, if e.in_loop == NONE { base + e.function } else { loop_base + e.in_loop });
    }
}

/// Registers routines that belong to the runtime itself (calibration); they never appear in a
/// profile. Returns the id of the first.
pub fn register_hidden(names: &[&str]) -> u32 {
    let mut events = EVENTS.lock();
    let base = events.len() as u32;
    for (i, name) in names.iter().enumerate() {
        events.push(EventInfo {
            kind: Kind::Function {
                name: (*name).to_string(),
                local: true,
                language: Language::Unknown,
                recursive: false,
            },
            file: String::new(),
            line: 0,
        });
        crate::callpath::set_static(
            base + i as u32,
            crate::callpath::StaticInfo {
                parent: crate::callpath::NONE,
                local_index: crate::callpath::NONE,
                children: 0,
            },
        );
    }
    crate::live::publish_names(&events, base as usize, true);
    COUNT.store(events.len() as u32, Relaxed);
    base
}

/// A C string of a module table, as text.
///
/// # Safety
/// `ptr` is null or a null-terminated string live for the call.
unsafe fn text(ptr: *const c_char) -> String {
    if ptr.is_null() {
        String::new()
    } else {
        // SAFETY: the contract.
        unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned()
    }
}
