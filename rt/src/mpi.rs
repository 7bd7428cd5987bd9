//! MPI: which rank of which job this process is, and the communication records of the PMPI
//! layer (rt/shim/pmpi.c, compiled by the compiler wrappers against the program's own mpi.h);
//! the OMPT tool's OpenMP waits (rt/shim/ompt.c) go to the same table.
//!
//! The rank comes from the launcher's environment at start-up (Open MPI, MPICH's PMI, Slurm),
//! so even a profile written before MPI_Init is named by rank; the layer's MPI_Init confirms it
//! (and makes a program started without a launcher rank 0 of 1). Each MPI call the layer times
//! becomes one of Li and Zhang's COM records, keyed by the event open when the call was made,
//! the operation and the peer: count, bytes, time and synchronisation delay. The table is a
//! fixed array claimed with compare-and-swap, so recording never locks or allocates; when it
//! is full, records are counted as dropped instead.

use crate::thread;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The operations the PMPI layer reports, by the number it passes (the contract's list, from
/// which the layer's C enum is generated).
pub use instrument_contract::mpi::OPERATIONS;

const SLOTS: usize = 4096;
/// No peer: a collective without a root, a wait.
pub const NO_PEER: i32 = -1;

/// One COM record. `key` is 0 while the slot is free.
struct Slot {
    key: AtomicU64,
    calls: AtomicU64,
    bytes: AtomicU64,
    ticks: AtomicU64,
    wait_ticks: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    key: AtomicU64::new(0),
    calls: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
    ticks: AtomicU64::new(0),
    wait_ticks: AtomicU64::new(0),
};
static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// Rank and size (-1 until known).
static RANK: AtomicI64 = AtomicI64::new(-1);
static SIZE: AtomicI64 = AtomicI64::new(-1);
static JOB: Mutex<String> = Mutex::new(String::new());

/// A record's key: site (event id + 1, 0 for none), operation and peer (+ 1), never 0.
fn key(site: Option<u32>, operation: u32, peer: i32) -> u64 {
    let site = site.map_or(0, |s| u64::from(s) + 1);
    (site << 32) | (u64::from(operation & 0xff) << 24) | ((peer + 1) as u64 & 0xff_ffff) | (1 << 63)
}

fn unpack(key: u64) -> (Option<u32>, u32, i32) {
    let site = ((key >> 32) & 0x7fff_ffff) as u32;
    (site.checked_sub(1), ((key >> 24) & 0xff) as u32, (key & 0xff_ffff) as i32 - 1)
}

/// The slot for `key`, claimed if new; None when the table is full.
fn slot(key: u64) -> Option<&'static Slot> {
    let start = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52) as usize;
    for i in 0..SLOTS {
        let slot = &TABLE[(start + i) % SLOTS];
        match slot.key.load(Relaxed) {
            k if k == key => return Some(slot),
            0 => match slot.key.compare_exchange(0, key, Relaxed, Relaxed) {
                Ok(_) => return Some(slot),
                Err(k) if k == key => return Some(slot),
                Err(_) => continue,
            },
            _ => continue,
        }
    }
    None
}

/// The event open on the calling thread: where the communication statement is.
fn current_site() -> Option<u32> {
    // SAFETY: the calling thread's own state, outside any probe of it (the PMPI layer is not
    // instrumented).
    let ts = unsafe { thread::current().as_ref()? };
    if ts.depth == 0 || ts.depth >= ts.frame_cap() {
        return None;
    }
    // SAFETY: depth < frame_cap, checked.
    Some(unsafe { ts.frame(ts.depth).id })
}

/// The clock the probes use, for the PMPI layer's timestamps.
#[no_mangle]
pub extern "C" fn __instrument_now() -> u64 {
    crate::clock::now()
}

/// Records one MPI call: `start` at entry, `transfer` when the peer was ready (the message
/// had arrived, the request was complete), `end` at return.
#[no_mangle]
pub extern "C" fn __instrument_mpi_record(
    operation: u32,
    peer: i32,
    bytes: u64,
    start: u64,
    transfer: u64,
    end: u64,
) {
    let wait = transfer.clamp(start, end) - start;
    add(current_site(), operation, peer, bytes, end.saturating_sub(start), wait);
}

