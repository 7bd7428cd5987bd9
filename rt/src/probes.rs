//! The hot path, entry and exit side by side: the bodies the trampolines (`trampolines.rs`)
//! jump to. An entry reads the thread pointer, checks its bounds, routes by the event's mode and
//! pushes a frame with its timestamp last; an exit takes its timestamp first, matches the top
//! frame and closes it (`close_top`: the record, the callpath node, the parent, compensation
//! and the throttling check). The bodies touch the top of the shadow stack and one record, and
//! neither lock nor allocate. Rare cases are out of line and named for what they handle: the
//! first event of a thread and full tables (`enter_full`, `enter_cold`), the end of an in-place
//! window (`counted_window_end`), an event reaching the throttling rule
//! (`past_throttle_calls`), and exits that do not match the top frame (`reconcile.rs`).
//!
//! While the clock is the plain TSC and compensation is off, the timed pair's common case runs
//! in assembly (`timed_path.rs`: `push` and `close_top` without the prologues), which ends
//! here only for what it leaves to these bodies (`exit_charged`, `exit_recalibrate`,
//! `exit_timed_at`); what `push`, `close_top` or `charge` do, it does too. A pathed event's pair
//! runs in assembly likewise (`pathed_path.rs`: what `enter_pathed`, `open_pathed`,
//! `close_untimed` and `hand_up_descendants` do, in the common case).
//!
//! The entry timestamp is taken last and the exit timestamp first, so the bookkeeping of the
//! probes themselves stays outside the measured interval as far as possible.
//!
//! While a probe updates the shadow stack, the depth word carries `BUSY` (`mark_busy`, then
//! `commit`): a signal handler that runs instrumented code in the middle of a probe then sees a
//! depth past the stack's capacity, so its probes only count their events (`enter_cold`) and
//! leave the frames alone; its exit undoes its entry's step, and the interrupted probe goes on
//! as if nothing ran.
//!
//! Every body is an `unsafe fn` with one contract, stated once here and cited as "the probe
//! contract": `id_slot` is an id slot of a registered module's table (or a hidden event's
//! static), as the pass and the trampolines pass it, and the thread state `thread::current()`
//! returns is the calling thread's own: only this thread touches its frames and records while
//! it runs a probe, and the state lives until `thread::retire_current`, which clears the
//! pointer first.

use crate::clock;
use crate::compensate;
use crate::inplace;
use crate::overhead::{LOOP, STANDARD};
use crate::recalibrate;
use crate::reconcile;
use crate::registry::{load_id, UNREGISTERED};
use crate::switch;
use crate::thread::{self, Frame, Record, ThreadState};
use instrument_live::{COUNTED_CHILD, TIMED_CHILD, UNTIMED_SNAPSHOT, UNTIMED_START};
use std::sync::atomic::{compiler_fence, Ordering::SeqCst};

/// What an entry probe returns to the probed code: whether its exit probe has anything to close.
/// A routine's and a call statement's exit probes run only when the entry returned non-zero
/// (`OPENED` or `TIMED`: the pass branches on it, and hands it to the exit), so a counted or
/// switched-off routine costs one probe call, not two.
/// Loop exits run whatever it says (they also hand over the iterations): an exit is correct
/// either way, as those of code from an older pass are.
pub type Opened = u32;
/// Nothing to close: the call was counted, switched off, or not recorded.
pub const NOTHING: Opened = 0;
/// A frame was pushed, or a level counted on an overflowed or busy shadow stack.
pub const OPENED: Opened = 1;
/// A timed frame was pushed whose exit needs no fence (`OPENED` with a bit of its own): the
/// instrumented code hands the entry's result to its exit (`instrument_contract::probes`), and
/// the exit in assembly reads the clock first on it instead of looking up the mode to keep an
/// untimed frame's exit from an `rdtscp` (timed_path.rs). Any other value takes that lookup, so
/// an exit from code of an older pass, which passes none, is correct.
pub const TIMED: Opened = OPENED | 2;
const _: () = assert!(
    instrument_contract::probes::UNKNOWN_OPENED != TIMED,
    "the exit of code that does not have its entry's result must look the mode up"
);
const _: () = assert!(NOTHING == 0, "the trampolines return a switched-off entry's NOTHING as zero");

/// Event entry (routine, loop or call statement): push a frame for the event whose id is in
/// `id_slot`.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn enter(id_slot: *const u32, sp: usize) -> Opened {
    clock::fence();
    let mut state = thread::current();
    if state.is_null() {
        state = thread::attach();
        if state.is_null() {
            return NOTHING;
        }
    }
    // SAFETY: the probe contract; `attach` returns the state it made this thread's.
    let (ts, id) = unsafe { (&mut *state, load_id(id_slot)) };
    let depth = ts.depth + 1;
    if depth >= ts.frame_cap() || id >= ts.record_cap() {
        // SAFETY: this thread's state, with the depth and id that failed the bounds.
        return unsafe { enter_cold(ts, id, depth, sp) };
    }
    let mode = switch::mode(id);
    // One test on the measured path for every mode that pushes no timed frame.
    if mode & (switch::UNTIMED | switch::PATHED) != 0 {
        if mode & switch::COUNTED != 0 {
            // SAFETY: id < record_cap and the top frame is stored (depth + 1 < frame_cap).
            return unsafe { enter_counted(ts, id, sp) };
        }
        if mode == switch::PATHED {
            // SAFETY: 1 <= depth < frame_cap and id < record_cap, checked above; a pathed event
            // is inside the mode table (its mode is stored there).
            return unsafe { enter_pathed(ts, id, depth, sp) };
        }
        return NOTHING;
    }
    let fenced = mode == switch::FENCED;
    // SAFETY: 1 <= depth < frame_cap and id < record_cap, checked above.
    unsafe { push(ts, depth, id, sp, fenced) };
    if fenced {
        // The entry's own work after its timestamp done before the event's starts.
        clock::fence_always();
    }
    opened_timed(fenced)
}

/// What an entry that pushed a timed frame returns: `TIMED`, or `OPENED` for a fenced one, whose
/// exit the trampolines fence (`exit_other`).
#[inline(always)]
fn opened_timed(fenced: bool) -> Opened {
    if fenced {
        OPENED
    } else {
        TIMED
    }
}

/// Pushes frame `depth` for event `id`, its clock read last (`fenced`: once every earlier
/// instruction has completed, `clock::now_fenced_entry`).
///
/// # Safety
/// `ts` is the calling thread's state, 1 <= depth < frame_cap, id < record_cap.
#[inline(always)]
unsafe fn push(ts: &mut ThreadState, depth: usize, id: u32, sp: usize, fenced: bool) {
    mark_busy(ts, depth - 1);
    // SAFETY: depth - 1 < frame_cap and id < record_cap (the contract).
    unsafe { ts.frame(depth - 1).child_calls += TIMED_CHILD };
    // SAFETY: as above; the record is not otherwise referenced here.
    unsafe { ts.record(id).active += 1 };
    // SAFETY: the contract, which is `step_node`'s.
    let frame = unsafe { open_frame(ts, depth, id, sp, true) };
    frame.start = if fenced { clock::now_fenced_entry() } else { clock::now_at_entry() };
    commit(ts, depth);
}

