//! `instrument report`: the flat profile as a pprof-like table sorted by exclusive time (with
//! the loops and call statements below it when they were measured), or as JSON for scripts.

use crate::names;
use crate::view::{call_name, callee_name, function_name, loop_name, with_line};
use crate::view::{event_name, measured_ns, View};
use instrument_contract::{settings, throttle};
use instrument_profile::{Compensated, Estimated, Function, Placement, ProbeKind, Profile};
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct Row {
    pub name: String,
    pub mangled: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub line: u32,
    pub calls: u64,
    /// Calls counted without timing (throttled); the times cover the others.
    #[serde(skip_serializing_if = "is_zero64")]
    pub untimed_calls: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub throttled: bool,
    /// Switched off from outside for part of the run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub switched_off: bool,
    pub child_calls: u64,
    pub exclusive_ns: u64,
    pub inclusive_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compensated: Option<Compensated>,
    /// The times with untimed calls estimated (throttled events and their callers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated: Option<Estimated>,
    /// What its probes cost (activations times the measured probe costs).
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub overhead_ns: f64,
    /// The times the table shows (compensated or raw).
    #[serde(skip)]
    pub shown: (i64, i64),
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_zero64(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

impl Row {
    fn from_function(profile: &Profile, f: &Function, view: View) -> Row {
        Row {
            name: names::function_name(f),
            mangled: f.name.clone(),
            file: f.file.clone(),
            line: f.line,
            calls: f.stats.calls,
            untimed_calls: f.stats.untimed_calls,
            throttled: f.throttled,
            switched_off: f.switched_off,
            child_calls: f.stats.child_calls,
            exclusive_ns: f.stats.exclusive_ns,
            inclusive_ns: f.stats.inclusive_ns,
            compensated: f.stats.compensated,
            estimated: f.stats.estimated,
            overhead_ns: profile.overhead_of(f.id, ProbeKind::Routine, f.stats.calls, f.stats.untimed_calls),
            shown: view.times(
                f.stats.exclusive_ns,
                f.stats.inclusive_ns,
                f.stats.compensated,
                f.stats.estimated,
            ),
        }
    }

    /// Inclusive microseconds per call: per timed call unless the untimed ones were estimated.
    pub fn inclusive_us_per_call(&self) -> f64 {
        let calls =
            if self.estimated.is_some() { self.calls } else { self.calls.saturating_sub(self.untimed_calls) };
        self.shown.1 as f64 / 1e3 / calls.max(1) as f64
    }
}

/// What a flat report is sorted by (`--sort`), largest first (names alphabetically).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SortKey {
    #[default]
    Exclusive,
    Inclusive,
    Calls,
    Name,
    Overhead,
}

/// The order of a flat report: the sort key and how many rows of each table to keep.
#[derive(Debug, Clone, Copy, Default)]
pub struct Order {
    pub key: SortKey,
    pub top: Option<usize>,
}

impl Order {
    /// Sorts `rows` by the key (ties by name, for a stable order) and keeps the top ones.
    fn apply<T>(self, rows: &mut Vec<T>, fields: impl Fn(&T) -> ((i64, i64), u64, f64, &str)) {
        rows.sort_by(|a, b| {
            let ((a_shown, a_calls, a_cost, a_name), (b_shown, b_calls, b_cost, b_name)) =
                (fields(a), fields(b));
            let by_key = match self.key {
                SortKey::Exclusive => b_shown.0.cmp(&a_shown.0),
                SortKey::Inclusive => b_shown.1.cmp(&a_shown.1),
                SortKey::Calls => b_calls.cmp(&a_calls),
                SortKey::Overhead => b_cost.total_cmp(&a_cost),
                SortKey::Name => std::cmp::Ordering::Equal,
            };
            by_key.then_with(|| a_name.cmp(b_name))
        });
        if let Some(top) = self.top {
            rows.truncate(top);
        }
    }
}

/// Rows sorted by the exclusive time shown (largest first), then by name for a stable order.
pub fn rows(profile: &Profile, view: View) -> Vec<Row> {
    rows_in(profile, view, Order::default())
}

/// Rows in `order`.
pub fn rows_in(profile: &Profile, view: View, order: Order) -> Vec<Row> {
    let mut rows: Vec<Row> = profile.functions.iter().map(|f| Row::from_function(profile, f, view)).collect();
    order.apply(&mut rows, |r| (r.shown, r.calls, r.overhead_ns, r.name.as_str()));
    rows
}

/// A loop or call statement with its readable name (`loop at cg.c:412 in conj_grad`).
#[derive(Debug, Serialize)]
pub struct EventRow {
    pub name: String,
    pub function: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub line: u32,
    pub count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callee: Option<String>,
    pub child_calls: u64,
    pub exclusive_ns: u64,
    pub inclusive_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compensated: Option<Compensated>,
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub overhead_ns: f64,
    #[serde(skip)]
    pub shown: (i64, i64),
}

/// Loops, then call statements, each sorted by the inclusive time shown.
pub fn event_rows(profile: &Profile, view: View) -> (Vec<EventRow>, Vec<EventRow>) {
    event_rows_in(profile, view, Order { key: SortKey::Inclusive, top: None })
}

/// Loops, then call statements, each in `order`.
pub fn event_rows_in(profile: &Profile, view: View, order: Order) -> (Vec<EventRow>, Vec<EventRow>) {
    let mut loops: Vec<EventRow> = profile
        .loops
        .iter()
        .map(|l| EventRow {
            name: loop_name(profile, l),
            function: function_name(profile, l.function),
            file: l.file.clone(),
            line: l.line,
            count: l.stats.calls,
            iterations: Some(l.stats.iterations),
            callee: None,
            child_calls: l.stats.child_calls,
            exclusive_ns: l.stats.exclusive_ns,
            inclusive_ns: l.stats.inclusive_ns,
            compensated: l.stats.compensated,
            overhead_ns: profile.overhead_of(l.id, ProbeKind::Loop, l.stats.calls, l.stats.untimed_calls),
            shown: view.times(
                l.stats.exclusive_ns,
                l.stats.inclusive_ns,
                l.stats.compensated,
                l.stats.estimated,
            ),
        })
        .collect();
    let mut sites: Vec<EventRow> = profile
        .callsites
        .iter()
        .map(|c| EventRow {
            name: call_name(profile, c),
            function: function_name(profile, c.function),
            file: c.file.clone(),
            line: c.line,
            count: c.stats.calls,
            iterations: None,
            callee: Some(callee_name(profile, c)),
            child_calls: c.stats.child_calls,
            exclusive_ns: c.stats.exclusive_ns,
            inclusive_ns: c.stats.inclusive_ns,
            compensated: c.stats.compensated,
            overhead_ns: profile.overhead_of(c.id, ProbeKind::Routine, c.stats.calls, c.stats.untimed_calls),
            shown: view.times(
                c.stats.exclusive_ns,
                c.stats.inclusive_ns,
                c.stats.compensated,
                c.stats.estimated,
            ),
        })
        .collect();
    for list in [&mut loops, &mut sites] {
        order.apply(list, |e| (e.shown, e.count, e.overhead_ns, e.name.as_str()));
    }
    (loops, sites)
}

#[derive(Serialize)]
struct JsonReport<'a> {
    command: &'a [String],
    pid: u32,
    wall_ns: u64,
    clock: &'a instrument_profile::Clock,
    totals: &'a instrument_profile::Totals,
    #[serde(skip_serializing_if = "Option::is_none")]
    compensation: Option<&'a instrument_profile::Compensation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overhead: Option<&'a instrument_profile::Overhead>,
    functions: Vec<Row>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    loops: Vec<EventRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    callsites: Vec<EventRow>,
}

