//! Publishing the run while it goes on (the layout is in the `instrument-live` crate): at
//! start-up the runtime creates a memfd, maps its mode area over the switch table the probes
//! read, and from then on takes every thread's state, shadow stack and records from the
//! segment instead of private memory. Nothing is copied on the hot path. What is written
//! besides is cold: event names at registration, thread slots at thread start and end.
//!
//! A forked child gets a segment of its own, copied before the fork while the forking thread
//! holds still, so parent and child never write each other's counters. `INSTRUMENT_LIVE=0`
//! turns the segment off; so does any failure to create it, with everything kept in private
//! memory as before.

use crate::lock::{Guard, Lock};
use crate::pages;
use crate::registry::{EventInfo, Kind};
use crate::thread::Record;
use instrument_live::{self as layout, EventName, Header, Slot};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU64, Ordering::*};

/// Memory for a thread's tables: in the segment at `offset`, or private (`PRIVATE`).
#[derive(Clone, Copy)]
pub struct Region {
    pub ptr: *mut u8,
    pub len: usize,
    pub offset: u64,
}

pub const PRIVATE: u64 = u64::MAX;
/// No slot: the thread is measured but not shown live.
pub const NO_SLOT: u32 = u32::MAX;

static FD: AtomicI32 = AtomicI32::new(-1);
/// The segment's device and inode, to recognise its descriptor (`segment_fd`).
static DEV: AtomicU64 = AtomicU64::new(0);
static INO: AtomicU64 = AtomicU64::new(0);
/// The header and slot area, the names area and the retired records, mapped at start-up.
static BASE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static NAMES: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static RETIRED: AtomicPtr<Record> = AtomicPtr::new(std::ptr::null_mut());

/// What a mapping of the segment holds, which tells the part of it a fork copies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Header,
    Modes,
    Names,
    Retired,
    /// A thread's state and shadow stack.
    Stack,
    Records,
}

#[derive(Clone, Copy)]
struct Mapping {
    addr: usize,
    offset: u64,
    len: usize,
    area: Area,
}

/// Where the segment is mapped in this process, and which of its parts are free.
pub struct Space {
    mappings: Vec<Mapping>,
    next: u64,
    free: Vec<(u64, usize)>,
    free_slots: Vec<u32>,
    /// The copy made for a fork in progress.
    fork_fd: i32,
}

static SPACE: Lock<Space> = Lock::new(Space {
    mappings: Vec::new(),
    next: layout::THREADS_OFFSET,
    free: Vec::new(),
    free_slots: Vec::new(),
    fork_fd: -1,
});

pub fn lock_space() -> Guard<'static, Space> {
    SPACE.lock()
}

fn header() -> Option<&'static Header> {
    // SAFETY: BASE is null or the segment's header page, mapped for the process's life (init
    // publishes it after filling it; a child after fork maps the copy at the same address).
    unsafe { BASE.load(Acquire).cast::<Header>().as_ref() }
}

fn slot(index: u32) -> Option<&'static Slot> {
    let base = BASE.load(Acquire);
    if base.is_null() || index == NO_SLOT {
        return None;
    }
    // SAFETY: the header area holds the slot table (layout::slot_offset stays inside it for
    // every index publish_thread hands out), mapped for the process's life as the header.
    unsafe { base.add(layout::slot_offset(index as u64) as usize).cast::<Slot>().as_ref() }
}

