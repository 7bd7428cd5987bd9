//! The profile file format, shared by the runtime (which writes it) and the driver (which reads
//! it), so the two can never disagree. Profiles are versioned JSON: a reader accepts its own
//! version and older ones, and refuses newer ones with a clear message.

use events::is_zero as is_zero64;
use serde::{Deserialize, Serialize};

mod events;
mod kinds;
mod overhead;
mod validate;

pub use events::{CallSite, Compensated, Estimated, Function, IterationStats, Loop, Stats};
pub use instrument_contract::Language;
pub use kinds::{ClockSource, CountedReference, Metric, Placement, Strategy};
pub use overhead::{EventCosts, Overhead, PairCosts, ProbeCosts, ProbeKind};

/// Identifies the file kind; written as the `format` field.
pub const FORMAT: &str = "instrument-profile";
/// The schema version this crate writes. Bump it on any incompatible change.
/// Version 2 added event ids, loops and call sites. Version 3 gave routines, loops and call
/// statements one statistics block (`Stats`: a loop's and a call statement's `count` became
/// `calls`) and made enums of the language, placement, clock source, compensation strategy and
/// timeline metric (written as before). Profiles of versions 1 and 2 still load.
pub const VERSION: u32 = 3;

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub format: String,
    pub version: u32,
    /// The program's command line, argv[0] first.
    pub command: Vec<String>,
    pub pid: u32,
    /// The fatal signal the run ended with (`"SIGSEGV"`, `"SIGINT"`...): the profile holds
    /// what was measured until then, frames open in the signalled thread closed at the signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<String>,
    /// The parent's pid when this process is a child of fork(): its profile includes what the
    /// parent measured before the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<u32>,
    pub clock: Clock,
    /// Where the probes were placed when the program was built (absent in older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Routines with fewer IR instructions than this, no loop and no recursion had no events:
    /// their time is their callers' (`INSTRUMENT_MIN_INSTRUCTIONS` at build; absent: every
    /// routine had them, or an older profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small_threshold: Option<u32>,
    /// The throttling rule the run applied (none: throttling was off, or an older profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<Throttle>,
    /// The run settings (`INSTRUMENT_*`) set in the program's environment when it started, as
    /// written there (absent: none, or an older profile).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
    pub totals: Totals,
    /// Routines that ran (or whose loops or call statements ran), merged over all threads.
    pub functions: Vec<Function>,
    /// Loops that ran, each nested in a routine and possibly in another loop.
    #[serde(default)]
    pub loops: Vec<Loop>,
    /// Call statements that ran, each in a routine and possibly in a loop.
    #[serde(default)]
    pub callsites: Vec<CallSite>,
    /// Callpath profile (callpath mode only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callpaths: Option<Callpaths>,
    /// Overhead compensation (when the program ran with it): the measured probe costs. Every
    /// event then also carries `compensated` times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation: Option<Compensation>,
    /// What the probes cost, measured at start-up, and what they added to this run (absent in
    /// profiles from before the cost model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    /// Per-thread statistics when more than one thread measured something (the merged ones
    /// are `functions`, `loops` and `callsites`). Empty for single-threaded programs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadEvents>,
    /// Time histograms sampled while the program ran (`instrument run --timeline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// The MPI rank this process was (one profile per rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<Mpi>,
    /// Communication recorded by the PMPI layer: one record per call site, operation and peer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub communication: Vec<Communication>,
}

/// Which rank of which MPI job wrote the profile.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mpi {
    /// The rank in MPI_COMM_WORLD.
    pub rank: u32,
    /// The number of ranks in MPI_COMM_WORLD.
    pub size: u32,
    /// The launcher's job id (the same in every rank's profile of one run); empty if unknown.
    #[serde(default)]
    pub job: String,
}

/// Li and Zhang's COM record: what one communication statement did with one peer.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Communication {
    /// The event open when the call was made (the call statement when call statements are
    /// measured, otherwise the calling routine or loop); None outside every event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<u32>,
    /// The MPI operation (`MPI_Send`, `MPI_Recv`, `MPI_Allreduce`...), or the OpenMP wait
    /// (`OMP_Barrier_implicit`, `OMP_Lock`, `OMP_Idle`...: instrument_contract::mpi::OPERATIONS).
    pub operation: String,
    /// The peer's rank in MPI_COMM_WORLD (destination of a send, source of a receive, root of
    /// a rooted collective); None for collectives without a root and for waits. For an OpenMP
    /// wait: the waiting thread's number in its team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<u32>,
    pub calls: u64,
    /// Bytes sent or received (for a collective: this rank's send buffer).
    pub bytes: u64,
    /// Time inside the calls.
    pub time_ns: u64,
    /// The part of `time_ns` spent waiting for the peer (synchronisation delay: a receive
    /// before its message arrived, a wait before its request completed); the rest is
    /// transmission.
    pub wait_ns: u64,
}

