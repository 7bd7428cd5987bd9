//! The measurement runtime. Instrumented code calls three C entry points:
//!
//! - `__instrument_register_module(table)` from each module's constructor (`registry`),
//! - `__instrument_enter(id_slot)` / `__instrument_exit(id_slot, opened)` around every routine,
//!   loop and call statement (a routine's exits run only when its entry returned non-zero, and
//!   take what it returned),
//!   `__instrument_loop_exit(id_slot, iterations)` on loop exits, and
//!   `__instrument_unwind(id_slot)` in landing pads, where an exception or panic arrives
//!   (`trampolines`, which jump to the bodies in `probes`); early placement calls the same with
//!   the `preserve_most` convention (`_pm`) and its deferred exits `exit_if` (see
//!   `instrument_contract::probes`).
//!
//! The hot path reads the clock, touches one thread-local shadow stack and one per-thread record
//! array, and never locks or allocates (`thread`). Both live in a shared-memory segment that
//! `instrument top` reads while the program runs (`live`). Everything else (registration, thread start and
//! end, the profile at exit) is cold and may lock and allocate. The runtime itself is never
//! instrumented: it is compiled by rustc without the pass and linked natively.

// Every unsafe operation sits in its own block with a `SAFETY:` comment, and every unsafe fn
// states its contract in a `# Safety` section (the hot path's in probes.rs's module comment).
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod alloc;
mod assemble;
mod bits;
mod callpath;
pub mod clock;
mod compensate;
mod current;
mod event_table;
mod exec;
#[cfg(target_arch = "x86_64")]
mod flush_path;
mod flushes;
mod hint;
mod inline;
mod inplace;
mod lifecycle;
mod live;
mod lock;
mod misses;
mod mpi;
mod node_map;
mod output;
mod overhead;
mod pages;
mod pathed_path;
mod piggyback;
mod pooling;
mod population;
pub mod probes;
mod recalibrate;
mod reconcile;
mod registry;
mod reserve;
mod rests;
mod settings;
mod signals;
mod switch;
mod tally;
mod thread;
mod timed_path;
pub mod trampolines;
mod untimed;
mod waits;

#[global_allocator]
static ALLOCATOR: alloc::RuntimeAlloc = alloc::RuntimeAlloc;

/// Writes the profile now and stops recording (what the exit handler does). Exposed for tests
/// and for programs that want a profile before an `_exit`.
#[no_mangle]
pub extern "C" fn __instrument_finish() {
    lifecycle::finish();
}
