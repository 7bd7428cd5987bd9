//! Compensation end to end: a program with nothing but main to compensate keeps its time; on
//! call-heavy work the compensated main lands near the main-only (MO) time while the raw time is
//! far off; the profile says what was compensated and by how much. (The accuracy targets are
//! measured by `instrument experiment`, not asserted here: the machines are noisy.)

use instrument_profile::{Function, Profile};
use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn main_times(
    dir: &std::path::Path,
    program: &std::path::Path,
    args: &[&str],
    compensate: Option<&str>,
) -> (f64, Option<f64>, instrument_profile::Profile) {
    for old in profile_paths(dir) {
        std::fs::remove_file(old).unwrap();
    }
    let mut command = Command::new(program);
    command.args(args).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir);
    if let Some(strategy) = compensate {
        // One calibrated Δi for the whole run, so that the calibrated strategy removes exactly
        // calls x Δi (recalibration has its own test).
        command.env("INSTRUMENT_COMPENSATE", strategy).env("INSTRUMENT_RECALIBRATE_MS", "0");
        // Every call timed, as these tests' arithmetic takes them (compensation throttles by
        // default: tests/tests/throttling.rs has it).
        command.env("INSTRUMENT_THROTTLE", "0");
    }
    assert_success(&run(&mut command), "program");
    let profile = only_profile(dir);
    let main = function(&profile, "main").clone();
    (main.stats.inclusive_ns as f64, main.stats.compensated.map(|c| c.inclusive_ns as f64), profile)
}

/// The profile of `c-fixtures/<fixture>.c` built with the defaults and run with `arg` under the
/// default (in-place) compensation.
fn compensated_profile(fixture: &str, arg: &str) -> instrument_profile::Profile {
    let dir = scratch();
    let program = build_instrumented(dir.path(), fixture, &[]);
    main_times(dir.path(), &program, &[arg], Some("1")).2
}

/// The in-place estimates of routine `name` in `profile` (compensated with the in-place strategy).
fn estimates_of<'a>(
    profile: &'a instrument_profile::Profile,
    name: &str,
) -> Vec<&'a instrument_profile::InPlaceCost> {
    let id = function(profile, name).id;
    profile.compensation.as_ref().expect("compensated").in_place.iter().filter(|e| e.id == id).collect()
}

fn main_only_selection(dir: &std::path::Path) -> String {
    let path = dir.join("main-only.txt");
    std::fs::write(&path, "BEGIN_INCLUDE_LIST\nmain\nEND_INCLUDE_LIST\n").unwrap();
    format!("--instrument-select={}", path.display())
}

#[test]
fn with_no_other_event_compensation_changes_main_by_its_own_probe_cost_only() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "busywait", &[&main_only_selection(dir.path())]);
    let (raw, compensated, profile) = main_times(dir.path(), &program, &[], Some("1"));
    let compensated = compensated.expect("a compensated time");
    let c = profile.compensation.as_ref().expect("compensation section");
    assert!(
        raw - compensated >= 0.0 && raw - compensated < 100.0,
        "raw {raw} ns, compensated {compensated} ns"
    );
    // Main loses its own share δ and nothing else. Its two times are each rounded to whole ns
    // and δ to whole ticks: up to 1 ns and half a tick apart (seen 1.03 ns on a loaded machine).
    assert!(
        (raw - compensated) <= c.routine.own_ns + 2.0,
        "removed {} ns, δ {} ns",
        raw - compensated,
        c.routine.own_ns
    );
    assert_eq!(c.strategy, instrument_profile::Strategy::InPlace, "the default strategy");
    assert!(c.in_place.is_empty(), "main alone is never hot: {:?}", c.in_place);
    // A wall-clock bound against a runaway calibration (it takes 9 to 15 ms on an idle 2-core
    // VM: 5 to 12 rounds, more when noise keeps lowering the minima). The time the run waited
    // for a core is allowed for; a loaded machine also slows each round without a wait (CI
    // measured 29.8 ms with 1.8 ms waited, the file's other tests beside it), hence 4x.
    let waited = profile.totals.waited_ns;
    assert!(
        c.calibration_ns < 60_000_000 + waited,
        "calibration took {} ns, waited {waited}",
        c.calibration_ns
    );
    assert!(c.routine.inclusive_overhead_ns > c.routine.own_ns && c.routine.own_ns > 0.0);
    assert!(
        (c.routine.exclusive_overhead_ns - (c.routine.inclusive_overhead_ns - c.routine.own_ns)).abs() < 1e-6
    );
    assert_eq!(c.negative_results, 0);
}

