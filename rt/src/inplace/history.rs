//! The event's finished in-place estimates, in the order they were made, and what is pooled
//! from them: the cost compensation uses now (`pooling`), the means over the run (the inline
//! count's difference, the counted call's cost for the profile), the split's inside part.

use super::costs;
use crate::event_table::EventTable;
use crate::switch;
use instrument_profile::CountedReference;
use std::cell::UnsafeCell;
use std::sync::atomic::{
    AtomicU32, AtomicU64, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};

/// One finished estimate, for the profile.
#[derive(Clone, Copy, Default)]
pub struct Estimate {
    pub id: u32,
    /// Timed minus counted per execution as the windows measured it (scaled ticks, may be
    /// negative), with its standard error; and weighed with the calibration (`weighed`).
    pub measured: i64,
    pub difference: i64,
    pub standard_error: u64,
    /// The counted pair's cost (measured against tally windows, else the calibrated one), and
    /// Δi = difference + counted.
    pub counted: u64,
    pub timed: u64,
    pub pairs: u32,
    pub window: u32,
    /// Counted minus tally per execution as the windows measured it (scaled ticks), its
    /// standard error, and the pairs of windows (0: none measured).
    pub counted_measured: i64,
    pub counted_error: u64,
    pub counted_pairs: u32,
    /// The standard error of the cost compensation uses from this estimate on: the event's
    /// estimates pooled, weighed with the calibration.
    pub used_standard_error: u64,
    /// Of it, the counted pair's part: what every call counted through the probe is charged
    /// from this estimate on (scaled), uncertain by that much (0: the calibration's cost).
    pub used_counted: u64,
    pub used_counted_error: u64,
    /// An inline count minus a counted probe call per execution as the windows measured it
    /// (scaled ticks, may be negative), its standard error, and the pairs of windows (0: none
    /// measured: the event's code cannot count inline, or the run does not).
    pub inline_measured: i64,
    pub inline_error: u64,
    pub inline_pairs: u32,
    /// What one more inline count cost per execution as double windows measured it against
    /// detour ones (scaled ticks, may be negative), its standard error, and the pairs of
    /// windows (0: none measured).
    pub shadow_measured: i64,
    pub shadow_error: u64,
    pub double_pairs: u32,
    /// What an inline count cost per call over a bare count as inline windows measured it
    /// against bare ones (scaled ticks, may be negative), its standard error, and the pairs of
    /// windows (0: none measured).
    pub first_measured: i64,
    pub first_error: u64,
    pub first_pairs: u32,
    /// A counted probe call minus a bare count per execution as the windows measured it (scaled
    /// ticks), its standard error, and the pairs of bare windows (0: none measured): a callpath
    /// leaf's or a flat parent's, whose bare windows run without inline ones
    /// (`model::Reference::Bare`).
    pub over_bare_measured: i64,
    pub over_bare_error: u64,
    pub over_bare_pairs: u32,
    /// From the split windows (`split`): the event's own time per execution with its entries
    /// fenced, less the fenced pair's calibrated inside part, and the part of the timed pair
    /// inside its interval (scaled ticks); the fenced windows (0: none measured).
    pub own: u64,
    pub inside: u64,
    pub fenced_windows: u32,
    /// A leaf's pathed pair in place (scaled ticks, `Window::Pathed`: its pathed windows over its
    /// counted ones, plus its counted cost), and the pairs of windows (0: none measured).
    pub pathed: u64,
    pub pathed_pairs: u32,
    /// What those pathed windows measured over the counted ones per execution (scaled ticks, its
    /// misses taken out, may be negative) and its standard error: what later estimations pool.
    pub pathed_measured: i64,
    pub pathed_error: u64,
    /// The clock when it was published (`record`), and the phase indicator its publication
    /// pooled and kept its costs at (phase.rs): later poolings scale them from it (`in_phase`).
    pub at: u64,
    pub calibration: u64,
    /// The mode the event went on in after it (`settled_mode` for a throttled event).
    pub mode: u8,
    /// What `counted` was measured against (`model::Reference::source`), and what the counted
    /// cost compensation uses from this estimate on was: the event's measurements pooled.
    pub reference: CountedReference,
    pub used_reference: CountedReference,
}

