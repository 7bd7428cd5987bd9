//! Per-thread state: the shadow stack and the per-function records, reached through one
//! thread-local pointer. A thread gets its state at its first event (`attach`, cold: maps memory
//! and registers the thread) and gives it back when it ends (`Guard::drop`: closes open frames
//! and merges its records into the process totals), so thousands of short threads neither leak
//! nor lose data.

use crate::callpath::{self, Tree};
use crate::live::{self, Area, Region};
use crate::lock::Lock;
use crate::registry;
use std::cell::Cell;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

pub use instrument_live::{Frame, Record};

/// Anomalies, counted instead of crashing (see `instrument_profile::Totals`).
#[derive(Clone, Copy, Default, Debug)]
pub struct Counters {
    pub closed_at_exit: u64,
    pub reconciled: u64,
    pub stack_overflow: u64,
    pub unmatched_exits: u64,
    pub unregistered: u64,
    /// Throttled calls counted inline by the instrumented code (`inline.rs`).
    pub inlined: u64,
    /// Compensation: probe cost removed (scaled ticks), summed at each thread's root.
    pub overhead: u64,
    /// Time the thread waited for a core while runnable (ns, waits.rs), once it ended.
    pub waited_ns: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.closed_at_exit += o.closed_at_exit;
        self.reconciled += o.reconciled;
        self.stack_overflow += o.stack_overflow;
        self.unmatched_exits += o.unmatched_exits;
        self.unregistered += o.unregistered;
        self.inlined += o.inlined;
        self.overhead += o.overhead;
        self.waited_ns += o.waited_ns;
    }
}

/// One thread's callpaths, kept when the thread ends.
#[derive(Clone)]
pub struct ThreadPaths {
    pub thread: u64,
    pub paths: Vec<(Vec<u32>, Record)>,
    pub other: Record,
    pub overflow: u64,
    /// Steps that missed a node's cache with compensation on, and each one's charge (scaled
    /// ticks) at the end (misses.rs).
    pub misses: u64,
    pub miss_charge: u64,
}

/// One thread's records (only the events it ran), kept when the thread ends.
#[derive(Clone)]
pub struct ThreadRecords {
    pub thread: u64,
    pub records: Vec<(u32, Record)>,
}

