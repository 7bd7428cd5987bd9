//! Helpers for the end-to-end tests: locate the built binaries, build a fixture plainly and with
//! `instrument-cc`, run it in a private directory, and load the profile it wrote.
//!
//! The binaries are those of the cargo profile the tests run under (target/release for
//! `cargo test --release`); the README's test command builds them first.

pub mod campaign;
pub mod tau;
pub mod third_party;
pub mod variant;

use instrument_profile::{CountedReference, Function, InPlaceCost, Profile};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use std::process::{Command, Output};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the repository").to_path_buf()
}

pub fn fixtures() -> PathBuf {
    repo_root().join("c-fixtures")
}

/// target/<profile>/ of the running test binary (which lives in target/<profile>/deps/), or of
/// a benchmark binary of this package (in target/<profile>/).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("executable path");
    let parent = exe.parent().expect("target/<profile>/...");
    let dir = if parent.ends_with("deps") { parent.parent().expect("target/<profile>") } else { parent };
    let dir = dir.to_path_buf();
    for needed in [
        "instrument",
        "instrument-cc",
        "instrument-c++",
        "instrument-fc",
        "libinstrument_pass.so",
        "libinstrument_rt.a",
    ] {
        assert!(
            dir.join(needed).exists(),
            "{} is missing in {}: run `cargo build --workspace` with the same profile first",
            needed,
            dir.display()
        );
    }
    dir
}

pub fn bin(name: &str) -> PathBuf {
    bin_dir().join(name)
}

/// A scratch directory for one test.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("instrument-test").tempdir().expect("temporary directory")
}

/// Copies the directory tree `from` to `to` (created), leaving every copy writable.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display())) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            // Registry files may be read-only; builds expect to write next to their sources.
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode | 0o200)).unwrap();
        }
    }
}

/// A new directory `name` inside `root` (for example one per run, so each finds its own profile).
pub fn new_dir(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Runs `command`, panicking with its output if it fails to start. The developer's build and
/// run settings (`INSTRUMENT_*`, other than the tool paths) are not inherited: only the ones the
/// test sets on `command` apply.
pub fn run(command: &mut Command) -> Output {
    clear_inherited_settings(command);
    command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

/// Removes from `command` every `INSTRUMENT_*` variable of the test's own environment, the tool
/// paths too (for commands that find the wrappers and tools themselves).
pub fn without_instrument_env(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("INSTRUMENT_") {
            command.env_remove(name);
        }
    }
    command
}

/// Removes from `command` every build and run setting it does not set itself.
pub fn clear_inherited_settings(command: &mut Command) {
    use instrument_contract::settings::{Scope, ALL};
    let set: Vec<std::ffi::OsString> = command.get_envs().map(|(name, _)| name.to_owned()).collect();
    for setting in ALL.iter().filter(|s| s.scope != Scope::Tools) {
        if !set.iter().any(|name| name == setting.name) {
            command.env_remove(setting.name);
        }
    }
}

pub fn assert_success(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The environment that makes the wrappers place probes early, for builds driven by make,
/// CMake or autotools whose tests assert source-level counts (see [`compile`]).
pub const EARLY: (&str, &str) = ("INSTRUMENT_PLACEMENT", "early");
/// Every routine gets events at late placement too, however small: by default it leaves the
/// routines under 200 instructions without loops or recursion to their callers, and most
/// fixtures' routines are a few instructions each. For tests that count their calls through
/// a build path of late placement (wrappers' defaults, rewriter, cargo, LTO).
pub const EVERY_ROUTINE: (&str, &str) = ("INSTRUMENT_MIN_INSTRUCTIONS", "0");

/// Compiles C sources into `dir/name` with `compiler` (a path or a name on PATH); `-l` flags
/// go after the sources. The wrappers place probes early unless `flags` choose a placement:
/// the fixtures assert source-level counts (every call of every routine, inlined or not),
/// which only early placement gives; [`compile_with_defaults`] builds as a user would.
pub fn compile(compiler: &Path, dir: &Path, name: &str, sources: &[PathBuf], flags: &[&str]) -> PathBuf {
    let wrapper = compiler.file_name().is_some_and(|n| n.to_string_lossy().starts_with("instrument-"));
    let chosen = flags.iter().any(|f| f.starts_with("--instrument-placement="));
    let mut all = flags.to_vec();
    if wrapper && !chosen {
        all.push("--instrument-placement=early");
    }
    compile_with_defaults(compiler, dir, name, sources, &all)
}

/// [`compile`] with the wrappers' own defaults.
pub fn compile_with_defaults(
    compiler: &Path,
    dir: &Path,
    name: &str,
    sources: &[PathBuf],
    flags: &[&str],
) -> PathBuf {
    let output_path = dir.join(name);
    let (libs, flags): (Vec<&str>, Vec<&str>) = flags.iter().partition(|f| f.starts_with("-l"));
    let output = run(Command::new(compiler).args(flags).args(sources).args(libs).arg("-o").arg(&output_path));
    assert_success(&output, &format!("compiling {name} with {}", compiler.display()));
    output_path
}

/// Builds `c-fixtures/<fixture>.c` with instrument-cc (-O2 -pthread -lm plus `flags`).
pub fn build_instrumented(dir: &Path, fixture: &str, flags: &[&str]) -> PathBuf {
    let mut all = vec!["-O2", "-pthread", "-lm"];
    all.extend_from_slice(flags);
    compile(&bin("instrument-cc"), dir, base_name(fixture), &[fixtures().join(format!("{fixture}.c"))], &all)
}

/// Builds `c-fixtures/<fixture>.c` with plain clang-22.
pub fn build_plain(dir: &Path, fixture: &str) -> PathBuf {
    let name = format!("{}-plain", base_name(fixture));
    compile(
        Path::new("clang-22"),
        dir,
        &name,
        &[fixtures().join(format!("{fixture}.c"))],
        &["-O2", "-pthread", "-lm"],
    )
}

fn base_name(fixture: &str) -> &str {
    fixture.rsplit('/').next().unwrap_or(fixture)
}

/// Runs `program` with its profile directed into `dir`; returns its output and the profile.
pub fn run_profiled(program: &Path, dir: &Path) -> (Output, Profile) {
    run_profiled_with(program, dir, &[])
}

/// `run_profiled` with arguments for the program.
pub fn run_profiled_with(program: &Path, dir: &Path, args: &[&str]) -> (Output, Profile) {
    let output = run(Command::new(program).args(args).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir));
    (output, only_profile(dir))
}

pub fn loop_at(profile: &Profile, line: u32) -> &instrument_profile::Loop {
    profile
        .loops
        .iter()
        .find(|l| l.line == line)
        .unwrap_or_else(|| panic!("no loop at line {line}: {:#?}", profile.loops))
}

/// The call statements calling `callee`.
pub fn calls_to<'a>(profile: &'a Profile, callee: &str) -> Vec<&'a instrument_profile::CallSite> {
    profile.callsites.iter().filter(|c| c.callee == callee).collect()
}

