//! Per-event probe costs measured where the probes run, while the program runs.
//!
//! One constant per probe kind cannot be right: next to a dependency chain a timed probe pair
//! costs a quarter of what a tight loop says, next to cache misses several times more. So for
//! every event that becomes hot (`HOT` calls on a thread), the runtime alternates windows of
//! its executions in which it is timed and in which it is only counted (the throttled path),
//! reading the clock only at the window boundaries. Inside a window the probes take exactly
//! their usual paths: a window ends when the event's timed (or counted) count reaches `END`,
//! one comparison the usual paths make anyway, so what is measured is what the usual probes
//! cost. Drift cancels in each pair of windows (ABBA order: T C C T T C ...), and the
//! difference of the windows' durations per execution is what timing the event costs in
//! place, in the program's real context, over what counting it costs there. Each group of four
//! windows starts after a random spacer of counted executions (`defer_start`, `defer_group`), so
//! that the program's own structure (a caller's work every P calls) falls in each kind of window
//! alike rather than always in the same ones.
//!
//! What counting itself costs in place cannot be seen whole by any run-time comparison (it would
//! need a copy of the code without probes). Tally windows (tally.rs) measure the counted path
//! against a ten-instruction path to the same count; where those are interrupted (a caller
//! that returns after a few calls), the counted pair costs its calibration
//! (`model::counted_calibrated`). A slack model once stood there, which took a timed
//! difference below its calibration for idle issue slots in which the counted pair hid; the
//! ground truth and NPB BT did not bear it out (model.rs).
//!
//! Without compensation, only events being throttled are estimated, from the moment they are
//! throttled: their calls are only counted from then on anyway, so the windows cost the profile
//! nothing, and their costs make the profile's overhead figure honest (a counted call next to a
//! dependency chain costs nothing, not the calibrated counted cost).
//!
//! Only one event is estimated at a time, by one thread (the first to offer a hot event when
//! none is estimated). Every window runs from an entry of the event to an entry, so that each
//! holds as many gaps between executions as executions (`Deferred`): a counted window ends at
//! a counted entry, which becomes the first execution of the next window (timed, if that one
//! is); a timed window has its executions at the timed exit that leaves no activation of the
//! event open on this thread, and ends at the next entry, which is counted. For a recursive
//! event that exit is the first at or after the window's count that closes the activations the
//! window opened (its counted ancestors have no exits); one offered with timed activations open
//! starts its windows once they have closed (`Deferred::Await`). Estimates go to a table
//! indexed by event id that compensation reads at every exit.
//!
//! Events that become hot together wait for each other in a queue, counted while they wait
//! (`offer_hot`). Timing costs are not additive: next to timed siblings, an event's timed pair
//! costs less than its share of what timing all of them costs (each exit's `rdtscp` waits for
//! the work in flight, which the next one would otherwise wait for). Measured one at a time with
//! the others timed, the differences of NPB BT's four leaf kernels added up to 1.4 ns a call
//! (4.5 %) less than timing all four costs over counting them, and PA-comp left main 4 to 5 %
//! above MO. With the waiting ones counted, the k-th event of a queue is measured with the
//! events before it timed and those after it counted, so the differences add up to the joint
//! one exactly (a telescoping sum: each term is the change of one event, from counted to timed,
//! in the state the term before it left): PA-comp went to within 1 % of MO. The sum telescopes
//! only while every term is measured in that state, which takes three things: events are
//! offered by their executions, timed and counted, so that those of one loop queue up at the
//! same call (`before_timed_charge`); an estimation keeps within its budget (`PAIRS_IN_BUDGET`);
//! and a waiting event waits as long as the estimations ahead of it, counted on the same path
//! as a counted window's executions (trampolines.rs). An event waits counted for at most half
//! its calls (`waited_out`). With callpaths a parent waits on the stack untimed, as its counted
//! windows keep it (`switch::PATHED`: counted, its children's paths kept), so that the same
//! telescoping holds there: each event's windows compare timing it with the state it waits in.
//! Without waiting (callpath profiles waited not at all while parents could not be estimated
//! there), a parent and its child each measured with the other timed came to 12 to 14 % less
//! than what timing both costs (ground truth, nested context: three routines each calling the
//! next; each alone within 4 %), against 2 to 5 % in flat profiles.
//!
//! What the telescoping leaves unmeasured is the state everything waits in: counted calls,
//! whose cost the tally and inline windows measure, and with callpaths the parents' pathed
//! pairs, which no window of a parent can measure against a counted call (that call would put
//! its children on paths that skip it). A leaf can: with callpaths its estimation has a group
//! of pathed windows (`Window::Pathed`), and its pathed pair in place (that group's difference
//! over its counted call, plus the counted call's cost) scales the calibration every pathed
//! pair is charged (`population::PATHED`). In the ground truth's nested context, forced into
//! each waiting state in one process (`scripts/gt-states`), the two parents' pathed pairs cost
//! 15.2 and 16.7 ns over their counted calls (about 23 ns in all), the leaf's pathed windows
//! measured 17 to 20 over its own, and the whole pair's calibration said 39.5 (it moved between
//! 20 and 68 ns from process to process): the final waiting state, whose cost is all that
//! compensation takes from the calibration, was that far off.
//!
//! A throttled routine whose code counts inline (late placement, x86-64) is also measured
//! counting inline against counting through the probe call (`Window::Inline`: its entry code
//! counts itself until the count the thread's `inline_end` names, whose call ends the window),
//! and settles in whichever costs less on the mean of its estimations (`settled_mode`); the
//! profile charges its untimed calls each mode's cost for the share of the time it held
//! (`untimed_cost`). A leaf routine's
//! inline windows, compensated or not, are also what its counted path's cost is measured
//! against where the inline count is the cheaper (`Reference`): what no window sees is then an
//! inline count (whose calls run the routine's own code where the pass gave its probes a copy,
//! `pass/src/probed_copy.rs`), not a probe call. With callpaths no inline count runs (it
//! reaches no frame, so its calls would have no node), but a leaf's bare windows do: their
//! calls are credited to their node as a tally window's executions are, and the leaf's counted
//! call is measured against the bare count, which sees the call into the runtime, the
//! trampoline's routing and the probed copy that a tally window does not (`Reference::Bare`).
//! Its counted windows there are shadow windows (`Window::Shadow`): the counted path also counts
//! each call down and leaves it pending as the bare count does, so that both kinds flush at the
//! same probes and carry the same stores, and their difference is the counted call over the
//! bare count's checks, with no calibration of the flush or of the bare count in it. A flat
//! parent (no inline windows either: its inline counts would wait for its child's probe to be
//! charged) has the same bare and shadow windows, its pending calls flushed by its children's
//! probes in both kinds alike (offers.rs, where `counts` is decided). Both
//! calibrations were short in place: a flush cost two to three times its calibration on Lua,
//! and the bare count's two stores about 5 ns next to the ground truth's branchy leaf, against
//! 1 to 2 calibrated (the leaves' counted calls came out 4 to 10 ns low).
//! The counted windows paired with inline, bare or tally ones keep their caller's cached
//! callpath step, as those paths do (`KEEP_STEP`). A routine that counts inline is also
//! measured counting inline twice over, a shadow of the count that changes nothing first
//! (`Window::Double`), against counting inline after the same detour from the count's way
//! (`Window::Detour`): what one more inline count costs where it runs; and counting inline
//! against counting barely (`Window::FirstInline`, `Window::FirstBare`), a flat bare window's
//! calls credited at its end only (`inline::end_bare`): what the first count costs over a bare
//! one. Compensation and the overhead figure charge every inline count the larger, pooled
//! (excess.rs).
//!
//! How a timed pair's cost divides between the event and its caller (what compensation takes
//! from each) is measured too, by windows whose entries fence their timestamps (`splits`).

mod bookkeeping;
mod challenges;
mod excess;
mod history;
mod model;
mod offers;
mod pending;
mod phase;
mod series;
mod split;

pub use history::{estimates, inline_mean, run_counted_cost, used_reference, used_standard_errors, Estimate};

pub use bookkeeping::ticks as bookkeeping_ticks;
pub use offers::{
    before_timed_charge, had_its_share, offer_throttled, reoffer, resume, waited_out, REESTIMATE_NS,
};
pub use phase::follow as follow_phase;

