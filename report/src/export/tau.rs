//! TAU's text profile format, so that ParaProf and TAU's pprof read our profiles: one
//! `profile.<node>.<context>.<thread>` file per process (node) and thread, times in
//! microseconds. Routines are named as TAU's compiler instrumentation names them
//! (`name [{file} {line,0}]`), loops `Loop: ...`, call statements `Call: ...`, callpaths
//! `a => b => c` in group TAU_CALLPATH, and loop iteration counts are user events.

use super::events::{self, Event, Kind, Static};
use crate::callpaths::{self, Threads};
use crate::error::{ReportError, Result};
use crate::view::View;
use instrument_profile::Profile;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// The files of one export: (file name, contents).
pub fn files(profiles: &[Profile], view: View) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for (node, profile) in profiles.iter().enumerate() {
        let statics = events::statics(profile);
        let names = unique_names(&statics);
        for thread in events::threads(profile, view) {
            let paths = callpath_lines(profile, &names, thread.thread, view)?;
            let text = profile_file(profile, &thread.events, &names, &statics, &paths);
            files.push((format!("profile.{node}.0.{}", thread.thread), text));
        }
    }
    Ok(files)
}

/// Writes the files into `dir` whole or not at all: they go to a new directory next to it,
/// which then takes `dir`'s place. An existing `dir` is replaced only if it holds nothing but
/// TAU profiles (an earlier export), so stale threads or ranks never mix with new ones.
pub fn write_dir(dir: &Path, files: &[(String, String)]) -> Result<()> {
    if dir.exists() {
        let foreign = std::fs::read_dir(dir)
            .map_err(ReportError::io("read", dir))?
            .filter_map(|e| e.ok())
            .any(|e| !e.file_name().to_string_lossy().starts_with("profile."));
        if foreign {
            return Err(ReportError::NotATauDirectory(dir.into()));
        }
    }
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let staging = tempfile::Builder::new()
        .prefix(".instrument-tau")
        .tempdir_in(parent)
        .map_err(ReportError::io("write in", parent))?;
    for (name, text) in files {
        std::fs::write(staging.path().join(name), text).map_err(ReportError::io("write", name))?;
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(ReportError::io("replace", dir))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, dir).map_err(ReportError::io("create", dir))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .map_err(ReportError::io("create", dir))?;
    Ok(())
}

/// TAU names for every event, made unique (TAU merges events of the same name): a second
/// call statement to `c` on the same line becomes `Call: c [{a.c} {19,0}] #2`.
fn unique_names(statics: &HashMap<u32, Static>) -> HashMap<u32, String> {
    let mut ids: Vec<u32> = statics.keys().copied().collect();
    ids.sort_unstable();
    let mut seen: HashMap<String, u32> = HashMap::new();
    ids.into_iter()
        .map(|id| {
            let name = tau_name(&statics[&id], statics);
            let n = seen.entry(name.clone()).and_modify(|n| *n += 1).or_insert(1);
            (id, if *n == 1 { name } else { format!("{name} #{n}") })
        })
        .collect()
}

/// `main [{demo.c} {12,0}]`, `Loop: solve [{demo.c} {30,0}]`, `Call: f [{demo.c} {31,0}]`.
fn tau_name(s: &Static, statics: &HashMap<u32, Static>) -> String {
    let at = if s.file.is_empty() { String::new() } else { format!(" [{{{}}} {{{},0}}]", s.file, s.line) };
    let routine = || {
        let mut id = s.parent;
        while let Some(p) = id.and_then(|p| statics.get(&p)) {
            if p.kind == Kind::Routine {
                return p.label.clone();
            }
            id = p.parent;
        }
        String::new()
    };
    let name = match s.kind {
        Kind::Routine => format!("{}{at}", s.label),
        Kind::Loop => format!("Loop: {}{at}", routine()),
        Kind::CallSite => {
            let callee = s.label.strip_prefix("call ").unwrap_or(&s.label);
            format!("Call: {}{at}", callee.rsplit_once(" at ").map_or(callee, |(c, _)| c))
        }
    };
    name.replace('"', "'")
}

struct Line {
    name: String,
    calls: u64,
    subrs: u64,
    excl: i64,
    incl: i64,
    group: &'static str,
}

