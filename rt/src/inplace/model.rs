//! What the windows' measurements mean as costs: the timed-minus-counted difference weighed
//! with the calibration, the counted call's cost over the path it was measured against
//! (`Reference`) plus what that path itself costs (`tally_path`), else the calibrated counted
//! pair (`counted_calibrated`).

use crate::overhead;
use instrument_profile::CountedReference;

/// A measured difference (standard error `se`) as compensation uses it: weighed with the
/// calibration; the counted pair's cost (with its standard error) from what a counted call
/// measured over a cheaper path to the same count (`Reference`: weighed with the calibration
/// likewise, plus what that path itself costs, `tally_path`), else the calibrated counted pair;
/// and Δi = difference + counted.
pub(super) struct Split {
    pub(super) difference: i64,
    pub(super) counted: u64,
    pub(super) counted_se: f64,
    pub(super) timed: u64,
}

/// What the counted path's cost is measured against in place (scaled ticks per execution, with
/// its standard error): of the cheaper paths to the same count that windows measured it
/// against, the one it measured the most over, the cheapest in place, so that what no window
/// sees (that path's own cost) is the least. The candidates: an inline count of the routine's
/// own entry code, where its code has one (late placement, x86-64) and it is a leaf (a routine
/// that calls others leaves its inline counts to the next probe to charge, which the windows
/// would take for its cost); with callpaths (where no inline count runs but in bare windows),
/// the bare count of the same entry code (a thread-local decrement, its calls' node counted
/// when they are credited); the tally path (a call and ten instructions, tally.rs); else
/// nothing (the calibration). Which is cheapest depends on the code around it:
/// - next to the dependency-chain fixture at late placement, a counted call cost 2.5 ns over
///   the plain loop and the tally path as much as the counted one (the tally measurement
///   charged it nothing, and compensated main kept about 3 ns a call), where the inline count
///   cost less;
/// - with callpaths, the ground truth's branchy context (a leaf whose every call is counted)
///   cost 11.3 ns an event in place while its tally windows measured the counted call at 5 to
///   8.5 ns with the tally path's calibration: the call into the runtime, the trampoline's
///   routing and the probed copy of the routine's code (pass/src/probed_copy.rs, which a bare
///   count skips) are what no tally window sees;
/// - next to NPB's randlc (IS-like key generation, a chain of dependent multiplications whose
///   state goes through memory), the inline count's four stores cost more than the tally path:
///   the counted call measured 0.6 to 2.0 ns over the tally path and 0.2 to 0.5 over the inline
///   count, and the run counting inline was 0.7 to 0.9 ns a call slower than its plain copy.
///   Taken as the reference for being an inline count, it left its cost unseen, and the
///   profile's overhead figure came out 0.3 to 0.8 x the slowdown.
#[derive(Clone, Copy)]
pub(super) enum Reference {
    Inline(f64, f64),
    Bare(f64, f64),
    Tally(f64, f64),
    None,
}

impl Reference {
    /// From the inline windows' inline-minus-counted measurement (a leaf's), the bare windows'
    /// counted-minus-bare one (a callpath leaf's or a flat parent's) and the tally windows'
    /// counted-minus-tally one, where made: the one the counted call measured the most over (an
    /// inline count only where it cost less than the counted call), else nothing (the calibration).
    /// Next to NPB's randlc (a chain of dependent multiplications) an inline count that cost more
    /// (0.2 ns a call) left nothing to charge the counted call over it (IS-like key generation: the
    /// overhead figure 0.07 x the slowdown): the tally windows measure that call there. Where they
    /// are interrupted too (a caller that returns after each call, as a callpath parent kept on the
    /// stack does), a dearer inline count measures nothing either: in the ground truth's nested
    /// context with callpaths, whose leaf's inline counts wait for its parent's exit to be charged,
    /// it charged the leaf's counted calls nothing where they cost 4.6 ns over an inline count and
    /// 7 over the plain code (`scripts/gt-states`).
    ///
    /// "The most" is the measurement's lower bound (less two standard errors), so that a noisy
    /// reference does not win on its noise: on SQLite a string compare's tally windows measured
    /// its counted call 76 ±41 ns over the tally path, its bare windows 26 ±8 over a bare count,
    /// and the larger one charged its 8.5 M counted calls 61 ns each.
    pub(super) fn of(
        inline: Option<(f64, f64)>,
        bare: Option<(f64, f64)>,
        tally: Option<(f64, f64)>,
    ) -> Reference {
        let inline =
            inline.filter(|&(extra, _)| extra < 0.0).map(|(extra, error)| Reference::Inline(-extra, error));
        let bare = bare.map(|(measured, error)| Reference::Bare(measured, error));
        let tally = tally.map(|(measured, error)| Reference::Tally(measured, error));
        [tally, bare, inline]
            .into_iter()
            .flatten()
            .max_by(|a, b| a.lower_bound().total_cmp(&b.lower_bound()))
            .unwrap_or(Reference::None)
    }

