//! Callpath views of a profile recorded in callpath mode: the k-callpath table (any k up to the
//! recorded depth, derived on output), the calling-context tree, and the stacks that folded
//! exports and flame graphs are drawn from. Names follow TAU: `main => solve => f`.

use crate::names;
use crate::names::location;
use crate::tree::Node;
use crate::ReportError;
use instrument_profile::{CallpathRecord, Callpaths, Profile};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Readable names for every event id of a profile.
pub struct Labels(HashMap<u32, String>);

impl Labels {
    pub fn new(profile: &Profile) -> Labels {
        let mut map = HashMap::new();
        for f in &profile.functions {
            map.insert(f.id, names::function_name(f));
        }
        for l in &profile.loops {
            map.insert(l.id, format!("loop at {}", location(&l.file, l.line)));
        }
        for c in &profile.callsites {
            map.insert(
                c.id,
                format!("call {} at {}", crate::view::callee_name(profile, c), location(&c.file, c.line)),
            );
        }
        Labels(map)
    }

    pub fn get(&self, id: u32) -> String {
        self.0.get(&id).cloned().unwrap_or_else(|| format!("event {id}"))
    }

    pub fn path(&self, path: &[u32], separator: &str) -> String {
        if path.is_empty() {
            return "(other paths)".into();
        }
        path.iter().map(|&e| self.get(e)).collect::<Vec<_>>().join(separator)
    }
}

/// One row of the k-callpath table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub path: Vec<u32>,
    pub calls: u64,
    /// Calls counted without timing (included in `calls`).
    pub untimed_calls: u64,
    pub child_calls: u64,
    pub exclusive_ns: u64,
    pub inclusive_ns: u64,
    /// Compensated (exclusive, inclusive) when the profile was compensated.
    pub compensated: Option<(i64, i64)>,
    /// (exclusive, inclusive) with the calls counted without timing estimated (throttled events
    /// and their callers, rt/src/untimed.rs) when a path of the row has estimates: each path's
    /// estimated times, else its compensated ones in a compensated profile, else its measured
    /// ones.
    pub estimated: Option<(i64, i64)>,
}

impl Row {
    /// (exclusive, inclusive) nanoseconds in `view`, as `View::times` shows an event's.
    pub fn times(&self, view: crate::view::View) -> (i64, i64) {
        use crate::view::View;
        match (view, self.compensated, self.estimated) {
            (View::Compensated, Some(_), Some(e)) | (View::Raw, None, Some(e)) => e,
            (View::Compensated, Some(c), None) => c,
            _ => (self.exclusive_ns as i64, self.inclusive_ns as i64),
        }
    }
}

/// Which threads to show: all merged, or one.
#[derive(Debug, Clone, Copy)]
pub enum Threads {
    Merged,
    One(u64),
}

pub fn recorded(profile: &Profile) -> Result<&Callpaths, ReportError> {
    profile.callpaths.as_ref().ok_or(ReportError::NoCallpaths)
}

fn selected(
    callpaths: &Callpaths,
    threads: Threads,
) -> Result<Vec<&instrument_profile::ThreadCallpaths>, ReportError> {
    let chosen: Vec<_> = callpaths
        .threads
        .iter()
        .filter(|t| match threads {
            Threads::Merged => true,
            Threads::One(n) => t.thread == n,
        })
        .collect();
    match (threads, chosen.is_empty()) {
        (Threads::One(n), true) => Err(ReportError::NoThread { thread: n, threads: callpaths.threads.len() }),
        _ => Ok(chosen),
    }
}