/// Fills frame `depth` for event `id` at `sp` with its callpath node (`step_node`), all but its
/// start, and returns it.
///
/// # Safety
/// `step_node`'s contract.
#[inline(always)]
unsafe fn open_frame(ts: &mut ThreadState, depth: usize, id: u32, sp: usize, timed: bool) -> &mut Frame {
    // SAFETY: the contract.
    let (node, node_at) = unsafe { step_node(ts, depth, id, timed) };
    // SAFETY: depth < frame_cap (the contract); no other frame reference is live.
    let frame = unsafe { ts.frame(depth) };
    frame.node = node;
    frame.node_at = node_at;
    frame.id = id;
    frame.child_calls = 0;
    frame.sp = sp;
    frame.child_incl = 0;
    frame.overhead = 0;
    frame.comp_child = 0;
    frame
}

/// The callpath node of a frame for event `id` at `depth` and its address ((0, 0) without a
/// tree): the step from the node of frame `depth - 1`, whose time a missed step's cost is
/// charged to (compensation on). A timed activation is one more of the node's open ones, and
/// its misses (and those of a leaf's pathed windows) count for the event's in-place estimate
/// (`inplace::note_miss`).
///
/// # Safety
/// `ts` is the calling thread's state, marked busy, 1 <= depth < frame_cap, id < record_cap.
#[inline(always)]
unsafe fn step_node(ts: &mut ThreadState, depth: usize, id: u32, timed: bool) -> (u32, u64) {
    // SAFETY: the tree, when there is one, is this thread's (attach maps it).
    let Some(tree) = (unsafe { ts.tree() }) else { return (0, 0) };
    // SAFETY: depth - 1 < frame_cap (the contract). The parent's node is one the tree made (or
    // the root); `step` returns another it made; the open frames are 1..depth, below frame_cap.
    unsafe {
        let parent = ts.frame(depth - 1);
        let open = crate::callpath::OpenFrames { frames: ts.frames(), top: depth - 1 };
        let (node, missed) = tree.step(parent.node, id, open);
        if missed && compensate::enabled() {
            // The miss ran in the parent's time, before this frame's clock read.
            parent.overhead += tree.misses.charged();
            inplace::note_miss(ts, id, if timed { inplace::Missed::Timed } else { inplace::Missed::Pathed });
        }
        tree.node(node).record.active += u32::from(timed);
        (node, tree.address(node))
    }
}

/// Entry of an event in a counted window that keeps it on the shadow stack (`switch::PATHED`:
/// a callpath parent under in-place estimation, whose children's calls would otherwise go to
/// paths that skip it). It is counted as `enter_counted` counts it (the call's cost and its
/// untimed estimate to the frame on top, and to the callpath nodes), and pushes a frame for
/// its children's steps without a clock read (`UNTIMED_START`), which its exit closes without
/// one (`close_untimed`). At the window's end it is timed instead, as a counted entry is. The
/// common case runs in assembly (`pathed_path.rs`, `pathed_enter!`): a change here, or in
/// `open_pathed`, is a change there.
///
/// # Safety
/// `ts` is the calling thread's state, 1 <= depth < frame_cap, `id` below record_cap and
/// inside the mode table.
#[inline(never)]
unsafe fn enter_pathed(ts: &mut ThreadState, id: u32, depth: usize, sp: usize) -> Opened {
    mark_busy(ts, depth - 1);
    // SAFETY: id < record_cap and depth - 1 < frame_cap (the contract); distinct memory.
    let (record, top) = unsafe { (ts.record(id), ts.frame(depth - 1)) };
    record.counted += 1;
    let counted = record.counted;
    top.child_calls += COUNTED_CHILD;
    let cost = compensate::pathed_cost(id);
    top.overhead += cost;
    let (caller, caller_node) = (top.id, top.node);
    // SAFETY: the contract; no reference to either record is held from here.
    let estimate = unsafe { estimate_untimed(ts, id, caller) };
    if inplace::waited_out(id, counted) {
        // Waiting in the queue, it had its share: measured again from its next call (a
        // throttled one challenges the estimation ahead instead).
        // SAFETY: this thread's state at a counted entry of `id`, the stack marked busy.
        unsafe { inplace::had_its_share(ts, id) };
    }
    if inplace::at_end(counted) {
        // SAFETY: this thread's state at a counted entry of `id`, the stack marked busy.
        if unsafe { inplace::counted_boundary(ts, id) } {
            // SAFETY: the counted entry above, with its charges.
            return unsafe { timed_instead(ts, id, sp, cost, estimate) };
        }
        if switch::mode(id) != switch::PATHED {
            // A counted window begins at this entry (a leaf's pathed windows, inplace's
            // `Window::Pathed`): it is counted as the window's others, not kept on the stack.
            // SAFETY: the counted entry above, which charged `cost`.
            return unsafe { counted_instead(ts, id, depth - 1, cost, estimate) };
        }
    }
    // SAFETY: the contract, which is `open_pathed`'s.
    unsafe { open_pathed(ts, depth, id, sp, caller_node, estimate) }
}

/// Pushes the untimed frame of a pathed entry of `id` at `depth` (its counting done, the
/// untimed `estimate` charged), counts the call on its node and the estimate on its node and
/// its caller's (`caller_node`), and commits the stack.
///
/// # Safety
/// `enter_pathed`'s contract, at that entry, with the stack marked busy.
#[inline(always)]
unsafe fn open_pathed(
    ts: &mut ThreadState,
    depth: usize,
    id: u32,
    sp: usize,
    caller_node: u32,
    estimate: u64,
) -> Opened {
    // SAFETY: the contract, which is `open_frame`'s.
    let node = unsafe { open_frame(ts, depth, id, sp, false) }.node;
    // Its node's untimed-children total now, which its exit takes its descendants' from
    // (`hand_up_descendants`); none without a tree.
    let mut snapshot = 0;
    // SAFETY: the tree, when there is one, is this thread's; both nodes are ones it made.
    if let Some(tree) = unsafe { ts.tree() } {
        // SAFETY: as above.
        unsafe {
            tree.node(caller_node).record.untimed_children += estimate;
            let own = &mut tree.node(node).record;
            own.counted += 1;
            own.untimed_own += estimate;
            snapshot = own.untimed_children;
        }
    }
    // SAFETY: depth < frame_cap (the contract); the frame opened above.
    unsafe { ts.frame(depth).start = UNTIMED_START | snapshot & UNTIMED_SNAPSHOT };
    commit(ts, depth);
    OPENED
}

/// A pathed entry of `id` that begins a counted window: its charge to the frame on top (at
/// `depth`), `cost`, becomes a counted call's, it is counted on its node as a counted entry
/// (its untimed `estimate` charged), and no frame is pushed.
///
/// # Safety
/// `enter_pathed`'s contract, at that entry (its counting done), with the stack marked busy.
#[cold]
#[inline(never)]
unsafe fn counted_instead(ts: &mut ThreadState, id: u32, depth: usize, cost: u64, estimate: u64) -> Opened {
    // SAFETY: depth < frame_cap (the contract).
    let top = unsafe { ts.frame(depth) };
    top.overhead = top.overhead - cost + compensate::counted_cost(id);
    // SAFETY: the contract, the stack marked busy at `depth`, the call counted.
    unsafe { stays_counted(ts, depth, id, estimate) }
}

