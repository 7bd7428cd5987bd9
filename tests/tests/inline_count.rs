//! The inline count (`instrument_contract::inline_count`): at late placement on x86-64 a
//! throttled routine's calls are counted by its own entry code, not by a probe call. Counts
//! stay exact, on every thread; each caller keeps its exact child calls and loses the counted
//! calls' estimates, as through the probe call (`INSTRUMENT_INLINE_COUNT=0`, the same binary),
//! and the profile says how many calls were counted inline.

use instrument_profile::Profile;
use instrument_tests::*;
use std::path::Path;
use std::process::Command;

const FIXTURE: &str = "inline_count";

/// The fixture run with `args` (its worker threads, and `direct` to start them on step) and
/// `env`; checks its output against the plain build's.
fn profile_of(dir: &Path, program: &Path, name: &str, args: &[&str], env: &[(&str, &str)]) -> Profile {
    let plain = build_plain(dir, FIXTURE);
    let expected = run(Command::new(plain).args(args));
    let profiles = new_dir(dir, name);
    let output =
        run(Command::new(program).args(args).env("INSTRUMENT_PROFILE_DIR", &profiles).envs(env.to_vec()));
    assert_success(&output, name);
    assert_eq!(output.stdout, expected.stdout, "{name} prints what the plain build prints");
    only_profile(&profiles)
}

fn build(dir: &Path) -> std::path::PathBuf {
    let source = fixtures().join(format!("{FIXTURE}.c"));
    compile_with_defaults(&bin("instrument-cc"), dir, FIXTURE, &[source], &["-O2", "-pthread"])
}

/// (calls, child calls) of `name`.
fn counts(profile: &Profile, name: &str) -> (u64, u64) {
    let f = function(profile, name);
    (f.stats.calls, f.stats.child_calls)
}

#[test]
fn inline_counts_are_exact_and_charge_their_callers_as_probe_calls_do() {
    let dir = scratch();
    let program = build(dir.path());
    let inline = profile_of(dir.path(), &program, "inline", &["0"], &[]);
    let called = profile_of(dir.path(), &program, "called", &["0"], &[("INSTRUMENT_INLINE_COUNT", "0")]);
    for profile in [&inline, &called] {
        assert_eq!(counts(profile, "step"), (150_000, 0));
        assert_eq!(counts(profile, "outer"), (1, 100_000));
        assert_eq!(counts(profile, "inner"), (1, 50_000));
        // Timed until throttled, then in the in-place estimation's timed windows.
        let untimed = function(profile, "step").stats.untimed_calls;
        assert!((100_000..=149_000).contains(&untimed), "{untimed} untimed");
        assert_inclusive_covers_exclusive(profile);
    }
    // The estimation of step's in-place cost keeps its calls on the probe path for a while, and
    // times its inline windows against counted ones: the rest are inline counts if the inline
    // count came out cheaper here, probe calls if not. Either way the profile charges them at
    // the mode's cost, which only a run that counts inline measures.
    let counted_inline = inline.totals.inline_counted;
    let untimed = function(&inline, "step").stats.untimed_calls;
    assert!((1..untimed).contains(&counted_inline), "{counted_inline} of {untimed} counted inline");
    assert_eq!(called.totals.inline_counted, 0, "INSTRUMENT_INLINE_COUNT=0 calls the probe");
    let untimed_ns = |profile: &Profile| {
        let step = function(profile, "step").id;
        profile.overhead.as_ref().and_then(|o| o.in_place_of(step)).map(|e| e.untimed_ns)
    };
    assert!(matches!(untimed_ns(&inline), Some(Some(ns)) if ns >= 0.0), "{:?}", untimed_ns(&inline));
    assert!(matches!(untimed_ns(&called), Some(None)), "{:?}", untimed_ns(&called));
    // The figure holds what the estimations' window boundaries took, which lies in no window.
    for profile in [&inline, &called] {
        let overhead = profile.overhead.as_ref().expect("an overhead section");
        assert!(overhead.estimation_ns > 0.0, "{overhead:?}");
        assert!(overhead.total_ns >= overhead.estimation_ns, "{overhead:?}");
    }
    for profile in [&inline, &called] {
        // The counted calls' estimates are step's time, and no longer its callers'.
        let step = function(profile, "step").stats.estimated.expect("step's calls are estimated");
        let outer = function(profile, "outer");
        let estimated = outer.stats.estimated.expect("outer's children's calls are estimated");
        assert!(step.exclusive_ns > 0);
        assert!(estimated.exclusive_ns < outer.stats.exclusive_ns as i64, "{estimated:?}");
    }
}

#[test]
fn every_thread_counts_inline_into_its_own_records() {
    let dir = scratch();
    let program = build(dir.path());
    let profile = profile_of(dir.path(), &program, "threads", &["2"], &[]);
    assert_eq!(counts(&profile, "step"), (210_000, 0));
    assert_eq!(counts(&profile, "outer"), (3, 160_000));
    assert_eq!(counts(&profile, "inner"), (1, 50_000));
    assert!(profile.totals.inline_counted > 100_000, "{}", profile.totals.inline_counted);
}