const MAX_ESTIMATES: usize = 4096;

struct Estimates([UnsafeCell<Estimate>; MAX_ESTIMATES]);
// SAFETY: a slot is written once, by the one thread that owns the estimation (TARGET's CAS
// makes it the only writer) or by `finish` when no thread measures, before `COUNT` publishes it
// (its Release store; readers load it with Acquire); readers read only published slots.
unsafe impl Sync for Estimates {}

static ESTIMATES: Estimates = Estimates([const { UnsafeCell::new(Estimate::zero()) }; MAX_ESTIMATES]);

static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Each event's estimates chained in the order they were published, so that an event's are
/// read without scanning everyone's: every publication reads its event's estimates several
/// times (`pooling` and the means below), and once the list holds thousands (a long run
/// re-estimates its throttled events every period), each scan of all of them copied up to
/// 0.6 MB inside a probe, at a window boundary, in time that nothing compensates.
///
/// Per slot, one plus the slot of the same event's next estimate (0: none yet); per event
/// (a table mapped by `start`, none without it: estimates are then found by a scan), one plus
/// its first slot in the high half and one plus its last in the low half (0: none).
static NEXT: [AtomicU32; MAX_ESTIMATES] = [const { AtomicU32::new(0) }; MAX_ESTIMATES];
static CHAINS: EventTable<AtomicU64> = EventTable::new();

/// Maps the per-event chain table (start-up, when events are estimated).
pub(super) fn start() {
    CHAINS.map();
}

/// Publishes an estimate (the first MAX_ESTIMATES of the run are kept).
///
/// # Safety
/// The calling thread is the estimates' only writer: it owns the estimation, or no thread
/// measures any more (see `Estimates`).
pub(super) unsafe fn record(estimate: Estimate) {
    let estimate = Estimate { at: crate::clock::now(), ..estimate };
    let n = COUNT.load(Relaxed);
    if n < MAX_ESTIMATES {
        // SAFETY: slot n (below MAX_ESTIMATES, checked) is not published yet (COUNT is n), and this
        // thread is the estimates' only writer (the contract).
        unsafe { *ESTIMATES.0[n].get() = estimate };
        if let Some(entry) = CHAINS.get(estimate.id) {
            // The chain is written before COUNT publishes the slot; a reader stops at a link to a
            // slot it does not see published yet.
            let links = entry.load(Relaxed);
            let (first, last) = (links >> 32, links & u64::from(u32::MAX));
            if last != 0 {
                NEXT[last as usize - 1].store(n as u32 + 1, Relaxed);
            }
            let first = if first == 0 { n as u64 + 1 } else { first };
            entry.store(first << 32 | (n as u64 + 1), Relaxed);
        }
        COUNT.store(n + 1, Release);
    }
}

impl Estimate {
    const fn zero() -> Estimate {
        Estimate {
            reference: CountedReference::Calibration,
            used_reference: CountedReference::Calibration,
            id: 0,
            measured: 0,
            difference: 0,
            standard_error: 0,
            counted: 0,
            timed: 0,
            pairs: 0,
            window: 0,
            counted_measured: 0,
            counted_error: 0,
            counted_pairs: 0,
            used_standard_error: 0,
            used_counted: 0,
            used_counted_error: 0,
            inline_measured: 0,
            inline_error: 0,
            inline_pairs: 0,
            shadow_measured: 0,
            shadow_error: 0,
            double_pairs: 0,
            first_measured: 0,
            first_error: 0,
            first_pairs: 0,
            over_bare_measured: 0,
            over_bare_error: 0,
            over_bare_pairs: 0,
            own: 0,
            inside: 0,
            fenced_windows: 0,
            pathed: 0,
            pathed_pairs: 0,
            pathed_measured: 0,
            pathed_error: 0,
            at: 0,
            calibration: 0,
            mode: 0,
        }
    }
}

