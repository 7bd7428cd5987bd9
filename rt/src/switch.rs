//! Probes switched while the program runs (Paradyn's instrumentation that is free when off)
//! and TAU's throttling. Every event has a mode byte, read by the entry probe right after the
//! event id: `MEASURED` (the normal path), `COUNTED` (the call is counted exactly, but neither
//! the clock nor the shadow stack is touched: a throttled event) or `OFF`; `TALLY` is `COUNTED`
//! with a shorter path on the thread that measures the event's cost in place (tally.rs), and
//! `INLINE` is `COUNTED` that late placement's code counts itself, without a probe call
//! (inline.rs; a throttled event settles in it, `settled`); `FENCED` is `MEASURED` with a fence
//! before each entry's timestamp (inplace's split windows); `PATHED` counts the call but keeps
//! it on the shadow stack untimed, so that its children's callpaths stay right (inplace's
//! counted windows of a callpath parent). An exit whose frame
//! is not on top reads the mode before reconciling and returns at once for an event that is not
//! measured, so an activation that began measured still ends measured, and one that began
//! switched off costs only that check.
//!
//! `instrument top` switches events from outside through the live segment (live.rs): off goes
//! through `COUNTED` until no activation of the event is open, on is `LENIENT`.
//!
//! At start-up, `INSTRUMENT_RUNTIME_SELECT=FILE` switches off the routines a selection file
//! excludes (TAU's or Score-P's syntax, as at build time), with their loops and call
//! statements: the same binary serves every selection.
//!
//! Throttling uses TAU's rule with a shorter timed prefix (`instrument_contract::throttle`):
//! once an event has been called `INSTRUMENT_THROTTLE_CALLS` (1000, compensated or not) times on
//! a thread and its inclusive time per call there is under
//! `INSTRUMENT_THROTTLE_PERCALL_US` (10 microseconds), it is only counted from then on.
//! `INSTRUMENT_THROTTLE=0` turns it off (`instrument_contract::throttle::ON_BY_DEFAULT`): a
//! throttled event gets the time its in-place windows estimate, and compensation removes the
//! measured cost of each counted call from its parents. With callpaths a throttled parent stays
//! on the stack untimed (`PATHED`, `settled_for`), so that its children's paths go through it,
//! and every counted call is counted on its node too. The profile marks throttled events; their
//! measured times cover the calls timed before, their counts every call.

use crate::bits::EventBits;
use crate::callpath::MAX_EVENTS;
use crate::registry::{EventInfo, Kind};
use crate::{clock, settings};
use instrument_select::Selection;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;

pub use instrument_live::{
    MODE_BARE as BARE, MODE_COUNTED as COUNTED, MODE_DETOUR as DETOUR, MODE_DOUBLE as DOUBLE,
    MODE_FENCED as FENCED, MODE_INLINE as INLINE, MODE_MEASURED as MEASURED, MODE_OFF as OFF,
    MODE_PATHED as PATHED, MODE_TALLY as TALLY,
};
/// The bits that make an entry unmeasured (`COUNTED`, `OFF`).
pub const UNTIMED: u8 = COUNTED | OFF;
/// The mode bits the trampolines route by: `INLINE`'s own bit cleared, so that it routes as
/// `COUNTED` (the probes do not tell them apart).
pub const ROUTED: u32 = !(INLINE & !COUNTED) as u32 & 0xff;

/// Events with a mode byte; later ids are always measured.
pub const TABLE_LEN: u32 = MAX_EVENTS;
/// One byte per event id (zero pages until an event is switched). The probe trampolines read
/// it directly (probes.rs). Page aligned: at start-up the live segment's mode area is mapped
/// over it (live.rs), so that `instrument top` switches the probes this table drives.
/// Instrumented code reads it too, by its exported name (`instrument_contract::inline_count`).
#[export_name = "__instrument_modes"]
pub static MODES: Modes = Modes([const { AtomicU8::new(MEASURED) }; TABLE_LEN as usize]);

#[repr(C, align(4096))]
pub struct Modes([AtomicU8; TABLE_LEN as usize]);