/// A thread's state. It sits at the start of the thread's region, before the shadow stack;
/// live readers find the depth as its first word (`instrument_live::THREAD_HEADER_BYTES`).
#[repr(C)]
pub struct ThreadState {
    /// Index of the top frame; frame 0 is a sentinel that is never popped. May exceed
    /// `frame_cap` while the stack overflows: those frames are counted, not stored.
    pub depth: usize,
    /// The shadow stack: `frame_cap` frames. These five fields are private so that no safe
    /// code outside this module can point them elsewhere: the safe functions here read the
    /// arrays through them.
    frame_cap: usize,
    frames: *mut Frame,
    /// The records: `record_cap` of them (`grow_records` replaces the array).
    records: *mut Record,
    record_cap: u32,
    /// The estimates (scaled ticks) of the throttled calls the instrumented code counted inline
    /// (`instrument_contract::inline_count`) since the frame on top last changed, whose count
    /// the thread-local block holds (`current::pending_calls`; with the calls a bare window may
    /// still count down, `current::window_left`): the caller's share of those calls, which
    /// `inline::charge_pending` charges to that frame before it changes.
    pub pending_estimate: u64,
    /// The record count at which the instrumented code's inline count of the event whose
    /// inline window this thread runs calls the probe instead, ending the window
    /// (`inplace`); `u64::MAX` otherwise.
    pub inline_end: u64,
    /// Where the shadow of an inline count (mode `DOUBLE`) stores its sums, never read
    /// (`instrument_contract::inline_count::SHADOW_SINK_AT`).
    pub shadow_sink: [u64; 4],
    pub counters: Counters,
    /// The callpath graph (callpath mode), or null.
    tree: *mut Tree,
    /// Order in which the thread first measured something (0 for the first thread).
    pub index: u64,
    /// The memory of this state and the frames, and of the records.
    region: Region,
    records_region: Region,
    /// The thread's slot in the live segment, or `live::NO_SLOT`.
    slot: u32,
    /// The event of the bare window this thread runs, and `current::window_left` when its calls
    /// were last credited (`inline::credit_bare`).
    pub bare_event: u32,
    pub bare_from: u32,
    /// What the calls counted down are credited with: all of them (`u64::MAX`) in a bare
    /// window, none (0) in the shadow windows paired with it, whose counted path counts each
    /// call itself and counts it down only so as to leave the same calls pending (inline.rs).
    pub bare_mask: u64,
    /// Whether the bare window's calls are credited at its end only (a flat one's, measured
    /// against inline windows: a flush inside it then does what one inside those does), rather
    /// than at every flush (a callpath leaf's, whose calls go to the node of the frame on top).
    pub bare_at_end: bool,
    /// The callpath node credit the bare window's credited calls wait for (inline.rs).
    pub bare_pending: crate::tally::Pending,
    /// The tally window this thread runs (tally.rs): executions left in it, and the depth its
    /// executions must be called at (`tally::IDLE` and `usize::MAX` when it runs none). The
    /// entry trampolines read both.
    pub tally: i64,
    pub tally_depth: usize,
    /// `tally` when the window's executions were last credited, whether a caller's exit has
    /// (the window re-armed since), and the callpath node credit they wait for (tally.rs).
    pub tally_credited: i64,
    pub tally_rearmed: bool,
    pub tally_pending: crate::tally::Pending,
    /// The thread's process and kernel ids and its run delay when it attached (waits.rs).
    pub pid: i32,
    pub tid: i32,
    pub wait_start: u64,
}

const _: () = {
    use instrument_contract::inline_count as abi;
    use std::mem::offset_of;
    assert!(offset_of!(ThreadState, records) as u64 == abi::RECORDS_AT, "the inline count's state words");
    assert!(
        offset_of!(ThreadState, record_cap) as u64 == abi::RECORD_CAP_AT,
        "the inline count's state words"
    );
    assert!(
        offset_of!(ThreadState, pending_estimate) as u64 == abi::PENDING_ESTIMATE_AT,
        "the inline count's state words"
    );
    assert!(
        offset_of!(ThreadState, inline_end) as u64 == abi::INLINE_END_AT,
        "the inline count's state words"
    );
    assert!(
        offset_of!(ThreadState, shadow_sink) as u64 == abi::SHADOW_SINK_AT,
        "the inline count's state words"
    );
};

impl ThreadState {
    /// Where the paths in assembly (trampolines.rs, timed_path.rs) find the fields they read.
    pub const FRAME_CAP_AT: usize = std::mem::offset_of!(ThreadState, frame_cap);
    pub const FRAMES_AT: usize = std::mem::offset_of!(ThreadState, frames);
    pub const RECORDS_AT: usize = std::mem::offset_of!(ThreadState, records);
    pub const RECORD_CAP_AT: usize = std::mem::offset_of!(ThreadState, record_cap);

    /// Four zeroed frames and eight default records for `over`, as the unit tests use them.
    #[cfg(test)]
    pub fn test_stacks() -> (Vec<Frame>, Vec<Record>) {
        // SAFETY: a frame is plain integers, valid when zeroed.
        ((0..4).map(|_| unsafe { std::mem::zeroed() }).collect(), vec![Record::default(); 8])
    }