/// The mean of event `id`'s inline-minus-counted measurements (scaled ticks), one per
/// estimation that made one, and its standard error, if any estimation made one: their
/// random-effects mean (`pool_inline_with`). Not pooled as the pair costs are (`pooling`,
/// which follows the latest): what the inline count costs over the call moves in phases of the
/// machine as no pair cost does (next to randlc, estimations a few milliseconds apart measured
/// either about -0.1 ns or +1.1 ns, in runs of either, whichever mode the event was in), and
/// the mode that costs less over the run is the one whose mean is lower.
pub fn inline_mean(id: u32) -> Option<(f64, f64)> {
    pool_inline_with(id, None)
}

/// What a counted call of event `id` cost over the run (scaled), for the profile's overhead: what
/// compensation charged it from each estimate on (the event's estimates pooled), each weighed by
/// the time it held (until the next estimate, the last until now), else the cost compensation
/// uses now. The latest pooled cost alone is right for the calls to come and not for the total:
/// next to NPB's randlc, whose counted call costs about 0.05 to 0.1 ns, the last estimates of a
/// run moved it between 0.03 and 0.32 ns where the mean of the run's estimates was 0.04 to 0.14.
/// Each estimation's own measurement, held so, took one noisy estimation for its whole time:
/// 7.9 ns ±8 among a dozen of 0.00 to 0.08 made the run's 0.99 ns a call, the overhead figure
/// twice the run's slowdown.
pub fn run_counted_cost(id: u32) -> u64 {
    held(estimates_of(id), crate::clock::now(), |e| Some(e.used_counted as f64))
        .map_or_else(|| costs(id).1, |mean| mean.round() as u64)
}

/// The share of its throttled time event `id` spent counted inline rather than through the
/// probe, from its first estimate on (each estimate's mode held until the next, the last until
/// now); None where it was never throttled after an estimate. Its untimed calls cost a mean of
/// the two modes' costs in that proportion: the mode it ends in may be one only its last,
/// noisiest estimate chose (600 M calls of randlc counted through the probe were charged as
/// inline counts, 5.6 % of a run 0.4 % slower than its plain copy).
pub fn inline_share(id: u32) -> Option<f64> {
    held(estimates_of(id), crate::clock::now(), counted_inline)
}

/// Whether the event counted inline after estimate `e` (1) or through the probe (0); None where
/// it was not throttled.
fn counted_inline(e: &Estimate) -> Option<f64> {
    switch::settled_counted(e.mode).then_some(f64::from(u8::from(e.mode == switch::INLINE)))
}

/// The mean of `value` over estimates in the order they were published, each weighed by the
/// ticks until the next (the last until `now`); estimates without a value, and their time, left
/// out; None without any.
fn held(
    estimates: impl Iterator<Item = Estimate>,
    now: u64,
    value: impl Fn(&Estimate) -> Option<f64>,
) -> Option<f64> {
    let mut estimates = estimates.peekable();
    let (mut sum, mut ticks) = (0.0, 0.0);
    while let Some(e) = estimates.next() {
        let until = estimates.peek().map_or(now, |next| next.at);
        let Some(v) = value(&e) else { continue };
        let held = until.saturating_sub(e.at).max(1) as f64;
        (sum, ticks) = (sum + held * v, ticks + held);
    }
    (ticks > 0.0).then(|| sum / ticks)
}

