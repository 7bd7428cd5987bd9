//! `instrument run`: runs an instrumented program with measurement settings given as flags
//! instead of environment variables, and says where its profile went.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;

pub struct RunOptions {
    /// Callpath depth: None = flat, Some(0) = unlimited, Some(k).
    pub callpath: Option<u32>,
    pub compensate: bool,
    pub profile_dir: Option<PathBuf>,
    pub program: Vec<String>,
}

/// Runs the program and returns its exit code (the caller exits with it).
pub fn run(options: &RunOptions) -> Result<i32> {
    let Some((program, args)) = options.program.split_first() else {
        bail!("no program given: instrument run [OPTIONS] -- PROGRAM [ARGS...]");
    };
    let mut command = Command::new(program);
    command.args(args);
    if let Some(k) = options.callpath {
        command.env("INSTRUMENT_CALLPATH", if k == 0 { "all".to_string() } else { k.to_string() });
    }
    if options.compensate {
        command.env("INSTRUMENT_COMPENSATE", "1");
    }
    if let Some(dir) = &options.profile_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        command.env("INSTRUMENT_PROFILE_DIR", dir);
    }
    command.env("INSTRUMENT_VERBOSE", "1");
    let status = command.status().with_context(|| format!("cannot run {program}"))?;
    Ok(status.code().unwrap_or(128 + signal_of(&status)))
}

fn signal_of(status: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.signal().unwrap_or(0)
}