    /// A state over caller-owned frames and records, for unit tests of the exit arithmetic:
    /// depth 0, no tree, no live slot. It is never attached, retired or freed.
    #[cfg(test)]
    pub fn over(frames: &mut [Frame], records: &mut [Record]) -> ThreadState {
        let none = Region { ptr: null_mut(), len: 0, offset: 0 };
        // Its counts in the thread-local block: none yet.
        crate::current::set_pending_calls(0);
        crate::current::set_window_left(0);
        ThreadState {
            depth: 0,
            frame_cap: frames.len(),
            frames: frames.as_mut_ptr(),
            records: records.as_mut_ptr(),
            record_cap: records.len() as u32,
            pending_estimate: 0,
            inline_end: u64::MAX,
            shadow_sink: [0; 4],
            counters: Counters::default(),
            tree: null_mut(),
            index: 0,
            region: none,
            records_region: none,
            slot: live::NO_SLOT,
            bare_event: 0,
            bare_from: 0,
            bare_mask: u64::MAX,
            bare_at_end: false,
            bare_pending: crate::tally::Pending::NONE,
            tally: crate::tally::IDLE,
            tally_depth: usize::MAX,
            tally_credited: 0,
            tally_rearmed: false,
            tally_pending: crate::tally::Pending::NONE,
            pid: 0,
            tid: 0,
            wait_start: 0,
        }
    }

    /// How long the thread has waited for a core since it attached (ns, waits.rs).
    pub fn waited(&self) -> u64 {
        crate::waits::since(self.pid, self.tid, self.wait_start)
    }

    /// The calling thread became this state's owner in a forked child: a new kernel task,
    /// whose run delay starts at nothing.
    pub fn adopt_after_fork(&mut self) {
        (self.pid, self.tid) = crate::waits::own_ids();
        self.wait_start = 0;
    }

    /// Frames the shadow stack holds.
    #[inline(always)]
    pub fn frame_cap(&self) -> usize {
        self.frame_cap
    }

    /// Records the thread holds (events below it have one).
    #[inline(always)]
    pub fn record_cap(&self) -> u32 {
        self.record_cap
    }

    /// The shadow stack's first frame (the sentinel), for callpath steps that move open
    /// frames (`callpath::OpenFrames`).
    #[inline(always)]
    pub fn frames(&self) -> *mut Frame {
        self.frames
    }

    /// The records' array (`record_cap` records), for readers that cannot hold a reference
    /// across the probes they run (calibration).
    #[inline(always)]
    pub fn records(&self) -> *mut Record {
        self.records
    }

    /// The thread's callpath tree, if callpaths are on.
    ///
    /// # Safety
    /// The caller holds no other reference to the tree while the result lives (only the
    /// thread itself uses it, outside its signal handlers' probes).
    #[inline(always)]
    pub unsafe fn tree<'a>(&self) -> Option<&'a mut Tree> {
        // SAFETY: null or the tree `attach` made for this state, which lives as long as it;
        // exclusivity is the caller's.
        unsafe { self.tree.as_mut() }
    }

    /// The record of event `id`, unbounded in lifetime so that it can be held while the state
    /// is updated (the hot path charges a record and its frame together).
    ///
    /// # Safety
    /// `id < record_cap`, and the caller holds no other reference to this record while the
    /// result lives (a record array never moves while its thread runs a probe: only the thread
    /// itself grows it, in `grow_records`).
    #[inline(always)]
    pub unsafe fn record<'a>(&self, id: u32) -> &'a mut Record {
        debug_assert!(id < self.record_cap, "record {id} past {}", self.record_cap);
        // SAFETY: records[..record_cap] is this thread's mapped array (the contract).
        unsafe { &mut *self.records.add(id as usize) }
    }

    /// Frame `depth` of the shadow stack, unbounded in lifetime as `record`.
    ///
    /// # Safety
    /// `depth < frame_cap`, and the caller holds no other reference to this frame while the
    /// result lives.
    #[inline(always)]
    pub unsafe fn frame<'a>(&self, depth: usize) -> &'a mut Frame {
        debug_assert!(depth < self.frame_cap, "frame {depth} past {}", self.frame_cap);
        // SAFETY: frames[..frame_cap] is this thread's mapped stack (the contract).
        unsafe { &mut *self.frames.add(depth) }
    }
}

