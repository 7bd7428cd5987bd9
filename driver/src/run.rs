//! `instrument run`: runs an instrumented program with measurement settings given as flags
//! instead of environment variables, and says where its profile went.

use anyhow::{bail, Context, Result};
use instrument_contract::settings;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};

pub struct RunOptions {
    /// Callpath depth: None = flat, Some(0) = unlimited, Some(k).
    pub callpath: Option<u32>,
    pub compensate: bool,
    pub profile_dir: Option<PathBuf>,
    /// Sample time histograms of this many of the busiest events into the profile.
    pub timeline: Option<usize>,
    pub program: Vec<String>,
}

/// `all`/`unlimited` (0 internally) or a depth of at least 1.
pub fn parse_depth(text: &str) -> Result<u32, String> {
    match text {
        "all" | "unlimited" => Ok(0),
        _ => match text.parse::<u32>() {
            Ok(0) | Err(_) => Err(format!("{text:?} is not a callpath depth (1, 2, ... or all)")),
            Ok(k) => Ok(k),
        },
    }
}

/// Runs the program and returns its exit code (the caller exits with it).
pub fn run(options: &RunOptions) -> Result<i32> {
    let Some((program, args)) = options.program.split_first() else {
        bail!("no program given: instrument run [OPTIONS] -- PROGRAM [ARGS...]");
    };
    let mut command = Command::new(program);
    command.args(args);
    if let Some(k) = options.callpath {
        command.env(settings::CALLPATH.name, if k == 0 { "all".to_string() } else { k.to_string() });
    }
    if options.compensate {
        command.env(settings::COMPENSATE.name, "1");
    }
    if let Some(dir) = &options.profile_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        command.env(settings::PROFILE_DIR.name, dir);
    }
    command.env(settings::VERBOSE.name, "1");
    let status = match options.timeline {
        None => command.status().with_context(|| format!("cannot run {program}"))?,
        Some(keep) => with_timeline(&mut command, program, options.profile_dir.clone(), keep)?,
    };
    Ok(instrument_toolchain::link::exit_code(status))
}

/// Runs the program while sampling its time histograms, then adds them to its profile.
fn with_timeline(
    command: &mut Command,
    program: &str,
    dir: Option<PathBuf>,
    keep: usize,
) -> Result<ExitStatus> {
    let mut child = command.spawn().with_context(|| format!("cannot run {program}"))?;
    // Like `time`: an interrupt from the terminal ends the program, which writes its profile;
    // the sampler waits for that to add the timeline.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let sampled = crate::live::sampler::sample(&mut child, keep);
    unsafe { libc::signal(libc::SIGINT, previous) };
    let (status, timeline) = sampled?;
    let Some(timeline) = timeline else {
        eprintln!("instrument: no timeline: {program} showed no live segment (not instrumented, or INSTRUMENT_LIVE=0)");
        return Ok(status);
    };
    let dir = dir.or_else(|| settings::PROFILE_DIR.path()).unwrap_or_else(|| PathBuf::from("."));
    let (series, buckets, width) = (
        timeline.series.len() / 2,
        timeline.series.first().map_or(0, |s| s.values.len()),
        timeline.bucket_ns,
    );
    match crate::live::sampler::add_to_profile(&dir, child.id(), timeline) {
        Ok(path) => eprintln!(
            "instrument: timeline of {series} events ({buckets} buckets of {} ms) added to {}",
            width as f64 / 1e6,
            path.display()
        ),
        Err(e) => eprintln!("instrument: no timeline: {e:#}"),
    }
    Ok(status)
}
