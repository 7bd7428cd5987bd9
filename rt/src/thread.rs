//! Per-thread state: the shadow stack and the per-function records, reached through one
//! thread-local pointer. A thread gets its state at its first event (`attach`, cold: maps memory
//! and registers the thread) and gives it back when it ends (`Guard::drop`: closes open frames
//! and merges its records into the process totals), so thousands of short threads neither leak
//! nor lose data.

use crate::callpath::{self, Tree};
use crate::pages;
use crate::registry;
use std::cell::Cell;
use std::ptr::{null_mut, NonNull};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// One activation on the shadow stack.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Frame {
    pub id: u32,
    /// Calls this activation made to instrumented routines.
    pub child_calls: u32,
    /// The stack pointer at the probe call: identifies the machine frame for reconciliation.
    pub sp: usize,
    pub start: u64,
    /// Inclusive ticks of the direct children, subtracted to give exclusive time.
    pub child_incl: u64,
    /// The callpath node of this activation (callpath mode only).
    pub node: u32,
    /// Compensation: the probe cost (Δi, scaled) of every descendant event so far.
    pub overhead: u64,
    /// Compensation: the compensated inclusive ticks of the direct children.
    pub comp_child: i64,
}

/// Per-function statistics in ticks.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Record {
    /// Measured calls (activations timed on the shadow stack).
    pub calls: u64,
    /// Calls counted without timing while the event was throttled.
    pub counted: u64,
    pub child_calls: u64,
    pub excl: u64,
    pub incl: u64,
    /// Activations currently on the stack: inclusive time is added only when the outermost
    /// activation exits, so recursion never counts time twice.
    pub active: u64,
    /// Loop iterations (header executions), summed over the loop's executions.
    pub iterations: u64,
    /// Compensated inclusive and exclusive ticks (compensation mode only; may be negative).
    pub comp_incl: i64,
    pub comp_excl: i64,
    /// Activations whose compensated inclusive time came out negative.
    pub negative: u64,
    /// Loops: the fewest iterations of one execution plus one (0: none yet), the most, and the
    /// sum of squares, so exports can give TAU's user-event statistics.
    pub iter_min1: u64,
    pub iter_max: u64,
    pub iter_sumsq: u128,
}

impl Record {
    pub fn add(&mut self, other: &Record) {
        self.calls += other.calls;
        self.counted += other.counted;
        self.child_calls += other.child_calls;
        self.excl += other.excl;
        self.incl += other.incl;
        self.iterations += other.iterations;
        self.comp_incl += other.comp_incl;
        self.comp_excl += other.comp_excl;
        self.negative += other.negative;
        if other.iter_min1 != 0 && (self.iter_min1 == 0 || other.iter_min1 < self.iter_min1) {
            self.iter_min1 = other.iter_min1;
        }
        self.iter_max = self.iter_max.max(other.iter_max);
        self.iter_sumsq = self.iter_sumsq.saturating_add(other.iter_sumsq);
    }

    /// Counts one execution of a loop that ran `iterations` times.
    #[inline(always)]
    pub fn add_iterations(&mut self, iterations: u64) {
        self.iterations += iterations;
        // Branch-free: an unset minimum (0) wraps to u64::MAX, so the new count wins.
        self.iter_min1 = self.iter_min1.wrapping_sub(1).min(iterations).wrapping_add(1);
        self.iter_max = self.iter_max.max(iterations);
        self.iter_sumsq = self.iter_sumsq.wrapping_add(iterations as u128 * iterations as u128);
    }
}

/// Anomalies, counted instead of crashing (see `instrument_profile::Totals`).
#[derive(Clone, Copy, Default, Debug)]
pub struct Counters {
    pub closed_at_exit: u64,
    pub reconciled: u64,
    pub stack_overflow: u64,
    pub unmatched_exits: u64,
    pub unregistered: u64,
    /// Compensation: probe cost removed (scaled ticks), summed at each thread's root.
    pub overhead: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.closed_at_exit += o.closed_at_exit;
        self.reconciled += o.reconciled;
        self.stack_overflow += o.stack_overflow;
        self.unmatched_exits += o.unmatched_exits;
        self.unregistered += o.unregistered;
        self.overhead += o.overhead;
    }
}

