//! The prediction: every event of an earlier profile, its activations split into timed,
//! counted-only and switched-off ones as another build or run setting would split them, times
//! probe costs per activation. Pure arithmetic on a profile, so it is tested without running
//! anything.

use instrument_profile::{PairCosts, ProbeCosts as Costs, ProbeKind, Profile, Stats};
use instrument_select::Selection;
use serde::Serialize;
use std::collections::HashMap;

/// TAU's throttling rule: after `calls` timed calls on a thread at under `per_call_ns` each,
/// an event is only counted.
#[derive(Debug, Clone, Copy)]
pub struct Throttle {
    pub calls: u64,
    pub per_call_ns: f64,
}

/// The build and run to predict for.
pub struct Setting<'a> {
    /// Build-time selection (INSTRUMENT_SELECT): excluded routines have no probes at all.
    pub build: Option<&'a Selection>,
    /// Run-time selection (INSTRUMENT_RUNTIME_SELECT): excluded routines' probes are off.
    pub runtime: Option<&'a Selection>,
    pub throttle: Option<Throttle>,
}

/// What happens to an event's probes in the predicted setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    Measured,
    /// Measured until TAU's rule throttles it, counted only after.
    Throttled,
    /// Switched off by the run-time selection.
    Off,
    /// Left out of the build.
    Excluded,
}

/// One event's predicted activations and their cost.
#[derive(Debug, Clone, Serialize)]
pub struct Predicted {
    pub id: u32,
    #[serde(skip)]
    pub kind: ProbeKind,
    pub fate: Fate,
    pub calls: u64,
    pub timed: u64,
    pub counted: u64,
    pub off: u64,
    pub overhead_ns: f64,
}

/// Every event of `profile`, most costly first (then by id).
pub fn predict(profile: &Profile, costs: &Costs, setting: &Setting) -> Vec<Predicted> {
    let routine_fates = routine_fates(profile, setting);
    let owners = owners(profile);
    let shares = shares(profile);
    let routines: std::collections::HashSet<u32> = profile.functions.iter().map(|f| f.id).collect();
    let mut predicted: Vec<Predicted> = profile
        .activations()
        .map(|(id, kind, calls, _)| {
            let owner = owners.get(&id).copied().unwrap_or(id);
            let fate = routine_fates.get(&owner).copied().unwrap_or(Fate::Measured);
            let mut p = Predicted { id, kind, fate, calls, timed: 0, counted: 0, off: 0, overhead_ns: 0.0 };
            match fate {
                Fate::Excluded => {}
                Fate::Off => p.off = calls,
                _ => split(&mut p, shares.get(&id).map_or(&[][..], Vec::as_slice), setting.throttle),
            }
            let c = in_place(profile, id, routines.contains(&id), costs.kind(kind));
            p.overhead_ns = c.of(p.timed, p.counted) + p.off as f64 * c.off_ns;
            p
        })
        .collect();
    predicted.sort_by(|a, b| b.overhead_ns.total_cmp(&a.overhead_ns).then(a.id.cmp(&b.id)));
    predicted
}

/// Event `id`'s pair costs: those measured in place while the profiled program ran (a
/// throttled event, or any hot one with compensation), else `calibrated` with its timed pair
/// scaled as the profile's estimated events moved from theirs (`unestimated_scale`). A routine of a build
/// that counts throttled calls inline (the profile measured what an inline count costs) has
/// its counted calls at that cost where it is the lesser, or at what its windows measured its
/// counted calls cost in the way it settled in (inline or through the probe) where they did;
/// switched off, its entry code skips it with a prefix of the inline count's checks and no
/// probe call (0.27 ns a call against 1.58 for the probe's switched-off path, `instrument bench
/// probes`): at most the inline count's cost.
fn in_place(profile: &Profile, id: u32, routine: bool, calibrated: &PairCosts) -> PairCosts {
    let overhead = profile.overhead.as_ref();
    let measured = overhead.and_then(|o| o.in_place_of(id));
    let scale = overhead.map_or(1.0, |o| o.unestimated_scale);
    let mut costs = measured.map_or(calibrated.timed_scaled(scale), |e| e.pair(calibrated.off_ns));
    let inline = overhead.map_or(0.0, |o| o.inline_count_ns);
    let counts_inline = inline > 0.0 && routine;
    if counts_inline {
        costs.off_ns = costs.off_ns.min(inline);
    }
    if let Some(untimed_ns) = measured.and_then(|e| e.untimed_ns) {
        costs.counted_ns = untimed_ns;
        return costs;
    }
    if counts_inline {
        costs.counted_ns = costs.counted_ns.min(inline);
    }
    costs
}

