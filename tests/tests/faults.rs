//! Faults: the profile is complete and parseable however the run ends (fatal signals, a signal
//! from outside, fork, exec, threads still running, a shadow stack overflowed by deep
//! recursion), it is never written through a symlink planted at its name, and
//! when it cannot be written (unwritable directory, file-size limit) or a run-time setting is
//! bad, the program still ends exactly as without instrumentation, with one clear line on
//! stderr.

use instrument_tests::*;
use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

struct Builds {
    dir: tempfile::TempDir,
    plain: std::path::PathBuf,
    instrumented: std::path::PathBuf,
}

fn builds() -> Builds {
    let dir = scratch();
    let plain = build_plain(dir.path(), "faults");
    let instrumented = build_instrumented(dir.path(), "faults", &[]);
    Builds { dir, plain, instrumented }
}

fn run_in(program: &Path, args: &[&str], profiles: &Path) -> Output {
    run(Command::new(program).args(args).current_dir(profiles).env("INSTRUMENT_PROFILE_DIR", profiles))
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n.ends_with(".reserve"))
        .collect()
}

#[test]
fn fatal_signals_leave_a_profile_marked_with_the_signal() {
    let b = builds();
    for (mode, signal, name) in [
        ("segv", libc::SIGSEGV, "SIGSEGV"),
        ("abort", libc::SIGABRT, "SIGABRT"),
        ("term", libc::SIGTERM, "SIGTERM"),
    ] {
        let dir = new_dir(b.dir.path(), mode);
        let plain = run_in(&b.plain, &[mode], &dir);
        let instrumented = run_in(&b.instrumented, &[mode], &dir);
        assert_eq!(plain.status.signal(), Some(signal), "{mode}: plain");
        assert_eq!(instrumented.status.signal(), Some(signal), "{mode}: the program still dies of it");
        assert_eq!(plain.stdout, instrumented.stdout);
        let profile = only_profile(&dir);
        assert_eq!(profile.ended_by.as_deref(), Some(name));
        assert_eq!(function(&profile, "work").stats.calls, 1);
        assert_eq!(function(&profile, "descend").stats.calls, 4, "{mode}: open frames closed at the signal");
        assert_eq!(function(&profile, "main").stats.calls, 1);
        assert_eq!(profile.totals.frames_closed_at_exit, 5);
        assert_inclusive_covers_exclusive(&profile);
        assert!(leftovers(&dir).is_empty());
        let report = run(Command::new(bin("instrument")).arg("report").arg(only_profile_path(&dir)));
        assert!(String::from_utf8_lossy(&report.stdout).contains(&format!("note: the run ended with {name}")));
    }
}

/// Spawns `faults wait` and returns it once it has printed "ready".
fn waiting(program: &Path, dir: &Path, ignore_sigint: bool) -> std::process::Child {
    let mut command = Command::new(program);
    command.arg("wait").current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir).stdout(Stdio::piped());
    // Set either way: a test run started in the background of a shell without job control
    // inherits SIGINT ignored, which the runtime (rightly) leaves ignored.
    let disposition = if ignore_sigint { libc::SIG_IGN } else { libc::SIG_DFL };
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGINT, disposition);
            Ok(())
        })
    };
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    child
}

#[test]
fn interrupting_a_run_writes_its_profile_and_ignored_signals_stay_ignored() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "interrupted");
    let mut child = waiting(&b.instrumented, &dir, false);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGINT));
    let profile = only_profile(&dir);
    assert_eq!(profile.ended_by.as_deref(), Some("SIGINT"));
    assert_eq!(function(&profile, "spin").stats.calls, 1);
    assert!(function(&profile, "work").stats.calls >= 1);

    // Started with SIGINT ignored (as by nohup): the runtime leaves it ignored.
    let dir = new_dir(b.dir.path(), "ignored");
    let mut child = waiting(&b.instrumented, &dir, true);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "SIGINT was ignored");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
    assert_eq!(only_profile(&dir).ended_by.as_deref(), Some("SIGTERM"));
}

