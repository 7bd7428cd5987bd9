//! Callpath profiles (CA mode) at a per-event cost that does not grow with the depth k.
//!
//! Each thread keeps a graph of callpath nodes, one per distinct k-callpath (the last k events
//! on the stack; k unlimited gives the calling-context tree). A node is identified by its event
//! and the node of the callpath before it, so creating one hashes two integers, never a name and
//! never the stack. Moving from the current node to the next on an event entry is:
//!
//! 1. a one-entry cache in the node (the last transition taken from it), which serves loops,
//!    recursion and repeated calls with one compare;
//! 2. precomputed: loops and call statements have one static parent (their routine or loop),
//!    known from the program graph; each node owns a slot array with one entry per static child,
//!    indexed by the child's precomputed local index;
//! 3. otherwise (routine calls, indirect calls, callbacks from uninstrumented code, calls into
//!    other modules) a per-thread hash table keyed by (node, event), whose result is cached in
//!    the node, so the next time is a hit.
//!
//! In the calling-context tree (k unlimited) a recursive call collapses onto the node of the
//! activation it recurses from, so the tree's size does not grow with the recursion's depth.
//! When k is finite and the current path already has k events, the next node is the one for the
//! path with its oldest event dropped; that node is found once (a walk of at most k steps) and
//! then cached like any other transition. Memory is bounded by a node cap: beyond it, events are
//! charged to one "other paths" node and counted.
//!
//! Creating a node touches fresh memory (page faults: microseconds in a VM), once per callpath.
//! That is not the program's time: the open frames' start times move later by what it took,
//! so a routine called once shows the same inclusive time with callpaths as without.

use crate::pages;
use crate::thread::{Frame, Record};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering::Relaxed};

pub const ROOT: u32 = 1;
pub const OTHER: u32 = 2;
const FIRST_NODE: u32 = 3;
pub const NONE: u32 = u32::MAX;
/// Most events the callpath tables describe; more are registered but measured flat only.
pub const MAX_EVENTS: u32 = 1 << 22;
pub(crate) const DEFAULT_NODES: u32 = 1 << 18;

/// Callpath depth: 0 = off (flat profile), `UNLIMITED`, or k.
static DEPTH: AtomicU32 = AtomicU32::new(0);
pub const UNLIMITED: u32 = u32::MAX;
static NODE_CAP: AtomicU32 = AtomicU32::new(DEFAULT_NODES);

/// The program graph as the transitions need it: for each event, its static parent event (the
/// routine or loop that contains a loop or call statement; NONE for routines), its index among
/// that parent's static children, and how many static children it has.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct StaticInfo {
    pub parent: u32,
    pub local_index: u32,
    pub children: u32,
}

static STATICS: AtomicPtr<StaticInfo> = AtomicPtr::new(std::ptr::null_mut());

/// Reads `INSTRUMENT_CALLPATH` (`0`/unset: flat; `N`: depth N; `all`/`unlimited`: the whole
/// calling context) and `INSTRUMENT_CALLPATH_NODES` (node cap per thread).
pub fn configure() {
    use crate::settings::{self, CALLPATH};
    let depth = match CALLPATH.raw().as_deref() {
        None | Some("0") => 0,
        Some("all" | "unlimited" | "-1") => UNLIMITED,
        Some(n) => n.parse::<u32>().unwrap_or_else(|_| {
            settings::report(&CALLPATH, &CALLPATH.bad(n));
            0
        }),
    };
    if let Some(cap) = settings::number(&settings::CALLPATH_NODES) {
        NODE_CAP.store((cap.min(1 << 28) as u32).max(FIRST_NODE + 1), Relaxed);
    }
    if depth != 0 && statics_table().is_some() {
        DEPTH.store(depth, Relaxed);
    }
}

pub fn depth() -> u32 {
    DEPTH.load(Relaxed)
}

pub fn node_cap() -> u32 {
    NODE_CAP.load(Relaxed)
}

fn statics_table() -> Option<*mut StaticInfo> {
    let existing = STATICS.load(Relaxed);
    if !existing.is_null() {
        return Some(existing);
    }
    let mapped = pages::map(MAX_EVENTS as usize * size_of::<StaticInfo>())?.as_ptr().cast::<StaticInfo>();
    match STATICS.compare_exchange(std::ptr::null_mut(), mapped, Relaxed, Relaxed) {
        Ok(_) => Some(mapped),
        Err(other) => Some(other),
    }
}

