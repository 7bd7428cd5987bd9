//! What both views of `instrument top` show (the plain-text updates and the full-screen view):
//! the title line, the rows kept and the columns of a row.

use super::rows::{Row, What};
use super::snapshot::{Reader, Snapshot};

/// The first `limit` rows, routines only if asked.
pub fn shown_rows(all: Vec<Row>, routines_only: bool, limit: usize) -> Vec<Row> {
    all.into_iter().filter(|r| !routines_only || r.what == What::Routine).take(limit).collect()
}

/// The title line: program, pid, state and threads.
pub fn title(reader: &Reader, snapshot: &Snapshot) -> String {
    let state = if snapshot.finished { "finished, profile written" } else { "running" };
    format!(
        "{} (pid {}): {state}, {} thread{} live, {} ended",
        reader.program(),
        reader.segment.pid,
        snapshot.live_threads,
        plural(snapshot.live_threads),
        snapshot.ended_threads
    )
}

pub const HEADINGS: [&str; 7] = ["%time", "excl s", "incl s", "calls", "calls/s", "mode", "name"];

/// A row's cells, in `HEADINGS` order.
pub fn cells(row: &Row) -> [String; 7] {
    [
        format!("{:.1}", row.share),
        format!("{:.3}", row.exclusive_s),
        format!("{:.3}", row.inclusive_s),
        row.calls.to_string(),
        format!("{:.0}", row.calls_per_s),
        row.mode.to_string(),
        row.name.clone(),
    ]
}

/// `s` after a count other than one.
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
