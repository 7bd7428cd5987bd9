//! `instrument experiment`: Malony and Shende's evaluation. Every program of a matrix is built
//! twice (MO: only `main` instrumented; PA: all routines) and run in rounds: each round runs
//! every level once in a fresh random order (MO, PA-off, PA, PA-comp, CA, CA-comp: all but MO
//! reuse the PA binary with probes switched off, compensation or callpath mode set at run
//! time), each trial after the noise control (`control`); main's inclusive time (compensated
//! where the level says so) is compared with MO's, as the paper's min and mean and as the
//! median of per-round errors with its interval (`paired`). `--until` adds rounds until every
//! interval is narrow enough or the budget is spent. Every finished trial is appended to a
//! cache, so a run killed half-way resumes with whole rounds; a failing build or run is
//! recorded (its reason on stderr and in the JSON) and the rest goes on.
//! An MPI program runs under the launcher with its ranks; every rank's main is kept, for the
//! paper's Table 2 (the high and low of the per-process minima).

pub mod conditions;
mod control;
pub use instrument_report::experiment::{interval, output, results};
pub mod matrix;
pub mod paired;
pub mod rounds;
pub mod stats;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use instrument_contract::settings;
use instrument_toolchain::layout;
use matrix::{Matrix, Program};
use results::{Level, ProgramSummary, Trial};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Settings {
    pub matrix: Option<PathBuf>,
    pub class: String,
    /// Rounds to run at least (each runs every level of every program once).
    pub rounds: Option<u32>,
    /// Keep adding rounds until every interval's half-width is at most this many %.
    pub until: Option<f64>,
    /// Wall-time limit for the whole run (default with `until`: `DEFAULT_BUDGET`).
    pub budget: Option<Duration>,
    pub out: PathBuf,
    pub levels: Vec<Level>,
    pub programs: Vec<String>,
    pub placement: Option<String>,
    pub callpath: Option<String>,
    /// INSTRUMENT_COMPENSATE for the -comp levels (on, calibrated, fenced).
    pub compensate: String,
    /// MPI ranks for every program (the default suite becomes bench-nas's MPI kernels).
    pub ranks: Option<u32>,
    /// Loop alignment in bytes for the C and C++ compiles of every build (0: the compiler's).
    pub align_loops: u32,
    /// Run the instrumented levels with the default throttling (TAU's rule) instead of timing
    /// every routine fully, as the paper's levels do.
    pub throttle: bool,
}

const CACHE: &str = "trials.jsonl";
/// The budget of `--until` when none is given.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(3600);
/// No program gets more rounds than this, whatever `--until` asks.
const MAX_ROUNDS: u32 = 1000;

/// What every trial of a run needs.
struct Runner<'a> {
    matrix: &'a Matrix,
    out: PathBuf,
    levels: &'a [Level],
    callpath: String,
    compensate: &'a str,
    /// Throttling on in the instrumented levels (`Settings::throttle`).
    throttle: bool,
    /// The selection that keeps only main: MO's build, PA-off's run-time switch.
    main_only: PathBuf,
    /// Builds that failed: (program, main-only variant).
    broken: HashSet<(String, bool)>,
    bar: ProgressBar,
}

impl Runner<'_> {
    /// A line for the user: above the progress bar on a terminal, on stderr otherwise (where
    /// the hidden bar would swallow it).
    fn say(&self, line: String) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}

pub fn run(settings: &Settings) -> Result<()> {
    let matrix = load_matrix(settings)?;
    check_launcher(&matrix)?;
    let rounds = settings.rounds.unwrap_or(matrix.trials).max(1);
    let placement = settings.placement.clone().unwrap_or_else(|| matrix.placement.clone());
    std::fs::create_dir_all(&settings.out)
        .with_context(|| format!("cannot create {}", settings.out.display()))?;
    let out = settings.out.canonicalize()?;
    let callpath = settings.callpath.clone().unwrap_or_else(|| matrix.callpath.clone());
    let conditions = conditions::describe(
        &placement,
        &settings.compensate,
        &callpath,
        settings.throttle,
        settings.align_loops,
    );
    conditions::check(&out, &conditions, out.join(CACHE).is_file())?;
    let mut done = resume(&matrix, &out, &settings.levels)?;
    let main_only = out.join("main-only.txt");
    std::fs::write(
        &main_only,
        "# instrument experiment: MO instruments main only\nBEGIN_INCLUDE_LIST\nmain\nEND_INCLUDE_LIST\n",
    )?;
    let mut runner = Runner {
        matrix: &matrix,
        out: out.clone(),
        levels: &settings.levels,
        callpath,
        compensate: &settings.compensate,
        throttle: settings.throttle,
        main_only,
        broken: HashSet::new(),
        bar: progress_bar(&matrix, settings, rounds, &done),
    };
    if !done.is_empty() {
        runner.say(format!("resuming: {} trial(s) already in {}", done.len(), out.join(CACHE).display()));
    }
    build_all(&mut runner, &BuildOptions { placement: &placement, align_loops: settings.align_loops });
    let budget = settings.budget.or(settings.until.map(|_| DEFAULT_BUDGET));
    let unfinished = run_rounds(&runner, &mut done, rounds, settings.until, budget)?;
    runner.bar.finish_and_clear();
    let names: Vec<String> = matrix.programs.iter().map(|p| p.name.clone()).collect();
    let summaries = stats::summarize(&names, &settings.levels, &done);
    print_results(&summaries, &done, settings.until, unfinished)?;
    write_results(&summaries, &out)
}

