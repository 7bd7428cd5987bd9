//! What an estimation keeps of its windows: per kind of window (or pair of windows), a value
//! each, in a fixed array inside the estimation's state, since it is filled inside probes where
//! nothing may allocate.

use super::MAX_PAIRS;

/// Up to `MAX_PAIRS` values in the order measured: a full series keeps its first ones.
#[derive(Clone, Copy)]
pub(super) struct Series<T: Copy> {
    values: [T; MAX_PAIRS],
    len: usize,
}

impl<T: Copy> Series<T> {
    /// An empty series (`zero` fills the unused slots).
    pub(super) const fn new(zero: T) -> Series<T> {
        Series { values: [zero; MAX_PAIRS], len: 0 }
    }

    /// Keeps `value`, unless the series is full.
    pub(super) fn push(&mut self, value: T) {
        if self.len < MAX_PAIRS {
            self.values[self.len] = value;
            self.len += 1;
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The values kept, to be sorted in place (their order means nothing to a median or a
    /// trimmed mean).
    pub(super) fn values(&mut self) -> &mut [T] {
        &mut self.values[..self.len]
    }

    /// Forgets every value (a new estimation).
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_series_keeps_its_first_values() {
        let mut s = Series::new(0u64);
        assert_eq!(s.len(), 0);
        (1..=MAX_PAIRS as u64 + 5).for_each(|v| s.push(v));
        assert_eq!(s.len(), MAX_PAIRS);
        assert_eq!((s.values()[0], s.values()[MAX_PAIRS - 1]), (1, MAX_PAIRS as u64));
        s.clear();
        assert!(s.values().is_empty());
    }
}
