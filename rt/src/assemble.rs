//! Turns the merged per-event records into the profile's routines, loops and call sites, in
//! nanoseconds. Copies of one non-local routine registered by several modules (C++ inline
//! functions, templates) are merged by name and their loops and call sites point to the
//! survivor; `static` routines stay apart. Events that never ran are left out, except routines
//! whose loops or call statements ran.

use crate::callpath;
use crate::registry::{EventInfo, Kind};
use crate::thread::{Record, ThreadPaths, ThreadRecords};
use crate::{compensate, switch};
use instrument_profile::{
    CallSite, CallpathRecord, Callpaths, Compensated, Estimated, Function, IterationStats, Loop, Stats,
    ThreadCallpaths, ThreadEvent, ThreadEvents,
};
use std::collections::{BTreeMap, HashMap};

pub struct Events {
    pub functions: Vec<Function>,
    pub loops: Vec<Loop>,
    pub callsites: Vec<CallSite>,
    /// For every event id, the id that stands for it in the profile.
    pub canonical: Vec<u32>,
}

/// The callpath section of the profile (None in flat mode).
pub fn callpaths(
    threads: &[ThreadPaths],
    infos: &[EventInfo],
    canonical: &[u32],
    units: &Units,
) -> Option<Callpaths> {
    let depth = match callpath::depth() {
        0 => return None,
        callpath::UNLIMITED => 0,
        k => k,
    };
    let record = |path: &[u32], r: &Record| CallpathRecord {
        path: path.iter().map(|&e| canonical.get(e as usize).copied().unwrap_or(e)).collect(),
        stats: units.stats(r),
    };
    let visible = |path: &[u32]| path.iter().all(|&e| infos.get(e as usize).is_none_or(|i| !hidden(i)));
    let threads = threads
        .iter()
        .map(|t| ThreadCallpaths {
            thread: t.thread,
            paths: t.paths.iter().filter(|(p, _)| visible(p)).map(|(p, r)| record(p, r)).collect(),
            other: (t.other.calls > 0).then(|| record(&[], &t.other)),
            overflow_paths: t.overflow,
            step_misses: t.misses,
            step_miss_ns: units.scaled_ns(t.miss_charge),
        })
        .collect();
    Some(Callpaths { depth, node_cap: callpath::node_cap(), threads })
}

/// Per-thread events (canonical ids, runtime events left out); empty unless several threads
/// measured something, since one thread's numbers are the merged ones.
pub fn threads(
    threads: &[ThreadRecords],
    infos: &[EventInfo],
    canonical: &[u32],
    units: &Units,
) -> Vec<ThreadEvents> {
    if threads.len() < 2 {
        return Vec::new();
    }
    let shown = |id: u32| infos.get(id as usize).is_some_and(|i| !hidden(i));
    let one = |t: &ThreadRecords| {
        let mut by_id: BTreeMap<u32, (Record, u64)> = BTreeMap::new();
        for (id, r) in t.records.iter().filter(|(id, _)| shown(*id)) {
            let summed = by_id.entry(canonical.get(*id as usize).copied().unwrap_or(*id)).or_default();
            summed.0.add(r);
            summed.1 = summed.1.saturating_add(under(infos, *id, r));
        }
        let events = by_id
            .into_iter()
            .map(|(id, (r, under))| ThreadEvent { id, stats: units.stats_under(&r, under) })
            .collect();
        ThreadEvents { thread: t.thread, events }
    };
    threads.iter().map(one).filter(|t| !t.events.is_empty()).collect()
}

/// Tick-to-nanosecond conversion, and whether compensated times are reported.
pub struct Units {
    pub ticks_per_second: f64,
    pub compensated: bool,
}

impl Units {
    pub fn ns(&self, ticks: u64) -> u64 {
        (ticks as f64 * 1e9 / self.ticks_per_second).round() as u64
    }

    /// Scaled ticks (2^SCALE per tick, as costs are kept) in nanoseconds.
    pub fn scaled_ns(&self, scaled: u64) -> f64 {
        scaled as f64 / f64::from(1u32 << crate::overhead::SCALE) * 1e9 / self.ticks_per_second
    }

    /// A record's statistics in nanoseconds.
    fn stats(&self, r: &Record) -> Stats {
        self.stats_under(r, 0)
    }

