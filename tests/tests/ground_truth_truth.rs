//! `probe-context --truth` end to end: after its measured run, the ground truth's harness forces
//! the context's events into the state the run left them in and then switches them off one at a
//! time, children first, and the tool prints each event's in-place cost there next to what
//! compensation charged it (tests/src/bin/probe-context/truth.rs). The figures are timings
//! (benchmarks judge them); this checks what they are of: every event of the kernel once, in
//! the order its callpaths give (a callee before its caller), and the switched-off code's row.

use instrument_tests::{assert_success, bin, run, without_instrument_env};
use std::process::Command;

/// The run's truth rows of one mode (not the summary's): (event, settled mode) in the order
/// printed.
fn rows(stdout: &str, mode: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(mode) && l.contains(" in place "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words[2].to_string(), words[3..5].join(" "))
        })
        .collect()
}

/// The stdout of `probe-context --truth 5` on the nested context, in place at late placement,
/// with `reps` repetitions of 500 us and `extra` arguments.
fn truth_run(reps: &str, extra: &[&str]) -> String {
    let mut command = Command::new(bin("probe-context"));
    without_instrument_env(&mut command)
        .args(["--contexts", "nested", "--strategies", "inplace", "--placement", "late"])
        .args(["--reps", reps, "--target-us", "500", "--truth", "5"])
        .args(extra);
    let output = run(&mut command);
    assert_success(&output, "probe-context --truth");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_truth_phase_measures_every_event_children_first_in_its_settled_state() {
    let stdout = truth_run("4", &["--env", "INSTRUMENT_THROTTLE=1"]);
    for mode in ["flat", "callpath"] {
        let mut rows = rows(&stdout, mode);
        // A callpath leaf settled counted is also forced pathed: its pathed pair in place against
        // what its pathed windows measured (where they ran), between the events and the floor.
        if let Some(at) = rows.iter().position(|r| r.1.starts_with("pathed")) {
            assert_eq!((mode, at, rows[at].0.as_str()), ("callpath", 3, "nest_leaf"), "{stdout}");
            assert_eq!(rows[0].1, "mode 1", "only a leaf settled counted: {stdout}");
            rows.remove(at);
        }
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names, ["nest_leaf", "nest_find", "nest_top", "(floor)"], "{stdout}");
        assert_eq!(rows[3].1, "all off", "{stdout}");
        assert!(rows[..3].iter().all(|r| r.1.starts_with("mode ")), "{stdout}");
    }
    assert!(!stdout.contains("error %"), "the main table's error columns are left out: {stdout}");
    assert!(stdout.contains("error [95% CI]"), "the summary over the runs: {stdout}");
}

/// Without throttling every event waits while another is estimated: the truth phase also runs
/// every combination of them timed or waiting and the waiting state switched off one at a time,
/// and the tool prints the window step of the chain its estimations took of each event estimated
/// (once each) and each one's waiting cost (children first), then the whole waiting state's.
/// 160 repetitions of the nested kernel's pair reach at least one estimation in most runs, but
/// none in a slow phase (40 reached none in one run of 17 here; 160 none once in CI, every call
/// 2.5x its usual cost): a mode with no window row runs again with four times the repetitions.
#[test]
fn the_truth_phase_sets_each_window_step_and_waiting_cost_against_its_forced_states() {
    let window_rows = |stdout: &str, mode: &str| -> usize {
        rows(stdout, mode).iter().filter(|r| r.1.starts_with("window")).count()
    };
    let mut stdout = truth_run("160", &[]);
    for reps in ["640", "2560"] {
        if ["flat", "callpath"].iter().all(|m| window_rows(&stdout, m) > 0) {
            break;
        }
        stdout = truth_run(reps, &[]);
    }
    for mode in ["flat", "callpath"] {
        let rows = rows(&stdout, mode);
        let of = |kind: &str| -> Vec<&str> {
            rows.iter().filter(|r| r.1.starts_with(kind)).map(|r| r.0.as_str()).collect()
        };
        let mut windows = of("window");
        windows.sort();
        let count = windows.len();
        windows.dedup();
        assert!(count >= 1 && windows.len() == count, "{mode}: {stdout}");
        assert!(
            windows.iter().all(|w| ["nest_find", "nest_leaf", "nest_top"].contains(w)),
            "{mode}: {stdout}"
        );
        assert_eq!(of("waiting"), ["nest_leaf", "nest_find", "nest_top"], "{mode}: {stdout}");
        assert_eq!(of("all wait"), ["(waiting)"], "{mode}: {stdout}");
    }
}

/// `probe-context --layouts` moves the instrumented kernels with `GT_PAD`: the contexts' code
/// starts that many bytes on (rounded up to the functions' 16-byte alignment), every routine
/// moved alike.
#[test]
fn the_layout_padding_moves_every_kernel_by_its_bytes() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let source = instrument_tests::fixtures().join("bench/ground_truth/contexts.c");
    let addresses = |pad: Option<u32>| -> Vec<(String, u64)> {
        let object = dir.path().join(format!("contexts{}.o", pad.unwrap_or(0)));
        let mut cc = Command::new("clang-22");
        cc.args(["-O2", "-c", "-DGT_SUFFIX=_inst"]).args(pad.map(|p| format!("-DGT_PAD={p}")));
        assert_success(&run(cc.arg(&source).arg("-o").arg(&object)), "clang-22");
        let nm = run(Command::new("llvm-nm-22").args(["--defined-only", "--numeric-sort"]).arg(&object));
        assert_success(&nm, "llvm-nm-22");
        String::from_utf8_lossy(&nm.stdout)
            .lines()
            .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                [at, "t" | "T", name] => Some((name.to_string(), u64::from_str_radix(at, 16).ok()?)),
                _ => None,
            })
            .collect()
    };
    let (plain, padded) = (addresses(None), addresses(Some(40)));
    assert!(plain.len() > 10 && plain[0].1 == 0, "{plain:?}");
    let names = |a: &[(String, u64)]| a.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&plain), names(&padded));
    assert!(plain.iter().zip(&padded).all(|(p, q)| q.1 == p.1 + 48), "{plain:?}\n{padded:?}");
}