const STATE_BYTES: usize = instrument_live::THREAD_HEADER_BYTES as usize;
const _: () = assert!(size_of::<ThreadState>() <= STATE_BYTES);

/// The sentinel frame's id: never a real id and never `UNREGISTERED`.
pub const SENTINEL_ID: u32 = u32::MAX - 1;
/// Default shadow-stack capacity (`INSTRUMENT_STACK_FRAMES` overrides it).
pub(crate) const DEFAULT_FRAMES: usize = 1 << 16;
const MIN_RECORDS: u32 = 4096;

thread_local! {
    static RETIRED: Cell<bool> = const { Cell::new(false) };
    static GUARD: Guard = const { Guard };
}

/// The calling thread's state, or null before its first event and after it retired.
#[inline(always)]
pub fn current() -> *mut ThreadState {
    crate::current::get()
}

/// Process-wide data that threads hand over when they end.
pub struct Merged {
    pub records: Vec<Record>,
    pub counters: Counters,
    pub threads: u64,
    pub live: Vec<usize>,
    pub callpaths: Vec<ThreadPaths>,
    pub per_thread: Vec<ThreadRecords>,
}

pub static MERGED: Lock<Merged> = Lock::new(Merged {
    records: Vec::new(),
    counters: Counters {
        closed_at_exit: 0,
        reconciled: 0,
        stack_overflow: 0,
        unmatched_exits: 0,
        unregistered: 0,
        inlined: 0,
        overhead: 0,
        waited_ns: 0,
    },
    threads: 0,
    live: Vec::new(),
    callpaths: Vec::new(),
    per_thread: Vec::new(),
});
static THREAD_INDEX: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Set when the profile has been written: threads that start later are not measured.
pub static FINISHED: AtomicBool = AtomicBool::new(false);
static FRAME_CAP: AtomicUsize = AtomicUsize::new(0);

pub fn lock_merged() -> crate::lock::Guard<'static, Merged> {
    MERGED.lock()
}

fn frame_cap() -> usize {
    match FRAME_CAP.load(Relaxed) {
        0 => {
            let cap = crate::settings::number(&crate::settings::STACK_FRAMES)
                .map_or(DEFAULT_FRAMES, |n| n.min(1 << 32) as usize);
            FRAME_CAP.store(cap, Relaxed);
            cap
        }
        cap => cap,
    }
}