/// Records an event's place in the program graph (at registration, under the registry lock).
pub fn set_static(id: u32, info: StaticInfo) {
    if id < MAX_EVENTS {
        if let Some(table) = statics_table() {
            unsafe { *table.add(id as usize) = info };
        }
    }
}

/// Adds one to the static child count of `parent` and returns the child's local index.
pub fn add_static_child(parent: u32) -> u32 {
    match statics_table() {
        Some(table) if parent < MAX_EVENTS => unsafe {
            let info = &mut *table.add(parent as usize);
            info.children += 1;
            info.children - 1
        },
        _ => NONE,
    }
}

#[inline(always)]
unsafe fn static_info(id: u32) -> StaticInfo {
    *STATICS.load(Relaxed).add(id as usize)
}

#[repr(C)]
pub struct Node {
    pub event: u32,
    /// The node of the callpath without this event (for k finite: without this event, and only
    /// the k-1 events before it).
    pub prefix: u32,
    pub depth: u32,
    /// Offset of this node's static-child slots, or NONE.
    pub slots: u32,
    pub last_event: u32,
    pub last_child: u32,
    pub record: Record,
}

/// An open-addressing map from (node, event) to node, in kernel-provided zeroed memory. It
/// starts small with its pages touched at once, and grows (at most to `max` slots) inside node
/// creation, whose time no frame counts: a lookup never faults on a fresh page in a frame's time.
struct Map {
    keys: *mut u64,
    values: *mut u32,
    mask: usize,
    len: usize,
    max: usize,
}

/// Slots a map starts with (12 KiB of keys and values).
const MAP_START: usize = 1024;

impl Map {
    fn new(capacity: usize, max: usize) -> Option<Map> {
        let capacity = capacity.next_power_of_two();
        let keys = pages::map_touched(capacity * 8)?.as_ptr().cast();
        let values = pages::map_touched(capacity * 4)?.as_ptr().cast();
        Some(Map { keys, values, mask: capacity - 1, len: 0, max: max.next_power_of_two() })
    }

    fn slot(&self, key: u64) -> usize {
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize & self.mask;
        unsafe {
            while *self.keys.add(i) != 0 && *self.keys.add(i) != key {
                i = (i + 1) & self.mask;
            }
        }
        i
    }

    fn get(&self, node: u32, event: u32) -> Option<u32> {
        let key = (u64::from(node) << 32) | u64::from(event);
        let i = self.slot(key);
        unsafe { (*self.keys.add(i) == key).then(|| *self.values.add(i)) }
    }

    /// Remembers `value` for (node, event); a map that is full at its largest size remembers
    /// nothing more (lookups then miss and recompute).
    fn insert(&mut self, node: u32, event: u32, value: u32) {
        let capacity = self.mask + 1;
        if (self.len + 1) * 2 > capacity && !self.grow() && (self.len + 1) * 4 > capacity * 3 {
            return;
        }
        let key = (u64::from(node) << 32) | u64::from(event);
        let i = self.slot(key);
        unsafe {
            self.len += usize::from(*self.keys.add(i) == 0);
            *self.keys.add(i) = key;
            *self.values.add(i) = value;
        }
    }

    /// Moves the entries to a map four times larger; false at the largest size or without memory.
    fn grow(&mut self) -> bool {
        let capacity = self.mask + 1;
        if capacity >= self.max {
            return false;
        }
        let Some(mut larger) = Map::new(capacity * 4, self.max) else { return false };
        for i in 0..capacity {
            let key = unsafe { *self.keys.add(i) };
            if key != 0 {
                larger.insert((key >> 32) as u32, key as u32, unsafe { *self.values.add(i) });
            }
        }
        unsafe { self.unmap() };
        *self = larger;
        true
    }

    unsafe fn unmap(&self) {
        let n = self.mask + 1;
        pages::unmap(std::ptr::NonNull::new_unchecked(self.keys.cast()), n * 8);
        pages::unmap(std::ptr::NonNull::new_unchecked(self.values.cast()), n * 4);
    }
}

