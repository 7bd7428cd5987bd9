//! The clock. On x86-64 with an invariant TSC, the TSC (the floor of every probe); otherwise
//! CLOCK_MONOTONIC through the vDSO. Ticks are converted to nanoseconds only when the profile is
//! written: the tick rate is measured against CLOCK_MONOTONIC over the whole run (anchors taken
//! at start-up and at exit), which costs nothing at start-up and is more precise than any short
//! start-up calibration; runs shorter than `MIN_CALIBRATION_NS` are padded by spinning at exit.
//!
//! Exits read the TSC with `rdtscp`, entries with `rdtsc` (`now_at_entry`). `rdtscp` reads the
//! counter once every earlier instruction has executed; `rdtsc` reads it as soon as it issues.
//! Next to a dependency chain the core issues far ahead of the work it waits on, so an `rdtsc`
//! at an exit is taken before the routine's own work is done, and the chain's time lands wherever
//! issue stalls, mostly in the caller. On the ground truth (`probe-context`), a randlc-like
//! routine's compensated time came out at 11-19 % of its plain time with `rdtsc` at both ends,
//! 91-100 % with `rdtscp` at exits, and 96-101 % with `rdtscp` at both; a BT-like block update's
//! at 84-91, 96-98 and 97-99 %. The wait is the price: a pair in a tight loop cost 20.3 ns with
//! `rdtsc` at both ends, 26.1 with `rdtscp` at exits and 32.4 with it at both (`instrument bench
//! probes`), so entries keep `rdtsc`: what the caller left unfinished at a call then counts in
//! the callee. Later instructions are not held back (that is the `fenced` strategy's `lfence`),
//! so the probe's own work still overlaps what follows. `INSTRUMENT_CLOCK=tsc-unordered` reads
//! `rdtsc` at both ends, as does a processor without `rdtscp`; the timed pair in assembly
//! (timed_path.rs) reads `rdtscp`, so its gate stays closed then and the Rust bodies time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

static USE_TSC: AtomicBool = AtomicBool::new(false);
/// Serialized reads (the `fenced` compensation strategy): see `set_serialized`.
static SERIALIZED: AtomicBool = AtomicBool::new(false);
/// The TSC is read with rdtscp (the processor has it, and `INSTRUMENT_CLOCK` is not
/// `tsc-unordered`), else with rdtsc.
static ORDERED: AtomicBool = AtomicBool::new(false);
static START_TICKS: AtomicU64 = AtomicU64::new(0);
static START_NS: AtomicU64 = AtomicU64::new(0);

/// Shortest CLOCK_MONOTONIC window the tick rate is measured over.
pub const MIN_CALIBRATION_NS: u64 = 2_000_000;

/// Reads the clock in ticks, once every earlier instruction has executed where the processor
/// has rdtscp: exits' timestamps and everything but entries'. The hot path's only expensive
/// instruction.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if USE_TSC.load(Relaxed) {
        // SAFETY: rdtsc and lfence exist on every x86-64 processor; rdtscp is used only where
        // `init` found it (it faults where the processor or hypervisor hides it).
        unsafe {
            let t = if ORDERED.load(Relaxed) {
                let mut aux = 0u32;
                core::arch::x86_64::__rdtscp(&mut aux)
            } else {
                if SERIALIZED.load(Relaxed) {
                    core::arch::x86_64::_mm_lfence();
                }
                core::arch::x86_64::_rdtsc()
            };
            if SERIALIZED.load(Relaxed) {
                core::arch::x86_64::_mm_lfence();
            }
            return t;
        }
    }
    monotonic_ns()
}

/// Reads the clock in ticks for an entry's timestamp: the TSC read when the instruction issues
/// (rdtsc), without waiting for the caller's earlier work (see the module comment); serialized
/// in serialized mode.
#[inline(always)]
pub fn now_at_entry() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if USE_TSC.load(Relaxed) && !SERIALIZED.load(Relaxed) {
        // SAFETY: rdtsc exists on every x86-64 processor.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    now()
}

