//! Loops, call statements and the program graph (issue: static tables + dynamic records):
//! exact counts and nesting, time in uninstrumented code per call statement, recursion collapsed
//! as in Li and Zhang, and profiles whose size does not grow with the run.

use instrument_tests::*;
use std::process::Command;

const ALL: &str = "--instrument-events=functions,loops,callsites";

fn loops_profile(args: &[&str]) -> (tempfile::TempDir, instrument_profile::Profile) {
    let (dir, profile, _) = timed_loops_profile(args);
    (dir, profile)
}

/// The profile of one run of the loops fixture, and the run's wall-clock time in ns.
fn timed_loops_profile(args: &[&str]) -> (tempfile::TempDir, instrument_profile::Profile, u64) {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "loops", &[ALL, "-lm"]);
    let started = std::time::Instant::now();
    // Every event timed: throttled ones would carry two more fields in the long run's profile.
    let output = run(Command::new(&program)
        .args(args)
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_THROTTLE", "0"));
    let wall_ns = started.elapsed().as_nanos() as u64;
    assert_success(&output, "loops");
    let profile = only_profile(dir.path());
    (dir, profile, wall_ns)
}

#[test]
fn loops_have_exact_executions_iterations_and_nesting() {
    let (_dir, profile) = loops_profile(&[]);
    let nested = function(&profile, "nested").id;
    let outer = loop_at(&profile, 26);
    let inner = loop_at(&profile, 27);
    assert_eq!(
        (outer.stats.calls, outer.stats.iterations, outer.function, outer.parent),
        (1, 10, nested, None)
    );
    assert_eq!((inner.stats.calls, inner.stats.iterations, inner.parent), (10, 50, Some(outer.id)));
    assert_eq!(
        (loop_at(&profile, 33).stats.calls, loop_at(&profile, 33).stats.iterations),
        (1, 4),
        "while(1) left by break"
    );
    assert_eq!(loop_at(&profile, 44).stats.iterations, 4, "do-while runs its body 4 times");
    assert_eq!(loop_at(&profile, 51).stats.iterations, 100);
    assert_eq!(loop_at(&profile, 57).stats.iterations, 4);
    assert!(
        outer.stats.inclusive_ns >= inner.stats.inclusive_ns
            && inner.stats.inclusive_ns >= inner.stats.exclusive_ns
    );
    assert_eq!(profile.totals.unmatched_exits + profile.totals.frames_reconciled, 0);
}

#[test]
fn call_statements_split_time_by_calling_line_including_uninstrumented_callees() {
    let (_dir, profile, wall_ns) = timed_loops_profile(&[]);
    let sqrt = calls_to(&profile, "sqrt");
    assert_eq!(sqrt.len(), 1);
    assert_eq!(
        (sqrt[0].stats.calls, sqrt[0].line, sqrt[0].in_loop),
        (100, 52, Some(loop_at(&profile, 51).id))
    );
    let wait = calls_to(&profile, "wait_ms");
    assert_eq!(wait.len(), 1, "wait_ms is not instrumented but its call statement is");
    assert_eq!(wait[0].stats.calls, 4);
    // A busy wait can only be stretched (by preemption on a loaded machine), never shortened, and
    // whatever stretches it happens inside the run. Accuracy against the program's own clock is
    // checked in flat_profile.rs.
    let waited = wait[0].stats.inclusive_ns;
    assert!(waited >= 99_900_000, "4 x 25 ms busy wait measured as {waited} ns");
    assert!(waited < wall_ns, "4 x 25 ms busy wait measured as {waited} ns in a {wall_ns} ns run");
    let paced_loop = loop_at(&profile, 57);
    assert!(paced_loop.stats.inclusive_ns >= waited);
    let paced = function(&profile, "paced");
    assert!(
        paced.stats.inclusive_ns - waited < 1_000_000,
        "paced does nothing but wait: {} ns",
        paced.stats.inclusive_ns
    );
    assert!(paced_loop.stats.exclusive_ns < 1_000_000, "the loop's own time excludes its call statement");
    let main = function(&profile, "main");
    for callee in ["nested", "search", "countdown", "roots", "paced", "printf"] {
        let sites = calls_to(&profile, callee);
        assert_eq!(sites.len(), 1, "{callee}");
        assert_eq!(
            (sites[0].stats.calls, sites[0].function, sites[0].in_loop),
            (1, main.id, None),
            "{callee}"
        );
    }
    assert_eq!(main.stats.child_calls, 6, "main's direct child events are its six call statements");
}

