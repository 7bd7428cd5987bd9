//! Estimated times for the calls of throttled events, which are counted without being timed.
//!
//! Without an estimate, a throttled routine keeps exact counts but only its timed calls' time,
//! and the time of all its other calls stays in its callers' exclusive time: on IS-like code a
//! routine taking a third of the run shows a fraction of a percent, and its caller what it did
//! not do. So when an event is throttled, the mean exclusive time of its timed calls on that
//! thread becomes its per-call estimate, less three things: the estimates of its own throttled
//! children's untimed calls (those stay theirs), the part of a timed probe pair inside its
//! interval, which would otherwise make a tiny routine's estimate several times its time (the
//! start-up part at first, the inside share of the pair's in-place cost once inplace has
//! measured it), and what its timed children's probe pairs left in its exclusive time beyond
//! the counted entry those children cost once throttled (`child_excess`). Once inplace has
//! measured the event, the basis is also its timed windows' median exclusive time per
//! execution, which a preemption cannot inflate as it can the mean of a tiny routine's first
//! calls (its children are then mostly counted already). Every counted call adds the estimate
//! to its own record and to the record of the event on top of the stack (its caller), whose
//! exclusive time held that call; the profile then gives every event its times with the untimed
//! calls estimated (`estimated`): the throttled event gains what each of its counted calls was
//! estimated at, each caller loses the same. With compensation on, the compensated mean is used
//! as it is.
//!
//! A hot event that is measured (compensation on) gets the same treatment while inplace
//! estimates it: its counted windows leave some of its calls untimed, each estimated at the
//! compensated mean of its calls timed before (`hot`), until the estimation ends (`clear`).

use crate::overhead::SCALE;
use crate::switch::TABLE_LEN;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Per event: the estimated exclusive ticks of one untimed call, scaled (0: none).
/// The trampolines' counted path reads it directly (trampolines.rs).
#[repr(transparent)]
pub struct Estimates([AtomicU64; TABLE_LEN as usize]);
/// Instrumented code's inline count reads it too (`instrument_contract::inline_count`).
#[export_name = "__instrument_per_call"]
pub static PER_CALL: Estimates = Estimates([const { AtomicU64::new(0) }; TABLE_LEN as usize]);

/// Per event: what the descendants of one of its untimed calls took, estimated (scaled ticks;
/// 0: none), for its flat record's inclusive time. In a flat profile an untimed call is not on
/// the shadow stack: its descendants' counted calls charge the nearest timed frame, as their
/// time is that frame's exclusive time, and nothing gave the event's inclusive time their part
/// (the ground truth's nested context, throttled: its top routine's inclusive time 1 ms for
/// 5 M calls whose callees took 250). Its timed windows measure it (inplace's
/// `timed_window_mean`: with the event timed, its descendants' counted calls charge it, their
/// estimates in its `untimed_children`, and its timed children's inclusive time is in its
/// own), in the state its untimed calls run in. With callpaths an untimed parent stays on the
/// stack and its descendants' estimates are handed up exactly (`probes::hand_up_descendants`).
static UNDER: Estimates = Estimates([const { AtomicU64::new(0) }; TABLE_LEN as usize]);

impl Estimates {
    /// Event `id`'s value (0 past the table).
    fn get(&self, id: u32) -> u64 {
        self.0.get(id as usize).map_or(0, |e| e.load(Relaxed))
    }

    /// Sets event `id`'s value (nothing past the table).
    fn set(&self, id: u32, scaled: u64) {
        if let Some(e) = self.0.get(id as usize) {
            e.store(scaled, Relaxed);
        }
    }
}

/// Event `id`'s estimate of its untimed calls' descendants (`UNDER`), scaled ticks per call.
pub fn under_per_call(id: u32) -> u64 {
    UNDER.get(id)
}

/// Sets event `id`'s estimate of its untimed calls' descendants (`UNDER`).
pub fn set_under(id: u32, scaled: u64) {
    UNDER.set(id, scaled);
}

/// Event `id`'s estimate per untimed call (scaled ticks; 0 when it has none), for an `id` inside
/// the mode table (every counted event's: `switch::mode` reads a later id as measured).
///
/// # Safety
/// `id < TABLE_LEN`.
#[inline(always)]
pub unsafe fn per_call_in_table(id: u32) -> u64 {
    debug_assert!(id < TABLE_LEN);
    // SAFETY: the caller guarantees that `id` indexes the table.
    unsafe { PER_CALL.0.get_unchecked(id as usize) }.load(Relaxed)
}

