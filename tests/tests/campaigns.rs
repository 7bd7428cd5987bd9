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