/// Adds one call to the record of (`site`, `operation`, `peer`), or counts it as dropped when
/// the table is full; a peer out of the key's range is recorded as none.
fn add(site: Option<u32>, operation: u32, peer: i32, bytes: u64, ticks: u64, wait_ticks: u64) {
    let peer = if (0..0xff_fffe).contains(&peer) { peer } else { NO_PEER };
    let Some(slot) = slot(key(site, operation, peer)) else {
        DROPPED.fetch_add(1, Relaxed);
        return;
    };
    slot.calls.fetch_add(1, Relaxed);
    slot.bytes.fetch_add(bytes, Relaxed);
    slot.ticks.fetch_add(ticks, Relaxed);
    slot.wait_ticks.fetch_add(wait_ticks, Relaxed);
}

/// The event open on the calling thread plus one (0: none), for the OMPT tool's regions.
#[no_mangle]
pub extern "C" fn __instrument_current_site() -> u32 {
    current_site().map_or(0, |s| s + 1)
}

/// Records one OpenMP wait (rt/shim/ompt.c) from `start` to `end` at `site` (event id plus one,
/// 0 for none) by OpenMP thread `thread`: all of it is synchronisation delay.
#[no_mangle]
pub extern "C" fn __instrument_sync_record(operation: u32, site: u32, thread: i32, start: u64, end: u64) {
    let ticks = end.saturating_sub(start);
    add(site.checked_sub(1), operation, thread, 0, ticks, ticks);
}

/// Whether the OMPT tool starts (`INSTRUMENT_OMPT`, on unless switched off).
#[no_mangle]
pub extern "C" fn __instrument_ompt_wanted() -> i32 {
    i32::from(crate::settings::flag(&crate::settings::OMPT) != Some(false))
}

/// The rank and size the PMPI layer's MPI_Init found in MPI_COMM_WORLD.
#[no_mangle]
pub extern "C" fn __instrument_mpi_rank(rank: i32, size: i32) {
    if rank >= 0 && size > rank {
        RANK.store(rank.into(), Relaxed);
        SIZE.store(size.into(), Relaxed);
    }
}

/// Reads the rank, size and job id the launcher put in the environment (at start-up).
pub fn from_environment() {
    let number =
        |names: &[&str]| names.iter().find_map(|n| std::env::var(n).ok()?.trim().parse::<i32>().ok());
    let rank = number(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"]);
    let size = number(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"]);
    if let (Some(rank), Some(size)) = (rank, size) {
        __instrument_mpi_rank(rank, size);
    }
    let job = ["PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "PMI_JOBID", "SLURM_JOB_ID"]
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()));
    if let Some(job) = job {
        *JOB.lock().unwrap_or_else(|e| e.into_inner()) = job;
    }
}

/// (rank, size, job) once known.
pub fn rank() -> Option<(u32, u32, String)> {
    let (rank, size) = (RANK.load(Relaxed), SIZE.load(Relaxed));
    let job = JOB.lock().unwrap_or_else(|e| e.into_inner()).clone();
    (rank >= 0).then_some((rank as u32, size as u32, job))
}

/// One COM record as the table holds it (ids are the runtime's, times in ticks).
pub struct Record {
    pub site: Option<u32>,
    pub operation: &'static str,
    pub peer: Option<u32>,
    pub calls: u64,
    pub bytes: u64,
    pub ticks: u64,
    pub wait_ticks: u64,
}

/// Every record so far, and how many were dropped.
pub fn records() -> (Vec<Record>, u64) {
    let records = TABLE
        .iter()
        .filter_map(|slot| {
            let (site, operation, peer) = unpack(Some(slot.key.load(Relaxed)).filter(|&k| k != 0)?);
            Some(Record {
                site,
                operation: OPERATIONS.get(operation as usize).copied().unwrap_or("MPI_(other)"),
                peer: u32::try_from(peer).ok(),
                calls: slot.calls.load(Relaxed),
                bytes: slot.bytes.load(Relaxed),
                ticks: slot.ticks.load(Relaxed),
                wait_ticks: slot.wait_ticks.load(Relaxed),
            })
        })
        .filter(|r| r.calls > 0)
        .collect();
    (records, DROPPED.load(Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        for (site, op, peer) in [(None, 0, NO_PEER), (Some(0), 3, 0), (Some(123_456), 17, 4095)] {
            assert_eq!(unpack(key(site, op, peer)), (site, op, peer));
        }
    }
}
