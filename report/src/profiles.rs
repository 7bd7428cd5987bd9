//! Finding and loading profile files, with errors that name the file.

use crate::error::{ReportError, Result};
use instrument_profile::Profile;
use std::path::{Path, PathBuf};

/// Writes `bytes` to the output the user named, never replacing what is not a regular file:
/// `-` is standard output; a symlink is followed (the file it points to is written, the link
/// stays); a device, FIFO or socket (`/dev/null`, `/dev/stdout`, a pipe) is written in place;
/// a directory is refused; a regular file or a new name is written atomically, through a
/// temporary file in the same directory and a rename, so a reader never sees half a file.
pub fn write_output(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    if path.as_os_str() == "-" {
        return std::io::Write::write_all(&mut std::io::stdout(), bytes).map_err(ReportError::Stdout);
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(ReportError::IsADirectory(path.into())),
        Ok(meta) if !meta.is_file() => {
            let mut file =
                std::fs::OpenOptions::new().write(true).open(path).map_err(ReportError::io("open", path))?;
            std::io::Write::write_all(&mut file, bytes).map_err(ReportError::io("write", path))
        }
        Ok(_) => {
            // A regular file, perhaps behind symlinks: replace the file, keep the links.
            let target = std::fs::canonicalize(path).map_err(ReportError::io("resolve", path))?;
            write_atomically(&target, bytes, mode)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(ReportError::DanglingSymlink(path.into()));
            }
            write_atomically(path, bytes, mode)
        }
        Err(e) => Err(ReportError::io("write", path)(e)),
    }
}

/// Writes `bytes` to `path` with permissions `mode` through a temporary file in the same
/// directory and a rename, so a reader never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(ReportError::io("write in", dir))?;
    std::io::Write::write_all(&mut file, bytes).map_err(ReportError::io("write", path))?;
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode))
        .map_err(ReportError::io("write", path))?;
    file.persist(path).map_err(|e| ReportError::io("write", path)(e.error))?;
    Ok(())
}

pub fn load(path: &Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path).map_err(ReportError::io("read profile", path))?;
    let mut profile =
        Profile::from_json(&text).map_err(|source| ReportError::Profile { path: path.into(), source })?;
    printable_names(&mut profile);
    Ok(profile)
}

/// Control characters in names and file names escaped (`\x1b`), so that no report or export
/// hands a terminal escape sequences from a profile (routine names come from the program).
fn printable_names(profile: &mut Profile) {
    let clean = |text: &mut String| {
        if text.chars().any(char::is_control) {
            *text = text
                .chars()
                .map(|c| if c.is_control() { format!("\\x{:02x}", c as u32) } else { c.to_string() })
                .collect();
        }
    };
    for f in &mut profile.functions {
        clean(&mut f.name);
        clean(&mut f.file);
    }
    for l in &mut profile.loops {
        clean(&mut l.file);
    }
    for c in &mut profile.callsites {
        clean(&mut c.callee);
        clean(&mut c.file);
    }
    profile.command.iter_mut().for_each(clean);
}

/// The newest `*.instrument.json` (the runtime's file name) in `directory`.
pub fn newest(directory: &Path) -> Result<PathBuf> {
    let entries = std::fs::read_dir(directory).map_err(ReportError::io("list", directory))?;
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
        None => Err(ReportError::NoProfile(directory.into())),
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
    for entry in std::fs::read_dir(directory).map_err(ReportError::io("list", directory))? {
        let entry = entry.map_err(ReportError::io("list", directory))?;
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
