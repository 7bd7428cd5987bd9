//! The inline count ABI: what a routine's entry does in the instrumented code itself, without a
//! probe call, when its event is throttled (written by pass/src/inline_count.rs, laid out by
//! rt/src/thread.rs and rt/src/switch.rs, which assert these values).
//!
//! A throttled routine's call is only counted, and on call-heavy code the call into the runtime
//! that counts it is most of what instrumentation costs: an interpreter's hundred small
//! routines with loops, each called millions of times, ran 18 % slower through the counted
//! probe and 10 % slower through switched-off probes, against the plain build (the note of
//! issue 24). So at late placement on x86-64 the entry counts in place, in about twenty
//! instructions, when three things hold, tested in this order, and calls the entry probe
//! otherwise (a measured event's, mode 0, is the probe set's `enter_measured`, which skips the mode
//! lookup the code has just made):
//!
//! 1. the event id (from the routine's id slot) is below the thread's record capacity as the
//!    thread-local block `THREAD` holds it at `THREAD_CAP_AT` (a `u32`): zero on a thread without
//!    a state, never above `TABLE_LEN`, so one test says that the slot is registered (an
//!    unregistered one holds `u32::MAX`), that the id is inside the mode table, that the thread
//!    has a state and that the event has a record;
//! 2. the event's mode byte in `MODES` (one byte per id) is `MODE`: throttled, and not under
//!    in-place estimation (with compensation on, the runtime charges the counts' calibrated
//!    cost with them);
//! 3. the event's record's `COUNTED_AT` word is not the state's `INLINE_END_AT` word: that is
//!    where the runtime ends a window of inline counts of the event it is estimating, whose
//!    cost it measures against counted probe calls (rt/src/inplace/); `u64::MAX` otherwise.
//!
//! The state is at the address the block holds at offset 0. One test where there were three (the
//! id in the table, the state not null, the id below the state's `RECORD_CAP_AT`) took 0.8 ns a
//! probed call off Lua's interpreter and 1.2 off SQLite, a sixth of what their probes cost in
//! place (`scripts/nas-paired --program lua|sqlite`, throttled and compensated, the two
//! toolchains interleaved; issue 23's thirty-seventh note).
//!
//! It then adds 1 to the event's record's `COUNTED_AT` word and the event's estimate
//! (`PER_CALL[id]`, a `u64`) to its `UNTIMED_OWN_AT` word, records being `1 << RECORD_SHIFT`
//! bytes from the address at `RECORDS_AT`; and adds 1 to the block's `PENDING_CALLS_AT` word and
//! the estimate to the state's `PENDING_ESTIMATE_AT` word, which the runtime charges to the frame
//! on top (the caller's) before that frame changes. The entry's result is then zero: the routine's
//! exits are branched around, as for any counted call. Where the routine has a probed copy
//! (pass/src/probed_copy.rs: no loop or call-statement event, arguments a tail call forwards),
//! the checks sit at the routine's own entry, a counted call runs on into the routine's own
//! code, unprobed, and every call that fails a check is a tail call of the copy, whose entry
//! calls the probe.
//!
//! A switched-off event's entry (mode byte `OFF`, tested right after the first check and before
//! `MODE`, so that it jumps once over the count and every other mode falls on) makes no call
//! either: its result is zero at once, as the probe's is, and nothing is counted (with a probed
//! copy, it runs the routine's own code). Switching routines
//! off at run time (`INSTRUMENT_RUNTIME_SELECT`, `instrument top --off`) then costs a load and
//! two compares a call instead of a probe call.
//!
//! A routine under in-place estimation whose mode byte is `BARE` (after the `MODE` test) counts
//! its call more barely still, for the windows that measure what the inline count costs where it
//! runs (rt/src/inplace/): where the block's `WINDOW_LEFT_AT` word (a `u32`) is not zero, it
//! takes 1 from that word and adds 1 to the block's `PENDING_CALLS_AT`, every access one
//! addressed from the thread pointer directly, and its result is zero; else it calls the entry
//! probe (which counts the call as a counted one). A count that reaches its words through
//! pointers costs in place what no calibration shows (the inline count cost 4.4 ns a call next to
//! a dependency chain on an AMD EPYC, calibrated at 1.5-2), while a test and two updates of words
//! the thread pointer addresses directly cost nothing measurable there (issue 23's note of
//! session 44): the bare count is what inline counts are measured against. Only the thread that
//! runs the window has that word above zero; the runtime credits the calls it counted down to
//! the event's record (count and estimate): a callpath leaf's before it charges the pending calls
//! (`inline::charge_pending`), a flat routine's at the window's end (`inline::end_bare`).
//!
//! A routine under in-place estimation whose mode byte is `DETOUR` or `DOUBLE` (tested after
//! `MODE`: one compare of the mode with `DOUBLE_BIT` set) leaves the count's way by the same
//! branches and counts inline as `MODE` does; on the way, `DOUBLE` first runs a shadow of the
//! checks and the count: the same loads of the same words, compare for compare and branch for
//! branch, and the same adds, each of a zero the compiler cannot see through, every access
//! volatile; each sum is stored to one of the state's `SHADOW_SINK_AT` words rather than back to
//! the word it read, so that it changes nothing and the count after it does not wait for the
//! shadow's stores (a store-to-load chain no single count has, which made one more count 0.5 ns
//! dearer in Lua's interpreter: rt/src/inplace/excess.rs). Windows of double counts against
//! windows of detoured ones measure what one more inline count costs where the routine runs,
//! which compensation charges every inline count (rt/src/inplace/excess.rs). Any thread that
//! runs the routine meanwhile takes the same path and counts as it would in mode `MODE`.
//!
//! Every access is a plain load or a read-modify-write of one word: only the thread itself
//! touches its state and records, and a signal handler that interrupts the sequence can at
//! worst move one estimate between callers.

