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
//! latest recalibration's inline and bare counts) is an excess, kept within the event's timed
//! pair in place either way (a count is cheaper than timing the call; noise of either sign is
//! cut alike). The pool is of the latest `ITEMS` excesses, by DerSimonian and Laird's random
//! effects: each weighed by the inverse of its variance plus the variance between estimations
//! that their spread shows beyond their own standard errors. It counts only once it is over two
//! of its standard errors from zero (the calibration stands where the windows cannot tell), and
//! is kept between minus the calibrated inline count (a count costs something) and the timed
//! pair. On NPB BT (class W, late placement, throttled) the estimations' excesses are not one
//! quantity with its noise: binvcrhs's came out at +20 to +30 ns (errors of 12) in some stretches
//! of the run and at -4 to +8 (errors of 5) in others, against a true excess of about 3 ns a
//! count. Pooled with their own errors only, whichever stretch had the smaller errors won and the
//! pool passed its test at 15 to 21 ns for part of the run in one process of five, so every
//! inline count then cost four times its calibration; an excess clamped below at minus the
//! calibration (as it was) also censored the negative side of that noise, and pooled what was
//! left at +10 to +16 ns (issue 23's thirty-sixth note). The windows' differences carry the
//! event's own variation too: in Lua's interpreter, where a routine's calls now and then take
//! microseconds (a table resize, a string buffer grown), one estimation's difference came out
//! 37.9 ±12.6 us where most are a nanosecond or two ±0.5. One charge serves every inline count,
//! since the count leaves no trace of which event it was when its caller is charged
//! (`inline::charge_pending`).

/// How many of the latest excesses the pool holds (a program with more estimations pools the
/// latest, in the phase the run is in).
const ITEMS: usize = 128;

/// The pool: the latest excesses and their standard errors (scaled ticks), a ring.
struct Pool {
    items: [(f64, f64); ITEMS],
    added: usize,
}

struct Shared(std::cell::UnsafeCell<Pool>);
// SAFETY: only an estimation's owner adds to the pool, and one estimation runs at a time (inplace's
// TARGET); `finish` publishes the last one at exit, when no thread measures any more.
unsafe impl Sync for Shared {}
static POOL: Shared = Shared(std::cell::UnsafeCell::new(Pool { items: [(0.0, 0.0); ITEMS], added: 0 }));

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
    let timed = timed as f64;
    let excess = (measured.0 - calibrated).clamp(-timed, timed);
    // SAFETY: the caller is the pool's only user now (the contract).
    let pool = unsafe { &mut *POOL.0.get() };
    // Below a tick per shortest window the standard error is the clock's resolution.
    pool.items[pool.added % ITEMS] = (excess, measured.1.max(RESOLUTION));
    pool.added += 1;
    let (excess, se) = random_effects(&pool.items[..pool.added.min(ITEMS)]);
    let kept = significant(excess, se).clamp(-(untimed.inline as f64), timed);
    crate::compensate::set_inline_excess(kept.round() as i64);
}

/// The random-effects mean of `items` (values with their standard errors) and its standard
/// error: the variance between items beyond their own errors (DerSimonian and Laird's τ², the
/// one the estimates' pooling takes as their drift: `pooling::between_variance`) added to each
/// item's own.
fn random_effects(items: &[(f64, f64)]) -> (f64, f64) {
    let between = crate::pooling::between_variance(items.iter().copied()).unwrap_or(0.0);
    weighted_mean(items, between)
}

/// The mean of `items` weighed by the inverse of each one's variance plus `between`, and its
/// standard error.
fn weighted_mean(items: &[(f64, f64)], between: f64) -> (f64, f64) {
    let (sum, weights) = items.iter().fold((0.0, 0.0), |(sum, weights), &(x, se)| {
        let weight = 1.0 / (se * se + between);
        (sum + weight * x, weights + weight)
    });
    (sum / weights, weights.sqrt().recip())
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

    #[test]
    fn consistent_items_pool_by_their_own_errors() {
        let (mean, se) = random_effects(&[(10.0, 2.0), (11.0, 2.0), (9.0, 2.0)]);
        assert!((mean - 10.0).abs() < 1e-9 && (se - 2.0 / 3f64.sqrt()).abs() < 1e-9, "{mean} {se}");
    }

    #[test]
    fn items_spread_beyond_their_errors_widen_the_pool() {
        // Two stretches of a run: about +25 with errors of 6, about zero with errors of 5 (BT).
        let items =
            [(24.0, 6.0), (27.0, 6.0), (-4.0, 5.0), (0.0, 5.0), (-2.0, 5.0), (26.0, 6.0), (-1.0, 5.0)];
        let (fixed, fixed_se) = weighted_mean(&items, 0.0);
        assert!(significant(fixed, fixed_se) > 0.0, "with their own errors only: {fixed} ±{fixed_se}");
        let (mean, se) = random_effects(&items);
        assert!(se > 2.0 * fixed_se && significant(mean, se) == 0.0, "{mean} ±{se}");
    }
}
