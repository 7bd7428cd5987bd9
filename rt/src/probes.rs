//! The hot path. `__instrument_enter` and `__instrument_exit` are trampolines that return at
//! once for a switched-off event and otherwise add the caller's stack pointer (the identity of the machine frame, used only when a
//! longjmp or an unwind has skipped exits) and jump to the Rust bodies. The bodies read the
//! clock, touch the top of the shadow stack and one record, and neither lock nor allocate; the
//! rare cases (first event of a thread, full tables, mismatched exits) are out of line.
//!
//! The entry timestamp is taken last and the exit timestamp first, so the bookkeeping of the
//! probes themselves stays outside the measured interval as far as possible.

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

#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn __instrument_unwind(id_slot: *const u32) {
    core::arch::naked_asm!("mov rsi, rsp", "jmp {}", sym unwind)
}

/// A landing pad of the event in `id_slot` (its routine, or the loop that holds the pad) was
/// reached by an exception or a panic: the frames above that event's frame belong to machine
/// frames the unwinder removed, or to the call statement that threw, and are closed now.
pub unsafe extern "C" fn unwind(id_slot: *const u32, sp: usize) {
    let now = clock::now();
    let state = thread::current();
    if !state.is_null() {
        reconcile::unwind_to(&mut *state, load_id(id_slot), sp, now);
    }
    clock::fence();
}

/// Event entry (routine, loop or call statement): push a frame for the event whose id is in
/// `id_slot`.
pub unsafe extern "C" fn enter(id_slot: *const u32, sp: usize) -> Opened {
    clock::fence();
    let mut state = thread::current();
    if state.is_null() {
        state = thread::attach();
        if state.is_null() {
            return NOTHING;
        }
    }
    let ts = &mut *state;
    let id = load_id(id_slot);
    let depth = ts.depth + 1;
    if depth >= ts.frame_cap || id >= ts.record_cap {
        return enter_cold(ts, id, depth, sp);
    }
    let mode = switch::mode(id);
    if mode & switch::UNTIMED != 0 {
        if mode == switch::COUNTED {
            return enter_counted(ts, id, sp);
        }
        return NOTHING;
    }
    push(ts, depth, id, sp);
    OPENED
}

/// Entry of a throttled event (or of one in a counted window of inplace.rs): its call is
/// counted (for it and as a child of the frame on top), but no frame is pushed and the clock is
/// not read. It opens a frame only where an in-place window ends and times this entry.
#[inline(always)]
unsafe fn enter_counted(ts: &mut ThreadState, id: u32, sp: usize) -> Opened {
    let depth = ts.depth;
    reconcile::mark_busy(ts, depth);
    let record = &mut *ts.records.add(id as usize);
    record.counted += 1;
    let counted = record.counted;
    let top = &mut *ts.frames.add(depth);
    top.child_calls += COUNTED_CHILD;
    let caller = top.id;
    estimate_untimed(ts, id, caller, false);
    if crate::compensate::enabled() {
        return counted_compensated(ts, id, sp);
    }
    if inplace::at_end(counted) {
        return counted_window_end(ts, id, sp, 0);
    }
    reconcile::commit(ts, depth);
    NOTHING
}

/// Charges (or, `undo`, takes back) a counted call's estimated time (untimed.rs): it is event
/// `id`'s own, and the exclusive time of its caller `caller` holds it. The sentinel (no
/// instrumented caller) has no record, and no time holds the call. Each record is reached
/// afresh through the table (`caller` may be `id` itself, a recursion), so callers hold no
/// reference to either across this call.
#[inline(always)]
unsafe fn estimate_untimed(ts: &mut ThreadState, id: u32, caller: u32, undo: bool) {
    // SAFETY: `id` is a counted event's, inside the mode table (`untimed::per_call_in_table`).
    let estimate = crate::untimed::per_call_in_table(id);
    if estimate == 0 {
        return;
    }
    let add = |total: &mut u64| *total = if undo { *total - estimate } else { *total + estimate };
    add(&mut (*ts.records.add(id as usize)).untimed_own);
    if caller != crate::thread::SENTINEL_ID {
        add(&mut (*ts.records.add(caller as usize)).untimed_children);
    }
}

/// The rest of a counted entry with compensation on (the stack still marked busy): its
/// in-place cost goes to the frame on top, and it may end an in-place window.
#[inline(never)]
unsafe extern "C" fn counted_compensated(ts: &mut ThreadState, id: u32, sp: usize) -> Opened {
    clock::fence();
    let depth = ts.depth & !reconcile::BUSY;
    let cost = crate::compensate::counted_cost(id);
    (*ts.frames.add(depth)).overhead += cost;
    if inplace::at_end((*ts.records.add(id as usize)).counted) {
        return counted_window_end(ts, id, sp, cost);
    }
    reconcile::commit(ts, depth);
    NOTHING
}

/// A counted entry that reached inplace.rs's window end (the stack still marked busy): when the
/// next window is timed, this entry (whose counting charged `cost`) is taken back and timed
/// instead.
#[cold]
#[inline(never)]
unsafe extern "C" fn counted_window_end(ts: &mut ThreadState, id: u32, sp: usize, cost: u64) -> Opened {
    let depth = ts.depth & !reconcile::BUSY;
    if inplace::counted_boundary(ts, id) {
        (*ts.records.add(id as usize)).counted -= 1;
        let top = &mut *ts.frames.add(depth);
        top.child_calls -= COUNTED_CHILD;
        top.overhead -= cost;
        estimate_untimed(ts, id, top.id, true);
        push(ts, depth + 1, id, sp);
        OPENED
    } else {
        reconcile::commit(ts, depth);
        NOTHING
    }
}