/// Paradyn's time histograms: every series has the same buckets, each `bucket_ns` wide from
/// the program's start; the width doubled (neighbouring buckets added up) whenever the buckets
/// were full.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub bucket_ns: u64,
    /// The busiest events' series, busiest first.
    pub series: Vec<TimelineSeries>,
}

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineSeries {
    /// The event, as reports name it (`solve`, `loop at cg.c:412 in conj_grad`).
    pub name: String,
    pub metric: Metric,
    pub values: Vec<f64>,
}

/// One thread's share of every event it ran, keyed by event id (routine, loop or call site).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadEvents {
    /// 0 for the first thread that measured something, then in order (as in `callpaths`).
    pub thread: u64,
    pub events: Vec<ThreadEvent>,
}

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadEvent {
    pub id: u32,
    #[serde(flatten)]
    pub stats: Stats,
}

/// The probe costs measured at start-up and what compensation removed.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compensation {
    /// How probe costs were estimated (the paper's calibration in older profiles).
    #[serde(default)]
    pub strategy: Strategy,
    /// Routine and call-statement probes.
    pub routine: ProbeCost,
    /// Loop probes.
    #[serde(rename = "loop")]
    pub loop_probe: ProbeCost,
    /// How long calibration took at start-up.
    pub calibration_ns: u64,
    /// Probe time removed from the outermost events (all threads).
    pub removed_ns: u64,
    /// Event activations whose compensated inclusive time came out negative (kept, not
    /// clamped: the probe cost varies more than the event lasts).
    pub negative_results: u64,
    /// Compensation across MPI ranks: what this rank inherited from the senders it waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub piggyback: Option<Piggyback>,
    /// The probe costs measured again while the program ran (rt/src/recalibrate.rs); the
    /// costs above are the start-up ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recalibration: Option<Recalibration>,
    /// The estimates of hot events' probe costs measured in place (the `inplace` strategy),
    /// in the order made: an event is measured again at every fourth power of its calls, and
    /// from each estimate on compensation used the event's estimates so far pooled (the
    /// runtime's pooling.rs: a Kalman filter, a noisy estimate moving the cost little).
    /// Events without an estimate were compensated with the calibrated costs above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_place: Vec<InPlaceCost>,
    /// What each inline count (a throttled routine's call counted by its own entry code) was
    /// charged at the end of the run; absent where no code counted inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_count: Option<InlineCharge>,
    /// The calibrated flush of a bare window's pending calls (ns), which callpath profiles'
    /// bare windows take out of their time once per flush and charge where it ran (the
    /// runtime's flushes.rs); absent where no bare window could run, and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bare_flush_ns: Option<f64>,
}

/// The charge of an inline count: its calibration, the bare count's, and what compensation
/// charged: what double windows measured an inline count to cost in place, pooled over the
/// events and weighed against the calibration (`InPlaceCost::inline_count_ns`).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InlineCharge {
    pub calibrated_ns: f64,
    pub bare_ns: f64,
    pub charged_ns: f64,
    /// The calibrated entry checks of a routine that counts inline, switched off (its
    /// dispatch), which every call of it runs and no in-place window leaves out: added to each
    /// calibrated path its estimates charge (0 in older profiles and where compensation is off).
    #[serde(default)]
    pub dispatch_ns: f64,
}

