//! `instrument top`: attaching to a running instrumented program through its live segment
//! (see the `instrument-live` crate), reading its counters and timers while it runs, and
//! switching its probes.

pub mod control;
pub mod rows;
mod screen;
pub mod segment;
pub mod snapshot;
pub mod top;
