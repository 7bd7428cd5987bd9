//! The runtime's two hot structures, in the layout the live segment shares with its readers:
//! a shadow-stack frame (one open activation) and an event's record (its statistics in ticks).

/// One activation on the shadow stack.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Frame {
    pub id: u32,
    /// The callpath node of this activation (callpath mode only).
    pub node: u32,
    /// Calls this activation made to instrumented routines: all of them in the low 32 bits, and
    /// those counted without timing (throttled children) in the high 32 bits, so that a
    /// counted child costs one addition of `COUNTED_CHILD` (see `children`). One activation
    /// with over 2^32 child calls wraps the count, as the 32-bit count before it did.
    pub child_calls: u64,
    /// The stack pointer at the probe call: identifies the machine frame for reconciliation.
    pub sp: usize,
    /// The entry's timestamp, or `UNTIMED_START` for an activation kept on the stack untimed.
    pub start: u64,
    /// Inclusive ticks of the direct children, subtracted to give exclusive time.
    pub child_incl: u64,
    /// Compensation: the probe cost (Δi, scaled) of every descendant event so far.
    pub overhead: u64,
    /// Compensation: the compensated inclusive ticks of the direct children.
    pub comp_child: i64,
    /// The address of the activation's callpath node (callpath mode only, else 0), which the
    /// runtime's timed path in assembly reads instead of finding the node by `node`. With it a
    /// frame is 64 bytes, so frames (which start on a cache line) never straddle two lines.
    pub node_at: u64,
}

/// `Frame::start` of an activation on the stack that is counted, not timed (`MODE_PATHED`), at
/// least this (its top bit set: no timestamp comes near it): its exit reads no clock, and
/// readers of open frames take it as no time elapsed (a start after any clock reading). Its low
/// bits hold the untimed-children total of its callpath node when it opened (`UNTIMED_SNAPSHOT`),
/// so that its exit can tell what its descendants' untimed calls were estimated at.
pub const UNTIMED_START: u64 = 1 << 63;
/// The low bits of an untimed activation's start: its node's snapshot, modulo 2^63.
pub const UNTIMED_SNAPSHOT: u64 = UNTIMED_START - 1;

impl Frame {
    /// Whether this activation is kept on the stack untimed (`UNTIMED_START`).
    #[inline(always)]
    pub fn untimed(&self) -> bool {
        self.start >= UNTIMED_START
    }
}

/// What a timed child adds to `Frame::child_calls`.
pub const TIMED_CHILD: u64 = 1;
/// What a counted child adds to `Frame::child_calls`: one call, and one counted call.
pub const COUNTED_CHILD: u64 = 1 | 1 << 32;

impl Frame {
    /// The calls this activation made (all, and of those the counted ones).
    #[inline(always)]
    pub fn children(&self) -> (u64, u32) {
        (self.child_calls & u64::from(u32::MAX), (self.child_calls >> 32) as u32)
    }
}

/// Per-function statistics in ticks. Two cache lines: the first holds what the timed exit and
/// the counted entry touch (a counted call adds to `counted` and `untimed_own` of its own
/// record and to `untimed_children` of its caller's, so one line of each), the second the
/// loop statistics and compensation's sums.
#[repr(C, align(64))]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Record {
    /// Measured calls (activations timed on the shadow stack).
    pub calls: u64,
    /// Calls counted without timing while the event was throttled.
    pub counted: u64,
    pub child_calls: u64,
    pub excl: u64,
    pub incl: u64,
    /// Activations currently on the stack: inclusive time is added only when the outermost
    /// activation exits, so recursion never counts time twice.
    pub active: u32,
    /// Of `child_calls`, those counted without timing (saturating): the rest were timed, and
    /// each left the outer part of a timed probe pair in this event's exclusive time
    /// (rt/src/untimed.rs). It matters only when the event is throttled, under 10 us per call by
    /// default, so long before it could saturate; it shares a word with `active` so that the
    /// first line holds the counted path's fields.
    pub counted_children: u32,
    /// The estimated time (scaled ticks, rt/src/untimed.rs) of the calls this event's
    /// activations made to throttled events without timing them: part of its exclusive time.
    pub untimed_children: u64,
    /// The estimated time (scaled ticks) of this event's own calls counted without timing.
    pub untimed_own: u64,
    /// Loop iterations (header executions), summed over the loop's executions.
    pub iterations: u64,
    /// Compensated inclusive and exclusive ticks (compensation mode only; may be negative).
    pub comp_incl: i64,
    pub comp_excl: i64,
    /// Activations whose compensated inclusive time came out negative.
    pub negative: u64,
    /// Loops: the fewest iterations of one execution plus one (0: none yet), the most, and the
    /// sum of squares, so exports can give TAU's user-event statistics.
    pub iter_min1: u64,
    pub iter_max: u64,
    pub iter_sumsq: u128,
}

const _: () = assert!(size_of::<Record>() == 128, "a record is two cache lines");
const _: () =
    assert!(std::mem::offset_of!(Record, untimed_own) < 64, "the counted path's fields share the first line");
const _: () = {
    use instrument_contract::inline_count as abi;
    assert!(size_of::<Record>() == 1 << abi::RECORD_SHIFT, "the inline count's record size");
    assert!(std::mem::offset_of!(Record, counted) as u64 == abi::COUNTED_AT, "the inline count's words");
    assert!(
        std::mem::offset_of!(Record, untimed_own) as u64 == abi::UNTIMED_OWN_AT,
        "the inline count's words"
    );
};

impl Record {
    pub fn add(&mut self, other: &Record) {
        self.calls += other.calls;
        self.counted += other.counted;
        self.child_calls += other.child_calls;
        self.excl += other.excl;
        self.incl += other.incl;
        self.iterations += other.iterations;
        self.comp_incl += other.comp_incl;
        self.comp_excl += other.comp_excl;
        self.negative += other.negative;
        self.untimed_children += other.untimed_children;
        self.untimed_own += other.untimed_own;
        self.counted_children = self.counted_children.saturating_add(other.counted_children);
        if other.iter_min1 != 0 && (self.iter_min1 == 0 || other.iter_min1 < self.iter_min1) {
            self.iter_min1 = other.iter_min1;
        }
        self.iter_max = self.iter_max.max(other.iter_max);
        self.iter_sumsq = self.iter_sumsq.saturating_add(other.iter_sumsq);
    }

    /// Counts one execution of a loop that ran `iterations` times.
    #[inline(always)]
    pub fn add_iterations(&mut self, iterations: u64) {
        self.iterations += iterations;
        // Branch-free: an unset minimum (0) wraps to u64::MAX, so the new count wins.
        self.iter_min1 = self.iter_min1.wrapping_sub(1).min(iterations).wrapping_add(1);
        self.iter_max = self.iter_max.max(iterations);
        self.iter_sumsq = self.iter_sumsq.wrapping_add(iterations as u128 * iterations as u128);
    }
}
