//! TAU pprof's summaries across units of execution. Every thread of every profile given is a
//! unit (the ranks of an MPI run and their threads, or the threads of one process). Per event:
//! the total, mean, minimum, maximum and standard deviation over the units of its calls and of
//! its exclusive and inclusive times. A unit that never ran an event counts as 0 there, as in
//! pprof's mean. Events are matched across profiles by their readable names.

use crate::error::{ReportError, Result};
use crate::view::{event_name, View};
use instrument_profile::{Profile, Stats};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A unit of execution: a thread of a rank, or of one of several processes that are not an MPI
/// run's (named by their pids), or of the one process reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    pub rank: Option<u32>,
    pub pid: Option<u32>,
    pub thread: u64,
}

impl Unit {
    /// `rank.thread` (TAU's node,context,thread without the context), `pid.thread`, or `thread`.
    pub fn label(&self) -> String {
        match (self.rank, self.pid) {
            (Some(rank), _) => format!("{rank}.{}", self.thread),
            (None, Some(pid)) => format!("{pid}.{}", self.thread),
            (None, None) => self.thread.to_string(),
        }
    }

    /// What the labels of `units` are made of.
    fn kind(units: &[Unit]) -> &'static str {
        if units.iter().any(|u| u.rank.is_some()) {
            "rank.thread"
        } else if units.iter().any(|u| u.pid.is_some()) {
            "pid.thread"
        } else {
            "thread"
        }
    }
}

/// One event's numbers on one unit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    pub calls: u64,
    pub exclusive_ns: i64,
    pub inclusive_ns: i64,
}

/// Total, mean, minimum, maximum and (population) standard deviation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub total: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub std: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let n = values.len().max(1) as f64;
        let total: f64 = values.iter().sum();
        let mean = total / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if values.is_empty() { (0.0, 0.0) } else { (min, max) };
        Spread { total, mean, min, max, std: variance.sqrt() }
    }
}

/// Every event's samples, one per unit (in `units` order).
#[derive(Debug)]
pub struct Summary {
    pub units: Vec<Unit>,
    pub events: Vec<(String, Vec<Sample>)>,
}

impl Summary {
    /// The spread of one quantity of event `index` over the units.
    pub fn spread(&self, index: usize, value: impl Fn(&Sample) -> f64) -> Spread {
        Spread::of(&self.events[index].1.iter().map(value).collect::<Vec<_>>())
    }
}

fn sample(stats: &Stats, view: View) -> Sample {
    let (exclusive_ns, inclusive_ns) =
        view.times(stats.exclusive_ns, stats.inclusive_ns, stats.compensated, None);
    Sample { calls: stats.calls, exclusive_ns, inclusive_ns }
}

/// One profile's units: its threads, or the whole process as thread 0.
fn units_of(profile: &Profile, view: View) -> Vec<(u64, BTreeMap<String, Sample>)> {
    if !profile.threads.is_empty() {
        // Named once per event, not once per thread (event_name scans the event lists).
        let mut names: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
        for e in profile.threads.iter().flat_map(|t| &t.events) {
            names.entry(e.id).or_insert_with(|| event_name(profile, e.id));
        }
        return profile
            .threads
            .iter()
            .map(|t| {
                let events = t.events.iter().map(|e| (names[&e.id].clone(), sample(&e.stats, view)));
                (t.thread, events.collect())
            })
            .collect();
    }
    let mut events = BTreeMap::new();
    for f in &profile.functions {
        let (exclusive_ns, inclusive_ns) =
            view.times(f.stats.exclusive_ns, f.stats.inclusive_ns, f.stats.compensated, f.stats.estimated);
        events.insert(event_name(profile, f.id), Sample { calls: f.stats.calls, exclusive_ns, inclusive_ns });
    }
    for l in &profile.loops {
        let (exclusive_ns, inclusive_ns) =
            view.times(l.stats.exclusive_ns, l.stats.inclusive_ns, l.stats.compensated, l.stats.estimated);
        events.insert(event_name(profile, l.id), Sample { calls: l.stats.calls, exclusive_ns, inclusive_ns });
    }
    for c in &profile.callsites {
        let (exclusive_ns, inclusive_ns) =
            view.times(c.stats.exclusive_ns, c.stats.inclusive_ns, c.stats.compensated, c.stats.estimated);
        events.insert(event_name(profile, c.id), Sample { calls: c.stats.calls, exclusive_ns, inclusive_ns });
    }
    vec![(0, events)]
}