pub struct Tree {
    pub nodes: *mut Node,
    pub len: u32,
    cap: u32,
    depth: u32,
    slots: *mut u32,
    slots_len: u32,
    slots_cap: u32,
    /// (current node, event) -> next node, for transitions that are not precomputed.
    transitions: Map,
    /// (prefix node, event) -> node: the identity of every node.
    identity: Map,
    /// Events charged to the "other paths" node because the cap was reached.
    pub overflow: u64,
    /// Ticks spent creating nodes, kept out of every frame's time.
    pub cold_ticks: u64,
}

/// The frames open on a thread, `frames[1..=top]` (frame 0 is the sentinel).
#[derive(Clone, Copy)]
pub struct OpenFrames {
    pub frames: *mut Frame,
    pub top: usize,
}

impl OpenFrames {
    /// Moves every open frame's start `ticks` later: time they will not count.
    unsafe fn start_later(self, ticks: u64) {
        for depth in 1..=self.top {
            let frame = &mut *self.frames.add(depth);
            frame.start += ticks;
        }
    }
}

impl Tree {
    /// A tree for the configured depth, or None when callpaths are off or memory is short.
    pub fn new() -> Option<Box<Tree>> {
        let depth = depth();
        if depth == 0 {
            return None;
        }
        let cap = node_cap();
        let nodes = pages::map(cap as usize * size_of::<Node>())?.as_ptr().cast::<Node>();
        let slots_cap = cap.saturating_mul(4);
        let slots = pages::map(slots_cap as usize * 4)?.as_ptr().cast();
        let tree = Tree {
            nodes,
            len: FIRST_NODE,
            cap,
            depth,
            slots,
            slots_len: 0,
            slots_cap,
            transitions: Map::new(MAP_START, cap as usize * 2)?,
            identity: Map::new(MAP_START, cap as usize * 2)?,
            overflow: 0,
            cold_ticks: 0,
        };
        unsafe {
            for (i, event) in [(ROOT, NONE), (OTHER, NONE)] {
                let n = &mut *nodes.add(i as usize);
                n.event = event;
                n.prefix = ROOT;
                n.slots = NONE;
                n.last_event = NONE;
            }
        }
        Some(Box::new(tree))
    }

    /// Node `index`.
    ///
    /// # Safety
    /// `index` is a node this tree made (`index < len`): the root, `OTHER`, a frame's node or
    /// what `step` returned.
    #[inline(always)]
    pub unsafe fn node(&mut self, index: u32) -> &mut Node {
        debug_assert!(index < self.len, "callpath node {index} past {}", self.len);
        // SAFETY: nodes[..len] are initialised nodes of the mapped array (the contract), and the
        // result borrows the tree mutably, so no other reference to the node is live.
        unsafe { &mut *self.nodes.add(index as usize) }
    }

    /// The node after `current` when event `id` enters; `open` are the frames open on the
    /// thread, whose start times exclude a node's creation.
    #[inline(always)]
    pub unsafe fn step(&mut self, current: u32, id: u32, open: OpenFrames) -> u32 {
        let node = &*self.nodes.add(current as usize);
        if node.last_event == id {
            return node.last_child;
        }
        if node.slots != NONE {
            let info = static_info(id);
            if info.parent == node.event {
                let slot = self.slots.add((node.slots + info.local_index) as usize);
                let next = match *slot {
                    0 => {
                        let next = self.create(current, id, open, false);
                        *slot = next;
                        next
                    }
                    next => next,
                };
                let node = &mut *self.nodes.add(current as usize);
                node.last_event = id;
                node.last_child = next;
                return next;
            }
        }
        self.step_cold(current, id, open)
    }

    #[cold]
    #[inline(never)]
    unsafe fn step_cold(&mut self, current: u32, id: u32, open: OpenFrames) -> u32 {
        if current == OTHER {
            return OTHER;
        }
        let next = match self.transitions.get(current, id) {
            Some(next) => next,
            None => self.create(current, id, open, true),
        };
        let node = &mut *self.nodes.add(current as usize);
        node.last_event = id;
        node.last_child = next;
        next
    }