/// One event's probe costs measured where its probes ran, from alternating windows of timed
/// and counted executions (the runtime's inplace).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InPlaceCost {
    /// The event (routine, loop or call statement id of this profile).
    pub id: u32,
    /// What a timed probe pair of this event cost in place (its Δi, used by compensation).
    pub timed_ns: f64,
    /// What a counted-only pair cost there: what the counted call measured over a cheaper path
    /// to the same count (`counted_reference`: the event's inline count, a bare count or the
    /// tally path; `counted_over_inline_ns`, `counted_over_bare_ns`, `counted_over_tally_ns`),
    /// plus that path's own cost, its calibration scaled as the measured part moved from its
    /// own; with no such pairs, the calibrated counted pair's cost. Compensation charges the
    /// event's measurements pooled over its estimations; this is this estimation's alone.
    pub counted_ns: f64,
    /// Timed minus counted per execution, as measured, and its standard error.
    pub difference_ns: f64,
    pub standard_error_ns: f64,
    /// Pairs of windows measured, and executions per window.
    pub pairs: u32,
    pub window: u32,
    /// Pairs of counted and tally windows that measured `counted_ns` (0: the calibrated cost).
    #[serde(default)]
    pub counted_pairs: u32,
    /// From windows whose entries fenced their timestamps (`fenced_windows` of them): the
    /// event's own time per execution, and the part of its timed pair inside its interval,
    /// which compensation takes from its time (the rest from its caller's). Absent where the
    /// estimation opened none (loops, another clock, the fenced strategy), and the calibration's
    /// share split the pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub fenced_windows: u32,
    /// A callpath profile's leaf: its probe pair kept on the shadow stack untimed (what a
    /// callpath parent's counted windows run), measured from `pathed_pairs` pairs of such
    /// windows against counted ones, plus the counted pair's calibrated cost. Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pathed_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub pathed_pairs: u32,
    /// A throttled routine that counts inline, with compensation on: what one more inline count
    /// cost in place, from `double_pairs` pairs of windows whose entries ran a shadow of the
    /// count before counting against windows that only counted (the runtime's excess.rs), and
    /// its standard error. Compensation charges every inline count what such measurements say,
    /// pooled over the events and weighed against the count's calibration. Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_count_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub double_pairs: u32,
    /// A throttled routine that counts inline: what its inline count cost in place over a bare
    /// count (a test and two updates of words the thread pointer addresses), from `first_pairs`
    /// pairs of inline windows against bare ones, and its standard error: where the code leaves
    /// the bare count's three instructions hidden, what the first inline count costs where the
    /// routine runs (the runtime's excess.rs). Absent elsewhere (in older profiles: from bare windows against counted ones,
    /// with `bare_pairs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_over_bare_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub first_pairs: u32,
    /// Pairs of bare windows against counted ones (`counted_over_bare_ns`; in older profiles
    /// also `inline_over_bare_ns`).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub bare_pairs: u32,
    /// A callpath profile's leaf that counts inline, with compensation on: what its counted
    /// probe call cost in place over a bare count, from `bare_pairs` pairs of bare windows
    /// against counted ones, and its standard error; `counted_ns` is then that plus the bare
    /// count's calibrated cost (rather than the tally path's measurement). Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_over_bare_ns: Option<(f64, f64)>,
    /// What the counted call cost over the tally path as `counted_pairs` pairs of tally windows
    /// measured it, and its standard error, whichever reference `counted_ns` took. Absent
    /// without tally pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_over_tally_ns: Option<(f64, f64)>,
    /// A routine that counts inline: what its counted probe call cost over its inline count, as
    /// `inline_pairs` pairs of inline windows against counted ones measured it (negative where
    /// the inline count cost more), and its standard error. Absent without inline pairs (and in
    /// profiles before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_over_inline_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub inline_pairs: u32,
    /// Which path `counted_ns` was measured against (of this estimation's measurements: the
    /// one the counted call measured the most over, less two standard errors). Absent in
    /// profiles before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_reference: Option<CountedReference>,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Recalibration while the program ran: how often, at what cost (removed as measurement
/// overhead), and the range of routine Δi and of the counted pair it measured (each the lower
/// of two rounds, as compensation used them).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recalibration {
    /// Rounds whose costs were used (a round far off the start-up costs is not).
    pub rounds: u64,
    pub cost_ns: u64,
    pub routine_low_ns: f64,
    pub routine_high_ns: f64,
    /// The counted pair's range (rounds measure it since the untimed modes do not move in
    /// proportion with the timed pair); 0 in profiles from before.
    #[serde(default)]
    pub counted_low_ns: f64,
    #[serde(default)]
    pub counted_high_ns: f64,
}

/// The overhead a rank inherited from other ranks' messages and removed (see
/// rt/src/piggyback.rs), and what piggybacking itself cost.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Piggyback {
    /// Messages and collectives that brought another rank's overhead.
    pub messages: u64,
    /// Overhead inherited from them and removed.
    pub inherited_ns: u64,
    /// Time the PMPI layer spent piggybacking, removed as measurement overhead.
    pub cost_ns: u64,
}

