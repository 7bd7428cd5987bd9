//! The one line a run prints at exit when its probes dominate it: a user who built with early
//! placement, or whose program calls tiny routines that survive inlining millions of times,
//! otherwise learns only from a slow program and a profile whose times are mostly probes. The
//! share is the profile's overhead figure (in-place costs where the runtime measured them), the
//! offenders are the events it charges most, and the line names the two ways out.
//! `INSTRUMENT_QUIET=1` keeps it quiet.

use instrument_profile::{Placement, Profile};
use std::path::Path;

/// The probes' share of the run (percent of wall time) above which the line is printed.
const DOMINANT_PERCENT: f64 = 30.0;
/// Offenders named.
const NAMED: usize = 3;

/// Prints the line for the profile just written to `path`, when its probes dominate the run.
pub fn after_write(profile: &Profile, path: &Path) {
    if crate::settings::flag(&crate::settings::QUIET) == Some(true) {
        return;
    }
    if let Some(line) = line(profile, path) {
        eprintln!("{line}");
    }
}

/// The line, when the probes took more than DOMINANT_PERCENT of the run.
pub fn line(profile: &Profile, path: &Path) -> Option<String> {
    let overhead = profile.overhead.as_ref().filter(|o| o.percent_of_run > DOMINANT_PERCENT)?;
    let mut costs: Vec<(u32, f64)> = profile
        .activations()
        .map(|(id, kind, calls, untimed)| (id, overhead.of_event(id, kind, calls, untimed)))
        .filter(|&(_, ns)| ns > 0.0)
        .collect();
    costs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let named: Vec<String> = costs
        .iter()
        .take(NAMED)
        .map(|&(id, ns)| format!("{} ({:.0} %)", name(profile, id), 100.0 * ns / overhead.total_ns.max(1.0)))
        .collect();
    let placement = match profile.placement {
        Some(Placement::Late) | None => String::new(),
        Some(_) => "rebuild with --instrument-placement=late (the plain build's code), or ".into(),
    };
    Some(format!(
        "instrument: the probes took about {:.0} % of this run, most in {}; {}leave them out: \
         `instrument report --suggest-filter FILE {}`, then rebuild with INSTRUMENT_SELECT=FILE \
         (INSTRUMENT_QUIET=1 hides this line)",
        overhead.percent_of_run,
        named.join(", "),
        placement,
        path.display()
    ))
}

/// A routine's name, or where a loop or call statement is.
fn name(profile: &Profile, id: u32) -> String {
    if let Some(f) = profile.functions.iter().find(|f| f.id == id) {
        return f.name.clone();
    }
    let place = |file: &str, line: u32| {
        format!("{}:{line}", Path::new(file).file_name().map_or(file.into(), |n| n.to_string_lossy()))
    };
    if let Some(l) = profile.loops.iter().find(|l| l.id == id) {
        return format!("loop at {}", place(&l.file, l.line));
    }
    match profile.callsites.iter().find(|c| c.id == id) {
        Some(c) => format!("call at {}", place(&c.file, c.line)),
        None => format!("event {id}"),
    }
}