use crate::event_table::EventTable;
use crate::overhead::{self, SCALE, STANDARD};
use crate::thread::{Record, ThreadState};
use crate::{clock, switch};
use history::{
    pool_counted_with, pool_inline_with, pool_inside_with, pool_over_bare_with, pool_pathed_with, pool_with,
};
use model::{split, weighed_se, Reference};
use offers::{reestimate_ticks, start_pending};
use series::Series;
use split::{median, split_of};
use std::cell::UnsafeCell;
use std::sync::atomic::{
    AtomicPtr, AtomicU32, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

/// Executions on a thread (timed and counted) after which a measured event is offered for
/// estimation (and again at every power of four after: see `due`).
pub const HOT: u64 = 1 << 14;
/// The executions one estimation of a measured event may spend in its windows, as a share of the
/// event's calls so far (1/MEASURED_SHARE): half of them are counted, so estimating leaves at
/// most about one call in 48 of the run untimed (1/64 at each power of four). It is also how
/// long the one estimator is held while the events hot with it wait: at an eighth, SQLite's
/// sorter routines (600 000 calls each, hot together for one statement) waited behind each
/// other until the statement was over, and 11 to 21 % of its calls were of events never
/// estimated (issue 23, session 55).
const MEASURED_SHARE: u64 = 32;
/// The same share for a throttled event (`offer_throttled`, `offer_counted`), whose estimation
/// also settles how it is counted (`settled_mode_with`): shorter windows, preempted on a loaded
/// machine, made a throttled routine's inline count look dearer than its probe call and settle
/// counting through the probe (tests/inline_count.rs's thread tests, 2 runs in 3).
const THROTTLED_SHARE: u64 = 8;
/// The fewest executions in a window.
const MIN_WINDOW: u64 = 16;
/// The least budget of a throttled event's estimation: what one throttled after TAU's 10^5
/// calls has (`instrument_contract::throttle`), whatever the rule that throttled it. A rule
/// that throttles after 10^4 left an eighth of those to the first estimation, too short:
/// NPB IS's compensated main, throttling on, came out 5 % low (+0.6 % after 10^5); with this
/// floor 1.5 % low (compensated runs then kept 10^5 calls, until measured again on call-heavy
/// code: `throttle::DEFAULT`). Also the budget of every re-estimation of a throttled event
/// (`offer_counted`).
const MIN_THROTTLED_BUDGET: u64 = instrument_contract::throttle::TAU.calls / THROTTLED_SHARE;
/// Pairs of windows: at least, and at most.
const MIN_PAIRS: usize = 24;
const MAX_PAIRS: usize = 512;
/// How many estimations' budgets a queued event waits counted for at most (`waited_out`), if its
/// turn has not come: half the calls it had when queued.
const MAX_WAITS: u64 = MEASURED_SHARE / 2;
/// The pairs of windows the budget is to hold (sizing the windows): the least timed ones and the
/// tally ones that come with them, one group in three (`window_kind`). Sized for the timed pairs
/// alone, an estimation spent half its budget again, and an event of the same loop waiting
/// counted behind it (`waited_out`) was timed again for the last third of its windows: on the
/// ground truth's nested context, the first estimate of a parent then mixed its cost next to
/// a counted child (45 ns) with its cost next to a timed one (35 ns).
const PAIRS_IN_BUDGET: u64 = (MIN_PAIRS + MIN_PAIRS / 2) as u64;
/// A window lasts about this long (in ns), with 16 to MAX_WINDOW executions, within the budget.
const WINDOW_NS: f64 = 20_000.0;
const MAX_WINDOW: u64 = 1 << 16;
/// An estimation whose last window ended this long ago (ns) is given up by the next offer.
const STALE_NS: f64 = 20e6;
/// A throttled event's estimation that has run this long (ns) is ended by the next offer or
/// re-offer on its thread (`overdue`): half the re-estimation period, so that one begun in the
/// first half of a period has ended by the re-offer at its end.
const MAX_ESTIMATION_NS: f64 = (REESTIMATE_NS / 2) as f64;
/// The estimate is good enough when its standard error is under 1/50 of it, or under this
/// many ns per execution.
const GOOD_SE_NS: f64 = 0.05;
const NONE: u32 = u32::MAX;
/// Tally windows (tally.rs) exist where the trampolines have their path (x86-64).
const TALLY_WINDOWS: bool = cfg!(target_arch = "x86_64");
/// Tally windows ended by another probe, beyond one per pair of them measured, after which an
/// estimation opens no more of them (their caller keeps returning while they run).
const MAX_VOIDED: u32 = 4;
/// A recursive event's timed window, or the wait for its open activations before the first
/// window (`Deferred::Await`), ends at the exit that leaves none open; one that has run this
/// many windows' executions past its start without one gives the estimation up.
const MAX_OVERRUN: u64 = 64;
/// Pairs of counted and tally windows below which the counted pair's cost is the calibrated one.
const MIN_TALLY_PAIRS: usize = MIN_PAIRS / 3;

/// The timed or counted count of the event under estimation at which its window ends
/// (u64::MAX: no estimation under way). The usual probe paths compare with it.
static END: AtomicU64 = AtomicU64::new(u64::MAX);
/// What the trampolines' counted path (trampolines.rs) compares a counted entry's new count
/// with: END, or 0 in serialized mode (the fenced strategy, whose counted entries fence). An
/// entry that finds it 0 or equal to its count takes the full counted path
/// (`probes::enter_throttled`), which fences and ends windows; one global word, so that the
/// fast path reads one instead of two. With compensation on, the fast path also charges the
/// call's cost as `probes::counted_compensated` does, and leaves an event waiting in the queue
/// to the full path.
pub static COUNTED_GATE: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets END, and the counted path's gate with it.
fn set_end(end: u64) {
    END.store(end, Relaxed);
    open_gate();
}

/// Sets the counted path's gate from END and whether counted entries fence (also at start-up,
/// once compensation is decided).
pub fn open_gate() {
    let fenced = crate::compensate::strategy() == crate::compensate::Strategy::Fenced;
    let gate = if fenced { 0 } else { END.load(Relaxed) };
    COUNTED_GATE.store(gate, Relaxed);
}

/// Per event: the in-place cost of a timed pair (Δi) and of a counted pair, scaled ticks; 0 when
/// no estimate exists (compensation then uses the start-up calibration). And, while the event
/// waits counted in a queue (`offer_hot`), its counted count at which it is measured again
/// whether or not its turn came (0: not waiting).
#[repr(C)]
pub struct Cost {
    pub timed: AtomicU64,
    pub counted: AtomicU64,
    pub(crate) wait_until: AtomicU64,
    /// The part of the timed pair inside the event's interval as its split windows measured it
    /// (`split`), plus one; 0 where none did (compensation then splits by the calibration).
    pub inside: AtomicU64,
    /// The three costs above as the estimation measured them, and the calibration then: the ones
    /// above follow the calibration from these (`phase`).
    base_timed: AtomicU64,
    base_counted: AtomicU64,
    base_inside: AtomicU64,
    base_calibration: AtomicU64,
}

#[cfg(test)]
impl Cost {
    /// Sets every field: the three costs the probes read, and `junk` (plus 0 to 4) in the others,
    /// so that a test reading at a wrong offset or stride finds a value no field above has.
    pub(crate) fn fill_for_tests(&self, timed: u64, counted: u64, wait_until: u64, junk: u64) {
        self.timed.store(timed, Relaxed);
        self.counted.store(counted, Relaxed);
        self.wait_until.store(wait_until, Relaxed);
        for (k, field) in
            [&self.inside, &self.base_timed, &self.base_counted, &self.base_inside, &self.base_calibration]
                .into_iter()
                .enumerate()
        {
            field.store(junk + k as u64, Relaxed);
        }
    }
}

// SAFETY: a cost is atomics only, each valid when zeroed (no estimate).
unsafe impl crate::event_table::Zeroed for Cost {}

/// Event `id`'s entry of the cost table for unit tests that read it as the probes do: the table
/// mapped as `start` maps it, without switching estimation on. Entries nobody filled are zero:
/// no estimate.
#[cfg(test)]
pub(crate) fn cost_for_tests(id: u32) -> &'static Cost {
    assert!(TABLE.map(), "the cost table");
    cost_of(id).expect("an id below TABLE_LEN")
}

/// Event `id`'s entry of the table, if there is one.
fn cost_of(id: u32) -> Option<&'static Cost> {
    TABLE.get(id)
}

/// The per-event costs (TABLE_LEN entries), unmapped before `start`; read by the trampolines'
/// counted path too.
pub(crate) static TABLE: EventTable<Cost> = EventTable::new();
static ENABLED: AtomicU32 = AtomicU32::new(0);
/// Whether hot events that are measured are offered too (the `inplace` compensation strategy);
/// otherwise only events being throttled are (their calls are counted only from then on anyway,
/// so estimating them costs the profile nothing).
static HOT_OFFERS: AtomicU32 = AtomicU32::new(0);
/// The event under estimation (NONE: none), and the thread that keeps its windows.
static TARGET: AtomicU32 = AtomicU32::new(NONE);
static OWNER: AtomicPtr<ThreadState> = AtomicPtr::new(std::ptr::null_mut());

/// The event whose counted calls keep the step their caller's callpath node cached (NONE: every
/// counted call caches its own, as a timed call does: `Tree::step_counted`): the one under
/// estimation while its windows are a group of counted and tally windows, whose path steps
/// nowhere. Against timed windows a counted call replaces the step as a timed call does, so
/// that a sibling's next lookup misses alike in both and its cost stays in the sibling's own
/// difference; against the tally path, replacing it would put that sibling's miss into this
/// event's counted cost too, and compensation would remove it twice (BT.W's CA-comp at late
/// placement, 5.6 ns a call too much, the fifteenth session's note).
pub(crate) static KEEP_STEP: AtomicU32 = AtomicU32::new(NONE);

/// Whether a counted call of `id` keeps its caller's cached callpath step (`KEEP_STEP`).
#[inline(always)]
pub fn keeps_step(id: u32) -> bool {
    KEEP_STEP.load(Relaxed) == id
}

/// The leaf under estimation whose windows include pathed ones (`Window::Pathed`), NONE when
/// none is: its pathed calls are not a parent's, whose estimate's untimed part is the pathed
/// pair (`compensate::pathed_cost`).
pub(crate) static PATHED_LEAF: AtomicU32 = AtomicU32::new(NONE);

/// Whether `id` is a leaf whose pathed windows run (`PATHED_LEAF`).
pub fn pathed_leaf(id: u32) -> bool {
    PATHED_LEAF.load(Relaxed) == id
}

/// The last event given up (its recursion outran `MAX_OVERRUN`): not offered again.
static GIVEN_UP: AtomicU64 = AtomicU64::new(0);

/// The windows of the estimation under way, touched only by the owner thread.
struct Windows {
    id: u32,
    kind: usize,
    /// Executions per window, at most `largest`; executions the windows may spend, and spent.
    window: u64,
    largest: u64,
    budget: u64,
    spent: u64,
    /// Executions in timed windows, and the callpath cache misses of the event's entries among
    /// them (`note_miss`).
    timed_spent: u64,
    /// Executions in pathed windows (their misses: `PATHED_MISSES`).
    pathed_spent: u64,
    /// `COUNTED_MISSES` when the current window began.
    counted_misses_at: u64,
    /// Windows finished; window n is of the kind `window_kind` says (`kind_of`).
    done: u32,
    /// Whether this estimation still opens tally windows (tally.rs): not once `MAX_VOIDED` of
    /// them more than it measured pairs of were interrupted.
    tallies: bool,
    voided: u32,
    /// Whether this estimation opens inline windows: the event is throttled and its code counts
    /// inline (`registry::counts_inline`) in a run that lets it.
    inlines: bool,
    /// Whether this estimation opens a group of windows that measure a count in place: with
    /// inline windows, double windows against detour ones (`Window::Double`) and a group of
    /// inline windows against bare ones (`Window::FirstBare`: what an inline count costs,
    /// excess.rs); without (a callpath leaf's or a flat parent's, compensation on), bare windows
    /// against counted ones (`Window::Bare`: what its counted call costs).
    counts: bool,
    /// Whether this estimation opens split windows (`Window::Fenced`, `splits`).
    fenced: bool,
    /// Whether the event called nothing measured or counted when it was offered: its inline
    /// windows then measure the counted path against the inline count alone (`Reference`).
    leaf: bool,
    /// Whether its counted windows keep it on the shadow stack (`switch::PATHED`): a callpath
    /// parent's, whose children's calls would otherwise go to paths that skip it.
    pathed: bool,
    /// Whether this estimation opens pathed windows (`Window::Pathed`): a leaf's, with callpaths.
    pathes: bool,
    /// The clock when the estimation began (`overdue`).
    began: u64,
    /// What this estimation had spent when each queued event armed its challenge
    /// (`give_up_idle`).
    challenges: challenges::Challenges,
    /// The current window's first clock reading and the event's count (timed or counted, as
    /// the window is) before its first execution.
    start: u64,
    start_count: u64,
    /// The last window of each kind's ticks per execution, scaled.
    timed_per: i64,
    counted_per: i64,
    tally_per: i64,
    inline_per: i64,
    bare_per: i64,
    double_per: i64,
    detour_per: i64,
    pathed_per: i64,
    /// Counted minus tally per execution, by pair of windows.
    tally_differences: Series<i64>,
    /// An inline count minus a counted call per execution, by pair of windows.
    inline_differences: Series<i64>,
    /// A bare count minus a counted call per execution, by pair of windows.
    bare_differences: Series<i64>,
    /// A double count minus a detoured one per execution (the shadow), by pair of windows.
    double_differences: Series<i64>,
    /// An inline count minus a bare one per execution, by pair of windows.
    first_differences: Series<i64>,
    /// A pathed call minus a counted one per execution, by pair of windows.
    pathed_differences: Series<i64>,
    /// The current tally window's executions, and the executions the last one tallied.
    tally_window: u64,
    tallied: u64,
    /// The event's mode once the estimation ends: measured, or counted for a throttled event.
    after: u8,
    /// A throttled event's mean exclusive time per timed call (untimed.rs), scaled.
    mean: u64,
    /// The event's exclusive ticks and its children's untimed estimates (scaled) at the start of
    /// the current timed window, and each timed window's exclusive time per execution (scaled):
    /// their median is a throttled event's estimate, which a preemption cannot inflate.
    excl_start: u64,
    children_start: u64,
    /// The event's counted children's calls at the start of the current timed window.
    counted_children_start: u32,
    /// The event's compensated exclusive ticks at the start of the current timed window.
    comp_excl_start: i64,
    /// Its inclusive ticks less its exclusive ones (raw, and compensated) at that start: its
    /// timed children's time.
    children_incl_start: (u64, i64),
    /// Each timed window's descendants' time per execution (scaled): its children's untimed
    /// estimates and its timed children's inclusive time (`untimed::UNDER`).
    under_means: Series<u64>,
    timed_means: Series<u64>,
    /// The same of each fenced window.
    fenced_means: Series<u64>,
    /// Each counted window's ticks per execution (scaled): the event's own time is not more.
    counted_means: Series<u64>,
    /// Timed minus counted per execution, by pair of windows (their number: the pairs).
    differences: Series<i64>,
    /// A boundary reached at a timed exit, waiting for the event's next entry (`defer`).
    deferred: Deferred,
    /// The state of the generator that draws the spacers (`defer_start`): xorshift, seeded from
    /// the clock when the estimation starts.
    random: u64,
}

