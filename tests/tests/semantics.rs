//! Instrumentation must not change what a program does: same output, same exit code, with
//! routine probes only and with every event kind (loops and call statements split edges and
//! wrap calls).

use instrument_tests::*;
use std::process::Command;

#[test]
fn output_and_exit_code_match_the_plain_build() {
    let fixtures =
        ["calls", "recursion", "deep_exit", "threads", "longjmp", "musttail", "loops", "demo/demo"];
    for events in ["functions", "all"] {
        for fixture in fixtures {
            let dir = scratch();
            let plain = build_plain(dir.path(), fixture);
            let flag = format!("--instrument-events={events}");
            let instrumented = build_instrumented(dir.path(), fixture, &[&flag]);
            let a = run(Command::new(&plain).current_dir(dir.path()));
            // Quiet: the runtime's own line when probes dominate a run is not the program's.
            let b = run(Command::new(&instrumented)
                .current_dir(dir.path())
                .env("INSTRUMENT_PROFILE_DIR", dir.path())
                .env("INSTRUMENT_QUIET", "1"));
            let what = format!("{fixture} with {events}");
            assert_eq!(a.status.code(), b.status.code(), "{what}: exit code");
            assert_eq!(
                String::from_utf8_lossy(&a.stdout),
                String::from_utf8_lossy(&b.stdout),
                "{what}: stdout"
            );
            assert_eq!(
                String::from_utf8_lossy(&a.stderr),
                String::from_utf8_lossy(&b.stderr),
                "{what}: stderr"
            );
        }
    }
}