/// The single profile in `dir` (panics if there is none or more than one).
pub fn only_profile(dir: &Path) -> Profile {
    load_profile(&only_profile_path(dir))
}

/// The profile at `path` (panics if it cannot be read or is not a valid profile).
pub fn load_profile(path: &Path) -> Profile {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Profile::from_json(&text).unwrap_or_else(|e| panic!("{} is not a valid profile: {e}", path.display()))
}

/// The profiles (*.instrument.json) in `dir`.
pub fn profile_paths(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("scratch directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".instrument.json")))
        .collect()
}

/// The path of the single profile in `dir` (panics if there is none or more than one).
pub fn only_profile_path(dir: &Path) -> PathBuf {
    let mut profiles = profile_paths(dir);
    assert_eq!(profiles.len(), 1, "expected one profile in {}, found {profiles:?}", dir.display());
    profiles.pop().expect("one profile")
}

pub fn function<'a>(profile: &'a Profile, name: &str) -> &'a Function {
    profile
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name} in profile: {:#?}", profile.functions))
}

/// Routine `name`'s calls on each thread of `profile`, in the profile's thread order.
pub fn calls_per_thread(profile: &Profile, name: &str) -> Vec<u64> {
    let id = function(profile, name).id;
    profile
        .threads
        .iter()
        .map(|t| t.events.iter().find(|e| e.id == id).map_or(0, |e| e.stats.calls))
        .collect()
}