/// A thread whose first event is a throttled routine's call has no state yet: the entry code's
/// one test (the id below the record capacity its thread-local block holds, zero there) sends
/// that call to the probe, which makes the state; the thread's later calls count inline.
#[test]
fn a_threads_first_call_counted_inline_goes_to_the_probe_first() {
    let dir = scratch();
    let program = build(dir.path());
    let profile = profile_of(dir.path(), &program, "direct", &["2", "direct"], &[]);
    assert_eq!(counts(&profile, "step"), (210_000, 0));
    assert_eq!(counts(&profile, "outer"), (1, 100_000));
    let per_thread = calls_per_thread(&profile, "step");
    assert_eq!(per_thread, [150_000, 30_000, 30_000], "each thread's calls in its own records");
    assert!(profile.totals.inline_counted > 100_000, "{}", profile.totals.inline_counted);
}

/// With compensation on, a throttled routine settles in the inline count too (each count
/// charges its calibrated cost to the frame on top when it is charged: rt/src/inline.rs), which
/// halved what the probes cost a compensated, throttled Lua or SQLite in place
/// (`scripts/nas-paired --program lua`); early placement's code has no inline count.
#[test]
fn compensation_counts_inline_too_and_early_placement_calls_the_probe() {
    let dir = scratch();
    let program = build(dir.path());
    let env = [
        ("INSTRUMENT_COMPENSATE", "on"),
        ("INSTRUMENT_THROTTLE", "1"),
        ("INSTRUMENT_THROTTLE_CALLS", "1000"),
    ];
    let compensated = profile_of(dir.path(), &program, "compensated", &["0"], &env);
    assert_eq!(counts(&compensated, "step"), (150_000, 0));
    assert_eq!(counts(&compensated, "outer"), (1, 100_000));
    // The in-place windows that measure a counted call against an inline count count inline,
    // and so does step once settled if the inline count came out cheaper.
    let inline = compensated.totals.inline_counted;
    let untimed = function(&compensated, "step").stats.untimed_calls;
    assert!((1..untimed).contains(&inline), "{inline} of {untimed} counted inline");
    assert_inclusive_covers_exclusive(&compensated);
    // Its estimation also measured one more inline count (double windows, whose entries run a
    // shadow of the count first, against detour ones), and each inline count was charged its
    // calibration plus what those measured over it, within nothing and the calibration plus
    // the dearest timed pair.
    let c = compensated.compensation.as_ref().expect("compensated");
    let step = function(&compensated, "step").id;
    let doubled = c.in_place.iter().filter(|e| e.id == step && e.double_pairs >= 10);
    assert!(doubled.clone().all(|e| e.inline_count_ns.is_some()), "{:?}", c.in_place);
    assert!(doubled.count() >= 1, "double windows measured the inline count: {:?}", c.in_place);
    // Its inline windows measured its counted call over its inline count, and every estimate
    // names the path its counted cost was measured against.
    let inlines = c.in_place.iter().filter(|e| e.id == step && e.inline_pairs >= 10);
    assert!(inlines.clone().all(|e| e.counted_over_inline_ns.is_some()), "{:?}", c.in_place);
    assert!(inlines.count() >= 1, "inline windows against counted ones: {:?}", c.in_place);
    assert_references_measured(&c.in_place);
    // And the inline count against a bare one (inline windows against bare ones), whose
    // difference with the bare count's calibration is what the first count costs there.
    let firsts = c.in_place.iter().filter(|e| e.id == step && e.first_pairs >= 10);
    assert!(firsts.clone().all(|e| e.inline_over_bare_ns.is_some()), "{:?}", c.in_place);
    assert!(firsts.count() >= 1, "inline windows against bare ones: {:?}", c.in_place);
    let charge = c.inline_count.as_ref().expect("an inline count charge");
    assert!(charge.calibrated_ns > 0.0 && charge.bare_ns > 0.0, "{charge:?}");
    // The dispatch, the inline count's checks with the routine switched off, is a part of it.
    assert!((0.0..charge.calibrated_ns).contains(&charge.dispatch_ns), "{charge:?}");
    let dearest = c.in_place.iter().map(|e| e.timed_ns).fold(0.0, f64::max);
    assert!((0.0..=charge.calibrated_ns + dearest).contains(&charge.charged_ns), "{charge:?}");
    // With other threads calling step meanwhile (which run the shadow too in double windows,
    // call the probe at no window's end of theirs, and in bare windows, whose count down is the
    // windows' thread's alone), every call is still counted once.
    let threads = profile_of(dir.path(), &program, "compensated-threads", &["2"], &env);
    assert_eq!(counts(&threads, "step").0, 150_000 + 2 * 30_000);
    assert_eq!(counts(&threads, "outer"), (3, 160_000));
    let source = fixtures().join(format!("{FIXTURE}.c"));
    let early = compile(&bin("instrument-cc"), dir.path(), "early", &[source], &["-O2", "-pthread"]);
    let profile = profile_of(dir.path(), &early, "early-run", &["0"], &[]);
    assert_eq!(counts(&profile, "step").0, 150_000);
    assert_eq!(profile.totals.inline_counted, 0, "early placement has no inline count");
}

