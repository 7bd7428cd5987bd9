//! Callpath mode: exact k-callpath counts for k = 1, 2, 3 and unlimited (recorded at that depth,
//! and derived from a deeper recording), recursion, indirect calls, callbacks from uninstrumented
//! code, threads, the node cap, and the exports.

use instrument_profile::CountedReference;
use instrument_tests::*;
use std::collections::BTreeMap;
use std::process::Command;

/// Runs the callpaths fixture at `depth` (INSTRUMENT_CALLPATH) and returns the profile path.
fn record(dir: &std::path::Path, depth: &str, extra_env: &[(&str, &str)]) -> std::path::PathBuf {
    record_fixture(dir, "callpaths", depth, extra_env)
}

/// Runs `c-fixtures/<fixture>.c` at `depth` (INSTRUMENT_CALLPATH) and returns the profile path.
fn record_fixture(
    dir: &std::path::Path,
    fixture: &str,
    depth: &str,
    extra_env: &[(&str, &str)],
) -> std::path::PathBuf {
    record_built_with(dir, fixture, &[], depth, extra_env)
}

/// `record_fixture` with the fixture built with `flags` besides the defaults.
fn record_built_with(
    dir: &std::path::Path,
    fixture: &str,
    flags: &[&str],
    depth: &str,
    extra_env: &[(&str, &str)],
) -> std::path::PathBuf {
    let program = build_instrumented(dir, fixture, flags);
    let output = run(Command::new(&program)
        .current_dir(dir)
        .env("INSTRUMENT_PROFILE_DIR", dir)
        .env("INSTRUMENT_CALLPATH", depth)
        .envs(extra_env.iter().copied()));
    assert_success(&output, fixture);
    only_profile_path(dir)
}

/// `record_built_with` at every depth, throttled, with INSTRUMENT_COMPENSATE=`compensate`, in
/// a directory of its own under `dir`.
fn record_throttled(
    dir: &std::path::Path,
    fixture: &str,
    flags: &[&str],
    compensate: &str,
) -> std::path::PathBuf {
    let run = dir.join(format!("compensate{compensate}"));
    std::fs::create_dir_all(&run).unwrap();
    let env = [("INSTRUMENT_THROTTLE", "1"), ("INSTRUMENT_COMPENSATE", compensate)];
    record_built_with(&run, fixture, flags, "all", &env)
}

/// `instrument report --callpaths [--depth K]` as a map from callpath to #calls.
fn table(path: &std::path::Path, depth: Option<&str>, thread: Option<&str>) -> BTreeMap<String, u64> {
    let mut args = vec![];
    if let Some(k) = depth {
        args.extend(["--depth", k]);
    }
    if let Some(t) = thread {
        args.extend(["--thread", t]);
    }
    let path = path.to_str().unwrap();
    args.push(path);
    callpath_calls(std::path::Path::new("."), &args)
}

/// c-fixtures/nested_throttle.c's callpaths: main calls outer 400 000 times, each call eight
/// leaves.
const NESTED_THROTTLE: &[(&str, u64)] =
    &[("main", 1), ("main => outer", 400_000), ("main => outer => leaf", 3_200_000)];

/// A callpath table (path to calls) from literal rows.
fn paths_of(rows: &[(&str, u64)]) -> BTreeMap<String, u64> {
    rows.iter().map(|&(p, c)| (p.to_string(), c)).collect()
}

fn expect(table: &BTreeMap<String, u64>, expected: &[(&str, u64)]) {
    for (path, calls) in expected {
        assert_eq!(table.get(*path), Some(calls), "{path} in {table:#?}");
    }
}

const K2: &[(&str, u64)] = &[
    ("main => a", 2),
    ("main => b", 1),
    ("a => c", 15),
    ("b => c", 1),
    ("b => a", 1),
    ("rec => rec", 3),
    ("main => rec", 1),
];
const K3: &[(&str, u64)] =
    &[("main => a => c", 6), ("main => b => c", 1), ("main => b => a", 1), ("b => a => c", 3)];