    /// `stats` of a flat record whose untimed calls' descendants were estimated at `under`
    /// (scaled ticks in all: `under`), part of its estimated inclusive time.
    fn stats_under(&self, r: &Record, under: u64) -> Stats {
        Stats {
            calls: r.calls + r.counted,
            untimed_calls: r.counted,
            child_calls: r.child_calls,
            exclusive_ns: self.ns(r.excl),
            inclusive_ns: self.ns(r.incl),
            iterations: r.iterations,
            compensated: self.compensated(r),
            estimated: self.estimated(r, under),
        }
    }

    fn signed_ns(&self, ticks: i64) -> i64 {
        (ticks as f64 * 1e9 / self.ticks_per_second).round() as i64
    }

    /// The times of `r` with untimed calls estimated (untimed.rs): its own counted calls'
    /// estimates in, its throttled children's out of its exclusive time, and what its untimed
    /// calls' descendants were estimated at (`under`, scaled: `untimed::UNDER`) in its
    /// inclusive time.
    fn estimated(&self, r: &Record, under: u64) -> Option<Estimated> {
        if r.untimed_own == 0 && r.untimed_children == 0 && under == 0 {
            return None;
        }
        let under = compensate::scaled_to_ticks(under) as i64;
        let (inclusive, exclusive) =
            if self.compensated { (r.comp_incl, r.comp_excl) } else { (r.incl as i64, r.excl as i64) };
        let own = compensate::scaled_to_ticks(r.untimed_own) as i64;
        let children = compensate::scaled_to_ticks(r.untimed_children) as i64;
        Some(Estimated {
            inclusive_ns: self.signed_ns(inclusive + own + under),
            exclusive_ns: self.signed_ns(exclusive - children + own),
        })
    }

    fn compensated(&self, r: &Record) -> Option<Compensated> {
        self.compensated.then(|| Compensated {
            inclusive_ns: self.signed_ns(r.comp_incl),
            exclusive_ns: self.signed_ns(r.comp_excl),
            negative: r.negative,
        })
    }
}

/// The runtime's own events (calibration) never appear in a profile.
pub fn hidden(info: &EventInfo) -> bool {
    matches!(&info.kind, Kind::Function { name, .. } if name.starts_with("__instrument_"))
}

pub fn events(infos: &[EventInfo], records: &[Record], units: &Units) -> Events {
    let record = |id: usize| records.get(id).copied().unwrap_or_default();
    let canonical = canonical_functions(infos);
    let mut loops = Vec::new();
    let mut callsites = Vec::new();
    let mut referenced: Vec<u32> = Vec::new();
    for (id, info) in infos.iter().enumerate() {
        let r = record(id);
        if r.calls + r.counted == 0 {
            continue;
        }
        match &info.kind {
            Kind::Function { .. } => {}
            Kind::Loop { function, parent } => {
                let function = canonical[*function as usize];
                referenced.push(function);
                loops.push(loop_event(id as u32, info, function, *parent, &r, units));
            }
            Kind::CallSite { function, in_loop, callee } => {
                let function = canonical[*function as usize];
                referenced.push(function);
                let site = Site { function, in_loop: *in_loop, callee: callee.clone() };
                callsites.push(callsite_event(id as u32, info, site, &r, units));
            }
        }
    }
    let functions = function_events(infos, records, &canonical, &referenced, units);
    Events { functions, loops, callsites, canonical }
}

/// Where a call statement is and what it calls.
struct Site {
    function: u32,
    in_loop: Option<u32>,
    callee: String,
}

fn loop_event(
    id: u32,
    info: &EventInfo,
    function: u32,
    parent: Option<u32>,
    r: &Record,
    units: &Units,
) -> Loop {
    let (throttled, switched_off) = switch::ending(id);
    Loop {
        id,
        function,
        parent,
        file: info.file.clone(),
        line: info.line,
        throttled,
        switched_off,
        iteration_stats: (r.iter_min1 > 0).then(|| IterationStats {
            min: r.iter_min1 - 1,
            max: r.iter_max,
            sum_of_squares: r.iter_sumsq as f64,
        }),
        stats: units.stats(r),
    }
}

fn callsite_event(id: u32, info: &EventInfo, site: Site, r: &Record, units: &Units) -> CallSite {
    let (throttled, switched_off) = switch::ending(id);
    CallSite {
        id,
        function: site.function,
        in_loop: site.in_loop,
        callee: site.callee,
        file: info.file.clone(),
        line: info.line,
        throttled,
        switched_off,
        stats: units.stats(r),
    }
}

