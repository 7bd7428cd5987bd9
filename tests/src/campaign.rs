//! Random-program campaigns (issue: reliability). `llvm_stress`: modules from llvm-stress-22
//! through the bitcode rewriter, with every event kind, must still verify (the rewriter runs the
//! verifier) and compile to an object wherever the original does. `csmith`: random C programs
//! built plainly and with instrument-cc (every event kind, callpath mode on at run time) must
//! print the same checksum and exit the same way; a mismatch can be reduced with creduce into a
//! regression fixture. The CI tests run a few seeds; `campaign` (src/bin) runs thousands.

use crate::{bin, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A seed whose program or module broke something, with what broke, where its input is, and
/// (csmith) the compiler wrapper that built the instrumented program.
#[derive(Debug)]
pub struct Failure {
    pub seed: u64,
    pub what: String,
    pub input: PathBuf,
    pub wrapper: PathBuf,
}

/// What a campaign did: seeds checked, seeds skipped (the generator's or the plain build's own
/// trouble, e.g. a csmith program that does not terminate), and failures.
#[derive(Debug, Default)]
pub struct Outcome {
    pub checked: u64,
    pub skipped: u64,
    pub failures: Vec<Failure>,
}

fn keep(work: &Path, seed: u64, file: &Path) -> PathBuf {
    let kept = work.join("failures");
    std::fs::create_dir_all(&kept).unwrap();
    let target = kept.join(format!("{seed}-{}", file.file_name().unwrap().to_string_lossy()));
    std::fs::copy(file, &target).unwrap();
    target
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).lines().take(5).collect::<Vec<_>>().join(" | ")
}

/// One llvm-stress seed: generate, assemble, rewrite to bitcode (verified) and to an object.
pub fn llvm_stress_seed(seed: u64, work: &Path, outcome: &mut Outcome) {
    let (ll, bc) = (work.join("stress.ll"), work.join("stress.bc"));
    let size = 100 * (seed % 8 + 1);
    let generated = run(Command::new("llvm-stress-22")
        .args(["-size", &size.to_string(), "-seed", &seed.to_string()])
        .arg("-o")
        .arg(&ll));
    let assembled = run(Command::new("llvm-as-22").arg(&ll).arg("-o").arg(&bc));
    if !generated.status.success() || !assembled.status.success() {
        outcome.skipped += 1;
        return;
    }
    let codegen =
        run(Command::new("llc-22").args(["-filetype=obj", "-o", "/dev/null"]).arg(&bc)).status.success();
    let outputs: &[&str] =
        if codegen { &["instrumented.bc", "instrumented.o"] } else { &["instrumented.bc"] };
    for output in outputs {
        let rewrite = run(Command::new(bin("instrument"))
            .env("INSTRUMENT_EVENTS", "all")
            .arg("rewrite")
            .arg(&bc)
            .arg("-o")
            .arg(work.join(output)));
        if !rewrite.status.success() {
            let input = keep(work, seed, &ll);
            outcome.failures.push(Failure {
                seed,
                what: format!("rewrite to {output}: {}", stderr_of(&rewrite)),
                input,
                wrapper: bin("instrument"),
            });
            return;
        }
    }
    outcome.checked += 1;
}

pub fn csmith_include() -> &'static str {
    "/usr/include/csmith"
}

/// One csmith seed: generate, build both ways, run both, compare.
pub fn csmith_seed(seed: u64, work: &Path, outcome: &mut Outcome) {
    csmith_seed_with(seed, &[], &bin("instrument-cc"), work, outcome)
}

/// One csmith seed generated with extra csmith options (e.g. smaller programs), its
/// instrumented program built by `wrapper` (instrument-cc, or a deliberately wrong compiler in
/// the test of the reduction).
/// The plain program's output when there is something to compare: it ends within 2 s, not by
/// a signal, and the same at -O0 and -O1. csmith programs may loop forever, and clang at -O1
/// deletes infinite loops without side effects (undefined behaviour) and folds loops of pure
/// arithmetic away, which the probes' calls keep.
fn well_behaved(source: &Path, plain: &Path, work: &Path) -> Option<std::process::Output> {
    let unoptimised = work.join("plain-O0");
    let built =
        run(Command::new("clang-22").args(build_flags()).arg("-O0").arg(source).arg("-o").arg(&unoptimised));
    let expected = run(Command::new("timeout").arg("2").arg(plain).current_dir(work));
    let reference = run(Command::new("timeout").arg("2").arg(&unoptimised).current_dir(work));
    let same = expected.status.code() == reference.status.code() && expected.stdout == reference.stdout;
    (built.status.success() && same && !matches!(expected.status.code(), None | Some(124)))
        .then_some(expected)
}