/// A counted entry of `id` that begins a pathed window (inplace's `Window::Pathed`): its charge
/// to the frame on top, `cost`, becomes a pathed call's, and its untimed frame is pushed as
/// `enter_pathed` pushes it.
///
/// # Safety
/// `enter_counted`'s contract, at that entry (its counting done), with the stack marked busy.
#[cold]
#[inline(never)]
unsafe fn pathed_instead(ts: &mut ThreadState, id: u32, sp: usize, cost: u64, estimate: u64) -> Opened {
    let depth = ts.depth & !BUSY;
    // The frame on top changes: what was counted inline under it goes to it first.
    crate::inline::charge_pending(ts, depth);
    // SAFETY: depth < frame_cap (the contract).
    let top = unsafe { ts.frame(depth) };
    top.overhead = top.overhead - cost + compensate::pathed_cost(id);
    let caller_node = top.node;
    // SAFETY: the contract: depth + 1 < frame_cap, the stack marked busy.
    unsafe { open_pathed(ts, depth + 1, id, sp, caller_node, estimate) }
}

/// Pops frame `depth`, one an entry kept on the stack untimed (`enter_pathed`): what its
/// children charged it goes to its parent, as it would have gone had the call been only
/// counted, and its record and node count its children. The common case runs in assembly
/// (`pathed_path.rs`, `pathed_exit!`): a change here, or in `hand_up_descendants`, is a change
/// there.
///
/// # Safety
/// `ts` is the calling thread's attached state, `depth` its top frame (1 <= depth <
/// frame_cap), pushed by `enter_pathed`.
#[inline(never)]
unsafe fn close_untimed(ts: &mut ThreadState, depth: usize) {
    mark_busy_leaving(ts, depth);
    // SAFETY: `depth` and `depth - 1` are frames of the mapped stack (the contract), distinct.
    let (frame, parent) = unsafe { (*ts.frame(depth), ts.frame(depth - 1)) };
    parent.child_incl += frame.child_incl;
    parent.overhead += frame.overhead;
    parent.comp_child += frame.comp_child;
    let (calls, counted) = frame.children();
    let (parent_id, parent_node) = (parent.id, parent.node);
    // SAFETY: the frame's id is below record_cap (a frame is pushed only for such ids).
    let record = unsafe { ts.record(frame.id) };
    record.child_calls += calls;
    record.counted_children = record.counted_children.saturating_add(counted);
    // SAFETY: the tree, when there is one, is this thread's; the frame's node is one it made.
    if let Some(tree) = unsafe { ts.tree() } {
        // SAFETY: as above.
        unsafe { tree.node(frame.node).record.child_calls += calls };
    }
    // SAFETY: the contract; the frames are copied out, no record reference is held.
    unsafe { hand_up_descendants(ts, &frame, parent_id, parent_node) };
    commit(ts, depth - 1);
}

/// The untimed calls made under an untimed activation (`frame`, closing) were estimated into
/// its node's `untimed_children` (by its children directly, by its untimed children's exits
/// for theirs), which its exclusive time never held: their time ran in the exclusive time of
/// the nearest timed activation below it. So their total since the frame opened (its start's
/// snapshot) becomes part of its own estimate, on its record and node (its inclusive time
/// gains it, its exclusive time keeps only its own), and goes on to its parent's
/// `untimed_children` as its children's charges do (record and node): a timed parent's
/// exclusive time loses it, an untimed parent hands it on at its own exit. Without this, a
/// throttled callpath parent's untimed children left it a negative exclusive time (the ground
/// truth's nested context: -34 % of the run for its middle routine) and an inclusive time
/// without them. A parent on the same node (a recursion deeper than the callpath depth) holds
/// these charges already and takes them at its own exit; the sentinel has no record. (With
/// recursion, a record's inclusive estimate counts an inner activation's own estimate twice:
/// once as its own, once in the outer one's; its exclusive estimate is right.)
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy; `frame` an untimed frame
/// `enter_pathed` pushed, with an id below record_cap; `parent_id` the frame's below (below
/// record_cap or the sentinel) and `parent_node` its node.
unsafe fn hand_up_descendants(ts: &mut ThreadState, frame: &Frame, parent_id: u32, parent_node: u32) {
    // SAFETY: the tree, when there is one, is this thread's; both nodes are ones it made.
    let Some(tree) = (unsafe { ts.tree() }) else { return };
    // SAFETY: as above.
    let own = unsafe { &mut tree.node(frame.node).record };
    let descendants = own.untimed_children.wrapping_sub(frame.start) & UNTIMED_SNAPSHOT;
    if descendants == 0 || parent_node == frame.node {
        return;
    }
    own.untimed_own += descendants;
    // SAFETY: as above; the reference to the frame's node has ended.
    unsafe { tree.node(parent_node).record.untimed_children += descendants };
    // SAFETY: the frame's id is below record_cap (the contract).
    unsafe { ts.record(frame.id).untimed_own += descendants };
    if parent_id != crate::thread::SENTINEL_ID {
        // SAFETY: parent_id is below record_cap (the contract); the reference above has ended.
        unsafe { ts.record(parent_id).untimed_children += descendants };
    }
}

/// Entry of a throttled event, from its trampoline: the counted path without the timed
/// entry's prologue; the first event of a thread and full tables take the full path.
/// Its trampoline routes only ids inside the mode table here. It does not fence: a counted
/// entry reads no clock, and the fenced strategy's fence (clock.rs)
/// comes with compensation, in `counted_compensated`.
///
/// # Safety
/// The probe contract (module comment), from the routed trampoline.
pub unsafe extern "C" fn enter_throttled(id_slot: *const u32, sp: usize) -> Opened {
    let state = thread::current();
    if state.is_null() {
        // SAFETY: the probe contract.
        return unsafe { enter_full(id_slot, sp) };
    }
    // SAFETY: the probe contract.
    let (ts, id) = unsafe { (&mut *state, load_id(id_slot)) };
    if ts.depth + 1 >= ts.frame_cap() || id >= ts.record_cap() {
        // SAFETY: the probe contract.
        return unsafe { enter_full(id_slot, sp) };
    }
    // SAFETY: bounds checked above; the trampoline routes only ids inside the mode table.
    unsafe { enter_counted(ts, id, sp) }
}

/// # Safety
/// The probe contract (module comment).
#[inline(never)]
unsafe fn enter_full(id_slot: *const u32, sp: usize) -> Opened {
    // SAFETY: the probe contract.
    unsafe { enter(id_slot, sp) }
}

