//! speedscope's file format: shared frames, and per thread a "sampled" profile whose samples
//! are the stacks and whose weights are their exclusive nanoseconds.

use crate::callpaths::{self, Threads};
use crate::error::{ReportError, Result};
use instrument_profile::Profile;
use serde_json::json;
use std::collections::HashMap;

/// speedscope's file format: shared frames, and per thread a "sampled" profile whose samples
/// are the stacks and whose weights are their exclusive nanoseconds.
pub fn render(profile: &Profile) -> Result<Vec<u8>> {
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
        let stacks = callpaths::stacks(profile, threads)?;
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
    serde_json::to_vec_pretty(&document).map_err(ReportError::Json)
}