pub fn csmith_seed_with(seed: u64, options: &[&str], wrapper: &Path, work: &Path, outcome: &mut Outcome) {
    let source = work.join(format!("random{seed}.c"));
    let generated =
        run(Command::new("csmith").args(["--seed", &seed.to_string()]).args(options).arg("-o").arg(&source));
    let plain = work.join("plain");
    let instrumented = work.join("instrumented");
    let built = run(Command::new("clang-22").args(build_flags()).arg(&source).arg("-o").arg(&plain));
    if !generated.status.success() || !built.status.success() {
        outcome.skipped += 1;
        return;
    }
    let wrapped = run(Command::new(wrapper)
        .env("INSTRUMENT_EVENTS", "all")
        .args(build_flags())
        .arg(&source)
        .arg("-o")
        .arg(&instrumented));
    if !wrapped.status.success() {
        let input = keep(work, seed, &source);
        outcome.failures.push(Failure {
            seed,
            what: format!("instrument-cc failed: {}", stderr_of(&wrapped)),
            input,
            wrapper: wrapper.to_path_buf(),
        });
        return;
    }
    let Some(expected) = well_behaved(&source, &plain, work) else {
        outcome.skipped += 1;
        return;
    };
    // Every event kind with callpaths may be tens of times slower than the plain program.
    let got = run(Command::new("timeout")
        .arg("120")
        .arg(&instrumented)
        .current_dir(work)
        .env("INSTRUMENT_PROFILE_DIR", work)
        .env("INSTRUMENT_CALLPATH", "all"));
    for profile in crate::profile_paths(work) {
        std::fs::remove_file(profile).unwrap();
    }
    if got.status.code() != expected.status.code() || got.stdout != expected.stdout {
        let input = keep(work, seed, &source);
        let what = format!(
            "plain {:?} {:?}, instrumented {:?} {:?}",
            expected.status.code(),
            String::from_utf8_lossy(&expected.stdout).trim(),
            got.status.code(),
            String::from_utf8_lossy(&got.stdout).trim()
        );
        outcome.failures.push(Failure { seed, what, input, wrapper: wrapper.to_path_buf() });
        return;
    }
    std::fs::remove_file(&source).ok();
    outcome.checked += 1;
}

fn build_flags() -> Vec<String> {
    vec!["-O1".into(), "-w".into(), format!("-I{}", csmith_include())]
}

/// A creduce interestingness test for a csmith program named `name` in the working directory:
/// it still builds plainly, ends with status 0 and prints csmith's checksum line, the same at
/// -O0 and -O1 (so no undefined behaviour creeps in, such as `void main` returning garbage),
/// and its build by `wrapper` behaves differently (fails to build, fails, or prints otherwise).
pub fn interestingness_script(name: &str, wrapper: &Path) -> String {
    let flags = build_flags().join(" ");
    format!(
        "#!/bin/sh\n\
         # creduce: interesting while the plain build works and the instrumented one differs\n\
         clang-22 {flags} {name} -o plain >/dev/null 2>&1 || exit 1\n\
         clang-22 {flags} -O0 {name} -o plain0 >/dev/null 2>&1 || exit 1\n\
         timeout 2 ./plain >plain.out 2>/dev/null || exit 1\n\
         grep -q '^checksum = ' plain.out || exit 1\n\
         timeout 2 ./plain0 >plain0.out 2>/dev/null && cmp -s plain.out plain0.out || exit 1\n\
         INSTRUMENT_EVENTS=all {wrapper} {flags} {name} -o instrumented >/dev/null 2>&1 || exit 0\n\
         INSTRUMENT_CALLPATH=all INSTRUMENT_PROFILE_DIR=. timeout 120 ./instrumented >instrumented.out 2>/dev/null || exit 0\n\
         cmp -s plain.out instrumented.out && exit 1\n\
         exit 0\n",
        wrapper = wrapper.display()
    )
}

/// Reduces a failing csmith program with creduce (slow: minutes) into `dest`.
pub fn reduce(failure: &Failure, dest: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    let name = "program.c";
    std::fs::copy(&failure.input, dir.path().join(name))?;
    let script = dir.path().join("interesting.sh");
    std::fs::write(&script, interestingness_script(name, &failure.wrapper))?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    // creduce's passes leave files in TMPDIR (dozens per reduction): keep them in `dir`, which
    // is removed with everything in it.
    let scratch = dir.path().join("tmp");
    std::fs::create_dir(&scratch)?;
    let status = Command::new("creduce")
        .arg("--n")
        .arg("2")
        .arg(&script)
        .arg(name)
        .current_dir(dir.path())
        .env("TMPDIR", &scratch)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other("creduce failed"));
    }
    let target = dest.join(format!("csmith-{}.c", failure.seed));
    std::fs::copy(dir.path().join(name), &target)?;
    Ok(target)
}
