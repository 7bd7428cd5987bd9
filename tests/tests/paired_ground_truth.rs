//! `scripts/nas-paired` on a real program: Lua 5.4 (the pinned sources) built plainly and with
//! instrument-cc into one executable, its time steps alternated between the two copies. The
//! script is how compensation is judged on code nobody here wrote (issue 23's notes), so it is
//! run end to end here: one process, compensated, at late placement.

use instrument_tests::{assert_success, repo_root, run};
use std::process::Command;

/// The per-process line's numbers: (in place, removed) in ns per probed call.
fn in_place_and_removed(stderr: &str) -> (f64, f64) {
    let line = stderr.lines().find(|l| l.contains("process 1:")).unwrap_or_else(|| panic!("{stderr}"));
    let number = |after: &str| -> f64 {
        let rest = &line[line.find(after).unwrap_or_else(|| panic!("{line}")) + after.len()..];
        rest.split_whitespace().next().unwrap().trim_end_matches(',').parse().unwrap()
    };
    (number("in place "), number("removed "))
}

/// Lua makes about 30 M probed calls in its 120 steps, each a timed pair costing tens of
/// nanoseconds in place: the instrumented copy's steps are several times the plain ones, and
/// compensation takes about that much off them (within 2 to 4 % over a dozen processes; one
/// process's in-place cost moves by a few ns a call with its address-space layout). The bounds
/// leave room for a machine busy with other tests, which stretches the longer steps more.
#[test]
fn lua_in_one_process_shows_what_the_probes_cost_and_what_compensation_removed() {
    let output = run(Command::new(repo_root().join("scripts/nas-paired")).args([
        "--program",
        "lua",
        "--processes",
        "1",
        "--placement",
        "late",
        "PA=INSTRUMENT_COMPENSATE=on",
    ]));
    assert_success(&output, "scripts/nas-paired --program lua");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(stdout.starts_with("lua.W, late placement, 1 processes per variant"), "{stdout}");
    let (in_place, removed) = in_place_and_removed(&stderr);
    assert!(in_place > 10.0, "timed pairs cost tens of ns a call in place: {in_place}");
    assert!(
        (in_place / 3.0..=3.0 * in_place).contains(&removed),
        "compensation removed about what the probes cost: {removed} of {in_place}"
    );
}
