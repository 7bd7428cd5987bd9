//! Callpath profiles (CA mode) at a per-event cost that does not grow with the depth k.
//!
//! Each thread keeps a graph of callpath nodes, one per distinct k-callpath (the last k events
//! on the stack; k unlimited gives the calling-context tree). A node is identified by its event
//! and the node of the callpath before it, so creating one hashes two integers, never a name and
//! never the stack. Moving from the current node to the next on an event entry is:
//!
//! 1. a six-entry cache in the node (the last six transitions that missed it, in the node's
//!    first cache line), which serves loops, recursion, repeated calls and a parent cycling
//!    through a few children with a compare or a few;
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
//!
//! Memory: a tree's nodes, its slot arrays and its maps live in pages mapped when the thread
//! attaches (the maps grow inside node creation). Their bounds are the invariants of `Tree`
//! below and of `node_map::Map`, whose fields are private to their modules; the unsafe accessors
//! (`Tree::node`, `node_ref`, `slot`, `Map::entry`, `static_entry`) check them in debug builds.

use crate::node_map::{Map, MAP_START};
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
/// Nodes per thread; never below `FIRST_NODE + 1`, so a tree holds ROOT and OTHER.
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

/// One event's `StaticInfo` in the table. Atomics (plain loads and stores at `Relaxed`), so that
/// registration writing an entry and another thread's probe reading one never race on plain
/// memory; zeroed pages are valid entries.
#[repr(C)]
struct StaticEntry {
    parent: AtomicU32,
    local_index: AtomicU32,
    children: AtomicU32,
}

/// `MAX_EVENTS` entries, mapped once and never unmapped; null until first needed.
static STATICS: AtomicPtr<StaticEntry> = AtomicPtr::new(std::ptr::null_mut());

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
    // Callpaths are on only with the statics table mapped: every tree may read it.
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

fn statics_table() -> Option<*mut StaticEntry> {
    let existing = STATICS.load(Relaxed);
    if !existing.is_null() {
        return Some(existing);
    }
    let mapped = pages::map(MAX_EVENTS as usize * size_of::<StaticEntry>())?.as_ptr().cast::<StaticEntry>();
    match STATICS.compare_exchange(std::ptr::null_mut(), mapped, Relaxed, Relaxed) {
        Ok(_) => Some(mapped),
        Err(other) => Some(other),
    }
}

/// Records an event's place in the program graph (at registration, under the registry lock).
pub fn set_static(id: u32, info: StaticInfo) {
    if id < MAX_EVENTS {
        if let Some(table) = statics_table() {
            // SAFETY: the table maps MAX_EVENTS entries and is never unmapped; `id` is below.
            let entry = unsafe { &*table.add(id as usize) };
            entry.parent.store(info.parent, Relaxed);
            entry.local_index.store(info.local_index, Relaxed);
            entry.children.store(info.children, Relaxed);
        }
    }
}

/// Adds one to the static child count of `parent` and returns the child's local index.
pub fn add_static_child(parent: u32) -> u32 {
    match statics_table() {
        Some(table) if parent < MAX_EVENTS => {
            // SAFETY: the table maps MAX_EVENTS entries and is never unmapped; `parent` is below.
            let info = unsafe { &*table.add(parent as usize) };
            info.children.fetch_add(1, Relaxed)
        }
        _ => NONE,
    }
}

/// Event `id`'s entry of the statics table.
///
/// # Safety
/// The table is mapped (true wherever a `Tree` exists: `configure` turns callpaths on only
/// once it is, inside `lifecycle::start`'s `Once`, before any thread makes its tree), and
/// `id < MAX_EVENTS`.
#[inline(always)]
unsafe fn static_entry(id: u32) -> &'static StaticEntry {
    let table = STATICS.load(Relaxed);
    debug_assert!(!table.is_null() && id < MAX_EVENTS, "static info of {id} outside the table");
    // SAFETY: the table maps MAX_EVENTS entries, is never unmapped, and `id` is below (the
    // contract).
    unsafe { &*table.add(id as usize) }
}

