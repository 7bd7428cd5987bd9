//! `probe-context`: the in-process ground truth of what probes cost in place, and of how much
//! of it each compensation strategy removes. Every context kernel of
//! c-fixtures/bench/ground_truth/contexts.c is compiled twice into one executable (plain, and
//! instrumented by `instrument-cc`, under different symbol names); the harness alternates the
//! two in short repetitions, so the machine's drift is common to both and cancels in each
//! repetition's difference. Per context, strategy and mode (flat, callpath):
//!
//! - in place: the mean over repetitions of (instrumented - plain) / events, with its 95 %
//!   interval (what the probes cost there, all effects included). The mean, since what
//!   compensation removes is a total: this machine runs a process's probes in phases of
//!   different cost (65 and 95 ns a call on in_chain, for a second or so each), and the median
//!   took the phase most repetitions fell in for the whole run (block, callpath, four
//!   processes: median 75.8 ns, mean 84.5);
//! - removed: what compensation took out of the instrumented driver's inclusive time, per event
//!   (the profile's raw less its compensated inclusive time);
//! - error: removed against in place, in ns and in % of the in-place cost (0 is exact).
//!
//! `--truth ROUNDS` adds, after each run, what each of the context's events cost in the state the
//! run left it in, in that process, next to what compensation charged it (truth.rs).
//!
//! `cargo run --release -p instrument-tests --bin probe-context -- [--reps R] [--target-us US]
//! [--until-ns NS] [--contexts a,b] [--strategies calibrated,fenced] [--placement late]
//! [--processes N] [--json] [--truth ROUNDS]`
//! (after `cargo build --release --workspace`).

mod truth;

use clap::Parser;
use instrument_profile::Profile;
use instrument_tests::{assert_success, bin, fixtures, only_profile, profile_paths, run};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Parser)]
#[command(about = "In-place probe cost per context against what compensation removes, from plain and \
    instrumented variants alternated in one process")]
struct Args {
    /// Repetitions of each plain/instrumented pair
    #[arg(long, default_value_t = 100)]
    reps: u32,
    /// Length of one instrumented repetition, in microseconds
    #[arg(long, default_value_t = 2000)]
    target_us: u32,
    /// Measure a context again with four times the repetitions (up to 64 times --reps) while
    /// its in-place interval is wider than ±NS
    #[arg(long, value_name = "NS", default_value_t = 0.3)]
    until_ns: f64,
    /// Contexts to measure (default: all)
    #[arg(long, value_delimiter = ',', default_values_t = CONTEXTS.map(String::from))]
    contexts: Vec<String>,
    /// Compensation strategies (INSTRUMENT_COMPENSATE values)
    #[arg(long, value_delimiter = ',', default_values_t = ["calibrated".to_string(), "fenced".to_string()])]
    strategies: Vec<String>,
    /// Probe placement of the instrumented variant (early: before inlining; late: after)
    #[arg(long, default_value = "early", value_parser = ["early", "late"])]
    placement: String,
    /// Processes per context, strategy and mode: with more than one, a summary gives each
    /// one's mean error over its processes with a 95 % interval (Student's t), since one
    /// process's estimates move with its layout and the machine's phase
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    processes: u32,
    /// Builds of the harness whose instrumented kernels lie LAYOUT_STEP more bytes further
    /// each; the processes go round them (process i runs build i mod N). Where the code lies
    /// moves a kernel's in-place cost by a few ns (branch predictor and cache aliasing, which no
    /// run-time method sees: the ground truth's branchy leaf read -8 % in one layout and -5 % in
    /// another), so with one build a context's mean error is that layout's
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    layouts: u32,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Print every run's in-place estimates (the profile's compensation.in_place) to stderr
    #[arg(long)]
    estimates: bool,
    /// Extra environment for the instrumented runs (after the harness's own settings), for
    /// example INSTRUMENT_THROTTLE=1 with INSTRUMENT_THROTTLE_CALLS=1 to measure counted-only
    /// probes in place
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// After each run, ROUNDS rounds of its events forced into the state the run left them in
    /// and then switched off one at a time, children first: what each event's calls cost there,
    /// in that process, against what compensation charged them (instead of the main table,
    /// whose removed and error the forced runs would distort; null in --json)
    #[arg(long, value_name = "ROUNDS")]
    truth: Option<u32>,
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("{text:?} is not NAME=VALUE"))?;
    Ok((name.to_string(), value.to_string()))
}