/// Readable routine name -> calls, as `instrument report --json` shows them (C++ and Rust
/// demangled, Fortran as written: `module::routine`).
pub fn report_calls(profile: &Path) -> std::collections::BTreeMap<String, u64> {
    let output = run(Command::new(bin("instrument")).args(["report", "--json"]).arg(profile));
    assert_success(&output, "report --json");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("report JSON");
    report["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f["calls"].as_u64().unwrap()))
        .collect()
}

pub fn has_function(profile: &Profile, name: &str) -> bool {
    profile.functions.iter().any(|f| f.name == name)
}

/// A run of the `build` (its name: "throttled" gives the catcher an event) of a fixture whose
/// `thrower` runs 20 times, each time longjmping or throwing at once to `catcher`, which has no
/// frame (throttled, or without an event): every skipped frame was closed where the jump landed
/// (nothing ran under the thrower, one frame reconciled each, none left at exit), and the
/// thrower's inclusive time is under `1 / share` of main's (before, it held the rest of the run).
pub fn assert_closed_at_landing(profile: &Profile, build: &str, thrower: &str, catcher: &str, share: u64) {
    let (fail, main) = (function(profile, thrower), function(profile, "main"));
    let caught = profile.functions.iter().find(|f| f.name == catcher);
    assert_eq!(caught.map(|f| f.throttled), (build == "throttled").then_some(true), "{build}: {catcher}");
    assert_eq!(
        (fail.stats.calls, fail.stats.child_calls),
        (20, 0),
        "{build}: nothing ran under a closed {thrower}"
    );
    assert_eq!(profile.totals.frames_reconciled, 20, "{build}: one {thrower} frame per jump");
    assert_eq!(profile.totals.frames_closed_at_exit, 0, "{build}");
    assert!(
        fail.stats.inclusive_ns * share < main.stats.inclusive_ns,
        "{build}: 20 short {thrower} calls, not the run: {} of {} ns",
        fail.stats.inclusive_ns,
        main.stats.inclusive_ns
    );
    assert_inclusive_covers_exclusive(profile);
}

/// Inclusive time is never below exclusive time, for every routine.
pub fn assert_inclusive_covers_exclusive(profile: &Profile) {
    for f in &profile.functions {
        assert!(
            f.stats.inclusive_ns >= f.stats.exclusive_ns,
            "{}: inclusive {} < exclusive {}",
            f.name,
            f.stats.inclusive_ns,
            f.stats.exclusive_ns
        );
    }
}

/// Every in-place estimate says what its counted cost was measured against, and that path's
/// measurement is in it (a pathed pair's only without windows of a counted call).
pub fn assert_references_measured(estimates: &[InPlaceCost]) {
    for e in estimates {
        let measured = match e.counted_reference {
            Some(CountedReference::Inline) => e.counted_over_inline_ns.is_some() && e.inline_pairs > 0,
            Some(CountedReference::Bare) => e.counted_over_bare_ns.is_some() && e.bare_pairs > 0,
            Some(CountedReference::Tally) => e.counted_over_tally_ns.is_some() && e.counted_pairs > 0,
            Some(CountedReference::Pathed) => {
                e.counted_over_tally_ns.is_none() && e.counted_over_bare_ns.is_none()
            }
            Some(CountedReference::Calibration) => true,
            None => false,
        };
        assert!(measured, "estimate's counted reference and its measurement: {e:?}");
    }
}

/// The DOM of a local HTML file after its scripts ran, from headless Chromium (Debian's
/// package, installed by scripts/install-deps). `fragment` is appended to the file URL.
pub fn chromium_dom(page: &Path, fragment: &str) -> String {
    let browser = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("headless Chromium is needed for the HTML tests: run scripts/install-deps");
    let profile_dir = scratch();
    let url = format!("file://{}{fragment}", page.display());
    let output = run(Command::new("timeout").arg("120").arg(browser).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=5000",
        &format!("--user-data-dir={}", profile_dir.path().display()),
        "--dump-dom",
        &url,
    ]));
    assert_success(&output, "chromium --dump-dom");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `instrument report --callpaths ARGS`, run in `dir`, as callpath -> calls.
pub fn callpath_calls(dir: &Path, args: &[&str]) -> std::collections::BTreeMap<String, u64> {
    let output =
        run(Command::new(bin("instrument")).current_dir(dir).args(["report", "--callpaths"]).args(args));
    assert_success(&output, "report --callpaths");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .skip(3)
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields[6..].join(" "), fields[3].parse().unwrap())
        })
        .collect()
}

/// The MPI communication record of `operation` in `profile` (the first, if several).
pub fn record<'a>(profile: &'a Profile, operation: &str) -> &'a instrument_profile::Communication {
    profile
        .communication
        .iter()
        .find(|c| c.operation == operation)
        .unwrap_or_else(|| panic!("no {operation} record: {:#?}", profile.communication))
}

/// `program`'s disassembly (`llvm-objdump-22 -d`, without raw bytes).
pub fn disassembly(program: &Path) -> String {
    let output = run(Command::new("llvm-objdump-22").args(["-d", "--no-show-raw-insn"]).arg(program));
    assert_success(&output, "llvm-objdump-22");
    String::from_utf8(output.stdout).expect("llvm-objdump-22 prints text")
}

/// The instruction lines of `routine` in `program`'s disassembly.
pub fn routine_disassembly(program: &Path, routine: &str) -> Vec<String> {
    let text = disassembly(program);
    let body = text.split(&format!("<{routine}>:")).nth(1).expect("the routine is in the program");
    body.split("\n\n").next().unwrap_or_default().lines().map(str::to_string).collect()
}
