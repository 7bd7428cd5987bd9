//! The hot path. `__instrument_enter` and `__instrument_exit` are trampolines that return at
//! once for a switched-off event and otherwise add the caller's stack pointer (the identity of the machine frame, used only when a
//! longjmp or an unwind has skipped exits) and jump to the Rust bodies. The bodies read the
//! clock, touch the top of the shadow stack and one record, and neither lock nor allocate; the
//! rare cases (first event of a thread, full tables, mismatched exits) are out of line.
//!
//! The entry timestamp is taken last and the exit timestamp first, so the bookkeeping of the
//! probes themselves stays outside the measured interval as far as possible.
//!
//! Every body is an `unsafe fn` with one contract, stated once here and cited as "the probe
//! contract": `id_slot` is an id slot of a registered module's table (or a hidden event's
//! static), as the pass and the trampolines pass it, and the thread state `thread::current()`
//! returns is the calling thread's own: only this thread touches its frames and records while
//! it runs a probe, and the state lives until `thread::retire_current`, which clears the
//! pointer first.

use crate::clock;
use crate::inplace;
use crate::overhead::{LOOP, STANDARD};
use crate::recalibrate;
use crate::reconcile;
use crate::registry::{load_id, UNREGISTERED};
use crate::switch;
use crate::thread::{self, ThreadState};
use instrument_live::{COUNTED_CHILD, TIMED_CHILD};

/// A probe's entry point: a trampoline that passes the caller's stack pointer in register
/// `$sp` and jumps to `$body`. A probe of a switched-off event returns from here, after two
/// loads (its id and its mode byte, see `switch`): no prologue, no thread state, no clock. An
/// event is switched off when its module registers, before any of its probes run, so no
/// activation of it is open.
macro_rules! trampoline {
    ($name:ident($($arg:ident: $ty:ty),*), $sp:literal, $body:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (module comment): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) {
            core::arch::naked_asm!(
                "mov eax, dword ptr [rdi]",
                "cmp eax, {max}",
                "jae 2f",
                "lea rcx, [rip + {modes}]",
                "cmp byte ptr [rcx + rax], {off}",
                "je 3f",
                "2:",
                concat!("mov ", $sp, ", rsp"),
                "jmp {body}",
                "3:",
                "ret",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                off = const switch::OFF,
                body = sym $body,
            )
        }
    };
}

/// The routine and call-statement probes' trampolines also route by mode, so that the paths of
/// a throttled event (counted entry, exit with nothing to close) are small functions that save
/// no registers, instead of the timed bodies' prologues (six pushes and pops each way).
/// A measured event (mode 0) goes to `$body` after one test; a switched-off one returns
/// (`NOTHING` opened, for the entry); a counted one goes to `$routed`, and any other mode
/// (lenient) to `$other`.
macro_rules! routed_trampoline {
    ($name:ident -> $ret:ty, $body:path, $routed:path, $other:path) => {
        /// A probe's entry point (see the macro).
        ///
        /// # Safety
        /// The probe contract (module comment): called by instrumented code with an id slot.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name(id_slot: *const u32) -> $ret {
            core::arch::naked_asm!(
                "mov rsi, rsp",
                "mov eax, dword ptr [rdi]",
                "cmp eax, {max}",
                "jae 2f",
                "lea rcx, [rip + {modes}]",
                "movzx ecx, byte ptr [rcx + rax]",
                "test ecx, ecx",
                "jnz 3f",
                "2:",
                "jmp {body}",
                "3:",
                "cmp ecx, {counted}",
                "je {routed}",
                "cmp ecx, {off}",
                "jne {other}",
                "xor eax, eax",
                "ret",
                max = const switch::TABLE_LEN,
                modes = sym switch::MODES,
                counted = const switch::COUNTED,
                off = const switch::OFF,
                routed = sym $routed,
                other = sym $other,
                body = sym $body,
            )
        }
    };
}

/// What an entry probe returns to the probed code: whether its exit probe has anything to close.
/// A routine's and a call statement's exit probes run only when the entry returned `OPENED` (the
/// pass branches on it), so a counted or switched-off routine costs one probe call, not two.
/// Loop exits run whatever it says (they also hand over the iterations): an exit is correct
/// either way, as those of code from an older pass are.
pub type Opened = u32;
/// Nothing to close: the call was counted, switched off, or not recorded.
pub const NOTHING: Opened = 0;
/// A frame was pushed, or a level counted on an overflowed or busy shadow stack.
pub const OPENED: Opened = 1;
const _: () = assert!(NOTHING == 0, "the trampolines return a switched-off entry's NOTHING as zero");

const _: () = assert!(switch::MEASURED == 0, "the routed trampolines test the measured mode as zero");
routed_trampoline!(__instrument_enter -> Opened, enter, enter_throttled, enter);
routed_trampoline!(__instrument_exit -> (), exit, exit_untimed, exit_untimed);
trampoline!(__instrument_loop_exit(id_slot: *const u32, iterations: u64), "rdx", loop_exit);

