//! `instrument experiment`: Malony and Shende's evaluation. Every program of a matrix is built
//! twice (MO: only `main` instrumented; PA: all routines) and run `trials` times at each level
//! (MO, PA, PA-comp, CA, CA-comp: the last three reuse the PA binary with compensation and/or
//! callpath mode switched on at run time); main's inclusive time (compensated where the level
//! says so) is compared with MO's. Every finished trial is appended to a cache, so a run killed
//! half-way resumes where it stopped; a failing build or run is recorded and the rest goes on.
//! An MPI program runs under the launcher with its ranks; every rank's main is kept, for the
//! paper's Table 2 (the high and low of the per-process minima).

pub mod matrix;
pub mod output;
pub mod stats;

use crate::layout;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use matrix::{Matrix, Program};
use stats::{Level, Trial};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Settings {
    pub matrix: Option<PathBuf>,
    pub class: String,
    pub trials: Option<u32>,
    pub out: PathBuf,
    pub levels: Vec<Level>,
    pub programs: Vec<String>,
    pub placement: Option<String>,
    pub callpath: Option<String>,
    /// INSTRUMENT_COMPENSATE for the -comp levels (on, calibrated, fenced).
    pub compensate: String,
    /// MPI ranks for every program (the default suite becomes bench-nas's MPI kernels).
    pub ranks: Option<u32>,
}

const CACHE: &str = "trials.jsonl";

