//! `instrument report --timeline`: the time histograms `instrument run --timeline` recorded,
//! as sparklines in the terminal or as an SVG chart (one strip per event: exclusive time as a
//! share of each bucket, calls per second as a line).

use crate::error::{ReportError, Result};
use instrument_profile::{Metric, Profile, Timeline, TimelineSeries};
use std::fmt::Write;

const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// Columns of a sparkline: buckets are added up in groups to fit.
const COLUMNS: usize = 64;

fn timeline(profile: &Profile) -> Result<&Timeline> {
    match &profile.timeline {
        Some(t) if !t.series.is_empty() => Ok(t),
        Some(_) => Err(ReportError::EmptyTimeline),
        None => Err(ReportError::NoTimeline),
    }
}

/// The events, each with its (exclusive time, calls) series.
fn events(t: &Timeline) -> Vec<(&str, Option<&TimelineSeries>, Option<&TimelineSeries>)> {
    let mut names: Vec<&str> = Vec::new();
    for s in &t.series {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    let find = |name: &str, metric| t.series.iter().find(|s| s.name == name && s.metric == metric);
    names.into_iter().map(|n| (n, find(n, Metric::ExclusiveNs), find(n, Metric::Calls))).collect()
}

pub fn sparklines(profile: &Profile) -> Result<String> {
    let t = timeline(profile)?;
    let buckets = t.series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let mut out = format!(
        "timeline: {buckets} buckets of {} ({} in all); exclusive time per bucket, then calls\n",
        duration(t.bucket_ns as f64),
        duration((t.bucket_ns * buckets as u64) as f64)
    );
    let width = events(t).iter().map(|(n, _, _)| n.chars().count()).max().unwrap_or(0).min(40);
    for (name, exclusive, calls) in events(t) {
        let short: String = name.chars().take(width).collect();
        if let Some(s) = exclusive {
            let total: f64 = s.values.iter().sum();
            let _ = writeln!(out, "{short:<width$}  {}  {}", sparkline(&s.values), duration(total));
        }
        if let Some(s) = calls {
            let total: f64 = s.values.iter().sum();
            let unit = if total == 1.0 { "call" } else { "calls" };
            let _ = writeln!(out, "{:<width$}  {}  {total:.0} {unit}", "", sparkline(&s.values));
        }
    }
    Ok(out)
}

/// The values as block characters, scaled to their maximum, in at most `COLUMNS` columns.
pub fn sparkline(values: &[f64]) -> String {
    let per_column = values.len().div_ceil(COLUMNS).max(1);
    let columns: Vec<f64> = values.chunks(per_column).map(|c| c.iter().sum()).collect();
    let max = columns.iter().copied().fold(0.0, f64::max);
    columns
        .iter()
        .map(|&v| {
            if max <= 0.0 || v <= 0.0 {
                ' '
            } else {
                LEVELS[((v / max * LEVELS.len() as f64).ceil() as usize).clamp(1, LEVELS.len()) - 1]
            }
        })
        .collect()
}

fn duration(ns: f64) -> String {
    match ns {
        ns if ns >= 1e9 => format!("{:.2} s", ns / 1e9),
        ns if ns >= 1e6 => format!("{:.1} ms", ns / 1e6),
        ns => format!("{:.1} us", ns / 1e3),
    }
}

/// One strip per event: its exclusive time as a share of each bucket (filled area, 0-100 %)
/// and its calls (a line scaled to its own maximum).
pub fn svg(profile: &Profile) -> Result<String> {
    let t = timeline(profile)?;
    let events = events(t);
    let buckets = t.series.iter().map(|s| s.values.len()).max().unwrap_or(1).max(1);
    let (left, plot_w, strip_h, gap) = (260.0, 640.0, 60.0, 18.0);
    let height = 40.0 + events.len() as f64 * (strip_h + gap);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        left + plot_w + 20.0
    );
    let _ = writeln!(
        out,
        "<text x=\"10\" y=\"20\" font-size=\"13\">{}: {} buckets of {}; area: exclusive time (% of the bucket), line: calls</text>",
        escape(&profile.command.first().cloned().unwrap_or_default()),
        buckets,
        duration(t.bucket_ns as f64)
    );
    let x = |i: usize| left + plot_w * i as f64 / buckets as f64;
    for (row, (name, exclusive, calls)) in events.iter().enumerate() {
        let top = 40.0 + row as f64 * (strip_h + gap);
        let bottom = top + strip_h;
        let _ = writeln!(out, "<text x=\"10\" y=\"{}\">{}</text>", top + strip_h / 2.0, escape(name));
        let _ = writeln!(
            out,
            "<rect x=\"{left}\" y=\"{top}\" width=\"{plot_w}\" height=\"{strip_h}\" fill=\"none\" stroke=\"#ccc\"/>"
        );
        if let Some(s) = exclusive {
            let mut points = format!("{left},{bottom}");
            for (i, v) in s.values.iter().enumerate() {
                let share = (v / t.bucket_ns as f64).clamp(0.0, 1.0);
                let y = bottom - share * strip_h;
                let _ = write!(points, " {:.1},{y:.1} {:.1},{y:.1}", x(i), x(i + 1));
            }
            let _ = write!(points, " {:.1},{bottom}", x(s.values.len()));
            let _ = writeln!(out, "<polygon points=\"{points}\" fill=\"#4a7bd0\" fill-opacity=\"0.6\"/>");
        }
        if let Some(s) = calls {
            let max = s.values.iter().copied().fold(0.0, f64::max).max(1.0);
            let points: Vec<String> = s
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{:.1},{:.1}", (x(i) + x(i + 1)) / 2.0, bottom - v / max * strip_h))
                .collect();
            let _ =
                writeln!(out, "<polyline points=\"{}\" fill=\"none\" stroke=\"#d0602a\"/>", points.join(" "));
        }
    }
    out.push_str("</svg>\n");
    Ok(out)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_scale_to_the_maximum_and_fit_the_columns() {
        assert_eq!(sparkline(&[0.0, 1.0, 4.0, 8.0]), " ▁▄█");
        let long = vec![1.0; 128];
        assert_eq!(sparkline(&long).chars().count(), COLUMNS);
        assert_eq!(sparkline(&[0.0, 0.0]), "  ");
    }
}
