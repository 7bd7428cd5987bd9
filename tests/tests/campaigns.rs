//! A few seeds of the reliability campaigns on every run (the long ones are
//! `cargo run --release -p instrument-tests --bin campaign`): random IR through the rewriter
//! still verifies and compiles; random C programs behave the same instrumented.

use instrument_tests::campaign::{self, Outcome};
use instrument_tests::scratch;

#[test]
fn llvm_stress_modules_still_verify_and_compile_after_rewriting() {
    let dir = scratch();
    let mut outcome = Outcome::default();
    for seed in 1..=200 {
        campaign::llvm_stress_seed(seed, dir.path(), &mut outcome);
    }
    assert!(outcome.failures.is_empty(), "{:#?}", outcome.failures);
    assert!(outcome.checked >= 190, "{outcome:?}");
}

#[test]
fn csmith_programs_behave_the_same_instrumented() {
    let dir = scratch();
    let mut outcome = Outcome::default();
    for seed in 1..=20 {
        campaign::csmith_seed(seed, dir.path(), &mut outcome);
    }
    assert!(outcome.failures.is_empty(), "{:#?}", outcome.failures);
    assert!(outcome.checked >= 15, "most csmith programs terminate quickly: {outcome:?}");
}

/// The reduction path on a real mismatch: a deliberately wrong "instrumented" compiler (the
/// program's XORs become ORs, then instrument-cc builds it) breaks a small csmith program, the
/// campaign flags it, and creduce cuts it down to a few lines that still show the difference.
#[test]
fn creduce_reduces_a_mismatch_to_a_small_program() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let faulty = dir.path().join("faulty-cc");
    std::fs::write(
        &faulty,
        format!(
            "#!/bin/sh\n\
             for a in \"$@\"; do case \"$a\" in *.c) sed 's/ \\^ / | /g' \"$a\" > \"$a.faulty.c\";; esac; done\n\
             exec {} $(printf '%s\\n' \"$@\" | sed 's/\\.c$/.c.faulty.c/')\n",
            instrument_tests::bin("instrument-cc").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&faulty, std::fs::Permissions::from_mode(0o755)).unwrap();
    let small = ["--max-funcs", "2", "--max-block-depth", "2", "--max-expr-complexity", "3", "--no-arrays"];
    let mut outcome = Outcome::default();
    campaign::csmith_seed_with(1, &small, &faulty, dir.path(), &mut outcome);
    assert_eq!(outcome.failures.len(), 1, "the wrong compiler must be caught: {outcome:?}");
    let failure = &outcome.failures[0];
    assert!(failure.what.contains("checksum"), "{}", failure.what);
    let original = std::fs::read_to_string(&failure.input).unwrap();
    let reduced = campaign::reduce(failure, dir.path()).expect("creduce");
    let reduced = std::fs::read_to_string(reduced).unwrap();
    assert!(reduced.contains('^'), "the XOR the fault changes must survive:\n{reduced}");
    assert!(reduced.contains("platform_main_end"), "it must still print the checksum:\n{reduced}");
    assert!(
        reduced.len() * 10 < original.len(),
        "from {} to {} bytes:\n{reduced}",
        original.len(),
        reduced.len()
    );
}
