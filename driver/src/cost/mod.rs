//! `instrument cost`: what instrumenting a program will cost before building or running it
//! again (Paradyn's predicted cost model). The counts come from an earlier profile; the cost of
//! each probe kind in each mode is measured now on this machine, in the setting asked for
//! (`measure`); `model` splits every event's activations as that build and run would (left
//! out, switched off, throttled) and adds them up.

pub mod measure;
pub mod model;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use instrument_profile::ProbeCosts as Costs;
use instrument_profile::Profile;
use instrument_report::profiles;
use instrument_report::view::event_name;
use instrument_select::Selection;
use model::{Fate, Predicted, Setting, Throttle};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct CostArgs {
    /// The earlier profile whose counts to use; default: the newest *.instrument.json in
    /// INSTRUMENT_PROFILE_DIR or here
    pub profile: Option<PathBuf>,
    /// Predict for a build with this selection file (INSTRUMENT_SELECT): the routines it leaves
    /// out get no probes, nor do their loops and call statements
    #[arg(long, value_name = "FILE")]
    pub select: Option<PathBuf>,
    /// Predict for a run with this selection file (INSTRUMENT_RUNTIME_SELECT): the probes of the
    /// routines it leaves out are switched off
    #[arg(long, value_name = "FILE")]
    pub runtime_select: Option<PathBuf>,
    /// Throttling by TAU's rule with a shorter prefix (over 1000 calls at under 10 us each:
    /// counted only); default: on, as a run does
    #[arg(long, value_parser = ["on", "off"])]
    pub throttle: Option<String>,
    /// Predict for callpath recording of depth K (`all` for the whole calling context)
    #[arg(long, value_name = "K", value_parser = crate::run::parse_depth)]
    pub callpath: Option<u32>,
    /// Predict for a compensated run (its probes are serialized, and cost more)
    #[arg(long)]
    pub compensate: bool,
    /// Use the probe costs the earlier run measured (its machine, its setting) instead of
    /// measuring them now
    #[arg(long, conflicts_with_all = ["callpath", "compensate"])]
    pub costs_from_profile: bool,
    /// Events to list, costliest first
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// Print JSON for scripts (every event) instead of the table
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Prediction<'a> {
    command: &'a [String],
    costs: Costs,
    /// `this machine` (measured now) or `the profile`.
    costs_from: &'static str,
    setting: SettingReport,
    /// The earlier run's wall time less what its probes cost: the program's own time.
    base_ns: f64,
    total_ns: f64,
    percent_of_run: f64,
    /// What the earlier run's probes cost, as its profile measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_total_ns: Option<f64>,
    events: Vec<EventCost>,
}

#[derive(Serialize)]
struct SettingReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    select: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime_select: Option<String>,
    throttle: bool,
    /// Callpath depth (0: the whole calling context); absent for a flat profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    callpath: Option<u32>,
    compensate: bool,
}

#[derive(Serialize)]
struct EventCost {
    name: String,
    event: &'static str,
    #[serde(flatten)]
    predicted: Predicted,
}

pub fn run(args: &CostArgs, profile_path: PathBuf) -> Result<()> {
    let profile = profiles::load(&profile_path)?;
    let load = |path: &Option<PathBuf>| path.as_deref().map(Selection::load).transpose();
    let (build, runtime) = (load(&args.select)?, load(&args.runtime_select)?);
    let (costs, costs_from) = probe_costs(args, &profile, &profile_path)?;
    let throttle = match args.throttle.as_deref() {
        Some(choice) => choice == "on",
        None => instrument_contract::throttle::ON_BY_DEFAULT,
    };
    let setting = Setting {
        build: build.as_ref(),
        runtime: runtime.as_ref(),
        throttle: throttle.then(|| {
            let rule = instrument_contract::throttle::DEFAULT;
            Throttle { calls: rule.calls, per_call_ns: rule.per_call_ns() }
        }),
    };
    let predicted = model::predict(&profile, &costs, &setting);
    let measured_total_ns = profile.overhead.as_ref().map(|o| o.total_ns);
    let base_ns = (profile.totals.wall_ns as f64 - measured_total_ns.unwrap_or(0.0)).max(0.0);
    let total_ns: f64 = predicted.iter().map(|p| p.overhead_ns).sum();
    let shown = if args.json { predicted.len() } else { args.top };
    let prediction = Prediction {
        command: &profile.command,
        costs,
        costs_from,
        setting: SettingReport {
            select: args.select.as_ref().map(|p| p.display().to_string()),
            runtime_select: args.runtime_select.as_ref().map(|p| p.display().to_string()),
            throttle,
            callpath: args.callpath,
            compensate: args.compensate,
        },
        base_ns,
        total_ns,
        percent_of_run: if base_ns + total_ns > 0.0 { 100.0 * total_ns / (base_ns + total_ns) } else { 0.0 },
        measured_total_ns,
        events: predicted
            .into_iter()
            .take(shown)
            .map(|p| EventCost {
                name: event_name(&profile, p.id),
                event: event_kind(&profile, p.id),
                predicted: p,
            })
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&prediction)?);
    } else {
        print!("{}", render(&profile, &prediction));
    }
    Ok(())
}