fn load_matrix(settings: &Settings) -> Result<Matrix> {
    let mut matrix = match &settings.matrix {
        Some(path) => Matrix::load(path)?,
        None => Matrix::bench_nas(&layout::bench_nas()?, &settings.class, settings.ranks.unwrap_or(1))?,
    };
    if let Some(ranks) = settings.ranks {
        anyhow::ensure!(ranks >= 1, "--ranks must be at least 1");
        matrix.ranks = ranks;
        matrix.programs.iter_mut().for_each(|p| p.ranks = None);
    }
    if !settings.programs.is_empty() {
        matrix.programs.retain(|p| {
            settings.programs.iter().any(|n| {
                p.name.eq_ignore_ascii_case(n)
                    || p.name.split(['.', '-']).next().is_some_and(|k| k.eq_ignore_ascii_case(n))
            })
        });
        if matrix.programs.is_empty() {
            anyhow::bail!("no program of the matrix matches {:?}", settings.programs);
        }
    }
    Ok(matrix)
}

/// The cached trials worth keeping: measured with today's ranks, in whole rounds. The cache
/// is rewritten without the others, so that it only ever holds whole rounds.
fn resume(matrix: &Matrix, out: &Path, levels: &[Level]) -> Result<Vec<Trial>> {
    let path = out.join(CACHE);
    let mut done = load_cache(&path)?;
    let cached = done.len();
    done.retain(|t| measured_like(matrix, t));
    if done.len() < cached {
        println!("ignoring {} cached trial(s) measured with another number of ranks", cached - done.len());
    }
    let partial = rounds::drop_partial(&mut done, levels);
    if partial > 0 {
        println!("dropping {partial} trial(s) of interrupted rounds: those rounds run again whole");
    }
    if done.len() < cached {
        let mut text = String::new();
        for t in &done {
            text.push_str(&serde_json::to_string(t)?);
            text.push('\n');
        }
        let temp = out.join(format!(".{CACHE}.tmp"));
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, &path).with_context(|| format!("cannot rewrite {}", path.display()))?;
    }
    Ok(done)
}

fn progress_bar(matrix: &Matrix, settings: &Settings, rounds: u32, done: &[Trial]) -> ProgressBar {
    let variants =
        [true, false].iter().filter(|&&mo| settings.levels.iter().any(|l| l.main_only() == mo)).count();
    let runs = matrix.programs.len() * settings.levels.len() * rounds as usize;
    let bar = ProgressBar::new((matrix.programs.len() * variants + runs.saturating_sub(done.len())) as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:<28} [{bar:30}] {pos}/{len} eta {eta}")
            .expect("static")
            .progress_chars("=> "),
    );
    bar
}

fn build_all(runner: &mut Runner, options: &BuildOptions) {
    for program in &runner.matrix.programs {
        for main_only in [true, false] {
            if !runner.levels.iter().any(|l| l.main_only() == main_only) {
                continue;
            }
            runner.bar.set_message(format!("build {} {}", program.name, if main_only { "MO" } else { "PA" }));
            if let Err(e) = build(runner.matrix, program, &runner.out, main_only, options, &runner.main_only)
            {
                runner.say(format!("{}: build failed: {e:#}", program.name));
                runner.broken.insert((program.name.clone(), main_only));
            }
            runner.bar.inc(1);
        }
    }
}

