//! What an inline count costs in place over its calibration, pooled over the estimations whose
//! bare windows measured it: compensation charges every inline count its calibration plus this
//! (`compensate::inline_count_cost`).
//!
//! No window can measure an inline count whole (one without it would lose its calls' counts),
//! and its calibration is what tight loops say: after a system call it cost 7.2 to 7.4 ns a call
//! over the plain code where its calibration said 2.3, next to cache misses 15 to 20 ns against
//! 3.8 (the ground truth with throttling on, issue 23's notes). Bare windows (`Window::Bare`)
//! count the event's calls by a thread-local decrement instead (inline.rs), which touches the
//! thread state's first line only, where the inline count also touches the event's record and
//! the estimate table: inline windows against bare ones measure what those lines and
//! instructions cost in place, and only the bare count's cost is left to its calibration.
//!
//! Each estimation's inline-minus-bare difference less the same difference calibrated (the
//! latest recalibration's inline and bare counts) is an excess; one within two standard errors
//! of zero is taken as zero (the calibration stands where the windows cannot tell). The
//! excesses are pooled weighted by the estimations' budgets (a share of the event's calls so
//! far), so that the events that make the most inline counts weigh the most: one charge for
//! every inline count, since the count leaves no trace of which event it was when its caller
//! is charged (`inline::charge_pending`).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// The excesses times their weights (scaled ticks), and the weights.
static WEIGHTED: AtomicI64 = AtomicI64::new(0);
static WEIGHTS: AtomicU64 = AtomicU64::new(0);

/// The largest weight one estimation gets, which keeps the weighted sum far inside an `i64`.
const MAX_WEIGHT: u64 = 1 << 32;

/// Adds an estimation's inline-minus-bare measurement (scaled ticks per execution, with its
/// standard error) with `weight`, and gives compensation the pooled excess. Called by the
/// estimation's owner only (one at a time).
pub(super) fn add(measured: (f64, f64), weight: u64) {
    let untimed = crate::compensate::untimed_costs();
    let calibrated = untimed.inline as f64 - untimed.bare as f64;
    let excess = significant(measured.0 - calibrated, measured.1);
    let weight = weight.clamp(1, MAX_WEIGHT);
    let weighted = WEIGHTED.load(Relaxed).saturating_add((excess * weight as f64).round() as i64);
    let weights = WEIGHTS.load(Relaxed).saturating_add(weight);
    WEIGHTED.store(weighted, Relaxed);
    WEIGHTS.store(weights, Relaxed);
    crate::compensate::set_inline_excess(weighted / weights as i64);
}

/// `excess` where it is over two standard errors `se` from zero, else zero.
fn significant(excess: f64, se: f64) -> f64 {
    if excess.abs() > 2.0 * se {
        excess
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excess_within_two_standard_errors_is_none() {
        assert_eq!(significant(30.0, 10.0), 30.0);
        assert_eq!(significant(-30.0, 10.0), -30.0);
        assert_eq!(significant(19.0, 10.0), 0.0);
    }
}
