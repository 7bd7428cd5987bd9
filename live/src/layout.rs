//! Offsets and the fixed-size structures at them. Every area starts on a page boundary so
//! that either side can map it on its own.

use crate::records::{Frame, Record};
use std::sync::atomic::{AtomicU32, AtomicU64};

/// The memfd's name, as `/proc/PID/fd/N` shows it: `/memfd:instrument-live (deleted)`.
pub const MEMFD_NAME: &str = "instrument-live";
pub const MAGIC: [u8; 8] = *b"INSTLIV1";
/// 2: records keep the counted path's fields in their first cache line; 3: thread headers of
/// 512 bytes (the tally window's credits grew the state past 256).
pub const VERSION: u32 = 3;
pub const PAGE: u64 = 4096;
const MIB: u64 = 1 << 20;

/// Events with a mode byte (the runtime's switch table) and a slot in the retired records.
pub const MAX_EVENTS: u64 = instrument_contract::inline_count::TABLE_LEN;

/// The header: one page at offset 0.
pub const HEADER_OFFSET: u64 = 0;
/// Thread slots, `SLOT_BYTES` each; a thread that finds none free is measured but not shown.
pub const SLOTS_OFFSET: u64 = PAGE;
pub const MAX_SLOTS: u64 = 65536;
/// One mode byte per event id (see the runtime's switch.rs); the runtime maps this area over
/// the table its probes read.
pub const MODES_OFFSET: u64 = 8 * MIB;
/// Event names, one line per id (`names`).
pub const NAMES_OFFSET: u64 = 16 * MIB;
pub const NAMES_CAP: u64 = 1008 * MIB;
/// The records of threads that have ended, summed, indexed by event id.
pub const RETIRED_OFFSET: u64 = 1024 * MIB;
/// Thread regions (a `THREAD_HEADER_BYTES` state whose first word is the stack depth, then the
/// shadow stack) and record arrays, allocated from here on.
pub const THREADS_OFFSET: u64 = 2048 * MIB;
/// The thread state's room at the start of a thread region; the frames follow.
pub const THREAD_HEADER_BYTES: u64 = 512;
/// Set in the depth word while a probe updates the shadow stack: a probe that runs then (in a
/// signal handler that interrupted it) only counts its event, and readers mask it off.
pub const DEPTH_BUSY: u64 = 1 << 48;

/// Header clock kinds: what the ticks in frames and records count.
pub const CLOCK_MONOTONIC_NS: u32 = 0;
pub const CLOCK_TSC: u32 = 1;

/// Header states.
pub const RUNNING: u32 = 0;
/// The profile is written; the numbers no longer change.
pub const FINISHED: u32 = 1;

/// Mode bytes (the runtime's switch.rs): how an event's probes behave.
pub const MODE_MEASURED: u8 = 0;
/// Calls counted exactly, neither timed nor put on the shadow stack.
pub const MODE_COUNTED: u8 = 1;
/// The probes return at once.
pub const MODE_OFF: u8 = instrument_contract::inline_count::OFF;
/// Measured, but an exit that finds no frame of its own on top is ignored instead of
/// reconciled: the mode of an event switched on while the program runs, whose activations that
/// began switched off still have their exits to come.
pub const MODE_LENIENT: u8 = 4;
/// Counted, and on the thread that estimates the event's probe cost in place only tallied: a
/// window of its executions that measures what counting them costs (the runtime's tally.rs).
/// It has `MODE_COUNTED`'s bit, so whatever reads the mode as counted or not sees it counted.
pub const MODE_TALLY: u8 = 8 | MODE_COUNTED;
/// Counted, and counted by the routine's entry itself where the instrumented code can (late
/// placement on x86-64: `instrument_contract::inline_count`), without a probe call. It has
/// `MODE_COUNTED`'s bit too; the probes treat it as `MODE_COUNTED`.
pub const MODE_INLINE: u8 = instrument_contract::inline_count::MODE;
const _: () = assert!(MODE_INLINE & MODE_COUNTED != 0 && MODE_INLINE != MODE_TALLY);
/// Counted, on the thread that runs one of the in-place windows that measure what an inline
/// count costs by the barest count of the instrumented code (`instrument_contract::inline_count`):
/// the probes treat it as `MODE_COUNTED` (their routing sends it to the full entry).
pub const MODE_BARE: u8 = instrument_contract::inline_count::BARE;
const _: () = assert!(MODE_BARE & MODE_COUNTED != 0 && MODE_BARE & !MODE_COUNTED & 0x7f == 0);
/// Counted inline after a detour, on any thread (`instrument_contract::inline_count::DETOUR`),
/// and counted inline after the same detour and a shadow count that changes nothing (`DOUBLE`):
/// the in-place windows that measure what an inline count costs where it runs. The probes
/// route both as `MODE_BARE` (`DOUBLE`'s own bit is `MODE_LENIENT`'s, which the counted bit
/// outranks): to the full entry, which treats them as `MODE_COUNTED`.
pub const MODE_DETOUR: u8 = instrument_contract::inline_count::DETOUR;
pub const MODE_DOUBLE: u8 = instrument_contract::inline_count::DOUBLE;
const _: () = assert!(MODE_DETOUR & !(MODE_INLINE & !MODE_COUNTED) == MODE_BARE);
const _: () = assert!(MODE_DOUBLE & !(MODE_INLINE & !MODE_COUNTED) == MODE_BARE | MODE_LENIENT);
/// Measured, with each entry's timestamp taken once every earlier instruction has completed:
/// the in-place windows that measure how a probe pair's cost divides between the event and its
/// caller (the runtime's inplace). Exits are those of a measured event.
pub const MODE_FENCED: u8 = 32;
const _: () = assert!(MODE_FENCED & (MODE_COUNTED | MODE_OFF | MODE_LENIENT | MODE_TALLY | MODE_INLINE) == 0);
/// Counted, but kept on the shadow stack without a timestamp (`records::UNTIMED_START`), so
/// that the calls it makes keep their callpaths: the counted windows of a callpath parent under
/// in-place estimation (the runtime's inplace). Its exit runs, without reading the clock.
pub const MODE_PATHED: u8 = 64;
const _: () = assert!(
    MODE_PATHED & (MODE_COUNTED | MODE_OFF | MODE_LENIENT | MODE_TALLY | MODE_INLINE | MODE_FENCED) == 0
);

