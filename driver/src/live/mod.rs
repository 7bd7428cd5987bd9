//! `instrument top`: attaching to a running instrumented program through its live segment
//! (see the `instrument-live` crate), reading its counters and timers while it runs, and
//! switching its probes.

mod args;
mod columns;
pub mod control;
pub mod histogram;
mod labels;
pub mod rows;
pub mod sampler;
mod screen;
pub mod segment;
pub mod snapshot;
pub mod top;