const _: () = assert!(TABLE_LEN as u64 == instrument_live::MAX_EVENTS);
const _: () = assert!(TABLE_LEN as u64 == instrument_contract::inline_count::TABLE_LEN);

/// The table's address, for the live segment.
pub fn table() -> *mut u8 {
    MODES.0.as_ptr() as *mut u8
}
/// One bit per event id: throttled at some point of the run (a counted event that is not
/// throttled was switched off from outside).
static THROTTLED: EventBits = EventBits::new();

/// Calls on one thread after which an event's time per call is checked (`u64::MAX`: never).
pub(crate) static THROTTLE_CALLS: AtomicU64 = AtomicU64::new(u64::MAX);
static THROTTLE_PER_CALL_NS: AtomicU64 = AtomicU64::new(10_000);

/// The mode of event `id`.
#[inline(always)]
pub fn mode(id: u32) -> u8 {
    match MODES.0.get(id as usize) {
        Some(mode) => mode.load(Relaxed),
        None => MEASURED,
    }
}

pub fn set(id: u32, mode: u8) {
    if let Some(slot) = MODES.0.get(id as usize) {
        slot.store(mode, Relaxed);
    }
}

/// The run-time selection, read at the first registration.
static SELECTION: OnceLock<Option<Selection>> = OnceLock::new();

fn selection() -> Option<&'static Selection> {
    SELECTION
        .get_or_init(|| {
            let path = settings::RUNTIME_SELECT.path()?;
            Selection::load(&path)
                .map_err(|e| {
                    eprintln!("instrument: {}: {e}; measuring every routine", settings::RUNTIME_SELECT.name)
                })
                .ok()
        })
        .as_ref()
}

/// Switches off the events from id `first` on (a module being registered, before its ids are
/// published) that the run-time selection excludes: routines it leaves out, and their loops
/// and call statements.
pub fn apply_selection(events: &[EventInfo], first: u32) {
    let Some(selection) = selection() else { return };
    for (id, event) in events.iter().enumerate().skip(first as usize) {
        let off = match &event.kind {
            Kind::Function { name, .. } => !selection.includes(name, &event.file),
            Kind::Loop { function, .. } | Kind::CallSite { function, .. } => mode(*function) == OFF,
        };
        if off {
            set(id as u32, OFF);
        }
    }
}

/// Whether a throttled event settles in `INLINE` rather than `COUNTED` (`settled`).
static INLINE_ALLOWED: AtomicBool = AtomicBool::new(false);

/// The mode a throttled event settles in once no in-place window needs its calls: `INLINE`,
/// which lets the instrumented code count its calls without a probe call (inline.rs; with
/// compensation on, what the counts cost is charged with them), unless
/// `INSTRUMENT_INLINE_COUNT=0`; else `COUNTED`.
pub fn settled() -> u8 {
    if INLINE_ALLOWED.load(Relaxed) {
        INLINE
    } else {
        COUNTED
    }
}

/// Whether throttled calls may have been counted inline in this run: `INLINE` is allowed and a
/// module was instrumented late (only late placement's code counts inline).
pub fn inline_possible() -> bool {
    INLINE_ALLOWED.load(Relaxed) && late_code()
}

/// Whether inline counts may run in in-place windows (inplace), which measure a counted call
/// against them: on x86-64 unless `INSTRUMENT_INLINE_COUNT=0`, compensated or not, where a module
/// was instrumented late.
pub fn inline_windows_possible() -> bool {
    INLINE_WINDOWS.load(Relaxed) && late_code()
}

/// Whether a module was instrumented late (only late placement's code counts inline).
fn late_code() -> bool {
    use instrument_profile::Placement::{Late, Mixed};
    matches!(crate::registry::placement(), Some(Late | Mixed))
}

/// Whether inline windows may run (`inline_windows_possible`).
static INLINE_WINDOWS: AtomicBool = AtomicBool::new(false);

