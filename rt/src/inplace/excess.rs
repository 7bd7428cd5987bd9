//! What an inline count costs in place over its calibration, pooled over the estimations that
//! measured it: compensation charges every inline count its calibration plus this
//! (`compensate::inline_count_cost`).
//!
//! No window can leave an inline count out (its calls would lose their counts), and its
//! calibration is what tight loops say: after a system call it cost 7.2 to 7.4 ns a call over
//! the plain code where its calibration said 2.3, next to cache misses 15 to 20 ns against 3.8
//! (the ground truth with throttling on, issue 23's notes). So the windows measure it two ways,
//! each blind where the other sees:
//!
//! - One more count: double windows (`Window::Double`, mode `DOUBLE`) run a shadow of the count
//!   before counting (the same checks, loads and adds of the same words, adding a zero, each sum
//!   stored to a sink word of the thread state: pass/shim), against detour windows (mode
//!   `DETOUR`) that reach the count by the same branches without it. Written back to the words it
//!   read, the shadow made the count after it wait for its stores, a chain no single count has:
//!   in Lua's interpreter it measured one more count 0.5 ns a call over the calibration (median
//!   of 20 processes; 0.04 to the sinks), and Lua's most called routine was charged 2.1 ns an
//!   inline count where its count cost 0.3 to 1.0 over its switched-off call (1.3 charged with
//!   the sinks). Where instructions are what the code is bound by (an interpreter), the
//!   second count costs about what the first does (issue 23's thirty-eighth note: 0.85 to 0.9 of
//!   the count's own cost in Lua). Where the first count's cost is a limit it meets (the
//!   memory accesses in flight next to a dependency chain), the second adds nothing: on an AMD
//!   EPYC the first cost 4.4 ns a call next to the ground truth's randlc chain and about 1.2 (6 %
//!   of the run) in the IS-like key generation while the shadow measured about zero, and the
//!   overhead figure came to 0.08 x the IS-like slowdown (issue 23's note of session 44).
//! - The count over a bare one: inline windows against bare windows (`Window::FirstInline`,
//!   `Window::FirstBare`), whose count is a test and two updates of words the thread pointer
//!   addresses (instrument_contract::inline_count), which cost nothing measurable next to the
//!   chain or in IS-like; their difference is what the first count costs there over switched-off
//!   code (4.5 to 4.9 ns a call in the chain's rounds where it costs 4.4, 1.2 to 1.4 in IS-like
//!   where the slowdown says 1.3). It is a lower bound, as the second count is: the bare count
//!   costs at least what the switched-off checks do, which nothing charges. Adding the bare
//!   count's calibration (1.2 ns) made the compensated IS-like keys 5 % short of the plain
//!   build's: where this measurement is the one that sees, the bare count's three instructions
//!   hide as the count's do. Where the code is bound by its instruction fetch,
//!   the bare count's way out of the routine's code (two taken branches to blocks past its end)
//!   costs more than its calibration, and more than the inline count's straight line: in Lua it
//!   measured 0.6 to 4.5 ns a call dearer than the inline count.
//!
//! Each is a lower bound of what the count costs where the other is blind, so compensation takes
//! the larger: each kind's excesses are pooled apart, each pool weighed against the
//! calibration, and the larger charged.
//!
//! Each estimation's measurement less the calibrated inline count is an excess, kept within the
//! event's timed pair in place. A pool is of the latest `ITEMS` excesses of its kind, by DerSimonian and
//! Laird's random effects: each weighed by the inverse of its variance plus the variance
//! between estimations that their spread shows beyond their own standard errors. The pooled
//! excess then counts by how precise it is against the calibration, whose own error in place is
//! taken to be as large as itself (it was off by 30 % to a factor of six above): weighed by
//! c^2 / (c^2 + se^2), so a pool as uncertain as the calibration counts half; and is kept
//! between minus the calibration (a count costs nothing less than nothing) and the timed pair.
//! On NPB BT (class W, late placement, throttled) the estimations' measurements are not one
//! quantity with its noise: binvcrhs's came out at +20 to +30 ns (errors of 12) in some
//! stretches of the run and at -4 to +8 (errors of 5) in others. Pooled with their own errors
//! only, whichever stretch had the smaller errors won (issue 23's thirty-sixth note). The
//! windows' differences carry the event's own variation too: in Lua's interpreter, where a
//! routine's calls now and then take microseconds (a table resize, a string buffer grown), one
//! estimation's difference came out 37.9 ±12.6 us where most are a nanosecond or two ±0.5. One
//! charge serves every inline count, since the count leaves no trace of which event it was when
//! its caller is charged (`inline::charge_pending`).

/// How many of the latest excesses the pool holds (a program with more estimations pools the
/// latest, in the phase the run is in).
const ITEMS: usize = 128;

/// The pool: the latest excesses and their standard errors (scaled ticks), a ring.
struct Pool {
    items: [(f64, f64); ITEMS],
    added: usize,
}

