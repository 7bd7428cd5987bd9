//! Choosing what to instrument, shared by the pass (which applies it) and the driver (which
//! checks a file before the compiler sees it, so a mistake is one clear line naming the file and
//! line). Two formats users already have: TAU's selective-instrumentation files (`tau`) and
//! Score-P's filter files (`scorep`); names are matched readable (`names`).

pub mod names;
mod scorep;
mod tau;
mod wildcard;

use std::path::{Path, PathBuf};

/// Why a selection file cannot be used (one line, naming the file and line).
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// The system's reason is part of the message (the runtime prints it alone), so it is not
    /// also a source that a chain would print again.
    #[error("cannot read selection file {}: {reason}", path.display())]
    Read { path: PathBuf, reason: std::io::Error },
    #[error("{}:{}: {}", path.display(), error.line, error.message)]
    Syntax { path: PathBuf, error: SyntaxError },
}

/// A mistake in a selection's text, at its 1-based line.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SyntaxError {
    pub line: usize,
    pub message: String,
}

/// A loaded selection file.
#[derive(Debug, Clone)]
pub enum Selection {
    Tau(tau::TauSelection),
    ScoreP(scorep::ScorePFilter),
}

impl Selection {
    /// Reads and parses `path`; the format is recognised by its section keywords.
    pub fn load(path: &Path) -> Result<Selection, SelectError> {
        let text = std::fs::read_to_string(path)
            .map_err(|reason| SelectError::Read { path: path.to_path_buf(), reason })?;
        Selection::parse(&text).map_err(|error| SelectError::Syntax { path: path.to_path_buf(), error })
    }

    /// Parses a selection; an error carries the 1-based line it is about.
    pub fn parse(text: &str) -> Result<Selection, SyntaxError> {
        let parsed = if text.lines().any(|l| l.trim_start().starts_with("SCOREP_")) {
            scorep::ScorePFilter::parse(text).map(Selection::ScoreP)
        } else {
            tau::TauSelection::parse(text).map(Selection::Tau)
        };
        parsed.map_err(|(line, message)| SyntaxError { line, message })
    }

    /// Whether the routine `symbol` (as linked) defined in `file` is instrumented.
    pub fn includes(&self, symbol: &str, file: &str) -> bool {
        let readable = names::readable(symbol);
        match self {
            Selection::Tau(t) => t.includes(&readable, file),
            Selection::ScoreP(s) => s.includes(symbol, &readable, file),
        }
    }

    /// Whether the selection asks for the loops of routine `symbol` in `file` (TAU's
    /// `loops routine="..."` in BEGIN_INSTRUMENT_SECTION).
    pub fn wants_loops(&self, symbol: &str, file: &str) -> bool {
        match self {
            Selection::Tau(t) => t.wants_loops(&names::readable(symbol), file),
            Selection::ScoreP(_) => false,
        }
    }
}
