//! The live view: `instrument top` attaches to a running instrumented program through its
//! shared-memory segment, follows its counts, and switches its probes off and on, while the
//! program runs on and still ends with an exact, consistent profile.

use instrument_tests::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Running {
    child: Child,
    stdout: BufReader<ChildStdout>,
    stop: PathBuf,
    dir: PathBuf,
}

/// Starts the live fixture in `dir` and waits for its "started" line.
fn start(program: &Path, dir: &Path, fork: bool) -> (Running, Option<u32>) {
    start_with(program, dir, fork, &[])
}

fn start_with(program: &Path, dir: &Path, fork: bool, env: &[(&str, &str)]) -> (Running, Option<u32>) {
    let stop = dir.join("stop");
    let mut command = Command::new(program);
    command.arg(&stop).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir).env("INSTRUMENT_THROTTLE", "0");
    command.envs(env.iter().copied());
    if fork {
        command.arg("fork");
    }
    let mut child = command.stdout(Stdio::piped()).spawn().expect("start the live fixture");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (mut child_pid, mut started) = (None, 0);
    // With fork, parent and child each say "started", in either order with the child's pid.
    while started < 1 + fork as u32 || (fork && child_pid.is_none()) {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the fixture ended before starting");
        if let Some(pid) = line.trim().strip_prefix("child ") {
            child_pid = Some(pid.parse().unwrap());
        }
        started += u32::from(line.trim() == "started");
    }
    (Running { child, stdout, stop, dir: dir.to_path_buf() }, child_pid)
}

impl Running {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the program; its remaining output.
    fn finish(mut self) -> String {
        std::fs::write(&self.stop, "").unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        rest
    }
}

fn top(args: &[&str]) -> Output {
    run(Command::new(bin("instrument")).arg("top").args(args))
}

/// `count` JSON updates of process `pid`, `interval` seconds apart.
fn updates(pid: u32, count: u32, interval: &str) -> Vec<Value> {
    let output = top(&[&pid.to_string(), "--batch", &count.to_string(), "--interval", interval, "--json"]);
    assert_success(&output, "instrument top --batch");
    String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn row<'a>(update: &'a Value, name: &str) -> &'a Value {
    update["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name}: {update}"))
}