/// Timed calls below which their mean is no estimate: a mean over a handful of calls (a
/// throttling threshold set that low) is as likely the first call's page faults and cold caches
/// as the routine, and one such call charged to every later call made a 40 ns routine 3 us.
const MIN_CALLS: u64 = 1000;

/// Event `id` (probe `kind`) is being throttled on a thread where its `calls` timed calls took
/// `exclusive` ticks (negative: compensated below zero, taken as zero) and made
/// `timed_children` timed calls. Sets its estimate and returns the mean (scaled ticks per call,
/// less its timed children's excess) it came from.
pub fn throttled(id: u32, kind: usize, exclusive: i64, calls: u64, timed_children: u64) -> u64 {
    let mean = mean_per_call(exclusive, calls);
    if calls < MIN_CALLS {
        // No estimate until the in-place windows measure the event: the calls counted until
        // then stay in their callers' time, as without estimates.
        set(id, 0);
        return mean;
    }
    let (children, inside) = match crate::overhead::costs() {
        Some(costs) if !crate::compensate::enabled() => {
            (timed_children.saturating_mul(child_excess(costs)) / calls.max(1), costs.own[kind])
        }
        _ => (0, 0),
    };
    let basis = mean.saturating_sub(children);
    set(id, basis.saturating_sub(inside));
    basis
}

/// What a timed child's probe pair left in its caller's exclusive time beyond what the same
/// child costs there once it is counted (scaled ticks): the pair's outer part less the counted
/// entry. A hot routine's children are mostly throttled by the time it is (they reach the
/// threshold first when called once or more per call), so its untimed calls hold the counted
/// cost; without this, a routine calling a timed leaf per call was estimated at several times
/// what its calls took in the throttled run, and its caller went below zero.
fn child_excess(costs: &crate::overhead::Costs) -> u64 {
    let standard = crate::overhead::STANDARD;
    costs.measured[standard]
        .saturating_sub(costs.own[standard])
        .saturating_sub(costs.untimed.counted[standard])
}

/// The in-place cost of a throttled event's timed probe pair (scaled ticks, inplace) was
/// measured, with `mean` its timed windows' exclusive time per execution as measured: its
/// estimate becomes `mean` less the part of that cost inside the event's interval, as the split
/// windows measured it (`inside`), else the start-up pair's share of it, instead of the start-up
/// part, which a probe pair next to a dependency chain does not cost.
///
/// With compensation on, only a measured split replaces the estimate, which is otherwise the
/// compensated mean of the calls timed before throttling (`throttled`): that mean comes from
/// the run's first calls, which on the dependency-chain fixture ran up to a third slower in
/// some processes than the windows later measured.
pub fn measured_in_place(id: u32, kind: usize, mean: u64, timed: u64, inside: Option<u64>) {
    let Some(costs) = crate::overhead::costs() else { return };
    if crate::compensate::enabled() && inside.is_none() {
        return;
    }
    let share = || (timed as u128 * costs.own[kind] as u128 / costs.measured[kind].max(1) as u128) as u64;
    set(id, mean.saturating_sub(inside.unwrap_or_else(share)));
}

/// The exclusive ticks of an event's timed calls that its untimed calls are estimated from:
/// compensated when compensation is on, and without what its own throttled children's untimed
/// calls were estimated at (those stay theirs).
pub fn basis(record: &crate::thread::Record) -> i64 {
    let measured = if crate::compensate::enabled() { record.comp_excl } else { record.excl as i64 };
    measured - crate::compensate::scaled_to_ticks(record.untimed_children) as i64
}

/// A hot event that is measured goes into in-place estimation (inplace, compensation on),
/// whose counted windows leave some of its calls untimed (up to one in twelve): each is
/// estimated at the compensated mean of its `calls` timed calls (`exclusive` ticks, `basis`),
/// so that their time is the event's and not its callers' exclusive time. `clear` ends it.
pub fn hot(id: u32, exclusive: i64, calls: u64) {
    set(id, if calls < MIN_CALLS { 0 } else { mean_per_call(exclusive, calls) });
}

/// `exclusive` ticks (negative: compensated below zero, taken as zero) over `calls`, scaled.
fn mean_per_call(exclusive: i64, calls: u64) -> u64 {
    (exclusive.max(0) as u64).saturating_mul(1 << SCALE) / calls.max(1)
}

/// A measured event's estimation ended: its later calls are timed, and it has no estimate.
pub fn clear(id: u32) {
    set(id, 0);
}

fn set(id: u32, scaled: u64) {
    PER_CALL.set(id, scaled);
}
