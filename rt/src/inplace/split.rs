//! How a timed pair's in-place cost divides between the event and its caller, from the windows
//! whose entries fence their timestamps (`Window::Fenced`).

use super::{Windows, MIN_PAIRS};
use crate::clock;
use crate::overhead::{self, STANDARD};

/// Whether estimations of events with probes of `kind` open split windows (`Window::Fenced`):
/// routine and call-statement probes, in a run whose exits read the TSC with an unfenced
/// `rdtscp` (the fenced strategy's probes stay as calibrated in place, its split with them),
/// once the fenced pair's inside part is calibrated.
///
/// Why they exist: the windows give an event's exclusive time with its timed pair (its own
/// time and the pair's inside part) and the whole pair's cost over counting, never how that
/// cost divides between the event and its caller, which compensation needs. The calibration's
/// split (the part inside the interval in a tight loop, about half) is wrong in place: the
/// inside part is mostly the entry's own unfinished work, which the exit's `rdtscp` waits for,
/// and next to a dependency chain that work runs in the chain's shadow. A step of eight
/// dependent multiply-adds, 1 M calls (`c-fixtures/compensation.c`), came out at 52 to 60 % of
/// its caller compensated, where the chain is nearly all of it (AMD EPYC). With the entry's
/// timestamp taken after an `lfence`, nothing of the caller's or the entry's work is left
/// inside, and the inside part is what the fenced pair's calibration says (`fenced_own`): so
/// the fenced windows give the event's own time, and the timed windows less that its pair's
/// inside part, in place.
pub(super) fn splits(kind: usize) -> bool {
    kind == STANDARD && clock::plain_tsc() && overhead::fenced_own() != 0
}

/// Fenced (and timed) windows below which an estimation has no split.
pub(super) const MIN_SPLIT: usize = MIN_PAIRS / 4;

/// The split windows' measurement (`splits`), scaled ticks per execution: the event's own time
/// (the fenced windows' median exclusive time less the fenced pair's calibrated inside part)
/// and the timed pair's inside part (the timed windows' median less that own time). None
/// without enough of both.
///
/// The own time is at most the counted windows' median time per execution (the event's own
/// time, its caller's between two calls, and the counted pair's cost): where the program's data
/// evicts the probes' (the ground truth's cache-miss context), the fenced pair's inside part
/// misses the cache in place as it never does in calibration, and the fenced windows alone
/// gave a 45 ns routine 210 to 230 ns of its own.
pub(super) fn split_of(w: &mut Windows) -> Option<(u64, u64)> {
    let calibrated = overhead::fenced_own();
    if [w.fenced_means.len(), w.timed_means.len(), w.counted_means.len()].into_iter().any(|n| n < MIN_SPLIT) {
        return None;
    }
    let fenced = median(w.fenced_means.values());
    let timed = median(w.timed_means.values());
    let counted = median(w.counted_means.values());
    let own = fenced.saturating_sub(calibrated).min(counted);
    Some((own, timed.saturating_sub(own)))
}

/// The median of `values` (sorted in place), which are not empty.
pub(super) fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inplace::series::Series;
    use crate::inplace::IDLE_WINDOWS;
    use crate::overhead::SCALE;

    /// A series of window means (ns, scaled).
    fn means(ns: &[u64]) -> Series<u64> {
        let mut series = Series::new(0);
        ns.iter().for_each(|&ns| series.push(ns << SCALE));
        series
    }

    #[test]
    fn the_split_is_the_timed_windows_less_the_fenced_ones_own_time() {
        overhead::set_fenced_own(40 << SCALE);
        let mut w = Box::new(IDLE_WINDOWS);
        // Too few fenced windows: no split.
        w.fenced_means = means(&[52; MIN_SPLIT - 1]);
        w.timed_means = means(&[28; MIN_SPLIT]);
        w.counted_means = means(&[15; MIN_SPLIT]);
        assert_eq!(split_of(&mut w), None);
        // Fenced windows at 52 ns (an outlier at 90), timed ones at 28 ns (one at 70): the
        // event's own time is 52 - 40 = 12 ns, and 28 - 12 = 16 ns of the timed pair is inside.
        w.fenced_means = means(&[52, 90, 52, 51, 53, 52]);
        w.timed_means = means(&[28, 28, 70, 27, 29, 28]);
        assert_eq!(split_of(&mut w), Some((12 << SCALE, 16 << SCALE)));
        // Fenced windows cheaper than the calibration: no own time, the whole of it inside.
        w.fenced_means = means(&[30; MIN_SPLIT]);
        assert_eq!(split_of(&mut w), Some((0, 28 << SCALE)));
        // Fenced windows dearer than a whole counted execution: the own time is that at most.
        w.fenced_means = means(&[90; MIN_SPLIT]);
        assert_eq!(split_of(&mut w), Some((15 << SCALE, 13 << SCALE)));
    }
}
