//! `instrument bench probes`: the cost of an instrumented event (routine call, loop execution,
//! call statement) against the cost of two clock reads, both measured in the same run on the
//! same machine, so the ratio is meaningful on a noisy machine where absolute times are not.
//! Each fixture is built plainly and with `instrument-cc`; each run prints its kernel time; the
//! minimum over the repetitions is kept. Event counts come from the instrumented run's profile.
//! Throttling is off for these runs (they measure the full probe), except for the last two
//! rows: the leaf routine switched off at run time, and throttled (only counted), each against
//! the cost of the uninstrumented call itself. Next to every measured cost stands the cost
//! model's (the probe pair the run measured at its start-up), and their ratio: how well
//! `instrument cost` predicts in place. The leaf routine is also measured against a minimal
//! hand-written `-finstrument-functions` hook pair, the floor a measured profiler's probes can
//! reach: that comparison, the target, runs the three copies of the leaf in one process
//! (bench_hook.rs), since two minima taken a minute apart moved it by 0.05 here.

use crate::bench_paired::{NPB_HEADER, RANDDP};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use instrument_contract::{probes, settings};
use instrument_profile::{ProbeKind, Profile};
use instrument_report::profiles;
use instrument_toolchain::{layout, toolchain};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Settings {
    pub json: bool,
    pub repeat: u32,
    pub scale: f64,
}

const HEADER: &str = include_str!("../../c-fixtures/bench/bench_clock.h");
const CLOCK_PAIR: &str = include_str!("../../c-fixtures/bench/clock_pair.c");
/// The fixtures' routines are a few instructions each, which late placement leaves without
/// events by default (`INSTRUMENT_MIN_INSTRUCTIONS`); the benchmarks measure their probes.
const EVERY_ROUTINE: &str = "--instrument-min-instructions=0";
const IS_LIKE: &str = include_str!("../../c-fixtures/bench/is_like.c");

/// A benchmark fixture: its source, the events it is instrumented with, and how to read the
/// number of events its kernel caused from its profile.
struct Fixture {
    name: &'static str,
    kind: &'static str,
    source: &'static str,
    events: &'static str,
    count: fn(&Profile) -> u64,
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        name: "fib",
        kind: "routine",
        source: include_str!("../../c-fixtures/bench/fib.c"),
        events: "functions",
        count: |p| routine_calls(p, "fib"),
    },
    Fixture {
        name: "leaf",
        kind: "routine",
        source: include_str!("../../c-fixtures/bench/leaf.c"),
        events: "functions",
        count: |p| routine_calls(p, "leaf"),
    },
    Fixture {
        name: "loop",
        kind: "loop",
        source: include_str!("../../c-fixtures/bench/loop_events.c"),
        events: "loops",
        count: |p| p.loops.iter().map(|l| l.stats.calls).max().unwrap_or(0),
    },
    Fixture {
        name: "callsite",
        kind: "callsite",
        source: include_str!("../../c-fixtures/bench/call_events.c"),
        events: "callsites",
        count: |p| p.callsites.iter().filter(|c| c.callee == "leaf").map(|c| c.stats.calls).sum(),
    },
];

fn routine_calls(profile: &Profile, name: &str) -> u64 {
    profile.functions.iter().find(|f| f.name == name).map_or(0, |f| f.stats.calls)
}

#[derive(Serialize)]
struct FixtureResult {
    name: &'static str,
    kind: &'static str,
    events: u64,
    plain_ns: u64,
    instrumented_ns: u64,
    ns_per_event: f64,
    ratio: f64,
    /// The cost model's ns per event: the probe pair cost the run measured at its start-up.
    model_ns_per_event: f64,
    /// model_ns_per_event / ns_per_event: how well the cost model predicts in place.
    model_ratio: f64,
}

#[derive(Serialize)]
struct Report {
    /// Routine calls (fib, leaf): ns added per instrumented call.
    ns_per_call: f64,
    clock_pair_ns: f64,
    /// ns_per_call / clock_pair_ns.
    ratio: f64,
    /// The leaf's pair against the minimal hand-written hook pair, in one process.
    hand_hook: crate::bench_hook::HandHook,
    loop_ratio: f64,
    callsite_ratio: f64,
    repeat: u32,
    fixtures: Vec<FixtureResult>,
    switched: Switched,
    is_like: IsLike,
    /// The same pattern's slowdown measured in one process, against the overhead figure.
    is_like_paired: Vec<crate::bench_paired::Paired>,
}