#[test]
fn exact_counts_at_every_depth() {
    let dir = scratch();
    let k1 = record(&dir.path().join("1").tap_mkdir(), "1", &[]);
    expect(&table(&k1, None, None), &[("c", 16), ("a", 5), ("b", 1), ("rec", 4)]);

    let k2 = record(&dir.path().join("2").tap_mkdir(), "2", &[]);
    let t2 = table(&k2, None, None);
    expect(&t2, K2);
    expect(&t2, &[("worker => a", 2), ("main => leaf", 1)]);

    let k3 = record(&dir.path().join("3").tap_mkdir(), "3", &[]);
    expect(&table(&k3, None, None), K3);
    expect(&table(&k3, Some("2"), None), K2);

    // The calling-context tree collapses recursion onto the call it recurses from (as the flat
    // profile does): rec's four activations are one context, main => rec.
    let all = record(&dir.path().join("all").tap_mkdir(), "all", &[]);
    let full = table(&all, None, None);
    expect(&full, &[("main => b => a => c", 3), ("main => rec", 4)]);
    assert!(!full.keys().any(|p| p.contains("rec => rec")), "{full:#?}");
    expect(&table(&all, Some("3"), None), K3);
    let k2_without_recursion: Vec<(&str, u64)> =
        K2.iter().filter(|(p, _)| !p.contains("rec")).copied().collect();
    expect(&table(&all, Some("2"), None), &k2_without_recursion);
    expect(&table(&all, Some("2"), None), &[("main => rec", 4)]);
    expect(&table(&all, Some("1"), None), &[("c", 16), ("a", 5), ("rec", 4)]);
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for std::path::PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

#[test]
fn indirect_calls_callbacks_and_threads() {
    let dir = scratch();
    let path = record(dir.path(), "2", &[]);
    let profile = load_profile(&path);
    let t = table(&path, None, None);
    assert_eq!(t.get("main => leaf"), Some(&1), "the call through a function pointer");
    let cmp = function(&profile, "cmp").stats.calls;
    assert!(cmp >= 7);
    assert_eq!(t.get("main => cmp"), Some(&cmp), "qsort's callbacks land under main");
    let callpaths = profile.callpaths.as_ref().unwrap();
    assert_eq!(callpaths.depth, 2);
    assert_eq!(callpaths.threads.len(), 3);
    for thread in ["1", "2"] {
        let per_thread = table(&path, None, Some(thread));
        expect(&per_thread, &[("worker => a", 1), ("a => c", 3)]);
        assert!(!per_thread.contains_key("main => a"));
    }
    let missing =
        run(Command::new(bin("instrument")).args(["report", "--callpaths", "--thread", "9"]).arg(&path));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no thread 9"));
    let too_deep =
        run(Command::new(bin("instrument")).args(["report", "--callpaths", "--depth", "3"]).arg(&path));
    assert!(!too_deep.status.success());
    assert!(String::from_utf8_lossy(&too_deep.stderr).contains("recorded callpaths of depth 2"));
}

#[test]
fn recursion_counts_a_callpath_inclusive_time_once() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "recursion", &[]);
    let output = run(Command::new(&program)
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_CALLPATH", "2"));
    assert_success(&output, "recursion");
    let path = only_profile_path(dir.path());
    let out = run(Command::new(bin("instrument")).args(["report", "--callpaths"]).arg(&path));
    let text = String::from_utf8_lossy(&out.stdout);
    let inclusive = |name: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.ends_with(&format!("  {name}")))
            .unwrap_or_else(|| panic!("{name}: {text}"));
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    let wait = inclusive("down => wait_ms");
    assert!(wait >= 29.0, "{text}");
    assert!(
        inclusive("down => down") < wait + 1.0,
        "down => down recurs inside itself: counted once\n{text}"
    );
}

#[test]
fn node_cap_overflow_goes_to_other_paths() {
    let dir = scratch();
    let path = record(dir.path(), "all", &[("INSTRUMENT_CALLPATH_NODES", "6")]);
    let profile = load_profile(&path);
    let callpaths = profile.callpaths.as_ref().unwrap();
    let main_thread = &callpaths.threads[0];
    assert!(main_thread.overflow_paths > 0);
    assert!(main_thread.other.as_ref().unwrap().stats.calls > 0);
    assert_eq!(function(&profile, "c").stats.calls, 16, "the flat profile stays exact");
    assert!(table(&path, None, None).contains_key("(other paths)"));
}