/// Reads the clock in ticks for an entry's timestamp once every earlier instruction has
/// completed (`lfence`, then `rdtsc`): the entries of inplace's split windows, whose timed
/// interval then holds none of the caller's or the entry's own unfinished work.
#[inline(always)]
pub fn now_fenced_entry() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if USE_TSC.load(Relaxed) {
        // SAFETY: lfence and rdtsc exist on every x86-64 processor.
        return unsafe {
            core::arch::x86_64::_mm_lfence();
            core::arch::x86_64::_rdtsc()
        };
    }
    now()
}

/// Waits until every earlier instruction has completed (`lfence`; nothing elsewhere): around
/// the timed interval of an event in a split window, so that neither the probes' own work nor
/// the caller's overlaps the event's (inplace `splits`).
#[inline(always)]
pub fn fence_always() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: lfence exists on every x86-64 processor (SSE2 is part of the base ISA).
    unsafe {
        core::arch::x86_64::_mm_lfence()
    };
}

/// Whether `now` is one rdtscp without fences (and `now_at_entry` one rdtsc): the timed path in
/// assembly (timed_path.rs) reads the clock itself only then.
pub fn plain_tsc() -> bool {
    cfg!(target_arch = "x86_64")
        && USE_TSC.load(Relaxed)
        && ORDERED.load(Relaxed)
        && !SERIALIZED.load(Relaxed)
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

/// Chooses the clock (`INSTRUMENT_CLOCK=tsc|tsc-unordered|monotonic`, default: the TSC when it
/// is invariant, read with rdtscp where the processor has it) and takes the start anchor.
/// Called once, before the first event.
pub fn init() {
    let choice = crate::settings::choice(&crate::settings::CLOCK);
    let tsc = match choice {
        Some("monotonic") => false,
        Some(_) => cfg!(target_arch = "x86_64"),
        None => invariant_tsc(),
    };
    USE_TSC.store(tsc, Relaxed);
    ORDERED.store(tsc && choice != Some("tsc-unordered") && has_rdtscp(), Relaxed);
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

/// A simultaneous reading of both clocks: the TSC read between two CLOCK_MONOTONIC reads, the
/// tightest of up to three tries while the two are further apart than `TIGHT_NS` (a preemption
/// between them would move the midpoint by its length).
fn anchor() -> (u64, u64) {
    let mut best = (0, 0, u64::MAX);
    for _ in 0..3 {
        let before = monotonic_ns();
        let ticks = now();
        let after = monotonic_ns();
        let spread = after.saturating_sub(before);
        if spread < best.2 {
            best = (ticks, before + spread / 2, spread);
        }
        if spread <= TIGHT_NS {
            break;
        }
    }
    (best.0, best.1)
}

/// An anchor whose CLOCK_MONOTONIC reads are this close (ns) is taken at once.
const TIGHT_NS: u64 = 1_000;
/// The shortest window of a run-time tick rate estimate (ns): anchors are within `TIGHT_NS`, so
/// the rate is within 1 % from here on. The start-up measurement (overhead.rs) takes longer, so
/// every estimate after it has one.
const MIN_ESTIMATE_NS: u64 = 100_000;

/// Ticks per nanosecond measured since start-up, for decisions taken while the program runs
/// (throttling, window lengths, periods); None during the first `MIN_ESTIMATE_NS`, when the
/// estimate would be poor.
pub fn ticks_per_ns_estimate() -> Option<f64> {
    if !USE_TSC.load(Relaxed) {
        return Some(1.0);
    }
    let (ticks, ns) = anchor();
    let window = ns.saturating_sub(START_NS.load(Relaxed));
    (window >= MIN_ESTIMATE_NS).then(|| ticks.wrapping_sub(START_TICKS.load(Relaxed)) as f64 / window as f64)
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

/// CPUID leaf 0x8000_0001, EDX bit 27: the processor has rdtscp.
fn has_rdtscp() -> bool {
    extended_feature(0x8000_0001, 27)
}

/// CPUID leaf 0x8000_0007, EDX bit 8: the TSC runs at a constant rate in all power states.
fn invariant_tsc() -> bool {
    extended_feature(0x8000_0007, 8)
}

/// EDX bit `bit` of extended CPUID leaf `leaf`, false where the processor has no such leaf.
fn extended_feature(leaf: u32, bit: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        if __cpuid(0x8000_0000).eax >= leaf {
            return __cpuid(leaf).edx & (1 << bit) != 0;
        }
    }
    let _ = (leaf, bit);
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
