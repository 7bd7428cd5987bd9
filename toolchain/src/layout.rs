//! Where the driver's companions are: the pass plugin and the runtime archive live next to the
//! `instrument` executables (as `cargo build` leaves them in target/<profile>/), unless
//! `INSTRUMENT_PLUGIN` or `INSTRUMENT_RUNTIME` name other files.

use crate::{Result, ToolchainError};
use instrument_contract::settings;
use std::path::{Path, PathBuf};

pub const PLUGIN_FILE: &str = "libinstrument_pass.so";
pub const RUNTIME_FILE: &str = "libinstrument_rt.a";

/// The directory holding the running executable (symlinks resolved).
pub fn exe_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(ToolchainError::CurrentExe)?;
    let exe = exe.canonicalize().unwrap_or(exe);
    Ok(exe.parent().map(Path::to_path_buf).unwrap_or_default())
}

fn companion(env: settings::Setting, file: &str, what: &'static str) -> Result<PathBuf> {
    let path = match env.path() {
        Some(path) => path,
        None => exe_dir()?.join(file),
    };
    if !path.is_file() {
        return Err(ToolchainError::MissingCompanion { what, path, setting: env.name });
    }
    Ok(path)
}

pub fn plugin() -> Result<PathBuf> {
    companion(settings::PLUGIN, PLUGIN_FILE, "pass plugin")
}

/// The unsealed runtime archive as cargo built it (see `runtime::sealed`).
pub fn runtime_archive() -> Result<PathBuf> {
    companion(settings::RUNTIME, RUNTIME_FILE, "runtime library")
}

/// The bench-nas directory: `INSTRUMENT_BENCH_NAS`, or the repository's (the executables live
/// in its target/<profile>/).
pub fn bench_nas() -> Result<PathBuf> {
    if let Some(dir) = settings::BENCH_NAS.path() {
        return Ok(dir);
    }
    let dir = exe_dir()?;
    Ok(dir.ancestors().nth(2).map(|repo| repo.join("bench-nas")).unwrap_or_else(|| dir.join("bench-nas")))
}

/// A sibling executable such as `instrument-cc`.
pub fn sibling(name: &str) -> Result<PathBuf> {
    let path = exe_dir()?.join(name);
    if !path.is_file() {
        let dir = path.parent().unwrap_or(&path).to_path_buf();
        return Err(ToolchainError::MissingSibling { name: name.to_string(), dir });
    }
    Ok(path)
}