#[repr(C)]
pub struct Node {
    event: u32,
    /// The node of the callpath without this event (for k finite: without this event, and only
    /// the k-1 events before it).
    prefix: u32,
    depth: u32,
    /// Offset of this node's static-child slots, or NONE.
    slots: u32,
    /// The last `CACHED_STEPS` steps that missed this cache and were let in (`admits`), the
    /// latest first: a parent that
    /// cycles through a few children (an interpreter's dispatch calling its stack adjustment,
    /// its table lookups and its calls) finds each here, where one entry missed at every change
    /// of child (Lua's steps missed 15.2 M times a run with one entry, 13.5 M with two, 1.1 M
    /// with three, 25 000 with six; SQLite's 25.4 M with one, 1.0 M with six). They fill the
    /// node's first cache line with the fields above (the record is aligned to the next).
    cache: [CachedStep; CACHED_STEPS],
    pub record: Record,
}

/// The steps a node remembers (`Node::cache`); the probes in assembly scan them unrolled
/// (`find_step!`).
pub const CACHED_STEPS: usize = 6;

/// One miss in this many that finds its node's cache full is cached (`admits`).
const INSERT_EVERY: u32 = 8;

/// Whether a step that missed its node's cache goes into it: always while the cache has room
/// (not `full`), else one such miss in `INSERT_EVERY` on the thread (`full_misses` counts
/// them), as caches resist a loop through one line more than they hold (bimodal insertion).
/// Cached at every miss, the six steps of a parent that cycles through seven children (SQLite's
/// statement loop in an insert: seven hot routines in turn) each left the cache just before
/// their turn came again, so that every step missed and took its probe out of the assembly
/// paths into the Rust bodies: 2.1 M misses in the shell's 6.6 M calls of one insert, its
/// callpath probes costing 20 ns a call; a parent calling seven children that each call a leaf
/// (the shape of `probe-context`'s dispatch context), callpaths throttled, 16.5 ns a call
/// against 9.7 with six children. Admitting one in eight, six of the seven stay: 0.34 M
/// misses, the insert's probes 23 % cheaper (and its compensated time 3.5 ns a call short
/// instead of 4.1), the seven children's shape 10.8 ns a call. A parent whose children change (a new phase) refills its six
/// within about fifty misses.
#[inline(always)]
fn admits(full: bool, full_misses: &mut u32) -> bool {
    if !full {
        return true;
    }
    *full_misses = full_misses.wrapping_add(1);
    full_misses.is_multiple_of(INSERT_EVERY)
}

/// A step a node remembers: the event that entered under it and the node that event stepped to
/// (whose address the probes in assembly compute from the parent's: nodes are one array).
#[repr(C)]
#[derive(Clone, Copy)]
struct CachedStep {
    event: u32,
    child: u32,
}

impl CachedStep {
    const EMPTY: CachedStep = CachedStep { event: NONE, child: 0 };
}

const _: () = assert!(
    std::mem::offset_of!(Node, record) == 64 && size_of::<Node>() == 192,
    "the cached steps fill the node's first line"
);
const _: () = assert!(size_of::<CachedStep>() == 8 && CACHED_STEPS == 6, "find_step! scans six 8-byte steps");

/// Assembly that finds the cached step of the event in `eax` in the node at `$node` (a register
/// holding its address; the operand `{steps}` is `Node::STEPS_AT`): with `$off32` (a scratch
/// register's 32-bit name) it leaves the step's offset from the first in that register (zero
/// extended) and falls through when found, else jumps to `$miss`; `find_step!(check $node,
/// $hit)` only jumps to `$hit` when found and falls through otherwise. Unrolled over
/// `CACHED_STEPS` (six); the first form defines the local label 71.
#[rustfmt::skip]
macro_rules! find_step {
    (check $node:literal, $hit:literal) => {
        concat!(
            "cmp dword ptr [", $node, " + {steps}], eax\n", "je ", $hit, "\n",
            "cmp dword ptr [", $node, " + {steps} + 8], eax\n", "je ", $hit, "\n",
            "cmp dword ptr [", $node, " + {steps} + 16], eax\n", "je ", $hit, "\n",
            "cmp dword ptr [", $node, " + {steps} + 24], eax\n", "je ", $hit, "\n",
            "cmp dword ptr [", $node, " + {steps} + 32], eax\n", "je ", $hit, "\n",
            "cmp dword ptr [", $node, " + {steps} + 40], eax\n", "je ", $hit,
        )
    };
    ($node:literal, $off32:literal, $miss:literal) => {
        concat!(
            "xor ", $off32, ", ", $off32, "\n",
            "cmp dword ptr [", $node, " + {steps}], eax\n", "je 71f\n",
            "mov ", $off32, ", 8\n", "cmp dword ptr [", $node, " + {steps} + 8], eax\n", "je 71f\n",
            "mov ", $off32, ", 16\n", "cmp dword ptr [", $node, " + {steps} + 16], eax\n", "je 71f\n",
            "mov ", $off32, ", 24\n", "cmp dword ptr [", $node, " + {steps} + 24], eax\n", "je 71f\n",
            "mov ", $off32, ", 32\n", "cmp dword ptr [", $node, " + {steps} + 32], eax\n", "je 71f\n",
            "mov ", $off32, ", 40\n", "cmp dword ptr [", $node, " + {steps} + 40], eax\n", "jne ", $miss, "\n",
            "71:",
        )
    };
}
pub(crate) use find_step;

