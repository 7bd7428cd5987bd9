//! The `instrument top PID` command: a full-screen view refreshed every interval (ratatui), or
//! with `--batch N` N plain-text (or JSON) updates for scripts and logs; `--off`/`--on` switch
//! probes and exit.

pub use super::args::TopArgs;
use super::columns::{cells, plural, shown_rows, title, HEADINGS};
use super::control::{matching, Switcher};
use super::rows::{rows, Row};
use super::segment::Segment;
use super::snapshot::{Reader, Snapshot};
use anyhow::{bail, Result};
use std::time::Duration;

pub fn run(args: &TopArgs) -> Result<()> {
    let mut reader = Reader::new(Segment::attach(args.pid)?);
    if !args.off.is_empty() || !args.on.is_empty() {
        return switch(&mut reader, args);
    }
    match args.batch {
        Some(n) => batch(&mut reader, args, n),
        None => super::screen::run(&mut reader, args),
    }
}

/// `--off` and `--on`: switches, waits (at most a few seconds) for the switched-off events'
/// open activations to end, and says what happened.
fn switch(reader: &mut Reader, args: &TopArgs) -> Result<()> {
    let snapshot = reader.take()?;
    let mut switcher = Switcher::default();
    for (patterns, on) in [(&args.off, false), (&args.on, true)] {
        for pattern in patterns {
            let ids = matching(&reader.names, &reader.labels, pattern);
            if ids.is_empty() {
                bail!("no routine, loop or call statement of process {} is named {pattern:?}", args.pid);
            }
            if on {
                switcher.on(&reader.segment, &ids);
            } else {
                switcher.off(&reader.segment, &ids, snapshot.at_ns);
            }
            println!(
                "{pattern}: {} event{} switched {}",
                ids.len(),
                plural(ids.len()),
                if on { "on" } else { "off" }
            );
        }
    }
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(30));
        let snapshot = reader.take()?;
        if switcher.settle(&reader.segment, &snapshot) == 0 || snapshot.finished {
            return Ok(());
        }
    }
    let labels = &reader.labels;
    let open: Vec<String> =
        switcher.pending().filter_map(|id| labels.get(id as usize).cloned().flatten()).collect();
    println!("still open, so counted but not timed until they return: {}", open.join(", "));
    Ok(())
}

fn batch(reader: &mut Reader, args: &TopArgs, updates: u32) -> Result<()> {
    let start_ns = reader.segment.header().start_ns.load(std::sync::atomic::Ordering::Relaxed);
    let mut previous: Option<Snapshot> = None;
    for update in 0..updates.max(1) {
        if update > 0 {
            std::thread::sleep(Duration::from_secs_f64(args.interval));
        }
        let snapshot = reader.take()?;
        let all = rows(&reader.names, &reader.labels, &snapshot, previous.as_ref(), start_ns);
        let shown = shown_rows(all, args.routines, args.rows.unwrap_or(20));
        if args.json {
            println!("{}", serde_json::to_string(&json_update(reader, &snapshot, &shown))?);
        } else {
            print!("{}", text_update(reader, &snapshot, &shown));
        }
        let finished = snapshot.finished;
        previous = Some(snapshot);
        if finished {
            break;
        }
    }
    Ok(())
}

fn text_update(reader: &Reader, snapshot: &Snapshot, rows: &[Row]) -> String {
    let mut out = format!("{}\n", title(reader, snapshot));
    out += &format!(
        "{:>7} {:>10} {:>10} {:>12} {:>10}  {:<7}  {}\n",
        HEADINGS[0], HEADINGS[1], HEADINGS[2], HEADINGS[3], HEADINGS[4], HEADINGS[5], HEADINGS[6]
    );
    for row in rows {
        let c = cells(row);
        out += &format!(
            "{:>7} {:>10} {:>10} {:>12} {:>10}  {:<7}  {}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        );
    }
    out + "\n"
}

fn json_update(reader: &Reader, snapshot: &Snapshot, rows: &[Row]) -> serde_json::Value {
    serde_json::json!({
        "program": reader.program(),
        "pid": reader.segment.pid,
        "finished": snapshot.finished,
        "live_threads": snapshot.live_threads,
        "ended_threads": snapshot.ended_threads,
        "rows": rows,
    })
}