#[test]
fn a_forked_child_writes_its_own_profile() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "fork");
    let plain = run_in(&b.plain, &["fork"], &dir);
    let instrumented = run_in(&b.instrumented, &["fork"], &dir);
    assert_success(&instrumented, "faults fork");
    assert_eq!(plain.stdout, instrumented.stdout);
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "child exited with 3\n");
    let mut profiles: Vec<_> = profile_paths(&dir).iter().map(|p| load_profile(p)).collect();
    assert_eq!(profiles.len(), 2, "parent and child");
    profiles.sort_by_key(|p| p.forked_from.is_some());
    let (parent, child) = (&profiles[0], &profiles[1]);
    for p in [parent, child] {
        let file = format!("faults.{}.instrument.json", p.pid);
        assert!(dir.join(&file).exists(), "each profile is named by its own pid: {file}");
    }
    assert_ne!(parent.pid, child.pid);
    assert_eq!(child.forked_from, Some(parent.pid));
    assert_eq!(function(parent, "work").stats.calls, 2, "before the fork and after the wait");
    assert_eq!(function(child, "work").stats.calls, 3, "the parent's first call, then its own two");
    assert_eq!(function(child, "main").stats.calls, 1, "main, open at exit(), closed then");
}

#[test]
fn exec_writes_the_profile_of_the_run_so_far_and_the_new_program_its_own() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "exec");
    let plain = run_in(&b.plain, &["exec"], &dir);
    let instrumented = run_in(&b.instrumented, &["exec"], &dir);
    assert_eq!(plain.status.code(), Some(4), "the exec'd program's exit code");
    assert_eq!(instrumented.status.code(), Some(4));
    assert_eq!((&plain.stdout, &plain.stderr), (&instrumented.stdout, &instrumented.stderr));
    let pid = load_profile(&only_profile_path_named(&dir, ".2.")).pid;
    let before = load_profile(&dir.join(format!("faults.{pid}.instrument.json")));
    let after = load_profile(&dir.join(format!("faults.{pid}.2.instrument.json")));
    assert_eq!(profile_paths(&dir).len(), 2, "one profile per program the process ran");
    assert_eq!(before.ended_by.as_deref(), Some("exec"));
    assert_eq!(before.command.last().map(String::as_str), Some("exec"));
    assert_eq!(function(&before, "work").stats.calls, 1);
    assert_eq!(function(&before, "exec_self").stats.calls, 3, "the frames open at the exec are closed then");
    assert_eq!(function(&before, "main").stats.calls, 1);
    assert_eq!(before.totals.frames_closed_at_exit, 4);
    assert_inclusive_covers_exclusive(&before);
    assert_eq!(after.ended_by, None);
    assert_eq!(after.command.last().map(String::as_str), Some("after-exec"));
    assert_eq!(function(&after, "work").stats.calls, 2, "the new program counts from zero");
    assert!(!has_function(&after, "exec_self"));
    let report = run(Command::new(bin("instrument"))
        .arg("report")
        .arg(dir.join(format!("faults.{pid}.instrument.json"))));
    assert!(String::from_utf8_lossy(&report.stdout).contains("note: the process exec'd another program"));
}

#[test]
fn a_failed_exec_leaves_one_profile_of_the_whole_run() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "exec-fail");
    let plain = run_in(&b.plain, &["exec-fail"], &dir);
    let (instrumented, profile) = run_profiled_with(&b.instrumented, &dir, &["exec-fail"]);
    assert_success(&instrumented, "faults exec-fail");
    assert_eq!(plain.stdout, instrumented.stdout);
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "execv failed as expected\n");
    assert_eq!(profile.ended_by, None, "the profile written for the exec was withdrawn");
    assert_eq!(function(&profile, "work").stats.calls, 2);
    assert_eq!(function(&profile, "try_missing").stats.calls, 1);
    assert_eq!(profile.totals.threads, 1);
    assert_eq!(profile.totals.frames_closed_at_exit, 0, "the frames closed for the exec's profile reopened");
    assert_eq!(profile.totals.unmatched_exits, 0);
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn children_that_exec_at_once_after_fork_or_vfork_write_nothing() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "spawn");
    let plain = run_in(&b.plain, &["spawn"], &dir);
    let (instrumented, profile) = run_profiled_with(&b.instrumented, &dir, &["spawn"]);
    assert_success(&instrumented, "faults spawn");
    assert_eq!(plain.stdout, instrumented.stdout);
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "from the forked child\nfrom the vforked child\n");
    assert_eq!(profile.ended_by, None);
    assert_eq!(function(&profile, "spawn").stats.calls, 1);
    assert_eq!(function(&profile, "work").stats.calls, 1, "the vfork child left the parent's data alone");
}