fn printed_count(output: &str, who: &str) -> u64 {
    let line = output.lines().find(|l| l.starts_with(&format!("{who} work "))).expect(output);
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

fn live_build(dir: &Path) -> PathBuf {
    build_instrumented(dir, "live", &[])
}

#[test]
fn top_follows_a_running_program_without_changing_its_profile() {
    let dir = scratch();
    let program = live_build(dir.path());
    let (running, _) = start(&program, dir.path(), false);
    let pid = running.pid();
    let seen = updates(pid, 2, "0.3");
    assert_eq!(seen.len(), 2);
    let (first, second) = (row(&seen[0], "work"), row(&seen[1], "work"));
    let calls = |r: &Value| r["calls"].as_u64().unwrap();
    assert!(calls(first) > 0 && calls(second) > calls(first), "{first} then {second}");
    assert!(second["share"].as_f64().unwrap() > 50.0, "work is nearly all the program does: {second}");
    assert_eq!(seen[1]["pid"], pid);
    assert_eq!((seen[1]["live_threads"].as_u64(), seen[1]["finished"].as_bool()), (Some(1), Some(false)));
    // main and work_until are open: their time so far comes from the shadow stack.
    let main = row(&seen[1], "main");
    assert_eq!((main["open"].as_u64(), main["calls"].as_u64()), (Some(1), Some(0)));
    assert!(
        main["inclusive_s"].as_f64().unwrap() >= row(&seen[1], "work_until")["inclusive_s"].as_f64().unwrap()
    );
    assert!(main["inclusive_s"].as_f64().unwrap() >= second["inclusive_s"].as_f64().unwrap());
    let dir_path = running.dir.clone();
    let rest = running.finish();
    let profile = only_profile(&dir_path);
    assert_eq!(function(&profile, "work").stats.calls, printed_count(&rest, "main"), "every call, exactly");
    assert_eq!(function(&profile, "work").stats.untimed_calls, 0);
    assert_eq!(profile.totals.unmatched_exits + profile.totals.frames_reconciled, 0);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn probes_switched_off_and_on_from_outside_keep_the_profile_consistent() {
    let dir = scratch();
    let program = live_build(dir.path());
    let (running, _) = start(&program, dir.path(), false);
    let pid = running.pid().to_string();
    let off = top(&[&pid, "--off", "work"]);
    assert_success(&off, "top --off work");
    assert_eq!(String::from_utf8_lossy(&off.stdout), "work: 1 event switched off\n");
    let after_off = updates(running.pid(), 2, "0.2");
    let work = row(&after_off[1], "work");
    assert_eq!(work["mode"], "off", "{work}");
    assert_eq!(work["calls_per_s"].as_f64(), Some(0.0), "switched-off probes count nothing: {work}");
    // main never returns while the program runs: it stays counted, then goes back on.
    let main_off = top(&[&pid, "--off", "main"]);
    assert!(String::from_utf8_lossy(&main_off.stdout)
        .contains("still open, so counted but not timed until they return: main"));
    assert_eq!(row(&updates(running.pid(), 1, "1")[0], "main")["mode"], "counted");
    assert_success(&top(&[&pid, "--on", "main", "--on", "work"]), "top --on");
    let after_on = updates(running.pid(), 2, "0.2");
    let work = row(&after_on[1], "work");
    assert_eq!(work["mode"], "on");
    assert!(work["calls_per_s"].as_f64().unwrap() > 0.0, "{work}");
    let dir_path = running.dir.clone();
    let rest = running.finish();
    let profile = only_profile(&dir_path);
    let work = function(&profile, "work");
    assert!(
        work.stats.calls > 0 && work.stats.calls < printed_count(&rest, "main"),
        "calls while off are not counted: {work:?}"
    );
    assert_eq!(function(&profile, "main").stats.calls, 1, "main's one activation closed by its own exit");
    assert!(work.switched_off && function(&profile, "main").switched_off, "marked as switched from outside");
    assert!(!function(&profile, "work_until").switched_off);
    assert_eq!(profile.totals.unmatched_exits + profile.totals.frames_reconciled, 0, "{:?}", profile.totals);
    assert_eq!(profile.totals.frames_closed_at_exit, 0);
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn a_forked_child_has_a_segment_of_its_own() {
    let dir = scratch();
    let program = live_build(dir.path());
    let (running, child) = start(&program, dir.path(), true);
    let child = child.expect("the parent prints its child's pid");
    assert_success(&top(&[&child.to_string(), "--off", "work"]), "top --off work in the child");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(row(&updates(child, 1, "1")[0], "work")["mode"], "off");
    assert_eq!(row(&updates(running.pid(), 1, "1")[0], "work")["mode"], "on", "the parent is not switched");
    let dir_path = running.dir.clone();
    let rest = running.finish();
    let profiles = profile_paths(&dir_path);
    assert_eq!(profiles.len(), 2, "{profiles:?}");
    let parent = profiles.iter().map(|p| load_profile(p)).find(|p| p.forked_from.is_none()).unwrap();
    assert_eq!(
        function(&parent, "work").stats.calls,
        printed_count(&rest, "main"),
        "the parent's counts are exact"
    );
    assert_eq!(parent.totals.unmatched_exits + parent.totals.frames_reconciled, 0);
}

#[test]
fn a_program_killed_with_sigkill_leaves_nothing_that_breaks_the_next_run() {
    let dir = scratch();
    let program = live_build(dir.path());
    let shm_before = shm_entries();
    let (mut running, _) = start(&program, dir.path(), false);
    assert_eq!(updates(running.pid(), 1, "1").len(), 1);
    running.child.kill().unwrap(); // SIGKILL
    running.child.wait().unwrap();
    assert_eq!(shm_entries(), shm_before, "nothing left in /dev/shm");
    let again = new_dir(dir.path(), "again");
    let (running, _) = start(&program, &again, false);
    let started = Instant::now();
    assert_eq!(row(&updates(running.pid(), 1, "1")[0], "work")["mode"], "on");
    assert!(started.elapsed() < Duration::from_secs(10));
    let rest = running.finish();
    assert_eq!(function(&only_profile(&again), "work").stats.calls, printed_count(&rest, "main"));
}

fn shm_entries() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.retain(|n| n.contains("instrument"));
    names.sort();
    names
}

#[test]
fn top_explains_what_it_cannot_attach_to() {
    let missing = top(&["999999999"]);
    assert!(!missing.status.success());
    assert_eq!(String::from_utf8_lossy(&missing.stderr), "instrument: there is no process 999999999\n");
    let mut sleeper = Command::new("sleep").arg("10").spawn().unwrap();
    let plain = top(&[&sleeper.id().to_string(), "--batch", "1"]);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(stderr.contains("has no live segment: it is not an instrumented program"), "{stderr}");
    let dir = scratch();
    let (running, _) = start_with(&live_build(dir.path()), dir.path(), false, &[("INSTRUMENT_LIVE", "0")]);
    let off = top(&[&running.pid().to_string()]);
    assert!(String::from_utf8_lossy(&off.stderr).contains("runs with INSTRUMENT_LIVE=0"));
    running.finish();
    let bad = top(&["1", "--interval", "0"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a number of seconds between 0.05 and 3600"));
}

fn series<'a>(timeline: &'a instrument_profile::Timeline, name: &str, metric: &str) -> &'a [f64] {
    let s = timeline.series.iter().find(|s| s.name == name && s.metric.name() == metric);
    &s.unwrap_or_else(|| panic!("no {metric} series for {name}: {timeline:?}")).values
}

#[test]
fn run_with_timeline_samples_time_histograms_into_the_profile() {
    let dir = scratch();
    let program = live_build(dir.path());
    let stop = dir.path().join("stop");
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2000));
            std::fs::write(&stop, "").unwrap();
        })
    };
    let output = run(Command::new(bin("instrument"))
        .args(["run", "--timeline=3", "--profile-dir"])
        .arg(dir.path())
        .arg("--")
        .arg(&program)
        .arg(&stop)
        .env("INSTRUMENT_THROTTLE", "0"));
    stopper.join().unwrap();
    assert_success(&output, "instrument run --timeline");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("timeline of 3 events"), "{stderr}");
    let profile = only_profile(dir.path());
    let timeline = profile.timeline.as_ref().expect("a timeline in the profile");
    // About 2 s: past the 128 buckets of 10 ms (1.28 s), so the width doubled once.
    assert_eq!(timeline.bucket_ns, 20_000_000, "{timeline:?}");
    assert_eq!(timeline.series.len(), 6, "three events, two metrics each");
    assert_eq!(timeline.series[0].name, "work", "busiest first");
    let work = function(&profile, "work");
    let calls = series(timeline, "work", "calls");
    assert_eq!(calls.iter().sum::<f64>() as u64, work.stats.calls, "the buckets add up to every call");
    let exclusive: f64 = series(timeline, "work", "exclusive_ns").iter().sum();
    let error = (exclusive - work.stats.exclusive_ns as f64).abs() / work.stats.exclusive_ns as f64;
    assert!(error < 0.01, "buckets {exclusive} ns vs profile {} ns", work.stats.exclusive_ns);
    let busy = calls.iter().filter(|&&c| c > 0.0).count();
    assert!(busy * 2 >= calls.len(), "work runs all along: {calls:?}");
    let report = run(Command::new(bin("instrument"))
        .args(["report", "--timeline"])
        .arg(only_profile_path(dir.path())));
    assert_success(&report, "report --timeline");
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.starts_with("timeline: ") && text.contains("buckets of 20.0 ms"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("work ") && l.contains('█')), "{text}");
    let svg = dir.path().join("timeline.svg");
    assert_success(
        &run(Command::new(bin("instrument"))
            .arg("report")
            .arg(format!("--timeline={}", svg.display()))
            .arg(only_profile_path(dir.path()))),
        "report --timeline OUT.svg",
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains(">work</text>") && chart.contains("<polygon"));
}

#[test]
fn a_program_that_closes_the_segment_and_reuses_its_descriptor_keeps_its_file() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "closefds", &[]);
    let output = run(Command::new(&program)
        .arg(dir.path().join("own.txt"))
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path()));
    assert_success(&output, "closefds");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "3 5\n", "the program's own file is untouched");
    assert_eq!(std::fs::read_to_string(dir.path().join("own.txt")).unwrap(), "hello");
    let parent =
        profile_paths(dir.path()).iter().map(|p| load_profile(p)).find(|p| p.forked_from.is_none()).unwrap();
    assert_eq!(function(&parent, "worker").stats.calls, 1, "the thread is measured in private memory");
    assert_eq!(parent.totals.threads, 2);
}