/// A window boundary that waits for the event's next entry, so that every window runs from
/// an entry of the event to an entry: a window's duration holds, besides its executions, the
/// time between them (the caller's work between two calls), and a window that began or ended
/// at an exit would hold one such gap fewer or more than one bounded by entries. Counted windows
/// can end only at an entry (a counted call runs no exit probe): with timed windows ending at
/// exits, each ABBA cycle gave the counted windows two gaps more than the timed ones, and the
/// difference came out low by a gap per window's executions (on BT, -40 ns per call for
/// solve_line, whose calls a build_lhs_line separates, and -130 ns for build_lhs_line).
#[derive(Clone, Copy)]
enum Deferred {
    None,
    /// The next group of windows starts at the entry that ends a random spacer: the
    /// estimation's first, or the one after a voided tally window (`defer_start`), or any other
    /// (`defer_group`).
    Start,
    /// The timed window that reached its count at an exit, with the event's calls then, ends at
    /// the next entry.
    Close(u64),
    /// The estimation of an event offered with timed activations of it still open (a recursive
    /// one, offered at an inner exit, or throttled there) starts once they have closed: at the
    /// timed exit that leaves none open, where `timed_boundary` defers the first group of
    /// windows (`defer_start`). A counted window begun with them open would hold their timed
    /// exits.
    Await,
}

struct Owned(UnsafeCell<Windows>);
// SAFETY: only the thread that won TARGET's CAS (stored in OWNER) touches the windows, until it
// gives TARGET back (`release`); the CAS (Acquire) and that store (Release) order the hand-over.
// `finish` touches them at exit, when no thread is to measure any more.
unsafe impl Sync for Owned {}
static WINDOWS: Owned = Owned(UnsafeCell::new(IDLE_WINDOWS));

/// The windows of no estimation.
const IDLE_WINDOWS: Windows = Windows {
    id: NONE,
    kind: STANDARD,
    window: 0,
    largest: 0,
    budget: 0,
    timed_spent: 0,
    pathed_spent: 0,
    counted_misses_at: 0,
    spent: 0,
    done: 0,
    began: 0,
    challenges: challenges::Challenges::EMPTY,
    start: 0,
    start_count: 0,
    tallies: false,
    voided: 0,
    inlines: false,
    counts: false,
    fenced: false,
    leaf: false,
    pathed: false,
    pathes: false,
    timed_per: 0,
    counted_per: 0,
    tally_per: 0,
    inline_per: 0,
    bare_per: 0,
    double_per: 0,
    detour_per: 0,
    pathed_per: 0,
    tally_differences: Series::new(0),
    inline_differences: Series::new(0),
    bare_differences: Series::new(0),
    double_differences: Series::new(0),
    first_differences: Series::new(0),
    pathed_differences: Series::new(0),
    tally_window: 0,
    tallied: 0,
    after: switch::MEASURED,
    mean: 0,
    excl_start: 0,
    children_start: 0,
    counted_children_start: 0,
    comp_excl_start: 0,
    children_incl_start: (0, 0),
    under_means: Series::new(0),
    timed_means: Series::new(0),
    fenced_means: Series::new(0),
    counted_means: Series::new(0),
    differences: Series::new(0),
    deferred: Deferred::None,
    random: 0,
};

/// Maps the cost table and switches estimation on (start-up): for every hot event with the
/// `inplace` compensation strategy (`hot`), else for events being throttled only, whose costs
/// make the profile's overhead honest. Without the table nothing is estimated and calibration
/// serves every event.
pub fn start(hot: bool) {
    if TABLE.map() {
        crate::population::start();
        crate::rests::start();
        history::start();
        HOT_OFFERS.store(u32::from(hot), Relaxed);
        ENABLED.store(1, Relaxed);
    }
}

/// Whether events are estimated in this run.
#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Relaxed) != 0
}

/// Event `id`'s in-place costs (timed, counted), scaled; 0 where there is no estimate.
#[inline(always)]
pub fn costs(id: u32) -> (u64, u64) {
    cost_of(id).map_or((0, 0), |cost| (cost.timed.load(Relaxed), cost.counted.load(Relaxed)))
}

/// Event `id`'s record on `ts`, shared (with the debug-build bounds check of
/// `ThreadState::record`): this module only reads records, and the probes that call into it
/// hold references to the record they charge (`close_top`'s, `past_throttle_calls`'), which the
/// exclusive reference of `ThreadState::record` would alias.
///
/// # Safety
/// `id < ts.record_cap()`, and the thread writes none of its records while the result lives (the
/// probe that calls into this module writes them again only after it returns).
#[inline(always)]
unsafe fn record_of<'a>(ts: &ThreadState, id: u32) -> &'a Record {
    debug_assert!(id < ts.record_cap(), "record {id} past {}", ts.record_cap());
    // SAFETY: records[..record_cap()] is this thread's mapped array, unwritten while the result
    // lives (the contract).
    unsafe { &*ts.records().add(id as usize) }
}

/// Whether event `id` is under estimation (its mode is the estimation's until it ends).
pub fn estimating(id: u32) -> bool {
    TARGET.load(Relaxed) == id
}

/// Whether an event timed `calls` times on a thread is offered now: at HOT and every power of
/// four after, so that an estimate made in a slow phase of the machine (start-up is often one)
/// is soon measured again, while estimating costs a shrinking share of the event's calls.
#[inline(always)]
pub fn due(calls: u64) -> bool {
    const POWERS_OF_FOUR: u64 = 0x5555_5555_5555_5555;
    calls >= HOT && calls & (calls - 1) == 0 && calls & POWERS_OF_FOUR != 0
}

/// A flat bare window's calls, `calls` of them, credited to the record at its end
/// (`inline::end_bare`): the count the window ends at moves on by as many.
pub fn bare_credited(calls: u64) {
    if calls != 0 {
        set_end(END.load(Relaxed).saturating_add(calls));
    }
}

/// Whether a count just reached (an event's timed or counted calls) may end a window.
#[inline(always)]
pub fn at_end(count: u64) -> bool {
    count == END.load(Relaxed)
}

/// The callpath cache misses of the estimated event's entries on its owner thread
/// (`note_miss`), since the estimation started.
static TARGET_MISSES: AtomicU64 = AtomicU64::new(0);

/// The same of its entries in a leaf's pathed windows (`PATHED_LEAF`).
static PATHED_MISSES: AtomicU64 = AtomicU64::new(0);

/// The callpath cache misses of the estimated event's counted entries on its owner thread
/// (`note_miss`), since the estimation started.
static COUNTED_MISSES: AtomicU64 = AtomicU64::new(0);

/// Which entry's callpath step missed its node's cache (`note_miss`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Missed {
    /// A timed entry's.
    Timed,
    /// An untimed entry kept on the stack (`switch::PATHED`).
    Pathed,
    /// A counted entry's (`probes::stays_counted`).
    Counted,
}

/// A callpath step of an entry of event `id` on thread `ts` missed its node's cache, which
/// compensation charges apart (misses.rs): counted for the event under estimation on its owner
/// thread, whose timed windows (a timed entry), pathed ones (a leaf's pathed entry) or counted
/// ones (a counted entry: `close_window` leaves them out of the counted call) measured the misses
/// with its pairs. A parent's pathed entries step as its timed ones do: its difference holds no
/// miss.
pub fn note_miss(ts: &ThreadState, id: u32, missed: Missed) {
    if TARGET.load(Relaxed) != id || !std::ptr::eq(OWNER.load(Relaxed), ts) {
        return;
    }
    let count = match missed {
        Missed::Timed => &TARGET_MISSES,
        Missed::Pathed if pathed_leaf(id) => &PATHED_MISSES,
        Missed::Pathed => return,
        Missed::Counted => &COUNTED_MISSES,
    };
    count.store(count.load(Relaxed) + 1, Relaxed);
}

/// What a window's `misses` (of its counted entries, `note_miss`) are charged apart, in
/// all (scaled ticks). Runs on the owner thread.
fn counted_misses_charged(misses: u64) -> u64 {
    miss_charge().saturating_mul(misses)
}

/// A leaf's pathed pair in place (scaled), from its pathed windows (`Window::Pathed`): what they
/// measured over its counted call, pooled with what its earlier estimations' measured
/// (`pool_pathed_with`) and weighed with the calibrated difference, as timing's is, plus that
/// call's cost: as its tally windows measured it (`counted`, the pooled cost publish uses),
/// else its calibration. It goes to the run's scale of the pathed pair
/// (`population::PATHED`), weighed by the estimation's calls, which every pathed call without
/// a pathed estimate of its own and every callpath parent's estimate take their pathed pair
/// from. The calibration alone once stood for the counted call, since a single estimation's
/// tally windows were noisy (in the ground truth's nested context one put it at 0 and the next
/// at 32 ns where the calibration said 5); but with callpaths a counted call steps to its node,
/// which misses the caller's cache wherever the caller alternates children, and costs two to
/// five times its calibration there (the siblings context: 25 to 39 ns against 5.6 to 6), so
/// that the pathed pair came out as low (the scale 0.57 to 0.96) and every callpath parent kept
/// about 30 ns a call (Lua, SQLite). Returns it with this estimation's own measurement (mean and
/// standard error, for the history); None without enough pathed windows.
fn pathed_in_place(w: &mut Windows, counted: Option<u64>, now: u64) -> Option<(u64, (f64, f64))> {
    if w.pathed_differences.len() < MIN_TALLY_PAIRS {
        return None;
    }
    let (mean, se) = trimmed_of(w.pathed_differences.values());
    // Its misses are charged apart, as a parent's pathed steps' are.
    let this = (mean - misses_per_execution(PATHED_MISSES.load(Relaxed), w.pathed_spent) as f64, se);
    let (mean, se) = pool_pathed_with(w.id, Some(this), now)?;
    let (_, counted_calibrated, calibrated) = model::calibrated_untimed(w.kind)?;
    let prior = (calibrated - counted_calibrated) as f64;
    let over = model::weighed_toward(mean, se, prior, prior.abs());
    let base = counted.map_or(counted_calibrated as f64, |c| c as f64);
    let pathed = (base + over).max(0.0).round() as u64;
    crate::population::PATHED.add(w.id, w.budget, pathed, calibrated.max(0) as u64);
    crate::population::PATHED_LATEST.add(pathed, calibrated.max(0) as u64);
    Some((pathed, this))
}

/// What the misses of the event's timed executions are charged apart, per execution (scaled):
/// its pair cost as measured has them inside. Runs on the owner thread.
fn misses_charged(w: &Windows) -> u64 {
    misses_per_execution(TARGET_MISSES.load(Relaxed), w.timed_spent)
}

/// What `misses` among `spent` executions are charged apart, per execution (scaled). Runs on
/// the owner thread.
fn misses_per_execution(misses: u64, spent: u64) -> u64 {
    if spent == 0 {
        return 0;
    }
    (u128::from(miss_charge()) * u128::from(misses.min(spent)) / u128::from(spent)) as u64
}