/// The routine every loop and call statement is in.
fn owners(profile: &Profile) -> HashMap<u32, u32> {
    let loops = profile.loops.iter().map(|l| (l.id, l.function));
    loops.chain(profile.callsites.iter().map(|c| (c.id, c.function))).collect()
}

/// Routines the selections leave out of the build or switch off.
fn routine_fates(profile: &Profile, setting: &Setting) -> HashMap<u32, Fate> {
    let mut fates = HashMap::new();
    for f in &profile.functions {
        if setting.build.is_some_and(|s| !s.includes(&f.name, &f.file)) {
            fates.insert(f.id, Fate::Excluded);
        } else if setting.runtime.is_some_and(|s| !s.includes(&f.name, &f.file)) {
            fates.insert(f.id, Fate::Off);
        }
    }
    fates
}

type Share = (u64, u64, u64);

/// Every event's (calls, untimed calls, inclusive ns) per thread when the profile has threads
/// (TAU's rule counts per thread), else merged.
fn shares(profile: &Profile) -> HashMap<u32, Vec<Share>> {
    let mut by_id: HashMap<u32, Vec<Share>> = HashMap::new();
    for t in &profile.threads {
        for e in &t.events {
            let Stats { calls, untimed_calls, inclusive_ns, .. } = e.stats;
            by_id.entry(e.id).or_default().push((calls, untimed_calls, inclusive_ns));
        }
    }
    let functions = profile
        .functions
        .iter()
        .map(|f| (f.id, (f.stats.calls, f.stats.untimed_calls, f.stats.inclusive_ns)));
    let loops =
        profile.loops.iter().map(|l| (l.id, (l.stats.calls, l.stats.untimed_calls, l.stats.inclusive_ns)));
    let sites = profile
        .callsites
        .iter()
        .map(|c| (c.id, (c.stats.calls, c.stats.untimed_calls, c.stats.inclusive_ns)));
    for (id, merged) in functions.chain(loops).chain(sites) {
        by_id.entry(id).or_insert_with(|| vec![merged]);
    }
    by_id
}