pub fn json(profile: &Profile) -> String {
    json_in(profile, Order::default())
}

/// The JSON report with its routines, loops and call statements in `order`.
pub fn json_in(profile: &Profile, order: Order) -> String {
    let events =
        if order.key == SortKey::Exclusive { Order { key: SortKey::Inclusive, ..order } } else { order };
    let (loops, callsites) = event_rows_in(profile, View::Raw, events);
    let report = JsonReport {
        command: &profile.command,
        pid: profile.pid,
        wall_ns: profile.totals.wall_ns,
        clock: &profile.clock,
        totals: &profile.totals,
        compensation: profile.compensation.as_ref(),
        overhead: profile.overhead.as_ref(),
        functions: rows_in(profile, View::Raw, order),
        loops,
        callsites,
    };
    serde_json::to_string_pretty(&report).expect("report serialises")
}

/// What the probes' placement, and the routines too small to instrument, mean for the numbers,
/// in one line.
pub fn placement_note(placement: Placement, small_threshold: Option<u32>) -> String {
    let meaning = match placement {
        Placement::Late => {
            "after optimisation: the plain build's code, inlined routines timed in their callers"
        }
        Placement::Early => {
            "before inlining: every source routine, but its probes change how hot code compiles"
        }
        Placement::Mixed => "modules built differently: inlined routines are missing from the late ones",
    };
    let small = small_threshold.map_or(String::new(), |n| {
        format!(
            "; so are routines under {n} instructions without loops or recursion \
             (INSTRUMENT_MIN_INSTRUCTIONS=0 at build gives them events)"
        )
    });
    format!("placement: {placement} ({meaning}{small})")
}

