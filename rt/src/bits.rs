//! One bit per event id, set and read from any thread without a lock: which events were
//! throttled (switch.rs), which can have nested activations (registry.rs).

use crate::switch::TABLE_LEN;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub struct EventBits([AtomicU64; TABLE_LEN as usize / 64]);

impl EventBits {
    pub const fn new() -> EventBits {
        EventBits([const { AtomicU64::new(0) }; TABLE_LEN as usize / 64])
    }

    /// Sets event `id`'s bit (ids past the table have none).
    pub fn set(&self, id: u32) {
        if let Some(word) = self.0.get(id as usize / 64) {
            word.fetch_or(1 << (id % 64), Relaxed);
        }
    }

    pub fn get(&self, id: u32) -> bool {
        self.0.get(id as usize / 64).is_some_and(|w| w.load(Relaxed) & (1 << (id % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_per_event_and_ids_past_the_table_have_none() {
        let bits = EventBits::new();
        bits.set(65);
        bits.set(u32::MAX);
        assert!(bits.get(65) && !bits.get(64) && !bits.get(1) && !bits.get(u32::MAX));
    }
}
