//! Paradyn's time histograms: a fixed number of buckets over the run so far. When a value
//! falls past the last bucket, neighbouring buckets are added up in pairs and the width
//! doubles, so any run length fits in the same memory with the same number of points.

use std::collections::HashMap;
use std::hash::Hash;

/// Buckets per series.
pub const BUCKETS: usize = 128;

/// Series that share their buckets (one per event and metric), keyed by `K`.
pub struct Histograms<K> {
    pub width_ns: u64,
    pub series: Vec<(K, Vec<f64>)>,
    index: HashMap<K, usize>,
}

impl<K: Hash + Eq + Clone> Histograms<K> {
    pub fn new(width_ns: u64) -> Histograms<K> {
        Histograms { width_ns: width_ns.max(1), series: Vec::new(), index: HashMap::new() }
    }

    /// Adds `value` to `key`'s bucket at `at_ns` (from the start of the run).
    pub fn add(&mut self, key: &K, at_ns: u64, value: f64) {
        while at_ns / self.width_ns >= BUCKETS as u64 {
            self.fold();
        }
        let bucket = (at_ns / self.width_ns) as usize;
        let next = self.series.len();
        let i = *self.index.entry(key.clone()).or_insert(next);
        if i == next {
            self.series.push((key.clone(), vec![0.0; BUCKETS]));
        }
        self.series[i].1[bucket] += value;
    }

    /// Doubles the width: bucket i becomes buckets 2i and 2i+1 added up.
    fn fold(&mut self) {
        self.width_ns *= 2;
        for (_, values) in &mut self.series {
            let folded: Vec<f64> = values.chunks(2).map(|pair| pair.iter().sum()).collect();
            values.fill(0.0);
            values[..folded.len()].copy_from_slice(&folded);
        }
    }

    /// Buckets in use (up to the last one with anything in it, in any series).
    pub fn used(&self) -> usize {
        self.series.iter().filter_map(|(_, v)| v.iter().rposition(|&x| x != 0.0)).max().map_or(0, |i| i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_histogram_doubles_its_width_and_keeps_every_value() {
        let mut h = Histograms::new(10);
        for t in 0..BUCKETS as u64 {
            h.add(&"a", t * 10, 1.0);
        }
        assert_eq!((h.width_ns, h.used()), (10, BUCKETS));
        h.add(&"a", BUCKETS as u64 * 10, 5.0); // one past the end
        assert_eq!(h.width_ns, 20);
        let values = &h.series[0].1;
        assert!(values[..BUCKETS / 2].iter().all(|&v| v == 2.0), "pairs added up: {values:?}");
        assert_eq!(values[BUCKETS / 2], 5.0);
        assert_eq!(values.iter().sum::<f64>(), BUCKETS as f64 + 5.0);
        h.add(&"b", 10_000, 1.0); // far past the end: folds until it fits
        assert_eq!(h.width_ns, 80);
        assert_eq!(h.series[1].1[125], 1.0);
        assert_eq!(h.series[0].1.iter().sum::<f64>(), BUCKETS as f64 + 5.0);
    }
}