pub fn table(profile: &Profile, lines: bool, view: View) -> String {
    table_in(profile, lines, view, Order::default())
}

/// The table with its routines (and loops and call statements) in `order`; a table cut to the
/// top rows says how many it left out.
pub fn table_in(profile: &Profile, lines: bool, view: View, order: Order) -> String {
    let mut out = header(profile, view);
    let total = measured_ns(profile, view);
    routine_rows(&mut out, profile, (lines, view, total), order);
    let events =
        if order.key == SortKey::Exclusive { Order { key: SortKey::Inclusive, ..order } } else { order };
    event_tables(&mut out, profile, (view, total), events);
    out.push_str(&crate::summary::communication(std::slice::from_ref(profile)));
    out
}

/// The lines above the table: the program, the run, the placement, the settings that shape the
/// numbers, the anomalies, compensation and what the probes cost.
fn header(profile: &Profile, view: View) -> String {
    let mut out = String::new();
    let t = &profile.totals;
    let _ = writeln!(out, "Profile of: {}", profile.command.join(" "));
    let _ = writeln!(
        out,
        "pid {}, {} thread(s), wall {:.3} ms, clock {} at {:.3} GHz",
        profile.pid,
        t.threads,
        t.wall_ns as f64 / 1e6,
        profile.clock.source,
        profile.clock.ticks_per_second / 1e9
    );
    if let Some(placement) = profile.placement {
        let _ = writeln!(out, "{}", placement_note(placement, profile.small_threshold));
    }
    // Where the profile went is where it is.
    let set: Vec<String> = (profile.settings.iter())
        .filter(|(name, _)| *name != settings::PROFILE_DIR.name)
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if !set.is_empty() {
        let _ = writeln!(out, "settings: {}", set.join(" "));
    }
    if let Some(mpi) = &profile.mpi {
        let _ = writeln!(out, "MPI rank {} of {}", mpi.rank, mpi.size);
    }
    for note in anomalies(profile) {
        let _ = writeln!(out, "note: {note}");
    }
    if let Some(c) = &profile.compensation {
        let _ = writeln!(out, "{}", compensation_note(c, view));
        if view == View::Compensated {
            let notes = [crate::uncertainty::note(profile), crate::uncertainty::split_note(profile)];
            for note in notes.into_iter().flatten() {
                let _ = writeln!(out, "{note}");
            }
        }
    }
    if let Some(note) = overhead_note(profile) {
        let _ = writeln!(out, "{note}");
    }
    let _ = writeln!(out);
    out
}

