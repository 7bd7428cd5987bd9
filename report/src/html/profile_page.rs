//! The HTML page of one profile: summary facts, compensation, sortable tables, the program
//! graph and the flame graph.

use super::{escape, page, table_section, Table};
use crate::callpaths::{self, Labels, Threads};
use crate::error::Result;
use crate::export::folded;
use crate::names::location;
use crate::report;
use crate::tree::{self, TreeOptions};
use crate::view::View;
use instrument_profile::Profile;
use serde_json::json;

const MS: f64 = 1e6;
const US: f64 = 1e3;

pub fn profile_page(profile: &Profile, view: View) -> Result<String> {
    let program = profile.command.join(" ");
    let mut body = format!("<h1>Profile of {}</h1>\n{}", escape(&program), facts(profile));
    body.push_str(&compensation(profile, view));
    let mut tables = vec![routines(profile, view)];
    body.push_str(&table_section("Routines", "routines", true));
    let (loops, sites) = report::event_rows(profile, view);
    if !loops.is_empty() {
        body.push_str(&table_section("Loops", "loops", true));
        tables.push(event_table("loops", &loops, true));
    }
    if !sites.is_empty() {
        body.push_str(&table_section("Call statements", "callsites", true));
        tables.push(event_table("callsites", &sites, false));
    }
    if profile.callpaths.is_some() {
        body.push_str(&table_section("Callpaths", "callpaths", true));
        tables.push(callpath_table(profile, view)?);
    }
    if !profile.threads.is_empty() {
        body.push_str(&table_section("Threads", "threads", false));
        tables.push(thread_table(profile, view));
    }
    body.push_str(&program_graph(profile, view)?);
    body.push_str(&flame_graph(profile)?);
    Ok(page(&format!("instrument: {program}"), &body, &tables))
}

fn facts(profile: &Profile) -> String {
    let t = &profile.totals;
    let mut rows = vec![
        ("Wall time", format!("{:.3} ms", t.wall_ns as f64 / MS)),
        ("Process", profile.pid.to_string()),
        ("Threads", t.threads.to_string()),
        ("Events", t.events.to_string()),
        ("Clock", format!("{} at {:.3} GHz", profile.clock.source, profile.clock.ticks_per_second / 1e9)),
    ];
    if t.waited_ns > 0 {
        rows.push((
            "Waited for a core",
            format!("{:.3} ms (other programs had the cores)", t.waited_ns as f64 / 1e6),
        ));
    }
    for (name, value) in [
        ("Frames closed at exit", t.frames_closed_at_exit),
        ("Frames reconciled (longjmp, unwinding)", t.frames_reconciled),
        ("Events lost to a full shadow stack", t.stack_overflow_events),
        ("Unmatched exits", t.unmatched_exits),
        ("Threads running at exit", t.threads_running_at_exit),
    ] {
        if value > 0 {
            rows.push((name, value.to_string()));
        }
    }
    dl("facts", &rows)
}

fn dl(id: &str, rows: &[(&str, String)]) -> String {
    let items: String =
        rows.iter().map(|(k, v)| format!("<dt>{}</dt><dd>{}</dd>", escape(k), escape(v))).collect();
    format!("<dl class=\"facts\" id=\"{id}\">{items}</dl>\n")
}

fn compensation(profile: &Profile, view: View) -> String {
    let Some(c) = &profile.compensation else { return String::new() };
    let mut rows = vec![
        (
            "Times shown",
            if view == View::Compensated { "compensated" } else { "raw (as measured)" }.to_string(),
        ),
        ("Strategy", c.strategy.to_string()),
        ("Routine probe overhead per event (Δi)", format!("{:.2} ns", c.routine.inclusive_overhead_ns)),
        (
            "Routine probe cost charged to the parent (Δe)",
            format!("{:.2} ns", c.routine.exclusive_overhead_ns),
        ),
        ("Loop probe overhead per event", format!("{:.2} ns", c.loop_probe.inclusive_overhead_ns)),
        ("Calibration at start-up", format!("{:.3} ms", c.calibration_ns as f64 / MS)),
        ("Probe time removed", format!("{:.3} ms", c.removed_ns as f64 / MS)),
        ("Negative compensated results (kept, not clamped)", c.negative_results.to_string()),
    ];
    if let Some(p) = &c.piggyback {
        rows.push((
            "Inherited from other ranks and removed",
            format!("{:.3} ms", p.inherited_ns as f64 / MS),
        ));
        rows.push(("Messages that carried an overhead", p.messages.to_string()));
    }
    if let Some(r) = &c.recalibration {
        rows.push((
            "Recalibrated while running",
            format!(
                "{} time(s), Δi {:.2} to {:.2} ns{}, {:.3} ms",
                r.rounds,
                r.routine_low_ns,
                r.routine_high_ns,
                crate::report::counted_range(r),
                r.cost_ns as f64 / MS
            ),
        ));
    }
    format!(
        "<section id=\"section-compensation\"><h2>Overhead compensation</h2>{}</section>\n",
        dl("compensation", &rows)
    )
}

fn routines(profile: &Profile, view: View) -> Table {
    let rows = report::rows(profile, view)
        .into_iter()
        .map(|r| {
            let per_call = r.shown.1 as f64 / r.calls.max(1) as f64 / 1e3;
            json!({
                "name": r.name, "calls": r.calls, "subrs": r.child_calls,
                "exclusive": r.shown.0 as f64 / US, "inclusive": r.shown.1 as f64 / US,
                "per_call": per_call, "location": location(&r.file, r.line),
            })
        })
        .collect();
    Table {
        id: "routines",
        sort: "exclusive",
        columns: vec![
            ("name", "Routine", true),
            ("exclusive", "Exclusive µs", false),
            ("inclusive", "Inclusive µs", false),
            ("calls", "Calls", false),
            ("subrs", "Child calls", false),
            ("per_call", "Inclusive µs/call", false),
            ("location", "Source", true),
        ],
        rows,
    }
}