#[test]
fn call_heavy_work_compensates_toward_the_main_only_time() {
    let dir = scratch();
    let mo = build_instrumented(dir.path(), "compensation", &[&main_only_selection(dir.path())]);
    let pa_dir = scratch();
    let pa = build_instrumented(pa_dir.path(), "compensation", &[]);
    let calls = 1_000_000u64;
    let arg = calls.to_string();
    let mo_ns = (0..3).map(|_| main_times(dir.path(), &mo, &[&arg], None).0).fold(f64::MAX, f64::min);
    // Fenced: a calibrated constant that also holds in place, so main moves toward MO and the
    // removed time is exactly calls x Δi.
    let (raw, compensated, profile) = main_times(pa_dir.path(), &pa, &[&arg], Some("fenced"));
    let compensated = compensated.unwrap();
    assert!(raw > mo_ns * 1.2, "the compensated run is visibly slower than MO: {raw} vs {mo_ns}");
    assert!(
        (compensated - mo_ns).abs() < (raw - mo_ns).abs(),
        "compensation moves main toward MO: MO {mo_ns}, raw {raw}, compensated {compensated}"
    );
    // The arithmetic: main loses the calibrated pair cost of each of its descendant events and
    // its own share (the loop in main has no loop probes at the default event kinds).
    let c = profile.compensation.as_ref().unwrap();
    let expected = calls as f64 * c.routine.inclusive_overhead_ns + c.routine.own_ns;
    let removed = raw - compensated;
    assert!((removed - expected).abs() / expected < 0.01, "removed {removed} ns, expected {expected} ns");
    assert_eq!(function(&profile, "step").stats.calls, calls);
    assert!(function(&profile, "step").stats.compensated.is_some(), "every event carries compensated times");
}

/// Recalibration every 5 ms on a run of some 30-100 ms: a round in each period, the counts and the
/// callpaths are those of the program alone, and the time removed lies between what the
/// lowest and the highest measured Δi would remove, plus the rounds' own time, which the overhead
/// figure counts too.
#[test]
fn recalibration_while_running_changes_no_count_and_removes_its_own_time() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "compensation", &[]);
    let calls = 1_000_000u64;
    let output = run(Command::new(&program)
        .arg(calls.to_string())
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_COMPENSATE", "calibrated")
        .env("INSTRUMENT_RECALIBRATE_MS", "5")
        // Every call timed, as the arithmetic below takes them.
        .env("INSTRUMENT_THROTTLE", "0")
        .env("INSTRUMENT_CALLPATH", "all"));
    assert_success(&output, "compensation fixture");
    let profile = only_profile(dir.path());
    let c = profile.compensation.as_ref().unwrap();
    let r = c.recalibration.as_ref().expect("recalibrated while running");
    // One round per 5 ms period of the run (less the first period, and one that a round's
    // exit may straddle): how many depends on this machine's speed, not a fixed count. A round
    // that a preemption cuts short is not used (`recalibrate::record`): under the whole suite on
    // two cores one of 25 was not, with a build beside it 17 of 50. At least half.
    let main = function(&profile, "main");
    let periods = (main.stats.inclusive_ns / 5_000_000).saturating_sub(2).max(2);
    assert!(r.rounds >= periods / 2, "{periods} periods of 5 ms: {r:?}");
    assert!(r.cost_ns > 0 && r.routine_low_ns <= r.routine_high_ns, "{r:?}");
    // The rounds measure the counted pair too, cheaper than the timed one (a call and a few
    // loads against two clock reads besides).
    assert!(r.counted_low_ns > 0.0 && r.counted_low_ns <= r.counted_high_ns, "{r:?}");
    assert!(r.counted_high_ns < r.routine_low_ns, "{r:?}");
    assert_eq!(function(&profile, "step").stats.calls, calls);
    assert_eq!(function(&profile, "main").stats.child_calls, calls);
    assert_eq!(profile.functions.len(), 2, "no calibration event shows: {:?}", profile.functions);
    let ids: Vec<u32> = profile.functions.iter().map(|f| f.id).collect();
    let paths = &profile.callpaths.as_ref().unwrap().threads[0].paths;
    assert_eq!(paths.len(), 2, "main and main => step only: {paths:?}");
    assert!(paths.iter().all(|p| p.path.iter().all(|id| ids.contains(id))), "{paths:?}");
    let removed = main.stats.inclusive_ns as f64 - main.stats.compensated.unwrap().inclusive_ns as f64;
    let start = c.routine.inclusive_overhead_ns;
    let (low, high) = (start.min(r.routine_low_ns), start.max(r.routine_high_ns));
    let probes = removed - r.cost_ns as f64 - c.routine.own_ns;
    let (least, most) = (calls as f64 * low, calls as f64 * high);
    assert!(probes > least * 0.99 && probes < most * 1.01, "removed {removed} ns: {least}..{most} + {r:?}");
    // The overhead figure holds the rounds' time as what the run spent measuring.
    let overhead = profile.overhead.as_ref().expect("overhead section");
    assert_eq!(overhead.recalibration_ns, r.cost_ns as f64, "{overhead:?}");
    assert!(overhead.total_ns > overhead.recalibration_ns + calls as f64 * low * 0.99, "{overhead:?}");
}

