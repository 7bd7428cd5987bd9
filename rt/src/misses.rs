//! What a callpath step that misses its node's cache costs, measured where it happens.
//!
//! In a callpath profile every entry steps from its parent's node to its own. A node caches its
//! last six steps (callpath.rs): a parent that calls the same child again, or cycles through a
//! few, finds it in its node's first line, and that is the path the calibration measures (its
//! loop calls one event). A parent that cycles through more children misses that cache and
//! finds the child through its static slots or the transitions map, in memory the program's own
//! data keeps evicting. On SQLite's shell 55 % of
//! all entries missed (16.5 M of 30 M), and callpath profiles' compensated main came out 28-40 %
//! above PA-off against 6 % for flat ones: the misses were charged nowhere, and the in-place
//! estimates, which see them, existed only for leaves then (a parent's counted windows are
//! pathed now, inplace's `keeps_path`, and step as its timed ones do).
//!
//! So with compensation on, each thread times a sample of its misses in place: one in
//! `SAMPLE_EVERY`, with a clock read before and after the miss's work and one more just before,
//! whose difference from the first is the reads' own cost. Compensation charges every miss the
//! mean difference (and the sampling's share of its extra reads) to the frame on top, whose time
//! it inflated: the step runs before the new frame's clock read. The sample times the step
//! alone, while a miss also takes its probe out of the assembly paths (timed_path.rs,
//! pathed_path.rs, which find only cached steps) into the Rust bodies: with a parent cycling
//! through seven children that call a leaf (the shape of `probe-context`'s dispatch context,
//! whose callpath error was -12 %), misses were sampled at 6.5 ns and each left about 14 ns
//! more uncharged; on SQLite's shell, whose
//! statement loop calls seven hot routines, callpath profiles kept 5 to 7 ns a call in the
//! insert phase. So a miss is charged at least the calibrated missed step
//! (`overhead::Untimed::step_miss`: the pathed pair with its step forgotten before each pair,
//! over the pair that finds it). A miss that created a node is
//! not sampled, since creation is kept out of every frame's time already (`Tree::create`). An
//! in-place estimate measures its event's pairs with the event's own misses inside, so it takes
//! out what those misses are charged this way (`inplace::note_miss`): no miss is charged twice.
//!
//! A counted call (a throttled leaf's) steps to its node too, and one that misses leaves the
//! counted path in assembly for the probe's body as a timed entry does: it is charged the same,
//! to the frame on top (`probes::stays_counted`), and its event's counted windows leave their
//! misses out of the counted call they measure (`inplace::note_miss`). Before, only the
//! counted windows' own misses reached the charge, in every counted call: too much where the
//! windows that keep the caller's cache (`inplace::keeps_step`) missed at every call, nothing
//! where the event's phase of misses came after its estimation (SQLite's nas-paired harness,
//! callpaths throttled: -1.92 ±0.79 -> -1.16 ±0.46 ns a probed call, 4 processes each).

use crate::clock;
use crate::overhead::SCALE;

/// One miss in this many is timed.
const SAMPLE_EVERY: u32 = 16;
/// Samples before the mean is charged: until then a miss is charged the calibrated missed step
/// alone (nothing without one).
const MIN_SAMPLES: u64 = 16;

/// A thread's sampled misses (in its callpath tree).
#[derive(Default)]
pub struct Misses {
    countdown: u32,
    samples: u64,
    /// Ticks of the sampled misses, each with one clock read, and of as many lone clock reads.
    full: u64,
    empty: u64,
    /// The sampled misses' mean, scaled ticks (the sample's part of what a miss is charged,
    /// `charge_of`), and the misses charged (`charged`).
    sampled: u64,
    count: u64,
}

impl Misses {
    /// Whether this miss is to be timed (one in `SAMPLE_EVERY`).
    #[inline(always)]
    pub fn due(&mut self) -> bool {
        if self.countdown == 0 {
            self.countdown = SAMPLE_EVERY - 1;
            return true;
        }
        self.countdown -= 1;
        false
    }