#[test]
fn inline_counts_survive_longjmp_and_fork() {
    let dir = scratch();
    let source = fixtures().join("inline_count_jumps.c");
    let program = compile_with_defaults(&bin("instrument-cc"), dir.path(), "jumps", &[source], &["-O2"]);
    let plain = build_plain(dir.path(), "inline_count_jumps");
    let expected = run(&mut Command::new(plain));
    for (name, env) in [("inline", "1"), ("called", "0")] {
        let profiles = new_dir(dir.path(), name);
        let output = run(Command::new(&program)
            .env("INSTRUMENT_PROFILE_DIR", &profiles)
            .env("INSTRUMENT_INLINE_COUNT", env));
        assert_success(&output, name);
        assert_eq!(output.stdout, expected.stdout, "{name} prints what the plain build prints");
        let paths = profile_paths(&profiles);
        assert_eq!(paths.len(), 2, "{name}: the parent's and the child's profiles");
        for path in paths {
            let profile = load_profile(&path);
            assert_eq!(counts(&profile, "step"), (200_000, 0), "{name}");
            assert_eq!(counts(&profile, "driver"), (2, 200_000), "{name}: every step call is driver's child");
            assert_eq!(profile.totals.inline_counted > 0, env == "1", "{name}");
        }
    }
}

/// A routine switched off at run time makes no probe call at late placement: its entry code reads
/// the mode byte as off and runs the routine's own code (or, in a routine with loop or
/// call-statement events, the probed body with its exits branched around), as the probe would.
/// Nothing is counted for it (a profile lists no event without calls), and the rest of the
/// profile is what the probe path gives (`INSTRUMENT_INLINE_COUNT=0`, the same binary).
#[test]
fn a_routine_switched_off_at_run_time_is_skipped_by_its_own_entry_code() {
    let dir = scratch();
    let program = build(dir.path());
    let selection = dir.path().join("no-step.txt");
    std::fs::write(&selection, "BEGIN_EXCLUDE_LIST\nstep\nEND_EXCLUDE_LIST\n").unwrap();
    let selection = selection.to_str().unwrap();
    let inline =
        profile_of(dir.path(), &program, "off-inline", &["1"], &[("INSTRUMENT_RUNTIME_SELECT", selection)]);
    let called = profile_of(
        dir.path(),
        &program,
        "off-called",
        &["1"],
        &[("INSTRUMENT_RUNTIME_SELECT", selection), ("INSTRUMENT_INLINE_COUNT", "0")],
    );
    for profile in [&inline, &called] {
        assert!(
            profile.functions.iter().all(|f| f.name != "step"),
            "step has no call: {:?}",
            profile.functions
        );
        assert_eq!(counts(profile, "outer"), (2, 0), "no child call of step is seen");
        assert_eq!(counts(profile, "inner"), (1, 0));
        assert_eq!(profile.totals.inline_counted, 0);
        assert_eq!(profile.totals.unmatched_exits, 0);
    }
}

/// A switched-off routine runs its own code, not a probed body (`pass/src/probed_copy.rs`), so its
/// tail calls stay jumps: c-fixtures/tail_calls.c makes ten million calls in tail position, which
/// an 8 MiB stack holds only as jumps (a probed body needs a frame per call: a segmentation
/// fault, as at early placement, which has no inline count); the output is the plain build's,
/// and the profile has main alone.
#[test]
fn a_switched_off_routine_runs_its_own_code_and_keeps_its_tail_calls() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "tail_calls", &["--instrument-placement=late"]);
    let plain = build_plain(dir.path(), "tail_calls");
    let selection = dir.path().join("off.txt");
    std::fs::write(&selection, "BEGIN_EXCLUDE_LIST\nping\npong\nEND_EXCLUDE_LIST\n").unwrap();
    let profiles = new_dir(dir.path(), "profiles");
    let in_small_stack = |program: &Path| {
        let mut command = Command::new("sh");
        command.arg("-c").arg("ulimit -s 8192 && exec \"$0\"").arg(program);
        command.env("INSTRUMENT_PROFILE_DIR", &profiles).env("INSTRUMENT_RUNTIME_SELECT", &selection);
        run(&mut command)
    };
    let expected = in_small_stack(&plain);
    assert_success(&expected, "plain tail_calls");
    let output = in_small_stack(&program);
    assert_success(&output, "tail_calls with ping and pong switched off");
    assert_eq!(output.stdout, expected.stdout);
    let profile = only_profile(&profiles);
    assert!(profile.functions.iter().all(|f| f.name == "main"), "{:?}", profile.functions);
}
