//! The structure every reader relies on, checked once when a profile is read: event ids are
//! unique, loops and call statements sit in routines (and loops) of the same profile, loop
//! nesting has no cycle, and per-thread and callpath records name known events. A file that
//! breaks one of these (hand-edited, or from a broken writer) is refused with one message
//! instead of making a report loop, panic or print nonsense.

use crate::Profile;
use std::collections::{HashMap, HashSet};

/// The first broken rule, in words.
pub fn check(profile: &Profile) -> Result<(), String> {
    let mut kinds: HashMap<u32, &str> = HashMap::new();
    let events = profile.functions.iter().map(|f| (f.id, "routine"));
    let events = events.chain(profile.loops.iter().map(|l| (l.id, "loop")));
    for (id, kind) in events.chain(profile.callsites.iter().map(|c| (c.id, "call statement"))) {
        if let Some(first) = kinds.insert(id, kind) {
            return Err(format!("event id {id} is used twice (a {first} and a {kind})"));
        }
    }
    let is = |id: u32, kind: &str| kinds.get(&id) == Some(&kind);
    for l in &profile.loops {
        if !is(l.function, "routine") {
            return Err(format!(
                "loop {} is in routine {}, which the profile does not have",
                l.id, l.function
            ));
        }
        if let Some(parent) = l.parent.filter(|&p| !is(p, "loop")) {
            return Err(format!("loop {} is nested in loop {parent}, which the profile does not have", l.id));
        }
    }
    check_loop_nesting(profile)?;
    for c in &profile.callsites {
        if !is(c.function, "routine") {
            return Err(format!(
                "call statement {} is in routine {}, which the profile does not have",
                c.id, c.function
            ));
        }
        if let Some(in_loop) = c.in_loop.filter(|&l| !is(l, "loop")) {
            return Err(format!(
                "call statement {} is in loop {in_loop}, which the profile does not have",
                c.id
            ));
        }
    }
    for t in &profile.threads {
        if let Some(e) = t.events.iter().find(|e| !kinds.contains_key(&e.id)) {
            return Err(format!("thread {} has event {}, which the profile does not have", t.thread, e.id));
        }
    }
    for t in profile.callpaths.iter().flat_map(|c| &c.threads) {
        if let Some(id) = t.paths.iter().flat_map(|p| &p.path).find(|id| !kinds.contains_key(id)) {
            return Err(format!(
                "a callpath of thread {} has event {id}, which the profile does not have",
                t.thread
            ));
        }
    }
    if !(profile.clock.ticks_per_second.is_finite() && profile.clock.ticks_per_second >= 0.0) {
        return Err(format!(
            "the clock rate {} is not a number of ticks per second",
            profile.clock.ticks_per_second
        ));
    }
    check_timeline(profile)?;
    check_communication(profile, &kinds)?;
    check_overhead(profile)
}

/// Communication records sit at known events, peers are ranks of the job, and the waiting
/// is part of the time.
fn check_communication(profile: &Profile, kinds: &HashMap<u32, &str>) -> Result<(), String> {
    if let Some(mpi) = profile.mpi.as_ref().filter(|m| m.rank >= m.size) {
        return Err(format!("rank {} is not one of the job's {} ranks", mpi.rank, mpi.size));
    }
    for c in &profile.communication {
        if let Some(site) = c.site.filter(|s| !kinds.contains_key(s)) {
            return Err(format!(
                "{} is recorded at event {site}, which the profile does not have",
                c.operation
            ));
        }
        if let (Some(peer), Some(mpi)) = (c.peer, &profile.mpi) {
            if peer >= mpi.size {
                return Err(format!(
                    "{} has peer {peer}, not one of the job's {} ranks",
                    c.operation, mpi.size
                ));
            }
        }
        if c.wait_ns > c.time_ns {
            return Err(format!("{} waited longer than it took", c.operation));
        }
    }
    Ok(())
}

/// Probe costs and the overhead are numbers of nanoseconds, none negative.
fn check_overhead(profile: &Profile) -> Result<(), String> {
    let Some(o) = &profile.overhead else { return Ok(()) };
    let costs = [o.costs.routine, o.costs.loop_probe]
        .into_iter()
        .flat_map(|c| [c.measured_ns, c.counted_ns, c.off_ns]);
    if costs.chain([o.total_ns, o.percent_of_run]).any(|v| !(v.is_finite() && v >= 0.0)) {
        return Err("the probe costs and overhead are not all numbers of nanoseconds".into());
    }
    Ok(())
}

/// Time histograms have a bucket width, at most `MAX_BUCKETS` buckets, and numbers in them.
fn check_timeline(profile: &Profile) -> Result<(), String> {
    const MAX_BUCKETS: usize = 4096;
    let Some(timeline) = &profile.timeline else { return Ok(()) };
    if timeline.bucket_ns == 0 {
        return Err("the timeline's buckets have no width".into());
    }
    for s in &timeline.series {
        if s.values.len() > MAX_BUCKETS || s.values.iter().any(|v| !v.is_finite()) {
            return Err(format!(
                "the timeline of {} ({}) is not a list of at most {MAX_BUCKETS} numbers",
                s.name, s.metric
            ));
        }
    }
    Ok(())
}

/// Every loop's chain of enclosing loops ends, and stays in the loop's own routine.
fn check_loop_nesting(profile: &Profile) -> Result<(), String> {
    let loops: HashMap<u32, _> = profile.loops.iter().map(|l| (l.id, l)).collect();
    for l in &profile.loops {
        let mut seen = HashSet::from([l.id]);
        let mut parent = l.parent;
        while let Some(p) = parent.and_then(|p| loops.get(&p)) {
            if !seen.insert(p.id) {
                return Err(format!("loop {} is nested in itself", l.id));
            }
            if p.function != l.function {
                return Err(format!("loop {} is nested in loop {} of another routine", l.id, p.id));
            }
            parent = p.parent;
        }
    }
    Ok(())
}
