//! `bench-builds`: what instrumenting costs a real project, measured in one run so the ratios
//! hold on a noisy machine. Build time: each project is built plainly and instrumented, from a
//! fresh copy each time, alternating, and the minimum of each is kept (target: ratio <= 1.3).
//! Run time: the Lua interpreter runs c-fixtures/lua/workload.lua built plainly and with the
//! probe placements and filters a user would try; the cost per event is the time added divided
//! by the events the profile counted.
//!
//! `cargo run --release -p instrument-tests --bin bench-builds -- [--repeat N] [--scale S]`
//! (after `cargo build --release --workspace`).

use clap::Parser;
use instrument_tests::variant::{Variant, PLAIN};
use instrument_tests::{copy_dir, fixtures, repo_root, third_party};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Build time and Lua run time, instrumented against plain, as ratios from one run")]
struct Args {
    /// Builds and runs per variant; the minimum is kept
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Size of the Lua workload (workload.lua SCALE)
    #[arg(long, default_value_t = 16)]
    scale: u32,
    /// Only these projects (lua, sqlite, bench-nas, rust-workspace)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Print JSON instead of tables
    #[arg(long)]
    json: bool,
}

const INSTRUMENTED: Variant = Variant { name: "instrumented", instrumented: true, env: &[] };
const LUA_VARIANTS: &[Variant] = &[
    PLAIN,
    INSTRUMENTED,
    Variant { name: "early placement", instrumented: true, env: &[("INSTRUMENT_PLACEMENT", "early")] },
    Variant { name: ">= 20 instructions", instrumented: true, env: &[("INSTRUMENT_MIN_INSTRUCTIONS", "20")] },
];

/// A project: where its sources come from and how it is built; returns what to wait for.
struct Project {
    name: &'static str,
    source: fn(&Path) -> PathBuf,
    build: fn(Variant, &Path) -> Vec<Command>,
}

const PROJECTS: &[Project] = &[
    Project { name: "lua", source: third_party::lua, build: build_lua },
    Project { name: "sqlite", source: third_party::sqlite, build: build_sqlite },
    Project { name: "bench-nas", source: |d| copy(&repo_root().join("bench-nas"), d), build: build_nas },
    Project {
        name: "rust-workspace",
        source: |d| copy(&repo_root().join("tests/rust-workspace"), d),
        build: build_rust,
    },
];

/// A copy of a project of this repository without its build outputs (bench-nas/build,
/// target/), so every build starts from sources only.
fn copy(from: &Path, to: &Path) -> PathBuf {
    copy_dir(from, to);
    for outputs in ["build", "target"] {
        let path = to.join(outputs);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        }
    }
    to.to_path_buf()
}

fn build_lua(v: Variant, tree: &Path) -> Vec<Command> {
    let mut make = v.command("make", tree);
    make.args(["-s", "-j2", "linux", &format!("CC={} -std=gnu99", v.cc())]);
    vec![make]
}

/// The two translation units compile side by side (as make -j2 would), then one link.
fn build_sqlite(v: Variant, tree: &Path) -> Vec<Command> {
    let compile = |source: &str| {
        let mut cc = v.command(&v.cc(), tree);
        cc.args(["-O2", "-c", source]);
        cc
    };
    let mut link = v.command(&v.cc(), tree);
    link.args(["shell.o", "sqlite3.o", "-o", "sqlite3", "-lm"]);
    vec![compile("sqlite3.c"), compile("shell.c"), link]
}

fn build_nas(v: Variant, tree: &Path) -> Vec<Command> {
    let mut make = v.command("make", tree);
    make.args(["-s", "-j2", "all", &format!("CC={}", v.cc()), &format!("FC={}", v.fc())]);
    vec![make]
}

fn build_rust(v: Variant, tree: &Path) -> Vec<Command> {
    let mut cargo = v.command("cargo", tree);
    if v.instrumented {
        cargo.arg("instrument");
    }
    cargo.args(["build", "--release", "--quiet", "--target-dir"]).arg(tree.join("target"));
    vec![cargo]
}

/// Runs a project's build steps; the sqlite compiles (all but the last step) run concurrently.
fn timed_build(project: &Project, v: Variant, tree: &Path) -> Duration {
    let mut steps = (project.build)(v, tree);
    let last = steps.pop().expect("a build step");
    let start = Instant::now();
    let children: Vec<(Child, String)> = steps
        .iter_mut()
        .map(|c| (c.spawn().unwrap_or_else(|e| panic!("cannot run {c:?}: {e}")), format!("{c:?}")))
        .collect();
    for (mut child, what) in children {
        assert!(child.wait().unwrap().success(), "{what} failed");
    }
    let mut last = last;
    let status = last.status().unwrap_or_else(|e| panic!("cannot run {last:?}: {e}"));
    assert!(status.success(), "{} build ({}) failed: {last:?}", project.name, v.name);
    start.elapsed()
}

#[derive(serde::Serialize)]
struct BuildResult {
    project: &'static str,
    plain_s: f64,
    instrumented_s: f64,
    ratio: f64,
}