/// One thread's callpaths, kept when the thread ends.
#[derive(Clone)]
pub struct ThreadPaths {
    pub thread: u64,
    pub paths: Vec<(Vec<u32>, Record)>,
    pub other: Record,
    pub overflow: u64,
}

/// One thread's records (only the events it ran), kept when the thread ends.
#[derive(Clone)]
pub struct ThreadRecords {
    pub thread: u64,
    pub records: Vec<(u32, Record)>,
}

pub struct ThreadState {
    /// Index of the top frame; frame 0 is a sentinel that is never popped. May exceed
    /// `frame_cap` while the stack overflows: those frames are counted, not stored.
    pub depth: usize,
    pub frame_cap: usize,
    pub frames: *mut Frame,
    pub records: *mut Record,
    pub record_cap: u32,
    pub counters: Counters,
    /// The callpath graph (callpath mode), or null.
    pub tree: *mut Tree,
    /// Order in which the thread first measured something (0 for the first thread).
    pub index: u64,
}

/// The sentinel frame's id: never a real id and never `UNREGISTERED`.
pub const SENTINEL_ID: u32 = u32::MAX - 1;
/// Default shadow-stack capacity (`INSTRUMENT_STACK_FRAMES` overrides it).
const DEFAULT_FRAMES: usize = 1 << 16;
const MIN_RECORDS: u32 = 4096;

thread_local! {
    static CURRENT: Cell<*mut ThreadState> = const { Cell::new(null_mut()) };
    static RETIRED: Cell<bool> = const { Cell::new(false) };
    static GUARD: Guard = const { Guard };
}