    /// Which path a counted cost split with this reference (`split`) was measured against, in
    /// the profile's words: with none, a pathed pair's is scaled from its difference
    /// (`pathed_under`), any other's is the calibration.
    pub(super) fn source(&self, pathed: bool) -> CountedReference {
        match self {
            Reference::Inline(..) => CountedReference::Inline,
            Reference::Bare(..) => CountedReference::Bare,
            Reference::Tally(..) => CountedReference::Tally,
            Reference::None if pathed => CountedReference::Pathed,
            Reference::None => CountedReference::Calibration,
        }
    }

    /// What the counted path measured over this reference (scaled ticks per execution) less two
    /// standard errors.
    fn lower_bound(&self) -> f64 {
        match *self {
            Reference::Inline(measured, error)
            | Reference::Bare(measured, error)
            | Reference::Tally(measured, error) => measured - 2.0 * error,
            Reference::None => f64::NEG_INFINITY,
        }
    }
}

/// `pathed`: the windows compared the timed pair with one kept on the stack untimed
/// (`switch::PATHED`, a callpath parent's) rather than a counted one; its calibration is the
/// untimed pair then, and `reference` is `None` (no tally or inline windows run beside them).
/// `dispatched`: the event's calls run its dispatch before any probe (`registry::counts_inline`),
/// in every window and mode: both sides of every difference hold it, and every calibrated path
/// it is weighed with or charged by gets it added (`calibrated_references`), but an inline
/// count's, whose calibration runs it.
pub(super) fn split(
    mean: f64,
    se: f64,
    reference: Reference,
    kind: usize,
    pathed: bool,
    dispatched: bool,
) -> Split {
    let difference = weighed(mean, se, kind, pathed).round() as i64;
    let scale = timing_scale(difference, kind, pathed);
    let references = calibrated_references(kind).map(|references| with_dispatch(references, dispatched));
    let dispatch = references.map_or(0, |(.., dispatch)| dispatch);
    let (counted, counted_se) = match (reference, references) {
        (Reference::None, _) if pathed => (pathed_under(difference, kind, dispatch), 0.0),
        (Reference::None, _) => (counted_calibrated(kind, pathed) + dispatch as u64, 0.0),
        (
            Reference::Inline(measured, error)
            | Reference::Bare(measured, error)
            | Reference::Tally(measured, error),
            None,
        ) => (measured.max(0.0).round() as u64, error),
        (Reference::Inline(measured, error), Some((counted, _, inline, _))) => {
            over_inline(measured, error, scale, counted, inline)
        }
        // The shadow windows it is measured in carry the bare count's own stores (inline.rs's
        // `open_shadow`), so those are in both windows of the difference; what is left of the
        // bare path is the dispatch.
        (Reference::Bare(measured, error), Some((counted, _, _, dispatch))) => {
            over_reference(measured, error, scale, counted, dispatch)
        }
        (Reference::Tally(measured, error), Some((counted, off, _, _))) => {
            over_reference(measured, error, scale, counted, off)
        }
    };
    Split { difference, counted, counted_se, timed: (difference + counted as i64).max(1) as u64 }
}

