//! bench-nas class S: every kernel verifies against the official NPB values, plainly and when
//! built with instrument-cc and instrument-fc, and the instrumented kernels show the NPB call
//! structure.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn make_check(build: &Path, profile_dir: &Path, wrappers: Option<(&Path, &Path)>) -> String {
    let mut make = Command::new("make");
    make.arg("-s").arg("-C").arg(repo_root().join("bench-nas")).arg(format!("BUILD={}", build.display()));
    make.args(["CLASS=S", "check"]).env("INSTRUMENT_PROFILE_DIR", profile_dir).env(EARLY.0, EARLY.1);
    if let Some((cc, fc)) = wrappers {
        make.arg(format!("CC={}", cc.display())).arg(format!("FC={}", fc.display()));
    }
    let output = run(&mut make);
    assert_success(&output, "make check CLASS=S");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(text.matches("SUCCESSFUL").count() - text.matches("UNSUCCESSFUL").count(), 8, "{text}");
    text
}

fn calls(dir: &Path, program: &str, routine: &str) -> u64 {
    let path = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{program}.")))
        .unwrap_or_else(|| panic!("no profile of {program} in {}", dir.display()));
    let profile = load_profile(&path);
    function(&profile, routine).stats.calls
}

#[test]
fn class_s_verifies_plain_and_instrumented() {
    let dir = scratch();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    make_check(&dir.path().join("plain"), &profiles, None);
    assert_eq!(std::fs::read_dir(&profiles).unwrap().count(), 0, "plain builds write no profile");

    make_check(
        &dir.path().join("instrumented"),
        &profiles,
        Some((&bin("instrument-cc"), &bin("instrument-fc"))),
    );
    // One untimed warm-up iteration plus the class S iterations, as in NPB.
    assert_eq!(calls(&profiles, "cg", "conj_grad"), 1 + 15);
    assert_eq!(calls(&profiles, "is", "rank"), 1 + 10);
    assert_eq!(calls(&profiles, "is", "randlc"), 4 * (1 << 16), "create_seq draws 4 numbers per key");
    assert_eq!(calls(&profiles, "mg", "mg3P"), 1 + 4);
    assert_eq!(calls(&profiles, "ft", "evolve"), 6);
    assert_eq!(calls(&profiles, "bt", "adi"), 1 + 60);
    assert_eq!(calls(&profiles, "bt", "binvcrhs"), calls(&profiles, "bt", "matmul_sub"));
    // The Fortran versions: flang names external procedures `name_`.
    assert_eq!(calls(&profiles, "cg_f", "conj_grad_"), 1 + 15);
    assert_eq!(calls(&profiles, "ep_f", "vranlc_"), calls(&profiles, "ep", "vranlc"));
}
