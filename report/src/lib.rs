//! Profiles in, reports out: the profile reader (`profiles`), which times a report shows and
//! the events' readable names (`view`, `names`), the flat table (`report`), the program graph
//! (`tree`), callpaths and the calling-context tree (`callpaths`), pprof's summary over threads
//! and ranks (`summary`), suggested filters (`suggest`), timelines (`timeline`), exports
//! (`export`) and HTML pages (`html`, with the experiment results it draws: `experiment`). It
//! runs no program but binutils' `c++filt` for the D names LLVM cannot read; reading names
//! LLVM's way loads the pass plugin (`names`).

pub mod callpaths;
mod error;
pub mod experiment;
pub mod export;
pub mod html;
pub mod names;
pub mod profiles;
pub mod report;
pub mod suggest;
pub mod summary;
pub mod timeline;
pub mod tree;
mod uncertainty;
pub mod view;
mod waits;

pub use error::{ReportError, Result};
