//! `instrument report --tree`: the program graph top-down, as Li and Zhang present it: program,
//! then each procedure, then its loops (nested as in the source), then its call statements, each
//! with inclusive and exclusive time, count, iterations and share of the program's time.

use crate::names;
use crate::view::{callee_name, with_line, View};
use crate::ReportError;
use instrument_profile::{CallSite, Function, Loop, Profile};
use std::fmt::Write;

/// One line of the tree.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Node {
    pub depth: usize,
    pub label: String,
    pub inclusive_ns: i64,
    pub exclusive_ns: i64,
    pub count: u64,
    pub iterations: Option<u64>,
}

pub struct TreeOptions<'a> {
    pub focus: Option<&'a str>,
    pub lines: bool,
    pub view: View,
}

/// The tree as text; an error when `focus` names no routine of the profile.
pub fn render(profile: &Profile, options: &TreeOptions) -> Result<String, ReportError> {
    let (nodes, total) = nodes(profile, options)?;
    Ok(format_nodes(&nodes, total))
}

/// The tree as JSON for scripts: its lines in order, each with its depth (0 is the program),
/// and the program's time the shares are of.
pub fn json(profile: &Profile, options: &TreeOptions) -> Result<String, ReportError> {
    let (nodes, total) = nodes(profile, options)?;
    Ok(serde_json::json!({ "total_ns": total, "tree": nodes }).to_string())
}

/// The tree's lines in order (each with its depth), and the program's time for percentages.
pub fn nodes(profile: &Profile, options: &TreeOptions) -> Result<(Vec<Node>, i64), ReportError> {
    let view = options.view;
    let shown = |f: &Function| {
        view.times(f.stats.exclusive_ns, f.stats.inclusive_ns, f.stats.compensated, f.stats.estimated)
    };
    let mut functions: Vec<&Function> = profile.functions.iter().collect();
    functions.sort_by(|a, b| shown(b).1.cmp(&shown(a).1).then_with(|| a.name.cmp(&b.name)));
    if let Some(focus) = options.focus {
        functions.retain(|f| {
            f.name == focus
                || names::readable_in(&f.name, f.language) == focus
                || names::function_name(f) == focus
        });
        if functions.is_empty() {
            return Err(ReportError::NoRoutine(focus.to_string()));
        }
    }
    let removed = match (view, &profile.compensation) {
        (View::Compensated, Some(c)) => c.removed_ns as i64,
        _ => 0,
    };
    let wall = profile.totals.wall_ns as i64 - removed;
    let total = wall.max(1);
    let mut nodes = Vec::new();
    if options.focus.is_none() {
        let program = profile.command.first().map(String::as_str).unwrap_or("program");
        let measured = crate::view::measured_ns(profile, view);
        nodes.push(Node {
            depth: 0,
            label: format!("program {program}"),
            inclusive_ns: wall,
            exclusive_ns: wall - measured,
            count: 1,
            iterations: None,
        });
    }
    let base = usize::from(options.focus.is_none());
    for f in functions {
        nodes.push(Node {
            depth: base,
            label: with_line(names::function_name(f), &f.file, f.line, options.lines)
                + if f.recursive { " (recursive)" } else { "" },
            inclusive_ns: shown(f).1,
            exclusive_ns: shown(f).0,
            count: f.stats.calls,
            iterations: None,
        });
        children(profile, f.id, None, base + 1, view, &mut nodes);
    }
    Ok((nodes, total))
}

/// The loops and call statements directly inside routine `function` and loop `in_loop`.
fn children(
    profile: &Profile,
    function: u32,
    in_loop: Option<u32>,
    depth: usize,
    view: View,
    out: &mut Vec<Node>,
) {
    let mut loops: Vec<&Loop> =
        profile.loops.iter().filter(|l| l.function == function && l.parent == in_loop).collect();
    loops.sort_by_key(|l| (l.line, l.id));
    let mut sites: Vec<&CallSite> =
        profile.callsites.iter().filter(|c| c.function == function && c.in_loop == in_loop).collect();
    sites.sort_by_key(|c| (c.line, c.id));
    let mut items: Vec<(u32, Result<&Loop, &CallSite>)> = loops
        .into_iter()
        .map(|l| (l.line, Ok(l)))
        .chain(sites.into_iter().map(|c| (c.line, Err(c))))
        .collect();
    items.sort_by_key(|(line, _)| *line);
    for (_, item) in items {
        match item {
            Ok(l) => {
                out.push(Node {
                    depth,
                    label: format!("loop at {}", names::location(&l.file, l.line)),
                    inclusive_ns: view
                        .times(
                            l.stats.exclusive_ns,
                            l.stats.inclusive_ns,
                            l.stats.compensated,
                            l.stats.estimated,
                        )
                        .1,
                    exclusive_ns: view
                        .times(
                            l.stats.exclusive_ns,
                            l.stats.inclusive_ns,
                            l.stats.compensated,
                            l.stats.estimated,
                        )
                        .0,
                    count: l.stats.calls,
                    iterations: Some(l.stats.iterations),
                });
                children(profile, function, Some(l.id), depth + 1, view, out);
            }
            Err(c) => out.push(Node {
                depth,
                label: format!("call {} at {}", callee_name(profile, c), names::location(&c.file, c.line)),
                inclusive_ns: view
                    .times(c.stats.exclusive_ns, c.stats.inclusive_ns, c.stats.compensated, c.stats.estimated)
                    .1,
                exclusive_ns: view
                    .times(c.stats.exclusive_ns, c.stats.inclusive_ns, c.stats.compensated, c.stats.estimated)
                    .0,
                count: c.stats.calls,
                iterations: None,
            }),
        }
    }
}

fn format_nodes(nodes: &[Node], total: i64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>12} {:>12}  Event",
        "%Total", "Inclusive", "Exclusive", "Count", "Iterations"
    );
    let _ = writeln!(out, "{:>6} {:>12} {:>12}", "", "msec", "msec");
    let _ = writeln!(out, "{}", "-".repeat(84));
    for n in nodes {
        let iterations = n.iterations.map(|i| i.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{:>6.1} {:>12.3} {:>12.3} {:>12} {:>12}  {}{}",
            100.0 * n.inclusive_ns as f64 / total as f64,
            n.inclusive_ns as f64 / 1e6,
            n.exclusive_ns as f64 / 1e6,
            n.count,
            iterations,
            "  ".repeat(n.depth),
            n.label
        );
    }
    out
}