/// One probe kind's cost (Malony and Shende's Δi and Δe).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeCost {
    /// Δi: what one event (entry and exit probe) adds to every enclosing event's inclusive time.
    pub inclusive_overhead_ns: f64,
    /// The part of Δi inside the event's own interval, added to its own inclusive time.
    pub own_ns: f64,
    /// Δe: what one event adds to its parent's exclusive time (Δi less its own part).
    pub exclusive_overhead_ns: f64,
}

/// Callpaths as recorded: per thread, one record per distinct callpath of at most `depth`
/// events (all of them when `depth` is 0: the calling-context tree).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Callpaths {
    /// The k the program ran with; 0 means unlimited (full calling context).
    pub depth: u32,
    /// Most callpath nodes per thread; beyond it events go to `other`.
    pub node_cap: u32,
    pub threads: Vec<ThreadCallpaths>,
}

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadCallpaths {
    /// 0 for the first thread that measured something, then in order.
    pub thread: u64,
    pub paths: Vec<CallpathRecord>,
    /// Everything measured after the node cap was reached ("other paths").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<CallpathRecord>,
    /// Callpaths that could not get a node of their own.
    #[serde(default)]
    pub overflow_paths: u64,
    /// With compensation on: entries whose step from their parent's node missed the node's
    /// cache (the parent's previous child was another event), and what compensation charged
    /// each of them at the end (ns), timed in place on a sample (rt/src/misses.rs).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub step_misses: u64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub step_miss_ns: f64,
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// One callpath: event ids (routines, loops, call statements) from the oldest to the event it
/// ends at. Inclusive time is counted once when the callpath recurs inside itself.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallpathRecord {
    pub path: Vec<u32>,
    #[serde(flatten)]
    pub stats: Stats,
}

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    pub source: ClockSource,
    /// Clock ticks per second, measured against CLOCK_MONOTONIC.
    pub ticks_per_second: f64,
    /// Length of the CLOCK_MONOTONIC interval the tick rate was measured over.
    pub calibration_ns: u64,
}

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Wall time from runtime start-up to the profile being written.
    pub wall_ns: u64,
    /// Threads whose events are in this profile.
    pub threads: u64,
    /// Threads still inside measured events when the profile was written (their counts are a
    /// snapshot).
    pub threads_running_at_exit: u64,
    /// Threads alive but outside every measured event when the profile was written (an OpenMP
    /// or other thread pool's idle workers): their counts are complete.
    #[serde(default, skip_serializing_if = "is_zero64")]
    pub threads_idle_at_exit: u64,
    /// Communication records the PMPI layer could not keep (its table was full).
    #[serde(default, skip_serializing_if = "is_zero64")]
    pub communication_dropped: u64,
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
    /// Calls of throttled routines counted by their own entry code, without a probe call
    /// (included in their `untimed_calls`).
    #[serde(default, skip_serializing_if = "is_zero64")]
    pub inline_counted: u64,
    /// Time the threads spent runnable but waiting for a core (the kernel's run delay), summed
    /// over threads: other programs had the cores. It is inside the measured times (in whatever
    /// event the thread was preempted in), compensated and estimated times too.
    #[serde(default, skip_serializing_if = "is_zero64")]
    pub waited_ns: u64,
}

/// A throttling rule: events called over `calls` times on a thread at under `per_call_us`
/// microseconds each were only counted from then on.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttle {
    pub calls: u64,
    pub per_call_us: u64,
}

/// Why a text is not a profile this tool can read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not a valid profile: {0}")]
    Json(serde_json::Error),
    #[error("not an instrument profile (no \"format\": \"{FORMAT}\")")]
    NotAProfile,
    #[error("profile schema version {0} is newer than this tool understands (up to {VERSION}); upgrade instrument")]
    NewerVersion(u32),
    /// Parsed, but its parts contradict each other (`validate`).
    #[error("not a valid profile: {0}")]
    Inconsistent(Inconsistency),
}

/// The first rule of a profile's structure that it breaks, in words (`Profile::validate`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Inconsistency(pub String);