    /// Times `work` (a miss's), unless it `created` a node (it says so afterwards).
    #[inline(always)]
    pub fn time<T>(&mut self, work: impl FnOnce() -> (T, bool)) -> T {
        let before = clock::now();
        let start = clock::now();
        let (result, created) = work();
        let end = clock::now();
        if !created {
            self.add(end.saturating_sub(start), start.saturating_sub(before));
        }
        result
    }

    fn add(&mut self, full: u64, empty: u64) {
        self.samples += 1;
        self.full += full;
        self.empty += empty;
        if self.samples >= MIN_SAMPLES {
            self.sampled = charge(self.full, self.empty, self.samples);
        }
    }

    /// What a miss is charged now (scaled ticks): `charge_of` the sample's mean and the
    /// calibrated missed step.
    pub fn charge(&self) -> u64 {
        charge_of(self.sampled(), crate::compensate::step_miss_cost())
    }

    /// The sampled misses' mean (scaled ticks; 0 before `MIN_SAMPLES`).
    pub fn sampled(&self) -> u64 {
        self.sampled
    }

    /// A miss to charge: what it is charged (scaled ticks), counted.
    #[inline(always)]
    pub fn charged(&mut self) -> u64 {
        self.count += 1;
        self.charge()
    }

    /// The misses charged so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// What a miss is charged (scaled ticks): the sampled step (`sampled`, in place) or the
/// calibrated missed step (`calibrated`, which also holds the trip into the Rust bodies), the
/// larger: each sees what the other cannot.
fn charge_of(sampled: u64, calibrated: u64) -> u64 {
    sampled.max(calibrated)
}

/// The mean miss over `samples` (scaled ticks): full less empty, plus the sample's three extra
/// clock reads (about one and a half lone reads' worth) shared among `SAMPLE_EVERY` misses.
fn charge(full: u64, empty: u64, samples: u64) -> u64 {
    let work = full.saturating_sub(empty);
    let reads = empty * 3 / 2 / u64::from(SAMPLE_EVERY);
    ((work + reads) << SCALE) / samples.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_miss_in_sample_every_is_timed() {
        let mut m = Misses::default();
        let due: Vec<bool> = (0..2 * SAMPLE_EVERY).map(|_| m.due()).collect();
        assert_eq!(due.iter().filter(|&&d| d).count(), 2);
        assert!(due[0] && due[SAMPLE_EVERY as usize]);
    }

    #[test]
    fn a_miss_is_charged_its_work_and_the_sampling_share() {
        // 16 samples of 100 ticks of work, each read 20 ticks: (100 + 20 * 3/2 / 16) per miss.
        let charge = charge(16 * 120, 16 * 20, 16);
        assert_eq!(charge, ((16 * 100 + 16 * 20 * 3 / 2 / 16) << SCALE) / 16);
        assert_eq!(super::charge(10, 50, 1), (50 * 3 / 2 / 16) << SCALE, "a read slower than the work");
    }

    #[test]
    fn a_miss_is_charged_the_larger_of_its_sample_and_the_calibrated_missed_step() {
        assert_eq!(charge_of(0, 0), 0, "nothing measured yet");
        assert_eq!(charge_of(300, 0), 300, "no callpath calibration: the sample");
        assert_eq!(charge_of(300, 900), 900, "the trip into the bodies the sample cannot see");
        assert_eq!(charge_of(1200, 900), 1200, "a step dearer in place than in the calibration");
    }

    #[test]
    fn nothing_is_charged_before_enough_samples() {
        let mut m = Misses::default();
        for _ in 0..MIN_SAMPLES - 1 {
            m.add(100, 10);
        }
        assert_eq!(m.sampled(), 0);
        m.add(100, 10);
        assert!(m.sampled() > 0);
    }
}