/// The default strategy measures the hot routine's probe cost in place: `step` gets an estimate
/// from enough window pairs, every call is still counted (the counted windows' calls as untimed
/// ones), main's child calls are exact, and main loses its descendants' in-place cost: between
/// what the smaller and the larger of the in-place and calibrated costs would remove.
#[test]
fn the_hot_routine_is_compensated_with_its_cost_measured_in_place() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "compensation", &[]);
    let mo_dir = scratch();
    let mo = build_instrumented(mo_dir.path(), "compensation", &[&main_only_selection(mo_dir.path())]);
    let calls = 1_000_000u64;
    let arg = calls.to_string();
    let mo_ns = (0..3).map(|_| main_times(mo_dir.path(), &mo, &[&arg], None).0).fold(f64::MAX, f64::min);
    let (raw, compensated, profile) = main_times(dir.path(), &program, &[&arg], Some("1"));
    let c = profile.compensation.as_ref().unwrap();
    assert!(
        (compensated.unwrap() - mo_ns).abs() < (raw - mo_ns).abs(),
        "compensation moves main toward MO: MO {mo_ns}, raw {raw}, compensated {compensated:?}, {:?}, {:?}",
        c.in_place,
        c.routine
    );
    let step = function(&profile, "step");
    let estimates = estimates_of(&profile, "step");
    // Offered at 2^14 timed calls and every power of four after: 4^7, 4^8, 4^9 < 10^6.
    assert!(!estimates.is_empty() && estimates.len() <= 3, "{estimates:?}");
    for e in &estimates {
        assert!(e.pairs >= 24 && e.window >= 16, "{e:?}");
        assert!(e.timed_ns > 0.0 && e.counted_ns >= 0.0, "{e:?}");
        assert!((e.timed_ns - e.counted_ns - e.difference_ns).abs() < 0.01, "{e:?}");
    }
    assert_eq!(step.stats.calls, calls);
    // Each estimation spends at most an eighth of the calls so far, half of it counted.
    assert!(
        step.stats.untimed_calls >= 24 * 16 && step.stats.untimed_calls < calls / 12,
        "{}",
        step.stats.untimed_calls
    );
    assert_eq!(function(&profile, "main").stats.child_calls, calls);
    assert_eq!(profile.totals.unmatched_exits, 0, "every window boundary leaves the shadow stack true");
    let removed = raw - compensated.unwrap() - c.routine.own_ns;
    // Timed calls cost main a timed pair each (an estimate's or the calibrated one), the calls
    // counted in the estimation windows a counted pair (an estimate's, or the calibrated one).
    let costs = estimates.iter().map(|e| e.timed_ns).chain([c.routine.inclusive_overhead_ns]);
    let (low, high) = costs.fold((f64::MAX, 0.0f64), |(l, h), x| (l.min(x), h.max(x)));
    let counted = estimates.iter().map(|e| e.counted_ns).fold(overhead_counted_ns(&profile), f64::max);
    let (timed, untimed) = ((calls - step.stats.untimed_calls) as f64, step.stats.untimed_calls as f64);
    let (least, most) = (timed * low, timed * high + untimed * counted);
    assert!(
        removed > least * 0.99 && removed < most * 1.01,
        "removed {removed} ns: {least}..{most}, {estimates:?}"
    );
}