/// The calling thread's state, or null before its first event and after it retired.
#[inline(always)]
pub fn current() -> *mut ThreadState {
    CURRENT.with(|c| c.get())
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

pub static MERGED: Mutex<Merged> = Mutex::new(Merged {
    records: Vec::new(),
    counters: Counters {
        closed_at_exit: 0,
        reconciled: 0,
        stack_overflow: 0,
        unmatched_exits: 0,
        unregistered: 0,
        overhead: 0,
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

pub fn lock_merged() -> std::sync::MutexGuard<'static, Merged> {
    MERGED.lock().unwrap_or_else(|e| e.into_inner())
}

fn frame_cap() -> usize {
    match FRAME_CAP.load(Relaxed) {
        0 => {
            let cap = crate::settings::number("INSTRUMENT_STACK_FRAMES", 2, "65536")
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
    let Some(frames) = pages::map(frame_cap * size_of::<Frame>()) else {
        return null_mut();
    };
    let Some(records) = pages::map(record_cap as usize * size_of::<Record>()) else {
        unsafe { pages::unmap(frames, frame_cap * size_of::<Frame>()) };
        return null_mut();
    };
    let frames = frames.as_ptr().cast::<Frame>();
    unsafe {
        (*frames).id = SENTINEL_ID;
        (*frames).node = callpath::ROOT;
    }
    let state = Box::into_raw(Box::new(ThreadState {
        depth: 0,
        frame_cap,
        frames,
        records: records.as_ptr().cast(),
        record_cap,
        counters: Counters::default(),
        tree: Tree::new().map_or(null_mut(), Box::into_raw),
        index: THREAD_INDEX.fetch_add(1, Relaxed),
    }));
    lock_merged().live.push(state as usize);
    CURRENT.with(|c| c.set(state));
    GUARD.with(|_| ()); // registers the thread-exit hook
    state
}

/// Makes room for `id` in the thread's records (a module was registered after the thread
/// started). Returns false if `id` is not a registered id or memory cannot be mapped.
#[cold]
pub fn grow_records(ts: &mut ThreadState, id: u32) -> bool {
    // Callpath transitions describe at most MAX_EVENTS events; later ones are not measured.
    if id >= registry::count() || (!ts.tree.is_null() && id >= callpath::MAX_EVENTS) {
        return false;
    }
    let new_cap = (id + 1).next_power_of_two() * 2;
    let Some(new) = pages::map(new_cap as usize * size_of::<Record>()) else {
        return false;
    };
    let _merged = lock_merged(); // a concurrent profile writer may be reading the old array
    unsafe {
        std::ptr::copy_nonoverlapping(ts.records, new.as_ptr().cast(), ts.record_cap as usize);
        pages::unmap(NonNull::new_unchecked(ts.records.cast()), ts.record_cap as usize * size_of::<Record>());
    }
    ts.records = new.as_ptr().cast();
    ts.record_cap = new_cap;
    true
}

/// Stops measuring on the calling thread: closes its open frames at `now`, merges its records
/// into the process totals, and frees its memory.
pub fn retire_current(now: u64) {
    let state = current();
    CURRENT.with(|c| c.set(null_mut()));
    RETIRED.with(|r| r.set(true));
    if state.is_null() {
        return;
    }
    unsafe {
        let ts = &mut *state;
        crate::reconcile::close_all(ts, now);
        ts.counters.overhead += (*ts.frames).overhead;
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
        if !ts.tree.is_null() {
            drop(Box::from_raw(ts.tree));
        }
        pages::unmap(NonNull::new_unchecked(ts.frames.cast()), ts.frame_cap * size_of::<Frame>());
        pages::unmap(NonNull::new_unchecked(ts.records.cast()), ts.record_cap as usize * size_of::<Record>());
        drop(Box::from_raw(state));
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
    let ts = unsafe { current().as_mut()? };
    let stored = ts.depth.min(ts.frame_cap - 1);
    let frames: Vec<Frame> = (0..=stored).map(|d| unsafe { *ts.frames.add(d) }).collect();
    let records = frames[1..].iter().map(|f| (f.id, unsafe { *ts.records.add(f.id as usize) })).collect();
    let nodes = match unsafe { ts.tree.as_mut() } {
        Some(tree) => frames[1..].iter().map(|f| (f.node, tree.node(f.node).record)).collect(),
        None => Vec::new(),
    };
    let saved = SavedFrames { depth: ts.depth, frames, records, nodes, counters: ts.counters };
    unsafe { crate::reconcile::close_all(ts, now) };
    Some(saved)
}

/// Puts back what `close_current_frames` changed: the frames are open again.
pub fn reopen_current_frames(saved: SavedFrames) {
    let Some(ts) = (unsafe { current().as_mut() }) else { return };
    let _merged = lock_merged(); // as grow_records: a concurrent writer may be reading
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
    let Some(ts) = (unsafe { current().as_ref() }) else { return 0 };
    let used = (registry::count() as usize).min(ts.record_cap as usize);
    (0..used)
        .map(|id| {
            let r = unsafe { &*ts.records.add(id) };
            r.calls + r.counted
        })
        .sum()
}

/// Removes every trace of the calibration events from the thread (records, and what its root
/// frame accumulated), so calibration never shows up in the profile.
pub unsafe fn forget_calibration(ts: &mut ThreadState, ids: &[u32]) {
    for &id in ids {
        if id < ts.record_cap {
            *ts.records.add(id as usize) = Record::default();
        }
    }
    let root = &mut *ts.frames;
    root.child_calls = 0;
    root.child_incl = 0;
    root.overhead = 0;
    root.comp_child = 0;
}

/// A thread's callpaths, when it measured any.
pub fn thread_paths(ts: &ThreadState) -> Option<ThreadPaths> {
    let tree = unsafe { ts.tree.as_ref()? };
    let (paths, other) = tree.paths();
    Some(ThreadPaths { thread: ts.index, paths, other, overflow: tree.overflow })
}

/// A copy of the records of the events the thread ran.
pub fn thread_records(ts: &ThreadState) -> ThreadRecords {
    let used = (registry::count() as usize).min(ts.record_cap as usize);
    let records = (0..used)
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
        if unsafe { libc::gettid() == libc::getpid() } {
            return;
        }
        retire_current(crate::clock::now());
    }
}
