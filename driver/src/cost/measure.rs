//! Probe costs measured now, on this machine, in the setting a prediction is for. Every
//! instrumented program's runtime measures its probes at start-up and writes the costs into
//! its profile, so a program with nothing but `main`, built with `instrument-cc` and run a few
//! times, tells them; the cheapest run of each cost is kept (noise only adds).

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;
use instrument_contract::settings;
use instrument_profile::{PairCosts, ProbeCosts as Costs};
use instrument_report::profiles;
use instrument_toolchain::layout;
use std::path::Path;
use std::process::Command;

const SOURCE: &str = include_str!("../../../c-fixtures/cost/calibrate.c");
const RUNS: u64 = 5;

/// The run setting the costs are measured in.
pub struct Run {
    /// Callpath depth: None = flat, Some(0) = unlimited.
    pub callpath: Option<u32>,
    pub compensate: bool,
}

pub fn measure(run: &Run, progress: &ProgressBar) -> Result<Costs> {
    let work = tempfile::Builder::new().prefix("instrument-cost").tempdir()?;
    let dir = work.path();
    progress.set_length(RUNS + 1);
    progress.set_message("building a calibration program");
    let program = build(dir)?;
    progress.inc(1);
    progress.set_message("measuring the probes");
    let mut best: Option<Costs> = None;
    for _ in 0..RUNS {
        let costs = run_once(&program, dir, run)?;
        best = Some(best.map_or(costs, |b| cheapest(&b, &costs)));
        progress.inc(1);
    }
    best.context("no calibration run")
}

fn build(dir: &Path) -> Result<std::path::PathBuf> {
    let source = dir.join("calibrate.c");
    std::fs::write(&source, SOURCE)?;
    let program = dir.join("calibrate");
    let cc = layout::sibling("instrument-cc")?;
    let output = Command::new(&cc)
        .args(["-O2", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .with_context(|| format!("cannot run {}", cc.display()))?;
    if !output.status.success() {
        bail!(
            "cannot build the calibration program with instrument-cc:\n{}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    Ok(program)
}

fn run_once(program: &Path, dir: &Path, run: &Run) -> Result<Costs> {
    let profiles_dir = tempfile::tempdir_in(dir)?;
    let mut command = Command::new(program);
    command.env(settings::PROFILE_DIR.name, profiles_dir.path());
    command.env(settings::COMPENSATE.name, if run.compensate { "1" } else { "0" });
    command.env_remove(settings::VERBOSE.name);
    match run.callpath {
        None => command.env_remove(settings::CALLPATH.name),
        Some(0) => command.env(settings::CALLPATH.name, "all"),
        Some(k) => command.env(settings::CALLPATH.name, k.to_string()),
    };
    let status = command.status().context("cannot run the calibration program")?;
    if !status.success() {
        bail!("the calibration program failed ({status})");
    }
    let profile = profiles::load(&profiles::newest(profiles_dir.path())?)?;
    let o = profile.overhead.context("the calibration program's profile has no probe costs")?;
    Ok(o.costs)
}

fn cheapest(a: &Costs, b: &Costs) -> Costs {
    let min = |x: &PairCosts, y: &PairCosts| PairCosts {
        measured_ns: x.measured_ns.min(y.measured_ns),
        counted_ns: x.counted_ns.min(y.counted_ns),
        off_ns: x.off_ns.min(y.off_ns),
    };
    Costs { routine: min(&a.routine, &b.routine), loop_probe: min(&a.loop_probe, &b.loop_probe) }
}
