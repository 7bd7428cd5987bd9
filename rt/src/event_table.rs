//! Tables with an entry per event id (`switch::TABLE_LEN` of them), mapped zeroed when first
//! needed and never unmapped: the in-place costs (inplace), the population's contributions, the
//! rests between estimations, the estimates' chains (inplace/history.rs). One type, so that the
//! mapping, its size and the bounds check are written once. Untouched pages cost nothing.

use crate::pages;
use crate::switch::TABLE_LEN;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering::Relaxed};

/// An entry type for which all-zero bytes are a valid value (an event without an entry yet).
///
/// # Safety
/// The all-zero bit pattern is a valid `Self`, and `Self` is shared only through its own
/// atomics (entries are handed out as `&'static` to every thread).
pub unsafe trait Zeroed: Sync {}

// SAFETY: atomics are valid when zeroed and shared through their own operations.
unsafe impl Zeroed for AtomicU64 {}
// SAFETY: as for one.
unsafe impl<const N: usize> Zeroed for [AtomicU64; N] {}

/// The table's address (null before `map`). Transparent, so that code in assembly reads it as the
/// pointer it is (trampolines.rs, the counted path's cost table).
#[repr(transparent)]
pub struct EventTable<T>(AtomicPtr<T>);

impl<T: Zeroed> EventTable<T> {
    pub const fn new() -> EventTable<T> {
        EventTable(AtomicPtr::new(std::ptr::null_mut()))
    }

    /// Maps the table unless it is mapped already (a second mapping raced with lies unused);
    /// false when the kernel refused.
    pub fn map(&self) -> bool {
        if !self.0.load(Relaxed).is_null() {
            return true;
        }
        let Some(table) = pages::map(TABLE_LEN as usize * size_of::<T>()) else { return false };
        let _ = self.0.compare_exchange(std::ptr::null_mut(), table.as_ptr().cast(), Relaxed, Relaxed);
        true
    }

    /// Event `id`'s entry, if the table is mapped.
    #[inline(always)]
    pub fn get(&self, id: u32) -> Option<&'static T> {
        let table = self.0.load(Relaxed);
        if table.is_null() || id >= TABLE_LEN {
            return None;
        }
        // SAFETY: the table has TABLE_LEN entries (mapped zeroed by `map`, never unmapped; zero is
        // a valid entry: `Zeroed`) and `id` is below that (checked).
        Some(unsafe { &*table.add(id as usize) })
    }
}
