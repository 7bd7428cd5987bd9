//! The throttling rule (TAU's): an event called more than `calls` times on a thread at under
//! `per_call_us` microseconds of inclusive time per call is only counted from then on. The
//! runtime applies it, profiles record the one that ran, and the tools print and reuse it.

/// TAU's defaults (TAU_THROTTLE_NUMCALLS, TAU_THROTTLE_PERCALL).
pub const DEFAULT: Rule = Rule { calls: 100_000, per_call_us: 10 };

/// One throttling rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Calls on a thread after which the event is considered (`INSTRUMENT_THROTTLE_CALLS`).
    pub calls: u64,
    /// The inclusive time per call under which it is throttled, in microseconds
    /// (`INSTRUMENT_THROTTLE_PERCALL_US`).
    pub per_call_us: u64,
}

impl Rule {
    /// "called over 100000 times at under 10 us each"
    pub fn describe(&self) -> String {
        format!("called over {} times at under {} us each", self.calls, self.per_call_us)
    }
}