const CONTEXTS: [&str; 12] = [
    "chain",
    "madd",
    "misses",
    "inlined",
    "branchy",
    "recursion",
    "in_chain",
    "block",
    "syscall",
    "nested",
    "siblings",
    "dispatch",
];

#[derive(serde::Serialize)]
struct Row {
    context: String,
    strategy: String,
    mode: &'static str,
    reps: usize,
    events_per_rep: f64,
    plain_ns_per_event: f64,
    calibrated_ns: f64,
    in_place_ns: f64,
    in_place_low_ns: f64,
    in_place_high_ns: f64,
    /// The median of the same differences (the cost of the phase most repetitions fell in), for
    /// comparison.
    in_place_median_ns: f64,
    removed_ns: f64,
    error_ns: f64,
    error_pct: f64,
    /// Attribution: the kernel's compensated exclusive time per call (every routine but the
    /// driver, counted calls estimated), and it over the plain time per event, in %. The plain time per event also holds
    /// the driver's loop, so 100 % is the upper end where that loop hides in the kernel's shadow.
    kernel_ns: f64,
    kernel_pct: f64,
    /// With `--truth`: what each event's calls cost in the state the run left it in, and what
    /// they were charged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    truth: Vec<truth::EventTruth>,
}

fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let programs = build(dir.path(), &args.placement, args.layouts);
    let (mut rows, mut summaries) = (Vec::new(), Vec::new());
    for context in &args.contexts {
        for strategy in &args.strategies {
            for mode in ["flat", "callpath"] {
                let runs: Vec<Row> = (0..args.processes as usize)
                    .map_while(|i| {
                        let program = &programs[i % programs.len()];
                        measure(&args, dir.path(), program, Case { context, strategy, mode })
                    })
                    .collect();
                if runs.is_empty() {
                    eprintln!(
                        "{context}: no event of its kernel at {} placement (the optimiser inlined it)",
                        args.placement
                    );
                    continue;
                }
                summaries.push(Summary::of(&runs));
                rows.extend(runs);
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialize"));
    } else if args.truth.is_some() {
        // Each run's truth rows went out with it; the forced runs distort the table's removed.
        let runs: Vec<(String, &[truth::EventTruth])> =
            rows.iter().map(|r| (format!("{:<10} {:<8}", r.context, r.mode), r.truth.as_slice())).collect();
        truth::summarize(&runs, mean_interval);
    } else {
        print_table(&rows, &args);
        if args.processes > 1 {
            print_summaries(&summaries);
        }
    }
}

/// One context, strategy and mode over its processes: the mean in-place cost and the mean error
/// in % with the half-width of its 95 % interval.
struct Summary {
    label: String,
    processes: usize,
    in_place_ns: f64,
    error_pct: f64,
    half_width_pct: f64,
}

impl Summary {
    fn of(runs: &[Row]) -> Summary {
        let first = &runs[0];
        let errors: Vec<f64> = runs.iter().map(|r| r.error_pct).collect();
        let (error_pct, half_width_pct) = mean_interval(&errors);
        Summary {
            label: format!("{:<10} {:<10} {:<8}", first.context, first.strategy, first.mode),
            processes: runs.len(),
            in_place_ns: runs.iter().map(|r| r.in_place_ns).sum::<f64>() / runs.len() as f64,
            error_pct,
            half_width_pct,
        }
    }
}

/// The mean of `values` and the half-width of its 95 % interval (Student's t; infinite for one
/// value).
fn mean_interval(values: &[f64]) -> (f64, f64) {
    const T975: [f64; 10] = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, f64::INFINITY);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let t = T975.get(values.len() - 2).copied().unwrap_or(2.0);
    (mean, t * (variance / n).sqrt())
}

fn print_summaries(summaries: &[Summary]) {
    println!(
        "\n{:<30} {:>9} {:>10} {:>22}",
        "context    strategy   mode", "processes", "in place", "error % [95% CI]"
    );
    for s in summaries {
        println!(
            "{} {:>9} {:>7.2} ns {:>+8.1} [{:>+6.1}, {:>+6.1}]",
            s.label,
            s.processes,
            s.in_place_ns,
            s.error_pct,
            s.error_pct - s.half_width_pct,
            s.error_pct + s.half_width_pct
        );
    }
    let within = summaries.iter().filter(|s| s.error_pct.abs() <= 5.0).count();
    let inside = summaries.iter().filter(|s| s.error_pct.abs() + s.half_width_pct <= 5.0).count();
    let clear = summaries.iter().filter(|s| s.error_pct.abs() - s.half_width_pct > 5.0).count();
    println!(
        "(mean error over the processes: {within} of {} within ±5 %, {inside} with the whole interval inside, {clear} \
         clearly outside)",
        summaries.len()
    );
}