fn event_table(id: &'static str, rows: &[report::EventRow], loops: bool) -> Table {
    let rows = rows
        .iter()
        .map(|r| {
            json!({
                "name": r.name, "count": r.count, "iterations": r.iterations,
                "exclusive": r.shown.0 as f64 / US, "inclusive": r.shown.1 as f64 / US,
            })
        })
        .collect();
    let mut columns = vec![
        ("name", if loops { "Loop" } else { "Call statement" }, true),
        ("inclusive", "Inclusive µs", false),
        ("exclusive", "Exclusive µs", false),
        ("count", if loops { "Executions" } else { "Calls" }, false),
    ];
    if loops {
        columns.push(("iterations", "Iterations", false));
    }
    Table { id, sort: "inclusive", columns, rows }
}

fn callpath_table(profile: &Profile, view: View) -> Result<Table> {
    let labels = Labels::new(profile);
    let rows = callpaths::table(profile, None, Threads::Merged)?
        .into_iter()
        .map(|r| {
            let (excl, incl) = r.times(view);
            json!({
                "path": labels.path(&r.path, " => "), "calls": r.calls,
                "exclusive": excl as f64 / US, "inclusive": incl as f64 / US,
            })
        })
        .collect();
    Ok(Table {
        id: "callpaths",
        sort: "exclusive",
        columns: vec![
            ("path", "Callpath", true),
            ("exclusive", "Exclusive µs", false),
            ("inclusive", "Inclusive µs", false),
            ("calls", "Calls", false),
        ],
        rows,
    })
}

fn thread_table(profile: &Profile, view: View) -> Table {
    let rows = crate::export::events::threads(profile, view)
        .into_iter()
        .map(|t| {
            let calls: u64 = t.events.iter().map(|e| e.calls).sum();
            let excl: i64 = t.events.iter().map(|e| e.exclusive_ns).sum();
            json!({ "thread": t.thread, "events": t.events.len(), "calls": calls, "exclusive": excl as f64 / US })
        })
        .collect();
    Table {
        id: "threads",
        sort: "exclusive",
        columns: vec![
            ("thread", "Thread", false),
            ("exclusive", "Measured µs", false),
            ("calls", "Calls", false),
            ("events", "Events", false),
        ],
        rows,
    }
}

/// The program graph as nested <details>: the calling-context tree when callpaths were
/// recorded (every routine under each caller it was called from), else the static graph
/// (program > routine > loop > call statement).
fn program_graph(profile: &Profile, view: View) -> Result<String> {
    let (heading, nodes, total) = if profile.callpaths.is_some() {
        let nodes = callpaths::cct_lines(profile, Threads::Merged, view)?;
        let total = nodes.iter().filter(|n| n.depth == 1).map(|n| n.inclusive_ns).sum::<i64>();
        ("Program graph (calling contexts, as recorded)", nodes, total)
    } else {
        let options = TreeOptions { focus: None, lines: false, view };
        let (nodes, total) = tree::nodes(profile, &options)?;
        ("Program graph (program &gt; routine &gt; loop &gt; call statement)", nodes, total)
    };
    let mut out = format!("<section id=\"section-graph\"><h2>{heading}</h2>\n");
    let mut open = 0;
    for (i, n) in nodes.iter().enumerate() {
        while open > n.depth {
            out.push_str("</details>\n");
            open -= 1;
        }
        let share = 100.0 * n.inclusive_ns as f64 / total.max(1) as f64;
        let iterations = n.iterations.map(|i| format!(", {i} iterations")).unwrap_or_default();
        let text = format!(
            "<span class=\"bar\" style=\"width:{:.0}px\"></span>{} — {share:.1} %, {:.3} ms inclusive, {:.3} ms exclusive, {} × {iterations}",
            share.clamp(0.0, 100.0) * 1.5,
            escape(&n.label),
            n.inclusive_ns as f64 / MS,
            n.exclusive_ns as f64 / MS,
            n.count
        );
        let has_children = nodes.get(i + 1).is_some_and(|next| next.depth > n.depth);
        if has_children {
            let open_attr = if i == 0 { " open" } else { "" };
            out.push_str(&format!("<details{open_attr}><summary>{text}</summary>\n"));
            open += 1;
        } else {
            out.push_str(&format!("<div class=\"leaf\">{text}</div>\n"));
        }
    }
    out.push_str(&"</details>\n".repeat(open));
    out.push_str("</section>\n");
    Ok(out)
}

/// The flame graph: inferno's interactive SVG as an SVG document of its own (a data URL in an
/// <object>), so its script and styles keep to themselves and no file is needed beside the page.
fn flame_graph(profile: &Profile) -> Result<String> {
    use base64::Engine;
    let svg = folded::flamegraph(profile, Threads::Merged)?;
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    let flat = match profile.callpaths {
        Some(_) => "",
        None => {
            "<p class=\"note\">This profile is flat: every routine is a stack of its own, one frame deep. \
             Record callpaths for whole stacks (INSTRUMENT_CALLPATH=all, or instrument run --callpath all).</p>"
        }
    };
    Ok(format!(
        "<section id=\"section-flamegraph\"><h2>Flame graph (exclusive time; click to zoom)</h2>{flat}\
         <object class=\"flame\" type=\"image/svg+xml\" title=\"flame graph\" data=\"data:image/svg+xml;base64,{data}\"></object></section>\n"
    ))
}
