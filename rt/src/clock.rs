//! The clock. On x86-64 with an invariant TSC, `rdtsc` (about 15 ns here, the floor of every
//! probe); otherwise CLOCK_MONOTONIC through the vDSO. Ticks are converted to nanoseconds only
//! when the profile is written: the tick rate is measured against CLOCK_MONOTONIC over the
//! whole run (anchors taken at start-up and at exit), which costs nothing at start-up and is
//! more precise than any short start-up calibration; runs shorter than `MIN_CALIBRATION_NS`
//! are padded by spinning at exit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

static USE_TSC: AtomicBool = AtomicBool::new(false);
/// Serialized reads (the `fenced` compensation strategy): see `set_serialized`.
static SERIALIZED: AtomicBool = AtomicBool::new(false);
static START_TICKS: AtomicU64 = AtomicU64::new(0);
static START_NS: AtomicU64 = AtomicU64::new(0);

/// Shortest CLOCK_MONOTONIC window the tick rate is measured over.
pub const MIN_CALIBRATION_NS: u64 = 2_000_000;

/// Reads the clock in ticks. The hot path's only expensive instruction.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if USE_TSC.load(Relaxed) {
        // SAFETY: rdtsc, rdtscp and lfence exist on every x86-64 processor with an invariant
        // TSC (the only case in which the TSC is used).
        unsafe {
            if SERIALIZED.load(Relaxed) {
                let mut aux = 0u32;
                let t = core::arch::x86_64::__rdtscp(&mut aux);
                core::arch::x86_64::_mm_lfence();
                return t;
            }
            return core::arch::x86_64::_rdtsc();
        }
    }
    monotonic_ns()
}

/// Whether `now` is one unserialized rdtsc: the timed path in assembly (timed_path.rs) reads
/// the clock itself only then.
pub fn plain_tsc() -> bool {
    cfg!(target_arch = "x86_64") && USE_TSC.load(Relaxed) && !SERIALIZED.load(Relaxed)
}

/// In serialized mode, waits until every earlier instruction has completed.
#[inline(always)]
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    if SERIALIZED.load(Relaxed) {
        // SAFETY: lfence exists on every x86-64 processor (SSE2 is part of the base ISA).
        unsafe { core::arch::x86_64::_mm_lfence() };
    }
}

/// Serialized mode: a fence before each probe's work, rdtscp and a fence for the timestamp.
/// Probes then neither overlap earlier work nor let later work start early, so their cost is the
/// same everywhere; the price is the overlap the program loses around each probe.
pub fn set_serialized(on: bool) {
    SERIALIZED.store(on, Relaxed);
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Chooses the clock (`INSTRUMENT_CLOCK=tsc|monotonic`, default: the TSC when it is invariant)
/// and takes the start anchor. Called once, before the first event.
pub fn init() {
    let tsc = match crate::settings::choice(&crate::settings::CLOCK) {
        Some("monotonic") => false,
        Some(_) => cfg!(target_arch = "x86_64"),
        None => invariant_tsc(),
    };
    USE_TSC.store(tsc, Relaxed);
    let (ticks, ns) = anchor();
    START_TICKS.store(ticks, Relaxed);
    START_NS.store(ns, Relaxed);
}

/// The start anchor: (ticks, CLOCK_MONOTONIC ns), and whether ticks are TSC cycles.
pub fn start_anchor() -> (u64, u64, bool) {
    (START_TICKS.load(Relaxed), START_NS.load(Relaxed), USE_TSC.load(Relaxed))
}

pub fn source() -> instrument_profile::ClockSource {
    if USE_TSC.load(Relaxed) {
        instrument_profile::ClockSource::Tsc
    } else {
        instrument_profile::ClockSource::Monotonic
    }
}

/// A simultaneous reading of both clocks: the TSC read between two CLOCK_MONOTONIC reads.
fn anchor() -> (u64, u64) {
    let before = monotonic_ns();
    let ticks = now();
    let after = monotonic_ns();
    (ticks, before + (after - before) / 2)
}

/// Ticks per nanosecond measured since start-up, for decisions taken while the program runs
/// (throttling); None during the first millisecond, when the estimate would be poor.
pub fn ticks_per_ns_estimate() -> Option<f64> {
    if !USE_TSC.load(Relaxed) {
        return Some(1.0);
    }
    let (ticks, ns) = anchor();
    let window = ns.saturating_sub(START_NS.load(Relaxed));
    (window >= 1_000_000).then(|| ticks.wrapping_sub(START_TICKS.load(Relaxed)) as f64 / window as f64)
}

/// The tick rate measured since start-up, and the window it was measured over.
pub struct Calibration {
    pub ticks_per_second: f64,
    pub window_ns: u64,
    pub start_ticks: u64,
}

pub fn calibrate() -> Calibration {
    let (start_ticks, start_ns) = (START_TICKS.load(Relaxed), START_NS.load(Relaxed));
    if !USE_TSC.load(Relaxed) {
        let window_ns = monotonic_ns().saturating_sub(start_ns);
        return Calibration { ticks_per_second: 1e9, window_ns, start_ticks };
    }
    let (mut ticks, mut ns) = anchor();
    while ns.saturating_sub(start_ns) < MIN_CALIBRATION_NS {
        (ticks, ns) = anchor();
    }
    let window_ns = ns - start_ns;
    let ticks_per_second = ticks.wrapping_sub(start_ticks) as f64 * 1e9 / window_ns as f64;
    Calibration { ticks_per_second, window_ns, start_ticks }
}

/// CPUID leaf 0x8000_0007, EDX bit 8: the TSC runs at a constant rate in all power states.
fn invariant_tsc() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        if __cpuid(0x8000_0000).eax >= 0x8000_0007 {
            return __cpuid(0x8000_0007).edx & (1 << 8) != 0;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_advance_and_calibrate_against_monotonic() {
        init();
        let a = now();
        let b = now();
        assert!(b >= a);
        let c = calibrate();
        assert!(c.window_ns >= if USE_TSC.load(Relaxed) { MIN_CALIBRATION_NS } else { 0 });
        assert!(c.ticks_per_second > 1e8 && c.ticks_per_second < 1e11, "{}", c.ticks_per_second);
    }
}
