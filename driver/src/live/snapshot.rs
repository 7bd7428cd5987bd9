//! One consistent reading of a live segment: per event, the calls and times so far, including
//! the time of the activations still open (read off the threads' shadow stacks), as Paradyn
//! reads running timers.

use super::segment::Segment;
use instrument_live::{self as layout, EventName, Frame, Record, Slot};

/// An event's numbers so far, in nanoseconds.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Totals {
    /// Timed calls finished, and calls counted untimed (throttled or switched off).
    pub calls: u64,
    pub counted: u64,
    pub inclusive_ns: f64,
    pub exclusive_ns: f64,
    /// Activations open now, on every thread.
    pub open: u64,
}

pub struct Snapshot {
    /// CLOCK_MONOTONIC when it was taken.
    pub at_ns: u64,
    pub totals: Vec<Totals>,
    pub modes: Vec<u8>,
    pub live_threads: usize,
    pub ended_threads: u64,
    pub finished: bool,
}

/// Reads the names once and the numbers on every `take`.
pub struct Reader {
    pub segment: Segment,
    pub names: Vec<EventName>,
    /// The names as shown (routines demangled), by id; None for the runtime's own events.
    pub labels: Vec<Option<String>>,
    names_len: u64,
}

impl Reader {
    pub fn new(segment: Segment) -> Reader {
        Reader { segment, names: Vec::new(), labels: Vec::new(), names_len: 0 }
    }

    pub fn program(&self) -> String {
        let raw = &self.segment.header().program;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        String::from_utf8_lossy(&raw[..end]).into_owned()
    }

    /// Takes a snapshot; the writer's record moves are waited out (see `Header::seq`).
    pub fn take(&mut self) -> anyhow::Result<Snapshot> {
        self.segment.refresh()?;
        self.read_names();
        let header = self.segment.header();
        let events = self.names.len();
        for _ in 0..1000 {
            let before = header.seq.load(std::sync::atomic::Ordering::Acquire);
            if before % 2 == 1 {
                std::thread::yield_now();
                continue;
            }
            let snapshot = self.read(events);
            if header.seq.load(std::sync::atomic::Ordering::Acquire) == before {
                return Ok(snapshot);
            }
        }
        Ok(self.read(events)) // a writer busier than we can follow: take what is there
    }

    fn read_names(&mut self) {
        let len = self.segment.header().names_len.load(std::sync::atomic::Ordering::Acquire);
        if len != self.names_len {
            self.names = instrument_live::parse_names(&self.segment.bytes(layout::NAMES_OFFSET, len));
            self.labels = super::labels::display_names(&self.names);
            self.names_len = len;
        }
    }

    fn read(&self, events: usize) -> Snapshot {
        use std::sync::atomic::Ordering::Acquire;
        let header = self.segment.header();
        let clock = Clock::now(&self.segment);
        let mut totals = vec![Totals::default(); events];
        for (id, total) in totals.iter_mut().enumerate() {
            if let Some(r) = self.segment.read::<Record>(layout::retired_offset(id as u64)) {
                add_record(total, &r, clock.ns_per_tick);
            }
        }
        let mut live_threads = 0;
        for index in 0..header.slots_used.load(Acquire).min(layout::MAX_SLOTS) {
            let Some(slot) = self.segment.slot(index) else { break };
            if slot.state.load(Acquire) == layout::SLOT_LIVE {
                live_threads += 1;
                self.add_thread(slot, &mut totals, &clock);
            }
        }
        let modes = self.segment.bytes(layout::MODES_OFFSET, events as u64);
        Snapshot {
            at_ns: clock.ns,
            totals,
            modes,
            live_threads,
            ended_threads: header.retired_threads.load(Acquire),
            finished: header.state.load(Acquire) == layout::FINISHED,
        }
    }