/// The counted pair's cost from what it measured over a reference path (`measured`, standard
/// error `error`) and the calibrated costs of both (`counted`, `reference`): the measurement
/// weighed with its prior, plus the reference path's own cost (`tally_path`). The prior is the
/// calibrated difference of the two paths scaled as timing's difference moved from its own
/// calibration (`scale`, `timing_scale`), the proportional model `tally_path` and `in_phase`
/// follow: counting costs seven to nine times its calibrated cost in place next to cache
/// misses (ground truth), about as timing's difference grows. Its spread is its own size (at
/// least the calibration's), so that a clear measurement keeps its value and one buried in its
/// event's noise moves to the prior. The spread was timing's whole difference: in BT (class W,
/// unthrottled) the line solver's `binvrhs`, 0.3 M calls whose windows hold a 5x5 block's
/// work, had tally windows measure its counted call 65 ±88 ns over the tally path, of which a
/// spread of 36 ns kept a seventh: its counted call was charged 13 to 44 ns from process to
/// process, where the calibration says 4, and every call of it as much over in its timed pair.
/// With its standard error, the measurement's and the prior's precisions added (`combined_se`):
/// the measurement's own, taken for the weighed value's, made the profile say that Lua's
/// compensated times were known to ±1343 ms in a 1659 ms run (its garbage collector's
/// `reallymarkobject`, whose tally windows measured 8 ns ±64 us).
pub(super) fn over_reference(
    measured: f64,
    error: f64,
    scale: f64,
    counted: i64,
    reference: i64,
) -> (u64, f64) {
    let (weighed, se) = weighed_over(measured, error, scale, counted, reference);
    ((weighed + tally_path(weighed, counted, reference) as i64).max(0) as u64, se)
}

/// `over_reference` for an inline count: the measurement weighed alike, plus what an inline
/// count costs in place as compensation charges every other one (`compensate::inline_count_cost`:
/// its calibration and what the double and first windows measured over it, excess.rs), rather
/// than its calibration scaled as the counted path moved. The two paths do not move alike:
/// next to the ground truth's floating-point chain (madd, every call timed) the counted probe
/// call measured 2.6 to 4.2 ns over the inline count where its calibration says 2.2, so the
/// scaled inline count was charged 2.9 ns a call, where it costs 0.4 there (`--env
/// INSTRUMENT_THROTTLE_CALLS=1`) and the pooled charge said 1.1: the timed pair came out 38 to
/// 41 ns against 36 in place.
fn over_inline(measured: f64, error: f64, scale: f64, counted: i64, inline: i64) -> (u64, f64) {
    let (weighed, se) = weighed_over(measured, error, scale, counted, inline);
    ((weighed + crate::compensate::inline_count_cost() as i64).max(0) as u64, se)
}

/// The counted path's measurement over a reference path weighed with its prior (`over_reference`),
/// with the standard error of the result.
fn weighed_over(measured: f64, error: f64, scale: f64, counted: i64, reference: i64) -> (i64, f64) {
    let full = (counted - reference) as f64;
    let prior = full * scale;
    let spread = prior.max(full);
    (weighed_toward(measured, error, prior, spread).round() as i64, combined_se(error, spread))
}

/// How far timing's in-place difference (`difference`, weighed) is from its calibration, as a
/// factor (1 where there is no calibration to compare with, 0 where timing costs nothing).
fn timing_scale(difference: i64, kind: usize, pathed: bool) -> f64 {
    match calibrated(kind, pathed) {
        Some((timed, counted)) if timed > counted => difference.max(0) as f64 / (timed - counted) as f64,
        _ => 1.0,
    }
}