/// Slot states.
pub const SLOT_FREE: u32 = 0;
pub const SLOT_LIVE: u32 = 1;

#[repr(C)]
pub struct Header {
    pub magic: [u8; 8],
    pub version: u32,
    pub pid: AtomicU32,
    /// `CLOCK_TSC` or `CLOCK_MONOTONIC_NS`.
    pub clock: AtomicU32,
    /// `RUNNING` or `FINISHED`.
    pub state: AtomicU32,
    /// The clock at start-up, in ticks and in CLOCK_MONOTONIC nanoseconds: a reader measures the
    /// tick rate from them to now.
    pub start_ticks: AtomicU64,
    pub start_ns: AtomicU64,
    /// Ids whose name lines are complete, and the bytes those lines take.
    pub events: AtomicU64,
    pub names_len: AtomicU64,
    /// Slots ever used (the highest index plus one).
    pub slots_used: AtomicU64,
    /// Odd while a thread's records move to the retired area or its record array moves: a
    /// reader that sees it odd, or changed across its read, reads again.
    pub seq: AtomicU64,
    pub retired_threads: AtomicU64,
    /// The file's length.
    pub file_len: AtomicU64,
    /// The sizes the writer was built with, checked by the reader.
    pub record_bytes: u32,
    pub frame_bytes: u32,
    pub slot_bytes: u32,
    pub thread_header_bytes: u32,
    /// The program's name (NUL-padded).
    pub program: [u8; 192],
}

/// A live thread's place in the segment.
#[repr(C)]
pub struct Slot {
    pub state: AtomicU32,
    pub tid: AtomicU32,
    /// The thread's index in the profile (0 for the first thread that measured something).
    pub index: AtomicU64,
    pub thread_offset: AtomicU64,
    pub frame_cap: AtomicU64,
    pub records_offset: AtomicU64,
    pub record_cap: AtomicU64,
    pub reserved: [u64; 2],
}

pub const SLOT_BYTES: u64 = 64;
pub const RECORD_BYTES: u64 = size_of::<Record>() as u64;
const _: () = assert!(RECORD_BYTES == 128, "a record is two cache lines");
pub const FRAME_BYTES: u64 = size_of::<Frame>() as u64;
const _: () = assert!(FRAME_BYTES == 64, "a frame stays eight words");

const _: () = assert!(size_of::<Header>() as u64 <= PAGE);
const _: () = assert!(size_of::<Slot>() as u64 == SLOT_BYTES);
const _: () = assert!(SLOTS_OFFSET + MAX_SLOTS * SLOT_BYTES <= MODES_OFFSET);
const _: () = assert!(MODES_OFFSET + MAX_EVENTS <= NAMES_OFFSET);
const _: () = assert!(NAMES_OFFSET + NAMES_CAP <= RETIRED_OFFSET);
const _: () = assert!(RETIRED_OFFSET + MAX_EVENTS * RECORD_BYTES <= THREADS_OFFSET);

/// The offset of slot `index`.
pub const fn slot_offset(index: u64) -> u64 {
    SLOTS_OFFSET + index * SLOT_BYTES
}

/// The offset of event `id`'s retired record.
pub const fn retired_offset(id: u64) -> u64 {
    RETIRED_OFFSET + id * RECORD_BYTES
}

/// Rounds `bytes` up to whole pages.
pub const fn page_round(bytes: u64) -> u64 {
    bytes.div_ceil(PAGE) * PAGE
}