fn print_table(rows: &[Row], args: &Args) {
    println!(
        "{:<10} {:<10} {:<8} {:>9} {:>10} {:>24} {:>10} {:>9} {:>8} {:>10} {:>7}",
        "context",
        "strategy",
        "mode",
        "plain",
        "calibrated",
        "in place [95% CI]",
        "removed",
        "error",
        "error",
        "kernel",
        "share"
    );
    for r in rows {
        println!(
            "{:<10} {:<10} {:<8} {:>6} {:>6.2} ns {:>7.2} ns {:>7.2} [{:>6.2}, {:>6.2}] ns {:>7.2} ns {:>+6.2} ns {:>+7.1} % {:>7.2} ns {:>5.0} %",
            r.context,
            r.strategy,
            r.mode,
            r.reps,
            r.plain_ns_per_event,
            r.calibrated_ns,
            r.in_place_ns,
            r.in_place_low_ns,
            r.in_place_high_ns,
            r.removed_ns,
            r.error_ns,
            r.error_pct,
            r.kernel_ns,
            r.kernel_pct
        );
    }
    println!(
        "(per event; repetitions of ~{} us, {} placement, more repetitions while an interval is wider than ±{} ns; in \
         place: mean of (instrumented - plain) per repetition with its 95 % interval; removed: what compensation \
         took out; error: removed - in place; kernel: the kernel's compensated exclusive time per call, and its share of \
         the plain time per event)",
        args.target_us, args.placement, args.until_ns
    );
}

/// Bytes of padding before the instrumented kernels of one layout more (`--layouts`). Rounded up
/// to the functions' 16-byte alignment, layouts 1 to 3 move them by 48, 80 and 128 bytes: to
/// other offsets within their 64-byte cache lines as well as to other addresses.
const LAYOUT_STEP: u32 = 40;

/// The harness with both variants of the contexts, once per layout (`--layouts`): the plain
/// kernels and the harness compiled once, the instrumented kernels of layout k `LAYOUT_STEP`
/// bytes a layout further (0: where they lie unpadded).
fn build(dir: &Path, placement: &str, layouts: u32) -> Vec<PathBuf> {
    let clang = PathBuf::from("clang-22");
    compile(dir, clang.clone(), &["-DGT_SUFFIX=_plain".into()], "contexts.c", "plain.o");
    compile(dir, clang, &[], "ground_truth.c", "harness.o");
    (0..layouts).map(|layout| build_layout(dir, placement, layout)).collect()
}

/// `build`'s program of layout `layout`: its instrumented kernels, linked with the plain ones
/// and the harness.
fn build_layout(dir: &Path, placement: &str, layout: u32) -> PathBuf {
    // Every kernel gets its events at late placement too: the small-routine rule would leave
    // most of them without any (then nothing is measured per event).
    let mut inst = vec![
        "-DGT_SUFFIX=_inst".to_string(),
        format!("--instrument-placement={placement}"),
        "--instrument-min-instructions=0".to_string(),
    ];
    if layout > 0 {
        inst.push(format!("-DGT_PAD={}", layout * LAYOUT_STEP));
    }
    let inst_object = format!("inst{layout}.o");
    compile(dir, bin("instrument-cc"), &inst, "contexts.c", &inst_object);
    let program = dir.join(format!("ground-truth{layout}"));
    let mut link = Command::new(bin("instrument-cc"));
    link.current_dir(dir).args(["harness.o", "plain.o", &inst_object, "-o"]).arg(&program);
    assert_success(&run(&mut link), "link");
    program
}

/// The ground truth's source `input` compiled at -O2 by `compiler` with `extra` into `dir/out`.
fn compile(dir: &Path, compiler: PathBuf, extra: &[String], input: &str, out: &str) {
    let mut cc = Command::new(compiler);
    cc.args(["-O2", "-c"]).args(extra).arg(fixtures().join("bench/ground_truth").join(input));
    assert_success(&run(cc.arg("-o").arg(dir.join(out))), out);
}

/// What the harness printed: n, the repetitions' (plain, instrumented) ns, and the
/// instrumented driver's calls and units.
struct Harness {
    n: f64,
    reps: Vec<(f64, f64)>,
    inst_calls: f64,
    inst_units: f64,
}

