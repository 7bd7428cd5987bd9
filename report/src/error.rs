//! What a report of a profile can fail on: views that need data the profile does not hold, and
//! names that are not in it. One line each, naming what to do instead.

/// An error of a report view.
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
    #[error("no routine named {0:?} in the profile")]
    NoRoutine(String),
}
