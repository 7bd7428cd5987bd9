//! The contracts between the project's parts, written once: what the pass emits and the runtime
//! reads (the module-table ABI, the probes' symbols and calling convention), the codes both give
//! the source languages, the throttling rule the runtime applies and the tools print, every
//! `INSTRUMENT_*` setting, and the MPI operations the PMPI layer reports. The pass, the runtime
//! and the tools use these items instead of keeping copies in step by hand. The crate has no
//! dependencies, so the sealed runtime can take it.

pub mod inline_count;
pub mod language;
pub mod mpi;
pub mod probes;
pub mod settings;
pub mod table;
pub mod throttle;

pub use language::Language;
