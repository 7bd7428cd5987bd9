//! A small reader of TAU's profile.N.C.T text format, enough to check our exports the way
//! TAU's tools parse them: the header lines, one quoted-name line per event, aggregates and
//! user events.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub calls: u64,
    pub subrs: u64,
    /// Microseconds.
    pub exclusive: f64,
    pub inclusive: f64,
    pub group: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UserEvent {
    pub count: u64,
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    pub sumsqr: f64,
}

#[derive(Debug, Default)]
pub struct TauProfile {
    pub metric: String,
    pub metadata: String,
    pub events: BTreeMap<String, Event>,
    pub user_events: BTreeMap<String, UserEvent>,
}

/// `"name" rest...` -> (name, rest).
fn quoted(line: &str) -> Result<(&str, &str), String> {
    let rest = line.strip_prefix('"').ok_or_else(|| format!("no quoted name: {line}"))?;
    let end = rest.find("\" ").ok_or_else(|| format!("unterminated name: {line}"))?;
    Ok((&rest[..end], &rest[end + 2..]))
}

fn number<T: std::str::FromStr>(field: Option<&str>, line: &str) -> Result<T, String> {
    field.and_then(|f| f.parse().ok()).ok_or_else(|| format!("bad number in: {line}"))
}

pub fn parse(text: &str) -> Result<TauProfile, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty file")?;
    let (count, metric) = first.split_once(" templated_functions_MULTI_").ok_or("bad first line")?;
    let count: usize = count.parse().map_err(|_| "bad event count")?;
    let header = lines.next().ok_or("no header")?;
    let metadata = header
        .strip_prefix("# Name Calls Subrs Excl Incl ProfileCalls # ")
        .ok_or_else(|| format!("bad header: {header}"))?;
    let mut profile =
        TauProfile { metric: metric.into(), metadata: metadata.into(), ..TauProfile::default() };
    for _ in 0..count {
        let line = lines.next().ok_or("fewer events than announced")?;
        let (name, rest) = quoted(line)?;
        let mut f = rest.split(' ');
        let event = Event {
            calls: number(f.next(), line)?,
            subrs: number(f.next(), line)?,
            exclusive: number(f.next(), line)?,
            inclusive: number(f.next(), line)?,
            group: {
                let _profile_calls: u64 = number(f.next(), line)?;
                let g = f.next().and_then(|g| g.strip_prefix("GROUP=\"")).ok_or("no GROUP")?;
                g.trim_end_matches('"').to_string()
            },
        };
        if profile.events.insert(name.to_string(), event).is_some() {
            return Err(format!("event {name} twice"));
        }
    }
    if lines.next() != Some("0 aggregates") {
        return Err("no '0 aggregates' line".into());
    }
    if let Some(line) = lines.next() {
        let n: usize =
            line.strip_suffix(" userevents").and_then(|n| n.parse().ok()).ok_or("bad userevents")?;
        if lines.next() != Some("# eventname numevents max min mean sumsqr") {
            return Err("bad user event header".into());
        }
        for _ in 0..n {
            let line = lines.next().ok_or("fewer user events than announced")?;
            let (name, rest) = quoted(line)?;
            let mut f = rest.split(' ');
            let event = UserEvent {
                count: number(f.next(), line)?,
                max: number(f.next(), line)?,
                min: number(f.next(), line)?,
                mean: number(f.next(), line)?,
                sumsqr: number(f.next(), line)?,
            };
            profile.user_events.insert(name.to_string(), event);
        }
    }
    Ok(profile)
}
