//! What a report shows of a profile, shared by every view (the flat table, the program graph,
//! summaries, exports): which times (`View`), the total they add up to, and the readable
//! names of events.

use crate::names::{self, location};
use instrument_profile::{CallSite, Compensated, Estimated, Loop, Profile};

/// Which times a report shows: uncompensated (with throttled events' untimed calls estimated
/// where the profile has estimates), compensated when the profile has them, or exactly as
/// measured (`--raw`: neither compensated nor estimated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Raw,
    Compensated,
    Measured,
}

impl View {
    /// As measured when raw times were asked for, else compensated when the profile was.
    pub fn for_profile(profile: &Profile, raw: bool) -> View {
        if raw {
            View::Measured
        } else if profile.compensation.is_some() {
            View::Compensated
        } else {
            View::Raw
        }
    }

    /// (exclusive, inclusive) nanoseconds to show: with the untimed calls of throttled events
    /// estimated where the profile has them for this view (rt/src/untimed.rs: compensated
    /// ones in the compensated view, measured ones in an uncompensated profile).
    pub fn times(
        self,
        exclusive: u64,
        inclusive: u64,
        compensated: Option<Compensated>,
        estimated: Option<Estimated>,
    ) -> (i64, i64) {
        match (self, compensated, estimated) {
            (View::Compensated, Some(_), Some(e)) | (View::Raw, None, Some(e)) => {
                (e.exclusive_ns, e.inclusive_ns)
            }
            (View::Compensated, Some(c), None) => (c.exclusive_ns, c.inclusive_ns),
            _ => (exclusive as i64, inclusive as i64),
        }
    }
}

/// All measured time: every event's exclusive time, so that routine, loop and call statement
/// shares add up to 100 %.
pub fn measured_ns(profile: &Profile, view: View) -> i64 {
    profile
        .functions
        .iter()
        .map(|f| {
            view.times(f.stats.exclusive_ns, f.stats.inclusive_ns, f.stats.compensated, f.stats.estimated).0
        })
        .sum::<i64>()
        + profile
            .loops
            .iter()
            .map(|l| {
                view.times(l.stats.exclusive_ns, l.stats.inclusive_ns, l.stats.compensated, l.stats.estimated)
                    .0
            })
            .sum::<i64>()
        + profile
            .callsites
            .iter()
            .map(|c| {
                view.times(c.stats.exclusive_ns, c.stats.inclusive_ns, c.stats.compensated, c.stats.estimated)
                    .0
            })
            .sum::<i64>()
}

/// The readable name of any event: a routine, `loop at FILE:LINE in F`, `call G at ... in F`.
pub fn event_name(profile: &Profile, id: u32) -> String {
    if let Some(f) = profile.functions.iter().find(|f| f.id == id) {
        return names::function_name(f);
    }
    if let Some(l) = profile.loops.iter().find(|l| l.id == id) {
        return loop_name(profile, l);
    }
    match profile.callsites.iter().find(|c| c.id == id) {
        Some(c) => call_name(profile, c),
        None => format!("event {id}"),
    }
}

/// `loop at cg.c:412 in conj_grad`
pub fn loop_name(profile: &Profile, l: &Loop) -> String {
    format!("loop at {} in {}", location(&l.file, l.line), function_name(profile, l.function))
}

/// `call solve at main.c:30 in main`
pub fn call_name(profile: &Profile, c: &CallSite) -> String {
    let (callee, function) = (callee_name(profile, c), function_name(profile, c.function));
    format!("call {callee} at {} in {function}", location(&c.file, c.line))
}

/// The readable name of routine `id`.
pub fn function_name(profile: &Profile, id: u32) -> String {
    profile.functions.iter().find(|f| f.id == id).map(names::function_name).unwrap_or_default()
}

/// The readable name of a call statement's callee (`(indirect)` for a call through a pointer).
pub fn callee_name(profile: &Profile, site: &CallSite) -> String {
    if site.callee.is_empty() {
        return "(indirect)".into();
    }
    let language = profile.functions.iter().find(|f| f.name == site.callee).map(|f| f.language);
    let language = language.unwrap_or_default();
    names::readable_in(&site.callee, language)
}

/// `name [file:line]` when lines are asked for.
pub fn with_line(name: String, file: &str, line: u32, lines: bool) -> String {
    if lines && !file.is_empty() {
        format!("{name} [{}]", names::location(file, line))
    } else {
        name
    }
}