pub fn run(settings: &Settings) -> Result<()> {
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
    check_launcher(&matrix)?;
    let trials = settings.trials.unwrap_or(matrix.trials).max(1);
    let placement = settings.placement.clone().unwrap_or_else(|| matrix.placement.clone());
    let callpath = settings.callpath.clone().unwrap_or_else(|| matrix.callpath.clone());
    std::fs::create_dir_all(&settings.out)
        .with_context(|| format!("cannot create {}", settings.out.display()))?;
    let out = settings.out.canonicalize()?;
    let mut done = load_cache(&out.join(CACHE))?;
    let cached = done.len();
    done.retain(|t| measured_like(&matrix, t));
    if done.len() < cached {
        println!("ignoring {} cached trial(s) measured with another number of ranks", cached - done.len());
    }
    let done_keys: HashSet<(String, Level, u32)> =
        done.iter().map(|t| (t.program.clone(), t.level, t.trial)).collect();
    let levels = &settings.levels;

    let runs: Vec<(&Program, Level, u32)> = (0..trials)
        .flat_map(|trial| {
            matrix.programs.iter().flat_map(move |p| levels.iter().map(move |&l| (p, l, trial)))
        })
        .filter(|(p, l, t)| !done_keys.contains(&(p.name.clone(), *l, *t)))
        .collect();
    let variants: Vec<bool> =
        [true, false].into_iter().filter(|&mo| levels.iter().any(|l| l.main_only() == mo)).collect();
    let bar = ProgressBar::new((matrix.programs.len() * variants.len() + runs.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:<28} [{bar:30}] {pos}/{len} eta {eta}")
            .expect("static")
            .progress_chars("=> "),
    );
    if !done.is_empty() {
        bar.println(format!("resuming: {} trial(s) already in {}", done.len(), out.join(CACHE).display()));
    }
    let select = out.join("main-only.txt");
    std::fs::write(
        &select,
        "# instrument experiment: MO instruments main only\nBEGIN_INCLUDE_LIST\nmain\nEND_INCLUDE_LIST\n",
    )?;
    let mut broken: HashSet<(String, bool)> = HashSet::new();
    for program in &matrix.programs {
        for &main_only in &variants {
            bar.set_message(format!("build {} {}", program.name, if main_only { "MO" } else { "PA" }));
            if let Err(e) = build(&matrix, program, &out, main_only, &placement, &select) {
                bar.println(format!("{}: build failed: {e:#}", program.name));
                broken.insert((program.name.clone(), main_only));
            }
            bar.inc(1);
        }
    }
    let mut cache = std::fs::OpenOptions::new().create(true).append(true).open(out.join(CACHE))?;
    for (program, level, trial) in runs {
        bar.set_message(format!("{} {} #{}", program.name, level.name(), trial + 1));
        let result = if broken.contains(&(program.name.clone(), level.main_only())) {
            Err(anyhow::anyhow!("the build failed"))
        } else {
            run_trial(&matrix, program, level, &out, &callpath, &settings.compensate)
        };
        let record = match result {
            Ok(ranks) => Trial {
                program: program.name.clone(),
                level,
                trial,
                main_ns: ranks.first().copied(),
                ranks_ns: if ranks.len() > 1 { ranks } else { Vec::new() },
                error: None,
            },
            Err(e) => {
                bar.println(format!("{} {} trial {}: {e:#}", program.name, level.name(), trial + 1));
                Trial {
                    program: program.name.clone(),
                    level,
                    trial,
                    main_ns: None,
                    ranks_ns: Vec::new(),
                    error: Some(format!("{e:#}")),
                }
            }
        };
        writeln!(cache, "{}", serde_json::to_string(&record)?)?;
        cache.flush()?;
        done.push(record);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let names: Vec<String> = matrix.programs.iter().map(|p| p.name.clone()).collect();
    let summaries = stats::summarize(&names, levels, &done);
    print!("{}", output::table(&summaries, false));
    if summaries.iter().any(|s| s.ranks.is_none()) {
        println!(
            "(noise: two standard errors of the mean's error, from the trials' spread; a mean error inside it is not distinguishable from run-to-run variation)"
        );
    }
    if summaries.iter().any(|s| s.ranks.is_some()) {
        println!(
            "(MPI programs: each rank's main less its MPI_Init and MPI_Finalize, the launcher's start-up and tear-down)"
        );
    }
    std::fs::write(out.join("results.md"), output::table(&summaries, true))?;
    std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&summaries)?)?;
    output::csv(&summaries, &out.join("results.csv"))?;
    std::fs::write(out.join("errors.svg"), output::svg(&summaries))?;
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
    if crate::toolchain::search_path(Path::new(launcher)).is_none() {
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

fn build(
    matrix: &Matrix,
    program: &Program,
    out: &Path,
    main_only: bool,
    placement: &str,
    select: &Path,
) -> Result<()> {
    let dir = build_dir(out, program, main_only);
    std::fs::create_dir_all(&dir)?;
    let mut flags = format!("--instrument-placement={placement}");
    if main_only {
        flags.push_str(&format!(" --instrument-select={}", select.display()));
    }
    let command = program
        .build
        .replace("{build}", &dir.display().to_string())
        .replace("{cc}", &wrapper("instrument-cc", &flags)?)
        .replace("{cxx}", &wrapper("instrument-c++", &flags)?)
        .replace("{fc}", &wrapper("instrument-fc", &flags)?);
    let output = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(matrix.directory(program))
        .output()
        .with_context(|| format!("cannot run {command}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        anyhow::bail!(
            "`{command}` exited with {}: {}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        );
    }
    Ok(())
}

/// Runs one trial and returns main's inclusive time (compensated at the -comp levels), one
/// per rank.
fn run_trial(
    matrix: &Matrix,
    program: &Program,
    level: Level,
    out: &Path,
    callpath: &str,
    compensate: &str,
) -> Result<Vec<f64>> {
    let build = build_dir(out, program, level.main_only());
    let profiles = tempfile::Builder::new().prefix("trial").tempdir_in(out)?;
    let command = matrix.run_command(program).replace("{build}", &build.display().to_string());
    let mut run = Command::new("sh");
    run.arg("-c")
        .arg(&command)
        .current_dir(matrix.directory(program))
        .env("INSTRUMENT_PROFILE_DIR", profiles.path());
    run.env_remove("INSTRUMENT_CALLPATH").env_remove("INSTRUMENT_COMPENSATE");
    // Open MPI's mpirun refuses root and more ranks than cores unless told.
    run.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    run.envs(&program.env);
    // The paper's levels instrument every routine fully.
    run.env("INSTRUMENT_THROTTLE", "0");
    if level.callpaths() {
        run.env("INSTRUMENT_CALLPATH", callpath);
    }
    if level.compensated() {
        run.env("INSTRUMENT_COMPENSATE", compensate);
    }
    let output = run.output().with_context(|| format!("cannot run {command}"))?;
    if !output.status.success() {
        anyhow::bail!("`{command}` exited with {}", output.status);
    }
    let ranks = matrix.ranks(program);
    if ranks <= 1 {
        let profile = crate::profiles::load(&crate::profiles::newest(profiles.path())?)?;
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
    let time = match (level.compensated(), main.compensated) {
        (true, Some(c)) => c.inclusive_ns as f64,
        (true, None) => anyhow::bail!("the profile is not compensated"),
        (false, _) => main.inclusive_ns as f64,
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
        let profile = crate::profiles::load(&path)?;
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