/// Timed and counted activations under the throttling rule, thread by thread. The time per
/// call is that of the calls the earlier run timed.
fn split(p: &mut Predicted, shares: &[Share], throttle: Option<Throttle>) {
    for &(calls, untimed, inclusive_ns) in shares {
        let timed_before = calls.saturating_sub(untimed).max(1);
        let cheap = |t: &Throttle| (inclusive_ns as f64 / timed_before as f64) < t.per_call_ns;
        match throttle {
            Some(t) if calls > t.calls && cheap(&t) => {
                p.timed += t.calls;
                p.counted += calls - t.calls;
                p.fate = Fate::Throttled;
            }
            _ => p.timed += calls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let text = r#"{"format":"instrument-profile","version":2,"command":["./a"],"pid":1,
            "clock":{"source":"tsc","ticks_per_second":1e9,"calibration_ns":1},
            "totals":{"wall_ns":1000000,"threads":1,"threads_running_at_exit":0,"events":0,
              "frames_closed_at_exit":0,"frames_reconciled":0,"stack_overflow_events":0,
              "unmatched_exits":0,"unregistered_events":0},
            "functions":[
              {"id":0,"name":"main","calls":1,"child_calls":300001,"exclusive_ns":10,"inclusive_ns":900000},
              {"id":1,"name":"tiny","calls":300000,"child_calls":0,"exclusive_ns":30000,"inclusive_ns":30000},
              {"id":2,"name":"big","calls":1,"child_calls":0,"exclusive_ns":800000,"inclusive_ns":800000}],
            "loops":[{"id":3,"function":1,"count":300000,"iterations":0,"child_calls":0,
              "exclusive_ns":1,"inclusive_ns":1}]}"#;
        Profile::from_json(text).unwrap()
    }

    const COSTS: Costs = Costs {
        routine: PairCosts { measured_ns: 20.0, counted_ns: 5.0, off_ns: 1.0 },
        loop_probe: PairCosts { measured_ns: 30.0, counted_ns: 6.0, off_ns: 2.0 },
    };

    fn by_id(predicted: &[Predicted], id: u32) -> &Predicted {
        predicted.iter().find(|p| p.id == id).unwrap()
    }

    #[test]
    fn every_call_timed_without_throttling_or_selection() {
        let p = predict(&profile(), &COSTS, &Setting { build: None, runtime: None, throttle: None });
        assert_eq!(by_id(&p, 1).overhead_ns, 300000.0 * 20.0);
        assert_eq!(by_id(&p, 3).overhead_ns, 300000.0 * 30.0);
        assert_eq!(p[0].id, 3, "the costliest first");
    }

    #[test]
    fn throttling_times_the_first_calls_and_counts_the_rest_of_cheap_events_only() {
        let throttle = Some(Throttle { calls: 100000, per_call_ns: 10000.0 });
        let p = predict(&profile(), &COSTS, &Setting { build: None, runtime: None, throttle });
        let tiny = by_id(&p, 1);
        assert_eq!((tiny.fate, tiny.timed, tiny.counted), (Fate::Throttled, 100000, 200000));
        assert_eq!(tiny.overhead_ns, 100000.0 * 20.0 + 200000.0 * 5.0);
        assert_eq!(by_id(&p, 2).fate, Fate::Measured);
    }

    #[test]
    fn an_event_measured_in_place_is_charged_its_own_costs() {
        let mut profile = profile();
        let measured = instrument_profile::EventCosts {
            id: 1,
            measured_ns: 4.0,
            counted_ns: 0.5,
            standard_error_ns: 0.0,
            counted_standard_error_ns: 0.0,
            untimed_ns: None,
            inline_extra_ns: None,
            inside_ns: None,
            counted_reference: None,
        };
        profile.overhead = Some(instrument_profile::Overhead {
            costs: COSTS,
            calibration_ns: 1,
            total_ns: 0.0,
            percent_of_run: 0.0,
            estimation_ns: 0.0,
            recalibration_ns: 0.0,
            in_place: vec![measured],
            inline_count_ns: 0.0,
            inline_share: 0.0,
            unestimated_scale: 1.5,
            pathed_scale: 1.0,
            pathed_scale_events: 0,
        });
        let throttle = Some(Throttle { calls: 100000, per_call_ns: 10000.0 });
        let p = predict(&profile, &COSTS, &Setting { build: None, runtime: None, throttle });
        assert_eq!(by_id(&p, 1).overhead_ns, 100000.0 * 4.0 + 200000.0 * 0.5);
        assert_eq!(
            by_id(&p, 3).overhead_ns,
            100000.0 * 30.0 * 1.5 + 200000.0 * 6.0,
            "the others at the calibrated costs, the timed pair scaled as the measured events moved"
        );
    }

    #[test]
    fn a_build_that_counts_inline_has_its_routines_counted_calls_at_that_cost() {
        let mut profile = profile();
        profile.overhead = Some(instrument_profile::Overhead {
            costs: COSTS,
            calibration_ns: 1,
            total_ns: 0.0,
            percent_of_run: 0.0,
            estimation_ns: 0.0,
            recalibration_ns: 0.0,
            in_place: Vec::new(),
            inline_count_ns: 0.75,
            inline_share: 1.0,
            unestimated_scale: 1.0,
            pathed_scale: 1.0,
            pathed_scale_events: 0,
        });
        let throttle = Some(Throttle { calls: 100000, per_call_ns: 10000.0 });
        let p = predict(&profile, &COSTS, &Setting { build: None, runtime: None, throttle });
        assert_eq!(by_id(&p, 1).overhead_ns, 100000.0 * 20.0 + 200000.0 * 0.75);
        assert_eq!(by_id(&p, 3).overhead_ns, 100000.0 * 30.0 + 200000.0 * 6.0, "loops call their probe");
        let select = Selection::parse("BEGIN_EXCLUDE_LIST\ntiny\nEND_EXCLUDE_LIST\n").unwrap();
        let off = predict(&profile, &COSTS, &Setting { build: None, runtime: Some(&select), throttle: None });
        assert_eq!(
            by_id(&off, 1).overhead_ns,
            300000.0 * 0.75,
            "switched off: the inline count's checks at most"
        );
        assert_eq!(by_id(&off, 3).overhead_ns, 300000.0 * 2.0, "a loop's probe still calls the runtime");
    }

    #[test]
    fn selections_exclude_or_switch_off_routines_with_their_loops() {
        let select = Selection::parse("BEGIN_EXCLUDE_LIST\ntiny\nEND_EXCLUDE_LIST\n").unwrap();
        let built =
            predict(&profile(), &COSTS, &Setting { build: Some(&select), runtime: None, throttle: None });
        for id in [1, 3] {
            assert_eq!((by_id(&built, id).fate, by_id(&built, id).overhead_ns), (Fate::Excluded, 0.0));
        }
        let run =
            predict(&profile(), &COSTS, &Setting { build: None, runtime: Some(&select), throttle: None });
        assert_eq!((by_id(&run, 1).off, by_id(&run, 1).overhead_ns), (300000, 300000.0));
        assert_eq!(by_id(&run, 3).overhead_ns, 300000.0 * 2.0);
        assert_eq!(by_id(&run, 0).fate, Fate::Measured);
    }
}