/// What a miss is charged now on the owner thread (scaled; 0 without one or its tree). Runs on
/// the owner thread.
fn miss_charge() -> u64 {
    let owner = OWNER.load(Relaxed);
    if owner.is_null() {
        return 0;
    }
    // SAFETY: the owner is the calling thread (the estimation's only writer publishes), whose
    // state and tree live as long as it; the tree is read only.
    let Some(tree) = (unsafe { (*owner).tree() }) else { return 0 };
    tree.misses.charge()
}

/// The kinds of window.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Window {
    Counted,
    Timed,
    Tally,
    /// Counted inline by the event's own entry code (mode `INLINE`).
    Inline,
    /// Counted barely by the event's own entry code (mode `BARE`: a thread-local decrement,
    /// inline.rs): a callpath leaf's or a flat parent's, against which its counted call is
    /// measured (`Reference::Bare`).
    Bare,
    /// Timed with each entry's timestamp fenced (mode `FENCED`): a split window (`splits`).
    Fenced,
    /// Counted inline twice over (mode `DOUBLE`): a shadow of the inline count that changes
    /// nothing, then the count, after a detour from the inline count's way.
    Double,
    /// Counted inline after the same detour (mode `DETOUR`): what double windows are measured
    /// against, so that their difference is the shadow's alone.
    Detour,
    /// Counted inline (mode `INLINE`), against bare windows (`FirstBare`): a throttled routine's
    /// whose code counts inline.
    FirstInline,
    /// Counted barely (mode `BARE`), against inline windows (`FirstInline`): what the inline count
    /// costs over a test and two updates of the thread-local block, a lower bound of what
    /// compensation charges every inline count (excess.rs).
    FirstBare,
    /// Counted, and counted down and left pending as a bare window's calls are (`open_shadow`):
    /// the counted windows bare ones are measured against, which flush at the same probes, so
    /// that the flushes' cost cancels in their difference (inline.rs's `open_shadow`).
    Shadow,
    /// Kept on the shadow stack untimed (mode `PATHED`), a callpath profile's leaf: what the
    /// pathed pair costs over the counted one in place, which callpath parents' estimates take
    /// from their calibration otherwise (`pathes`).
    Pathed,
}

/// Window n: groups of four in ABBA order, counted first; with tally windows, every third group
/// pairs counted with tally windows instead of timed ones (C T T C C T T C C Y Y C ...): the
/// tally difference is a correction of a few nanoseconds where the timed one is tens, and an
/// estimation takes half as long again, not twice. With inline windows, a fourth group pairs
/// counted with inline windows (... C Y Y C C I I C), which choose how a throttled routine is
/// counted (`settled_mode`) and, where the inline count is the cheaper path, are what a leaf's
/// counted path is measured against (`Reference`); with count windows, a group after them pairs
/// detour windows with double ones (... E D D E: what one more inline count costs, excess.rs),
/// and the next inline windows with bare ones (... N R R N, `FirstInline` and `FirstBare`: what
/// the inline count costs over a bare one, excess.rs), or, without inline windows (a callpath
/// leaf's or a flat parent's; the group after the tally one), counted windows with bare ones
/// (... C B B C: its counted path); with pathed windows (a callpath leaf's), a
/// group pairs counted with pathed ones (... C P P C), what every pathed pair's calibration is
/// scaled by (`pathed_in_place`); with split windows, a last group pairs counted with fenced
/// ones (... C F F C).
fn window_kind(n: u32, tallies: bool, inlines: bool, counts: bool, fenced: bool, pathes: bool) -> Window {
    let firsts = inlines && counts;
    let groups = 3
        + u32::from(inlines)
        + u32::from(counts)
        + u32::from(firsts)
        + u32::from(pathes)
        + u32::from(fenced);
    let group = n / 4 % groups;
    let count_group = counts && group == 3 + u32::from(inlines);
    let first_group = firsts && group == 3 + u32::from(inlines) + u32::from(counts);
    match (n % 4, group) {
        (0 | 3, _) if first_group => Window::FirstInline,
        _ if first_group => Window::FirstBare,
        (0 | 3, _) if count_group && inlines => Window::Detour,
        (0 | 3, _) if count_group => Window::Shadow,
        (0 | 3, _) => Window::Counted,
        (_, 3) if inlines => Window::Inline,
        _ if count_group && inlines => Window::Double,
        _ if count_group => Window::Bare,
        (_, g) if pathes && g == 3 + u32::from(inlines) + u32::from(counts) + u32::from(firsts) => {
            Window::Pathed
        }
        (_, g) if fenced && g == groups - 1 => Window::Fenced,
        (_, 2) if tallies => Window::Tally,
        _ => Window::Timed,
    }
}

impl Windows {
    fn kind_of(&self, n: u32) -> Window {
        window_kind(n, self.tallies, self.inlines, self.counts, self.fenced, self.pathes)
    }

    /// The mode the event is left in when the estimation ends: a throttled one's settled mode
    /// (`release` asks `settled_mode` for it), `PATHED` for a throttled callpath parent, whose
    /// counted windows keep it on the stack (`switch::settled_for`); a measured one's measured.
    fn settles(&self) -> u8 {
        if self.after == switch::COUNTED && self.pathed {
            switch::PATHED
        } else {
            self.after
        }
    }

    /// The event's mode in counted windows (`pathed`).
    fn counted_mode(&self) -> u8 {
        if self.pathed {
            switch::PATHED
        } else {
            switch::COUNTED
        }
    }

    /// Whether window n times the event's executions (timed or fenced).
    fn timed(&self, n: u32) -> bool {
        matches!(self.kind_of(n), Window::Timed | Window::Fenced)
    }
}

/// A timed exit of an event brings its calls to `END` (close_top, with the stack marked busy,
/// `calls` and `active` its counts once charged): on the owner thread and for the event under
/// estimation, the timed window has its executions, and ends at the event's next entry
/// (`defer`), which is counted.
///
/// # Safety
/// `ts` is the calling thread's attached state, at a timed exit of `id` (below its
/// `record_cap`); the caller writes none of its records until this returns.
#[cold]
#[inline(never)]
pub unsafe fn timed_boundary(ts: &mut ThreadState, id: u32, calls: u64, active: u64) {
    if !is_owner(ts, id) {
        return;
    }
    // SAFETY: this thread owns the estimation (`is_owner` on its own state, see `Owned`).
    let w = unsafe { &mut *WINDOWS.0.get() };
    // SAFETY: `id < record_cap`, records left alone meanwhile (the contract).
    let record = unsafe { record_of(ts, id) };
    if active != 0 {
        // An inner exit of a recursive event: the window (or the start, `Deferred::Await`) waits
        // for the exit that leaves no activation of it open, unless that takes far longer than
        // a window (the recursion's outermost activation is most of the run, say). No exit
        // before the `active`-th from here can be that one, so only that one looks again: a
        // look at every exit would put this call into the timed window's executions.
        if calls.saturating_sub(w.start_count) > MAX_OVERRUN * w.window.max(1) {
            GIVEN_UP.store(u64::from(id) + 1, Relaxed);
            // SAFETY: this thread owns the estimation and leaves the windows alone from here.
            return unsafe { release(w.settles()) };
        }
        return set_end(calls + active);
    }
    if let Deferred::Await = w.deferred {
        return defer_start(w, record.counted);
    }
    if w.timed(w.done) {
        timed_window_mean(w, record, calls);
    }
    defer(w, Deferred::Close(calls), record.counted, id);
}

/// Makes the event's next entry on the owner thread a counted one at which the windows' next
/// boundary, `what`, happens (`counted_boundary`): the event is counted until then, and its
/// counted calls (now `counted`) end at that entry.
fn defer(w: &mut Windows, what: Deferred, counted: u64, id: u32) {
    w.deferred = what;
    switch::set(id, w.counted_mode());
    set_end(counted + 1);
}

/// Keeps the exclusive time per execution of the timed (or fenced) window ending with the event's
/// calls at `calls` (its record as charged), less its children's untimed estimates and their
/// probes' cost (`children_probes`): a throttled routine's untimed calls are not on the stack,
/// so their children's counted calls cost their caller, not them. A routine calling a counted
/// leaf once a call was estimated at 8 to 10 ns a call of which about 2 were its own, and its
/// caller kept 16 to 17 % of its time (`nested_throttle.c` with one leaf call, early
/// placement); 55 to 76 % without that cost, its loop and the counted calls' probes.
fn timed_window_mean(w: &mut Windows, record: &Record, calls: u64) {
    let executions = calls.saturating_sub(w.start_count).max(1);
    let excl = record.excl.saturating_sub(w.excl_start) << SCALE;
    let children = record.untimed_children.saturating_sub(w.children_start);
    let mean =
        excl.saturating_sub(children).saturating_sub(children_probes(w, record, executions)) / executions;
    match w.kind_of(w.done) {
        Window::Fenced => w.fenced_means.push(mean),
        _ => {
            w.timed_means.push(mean);
            w.under_means.push(under_mean(w, record, children, executions));
        }
    }
}

/// The event's timed children's inclusive ticks so far, raw and compensated: its inclusive
/// less its exclusive time.
fn children_incl(record: &Record) -> (u64, i64) {
    (record.incl.saturating_sub(record.excl), record.comp_incl - record.comp_excl)
}

/// What the descendants of the timed window ending now took per execution (scaled): their
/// untimed estimates (`children`, all of them in a flat profile, where its untimed children
/// are not on the stack) and its timed children's inclusive time, compensated when
/// compensation is on. For its untimed calls' inclusive time (`untimed::UNDER`).
fn under_mean(w: &Windows, record: &Record, children: u64, executions: u64) -> u64 {
    let (raw, compensated) = children_incl(record);
    let timed = if crate::compensate::enabled() {
        (compensated - w.children_incl_start.1).max(0) as u64
    } else {
        raw.saturating_sub(w.children_incl_start.0)
    };
    children.saturating_add(timed << SCALE) / executions
}

/// What the probes of the event's children left in its exclusive time over the timed window
/// ending now (`executions` of it, scaled ticks). With compensation, what compensation charged
/// its activations for them (their compensated exclusive time's shortfall, less the event's own
/// pairs' inside part, which the window's mean keeps): each counted child's counted pair, each
/// child kept on the stack untimed (a callpath parent's, `switch::PATHED`) its pathed pair and
/// the probes of its own untimed descendants, each timed child the part of its pair outside its
/// own interval. Those stay in the exclusive time of the frame below once the event's calls are
/// untimed. Charged the counted pair's calibration each instead, a throttled callpath parent
/// whose child was one too (`throttled_chain.c`: each of top and mid about a nanosecond of its
/// own) was estimated at 19 to 50 ns a call: its child's pathed pair over a counted one. Without
/// compensation, the counted children's calibrated counted pairs.
fn children_probes(w: &Windows, record: &Record, executions: u64) -> u64 {
    if crate::compensate::enabled() {
        let shortfall =
            record.excl.saturating_sub(w.excl_start) as i64 - (record.comp_excl - w.comp_excl_start);
        let own = crate::compensate::pair_cost(w.id, w.kind).1.saturating_mul(executions);
        return (shortfall.max(0) as u64).saturating_mul(1 << SCALE).saturating_sub(own);
    }
    let counted = u64::from(record.counted_children.saturating_sub(w.counted_children_start));
    counted.saturating_mul(crate::compensate::untimed_costs().counted[STANDARD])
}

