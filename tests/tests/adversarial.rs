//! What an adversarial user does (issue 25's reproductions): outputs named as devices, FIFOs,
//! symlinks or standard output; full callpaths under a recursion a million deep; a signal
//! handler running instrumented code in the middle of probes; SIGTERM while threads start and
//! end; `-x LANG` and standard input on the wrapper's command line; programs that count their
//! descriptors, change directory or have a very long name; control characters in names; the
//! temporary file a killed writer left behind. Every program starts with the developer's
//! `INSTRUMENT_*` environment cleared.

use instrument_tests::*;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `program` with no inherited `INSTRUMENT_*` variable and its profiles going to `dir`.
fn clean(program: &Path, dir: &Path) -> Command {
    let mut command = Command::new(program);
    without_instrument_env(&mut command).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir);
    command
}

fn adversarial(dir: &Path) -> (PathBuf, PathBuf) {
    (build_plain(dir, "adversarial"), build_instrumented(dir, "adversarial", &[]))
}

/// Runs `command`, killing it if it is still running after `limit`.
fn run_within(command: &mut Command, limit: Duration) -> Output {
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < limit {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            unsafe { libc::kill(pid, libc::SIGKILL) };
        })
    };
    let output = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    watchdog.join().unwrap();
    assert!(output.status.signal() != Some(libc::SIGKILL), "still running after {limit:?}");
    output
}

fn report(args: &[&str], dir: &Path) -> Output {
    run(Command::new(bin("instrument")).args(args).current_dir(dir))
}

#[test]
fn outputs_that_are_not_regular_files_are_written_in_place_and_symlinks_kept() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    assert_success(&run(&mut clean(&program, dir.path())), "calls");
    let d = dir.path();

    // A FIFO stays a FIFO: the report goes through it to its reader (opened first, without
    // blocking, so that a report which replaced the FIFO fails the test instead of hanging it).
    let fifo = d.join("fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let mut reader =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    assert_success(&report(&["report", "--suggest-filter", "fifo"], d), "suggest-filter to a FIFO");
    let mut received = String::new();
    let _ = std::io::Read::read_to_string(&mut reader, &mut received);
    assert!(received.contains("--suggest-filter"), "the reader got the filter: {received:?}");
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&std::fs::symlink_metadata(&fifo).unwrap().file_type()));

    // A symlink to a regular file: the file is replaced, the link stays a link.
    std::fs::write(d.join("real.html"), "old").unwrap();
    std::os::unix::fs::symlink("real.html", d.join("link.html")).unwrap();
    assert_success(&report(&["report", "--html", "link.html"], d), "html through a symlink");
    assert!(std::fs::symlink_metadata(d.join("link.html")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(d.join("real.html")).unwrap().contains("<html"));

    // A dangling symlink and a directory are refused with one line.
    std::os::unix::fs::symlink("nowhere.txt", d.join("dangling.txt")).unwrap();
    let refused = report(&["export", "--format", "folded", "-o", "dangling.txt"], d);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("symlink to nothing"));
    assert!(!d.join("nowhere.txt").exists());
    std::fs::create_dir(d.join("adir")).unwrap();
    let refused = report(&["export", "--format", "folded", "-o", "adir"], d);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is a directory"));

    // `-` and /dev/stdout are standard output (a pipe here), never replaced.
    for name in ["-", "/dev/stdout"] {
        let out = report(&["export", "--format", "folded", "-o", name], d);
        assert_success(&out, name);
        assert!(String::from_utf8_lossy(&out.stdout).contains("main"), "{name}");
    }
    assert!(!std::fs::symlink_metadata("/dev/stdout").unwrap().file_type().is_file());
}