/// Entry of a throttled event (or of one in a counted window of inplace): its call is
/// counted (for it and as a child of the frame on top), but no frame is pushed and the clock is
/// not read. It opens a frame only where an in-place window ends and times this entry. The
/// trampolines do the same in assembly away from a window's end, serialized mode and waiting
/// events that have had their share (trampolines.rs, `counted_path!`): a change here is a change
/// there. With callpaths a call that stays counted is counted on its node too
/// (`count_on_node`; the assembly path only where its caller's node has the step cached).
///
/// # Safety
/// `ts` is the calling thread's state, `id < record_cap`, `ts.depth + 1 < frame_cap`, and `id`
/// is inside the mode table (a counted event's).
#[inline(always)]
unsafe fn enter_counted(ts: &mut ThreadState, id: u32, sp: usize) -> Opened {
    let depth = ts.depth;
    mark_busy_keeping_pending(ts, depth);
    if id == ts.bare_event {
        if crate::current::window_left() != 0 && ts.bare_mask == 0 {
            // A shadow window's call, as the counted path counts it (trampolines.rs). (A bare
            // window's calls reach the body only once its count is down, from its own entry
            // code; any other would be credited with them if counted down here.)
            crate::current::set_window_left(crate::current::window_left() - 1);
            crate::current::set_pending_calls(crate::current::pending_calls() + 1);
        } else {
            // A bare window's end is a count of its event's record, which its calls reach once
            // credited.
            crate::inline::end_bare(ts, depth);
        }
    }
    // SAFETY: id < record_cap and depth < frame_cap (the contract); a record and a frame are
    // distinct memory.
    let (record, top) = unsafe { (ts.record(id), ts.frame(depth)) };
    record.counted += 1;
    let counted = record.counted;
    top.child_calls += COUNTED_CHILD;
    let caller = top.id;
    // SAFETY: the contract; the caller is the top frame's event (below record_cap, as every
    // pushed frame's) or the sentinel, and no reference to either record is held from here.
    let estimate = unsafe { estimate_untimed(ts, id, caller) };
    if compensate::enabled() {
        // SAFETY: the contract, the stack marked busy at `depth`.
        return unsafe { counted_compensated(ts, id, sp, estimate) };
    }
    if inplace::at_end(counted) {
        // SAFETY: as above, with no cost charged.
        return unsafe { counted_window_end(ts, id, sp, 0, estimate) };
    }
    // SAFETY: the contract, the stack marked busy at `depth`, the call counted.
    unsafe { stays_counted(ts, depth, id, estimate) }
}

/// The end of an entry of `id` that stays counted (its record's count and untimed `estimate`
/// charged, the stack marked busy at `depth`, the frame on top): with callpaths, the call is
/// counted on its node too, and the stack committed.
///
/// # Safety
/// `ts` is the calling thread's state, `depth < frame_cap` its top frame, `id` below record_cap
/// and inside the mode table.
#[inline(always)]
unsafe fn stays_counted(ts: &mut ThreadState, depth: usize, id: u32, estimate: u64) -> Opened {
    // SAFETY: the contract.
    let missed = unsafe { count_on_node(ts, depth, id, 1, estimate) };
    if missed && compensate::enabled() {
        // SAFETY: the contract.
        unsafe { charge_counted_miss(ts, depth, id) };
    }
    commit(ts, depth);
    NOTHING
}

/// A counted call of `id` whose step missed its caller's node cache: the trip out of the
/// assembly path into the body and the step past the cache ran in the time of the frame at
/// `depth`, which it is charged as a timed call's miss is (misses.rs), and the estimation of
/// `id` leaves it out of its counted windows (`inplace::note_miss`). Where a parent
/// cycles through more children than its node caches (an interpreter's dispatch), its
/// throttled leaves' counted calls miss about once a cycle, and their counted cost, measured
/// once in windows that may have missed more or less often than the run, was all they were
/// charged.
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy, `depth` below frame_cap.
#[cold]
unsafe fn charge_counted_miss(ts: &mut ThreadState, depth: usize, id: u32) {
    // SAFETY: the tree, when there is one, is this thread's (attach maps it).
    let Some(tree) = (unsafe { ts.tree() }) else { return };
    let charge = tree.misses.charged();
    // SAFETY: depth < frame_cap (the contract).
    unsafe { ts.frame(depth) }.overhead += charge;
    inplace::note_miss(ts, id, inplace::Missed::Counted);
}