/// The summary of `profiles` (ranks in the order given) and their threads.
pub fn collect(profiles: &[Profile], view: View) -> Summary {
    let mut units = Vec::new();
    let mut per_unit = Vec::new();
    for profile in profiles {
        for (thread, events) in units_of(profile, view) {
            let rank = profile.mpi.as_ref().map(|m| m.rank);
            let pid = (rank.is_none() && profiles.len() > 1).then_some(profile.pid);
            units.push(Unit { rank, pid, thread });
            per_unit.push(events);
        }
    }
    let mut names: Vec<&String> = per_unit.iter().flat_map(|e| e.keys()).collect();
    names.sort();
    names.dedup();
    let events = names
        .into_iter()
        .map(|name| {
            let samples = per_unit.iter().map(|e| e.get(name).copied().unwrap_or_default()).collect();
            (name.clone(), samples)
        })
        .collect();
    Summary { units, events }
}

/// pprof's summary table: exclusive time and calls over the units, busiest first.
/// The summary as JSON for scripts: the units, and per event its value on each unit with the
/// spread (total, mean, min, max, standard deviation) of calls, exclusive and inclusive times.
pub fn json(summary: &Summary) -> String {
    let spread = |s: Spread| serde_json::json!({"total": s.total, "mean": s.mean, "min": s.min, "max": s.max, "std": s.std});
    let events: Vec<serde_json::Value> = summary
        .events
        .iter()
        .enumerate()
        .map(|(i, (name, samples))| {
            serde_json::json!({
                "name": name,
                "units": samples.iter().map(|s| serde_json::json!({
                    "calls": s.calls, "exclusive_ns": s.exclusive_ns, "inclusive_ns": s.inclusive_ns,
                })).collect::<Vec<_>>(),
                "calls": spread(summary.spread(i, |s| s.calls as f64)),
                "exclusive_ns": spread(summary.spread(i, |s| s.exclusive_ns as f64)),
                "inclusive_ns": spread(summary.spread(i, |s| s.inclusive_ns as f64)),
            })
        })
        .collect();
    let units: Vec<String> = summary.units.iter().map(Unit::label).collect();
    serde_json::json!({ "units": units, "events": events }).to_string()
}

pub fn render(summary: &Summary) -> String {
    let mut out = String::new();
    let labels: Vec<String> = summary.units.iter().map(Unit::label).collect();
    let kind = Unit::kind(&summary.units);
    let _ = writeln!(
        out,
        "Summary over {} units ({kind}: {}); a unit that never ran an event counts as 0 there\n",
        summary.units.len(),
        labels.join(" ")
    );
    let _ = writeln!(
        out,
        "{:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>10} {:>10}  Name",
        "Excl msec", "mean", "min", "max", "std", "Incl mean", "#Call", "mean"
    );
    let _ = writeln!(out, "{}", "-".repeat(104));
    let mut order: Vec<usize> = (0..summary.events.len()).collect();
    let exclusive = |i: usize| summary.spread(i, |s| s.exclusive_ns as f64);
    order.sort_by(|&a, &b| exclusive(b).total.total_cmp(&exclusive(a).total));
    for i in order {
        let (e, inc) = (exclusive(i), summary.spread(i, |s| s.inclusive_ns as f64));
        let calls = summary.spread(i, |s| s.calls as f64);
        let ms = |v: f64| v / 1e6;
        let _ = writeln!(
            out,
            "{:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>10} {:>10.1}  {}",
            ms(e.total),
            ms(e.mean),
            ms(e.min),
            ms(e.max),
            ms(e.std),
            ms(inc.mean),
            calls.total,
            calls.mean,
            summary.events[i].0
        );
    }
    out
}