/// A counted entry of an event brought its counted calls to `END` (enter_counted, after
/// counting it): on the owner thread and for the event under estimation, the window under way
/// ends here (a counted one, or a timed one whose executions ended at an exit, `defer`), or the
/// first one starts. Returns true when this entry is to be timed instead (the next window is
/// timed, or the estimation ended and the event is measured again): the caller then undoes its
/// count and pushes a frame, so that its exit finds it.
///
/// # Safety
/// `ts` is the calling thread's attached state, at a counted entry of `id` (below its
/// `record_cap`) that has counted it; the caller writes none of its records until this returns.
#[cold]
#[inline(never)]
pub unsafe fn counted_boundary(ts: &mut ThreadState, id: u32) -> bool {
    if !is_owner(ts, id) {
        return false;
    }
    let now = clock::now();
    // SAFETY: the contract, and this thread owns the estimation (`is_owner`).
    let timed = unsafe { boundary_at(ts, id, now) };
    bookkeeping::add(now, clock::now());
    timed
}

/// `counted_boundary`'s work on the owner thread, from the clock reading `now`.
///
/// # Safety
/// As `counted_boundary`'s, on the thread that owns the estimation.
unsafe fn boundary_at(ts: &mut ThreadState, id: u32, now: u64) -> bool {
    // SAFETY: this thread owns the estimation (`is_owner` on its own state, see `Owned`).
    let w = unsafe { &mut *WINDOWS.0.get() };
    if let Deferred::Await = w.deferred {
        // A throttled event's counted count met the timed one END waits on: no boundary.
        return false;
    }
    // A tally window's executions are counted first, so that the count below holds them.
    // SAFETY: this thread's state, at a counted entry of `id` with the stack marked busy.
    if unsafe { close_tally(ts, w) } && w.tallied < w.tally_window / 2 {
        // SAFETY: as above; the window's executions are counted.
        unsafe { void_tally(ts, w) };
        return false;
    }
    // SAFETY: `id < record_cap`, records left alone meanwhile (the contract).
    let record = unsafe { record_of(ts, id) };
    // The window that ends here: a counted one at this entry's count less this entry (which
    // belongs to the next window), a timed one at the calls it had reached, none at the start.
    let closing = match std::mem::replace(&mut w.deferred, Deferred::None) {
        Deferred::None => Some(record.counted - 1),
        Deferred::Close(calls) => Some(calls),
        Deferred::Start | Deferred::Await => None,
    };
    // SAFETY: `w` is the windows this thread owns; it leaves them alone once they are released.
    if closing.is_some_and(|count| unsafe { close_window(w, now, count) }) {
        // SAFETY: this thread's state, records left alone meanwhile (the contract).
        unsafe { start_pending(ts) };
        return true;
    }
    if closing.is_some() && w.done.is_multiple_of(4) {
        defer_group(w, record.counted);
        return false;
    }
    let next_timed = w.timed(w.done);
    let count = if next_timed { record.calls } else { record.counted - 1 };
    if next_timed {
        (w.excl_start, w.children_start) = (record.excl, record.untimed_children);
        (w.counted_children_start, w.comp_excl_start) = (record.counted_children, record.comp_excl);
        w.children_incl_start = children_incl(record);
    }
    // SAFETY: this thread's state at a counted entry, the stack marked busy (the contract).
    unsafe { begin(w, ts, count, id) };
    next_timed
}

/// Counts the executions of the tally window `ts` runs, if it runs one (the thread owns the
/// estimation `w` then), at what the switched-off pair costs each for compensation
/// (`tally_cost`); true when it ran one.
///
/// # Safety
/// `ts` is the calling thread's state with the stack marked busy, and `w` the windows it owns.
unsafe fn close_tally(ts: &mut ThreadState, w: &mut Windows) -> bool {
    if !crate::tally::open_on(ts) {
        return false;
    }
    // SAFETY: the contract; the event under estimation is below record_cap and TABLE_LEN.
    w.tallied = unsafe { crate::tally::close(ts, w.id, tally_cost(w), w.tally_window) };
    true
}

/// What a tallied execution is charged for compensation (scaled): the switched-off pair's cost,
/// which its path's is about.
fn tally_cost(w: &Windows) -> u64 {
    if crate::compensate::enabled() {
        crate::compensate::untimed_costs().off[w.kind]
    } else {
        0
    }
}

/// The exit of `id` at `sp` on `ts`, which runs a tally window: when it leaves the window's
/// trapped caller, the executions so far are credited to it and the window waits for the
/// event's next entry at that depth (`tally::caller_left`); the counted count the window ends
/// at moves on by as many, as they are counted now. False when the exit is not the caller's.
///
/// # Safety
/// `ts` is the calling thread's state, which runs a tally window (so it owns the estimation),
/// with the stack marked busy.
pub unsafe fn tally_caller_left(ts: &mut ThreadState, id: u32, sp: usize) -> bool {
    // SAFETY: this thread owns the estimation (the contract, see `Owned`).
    let w = unsafe { &*WINDOWS.0.get() };
    // SAFETY: the contract; the event under estimation is below record_cap and TABLE_LEN.
    match unsafe { crate::tally::caller_left(ts, w.id, id, sp, tally_cost(w)) } {
        Some(credited) => {
            set_end(END.load(Relaxed) + credited);
            true
        }
        None => false,
    }
}

/// Moves the start of the current window (a tally one, its caller just left) `ticks` later: time
/// its executions did not take (`tally::left`), which the exiting caller's own caller, whose
/// time holds it, is charged with compensation on.
///
/// # Safety
/// `ts` is the calling thread's state, which owns the estimation (it runs the tally window), in
/// the exit of a frame at depth 1 or more (below frame_cap), the stack marked busy.
pub unsafe fn tally_window_later(ts: &mut ThreadState, ticks: u64) {
    // SAFETY: this thread owns the estimation (the contract, see `Owned`).
    let w = unsafe { &mut *WINDOWS.0.get() };
    w.start += ticks;
    if crate::compensate::enabled() {
        let depth = ts.depth & !crate::probes::BUSY;
        // SAFETY: depth - 1 is a frame of the stack (the contract).
        unsafe { ts.frame(depth - 1) }.overhead += ticks << SCALE;
    }
}

/// The tally window `ts` runs was ended by another probe (tally.rs `interrupted`): its
/// executions are counted, the window is void, and the next group of windows starts at the
/// event's next entry; after `MAX_VOIDED` such ends more than the pairs of tally windows
/// measured, it opens no more tally windows (their caller returns too often).
///
/// # Safety
/// `ts` is the calling thread's state, which runs a tally window (so it owns the estimation),
/// with the stack marked busy.
pub unsafe fn tally_interrupted(ts: &mut ThreadState) {
    // SAFETY: this thread owns the estimation (the contract, see `Owned`).
    let w = unsafe { &mut *WINDOWS.0.get() };
    // SAFETY: the contract.
    unsafe {
        close_tally(ts, w);
        void_tally(ts, w);
    }
}

/// Voids the tally window just closed (its executions counted): one another probe ended
/// (`tally_interrupted`), or one that ended at a counted call of the event before half its
/// executions were tallied (`counted_boundary`: a call from another depth than the window's,
/// which the tally path does not take). Such a window holds one to a few executions where its
/// counted neighbours hold a whole window, and its time per execution is mostly where it
/// started and ended: SQLite's record compare, whose windows ended after 1 to 6 of 86
/// executions (its calls from two depths), measured its counted call 130 to 340 ns *below* the
/// tally path. The next group of windows (timed against counted) starts at the event's next
/// entry; after `MAX_VOIDED` such ends more than the pairs of tally windows measured, the
/// estimation opens no more tally windows (their caller returns too often).
///
/// # Safety
/// `ts` is the calling thread's state, which owns the estimation `w`, with the stack marked
/// busy; its tally window is closed.
unsafe fn void_tally(ts: &ThreadState, w: &mut Windows) {
    w.voided += 1;
    w.tallies &= w.voided < MAX_VOIDED + w.tally_differences.len() as u32;
    w.spent += w.tallied + 1;
    // The next group of windows (timed against counted) starts at the event's next entry: a
    // caller that returns after fewer executions than the tally group takes would otherwise void
    // the same window of it again and again.
    w.done = (w.done / 4 + 1) * 4;
    // SAFETY: the event under estimation is below record_cap (`offer` checked it).
    let counted = unsafe { record_of(ts, w.id) }.counted;
    defer_start(w, counted);
}

/// Makes a counted entry of the event start the next group of windows (`Deferred::Start`): the
/// one that ends a spacer of counted executions, of a length drawn uniformly below the group's
/// (four windows), and spent from the budget. Where the program's own structure falls among
/// a group's windows (a caller's return every P calls, with its work between two calls) then
/// does not depend on the windows' kinds: each such point is in any of the four windows with
/// the same chance. Started where the estimation was offered or a tally window was voided
/// (both at the same point of the caller's work every time), the windows had the same phases
/// in the caller's loop in every cycle of groups: on NPB BT at late placement, the first
/// estimates of the 5x5 block kernels (windows of 17 calls, 23 calls a line) came out at 0 to
/// 5 ns against 35 to 45 for the later ones, the inline windows measured the counted call 8
/// to 78 ns cheaper than an inline count (so it was charged nothing), and compensated main
/// kept 6 % of the plain run (issue 23's notes).
fn defer_start(w: &mut Windows, counted: u64) {
    let spacer = spacer(&mut w.random, 4 * w.window);
    w.spent += spacer;
    defer(w, Deferred::Start, counted + spacer, w.id);
}

/// Makes a counted entry of the event start the next group of windows after the group that
/// ended at its entry now counted `counted`: the one that ends a spacer of counted executions
/// uniform below one window, spent from the budget. Back to back, the groups of an estimation
/// sampled a program's periodic work at phases fixed by where the estimation started: on NPB BT
/// (class W, late placement; windows of 86 calls of binvcrhs, a few calls a cell) the
/// differences of adjacent windows flipped sign about every third pair by ±20 to ±120 ns a call,
/// where the count they measure costs a few, so whole estimations came out biased one way or the
/// other with small standard errors (issue 23's thirty-fifth note). The spacers' lengths add up
/// to a random walk of the groups' phases, so that over an estimation's groups every point of a
/// period falls in each window alike, whatever the period: the aliasing becomes variance the
/// standard errors see. A spacer below a group's length (`defer_start`'s) would spend half as
/// much of the budget again as the windows do; one below a window, an eighth.
fn defer_group(w: &mut Windows, counted: u64) {
    let spacer = spacer(&mut w.random, w.window);
    w.spent += spacer;
    defer(w, Deferred::Start, counted + spacer, w.id);
}

/// A spacer's length, uniform below `below` executions (nonzero), from the xorshift generator
/// `state` (nonzero), which it advances.
fn spacer(state: &mut u64, below: u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state % below
}

