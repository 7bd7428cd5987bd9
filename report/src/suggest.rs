//! `instrument report --suggest-filter FILE`: a TAU selection file that leaves out the routines
//! whose probes cost more than they tell, by TAU's throttling rule applied to a profile: called
//! more than 100000 times at under 10 microseconds of inclusive time per call, or throttled
//! while the program ran. It serves the next build (`INSTRUMENT_SELECT=FILE`, no probes at
//! all) or the next run of the same binary (`INSTRUMENT_RUNTIME_SELECT=FILE`). Given several
//! profiles (workloads, or the ranks of an MPI run), it leaves out every routine the rule picks
//! in any of them, so that no workload pays for its probes.

use crate::names;
use instrument_profile::{Function, Profile};
use std::fmt::Write;

/// TAU's defaults (TAU_THROTTLE_NUMCALLS, TAU_THROTTLE_PERCALL): a selection leaves out what TAU's
/// own rule would (the runtime throttles after fewer calls, `throttle::DEFAULT`).
pub const CALLS: u64 = instrument_contract::throttle::TAU.calls;
pub const PER_CALL_NS: f64 = instrument_contract::throttle::TAU.per_call_ns();

/// Whether TAU's rule leaves `f` out.
pub fn too_costly(f: &Function) -> bool {
    let timed = f.stats.calls.saturating_sub(f.stats.untimed_calls).max(1);
    f.throttled || (f.stats.calls > CALLS && (f.stats.inclusive_ns as f64 / timed as f64) < PER_CALL_NS)
}

/// The selection file's text: the routines TAU's rule picks in any of `profiles`, sorted by
/// their most calls in one profile (most first), each once.
pub fn suggest_filter(profiles: &[Profile]) -> String {
    let mut chosen: Vec<&Function> = Vec::new();
    for f in profiles.iter().flat_map(|p| p.functions.iter()).filter(|f| too_costly(f)) {
        match chosen.iter_mut().find(|c| c.name == f.name) {
            Some(c) if c.stats.calls < f.stats.calls => *c = f,
            Some(_) => {}
            None => chosen.push(f),
        }
    }
    chosen.sort_by(|a, b| b.stats.calls.cmp(&a.stats.calls).then_with(|| a.name.cmp(&b.name)));
    let mut out = String::new();
    let _ = writeln!(out, "# Suggested by `instrument report --suggest-filter` from the profile(s) of");
    for profile in profiles {
        let _ = writeln!(out, "# `{}` (pid {})", profile.command.join(" "), profile.pid);
    }
    let _ = writeln!(out, "# routines called over {CALLS} times at under 10 us each, whose probes cost more");
    let _ = writeln!(out, "# than they measure. Use it for the next build (INSTRUMENT_SELECT=FILE) or");
    let _ = writeln!(out, "# run (INSTRUMENT_RUNTIME_SELECT=FILE).");
    let _ = writeln!(out, "BEGIN_EXCLUDE_LIST");
    for f in chosen {
        let _ = writeln!(out, "{}", names::readable_in(&f.name, f.language));
    }
    let _ = writeln!(out, "END_EXCLUDE_LIST");
    out
}
