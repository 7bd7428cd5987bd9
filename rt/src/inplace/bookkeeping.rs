//! What measuring in place costs the run outside every window: the window boundaries'
//! bookkeeping (closing a window, sorting and pooling an estimate, opening the next), which
//! lies in neither of the windows it separates, so that no difference of windows holds it.
//!
//! The overhead figure adds it (`Overhead::estimation_ns`). Next to the IS-like random-number
//! routine the windows' differences accounted for about half of what the runtime's code took
//! in a sampled profile (0.27 % of the samples of a run alternating plain and instrumented
//! rounds, against a figure of 0.2 to 0.3 % of the plain rounds' time).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Ticks spent at window boundaries, all estimations (one thread at a time owns one).
static TICKS: AtomicU64 = AtomicU64::new(0);

/// Adds one boundary's ticks, from its first clock reading to `end`.
pub(super) fn add(start: u64, end: u64) {
    TICKS.fetch_add(end.saturating_sub(start), Relaxed);
}

/// Ticks the run's window boundaries took so far.
pub fn ticks() -> u64 {
    TICKS.load(Relaxed)
}