/// IS's key generation (4 randlc calls per key) plainly and with TAU's throttling (the
/// default): the overhead throttling leaves (target <= 5 %) and whether the count is exact.
#[derive(Serialize)]
struct IsLike {
    calls: u64,
    counted_calls: u64,
    plain_ns: u64,
    throttled_ns: u64,
    /// (throttled - plain) / plain, in %.
    overhead_percent: f64,
    /// The cost model's estimate of the same (the profile's probe overhead over the plain
    /// kernel), an upper bound where probes overlap a dependency chain.
    model_percent: f64,
}

/// The leaf routine's calls with its probes switched off, and throttled.
#[derive(Serialize)]
struct Switched {
    /// What one uninstrumented call of leaf costs (plain kernel time per call).
    call_ns: f64,
    /// ns added per call with leaf switched off at run time (INSTRUMENT_RUNTIME_SELECT).
    off_ns_per_call: f64,
    /// off_ns_per_call / call_ns.
    off_ratio_to_call: f64,
    /// ns added per call once leaf is throttled (counted only): by its own entry code where
    /// the build counts inline (late placement on x86-64), else through the probe call.
    counted_ns_per_call: f64,
    counted_ratio_to_call: f64,
    /// The same through the probe call (INSTRUMENT_INLINE_COUNT=0).
    called_ns_per_call: f64,
    /// The cost model's switched-off and counted pair costs, measured at start-up.
    model_off_ns: f64,
    model_counted_ns: f64,
}

