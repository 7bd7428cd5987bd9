//! The cost model: every profile says what its probes cost (measured at start-up, per event
//! and in total), and `instrument cost` predicts the overhead of another build or run from an
//! earlier profile's counts.

use instrument_profile::Profile;
use instrument_tests::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CALLS: u64 = 400_000;

/// The throttle fixture (next_random called CALLS times) run in `dir/name` with `env`.
fn profiled(dir: &Path, name: &str, env: &[(&str, &str)]) -> (PathBuf, Profile) {
    let program = build_instrumented(dir, "throttle", &[]);
    let run_dir = new_dir(dir, name);
    let output = run(Command::new(&program)
        .arg(CALLS.to_string())
        .current_dir(&run_dir)
        .env("INSTRUMENT_PROFILE_DIR", &run_dir)
        .env_remove("INSTRUMENT_THROTTLE")
        .env_remove("INSTRUMENT_COMPENSATE")
        .envs(env.iter().copied()));
    assert_success(&output, name);
    let path = only_profile_path(&run_dir);
    let profile = load_profile(&path);
    (path, profile)
}

fn instrument_json(args: &[&str]) -> Value {
    let output = instrument(args);
    assert_success(&output, &args.join(" "));
    serde_json::from_slice(&output.stdout).expect("JSON")
}

fn instrument(args: &[&str]) -> Output {
    run(Command::new(bin("instrument")).args(args))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-6
}

fn event<'a>(prediction: &'a Value, name: &str) -> &'a Value {
    let events = prediction["events"].as_array().expect("events");
    events.iter().find(|e| e["name"] == name).unwrap_or_else(|| panic!("no {name} in {prediction:#}"))
}