/// Whether bare counts may run in in-place windows (inplace's `Window::Bare`): as inline
/// windows, and with callpaths too, where a callpath leaf's bare windows are what its counted
/// call is measured against (the bare calls' node counted when they are credited, inline.rs).
pub fn bare_windows_possible() -> bool {
    BARE_WINDOWS.load(Relaxed) && late_code()
}

/// Whether bare windows may run (`bare_windows_possible`).
static BARE_WINDOWS: AtomicBool = AtomicBool::new(false);

/// Whether an exit of an event in `mode` closes a frame of its own: `MEASURED`, `FENCED` (a
/// measured event whose entries fence, for an in-place window) or `PATHED` (its frame untimed).
#[inline(always)]
pub fn measured(mode: u8) -> bool {
    mode == MEASURED || mode == FENCED || mode == PATHED
}

/// Whether `mode` is one a throttled event settles in (`COUNTED` or `INLINE`).
pub fn settled_counted(mode: u8) -> bool {
    mode == COUNTED || mode == INLINE
}

/// Reads the throttling settings (once, at start-up, after the callpath settings).
pub fn configure() {
    // Throttled unless asked not to, compensated or not (`throttle::DEFAULT`,
    // `throttle::ON_BY_DEFAULT`).
    // An inline count reaches no frame, so with callpaths its calls would have no node.
    let counts_inline =
        cfg!(target_arch = "x86_64") && settings::flag(&settings::INLINE_COUNT).unwrap_or(true);
    let inline = counts_inline && crate::callpath::depth() == 0;
    BARE_WINDOWS.store(counts_inline, Relaxed);
    INLINE_WINDOWS.store(inline, Relaxed);
    INLINE_ALLOWED.store(inline, Relaxed);
    if !settings::flag(&settings::THROTTLE).unwrap_or(instrument_contract::throttle::ON_BY_DEFAULT) {
        return;
    }
    let default = instrument_contract::throttle::DEFAULT;
    let calls = settings::number(&settings::THROTTLE_CALLS).unwrap_or(default.calls);
    let per_call_us = settings::number(&settings::THROTTLE_PERCALL_US).unwrap_or(default.per_call_us);
    THROTTLE_PER_CALL_NS.store(per_call_us.saturating_mul(1000), Relaxed);
    THROTTLE_CALLS.store(calls, Relaxed);
}

/// The throttling rule in effect, if throttling is on.
pub fn rule() -> Option<instrument_contract::throttle::Rule> {
    let calls = THROTTLE_CALLS.load(Relaxed);
    (calls != u64::MAX).then(|| instrument_contract::throttle::Rule {
        calls,
        per_call_us: THROTTLE_PER_CALL_NS.load(Relaxed) / 1000,
    })
}

/// Runs `f` with throttling suspended (the start-up measurement of the probe costs).
pub fn without_throttling<R>(f: impl FnOnce() -> R) -> R {
    let saved = THROTTLE_CALLS.swap(u64::MAX, Relaxed);
    let result = f();
    THROTTLE_CALLS.store(saved, Relaxed);
    result
}

/// Whether an event called `calls` times on a thread is due for the throttling check.
#[inline(always)]
pub fn due(calls: u64) -> bool {
    calls >= THROTTLE_CALLS.load(Relaxed)
}

/// TAU's rule for an event that is `due`: throttle it if its calls took under the limit each,
/// into the mode `settled_for(parent)` gives (`parent`: it made calls). True when it was
/// throttled now.
#[cold]
#[inline(never)]
pub fn consider(id: u32, calls: u64, inclusive_ticks: u64, parent: bool) -> bool {
    // An event under in-place estimation is timed in its timed windows on purpose, and one
    // already counted or settled on the stack (its estimation's last timed exit) stays as it is.
    // The calibration's hidden events are measured on purpose too (`overhead::is_hidden`).
    if crate::inplace::estimating(id)
        || mode(id) & UNTIMED != 0
        || settled_throttled(id)
        || crate::overhead::is_hidden(id)
    {
        return false;
    }
    let Some(ticks_per_ns) = clock::ticks_per_ns_estimate() else { return false };
    let limit = THROTTLE_PER_CALL_NS.load(Relaxed) as f64 * ticks_per_ns * calls as f64;
    let throttle = (inclusive_ticks as f64) < limit;
    if throttle {
        set(id, settled_for(parent));
        THROTTLED.set(id);
    }
    throttle
}

