//! How well the compensated times are known. They rest on the probe costs measured in place
//! (rt/src/inplace/), each with the standard error of its pooled estimates; an event's cost is
//! uncertain by that much on every timed call, and by its counted pair's part on every call
//! counted through the probe (the part both share moves them together), all of it taken out of
//! the times of the routines it runs under. Without the counted calls, a throttled callpath
//! profile of Lua said nothing where compensation took out 1384 ms for probes that cost 1026 in
//! place: `lua_settop`'s 10.6 M counted calls were charged 35 ns each on a measurement of 35
//! ±28. The report says so in one line where it matters: when the uncertainty adds up to more
//! than a thousandth of the run. A second line names the events whose own time is mostly
//! what compensation took out of it (`split_note`).

use crate::view::event_name;
use instrument_profile::{EventCosts, Overhead, ProbeKind, Profile};
use std::fmt::Write;

/// The share of the run (wall time) above which the uncertainty is worth a line.
const WORTH_SAYING: f64 = 0.001;
/// Events named.
const NAMED: usize = 3;

/// The line, for a profile with in-place costs whose uncertainty matters.
pub fn note(profile: &Profile) -> Option<String> {
    let overhead = profile.overhead.as_ref()?;
    let mut events: Vec<(f64, u32)> = profile
        .activations()
        .filter_map(|(id, kind, calls, untimed)| {
            let costs = overhead.in_place_of(id)?;
            Some((event_uncertainty(overhead, costs, kind, calls, untimed), id))
        })
        .filter(|&(ns, _)| ns > 0.0)
        .collect();
    // Events' estimates are independent: their uncertainties add in quadrature.
    let total = events.iter().map(|(ns, _)| ns * ns).sum::<f64>().sqrt();
    if total <= WORTH_SAYING * profile.totals.wall_ns as f64 {
        return None;
    }
    events.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut line = format!(
        "compensated times are estimates: the probe costs measured in place are known to ±{:.3} ms in all (",
        total / 1e6
    );
    for (i, (ns, id)) in events.iter().take(NAMED).enumerate() {
        let _ =
            write!(line, "{}{} ±{:.3} ms", if i > 0 { ", " } else { "" }, event_name(profile, *id), ns / 1e6);
    }
    line.push_str("), which the times of the routines they run under carry");
    Some(line)
}

/// How uncertain (ns) what compensation took out for an event's activations is: `calls`, of
/// which `untimed` counted only, those through the probe the share the inline counts left
/// (`Overhead::inline_share_of`, as the overhead figure splits them). A timed call is charged its pair's difference over
/// a counted one plus the counted pair's cost, a call counted through the probe the latter: its
/// error is common to both.
fn event_uncertainty(
    overhead: &Overhead,
    costs: &EventCosts,
    kind: ProbeKind,
    calls: u64,
    untimed: u64,
) -> f64 {
    let timed = calls.saturating_sub(untimed) as f64;
    let counted = untimed as f64 * (1.0 - overhead.inline_share_of(kind));
    let counted_se = costs.counted_standard_error_ns.min(costs.standard_error_ns);
    let difference_se = (costs.standard_error_ns.powi(2) - counted_se.powi(2)).max(0.0).sqrt();
    (timed * difference_se).hypot((timed + counted) * counted_se)
}

