//! The noise control: a short, fixed, CPU-bound workload the runner times just before every
//! trial. Its time does not depend on anything the experiment changes, so its spread over the
//! run is the machine's own noise floor, and the ratio of a trial's control to the controls'
//! median says how fast the machine was at that moment (control-normalised errors scale each
//! trial by it). It mixes what programs wait on: a dependent integer chain, and loads from a
//! table the size of a typical L2 cache.

use std::hint::black_box;
use std::time::Instant;

/// Words in the table (256 KiB).
const TABLE: usize = 1 << 15;
/// Steps of the chain (about 10 ms here).
const STEPS: u32 = 1 << 21;

/// Runs the control once and returns its wall time in nanoseconds.
pub fn run() -> f64 {
    let table: Vec<u64> = (0..TABLE as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let table = black_box(table);
    let start = Instant::now();
    let mut x: u64 = black_box(0x2545_F491_4F6C_DD1D);
    for _ in 0..STEPS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_add(table[(x as usize) & (TABLE - 1)]);
    }
    black_box(x);
    start.elapsed().as_nanos() as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_control_takes_measurable_time() {
        let ns = super::run();
        assert!(ns > 1e5 && ns < 1e9, "{ns} ns");
    }
}
