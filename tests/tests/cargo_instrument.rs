//! `cargo instrument` on a small Rust workspace (a binary, a library crate, a crates.io
//! dependency): same behaviour as the plain build, readable Rust names with exact counts, the
//! user's RUSTFLAGS kept, the normal target directory untouched, panics caught by catch_unwind
//! leaving the shadow stack true, dev and release profiles, and `cargo instrument test`.

use instrument_tests::*;
use std::path::Path;
use std::process::{Command, Output};

/// A copy of tests/rust-workspace in a scratch directory.
fn workspace() -> tempfile::TempDir {
    let dir = scratch();
    let source = repo_root().join("tests/rust-workspace");
    let status = Command::new("cp").arg("-r").arg(source.join(".")).arg(dir.path()).status().unwrap();
    assert!(status.success());
    dir
}

/// `cargo ARGS` in `dir` with the instrument binaries first on PATH and no inherited flags.
/// Builds take `--locked`: the workspace's committed Cargo.lock decides every dependency's
/// version, never the machine's registry cache.
fn cargo(dir: &Path, args: &[&str], rustflags: Option<&str>) -> Output {
    let path = format!("{}:{}", bin_dir().display(), std::env::var("PATH").unwrap_or_default());
    let mut args: Vec<&str> = args.to_vec();
    let builds = |a: Option<&&str>| a.is_some_and(|a| ["run", "build", "test"].contains(a));
    if builds(args.first()) {
        args.insert(1, "--locked");
    } else if args.first() == Some(&"instrument") && builds(args.get(1)) {
        args.insert(2, "--locked");
    }
    let mut command = Command::new("cargo");
    command.args(&args).current_dir(dir).env("PATH", path).env(EVERY_ROUTINE.0, EVERY_ROUTINE.1);
    for var in ["CARGO_TARGET_DIR", "CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO"] {
        command.env_remove(var);
    }
    if let Some(flags) = rustflags {
        command.env("RUSTFLAGS", flags);
    }
    command.output().unwrap()
}

const EXPECTED: &str = "sum 4950 fib 610 caught true user_cfg true done\n";

#[test]
fn run_matches_the_plain_build_and_profiles_every_workspace_crate() {
    let dir = workspace();
    let user = Some("--cfg from_user");
    let plain = cargo(dir.path(), &["run", "--release", "-q", "-p", "app"], user);
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        EXPECTED,
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    assert_eq!(plain.status.code(), Some(3));

    let instrumented = cargo(dir.path(), &["instrument", "run", "--release", "-q", "-p", "app"], user);
    assert_eq!(
        String::from_utf8_lossy(&instrumented.stdout),
        EXPECTED,
        "{}",
        String::from_utf8_lossy(&instrumented.stderr)
    );
    assert_eq!(instrumented.status.code(), Some(3), "same exit code");
    assert!(dir.path().join("target/instrument").is_dir(), "a target directory of its own");

    let found = profile_paths(dir.path());
    assert_eq!(found.len(), 1);
    let calls = report_calls(&found[0]);
    assert_eq!(calls.get("app::parse"), Some(&100), "{calls:#?}");
    assert_eq!(calls.get("app::parse_all"), Some(&1));
    assert_eq!(calls.get("mathlib::checked"), Some(&1), "the library crate is instrumented");
    assert_eq!(calls.get("mathlib::divide"), Some(&1));
    assert_eq!(calls.get("ryu::pretty::format64"), Some(&150), "the crates.io dependency is instrumented");
    assert!(!calls.keys().any(|n| n.starts_with("__rustc::")), "allocator shims are not the user's code");

    let again = cargo(dir.path(), &["build", "--release", "-p", "app"], user);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        again.status.success() && !stderr.contains("Compiling"),
        "the normal build stayed fresh: {stderr}"
    );
}

#[test]
fn dev_profile_counts_are_exact_and_a_caught_panic_leaves_the_stack_true() {
    let dir = workspace();
    let output = cargo(dir.path(), &["instrument", "run", "-q", "-p", "app"], None);
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), EXPECTED.replace("user_cfg true", "user_cfg false"));
    let found = profile_paths(dir.path());
    let calls = report_calls(&found[0]);
    assert_eq!(calls.get("mathlib::fib"), Some(&1973), "fib(15) in the dev profile: {calls:#?}");
    assert_eq!(calls.get("app::after"), Some(&1));
    let profile = load_profile(&found[0]);
    assert_eq!(profile.totals.unmatched_exits, 0);
    let main = profile.functions.iter().find(|f| f.name.ends_with("3app4main")).expect("app::main");
    assert!(
        main.stats.child_calls >= 4,
        "parse_all, fib, after and the catch_unwind closure are main's children"
    );

    // After the caught panic, main's next calls are still its own children.
    let binary = dir.path().join(format!("target/instrument/{}/debug/app", host()));
    let paths_dir = dir.path().join("callpaths");
    std::fs::create_dir(&paths_dir).unwrap();
    let rerun =
        run(Command::new(&binary).env("INSTRUMENT_PROFILE_DIR", &paths_dir).env("INSTRUMENT_CALLPATH", "2"));
    assert_eq!(rerun.status.code(), Some(3));
    let table = callpath_calls(&paths_dir, &["--depth", "2"]);
    for path in
        ["app::main => mathlib::fib", "app::main => app::after", "mathlib::checked => mathlib::divide"]
    {
        assert_eq!(table.get(path), Some(&1), "{path} in {table:#?}");
    }
}

fn host() -> String {
    let output = run(Command::new("rustc").arg("-vV"));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap()
        .to_string()
}

#[test]
fn test_subcommand_profiles_the_test_binary_and_show_env_prints_the_setup() {
    let dir = workspace();
    let output = cargo(dir.path(), &["instrument", "test", "-q", "-p", "mathlib", "--lib"], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let found = profile_paths(&dir.path().join("mathlib"));
    assert_eq!(found.len(), 1, "one profile from the test binary");
    assert_eq!(report_calls(&found[0]).get("mathlib::fib"), Some(&177), "fib(10) calls");

    let env = cargo(dir.path(), &["instrument", "show-env"], Some("--cfg from_user"));
    let text = String::from_utf8_lossy(&env.stdout);
    assert!(text.contains("export CARGO_TARGET_DIR=") && text.contains("/target/instrument"), "{text}");
    assert!(
        text.contains("export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1"),
        "one codegen unit per crate: {text}"
    );
    assert!(
        text.contains("export CARGO_ENCODED_RUSTFLAGS='--cfg\x1ffrom_user\x1f-Clinker-plugin-lto"),
        "{text}"
    );
}
