//! What the probes cost (Paradyn's cost model): the runtime measures one probe pair of every
//! kind and mode at start-up, on the path the program runs, and an event's overhead is its
//! activations times those costs. The same arithmetic serves the profile (measured counts) and
//! `instrument cost` (counts from an earlier run, predicted for another build or setting).
//!
//! The costs are those of probes back to back, where nothing hides them. In place, an
//! out-of-order processor overlaps a probe with the program's independent work: next to short
//! independent routines (fib, leaf) the model is within about 10 % of the real cost, next to a
//! long dependency chain (IS's randlc) the probes run in its shadow and the model is an upper
//! bound (`instrument bench probes` prints both).

use serde::{Deserialize, Serialize};

/// The measured probe costs and the overhead they add up to in this run.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    #[serde(flatten)]
    pub costs: ProbeCosts,
    /// How long measuring the costs took at start-up (not part of `total_ns`).
    pub calibration_ns: u64,
    /// Every event's activations times its probe costs, all threads, and with callpaths and
    /// compensation the steps that missed their node's cache (`ThreadCallpaths::step_misses`),
    /// with `estimation_ns` and `recalibration_ns`.
    pub total_ns: f64,
    /// `total_ns` as a share of the run's wall time, in percent (threads add up, so a
    /// multi-threaded run can exceed 100).
    pub percent_of_run: f64,
    /// What measuring in place cost outside every window: the estimations' window boundaries
    /// (closing one, pooling an estimate, opening the next), all threads; part of `total_ns`.
    /// 0 in profiles that did not record it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimation_ns: f64,
    /// What the rounds that measured the probes' costs again while the program ran took, all
    /// threads (compensation on: rt/src/recalibrate.rs); part of `total_ns`. 0 in profiles that
    /// did not record it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recalibration_ns: f64,
    /// Events whose probe costs were measured in place while the program ran (rt/src/inplace/:
    /// hot events with compensation on, throttled events always): `total_ns` counts their
    /// activations at these costs instead of `costs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_place: Vec<EventCosts>,
    /// What one inline count costs (a throttled routine's call counted by its own entry code,
    /// without a probe call: `Totals::inline_counted` of them): in place, as the double windows
    /// of the run's estimations measured it (a second count's cost where the routines run,
    /// pooled), else measured at start-up like the pairs, in a tight loop of dependent additions;
    /// 0 when the run's code cannot count inline (early placement, `INSTRUMENT_INLINE_COUNT=0`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inline_count_ns: f64,
    /// The share of the routine probes' counted activations that were inline counts. The
    /// runtime knows their number, not each event's, so every event's counted activations are
    /// taken as counted inline in this share, each at `inline_count_ns` or the event's counted
    /// cost, whichever is less.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inline_share: f64,
    /// What events without in-place costs of their own were charged: `costs` times this, the
    /// events in `in_place` weighed by their calls, their cost over their calibration (shrunk
    /// toward 1 by one average event of ratio 1; rt/src/population.rs). Compensation used the
    /// same scale, as it stood at each exit. 1 in profiles that did not record it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub unestimated_scale: f64,
    /// What a call kept on the shadow stack untimed (a callpath parent's counted windows) was
    /// charged: its calibration times this, the leaves' `pathed_ns` over that calibration
    /// weighed and shrunk as `unestimated_scale` is. 1 in profiles that did not record it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub pathed_scale: f64,
    /// The leaves whose pathed pair `pathed_scale` weighs (0: none, the scale is 1). A leaf
    /// whose pathed windows were buried in its own noise measured its calibration, and moved
    /// the scale nowhere. 0 in profiles that did not record it.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub pathed_scale_events: u64,
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// One event's probe pair costs measured in place, in nanoseconds.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EventCosts {
    pub id: u32,
    /// A timed activation.
    pub measured_ns: f64,
    /// A counted-only activation, over the run: what compensation charged it from each of the
    /// event's estimations on (their pool as the run went), weighed by the time each held.
    pub counted_ns: f64,
    /// The standard error of `measured_ns`: the uncertainty of the event's pooled in-place
    /// estimates (rt/src/pooling.rs). 0 in profiles that did not record it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub standard_error_ns: f64,
    /// Of `standard_error_ns`, the part of its counted-only activation's cost (`counted_ns` as
    /// compensation used it): every activation counted through the probe carries it. 0 where
    /// that cost is the calibration's, and in profiles that did not record it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub counted_standard_error_ns: f64,
    /// What one of its untimed activations cost in place, on the mean over the ways it was
    /// counted from its first estimation on, each for the share of the time it held: inline by
    /// its own entry code (at most `Overhead::inline_count_ns`), or through the counted probe
    /// while its windows measured the inline count dearer (rt/src/inplace/). Absent where no window
    /// compared the two (its code cannot count inline, or the run does not): its untimed
    /// activations then count inline in `Overhead::inline_share`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed_ns: Option<f64>,
    /// What counting one call inline cost over counting it through the probe, on the mean of
    /// the event's estimations (may be negative), with that mean's standard error: the event
    /// counts through the probe where this is over two standard errors above zero. Absent where
    /// no window compared the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_extra_ns: Option<(f64, f64)>,
    /// The part of `measured_ns` inside the event's own interval, as its windows with fenced
    /// entries measured it (the mean of its estimations'), which compensation took from the
    /// event's time; absent where they did not and the calibration's share split it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside_ns: Option<f64>,
    /// What `counted_ns` was measured against, of the event's measurements pooled over its
    /// estimations as its latest estimate used them (`InPlaceCost::counted_reference` names
    /// each estimation's own). Absent in profiles before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_reference: Option<crate::CountedReference>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