/// The routines' table, in `order`, with shares of `total` (all measured time).
fn routine_rows(out: &mut String, profile: &Profile, (lines, view, total): (bool, View, i64), order: Order) {
    let rows = rows_in(profile, view, order);
    pprof_header(out, "Name");
    for r in &rows {
        let (exclusive, inclusive) = r.shown;
        let share = if total == 0 { 0.0 } else { 100.0 * exclusive as f64 / total as f64 };
        let name = if r.throttled { format!("{} [throttled]", r.name) } else { r.name.clone() };
        let _ = writeln!(
            out,
            "{:>6.1} {:>12.3} {:>12.3} {:>12} {:>12} {:>12.3}  {}",
            share,
            exclusive as f64 / 1e6,
            inclusive as f64 / 1e6,
            r.calls,
            r.child_calls,
            r.inclusive_us_per_call(),
            with_line(name, &r.file, r.line, lines)
        );
    }
    if rows.len() < profile.functions.len() {
        let (more, shown) = (profile.functions.len() - rows.len(), rows.len());
        let _ = writeln!(out, "({more} more routines; --top shows the first {shown})");
    }
}

/// The loops' and call statements' tables, in `order`, with shares of `total`.
fn event_tables(out: &mut String, profile: &Profile, (view, total): (View, i64), order: Order) {
    let (loops, sites) = event_rows_in(profile, view, order);
    for (title, events) in [("Loops", loops), ("Call statements", sites)] {
        if events.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title}\n");
        let _ = writeln!(
            out,
            "{:>6} {:>12} {:>12} {:>12} {:>12}  Name",
            "%Time", "Inclusive", "Exclusive", "Count", "Iterations"
        );
        let _ = writeln!(out, "{}", "-".repeat(84));
        for e in events {
            let (exclusive, inclusive) = e.shown;
            let share = if total == 0 { 0.0 } else { 100.0 * inclusive as f64 / total as f64 };
            let _ = writeln!(
                out,
                "{:>6.1} {:>12.3} {:>12.3} {:>12} {:>12}  {}",
                share,
                inclusive as f64 / 1e6,
                exclusive as f64 / 1e6,
                e.count,
                e.iterations.map(|i| i.to_string()).unwrap_or_default(),
                e.name
            );
        }
    }
}

/// The column headers of pprof's table (%Time, Exclusive, Inclusive, #Call, #Subrs,
/// Inclusive per call), shared by the routine and callpath tables.
pub fn pprof_header(out: &mut String, last_column: &str) {
    let _ = writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>12} {:>12} {:>12}  {last_column}",
        "%Time", "Exclusive", "Inclusive", "#Call", "#Subrs", "Inclusive"
    );
    let _ = writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "", "msec", "total msec", "", "", "usec/call"
    );
    let _ = writeln!(out, "{}", "-".repeat(84));
}

/// One line saying whether times are compensated, by how much, and what came out negative.
pub fn compensation_note(c: &instrument_profile::Compensation, view: View) -> String {
    let which = match view {
        View::Compensated => "times are compensated",
        View::Raw | View::Measured => "times are raw (the profile also has compensated times)",
    };
    let mut note = format!(
        "{which}: probe cost Δi {:.2} ns per event (Δe {:.2} ns), loops Δi {:.2} ns; {:.3} ms removed; calibration took {:.2} ms",
        c.routine.inclusive_overhead_ns,
        c.routine.exclusive_overhead_ns,
        c.loop_probe.inclusive_overhead_ns,
        c.removed_ns as f64 / 1e6,
        c.calibration_ns as f64 / 1e6
    );
    if c.negative_results > 0 {
        note.push_str(&format!(
            "\nnote: {} activation(s) came out negative after compensation (shorter than the probe cost varies); they are kept as they are",
            c.negative_results
        ));
    }
    if let Some(p) = &c.piggyback {
        note.push_str(&format!(
            "\nacross ranks: {:.3} ms of other ranks' overhead inherited by waiting and removed ({} message(s) carried an overhead; piggybacking cost {:.3} ms, also removed)",
            p.inherited_ns as f64 / 1e6,
            p.messages,
            p.cost_ns as f64 / 1e6
        ));
    }
    if let Some(r) = &c.recalibration {
        note.push_str(&format!(
            "
recalibrated {} time(s) while running: Δi {:.2} to {:.2} ns{} ({:.3} ms, removed)",
            r.rounds,
            r.routine_low_ns,
            r.routine_high_ns,
            counted_range(r),
            r.cost_ns as f64 / 1e6
        ));
    }
    note
}

