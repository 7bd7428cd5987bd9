//! What `instrument top` shows: one row per routine, loop or call statement that has run, with
//! its share of the last interval (exclusive time over wall time, as top's %CPU).

use super::snapshot::{Snapshot, Totals};
use instrument_live::{EventName, MODE_COUNTED, MODE_OFF};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum What {
    Routine,
    Loop,
    Call,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub id: u32,
    pub what: What,
    pub name: String,
    /// Every call, timed or counted.
    pub calls: u64,
    /// Calls counted without timing (throttled or switched off).
    pub counted: u64,
    pub calls_per_s: f64,
    pub exclusive_s: f64,
    pub inclusive_s: f64,
    /// Exclusive time in the interval over the interval's length, in % (may pass 100 with
    /// several threads).
    pub share: f64,
    pub mode: &'static str,
    /// Activations open now.
    pub open: u64,
}

/// The rows of the events that have run, busiest first (`labels` from `display_names`).
/// `since` is the previous snapshot, or None to measure the interval from `start_ns` (the
/// program's start).
pub fn rows(
    names: &[EventName],
    labels: &[Option<String>],
    now: &Snapshot,
    since: Option<&Snapshot>,
    start_ns: u64,
) -> Vec<Row> {
    let seconds = (now.at_ns.saturating_sub(since.map_or(start_ns, |s| s.at_ns)) as f64 / 1e9).max(1e-9);
    let mut rows: Vec<Row> = now
        .totals
        .iter()
        .enumerate()
        .filter(|(_, t)| t.calls + t.counted + t.open > 0)
        .filter_map(|(id, t)| {
            let name = labels.get(id)?.clone()?;
            let before = since.and_then(|s| s.totals.get(id)).copied().unwrap_or_default();
            Some(row(id as u32, &names[id], name, t, &before, seconds, now.modes.get(id).copied()))
        })
        .collect();
    rows.sort_by(|a, b| b.share.total_cmp(&a.share).then(b.exclusive_s.total_cmp(&a.exclusive_s)));
    rows
}

fn row(
    id: u32,
    event: &EventName,
    name: String,
    t: &Totals,
    before: &Totals,
    seconds: f64,
    mode: Option<u8>,
) -> Row {
    let what = match event {
        EventName::Loop { .. } => What::Loop,
        EventName::CallSite { .. } => What::Call,
        _ => What::Routine,
    };
    let calls = t.calls + t.counted;
    Row {
        id,
        what,
        name,
        calls,
        counted: t.counted,
        calls_per_s: calls.saturating_sub(before.calls + before.counted) as f64 / seconds,
        exclusive_s: t.exclusive_ns / 1e9,
        inclusive_s: t.inclusive_ns / 1e9,
        share: ((t.exclusive_ns - before.exclusive_ns) / 1e9 / seconds * 100.0).max(0.0),
        mode: mode_name(mode.unwrap_or(0)),
        open: t.open,
    }
}

pub fn mode_name(mode: u8) -> &'static str {
    match mode {
        MODE_OFF => "off",
        mode if mode & MODE_COUNTED != 0 => "counted",
        _ => "on",
    }
}