/// Runs rounds until every program has `rounds` of them and, with `until`, every interval is
/// that narrow, or the budget is spent. Returns whether rounds were cut short by the budget.
fn run_rounds(
    runner: &Runner,
    done: &mut Vec<Trial>,
    rounds: u32,
    until: Option<f64>,
    budget: Option<Duration>,
) -> Result<bool> {
    let deadline = budget.map(|b| Instant::now() + b);
    let mut cache = std::fs::OpenOptions::new().create(true).append(true).open(runner.out.join(CACHE))?;
    let names: Vec<String> = runner.matrix.programs.iter().map(|p| p.name.clone()).collect();
    for round in 0..MAX_ROUNDS {
        let summaries = stats::summarize(&names, runner.levels, done);
        let whole = rounds::complete(done, runner.levels);
        let wanted: Vec<&Program> = runner
            .matrix
            .programs
            .iter()
            .zip(&summaries)
            .filter(|(_, s)| round < rounds || until.is_some_and(|w| !unresolved(s, w).is_empty()))
            .map(|(p, _)| p)
            .collect();
        if wanted.is_empty() {
            return Ok(false);
        }
        for program in wanted {
            if whole.contains(&(program.name.clone(), round)) {
                continue;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(true);
            }
            if round >= rounds {
                runner.bar.inc_length(runner.levels.len() as u64);
            }
            run_round(runner, program, round, done, &mut cache)?;
        }
    }
    Ok(false)
}

/// The cells of `summary` whose interval is still wider than `width` % (or has too few
/// rounds for one), with their half-widths; levels that never ran successfully are left out.
pub fn unresolved(summary: &ProgramSummary, width: f64) -> Vec<(Level, Option<f64>)> {
    summary
        .cells
        .iter()
        .filter(|(level, cell)| *level != Level::Mo && cell.is_some())
        .filter_map(|(level, cell)| {
            let shown = cell.as_ref()?.vs_mo.shown(summary.normalised).map(|i| i.half_width());
            (shown.is_none_or(|w| w > width)).then_some((*level, shown))
        })
        .collect()
}

/// One round of `program`: every level once, in the round's order, each after the control.
fn run_round(
    runner: &Runner,
    program: &Program,
    round: u32,
    done: &mut Vec<Trial>,
    cache: &mut std::fs::File,
) -> Result<()> {
    for level in rounds::order(&program.name, round, runner.levels) {
        runner.bar.set_message(format!("{} {} round {}", program.name, level.name(), round + 1));
        let control_ns = Some(control::run());
        let result = if runner.broken.contains(&(program.name.clone(), level.main_only())) {
            Err(anyhow::anyhow!("the build failed"))
        } else {
            run_trial(runner, program, level)
        };
        let mut record = Trial {
            program: program.name.clone(),
            level,
            trial: round,
            main_ns: None,
            ranks_ns: Vec::new(),
            error: None,
            control_ns,
        };
        match result {
            Ok(ranks) => {
                record.main_ns = ranks.first().copied();
                record.ranks_ns = if ranks.len() > 1 { ranks } else { Vec::new() };
            }
            Err(e) => {
                runner.say(format!("{} {} round {}: {e:#}", program.name, level.name(), round + 1));
                record.error = Some(format!("{e:#}"));
            }
        }
        writeln!(cache, "{}", serde_json::to_string(&record)?)?;
        cache.flush()?;
        done.push(record);
        runner.bar.inc(1);
    }
    Ok(())
}

fn print_results(summaries: &[ProgramSummary], done: &[Trial], until: Option<f64>, cut: bool) -> Result<()> {
    print!("{}", output::table(summaries, false));
    for note in output::notes(summaries, done) {
        println!("{note}");
    }
    if let Some(width) = until {
        let missing: Vec<String> = summaries
            .iter()
            .flat_map(|s| {
                unresolved(s, width).into_iter().map(move |(level, w)| match w {
                    Some(w) => format!("{} {} (±{w:.2} %)", s.program, level.name()),
                    None => format!("{} {} (too few rounds for an interval)", s.program, level.name()),
                })
            })
            .collect();
        if missing.is_empty() {
            println!("every interval is within ±{width} %");
        } else {
            let why = if cut { "the budget ran out" } else { "the round limit was reached" };
            println!("{why} before these reached ±{width} %: {}", missing.join(", "));
        }
    }
    Ok(())
}