/// A landing pad's probe: passes the stack pointer to `unwind`.
///
/// # Safety
/// The probe contract (module comment).
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn __instrument_unwind(id_slot: *const u32) {
    core::arch::naked_asm!("mov rsi, rsp", "jmp {}", sym unwind)
}

/// A landing pad of the event in `id_slot` (its routine, or the loop that holds the pad) was
/// reached by an exception or a panic: the frames above that event's frame belong to machine
/// frames the unwinder removed, or to the call statement that threw, and are closed now.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn unwind(id_slot: *const u32, sp: usize) {
    let now = clock::now();
    let state = thread::current();
    if !state.is_null() {
        // SAFETY: the probe contract: the slot is a table's, the state this thread's.
        unsafe { reconcile::unwind_to(&mut *state, load_id(id_slot), sp, now) };
    }
    clock::fence();
}

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
    if mode & switch::UNTIMED != 0 {
        if mode == switch::COUNTED {
            // SAFETY: id < record_cap and the top frame is stored (depth + 1 < frame_cap).
            return unsafe { enter_counted(ts, id, sp) };
        }
        return NOTHING;
    }
    // SAFETY: 1 <= depth < frame_cap and id < record_cap, checked above.
    unsafe { push(ts, depth, id, sp) };
    OPENED
}

/// Entry of a throttled event (or of one in a counted window of inplace.rs): its call is
/// counted (for it and as a child of the frame on top), but no frame is pushed and the clock is
/// not read. It opens a frame only where an in-place window ends and times this entry.
///
/// # Safety
/// `ts` is the calling thread's state, `id < record_cap`, `ts.depth + 1 < frame_cap`, and `id`
/// is inside the mode table (a counted event's).
#[inline(always)]
unsafe fn enter_counted(ts: &mut ThreadState, id: u32, sp: usize) -> Opened {
    let depth = ts.depth;
    reconcile::mark_busy(ts, depth);
    // SAFETY: id < record_cap and depth < frame_cap (the contract); a record and a frame are
    // distinct memory.
    let (record, top) = unsafe { (ts.record(id), ts.frame(depth)) };
    record.counted += 1;
    let counted = record.counted;
    top.child_calls += COUNTED_CHILD;
    let caller = top.id;
    // SAFETY: the contract; the caller is the top frame's event (below record_cap, as every
    // pushed frame's) or the sentinel, and no reference to either record is held from here.
    unsafe { estimate_untimed(ts, id, caller, false) };
    if crate::compensate::enabled() {
        // SAFETY: the contract, the stack marked busy at `depth`.
        return unsafe { counted_compensated(ts, id, sp) };
    }
    if inplace::at_end(counted) {
        // SAFETY: as above, with no cost charged.
        return unsafe { counted_window_end(ts, id, sp, 0) };
    }
    reconcile::commit(ts, depth);
    NOTHING
}