/// The counted pair's range over the recalibration rounds, for the line that gives Δi's
/// (nothing for profiles from before rounds measured it).
pub fn counted_range(r: &instrument_profile::Recalibration) -> String {
    if r.counted_high_ns > 0.0 {
        format!(", counted {:.2} to {:.2} ns", r.counted_low_ns, r.counted_high_ns)
    } else {
        String::new()
    }
}

/// One line saying what the probes cost in this run, in total and where most of it came from.
pub fn overhead_note(profile: &Profile) -> Option<String> {
    let o = profile.overhead.as_ref()?;
    let mut note = format!(
        "probes: {:.3} ms, {:.1} % of the run (a probe pair costs: timed {:.1} ns, counted-only {:.1}, switched-off {:.1})",
        o.total_ns / 1e6,
        o.percent_of_run,
        o.costs.routine.measured_ns,
        o.costs.routine.counted_ns,
        o.costs.routine.off_ns
    );
    if profile.totals.inline_counted > 0 {
        let _ = write!(
            note,
            "; {} counted calls made no probe call (counted inline, {:.1} ns each)",
            profile.totals.inline_counted, o.inline_count_ns
        );
    }
    if o.estimation_ns > 0.0 {
        let _ = write!(note, "; measuring their cost in place took {:.3} ms", o.estimation_ns / 1e6);
    }
    if o.recalibration_ns > 0.0 {
        let _ = write!(note, ", recalibrating {:.3} ms", o.recalibration_ns / 1e6);
    }
    let top = profile
        .activations()
        .map(|(id, kind, calls, untimed)| (id, o.of_event(id, kind, calls, untimed)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    if let Some((id, ns)) = top.filter(|&(_, ns)| ns > 0.0 && o.total_ns > 0.0) {
        let _ = write!(note, "; most from {} ({:.0} %)", event_name(profile, id), 100.0 * ns / o.total_ns);
    }
    Some(note)
}

/// What throttling did, under the rule the run applied, when it throttled anything.
fn throttling_note(profile: &Profile) -> Option<String> {
    let throttled = profile.functions.iter().filter(|f| f.throttled).count()
        + profile.loops.iter().filter(|l| l.throttled).count()
        + profile.callsites.iter().filter(|c| c.throttled).count();
    if throttled == 0 {
        return None;
    }
    let estimated = profile.functions.iter().any(|f| f.throttled && f.stats.estimated.is_some())
        || profile.loops.iter().any(|l| l.throttled && l.stats.estimated.is_some())
        || profile.callsites.iter().any(|c| c.throttled && c.stats.estimated.is_some());
    let timing = if estimated {
        "timed only before, their later calls estimated at the mean of the timed ones (and taken out of their callers)"
    } else {
        "timed only before"
    };
    // The rule the run applied; profiles from before it was recorded ran the default.
    let rule = profile
        .throttle
        .map_or(throttle::DEFAULT, |t| throttle::Rule { calls: t.calls, per_call_us: t.per_call_us });
    Some(format!(
        "{throttled} event(s) throttled ({}): counted exactly, {timing}; \
         `instrument report --suggest-filter FILE` writes a selection that leaves them out",
        rule.describe()
    ))
}

/// Routines whose estimated exclusive time came out below zero (without compensation, whose
/// negative results have their own count): a throttled callee's estimate is its mean call, and
/// these callers' calls of it were cheaper. Shown as estimated, not clamped, so that the
/// estimated times still add up to the measured ones.
fn below_zero_note(profile: &Profile) -> Option<String> {
    if profile.compensation.is_some() {
        return None;
    }
    let below: Vec<&str> = profile
        .functions
        .iter()
        .filter(|f| f.stats.estimated.is_some_and(|e| e.exclusive_ns < 0))
        .map(|f| f.name.as_str())
        .collect();
    let first = below.first()?;
    Some(format!(
        "{} routine(s) ({first}{}) have an estimated exclusive time below zero: their throttled callees' \
         calls from them were cheaper than those callees' mean call, which the estimate charges",
        below.len(),
        if below.len() > 1 { ", ..." } else { "" }
    ))
}

fn anomalies(profile: &Profile) -> Vec<String> {
    let t = &profile.totals;
    let mut notes = Vec::new();
    match profile.ended_by.as_deref() {
        Some("exec") => {
            notes.push("the process exec'd another program: this is what was measured until then".to_string())
        }
        Some(signal) => {
            notes.push(format!("the run ended with {signal}: this is what was measured until then"))
        }
        None => {}
    }
    notes.extend(crate::waits::note(t));
    notes.extend(throttling_note(profile));
    notes.extend(below_zero_note(profile));
    let switched = profile.functions.iter().filter(|f| f.switched_off).count()
        + profile.loops.iter().filter(|l| l.switched_off).count()
        + profile.callsites.iter().filter(|c| c.switched_off).count();
    if switched > 0 {
        notes.push(format!(
            "{switched} event(s) switched off from outside (instrument top) for part of the run: \
             their counts and times cover only the calls made while they were on"
        ));
    }
    if let Some(parent) = profile.forked_from {
        notes.push(format!(
            "a child forked from pid {parent}: includes what the parent measured before the fork"
        ));
    }
    let mut note = |n: u64, what: &str| {
        if n > 0 {
            notes.push(format!("{n} {what}"));
        }
    };
    note(t.frames_closed_at_exit, "frame(s) still open at exit were closed then (exit() or a noreturn call)");
    note(t.frames_reconciled, "frame(s) skipped by longjmp or unwinding were closed when detected");
    note(
        t.stack_overflow_events,
        "event(s) beyond the shadow stack capacity were not measured (INSTRUMENT_STACK_FRAMES)",
    );
    note(t.unmatched_exits, "exit event(s) had no matching entry");
    note(t.unregistered_events, "event(s) came from modules not yet registered");
    note(t.threads_running_at_exit, "thread(s) were still running at exit (their counts are a snapshot)");
    note(t.communication_dropped, "MPI call(s) were not recorded: the communication table was full");
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(inflate_exclusive_ns: i64) -> Profile {
        let text = format!(
            r#"{{"format":"instrument-profile","version":2,"command":["./a"],"pid":1,
            "clock":{{"source":"tsc","ticks_per_second":1e9,"calibration_ns":1}},
            "totals":{{"wall_ns":1000000,"threads":1,"threads_running_at_exit":0,"events":0,
              "frames_closed_at_exit":0,"frames_reconciled":0,"stack_overflow_events":0,
              "unmatched_exits":0,"unregistered_events":0}},
            "functions":[
              {{"id":0,"name":"main","calls":1,"child_calls":2,"exclusive_ns":10,"inclusive_ns":900}},
              {{"id":1,"name":"inflate","calls":2,"child_calls":9,"exclusive_ns":50,"inclusive_ns":800,
                "estimated":{{"inclusive_ns":800,"exclusive_ns":{inflate_exclusive_ns}}}}}],
            "loops":[]}}"#
        );
        Profile::from_json(&text).unwrap()
    }

    #[test]
    fn an_estimated_exclusive_time_below_zero_is_named_not_clamped() {
        let note = below_zero_note(&profile(-7)).expect("a note");
        assert!(
            note.starts_with("1 routine(s) (inflate) have an estimated exclusive time below zero"),
            "{note}"
        );
        assert_eq!(below_zero_note(&profile(7)), None);
    }

    #[test]
    fn the_probes_line_says_what_measuring_took() {
        let mut profile = profile(7);
        let pair = instrument_profile::PairCosts { measured_ns: 30.0, counted_ns: 3.0, off_ns: 1.0 };
        profile.overhead = Some(instrument_profile::Overhead {
            costs: instrument_profile::ProbeCosts { routine: pair, loop_probe: pair },
            calibration_ns: 1,
            total_ns: 2.5e6,
            percent_of_run: 2.5,
            estimation_ns: 0.5e6,
            recalibration_ns: 1.5e6,
            in_place: Vec::new(),
            inline_count_ns: 0.0,
            inline_share: 0.0,
            unestimated_scale: 1.0,
            pathed_scale: 1.0,
            pathed_scale_events: 0,
        });
        let note = overhead_note(&profile).unwrap();
        assert!(note.starts_with("probes: 2.500 ms, 2.5 % of the run"), "{note}");
        assert!(
            note.contains("; measuring their cost in place took 0.500 ms, recalibrating 1.500 ms"),
            "{note}"
        );
    }
}