/// Gives the calling thread its state at its first event. Returns null when the thread has
/// retired, the profile is already written, or memory cannot be mapped.
#[cold]
#[inline(never)]
pub fn attach() -> *mut ThreadState {
    if RETIRED.with(|r| r.get()) || FINISHED.load(Relaxed) {
        return null_mut();
    }
    crate::lifecycle::start();
    let frame_cap = frame_cap();
    let record_cap = (registry::count() + 1024).next_power_of_two().clamp(MIN_RECORDS, callpath::MAX_EVENTS);
    let Some(region) = live::alloc(STATE_BYTES + frame_cap * size_of::<Frame>(), Area::Stack) else {
        return null_mut();
    };
    let Some(records) = live::alloc(record_cap as usize * size_of::<Record>(), Area::Records) else {
        // SAFETY: `region` was just allocated and nothing refers to it.
        unsafe { live::free(&region) };
        return null_mut();
    };
    let state = region.ptr.cast::<ThreadState>();
    // SAFETY: the region holds the state's STATE_BYTES, then frame_cap >= 1 frames (the
    // allocation above); it is fresh, zeroed memory of this thread.
    let frames = unsafe { region.ptr.add(STATE_BYTES).cast::<Frame>() };
    // SAFETY: as above: frame 0 is inside the region.
    unsafe {
        (*frames).id = SENTINEL_ID;
        (*frames).node = callpath::ROOT;
    }
    let index = THREAD_INDEX.fetch_add(1, Relaxed);
    let (pid, tid) = crate::waits::own_ids();
    let wait_start = crate::waits::run_delay_ns(pid, tid).unwrap_or(0);
    let slot = live::publish_thread(&region, frame_cap, &records, record_cap, index);
    // SAFETY: the region starts with STATE_BYTES for the state (at least its size, asserted
    // above), page aligned, and nothing else refers to it yet.
    unsafe {
        state.write(ThreadState {
            depth: 0,
            frame_cap,
            frames,
            records: records.ptr.cast(),
            record_cap,
            pending_estimate: 0,
            inline_end: u64::MAX,
            shadow_sink: [0; 4],
            counters: Counters::default(),
            tree: Tree::new().map_or(null_mut(), Box::into_raw),
            index,
            region,
            records_region: records,
            slot,
            bare_event: 0,
            bare_from: 0,
            bare_mask: u64::MAX,
            bare_at_end: false,
            bare_pending: crate::tally::Pending::NONE,
            tally: crate::tally::IDLE,
            tally_depth: usize::MAX,
            tally_credited: 0,
            tally_rearmed: false,
            tally_pending: crate::tally::Pending::NONE,
            pid,
            tid,
            wait_start,
        })
    };
    // SAFETY: frame 0 is inside the region (above), and the state was just written.
    unsafe {
        if let Some(tree) = (*state).tree() {
            (*frames).node_at = tree.address(callpath::ROOT);
        }
    }
    lock_merged().live.push(state as usize);
    crate::current::set(state);
    // Nothing counted or to count yet (a state the thread had before took its counts).
    crate::current::set_pending_calls(0);
    crate::current::set_window_left(0);
    GUARD.with(|_| ()); // registers the thread-exit hook
    state
}

/// Makes room for `id` in the thread's records (a module was registered after the thread
/// started). Returns false if `id` is not a registered id or memory cannot be mapped.
#[cold]
pub fn grow_records(ts: &mut ThreadState, id: u32) -> bool {
    // Records stay below MAX_EVENTS, the callpath transitions' bound and the mode table's length
    // (the inline count's one test, against the capacity, stands for the id's in the table);
    // later events are not measured.
    if id >= registry::count() || id >= callpath::MAX_EVENTS {
        return false;
    }
    let new_cap = ((id + 1).next_power_of_two() * 2).min(callpath::MAX_EVENTS);
    let Some(new) = live::alloc(new_cap as usize * size_of::<Record>(), Area::Records) else {
        return false;
    };
    let _merged = lock_merged(); // a concurrent profile writer may be reading the old array
                                 // SAFETY: the old array holds record_cap records, the new one new_cap > record_cap; they
                                 // are distinct mappings; the old one is freed once nothing (the lock is held) reads it.
    unsafe {
        std::ptr::copy_nonoverlapping(ts.records, new.ptr.cast(), ts.record_cap as usize);
        live::move_records(ts.slot, &new, new_cap);
        live::free(&ts.records_region);
    }
    ts.records = new.ptr.cast();
    ts.record_cap = new_cap;
    ts.records_region = new;
    if std::ptr::eq(crate::current::get(), ts) {
        crate::current::set_capacity(new_cap);
    }
    true
}