/// Ends the current window at `now` with the event's count at `count`; true when that ended
/// the estimation.
///
/// # Safety
/// `w` is the windows of the estimation the calling thread owns (`WINDOWS`); when this returns
/// true the estimation is released, and the caller touches `w` no more.
unsafe fn close_window(w: &mut Windows, now: u64, count: u64) -> bool {
    let executions = count.saturating_sub(w.start_count).max(1);
    let ticks = now.saturating_sub(w.start);
    let mut scaled = ticks << SCALE;
    if matches!(w.kind_of(w.done), Window::Counted | Window::Shadow) {
        // Its counted entries' misses are charged apart (`note_miss`).
        let misses = COUNTED_MISSES.load(Relaxed).saturating_sub(w.counted_misses_at);
        scaled = scaled.saturating_sub(counted_misses_charged(misses));
    }
    let per = (scaled / executions) as i64;
    // The first window sized from the mean call, which early calls (page faults, cold caches)
    // can make look long: windows shorter than half the aim grow.
    let ticks_per_ns = clock::ticks_per_ns_estimate().unwrap_or(1.0);
    if (ticks as f64) < WINDOW_NS * ticks_per_ns / 2.0 && w.done % 2 == 1 {
        w.window = (w.window * 2).min(w.largest);
    }
    match w.kind_of(w.done) {
        Window::Timed => (w.timed_per, w.timed_spent) = (per, w.timed_spent + executions),
        // Its entries' callpath misses are among those `note_miss` counts.
        Window::Fenced => w.timed_spent += executions,
        Window::Counted => {
            w.counted_per = per;
            w.counted_means.push(per.max(0) as u64);
        }
        // Its flushes are in its time: not a counted call's mean.
        Window::Shadow => w.counted_per = per,
        Window::Tally => w.tally_per = per,
        Window::Inline | Window::FirstInline => w.inline_per = per,
        Window::Bare | Window::FirstBare => w.bare_per = per,
        Window::Double => w.double_per = per,
        Window::Detour => w.detour_per = per,
        Window::Pathed => (w.pathed_per, w.pathed_spent) = (per, w.pathed_spent + executions),
    }
    if w.done % 2 == 1 {
        // The pair's other kind than counted (detour windows pair with double ones).
        let other = match w.kind_of(w.done) {
            Window::Counted | Window::Detour | Window::Shadow | Window::FirstInline => w.kind_of(w.done - 1),
            kind => kind,
        };
        match other {
            Window::Tally => w.tally_differences.push(w.counted_per - w.tally_per),
            Window::Inline => w.inline_differences.push(w.inline_per - w.counted_per),
            Window::Bare => w.bare_differences.push(w.bare_per - w.counted_per),
            Window::Double => w.double_differences.push(w.double_per - w.detour_per),
            Window::FirstBare => w.first_differences.push(w.inline_per - w.bare_per),
            Window::Pathed => w.pathed_differences.push(w.pathed_per - w.counted_per),
            Window::Timed => w.differences.push(w.timed_per - w.counted_per),
            Window::Counted | Window::Fenced | Window::Detour | Window::Shadow | Window::FirstInline => {}
        }
    }
    w.done += 1;
    w.spent += executions;
    let exhausted = w.differences.len() >= MAX_PAIRS || w.spent >= w.budget;
    if w.done.is_multiple_of(2) && w.differences.len() >= MIN_PAIRS && (exhausted || settled(w)) {
        // SAFETY: this thread owns the estimation, whose id `offer` checked (the contract); it
        // touches the windows no more once released (the contract too).
        unsafe {
            publish(w);
            release(w.settles());
        }
        return true;
    }
    false
}

/// Starts the next window at an entry on `ts`, the event's count (of the window's kind) being
/// `count`. A tally window's executions after this one take the trampoline's tally path, and
/// the first that takes the counted path (its counted count `count + 2`) ends it. The clock
/// reading is taken last, so the bookkeeping of the boundary (the estimate's sort included)
/// lies in neither window.
///
/// # Safety
/// `ts` is the calling thread's state, at a counted entry of `id` with the stack marked busy,
/// and owns the estimation `w`.
unsafe fn begin(w: &mut Windows, ts: &mut ThreadState, count: u64, id: u32) {
    let kind = w.kind_of(w.done);
    let (mode, end) = match kind {
        Window::Timed => (switch::MEASURED, count + w.window),
        Window::Counted => (w.counted_mode(), count + w.window),
        Window::Tally => (switch::TALLY, count + 2),
        Window::Inline | Window::FirstInline => (switch::INLINE, count + w.window),
        Window::Bare => (switch::BARE, count + w.window),
        // Its calls reach the record only once its count is down: the call that finds it down
        // ends it, after this entry's (`bare_credited` moves END by the calls credited then).
        Window::FirstBare => (switch::BARE, count + 2),
        Window::Shadow => (w.counted_mode(), count + w.window),
        Window::Double => (switch::DOUBLE, count + w.window),
        Window::Detour => (switch::DETOUR, count + w.window),
        Window::Fenced => (switch::FENCED, count + w.window),
        Window::Pathed => (switch::PATHED, count + w.window),
    };
    // An inline window's executions count themselves until the one that finds the count before
    // its end's: that one calls the probe, whose counted path reaches END.
    ts.inline_end = if matches!(kind, Window::Inline | Window::FirstInline | Window::Double | Window::Detour)
    {
        end - 1
    } else {
        u64::MAX
    };
    // A bare window's executions count themselves down from here: all but its first (this entry)
    // and its last, which calls the probe (`left` at zero), whose counted path credits them and
    // reaches END.
    crate::inline::close_bare(ts);
    let counted_down = w.window.saturating_sub(2).min(u64::from(u32::MAX)) as u32;
    match kind {
        Window::Bare => crate::inline::open_bare(ts, id, counted_down, false),
        Window::FirstBare => crate::inline::open_bare(ts, id, counted_down, true),
        Window::Shadow => crate::inline::open_shadow(ts, id, counted_down),
        _ => {}
    }
    if kind == Window::Tally {
        w.tally_window = w.window;
        // SAFETY: the contract; the top frame is the depth the stack is marked busy at.
        unsafe { crate::tally::open(ts, ts.depth & !crate::probes::BUSY, w.window) };
    }
    // The whole group of four keeps the step where its other kind does (the counted calls that
    // end tally and inline windows too).
    let keeps = matches!(
        w.kind_of(w.done / 4 * 4 + 1),
        Window::Tally | Window::Inline | Window::Bare | Window::Double | Window::FirstBare
    );
    KEEP_STEP.store(if keeps { id } else { NONE }, Relaxed);
    switch::set(id, mode);
    set_end(end);
    w.counted_misses_at = COUNTED_MISSES.load(Relaxed);
    (w.start, w.start_count) = (clock::now(), count);
}

/// Whether an estimation that began at `began` has run past `MAX_ESTIMATION_NS` at `now` (a
/// throttled event's: `give_up_stale`). One estimation runs at a time, and the windows of an
/// event called seldom last as long as its calls take to come: on Lua (`scripts/nas-paired`,
/// compensated callpaths, throttled) the estimation of `luaH_newkey` (31 000 calls in the run,
/// 16 a millisecond) held the estimator for 500 to 800 ms of the 600 ms the instrumented copy
/// ran, and every re-offer found it busy: `lua_settop` (ten million calls a run), and the
/// callpath parents whose pathed pairs are scaled from it, kept the one estimate each had at
/// throttling. An event that slow carries little of the run's probe cost, and its windows,
/// which hold the program's work between its calls, say little of it.
fn overdue(began: u64, now: u64, ticks_per_ns: f64) -> bool {
    began != 0 && now.saturating_sub(began) as f64 >= MAX_ESTIMATION_NS * ticks_per_ns
}

#[inline(always)]
fn is_owner(ts: &ThreadState, id: u32) -> bool {
    TARGET.load(Relaxed) == id && std::ptr::eq(OWNER.load(Relaxed), ts)
}

/// Whether an estimation is under way and `state`'s thread owns it.
fn owns_estimation(state: *const ThreadState) -> bool {
    TARGET.load(Relaxed) != NONE && std::ptr::eq(OWNER.load(Relaxed), state)
}

/// Gives the estimation up when its event has not finished a window for a long time (it may
/// never run again, or only after a pause), or when a throttled event's has run for longer than
/// half a re-estimation period (`overdue`), keeping what it measured when that is enough. A
/// measured event's estimation may take longer: its budget grows with its calls (a share of
/// them at each power of four), and one given up in a counted window leaves the event lenient
/// (slower probes) for the rest of the run; ended at 25 ms, Lua's unthrottled compensated run
/// left `lua_settop` and a dozen others so, 1.4 to 2.2 ns a probed call slower.
///
/// # Safety
/// `state` is the calling thread's state (only compared with OWNER: the windows are touched only
/// when this thread owns them).
unsafe fn give_up_stale(state: *mut ThreadState, now: u64) {
    if !owns_estimation(state) {
        return;
    }
    let (start, began, after) = {
        // SAFETY: this thread owns the estimation (OWNER is its own state, the contract; see
        // `Owned`); the reference ends here, before the windows are written below.
        let w = unsafe { &*WINDOWS.0.get() };
        (w.start, w.began, w.after)
    };
    let ticks_per_ns = clock::ticks_per_ns_estimate().unwrap_or(1.0);
    let overdue = after != switch::MEASURED && overdue(began, now, ticks_per_ns);
    if (now.saturating_sub(start) as f64) < STALE_NS * ticks_per_ns && !overdue {
        return;
    }
    // SAFETY: `state` is this thread's, inside a probe, and owns the estimation (checked).
    unsafe { abandon(state) };
}

/// Gives the estimation under way on `state` up for the events queued behind it, when it is of
/// a throttled event that spent less than half its budget while one of them (`challenger`) had
/// as many counted calls as that whole budget (`offers::overtake`, measured from when it armed
/// its challenge under this estimation: `mark_challenge`; the first challenge of one that armed
/// under another estimation only marks): its event is one the program calls far less now (its
/// phase is over), and the queue would wait for it until it is given up stale, or overdue,
/// which only offers and challenges check. In Lua's workload (a 0.15 s run of phases, callpaths
/// on) the estimation of `luaS_newlstr`, throttled while the program raised errors, held the
/// queue for 0.1 s once strings were no longer made, and 26 of the 29 throttled routines were
/// never estimated (10 are now; compensated main, 12 % above the plain run, did not move with it,
/// issue 23's session-54 note; what that error is remains open: session 55 found that it is not
/// the instrumented code's floor). True when it gave the estimation up.
///
/// # Safety
/// `state` is the calling thread's attached state, inside a probe; the caller writes none of
/// its records until this returns.
pub(super) unsafe fn give_up_idle(state: *mut ThreadState, challenger: u32) -> bool {
    if !owns_estimation(state) {
        return false;
    }
    let idle = {
        // SAFETY: this thread owns the estimation (OWNER is its own state, the contract; see
        // `Owned`); the reference ends here.
        let w = unsafe { &*WINDOWS.0.get() };
        w.after != switch::MEASURED
            && w.challenges.spent_at(challenger).is_some_and(|at| w.spent.saturating_sub(at) < w.budget / 2)
    };
    if idle {
        // SAFETY: as above, inside a probe (the contract).
        unsafe { abandon(state) };
    }
    idle
}

/// Queued event `id` arms its challenge now (`offers::challenge_after`): what the estimation
/// under way had spent is its mark, when `state`'s thread owns that estimation.
///
/// # Safety
/// `state` is the calling thread's attached state.
pub(super) unsafe fn mark_challenge(state: *const ThreadState, id: u32) {
    if owns_estimation(state) {
        // SAFETY: this thread owns the estimation (OWNER is its own state, checked; see `Owned`).
        let w = unsafe { &mut *WINDOWS.0.get() };
        w.challenges.mark(id, w.spent);
    }
}