#[test]
fn every_profile_says_what_its_probes_cost_per_event_and_in_total() {
    let dir = scratch();
    let (path, profile) = profiled(dir.path(), "throttled", &[]);
    let o = profile.overhead.as_ref().expect("an overhead section");
    for c in [o.costs.routine, o.costs.loop_probe] {
        assert!(c.measured_ns > c.counted_ns && c.counted_ns > 0.0, "{c:?}");
        assert!(c.measured_ns > c.off_ns && c.off_ns > 0.0, "{c:?}");
    }
    assert!(o.calibration_ns > 0 && o.calibration_ns < 100_000_000, "{}", o.calibration_ns);
    let report = instrument_json(&["report", "--json", path.to_str().unwrap()]);
    let rows = report["functions"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap();
    let f = function(&profile, "next_random");
    assert!(f.throttled && f.stats.untimed_calls > 0);
    // Throttled, it was measured in place: its calls are charged those costs.
    let in_place = o.in_place.iter().find(|e| e.id == f.id).expect("next_random's in-place costs");
    let expected = (f.stats.calls - f.stats.untimed_calls) as f64 * in_place.measured_ns
        + f.stats.untimed_calls as f64 * in_place.counted_ns;
    assert!(close(row("next_random")["overhead_ns"].as_f64().unwrap(), expected));
    // main, never estimated, at the calibration scaled as the estimated events moved from theirs.
    assert!(o.unestimated_scale > 0.0 && o.unestimated_scale != 1.0, "{}", o.unestimated_scale);
    let main = row("main")["overhead_ns"].as_f64().unwrap();
    assert!(close(main, o.costs.routine.measured_ns * o.unestimated_scale), "{main} vs {o:?}");
    let sum: f64 = rows.iter().map(|r| r["overhead_ns"].as_f64().unwrap_or(0.0)).sum();
    // With what the estimations' window boundaries took (next_random's in-place windows).
    assert!(o.estimation_ns > 0.0, "{o:?}");
    let total = sum + o.estimation_ns;
    assert!(close(total, o.total_ns), "per-event overheads add up to the total: {total} vs {}", o.total_ns);
    assert!(close(o.percent_of_run, 100.0 * o.total_ns / profile.totals.wall_ns as f64));
    let table = instrument(&["report", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("probes: ") && text.contains("% of the run") && text.contains("most from next_random"),
        "{text}"
    );
}

#[test]
fn cost_predicts_the_measured_overhead_and_what_throttling_and_filters_change() {
    let dir = scratch();
    let (path, profile) = profiled(dir.path(), "timed", &[("INSTRUMENT_THROTTLE", "0")]);
    let path = path.to_str().unwrap();
    let o = profile.overhead.clone().expect("an overhead section");
    let same = instrument_json(&["cost", "--costs-from-profile", "--throttle", "off", "--json", path]);
    assert_eq!(same["costs_from"], "the profile");
    assert!(close(same["total_ns"].as_f64().unwrap(), o.total_ns), "{same:#} vs {o:?}");

    let throttled = instrument_json(&["cost", "--costs-from-profile", "--json", path]);
    let random = event(&throttled, "next_random");
    let prefix = instrument_contract::throttle::DEFAULT.calls;
    assert_eq!((random["fate"].as_str(), random["timed"].as_u64()), (Some("throttled"), Some(prefix)));
    assert_eq!(random["counted"].as_u64(), Some(CALLS - prefix));
    let expected =
        prefix as f64 * o.costs.routine.measured_ns + (CALLS - prefix) as f64 * o.costs.routine.counted_ns;
    assert!(close(random["overhead_ns"].as_f64().unwrap(), expected));
    assert_eq!(event(&throttled, "main")["fate"], "measured");

    let filter = dir.path().join("filter.txt");
    assert_success(
        &instrument(&["report", path, "--suggest-filter", filter.to_str().unwrap()]),
        "suggest-filter",
    );
    let filter = filter.to_str().unwrap();
    let built = instrument_json(&[
        "cost",
        "--costs-from-profile",
        "--throttle",
        "off",
        "--select",
        filter,
        "--json",
        path,
    ]);
    assert_eq!(
        (event(&built, "next_random")["fate"].as_str(), event(&built, "next_random")["overhead_ns"].as_f64()),
        (Some("excluded"), Some(0.0))
    );
    let random_cost = CALLS as f64 * o.costs.routine.measured_ns;
    assert!(close(built["total_ns"].as_f64().unwrap(), o.total_ns - random_cost));
    let off = instrument_json(&["cost", "--costs-from-profile", "--runtime-select", filter, "--json", path]);
    let random = event(&off, "next_random");
    assert_eq!((random["fate"].as_str(), random["off"].as_u64()), (Some("off"), Some(CALLS)));
    assert!(close(random["overhead_ns"].as_f64().unwrap(), CALLS as f64 * o.costs.routine.off_ns));
}

#[test]
fn cost_measures_the_probes_on_this_machine_in_the_setting_asked_for() {
    let dir = scratch();
    let (path, _) = profiled(dir.path(), "timed", &[("INSTRUMENT_THROTTLE", "0")]);
    let path = path.to_str().unwrap();
    let flat = instrument_json(&["cost", "--json", path]);
    assert_eq!(flat["costs_from"], "this machine");
    let c = &flat["costs"]["routine"];
    let (timed, counted) = (c["measured_ns"].as_f64().unwrap(), c["counted_ns"].as_f64().unwrap());
    assert!(timed > counted && counted > 0.0, "{c}");
    let random = event(&flat, "next_random");
    let prefix = instrument_contract::throttle::DEFAULT.calls;
    let expected = prefix as f64 * timed + (CALLS - prefix) as f64 * counted;
    assert!(close(random["overhead_ns"].as_f64().unwrap(), expected));
    let comp = instrument_json(&["cost", "--callpath", "2", "--compensate", "--json", path]);
    assert_eq!(
        (comp["setting"]["throttle"].as_bool(), comp["setting"]["callpath"].as_u64()),
        (Some(true), Some(2))
    );
    // Throttled with callpaths too, after as many calls when compensating.
    let timed = prefix.min(CALLS);
    assert_eq!(event(&comp, "next_random")["timed"].as_u64(), Some(timed), "throttled with callpaths");
    let text = instrument(&["cost", path]);
    assert_success(&text, "cost");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("predicted: ") && text.contains("throttled  next_random"), "{text}");
}

#[test]
fn cost_refuses_what_it_cannot_use_in_one_line() {
    let dir = scratch();
    let (path, _) = profiled(dir.path(), "timed", &[("INSTRUMENT_THROTTLE", "0")]);
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("overhead");
    let old = dir.path().join("old.json");
    std::fs::write(&old, json.to_string()).unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["cost", "--costs-from-profile", old.to_str().unwrap()], "has no probe costs"),
        (
            &["cost", "--select", "/nonexistent/filter.txt", path.to_str().unwrap()],
            "cannot read selection file",
        ),
        (&["cost", "--callpath", "0", path.to_str().unwrap()], "is not a callpath depth"),
    ];
    for (args, message) in cases {
        let output = instrument(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success() && stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// Compensation removes what throttled calls still cost: every timed activation's Δi and every
/// counted one's cost, which add up to the overhead the profile reports (with the calibrated
/// costs, which the overhead section still uses; the inplace strategy's per-event estimates do
/// not reach it yet).
#[test]
fn compensation_removes_the_cost_of_counted_calls_too() {
    let dir = scratch();
    let (_, profile) = profiled(
        dir.path(),
        "compensated",
        // No recalibration round: one would charge its own time to the root frame and change
        // the costs mid-run, which a run stretched past its period by load would meet.
        &[
            ("INSTRUMENT_COMPENSATE", "calibrated"),
            ("INSTRUMENT_THROTTLE", "1"),
            ("INSTRUMENT_RECALIBRATE_MS", "0"),
        ],
    );
    let f = function(&profile, "next_random");
    assert!(f.stats.untimed_calls > CALLS / 2, "throttled: {f:?}");
    let removed = profile.compensation.as_ref().expect("compensated").removed_ns as f64;
    let total = profile.overhead.as_ref().unwrap().total_ns;
    assert!((removed - total).abs() <= 1e-3 * total + 1000.0, "removed {removed} ns, probes cost {total} ns");
}
