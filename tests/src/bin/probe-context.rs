//! `probe-context`: what a probe pair costs in place, next to what the start-up calibration
//! says it costs, for three kinds of code (c-fixtures/bench/probe_context.c: a dependency chain,
//! independent multiply-adds, and independent cache misses), with unfenced (`calibrated`) and
//! fenced probes. Compensation removes the calibrated Δi per event; wherever the in-place cost
//! differs, the difference times the events is the compensation error, so this table is why a
//! single per-probe constant cannot be exact everywhere (issue 5's accuracy targets).
//!
//! Each variant runs alternately with a main-only build (MO) and the minimum of each is kept;
//! in-place cost = (instrumented main - MO main) / calls; all ratios come from one run.
//!
//! `cargo run --release -p instrument-tests --bin probe-context -- [--calls N] [--repeat R]`
//! (after `cargo build --release --workspace`).

use clap::Parser;
use instrument_tests::{assert_success, bin, fixtures, function, only_profile, profile_paths, run};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Parser)]
#[command(about = "In-place probe cost against the calibrated one, per kind of code, from one run")]
struct Args {
    /// Calls of the measured routine per run
    #[arg(long, default_value_t = 4_000_000)]
    calls: u64,
    /// Runs per variant; the minimum is kept
    #[arg(long, default_value_t = 5)]
    repeat: u32,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
}

const WORKLOADS: [&str; 3] = ["latency", "throughput", "memory"];
const STRATEGIES: [&str; 2] = ["calibrated", "fenced"];

#[derive(serde::Serialize)]
struct Row {
    workload: &'static str,
    strategy: &'static str,
    mo_ms: f64,
    calibrated_ns: f64,
    in_place_ns: f64,
    ratio: f64,
    compensated_error_pct: f64,
}

fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (mo, pa) = build(dir.path());
    let mut rows = Vec::new();
    for workload in WORKLOADS {
        for strategy in STRATEGIES {
            rows.push(measure(&args, dir.path(), &mo, &pa, workload, strategy));
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialize"));
        return;
    }
    println!(
        "{:<11} {:<11} {:>9} {:>13} {:>11} {:>9} {:>14}",
        "code", "probes", "MO ms", "calibrated", "in place", "ratio", "comp. error"
    );
    for r in &rows {
        println!(
            "{:<11} {:<11} {:>9.1} {:>10.2} ns {:>8.2} ns {:>8.2}x {:>12.1} %",
            r.workload, r.strategy, r.mo_ms, r.calibrated_ns, r.in_place_ns, r.ratio, r.compensated_error_pct
        );
    }
    println!("(ratio: in-place cost / calibrated Δi; comp. error: compensated main against MO)");
}

/// The main-only build and the all-routines build.
fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let select = dir.join("main-only.txt");
    std::fs::write(&select, "BEGIN_INCLUDE_LIST\nmain\nEND_INCLUDE_LIST\n").expect("selection file");
    let source = fixtures().join("bench/probe_context.c");
    let compile = |name: &str, extra: Option<String>| {
        let out = dir.join(name);
        let mut cc = Command::new(bin("instrument-cc"));
        cc.arg("-O2").args(extra).arg(&source).arg("-o").arg(&out);
        assert_success(&run(&mut cc), name);
        out
    };
    (compile("mo", Some(format!("--instrument-select={}", select.display()))), compile("pa", None))
}

/// Min over the repetitions of MO's main and of the instrumented run's raw and compensated
/// main, and the calibrated Δi of the fastest instrumented run.
fn measure(
    args: &Args,
    dir: &Path,
    mo: &Path,
    pa: &Path,
    workload: &'static str,
    strategy: &'static str,
) -> Row {
    let (mut mo_ns, mut raw_ns, mut comp_ns, mut delta) = (f64::MAX, f64::MAX, f64::MAX, 0.0);
    for _ in 0..args.repeat {
        mo_ns = mo_ns.min(main_ns(dir, mo, workload, args.calls, None).0);
        let (raw, comp, d) = main_ns(dir, pa, workload, args.calls, Some(strategy));
        if raw < raw_ns {
            delta = d;
        }
        raw_ns = raw_ns.min(raw);
        comp_ns = comp_ns.min(comp);
    }
    let in_place = (raw_ns - mo_ns) / args.calls as f64;
    Row {
        workload,
        strategy,
        mo_ms: mo_ns / 1e6,
        calibrated_ns: delta,
        in_place_ns: in_place,
        ratio: in_place / delta,
        compensated_error_pct: (comp_ns - mo_ns) / mo_ns * 100.0,
    }
}

/// One run: main's raw and compensated inclusive ns and the calibrated routine Δi.
fn main_ns(
    dir: &Path,
    program: &Path,
    workload: &str,
    calls: u64,
    strategy: Option<&str>,
) -> (f64, f64, f64) {
    for old in profile_paths(dir) {
        std::fs::remove_file(old).expect("old profile removed");
    }
    let mut command = Command::new(program);
    command.args([workload, &calls.to_string()]).current_dir(dir).env("INSTRUMENT_PROFILE_DIR", dir);
    command.env("INSTRUMENT_THROTTLE", "0").env_remove("INSTRUMENT_COMPENSATE");
    if let Some(s) = strategy {
        command.env("INSTRUMENT_COMPENSATE", s);
    }
    assert_success(&run(&mut command), workload);
    let profile = only_profile(dir);
    let main = function(&profile, "main");
    let comp = main.compensated.map_or(main.inclusive_ns as f64, |c| c.inclusive_ns as f64);
    let delta = profile.compensation.as_ref().map_or(0.0, |c| c.routine.inclusive_overhead_ns);
    (main.inclusive_ns as f64, comp, delta)
}
