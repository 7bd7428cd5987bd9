//! Exact counts and times from instrumented C fixtures with a known call structure.

use instrument_tests::*;

#[test]
fn exact_call_and_child_counts() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    let counts = |name| {
        let f = function(&profile, name);
        (f.stats.calls, f.stats.child_calls)
    };
    assert_eq!(
        counts("main"),
        (1, 6),
        "main calls a x3, c, and c twice more through the uninstrumented skipped() and gnu_off()"
    );
    assert_eq!(counts("a"), (3, 6));
    assert_eq!(counts("b"), (6, 6));
    assert_eq!(counts("c"), (9, 0));
    assert!(!has_function(&profile, "skipped"), "INSTRUMENT_OFF routines are not instrumented");
    assert!(!has_function(&profile, "gnu_off"), "no_instrument_function routines are not instrumented");
    assert_eq!(profile.totals.events, 2 * (1 + 3 + 6 + 9));
    assert_eq!(profile.totals.threads, 1);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn busy_wait_time_is_measured_within_five_percent() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "busywait", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "busywait");
    let spin = function(&profile, "spin");
    assert_eq!(spin.stats.calls, 6);
    // The program's own clock around the six calls: 200 ms of spinning, plus whatever time the
    // scheduler took away on a loaded machine, which the probes see as well.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let spun_ms: f64 =
        stderr.trim().strip_prefix("spun ").and_then(|s| s.strip_suffix(" ms")).unwrap().parse().unwrap();
    assert!(spun_ms >= 200.0, "{stderr}");
    assert!(
        spin.stats.inclusive_ns as f64 >= 199.9e6,
        "never less than the spin: {} ns",
        spin.stats.inclusive_ns
    );
    let expected = spun_ms * 1e6;
    let error = (spin.stats.inclusive_ns as f64 - expected) / expected;
    assert!(
        error.abs() < 0.05,
        "spin inclusive {} ns is {:.1} % off the {spun_ms} ms the program measured",
        spin.stats.inclusive_ns,
        error * 100.0
    );
    assert_eq!(spin.stats.inclusive_ns, spin.stats.exclusive_ns, "spin calls nothing instrumented");
    let main = function(&profile, "main");
    assert!(main.stats.inclusive_ns >= spin.stats.inclusive_ns);
    assert!(
        main.stats.exclusive_ns < 2_000_000,
        "main only loops around spin: {} ns",
        main.stats.exclusive_ns
    );
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn recursion_counts_inclusive_time_once() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "recursion", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "recursion");
    let down = function(&profile, "down");
    assert_eq!((down.stats.calls, down.stats.child_calls), (11, 11), "10 recursive calls and one wait_ms");
    let wait = function(&profile, "wait_ms");
    let main = function(&profile, "main");
    assert!(down.stats.inclusive_ns >= wait.stats.inclusive_ns);
    assert!(
        down.stats.inclusive_ns < wait.stats.inclusive_ns + 1_000_000,
        "down's inclusive time counted more than once"
    );
    assert!(down.stats.inclusive_ns <= main.stats.inclusive_ns);
    assert!(down.stats.exclusive_ns < 1_000_000);
    assert_eq!(function(&profile, "is_odd").stats.calls, 4);
    assert_eq!(function(&profile, "is_even").stats.calls, 4);
    let mutual = function(&profile, "is_odd").stats.inclusive_ns;
    assert!(mutual <= main.stats.inclusive_ns);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn exit_deep_in_the_stack_still_writes_a_complete_profile() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "deep_exit", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_eq!(output.status.code(), Some(3), "the program's exit code is kept");
    assert_eq!(function(&profile, "level").stats.calls, 5);
    assert_eq!(function(&profile, "level").stats.child_calls, 4);
    assert_eq!(function(&profile, "main").stats.calls, 1);
    assert_eq!(profile.totals.frames_closed_at_exit, 6, "main and five levels were open");
    assert!(function(&profile, "main").stats.inclusive_ns >= function(&profile, "level").stats.inclusive_ns);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn two_threads_give_one_merged_profile() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "threads", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "threads");
    assert_eq!(function(&profile, "work").stats.calls, 2010);
    assert_eq!(function(&profile, "worker").stats.calls, 2);
    assert_eq!(function(&profile, "worker").stats.child_calls, 2000);
    assert_eq!(profile.totals.threads, 3);
    assert_eq!(profile.totals.threads_running_at_exit, 0);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn longjmp_past_instrumented_frames_keeps_the_stack_true() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "longjmp", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "longjmp");
    assert_eq!(function(&profile, "catcher").stats.calls, 2);
    assert_eq!(function(&profile, "thrower").stats.calls, 8);
    assert_eq!(function(&profile, "main").stats.child_calls, 2);
    assert_eq!(profile.totals.frames_reconciled, 8, "four thrower frames skipped per longjmp");
    assert_eq!(profile.totals.unmatched_exits, 0);
    assert_eq!(profile.totals.frames_closed_at_exit, 0);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn musttail_calls_stay_tail_calls_and_are_counted() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "musttail", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "musttail");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "sum=15\n");
    assert_eq!(function(&profile, "count_down").stats.calls, 6);
    assert_eq!(profile.totals.unmatched_exits + profile.totals.frames_reconciled, 0);
}

#[test]
fn late_placement_measures_only_what_survived_inlining() {
    let early_dir = scratch();
    let late_dir = scratch();
    let early = build_instrumented(early_dir.path(), "demo/demo", &[]);
    let late = build_instrumented(late_dir.path(), "demo/demo", &["--instrument-placement=late"]);
    let (output, early_profile) = run_profiled(&early, early_dir.path());
    assert_success(&output, "early demo");
    let (output, late_profile) = run_profiled(&late, late_dir.path());
    assert_success(&output, "late demo");
    assert_eq!(
        function(&early_profile, "swap").stats.calls,
        2_374_053,
        "before inlining every source-level call counts"
    );
    assert!(
        !has_function(&late_profile, "swap"),
        "swap is inlined at -O2 and has no probes after optimisation"
    );
    assert_eq!(function(&early_profile, "fib").stats.calls, 242_785);
    assert!(function(&late_profile, "fib").stats.calls < 242_785, "clang inlines fib into itself at -O2");
    assert!(has_function(&late_profile, "main"));
    assert_inclusive_covers_exclusive(&late_profile);
    assert_eq!(early_profile.placement, Some(instrument_profile::Placement::Early));
    assert_eq!(late_profile.placement, Some(instrument_profile::Placement::Late));
}