/// The mean of event `id`'s earlier inline-minus-counted measurements and this one (if this
/// estimation made one), with its standard error, by random effects (`pooling::random_effects`:
/// the spread between estimations beyond their own errors counts in every one's weight); None
/// when none was ever made.
pub(super) fn pool_inline_with(id: u32, this: Option<(f64, f64)>) -> Option<(f64, f64)> {
    let earlier = estimates_of(id)
        .filter(|e| e.inline_pairs != 0)
        .map(|e| (e.inline_measured as f64, e.inline_error as f64));
    crate::pooling::random_effects(earlier.chain(this))
}

/// The event's earlier counted-minus-tally measurements and this one (if this estimation made
/// one) pooled in the phase `now`, as `pool_with`; None when none was ever made. An estimation
/// whose tally windows were all interrupted (windows grown long against how often the caller
/// returns) keeps what earlier ones measured: next to cache misses that is 35 ns a call, where
/// the calibration, blind to misses, says 5.
pub(super) fn pool_counted_with(id: u32, this: Option<(f64, f64)>, now: u64) -> Option<(f64, f64)> {
    let earlier = estimates_of(id)
        .filter(|e| e.counted_pairs != 0)
        .map(move |e| in_phase(&e, now, (e.counted_measured as f64, e.counted_error as f64)));
    crate::pooling::pool(earlier.chain(this))
}

/// The event's earlier counted-minus-bare measurements and this one (if this estimation made
/// one) pooled in the phase `now`, as `pool_counted_with`; None when none was ever made.
pub(super) fn pool_over_bare_with(id: u32, this: Option<(f64, f64)>, now: u64) -> Option<(f64, f64)> {
    let earlier = estimates_of(id)
        .filter(|e| e.over_bare_pairs != 0)
        .map(move |e| in_phase(&e, now, (e.over_bare_measured as f64, e.over_bare_error as f64)));
    crate::pooling::pool(earlier.chain(this))
}

/// The event's earlier pathed-minus-counted measurements and this one (if this estimation made
/// one) pooled in the phase `now`, as `pool_counted_with`; None when none was ever made. One
/// estimation's pathed windows are a third of a group of its pairs (eight to ten): on Lua's
/// compensated callpath run, throttled, the only leaf with pathed windows (`lua_settop`) put its
/// pathed pair at 11.7 to 36.8 ns from process to process with the latest estimation's alone,
/// and every callpath parent's pathed pair is scaled by it.
pub(super) fn pool_pathed_with(id: u32, this: Option<(f64, f64)>, now: u64) -> Option<(f64, f64)> {
    let earlier = estimates_of(id)
        .filter(|e| e.pathed_pairs != 0)
        .map(move |e| in_phase(&e, now, (e.pathed_measured as f64, e.pathed_error as f64)));
    crate::pooling::pool(earlier.chain(this))
}

/// An earlier estimate's measurement (value, standard error) as it would have come out at the
/// calibration `now`: scaled as the calibration moved since it was made, the proportional model
/// by which the cost compensation uses follows the phases (phase.rs). Pooled as measured, the
/// estimates of different phases mixed, and the pool was then taken for a measurement at the
/// calibration of its last: the ground truth's block and in_chain contexts run in two phases
/// here (in place 65 and 95 ns a call, the calibration with them), and a process whose early
/// estimates were of the cheap phase and its last of the dear one removed 16 % too little.
fn in_phase(e: &Estimate, now: u64, (value, error): (f64, f64)) -> (f64, f64) {
    let ratio = if e.calibration == 0 { 1.0 } else { now as f64 / e.calibration as f64 };
    (value * ratio, error * ratio)
}

/// The event's earlier estimates, each as it would have come out in the phase `now`
/// (`in_phase`), and this one (`mean`, `se`) pooled (`pooling::pool`): the cost and its standard
/// error (scaled ticks).
pub(super) fn pool_with(id: u32, mean: f64, se: f64, now: u64) -> (f64, f64) {
    let earlier =
        estimates_of(id).map(move |e| in_phase(&e, now, (e.measured as f64, e.standard_error as f64)));
    crate::pooling::pool(earlier.chain(std::iter::once((mean, se)))).unwrap_or((mean, se))
}