/// The routines: each copy's records summed into its canonical copy, those that ran or hold a
/// loop or call statement that did (`referenced`), the runtime's own left out.
fn function_events(
    infos: &[EventInfo],
    records: &[Record],
    canonical: &[u32],
    referenced: &[u32],
    units: &Units,
) -> Vec<Function> {
    let mut summed: HashMap<u32, (Record, u64)> = HashMap::new();
    for (id, info) in infos.iter().enumerate() {
        if matches!(info.kind, Kind::Function { .. }) {
            let r = records.get(id).copied().unwrap_or_default();
            let sum = summed.entry(canonical[id]).or_default();
            sum.0.add(&r);
            sum.1 = sum.1.saturating_add(under(infos, id as u32, &r));
        }
    }
    let mut functions = Vec::new();
    for (id, info) in infos.iter().enumerate() {
        let Kind::Function { name, language, recursive, .. } = &info.kind else { continue };
        let (r, under) = summed.get(&(id as u32)).copied().unwrap_or_default();
        if canonical[id] != id as u32
            || hidden(info)
            || (r.calls + r.counted == 0 && !referenced.contains(&(id as u32)))
        {
            continue;
        }
        let (throttled, switched_off) = switch::ending(id as u32);
        functions.push(Function {
            id: id as u32,
            name: name.clone(),
            file: info.file.clone(),
            line: info.line,
            language: *language,
            recursive: *recursive,
            throttled,
            switched_off,
            stats: units.stats_under(&r, under),
        });
    }
    functions
}

/// What the descendants of event `id`'s untimed calls in record `r` were estimated at (scaled
/// ticks, `untimed::UNDER`), in a flat profile; with callpaths the untimed parents' exits
/// hand them up exactly (`probes::hand_up_descendants`). None for a routine that may call
/// itself: its windows' descendants hold its own inner calls, whose estimates its record holds
/// already.
fn under(infos: &[EventInfo], id: u32, r: &Record) -> u64 {
    let recursive =
        matches!(infos.get(id as usize).map(|i| &i.kind), Some(Kind::Function { recursive: true, .. }));
    if callpath::depth() != 0 || recursive {
        return 0;
    }
    (u128::from(r.counted) * u128::from(crate::untimed::under_per_call(id))).min(u128::from(u64::MAX)) as u64
}

/// For every event id, the id of the routine copy that stands for it (itself for everything
/// but duplicate copies of non-local routines).
fn canonical_functions(infos: &[EventInfo]) -> Vec<u32> {
    let mut first: HashMap<&str, u32> = HashMap::new();
    infos
        .iter()
        .enumerate()
        .map(|(id, info)| match &info.kind {
            Kind::Function { name, local: false, .. } => *first.entry(name.as_str()).or_insert(id as u32),
            _ => id as u32,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use instrument_contract::Language;

    fn function(name: &str, local: bool) -> EventInfo {
        EventInfo {
            kind: Kind::Function { name: name.into(), local, language: Language::C, recursive: false },
            file: "a.c".into(),
            line: 1,
        }
    }

    fn ran(calls: u64, ticks: u64) -> Record {
        Record { calls, incl: ticks, excl: ticks, ..Record::default() }
    }

    #[test]
    fn merges_copies_of_inline_routines_but_not_statics() {
        let infos = vec![
            function("inline_f", false),
            function("helper", true),
            function("inline_f", false),
            function("helper", true),
            EventInfo { kind: Kind::Loop { function: 2, parent: None }, file: "b.c".into(), line: 9 },
        ];
        let records = vec![ran(1, 10), ran(2, 20), ran(3, 30), ran(4, 40), ran(5, 50)];
        let e = events(&infos, &records, &Units { ticks_per_second: 1e9, compensated: false });
        let names: Vec<_> =
            e.functions.iter().map(|f| (f.name.as_str(), f.stats.calls, f.stats.exclusive_ns)).collect();
        assert_eq!(names, [("inline_f", 4, 40), ("helper", 2, 20), ("helper", 4, 40)]);
        assert_eq!(e.loops[0].function, 0, "the loop of the dropped copy points to the survivor");
    }

    #[test]
    fn leaves_out_what_never_ran_but_keeps_parents_of_loops() {
        let infos = vec![
            function("never", false),
            function("only_loops", false),
            EventInfo { kind: Kind::Loop { function: 1, parent: None }, file: "a.c".into(), line: 3 },
        ];
        let records =
            vec![Record::default(), Record::default(), Record { calls: 2, iterations: 7, ..ran(2, 5) }];
        let e = events(&infos, &records, &Units { ticks_per_second: 1e9, compensated: false });
        assert_eq!(e.functions.len(), 1);
        assert_eq!(e.functions[0].name, "only_loops");
        assert_eq!((e.loops[0].stats.calls, e.loops[0].stats.iterations), (2, 7));
    }
}