#[test]
fn exports_folded_flamegraph_and_speedscope() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "callpaths", &[]);
    let run_output = run(Command::new(bin("instrument"))
        .args(["run", "--callpath", "all", "--profile-dir"])
        .arg(dir.path())
        .arg("--")
        .arg(&program));
    assert_success(&run_output, "instrument run --callpath all");
    assert!(String::from_utf8_lossy(&run_output.stderr).contains("profile written to"));
    let path = only_profile_path(dir.path());
    let export = |format: &str| {
        let out = run(Command::new(bin("instrument")).args(["export", "--format", format]).arg(&path));
        assert_success(&out, format);
        out.stdout
    };
    let folded = String::from_utf8(export("folded")).unwrap();
    let line = folded.lines().find(|l| l.starts_with("main;b;a;c ")).expect("main;b;a;c stack");
    let weight: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(weight > 0);
    let profile = load_profile(&path);
    let total: u64 = folded.lines().map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    let exclusive: u64 = profile.functions.iter().map(|f| f.stats.exclusive_ns).sum();
    assert!(
        total.abs_diff(exclusive) * 100 <= exclusive,
        "folded weights {total} vs exclusive times {exclusive}"
    );

    let svg_path = dir.path().join("flame.svg");
    let out = run(Command::new(bin("instrument"))
        .args(["export", "--format", "flamegraph", "-o"])
        .arg(&svg_path)
        .arg(&path));
    assert_success(&out, "flamegraph");
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg") && svg.contains("main"));

    let speedscope: serde_json::Value = serde_json::from_slice(&export("speedscope")).unwrap();
    assert_eq!(speedscope["$schema"], "https://www.speedscope.app/file-format-schema.json");
    let profiles = speedscope["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 4, "merged plus three threads");
    let frames = speedscope["shared"]["frames"].as_array().unwrap();
    assert!(frames.iter().any(|f| f["name"] == "worker"));
    for p in profiles {
        assert_eq!(p["samples"].as_array().unwrap().len(), p["weights"].as_array().unwrap().len());
    }
}

/// Creating a callpath node (fresh memory: page faults) is not the program's time: a routine
/// called once that makes 300 new callpaths and then busy-waits 2 ms shows the same inclusive
/// time with callpaths as without (within 5 %; before, each node added about 7 us to it). A
/// preemption during the busy-wait only adds time, so each is the least of at least three runs,
/// alternated, and of up to eight while they differ (the test binary runs its tests side by
/// side on a small machine; with two busy loops beside it, three runs were not enough in 3 of
/// 6 tries, with this runtime and the previous one).
#[test]
fn creating_callpath_nodes_costs_no_one_time() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "coldpaths", &[]);
    let mut runs = 0;
    let mut setup_ns = |callpath: &str| {
        runs += 1;
        let run_dir = new_dir(dir.path(), &format!("callpath-{callpath}-{runs}"));
        let output = run(Command::new(&program)
            .current_dir(&run_dir)
            .env("INSTRUMENT_PROFILE_DIR", &run_dir)
            .env("INSTRUMENT_CALLPATH", callpath));
        assert_success(&output, "coldpaths");
        let profile = only_profile(&run_dir);
        assert_eq!(profile.functions.iter().filter(|f| f.name.starts_with("leaf_")).count(), 300);
        function(&profile, "setup").stats.inclusive_ns as f64
    };
    let (mut flat, mut callpaths) = (f64::INFINITY, f64::INFINITY);
    for round in 0..8 {
        flat = flat.min(setup_ns("0"));
        callpaths = callpaths.min(setup_ns("all"));
        if round >= 2 && (callpaths - flat).abs() < 0.05 * flat {
            break;
        }
    }
    assert!(flat >= 2e6, "the busy-wait: {flat} ns");
    assert!((callpaths - flat).abs() < 0.05 * flat, "flat {flat} ns, with callpaths {callpaths} ns");
}

