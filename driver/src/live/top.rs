//! The `instrument top PID` command: a full-screen view refreshed every interval (ratatui), or
//! with `--batch N` N plain-text (or JSON) updates for scripts and logs; `--off`/`--on` switch
//! probes and exit.

use super::control::{matching, Switcher};
use super::rows::{rows, Row, What};
use super::segment::Segment;
use super::snapshot::{Reader, Snapshot};
use anyhow::{bail, Result};
use std::time::Duration;

#[derive(clap::Args)]
pub struct TopArgs {
    /// The process id of a running instrumented program (yours)
    pub pid: u32,
    /// Seconds between updates
    #[arg(long, default_value_t = 1.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Print N updates as text and exit (or stop when the program ends), instead of the
    /// full-screen view
    #[arg(long, value_name = "N")]
    pub batch: Option<u32>,
    /// With --batch: one JSON object per update
    #[arg(long, requires = "batch")]
    pub json: bool,
    /// Rows per update (default: as many as the terminal holds; 20 with --batch)
    #[arg(long)]
    pub rows: Option<usize>,
    /// Only routines (no loops or call statements)
    #[arg(long)]
    pub routines: bool,
    /// Switch off the probes of these routines (names or TAU-style wildcards such as 'std::*'),
    /// with their loops and call statements, or of one loop or call statement by the name top
    /// shows; then exit. Calls already open finish measured; new calls are counted untimed until
    /// none is open, then not at all.
    #[arg(long, value_name = "NAME")]
    pub off: Vec<String>,
    /// Switch these probes on again; then exit
    #[arg(long, value_name = "NAME")]
    pub on: Vec<String>,
}

fn parse_interval(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.05..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!("{text:?} is not a number of seconds between 0.05 and 3600")),
    }
}

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

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
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
