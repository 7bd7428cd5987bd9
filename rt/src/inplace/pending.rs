//! Events throttled, or hot with compensation on, while another was under estimation, by
//! thread: each is estimated when the estimation under way on its thread ends (`start_pending`,
//! the most called first: `take_hottest`) or at the thread's next re-offer. Only offers touch
//! it, off the hot path; a full queue drops the event (a throttled one keeps the mean of its
//! timed calls until `reoffer` reaches it, a hot one is offered again at the next power of four
//! of its calls).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const SLOTS: usize = 256;
static QUEUE: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

/// The bits of an entry that name its thread.
const THREAD: u64 = 0xff_ffff << 40;

/// `thread`'s part of an entry: its index plus one (24 bits), so that 0 is a free slot.
fn owner(thread: u64) -> u64 {
    ((thread + 1) << 40) & THREAD
}

/// An entry: the thread, the probe kind (8 bits) and the event id.
fn pack(thread: u64, kind: usize, id: u32) -> u64 {
    owner(thread) | ((kind as u64) & 0xff) << 32 | u64::from(id)
}

/// A flag in an entry's kind: the event is measured (hot), not throttled.
pub const MEASURED: usize = 0x80;
/// A flag in a measured entry's kind: the event waits counted (`offer_hot`).
pub const WAITING: usize = 0x40;

/// Queues an entry, once: an entry already waiting (counted or not) is not queued again (a
/// hot event is offered again at every power of four of its calls). False when it was not
/// queued now (it waits already, or the queue is full).
pub fn push(thread: u64, kind: usize, id: u32) -> bool {
    let entry = pack(thread, kind, id);
    let waiting = (WAITING as u64) << 32;
    if QUEUE.iter().any(|slot| slot.load(Relaxed) & !waiting == entry & !waiting) {
        return false;
    }
    QUEUE.iter().any(|slot| slot.compare_exchange(0, entry, Relaxed, Relaxed).is_ok())
}

/// Whether event `id` has an entry of `thread` in the queue.
pub fn queued(thread: u64, id: u32) -> bool {
    entries_of(thread).any(|(_, entry)| entry as u32 == id)
}

/// The events of the entries that wait counted, on any thread.
pub fn waiting() -> impl Iterator<Item = u32> {
    QUEUE
        .iter()
        .map(|slot| slot.load(Relaxed))
        .filter(|&e| e != 0 && (e >> 32) & WAITING as u64 != 0)
        .map(|e| e as u32)
}

/// An entry of `thread` (the first slot holding one), taken out of the queue.
pub fn take(thread: u64) -> Option<(usize, u32)> {
    take_hottest(thread, |_| 0)
}

/// The calls `calls` says the most called event of `thread`'s entries has (0: it has none), the
/// queue left as it is: what `inplace::reoffer` weighs against a re-estimation.
pub fn hottest(thread: u64, calls: impl Fn(u32) -> u64) -> u64 {
    entries_of(thread).map(|(_, entry)| calls(entry as u32)).max().unwrap_or(0)
}

/// `thread`'s entries, each with its slot.
fn entries_of(thread: u64) -> impl Iterator<Item = (&'static AtomicU64, u64)> {
    let mine = owner(thread);
    QUEUE
        .iter()
        .map(|slot| (slot, slot.load(Relaxed)))
        .filter(move |&(_, entry)| entry != 0 && entry & THREAD == mine)
}

/// The entry of `thread` whose event `calls` says is the most called (the first slot of those
/// tied), taken out of the queue: what an event without an estimate costs compensation grows
/// with its calls, so the queue serves the hottest first. Slot order alone starved them: a
/// freed slot near the front took the next event queued, and on SQLite's callpath profile the
/// three comparison routines behind its sorter and indexes (31, 18 and 8.6 M calls, queued at
/// their throttling among some forty events with a few thousand) waited the whole run in two
/// processes of five, charged their counted calls the calibration (3.5 ns) where their
/// estimates said 2 to 8.
///
/// Only `thread` takes its entries and other threads only fill free slots, so the one chosen is
/// still there; should its slot have changed all the same, the queue is read again.
pub fn take_hottest(thread: u64, calls: impl Fn(u32) -> u64) -> Option<(usize, u32)> {
    loop {
        // `min_by_key` keeps the first of equal keys: the first slot among the most called.
        let (slot, entry) =
            entries_of(thread).min_by_key(|&(_, entry)| std::cmp::Reverse(calls(entry as u32)))?;
        if slot.compare_exchange(entry, 0, Relaxed, Relaxed).is_ok() {
            return Some((((entry >> 32) & 0xff) as usize, entry as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_takes_only_its_own_entries() {
        let waiting = super::WAITING | super::MEASURED;
        super::push(11, waiting, 50);
        super::push(11, super::MEASURED, 51);
        super::push(12, waiting, 52);
        super::push(11, waiting, 53);
        let mut taken = Vec::new();
        while let Some(entry) = super::take(11) {
            taken.push(entry);
        }
        taken.sort_unstable_by_key(|&(_, id)| id);
        assert_eq!(taken, [(waiting, 50), (super::MEASURED, 51), (waiting, 53)]);
        assert!(!super::queued(11, 50) && super::queued(12, 52));
        assert_eq!(super::take(12), Some((waiting, 52)));
    }

    #[test]
    fn an_event_is_queued_on_its_own_thread_until_taken() {
        super::push(41, 0, 60);
        assert!(super::queued(41, 60) && !super::queued(42, 60) && !super::queued(41, 61));
        assert_eq!(super::take(41), Some((0, 60)));
        assert!(!super::queued(41, 60));
    }

    #[test]
    fn the_most_called_event_is_taken_first_and_ties_by_slot() {
        for id in [60, 61, 62, 63] {
            super::push(21, 0, id);
        }
        let calls = |id: u32| match id {
            62 => 31_000_000,
            60 | 63 => 5_000,
            _ => 0,
        };
        assert_eq!(super::take_hottest(21, calls), Some((0, 62)));
        assert_eq!(super::take_hottest(21, calls), Some((0, 60)), "a tie: the first slot");
        assert_eq!(super::take_hottest(21, calls), Some((0, 63)));
        assert_eq!(super::take_hottest(21, calls), Some((0, 61)));
        assert_eq!(super::take_hottest(21, calls), None);
    }

    #[test]
    fn the_hottest_entry_is_read_without_taking_it() {
        for id in [70, 71] {
            super::push(31, 0, id);
        }
        let calls = |id: u32| if id == 71 { 9_000 } else { 40 };
        assert_eq!(super::hottest(31, calls), 9_000);
        assert_eq!(super::hottest(31, calls), 9_000, "still queued");
        assert_eq!(super::hottest(32, calls), 0, "another thread's entries are not its own");
        assert_eq!(super::take_hottest(31, calls), Some((0, 71)));
        assert_eq!(super::hottest(31, calls), 40);
        while super::take(31).is_some() {}
    }

    #[test]
    fn each_thread_takes_its_own_entries() {
        super::push(7, 1, 42);
        super::push(8, 0, 43);
        super::push(7, 0, 44);
        assert_eq!(super::take(8), Some((0, 43)));
        assert_eq!(super::take(8), None);
        // In slot order, not the order pushed: the other tests' threads fill and free slots
        // meanwhile (44 took a slot before 42's once in a CI run).
        let mut sevens = [super::take(7), super::take(7)];
        sevens.sort();
        assert_eq!(sevens, [Some((0, 44)), Some((1, 42))]);
        assert_eq!(super::take(7), None);
    }
}