/// The probe costs to predict with, and where they come from: the profile's own (with
/// --costs-from-profile), or measured now on this machine in the setting asked for.
fn probe_costs(args: &CostArgs, profile: &Profile, path: &std::path::Path) -> Result<(Costs, &'static str)> {
    if args.costs_from_profile {
        let o = profile.overhead.as_ref().with_context(|| {
            format!(
                "{} has no probe costs (it is from an older version): leave out --costs-from-profile",
                path.display()
            )
        })?;
        return Ok((o.costs, "the profile"));
    }
    let progress = progress_bar(args.json);
    let run = measure::Run { callpath: args.callpath, compensate: args.compensate };
    let costs = measure::measure(&run, &progress)?;
    progress.finish_and_clear();
    Ok((costs, "this machine"))
}

fn event_kind(profile: &Profile, id: u32) -> &'static str {
    if profile.functions.iter().any(|f| f.id == id) {
        "routine"
    } else if profile.loops.iter().any(|l| l.id == id) {
        "loop"
    } else {
        "call statement"
    }
}

fn progress_bar(hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(1);
    bar.set_style(ProgressStyle::with_template("{msg} [{bar:20}] {pos}/{len}").expect("static template"));
    bar
}

fn render(profile: &Profile, p: &Prediction) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Predicted probe cost of `{}`, from its profile (pid {}, wall {:.3} ms)",
        p.command.join(" "),
        profile.pid,
        profile.totals.wall_ns as f64 / 1e6
    );
    let (r, l) = (&p.costs.routine, &p.costs.loop_probe);
    let _ = writeln!(
        out,
        "probe costs from {} ({}): routines {:.1} ns timed, {:.1} counted, {:.1} off; loops {:.1} / {:.1} / {:.1} ns",
        p.costs_from,
        describe_run(&p.setting),
        r.measured_ns,
        r.counted_ns,
        r.off_ns,
        l.measured_ns,
        l.counted_ns,
        l.off_ns
    );
    let _ = writeln!(out, "setting: {}", describe_setting(&p.setting));
    let _ =
        write!(out, "predicted: {:.3} ms of probes, {:.1} % of the run", p.total_ns / 1e6, p.percent_of_run);
    match p.measured_total_ns {
        Some(measured) => writeln!(out, "; the earlier run's probes cost {:.3} ms", measured / 1e6),
        None => writeln!(out),
    }
    .expect("writing to a string");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>12} {:>12} {:>12}  {:<9}  Event",
        "%Cost", "Overhead ms", "Calls", "Timed", "Counted", "Off", "Probes"
    );
    let _ = writeln!(out, "{}", "-".repeat(96));
    for e in &p.events {
        let q = &e.predicted;
        let share = if p.total_ns > 0.0 { 100.0 * q.overhead_ns / p.total_ns } else { 0.0 };
        let _ = writeln!(
            out,
            "{share:>6.1} {:>12.3} {:>12} {:>12} {:>12} {:>12}  {:<9}  {}",
            q.overhead_ns / 1e6,
            q.calls,
            q.timed,
            q.counted,
            q.off,
            fate_word(q.fate),
            e.name
        );
    }
    out
}

fn fate_word(fate: Fate) -> &'static str {
    match fate {
        Fate::Measured => "measured",
        Fate::Throttled => "throttled",
        Fate::Off => "off",
        Fate::Excluded => "left out",
    }
}

fn describe_run(s: &SettingReport) -> String {
    let mode = match s.callpath {
        None => "flat".to_string(),
        Some(0) => "full callpaths".to_string(),
        Some(k) => format!("callpaths of depth {k}"),
    };
    format!("{mode}, {}", if s.compensate { "compensated" } else { "uncompensated" })
}

fn describe_setting(s: &SettingReport) -> String {
    let build = match &s.select {
        Some(file) => format!("built with {file}"),
        None => "every routine built in".to_string(),
    };
    let run = match &s.runtime_select {
        Some(file) => format!("run with {file} switching probes off"),
        None => "all probes on".to_string(),
    };
    let throttle = if s.throttle { "throttling on (TAU's rule)" } else { "throttling off" };
    format!("{build}, {run}, {throttle}")
}