/// Charges (or, `undo`, takes back) a counted call's estimated time (untimed.rs): it is event
/// `id`'s own, and the exclusive time of its caller `caller` holds it. The sentinel (no
/// instrumented caller) has no record, and no time holds the call. Each record is reached
/// afresh through the table (`caller` may be `id` itself, a recursion), so callers hold no
/// reference to either across this call.
///
/// # Safety
/// `ts` is the calling thread's state; `id` is a counted event's (inside the mode table and
/// below record_cap), `caller` below record_cap or the sentinel; the caller holds no
/// reference to either record.
#[inline(always)]
unsafe fn estimate_untimed(ts: &mut ThreadState, id: u32, caller: u32, undo: bool) {
    // SAFETY: `id` is inside the mode table (the contract).
    let estimate = unsafe { crate::untimed::per_call_in_table(id) };
    if estimate == 0 {
        return;
    }
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
unsafe extern "C" fn counted_compensated(ts: &mut ThreadState, id: u32, sp: usize) -> Opened {
    clock::fence();
    let depth = ts.depth & !reconcile::BUSY;
    let cost = crate::compensate::counted_cost(id);
    // SAFETY: depth < frame_cap and id < record_cap (the contract), one reference at a time.
    let counted = unsafe {
        ts.frame(depth).overhead += cost;
        ts.record(id).counted
    };
    if inplace::at_end(counted) {
        // SAFETY: the contract, the counted entry's cost `cost`.
        return unsafe { counted_window_end(ts, id, sp, cost) };
    }
    reconcile::commit(ts, depth);
    NOTHING
}

/// A counted entry that reached inplace.rs's window end (the stack still marked busy): when the
/// next window is timed, this entry (whose counting charged `cost`) is taken back and timed
/// instead.
///
/// # Safety
/// `enter_counted`'s contract, from it, with the stack marked busy.
#[cold]
#[inline(never)]
unsafe extern "C" fn counted_window_end(ts: &mut ThreadState, id: u32, sp: usize, cost: u64) -> Opened {
    let depth = ts.depth & !reconcile::BUSY;
    // SAFETY: this thread's state at a counted entry of `id`, as it asks.
    if !unsafe { inplace::counted_boundary(ts, id) } {
        reconcile::commit(ts, depth);
        return NOTHING;
    }
    // SAFETY: id < record_cap and depth < frame_cap (the contract); distinct memory.
    let (record, top) = unsafe { (ts.record(id), ts.frame(depth)) };
    record.counted -= 1;
    top.child_calls -= COUNTED_CHILD;
    top.overhead -= cost;
    let caller = top.id;
    // SAFETY: as in `enter_counted`, whose charge this takes back; then depth + 1 < frame_cap
    // (the contract) for the pushed frame.
    unsafe {
        estimate_untimed(ts, id, caller, true);
        push(ts, depth + 1, id, sp);
    }
    OPENED
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
    } else {
        // SAFETY: the probe contract.
        unsafe { exit_unmeasured(id_slot, sp, LOOP) }
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

/// Exit of an event that is not measured (throttled, or switched on again from outside), from
/// its trampoline.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn exit_untimed(id_slot: *const u32, sp: usize) {
    // SAFETY: the probe contract.
    unsafe { exit_unmeasured(id_slot, sp, STANDARD) }
}

/// Event exit: pop the top frame if it is this event's, else reconcile.
///
/// # Safety
/// The probe contract (module comment).
pub unsafe extern "C" fn exit(id_slot: *const u32, sp: usize) {
    // SAFETY: the probe contract, for each call.
    unsafe {
        if switch::mode(load_id(id_slot)) != switch::MEASURED {
            return exit_unmeasured(id_slot, sp, STANDARD);
        }
        exit_at(clock::now(), id_slot, sp, STANDARD)
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
    let ts = unsafe { &*state };
    // On an overflowed shadow stack every entry counted a level, whatever the event's mode.
    let overflowed = ts.depth >= ts.frame_cap();
    // SAFETY: not overflowed, so the top frame is stored; the slot is the probe's.
    if overflowed || unsafe { ts.frame(ts.depth).id == load_id(id_slot) && ts.frame(ts.depth).sp == sp } {
        // SAFETY: the probe contract.
        unsafe { exit_now(id_slot, sp, kind) };
    }
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
    // SAFETY: depth < frame_cap, checked; the slot is the probe's.
    let (top, id) = unsafe { (ts.frame(depth), load_id(id_slot)) };
    if top.id == id && top.sp == sp {
        // SAFETY: the top frame is stored and was pushed for `id`, so 1 <= depth (the sentinel
        // never matches a real id) and its id is below record_cap.
        unsafe { reconcile::close_top(ts, depth, now, kind) };
    } else if switch::mode(id) == switch::MEASURED {
        // SAFETY: this thread's state, its depth below frame_cap.
        unsafe { reconcile::exit_mismatch(ts, id, sp, now, kind) };
    }
    if recalibrate::due(now) {
        // SAFETY: this thread's state, at the end of a timed exit.
        unsafe { recalibrate::run(state, now) };
    }
    clock::fence();
}

/// Pushes frame `depth` for event `id`, its clock read last.
///
/// # Safety
/// `ts` is the calling thread's state, 1 <= depth < frame_cap, id < record_cap.
#[inline(always)]
unsafe fn push(ts: &mut ThreadState, depth: usize, id: u32, sp: usize) {
    reconcile::mark_busy(ts, depth - 1);
    // SAFETY: depth - 1 < frame_cap and id < record_cap (the contract).
    let parent = unsafe { ts.frame(depth - 1) };
    parent.child_calls += TIMED_CHILD;
    // SAFETY: as above; the record is not otherwise referenced here.
    unsafe { ts.record(id).active += 1 };
    // SAFETY: the tree, when there is one, is this thread's (attach maps it).
    let node = match unsafe { ts.tree() } {
        None => 0,
        // SAFETY: the parent's node is one the tree made (or the root); `step` returns another
        // it made; the open frames are 1..depth, below frame_cap.
        Some(tree) => unsafe {
            let open = crate::callpath::OpenFrames { frames: ts.frames(), top: depth - 1 };
            let node = tree.step(parent.node, id, open);
            tree.node(node).record.active += 1;
            node
        },
    };
    // SAFETY: depth < frame_cap (the contract); the parent's reference has ended.
    let frame = unsafe { ts.frame(depth) };
    frame.node = node;
    frame.id = id;
    frame.child_calls = 0;
    frame.sp = sp;
    frame.child_incl = 0;
    frame.overhead = 0;
    frame.comp_child = 0;
    frame.start = clock::now();
    reconcile::commit(ts, depth);
}

/// An entry that failed the fast path's bounds: a re-entry from a signal handler, an
/// overflowed shadow stack, or an id past the thread's records.
///
/// # Safety
/// `ts` is the calling thread's state; `depth` is its depth plus one.
#[cold]
#[inline(never)]
unsafe fn enter_cold(ts: &mut ThreadState, id: u32, depth: usize, sp: usize) -> Opened {
    if depth & reconcile::BUSY != 0 {
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
        // SAFETY: depth < frame_cap here, and grow_records made id < record_cap.
        unsafe { push(ts, depth, id, sp) };
        OPENED
    }
}