/// With callpaths, `calls` counted calls of `id` from the frame at `depth`: on the node their
/// step from the caller's node reaches (`Tree::step_counted`: the step a timed call would take,
/// cached as it would cache it unless the event's window keeps the caller's cache,
/// `inplace::keeps_step`), their untimed `estimate` (in all) on that node and on the caller's,
/// as the record and the caller's record have them (`charge_untimed`). So a callpath's counts are
/// exact whichever mode its calls ran in: counted calls used to reach the flat record only,
/// and a compensated callpath profile's hot leaves lost their counted windows' calls there
/// (the hot_parent fixture's leaf: about one call in twelve).
///
/// A node created here takes time out of every frame open on the thread, which may reach
/// above `depth` (a tally window ended by a deeper call: `tally::close`). Returns whether the
/// step missed the caller's node cache (false without a tree).
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy at its top frame (below
/// frame_cap), `depth` at or below it, `id` below record_cap and inside the mode table.
#[inline(always)]
pub(crate) unsafe fn count_on_node(
    ts: &mut ThreadState,
    depth: usize,
    id: u32,
    calls: u64,
    estimate: u64,
) -> bool {
    // SAFETY: depth < frame_cap (the contract); its node is one the tree made (or the root).
    let caller = unsafe { ts.frame(depth) }.node;
    // SAFETY: the contract, which is `count_on_node_from`'s.
    unsafe { count_on_node_from(ts, caller, id, calls, estimate) }
}

/// `count_on_node` from the caller's node `caller` (one the thread's tree made, or the root),
/// which may be the node of a frame that has closed since (tally.rs credits a tally window's
/// executions to their caller's node at the window's end); whether the step missed.
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy at its top frame (below
/// frame_cap), `id` below record_cap and inside the mode table.
#[inline(always)]
pub(crate) unsafe fn count_on_node_from(
    ts: &mut ThreadState,
    caller: u32,
    id: u32,
    calls: u64,
    estimate: u64,
) -> bool {
    let (frames, top) = (ts.frames(), ts.depth & !BUSY);
    // SAFETY: the tree, when there is one, is this thread's (attach maps it).
    let Some(tree) = (unsafe { ts.tree() }) else { return false };
    // SAFETY: `caller` is a node the tree made (the contract), and `step_counted` returns
    // another; the open frames are 1..=top, below frame_cap.
    unsafe {
        let open = crate::callpath::OpenFrames { frames, top };
        let (node, missed) = tree.step_counted(caller, id, open, inplace::keeps_step(id));
        let own = &mut tree.node(node).record;
        own.counted += calls;
        own.untimed_own += estimate;
        tree.node(caller).record.untimed_children += estimate;
        missed
    }
}

/// `count_on_node_from` for `calls` calls of `id` whose node credit waited (`tally::Pending`: a
/// tally window's executions, a bare window's calls, inline.rs) and whose caller's node is
/// `caller`, from anywhere on the thread: the stack is marked busy meanwhile (a signal's probe
/// counts a level) and left as it was. Nothing on an overflowed stack.
///
/// # Safety
/// `ts` is the calling thread's state, `id` below record_cap and inside the mode table,
/// `caller` a node its tree made (or the root).
pub(crate) unsafe fn count_pending_on_node(
    ts: &mut ThreadState,
    caller: u32,
    id: u32,
    calls: u64,
    estimate: u64,
) {
    let (depth, top) = (ts.depth, ts.depth & !BUSY);
    if top >= ts.frame_cap() {
        return;
    }
    ts.depth = top | BUSY;
    compiler_fence(SeqCst);
    // SAFETY: the contract, the stack marked busy at its top (below frame_cap, checked). Its
    // misses are bookkeeping's (the calibrated flush's and the tally window's), not a call's.
    unsafe { count_on_node_from(ts, caller, id, calls, estimate) };
    commit(ts, depth);
}

/// Charges a counted call's estimated time (untimed.rs) and returns it: it is event `id`'s own,
/// and the exclusive time of its caller `caller` holds it (`charge_untimed`).
///
/// # Safety
/// As `charge_untimed`'s.
#[inline(always)]
unsafe fn estimate_untimed(ts: &mut ThreadState, id: u32, caller: u32) -> u64 {
    // SAFETY: `id` is inside the mode table (the contract).
    let estimate = unsafe { crate::untimed::per_call_in_table(id) };
    if estimate != 0 {
        // SAFETY: the contract.
        unsafe { charge_untimed(ts, id, caller, estimate, false) };
    }
    estimate
}

/// Charges (or, `undo`, takes back) `estimate`, a counted call's estimated time: it is event
/// `id`'s own, and the exclusive time of its caller `caller` holds it. The sentinel (no
/// instrumented caller) has no record, and no time holds the call. Each record is reached
/// afresh through the table (`caller` may be `id` itself, a recursion), so callers hold no
/// reference to either across this call. A charge is taken back with the amount it charged,
/// not the event's estimate then: the window boundary in between may have changed it.
///
/// # Safety
/// `ts` is the calling thread's state; `id` is a counted event's (inside the mode table and
/// below record_cap), `caller` below record_cap or the sentinel; the caller holds no
/// reference to either record.
#[inline(always)]
pub(crate) unsafe fn charge_untimed(ts: &mut ThreadState, id: u32, caller: u32, estimate: u64, undo: bool) {
    let add = |total: &mut u64| *total = if undo { *total - estimate } else { *total + estimate };
    // SAFETY: id < record_cap, and this is the only reference to the record (the contract).
    add(unsafe { &mut ts.record(id).untimed_own });
    if caller != crate::thread::SENTINEL_ID {
        // SAFETY: as above for `caller`; the reference to `id`'s record has ended.
        add(unsafe { &mut ts.record(caller).untimed_children });
    }
}

/// The rest of a counted entry with compensation on (the stack still marked busy): its
/// in-place cost goes to the frame on top, and it may end an in-place window.
///
/// # Safety
/// `enter_counted`'s contract, from it, with the stack marked busy.
#[inline(never)]
unsafe extern "C" fn counted_compensated(ts: &mut ThreadState, id: u32, sp: usize, estimate: u64) -> Opened {
    clock::fence();
    let depth = ts.depth & !BUSY;
    let cost = compensate::counted_cost(id);
    // SAFETY: depth < frame_cap and id < record_cap (the contract), one reference at a time.
    let counted = unsafe {
        ts.frame(depth).overhead += cost;
        ts.record(id).counted
    };
    if inplace::waited_out(id, counted) {
        // SAFETY: this thread's state at a counted entry of `id`, the stack marked busy.
        unsafe { inplace::had_its_share(ts, id) };
    }
    if inplace::at_end(counted) {
        // SAFETY: the contract, the counted entry's cost `cost`.
        return unsafe { counted_window_end(ts, id, sp, cost, estimate) };
    }
    // SAFETY: the contract, the stack marked busy at `depth`, the call counted.
    unsafe { stays_counted(ts, depth, id, estimate) }
}

/// A counted entry that reached inplace's window end (the stack still marked busy): when the
/// next window is timed, this entry (whose counting charged `cost` and the untimed `estimate`)
/// is taken back and timed instead.
///
/// # Safety
/// `enter_counted`'s contract, from it, with the stack marked busy.
#[cold]
#[inline(never)]
unsafe extern "C" fn counted_window_end(
    ts: &mut ThreadState,
    id: u32,
    sp: usize,
    cost: u64,
    estimate: u64,
) -> Opened {
    // SAFETY: this thread's state at a counted entry of `id`, as it asks.
    if !unsafe { inplace::counted_boundary(ts, id) } {
        if switch::mode(id) == switch::PATHED {
            // A pathed window begins at this entry (a leaf's, inplace's `Window::Pathed`).
            // SAFETY: the contract, at the counted entry that charged `cost` and `estimate`.
            return unsafe { pathed_instead(ts, id, sp, cost, estimate) };
        }
        // SAFETY: the contract, the stack marked busy at its depth, the call counted.
        return unsafe { stays_counted(ts, ts.depth & !BUSY, id, estimate) };
    }
    // SAFETY: the contract, at the counted entry that charged `cost` and `estimate`.
    unsafe { timed_instead(ts, id, sp, cost, estimate) }
}

/// Takes back a counted entry of `id` (which charged `cost` to the frame on top and the
/// untimed `estimate`) that an in-place window's boundary times instead, and pushes its frame.
///
/// # Safety
/// `enter_counted`'s contract, at that entry, with the stack marked busy.
unsafe fn timed_instead(ts: &mut ThreadState, id: u32, sp: usize, cost: u64, estimate: u64) -> Opened {
    let depth = ts.depth & !BUSY;
    // SAFETY: id < record_cap and depth < frame_cap (the contract); distinct memory.
    let (record, top) = unsafe { (ts.record(id), ts.frame(depth)) };
    record.counted -= 1;
    top.child_calls -= COUNTED_CHILD;
    top.overhead -= cost;
    let caller = top.id;
    let fenced = switch::mode(id) == switch::FENCED;
    // SAFETY: as in `enter_counted`, whose charge this takes back; then depth + 1 < frame_cap
    // (the contract) for the pushed frame.
    unsafe {
        charge_untimed(ts, id, caller, estimate, true);
        push(ts, depth + 1, id, sp, fenced);
    }
    opened_timed(fenced)
}

/// An entry that failed the fast path's bounds: a re-entry from a signal handler, an
/// overflowed shadow stack, or an id past the thread's records.
///
/// # Safety
/// `ts` is the calling thread's state; `depth` is its depth plus one.
#[cold]
#[inline(never)]
unsafe fn enter_cold(ts: &mut ThreadState, id: u32, depth: usize, sp: usize) -> Opened {
    if depth & BUSY != 0 {
        // In a signal handler that interrupted a probe: counted, and the step undone at its exit.
        ts.depth = depth;
        if id < ts.record_cap() {
            // SAFETY: id < record_cap, checked. The handler runs on this thread between two
            // instructions of the interrupted probe, which fenced its updates before marking
            // the stack busy (reconcile's module comment).
            unsafe { ts.record(id).counted += 1 };
        }
        OPENED
    } else if depth >= ts.frame_cap() {
        ts.depth = depth;
        ts.counters.stack_overflow += 1;
        OPENED
    } else if id == UNREGISTERED || !thread::grow_records(ts, id) {
        ts.counters.unregistered += 1;
        NOTHING
    } else {
        let fenced = switch::mode(id) == switch::FENCED;
        // SAFETY: depth < frame_cap here, and grow_records made id < record_cap.
        unsafe { push(ts, depth, id, sp, fenced) };
        opened_timed(fenced)
    }
}

/// Event exit of a measured event, from its trampoline (which tested the mode): the timestamp
/// first, then the top frame popped if it is this event's, else reconciled. An event switched
/// to another mode since the trampoline's test is handled by `exit_at` as by
/// `exit_unmeasured`: its frame is closed when on top, and nothing else happens.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn exit(id_slot: *const u32, sp: usize) {
    // SAFETY: the probe contract.
    unsafe { exit_at(clock::now(), id_slot, sp, STANDARD) }
}

/// Exit of an event in a mode the exit trampolines do not route themselves: a measured one whose
/// entries fence (`FENCED`, an in-place split window) exits as a measured event, one kept on
/// the stack untimed (`PATHED`) as `exit_pathed`, any other (switched on again from outside) as
/// `exit_untimed`.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn exit_other(id_slot: *const u32, sp: usize) {
    // The trampoline fenced a fenced event's exit: the event's work is done before the exit's
    // own starts, which would otherwise overlap it (the `rdtscp` waits for the work before it,
    // but does not keep the exit's own from running in the event's shadow).
    // SAFETY: the probe contract.
    let mode = switch::mode(unsafe { load_id(id_slot) });
    if mode == switch::FENCED {
        // SAFETY: the probe contract.
        unsafe { exit(id_slot, sp) }
    } else if mode == switch::PATHED {
        // SAFETY: the probe contract.
        unsafe { exit_pathed(id_slot, sp, STANDARD) }
    } else {
        // SAFETY: the probe contract.
        unsafe { exit_untimed(id_slot, sp) }
    }
}