/// The standard error of the in-place cost compensation uses for event `id` and its counted
/// pair's part (scaled ticks), for the profile: its latest estimate's.
pub fn used_standard_errors(id: u32) -> Option<(u64, u64)> {
    estimates_of(id).last().map(|e| (e.used_standard_error, e.used_counted_error))
}

/// What the counted cost compensation uses for event `id` was measured against, for the
/// profile: its latest estimate's pooled reference.
pub fn used_reference(id: u32) -> Option<CountedReference> {
    estimates_of(id).last().map(|e| e.used_reference)
}

/// The inside part compensation uses for event `id`: the mean of what its estimations' split
/// windows measured, this one's (`this`) included, each in the phase `now`; None when none did.
pub(super) fn pool_inside_with(id: u32, this: Option<u64>, now: u64) -> Option<u64> {
    let earlier = estimates_of(id)
        .filter(|e| e.fenced_windows != 0)
        .map(move |e| in_phase(&e, now, (e.inside as f64, 0.0)).0.round() as u64);
    let (n, sum) = earlier.chain(this).fold((0u64, 0u128), |(n, sum), i| (n + 1, sum + u128::from(i)));
    (n != 0).then(|| (sum / u128::from(n)) as u64)
}

/// The finished estimates.
pub fn estimates() -> Vec<Estimate> {
    published().collect()
}

/// The finished estimates in the order they were published.
pub(super) fn published() -> impl Iterator<Item = Estimate> + Clone {
    let n = COUNT.load(Acquire).min(MAX_ESTIMATES);
    // SAFETY: slots below COUNT were written before its Release store (loaded with Acquire) and
    // are not written again (see `Estimates`).
    (0..n).map(|i| unsafe { *ESTIMATES.0[i].get() })
}

/// Event `id`'s finished estimates, oldest first: along its chain, else (no chain table) by a
/// scan of all.
pub(super) fn estimates_of(id: u32) -> impl Iterator<Item = Estimate> + Clone {
    let count = COUNT.load(Acquire).min(MAX_ESTIMATES);
    let chained = CHAINS.get(id).map(|entry| Chained { next: (entry.load(Relaxed) >> 32) as usize, count });
    let scanned = chained.is_none().then(|| published().filter(move |e| e.id == id));
    chained.into_iter().flatten().chain(scanned.into_iter().flatten())
}

/// One event's published estimates along its chain: `next` is one plus the next slot (0: the
/// end), `count` the slots published when the walk began.
#[derive(Clone)]
struct Chained {
    next: usize,
    count: usize,
}

impl Iterator for Chained {
    type Item = Estimate;