impl EventCosts {
    /// These costs as a pair's, with `off_ns` for a switched-off activation (never measured in
    /// place).
    pub fn pair(&self, off_ns: f64) -> PairCosts {
        PairCosts { measured_ns: self.measured_ns, counted_ns: self.counted_ns, off_ns }
    }
}

/// What a probe pair costs, per probe kind.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeCosts {
    /// Routine and call-statement probes.
    pub routine: PairCosts,
    /// Loop probes.
    #[serde(rename = "loop")]
    pub loop_probe: PairCosts,
}

/// One probe kind's cost per activation (entry and exit probe) in each mode, in nanoseconds.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PairCosts {
    /// Timed: both clock reads and the shadow-stack work.
    pub measured_ns: f64,
    /// Counted only (throttled, or being switched off).
    pub counted_ns: f64,
    /// Switched off: the probes return after testing the mode byte.
    pub off_ns: f64,
}

impl PairCosts {
    /// The cost of `timed` measured and `counted` counted activations.
    pub fn of(&self, timed: u64, counted: u64) -> f64 {
        timed as f64 * self.measured_ns + counted as f64 * self.counted_ns
    }

    /// These costs with the timed pair's scaled by `scale` (an unestimated event's,
    /// `Overhead::unestimated_scale`).
    pub fn timed_scaled(&self, scale: f64) -> PairCosts {
        PairCosts { measured_ns: self.measured_ns * scale, ..*self }
    }
}

/// The probe kinds whose costs differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    Routine,
    Loop,
}

impl ProbeCosts {
    /// The cost of `calls` activations of a `kind` event, `untimed` of them counted only.
    pub fn of(&self, kind: ProbeKind, calls: u64, untimed: u64) -> f64 {
        self.kind(kind).of(calls.saturating_sub(untimed), untimed)
    }

    pub fn kind(&self, kind: ProbeKind) -> &PairCosts {
        match kind {
            ProbeKind::Routine => &self.routine,
            ProbeKind::Loop => &self.loop_probe,
        }
    }
}