    fn add_thread(&self, slot: &Slot, totals: &mut [Totals], clock: &Clock) {
        let records = slot.records_offset.load(std::sync::atomic::Ordering::Relaxed);
        let record_cap = slot.record_cap.load(std::sync::atomic::Ordering::Relaxed) as usize;
        if records != 0 {
            for (id, total) in totals.iter_mut().enumerate().take(record_cap) {
                if let Some(r) = self.segment.read::<Record>(records + id as u64 * layout::RECORD_BYTES) {
                    add_record(total, &r, clock.ns_per_tick);
                }
            }
        }
        let thread = slot.thread_offset.load(std::sync::atomic::Ordering::Relaxed);
        let frame_cap = slot.frame_cap.load(std::sync::atomic::Ordering::Relaxed).max(1);
        let depth =
            self.segment.read::<u64>(thread).map_or(0, |d| d & !layout::DEPTH_BUSY).min(frame_cap - 1);
        let frames: Vec<Frame> = (1..=depth)
            .filter_map(|d| {
                self.segment.read::<Frame>(thread + layout::THREAD_HEADER_BYTES + d * layout::FRAME_BYTES)
            })
            .collect();
        add_open_frames(&frames, totals, clock);
    }
}

fn add_record(total: &mut Totals, r: &Record, ns_per_tick: f64) {
    total.calls += r.calls;
    total.counted += r.counted;
    total.inclusive_ns += r.incl as f64 * ns_per_tick;
    total.exclusive_ns += r.excl as f64 * ns_per_tick;
}

/// Adds what the open activations (a thread's stack, bottom first) have run so far: the
/// inclusive time once per event (its outermost activation, as the runtime counts it), and the
/// exclusive time minus the children, finished and open.
pub fn add_open_frames(frames: &[Frame], totals: &mut [Totals], clock: &Clock) {
    let mut seen = std::collections::HashSet::new();
    for (i, frame) in frames.iter().enumerate() {
        let Some(total) = totals.get_mut(frame.id as usize) else { continue };
        let elapsed = clock.ticks.saturating_sub(frame.start);
        let open_child = frames.get(i + 1).map_or(0, |child| clock.ticks.saturating_sub(child.start));
        let own = elapsed.saturating_sub(frame.child_incl).saturating_sub(open_child);
        total.exclusive_ns += own as f64 * clock.ns_per_tick;
        if seen.insert(frame.id) {
            total.inclusive_ns += elapsed as f64 * clock.ns_per_tick;
        }
        total.open += 1;
    }
}

/// The program's clock now, in its ticks and in CLOCK_MONOTONIC nanoseconds.
pub struct Clock {
    pub ticks: u64,
    pub ns: u64,
    pub ns_per_tick: f64,
}

impl Clock {
    fn now(segment: &Segment) -> Clock {
        use std::sync::atomic::Ordering::Relaxed;
        let header = segment.header();
        let ns = monotonic_ns();
        if header.clock.load(Relaxed) != layout::CLOCK_TSC {
            return Clock { ticks: ns, ns, ns_per_tick: 1.0 };
        }
        let ticks = tsc();
        let ticks_since = ticks.saturating_sub(header.start_ticks.load(Relaxed)) as f64;
        let ns_since = ns.saturating_sub(header.start_ns.load(Relaxed)) as f64;
        let ns_per_tick =
            if ticks_since > 0.0 && ns_since > 1e6 { ns_since / ticks_since } else { 1.0 / 3.0 };
        Clock { ticks, ns, ns_per_tick }
    }
}

fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the program read this clock, so this processor has it.
    return unsafe { core::arch::x86_64::_rdtsc() };
    #[cfg(not(target_arch = "x86_64"))]
    monotonic_ns()
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: u32, start: u64, child_incl: u64) -> Frame {
        Frame {
            id,
            child_calls: 0,
            sp: 0,
            start,
            child_incl,
            node: 0,
            overhead: 0,
            comp_child: 0,
            node_at: 0,
        }
    }

    #[test]
    fn open_frames_add_inclusive_once_per_event_and_exclusive_without_children() {
        // main (0) since tick 0, with 100 ticks of finished children; inside it f (1) since 500,
        // inside it f again since 800. Now is tick 1000.
        let frames = [frame(0, 0, 100), frame(1, 500, 0), frame(1, 800, 50)];
        let clock = Clock { ticks: 1000, ns: 0, ns_per_tick: 1.0 };
        let mut totals = vec![Totals::default(); 2];
        add_open_frames(&frames, &mut totals, &clock);
        assert_eq!(totals[0].inclusive_ns, 1000.0);
        assert_eq!(totals[0].exclusive_ns, 1000.0 - 100.0 - 500.0);
        assert_eq!(totals[1].inclusive_ns, 500.0, "the outer activation only");
        assert_eq!(totals[1].exclusive_ns, (500.0 - 200.0) + (200.0 - 50.0));
        assert_eq!((totals[0].open, totals[1].open), (1, 2));
    }
}