pub fn probes(settings: &Settings) -> Result<()> {
    let work = tempfile::Builder::new().prefix("instrument-bench").tempdir()?;
    let dir = work.path();
    std::fs::write(dir.join("bench_clock.h"), HEADER)?;
    std::fs::write(dir.join("clock_pair.c"), CLOCK_PAIR)?;
    for f in FIXTURES {
        std::fs::write(dir.join(format!("{}.c", f.name)), f.source)?;
    }
    let fib_n = (30.0 + settings.scale.max(1e-3).log2()).round().clamp(10.0, 45.0) as u32;
    let loops = ((1e8 * settings.scale) as u64).max(1000);
    let argument = |f: &Fixture| if f.name == "fib" { fib_n.to_string() } else { loops.to_string() };

    let clang = toolchain::CLANG.find()?;
    let steps = (FIXTURES.len() as u64 * 2 + 7) * u64::from(settings.repeat)
        + 14
        + crate::bench_hook::PROCESSES as u64
        + crate::bench_paired::PROCESSES as u64;
    let progress = progress_bar(settings, steps);
    progress.set_message("building");
    let clock_pair = build(&clang, dir, "clock_pair", "plain", &[])?;
    let builds = build_fixtures(&clang, dir, &progress)?;
    progress.set_message("measuring");
    let clock_pair_ns = min_kernel_ns(&clock_pair, &loops.to_string(), dir, settings.repeat, &progress, &[])?
        as f64
        / loops as f64;
    let mut fixtures = Vec::new();
    for (f, plain, instrumented) in &builds {
        let programs = (plain.as_path(), instrumented.as_path());
        fixtures.push(measure_fixture(
            f,
            programs,
            &argument(f),
            clock_pair_ns,
            dir,
            settings.repeat,
            &progress,
        )?);
    }
    let leaf = FIXTURES.iter().find(|f| f.name == "leaf").context("no leaf fixture")?;
    let events = format!("--instrument-events={}", leaf.events);
    let hand_hook = crate::bench_hook::hand_hook(dir, loops, &[&events, EVERY_ROUTINE], &progress)?;
    let switched = switched_leaf(&builds, dir, loops, settings.repeat, &progress)?;
    let is_like = is_like(dir, loops / 4, settings.repeat, &progress)?;
    let is_like_paired =
        crate::bench_paired::is_like_paired(dir, loops * 3 / 2, &[EVERY_ROUTINE], &progress)?;
    progress.finish_and_clear();
    let per_kind = |kind: &str| {
        let chosen: Vec<_> = fixtures.iter().filter(|f| f.kind == kind).collect();
        let extra: u64 = chosen.iter().map(|f| f.instrumented_ns.saturating_sub(f.plain_ns)).sum();
        extra as f64 / chosen.iter().map(|f| f.events).sum::<u64>() as f64
    };
    let ns_per_call = per_kind("routine");
    let report = Report {
        ns_per_call,
        clock_pair_ns,
        ratio: ns_per_call / clock_pair_ns,
        hand_hook,
        loop_ratio: per_kind("loop") / clock_pair_ns,
        callsite_ratio: per_kind("callsite") / clock_pair_ns,
        repeat: settings.repeat,
        fixtures,
        switched,
        is_like,
        is_like_paired,
    };
    if settings.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

/// Every fixture built plainly and instrumented (with its kind of events only).
fn build_fixtures(
    clang: &Path,
    dir: &Path,
    progress: &ProgressBar,
) -> Result<Vec<(&'static Fixture, PathBuf, PathBuf)>> {
    let cc = layout::sibling("instrument-cc")?;
    let mut builds = Vec::new();
    for f in FIXTURES {
        let events = format!("--instrument-events={}", f.events);
        let plain = build(clang, dir, f.name, "plain", &[])?;
        builds.push((f, plain, build(&cc, dir, f.name, "instrumented", &[&events, EVERY_ROUTINE])?));
        progress.inc(2);
    }
    Ok(builds)
}

/// One fixture's plain and instrumented kernels (`programs`), each run with `arg`, timed, and
/// what its probes cost per event against the clock pair and the profile's model.
fn measure_fixture(
    f: &Fixture,
    (plain, instrumented): (&Path, &Path),
    arg: &str,
    clock_pair_ns: f64,
    dir: &Path,
    repeat: u32,
    progress: &ProgressBar,
) -> Result<FixtureResult> {
    let plain_ns = min_kernel_ns(plain, arg, dir, repeat, progress, &[])?;
    let instrumented_ns = min_kernel_ns(instrumented, arg, dir, repeat, progress, &[])?;
    let profile = profiles::load(&profiles::newest(dir)?)?;
    let events = (f.count)(&profile);
    if events == 0 {
        bail!("the profile of {} counted no events", f.name);
    }
    let ns_per_event = instrumented_ns.saturating_sub(plain_ns) as f64 / events as f64;
    let kind = if f.kind == "loop" { ProbeKind::Loop } else { ProbeKind::Routine };
    let model_ns_per_event = profile.overhead.as_ref().map_or(0.0, |o| o.costs.of(kind, 1, 0));
    Ok(FixtureResult {
        name: f.name,
        kind: f.kind,
        events,
        plain_ns,
        instrumented_ns,
        ns_per_event,
        ratio: ns_per_event / clock_pair_ns,
        model_ns_per_event,
        model_ratio: model_ns_per_event / ns_per_event,
    })
}

/// IS's key generation, plainly and throttled (TAU's rule, as every flat run by default).
fn is_like(dir: &Path, keys: u64, repeat: u32, progress: &ProgressBar) -> Result<IsLike> {
    for (file, text) in [("is_like.c", IS_LIKE), ("randdp.c", RANDDP), ("npb-C.h", NPB_HEADER)] {
        std::fs::write(dir.join(file), text)?;
    }
    let randdp = dir.join("randdp.c").display().to_string();
    let plain = build(&toolchain::CLANG.find()?, dir, "is_like", "plain", &["-DCLASS_S", &randdp])?;
    let flags = ["-DCLASS_S", &randdp, EVERY_ROUTINE];
    let instrumented = build(&layout::sibling("instrument-cc")?, dir, "is_like", "instrumented", &flags)?;
    progress.inc(2);
    let arg = keys.to_string();
    let plain_ns = min_kernel_ns(&plain, &arg, dir, repeat, progress, &[])?;
    let throttle = [(settings::THROTTLE.name, "1")];
    let throttled_ns = min_kernel_ns(&instrumented, &arg, dir, repeat, progress, &throttle)?;
    let profile = profiles::load(&profiles::newest(dir)?)?;
    let randlc = profile.functions.iter().find(|f| f.name == "randlc").context("no randlc in the profile")?;
    let model_ns = profile.overhead.as_ref().map_or(0.0, |o| o.total_ns);
    Ok(IsLike {
        calls: randlc.stats.calls,
        counted_calls: randlc.stats.untimed_calls,
        plain_ns,
        throttled_ns,
        overhead_percent: 100.0 * (throttled_ns as f64 - plain_ns as f64) / plain_ns as f64,
        model_percent: 100.0 * model_ns / plain_ns as f64,
    })
}

/// The leaf fixture plainly, with leaf switched off, and throttled from its first call.
fn switched_leaf(
    builds: &[(&Fixture, PathBuf, PathBuf)],
    dir: &Path,
    loops: u64,
    repeat: u32,
    progress: &ProgressBar,
) -> Result<Switched> {
    let (_, plain, instrumented) =
        builds.iter().find(|(f, _, _)| f.name == "leaf").context("no leaf fixture")?;
    let selection = dir.join("leaf-off.txt");
    std::fs::write(&selection, "BEGIN_EXCLUDE_LIST\nleaf\nEND_EXCLUDE_LIST\n")?;
    let arg = loops.to_string();
    let plain_ns = min_kernel_ns(plain, &arg, dir, repeat, progress, &[])?;
    let selection = selection.display().to_string();
    let off = [(settings::RUNTIME_SELECT.name, selection.as_str())];
    let off_ns = min_kernel_ns(instrumented, &arg, dir, repeat, progress, &off)?;
    let throttled = [(settings::THROTTLE.name, "1"), (settings::THROTTLE_CALLS.name, "1")];
    let called = [throttled[0], throttled[1], (settings::INLINE_COUNT.name, "0")];
    let called_ns = min_kernel_ns(instrumented, &arg, dir, repeat, progress, &called)?;
    let counted_ns = min_kernel_ns(instrumented, &arg, dir, repeat, progress, &throttled)?;
    let model =
        profiles::load(&profiles::newest(dir)?)?.overhead.map(|o| o.costs.routine).unwrap_or_default();
    let per_call = |ns: u64| ns.saturating_sub(plain_ns) as f64 / loops as f64;
    let call_ns = plain_ns as f64 / loops as f64;
    Ok(Switched {
        call_ns,
        off_ns_per_call: per_call(off_ns),
        off_ratio_to_call: per_call(off_ns) / call_ns,
        counted_ns_per_call: per_call(counted_ns),
        counted_ratio_to_call: per_call(counted_ns) / call_ns,
        called_ns_per_call: per_call(called_ns),
        model_off_ns: model.off_ns,
        model_counted_ns: model.counted_ns,
    })
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

fn build(compiler: &Path, dir: &Path, name: &str, variant: &str, flags: &[&str]) -> Result<PathBuf> {
    let output = dir.join(format!("{name}-{variant}"));
    let status = Command::new(compiler)
        .args(flags)
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
fn min_kernel_ns(
    program: &Path,
    arg: &str,
    dir: &Path,
    repeat: u32,
    progress: &ProgressBar,
    env: &[(&str, &str)],
) -> Result<u64> {
    let mut best = u64::MAX;
    for _ in 0..repeat {
        let output = Command::new(program)
            .arg(arg)
            .env(settings::PROFILE_DIR.name, dir)
            .env(settings::THROTTLE.name, "0")
            .envs(env.iter().copied())
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

fn print_table(report: &Report) {
    println!("cost of two clock reads (rdtsc and rdtscp): {:.2} ns", report.clock_pair_ns);
    println!("{}", placement_line());
    println!(
        "{:<9} {:<9} {:>12} {:>12} {:>14} {:>11} {:>8} {:>11} {:>10}",
        "fixture",
        "events",
        "count",
        "plain ms",
        "instrumented",
        "ns/event",
        "ratio",
        "model ns",
        "model/real"
    );
    for f in &report.fixtures {
        println!(
            "{:<9} {:<9} {:>12} {:>12.2} {:>14.2} {:>11.2} {:>8.3} {:>11.2} {:>10.2}",
            f.name,
            f.kind,
            f.events,
            f.plain_ns as f64 / 1e6,
            f.instrumented_ns as f64 / 1e6,
            f.ns_per_event,
            f.ratio,
            f.model_ns_per_event,
            f.model_ratio
        );
    }
    print_summary(report);
}

/// Which probes the instrumented builds call: the wrappers' placement (INSTRUMENT_PLACEMENT, late
/// by default) and the probe set of this architecture (`instrument_contract::probes::set_for`).
fn placement_line() -> String {
    let early = settings::PLACEMENT.choice().ok().flatten() == Some("early");
    let set = probes::set_for(std::env::consts::ARCH);
    let convention = if set.convention == probes::PRESERVE_MOST { "preserve_most" } else { "C" };
    let (placement, other) = if early { ("early", "late") } else { ("late", "early") };
    format!("probes: {placement} placement, {convention} convention; INSTRUMENT_PLACEMENT={other} measures the other placement")
}

/// The lines under the fixtures' table: the ratios against the targets and the cost model.
fn print_summary(report: &Report) {
    println!(
        "routines: {:.2} ns per instrumented call = {:.3} x two clock reads; loops {:.3} x; call statements {:.3} x \
         (min of {} runs; the floor is the hand-written pair below, not two clock reads)",
        report.ns_per_call, report.ratio, report.loop_ratio, report.callsite_ratio, report.repeat
    );
    let hook = &report.hand_hook;
    let processes: Vec<String> = hook.per_process.iter().map(|r| format!("{r:.3}")).collect();
    println!(
        "leaf against a minimal hand-written hook pair (rdtsc and rdtscp, a thread-local stack, a direct-mapped record): \
         {:.2} ns per call ({:.3} x two clock reads), ours {:.3} x that [{:.3}, {:.3}] (target <= 1.10; the three copies \
         of the leaf in one process, median of {} rounds of {} calls; per process {})",
        hook.hand_ns,
        hook.hand_ns / report.clock_pair_ns,
        hook.ratio.median,
        hook.ratio.low,
        hook.ratio.high,
        hook.ratio.n,
        hook.calls_per_round,
        processes.join(", ")
    );
    let s = &report.switched;
    println!(
        "leaf switched off: {:.2} ns per call = {:.2} x an uninstrumented call ({:.2} ns); throttled (counted only): \
         {:.2} ns = {:.2} x ({:.2} ns through the probe call, INSTRUMENT_INLINE_COUNT=0)",
        s.off_ns_per_call,
        s.off_ratio_to_call,
        s.call_ns,
        s.counted_ns_per_call,
        s.counted_ratio_to_call,
        s.called_ns_per_call
    );
    let is = &report.is_like;
    println!(
        "IS-like key generation (randlc {} calls, {} counted after throttling): {:.2} ms plain, {:.2} ms throttled: \
         overhead {:.1} % (target <= 5 %; the cost model says {:.1} %)",
        is.calls,
        is.counted_calls,
        is.plain_ns as f64 / 1e6,
        is.throttled_ns as f64 / 1e6,
        is.overhead_percent,
        is.model_percent
    );
    println!("{}", crate::bench_paired::summary(&report.is_like_paired));
    println!(
        "cost model (probe pairs measured at start-up): off {:.2} ns, counted {:.2} ns; model/real per fixture in \
         the table (instrument cost predicts with these)",
        s.model_off_ns, s.model_counted_ns
    );
}

#[derive(Serialize)]
struct DepthResult {
    depth: String,
    ns_per_call: f64,
    /// ns_per_call / the flat profile's ns_per_call, measured in the same run.
    ratio_to_flat: f64,
}

#[derive(Serialize)]
struct CallpathReport {
    flat_ns_per_call: f64,
    depths: Vec<DepthResult>,
    /// Largest ratio over the depths (target <= 1.25).
    max_ratio: f64,
    /// Most expensive depth over cheapest (target <= 1.10).
    spread: f64,
    repeat: u32,
}

/// `instrument bench callpaths`: routine calls in callpath mode at k = 1, 2, 4, 8 and
/// unlimited against flat mode, on the call-heavy fixtures (fib, leaf), same binaries, one run.
pub fn callpaths(settings: &Settings) -> Result<()> {
    let work = tempfile::Builder::new().prefix("instrument-bench").tempdir()?;
    let dir = work.path();
    std::fs::write(dir.join("bench_clock.h"), HEADER)?;
    let chosen: Vec<&Fixture> = FIXTURES.iter().filter(|f| f.kind == "routine").collect();
    let fib_n = (30.0 + settings.scale.max(1e-3).log2()).round().clamp(10.0, 45.0) as u32;
    let loops = ((1e8 * settings.scale) as u64).max(1000);
    let depths = ["0", "1", "2", "4", "8", "all"];
    let progress =
        progress_bar(settings, (chosen.len() * (depths.len() + 1)) as u64 * u64::from(settings.repeat));
    progress.set_message("building");
    let argument = |f: &Fixture| if f.name == "fib" { fib_n.to_string() } else { loops.to_string() };
    let builds = build_routine_fixtures(&chosen, dir, argument)?;
    progress.set_message("measuring");
    let mut extra = vec![0u64; depths.len()];
    let mut calls = 0u64;
    for (f, arg, plain, instrumented) in &builds {
        let plain_ns = min_kernel_ns(plain, arg, dir, settings.repeat, &progress, &[])?;
        for (i, depth) in depths.iter().enumerate() {
            let ns = min_kernel_ns(
                instrumented,
                arg,
                dir,
                settings.repeat,
                &progress,
                &[(settings::CALLPATH.name, depth)],
            )?;
            extra[i] += ns.saturating_sub(plain_ns);
        }
        calls += (f.count)(&profiles::load(&profiles::newest(dir)?)?);
    }
    progress.finish_and_clear();
    let per_call: Vec<f64> = extra.iter().map(|&e| e as f64 / calls as f64).collect();
    let flat = per_call[0];
    let results: Vec<DepthResult> = depths[1..]
        .iter()
        .zip(&per_call[1..])
        .map(|(d, &ns)| DepthResult { depth: d.to_string(), ns_per_call: ns, ratio_to_flat: ns / flat })
        .collect();
    let max = results.iter().map(|r| r.ns_per_call).fold(f64::MIN, f64::max);
    let min = results.iter().map(|r| r.ns_per_call).fold(f64::MAX, f64::min);
    let report = CallpathReport {
        flat_ns_per_call: flat,
        max_ratio: max / flat,
        spread: max / min,
        depths: results,
        repeat: settings.repeat,
    };
    if settings.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_callpaths(&report, calls);
    }
    Ok(())
}

/// Each routine fixture with its argument, built plainly and instrumented with every event.
fn build_routine_fixtures(
    chosen: &[&'static Fixture],
    dir: &Path,
    argument: impl Fn(&Fixture) -> String,
) -> Result<Vec<(&'static Fixture, String, PathBuf, PathBuf)>> {
    let clang = toolchain::CLANG.find()?;
    let cc = layout::sibling("instrument-cc")?;
    let mut builds = Vec::new();
    for f in chosen {
        std::fs::write(dir.join(format!("{}.c", f.name)), f.source)?;
        let plain = build(&clang, dir, f.name, "plain", &[])?;
        builds.push((*f, argument(f), plain, build(&cc, dir, f.name, "instrumented", &[EVERY_ROUTINE])?));
    }
    Ok(builds)
}

fn print_callpaths(report: &CallpathReport, calls: u64) {
    println!("flat profile: {:.2} ns per call ({} calls of fib and leaf)", report.flat_ns_per_call, calls);
    println!("{:<10} {:>12} {:>14}", "depth k", "ns/call", "ratio to flat");
    for r in &report.depths {
        println!("{:<10} {:>12.2} {:>14.3}", r.depth, r.ns_per_call, r.ratio_to_flat);
    }
    println!(
        "max ratio {:.3} (target <= 1.25), max/min across k {:.3} (target <= 1.10), min of {} runs",
        report.max_ratio, report.spread, report.repeat
    );
}