/// The calls of a hot routine that its in-place estimation's counted windows leave untimed keep
/// their time: each is estimated at the routine's compensated mean so far (untimed.rs), moved
/// from the caller's exclusive time, as a throttled routine's are. Before, up to one call in twelve of
/// each hot routine was left in its caller's time (BT.W: matvec_sub's time 6 % low).
#[test]
fn a_hot_routines_calls_counted_in_its_windows_keep_their_time() {
    let calls = 1_000_000u64;
    let profile = compensated_profile("compensation", &calls.to_string());
    let step = function(&profile, "step");
    let untimed = step.stats.untimed_calls;
    assert!(untimed > 0, "the estimation counted some calls");
    let (compensated, estimated) =
        (step.stats.compensated.unwrap(), step.stats.estimated.expect("estimated"));
    let per_call = compensated.inclusive_ns as f64 / (calls - untimed) as f64;
    let added = (estimated.inclusive_ns - compensated.inclusive_ns) as f64;
    // The estimate is the compensated mean of the calls timed before the estimation began,
    // compensated with the costs known then (the calibration, before the first estimate): some
    // 0.83 of the run's mean when the machine is quiet. `step` takes about 3 ns once
    // compensated, so a nanosecond more or less in its in-place cost under load (the suite's
    // other tests) moves that mean by a third: 1.71 was seen. Before the fix, nothing was added.
    let ratio = added / (untimed as f64 * per_call);
    assert!(
        (0.33..3.0).contains(&ratio),
        "{untimed} untimed calls of {per_call} ns each, estimated at {added} ns in all"
    );
    let main = function(&profile, "main");
    let main_estimated = main.stats.estimated.expect("main's exclusive time held the untimed calls");
    let moved = main.stats.compensated.unwrap().exclusive_ns - main_estimated.exclusive_ns;
    assert!((moved as f64 - added).abs() <= 2.0, "main lost {moved} ns, step gained {added} ns");
    assert_eq!(main_estimated.inclusive_ns, main.stats.compensated.unwrap().inclusive_ns);
}

/// The calibrated cost of a counted-only routine probe pair, from the profile's overhead section.
fn overhead_counted_ns(profile: &instrument_profile::Profile) -> f64 {
    profile.overhead.as_ref().expect("overhead section").costs.routine.counted_ns
}

/// An event whose calls are separated by much of its caller's work (c-fixtures/gapped.c: three
/// times step's own time between two calls, a few dozen calls a window) is estimated at what its
/// probes cost, not below it: every window runs from an entry of the event to an entry, so timed
/// and counted windows hold as many gaps of the caller's work. With timed windows ending at
/// exits, the difference came out low by about a gap per window's calls: -14.6 to -15.5 ns
/// (standard errors 0.3-0.6) in 3 of 3 runs here, against +9.3 to +10.5 ns since.
///
/// The estimation has only the few thousand calls after step becomes hot, a few milliseconds:
/// once in CI, with this file's other tests running beside it, it measured 196 ns (standard
/// error 22) where a few calibrated pairs are the bound. So the program runs up to three times
/// and one run within the bounds passes; the bug this guards against is systematic and fails
/// all three.
#[test]
fn the_callers_work_between_calls_is_not_taken_for_probe_cost() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "gapped", &[]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let profile = main_times(dir.path(), &program, &["20000"], Some("1")).2;
        let c = profile.compensation.as_ref().unwrap();
        let estimates = estimates_of(&profile, "step");
        assert!(!estimates.is_empty(), "step is hot from 2^14 calls: {:?}", c.in_place);
        assert_eq!(function(&profile, "step").stats.calls, 20000);
        assert_eq!(profile.totals.unmatched_exits, 0);
        let calibrated = c.routine.inclusive_overhead_ns;
        let within = |e: &&instrument_profile::InPlaceCost| {
            e.difference_ns > -2.0 * e.standard_error_ns && e.difference_ns < 4.0 * calibrated
        };
        if estimates.iter().all(within) {
            return;
        }
        seen.push(format!("calibrated pair {calibrated} ns: {estimates:?}"));
    }
    panic!("a timed pair costs between nothing and a few calibrated pairs, in no run of three: {seen:#?}");
}

