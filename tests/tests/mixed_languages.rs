//! One program, two languages: a Fortran main program calls C, which calls back into Fortran
//! (bind(c) routines, also through a C routine calling a Fortran one). Compiled by
//! instrument-fc and instrument-cc and linked by instrument-fc, it writes one profile holding
//! both languages with exact counts, and behaves like the plain build.

use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn build(dir: &Path, cc: &Path, fc: &Path, name: &str) -> std::path::PathBuf {
    let fixture = fixtures().join("mixed");
    let object = dir.join(format!("{name}-integrate.o"));
    let compile = run(Command::new(cc)
        .env(EARLY.0, EARLY.1)
        .args(["-O2", "-c"])
        .arg(fixture.join("integrate.c"))
        .arg("-o")
        .arg(&object));
    assert_success(&compile, &format!("{} -c integrate.c", cc.display()));
    let program = dir.join(name);
    // In `dir`: flang writes the module file (callbacks.mod) to the working directory.
    let link = run(Command::new(fc)
        .env(EARLY.0, EARLY.1)
        .current_dir(dir)
        .arg("-O2")
        .arg(fixture.join("main.f90"))
        .arg(&object)
        .arg("-o")
        .arg(&program));
    assert_success(&link, &format!("{} main.f90 integrate.o", fc.display()));
    program
}

#[test]
fn fortran_calling_c_calling_fortran_gives_one_profile() {
    let dir = scratch();
    let plain = build(dir.path(), Path::new("clang-22"), Path::new("flang-22"), "plain");
    let instrumented = build(dir.path(), &bin("instrument-cc"), &bin("instrument-fc"), "mixed");
    let plain_run = run(&mut Command::new(&plain));
    let (instrumented_run, profile) = run_profiled(&instrumented, dir.path());
    assert_success(&instrumented_run, "mixed");
    assert_eq!(plain_run.stdout, instrumented_run.stdout);
    assert!(String::from_utf8_lossy(&plain_run.stdout).contains("integral of x^2 on [0,3] =   8.999998"));

    let language = |name: &str| function(&profile, name).language.name();
    for (routine, calls, lang, file) in [
        ("integrate", 1, "c", "integrate.c"),
        ("midpoint", 1000, "c", "integrate.c"),
        ("report_c", 1, "c", "integrate.c"),
        ("integrand", 1000, "fortran", "main.f90"),
        ("fortran_log", 1, "fortran", "main.f90"),
    ] {
        let f = function(&profile, routine);
        assert_eq!(f.stats.calls, calls, "{routine}");
        assert_eq!(language(routine), lang, "{routine}");
        assert!(f.file.ends_with(file), "{routine} in {}", f.file);
    }
    assert_eq!(function(&profile, "integrate").stats.child_calls, 2000, "midpoint and the Fortran integrand");
    assert_eq!(function(&profile, "report_c").stats.child_calls, 1, "the Fortran logger");
    let calls = report_calls(&only_profile_path(dir.path()));
    assert_eq!(calls.get("main program"), Some(&1), "{calls:?}");
    assert_inclusive_covers_exclusive(&profile);
}
