//! The profile says how long the program waited for a core: a run that shares its core with a
//! busy loop spends about half its time runnable but waiting, and the profile and the report say
//! so, since that wait is inside the measured times and nothing removes it.

use instrument_tests::*;
use std::process::{Command, Stdio};

/// A busy loop pinned to core 0, stopped when dropped.
struct Busy(std::process::Child);

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_run_sharing_its_core_with_a_busy_loop_says_how_long_it_waited() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "compensation", &[]);
    let busy =
        Command::new("taskset").args(["-c", "0", "yes"]).stdout(Stdio::null()).spawn().expect("taskset");
    let busy = Busy(busy);
    let output = run(Command::new("taskset")
        .args(["-c", "0"])
        .arg(&program)
        .arg("2000000")
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path()));
    drop(busy);
    assert_success(&output, "compensation fixture beside a busy loop");
    let path = only_profile_path(dir.path());
    let profile = only_profile(dir.path());
    // The scheduler shares the core about evenly; a quarter leaves room for how it slices.
    let (waited, wall) = (profile.totals.waited_ns, profile.totals.wall_ns);
    assert!(waited * 4 > wall && waited < wall, "waited {waited} ns of {wall}");
    let report = run(Command::new(bin("instrument")).arg("report").arg(&path));
    let text = String::from_utf8_lossy(&report.stdout);
    let note =
        text.lines().find(|l| l.starts_with("note: threads waited")).unwrap_or_else(|| panic!("{text}"));
    assert!(note.contains("for a core while runnable"), "{note}");
}