#[test]
fn symlinks_planted_at_the_profile_names_are_never_followed() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "planted");
    let victim = b.dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let mut child = waiting(&b.instrumented, &dir, false);
    let pid = child.id();
    let planted = [format!("faults.{pid}.instrument.json"), format!(".faults.{pid}.instrument.json.0.tmp")];
    for name in &planted {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "nothing written through a symlink");
    for name in &planted {
        assert!(dir.join(name).symlink_metadata().unwrap().file_type().is_symlink(), "{name} left alone");
    }
    let profile = load_profile(&dir.join(format!("faults.{pid}.2.instrument.json")));
    assert_eq!(profile.ended_by.as_deref(), Some("SIGTERM"));
    assert_eq!(function(&profile, "spin").stats.calls, 1);
    let mode = dir.join(format!("faults.{pid}.2.instrument.json")).metadata().unwrap().permissions();
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, 0o600, "owner-only");
}

/// The one profile in `dir` whose name contains `part`.
fn only_profile_path_named(dir: &Path, part: &str) -> std::path::PathBuf {
    let matching: Vec<_> =
        profile_paths(dir).into_iter().filter(|p| p.to_string_lossy().contains(part)).collect();
    assert_eq!(matching.len(), 1, "one profile named *{part}* in {}", dir.display());
    matching.into_iter().next().unwrap()
}

#[test]
fn threads_still_running_at_exit_are_counted_and_their_data_kept() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "running");
    let plain = run_in(&b.plain, &["running-thread"], &dir);
    let (instrumented, profile) = run_profiled_with(&b.instrumented, &dir, &["running-thread"]);
    assert_success(&instrumented, "faults running-thread");
    assert_eq!(plain.stdout, instrumented.stdout);
    assert_eq!(profile.totals.threads, 2);
    assert_eq!(profile.totals.threads_running_at_exit, 1);
    assert!(function(&profile, "work").stats.calls > 2, "the spinning thread's calls are in the profile");
}

#[test]
fn recursion_a_million_deep_overflows_the_shadow_stack_without_losing_counts() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "recursion");
    let plain = run_in(&b.plain, &["recursion", "1000000"], &dir);
    let (instrumented, profile) = run_profiled_with(&b.instrumented, &dir, &["recursion", "1000000"]);
    assert_success(&instrumented, "faults recursion");
    assert_eq!(plain.stdout, instrumented.stdout);
    assert_eq!(String::from_utf8_lossy(&instrumented.stdout), "depth 1000000\n");
    let measured = function(&profile, "recurse").stats.calls;
    assert!(measured > 60_000, "the frames that fit are measured: {measured}");
    assert_eq!(measured + profile.totals.stack_overflow_events, 1_000_001, "the others are counted");
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn an_unwritable_profile_directory_is_one_line_and_the_exit_code_is_unchanged() {
    let b = builds();
    let file = b.dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let output =
        run(Command::new(&b.instrumented).arg("exit5").env("INSTRUMENT_PROFILE_DIR", file.join("profiles")));
    assert_eq!(output.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("instrument: cannot write the profile faults."), "{stderr}");
    assert!(stderr.contains("Not a directory") && stderr.contains("INSTRUMENT_PROFILE_DIR"), "{stderr}");
}

#[test]
fn a_file_size_limit_fails_the_write_not_the_program() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "limited");
    let mut command = Command::new(&b.instrumented);
    command.arg("exit5").current_dir(&dir).env("INSTRUMENT_PROFILE_DIR", &dir);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 0, rlim_max: libc::RLIM_INFINITY };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            Ok(())
        })
    };
    let output = run(&mut command);
    assert_eq!(output.status.code(), Some(5), "not killed by SIGXFSZ");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing half-written is left");
}

#[test]
fn bad_run_time_settings_are_one_line_each_and_change_nothing() {
    let b = builds();
    let dir = new_dir(b.dir.path(), "settings");
    let bad = [
        ("INSTRUMENT_CALLPATH", "bogus"),
        ("INSTRUMENT_CLOCK", "sundial"),
        ("INSTRUMENT_STACK_FRAMES", "-3"),
        ("INSTRUMENT_CALLPATH_NODES", "many"),
        ("INSTRUMENT_LIVE", "maybe"),
    ];
    let output = run(Command::new(&b.instrumented)
        .arg("exit5")
        .current_dir(&dir)
        .env("INSTRUMENT_PROFILE_DIR", &dir)
        .envs(bad.iter().copied()));
    assert_eq!(output.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), bad.len(), "{stderr}");
    for (name, value) in bad {
        assert!(stderr.contains(&format!("instrument: {name}={value:?}")), "{name} in {stderr}");
    }
    let profile = only_profile(&dir);
    assert_eq!(function(&profile, "work").stats.calls, 1);
    assert!(profile.callpaths.is_none(), "flat, the default");
}