fn write_results(summaries: &[ProgramSummary], out: &Path) -> Result<()> {
    std::fs::write(out.join("results.md"), output::table(summaries, true))?;
    std::fs::write(out.join("results.json"), serde_json::to_string_pretty(summaries)?)?;
    output::csv(summaries, &out.join("results.csv"))?;
    std::fs::write(out.join("errors.svg"), output::svg(summaries))?;
    println!(
        "\nwritten: {0}/results.md, results.csv, results.json, errors.svg ({0}/{CACHE} holds every trial)",
        out.display()
    );
    Ok(())
}

/// Whether a cached trial was measured with the ranks its program runs with now (failed
/// trials and programs no longer in the matrix are kept as they are).
fn measured_like(matrix: &Matrix, trial: &Trial) -> bool {
    let Some(program) = matrix.programs.iter().find(|p| p.name == trial.program) else { return true };
    let ranks = matrix.ranks(program) as usize;
    trial.error.is_some() || trial.ranks_ns.len() == if ranks > 1 { ranks } else { 0 }
}

/// Fails at once, instead of at every trial, when MPI programs need a launcher that is not
/// installed.
fn check_launcher(matrix: &Matrix) -> Result<()> {
    if !matrix.programs.iter().any(|p| matrix.ranks(p) > 1) {
        return Ok(());
    }
    let launcher = matrix.launcher.split_whitespace().next().unwrap_or_default();
    if instrument_toolchain::toolchain::search_path(Path::new(launcher)).is_none() {
        anyhow::bail!(
            "the MPI launcher `{launcher}` is not on PATH (install Open MPI: apt-get install openmpi-bin \
             libopenmpi-dev, or set `launcher` in the matrix)"
        );
    }
    Ok(())
}

fn load_cache(path: &Path) -> Result<Vec<Trial>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn build_dir(out: &Path, program: &Program, main_only: bool) -> PathBuf {
    out.join("build").join(program.name.replace('/', "_")).join(if main_only { "MO" } else { "PA" })
}

fn wrapper(name: &str, flags: &str) -> Result<String> {
    Ok(format!("{} {flags}", layout::sibling(name)?.display()).trim_end().to_string())
}

/// How every level's program is built.
struct BuildOptions<'a> {
    placement: &'a str,
    /// Loops aligned to this many bytes in the C and C++ compiles (clang's -falign-loops; flang
    /// has no such flag), 0 for the compiler's own choice. Where a hot loop starts in a cache
    /// line changes with everything before it in the binary, so MO and PA would otherwise differ
    /// by layout as well as by probes: FT.W's fftz2 loop ran some 60 % slower at one offset than
    /// at another, identical code and data, and PA-off read +15.9 % against MO, -1.7 % aligned.
    align_loops: u32,
}

fn build(
    matrix: &Matrix,
    program: &Program,
    out: &Path,
    main_only: bool,
    options: &BuildOptions,
    select: &Path,
) -> Result<()> {
    let dir = build_dir(out, program, main_only);
    std::fs::create_dir_all(&dir)?;
    let command = build_command(program, &dir, main_only, options, select)?;
    let output = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(matrix.directory(program))
        .output()
        .with_context(|| format!("cannot run {command}"))?;
    if !output.status.success() {
        anyhow::bail!(failure(&command, &output));
    }
    Ok(())
}

/// The matrix's build command for `program` with its placeholders filled in: the build
/// directory and the wrappers with the level's flags.
fn build_command(
    program: &Program,
    dir: &Path,
    main_only: bool,
    options: &BuildOptions,
    select: &Path,
) -> Result<String> {
    let (c_flags, fortran_flags) = level_flags(main_only, options, select);
    Ok(program
        .build
        .replace("{build}", &dir.display().to_string())
        .replace("{cc}", &wrapper("instrument-cc", &c_flags)?)
        .replace("{cxx}", &wrapper("instrument-c++", &c_flags)?)
        .replace("{fc}", &wrapper("instrument-fc", &fortran_flags)?))
}

/// The wrappers' flags for a level's build, (C and C++, Fortran): the placement, main only for
/// MO, and the loop alignment where the compiler has the flag.
fn level_flags(main_only: bool, options: &BuildOptions, select: &Path) -> (String, String) {
    let mut flags = format!("--instrument-placement={}", options.placement);
    if main_only {
        flags.push_str(&format!(" --instrument-select={}", select.display()));
    }
    let c_flags = match options.align_loops {
        0 => flags.clone(),
        bytes => format!("{flags} -falign-loops={bytes}"),
    };
    (c_flags, flags)
}

/// Why `command` failed: its status and the last lines of its stderr.
fn failure(command: &str, output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    format!("`{command}` exited with {}: {}", output.status, tail.join(" / "))
}