impl crate::Profile {
    /// Every event (routine, loop, call statement) with its id, probe kind, activations and
    /// the activations counted without timing.
    pub fn activations(&self) -> impl Iterator<Item = (u32, ProbeKind, u64, u64)> + '_ {
        self.event_stats().map(|(id, kind, s)| (id, kind, s.calls, s.untimed_calls))
    }

    /// Every event (routine, loop, call statement) with its id, probe kind and statistics.
    pub fn event_stats(&self) -> impl Iterator<Item = (u32, ProbeKind, &crate::Stats)> + '_ {
        let routines = self.functions.iter().map(|f| (f.id, ProbeKind::Routine, &f.stats));
        let loops = self.loops.iter().map(|l| (l.id, ProbeKind::Loop, &l.stats));
        let sites = self.callsites.iter().map(|c| (c.id, ProbeKind::Routine, &c.stats));
        routines.chain(loops).chain(sites)
    }

    /// The probe overhead in nanoseconds of `calls` activations of event `id` (a `kind` probe),
    /// `untimed` of them counted only: at its in-place costs where they were measured, else at
    /// the profile's calibrated costs (0 when the profile has none).
    pub fn overhead_of(&self, id: u32, kind: ProbeKind, calls: u64, untimed: u64) -> f64 {
        self.overhead.as_ref().map_or(0.0, |o| o.of_event(id, kind, calls, untimed))
    }
}

impl Overhead {
    /// Event `id`'s costs measured in place, if it has some.
    pub fn in_place_of(&self, id: u32) -> Option<&EventCosts> {
        self.in_place.iter().find(|e| e.id == id)
    }

    /// The share of a `kind` probe's untimed activations counted inline (`inline_share`, routines
    /// only: loops and call statements count through the probe).
    pub fn inline_share_of(&self, kind: ProbeKind) -> f64 {
        if kind == ProbeKind::Routine {
            self.inline_share.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// [`crate::Profile::overhead_of`] with this section's costs.
    pub fn of_event(&self, id: u32, kind: ProbeKind, calls: u64, untimed: u64) -> f64 {
        let in_place = self.in_place_of(id);
        if let Some((e, untimed_ns)) = in_place.and_then(|e| e.untimed_ns.map(|ns| (e, ns))) {
            return e.pair(0.0).of(calls.saturating_sub(untimed), 0) + untimed as f64 * untimed_ns;
        }
        let pair = match in_place {
            Some(e) => e.pair(0.0),
            None => self.costs.kind(kind).timed_scaled(self.unestimated_scale),
        };
        let inline = untimed as f64 * self.inline_share_of(kind);
        pair.of(calls.saturating_sub(untimed), 0)
            + (untimed as f64 - inline) * pair.counted_ns
            + inline * self.inline_count_ns.min(pair.counted_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overhead(in_place: Vec<EventCosts>) -> Overhead {
        let pair = PairCosts { measured_ns: 30.0, counted_ns: 5.0, off_ns: 2.0 };
        Overhead {
            costs: ProbeCosts { routine: pair, loop_probe: pair },
            calibration_ns: 0,
            total_ns: 0.0,
            percent_of_run: 0.0,
            estimation_ns: 0.0,
            recalibration_ns: 0.0,
            in_place,
            inline_count_ns: 1.0,
            inline_share: 0.5,
            unestimated_scale: 1.0,
            pathed_scale: 1.0,
            pathed_scale_events: 0,
        }
    }

    #[test]
    fn untimed_calls_cost_what_their_mode_measured_else_the_inline_share_splits_them() {
        let event = |untimed_ns| EventCosts {
            id: 3,
            measured_ns: 20.0,
            counted_ns: 0.25,
            standard_error_ns: 0.0,
            counted_standard_error_ns: 0.0,
            untimed_ns,
            inline_extra_ns: None,
            inside_ns: None,
            counted_reference: None,
        };
        // 10 timed calls at 20 ns, 100 untimed at what their mode cost in place.
        let settled = overhead(vec![event(Some(0.75))]);
        assert_eq!(settled.of_event(3, ProbeKind::Routine, 110, 100), 200.0 + 75.0);
        // Without that, half of them inline at the lesser of the inline and counted costs.
        let shared = overhead(vec![event(None)]);
        assert_eq!(shared.of_event(3, ProbeKind::Routine, 110, 100), 200.0 + 50.0 * 0.25 + 50.0 * 0.25);
        // An event with no in-place costs: the calibration.
        assert_eq!(shared.of_event(4, ProbeKind::Routine, 110, 100), 300.0 + 50.0 * 5.0 + 50.0 * 1.0);
    }
}