/// Creates the segment (once, at start-up, before any event is switched). `modes` is the
/// switch table, page aligned, which from then on is the segment's mode area.
pub fn init(modes: *mut u8) {
    if crate::settings::flag(&crate::settings::LIVE) == Some(false) {
        return;
    }
    let Some(fd) = create(layout::THREADS_OFFSET) else { return };
    let mut space = lock_space();
    let areas = [
        (std::ptr::null_mut(), layout::HEADER_OFFSET, layout::MODES_OFFSET, Area::Header),
        (std::ptr::null_mut(), layout::NAMES_OFFSET, layout::NAMES_CAP, Area::Names),
        (
            std::ptr::null_mut(),
            layout::RETIRED_OFFSET,
            layout::MAX_EVENTS * layout::RECORD_BYTES,
            Area::Retired,
        ),
        (modes, layout::MODES_OFFSET, layout::MAX_EVENTS, Area::Modes),
    ];
    let mut mapped: Vec<Mapping> = Vec::new();
    for (at, offset, len, area) in areas {
        // SAFETY: `at` is null, or the switch table: page aligned, MAX_EVENTS bytes, and no
        // event is switched yet (init's contract), so replacing it keeps its zero contents.
        match unsafe { map_at(fd, at, offset, len as usize) } {
            Some(ptr) => mapped.push(Mapping { addr: ptr as usize, offset, len: len as usize, area }),
            None => {
                // The mode area is mapped last: a failure leaves the switch table untouched.
                for m in &mapped {
                    // SAFETY: mappings made just above, not yet published.
                    unsafe { libc::munmap(m.addr as *mut _, m.len) };
                }
                // SAFETY: the descriptor `create` opened, used by nothing else.
                unsafe { libc::close(fd) };
                return;
            }
        }
    }
    BASE.store(mapped[0].addr as *mut u8, Release);
    NAMES.store(mapped[1].addr as *mut u8, Release);
    RETIRED.store(mapped[2].addr as *mut Record, Release);
    space.mappings = mapped;
    adopt(fd);
    fill_header();
}

fn fill_header() {
    let header = BASE.load(Acquire).cast::<Header>();
    if header.is_null() {
        return;
    }
    let (ticks, ns, tsc) = crate::clock::start_anchor();
    // SAFETY: the header page was just mapped and is not published yet (readers check the
    // magic, written last after a fence), so this is its only reference.
    unsafe {
        let h = &mut *header;
        h.version = layout::VERSION;
        h.pid.store(std::process::id(), Relaxed);
        h.clock.store(if tsc { layout::CLOCK_TSC } else { layout::CLOCK_MONOTONIC_NS }, Relaxed);
        h.start_ticks.store(ticks, Relaxed);
        h.start_ns.store(ns, Relaxed);
        h.file_len.store(layout::THREADS_OFFSET, Relaxed);
        h.record_bytes = layout::RECORD_BYTES as u32;
        h.frame_bytes = layout::FRAME_BYTES as u32;
        h.slot_bytes = layout::SLOT_BYTES as u32;
        h.thread_header_bytes = layout::THREAD_HEADER_BYTES as u32;
        let name =
            std::env::current_exe().ok().and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()));
        let name = name.unwrap_or_default();
        let n = name.len().min(h.program.len() - 1);
        h.program[..n].copy_from_slice(&name.as_bytes()[..n]);
        std::sync::atomic::fence(Release);
        std::ptr::write_volatile(&mut h.magic, layout::MAGIC);
    }
}

/// Makes `fd` the segment's descriptor.
fn adopt(fd: i32) {
    let (dev, ino) = identity(fd).unwrap_or((0, 0));
    DEV.store(dev, Relaxed);
    INO.store(ino, Relaxed);
    FD.store(fd, Release);
}

fn identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: `stat` is plain data, valid when zeroed; fstat writes at most that struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd, &mut stat) } == 0).then_some((stat.st_dev, stat.st_ino))
}

/// The segment's descriptor, if it still is: a program may close descriptors it did not open
/// (daemons close them all) and get the number again for a file of its own, which the runtime
/// must never truncate or punch. The mappings stay valid without it; only new threads then use
/// private memory.
fn segment_fd() -> Option<i32> {
    let fd = FD.load(Acquire);
    if fd < 0 {
        return None;
    }
    if identity(fd) == Some((DEV.load(Relaxed), INO.load(Relaxed))) {
        Some(fd)
    } else {
        FD.store(-1, Release);
        None
    }
}

