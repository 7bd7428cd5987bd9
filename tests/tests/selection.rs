//! Choosing what is instrumented at build time: TAU selective-instrumentation files, Score-P
//! filter files, a size threshold, and one clear error for a bad file.

use instrument_tests::*;
use std::process::Command;

fn select(file: &str) -> String {
    format!("--instrument-select={}", fixtures().join("select").join(file).display())
}

#[test]
fn tau_exclude_list_drops_a_routine_and_keeps_its_children() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[&select("tau-exclude-a.txt")]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    assert!(!has_function(&profile, "a"));
    assert_eq!(function(&profile, "b").stats.calls, 6);
    assert_eq!(function(&profile, "c").stats.calls, 9);
    assert_eq!(function(&profile, "main").stats.child_calls, 9, "b x6 (through the excluded a) and c x3");
}

#[test]
fn tau_instrument_section_asks_for_loops_of_one_routine() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "loops", &[&select("tau-loops.txt"), "-lm"]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "loops");
    assert!(!has_function(&profile, "search"));
    let nested = function(&profile, "nested").id;
    assert_eq!(profile.loops.len(), 2);
    assert!(profile.loops.iter().all(|l| l.function == nested));
    assert_eq!(profile.loops.iter().map(|l| l.stats.iterations).sum::<u64>(), 60);
}

#[test]
fn scorep_filter_keeps_only_included_regions() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[&select("scorep.filt")]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    let names: Vec<_> = profile.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(function(&profile, "c").stats.calls, 9);
    assert_eq!(function(&profile, "main").stats.child_calls, 9);
}

#[test]
fn size_threshold_skips_small_routines() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &["--instrument-min-instructions=8"]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    assert!(has_function(&profile, "main"));
    for small in ["a", "b", "c"] {
        assert!(!has_function(&profile, small), "{small} has fewer than 8 IR instructions");
    }
}

#[test]
fn a_bad_selection_file_is_one_error_naming_file_and_line() {
    let dir = scratch();
    let object = dir.path().join("calls.o");
    let bad = fixtures().join("select").join("bad.txt");
    let output = run(Command::new(bin("instrument-cc"))
        .arg(format!("--instrument-select={}", bad.display()))
        .arg("-c")
        .arg(fixtures().join("calls.c"))
        .arg("-o")
        .arg(&object));
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("{}:3: END_INCLUDE_LIST does not close the open section", bad.display())),
        "{stderr}"
    );
    assert!(!object.exists());
    let missing = run(Command::new(bin("instrument-cc"))
        .arg("--instrument-select=/nonexistent.txt")
        .arg("-c")
        .arg(fixtures().join("calls.c"))
        .arg("-o")
        .arg(&object));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read selection file /nonexistent.txt"));
    let bad_events = run(Command::new(bin("instrument-cc"))
        .arg("--instrument-events=loops,bogus")
        .arg("-c")
        .arg(fixtures().join("calls.c"))
        .arg("-o")
        .arg(&object));
    assert!(!bad_events.status.success());
    assert!(String::from_utf8_lossy(&bad_events.stderr).contains("unknown event kind \"bogus\""));
}
