//! A profile for sandboxed programs. A program may forbid itself to create files once it runs
//! (xz enables Landlock; seccomp filters do the same): the profile's temporary file cannot be
//! created at exit then, nor a name linked. So at start-up, before any sandbox, the runtime
//! reserves a hidden file in the profile directory (`.<program>.<pid>.instrument.json.reserve`,
//! its descriptor kept out of the program's way) and removes it when the profile is written the
//! normal way. When creating the temporary file is refused, the profile goes into the reserved
//! file, which is then renamed to the profile's name, or, where the sandbox forbids that too,
//! left where it is with one line on stderr saying so. A reserve whose process is gone (killed)
//! is removed by the next run that writes a profile there.

use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SUFFIX: &str = ".reserve";

/// The process that made the reserve, its descriptor and its path.
struct Reserve {
    pid: u32,
    fd: i32,
    path: PathBuf,
}

static RESERVE: OnceLock<Option<Reserve>> = OnceLock::new();

/// Reserves the hidden file for `program`'s profile in `directory` (once, at start-up).
pub fn make(directory: &Path, program: &str) {
    RESERVE.get_or_init(|| {
        let pid = std::process::id();
        let path = directory.join(format!(".{program}.{pid}.{}{SUFFIX}", crate::output::PROFILE_SUFFIX));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .ok()?;
        let fd = crate::live::out_of_the_way(std::os::fd::IntoRawFd::into_raw_fd(file));
        Some(Reserve { pid, fd, path })
    });
}

/// The reserve of process `pid`, whose profile is being written, if it made one: a child the
/// program forked writes its own profile and leaves its parent's reserve alone, while the copy
/// that writes a process's profile after a fatal signal (signals.rs) acts for that process.
fn own(pid: u32) -> Option<&'static Reserve> {
    RESERVE.get()?.as_ref().filter(|r| r.pid == pid)
}

/// Removes process `pid`'s reserve: its profile was written the normal way, or could not be.
pub fn discard(pid: u32) {
    if let Some(reserve) = own(pid) {
        let _ = std::fs::remove_file(&reserve.path);
    }
}

/// Whether `path` is process `pid`'s reserve (which then holds its profile).
pub fn holds(pid: u32, path: &Path) -> bool {
    own(pid).is_some_and(|r| r.path == path)
}

/// Writes `json` into the reserve and gives it the profile's name `target` where allowed.
/// None when process `pid` has no reserve.
pub fn write(pid: u32, json: &[u8], target: &Path) -> Option<Result<PathBuf, String>> {
    let reserve = own(pid)?;
    // SAFETY: the descriptor is the reserve's, open for writing; ManuallyDrop keeps it open.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(reserve.fd) });
    let written = file.set_len(0).and_then(|()| file.write_all(json)).and_then(|()| file.write_all(b"\n"));
    if let Err(e) = written {
        return Some(Err(e.to_string()));
    }
    if std::fs::rename(&reserve.path, target).is_ok() {
        return Some(Ok(target.to_path_buf()));
    }
    eprintln!(
        "instrument: the program's sandbox forbids new files in {}: its profile is in {} (rename it to {})",
        target.parent().unwrap_or(Path::new(".")).display(),
        reserve.path.display(),
        target.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    Some(Ok(reserve.path.clone()))
}

/// The pid in a reserve's file name, if `name` is one.
pub fn reserve_pid(name: &str) -> Option<u32> {
    crate::output::writer_pid(name.strip_prefix('.')?.strip_suffix(SUFFIX)?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reserve_names_give_their_process() {
        assert_eq!(super::reserve_pid(".xz.4242.instrument.json.reserve"), Some(4242));
        assert_eq!(super::reserve_pid(".xz.4242.instrument.json.0.tmp"), None);
        assert_eq!(super::reserve_pid("xz.4242.instrument.json"), None);
    }
}