/// Runs one trial and returns main's inclusive time (compensated at the -comp levels), one
/// per rank.
fn run_trial(runner: &Runner, program: &Program, level: Level) -> Result<Vec<f64>> {
    let matrix = runner.matrix;
    let build = build_dir(&runner.out, program, level.main_only());
    let profiles = tempfile::Builder::new().prefix("trial").tempdir_in(&runner.out)?;
    let command = matrix.run_command(program).replace("{build}", &build.display().to_string());
    let mut run = Command::new("sh");
    run.arg("-c")
        .arg(&command)
        .current_dir(matrix.directory(program))
        .env(settings::PROFILE_DIR.name, profiles.path());
    for var in [settings::CALLPATH.name, settings::COMPENSATE.name, settings::RUNTIME_SELECT.name] {
        run.env_remove(var);
    }
    // Open MPI's mpirun refuses root and more ranks than cores unless told.
    run.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    run.envs(&program.env);
    // The paper's levels instrument every routine fully, unless throttling is asked for.
    run.env(settings::THROTTLE.name, if runner.throttle { "1" } else { "0" });
    if level.callpaths() {
        run.env(settings::CALLPATH.name, &runner.callpath);
    }
    if level.compensated() {
        run.env(settings::COMPENSATE.name, runner.compensate);
    }
    if level.switched_off() {
        run.env(settings::RUNTIME_SELECT.name, &runner.main_only);
    }
    let output = run.output().with_context(|| format!("cannot run {command}"))?;
    if !output.status.success() {
        anyhow::bail!(failure(&command, &output));
    }
    let ranks = matrix.ranks(program);
    if ranks <= 1 {
        let profile =
            instrument_report::profiles::load(&instrument_report::profiles::newest(profiles.path())?)?;
        return Ok(vec![main_time(&profile, level)?]);
    }
    rank_times(profiles.path(), ranks, level)
}

/// Main's time in one profile, compensated at the -comp levels. An MPI program's time in
/// MPI_Init and MPI_Finalize is left out: it is the launcher's start-up and tear-down (the
/// ranks meet there), which varies by tens of milliseconds from run to run whatever is
/// measured.
fn main_time(profile: &instrument_profile::Profile, level: Level) -> Result<f64> {
    let main = profile.functions.iter().find(|f| f.name == "main").context("the profile has no main")?;
    let time = match (level.compensated(), main.stats.compensated) {
        (true, Some(c)) => c.inclusive_ns as f64,
        (true, None) => anyhow::bail!("the profile is not compensated"),
        (false, _) => main.stats.inclusive_ns as f64,
    };
    let start_up: u64 = profile
        .communication
        .iter()
        .filter(|c| matches!(c.operation.as_str(), "MPI_Init" | "MPI_Finalize"))
        .map(|c| c.time_ns)
        .sum();
    Ok(time - start_up as f64)
}

/// Main's time on every rank of an MPI run, by rank.
fn rank_times(dir: &Path, ranks: u32, level: Level) -> Result<Vec<f64>> {
    let mut times = vec![None; ranks as usize];
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !path.to_string_lossy().ends_with(".instrument.json") {
            continue;
        }
        let profile = instrument_report::profiles::load(&path)?;
        let rank = profile.mpi.as_ref().map(|m| m.rank).with_context(|| {
            format!("{} has no MPI rank (is the program an MPI program?)", path.display())
        })?;
        let slot = times.get_mut(rank as usize).with_context(|| format!("rank {rank} of {ranks}?"))?;
        *slot = Some(main_time(&profile, level)?);
    }
    times
        .iter()
        .enumerate()
        .map(|(rank, t)| t.with_context(|| format!("no profile from rank {rank} of {ranks}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_and_cpp_compiles_get_the_loop_alignment_and_fortran_does_not() {
        let aligned = BuildOptions { placement: "early", align_loops: 64 };
        let (c, fortran) = level_flags(true, &aligned, Path::new("/o/main-only.txt"));
        assert_eq!(c, "--instrument-placement=early --instrument-select=/o/main-only.txt -falign-loops=64");
        assert_eq!(fortran, "--instrument-placement=early --instrument-select=/o/main-only.txt");
        let unaligned = BuildOptions { placement: "late", align_loops: 0 };
        let (c, fortran) = level_flags(false, &unaligned, Path::new("/s"));
        assert_eq!(
            (c.as_str(), fortran.as_str()),
            ("--instrument-placement=late", "--instrument-placement=late")
        );
    }
}
