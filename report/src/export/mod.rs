//! `instrument export`: a profile in the formats other tools read: folded stacks and flame
//! graphs, speedscope, TAU's profile.N.C.T files (ParaProf, TAU's pprof), and pprof protobuf.

pub mod events;
pub mod folded;
pub mod pprof;
pub mod speedscope;
pub mod tau;

use crate::callpaths::Threads;
use crate::error::{ReportError, Result};
use crate::view::View;
use instrument_profile::Profile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `main;solve;f 12345` per line (exclusive ns), for flamegraph.pl and inferno
    Folded,
    /// A flame graph SVG
    Flamegraph,
    /// speedscope JSON (https://www.speedscope.app)
    Speedscope,
    /// TAU profile.<node>.0.<thread> files in the --output directory (ParaProf, pprof)
    Tau,
    /// gzipped pprof protobuf (go tool pprof)
    Pprof,
}

impl Format {
    /// Whether the export is a directory of files rather than one file.
    pub fn is_directory(self) -> bool {
        self == Format::Tau
    }

    pub fn is_binary(self) -> bool {
        self == Format::Pprof
    }
}

/// One file's bytes (every format but TAU's).
pub fn render(profile: &Profile, format: Format, threads: Threads, view: View) -> Result<Vec<u8>> {
    match format {
        Format::Folded => Ok(folded::folded(profile, threads)?.into_bytes()),
        Format::Flamegraph => folded::flamegraph(profile, threads),
        Format::Speedscope => speedscope::render(profile),
        Format::Pprof => pprof::render(profile, view),
        Format::Tau => Err(ReportError::TauIsADirectory),
    }
}