/// Stops measuring on the calling thread: closes its open frames at `now`, merges its records
/// into the process totals, and frees its memory.
pub fn retire_current(now: u64) {
    let state = current();
    crate::current::set(null_mut());
    RETIRED.with(|r| r.set(true));
    if state.is_null() {
        return;
    }
    // SAFETY: `state` was this thread's attached state; no probe of this thread runs now (the
    // pointer is cleared), so this is its only user until it is freed below, the last use.
    unsafe {
        let ts = &mut *state;
        crate::tally::interrupted(ts);
        crate::reconcile::close_all(ts, now);
        crate::inplace::retire(state);
        ts.counters.overhead += (*ts.frames).overhead;
        ts.counters.waited_ns += ts.waited();
        let mut merged = lock_merged();
        merge_into(&mut merged, ts);
        if let Some(paths) = thread_paths(ts) {
            merged.callpaths.push(paths);
        }
        let records = thread_records(ts);
        if !records.records.is_empty() {
            merged.per_thread.push(records);
        }
        merged.live.retain(|&p| p != state as usize);
        let used = (registry::count() as usize).min(ts.record_cap as usize);
        live::retire_thread(ts.slot, std::slice::from_raw_parts(ts.records, used));
        if !ts.tree.is_null() {
            drop(Box::from_raw(ts.tree));
        }
        let (region, records) = (ts.region, ts.records_region);
        live::free(&records);
        live::free(&region); // the state itself: the last use of `ts`
    }
}

/// In a forked child: the calling thread's state (if any) belongs to the child's new task.
pub fn adopt_current_after_fork() {
    // SAFETY: the calling thread's own state, outside any probe of it (the fork handler).
    if let Some(ts) = unsafe { current().as_mut() } {
        ts.adopt_after_fork();
    }
}

/// What closing the calling thread's frames changed, to put back (`reopen_current_frames`).
pub struct SavedFrames {
    depth: usize,
    frames: Vec<Frame>,
    records: Vec<(u32, Record)>,
    nodes: Vec<(u32, Record)>,
    counters: Counters,
}

/// Closes the calling thread's open frames at `now` for a snapshot taken while the thread goes
/// on (before an exec), saving what that changes. None when the thread measures nothing.
pub fn close_current_frames(now: u64) -> Option<SavedFrames> {
    // SAFETY: the calling thread's own state, outside any probe of it.
    let ts = unsafe { current().as_mut()? };
    // A tally window's executions are counted and its trapped frame mended before the copy, so
    // that the frames put back are whole.
    // SAFETY: this thread's attached state, outside any probe (before an exec).
    unsafe { crate::tally::interrupted(ts) };
    let stored = (ts.depth & !crate::probes::BUSY).min(ts.frame_cap - 1);
    // SAFETY: stored < frame_cap; every open frame's id is below record_cap (a frame is pushed
    // only for such ids); copies, no reference is kept.
    let frames: Vec<Frame> = (0..=stored).map(|d| unsafe { *ts.frame(d) }).collect();
    // SAFETY: as above.
    let records = frames[1..].iter().map(|f| (f.id, unsafe { *ts.record(f.id) })).collect();
    // SAFETY: the tree, when there is one, is this thread's.
    let nodes = match unsafe { ts.tree.as_mut() } {
        // SAFETY: every open frame's node was made by this tree at the frame's entry.
        Some(tree) => frames[1..].iter().map(|f| (f.node, unsafe { tree.node(f.node).record })).collect(),
        None => Vec::new(),
    };
    let saved = SavedFrames { depth: ts.depth, frames, records, nodes, counters: ts.counters };
    // SAFETY: this thread's attached state.
    unsafe { crate::reconcile::close_all(ts, now) };
    Some(saved)
}

/// Puts back what `close_current_frames` changed: the frames are open again.
pub fn reopen_current_frames(saved: SavedFrames) {
    // SAFETY: the calling thread's own state, outside any probe of it.
    let Some(ts) = (unsafe { current().as_mut() }) else { return };
    let _merged = lock_merged(); // as grow_records: a concurrent writer may be reading
                                 // SAFETY: what `close_current_frames` saved from this state: at most frame_cap frames,
                                 // records of ids below record_cap (which only grows), nodes the tree made.
    unsafe {
        std::ptr::copy_nonoverlapping(saved.frames.as_ptr(), ts.frames, saved.frames.len());
        for &(id, record) in &saved.records {
            *ts.records.add(id as usize) = record;
        }
        if let Some(tree) = ts.tree.as_mut() {
            for &(node, record) in &saved.nodes {
                tree.node(node).record = record;
            }
        }
    }
    ts.depth = saved.depth;
    ts.counters = saved.counters;
}

