//! The line a run prints at exit when its probes dominate it (issue 24): it names the top
//! offenders and the ways out, only when the probes' share of the run is large, and
//! `INSTRUMENT_QUIET=1` silences it.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn stderr_of(program: &Path, dir: &Path, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(program);
    let output = run(without_instrument_env(&mut command)
        .current_dir(dir)
        .env("INSTRUMENT_PROFILE_DIR", dir)
        .envs(env.iter().copied()));
    assert_success(&output, &program.display().to_string());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn hints(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with("instrument: the probes took about")).collect()
}

#[test]
fn a_run_dominated_by_its_probes_says_so_once_with_the_ways_out() {
    let dir = scratch();
    // Early placement and no throttling: every one of quicksort's 2.4 million swaps is timed.
    let program = build_instrumented(dir.path(), "demo/demo", &["--instrument-placement=early"]);
    let stderr = stderr_of(&program, dir.path(), &[("INSTRUMENT_THROTTLE", "0")]);
    let lines = hints(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    let line = lines[0];
    let profile = only_profile(dir.path());
    let overhead = profile.overhead.as_ref().unwrap();
    assert!(overhead.percent_of_run > 30.0, "{overhead:?}");
    assert!(line.contains(&format!("about {:.0} %", overhead.percent_of_run)), "{line}");
    assert!(line.contains("most in swap ("), "the most called routine leads: {line}");
    assert!(line.contains("--instrument-placement=late"), "{line}");
    let path = only_profile_path(dir.path());
    assert!(line.contains(&format!("--suggest-filter FILE {}`", path.display())), "{line}");

    std::fs::remove_file(&path).unwrap();
    let quiet = stderr_of(&program, dir.path(), &[("INSTRUMENT_THROTTLE", "0"), ("INSTRUMENT_QUIET", "1")]);
    assert!(hints(&quiet).is_empty(), "{quiet}");
}

#[test]
fn a_run_its_probes_do_not_dominate_prints_nothing() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "busywait", &[]);
    let stderr = stderr_of(&program, dir.path(), &[]);
    assert!(hints(&stderr).is_empty(), "{stderr}");
    let profile = only_profile(dir.path());
    assert!(profile.overhead.as_ref().unwrap().percent_of_run < 30.0);
}
