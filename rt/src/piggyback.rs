//! Compensation across processes (Malony and Shende's open problem, section 5): a receiver
//! that waited for a message inherits the sender's measurement overhead, which no
//! per-process compensation can see. With compensation on, the PMPI layer (rt/shim/pmpi.c)
//! sends each rank's accumulated overhead beside every message and collective, and the
//! receiver removes what it inherited:
//!
//!   inherited = min(sender's overhead - own overhead, time the receiver waited)
//!
//! (the rule of Malony, Shende, Morris and Wolf's parallel compensation: a receiver that is
//! already as far behind as the sender inherited nothing; one that did not wait inherited
//! nothing either). It is added to the overhead of the frame open at the call, so the
//! compensated inclusive times of every open event, and the exclusive time of the one that
//! waited, lose it; and since it is now part of this rank's overhead, it travels on with the
//! rank's own messages. The layer's own work (the extra messages) is measured and charged
//! the same way, as measurement overhead.
//!
//! Overheads travel in nanoseconds, so ranks on machines with different clock rates agree.

use crate::{clock, compensate, thread};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Overhead inherited from other ranks, in ticks, and the messages that brought it.
static INHERITED: AtomicU64 = AtomicU64::new(0);
static MESSAGES: AtomicU64 = AtomicU64::new(0);
/// The PMPI layer's own work while piggybacking, in ticks.
static COST: AtomicU64 = AtomicU64::new(0);

/// Whether the PMPI layer piggybacks: with compensation on, unless `INSTRUMENT_PIGGYBACK=0`.
/// Every rank must answer the same (the launcher gives them the same environment).
#[no_mangle]
pub extern "C" fn __instrument_mpi_piggyback() -> i32 {
    let off = crate::settings::flag(&crate::settings::PIGGYBACK) == Some(false);
    i32::from(compensate::enabled() && !off)
}

/// The calling thread's accumulated measurement overhead so far, in nanoseconds (0 while
/// the clock rate is not yet known).
#[no_mangle]
pub extern "C" fn __instrument_mpi_overhead() -> u64 {
    let Some(ticks_per_ns) = clock::ticks_per_ns_estimate() else { return 0 };
    (own_ticks() as f64 / ticks_per_ns) as u64
}

/// A message (or a collective) from a rank whose overhead was `sender_ns` has arrived after
/// this thread waited `wait_ticks`: removes the overhead it inherited.
#[no_mangle]
pub extern "C" fn __instrument_mpi_inherit(sender_ns: u64, wait_ticks: u64) {
    MESSAGES.fetch_add(1, Relaxed);
    let Some(ticks_per_ns) = clock::ticks_per_ns_estimate() else { return };
    let sender = (sender_ns as f64 * ticks_per_ns) as u64;
    let inherited = sender.saturating_sub(own_ticks()).min(wait_ticks);
    if inherited > 0 && charge(inherited) {
        INHERITED.fetch_add(inherited, Relaxed);
    }
}

/// The PMPI layer spent `ticks` piggybacking: measurement overhead of the frame on top.
#[no_mangle]
pub extern "C" fn __instrument_mpi_piggyback_cost(ticks: u64) {
    if charge(ticks) {
        COST.fetch_add(ticks, Relaxed);
    }
}

/// Overhead so far on the calling thread: what its open frames have collected, in ticks.
fn own_ticks() -> u64 {
    // SAFETY: the calling thread's own state, outside any probe of it (the PMPI layer is not
    // instrumented).
    let Some(ts) = (unsafe { thread::current().as_ref() }) else { return 0 };
    let top = ts.depth.min(ts.frame_cap() - 1);
    // SAFETY: d <= top < frame_cap.
    let scaled: u64 = (0..=top).map(|d| unsafe { ts.frame(d).overhead }).sum();
    compensate::scaled_to_ticks(scaled)
}

/// Adds `ticks` of overhead to the frame on top of the calling thread.
fn charge(ticks: u64) -> bool {
    // SAFETY: as in `own_ticks`.
    let Some(ts) = (unsafe { thread::current().as_mut() }) else { return false };
    let top = ts.depth.min(ts.frame_cap() - 1);
    // SAFETY: top < frame_cap.
    unsafe { ts.frame(top).overhead += ticks << crate::overhead::SCALE };
    true
}

/// (messages that carried an overhead, inherited ticks, the layer's own ticks).
pub fn totals() -> (u64, u64, u64) {
    (MESSAGES.load(Relaxed), INHERITED.load(Relaxed), COST.load(Relaxed))
}