    fn next(&mut self) -> Option<Estimate> {
        let slot = self.next.checked_sub(1).filter(|&slot| slot < self.count)?;
        // SAFETY: the slot is below COUNT as loaded (Acquire) when the walk began: written before
        // its Release store and not written again (see `Estimates`); so was the link to it.
        let estimate = unsafe { *ESTIMATES.0[slot].get() };
        self.next = NEXT[slot].load(Relaxed) as usize;
        Some(estimate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_chain_holds_its_estimates_in_order_as_a_scan_finds_them() {
        start();
        // Ids of this test only.
        let (a, b) = (9001, 9002);
        for (id, counted) in [(a, 1), (b, 2), (a, 3), (a, 4), (b, 5)] {
            // SAFETY: no other unit test publishes estimates, so this thread is the only writer.
            unsafe { record(Estimate { id, counted, ..Estimate::zero() }) };
        }
        let counts = |id: u32| estimates_of(id).map(|e| e.counted).collect::<Vec<_>>();
        let scanned = |id: u32| published().filter(|e| e.id == id).map(|e| e.counted).collect::<Vec<_>>();
        assert_eq!(counts(a), [1, 3, 4]);
        assert_eq!(counts(b), [2, 5]);
        assert_eq!((counts(a), counts(b)), (scanned(a), scanned(b)), "as the scan finds them");
        assert_eq!(counts(9003), Vec::<u64>::new(), "none published");
    }

    #[test]
    fn an_earlier_estimate_is_pooled_as_it_would_have_come_out_in_the_phase_of_now() {
        let measured_at = |calibration: u64| Estimate { calibration, ..Estimate::zero() };
        assert_eq!(in_phase(&measured_at(100), 150, (50.0, 4.0)), (75.0, 6.0), "a dearer phase now");
        assert_eq!(in_phase(&measured_at(200), 100, (50.0, 4.0)), (25.0, 2.0), "a cheaper one");
        assert_eq!(in_phase(&measured_at(0), 150, (50.0, 4.0)), (50.0, 4.0), "none known: as measured");
    }

    #[test]
    fn the_run_counted_cost_weighs_each_estimate_by_the_time_it_held() {
        let at = |at: u64, counted: u64| Estimate { at, used_counted: counted, ..Estimate::zero() };
        let counted = |list: &[Estimate]| held(list.iter().copied(), 100, |e| Some(e.used_counted as f64));
        assert_eq!(counted(&[]), None);
        assert_eq!(counted(&[at(10, 7)]), Some(7.0));
        // 10 held for 90 ticks, 40 for 10: a late outlier moves the run's cost little.
        assert_eq!(counted(&[at(0, 10), at(90, 40)]), Some(13.0));
        assert_eq!(counted(&[at(0, 10), at(50, 20)]), Some(15.0));
    }

    #[test]
    fn the_inline_share_is_the_time_a_throttled_event_spent_counting_inline() {
        let at = |at: u64, mode: u8| Estimate { at, mode, ..Estimate::zero() };
        let share = |list: &[Estimate]| held(list.iter().copied(), 100, counted_inline);
        // Counted through the probe for 95 ticks, the last estimate's flip to inline for 5.
        assert_eq!(share(&[at(0, switch::COUNTED), at(95, switch::INLINE)]), Some(0.05));
        // Measured again between (not throttled): that time is neither mode's.
        assert_eq!(
            share(&[at(0, switch::INLINE), at(40, switch::MEASURED), at(80, switch::COUNTED)]),
            Some(2.0 / 3.0)
        );
        assert_eq!(share(&[at(0, switch::MEASURED)]), None);
    }

    #[test]
    fn the_inline_difference_is_known_by_its_spread_as_well_as_its_errors() {
        // In ns, pooled as the runtime holds them (scaled ticks: thousands per ns).
        let mean = |items: &[(f64, f64)]| {
            let (mean, se) =
                crate::pooling::random_effects(items.iter().map(|&(m, se)| (m * 1e3, se * 1e3))).unwrap();
            (mean / 1e3, se / 1e3)
        };
        let (one, se) = mean(&[(1.1, 0.02)]);
        assert!((one - 1.1).abs() < 1e-9 && (se - 0.02).abs() < 1e-9, "one: its own error");
        // Estimations in two phases (randlc): the spread, not their small errors, says how well
        // the mean is known.
        let (two, se) = mean(&[(-0.1, 0.02), (1.1, 0.02)]);
        assert!((two - 0.5).abs() < 1e-6 && (se - 0.6).abs() < 0.01, "{two} {se}");
        let (sixteen, se) = mean(&[(-0.1, 0.02), (1.1, 0.02)].repeat(8));
        assert!(sixteen > 2.0 * se, "sixteen of them make it clear: {sixteen} {se}");
        // Agreeing values with large errors (a noisy routine): their errors say it.
        let (_, se) = mean(&[(3.0, 8.0), (3.0, 8.0)]);
        assert!((se - 8.0 / 2f64.sqrt()).abs() < 1e-9, "{se}");
    }
}