/// Kernels of one loop that become hot together (c-fixtures/kernels.c: five, equally called, so
/// each reaches 2^14 and 2^16 calls within a call of the others) all get their probe cost
/// measured in place: an offer that finds another estimation under way waits for it. Before,
/// the first kernel won both offers and the other four kept the start-up calibration.
///
/// They wait counted (rt/src/inplace/, so that their differences add up to what timing all of
/// them costs), for at most an eighth of their calls: each later kernel is counted while it
/// waits and in its own counted windows, the first (k1, which never waits) only in its windows,
/// so each later one has more untimed calls (before: 2112-3476 against k1's 3444; now 4464-5172).
/// At the end every kernel is measured again, not reported throttled or switched off.
#[test]
fn kernels_that_become_hot_together_are_each_measured_in_place() {
    let profile = compensated_profile("kernels", "70000");
    let c = profile.compensation.as_ref().unwrap();
    let mut untimed = Vec::new();
    for name in ["k1", "k2", "k3", "k4", "k5"] {
        let kernel = function(&profile, name);
        assert_eq!(kernel.stats.calls, 70000, "{name}");
        assert!(!kernel.throttled && !kernel.switched_off, "{name} ends measured: {kernel:?}");
        let estimates = estimates_of(&profile, name);
        assert!(!estimates.is_empty(), "{name} measured in place: {:?}", c.in_place);
        assert!(estimates.iter().all(|e| e.pairs >= 24 && e.timed_ns > 0.0), "{estimates:?}");
        untimed.push(kernel.stats.untimed_calls);
    }
    assert!(
        untimed[1..].iter().all(|&later| later > untimed[0]),
        "the later kernels wait counted: untimed calls {untimed:?}"
    );
    assert_eq!(function(&profile, "main").stats.child_calls, 5 * 70000);
    assert_eq!(profile.totals.unmatched_exits, 0);
}

/// What counting a call costs in place is measured, not modelled, where it is far above its
/// calibrated cost (c-fixtures/tally.c: a routine whose calls miss the cache), and the tally
/// windows that measure it lose no count: every call of `touch` is counted, and every call is
/// some caller's child call, also those tallied from `burst`, which returns after three calls and
/// so ends the tally windows it runs in (their executions are then counted at its exit). Which
/// caller a call is charged to is not exact while the caller is itself estimated (its counted
/// windows leave it off the stack), so the child calls are checked in sum.
#[test]
fn counting_is_measured_in_place_and_the_tally_windows_lose_no_call() {
    let profile = compensated_profile("tally", "40");
    assert_eq!(function(&profile, "touch").stats.calls, 40 * 26000);
    assert_eq!(function(&profile, "burst").stats.calls, 40 * 2000);
    let children: u64 = profile.functions.iter().map(|f| f.stats.child_calls).sum::<u64>()
        + profile.loops.iter().map(|l| l.stats.child_calls).sum::<u64>();
    let calls: u64 =
        profile.functions.iter().filter(|f| f.name != "main").map(|f| f.stats.calls).sum::<u64>()
            + profile.loops.iter().map(|l| l.stats.calls).sum::<u64>();
    assert_eq!(children, calls, "every call is a child call of its caller");
    let measured: Vec<_> =
        estimates_of(&profile, "touch").into_iter().filter(|e| e.counted_pairs > 0).collect();
    assert!(!measured.is_empty(), "no tally windows measured touch: {:?}", estimates_of(&profile, "touch"));
    let calibrated = overhead_counted_ns(&profile);
    assert!(
        measured.iter().any(|e| e.counted_ns > 3.0 * calibrated),
        "counting a cache-missing call costs several calibrated counted pairs ({calibrated} ns): {measured:?}"
    );
}