impl Pool {
    const EMPTY: Pool = Pool { items: [(0.0, 0.0); ITEMS], added: 0 };

    /// Adds an excess with its standard error.
    fn add(&mut self, excess: f64, se: f64) {
        // Below a tick per shortest window the standard error is the clock's resolution.
        self.items[self.added % ITEMS] = (excess, se.max(RESOLUTION));
        self.added += 1;
    }

    /// The pooled excess and its standard error, if any was added.
    fn pooled(&self) -> Option<(f64, f64)> {
        crate::pooling::random_effects(self.items[..self.added.min(ITEMS)].iter().copied())
    }
}

/// The two pools: what one more count cost (double windows) and what the count cost over a bare
/// one (first windows), each less the calibrated count.
struct Pools {
    shadow: Pool,
    first: Pool,
}

struct Shared(std::cell::UnsafeCell<Pools>);
// SAFETY: only an estimation's owner adds to the pools, and one estimation runs at a time
// (inplace's TARGET); `finish` publishes the last one at exit, when no thread measures any more.
unsafe impl Sync for Shared {}
static POOLS: Shared = Shared(std::cell::UnsafeCell::new(Pools { shadow: Pool::EMPTY, first: Pool::EMPTY }));

/// A tick in the fewest executions a window has, scaled.
const RESOLUTION: f64 = ((1u64 << crate::overhead::SCALE) / super::MIN_WINDOW) as f64;

/// Adds an estimation's measurements of an event whose timed pair costs `timed` in place
/// (scaled): its shadow (what one more inline count cost per call, scaled ticks, with its
/// standard error) and its first count (what the count cost over a bare count, likewise), and
/// gives compensation the larger of the two pools' excesses over the calibrated inline count.
///
/// # Safety
/// The caller owns the estimation (it publishes it), or no thread measures any more.
pub(super) unsafe fn add(shadow: Option<(f64, f64)>, first: Option<(f64, f64)>, timed: u64) {
    let calibrated = crate::compensate::untimed_costs().inline as f64;
    let timed = timed as f64;
    let excess = |(cost, se): (f64, f64)| ((cost - calibrated).clamp(-timed, timed), se);
    // SAFETY: the caller is the pools' only user now (the contract).
    let pools = unsafe { &mut *POOLS.0.get() };
    if let Some((e, se)) = shadow.map(excess) {
        pools.shadow.add(e, se);
    }
    if let Some((e, se)) = first.map(excess) {
        pools.first.add(e, se);
    }
    if let Some(kept) = larger(pools.shadow.pooled(), pools.first.pooled(), calibrated) {
        crate::compensate::set_inline_excess(kept.clamp(-calibrated, timed).round() as i64);
    }
}

/// The larger of two pooled excesses (with their standard errors), each weighed against the
/// calibration `calibrated` first; none without either.
fn larger(shadow: Option<(f64, f64)>, first: Option<(f64, f64)>, calibrated: f64) -> Option<f64> {
    let weighed = |(excess, se)| against_calibration(excess, se, calibrated);
    [shadow.map(weighed), first.map(weighed)].into_iter().flatten().reduce(f64::max)
}

/// `excess` (with its standard error `se`) weighed against a calibration `calibrated` whose
/// error in place is taken to be as large as itself: by calibrated^2 / (calibrated^2 + se^2).
fn against_calibration(excess: f64, se: f64, calibrated: f64) -> f64 {
    let prior = calibrated * calibrated;
    if prior + se * se == 0.0 {
        return excess;
    }
    excess * prior / (prior + se * se)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_counts_by_its_precision_against_the_calibration() {
        assert_eq!(against_calibration(-3.0, 0.0, 3.0), -3.0, "a precise pool stands");
        assert_eq!(against_calibration(-3.0, 3.0, 3.0), -1.5, "as uncertain as the calibration: half");
        assert!(against_calibration(10.0, 30.0, 3.0).abs() < 1.0, "a vague pool leaves the calibration");
        assert_eq!(against_calibration(2.0, 1.0, 0.0), 0.0, "no calibration yet: nothing to weigh");
    }

    #[test]
    fn the_charge_follows_the_larger_pool_where_one_measurement_is_blind() {
        // A chain: one more count adds nothing (the shadow's excess is minus the calibration),
        // the first count over a bare one costs 4.4 ns where the calibration says 1.5.
        let charged = larger(Some((-1.5, 0.05)), Some((2.9, 0.05)), 1.5).unwrap();
        assert!((charged - 2.9).abs() < 0.01, "{charged}");
        // An interpreter: the bare count's way out costs, the first count reads low.
        let charged = larger(Some((1.0, 0.1)), Some((-2.0, 0.1)), 1.5).unwrap();
        assert!((charged - 1.0).abs() < 0.01, "{charged}");
        assert_eq!(larger(None, Some((3.0, 0.0)), 1.5), Some(3.0), "one pool alone");
        assert_eq!(larger(None, None, 1.5), None);
    }
}
