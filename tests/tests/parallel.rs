//! Threads, OpenMP and MPI: per-thread numbers and pprof's summary over threads, thousands of
//! short-lived threads, and one profile per MPI rank with the PMPI layer's communication
//! records (c-fixtures/openmp.c, short_threads.c, mpi/ring.c), with 2 and 4 ranks.

use instrument_profile::Profile;
use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn report(args: &[&str], dir: &Path) -> String {
    let output = run(Command::new(bin("instrument")).arg("report").args(args).current_dir(dir));
    assert_success(&output, &format!("report {args:?}"));
    String::from_utf8(output.stdout).unwrap()
}

/// The summary line of `name`: its numbers as written (Excl total, mean, min, max, std,
/// Incl mean, #Call total, #Call mean).
fn summary_row(text: &str, name: &str) -> Vec<f64> {
    let line = text
        .lines()
        .find(|l| l.trim_end().ends_with(&format!("  {name}")))
        .unwrap_or_else(|| panic!("no summary row for {name}:\n{text}"));
    line.split_whitespace().take(8).map(|v| v.parse().unwrap()).collect()
}

#[test]
fn openmp_threads_are_profiled_per_thread_and_summarised() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "openmp", &["-fopenmp"]);
    let plain = compile(
        Path::new("clang-22"),
        dir.path(),
        "openmp-plain",
        &[fixtures().join("openmp.c")],
        &["-O2", "-fopenmp"],
    );
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "openmp");
    assert_eq!(output.stdout, run(&mut Command::new(&plain)).stdout, "same output instrumented");
    assert_eq!(function(&profile, "work").stats.calls, 1000);
    assert_eq!(profile.totals.threads, 4);
    assert_eq!(profile.totals.threads_running_at_exit, 0, "{:?}", profile.totals);
    assert_eq!(profile.totals.threads_idle_at_exit, 3, "the pool's workers wait outside every event");
    let per_thread = calls_per_thread(&profile, "work");
    assert_eq!(per_thread, [250, 250, 250, 250], "schedule(static): 250 iterations each");

    let summary = report(&["--summary"], dir.path());
    assert!(summary.contains("Summary over 4 units (thread: 0 1 2 3)"), "{summary}");
    let row = summary_row(&summary, "work");
    assert_eq!((row[6], row[7]), (1000.0, 250.0), "calls total and mean: {summary}");
    assert!(row[2] <= row[1] && row[1] <= row[3], "min <= mean <= max: {row:?}");
    let json: serde_json::Value =
        serde_json::from_str(&report(&["--summary", "--json"], dir.path())).unwrap();
    assert_eq!(json["units"], serde_json::json!(["0", "1", "2", "3"]));
    let work = json["events"].as_array().unwrap().iter().find(|e| e["name"] == "work").expect("work");
    assert_eq!(
        (work["calls"]["total"].as_f64(), work["calls"]["mean"].as_f64()),
        (Some(1000.0), Some(250.0))
    );
    let per_unit: Vec<u64> =
        work["units"].as_array().unwrap().iter().map(|u| u["calls"].as_u64().unwrap()).collect();
    assert_eq!(per_unit, [250, 250, 250, 250], "{work}");
    let flat = report(&[], dir.path());
    let region = flat.lines().find(|l| l.contains("parallel region")).unwrap_or_default();
    assert!(
        region.ends_with("parallel region at openmp.c:15 in main") && region.contains(" 4 "),
        "the outlined region (main.omp_outlined) is named for its pragma, entered once per thread:\n{flat}"
    );
    let one = report(&["--thread", "2"], dir.path());
    assert!(one.contains(" 250 ") && one.contains("work"), "thread 2 ran work 250 times:\n{one}");
    assert!(!one.lines().any(|l| l.ends_with("  main")), "main ran on thread 0 only:\n{one}");
}

#[test]
fn thousands_of_short_lived_threads_lose_nothing() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "short_threads", &[]);
    let (output, profile) = run_profiled_with(&program, dir.path(), &["3000"]);
    assert_success(&output, "short_threads");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "sink=9000");
    assert_eq!(function(&profile, "work").stats.calls, 9000);
    assert_eq!(function(&profile, "short_lived").stats.calls, 3000);
    assert_eq!(profile.totals.threads, 3001);
    assert_eq!(profile.threads.len(), 3001, "every thread's share is kept");
    assert_eq!(profile.totals.threads_running_at_exit + profile.totals.threads_idle_at_exit, 0);
    let summary = report(&["--summary"], dir.path());
    assert_eq!(summary_row(&summary, "work")[6], 9000.0, "{summary}");
}

