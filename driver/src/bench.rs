//! `instrument bench probes`: the cost of an instrumented call against the cost of two clock
//! reads, both measured in the same run on the same machine, so the ratio is meaningful on a
//! noisy machine where absolute times are not. Each fixture is built plainly and with
//! `instrument-cc`; each run prints its kernel time; the minimum over the repetitions is kept.
//! The call count comes from the instrumented run's own profile.

use crate::{layout, profiles, toolchain};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Settings {
    pub json: bool,
    pub repeat: u32,
    pub scale: f64,
}

const HEADER: &str = include_str!("../../c-fixtures/bench/bench_clock.h");
const FIXTURES: &[(&str, &str)] = &[
    ("fib", include_str!("../../c-fixtures/bench/fib.c")),
    ("leaf", include_str!("../../c-fixtures/bench/leaf.c")),
    ("clock_pair", include_str!("../../c-fixtures/bench/clock_pair.c")),
];

#[derive(Serialize)]
struct FixtureResult {
    name: &'static str,
    calls: u64,
    plain_ns: u64,
    instrumented_ns: u64,
    ns_per_call: f64,
    ratio: f64,
}

#[derive(Serialize)]
struct Report {
    ns_per_call: f64,
    clock_pair_ns: f64,
    ratio: f64,
    repeat: u32,
    fixtures: Vec<FixtureResult>,
}

pub fn probes(settings: &Settings) -> Result<()> {
    let work = tempfile::Builder::new().prefix("instrument-bench").tempdir()?;
    let dir = work.path();
    std::fs::write(dir.join("bench_clock.h"), HEADER)?;
    for (name, source) in FIXTURES {
        std::fs::write(dir.join(format!("{name}.c")), source)?;
    }
    let fib_n = (30.0 + settings.scale.max(1e-3).log2()).round().clamp(10.0, 45.0) as u32;
    let loops = ((1e8 * settings.scale) as u64).max(1000);
    let plan: Vec<(&'static str, String)> = vec![("fib", fib_n.to_string()), ("leaf", loops.to_string())];

    let clang = toolchain::CLANG.find()?;
    let cc = layout::sibling("instrument-cc")?;
    let progress = progress_bar(settings, (plan.len() as u64 * 2 + 1) * u64::from(settings.repeat) + 5);
    progress.set_message("building");
    let clock_pair = build(&clang, dir, "clock_pair", "plain")?;
    let mut builds = Vec::new();
    for (name, arg) in &plan {
        builds.push((
            *name,
            arg.clone(),
            build(&clang, dir, name, "plain")?,
            build(&cc, dir, name, "instrumented")?,
        ));
        progress.inc(2);
    }
    progress.set_message("measuring");
    let pair_iterations = loops;
    let clock_pair_ns =
        min_kernel_ns(&clock_pair, &pair_iterations.to_string(), dir, settings.repeat, &progress)? as f64
            / pair_iterations as f64;
    let mut fixtures = Vec::new();
    for (name, arg, plain, instrumented) in &builds {
        let plain_ns = min_kernel_ns(plain, arg, dir, settings.repeat, &progress)?;
        let instrumented_ns = min_kernel_ns(instrumented, arg, dir, settings.repeat, &progress)?;
        let calls = profiled_calls(dir, name)?;
        let ns_per_call = instrumented_ns.saturating_sub(plain_ns) as f64 / calls as f64;
        fixtures.push(FixtureResult {
            name,
            calls,
            plain_ns,
            instrumented_ns,
            ns_per_call,
            ratio: ns_per_call / clock_pair_ns,
        });
    }
    progress.finish_and_clear();
    let extra: u64 = fixtures.iter().map(|f| f.instrumented_ns.saturating_sub(f.plain_ns)).sum();
    let calls: u64 = fixtures.iter().map(|f| f.calls).sum();
    let ns_per_call = extra as f64 / calls as f64;
    let report = Report {
        ns_per_call,
        clock_pair_ns,
        ratio: ns_per_call / clock_pair_ns,
        repeat: settings.repeat,
        fixtures,
    };
    if settings.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

fn progress_bar(settings: &Settings, steps: u64) -> ProgressBar {
    if settings.json {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(steps);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} runs, eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}

fn build(compiler: &Path, dir: &Path, name: &str, variant: &str) -> Result<PathBuf> {
    let output = dir.join(format!("{name}-{variant}"));
    let status = Command::new(compiler)
        .args(["-O2", "-o"])
        .arg(&output)
        .arg(dir.join(format!("{name}.c")))
        .status()
        .with_context(|| format!("cannot run {}", compiler.display()))?;
    if !status.success() {
        bail!("building {name} ({variant}) failed");
    }
    Ok(output)
}

/// The smallest kernel time over `repeat` runs of `program arg`.
fn min_kernel_ns(program: &Path, arg: &str, dir: &Path, repeat: u32, progress: &ProgressBar) -> Result<u64> {
    let mut best = u64::MAX;
    for _ in 0..repeat {
        let output = Command::new(program)
            .arg(arg)
            .env("INSTRUMENT_PROFILE_DIR", dir)
            .output()
            .with_context(|| format!("cannot run {}", program.display()))?;
        if !output.status.success() {
            bail!("{} failed: {}", program.display(), output.status);
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let ns = stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix("ns=")?.parse::<u64>().ok())
            .with_context(|| format!("{} printed no kernel time", program.display()))?;
        best = best.min(ns);
        progress.inc(1);
    }
    Ok(best)
}

/// Calls of routine `name` in the newest profile of the instrumented fixture.
fn profiled_calls(dir: &Path, name: &str) -> Result<u64> {
    let profile = profiles::load(&profiles::newest(dir)?)?;
    profile
        .functions
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.calls)
        .with_context(|| format!("the profile of {name} does not list {name}"))
}

fn print_table(report: &Report) {
    println!("cost of two clock reads (rdtsc pair): {:.2} ns", report.clock_pair_ns);
    println!(
        "{:<8} {:>12} {:>12} {:>14} {:>11} {:>12}",
        "fixture", "calls", "plain ms", "instrumented", "ns/call", "ratio"
    );
    for f in &report.fixtures {
        println!(
            "{:<8} {:>12} {:>12.2} {:>14.2} {:>11.2} {:>12.3}",
            f.name,
            f.calls,
            f.plain_ns as f64 / 1e6,
            f.instrumented_ns as f64 / 1e6,
            f.ns_per_call,
            f.ratio
        );
    }
    println!(
        "overall: {:.2} ns per instrumented call = {:.3} x two clock reads (target <= 1.10), min of {} runs",
        report.ns_per_call, report.ratio, report.repeat
    );
}