impl Profile {
    /// Parses a profile, checking its format tag and version before the rest of its fields and
    /// its structure after (`validate`).
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
        let mut profile: Profile = match header.version {
            Some(v) if v > VERSION => return Err(ReadError::NewerVersion(v)),
            _ => serde_json::from_str(text).map_err(ReadError::Json)?,
        };
        if profile.version < 2 {
            // Version 1 had routines only, without ids.
            for (id, f) in profile.functions.iter_mut().enumerate() {
                f.id = id as u32;
            }
        }
        profile.validate().map_err(ReadError::Inconsistent)?;
        Ok(profile)
    }

    /// Checks the structure readers rely on (unique ids, nesting that names known events and
    /// has no cycle); the first broken rule, in words.
    pub fn validate(&self) -> Result<(), Inconsistency> {
        validate::check(self).map_err(Inconsistency)
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
            ended_by: None,
            forked_from: None,
            clock: Clock { source: ClockSource::Tsc, ticks_per_second: 2.5e9, calibration_ns: 2_000_000 },
            placement: None,
            small_threshold: None,
            throttle: None,
            settings: Default::default(),
            totals: Totals::default(),
            functions: vec![Function {
                id: 0,
                recursive: false,
                name: "main".into(),
                file: "a.c".into(),
                line: 3,
                language: Language::C,
                throttled: false,
                switched_off: false,
                stats: Stats { calls: 1, exclusive_ns: 10, inclusive_ns: 10, ..Stats::default() },
            }],
            loops: Vec::new(),
            callsites: Vec::new(),
            callpaths: None,
            compensation: None,
            threads: Vec::new(),
            timeline: None,
            overhead: None,
            mpi: None,
            communication: Vec::new(),
        }
    }

    #[test]
    fn round_trips() {
        let p = sample();
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(Profile::from_json(&text).unwrap(), p);
    }

    #[test]
    fn reads_version_1_profiles() {
        let v1 = r#"{"format":"instrument-profile","version":1,"command":["a"],"pid":1,
            "clock":{"source":"tsc","ticks_per_second":1e9,"calibration_ns":1},"totals":{"wall_ns":5,"threads":1,
            "threads_running_at_exit":0,"events":2,"frames_closed_at_exit":0,"frames_reconciled":0,
            "stack_overflow_events":0,"unmatched_exits":0,"unregistered_events":0},
            "functions":[{"name":"main","calls":1,"child_calls":0,"exclusive_ns":5,"inclusive_ns":5}]}"#;
        let p = Profile::from_json(v1).unwrap();
        assert_eq!(p.functions[0].name, "main");
        assert!(p.loops.is_empty() && p.callsites.is_empty());
    }

    fn a_loop(id: u32, function: u32, parent: Option<u32>) -> Loop {
        Loop {
            id,
            function,
            parent,
            file: "a.c".into(),
            line: 4,
            throttled: false,
            switched_off: false,
            iteration_stats: None,
            stats: Stats { calls: 1, iterations: 3, exclusive_ns: 1, inclusive_ns: 1, ..Stats::default() },
        }
    }

    fn refusal(p: &Profile) -> String {
        match Profile::from_json(&serde_json::to_string(p).unwrap()) {
            Err(ReadError::Inconsistent(e)) => e.0,
            other => panic!("accepted or refused for another reason: {other:?}"),
        }
    }

    #[test]
    fn refuses_profiles_whose_parts_contradict_each_other() {
        let mut p = sample();
        p.loops = vec![a_loop(1, 0, None), a_loop(2, 0, Some(1))];
        assert!(Profile::from_json(&serde_json::to_string(&p).unwrap()).is_ok());
        p.loops.push(a_loop(0, 0, None));
        assert_eq!(refusal(&p), "event id 0 is used twice (a routine and a loop)");
        p.loops = vec![a_loop(1, 7, None)];
        assert_eq!(refusal(&p), "loop 1 is in routine 7, which the profile does not have");
        p.loops = vec![a_loop(1, 0, Some(0))];
        assert_eq!(refusal(&p), "loop 1 is nested in loop 0, which the profile does not have");
        p.loops = vec![a_loop(1, 0, Some(2)), a_loop(2, 0, Some(1))];
        assert_eq!(refusal(&p), "loop 1 is nested in itself");
        p.loops = vec![a_loop(1, 0, None)];
        p.threads = vec![ThreadEvents {
            thread: 1,
            events: vec![ThreadEvent { id: 9, stats: Stats { calls: 1, ..Stats::default() } }],
        }];
        assert_eq!(refusal(&p), "thread 1 has event 9, which the profile does not have");
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