fn parse(stdout: &str) -> Harness {
    let mut h = Harness { n: 0.0, reps: Vec::new(), inst_calls: 0.0, inst_units: 0.0 };
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| words.get(i).and_then(|w| w.parse::<f64>().ok()).expect("a number");
        match words.first() {
            Some(&"context") => h.n = number(3),
            Some(&"rep") => h.reps.push((number(1), number(2))),
            Some(&"inst") => (h.inst_calls, h.inst_units) = (number(1), number(2)),
            _ => {}
        }
    }
    h
}

/// Every event the profile counted: routine calls, loop entries and call statements.
fn events(profile: &Profile) -> f64 {
    let calls: u64 = profile.functions.iter().map(|f| f.stats.calls).sum();
    let loops: u64 = profile.loops.iter().map(|l| l.stats.calls).sum();
    let sites: u64 = profile.callsites.iter().map(|c| c.stats.calls).sum();
    (calls + loops + sites) as f64
}

/// The events a unit of the kernel makes: the profile's, less the driver's own calls, over the
/// units the harness ran (events are proportional to n).
fn events_per_unit(profile: &Profile, harness: &Harness) -> f64 {
    (events(profile) - harness.inst_calls) / harness.inst_units
}

/// `measure_with` at --reps, then at four times as many repetitions while the in-place
/// interval is wider than --until-ns (each in one process: repetitions are not pooled across
/// processes, whose code layout and calibration differ).
fn measure(args: &Args, dir: &Path, program: &Path, case: Case) -> Option<Row> {
    let mut reps = args.reps;
    loop {
        let row = measure_with(args, reps, dir, program, case)?;
        let half_width = (row.in_place_ns - row.in_place_low_ns).max(row.in_place_high_ns - row.in_place_ns);
        if half_width <= args.until_ns || reps >= args.reps * 64 || args.truth.is_some() {
            return Some(row);
        }
        reps *= 4;
    }
}

/// `--estimates`: the run's units per repetition and its in-place estimates, to stderr.
fn print_estimates(context: &str, mode: &str, harness: &Harness, profile: &Profile) {
    eprintln!("{context} {mode}: n {} per repetition", harness.n);
    if let Some(o) = &profile.overhead {
        let c = &o.costs.routine;
        eprintln!(
            "{context} {mode}: calibrated pair {:.1} ns, counted {:.1}; scales: unestimated {:.3}, pathed {:.3}",
            c.measured_ns, c.counted_ns, o.unestimated_scale, o.pathed_scale
        );
    }
    if let Some(inline) = profile.compensation.as_ref().and_then(|c| c.inline_count.as_ref()) {
        eprintln!(
            "{context} {mode}: inline count {:.2} ns (charged {:.2}), bare count {:.2}, dispatch {:.2}",
            inline.calibrated_ns, inline.charged_ns, inline.bare_ns, inline.dispatch_ns
        );
    }
    for f in &profile.functions {
        let s = &f.stats;
        let removed = s.compensated.map_or(0, |c| s.inclusive_ns as i64 - c.inclusive_ns);
        eprintln!(
            "{context} {mode}: {} calls {} untimed {} inclusive {} ns, removed {} ns",
            f.name, s.calls, s.untimed_calls, s.inclusive_ns, removed
        );
    }
    for e in profile.compensation.iter().flat_map(|c| &c.in_place) {
        eprintln!("{context} {mode}: {e:?}");
    }
    for e in profile.overhead.iter().flat_map(|o| &o.in_place) {
        eprintln!("{context} {mode}: pooled at the end: {e:?}");
    }
    if let Some(i) = profile.compensation.as_ref().and_then(|c| c.inline_count.as_ref()) {
        eprintln!("{context} {mode}: inline count charged at the end: {i:?}");
    }
}

/// A context measured with one compensation strategy in one mode (flat, callpath).
#[derive(Clone, Copy)]
struct Case<'a> {
    context: &'a str,
    strategy: &'a str,
    mode: &'static str,
}

/// One run of the harness on `case` with `reps` repetitions, and a truth phase when `truth`
/// gives its arguments: its stdout and its profile.
fn run_harness(
    args: &Args,
    reps: u32,
    (dir, program): (&Path, &Path),
    Case { context, strategy, mode }: Case,
    truth: Option<&[String; 3]>,
) -> (String, Profile) {
    for old in profile_paths(dir) {
        std::fs::remove_file(old).expect("old profile removed");
    }
    let mut command = Command::new(program);
    command.args([context, &reps.to_string(), &args.target_us.to_string()]).current_dir(dir);
    command.args(truth.into_iter().flatten());
    command.env("INSTRUMENT_PROFILE_DIR", dir).env("INSTRUMENT_THROTTLE", "0");
    command.env("INSTRUMENT_COMPENSATE", strategy);
    if mode == "callpath" {
        command.env("INSTRUMENT_CALLPATH", "all");
    }
    command.envs(args.env.iter().map(|(k, v)| (k, v)));
    let output = run(&mut command);
    assert_success(&output, context);
    (String::from_utf8_lossy(&output.stdout).into_owned(), only_profile(dir))
}