/// Exit of an event that is not measured (throttled, or switched on again from outside), from
/// its trampoline.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn exit_untimed(id_slot: *const u32, sp: usize) {
    // SAFETY: the probe contract.
    unsafe { exit_unmeasured(id_slot, sp, STANDARD) }
}

/// Loop exit: the loop's iterations are counted, then it exits like any event.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn loop_exit(id_slot: *const u32, iterations: u64, sp: usize) {
    // SAFETY: the probe contract.
    let id = unsafe { load_id(id_slot) };
    let mode = switch::mode(id);
    let now = if mode == switch::MEASURED { clock::now() } else { 0 };
    let state = thread::current();
    if !state.is_null() {
        // SAFETY: the probe contract.
        let ts = unsafe { &mut *state };
        if id < ts.record_cap() {
            // SAFETY: id < record_cap, checked; the top frame index is clamped below
            // frame_cap; the tree is this thread's and the top frame's node one it made.
            unsafe {
                ts.record(id).add_iterations(iterations);
                let top = ts.frame(ts.depth.min(ts.frame_cap() - 1));
                if let Some(tree) = ts.tree().filter(|_| top.id == id) {
                    tree.node(top.node).record.iterations += iterations;
                }
            }
        }
    }
    if mode == switch::MEASURED {
        // SAFETY: the probe contract.
        unsafe { exit_at(now, id_slot, sp, LOOP) }
    } else if mode == switch::PATHED {
        // SAFETY: the probe contract.
        unsafe { exit_pathed(id_slot, sp, LOOP) }
    } else {
        // SAFETY: the probe contract.
        unsafe { exit_unmeasured(id_slot, sp, LOOP) }
    }
}

/// Exit of an event whose entries keep it on the stack untimed (`PATHED`): its frame on top,
/// pushed so, is closed without a clock read (a tally window's trapped caller too, its
/// window's executions credited first: `tally::left`); any other case (an activation that began timed,
/// an exit that does not match the top frame) is a timed exit.
///
/// # Safety
/// The probe contract (module comment).
unsafe fn exit_pathed(id_slot: *const u32, sp: usize, kind: usize) {
    let state = thread::current();
    if state.is_null() {
        return;
    }
    // SAFETY: the probe contract.
    let (ts, id) = unsafe { (&mut *state, load_id(id_slot)) };
    let depth = ts.depth;
    // SAFETY: the frame is read only below frame_cap; a match makes it this event's, pushed
    // with an id below record_cap.
    unsafe {
        if depth < ts.frame_cap() && top_is_mended(ts, depth, id, sp) && ts.frame(depth).untimed() {
            return close_untimed(ts, depth);
        }
        exit_now(id_slot, sp, kind)
    }
}

/// Exit of an event that is switched off, throttled or lenient: nothing to do, without reading
/// the clock, unless the activation began while the event was measured (its frame is on top).
///
/// # Safety
/// The probe contract (module comment).
#[inline(always)]
unsafe fn exit_unmeasured(id_slot: *const u32, sp: usize, kind: usize) {
    let state = thread::current();
    if state.is_null() {
        return;
    }
    // SAFETY: the probe contract.
    let ts = unsafe { &mut *state };
    // On an overflowed shadow stack every entry counted a level, whatever the event's mode.
    let overflowed = ts.depth >= ts.frame_cap();
    // SAFETY: called only when not overflowed, so the top frame is stored; this thread's state,
    // in its probe; the slot is the probe's.
    if overflowed || unsafe { top_is_mended(ts, ts.depth, load_id(id_slot), sp) } {
        // SAFETY: the probe contract.
        unsafe { exit_now(id_slot, sp, kind) };
    }
}

/// `top_is`, once a tally window's trap on the frame is taken off: the trap fails the match
/// once, and `tally::left` (which credits the window or voids it) mends it for the second.
///
/// # Safety
/// `depth < frame_cap`; `ts` is the calling thread's state, in an exit probe, the stack not busy.
#[inline(always)]
unsafe fn top_is_mended(ts: &mut ThreadState, depth: usize, id: u32, sp: usize) -> bool {
    // SAFETY: the contract, which is `top_is`'s and `tally::left`'s.
    unsafe { top_is(ts, depth, id, sp) || (crate::tally::left(ts, id, sp) && top_is(ts, depth, id, sp)) }
}

/// Whether frame `depth` of `ts` is the activation of event `id` whose machine frame is at `sp`.
///
/// # Safety
/// `depth < frame_cap`.
#[inline(always)]
unsafe fn top_is(ts: &ThreadState, depth: usize, id: u32, sp: usize) -> bool {
    // SAFETY: depth < frame_cap (the contract).
    let top = unsafe { ts.frame(depth) };
    top.id == id && top.sp == sp
}

/// A timed exit out of line, for the paths that rarely take one.
///
/// # Safety
/// The probe contract (module comment).
#[inline(never)]
unsafe fn exit_now(id_slot: *const u32, sp: usize, kind: usize) {
    // SAFETY: the probe contract.
    unsafe { exit_at(clock::now(), id_slot, sp, kind) }
}

/// A timed exit at `now`: closes the top frame when it is this activation's, else reconciles.
///
/// # Safety
/// The probe contract (module comment).
#[inline(always)]
unsafe fn exit_at(now: u64, id_slot: *const u32, sp: usize, kind: usize) {
    let state = thread::current();
    if state.is_null() {
        return;
    }
    // SAFETY: the probe contract.
    let ts = unsafe { &mut *state };
    let depth = ts.depth;
    if depth >= ts.frame_cap() {
        ts.depth = depth - 1; // a frame that overflowed the shadow stack: counted, not stored
        return;
    }
    // SAFETY: the slot is the probe's.
    let id = unsafe { load_id(id_slot) };
    // SAFETY: depth < frame_cap, checked; this thread's state, in its probe, the stack not busy.
    if unsafe { top_is_mended(ts, depth, id, sp) } {
        // SAFETY: the top frame is stored and was pushed for `id`, so 1 <= depth (the sentinel
        // never matches a real id) and its id is below record_cap.
        unsafe { close_top(ts, depth, now, kind) };
    } else if switch::measured(switch::mode(id)) {
        // SAFETY: this thread's state, its depth below frame_cap.
        unsafe { reconcile::exit_mismatch(ts, id, sp, now, kind) };
    }
    if recalibrate::due(now) {
        // SAFETY: this thread's state, at the end of a timed exit.
        unsafe { recalibrate::run(state, now) };
    }
    clock::fence();
}