/// Assembly that puts in `$out` the address of the node a cached step leads to: `$child` (the
/// step's child index, a 32-bit register or memory operand) less `$parent_index` (the parent
/// node's), times `Node::SIZE` (the operand `{node_size}`), from `$parent_at` (the parent node's
/// address), since nodes are one array. `$dist` (and its 32-bit name `$dist32`) is scratch;
/// the flags are left as `imul` sets them. The timed entry, the counted path and the pathed
/// entry find a child node so (no node keeps its children's addresses).
#[rustfmt::skip]
macro_rules! child_node_at {
    ($out:literal, $dist:literal, $dist32:literal, $child:literal, $parent_index:literal, $parent_at:literal) => {
        concat!(
            "mov ", $dist32, ", ", $child, "\n",
            "sub ", $dist32, ", ", $parent_index, "\n",
            "movsxd ", $dist, ", ", $dist32, "\n",
            "imul ", $dist, ", ", $dist, ", {node_size}\n",
            "lea ", $out, ", [", $parent_at, " + ", $dist, "]",
        )
    };
}
pub(crate) use child_node_at;

/// A thread's callpath graph.
///
/// Invariants (made by `new`, kept by `intern`; the fields that carry them are private):
/// - `nodes` maps `cap` nodes (zeroed pages: valid nodes); `nodes[..len]` are the tree's, ROOT
///   and OTHER then every node `intern` made, and `FIRST_NODE <= len <= cap`;
/// - a node's `prefix` is ROOT or a node made before it (a smaller index); a node's `depth` is
///   its prefix's plus one (ROOT's and OTHER's are 0);
/// - `slots` maps `slots_cap` entries and `slots_len <= slots_cap`; a node whose `slots` is not
///   NONE owns `slots[slots..slots + c]`, `c` its event's static child count, which is final
///   before the event can run (its static children are registered with it, in the same module);
/// - a tree exists only while the statics table is mapped (`Tree::new` needs callpaths on).
pub struct Tree {
    nodes: *mut Node,
    len: u32,
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
    /// What this thread's steps that miss a node's cache cost (misses.rs).
    pub misses: crate::misses::Misses,
    /// This thread's misses that found their node's cache full (`admits`).
    full_misses: u32,
}

/// The frames open on a thread, `frames[1..=top]` (frame 0 is the sentinel).
#[derive(Clone, Copy)]
pub struct OpenFrames {
    pub frames: *mut Frame,
    pub top: usize,
}

impl OpenFrames {
    /// Moves every open frame's start `ticks` later: time they will not count.
    ///
    /// # Safety
    /// `frames[1..=top]` are frames of the calling thread's shadow stack (`top < frame_cap`),
    /// and no reference to any of them is used while this runs.
    unsafe fn start_later(self, ticks: u64) {
        for depth in 1..=self.top {
            // SAFETY: frame `depth` is one of frames[1..=top], in the stack and unaliased (the
            // contract).
            let frame = unsafe { &mut *self.frames.add(depth) };
            if !frame.untimed() {
                frame.start += ticks;
            }
        }
    }
}