/// Calls counted so far on the calling thread (every event kind).
pub fn current_calls() -> u64 {
    // SAFETY: the calling thread's own state, outside any probe of it.
    let Some(ts) = (unsafe { current().as_ref() }) else { return 0 };
    let used = (registry::count() as usize).min(ts.record_cap as usize);
    (0..used)
        .map(|id| {
            // SAFETY: id < used <= record_cap.
            let r = unsafe { &*ts.records.add(id) };
            r.calls + r.counted
        })
        .sum()
}

/// Removes every trace of the calibration events from the thread (records, and what its root
/// frame accumulated), so calibration never shows up in the profile.
///
/// # Safety
/// `ts` is an attached thread's state (its frames and records mapped), with no frame but the
/// root open.
pub unsafe fn forget_calibration(ts: &mut ThreadState, ids: &[u32]) {
    // SAFETY: the caller's contract.
    unsafe { forget_records(ts, ids) };
    // SAFETY: frame 0, the root, exists in every attached state's frames.
    let root = unsafe { &mut *ts.frames };
    root.child_calls = 0;
    root.child_incl = 0;
    root.overhead = 0;
    root.comp_child = 0;
}

/// Clears the records of the hidden calibration events `ids`.
///
/// # Safety
/// `ts` is an attached thread's state, its records mapped for `record_cap` events.
pub unsafe fn forget_records(ts: &mut ThreadState, ids: &[u32]) {
    for &id in ids {
        if id < ts.record_cap {
            // SAFETY: `id` is below `record_cap` (checked), so within the records mapping.
            unsafe { *ts.records.add(id as usize) = Record::default() };
        }
    }
}

/// A thread's callpaths, when it measured any.
pub fn thread_paths(ts: &ThreadState) -> Option<ThreadPaths> {
    // SAFETY: a state's tree is null or the one `attach` made for it.
    let tree = unsafe { ts.tree.as_ref()? };
    let (paths, other) = tree.paths();
    let (misses, miss_charge) = (tree.misses.count(), tree.misses.charge());
    Some(ThreadPaths { thread: ts.index, paths, other, overflow: tree.overflow, misses, miss_charge })
}

/// A copy of the records of the events the thread ran.
pub fn thread_records(ts: &ThreadState) -> ThreadRecords {
    let used = (registry::count() as usize).min(ts.record_cap as usize);
    let records = (0..used)
        // SAFETY: id < used <= record_cap, within the state's records.
        .map(|id| (id as u32, unsafe { *ts.records.add(id) }))
        .filter(|(_, r)| r.calls + r.counted > 0)
        .collect();
    ThreadRecords { thread: ts.index, records }
}

/// Adds one thread's records and counters to `merged` (the caller holds the lock).
pub fn merge_into(merged: &mut Merged, ts: &ThreadState) {
    let used = (registry::count() as usize).min(ts.record_cap as usize);
    if merged.records.len() < used {
        merged.records.resize(used, Record::default());
    }
    for (id, total) in merged.records.iter_mut().enumerate().take(used) {
        // SAFETY: id < used <= record_cap, within the state's records.
        total.add(unsafe { &*ts.records.add(id) });
    }
    merged.counters.add(&ts.counters);
    merged.threads += 1;
}

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        // glibc runs the main thread's TLS destructors inside exit() before the atexit
        // handlers; the main thread is finished by the exit handler instead, so that C++ static
        // destructors are still measured.
        // SAFETY: plain system calls without arguments.
        if unsafe { libc::gettid() == libc::getpid() } {
            return;
        }
        retire_current(crate::clock::now());
    }
}