/// `--callpaths --json` gives the table's rows for scripts: the same paths (caller first) and
/// counts, inclusive covering exclusive.
#[test]
fn the_callpath_table_as_json() {
    let dir = scratch();
    let k2 = record(dir.path(), "2", &[]);
    let output = run(Command::new(bin("instrument")).args(["report", "--callpaths", "--json"]).arg(&k2));
    assert_success(&output, "report --callpaths --json");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let rows = json["callpaths"].as_array().expect("rows");
    let calls: BTreeMap<String, u64> = rows
        .iter()
        .map(|r| {
            let path: Vec<&str> = r["path"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
            assert!(r["inclusive_ns"].as_i64().unwrap() >= r["exclusive_ns"].as_i64().unwrap(), "{r}");
            (path.join(" => "), r["calls"].as_u64().unwrap())
        })
        .collect();
    expect(&calls, K2);
    assert_eq!(calls, table(&k2, None, None), "the same rows as the table");
}

/// With compensation on, estimating a hot routine's probe cost in place leaves the callpaths
/// as the program makes them: a routine with children stays on the stack in its counted windows
/// (else its children's calls would go to a path main => leaf that skips it), and every one of
/// its calls is on its path. The leaf's calls counted in its estimation's windows are not on
/// any path (a counted call takes no callpath step, as a throttled event's), and are exactly
/// those.
#[test]
fn in_place_estimation_leaves_the_callpaths_of_a_hot_routine_alone() {
    let dir = scratch();
    let compensated = [("INSTRUMENT_THROTTLE", "0"), ("INSTRUMENT_COMPENSATE", "1")];
    let path = record_fixture(dir.path(), "hot_parent", "all", &compensated);
    let profile = load_profile(&path);
    let leaf = function(&profile, "leaf");
    let estimated: Vec<u32> = profile.compensation.as_ref().unwrap().in_place.iter().map(|e| e.id).collect();
    assert!(estimated.contains(&leaf.id), "the leaf is estimated in place: {estimated:?}");
    // The parent too, its counted windows keeping it on the stack (the runtime's PATHED mode).
    let parent = function(&profile, "parent").id;
    assert!(estimated.contains(&parent), "the parent too: {estimated:?}");
    // Its pathed pair is what its timed pair holds of the pathed one's work: more than nothing,
    // less than the difference between them (its calibration scaled as that difference moved).
    let parent_estimates = profile.compensation.as_ref().unwrap().in_place.iter();
    for e in parent_estimates.filter(|e| e.id == parent && e.difference_ns > 0.0) {
        assert!(e.counted_ns > 0.0 && e.counted_ns <= e.difference_ns + 0.01, "{e:?}");
    }
    assert_eq!(leaf.stats.calls, 100000);
    // Every call of the leaf is on its path, whichever mode it ran in: timed, counted (its
    // counted and tally windows, counted on the node their step reaches) or pathed (its pathed
    // windows, which measure the pair a parent's counted windows run).
    let threads = &profile.callpaths.as_ref().expect("callpaths").threads;
    let on_path =
        threads[0].paths.iter().find(|p| p.path.ends_with(&[parent, leaf.id])).expect("the leaf's path");
    assert!(leaf.stats.untimed_calls > 0);
    assert_eq!(on_path.stats.untimed_calls, leaf.stats.untimed_calls);
    let c = profile.compensation.as_ref().unwrap();
    let pathed: Vec<_> = c.in_place.iter().filter(|e| e.id == leaf.id && e.pathed_pairs > 0).collect();
    assert!(
        !pathed.is_empty() && pathed.iter().all(|e| e.pathed_ns.is_some_and(|ns| ns > 0.0)),
        "{pathed:?}"
    );
    // The leaf's pathed pair weighs in the scale of every pathed call (its value may be the
    // calibration's, 1, where the windows' noise buried their difference: a loaded machine).
    let overhead = profile.overhead.as_ref().expect("overhead");
    assert_eq!(overhead.pathed_scale_events, 1, "the leaf's pathed pair scales the calibration");
    assert!(overhead.pathed_scale > 0.0);
    let expected = paths_of(&[("main", 1), ("main => parent", 100000), ("main => parent => leaf", 100000)]);
    assert_eq!(table(&path, None, None), expected);
}

/// A callpath leaf that counts inline (late placement): compensated, its estimations pair
/// shadow windows (counted, each call also counted down and left pending) with bare ones (its
/// own entry code counts down a thread-local word), which measure its counted probe call in
/// place, the flushes of their pending calls in both; the bare calls are credited to their
/// caller's path and the shadow ones are not credited twice, so every path keeps its exact count.
#[test]
fn a_callpath_leafs_bare_windows_measure_its_counted_call_and_keep_its_paths_exact() {
    let dir = scratch();
    let late = ["--instrument-placement=late", "--instrument-min-instructions=0"];
    let env = [("INSTRUMENT_COMPENSATE", "on"), ("INSTRUMENT_THROTTLE", "1")];
    let path = record_built_with(dir.path(), "nested_throttle", &late, "all", &env);
    assert_eq!(table(&path, None, None), paths_of(NESTED_THROTTLE));
    let profile = load_profile(&path);
    assert!(profile.totals.inline_counted > 0, "the bare windows counted calls in the program's code");
    let leaf = function(&profile, "leaf").id;
    let estimates = &profile.compensation.as_ref().expect("compensation").in_place;
    let of_leaf: Vec<_> = estimates.iter().filter(|e| e.id == leaf).collect();
    assert!(!of_leaf.is_empty(), "{estimates:?}");
    assert!(
        of_leaf.iter().all(|e| e.bare_pairs >= 10 && e.counted_over_bare_ns.is_some()),
        "bare windows measured leaf's counted call: {of_leaf:?}"
    );
    assert!(
        of_leaf.iter().all(|e| e.inline_count_ns.is_none() && e.double_pairs == 0),
        "no inline or double window runs with callpaths"
    );
    assert!(of_leaf.iter().all(|e| e.counted_over_inline_ns.is_none()), "{of_leaf:?}");
    // The parents wait pathed: their estimates name no counted call's reference.
    assert_references_measured(estimates);
    let outer = function(&profile, "outer").id;
    let of_outer: Vec<_> = estimates.iter().filter(|e| e.id == outer).collect();
    assert!(!of_outer.is_empty(), "{estimates:?}");
    assert!(of_outer.iter().all(|e| e.counted_reference == Some(CountedReference::Pathed)), "{of_outer:?}");
    // The costs compensation used say so too: the leaf's counted cost over one of the paths
    // its windows measured it against.
    let used = &profile.overhead.as_ref().expect("overhead").in_place;
    let reference = |id| used.iter().find(|e| e.id == id).and_then(|e| e.counted_reference);
    assert_eq!(reference(outer), Some(CountedReference::Pathed), "{used:?}");
    assert!(matches!(reference(leaf), Some(CountedReference::Bare | CountedReference::Tally)), "{used:?}");
    // Each caller's exit flushes its bare (or shadow) calls: the flush is calibrated and charged
    // where it runs.
    let flush = profile.compensation.as_ref().and_then(|c| c.bare_flush_ns);
    assert!(flush.is_some_and(|ns| ns > 0.0), "the bare flush's calibration: {flush:?}");
}

/// Throttling with callpaths keeps every call on its path, whichever mode it ran in: the
/// throttled parent (outer, which calls leaf eight times) stays on the stack untimed, so that
/// leaf's calls keep their path through it (without it they would hang from main, as TAU's
/// throttling puts them), the throttled leaf is counted on its node, and each node gets its
/// event's estimated times for its untimed calls; with compensation and without.
#[test]
fn throttled_callpaths_keep_exact_counts_on_their_paths() {
    let dir = scratch();
    for compensate in ["0", "1"] {
        let path = record_throttled(dir.path(), "nested_throttle", &[], compensate);
        let profile = load_profile(&path);
        let (outer, leaf) = (function(&profile, "outer"), function(&profile, "leaf"));
        assert!(outer.throttled && leaf.throttled, "compensate={compensate}");
        assert_eq!(table(&path, None, None), paths_of(NESTED_THROTTLE), "compensate={compensate}");
        let paths = &profile.callpaths.as_ref().expect("callpaths").threads[0].paths;
        for event in [outer, leaf] {
            let node = paths.iter().find(|p| p.path.last() == Some(&event.id)).expect("its path");
            assert_eq!(node.stats.untimed_calls, event.stats.untimed_calls, "{}", event.name);
            // leaf's estimate may be none (about half a nanosecond a call, within the timed
            // pair's inside part: throttling.rs), and then its node has none either.
            assert!(node.stats.untimed_calls > 0, "{node:?}");
            assert_eq!(node.stats.estimated.is_some(), event.stats.estimated.is_some(), "{node:?}");
        }
        if compensate == "1" {
            // outer returns after 8 calls of leaf, inside every tally window of leaf's: the
            // windows go on at its next activation (tally.rs), so they measure leaf's counted
            // call (they were void, and it kept its calibration).
            let estimates = &profile.compensation.as_ref().expect("compensation").in_place;
            let of_leaf: Vec<_> = estimates.iter().filter(|e| e.id == leaf.id).collect();
            assert!(!of_leaf.is_empty() && of_leaf.iter().all(|e| e.counted_pairs > 0), "{of_leaf:?}");
        }
    }
}

/// A chain of throttled routines with callpaths (c-fixtures/throttled_chain.c: main calls top,
/// top mid, mid work, a hundred nanoseconds of arithmetic): top and mid stay on the stack
/// untimed, and work's counted calls under them are estimated into mid's node. Their time ran
/// in main's exclusive time, so mid's and top's estimated inclusive times hold it and their
/// estimated exclusive times do not lose it; main's does. Before, mid's exclusive time lost
/// work's estimates (negative, about as large as work's time) and its inclusive time had only
/// its own, a few percent of work's. With compensation and without.
#[test]
fn untimed_parents_hold_their_counted_descendants_estimates() {
    let dir = scratch();
    for compensate in ["0", "1"] {
        let flags = ["--instrument-min-instructions=0"];
        let path = record_throttled(dir.path(), "throttled_chain", &flags, compensate);
        let profile = load_profile(&path);
        let paths = &profile.callpaths.as_ref().expect("callpaths").threads[0].paths;
        let node = |name: &str| {
            let id = function(&profile, name).id;
            let node = paths.iter().find(|p| p.path.last() == Some(&id)).expect("its path");
            assert_eq!(node.stats.calls, 1_000_000, "{name}, compensate={compensate}");
            node.stats.estimated.unwrap_or_else(|| panic!("{name} is estimated: {node:?}"))
        };
        let (top, mid, work) = (node("top"), node("mid"), node("work"));
        // A parent's activations timed before it was throttled held work's calls at their real
        // time, from which work's estimate can differ: a residue of that may remain (top at
        // -0.2 % of work's time in one run of about ten, compensated), where the parent lost
        // all of work's estimates before (mid at -96 %).
        for (name, e) in [("top", top), ("mid", mid)] {
            let holds = 20 * e.exclusive_ns >= -work.inclusive_ns && e.inclusive_ns >= e.exclusive_ns;
            assert!(holds, "{name}: {e:?}, work {work:?}, compensate={compensate}");
        }
        assert!(2 * mid.inclusive_ns >= work.inclusive_ns, "mid holds work: {mid:?} {work:?}");
        assert!(2 * top.inclusive_ns >= mid.inclusive_ns, "top holds mid: {top:?} {mid:?}");
        // The estimates move time between nodes, never make it (the compensated time, when
        // compensating: what they are estimated from).
        let basis =
            |p: &instrument_profile::Stats| p.compensated.map_or(p.exclusive_ns as i64, |c| c.exclusive_ns);
        let measured: i64 = paths.iter().map(|p| basis(&p.stats)).sum();
        let moved: i64 =
            paths.iter().map(|p| p.stats.estimated.map_or(basis(&p.stats), |e| e.exclusive_ns)).sum();
        assert!(
            (moved - measured).abs() <= paths.len() as i64,
            "{moved} vs {measured}, compensate={compensate}"
        );
    }
}