impl Node {
    /// Where the probes in assembly (timed_path.rs, trampolines.rs) find a node's cached steps
    /// (`find_step!`; a step's child node index is 4 bytes past its event), its record, and
    /// how far apart nodes are.
    pub const STEPS_AT: usize = std::mem::offset_of!(Node, cache);
    pub const STEP_CHILD_AT: usize = std::mem::offset_of!(CachedStep, child);
    pub const RECORD_AT: usize = std::mem::offset_of!(Node, record);
    pub const SIZE: usize = size_of::<Node>();

    /// The node `id` steps to from this one, if this node remembers that step.
    #[inline(always)]
    fn cached(&self, id: u32) -> Option<u32> {
        self.cache.iter().find(|step| step.event == id).map(|step| step.child)
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
        debug_assert!(cap > FIRST_NODE, "a node cap of {cap} leaves no room for ROOT and OTHER");
        let nodes = pages::map(cap as usize * size_of::<Node>())?.as_ptr().cast::<Node>();
        let slots_cap = cap.saturating_mul(4);
        let slots = pages::map(slots_cap as usize * 4)?.as_ptr().cast();
        let mut tree = Tree {
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
            misses: crate::misses::Misses::default(),
            full_misses: 0,
        };
        for (i, event) in [(ROOT, NONE), (OTHER, NONE)] {
            // SAFETY: ROOT and OTHER are below `len` = FIRST_NODE, and `len <= cap` (NODE_CAP
            // is never below FIRST_NODE + 1).
            let n = unsafe { tree.node(i) };
            n.event = event;
            n.prefix = ROOT;
            n.slots = NONE;
            n.cache = [CachedStep::EMPTY; CACHED_STEPS];
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

    /// Node `index`, to read.
    ///
    /// # Safety
    /// As `node`'s: `index < len`.
    #[inline(always)]
    unsafe fn node_ref(&self, index: u32) -> &Node {
        debug_assert!(index < self.len, "callpath node {index} past {}", self.len);
        // SAFETY: nodes[..len] are initialised nodes of the mapped array (the contract); the
        // result borrows the tree, so no mutable reference to the node is live.
        unsafe { &*self.nodes.add(index as usize) }
    }

    /// Static-child slot `at` (0 until its node is created).
    ///
    /// # Safety
    /// `at < slots_len`: a slot `intern` gave a node.
    #[inline(always)]
    unsafe fn slot(&mut self, at: u32) -> &mut u32 {
        debug_assert!(at < self.slots_len, "callpath slot {at} past {}", self.slots_len);
        // SAFETY: slots[..slots_len] are in the mapped array (`slots_len <= slots_cap`) and
        // `at` is below (the contract); the result borrows the tree mutably.
        unsafe { &mut *self.slots.add(at as usize) }
    }

    /// The node after `current` when event `id` enters, and whether the step missed the node's
    /// cache (a sample of such misses is timed with compensation on: misses.rs); `open` are the
    /// frames open on the thread, whose start times exclude a node's creation.
    ///
    /// # Safety
    /// - `current` is a node of this tree (`Tree::node`'s contract);
    /// - `id < MAX_EVENTS` is a registered event whose registration happened before this call
    ///   (module constructors register before the module's code can run on any thread), so its
    ///   static info, and its static parent's child count, are final;
    /// - `open` is as `OpenFrames::start_later` requires: frames of the calling thread's stack
    ///   that no reference used during the call points to.
    #[inline(always)]
    pub unsafe fn step(&mut self, current: u32, id: u32, open: OpenFrames) -> (u32, bool) {
        // SAFETY: `current` is a node of this tree (the contract).
        let node = unsafe { self.node_ref(current) };
        if let Some(next) = node.cached(id) {
            return (next, false);
        }
        if !crate::compensate::enabled() || !self.misses.due() {
            // SAFETY: this fn's contract, which `step_missed` shares.
            return (unsafe { self.step_missed(current, id, open) }, true);
        }
        let mut misses = std::mem::take(&mut self.misses);
        let next = misses.time(|| {
            let cold = self.cold_ticks;
            // SAFETY: as above.
            let next = unsafe { self.step_missed(current, id, open) };
            (next, self.cold_ticks != cold)
        });
        self.misses = misses;
        (next, true)
    }

    /// `step` for a call that stays counted: the same node, whose cached step is then what a
    /// timed call leaves (this event's), unless `keep`, which leaves the cache as it was (the
    /// counted windows paired with paths that step nowhere: `inplace::keeps_step`), and whether
    /// it missed the node's cache (compensation charges such a miss as a timed one's,
    /// `probes::stays_counted`). A missed step is not timed: no time of the call's own is
    /// measured to hold it.
    ///
    /// # Safety
    /// As `step`'s.
    #[inline(always)]
    pub unsafe fn step_counted(
        &mut self,
        current: u32,
        id: u32,
        open: OpenFrames,
        keep: bool,
    ) -> (u32, bool) {
        // SAFETY: `current` is a node of this tree (the contract).
        let node = unsafe { self.node_ref(current) };
        if let Some(next) = node.cached(id) {
            return (next, false);
        }
        let cache = node.cache;
        // SAFETY: this fn's contract, which `step_missed` shares.
        let next = unsafe { self.step_missed(current, id, open) };
        if keep {
            // SAFETY: as above; `step_missed` left `current` where it was.
            let node = unsafe { self.node(current) };
            node.cache = cache;
        }
        (next, true)
    }

    /// `step` past the node's cache: the event's precomputed slot, else the transitions.
    ///
    /// # Safety
    /// As `step`'s.
    #[inline(always)]
    unsafe fn step_missed(&mut self, current: u32, id: u32, open: OpenFrames) -> u32 {
        // SAFETY: `current` is a node of this tree (the contract).
        let node = unsafe { self.node_ref(current) };
        if node.slots != NONE {
            // SAFETY: a tree exists, so the statics table is mapped, and `id < MAX_EVENTS` (the
            // contract).
            let info = unsafe { static_entry(id) };
            if info.parent.load(Relaxed) == node.event {
                // `node` owns the slots of its event's static children (the tree's invariant),
                // and `id` is one of them: its local index is below the count `intern` used.
                let at = node.slots + info.local_index.load(Relaxed);
                // SAFETY: `at` is one of `node`'s slots, below `slots_len` (above).
                let next = match unsafe { *self.slot(at) } {
                    0 => {
                        // SAFETY: `current`, `id` and `open` as this fn's contract.
                        let next = unsafe { self.create(current, id, open, false) };
                        // SAFETY: as the read: creating nodes neither moves nor frees slots.
                        unsafe { *self.slot(at) = next };
                        next
                    }
                    next => next,
                };
                self.cache_step(current, id, next);
                return next;
            }
        }
        // SAFETY: this fn's contract, which `step_cold` shares.
        unsafe { self.step_cold(current, id, open) }
    }

    /// `step` without the node's cache and its precomputed slot.
    ///
    /// # Safety
    /// As `step`'s.
    #[cold]
    #[inline(never)]
    unsafe fn step_cold(&mut self, current: u32, id: u32, open: OpenFrames) -> u32 {
        if current == OTHER {
            return OTHER;
        }
        let next = match self.transitions.get(current, id) {
            Some(next) => next,
            // SAFETY: this fn's contract, which `create` shares.
            None => unsafe { self.create(current, id, open, true) },
        };
        self.cache_step(current, id, next);
        next
    }

    /// Forgets the steps node `current` caches (the calibration's missed step, overhead.rs).
    ///
    /// # Safety
    /// `current` is a node of this tree.
    pub unsafe fn forget_steps(&mut self, current: u32) {
        // SAFETY: the caller's contract.
        unsafe { self.node(current) }.cache = [CachedStep::EMPTY; CACHED_STEPS];
    }

    /// Remembers in node `current` that event `id` steps to node `next` (both nodes of this
    /// tree, below `len`) as its latest cached step, the others moving one place down (the
    /// oldest forgotten), where `admits` lets it in: a step is cached only after every cached
    /// one missed.
    #[inline(always)]
    fn cache_step(&mut self, current: u32, id: u32, next: u32) {
        // SAFETY: `current` is a node of this tree (the caller's, as `step`'s contract).
        let full = unsafe { self.node(current) }.cache[CACHED_STEPS - 1].event != NONE;
        if !admits(full, &mut self.full_misses) {
            return;
        }
        // SAFETY: as above.
        let node = unsafe { self.node(current) };
        node.cache.copy_within(..CACHED_STEPS - 1, 1);
        node.cache[0] = CachedStep { event: id, child: next };
    }

    /// The address of node `index`, which frames keep for the timed path in assembly (nodes
    /// never move: their array is mapped once).
    #[inline(always)]
    pub fn address(&self, index: u32) -> u64 {
        self.nodes.wrapping_add(index as usize) as u64
    }

    /// The node after `current` for `id`, found or created (and, with `transition`, remembered
    /// as the transition from `current`), in time that no open frame counts.
    ///
    /// # Safety
    /// As `step`'s.
    #[cold]
    unsafe fn create(&mut self, current: u32, id: u32, open: OpenFrames, transition: bool) -> u32 {
        let started = crate::clock::now();
        // SAFETY: `current` is a node of this tree and `id` a registered event (the contract).
        let node = unsafe { self.find_or_create(current, id) };
        if transition {
            self.transitions.insert(current, id, node);
        }
        let took = crate::clock::now().saturating_sub(started);
        // SAFETY: `open` as the contract requires; the tree holds no reference to a frame.
        unsafe { open.start_later(took) };
        self.cold_ticks += took;
        node
    }

    /// The node for the callpath `current` followed by `id`, truncated to the last k events.
    /// In the calling-context tree a recursive call collapses onto the node of the activation
    /// it recurses from, as the flat profile collapses recursion (Li and Zhang): the tree
    /// grows with the distinct contexts, never with the recursion's depth.
    ///
    /// # Safety
    /// `current` is a node of this tree, and `id` a registered event (as `step`'s contract).
    unsafe fn find_or_create(&mut self, current: u32, id: u32) -> u32 {
        if current == OTHER {
            return OTHER;
        }
        if self.depth == UNLIMITED {
            // SAFETY: `current` is a node of this tree (the contract).
            if let Some(recursed) = unsafe { self.on_path(current, id) } {
                return recursed;
            }
        }
        // SAFETY: `current` is a node of this tree (the contract), and so is what `drop_oldest`
        // returns for it.
        let prefix = unsafe {
            if self.depth != UNLIMITED && self.node_ref(current).depth >= self.depth {
                self.drop_oldest(current)
            } else {
                current
            }
        };
        // SAFETY: `prefix` is a node of this tree (above), `id` a registered event.
        unsafe { self.intern(prefix, id) }
    }

    /// The node on the callpath that ends at `node` (it or an ancestor) whose event is `id`.
    ///
    /// # Safety
    /// `node` is a node of this tree.
    unsafe fn on_path(&self, mut node: u32, id: u32) -> Option<u32> {
        while node != ROOT && node != OTHER {
            // SAFETY: `node` is the contract's node or a prefix of a node of this tree, which is
            // a node of this tree too (the tree's invariant).
            let n = unsafe { self.node_ref(node) };
            if n.event == id {
                return Some(node);
            }
            node = n.prefix;
        }
        None
    }

    /// The node of `node`'s callpath without its oldest event.
    ///
    /// # Safety
    /// `node` is a node of this tree.
    unsafe fn drop_oldest(&mut self, node: u32) -> u32 {
        // SAFETY: `node` is a node of this tree (the contract).
        let n = unsafe { self.node_ref(node) };
        if n.depth <= 1 || node == OTHER {
            return ROOT;
        }
        let (event, prefix) = (n.event, n.prefix);
        // SAFETY: a node's prefix is a node of this tree (the tree's invariant), and `event`,
        // a node's event, is a registered event (nodes are made for entered events only).
        unsafe {
            let shorter = self.drop_oldest(prefix);
            self.intern(shorter, event)
        }
    }

    /// The node (`prefix`, `event`), created if new; OTHER when the cap is reached.
    ///
    /// # Safety
    /// `prefix` is a node of this tree, and `event` a registered event whose registration
    /// happened before this call (as `step`'s contract).
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
        let children = if event < MAX_EVENTS {
            // SAFETY: a tree exists, so the statics table is mapped; `event` is below MAX_EVENTS.
            unsafe { static_entry(event) }.children.load(Relaxed)
        } else {
            0
        };
        let slots = if children > 0 && self.slots_len + children <= self.slots_cap {
            self.slots_len += children;
            let first = self.slots_len - children;
            // Touched now (they are zero already), so that the first lookup does not fault.
            for i in first..self.slots_len {
                // SAFETY: `i < slots_len`, which stays within `slots_cap` (checked above).
                unsafe { std::ptr::write_volatile(self.slot(i), 0) };
            }
            first
        } else {
            NONE
        };
        // SAFETY: `prefix` is a node of this tree (the contract), and `index` is now one too
        // (`len` grew past it, and stays within `cap`: checked above).
        let (depth, n) = unsafe { (self.node_ref(prefix).depth + 1, self.node(index)) };
        n.event = event;
        n.prefix = prefix;
        n.depth = depth;
        n.slots = slots;
        n.cache = [CachedStep::EMPTY; CACHED_STEPS];
        self.identity.insert(prefix, event, index);
        index
    }

    /// Every node that ran: its callpath (oldest event first) and its record; then the record of
    /// the "other paths" node.
    ///
    /// A snapshot may call this while the tree's thread runs (output.rs): a node it is still
    /// writing has no calls yet, timed or counted, and is skipped, so every prefix walked is a
    /// finished node. A node with counted calls only (a throttled event's) is a path too.
    pub fn paths(&self) -> (Vec<(Vec<u32>, Record)>, Record) {
        let mut out = Vec::new();
        for index in FIRST_NODE..self.len {
            // SAFETY: `index < len`.
            let n = unsafe { self.node_ref(index) };
            if n.record.calls == 0 && n.record.counted == 0 {
                continue;
            }
            let mut path = Vec::with_capacity(n.depth as usize);
            let mut at = index;
            while at != ROOT {
                // SAFETY: `at` is `index` or a prefix of a node of this tree, a node of this
                // tree too (the tree's invariant).
                let node = unsafe { self.node_ref(at) };
                path.push(node.event);
                at = node.prefix;
            }
            path.reverse();
            out.push((path, n.record));
        }
        // SAFETY: OTHER is below FIRST_NODE <= len.
        (out, unsafe { self.node_ref(OTHER) }.record)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        // SAFETY: `nodes` and `slots` are the mappings `Tree::new` made (non-null, of `cap` nodes
        // and `slots_cap` slots, sizes that never change), and so are the maps'; a reference
        // into any of them borrows the tree, so none outlives it.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Hits of a six-step cache run as `cache_step` runs it (latest first, the oldest dropped,
    /// where `admits` lets a step in) over `rounds` cycles through `children` events.
    fn hits(children: u32, rounds: u32, admit: impl Fn(bool, &mut u32) -> bool) -> u32 {
        let (mut cache, mut full_misses, mut hits) = ([NONE; CACHED_STEPS], 0, 0);
        for id in (0..rounds).flat_map(|_| 0..children) {
            if cache.contains(&id) {
                hits += 1;
            } else if admit(cache[CACHED_STEPS - 1] != NONE, &mut full_misses) {
                cache.copy_within(..CACHED_STEPS - 1, 1);
                cache[0] = id;
            }
        }
        hits
    }

    #[test]
    fn a_parent_cycling_through_one_child_more_than_its_cache_keeps_most_of_them() {
        let every_miss = |_: bool, _: &mut u32| true;
        assert_eq!(hits(7, 1000, every_miss), 0, "cached at every miss, each step leaves before its turn");
        let bimodal = hits(7, 1000, admits);
        assert!(bimodal > 7000 * 3 / 4, "six of seven stay: {bimodal} of 7000");
        assert_eq!(hits(6, 1000, admits), 6000 - 6, "six fit: only the first round misses");
    }

    #[test]
    fn a_cache_with_room_takes_every_miss_and_a_full_one_one_in_insert_every() {
        let mut full_misses = 0;
        assert!((0..20).all(|_| admits(false, &mut full_misses)));
        assert_eq!(full_misses, 0, "misses with room are not counted");
        let admitted = (0..INSERT_EVERY * 10).filter(|_| admits(true, &mut full_misses)).count();
        assert_eq!(admitted, 10);
    }
}
