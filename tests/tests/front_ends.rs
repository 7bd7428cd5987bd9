//! A front end the plugin cannot load into: D through Debian's `ldc2` (built on an older LLVM).
//! Its bitcode goes through `instrument rewrite`, and `instrument link` links it with LDC's own
//! driver; the program behaves like the plain build, its routines are counted exactly, and the
//! report reads D names as D writes them.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn ldc2(dir: &Path) -> Command {
    let mut command = Command::new("ldc2");
    command.current_dir(dir);
    command
}

#[test]
fn d_through_bitcode_rewrite_and_link_gives_a_profile_with_d_names() {
    let dir = scratch();
    let source = fixtures().join("d").join("app.d");
    let plain = run(ldc2(dir.path()).arg("-O").arg(&source).arg("-of=plain"));
    assert_success(&plain, "ldc2 app.d (is Debian's ldc installed? scripts/install-deps installs it)");
    let bitcode = run(ldc2(dir.path()).args(["-c", "-O", "-output-bc"]).arg(&source).arg("-of=app.bc"));
    assert_success(&bitcode, "ldc2 -output-bc");
    let rewrite = run(Command::new(bin("instrument"))
        .current_dir(dir.path())
        .args(["rewrite", "app.bc", "-o", "app.o"])
        .env(EVERY_ROUTINE.0, EVERY_ROUTINE.1));
    assert_success(&rewrite, "instrument rewrite");
    let link = run(Command::new(bin("instrument"))
        .current_dir(dir.path())
        .args(["link", "--", "ldc2", "app.o", "-of=app"]));
    assert_success(&link, "instrument link -- ldc2");

    let plain_run = run(&mut Command::new(dir.path().join("plain")));
    let (instrumented_run, profile) = run_profiled(&dir.path().join("app"), dir.path());
    assert_success(&instrumented_run, "the instrumented D program");
    assert_eq!(plain_run.stdout, instrumented_run.stdout);
    assert_eq!(String::from_utf8_lossy(&plain_run.stdout), "fib(20) = 6765, sum = 1498500\n");

    // The counts of the optimised code (late placement on LDC's -O bitcode): its optimiser
    // turns one of fib's two recursive calls into a loop, so fib(20) runs 10946 calls, not 21891.
    assert_eq!(function(&profile, "_D3app3fibFiZi").stats.calls, 10946);
    assert_eq!(function(&profile, "_D3app__T6scaledTlZQkFNaNbNiNfllZl").stats.calls, 1000);
    assert_eq!(function(&profile, "_Dmain").stats.calls, 1);
    assert_inclusive_covers_exclusive(&profile);
    let calls = report_calls(&only_profile_path(dir.path()));
    assert_eq!(calls.get("app.fib(int)"), Some(&10946), "{calls:?}");
    assert_eq!(calls.get("app.scaled!(long).scaled(long, long)"), Some(&1000), "{calls:?}");
    assert_eq!(calls.get("D main"), Some(&1), "{calls:?}");
}

#[test]
fn link_without_a_command_says_how_to_give_one() {
    let output = run(Command::new(bin("instrument")).arg("link"));
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("instrument link -- ldc2") || stderr.contains("required"), "{stderr}");
}
