//! What a report of a profile can fail on: views that need data the profile does not hold,
//! names that are not in it, and the files it reads and writes. One line each, naming what to
//! do instead; the system's reason for a file error is its source (the binaries print the chain).

use std::path::PathBuf;

/// Results of this crate.
pub type Result<T, E = ReportError> = std::result::Result<T, E>;

/// An error of a report, an export or the files they read and write.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "this profile has no callpaths: run the program with INSTRUMENT_CALLPATH=K (or `instrument run --callpath K`)"
    )]
    NoCallpaths,
    #[error(
        "the program recorded callpaths of depth {recorded}; depth {asked} needs a deeper recording (INSTRUMENT_CALLPATH={asked})"
    )]
    TooDeep { recorded: u32, asked: String },
    #[error("no thread {thread} in the profile (threads 0..{threads})")]
    NoThread { thread: u64, threads: usize },
    #[error("the profile has one thread (0), not thread {0}")]
    OnlyThreadZero(u64),
    #[error("the profile has no thread {thread} (it has {known})")]
    NoSuchThread { thread: u64, known: String },
    #[error("thread {0}'s events are not nested in routines it ran; report the whole process instead")]
    ThreadNotNested(u64),
    #[error("no routine named {0:?} in the profile")]
    NoRoutine(String),
    #[error("the profile has no timeline: record one with `instrument run --timeline -- PROGRAM`")]
    NoTimeline,
    #[error("the profile's timeline is empty: the program ran too briefly to sample")]
    EmptyTimeline,
    #[error("TAU profiles are a directory: use export::tau")]
    TauIsADirectory,

    /// Reading, writing or listing `path` failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write to standard output")]
    Stdout(#[source] std::io::Error),
    #[error("cannot load profile {}", path.display())]
    Profile {
        path: PathBuf,
        #[source]
        source: instrument_profile::ReadError,
    },
    #[error("no profile (*.instrument.json) in {}; run an instrumented program first", .0.display())]
    NoProfile(PathBuf),
    #[error("{} is a directory", .0.display())]
    IsADirectory(PathBuf),
    #[error("{} is a symlink to nothing; not replacing it", .0.display())]
    DanglingSymlink(PathBuf),
    #[error("{} exists and holds other files than TAU profiles; choose a new directory", .0.display())]
    NotATauDirectory(PathBuf),
    #[error("cannot draw the flame graph")]
    FlameGraph(#[source] std::io::Error),
    #[error("cannot compress the pprof profile")]
    Compress(#[source] std::io::Error),
    #[error("cannot encode the speedscope profile")]
    Json(#[source] serde_json::Error),
    #[error("cannot write {}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
}

impl ReportError {
    /// A file error: `action` (`read`, `write`, `list`...) on `path` failed with `source`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ReportError {
        let path = path.into();
        move |source| ReportError::Io { action, path, source }
    }
}