/// The calling thread's thread-local block (`THREAD_BYTES`; the runtime defines it in the
/// executable's static TLS, so code bound for the executable reaches it at a fixed offset from
/// the thread pointer, other code through the GOT, pass/src/inline_count.rs `tls_model`): the
/// `ptr` to its state at 0 (null before its first event and after it retired), the state's
/// record capacity at `THREAD_CAP_AT` (zero while the pointer is null), and the thread's two
/// words of counts waiting for the runtime, `WINDOW_LEFT_AT` and `PENDING_CALLS_AT`.
pub const THREAD: &str = "__instrument_thread";
/// The offset of the record capacity (`u32`) in `THREAD`'s block, and the block's size.
pub const THREAD_CAP_AT: u64 = 8;
pub const THREAD_BYTES: u64 = 24;
/// The calls a bare count may still count on this thread (`u32`), in `THREAD`'s block after the
/// record capacity.
pub const WINDOW_LEFT_AT: u64 = 12;
/// The calls counted inline or barely since the frame on top last changed (`u64`), in `THREAD`'s
/// block.
pub const PENDING_CALLS_AT: u64 = 16;
/// `u8 [TABLE_LEN]`: the mode byte of every event id (the runtime's `switch::MODES`).
pub const MODES: &str = "__instrument_modes";
/// `u64 [TABLE_LEN]`: every event's estimate per untimed call, scaled ticks (`untimed::PER_CALL`).
pub const PER_CALL: &str = "__instrument_per_call";
/// Ids with a mode byte (`instrument_live::MAX_EVENTS`).
pub const TABLE_LEN: u64 = 1 << 22;
/// The mode byte that allows the inline count: the counted bit (`MODE_COUNTED`) and its own.
pub const MODE: u8 = 16 | 1;
/// The mode byte of a switched-off event (`MODE_OFF`): its entry's result is zero at once, as
/// the probe's would be, and nothing is counted.
pub const OFF: u8 = 2;

/// The mode byte of an event counted barely (see the module comment): the counted bit and a
/// bit of its own, which the probes' routing does not take for any other mode.
pub const BARE: u8 = 128 | 1;

/// The mode byte of an event whose entry counts inline after a detour out of its way (a test
/// and two taken branches more), for the windows `DOUBLE` is measured against: `BARE`'s bits and
/// `MODE`'s own, which the probes route as they route `BARE`.
pub const DETOUR: u8 = BARE | MODE;
/// The mode byte of an event whose entry takes the same detour, runs a shadow of the checks and
/// the count that changes nothing there (see the module comment), then counts inline: `DETOUR`
/// and the bit `DOUBLE_BIT`, which the probes route as they route `BARE` too.
pub const DOUBLE: u8 = DETOUR | DOUBLE_BIT;
/// The bit that tells `DOUBLE` from `DETOUR`.
pub const DOUBLE_BIT: u8 = 4;

/// Byte offsets in the thread state.
pub const RECORDS_AT: u64 = 24;
/// The record capacity (`u32`): the runtime's, which it copies to `THREAD`'s block.
pub const RECORD_CAP_AT: u64 = 32;
pub const PENDING_ESTIMATE_AT: u64 = 40;
pub const INLINE_END_AT: u64 = 48;
/// Four words the shadow of a count (mode `DOUBLE`) stores its sums to, one for each of the
/// count's read-modify-writes (`u64 [4]`): stored back to the words it read, the count right
/// after it would wait for each store to forward to its load, a chain no single count has.
pub const SHADOW_SINK_AT: u64 = 56;
/// A record is `1 << RECORD_SHIFT` bytes; the offsets of its two words.
pub const RECORD_SHIFT: u32 = 7;
pub const COUNTED_AT: u64 = 8;
pub const UNTIMED_OWN_AT: u64 = 56;

/// Whether modules for `triple` at late placement count inline (the runtime's thread pointer
/// is reached through `%fs` on x86-64 only).
pub fn supported(triple: &str) -> bool {
    triple.starts_with("x86_64") && triple.contains("linux")
}