/// Pops the top frame (at `depth`, a probe of `kind`) at time `now` and charges it to its
/// event, its callpath node and its parent.
///
/// # Safety
/// `ts` is the calling thread's attached state, `depth` its top frame (1 ≤ depth <
/// frame_cap), whose id is below `record_cap` (a frame is pushed only for such ids).
#[inline(always)]
pub unsafe fn close_top(ts: &mut ThreadState, depth: usize, now: u64, kind: usize) {
    // SAFETY: `depth` is a stored frame (the contract).
    if unsafe { ts.frame(depth).untimed() } {
        // An untimed activation (`enter_pathed`) that a timed exit closes: it was switched out
        // of its window's mode meanwhile, or a reconciliation closes it.
        // SAFETY: the contract, a frame `enter_pathed` pushed.
        return unsafe { close_untimed(ts, depth) };
    }
    mark_busy_leaving(ts, depth);
    // SAFETY: `depth` and `depth - 1` are frames of the mapped stack (the contract); the frame
    // and its parent are distinct.
    let (frame, parent) = unsafe { (&*ts.frame(depth), ts.frame(depth - 1)) };
    let inclusive = now.saturating_sub(frame.start);
    parent.child_incl += inclusive;
    // SAFETY: the frame's id is below record_cap (the contract).
    let record = unsafe { ts.record(frame.id) };
    let compensated = if compensate::enabled() {
        // Hot events are offered for in-place estimation only with compensation (inplace).
        // SAFETY: at a timed exit on `ts`, before the charge, as it asks.
        unsafe { inplace::before_timed_charge(ts, frame.id, kind, record) };
        let (outer, own) = compensate::pair_cost(frame.id, kind);
        let comp_incl = inclusive as i64 - compensate::scaled_to_ticks(own + frame.overhead) as i64;
        parent.overhead += outer + frame.overhead;
        parent.comp_child += comp_incl;
        Some((comp_incl, comp_incl - frame.comp_child))
    } else {
        None
    };
    charge(record, frame, inclusive, compensated);
    // The counted share serves the throttling decision, which only the flat record takes.
    record.counted_children = record.counted_children.saturating_add(frame.children().1);
    // SAFETY: the contract, with the event's record charged.
    unsafe { close_charged(ts, depth, inclusive, compensated, kind) };
}

/// The rest of `close_top` once the event's own record is charged: the throttling check, the
/// callpath node, and the frame popped.
///
/// # Safety
/// As `close_top`'s, with the stack marked busy and the record of frame `depth` charged.
#[inline(always)]
unsafe fn close_charged(
    ts: &mut ThreadState,
    depth: usize,
    inclusive: u64,
    compensated: Option<(i64, i64)>,
    kind: usize,
) {
    // SAFETY: `depth` is a stored frame whose id is below record_cap (the contract).
    let (frame, record) = unsafe {
        let frame = &*ts.frame(depth);
        (frame, ts.record(frame.id))
    };
    if switch::due(record.calls) {
        // SAFETY: this thread's state, at its timed exit.
        unsafe { past_throttle_calls(ts, frame.id, kind, record) };
    }
    // SAFETY: the tree, when there is one, is this thread's (attach maps it).
    if let Some(tree) = unsafe { ts.tree() } {
        // SAFETY: the frame's node is one the tree made at the frame's entry.
        let node = unsafe { tree.node(frame.node) };
        charge(&mut node.record, frame, inclusive, compensated);
    }
    commit(ts, depth - 1);
}

/// The end of a timed exit that the assembly path (timed_path.rs) began, when its event
/// reached the throttling check: the path took the timestamp `now`, marked the stack busy and
/// charged the event's record (compensation is off there), and this does the rest.
///
/// # Safety
/// `ts` is the calling thread's attached state, marked busy at its top frame `depth`, whose
/// event's record the path charged for this exit at `now`.
#[cold]
#[inline(never)]
pub(crate) unsafe extern "C" fn exit_charged(ts: *mut ThreadState, depth: usize, now: u64) {
    // SAFETY: the contract: this thread's state; `depth` is its top frame, stored.
    let inclusive = unsafe { now.saturating_sub((*ts).frame(depth).start) };
    // SAFETY: as above, with the record charged.
    unsafe { close_charged(&mut *ts, depth, inclusive, None, STANDARD) };
    if recalibrate::due(now) {
        // SAFETY: this thread's state, at the end of a timed exit.
        unsafe { recalibrate::run(ts, now) };
    }
}

/// A recalibration due at the end of a timed exit that the assembly path finished at `now`.
///
/// # Safety
/// `ts` is the calling thread's attached state, at the end of a timed exit.
#[cold]
#[inline(never)]
pub(crate) unsafe extern "C" fn exit_recalibrate(ts: *mut ThreadState, now: u64) {
    // SAFETY: the contract.
    unsafe { recalibrate::run(ts, now) };
}

/// An exit whose timestamp `now` the assembly path took before it found a case it leaves to
/// the bodies (no match on top, an overflowed stack): that path does not read the event's mode,
/// so this routes by it as the exit trampolines do.
///
/// # Safety
/// The probe contract (module comment).
pub(crate) unsafe extern "C" fn exit_timed_at(id_slot: *const u32, sp: usize, now: u64) {
    // SAFETY: the probe contract.
    if switch::measured(switch::mode(unsafe { load_id(id_slot) })) {
        // SAFETY: the probe contract.
        unsafe { exit_at(now, id_slot, sp, STANDARD) }
    } else {
        // SAFETY: the probe contract.
        unsafe { exit_unmeasured(id_slot, sp, STANDARD) }
    }
}

/// One finished activation of an event (or of a callpath node), with its compensated
/// (inclusive, exclusive) ticks when compensation is on.
#[inline(always)]
fn charge(record: &mut Record, frame: &Frame, inclusive: u64, compensated: Option<(i64, i64)>) {
    record.calls += 1;
    record.child_calls += frame.children().0;
    record.excl += inclusive.saturating_sub(frame.child_incl);
    record.active -= 1;
    let outermost = record.active == 0;
    if outermost {
        record.incl += inclusive;
    }
    if let Some((comp_incl, comp_excl)) = compensated {
        record.comp_excl += comp_excl;
        record.negative += u64::from(comp_incl < 0);
        if outermost {
            record.comp_incl += comp_incl;
        }
    }
}

