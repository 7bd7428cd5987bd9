//! The `instrument` command line beyond reports and builds: the experiment runner
//! (`experiment`), `instrument run` (`run`), the live view (`live`, for `instrument top`), the
//! cost model (`cost`), the benchmarks (`bench`) and the bundled demo (`demo`). Reports come from
//! instrument-report, builds from instrument-toolchain.

pub mod bench;
pub mod bench_hook;
pub mod bench_paired;
pub mod cost;
pub mod demo;
pub mod experiment;
pub mod live;
pub mod run;