/// Builds c-fixtures/mpi/ring.c with mpicc around `compiler`.
fn build_mpi(dir: &Path, compiler: &Path, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let output = run(Command::new("mpicc")
        .env("OMPI_CC", compiler)
        .env(EVERY_ROUTINE.0, EVERY_ROUTINE.1)
        .args(["-O2"])
        .arg(fixtures().join("mpi/ring.c"))
        .arg("-o")
        .arg(&out));
    assert_success(&output, &format!("mpicc with {}", compiler.display()));
    out
}

fn mpirun(ranks: usize, program: &Path, dir: &Path) -> std::process::Output {
    let output = run(Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string()])
        .arg(program)
        .current_dir(dir)
        .env("INSTRUMENT_PROFILE_DIR", dir));
    assert_success(&output, &format!("mpirun -np {ranks}"));
    output
}

fn ring(ranks: usize) {
    let dir = scratch();
    let program = build_mpi(dir.path(), &bin("instrument-cc"), "ring");
    let plain = build_mpi(dir.path(), Path::new("clang-22"), "ring-plain");
    let plain_output = mpirun(ranks, &plain, dir.path());
    assert!(profile_paths(dir.path()).is_empty(), "the plain build writes no profile");
    let output = mpirun(ranks, &program, dir.path());
    assert_eq!(output.stdout, plain_output.stdout, "same output instrumented");

    let mut profiles: Vec<Profile> = profile_paths(dir.path()).iter().map(|p| load_profile(p)).collect();
    profiles.sort_by_key(|p| p.mpi.as_ref().map(|m| m.rank));
    assert_eq!(profiles.len(), ranks, "one profile per rank");
    let job = &profiles[0].mpi.as_ref().unwrap().job;
    for (rank, profile) in profiles.iter().enumerate() {
        assert_ring_rank(profile, rank, ranks, job);
    }
    assert_ring_reports(dir.path(), ranks, job);
}

/// One rank's profile of the ring: its rank, calls and communication records.
fn assert_ring_rank(profile: &Profile, rank: usize, ranks: usize, job: &str) {
    let mpi = profile.mpi.as_ref().expect("rank recorded");
    assert_eq!((mpi.rank as usize, mpi.size as usize, mpi.job.as_str()), (rank, ranks, job));
    assert_eq!(function(profile, "pass_token").stats.calls, 3);
    let pass_token = function(profile, "pass_token").id;
    let (next, previous) = ((rank + 1) % ranks, (rank + ranks - 1) % ranks);
    let send = record(profile, "MPI_Send");
    assert_eq!((send.site, send.peer, send.calls, send.bytes), (Some(pass_token), Some(next as u32), 3, 36));
    let recv = record(profile, "MPI_Recv");
    assert_eq!(
        (recv.site, recv.peer, recv.calls, recv.bytes),
        (Some(pass_token), Some(previous as u32), 3, 36)
    );
    if rank != 0 {
        // Rank 0 busy-waits 20 ms before each lap's send: everyone else waits for it (less
        // the time a rank of an oversubscribed run is descheduled before its receive).
        assert!(recv.wait_ns >= 45_000_000, "rank {rank} waited {} ns", recv.wait_ns);
        assert!(recv.wait_ns <= recv.time_ns);
    }
    let reduce = record(profile, "MPI_Allreduce");
    assert_eq!(
        (reduce.site, reduce.peer, reduce.calls, reduce.bytes),
        (Some(function(profile, "share").id), None, 5, 160)
    );
    let gather = record(profile, "MPI_Gather");
    assert_eq!((gather.peer, gather.calls, gather.bytes), (Some(0), 1, 4));
    assert_eq!(profile.totals.communication_dropped, 0);
}

/// The reports of a ring run: the summary over ranks, one rank, and a rank's file alone.
fn assert_ring_reports(dir: &Path, ranks: usize, job: &str) {
    let summary = report(&[], dir);
    assert!(summary.contains(&format!("{ranks} of {ranks} ranks, job {job}")), "{summary}");
    let row = summary_row(&summary, "pass_token");
    assert_eq!((row[6], row[7]), (3.0 * ranks as f64, 3.0), "{summary}");
    assert_eq!(summary.matches("MPI_Send").count(), ranks, "one send record per rank:\n{summary}");
    let one = report(&["--rank", "1"], dir);
    assert!(one.contains(&format!("MPI rank 1 of {ranks}")), "{one}");
    let error = run(Command::new(bin("instrument")).args(["report", "--json"]).current_dir(dir));
    assert!(!error.status.success());
    assert!(String::from_utf8_lossy(&error.stderr).contains("choose one with --rank R"));
    // A rank's file named alone is reported alone.
    let named = profile_paths(dir).into_iter().find(|p| load_profile(p).mpi.unwrap().rank == 1).unwrap();
    let alone = report(&["--json", named.to_str().unwrap()], dir);
    let alone: serde_json::Value = serde_json::from_str(&alone).expect("one rank's JSON");
    assert!(alone["functions"].as_array().unwrap().iter().any(|f| f["name"] == "pass_token"));
}

