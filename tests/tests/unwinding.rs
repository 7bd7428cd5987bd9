//! C++ exceptions crossing instrumented frames: the landing-pad and resume probes keep the
//! shadow stack true, so counts are exact, calls made after a catch belong to the catcher, a
//! loop that catches inside its body goes on as one execution, and nothing is left open.

use instrument_tests::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn build(dir: &Path, flags: &[&str]) -> std::path::PathBuf {
    let source = fixtures().join("exceptions.cpp");
    compile(&bin("instrument-c++"), dir, "exceptions", &[source], &[&["-O2"], flags].concat())
}

#[test]
fn exceptions_keep_counts_exact_and_the_stack_true() {
    let dir = scratch();
    let plain =
        compile(Path::new("clang++-22"), dir.path(), "plain", &[fixtures().join("exceptions.cpp")], &["-O2"]);
    let expected = run(&mut Command::new(&plain));
    let early = new_dir(dir.path(), "early");
    check_exceptions(&build(&early, &[]), &early, &[], &expected);
    // Late placement: routines keep their own code behind the inline count and their probes go
    // into copies (pass/src/probed_copy.rs), through which the exceptions unwind too; with every
    // routine throttled at its first call, the inline counts run the routines' own code.
    let late = new_dir(dir.path(), "late");
    let program = build(&late, &["--instrument-placement=late", "--instrument-min-instructions=0"]);
    check_exceptions(&program, &late, &[], &expected);
    let throttled = new_dir(dir.path(), "throttled");
    check_exceptions(
        &program,
        &throttled,
        &[("INSTRUMENT_THROTTLE", "1"), ("INSTRUMENT_THROTTLE_CALLS", "1")],
        &expected,
    );
}

/// `program` run with `env`, its profile in `dir`: the plain build's output, exact counts, and
/// without `env` (nothing throttled) exact child calls.
fn check_exceptions(program: &Path, dir: &Path, env: &[(&str, &str)], expected: &std::process::Output) {
    let output =
        run(Command::new(program).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir).envs(env.to_vec()));
    let profile = only_profile(dir);
    assert_success(&output, "exceptions");
    assert_eq!(output.stdout, expected.stdout, "same output as the plain build");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "caught 7\n");
    for (name, calls) in [
        ("_Z3topi", 9),
        ("_Z6middlei", 9),
        ("_Z5plaini", 6),
        ("_Z4leafi", 19),
        ("_Z6loopedv", 1),
        ("_Z5afterv", 1),
    ] {
        assert_eq!(function(&profile, name).stats.calls, calls, "{name}");
    }
    let guard: u64 =
        profile.functions.iter().filter(|f| f.name.starts_with("_ZN5GuardD")).map(|f| f.stats.calls).sum();
    assert_eq!(guard, 9, "the destructor also runs while unwinding");
    // A throttled call is not on the stack: its children are its caller's (checked elsewhere).
    if env.is_empty() {
        assert_eq!(function(&profile, "main").stats.child_calls, 11, "top 9, looped, after");
        assert_eq!(function(&profile, "_Z3topi").stats.child_calls, 15, "middle 9, plain 6");
    }
    assert_eq!(profile.totals.frames_closed_at_exit, 0);
    assert_eq!(profile.totals.unmatched_exits, 0);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn after_a_catch_calls_belong_to_the_catcher_and_loops_go_on() {
    let dir = scratch();
    let program = build(dir.path(), &["--instrument-events=functions,loops"]);
    let output = run(Command::new(&program)
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_CALLPATH", "2"));
    assert_success(&output, "exceptions");
    let paths = callpath_calls(dir.path(), &["--depth", "2"]);
    let routine_paths: BTreeMap<&str, u64> =
        paths.iter().filter(|(p, _)| !p.contains("loop at")).map(|(p, c)| (p.as_str(), *c)).collect();
    let expected: BTreeMap<&str, u64> = [
        ("main", 1),
        ("top(int) => middle(int)", 9),
        ("middle(int) => leaf(int)", 9),
        ("middle(int) => Guard::~Guard()", 9),
        ("top(int) => plain(int)", 6),
        ("plain(int) => leaf(int)", 6),
        ("main => after()", 1),
        ("main => looped()", 1),
    ]
    .into();
    let expected_loop_paths =
        [("loop at exceptions.cpp:57 => top(int)", 9), ("loop at exceptions.cpp:43 => leaf(int)", 4)];
    assert_eq!(routine_paths, expected, "every path: {paths:#?}");
    for (path, calls) in expected_loop_paths {
        assert_eq!(paths.get(path), Some(&calls), "{path} in {paths:#?}");
    }
    let profile = only_profile(dir.path());
    let caught_in_loop = loop_at(&profile, 43);
    assert_eq!(
        (caught_in_loop.stats.calls, caught_in_loop.stats.iterations),
        (1, 4),
        "the loop went on after its catch"
    );
}

/// An exception caught by a catcher without a frame (throttled: counted; or without an event,
/// too small at late placement) closes the thrower's frame at the landing pad: before, that
/// frame stayed open until main's exit, its inclusive time most of the run and every later call
/// its child.
#[test]
fn an_exception_caught_by_a_catcher_without_a_frame_closes_the_throwers_frame() {
    let dir = scratch();
    let source = fixtures().join("throw_throttled.cpp");
    let sources = std::slice::from_ref(&source);
    let expected =
        run(&mut Command::new(compile(Path::new("clang++-22"), dir.path(), "plain", sources, &["-O2"])));
    let late = ["-O2", "--instrument-placement=late"];
    for (name, every) in [("eventless", &[][..]), ("throttled", &["--instrument-min-instructions=0"][..])] {
        let build = new_dir(dir.path(), name);
        let program =
            compile(&bin("instrument-c++"), &build, "throw_throttled", sources, &[&late[..], every].concat());
        let output = run(Command::new(&program).current_dir(&build).env("INSTRUMENT_PROFILE_DIR", &build));
        assert_success(&output, "throw_throttled");
        assert_eq!(output.stdout, expected.stdout, "{name}: caught=20 as plain");
        let profile = only_profile(&build);
        assert_closed_at_landing(&profile, name, "_Z4faili", "_Z7guardedi", 4);
    }
}