/// A flat parent measured in place (every call timed, late placement, so its entry code can count
/// barely) pairs bare windows with shadow ones, its pending calls flushed by its child's probe in
/// both: they measure its counted call against a bare count, which sees the call into the runtime
/// and the probed copy that its tally windows do not (the ground truth's nested context charged
/// nest_top's counted call 5.7 to 6.1 ns where it cost 9.4 to 10.3). Every call stays
/// counted, the bare ones credited.
#[test]
fn a_flat_parents_bare_windows_measure_its_counted_call_and_lose_no_call() {
    let dir = scratch();
    let late = ["--instrument-placement=late", "--instrument-min-instructions=0"];
    let program = build_instrumented(dir.path(), "nested_throttle", &late);
    let profile = main_times(dir.path(), &program, &["400000", "1"], Some("on")).2;
    assert_eq!(function(&profile, "outer").stats.calls, 400_000);
    assert_eq!(function(&profile, "leaf").stats.calls, 400_000);
    let children: u64 = profile.functions.iter().map(|f| f.stats.child_calls).sum();
    assert_eq!(children, 800_000, "every call is a child call of its caller (main's while outer is untimed)");
    let outer = estimates_of(&profile, "outer");
    assert!(!outer.is_empty(), "outer is hot: {:?}", profile.compensation);
    assert!(
        outer.iter().all(|e| e.bare_pairs >= 10 && e.counted_over_bare_ns.is_some()),
        "bare windows measured outer's counted call: {outer:?}"
    );
    assert!(outer.iter().all(|e| e.inline_count_ns.is_none()), "a parent measured has no inline windows");
}

/// A tally window that a call from another depth ends after a tallied call or two is void, not a
/// measurement (c-fixtures/two_depths.c: `leaf` called from `run` and, through `wrap`, one frame
/// deeper, in turn, so that every tally window of `leaf` ends so): its estimates keep no tally
/// pairs, where each such window once gave one (a time per execution that is mostly the
/// window's ends: SQLite's record compare measured its counted call 130 to 340 ns below the
/// tally path), and every call is still counted and charged to a caller.
#[test]
fn tally_windows_ended_from_another_depth_measure_nothing_and_lose_no_call() {
    let profile = compensated_profile("two_depths", "20");
    assert_eq!(function(&profile, "leaf").stats.calls, 2 * 20 * 20000);
    assert_eq!(function(&profile, "wrap").stats.calls, 20 * 20000);
    // Which caller a call is charged to is not exact while that caller is itself estimated (its
    // counted windows leave it off the stack): the child calls are checked in sum.
    let children: u64 =
        ["main", "run", "wrap", "leaf"].iter().map(|n| function(&profile, n).stats.child_calls).sum();
    assert_eq!(children, 20 + 20 * 20000 * 3, "every call is a child call of its caller");
    let estimates = estimates_of(&profile, "leaf");
    assert!(!estimates.is_empty(), "leaf is estimated");
    assert!(estimates.iter().all(|e| e.counted_pairs == 0), "no tally pairs: {estimates:?}");
}

