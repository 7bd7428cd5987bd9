//! Instrumentation must not change what a program does: same output, same exit code.

use instrument_tests::*;
use std::process::Command;

#[test]
fn output_and_exit_code_match_the_plain_build() {
    for fixture in ["calls", "recursion", "deep_exit", "threads", "longjmp", "musttail", "demo/demo"] {
        let dir = scratch();
        let plain = build_plain(dir.path(), fixture);
        let instrumented = build_instrumented(dir.path(), fixture, &[]);
        let a = run(Command::new(&plain).current_dir(dir.path()));
        let b = run(Command::new(&instrumented)
            .current_dir(dir.path())
            .env("INSTRUMENT_PROFILE_DIR", dir.path()));
        assert_eq!(a.status.code(), b.status.code(), "{fixture}: exit code");
        assert_eq!(
            String::from_utf8_lossy(&a.stdout),
            String::from_utf8_lossy(&b.stdout),
            "{fixture}: stdout"
        );
        assert_eq!(
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr),
            "{fixture}: stderr"
        );
    }
}
