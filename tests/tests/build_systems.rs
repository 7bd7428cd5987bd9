//! The wrappers as build systems use them: make with CC=instrument-cc, separate compile and
//! link steps, and commands that must pass through untouched.

use instrument_tests::*;
use std::process::Command;

#[test]
fn make_project_builds_with_cc_instrument_cc() {
    let dir = scratch();
    let project = dir.path().join("project");
    copy_dir(&fixtures().join("make-project"), &project);
    let cc = bin("instrument-cc");
    let make = run(Command::new("make")
        .arg("-j2")
        .arg(format!("CC={}", cc.display()))
        .env(EARLY.0, EARLY.1)
        .current_dir(&project));
    assert_success(&make, "make CC=instrument-cc");
    let (output, profile) = run_profiled(&project.join("app"), &project);
    assert_success(&output, "app");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "n=8 mean=5.00 stddev=2.00\n");
    assert_eq!(function(&profile, "parse_numbers").stats.calls, 1);
    assert_eq!(function(&profile, "mean").stats.calls, 2, "once from main, once from stddev");
    assert_eq!(function(&profile, "stddev").stats.child_calls, 1);
    assert_eq!(function(&profile, "main").stats.child_calls, 3);
    assert!(function(&profile, "stddev").file.ends_with("stats.c"));
}

#[test]
fn preprocessing_dependencies_and_queries_pass_through() {
    let dir = scratch();
    let cc = bin("instrument-cc");
    let source = fixtures().join("calls.c");
    let pre = run(Command::new(&cc).arg("-E").arg(&source));
    assert_success(&pre, "-E");
    assert!(String::from_utf8_lossy(&pre.stdout).contains("void c(void)"));
    let deps = run(Command::new(&cc).arg("-MM").arg(&source));
    assert_success(&deps, "-MM");
    assert!(String::from_utf8_lossy(&deps.stdout).contains("instrument.h"));
    let version = run(Command::new(&cc).arg("--version"));
    assert_success(&version, "--version");
    assert!(String::from_utf8_lossy(&version.stdout).contains("clang version 22"));
    let syntax = run(Command::new(&cc).arg("-fsyntax-only").arg(&source));
    assert_success(&syntax, "-fsyntax-only");
    assert!(
        syntax.stderr.is_empty(),
        "no unused-argument warnings: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let _ = dir;
}

#[test]
fn separate_compile_and_link_steps_with_a_response_file() {
    let dir = scratch();
    let cc = bin("instrument-cc");
    let object = dir.path().join("calls.o");
    let rsp = dir.path().join("compile.rsp");
    std::fs::write(&rsp, format!("-O2 -c {} -o {}", fixtures().join("calls.c").display(), object.display()))
        .unwrap();
    let compile =
        run(Command::new(&cc).arg(format!("@{}", rsp.display())).env(EVERY_ROUTINE.0, EVERY_ROUTINE.1));
    assert_success(&compile, "compile through a response file");
    assert!(compile.stderr.is_empty(), "{}", String::from_utf8_lossy(&compile.stderr));
    let program = dir.path().join("calls");
    let link = run(Command::new(&cc).arg(&object).arg("-o").arg(&program));
    assert_success(&link, "link");
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    assert_eq!(function(&profile, "c").stats.calls, 9);
}

#[test]
fn several_sources_in_one_command() {
    let dir = scratch();
    let project = fixtures().join("make-project");
    let sources: Vec<_> = ["main.c", "stats.c", "parse.c"].iter().map(|s| project.join(s)).collect();
    let program = compile(&bin("instrument-cc"), dir.path(), "app", &sources, &["-O1", "-lm"]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "app");
    assert_eq!(function(&profile, "mean").stats.calls, 2);
}

#[test]
fn a_c_plus_plus_program_builds_with_instrument_cxx() {
    let dir = scratch();
    let source = dir.path().join("hello.cpp");
    std::fs::write(
        &source,
        "#include <cstdio>\ntemplate <typename T> T twice(T x) { return x + x; }\n\
         int main() { std::printf(\"%d %g\\n\", twice(2), twice(1.5)); }\n",
    )
    .unwrap();
    let program = compile(&bin("instrument-c++"), dir.path(), "hello", &[source], &["-O0"]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "hello");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "4 3\n");
    assert!(has_function(&profile, "_Z5twiceIiET_S0_"));
    assert!(has_function(&profile, "_Z5twiceIdET_S0_"));
}

