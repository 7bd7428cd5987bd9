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
//! instructions cost in place, and only the bare count's cost is left to its calibration. Next
//! to cache misses that measured 5 ns of the missing 13 (the ground truth's misses context,
//! throttled: -12.4 to -8.6 ns a call); after a system call about 0.5 ns, so there the missing
//! 5 ns are in what the bare count does too (the mode test, the thread pointer, the state's
//! line), which no exact count can be measured against.
//!
//! Each estimation's inline-minus-bare difference less the same difference calibrated (the
//! latest recalibration's inline and bare counts) is an excess, which can be no less than minus
//! the calibrated inline count (a count costs something) and no more than the event's timed pair
//! in place (a count is cheaper than timing the call). The excesses are pooled weighted by the
//! inverse of their variances, and the pool counts only once it is over two of its standard
//! errors from zero (the calibration stands where the windows cannot tell). The windows'
//! differences carry the event's own variation: in Lua's interpreter, where a routine's calls
//! now and then take microseconds (a table resize, a string buffer grown), one estimation's
//! difference came out 37.9 ±12.6 us where most are a nanosecond or two ±0.5, and pooled by the
//! estimations' budgets that one made every inline count cost 3 us. One charge serves every
//! inline count, since the count leaves no trace of which event it was when its caller is
//! charged (`inline::charge_pending`).

/// The pool: the excesses over their variances (scaled ticks), and the inverse variances.
struct Pool {
    weighted: f64,
    weights: f64,
}

struct Shared(std::cell::UnsafeCell<Pool>);
// SAFETY: only an estimation's owner adds to the pool, and one estimation runs at a time (inplace's
// TARGET); `finish` publishes the last one at exit, when no thread measures any more.
unsafe impl Sync for Shared {}
static POOL: Shared = Shared(std::cell::UnsafeCell::new(Pool { weighted: 0.0, weights: 0.0 }));

/// A tick in the fewest executions a window has, scaled.
const RESOLUTION: f64 = ((1u64 << crate::overhead::SCALE) / super::MIN_WINDOW) as f64;

/// Adds an estimation's inline-minus-bare measurement (scaled ticks per execution, with its
/// standard error) of an event whose timed pair costs `timed` in place (scaled), and gives
/// compensation the pooled excess.
///
/// # Safety
/// The caller owns the estimation (it publishes it), or no thread measures any more.
pub(super) unsafe fn add(measured: (f64, f64), timed: u64) {
    let untimed = crate::compensate::untimed_costs();
    let calibrated = untimed.inline as f64 - untimed.bare as f64;
    let excess = (measured.0 - calibrated).clamp(-(untimed.inline as f64), timed as f64);
    // Below a tick per shortest window the standard error is the clock's resolution.
    let weight = 1.0 / measured.1.max(RESOLUTION).powi(2);
    // SAFETY: the caller is the pool's only user now (the contract).
    let pool = unsafe { &mut *POOL.0.get() };
    pool.weighted += weight * excess;
    pool.weights += weight;
    let (excess, se) = (pool.weighted / pool.weights, pool.weights.sqrt().recip());
    crate::compensate::set_inline_excess(significant(excess, se).round() as i64);
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