/// The calibrated counted pair, switched-off pair, inline count and dispatch costs of `kind`
/// (scaled): the latest recalibration's (`compensate::untimed_costs`), as `calibrated`'s.
///
/// The dispatch (`overhead::Untimed::dispatch`, the entry checks of a routine that counts
/// inline, switched off) is what a callpath leaf's calls cost over the plain code before any
/// probe runs. Both windows of its bare reference run it, so what they measure leaves it out:
/// the ground truth's floor (every event switched off against the plain kernel, the dispatch
/// alone) was charged nothing in any callpath context, 0.5 to 1.5 ns an event where the
/// kernel's work is independent (branchy, nested, recursion, madd), about 0 in a dependency
/// chain's shadow (chain, siblings). It is the bare reference path's cost, and part of every
/// other calibrated path of a routine that runs it (`split`), scaled with it (`tally_path`).
pub(super) fn calibrated_references(kind: usize) -> Option<(i64, i64, i64, i64)> {
    overhead::costs()?;
    let untimed = crate::compensate::untimed_costs();
    Some((
        untimed.counted[kind] as i64,
        untimed.off[kind] as i64,
        untimed.inline as i64,
        untimed.dispatch as i64,
    ))
}

/// `calibrated_references`' costs of a routine whose calls run its dispatch (`dispatched`) or
/// not: the counted and switched-off paths with it (their calibrations call the probes
/// directly), the inline count as calibrated (its replica runs it), and the dispatch, or 0
/// where the routine has none.
fn with_dispatch(
    (counted, off, inline, dispatch): (i64, i64, i64, i64),
    dispatched: bool,
) -> (i64, i64, i64, i64) {
    let dispatch = if dispatched { dispatch } else { 0 };
    (counted + dispatch, off + dispatch, inline, dispatch)
}

/// The counted pair's cost where no window measured it (its tally windows were interrupted: a
/// caller that returns after a few calls, as BT's line solver after its 5x5 blocks): the
/// calibrated one, the latest recalibration's. A slack model stood here, which
/// took the counted pair to hide in idle issue slots wherever the timed difference came out
/// below its calibration, and charged nothing there. In BT (its three block kernels) the
/// difference of one event moved between 25 and 45 ns from estimation to estimation, a third of
/// the estimates charged no counted cost, while BT with every call counted measured its counted
/// path at 4 to 10 ns a call in place: compensated main kept 3 ns a probed call (both by
/// `scripts/nas-paired`).
/// With the calibration, the ground truth's contexts came within ±5 % in 31 of 40 cases
/// against 20 of 40 (two runs of each, issue 23's notes).
pub(super) fn counted_calibrated(kind: usize, pathed: bool) -> u64 {
    calibrated(kind, pathed).map_or(0, |(_, counted)| counted.max(0) as u64)
}

/// The calibrated timed and counted pair costs of `kind` (scaled), the latest recalibration's:
/// the counted one, or with `pathed` the one kept on the stack untimed times what the run's
/// leaves measured of it (`population::PATHED`).
pub(super) fn calibrated(kind: usize, pathed: bool) -> Option<(i64, i64)> {
    let (timed, counted, untimed) = calibrated_untimed(kind)?;
    let untimed =
        if pathed { crate::population::PATHED.apply(untimed.max(0) as u64) as i64 } else { counted };
    Some((timed, untimed))
}

/// The calibrated timed, counted and pathed pair costs of `kind` (scaled), as `calibrated`'s
/// but the pathed one as calibrated (not scaled by what the leaves measured). Each is its own
/// latest recalibration's: they do not move in proportion (`overhead::Untimed`).
pub(super) fn calibrated_untimed(kind: usize) -> Option<(i64, i64, i64)> {
    overhead::costs()?;
    let (now, untimed) = (crate::compensate::calibrated_pair_cost(kind), crate::compensate::untimed_costs());
    Some((now as i64, untimed.counted[kind] as i64, untimed.pathed[kind] as i64))
}