/// Ends the estimation `state` owns before its time (`give_up_stale`, `give_up_idle`): what it
/// measured is kept when it holds enough pairs, and the event goes back to the mode it
/// settles in.
///
/// # Safety
/// `state` is the calling thread's attached state, inside a probe, and owns the estimation.
unsafe fn abandon(state: *mut ThreadState) {
    // SAFETY: `state` is this thread's, inside a probe (the contract); it counts a tally
    // window's executions before the estimation is released.
    unsafe { crate::tally::interrupted(&mut *state) };
    // SAFETY: as above; no other reference to the windows is held.
    let w = unsafe { &mut *WINDOWS.0.get() };
    // Too few pairs are dropped, but the event is not given up: a pause is no end. The ground
    // truth's misses context pauses its instrumented kernel for some 50 ms right after
    // throttling it (the plain copy fills its own 64 MiB table), and giving the event up there
    // left it unestimated for the rest of the run in five processes of six: a fifth of its
    // in-place cost removed. A throttled event is offered again at its next re-offer, a hot one
    // (unless left lenient below) at its next power of four.
    if w.differences.len() >= MIN_PAIRS {
        // SAFETY: this thread owns the estimation, whose id `offer` checked.
        unsafe { publish(w) };
    }
    // An activation that began counted may still be open: its exit must not be reconciled
    // (a throttled event's exits never are).
    let mode = if w.timed(w.done) || w.after != switch::MEASURED {
        w.settles()
    } else {
        instrument_live::MODE_LENIENT
    };
    // SAFETY: this thread owns the estimation and leaves the windows alone from here.
    unsafe { release(mode) };
}

/// Ends the estimation: the event gets `mode`, and TARGET is free.
///
/// # Safety
/// The calling thread owns the estimation (or no thread measures any more: `finish`), and
/// touches the windows no more until it wins TARGET again: they are the next owner's.
unsafe fn release(mode: u8) {
    set_end(u64::MAX);
    KEEP_STEP.store(NONE, Relaxed);
    PATHED_LEAF.store(NONE, Relaxed);
    let owner = OWNER.load(Relaxed);
    if !owner.is_null() {
        // SAFETY: the owner is the calling thread's live state (the contract: every caller runs
        // on it, inside a probe or retiring before it is freed); only it reads this word.
        unsafe {
            (*owner).inline_end = u64::MAX;
            crate::inline::close_bare(&mut *owner);
        }
    }
    let id = TARGET.load(Relaxed);
    if mode == switch::MEASURED {
        crate::untimed::clear(id);
    }
    match mode {
        switch::COUNTED => switch::set(id, settled_mode(id)),
        instrument_live::MODE_LENIENT => switch::set_lenient_here(id),
        _ => switch::set(id, mode),
    }
    OWNER.store(std::ptr::null_mut(), Relaxed);
    TARGET.store(NONE, Release);
}

/// The mode throttled event `id` settles in: the run's (`switch::settled`), except that an event
/// whose inline count its windows measured clearly dearer than a counted probe call (the mean
/// of its estimations two standard errors above zero) is counted through the probe. In a tight
/// loop the inline count costs half the call; next to NPB's randlc (a chain of dependent
/// multiplications) it cost more: IS-like key generation, every call counted, ran 4.0 to 5.2 %
/// slower than its plain copy in the same process counting inline and 0.2 to 0.8 % slower
/// through the probe (three runs of each). A noisy difference keeps the inline count: on an
/// interpreter's small routines the call costs far more (Lua, `bench-intrusion`'s workload: 1.26 x
/// the plain run through the probe, 1.10 x counting inline).
fn settled_mode(id: u32) -> u8 {
    settled_mode_with(inline_mean(id))
}

/// `settled_mode` given the event's inline-minus-counted mean and its standard error.
fn settled_mode_with(inline: Option<(f64, f64)>) -> u8 {
    let mode = switch::settled();
    if mode == switch::INLINE && inline.is_some_and(|(extra, se)| extra > 2.0 * se) {
        switch::COUNTED
    } else {
        mode
    }
}

/// What one untimed call of event `id` costs in place (scaled), where its windows measured an
/// inline count against a counted call: its counted pair's cost over the run
/// (`run_counted_cost`), and for the share of its throttled time it counted inline
/// (`inline_share`) what an inline count costs in place as the double windows measured it
/// (`compensate::measured_inline_count_cost`, excess.rs); where none did, the counted pair plus
/// the inline-less-counted difference, but not more than an inline count's calibration. The
/// difference alone put the IS-like routine's inline count at 0.2 to 0.9 ns from one process
/// to the next, the figure 0.4 to 3 x the run's slowdown (issue 23's thirty-ninth note). Next
/// to a routine whose own time varies by tens of nanoseconds (xz's range coder, match finder)
/// both measurements carry that noise (standard errors of 8 to 35 ns for a difference of a few)
/// and charged each inline count 20 to 57 ns: the profile said 18 to 29 % of the run where xz
/// ran 8 % slower. Each event's counted pair plus its own difference, weighed with the pool by
/// precision, was tried (session 53): Lua throttled, the figure 1.09 -> 1.57 ns a probed call
/// where the probes cost 1.39, but SQLite 1.06 -> 2.28 where they cost 1.20 (its busiest
/// routines' counted pairs, which hold a modelled part, `model::tally_path`, came to 6 to 10 ns,
/// and their inline counts to 2 to 4 ns over the pool's 0.4).
/// None where nothing compared the two (the profile's overhead then takes the run's share of
/// inline counts, `Overhead::inline_share`).
pub fn untimed_cost(id: u32) -> Option<u64> {
    let (extra, _) = inline_mean(id)?;
    let counted = run_counted_cost(id) as f64;
    let inline = match crate::compensate::measured_inline_count_cost() {
        Some(measured) => measured as f64,
        None => {
            let calibrated = overhead::costs().map_or(u64::MAX, |c| c.untimed.inline).max(1) as f64;
            (counted + extra).max(0.0).min(calibrated)
        }
    };
    let share = history::inline_share(id).unwrap_or(0.0);
    Some((counted + share * (inline - counted)).round() as u64)
}

/// Before a profile is written: every event waiting counted in any thread's queue is measured
/// again, so that none is reported switched off (its entry stays queued; its turn finds it
/// measured already).
pub fn resume_waiting() {
    pending::waiting().for_each(resume);
}

/// A thread that stops measuring (it ends, or it writes the profile at exit) drops the events
/// waiting in its queue and ends the estimation it owns, keeping what it measured when that is
/// enough, so that the estimation neither stays blocked for the rest of the run nor is lost from
/// the profile. An estimation another thread owns is left alone: that thread may be at a window
/// boundary right now.
///
/// # Safety
/// `state` is the calling thread's state, outside any probe (retiring), not yet freed, and runs
/// no tally window (`thread::retire_current` ends it with `tally::interrupted` before it closes
/// the frames, whose caller the window's executions are charged to).
pub unsafe fn retire(state: *mut ThreadState) {
    // SAFETY: the state is this thread's, not yet freed (the contract).
    let index = unsafe { (*state).index };
    // Its waiting events would hold their slots for the rest of the run: no thread takes them.
    while let Some((kind, id)) = pending::take(index) {
        if kind & pending::WAITING != 0 {
            resume(id);
        }
    }
    if TARGET.load(Acquire) == NONE || !std::ptr::eq(OWNER.load(Relaxed), state) {
        return;
    }
    // SAFETY: this thread owns the estimation (OWNER is its state) and runs no probe, so no
    // boundary of it is under way and no other thread touches the windows (see `Owned`).
    unsafe {
        let w = &mut *WINDOWS.0.get();
        if w.differences.len() >= MIN_PAIRS {
            publish(w);
        }
        release(w.settles());
    }
}

/// The trimmed mean of the pair differences (a tenth cut at each end: a preempted window is an
/// outlier) and its standard error, in ticks per window. Sorts the differences in place (their
/// order means nothing) rather than allocate inside a probe.
fn trimmed(w: &mut Windows) -> (f64, f64) {
    trimmed_of(w.differences.values())
}

/// What one more inline count costs per execution (scaled, with its standard error): double
/// windows less detour ones, where they measured enough pairs.
fn shadow_of(w: &mut Windows) -> Option<(f64, f64)> {
    (w.double_differences.len() >= MIN_TALLY_PAIRS).then(|| trimmed_of(w.double_differences.values()))
}

/// What an inline count costs over a bare count per call (scaled, with its standard error):
/// inline windows less bare ones, where they measured enough pairs. Both windows count all
/// their executions but their first and last (which go through the probe), so the difference
/// per execution is that share of it per call.
fn first_of(w: &mut Windows) -> Option<(f64, f64)> {
    if w.first_differences.len() < MIN_TALLY_PAIRS {
        return None;
    }
    let (mean, se) = trimmed_of(w.first_differences.values());
    let share = w.window.saturating_sub(2).max(1) as f64 / w.window.max(1) as f64;
    Some((mean / share, se / share))
}

/// A counted call minus a bare count per execution (scaled, with its standard error): the bare
/// windows' difference turned round (they run only without inline windows: a callpath leaf's or
/// a flat parent's), where they measured enough pairs.
fn counted_over_bare(w: &mut Windows) -> Option<(f64, f64)> {
    if w.bare_differences.len() < MIN_TALLY_PAIRS {
        return None;
    }
    let (bare, se) = trimmed_of(w.bare_differences.values());
    Some((-bare, se))
}

/// `trimmed` of any differences.
fn trimmed_of(d: &mut [i64]) -> (f64, f64) {
    d.sort_unstable();
    let cut = d.len() / 10;
    let kept = &d[cut..d.len() - cut];
    let n = kept.len() as f64;
    let mean = kept.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = kept.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, (var / n).sqrt())
}

fn settled(w: &mut Windows) -> bool {
    let (mean, se) = trimmed(w);
    let ticks_per_ns = clock::ticks_per_ns_estimate().unwrap_or(1.0);
    let per_execution = |x: f64| x / f64::from(1u32 << SCALE) / ticks_per_ns;
    se < mean.abs() / 50.0 || per_execution(se) < GOOD_SE_NS
}

