//! The live segment: a shared-memory file (a memfd named `instrument-live`, mode 0600) in
//! which a running instrumented program keeps its counters and timers where an outside tool
//! can read them without stopping it, as Paradyn's daemons read their processes' counters. The
//! runtime does not copy anything there: the per-thread shadow stacks and records live in the
//! segment itself, so publishing costs the hot path nothing. `instrument top` reads it and
//! writes the probes' mode bytes, which the runtime maps over the table its probes read.
//!
//! This crate holds only the layout, shared by the writer (the runtime) and the reader (the
//! driver). The file is sparse: every area has a fixed offset and only touched pages use
//! memory. A memfd disappears with the last process that has it open or mapped, so a program
//! killed with SIGKILL leaves nothing behind.

mod layout;
mod names;
mod records;

pub use layout::*;
pub use names::{parse_names, write_name_line, EventName};
pub use records::{Frame, Record, COUNTED_CHILD, TIMED_CHILD, UNTIMED_SNAPSHOT, UNTIMED_START};
