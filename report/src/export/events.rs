//! The events of a profile as the exports see them: one list per thread (or one merged list
//! when a single thread measured something), every event with its readable name, the event it
//! is nested in (a loop's routine or enclosing loop, a call statement's loop or routine), and
//! its times in the chosen view (compensated or raw).

use crate::callpaths::Labels;
use crate::view::View;
use instrument_profile::{Compensated, IterationStats, Profile};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Routine,
    Loop,
    CallSite,
}

/// What an event is, independent of any thread.
#[derive(Debug, Clone)]
pub struct Static {
    pub kind: Kind,
    /// Readable name (`conj_grad`, `loop at cg.c:412`, `call sparse at cg.c:98`).
    pub label: String,
    /// The symbol as linked (routines only).
    pub symbol: String,
    pub file: String,
    pub line: u32,
    /// The enclosing event (none for routines).
    pub parent: Option<u32>,
}

/// One event's numbers on one thread (or merged).
#[derive(Debug, Clone)]
pub struct Event {
    pub id: u32,
    pub calls: u64,
    pub child_calls: u64,
    pub exclusive_ns: i64,
    pub inclusive_ns: i64,
    /// Loops: iterations per execution (merged view only).
    pub iterations: Option<(u64, IterationStats)>,
}

pub struct ThreadEvents {
    pub thread: u64,
    pub events: Vec<Event>,
}

/// Every event of the profile by id.
pub fn statics(profile: &Profile) -> HashMap<u32, Static> {
    let labels = Labels::new(profile);
    let mut map = HashMap::new();
    let mut add = |id: u32, kind, symbol: &str, file: &str, line, parent| {
        let s =
            Static { kind, label: labels.get(id), symbol: symbol.into(), file: file.into(), line, parent };
        map.insert(id, s);
    };
    for f in &profile.functions {
        add(f.id, Kind::Routine, &f.name, &f.file, f.line, None);
    }
    for l in &profile.loops {
        add(l.id, Kind::Loop, "", &l.file, l.line, Some(l.parent.unwrap_or(l.function)));
    }
    for c in &profile.callsites {
        add(c.id, Kind::CallSite, "", &c.file, c.line, Some(c.in_loop.unwrap_or(c.function)));
    }
    map
}

/// Per-thread events, or the merged ones as thread 0 when the profile has no per-thread data.
pub fn threads(profile: &Profile, view: View) -> Vec<ThreadEvents> {
    if profile.threads.is_empty() {
        return vec![ThreadEvents { thread: 0, events: merged(profile, view) }];
    }
    profile
        .threads
        .iter()
        .map(|t| ThreadEvents {
            thread: t.thread,
            events: t
                .events
                .iter()
                .map(|e| {
                    let s = &e.stats;
                    event(view, e.id, (s.calls, s.child_calls), s.exclusive_ns, s.inclusive_ns, s.compensated)
                })
                .collect(),
        })
        .collect()
}

/// All threads merged.
pub fn merged(profile: &Profile, view: View) -> Vec<Event> {
    let event =
        |id, calls, child_calls, excl, incl, comp| event(view, id, (calls, child_calls), excl, incl, comp);
    let mut events: Vec<Event> = Vec::new();
    for f in &profile.functions {
        events.push(event(
            f.id,
            f.stats.calls,
            f.stats.child_calls,
            f.stats.exclusive_ns,
            f.stats.inclusive_ns,
            f.stats.compensated,
        ));
    }
    for l in &profile.loops {
        let mut e = event(
            l.id,
            l.stats.calls,
            l.stats.child_calls,
            l.stats.exclusive_ns,
            l.stats.inclusive_ns,
            l.stats.compensated,
        );
        e.iterations = l.iteration_stats.map(|s| (l.stats.iterations, s));
        events.push(e);
    }
    for c in &profile.callsites {
        events.push(event(
            c.id,
            c.stats.calls,
            c.stats.child_calls,
            c.stats.exclusive_ns,
            c.stats.inclusive_ns,
            c.stats.compensated,
        ));
    }
    events
}

/// One event's numbers in `view`; `counts` are (calls, child calls).
fn event(view: View, id: u32, counts: (u64, u64), excl: u64, incl: u64, comp: Option<Compensated>) -> Event {
    let (exclusive_ns, inclusive_ns) = view.times(excl, incl, comp, None);
    Event { id, calls: counts.0, child_calls: counts.1, exclusive_ns, inclusive_ns, iterations: None }
}

/// The event and the events it is nested in, innermost first (a static stack: loop, routine).
pub fn nesting(statics: &HashMap<u32, Static>, id: u32) -> Vec<u32> {
    let mut chain = vec![id];
    while let Some(parent) = statics.get(chain.last().expect("not empty")).and_then(|s| s.parent) {
        if chain.contains(&parent) {
            break;
        }
        chain.push(parent);
    }
    chain
}