/// The mode a throttled event settles in: `PATHED` for a `parent` (one that made calls) when
/// callpaths are recorded, so that its children's calls stay on paths through it (counted
/// without it they would go to paths that skip it, as TAU's throttling puts them), else
/// `settled()`.
pub fn settled_for(parent: bool) -> u8 {
    if parent && crate::callpath::depth() != 0 {
        PATHED
    } else {
        settled()
    }
}

/// Whether event `id` is throttled and settled in its mode (`settled_counted`, or `PATHED` with
/// callpaths): what its re-estimations and its queued first estimation wait for.
pub fn settled_throttled(id: u32) -> bool {
    let mode = mode(id);
    settled_counted(mode) || mode == PATHED && throttled(id)
}

/// Whether event `id` was throttled (it stays counted for the rest of the run).
pub fn throttled(id: u32) -> bool {
    THROTTLED.get(id)
}

/// Events the runtime itself left `LENIENT`: measured, their estimation given up while an
/// activation that began counted was open (inplace), whose exit must not be reconciled.
static LENIENT_HERE: EventBits = EventBits::new();

/// Leaves event `id` measured but `LENIENT` (see `LENIENT_HERE`), which the profile does not
/// take for a switch from outside.
pub fn set_lenient_here(id: u32) {
    LENIENT_HERE.set(id);
    set(id, instrument_live::MODE_LENIENT);
}

/// Whether event `id` is `LENIENT` because the runtime left it so (`set_lenient_here`), not
/// `instrument top`.
pub fn left_lenient(id: u32) -> bool {
    mode(id) == instrument_live::MODE_LENIENT && LENIENT_HERE.get(id)
}

/// What the profile says of event `id` at the end: (throttled during the run, switched off
/// from outside). An event ends switched from outside when its last mode is one the runtime
/// never leaves it in: `OFF` and `COUNTED` on an event that was not throttled, which only
/// `instrument top` (or the run-time selection, before the event ran) sets, and `LENIENT`,
/// `instrument top`'s switch back on, except where the runtime left it so itself
/// (`set_lenient_here`): without that exception SQLite's compensated callpath profile said two
/// routines had been switched off from outside, their counts covering part of the run, in a run
/// nobody touched. An event the runtime left lenient that `instrument top` then switched off and
/// on again is not told apart.
pub fn ending(id: u32) -> (bool, bool) {
    let throttled = THROTTLED.get(id);
    let mode = mode(id);
    let lenient_here = left_lenient(id);
    (throttled, !(measured(mode) || lenient_here || mode & COUNTED != 0 && throttled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_left_lenient_by_the_runtime_is_not_switched_from_outside() {
        use instrument_live::MODE_LENIENT;
        set_lenient_here(7001);
        assert_eq!(mode(7001), MODE_LENIENT);
        assert_eq!(ending(7001), (false, false), "an estimation given up");
        set(7002, MODE_LENIENT);
        assert_eq!(ending(7002), (false, true), "instrument top switched it back on");
        set(7001, OFF);
        assert_eq!(ending(7001), (false, true), "then switched off from outside");
    }

    #[test]
    fn modes_default_to_measured_and_switch() {
        assert_eq!(mode(5), MEASURED);
        assert_eq!(mode(u32::MAX), MEASURED, "ids past the table are measured");
        set(5, OFF);
        assert_eq!(mode(5), OFF);
        set(5, MEASURED);
        assert_eq!(mode(5), MEASURED);
    }

    #[test]
    fn only_counted_tallied_inline_and_off_entries_are_untimed() {
        use instrument_live::MODE_LENIENT;
        let untimed = |mode: u8| mode & UNTIMED != 0;
        assert_eq!(
            [MEASURED, COUNTED, OFF, MODE_LENIENT, TALLY, INLINE, FENCED, PATHED].map(untimed),
            [false, true, true, false, true, true, false, false]
        );
    }
}