fn build_times(args: &Args, scratch: &Path) -> Vec<BuildResult> {
    let wanted = |p: &&Project| args.only.is_empty() || args.only.iter().any(|o| o == p.name);
    let mut results = Vec::new();
    for project in PROJECTS.iter().filter(wanted) {
        let source = (project.source)(&scratch.join(format!("{}-source", project.name)));
        let mut best = [Duration::MAX; 2];
        for round in 0..args.repeat {
            for (i, v) in [PLAIN, INSTRUMENTED].into_iter().enumerate() {
                eprintln!("building {} ({}, {}/{})", project.name, v.name, round + 1, args.repeat);
                let tree = scratch.join(format!("{}-{}-{round}", project.name, i));
                copy_dir(&source, &tree);
                best[i] = best[i].min(timed_build(project, v, &tree));
                std::fs::remove_dir_all(&tree).ok();
            }
        }
        let (plain_s, instrumented_s) = (best[0].as_secs_f64(), best[1].as_secs_f64());
        results.push(BuildResult {
            project: project.name,
            plain_s,
            instrumented_s,
            ratio: instrumented_s / plain_s,
        });
    }
    results
}

#[derive(serde::Serialize)]
struct RunResult {
    variant: &'static str,
    seconds: f64,
    ratio: f64,
    events: u64,
    ns_per_event: f64,
}

/// Lua built once per variant, then workload.lua run `repeat` times each, alternating.
fn lua_run_times(args: &Args, scratch: &Path) -> Vec<RunResult> {
    let source = third_party::lua(&scratch.join("lua-run-source"));
    let lua = &PROJECTS[0];
    let programs: Vec<PathBuf> = LUA_VARIANTS
        .iter()
        .enumerate()
        .map(|(i, v)| {
            eprintln!("building lua ({}) for the run-time benchmark", v.name);
            let tree = scratch.join(format!("lua-run-{i}"));
            copy_dir(&source, &tree);
            timed_build(lua, *v, &tree);
            tree.join("src/lua")
        })
        .collect();
    let script = fixtures().join("lua/workload.lua");
    let mut best = vec![Duration::MAX; programs.len()];
    let mut events = vec![0; programs.len()];
    for round in 0..args.repeat {
        for (i, program) in programs.iter().enumerate() {
            eprintln!(
                "running workload.lua {} ({}, {}/{})",
                args.scale,
                LUA_VARIANTS[i].name,
                round + 1,
                args.repeat
            );
            let profiles = scratch.join(format!("profiles-{i}-{round}"));
            std::fs::create_dir_all(&profiles).unwrap();
            let start = Instant::now();
            let output = Command::new(program)
                .arg(&script)
                .arg(args.scale.to_string())
                .env("INSTRUMENT_PROFILE_DIR", &profiles)
                .output()
                .expect("lua runs");
            best[i] = best[i].min(start.elapsed());
            assert!(output.status.success(), "lua ({}) failed", LUA_VARIANTS[i].name);
            events[i] = profile_events(&profiles);
        }
    }
    let plain = best[0].as_secs_f64();
    (0..programs.len())
        .map(|i| {
            let seconds = best[i].as_secs_f64();
            let added_ns = (seconds - plain) * 1e9;
            RunResult {
                variant: LUA_VARIANTS[i].name,
                seconds,
                ratio: seconds / plain,
                events: events[i],
                ns_per_event: if events[i] > 0 { added_ns / events[i] as f64 } else { 0.0 },
            }
        })
        .collect()
}

/// Routine calls counted by the profile in `dir` (0 when the program wrote none).
fn profile_events(dir: &Path) -> u64 {
    instrument_tests::profile_paths(dir)
        .first()
        .map(|path| instrument_tests::load_profile(path).functions.iter().map(|f| f.stats.calls).sum())
        .unwrap_or(0)
}

fn main() {
    let args = Args::parse();
    let scratch = tempfile::Builder::new().prefix("bench-builds").tempdir().expect("scratch directory");
    let builds = build_times(&args, scratch.path());
    let wants_lua = args.only.is_empty() || args.only.iter().any(|o| o == "lua");
    let runs = if wants_lua { lua_run_times(&args, scratch.path()) } else { Vec::new() };
    if args.json {
        println!("{}", serde_json::json!({ "builds": builds, "lua_runs": runs, "repeat": args.repeat }));
        return;
    }
    println!("Build time, minimum of {} builds each (target: ratio <= 1.3)", args.repeat);
    println!("{:<16} {:>10} {:>15} {:>7}", "project", "plain s", "instrumented s", "ratio");
    for b in &builds {
        println!("{:<16} {:>10.2} {:>15.2} {:>7.2}", b.project, b.plain_s, b.instrumented_s, b.ratio);
    }
    if !runs.is_empty() {
        println!("\nLua workload.lua {} run time, minimum of {} runs each", args.scale, args.repeat);
        println!("{:<26} {:>9} {:>7} {:>12} {:>13}", "lua built", "seconds", "ratio", "calls", "ns per call");
        for r in &runs {
            println!(
                "{:<26} {:>9.3} {:>7.2} {:>12} {:>13.1}",
                r.variant, r.seconds, r.ratio, r.events, r.ns_per_event
            );
        }
    }
}
