//! The throttling rule (TAU's): an event called more than `calls` times on a thread at under
//! `per_call_us` microseconds of inclusive time per call is only counted from then on. The
//! runtime applies it, profiles record the one that ran, and the tools print and reuse it.

/// TAU's rule with a shorter timed prefix: TAU_THROTTLE_PERCALL's 10 us, but 10^3 calls where
/// TAU_THROTTLE_NUMCALLS has 10^5, compensated or not. TAU stops measuring a throttled event, so
/// its prefix is all the event gets; here a throttled event keeps its exact count and an estimated
/// time that the in-place windows measure again while the program runs (rt/src/inplace/), so the
/// prefix only has to decide the rule and give that estimation a basis: 10^3 calls put the mean's
/// standard error near 3 % of the calls' spread (the least basis untimed.rs takes, its
/// `MIN_CALLS`), and the estimation keeps the budget 10^5 calls gave it (rt's
/// `inplace::MIN_THROTTLED_BUDGET`). The prefix costs every hot event that many timed pairs (about
/// 20 us at 10^3), which a short run of a program with hundreds of hot routines pays in full: run
/// time against the plain build (the notes of issue 24), 10^5 / 10^4 / 10^3 calls: ripgrep over 254
/// MB of sources 1.61 / 1.33 (1.12 with small routines left out) / 1.07, xz -2 on 24 MiB 1.149 /
/// 1.105 / 1.092, Lua 2.48 / 1.95 (1.22) / 1.19.
///
/// Compensated runs use it too. They took TAU's 10^5 calls until the twenty-eighth session of issue
/// 23 (after 10^4, NPB IS's compensated main had come out 1.5 to 5 % low, which the estimations'
/// budget floor, rt's `inplace::MIN_THROTTLED_BUDGET`, then brought to 1.5 %). Measured again with
/// that floor, plain and instrumented copies alternated in one process (`scripts/nas-paired
/// --placement late`, compensation on, throttled, 10^3 against 10^5, interleaved; error of the
/// compensated steps in % of plain, mean ±95 %): Lua +7.0 ±2.3 against +17.5 ±5.9, the probes
/// costing 3.7 ns a probed call in place against 10.2 (10 processes each); SQLite +1.4 ±3.3 against
/// +7.6 ±4.6, 3.5 ns against 7.3 (5); NPB BT.W late placement -0.5 ±5.5 against -1.8 ±2.6, early
/// placement +2.8 ±4.6 against +0.5 ±3.0 (5); the IS-like pattern (NPB's randlc, its plain copy in
/// the same process) -4.4 ±1.4 against -2.9 ±1.0 (10): the longer prefix's probes were most of what
/// compensation had to remove on call-heavy code, and no error moved significantly the other way.
pub const DEFAULT: Rule = Rule { calls: 1_000, per_call_us: 10 };

/// TAU's own defaults (TAU_THROTTLE_NUMCALLS, TAU_THROTTLE_PERCALL): what `--suggest-filter`
/// applies to a profile, since a routine it leaves out loses its count too.
pub const TAU: Rule = Rule { calls: 100_000, per_call_us: 10 };

/// Whether a run throttles when its settings do not say: yes, with callpaths or without,
/// compensated or not. A throttled event keeps its exact count (on its callpath too: a
/// throttled parent stays on the stack untimed, its children's calls on paths through it) and
/// gets the time its in-place windows estimate, and its probes then cost a fraction of what
/// timing every call does, which no compensation removes to the nanosecond a call that
/// call-dense code needs. On real programs nobody here wrote, their plain and instrumented
/// copies alternated in one process (`scripts/nas-paired --placement late --processes 10`, the
/// notes of issue 23), the compensated flat steps came out closer to plain throttled than not
/// (Lua: -2.2 ±2.0 ns a probed call against -6.1 ±3.2; SQLite +0.6 ±1.4 against -5.1 ±6.5; NPB
/// BT.W unresolved) while the probes cost 8 to 20 times less in place; and
/// `c-fixtures/nested_throttle.c` at `--instrument-min-instructions=0` ran 43 x slower than
/// plain unthrottled, 2.3 to 3.3 x throttled.
///
/// With callpaths (the twenty-third session's note): Lua -10.5 ±6.1 ns a probed call throttled
/// against -11.2 ±4.6 timing every call, SQLite -19.2 ±3.7 against -33.2 ±4.9, the probes
/// costing a half and a third in place. Callpath runs were left unthrottled while a throttled
/// event's calls reached its flat record only, and then while the counted calls of alternating
/// siblings were charged their calibration (their tally windows void at each return of their
/// caller: the ground truth's siblings context -20.9 ±8.2 ns an event throttled).
pub const ON_BY_DEFAULT: bool = true;

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
    /// `per_call_us` in nanoseconds.
    pub const fn per_call_ns(&self) -> f64 {
        self.per_call_us as f64 * 1000.0
    }

    /// "called over 1000 times at under 10 us each"
    pub fn describe(&self) -> String {
        format!("called over {} times at under {} us each", self.calls, self.per_call_us)
    }
}