/// The measured difference `mean` (standard error `se`) weighed with the calibrated one by
/// their precisions (inverse-variance weighting). The calibration's spread in place is taken as
/// its own size: in place a pair costs from a quarter to several times its calibrated cost. So
/// a precise measurement keeps its value, while one buried in its event's noise (a routine
/// whose own work varies by far more than a probe costs, where 25 window pairs measured
/// 196 ± 303 ns for a 20 ns pair) moves to the calibration instead of charging that noise to
/// every call.
pub(super) fn weighed(mean: f64, se: f64, kind: usize, pathed: bool) -> f64 {
    match calibrated(kind, pathed) {
        Some((timed, counted)) => precision_weighted(mean, se, (timed - counted) as f64),
        None => mean,
    }
}

/// The standard error of `weighed`'s result: the measurement's and the calibration's precisions
/// add up.
pub(super) fn weighed_se(se: f64, kind: usize, pathed: bool) -> f64 {
    match calibrated(kind, pathed) {
        Some((timed, counted)) => combined_se(se, (timed - counted) as f64),
        None => se,
    }
}

/// The standard error of `weighed_toward`'s result for a measurement of standard error `se` and
/// a prior of spread `spread`: their precisions add up (`se` as it is where either is not
/// positive, as `weighed_toward` then keeps the measurement).
pub(super) fn combined_se(se: f64, spread: f64) -> f64 {
    if spread <= 0.0 || se <= 0.0 {
        return se;
    }
    (se.powi(-2) + spread.powi(-2)).powf(-0.5)
}

/// `mean` (standard error `se`) and `prior` (spread `prior`), weighed by their precisions.
pub(super) fn precision_weighted(mean: f64, se: f64, prior: f64) -> f64 {
    weighed_toward(mean, se, prior, prior)
}

/// `mean` (standard error `se`) and `prior` (spread `spread`), weighed by their precisions.
pub(super) fn weighed_toward(mean: f64, se: f64, prior: f64, spread: f64) -> f64 {
    if spread <= 0.0 || se <= 0.0 {
        return mean;
    }
    let (measured, calibration) = (se.powi(-2), spread.powi(-2));
    (mean * measured + prior * calibration) / (measured + calibration)
}

/// A callpath parent's pathed pair in place (scaled), under its timed pair by `difference` (its
/// windows' timed less pathed, weighed): the pathed pair's calibration scaled as that difference
/// moved from its calibrated one (`tally_path`'s model: the timed pair holds the pathed one's
/// work, the frame and the node step, plus the clock reads; in place both grow alike), else
/// the run's pathed scale from the leaves (`counted_calibrated`). A parent has no window that
/// leaves its frame off the stack (its children's paths would change), and the leaves' scale
/// held for it badly: Lua's `luaD_precall` and `luaV_execute` cost about 34 ns a call kept on
/// the stack in place (issue 23's thirty-seventh note) where the leaves' scale charged 19.5 to
/// 29; their differences, 106 and 116 ns against 71 calibrated, put them at 31 and 34.
/// With `dispatch` (scaled, 0 where the parent runs none), the dispatch its calls run in
/// both windows is part of both pairs, scaled with them.
///
/// At least what the run's latest leaves measured the pathed pair at (the median of their ratios
/// to its calibration, `population::PATHED_LATEST`, with three or more): the model holds where the
/// pathed pair's work grows as the clock reads' pair does, not where the tree's lines cost
/// more than the clock (a call-dense program whose nodes the program's own data evicts). In
/// Lua's string kernel (`words`, callpaths throttled: `scripts/nas-paired --program lua
/// --truth EVENT` with lua_steps.lua's step that kernel alone) `match` cost 13.5 ns a pathed
/// call in place and `luaS_newlstr` 16.2, where the model charged 10.8 and 14.0 and the leaves'
/// pool put the pair at 13.4: compensated steps 1.37 ns a probed call above the plain copy's
/// with the model alone, 0.56 with the larger of the model and the pool (4 processes each,
/// interleaved). The pool's mean is not robust enough for a floor (`population::Latest`).
fn pathed_under(difference: i64, kind: usize, dispatch: i64) -> u64 {
    let calibrated = calibrated_untimed(kind).map(|(timed, _, pathed)| (timed, pathed));
    let leaves = calibrated
        .zip(crate::population::PATHED_LATEST.median())
        .map(|((_, pathed), ratio)| (pathed.max(0) as f64 * ratio).round() as u64 + dispatch.max(0) as u64);
    let pooled = counted_calibrated(kind, true) + dispatch.max(0) as u64;
    pathed_pair(difference, calibrated, dispatch, leaves, pooled)
}

