//! The callpath tree's hash map from (node, event) to node: the transitions a node's six-entry
//! cache and precomputed slots do not hold, and every node's identity. Kept apart from the tree
//! because its memory and probing are their own concern; its lookup runs on the hot path
//! whenever a routine's call steps off its caller's cache (alternating callees, callbacks).

use crate::pages;

/// One slot: a key and its value side by side, so that a lookup reads one cache line.
#[derive(Clone, Copy)]
#[repr(C)]
struct Entry {
    key: u64,
    value: u32,
}

/// An open-addressing map from (node, event) to node, in kernel-provided zeroed memory. It
/// starts small with its pages touched at once, and grows (at most to `max` slots) inside node
/// creation, whose time no frame counts: a lookup never faults on a fresh page in a frame's time.
///
/// Invariant: `entries` holds `mask + 1` entries (a power of two) that `Map::new` mapped and the
/// map owns until `unmap`. A zero key marks an empty slot (no real key is zero: its node is at
/// least ROOT), and `insert` leaves at least a quarter of the slots empty, so a probe sequence
/// always ends.
pub struct Map {
    entries: *mut Entry,
    mask: usize,
    len: usize,
    max: usize,
}

/// Slots a map starts with (16 KiB).
pub const MAP_START: usize = 1024;

/// The key of (node, event): never zero, since a node is at least ROOT.
#[inline(always)]
fn key_of(node: u32, event: u32) -> u64 {
    (u64::from(node) << 32) | u64::from(event)
}

impl Map {
    pub fn new(capacity: usize, max: usize) -> Option<Map> {
        let capacity = capacity.next_power_of_two();
        let entries = pages::map_touched(capacity * size_of::<Entry>())?.as_ptr().cast();
        Some(Map { entries, mask: capacity - 1, len: 0, max: max.next_power_of_two() })
    }

    /// Slot `i` (a zero key: empty).
    ///
    /// # Safety
    /// `i <= mask`.
    #[inline(always)]
    unsafe fn entry(&self, i: usize) -> Entry {
        debug_assert!(i <= self.mask, "map slot {i} past {}", self.mask);
        // SAFETY: entries[..=mask] is the map's array (its invariant) and `i <= mask` (the
        // contract).
        unsafe { *self.entries.add(i) }
    }

    /// Stores `key` and `value` in slot `i`.
    ///
    /// # Safety
    /// `i <= mask`.
    #[inline(always)]
    unsafe fn put(&mut self, i: usize, key: u64, value: u32) {
        debug_assert!(i <= self.mask, "map slot {i} past {}", self.mask);
        // SAFETY: entries[..=mask] is the map's array, which `&mut self` holds alone (its
        // invariant), and `i <= mask` (the contract).
        unsafe { *self.entries.add(i) = Entry { key, value } };
    }

    /// The slot that holds `key`, or the empty slot where it would go.
    ///
    /// Fibonacci hashing: the product's top bits, which every bit of the key moves. (Its middle
    /// bits, taken before, left the node out of the index below 2^12 slots: every transition of
    /// an event probed one cluster, a tenth of a throttled Lua run in this lookup.)
    fn slot(&self, key: u64) -> usize {
        let bits = (self.mask + 1).trailing_zeros();
        debug_assert!(bits > 0, "a map of one slot");
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
        // SAFETY: `i` is masked by `mask` at every step.
        while unsafe { self.entry(i).key } != 0 && unsafe { self.entry(i).key } != key {
            i = (i + 1) & self.mask;
        }
        i
    }

    pub fn get(&self, node: u32, event: u32) -> Option<u32> {
        let key = key_of(node, event);
        let i = self.slot(key);
        // SAFETY: `slot` returns a slot of the map (masked by `mask`).
        let entry = unsafe { self.entry(i) };
        (entry.key == key).then_some(entry.value)
    }

    /// Remembers `value` for (node, event); a map that is full at its largest size remembers
    /// nothing more (lookups then miss and recompute).
    pub fn insert(&mut self, node: u32, event: u32, value: u32) {
        let capacity = self.mask + 1;
        if (self.len + 1) * 2 > capacity && !self.grow() && (self.len + 1) * 4 > capacity * 3 {
            return;
        }
        let key = key_of(node, event);
        let i = self.slot(key);
        // SAFETY: `slot` returns a slot of the map (masked by `mask`).
        unsafe {
            self.len += usize::from(self.entry(i).key == 0);
            self.put(i, key, value);
        }
    }

    /// Moves the entries to a map four times larger; false at the largest size or without memory.
    fn grow(&mut self) -> bool {
        let capacity = self.mask + 1;
        if capacity >= self.max {
            return false;
        }
        let Some(mut larger) = Map::new(capacity * 4, self.max) else { return false };
        for i in 0..capacity {
            // SAFETY: `i < capacity`, that is `i <= mask`.
            let Entry { key, value } = unsafe { self.entry(i) };
            if key != 0 {
                larger.insert((key >> 32) as u32, key as u32, value);
            }
        }
        // SAFETY: the old array is not read again: `larger` replaces it at once.
        unsafe { self.unmap() };
        *self = larger;
        true
    }

    /// Gives the map's array back to the kernel.
    ///
    /// # Safety
    /// The map is not used afterwards (nor unmapped again): its pointers dangle.
    pub unsafe fn unmap(&self) {
        let n = self.mask + 1;
        // SAFETY: `entries` is the mapping `Map::new` made of `n` entries (its invariant;
        // non-null, as `pages::map` returns), and the map, its only owner, is done with it (the
        // contract).
        unsafe {
            pages::unmap(std::ptr::NonNull::new_unchecked(self.entries.cast()), n * size_of::<Entry>())
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nodes that share an event spread over the map (the index once ignored the node
    /// below 2^12 slots, and every such key probed one cluster).
    #[test]
    fn keys_of_one_event_spread_over_the_map() {
        let mut map = Map::new(MAP_START, 1 << 20).expect("a map");
        let event = 7u32;
        let starts: std::collections::HashSet<usize> = (3u32..515)
            .map(|node| {
                let key = key_of(node, event);
                map.slot(key)
            })
            .collect();
        assert!(starts.len() > 300, "512 nodes of one event start in {} slots of {MAP_START}", starts.len());
        for node in 3u32..515 {
            map.insert(node, event, node + 1);
        }
        for node in 3u32..515 {
            assert_eq!(map.get(node, event), Some(node + 1));
        }
        assert_eq!(map.get(2, event), None);
        // SAFETY: the map is not used again.
        unsafe { map.unmap() };
    }
}
