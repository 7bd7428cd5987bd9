//! Early placement leaves the inliner's decisions as the plain build makes them: the probes'
//! calls cost the inliner nothing (their declarations carry LLVM's `call-inline-cost` of 0), so
//! a routine near the threshold is inlined instrumented as it is plain, and its calls are still
//! counted exactly by the probes it brings into its caller.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

/// The routines `routine` calls directly in `program`'s code, probes left out.
fn direct_calls(program: &Path, routine: &str) -> Vec<String> {
    let mut calls: Vec<String> = routine_disassembly(program, routine)
        .iter()
        .filter(|l| l.contains("call"))
        .filter_map(|l| l.rsplit('<').next().map(|t| t.trim_end_matches('>').to_string()))
        .filter(|t| !t.starts_with("__instrument_"))
        .collect();
    calls.sort();
    calls.dedup();
    calls
}

#[test]
fn a_routine_the_plain_build_inlines_is_inlined_early_and_counted() {
    let dir = scratch();
    let plain = build_plain(dir.path(), "inline_helper");
    let early = build_instrumented(dir.path(), "inline_helper", &["--instrument-placement=early"]);
    let plain_calls = direct_calls(&plain, "main");
    assert!(
        !plain_calls.iter().any(|c| c.contains("helper")),
        "the plain build inlines helper: {plain_calls:?}"
    );
    assert_eq!(direct_calls(&early, "main"), plain_calls, "main calls what it calls in the plain build");
    let expected = run(&mut Command::new(&plain));
    let (output, profile) = run_profiled(&early, dir.path());
    assert_eq!(output.stdout, expected.stdout);
    assert_eq!(function(&profile, "helper").stats.calls, 200);
    assert_eq!(function(&profile, "main").stats.calls, 1);
}