/// Whether a file may be `len` bytes long: past the file-size limit, growing it would fail and
/// raise SIGXFSZ, which kills the program. Without the room the segment is not used.
fn may_grow_to(len: u64) -> bool {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit, which `limit` is.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0;
    read && (limit.rlim_cur == libc::RLIM_INFINITY || len <= limit.rlim_cur)
}

/// A new owner-only memfd of `len` bytes.
fn create(len: u64) -> Option<i32> {
    if !may_grow_to(len) {
        return None;
    }
    let name = std::ffi::CString::new(layout::MEMFD_NAME).ok()?;
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: system calls on the descriptor just created, which nothing else uses.
    if unsafe { libc::fchmod(fd, 0o600) != 0 || libc::ftruncate(fd, len as libc::off_t) != 0 } {
        // SAFETY: as above.
        unsafe { libc::close(fd) };
        return None;
    }
    Some(out_of_the_way(fd))
}

/// The lowest descriptor the segment takes: far above the ones a program opens, so that the
/// program's own descriptors are numbered as in the plain build (the first `open` returns 3).
const HIGH_FD: libc::c_int = 1000;

/// `fd` moved to the lowest free descriptor at or above `HIGH_FD` (close-on-exec kept), or
/// left where it is when the descriptor limit is lower.
pub fn out_of_the_way(fd: i32) -> i32 {
    // SAFETY: fcntl and close on a descriptor this function owns; no memory is involved.
    unsafe {
        let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, HIGH_FD);
        if high < 0 {
            return fd;
        }
        libc::close(fd);
        high
    }
}

