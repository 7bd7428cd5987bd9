//! Finding and loading profile files, with errors that name the file.

use anyhow::{bail, Context, Result};
use instrument_profile::Profile;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` with permissions `mode` through a temporary file in the same
/// directory and a rename, so a reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut file =
        tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot write in {}", dir.display()))?;
    std::io::Write::write_all(&mut file, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode))?;
    file.persist(path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

pub fn load(path: &Path) -> Result<Profile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read profile {}", path.display()))?;
    Profile::from_json(&text).with_context(|| format!("cannot load profile {}", path.display()))
}

/// The newest `*.instrument.json` (the runtime's file name) in `directory`.
pub fn newest(directory: &Path) -> Result<PathBuf> {
    let entries =
        std::fs::read_dir(directory).with_context(|| format!("cannot list {}", directory.display()))?;
    let newest = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".instrument.json") && !name.starts_with('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max();
    match newest {
        Some((_, path)) => Ok(path),
        None => bail!(
            "no profile (*.instrument.json) in {}; run an instrumented program first",
            directory.display()
        ),
    }
}

/// The profile at `path` and, when it is a rank of an MPI job, the other ranks' profiles of
/// that job beside it (`<program>.rank<R>.<pid>...`), in rank order.
pub fn with_other_ranks(path: &Path) -> Result<Vec<Profile>> {
    let first = load(path)?;
    let Some(job) = first.mpi.as_ref().map(|m| m.job.clone()).filter(|j| !j.is_empty()) else {
        return Ok(vec![first]);
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let Some((program, _)) = name.split_once(".rank") else { return Ok(vec![first]) };
    let directory = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let prefix = format!("{program}.rank");
    let mut run = Vec::new();
    for entry in
        std::fs::read_dir(directory).with_context(|| format!("cannot list {}", directory.display()))?
    {
        let entry = entry?;
        let file = entry.file_name().to_string_lossy().into_owned();
        if !file.starts_with(&prefix) || !file.ends_with(".instrument.json") {
            continue;
        }
        let profile = load(&entry.path())?;
        if profile.mpi.as_ref().is_some_and(|m| m.job == job) {
            run.push(profile);
        }
    }
    run.sort_by_key(|p| p.mpi.as_ref().map(|m| m.rank));
    Ok(run)
}
