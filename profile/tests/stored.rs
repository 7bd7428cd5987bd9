//! Profiles stored as each schema version wrote them still read, with the same numbers: the
//! version 1 file is written after that version's schema (routines only, no ids), the version
//! 2 files are what the runtime of that version wrote (`c-fixtures/loops.c` with compensation
//! and whole callpaths, `c-fixtures/threads.c`).

use instrument_profile::{ClockSource, Language, Placement, Profile, Strategy, VERSION};

fn stored(name: &str) -> Profile {
    let path = format!("{}/tests/stored/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    Profile::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A profile read, written at this version and read again is the same profile.
fn round_trips(p: &Profile) {
    let mut current = p.clone();
    current.version = VERSION;
    let text = serde_json::to_string(&current).unwrap();
    assert_eq!(Profile::from_json(&text).unwrap(), current);
    assert!(!text.contains("\"count\""), "version {VERSION} writes `calls` for every event");
}

#[test]
fn version_1_routines_get_ids_and_their_numbers() {
    let p = stored("v1.json");
    assert_eq!(p.version, 1);
    let ids: Vec<(u32, &str)> = p.functions.iter().map(|f| (f.id, f.name.as_str())).collect();
    assert_eq!(ids, [(0, "main"), (1, "work")]);
    let work = &p.functions[1].stats;
    assert_eq!((work.calls, work.exclusive_ns, work.inclusive_ns), (1, 4000, 4000));
    assert_eq!(p.functions[0].language, Language::C);
    assert_eq!(p.clock.source, ClockSource::Tsc);
    assert!(p.placement.is_none() && p.compensation.is_none());
    round_trips(&p);
}

#[test]
fn version_2_loop_and_call_statement_counts_are_their_calls() {
    let p = stored("v2-loops.json");
    assert_eq!(p.version, 2);
    let spin = p.loops.iter().find(|l| l.id == 10).unwrap();
    assert_eq!((spin.stats.calls, spin.stats.iterations), (1, 465324));
    let call = p.callsites.iter().find(|c| c.id == 15).unwrap();
    assert_eq!((call.stats.calls, call.callee.as_str()), (465325, "clock_gettime"));
    assert!(call.stats.compensated.is_some());
    assert_eq!(p.placement, Some(Placement::Late));
    assert_eq!(p.compensation.as_ref().unwrap().strategy, Strategy::InPlace);
    assert!(p.functions.iter().all(|f| f.language == Language::C));
    assert_eq!(p.callpaths.as_ref().unwrap().depth, 0);
    round_trips(&p);
}

#[test]
fn version_2_threads_keep_their_per_thread_records() {
    let p = stored("v2-threads.json");
    let work = p.functions.iter().find(|f| f.name == "work").unwrap();
    assert_eq!(work.stats.calls, 2010);
    let per_thread: u64 =
        p.threads.iter().flat_map(|t| &t.events).filter(|e| e.id == work.id).map(|e| e.stats.calls).sum();
    assert_eq!(per_thread, work.stats.calls);
    round_trips(&p);
}
