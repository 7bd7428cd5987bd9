//! Folded stacks (Brendan Gregg's format; weights are exclusive nanoseconds, so a flame graph
//! shows time rather than counts) and the flame graph SVG drawn from them by inferno.

use crate::callpaths::{self, Threads};
use crate::error::{ReportError, Result};
use instrument_profile::Profile;

/// `main;solve;f 12345` per line; frame names have `;` replaced so that they stay one frame.
pub fn folded(profile: &Profile, threads: Threads) -> Result<String> {
    let stacks = callpaths::stacks(profile, threads)?;
    let mut out = String::new();
    for (frames, weight) in stacks {
        let frames: Vec<String> = frames.iter().map(|f| f.replace(';', ":")).collect();
        out.push_str(&format!("{} {weight}\n", frames.join(";")));
    }
    Ok(out)
}

pub fn flamegraph(profile: &Profile, threads: Threads) -> Result<Vec<u8>> {
    let text = folded(profile, threads)?;
    let mut options = inferno::flamegraph::Options::default();
    options.title =
        format!("{} (exclusive time)", profile.command.first().map(String::as_str).unwrap_or("program"));
    options.count_name = "ns".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg).map_err(ReportError::FlameGraph)?;
    Ok(svg)
}