/// A timed exit of event `id` (probe `kind`, its record just charged) on a thread where it has
/// reached the throttling check: the end of one of its in-place timed windows (inplace
/// estimates events without compensation only from their throttling on, on the thread that
/// throttled them, so only here), else TAU's rule, and an offer when that throttles it.
///
/// # Safety
/// As `close_top`'s, at its charge of `id`.
#[cold]
#[inline(never)]
unsafe fn past_throttle_calls(ts: &mut ThreadState, id: u32, kind: usize, record: &Record) {
    if !compensate::enabled() && inplace::at_end(record.calls) {
        // SAFETY: a timed exit of `id` on this thread (the contract).
        unsafe { inplace::timed_boundary(ts, id, record.calls, u64::from(record.active)) };
    } else if switch::consider(id, record.calls, record.incl, record.child_calls != 0) {
        let timed_children = record.child_calls.saturating_sub(u64::from(record.counted_children));
        let mean =
            crate::untimed::throttled(id, kind, crate::untimed::basis(record), record.calls, timed_children);
        // SAFETY: as above.
        unsafe { inplace::offer_throttled(ts, id, kind, record.calls, record.incl, mean) };
    }
}

/// Marks the depth word while a probe updates the shadow stack (see the module comment).
pub const BUSY: usize = instrument_live::DEPTH_BUSY as usize;

/// Marks the stack busy at `depth` (the depth a re-entering probe must leave it at), and
/// charges the calls counted inline since the frame on top last changed to it.
#[inline(always)]
pub fn mark_busy(ts: &mut ThreadState, depth: usize) {
    mark_busy_keeping_pending(ts, depth);
    crate::inline::charge_pending(ts, depth);
}

/// `mark_busy` at the exit of frame `depth`, after its timestamp: the charge's own work runs in
/// the time of the frame below (`inline::charge_pending_leaving`).
#[inline(always)]
pub fn mark_busy_leaving(ts: &mut ThreadState, depth: usize) {
    mark_busy_keeping_pending(ts, depth);
    crate::inline::charge_pending_leaving(ts, depth);
}

/// `mark_busy` for a counted entry, which leaves the frame on top as it is: the calls counted
/// inline before it (the caller's too) wait to be charged until a probe changes the stack
/// (`push` and `pathed_instead` charge them first), or a counted call of the bare window's
/// event comes (whose window ends at a count its record reaches once they are credited).
/// Charged at every counted call through the Rust body, a bare window's calls (inline.rs) each
/// took a flush and, with callpaths, a step to their node, where the siblings that alternate
/// with them miss their caller's cached step and take the body: the ground truth's siblings
/// context measured its leaves' counted calls at 0 to 7 ns over a bare count, where they cost
/// about 18 ns in the runtime alone.
#[inline(always)]
pub fn mark_busy_keeping_pending(ts: &mut ThreadState, depth: usize) {
    ts.depth = depth | BUSY;
    compiler_fence(SeqCst);
}

/// Publishes the new `depth`, after every update of the frames and records before it.
#[inline(always)]
pub fn commit(ts: &mut ThreadState, depth: usize) {
    compiler_fence(SeqCst);
    ts.depth = depth;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_call_is_counted_for_its_event_and_as_a_child_of_the_frame_on_top() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[1].id = 2;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        // SAFETY: event 5 is below the records and the mode table, depth 2 below the frames.
        // No window is this thread's, so the entry only counts, compensated or not.
        let opened = unsafe { enter_counted(&mut ts, 5, 0) };
        assert_eq!((opened, ts.depth), (NOTHING, 1));
        assert_eq!(records[5].counted, 1);
        assert_eq!(frames[1].child_calls, COUNTED_CHILD);
    }

    #[test]
    fn a_pathed_call_is_counted_on_the_stack_and_hands_its_childrens_times_to_its_caller() {
        let (mut frames, mut records) = ThreadState::test_stacks();
        frames[1].id = 2;
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        // SAFETY: event 5 is below the records and the mode table, depth 2 below the frames.
        let opened = unsafe { enter_pathed(&mut ts, 5, 2, 0x40) };
        assert_eq!((opened, ts.depth), (OPENED, 2), "a frame for its children's paths");
        let charged = frames[1].overhead;
        assert_eq!((frames[2].id, frames[2].sp, frames[2].start), (5, 0x40, UNTIMED_START));
        // What a timed child charges its parent's frame at its exit (close_top).
        (frames[2].child_calls, frames[2].child_incl) = (TIMED_CHILD, 100);
        (frames[2].overhead, frames[2].comp_child) = (7, 90);
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 2;
        // SAFETY: frame 2 is the top, pushed by `enter_pathed`; a timed exit's close finds it
        // untimed and reads no time (`now` is far before any start).
        unsafe { close_top(&mut ts, 2, 0, STANDARD) };
        assert_eq!(ts.depth, 1);
        assert_eq!((records[5].calls, records[5].counted, records[5].child_calls), (0, 1, 1));
        assert_eq!((records[5].excl, records[5].incl, records[5].active), (0, 0, 0), "no time");
        assert_eq!(frames[1].child_calls, COUNTED_CHILD, "counted in its caller");
        assert_eq!((frames[1].child_incl, frames[1].comp_child), (100, 90), "its child's times");
        assert_eq!(frames[1].overhead, charged + 7, "its cost and its child's");
    }

    /// Frame 1 (event 2) on top, which a counted or pathed entry of event 6 has charged `cost`
    /// over 10 and one counted child; the entry counted.
    fn charged_by_an_entry(cost: u64) -> (Vec<Frame>, Vec<Record>) {
        let (mut frames, mut records) = ThreadState::test_stacks();
        (frames[1].id, frames[1].overhead, frames[1].child_calls) = (2, 10 + cost, COUNTED_CHILD);
        records[6].counted = 1;
        (frames, records)
    }

    #[test]
    fn a_counted_entry_that_begins_a_pathed_window_is_kept_on_the_stack_instead() {
        let (mut frames, mut records) = charged_by_an_entry(3);
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        mark_busy(&mut ts, 1);
        // SAFETY: event 6 is below the records and the mode table, depth 2 below the frames;
        // the counted entry charged 3 and counted the call.
        let opened = unsafe { pathed_instead(&mut ts, 6, 0x40, 3, 0) };
        assert_eq!((opened, ts.depth), (OPENED, 2), "a frame for its children's paths");
        assert_eq!((frames[2].id, frames[2].sp, frames[2].start), (6, 0x40, UNTIMED_START));
        assert_eq!(frames[1].overhead, 10 + compensate::pathed_cost(6), "a pathed call's charge");
        assert_eq!((records[6].counted, frames[1].child_calls), (1, COUNTED_CHILD), "counted once");
    }

    #[test]
    fn a_pathed_entry_that_begins_a_counted_window_pushes_no_frame_and_costs_a_counted_call() {
        let (mut frames, mut records) = charged_by_an_entry(3);
        let mut ts = ThreadState::over(&mut frames, &mut records);
        ts.depth = 1;
        mark_busy(&mut ts, 1);
        // SAFETY: as above, at a pathed entry of event 6 that charged 3 and counted the call.
        let opened = unsafe { counted_instead(&mut ts, 6, 1, 3, 0) };
        assert_eq!((opened, ts.depth), (NOTHING, 1), "no frame: its exit runs no probe");
        assert_eq!(frames[2].id, 0);
        assert_eq!(frames[1].overhead, 10 + compensate::counted_cost(6), "a counted call's charge");
        assert_eq!((records[6].counted, frames[1].child_calls), (1, COUNTED_CHILD), "counted once");
    }
}