/// The k-callpath table for depth `k` (None: the recorded depth), sorted by exclusive time.
/// From an unlimited recording every k is exact. From a depth-d recording any k <= d is
/// derived from the recorded d-callpaths; recursion inside a callpath is then only seen within
/// the last d events.
pub fn table(profile: &Profile, k: Option<u32>, threads: Threads) -> Result<Vec<Row>, ReportError> {
    let callpaths = recorded(profile)?;
    let k = k.unwrap_or(callpaths.depth);
    if callpaths.depth != 0 && (k == 0 || k > callpaths.depth) {
        let asked = if k == 0 { "unlimited".to_string() } else { k.to_string() };
        return Err(ReportError::TooDeep { recorded: callpaths.depth, asked });
    }
    let mut rows: BTreeMap<Vec<u32>, Row> = BTreeMap::new();
    let mut other = Row::default();
    for thread in selected(callpaths, threads)? {
        for record in &thread.paths {
            let key = suffix(&record.path, k).to_vec();
            let row = rows.entry(key.clone()).or_insert_with(|| Row { path: key.clone(), ..Row::default() });
            add(row, record, !recurs_before_end(&record.path, &key));
        }
        if let Some(o) = &thread.other {
            add(&mut other, o, true);
        }
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    if other.calls > 0 {
        rows.push(other);
    }
    rows.sort_by(|a, b| b.exclusive_ns.cmp(&a.exclusive_ns).then_with(|| a.path.cmp(&b.path)));
    Ok(rows)
}

fn add(row: &mut Row, record: &CallpathRecord, with_inclusive: bool) {
    let record = &record.stats;
    let measured = (record.exclusive_ns as i64, record.inclusive_ns as i64);
    let compensated = record.compensated.map(|c| (c.exclusive_ns, c.inclusive_ns));
    if record.estimated.is_some() && row.estimated.is_none() {
        // The paths added before had none: theirs are their compensated or measured times.
        let before = row.compensated.unwrap_or((row.exclusive_ns as i64, row.inclusive_ns as i64));
        row.estimated = Some(before);
    }
    let estimated = record.estimated.map(|e| (e.exclusive_ns, e.inclusive_ns));
    row.calls += record.calls;
    row.untimed_calls += record.untimed_calls;
    row.child_calls += record.child_calls;
    row.exclusive_ns += record.exclusive_ns;
    if with_inclusive {
        row.inclusive_ns += record.inclusive_ns;
    }
    let sum = |total: &mut (i64, i64), (excl, incl): (i64, i64)| {
        total.0 += excl;
        if with_inclusive {
            total.1 += incl;
        }
    };
    if let Some(c) = compensated {
        sum(row.compensated.get_or_insert((0, 0)), c);
    }
    if let Some(total) = row.estimated.as_mut() {
        sum(total, estimated.or(compensated).unwrap_or(measured));
    }
}

fn suffix(path: &[u32], k: u32) -> &[u32] {
    if k == 0 || path.len() <= k as usize {
        path
    } else {
        &path[path.len() - k as usize..]
    }
}

/// Whether `key` also ends somewhere before the end of `path`: then this activation of the
/// callpath is nested inside another one, whose inclusive time already contains it.
fn recurs_before_end(path: &[u32], key: &[u32]) -> bool {
    (key.len()..path.len()).any(|end| path[..end].ends_with(key))
}

/// The k-callpath table as text, times in `view` (inclusive per call over every call where the
/// untimed ones are estimated, as the flat table's).
pub fn render_table(profile: &Profile, rows: &[Row], view: crate::view::View) -> String {
    let labels = Labels::new(profile);
    let total: i64 = rows.iter().map(|r| r.times(view).0).sum::<i64>().max(1);
    let mut out = String::new();
    crate::report::pprof_header(&mut out, "Callpath");
    for r in rows {
        let (exclusive, inclusive) = r.times(view);
        let timed = if r.estimated.is_some() { r.calls } else { r.calls.saturating_sub(r.untimed_calls) };
        let _ = writeln!(
            out,
            "{:>6.1} {:>12.3} {:>12.3} {:>12} {:>12} {:>12.3}  {}",
            100.0 * exclusive as f64 / total as f64,
            exclusive as f64 / 1e6,
            inclusive as f64 / 1e6,
            r.calls,
            r.child_calls,
            inclusive as f64 / 1e3 / timed.max(1) as f64,
            labels.path(&r.path, " => ")
        );
    }
    out
}

/// The k-callpath table as JSON for scripts: each row's path (readable names, caller first),
/// counts and times in `view`.
pub fn json_table(profile: &Profile, rows: &[Row], view: crate::view::View) -> String {
    let labels = Labels::new(profile);
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let (exclusive_ns, inclusive_ns) = r.times(view);
            serde_json::json!({
                "path": r.path.iter().map(|&e| labels.get(e)).collect::<Vec<_>>(),
                "calls": r.calls,
                "child_calls": r.child_calls,
                "exclusive_ns": exclusive_ns,
                "inclusive_ns": inclusive_ns,
            })
        })
        .collect();
    serde_json::json!({ "callpaths": rows }).to_string()
}

/// Each recorded path's children (paths one frame longer), heaviest first; a path whose
/// parent was not recorded (a finite recording's suffixes) hangs from the root, `[]`.
fn cct_children(rows: &[Row]) -> BTreeMap<&[u32], Vec<&Row>> {
    let recorded: std::collections::HashSet<&[u32]> = rows.iter().map(|r| r.path.as_slice()).collect();
    let mut children: BTreeMap<&[u32], Vec<&Row>> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.path.is_empty()) {
        let parent = &r.path[..r.path.len() - 1];
        let parent = if recorded.contains(parent) { parent } else { &[] };
        children.entry(parent).or_default().push(r);
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| b.inclusive_ns.cmp(&a.inclusive_ns).then_with(|| a.path.cmp(&b.path)));
    }
    children
}

