//! The profile file format, shared by the runtime (which writes it) and the driver (which reads
//! it), so the two can never disagree. Profiles are versioned JSON: a reader accepts its own
//! version and older ones, and refuses newer ones with a clear message.

use serde::{Deserialize, Serialize};

/// Identifies the file kind; written as the `format` field.
pub const FORMAT: &str = "instrument-profile";
/// The schema version this crate writes. Bump it on any incompatible change.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub format: String,
    pub version: u32,
    /// The program's command line, argv[0] first.
    pub command: Vec<String>,
    pub pid: u32,
    pub clock: Clock,
    pub totals: Totals,
    /// Routines that were called at least once, merged over all threads.
    pub functions: Vec<Function>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// `"tsc"` (invariant time-stamp counter) or `"monotonic"` (clock_gettime).
    pub source: String,
    /// Clock ticks per second, measured against CLOCK_MONOTONIC.
    pub ticks_per_second: f64,
    /// Length of the CLOCK_MONOTONIC interval the tick rate was measured over.
    pub calibration_ns: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Wall time from runtime start-up to the profile being written.
    pub wall_ns: u64,
    /// Threads whose events are in this profile.
    pub threads: u64,
    /// Threads still running when the profile was written (their counts are a snapshot).
    pub threads_running_at_exit: u64,
    /// Probe events recorded (each call is an entry and an exit event).
    pub events: u64,
    /// Frames left open at exit (exit() deep in the stack, noreturn calls) and closed then.
    pub frames_closed_at_exit: u64,
    /// Frames closed because a longjmp or unwind skipped their exit probe.
    pub frames_reconciled: u64,
    /// Events dropped because the shadow stack was full (recursion deeper than its capacity).
    pub stack_overflow_events: u64,
    /// Exit events whose frame was not on the shadow stack.
    pub unmatched_exits: u64,
    /// Events from modules not yet registered with the runtime.
    pub unregistered_events: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Function {
    /// The symbol name as linked (mangled for C++ and Rust).
    pub name: String,
    /// Source file, when the module had debug info or a source file name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub line: u32,
    /// `"fortran"` for routines compiled by flang; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub language: String,
    pub calls: u64,
    /// Calls this routine made to instrumented routines.
    pub child_calls: u64,
    pub exclusive_ns: u64,
    /// Inclusive time, counted once for recursive activations.
    pub inclusive_ns: u64,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

#[derive(Debug)]
pub enum ReadError {
    Json(serde_json::Error),
    NotAProfile,
    NewerVersion(u32),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Json(e) => write!(f, "not a valid profile: {e}"),
            ReadError::NotAProfile => write!(f, "not an instrument profile (no \"format\": \"{FORMAT}\")"),
            ReadError::NewerVersion(v) => write!(
                f,
                "profile schema version {v} is newer than this tool understands (up to {VERSION}); upgrade instrument"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

impl Profile {
    /// Parses a profile, checking its format tag and version before the rest of its fields.
    pub fn from_json(text: &str) -> Result<Profile, ReadError> {
        #[derive(Deserialize)]
        struct Header {
            format: Option<String>,
            version: Option<u32>,
        }
        let header: Header = serde_json::from_str(text).map_err(ReadError::Json)?;
        if header.format.as_deref() != Some(FORMAT) {
            return Err(ReadError::NotAProfile);
        }
        match header.version {
            Some(v) if v > VERSION => Err(ReadError::NewerVersion(v)),
            _ => serde_json::from_str(text).map_err(ReadError::Json),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Profile {
        Profile {
            format: FORMAT.into(),
            version: VERSION,
            command: vec!["./a.out".into()],
            pid: 42,
            clock: Clock { source: "tsc".into(), ticks_per_second: 2.5e9, calibration_ns: 2_000_000 },
            totals: Totals::default(),
            functions: vec![Function {
                name: "main".into(),
                file: "a.c".into(),
                line: 3,
                language: String::new(),
                calls: 1,
                child_calls: 0,
                exclusive_ns: 10,
                inclusive_ns: 10,
            }],
        }
    }

    #[test]
    fn round_trips() {
        let p = sample();
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(Profile::from_json(&text).unwrap(), p);
    }

    #[test]
    fn refuses_newer_versions_and_foreign_json() {
        let mut p = sample();
        p.version = VERSION + 1;
        let text = serde_json::to_string(&p).unwrap();
        assert!(matches!(Profile::from_json(&text), Err(ReadError::NewerVersion(v)) if v == VERSION + 1));
        assert!(matches!(Profile::from_json("{\"a\":1}"), Err(ReadError::NotAProfile)));
        assert!(matches!(Profile::from_json("{\"format\":"), Err(ReadError::Json(_))));
    }
}
