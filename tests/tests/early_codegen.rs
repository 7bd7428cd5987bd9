//! Early placement leaves the code the optimiser makes of a routine as the plain build makes it,
//! where only the probes' shape is at stake: the exits' guards are built after the optimiser is
//! done (pass/src/guards.rs), so a routine's returning block stays whole and the SLP vectoriser
//! pairs what it pairs in the plain build; the program's output and the counts stay exact.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

/// The packed-double arithmetic instructions of `routine` in `program`.
fn packed_arithmetic(program: &Path, routine: &str) -> Vec<String> {
    routine_disassembly(program, routine)
        .iter()
        .filter_map(|l| l.split('\t').nth(1))
        .filter_map(|i| i.split_whitespace().next())
        .filter(|m| ["mulpd", "addpd", "subpd"].contains(m))
        .map(str::to_string)
        .collect()
}

#[test]
fn early_placement_keeps_the_plain_builds_vectorised_routine() {
    let dir = scratch();
    let plain = build_plain(dir.path(), "lcg_step");
    let early = build_instrumented(dir.path(), "lcg_step", &["--instrument-placement=early"]);
    let plain_ops = packed_arithmetic(&plain, "lcg_step");
    assert!(!plain_ops.is_empty(), "the plain build pairs the two halves' chains");
    assert_eq!(packed_arithmetic(&early, "lcg_step"), plain_ops);
    let expected = run(&mut Command::new(&plain));
    let (output, profile) = run_profiled(&early, dir.path());
    assert_eq!(output.stdout, expected.stdout);
    assert_eq!(function(&profile, "lcg_step").stats.calls, 1000);
}

#[test]
fn deferred_exits_no_pass_lowered_are_served_by_the_runtime() {
    let dir = scratch();
    // An instrumented link first, which seals the runtime archive beside the tools (its
    // profile goes to a directory of its own, not the source tree or the one checked below).
    let reference = scratch();
    let expected =
        run(Command::new(build_instrumented(dir.path(), "lcg_step", &[])).current_dir(reference.path()));
    // Compiled for LTO, the module keeps its deferred exits (only the last pipeline lowers them);
    // a plain clang link then optimises it without the pass, so they reach the executable.
    let object = dir.path().join("lcg_step.o");
    let source = fixtures().join("lcg_step.c");
    let compiled = run(Command::new(bin("instrument-cc"))
        .args(["--instrument-placement=early", "-O2", "-flto", "-c"])
        .arg(&source)
        .arg("-o")
        .arg(&object));
    assert_success(&compiled, "instrument-cc -flto -c");
    let program = dir.path().join("lcg_step-unlowered");
    let linked = run(Command::new("clang-22")
        .args(["-O2", "-flto"])
        .arg(&object)
        .arg(bin_dir().join("libinstrument_rt.sealed.a"))
        .args(instrument_toolchain::runtime::NATIVE_LIBS)
        .arg("-o")
        .arg(&program));
    assert_success(&linked, "clang-22 -flto without the pass");
    let text = disassembly(&program);
    assert!(text.contains("<__instrument_exit_if_pm>"), "the deferred exits are still calls");
    let (output, profile) = run_profiled(&program, dir.path());
    assert_eq!(output.stdout, expected.stdout);
    assert_eq!(function(&profile, "lcg_step").stats.calls, 1000);
    assert_eq!(function(&profile, "main").stats.calls, 1);
}

/// The register-preserving probes give back every register their convention preserves on every
/// path: `c-fixtures/registers.c` keeps arguments, results and loop values live across its
/// probes, and prints the same as its plain build whether the probes are timed, counted
/// (throttled), switched off, in the in-place windows of compensation, or with callpaths.
#[test]
fn the_preserving_probes_keep_the_callers_registers_on_every_path() {
    let dir = scratch();
    let plain = run(&mut Command::new(build_plain(dir.path(), "registers")));
    assert_success(&plain, "plain registers");
    let early = build_instrumented(
        dir.path(),
        "registers",
        &["--instrument-placement=early", "--instrument-events=all"],
    );
    let text = disassembly(&early);
    for probe in ["__instrument_enter_pm", "__instrument_exit_pm", "__instrument_loop_exit_pm"] {
        assert!(text.contains(&format!("<{probe}>")), "the build calls {probe}");
    }
    let off = dir.path().join("off.txt");
    std::fs::write(&off, "BEGIN_EXCLUDE_LIST\nsix\nlooped\nscaled\nEND_EXCLUDE_LIST\n").unwrap();
    let off = format!("INSTRUMENT_RUNTIME_SELECT={}", off.display());
    for settings in [
        &["INSTRUMENT_QUIET=1"][..],
        &["INSTRUMENT_THROTTLE=0"],
        &["INSTRUMENT_COMPENSATE=1"],
        &["INSTRUMENT_CALLPATH=all"],
        &[off.as_str()],
    ] {
        let mut command = Command::new(&early);
        command.env("INSTRUMENT_PROFILE_DIR", dir.path()).env("INSTRUMENT_QUIET", "1");
        for setting in settings {
            let (name, value) = setting.split_once('=').unwrap();
            command.env(name, value);
        }
        let output = run(&mut command);
        assert_success(&output, &format!("registers with {settings:?}"));
        assert_eq!(output.stdout, plain.stdout, "with {settings:?}");
    }
}
