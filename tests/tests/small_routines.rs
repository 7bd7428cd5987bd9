//! Late placement's default selection (`INSTRUMENT_MIN_INSTRUCTIONS`, XRay's rule): routines
//! under 200 instructions without loops or recursion get no events, and the profile and report
//! say so; routines with a loop, a recursion or more instructions, and `main`, keep exact
//! counts; early placement and an explicit 0 keep every routine.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

const FIXTURE: &str = "small_routines";

/// Builds the fixture with instrument-cc's defaults plus `flags`, runs it and checks that it
/// printed what the plain build prints.
fn profile_of(dir: &Path, name: &str, flags: &[&str]) -> instrument_profile::Profile {
    let source = fixtures().join(format!("{FIXTURE}.c"));
    let program =
        compile_with_defaults(&bin("instrument-cc"), dir, name, &[source], &[&["-O2"], flags].concat());
    let plain = build_plain(dir, FIXTURE);
    let expected = run(&mut Command::new(plain));
    let profiles = dir.join(format!("{name}-profiles"));
    std::fs::create_dir_all(&profiles).unwrap();
    let (output, profile) = run_profiled(&program, &profiles);
    assert_success(&output, name);
    assert_eq!(output.stdout, expected.stdout, "{name} prints what the plain build prints");
    profile
}

fn calls(profile: &instrument_profile::Profile) -> Vec<(&str, u64)> {
    let mut calls: Vec<(&str, u64)> =
        profile.functions.iter().map(|f| (f.name.as_str(), f.stats.calls)).collect();
    calls.sort();
    calls
}

#[test]
fn late_placement_leaves_small_routines_to_their_callers_and_says_so() {
    let dir = scratch();
    let profile = profile_of(dir.path(), "late", &[]);
    assert_eq!(calls(&profile), [("big", 10), ("countdown", 21), ("looping", 10), ("main", 1)]);
    assert_eq!(profile.small_threshold, Some(200));
    assert_inclusive_covers_exclusive(&profile);
    let report = run(Command::new(bin("instrument"))
        .arg("report")
        .arg(only_profile_path(&dir.path().join("late-profiles"))));
    let text = String::from_utf8_lossy(&report.stdout);
    let line = text.lines().find(|l| l.starts_with("placement:")).expect("a placement line");
    assert!(line.contains("under 200 instructions without loops or recursion"), "{line}");
    assert!(line.contains("INSTRUMENT_MIN_INSTRUCTIONS=0"), "{line}");
}

#[test]
fn an_explicit_zero_and_early_placement_keep_every_routine() {
    let dir = scratch();
    for (name, flags) in
        [("all", &["--instrument-min-instructions=0"][..]), ("early", &["--instrument-placement=early"])]
    {
        let profile = profile_of(dir.path(), name, flags);
        let tiny =
            profile.functions.iter().find(|f| f.name == "tiny").unwrap_or_else(|| panic!("{name}: tiny"));
        assert_eq!(tiny.stats.calls, 1000, "{name}");
        assert_eq!(profile.small_threshold, None, "{name}");
    }
}

#[test]
fn a_threshold_applies_to_early_placement_when_asked() {
    let dir = scratch();
    let profile = profile_of(
        dir.path(),
        "early-200",
        &["--instrument-placement=early", "--instrument-min-instructions=200"],
    );
    assert!(!profile.functions.iter().any(|f| f.name == "tiny"), "{:?}", calls(&profile));
    assert_eq!(profile.small_threshold, Some(200));
    assert_eq!(function(&profile, "main").stats.calls, 1);
}