/// What configure scripts ask a compiler, answered by instrument-cc exactly as by clang-22
/// (exit code, and output where it is the point), including the failures configure relies on.
#[test]
fn configure_style_probes_behave_like_clang() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("conftest.c"),
        "#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.c"), "int main(void) { return }\n").unwrap();
    let probes: &[&[&str]] = &[
        &["-E", "conftest.c"],
        &["-c", "conftest.c", "-o", "conftest.o"],
        &["conftest.c", "-o", "conftest"],
        &["conftest.c", "-lnonexistentlib", "-o", "conftest-bad"],
        &["-c", "broken.c", "-o", "broken.o"],
        &["-v"],
        &["-V"],
        &["-qversion"],
        &["-dumpmachine"],
        &["-print-prog-name=ld"],
    ];
    for args in probes {
        let plain = run(Command::new("clang-22").args(*args).current_dir(dir.path()));
        let wrapped = run(Command::new(bin("instrument-cc")).args(*args).current_dir(dir.path()));
        assert_eq!(plain.status.code(), wrapped.status.code(), "exit code of {args:?}");
        if args[0] == "-E" || args[0].starts_with("-d") || args[0].starts_with("-print") {
            assert_eq!(plain.stdout, wrapped.stdout, "output of {args:?}");
        }
    }
    let conftest = run(Command::new(dir.path().join("conftest")).current_dir(dir.path()));
    assert_eq!(String::from_utf8_lossy(&conftest.stdout), "ok\n");
    let profile = only_profile(dir.path());
    assert_eq!(function(&profile, "main").stats.calls, 1);
    // configure's clean-up, `rm -f conftest*`, also removes the conftest program's profile.
    let leftover: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".instrument.json") && !n.starts_with("conftest"))
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
}

/// With LTO the optimiser runs again in the linker: the default (late) placement instruments
/// there (the wrapper has lld load the plugin), thin or full, in one command or compiled and
/// linked apart; early placement instruments at compile time only, never twice.
#[test]
fn lto_builds_are_instrumented_once_where_the_optimiser_last_runs() {
    let dir = scratch();
    let source = fixtures().join("calls.c");
    let cc = bin("instrument-cc");
    let cases: [(&str, &[&str], &str); 4] = [
        ("thin", &["-flto=thin"], "late"),
        ("full", &["-flto"], "late"),
        ("early", &["-flto=thin", "--instrument-placement=early"], "early"),
        ("apart", &["-flto=thin", "-c"], "late"),
    ];
    for (name, flags, placement) in cases {
        let program = dir.path().join(name);
        let output = if flags.contains(&"-c") {
            let object = dir.path().join(format!("{name}.o"));
            let compile = run(Command::new(&cc).arg("-O2").args(flags).arg(&source).arg("-o").arg(&object));
            assert_success(&compile, "compile for LTO");
            run(Command::new(&cc).args(["-O2", "-flto=thin"]).arg(&object).arg("-o").arg(&program))
        } else {
            run(Command::new(&cc).arg("-O2").args(flags).arg(&source).arg("-o").arg(&program))
        };
        assert_success(&output, &format!("{name} LTO build"));
        let run_dir = new_dir(dir.path(), &format!("{name}-run"));
        let (output, profile) = run_profiled(&program, &run_dir);
        assert_success(&output, name);
        assert_eq!(profile.placement.map(|p| p.name()), Some(placement), "{name}");
        assert_eq!(function(&profile, "main").stats.calls, 1, "{name}: instrumented once");
    }
}