fn callpath_lines(
    profile: &Profile,
    names: &HashMap<u32, String>,
    thread: u64,
    view: View,
) -> Result<Vec<Line>> {
    if profile.callpaths.is_none() {
        return Ok(Vec::new());
    }
    let threads = if profile.threads.is_empty() { Threads::Merged } else { Threads::One(thread) };
    let rows = callpaths::table(profile, None, threads)?;
    Ok(rows
        .iter()
        .filter(|r| r.path.len() > 1 || r.path.is_empty())
        .map(|r| {
            let (excl, incl) = r.times(view);
            let name = if r.path.is_empty() {
                "(other paths)".to_string()
            } else {
                r.path
                    .iter()
                    .map(|id| names.get(id).cloned().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(" => ")
            };
            Line { name, calls: r.calls, subrs: r.child_calls, excl, incl, group: "TAU_CALLPATH" }
        })
        .collect())
}

fn profile_file(
    profile: &Profile,
    events: &[Event],
    names: &HashMap<u32, String>,
    statics: &HashMap<u32, Static>,
    paths: &[Line],
) -> String {
    let group = |id: u32| match statics.get(&id).map(|s| s.kind) {
        Some(Kind::Loop) => "TAU_LOOP",
        Some(Kind::CallSite) => "TAU_CALLSITE",
        _ => "TAU_DEFAULT",
    };
    let lines: Vec<Line> = events
        .iter()
        .map(|e| Line {
            name: names.get(&e.id).cloned().unwrap_or_else(|| format!("event {}", e.id)),
            calls: e.calls,
            subrs: e.child_calls,
            excl: e.exclusive_ns,
            incl: e.inclusive_ns,
            group: group(e.id),
        })
        .chain(paths.iter().map(|l| Line { name: l.name.clone(), ..*l }))
        .collect();
    let mut out = format!("{} templated_functions_MULTI_TIME\n", lines.len());
    let _ = writeln!(out, "# Name Calls Subrs Excl Incl ProfileCalls # {}", metadata(profile));
    for l in &lines {
        let _ = writeln!(
            out,
            "\"{}\" {} {} {} {} 0 GROUP=\"{}\"",
            l.name,
            l.calls,
            l.subrs,
            l.excl as f64 / 1e3,
            l.incl as f64 / 1e3,
            l.group
        );
    }
    out.push_str("0 aggregates\n");
    let user: Vec<String> = events
        .iter()
        .filter_map(|e| {
            let (iterations, s) = e.iterations?;
            let mean = iterations as f64 / e.calls.max(1) as f64;
            let name = names.get(&e.id)?;
            Some(format!(
                "\"Loop iterations : {name}\" {} {} {} {mean} {}",
                e.calls, s.max, s.min, s.sum_of_squares
            ))
        })
        .collect();
    if !user.is_empty() {
        let _ = writeln!(out, "{} userevents\n# eventname numevents max min mean sumsqr", user.len());
        for u in user {
            let _ = writeln!(out, "{u}");
        }
    }
    out
}

/// TAU's metadata block: the program, the clock, and what compensation did.
fn metadata(profile: &Profile) -> String {
    let mut attributes = vec![
        ("Executable", profile.command.first().cloned().unwrap_or_default()),
        ("Command Line", profile.command.join(" ")),
        ("PID", profile.pid.to_string()),
        ("Timer", profile.clock.source.to_string()),
        ("Metric Name", "TIME".into()),
        ("Exported By", concat!("instrument ", env!("CARGO_PKG_VERSION")).into()),
    ];
    if let Some(c) = &profile.compensation {
        attributes.push(("Overhead Compensation", c.strategy.to_string()));
        attributes.push(("Probe Overhead Per Event (ns)", format!("{:.2}", c.routine.inclusive_overhead_ns)));
        attributes.push(("Overhead Removed (ns)", c.removed_ns.to_string()));
    }
    let mut xml = String::from("<metadata>");
    for (name, value) in attributes {
        let _ = write!(
            xml,
            "<attribute><name>{}</name><value>{}</value></attribute>",
            escape(name),
            escape(&value)
        );
    }
    xml.push_str("</metadata>");
    xml
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