/// Writes the event's estimate to the profile's list, and to the table the cost pooled from all
/// of the event's estimates so far (`pooling`), weighed with the calibration and split into the
/// counted pair and the difference (`model::split`).
///
/// # Safety
/// The calling thread is the estimates' only writer: it owns the estimation (see `Owned`), or no
/// thread measures any more (`finish`). `w.id` is below TABLE_LEN (`offer` checks it).
unsafe fn publish(w: &mut Windows) {
    let (mean, se) = trimmed(w);
    // The phase every pool below scales to and the cost is kept at, read once: a round recorded
    // meanwhile (by another thread) would otherwise give the pool and its base different ones.
    let now = phase::calibration();
    let (pooled, pooled_se) = pool_with(w.id, mean, se, now);
    let tally =
        (w.tally_differences.len() >= MIN_TALLY_PAIRS).then(|| trimmed_of(w.tally_differences.values()));
    let inline =
        (w.inline_differences.len() >= MIN_TALLY_PAIRS).then(|| trimmed_of(w.inline_differences.values()));
    let reference = inline.filter(|_| w.leaf);
    let shadow = shadow_of(w);
    let first = first_of(w);
    let counted_over_bare = counted_over_bare(w);
    // A pathed pair has no measured reference (and one an earlier estimation of the event kept
    // as a leaf is of another pair).
    let counted_pooled = if w.pathed {
        Reference::None
    } else {
        Reference::of(
            reference.and(pool_inline_with(w.id, reference)),
            pool_over_bare_with(w.id, counted_over_bare, now),
            pool_counted_with(w.id, tally, now),
        )
    };
    let dispatched = crate::registry::counts_inline(w.id);
    let mut used = split(pooled, pooled_se, counted_pooled, w.kind, w.pathed, dispatched);
    if !w.pathed {
        // A pathed entry steps as a timed one does: its windows' difference holds no miss.
        used.timed = used.timed.saturating_sub(misses_charged(w)).max(1);
    }
    if shadow.is_some() || first.is_some() {
        // SAFETY: the caller publishes the estimation it owns (the contract).
        unsafe { excess::add(shadow, first, used.timed) };
    }
    let measured_counted = (!matches!(counted_pooled, Reference::None)).then_some(used.counted);
    let pathed = pathed_in_place(w, measured_counted, now);
    let parts = split_of(w);
    let inside = pool_inside_with(w.id, parts.map(|(_, inside)| inside), now).map(|i| i.min(used.timed));
    if let Some(cost) = cost_of(w.id) {
        let timed_before = phase::measured_timed(cost);
        phase::set(cost, w.id, (used.timed, used.counted, inside.map_or(0, |i| i + 1)), now);
        crate::population::UNESTIMATED.add(
            w.id,
            w.budget,
            used.timed,
            crate::compensate::calibrated_pair_cost(w.kind),
        );
        if w.after == switch::COUNTED {
            let id = w.id;
            // SAFETY: `id` is below TABLE_LEN (the contract).
            let per_call = || unsafe { crate::untimed::per_call_in_table(id) };
            let before = per_call();
            crate::untimed::measured_in_place(w.id, w.kind, throttled_mean(w), used.timed, inside);
            if w.under_means.len() >= MIN_PAIRS / 2 {
                crate::untimed::set_under(id, median(w.under_means.values()));
            }
            let same = crate::rests::unchanged(before, per_call())
                && crate::rests::unchanged(timed_before, used.timed);
            crate::rests::estimated(id, same, clock::now(), reestimate_ticks());
        }
    }
    let alone_reference = Reference::of(reference, counted_over_bare, tally);
    let alone = split(mean, se, alone_reference, w.kind, w.pathed, dispatched);
    let used_se = weighed_se(pooled_se, w.kind, w.pathed).hypot(used.counted_se);
    // SAFETY: this thread is the estimates' only writer (the contract).
    unsafe {
        history::record(Estimate {
            id: w.id,
            measured: mean.round() as i64,
            difference: alone.difference,
            standard_error: se.round() as u64,
            counted: alone.counted,
            timed: alone.timed,
            pairs: w.differences.len() as u32,
            window: w.window as u32,
            counted_measured: tally.map_or(0, |(m, _)| m.round() as i64),
            counted_error: tally.map_or(0, |(_, e)| e.round() as u64),
            counted_pairs: if tally.is_some() { w.tally_differences.len() as u32 } else { 0 },
            used_standard_error: used_se.round() as u64,
            used_counted: used.counted,
            used_counted_error: used.counted_se.round() as u64,
            inline_measured: inline.map_or(0, |(m, _)| m.round() as i64),
            inline_error: inline.map_or(0, |(_, e)| e.round() as u64),
            inline_pairs: if inline.is_some() { w.inline_differences.len() as u32 } else { 0 },
            shadow_measured: shadow.map_or(0, |(m, _)| m.round() as i64),
            shadow_error: shadow.map_or(0, |(_, e)| e.round() as u64),
            double_pairs: if shadow.is_some() { w.double_differences.len() as u32 } else { 0 },
            first_measured: first.map_or(0, |(m, _)| m.round() as i64),
            first_error: first.map_or(0, |(_, e)| e.round() as u64),
            first_pairs: if first.is_some() { w.first_differences.len() as u32 } else { 0 },
            over_bare_measured: counted_over_bare.map_or(0, |(m, _)| m.round() as i64),
            over_bare_error: counted_over_bare.map_or(0, |(_, e)| e.round() as u64),
            over_bare_pairs: if counted_over_bare.is_some() { w.bare_differences.len() as u32 } else { 0 },
            own: parts.map_or(0, |(own, _)| own),
            inside: parts.map_or(0, |(_, inside)| inside),
            fenced_windows: if parts.is_some() { w.fenced_means.len() as u32 } else { 0 },
            pathed: pathed.map_or(0, |(p, _)| p),
            pathed_pairs: if pathed.is_some() { w.pathed_differences.len() as u32 } else { 0 },
            pathed_measured: pathed.map_or(0, |(_, (m, _))| m.round() as i64),
            pathed_error: pathed.map_or(0, |(_, (_, e))| e.round() as u64),
            at: 0,
            calibration: now,
            reference: alone_reference.source(w.pathed),
            used_reference: counted_pooled.source(w.pathed),
            mode: if w.settles() == switch::COUNTED {
                settled_mode_with(pool_inline_with(w.id, inline))
            } else {
                w.settles()
            },
        });
    }
}

/// Event `id`'s in-place pair cost (Δi, scaled) and the part of it inside the event's interval
/// as its split windows measured it, if they did; (0, None) without an estimate.
#[inline(always)]
pub fn split_cost(id: u32) -> (u64, Option<u64>) {
    cost_of(id).map_or((0, None), |cost| {
        let inside = cost.inside.load(Relaxed);
        (cost.timed.load(Relaxed), inside.checked_sub(1))
    })
}

/// A throttled event's exclusive time per call for its estimate (scaled): the median of its
/// timed windows' (a window a preemption hit is an outlier there), else the mean of the timed
/// calls before throttling.
fn throttled_mean(w: &mut Windows) -> u64 {
    let means = w.timed_means.values();
    if means.len() < MIN_PAIRS / 2 {
        return w.mean;
    }
    median(means)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_alternate_abba_starting_counted_and_later_groups_pair_counted_with_tally_and_inline() {
        use Window::{Counted as C, Inline as I, Tally as Y, Timed as T};
        let kinds = |tallies, inlines| {
            (0..8).map(|n| window_kind(n, tallies, inlines, false, false, false)).collect::<Vec<_>>()
        };
        assert_eq!(kinds(false, false), [C, T, T, C, C, T, T, C]);
        assert_eq!(kinds(true, false), [C, T, T, C, C, T, T, C]);
        assert_eq!(kinds(true, true), [C, T, T, C, C, T, T, C]);
        let group = |n: u32, tallies, inlines| {
            (n..n + 4).map(|n| window_kind(n, tallies, inlines, false, false, false)).collect::<Vec<_>>()
        };
        assert_eq!(group(8, true, false), [C, Y, Y, C]);
        assert_eq!(window_kind(21, true, false, false, false, false), Y, "the cycle repeats");
        assert_eq!(group(8, true, true), [C, Y, Y, C]);
        assert_eq!(group(12, true, true), [C, I, I, C]);
        assert_eq!(group(16, true, true), [C, T, T, C], "the cycle of four groups repeats");
        assert_eq!(group(8, false, true), [C, T, T, C]);
        assert_eq!(group(12, false, true), [C, I, I, C]);
    }

    #[test]
    fn split_windows_close_the_cycle_of_groups() {
        use Window::{Counted as C, Fenced as F, Inline as I, Tally as Y, Timed as T};
        let group = |n: u32, tallies, inlines| {
            (n..n + 4).map(|n| window_kind(n, tallies, inlines, false, true, false)).collect::<Vec<_>>()
        };
        assert_eq!(group(0, true, false), [C, T, T, C]);
        assert_eq!(group(8, true, false), [C, Y, Y, C]);
        assert_eq!(group(12, true, false), [C, F, F, C]);
        assert_eq!(group(16, true, false), [C, T, T, C], "the cycle of four groups repeats");
        assert_eq!(group(12, true, true), [C, I, I, C]);
        assert_eq!(group(16, true, true), [C, F, F, C]);
        assert_eq!(group(20, true, true), [C, T, T, C], "the cycle of five groups repeats");
        assert_eq!(group(8, false, false), [C, T, T, C], "no tally windows: timed ones");
        assert_eq!(group(12, false, false), [C, F, F, C]);
    }

    #[test]
    fn a_callpath_leaf_pairs_counted_with_pathed_windows_before_the_split_ones() {
        use Window::{Counted as C, Fenced as F, Inline as I, Pathed as P, Tally as Y, Timed as T};
        let group = |n: u32, inlines, fenced| {
            (n..n + 4).map(|n| window_kind(n, true, inlines, false, fenced, true)).collect::<Vec<_>>()
        };
        assert_eq!(group(8, true, true), [C, Y, Y, C]);
        assert_eq!(group(12, true, true), [C, I, I, C]);
        assert_eq!(group(16, true, true), [C, P, P, C]);
        assert_eq!(group(20, true, true), [C, F, F, C]);
        assert_eq!(group(24, true, true), [C, T, T, C], "the cycle of six groups repeats");
        assert_eq!(group(12, false, false), [C, P, P, C], "without inline windows");
        assert_eq!(group(16, false, false), [C, T, T, C], "the cycle of four groups repeats");
    }

    #[test]
    fn bare_windows_follow_the_inline_ones_or_the_tally_ones() {
        use Window::{
            Bare as B, Counted as C, Detour as E, Double as D, Fenced as F, FirstBare as R, FirstInline as N,
            Inline as I, Pathed as P, Shadow as S, Tally as Y, Timed as T,
        };
        let group = |n: u32, inlines, pathes| {
            (n..n + 4).map(|n| window_kind(n, true, inlines, true, true, pathes)).collect::<Vec<_>>()
        };
        assert_eq!(group(8, true, false), [C, Y, Y, C]);
        assert_eq!(group(12, true, false), [C, I, I, C]);
        assert_eq!(group(16, true, false), [E, D, D, E], "double windows against detour ones");
        assert_eq!(group(20, true, false), [N, R, R, N], "bare windows against inline ones");
        assert_eq!(group(24, true, false), [C, F, F, C]);
        assert_eq!(group(28, true, false), [C, T, T, C], "the cycle of seven groups repeats");
        assert_eq!(group(24, true, true), [C, P, P, C], "pathed windows after the count ones");
        assert_eq!(group(28, true, true), [C, F, F, C]);
        assert_eq!(group(12, false, false), [S, B, B, S], "a callpath leaf's, without inline ones");
        assert_eq!(group(16, false, true), [C, P, P, C]);
        assert_eq!(group(20, false, true), [C, F, F, C]);
    }

    #[test]
    fn spacers_put_a_point_of_the_program_in_each_window_of_a_group_alike() {
        // A caller's return 23 calls after the group would otherwise start, as in BT's lines.
        let (window, mut state, mut in_window) = (17, 0x5eed | 1, [0u32; 4]);
        for _ in 0..40_000 {
            let spacer = spacer(&mut state, 4 * window);
            assert!(spacer < 4 * window);
            in_window[((23 + 4 * window - spacer) % (4 * window) / window) as usize] += 1;
        }
        assert!(in_window.iter().all(|&n| (9_000..11_000).contains(&n)), "{in_window:?}");
    }

    #[test]
    fn group_spacers_spread_a_period_of_the_groups_length_over_their_windows() {
        // A point every four windows: back to back, every group would have it in the same window.
        let (window, mut state, mut start, mut in_window) = (17u64, 0x5eed | 1, 0u64, [0u32; 4]);
        for _ in 0..40_000 {
            let spacer = spacer(&mut state, window);
            assert!(spacer < window);
            start += spacer;
            in_window[((4 * window - start % (4 * window)) % (4 * window) / window) as usize] += 1;
            start += 4 * window;
        }
        assert!(in_window.iter().all(|&n| (9_000..11_000).contains(&n)), "{in_window:?}");
    }

    #[test]
    fn an_estimation_is_overdue_after_half_a_period() {
        let half = REESTIMATE_NS / 2;
        assert!(!overdue(1000, 1000 + half - 1, 1.0) && overdue(1000, 1000 + half, 1.0));
        assert!(overdue(1000, 1000 + 2 * half, 2.0) && !overdue(1000, 1000 + half, 2.0), "in ticks");
        assert!(!overdue(0, u64::MAX, 1.0), "no estimation begun");
    }

    #[test]
    fn events_are_offered_at_powers_of_four_from_hot_on() {
        assert!(
            !due(HOT / 4) && due(HOT) && !due(HOT + 1) && !due(HOT * 2) && due(HOT * 4) && due(HOT << 20)
        );
    }
}