/// The events `--truth` switches off for `context`, children first, from a short callpath run.
fn learn_plan(args: &Args, dir: &Path, program: &Path, case: Case) -> Option<truth::Plan> {
    let (stdout, profile) = run_harness(args, 2, (dir, program), Case { mode: "callpath", ..case }, None);
    let harness = parse(&stdout);
    let per_unit = events_per_unit(&profile, &harness);
    truth::plan(&profile, &format!("run_{}_inst", case.context), harness.inst_units, per_unit)
}

fn measure_with(args: &Args, reps: u32, dir: &Path, program: &Path, case: Case) -> Option<Row> {
    let Case { context, strategy, mode } = case;
    let plan = args.truth.and_then(|_| learn_plan(args, dir, program, case));
    let extra = plan
        .as_ref()
        .zip(args.truth)
        .map(|(plan, rounds)| truth::arguments(plan, rounds, mode == "callpath"));
    let (stdout, profile) = run_harness(args, reps, (dir, program), case, extra.as_ref());
    let harness = parse(&stdout);
    let truth = plan.as_ref().map_or_else(Vec::new, |plan| {
        truth::report(&format!("{context:<10} {mode:<8}"), plan, &truth::parse(&stdout), harness.n, &profile)
    });
    let driver_name = format!("run_{context}_inst");
    let driver = profile.functions.iter().find(|f| f.name == driver_name).expect("the instrumented driver");
    if args.estimates {
        print_estimates(context, mode, &harness, &profile);
    }
    let per_unit = plan.as_ref().map_or_else(|| events_per_unit(&profile, &harness), |p| p.events_per_unit);
    if per_unit < 0.5 {
        return None;
    }
    let per_rep = per_unit * harness.n + 1.0;
    let in_place: Vec<f64> = harness.reps.iter().map(|(plain, inst)| (inst - plain) / per_rep).collect();
    let (in_place_ns, half_width) = mean_interval(&in_place);
    let compensated = driver.stats.compensated.expect("a compensated profile").inclusive_ns as f64;
    // The truth phase's calls are in the profile, but not in the harness's units: no removed.
    let removed = if plan.is_some() {
        f64::NAN
    } else {
        (driver.stats.inclusive_ns as f64 - compensated)
            / (per_unit * harness.inst_units + harness.inst_calls)
    };
    let plain: Vec<f64> = harness.reps.iter().map(|(plain, _)| plain / per_rep).collect();
    let kernel_ns = kernel_exclusive(&profile, &driver_name);
    let plain_ns = instrument_report::experiment::interval::median(&plain).unwrap_or(0.0);
    let calibrated = profile.compensation.as_ref().map_or(0.0, |c| c.routine.inclusive_overhead_ns);
    Some(Row {
        context: context.to_string(),
        strategy: strategy.to_string(),
        mode,
        reps: in_place.len(),
        events_per_rep: per_rep,
        plain_ns_per_event: plain_ns,
        calibrated_ns: calibrated,
        in_place_ns,
        in_place_low_ns: in_place_ns - half_width,
        in_place_high_ns: in_place_ns + half_width,
        in_place_median_ns: instrument_report::experiment::interval::median(&in_place).unwrap_or(0.0),
        removed_ns: removed,
        error_ns: removed - in_place_ns,
        error_pct: (removed - in_place_ns) / in_place_ns * 100.0,
        kernel_ns,
        kernel_pct: 100.0 * kernel_ns / plain_ns,
        truth,
    })
}

/// The compensated exclusive time per call of every routine but the driver (the kernel's), its
/// counted calls estimated where they were (`--env INSTRUMENT_THROTTLE=1`).
fn kernel_exclusive(profile: &Profile, driver: &str) -> f64 {
    let kernel = profile.functions.iter().filter(|f| f.name != driver);
    let (ns, calls) = kernel.fold((0i64, 0u64), |(ns, calls), f| {
        let compensated = f.stats.compensated.map_or(0, |c| c.exclusive_ns);
        (ns + f.stats.estimated.map_or(compensated, |e| e.exclusive_ns), calls + f.stats.calls)
    });
    ns as f64 / calls.max(1) as f64
}
