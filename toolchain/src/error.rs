//! What building with instrument can fail at: one `ToolchainError` for the wrappers, the layout of
//! installed files, the LLVM tools, the sealed runtime, `instrument link` and the bitcode
//! rewriter's front door. A variant's text is one clause; the error behind it, if any, is its
//! `source()`, never repeated in the text, so that printing the chain joined by ": " (anyhow's
//! `{:#}`, or `chain` in the wrappers) shows each cause once.

use std::path::PathBuf;
use std::process::ExitStatus;

pub type Result<T, E = ToolchainError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    /// `std::env::current_exe` failed.
    #[error("cannot locate the running executable")]
    CurrentExe(#[source] std::io::Error),
    /// The pass plugin or the runtime archive is not where it should be.
    #[error(
        "the {what} is missing at {} (build it with `cargo build --release --workspace`, or set {setting})",
        path.display()
    )]
    MissingCompanion { what: &'static str, path: PathBuf, setting: &'static str },
    /// A sibling executable such as `instrument-cc` is not next to the running one.
    #[error("{name} is missing next to {} (build the workspace)", dir.display())]
    MissingSibling { name: String, dir: PathBuf },
    /// A tool's setting names a file that is not an executable.
    #[error("{setting} is set to {}, which is not an executable", path.display())]
    NotExecutable { setting: &'static str, path: PathBuf },
    /// A tool of the LLVM 22 toolchain is not on PATH.
    #[error("{program} not found on PATH (install it: apt-get install {package}, or set {setting})")]
    ToolNotFound { program: &'static str, package: &'static str, setting: &'static str },
    /// A file operation on `path` failed (`action` is the verb: "create", "run").
    #[error("cannot {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Renaming a finished file (`what`) into its place failed.
    #[error("cannot move {what} to {}", to.display())]
    Move {
        what: &'static str,
        to: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An include directory's mpif.h cannot be read.
    #[error("cannot read {}/mpif.h", dir.display())]
    MpifHeader {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A private temporary in the cache (directory or file) cannot be made or written; the I/O
    /// error is the whole message (tempfile's names the path).
    #[error(transparent)]
    Scratch(std::io::Error),
    /// A tool cannot be started.
    #[error("cannot run {program:?}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A tool ran and failed; `stderr` is what it printed, trimmed.
    #[error("{program:?} failed: {stderr}")]
    ToolFailed { program: PathBuf, status: ExitStatus, stderr: String },
    /// Neither the runtime archive's directory nor a user cache directory can be written.
    #[error("no writable place for the sealed runtime (set XDG_CACHE_HOME)")]
    NoCacheDirectory,
    /// Sealing the runtime `archive` failed.
    #[error("cannot seal the runtime {}", archive.display())]
    Seal {
        archive: PathBuf,
        #[source]
        source: Box<ToolchainError>,
    },
    /// Compiling the PMPI layer against the program's mpi.h failed.
    #[error("cannot compile the PMPI layer against this program's mpi.h")]
    PmpiCompile(#[source] Box<ToolchainError>),
    /// `instrument link` without a command after `--`.
    #[error("no link command: give it after --, for example `instrument link -- ldc2 app.o -of=app`")]
    NoLinkCommand,
    /// The bitcode to rewrite is not a file.
    #[error("cannot read {}: no such file", path.display())]
    MissingInput { path: PathBuf },
    /// The pass plugin cannot be loaded because libLLVM is missing.
    #[error("LLVM 22 is not installed (apt-get install llvm-22)")]
    LlvmMissing(#[source] libloading::Error),
    /// The pass plugin cannot be loaded for another reason.
    #[error("cannot load the pass plugin {}", path.display())]
    PluginLoad {
        path: PathBuf,
        #[source]
        source: libloading::Error,
    },
    /// The library at `path` has no rewrite entry point.
    #[error("{} is not an instrument pass plugin", path.display())]
    NotAPlugin {
        path: PathBuf,
        #[source]
        source: libloading::Error,
    },
    /// A path holds a nul byte and cannot be passed to C.
    #[error(transparent)]
    NulInPath(#[from] std::ffi::NulError),
    /// The rewriter's own message.
    #[error("{message}")]
    RewriteFailed { message: String },
    /// A setting has a value it cannot take.
    #[error(transparent)]
    Setting(#[from] instrument_contract::settings::BadValue),
    /// The selection file cannot be used.
    #[error(transparent)]
    Selection(#[from] instrument_select::SelectError),
}

/// `error` and its sources joined by ": ", as anyhow's `{:#}` prints them.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_failure_prints_each_cause_once() {
        let not_found = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let error = ToolchainError::Seal {
            archive: "/rt/libinstrument_rt.a".into(),
            source: Box::new(ToolchainError::Spawn { program: "ld.lld".into(), source: not_found() }),
        };
        let expected =
            format!("cannot seal the runtime /rt/libinstrument_rt.a: cannot run \"ld.lld\": {}", not_found());
        assert_eq!(chain(&error), expected);
    }

    #[test]
    fn a_transparent_variant_prints_its_error_alone() {
        let error = ToolchainError::Scratch(std::io::Error::other("disk full"));
        assert_eq!(chain(&error), "disk full");
    }
}