/// Loop exit: the loop's iterations are counted, then it exits like any event.
pub unsafe extern "C" fn loop_exit(id_slot: *const u32, iterations: u64, sp: usize) {
    let mode = switch::mode(load_id(id_slot));
    let now = if mode == switch::MEASURED { clock::now() } else { 0 };
    let state = thread::current();
    if !state.is_null() {
        let ts = &mut *state;
        let id = load_id(id_slot);
        if id < ts.record_cap {
            (*ts.records.add(id as usize)).add_iterations(iterations);
            let top = &*ts.frames.add(ts.depth.min(ts.frame_cap - 1));
            if !ts.tree.is_null() && top.id == id {
                (*ts.tree).node(top.node).record.iterations += iterations;
            }
        }
    }
    if mode == switch::MEASURED {
        exit_at(now, id_slot, sp, LOOP)
    } else {
        exit_unmeasured(id_slot, sp, LOOP)
    }
}

/// Entry of a throttled event, from its trampoline: the counted path without the timed
/// entry's prologue; the first event of a thread and full tables take the full path.
/// Its trampoline routes only ids inside the mode table here. It does not fence: a counted
/// entry reads no clock, and the fenced strategy's fence (clock.rs)
/// comes with compensation, in `counted_compensated`.
pub unsafe extern "C" fn enter_throttled(id_slot: *const u32, sp: usize) -> Opened {
    let state = thread::current();
    if state.is_null() {
        return enter_full(id_slot, sp);
    }
    let ts = &mut *state;
    let id = load_id(id_slot);
    if ts.depth + 1 >= ts.frame_cap || id >= ts.record_cap {
        return enter_full(id_slot, sp);
    }
    enter_counted(ts, id, sp)
}

#[inline(never)]
unsafe fn enter_full(id_slot: *const u32, sp: usize) -> Opened {
    enter(id_slot, sp)
}

/// Exit of an event that is not measured (throttled, or switched on again from outside), from
/// its trampoline.
pub unsafe extern "C" fn exit_untimed(id_slot: *const u32, sp: usize) {
    exit_unmeasured(id_slot, sp, STANDARD)
}

/// Event exit: pop the top frame if it is this event's, else reconcile.
pub unsafe extern "C" fn exit(id_slot: *const u32, sp: usize) {
    if switch::mode(load_id(id_slot)) != switch::MEASURED {
        return exit_unmeasured(id_slot, sp, STANDARD);
    }
    exit_at(clock::now(), id_slot, sp, STANDARD)
}

/// Exit of an event that is switched off, throttled or lenient: nothing to do, without reading
/// the clock, unless the activation began while the event was measured (its frame is on top).
#[inline(always)]
unsafe fn exit_unmeasured(id_slot: *const u32, sp: usize, kind: usize) {
    let state = thread::current();
    if state.is_null() {
        return;
    }
    let ts = &*state;
    // On an overflowed shadow stack every entry counted a level, whatever the event's mode.
    let overflowed = ts.depth >= ts.frame_cap;
    if overflowed || {
        let top = &*ts.frames.add(ts.depth);
        top.id == load_id(id_slot) && top.sp == sp
    } {
        exit_now(id_slot, sp, kind);
    }
}

/// A timed exit out of line, for the paths that rarely take one.
#[inline(never)]
unsafe fn exit_now(id_slot: *const u32, sp: usize, kind: usize) {
    exit_at(clock::now(), id_slot, sp, kind)
}

#[inline(always)]
unsafe fn exit_at(now: u64, id_slot: *const u32, sp: usize, kind: usize) {
    let state = thread::current();
    if state.is_null() {
        return;
    }
    let ts = &mut *state;
    let depth = ts.depth;
    if depth >= ts.frame_cap {
        ts.depth = depth - 1; // a frame that overflowed the shadow stack: counted, not stored
        return;
    }
    let top = &*ts.frames.add(depth);
    let id = load_id(id_slot);
    if top.id == id && top.sp == sp {
        reconcile::close_top(ts, depth, now, kind);
    } else if switch::mode(id) == switch::MEASURED {
        reconcile::exit_mismatch(ts, id, sp, now, kind);
    }
    if recalibrate::due(now) {
        recalibrate::run(state, now);
    }
    clock::fence();
}

#[inline(always)]
unsafe fn push(ts: &mut ThreadState, depth: usize, id: u32, sp: usize) {
    reconcile::mark_busy(ts, depth - 1);
    let parent = &mut *ts.frames.add(depth - 1);
    parent.child_calls += TIMED_CHILD;
    (*ts.records.add(id as usize)).active += 1;
    let node = match ts.tree.as_mut() {
        None => 0,
        Some(tree) => {
            let open = crate::callpath::OpenFrames { frames: ts.frames, top: depth - 1 };
            let node = tree.step(parent.node, id, open);
            tree.node(node).record.active += 1;
            node
        }
    };
    let frame = &mut *ts.frames.add(depth);
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

#[cold]
#[inline(never)]
unsafe fn enter_cold(ts: &mut ThreadState, id: u32, depth: usize, sp: usize) -> Opened {
    if depth & reconcile::BUSY != 0 {
        // In a signal handler that interrupted a probe: counted, and the step undone at its exit.
        ts.depth = depth;
        if id < ts.record_cap {
            (*ts.records.add(id as usize)).counted += 1;
        }
        OPENED
    } else if depth >= ts.frame_cap {
        ts.depth = depth;
        ts.counters.stack_overflow += 1;
        OPENED
    } else if id == UNREGISTERED || !thread::grow_records(ts, id) {
        ts.counters.unregistered += 1;
        NOTHING
    } else {
        push(ts, depth, id, sp);
        OPENED
    }
}
