//! How well the compensated times are known. They rest on the probe costs measured in place
//! (rt/src/inplace.rs), each with the standard error of its pooled estimates; an event's cost is
//! uncertain by that much on every timed call, all of it taken out of the times of the routines
//! it runs under. The report says so in one line where it matters: when the uncertainty adds up
//! to more than a thousandth of the run.

use crate::view::event_name;
use instrument_profile::Profile;
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
        .filter_map(|(id, _, calls, untimed)| {
            let se = overhead.in_place_of(id)?.standard_error_ns;
            Some((calls.saturating_sub(untimed) as f64 * se, id))
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
}