    /// The node after `current` for `id`, found or created (and, with `transition`, remembered
    /// as the transition from `current`), in time that no open frame counts.
    #[cold]
    unsafe fn create(&mut self, current: u32, id: u32, open: OpenFrames, transition: bool) -> u32 {
        let started = crate::clock::now();
        let node = self.find_or_create(current, id);
        if transition {
            self.transitions.insert(current, id, node);
        }
        let took = crate::clock::now().saturating_sub(started);
        open.start_later(took);
        self.cold_ticks += took;
        node
    }

    /// The node for the callpath `current` followed by `id`, truncated to the last k events.
    /// In the calling-context tree a recursive call collapses onto the node of the activation
    /// it recurses from, as the flat profile collapses recursion (Li and Zhang): the tree
    /// grows with the distinct contexts, never with the recursion's depth.
    unsafe fn find_or_create(&mut self, current: u32, id: u32) -> u32 {
        if current == OTHER {
            return OTHER;
        }
        if self.depth == UNLIMITED {
            if let Some(recursed) = self.on_path(current, id) {
                return recursed;
            }
        }
        let prefix = if self.depth != UNLIMITED && (*self.nodes.add(current as usize)).depth >= self.depth {
            self.drop_oldest(current)
        } else {
            current
        };
        self.intern(prefix, id)
    }

    /// The node on the callpath that ends at `node` (it or an ancestor) whose event is `id`.
    unsafe fn on_path(&self, mut node: u32, id: u32) -> Option<u32> {
        while node != ROOT && node != OTHER {
            let n = &*self.nodes.add(node as usize);
            if n.event == id {
                return Some(node);
            }
            node = n.prefix;
        }
        None
    }

    /// The node of `node`'s callpath without its oldest event.
    unsafe fn drop_oldest(&mut self, node: u32) -> u32 {
        let n = &*self.nodes.add(node as usize);
        if n.depth <= 1 || node == OTHER {
            return ROOT;
        }
        let (event, prefix) = (n.event, n.prefix);
        let shorter = self.drop_oldest(prefix);
        self.intern(shorter, event)
    }

    /// The node (`prefix`, `event`), created if new; OTHER when the cap is reached.
    unsafe fn intern(&mut self, prefix: u32, event: u32) -> u32 {
        if prefix == OTHER {
            return OTHER;
        }
        if let Some(existing) = self.identity.get(prefix, event) {
            return existing;
        }
        if self.len >= self.cap {
            self.overflow += 1;
            return OTHER;
        }
        let index = self.len;
        self.len += 1;
        let children = if event < MAX_EVENTS { static_info(event).children } else { 0 };
        let slots = if children > 0 && self.slots_len + children <= self.slots_cap {
            self.slots_len += children;
            let first = self.slots_len - children;
            // Touched now (they are zero already), so that the first lookup does not fault.
            for i in first..self.slots_len {
                std::ptr::write_volatile(self.slots.add(i as usize), 0);
            }
            first
        } else {
            NONE
        };
        let depth = (*self.nodes.add(prefix as usize)).depth + 1;
        let n = &mut *self.nodes.add(index as usize);
        n.event = event;
        n.prefix = prefix;
        n.depth = depth;
        n.slots = slots;
        n.last_event = NONE;
        self.identity.insert(prefix, event, index);
        index
    }

    /// Every node that ran: its callpath (oldest event first) and its record; then the record of
    /// the "other paths" node.
    pub fn paths(&self) -> (Vec<(Vec<u32>, Record)>, Record) {
        let mut out = Vec::new();
        for index in FIRST_NODE..self.len {
            let n = unsafe { &*self.nodes.add(index as usize) };
            if n.record.calls == 0 {
                continue;
            }
            let mut path = Vec::with_capacity(n.depth as usize);
            let mut at = index;
            while at != ROOT {
                let node = unsafe { &*self.nodes.add(at as usize) };
                path.push(node.event);
                at = node.prefix;
            }
            path.reverse();
            out.push((path, n.record));
        }
        (out, unsafe { (*self.nodes.add(OTHER as usize)).record })
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        unsafe {
            pages::unmap(
                std::ptr::NonNull::new_unchecked(self.nodes.cast()),
                self.cap as usize * size_of::<Node>(),
            );
            pages::unmap(std::ptr::NonNull::new_unchecked(self.slots.cast()), self.slots_cap as usize * 4);
            self.transitions.unmap();
            self.identity.unmap();
        }
    }
}