/// Maps `len` bytes of the segment at `offset`, at address `at` (replacing what is there) or
/// anywhere when `at` is null.
///
/// # Safety
/// A non-null `at` is the start of `len` bytes of the runtime's own mappings that nothing
/// refers to any more (MAP_FIXED replaces them).
unsafe fn map_at(fd: i32, at: *mut u8, offset: u64, len: usize) -> Option<*mut u8> {
    let fixed = if at.is_null() { 0 } else { libc::MAP_FIXED };
    // SAFETY: mmap creates a new mapping; with MAP_FIXED it replaces only what the caller
    // handed over.
    let ptr = unsafe {
        libc::mmap(
            at.cast(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE | fixed,
            fd,
            offset as libc::off_t,
        )
    };
    (ptr != libc::MAP_FAILED).then_some(ptr.cast())
}

/// Zeroed memory for a thread's tables (`area` is `Stack` or `Records`): from the segment
/// when there is one, else private.
pub fn alloc(bytes: usize, area: Area) -> Option<Region> {
    let len = layout::page_round(bytes as u64) as usize;
    if let Some(fd) = segment_fd() {
        if let Some(region) = alloc_shared(fd, len, area) {
            return Some(region);
        }
    }
    pages::map(len).map(|ptr| Region { ptr: ptr.as_ptr(), len, offset: PRIVATE })
}

fn alloc_shared(fd: i32, len: usize, area: Area) -> Option<Region> {
    let mut space = lock_space();
    let offset = match space.free.iter().position(|&(_, l)| l == len) {
        Some(i) => space.free.swap_remove(i).0,
        None => {
            let offset = space.next;
            let end = offset + len as u64;
            // SAFETY: grows the segment's own descriptor past every mapping (space.next is its
            // end, under the lock); nothing is shrunk.
            if !may_grow_to(end) || unsafe { libc::ftruncate(fd, end as libc::off_t) } != 0 {
                return None;
            }
            space.next = offset + len as u64;
            if let Some(h) = header() {
                h.file_len.store(space.next, Release);
            }
            offset
        }
    };
    // SAFETY: a null address maps fresh pages and replaces nothing.
    match unsafe { map_at(fd, std::ptr::null_mut(), offset, len) } {
        Some(ptr) => {
            space.mappings.push(Mapping { addr: ptr as usize, offset, len, area });
            Some(Region { ptr, len, offset })
        }
        None => {
            space.free.push((offset, len));
            None
        }
    }
}

/// Gives back a region from `alloc`; the segment's pages are released and read as zeros.
///
/// # Safety
/// `region` came from `alloc` and nothing refers to its memory any more.
pub unsafe fn free(region: &Region) {
    if region.offset == PRIVATE {
        // SAFETY: a private region is a `pages::map` mapping (non-null), given up by the caller.
        return unsafe { pages::unmap(NonNull::new_unchecked(region.ptr), region.len) };
    }
    let mut space = lock_space();
    let addr = region.ptr as usize;
    space.mappings.retain(|m| m.addr != addr);
    // SAFETY: the region's own mapping, given up by the caller.
    unsafe { libc::munmap(region.ptr.cast(), region.len) };
    let Some(fd) = segment_fd() else { return };
    let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate on the segment's descriptor touches only the file's range.
    if unsafe { libc::fallocate(fd, punch, region.offset as libc::off_t, region.len as libc::off_t) } == 0 {
        space.free.push((region.offset, region.len));
    }
}

/// Shows a thread: its state and stack in `thread` (from `alloc`), its records in `records`.
/// Returns its slot, or `NO_SLOT` when it cannot be shown.
pub fn publish_thread(
    thread: &Region,
    frame_cap: usize,
    records: &Region,
    record_cap: u32,
    index: u64,
) -> u32 {
    let Some(header) = header() else { return NO_SLOT };
    if thread.offset == PRIVATE || records.offset == PRIVATE {
        return NO_SLOT;
    }
    let index_in_table = {
        let mut space = lock_space();
        match space.free_slots.pop() {
            Some(i) => i,
            None => {
                let used = header.slots_used.load(Relaxed);
                if used >= layout::MAX_SLOTS {
                    return NO_SLOT;
                }
                header.slots_used.store(used + 1, Release);
                used as u32
            }
        }
    };
    let Some(s) = slot(index_in_table) else { return NO_SLOT };
    // SAFETY: a system call without arguments.
    s.tid.store(unsafe { libc::gettid() } as u32, Relaxed);
    s.index.store(index, Relaxed);
    s.thread_offset.store(thread.offset, Relaxed);
    s.frame_cap.store(frame_cap as u64, Relaxed);
    s.records_offset.store(records.offset, Relaxed);
    s.record_cap.store(record_cap as u64, Relaxed);
    s.state.store(layout::SLOT_LIVE, Release);
    index_in_table
}

/// Runs `change` as one step for readers: they never see it half done. The caller holds the
/// runtime's merge lock, which orders these steps.
fn step(change: impl FnOnce()) {
    let Some(header) = header() else { return change() };
    header.seq.fetch_add(1, AcqRel);
    change();
    header.seq.fetch_add(1, AcqRel);
}

/// A thread's record array moved (it grew). The caller holds the merge lock.
pub fn move_records(slot_index: u32, records: &Region, record_cap: u32) {
    let Some(s) = slot(slot_index) else { return };
    step(|| {
        let offset = if records.offset == PRIVATE { 0 } else { records.offset };
        s.records_offset.store(offset, Relaxed);
        s.record_cap.store(if offset == 0 { 0 } else { record_cap as u64 }, Relaxed);
    });
}

/// A thread ended: its records join the retired totals and its slot is freed, in one step.
/// The caller holds the merge lock.
pub fn retire_thread(slot_index: u32, records: &[Record]) {
    let retired = RETIRED.load(Acquire);
    let (Some(header), Some(s)) = (header(), slot(slot_index)) else { return };
    step(|| {
        for (id, record) in records.iter().enumerate().take(layout::MAX_EVENTS as usize) {
            if record.calls + record.counted > 0 {
                // SAFETY: a header exists, so `retired` is the retired area of MAX_EVENTS
                // records, and id < MAX_EVENTS (the take); the merge lock serialises writers.
                unsafe { (*retired.add(id)).add(record) };
            }
        }
        s.state.store(layout::SLOT_FREE, Release);
        header.retired_threads.fetch_add(1, Relaxed);
    });
    lock_space().free_slots.push(slot_index);
}

/// Publishes the names of events `first..` (a module being registered; the caller holds the
/// registry lock).
pub fn publish_names(events: &[EventInfo], first: usize, hidden: bool) {
    let (Some(header), names) = (header(), NAMES.load(Acquire)) else { return };
    let mut text = Vec::new();
    for event in events.iter().skip(first) {
        layout::write_name_line(&mut text, &event_name(event, hidden));
    }
    let at = header.names_len.load(Relaxed);
    if at + text.len() as u64 > layout::NAMES_CAP {
        return; // ids from here on stay unnamed: top shows them as unknown
    }
    // SAFETY: a header exists, so `names` is the names area of NAMES_CAP bytes, and
    // at + len <= NAMES_CAP (checked); the registry lock serialises writers.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), names.add(at as usize), text.len()) };
    header.names_len.store(at + text.len() as u64, Release);
    header.events.store(events.len() as u64, Release);
}

fn event_name(event: &EventInfo, hidden: bool) -> EventName {
    let (file, line) = (event.file.clone(), event.line);
    match &event.kind {
        _ if hidden => EventName::Hidden,
        Kind::Function { name, .. } => EventName::Function { name: name.clone(), file, line },
        Kind::Loop { function, .. } => EventName::Loop { function: *function, file, line },
        Kind::CallSite { function, callee, .. } => {
            EventName::CallSite { function: *function, callee: callee.clone(), file, line }
        }
    }
}

/// The profile is written: readers show the final numbers.
pub fn finished() {
    if let Some(header) = header() {
        header.state.store(layout::FINISHED, Release);
    }
}

/// Before fork (the caller holds `space` and every other runtime lock, and the forking thread
/// is in here): copies what the segment holds into a new one, so that the child can continue
/// in its own. Only the parts in use are copied, from this process's own mappings.
pub fn before_fork(space: &mut Space) {
    if segment_fd().is_none() {
        return;
    }
    let Some(copy) = create(space.next) else { return };
    if space.mappings.iter().all(|m| copy_mapping(copy, m)) {
        space.fork_fd = copy;
    } else {
        // SAFETY: the copy's descriptor, just created, used by nothing else.
        unsafe { libc::close(copy) };
    }
}

/// Copies what mapping `m` holds into segment `copy`. Other threads go on running meanwhile: a
/// shadow stack's state is copied first, then the frames up to the depth in that copy, all of
/// which were pushed before it was taken.
fn copy_mapping(copy: i32, m: &Mapping) -> bool {
    // SAFETY: callers pass `n` readable bytes at `from`: parts of the live mapping `m`
    // (`used` and `stack_bytes` stay inside it) or the local copy of the state.
    let write = |from: *const u8, at: usize, n: usize| unsafe {
        libc::pwrite(copy, from.cast(), n, (m.offset + at as u64) as libc::off_t) == n as isize
    };
    if m.area != Area::Stack {
        return used(m).into_iter().all(|(at, n)| write((m.addr + at) as *const u8, at, n));
    }
    let mut state = [0u8; layout::THREAD_HEADER_BYTES as usize];
    // SAFETY: a stack mapping starts with its thread's state, THREAD_HEADER_BYTES long; the
    // thread may write it meanwhile, and the copy is only read as bytes.
    unsafe { std::ptr::copy_nonoverlapping(m.addr as *const u8, state.as_mut_ptr(), state.len()) };
    let depth = usize::from_ne_bytes(state[..size_of::<usize>()].try_into().unwrap_or_default());
    let frames = stack_bytes(m, depth) - state.len();
    write(state.as_ptr(), 0, state.len()) && write((m.addr + state.len()) as *const u8, state.len(), frames)
}

/// The bytes of a thread region in use at stack depth `depth`: the state and frames 0 to depth.
fn stack_bytes(m: &Mapping, depth: usize) -> usize {
    let state = layout::THREAD_HEADER_BYTES as usize;
    let frames = (m.len - state) / layout::FRAME_BYTES as usize;
    state + (depth.min(frames.saturating_sub(1)) + 1) * layout::FRAME_BYTES as usize
}

/// In the parent after fork: the copy is the child's.
pub fn after_fork_in_parent(space: &mut Space) {
    if space.fork_fd >= 0 {
        // SAFETY: the copy's descriptor, which only the child uses from here on.
        unsafe { libc::close(space.fork_fd) };
        space.fork_fd = -1;
    }
}

/// In the child after fork: every mapping moves to the copy. Without a copy the segment is
/// dropped and each mapping becomes private memory with the same contents.
pub fn after_fork_in_child(space: &mut Space) {
    if space.mappings.is_empty() {
        return;
    }
    let old = segment_fd();
    FD.store(-1, Release);
    let copy = std::mem::replace(&mut space.fork_fd, -1);
    for m in &space.mappings {
        // SAFETY: the copy holds this mapping's contents at the same offset, and no other thread
        // runs in the child: mapping it over the old one keeps every reference valid.
        let moved = copy >= 0 && unsafe { map_at(copy, m.addr as *mut u8, m.offset, m.len) }.is_some();
        if !moved {
            // SAFETY: a live mapping of the segment, and no other thread runs in the child.
            unsafe { make_private(m) };
        }
    }
    if let Some(old) = old {
        // SAFETY: the parent's segment descriptor, inherited; the child no longer uses it.
        unsafe { libc::close(old) };
    }
    if copy >= 0 {
        adopt(copy);
        if let Some(h) = header() {
            h.pid.store(std::process::id(), Relaxed);
        }
    } else {
        BASE.store(std::ptr::null_mut(), Release);
        space.mappings.clear();
    }
}

/// Replaces a shared mapping by private memory with the same contents (in the child, where no
/// other thread runs).
///
/// # Safety
/// `m` is one of the segment's live mappings, and no other thread runs.
unsafe fn make_private(m: &Mapping) {
    let Some(copy) = pages::map(m.len) else { return };
    for (at, n) in used(m) {
        // SAFETY: `used` ranges lie inside the mapping, and `copy` has the same length.
        unsafe { std::ptr::copy_nonoverlapping((m.addr + at) as *const u8, copy.as_ptr().add(at), n) };
    }
    let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
    // SAFETY: moves the fresh copy over the shared mapping, which nothing else uses (no other
    // thread runs); its readers find the same contents at the same address.
    unsafe { libc::mremap(copy.as_ptr().cast(), m.len, m.len, flags, m.addr) };
}

/// The part of mapping `m` that holds data: (start in the mapping, length).
fn used(m: &Mapping) -> Vec<(usize, usize)> {
    let Some(h) = header() else { return Vec::new() };
    let events = h.events.load(Acquire).min(layout::MAX_EVENTS);
    let prefix = match m.area {
        Area::Header => layout::PAGE + h.slots_used.load(Acquire) * layout::SLOT_BYTES,
        Area::Modes => events,
        Area::Names => h.names_len.load(Acquire),
        Area::Retired if h.retired_threads.load(Acquire) > 0 => events * layout::RECORD_BYTES,
        Area::Retired => 0,
        Area::Records => events * layout::RECORD_BYTES,
        // SAFETY: a stack mapping starts with its thread's state, whose first word is the depth.
        Area::Stack => stack_bytes(m, unsafe { *(m.addr as *const usize) }) as u64,
    };
    let n = (prefix as usize).min(m.len);
    if n == 0 {
        Vec::new()
    } else {
        vec![(0, n)]
    }
}
