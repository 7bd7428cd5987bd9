//! pprof's gzipped protobuf (perftools.profiles.Profile), for `go tool pprof` and the tools
//! that read it. Every sample carries three values: calls, exclusive and inclusive
//! nanoseconds. With callpaths a sample is one callpath (leaf first, as pprof wants it);
//! without, a sample is one event on its static nesting (a loop inside its routine). Per-thread
//! profiles give one sample per thread, labelled `thread`. Inclusive values are per event: read
//! them in pprof's flat column, not summed up a stack.

use super::events::{self, Static};
use crate::callpaths::{self, Threads};
use crate::error::{ReportError, Result};
use crate::view::View;
use instrument_profile::Profile;
use prost::Message;
use std::collections::HashMap;
use std::io::Write;

/// The types generated from proto/profile.proto.
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/perftools.profiles.rs"));
}

/// The profile as gzipped protobuf bytes.
pub fn render(profile: &Profile, view: View) -> Result<Vec<u8>> {
    let bytes = build(profile, view)?.encode_to_vec();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).map_err(ReportError::Compress)?;
    gz.finish().map_err(ReportError::Compress)
}

/// Interns strings into the profile's string table (entry 0 is "").
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        Strings { table: vec![String::new()], index: HashMap::from([(String::new(), 0)]) }
    }

    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), self.table.len() as i64 - 1);
        self.table.len() as i64 - 1
    }
}

pub fn build(profile: &Profile, view: View) -> Result<proto::Profile> {
    let statics = events::statics(profile);
    let mut strings = Strings::new();
    let value_type = |s: &mut Strings, t: &str, u: &str| proto::ValueType { r#type: s.id(t), unit: s.id(u) };
    let sample_type = vec![
        value_type(&mut strings, "calls", "count"),
        value_type(&mut strings, "exclusive", "nanoseconds"),
        value_type(&mut strings, "inclusive", "nanoseconds"),
    ];
    let (function, location) = functions_and_locations(&statics, &mut strings);
    let thread_key = strings.id("thread");
    let sample = match &profile.callpaths {
        Some(c) => callpath_samples(profile, c, view, thread_key)?,
        None => event_samples(profile, &statics, view, thread_key),
    };
    let comment = vec![strings.id(&format!("command: {}", profile.command.join(" ")))];
    let default_sample_type = strings.id("exclusive");
    Ok(proto::Profile {
        sample_type,
        sample,
        location,
        function,
        duration_nanos: profile.totals.wall_ns as i64,
        comment,
        default_sample_type,
        string_table: strings.table,
        ..Default::default()
    })
}

/// A sample's thread label (`thread_key` is the string "thread"), when the profile has threads.
fn thread_label(profile: &Profile, thread: u64, thread_key: i64) -> Vec<proto::Label> {
    let labelled = !profile.threads.is_empty();
    labelled
        .then(|| proto::Label { key: thread_key, num: thread as i64, ..Default::default() })
        .into_iter()
        .collect()
}

/// One sample per recorded callpath (per thread when the profile has threads), its frames
/// innermost first.
fn callpath_samples(
    profile: &Profile,
    callpaths: &instrument_profile::Callpaths,
    view: View,
    thread_key: i64,
) -> Result<Vec<proto::Sample>> {
    let threads: Vec<Threads> = if profile.threads.is_empty() {
        vec![Threads::Merged]
    } else {
        callpaths.threads.iter().map(|t| Threads::One(t.thread)).collect()
    };
    let mut sample = Vec::new();
    for threads in threads {
        let thread = match threads {
            Threads::One(t) => t,
            Threads::Merged => 0,
        };
        for row in callpaths::table(profile, None, threads)? {
            let (excl, incl) = row.times(view);
            sample.push(proto::Sample {
                location_id: row.path.iter().rev().map(|&id| u64::from(id) + 1).collect(),
                value: vec![row.calls as i64, excl, incl],
                label: thread_label(profile, thread, thread_key),
            });
        }
    }
    Ok(sample)
}

/// One sample per event and thread of a flat profile, its frames the event's static nesting.
fn event_samples(
    profile: &Profile,
    statics: &std::collections::HashMap<u32, events::Static>,
    view: View,
    thread_key: i64,
) -> Vec<proto::Sample> {
    let mut sample = Vec::new();
    for t in events::threads(profile, view) {
        for e in &t.events {
            sample.push(proto::Sample {
                location_id: events::nesting(statics, e.id).iter().map(|&id| u64::from(id) + 1).collect(),
                value: vec![e.calls as i64, e.exclusive_ns, e.inclusive_ns],
                label: thread_label(profile, t.thread, thread_key),
            });
        }
    }
    sample
}

/// One function and one location per event (ids are event id + 1: pprof ids are nonzero).
fn functions_and_locations(
    statics: &HashMap<u32, Static>,
    strings: &mut Strings,
) -> (Vec<proto::Function>, Vec<proto::Location>) {
    let mut ids: Vec<u32> = statics.keys().copied().collect();
    ids.sort_unstable();
    let mut functions = Vec::new();
    let mut locations = Vec::new();
    for id in ids {
        let s = &statics[&id];
        let pprof_id = u64::from(id) + 1;
        let symbol = if s.symbol.is_empty() { &s.label } else { &s.symbol };
        functions.push(proto::Function {
            id: pprof_id,
            name: strings.id(&s.label),
            system_name: strings.id(symbol),
            filename: strings.id(&s.file),
            start_line: i64::from(s.line),
        });
        locations.push(proto::Location {
            id: pprof_id,
            line: vec![proto::Line { function_id: pprof_id, line: i64::from(s.line) }],
            ..Default::default()
        });
    }
    (functions, locations)
}
