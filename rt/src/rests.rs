//! How long a throttled event rests between in-place estimations.
//!
//! A throttled event is estimated again every `inplace::REESTIMATE_NS`, so that its untimed
//! calls are charged at what a call costs in the current phase of the run. Each estimation
//! costs its windows' timed executions and some ninety window boundaries, about a quarter of a
//! millisecond of a tiny routine's run (IS-like key generation: 0.85 % of the run went to
//! estimations at one per 50 ms, more than its six hundred million counted calls cost). Most
//! events' costs and times do not move between estimations, so an estimation that finds the
//! event as the one before it did doubles its rest, up to `MAX_DOUBLINGS` times; one that finds
//! it changed (a compressor's match finder slowing down as its dictionary fills) brings the
//! rest back to the period, and the phase is tracked as closely as before.
//!
//! Of the events rested, a re-offer takes the one with the most counted calls since it was last
//! offered (`calls_since`): what an estimate is worth is the calls it will be charged to, and the
//! busiest events' calls carry most of the run's probe cost. Taken round robin, the re-offers of
//! a short run went to events called a few thousand times, and Lua's three busiest events (ten,
//! eight and six million calls a run) were each estimated once, at throttling.

use crate::event_table::EventTable;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The most times a rest doubles: 32 periods (1.6 s at 50 ms).
pub const MAX_DOUBLINGS: u64 = 5;
/// A change of an event's estimate by more than this share (1/8) of the one before is a change.
const TOLERANCE_SHIFT: u32 = 3;
/// Bits of an entry that hold its doublings; the rest holds the tick it is due at, shifted.
const DOUBLING_BITS: u32 = 8;

/// Per event: the clock tick from which it may be estimated again (high bits) and how often
/// its rest has doubled (low bits); 0 for an event never estimated. Null before `start`.
static TABLE: EventTable<AtomicU64> = EventTable::new();
/// Per event: the offering thread's count of its counted calls when it was last offered.
static SEEN: EventTable<AtomicU64> = EventTable::new();

/// Maps the table (start-up, when events are estimated); without it every event rests one
/// period, as before.
pub fn start() {
    TABLE.map();
    SEEN.map();
}

fn entry(id: u32) -> Option<&'static AtomicU64> {
    TABLE.get(id)
}

/// Whether event `id` has rested long enough at tick `now` to be estimated again.
pub fn rested(id: u32, now: u64) -> bool {
    entry(id).is_none_or(|e| e.load(Relaxed) >> DOUBLING_BITS <= now >> DOUBLING_BITS)
}

/// Event `id`'s counted calls since it was last offered, from a thread's count of them
/// (`counted`); all of them where it was never offered, or was offered from a thread that had
/// counted more.
pub fn calls_since(id: u32, counted: u64) -> u64 {
    let seen = SEEN.get(id).map_or(0, |s| s.load(Relaxed));
    if counted >= seen {
        counted - seen
    } else {
        counted
    }
}

/// Event `id` is offered again by a thread that has counted `counted` of its calls.
pub fn offered(id: u32, counted: u64) {
    if let Some(s) = SEEN.get(id) {
        s.store(counted, Relaxed);
    }
}

/// Whether an estimate moved from `before` to `after` by no more than the tolerance.
pub fn unchanged(before: u64, after: u64) -> bool {
    before.abs_diff(after) <= before >> TOLERANCE_SHIFT
}

/// Event `id` was estimated at tick `now`, `same` if it found the event as the estimation
/// before it had; its next estimation is due a period (`period` ticks) times two to the number
/// of such estimations in a row, at most `MAX_DOUBLINGS`.
pub fn estimated(id: u32, same: bool, now: u64, period: u64) {
    let Some(e) = entry(id) else { return };
    let old = e.load(Relaxed);
    let doublings = if same && old != 0 { ((old & 0xff) + 1).min(MAX_DOUBLINGS) } else { 0 };
    let due = now.saturating_add(period << doublings);
    e.store(due >> DOUBLING_BITS << DOUBLING_BITS | doublings, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rest_doubles_while_estimates_hold_and_falls_back_when_one_moves() {
        start();
        let (id, period) = (7, 1 << 20);
        assert!(rested(id, 0), "never estimated: due at once");
        estimated(id, true, 0, period);
        assert!(!rested(id, period - 1024) && rested(id, period), "the first estimate rests one period");
        estimated(id, true, period, period);
        assert!(!rested(id, 2 * period) && rested(id, 3 * period), "a second that agrees rests two");
        for _ in 0..10 {
            estimated(id, true, 0, period);
        }
        assert!(!rested(id, (32 << 20) - 1024) && rested(id, 32 << 20), "at most 32 periods");
        estimated(id, false, 0, period);
        assert!(rested(id, period), "a change brings the rest back to one period");
    }

    #[test]
    fn the_calls_since_an_offer_are_counted_from_it() {
        start();
        let id = 9;
        assert_eq!(calls_since(id, 500), 500, "never offered: all of them");
        offered(id, 500);
        assert_eq!(calls_since(id, 1700), 1200);
        assert_eq!(calls_since(id, 300), 300, "a thread that counted fewer: its own");
    }

    #[test]
    fn an_estimate_is_unchanged_within_an_eighth() {
        assert!(unchanged(800, 900) && unchanged(800, 700));
        assert!(!unchanged(800, 901) && !unchanged(800, 699));
        assert!(unchanged(0, 0) && !unchanged(0, 1));
    }
}
