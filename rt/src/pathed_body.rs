//! What a pathed probe pair's own work costs in place over its calibration, sampled.
//!
//! A callpath parent that is throttled stays on the shadow stack untimed (`switch::PATHED`):
//! its entry counts the call and pushes a frame with the step to its node, its exit pops it and
//! hands its children's times to its caller (`probes::enter_pathed`, `probes::close_untimed`).
//! No window can measure that pair against a cheaper one (a counted call would put its
//! children on paths that skip it), so every pathed call was charged its calibration, scaled
//! by what leaves' pathed windows measured of theirs (`population::PATHED`). The calibration's
//! loop runs one event with its lines in cache; on SQLite's shell a pathed call spent about 50
//! ns in those two bodies (`perf`: `enter_pathed` 10.8 % of the paired program's samples,
//! `close_untimed`, `exit_other` and their register saves 7 %, over 38.7 M pathed calls) where
//! it was charged 22 (compensated callpath steps -16 ns a probed call against the plain copy's,
//! flat ones -0.5).
//!
//! So with compensation on, each thread's tree times a sample of its pathed entries' and exits'
//! bodies, one in `SAMPLE_EVERY`, as misses.rs times a miss, and the same bodies in the
//! calibration's loop (the hidden child's pathed pairs, `overhead::is_child`). What the bodies
//! cost in place over what they cost there is the excess every pathed call is charged on top of
//! its scaled calibration, to the frame on top at its entry (whose time holds both bodies). A
//! sampled entry whose step missed its node's cache is not kept: misses are charged apart
//! (misses.rs). A leaf's pathed windows measure its whole pair in place, excess included, so
//! the scale they give is taken against the calibration plus the excess (inplace's
//! `pathed_in_place`): nothing is charged twice.

use crate::misses::Misses;

/// One pathed body in this many is timed: the three clock reads of a sample cost a pathed call
/// about 5 ns at one in 16 (Lua's interpreter, whose probed calls are mostly pathed ones, ran
/// 6 to 12 ns a probed call dearer in place), a fifth of that here; SQLite's shell makes 38 M
/// pathed calls, the calibration's loops 10 000 a round.
const SAMPLE_EVERY: u32 = 64;

/// Sampled pathed bodies of one thread: entries and exits, in place and in the calibration's
/// loop.
pub struct PathedBodies {
    entry: Misses,
    exit: Misses,
    calibrated_entry: Misses,
    calibrated_exit: Misses,
}

/// Which body a sample is of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Body {
    Entry,
    Exit,
}

impl Default for PathedBodies {
    fn default() -> PathedBodies {
        let sampler = || Misses::sampling(SAMPLE_EVERY);
        PathedBodies {
            entry: sampler(),
            exit: sampler(),
            calibrated_entry: sampler(),
            calibrated_exit: sampler(),
        }
    }
}

impl PathedBodies {
    /// The sampler of `body`, in the calibration's loop when `calibrating`.
    #[inline(always)]
    pub fn sampler(&mut self, body: Body, calibrating: bool) -> &mut Misses {
        match (body, calibrating) {
            (Body::Entry, false) => &mut self.entry,
            (Body::Exit, false) => &mut self.exit,
            (Body::Entry, true) => &mut self.calibrated_entry,
            (Body::Exit, true) => &mut self.calibrated_exit,
        }
    }

    /// What a pathed call's bodies cost in place over their calibration (scaled ticks), 0 until
    /// both have enough samples of each.
    #[inline(always)]
    pub fn excess(&self) -> u64 {
        let calibrated = [self.calibrated_entry.charge(), self.calibrated_exit.charge()];
        let in_place = [self.entry.charge(), self.exit.charge()];
        if calibrated.contains(&0) || in_place.contains(&0) {
            return 0;
        }
        (in_place[0] + in_place[1]).saturating_sub(calibrated[0] + calibrated[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled(bodies: &mut PathedBodies, body: Body, calibrating: bool, ticks: u64) {
        for _ in 0..64 {
            bodies.sampler(body, calibrating).add(ticks, 0);
        }
    }

    /// Bodies sampled at (entry, exit) ticks in place and in the calibration's loop.
    fn bodies(in_place: (u64, u64), calibrated: (u64, u64)) -> PathedBodies {
        let mut bodies = PathedBodies::default();
        for (body, calibrating, ticks) in [
            (Body::Entry, false, in_place.0),
            (Body::Exit, false, in_place.1),
            (Body::Entry, true, calibrated.0),
            (Body::Exit, true, calibrated.1),
        ] {
            sampled(&mut bodies, body, calibrating, ticks);
        }
        bodies
    }

    #[test]
    fn the_excess_is_what_both_bodies_cost_over_their_calibration_once_all_four_are_sampled() {
        let scaled = |t: u64| t << crate::overhead::SCALE;
        assert_eq!(bodies((60, 30), (20, 10)).excess(), scaled(60 + 30) - scaled(20 + 10));
        let mut partly = PathedBodies::default();
        sampled(&mut partly, Body::Entry, false, 60);
        sampled(&mut partly, Body::Exit, false, 30);
        sampled(&mut partly, Body::Entry, true, 20);
        assert_eq!(partly.excess(), 0, "the calibrated exit not sampled yet");
    }

    #[test]
    fn bodies_cheaper_in_place_than_calibrated_have_no_excess() {
        assert_eq!(bodies((10, 10), (20, 20)).excess(), 0);
    }
}