/// In a callpath profile, an entry whose parent's node cached steps to other children misses the
/// node's cache, which the calibration never does (its loop calls one event): each such miss is
/// charged apart, at a cost timed in place (rt/src/misses.rs). c-fixtures/alternating.c: cycle()
/// calls seven children in turn, one more than the node caches. A step that misses a full cache
/// is let in once in eight such misses (`callpath::admits`), so six of the seven stay cached and
/// about one child a cycle misses (the one left out; each one let in leaves another out for a
/// turn), where caching every miss made every entry of each miss. Unthrottled, so that the
/// children's entries are timed but for their estimations' windows. With six children in turn,
/// all six steps stay cached: no miss but the first steps.
#[test]
fn callpath_steps_that_miss_the_nodes_cache_are_counted_and_charged() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "alternating", &[]);
    let n = 100_000u64;
    let profile = |children: u64| alternating_profile(&program, dir.path(), n, children, "0");
    let (six, _) = profile(6);
    let thread = &six.callpaths.as_ref().expect("callpaths").threads[0];
    // The first steps (from an empty cache) to main, to cycle, to each child and to the start-up
    // calibration's two hidden events.
    assert!(thread.step_misses <= 10, "{} misses with six children in turn", thread.step_misses);

    let (profile, _) = profile(7);
    let thread = &profile.callpaths.as_ref().expect("callpaths").threads[0];
    assert!(
        (n / 2..=2 * n).contains(&thread.step_misses),
        "{} misses in {n} cycles of seven children: about one a cycle",
        thread.step_misses
    );
    assert!(thread.step_miss_ns > 0.0 && thread.step_miss_ns < 1000.0, "{} ns a miss", thread.step_miss_ns);
    assert_overhead_counts_misses(&profile);
}

/// The overhead figure of `profile` (one thread's callpaths) counts the misses' charge besides
/// every event's probe pairs, and what the estimations' window boundaries took.
fn assert_overhead_counts_misses(profile: &Profile) {
    let thread = &profile.callpaths.as_ref().expect("callpaths").threads[0];
    let overhead = profile.overhead.as_ref().expect("overhead section");
    let events: f64 = profile
        .activations()
        .map(|(id, kind, calls, untimed)| overhead.of_event(id, kind, calls, untimed))
        .sum();
    let misses = thread.step_misses as f64 * thread.step_miss_ns;
    assert!(
        (overhead.total_ns - events - misses - overhead.estimation_ns).abs() < 1.0,
        "{} ns = {events} + {misses} + {}",
        overhead.total_ns,
        overhead.estimation_ns
    );
}

/// Throttled, the seven children of c-fixtures/alternating.c's cycle() are counted, and a
/// counted call whose step misses the parent's node cache leaves the counted path in assembly
/// for the probe's body as a timed one does: its misses are counted and charged as a timed
/// entry's are (about one a cycle), where they were charged nothing (SQLite's nas-paired
/// harness, callpaths throttled: -1.92 ±0.79 -> -1.16 ±0.46 ns a probed call, issue 23's note).
#[test]
fn counted_calls_that_miss_the_nodes_cache_are_charged_as_timed_ones() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "alternating", &[]);
    let n = 100_000u64;
    let (profile, children) = alternating_profile(&program, dir.path(), n, 7, "1");
    assert!(children.iter().all(|child| child.throttled), "{children:?}");
    let thread = &profile.callpaths.as_ref().expect("callpaths").threads[0];
    assert!(
        (n / 2..=2 * n).contains(&thread.step_misses),
        "{} misses in {n} cycles of seven counted children: about one a cycle",
        thread.step_misses
    );
    assert_overhead_counts_misses(&profile);
}

/// c-fixtures/alternating.c's `program` run with `n` cycles of `children` children (compensated
/// callpaths, `INSTRUMENT_THROTTLE` = `throttle`), in a directory of its own under `dir`: its
/// profile and the children's routines, each checked to have run `n` times.
fn alternating_profile(
    program: &Path,
    dir: &Path,
    n: u64,
    children: u64,
    throttle: &str,
) -> (Profile, Vec<Function>) {
    let out = dir.join(format!("{children}-{throttle}"));
    std::fs::create_dir_all(&out).expect("a profile directory");
    let mut command = Command::new(program);
    command.args([n, children].map(|a| a.to_string())).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", &out);
    command
        .env("INSTRUMENT_COMPENSATE", "1")
        .env("INSTRUMENT_CALLPATH", "all")
        .env("INSTRUMENT_THROTTLE", throttle)
        .env("INSTRUMENT_RECALIBRATE_MS", "0");
    assert_success(&run(without_instrument_env(&mut command)), "alternating");
    let profile = only_profile(&out);
    let children: Vec<_> = (1..=children).map(|i| function(&profile, &format!("c{i}")).clone()).collect();
    assert!(children.iter().all(|child| child.stats.calls == n), "{children:?}");
    (profile, children)
}