#[test]
fn full_callpaths_under_a_recursion_a_million_deep_stay_small() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "faults", &[]);
    let mut command = clean(&program, dir.path());
    command.args(["recursion", "1000000"]).env("INSTRUMENT_CALLPATH", "all");
    // A guard against memory and time growing with the square of the depth (minutes and
    // gigabytes before), not a timing: the plain run takes milliseconds.
    let output = run_within(&mut command, Duration::from_secs(60));
    assert_success(&output, "recursion under INSTRUMENT_CALLPATH=all");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "depth 1000000\n");
    let path = only_profile_path(dir.path());
    let bytes = std::fs::metadata(&path).unwrap().len();
    assert!(bytes < 1 << 20, "the profile is statistics, not the recursion: {bytes} bytes");
    let profile = load_profile(&path);
    let measured = function(&profile, "recurse").stats.calls;
    assert_eq!(measured + profile.totals.stack_overflow_events, 1_000_001);
    let paths: usize = profile.callpaths.as_ref().unwrap().threads.iter().map(|t| t.paths.len()).sum();
    assert!(paths <= 6, "recursion collapses onto one node: {paths} paths");
    let table = callpath_calls(dir.path(), &[]);
    assert_eq!(table.get("run_recursion => recurse"), Some(&measured), "{table:#?}");
}

#[test]
fn a_signal_handler_interrupting_probes_leaves_every_count_exact() {
    let dir = scratch();
    let (_, program) = adversarial(dir.path());
    for (callpath, live) in [("0", "1"), ("all", "1"), ("0", "0")] {
        let run_dir = new_dir(dir.path(), &format!("alarm-{callpath}-{live}"));
        let output = run(clean(&program, &run_dir)
            .args(["alarm", "5000000"])
            .env("INSTRUMENT_THROTTLE", "0")
            .env("INSTRUMENT_CALLPATH", callpath)
            .env("INSTRUMENT_LIVE", live));
        assert_success(&output, "alarm");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let alarms: u64 = stdout.trim().strip_prefix("alarms ").unwrap().parse().unwrap();
        assert!(alarms > 100, "the timer interrupted the run often: {alarms}");
        let profile = only_profile(&run_dir);
        assert_eq!(function(&profile, "work").stats.calls, 5_000_000, "callpath {callpath}, live {live}");
        assert_eq!(function(&profile, "on_alarm").stats.calls, alarms, "callpath {callpath}, live {live}");
        assert_eq!(profile.totals.unmatched_exits, 0);
        assert_inclusive_covers_exclusive(&profile);
    }
}

#[test]
fn sigterm_while_threads_start_and_end_ends_the_program_at_once_with_its_profile() {
    let dir = scratch();
    let (_, program) = adversarial(dir.path());
    for attempt in 0..10 {
        let run_dir = new_dir(dir.path(), &format!("term-{attempt}"));
        let mut child = clean(&program, &run_dir).arg("threads").stdout(Stdio::piped()).spawn().unwrap();
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).unwrap();
        assert_eq!(ready, "ready\n");
        std::thread::sleep(Duration::from_millis(300));
        let sent = Instant::now();
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let status = child.wait().unwrap();
        // A guard against the writer hanging on a lock (it was killed after 10 s), not a timing.
        assert!(sent.elapsed() < Duration::from_secs(5), "attempt {attempt}: {:?}", sent.elapsed());
        assert_eq!(status.signal(), Some(libc::SIGTERM), "the program still dies of the signal");
        let profile = only_profile(&run_dir);
        assert_eq!(profile.ended_by.as_deref(), Some("SIGTERM"));
        assert!(function(&profile, "worker").stats.calls >= 8, "attempt {attempt}");
    }
}