/// `pathed_under` from the calibrated timed and pathed pairs, what the latest leaves measured of
/// the pathed pair (their median, `leaves`) and the pool all pathed calls without an estimate
/// take (`pooled`), all scaled: the difference's model where the calibration allows it, at
/// least the leaves' median; else the pool.
fn pathed_pair(
    difference: i64,
    calibrated: Option<(i64, i64)>,
    dispatch: i64,
    leaves: Option<u64>,
    pooled: u64,
) -> u64 {
    match calibrated {
        Some((timed, pathed)) if timed > pathed && pathed > 0 && difference > 0 => {
            tally_path(difference, timed + dispatch, pathed + dispatch).max(leaves.unwrap_or(0))
        }
        _ => pooled,
    }
}

/// What the tally path itself costs in place (scaled), which no window sees: its calibrated
/// cost, that of the switched-off pair (`off`: a probe call and a few loads), scaled as the
/// counted path's cost over it moved from its calibration (`measured` in place against
/// `counted - off` calibrated), and at most that measured part. Both are the same kind of work
/// (calls, loads and stores of the runtime's lines), which costs nothing in a dependency
/// chain's shadow, about its calibration beside independent work, and many times it where the
/// program keeps cache misses in flight (the same for a bare count's reference).
///
/// It was capped at the calibration, on the argument that next to misses the counted path
/// grows by its per-event lines (the record, the cost and estimate tables) while the tally
/// path touches only what every probe touches; compensated main had then come out 6 % and
/// 10 % low on xz and SQLite's flat profiles with the scaled model. The ground truth refutes
/// the argument: in its misses context the inline count cost 12.4 ns a call over the
/// switched-off code in place (`probe-context --truth`) and was charged 3.3, the bare count's
/// calibration (0.5) plus what the bare windows measured the inline count at over a bare count
/// (about 2.8): so a bare count, which touches only the thread state, cost about 9.6 ns there,
/// and a path of shared lines grows as much. Uncapped, interleaved with the cap (three rounds
/// of `probe-context --strategies inplace --placement late --env INSTRUMENT_THROTTLE=1`): the
/// callpath rows' summed absolute error 27.2 -> 21.4 ns an event (misses -11.5 -> -6.5, none
/// worse beyond 0.5 ns), the flat rows alike; SQLite's callpath run +1.3 ±2.6 ns a probed call
/// closer, its flat run and Lua's unchanged (-0.25 ±0.90, 0.00 ±0.49; `scripts/nas-paired`).
pub(super) fn tally_path(measured: i64, counted: i64, off: i64) -> u64 {
    let full = counted - off;
    if full <= 0 || off <= 0 || measured <= 0 {
        return 0;
    }
    let scaled = i128::from(off) * i128::from(measured) / i128::from(full);
    scaled.min(i128::from(measured)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overhead::STANDARD;

    #[test]
    fn the_tally_path_costs_its_calibration_scaled_as_the_measured_counted_path_up_or_down() {
        // Calibrated: counted 700, switched off 200, so the counted path over the tally path is 500.
        assert_eq!(tally_path(500, 700, 200), 200, "as calibrated");
        assert_eq!(tally_path(0, 700, 200), 0, "a dependency chain's shadow");
        assert_eq!(tally_path(250, 700, 200), 100, "half hidden");
        assert_eq!(tally_path(5000, 700, 200), 2000, "next to cache misses: scaled up as well");
        assert_eq!(tally_path(-40, 700, 200), 0, "a noisy negative measurement");
        assert_eq!(tally_path(500, 200, 200), 0, "no calibration to scale");
        assert_eq!(tally_path(100, 700, 650), 100, "at most the measured part");
    }

    #[test]
    fn a_parents_pathed_pair_is_the_larger_of_its_differences_model_and_the_leaves_median() {
        // Lua's `match` (tenths of a ns): calibrated timed 402, pathed 99; its difference in
        // place 363 puts the pair at 118, the leaves' median at 134.
        assert_eq!(pathed_pair(363, Some((402, 99)), 0, Some(134), 120), 134);
        // A difference half again its calibration: the model's 148 stands over the leaves.
        assert_eq!(pathed_pair(454, Some((402, 99)), 0, Some(134), 120), 148);
        // Fewer than three leaves measured: the model alone.
        assert_eq!(pathed_pair(363, Some((402, 99)), 0, None, 150), 118);
        // The dispatch is part of both calibrated pairs.
        assert_eq!(pathed_pair(454, Some((402, 99)), 4, None, 0), 103 * 454 / 303);
        // Without a calibration, or a difference, the pool.
        assert_eq!(pathed_pair(363, None, 0, Some(134), 120), 120);
        assert_eq!(pathed_pair(0, Some((402, 99)), 0, Some(134), 120), 120);
    }

    #[test]
    fn the_dispatch_both_windows_run_is_charged_scaled_as_the_path_it_is_added_to() {
        // Calibrated: counted 700, switched off 200, inline count 90, the dispatch 40.
        let calibrated = (700, 200, 90, 40);
        assert_eq!(with_dispatch(calibrated, true), (740, 240, 90, 40), "the inline count runs it already");
        assert_eq!(with_dispatch(calibrated, false), (700, 200, 90, 0), "no dispatch: as calibrated");
        // A callpath leaf's shadow windows measured 1400 over its bare count precisely: the
        // dispatch, the rest of the bare path, charged on top, scaled by 1400 / 700.
        let (counted, _) = over_reference(1400.0, 1.0, 2.0, 740, 40);
        assert_eq!(counted, 1400 + 80);
        let (without, _) = over_reference(1400.0, 1.0, 2.0, 700, 0);
        assert_eq!(without, 1400, "no dispatch: the measurement alone");
        // A pathed parent: timed 4000 and pathed 1000 calibrated, 6000 apart in place (2 x): its
        // pathed pair scaled alike, and a dispatch of 50 with it.
        assert_eq!(tally_path(6000, 4000, 1000), 2000);
        assert_eq!(tally_path(6000, 4050, 1050), 2100);
    }

    #[test]
    fn a_precise_measurement_keeps_its_value_and_a_noisy_one_moves_to_the_calibration() {
        // Without a calibration (no start-up measurement in unit tests) the measurement stands.
        assert_eq!(weighed(196.0, 303.0, STANDARD, false), 196.0);
        let flux_jacobian = precision_weighted(19.0, 2.0, 20.0);
        assert!((flux_jacobian - 19.01).abs() < 0.01, "{flux_jacobian}");
        let binvrhs = precision_weighted(196.0, 303.0, 20.0);
        assert!((binvrhs - 20.77).abs() < 0.01, "{binvrhs}");
        assert_eq!(precision_weighted(-126.0, 0.0, 20.0), -126.0, "no spread: nothing to weigh");
    }

    #[test]
    fn the_reference_is_the_cheapest_measured_path_else_the_calibration() {
        assert!(
            matches!(Reference::of(Some((-5.0, 0.5)), None, Some((4.0, 1.0))), Reference::Inline(m, _) if m == 5.0),
            "an inline count cheaper in place than the tally path"
        );
        assert!(
            matches!(Reference::of(Some((-2.0, 0.5)), None, Some((4.0, 1.0))), Reference::Tally(m, _) if m == 4.0),
            "an inline count dearer in place than the tally path (its stores next to randlc's chain)"
        );
        assert!(
            matches!(Reference::of(Some((3.0, 0.5)), None, Some((4.0, 1.0))), Reference::Tally(m, _) if m == 4.0)
        );
        assert!(
            matches!(Reference::of(Some((3.0, 0.5)), None, None), Reference::None),
            "a dearer inline count"
        );
        assert!(matches!(Reference::of(None, None, None), Reference::None));
        assert!(
            matches!(Reference::of(None, Some((6.0, 1.0)), Some((4.0, 1.0))), Reference::Bare(m, _) if m == 6.0),
            "a callpath leaf's bare count before the tally path"
        );
        assert!(
            matches!(Reference::of(None, Some((3.0, 1.0)), Some((4.0, 1.0))), Reference::Tally(m, _) if m == 4.0),
            "a bare count dearer in place than the tally path"
        );
        assert!(
            matches!(Reference::of(Some((-7.0, 0.5)), Some((6.0, 1.0)), None), Reference::Inline(m, _) if m == 7.0)
        );
        assert!(
            matches!(Reference::of(None, Some((26.0, 8.0)), Some((76.0, 41.0))), Reference::Bare(m, _) if m == 26.0),
            "a larger measurement that is mostly noise does not win"
        );
    }

    #[test]
    fn a_noisy_counted_measurement_weighed_to_its_prior_is_known_to_about_the_priors_spread() {
        // Calibrated counted 700 over a reference of 200; timing's difference in place twice its
        // calibration: the prior is 1000, known to its own size.
        let (counted, se) = over_reference(20.0, 1.5e5, 2.0, 700, 200);
        assert!((se - 1000.0).abs() < 1.0, "the prior's spread, not the measurement's 1.5e5: {se}");
        assert_eq!(counted, 1000 + 400, "the prior and the tally path, scaled alike");
        let (_, clear) = over_reference(900.0, 10.0, 2.0, 700, 200);
        assert!((clear - 10.0).abs() < 0.1, "a clear measurement keeps its error: {clear}");
        assert_eq!(combined_se(0.0, 4000.0), 0.0);
        assert_eq!(combined_se(7.0, 0.0), 7.0);
    }

    #[test]
    fn timings_scale_moves_the_counted_prior_and_a_noisy_measurement_little() {
        // BT's binvrhs: its counted call measured 65 +-88 over the tally path, calibrated 23
        // over it (tenths of a ns), timing's difference as calibrated.
        let (counted, _) = over_reference(650.0, 880.0, 1.0, 36, 13);
        assert!((23 + 13..=23 + 14).contains(&counted), "about the calibration: {counted}");
        // Next to cache misses timing's difference is eight times its calibration, and counting's
        // prior with it; a clear measurement keeps its value either way.
        let (misses, _) = over_reference(20.0, 1.5e5, 8.0, 36, 13);
        assert!((184 + 104 - 1..=184 + 104 + 1).contains(&misses), "{misses}");
        let (clear, _) = over_reference(150.0, 1.0, 8.0, 36, 13);
        assert_eq!(clear, 150 + 84);
        // A dependency chain's shadow (timing costs nothing): the prior is nothing, known to the
        // calibration's size.
        let (shadow, se) = over_reference(0.0, 1.5e5, 0.0, 36, 13);
        assert_eq!((shadow, se.round()), (0, 23.0));
        assert_eq!(timing_scale(500, STANDARD, false), 1.0, "no calibration in unit tests");
    }

    #[test]
    fn a_clear_counted_minus_tally_measurement_keeps_its_value_and_a_noisy_one_does_not() {
        // Calibrated counted minus switched off: 1 ns; timing's difference in place: 130 ns.
        let misses = weighed_toward(40.0, 1.0, 1.0, 130.0);
        assert!((misses - 40.0).abs() < 0.01, "{misses}");
        let noisy = weighed_toward(40.0, 500.0, 1.0, 2.0);
        assert!((noisy - 1.0).abs() < 0.01, "{noisy}");
    }
}
