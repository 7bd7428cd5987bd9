//! Estimated times for the calls of throttled events, which are counted without being timed.
//!
//! Without an estimate, a throttled routine keeps exact counts but only its timed calls' time,
//! and the time of all its other calls stays in its callers' exclusive time: on IS-like code a
//! routine taking a third of the run shows a fraction of a percent, and its caller what it did
//! not do. So when an event is throttled, the mean exclusive time of its timed calls on that
//! thread (less the estimates of its own throttled children's untimed calls, which stay theirs)
//! becomes its per-call estimate; every counted call adds the estimate to the record of
//! the event on top of the stack (its caller), whose exclusive time held that call; the
//! profile then gives every event its times with the untimed calls estimated (`estimated`):
//! the throttled event gains its counted calls times the estimate, each caller loses what it
//! was charged. The estimate is what those calls would have shown had they been timed (probe
//! costs inside included, as in every uncompensated time); with compensation on it is the
//! compensated mean.

use crate::overhead::SCALE;
use crate::switch::TABLE_LEN;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Per event: the estimated exclusive ticks of one untimed call, scaled (0: none).
struct Estimates([AtomicU64; TABLE_LEN as usize]);
static PER_CALL: Estimates = Estimates([const { AtomicU64::new(0) }; TABLE_LEN as usize]);

/// Event `id`'s estimate per untimed call (scaled ticks; 0 when it has none).
#[inline(always)]
pub fn per_call(id: u32) -> u64 {
    match PER_CALL.0.get(id as usize) {
        Some(estimate) => estimate.load(Relaxed),
        None => 0,
    }
}

/// Event `id` is being throttled on a thread where its `calls` timed calls took `exclusive`
/// ticks (negative: compensated below zero, estimated as zero).
pub fn throttled(id: u32, exclusive: i64, calls: u64) {
    if let (Some(estimate), true) = (PER_CALL.0.get(id as usize), calls > 0) {
        let scaled = (exclusive.max(0) as u64).saturating_mul(1 << SCALE) / calls;
        estimate.store(scaled, Relaxed);
    }
}