#[test]
fn mpi_two_ranks_give_one_profile_each_with_communication_records() {
    ring(2);
}

#[test]
fn mpi_four_ranks_give_one_profile_each_with_communication_records() {
    ring(4);
}

/// c-fixtures/openmp_waits.c: known barrier, lock and idle waits, recorded by the OMPT tool per
/// region and OpenMP thread (and nothing with INSTRUMENT_OMPT=0). The counts are exact in every
/// run; the waits are wall-clock sleeps that a preemption of the other thread on a busy machine
/// (two cores, the parallel test binary beside) lengthens or shortens, so the best of up to
/// three runs is judged on them.
#[test]
fn openmp_waits_are_recorded_per_region_and_thread() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "openmp_waits", &["-fopenmp"]);
    let mut misses = Vec::new();
    for attempt in 0..3 {
        let run_dir = dir.path().join(format!("run{attempt}"));
        std::fs::create_dir_all(&run_dir).unwrap();
        let (output, profile) = run_profiled(&program, &run_dir);
        assert_success(&output, "openmp_waits");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "done\n");
        let off_range = openmp_wait_misses(&profile);
        if off_range.is_empty() {
            let summary = report(&[], &run_dir);
            assert!(summary.contains("OMP_Lock"), "{summary}");
            return openmp_waits_are_off_without_ompt(&program);
        }
        misses.push(off_range);
    }
    panic!("the OpenMP waits came out of their ranges in three runs: {misses:#?}");
}

/// The waits of c-fixtures/openmp_waits.c's profile outside their known sizes (their counts are
/// asserted exactly).
fn openmp_wait_misses(profile: &Profile) -> Vec<String> {
    let wait_ms = |operation: &str, site: Option<&str>, thread: u32| -> (u64, f64) {
        let site = site.map(|name| function(profile, name).id);
        let found = profile
            .communication
            .iter()
            .find(|c| c.operation == operation && c.site == site && c.peer == Some(thread));
        let c = found
            .unwrap_or_else(|| panic!("no {operation} of thread {thread}: {:#?}", profile.communication));
        assert_eq!(c.wait_ns, c.time_ns, "an OpenMP wait is all synchronisation delay");
        (c.calls, c.wait_ns as f64 / 1e6)
    };
    let mut misses = Vec::new();
    let mut expect = |what: &str, ms: f64, range: std::ops::Range<f64>| {
        if !range.contains(&ms) {
            misses.push(format!("{what}: {ms} ms, not in {range:?}"));
        }
    };
    // Thread 0 waits 30 ms in each of 3 closing barriers; thread 1 arrives last.
    let (calls, ms) = wait_ms("OMP_Barrier_implicit", Some("unbalanced"), 0);
    assert_eq!(calls, 3, "thread 0's closing barriers");
    expect("thread 0's closing barriers", ms, 75.0..150.0);
    let (calls, ms) = wait_ms("OMP_Barrier_implicit", Some("unbalanced"), 1);
    assert_eq!(calls, 3, "thread 1's closing barriers");
    expect("thread 1's closing barriers", ms, 0.0..10.0);
    // The worker is idle while the initial thread works alone, 20 ms twice.
    let (_, ms) = wait_ms("OMP_Idle", None, 1);
    expect("idle", ms, 35.0..80.0);
    // Thread 0 waits about 39 ms for the lock (held 40 ms: a late start of thread 0 after the
    // barrier, on a busy machine, takes from its wait, which came out at 24.3 ms with 30), thread 1
    // about 25 ms at the explicit barrier.
    let (calls, ms) = wait_ms("OMP_Lock", Some("contended.omp_outlined"), 0);
    assert_eq!(calls, 1, "the lock");
    expect("lock", ms, 25.0..60.0);
    let (calls, ms) = wait_ms("OMP_Barrier_explicit", Some("contended.omp_outlined"), 1);
    assert_eq!(calls, 2, "the explicit barriers");
    expect("explicit barrier", ms, 20.0..60.0);
    misses
}

/// With INSTRUMENT_OMPT=0 the OMPT tool records nothing.
fn openmp_waits_are_off_without_ompt(program: &Path) {
    let off = scratch();
    let output =
        run(Command::new(program).env("INSTRUMENT_PROFILE_DIR", off.path()).env("INSTRUMENT_OMPT", "0"));
    assert_success(&output, "openmp_waits with INSTRUMENT_OMPT=0");
    assert!(only_profile(off.path()).communication.is_empty());
}