/// The calling-context tree as JSON for scripts: nested nodes (readable name, calls, times in
/// `view`), the roots heaviest first.
pub fn json_cct(profile: &Profile, threads: Threads, view: crate::view::View) -> Result<String, ReportError> {
    let rows = table(profile, None, threads)?;
    let labels = Labels::new(profile);
    let children = cct_children(&rows);
    fn node(
        row: &Row,
        children: &BTreeMap<&[u32], Vec<&Row>>,
        labels: &Labels,
        view: crate::view::View,
    ) -> serde_json::Value {
        let (exclusive_ns, inclusive_ns) = row.times(view);
        let below = children.get(row.path.as_slice()).into_iter().flatten();
        serde_json::json!({
            "name": labels.get(*row.path.last().expect("a recorded path is not empty")),
            "calls": row.calls,
            "exclusive_ns": exclusive_ns,
            "inclusive_ns": inclusive_ns,
            "children": below.map(|c| node(c, children, labels, view)).collect::<Vec<_>>(),
        })
    }
    let roots = children.get([].as_slice()).into_iter().flatten();
    let roots: Vec<serde_json::Value> = roots.map(|r| node(r, &children, &labels, view)).collect();
    Ok(serde_json::json!({ "cct": roots }).to_string())
}

/// The calling-context tree's lines depth first (depth 1 for the roots), times in `view`:
/// the lines of `render_cct` and of the HTML page's program graph.
pub fn cct_lines(
    profile: &Profile,
    threads: Threads,
    view: crate::view::View,
) -> Result<Vec<Node>, ReportError> {
    let rows = table(profile, None, threads)?;
    let labels = Labels::new(profile);
    let children = cct_children(&rows);
    let mut lines = Vec::new();
    let mut stack: Vec<(&Row, usize)> =
        children.get([].as_slice()).into_iter().flatten().rev().map(|r| (*r, 1)).collect();
    while let Some((row, depth)) = stack.pop() {
        let (exclusive_ns, inclusive_ns) = row.times(view);
        lines.push(Node {
            depth,
            label: labels.get(*row.path.last().expect("a recorded path is not empty")),
            inclusive_ns,
            exclusive_ns,
            count: row.calls,
            iterations: None,
        });
        for child in children.get(row.path.as_slice()).into_iter().flatten().rev() {
            stack.push((child, depth + 1));
        }
    }
    Ok(lines)
}

/// The calling-context tree (or, for a finite recording, the recorded callpaths as a tree of
/// suffixes), children under their parent, heaviest first, times in `view`.
pub fn render_cct(
    profile: &Profile,
    threads: Threads,
    view: crate::view::View,
) -> Result<String, ReportError> {
    let lines = cct_lines(profile, threads, view)?;
    let mut out = String::new();
    let _ = writeln!(out, "{:>12} {:>12} {:>12}  Calling context", "Inclusive", "Exclusive", "#Call");
    let _ = writeln!(out, "{:>12} {:>12}", "msec", "msec");
    let _ = writeln!(out, "{}", "-".repeat(72));
    for line in lines {
        let _ = writeln!(
            out,
            "{:>12.3} {:>12.3} {:>12}  {}{}",
            line.inclusive_ns as f64 / 1e6,
            line.exclusive_ns as f64 / 1e6,
            line.count,
            "  ".repeat(line.depth - 1),
            line.label
        );
    }
    Ok(out)
}

/// Stacks (outermost first) with their exclusive time, for folded stacks and flame graphs.
/// Without callpaths each routine is its own one-frame stack.
pub fn stacks(profile: &Profile, threads: Threads) -> Result<Vec<(Vec<String>, u64)>, ReportError> {
    let labels = Labels::new(profile);
    if profile.callpaths.is_none() {
        return Ok(profile
            .functions
            .iter()
            .map(|f| (vec![labels.get(f.id)], f.stats.exclusive_ns))
            .collect());
    }
    let rows = table(profile, None, threads)?;
    Ok(rows
        .into_iter()
        .filter(|r| r.exclusive_ns > 0)
        .map(|r| {
            let frames = if r.path.is_empty() {
                vec!["(other paths)".to_string()]
            } else {
                r.path.iter().map(|&e| labels.get(e)).collect()
            };
            (frames, r.exclusive_ns)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callpath_recurring_inside_itself_counts_inclusive_once() {
        assert!(recurs_before_end(&[1, 2, 2, 2], &[2, 2]));
        assert!(!recurs_before_end(&[1, 2, 2], &[2, 2]));
        assert!(!recurs_before_end(&[1, 2, 3], &[2, 3]));
        assert!(recurs_before_end(&[1, 2, 3, 2, 3], &[2, 3]));
        assert_eq!(suffix(&[1, 2, 3], 2), &[2, 3]);
        assert_eq!(suffix(&[1, 2, 3], 0), &[1, 2, 3]);
    }
}