/// The line naming the events whose compensated exclusive time is less than what compensation
/// took out of it, where that matters (over a thousandth of the run taken out). Their own time is
/// then mostly the subtraction, and how each probe pair's cost divides between an event and its
/// caller is calibrated, not measured: no window can tell, since a window's timestamps add up to
/// its duration whatever the split. On the ground truth (`probe-context`'s kernel column) the
/// split is off by 1-2 ns a call, the whole time of a 3 ns routine.
pub fn split_note(profile: &Profile) -> Option<String> {
    let worth = WORTH_SAYING * profile.totals.wall_ns as f64;
    let mut events: Vec<(i64, u32, i64)> = profile
        .event_stats()
        .filter_map(|(id, _, s)| {
            let left = s.compensated?.exclusive_ns;
            let removed = s.exclusive_ns as i64 - left;
            (removed as f64 > worth && left < removed).then_some((removed, id, left))
        })
        .collect();
    if events.is_empty() {
        return None;
    }
    events.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut line =
        format!("note: compensation took more out of {} event(s)' own time than it left (", events.len());
    for (i, (removed, id, left)) in events.iter().take(NAMED).enumerate() {
        let (left, measured) = (*left as f64 / 1e6, (removed + left) as f64 / 1e6);
        let sep = if i > 0 { ", " } else { "" };
        let _ = write!(line, "{sep}{} {left:.3} ms left of {measured:.3} ms", event_name(profile, *id));
    }
    line.push_str(
        "): their own times are within how a probe pair's cost divides between an event and its caller, which is \
         calibrated, not measured",
    );
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile of `wall_ns` whose routine `hot` made `calls` timed calls at an in-place cost
    /// known to `se_ns`.
    fn profile(wall_ns: u64, calls: u64, se_ns: f64) -> Profile {
        let costs = serde_json::json!({"measured_ns": 17.0, "counted_ns": 2.0, "off_ns": 1.0});
        serde_json::from_value(serde_json::json!({
            "format": "instrument-profile", "version": 3, "command": ["p"], "pid": 1,
            "clock": {"source": "tsc", "ticks_per_second": 2.6e9, "calibration_ns": 1_000_000},
            "totals": {"wall_ns": wall_ns, "threads": 1, "threads_running_at_exit": 0, "events": calls,
                       "frames_closed_at_exit": 0, "frames_reconciled": 0, "stack_overflow_events": 0,
                       "unmatched_exits": 0, "unregistered_events": 0},
            "functions": [{"id": 7, "name": "hot", "file": "h.c", "line": 1, "language": "c",
                           "calls": calls, "child_calls": 0, "exclusive_ns": 0, "inclusive_ns": 0}],
            "overhead": {"routine": costs, "loop": costs, "calibration_ns": 0,
                         "total_ns": 0.0, "percent_of_run": 0.0,
                         "in_place": [{"id": 7, "measured_ns": 10.0, "counted_ns": 0.0,
                                       "standard_error_ns": se_ns}]},
        }))
        .expect("a profile")
    }

    /// `profile`'s routine measured at `raw_ns` exclusive, compensated to `left_ns`.
    fn compensated(wall_ns: u64, raw_ns: u64, left_ns: i64) -> Profile {
        let mut p = profile(wall_ns, 1000, 0.0);
        p.functions[0].stats.exclusive_ns = raw_ns;
        p.functions[0].stats.compensated = Some(instrument_profile::Compensated {
            inclusive_ns: left_ns,
            exclusive_ns: left_ns,
            negative: 0,
        });
        p
    }

    #[test]
    fn events_left_with_less_than_was_taken_out_are_named_where_it_matters() {
        let line = split_note(&compensated(1_000_000_000, 12_000_000, 3_000_000)).expect("9 ms out, 3 left");
        assert!(
            line.contains("1 event(s)' own time than it left (hot 3.000 ms left of 12.000 ms)"),
            "{line}"
        );
        assert_eq!(
            split_note(&compensated(1_000_000_000, 12_000_000, 7_000_000)),
            None,
            "more left than out"
        );
        assert_eq!(
            split_note(&compensated(1_000_000_000, 900_000, 0)),
            None,
            "under a thousandth of the run"
        );
        assert!(split_note(&compensated(1_000_000_000, 2_000_000, -1_000_000)).is_some(), "below zero");
    }

    #[test]
    fn the_uncertainty_is_said_where_it_matters() {
        // 1 M calls at ±2 ns: ±2 ms, in a run of 1 s.
        let line = note(&profile(1_000_000_000, 1_000_000, 2.0)).expect("over a thousandth of the run");
        assert!(line.contains("±2.000 ms in all (hot ±2.000 ms)"), "{line}");
        assert_eq!(note(&profile(1_000_000_000, 1_000_000, 0.5)), None, "±0.5 ms in 1 s");
        assert_eq!(
            note(&profile(1_000_000_000, 1_000_000, 0.0)),
            None,
            "an older profile: no error recorded"
        );
    }

    #[test]
    fn calls_counted_through_the_probe_carry_their_counted_costs_error() {
        // 100 000 timed calls at ±2 ns (±0.2 ms alone), 10 M counted with the counted pair's
        // cost known to ±1.6 ns (of those 2: the difference's ±1.2).
        let mut p = profile(1_000_000_000, 10_100_000, 2.0);
        p.functions[0].stats.untimed_calls = 10_000_000;
        let overhead = p.overhead.as_mut().expect("overhead");
        overhead.in_place[0].counted_standard_error_ns = 1.6;
        let expected = (100_000.0f64 * 1.2).hypot(10_100_000.0 * 1.6) / 1e6;
        let line = note(&p).expect("the counted calls' error matters");
        assert!(line.contains(&format!("±{expected:.3} ms in all")), "{expected}: {line}");
        // Half of them counted inline (charged the inline count's cost, not the event's).
        p.overhead.as_mut().expect("overhead").inline_share = 0.5;
        let expected = (100_000.0f64 * 1.2).hypot(5_100_000.0 * 1.6) / 1e6;
        let line = note(&p).expect("still over a thousandth");
        assert!(line.contains(&format!("±{expected:.3} ms in all")), "{expected}: {line}");
    }
}
