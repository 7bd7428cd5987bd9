//! The note that says how long the program's threads waited for a core while runnable (the
//! runtime's `Totals::waited_ns`). Those waits are inside the times of whatever event a thread
//! was preempted in, and nothing removes them: on a shared machine a short run can spend a third
//! of its time waiting, and a profile that does not say so reads as exact.

use instrument_profile::Totals;

/// The share of the run above which the waits are worth a line: a percent, as much as the run's
/// own noise on a quiet machine.
const WORTH_SAYING: f64 = 0.01;

/// The line, when the threads waited long enough to matter.
pub fn note(totals: &Totals) -> Option<String> {
    let (waited, wall) = (totals.waited_ns as f64, totals.wall_ns as f64);
    if waited <= WORTH_SAYING * wall {
        return None;
    }
    let threads =
        if totals.threads > 1 { format!(", summed over {} threads", totals.threads) } else { String::new() };
    Some(format!(
        "threads waited {:.3} ms for a core while runnable ({:.1} % of the run's wall time{threads}): \
         other programs had the cores, and each wait is in the times of the event it fell in",
        waited / 1e6,
        100.0 * waited / wall
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(wall_ns: u64, waited_ns: u64, threads: u64) -> Totals {
        Totals { wall_ns, waited_ns, threads, ..Totals::default() }
    }

    #[test]
    fn waits_over_a_percent_of_the_run_are_said() {
        assert_eq!(note(&totals(100_000_000, 1_000_000, 1)), None, "a percent is not over it");
        assert_eq!(
            note(&totals(100_000_000, 25_000_000, 1)).unwrap(),
            "threads waited 25.000 ms for a core while runnable (25.0 % of the run's wall time): \
             other programs had the cores, and each wait is in the times of the event it fell in"
        );
        assert!(note(&totals(100_000_000, 2_000_000, 4))
            .unwrap()
            .contains("(2.0 % of the run's wall time, summed over 4 threads)"));
        assert_eq!(note(&totals(0, 0, 1)), None);
    }
}
