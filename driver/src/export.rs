//! `instrument export`: the same profile as folded stacks (Brendan Gregg's format, weights are
//! exclusive nanoseconds, so a flame graph shows time rather than counts), a flame graph SVG
//! (inferno), or speedscope JSON (one sampled profile per thread, plus the merged view).

use crate::callpaths::{self, Threads};
use anyhow::{Context, Result};
use instrument_profile::Profile;
use serde_json::json;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Folded,
    Flamegraph,
    Speedscope,
}

pub fn render(profile: &Profile, format: Format, threads: Threads) -> Result<Vec<u8>> {
    match format {
        Format::Folded => Ok(folded(profile, threads)?.into_bytes()),
        Format::Flamegraph => flamegraph(profile, threads),
        Format::Speedscope => speedscope(profile),
    }
}

/// `main;solve;f 12345` per line; frame names have `;` replaced so that they stay one frame.
pub fn folded(profile: &Profile, threads: Threads) -> Result<String> {
    let stacks = callpaths::stacks(profile, threads).map_err(anyhow::Error::msg)?;
    let mut out = String::new();
    for (frames, weight) in stacks {
        let frames: Vec<String> = frames.iter().map(|f| f.replace(';', ":")).collect();
        out.push_str(&format!("{} {weight}\n", frames.join(";")));
    }
    Ok(out)
}

fn flamegraph(profile: &Profile, threads: Threads) -> Result<Vec<u8>> {
    let text = folded(profile, threads)?;
    let mut options = inferno::flamegraph::Options::default();
    options.title =
        format!("{} (exclusive time)", profile.command.first().map(String::as_str).unwrap_or("program"));
    options.count_name = "ns".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg)
        .context("cannot draw the flame graph")?;
    Ok(svg)
}

/// speedscope's file format: shared frames, and per thread a "sampled" profile whose samples
/// are the stacks and whose weights are their exclusive nanoseconds.
fn speedscope(profile: &Profile) -> Result<Vec<u8>> {
    let mut frames: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut frame_of = |name: &str| -> usize {
        *index.entry(name.to_string()).or_insert_with(|| {
            frames.push(name.to_string());
            frames.len() - 1
        })
    };
    let mut views: Vec<(String, Threads)> = vec![("all threads".into(), Threads::Merged)];
    if let Some(c) = &profile.callpaths {
        if c.threads.len() > 1 {
            views.extend(c.threads.iter().map(|t| (format!("thread {}", t.thread), Threads::One(t.thread))));
        }
    }
    let mut profiles = Vec::new();
    for (name, threads) in views {
        let stacks = callpaths::stacks(profile, threads).map_err(anyhow::Error::msg)?;
        let samples: Vec<Vec<usize>> =
            stacks.iter().map(|(f, _)| f.iter().map(|n| frame_of(n)).collect()).collect();
        let weights: Vec<u64> = stacks.iter().map(|(_, w)| *w).collect();
        let end: u64 = weights.iter().sum();
        profiles.push(json!({
            "type": "sampled", "name": name, "unit": "nanoseconds",
            "startValue": 0, "endValue": end, "samples": samples, "weights": weights,
        }));
    }
    let document = json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "exporter": concat!("instrument ", env!("CARGO_PKG_VERSION")),
        "name": profile.command.join(" "),
        "activeProfileIndex": 0,
        "shared": { "frames": frames.iter().map(|n| json!({ "name": n })).collect::<Vec<_>>() },
        "profiles": profiles,
    });
    Ok(serde_json::to_vec_pretty(&document)?)
}
