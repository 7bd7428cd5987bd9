//! `instrument run --timeline`: samples the program's counters from outside while it runs
//! (through its live segment, so the program pays nothing), fills time histograms of each
//! event's exclusive time and calls, and adds the busiest events' series to the profile the
//! program writes at its end.

use super::histogram::Histograms;
use super::segment::Segment;
use super::snapshot::{Reader, Snapshot};
use anyhow::{Context, Result};
use instrument_profile::{Metric, Timeline, TimelineSeries};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::Duration;

/// The first bucket width: 128 buckets cover 1.28 s before the first doubling.
const FIRST_WIDTH_NS: u64 = 10_000_000;

/// Samples `child` until it exits; returns its exit status and its timeline (None when the
/// program never showed a live segment: not instrumented, or INSTRUMENT_LIVE=0).
pub fn sample(child: &mut Child, keep: usize) -> Result<(ExitStatus, Option<Timeline>)> {
    let pid = child.id();
    let mut reader = loop {
        if let Some(status) = child.try_wait()? {
            return Ok((status, None));
        }
        if let Ok(segment) = Segment::attach(pid) {
            break Reader::new(segment);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let start_ns = reader.segment.header().start_ns.load(std::sync::atomic::Ordering::Relaxed);
    let mut histograms = Histograms::new(FIRST_WIDTH_NS);
    let mut previous: Option<Snapshot> = None;
    let status = loop {
        let exited = child.try_wait()?;
        // After the exit the segment still holds the final numbers: this process keeps it open.
        let snapshot = reader.take()?;
        record(&mut histograms, &snapshot, previous.as_ref(), start_ns);
        previous = Some(snapshot);
        if let Some(status) = exited {
            break status;
        }
        wait(child, Duration::from_nanos(histograms.width_ns))?;
    };
    Ok((status, Some(timeline(&histograms, &reader, keep))))
}

/// Sleeps `interval`, waking early when the child exits.
fn wait(child: &mut Child, interval: Duration) -> Result<()> {
    let until = std::time::Instant::now() + interval;
    while std::time::Instant::now() < until {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        std::thread::sleep(interval.min(Duration::from_millis(5)));
    }
    Ok(())
}

/// Adds what changed since `previous` to the bucket of the interval's start.
fn record(h: &mut Histograms<(u32, Metric)>, now: &Snapshot, previous: Option<&Snapshot>, start_ns: u64) {
    let at = previous.map_or(start_ns, |p| p.at_ns).saturating_sub(start_ns);
    for (id, t) in now.totals.iter().enumerate() {
        let before = previous.and_then(|p| p.totals.get(id)).copied().unwrap_or_default();
        let exclusive = t.exclusive_ns - before.exclusive_ns;
        let calls = (t.calls + t.counted).saturating_sub(before.calls + before.counted) as f64;
        if exclusive != 0.0 {
            h.add(&(id as u32, Metric::ExclusiveNs), at, exclusive);
        }
        if calls != 0.0 {
            h.add(&(id as u32, Metric::Calls), at, calls);
        }
    }
}

/// The series of the `keep` events with the most exclusive time, both metrics each.
fn timeline(h: &Histograms<(u32, Metric)>, reader: &Reader, keep: usize) -> Timeline {
    let names = &reader.labels;
    let total = |values: &Vec<f64>| values.iter().sum::<f64>();
    let mut busiest: Vec<(u32, f64)> = h
        .series
        .iter()
        .filter(|((id, m), _)| {
            *m == Metric::ExclusiveNs && names.get(*id as usize).is_some_and(Option::is_some)
        })
        .map(|((id, _), values)| (*id, total(values)))
        .collect();
    busiest.sort_by(|a, b| b.1.total_cmp(&a.1));
    let used = h.used().max(1);
    let mut series = Vec::new();
    for (id, _) in busiest.into_iter().take(keep) {
        let name = names[id as usize].clone().unwrap_or_default();
        for metric in [Metric::ExclusiveNs, Metric::Calls] {
            let values = h
                .series
                .iter()
                .find(|(k, _)| *k == (id, metric))
                .map_or(vec![0.0; used], |(_, v)| v[..used].to_vec());
            series.push(TimelineSeries { name: name.clone(), metric, values });
        }
    }
    Timeline { bucket_ns: h.width_ns, series }
}

/// Adds `timeline` to the profile process `pid` wrote in `dir` (its last, when it exec'd).
pub fn add_to_profile(dir: &Path, pid: u32, timeline: Timeline) -> Result<PathBuf> {
    let path = profile_of(dir, pid)
        .with_context(|| format!("process {pid} wrote no profile in {}", dir.display()))?;
    let mut profile = instrument_report::profiles::load(&path)?;
    profile.timeline = Some(timeline);
    // Owner-only, as the runtime writes profiles.
    instrument_report::profiles::write_output(&path, serde_json::to_string(&profile)?.as_bytes(), 0o600)?;
    Ok(path)
}

/// `<program>.<pid>[.N].instrument.json` with the highest N.
fn profile_of(dir: &Path, pid: u32) -> Option<PathBuf> {
    let marker = format!(".{pid}.");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".instrument.json") && name.contains(&marker)
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    found.sort();
    found.pop().map(|(_, path)| path)
}