/// `profile` with only thread `thread`'s numbers (events it never ran left out), for every
/// per-profile report.
pub fn one_thread(profile: &Profile, thread: u64) -> Result<Profile> {
    if profile.threads.is_empty() {
        if thread == 0 {
            return Ok(profile.clone());
        }
        return Err(ReportError::OnlyThreadZero(thread));
    }
    let Some(t) = profile.threads.iter().find(|t| t.thread == thread) else {
        let known: Vec<String> = profile.threads.iter().map(|t| t.thread.to_string()).collect();
        return Err(ReportError::NoSuchThread { thread, known: known.join(", ") });
    };
    let stats: BTreeMap<u32, &Stats> = t.events.iter().map(|e| (e.id, &e.stats)).collect();
    let mut one = profile.clone();
    one.threads.clear();
    one.totals.threads = 1;
    one.functions.retain_mut(|f| {
        let Some(s) = stats.get(&f.id) else { return false };
        (f.stats.calls, f.stats.untimed_calls, f.stats.child_calls) =
            (s.calls, s.untimed_calls, s.child_calls);
        (f.stats.exclusive_ns, f.stats.inclusive_ns, f.stats.compensated) =
            (s.exclusive_ns, s.inclusive_ns, s.compensated);
        true
    });
    one.loops.retain_mut(|l| {
        let Some(s) = stats.get(&l.id) else { return false };
        (l.stats.calls, l.stats.untimed_calls, l.stats.child_calls, l.stats.iterations) =
            (s.calls, s.untimed_calls, s.child_calls, s.iterations);
        (l.stats.exclusive_ns, l.stats.inclusive_ns, l.stats.compensated) =
            (s.exclusive_ns, s.inclusive_ns, s.compensated);
        true
    });
    one.callsites.retain_mut(|c| {
        let Some(s) = stats.get(&c.id) else { return false };
        (c.stats.calls, c.stats.untimed_calls, c.stats.child_calls) =
            (s.calls, s.untimed_calls, s.child_calls);
        (c.stats.exclusive_ns, c.stats.inclusive_ns, c.stats.compensated) =
            (s.exclusive_ns, s.inclusive_ns, s.compensated);
        true
    });
    // Loops and call statements stay inside routines the thread ran (validate's rules).
    let kept: std::collections::HashSet<u32> = one.functions.iter().map(|f| f.id).collect();
    let loops: std::collections::HashSet<u32> = one.loops.iter().map(|l| l.id).collect();
    if one.loops.iter().any(|l| !kept.contains(&l.function) || l.parent.is_some_and(|p| !loops.contains(&p)))
        || one.callsites.iter().any(|c| !kept.contains(&c.function))
    {
        return Err(ReportError::ThreadNotNested(thread));
    }
    one.communication.retain(|c| c.site.is_none_or(|s| stats.contains_key(&s)));
    one.callpaths = None;
    Ok(one)
}

/// The communication records of every rank: Li and Zhang's COM records, one line per rank,
/// call site, operation and peer, with OpenMP's waits (the OMPT tool's, per OpenMP thread).
pub fn communication(profiles: &[Profile]) -> String {
    let mut out = String::new();
    let rows: Vec<_> = profiles.iter().flat_map(|p| p.communication.iter().map(move |c| (p, c))).collect();
    if rows.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nCommunication and synchronisation (per site and peer: the peer's rank, or for OpenMP the \
         thread; wait = synchronisation delay)\n"
    );
    let _ = writeln!(
        out,
        "{:>5} {:>9} {:>12} {:>11} {:>11} {:>11} {:<20} {:>5}  Site",
        "Rank", "Calls", "Bytes", "Time msec", "Wait msec", "Transfer", "Operation", "Peer"
    );
    let _ = writeln!(out, "{}", "-".repeat(106));
    for (p, c) in rows {
        let rank = p.mpi.as_ref().map_or("-".to_string(), |m| m.rank.to_string());
        let site = c.site.map_or("(outside every event)".to_string(), |s| event_name(p, s));
        let peer = c.peer.map_or("-".to_string(), |r| r.to_string());
        let _ = writeln!(
            out,
            "{:>5} {:>9} {:>12} {:>11.3} {:>11.3} {:>11.3} {:<20} {:>5}  {}",
            rank,
            c.calls,
            c.bytes,
            c.time_ns as f64 / 1e6,
            c.wait_ns as f64 / 1e6,
            (c.time_ns - c.wait_ns) as f64 / 1e6,
            c.operation,
            peer,
            site
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_pprofs() {
        let s = Spread::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.total, s.mean, s.min, s.max, s.std), (40.0, 5.0, 2.0, 9.0, 2.0));
        assert_eq!(Spread::of(&[]), Spread { total: 0.0, mean: 0.0, min: 0.0, max: 0.0, std: 0.0 });
    }
}