/// A recursive routine is estimated in place: its timed windows end at the exit that leaves
/// none of its activations open, its counted ones at any entry (fib(12): 465 calls a tree,
/// twelve deep). Before, recursive routines kept the calibration (the ground truth's recursion
/// context: 6 to 15 % over-removed). Counts stay exact and every boundary leaves the shadow
/// stack true; with throttling (the default run), a routine throttled at an inner exit starts
/// its windows once the activations open then have closed.
#[test]
fn a_recursive_routine_is_measured_in_place_with_exact_counts() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "recursive_hot", &[]);
    let trees = 20_000u64;
    let args = ["fib", &trees.to_string()];
    let (_, compensated, profile) = main_times(dir.path(), &program, &args, Some("1"));
    let fib = function(&profile, "fib");
    assert_eq!(fib.stats.calls, trees * 465);
    let estimates = estimates_of(&profile, "fib");
    assert!(!estimates.is_empty(), "fib is hot from 2^14 calls: {:?}", profile.compensation);
    for e in &estimates {
        assert!(e.pairs >= 24 && e.timed_ns > e.counted_ns, "{e:?}");
    }
    assert_eq!(profile.totals.unmatched_exits, 0, "every window boundary leaves the shadow stack true");
    let fib_compensated = fib.stats.compensated.expect("compensated").inclusive_ns as f64;
    assert!(fib_compensated <= compensated.expect("main compensated"), "{fib_compensated} {compensated:?}");
    let (_, _, throttled) = main_times(dir.path(), &program, &args, None);
    assert_eq!(function(&throttled, "fib").stats.calls, trees * 465);
    assert_eq!(throttled.totals.unmatched_exits, 0);
}

/// With callpaths a recursive routine is estimated too: it is its own parent, so its counted
/// windows keep it on the shadow stack (the runtime's PATHED mode), and every call stays on its
/// path: the calling-context tree folds the recursion onto one node, which holds every call.
#[test]
fn a_recursive_routine_is_measured_in_place_with_callpaths_on_its_paths() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "recursive_hot", &[]);
    let trees = 20_000u64;
    let output = run(Command::new(&program)
        .args(["fib", &trees.to_string()])
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_COMPENSATE", "1")
        .env("INSTRUMENT_CALLPATH", "all"));
    assert_success(&output, "recursive_hot");
    let profile = only_profile(dir.path());
    assert_eq!(function(&profile, "fib").stats.calls, trees * 465);
    let estimates = estimates_of(&profile, "fib");
    assert!(!estimates.is_empty(), "fib is hot from 2^14 calls: {:?}", profile.compensation);
    assert!(estimates.iter().all(|e| e.pairs >= 24 && e.timed_ns > e.counted_ns), "{estimates:?}");
    assert_eq!(profile.totals.unmatched_exits, 0, "every window boundary leaves the shadow stack true");
    let path = only_profile_path(dir.path());
    let rows = callpath_calls(dir.path(), &[path.to_str().unwrap()]);
    let expected = [("main".to_string(), 1), ("main => fib".to_string(), trees * 465)];
    assert_eq!(rows, expected.into_iter().collect(), "every call on its path");
}

/// A recursion whose outermost activation holds all of its calls (50000 deep) leaves no exit
/// that closes a window within `MAX_OVERRUN` windows: its estimation is given up, and the
/// counts stay exact.
#[test]
fn a_recursion_too_deep_for_windows_is_given_up_with_exact_counts() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "recursive_hot", &[]);
    let (_, _, profile) = main_times(dir.path(), &program, &["deep", "3"], Some("1"));
    let down = function(&profile, "down");
    assert_eq!(down.stats.calls, 3 * 50_001);
    assert!(estimates_of(&profile, "down").is_empty(), "{:?}", profile.compensation);
    assert_eq!(profile.totals.unmatched_exits, 0);
}