#[test]
fn the_wrapper_takes_a_language_option_and_standard_input() {
    let dir = scratch();
    std::fs::write(dir.path().join("m.c"), "int main(void) { return 7; }\n").unwrap();
    let cc = bin("instrument-cc");
    assert_success(
        &run(Command::new(&cc).args(["-x", "c", "m.c", "-o", "p1"]).current_dir(dir.path())),
        "-x c",
    );
    let mut piped = Command::new(&cc)
        .args(["-xc", "-", "-o", "p2"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut piped.stdin.take().unwrap(), b"int main(void) { return 7; }\n").unwrap();
    assert!(piped.wait().unwrap().success(), "-xc - reads standard input");
    for name in ["p1", "p2"] {
        let output = run(&mut clean(&dir.path().join(name), dir.path()));
        assert_eq!(output.status.code(), Some(7), "{name}");
    }
    assert_eq!(profile_paths(dir.path()).len(), 2, "both programs are instrumented");
}

#[test]
fn the_program_sees_its_own_descriptor_numbers() {
    let dir = scratch();
    let (plain, program) = adversarial(dir.path());
    // The live segment's descriptor stays out of the way: the first open returns 3.
    let plain_fd = run(clean(&plain, dir.path()).arg("fd"));
    let instrumented_fd = run(clean(&program, dir.path()).arg("fd"));
    assert_eq!(String::from_utf8_lossy(&plain_fd.stdout), "fd 3\n");
    assert_eq!(instrumented_fd.stdout, plain_fd.stdout);
}

#[test]
fn a_relative_profile_directory_is_resolved_before_the_program_changes_directory() {
    let dir = scratch();
    let (_, program) = adversarial(dir.path());
    let profiles = new_dir(dir.path(), "profiles");
    let output = run(clean(&program, dir.path()).arg("chdir").env("INSTRUMENT_PROFILE_DIR", "profiles"));
    assert_success(&output, "chdir");
    assert_eq!(function(&only_profile(&profiles), "work").stats.calls, 1);
}

#[test]
fn a_long_program_name_keeps_its_profile() {
    let dir = scratch();
    let (_, program) = adversarial(dir.path());
    let long = dir.path().join("x".repeat(250));
    std::fs::copy(&program, &long).unwrap();
    let named = new_dir(dir.path(), "named");
    assert_success(&run(clean(&long, &named).arg("fd")), "long name");
    let path = only_profile_path(&named);
    assert!(path.file_name().unwrap().len() < 100, "a shortened name: {}", path.display());
}

#[test]
fn reports_escape_control_characters_in_names() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    assert_success(&run(&mut clean(&program, dir.path())), "calls");
    let path = only_profile_path(dir.path());
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"name\":\"main\"", "\"name\":\"ma\\u001b]0;owned\\u0007in\"");
    std::fs::write(&path, text).unwrap();
    let out = report(&["report", path.to_str().unwrap()], dir.path());
    assert_success(&out, "report");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "{stdout}");
    assert!(stdout.contains("ma\\x1b]0;owned\\x07in"), "{stdout}");
}

#[test]
fn a_killed_writers_temporary_file_is_removed_by_the_next_run() {
    let dir = scratch();
    let (_, program) = adversarial(dir.path());
    // pid_max is at most 2^22 on Linux: no process has this pid.
    let stale = dir.path().join(".adversarial.4194305.instrument.json.0.tmp");
    let reserve = dir.path().join(".adversarial.4194305.instrument.json.reserve");
    let other = dir.path().join(".notes.tmp");
    std::fs::write(&stale, "{").unwrap();
    std::fs::write(&reserve, "").unwrap();
    std::fs::write(&other, "mine").unwrap();
    assert_success(&run(clean(&program, dir.path()).arg("fd")), "fd");
    assert!(!stale.exists(), "the dead writer's temporary is gone");
    assert!(!reserve.exists(), "and a dead process's reserve");
    assert!(other.exists(), "other hidden files stay");
}

#[test]
fn a_program_that_sandboxes_itself_keeps_its_profile() {
    let dir = scratch();
    let (plain, program) = adversarial(dir.path());
    let plain_run = run(clean(&plain, dir.path()).arg("landlock"));
    if String::from_utf8_lossy(&plain_run.stdout) == "no landlock\n" {
        eprintln!("this kernel has no Landlock: nothing to test");
        return;
    }
    assert_eq!(String::from_utf8_lossy(&plain_run.stdout), "sandboxed\n");
    let profiles = new_dir(dir.path(), "sandboxed");
    let output = run(clean(&program, &profiles).arg("landlock"));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, plain_run.stdout);
    // The file reserved at start-up holds the profile; one line says where it is.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("sandbox forbids new files"), "{stderr}");
    let reserve: Vec<PathBuf> = std::fs::read_dir(&profiles)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".instrument.json.reserve"))
        .collect();
    assert_eq!(reserve.len(), 1, "{reserve:?}");
    let profile = load_profile(&reserve[0]);
    assert_eq!(function(&profile, "work").stats.calls, 1);
    assert!(
        profile.command[0].ends_with("adversarial"),
        "the name read before the sandbox: {:?}",
        profile.command
    );
    // Without a sandbox the reserve is gone when the profile is written.
    let normal = new_dir(dir.path(), "normal");
    assert_success(&run(clean(&program, &normal).arg("fd")), "fd");
    let names: Vec<String> = std::fs::read_dir(&normal)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "only the profile: {names:?}");
}