#[test]
fn recursive_cycles_get_no_call_statement_records_but_calls_are_counted() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "recursion", &[ALL]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "recursion");
    let down = function(&profile, "down");
    assert!(
        down.recursive && function(&profile, "is_even").recursive && function(&profile, "is_odd").recursive
    );
    assert!(!function(&profile, "main").recursive);
    assert_eq!(down.stats.calls, 11);
    assert_eq!((function(&profile, "is_even").stats.calls, function(&profile, "is_odd").stats.calls), (4, 4));
    assert!(calls_to(&profile, "down").iter().all(|c| c.function != down.id), "no record for down -> down");
    let into_down = calls_to(&profile, "down");
    assert_eq!((into_down.len(), into_down[0].stats.calls), (1, 1), "main's call of down");
    let cycle: Vec<_> = profile
        .callsites
        .iter()
        .filter(|c| ["is_even", "is_odd"].contains(&c.callee.as_str()))
        .map(|c| c.function)
        .collect();
    assert_eq!(cycle, [function(&profile, "main").id], "only main's call into the cycle has a record");
    let wait = calls_to(&profile, "wait_ms");
    assert_eq!(
        (wait.len(), wait[0].function, wait[0].stats.calls),
        (1, down.id, 1),
        "down's call out of the cycle"
    );
}

#[test]
fn profile_size_does_not_grow_with_run_length() {
    let (short_dir, short) = loops_profile(&["1000"]);
    let (long_dir, long) = loops_profile(&["1000000"]);
    assert_eq!(loop_at(&long, 51).stats.iterations, 1_000_000);
    assert_eq!(calls_to(&long, "sqrt")[0].stats.calls, 1_000_000);
    let shape = |p: &instrument_profile::Profile| (p.functions.len(), p.loops.len(), p.callsites.len());
    assert_eq!(shape(&short), shape(&long));
    let size = |d: &tempfile::TempDir| only_profile_path(d.path()).metadata().unwrap().len();
    let (a, b) = (size(&short_dir) as f64, size(&long_dir) as f64);
    assert!(
        (a - b).abs() / a < 0.02,
        "profile sizes {a} and {b} bytes differ by more than the digits of bigger counts"
    );
}

#[test]
fn events_can_be_chosen_by_environment_variable() {
    let dir = scratch();
    let source = fixtures().join("loops.c");
    let program = dir.path().join("loops");
    let out = run(std::process::Command::new(bin("instrument-cc"))
        .args(["-O2", "-I"])
        .arg(fixtures())
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg("-lm")
        .env("INSTRUMENT_EVENTS", "loops")
        .env(EARLY.0, EARLY.1));
    assert_success(&out, "build with INSTRUMENT_EVENTS=loops");
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "loops");
    assert_eq!(profile.loops.len(), 6);
    assert!(profile.callsites.is_empty());
    assert!(
        profile.functions.iter().all(|f| f.stats.calls == 0),
        "routines are listed as the loops' owners only"
    );
}

#[test]
fn tree_report_nests_program_procedure_loop_call_statement() {
    let (dir, _) = loops_profile(&[]);
    let path = only_profile_path(dir.path());
    let tree = run(std::process::Command::new(bin("instrument"))
        .args(["report", "--tree", "--focus", "nested"])
        .arg(&path));
    assert_success(&tree, "report --tree --focus");
    insta::with_settings!({filters => vec![(r" *\d+\.\d+", " [t]")]}, {
        insta::assert_snapshot!(String::from_utf8_lossy(&tree.stdout));
    });
    let full =
        run(std::process::Command::new(bin("instrument")).args(["report", "--tree", "--lines"]).arg(&path));
    let text = String::from_utf8_lossy(&full.stdout);
    assert!(text.lines().nth(3).unwrap().contains("program "), "{text}");
    assert!(text.contains("main [loops.c:61]"), "{text}");
    let sqrt_line =
        text.lines().find(|l| l.contains("call sqrt at loops.c:52")).expect("sqrt call statement");
    let loop_line = text.lines().find(|l| l.contains("loop at loops.c:51")).expect("roots loop");
    assert!(
        sqrt_line.find("call sqrt") > loop_line.find("loop at"),
        "the call statement is indented under its loop:\n{text}"
    );
    let missing = run(std::process::Command::new(bin("instrument"))
        .args(["report", "--tree", "--focus", "nope"])
        .arg(&path));
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no routine named \"nope\""));
}
